/* One model, many sessions, many threads: THREADS threads each open their own context and two
 * sessions on one shared model (weights mapped once), feed the same prompt and generate greedily
 * and from a seed, at the same time.  Every thread must give the tokens a single-threaded run
 * gave.  Built and run under ThreadSanitizer by the test command; also a plain ctest test. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tensorlife/tl.h>
#include <unistd.h>

#include "../tiny_llama.h"
#include "check.h"
#include "temp_dir.h"
#include "usage.h"

enum { THREADS = 4, TOKENS = 24 };

static tl_model *model;

typedef struct run {
    int32_t greedy[TOKENS], seeded[TOKENS];
} run;

static void generate(tl_session *s, const tl_sampler *p, int32_t *out) {
    TL_CHECK(tl_session_feed_text(s, "abc ab cab", 10, TL_TOKENIZE_ADD_SPECIAL));
    for (int i = 0; i < TOKENS; ++i) {
        TL_CHECK(tl_session_sample(s, p, &out[i]));
        TL_CHECK(tl_session_feed(s, &out[i], 1));
    }
}

static void *session_run(void *arg) {
    run *r = arg;
    tl_context *ctx;
    TL_CHECK(tl_context_create(NULL, &ctx));
    tl_session *a, *b;
    TL_CHECK(tl_session_open(ctx, model, NULL, &a));
    TL_CHECK(tl_session_open(ctx, model, NULL, &b));
    const tl_sampler greedy = TL_SAMPLER_GREEDY;
    tl_sampler seeded = TL_SAMPLER_INIT;
    seeded.seed = 99;
    generate(a, &greedy, r->greedy);
    generate(b, &seeded, r->seeded);
    tl_session_close(a);
    tl_session_close(b);
    tl_context_destroy(ctx);
    return NULL;
}

int main(int argc, char **argv) {
    answer_help(argc, argv, "usage: sessions (no arguments): one model, sessions on 4 threads, tokens checked\n");
    char path[512];
    snprintf(path, sizeof path, "%s/tl-sessions-%ld.gguf", temp_root(), (long)getpid());
    if (write_tiny_llama(path, "llama", 32)) return 1;
    tl_context *ctx;
    TL_CHECK(tl_context_create(NULL, &ctx));
    TL_CHECK(tl_model_open(ctx, path, &model));
    run reference, runs[THREADS];
    session_run(&reference);
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; ++i) pthread_create(&t[i], NULL, session_run, &runs[i]);
    for (int i = 0; i < THREADS; ++i) pthread_join(t[i], NULL);
    int bad = 0;
    for (int i = 0; i < THREADS; ++i)
        if (memcmp(&runs[i], &reference, sizeof reference)) {
            fprintf(stderr, "sessions: thread %d's tokens differ from the single-threaded run's\n", i);
            bad = 1;
        }
    TL_CHECK(tl_model_close(model));
    tl_context_destroy(ctx);
    remove(path);
    if (!bad) printf("sessions: %d threads x 2 sessions on one model, %d tokens each, as the single-threaded run\n", THREADS, TOKENS);
    return bad;
}
