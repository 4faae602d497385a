// Elementwise kernels: binary arithmetic, unary math and copy on the strided loop; fill on
// fresh (contiguous) tensors.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "kernels/kernels.h"
#include "kernels/quant.h"
#include "kernels/strided_loop.h"

namespace tl {
namespace {

template <size_t N>
Operands<N> operands(const std::array<const View *, N> &views) {
    Operands<N> o;
    for (size_t k = 0; k < N; ++k) {
        o.data[k] = views[k]->data;
        o.strides[k] = views[k]->strides;
        o.elem_size[k] = int64_t(dtype_size(views[k]->dtype));
    }
    return o;
}

// o[i] = f(x[i], y[i]) over n contiguous elements: the one inner loop of contiguous runs.
template <class T, class F>
void binary_run(T *o, const T *x, const T *y, int64_t n, F f) {
    for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], y[i]);
}

template <class T, class F>
void binary_typed(const View &a, const View &b, const View &out, F f) {
    if (out.is_contiguous() && a.is_contiguous() && b.is_contiguous())  // one run: no walk to set up
        return binary_run(reinterpret_cast<T *>(out.data), reinterpret_cast<const T *>(a.data),
                          reinterpret_cast<const T *>(b.data), out.numel(), f);
    strided_for_each<3>(out.ndim, out.shape, operands<3>({&out, &a, &b}),
                        [&](std::byte *const *p, int64_t n, const int64_t *s) {
                            T *o = reinterpret_cast<T *>(p[0]);
                            const T *x = reinterpret_cast<const T *>(p[1]);
                            const T *y = reinterpret_cast<const T *>(p[2]);
                            const int64_t so = s[0] / int64_t(sizeof(T)), sx = s[1] / int64_t(sizeof(T)),
                                          sy = s[2] / int64_t(sizeof(T));
                            if (so == 1 && sx == 1 && sy == 1) {
                                binary_run(o, x, y, n, f);
                            } else if (so == 1 && sx == 1 && sy == 0) {
                                const T c = y[0];
                                for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], c);
                            } else {
                                for (int64_t i = 0; i < n; ++i) o[i * so] = f(x[i * sx], y[i * sy]);
                            }
                        });
}

// run(f) with op's scalar function for T.  i32 arithmetic wraps modulo 2^32 (done in uint32
// so that overflow is defined); i32 div is refused by the op before it gets here.
template <class T, class Run>
void with_binary_function(BinaryOp op, Run &&run) {
    if constexpr (std::is_same_v<T, int32_t>) {
        switch (op) {
            case BinaryOp::add:
                return run([](int32_t x, int32_t y) { return int32_t(uint32_t(x) + uint32_t(y)); });
            case BinaryOp::sub:
                return run([](int32_t x, int32_t y) { return int32_t(uint32_t(x) - uint32_t(y)); });
            case BinaryOp::mul:
                return run([](int32_t x, int32_t y) { return int32_t(uint32_t(x) * uint32_t(y)); });
            case BinaryOp::div:
                return;
        }
    } else {
        switch (op) {
            case BinaryOp::add:
                return run([](T x, T y) { return T(x + y); });
            case BinaryOp::sub:
                return run([](T x, T y) { return T(x - y); });
            case BinaryOp::mul:
                return run([](T x, T y) { return T(x * y); });
            case BinaryOp::div:
                return run([](T x, T y) { return T(x / y); });
        }
    }
}

// o[i] = f(x[i]) over n contiguous elements: the one inner loop of contiguous unary runs.
template <class T, class F>
void unary_run(T *o, const T *x, int64_t n, F f) {
    for (int64_t i = 0; i < n; ++i) o[i] = f(x[i]);
}

template <class T, class F>
void unary_typed(const View &a, const View &out, F f) {
    if (out.is_contiguous() && a.is_contiguous())  // one run: no walk to set up
        return unary_run(reinterpret_cast<T *>(out.data), reinterpret_cast<const T *>(a.data), out.numel(), f);
    strided_for_each<2>(out.ndim, out.shape, operands<2>({&out, &a}),
                        [&](std::byte *const *p, int64_t n, const int64_t *s) {
                            T *o = reinterpret_cast<T *>(p[0]);
                            const T *x = reinterpret_cast<const T *>(p[1]);
                            const int64_t so = s[0] / int64_t(sizeof(T)), sx = s[1] / int64_t(sizeof(T));
                            if (so == 1 && sx == 1) {
                                unary_run(o, x, n, f);
                            } else {
                                for (int64_t i = 0; i < n; ++i) o[i * so] = f(x[i * sx]);
                            }
                        });
}

template <class T>
void unary_dispatch(UnaryOp op, double param, const View &a, const View &out) {
    const T s = T(param);
    switch (op) {
        case UnaryOp::scale:
            return unary_typed<T>(a, out, [s](T x) { return T(x * s); });
        // A NaN stays NaN (as in NumPy and torch): clamping it to 0 would hide where it came from.
        case UnaryOp::relu:
            return unary_typed<T>(a, out, [](T x) { return x > T(0) || x != x ? x : T(0); });
        case UnaryOp::gelu:
            return unary_typed<T>(a, out, [](T x) {
                const T k = T(0.7978845608028654);  // sqrt(2/pi)
                return T(T(0.5) * x * (T(1) + std::tanh(k * (x + T(0.044715) * x * x * x))));
            });
        case UnaryOp::silu:
            return unary_typed<T>(a, out, [](T x) { return T(x / (T(1) + std::exp(-x))); });
        case UnaryOp::exp:
            return unary_typed<T>(a, out, [](T x) { return T(std::exp(x)); });
        case UnaryOp::tanh:
            return unary_typed<T>(a, out, [](T x) { return T(std::tanh(x)); });
    }
}

// Moves elements as same-sized integers: no float conversion can alter a bit pattern.
template <class Word>
void copy_run(std::byte *const *p, int64_t n, const int64_t *s) {
    for (int64_t i = 0; i < n; ++i) std::memcpy(p[0] + i * s[0], p[1] + i * s[1], sizeof(Word));
}

}  // namespace

void binary_kernel(BinaryOp op, const View &a, const View &b, const View &out) {
    with_dtype(out.dtype, [&](auto zero) {
        using T = decltype(zero);
        with_binary_function<T>(op, [&](auto f) { binary_typed<T>(a, b, out, f); });
    });
}

void binary_contiguous(BinaryOp op, tl_dtype dt, const std::byte *a, const std::byte *b, std::byte *out, int64_t n) {
    with_dtype(dt, [&](auto zero) {
        using T = decltype(zero);
        with_binary_function<T>(op, [&](auto f) {
            binary_run(reinterpret_cast<T *>(out), reinterpret_cast<const T *>(a), reinterpret_cast<const T *>(b), n,
                       f);
        });
    });
}

void unary_kernel(UnaryOp op, double param, const View &a, const View &out) {
    with_float_dtype(out.dtype, [&](auto t) { unary_dispatch<decltype(t)>(op, param, a, out); });
}

// The value written once, then copied along: doubling up to a 4 KiB pattern, then that pattern
// (which stays in L1) at memcpy's speed, a few calls where a loop stored element by element.
void fill_contiguous(std::byte *data, tl_dtype dt, int64_t count, double value) {
    const size_t elem = dtype_size(dt), total = size_t(count) * elem;
    if (value == 0.0 && !std::signbit(value)) {  // +0 is all-zero bits in every element dtype
        std::memset(data, 0, total);
        return;
    }
    if (total == 0) return;
    if (dt == TL_F16 || dt == TL_BF16) {
        const uint16_t h = dt == TL_F16 ? float_to_f16(float(value)) : float_to_bf16(float(value));
        std::memcpy(data, &h, 2);
    } else {
        with_dtype(dt, [&](auto zero) {
            const auto typed_value = decltype(zero)(value);
            std::memcpy(data, &typed_value, elem);
        });
    }
    constexpr size_t kPattern = 4096;
    size_t filled = elem;
    while (filled < total && filled < kPattern) {
        const size_t n = std::min(filled, total - filled);
        std::memcpy(data + filled, data, n);
        filled += n;
    }
    for (const size_t pattern = filled; filled < total; filled += std::min(pattern, total - filled))
        std::memcpy(data + filled, data, std::min(pattern, total - filled));
}

void copy_kernel(const View &src, const View &dst) {
    const int64_t elem = int64_t(dtype_size(dst.dtype));
    strided_for_each<2>(dst.ndim, dst.shape, operands<2>({&dst, &src}),
                        [&](std::byte *const *p, int64_t n, const int64_t *s) {
                            if (s[0] == elem && s[1] == elem) {
                                std::memcpy(p[0], p[1], size_t(n * elem));
                                return;
                            }
                            if (elem == 2) return copy_run<uint16_t>(p, n, s);
                            if (elem == 4) return copy_run<uint32_t>(p, n, s);
                            copy_run<uint64_t>(p, n, s);
                        });
}

void convert_kernel(const View &src, const View &dst) {
    const bool half = dst.dtype == TL_F16;
    strided_for_each<2>(dst.ndim, dst.shape, operands<2>({&dst, &src}),
                        [&](std::byte *const *p, int64_t n, const int64_t *s) {
                            for (int64_t i = 0; i < n; ++i) {
                                const float x = *reinterpret_cast<const float *>(p[1] + i * s[1]);
                                const uint16_t h = half ? float_to_f16(x) : float_to_bf16(x);
                                std::memcpy(p[0] + i * s[0], &h, 2);
                            }
                        });
}

}  // namespace tl
