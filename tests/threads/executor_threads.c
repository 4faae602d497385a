/* Ops split over an executor's threads, for ThreadSanitizer (Criterion cannot run under it;
 * tests/test_executor.c is the full suite): a hook running chunks in reverse order on three
 * threads, results compared bitwise with the inline run.  Also a plain ctest test. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tensorlife/tl.h>

#include "check.h"
#include "usage.h"

typedef struct job {
    tl_task_fn task;
    void *task_user;
    int64_t count, grain;
    int worker;
} job;

static void *run_chunks(void *arg) {
    const job *j = arg;
    for (int64_t c = (j->count + j->grain - 1) / j->grain - 1 - j->worker; c >= 0; c -= 3) {
        const int64_t lo = c * j->grain, hi = lo + j->grain < j->count ? lo + j->grain : j->count;
        j->task(j->task_user, lo, hi);
    }
    return NULL;
}

static void reverse_on_three_threads(void *user, int64_t count, int64_t grain, tl_task_fn task, void *task_user) {
    (void)user;
    pthread_t t[3];
    job jobs[3];
    for (int w = 0; w < 3; ++w) {
        jobs[w] = (job){task, task_user, count, grain, w};
        pthread_create(&t[w], NULL, run_chunks, &jobs[w]);
    }
    for (int w = 0; w < 3; ++w) pthread_join(t[w], NULL);
}

enum { R = 384, C = 256, K = 512, N = 1000, DATA = 1 << 19 }; /* DATA: enough for the largest input (K x N + 7) */

int main(int argc, char **argv) {
    no_arguments(
        argc, argv,
        "usage: executor_threads\nOps split over an executor's three threads, compared bitwise with the inline run.\n");
    tl_context *ctx[2];
    TL_CHECK(tl_context_create(NULL, &ctx[0]));
    TL_CHECK(tl_context_create(NULL, &ctx[1]));
    const tl_executor ex = {NULL, reverse_on_three_threads};
    TL_CHECK(tl_context_set_executor(ctx[1], &ex));
    TL_CHECK(tl_set_blas_threads(1)); /* so matmul's row blocks go to the executor too */
    float *data = malloc(sizeof(float) * DATA), *x = malloc(sizeof(float) * R * C), *y = malloc(sizeof(float) * R * C);
    for (int i = 0; i < DATA; ++i) data[i] = (float)((i * 7919LL) % 1000) / 500.0f - 1.0f;
    const int64_t s[2] = {R, C}, sw[1] = {C}, sq[3] = {16, 1, 64}, skv[3] = {16, 256, 64}, sx[2] = {1, K},
                  sm[2] = {K, N};
    int failed = 0, passed = 0;
    const char *names[10] = {"add",       "softmax",         "rmsnorm", "sum", "contiguous", "attention", "matmul (one row)",
                             "matmul (a prompt's 19 rows, q8_0 panels)", "matmul (a prompt's 19 rows, q4_K panels)",
                             "attention (a prompt's 9 queries, rows widened per split range)"};
    const int64_t sq9[3] = {16, 9, 64};
    const int64_t sp[2] = {19, K}, sn[2] = {N, K};
    for (int op = 0; op < 10; ++op) {
        float *out[2] = {x, y};
        for (int k = 0; k < 2; ++k) {
            tl_tensor a, w, r, q, kv;
            TL_CHECK(tl_tensor_from_data(ctx[k], TL_F32, 2, s, data, sizeof(float) * R * C, &a));
            TL_CHECK(tl_tensor_from_data(ctx[k], TL_F32, 1, sw, data, sizeof(float) * C, &w));
            switch (op) {
                case 0:
                    TL_CHECK(tl_add(ctx[k], a, w, &r));
                    break;
                case 1:
                    TL_CHECK(tl_softmax(ctx[k], a, -1, &r));
                    break;
                case 2:
                    TL_CHECK(tl_rmsnorm(ctx[k], a, w, 1e-5, &r));
                    break;
                case 3:
                    TL_CHECK(tl_sum(ctx[k], a, 1, 0, &r));
                    break;
                case 4:
                    TL_CHECK(tl_transpose(ctx[k], a, 0, 1, &r));
                    TL_CHECK(tl_contiguous(ctx[k], r, &r));
                    break;
                case 6:
                    TL_CHECK(tl_tensor_from_data(ctx[k], TL_F32, 2, sx, data, sizeof(float) * K, &q));
                    TL_CHECK(tl_tensor_from_data(ctx[k], TL_F32, 2, sm, data, sizeof(float) * K * N, &kv));
                    TL_CHECK(tl_matmul(ctx[k], q, kv, &r));
                    break;
                case 7:
                case 8: /* weights stored [N, K] in a block dtype, read through their transpose */
                    TL_CHECK(tl_tensor_from_data(ctx[k], TL_F32, 2, sp, data, sizeof(float) * 19 * K, &q));
                    TL_CHECK(tl_tensor_from_data(ctx[k], TL_F32, 2, sn, data + 7, sizeof(float) * K * N, &kv));
                    TL_CHECK(tl_convert(ctx[k], kv, op == 7 ? TL_Q8_0 : TL_Q4_K, &kv));
                    TL_CHECK(tl_transpose(ctx[k], kv, 0, 1, &kv));
                    TL_CHECK(tl_matmul(ctx[k], q, kv, &r));
                    break;
                case 9:
                    TL_CHECK(tl_tensor_from_data(ctx[k], TL_F32, 3, sq9, data, sizeof(float) * 16 * 9 * 64, &q));
                    TL_CHECK(tl_tensor_from_data(ctx[k], TL_F32, 3, skv, data, sizeof(float) * 16 * 256 * 64, &kv));
                    TL_CHECK(tl_attention(ctx[k], q, kv, kv, 200, 0.125, &r));
                    break;
                default:
                    TL_CHECK(tl_tensor_from_data(ctx[k], TL_F32, 3, sq, data, sizeof(float) * 16 * 64, &q));
                    TL_CHECK(tl_tensor_from_data(ctx[k], TL_F32, 3, skv, data, sizeof(float) * 16 * 256 * 64, &kv));
                    TL_CHECK(tl_attention(ctx[k], q, kv, kv, 200, 0.125, &r));
            }
            tl_tensor_info info = TL_TENSOR_INFO_INIT;
            TL_CHECK(tl_tensor_info_get(ctx[k], r, &info));
            int64_t n = 1;
            for (int d = 0; d < info.ndim; ++d) n *= info.shape[d];
            memset(out[k], 0, sizeof(float) * R * C);
            TL_CHECK(tl_tensor_read(ctx[k], r, out[k], sizeof(float) * (size_t)n));
        }
        if (memcmp(x, y, sizeof(float) * R * C) == 0)
            ++passed;
        else
            ++failed, fprintf(stderr, "%s differs when split\n", names[op]);
    }
    tl_context_destroy(ctx[0]);
    tl_context_destroy(ctx[1]);
    free(data), free(x), free(y);
    printf("executor threads: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
