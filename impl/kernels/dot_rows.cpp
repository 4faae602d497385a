// The dot products of one activation row with rows of weights in a storage dtype (f16, bf16,
// q8_0, q4_0), one source compiled for every instruction set Highway targets and chosen at run
// time (AVX2, AVX-512, NEON, SVE, ...; scalar elsewhere).  Each weight row is read where it lies
// and decoded in registers.  The order of every addition depends on n and the CPU's target
// alone, so a row gives the same bits at any offset, in any storage, on any thread, in any tile.
// AVX3_DL (AVX-512 with VNNI: Ice Lake, Zen 4) is compiled too, for its byte dot products.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/dot_rows.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/cache_control.h>
#include <hwy/highway.h>

#include "kernels/byte_dot-inl.h"
#include "kernels/widen-inl.h"

#include <cstring>
#include <limits>
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

// Rows [0, nrows) at base + r * row_bytes, `blocks` blocks each: out[r] =
// Finish(r, the sum of Step(row, b, acc) over the row's blocks).  Step adds block b of a row into
// an accumulator.  A row's blocks go round four accumulators (so consecutive blocks' additions
// do not wait on each other), added in a fixed order at the end.  Rows are read one after the
// other, the matrix one stream: for these dtypes' blocks (64 bytes of f16 or bf16, fewer of q8_0
// and q4_0) four rows interleaved were slower from DRAM, with or without a software prefetch
// (bench/README.md), as they were for f32 on Zen 4 (DotF32).
// lanes(v) (the identity unless given) rescales the row's added accumulators before their lanes are
// summed.
struct SameLanes {
    template <class V>
    HWY_INLINE V operator()(V v) const {
        return v;
    }
};
template <class D, class Step, class Finish, class Lanes = SameLanes>
HWY_INLINE void OverRows(D d, int64_t blocks, const uint8_t *base, size_t row_bytes, int64_t nrows, Step step,
                         Finish finish, Lanes lanes = Lanes()) {
    for (int64_t r = 0; r < nrows; ++r) {
        const uint8_t *w = base + r * row_bytes;
        auto a0 = hn::Zero(d), a1 = a0, a2 = a0, a3 = a0;
        int64_t b = 0;
        for (; b + 4 <= blocks; b += 4)
            a0 = step(w, b, a0), a1 = step(w, b + 1, a1), a2 = step(w, b + 2, a2), a3 = step(w, b + 3, a3);
        for (; b < blocks; ++b) a0 = step(w, b, a0);
        finish(r, w, hn::GetLane(hn::SumOfLanes(d, lanes(hn::Add(hn::Add(a0, a1), hn::Add(a2, a3))))));
    }
}

// ---- f16 and bf16 against f32 activations: 32 elements a step, a scalar tail ------------------

// At most 8 lanes of f32 (256 bits; 32 elements are whole vectors on every target): measured, AVX3's
// 512-bit vectors streamed f16 and bf16 rows 15-35% slower on Zen 4 (bench/README.md).
using DF = hn::CappedTag<float, 8>;

template <class T>
void DotHalves(const float *HWY_RESTRICT x, const uint8_t *HWY_RESTRICT base, size_t row_bytes, int64_t nrows,
               int64_t n, float *HWY_RESTRICT out) {
    const DF df;
    const size_t lanes = hn::Lanes(df);
    const auto step = [&](const uint8_t *row, int64_t b, hn::Vec<DF> acc) {
        const T *h = reinterpret_cast<const T *>(row) + b * 32;
        const float *xb = x + b * 32;
        for (size_t i = 0; i < 32; i += lanes)
            acc = hn::MulAdd(LoadWide(df, h + i), hn::LoadU(df, xb + i), acc);
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

// f32 rows one at a time, a cache line (16 values) a step, each line fetched 384 bytes ahead; two
// accumulators, the vectors alternating between them, then a scalar tail.  Four rows at a time
// read 8-10% faster from DRAM on Zen 5 but 20% slower on Zen 4 (decode of the d 2048 f32 model:
// 49-55 against 39-42 ms a token at 1 thread, the same binary otherwise, bench/README.md), as two
// or four q4_0 rows at a time were: one stream a core is what holds on both, within 10%.
constexpr int64_t kLineFloats = 16, kFetchAhead = 384;

// One row's part of a line: its even vectors into `even`, its odd ones into `odd`.
HWY_INLINE void DotF32Line(const float *HWY_RESTRICT w, const float *HWY_RESTRICT x, hn::Vec<DF> &even,
                           hn::Vec<DF> &odd) {
    const DF df;
    const size_t lanes = hn::Lanes(df);
    for (size_t v = 0; v < size_t(kLineFloats); v += 2 * lanes) {
        even = hn::MulAdd(hn::LoadU(df, w + v), hn::LoadU(df, x + v), even);
        odd = hn::MulAdd(hn::LoadU(df, w + v + lanes), hn::LoadU(df, x + v + lanes), odd);
    }
}

void DotF32(const float *HWY_RESTRICT x, const uint8_t *HWY_RESTRICT base, size_t row_bytes, int64_t nrows, int64_t n,
            float *HWY_RESTRICT out) {
    const DF df;
    const int64_t body = n / kLineFloats * kLineFloats;
    for (int64_t r = 0; r < nrows; ++r) {
        const float *w = reinterpret_cast<const float *>(base + r * row_bytes);
        auto even = hn::Zero(df), odd = even;
        for (int64_t i = 0; i < body; i += kLineFloats) {
            hwy::Prefetch(reinterpret_cast<const uint8_t *>(w + i) + kFetchAhead);
            DotF32Line(w + i, x + i, even, odd);
        }
        float tail = 0;
        for (int64_t i = body; i < n; ++i) tail += x[i] * w[i];
        out[r] = hn::GetLane(hn::SumOfLanes(df, hn::Add(even, odd))) + tail;
    }
}

void DotF16(const float *x, const uint8_t *base, size_t row_bytes, int64_t nrows, int64_t n, float *out) {
    DotHalves<hwy::float16_t>(x, base, row_bytes, nrows, n, out);
}
void DotBF16(const float *x, const uint8_t *base, size_t row_bytes, int64_t nrows, int64_t n, float *out) {
    DotHalves<hwy::bfloat16_t>(x, base, row_bytes, nrows, n, out);
}

// ---- q8_0 and q4_0 against activations quantized per block (Q8Activations) --------------------
// A block's 32 products are summed exactly in int32 lanes, then scaled by the two scales into the
// row's f32 accumulator.  Nibbles are unpacked once per block; no element of either side is
// converted to float.  Two ways to the int32 lanes, by target (and the activations' layout with it):
// - pairs of int16 products (vpmaddwd on x86, smlal on NEON): activations widened to int16 once
//   per row;
// - on AVX3_DL, VNNI's vpdpbusd (byte_dot-inl.h).  Measured on Zen 4 from L2: q8_0 16.5 -> 15.3
//   us, q4_0 18.1 -> 15.8 us (bench/README.md).
using D16 = hn::CappedTag<int16_t, 16>;
using D32 = hn::Repartition<int32_t, D16>;
using DF32 = hn::Repartition<float, D16>;

// Rows of blocks of kBlockBytes, one block a step: out[r] = the sum over the row's blocks of the
// block's f16 scale x the activations' scale xd[b] x block_sum(block, b), the block's products
// summed exactly in int32 lanes.
template <size_t kBlockBytes, class BlockSum>
HWY_INLINE void OverBlocks(const float *HWY_RESTRICT xd, const uint8_t *HWY_RESTRICT base, size_t row_bytes,
                           int64_t nrows, int64_t n, float *HWY_RESTRICT out, BlockSum block_sum) {
    const DF32 df;
    const auto step = [&](const uint8_t *row, int64_t b, hn::Vec<DF32> acc) {
        const uint8_t *block = row + b * int64_t(kBlockBytes);
        const auto sum = hn::ConvertTo(df, block_sum(block, b));
        return hn::MulAdd(hn::Set(df, half_scale(block)), hn::Mul(sum, hn::Set(df, xd[b])), acc);
    };
    OverRows(df, n / kQuantBlock, base, row_bytes, nrows, step,
             [&](int64_t r, const uint8_t *, float sum) { out[r] = sum; });
}

// A row of activations to Q8Activations as llama.cpp's x86 code quantizes them for its q8_0 and
// q4_0 products (quantize_row_q8_0, the same on every target here): per block of 32, amax =
// max|x|, q = x * (127 / amax) rounded half to even, and the scale amax / 127 rounded to f16 as
// the block stores it (kept in f32 where f16 would overflow).  A block holding an infinity or NaN
// gets a NaN scale (its products NaN); one whose 127 / amax overflows divides instead.
void QuantizeActivations(const float *HWY_RESTRICT x, int64_t n, uint8_t *HWY_RESTRICT out, float *HWY_RESTRICT scale,
                         float *HWY_RESTRICT sums) {
    const DF df;
    const hn::Rebind<int16_t, DF> d16;
    const size_t lanes = hn::Lanes(df);
    const auto zero = hn::Zero(df);
    // The layout: int16 values (written in place), or the byte-dot layout (from a block's int16s).
    int16_t *wide = reinterpret_cast<int16_t *>(out);
    int8_t *bytes = reinterpret_cast<int8_t *>(out);
    int32_t *starts_q8 = reinterpret_cast<int32_t *>(out + kStartsQ8 * n);
    for (int64_t b = 0; b < n / kQuantBlock; ++b) {
        const float *xb = x + b * kQuantBlock;
        HWY_ALIGN int16_t block[kQuantBlock];
        int16_t *qb = kByteDots ? block : wide + b * kQuantBlock;
        auto top = zero, poison = zero;  // poison: x * 0 summed, NaN when any x is not finite
        for (size_t i = 0; i < size_t(kQuantBlock); i += lanes) {
            const auto v = hn::LoadU(df, xb + i);
            top = hn::Max(top, hn::Abs(v));
            poison = hn::Add(poison, hn::Mul(v, zero));
        }
        if (hn::GetLane(hn::SumOfLanes(df, poison)) != 0.0f) {
            scale[b] = std::numeric_limits<float>::quiet_NaN();
            if (sums) sums[b] = scale[b];
            std::memset(qb, 0, sizeof block);
        } else {
            const float amax = hn::GetLane(hn::MaxOfLanes(df, top)), d = amax / 127;
            const float id = amax != 0 ? 127 / amax : 0.0f;
            const bool tiny = id > std::numeric_limits<float>::max();  // amax below 127 / FLT_MAX
            scale[b] = d < 65520.0f ? f16_to_float(float_to_f16(d)) : d;  // 65520 and up: f16's infinity
            for (size_t i = 0; i < size_t(kQuantBlock); i += lanes) {
                const auto x8 = hn::LoadU(df, xb + i);
                const auto v = tiny ? hn::Mul(hn::Div(x8, hn::Set(df, amax)), hn::Set(df, 127.0f)) : hn::Mul(x8, hn::Set(df, id));
                hn::StoreU(hn::DemoteTo(d16, hn::NearestInt(v)), d16, qb + i);
            }
            if (sums) {  // q8_1's s: the sum of q times the unrounded scale, then as f16
                int32_t total = 0;
                for (int64_t i = 0; i < kQuantBlock; ++i) total += qb[i];
                const float s = d * float(total);
                sums[b] = std::fabs(s) < 65520.0f ? f16_to_float(float_to_f16(s)) : s;
            }
        }
        if (!kByteDots) continue;
        for (int64_t i = 0; i < kQuantBlock; ++i) bytes[b * kQuantBlock + i] = int8_t(qb[i]);
        for (int64_t f = b * kQuantBlock / 4, i = 0; i < kQuantBlock; i += 4, ++f) {
            const int32_t four = qb[i] + qb[i + 1] + qb[i + 2] + qb[i + 3];
            starts_q8[f] = -128 * four;
        }
    }
}

#if HWY_TARGET == HWY_AVX3_DL
// On AVX3_DL q8_0, q5_0 and q4_0 take one block a step: its 32 weights as unsigned bytes offset by
// 128, in one 256-bit vpdpbusd, then the two scales' product times the eight lanes into one
// accumulator, its lanes added as llama.cpp's hsum_float_8: the order of additions of llama.cpp's
// x86 kernels (ggml_vec_dot_q8_0_q8_0, _q5_0_, _q4_0_ and llamafile's tinyBLAS), so a product is
// theirs bit for bit (tests/llamacpp/ggml_products.c), and a prompt's panels (panel_dot.cpp) give
// each row the same bits.  q4_0 took two blocks a step in 512-bit vectors before (0.84 -> 0.57 ns a
// block from L3 on Zen 5), in an order no panel could follow; decode from DRAM measured the same
// within noise in the one-block form (bench/README.md).
// M rows of activations in the byte-dot layout: each row's int8 values and starting values.
template <int M>
HWY_INLINE void ByteDotRows(const Q8Activations *x, int64_t n, const int8_t **x8, const int32_t **starts) {
    for (int i = 0; i < M; ++i) {
        const auto *q = reinterpret_cast<const uint8_t *>(x[i].q);
        x8[i] = reinterpret_cast<const int8_t *>(q), starts[i] = reinterpret_cast<const int32_t *>(q + kStartsQ8 * n);
    }
}
// Rows of kBlockBytes blocks of 32 signed weights, each block's weights as unsigned bytes offset
// by 128 from weights(block), against M activation rows at once (a prompt's: the block read and
// unpacked once for all, each row its own accumulator): llama.cpp's order, as above, for each.
// kMin (q4_1, q5_1): the unsigned bytes are the values themselves, and each block's f16 min times
// the activations' s goes into one f32 sum in block order, added after the lanes (ggml's
// vec_dot_q4_1_q8_1 and _q5_1_: a multiply-add on x86 as its compilers contract it).
using DU8 = hn::Repartition<uint8_t, D16>;
template <size_t kBlockBytes, int M, bool kMin, class Weights>
HWY_INLINE void OverSignedBlocks(const Q8Activations *HWY_RESTRICT x, const uint8_t *HWY_RESTRICT base, size_t row_bytes,
                                 int64_t nrows, int64_t n, float *HWY_RESTRICT out, int64_t out_stride, Weights weights) {
    const hn::Repartition<int8_t, D16> d8;
    const DF32 df;
    const int8_t *x8[M];
    const int32_t *starts[M];
    ByteDotRows<M>(x, n, x8, starts);
    for (int64_t r = 0; r < nrows; ++r) {
        const uint8_t *row = base + r * row_bytes;
        hn::Vec<DF32> acc[M];
        float mins[M];
#pragma GCC unroll 4
        for (int i = 0; i < M; ++i) acc[i] = hn::Zero(df), mins[i] = 0.0f;
        for (int64_t b = 0; b < n / kQuantBlock; ++b) {
            const uint8_t *block = row + b * int64_t(kBlockBytes);
            const auto u = weights(block);
            const float scale = half_scale(block);
#pragma GCC unroll 4
            for (int i = 0; i < M; ++i) {
                const auto start = kMin ? hn::Zero(D32()) : hn::LoadU(D32(), starts[i] + b * 8);
                const auto sum = DotBytes(start, u, hn::LoadU(d8, x8[i] + b * kQuantBlock));
                acc[i] = hn::MulAdd(hn::Set(df, scale * x[i].scale[b]), hn::ConvertTo(df, sum), acc[i]);
                if (kMin) mins[i] = std::fma(half_scale(block + 2), x[i].sums[b], mins[i]);
            }
        }
        for (int i = 0; i < M; ++i) {
            HWY_ALIGN float lane[8];
            hn::Store(acc[i], df, lane);
            const float t0 = lane[0] + lane[4], t1 = lane[1] + lane[5], t2 = lane[2] + lane[6], t3 = lane[3] + lane[7];
            const float lanes = (t0 + t2) + (t1 + t3);
            out[i * out_stride + r] = kMin ? lanes + mins[i] : lanes;
        }
    }
}
template <size_t kBlockBytes, bool kMin = false, class Weights>
HWY_INLINE void SignedBlocks(const Q8Activations *x, int64_t xrows, const uint8_t *base, size_t row_bytes, int64_t nrows,
                             int64_t n, float *out, int64_t out_stride, Weights weights) {
    ByRowGroups(x, xrows, out, out_stride, [&](auto m, const Q8Activations *rows, float *o) {
        OverSignedBlocks<kBlockBytes, decltype(m)::value, kMin>(rows, base, row_bytes, nrows, n, o, out_stride, weights);
    });
}
// 16 bytes of nibbles as 32 bytes: the low nibbles (weights 0..15), then the high ones (16..31).
HWY_INLINE __m256i LowThenHighNibbles(const uint8_t *q) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i *>(q));
    return _mm256_and_si256(_mm256_inserti128_si256(_mm256_castsi128_si256(bytes), _mm_srli_epi16(bytes, 4), 1),
                            _mm256_set1_epi8(0x0f));
}
void DotQ8_0(const Q8Activations *x, int64_t xrows, const uint8_t *HWY_RESTRICT base, size_t row_bytes, int64_t nrows,
             int64_t n, float *HWY_RESTRICT out, int64_t out_stride) {
    const DU8 du8;
    const auto offset = hn::Set(du8, 0x80);
    SignedBlocks<kQ8Bytes>(x, xrows, base, row_bytes, nrows, n, out, out_stride,
                           [&](const uint8_t *block) { return hn::Xor(hn::LoadU(du8, block + 2), offset); });
}
// q5_0: the low nibbles of its 16 bytes are weights 0..15 and the high ones 16..31, each with a
// fifth bit from the 32-bit qh (bit j for weight j), standing for value - 16.
void DotQ5_0(const Q8Activations *x, int64_t xrows, const uint8_t *HWY_RESTRICT base, size_t row_bytes, int64_t nrows,
             int64_t n, float *HWY_RESTRICT out, int64_t out_stride) {
    const __m256i fifth = _mm256_set1_epi8(0x10), offset = _mm256_set1_epi8(128 - 16);
    SignedBlocks<kQ5Bytes>(x, xrows, base, row_bytes, nrows, n, out, out_stride, [&](const uint8_t *block) {
        uint32_t high;
        std::memcpy(&high, block + 2, 4);
        const __m256i values = _mm256_or_si256(LowThenHighNibbles(block + 6), _mm256_maskz_mov_epi8(__mmask32(high), fifth));
        return hn::Vec<DU8>{_mm256_add_epi8(values, offset)};
    });
}

// q4_0: the low nibbles of its 16 bytes are weights 0..15 and the high ones 16..31, standing for
// value - 8.
void DotQ4_0(const Q8Activations *x, int64_t xrows, const uint8_t *HWY_RESTRICT base, size_t row_bytes, int64_t nrows,
             int64_t n, float *HWY_RESTRICT out, int64_t out_stride) {
    const __m256i offset = _mm256_set1_epi8(128 - 8);
    SignedBlocks<kQ4Bytes>(x, xrows, base, row_bytes, nrows, n, out, out_stride, [&](const uint8_t *block) {
        return hn::Vec<DU8>{_mm256_add_epi8(LowThenHighNibbles(block + 2), offset)};
    });
}
// q4_1 and q5_1: d, m, (q5_1: the 32-bit qh,) then q4_0's or q5_0's nibbles, standing for d x
// value + m with no offset.
void DotQ4_1(const Q8Activations *x, int64_t xrows, const uint8_t *HWY_RESTRICT base, size_t row_bytes, int64_t nrows,
             int64_t n, float *HWY_RESTRICT out, int64_t out_stride) {
    SignedBlocks<kQ4_1Bytes, true>(x, xrows, base, row_bytes, nrows, n, out, out_stride,
                                   [&](const uint8_t *block) { return hn::Vec<DU8>{LowThenHighNibbles(block + 4)}; });
}
void DotQ5_1(const Q8Activations *x, int64_t xrows, const uint8_t *HWY_RESTRICT base, size_t row_bytes, int64_t nrows,
             int64_t n, float *HWY_RESTRICT out, int64_t out_stride) {
    const __m256i fifth = _mm256_set1_epi8(0x10);
    SignedBlocks<kQ5_1Bytes, true>(x, xrows, base, row_bytes, nrows, n, out, out_stride, [&](const uint8_t *block) {
        uint32_t high;
        std::memcpy(&high, block + 4, 4);
        return hn::Vec<DU8>{_mm256_or_si256(LowThenHighNibbles(block + 8), _mm256_maskz_mov_epi8(__mmask32(high), fifth))};
    });
}
#else
void DotQ8_0Row(const uint8_t *HWY_RESTRICT xq, const float *HWY_RESTRICT xd, const uint8_t *HWY_RESTRICT base,
                size_t row_bytes, int64_t nrows, int64_t n, float *HWY_RESTRICT out) {
    const D16 d16;
    const hn::Rebind<int8_t, D16> d8;
    const size_t lanes = hn::Lanes(d16);
    OverBlocks<kQ8Bytes>(xd, base, row_bytes, nrows, n, out, [&](const uint8_t *block, int64_t b) {
        const int8_t *q = reinterpret_cast<const int8_t *>(block + 2);
        const int16_t *xb = reinterpret_cast<const int16_t *>(xq) + b * kQuantBlock;
        auto sum = hn::Zero(D32());
        for (size_t j = 0; j < size_t(kQuantBlock); j += lanes)
            sum = MulPairs(hn::PromoteTo(d16, hn::LoadU(d8, q + j)), hn::LoadU(d16, xb + j), sum);
        return sum;
    });
}

void DotQ4_0Row(const uint8_t *HWY_RESTRICT xq, const float *HWY_RESTRICT xd, const uint8_t *HWY_RESTRICT base,
                size_t row_bytes, int64_t nrows, int64_t n, float *HWY_RESTRICT out) {
    const D16 d16;
    const hn::Rebind<uint8_t, D16> du8;
    const size_t lanes = hn::Lanes(d16);
    const auto eight = hn::Set(d16, 8), low_mask = hn::Set(d16, 0xf);
    OverBlocks<kQ4Bytes>(xd, base, row_bytes, nrows, n, out, [&](const uint8_t *block, int64_t b) {
        const uint8_t *q = block + 2;
        const int16_t *xb = reinterpret_cast<const int16_t *>(xq) + b * kQuantBlock;
        auto sum = hn::Zero(D32());
        for (size_t j = 0; j < size_t(kQuantBlock) / 2; j += lanes) {  // bytes j..: elements j.. and j+16..
            const auto bytes = hn::BitCast(d16, hn::PromoteTo(hn::RebindToUnsigned<D16>(), hn::LoadU(du8, q + j)));
            sum = MulPairs(hn::Sub(hn::And(bytes, low_mask), eight), hn::LoadU(d16, xb + j), sum);
            sum = MulPairs(hn::Sub(hn::ShiftRight<4>(bytes), eight), hn::LoadU(d16, xb + j + 16), sum);
        }
        return sum;
    });
}

void DotQ5_0Row(const uint8_t *HWY_RESTRICT xq, const float *HWY_RESTRICT xd, const uint8_t *HWY_RESTRICT base,
                size_t row_bytes, int64_t nrows, int64_t n, float *HWY_RESTRICT out) {
    const D16 d16;
    const size_t lanes = hn::Lanes(d16);
    OverBlocks<kQ5Bytes>(xd, base, row_bytes, nrows, n, out, [&](const uint8_t *block, int64_t b) {
        uint32_t high;
        std::memcpy(&high, block + 2, 4);
        HWY_ALIGN int16_t w[kQuantBlock];
        for (int j = 0; j < 16; ++j) {
            w[j] = int16_t((block[6 + j] & 0xf) + int((high >> j) & 1) * 16 - 16);
            w[j + 16] = int16_t((block[6 + j] >> 4) + int((high >> (j + 16)) & 1) * 16 - 16);
        }
        const int16_t *xb = reinterpret_cast<const int16_t *>(xq) + b * kQuantBlock;
        auto sum = hn::Zero(D32());
        for (size_t j = 0; j < size_t(kQuantBlock); j += lanes) sum = MulPairs(hn::Load(d16, w + j), hn::LoadU(d16, xb + j), sum);
        return sum;
    });
}

// q4_1 and q5_1: the values decoded to int16 (as q5_0's above), each row's blocks through
// OverBlocks, then its mins' sum added as on AVX3_DL.
template <size_t kBlockBytes, class Decode>
HWY_INLINE void MinBlocks(const Q8Activations *x, int64_t xrows, const uint8_t *base, size_t row_bytes, int64_t nrows,
                          int64_t n, float *out, int64_t out_stride, Decode decode) {
    const D16 d16;
    const size_t lanes = hn::Lanes(d16);
    for (int64_t i = 0; i < xrows; ++i) {
        const int16_t *xq = reinterpret_cast<const int16_t *>(x[i].q);
        float *o = out + i * out_stride;
        OverBlocks<kBlockBytes>(x[i].scale, base, row_bytes, nrows, n, o, [&](const uint8_t *block, int64_t b) {
            HWY_ALIGN int16_t w[kQuantBlock];
            decode(block, w);
            auto sum = hn::Zero(D32());
            for (size_t j = 0; j < size_t(kQuantBlock); j += lanes)
                sum = MulPairs(hn::Load(d16, w + j), hn::LoadU(d16, xq + b * kQuantBlock + j), sum);
            return sum;
        });
        for (int64_t r = 0; r < nrows; ++r) {
            float mins = 0.0f;
            for (int64_t b = 0; b < n / kQuantBlock; ++b)
                mins = std::fma(half_scale(base + r * row_bytes + b * int64_t(kBlockBytes) + 2), x[i].sums[b], mins);
            o[r] += mins;
        }
    }
}
void DotQ4_1(const Q8Activations *x, int64_t xrows, const uint8_t *base, size_t row_bytes, int64_t nrows, int64_t n,
             float *out, int64_t out_stride) {
    MinBlocks<kQ4_1Bytes>(x, xrows, base, row_bytes, nrows, n, out, out_stride, [](const uint8_t *block, int16_t *w) {
        for (int j = 0; j < 16; ++j) w[j] = int16_t(block[4 + j] & 0xf), w[j + 16] = int16_t(block[4 + j] >> 4);
    });
}
void DotQ5_1(const Q8Activations *x, int64_t xrows, const uint8_t *base, size_t row_bytes, int64_t nrows, int64_t n,
             float *out, int64_t out_stride) {
    MinBlocks<kQ5_1Bytes>(x, xrows, base, row_bytes, nrows, n, out, out_stride, [](const uint8_t *block, int16_t *w) {
        uint32_t high;
        std::memcpy(&high, block + 4, 4);
        for (int j = 0; j < 16; ++j) {
            w[j] = int16_t((block[8 + j] & 0xf) | ((high >> j) & 1) << 4);
            w[j + 16] = int16_t((block[8 + j] >> 4) | ((high >> (j + 16)) & 1) << 4);
        }
    });
}
#endif

// One activation row at a time through a one-row kernel, out[i * out_stride + r].
template <class RowKernel>
HWY_INLINE void EachRow(RowKernel kernel, const Q8Activations *x, int64_t xrows, const uint8_t *base, size_t row_bytes,
                        int64_t nrows, int64_t n, float *out, int64_t out_stride) {
    for (int64_t i = 0; i < xrows; ++i)
        kernel(reinterpret_cast<const uint8_t *>(x[i].q), x[i].scale, base, row_bytes, nrows, n, out + i * out_stride);
}
#if HWY_TARGET != HWY_AVX3_DL
void DotQ8_0(const Q8Activations *x, int64_t xrows, const uint8_t *base, size_t row_bytes, int64_t nrows, int64_t n,
             float *out, int64_t out_stride) {
    EachRow(DotQ8_0Row, x, xrows, base, row_bytes, nrows, n, out, out_stride);
}
void DotQ5_0(const Q8Activations *x, int64_t xrows, const uint8_t *base, size_t row_bytes, int64_t nrows, int64_t n,
             float *out, int64_t out_stride) {
    EachRow(DotQ5_0Row, x, xrows, base, row_bytes, nrows, n, out, out_stride);
}
void DotQ4_0(const Q8Activations *x, int64_t xrows, const uint8_t *base, size_t row_bytes, int64_t nrows, int64_t n,
             float *out, int64_t out_stride) {
    EachRow(DotQ4_0Row, x, xrows, base, row_bytes, nrows, n, out, out_stride);
}
#endif
}  // namespace HWY_NAMESPACE
}  // namespace tl
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tl {

HWY_EXPORT(DotF32);
HWY_EXPORT(DotF16);
HWY_EXPORT(DotBF16);
HWY_EXPORT(QuantizeActivations);
HWY_EXPORT(DotQ8_0);
HWY_EXPORT(DotQ4_0);
HWY_EXPORT(DotQ5_0);
HWY_EXPORT(DotQ4_1);
HWY_EXPORT(DotQ5_1);

void dot_rows(tl_dtype dt, const float *x, const std::byte *rows, size_t row_bytes, int64_t nrows, int64_t n,
              float *out) {
    const auto *r = reinterpret_cast<const uint8_t *>(rows);
    if (dt == TL_F32) return HWY_DYNAMIC_DISPATCH(DotF32)(x, r, row_bytes, nrows, n, out);
    if (dt == TL_F16) return HWY_DYNAMIC_DISPATCH(DotF16)(x, r, row_bytes, nrows, n, out);
    HWY_DYNAMIC_DISPATCH(DotBF16)(x, r, row_bytes, nrows, n, out);
}

void quantize_activations(const float *x, int64_t n, std::byte *q, float *scale, float *sums) {
    HWY_DYNAMIC_DISPATCH(QuantizeActivations)(x, n, reinterpret_cast<uint8_t *>(q), scale, sums);
}

void dot_rows_q8(tl_dtype dt, const Q8Activations *x, int64_t xrows, const std::byte *rows, size_t row_bytes,
                 int64_t nrows, int64_t n, float *out, int64_t out_stride) {
    const auto *r = reinterpret_cast<const uint8_t *>(rows);
    if (dt == TL_Q8_0) return HWY_DYNAMIC_DISPATCH(DotQ8_0)(x, xrows, r, row_bytes, nrows, n, out, out_stride);
    if (dt == TL_Q5_0) return HWY_DYNAMIC_DISPATCH(DotQ5_0)(x, xrows, r, row_bytes, nrows, n, out, out_stride);
    if (dt == TL_Q4_1) return HWY_DYNAMIC_DISPATCH(DotQ4_1)(x, xrows, r, row_bytes, nrows, n, out, out_stride);
    if (dt == TL_Q5_1) return HWY_DYNAMIC_DISPATCH(DotQ5_1)(x, xrows, r, row_bytes, nrows, n, out, out_stride);
    HWY_DYNAMIC_DISPATCH(DotQ4_0)(x, xrows, r, row_bytes, nrows, n, out, out_stride);
}

const char *simd_target() {
    const int64_t targets = hwy::SupportedTargets() & HWY_TARGETS;
    return hwy::TargetName(targets & -targets);  // the lowest bit is the best target
}

}  // namespace tl
#endif
