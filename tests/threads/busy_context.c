/* One context used from two threads at once (the caller's bug): the library must refuse the
 * overlapping calls with TL_E_BUSY, never race on the context.  One thread runs long products,
 * the other short ops on the same context; every call either succeeds with the right answer
 * or is refused with TL_E_BUSY, some are refused, and the context works after both (its check
 * turned off and on again first).  Built and run under ThreadSanitizer by the test command;
 * also a plain ctest test. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tensorlife/tl.h>
#include <unistd.h>
#include "usage.h"

enum { N = 384, LONG_CALLS = 40 };

static tl_context *ctx;
static tl_tensor big, small;
static atomic_int long_done;
static long refused_short, refused_long, done_short;

static void fail_with(const char *what, tl_status st) {
    fprintf(stderr, "%s: %s: %s\n", what, tl_status_string(st), tl_last_error());
    exit(1);
}

static void *long_calls(void *arg) {
    (void)arg;
    for (int i = 0; i < LONG_CALLS; ++i) {
        tl_tensor y;
        const tl_status st = tl_matmul(ctx, big, big, &y);
        if (st == TL_E_BUSY) {
            ++refused_long;
            continue;
        }
        if (st != TL_OK) fail_with("matmul", st);
        float corner;
        tl_status rd;
        while ((rd = tl_tensor_read(ctx, y, &corner, sizeof corner)) == TL_E_BUSY) ++refused_long;
        if (rd != TL_E_INVALID_ARGUMENT) fail_with("read of a whole product into 4 bytes", rd); /* too small: refused */
        while ((rd = tl_tensor_free(ctx, y)) == TL_E_BUSY) ++refused_long;
        if (rd != TL_OK) fail_with("free", rd);
        usleep(500); /* a gap in which the other thread's calls get through */
    }
    atomic_store(&long_done, 1);
    return NULL;
}

static void *short_calls(void *arg) {
    (void)arg;
    while (!atomic_load(&long_done)) {
        tl_tensor y;
        const tl_status st = tl_add(ctx, small, small, &y);
        if (st == TL_E_BUSY) {
            ++refused_short;
            continue;
        }
        if (st != TL_OK) fail_with("add", st);
        float v[4];
        tl_status rd;
        while ((rd = tl_tensor_read(ctx, y, v, sizeof v)) == TL_E_BUSY) ++refused_short;
        if (rd != TL_OK) fail_with("read", rd);
        if (v[3] != 2.0f) {
            fprintf(stderr, "a wrong sum: %g\n", v[3]);
            exit(1);
        }
        while ((rd = tl_tensor_free(ctx, y)) == TL_E_BUSY) ++refused_short;
        if (rd != TL_OK) fail_with("free", rd);
        ++done_short;
    }
    return NULL;
}

int main(int argc, char **argv) {
    no_arguments(argc, argv,
                 "usage: busy_context\nOne context used from two threads at once: overlapping calls refused with "
                 "TL_E_BUSY, never raced.\n");
    if (tl_context_create(NULL, &ctx) != TL_OK) return 1;
    const int64_t sb[2] = {N, N}, ss[1] = {4};
    if (tl_tensor_ones(ctx, TL_F32, 2, sb, &big) != TL_OK || tl_tensor_ones(ctx, TL_F32, 1, ss, &small) != TL_OK)
        return 1;
    /* The check turned off and on again (tl_context_set_thread_check) is the check: the
     * overlapping calls below are still refused. */
    if (tl_context_set_thread_check(NULL, 0) != TL_E_INVALID_ARGUMENT || tl_context_set_thread_check(ctx, 0) != TL_OK ||
        tl_context_set_thread_check(ctx, 1) != TL_OK) {
        fprintf(stderr, "tl_context_set_thread_check: %s\n", tl_last_error());
        return 1;
    }
    pthread_t a, b;
    pthread_create(&a, NULL, long_calls, NULL);
    pthread_create(&b, NULL, short_calls, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("busy context: %ld short rounds done, %ld short and %ld long calls refused with TL_E_BUSY, none raced\n",
           done_short, refused_short, refused_long);
    if (refused_short + refused_long == 0 || done_short == 0) {
        fprintf(stderr, "the threads did not both overlap and get through\n");
        return 1;
    }
    tl_tensor y;
    float v[4];
    if (tl_add(ctx, small, small, &y) != TL_OK || tl_tensor_read(ctx, y, v, sizeof v) != TL_OK || v[0] != 2.0f)
        return 1;
    tl_context_destroy(ctx);
    printf("1 passed, 0 failed\n");
    return 0;
}
