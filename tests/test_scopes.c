/* Scopes: nesting, slabs, TL_GROW merging, TL_FIXED exhaustion, stats, the steady state. */
#include <stdint.h>

#include "common.h"

static const int64_t shape_1k[1] = {1024};

CONTEXT_SUITE(scopes); /* each test's ctx; the allocator tests make their own context */

Test(scopes, nest_and_current_target) {
    tl_scope cur = {1};
    OK(tl_scope_current(ctx, &cur));
    cr_assert_eq(cur.bits, 0);
    tl_scope outer, inner;
    OK(tl_scope_open(ctx, "outer", 4096, &outer));
    OK(tl_scope_open(ctx, "inner", 0, &inner));
    OK(tl_scope_current(ctx, &cur));
    cr_assert(SAME_SCOPE(cur, inner));
    tl_tensor t;
    OK(tl_tensor_zeros(ctx, TL_F32, 1, shape_1k, &t));
    tl_tensor_info info = TL_TENSOR_INFO_INIT;
    OK(tl_tensor_info_get(ctx, t, &info));
    cr_assert_str_eq(info.storage, "inner");
    FAILS_WITH(tl_scope_reset(ctx, outer), TL_E_SCOPE_ORDER);
    FAILS_WITH(tl_scope_close(ctx, outer), TL_E_SCOPE_ORDER);
    OK(tl_scope_close(ctx, inner));
    OK(tl_scope_current(ctx, &cur));
    cr_assert(SAME_SCOPE(cur, outer));
    OK(tl_tensor_zeros(ctx, TL_F32, 1, shape_1k, &t));
    OK(tl_tensor_info_get(ctx, t, &info));
    cr_assert_str_eq(info.storage, "outer");
    OK(tl_scope_close(ctx, outer));
    OK(tl_tensor_zeros(ctx, TL_F32, 1, shape_1k, &t));
    OK(tl_tensor_info_get(ctx, t, &info));
    cr_assert_str_eq(info.storage, "ambient");
    OK(tl_tensor_free(ctx, t));
}

Test(scopes, tensors_are_64_byte_aligned) {
    tl_scope s;
    OK(tl_scope_open(ctx, "align", 1 << 16, &s));
    for (int64_t n = 1; n < 40; n += 3) {
        tl_tensor t;
        void *p;
        OK(tl_tensor_zeros(ctx, TL_F32, 1, &n, &t));
        OK(tl_tensor_data(ctx, t, &p));
        cr_assert_eq((uintptr_t)p % 64, 0, "size %lld at %p", (long long)n, p);
        tl_tensor_info info = TL_TENSOR_INFO_INIT;
        OK(tl_tensor_info_get(ctx, t, &info));
        cr_assert_eq(info.offset % 16, 0);
    }
    OK(tl_scope_close(ctx, s));
    tl_tensor t;
    void *p;
    int64_t n = 3;
    OK(tl_tensor_zeros(ctx, TL_F64, 1, &n, &t));
    OK(tl_tensor_data(ctx, t, &p));
    cr_assert_eq((uintptr_t)p % 64, 0);
}

Test(scopes, grow_adds_chunks_then_merges_at_reset) {
    tl_scope s;
    OK(tl_scope_open(ctx, "grow", 4096, &s)); /* one 4 KiB tensor fits; the rest overflow */
    const int64_t shape[1] = {1024};          /* 4096 bytes each */
    for (int step = 0; step < 4; ++step) {
        for (int i = 0; i < 8; ++i) {
            tl_tensor t;
            OK(tl_tensor_ones(ctx, TL_F32, 1, shape, &t));
        }
        tl_scope_stats st = stats_of(s);
        cr_assert_eq(st.used_bytes, 8 * 4096);
        cr_assert_eq(st.live_tensors, 8);
        cr_assert_eq(st.peak_bytes, 8 * 4096);
        if (step == 0) {
            cr_assert_gt(st.overflow_bytes, 0);
            cr_assert_geq(st.grow_events, 1);
        } else {
            cr_assert_eq(st.overflow_bytes, 0, "step %d overflowed", step);
            cr_assert_eq(st.slab_bytes, 8 * 4096, "merged slab is the high-water size");
        }
        OK(tl_scope_reset(ctx, s));
    }
    tl_scope_stats st = stats_of(s);
    cr_assert_eq(st.generation, 4);
    cr_assert_eq(st.used_bytes, 0);
    cr_assert_eq(st.live_tensors, 0);
    OK(tl_scope_close(ctx, s));
}

/* A merge the allocator refuses keeps the chunks; the next reset's merge is the high-water size
 * of every step so far, not of the smaller step just before it, so a big step again fits. */
Test(scopes, a_merge_after_a_refused_one_is_the_high_water_size) {
    counting_allocator counter = {0};
    const tl_allocator a = counting_allocator_of(&counter);
    tl_context *c;
    OK(tl_context_create(&a, &c));
    tl_scope s;
    OK(tl_scope_open(c, "grow", 4096, &s));
    const int64_t shape[1] = {1024}; /* 4096 bytes each */
    tl_tensor t;
    for (int i = 0; i < 8; ++i) OK(tl_tensor_ones(c, TL_F32, 1, shape, &t)); /* big: chunks */
    counter.fail_at = counter.allocs + 1;                                     /* the merge */
    OK(tl_scope_reset(c, s));
    counter.fail_at = 0;
    tl_scope_stats st = stats_of_scope(c, s);
    cr_assert_gt(st.slab_bytes, 4096, "the chunks are kept");
    OK(tl_tensor_ones(c, TL_F32, 1, shape, &t)); /* small */
    OK(tl_scope_reset(c, s));                    /* merged now */
    st = stats_of_scope(c, s);
    cr_assert_eq(st.slab_bytes, 8 * 4096, "merged to the high-water size");
    const long before = counter.allocs;
    for (int i = 0; i < 8; ++i) OK(tl_tensor_ones(c, TL_F32, 1, shape, &t)); /* big again */
    cr_assert_eq(counter.allocs, before, "the big step grew the slab again");
    OK(tl_scope_close(c, s));
    tl_context_destroy(c);
    cr_assert_eq(counter.live_bytes, 0);
}

Test(scopes, fixed_scope_exhaustion_changes_nothing_and_reset_recovers) {
    tl_scope_options o = {sizeof o, TL_FIXED, 3 * 4096, 0};
    tl_scope s;
    OK(tl_scope_open_ex(ctx, "fixed", &o, &s));
    tl_tensor t[3];
    for (int i = 0; i < 3; ++i) OK(tl_tensor_zeros(ctx, TL_F32, 1, shape_1k, &t[i]));
    tl_scope_stats before = stats_of(s);
    tl_tensor extra = {12345};
    FAILS_WITH(tl_tensor_zeros(ctx, TL_F32, 1, shape_1k, &extra), TL_E_SCOPE_FULL);
    cr_assert_eq(extra.bits, 12345, "output untouched");
    cr_assert(strstr(tl_last_error(), "fixed") != NULL, "%s", tl_last_error());
    FAILS_WITH(tl_add(ctx, t[0], t[1], &extra), TL_E_SCOPE_FULL);
    tl_scope_stats after = stats_of(s);
    cr_assert_eq(after.used_bytes, before.used_bytes);
    cr_assert_eq(after.live_tensors, before.live_tensors);
    cr_assert_eq(after.slab_bytes, 3 * 4096);
    cr_assert_eq(after.grow_events, 0);
    float v[1024];
    OK(tl_tensor_read(ctx, t[2], v, sizeof v)); /* existing tensors still fine */
    OK(tl_scope_reset(ctx, s));
    OK(tl_tensor_zeros(ctx, TL_F32, 1, shape_1k, &extra));
    OK(tl_scope_close(ctx, s));
}

Test(scopes, max_bytes_limits_growth) {
    tl_scope_options o = {sizeof o, TL_GROW, 4096, 8192};
    tl_scope s;
    OK(tl_scope_open_ex(ctx, "capped", &o, &s));
    tl_tensor t;
    OK(tl_tensor_zeros(ctx, TL_F32, 1, shape_1k, &t));
    OK(tl_tensor_zeros(ctx, TL_F32, 1, shape_1k, &t));
    FAILS_WITH(tl_tensor_zeros(ctx, TL_F32, 1, shape_1k, &t), TL_E_SCOPE_FULL);
    cr_assert_leq(stats_of(s).slab_bytes, 8192);
    OK(tl_scope_close(ctx, s));
    tl_scope_options bad = {sizeof bad, (tl_growth)7, 0, 0};
    FAILS_WITH(tl_scope_open_ex(ctx, "bad", &bad, &s), TL_E_INVALID_ARGUMENT);
    tl_scope_options inverted = {sizeof inverted, TL_GROW, 8192, 4096};
    FAILS_WITH(tl_scope_open_ex(ctx, "bad", &inverted, &s), TL_E_INVALID_ARGUMENT);
}

Test(scopes, reset_slab_is_dirty_but_factories_write_everything) {
    tl_scope s;
    OK(tl_scope_open(ctx, "dirty", 1 << 16, &s));
    tl_tensor t;
    OK(tl_tensor_full(ctx, TL_F32, 1, shape_1k, 7.5, &t));
    OK(tl_scope_reset(ctx, s));
    OK(tl_tensor_zeros(ctx, TL_F32, 1, shape_1k, &t));
    float v[1024];
    read_f32(ctx, t, v, 1024);
    for (int i = 0; i < 1024; ++i) cr_assert_eq(v[i], 0.0f);
    OK(tl_scope_reset(ctx, s));
    OK(tl_tensor_full(ctx, TL_I32, 1, shape_1k, -3, &t));
    int32_t iv[1024];
    OK(tl_tensor_read(ctx, t, iv, sizeof iv));
    for (int i = 0; i < 1024; ++i) cr_assert_eq(iv[i], -3);
    FAILS_WITH(tl_tensor_full(ctx, TL_I32, 1, shape_1k, 0.5, &t), TL_E_INVALID_ARGUMENT);
    /* int32's range, both ends and one past each */
    const double edges[4] = {-2147483648.0, 2147483647.0, -2147483649.0, 2147483648.0};
    for (int e = 0; e < 4; ++e) {
        if (e >= 2) {
            FAILS_WITH(tl_tensor_full(ctx, TL_I32, 1, shape_1k, edges[e], &t), TL_E_INVALID_ARGUMENT);
            continue;
        }
        OK(tl_tensor_full(ctx, TL_I32, 1, shape_1k, edges[e], &t));
        OK(tl_tensor_read(ctx, t, iv, sizeof iv));
        cr_assert(iv[0] == (int32_t)edges[e] && iv[1023] == (int32_t)edges[e]);
    }
    OK(tl_scope_close(ctx, s));
}

Test(scopes, retain_moves_a_tensor_out) {
    tl_scope outer, inner;
    OK(tl_scope_open(ctx, "outer", 0, &outer));
    OK(tl_scope_open(ctx, "inner", 0, &inner));
    float data[4] = {1, 2, 3, 4};
    int64_t shape[2] = {2, 2};
    tl_tensor t = make_f32(ctx, 2, shape, data), tt, kept_outer, kept_ambient;
    OK(tl_transpose(ctx, t, 0, 1, &tt));
    OK(tl_tensor_retain(ctx, tt, outer, &kept_outer));
    OK(tl_tensor_retain(ctx, t, TL_NO_SCOPE, &kept_ambient));
    OK(tl_scope_reset(ctx, inner));
    float v[4];
    read_f32(ctx, kept_outer, v, 4);
    const float want_t[4] = {1, 3, 2, 4};
    assert_close(v, want_t, 4, 0);
    OK(tl_scope_close(ctx, inner));
    OK(tl_scope_close(ctx, outer));
    FAILS_WITH(tl_tensor_read(ctx, kept_outer, v, sizeof v), TL_E_STORAGE_CLOSED);
    read_f32(ctx, kept_ambient, v, 4);
    assert_close(v, data, 4, 0);
    tl_tensor_info info = TL_TENSOR_INFO_INIT;
    OK(tl_tensor_info_get(ctx, kept_ambient, &info));
    cr_assert_str_eq(info.storage, "ambient");
    OK(tl_tensor_free(ctx, kept_ambient));
}

Test(scopes, nesting_is_bounded) {
    tl_scope s[TL_MAX_SCOPE_DEPTH + 1];
    for (int i = 0; i < TL_MAX_SCOPE_DEPTH; ++i) OK(tl_scope_open(ctx, "deep", 0, &s[i]));
    FAILS_WITH(tl_scope_open(ctx, "too-deep", 0, &s[TL_MAX_SCOPE_DEPTH]), TL_E_SCOPE_ORDER);
    for (int i = TL_MAX_SCOPE_DEPTH - 1; i >= 0; --i) OK(tl_scope_close(ctx, s[i]));
    tl_context *left; /* destroy also frees scopes left open: */
    OK(tl_context_create(NULL, &left));
    OK(tl_scope_open(left, "left-open", 1 << 20, &s[0]));
    tl_context_destroy(left);
}

/* A decode-like step: embedding lookup, projections, attention-ish softmax, residual add. */
static void decode_step(tl_context *ctx, tl_tensor emb, tl_tensor w1, tl_tensor w2, tl_tensor norm_w, int token) {
    int32_t id = token % 64;
    int64_t one = 1;
    tl_tensor ids, x, h, a, y, s, r, best;
    OK(tl_tensor_from_data(ctx, TL_I32, 1, &one, &id, sizeof id, &ids));
    OK(tl_gather_rows(ctx, emb, ids, &x));
    OK(tl_rmsnorm(ctx, x, norm_w, 1e-5, &h));
    OK(tl_matmul(ctx, h, w1, &a));
    OK(tl_silu(ctx, a, &a));
    OK(tl_matmul(ctx, a, w2, &y));
    OK(tl_softmax(ctx, y, -1, &s));
    OK(tl_add(ctx, x, s, &r));
    OK(tl_argmax(ctx, r, -1, &best));
}

Test(scopes, steady_state_allocates_nothing_after_step_one) {
    counting_allocator counter = {0};
    tl_allocator alloc = counting_allocator_of(&counter);
    tl_context *counted;
    OK(tl_context_create(&alloc, &counted));
    unsigned seed = 1;
    float emb_data[64 * 32], w1_data[32 * 96], w2_data[96 * 32], nw[32];
    for (int i = 0; i < 64 * 32; ++i) emb_data[i] = rand_unit(&seed);
    for (int i = 0; i < 32 * 96; ++i) w1_data[i] = rand_unit(&seed) * 0.2f;
    for (int i = 0; i < 96 * 32; ++i) w2_data[i] = rand_unit(&seed) * 0.2f;
    for (int i = 0; i < 32; ++i) nw[i] = 1.0f + 0.01f * (float)i;
    const int64_t se[2] = {64, 32}, s1[2] = {32, 96}, s2[2] = {96, 32}, sn[1] = {32};
    tl_tensor emb = make_f32(counted, 2, se, emb_data), w1 = make_f32(counted, 2, s1, w1_data),
              w2 = make_f32(counted, 2, s2, w2_data), norm_w = make_f32(counted, 1, sn, nw);
    tl_scope step;
    OK(tl_scope_open(counted, "decode-step", 0, &step)); /* no slab yet: step 1 grows it */
    decode_step(counted, emb, w1, w2, norm_w, 0);
    OK(tl_scope_reset(counted, step));
    tl_scope_stats first = stats_of_scope(counted, step);
    cr_assert_gt(first.grow_events, 0);
    for (int token = 1; token < 100; ++token) {
        long before = counter.allocs;
        decode_step(counted, emb, w1, w2, norm_w, token);
        OK(tl_scope_reset(counted, step));
        cr_assert_eq(counter.allocs - before, 0, "step %d made %ld allocations", token, counter.allocs - before);
        tl_scope_stats st = stats_of_scope(counted, step);
        cr_assert_eq(st.peak_bytes, first.peak_bytes, "step %d", token);
        cr_assert_eq(st.slab_bytes, first.slab_bytes, "step %d", token);
        cr_assert_eq(st.grow_events, first.grow_events, "step %d", token);
        cr_assert_eq(st.generation, (uint64_t)token + 1);
    }
    OK(tl_scope_close(counted, step));
    tl_context_destroy(counted);
    cr_assert_eq(counter.allocs, counter.frees, "every allocation freed");
    cr_assert_eq(counter.live_bytes, 0);
}

Test(scopes, every_byte_comes_from_the_allocator) {
    counting_allocator counter = {0};
    tl_allocator alloc = counting_allocator_of(&counter);
    tl_context *counted;
    OK(tl_context_create(&alloc, &counted));
    cr_assert_gt(counter.allocs, 0, "the context itself is allocated through it");
    tl_tensor t;
    OK(tl_tensor_ones(counted, TL_F64, 1, shape_1k, &t));
    tl_scope s;
    OK(tl_scope_open(counted, "named", 1000, &s));
    OK(tl_tensor_ones(counted, TL_F64, 1, shape_1k, &t));
    tl_context_destroy(counted); /* scope and ambient tensor left for destroy */
    cr_assert_eq(counter.allocs, counter.frees);
    cr_assert_eq(counter.live_bytes, 0);
}

/* tl_scope_open_ex with NULL options takes TL_SCOPE_OPTIONS_INIT: a growing scope. */
Test(scopes, null_options_are_the_defaults) {
    tl_scope s;
    OK(tl_scope_open_ex(ctx, "defaults", NULL, &s));
    cr_assert_str_eq(tl_scope_name(ctx, s), "defaults");
    const int64_t shape_4m[1] = {1 << 20};
    tl_tensor t;
    for (int i = 0; i < 3; ++i) OK(tl_tensor_zeros(ctx, TL_F32, 1, shape_4m, &t));
    tl_scope_stats st = TL_SCOPE_STATS_INIT;
    OK(tl_scope_stats_get(ctx, s, &st));
    cr_assert_geq(st.used_bytes, 3u << 22, "a default scope grows to what it is asked for");
    OK(tl_scope_close(ctx, s));
}
