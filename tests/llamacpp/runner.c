/* tensorlife's model runner from the command line, in the reference program's (Program.cs)
 * output format, so the two compare line by line:
 *   runner MODEL (--prompt-ids IDS | --prompt TEXT) --tokens N [--threads T] [--teacher IDS]
 *          [--kv f32|f16|bf16] [--chunk N] [--seed S --temperature X] [--logits FILE] [--repack 1]
 * prints "prompt: ids" (for --prompt), "tokens: ...", "teacher: ..." (the argmax after each
 * forced token, from a rewound session) and "timing: prompt_ms per_token_ms"; --logits writes
 * the logits after the prompt as raw f32. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tensorlife/tl.h>

#include "check.h"
#include "job_pool.h"
#include "usage.h"
#include "../../bench/bench_util.h"

static int parse_ids(const char *s, int32_t *ids, int cap) {
    int n = 0;
    for (const char *p = s; *p && n < cap;) {
        ids[n++] = (int32_t)strtol(p, (char **)&p, 10);
        if (*p == ',') ++p;
    }
    return n;
}

static const char *option(int argc, char **argv, const char *name) {
    for (int i = 2; i + 1 < argc; ++i)
        if (!strcmp(argv[i], name)) return argv[i + 1];
    return NULL;
}

static int32_t argmax(tl_session *s) {
    const float *logits;
    size_t n;
    TL_CHECK(tl_session_logits(s, &logits, &n));
    size_t best = 0;
    for (size_t i = 1; i < n; ++i)
        if (logits[i] > logits[best]) best = i;
    return (int32_t)best;
}

int main(int argc, char **argv) {
    const char *usage = "usage: runner MODEL (--prompt-ids IDS | --prompt TEXT) --tokens N [--threads T] [--teacher IDS]\n"
                        "              [--kv f32|f16|bf16] [--chunk N] [--seed S --temperature X] [--logits FILE]\n"
                        "              [--repack 1] (tl_model_options.repack)\n";
    answer_help(argc, argv, usage);
    if (argc < 4) return fputs(usage, stderr), 2;
    static int32_t prompt[1 << 16], teacher[1 << 12];
    const char *kv = option(argc, argv, "--kv"), *text = option(argc, argv, "--prompt");
    const int tokens = option(argc, argv, "--tokens") ? atoi(option(argc, argv, "--tokens")) : 16;
    const int threads = option(argc, argv, "--threads") ? atoi(option(argc, argv, "--threads")) : 1;
    const int chunk = option(argc, argv, "--chunk") ? atoi(option(argc, argv, "--chunk")) : 512;
    const int n_teacher = option(argc, argv, "--teacher") ? parse_ids(option(argc, argv, "--teacher"), teacher, 1 << 12) : 0;
    job_pool pool;
    if (job_pool_start(&pool, threads)) return 1;
    TL_CHECK(tl_set_blas_threads(1));
    const tl_executor executor = job_pool_executor(&pool);
    tl_context *ctx;
    TL_CHECK(tl_context_create(NULL, &ctx));
    if (threads > 1) TL_CHECK(tl_context_set_executor(ctx, &executor));
    tl_model *model;
    tl_model_options mo = TL_MODEL_OPTIONS_INIT;
    mo.repack = option(argc, argv, "--repack") ? atoi(option(argc, argv, "--repack")) : 0;
    TL_CHECK(tl_model_open_with(ctx, argv[1], &mo, &model));
    int n_prompt;
    if (text) {
        size_t n;
        TL_CHECK(tl_tokenize(tl_model_tokenizer(model), text, strlen(text), TL_TOKENIZE_ADD_SPECIAL, prompt, 1 << 16, &n));
        n_prompt = (int)n;
        printf("prompt:");
        for (int i = 0; i < n_prompt; ++i) printf("%s%d", i ? "," : " ", prompt[i]);
        printf("\n");
    } else {
        n_prompt = parse_ids(option(argc, argv, "--prompt-ids"), prompt, 1 << 16);
    }
    tl_session_options o = TL_SESSION_OPTIONS_INIT;
    o.context_length = n_prompt + tokens + n_teacher + 8;
    o.max_chunk = chunk;
    o.kv_dtype = !kv || !strcmp(kv, "f32") ? TL_F32 : !strcmp(kv, "f16") ? TL_F16 : TL_BF16;
    tl_session *s;
    TL_CHECK(tl_session_open(ctx, model, &o, &s));
    const double t0 = (now_ns() * 1e-9);
    TL_CHECK(tl_session_feed(s, prompt, (size_t)n_prompt));
    const double t1 = (now_ns() * 1e-9);
    if (option(argc, argv, "--logits")) { /* the logits after the prompt, raw f32 */
        const float *l;
        size_t nl;
        TL_CHECK(tl_session_logits(s, &l, &nl));
        FILE *f = fopen(option(argc, argv, "--logits"), "wb");
        if (!f || fwrite(l, sizeof(float), nl, f) != nl || fclose(f)) return fputs("runner: cannot write the logits\n", stderr), 1;
    }
    tl_sampler sampler = TL_SAMPLER_GREEDY;
    if (option(argc, argv, "--temperature")) sampler.temperature = (float)atof(option(argc, argv, "--temperature"));
    if (option(argc, argv, "--seed")) sampler.seed = strtoull(option(argc, argv, "--seed"), NULL, 10);
    printf("tokens:");
    for (int k = 0; k < tokens; ++k) {
        int32_t next;
        TL_CHECK(tl_session_sample(s, &sampler, &next));
        printf("%s%d", k ? "," : " ", next);
        TL_CHECK(tl_session_feed(s, &next, 1));

    }
    const double t2 = (now_ns() * 1e-9);
    printf("\n");
    if (n_teacher) {
        TL_CHECK(tl_session_rewind(s, n_prompt));
        printf("teacher:");
        for (int k = 0; k < n_teacher; ++k) {
            printf("%s%d", k ? "," : " ", argmax(s));
            if (k + 1 < n_teacher) TL_CHECK(tl_session_feed(s, &teacher[k], 1));
        }
        printf("\n");
    }
    printf("timing: %.3f %.4f\n", (t1 - t0) * 1e3, (t2 - t1) * 1e3 / (tokens ? tokens : 1));
    tl_session_close(s);
    TL_CHECK(tl_model_close(model));
    tl_context_destroy(ctx);
    job_pool_stop(&pool);
    return 0;
}
