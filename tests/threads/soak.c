/* A long run of the runner's life cycle (issue 43's soak): STEPS decode steps of the tiny Llama,
 * a session closed and another opened every 250 steps (a game's NPCs coming and going), a scope
 * of the caller's used and reset every step beside it (closed and opened again every 1000), the
 * text streamed; resident
 * memory and the allocator's live bytes and block count read after a warm-up, at the middle and
 * at the end.  Fails when either grows between the middle and the end (a leak or a table that
 * keeps growing) or when a warm step calls the allocator.
 *   soak [STEPS] [MODEL.gguf]  (default 100000; the tiny model written to a temporary file) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tensorlife/tl.h>
#include <unistd.h>

#include "../tiny_llama.h"
#include "../counting_allocator.h"
#include "check.h"
#include "resident_memory.h"
#include "temp_dir.h"
#include "usage.h"

typedef struct reading {
    long long step, rss_kib, live_bytes, blocks;
} reading;

int main(int argc, char **argv) {
    answer_help(argc, argv, "usage: soak [STEPS] [MODEL.gguf]\n");
    const long long steps = argc > 1 ? atoll(argv[1]) : 100000;
    char path[1024] = "";
    const char *model_path = argc > 2 ? argv[2] : NULL;
    if (!model_path) {
        snprintf(path, sizeof path, "%s/tl-soak-%ld.gguf", temp_root(), (long)getpid());
        if (write_tiny_llama(path, "llama", 32)) return perror(path), 1;
        model_path = path;
    }
    counting_allocator meter = {0, 0, 0, 0};
    const tl_allocator alloc = counting_allocator_of(&meter);
    tl_context *ctx;
    TL_CHECK(tl_context_create(&alloc, &ctx));
    tl_model *model;
    TL_CHECK(tl_model_open(ctx, model_path, &model));
    tl_session_options opts = TL_SESSION_OPTIONS_INIT;
    opts.context_length = 300;
    tl_sampler sampler = TL_SAMPLER_GREEDY;
    sampler.temperature = 0.9f, sampler.top_k = 20;
    reading at[3] = {{0}};
    const long long marks[3] = {steps / 10, steps / 2, steps};
    int next_mark = 0;
    long long warm_calls = 0, generated_bytes = 0;
    tl_session *s = NULL;
    tl_scope user;
    TL_CHECK(tl_scope_open(ctx, "user step", 4096, &user));
    for (long long step = 0; step < steps; ++step) {
        if (step % 1000 == 999) { /* the caller's scope closed and opened again now and then */
            TL_CHECK(tl_scope_close(ctx, user));
            TL_CHECK(tl_scope_open(ctx, "user step", 4096, &user));
        }
        if (step % 250 == 0) { /* another session, its prompt fed in one call */
            if (s) tl_session_close(s);
            sampler.seed = (uint64_t)step;
            TL_CHECK(tl_session_open(ctx, model, &opts, &s));
            TL_CHECK(tl_session_feed_text(s, "abc ab c", 8, 0));
        }
        const long long calls = (meter.allocs + meter.frees);
        /* the caller's own step beside the session's, in a scope reset every step */
        const int64_t shape[1] = {16};
        tl_tensor a, b;
        TL_CHECK(tl_tensor_ones(ctx, TL_F32, 1, shape, &a));
        TL_CHECK(tl_add(ctx, a, a, &b));
        TL_CHECK(tl_scope_reset(ctx, user));
        char piece[256];
        size_t piece_len = 0;
        int32_t token;
        int done = 0;
        TL_CHECK(tl_session_generate(s, &sampler, &token, &done, piece, sizeof piece, &piece_len));
        generated_bytes += (long long)piece_len;
        if (done) TL_CHECK(tl_session_feed(s, &token, 1)); /* an end token: fed anyway, the soak goes on */
        if (step % 250 > 1 && step >= marks[0]) warm_calls += (meter.allocs + meter.frees) - calls; /* past each session's first steps */
        if (next_mark < 3 && step + 1 == marks[next_mark]) {
            at[next_mark] = (reading){step + 1, resident_kib(), meter.live_bytes, (meter.allocs - meter.frees)};
            ++next_mark;
        }
    }
    tl_session_close(s);
    TL_CHECK(tl_scope_close(ctx, user));
    tl_model_close(model);
    tl_context_destroy(ctx);
    if (path[0]) remove(path);
    printf("soak: %lld steps, a session every 250 (%lld sessions), %lld bytes of text\n", steps, (steps + 249) / 250,
           generated_bytes);
    for (int i = 0; i < 3; ++i)
        printf("soak: after %lld steps: resident %lld KiB, allocator %lld bytes in %lld blocks\n", at[i].step, at[i].rss_kib,
               at[i].live_bytes, at[i].blocks);
    printf("soak: allocator calls in warm steps: %lld; after destroy: %lld bytes in %lld blocks\n", warm_calls,
           meter.live_bytes, (meter.allocs - meter.frees));
    const int flat = at[2].live_bytes == at[1].live_bytes && at[2].blocks == at[1].blocks &&
                     at[2].rss_kib <= at[1].rss_kib + 256; /* a page or so of the C library's own */
    const int ok = flat && warm_calls == 0 && meter.live_bytes == 0 && (meter.allocs - meter.frees) == 0;
    printf("soak: %s\n", ok ? "flat (1 passed, 0 failed)" : "GREW or LEAKED (0 passed, 1 failed)");
    return ok ? 0 : 1;
}
