// IEEE half and bfloat16 to float, bit-exact (subnormals, infinities and NaN included).
#pragma once
#include <cstdint>
#include <cstring>

namespace tl {

inline float float_from_bits(uint32_t bits) {
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

inline float bf16_to_float(uint16_t h) { return float_from_bits(uint32_t(h) << 16); }

inline float f16_to_float(uint16_t h) {
    const uint32_t sign = uint32_t(h & 0x8000) << 16;
    uint32_t exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
    if (exponent == 0x1f) return float_from_bits(sign | 0x7f800000u | (mantissa << 13));  // inf, NaN
    if (exponent == 0) {
        if (mantissa == 0) return float_from_bits(sign);  // +-0
        // Subnormal: shift until the leading 1 reaches the implicit position.
        exponent = 1;
        while (!(mantissa & 0x400)) {
            mantissa <<= 1;
            --exponent;
        }
        mantissa &= 0x3ff;
    }
    return float_from_bits(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

}  // namespace tl
