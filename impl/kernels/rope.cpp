// RoPE's numbers (ops/rope.cpp checks the operands): each row's pairs turned by their angle, in
// double, rounded once to the dtype.
#include <algorithm>
#include <cmath>

#include "kernels/kernels.h"

namespace tl {
namespace {

// Each position's angles are computed once for the rows of [r0, r1) at that position (the heads
// of a [heads, T, d] operand share them; pow, cos and sin were 3% of a prompt taken row by row),
// kPairs pairs at a time.  The same expressions as row by row, so the same bits.
constexpr int64_t kPairs = 256;
template <class T>
void rope_rows(const View &x, int64_t first, double theta, int mode, const View &out, int64_t r0, int64_t r1) {
    const int64_t d = x.shape[x.ndim - 1], half = d / 2, t_len = x.ndim >= 2 ? x.shape[x.ndim - 2] : 1;
    const int64_t sd = x.strides[x.ndim - 1];
    T *o = reinterpret_cast<T *>(out.data);
    double c[kPairs], s[kPairs];
    for (int64_t k = 0; k < t_len && r0 + k < r1; ++k) {  // each position of the range: its rows t_len apart
        const double pos = double(first + (r0 + k) % t_len);
        for (int64_t i0 = 0; i0 < half; i0 += kPairs) {
            const int64_t i1 = std::min(half, i0 + kPairs);
            for (int64_t i = i0; i < i1; ++i) {
                const double angle = pos * std::pow(theta, -2.0 * double(i) / double(d));
                c[i - i0] = std::cos(angle), s[i - i0] = std::sin(angle);
            }
            for (int64_t r = r0 + k; r < r1; r += t_len) {
                const T *row = reinterpret_cast<const T *>(x.data) + offset_of_item(x, x.ndim - 1, r);
                T *dst = o + r * d;
                for (int64_t i = i0; i < i1; ++i) {
                    const int64_t ia = mode == 0 ? 2 * i : i, ib = mode == 0 ? 2 * i + 1 : i + half;
                    const double a = double(row[ia * sd]), b = double(row[ib * sd]);
                    dst[ia] = T(a * c[i - i0] - b * s[i - i0]);
                    dst[ib] = T(a * s[i - i0] + b * c[i - i0]);
                }
            }
        }
    }
}

}  // namespace

void rope_kernel(const View &x, int64_t first, double theta, int mode, const View &out, int64_t r0, int64_t r1) {
    with_float_dtype(x.dtype, [&](auto t) { rope_rows<decltype(t)>(x, first, theta, mode, out, r0, r1); });
}

}  // namespace tl
