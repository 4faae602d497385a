// The eager ops: each is one line onto impl/ops.
#include <climits>

#include "ops/ops.h"
#include "boundary.h"
#include "tensorlife/tl.h"

using tl::BinaryOp;
using tl::Norm;
using tl::Reduction;
using tl::UnaryOp;
using tl::with_context;

extern "C" {

tl_status tl_convert(tl_context *ctx, tl_tensor src, tl_dtype to, tl_tensor *out) {
    return with_context(ctx, out, [&](tl_context &c) { return tl::op_convert(c, src, to, out); });
}

tl_status tl_matmul(tl_context *ctx, tl_tensor a, tl_tensor b, tl_tensor *out) {
    return with_context(ctx, out, [&](tl_context &c) { return tl::op_matmul(c, a, b, out); });
}

#define TL_BINARY(name)                                                                                        \
  tl_status tl_##name(tl_context *ctx, tl_tensor a, tl_tensor b, tl_tensor *out) {                             \
    return with_context(ctx, out, [&](tl_context &c) { return tl::op_binary(c, BinaryOp::name, a, b, out); }); \
  }
TL_BINARY_OPS(TL_BINARY)
#undef TL_BINARY

tl_status tl_binary_bounded(tl_context *ctx, int op, tl_tensor a, tl_tensor b, int64_t max_elements, tl_tensor *out) {
    BinaryOp kind;
    switch (op) {  // by number, never by place in the list
#define TL_BINARY_OP(name)   \
  case TL_BINARY_##name:     \
    kind = BinaryOp::name;   \
    break;
        TL_BINARY_OPS(TL_BINARY_OP)
#undef TL_BINARY_OP
        default:
            return tl::fail(TL_E_INVALID_ARGUMENT, "binary op %d is not a tl_binary_op", op);
    }
    if (max_elements < 0)
        return tl::fail(TL_E_INVALID_ARGUMENT, "max_elements %lld is negative", (long long)max_elements);
    return with_context(ctx, out, [&](tl_context &c) { return tl::op_binary(c, kind, a, b, out, max_elements); });
}

tl_status tl_scale(tl_context *ctx, tl_tensor a, double s, tl_tensor *out) {
    return with_context(ctx, out, [&](tl_context &c) { return tl::op_unary(c, UnaryOp::scale, s, a, out); });
}

#define TL_UNARY(name)                                                                                         \
  tl_status tl_##name(tl_context *ctx, tl_tensor a, tl_tensor *out) {                                          \
    return with_context(ctx, out, [&](tl_context &c) { return tl::op_unary(c, UnaryOp::name, 0.0, a, out); }); \
  }
TL_UNARY_OPS(TL_UNARY)
#undef TL_UNARY

tl_status tl_softmax(tl_context *ctx, tl_tensor a, int axis, tl_tensor *out) {
    return with_context(ctx, out, [&](tl_context &c) { return tl::op_softmax(c, a, axis, out); });
}

tl_status tl_attention(tl_context *ctx, tl_tensor q, tl_tensor k, tl_tensor v, int64_t valid_rows, double scale,
                       tl_tensor *out) {
    return with_context(ctx, out, [&](tl_context &c) { return tl::op_attention(c, q, k, v, valid_rows, scale, out); });
}

tl_status tl_rope(tl_context *ctx, tl_tensor x, int64_t position, double theta, tl_rope_mode mode, tl_tensor *out) {
    return with_context(ctx, out, [&](tl_context &c) { return tl::op_rope(c, x, position, theta, int(mode), out); });
}

tl_status tl_rmsnorm(tl_context *ctx, tl_tensor x, tl_tensor w, double eps, tl_tensor *out) {
    return with_context(ctx, out,
                        [&](tl_context &c) { return tl::op_norm(c, Norm::rms, x, w, tl_tensor{0}, eps, out); });
}

tl_status tl_layernorm(tl_context *ctx, tl_tensor x, tl_tensor w, tl_tensor b, double eps, tl_tensor *out) {
    return with_context(ctx, out, [&](tl_context &c) { return tl::op_norm(c, Norm::layer, x, w, b, eps, out); });
}

tl_status tl_sum(tl_context *ctx, tl_tensor a, int axis, int keepdim, tl_tensor *out) {
    return with_context(ctx, out,
                        [&](tl_context &c) { return tl::op_sum(c, Reduction::sum, a, axis, keepdim != 0, out); });
}

tl_status tl_mean(tl_context *ctx, tl_tensor a, int axis, int keepdim, tl_tensor *out) {
    return with_context(ctx, out,
                        [&](tl_context &c) { return tl::op_sum(c, Reduction::mean, a, axis, keepdim != 0, out); });
}

tl_status tl_argmax(tl_context *ctx, tl_tensor a, int axis, tl_tensor *out) {
    return with_context(ctx, out, [&](tl_context &c) { return tl::op_argmax(c, a, axis, out); });
}

tl_status tl_slice(tl_context *ctx, tl_tensor a, int axis, int64_t start, int64_t length, tl_tensor *out) {
    return with_context(ctx, out, [&](tl_context &c) { return tl::op_slice(c, a, axis, start, length, out); });
}

tl_status tl_transpose(tl_context *ctx, tl_tensor a, int d0, int d1, tl_tensor *out) {
    return with_context(ctx, out, [&](tl_context &c) { return tl::op_transpose(c, a, d0, d1, out); });
}

tl_status tl_reshape(tl_context *ctx, tl_tensor a, int ndim, const int64_t *shape, tl_tensor *out) {
    return with_context(ctx, out, [&](tl_context &c) { return tl::op_reshape(c, a, ndim, shape, out); });
}

tl_status tl_contiguous(tl_context *ctx, tl_tensor a, tl_tensor *out) {
    return with_context(ctx, out, [&](tl_context &c) { return tl::op_contiguous(c, a, out); });
}

tl_status tl_concat(tl_context *ctx, size_t n, const tl_tensor *ts, int axis, tl_tensor *out) {
    return with_context(ctx, out, [&](tl_context &c) {
        if (n > size_t(INT_MAX)) return tl::fail(TL_E_INVALID_ARGUMENT, "concat: %zu tensors, past INT_MAX", n);
        return tl::op_concat(c, int(n), ts, axis, out);
    });
}

tl_status tl_gather_rows(tl_context *ctx, tl_tensor table, tl_tensor ids, tl_tensor *out) {
    return with_context(ctx, out, [&](tl_context &c) { return tl::op_gather_rows(c, table, ids, out); });
}

tl_status tl_copy_into(tl_context *ctx, tl_tensor src, tl_tensor dst) {
    return with_context(ctx, [&](tl_context &c) { return tl::op_copy_into(c, src, dst); });
}

}  // extern "C"
