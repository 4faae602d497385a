// Elementwise ops: NumPy broadcasting for the binary ones, float-only unary math.
#include "core/error.h"
#include "core/parallel.h"
#include "ops/ops.h"

namespace tl {
namespace {

const char *binary_name(BinaryOp op) {
    switch (op) {
        case BinaryOp::add:
            return "add";
        case BinaryOp::sub:
            return "sub";
        case BinaryOp::mul:
            return "mul";
        case BinaryOp::div:
            return "div";
    }
    return "?";
}

const char *unary_name(UnaryOp op) {
    switch (op) {
        case UnaryOp::scale:
            return "scale";
        case UnaryOp::relu:
            return "relu";
        case UnaryOp::gelu:
            return "gelu";
        case UnaryOp::silu:
            return "silu";
        case UnaryOp::exp:
            return "exp";
        case UnaryOp::tanh:
            return "tanh";
    }
    return "?";
}

// NumPy's rule: align from the right; each pair of dims is equal or one of them is 1.
bool broadcast_shape(const View &a, const View &b, int *ndim, int64_t *shape) {
    const int nd = a.ndim > b.ndim ? a.ndim : b.ndim;
    for (int d = 0; d < nd; ++d) {
        const int da = d - (nd - a.ndim), db = d - (nd - b.ndim);
        const int64_t x = da >= 0 ? a.shape[da] : 1, y = db >= 0 ? b.shape[db] : 1;
        if (x != y && x != 1 && y != 1) return false;
        shape[d] = x == 1 ? y : x;
    }
    *ndim = nd;
    return true;
}

// Whether a shape has at most limit (>= 0) elements, without overflowing on the way: a zero
// anywhere makes it empty, so the zeros are looked for before any product.
bool at_most(int ndim, const int64_t *shape, int64_t limit) {
    for (int d = 0; d < ndim; ++d)
        if (shape[d] == 0) return true;
    int64_t count = 1;
    for (int d = 0; d < ndim; ++d) {
        if (shape[d] > limit / count) return false;
        count *= shape[d];
    }
    return count <= limit;
}

bool same_dims(const View &a, const View &b) {
    if (a.ndim != b.ndim) return false;
    for (int d = 0; d < a.ndim; ++d)
        if (a.shape[d] != b.shape[d]) return false;
    return true;
}

}  // namespace

tl_status op_binary(tl_context &ctx, BinaryOp op, tl_tensor ta, tl_tensor tb, tl_tensor *out, int64_t max_elements) {
    Resolved ra, rb;
    TL_TRY(ctx.resolve(ta, &ra));
    TL_TRY(ctx.resolve(tb, &rb));
    const View &a = ra.view, &b = rb.view;
    if (a.dtype != b.dtype)
        return fail(TL_E_DTYPE, "%s: %s and %s differ", binary_name(op), dtype_name(a.dtype), dtype_name(b.dtype));
    TL_TRY(require_arithmetic(binary_name(op), a.dtype));
    if (op == BinaryOp::div && !is_float(a.dtype)) return fail(TL_E_DTYPE, "div takes f32 or f64, not i32");
    // Equal shapes (a decode step's tiny ops) need no broadcast: the output has a's shape.
    const bool same = same_dims(a, b);
    int nd = a.ndim;
    int64_t broadcast[TL_MAX_DIMS];
    if (!same && !broadcast_shape(a, b, &nd, broadcast))
        return fail(TL_E_SHAPE, "%s: shapes of %d-D and %d-D tensors do not broadcast", binary_name(op), a.ndim,
                    b.ndim);
    const int64_t *shape = same ? a.shape : broadcast;
    if (max_elements >= 0 && !at_most(nd, shape, max_elements)) {
        *out = tl_tensor{0};
        return TL_OK;
    }
    NewTensor made;
    TL_TRY(ctx.make_tensor(a.dtype, nd, shape, &made));
    const View &c = made.view;
    if (same && runs_inline(ctx, c.numel())) {
        // The tiny op of a decode step: nothing to broadcast or split, so no Views to copy, and
        // contiguous operands (c always is) go straight to the loop.
        if (a.is_contiguous() && b.is_contiguous())
            binary_contiguous(op, a.dtype, a.data, b.data, c.data, c.numel());
        else
            binary_kernel(op, a, b, c);
    } else {
        const View ab = broadcast_to(a, nd, shape), bb = broadcast_to(b, nd, shape);
        split_along(ctx, c, -1, c.numel(), [&](int d, int64_t lo, int64_t hi) {
            binary_kernel(op, cut(ab, d, lo, hi), cut(bb, d, lo, hi), cut(c, d, lo, hi));
        });
    }
    *out = made.handle;
    return TL_OK;
}

tl_status op_unary(tl_context &ctx, UnaryOp op, double param, tl_tensor ta, tl_tensor *out) {
    Resolved ra;
    TL_TRY(ctx.resolve(ta, &ra));
    const View &a = ra.view;
    if (!is_float(a.dtype)) return fail(TL_E_DTYPE, "%s takes f32 or f64, not %s", unary_name(op), dtype_name(a.dtype));
    NewTensor made;
    TL_TRY(ctx.make_tensor(a.dtype, a.ndim, a.shape, &made));
    const View &c = made.view;
    if (runs_inline(ctx, c.numel())) {
        unary_kernel(op, param, a, c);
    } else {
        split_along(ctx, c, -1, c.numel(), [&](int d, int64_t lo, int64_t hi) {
            unary_kernel(op, param, cut(a, d, lo, hi), cut(c, d, lo, hi));
        });
    }
    *out = made.handle;
    return TL_OK;
}

}  // namespace tl
