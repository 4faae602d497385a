/* Core benchmarks, each a ratio against a baseline measured in the same run:
 *   1. tensor creation: scoped (reset per step) vs ambient (create+free) vs raw malloc/free;
 *   2. tl_matmul on slab tensors at nonzero offsets vs cblas_sgemm called directly on the
 *      same buffers.
 * Run: build/bench/bench_core [--quick] */
#include <cblas.h>
#include <stdio.h>
#include <string.h>
#include <tensorlife/tl.h>

#include "bench_util.h"
#include "usage.h"

static const char USAGE[] =
    "usage: bench_core [--quick] [--help]\n"
    "Tensor creation (scoped, ambient, malloc) and tl_matmul on slab tensors against cblas_sgemm.\n"
    "  --quick  fewer, shorter rounds\n";

enum { TENSORS_PER_STEP = 64 };
static int steps = 2000;
static tl_context *ctx;
static tl_scope scope;
static volatile uintptr_t sink;

static const int64_t small_shape[1] = {64};

static void create_ambient(void *arg) {
    (void)arg;
    tl_tensor ts[TENSORS_PER_STEP];
    for (int s = 0; s < steps; ++s) {
        for (int i = 0; i < TENSORS_PER_STEP; ++i) TL_CHECK(tl_tensor_zeros(ctx, TL_F32, 1, small_shape, &ts[i]));
        for (int i = 0; i < TENSORS_PER_STEP; ++i) TL_CHECK(tl_tensor_free(ctx, ts[i]));
    }
}

static void create_scoped(void *arg) {
    (void)arg;
    tl_tensor t;
    for (int s = 0; s < steps; ++s) {
        for (int i = 0; i < TENSORS_PER_STEP; ++i) TL_CHECK(tl_tensor_zeros(ctx, TL_F32, 1, small_shape, &t));
        TL_CHECK(tl_scope_reset(ctx, scope));
    }
}

static void create_malloc(void *arg) {
    (void)arg;
    float *ps[TENSORS_PER_STEP];
    for (int s = 0; s < steps; ++s) {
        for (int i = 0; i < TENSORS_PER_STEP; ++i) {
            ps[i] = aligned_alloc(64, 64 * sizeof(float));
            memset(ps[i], 0, 64 * sizeof(float));
            sink += (uintptr_t)ps[i];
        }
        for (int i = 0; i < TENSORS_PER_STEP; ++i) free(ps[i]);
    }
}

typedef struct matmul_case {
    int m, k, n, iters;
    tl_tensor a, b;
    float *pa, *pb, *pc;
} matmul_case;

static void matmul_api(void *arg) {
    matmul_case *c = arg;
    tl_tensor out;
    for (int i = 0; i < c->iters; ++i) {
        TL_CHECK(tl_matmul(ctx, c->a, c->b, &out));
        TL_CHECK(tl_scope_reset(ctx, scope));
        /* the inputs live in an outer scope; only the output dies */
    }
}

static void matmul_raw(void *arg) {
    matmul_case *c = arg;
    for (int i = 0; i < c->iters; ++i)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, c->m, c->n, c->k, 1.0f, c->pa, c->k, c->pb, c->n, 0.0f,
                    c->pc, c->n);
}

int main(int argc, char **argv) {
    const int quick = quick_flag(argc, argv, USAGE);
    int reps = quick ? 5 : 15;
    if (quick) steps = 300;
    TL_CHECK(tl_context_create(NULL, &ctx));

    printf("tensorlife %s core benchmark (median of %d runs; ratios against baselines from this run)\n\n",
           tl_version_string(), reps);
    printf("1. creating a 64-float tensor, %d per step\n", TENSORS_PER_STEP);
    TL_CHECK(tl_scope_open(ctx, "bench-step", 0, &scope));
    create_scoped(NULL); /* warm-up: the slab reaches its size */
    double per = (double)steps * TENSORS_PER_STEP;
    double t_scoped = median_ns(reps, per, create_scoped, NULL);
    TL_CHECK(tl_scope_close(ctx, scope));
    create_ambient(NULL);
    double t_ambient = median_ns(reps, per, create_ambient, NULL);
    double t_malloc = median_ns(reps, per, create_malloc, NULL);
    printf("   %-34s %8.1f ns   baseline\n", "malloc+memset+free", t_malloc);
    printf("   %-34s %8.1f ns   %.2fx malloc\n", "ambient zeros+free", t_ambient, t_ambient / t_malloc);
    printf("   %-34s %8.1f ns   %.2fx malloc, %.2fx ambient\n", "scoped zeros (reset per step)", t_scoped,
           t_scoped / t_malloc, t_scoped / t_ambient);

    printf("\n2. matmul: tl_matmul on slab tensors at nonzero offsets vs cblas_sgemm on the same buffers\n");
    const int sizes[][3] = {{1, 256, 256}, {1, 1024, 1024}, {64, 64, 64}, {128, 512, 512}, {512, 512, 512}};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
        matmul_case c = {sizes[s][0], sizes[s][1], sizes[s][2], 0, {0}, {0}, NULL, NULL, NULL};
        double flops = 2.0 * c.m * c.k * c.n;
        c.iters = (int)(2e8 / flops) + 1;
        if (quick) c.iters = c.iters / 4 + 1;
        tl_scope inputs;
        size_t need = 4 * (size_t)(c.m * c.k + c.k * c.n + c.m * c.n) + 4 * 64; /* one slab holds all */
        TL_CHECK(tl_scope_open(ctx, "bench-inputs", need, &inputs));
        int64_t pad = 3; /* so the operands sit at nonzero slab offsets */
        tl_tensor padding;
        TL_CHECK(tl_tensor_zeros(ctx, TL_F32, 1, &pad, &padding));
        int64_t sa[2] = {c.m, c.k}, sb[2] = {c.k, c.n}, sc[2] = {c.m, c.n};
        TL_CHECK(tl_tensor_full(ctx, TL_F32, 2, sa, 0.5, &c.a));
        TL_CHECK(tl_tensor_full(ctx, TL_F32, 2, sb, 0.25, &c.b));
        tl_tensor out;
        TL_CHECK(tl_tensor_zeros(ctx, TL_F32, 2, sc, &out));
        TL_CHECK(tl_tensor_data(ctx, c.a, (void **)&c.pa));
        TL_CHECK(tl_tensor_data(ctx, c.b, (void **)&c.pb));
        TL_CHECK(tl_tensor_data(ctx, out, (void **)&c.pc));
        tl_tensor_info info = TL_TENSOR_INFO_INIT;
        TL_CHECK(tl_tensor_info_get(ctx, c.a, &info));
        TL_CHECK(tl_scope_open(ctx, "bench-out", 0, &scope));
        matmul_api(&c);
        matmul_raw(&c);
        double t_raw = median_ns(reps, c.iters, matmul_raw, &c);
        double t_api = median_ns(reps, c.iters, matmul_api, &c);
        printf("   [%4d x %4d] x [%4d x %4d] (a at offset %lld): raw %9.1f us  api %9.1f us  ratio %.3f\n", c.m, c.k,
               c.k, c.n, (long long)info.offset, t_raw / 1e3, t_api / 1e3, t_api / t_raw);
        TL_CHECK(tl_scope_close(ctx, scope));
        TL_CHECK(tl_scope_close(ctx, inputs));
    }
    tl_context_destroy(ctx);
    return 0;
}
