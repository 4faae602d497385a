// The ops behind the C API.  Each one checks its handles, dtypes and shapes, makes its output
// in the current target, and only then runs its kernel, so a failure changes nothing.
#pragma once
#include "core/context.h"
#include "kernels/kernels.h"

namespace tl {

// The one gate for the storage dtypes (f16, bf16, q8_0, q4_0): an op that does arithmetic on
// its operand's elements refuses them, naming itself and the dtype; never a loop over raw bytes.
inline tl_status require_arithmetic(const char *op, tl_dtype dt) {
    if (is_arithmetic(dt)) return TL_OK;
    return fail(TL_E_DTYPE, "%s takes f32, f64 or i32, not %s (convert it with tl_convert)", op, dtype_name(dt));
}
// Block dtypes (q8_0, q4_0) keep whole blocks along their stored last dimension: views and copies
// other than the ones that keep them are refused.
inline tl_status refuse_blocks(const char *op, tl_dtype dt) {
    if (!is_block_dtype(dt)) return TL_OK;
    return fail(TL_E_DTYPE, "%s does not take %s (its elements are stored in blocks)", op, dtype_name(dt));
}

// f32 to and from the storage dtypes (ops/convert.cpp).
tl_status op_convert(tl_context &ctx, tl_tensor src, tl_dtype to, tl_tensor *out);

tl_status op_fill(tl_context &ctx, tl_dtype dt, int ndim, const int64_t *shape, double value, tl_tensor *out);
tl_status op_from_data(tl_context &ctx, tl_dtype dt, int ndim, const int64_t *shape, const void *data, size_t nbytes,
                       tl_tensor *out);
tl_status op_wrap(tl_context &ctx, tl_dtype dt, int ndim, const int64_t *shape, void *data, size_t nbytes,
                  tl_tensor *out);
tl_status op_read(tl_context &ctx, tl_tensor t, void *dst, size_t dst_bytes);
tl_status op_retain(tl_context &ctx, tl_tensor t, tl_scope target, tl_tensor *out);

// max_elements (>= 0): a larger result is not made (TL_OK, out->bits 0): tl_binary_bounded.
tl_status op_binary(tl_context &ctx, BinaryOp op, tl_tensor a, tl_tensor b, tl_tensor *out, int64_t max_elements = -1);
tl_status op_unary(tl_context &ctx, UnaryOp op, double param, tl_tensor a, tl_tensor *out);
tl_status op_softmax(tl_context &ctx, tl_tensor a, int axis, tl_tensor *out);
tl_status op_norm(tl_context &ctx, Norm norm, tl_tensor x, tl_tensor w, tl_tensor b, double eps, tl_tensor *out);
tl_status op_sum(tl_context &ctx, Reduction r, tl_tensor a, int axis, bool keepdim, tl_tensor *out);
tl_status op_argmax(tl_context &ctx, tl_tensor a, int axis, tl_tensor *out);
tl_status op_matmul(tl_context &ctx, tl_tensor a, tl_tensor b, tl_tensor *out);
// tl_matmul with a q4_0, q8_0, q4_K, q5_K or q6_K weight b, the transpose of its stored rows, whose rows are also laid out
// in rows16 (kernels/quant.h's pack_rows16, sixteen at a time): the same bits, a decode's few
// activation rows read from rows16 (not nullptr; op_matmul_shared with one weight).
tl_status op_matmul_rows16(tl_context &ctx, tl_tensor a, tl_tensor b, const std::byte *rows16, tl_tensor *out);
// outs[i] = a times weight bs[i] (as tl_matmul, or op_matmul_rows16 where rows16s[i] is not
// nullptr), for 1 to 4 weights: weights stored in one of the dtypes whose products quantize the
// activations take them quantized once for all (a layer's q, k and v; gate and up), each output the
// bits it has alone.
tl_status op_matmul_shared(tl_context &ctx, tl_tensor a, int count, const tl_tensor *bs, const std::byte *const *rows16s,
                           tl_tensor *outs);
tl_status op_rope(tl_context &ctx, tl_tensor x, int64_t position, double theta, int mode, tl_tensor *out);
tl_status op_attention(tl_context &ctx, tl_tensor q, tl_tensor k, tl_tensor v, int64_t valid, double scale,
                       tl_tensor *out);

tl_status op_slice(tl_context &ctx, tl_tensor a, int axis, int64_t start, int64_t length, tl_tensor *out);
tl_status op_transpose(tl_context &ctx, tl_tensor a, int d0, int d1, tl_tensor *out);
tl_status op_reshape(tl_context &ctx, tl_tensor a, int ndim, const int64_t *shape, tl_tensor *out);
tl_status op_contiguous(tl_context &ctx, tl_tensor a, tl_tensor *out);
tl_status op_concat(tl_context &ctx, int n, const tl_tensor *ts, int axis, tl_tensor *out);
tl_status op_gather_rows(tl_context &ctx, tl_tensor table, tl_tensor ids, tl_tensor *out);
tl_status op_copy_into(tl_context &ctx, tl_tensor src, tl_tensor dst);

}  // namespace tl
