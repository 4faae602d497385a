#include "llama_runner.h"

#include <stdio.h>
#include <string.h>

#include "check.h"
#include "meter.h"

/* The token's bytes through the stream (whole characters only) appended to the text. */
static void append_text(tl_tokenizer *tok, tl_text_stream *stream, int32_t id, mode_result *out, size_t *used) {
    const char *piece;
    size_t n, got;
    char chars[3 * (256 + 4) + 1];
    TL_CHECK(tl_token_piece(tok, id, 0, &piece, &n));
    if (n > 256) n = 256; /* no Llama piece is longer; a longer one is cut, not overrun */
    TL_CHECK(tl_text_stream_push(stream, piece, n, chars, sizeof chars, &got));
    if (*used + got < out->text_capacity) memcpy(out->text + *used, chars, got + 1), *used += got;
}

int llama_run_mode(const llama_run *r, memory_mode mode, mode_result *out) {
    memory_meter meter = {0, 0, 0};
    const tl_allocator alloc = {&meter, meter_alloc, meter_free};
    tl_context *ctx;
    TL_CHECK(tl_context_create(&alloc, &ctx));
    if (r->executor) TL_CHECK(tl_context_set_executor(ctx, r->executor));
    tl_model_options mo = TL_MODEL_OPTIONS_INIT;
    mo.weights_dtype = r->weights_dtype;
    mo.repack = r->repack;
    tl_model *model;
    TL_CHECK(tl_model_open_with(ctx, r->model_path, &mo, &model));
    tl_model_info info = TL_MODEL_INFO_INIT;
    TL_CHECK(tl_model_info_get(model, &info));
    if (mode == MODE_SCOPED && r->repack)
        printf("repacked for decode: %.1f MiB of weight rows%s\n", (double)info.repacked_bytes / (1 << 20),
               info.repacked_bytes ? "" : " (none: every projection converted at load already, and no kernel for their layout)");
    tl_session_options so = TL_SESSION_OPTIONS_INIT;
    so.context_length = r->tokens;
    so.kv_dtype = r->kv_dtype;
    so.max_chunk = r->prompt_len;
    so.ambient = mode == MODE_AMBIENT;
    tl_session *s;
    TL_CHECK(tl_session_open(ctx, model, &so, &s));
    tl_tokenizer *tok = tl_model_tokenizer(model);
    tl_text_stream stream = TL_TEXT_STREAM_INIT;
    const tl_sampler greedy = TL_SAMPLER_GREEDY;
    size_t text_used = 0;
    out->text[0] = 0;
    const int records = r->tokens - r->prompt_len + 1;
    int32_t token = 0;
    for (int k = 0; k < records; ++k) {
        const long calls = meter.calls;
        const size_t live = meter.live;
        meter.peak = live;
        const double t0 = now_ms();
        if (k == 0)
            TL_CHECK(tl_session_feed(s, r->prompt, (size_t)r->prompt_len));
        else
            TL_CHECK(tl_session_feed(s, &token, 1));
        TL_CHECK(tl_session_sample(s, &greedy, &token));
        step_record *rec = &out->steps[k];
        rec->ms = now_ms() - t0;
        rec->mallocs = meter.calls - calls;
        rec->token = token;
        const float *logits;
        size_t n;
        TL_CHECK(tl_session_logits(s, &logits, &n));
        memcpy(out->logits + (size_t)k * n, logits, n * sizeof(float));
        if (tok) append_text(tok, &stream, token, out, &text_used);
        tl_scope_stats st = TL_SCOPE_STATS_INIT;
        TL_CHECK(tl_session_step_stats(s, &st));
        rec->bytes_in_use = mode == MODE_SCOPED ? st.used_bytes : meter.peak - live;
        rec->slab_bytes = st.slab_bytes, rec->peak_bytes = st.peak_bytes, rec->grow_events = st.grow_events;
    }
    if (tok) {
        char rest[16];
        size_t got;
        TL_CHECK(tl_text_stream_finish(&stream, rest, sizeof rest, &got));
        if (text_used + got < out->text_capacity) memcpy(out->text + text_used, rest, got + 1);
    }
    tl_session_close(s);
    TL_CHECK(tl_model_close(model));
    tl_context_destroy(ctx);
    return records;
}

void llama_describe(const char *model_path, model_config *cfg) {
    tl_context *ctx;
    tl_model *model;
    TL_CHECK(tl_context_create(NULL, &ctx));
    if (tl_model_open(ctx, model_path, &model) != TL_OK) {
        fprintf(stderr, "decode: %s\n", tl_last_error());
        exit(1);
    }
    tl_model_info info = TL_MODEL_INFO_INIT;
    TL_CHECK(tl_model_info_get(model, &info));
    cfg->d_model = info.d_model, cfg->layers = info.layers, cfg->heads = info.heads, cfg->kv_heads = info.kv_heads;
    cfg->ffn = info.ffn, cfg->vocab = info.vocab;
    TL_CHECK(tl_model_close(model));
    tl_context_destroy(ctx);
}
