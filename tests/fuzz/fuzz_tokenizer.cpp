// libFuzzer harness for the tokenizers: the input's first byte picks a vocabulary and the flags,
// the rest is the text.  Vocabularies: the GGUF files TL_FUZZ_VOCAB names (':'-separated; the
// fuzz stage passes LLaMA 2's and Llama 3's), else the tiny SentencePiece one of
// tests/tiny_llama.h.  Text that is valid UTF-8 must tokenize (ids in range), detokenize, and
// stream back as valid UTF-8; invalid UTF-8 must be TL_E_INVALID_ARGUMENT.  Never a crash, an
// out-of-bounds read (ASan) or a leak.
#include <tensorlife/tl.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

#include "../tiny_llama.h"
#include "usage.h"

static std::vector<tl_tokenizer *> tokenizers;
static tl_context *ctx;

static void open_vocab(const char *path) {
    tl_gguf_file *g;
    tl_tokenizer *t;
    if (tl_gguf_open(ctx, path, &g) != TL_OK || tl_tokenizer_open(ctx, g, &t) != TL_OK) {
        std::fprintf(stderr, "fuzz_tokenizer: %s: %s\n", path, tl_last_error());
        std::abort();
    }
    tl_gguf_close(g);
    tokenizers.push_back(t);
}

// At exit: the tokenizers and the context given back (LeakSanitizer reports what is not).
static void close_all() {
    for (tl_tokenizer *t : tokenizers) tl_tokenizer_close(t);
    tokenizers.clear();
    tl_context_destroy(ctx);
}

extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv) {
    answer_help(*argc, *argv,
                "usage: fuzz_tokenizer [libFuzzer flags] [corpus dirs or inputs]\n"
                "Text from the input bytes tokenized, detokenized and streamed with the vocabularies of\n"
                "the GGUF files TL_FUZZ_VOCAB names (':'-separated), else a tiny SentencePiece one.\n");
    if (tl_context_create(nullptr, &ctx) != TL_OK) std::abort();
    std::atexit(close_all);
    const char *list = std::getenv("TL_FUZZ_VOCAB");
    if (list && *list) {
        std::string all(list);
        for (size_t at = 0; at <= all.size();) {
            const size_t end = all.find(':', at);
            const std::string path = all.substr(at, end == std::string::npos ? std::string::npos : end - at);
            if (!path.empty()) open_vocab(path.c_str());
            if (end == std::string::npos) break;
            at = end + 1;
        }
    } else {
        char path[64];
        std::snprintf(path, sizeof path, "/tmp/tl-fuzz-vocab-%d.gguf", int(getpid()));
        if (write_tiny_llama(path, "llama", 32)) std::abort();
        open_vocab(path);
        std::remove(path);
    }
    return 0;
}

static bool valid_utf8(const unsigned char *p, size_t n) {
    for (size_t i = 0; i < n;) {
        const unsigned c = p[i];
        size_t len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
        if (!len || n - i < len) return false;
        uint32_t cp = len == 1 ? c : c & (0x7F >> len);
        for (size_t k = 1; k < len; ++k) {
            if ((p[i + k] & 0xC0) != 0x80) return false;
            cp = cp << 6 | (p[i + k] & 0x3F);
        }
        static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < least[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
        i += len;
    }
    return true;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    tl_tokenizer *t = tokenizers[data[0] % tokenizers.size()];
    const unsigned flags = (data[0] >> 4) & 3;
    const char *text = reinterpret_cast<const char *>(data + 1);
    const size_t n = size - 1;
    std::vector<int32_t> ids(3 * n + 4);
    size_t count = 0;
    const tl_status st = tl_tokenize(t, text, n, flags, ids.data(), ids.size(), &count);
    if (!valid_utf8(data + 1, n)) {
        if (st != TL_E_INVALID_ARGUMENT) std::abort();
        return 0;
    }
    if (st != TL_OK) {
        std::fprintf(stderr, "tokenize: %s\n", tl_last_error());
        std::abort();
    }
    const int32_t vocab = tl_tokenizer_vocab_size(t);
    for (size_t i = 0; i < count; ++i)
        if (ids[i] < 0 || ids[i] >= vocab) std::abort();
    size_t length;
    if (tl_detokenize(t, ids.data(), count, 0, nullptr, 0, &length) != TL_OK) std::abort();
    std::vector<char> back(length + 1);
    if (tl_detokenize(t, ids.data(), count, TL_DETOKENIZE_UNPARSE_SPECIAL, back.data(), back.size(), &length) != TL_OK &&
        tl_detokenize(t, ids.data(), count, 0, back.data(), back.size(), &length) != TL_OK)
        std::abort();
    tl_text_stream s = TL_TEXT_STREAM_INIT;
    std::string streamed;
    for (size_t i = 0; i < count; ++i) {
        const char *piece;
        size_t len;
        if (tl_token_piece(t, ids[i], 0, &piece, &len) != TL_OK) std::abort();
        std::vector<char> out(3 * (len + 4) + 1);
        size_t written;
        if (tl_text_stream_push(&s, piece, len, out.data(), out.size(), &written) != TL_OK) std::abort();
        streamed.append(out.data(), written);
    }
    char tail[16];
    size_t written;
    if (tl_text_stream_finish(&s, tail, sizeof tail, &written) != TL_OK) std::abort();
    streamed.append(tail, written);
    if (!valid_utf8(reinterpret_cast<const unsigned char *>(streamed.data()), streamed.size())) std::abort();
    return 0;
}
