// VNNI's byte dot product and the layout of the activations it reads, for the kernel files that
// sum int8 products (dot_rows.cpp, panel_dot.cpp): one source (Highway's -inl.h convention),
// included after hwy/highway.h and compiled for each target.
//
// On AVX3_DL, vpdpbusd (unsigned bytes times signed bytes, four to an int32 lane) takes the
// activations as int8 and the weights as unsigned bytes offset by 128 (q8_0's an xor, q4_0's and
// q5_0's values plus 128 - 8 or 128 - 16); each lane then starts from a value that takes the
// offset back out, -128 x the sum of its four activations, and is exact.  Highway
// 1.0.3 has no op for it (1.1's SumOfMulQuadAccumulate): asm, as the target's flags name AVX-VNNI
// (a VEX form Ice Lake and Zen 4 lack) and the assembler's default is the EVEX form of
// AVX512-VNNI, which Highway's check for AVX3_DL ensures.
#if defined(TL_KERNELS_BYTE_DOT_INL_H_) == defined(HWY_TARGET_TOGGLE)  // once per target
#  ifdef TL_KERNELS_BYTE_DOT_INL_H_
#    undef TL_KERNELS_BYTE_DOT_INL_H_
#  else
#    define TL_KERNELS_BYTE_DOT_INL_H_
#  endif

#  include <hwy/highway.h>

#  include <cstdint>

HWY_BEFORE_NAMESPACE();
namespace tl {
namespace HWY_NAMESPACE {

#  if HWY_TARGET == HWY_AVX3_DL
constexpr bool kByteDots = true;
template <class V32, class VU8, class V8>
HWY_INLINE V32 DotBytes(V32 acc, VU8 u, V8 s) {
    asm("vpdpbusd %2, %1, %0" : "+v"(acc.raw) : "v"(u.raw), "v"(s.raw));
    return acc;
}
#  else
constexpr bool kByteDots = false;
#  endif
// The byte-dot layout of a row of n activations (kQ8ActivationBytes a value): n int8 values, then
// the starting values (n / 4 int32) at kStartsQ8 times n bytes.
constexpr int64_t kStartsQ8 = 1;

}  // namespace HWY_NAMESPACE
}  // namespace tl
HWY_AFTER_NAMESPACE();

#endif
