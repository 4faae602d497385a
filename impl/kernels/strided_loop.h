// One loop for every elementwise kernel: walks a shape with N operands at their own byte
// strides, and hands the body runs along the innermost dimension.  Dimensions of length 1 are
// dropped and dimensions that are contiguous for every operand are merged first, so a
// contiguous tensor becomes one run and the body's inner loop can vectorise.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>

#include "tensorlife/tl_base.h"

namespace tl {

template <size_t N>
struct Operands {
    std::array<std::byte *, N> data;
    std::array<const int64_t *, N> strides;  // in elements
    std::array<int64_t, N> elem_size;
};

// body(std::byte *const ptrs[N], int64_t count, const int64_t byte_strides[N])
template <size_t N, class Body>
void strided_for_each(int ndim, const int64_t *shape, const Operands<N> &ops, Body &&body) {
    int64_t sh[TL_MAX_DIMS];
    int64_t st[N][TL_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d < ndim; ++d)
        if (shape[d] == 0) return;  // no elements (and the strides of such a shape may be huge)
    for (int d = 0; d < ndim; ++d) {
        if (shape[d] == 1) continue;
        bool merge = nd > 0;
        for (size_t k = 0; k < N && merge; ++k)
            merge = st[k][nd - 1] == ops.strides[k][d] * ops.elem_size[k] * shape[d];
        if (merge) {
            sh[nd - 1] *= shape[d];
            for (size_t k = 0; k < N; ++k) st[k][nd - 1] = ops.strides[k][d] * ops.elem_size[k];
            continue;
        }
        sh[nd] = shape[d];
        for (size_t k = 0; k < N; ++k) st[k][nd] = ops.strides[k][d] * ops.elem_size[k];
        ++nd;
    }
    std::array<std::byte *, N> p = ops.data;
    int64_t inner_strides[N];
    if (nd == 0) {
        for (size_t k = 0; k < N; ++k) inner_strides[k] = 0;
        body(p.data(), int64_t(1), inner_strides);
        return;
    }
    const int inner = nd - 1;
    for (size_t k = 0; k < N; ++k) inner_strides[k] = st[k][inner];
    int64_t index[TL_MAX_DIMS] = {0};
    for (;;) {
        body(p.data(), sh[inner], inner_strides);
        int d = inner - 1;
        for (; d >= 0; --d) {
            for (size_t k = 0; k < N; ++k) p[k] += st[k][d];
            if (++index[d] < sh[d]) break;
            for (size_t k = 0; k < N; ++k) p[k] -= st[k][d] * sh[d];
            index[d] = 0;
        }
        if (d < 0) return;
    }
}

}  // namespace tl
