// The C API of models and sessions (tl_model.h).  A session's calls run the library's ops on the
// session's own context, so they take no context guard here (its ops take the session
// context's); they still keep C++ exceptions from crossing into C.
#include <cstring>

#include "boundary.h"
#include "core/context.h"
#include "llm/llama_model.h"
#include "llm/session.h"
#include "llm/text_stream.h"
#include "tensorlife/tl.h"

using tl::fail;
using tl::guarded;

namespace {

tl_status check_session(const tl_session *s) {
    return s ? TL_OK : fail(TL_E_INVALID_ARGUMENT, "session is NULL");
}

// The caller's sampler over the greedy defaults (struct_size checked first).
tl_status read_sampler(const tl_sampler &in, tl_sampler *out) {
    TL_TRY(tl::check_struct_size(in, "tl_sampler"));
    *out = TL_SAMPLER_GREEDY;
    tl::read_versioned(in, out);
    return TL_OK;
}

}  // namespace

extern "C" {

tl_status tl_model_open(tl_context *ctx, const char *path, tl_model **out) {
    return tl_model_open_with(ctx, path, nullptr, out);
}

tl_status tl_model_open_with(tl_context *ctx, const char *path, const tl_model_options *options, tl_model **out) {
    if (!ctx || !path || !out) return fail(TL_E_INVALID_ARGUMENT, "context, path or output is NULL");
    tl_model_options o = TL_MODEL_OPTIONS_INIT;
    if (options) {
        TL_TRY(tl::check_struct_size(*options, "tl_model_options"));
        tl::read_versioned(*options, &o);
    }
    if (o.repack != 0 && o.repack != 1) return fail(TL_E_INVALID_ARGUMENT, "tl_model_options: repack %d is neither 0 nor 1", o.repack);
    return guarded([&] { return tl::model_open(ctx, path, o, out); });
}

tl_status tl_model_open_memory(tl_context *ctx, const void *data, size_t size, tl_model **out) {
    if (!ctx || !data || !out) return fail(TL_E_INVALID_ARGUMENT, "context, data or output is NULL");
    return guarded([&] { return tl::model_open_memory(ctx, data, size, out); });
}

tl_status tl_model_close(tl_model *m) { return m ? guarded([&] { return tl::model_close(m); }) : TL_OK; }

tl_tokenizer *tl_model_tokenizer(const tl_model *m) { return m ? m->tokenizer : nullptr; }

tl_status tl_model_info_get(const tl_model *m, tl_model_info *out) {
    if (!m || !out) return fail(TL_E_INVALID_ARGUMENT, "model or output is NULL");
    TL_TRY(tl::check_struct_size(*out, "tl_model_info"));
    const tl::LlamaConfig &c = m->cfg;
    tl_model_info info = {sizeof info, c.vocab, c.d_model, c.layers, c.heads, c.kv_heads, c.ffn, c.context_length,
                          m->weights_dtype, m->repacked_bytes};
    tl::write_versioned(info, out);
    return TL_OK;
}

tl_status tl_session_open(tl_context *ctx, tl_model *m, const tl_session_options *options, tl_session **out) {
    if (!ctx || !m || !out) return fail(TL_E_INVALID_ARGUMENT, "context, model or output is NULL");
    tl_session_options o = TL_SESSION_OPTIONS_INIT;
    if (options) {
        TL_TRY(tl::check_struct_size(*options, "tl_session_options"));
        tl::read_versioned(*options, &o);
    }
    return guarded([&] { return tl::session_open(ctx, m, o, out); });
}

void tl_session_close(tl_session *s) {
    if (s) tl::session_close(s);
}

int32_t tl_session_position(const tl_session *s) { return s ? int32_t(s->history.size()) : 0; }

int32_t tl_session_context_length(const tl_session *s) { return s ? s->context_length : 0; }

tl_status tl_session_step_stats(const tl_session *s, tl_scope_stats *out) {
    TL_TRY(check_session(s));
    if (!out) return fail(TL_E_INVALID_ARGUMENT, "output pointer is NULL");
    TL_TRY(tl::check_struct_size(*out, "tl_scope_stats"));
    tl::write_versioned(s->last_step, out);
    return TL_OK;
}

tl_status tl_session_history(const tl_session *s, const int32_t **ids, size_t *n) {
    TL_TRY(check_session(s));
    if (!ids || !n) return fail(TL_E_INVALID_ARGUMENT, "output pointer is NULL");
    *ids = s->history.data(), *n = s->history.size();
    return TL_OK;
}

tl_status tl_session_feed(tl_session *s, const int32_t *ids, size_t n) {
    TL_TRY(check_session(s));
    if (!ids && n) return fail(TL_E_INVALID_ARGUMENT, "ids is NULL");
    return guarded([&] { return tl::session_feed(s, ids, n); });
}

tl_status tl_session_feed_text(tl_session *s, const char *text, size_t length, unsigned flags) {
    TL_TRY(check_session(s));
    if (!text && length) return fail(TL_E_INVALID_ARGUMENT, "text is NULL");
    if (!s->model->tokenizer) return fail(TL_E_NOT_FOUND, "session: the model's file carries no vocabulary");
    return guarded([&] {
        TL_TRY(tl::tokenize(*s->model->tokenizer, std::string_view(text ? text : "", length), flags, s->tokens));
        return tl::session_feed(s, s->tokens.ids.data(), s->tokens.ids.size());
    });
}

tl_status tl_session_logits(const tl_session *s, const float **logits, size_t *n) {
    TL_TRY(check_session(s));
    if (!logits || !n) return fail(TL_E_INVALID_ARGUMENT, "output pointer is NULL");
    if (!s->have_logits) return tl::no_logits(s);
    *logits = s->logits.data(), *n = s->logits.size();
    return TL_OK;
}

tl_status tl_session_rewind(tl_session *s, int32_t keep) {
    TL_TRY(check_session(s));
    return guarded([&] { return tl::session_rewind(s, keep); });
}

tl_status tl_session_sample(tl_session *s, const tl_sampler *sampler, int32_t *token) {
    TL_TRY(check_session(s));
    if (!sampler || !token) return fail(TL_E_INVALID_ARGUMENT, "sampler or token is NULL");
    tl_sampler p;
    TL_TRY(read_sampler(*sampler, &p));
    return guarded([&] { return tl::session_sample(s, p, token); });
}

tl_status tl_session_generate(tl_session *s, const tl_sampler *sampler, int32_t *token, int *done, char *text,
                              size_t capacity, size_t *length) {
    TL_TRY(check_session(s));
    if (!sampler || !token || !done || !text || !length)
        return fail(TL_E_INVALID_ARGUMENT, "sampler, token, done, text or length is NULL");
    if (!s->model->tokenizer) return fail(TL_E_NOT_FOUND, "session: the model's file carries no vocabulary");
    tl_sampler p;
    TL_TRY(read_sampler(*sampler, &p));
    return guarded([&] {
        const uint64_t draws = s->draws;
        int32_t id;
        TL_TRY(tl::session_sample(s, p, &id));
        const tl_tokenizer &t = *s->model->tokenizer;
        const bool end = t.vocab.is_end(id);  // not fed: no text, but still its NUL
        const std::string_view piece = end ? std::string_view() : tl::token_piece(t, id, false);
        tl_text_stream next;
        const size_t need = end ? 0 : tl::text_stream_step(s->stream, piece.data(), piece.size(), false, nullptr, &next);
        if (need >= capacity) {
            s->draws = draws;
            return fail(TL_E_INVALID_ARGUMENT, "generate: %zu bytes of text and its NUL, room for %zu", need + 1, capacity);
        }
        if (end) {
            *token = id, *done = 1, *length = 0;
            text[0] = 0;
            return TL_OK;
        }
        const tl_status st = tl::session_feed(s, &id, 1);
        if (st != TL_OK) {
            s->draws = draws;
            return st;
        }
        tl::text_stream_step(s->stream, piece.data(), piece.size(), false, text, &s->stream);
        text[need] = 0;
        *token = id, *done = 0, *length = need;
        return TL_OK;
    });
}

}  // extern "C"
