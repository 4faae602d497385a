// Rotary position embedding: the operand checks; the numbers are kernels/rope.cpp's.
#include <cmath>

#include "core/error.h"
#include "core/parallel.h"
#include "ops/ops.h"
#include "tensorlife/tl_ops.h"

namespace tl {

tl_status op_rope(tl_context &ctx, tl_tensor tx, int64_t position, double theta, int mode, tl_tensor *out) {
    Resolved rx;
    TL_TRY(ctx.resolve(tx, &rx));
    const View &x = rx.view;
    if (!is_float(x.dtype)) return fail(TL_E_DTYPE, "rope takes f32 or f64, not %s", dtype_name(x.dtype));
    if (x.ndim < 1 || x.shape[x.ndim - 1] % 2 != 0)
        return fail(TL_E_SHAPE, "rope: the last dim must be even (pairs), not %lld",
                    x.ndim ? (long long)x.shape[x.ndim - 1] : 0LL);
    if (mode != TL_ROPE_INTERLEAVED && mode != TL_ROPE_HALVES)
        return fail(TL_E_INVALID_ARGUMENT, "rope: mode %d is neither TL_ROPE_INTERLEAVED nor TL_ROPE_HALVES", mode);
    if (position < 0) return fail(TL_E_INVALID_ARGUMENT, "rope: position %lld is negative", (long long)position);
    if (!(theta > 0) || !std::isfinite(theta))
        return fail(TL_E_INVALID_ARGUMENT, "rope: theta %g is not positive", theta);
    NewTensor made;
    TL_TRY(ctx.make_tensor(x.dtype, x.ndim, x.shape, &made));
    const View &o = made.view;
    if (o.numel() > 0) {
        const int64_t rows = o.numel() / x.shape[x.ndim - 1];
        run_split(ctx, rows, o.numel() * 8,
                  [&](int64_t r0, int64_t r1) { rope_kernel(x, position, theta, mode, o, r0, r1); });
    }
    *out = made.handle;
    return TL_OK;
}

}  // namespace tl
