/* One-row products per storage dtype, the decode step's kernel alone: tl_matmul of one f32 row
 * against stored [n, k] weights in f32, f16, bf16, q8_0, q4_0, q4_K and q6_K, from L2, from L3 and from DRAM
 * (enough copies of the weight, taken in turn, that none stays cached), at 1 thread.  Baselines
 * from the same run: raw cblas_sgemv on the f32 weights of the same shape, and for DRAM the
 * machine's read limit: the best of read_limit.h's methods (a vectorised read and a streaming copy
 * built for this CPU, a portable loop) and of raw sgemv streaming the same weights.
 * Run: build/bench/bench_kernels [--quick] */
#include <cblas.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <tensorlife/tl.h>

#include "bench_util.h"
#include "read_limit.h"
#include "usage.h"

static const char USAGE[] =
    "usage: bench_kernels [--quick] [--help]\n"
    "One-row tl_matmul per storage dtype from L2, L3 and DRAM at 1 thread, against raw sgemv and the read limit.\n"
    "  --quick  fewer repetitions\n";

extern void openblas_set_num_threads(int);

enum { DTYPES = 7, MAX_COPIES = 64 };
static const tl_dtype dtypes[DTYPES] = {TL_F32, TL_F16, TL_BF16, TL_Q8_0, TL_Q4_0, TL_Q4_K, TL_Q6_K};
static const char *const dtype_names[DTYPES] = {"f32", "f16", "bf16", "q8_0", "q4_0", "q4_K", "q6_K"};

typedef struct {
    const char *where;
    int k, n, reps;
    size_t stream_bytes; /* 0: one copy, read again and again (cached); else the copies' total */
} level;

/* Time of each call in ns, `reps` calls over `copies` weights in turn. */
typedef struct {
    double lo, mid, hi;
} spread;

static spread time_tl(tl_context *ctx, tl_tensor x, const tl_tensor *w, int copies, int reps) {
    static double t[4096];
    tl_scope step;
    TL_CHECK(tl_scope_open(ctx, "step", 0, &step));
    for (int r = 0; r < reps; ++r) {
        tl_tensor y;
        const double t0 = now_ns();
        TL_CHECK(tl_matmul(ctx, x, w[r % copies], &y));
        t[r] = now_ns() - t0;
        TL_CHECK(tl_scope_reset(ctx, step));
    }
    TL_CHECK(tl_scope_close(ctx, step));
    spread s;
    spread3(t, reps, &s.lo, &s.mid, &s.hi);
    return s;
}

static spread time_sgemv(float *const *w, int copies, const float *x, float *y, int k, int n, int reps) {
    static double t[4096];
    for (int r = 0; r < reps; ++r) {
        const double t0 = now_ns();
        cblas_sgemv(CblasRowMajor, CblasNoTrans, n, k, 1.0f, w[r % copies], k, x, 1, 0.0f, y, 1);
        t[r] = now_ns() - t0;
    }
    spread s;
    spread3(t, reps, &s.lo, &s.mid, &s.hi);
    return s;
}

static void bench_level(tl_context *ctx, level lv, double limit) {
    const int k = lv.k, n = lv.n;
    const size_t f32_bytes = sizeof(float) * (size_t)k * n;
    int copies = lv.stream_bytes ? (int)((lv.stream_bytes + f32_bytes - 1) / f32_bytes) : 1;
    float *w[MAX_COPIES], *x = malloc(sizeof(float) * k), *y = malloc(sizeof(float) * n);
    for (int c = 0; c < copies; ++c) {
        w[c] = malloc(f32_bytes);
        for (size_t e = 0; e < (size_t)k * n; ++e) w[c][e] = (float)((e * 7 + c) % 13) * 0.0625f - 0.375f;
    }
    for (int i = 0; i < k; ++i) x[i] = (float)(i % 5) * 0.25f - 0.5f;
    const spread raw = time_sgemv(w, copies, x, y, k, n, lv.reps);
    if (lv.stream_bytes && f32_bytes / raw.lo > limit) limit = f32_bytes / raw.lo;
    printf("\n%s: [%d x %d] weights%s, one row; raw sgemv (f32) %.1f us median\n", lv.where, n, k,
           lv.stream_bytes ? " streamed, copies in turn" : "", raw.mid / 1e3);
    if (lv.stream_bytes) printf("   the limit: %.2f GB/s (the read methods' best, or raw sgemv's if faster)\n", limit);
    printf("   %-5s %28s %10s %9s %13s%s\n", "dtype", "us a call: min / median / max", "ns/block", "GB/s", "/ raw sgemv",
           lv.stream_bytes ? "   of the limit" : "");

    const int64_t shape[2] = {n, k}, row[2] = {1, k};
    tl_tensor tx;
    TL_CHECK(tl_tensor_from_data(ctx, TL_F32, 2, row, x, sizeof(float) * k, &tx));
    for (int d = 0; d < DTYPES; ++d) {
        int64_t block_elements;
        size_t block_bytes;
        TL_CHECK(tl_dtype_block(dtypes[d], &block_elements, &block_bytes));
        const size_t bytes = (size_t)k * n / block_elements * block_bytes;
        int count = lv.stream_bytes ? (int)((lv.stream_bytes + bytes - 1) / bytes) : 1;
        if (count > MAX_COPIES) count = MAX_COPIES;
        tl_scope sources, weights; /* the f32 copies, then the copies in the dtype (inner) */
        TL_CHECK(tl_scope_open(ctx, "sources", 0, &sources));
        tl_tensor f32[MAX_COPIES], stored[MAX_COPIES];
        for (int c = 0; c < copies; ++c)
            TL_CHECK(tl_tensor_from_data(ctx, TL_F32, 2, shape, w[c], f32_bytes, &f32[c]));
        TL_CHECK(tl_scope_open(ctx, "weights", 0, &weights));
        for (int c = 0; c < count; ++c) {
            tl_tensor in_dtype = f32[c % copies];
            if (dtypes[d] != TL_F32) TL_CHECK(tl_convert(ctx, f32[c % copies], dtypes[d], &in_dtype));
            TL_CHECK(tl_transpose(ctx, in_dtype, 0, 1, &stored[c]));
        }
        const spread s = time_tl(ctx, tx, stored, count, lv.reps);
        TL_CHECK(tl_scope_close(ctx, weights));
        TL_CHECK(tl_scope_close(ctx, sources));
        const double gbs = (double)bytes / s.lo;
        printf("   %-5s %8.1f / %8.1f / %8.1f %10.3f %9.2f %12.2fx", dtype_names[d], s.lo / 1e3, s.mid / 1e3, s.hi / 1e3,
               s.mid / ((double)k * n / 32), gbs, s.mid / raw.mid);
        if (lv.stream_bytes) printf("   %5.0f%%", 100.0 * gbs / limit);
        printf("\n");
    }
    for (int c = 0; c < copies; ++c) free(w[c]);
    free(x), free(y);
}

int main(int argc, char **argv) {
    const int quick = quick_flag(argc, argv, USAGE);
    printf("tensorlife %s one-row kernels by storage dtype, 1 thread (ratios against baselines from this run)\n",
           tl_version_string());
    printf("machine: OpenBLAS core %s, SIMD kernels %s\n", tl_blas_core(), tl_simd_target());
    print_cpu_speeds("at the start");
    openblas_set_num_threads(1);
    const size_t read_bytes = (size_t)512 << 20;
    uint64_t *read_buf = malloc(read_bytes), *copy_buf = malloc(read_bytes);
    for (size_t i = 0; i < read_bytes / 8; ++i) read_buf[i] = i, copy_buf[i] = 0;
    const double limit = read_bandwidth(read_buf, copy_buf, read_bytes, 1, 5);
    free(read_buf), free(copy_buf);
    printf("read methods (the best of a read loop, a vectorised read and a streaming copy over 512 MB, 1 thread): "
           "%.2f GB/s\n", limit);
    printf("GB/s: the dtype's own bytes over the fastest call; ns/block and the ratio: the median call\n");
    tl_context *ctx;
    TL_CHECK(tl_context_create(NULL, &ctx));
    const level levels[3] = {
        {"from L2", 1024, 256, quick ? 400 : 2000, 0},
        {"from L3", 4096, 1024, quick ? 100 : 400, 0},
        {"from DRAM", 4096, 8192, quick ? 24 : 96, (size_t)256 << 20},
    };
    for (int i = 0; i < 3; ++i) bench_level(ctx, levels[i], limit);
    tl_context_destroy(ctx);
    printf("\n");
    print_cpu_speeds("at the end");
    return 0;
}
