/* tensorlife: tensor handles, factories and access.  Part of <tensorlife/tl.h>.
 * Handles and storage: docs/memory-and-scopes.md; storage dtypes: docs/storage-dtypes.md. */
#ifndef TENSORLIFE_TL_TENSOR_H
#define TENSORLIFE_TL_TENSOR_H

#include "tl_context.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A value handle: storage, slot and a process-unique generation.  A handle kept past its
 * storage's reset is TL_E_STORAGE_CLOSED in every call (naming the storage), another context's
 * is TL_E_INVALID_HANDLE; neither is ever read.  bits == 0 is "no tensor". */
typedef struct tl_tensor {
    uint64_t bits;
} tl_tensor;

/* Every dtype, once: X(NAME, value, name, block, bytes, safetensors, gguf) with
 *   name         its lowercase name ("f32"), as tl_dtype_name returns it;
 *   block        elements stored together: 1 for element types, 32 or 256 for the
 *                block-quantized ones, whose blocks lie along a tensor's last dimension as GGUF
 *                stores them;
 *   bytes        of one block (of one element where block is 1);
 *   safetensors  its dtype string in safetensors headers (NULL: safetensors has none);
 *   gguf         its ggml_type number in GGUF files (-1: GGUF has none).
 * Q8_0: an f16 scale d and 32 int8 q, value q * d.  Q4_0: an f16 scale d and 16 bytes of
 * nibbles, element j in the low nibble of byte j and element j + 16 in its high nibble, value
 * (q - 8) * d.  Q4_1, Q5_0, Q5_1 and the 256-element super blocks Q4_K, Q5_K, Q6_K are ggml's,
 * bit for bit (docs/storage-dtypes.md).  F16 is IEEE binary16, BF16 the top half of an f32.
 * The enum, tl_dtype_size, tl_dtype_block, tl_dtype_name, the file formats' mappings and every
 * binding's list come from here. */
/* clang-format off */
#define TL_DTYPE_MAP(X)                        \
    X(F32, 1, "f32", 1, 4, "F32", 0)           \
    X(F64, 2, "f64", 1, 8, "F64", 28)          \
    X(I32, 3, "i32", 1, 4, "I32", 26)          \
    X(F16, 4, "f16", 1, 2, "F16", 1)           \
    X(BF16, 5, "bf16", 1, 2, "BF16", 30)       \
    X(Q8_0, 6, "q8_0", 32, 34, NULL, 8)        \
    X(Q4_0, 7, "q4_0", 32, 18, NULL, 2)        \
    X(Q4_1, 8, "q4_1", 32, 20, NULL, 3)        \
    X(Q5_0, 9, "q5_0", 32, 22, NULL, 6)        \
    X(Q5_1, 10, "q5_1", 32, 24, NULL, 7)       \
    X(Q4_K, 11, "q4_k", 256, 144, NULL, 12)    \
    X(Q5_K, 12, "q5_k", 256, 176, NULL, 13)    \
    X(Q6_K, 13, "q6_k", 256, 210, NULL, 14)
/* clang-format on */

/* The two sentinels (spelled TL_<TYPE>_FORCE_..._ in every enum) are no dtypes: they make the
 * enum span int32, so that any value a caller passes is a value of the type (and is refused
 * with TL_E_INVALID_ARGUMENT), never undefined. */
#define TL_DTYPE_ENUM_ITEM_(NAME, value, name, block, bytes, safetensors, gguf) TL_##NAME = value,
typedef enum tl_dtype {
    TL_DTYPE_MAP(TL_DTYPE_ENUM_ITEM_) TL_DTYPE_FORCE_SIGNED_ = -1,
    TL_DTYPE_FORCE_INT32_ = 0x7fffffff
} tl_dtype;
#undef TL_DTYPE_ENUM_ITEM_

/* Bytes of one element of dt; 0 for a block-quantized dtype (tl_dtype_block) or a value that
 * is no dtype. */
TL_API size_t tl_dtype_size(tl_dtype dt);
/* How dt stores its elements: *elements per block (1 for element types) in *bytes.  A tensor of
 * a block dtype has a last dimension that is a multiple of its block. */
TL_API tl_status tl_dtype_block(tl_dtype dt, int64_t *elements, size_t *bytes);
/* A static lowercase name ("f32"), or "?" for a value that is no dtype. */
TL_API const char *tl_dtype_name(tl_dtype dt);

/* Factories place the tensor in the current target.  shape may be NULL when ndim is 0 (a scalar).
 * zeros, ones and full write every element (slab memory is not cleared at reset).
 * For TL_I32, full's value must be an integer in int32 range. */
TL_API tl_status tl_tensor_zeros(tl_context *ctx, tl_dtype dt, int ndim, const int64_t *shape, tl_tensor *out);
TL_API tl_status tl_tensor_ones(tl_context *ctx, tl_dtype dt, int ndim, const int64_t *shape, tl_tensor *out);
TL_API tl_status tl_tensor_full(tl_context *ctx, tl_dtype dt, int ndim, const int64_t *shape, double value,
                                tl_tensor *out);
/* Copies nbytes from data, which must equal the element count times the dtype size exactly. */
TL_API tl_status tl_tensor_from_data(tl_context *ctx, tl_dtype dt, int ndim, const int64_t *shape, const void *data,
                                     size_t nbytes, tl_tensor *out);
/* A tensor over the caller's memory, no copy: for weights shared read-only by many contexts
 * (one per thread) or mapped from a file.  data must hold nbytes (exactly the shape's bytes),
 * aligned to the dtype size, and stay valid while the tensor is used; the library never frees
 * it.  Placed in the current target like any tensor (its handle dies at a reset there). */
TL_API tl_status tl_tensor_wrap(tl_context *ctx, tl_dtype dt, int ndim, const int64_t *shape, void *data, size_t nbytes,
                                tl_tensor *out);
/* Copies the elements in logical (row-major) order; dst_bytes must be at least their size. */
TL_API tl_status tl_tensor_read(tl_context *ctx, tl_tensor t, void *dst, size_t dst_bytes);
/* Ambient tensor or view: frees it.  A base's ambient views die with it and their slots are
 * freed too (freeing such a view afterwards is TL_E_INVALID_HANDLE); a view freed first leaves
 * its base alone.  Scoped: checks the handle and does nothing else; the tensor dies at its
 * scope's reset. */
TL_API tl_status tl_tensor_free(tl_context *ctx, tl_tensor t);
/* The address of the first element; valid until the storage's reset, close or free.
 * Elements sit at the strides that tl_tensor_info_get reports.  The pointer is not const, but a
 * tensor whose info says read_only (over a mapped file) must not be written through it: the
 * pages are read-only and a write faults. */
TL_API tl_status tl_tensor_data(tl_context *ctx, tl_tensor t, void **ptr);

typedef struct tl_tensor_info {
    uint32_t struct_size; /* set by the caller to sizeof(tl_tensor_info): TL_TENSOR_INFO_INIT */
    tl_dtype dtype;
    int32_t ndim;
    int64_t shape[TL_MAX_DIMS];
    int64_t strides[TL_MAX_DIMS]; /* in elements */
    int64_t offset;               /* elements from the start of its storage (slab chunk, or ambient block) */
    const char *storage;          /* scope name, or "ambient"; valid while the storage is; for a
                                   * scoped tensor the very pointer tl_scope_name gives its scope */
    uint64_t generation;          /* its scope's resets before it was made; 0 for ambient too */
    int32_t read_only;            /* 1 over a read-only mapping (or a view of one): never write through
                                   * tl_tensor_data's pointer; 0 otherwise */
} tl_tensor_info;
/* tl_tensor_info info = TL_TENSOR_INFO_INIT; (as libgit2's GIT_*_OPTIONS_INIT) */
#define TL_TENSOR_INFO_INIT \
  { sizeof(tl_tensor_info), (tl_dtype)0, 0, {0}, {0}, 0, NULL, 0, 0 }
/* The numeric fields past struct_size, in order, once: X(field) for one value, XA(field, n) for
 * an array (the bindings pass them as one int64 array laid out from here; storage, a string,
 * travels on its own). */
#define TL_TENSOR_INFO_FIELDS(X, XA) \
  X(dtype) X(ndim) XA(shape, TL_MAX_DIMS) XA(strides, TL_MAX_DIMS) X(offset) X(generation) X(read_only)
TL_API tl_status tl_tensor_info_get(tl_context *ctx, tl_tensor t, tl_tensor_info *out);

/* The one way out of a scope: copies t (contiguous) into target, an open scope of ctx, or into
 * ambient when target.bits is 0. */
TL_API tl_status tl_tensor_retain(tl_context *ctx, tl_tensor t, tl_scope target, tl_tensor *out);

#ifdef __cplusplus
}
#endif
#endif
