/* Safetensors costs:
 *   1. as the tensor count grows: a file of n one-float tensors, opened and every tensor read by
 *      name (in reverse file order, a scope reset every 4096), for n = 1k, 10k, 100k and 1M.
 *      Printed: min/median/max over interleaved rounds of open and of get-all, per tensor, and
 *      the best per-tensor cost as a ratio against n = 1k's best in the same run (a millisecond
 *      of scheduling noise would swamp a median at 1k): linear growth keeps that ratio near 1
 *      (it was ~n/1000 with the old duplicate check and lookups);
 *   2. a ~400 MB model (100 tensors of 1M floats), open + get-all copied (tl_safetensors_open)
 *      vs mapped (tl_safetensors_map): time, and resident memory after the gets and after every
 *      element was read once.
 * Run: build/bench/bench_safetensors [--quick] */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <tensorlife/tl.h>
#include <unistd.h>

#include "bench_util.h"
#include "raw_safetensors.h"
#include "resident_memory.h"
#include "temp_dir.h"
#include "usage.h"

static const char USAGE[] =
    "usage: bench_safetensors [--quick] [--help]\n"
    "Safetensors open and get costs at 1k to 1M tensors, and a ~400 MB model copied against mapped.\n"
    "  --quick  fewer, shorter rounds\n";

static void spread(double *v, int k, double *lo, double *mid, double *hi) {
    qsort(v, (size_t)k, sizeof *v, compare_doubles);
    *lo = v[0], *mid = v[k / 2], *hi = v[k - 1];
}

/* One round of part 2: open (or map) and get every tensor, then read every element once. */
static void model_round(tl_context *ctx, const char *path, int tensors, int mapped, double *get_ms, double *touch_ms,
                        long *rss_get, long *rss_touch) {
    const long before = resident_kib();
    const double t0 = now_ns();
    tl_safetensors_file *f;
    TL_CHECK(mapped ? tl_safetensors_map(ctx, path, &f) : tl_safetensors_open(ctx, path, &f));
    tl_tensor *ts = malloc(sizeof(tl_tensor) * (size_t)tensors);
    char name[16];
    for (int i = 0; i < tensors; ++i) {
        snprintf(name, sizeof name, "w%d", i);
        TL_CHECK(tl_safetensors_get(ctx, f, name, &ts[i]));
    }
    const double t1 = now_ns();
    *rss_get = resident_kib() - before;
    volatile float sink = 0;
    for (int i = 0; i < tensors; ++i) {
        void *p;
        TL_CHECK(tl_tensor_data(ctx, ts[i], &p));
        const float *x = p;
        float acc = 0;
        for (int j = 0; j < (1 << 20); j += 1024) acc += x[j]; /* one float a page: every page */
        sink += acc;
    }
    const double t2 = now_ns();
    *rss_touch = resident_kib() - before;
    *get_ms = (t1 - t0) / 1e6;
    *touch_ms = (t2 - t1) / 1e6;
    for (int i = 0; i < tensors; ++i) TL_CHECK(tl_tensor_free(ctx, ts[i]));
    tl_safetensors_close(f);
    free(ts);
    (void)sink;
}

static void model_files(tl_context *ctx, int quick) {
    const int tensors = quick ? 25 : 100;
    char path[64];
    snprintf(path, sizeof path, "%s/tl-bench-model-%ld.safetensors", temp_root(), (long)getpid());
    { /* written once through the library: 1M floats a tensor */
        const int64_t shape[1] = {1 << 20};
        tl_tensor *ts = malloc(sizeof(tl_tensor) * (size_t)tensors);
        char(*names)[16] = malloc(16 * (size_t)tensors);
        const char **np = malloc(sizeof(char *) * (size_t)tensors);
        for (int i = 0; i < tensors; ++i) {
            TL_CHECK(tl_tensor_full(ctx, TL_F32, 1, shape, (double)i, &ts[i]));
            snprintf(names[i], 16, "w%d", i);
            np[i] = names[i];
        }
        TL_CHECK(tl_safetensors_save(ctx, path, tensors, np, ts));
        for (int i = 0; i < tensors; ++i) TL_CHECK(tl_tensor_free(ctx, ts[i]));
        free(ts), free(names), free(np);
    }
    printf("\n2. a %d MB model (%d tensors of 1M floats): open + get-all, then one read of every page\n", tensors * 4,
           tensors);
    printf("   %-8s %22s %22s %16s %16s\n", "", "get-all ms (min/med/max)", "first read ms (med)", "RSS after gets",
           "after reads");
    double get[2][5], touch[2][5];
    long rg[2][5], rt[2][5];
    const int rounds = quick ? 3 : 5;
    for (int r = 0; r < rounds; ++r)
        for (int mapped = 0; mapped < 2; ++mapped)
            model_round(ctx, path, tensors, mapped, &get[mapped][r], &touch[mapped][r], &rg[mapped][r], &rt[mapped][r]);
    for (int mapped = 0; mapped < 2; ++mapped) {
        double gl, gm, gh, tl_, tm, th;
        spread(get[mapped], rounds, &gl, &gm, &gh);
        spread(touch[mapped], rounds, &tl_, &tm, &th);
        printf("   %-8s %7.1f / %6.1f / %6.1f %22.1f %13ld MB %13ld MB\n", mapped ? "mapped" : "copied", gl, gm, gh, tm,
               rg[mapped][rounds - 1] / 1024, rt[mapped][rounds - 1] / 1024);
    }
    printf("   (mapped pages are the file's page cache, shared and reclaimable; copied ones are the heap's)\n");
    unlink(path);
}

int main(int argc, char **argv) {
    const int quick = quick_flag(argc, argv, USAGE);
    const int counts[4] = {1000, 10000, 100000, 1000000};
    const int sizes = quick ? 3 : 4, rounds = quick ? 3 : 5;
    char paths[4][64];
    for (int s = 0; s < sizes; ++s) {
        snprintf(paths[s], sizeof paths[s], "%s/tl-bench-st-%ld-%d.safetensors", temp_root(), (long)getpid(),
                 counts[s]);
        if (write_tiny_tensors(paths[s], counts[s]) != 0) {
            fprintf(stderr, "cannot write %s\n", paths[s]);
            return 1;
        }
    }
    tl_context *ctx;
    TL_CHECK(tl_context_create(NULL, &ctx));
    double open_ns[4][8], get_ns[4][8];
    for (int r = 0; r < rounds; ++r) /* rounds interleave the sizes: noise spreads over all */
        for (int s = 0; s < sizes; ++s) {
            const int n = counts[s];
            double t0 = now_ns();
            tl_safetensors_file *f;
            TL_CHECK(tl_safetensors_open(ctx, paths[s], &f));
            double t1 = now_ns();
            tl_scope scope;
            TL_CHECK(tl_scope_open(ctx, "get-all", 1 << 20, &scope));
            char name[16];
            for (int i = n - 1; i >= 0; --i) {
                snprintf(name, sizeof name, "t%d", i);
                tl_tensor t;
                TL_CHECK(tl_safetensors_get(ctx, f, name, &t));
                if ((i & 4095) == 0) TL_CHECK(tl_scope_reset(ctx, scope));
            }
            double t2 = now_ns();
            TL_CHECK(tl_scope_close(ctx, scope));
            tl_safetensors_close(f);
            open_ns[s][r] = (t1 - t0) / n;
            get_ns[s][r] = (t2 - t1) / n;
        }
    printf("1. safetensors: open and get-all of n one-float tensors, ns per tensor (min / median / max of %d rounds)\n",
           rounds);
    printf("%9s %28s %28s %18s\n", "n", "open", "get by name", "vs n=1k (best)");
    double base_open = 0, base_get = 0;
    for (int s = 0; s < sizes; ++s) {
        double ol, om, oh, gl, gm, gh;
        spread(open_ns[s], rounds, &ol, &om, &oh);
        spread(get_ns[s], rounds, &gl, &gm, &gh);
        if (s == 0) base_open = ol, base_get = gl;
        printf("%9d %8.0f / %7.0f / %7.0f %8.0f / %7.0f / %7.0f   open %.2fx get %.2fx\n", counts[s], ol, om, oh, gl,
               gm, gh, ol / base_open, gl / base_get);
        unlink(paths[s]);
    }
    model_files(ctx, quick);
    tl_context_destroy(ctx);
    return 0;
}
