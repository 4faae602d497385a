// The dot products of f32 activations with rows of weights in a storage dtype (f16, bf16,
// q8_0, q4_0), one source compiled for every instruction set Highway targets and chosen at run
// time (AVX2, AVX-512, NEON, SVE, ...; scalar elsewhere).  Each row is read where it lies and
// decoded in registers; a q8_0/q4_0 block's products are summed in lanes, then scaled into the
// row's accumulator.  The order of every addition depends on n and the CPU's target alone, so a
// row gives the same bits at any offset, in any storage, on any thread.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/dot_rows.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

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

// At most 16 lanes of f32: a block's 32 elements are whole vectors on every target.
using DF = hn::CappedTag<float, 16>;

// One block's products, scaled into acc.
template <class D, class V>
HWY_INLINE V Q8Block(D df, const uint8_t *HWY_RESTRICT block, const float *HWY_RESTRICT xb, V acc) {
    const hn::RebindToSigned<D> di;
    const hn::Rebind<int8_t, D> d8;
    const int8_t *q = reinterpret_cast<const int8_t *>(block + 2);
    auto sum = hn::Zero(df);
    for (size_t j = 0; j < size_t(kQuantBlock); j += hn::Lanes(df))
        sum = hn::MulAdd(hn::ConvertTo(df, hn::PromoteTo(di, hn::LoadU(d8, q + j))), hn::LoadU(df, xb + j), sum);
    return hn::MulAdd(hn::Set(df, half_scale(block)), sum, acc);
}

template <class D, class V>
HWY_INLINE V Q4Block(D df, const uint8_t *HWY_RESTRICT block, const float *HWY_RESTRICT xb, V acc) {
    const hn::RebindToSigned<D> di;
    const hn::Rebind<uint8_t, D> du8;
    const auto eight = hn::Set(di, 8), low_mask = hn::Set(di, 0xf);
    const uint8_t *q = block + 2;
    auto sum = hn::Zero(df);
    for (size_t j = 0; j < size_t(kQuantBlock) / 2; j += hn::Lanes(df)) {  // bytes j..: elements j.. and j+16..
        const auto bytes = hn::BitCast(di, hn::PromoteTo(hn::RebindToUnsigned<D>(), hn::LoadU(du8, q + j)));
        sum = hn::MulAdd(hn::ConvertTo(df, hn::Sub(hn::And(bytes, low_mask), eight)), hn::LoadU(df, xb + j), sum);
        sum = hn::MulAdd(hn::ConvertTo(df, hn::Sub(hn::ShiftRight<4>(bytes), eight)), hn::LoadU(df, xb + j + 16), sum);
    }
    return hn::MulAdd(hn::Set(df, half_scale(block)), sum, acc);
}

template <class T, class D, class V>
HWY_INLINE V HalvesGroup(D df, const T *HWY_RESTRICT h, const float *HWY_RESTRICT x, V acc) {
    const hn::Rebind<T, D> dh;
    for (size_t i = 0; i < 32; i += hn::Lanes(df))
        acc = hn::MulAdd(hn::PromoteTo(df, hn::LoadU(dh, h + i)), hn::LoadU(df, x + i), acc);
    return acc;
}

// Blocks (groups of 32) in four accumulators, so that consecutive blocks' additions do not wait
// on each other (one chain of fused multiply-adds would bound a row at one block per FMA
// latency); the accumulators are added in a fixed order at the end.
#define TL_OVER_BLOCKS(blocks, STEP)                 \
  const DF df;                                       \
  auto a0 = hn::Zero(df), a1 = a0, a2 = a0, a3 = a0; \
  int64_t b = 0;                                     \
  for (; b + 4 <= (blocks); b += 4) {                \
    a0 = STEP(b, a0);                                \
    a1 = STEP(b + 1, a1);                            \
    a2 = STEP(b + 2, a2);                            \
    a3 = STEP(b + 3, a3);                            \
  }                                                  \
  for (; b < (blocks); ++b) a0 = STEP(b, a0);        \
  const float body = hn::GetLane(hn::SumOfLanes(df, hn::Add(hn::Add(a0, a1), hn::Add(a2, a3))))

float DotQ8_0(const float *HWY_RESTRICT x, const uint8_t *HWY_RESTRICT row, int64_t n) {
#define TL_Q8_STEP(i, acc) Q8Block(df, row + (i)*int64_t(kQ8Bytes), x + (i)*kQuantBlock, acc)
    TL_OVER_BLOCKS(n / kQuantBlock, TL_Q8_STEP);
#undef TL_Q8_STEP
    return body;
}

float DotQ4_0(const float *HWY_RESTRICT x, const uint8_t *HWY_RESTRICT row, int64_t n) {
#define TL_Q4_STEP(i, acc) Q4Block(df, row + (i)*int64_t(kQ4Bytes), x + (i)*kQuantBlock, acc)
    TL_OVER_BLOCKS(n / kQuantBlock, TL_Q4_STEP);
#undef TL_Q4_STEP
    return body;
}

// Integer products, for activations quantized once per row to 8-bit blocks (Q8Activations): a
// block's 32 products are summed exactly in int32 lanes (pairs of int16 products, vpmaddwd on
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

template <class V>
HWY_INLINE V Q8Q8Block(const uint8_t *HWY_RESTRICT block, const int16_t *HWY_RESTRICT xq, float xd, V acc) {
    const D16 d16;
    const hn::Rebind<int8_t, D16> d8;
    const int8_t *q = reinterpret_cast<const int8_t *>(block + 2);
    auto sum = hn::Zero(D32());
    for (size_t j = 0; j < size_t(kQuantBlock); j += hn::Lanes(d16))
        sum = MulPairs(hn::PromoteTo(d16, hn::LoadU(d8, q + j)), hn::LoadU(d16, xq + j), sum);
    return hn::MulAdd(hn::Set(DF32(), half_scale(block)), hn::Mul(hn::ConvertTo(DF32(), sum), hn::Set(DF32(), xd)), acc);
}

template <class V>
HWY_INLINE V Q4Q8Block(const uint8_t *HWY_RESTRICT block, const int16_t *HWY_RESTRICT xq, float xd, V acc) {
    const D16 d16;
    const hn::Rebind<uint8_t, D16> du8;
    const auto eight = hn::Set(d16, 8), low_mask = hn::Set(d16, 0xf);
    const uint8_t *q = block + 2;
    auto sum = hn::Zero(D32());
    for (size_t j = 0; j < size_t(kQuantBlock) / 2; j += hn::Lanes(d16)) {  // bytes j..: elements j.. and j+16..
        const auto bytes = hn::BitCast(d16, hn::PromoteTo(hn::RebindToUnsigned<D16>(), hn::LoadU(du8, q + j)));
        sum = MulPairs(hn::Sub(hn::And(bytes, low_mask), eight), hn::LoadU(d16, xq + j), sum);
        sum = MulPairs(hn::Sub(hn::ShiftRight<4>(bytes), eight), hn::LoadU(d16, xq + j + 16), sum);
    }
    return hn::MulAdd(hn::Set(DF32(), half_scale(block)), hn::Mul(hn::ConvertTo(DF32(), sum), hn::Set(DF32(), xd)), acc);
}

#define TL_OVER_INT_BLOCKS(blocks, STEP)             \
  const DF32 df;                                     \
  auto a0 = hn::Zero(df), a1 = a0, a2 = a0, a3 = a0; \
  int64_t b = 0;                                     \
  for (; b + 4 <= (blocks); b += 4) {                \
    a0 = STEP(b, a0);                                \
    a1 = STEP(b + 1, a1);                            \
    a2 = STEP(b + 2, a2);                            \
    a3 = STEP(b + 3, a3);                            \
  }                                                  \
  for (; b < (blocks); ++b) a0 = STEP(b, a0);        \
  const float body = hn::GetLane(hn::SumOfLanes(df, hn::Add(hn::Add(a0, a1), hn::Add(a2, a3))))

float DotQ8_0Int(const int16_t *HWY_RESTRICT xq, const float *HWY_RESTRICT xd, const uint8_t *HWY_RESTRICT row,
                 int64_t n) {
#define TL_Q8_STEP(i, acc) Q8Q8Block(row + (i)*int64_t(kQ8Bytes), xq + (i)*kQuantBlock, xd[i], acc)
    TL_OVER_INT_BLOCKS(n / kQuantBlock, TL_Q8_STEP);
#undef TL_Q8_STEP
    return body;
}

float DotQ4_0Int(const int16_t *HWY_RESTRICT xq, const float *HWY_RESTRICT xd, const uint8_t *HWY_RESTRICT row,
                 int64_t n) {
#define TL_Q4_STEP(i, acc) Q4Q8Block(row + (i)*int64_t(kQ4Bytes), xq + (i)*kQuantBlock, xd[i], acc)
    TL_OVER_INT_BLOCKS(n / kQuantBlock, TL_Q4_STEP);
#undef TL_Q4_STEP
    return body;
}

template <class T>
float DotHalves(const float *HWY_RESTRICT x, const uint8_t *HWY_RESTRICT row, int64_t n) {
    const T *h = reinterpret_cast<const T *>(row);
#define TL_HALF_STEP(i, acc) HalvesGroup<T>(df, h + (i)*32, x + (i)*32, acc)
    TL_OVER_BLOCKS(n / 32, TL_HALF_STEP);
#undef TL_HALF_STEP
    float tail = 0;  // the last n % 32 elements, one by one
    for (int64_t i = n / 32 * 32; i < n; ++i) {
        uint16_t bits;
        std::memcpy(&bits, row + 2 * i, 2);
        tail += x[i] * (std::is_same<T, hwy::float16_t>::value ? f16_to_float(bits) : bf16_to_float(bits));
    }
    return body + tail;
}

float DotF16(const float *HWY_RESTRICT x, const uint8_t *HWY_RESTRICT row, int64_t n) {
    return DotHalves<hwy::float16_t>(x, row, n);
}
float DotBF16(const float *HWY_RESTRICT x, const uint8_t *HWY_RESTRICT row, int64_t n) {
    return DotHalves<hwy::bfloat16_t>(x, row, n);
}

}  // namespace HWY_NAMESPACE
}  // namespace tl
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tl {

HWY_EXPORT(DotQ8_0);
HWY_EXPORT(DotQ4_0);
HWY_EXPORT(DotQ8_0Int);
HWY_EXPORT(DotQ4_0Int);
HWY_EXPORT(DotF16);
HWY_EXPORT(DotBF16);

float dot_row(tl_dtype dt, const float *x, const std::byte *row, int64_t n) {
    const auto *r = reinterpret_cast<const uint8_t *>(row);
    switch (dt) {
        case TL_Q8_0:
            return HWY_DYNAMIC_DISPATCH(DotQ8_0)(x, r, n);
        case TL_Q4_0:
            return HWY_DYNAMIC_DISPATCH(DotQ4_0)(x, r, n);
        case TL_F16:
            return HWY_DYNAMIC_DISPATCH(DotF16)(x, r, n);
        case TL_BF16:
            return HWY_DYNAMIC_DISPATCH(DotBF16)(x, r, n);
        default:
            return 0;  // the ops take only these
    }
}

float dot_row_q8(tl_dtype dt, const Q8Activations &x, const std::byte *row, int64_t n) {
    const auto *r = reinterpret_cast<const uint8_t *>(row);
    return dt == TL_Q8_0 ? HWY_DYNAMIC_DISPATCH(DotQ8_0Int)(x.q, x.scale, r, n)
                         : HWY_DYNAMIC_DISPATCH(DotQ4_0Int)(x.q, x.scale, r, n);
}

const char *simd_target() {
    const int64_t targets = hwy::SupportedTargets() & HWY_TARGETS;
    return hwy::TargetName(targets & -targets);  // the lowest bit is the best target
}

}  // namespace tl
#endif
