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
#define HWY_WANT_AVX3_DL
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/panel_dot.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include "kernels/byte_dot-inl.h"

#include "kernels/quant.h"

HWY_BEFORE_NAMESPACE();
namespace tl {
namespace HWY_NAMESPACE {

#if HWY_TARGET == HWY_AVX3_DL
constexpr bool kPanels = true;
// One block of a panel: the eight groups' vectors, then the sixteen rows' scales.
constexpr size_t kGroupBytes = 4 * kPanelRows, kPanelBlockBytes = 8 * kGroupBytes + 4 * kPanelRows;

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

// R activation rows against a panel: out[i * out_stride + j] for row i, weight row j < 16.
template <int R>
HWY_INLINE void PanelRows(const Q8Activations *x, const uint8_t *panel, int64_t k, float *out, int64_t out_stride) {
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
        const uint8_t *pb = panel + b * int64_t(kPanelBlockBytes);
        __m512i w[8];
#pragma GCC unroll 8
        for (int s = 0; s < 8; ++s) w[s] = _mm512_loadu_si512(pb + s * kGroupBytes);
        const __m512 dw = _mm512_loadu_ps(reinterpret_cast<const float *>(pb + 8 * kGroupBytes));
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
    for (int i = 0; i < R; ++i) {  // as hsum_float_8: (l0 + l4, l1 + l5, l2 + l6, l3 + l7), then (t0 + t2) + (t1 + t3)
        const __m512 t0 = _mm512_add_ps(acc[i][0], acc[i][4]), t1 = _mm512_add_ps(acc[i][1], acc[i][5]);
        const __m512 t2 = _mm512_add_ps(acc[i][2], acc[i][6]), t3 = _mm512_add_ps(acc[i][3], acc[i][7]);
        _mm512_storeu_ps(out + i * out_stride, _mm512_add_ps(_mm512_add_ps(t0, t2), _mm512_add_ps(t1, t3)));
    }
}

void DotPanel(const Q8Activations *x, int64_t xrows, const uint8_t *panel, int64_t k, float *out, int64_t out_stride) {
    int64_t r = 0;
    for (; r + 2 <= xrows; r += 2) PanelRows<2>(x + r, panel, k, out + r * out_stride, out_stride);
    if (r < xrows) PanelRows<1>(x + r, panel, k, out + r * out_stride, out_stride);
}
#else
constexpr bool kPanels = false;
void PackPanel(tl_dtype, const uint8_t *, size_t, int64_t, uint8_t *) {}
void DotPanel(const Q8Activations *, int64_t, const uint8_t *, int64_t, float *, int64_t) {}
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

bool panel_kernel(tl_dtype dt) {
    return (dt == TL_Q8_0 || dt == TL_Q4_0 || dt == TL_Q5_0) && HWY_DYNAMIC_DISPATCH(Panels)();
}

void pack_panel(tl_dtype dt, const std::byte *rows, size_t row_bytes, int64_t k, std::byte *panel) {
    HWY_DYNAMIC_DISPATCH(PackPanel)(dt, reinterpret_cast<const uint8_t *>(rows), row_bytes, k,
                                    reinterpret_cast<uint8_t *>(panel));
}

void dot_panel(const Q8Activations *x, int64_t xrows, const std::byte *panel, int64_t k, float *out, int64_t out_stride) {
    HWY_DYNAMIC_DISPATCH(DotPanel)(x, xrows, reinterpret_cast<const uint8_t *>(panel), k, out, out_stride);
}

}  // namespace tl
#endif
