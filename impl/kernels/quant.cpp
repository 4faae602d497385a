#include "kernels/quant.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/block_formats.h"
#include "kernels/half.h"

namespace tl {
namespace {

uint32_t bits_of(float f) {
    uint32_t x;
    std::memcpy(&x, &f, sizeof x);
    return x;
}

float load_f16(const std::byte *p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return f16_to_float(h);
}

void store_f16(std::byte *p, float f) {
    const uint16_t h = float_to_f16(f);
    std::memcpy(p, &h, 2);
}

// ggml's quantize_row_q8_0_ref: d = max|x| / 127, q = round(x / d) (half away from zero); the
// weights keep d in f16, activations quantized for the integer products keep it in f32.
void q8_scale_and_values(const float *x, float *d_out, int8_t *q) {
    float amax = 0;
    bool finite = true;
    for (int j = 0; j < kQuantBlock; ++j) {  // no libm calls: the loop vectorises
        const float a = std::fabs(x[j]);
        amax = a > amax ? a : amax;
        finite &= a <= std::numeric_limits<float>::max();  // false for infinities and NaN
    }
    if (!finite) {  // an infinity or NaN: the block decodes as NaN, not as a cast's garbage
        *d_out = std::numeric_limits<float>::quiet_NaN();
        std::memset(q, 0, size_t(kQuantBlock));
        return;
    }
    const float d = amax / 127, id = d != 0 ? 1.0f / d : 0.0f;
    *d_out = d;
    const bool tiny = id > std::numeric_limits<float>::max();  // a subnormal d: 1 / d overflowed
    for (int j = 0; j < kQuantBlock; ++j) {  // round half away from zero: exact in double, |v| <= 127.5
        const float v = tiny ? x[j] / d : x[j] * id;
        q[j] = int8_t(int(double(v) + (v < 0 ? -0.5 : 0.5)));  // the cast truncates toward zero
    }
}

void quantize_q8_0(const float *x, std::byte *block) {
    float d;
    q8_scale_and_values(x, &d, reinterpret_cast<int8_t *>(block + 2));
    store_f16(block, d);
}

// ggml's quantize_row_q4_0_ref: d = (the value of largest magnitude) / -8, nibble
// min(15, trunc(x / d + 8.5)); element j low, element j + 16 high in byte j.
void quantize_q4_0(const float *x, std::byte *block) {
    float amax = 0, max = 0;
    for (int j = 0; j < kQuantBlock; ++j)
        if (amax < std::fabs(x[j])) amax = std::fabs(x[j]), max = x[j];
    const float d = max / -8, id = d != 0 ? 1.0f / d : 0.0f;
    store_f16(block, d);
    auto *q = reinterpret_cast<uint8_t *>(block + 2);
    for (int j = 0; j < kQuantBlock / 2; ++j) {
        const int lo = int(int8_t(x[j] * id + 8.5f)), hi = int(int8_t(x[j + 16] * id + 8.5f));
        q[j] = uint8_t((lo < 15 ? lo : 15) | (hi < 15 ? hi : 15) << 4);
    }
}

}  // namespace

uint16_t float_to_f16(float f) {
    const uint32_t x = bits_of(f), sign = (x >> 16) & 0x8000, abs = x & 0x7fffffffu;
    if (abs > 0x7f800000u) return uint16_t(sign | 0x7e00 | ((abs >> 13) & 0x3ff));     // NaN, quiet
    if (abs >= 0x477ff000u) return uint16_t(sign | 0x7c00);                            // 65520 and up round to infinity
    if (abs < 0x38800000u)                                                             // below 2^-14: a subnormal half
        return uint16_t(sign | uint32_t(std::nearbyint(std::fabs(f) * 16777216.0f)));  // units of 2^-24
    const uint32_t rounded = abs + 0xfff + ((abs >> 13) & 1);                          // to nearest even
    return uint16_t(sign | ((rounded - 0x38000000u) >> 13));                           // exponent 127 -> 15
}

uint16_t float_to_bf16(float f) {
    const uint32_t x = bits_of(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40);  // NaN, quiet
    return uint16_t((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

void dequantize_row(tl_dtype dt, const std::byte *src, float *dst, int64_t n) {
    switch (dt) {
        case TL_F16:
        case TL_BF16:
            for (int64_t i = 0; i < n; ++i) {
                uint16_t h;
                std::memcpy(&h, src + 2 * i, 2);
                dst[i] = dt == TL_F16 ? f16_to_float(h) : bf16_to_float(h);
            }
            return;
        case TL_Q8_0:
            for (int64_t b = 0; b < n / kQuantBlock; ++b, src += kQ8Bytes, dst += kQuantBlock) {
                const float d = load_f16(src);
                const auto *q = reinterpret_cast<const int8_t *>(src + 2);
                for (int j = 0; j < kQuantBlock; ++j) dst[j] = float(q[j]) * d;
            }
            return;
        case TL_Q4_0:
            for (int64_t b = 0; b < n / kQuantBlock; ++b, src += kQ4Bytes, dst += kQuantBlock) {
                const float d = load_f16(src);
                const auto *q = reinterpret_cast<const uint8_t *>(src + 2);
                for (int j = 0; j < kQuantBlock / 2; ++j) {
                    dst[j] = float(int(q[j] & 0xf) - 8) * d;
                    dst[j + 16] = float(int(q[j] >> 4) - 8) * d;
                }
            }
            return;
        case TL_F32:
            std::memcpy(dst, src, size_t(n) * 4);
            return;
        default:
            if (is_ggml_block_format(dt)) decode_blocks(dt, src, dst, n);
            return;  // the ops refuse every other dtype first
    }
}

void quantize_row(tl_dtype dt, const float *src, std::byte *dst, int64_t n) {
    switch (dt) {
        case TL_F16:
        case TL_BF16:
            for (int64_t i = 0; i < n; ++i) {
                const uint16_t h = dt == TL_F16 ? float_to_f16(src[i]) : float_to_bf16(src[i]);
                std::memcpy(dst + 2 * i, &h, 2);
            }
            return;
        case TL_Q8_0:
            for (int64_t b = 0; b < n / kQuantBlock; ++b) quantize_q8_0(src + b * kQuantBlock, dst + b * kQ8Bytes);
            return;
        case TL_Q4_0:
            for (int64_t b = 0; b < n / kQuantBlock; ++b) quantize_q4_0(src + b * kQuantBlock, dst + b * kQ4Bytes);
            return;
        case TL_F32:
            std::memcpy(dst, src, size_t(n) * 4);
            return;
        default:
            if (is_ggml_block_format(dt)) encode_blocks(dt, src, dst, n);
            return;
    }
}

}  // namespace tl
