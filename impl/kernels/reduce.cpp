// Kernels that walk one axis per output position: sum/mean, argmax, softmax, and the
// last-axis norms.  Floats accumulate in double so that f32 results do not depend on length.
#include <cmath>
#include <type_traits>

#include "kernels/kernels.h"
#include "kernels/strided_loop.h"

namespace tl {
namespace {

// f(out_ptr, in_ptr) for every position of `outer` (the shape without the walked axis).
template <class F>
void for_each_position(const View &out_outer, const View &in_outer, F f) {
    Operands<2> o;
    o.data = {out_outer.data, in_outer.data};
    o.strides = {out_outer.strides, in_outer.strides};
    o.elem_size = {int64_t(dtype_size(out_outer.dtype)), int64_t(dtype_size(in_outer.dtype))};
    strided_for_each<2>(in_outer.ndim, in_outer.shape, o, [&](std::byte *const *p, int64_t n, const int64_t *s) {
        for (int64_t i = 0; i < n; ++i) f(p[0] + i * s[0], p[1] + i * s[1]);
    });
}

template <class T>
void sum_typed(const View &a, int axis, Reduction r, const View &out) {
    const int64_t len = a.shape[axis], step = a.strides[axis];
    for_each_position(out, drop_axis(a, axis), [&](std::byte *o, std::byte *in) {
        const T *x = reinterpret_cast<const T *>(in);
        if constexpr (std::is_same_v<T, int32_t>) {
            int64_t acc = 0;
            for (int64_t i = 0; i < len; ++i) acc += x[i * step];
            *reinterpret_cast<int32_t *>(o) = int32_t(uint32_t(uint64_t(acc)));
        } else {
            double acc = 0;
            for (int64_t i = 0; i < len; ++i) acc += double(x[i * step]);
            *reinterpret_cast<T *>(o) = T(r == Reduction::mean ? acc / double(len) : acc);
        }
    });
}

template <class T>
void argmax_typed(const View &a, int axis, const View &out) {
    const int64_t len = a.shape[axis], step = a.strides[axis];
    for_each_position(out, drop_axis(a, axis), [&](std::byte *o, std::byte *in) {
        const T *x = reinterpret_cast<const T *>(in);
        int64_t best = 0;
        for (int64_t i = 1; i < len; ++i) {
            const T v = x[i * step], b = x[best * step];
            if constexpr (!std::is_same_v<T, int32_t>) {
                if (std::isnan(b)) break;  // NaN is largest; the first one wins
                if (std::isnan(v)) {
                    best = i;
                    break;
                }
            }
            if (v > b) best = i;
        }
        *reinterpret_cast<int32_t *>(o) = int32_t(best);
    });
}

template <class T>
void softmax_typed(const View &a, int axis, const View &out) {
    const int64_t len = a.shape[axis], step = a.strides[axis], ostep = out.strides[axis];
    for_each_position(drop_axis(out, axis), drop_axis(a, axis), [&](std::byte *o, std::byte *in) {
        const T *x = reinterpret_cast<const T *>(in);
        T *y = reinterpret_cast<T *>(o);
        double top = -INFINITY;
        // A compare, not std::fmax (the same maximum, NaN skipped): GCC 12's aarch64 vectorizer
        // stops with an internal error on an fmax reduction.
        for (int64_t i = 0; i < len; ++i) {
            const double v = double(x[i * step]);
            if (v > top) top = v;
        }
        double total = 0;
        for (int64_t i = 0; i < len; ++i) total += std::exp(double(x[i * step]) - top);
        for (int64_t i = 0; i < len; ++i) y[i * ostep] = T(std::exp(double(x[i * step]) - top) / total);
    });
}

template <class T>
void norm_typed(const View &x, const View *w, const View *b, double eps, bool center, const View &out) {
    const int axis = x.ndim - 1;
    const int64_t len = x.shape[axis], step = x.strides[axis], ostep = out.strides[axis];
    const T *wp = w ? reinterpret_cast<const T *>(w->data) : nullptr;
    const T *bp = b ? reinterpret_cast<const T *>(b->data) : nullptr;
    const int64_t ws = w ? w->strides[0] : 0, bs = b ? b->strides[0] : 0;
    for_each_position(drop_axis(out, axis), drop_axis(x, axis), [&](std::byte *o, std::byte *in) {
        const T *v = reinterpret_cast<const T *>(in);
        T *y = reinterpret_cast<T *>(o);
        double mean = 0;
        if (center) {
            for (int64_t i = 0; i < len; ++i) mean += double(v[i * step]);
            mean /= double(len);
        }
        double sq = 0;
        for (int64_t i = 0; i < len; ++i) {
            const double d = double(v[i * step]) - mean;
            sq += d * d;
        }
        const double inv = 1.0 / std::sqrt(sq / double(len) + eps);
        for (int64_t i = 0; i < len; ++i) {
            double r = (double(v[i * step]) - mean) * inv;
            if (wp) r *= double(wp[i * ws]);
            if (bp) r += double(bp[i * bs]);
            y[i * ostep] = T(r);
        }
    });
}

}  // namespace

void sum_kernel(const View &a, int axis, Reduction r, const View &out) {
    with_dtype(a.dtype, [&](auto zero) { sum_typed<decltype(zero)>(a, axis, r, out); });
}

void argmax_kernel(const View &a, int axis, const View &out) {
    with_dtype(a.dtype, [&](auto zero) { argmax_typed<decltype(zero)>(a, axis, out); });
}

void softmax_kernel(const View &a, int axis, const View &out) {
    if (a.numel() == 0) return;  // an empty axis would leave a huge outer shape to walk
    with_float_dtype(a.dtype, [&](auto t) { softmax_typed<decltype(t)>(a, axis, out); });
}

void rmsnorm_kernel(const View &x, const View *w, double eps, const View &out) {
    if (x.numel() == 0) return;
    with_float_dtype(x.dtype, [&](auto t) { norm_typed<decltype(t)>(x, w, nullptr, eps, false, out); });
}

void layernorm_kernel(const View &x, const View *w, const View *b, double eps, const View &out) {
    if (x.numel() == 0) return;
    with_float_dtype(x.dtype, [&](auto t) { norm_typed<decltype(t)>(x, w, b, eps, true, out); });
}

}  // namespace tl
