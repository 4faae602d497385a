#include "ops/rows.h"

#include "core/error.h"
#include "kernels/quant.h"

namespace tl {

int64_t rows_of(const View &v) {
    int64_t n = 1;
    for (int d = 0; d + 1 < v.ndim; ++d) n *= v.shape[d];
    return v.ndim == 0 ? 1 : n;
}

const std::byte *row_at(const View &v, int64_t r) {
    return v.data + bytes_of(v.dtype, offset_of_item(v, v.ndim - 1, r));
}

void row_as_f32(const View &v, int64_t r, float *out) {
    const int64_t n = v.ndim ? v.shape[v.ndim - 1] : 1, s = v.ndim ? v.strides[v.ndim - 1] : 1;
    const std::byte *row = row_at(v, r);
    if (s == 1 || is_block_dtype(v.dtype)) return dequantize_row(v.dtype, row, out, n);  // f32: a copy
    if (v.dtype == TL_F32) {
        const float *x = reinterpret_cast<const float *>(row);
        for (int64_t i = 0; i < n; ++i) out[i] = x[i * s];
        return;
    }
    for (int64_t i = 0; i < n; ++i) dequantize_row(v.dtype, row + bytes_of(v.dtype, i * s), out + i, 1);
}

tl_status require_rows(const char *op, const View &v) {
    // A last dim of one element across the blocks (a transposed row) is refused too: its rows
    // start inside blocks, where no block dtype's row can.
    if (!is_block_dtype(v.dtype) || v.ndim == 0 || v.shape[v.ndim - 1] == 0 || v.strides[v.ndim - 1] == 1) return TL_OK;
    return fail(TL_E_SHAPE, "%s: a %s tensor is read along its stored rows; this view's last dim has stride %lld", op,
                dtype_name(v.dtype), (long long)v.strides[v.ndim - 1]);
}

}  // namespace tl
