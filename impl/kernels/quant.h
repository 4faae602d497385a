// The storage dtypes' element formats, bit for bit as GGUF and safetensors store them: f32 to
// and from IEEE half and bfloat16 (round to nearest even; NaN stays NaN), and rows of Q8_0 and
// Q4_0 blocks quantized by ggml's reference rounding and dequantized exactly (tl_tensor.h says
// what a block holds).
#pragma once
#include <cstddef>
#include <cstdint>

#include "tensorlife/tl_tensor.h"

namespace tl {

constexpr int64_t kQuantBlock = 32;
constexpr size_t kQ8Bytes = 34, kQ4Bytes = 18, kQ5Bytes = 22, kQ4_1Bytes = 20, kQ5_1Bytes = 24;

// Round to nearest even; out of range gives infinity; NaN stays a (quiet) NaN.  The other way is
// half.h's, exact.
uint16_t float_to_f16(float f);
uint16_t float_to_bf16(float f);

// n elements (a multiple of 32 for the block dtypes) of a row of dt to f32, and back.
void dequantize_row(tl_dtype dt, const std::byte *src, float *dst, int64_t n);
void quantize_row(tl_dtype dt, const float *src, std::byte *dst, int64_t n);

// out[r] = the dot product of n f32 values x with row r of nrows rows of n elements of dt (f32,
// f16 or bf16), row r at rows + r * row_bytes; in an order fixed by n and the CPU's instruction set
// (kernels/dot_rows.cpp, Highway), whatever nrows is.
void dot_rows(tl_dtype dt, const float *x, const std::byte *rows, size_t row_bytes, int64_t nrows, int64_t n,
              float *out);
// A row of f32 activations quantized for the integer products with q8_0/q4_0/q5_0 weights as
// llama.cpp's x86 code does it (quantize_row_q8_0): per block of 32, q = x * (127 / max|x|)
// rounded half to even and the scale max|x| / 127 rounded to f16 (kept in f32 past f16's range).
// The values are kept as the CPU's target multiplies them (dot_rows.cpp), kQ8ActivationBytes
// bytes a value.  Given sums, also q8_1's s for q4_1/q5_1 weights (quantize_row_q8_1): each
// block's sum of q times max|x| / 127 (unrounded), rounded to f16 (kept in f32 past its range).
constexpr size_t kQ8ActivationBytes = 2;
struct Q8Activations {
    const std::byte *q;            // n * kQ8ActivationBytes bytes
    const float *scale;            // n / 32 scales
    const float *sums = nullptr;   // n / 32 values of s, for q4_1 and q5_1
};
void quantize_activations(const float *x, int64_t n, std::byte *q, float *scale, float *sums = nullptr);
// The same against rows of dt (q8_0, q4_0, q5_0; q4_1, q5_1 given sums) for such activations:
// each block's products exact in int32, scaled and summed in f32 in an order fixed by n and the
// CPU's target.
void dot_rows_q8(tl_dtype dt, const Q8Activations *x, int64_t xrows, const std::byte *rows, size_t row_bytes,
                 int64_t nrows, int64_t n, float *out, int64_t out_stride);
// A prompt's products with q8_0, q4_0 or q5_0 weights, kPanelRows weight rows at a time, where
// panel_kernel(dt) says this CPU has them (AVX-512 VNNI): the rows repacked once into a panel of
// panel_bytes(dt, k) bytes (pack_panel), then out[i * out_stride + j] = activation row x[i] .
// weight row j for every i < xrows, each the bits dot_rows_q8 gives it (kernels/panel_dot.cpp).
// q4_K, q5_K and q6_K likewise below (dot_panel_q8k).
constexpr int64_t kPanelRows = 16;
bool panel_kernel(tl_dtype dt);
size_t panel_bytes(tl_dtype dt, int64_t k);
void pack_panel(tl_dtype dt, const std::byte *rows, size_t row_bytes, int64_t k, std::byte *panel);
void dot_panel(const Q8Activations *x, int64_t xrows, const std::byte *panel, int64_t k, float *out, int64_t out_stride);
// Decode's products with q4_0 and q8_0 (below: q4_K, q5_K and q6_K) weights where rows16_kernel(dt) says
// this CPU has them (AVX-512 VNNI): sixteen rows laid out once (pack_rows16, at model open) so a block's weights of
// all sixteen are a few 64-byte vectors, read as one stream (the one-row kernel reads each row
// alone, its additions one chain), then out[i * out_stride + j] = activation row x[i] . weight
// row j as dot_panel computes it: dot_rows_q8's bits.  rows16_bytes(dt, k) bytes, the rows' size.
constexpr size_t kRows16Q4_0BlockBytes = 4 * 4 * kPanelRows + 2 * kPanelRows;
constexpr size_t kRows16Q8_0BlockBytes = 8 * 4 * kPanelRows + 2 * kPanelRows;
// q4_K, q5_K and q6_K the same way against q8_K activations (dot_rows16_q8k).  q4_K: a super
// block's 32 vectors of the rows' nibble dwords, their 8 scales and 8 mins as bytes, their f16 d
// and dmin (1.03x the rows); q5_K: the same and 8 vectors of the rows' qh dwords (1.02x); q6_K: 48
// vectors of the rows' ql and qh dwords, their 16 scales, their d (the rows' size).
// q4_K's and q5_K's parts of a super block: the rows' qs dwords side by side (32 vectors of 4 x
// kPanelRows bytes), q5_K's qh dwords (8 more), the 8 scales and 8 mins of each row as bytes, its
// d and dmin.
template <bool kFive>
struct Rows16KMin {
    static constexpr size_t kQh = 32 * 4 * kPanelRows, kScales = (kFive ? 40 : 32) * 4 * kPanelRows,
                            kHalves = kScales + 16 * kPanelRows, kBlockBytes = kHalves + 4 * kPanelRows;
};
constexpr size_t kRows16Q4KBlockBytes = Rows16KMin<false>::kBlockBytes, kRows16Q5KBlockBytes = Rows16KMin<true>::kBlockBytes;
constexpr size_t kRows16Q6KBlockBytes = 48 * 4 * kPanelRows + 16 * kPanelRows + 2 * kPanelRows;
bool rows16_kernel(tl_dtype dt);
size_t rows16_bytes(tl_dtype dt, int64_t k);
void pack_rows16(tl_dtype dt, const std::byte *rows, size_t row_bytes, int64_t k, std::byte *out);
void dot_rows16(tl_dtype dt, const Q8Activations *x, int64_t xrows, const std::byte *rows16, int64_t k, float *out,
                int64_t out_stride);
struct Q8KRow;
void dot_rows16_q8k(tl_dtype dt, const Q8KRow *x, int64_t xrows, const std::byte *rows16, int64_t k, float *out,
                    int64_t out_stride);
// A row of activations quantized for q4_K, q5_K and q6_K weights as ggml's q8_K (its reference
// quantizer, which llama.cpp's x86 code runs): per 256 values, q = x * (-127 / max) rounded half to
// even, where max is the value of largest magnitude, the scale 1 / that factor in f32, and the
// sums of each 16 q.  A run holding an infinity or NaN gets a NaN scale.
struct Q8KRow {
    int8_t *q;       // n values
    int16_t *sums;   // n / 16
    float *scale;    // n / 256
};
void quantize_activations_q8k(const float *x, int64_t n, Q8KRow out);
// A q8_K row as the K panels read it (wide: widen_q8k's n int16 values, then the n / 32 sums of
// each 32), and the panels' products, each the bits dot_rows_q8k gives it.
struct Q8KPanelRow {
    Q8KRow row;
    const int16_t *wide;
};
constexpr size_t q8k_wide_bytes(int64_t n) { return size_t(n) * 2 + size_t(n / 32) * 2; }
void widen_q8k(const Q8KRow &x, int64_t n, int16_t *wide);
void dot_panel_q8k(tl_dtype dt, const Q8KPanelRow *x, int64_t xrows, const std::byte *panel, int64_t k, float *out,
                   int64_t out_stride);
// out[i * out_stride + r] = row r of nrows rows of dt (q4_K, q5_K, q6_K) . activation row x[i],
// i < xrows: each super block's products exact in int32, scaled and summed in f32 in an order fixed
// by n and the CPU's target, whatever xrows is (kernels/kquant_dot.cpp).
void dot_rows_q8k(tl_dtype dt, const Q8KRow *x, int64_t xrows, const std::byte *rows, size_t row_bytes, int64_t nrows,
                  int64_t n, float *out, int64_t out_stride);
// The instruction set dot_rows runs on here ("AVX2", "AVX3", "AVX3_DL", "NEON", ...).
const char *simd_target();

}  // namespace tl
