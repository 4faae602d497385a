// ggml's q4_1, q5_0, q5_1, q4_K, q5_K and q6_K, each way.  The arithmetic follows ggml's
// reference code operation for operation (float, no contraction, the same order), so the bytes
// and the decoded values are ggml's; tests/test_quant.c checks both against files written by
// llama.cpp's own quantizer (through the llamacpp stage) and values worked out by hand.
#include "kernels/block_formats.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>

#include "core/tensor.h"
#include "kernels/half.h"
#include "kernels/quant.h"

namespace tl {
namespace {

constexpr int kSuper = 256;
constexpr float kGroupMaxEps = 1e-15f;

float load_f16(const std::byte *p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return f16_to_float(h);
}
void store_f16(std::byte *p, float f) {
    const uint16_t h = float_to_f16(f);
    std::memcpy(p, &h, 2);
}

// ggml's nearest_int: round half to even through the float adder (|f| < 2^22).
int nearest_int(float f) {
    const float v = f + 12582912.f;
    int i;
    std::memcpy(&i, &v, sizeof i);
    return (i & 0x007fffff) - 0x00400000;
}

// ---- 32-element blocks --------------------------------------------------------------------

void encode_min_block(const float *x, std::byte *b, int levels, bool five_bits) {  // q4_1, q5_1
    float min = FLT_MAX, max = -FLT_MAX;
    for (int j = 0; j < 32; ++j) {
        if (x[j] < min) min = x[j];
        if (x[j] > max) max = x[j];
    }
    const float d = (max - min) / float(levels), id = d != 0 ? 1.0f / d : 0.0f;
    store_f16(b, d);
    store_f16(b + 2, min);
    uint8_t *qs = reinterpret_cast<uint8_t *>(b + (five_bits ? 8 : 4));
    uint32_t qh = 0;
    for (int j = 0; j < 16; ++j) {
        const float x0 = (x[j] - min) * id, x1 = (x[j + 16] - min) * id;
        uint8_t q0, q1;
        if (five_bits) {
            q0 = uint8_t(x0 + 0.5f), q1 = uint8_t(x1 + 0.5f);
            qh |= uint32_t((q0 & 0x10u) >> 4) << j;
            qh |= uint32_t((q1 & 0x10u) >> 4) << (j + 16);
        } else {
            q0 = uint8_t(std::min(15, int(int8_t(x0 + 0.5f)))), q1 = uint8_t(std::min(15, int(int8_t(x1 + 0.5f))));
        }
        qs[j] = uint8_t((q0 & 0x0F) | ((q1 & 0x0F) << 4));
    }
    if (five_bits) std::memcpy(b + 4, &qh, 4);
}

void encode_q5_0(const float *x, std::byte *b) {
    float amax = 0, max = 0;
    for (int j = 0; j < 32; ++j)
        if (amax < std::fabs(x[j])) amax = std::fabs(x[j]), max = x[j];
    const float d = max / -16, id = d != 0 ? 1.0f / d : 0.0f;
    store_f16(b, d);
    uint32_t qh = 0;
    uint8_t *qs = reinterpret_cast<uint8_t *>(b + 6);
    for (int j = 0; j < 16; ++j) {
        const uint8_t q0 = uint8_t(std::min(31, int(int8_t(x[j] * id + 16.5f))));
        const uint8_t q1 = uint8_t(std::min(31, int(int8_t(x[j + 16] * id + 16.5f))));
        qs[j] = uint8_t((q0 & 0x0F) | ((q1 & 0x0F) << 4));
        qh |= uint32_t((q0 & 0x10u) >> 4) << j;
        qh |= uint32_t((q1 & 0x10u) >> 4) << (j + 16);
    }
    std::memcpy(b + 2, &qh, 4);
}

void decode_32(tl_dtype dt, const std::byte *b, float *y) {
    const float d = load_f16(b);
    const bool has_min = dt != TL_Q5_0, five = dt != TL_Q4_1;
    const float m = has_min ? load_f16(b + 2) : 0.0f;
    uint32_t qh = 0;
    if (five) std::memcpy(&qh, b + (has_min ? 4 : 2), 4);
    const auto *qs = reinterpret_cast<const uint8_t *>(b + (has_min ? 4 : 2) + (five ? 4 : 0));
    for (int j = 0; j < 16; ++j) {
        int x0 = qs[j] & 0x0F, x1 = qs[j] >> 4;
        if (five) x0 |= int(((qh >> j) << 4) & 0x10), x1 |= int((qh >> (j + 12)) & 0x10);
        if (has_min) {
            y[j] = float(x0) * d + m, y[j + 16] = float(x1) * d + m;
        } else {
            y[j] = float(x0 - 16) * d, y[j + 16] = float(x1 - 16) * d;
        }
    }
}

// ---- 256-element super blocks ---------------------------------------------------------------

// ggml's make_qkx2_quants: a scale and a (negated) min for 32 values, searched over nstep + 1
// candidate scales for the least weighted error.
float scale_and_min(int n, int nmax, const float *x, const float *w, uint8_t *L, float *the_min, uint8_t *Laux,
                    float rmin, float rdelta, int nstep) {
    float min = x[0], max = x[0], sum_w = w[0], sum_x = sum_w * x[0];
    for (int i = 1; i < n; ++i) {
        if (x[i] < min) min = x[i];
        if (x[i] > max) max = x[i];
        sum_w += w[i];
        sum_x += w[i] * x[i];
    }
    if (min > 0) min = 0;
    if (max == min) {
        std::memset(L, 0, size_t(n));
        *the_min = -min;
        return 0.f;
    }
    float iscale = float(nmax) / (max - min), scale = 1 / iscale, best_error = 0;
    for (int i = 0; i < n; ++i) {
        const int l = nearest_int(iscale * (x[i] - min));
        L[i] = uint8_t(std::max(0, std::min(nmax, l)));
        const float diff = scale * L[i] + min - x[i];
        best_error += w[i] * (diff * diff);
    }
    for (int is = 0; is <= nstep; ++is) {
        iscale = (rmin + rdelta * float(is) + float(nmax)) / (max - min);
        float sum_l = 0, sum_l2 = 0, sum_xl = 0;
        for (int i = 0; i < n; ++i) {
            const int l = std::max(0, std::min(nmax, nearest_int(iscale * (x[i] - min))));
            Laux[i] = uint8_t(l);
            sum_l += w[i] * float(l);
            sum_l2 += w[i] * float(l) * float(l);
            sum_xl += w[i] * float(l) * x[i];
        }
        const float D = sum_w * sum_l2 - sum_l * sum_l;
        if (D > 0) {
            float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
            float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
            if (this_min > 0) this_min = 0, this_scale = sum_xl / sum_l2;
            float cur_error = 0;
            for (int i = 0; i < n; ++i) {
                const float diff = this_scale * Laux[i] + this_min - x[i];
                cur_error += w[i] * (diff * diff);
            }
            if (cur_error < best_error) {
                std::memcpy(L, Laux, size_t(n));
                best_error = cur_error, scale = this_scale, min = this_min;
            }
        }
    }
    *the_min = -min;
    return scale;
}

// The 6-bit scale and min of sub-block j from q4_K/q5_K's 12 packed bytes.
void scale_min_k4(int j, const uint8_t *q, uint8_t *d, uint8_t *m) {
    if (j < 4) {
        *d = q[j] & 63, *m = q[j + 4] & 63;
    } else {
        *d = uint8_t((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
        *m = uint8_t((q[j + 4] >> 4) | ((q[j - 0] >> 6) << 4));
    }
}

// q4_K (nmax 15) and q5_K (nmax 31): d, dmin, 12 bytes of scales and mins, then (q5_K) 32 bytes
// of fifth bits, then 128 bytes of nibbles.
void encode_k_min(const float *x, std::byte *b, bool five) {
    const int nmax = five ? 31 : 15;
    uint8_t L[kSuper], Laux[32];
    float w[32], mins[8], scales[8], max_scale = 0, max_min = 0;
    for (int j = 0; j < 8; ++j) {
        float sum_x2 = 0;
        for (int l = 0; l < 32; ++l) sum_x2 += x[32 * j + l] * x[32 * j + l];
        const float av_x = std::sqrt(sum_x2 / 32);
        for (int l = 0; l < 32; ++l) w[l] = av_x + std::fabs(x[32 * j + l]);
        scales[j] = five ? scale_and_min(32, nmax, x + 32 * j, w, L + 32 * j, &mins[j], Laux, -0.5f, 0.1f, 15)
                         : scale_and_min(32, nmax, x + 32 * j, w, L + 32 * j, &mins[j], Laux, -1.f, 0.1f, 20);
        if (scales[j] > max_scale) max_scale = scales[j];
        if (mins[j] > max_min) max_min = mins[j];
    }
    uint8_t *sc = reinterpret_cast<uint8_t *>(b + 4);
    std::memset(sc, 0, 12);
    const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f, inv_min = max_min > 0 ? 63.f / max_min : 0.f;
    for (int j = 0; j < 8; ++j) {
        const uint8_t ls = std::min<uint8_t>(63, uint8_t(nearest_int(inv_scale * scales[j])));
        const uint8_t lm = std::min<uint8_t>(63, uint8_t(nearest_int(inv_min * mins[j])));
        if (j < 4) {
            sc[j] = ls, sc[j + 4] = lm;
        } else {
            sc[j + 4] = uint8_t((ls & 0xF) | ((lm & 0xF) << 4));
            sc[j - 4] |= uint8_t((ls >> 4) << 6);
            sc[j - 0] |= uint8_t((lm >> 4) << 6);
        }
    }
    store_f16(b, max_scale / 63.f);
    store_f16(b + 2, max_min / 63.f);
    const float d_all = load_f16(b), dmin_all = load_f16(b + 2);
    for (int j = 0; j < 8; ++j) {
        uint8_t s, m;
        scale_min_k4(j, sc, &s, &m);
        const float d = d_all * s;
        if (d == 0) continue;
        const float dm = dmin_all * m;
        for (int i = 0; i < 32; ++i)
            L[32 * j + i] = uint8_t(std::max(0, std::min(nmax, nearest_int((x[32 * j + i] + dm) / d))));
    }
    uint8_t *qh = reinterpret_cast<uint8_t *>(b + 16), *q = qh + (five ? 32 : 0);
    if (five) std::memset(qh, 0, 32);
    uint8_t m1 = 1, m2 = 2;
    for (int n = 0; n < kSuper; n += 64, q += 32, m1 = uint8_t(m1 << 2), m2 = uint8_t(m2 << 2))
        for (int l = 0; l < 32; ++l) {
            int l1 = L[n + l], l2 = L[n + l + 32];
            if (five && l1 > 15) l1 -= 16, qh[l] |= m1;
            if (five && l2 > 15) l2 -= 16, qh[l] |= m2;
            q[l] = uint8_t(l1 | (l2 << 4));
        }
}

void decode_k_min(const std::byte *b, float *y, bool five) {
    const float d = load_f16(b), min = load_f16(b + 2);
    const auto *sc = reinterpret_cast<const uint8_t *>(b + 4);
    const auto *qh = reinterpret_cast<const uint8_t *>(b + 16);
    const uint8_t *q = qh + (five ? 32 : 0);
    uint8_t u1 = 1, u2 = 2;
    for (int j = 0, is = 0; j < kSuper; j += 64, q += 32, is += 2, u1 = uint8_t(u1 << 2), u2 = uint8_t(u2 << 2)) {
        uint8_t s, m;
        scale_min_k4(is + 0, sc, &s, &m);
        const float d1 = d * s, m1 = min * m;
        scale_min_k4(is + 1, sc, &s, &m);
        const float d2 = d * s, m2 = min * m;
        for (int l = 0; l < 32; ++l) *y++ = d1 * float((q[l] & 0xF) + (five && (qh[l] & u1) ? 16 : 0)) - m1;
        for (int l = 0; l < 32; ++l) *y++ = d2 * float((q[l] >> 4) + (five && (qh[l] & u2) ? 16 : 0)) - m2;
    }
}

// ggml's make_qx_quants with rmse_type 1 and no importance (weights x^2), for q6_K's 16-value
// groups: a symmetric scale searched over 19 candidates.
float symmetric_scale(const float *x, int8_t *L) {
    constexpr int n = 16, nmax = 32;
    float max = 0, amax = 0;
    for (int i = 0; i < n; ++i)
        if (std::fabs(x[i]) > amax) amax = std::fabs(x[i]), max = x[i];
    if (amax < kGroupMaxEps) {
        std::memset(L, 0, n);
        return 0.f;
    }
    float iscale = -nmax / max, sumlx = 0, suml2 = 0;
    for (int i = 0; i < n; ++i) {
        const int l = std::max(-nmax, std::min(nmax - 1, nearest_int(iscale * x[i])));
        L[i] = int8_t(l + nmax);
        const float w = x[i] * x[i];
        sumlx += w * x[i] * float(l);
        suml2 += w * float(l) * float(l);
    }
    float scale = suml2 != 0 ? sumlx / suml2 : 0.0f, best = scale * sumlx;
    for (int is = -9; is <= 9; ++is) {
        if (is == 0) continue;
        iscale = -(float(nmax) + 0.1f * float(is)) / max;
        sumlx = suml2 = 0;
        for (int i = 0; i < n; ++i) {
            const int l = std::max(-nmax, std::min(nmax - 1, nearest_int(iscale * x[i])));
            const float w = x[i] * x[i];
            sumlx += w * x[i] * float(l);
            suml2 += w * float(l) * float(l);
        }
        if (suml2 > 0 && sumlx * sumlx > best * suml2) {
            for (int i = 0; i < n; ++i)
                L[i] = int8_t(nmax + std::max(-nmax, std::min(nmax - 1, nearest_int(iscale * x[i]))));
            scale = sumlx / suml2, best = scale * sumlx;
        }
    }
    return scale;
}

// q6_K: 128 bytes of low nibbles, 64 of high bit pairs, 16 int8 scales, then an f16 d.
void encode_q6_k(const float *x, std::byte *b) {
    int8_t L[kSuper];
    float scales[16], max_scale = 0, max_abs_scale = 0;
    for (int ib = 0; ib < 16; ++ib) {
        scales[ib] = symmetric_scale(x + 16 * ib, L + 16 * ib);
        if (std::fabs(scales[ib]) > max_abs_scale) max_abs_scale = std::fabs(scales[ib]), max_scale = scales[ib];
    }
    if (max_abs_scale < kGroupMaxEps) {
        std::memset(b, 0, 210);
        return;
    }
    auto *ql = reinterpret_cast<uint8_t *>(b), *qh = ql + 128;
    auto *sc = reinterpret_cast<int8_t *>(b + 192);
    const float iscale = -128.f / max_scale;
    store_f16(b + 208, 1 / iscale);
    for (int ib = 0; ib < 16; ++ib) sc[ib] = int8_t(std::min(127, nearest_int(iscale * scales[ib])));
    const float d_all = load_f16(b + 208);
    for (int j = 0; j < 16; ++j) {
        const float d = d_all * float(sc[j]);
        if (d == 0) continue;
        for (int i = 0; i < 16; ++i) L[16 * j + i] = int8_t(std::max(-32, std::min(31, nearest_int(x[16 * j + i] / d))) + 32);
    }
    for (int j = 0; j < kSuper; j += 128, ql += 64, qh += 32)
        for (int l = 0; l < 32; ++l) {
            const uint8_t q1 = L[j + l] & 0xF, q2 = L[j + l + 32] & 0xF, q3 = L[j + l + 64] & 0xF, q4 = L[j + l + 96] & 0xF;
            ql[l] = uint8_t(q1 | (q3 << 4));
            ql[l + 32] = uint8_t(q2 | (q4 << 4));
            qh[l] = uint8_t((L[j + l] >> 4) | ((L[j + l + 32] >> 4) << 2) | ((L[j + l + 64] >> 4) << 4) |
                            ((L[j + l + 96] >> 4) << 6));
        }
}

void decode_q6_k(const std::byte *b, float *y) {
    const float d = load_f16(b + 208);
    const auto *ql = reinterpret_cast<const uint8_t *>(b), *qh = ql + 128;
    const auto *sc = reinterpret_cast<const int8_t *>(b + 192);
    for (int n = 0; n < kSuper; n += 128, y += 128, ql += 64, qh += 32, sc += 8)
        for (int l = 0; l < 32; ++l) {
            const int is = l / 16;
            const int8_t q1 = int8_t(((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32);
            const int8_t q2 = int8_t(((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32);
            const int8_t q3 = int8_t(((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32);
            const int8_t q4 = int8_t(((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32);
            y[l] = d * float(sc[is + 0]) * float(q1);
            y[l + 32] = d * float(sc[is + 2]) * float(q2);
            y[l + 64] = d * float(sc[is + 4]) * float(q3);
            y[l + 96] = d * float(sc[is + 6]) * float(q4);
        }
}

}  // namespace

bool is_ggml_block_format(tl_dtype dt) {
    return dt == TL_Q4_1 || dt == TL_Q5_0 || dt == TL_Q5_1 || dt == TL_Q4_K || dt == TL_Q5_K || dt == TL_Q6_K;
}

void decode_blocks(tl_dtype dt, const std::byte *src, float *dst, int64_t n) {
    const int64_t block = dtype_info(dt).block;
    const size_t bytes = dtype_info(dt).block_bytes;
    for (int64_t b = 0; b < n / block; ++b, src += bytes, dst += block) {
        if (dt == TL_Q4_K || dt == TL_Q5_K)
            decode_k_min(src, dst, dt == TL_Q5_K);
        else if (dt == TL_Q6_K)
            decode_q6_k(src, dst);
        else
            decode_32(dt, src, dst);
    }
}

void encode_blocks(tl_dtype dt, const float *src, std::byte *dst, int64_t n) {
    const int64_t block = dtype_info(dt).block;
    const size_t bytes = dtype_info(dt).block_bytes;
    for (int64_t b = 0; b < n / block; ++b, src += block, dst += bytes) {
        switch (dt) {
            case TL_Q4_1: encode_min_block(src, dst, 15, false); break;
            case TL_Q5_1: encode_min_block(src, dst, 31, true); break;
            case TL_Q5_0: encode_q5_0(src, dst); break;
            case TL_Q4_K: encode_k_min(src, dst, false); break;
            case TL_Q5_K: encode_k_min(src, dst, true); break;
            case TL_Q6_K: encode_q6_k(src, dst); break;
            default: break;
        }
    }
}

}  // namespace tl
