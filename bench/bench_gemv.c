/* One-row products, the decode step's projections: cblas_sgemm with m = 1 against cblas_sgemv
 * (transposed) on the same buffers, for weight matrices from cache-resident to far past the
 * last-level cache, at 1 and 2 BLAS threads.  Its ratios are what tl_matmul's choice of call
 * for one-row products rests on (kGemvMinBytes in impl/ops/matmul.cpp); the last column says
 * which call tl_matmul makes for that shape and how it compares.
 * Run: build/bench/bench_gemv [--quick] */
#include <cblas.h>
#include <stdio.h>
#include <string.h>
#include <tensorlife/tl.h>

#include "bench_util.h"
#include "usage.h"

static const char USAGE[] =
    "usage: bench_gemv [--quick] [--help]\n"
    "One-row products: cblas_sgemm (m = 1) against cblas_sgemv and tl_matmul, 1 and 2 BLAS threads.\n"
    "  --quick  fewer, shorter rounds\n";

extern void openblas_set_num_threads(int);

typedef struct {
    int k, n, reps;
    const float *w, *x;
    float *y;
    tl_context *ctx;
    tl_tensor tx, tw;
} job;

static void by_gemm(void *arg) {
    job *j = arg;
    for (int r = 0; r < j->reps; ++r)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 1, j->n, j->k, 1.0f, j->x, j->k, j->w, j->n, 0.0f, j->y,
                    j->n);
}

static void by_gemv(void *arg) {
    job *j = arg;
    for (int r = 0; r < j->reps; ++r)
        cblas_sgemv(CblasRowMajor, CblasTrans, j->k, j->n, 1.0f, j->w, j->n, j->x, 1, 0.0f, j->y, 1);
}

static void by_tl(void *arg) {
    job *j = arg;
    for (int r = 0; r < j->reps; ++r) {
        tl_tensor y;
        if (tl_matmul(j->ctx, j->tx, j->tw, &y) != TL_OK || tl_tensor_free(j->ctx, y) != TL_OK) exit(1);
    }
}

int main(int argc, char **argv) {
    const int quick = quick_flag(argc, argv, USAGE);
    const int shapes[][2] = {{256, 256},   {256, 1024},  {1024, 256}, {512, 512},
                             {1024, 1024}, {1024, 4096}, {4096, 1024}};
    const int count = sizeof shapes / sizeof *shapes;
    tl_context *ctx;
    if (tl_context_create(NULL, &ctx) != TL_OK) return 1;
    printf("one-row products [1,k]x[k,n] (us per product, median of 7; ratio gemv/gemm < 1: gemv faster)\n");
    printf("%7s %11s %9s %9s %7s %10s %s\n", "threads", "k x n", "gemm", "gemv", "ratio", "tl_matmul",
           "(vs faster call)");
    for (int threads = 1; threads <= 2; ++threads) {
        openblas_set_num_threads(threads);
        for (int s = 0; s < count; ++s) {
            job j = {shapes[s][0], shapes[s][1], 0, NULL, NULL, NULL, ctx, {0}, {0}};
            const size_t wbytes = (size_t)j.k * (size_t)j.n * sizeof(float);
            j.reps = (int)(quick ? 2e7 : 1e8) / (int)(wbytes / 4) + 1;
            float *w = malloc(wbytes), *x = malloc((size_t)j.k * sizeof(float)),
                  *y = malloc((size_t)j.n * sizeof(float));
            for (size_t i = 0; i < wbytes / 4; ++i) w[i] = (float)(i % 13) * 0.01f;
            for (int i = 0; i < j.k; ++i) x[i] = 0.5f;
            j.w = w, j.x = x, j.y = y;
            const int64_t sx[2] = {1, j.k}, sw[2] = {j.k, j.n};
            if (tl_tensor_wrap(ctx, TL_F32, 2, sx, x, (size_t)j.k * 4, &j.tx) != TL_OK ||
                tl_tensor_wrap(ctx, TL_F32, 2, sw, w, wbytes, &j.tw) != TL_OK)
                return 1;
            double gm[7], gv[7], tm[7];
            for (int r = 0; r < 7; ++r) { /* interleaved: noise falls on all three */
                gm[r] = median_ns(1, j.reps, by_gemm, &j);
                gv[r] = median_ns(1, j.reps, by_gemv, &j);
                tm[r] = median_ns(1, j.reps, by_tl, &j);
            }
            qsort(gm, 7, sizeof(double), compare_doubles);
            qsort(gv, 7, sizeof(double), compare_doubles);
            qsort(tm, 7, sizeof(double), compare_doubles);
            const double best = gm[3] < gv[3] ? gm[3] : gv[3];
            printf("%7d %5dx%-5d %9.1f %9.1f %7.2f %10.1f %.2fx\n", threads, j.k, j.n, gm[3] / 1e3, gv[3] / 1e3,
                   gv[3] / gm[3], tm[3] / 1e3, tm[3] / best);
            tl_tensor_free(ctx, j.tx);
            tl_tensor_free(ctx, j.tw);
            free(w), free(x), free(y);
        }
    }
    tl_context_destroy(ctx);
    return 0;
}
