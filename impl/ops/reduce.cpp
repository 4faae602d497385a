// Ops that reduce or normalise along an axis.
#include "core/error.h"
#include "core/parallel.h"
#include "ops/ops.h"

namespace tl {

tl_status op_softmax(tl_context &ctx, tl_tensor ta, int axis, tl_tensor *out) {
    Resolved ra;
    TL_TRY(ctx.resolve(ta, &ra));
    const View &a = ra.view;
    if (!is_float(a.dtype)) return fail(TL_E_DTYPE, "softmax takes f32 or f64, not %s", dtype_name(a.dtype));
    int ax = 0;
    TL_TRY(normalize_axis(axis, a.ndim, &ax));
    NewTensor made;
    TL_TRY(ctx.make_tensor(a.dtype, a.ndim, a.shape, &made));
    const View &c = made.view;
    split_along(ctx, c, ax, c.numel(), [&](int d, int64_t lo, int64_t hi) {  // rows, each normalised whole
        softmax_kernel(cut(a, d, lo, hi), ax, cut(c, d, lo, hi));
    });
    *out = made.handle;
    return TL_OK;
}

tl_status op_norm(tl_context &ctx, Norm norm, tl_tensor tx, tl_tensor tw, tl_tensor tb, double eps, tl_tensor *out) {
    const char *name = norm == Norm::layer ? "layernorm" : "rmsnorm";
    Resolved rx, rw, rb;
    TL_TRY(ctx.resolve(tx, &rx));
    const View &x = rx.view;
    if (!is_float(x.dtype)) return fail(TL_E_DTYPE, "%s takes f32 or f64, not %s", name, dtype_name(x.dtype));
    if (x.ndim < 1) return fail(TL_E_SHAPE, "%s needs at least 1 dim", name);
    if (!(eps >= 0)) return fail(TL_E_INVALID_ARGUMENT, "%s: eps %g is not >= 0", name, eps);
    const int64_t len = x.shape[x.ndim - 1];
    const View *w = nullptr, *b = nullptr;
    for (int i = 0; i < 2; ++i) {
        tl_tensor t = i == 0 ? tw : tb;
        if (t.bits == 0) continue;
        Resolved &r = i == 0 ? rw : rb;
        TL_TRY(ctx.resolve(t, &r));
        if (r.view.dtype != x.dtype)
            return fail(TL_E_DTYPE, "%s: %s weight for %s input", name, dtype_name(r.view.dtype), dtype_name(x.dtype));
        if (r.view.ndim != 1 || r.view.shape[0] != len)
            return fail(TL_E_SHAPE, "%s: weight and bias must be 1-D of length %lld", name, (long long)len);
        (i == 0 ? w : b) = &r.view;
    }
    NewTensor made;
    TL_TRY(ctx.make_tensor(x.dtype, x.ndim, x.shape, &made));
    const View &c = made.view;
    split_along(ctx, c, c.ndim - 1, c.numel(), [&](int d, int64_t lo, int64_t hi) {  // rows of the last axis
        if (norm == Norm::layer)
            layernorm_kernel(cut(x, d, lo, hi), w, b, eps, cut(c, d, lo, hi));
        else
            rmsnorm_kernel(cut(x, d, lo, hi), w, eps, cut(c, d, lo, hi));
    });
    *out = made.handle;
    return TL_OK;
}

// The output shape of a reduction over axis ax: the axis dropped, or kept with length 1.
static int reduced_shape(const View &a, int ax, bool keepdim, int64_t *shape) {
    int nd = 0;
    for (int d = 0; d < a.ndim; ++d) {
        if (d != ax)
            shape[nd++] = a.shape[d];
        else if (keepdim)
            shape[nd++] = 1;
    }
    return nd;
}

tl_status op_sum(tl_context &ctx, Reduction r, tl_tensor ta, int axis, bool keepdim, tl_tensor *out) {
    Resolved ra;
    TL_TRY(ctx.resolve(ta, &ra));
    const View &a = ra.view;
    TL_TRY(require_arithmetic(r == Reduction::mean ? "mean" : "sum", a.dtype));
    if (r == Reduction::mean && !is_float(a.dtype))
        return fail(TL_E_DTYPE, "mean takes f32 or f64, not %s", dtype_name(a.dtype));
    int ax = 0;
    TL_TRY(normalize_axis(axis, a.ndim, &ax));
    int64_t shape[TL_MAX_DIMS];
    const int nd = reduced_shape(a, ax, keepdim, shape);
    NewTensor made;
    TL_TRY(ctx.make_tensor(a.dtype, nd, shape, &made));
    const View &c = made.view;
    const View oc = keepdim ? drop_axis(c, ax) : c;
    split_along(ctx, a, ax, a.numel(), [&](int d, int64_t lo, int64_t hi) {  // output elements, each whole
        sum_kernel(cut(a, d, lo, hi), ax, r, cut(oc, d < ax ? d : d - 1, lo, hi));
    });
    *out = made.handle;
    return TL_OK;
}

tl_status op_argmax(tl_context &ctx, tl_tensor ta, int axis, tl_tensor *out) {
    Resolved ra;
    TL_TRY(ctx.resolve(ta, &ra));
    const View &a = ra.view;
    int ax = 0;
    TL_TRY(normalize_axis(axis, a.ndim, &ax));
    TL_TRY(require_arithmetic("argmax", a.dtype));
    if (a.shape[ax] == 0) return fail(TL_E_SHAPE, "argmax over an empty axis");
    if (a.shape[ax] > INT32_MAX) return fail(TL_E_SHAPE, "argmax: axis too long for i32 indices");
    int64_t shape[TL_MAX_DIMS];
    const int nd = reduced_shape(a, ax, false, shape);
    NewTensor made;
    TL_TRY(ctx.make_tensor(TL_I32, nd, shape, &made));
    const View &c = made.view;
    split_along(ctx, a, ax, a.numel(), [&](int d, int64_t lo, int64_t hi) {
        argmax_kernel(cut(a, d, lo, hi), ax, cut(c, d < ax ? d : d - 1, lo, hi));
    });
    *out = made.handle;
    return TL_OK;
}

}  // namespace tl
