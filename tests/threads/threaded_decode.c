/* N threads, each with its own context, run decode-like loops at once over weights that all
 * of them share read-only (one host buffer, wrapped with tl_tensor_wrap in every context).
 * Every thread must produce the same tokens as a single-threaded reference run.  Built and run
 * under ThreadSanitizer by the test command; also a plain ctest test. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tensorlife/tl.h>

#include "check.h"
#include "usage.h"

enum { THREADS = 4, D = 48, VOCAB = 96, STEPS = 150 };

static float embed[VOCAB * D], w1[D * 4 * D], w2[4 * D * D], head[D * VOCAB];

typedef struct run {
    int32_t tokens[STEPS];
} run;

static void *decode(void *arg) {
    run *r = arg;
    tl_context *ctx;
    TL_CHECK(tl_context_create(NULL, &ctx));
    const int64_t se[2] = {VOCAB, D}, s1[2] = {D, 4 * D}, s2[2] = {4 * D, D}, sh[2] = {D, VOCAB};
    tl_tensor te, t1, t2, th; /* ambient handles over the shared buffers */
    TL_CHECK(tl_tensor_wrap(ctx, TL_F32, 2, se, embed, sizeof embed, &te));
    TL_CHECK(tl_tensor_wrap(ctx, TL_F32, 2, s1, w1, sizeof w1, &t1));
    TL_CHECK(tl_tensor_wrap(ctx, TL_F32, 2, s2, w2, sizeof w2, &t2));
    TL_CHECK(tl_tensor_wrap(ctx, TL_F32, 2, sh, head, sizeof head, &th));
    tl_scope step;
    TL_CHECK(tl_scope_open(ctx, "thread-step", 0, &step));
    int32_t token = 3;
    const int64_t one = 1;
    for (int i = 0; i < STEPS; ++i) {
        tl_tensor ids, x, h, y, logits, p, best;
        TL_CHECK(tl_tensor_from_data(ctx, TL_I32, 1, &one, &token, sizeof token, &ids));
        TL_CHECK(tl_gather_rows(ctx, te, ids, &x));
        TL_CHECK(tl_rmsnorm(ctx, x, (tl_tensor){0}, 1e-5, &h));
        TL_CHECK(tl_matmul(ctx, h, t1, &y));
        TL_CHECK(tl_gelu(ctx, y, &y));
        TL_CHECK(tl_matmul(ctx, y, t2, &y));
        TL_CHECK(tl_add(ctx, x, y, &x));
        TL_CHECK(tl_matmul(ctx, x, th, &logits));
        TL_CHECK(tl_softmax(ctx, logits, -1, &p));
        TL_CHECK(tl_argmax(ctx, p, -1, &best));
        TL_CHECK(tl_tensor_read(ctx, best, &token, sizeof token));
        r->tokens[i] = token;
        TL_CHECK(tl_scope_reset(ctx, step));
    }
    TL_CHECK(tl_scope_close(ctx, step));
    tl_context_destroy(ctx); /* frees the handles, never the shared buffers */
    return NULL;
}

int main(int argc, char **argv) {
    no_arguments(argc, argv,
                 "usage: threaded_decode\nThreads with a context each decode over shared weights; each must match a "
                 "one-thread run.\n");
    unsigned seed = 11;
    float *all[4] = {embed, w1, w2, head};
    size_t sizes[4] = {VOCAB * D, D * 4 * D, 4 * D * D, D * VOCAB};
    for (int k = 0; k < 4; ++k)
        for (size_t i = 0; i < sizes[k]; ++i) {
            seed = seed * 1664525u + 1013904223u;
            all[k][i] = ((float)(seed >> 8) / 16777216.0f - 0.5f) / 4.0f;
        }
    run reference, runs[THREADS];
    decode(&reference);
    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; ++i) pthread_create(&threads[i], NULL, decode, &runs[i]);
    for (int i = 0; i < THREADS; ++i) pthread_join(threads[i], NULL);
    int failed = 0;
    for (int i = 0; i < THREADS; ++i) failed += memcmp(runs[i].tokens, reference.tokens, sizeof reference.tokens) != 0;
    printf("threaded decode: %d threads x %d steps over shared weights\n", THREADS, STEPS);
    printf("%d passed, %d failed\n", THREADS - failed, failed);
    return failed ? 1 : 0;
}
