// A q4_K, q5_K or q6_K super block as integers, the one unpacking of ggml's layouts for the
// kernels that do not unpack in registers (kquant_dot.cpp's generic path, panel_dot.cpp's
// packing): 256 unsigned values, a scale for each 16, q4_K/q5_K's mins, the f16 factors as f32.
#pragma once
#include <cstdint>
#include <cstring>

#include "kernels/half.h"
#include "tensorlife/tl_tensor.h"

namespace tl {

constexpr int64_t kSuper = 256;
constexpr size_t kQ4KBytes = 144, kQ5KBytes = 176, kQ6KBytes = 210;

inline float load_half(const uint8_t *p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return f16_to_float(h);
}

// q4_K/q5_K's 12 bytes of packed 6-bit scales and mins as 8 scale bytes then 8 min bytes
// (ggml's get_scale_min_k4, all eight at once).
inline void unpack_scales_mins(const uint8_t *packed, uint8_t out[16]) {
    uint32_t w[3];
    std::memcpy(w, packed, 12);
    constexpr uint32_t low6 = 0x3f3f3f3f, low4 = 0x0f0f0f0f, top2 = 0x03030303;
    const uint32_t scales_lo = w[0] & low6, mins_lo = w[1] & low6;
    const uint32_t scales_hi = (w[2] & low4) | (((w[0] >> 6) & top2) << 4);
    const uint32_t mins_hi = ((w[2] >> 4) & low4) | (((w[1] >> 6) & top2) << 4);
    const uint32_t words[4] = {scales_lo, scales_hi, mins_lo, mins_hi};
    std::memcpy(out, words, 16);
}

struct SuperBlock {
    uint8_t values[kSuper];  // 0..15 (q4_K), 0..31 (q5_K), 0..63 (q6_K, standing for value - 32)
    int16_t scales[16];      // of each 16 values (q4_K/q5_K: a sub-block of 32's scale twice)
    int16_t mins[8];         // q4_K/q5_K: of each 32
    float d, dmin;           // dmin: q4_K/q5_K
};

inline void unpack_super_block(tl_dtype dt, const uint8_t *block, SuperBlock *out) {
    if (dt == TL_Q6_K) {  // 128 bytes of low nibbles, 64 of bit pairs, 16 int8 scales, d
        const auto *sc = reinterpret_cast<const int8_t *>(block + 192);
        for (int g = 0; g < 16; ++g) out->scales[g] = sc[g];
        for (int h = 0; h < 2; ++h) {
            const uint8_t *ql = block + 64 * h, *qh = block + 128 + 32 * h;
            uint8_t *v = out->values + 128 * h;
            for (int l = 0; l < 32; ++l) {
                v[l] = uint8_t((ql[l] & 0xf) | ((qh[l] & 3) << 4));
                v[l + 32] = uint8_t((ql[l + 32] & 0xf) | (((qh[l] >> 2) & 3) << 4));
                v[l + 64] = uint8_t((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4));
                v[l + 96] = uint8_t((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4));
            }
        }
        out->d = load_half(block + 208), out->dmin = 0;
        return;
    }
    // q4_K/q5_K: d, dmin, 12 bytes of scales and mins, q5_K's 32 bytes of fifth bits, 128 of nibbles
    const bool five = dt == TL_Q5_K;
    const uint8_t *qh = block + 16, *qs = block + (five ? 48 : 16);
    uint8_t scales_mins[16];
    unpack_scales_mins(block + 4, scales_mins);
    for (int j = 0; j < 8; ++j) out->scales[2 * j] = out->scales[2 * j + 1] = scales_mins[j], out->mins[j] = scales_mins[8 + j];
    for (int c = 0; c < 4; ++c)
        for (int l = 0; l < 32; ++l) {
            const int fifth = five ? 16 : 0;
            out->values[64 * c + l] = uint8_t((qs[32 * c + l] & 0xf) + ((qh[l] >> (2 * c)) & 1) * fifth);
            out->values[64 * c + 32 + l] = uint8_t((qs[32 * c + l] >> 4) + ((qh[l] >> (2 * c + 1)) & 1) * fifth);
        }
    out->d = load_half(block), out->dmin = load_half(block + 2);
}

}  // namespace tl
