/* Per-call overhead of tiny ops, the cost that dominates a cache-resident decode step:
 *   1. tl_add of 16 floats in a scope vs a plain C loop over the same floats;
 *   2. scoped tl_tensor_zeros of 64 floats vs malloc+memset+free of the same bytes;
 *   3. that tl_add with the context's thread check off vs with it on (the default);
 * Rounds are interleaved (baseline, then tensorlife, then the next round), so a noisy stretch
 * of this shared machine hits both; min/median/max over the rounds.
 * Run: build/bench/bench_calls [--quick] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tensorlife/tl.h>

#include "bench_util.h"
#include "usage.h"

static const char USAGE[] =
    "usage: bench_calls [--quick] [--help]\n"
    "Per-call overhead of tiny ops: tl_add of 16 floats and scoped zeros against a plain C loop and malloc.\n"
    "  --quick  fewer, shorter rounds\n";

enum { RESET_EVERY = 256 }; /* tensors per "step" before the scope resets */
static int iters = 400000;
static tl_context *ctx;
static tl_scope scope;
static tl_tensor a16, b16;
static float x16[16], y16[16], z16[16];
static volatile uintptr_t sink;
static const int64_t shape16[1] = {16}, shape64[1] = {64};

static void tl_add_16(void *arg) {
    (void)arg;
    tl_tensor out;
    for (int i = 0; i < iters; ++i) {
        TL_CHECK(tl_add(ctx, a16, b16, &out));
        if (i % RESET_EVERY == RESET_EVERY - 1) TL_CHECK(tl_scope_reset(ctx, scope));
    }
    TL_CHECK(tl_scope_reset(ctx, scope));
}

/* The same adds with the context's thread check off (tl_context_set_thread_check), as the
 * bindings' records run them: the check's share of a tiny op. */
static void tl_add_16_unchecked(void *arg) {
    TL_CHECK(tl_context_set_thread_check(ctx, 0));
    tl_add_16(arg);
    TL_CHECK(tl_context_set_thread_check(ctx, 1));
}

static void c_add_16(void *arg) {
    (void)arg;
    for (int i = 0; i < iters; ++i) {
        for (int j = 0; j < 16; ++j) z16[j] = x16[j] + y16[j];
        __asm__ volatile("" : : "r"(z16) : "memory"); /* keep every iteration's stores */
    }
}

static void tl_zeros_64(void *arg) {
    (void)arg;
    tl_tensor out;
    for (int i = 0; i < iters; ++i) {
        TL_CHECK(tl_tensor_zeros(ctx, TL_F32, 1, shape64, &out));
        if (i % RESET_EVERY == RESET_EVERY - 1) TL_CHECK(tl_scope_reset(ctx, scope));
    }
    TL_CHECK(tl_scope_reset(ctx, scope));
}

/* The same step shape with malloc: RESET_EVERY zeroed blocks live at once, then all freed. */
static void malloc_64(void *arg) {
    (void)arg;
    float *ps[RESET_EVERY];
    for (int i = 0; i < iters; i += RESET_EVERY) {
        for (int j = 0; j < RESET_EVERY; ++j) {
            ps[j] = malloc(64 * sizeof(float));
            memset(ps[j], 0, 64 * sizeof(float));
            sink += (uintptr_t)ps[j];
        }
        for (int j = 0; j < RESET_EVERY; ++j) free(ps[j]);
    }
}

typedef struct pair {
    const char *name, *baseline_name;
    void (*fn)(void *), (*baseline)(void *);
    void *baseline_arg;
} pair;

static void run_pair(const pair *p, int rounds) {
    double t[64], b[64];
    p->fn(NULL); /* warm-up: the slab and tables reach their size */
    p->baseline(p->baseline_arg);
    for (int r = 0; r < rounds; ++r) {
        b[r] = median_ns(1, iters, p->baseline, p->baseline_arg);
        t[r] = median_ns(1, iters, p->fn, NULL);
    }
    double bl, bm, bh, tl_lo, tl_mid, tl_hi;
    spread3(b, rounds, &bl, &bm, &bh);
    spread3(t, rounds, &tl_lo, &tl_mid, &tl_hi);
    printf("   %-28s %6.1f ns (min %.1f, max %.1f)   baseline\n", p->baseline_name, bm, bl, bh);
    printf("   %-28s %6.1f ns (min %.1f, max %.1f)   %.2fx baseline; spread max/min %.2f\n", p->name, tl_mid, tl_lo,
           tl_hi, tl_mid / bm, tl_hi / tl_lo);
}

int main(int argc, char **argv) {
    const int quick = quick_flag(argc, argv, USAGE);
    const int rounds = quick ? 5 : 11;
    if (quick) iters = 100000;
    printf("tensorlife %s per-call benchmark (%d interleaved rounds of %d calls; BLAS at 1 thread)\n\n",
           tl_version_string(), rounds, iters);
    TL_CHECK(tl_set_blas_threads(1));
    TL_CHECK(tl_context_create(NULL, &ctx));
    for (int i = 0; i < 16; ++i) x16[i] = (float)i, y16[i] = 0.5f * (float)i;
    TL_CHECK(tl_tensor_from_data(ctx, TL_F32, 1, shape16, x16, sizeof x16, &a16));
    TL_CHECK(tl_tensor_from_data(ctx, TL_F32, 1, shape16, y16, sizeof y16, &b16));
    TL_CHECK(tl_scope_open(ctx, "calls", 0, &scope));

    const pair pairs[] = {
        {"tl_add, 16 f32 (scoped)", "plain C loop", tl_add_16, c_add_16, NULL},
        {"tl_tensor_zeros, 64 f32", "malloc+memset+free", tl_zeros_64, malloc_64, NULL},
        {"tl_add, thread check off", "tl_add, 16 f32 (scoped)", tl_add_16_unchecked, tl_add_16, NULL},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; ++i) {
        printf("%zu. %s\n", i + 1, pairs[i].name);
        run_pair(&pairs[i], rounds);
    }
    TL_CHECK(tl_scope_close(ctx, scope));
    tl_context_destroy(ctx);
    return 0;
}
