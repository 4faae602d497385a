// RoPE's numbers (ops/rope.cpp checks the operands): each row's pairs turned by their angle, in
// double, rounded once to the dtype.
#include <cmath>

#include "kernels/kernels.h"

namespace tl {
namespace {

template <class T>
void rope_rows(const View &x, int64_t first, double theta, int mode, const View &out, int64_t r0, int64_t r1) {
    const int64_t d = x.shape[x.ndim - 1], half = d / 2, t_len = x.ndim >= 2 ? x.shape[x.ndim - 2] : 1;
    const int64_t sd = x.strides[x.ndim - 1];
    T *o = reinterpret_cast<T *>(out.data);
    for (int64_t r = r0; r < r1; ++r) {
        const T *row = reinterpret_cast<const T *>(x.data) + offset_of_item(x, x.ndim - 1, r);
        T *dst = o + r * d;
        const double pos = double(first + r % t_len);
        for (int64_t i = 0; i < half; ++i) {
            const double angle = pos * std::pow(theta, -2.0 * double(i) / double(d));
            const double c = std::cos(angle), s = std::sin(angle);
            const int64_t ia = mode == 0 ? 2 * i : i, ib = mode == 0 ? 2 * i + 1 : i + half;
            const double a = double(row[ia * sd]), b = double(row[ib * sd]);
            dst[ia] = T(a * c - b * s);
            dst[ib] = T(a * s + b * c);
        }
    }
}

}  // namespace

void rope_kernel(const View &x, int64_t first, double theta, int mode, const View &out, int64_t r0, int64_t r1) {
    with_float_dtype(x.dtype, [&](auto t) { rope_rows<decltype(t)>(x, first, theta, mode, out, r0, r1); });
}

}  // namespace tl
