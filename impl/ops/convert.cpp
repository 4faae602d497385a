// tl_convert: f32 to and from each storage dtype, a row at a time, by the one routine of its
// format (kernels/quant.h).
#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "core/parallel.h"
#include "kernels/quant.h"
#include "ops/ops.h"
#include "ops/rows.h"

namespace tl {


tl_status op_convert(tl_context &ctx, tl_tensor tsrc, tl_dtype to, tl_tensor *out) {
    Resolved rs;
    TL_TRY(ctx.resolve(tsrc, &rs));
    const View &src = rs.view;
    const bool ok = (src.dtype == TL_F32 && (is_storage_dtype(to) || to == TL_F32)) ||
                    (is_storage_dtype(src.dtype) && to == TL_F32);
    if (!ok)
        return fail(TL_E_DTYPE, "convert: %s to %s (it converts f32 to and from f16, bf16 and the block dtypes)",
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

}  // namespace tl
