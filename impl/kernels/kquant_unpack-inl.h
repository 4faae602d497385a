// A q4_K, q5_K or q6_K super block's 256 values unpacked in registers on x86 with AVX2 (Highway's
// AVX2, AVX3 and AVX3_DL targets), for kquant_dot.cpp's products and panel_dot.cpp's packing:
// one source (Highway's -inl.h convention), compiled for each target.
#if defined(TL_KERNELS_KQUANT_UNPACK_INL_H_) == defined(HWY_TARGET_TOGGLE)  // once per target
#  ifdef TL_KERNELS_KQUANT_UNPACK_INL_H_
#    undef TL_KERNELS_KQUANT_UNPACK_INL_H_
#  else
#    define TL_KERNELS_KQUANT_UNPACK_INL_H_
#  endif

#  include <hwy/highway.h>

#  include <cstdint>

HWY_BEFORE_NAMESPACE();
namespace tl {
namespace HWY_NAMESPACE {

#  if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
// q4_K/q5_K: values 32c..32c+31 into w[c] (0..15, or 0..31 with q5_K's fifth bits): per 64, the 32
// bytes of nibbles (low nibbles the first 32, high the second) and bits 2c' and 2c' + 1 of qh.
HWY_INLINE void UnpackKMinValues(bool five, const uint8_t *block, __m256i w[8]) {
    const __m256i low4 = _mm256_set1_epi8(0x0f), bit = _mm256_set1_epi8(0x01);
    const uint8_t *qs = block + (five ? 48 : 16);
    __m256i high = five ? _mm256_loadu_si256(reinterpret_cast<const __m256i *>(block + 16)) : _mm256_setzero_si256();
#    pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) {
        const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(qs + 32 * c));
        __m256i lo = _mm256_and_si256(q, low4), hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), low4);
        if (five) {
            lo = _mm256_or_si256(lo, _mm256_slli_epi16(_mm256_and_si256(high, bit), 4));
            hi = _mm256_or_si256(hi, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(high, 1), bit), 4));
            high = _mm256_srli_epi16(high, 2);
        }
        w[2 * c] = lo, w[2 * c + 1] = hi;
    }
}

// q6_K: values 32v..32v+31 into w[v] (0..63): per 128, 64 bytes of low nibbles (ggml's ql) and 32
// of bit pairs (qh).
HWY_INLINE void UnpackQ6KValues(const uint8_t *block, __m256i w[8]) {
    const __m256i low4 = _mm256_set1_epi8(0x0f), two = _mm256_set1_epi8(0x03);
#    pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
        const __m256i ql0 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(block + 64 * h));
        const __m256i ql1 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(block + 64 * h + 32));
        const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(block + 128 + 32 * h));
        w[4 * h] = _mm256_or_si256(_mm256_and_si256(ql0, low4), _mm256_slli_epi16(_mm256_and_si256(qh, two), 4));
        w[4 * h + 1] = _mm256_or_si256(_mm256_and_si256(ql1, low4), _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2), two), 4));
        w[4 * h + 2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), low4),
                                       _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 4), two), 4));
        w[4 * h + 3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), low4),
                                       _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 6), two), 4));
    }
}
#  endif

}  // namespace HWY_NAMESPACE
}  // namespace tl
HWY_AFTER_NAMESPACE();

#endif
