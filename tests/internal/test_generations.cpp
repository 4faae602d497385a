// The handle generation space from inside (it needs the process-wide counter moved, so it links
// the static library and its internal header): no wrap after 2^32 resets, and a status, not a
// wrap, once the 2^40 generations are issued.  Each Criterion test runs in its own process.
#include <criterion/criterion.h>
#include <tensorlife/tl.h>

#include <cstring>

#include "core/generations.h"

#define OK(call) cr_assert_eq((call), TL_OK, "%s: %s", #call, tl_last_error())

static const int64_t one[1] = {1};

// A handle kept while its scope's generation moves on by exactly 2^32 values: with a 32-bit
// generation it matched again and read the new tensor.
Test(generations, no_wrap_after_2_to_the_32_resets) {
    tl_context *ctx;
    OK(tl_context_create(nullptr, &ctx));
    tl_scope s;
    OK(tl_scope_open(ctx, "wraps", 0, &s));
    tl_tensor kept;
    OK(tl_tensor_full(ctx, TL_F32, 1, one, 1.0, &kept));
    const uint64_t kept_generation = kept.bits & (tl::kGenerationLimit - 1);
    // Let the scope's next block start exactly 2^32 past the kept one's value, then reset up to it.
    for (int i = 0; i < 64; ++i) OK(tl_scope_reset(ctx, s));  // leave the first small blocks behind
    tl::set_next_unissued_generation(kept_generation + (uint64_t(1) << 32) - 64);
    tl_tensor now = {0};
    for (int i = 0; i < 1 << 12; ++i) {
        OK(tl_scope_reset(ctx, s));
        OK(tl_tensor_full(ctx, TL_F32, 1, one, 2.0, &now));
        if ((now.bits & 0xffffffffu) == (kept.bits & 0xffffffffu) && now.bits != kept.bits) break;
    }
    cr_assert_eq(now.bits & 0xffffffffu, kept.bits & 0xffffffffu, "the low 32 bits never met again");
    float x = 0;
    cr_assert_eq(tl_tensor_read(ctx, kept, &x, sizeof x), TL_E_STORAGE_CLOSED, "%s", tl_last_error());
    cr_assert_eq(x, 0.0f);
    tl_context_destroy(ctx);
}

// Near the end of the space: resets, scope opens and ambient tensors fail with a status and
// change nothing; every kept handle stays refused.
Test(generations, exhausted_space_fails_with_a_status) {
    tl::set_next_unissued_generation(tl::kGenerationLimit - 40);
    tl_context *ctx;
    OK(tl_context_create(nullptr, &ctx));
    tl_scope s;
    OK(tl_scope_open(ctx, "last", 0, &s));  // takes a block of 16
    tl_tensor kept;
    OK(tl_tensor_full(ctx, TL_F32, 1, one, 1.0, &kept));
    tl_status st = TL_OK;
    int resets = 0;
    while ((st = tl_scope_reset(ctx, s)) == TL_OK) ++resets;
    cr_assert_eq(st, TL_E_OUT_OF_MEMORY);
    cr_assert(std::strstr(tl_last_error(), "never wrap"), "%s", tl_last_error());
    cr_assert_lt(resets, 40);
    tl_scope_stats stats = TL_SCOPE_STATS_INIT;
    OK(tl_scope_stats_get(ctx, s, &stats));
    cr_assert_eq(stats.generation, uint64_t(resets), "the failed reset changed nothing");
    float x;
    cr_assert_eq(tl_tensor_read(ctx, kept, &x, sizeof x), TL_E_STORAGE_CLOSED);
    OK(tl_scope_close(ctx, s));  // closing needs no new generation
    tl_scope again;
    cr_assert_eq(tl_scope_open(ctx, "more", 0, &again), TL_E_OUT_OF_MEMORY);
    tl_tensor t;
    tl_status ambient = TL_OK;
    for (int i = 0; i < 64 && ambient == TL_OK; ++i) ambient = tl_tensor_zeros(ctx, TL_F32, 1, one, &t);
    cr_assert_eq(ambient, TL_E_OUT_OF_MEMORY);
    tl_context_destroy(ctx);
}
