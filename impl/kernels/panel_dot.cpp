// A prompt's products with q8_0, q4_0 and q5_0 weights on AVX-512 with VNNI (AVX3_DL), sixteen weight
// rows at a time.  The one-row kernel (dot_rows.cpp) sums a block in eight int32 lanes of four
// products each and adds them, scaled, into eight f32 lanes, llama.cpp's order; for a prompt it
// costs ten instructions a block and row.  Here the sixteen rows' blocks are repacked once into
// a panel: for each block and each group of four weights s, one 64-byte vector holds those four
// weights of all sixteen rows (unsigned, offset by 128), and the block's sixteen scales follow.
// Each activation row then takes a vpdpbusd per group, its four activations broadcast to the
// sixteen rows, so a lane holds one row's sum of that group: the int32 lane the one-row kernel
// makes, scaled and added into accumulator s as it adds lane s.  Eight accumulators per row, added
// at the end as the one-row kernel adds its eight lanes: every output has the one-row kernel's
// bits (checked by test_quant), at a quarter of the instructions.
//
// q4_K, q5_K and q6_K the same way, their sums as llama.cpp's AVX2 kernels make them (lane l of
// eight: over the super block's runs of 32, each run's scale times the products of its weights
// 4l..4l+3, exact in int32): the panel holds each weight times its scale as int16, two a dword,
// and vpdpwssd multiplies a pair of them with a pair of activations (int16) broadcast to the
// sixteen rows; q4_K/q5_K's mins and q6_K's offset of 32 are panel vectors of their own.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/panel_dot.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/cache_control.h>
#include <hwy/highway.h>

#include <cstring>
#include <type_traits>

#include "kernels/byte_dot-inl.h"
#include "kernels/kquant_unpack-inl.h"

#include "kernels/quant.h"
#include "kernels/super_block.h"

HWY_BEFORE_NAMESPACE();
namespace tl {
namespace HWY_NAMESPACE {

#if HWY_TARGET == HWY_AVX3_DL
constexpr bool kPanels = true;
// One block of a panel: the eight groups' vectors, then the sixteen rows' scales.
constexpr size_t kGroupBytes = 4 * kPanelRows, kPanelBlockBytes = 8 * kGroupBytes + 4 * kPanelRows;
static_assert(kRows16Q4_0BlockBytes == 4 * kGroupBytes + 2 * kPanelRows &&
              kRows16Q8_0BlockBytes == 8 * kGroupBytes + 2 * kPanelRows, "pack_rows16's layouts");

// The panel of sixteen rows: per block, each group's 16 dwords gathered from the rows (q8_0's
// bytes, or q4_0's and q5_0's nibbles, with q5_0's fifth bits) as unsigned bytes w + 128, then
// the rows' f16 scales.
void PackPanel(tl_dtype dt, const uint8_t *rows, size_t row_bytes, int64_t k, uint8_t *panel) {
    const int64_t block_bytes = int64_t(dt == TL_Q8_0 ? kQ8Bytes : dt == TL_Q4_0 ? kQ4Bytes : kQ5Bytes);
    const __m512i row_at = _mm512_mullo_epi32(_mm512_set1_epi32(int32_t(row_bytes)),
                                              _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
    const __m512i low4 = _mm512_set1_epi8(0x0f), offset8 = _mm512_set1_epi8(-128);
    const __m512i offset4 = _mm512_set1_epi8(128 - 8), offset5 = _mm512_set1_epi8(128 - 16);
    for (int64_t b = 0; b < k / kQuantBlock; ++b) {
        const uint8_t *block0 = rows + b * block_bytes;
        uint8_t *out = panel + b * int64_t(kPanelBlockBytes);
        const __m512i high = dt == TL_Q5_0 ? _mm512_i32gather_epi32(row_at, block0 + 2, 1) : _mm512_setzero_si512();
        for (int g = 0; g < 8; ++g) {
            __m512i u;
            if (dt == TL_Q8_0) {
                u = _mm512_xor_si512(_mm512_i32gather_epi32(row_at, block0 + 2 + 4 * g, 1), offset8);
            } else {  // weights 4g..4g+3: the nibbles of qs[4(g % 4)..], low ones for g < 4
                const int64_t qs_at = dt == TL_Q4_0 ? 2 : 6;
                const __m512i qs = _mm512_i32gather_epi32(row_at, block0 + qs_at + 4 * (g % 4), 1);
                const __m512i nibbles = _mm512_and_si512(g < 4 ? qs : _mm512_srli_epi32(qs, 4), low4);
                if (dt == TL_Q4_0) {
                    u = _mm512_add_epi8(nibbles, offset4);
                } else {  // q5_0's fifth bits 4g..4g+3 of qh, bit t to bit 4 of byte t (the multiply puts
                          // bit t at 8t, without carries)
                    const __m512i bits = _mm512_and_si512(_mm512_srli_epi32(high, 4 * g), _mm512_set1_epi32(0xf));
                    const __m512i spread = _mm512_and_si512(_mm512_mullo_epi32(bits, _mm512_set1_epi32(0x00204081)),
                                                            _mm512_set1_epi32(0x01010101));
                    u = _mm512_add_epi8(_mm512_or_si512(nibbles, _mm512_slli_epi32(spread, 4)), offset5);
                }
            }
            _mm512_storeu_si512(out + g * kGroupBytes, u);
        }
        const __m512i halves = _mm512_i32gather_epi32(row_at, block0, 1);  // each row's f16 scale, low word
        _mm512_storeu_ps(out + 8 * kGroupBytes, _mm512_cvtph_ps(_mm512_cvtepi32_epi16(halves)));
    }
}

// acc += the unsigned bytes u times the four signed bytes at four, broadcast to every lane.
HWY_INLINE __m512i DotBroadcast(__m512i acc, __m512i u, const int8_t *four) {
    asm("vpdpbusd %2%{1to16%}, %1, %0" : "+v"(acc) : "v"(u), "m"(*reinterpret_cast<const int32_t *>(four)));
    return acc;
}

// A row's eight accumulators, sixteen weight rows each, added as llama.cpp's hsum_float_8 adds
// a one-row kernel's eight lanes: (l0 + l4, l1 + l5, l2 + l6, l3 + l7), then (t0 + t2) + (t1 + t3).
HWY_INLINE __m512 SumEight(const __m512 acc[8]) {
    const __m512 t0 = _mm512_add_ps(acc[0], acc[4]), t1 = _mm512_add_ps(acc[1], acc[5]);
    const __m512 t2 = _mm512_add_ps(acc[2], acc[6]), t3 = _mm512_add_ps(acc[3], acc[7]);
    return _mm512_add_ps(_mm512_add_ps(t0, t2), _mm512_add_ps(t1, t3));
}
// rows(r, R) over xrows activation rows two at a time (R = 2), the last one alone (R = 1).
template <class Rows>
HWY_INLINE void InPairs(int64_t xrows, Rows rows) {
    int64_t r = 0;
    for (; r + 2 <= xrows; r += 2) rows(r, std::integral_constant<int, 2>());
    if (r < xrows) rows(r, std::integral_constant<int, 1>());
}

// Decode reads a layout as one stream from DRAM, on 2 MiB pages, and its kernels fetch it kAhead
// bytes ahead themselves (part `part` of `parts` of a block's cache lines, into L1: into L2 was
// 1.1-1.4x slower): the prefetchers alone cost Zen 4 5-50% of a token's time, q5_K's the most;
// 4096 bytes ahead, 8192 for q6_K's 3360-byte blocks (7% faster at 1 thread, the same at 2; the
// others within 3% either way).  Figures in bench/README.md, "Fetching ahead".
template <size_t kBytes, int kParts, int64_t kAhead = 4096>
HWY_INLINE void FetchAhead(const uint8_t *block, int part) {
    constexpr int kLines = int((kBytes + 63) / 64);
    for (int j = part * kLines / kParts; j < (part + 1) * kLines / kParts; ++j) hwy::Prefetch(block + kAhead + 64 * j);
}

// Block b of a panel: its eight group vectors and the sixteen rows' scales.
struct FromPanel {
    const uint8_t *panel;
    HWY_INLINE void operator()(int64_t b, __m512i w[8], __m512 &dw) const {
        const uint8_t *pb = panel + b * int64_t(kPanelBlockBytes);
#pragma GCC unroll 8
        for (int s = 0; s < 8; ++s) w[s] = _mm512_loadu_si512(pb + s * kGroupBytes);
        dw = _mm512_loadu_ps(reinterpret_cast<const float *>(pb + 8 * kGroupBytes));
    }
};

// Sixteen rows' f16 values at p (a decode layout's scales), as f32.
HWY_INLINE __m512 RowHalves(const uint8_t *p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(p)));
}

// Block b of sixteen q4_0 rows laid out for decode (pack_rows16): four vectors of the rows' qs
// dwords, then their f16 scales.  A dword's low nibbles are group g's weights, its high ones group
// g + 4's: the panel's bytes, unpacked in registers from half the memory.
struct FromQ4_0Rows16 {
    const uint8_t *rows16;
    HWY_INLINE void operator()(int64_t b, __m512i w[8], __m512 &dw) const {
        const uint8_t *pb = rows16 + b * int64_t(kRows16Q4_0BlockBytes);
        FetchAhead<kRows16Q4_0BlockBytes, 1>(pb, 0);
        const __m512i low4 = _mm512_set1_epi8(0x0f), offset = _mm512_set1_epi8(128 - 8);
#pragma GCC unroll 4
        for (int g = 0; g < 4; ++g) {
            const __m512i qs = _mm512_loadu_si512(pb + g * kGroupBytes);
            w[g] = _mm512_add_epi8(_mm512_and_si512(qs, low4), offset);
            w[g + 4] = _mm512_add_epi8(_mm512_and_si512(_mm512_srli_epi32(qs, 4), low4), offset);
        }
        dw = RowHalves(pb + 4 * kGroupBytes);
    }
};

// Block b of sixteen q8_0 rows laid out for decode: the panel's eight group vectors (each row's
// bytes 4g..4g+3, offset to unsigned), then the rows' f16 scales.
struct FromQ8_0Rows16 {
    const uint8_t *rows16;
    HWY_INLINE void operator()(int64_t b, __m512i w[8], __m512 &dw) const {
        const uint8_t *pb = rows16 + b * int64_t(kRows16Q8_0BlockBytes);
        FetchAhead<kRows16Q8_0BlockBytes, 1>(pb, 0);
#pragma GCC unroll 8
        for (int g = 0; g < 8; ++g) w[g] = _mm512_loadu_si512(pb + g * kGroupBytes);
        dw = RowHalves(pb + 8 * kGroupBytes);
    }
};

// R activation rows against sixteen weight rows, block by block from blocks (FromPanel,
// FromQ4_0Rows16, FromQ8_0Rows16): out[i * out_stride + j] for row i, weight row j < 16.
template <int R, class Blocks>
HWY_INLINE void PanelRows(const Q8Activations *x, Blocks blocks, int64_t k, float *out, int64_t out_stride) {
    const int8_t *x8[R];
    const int32_t *starts[R];
    __m512 acc[R][8];
#pragma GCC unroll 2
    for (int i = 0; i < R; ++i) {
        const auto *q = reinterpret_cast<const uint8_t *>(x[i].q);
        x8[i] = reinterpret_cast<const int8_t *>(q), starts[i] = reinterpret_cast<const int32_t *>(q + kStartsQ8 * k);
#pragma GCC unroll 8
        for (int s = 0; s < 8; ++s) acc[i][s] = _mm512_setzero_ps();
    }
    for (int64_t b = 0; b < k / kQuantBlock; ++b) {
        __m512i w[8];
        __m512 dw;
        blocks(b, w, dw);
#pragma GCC unroll 2
        for (int i = 0; i < R; ++i) {
            const __m512 scale = _mm512_mul_ps(dw, _mm512_set1_ps(x[i].scale[b]));
#pragma GCC unroll 8
            for (int s = 0; s < 8; ++s) {
                const __m512i sum = DotBroadcast(_mm512_set1_epi32(starts[i][b * 8 + s]), w[s], x8[i] + b * kQuantBlock + 4 * s);
                acc[i][s] = _mm512_fmadd_ps(scale, _mm512_cvtepi32_ps(sum), acc[i][s]);
            }
        }
    }
#pragma GCC unroll 2
    for (int i = 0; i < R; ++i) _mm512_storeu_ps(out + i * out_stride, SumEight(acc[i]));
}

void DotPanel(const Q8Activations *x, int64_t xrows, const uint8_t *panel, int64_t k, float *out, int64_t out_stride) {
    InPairs(xrows, [&](int64_t r, auto m) {
        PanelRows<decltype(m)::value>(x + r, FromPanel{panel}, k, out + r * out_stride, out_stride);
    });
}

void DotRows16(tl_dtype dt, const Q8Activations *x, int64_t xrows, const uint8_t *rows16, int64_t k, float *out,
               int64_t out_stride) {
    InPairs(xrows, [&](int64_t r, auto m) {
        constexpr int R = decltype(m)::value;
        if (dt == TL_Q8_0)
            PanelRows<R>(x + r, FromQ8_0Rows16{rows16}, k, out + r * out_stride, out_stride);
        else
            PanelRows<R>(x + r, FromQ4_0Rows16{rows16}, k, out + r * out_stride, out_stride);
    });
}

// ---- q4_K's and q5_K's decode layouts -----------------------------------------------------------
// Lane l of the one-row q4_K/q5_K kernel (kquant_dot.cpp) is, per super block, the sum over runs c
// of scale_c x the products of weights 32c + 4l..4l+3, exact in int32; here one vector holds that
// lane for sixteen rows: vpdpbusd of the run's values with the four activations broadcast, times
// the rows' scales.  The f32 steps are the one-row kernel's, lane by lane: acc_l += (dx d) lane_l;
// q4_K's mins in four lanes apart, q5_K's as one integer a super block (ggml's orders), then
// hsum_float_8 and the mins' sum.  q5_K's layout adds the rows' qh dwords: value bit 4 of run c is
// bit c of the qh byte at the weight's place in its 32.
HWY_INLINE __m512 SumFour(const __m512 a[4]) { return _mm512_add_ps(_mm512_add_ps(a[0], a[2]), _mm512_add_ps(a[1], a[3])); }

HWY_INLINE __m512i RowBytes(const uint8_t *p) {  // sixteen rows' bytes at p, widened to dwords
    return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p)));
}

template <bool kFive>
void DotRows16KMin(const Q8KRow *x, int64_t xrows, const uint8_t *rows16, int64_t k, float *out, int64_t out_stride) {
    using L = Rows16KMin<kFive>;
    const __m512i low4 = _mm512_set1_epi8(0x0f), bit4 = _mm512_set1_epi8(0x10), zero = _mm512_setzero_si512();
    for (int64_t i = 0; i < xrows; ++i) {
        __m512 acc[8], acc_min[4];
#pragma GCC unroll 8
        for (int l = 0; l < 8; ++l) acc[l] = _mm512_setzero_ps();
#pragma GCC unroll 4
        for (int j = 0; j < 4; ++j) acc_min[j] = _mm512_setzero_ps();
        for (int64_t s = 0; s < k / kSuper; ++s) {
            const uint8_t *pb = rows16 + s * int64_t(L::kBlockBytes);
            const int8_t *xs = x[i].q + s * kSuper;
            // A pair of runs a step, not the super block unrolled whole: unrolled, GCC computed
            // the 64 products first and spilled them (bench/README.md, "Fetching ahead, and spills").
            __m512i lane[8];
#pragma GCC unroll 8
            for (int l = 0; l < 8; ++l) lane[l] = zero;
#pragma GCC unroll 1
            for (int c = 0; c < 8; c += 2) {  // runs c and c + 1: dword l holds weights 4l..4l+3 of each
                const __m512i scale0 = RowBytes(pb + L::kScales + c * kPanelRows);
                const __m512i scale1 = RowBytes(pb + L::kScales + (c + 1) * kPanelRows);
#pragma GCC unroll 8
                for (int l = 0; l < 8; ++l) {
                    const int v = 4 * c + l;
                    FetchAhead<L::kBlockBytes, 32>(pb, v);
                    const __m512i q = _mm512_loadu_si512(pb + v * kGroupBytes);
                    __m512i lo = _mm512_and_si512(q, low4), hi = _mm512_and_si512(_mm512_srli_epi32(q, 4), low4);
                    if (kFive) {
                        const __m512i qh = _mm512_loadu_si512(pb + L::kQh + l * kGroupBytes);
                        lo = _mm512_or_si512(lo, _mm512_and_si512(_mm512_slli_epi32(_mm512_srli_epi32(qh, c), 4), bit4));
                        hi = _mm512_or_si512(hi, _mm512_and_si512(_mm512_slli_epi32(_mm512_srli_epi32(qh, c + 1), 4), bit4));
                    }
                    lo = DotBroadcast(zero, lo, xs + 32 * c + 4 * l);
                    hi = DotBroadcast(zero, hi, xs + 32 * (c + 1) + 4 * l);
                    lane[l] = _mm512_add_epi32(lane[l], _mm512_add_epi32(_mm512_mullo_epi32(lo, scale0), _mm512_mullo_epi32(hi, scale1)));
                }
            }
            const __m512 d = RowHalves(pb + L::kHalves), dmin = RowHalves(pb + L::kHalves + 2 * kPanelRows);
            const float dx = x[i].scale[s];
            const __m512 dxd = _mm512_mul_ps(_mm512_set1_ps(dx), d), dxmin = _mm512_mul_ps(_mm512_set1_ps(-dx), dmin);
#pragma GCC unroll 8
            for (int l = 0; l < 8; ++l) acc[l] = _mm512_fmadd_ps(dxd, _mm512_cvtepi32_ps(lane[l]), acc[l]);
            const int16_t *sums = x[i].sums + s * 16;  // of each 16: a run's is two
            __m512i total = zero;                      // q5_K: every run's min x sum, one integer
#pragma GCC unroll 4
            for (int j = 0; j < 4; ++j) {
                const int32_t s0 = sums[4 * j] + sums[4 * j + 1], s1 = sums[4 * j + 2] + sums[4 * j + 3];
                const __m512i mins = _mm512_add_epi32(
                    _mm512_mullo_epi32(RowBytes(pb + L::kScales + (8 + 2 * j) * kPanelRows), _mm512_set1_epi32(s0)),
                    _mm512_mullo_epi32(RowBytes(pb + L::kScales + (9 + 2 * j) * kPanelRows), _mm512_set1_epi32(s1)));
                if (kFive) total = _mm512_add_epi32(total, mins);
                else acc_min[j] = _mm512_fmadd_ps(dxmin, _mm512_cvtepi32_ps(mins), acc_min[j]);
            }
            if (kFive) acc_min[0] = _mm512_fmadd_ps(dxmin, _mm512_cvtepi32_ps(total), acc_min[0]);
        }
        _mm512_storeu_ps(out + i * out_stride, _mm512_add_ps(SumEight(acc), kFive ? acc_min[0] : SumFour(acc_min)));
    }
}
void DotRows16Q4K(const Q8KRow *x, int64_t xrows, const uint8_t *rows16, int64_t k, float *out, int64_t out_stride) {
    DotRows16KMin<false>(x, xrows, rows16, k, out, out_stride);
}
void DotRows16Q5K(const Q8KRow *x, int64_t xrows, const uint8_t *rows16, int64_t k, float *out, int64_t out_stride) {
    DotRows16KMin<true>(x, xrows, rows16, k, out, out_stride);
}

// q6_K's decode layout: lane l of the one-row kernel is, per super block, the sum over runs v of
// the scale of the 16 holding weights 32v + 4l..4l+3 times their products (values 0..63), less 32 x
// (scale_2l x the activations' sum of 16 number 2l, and of 2l + 1), exact in int32; the sixteen
// rows' values are unpacked from their ql and qh dwords as UnpackQ6KValues does, a dword a row.
constexpr size_t kRows16Q6KScales = 48 * kGroupBytes, kRows16Q6KHalves = kRows16Q6KScales + 16 * kPanelRows;
static_assert(kRows16Q6KBlockBytes == kRows16Q6KHalves + 2 * kPanelRows, "pack_rows16's q6_K layout");

void DotRows16Q6K(const Q8KRow *x, int64_t xrows, const uint8_t *rows16, int64_t k, float *out, int64_t out_stride) {
    const __m512i low4 = _mm512_set1_epi8(0x0f), three = _mm512_set1_epi8(0x03), zero = _mm512_setzero_si512();
    for (int64_t i = 0; i < xrows; ++i) {
        __m512 acc[8];
#pragma GCC unroll 8
        for (int l = 0; l < 8; ++l) acc[l] = _mm512_setzero_ps();
        for (int64_t s = 0; s < k / kSuper; ++s) {
            const uint8_t *pb = rows16 + s * int64_t(kRows16Q6KBlockBytes);
            const int8_t *xs = x[i].q + s * kSuper;
            // A ql dword of a half a step, two runs: its low nibbles run 4h + p, its high ones run
            // 4h + p + 2 (each with two of the qh dword's bits), the scales read where used (as in
            // q4_K's kernel: unrolled whole, the products spilled).
            const auto scale = [&](int g) {
                return _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i *>(pb + kRows16Q6KScales + g * kPanelRows)));
            };
            __m512i lane[8];
#pragma GCC unroll 8
            for (int l = 0; l < 8; ++l) lane[l] = zero;
#pragma GCC unroll 1
            for (int q = 0; q < 4; ++q) {
                const int h = q / 2, p = q % 2, v0 = 4 * h + p, v1 = v0 + 2;
                const __m128i shift = _mm_cvtsi32_si128(2 * p);
                const __m512i scale0_low = scale(2 * v0), scale0_high = scale(2 * v0 + 1);  // lanes 0-3, 4-7
                const __m512i scale1_low = scale(2 * v1), scale1_high = scale(2 * v1 + 1);
#pragma GCC unroll 8
                for (int l = 0; l < 8; ++l) {
                    const uint8_t *at = pb + (h * 8 + l) * 3 * kGroupBytes;
                    FetchAhead<kRows16Q6KBlockBytes, 32, 8192>(pb, 8 * q + l);
                    const __m512i ql = _mm512_loadu_si512(at + p * kGroupBytes);
                    const __m512i qh = _mm512_srl_epi32(_mm512_loadu_si512(at + 2 * kGroupBytes), shift);
                    const __m512i w0 = _mm512_or_si512(_mm512_and_si512(ql, low4), _mm512_slli_epi32(_mm512_and_si512(qh, three), 4));
                    const __m512i w1 = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi32(ql, 4), low4),
                                                       _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(qh, 4), three), 4));
                    const __m512i p0 = DotBroadcast(zero, w0, xs + 32 * v0 + 4 * l), p1 = DotBroadcast(zero, w1, xs + 32 * v1 + 4 * l);
                    lane[l] = _mm512_add_epi32(lane[l], _mm512_add_epi32(_mm512_mullo_epi32(p0, l >= 4 ? scale0_high : scale0_low),
                                                                         _mm512_mullo_epi32(p1, l >= 4 ? scale1_high : scale1_low)));
                }
            }
            const int16_t *sums = x[i].sums + s * 16;
            const __m512 d = RowHalves(pb + kRows16Q6KHalves);
            const __m512 dxd = _mm512_mul_ps(_mm512_set1_ps(x[i].scale[s]), d);
#pragma GCC unroll 8
            for (int l = 0; l < 8; ++l) {
                const __m512i offset = _mm512_add_epi32(_mm512_mullo_epi32(scale(2 * l), _mm512_set1_epi32(sums[2 * l])),
                                                        _mm512_mullo_epi32(scale(2 * l + 1), _mm512_set1_epi32(sums[2 * l + 1])));
                acc[l] = _mm512_fmadd_ps(dxd, _mm512_cvtepi32_ps(_mm512_sub_epi32(lane[l], _mm512_slli_epi32(offset, 5))), acc[l]);
            }
        }
        _mm512_storeu_ps(out + i * out_stride, SumEight(acc));
    }
}

// ---- q4_K, q5_K, q6_K ----------------------------------------------------------------------
// A super block of a K panel: 128 vectors of weight pairs (run q, lane l, pair p at (8q + l) * 2 +
// p), then up to 8 vectors (q4_K/q5_K: the mins' pairs m; q6_K: the scales' pairs of lane l),
// then the rows' d and dmin.
constexpr size_t kPairVectors = 128, kExtraVectors = 8;
constexpr size_t kKBlockBytes = (kPairVectors + kExtraVectors + 2) * kGroupBytes;

HWY_INLINE uint32_t Pair(int32_t lo, int32_t hi) { return uint32_t(uint16_t(lo)) | uint32_t(uint16_t(hi)) << 16; }

// Sixteen vectors of sixteen dwords transposed in place: v[r] lane c <-> v[c] lane r.  Within
// each 128-bit lane b first (two unpack stages: u[4i + w] lane b = column 4b + w, rows 4i..4i+3),
// then the lanes gathered across vectors (two 128-bit shuffle stages).
HWY_INLINE void Transpose16(__m512i v[16]) {
    __m512i t[16], u[16];
#pragma GCC unroll 8
    for (int i = 0; i < 16; i += 2) t[i] = _mm512_unpacklo_epi32(v[i], v[i + 1]), t[i + 1] = _mm512_unpackhi_epi32(v[i], v[i + 1]);
#pragma GCC unroll 4
    for (int i = 0; i < 16; i += 4) {
        u[i] = _mm512_unpacklo_epi64(t[i], t[i + 2]), u[i + 1] = _mm512_unpackhi_epi64(t[i], t[i + 2]);
        u[i + 2] = _mm512_unpacklo_epi64(t[i + 1], t[i + 3]), u[i + 3] = _mm512_unpackhi_epi64(t[i + 1], t[i + 3]);
    }
#pragma GCC unroll 4
    for (int w = 0; w < 4; ++w) {
        const __m512i x = _mm512_shuffle_i32x4(u[w], u[4 + w], 0x88), y = _mm512_shuffle_i32x4(u[w], u[4 + w], 0xdd);
        const __m512i x2 = _mm512_shuffle_i32x4(u[8 + w], u[12 + w], 0x88), y2 = _mm512_shuffle_i32x4(u[8 + w], u[12 + w], 0xdd);
        v[w] = _mm512_shuffle_i32x4(x, x2, 0x88), v[8 + w] = _mm512_shuffle_i32x4(x, x2, 0xdd);
        v[4 + w] = _mm512_shuffle_i32x4(y, y2, 0x88), v[12 + w] = _mm512_shuffle_i32x4(y, y2, 0xdd);
    }
}

void PackPanelK(tl_dtype dt, const uint8_t *rows, size_t row_bytes, int64_t k, uint8_t *panel) {
    const int64_t block_bytes = int64_t(dt == TL_Q4_K ? kQ4KBytes : dt == TL_Q5_K ? kQ5KBytes : kQ6KBytes);
    for (int64_t sb = 0; sb < k / kSuper; ++sb) {
        uint8_t *out = panel + sb * int64_t(kKBlockBytes);
        uint32_t *vec = reinterpret_cast<uint32_t *>(out);
        float *d = reinterpret_cast<float *>(out + (kPairVectors + kExtraVectors) * kGroupBytes), *dmin = d + kPanelRows;
        // products[j][r]: row j's int16 weight x scale for values 32r..32r+31, sixteen dwords (pairs)
        __m512i products[8][16];
        for (int64_t j = 0; j < kPanelRows; ++j) {
            const uint8_t *block = rows + j * int64_t(row_bytes) + sb * block_bytes;
            __m256i w[8];
            int16_t scales[16], mins[8];
            if (dt == TL_Q6_K) {
                UnpackQ6KValues(block, w);
                for (int g = 0; g < 16; ++g) scales[g] = reinterpret_cast<const int8_t *>(block + 192)[g];
                d[j] = load_half(block + 208), dmin[j] = 0;
            } else {
                UnpackKMinValues(dt == TL_Q5_K, block, w);
                uint8_t scales_mins[16];
                unpack_scales_mins(block + 4, scales_mins);
                for (int c = 0; c < 8; ++c) scales[2 * c] = scales[2 * c + 1] = scales_mins[c], mins[c] = scales_mins[8 + c];
                d[j] = load_half(block), dmin[j] = load_half(block + 2);
            }
#pragma GCC unroll 8
            for (int r = 0; r < 8; ++r) {
                const __m512i scale = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set1_epi16(scales[2 * r])),
                                                         _mm256_set1_epi16(scales[2 * r + 1]), 1);
                products[r][j] = _mm512_mullo_epi16(_mm512_cvtepu8_epi16(w[r]), scale);
            }
            for (int e = 0; e < (dt == TL_Q6_K ? 8 : 4); ++e)
                vec[(kPairVectors + e) * kPanelRows + j] =
                    dt == TL_Q6_K ? Pair(scales[2 * e], scales[2 * e + 1]) : Pair(mins[2 * e], mins[2 * e + 1]);
        }
        for (int r = 0; r < 8; ++r) {  // pairs 16r..16r+15 of the sixteen rows: vector 16r + c, row j at lane j
            Transpose16(products[r]);
            for (int c = 0; c < 16; ++c) _mm512_storeu_si512(out + (16 * r + c) * kGroupBytes, products[r][c]);
        }
    }
}

// acc += the int16 pairs w times the pair at two, broadcast to every lane.
HWY_INLINE __m512i DotPairs(__m512i acc, __m512i w, const int16_t *two) {
    asm("vpdpwssd %2%{1to16%}, %1, %0" : "+v"(acc) : "v"(w), "m"(*reinterpret_cast<const int32_t *>(two)));
    return acc;
}

// R activation rows against a K panel: the scaled products a pair of lanes at a time over every
// super block (each lane's f32 sum adds the super blocks in order, as the one-row kernel's, and
// a pass holds only its two lanes' accumulators, so four activation rows share each load of a
// weight vector), then the mins in a pass of their own.
template <int R>
HWY_INLINE void PanelRowsK(tl_dtype dt, const Q8KPanelRow *x, const uint8_t *panel, int64_t k, float *out,
                           int64_t out_stride) {
    constexpr int P = R < 4 ? 2 : 1;  // independent chains a lane and row: eight in all, or four for one row
    HWY_ALIGN float lanes[R][8][kPanelRows];
    for (int l = 0; l < 8; l += 2) {  // lanes l and l + 1
        __m512 acc[R][2];
#pragma GCC unroll 4
        for (int i = 0; i < R; ++i) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
        for (int64_t sb = 0; sb < k / kSuper; ++sb) {
            const uint8_t *pb = panel + sb * int64_t(kKBlockBytes);
            const __m512 d = _mm512_loadu_ps(reinterpret_cast<const float *>(pb + (kPairVectors + kExtraVectors) * kGroupBytes));
            __m512i sum[R][2][P];
#pragma GCC unroll 4
            for (int i = 0; i < R; ++i)
#pragma GCC unroll 2
                for (int e = 0; e < 2; ++e)
#pragma GCC unroll 2
                    for (int c = 0; c < P; ++c) sum[i][e][c] = _mm512_setzero_si512();
#pragma GCC unroll 8
            for (int q = 0; q < 8; ++q)
#pragma GCC unroll 2
                for (int e = 0; e < 2; ++e)
#pragma GCC unroll 2
                    for (int p = 0; p < 2; ++p) {
                        const __m512i w = _mm512_loadu_si512(pb + ((8 * q + l + e) * 2 + p) * kGroupBytes);
#pragma GCC unroll 4
                        for (int i = 0; i < R; ++i)
                            sum[i][e][p % P] = DotPairs(sum[i][e][p % P], w, x[i].wide + sb * kSuper + 32 * q + 4 * (l + e) + 2 * p);
                    }
#pragma GCC unroll 4
            for (int i = 0; i < R; ++i)
#pragma GCC unroll 2
                for (int e = 0; e < 2; ++e) {
                    __m512i total = P == 2 ? _mm512_add_epi32(sum[i][e][0], sum[i][e][P - 1]) : sum[i][e][0];
                    if (dt == TL_Q6_K) {  // 32 x (the scales' pair of lane l . the activations' sums of 16 2l, 2l + 1)
                        const __m512i pairs = _mm512_loadu_si512(pb + (kPairVectors + l + e) * kGroupBytes);
                        const __m512i offset = DotPairs(_mm512_setzero_si512(), pairs, x[i].row.sums + sb * 16 + 2 * (l + e));
                        total = _mm512_sub_epi32(total, _mm512_slli_epi32(offset, 5));
                    }
                    const __m512 scale = _mm512_mul_ps(d, _mm512_set1_ps(x[i].row.scale[sb]));
                    acc[i][e] = _mm512_fmadd_ps(scale, _mm512_cvtepi32_ps(total), acc[i][e]);
                }
        }
#pragma GCC unroll 4
        for (int i = 0; i < R; ++i) _mm512_store_ps(lanes[i][l], acc[i][0]), _mm512_store_ps(lanes[i][l + 1], acc[i][1]);
    }
    __m512 mins[R][4];  // q4_K: four lanes as llama.cpp's; q5_K: one total, in mins[i][0]
#pragma GCC unroll 4
    for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
        for (int m = 0; m < 4; ++m) mins[i][m] = _mm512_setzero_ps();
    for (int64_t sb = 0; dt != TL_Q6_K && sb < k / kSuper; ++sb) {
        const uint8_t *pb = panel + sb * int64_t(kKBlockBytes);
        const __m512 dmin = _mm512_loadu_ps(
            reinterpret_cast<const float *>(pb + (kPairVectors + kExtraVectors) * kGroupBytes) + kPanelRows);
#pragma GCC unroll 4
        for (int i = 0; i < R; ++i) {
            const __m512 row_dmin = _mm512_mul_ps(dmin, _mm512_set1_ps(-x[i].row.scale[sb]));
            const int16_t *sums32 = x[i].wide + k + sb * 8;
            __m512i total = _mm512_setzero_si512();
#pragma GCC unroll 4
            for (int m = 0; m < 4; ++m) {
                const __m512i pairs = _mm512_loadu_si512(pb + (kPairVectors + m) * kGroupBytes);
                const __m512i products = DotPairs(_mm512_setzero_si512(), pairs, sums32 + 2 * m);
                if (dt == TL_Q4_K) mins[i][m] = _mm512_fmadd_ps(row_dmin, _mm512_cvtepi32_ps(products), mins[i][m]);
                total = _mm512_add_epi32(total, products);
            }
            if (dt == TL_Q5_K) mins[i][0] = _mm512_fmadd_ps(row_dmin, _mm512_cvtepi32_ps(total), mins[i][0]);
        }
    }
#pragma GCC unroll 4
    for (int i = 0; i < R; ++i) {  // hsum_float_8, then the mins: q4_K's four lanes as (m0 + m2) + (m1 + m3)
        __m512 acc[8];
#pragma GCC unroll 8
        for (int l = 0; l < 8; ++l) acc[l] = _mm512_load_ps(lanes[i][l]);
        __m512 all = SumEight(acc);
        if (dt == TL_Q4_K)
            all = _mm512_add_ps(all, _mm512_add_ps(_mm512_add_ps(mins[i][0], mins[i][2]), _mm512_add_ps(mins[i][1], mins[i][3])));
        if (dt == TL_Q5_K) all = _mm512_add_ps(all, mins[i][0]);
        _mm512_storeu_ps(out + i * out_stride, all);
    }
}

void DotPanelK(tl_dtype dt, const Q8KPanelRow *x, int64_t xrows, const uint8_t *panel, int64_t k, float *out,
               int64_t out_stride) {
    int64_t r = 0;
    for (; r + 4 <= xrows; r += 4) PanelRowsK<4>(dt, x + r, panel, k, out + r * out_stride, out_stride);
    InPairs(xrows - r, [&](int64_t at, auto m) {
        PanelRowsK<decltype(m)::value>(dt, x + r + at, panel, k, out + (r + at) * out_stride, out_stride);
    });
}
#else
constexpr bool kPanels = false;
void PackPanelK(tl_dtype, const uint8_t *, size_t, int64_t, uint8_t *) {}
void DotPanelK(tl_dtype, const Q8KPanelRow *, int64_t, const uint8_t *, int64_t, float *, int64_t) {}
void PackPanel(tl_dtype, const uint8_t *, size_t, int64_t, uint8_t *) {}
void DotPanel(const Q8Activations *, int64_t, const uint8_t *, int64_t, float *, int64_t) {}
void DotRows16(tl_dtype, const Q8Activations *, int64_t, const uint8_t *, int64_t, float *, int64_t) {}
void DotRows16Q4K(const Q8KRow *, int64_t, const uint8_t *, int64_t, float *, int64_t) {}
void DotRows16Q5K(const Q8KRow *, int64_t, const uint8_t *, int64_t, float *, int64_t) {}
void DotRows16Q6K(const Q8KRow *, int64_t, const uint8_t *, int64_t, float *, int64_t) {}
#endif

bool Panels() { return kPanels; }

}  // namespace HWY_NAMESPACE
}  // namespace tl
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tl {

HWY_EXPORT(Panels);
HWY_EXPORT(PackPanel);
HWY_EXPORT(DotPanel);
HWY_EXPORT(PackPanelK);
HWY_EXPORT(DotPanelK);
HWY_EXPORT(DotRows16);
HWY_EXPORT(DotRows16Q4K);
HWY_EXPORT(DotRows16Q5K);
HWY_EXPORT(DotRows16Q6K);

namespace {
bool super_blocks(tl_dtype dt) { return dt == TL_Q4_K || dt == TL_Q5_K || dt == TL_Q6_K; }
}  // namespace

bool panel_kernel(tl_dtype dt) {
    return (dt == TL_Q8_0 || dt == TL_Q4_0 || dt == TL_Q5_0 || super_blocks(dt)) && HWY_DYNAMIC_DISPATCH(Panels)();
}

size_t panel_bytes(tl_dtype dt, int64_t k) {
    return super_blocks(dt) ? size_t(k / kSuper) * (128 + 8 + 2) * 4 * kPanelRows
                            : size_t(k / kQuantBlock) * (8 * 4 * kPanelRows + 4 * kPanelRows);
}

void pack_panel(tl_dtype dt, const std::byte *rows, size_t row_bytes, int64_t k, std::byte *panel) {
    const auto *r = reinterpret_cast<const uint8_t *>(rows);
    auto *p = reinterpret_cast<uint8_t *>(panel);
    if (super_blocks(dt)) return HWY_DYNAMIC_DISPATCH(PackPanelK)(dt, r, row_bytes, k, p);
    HWY_DYNAMIC_DISPATCH(PackPanel)(dt, r, row_bytes, k, p);
}

bool rows16_kernel(tl_dtype dt) {
    return (dt == TL_Q4_0 || dt == TL_Q8_0 || dt == TL_Q4_K || dt == TL_Q5_K || dt == TL_Q6_K) && HWY_DYNAMIC_DISPATCH(Panels)();
}

size_t rows16_bytes(tl_dtype dt, int64_t k) {
    if (dt == TL_Q4_K) return size_t(k / kSuper) * kRows16Q4KBlockBytes;
    if (dt == TL_Q5_K) return size_t(k / kSuper) * kRows16Q5KBlockBytes;
    if (dt == TL_Q6_K) return size_t(k / kSuper) * kRows16Q6KBlockBytes;
    return size_t(k / kQuantBlock) * (dt == TL_Q8_0 ? kRows16Q8_0BlockBytes : kRows16Q4_0BlockBytes);
}

namespace {
// q4_K and q5_K: per super block the rows' qs dwords side by side, (q5_K: their qh dwords,) their
// unpacked scales and mins by run, their d and dmin.
template <bool kFive>
void pack_rows16_kmin(const std::byte *rows, size_t row_bytes, int64_t k, std::byte *out) {
    using L = Rows16KMin<kFive>;
    constexpr size_t kScales = L::kScales, kHalves = L::kHalves;
    for (int64_t s = 0; s < k / kSuper; ++s) {
        std::byte *o = out + size_t(s) * L::kBlockBytes;
        for (int64_t r = 0; r < kPanelRows; ++r) {
            const std::byte *block = rows + size_t(r) * row_bytes + size_t(s) * (kFive ? kQ5KBytes : kQ4KBytes);
            for (int v = 0; v < 32; ++v) std::memcpy(o + v * 4 * kPanelRows + 4 * r, block + (kFive ? 48 : 16) + 4 * v, 4);
            for (int l = 0; kFive && l < 8; ++l) std::memcpy(o + L::kQh + l * 4 * kPanelRows + 4 * r, block + 16 + 4 * l, 4);
            uint8_t scales_mins[16];
            unpack_scales_mins(reinterpret_cast<const uint8_t *>(block) + 4, scales_mins);
            for (int c = 0; c < 16; ++c) o[kScales + size_t(c) * kPanelRows + size_t(r)] = std::byte{scales_mins[c]};
            std::memcpy(o + kHalves + 2 * r, block, 2);                   // d
            std::memcpy(o + kHalves + 2 * kPanelRows + 2 * r, block + 2, 2);  // dmin
        }
    }
}
// q6_K: per super block, for each half h and dword l, the rows' ql dwords l of its two 32s and their
// qh dword, side by side; their 16 scales by group; their d.
void pack_rows16_q6k(const std::byte *rows, size_t row_bytes, int64_t k, std::byte *out) {
    constexpr size_t kScales = 48 * 4 * kPanelRows, kHalves = kScales + 16 * kPanelRows;
    for (int64_t s = 0; s < k / kSuper; ++s) {
        std::byte *o = out + size_t(s) * kRows16Q6KBlockBytes;
        for (int64_t r = 0; r < kPanelRows; ++r) {
            const std::byte *block = rows + size_t(r) * row_bytes + size_t(s) * kQ6KBytes;
            for (int h = 0; h < 2; ++h)
                for (int l = 0; l < 8; ++l) {
                    std::byte *at = o + size_t((h * 8 + l) * 3) * 4 * kPanelRows + 4 * r;
                    std::memcpy(at, block + 64 * h + 4 * l, 4);                          // ql, first 32
                    std::memcpy(at + 4 * kPanelRows, block + 64 * h + 32 + 4 * l, 4);    // ql, second 32
                    std::memcpy(at + 8 * kPanelRows, block + 128 + 32 * h + 4 * l, 4);   // qh
                }
            for (int g = 0; g < 16; ++g) o[kScales + size_t(g) * kPanelRows + size_t(r)] = block[192 + g];
            std::memcpy(o + kHalves + 2 * r, block + 208, 2);
        }
    }
}
}  // namespace

void pack_rows16(tl_dtype dt, const std::byte *rows, size_t row_bytes, int64_t k, std::byte *out) {
    if (dt == TL_Q4_K) return pack_rows16_kmin<false>(rows, row_bytes, k, out);
    if (dt == TL_Q5_K) return pack_rows16_kmin<true>(rows, row_bytes, k, out);
    if (dt == TL_Q6_K) return pack_rows16_q6k(rows, row_bytes, k, out);
    const bool q8 = dt == TL_Q8_0;
    const size_t block_bytes = q8 ? kQ8Bytes : kQ4Bytes;
    const int groups = q8 ? 8 : 4;  // dwords of qs a block
    for (int64_t b = 0; b < k / kQuantBlock; ++b) {
        std::byte *o = out + size_t(b) * (q8 ? kRows16Q8_0BlockBytes : kRows16Q4_0BlockBytes);
        for (int64_t r = 0; r < kPanelRows; ++r) {
            const std::byte *block = rows + size_t(r) * row_bytes + size_t(b) * block_bytes;
            for (int g = 0; g < groups; ++g) {
                std::byte *to = o + g * 4 * kPanelRows + 4 * r;
                std::memcpy(to, block + 2 + 4 * g, 4);
                if (q8)  // signed to unsigned bytes, offset by 128, as vpdpbusd takes them
                    for (int i = 0; i < 4; ++i) to[i] ^= std::byte{0x80};
            }
            std::memcpy(o + groups * 4 * kPanelRows + 2 * r, block, 2);
        }
    }
}

void dot_rows16_q8k(tl_dtype dt, const Q8KRow *x, int64_t xrows, const std::byte *rows16, int64_t k, float *out,
                    int64_t out_stride) {
    const auto *r = reinterpret_cast<const uint8_t *>(rows16);
    if (dt == TL_Q6_K) return HWY_DYNAMIC_DISPATCH(DotRows16Q6K)(x, xrows, r, k, out, out_stride);
    if (dt == TL_Q5_K) return HWY_DYNAMIC_DISPATCH(DotRows16Q5K)(x, xrows, r, k, out, out_stride);
    HWY_DYNAMIC_DISPATCH(DotRows16Q4K)(x, xrows, r, k, out, out_stride);
}

void dot_rows16(tl_dtype dt, const Q8Activations *x, int64_t xrows, const std::byte *rows16, int64_t k, float *out,
                int64_t out_stride) {
    HWY_DYNAMIC_DISPATCH(DotRows16)(dt, x, xrows, reinterpret_cast<const uint8_t *>(rows16), k, out, out_stride);
}

void widen_q8k(const Q8KRow &x, int64_t n, int16_t *out) {
    for (int64_t i = 0; i < n; ++i) out[i] = x.q[i];
    for (int64_t j = 0; j < n / 32; ++j) out[n + j] = int16_t(x.sums[2 * j] + x.sums[2 * j + 1]);
}

void dot_panel_q8k(tl_dtype dt, const Q8KPanelRow *x, int64_t xrows, const std::byte *panel, int64_t k, float *out,
                   int64_t out_stride) {
    HWY_DYNAMIC_DISPATCH(DotPanelK)(dt, x, xrows, reinterpret_cast<const uint8_t *>(panel), k, out, out_stride);
}

void dot_panel(const Q8Activations *x, int64_t xrows, const std::byte *panel, int64_t k, float *out, int64_t out_stride) {
    HWY_DYNAMIC_DISPATCH(DotPanel)(x, xrows, reinterpret_cast<const uint8_t *>(panel), k, out, out_stride);
}

}  // namespace tl
#endif
