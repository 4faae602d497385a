// The dot products of activation rows with q4_K, q5_K and q6_K weights, in integers as ggml
// computes them: each activation row quantized once to q8_K (per 256 values one f32 scale, int8
// values and the sums of each 16), each super block's products summed exactly in int32 and
// weighted by its 6- or 8-bit sub-block scales, then scaled once by the two f32 scales.  The
// weights are read where they lie; nothing of them is decoded to float.
// Two ways, by target: on x86 with AVX2 (Highway's AVX2, AVX3 and AVX3_DL targets) 32 weights a
// step unpacked in registers and multiplied by vpmaddubsw, the sub-block scales applied by
// vpmaddwd, as llama.cpp's AVX2 kernels do it (Highway 1.0.3 has neither op: intrinsics; 256-bit
// vectors, which Zen 4 runs as fast as its double-pumped 512-bit ones, measured); on every other
// target a super block's values unpacked to bytes first, then int16 pairs (MulPairs).  The order of every addition
// depends on n and the target alone, as for dot_rows.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/kquant_dot.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include "kernels/kquant_unpack-inl.h"
#include "kernels/widen-inl.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/quant.h"
#include "kernels/super_block.h"


HWY_BEFORE_NAMESPACE();
namespace tl {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
// A block's f16 scale by F16C (exact, as the table lookup elsewhere).
HWY_INLINE float HalfAt(const uint8_t *p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return _cvtsh_ss(h);
}
// 32 unsigned weights (0..63) times 32 activations in pairs (vpmaddubsw), each pair times its
// int16 scale and summed in pairs (vpmaddwd): eight int32 lanes, lane i the products of bytes
// 4i..4i+3, as llama.cpp's AVX2 kernels keep them, so the f32 sums round as theirs do.
HWY_INLINE __m256i ScaledProducts(__m256i weights, const int8_t *x, __m256i scales) {
    return _mm256_madd_epi16(scales, _mm256_maddubs_epi16(weights, _mm256_loadu_si256(reinterpret_cast<const __m256i *>(x))));
}
// vpshufb indices that spread word w of each 128-bit half over the half, and bytes 2v and 2v + 1
// of 16 over 8 each.
HWY_INLINE __m256i WordIndex(int w) { return _mm256_set1_epi16(int16_t((2 * w + 1) << 8 | 2 * w)); }
HWY_INLINE __m128i PairIndex(int v) { return _mm_set_epi64x(0x0101010101010101LL * (2 * v + 1), 0x0101010101010101LL * (2 * v)); }
// unpack_scales_mins in four lanes: the 8 scales then the 8 mins, widened to words.  The 16
// bytes read at packed run 4 past the 12 (into the block's nibbles).
HWY_INLINE __m256i ScalesMins(const uint8_t *packed) {
    const __m128i w = _mm_loadu_si128(reinterpret_cast<const __m128i *>(packed));  // w0 w1 w2 -
    const __m128i a = _mm_shuffle_epi32(w, _MM_SHUFFLE(2, 1, 2, 0));                 // w0 w2 w1 w2
    const __m128i b = _mm_shuffle_epi32(w, _MM_SHUFFLE(1, 1, 0, 0));                 // w0 w0 w1 w1
    const __m128i low = _mm_and_si128(_mm_srlv_epi32(a, _mm_setr_epi32(0, 0, 0, 4)),
                                      _mm_setr_epi32(0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f));
    const __m128i top = _mm_and_si128(_mm_srli_epi32(b, 6), _mm_setr_epi32(0, 0x03030303, 0, 0x03030303));
    return _mm256_cvtepu8_epi16(_mm_or_si128(low, _mm_slli_epi32(top, 4)));
}
// Four lanes, then eight, added in llama.cpp's order (hsum_float_8).
HWY_INLINE float SumLanes(__m128 v) {
    v = _mm_add_ps(v, _mm_movehl_ps(v, v));
    return _mm_cvtss_f32(_mm_add_ss(v, _mm_movehdup_ps(v)));
}
HWY_INLINE float SumLanes(__m256 v) { return SumLanes(_mm_add_ps(_mm256_extractf128_ps(v, 1), _mm256_castps256_ps128(v))); }

// Up to kRowGroup activation rows a pass (ByRowGroups): a block's weights are unpacked once into
// registers and dotted with each row, each row's sums the same operations as alone (a prompt's
// rows give the bits of one token at a time).

// q4_K and q5_K: per 64 weights (two sub-blocks of 32) the 32 bytes of nibbles, low nibbles the
// first sub-block and high the second, plus for q5_K a fifth bit from qh (bits 2c and 2c + 1).
// The mins against the activations' sums of each 32: four f32 lanes for q4_K, one integer for
// q5_K, as llama.cpp adds them.
template <bool kFive, int M>
void DotKMinRows(const Q8KRow *HWY_RESTRICT x, const uint8_t *HWY_RESTRICT base, size_t row_bytes, int64_t nrows,
                 int64_t n, float *HWY_RESTRICT out, int64_t out_stride) {
    constexpr size_t kBytes = kFive ? kQ5KBytes : kQ4KBytes;
    for (int64_t r = 0; r < nrows; ++r) {
        const uint8_t *row = base + r * row_bytes;
        __m256 acc[M];
        __m128 acc_min[M];
        float mins_total[M];
#pragma GCC unroll 4
        for (int i = 0; i < M; ++i) acc[i] = _mm256_setzero_ps(), acc_min[i] = _mm_setzero_ps(), mins_total[i] = 0;
        for (int64_t s = 0; s < n / kSuper; ++s) {
            const uint8_t *block = row + s * int64_t(kBytes);
            const __m256i wide = ScalesMins(block + 4);
            const __m256i scales = _mm256_permute2x128_si256(wide, wide, 0x00);  // the 8 scales in each half
            __m256i weights[8], weight_scales[8];  // weights 32c..32c+31 and their scale, c < 8
            UnpackKMinValues(kFive, block, weights);
#pragma GCC unroll 8
            for (int c = 0; c < 8; ++c) weight_scales[c] = _mm256_shuffle_epi8(scales, WordIndex(c));
            const float d = HalfAt(block), dmin = HalfAt(block + 2);
#pragma GCC unroll 4
            for (int i = 0; i < M; ++i) {
                // The mins against the row's sums of each 32 (pairs of its sums of 16).
                const __m256i sums16 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(x[i].sums + s * 16));
                const __m128i sums32 = _mm_hadd_epi16(_mm256_castsi256_si128(sums16), _mm256_extracti128_si256(sums16, 1));
                const __m128i min_products = _mm_madd_epi16(_mm256_extracti128_si256(wide, 1), sums32);
                const float row_dmin = -x[i].scale[s] * dmin;
                if (kFive) {
                    const __m128i pairs = _mm_hadd_epi32(min_products, _mm_setzero_si128());
                    // fused, as llama.cpp's build contracts it: explicit, so no optimization level changes it
                    mins_total[i] = std::fma(row_dmin, float(_mm_cvtsi128_si32(_mm_hadd_epi32(pairs, _mm_setzero_si128()))),
                                             mins_total[i]);
                } else {
                    acc_min[i] = _mm_fmadd_ps(_mm_set1_ps(row_dmin), _mm_cvtepi32_ps(min_products), acc_min[i]);
                }
                const int8_t *xs = x[i].q + s * kSuper;
                __m256i sum = _mm256_setzero_si256();
#pragma GCC unroll 4
                for (int c = 0; c < 4; ++c)
                    sum = _mm256_add_epi32(sum, _mm256_add_epi32(ScaledProducts(weights[2 * c], xs + 64 * c, weight_scales[2 * c]),
                                                                 ScaledProducts(weights[2 * c + 1], xs + 64 * c + 32,
                                                                                weight_scales[2 * c + 1])));
                acc[i] = _mm256_fmadd_ps(_mm256_set1_ps(x[i].scale[s] * d), _mm256_cvtepi32_ps(sum), acc[i]);
            }
        }
        for (int i = 0; i < M; ++i)
            out[i * out_stride + r] = kFive ? SumLanes(acc[i]) + mins_total[i] : SumLanes(acc[i]) + SumLanes(acc_min[i]);
    }
}

// q6_K: per 128 weights 64 bytes of low nibbles and 32 of bit pairs (ggml's ql and qh), values
// 0..63 standing for -32..31, sixteen int8 scales of 16 weights each.  The products are taken of
// the unsigned values and 32 x scale x (the activations' sum of each 16) taken off after, lane by
// lane as llama.cpp does (lane i: the scales and sums 2i and 2i + 1).
template <int M>
void DotQ6KRows(const Q8KRow *HWY_RESTRICT x, const uint8_t *HWY_RESTRICT base, size_t row_bytes, int64_t nrows,
                int64_t n, float *HWY_RESTRICT out, int64_t out_stride) {
    for (int64_t r = 0; r < nrows; ++r) {
        const uint8_t *row = base + r * row_bytes;
        __m256 acc[M];
#pragma GCC unroll 4
        for (int i = 0; i < M; ++i) acc[i] = _mm256_setzero_ps();
        for (int64_t s = 0; s < n / kSuper; ++s) {
            const uint8_t *block = row + s * int64_t(kQ6KBytes);
            const __m128i scales8 = _mm_loadu_si128(reinterpret_cast<const __m128i *>(block + 192));
            const __m256i wide = _mm256_cvtepi8_epi16(scales8);
            __m256i weights[8], weight_scales[8];  // weights 32v..32v+31, and the scales of their two 16s
            UnpackQ6KValues(block, weights);
            // Vector v holds groups 2v and 2v + 1: their scales, 8 words each.
#pragma GCC unroll 8
            for (int v = 0; v < 8; ++v) weight_scales[v] = _mm256_cvtepi8_epi16(_mm_shuffle_epi8(scales8, PairIndex(v)));
            const float d = HalfAt(block + 208);
#pragma GCC unroll 4
            for (int i = 0; i < M; ++i) {
                const __m256i sums16 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(x[i].sums + s * 16));
                const __m256i offset = _mm256_slli_epi32(_mm256_madd_epi16(sums16, wide), 5);
                const int8_t *xs = x[i].q + s * kSuper;
                __m256i sum = _mm256_setzero_si256();
#pragma GCC unroll 8
                for (int v = 0; v < 8; v += 2)
                    sum = _mm256_add_epi32(sum, _mm256_add_epi32(ScaledProducts(weights[v], xs + 32 * v, weight_scales[v]),
                                                                 ScaledProducts(weights[v + 1], xs + 32 * v + 32, weight_scales[v + 1])));
                sum = _mm256_sub_epi32(sum, offset);
                acc[i] = _mm256_fmadd_ps(_mm256_set1_ps(x[i].scale[s] * d), _mm256_cvtepi32_ps(sum), acc[i]);
            }
        }
        for (int i = 0; i < M; ++i) out[i * out_stride + r] = SumLanes(acc[i]);
    }
}

void DotQ4K(const Q8KRow *x, int64_t xrows, const uint8_t *base, size_t row_bytes, int64_t nrows, int64_t n, float *out,
            int64_t out_stride) {
    ByRowGroups(x, xrows, out, out_stride, [&](auto m, const Q8KRow *rows, float *o) {
        DotKMinRows<false, decltype(m)::value>(rows, base, row_bytes, nrows, n, o, out_stride);
    });
}
void DotQ5K(const Q8KRow *x, int64_t xrows, const uint8_t *base, size_t row_bytes, int64_t nrows, int64_t n, float *out,
            int64_t out_stride) {
    ByRowGroups(x, xrows, out, out_stride, [&](auto m, const Q8KRow *rows, float *o) {
        DotKMinRows<true, decltype(m)::value>(rows, base, row_bytes, nrows, n, o, out_stride);
    });
}
void DotQ6K(const Q8KRow *x, int64_t xrows, const uint8_t *base, size_t row_bytes, int64_t nrows, int64_t n, float *out,
            int64_t out_stride) {
    ByRowGroups(x, xrows, out, out_stride, [&](auto m, const Q8KRow *rows, float *o) {
        DotQ6KRows<decltype(m)::value>(rows, base, row_bytes, nrows, n, o, out_stride);
    });
}
#else
// A super block's 256 values unpacked to bytes with the int16 scale of each 16 (and for q4_K and
// q5_K the mins), then each 16 against the activations in int16 pairs.
using D16 = hn::CappedTag<int16_t, 16>;

// sum over groups g of scale[g] x (values . x) over the group's 16, exact.
HWY_INLINE int32_t ScaledGroups(const uint8_t *values, const int8_t *x, const int16_t *scale) {
    const D16 d16;
    const hn::Repartition<int32_t, D16> d32;
    const hn::Rebind<uint8_t, D16> du8;
    const hn::Rebind<int8_t, D16> d8;
    const size_t lanes = hn::Lanes(d16);
    auto total = hn::Zero(d32);
    for (int g = 0; g < 16; ++g) {
        auto group = hn::Zero(d32);
        for (size_t i = 0; i < 16; i += lanes) {
            const auto w = hn::BitCast(d16, hn::PromoteTo(hn::RebindToUnsigned<D16>(), hn::LoadU(du8, values + 16 * g + i)));
            group = MulPairs(w, hn::PromoteTo(d16, hn::LoadU(d8, x + 16 * g + i)), group);
        }
        total = hn::Add(total, hn::Mul(group, hn::Set(d32, scale[g])));
    }
    return hn::GetLane(hn::SumOfLanes(d32, total));
}

template <bool kFive>
void DotKMinRow(const int8_t *HWY_RESTRICT xq, const int16_t *HWY_RESTRICT xsums, const float *HWY_RESTRICT xd,
                const uint8_t *HWY_RESTRICT base, size_t row_bytes, int64_t nrows, int64_t n, float *HWY_RESTRICT out) {
    constexpr size_t kBytes = kFive ? kQ5KBytes : kQ4KBytes;
    for (int64_t r = 0; r < nrows; ++r) {
        float acc = 0, acc_min = 0;
        for (int64_t s = 0; s < n / kSuper; ++s) {
            SuperBlock u;
            unpack_super_block(kFive ? TL_Q5_K : TL_Q4_K, base + r * row_bytes + s * int64_t(kBytes), &u);
            int32_t mins = 0;
            for (int j = 0; j < 8; ++j) mins += u.mins[j] * (xsums[s * 16 + 2 * j] + xsums[s * 16 + 2 * j + 1]);
            acc += u.d * xd[s] * float(ScaledGroups(u.values, xq + s * kSuper, u.scales));
            acc_min += u.dmin * xd[s] * float(mins);
        }
        out[r] = acc - acc_min;
    }
}

void DotQ6KRow(const int8_t *HWY_RESTRICT xq, const int16_t *HWY_RESTRICT xsums, const float *HWY_RESTRICT xd,
               const uint8_t *HWY_RESTRICT base, size_t row_bytes, int64_t nrows, int64_t n, float *HWY_RESTRICT out) {
    for (int64_t r = 0; r < nrows; ++r) {
        float acc = 0;
        for (int64_t s = 0; s < n / kSuper; ++s) {
            SuperBlock u;
            unpack_super_block(TL_Q6_K, base + r * row_bytes + s * int64_t(kQ6KBytes), &u);
            int32_t offset = 0;
            for (int g = 0; g < 16; ++g) offset += 32 * u.scales[g] * xsums[s * 16 + g];
            acc += u.d * xd[s] * float(ScaledGroups(u.values, xq + s * kSuper, u.scales) - offset);
        }
        out[r] = acc;
    }
}

void DotQ4K(const Q8KRow *x, int64_t xrows, const uint8_t *base, size_t row_bytes, int64_t nrows, int64_t n, float *out,
            int64_t out_stride) {
    for (int64_t i = 0; i < xrows; ++i) DotKMinRow<false>(x[i].q, x[i].sums, x[i].scale, base, row_bytes, nrows, n, out + i * out_stride);
}
void DotQ5K(const Q8KRow *x, int64_t xrows, const uint8_t *base, size_t row_bytes, int64_t nrows, int64_t n, float *out,
            int64_t out_stride) {
    for (int64_t i = 0; i < xrows; ++i) DotKMinRow<true>(x[i].q, x[i].sums, x[i].scale, base, row_bytes, nrows, n, out + i * out_stride);
}
void DotQ6K(const Q8KRow *x, int64_t xrows, const uint8_t *base, size_t row_bytes, int64_t nrows, int64_t n, float *out,
            int64_t out_stride) {
    for (int64_t i = 0; i < xrows; ++i) DotQ6KRow(x[i].q, x[i].sums, x[i].scale, base, row_bytes, nrows, n, out + i * out_stride);
}
#endif

// ggml's quantize_row_q8_K on every target, the same bits (no operation that rounds differently
// by target): per 256 values the one of largest magnitude (the first such), q = x * (-127 / it)
// rounded half to even (a |it| below 127 / FLT_MAX divides first), at most 127, the scale 1 / that
// factor, the sums of each 16.  A run holding an infinity or NaN: all q 0, a NaN scale.
void QuantizeQ8K(const float *HWY_RESTRICT x, int64_t n, Q8KRow out) {
    const hn::ScalableTag<float> df;
    const hn::Rebind<int32_t, decltype(df)> di;
    const hn::Rebind<int8_t, decltype(df)> d8;
    const size_t lanes = hn::Lanes(df);
    for (int64_t s = 0; s < n / kSuper; ++s) {
        const float *xs = x + s * kSuper;
        int8_t *q = out.q + s * kSuper;
        auto top = hn::Zero(df);
        auto finite = hn::Eq(top, top);
        for (size_t i = 0; i < size_t(kSuper); i += lanes) {
            const auto v = hn::LoadU(df, xs + i);
            top = hn::Max(top, hn::Abs(v));
            finite = hn::And(finite, hn::IsFinite(v));
        }
        const bool poison = !hn::AllTrue(df, finite);
        const float amax = hn::GetLane(hn::MaxOfLanes(df, top));
        float max = 0;
        for (size_t i = 0; i < size_t(kSuper) && !poison && amax != 0; i += lanes) {
            const auto v = hn::LoadU(df, xs + i);
            const intptr_t at = hn::FindFirstTrue(df, hn::Eq(hn::Abs(v), hn::Set(df, amax)));
            if (at >= 0) {
                max = xs[i + size_t(at)];
                break;
            }
        }
        const float iscale = amax != 0 ? -127.0f / max : 0.0f;
        const bool tiny = std::fabs(iscale) > std::numeric_limits<float>::max();  // |max| below 127 / FLT_MAX
        for (size_t i = 0; i < size_t(kSuper); i += lanes) {
            auto v = hn::Zero(df);
            if (!poison && amax != 0) {
                const auto xv = hn::LoadU(df, xs + i);
                v = tiny ? hn::Mul(hn::Div(xv, hn::Set(df, max)), hn::Set(df, -127.0f)) : hn::Mul(hn::Set(df, iscale), xv);
            }
            const auto qi = hn::Min(hn::NearestInt(v), hn::Set(di, 127));
            hn::StoreU(hn::DemoteTo(d8, qi), d8, q + i);
        }
        for (int64_t g = 0; g < kSuper / 16; ++g) {
            int sum = 0;
            for (int64_t i = 0; i < 16; ++i) sum += q[16 * g + i];
            out.sums[s * 16 + g] = int16_t(sum);
        }
        out.scale[s] = poison ? std::numeric_limits<float>::quiet_NaN() : amax == 0 ? 0.0f : tiny ? max / -127.0f : 1 / iscale;
    }
}

}  // namespace HWY_NAMESPACE
}  // namespace tl
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tl {

HWY_EXPORT(QuantizeQ8K);
HWY_EXPORT(DotQ4K);
HWY_EXPORT(DotQ5K);
HWY_EXPORT(DotQ6K);

void quantize_activations_q8k(const float *x, int64_t n, Q8KRow out) { HWY_DYNAMIC_DISPATCH(QuantizeQ8K)(x, n, out); }

void dot_rows_q8k(tl_dtype dt, const Q8KRow *x, int64_t xrows, const std::byte *rows, size_t row_bytes, int64_t nrows,
                  int64_t n, float *out, int64_t out_stride) {
    const auto *w = reinterpret_cast<const uint8_t *>(rows);
    if (dt == TL_Q4_K) return HWY_DYNAMIC_DISPATCH(DotQ4K)(x, xrows, w, row_bytes, nrows, n, out, out_stride);
    if (dt == TL_Q5_K) return HWY_DYNAMIC_DISPATCH(DotQ5K)(x, xrows, w, row_bytes, nrows, n, out, out_stride);
    HWY_DYNAMIC_DISPATCH(DotQ6K)(x, xrows, w, row_bytes, nrows, n, out, out_stride);
}

}  // namespace tl
#endif
