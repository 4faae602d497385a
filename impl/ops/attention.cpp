// Attention over a KV cache, fused: for each head and query, the scores against the valid key
// rows only (causal by construction), their softmax, and the weighted sum of the value rows.
// The output is [H, Tq, hd] whatever the number of valid rows, so a decode step keeps the same
// slab size at every position (allocation-free) without computing the rows a mask would
// throw away.  Scores live in the context's scratch, sized by the cache so it is the same at
// every position; sums are in double, the result rounded once.  Heads may run on the caller's
// executor (each head whole in one task).
#include <cmath>

#include "core/error.h"
#include "core/parallel.h"
#include "kernels/kernels.h"
#include "ops/ops.h"

namespace tl {

tl_status op_attention(tl_context &ctx, tl_tensor tq, tl_tensor tk, tl_tensor tv, int64_t valid, double scale,
                       tl_tensor *out) {
    Resolved rq, rk, rv;
    TL_TRY(ctx.resolve(tq, &rq));
    TL_TRY(ctx.resolve(tk, &rk));
    TL_TRY(ctx.resolve(tv, &rv));
    const View &q = rq.view, &k = rk.view, &v = rv.view;
    // k and v alike: q's dtype, or f16/bf16 under f32 queries (a KV cache kept in half the bytes).
    const bool half_cache = q.dtype == TL_F32 && (k.dtype == TL_F16 || k.dtype == TL_BF16);
    if (k.dtype != v.dtype || (q.dtype != k.dtype && !half_cache))
        return fail(TL_E_DTYPE, "attention: q %s, k %s, v %s", dtype_name(q.dtype), dtype_name(k.dtype),
                    dtype_name(v.dtype));
    if (!is_float(q.dtype)) return fail(TL_E_DTYPE, "attention takes f32 or f64, not %s", dtype_name(q.dtype));
    if (q.ndim != 3 || k.ndim != 3 || v.ndim != 3)
        return fail(TL_E_SHAPE, "attention takes q [H,Tq,hd], k and v [H,T,hd], not %d-D, %d-D, %d-D", q.ndim, k.ndim,
                    v.ndim);
    // Grouped-query attention: H query heads share Hkv key/value heads, H a multiple of Hkv.
    const bool grouped = k.shape[0] > 0 && q.shape[0] % k.shape[0] == 0;
    if (!grouped || v.shape[0] != k.shape[0] || k.shape[2] != q.shape[2] || v.shape[2] != q.shape[2] ||
        v.shape[1] != k.shape[1])
        return fail(TL_E_SHAPE,
                    "attention: q [%lld,%lld,%lld], k [%lld,%lld,%lld], v [%lld,%lld,%lld] do not match (k and v "
                    "have the same heads, a divisor of q's)",
                    (long long)q.shape[0], (long long)q.shape[1], (long long)q.shape[2], (long long)k.shape[0],
                    (long long)k.shape[1], (long long)k.shape[2], (long long)v.shape[0], (long long)v.shape[1],
                    (long long)v.shape[2]);
    if (valid < q.shape[1] || valid > k.shape[1])
        return fail(TL_E_SHAPE, "attention: %lld valid rows for %lld queries over a cache of %lld rows",
                    (long long)valid, (long long)q.shape[1], (long long)k.shape[1]);
    if (!std::isfinite(scale)) return fail(TL_E_INVALID_ARGUMENT, "attention: scale %g is not finite", scale);
    // Scores for the whole cache of every head, not just the valid rows, then each head's hd
    // sums: the same scratch at every position (a decode loop grows it once), and a head's own
    // on any thread.
    const int64_t cache_rows = k.shape[1], heads = q.shape[0], hd = q.shape[2];
    // A prompt's queries (kWideQueries or more, f32) take each head's valid key and value rows
    // widened to f64 once (and a second query's scores and sums), in a slot of scratch per range
    // of the split (at most kWideSlots, and only while they stay under kWideBytes: sized by the
    // valid rows, not the cache, so a long cache's first prompt takes the path too; a decode
    // step's one query never does, so its scratch stays sized by the cache); the split then takes
    // ranges of at least min_grain heads.
    constexpr int64_t kWideQueries = 4, kWideSlots = 8, kWideBytes = int64_t(16) << 20;
    const int64_t elements = q.numel() * (valid > 0 ? valid : 1);
    const int64_t slot_doubles = 2 * valid * hd + valid + hd, min_grain = (heads + kWideSlots - 1) / kWideSlots;
    const int64_t grain = split_grain(heads, elements, min_grain), slots = grain > 0 ? (heads + grain - 1) / grain : 0;
    const bool wide = q.dtype == TL_F32 && k.dtype == TL_F32 && q.shape[1] >= kWideQueries && hd % 8 == 0 &&
                      slot_doubles > 0 && slots * slot_doubles <= kWideBytes / int64_t(sizeof(double));
    double *scores = nullptr, *sums = nullptr, *wide_slots = nullptr;
    if (cache_rows > 0 && q.numel() > 0) {
        std::byte *s;
        int64_t bytes;
        const int64_t dims[2] = {heads, cache_rows + hd};  // no overflow: k holds cache_rows x hd elements
        if (!count_of(2, dims, int64_t(sizeof(double)), &bytes) || uint64_t(bytes) > SIZE_MAX)
            return fail(TL_E_OUT_OF_MEMORY, "attention: scratch for %lld heads x (%lld rows + %lld sums)",
                        (long long)heads, (long long)cache_rows, (long long)hd);
        TL_TRY(ctx.scratch(size_t(bytes) + (wide ? size_t(slots * slot_doubles) * sizeof(double) : 0), &s));
        scores = reinterpret_cast<double *>(s);
        sums = scores + heads * cache_rows;
        if (wide) wide_slots = sums + heads * hd;
    }
    NewTensor made;
    TL_TRY(ctx.make_tensor(q.dtype, 3, q.shape, &made));
    const View &o = made.view;
    if (o.numel() > 0)  // heads split over the executor when the work is big (valid rows x output)
        run_split(ctx, heads, elements, [&](int64_t h0, int64_t h1) {
            double *own = wide_slots ? wide_slots + (h0 / grain) * slot_doubles : nullptr;
            attention_kernel(q, k, v, valid, scale, scores, cache_rows, sums, own, o, h0, h1);
        }, wide ? min_grain : 1);
    *out = made.handle;
    return TL_OK;
}

}  // namespace tl
