/* The model runner on a small random Llama written here as GGUF (SentencePiece vocabulary,
 * GQA): sessions generate, feed in chunks, rewind, refuse a full context and bad ids by name,
 * share one model, allocate nothing per token once warm, and give every refused allocation back.
 * (Tokens against llama.cpp: tests/llamacpp; many sessions on many threads: tests/threads.) */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "common.h"
#include "tiny_llama.h"

CONTEXT_AND_DIR_SUITE(model);

static void write_model(const char *name, const char *arch, int64_t q_rows) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    cr_assert_eq(write_tiny_llama(path, arch, q_rows), 0);
}

static tl_model *open_model(tl_context *c) {
    char path[512];
    snprintf(path, sizeof path, "%s/model.gguf", dir);
    write_model("model.gguf", "llama", D);
    tl_model *m;
    OK(tl_model_open(c, path, &m));
    return m;
}

/* A context whose every allocator call counter counts. */
static tl_context *counted_context(counting_allocator *counter) {
    const tl_allocator a = counting_allocator_of(counter);
    tl_context *c;
    OK(tl_context_create(&a, &c));
    return c;
}

/* A session of m fed kPrompt. */
static const int32_t kPrompt[3] = {1, 260, 262};
static tl_session *prompted_session(tl_model *m) {
    tl_session *s;
    OK(tl_session_open(ctx, m, NULL, &s));
    OK(tl_session_feed(s, kPrompt, 3));
    return s;
}

static void generate(tl_session *s, const tl_sampler *p, int n, int32_t *out) {
    for (int i = 0; i < n; ++i) {
        OK(tl_session_sample(s, p, &out[i]));
        OK(tl_session_feed(s, &out[i], 1));
    }
}

Test(model, sessions_generate_alike_and_rewind_to_a_prefix) {
    tl_model *m = open_model(ctx);
    tl_model_info info = TL_MODEL_INFO_INIT;
    OK(tl_model_info_get(m, &info));
    cr_assert(info.vocab == VOCAB && info.layers == LAYERS && info.kv_heads == KV_HEADS && info.weights_dtype == TL_F32);
    tl_session *a, *b;
    OK(tl_session_open(ctx, m, NULL, &a));
    tl_session_options o = TL_SESSION_OPTIONS_INIT;
    o.max_chunk = 1; /* one token a step: the same tokens as a batch, within rounding */
    OK(tl_session_open(ctx, m, &o, &b));
    const char *prompt = "abc ab cab";
    OK(tl_session_feed_text(a, prompt, strlen(prompt), TL_TOKENIZE_ADD_SPECIAL));
    OK(tl_session_feed_text(b, prompt, strlen(prompt), TL_TOKENIZE_ADD_SPECIAL));
    cr_assert_eq(tl_session_position(a), tl_session_position(b));
    const float *la, *lb;
    size_t n;
    OK(tl_session_logits(a, &la, &n));
    OK(tl_session_logits(b, &lb, &n));
    cr_assert_eq(n, VOCAB);
    for (size_t i = 0; i < n; ++i) cr_assert_float_eq(la[i], lb[i], 1e-4f, "logit %zu: batch %g, one at a time %g", i, la[i], lb[i]);
    const tl_sampler greedy = TL_SAMPLER_GREEDY;
    int32_t first[8], again[8];
    const int32_t kept = tl_session_position(a);
    generate(a, &greedy, 8, first);
    /* rewound to the prompt: the same tokens again, bit for bit the same logits on the way */
    OK(tl_session_rewind(a, kept));
    cr_assert_eq(tl_session_position(a), kept);
    generate(a, &greedy, 8, again);
    cr_assert_arr_eq(first, again, sizeof first);
    /* sampling from a seed: the same seed the same tokens, in another session too */
    tl_sampler warm = TL_SAMPLER_INIT;
    warm.temperature = 1.5f, warm.seed = 42;
    int32_t x[16], y[16];
    OK(tl_session_rewind(a, kept));
    generate(a, &warm, 16, x);
    OK(tl_session_rewind(b, 0));
    OK(tl_session_feed_text(b, prompt, strlen(prompt), TL_TOKENIZE_ADD_SPECIAL));
    warm.seed = 42;
    generate(b, &warm, 16, y); /* b's draw counter differs: the draws continue from where it was */
    tl_session *c;
    OK(tl_session_open(ctx, m, NULL, &c));
    OK(tl_session_feed_text(c, prompt, strlen(prompt), TL_TOKENIZE_ADD_SPECIAL));
    int32_t z[16];
    generate(c, &warm, 16, z);
    tl_session *d;
    OK(tl_session_open(ctx, m, NULL, &d));
    OK(tl_session_feed_text(d, prompt, strlen(prompt), TL_TOKENIZE_ADD_SPECIAL));
    int32_t w[16];
    generate(d, &warm, 16, w);
    cr_assert_arr_eq(z, w, sizeof z, "two fresh sessions, one seed: different tokens");
    FAILS_WITH(tl_model_close(m), TL_E_BUSY);
    cr_assert(strstr(tl_last_error(), "4 sessions are still open"), "%s", tl_last_error());
    tl_session_close(a), tl_session_close(b), tl_session_close(c), tl_session_close(d);
    OK(tl_model_close(m));
}

Test(model, misuse_is_a_status_with_a_message) {
    tl_model *m = open_model(ctx);
    tl_session_options o = TL_SESSION_OPTIONS_INIT;
    o.context_length = 8;
    tl_session *s;
    OK(tl_session_open(ctx, m, &o, &s));
    const float *logits;
    size_t n;
    int32_t t;
    const tl_sampler greedy = TL_SAMPLER_GREEDY;
    FAILS_WITH(tl_session_logits(s, &logits, &n), TL_E_SHAPE);
    FAILS_WITH(tl_session_sample(s, &greedy, &t), TL_E_SHAPE);
    const int32_t ids[9] = {1, 260, 261, 262, 263, 264, 265, 266, 267};
    FAILS_WITH(tl_session_feed(s, ids, 9), TL_E_SHAPE);
    cr_assert(strstr(tl_last_error(), "context of 8 tokens is full"), "%s", tl_last_error());
    cr_assert_eq(tl_session_position(s), 0);
    OK(tl_session_feed(s, ids, 8));
    FAILS_WITH(tl_session_feed(s, ids, 1), TL_E_SHAPE);
    OK(tl_session_rewind(s, 5));
    const int32_t bad[2] = {5, VOCAB};
    FAILS_WITH(tl_session_feed(s, bad, 2), TL_E_INVALID_ARGUMENT);
    cr_assert(strstr(tl_last_error(), "id 1 is 271"), "%s", tl_last_error());
    FAILS_WITH(tl_session_rewind(s, 9), TL_E_INVALID_ARGUMENT);
    REFUSED_WITH(tl_session_rewind(s, -1), TL_E_INVALID_ARGUMENT, "rewind to -1 of 5 tokens");
    const int32_t negative[1] = {-3};
    REFUSED_WITH(tl_session_feed(s, negative, 1), TL_E_INVALID_ARGUMENT, "id 0 is -3, not in the vocabulary");
    const float *before;
    size_t count;
    OK(tl_session_feed(s, ids, 1));
    OK(tl_session_logits(s, &before, &count));
    float kept = before[7];
    OK(tl_session_rewind(s, 6)); /* to where it is: nothing changes, the logits stay */
    cr_assert_eq(tl_session_position(s), 6);
    OK(tl_session_logits(s, &before, &count));
    cr_assert_eq(before[7], kept);
    OK(tl_session_rewind(s, 5));
    REFUSED_WITH(tl_session_feed_text(s, NULL, 0, 0), TL_E_INVALID_ARGUMENT, "nothing to feed"); /* not "NULL" */
    cr_assert_eq(tl_session_position(s), 5);
    FAILS_WITH(tl_session_feed_text(s, "\xf4\x90\x80\x80", 4, 0), TL_E_INVALID_ARGUMENT);
    tl_sampler nan_temperature = TL_SAMPLER_INIT;
    nan_temperature.temperature = NAN;
    FAILS_WITH(tl_session_sample(s, &nan_temperature, &t), TL_E_INVALID_ARGUMENT);
    char text[4];
    size_t len;
    int done;
    OK(tl_session_rewind(s, 2));
    tl_sampler greedy2 = TL_SAMPLER_GREEDY;
    FAILS_WITH(tl_session_generate(s, &greedy2, &t, &done, text, 0, &len), TL_E_INVALID_ARGUMENT);
    cr_assert_eq(tl_session_position(s), 2, "a refused generate fed its token");
    FAILS_WITH(tl_session_open(ctx, m, &(tl_session_options){sizeof(tl_session_options), 0, TL_I32, 0}, &s), TL_E_DTYPE);
    FAILS_WITH(tl_session_feed(NULL, ids, 1), TL_E_INVALID_ARGUMENT);
    FAILS_WITH(tl_model_open(ctx, "/nonexistent/model.gguf", &m), TL_E_IO);
    tl_session_close(s);
    OK(tl_model_close(m));
    /* files that are not such a model, refused naming what is wrong */
    char path[512];
    tl_model *bad_model;
    write_model("arch.gguf", "gpt2", D);
    snprintf(path, sizeof path, "%s/arch.gguf", dir);
    FAILS_WITH(tl_model_open(ctx, path, &bad_model), TL_E_PARSE);
    cr_assert(strstr(tl_last_error(), "general.architecture is not \"llama\""), "%s", tl_last_error());
    write_model("shape.gguf", "llama", D + 8);
    snprintf(path, sizeof path, "%s/shape.gguf", dir);
    FAILS_WITH(tl_model_open(ctx, path, &bad_model), TL_E_PARSE);
    cr_assert(strstr(tl_last_error(), "'blk.0.attn_q.weight' is not [32, 32]"), "%s", tl_last_error());
    tl_session_close(NULL);
    OK(tl_model_close(NULL));
}

/* The end token, sampled, needs room for its NUL like any text: capacity 0 is refused and leaves
 * the session as it was (the same draw comes again), capacity 1 takes it, done, no text.  The
 * seed is searched: at temperature 100 each token is about equally likely, so some seed draws the
 * end before the context (64) is full. */
Test(model, an_end_token_needs_room_for_its_nul) {
    tl_model *m = open_model(ctx);
    tl_sampler hot = TL_SAMPLER_INIT;
    hot.temperature = 100.0f, hot.top_k = 0, hot.top_p = 1.0f, hot.min_p = 0.0f;
    char text[256];
    size_t len;
    int32_t t;
    int done = 0, steps = 0;
    tl_session *s;
    for (hot.seed = 0; hot.seed < 2000; ++hot.seed) {
        OK(tl_session_open(ctx, m, NULL, &s));
        OK(tl_session_feed(s, kPrompt, 3));
        for (steps = 0; tl_session_position(s) < 60; ++steps) {
            OK(tl_session_generate(s, &hot, &t, &done, text, sizeof text, &len));
            if (done) break;
        }
        tl_session_close(s);
        if (done) break;
    }
    cr_assert(done, "no seed of 2000 drew the end token within the context");
    OK(tl_session_open(ctx, m, NULL, &s));
    OK(tl_session_feed(s, kPrompt, 3));
    for (int i = 0; i < steps; ++i) OK(tl_session_generate(s, &hot, &t, &done, text, sizeof text, &len));
    cr_assert(!done);
    const int32_t position = tl_session_position(s);
    REFUSED_WITH(tl_session_generate(s, &hot, &t, &done, text, 0, &len), TL_E_INVALID_ARGUMENT,
                 "1 bytes of text and its NUL, room for 0");
    cr_assert_eq(tl_session_position(s), position);
    text[0] = 'x', len = 9;
    OK(tl_session_generate(s, &hot, &t, &done, text, 1, &len));
    cr_assert(done && tl_model_tokenizer(m) && tl_tokenizer_is_end(tl_model_tokenizer(m), t), "token %d, done %d", t, done);
    cr_assert(len == 0 && text[0] == 0);
    cr_assert_eq(tl_session_position(s), position, "the end token is not fed");
    tl_session_close(s);
    OK(tl_model_close(m));
}

Test(model, a_warm_session_allocates_nothing_per_token) {
    counting_allocator counter = {0};
    tl_context *own = counted_context(&counter);
    tl_model *m = open_model(own);
    tl_session *s;
    OK(tl_session_open(own, m, NULL, &s));
    OK(tl_session_feed_text(s, "abc abc", 7, TL_TOKENIZE_ADD_SPECIAL));
    tl_sampler p = TL_SAMPLER_INIT;
    p.seed = 3;
    char text[256];
    size_t len;
    int32_t t;
    int done;
    for (int i = 0; i < 4; ++i) OK(tl_session_generate(s, &p, &t, &done, text, sizeof text, &len));
    const long before = counter.allocs;
    for (int i = 0; i < 20 && !done; ++i) OK(tl_session_generate(s, &p, &t, &done, text, sizeof text, &len));
    cr_assert_eq(counter.allocs, before, "%ld allocator calls in 20 tokens", counter.allocs - before);
    tl_session_close(s);
    OK(tl_model_close(m));
    tl_context_destroy(own);
    cr_assert_eq(counter.live_bytes, 0);
}

/* A step's scope holds one layer's tensors at a time: a prompt through two layers and through
 * three peaks at the same bytes (the last layer takes its queries and MLP for the last row alone,
 * every other the whole prompt), at more than one layer's MLP rows. */
Test(model, a_step_holds_one_layer_at_a_time) {
    size_t peak[2];
    int32_t prompt[48];
    for (int i = 0; i < 48; ++i) prompt[i] = 259 + i % 12;
    for (int k = 0; k < 2; ++k) {
        char path[512];
        snprintf(path, sizeof path, "%s/deep%d.gguf", dir, 2 + k);
        cr_assert_eq(write_tiny_llama_deep(path, "llama", NULL, 0.5f, FFN, 2 + k), 0);
        tl_model *m;
        OK(tl_model_open(ctx, path, &m));
        tl_session_options o = TL_SESSION_OPTIONS_INIT;
        o.max_chunk = 48;
        tl_session *s;
        OK(tl_session_open(ctx, m, &o, &s));
        OK(tl_session_feed(s, prompt, 48));
        tl_scope_stats st = TL_SCOPE_STATS_INIT;
        OK(tl_session_step_stats(s, &st));
        peak[k] = st.peak_bytes;
        tl_session_close(s);
        OK(tl_model_close(m));
    }
    cr_assert_gt(peak[0], 48 * FFN * sizeof(float), "a layer's step holds its MLP rows");
    cr_assert_eq(peak[1], peak[0], "three layers' step peaked at %zu bytes, two layers' at %zu", peak[1], peak[0]);
}

Test(model, every_refused_allocation_of_a_session_is_reported_and_given_back) {
    counting_allocator counter = {0};
    tl_context *own = counted_context(&counter);
    tl_model *m = open_model(own);
    for (long k = 1;; ++k) {
        const long long live = counter.live_bytes;
        counter.fail_at = counter.allocs + k;
        tl_session *s = NULL;
        const tl_status st = tl_session_open(own, m, NULL, &s);
        tl_status fed = TL_OK;
        if (st == TL_OK) fed = tl_session_feed_text(s, "abc", 3, TL_TOKENIZE_ADD_SPECIAL);
        counter.fail_at = 0;
        if (s) tl_session_close(s);
        cr_assert_eq(counter.live_bytes, live, "refusal %ld kept %lld bytes", k, counter.live_bytes - live);
        if (st == TL_OK && fed == TL_OK) break;
        cr_assert_eq(st == TL_OK ? fed : st, TL_E_OUT_OF_MEMORY, "refusal %ld: %s", k, tl_last_error());
        cr_assert_lt(k, 10000);
    }
    OK(tl_model_close(m));
    tl_context_destroy(own);
    cr_assert_eq(counter.live_bytes, 0);
}

/* Opening a model (its file's index, vocabulary, tokenizer, and with weights_dtype the converted
 * weights) with each of its allocations refused in turn, in a fresh context each time:
 * TL_E_OUT_OF_MEMORY with a message, and every byte given back once the context is destroyed
 * (a context keeps what it grew, its handle generations, until then); then it opens. */
Test(model, every_refused_allocation_of_an_open_is_reported_and_given_back) {
    char path[512];
    snprintf(path, sizeof path, "%s/model.gguf", dir);
    write_model("model.gguf", "llama", D);
    for (int converted = 0; converted < 2; ++converted) {
        tl_model_options o = TL_MODEL_OPTIONS_INIT;
        o.weights_dtype = converted ? TL_BF16 : 0;
        int refusals = 0;
        for (long k = 1;; ++k) {
            counting_allocator counter = {0};
            tl_context *own = counted_context(&counter);
            counter.fail_at = counter.allocs + k;
            tl_model *m = NULL;
            const tl_status st = tl_model_open_with(own, path, &o, &m);
            counter.fail_at = 0;
            if (st == TL_OK) OK(tl_model_close(m));
            else {
                cr_assert_eq(st, TL_E_OUT_OF_MEMORY, "refusal %ld: %s (%s)", k, tl_status_string(st), tl_last_error());
                cr_assert(tl_last_error()[0]);
                cr_assert_null(m);
            }
            tl_context_destroy(own);
            cr_assert_eq(counter.live_bytes, 0, "refusal %ld (%s) kept %lld bytes", k, tl_last_error(), counter.live_bytes);
            if (st == TL_OK) break;
            cr_assert_lt(k, 100000);
            ++refusals;
        }
        cr_assert_gt(refusals, 10, "only %d allocations refused", refusals);
    }
}

Test(model, many_sessions_share_one_model_and_give_everything_back) {
    counting_allocator counter = {0};
    tl_context *own = counted_context(&counter);
    tl_model *m = open_model(own);
    const long long base = counter.live_bytes;
    enum { N = 64 };
    tl_session *s[N];
    tl_session_options o = TL_SESSION_OPTIONS_INIT;
    o.kv_dtype = TL_F16;
    for (int i = 0; i < N; ++i) {
        OK(tl_session_open(own, m, &o, &s[i]));
        const int32_t id = 259 + i % WORDS;
        OK(tl_session_feed(s[i], &id, 1));
    }
    for (int i = 0; i < N; ++i) tl_session_close(s[i]);
    cr_assert_eq(counter.live_bytes, base);
    OK(tl_model_close(m));
    tl_context_destroy(own);
    cr_assert_eq(counter.live_bytes, 0);
}

/* A KV cache kept in f16 or bf16 (tl_session_options.kv_dtype) is read as stored: the logits after
 * a prompt and four tokens fed one at a time lie near the f32 cache's, by about each format's
 * rounding, and not on them (the halves are what attention reads). */
Test(model, a_half_precision_kv_cache_stays_near_the_f32_one) {
    tl_model *m = open_model(ctx);
    const tl_dtype kv[3] = {TL_F32, TL_F16, TL_BF16};
    const double bound[3] = {0, 2e-3, 2e-2};
    static float logits[3][VOCAB];
    for (int k = 0; k < 3; ++k) {
        tl_session_options o = TL_SESSION_OPTIONS_INIT;
        o.kv_dtype = kv[k];
        tl_session *s;
        OK(tl_session_open(ctx, m, &o, &s));
        OK(tl_session_feed(s, kPrompt, 3));
        for (int i = 0; i < 4; ++i) {
            const int32_t id = 259 + (5 * i) % WORDS;
            OK(tl_session_feed(s, &id, 1));
        }
        const float *l;
        size_t n;
        OK(tl_session_logits(s, &l, &n));
        cr_assert_eq(n, VOCAB);
        memcpy(logits[k], l, sizeof logits[k]);
        tl_session_close(s);
    }
    for (int k = 1; k < 3; ++k) {
        double apart = 0;
        for (int i = 0; i < VOCAB; ++i) apart = fmax(apart, fabs((double)logits[k][i] - logits[0][i]));
        cr_assert(apart > 0 && apart < bound[k], "%s cache: logits %g from the f32 cache's", tl_dtype_name(kv[k]), apart);
    }
    OK(tl_model_close(m));
}

Test(model, a_model_from_memory_the_caller_holds_generates_as_from_its_file) {
    char path[512];
    snprintf(path, sizeof path, "%s/model.gguf", dir);
    write_model("model.gguf", "llama", D);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    fseek(f, 0, SEEK_END);
    const long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *bytes = aligned_block_alloc((size_t)size + 1, 64);
    cr_assert_eq(fread(bytes, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    tl_model *from_file, *from_memory, *misaligned;
    OK(tl_model_open(ctx, path, &from_file));
    OK(tl_model_open_memory(ctx, bytes, (size_t)size, &from_memory));
    FAILS_WITH(tl_model_open_memory(ctx, bytes + 1, (size_t)size - 1, &misaligned), TL_E_INVALID_ARGUMENT);
    cr_assert(strstr(tl_last_error(), "aligned"), "%s", tl_last_error());
    const tl_sampler greedy = TL_SAMPLER_GREEDY;
    int32_t a[12], b[12];
    tl_session *s, *t;
    OK(tl_session_open(ctx, from_file, NULL, &s));
    OK(tl_session_open(ctx, from_memory, NULL, &t));
    OK(tl_session_feed_text(s, "abc ab", 6, TL_TOKENIZE_ADD_SPECIAL));
    OK(tl_session_feed_text(t, "abc ab", 6, TL_TOKENIZE_ADD_SPECIAL));
    generate(s, &greedy, 12, a);
    generate(t, &greedy, 12, b);
    cr_assert_arr_eq(a, b, sizeof a);
    tl_session_close(s), tl_session_close(t);
    OK(tl_model_close(from_file));
    OK(tl_model_close(from_memory));
    aligned_block_free(bytes); /* the caller's memory, given back once the model is closed */
    FAILS_WITH(tl_model_open_memory(ctx, NULL, 0, &misaligned), TL_E_INVALID_ARGUMENT);
}

/* Tied logits (output.weight all zero: every logit 0) go to the lowest id, as tl_model.h says of
 * greedy and as the sampler's candidate order keeps for top-k: the k lowest ids tie for the cut. */
Test(model, tied_logits_go_to_the_lowest_ids) {
    char path[512];
    snprintf(path, sizeof path, "%s/flat.gguf", dir);
    cr_assert_eq(write_tiny_llama_scaled(path, "llama", D, 0.0f), 0);
    tl_model *m;
    OK(tl_model_open(ctx, path, &m));
    tl_session *s;
    OK(tl_session_open(ctx, m, NULL, &s));
    const int32_t prompt[2] = {1, 260};
    OK(tl_session_feed(s, prompt, 2));
    tl_sampler greedy = TL_SAMPLER_GREEDY, top = TL_SAMPLER_GREEDY;
    int32_t token;
    OK(tl_session_sample(s, &greedy, &token));
    cr_assert_eq(token, 0);
    top.temperature = 1.0f, top.top_k = 3, top.seed = 5;
    for (int i = 0; i < 20; ++i) {
        OK(tl_session_sample(s, &top, &token));
        cr_assert(token >= 0 && token < 3, "draw %d among the three lowest ids, got %d", i, token);
    }
    /* top-p keeps candidates until their mass reaches p: two of 0.5 each and p 0.5 keep one. */
    top.top_k = 2, top.top_p = 0.5f;
    for (int i = 0; i < 20; ++i) {
        OK(tl_session_sample(s, &top, &token));
        cr_assert_eq(token, 0, "draw %d: top-p 0.5 of two equal candidates keeps the first", i);
    }
    tl_session_close(s);
    /* A top-k past the vocabulary keeps every candidate: the same draws as no top-k at all. */
    tl_session *all, *past;
    OK(tl_session_open(ctx, m, NULL, &all));
    OK(tl_session_open(ctx, m, NULL, &past));
    OK(tl_session_feed(all, prompt, 2));
    OK(tl_session_feed(past, prompt, 2));
    tl_sampler every = TL_SAMPLER_GREEDY, beyond;
    every.temperature = 1.0f, every.seed = 9;
    beyond = every, beyond.top_k = 1 << 30;
    int spread = 0;
    for (int i = 0; i < 20; ++i) {
        int32_t a, b;
        OK(tl_session_sample(all, &every, &a));
        OK(tl_session_sample(past, &beyond, &b));
        cr_assert_eq(a, b, "draw %d: top-k 2^30 gave %d, no top-k %d", i, b, a);
        spread += a >= 3; /* drawn from the whole flat vocabulary, not the lowest few */
    }
    cr_assert_gt(spread, 10);
    tl_session_close(all), tl_session_close(past);
    OK(tl_model_close(m));
}

/* llama.cpp's repetition penalty: a seen token's positive logit divided, a negative one
 * multiplied.  At a huge penalty no token seen in the window wins again while an unseen one has a
 * positive logit: twenty greedy tokens, all different, none of the prompt's. */
Test(model, a_huge_repetition_penalty_never_repeats) {
    tl_model *m = open_model(ctx);
    tl_session *s = prompted_session(m);
    tl_sampler p = TL_SAMPLER_GREEDY;
    p.repeat_penalty = 1e6f, p.repeat_last_n = 64;
    int32_t got[20];
    generate(s, &p, 20, got);
    for (int i = 0; i < 20; ++i) {
        for (int j = 0; j < 3; ++j) cr_assert_neq(got[i], kPrompt[j], "token %d repeats the prompt's %d", i, kPrompt[j]);
        for (int j = 0; j < i; ++j) cr_assert_neq(got[i], got[j], "tokens %d and %d are both %d", j, i, got[i]);
    }
    tl_session_close(s);
    OK(tl_model_close(m));
}

/* An ambient session (tl_session_options.ambient) computes the same bits as a scoped one: the
 * logits after a prompt in one batch and after each of 12 greedy tokens; it allocates every
 * step and has no step scope, the scoped one allocates nothing once warm and reports its scope. */
Test(model, an_ambient_session_gives_the_scoped_bits) {
    counting_allocator counter = {0};
    tl_context *own = counted_context(&counter);
    tl_model *m = open_model(own);
    tl_session *s[2];
    float logits[2][13][VOCAB];
    long calls[2];
    const tl_sampler greedy = TL_SAMPLER_GREEDY;
    for (int k = 0; k < 2; ++k) {
        tl_session_options o = TL_SESSION_OPTIONS_INIT;
        o.ambient = k == 0;
        OK(tl_session_open(own, m, &o, &s[k]));
        tl_scope_stats st = TL_SCOPE_STATS_INIT;
        OK(tl_session_step_stats(s[k], &st));
        cr_assert_eq(st.slab_bytes, 0, "stats before the first step");
        OK(tl_session_feed_text(s[k], "abc ab ca", 9, TL_TOKENIZE_ADD_SPECIAL));
        long long live_after_step[13];
        for (int i = 0; i < 13; ++i) {
            const float *l;
            size_t n;
            int32_t t;
            if (i == 2) calls[k] = counter.allocs;
            live_after_step[i] = counter.live_bytes;
            if (i > 2)
                cr_assert_eq(live_after_step[i], live_after_step[i - 1], "%s: %lld bytes more held after step %d",
                             k ? "scoped" : "ambient", live_after_step[i] - live_after_step[i - 1], i);
            OK(tl_session_logits(s[k], &l, &n));
            cr_assert_eq(n, VOCAB);
            memcpy(logits[k][i], l, sizeof logits[k][i]);
            OK(tl_session_sample(s[k], &greedy, &t));
            OK(tl_session_feed(s[k], &t, 1));
        }
        calls[k] = counter.allocs - calls[k];
        OK(tl_session_step_stats(s[k], &st));
        if (k == 0)
            cr_assert(st.slab_bytes == 0 && st.peak_bytes == 0 && st.grow_events == 0, "an ambient session has no step scope");
        else
            cr_assert(st.slab_bytes > 0 && st.peak_bytes > 0 && st.used_bytes > 0, "the scoped step's scope");
    }
    cr_assert_arr_eq(logits[0], logits[1], sizeof logits[0], "ambient and scoped logits differ");
    cr_assert_gt(calls[0], 0, "an ambient session allocates each step");
    cr_assert_eq(calls[1], 0, "a warm scoped session allocated %ld times", calls[1]);
    tl_session_close(s[0]), tl_session_close(s[1]);
    FAILS_WITH(tl_session_open(own, m, &(tl_session_options){sizeof(tl_session_options), 0, TL_F32, 0, 2}, &s[0]),
               TL_E_INVALID_ARGUMENT);
    tl_scope_stats st = TL_SCOPE_STATS_INIT;
    FAILS_WITH(tl_session_step_stats(NULL, &st), TL_E_INVALID_ARGUMENT);
    OK(tl_model_close(m));
    tl_context_destroy(own);
    cr_assert_eq(counter.live_bytes, 0);
}

/* tl_model_open_with converts the projections, the head and the embedding table once, into bytes
 * the model owns from the opening context's allocator (exactly their size in the new dtype), given
 * back at close; sessions read them without a copy of their own, and generate near the f32
 * model's logits.  A dtype the weights cannot take is refused naming the tensor. */
Test(model, weights_converted_at_open_belong_to_the_model) {
    counting_allocator counter = {0};
    tl_context *own = counted_context(&counter);
    char path[512];
    snprintf(path, sizeof path, "%s/model.gguf", dir);
    write_model("model.gguf", "llama", D);
    tl_model *f32, *bf16, *again;
    OK(tl_model_open(own, path, &f32));
    const long long with_f32 = counter.live_bytes;
    OK(tl_model_open(own, path, &again)); /* what a model holds besides its weights: tokenizer, tables */
    const long long as_stored = counter.live_bytes - with_f32;
    OK(tl_model_close(again));
    tl_model_options o = TL_MODEL_OPTIONS_INIT;
    o.weights_dtype = TL_BF16;
    OK(tl_model_open_with(own, path, &o, &bf16));
    const long long kvw = D / HEADS * KV_HEADS;
    const long long converted = 2 * (LAYERS * (D * D * 2 + kvw * D * 2 + 3 * FFN * D) + 2 * VOCAB * D);
    const long long grown = counter.live_bytes - with_f32 - as_stored;
    cr_assert(grown >= converted && grown < converted + 4096, "%lld bytes more than as stored, for %lld of weights",
              grown, converted);
    tl_model_info info = TL_MODEL_INFO_INIT;
    OK(tl_model_info_get(bf16, &info));
    cr_assert_eq(info.weights_dtype, TL_BF16);
    long long per_session[2];
    float last[2][VOCAB];
    tl_model *models[2] = {f32, bf16};
    for (int k = 0; k < 2; ++k) {
        const long long before = counter.live_bytes;
        tl_session *s;
        OK(tl_session_open(own, models[k], NULL, &s));
        per_session[k] = counter.live_bytes - before;
        OK(tl_session_feed_text(s, "abc ab ca", 9, TL_TOKENIZE_ADD_SPECIAL));
        const float *l;
        size_t n;
        OK(tl_session_logits(s, &l, &n));
        memcpy(last[k], l, sizeof last[k]);
        tl_session_close(s);
    }
    cr_assert_eq(per_session[0], per_session[1], "a session of the converted model copies: %lld against %lld bytes",
                 per_session[1], per_session[0]);
    double worst = 0, spread = 0;
    for (int i = 0; i < VOCAB; ++i) {
        worst = fmax(worst, fabs(last[0][i] - last[1][i]));
        spread = fmax(spread, fabs(last[0][i]));
    }
    cr_assert(worst > 0 && worst < 0.05 * spread, "bf16 logits %g from f32's (spread %g)", worst, spread);
    OK(tl_model_close(bf16));
    cr_assert_eq(counter.live_bytes, with_f32, "closing the model gave its converted weights back");
    /* converting to the dtype the file holds copies nothing */
    o.weights_dtype = TL_F32;
    tl_model *same;
    OK(tl_model_open_with(own, path, &o, &same));
    cr_assert_lt(counter.live_bytes - with_f32, as_stored + 4096, "an f32 file opened as f32 copied its weights");
    OK(tl_model_close(same));
    /* rows of 48 (ffn_down) are no whole q8_0 blocks; i32 is no weight dtype */
    tl_model *bad = NULL;
    o.weights_dtype = TL_Q8_0;
    FAILS_WITH(tl_model_open_with(own, path, &o, &bad), TL_E_SHAPE);
    cr_assert(strstr(tl_last_error(), "'blk.0.ffn_down.weight' to q8_0"), "%s", tl_last_error());
    o.weights_dtype = TL_I32;
    FAILS_WITH(tl_model_open_with(own, path, &o, &bad), TL_E_DTYPE);
    cr_assert(strstr(tl_last_error(), "to i32"), "%s", tl_last_error());
    o.struct_size = 0;
    FAILS_WITH(tl_model_open_with(own, path, &o, &bad), TL_E_INVALID_ARGUMENT);
    cr_assert_null(bad);
    cr_assert_eq(counter.live_bytes, with_f32, "a refused open kept memory");
    OK(tl_model_close(f32));
    tl_context_destroy(own);
    cr_assert_eq(counter.live_bytes, 0);
}

/* Each thing a model file can get wrong, refused with the status and a message naming it; a file
 * without output.weight is a model whose head is its embedding table (tied), as llama.cpp reads it. */
Test(model, malformed_models_are_refused_naming_what_is_wrong) {
    const int64_t kvw = D / HEADS * KV_HEADS;
    const struct {
        tiny_spoil spoil;
        tl_status status;
        const char *message;
    } cases[] = {
        {{"llama.embedding_length", -1}, TL_E_PARSE, "llama.embedding_length is missing or not an integer"},
        {{"llama.block_count", 0, 1}, TL_E_PARSE, "llama.block_count is missing or not an integer"},
        {{"llama.feed_forward_length", (1 << 24) + 1}, TL_E_PARSE, "llama.feed_forward_length = 16777217 is out of range"},
        {{"llama.attention.head_count", 3}, TL_E_PARSE, "do not describe a Llama model"},      /* 32 % 3 */
        {{"llama.attention.head_count_kv", 3}, TL_E_PARSE, "do not describe a Llama model"},   /* 4 % 3 */
        {{"llama.attention.head_count_kv", 0}, TL_E_PARSE, "'blk.0.attn_k.weight' is not [32, 32]"}, /* 0: one a head */
        {{"llama.attention.head_count", 32}, TL_E_PARSE, "do not describe a Llama model"},     /* head_dim 1, odd */
        {{"llama.block_count", 0}, TL_E_PARSE, "do not describe a Llama model"},
        {{"llama.block_count", 65537}, TL_E_PARSE, "do not describe a Llama model"},           /* past 2^16 layers */
        {{"llama.attention.head_count", 0}, TL_E_PARSE, "do not describe a Llama model"},
        {{"llama.feed_forward_length", 0}, TL_E_PARSE, "do not describe a Llama model"},
        {{"llama.embedding_length", 0}, TL_E_PARSE, "do not describe a Llama model"},
        {{"llama.rope.freq_base", 0}, TL_E_PARSE, "do not describe a Llama model"},
        {{"llama.attention.layer_norm_rms_epsilon", 0}, TL_E_PARSE, "do not describe a Llama model"},
        {{NULL, 0, 0, "token_embd.weight", VOCAB, D + 2}, TL_E_PARSE, "the embedding table is not [vocab, 32]"},
        {{NULL, 0, 0, "token_embd.weight", 0}, TL_E_NOT_FOUND, "token_embd.weight"},
        {{NULL, 0, 0, "blk.1.ffn_down.weight", D, FFN + 1}, TL_E_PARSE, "'blk.1.ffn_down.weight' is not [32, 48]"},
        {{NULL, 0, 0, "blk.1.attn_v.weight", 0}, TL_E_NOT_FOUND, "blk.1.attn_v.weight"},
        {{NULL, 0, 0, "blk.0.ffn_norm.weight", D + 1, 0}, TL_E_PARSE, "'blk.0.ffn_norm.weight' is not [32]"},
        {{NULL, 0, 0, "blk.0.attn_norm.weight", D, 2}, TL_E_PARSE, "'blk.0.attn_norm.weight' is not [32]"},
        {{NULL, 0, 0, "output_norm.weight", 0}, TL_E_NOT_FOUND, "output_norm.weight"},
        {{NULL, 0, 0, "output.weight", VOCAB - 1, D}, TL_E_PARSE, "'output.weight' is not [271, 32]"},
        {{NULL, 0, 0, "blk.0.attn_k.weight", kvw * 2, D}, TL_E_PARSE, "'blk.0.attn_k.weight' is not [16, 32]"},
        {{NULL, 0, 0, "blk.0.attn_q.weight", D, 0}, TL_E_PARSE, "'blk.0.attn_q.weight' is not [32, 32]"}, /* a vector */
        {{NULL, 0, 0, NULL, 0, 0, VOCAB + 5}, TL_E_PARSE, "the vocabulary has 271 tokens, the embedding table 276 rows"},
    };
    char path[512];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        snprintf(path, sizeof path, "%s/spoiled%zu.gguf", dir, i);
        cr_assert_eq(write_tiny_llama_spoiled(path, "llama", &cases[i].spoil, 0.5f), 0);
        tl_model *m = NULL;
        FAILS_WITH(tl_model_open(ctx, path, &m), cases[i].status);
        cr_assert(strstr(tl_last_error(), cases[i].message), "case %zu: %s", i, tl_last_error());
        cr_assert(strstr(tl_last_error(), path) || cases[i].status == TL_E_NOT_FOUND, "case %zu names no file: %s", i,
                  tl_last_error());
        cr_assert_null(m);
    }
    /* Keys with fallbacks: no head_count_kv is as many KV heads as heads; no context_length is 2048.
     * A session's default context is the model's, at most 4096 (and 4096 where the file says 0). */
    const tiny_spoil optional[] = {{"llama.attention.head_count_kv", -1}, {"llama.context_length", -1},
                                   {"llama.rope.freq_base", -1}, {"llama.context_length", 8192},
                                   {"llama.context_length", 0}};
    for (size_t i = 0; i < 5; ++i) {
        snprintf(path, sizeof path, "%s/optional%zu.gguf", dir, i);
        cr_assert_eq(write_tiny_llama_spoiled(path, "llama", &optional[i], 0.5f), 0);
        tl_model *m;
        if (i == 0) { /* 4 KV heads of the 2 rows a head the file has: refused as the wrong shape */
            FAILS_WITH(tl_model_open(ctx, path, &m), TL_E_PARSE);
            cr_assert(strstr(tl_last_error(), "'blk.0.attn_k.weight' is not [32, 32]"), "%s", tl_last_error());
            continue;
        }
        OK(tl_model_open(ctx, path, &m));
        tl_model_info info = TL_MODEL_INFO_INIT;
        OK(tl_model_info_get(m, &info));
        cr_assert_eq(info.context_length, i == 1 ? 2048 : i == 3 ? 8192 : i == 4 ? 0 : 64);
        tl_session *s;
        OK(tl_session_open(ctx, m, NULL, &s));
        cr_assert_eq(tl_session_context_length(s), i == 1 ? 2048 : i >= 3 ? 4096 : 64);
        tl_session_close(s);
        OK(tl_model_close(m));
    }
    /* No output.weight: the head is the embedding table, whose logits are then those of the table. */
    const tiny_spoil untied = {NULL, 0, 0, "output.weight", 0};
    snprintf(path, sizeof path, "%s/tied.gguf", dir);
    cr_assert_eq(write_tiny_llama_spoiled(path, "llama", &untied, 0.5f), 0);
    tl_model *m;
    OK(tl_model_open(ctx, path, &m));
    tl_session *s;
    OK(tl_session_open(ctx, m, NULL, &s));
    OK(tl_session_feed_text(s, "abc", 3, TL_TOKENIZE_ADD_SPECIAL));
    const float *logits;
    size_t n;
    OK(tl_session_logits(s, &logits, &n));
    cr_assert_eq(n, VOCAB);
    tl_session_close(s);
    OK(tl_model_close(m));
}

/* The tiny model as a Hugging Face folder: config.json (text given) beside model.safetensors,
 * the GGUF file's tensors under Hugging Face's names, q and k rows unpermuted from GGUF's
 * interleaved pairs (row h*hd + 2i + j) to the halves Hugging Face stores (row h*hd + j*hd/2 + i). */
static void write_hf_folder_as(const char *folder, const char *config, tl_dtype stored, int through_bf16) {
    static const char *const gguf_names[9] = {"attn_norm", "attn_q", "attn_k", "attn_v", "attn_output",
                                              "ffn_norm",  "ffn_gate", "ffn_up", "ffn_down"};
    static const char *const hf_names[9] = {"input_layernorm", "self_attn.q_proj", "self_attn.k_proj",
                                            "self_attn.v_proj", "self_attn.o_proj", "post_attention_layernorm",
                                            "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"};
    char path[512];
    snprintf(path, sizeof path, "%s/model.gguf", dir);
    write_model("model.gguf", "llama", D);
    tl_gguf_file *g;
    OK(tl_gguf_open(ctx, path, &g));
    enum { N = 3 + 9 * LAYERS };
    char names[N][64], gguf[N][64];
    const char *name_of[N];
    tl_tensor tensors[N];
    snprintf(gguf[0], 64, "token_embd.weight"), snprintf(names[0], 64, "model.embed_tokens.weight");
    snprintf(gguf[1], 64, "output_norm.weight"), snprintf(names[1], 64, "model.norm.weight");
    snprintf(gguf[2], 64, "output.weight"), snprintf(names[2], 64, "lm_head.weight");
    for (int l = 0; l < LAYERS; ++l)
        for (int w = 0; w < 9; ++w) {
            snprintf(gguf[3 + 9 * l + w], 64, "blk.%d.%s.weight", l, gguf_names[w]);
            snprintf(names[3 + 9 * l + w], 64, "model.layers.%d.%s.weight", l, hf_names[w]);
        }
    for (int i = 0; i < N; ++i) {
        name_of[i] = names[i];
        OK(tl_gguf_get(ctx, g, gguf[i], &tensors[i]));
        const int heads = strstr(gguf[i], "attn_q") ? HEADS : strstr(gguf[i], "attn_k") ? KV_HEADS : 0;
        if (!heads) continue;
        const int hd = D / HEADS, rows = heads * hd;
        float *from = malloc(sizeof(float) * rows * D), *to = malloc(sizeof(float) * rows * D);
        OK(tl_tensor_read(ctx, tensors[i], from, sizeof(float) * rows * D));
        for (int h = 0; h < heads; ++h)
            for (int p = 0; p < hd / 2; ++p)
                for (int j = 0; j < 2; ++j)
                    memcpy(to + (h * hd + j * hd / 2 + p) * D, from + (h * hd + 2 * p + j) * D, sizeof(float) * D);
        const int64_t shape[2] = {rows, D};
        OK(tl_tensor_free(ctx, tensors[i]));
        tensors[i] = make_f32(ctx, 2, shape, to);
        free(from), free(to);
    }
    for (int i = 0; i < N && (through_bf16 || stored != TL_F32); ++i) {
        const tl_tensor before = tensors[i];
        tl_tensor half = before;
        if (through_bf16) OK(tl_convert(ctx, before, TL_BF16, &half));
        OK(tl_convert(ctx, half, stored, &tensors[i]));
        if (through_bf16) OK(tl_tensor_free(ctx, half));
        OK(tl_tensor_free(ctx, before));
    }
    snprintf(path, sizeof path, "%s/model.safetensors", folder);
    OK(tl_safetensors_save(ctx, path, N, name_of, tensors));
    /* Every tensor over the file's mapping freed, so the file can be written again (Windows
     * refuses to replace a mapped file). */
    for (int i = 0; i < N; ++i) OK(tl_tensor_free(ctx, tensors[i]));
    tl_gguf_close(g);
    snprintf(path, sizeof path, "%s/config.json", folder);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    fputs(config, f);
    fclose(f);
}

/* The folder a Hugging Face checkpoint in f32 is. */
static void write_hf_folder(const char *folder, const char *config) { write_hf_folder_as(folder, config, TL_F32, 0); }

static void logits_after(tl_model *m, float *out) {
    const int32_t ids[6] = {1, 262, 265, 3, 270, 259};
    tl_session *s;
    OK(tl_session_open(ctx, m, NULL, &s));
    OK(tl_session_feed(s, ids, 6));
    const float *logits;
    size_t n;
    OK(tl_session_logits(s, &logits, &n));
    cr_assert_eq(n, VOCAB);
    memcpy(out, logits, sizeof(float) * VOCAB);
    tl_session_close(s);
}

Test(model, a_hugging_face_folder_gives_the_gguf_files_logits) {
    char gguf[512], folder[512], named[520], config[512];
    snprintf(gguf, sizeof gguf, "%s/model.gguf", dir);
    snprintf(folder, sizeof folder, "%s", dir);
    const char *good = "{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": 32, \"num_attention_heads\": 4,"
                       " \"num_key_value_heads\": 2, \"num_hidden_layers\": 2, \"intermediate_size\": 48,"
                       " \"vocab_size\": 271, \"max_position_embeddings\": 64, \"rope_theta\": 10000.0,"
                       " \"rms_norm_eps\": 1e-05}";
    write_hf_folder(folder, good);
    float want[VOCAB], got[VOCAB];
    tl_model *m;
    OK(tl_model_open(ctx, gguf, &m));
    logits_after(m, want);
    OK(tl_model_close(m));
    /* The folder, the folder with a separator after it, its weights file: the same model. */
#ifdef _WIN32
    const int forms = 4; /* and the weights file named with Windows' own separator */
#else
    const int forms = 3;
#endif
    for (int form = 0; form < forms; ++form) {
        snprintf(named, sizeof named,
                 form == 0 ? "%s" : form == 1 ? "%s/" : form == 2 ? "%s/model.safetensors" : "%s\\model.safetensors", folder);
        OK(tl_model_open(ctx, named, &m));
        tl_model_info info = TL_MODEL_INFO_INIT;
        OK(tl_model_info_get(m, &info));
        cr_assert(info.d_model == D && info.heads == HEADS && info.kv_heads == KV_HEADS && info.layers == LAYERS &&
                  info.ffn == FFN && info.vocab == VOCAB && info.context_length == 64);
        cr_assert_null(tl_model_tokenizer(m), "a folder without a vocabulary has no tokenizer");
        if (form == 0) { /* text in or out needs a vocabulary: refused by name, ids still work */
            tl_session *s;
            OK(tl_session_open(ctx, m, NULL, &s));
            FAILS_WITH(tl_session_feed_text(s, "abc", 3, 0), TL_E_NOT_FOUND);
            cr_assert(strstr(tl_last_error(), "carries no vocabulary"), "%s", tl_last_error());
            const int32_t one = 1;
            OK(tl_session_feed(s, &one, 1));
            const tl_sampler greedy = TL_SAMPLER_GREEDY;
            int32_t token;
            int done;
            char text[64];
            size_t length;
            FAILS_WITH(tl_session_generate(s, &greedy, &token, &done, text, sizeof text, &length), TL_E_NOT_FOUND);
            cr_assert_eq(tl_session_position(s), 1, "a refused generate feeds nothing");
            tl_session_close(s);
        }
        logits_after(m, got);
        for (int i = 0; i < VOCAB; ++i)
            cr_assert(fabsf(got[i] - want[i]) <= 1e-5f + 1e-5f * fabsf(want[i]), "%s: logit %d is %g, the GGUF's %g",
                      named, i, got[i], want[i]);
        OK(tl_model_close(m));
    }
    /* Optional keys: no num_key_value_heads (or null) is one KV head a head (so attn_k's rows are
     * wrong); no max_position_embeddings is 2048; no rope_theta or rms_norm_eps opens with the
     * defaults (null as missing).  An integer given is a whole number from 1 to 2^24, a real one a
     * positive number, or the key is refused by its name. */
    const struct {
        const char *config;
        tl_status status;
        const char *message;
        int32_t context_length;
    } cases[] = {
        {"{\"hidden_size\": 32, \"num_attention_heads\": 4, \"num_hidden_layers\": 2, \"intermediate_size\": 48,"
         " \"vocab_size\": 271}",
         TL_E_PARSE, "'model.layers.0.self_attn.k_proj.weight' is not [32, 32]", 0},
        {"{\"hidden_size\": 32, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, \"num_hidden_layers\": 2,"
         " \"intermediate_size\": 48, \"vocab_size\": 271}",
         TL_OK, NULL, 2048},
        {"{\"hidden_size\": 32, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, \"num_hidden_layers\": 2,"
         " \"intermediate_size\": 48}",
         TL_E_PARSE, "not a LlamaForCausalLM config", 0},
        {"{\"hidden_size\": 16777217, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, \"num_hidden_layers\": 2,"
         " \"intermediate_size\": 48, \"vocab_size\": 271}",
         TL_E_PARSE, "config.json: hidden_size = 16777217 is out of range (1 to 16777216)", 0},
        {"{\"hidden_size\": 32, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, \"num_hidden_layers\": 2.5,"
         " \"intermediate_size\": 48, \"vocab_size\": 271}",
         TL_E_PARSE, "config.json: num_hidden_layers is not a whole number", 0},
        {"{\"hidden_size\": 32, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, \"num_hidden_layers\": 2,"
         " \"intermediate_size\": 48, \"vocab_size\": \"271\"}",
         TL_E_PARSE, "config.json: vocab_size is not a whole number", 0},
        {"{\"hidden_size\": 32, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, \"num_hidden_layers\": 2,"
         " \"intermediate_size\": -48, \"vocab_size\": 271}",
         TL_E_PARSE, "config.json: intermediate_size = -48 is out of range", 0},
        {"{\"hidden_size\": 32, \"num_attention_heads\": 4, \"num_key_value_heads\": null, \"num_hidden_layers\": 2,"
         " \"intermediate_size\": 48, \"vocab_size\": 271}",
         TL_E_PARSE, "'model.layers.0.self_attn.k_proj.weight' is not [32, 32]", 0}, /* null: as when missing */
        {"{\"hidden_size\": 32, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, \"num_hidden_layers\": 2,"
         " \"intermediate_size\": 48, \"vocab_size\": 271, \"max_position_embeddings\": 4096}",
         TL_OK, NULL, 4096},
        {"{\"hidden_size\": 32, \"num_attention_heads\": 3, \"num_key_value_heads\": 1, \"num_hidden_layers\": 2,"
         " \"intermediate_size\": 48, \"vocab_size\": 271}",
         TL_E_PARSE, "do not describe a Llama model", 0},
        {"{\"hidden_size\": 32, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, \"num_hidden_layers\": 2,"
         " \"intermediate_size\": 48, \"vocab_size\": 271, \"rms_norm_eps\": -1}",
         TL_E_PARSE, "config.json: rms_norm_eps = -1 is not a positive number", 0},
        {"{\"hidden_size\": 32, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, \"num_hidden_layers\": 2,"
         " \"intermediate_size\": 48, \"vocab_size\": 271, \"rope_theta\": \"500000.0\"}",
         TL_E_PARSE, "config.json: rope_theta is not a number", 0},
        {"{\"hidden_size\": 32, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, \"num_hidden_layers\": 2,"
         " \"intermediate_size\": 48, \"vocab_size\": 271, \"rope_theta\": 0}",
         TL_E_PARSE, "config.json: rope_theta = 0 is not a positive number", 0},
        {"{\"hidden_size\": 32, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, \"num_hidden_layers\": 2,"
         " \"intermediate_size\": 48, \"vocab_size\": 271, \"rope_theta\": 1e999}",
         TL_E_PARSE, "config.json: rope_theta is not finite", 0},
        {"{\"hidden_size\": 32, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, \"num_hidden_layers\": 2,"
         " \"intermediate_size\": 48, \"vocab_size\": 271, \"rope_theta\": null, \"rms_norm_eps\": null}",
         TL_OK, NULL, 2048},
        {"{\"hidden_size\": 32, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, \"num_hidden_layers\": 2,"
         " \"intermediate_size\": 48, \"vocab_size\": 300}",
         TL_E_PARSE, "the embedding table has 271 rows, the config 300", 0},
        {"{\"hidden_size\": 32, [", TL_E_PARSE, "not JSON", 0},
        {"{\"hidden_size\": 32, \"num_key_value_heads\": 2, \"num_hidden_layers\": 2, \"intermediate_size\": 48,"
         " \"vocab_size\": 271}",
         TL_E_PARSE, "not a LlamaForCausalLM config", 0},
        {"{\"num_attention_heads\": 4, \"num_key_value_heads\": 2, \"num_hidden_layers\": 2, \"intermediate_size\": 48,"
         " \"vocab_size\": 271}",
         TL_E_PARSE, "not a LlamaForCausalLM config", 0},
        {"{\"hidden_size\": 32, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, \"intermediate_size\": 48,"
         " \"vocab_size\": 271}",
         TL_E_PARSE, "not a LlamaForCausalLM config", 0},
        {"{\"hidden_size\": 32, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, \"num_hidden_layers\": 2,"
         " \"vocab_size\": 271}",
         TL_E_PARSE, "not a LlamaForCausalLM config", 0},
        {"{\"hidden_size\": 32, \"num_attention_heads\": 4, \"num_key_value_heads\": 0, \"num_hidden_layers\": 2,"
         " \"intermediate_size\": 48, \"vocab_size\": 271}",
         TL_E_PARSE, "config.json: num_key_value_heads = 0 is out of range", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        snprintf(config, sizeof config, "%s/config.json", folder);
        FILE *f = fopen(config, "wb");
        cr_assert_not_null(f);
        fputs(cases[i].config, f);
        fclose(f);
        m = NULL;
        const tl_status st = tl_model_open(ctx, folder, &m);
        cr_assert_eq(st, cases[i].status, "case %zu: %s (%s)", i, tl_status_string(st), tl_last_error());
        if (st != TL_OK) {
            cr_assert(strstr(tl_last_error(), cases[i].message), "case %zu: %s", i, tl_last_error());
            cr_assert_null(m);
            continue;
        }
        tl_model_info info = TL_MODEL_INFO_INIT;
        OK(tl_model_info_get(m, &info));
        cr_assert_eq(info.context_length, cases[i].context_length);
        OK(tl_model_close(m));
    }
    /* No config.json beside the weights: the path it looked for is named. */
    remove(config);
    FAILS_WITH(tl_model_open(ctx, folder, &m), TL_E_IO);
    cr_assert(strstr(tl_last_error(), "config.json: cannot open"), "%s", tl_last_error());
}

/* A name shorter than ".safetensors", of a file that is neither GGUF nor a folder's weights:
 * refused saying what it is not. */
Test(model, a_short_name_of_another_file_is_refused) {
    char here[4096], path[512];
    snprintf(path, sizeof path, "%s/m", dir);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    fputs("not a model", f);
    fclose(f);
    cr_assert_not_null(getcwd(here, sizeof here));
    cr_assert_eq(chdir(dir), 0);
    tl_model *m = NULL;
    const tl_status st = tl_model_open(ctx, "m", &m);
    cr_assert_eq(chdir(here), 0);
    cr_assert_eq(st, TL_E_PARSE, "%s", tl_last_error());
    cr_assert(strstr(tl_last_error(), "m: neither a GGUF file"), "%s", tl_last_error());
    cr_assert_null(m);
}

/* The logits after logits_after's ids of the model at path, its weights converted to convert at
 * open (0: as stored), which must then be weights. */
static void logits_of(const char *path, tl_dtype convert, tl_dtype weights, float *out) {
    tl_model_options o = TL_MODEL_OPTIONS_INIT;
    o.weights_dtype = convert;
    tl_model *m;
    OK(tl_model_open_with(ctx, path, &o, &m));
    tl_model_info info = TL_MODEL_INFO_INIT;
    OK(tl_model_info_get(m, &info));
    cr_assert_eq(info.weights_dtype, weights, "%s: %s weights", path, tl_dtype_name(info.weights_dtype));
    logits_after(m, out);
    OK(tl_model_close(m));
}

/* Most checkpoints are bf16, norms included: such a folder opens with its weights read in place
 * and its norms widened once, giving the logits of the same values stored as f32 (within the
 * kernels' summation orders); converted to another dtype at open (through f32), the very bits of
 * the f32 folder converted so. */
Test(model, a_bf16_hugging_face_folder_gives_its_values_logits) {
    const char *config = "{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": 32, \"num_attention_heads\": 4,"
                         " \"num_key_value_heads\": 2, \"num_hidden_layers\": 2, \"intermediate_size\": 48,"
                         " \"vocab_size\": 271, \"max_position_embeddings\": 64}";
    char as_bf16[256], as_f32[256];
    temp_dir_create(as_bf16, sizeof as_bf16, "bf16");
    temp_dir_create(as_f32, sizeof as_f32, "f32");
    write_hf_folder_as(as_bf16, config, TL_BF16, 0);
    write_hf_folder_as(as_f32, config, TL_F32, 1);
    float want[VOCAB], got[VOCAB];
    logits_of(as_f32, 0, TL_F32, want);
    logits_of(as_bf16, 0, TL_BF16, got);
    for (int i = 0; i < VOCAB; ++i)
        cr_assert(fabsf(got[i] - want[i]) <= 1e-5f + 1e-5f * fabsf(want[i]), "logit %d is %g, f32's %g", i, got[i], want[i]);
    /* (the MLP's 48 is no whole number of q8_0's blocks: f16) */
    logits_of(as_f32, TL_F16, TL_F16, want);
    logits_of(as_bf16, TL_F16, TL_F16, got);
    cr_assert(memcmp(got, want, sizeof got) == 0, "f16 from bf16 is not f16 from the same values in f32");
    /* Widened to f32 at open: bf16 to f32 is exact, so the very bits of the f32 folder. */
    logits_of(as_f32, 0, TL_F32, want);
    logits_of(as_bf16, TL_F32, TL_F32, got);
    cr_assert(memcmp(got, want, sizeof got) == 0, "bf16 widened at open is not the f32 folder");
    temp_dir_remove(as_bf16);
    temp_dir_remove(as_f32);
}

/* A folder in f16, norms too: read in place, the norms widened; the logits of the same values.
 * A norm of another dtype is refused by name. */
Test(model, an_f16_hugging_face_folder_reads_its_norms_widened) {
    const char *config = "{\"hidden_size\": 32, \"num_attention_heads\": 4, \"num_key_value_heads\": 2,"
                         " \"num_hidden_layers\": 2, \"intermediate_size\": 48, \"vocab_size\": 271}";
    char as_f16[256], gguf[512];
    temp_dir_create(as_f16, sizeof as_f16, "f16");
    write_hf_folder_as(as_f16, config, TL_F16, 0);
    snprintf(gguf, sizeof gguf, "%s/model.gguf", dir);
    float want[VOCAB], got[VOCAB];
    logits_of(gguf, 0, TL_F32, want);
    logits_of(as_f16, 0, TL_F16, got);
    for (int i = 0; i < VOCAB; ++i) /* f16's rounding of weights of about 0.2: 1e-2 of logits about 0.5 */
        cr_assert(fabsf(got[i] - want[i]) <= 1e-2f, "logit %d is %g, f32's %g", i, got[i], want[i]);
    /* Norms are f32, f16 or bf16: one stored as int32 (its header's "F32" made "I32" in place, the
     * same length) is refused by name. */
    write_hf_folder_as(as_f16, config, TL_F32, 0);
    char path[512];
    snprintf(path, sizeof path, "%s/model.safetensors", as_f16);
    FILE *f = fopen(path, "r+b");
    cr_assert_not_null(f);
    static char head[8192];
    const size_t n = fread(head, 1, sizeof head - 1, f);
    head[n] = 0;
    const char *norm = strstr(head + 8, "model.layers.1.input_layernorm.weight"), *dtype = norm ? strstr(norm, "F32") : NULL;
    cr_assert_not_null(dtype);
    fseek(f, (long)(dtype - head), SEEK_SET);
    fputc('I', f);
    fclose(f);
    tl_model *m = NULL;
    REFUSED_WITH(tl_model_open(ctx, as_f16, &m), TL_E_DTYPE, "the norm 'model.layers.1.input_layernorm.weight' is i32");
    cr_assert_null(m);
    temp_dir_remove(as_f16);
}

/* Sampling at temperature t draws each token with probability softmax(logits / t): 20,000 draws
 * of one position's logits, each of the five likeliest tokens' frequency within five standard
 * deviations of its probability (the draws are a fixed sequence of the seed: no flakiness), and
 * the ones top-k cuts never drawn.  The repetition window: a penalty reaches the last
 * repeat_last_n tokens of the history only (-1: all of it). */
Test(model, sampling_follows_the_softmax_and_the_penalty_window) {
    tl_model *m = open_model(ctx);
    tl_session *s = prompted_session(m);
    const float *logits;
    size_t n;
    OK(tl_session_logits(s, &logits, &n));
    double *p = malloc(n * sizeof(double)), top = -INFINITY, sum = 0;
    const double t = 0.5;
    for (size_t i = 0; i < n; ++i) top = logits[i] > top ? logits[i] : top;
    for (size_t i = 0; i < n; ++i) sum += p[i] = exp((logits[i] - top) / t);
    int best[5];
    for (int r = 0; r < 5; ++r) { /* the five likeliest */
        best[r] = -1;
        for (size_t i = 0; i < n; ++i) {
            int taken = 0;
            for (int q = 0; q < r; ++q) taken |= best[q] == (int)i;
            if (!taken && (best[r] < 0 || p[i] > p[best[r]])) best[r] = (int)i;
        }
    }
    enum { DRAWS = 20000 };
    int *count = calloc(n, sizeof(int));
    tl_sampler plain = TL_SAMPLER_GREEDY;
    plain.temperature = (float)t, plain.seed = 12345;
    for (int d = 0; d < DRAWS; ++d) {
        int32_t token;
        OK(tl_session_sample(s, &plain, &token));
        cr_assert(token >= 0 && (size_t)token < n);
        count[token]++;
    }
    for (int r = 0; r < 5; ++r) {
        const double want = p[best[r]] / sum, got = (double)count[best[r]] / DRAWS;
        const double sigma = sqrt(want * (1 - want) / DRAWS);
        cr_assert(fabs(got - want) <= 5 * sigma + 1e-9, "token %d: drawn %.4f of the time, softmax says %.4f", best[r], got,
                  want);
    }
    tl_sampler cut = plain;
    cut.top_k = 2;
    for (int d = 0; d < 500; ++d) {
        int32_t token;
        OK(tl_session_sample(s, &cut, &token));
        cr_assert(token == best[0] || token == best[1], "top-k 2 drew %d", token);
    }
    /* Greedy tokens until the pick is a token already in the history, d tokens from its end:
     * then a huge penalty with a window of d - 1 leaves the pick as it is, a window of d, or -1
     * (all of it), turns it away. */
    tl_sampler greedy = TL_SAMPLER_GREEDY, window = TL_SAMPLER_GREEDY;
    window.repeat_penalty = 1e6f;
    int tested = 0;
    for (int step = 0; step < 60 && !tested; ++step) {
        int32_t pick, again;
        OK(tl_session_sample(s, &greedy, &pick));
        const int32_t *h;
        size_t hn;
        OK(tl_session_history(s, &h, &hn));
        int32_t d = 0;
        for (size_t i = hn; i-- > 0 && !d;)
            if (h[i] == pick) d = (int32_t)(hn - i);
        if (d) {
            window.repeat_last_n = d - 1;
            OK(tl_session_sample(s, &window, &again));
            cr_assert_eq(again, pick, "a window of %d stops short of the token %d back", d - 1, d);
            window.repeat_last_n = d;
            OK(tl_session_sample(s, &window, &again));
            cr_assert_neq(again, pick, "a window of %d reaches the token %d back", d, d);
            window.repeat_last_n = -1;
            OK(tl_session_sample(s, &window, &again));
            cr_assert_neq(again, pick, "a window of -1 reaches the whole history");
            tested = 1;
        }
        OK(tl_session_feed(s, &pick, 1));
    }
    cr_assert(tested, "sixty greedy tokens of a random model and none repeated");
    /* A penalty of 3 over the whole history, at temperature 1: the probability mass of the seen
     * tokens whose logits are negative (multiplied by 3) and of those positive (divided by 3), as
     * drawn, against the softmax of the logits so penalized here. */
    const int32_t *h;
    size_t hn;
    OK(tl_session_history(s, &h, &hn));
    OK(tl_session_logits(s, &logits, &n));
    char *seen = calloc(n, 1);
    for (size_t i = 0; i < hn; ++i) seen[h[i]] = 1;
    double mass[2] = {0, 0}, total = 0, penalized_top = -INFINITY;
    for (size_t i = 0; i < n; ++i) {
        const double l = seen[i] ? (logits[i] > 0 ? logits[i] / 3.0 : logits[i] * 3.0) : logits[i];
        penalized_top = l > penalized_top ? l : penalized_top;
    }
    for (size_t i = 0; i < n; ++i) {
        const double l = seen[i] ? (logits[i] > 0 ? logits[i] / 3.0 : logits[i] * 3.0) : logits[i];
        const double e = exp(l - penalized_top);
        total += e;
        if (seen[i]) mass[logits[i] > 0] += e;
    }
    tl_sampler penalized = TL_SAMPLER_GREEDY;
    penalized.temperature = 1.0f, penalized.repeat_penalty = 3.0f, penalized.repeat_last_n = -1, penalized.seed = 99;
    int drawn[2] = {0, 0};
    for (int d = 0; d < DRAWS; ++d) {
        int32_t token;
        OK(tl_session_sample(s, &penalized, &token));
        if (seen[token]) drawn[logits[token] > 0]++;
    }
    for (int sign = 0; sign < 2; ++sign) {
        const double want = mass[sign] / total, got = (double)drawn[sign] / DRAWS;
        const double sigma = sqrt(want * (1 - want) / DRAWS);
        cr_assert(fabs(got - want) <= 5 * sigma + 1e-9, "seen tokens of %s logits drawn %.4f of the time, want %.4f",
                  sign ? "positive" : "negative", got, want);
    }
    free(seen);
    free(p), free(count);
    tl_session_close(s);
    OK(tl_model_close(m));
}

/* A GGUF file is known by its magic whatever its name (a download saved as model.bin, a name in
 * capitals); another file is refused as neither kind, and a missing .gguf by the GGUF reader. */
Test(model, a_gguf_file_is_known_by_its_magic_not_its_name) {
    char renamed[512], junk[512];
    const char *names[2] = {"model.bin", "MODEL.GGUF.PART"};
    for (int i = 0; i < 2; ++i) {
        snprintf(renamed, sizeof renamed, "%s/%s", dir, names[i]);
        cr_assert_eq(write_tiny_llama(renamed, "llama", D), 0);
        tl_model *m;
        OK(tl_model_open(ctx, renamed, &m));
        tl_model_info info = TL_MODEL_INFO_INIT;
        OK(tl_model_info_get(m, &info));
        cr_assert_eq(info.vocab, VOCAB);
        cr_assert_not_null(tl_model_tokenizer(m));
        OK(tl_model_close(m));
    }
    snprintf(junk, sizeof junk, "%s/notes.txt", dir);
    FILE *f = fopen(junk, "wb");
    cr_assert_not_null(f);
    fputs("GGU", f); /* shorter than the magic */
    fclose(f);
    tl_model *m = NULL;
    FAILS_WITH(tl_model_open(ctx, junk, &m), TL_E_PARSE);
    cr_assert(strstr(tl_last_error(), "neither a GGUF file"), "%s", tl_last_error());
    cr_assert_null(m);
    snprintf(junk, sizeof junk, "%s/missing.gguf", dir);
    FAILS_WITH(tl_model_open(ctx, junk, &m), TL_E_IO);
    cr_assert(strstr(tl_last_error(), "missing.gguf") && !strstr(tl_last_error(), "config.json"), "%s", tl_last_error());
}

/* Session options and sampler values out of their ranges are refused by name, nothing opened
 * or drawn, and the session samples as before afterwards. */
Test(model, out_of_range_options_and_samplers_are_refused) {
    tl_model *m = open_model(ctx);
    tl_session *s = NULL;
    tl_session_options bad = TL_SESSION_OPTIONS_INIT;
    const tl_dtype refused[] = {TL_Q8_0, TL_F64};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; ++i) {
        bad.kv_dtype = refused[i];
        FAILS_WITH(tl_session_open(ctx, m, &bad, &s), TL_E_DTYPE);
        cr_assert(strstr(tl_last_error(), tl_dtype_name(refused[i])), "%s", tl_last_error());
        cr_assert_null(s);
    }
    /* kv_dtype 0 is the default, an f32 cache: the same logits bit for bit. */
    tl_session_options zero = TL_SESSION_OPTIONS_INIT;
    zero.kv_dtype = (tl_dtype)0;
    tl_session *by_default = prompted_session(m), *by_zero;
    OK(tl_session_open(ctx, m, &zero, &by_zero));
    OK(tl_session_feed(by_zero, kPrompt, 3));
    const float *want_logits, *got_logits;
    size_t want_n, got_n;
    OK(tl_session_logits(by_default, &want_logits, &want_n));
    OK(tl_session_logits(by_zero, &got_logits, &got_n));
    cr_assert(want_n == got_n && memcmp(want_logits, got_logits, got_n * sizeof(float)) == 0);
    tl_session_close(by_zero);
    tl_session_close(by_default);
    const struct {
        int32_t context_length, max_chunk, ambient;
    } out_of_range[] = {{-1, 0, 0}, {(1 << 20) + 1, 0, 0}, {0, -1, 0}, {0, 0, 2}, {0, 0, -1}};
    for (size_t i = 0; i < sizeof out_of_range / sizeof out_of_range[0]; ++i) {
        tl_session_options o = TL_SESSION_OPTIONS_INIT;
        o.context_length = out_of_range[i].context_length, o.max_chunk = out_of_range[i].max_chunk;
        o.ambient = out_of_range[i].ambient;
        FAILS_WITH(tl_session_open(ctx, m, &o, &s), TL_E_INVALID_ARGUMENT);
        char want[96];
        snprintf(want, sizeof want, "context_length %d, max_chunk %d, ambient %d", o.context_length, o.max_chunk, o.ambient);
        cr_assert(strstr(tl_last_error(), want), "%s", tl_last_error());
        cr_assert_null(s);
    }
    tl_session_options sized = TL_SESSION_OPTIONS_INIT;
    sized.context_length = 8;
    OK(tl_session_open(ctx, m, &sized, &s));
    cr_assert_eq(tl_session_context_length(s), 8);
    tl_session_close(s);
    s = prompted_session(m);
    cr_assert_eq(tl_session_context_length(s), 64, "the model's own length, under 4096");
    int32_t before, after;
    tl_sampler greedy = TL_SAMPLER_GREEDY;
    OK(tl_session_sample(s, &greedy, &before));
    for (int which = 0; which < 6; ++which) {
        tl_sampler p = TL_SAMPLER_INIT;
        if (which == 0) p.temperature = NAN;
        if (which == 1) p.top_p = NAN;
        if (which == 2) p.min_p = NAN;
        if (which == 3) p.repeat_penalty = 0;
        if (which == 4) p.repeat_penalty = -1;
        if (which == 5) p.repeat_penalty = NAN;
        int32_t token = -7;
        FAILS_WITH(tl_session_sample(s, &p, &token), TL_E_INVALID_ARGUMENT);
        cr_assert(strstr(tl_last_error(), "sampler:"), "%s", tl_last_error());
        cr_assert_eq(token, -7, "a refused draw wrote a token");
    }
    OK(tl_session_sample(s, &greedy, &after));
    cr_assert_eq(after, before);
    tl_session_close(s);
    OK(tl_model_close(m));
}

/* tl_model_options.repack: q4_0 and q8_0 weights also laid out sixteen rows at a time for decode,
 * and an f32 file's weights copied as stored, give the bits of the weights as the file holds
 * them, for a prompt of a few rows (the layout's path), one of nine (the panels'), and each
 * greedy token after; what was copied is reported (for the layouts none where this CPU has no
 * kernel for them, every whole sixteen of rows where it has; the f32 copies on every CPU);
 * repack values other than 0 and 1 are refused.  An MLP 64 wide, so every row is whole blocks. */
Test(model, repacked_weights_give_the_stored_bits) {
    char path[512];
    snprintf(path, sizeof path, "%s/ffn64.gguf", dir);
    cr_assert_eq(write_tiny_llama_shaped(path, "llama", NULL, 0.5f, 64), 0);
    const tl_dtype dts[3] = {TL_Q4_0, TL_Q8_0, (tl_dtype)0}; /* 0: the file's f32 */
    const int32_t nine[9] = {1, 260, 262, 261, 259, 263, 264, 265, 266};
    for (int d = 0; d < 3; ++d) {
        tl_model *m[2];
        tl_session *s[2];
        for (int repack = 0; repack < 2; ++repack) {
            tl_model_options o = TL_MODEL_OPTIONS_INIT;
            o.weights_dtype = dts[d], o.repack = repack;
            OK(tl_model_open_with(ctx, path, &o, &m[repack]));
            OK(tl_session_open(ctx, m[repack], NULL, &s[repack]));
        }
        /* Per layer 224 rows of 32 and 32 of 64 in whole sixteens, and 256 of the head's 271 (the
         * layouts, a block of 32 at a time); every row of f32 copied. */
        const uint64_t block = dts[d] == TL_Q4_0 ? 18 : 34, laid_out = (LAYERS * (224 + 32 * 2) + 256) * block;
        const uint64_t copied = (LAYERS * (224 * 32 + 32 * 64) + 271 * 32) * sizeof(float);
        tl_model_info info[2] = {TL_MODEL_INFO_INIT, TL_MODEL_INFO_INIT};
        OK(tl_model_info_get(m[0], &info[0]));
        OK(tl_model_info_get(m[1], &info[1]));
        cr_assert_eq(info[0].repacked_bytes, 0);
        if (dts[d])
            cr_assert(info[1].repacked_bytes == 0 || info[1].repacked_bytes == laid_out, "%s: %llu bytes repacked, not %llu",
                      tl_dtype_name(dts[d]), (unsigned long long)info[1].repacked_bytes, (unsigned long long)laid_out);
        else
            cr_assert_eq(info[1].repacked_bytes, copied, "f32: %llu bytes copied, not %llu",
                         (unsigned long long)info[1].repacked_bytes, (unsigned long long)copied);
        for (int step = 0; step < 8; ++step) {
            int32_t token[2];
            for (int i = 0; i < 2; ++i) {
                if (step == 0) OK(tl_session_feed(s[i], kPrompt, 3));
                else if (step == 4) OK(tl_session_feed(s[i], nine, 9));
                tl_sampler greedy = TL_SAMPLER_GREEDY;
                OK(tl_session_sample(s[i], &greedy, &token[i]));
                OK(tl_session_feed(s[i], &token[i], 1));
            }
            const float *l0, *l1;
            size_t n0, n1;
            OK(tl_session_logits(s[0], &l0, &n0));
            OK(tl_session_logits(s[1], &l1, &n1));
            cr_assert(n0 == n1 && !memcmp(l0, l1, n0 * sizeof(float)), "%s step %d: repacked logits differ",
                      dts[d] ? tl_dtype_name(dts[d]) : "f32", step);
            cr_assert_eq(token[0], token[1]);
        }
        for (int i = 0; i < 2; ++i) {
            tl_session_close(s[i]);
            OK(tl_model_close(m[i]));
        }
    }
    tl_model_options bad = TL_MODEL_OPTIONS_INIT;
    bad.repack = 2;
    tl_model *none = NULL;
    REFUSED_WITH(tl_model_open_with(ctx, path, &bad, &none), TL_E_INVALID_ARGUMENT, "repack 2 is neither 0 nor 1");
    cr_assert_null(none);
}

/* A feed refused mid-step (the step's scope could not grow) leaves the position as it was and no
 * logits; a rewind to that position computes them again, as the header says of every rewind,
 * the same bits as before the refused feed. */
Test(model, a_rewind_after_a_refused_feed_computes_the_logits) {
    counting_allocator counter = {0};
    tl_context *own = counted_context(&counter);
    tl_model *m = open_model(own);
    tl_session *s;
    OK(tl_session_open(own, m, NULL, &s));
    OK(tl_session_feed(s, kPrompt, 1));
    const float *logits;
    size_t n;
    OK(tl_session_logits(s, &logits, &n));
    float *first = malloc(n * sizeof(float));
    memcpy(first, logits, n * sizeof(float));
    int32_t many[40];
    for (int i = 0; i < 40; ++i) many[i] = 259 + i % WORDS;
    counter.fail_at = counter.allocs + 1; /* a chunk of 40 grows the step's scope */
    FAILS_WITH(tl_session_feed(s, many, 40), TL_E_OUT_OF_MEMORY);
    counter.fail_at = 0;
    cr_assert_eq(tl_session_position(s), 1);
    REFUSED_WITH(tl_session_logits(s, &logits, &n), TL_E_SHAPE, "its last feed was refused, so no logits (rewind to 1");
    OK(tl_session_rewind(s, 1));
    OK(tl_session_logits(s, &logits, &n));
    cr_assert(!memcmp(logits, first, n * sizeof(float)), "the logits computed again differ");
    free(first);
    tl_session_close(s);
    OK(tl_model_close(m));
    tl_context_destroy(own);
}
