/* Decode benchmarks, each against a baseline measured in the same run:
 *   1. this machine's memory read bandwidth over a buffer far past the last-level cache, with 1
 *      and 2 threads, three ways (a portable read loop, a vectorised read with eight accumulators
 *      built for this machine, a streaming copy); and raw cblas_sgemv streaming matrices of the
 *      d1024 step's largest shape: on one thread, on OpenBLAS's two, and as two single-threaded
 *      halves on a two-thread job pool (what tl_matmul does with an executor);
 *   2. one decode step of examples/decode's model at d_model 256 (cache-resident) and 1024
 *      (~420 MB of weights), scoped and ambient in interleaved rounds, on 1 thread, on 2
 *      OpenBLAS threads, and on a 2-thread job pool as the context's executor (BLAS at 1):
 *      us/step (min / median / max), the weights streamed per step in GB/s, and that as a
 *      fraction of the round's limit: the best of every read method and raw sgemv, measured in
 *      that round at its thread count (this machine is shared: its bandwidth moves from minute
 *      to minute, so each round has its own); scoped as a ratio of ambient (the median of each
 *      round's scoped/ambient, the two run in alternating order so neither always follows the
 *      read loop's flushed caches); and the fractions again over the rounds that began and ended
 *      with every processor at its fastest (cpu_speeds.c: this VM's processors at times run
 *      memory-bound code 1.7x slower);
 *   3. a summary against the best bandwidth the run saw at each thread count (every read method
 *      and raw sgemv stream, at any moment): the conservative fraction, since a round's limit can
 *      fall on a slow moment;
 *   4. the step with its weights in each storage dtype (1 thread, a 2-thread pool), and the d1024
 *      steps' summary as in 3;
 *   5. prefill shapes: 1, 2, 4, 8 and 16 activation rows against a weight in each dtype, against
 *      cblas_sgemm on the f32 weight in the same round.
 * The per-call overhead of tiny ops is bench_calls'.
 * Run: build/bench/bench_decode [--quick] */
#include <cblas.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bench_util.h"
#include "decode_steps.h"
#include "job_pool.h"
#include "read_limit.h"
#include "usage.h"

static const char USAGE[] =
    "usage: bench_decode [--quick] [--help]\n"
    "The decode step at d_model 256 and 1024, scoped and ambient, 1 and 2 threads, against the\nmachine's read "
    "bandwidth and raw sgemv measured in the same run.\n"
    "  --quick  fewer, shorter rounds\n";

/* ---- 1. memory read bandwidth ------------------------------------------------------------ */
static uint64_t *read_buf, *copy_buf; /* 512 MB each: read, and copied into */
static int read_huge;                 /* both on huge pages (read_buffer) */

/* Raw cblas_sgemv streaming `count` [k, n] f32 matrices (past the last-level cache), called as
 * tl_matmul calls it for a one-row product (row-major, transposed): whole on BLAS's threads, or,
 * with a pool, as two halves of k on its two threads (BLAS at 1 each) and their sums added. */
typedef struct sgemv_job {
    float *const *w;
    const float *x;
    float *y, *half; /* the second half's sums */
    int k, n, index;
} sgemv_job;

static void sgemv_half(void *arg, int64_t begin, int64_t end) {
    const sgemv_job *j = arg;
    for (int64_t h = begin; h < end; ++h) {
        const int k0 = (int)h * (j->k / 2);
        cblas_sgemv(CblasRowMajor, CblasTrans, j->k / 2, j->n, 1.0f, j->w[j->index] + (size_t)k0 * (size_t)j->n, j->n,
                    j->x + k0, 1, 0.0f, h ? j->half : j->y, 1);
    }
}

/* GB/s, best of `reps`. */
static double sgemv_streaming(sgemv_job *j, int count, job_pool *pool, int reps) {
    double best = 0;
    for (int r = 0; r < reps; ++r) {
        const double t0 = now_ns();
        for (j->index = 0; j->index < count; ++j->index) {
            if (!pool) {
                cblas_sgemv(CblasRowMajor, CblasTrans, j->k, j->n, 1.0f, j->w[j->index], j->n, j->x, 1, 0.0f, j->y, 1);
                continue;
            }
            job_pool_parallel_for(pool, 2, 1, sgemv_half, j);
            for (int i = 0; i < j->n; ++i) j->y[i] += j->half[i];
        }
        const double gbs = 4.0 * count * (double)j->k * (double)j->n / (now_ns() - t0);
        if (gbs > best) best = gbs;
    }
    return best;
}

/* ---- 2. decode steps -------------------------------------------------------------------------- */

/* How a step's work is shared: BLAS's threads, and the context's executor (a job pool). */
typedef struct thread_setup {
    const char *name;
    int threads, blas_threads;
    job_pool *pool;
} thread_setup;

static const size_t read_bytes = (size_t)512 << 20; /* far past any last-level cache here */
static double best_seen[3];                         /* GB/s, by thread count */

static double seen(int threads, double gbs) {
    if (gbs > best_seen[threads]) best_seen[threads] = gbs;
    return gbs;
}

/* Raw sgemv on the d1024 step's largest shape, 8 matrices (128 MB) so none stays cached. */
enum { RAW_K = 1024, RAW_N = 4096, RAW_COUNT = 8 };
static float *raw_w[RAW_COUNT];
static sgemv_job raw_sgemv = {raw_w, NULL, NULL, NULL, RAW_K, RAW_N, 0};

/* A round's limit at a setup's threads: the best of every read method and of raw sgemv shared as
 * the setup shares a matmul (BLAS's threads, or two halves on the pool), each the best of two. */
static double round_limit(const thread_setup *ts) {
    const double read = seen(ts->threads, read_bandwidth(read_buf, copy_buf, read_bytes, ts->threads, 2));
    const double gemv = seen(ts->threads, sgemv_streaming(&raw_sgemv, RAW_COUNT, ts->pool, 2));
    return read > gemv ? read : gemv;
}

/* The d1024 medians, for the summaries. */
typedef struct summary_row {
    const char *setup;
    int threads;
    tl_dtype dt;
    double gbs[2];
} summary_row;
static summary_row summary[16];
static int summary_rows;

/* The processor chain's length around each round (cpu_speeds): about 5 ms a processor. */
enum { SPEED_CHAIN = 10 * 1000 * 1000 };

static void bench_model(tl_context *ctx, model_config cfg, tl_dtype dt, int steps, int rounds,
                        const thread_setup *setups, int nsetups, int summarize) {
    model m;
    model_init_random(ctx, &cfg, &m);
    model_convert(ctx, &m, dt);
    const double wb = model_weight_bytes(&m);
    printf(
        "\n   d_model %d, %d layers, %d heads, vocab %d, %d-token cache, weights in %s: %.0f MB read per step; %d "
        "steps a run\n",
        cfg.d_model, cfg.layers, cfg.heads, cfg.vocab, cfg.tokens, tl_dtype_name(dt), wb / 1e6, steps);
    printf("   %-9s %-8s %31s %7s %23s %10s\n", "threads", "mode", "us/step (min / median / max)", "GB/s",
           "of limit (min/med/max)", "vs ambient");
    for (int s = 0; s < nsetups; ++s) {
        const thread_setup *ts = &setups[s];
        openblas_set_num_threads(ts->blas_threads);
        if (ts->pool) let_blas_workers_sleep(); /* after the setups on OpenBLAS's threads */
        const tl_executor ex = ts->pool ? job_pool_executor(ts->pool) : (tl_executor){NULL, NULL};
        TL_CHECK(tl_context_set_executor(ctx, &ex));
        decode_case c[2];
        double t[2][16], of_limit[2][16];
        for (int mode = 0; mode < 2; ++mode) {
            c[mode].steps = steps;
            decoder_open(&c[mode].d, ctx, &m, (memory_mode)mode);
            run_steps(&c[mode]); /* warm-up: slabs grown, pages touched */
        }
        double paired[16];                 /* scoped / ambient within each round: slow drift cancels */
        double speeds[16][2][MAX_CPU_SPEEDS]; /* each processor's chain before and after each round */
        int ncpus = 0;
        for (int r = 0; r < rounds; ++r) { /* interleaved: a noisy moment falls on both modes and the limit */
            ncpus = cpu_speeds(speeds[r][0], MAX_CPU_SPEEDS, SPEED_CHAIN);
            const double limit = round_limit(ts);
            for (int i = 0; i < 2; ++i) {
                const int mode = (i + r) % 2; /* the first after the read loop (caches flushed) alternates */
                t[mode][r] = median_ns(1, steps, run_steps, &c[mode]);
                of_limit[mode][r] = wb / t[mode][r] / limit;
            }
            paired[r] = t[1][r] / t[0][r];
            cpu_speeds(speeds[r][1], MAX_CPU_SPEEDS, SPEED_CHAIN);
        }
        /* The rounds that began and ended with every processor at its fastest of the run so far. */
        double full[2][16];
        int nfull = 0;
        for (int r = 0; r < rounds; ++r) {
            if (!ncpus || !cpu_speeds_at_full(speeds[r][0], ncpus) || !cpu_speeds_at_full(speeds[r][1], ncpus)) continue;
            full[0][nfull] = of_limit[0][r], full[1][nfull] = of_limit[1][r];
            ++nfull;
        }
        double plo, pmid, phi;
        spread3(paired, rounds, &plo, &pmid, &phi);
        double lo[2], mid[2], hi[2];
        for (int mode = 0; mode < 2; ++mode) {
            decoder_close(&c[mode].d);
            spread3(t[mode], rounds, &lo[mode], &mid[mode], &hi[mode]);
        }
        if (summarize && summary_rows < 16)
            summary[summary_rows++] = (summary_row){ts->name, ts->threads, dt, {wb / mid[0], wb / mid[1]}};
        for (int mode = 0; mode < 2; ++mode) {
            double flo, fmid, fhi;
            spread3(of_limit[mode], rounds, &flo, &fmid, &fhi);
            printf("   %-9s %-8s %9.1f / %9.1f / %9.1f %7.2f %7.0f%% /%4.0f%% /%4.0f%% ", ts->name,
                   mode ? "scoped" : "ambient", lo[mode] / 1e3, mid[mode] / 1e3, hi[mode] / 1e3, wb / mid[mode],
                   100 * flo, 100 * fmid, 100 * fhi);
            if (mode)
                printf("%9.3fx", pmid);
            else
                printf("%10s", "");
            printf("   (spread %.2fx)", hi[mode] / lo[mode]);
            if (mode) printf("  paired rounds %.3f-%.3f", plo, phi);
            printf("\n");
        }
        if (!ncpus) continue;
        printf("   %-9s %d of %d rounds with every processor at full speed", "", nfull, rounds);
        for (int mode = 0; nfull && mode < 2; ++mode) {
            double flo, fmid, fhi;
            spread3(full[mode], nfull, &flo, &fmid, &fhi);
            printf("%s %s %.0f%% / %.0f%% / %.0f%%", mode ? "," : ": of limit", mode ? "scoped" : "ambient", 100 * flo,
                   100 * fmid, 100 * fhi);
        }
        printf("\n");
    }
    TL_CHECK(tl_context_set_executor(ctx, NULL));
    model_free(ctx, &m);
}

/* ---- 5. prefill: a few rows at once -------------------------------------------------------- */
typedef struct prefill_case {
    tl_context *ctx;
    tl_tensor x, w; /* w: the [k, n] view of stored [n, k] rows */
    const float *xf, *wf;
    float *y;
    int m, k, n, reps;
    int blas; /* 1: cblas_sgemm on the f32 buffers instead */
} prefill_case;

static void run_prefill(void *arg) {
    prefill_case *p = arg;
    for (int r = 0; r < p->reps; ++r) {
        if (p->blas) {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, p->m, p->n, p->k, 1.0f, p->xf, p->k, p->wf, p->k, 0.0f,
                        p->y, p->n);
        } else {
            tl_tensor y;
            TL_CHECK(tl_matmul(p->ctx, p->x, p->w, &y));
            TL_CHECK(tl_tensor_free(p->ctx, y));
        }
    }
}

/* m rows of activations against one [4096 x 1024] weight (stored rows; repeated, so it stays in
 * this machine's 32 MB last-level cache: the arithmetic, not the memory) in each dtype, 1 thread:
 * us per product, and as a ratio of cblas_sgemm on the f32 weight in the same round. */
static void bench_prefill(tl_context *ctx, int quick) {
    enum { K = 1024, N = 4096 };
    const int ms[5] = {1, 2, 4, 8, 16};
    const tl_dtype dts[5] = {TL_F32, TL_F16, TL_BF16, TL_Q8_0, TL_Q4_0};
    printf(
        "\n5. prefill: m rows of activations times a [4096 x 1024] weight (stored rows), 1 thread, median us per\n"
        "   product of %d rounds; the ratio is against cblas_sgemm (NoTrans x Trans) on the f32 weight, same round\n",
        quick ? 3 : 7);
    openblas_set_num_threads(1);
    TL_CHECK(tl_context_set_executor(ctx, NULL));
    float *wf = malloc(sizeof(float) * K * N), *xf = malloc(sizeof(float) * 16 * K),
          *y = malloc(sizeof(float) * 16 * N);
    unsigned seed = 7;
    for (size_t i = 0; i < (size_t)K * N; ++i)
        wf[i] = (float)((seed = seed * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f;
    for (int i = 0; i < 16 * K; ++i) xf[i] = (float)(i % 13) * 0.1f - 0.6f;
    const int64_t ws[2] = {N, K};
    tl_tensor w32;
    TL_CHECK(tl_tensor_from_data(ctx, TL_F32, 2, ws, wf, sizeof(float) * K * N, &w32));
    printf("   %-6s", "m");
    for (int d = 0; d < 5; ++d) printf(" %18s", tl_dtype_name(dts[d]));
    printf(" %12s\n", "sgemm f32");
    for (int mi = 0; mi < 5; ++mi) {
        const int m = ms[mi];
        const int64_t xs[2] = {m, K};
        tl_tensor x;
        TL_CHECK(tl_tensor_from_data(ctx, TL_F32, 2, xs, xf, sizeof(float) * (size_t)(m * K), &x));
        prefill_case base = {ctx, x, {0}, xf, wf, y, m, K, N, 4, 1};
        const double blas_us = median_ns(quick ? 3 : 7, 4, run_prefill, &base) / 1e3;
        printf("   %-6d", m);
        for (int d = 0; d < 5; ++d) {
            tl_tensor stored = w32, view;
            if (dts[d] != TL_F32) TL_CHECK(tl_convert(ctx, w32, dts[d], &stored));
            TL_CHECK(tl_transpose(ctx, stored, 0, 1, &view));
            prefill_case c = {ctx, x, view, xf, wf, y, m, K, N, 4, 0};
            run_prefill(&c); /* warm */
            const double us = median_ns(quick ? 3 : 7, 4, run_prefill, &c) / 1e3;
            printf(" %9.1f (%5.2fx)", us, us / blas_us);
            TL_CHECK(tl_tensor_free(ctx, view));
            if (dts[d] != TL_F32) TL_CHECK(tl_tensor_free(ctx, stored));
        }
        printf(" %12.1f\n", blas_us);
        TL_CHECK(tl_tensor_free(ctx, x));
    }
    TL_CHECK(tl_tensor_free(ctx, w32));
    free(wf), free(xf), free(y);
}

int main(int argc, char **argv) {
    const int quick = quick_flag(argc, argv, USAGE);
    const int reps = quick ? 3 : 7;
    printf("tensorlife %s decode benchmark (ratios against baselines from this run)\n", tl_version_string());
    printf("machine: OpenBLAS core %s, SIMD kernels %s\n", tl_blas_core(), tl_simd_target());
    print_cpu_speeds("at the start");
    printf("\n");
    job_pool pool;
    if (job_pool_start(&pool, 2) != 0) return 1;

    /* On huge pages where granted: the reads' best, which 4 KiB pages hold back (bench/README.md). */
    read_huge = (read_buf = read_buffer(read_bytes, 1)) != NULL;
    if (!read_huge) read_buf = read_buffer(read_bytes, 0);
    copy_buf = read_buffer(read_bytes, read_huge);
    if (!read_buf || !copy_buf) return 1;
    for (size_t i = 0; i < read_bytes / 8; ++i) read_buf[i] = i, copy_buf[i] = 0;
    printf("1. memory read bandwidth over 512 MB%s, best of 5, by method (GB/s at 1 and 2 threads):\n",
           read_huge ? " on huge pages" : "");
    double bandwidth[3] = {0, 0, 0};
    for (int m = 0; m < READ_METHODS; ++m) {
        const double one = seen(1, read_bandwidth_by(m, read_buf, copy_buf, read_bytes, 1, 5));
        const double two = seen(2, read_bandwidth_by(m, read_buf, copy_buf, read_bytes, 2, 5));
        printf("   %-16s %6.2f  %6.2f\n", read_method_names[m], one, two);
        if (one > bandwidth[1]) bandwidth[1] = one;
        if (two > bandwidth[2]) bandwidth[2] = two;
    }
    printf("   the limit (the best of these): %.2f GB/s with 1 thread, %.2f GB/s with 2\n", bandwidth[1], bandwidth[2]);
    /* raw BLAS on the d1024 step's largest shape; its matrices stay for every round's limit */
    raw_sgemv.x = calloc(RAW_K, sizeof(float));
    raw_sgemv.y = calloc(RAW_N, sizeof(float)), raw_sgemv.half = calloc(RAW_N, sizeof(float));
    for (int i = 0; i < RAW_COUNT; ++i) {
        raw_w[i] = malloc(sizeof(float) * RAW_K * RAW_N);
        for (size_t e = 0; e < (size_t)RAW_K * RAW_N; ++e) raw_w[i][e] = (float)(e % 7) * 0.125f;
    }
    for (int k = 0; k < RAW_K; ++k) ((float *)raw_sgemv.x)[k] = 1.0f;
    printf("   raw cblas_sgemv streaming [%d x %d] f32 (best of 5), as a fraction of the best read method at its\n"
           "   thread count:\n", RAW_K, RAW_N);
    /* The three ways a step shares its work, the same for raw sgemv here and the steps below. */
    const thread_setup setups[3] = {{"1", 1, 1, NULL}, {"2 BLAS", 2, 2, NULL}, {"2 pool", 2, 1, &pool}};
    for (int i = 0; i < 3; ++i) {
        openblas_set_num_threads(setups[i].blas_threads);
        if (setups[i].pool) let_blas_workers_sleep();
        const double gbs = seen(setups[i].threads, sgemv_streaming(&raw_sgemv, RAW_COUNT, setups[i].pool, 5));
        printf("     %-9s %6.2f GB/s (%3.0f%%)\n", setups[i].name, gbs, 100.0 * gbs / bandwidth[setups[i].threads]);
    }
    printf("   (1: one thread; 2 BLAS: OpenBLAS's two threads; 2 pool: two halves on a 2-thread pool, BLAS at 1)\n");
    printf("   each round below takes as its limit the best of these methods and raw sgemv, measured again\n"
           "   in that round at its thread count and sharing\n");

    printf("\n2. decode step");
    tl_context *ctx;
    TL_CHECK(tl_context_create(NULL, &ctx));
    const model_config small = {256, 4, 4, 1024, 128, 1234, 0}, large = {1024, 8, 16, 4096, 128, 1234, 0};
    bench_model(ctx, small, TL_F32, 128, reps, setups, 3, 0);
    bench_model(ctx, large, TL_F32, quick ? 8 : 32, quick ? 3 : 5, setups, 3, 1);
    printf(
        "\n   (2 BLAS: OpenBLAS's own threads share each matmul; 2 pool: a 2-thread job pool is the context's\n"
        "    executor and BLAS runs at 1 thread, so each large matmul's row blocks go to the pool)\n");
    printf(
        "\n3. d_model 1024 against the best bandwidth this run saw (any read method or raw sgemv, any moment):\n"
        "   %.2f GB/s with 1 thread, %.2f GB/s with 2\n",
        best_seen[1], best_seen[2]);
    for (int i = 0; i < summary_rows; ++i)
        if (summary[i].dt == TL_F32)
            printf("   %-9s ambient %5.1f GB/s (%3.0f%%)   scoped %5.1f GB/s (%3.0f%%)\n", summary[i].setup,
               summary[i].gbs[0], 100 * summary[i].gbs[0] / best_seen[summary[i].threads], summary[i].gbs[1],
               100 * summary[i].gbs[1] / best_seen[summary[i].threads]);
    printf(
        "\n4. the decode step with weights in each storage dtype, read as stored (1 thread, and a 2-thread pool\n"
        "   as the executor); GB/s counts the bytes of the weights in their own dtype\n");
    const thread_setup by_dtype[2] = {setups[0], setups[2]};
    const tl_dtype dtypes[4] = {TL_F16, TL_BF16, TL_Q8_0, TL_Q4_0};
    for (int i = 0; i < 4; ++i) {
        bench_model(ctx, small, dtypes[i], quick ? 32 : 128, quick ? 3 : reps, by_dtype, 2, 0);
        bench_model(ctx, large, dtypes[i], quick ? 8 : 32, quick ? 3 : 5, by_dtype, 2, 1);
    }
    printf("\n   d_model 1024 scoped, each dtype against the best bandwidth this run saw (%.2f GB/s with 1\n"
           "   thread, %.2f with 2: any read method or raw sgemv, at any moment of the run)\n",
           best_seen[1], best_seen[2]);
    for (int i = 0; i < summary_rows; ++i)
        if (summary[i].dt != TL_F32)
            printf("   %-5s %-9s %5.1f GB/s (%3.0f%%)\n", tl_dtype_name(summary[i].dt), summary[i].setup,
                   summary[i].gbs[1], 100 * summary[i].gbs[1] / best_seen[summary[i].threads]);
    bench_prefill(ctx, quick);
    tl_context_destroy(ctx);
    read_buffer_free(read_buf, read_bytes, read_huge);
    read_buffer_free(copy_buf, read_bytes, read_huge);
    for (int i = 0; i < RAW_COUNT; ++i) free(raw_w[i]);
    free((float *)raw_sgemv.x), free(raw_sgemv.y), free(raw_sgemv.half);
    job_pool_stop(&pool);
    printf("\n");
    print_cpu_speeds("at the end");
    return 0;
}
