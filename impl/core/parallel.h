// Work split across the caller's executor (tl_executor): the library's own threads are none.
// A split gives each task a range of one dimension along which every output element is
// computed entirely within one task, exactly as inline, so results are bitwise equal to the
// inline run whatever the executor's order or threads.  (Matrix-vector products split sums too:
// ops/gemv.h says how they stay bitwise.)
#pragma once
#include <cstdint>
#include <type_traits>

#include "core/context.h"

namespace tl {

constexpr int64_t kParallelMinElements = int64_t(1) << 16;  // smaller outputs run inline
constexpr int64_t kParallelChunkElements = int64_t(1) << 15;

// v's slice [begin, end) along dim d (a view: the same elements, fewer of them); d < 0 is no
// split, and gives v whole.
inline View cut(const View &v, int d, int64_t begin, int64_t end) {
    if (d < 0) return v;
    View r = v;
    r.shape[d] = end - begin;
    r.data = v.data + begin * v.strides[d] * int64_t(dtype_size(v.dtype));
    return r;
}

// The outermost dimension of v longer than 1, other than `skip`; -1 when none.
inline int split_dim(const View &v, int skip) {
    for (int d = 0; d < v.ndim; ++d)
        if (d != skip && v.shape[d] > 1) return d;
    return -1;
}

// Whether work of this many output elements runs inline whatever its shape.
inline bool runs_inline(const tl_context &ctx, int64_t elements) {
    return !ctx.executor.parallel_for || elements < kParallelMinElements;
}

// The grain run_split asks of the executor for count items making elements output elements, at
// least min_grain: every range it passes is that long or longer (but the last), so begin / grain
// tells the ranges that can run at once apart (a per-range slot of scratch).
inline int64_t split_grain(int64_t count, int64_t elements, int64_t min_grain = 1) {
    const int64_t grain = elements > 0 ? count * kParallelChunkElements / elements : count;
    return grain > min_grain ? grain : min_grain;
}

// body(begin, end) over [0, count): through ctx's executor when one is set and the work (its
// output elements) is large enough to be worth it, else inline in one piece.
template <class F>
void run_split(const tl_context &ctx, int64_t count, int64_t elements, F &&body, int64_t min_grain = 1) {
    if (count < 2 || runs_inline(ctx, elements)) {
        body(int64_t(0), count);
        return;
    }
    const int64_t grain = split_grain(count, elements, min_grain);
    using Body = std::remove_reference_t<F>;
    ctx.executor.parallel_for(
        ctx.executor.user, count, grain,
        [](void *user, int64_t begin, int64_t end) { (*static_cast<Body *>(user))(begin, end); }, &body);
}

// body(d, begin, end) over the outermost dimension d of `along` longer than 1 other than `skip`
// (the views a body cuts along d share that dimension), split like run_split; or body(-1, 0, 0)
// once, for the whole, when along has no such dimension.
template <class F>
void split_along(const tl_context &ctx, const View &along, int skip, int64_t elements, F &&body) {
    const int d = split_dim(along, skip);
    if (d < 0) return body(-1, int64_t(0), int64_t(0));
    run_split(ctx, along.shape[d], elements, [&](int64_t lo, int64_t hi) { body(d, lo, hi); });
}

}  // namespace tl
