// Attention's numbers (ops/attention.cpp checks the operands and owns the scratch): for each
// head and query, the scores against the valid key rows, their softmax, the weighted sum of
// the value rows; in double, rounded once.
//
// The two inner loops (a query row against a key row, a value row into the sums) run on the
// SIMD target Highway picks at run time when the rows are contiguous, and as plain loops when
// they are strided; both paths compute exactly the same operations in the same order (eight
// dot-product lanes, element d in lane d % 8; each sum element on its own; a multiply, then an
// add, never fused: this file is built with -ffp-contract=off), so every layout gives the same
// bits on every target.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/attention.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include "kernels/widen-inl.h"

#include <cmath>
#include <type_traits>

#include "kernels/half.h"
#include "kernels/kernels.h"

#ifndef TL_ATTENTION_SHARED_  // once, not per target: this file is compiled again for each
#  define TL_ATTENTION_SHARED_
#  include <cstdint>
namespace tl {
// A cache's heads and rows: its strides, and the query heads per cache head.
struct HeadRows {
    int64_t head_stride, row_stride, group;
};
// A dot product's eight lanes added in their fixed order.
inline double lanes_total(const double *lane) {
    return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}
}  // namespace tl
#endif

HWY_BEFORE_NAMESPACE();
namespace tl {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Eight f64 lanes on every target: two vectors of 4 (256 bits: a few percent faster than one of
// 8 on Zen 4), four of 2 or eight of 1.
using D8 = hn::CappedTag<double, 4>;

// Lanes of p as f64, from f32, f64, f16 or bf16 (widen-inl.h).
template <class T>
HWY_INLINE hn::Vec<D8> Widen(const T *p) {
    return LoadWide(D8(), p);
}

// lane[l] = sum over d = l (mod 8), d < n / 8 * 8, of x[d] * y[d], each product rounded to
// double, then added (the plain loop's order).
template <class T, class K>
HWY_INLINE void DotLanes(const T *HWY_RESTRICT x, const K *HWY_RESTRICT y, int64_t n, double *lane) {
    const D8 d;
    const size_t lanes = hn::Lanes(d), vectors = 8 / lanes;  // 2, 4 or 8: always even
    // Two lane groups a pass (one pass on x86's 4 lanes; sizeless SVE vectors cannot form an
    // array), each lane's sum in the same order.
    for (size_t v = 0; v < vectors; v += 2) {
        auto lo = hn::Zero(d), hi = hn::Zero(d);
        for (int64_t i = 0; i + 8 <= n; i += 8) {
            lo = hn::Add(lo, hn::Mul(Widen(x + i + v * lanes), Widen(y + i + v * lanes)));
            hi = hn::Add(hi, hn::Mul(Widen(x + i + (v + 1) * lanes), Widen(y + i + (v + 1) * lanes)));
        }
        hn::StoreU(lo, d, lane + v * lanes);
        hn::StoreU(hi, d, lane + (v + 1) * lanes);
    }
}

// sums[i] += w * y[i] for i < n / lanes * lanes; returns where the plain loop goes on.
template <class K>
HWY_INLINE int64_t AddScaled(double w, const K *HWY_RESTRICT y, int64_t n, double *HWY_RESTRICT sums) {
    const D8 d;
    const int64_t lanes = int64_t(hn::Lanes(d));
    const auto wv = hn::Set(d, w);
    int64_t i = 0;
    for (; i + lanes <= n; i += lanes)
        hn::StoreU(hn::Add(hn::LoadU(d, sums + i), hn::Mul(wv, Widen(y + i))), d, sums + i);
    return i;
}

// Every head of [h0, h1) at once, key (value) rows in order, a row's heads one after another: a
// cache stored [rows, heads x hd] is then read as it lies, where a head at a time read 256 bytes
// of each row and skipped the rest (bench/README.md).  hd % 8 == 0 and contiguous rows: the
// vector loops cover every element.  Per head the operations and their order are lane_dot's
// and the per-head loop's, so the bits are the same.
template <class T, class K>
HWY_INLINE void ScoresOfHeads(const T *q, int64_t q_head, const K *k, HeadRows kr, int64_t h0, int64_t h1,
                              int64_t rows, int64_t hd, double scale, double *scores, int64_t scores_head) {
    for (int64_t j = 0; j < rows; ++j)
        for (int64_t h = h0; h < h1; ++h) {
            HWY_ALIGN double lane[8];
            DotLanes(q + h * q_head, k + (h / kr.group) * kr.head_stride + j * kr.row_stride, hd, lane);
            scores[h * scores_head + j] = lanes_total(lane) * scale;
        }
}
template <class K>
HWY_INLINE void ValuesOfHeads(const double *weights, int64_t weights_head, const K *v, HeadRows vr, int64_t h0,
                              int64_t h1, int64_t rows, int64_t hd, double *sums, int64_t sums_head) {
    for (int64_t j = 0; j < rows; ++j)
        for (int64_t h = h0; h < h1; ++h)
            AddScaled(weights[h * weights_head + j], v + (h / vr.group) * vr.head_stride + j * vr.row_stride, hd,
                      sums + h * sums_head);
}
#define TL_HEADS(Name, T, K)                                                                                 \
    void Scores##Name(const T *q, int64_t q_head, const K *k, HeadRows kr, int64_t h0, int64_t h1, int64_t rows, \
                      int64_t hd, double scale, double *scores, int64_t scores_head) {                       \
        ScoresOfHeads(q, q_head, k, kr, h0, h1, rows, hd, scale, scores, scores_head);                      \
    }                                                                                                        \
    void Values##Name(const double *w, int64_t w_head, const K *v, HeadRows vr, int64_t h0, int64_t h1,       \
                      int64_t rows, int64_t hd, double *sums, int64_t sums_head) {                           \
        ValuesOfHeads(w, w_head, v, vr, h0, h1, rows, hd, sums, sums_head);                                   \
    }
TL_HEADS(F32, float, float)
TL_HEADS(F64, double, double)
TL_HEADS(F16, float, hwy::float16_t)
TL_HEADS(BF16, float, hwy::bfloat16_t)
#undef TL_HEADS

// A prompt's queries against one head's key and value rows widened to f64 once (the wide path of
// attend): per query, four keys a pass sharing each load of the query, each key's eight lanes the
// sums DotLanes makes (element d into lane d % 8, in order of d; here a fused multiply-add, which
// gives DotLanes' bits: the rows hold f32 values, whose products f64 holds exactly, so only the
// add rounds either way); the values' sums each over the rows in order, a multiply then an add,
// as AddScaled makes them.  The same results, so the same bits.  hd % 8 == 0.  Sizeless vectors
// (SVE, RVV) form no arrays: there a key at a time through DotLanes and AddScaled themselves.
#if HWY_HAVE_SCALABLE
void ScoresWide(const double *const *q, int Q, const double *k, int64_t rows, int64_t hd, double scale,
                double *const *scores) {
    for (int i = 0; i < Q; ++i)
        for (int64_t j = 0; j < rows; ++j) {
            HWY_ALIGN double lane[8];
            DotLanes(q[i], k + j * hd, hd, lane);
            scores[i][j] = lanes_total(lane) * scale;
        }
}
void ValuesWide(const double *const *w, int Q, const double *v, int64_t rows, int64_t hd, double *const *sums) {
    for (int i = 0; i < Q; ++i)
        for (int64_t j = 0; j < rows; ++j) AddScaled(w[i][j], v + j * hd, hd, sums[i]);
}
#else
constexpr size_t kWideLanes = hn::MaxLanes(D8()), kWideVectors = 8 / kWideLanes;  // 1 to 4 lanes: all the eight
// Q queries against K keys, each load of a query or key row shared by the others.
template <int Q, int K>
HWY_INLINE void ScoresOfKeys(const double *const *q, const double *k, int64_t hd, double scale, double *const *scores,
                             int64_t j) {
    const D8 d;
    hn::Vec<D8> acc[Q][K][kWideVectors];
#pragma GCC unroll 2
    for (int u = 0; u < Q; ++u)
#pragma GCC unroll 4
        for (int t = 0; t < K; ++t)
#pragma GCC unroll 8
            for (size_t v = 0; v < kWideVectors; ++v) acc[u][t][v] = hn::Zero(d);
    for (int64_t i = 0; i < hd; i += 8)
#pragma GCC unroll 8
        for (size_t v = 0; v < kWideVectors; ++v) {
            hn::Vec<D8> kv[K];
#pragma GCC unroll 4
            for (int t = 0; t < K; ++t) kv[t] = hn::LoadU(d, k + t * hd + i + v * kWideLanes);
#pragma GCC unroll 2
            for (int u = 0; u < Q; ++u) {
                const auto qv = hn::LoadU(d, q[u] + i + v * kWideLanes);
#pragma GCC unroll 4
                for (int t = 0; t < K; ++t) acc[u][t][v] = hn::MulAdd(qv, kv[t], acc[u][t][v]);
            }
        }
    for (int u = 0; u < Q; ++u) {
        for (int t = 0; t < K; ++t) {
            HWY_ALIGN double lane[8];
            for (size_t v = 0; v < kWideVectors; ++v) hn::Store(acc[u][t][v], d, lane + v * kWideLanes);
            scores[u][j + t] = lanes_total(lane) * scale;
        }
    }
}
// Keys a pass: four for one query; for two, as many as the registers hold (32 vectors on AVX-512).
template <int Q>
HWY_INLINE void ScoresOfQueries(const double *const *q, const double *k, int64_t rows, int64_t hd, double scale,
                                double *const *scores) {
    constexpr int kKeys = Q == 1 || HWY_TARGET <= HWY_AVX3 ? 4 : 2;
    int64_t j = 0;
    for (; j + kKeys <= rows; j += kKeys) ScoresOfKeys<Q, kKeys>(q, k + j * hd, hd, scale, scores, j);
    for (; j < rows; ++j) ScoresOfKeys<Q, 1>(q, k + j * hd, hd, scale, scores, j);
}
void ScoresWide(const double *const *q, int Q, const double *k, int64_t rows, int64_t hd, double scale,
                double *const *scores) {
    if (Q == 2) return ScoresOfQueries<2>(q, k, rows, hd, scale, scores);
    ScoresOfQueries<1>(q, k, rows, hd, scale, scores);
}
// Q queries' sums over the same value rows, each load of a row shared.
template <int Q>
HWY_INLINE void ValuesOfQueries(const double *const *w, const double *v, int64_t rows, int64_t hd, double *const *sums) {
    const D8 d;
    constexpr int64_t kChunk = 4 * int64_t(kWideLanes);  // four vectors of sums a pass over the rows
    int64_t d0 = 0;
    for (; d0 + kChunk <= hd; d0 += kChunk) {
        hn::Vec<D8> sum[Q][4];
#pragma GCC unroll 2
        for (int u = 0; u < Q; ++u)
#pragma GCC unroll 4
            for (int c = 0; c < 4; ++c) sum[u][c] = hn::LoadU(d, sums[u] + d0 + c * kWideLanes);
        for (int64_t j = 0; j < rows; ++j) {
            hn::Vec<D8> vv[4];
#pragma GCC unroll 4
            for (int c = 0; c < 4; ++c) vv[c] = hn::LoadU(d, v + j * hd + d0 + c * kWideLanes);
#pragma GCC unroll 2
            for (int u = 0; u < Q; ++u) {
                const auto wv = hn::Set(d, w[u][j]);
#pragma GCC unroll 4
                for (int c = 0; c < 4; ++c) sum[u][c] = hn::Add(sum[u][c], hn::Mul(wv, vv[c]));
            }
        }
#pragma GCC unroll 2
        for (int u = 0; u < Q; ++u)
#pragma GCC unroll 4
            for (int c = 0; c < 4; ++c) hn::StoreU(sum[u][c], d, sums[u] + d0 + c * kWideLanes);
    }
    if (d0 < hd)  // the rest
        for (int u = 0; u < Q; ++u)
            for (int64_t j = 0; j < rows; ++j) AddScaled(w[u][j], v + j * hd + d0, hd - d0, sums[u] + d0);
}
void ValuesWide(const double *const *w, int Q, const double *v, int64_t rows, int64_t hd, double *const *sums) {
    if (Q == 2) return ValuesOfQueries<2>(w, v, rows, hd, sums);
    ValuesOfQueries<1>(w, v, rows, hd, sums);
}
#endif

void LaneDotF32(const float *x, const float *y, int64_t n, double *lane) { DotLanes(x, y, n, lane); }
void LaneDotF64(const double *x, const double *y, int64_t n, double *lane) { DotLanes(x, y, n, lane); }
void LaneDotF16(const float *x, const hwy::float16_t *y, int64_t n, double *lane) { DotLanes(x, y, n, lane); }
void LaneDotBF16(const float *x, const hwy::bfloat16_t *y, int64_t n, double *lane) { DotLanes(x, y, n, lane); }
int64_t LaneAxpyF32(double w, const float *y, int64_t n, double *sums) { return AddScaled(w, y, n, sums); }
int64_t LaneAxpyF64(double w, const double *y, int64_t n, double *sums) { return AddScaled(w, y, n, sums); }
int64_t LaneAxpyF16(double w, const hwy::float16_t *y, int64_t n, double *sums) { return AddScaled(w, y, n, sums); }
int64_t LaneAxpyBF16(double w, const hwy::bfloat16_t *y, int64_t n, double *sums) { return AddScaled(w, y, n, sums); }

}  // namespace HWY_NAMESPACE
}  // namespace tl
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tl {

HWY_EXPORT(ScoresWide);
HWY_EXPORT(ValuesWide);
HWY_EXPORT(LaneDotF32);
HWY_EXPORT(LaneDotF64);
HWY_EXPORT(LaneDotF16);
HWY_EXPORT(LaneDotBF16);
HWY_EXPORT(LaneAxpyF32);
HWY_EXPORT(LaneAxpyF64);
HWY_EXPORT(LaneAxpyF16);
HWY_EXPORT(LaneAxpyBF16);
HWY_EXPORT(ScoresF32);
HWY_EXPORT(ScoresF64);
HWY_EXPORT(ScoresF16);
HWY_EXPORT(ScoresBF16);
HWY_EXPORT(ValuesF32);
HWY_EXPORT(ValuesF64);
HWY_EXPORT(ValuesF16);
HWY_EXPORT(ValuesBF16);

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

// The SIMD loops by operand types (Highway's element types for the halves).
void dot_lanes(const float *x, const float *y, int64_t n, double *lane) { HWY_DYNAMIC_DISPATCH(LaneDotF32)(x, y, n, lane); }
void dot_lanes(const double *x, const double *y, int64_t n, double *lane) {
    HWY_DYNAMIC_DISPATCH(LaneDotF64)(x, y, n, lane);
}
void dot_lanes(const float *x, const Half *y, int64_t n, double *lane) {
    HWY_DYNAMIC_DISPATCH(LaneDotF16)(x, reinterpret_cast<const hwy::float16_t *>(y), n, lane);
}
void dot_lanes(const float *x, const BHalf *y, int64_t n, double *lane) {
    HWY_DYNAMIC_DISPATCH(LaneDotBF16)(x, reinterpret_cast<const hwy::bfloat16_t *>(y), n, lane);
}
int64_t add_scaled(double w, const float *y, int64_t n, double *sums) {
    return HWY_DYNAMIC_DISPATCH(LaneAxpyF32)(w, y, n, sums);
}
int64_t add_scaled(double w, const double *y, int64_t n, double *sums) {
    return HWY_DYNAMIC_DISPATCH(LaneAxpyF64)(w, y, n, sums);
}
int64_t add_scaled(double w, const Half *y, int64_t n, double *sums) {
    return HWY_DYNAMIC_DISPATCH(LaneAxpyF16)(w, reinterpret_cast<const hwy::float16_t *>(y), n, sums);
}
int64_t add_scaled(double w, const BHalf *y, int64_t n, double *sums) {
    return HWY_DYNAMIC_DISPATCH(LaneAxpyBF16)(w, reinterpret_cast<const hwy::bfloat16_t *>(y), n, sums);
}

// Q (1 or 2) queries' scores over the same key rows, their sums over the same value rows.
void scores_wide(const double *const *q, int Q, const double *k, int64_t rows, int64_t hd, double scale,
                 double *const *scores) {
    HWY_DYNAMIC_DISPATCH(ScoresWide)(q, Q, k, rows, hd, scale, scores);
}
void values_wide(const double *const *w, int Q, const double *v, int64_t rows, int64_t hd, double *const *sums) {
    HWY_DYNAMIC_DISPATCH(ValuesWide)(w, Q, v, rows, hd, sums);
}

// The heads-at-once loops by operand types.
#define TL_HEADS_CALLS(Name, T, K, HK)                                                                        \
    void scores_of_heads(const T *q, int64_t q_head, const K *k, HeadRows kr, int64_t h0, int64_t h1,        \
                         int64_t rows, int64_t hd, double scale, double *scores, int64_t scores_head) {      \
        HWY_DYNAMIC_DISPATCH(Scores##Name)(q, q_head, reinterpret_cast<const HK *>(k), kr, h0, h1, rows, hd, \
                                           scale, scores, scores_head);                                      \
    }                                                                                                         \
    void values_of_heads(const double *w, int64_t w_head, const K *v, HeadRows vr, int64_t h0, int64_t h1,   \
                         int64_t rows, int64_t hd, double *sums, int64_t sums_head) {                        \
        HWY_DYNAMIC_DISPATCH(Values##Name)(w, w_head, reinterpret_cast<const HK *>(v), vr, h0, h1, rows, hd, \
                                           sums, sums_head);                                                 \
    }
TL_HEADS_CALLS(F32, float, float, float)
TL_HEADS_CALLS(F64, double, double, double)
TL_HEADS_CALLS(F16, float, Half, hwy::float16_t)
TL_HEADS_CALLS(BF16, float, BHalf, hwy::bfloat16_t)
#undef TL_HEADS_CALLS

// The dot product of n elements at strides sx and sy, in double, in 8 lanes (element d into
// lane d % 8) summed in a fixed order at the end: independent lanes let the loop pipeline and
// vectorise where one running sum waited on every add, and the order never depends on the
// strides, so strided and contiguous operands give the same bits.
template <class T, class K>
double lane_dot(const T *x, int64_t sx, const K *y, int64_t sy, int64_t n) {
    double lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int64_t d = n / 8 * 8;
    if (sx == 1 && sy == 1) {
        dot_lanes(x, y, n, lane);
    } else {
        for (int64_t i = 0; i < d; i += 8)
            for (int l = 0; l < 8; ++l) lane[l] += double(x[(i + l) * sx]) * double(y[(i + l) * sy]);
    }
    for (int l = 0; d < n; ++d, ++l) lane[l] += double(x[d * sx]) * double(y[d * sy]);
    return lanes_total(lane);
}

// The softmax's numerators in place, scores[j] = exp(scores[j] - their maximum) for j < rows, and
// their total, added in order j = 0, 1, ... (as each is made: the adds wait on no loop of their own).
inline double exponentials(double *scores, int64_t rows) {
    double top = -INFINITY;
    for (int64_t j = 0; j < rows; ++j)
        if (scores[j] > top) top = scores[j];
    double total = 0;
    for (int64_t j = 0; j < rows; ++j) total += scores[j] = std::exp(scores[j] - top);
    return total;
}
// The exponentials' total again, added in the same order.
inline double total_of(const double *scores, int64_t rows) {
    double total = 0;
    for (int64_t j = 0; j < rows; ++j) total += scores[j];
    return total;
}
// A query's output, rounded once: oi[d] = sums[d] / total (its exponentials' total).
template <class T>
void normalized(double total, const double *sums, int64_t hd, T *oi) {
    for (int64_t d = 0; d < hd; ++d) oi[d] = T(sums[d] / total);
}

// Heads [h0, h1); each head's scores at scores + h * cache_rows and its hd sums at
// sums + h * hd, so heads run on any thread.
template <class T, class K>
void attend(const View &q, const View &k, const View &v, int64_t valid, double scale, double *all_scores,
            int64_t cache_rows, double *all_sums, double *wide, const View &out, int64_t h0, int64_t h1) {
    const int64_t queries = q.shape[1], hd = q.shape[2];
    const T *qd = reinterpret_cast<const T *>(q.data);
    const K *kd = reinterpret_cast<const K *>(k.data), *vd = reinterpret_cast<const K *>(v.data);
    T *o = reinterpret_cast<T *>(out.data);
    const int64_t group = q.shape[0] / k.shape[0];  // query heads per key/value head
    if (wide && q.strides[2] == 1 && k.strides[2] == 1 && v.strides[2] == 1 && hd % 8 == 0) {
        // A prompt's queries, head by head: the valid key and value rows of the heads' cache head
        // widened to f64 once into wide (once for the group of query heads reading it); queries
        // two at a time over the rows both see (the second's last row on its own after them), so
        // each row read serves both, each query at its sums' place until the values need them.
        // wide: the rows (2 x valid x hd), then the second query's scores and sums.
        double *wk = wide, *wv = wide + valid * hd;
        for (int64_t h = h0; h < h1; ++h) {
            const int64_t kv = h / group;
            for (int64_t j = 0; (h == h0 || kv != (h - 1) / group) && j < valid; ++j)
                for (int64_t d = 0; d < hd; ++d) {
                    wk[j * hd + d] = double(kd[kv * k.strides[0] + j * k.strides[1] + d]);
                    wv[j * hd + d] = double(vd[kv * v.strides[0] + j * v.strides[1] + d]);
                }
            double *const scores[2] = {all_scores + h * cache_rows, wide + 2 * valid * hd};
            double *const sums[2] = {all_sums + h * hd, scores[1] + valid};
            for (int64_t i = 0; i < queries; i += 2) {
                const int Q = i + 1 < queries ? 2 : 1;
                const int64_t rows = valid - queries + i + 1;  // query i sits at position valid - queries + i
                for (int u = 0; u < Q; ++u) {
                    const T *qi = qd + h * q.strides[0] + (i + u) * q.strides[1];
                    for (int64_t d = 0; d < hd; ++d) sums[u][d] = double(qi[d]);
                }
                scores_wide(sums, Q, wk, rows, hd, scale, scores);
                double *const last[1] = {scores[1] + rows};
                if (Q == 2) scores_wide(sums + 1, 1, wk + rows * hd, 1, hd, scale, last);
                double total[2];
                for (int u = 0; u < Q; ++u) {
                    total[u] = exponentials(scores[u], rows + u);
                    for (int64_t d = 0; d < hd; ++d) sums[u][d] = 0;
                }
                values_wide(scores, Q, wv, rows, hd, sums);
                if (Q == 2) values_wide(last, 1, wv + rows * hd, 1, hd, sums + 1);
                for (int u = 0; u < Q; ++u) normalized(total[u], sums[u], hd, o + (h * queries + i + u) * hd);
            }
        }
        return;
    }
    if (q.strides[2] == 1 && k.strides[2] == 1 && v.strides[2] == 1 && hd % 8 == 0) {
        for (int64_t i = 0; i < queries; ++i) {
            const int64_t rows = valid - queries + i + 1;  // query i sits at position valid - queries + i
            scores_of_heads(qd + i * q.strides[1], q.strides[0], kd, HeadRows{k.strides[0], k.strides[1], group}, h0,
                            h1, rows, hd, scale, all_scores, cache_rows);
            for (int64_t h = h0; h < h1; ++h) {
                exponentials(all_scores + h * cache_rows, rows);
                for (int64_t d = 0; d < hd; ++d) all_sums[h * hd + d] = 0;
            }
            values_of_heads(all_scores, cache_rows, vd, HeadRows{v.strides[0], v.strides[1], group}, h0, h1, rows, hd,
                            all_sums, hd);
            for (int64_t h = h0; h < h1; ++h)
                normalized(total_of(all_scores + h * cache_rows, rows), all_sums + h * hd, hd, o + (h * queries + i) * hd);
        }
        return;
    }
    for (int64_t h = h0; h < h1; ++h)
        for (int64_t i = 0; i < queries; ++i) {
            const int64_t kv = h / group;
            double *scores = all_scores + h * cache_rows, *sums = all_sums + h * hd;
            const T *qi = qd + h * q.strides[0] + i * q.strides[1];
            const int64_t rows = valid - queries + i + 1;  // query i sits at position valid - queries + i
            for (int64_t j = 0; j < rows; ++j)
                scores[j] =
                    lane_dot(qi, q.strides[2], kd + kv * k.strides[0] + j * k.strides[1], k.strides[2], hd) * scale;
            const double total = exponentials(scores, rows);
            // Row by row over the values (each sum still adds its rows in order j = 0, 1, ...):
            // a value row is read along its own dimension, not down the cache.
            for (int64_t d = 0; d < hd; ++d) sums[d] = 0;
            for (int64_t j = 0; j < rows; ++j) {
                const K *vj = vd + kv * v.strides[0] + j * v.strides[1];
                const double w = scores[j];
                const int64_t s = v.strides[2];
                for (int64_t d = s == 1 ? add_scaled(w, vj, hd, sums) : 0; d < hd; ++d)
                    sums[d] += w * double(vj[d * s]);
            }
            normalized(total, sums, hd, o + (h * queries + i) * hd);
        }
}

}  // namespace

void attention_kernel(const View &q, const View &k, const View &v, int64_t valid, double scale, double *scores,
                      int64_t cache_rows, double *sums, double *wide, const View &out, int64_t h0, int64_t h1) {
    if (k.dtype == TL_F16) return attend<float, Half>(q, k, v, valid, scale, scores, cache_rows, sums, nullptr, out, h0, h1);
    if (k.dtype == TL_BF16) return attend<float, BHalf>(q, k, v, valid, scale, scores, cache_rows, sums, nullptr, out, h0, h1);
    with_float_dtype(q.dtype, [&](auto t) {
        using T = decltype(t);
        attend<T, T>(q, k, v, valid, scale, scores, cache_rows, sums, std::is_same<T, float>::value ? wide : nullptr, out,
                     h0, h1);
    });
}

}  // namespace tl
#endif
