/* Decode benchmarks, each against a baseline measured in the same run:
 *   1. this machine's memory read bandwidth: a plain read loop over a buffer far past the
 *      last-level cache, with 1 and 2 threads (the limit a decode step that streams its
 *      weights can reach), and raw cblas_sgemv streaming matrices of the d1024 step's largest
 *      shape the same way (what BLAS itself reaches of that limit);
 *   2. one decode step of examples/decode's model at d_model 256 (cache-resident) and 1024
 *      (~420 MB of weights), with 1 and 2 BLAS threads, scoped and ambient in interleaved
 *      rounds: us/step (min / median / max), the weights streamed per step in GB/s, and that as a
 *      fraction of the bandwidth measured at the same thread count; scoped as a ratio of ambient.
 * The per-call overhead of tiny ops is bench_calls'.
 * Run: build/bench/bench_decode [--quick] */
#include <cblas.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bench_util.h"
#include "decode_steps.h"


/* ---- 1. memory read bandwidth ------------------------------------------------------------ */
typedef struct reader {
    const uint64_t *data;
    size_t words;
    uint64_t sum;
} reader;

static void *read_all(void *arg) {
    reader *r = arg;
    uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (size_t i = 0; i + 4 <= r->words; i += 4) s0 += r->data[i], s1 += r->data[i + 1], s2 += r->data[i + 2], s3 += r->data[i + 3];
    r->sum = s0 + s1 + s2 + s3;
    return NULL;
}

/* GB/s reading `bytes` once with `threads` threads, each its own share; best of `reps`. */
static double read_bandwidth(const uint64_t *buf, size_t bytes, int threads, int reps) {
    double best = 0;
    for (int r = 0; r < reps; ++r) {
        pthread_t t[2];
        reader part[2];
        const size_t share = bytes / 8 / (size_t)threads;
        const double t0 = now_ns();
        for (int i = 0; i < threads; ++i) {
            part[i] = (reader){buf + (size_t)i * share, share, 0};
            pthread_create(&t[i], NULL, read_all, &part[i]);
        }
        for (int i = 0; i < threads; ++i) pthread_join(t[i], NULL);
        const double gbs = (double)bytes / (now_ns() - t0);
        if (part[0].sum == 42) printf(" ");  /* keep the sums */
        if (gbs > best) best = gbs;
    }
    return best;
}

/* GB/s of raw cblas_sgemv streaming `count` [k, n] f32 matrices (past the last-level cache),
 * called as tl_matmul calls it for a one-row product (row-major, transposed); best of `reps`.
 * BLAS's own ceiling for a decode step's projections at this thread count. */
static double sgemv_streaming(float *const *w, int count, int k, int n, const float *x, float *y, int reps) {
    double best = 0;
    for (int r = 0; r < reps; ++r) {
        const double t0 = now_ns();
        for (int i = 0; i < count; ++i) cblas_sgemv(CblasRowMajor, CblasTrans, k, n, 1.0f, w[i], n, x, 1, 0.0f, y, 1);
        const double gbs = 4.0 * count * (double)k * (double)n / (now_ns() - t0);
        if (gbs > best) best = gbs;
    }
    return best;
}

/* ---- 2. decode steps -------------------------------------------------------------------------- */

/* Bytes of weights one step reads: every layer's matrices and the logits head (embedding and
 * norm rows are noise beside them). */
static double weight_bytes(const model_config *c) {
    const double d = c->d_model;
    return 4.0 * ((double)c->layers * 12.0 * d * d + d * (double)c->vocab);
}

static void bench_model(tl_context *ctx, model_config cfg, int steps, int rounds, const double bandwidth[3]) {
    model m;
    model_init_random(ctx, &cfg, &m);
    const double wb = weight_bytes(&cfg);
    printf("\n   d_model %d, %d layers, %d heads, vocab %d, %d-token cache, %.0f MB of weights read per step; %d steps a run\n",
           cfg.d_model, cfg.layers, cfg.heads, cfg.vocab, cfg.tokens, wb / 1e6, steps);
    printf("   %7s %-8s %31s %9s %10s %9s\n", "threads", "mode", "us/step (min / median / max)", "GB/s", "of limit",
           "vs ambient");
    for (int threads = 1; threads <= 2; ++threads) {
        openblas_set_num_threads(threads);
        decode_case c[2];
        double t[2][16];
        for (int mode = 0; mode < 2; ++mode) {
            c[mode].steps = steps;
            decoder_open(&c[mode].d, ctx, &m, (memory_mode)mode);
            run_steps(&c[mode]); /* warm-up: slabs grown, pages touched */
        }
        for (int r = 0; r < rounds; ++r) /* interleaved: a noisy moment falls on both modes */
            for (int mode = 0; mode < 2; ++mode) t[mode][r] = median_ns(1, steps, run_steps, &c[mode]);
        double lo[2], mid[2], hi[2];
        for (int mode = 0; mode < 2; ++mode) {
            decoder_close(&c[mode].d);
            spread3(t[mode], rounds, &lo[mode], &mid[mode], &hi[mode]);
        }
        for (int mode = 0; mode < 2; ++mode) {
            const double gbs = wb / mid[mode];
            printf("   %7d %-8s %9.1f / %9.1f / %9.1f %9.2f %9.0f%% ", threads, mode ? "scoped" : "ambient", lo[mode] / 1e3,
                   mid[mode] / 1e3, hi[mode] / 1e3, gbs, 100.0 * gbs / bandwidth[threads]);
            if (mode) printf("%9.3fx", mid[1] / mid[0]);
            printf("   (spread %.2fx)\n", hi[mode] / lo[mode]);
        }
    }
    model_free(ctx, &m);
}

int main(int argc, char **argv) {
    const int quick = argc > 1 && !strcmp(argv[1], "--quick");
    const int reps = quick ? 3 : 7;
    printf("tensorlife %s decode benchmark (ratios against baselines from this run)\n\n", tl_version_string());

    const size_t buf_bytes = (size_t)512 << 20; /* far past any last-level cache here */
    uint64_t *buf = malloc(buf_bytes);
    for (size_t i = 0; i < buf_bytes / 8; ++i) buf[i] = i;
    double bandwidth[3] = {0, read_bandwidth(buf, buf_bytes, 1, 5), read_bandwidth(buf, buf_bytes, 2, 5)};
    free(buf);
    printf("1. memory read bandwidth (a read loop over 512 MB, best of 5): %.2f GB/s with 1 thread, %.2f GB/s with 2\n",
           bandwidth[1], bandwidth[2]);
    {  /* raw BLAS on the d1024 step's largest shape, 8 matrices (128 MB) so none stays cached */
        enum { K = 1024, N = 4096, COUNT = 8 };
        float *w[COUNT], *x = calloc(N, sizeof(float)), *y = calloc(N, sizeof(float));
        for (int i = 0; i < COUNT; ++i) {
            w[i] = malloc(sizeof(float) * K * N);
            for (size_t j = 0; j < (size_t)K * N; ++j) w[i][j] = (float)(j % 7) * 0.125f;
        }
        for (int k = 0; k < K; ++k) x[k] = 1.0f;
        printf("   raw cblas_sgemv streaming [%d x %d] f32 (best of 5):", K, N);
        for (int threads = 1; threads <= 2; ++threads) {
            openblas_set_num_threads(threads);
            const double gbs = sgemv_streaming(w, COUNT, K, N, x, y, 5);
            printf(" %.2f GB/s (%.0f%% of the read loop) with %d thread%s%s", gbs, 100.0 * gbs / bandwidth[threads],
                   threads, threads > 1 ? "s" : "", threads == 1 ? "," : "\n");
        }
        for (int i = 0; i < COUNT; ++i) free(w[i]);
        free(x);
        free(y);
    }

    printf("\n2. decode step");
    tl_context *ctx;
    TL_CHECK(tl_context_create(NULL, &ctx));
    const model_config small = {256, 4, 4, 1024, 128, 1234, 0}, large = {1024, 8, 16, 4096, 128, 1234, 0};
    bench_model(ctx, small, 128, reps, bandwidth);
    bench_model(ctx, large, quick ? 8 : 32, quick ? 3 : 5, bandwidth);
    tl_context_destroy(ctx);
    return 0;
}
