// The C API of tokenizers and text streams (tl_text.h).
#include <cstring>

#include "boundary.h"
#include "io/gguf.h"
#include "llm/text_stream.h"
#include "llm/tokenizer.h"
#include "tensorlife/tl.h"

using tl::fail;
using tl::guarded;

namespace {

tl_status check_id(const tl_tokenizer *t, int32_t id) {
    if (!t) return fail(TL_E_INVALID_ARGUMENT, "tokenizer is NULL");
    if (id < 0 || id >= t->vocab.size())
        return fail(TL_E_INVALID_ARGUMENT, "token id %d is not in the vocabulary (0..%d)", id, t->vocab.size() - 1);
    return TL_OK;
}

tl_status stream(tl_text_stream *s, const char *bytes, size_t n, bool finish, char *out, size_t capacity,
                 size_t *length) {
    if (!s || !out || !length || (!bytes && n)) return fail(TL_E_INVALID_ARGUMENT, "stream, text or output is NULL");
    tl_text_stream next;
    const size_t need = tl::text_stream_step(*s, bytes, n, finish, nullptr, &next);
    if (need >= capacity)
        return fail(TL_E_INVALID_ARGUMENT, "text stream: %zu bytes of text and its NUL, room for %zu", need + 1, capacity);
    tl::text_stream_step(*s, bytes, n, finish, out, &next);
    out[need] = 0;
    *s = next;
    *length = need;
    return TL_OK;
}

}  // namespace

extern "C" {

tl_status tl_tokenizer_open(tl_context *ctx, const tl_gguf_file *f, tl_tokenizer **out) {
    return tl::with_context(ctx, out, [&](tl_context &c) {
        if (!f) return fail(TL_E_INVALID_ARGUMENT, "GGUF file is NULL");
        return tl::tokenizer_open(*f, c.memory, out);
    });
}

void tl_tokenizer_close(tl_tokenizer *t) {
    if (t) tl::tokenizer_close(t);
}

int32_t tl_tokenizer_vocab_size(const tl_tokenizer *t) { return t ? t->vocab.size() : 0; }

int32_t tl_tokenizer_special(const tl_tokenizer *t, tl_special_token which) {
    if (!t) return -1;
    switch (which) {
        case TL_TOKEN_BOS: return t->vocab.bos;
        case TL_TOKEN_EOS: return t->vocab.eos;
        case TL_TOKEN_EOT: return t->vocab.eot;
        case TL_TOKEN_UNK: return t->vocab.unk;
        default: return -1;
    }
}

int tl_tokenizer_is_end(const tl_tokenizer *t, int32_t id) { return t && t->vocab.is_end(id) ? 1 : 0; }

tl_status tl_tokenize(tl_tokenizer *t, const char *text, size_t length, unsigned flags, int32_t *ids,
                      size_t capacity, size_t *count) {
    return guarded([&] {
        if (!t || !count || (!text && length)) return fail(TL_E_INVALID_ARGUMENT, "tokenizer, text or count is NULL");
        if (!ids && capacity) return fail(TL_E_INVALID_ARGUMENT, "ids is NULL with a capacity of %zu", capacity);
        std::lock_guard<std::mutex> hold(t->lock);
        TL_TRY(tl::tokenize(*t, std::string_view(text ? text : "", length), flags, t->scratch));
        const size_t n = t->scratch.ids.size();
        if (ids && n > capacity) return fail(TL_E_INVALID_ARGUMENT, "tokenize: the text makes %zu ids, room for %zu", n, capacity);
        if (ids && n) std::memcpy(ids, t->scratch.ids.data(), n * sizeof(int32_t));
        *count = n;
        return TL_OK;
    });
}

tl_status tl_token_piece(const tl_tokenizer *t, int32_t id, int special, const char **piece, size_t *length) {
    TL_TRY(check_id(t, id));
    if (!piece || !length) return fail(TL_E_INVALID_ARGUMENT, "output pointer is NULL");
    const std::string_view p = tl::token_piece(*t, id, special != 0);
    *piece = p.data(), *length = p.size();
    return TL_OK;
}

tl_status tl_token_text(const tl_tokenizer *t, int32_t id, const char **text, size_t *length) {
    TL_TRY(check_id(t, id));
    if (!text || !length) return fail(TL_E_INVALID_ARGUMENT, "output pointer is NULL");
    const std::string_view p = t->vocab.token(id);
    *text = p.data(), *length = p.size();
    return TL_OK;
}

tl_status tl_detokenize(tl_tokenizer *t, const int32_t *ids, size_t n, unsigned flags, char *text, size_t capacity,
                        size_t *length) {
    return guarded([&] {
        if (!t || !length || (!ids && n)) return fail(TL_E_INVALID_ARGUMENT, "tokenizer, ids or length is NULL");
        if (!text && capacity) return fail(TL_E_INVALID_ARGUMENT, "text is NULL with a capacity of %zu", capacity);
        for (size_t i = 0; i < n; ++i)
            if (ids[i] < 0 || ids[i] >= t->vocab.size())
                return fail(TL_E_INVALID_ARGUMENT, "detokenize: id %zu is %d, not in the vocabulary (0..%d)", i, ids[i],
                            t->vocab.size() - 1);
        const bool remove = flags & TL_DETOKENIZE_REMOVE_SPECIAL, unparse = flags & TL_DETOKENIZE_UNPARSE_SPECIAL;
        const size_t bound = tl::detokenize(*t, ids, n, remove, unparse, nullptr, 0);
        if (!text) {
            *length = bound;
            return TL_OK;
        }
        if (bound >= capacity) {
            // Cleaning may shorten it: measure in the tokenizer's scratch before refusing.
            std::lock_guard<std::mutex> hold(t->lock);
            t->scratch.text.resize(bound);
            const size_t exact = tl::detokenize(*t, ids, n, remove, unparse, t->scratch.text.data(), bound);
            if (exact >= capacity)
                return fail(TL_E_INVALID_ARGUMENT, "detokenize: %zu bytes of text and its NUL, room for %zu", exact + 1,
                            capacity);
            std::memcpy(text, t->scratch.text.data(), exact);  // exact >= 1: an empty text fits all but capacity 0
            text[exact] = 0;
            *length = exact;
            return TL_OK;
        }
        const size_t written = tl::detokenize(*t, ids, n, remove, unparse, text, capacity);
        text[written] = 0;
        *length = written;
        return TL_OK;
    });
}

tl_status tl_text_stream_push(tl_text_stream *s, const char *bytes, size_t n, char *out, size_t capacity,
                              size_t *length) {
    return stream(s, bytes, n, false, out, capacity, length);
}

tl_status tl_text_stream_finish(tl_text_stream *s, char *out, size_t capacity, size_t *length) {
    return stream(s, nullptr, 0, true, out, capacity, length);
}

}  // extern "C"
