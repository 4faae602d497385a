/* Text in, text out, as an engine would embed it: the engine's allocator and job system lent
 * to tensorlife, a model opened once, a session per character, a prompt fed in chunks (a frame
 * each, in a game), then tokens generated and printed as they come.
 *   generate MODEL.gguf "prompt" [max_tokens] [threads]   (greedy; prints the ids at the end) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tensorlife/tl.h>

#include "aligned_block.h" /* the engine's allocator, here aligned malloc */
#include "check.h"
#include "job_pool.h" /* the engine's job system */
#include "usage.h"

static void *engine_alloc(void *user, size_t size, size_t alignment) {
    (void)user;
    return aligned_block_alloc(size, alignment);
}
static void engine_free(void *user, void *p, size_t size) {
    (void)user, (void)size;
    aligned_block_free(p);
}

int main(int argc, char **argv) {
    const char *usage = "usage: generate MODEL.gguf \"prompt\" [max_tokens] [threads]\n";
    answer_help(argc, argv, usage);
    if (argc < 3) return fputs(usage, stderr), 2;
    const int max_tokens = argc > 3 ? atoi(argv[3]) : 32, threads = argc > 4 ? atoi(argv[4]) : 1;
    const tl_allocator allocator = {NULL, engine_alloc, engine_free};
    job_pool pool;
    if (job_pool_start(&pool, threads)) return 1;
    const tl_executor executor = job_pool_executor(&pool);
    tl_context *ctx;
    TL_CHECK(tl_context_create(&allocator, &ctx));
    TL_CHECK(tl_context_set_executor(ctx, &executor));

    tl_model *model;
    TL_CHECK(tl_model_open(ctx, argv[1], &model));
    tl_tokenizer *tok = tl_model_tokenizer(model);
    if (!tok) {
        fprintf(stderr, "generate: %s carries no vocabulary\n", argv[1]);
        return 1;
    }
    tl_session *chat;
    TL_CHECK(tl_session_open(ctx, model, NULL, &chat)); /* the model's context length, an f32 cache */

    /* The prompt: tokenized once, fed 32 tokens a call (an engine would feed one call a frame). */
    size_t n;
    TL_CHECK(tl_tokenize(tok, argv[2], strlen(argv[2]), TL_TOKENIZE_ADD_SPECIAL, NULL, 0, &n));
    int32_t *prompt = tl_check_alloc(malloc(n * sizeof *prompt), "prompt");
    TL_CHECK(tl_tokenize(tok, argv[2], strlen(argv[2]), TL_TOKENIZE_ADD_SPECIAL, prompt, n, &n));
    for (size_t done = 0; done < n; done += 32) TL_CHECK(tl_session_feed(chat, prompt + done, n - done < 32 ? n - done : 32));

    /* Generation: each call samples, feeds and hands back whole UTF-8 characters. */
    const tl_sampler greedy = TL_SAMPLER_GREEDY;
    fputs(argv[2], stdout);
    for (int i = 0; i < max_tokens; ++i) {
        char text[256];
        size_t length;
        int32_t token;
        int done;
        TL_CHECK(tl_session_generate(chat, &greedy, &token, &done, text, sizeof text, &length));
        if (done) break;
        fwrite(text, 1, length, stdout);
        fflush(stdout);
    }
    const int32_t *ids;
    size_t fed;
    TL_CHECK(tl_session_history(chat, &ids, &fed));
    printf("\nids:");
    for (size_t i = n; i < fed; ++i) printf("%s%d", i > n ? "," : " ", ids[i]);
    printf("\n");

    free(prompt);
    tl_session_close(chat);
    TL_CHECK(tl_model_close(model));
    tl_context_destroy(ctx);
    job_pool_stop(&pool);
    return 0;
}
