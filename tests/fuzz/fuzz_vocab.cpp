// libFuzzer harness for vocabulary metadata: the input is a whole GGUF file (seeded with small
// SentencePiece and BPE vocabularies).  Opening a tokenizer on it must either refuse with a
// status (TL_E_PARSE, TL_E_NOT_FOUND, ...) or give one that tokenizes fixed texts, detokenizes
// ids drawn from the input (in range and not), and hands out every piece; nothing may read out
// of bounds (ASan), leak or abort.
#include <tensorlife/tl.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>
#include <vector>

#include "usage.h"

extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv) {
    answer_help(*argc, *argv,
                "usage: fuzz_vocab [libFuzzer flags] [corpus dirs or inputs]\n"
                "GGUF files from the input bytes, a tokenizer opened on each, texts and ids through it.\n");
    return 0;
}

static void check(tl_status s, const char *what) {
    if (s == TL_OK || s == TL_E_PARSE || s == TL_E_NOT_FOUND || s == TL_E_INVALID_ARGUMENT || s == TL_E_OUT_OF_MEMORY ||
        s == TL_E_DTYPE || s == TL_E_SHAPE)
        return;
    std::fprintf(stderr, "%s gave %s: %s\n", what, tl_status_string(s), tl_last_error());
    std::abort();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static char path[64];
    if (!path[0]) std::snprintf(path, sizeof path, "/tmp/tl-fuzz-vocab-%d", int(getpid()));
    FILE *f = std::fopen(path, "wb");
    if (!f) return 0;
    std::fwrite(data, 1, size, f);
    std::fclose(f);
    tl_context *ctx;
    if (tl_context_create(nullptr, &ctx) != TL_OK) std::abort();
    tl_gguf_file *g = nullptr;
    tl_tokenizer *t = nullptr;
    if (tl_gguf_open(ctx, path, &g) == TL_OK) {
        const tl_status st = tl_tokenizer_open(ctx, g, &t);
        check(st, "tokenizer_open");
        tl_gguf_close(g);
    }
    if (t) {
        static const char *const texts[] = {"Hello world", " a  b\tc\n", "<s>abc</s>", "\xc3\xa9t\xc3\xa9 \xf0\x9f\x98\x80",
                                            "<|begin_of_text|>x<|eot_id|>", ""};
        const int32_t vocab = tl_tokenizer_vocab_size(t);
        for (const char *text : texts)
            for (unsigned flags = 0; flags < 4; ++flags) {
                int32_t ids[256];
                size_t n;
                const tl_status st = tl_tokenize(t, text, std::strlen(text), flags, ids, 256, &n);
                check(st, "tokenize");
                if (st != TL_OK) continue;
                for (size_t i = 0; i < n; ++i)
                    if (ids[i] < 0 || ids[i] >= vocab) std::abort();
                char out[4096];
                size_t len;
                check(tl_detokenize(t, ids, n, flags, out, sizeof out, &len), "detokenize");
            }
        std::vector<int32_t> ids;
        for (size_t i = 0; i + 4 <= size && ids.size() < 64; i += 4) {
            int32_t v;
            std::memcpy(&v, data + i, 4);
            ids.push_back(v % (vocab + 2));
        }
        size_t len;
        check(tl_detokenize(t, ids.data(), ids.size(), 0, nullptr, 0, &len), "detokenize (ids from the input)");
        for (int32_t id = 0; id < vocab && id < 4096; ++id) {
            const char *piece;
            if (tl_token_piece(t, id, 1, &piece, &len) != TL_OK) std::abort();
            if (len) (void)*(volatile const char *)(piece + len - 1);
        }
        tl_tokenizer_close(t);
    }
    tl_context_destroy(ctx);
    return 0;
}
