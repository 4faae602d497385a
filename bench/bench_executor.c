/* The caller's executor (tl_executor) against inline runs, in one process, interleaved:
 *   1. a large elementwise op (exp of [2048, 2048] f32) and a softmax over its rows;
 *   2. the demo's decode step at d_model 1024, BLAS at 1 thread, with and without the hook
 *      (with it, each large matmul's row blocks run on the hook's threads), and BLAS at 2 threads
 *      without it (OpenBLAS's own threads share each matmul).
 * The "engine" is examples/support/job_pool.h with 2 threads (the caller and one worker), splitting
 * each parallel_for in two halves.  min / median / max of interleaved rounds.
 * Run: build/bench/bench_executor [--quick] */
#include <stdio.h>
#include <string.h>

#include "bench_util.h"
#include "decode_steps.h"
#include "job_pool.h"
#include "usage.h"

static const char USAGE[] =
    "usage: bench_executor [--quick] [--help]\n"
    "Ops and the decode step on a 2-thread job pool as the context's executor, against inline runs.\n"
    "  --quick  fewer, shorter rounds\n";

/* ---- the work ----------------------------------------------------------------------------------- */
static tl_context *ctx;
static tl_tensor big;
static tl_scope scope;

static void elementwise(void *arg) {
    (void)arg;
    tl_tensor y;
    TL_CHECK(tl_exp(ctx, big, &y));
    TL_CHECK(tl_softmax(ctx, y, -1, &y));
    TL_CHECK(tl_scope_reset(ctx, scope));
}

static void report(const char *what, double *v, int n, double base) {
    qsort(v, (size_t)n, sizeof *v, compare_doubles);
    printf("   %-34s %10.1f / %10.1f / %10.1f us   %.2fx inline\n", what, v[0] / 1e3, v[n / 2] / 1e3, v[n - 1] / 1e3,
           base > 0 ? base / v[n / 2] : 1.0);
}

int main(int argc, char **argv) {
    const int quick = quick_flag(argc, argv, USAGE);
    const int rounds = quick ? 3 : 7;
    job_pool p;
    if (job_pool_start(&p, 2) != 0) return 1;
    const tl_executor hook = job_pool_executor(&p);
    TL_CHECK(tl_set_blas_threads(1));
    TL_CHECK(tl_context_create(NULL, &ctx));

    printf("executor benchmark: a 2-thread job system (the caller + one worker) vs inline\n\n");
    printf("1. exp and softmax over [2048, 2048] f32, in a scope (us per pair, min / median / max)\n");
    const int64_t shape[2] = {2048, 2048};
    TL_CHECK(tl_tensor_full(ctx, TL_F32, 2, shape, 0.5, &big));
    TL_CHECK(tl_scope_open(ctx, "work", 0, &scope));
    elementwise(NULL);
    double inl[16], split[16];
    for (int r = 0; r < rounds; ++r) {
        TL_CHECK(tl_context_set_executor(ctx, NULL));
        inl[r] = median_ns(1, 1, elementwise, NULL);
        TL_CHECK(tl_context_set_executor(ctx, &hook));
        split[r] = median_ns(1, 1, elementwise, NULL);
    }
    double sorted[16];
    memcpy(sorted, inl, sizeof inl);
    qsort(sorted, (size_t)rounds, sizeof(double), compare_doubles);
    const double base = sorted[rounds / 2];
    report("inline", inl, rounds, base);
    report("executor, 2 threads", split, rounds, base);
    TL_CHECK(tl_scope_close(ctx, scope));
    TL_CHECK(tl_context_set_executor(ctx, NULL));

    printf("\n2. decode step, d_model 1024, 8 layers, vocab 4096 (us per step, min / median / max)\n");
    const model_config cfg = {1024, 8, 16, 4096, 128, 1234, 0};
    model m;
    model_init_random(ctx, &cfg, &m);
    decode_case c = {.steps = quick ? 4 : 16};
    decoder_open(&c.d, ctx, &m, MODE_SCOPED);
    run_steps(&c);
    double d_inl[16], d_hook[16], d_blas2[16];
    for (int r = 0; r < (quick ? 3 : 5); ++r) {
        TL_CHECK(tl_set_blas_threads(1));
        TL_CHECK(tl_context_set_executor(ctx, NULL));
        d_inl[r] = median_ns(1, c.steps, run_steps, &c);
        TL_CHECK(tl_context_set_executor(ctx, &hook));
        d_hook[r] = median_ns(1, c.steps, run_steps, &c);
        TL_CHECK(tl_context_set_executor(ctx, NULL));
        TL_CHECK(tl_set_blas_threads(2));
        d_blas2[r] = median_ns(1, c.steps, run_steps, &c);
    }
    const int dr = quick ? 3 : 5;
    memcpy(sorted, d_inl, sizeof d_inl);
    qsort(sorted, (size_t)dr, sizeof(double), compare_doubles);
    report("BLAS 1 thread, inline", d_inl, dr, sorted[dr / 2]);
    report("BLAS 1 thread, executor 2 threads", d_hook, dr, sorted[dr / 2]);
    report("BLAS 2 threads, inline", d_blas2, dr, sorted[dr / 2]);
    printf(
        "   (the step is matmul-bound: with the executor, each large matmul's row blocks run on its threads,\n"
        "    each on single-threaded BLAS; with BLAS at 2 threads, OpenBLAS's own pool shares each call)\n");
    decoder_close(&c.d);
    model_free(ctx, &m);
    tl_context_destroy(ctx);
    job_pool_stop(&p);
    return 0;
}
