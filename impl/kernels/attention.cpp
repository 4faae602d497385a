// Attention's numbers (ops/attention.cpp checks the operands and owns the scratch): for each
// head and query, the scores against the valid key rows, their softmax, the weighted sum of
// the value rows; in double, rounded once.
#include <cmath>

#include "kernels/half.h"
#include "kernels/kernels.h"

namespace tl {
namespace {

// A KV cache kept in f16 or bf16 (half the bytes a step reads): each element decoded exactly.
struct Half {
    uint16_t bits;
    explicit operator double() const { return f16_to_float(bits); }
};
struct BHalf {
    uint16_t bits;
    explicit operator double() const { return bf16_to_float(bits); }
};

// The dot product of n elements at strides sx and sy, in double, in 8 lanes (element d into
// lane d % 8) summed in a fixed order at the end: independent lanes let the loop pipeline and
// vectorise where one running sum waited on every add, and the order never depends on the
// strides, so strided and contiguous operands give the same bits.
template <class T, class K>
double lane_dot(const T *x, int64_t sx, const K *y, int64_t sy, int64_t n) {
    double lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int64_t d = 0;
    if (sx == 1 && sy == 1) {
        for (; d + 8 <= n; d += 8)
            for (int l = 0; l < 8; ++l) lane[l] += double(x[d + l]) * double(y[d + l]);
    } else {
        for (; d + 8 <= n; d += 8)
            for (int l = 0; l < 8; ++l) lane[l] += double(x[(d + l) * sx]) * double(y[(d + l) * sy]);
    }
    for (int l = 0; d < n; ++d, ++l) lane[l] += double(x[d * sx]) * double(y[d * sy]);
    return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

// Heads [h0, h1); each head's scores at scores + h * cache_rows and its hd sums at
// sums + h * hd, so heads run on any thread.
template <class T, class K>
void attend(const View &q, const View &k, const View &v, int64_t valid, double scale, double *all_scores,
            int64_t cache_rows, double *all_sums, const View &out, int64_t h0, int64_t h1) {
    const int64_t queries = q.shape[1], hd = q.shape[2];
    const T *qd = reinterpret_cast<const T *>(q.data);
    const K *kd = reinterpret_cast<const K *>(k.data), *vd = reinterpret_cast<const K *>(v.data);
    T *o = reinterpret_cast<T *>(out.data);
    const int64_t group = q.shape[0] / k.shape[0];  // query heads per key/value head
    for (int64_t h = h0; h < h1; ++h)
        for (int64_t i = 0; i < queries; ++i) {
            const int64_t kv = h / group;
            double *scores = all_scores + h * cache_rows, *sums = all_sums + h * hd;
            const T *qi = qd + h * q.strides[0] + i * q.strides[1];
            const int64_t rows = valid - queries + i + 1;  // query i sits at position valid - queries + i
            double top = -INFINITY;
            for (int64_t j = 0; j < rows; ++j) {
                scores[j] =
                    lane_dot(qi, q.strides[2], kd + kv * k.strides[0] + j * k.strides[1], k.strides[2], hd) * scale;
                if (scores[j] > top) top = scores[j];
            }
            double total = 0;
            for (int64_t j = 0; j < rows; ++j) total += scores[j] = std::exp(scores[j] - top);
            // Row by row over the values (each sum still adds its rows in order j = 0, 1, ...):
            // a value row is read along its own dimension, not down the cache.
            for (int64_t d = 0; d < hd; ++d) sums[d] = 0;
            for (int64_t j = 0; j < rows; ++j) {
                const K *vj = vd + kv * v.strides[0] + j * v.strides[1];
                const double w = scores[j];
                if (v.strides[2] == 1)
                    for (int64_t d = 0; d < hd; ++d) sums[d] += w * double(vj[d]);
                else
                    for (int64_t d = 0; d < hd; ++d) sums[d] += w * double(vj[d * v.strides[2]]);
            }
            T *oi = o + (h * queries + i) * hd;
            for (int64_t d = 0; d < hd; ++d) oi[d] = T(sums[d] / total);
        }
}

}  // namespace

void attention_kernel(const View &q, const View &k, const View &v, int64_t valid, double scale, double *scores,
                      int64_t cache_rows, double *sums, const View &out, int64_t h0, int64_t h1) {
    if (k.dtype == TL_F16) return attend<float, Half>(q, k, v, valid, scale, scores, cache_rows, sums, out, h0, h1);
    if (k.dtype == TL_BF16) return attend<float, BHalf>(q, k, v, valid, scale, scores, cache_rows, sums, out, h0, h1);
    with_float_dtype(q.dtype, [&](auto t) {
        using T = decltype(t);
        attend<T, T>(q, k, v, valid, scale, scores, cache_rows, sums, out, h0, h1);
    });
}

}  // namespace tl
