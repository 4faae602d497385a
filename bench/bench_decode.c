/* Decode benchmarks, each a ratio against a baseline from the same run:
 *   1. one decode step of examples/decode's model, scoped vs ambient;
 *   2. per-op overhead: tl_add of 16 floats in a scope vs a plain C loop over the same floats.
 * Run: build/bench/bench_decode [--quick] */
#include <stdio.h>
#include <string.h>

#include "bench_util.h"
#include "model.h"

typedef struct decode_case {
    decoder d;
    int steps;
} decode_case;

static void run_steps(void *arg) {
    decode_case *c = arg;
    int32_t token = 1;
    for (int pos = 0; pos < c->steps; ++pos) token = decoder_step(&c->d, token, pos, NULL);
}

static tl_context *ctx;
static tl_tensor a16, b16;
static float x16[16], y16[16], z16[16];
static int op_iters = 200000;
static tl_scope *op_scope;

static void tl_add_tiny(void *arg) {
    (void)arg;
    tl_tensor out;
    for (int i = 0; i < op_iters; ++i) {
        TL_CHECK(tl_add(ctx, a16, b16, &out));
        if ((i & 255) == 255) TL_CHECK(tl_scope_reset(op_scope));
    }
    TL_CHECK(tl_scope_reset(op_scope));
}

static void c_add_tiny(void *arg) {
    (void)arg;
    for (int i = 0; i < op_iters; ++i) {
        for (int j = 0; j < 16; ++j) z16[j] = x16[j] + y16[j];
        __asm__ volatile("" : : "r"(z16) : "memory"); /* keep every iteration's stores */
    }
}

int main(int argc, char **argv) {
    const int quick = argc > 1 && !strcmp(argv[1], "--quick");
    const int reps = quick ? 3 : 9;
    model_config cfg = {256, 4, 4, 1024, 128, 1234};
    printf("tensorlife %s decode benchmark (median of %d runs; ratios against baselines from this run)\n\n",
           tl_version_string(), reps);
    printf("1. decode step, d_model %d, %d layers, %d heads, vocab %d, %d-token cache\n", cfg.d_model, cfg.layers,
           cfg.heads, cfg.vocab, cfg.tokens);
    TL_CHECK(tl_context_create(NULL, &ctx));
    model m;
    model_init_random(ctx, &cfg, &m);
    double per_step[2];
    for (int mode = 0; mode < 2; ++mode) {
        decode_case c = {.steps = cfg.tokens};
        decoder_open(&c.d, ctx, &m, (memory_mode)mode);
        run_steps(&c); /* warm-up */
        per_step[mode] = median_ns(reps, c.steps, run_steps, &c);
        decoder_close(&c.d);
    }
    printf("   ambient %8.1f us/step   baseline\n", per_step[MODE_AMBIENT] / 1e3);
    printf("   scoped  %8.1f us/step   %.3fx ambient\n", per_step[MODE_SCOPED] / 1e3,
           per_step[MODE_SCOPED] / per_step[MODE_AMBIENT]);
    model_free(ctx, &m);

    printf("\n2. per-op overhead: add of 16 floats\n");
    if (quick) op_iters = 20000;
    for (int i = 0; i < 16; ++i) x16[i] = (float)i, y16[i] = 0.5f * (float)i;
    int64_t shape[1] = {16};
    TL_CHECK(tl_tensor_from_data(ctx, TL_F32, 1, shape, x16, sizeof x16, &a16));
    TL_CHECK(tl_tensor_from_data(ctx, TL_F32, 1, shape, y16, sizeof y16, &b16));
    TL_CHECK(tl_scope_open(ctx, "tiny-ops", 1 << 16, &op_scope));
    tl_add_tiny(NULL);
    const double t_c = median_ns(reps, op_iters, c_add_tiny, NULL);
    const double t_tl = median_ns(reps, op_iters, tl_add_tiny, NULL);
    printf("   plain C loop     %7.1f ns   baseline\n", t_c);
    printf("   tl_add (scoped)  %7.1f ns   %.1fx the C loop (%.1f ns of call, check and placement)\n", t_tl,
           t_tl / t_c, t_tl - t_c);
    TL_CHECK(tl_scope_close(op_scope));
    tl_context_destroy(ctx);
    return 0;
}
