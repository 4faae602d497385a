/* Allocator failure injection: a scenario that touches every allocating path runs with an
 * allocator that refuses its Nth allocation, for N = 1, 2, ... until the scenario completes.
 * Every refusal must come back as TL_E_OUT_OF_MEMORY from the call that needed the memory,
 * leave the context usable, and leak nothing once the context is destroyed. */
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "common.h"

#define STEP(call)                                  \
  do {                                              \
    tl_status step_status_ = (call);                \
    if (step_status_ != TL_OK) return step_status_; \
  } while (0)

static char path[128];

static tl_status scenario(tl_context *ctx) {
    const int64_t s2[2] = {16, 24}, s3[3] = {2, 16, 24}, s1[1] = {24};
    float data[16 * 24];
    for (int i = 0; i < 16 * 24; ++i) data[i] = (float)i / 100.0f;
    tl_tensor w, a, b, t, v, r;
    STEP(tl_tensor_from_data(ctx, TL_F32, 2, s2, data, sizeof data, &w)); /* ambient */
    tl_scope outer, inner;
    STEP(tl_scope_open(ctx, "outer", 1024, &outer));
    STEP(tl_scope_open(ctx, "inner", 0, &inner));
    for (int step = 0; step < 3; ++step) {
        STEP(tl_tensor_ones(ctx, TL_F32, 3, s3, &a));
        STEP(tl_transpose(ctx, w, 0, 1, &t));
        STEP(tl_matmul(ctx, a, t, &b));
        STEP(tl_reshape(ctx, b, 2, (const int64_t[]){32, 16}, &v));
        STEP(tl_slice(ctx, a, 2, 1, 3, &v));
        STEP(tl_matmul(ctx, v, (tl_tensor){0}, &r) == TL_E_INVALID_HANDLE ? TL_OK : TL_E_INTERNAL);
        STEP(tl_contiguous(ctx, v, &r));
        STEP(tl_softmax(ctx, b, -1, &r));
        STEP(tl_rmsnorm(ctx, a, (tl_tensor){0}, 1e-5, &r));
        STEP(tl_tensor_full(ctx, TL_F32, 1, s1, 2.0, &r));
        STEP(tl_add(ctx, a, r, &r));
        tl_tensor parts[2] = {a, a};
        STEP(tl_concat(ctx, 2, parts, 0, &r));
        STEP(tl_tensor_retain(ctx, r, outer, &r));
        STEP(tl_scope_reset(ctx, inner));
    }
    STEP(tl_scope_close(ctx, inner));
    const char *names[2] = {"w", "r"};
    tl_tensor both[2] = {w, r};
    STEP(tl_safetensors_save(ctx, path, 2, names, both));
    tl_safetensors_file *f;
    STEP(tl_safetensors_open(ctx, path, &f));
    tl_status st = tl_safetensors_get(ctx, f, "r", &t);
    tl_safetensors_close(f);
    STEP(st);
    char *text;
    STEP(tl_context_report_json(ctx, &text));
    tl_string_free(text);
    STEP(tl_tensor_to_json(ctx, w, &text));
    STEP(tl_tensor_from_json(ctx, text, &t) == TL_OK ? (tl_string_free(text), TL_OK)
                                                     : (tl_string_free(text), TL_E_OUT_OF_MEMORY));
    STEP(tl_tensor_retain(ctx, r, TL_NO_SCOPE, &a)); /* ambient */
    STEP(tl_scope_close(ctx, outer));
    STEP(tl_tensor_free(ctx, a));
    return TL_OK;
}

Test(faults, every_refused_allocation_is_reported_and_leaks_nothing) {
    snprintf(path, sizeof path, "%s/tl-faults-%d.safetensors", temp_root(), (int)getpid());
    int failures = 0;
    for (long n = 1;; ++n) {
        counting_allocator counter = {0};
        counter.fail_at = n;
        tl_allocator alloc = counting_allocator_of(&counter);
        tl_context *ctx = NULL;
        tl_status st = tl_context_create(&alloc, &ctx);
        if (st == TL_OK) {
            st = scenario(ctx);
            if (st != TL_OK) {
                /* The context still works once memory is there again. */
                counter.fail_at = 0;
                tl_tensor probe;
                const int64_t one = 4;
                OK(tl_tensor_zeros(ctx, TL_F64, 1, &one, &probe));
                double back[4] = {1, 1, 1, 1};
                OK(tl_tensor_read(ctx, probe, back, sizeof back));
                cr_assert(back[0] == 0 && back[3] == 0);
            }
            tl_context_destroy(ctx);
        }
        cr_assert_eq(counter.live_bytes, 0, "allocation %ld refused: %lld bytes leaked", n, counter.live_bytes);
        cr_assert_eq(counter.allocs - (counter.allocs >= n ? 1 : 0), counter.frees,
                     "allocation %ld refused: %ld allocations, %ld frees", n, counter.allocs, counter.frees);
        if (st == TL_OK && counter.allocs < n) break; /* the scenario never reached allocation n */
        cr_assert_eq(st, TL_E_OUT_OF_MEMORY, "allocation %ld refused gave %s (%s)", n, tl_status_string(st),
                     tl_last_error());
        ++failures;
    }
    cr_assert_gt(failures, 20, "only %d allocation points were exercised", failures);
    cr_log_info("%d allocation points refused one by one", failures);
    unlink(path);
}
