// Loading stored elements into wider lanes, for every kernel that reads f16, bf16 or f32 and
// computes in f32 or f64, int16 products widened into int32 sums, and a prompt's rows taken in
// groups: one source (Highway's -inl.h convention), included by each kernel
// file after hwy/highway.h and compiled for each of its targets.  Exact: every f16, bf16 and f32
// value is representable in the wider type.
#if defined(TL_KERNELS_WIDEN_INL_H_) == defined(HWY_TARGET_TOGGLE)  // once per target
#  ifdef TL_KERNELS_WIDEN_INL_H_
#    undef TL_KERNELS_WIDEN_INL_H_
#  else
#    define TL_KERNELS_WIDEN_INL_H_
#  endif

#  include <hwy/highway.h>

#  include <type_traits>

HWY_BEFORE_NAMESPACE();
namespace tl {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Lanes(d) elements at p (unaligned), as d's lane type: T is that type, or narrower (f32 into
// f64; f16 or bf16 bits into f32 or f64).
template <class D, class T>
HWY_INLINE hn::Vec<D> LoadWide(D d, const T *HWY_RESTRICT p) {
    using Wide = hn::TFromD<D>;
    if constexpr (std::is_same<T, Wide>::value) {
        return hn::LoadU(d, p);
    } else if constexpr (std::is_same<T, float>::value || std::is_same<Wide, float>::value) {
        return hn::PromoteTo(d, hn::LoadU(hn::Rebind<T, D>(), p));  // one step: f32 -> f64, half -> f32
    } else {  // f16 or bf16 into f64: through f32
        const hn::Rebind<float, D> df;
        return hn::PromoteTo(d, hn::PromoteTo(df, hn::LoadU(hn::Rebind<T, D>(), p)));
    }
}

// A prompt's activation rows through a kernel kRowGroup at a time (each weight block unpacked once
// for the group), the rest one by one: kernel(std::integral_constant<int, M>(), x + i, out +
// i * out_stride) for M rows from row i.  Each kernel gives a row the bits it gives it alone.
constexpr int kRowGroup = 4;
template <class Row, class Kernel>
HWY_INLINE void ByRowGroups(const Row *x, int64_t xrows, float *out, int64_t out_stride, Kernel kernel) {
    int64_t i = 0;
    for (; i + kRowGroup <= xrows; i += kRowGroup) kernel(std::integral_constant<int, kRowGroup>(), x + i, out + i * out_stride);
    for (; i < xrows; ++i) kernel(std::integral_constant<int, 1>(), x + i, out + i * out_stride);
}

// acc + the products of int16 lanes w and x, summed in pairs into int32 lanes (vpmaddwd on x86,
// smlal on NEON): exact.  Which products share a lane is the target's.
template <class V16, class D32 = hn::Repartition<int32_t, hn::DFromV<V16>>>
HWY_INLINE hn::Vec<D32> MulPairs(V16 w, V16 x, hn::Vec<D32> acc) {
    const D32 d32;
    auto odd = hn::Zero(d32);  // NEON's second half of the pairs; x86 sums them in acc
    acc = hn::ReorderWidenMulAccumulate(d32, w, x, acc, odd);
    return hn::Add(acc, odd);
}

}  // namespace HWY_NAMESPACE
}  // namespace tl
HWY_AFTER_NAMESPACE();

#endif  // TL_KERNELS_WIDEN_INL_H_
