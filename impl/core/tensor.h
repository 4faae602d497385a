// What a tensor is inside the library: a header (dtype, shape, strides, where its elements
// live) kept in its storage's table, and the by-value View that ops work on.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "tensorlife/tl_tensor.h"

namespace tl {

struct SharedStorage;

struct TensorHeader {
    tl_dtype dtype;
    int32_t ndim;
    int64_t shape[TL_MAX_DIMS];
    int64_t strides[TL_MAX_DIMS];  // in elements
    std::byte *storage;            // start of the slab chunk or ambient block
    int64_t offset;                // elements from storage to the first element
    uint64_t base;                 // for a view: the handle bits of the tensor owning the storage
    size_t storage_bytes;          // for an ambient owner: the size of its block
    SharedStorage *region;         // an owner over a mapped file: one reference, released at its death
    bool read_only;                // over a mapping (or a view of such a tensor): never written
};

// An op's by-value picture of an operand: safe to keep while the op allocates its output.
struct View {
    tl_dtype dtype;
    int ndim;
    int64_t shape[TL_MAX_DIMS];
    int64_t strides[TL_MAX_DIMS];  // in elements
    std::byte *data;               // first element

    // Shapes are checked when a tensor is made: a count that fits, or a zero dim somewhere.
    int64_t numel() const {
        for (int i = 0; i < ndim; ++i)
            if (shape[i] == 0) return 0;
        int64_t n = 1;
        for (int i = 0; i < ndim; ++i) n *= shape[i];
        return n;
    }
    // Strides as set_contiguous_strides makes them (saturating past an empty tensor's huge dims).
    bool is_contiguous() const {
        int64_t expected = 1;
        for (int i = ndim - 1; i >= 0; --i) {
            if (shape[i] != 1 && strides[i] != expected) return false;
            if (__builtin_mul_overflow(expected, shape[i] > 0 ? shape[i] : 1, &expected)) expected = INT64_MAX;
        }
        return true;
    }
};

// The dtypes' values are 1..kDtypeCount (TL_DTYPE_MAP), so tables indexed by value serve them.
#define TL_DTYPE_COUNT_(NAME, value, name, block, bytes, safetensors, gguf) +1
constexpr unsigned kDtypeCount = 0 TL_DTYPE_MAP(TL_DTYPE_COUNT_);
#undef TL_DTYPE_COUNT_

// What TL_DTYPE_MAP says of one dtype; index 0 is "no dtype" (size 0, name "?").
struct DtypeInfo {
    size_t size;    // bytes of one element; 0 for a block dtype
    int64_t block;  // elements a block
    size_t block_bytes;
    const char *name, *safetensors;
    int gguf;
};
extern const DtypeInfo kDtypes[kDtypeCount + 1];
inline const DtypeInfo &dtype_info(tl_dtype dt) { return kDtypes[unsigned(dt) <= kDtypeCount ? unsigned(dt) : 0]; }

// 0 for a value that is no dtype (callers refuse it).  Inline, and a table rather than a
// switch: every op and factory asks, a tiny op several times.
inline size_t dtype_size(tl_dtype dt) { return dtype_info(dt).size; }
inline bool is_float(tl_dtype dt) { return dt == TL_F32 || dt == TL_F64; }
// The dtypes arithmetic runs on (every op takes these); the others are storage formats that only
// the ops naming them in tl_ops.h take (conversion, products, row gathers, copies).
inline bool is_arithmetic(tl_dtype dt) { return dt == TL_F32 || dt == TL_F64 || dt == TL_I32; }
inline bool is_block_dtype(tl_dtype dt) { return dtype_info(dt).block > 1; }
inline bool is_storage_dtype(tl_dtype dt) { return dt == TL_F16 || dt == TL_BF16 || is_block_dtype(dt); }
// Bytes of n elements of dt (n a whole number of blocks for a block dtype).
inline int64_t bytes_of(tl_dtype dt, int64_t n) {
    const DtypeInfo &d = dtype_info(dt);
    return d.block > 1 ? n / d.block * int64_t(d.block_bytes) : n * int64_t(d.size);
}
inline const char *dtype_name(tl_dtype dt) { return dtype_info(dt).name; }  // "f32"; "?" for none
bool dtype_from_name(const char *name, tl_dtype *out);                      // the inverse of dtype_name
// The dtype whose safetensors string is s (TL_DTYPE_MAP's column); false for none.
bool dtype_from_safetensors(const char *s, tl_dtype *out);
// The dtype whose GGUF type number is ggml_type (TL_DTYPE_MAP's column); false for none.
bool dtype_from_gguf(uint32_t ggml_type, tl_dtype *out);
// Whether v is an integer in int32's range (i32 tensors take exactly these values).
inline bool is_int32_value(double v) { return v == std::floor(v) && v >= -2147483648.0 && v <= 2147483647.0; }

// run(T()) with T the element type of dt (the caller takes T from the argument's type): the
// one switch from a dtype to its C++ type.  A value that is no dtype runs nothing (every op
// refuses it before a kernel runs).
template <class Run>
void with_dtype(tl_dtype dt, Run &&run) {
    switch (dt) {
        case TL_F32:
            return run(float());
        case TL_F64:
            return run(double());
        case TL_I32:
            return run(int32_t());
        default:
            break;
    }
}
// with_dtype over the float dtypes alone (the ops that take floats check it first).
template <class Run>
void with_float_dtype(tl_dtype dt, Run &&run) {
    if (dt == TL_F32) return run(float());
    if (dt == TL_F64) return run(double());
}

// The elements in `bytes` of a dt (element sizes are powers of two: a shift, not a division, on
// the path of every new tensor; a block dtype counts whole blocks).
inline int64_t elements_in(int64_t bytes, tl_dtype dt) {
    const DtypeInfo &d = dtype_info(dt);
    if (d.block > 1) return bytes / int64_t(d.block_bytes) * d.block;
    return bytes >> __builtin_ctzll(d.size);
}
// Elements from `from` to `to` in a storage of dt.
inline int64_t elements_between(const std::byte *from, const std::byte *to, tl_dtype dt) {
    return elements_in(to - from, dt);
}

// The element offset (at v's strides) of item i of v's first `dims` dims taken in row-major
// order: row i of v when dims is ndim - 1, element i when dims is ndim.
inline int64_t offset_of_item(const View &v, int dims, int64_t i) {
    int64_t offset = 0;
    for (int d = dims - 1; d >= 0; --d) {
        offset += (i % v.shape[d]) * v.strides[d];
        i /= v.shape[d];
    }
    return offset;
}

// The dims are copied as whole arrays (the unused ones too): a loop over ndim becomes a
// variable-length memcpy whose result, read back in 16-byte moves, stalls on store forwarding.
inline void view_into(const TensorHeader &h, View &v) {
    v.dtype = h.dtype;
    v.ndim = h.ndim;
    std::memcpy(v.shape, h.shape, sizeof v.shape);
    std::memcpy(v.strides, h.strides, sizeof v.strides);
    v.data = h.storage + bytes_of(h.dtype, h.offset);
}
// The element count of non-negative dims times elem, the one checked product of dims every
// caller uses (factories, ops, loaders): false when it overflows int64.  A zero dim makes the
// count 0 whatever the others are, so an empty tensor may have huge dims.
inline bool count_of(int ndim, const int64_t *shape, int64_t elem, int64_t *out) {
    for (int i = 0; i < ndim; ++i)
        if (shape[i] == 0) return *out = 0, true;
    int64_t n = elem;
    for (int i = 0; i < ndim; ++i)
        if (__builtin_mul_overflow(n, shape[i], &n)) return false;
    *out = n;
    return true;
}

inline void set_contiguous_strides(int ndim, const int64_t *shape, int64_t *strides) {
    // An empty tensor may have huge dims whose product overflows; its strides are never used
    // to reach an element, so they saturate instead of wrapping.
    int64_t s = 1;
    for (int i = ndim - 1; i >= 0; --i) {
        strides[i] = s;
        if (__builtin_mul_overflow(s, shape[i] > 0 ? shape[i] : 1, &s)) s = INT64_MAX;
    }
}

}  // namespace tl
