// tl_convert, and the products and row gathers that read the storage dtypes (f16, bf16, q8_0,
// q4_0) as they are stored: each row of such a tensor is read where it lies, at any offset in
// any storage, and turned into f32 by the one routine of its format (kernels/quant.h).
#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "core/parallel.h"
#include "kernels/quant.h"
#include "ops/ops.h"

namespace tl {
namespace {

// The rows of v along its last dim: count, and the start of row r (leading dims in row-major
// order, at v's strides).
int64_t rows_of(const View &v) {
    int64_t n = 1;
    for (int d = 0; d + 1 < v.ndim; ++d) n *= v.shape[d];
    return v.ndim == 0 ? 1 : n;
}

const std::byte *row_at(const View &v, int64_t r) {
    return v.data + bytes_of(v.dtype, offset_of_item(v, v.ndim - 1, r));
}

// Row r of v as n f32 values in out (gathered at the last dim's stride for an element dtype;
// a storage dtype's row is contiguous, checked by the caller).
void row_as_f32(const View &v, int64_t r, float *out) {
    const int64_t n = v.ndim ? v.shape[v.ndim - 1] : 1, s = v.ndim ? v.strides[v.ndim - 1] : 1;
    const std::byte *row = row_at(v, r);
    if (v.dtype == TL_F32) {
        const float *x = reinterpret_cast<const float *>(row);
        if (s == 1)
            std::memcpy(out, x, size_t(n) * 4);
        else
            for (int64_t i = 0; i < n; ++i) out[i] = x[i * s];
        return;
    }
    if (s == 1 || is_block_dtype(v.dtype)) return dequantize_row(v.dtype, row, out, n);
    for (int64_t i = 0; i < n; ++i) dequantize_row(v.dtype, row + bytes_of(v.dtype, i * s), out + i, 1);
}

// A storage tensor read by rows: its last dim contiguous (blocks whole along it).
tl_status require_rows(const char *op, const View &v) {
    if (!is_block_dtype(v.dtype) || v.ndim == 0 || v.shape[v.ndim - 1] <= 1 || v.strides[v.ndim - 1] == 1) return TL_OK;
    return fail(TL_E_SHAPE, "%s: a %s tensor is read along its stored rows; this view's last dim has stride %lld", op,
                dtype_name(v.dtype), (long long)v.strides[v.ndim - 1]);
}

}  // namespace

tl_status op_convert(tl_context &ctx, tl_tensor tsrc, tl_dtype to, tl_tensor *out) {
    Resolved rs;
    TL_TRY(ctx.resolve(tsrc, &rs));
    const View &src = rs.view;
    const bool ok = (src.dtype == TL_F32 && (is_storage_dtype(to) || to == TL_F32)) ||
                    (is_storage_dtype(src.dtype) && to == TL_F32);
    if (!ok)
        return fail(TL_E_DTYPE, "convert: %s to %s (it converts f32 to and from f16, bf16, q8_0 and q4_0)",
                    dtype_name(src.dtype), dtype_name(to));
    TL_TRY(require_rows("convert", src));
    const int64_t n = src.ndim ? src.shape[src.ndim - 1] : 1;
    std::byte *scratch = nullptr;
    if (n > 0) TL_TRY(ctx.scratch(size_t(n) * 4, &scratch));  // one row in f32
    NewTensor made;
    TL_TRY(ctx.make_tensor(to, src.ndim, src.shape, &made));  // a block dtype needs whole blocks: checked here
    const View &dst = made.view;
    if (dst.numel() > 0) {
        float *row = reinterpret_cast<float *>(scratch);
        const int64_t rows = rows_of(src), row_bytes = bytes_of(to, n);
        for (int64_t r = 0; r < rows; ++r) {
            row_as_f32(src, r, row);
            quantize_row(to, row, dst.data + r * row_bytes, n);
        }
    }
    *out = made.handle;
    return TL_OK;
}

tl_status op_matmul_stored(tl_context &ctx, const View &a, const View &b, tl_tensor *out) {
    // y[..., m, n] = a[..., m, k] (f32) times b [k, n]: the transpose of a row-major [n, k] weight,
    // each of its n rows a contiguous run of k elements in b's storage dtype.
    if (a.dtype != TL_F32)
        return fail(TL_E_DTYPE, "matmul: a %s weight takes f32 activations, not %s", dtype_name(b.dtype),
                    dtype_name(a.dtype));
    if (a.ndim < 2 || b.ndim != 2)
        return fail(TL_E_SHAPE, "matmul: a %s weight is [k,n] against [...,m,k] activations, not %d-D x %d-D",
                    dtype_name(b.dtype), a.ndim, b.ndim);
    const int64_t k = b.shape[0], n = b.shape[1], m = a.shape[a.ndim - 2];
    if (a.shape[a.ndim - 1] != k)
        return fail(TL_E_SHAPE, "matmul: inner dims differ ([%lld,%lld] x [%lld,%lld])", (long long)m,
                    (long long)a.shape[a.ndim - 1], (long long)k, (long long)n);
    if (k > 1 && b.strides[0] != 1)
        return fail(TL_E_SHAPE,
                    "matmul: a %s weight must be the transpose of its stored [n, k] rows (tl_transpose of the "
                    "stored weight); this one's k has stride %lld",
                    dtype_name(b.dtype), (long long)b.strides[0]);
    if (is_block_dtype(b.dtype) && k % kQuantBlock != 0)
        return fail(TL_E_SHAPE, "matmul: k %lld is not whole %s blocks", (long long)k, dtype_name(b.dtype));
    int64_t shape[TL_MAX_DIMS];
    for (int d = 0; d < a.ndim; ++d) shape[d] = a.shape[d];
    shape[a.ndim - 1] = n;
    const int64_t rows = rows_of(a);
    // Block weights take the activations quantized once per row (integer products, as ggml
    // does); f16/bf16 weights take them as f32.
    const bool integer = is_block_dtype(b.dtype);
    std::byte *scratch = nullptr;
    if (rows > 0 && k > 0) {
        int64_t bytes;
        const int64_t dims[2] = {rows, k};
        if (!count_of(2, dims, 4, &bytes)) return fail(TL_E_OUT_OF_MEMORY, "matmul: activations too large");
        static_assert(kQ8ActivationBytes * kQuantBlock + sizeof(float) <= 4 * kQuantBlock, "fits beside the f32 row");
        if (integer) bytes += bytes;  // beside the f32 rows: k quantized values (kQ8ActivationBytes each), k / 32 scales
        TL_TRY(ctx.scratch(size_t(bytes), &scratch));
    }
    NewTensor made;
    TL_TRY(ctx.make_tensor(TL_F32, a.ndim, shape, &made));
    const View &y = made.view;
    if (y.numel() == 0) return *out = made.handle, TL_OK;
    float *x = reinterpret_cast<float *>(scratch);
    std::byte *xq = reinterpret_cast<std::byte *>(x + rows * k);
    float *xscale = reinterpret_cast<float *>(xq + rows * k * kQ8ActivationBytes);  // 4-aligned: k is whole blocks
    for (int64_t r = 0; r < rows && k > 0; ++r) {
        row_as_f32(a, r, x + r * k);
        if (integer) quantize_activations(x + r * k, k, xq + r * k * kQ8ActivationBytes, xscale + r * (k / kQuantBlock));
    }
    float *yd = reinterpret_cast<float *>(y.data);
    // Outputs in ranges of n on the executor: each output one whole dot product (bits never
    // depend on the thread count).
    // Weight rows in tiles of 16, each tile against every activation row while it is in cache.
    const size_t row_bytes = size_t(bytes_of(b.dtype, b.strides[1]));
    run_split(ctx, n, rows * n * (k > 0 ? k : 1), [&](int64_t lo, int64_t hi) {
        for (int64_t j = lo; j < hi; j += 16) {
            const int64_t tile = hi - j < 16 ? hi - j : 16;
            const std::byte *w = b.data + bytes_of(b.dtype, j * b.strides[1]);
            for (int64_t r = 0; r < rows; ++r) {
                float *yj = yd + r * n + j;
                if (k == 0)
                    std::fill(yj, yj + tile, 0.0f);
                else if (integer)
                    dot_rows_q8(b.dtype, Q8Activations{xq + r * k * kQ8ActivationBytes, xscale + r * (k / kQuantBlock)}, w, row_bytes, tile,
                                k, yj);
                else
                    dot_rows(b.dtype, x + r * k, w, row_bytes, tile, k, yj);
            }
        }
    });
    *out = made.handle;
    return TL_OK;
}

tl_status gather_stored_rows(tl_context &ctx, const View &table, const View &ids, tl_tensor *out) {
    // Each id's row of a storage table as f32 (an embedding lookup in the weights' own format).
    if (table.ndim != 2)
        return fail(TL_E_SHAPE, "gather_rows: a %s table is 2-D, not %d-D", dtype_name(table.dtype), table.ndim);
    TL_TRY(require_rows("gather_rows", table));
    const int64_t d = table.shape[1];
    int64_t shape[TL_MAX_DIMS];
    for (int i = 0; i < ids.ndim; ++i) shape[i] = ids.shape[i];
    shape[ids.ndim] = d;
    NewTensor made;
    TL_TRY(ctx.make_tensor(TL_F32, ids.ndim + 1, shape, &made));
    const View &o = made.view;
    if (o.numel() == 0) return *out = made.handle, TL_OK;
    const int64_t count = ids.numel();
    float *od = reinterpret_cast<float *>(o.data);
    for (int64_t i = 0; i < count; ++i) {
        const int32_t id = *reinterpret_cast<const int32_t *>(ids.data + offset_of_item(ids, ids.ndim, i) * 4);
        row_as_f32(table, id, od + i * d);  // ids were checked in range by the caller
    }
    *out = made.handle;
    return TL_OK;
}

}  // namespace tl
