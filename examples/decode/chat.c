#include "chat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "meter.h"

static void print_ids(const char *label, const int32_t *ids, size_t n) {
    printf("%s (%zu):", label, n);
    for (size_t i = 0; i < n; ++i) printf("%s%d", i ? "," : " ", ids[i]);
    printf("\n");
}

int run_chat(const chat_options *o) {
    memory_meter counter = {0, 0, 0};
    const tl_allocator allocator = {&counter, meter_alloc, meter_free};
    tl_context *ctx;
    TL_CHECK(tl_context_create(&allocator, &ctx));
    if (o->executor) TL_CHECK(tl_context_set_executor(ctx, o->executor));
    tl_model *model;
    TL_CHECK(tl_model_open(ctx, o->model_path, &model));
    tl_tokenizer *tok = tl_model_tokenizer(model);
    if (!tok) {
        fprintf(stderr, "decode: %s carries no vocabulary, so --prompt cannot be tokenized\n", o->model_path);
        return 1;
    }
    const size_t length = strlen(o->prompt);
    size_t n_prompt;
    TL_CHECK(tl_tokenize(tok, o->prompt, length, TL_TOKENIZE_ADD_SPECIAL, NULL, 0, &n_prompt));
    int32_t *prompt = tl_check_alloc(malloc((n_prompt + 1) * sizeof *prompt), "prompt ids");
    TL_CHECK(tl_tokenize(tok, o->prompt, length, TL_TOKENIZE_ADD_SPECIAL, prompt, n_prompt, &n_prompt));
    tl_session_options so = TL_SESSION_OPTIONS_INIT;
    so.context_length = (int32_t)n_prompt + o->tokens + 1;
    so.kv_dtype = o->kv_dtype;
    so.max_chunk = 512;
    tl_session *s;
    TL_CHECK(tl_session_open(ctx, model, &so, &s));

    const double t0 = now_ms();
    TL_CHECK(tl_session_feed(s, prompt, n_prompt));
    const double t1 = now_ms();
    printf("%s", o->prompt);
    long warm_calls = 0;
    int generated = 0, done = 0;
    double t2 = t1;
    for (; generated < o->tokens && !done; ++generated) {
        if (generated == 1) warm_calls = counter.calls, t2 = now_ms(); /* from the second token: warm */
        char text[256];
        size_t n;
        int32_t token;
        TL_CHECK(tl_session_generate(s, &o->sampler, &token, &done, text, sizeof text, &n));
        fwrite(text, 1, n, stdout);
        fflush(stdout);
    }
    const double t3 = now_ms();
    const long steady_calls = generated > 1 ? counter.calls - warm_calls : 0;
    const int32_t *ids;
    size_t fed;
    TL_CHECK(tl_session_history(s, &ids, &fed));
    printf("\n\n");
    print_ids("prompt ids", ids, n_prompt);
    print_ids("generated ids", ids + n_prompt, fed - n_prompt);
    printf("prompt: %zu tokens in %.1f ms (%.1f tokens/s, one batch)\n", n_prompt, t1 - t0, n_prompt / ((t1 - t0) / 1e3));
    if (generated > 1)
        printf("generation: %.2f ms/token over tokens 2..%d; steady state: %ld allocator calls\n", (t3 - t2) / (generated - 1),
               generated, steady_calls);
    free(prompt);
    tl_session_close(s);
    TL_CHECK(tl_model_close(model));
    tl_context_destroy(ctx);
    return steady_calls != 0;
}
