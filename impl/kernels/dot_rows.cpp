// The dot products of one activation row with rows of weights in a storage dtype (f16, bf16,
// q8_0, q4_0), one source compiled for every instruction set Highway targets and chosen at run
// time (AVX2, AVX-512, NEON, SVE, ...; scalar elsewhere).  Each weight row is read where it lies
// and decoded in registers.  Rows go four at a time (the activations loaded once for four rows,
// eight accumulators in flight, one call and one final reduction per four rows), but each row's
// sum runs in the same order alone or in a group: even blocks into one accumulator, odd into a
// second, added at the end.  So the order of every addition depends on n and the CPU's target
// alone, and a row gives the same bits at any offset, in any storage, on any thread.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/dot_rows.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/cache_control.h>
#include <hwy/highway.h>

#include <cstring>
#include <type_traits>

#include "kernels/half.h"
#include "kernels/quant.h"

#ifndef TL_DOT_ROWS_SHARED_  // once, not per target: this file is compiled again for each
#  define TL_DOT_ROWS_SHARED_
namespace tl {
namespace {

// Every f16 value as f32, made once when the library loads (256 KiB): a block's scale is one
// load, not a decode with branches (ggml keeps the same table).
struct HalfTable {
    float value[65536];
    HalfTable() {
        for (uint32_t h = 0; h < 65536; ++h) value[h] = f16_to_float(uint16_t(h));
    }
};
const HalfTable kHalves;

}  // namespace

inline float half_scale(const uint8_t *block) {
    uint16_t h;
    std::memcpy(&h, block, 2);
    return kHalves.value[h];
}

}  // namespace tl
#endif

HWY_BEFORE_NAMESPACE();
namespace tl {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Rows [0, nrows) at base + r * row_bytes, `blocks` blocks each: out[r] = Finish(r, the sum of
// Step(row, b, acc) over the row's blocks).  Step adds block b of a row into an accumulator.
template <class D, class Step, class Finish>
HWY_INLINE void OverRows(D d, int64_t blocks, const uint8_t *base, size_t row_bytes, int64_t nrows, Step step,
                         Finish finish) {
    int64_t r = 0;
    for (; r + 4 <= nrows; r += 4) {
        const uint8_t *w0 = base + r * row_bytes, *w1 = w0 + row_bytes, *w2 = w1 + row_bytes, *w3 = w2 + row_bytes;
        auto e0 = hn::Zero(d), o0 = e0, e1 = e0, o1 = e0, e2 = e0, o2 = e0, e3 = e0, o3 = e0;
        // The rows two groups ahead, asked for a little each step, so the loads of a compute-heavy
        // format (q4_0) overlap its arithmetic instead of waiting on DRAM (measured: 1 and 4
        // groups ahead no better, bench/README.md).
        const uint8_t *ahead = w0 + 2 * 4 * row_bytes;
        const size_t ahead_step = blocks >= 2 ? 4 * row_bytes / size_t(blocks / 2) + 1 : 0;
        int64_t b = 0;
        for (; b + 2 <= blocks; b += 2) {
            hwy::Prefetch(ahead), hwy::Prefetch(ahead + 64), ahead += ahead_step;
            e0 = step(w0, b, e0), e1 = step(w1, b, e1), e2 = step(w2, b, e2), e3 = step(w3, b, e3);
            o0 = step(w0, b + 1, o0), o1 = step(w1, b + 1, o1), o2 = step(w2, b + 1, o2), o3 = step(w3, b + 1, o3);
        }
        if (b < blocks) e0 = step(w0, b, e0), e1 = step(w1, b, e1), e2 = step(w2, b, e2), e3 = step(w3, b, e3);
        finish(r, w0, hn::GetLane(hn::SumOfLanes(d, hn::Add(e0, o0))));
        finish(r + 1, w1, hn::GetLane(hn::SumOfLanes(d, hn::Add(e1, o1))));
        finish(r + 2, w2, hn::GetLane(hn::SumOfLanes(d, hn::Add(e2, o2))));
        finish(r + 3, w3, hn::GetLane(hn::SumOfLanes(d, hn::Add(e3, o3))));
    }
    for (; r < nrows; ++r) {  // the same order for a row alone
        const uint8_t *w = base + r * row_bytes;
        auto e = hn::Zero(d), o = e;
        int64_t b = 0;
        for (; b + 2 <= blocks; b += 2) e = step(w, b, e), o = step(w, b + 1, o);
        if (b < blocks) e = step(w, b, e);
        finish(r, w, hn::GetLane(hn::SumOfLanes(d, hn::Add(e, o))));
    }
}

// ---- f16 and bf16 against f32 activations: 32 elements a step, a scalar tail ------------------

// At most 16 lanes of f32: 32 elements are whole vectors on every target.
using DF = hn::CappedTag<float, 16>;

template <class T>
void DotHalves(const float *HWY_RESTRICT x, const uint8_t *HWY_RESTRICT base, size_t row_bytes, int64_t nrows,
               int64_t n, float *HWY_RESTRICT out) {
    const DF df;
    const hn::Rebind<T, DF> dh;
    const size_t lanes = hn::Lanes(df);
    const auto step = [&](const uint8_t *row, int64_t b, hn::Vec<DF> acc) {
        const T *h = reinterpret_cast<const T *>(row) + b * 32;
        const float *xb = x + b * 32;
        for (size_t i = 0; i < 32; i += lanes) acc = hn::MulAdd(hn::PromoteTo(df, hn::LoadU(dh, h + i)), hn::LoadU(df, xb + i), acc);
        return acc;
    };
    const auto finish = [&](int64_t r, const uint8_t *row, float body) {
        float tail = 0;  // the last n % 32 elements, one by one
        for (int64_t i = n / 32 * 32; i < n; ++i) {
            uint16_t bits;
            std::memcpy(&bits, row + 2 * i, 2);
            tail += x[i] * (std::is_same<T, hwy::float16_t>::value ? f16_to_float(bits) : bf16_to_float(bits));
        }
        out[r] = body + tail;
    };
    OverRows(df, n / 32, base, row_bytes, nrows, step, finish);
}

void DotF16(const float *x, const uint8_t *base, size_t row_bytes, int64_t nrows, int64_t n, float *out) {
    DotHalves<hwy::float16_t>(x, base, row_bytes, nrows, n, out);
}
void DotBF16(const float *x, const uint8_t *base, size_t row_bytes, int64_t nrows, int64_t n, float *out) {
    DotHalves<hwy::bfloat16_t>(x, base, row_bytes, nrows, n, out);
}

// ---- q8_0 and q4_0 against activations quantized per block (Q8Activations) --------------------
// A block's 32 products are summed exactly in int32 lanes (pairs of int16 products: vpmaddwd on
// x86, smlal on NEON), then scaled by the two scales into the row's f32 accumulator.  Nibbles
// are unpacked once per block; no element of either side is converted to float.
using D16 = hn::CappedTag<int16_t, 16>;
using D32 = hn::Repartition<int32_t, D16>;
using DF32 = hn::Repartition<float, D16>;

template <class V16, class V32>
HWY_INLINE V32 MulPairs(V16 w, V16 x, V32 acc) {
    const D32 d32;
    auto odd = hn::Zero(d32);  // NEON's second half of the pairs; x86 sums them in acc
    acc = hn::ReorderWidenMulAccumulate(d32, w, x, acc, odd);
    return hn::Add(acc, odd);
}

template <class V32, class V>
HWY_INLINE V ScaleInto(const uint8_t *block, float xd, V32 sum, V acc) {
    const DF32 df;
    return hn::MulAdd(hn::Set(df, half_scale(block)), hn::Mul(hn::ConvertTo(df, sum), hn::Set(df, xd)), acc);
}

void DotQ8_0(const int16_t *HWY_RESTRICT xq, const float *HWY_RESTRICT xd, const uint8_t *HWY_RESTRICT base,
             size_t row_bytes, int64_t nrows, int64_t n, float *HWY_RESTRICT out) {
    const D16 d16;
    const hn::Rebind<int8_t, D16> d8;
    const size_t lanes = hn::Lanes(d16);
    const auto step = [&](const uint8_t *row, int64_t b, hn::Vec<DF32> acc) {
        const uint8_t *block = row + b * int64_t(kQ8Bytes);
        const int8_t *q = reinterpret_cast<const int8_t *>(block + 2);
        const int16_t *xb = xq + b * kQuantBlock;
        auto sum = hn::Zero(D32());
        for (size_t j = 0; j < size_t(kQuantBlock); j += lanes)
            sum = MulPairs(hn::PromoteTo(d16, hn::LoadU(d8, q + j)), hn::LoadU(d16, xb + j), sum);
        return ScaleInto(block, xd[b], sum, acc);
    };
    OverRows(DF32(), n / kQuantBlock, base, row_bytes, nrows, step,
             [&](int64_t r, const uint8_t *, float sum) { out[r] = sum; });
}

void DotQ4_0(const int16_t *HWY_RESTRICT xq, const float *HWY_RESTRICT xd, const uint8_t *HWY_RESTRICT base,
             size_t row_bytes, int64_t nrows, int64_t n, float *HWY_RESTRICT out) {
    const D16 d16;
    const hn::Rebind<uint8_t, D16> du8;
    const size_t lanes = hn::Lanes(d16);
    const auto eight = hn::Set(d16, 8), low_mask = hn::Set(d16, 0xf);
    const auto step = [&](const uint8_t *row, int64_t b, hn::Vec<DF32> acc) {
        const uint8_t *block = row + b * int64_t(kQ4Bytes), *q = block + 2;
        const int16_t *xb = xq + b * kQuantBlock;
        auto sum = hn::Zero(D32());
        for (size_t j = 0; j < size_t(kQuantBlock) / 2; j += lanes) {  // bytes j..: elements j.. and j+16..
            const auto bytes = hn::BitCast(d16, hn::PromoteTo(hn::RebindToUnsigned<D16>(), hn::LoadU(du8, q + j)));
            sum = MulPairs(hn::Sub(hn::And(bytes, low_mask), eight), hn::LoadU(d16, xb + j), sum);
            sum = MulPairs(hn::Sub(hn::ShiftRight<4>(bytes), eight), hn::LoadU(d16, xb + j + 16), sum);
        }
        return ScaleInto(block, xd[b], sum, acc);
    };
    OverRows(DF32(), n / kQuantBlock, base, row_bytes, nrows, step,
             [&](int64_t r, const uint8_t *, float sum) { out[r] = sum; });
}

}  // namespace HWY_NAMESPACE
}  // namespace tl
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tl {

HWY_EXPORT(DotF16);
HWY_EXPORT(DotBF16);
HWY_EXPORT(DotQ8_0);
HWY_EXPORT(DotQ4_0);

void dot_rows(tl_dtype dt, const float *x, const std::byte *rows, size_t row_bytes, int64_t nrows, int64_t n,
              float *out) {
    const auto *r = reinterpret_cast<const uint8_t *>(rows);
    if (dt == TL_F16) return HWY_DYNAMIC_DISPATCH(DotF16)(x, r, row_bytes, nrows, n, out);
    HWY_DYNAMIC_DISPATCH(DotBF16)(x, r, row_bytes, nrows, n, out);
}

void dot_rows_q8(tl_dtype dt, const Q8Activations &x, const std::byte *rows, size_t row_bytes, int64_t nrows,
                 int64_t n, float *out) {
    const auto *r = reinterpret_cast<const uint8_t *>(rows);
    if (dt == TL_Q8_0) return HWY_DYNAMIC_DISPATCH(DotQ8_0)(x.q, x.scale, r, row_bytes, nrows, n, out);
    HWY_DYNAMIC_DISPATCH(DotQ4_0)(x.q, x.scale, r, row_bytes, nrows, n, out);
}

const char *simd_target() {
    const int64_t targets = hwy::SupportedTargets() & HWY_TARGETS;
    return hwy::TargetName(targets & -targets);  // the lowest bit is the best target
}

}  // namespace tl
#endif
