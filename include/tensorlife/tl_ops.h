/* tensorlife: eager ops.  Part of <tensorlife/tl.h>.  Storage dtypes: docs/storage-dtypes.md.
 *
 * Every op checks its handles first, then writes a new tensor, placed in the current target,
 * to *out.  Inputs may have any strides and offsets (views, slab slices); the numbers are the
 * same, bit for bit, as on fresh contiguous tensors, with one exception: tl_matmul with an
 * operand whose last dim is not contiguous (tl_transpose of a matrix, as a weight stored [n, k]
 * is taken) may run another kernel than its contiguous copy would (a one-row product reads such a
 * weight's stored rows; OpenBLAS's small-matrix kernels differ by layout), so its last bits may
 * differ within rounding.  Row slices, offsets and batches in any layout keep the bits.
 * Negative axes count from the end, as in NumPy.
 * Float ops take TL_F32 and TL_F64; operands of one op share one dtype (TL_E_DTYPE otherwise).
 *
 * The storage dtypes (TL_F16, TL_BF16, TL_Q8_0, TL_Q4_0: weights as models store them) are taken
 * by the ops that say so below, and only by them: every other op refuses them with TL_E_DTYPE
 * naming itself and the dtype (no op reads their bytes as values of another type):
 *   tl_convert        f32 to and from each of them;
 *   tl_matmul         as the weight operand b, against f32 activations;
 *   tl_gather_rows    as the table (an embedding lookup), rows given as f32;
 *   tl_copy_into      f32 into an f16 or bf16 destination (a KV cache), or the same dtype;
 *   tl_slice, tl_transpose  views (a block dtype's only along whole blocks of its stored rows;
 *                     one whose last dim is not those rows, a transpose, only tl_matmul reads:
 *                     tl_convert and tl_gather_rows refuse it with TL_E_SHAPE);
 *   tl_contiguous, tl_reshape, tl_concat  f16 and bf16 (bit copies);
 *   tl_tensor_read, tl_tensor_retain, tl_tensor_info_get, tl_tensor_data, tl_tensor_free,
 *   tl_tensor_from_data and tl_tensor_wrap (the stored bytes), zeros/ones/full (f16, bf16),
 *   and safetensors save and load (f16, bf16). */
#ifndef TENSORLIFE_TL_OPS_H
#define TENSORLIFE_TL_OPS_H

#include "tl_tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The ops of one shape, once each (the definitions and every binding's wrappers are made from
 * these lists; each op is declared below with its contract):
 *   tl_NAME(ctx, a, b, &out) for X(NAME) of TL_PAIR_OPS, elementwise ones in TL_BINARY_OPS;
 *   tl_NAME(ctx, a, &out) for X(NAME) of TL_UNARY_OPS. */
#define TL_BINARY_OPS(X) X(add) X(sub) X(mul) X(div)
#define TL_PAIR_OPS(X) TL_BINARY_OPS(X) X(matmul) X(gather_rows)
#define TL_UNARY_OPS(X) X(relu) X(gelu) X(silu) X(exp) X(tanh)

/* Converts src to a new contiguous tensor of dtype `to`: f32 to f16 or bf16 (round to nearest
 * even), to q8_0 or q4_0 (ggml's reference rounding, whole blocks of 32 along the last dim:
 * TL_E_SHAPE otherwise), and each of these back to f32 (exact).  Any other pair is TL_E_DTYPE. */
TL_API tl_status tl_convert(tl_context *ctx, tl_tensor src, tl_dtype to, tl_tensor *out);

/* [m,k]x[k,n] -> [m,n]; [B,m,k]x[B,k,n] or [B,m,k]x[k,n] -> [B,m,n]; f32 and f64.  A weight b of
 * a storage dtype is [k,n], the tl_transpose of its stored [n,k] rows, against f32 activations
 * [...,m,k], giving f32 [...,m,n] (q8_0 and q4_0 against activations quantized to 8-bit blocks,
 * as ggml does: within half a step per activation of the exact product). */
TL_API tl_status tl_matmul(tl_context *ctx, tl_tensor a, tl_tensor b, tl_tensor *out);

/* Elementwise with NumPy broadcasting; f32, f64 and i32 (tl_div: floats only). */
TL_API tl_status tl_add(tl_context *ctx, tl_tensor a, tl_tensor b, tl_tensor *out);
TL_API tl_status tl_sub(tl_context *ctx, tl_tensor a, tl_tensor b, tl_tensor *out);
TL_API tl_status tl_mul(tl_context *ctx, tl_tensor a, tl_tensor b, tl_tensor *out);
TL_API tl_status tl_div(tl_context *ctx, tl_tensor a, tl_tensor b, tl_tensor *out);
/* tl_binary_bounded's op numbers, fixed for good: a new op of TL_BINARY_OPS takes the next
 * number here (the library does not build with an op that has none). */
typedef enum tl_binary_op {
    TL_BINARY_add = 0,
    TL_BINARY_sub = 1,
    TL_BINARY_mul = 2,
    TL_BINARY_div = 3,
    TL_BINARY_OP_FORCE_INT32_ = 0x7fffffff
} tl_binary_op;
#if defined(TL_EXPERIMENTAL_API) /* not yet stable: see tl_base.h */
/* One of those ops (op: a tl_binary_op; any other number is TL_E_INVALID_ARGUMENT), made only
 * when its result has at most max_elements elements; past that TL_OK with out->bits 0, nothing
 * made.  For a caller that must bound a call's time (Go's binding makes small ops without its
 * scheduler's handoff). */
TL_API tl_status tl_binary_bounded(tl_context *ctx, int op, tl_tensor a, tl_tensor b, int64_t max_elements,
                                   tl_tensor *out);
#endif

/* Unary float ops.  gelu is the tanh form; relu keeps NaN (a NaN in is a NaN out, not 0). */
TL_API tl_status tl_scale(tl_context *ctx, tl_tensor a, double s, tl_tensor *out);
TL_API tl_status tl_relu(tl_context *ctx, tl_tensor a, tl_tensor *out);
TL_API tl_status tl_gelu(tl_context *ctx, tl_tensor a, tl_tensor *out);
TL_API tl_status tl_silu(tl_context *ctx, tl_tensor a, tl_tensor *out);
TL_API tl_status tl_exp(tl_context *ctx, tl_tensor a, tl_tensor *out);
TL_API tl_status tl_tanh(tl_context *ctx, tl_tensor a, tl_tensor *out);

/* Numerically stable softmax along axis (max subtracted). */
TL_API tl_status tl_softmax(tl_context *ctx, tl_tensor a, int axis, tl_tensor *out);
/* Over the last axis of x.  w (and b) have the last axis's length; w.bits == 0 (b.bits == 0)
 * means no weight (no bias).  eps must be >= 0. */
TL_API tl_status tl_rmsnorm(tl_context *ctx, tl_tensor x, tl_tensor w, double eps, tl_tensor *out);
TL_API tl_status tl_layernorm(tl_context *ctx, tl_tensor x, tl_tensor w, tl_tensor b, double eps, tl_tensor *out);

/* Reductions over one axis; keepdim != 0 keeps it with length 1.  Floats accumulate in double.
 * sum takes i32 too (accumulated in int64, stored modulo 2^32); mean takes floats only. */
TL_API tl_status tl_sum(tl_context *ctx, tl_tensor a, int axis, int keepdim, tl_tensor *out);
TL_API tl_status tl_mean(tl_context *ctx, tl_tensor a, int axis, int keepdim, tl_tensor *out);
/* Index of the first largest element along axis (NaN counts as largest); TL_I32, axis removed. */
TL_API tl_status tl_argmax(tl_context *ctx, tl_tensor a, int axis, tl_tensor *out);

/* Views, no copy: they share their base's storage and die with it. */
TL_API tl_status tl_slice(tl_context *ctx, tl_tensor a, int axis, int64_t start, int64_t length, tl_tensor *out);
TL_API tl_status tl_transpose(tl_context *ctx, tl_tensor a, int d0, int d1, tl_tensor *out);
/* A view where the strides can express the new shape, else a contiguous copy.  One dim may be -1. */
TL_API tl_status tl_reshape(tl_context *ctx, tl_tensor a, int ndim, const int64_t *shape, tl_tensor *out);

TL_API tl_status tl_contiguous(tl_context *ctx, tl_tensor a, tl_tensor *out);
TL_API tl_status tl_concat(tl_context *ctx, size_t n, const tl_tensor *ts, int axis, tl_tensor *out);
/* out[i..., :] = table[ids[i...], :]; ids are TL_I32 of any shape, each in 0..rows-1. */
TL_API tl_status tl_gather_rows(tl_context *ctx, tl_tensor table, tl_tensor ids, tl_tensor *out);

/* In place: writes src into dst (a tensor or a view, e.g. a KV-cache row), broadcasting src to
 * dst's shape.  Same dtype.  Overlapping src and dst are handled as if src were copied first. */
TL_API tl_status tl_copy_into(tl_context *ctx, tl_tensor src, tl_tensor dst);

#if defined(TL_EXPERIMENTAL_API) /* not yet stable: see tl_base.h */
/* Attention over a KV cache, fused and causal by construction: q [H,Tq,hd], k and v [Hkv,T,hd]
 * (any views, e.g. a [T, Hkv*hd] cache reshaped and transposed), of which the first valid_rows
 * rows are used; grouped-query attention when Hkv < H (H a multiple of Hkv): query head h reads
 * key/value head h / (H / Hkv), as Llama-family models do; query i sits at position
 * valid_rows - Tq + i and sees rows 0 up to it.  Out:
 * softmax(scale * q k^T) v as a new contiguous [H,Tq,hd], the same size whatever valid_rows is,
 * so a decode loop stays allocation-free without computing masked rows.  Tq <= valid_rows <= T.
 * k and v share a dtype: q's, or f16/bf16 under f32 queries (a KV cache in half the bytes,
 * written by tl_copy_into from f32 rows, each element decoded exactly).
 * Sums in double, rounded once to the dtype; the context's scratch holds T scores. */
TL_API tl_status tl_attention(tl_context *ctx, tl_tensor q, tl_tensor k, tl_tensor v, int64_t valid_rows, double scale,
                              tl_tensor *out);

/* Rotary position embedding (RoPE) of x [..., T, d] (d even), row t at position position + t:
 * each pair (a, b) of a row turns by the angle pos * theta^(-2i/d), i the pair's index, to
 * (a cos - b sin, a sin + b cos), computed in double and rounded once.  The pairs:
 *   TL_ROPE_INTERLEAVED  (x[2i], x[2i+1]): GGUF's Llama files (ggml's mode 0);
 *   TL_ROPE_HALVES       (x[i], x[i + d/2]): Hugging Face checkpoints (rotate_half).
 * f32 and f64; a new contiguous tensor of x's shape.  position >= 0, theta > 0. */
typedef enum tl_rope_mode {
    TL_ROPE_INTERLEAVED = 0,
    TL_ROPE_HALVES = 1,
    TL_ROPE_MODE_FORCE_SIGNED_ = -1,
    TL_ROPE_MODE_FORCE_INT32_ = 0x7fffffff
} tl_rope_mode;
TL_API tl_status tl_rope(tl_context *ctx, tl_tensor x, int64_t position, double theta, tl_rope_mode mode,
                         tl_tensor *out);
#endif /* TL_EXPERIMENTAL_API */

#ifdef __cplusplus
}
#endif
#endif
