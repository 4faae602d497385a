/* The Llama-family ops: RoPE in both pair conventions at a position offset, against the formula
 * written here, and grouped-query attention against the same attention with each key/value head
 * repeated for its group of query heads (the way Hugging Face's repeat_kv does it). */
#include <math.h>
#include <stdint.h>

#include "common.h"

CONTEXT_SUITE(llama);

static float lcg(unsigned *s) { return (float)((*s = *s * 1664525u + 1013904223u) >> 8) / 8388608.0f - 1.0f; }

/* x [H, T, d] rotated by the formula: pairs (2i, 2i+1) or (i, i + d/2), angle pos * theta^(-2i/d). */
static void rope_reference(const float *x, int heads, int t_len, int d, int64_t first, double theta, int halves,
                           double *out) {
    for (int h = 0; h < heads; ++h)
        for (int t = 0; t < t_len; ++t) {
            const float *row = x + (h * t_len + t) * d;
            double *o = out + (h * t_len + t) * d;
            for (int i = 0; i < d / 2; ++i) {
                const double angle = (double)(first + t) * pow(theta, -2.0 * i / d);
                const int a = halves ? i : 2 * i, b = halves ? i + d / 2 : 2 * i + 1;
                o[a] = row[a] * cos(angle) - row[b] * sin(angle);
                o[b] = row[a] * sin(angle) + row[b] * cos(angle);
            }
        }
}

Test(llama, rope_in_both_conventions_at_an_offset) {
    enum { H = 3, T = 5, D = 16 };
    float x[H * T * D], got[H * T * D];
    double want[H * T * D];
    unsigned seed = 5;
    for (int i = 0; i < H * T * D; ++i) x[i] = lcg(&seed);
    const int64_t shape[3] = {H, T, D};
    tl_tensor xt, y;
    OK(tl_tensor_from_data(ctx, TL_F32, 3, shape, x, sizeof x, &xt));
    for (int halves = 0; halves < 2; ++halves) {
        OK(tl_rope(ctx, xt, 37, 10000.0, halves ? TL_ROPE_HALVES : TL_ROPE_INTERLEAVED, &y));
        OK(tl_tensor_read(ctx, y, got, sizeof got));
        rope_reference(x, H, T, D, 37, 10000.0, halves, want);
        for (int i = 0; i < H * T * D; ++i)
            cr_assert(fabs(got[i] - want[i]) <= 1e-6 * (1 + fabs(want[i])), "%s %d: %g, want %g",
                      halves ? "halves" : "interleaved", i, got[i], want[i]);
    }
    /* Position 0 is the identity; the two conventions differ elsewhere. */
    OK(tl_rope(ctx, xt, 0, 10000.0, TL_ROPE_INTERLEAVED, &y));
    OK(tl_tensor_read(ctx, y, got, sizeof got));
    for (int i = 0; i < D; ++i) cr_assert_eq(got[i], x[i], "row 0 at position 0 is unturned");
    /* A strided view (a [T, H*D] cache seen as heads) gives the contiguous input's result. */
    tl_tensor tv, cont, y2;
    OK(tl_transpose(ctx, xt, 0, 1, &tv)); /* [T, H, D] */
    OK(tl_contiguous(ctx, tv, &cont));
    OK(tl_rope(ctx, tv, 3, 500000.0, TL_ROPE_HALVES, &y));
    OK(tl_rope(ctx, cont, 3, 500000.0, TL_ROPE_HALVES, &y2));
    float a[H * T * D], b[H * T * D];
    OK(tl_tensor_read(ctx, y, a, sizeof a));
    OK(tl_tensor_read(ctx, y2, b, sizeof b));
    cr_assert(memcmp(a, b, sizeof a) == 0, "a view and its contiguous copy");
    /* Refusals. */
    const int64_t odd[2] = {2, 3};
    tl_tensor o3, q8, f = {0};
    OK(tl_tensor_zeros(ctx, TL_F32, 2, odd, &o3));
    FAILS_WITH(tl_rope(ctx, o3, 0, 10000.0, TL_ROPE_HALVES, &y), TL_E_SHAPE);
    FAILS_WITH(tl_rope(ctx, xt, -1, 10000.0, TL_ROPE_HALVES, &y), TL_E_INVALID_ARGUMENT);
    FAILS_WITH(tl_rope(ctx, xt, 0, 0.0, TL_ROPE_HALVES, &y), TL_E_INVALID_ARGUMENT);
    FAILS_WITH(tl_rope(ctx, xt, 0, 10000.0, (tl_rope_mode)7, &y), TL_E_INVALID_ARGUMENT);
    const int64_t blk[2] = {1, 32};
    OK(tl_tensor_zeros(ctx, TL_F32, 2, blk, &f));
    OK(tl_convert(ctx, f, TL_Q8_0, &q8));
    FAILS_WITH(tl_rope(ctx, q8, 0, 10000.0, TL_ROPE_HALVES, &y), TL_E_DTYPE);
}

Test(llama, grouped_query_attention_is_attention_over_repeated_kv_heads) {
    enum { H = 8, HKV = 2, T = 6, D = 4, TQ = 2, VALID = 5 };
    float q[H * TQ * D], k[HKV * T * D], v[HKV * T * D], kr[H * T * D], vr[H * T * D];
    unsigned seed = 9;
    for (int i = 0; i < H * TQ * D; ++i) q[i] = lcg(&seed);
    for (int i = 0; i < HKV * T * D; ++i) k[i] = lcg(&seed), v[i] = lcg(&seed);
    for (int h = 0; h < H; ++h) /* repeat_kv: head h reads kv head h / (H / HKV) */
        for (int i = 0; i < T * D; ++i)
            kr[h * T * D + i] = k[(h / (H / HKV)) * T * D + i], vr[h * T * D + i] = v[(h / (H / HKV)) * T * D + i];
    const int64_t qs[3] = {H, TQ, D}, ks[3] = {HKV, T, D}, rs[3] = {H, T, D};
    tl_tensor tq, tk, tv, tkr, tvr, grouped, repeated;
    OK(tl_tensor_from_data(ctx, TL_F32, 3, qs, q, sizeof q, &tq));
    OK(tl_tensor_from_data(ctx, TL_F32, 3, ks, k, sizeof k, &tk));
    OK(tl_tensor_from_data(ctx, TL_F32, 3, ks, v, sizeof v, &tv));
    OK(tl_tensor_from_data(ctx, TL_F32, 3, rs, kr, sizeof kr, &tkr));
    OK(tl_tensor_from_data(ctx, TL_F32, 3, rs, vr, sizeof vr, &tvr));
    OK(tl_attention(ctx, tq, tk, tv, VALID, 0.5, &grouped));
    OK(tl_attention(ctx, tq, tkr, tvr, VALID, 0.5, &repeated));
    float a[H * TQ * D], b[H * TQ * D];
    OK(tl_tensor_read(ctx, grouped, a, sizeof a));
    OK(tl_tensor_read(ctx, repeated, b, sizeof b));
    cr_assert(memcmp(a, b, sizeof a) == 0, "grouped-query attention differs from repeated heads");
    /* Heads that do not divide are refused. */
    const int64_t k3[3] = {3, T, D};
    tl_tensor bad, out;
    OK(tl_tensor_zeros(ctx, TL_F32, 3, k3, &bad));
    FAILS_WITH(tl_attention(ctx, tq, bad, bad, VALID, 0.5, &out), TL_E_SHAPE);
}

/* A KV cache kept in f16 or bf16: attention over it equals, bitwise, attention over its decoded
 * f32 values (each element decoded exactly, the same sums in double); grouped heads included. */
Test(llama, attention_over_a_half_precision_cache) {
    enum { H = 4, HKV = 2, T = 7, D = 8, VALID = 6 };
    float q[H * D], k[HKV * T * D], v[HKV * T * D];
    unsigned seed = 13;
    for (int i = 0; i < H * D; ++i) q[i] = lcg(&seed);
    for (int i = 0; i < HKV * T * D; ++i) k[i] = lcg(&seed), v[i] = lcg(&seed);
    const int64_t qs[3] = {H, 1, D}, ks[3] = {HKV, T, D};
    tl_tensor tq, tk, tv;
    OK(tl_tensor_from_data(ctx, TL_F32, 3, qs, q, sizeof q, &tq));
    OK(tl_tensor_from_data(ctx, TL_F32, 3, ks, k, sizeof k, &tk));
    OK(tl_tensor_from_data(ctx, TL_F32, 3, ks, v, sizeof v, &tv));
    const tl_dtype halves[2] = {TL_F16, TL_BF16};
    for (int i = 0; i < 2; ++i) {
        tl_tensor hk, hv, dk, dv, got, want;
        OK(tl_tensor_zeros(ctx, halves[i], 3, ks, &hk)); /* a cache, written by copy_into */
        OK(tl_tensor_zeros(ctx, halves[i], 3, ks, &hv));
        OK(tl_copy_into(ctx, tk, hk));
        OK(tl_copy_into(ctx, tv, hv));
        OK(tl_convert(ctx, hk, TL_F32, &dk));
        OK(tl_convert(ctx, hv, TL_F32, &dv));
        OK(tl_attention(ctx, tq, hk, hv, VALID, 0.35, &got));
        OK(tl_attention(ctx, tq, dk, dv, VALID, 0.35, &want));
        float a[H * D], b[H * D];
        OK(tl_tensor_read(ctx, got, a, sizeof a));
        OK(tl_tensor_read(ctx, want, b, sizeof b));
        cr_assert(memcmp(a, b, sizeof a) == 0, "%s cache differs from its decoded values", tl_dtype_name(halves[i]));
        tl_tensor out;
        FAILS_WITH(tl_attention(ctx, tq, hk, tv, VALID, 0.35, &out), TL_E_DTYPE); /* k and v alike */
    }
}

/* A prompt's queries (four or more: each head's key and value rows widened once for all of them,
 * two queries at a time) give each query the bits it gets alone (one query a call, as a decode
 * step makes it): head sizes 64 and 72 (a last pass of fewer sums), grouped heads, a cache longer
 * than the valid rows, and valid rows too many for the widened rows' scratch (the per-query path). */
Test(llama, the_queries_of_a_prompt_give_their_own_bits) {
    enum { H = 8, HKV = 2, TQ = 9, DMAX = 72, TMAX = 4200 };
    static float q[H * TQ * DMAX], k[HKV * TMAX * DMAX], v[HKV * TMAX * DMAX], all[H * TQ * DMAX], one[H * DMAX];
    const struct {
        int64_t rows, valid;
    } caches[2] = {{40, 37}, {TMAX, 4100}};
    for (int c = 0; c < 2; ++c)
        for (int dd = 64; dd <= DMAX; dd += 8) {
            const int64_t T = caches[c].rows, VALID = caches[c].valid;
            unsigned seed = 31;
            for (int i = 0; i < H * TQ * dd; ++i) q[i] = lcg(&seed);
            for (int64_t i = 0; i < HKV * T * dd; ++i) k[i] = lcg(&seed), v[i] = 3 * lcg(&seed);
            const int64_t qs[3] = {H, TQ, dd}, ks[3] = {HKV, T, dd};
            tl_tensor tq, tk, tv, y, qi, yi;
            OK(tl_tensor_from_data(ctx, TL_F32, 3, qs, q, sizeof(float) * H * TQ * dd, &tq));
            OK(tl_tensor_from_data(ctx, TL_F32, 3, ks, k, sizeof(float) * (size_t)(HKV * T * dd), &tk));
            OK(tl_tensor_from_data(ctx, TL_F32, 3, ks, v, sizeof(float) * (size_t)(HKV * T * dd), &tv));
            OK(tl_attention(ctx, tq, tk, tv, VALID, 0.125, &y));
            OK(tl_tensor_read(ctx, y, all, sizeof(float) * H * TQ * dd));
            for (int i = 0; i < TQ; ++i) {
                OK(tl_slice(ctx, tq, 1, i, 1, &qi));
                OK(tl_attention(ctx, qi, tk, tv, VALID - TQ + i + 1, 0.125, &yi));
                OK(tl_tensor_read(ctx, yi, one, sizeof(float) * H * dd));
                for (int h = 0; h < H; ++h)
                    cr_assert(memcmp(one + h * dd, all + (h * TQ + i) * dd, sizeof(float) * (size_t)dd) == 0,
                              "%lld valid rows, hd %d, head %d, query %d differs from the query alone", (long long)VALID,
                              dd, h, i);
            }
        }
}
