// Numeric kernels on Views.  They do no checking: the ops in impl/ops check shapes and dtypes
// and make the outputs first, so a kernel never fails.
#pragma once
#include "core/view.h"

namespace tl {

enum class BinaryOp { add, sub, mul, div };
enum class UnaryOp { scale, relu, gelu, silu, exp, tanh };
enum class Reduction { sum, mean };
enum class Norm { rms, layer };

// a and b already broadcast to out's shape (stride 0 where they repeat).
void binary_kernel(BinaryOp op, const View &a, const View &b, const View &out);
// The same arithmetic over n contiguous elements of each (the tiny ops' path: no walk).
void binary_contiguous(BinaryOp op, tl_dtype dt, const std::byte *a, const std::byte *b, std::byte *out, int64_t n);
void unary_kernel(UnaryOp op, double param, const View &a, const View &out);
void fill_contiguous(std::byte *data, tl_dtype dt, int64_t count, double value);
// src already broadcast to dst's shape; they must not overlap.
void copy_kernel(const View &src, const View &dst);
// The same, f32 into f16 or bf16 (round to nearest even).
void convert_kernel(const View &src, const View &dst);

void sum_kernel(const View &a, int axis, Reduction r, const View &out);  // out: a's shape without axis
void argmax_kernel(const View &a, int axis, const View &out);
void softmax_kernel(const View &a, int axis, const View &out);
// w, b: nullptr for none.
void rmsnorm_kernel(const View &x, const View *w, double eps, const View &out);
void layernorm_kernel(const View &x, const View *w, const View *b, double eps, const View &out);
// Rows [r0, r1) of RoPE: x's rows (its last dim, contiguous or not) into out's contiguous rows, row
// r at position first + (r % rows_per_block), where rows_per_block is x's second-to-last dim.
void rope_kernel(const View &x, int64_t first, double theta, int mode, const View &out, int64_t r0, int64_t r1);
// Heads [h0, h1) of fused attention (ops/attention.cpp): each head's scores at
// scores + h * cache_rows and its hd sums at sums + h * hd, so heads run on any thread.  wide
// (f32 only; nullptr: none): (2 * hd + 1) * valid + hd doubles of this range's own, where
// each head's key and value rows are widened once for all its queries (a prompt's, taken two at
// a time: the second's scores and sums after the rows), the same bits.
void attention_kernel(const View &q, const View &k, const View &v, int64_t valid, double scale, double *scores,
                      int64_t cache_rows, double *sums, double *wide, const View &out, int64_t h0, int64_t h1);

}  // namespace tl
