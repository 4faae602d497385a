// Text to token ids and back, as llama.cpp does it for the vocabularies Llama models ship:
// SentencePiece-style (scores, byte fallback, the space prefix) and byte-level BPE (ranked
// merges after a pre-tokenizer's regular expressions, Unicode classes from PCRE2).  Special
// tokens are cut out of the text first (control tokens only when asked).  Text must be valid
// UTF-8; pieces out are bytes, which a TextStream turns into whole characters.
#pragma once
#include <cstdint>
#include <mutex>
#include <string_view>

#include "llm/pretokenizer.h"
#include "llm/vocabulary.h"

namespace tl {

// The working memory of one tokenization, grown to the largest text seen and then reused, so
// that tokenizing again allocates nothing.
struct TokenizeScratch {
    explicit TokenizeScratch(Memory *m);
    struct Fragment {
        int32_t token;  // -1: text[offset, offset + length) of the input
        size_t offset, length;
    };
    struct Symbol {
        int32_t prev, next;
        uint32_t offset, length;  // in `text`
    };
    struct Bigram {
        int32_t left, right;
        float score;   // SentencePiece: higher first
        int32_t rank;  // BPE: lower first
        uint32_t length;
    };
    AllocVector<Fragment> fragments, next_fragments;
    AllocVector<char> text;
    AllocVector<Symbol> symbols;
    AllocVector<Bigram> heap;
    AllocVector<Piece> words, word_work;
    AllocVector<int32_t> ids;
    SplitScratch split;
};

enum TokenizeFlags : unsigned { kAddSpecial = 1, kParseSpecial = 2 };

}  // namespace tl

struct tl_tokenizer {
    explicit tl_tokenizer(const tl::Memory &m);
    ~tl_tokenizer();
    tl::Memory memory;
    tl::Vocabulary vocab;
    tl::PreTokenizerRegex regex;
    tl::AllocVector<char> pieces;        // each token's bytes (special tokens' text), back to back
    tl::AllocVector<uint32_t> piece_starts;
    std::mutex lock;  // guards scratch for tl_tokenize's callers, who may share one tokenizer
    tl::TokenizeScratch scratch;
};

namespace tl {

tl_status tokenizer_open(const tl_gguf_file &f, const Memory &memory, tl_tokenizer **out);
void tokenizer_close(tl_tokenizer *t);
// Token ids of text (valid UTF-8) into scratch.ids.
tl_status tokenize(const tl_tokenizer &t, std::string_view text, unsigned flags, TokenizeScratch &scratch);
// The bytes a token stands for (llama.cpp's token_to_piece): empty for control and unknown
// tokens unless `special`.  Valid while t lives.
std::string_view token_piece(const tl_tokenizer &t, int32_t id, bool special);
// Text of ids as llama.cpp's detokenize makes it; the length needed is returned even when
// `capacity` is short (nothing is written past it).
size_t detokenize(const tl_tokenizer &t, const int32_t *ids, size_t n, bool remove_special, bool unparse_special,
                  char *out, size_t capacity);
// The first invalid byte's offset in s, or npos.
size_t invalid_utf8_at(std::string_view s);

}  // namespace tl
