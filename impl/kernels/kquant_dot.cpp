// The dot products of activation rows with q4_K, q5_K and q6_K weights, in integers as ggml
// computes them: each activation row quantized once to q8_K (per 256 values one f32 scale, int8
// values and the sums of each 16), each super block's products summed exactly in int32 and
// weighted by its 6- or 8-bit sub-block scales, then scaled once by the two f32 scales.  The
// weights are read where they lie; nothing of them is decoded to float.
// Two ways, by target: on AVX3 and AVX3_DL (AVX-512 BW), 64 weights a step unpacked in
// registers and multiplied by vpmaddubsw, the sub-block scales applied by vpmaddwd (Highway
// 1.0.3 has neither, nor a 16-bit permute: intrinsics); on every other target a super block's
// values unpacked to bytes first, then int16 pairs (MulPairs).  The order of every addition
// depends on n and the target alone, as for dot_rows.
#define HWY_WANT_AVX3_DL
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/kquant_dot.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include "kernels/widen-inl.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/half.h"
#include "kernels/quant.h"

#ifndef TL_KQUANT_DOT_SHARED_  // once, not per target
#  define TL_KQUANT_DOT_SHARED_
namespace tl {
namespace {

constexpr int64_t kSuper = 256;
constexpr size_t kQ4KBytes = 144, kQ5KBytes = 176, kQ6KBytes = 210;

float load_half(const uint8_t *p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return f16_to_float(h);
}

// q4_K/q5_K's 12 bytes of packed 6-bit scales and mins as 8 scale bytes then 8 min bytes
// (ggml's get_scale_min_k4, all eight at once).
void unpack_scales_mins(const uint8_t *packed, uint8_t out[16]) {
    uint32_t w[3];
    std::memcpy(w, packed, 12);
    constexpr uint32_t low6 = 0x3f3f3f3f, low4 = 0x0f0f0f0f, top2 = 0x03030303;
    const uint32_t scales_lo = w[0] & low6, mins_lo = w[1] & low6;
    const uint32_t scales_hi = (w[2] & low4) | (((w[0] >> 6) & top2) << 4);
    const uint32_t mins_hi = ((w[2] >> 4) & low4) | (((w[1] >> 6) & top2) << 4);
    const uint32_t words[4] = {scales_lo, scales_hi, mins_lo, mins_hi};
    std::memcpy(out, words, 16);
}

}  // namespace
}  // namespace tl
#endif

HWY_BEFORE_NAMESPACE();
namespace tl {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
// 64 unsigned weights (0..63) times 64 activations, in pairs, then times each pair's int16
// scale, summed in pairs into sixteen int32 lanes and added to acc.
HWY_INLINE __m512i ScaledProducts(__m512i acc, __m512i weights, const int8_t *x, __m512i scales) {
    const __m512i pairs = _mm512_maddubs_epi16(weights, _mm512_loadu_si512(x));
    return _mm512_add_epi32(acc, _mm512_madd_epi16(pairs, scales));
}
// The word permutes that spread a block's int16 scales over the 32 pairs of 64 weights: step c's
// lane i takes scale first + c x 32 / per + i / per (per: the weights of a scale over two).
struct Spreads {
    __m512i step[4];
    Spreads(int per) {
        for (int c = 0; c < 4; ++c) {
            alignas(64) int16_t index[32];
            for (int i = 0; i < 32; ++i) index[i] = int16_t((32 * c + i) / per);
            step[c] = _mm512_load_si512(index);
        }
    }
    __m512i operator()(int c, __m512i scales) const { return _mm512_permutexvar_epi16(step[c], scales); }
};
// A super block's sixteen int32 lanes folded to eight (exact), then into eight f32 lanes
// scaled by d: lane i holds the products of bytes 4i..4i+3 of every 32 weights, as llama.cpp's
// AVX2 kernels hold them, so the f32 sums round as theirs do.
HWY_INLINE __m256 AddScaled(__m256 acc, float d, __m512i sum) {
    const __m256i folded = _mm256_add_epi32(_mm512_castsi512_si256(sum), _mm512_extracti64x4_epi64(sum, 1));
    return _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(folded), acc);
}
// Four lanes, then eight, added in llama.cpp's order (hsum_float_8).
HWY_INLINE float SumLanes(__m128 v) {
    v = _mm_add_ps(v, _mm_movehl_ps(v, v));
    return _mm_cvtss_f32(_mm_add_ss(v, _mm_movehdup_ps(v)));
}
HWY_INLINE float SumLanes(__m256 v) { return SumLanes(_mm_add_ps(_mm256_extractf128_ps(v, 1), _mm256_castps256_ps128(v))); }

// q4_K and q5_K: per 64 weights (two sub-blocks of 32) the 32 bytes of nibbles, low nibbles the
// first sub-block and high the second, plus for q5_K a fifth bit from qh (bits 2c and 2c + 1).
// The mins against the activations' sums of each 32: four f32 lanes for q4_K, one integer for
// q5_K, as llama.cpp adds them.
template <bool kFive>
void DotKMin(const int8_t *HWY_RESTRICT xq, const int16_t *HWY_RESTRICT xsums, const float *HWY_RESTRICT xd,
             const uint8_t *HWY_RESTRICT base, size_t row_bytes, int64_t nrows, int64_t n, float *HWY_RESTRICT out) {
    constexpr size_t kBytes = kFive ? kQ5KBytes : kQ4KBytes;
    const __m256i low4 = _mm256_set1_epi8(0x0f), bit = _mm256_set1_epi8(0x01);
    const Spreads spread(16);  // a scale per 32 weights
    for (int64_t r = 0; r < nrows; ++r) {
        const uint8_t *row = base + r * row_bytes;
        __m256 acc = _mm256_setzero_ps();
        __m128 acc_min = _mm_setzero_ps();
        float mins_total = 0;
        for (int64_t s = 0; s < n / kSuper; ++s) {
            const uint8_t *block = row + s * int64_t(kBytes);
            const uint8_t *qs = block + (kFive ? 48 : 16);
            alignas(16) uint8_t scales_mins[16];
            unpack_scales_mins(block + 4, scales_mins);
            const __m256i wide = _mm256_cvtepu8_epi16(_mm_load_si128(reinterpret_cast<const __m128i *>(scales_mins)));
            const __m256i sums16 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(xsums + s * 16));
            const __m128i sums32 = _mm_hadd_epi16(_mm256_castsi256_si128(sums16), _mm256_extracti128_si256(sums16, 1));
            const __m128i min_products = _mm_madd_epi16(_mm256_extracti128_si256(wide, 1), sums32);
            const float dmin = -xd[s] * load_half(block + 2);
            if (kFive) {
                const __m128i pairs = _mm_hadd_epi32(min_products, _mm_setzero_si128());
                mins_total += dmin * float(_mm_cvtsi128_si32(_mm_hadd_epi32(pairs, _mm_setzero_si128())));
            } else {
                acc_min = _mm_fmadd_ps(_mm_set1_ps(dmin), _mm_cvtepi32_ps(min_products), acc_min);
            }
            const __m512i scales = _mm512_castsi256_si512(wide);
            __m256i high = kFive ? _mm256_loadu_si256(reinterpret_cast<const __m256i *>(block + 16)) : _mm256_setzero_si256();
            __m512i sum = _mm512_setzero_si512();
            const int8_t *x = xq + s * kSuper;
            for (int c = 0; c < 4; ++c) {
                const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(qs + 32 * c));
                __m256i lo = _mm256_and_si256(q, low4), hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), low4);
                if (kFive) {
                    lo = _mm256_or_si256(lo, _mm256_slli_epi16(_mm256_and_si256(high, bit), 4));
                    hi = _mm256_or_si256(hi, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(high, 1), bit), 4));
                    high = _mm256_srli_epi16(high, 2);
                }
                const __m512i weights = _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
                sum = ScaledProducts(sum, weights, x + 64 * c, spread(c, scales));
            }
            acc = AddScaled(acc, xd[s] * load_half(block), sum);
        }
        out[r] = kFive ? SumLanes(acc) + mins_total : SumLanes(acc) + SumLanes(acc_min);
    }
}

// q6_K: per 128 weights 64 bytes of low nibbles and 32 of bit pairs (ggml's ql and qh), values
// 0..63 standing for -32..31, sixteen int8 scales of 16 weights each.  The products are taken of
// the unsigned values and 32 x scale x (the activations' sum of each 16) taken off after, lane by
// lane as llama.cpp does (lane i: the scales and sums 2i and 2i + 1).
void DotQ6K(const int8_t *HWY_RESTRICT xq, const int16_t *HWY_RESTRICT xsums, const float *HWY_RESTRICT xd,
            const uint8_t *HWY_RESTRICT base, size_t row_bytes, int64_t nrows, int64_t n, float *HWY_RESTRICT out) {
    const __m512i low4 = _mm512_set1_epi8(0x0f), two = _mm512_set1_epi8(0x03);
    const Spreads spread(8);  // a scale per 16 weights
    for (int64_t r = 0; r < nrows; ++r) {
        const uint8_t *row = base + r * row_bytes;
        __m256 acc = _mm256_setzero_ps();
        for (int64_t s = 0; s < n / kSuper; ++s) {
            const uint8_t *block = row + s * int64_t(kQ6KBytes);
            const __m256i wide = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i *>(block + 192)));
            const __m256i sums16 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(xsums + s * 16));
            const __m256i offset = _mm256_slli_epi32(_mm256_madd_epi16(sums16, wide), 5);
            const __m512i scales = _mm512_castsi256_si512(wide);
            __m512i sum = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_zextsi256_si512(offset));
            const int8_t *x = xq + s * kSuper;
            for (int h = 0; h < 2; ++h) {
                const __m512i ql = _mm512_loadu_si512(block + 64 * h);
                const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(block + 128 + 32 * h));
                const __m512i pairs = _mm512_inserti64x4(_mm512_castsi256_si512(qh), _mm256_srli_epi16(qh, 2), 1);
                const __m512i first = _mm512_or_si512(_mm512_and_si512(ql, low4),
                                                      _mm512_slli_epi16(_mm512_and_si512(pairs, two), 4));
                const __m512i second =
                    _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(ql, 4), low4),
                                    _mm512_slli_epi16(_mm512_and_si512(_mm512_srli_epi16(pairs, 4), two), 4));
                sum = ScaledProducts(sum, first, x + 128 * h, spread(2 * h, scales));
                sum = ScaledProducts(sum, second, x + 128 * h + 64, spread(2 * h + 1, scales));
            }
            acc = AddScaled(acc, xd[s] * load_half(block + 208), sum);
        }
        out[r] = SumLanes(acc);
    }
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
void DotKMin(const int8_t *HWY_RESTRICT xq, const int16_t *HWY_RESTRICT xsums, const float *HWY_RESTRICT xd,
             const uint8_t *HWY_RESTRICT base, size_t row_bytes, int64_t nrows, int64_t n, float *HWY_RESTRICT out) {
    constexpr size_t kBytes = kFive ? kQ5KBytes : kQ4KBytes;
    for (int64_t r = 0; r < nrows; ++r) {
        float acc = 0, acc_min = 0;
        for (int64_t s = 0; s < n / kSuper; ++s) {
            const uint8_t *block = base + r * row_bytes + s * int64_t(kBytes);
            const uint8_t *qh = block + 16, *qs = block + (kFive ? 48 : 16);
            uint8_t scales_mins[16], values[kSuper];
            int16_t scale[16];
            unpack_scales_mins(block + 4, scales_mins);
            int32_t mins = 0;
            for (int j = 0; j < 8; ++j) {
                scale[2 * j] = scale[2 * j + 1] = scales_mins[j];
                mins += scales_mins[8 + j] * (xsums[s * 16 + 2 * j] + xsums[s * 16 + 2 * j + 1]);
            }
            for (int c = 0; c < 4; ++c)
                for (int l = 0; l < 32; ++l) {
                    const int fifth = kFive ? 16 : 0;
                    values[64 * c + l] = uint8_t((qs[32 * c + l] & 0xf) + ((qh[l] >> (2 * c)) & 1) * fifth);
                    values[64 * c + 32 + l] = uint8_t((qs[32 * c + l] >> 4) + ((qh[l] >> (2 * c + 1)) & 1) * fifth);
                }
            acc += load_half(block) * xd[s] * float(ScaledGroups(values, xq + s * kSuper, scale));
            acc_min += load_half(block + 2) * xd[s] * float(mins);
        }
        out[r] = acc - acc_min;
    }
}

void DotQ6K(const int8_t *HWY_RESTRICT xq, const int16_t *HWY_RESTRICT xsums, const float *HWY_RESTRICT xd,
            const uint8_t *HWY_RESTRICT base, size_t row_bytes, int64_t nrows, int64_t n, float *HWY_RESTRICT out) {
    for (int64_t r = 0; r < nrows; ++r) {
        float acc = 0;
        for (int64_t s = 0; s < n / kSuper; ++s) {
            const uint8_t *block = base + r * row_bytes + s * int64_t(kQ6KBytes);
            const int8_t *sc = reinterpret_cast<const int8_t *>(block + 192);
            uint8_t values[kSuper];
            int16_t scale[16];
            int32_t offset = 0;
            for (int g = 0; g < 16; ++g) scale[g] = sc[g], offset += 32 * sc[g] * xsums[s * 16 + g];
            for (int h = 0; h < 2; ++h) {
                const uint8_t *ql = block + 64 * h, *qh = block + 128 + 32 * h;
                uint8_t *v = values + 128 * h;
                for (int l = 0; l < 32; ++l) {
                    v[l] = uint8_t((ql[l] & 0xf) | (((qh[l] >> 0) & 3) << 4));
                    v[l + 32] = uint8_t((ql[l + 32] & 0xf) | (((qh[l] >> 2) & 3) << 4));
                    v[l + 64] = uint8_t((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4));
                    v[l + 96] = uint8_t((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4));
                }
            }
            acc += load_half(block + 208) * xd[s] * float(ScaledGroups(values, xq + s * kSuper, scale) - offset);
        }
        out[r] = acc;
    }
}
#endif

void DotQ4K(const int8_t *xq, const int16_t *xsums, const float *xd, const uint8_t *base, size_t row_bytes,
            int64_t nrows, int64_t n, float *out) {
    DotKMin<false>(xq, xsums, xd, base, row_bytes, nrows, n, out);
}
void DotQ5K(const int8_t *xq, const int16_t *xsums, const float *xd, const uint8_t *base, size_t row_bytes,
            int64_t nrows, int64_t n, float *out) {
    DotKMin<true>(xq, xsums, xd, base, row_bytes, nrows, n, out);
}

}  // namespace HWY_NAMESPACE
}  // namespace tl
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tl {

HWY_EXPORT(DotQ4K);
HWY_EXPORT(DotQ5K);
HWY_EXPORT(DotQ6K);

void quantize_activations_q8k(const float *x, int64_t n, Q8KRow out) {
    for (int64_t s = 0; s < n / kSuper; ++s) {
        const float *xs = x + s * kSuper;
        int8_t *q = out.q + s * kSuper;
        float amax = 0, max = 0, poison = 0;  // poison: x * 0 summed, NaN when any x is not finite
        for (int64_t i = 0; i < kSuper; ++i) {
            poison += xs[i] * 0.0f;
            if (std::fabs(xs[i]) > amax) amax = std::fabs(xs[i]), max = xs[i];
        }
        const float iscale = amax != 0 ? -127.0f / max : 0.0f;
        const bool tiny = std::fabs(iscale) > std::numeric_limits<float>::max();  // |max| below 127 / FLT_MAX
        for (int64_t i = 0; i < kSuper; ++i) {
            const float v = poison != 0 || amax == 0 ? 0.0f : tiny ? xs[i] / max * -127.0f : iscale * xs[i];
            q[i] = int8_t(std::min(127, int(std::nearbyint(v))));
        }
        for (int64_t g = 0; g < kSuper / 16; ++g) {
            int sum = 0;
            for (int64_t i = 0; i < 16; ++i) sum += q[16 * g + i];
            out.sums[s * 16 + g] = int16_t(sum);
        }
        out.scale[s] = poison != 0 ? std::numeric_limits<float>::quiet_NaN() : amax == 0 ? 0.0f : tiny ? max / -127.0f : 1 / iscale;
    }
}

void dot_rows_q8k(tl_dtype dt, const Q8KRow &x, const std::byte *rows, size_t row_bytes, int64_t nrows, int64_t n,
                  float *out) {
    const auto *w = reinterpret_cast<const uint8_t *>(rows);
    if (dt == TL_Q4_K) return HWY_DYNAMIC_DISPATCH(DotQ4K)(x.q, x.sums, x.scale, w, row_bytes, nrows, n, out);
    if (dt == TL_Q5_K) return HWY_DYNAMIC_DISPATCH(DotQ5K)(x.q, x.sums, x.scale, w, row_bytes, nrows, n, out);
    HWY_DYNAMIC_DISPATCH(DotQ6K)(x.q, x.sums, x.scale, w, row_bytes, nrows, n, out);
}

}  // namespace tl
#endif
