// A BPE vocabulary's pre-tokenizer: the text cut into words by the regular expressions llama.cpp
// uses for the name in tokenizer.ggml.pre, each applied to the pieces the one before left (a
// match and the text between matches each a piece).  PCRE2 (UTF, Unicode properties, JIT)
// supplies the character classes; its memory comes from the tokenizer's allocator.
#pragma once
#include <cstddef>
#include <string_view>

#include "core/memory.h"
#include "llm/vocabulary.h"

struct pcre2_real_code_8;
struct pcre2_real_match_data_8;
struct pcre2_real_general_context_8;

namespace tl {

struct Piece {
    size_t offset, length;
};

// Per caller: PCRE2's match data, made on first use.
struct SplitScratch {
    ~SplitScratch();
    pcre2_real_match_data_8 *match = nullptr;
};

class PreTokenizerRegex {
public:
    explicit PreTokenizerRegex(Memory *m);
    ~PreTokenizerRegex();
    PreTokenizerRegex(const PreTokenizerRegex &) = delete;
    PreTokenizerRegex &operator=(const PreTokenizerRegex &) = delete;

    tl_status compile(PreTokenizer which);
    // text (valid UTF-8) as pieces, in order, covering it; `work` is the second buffer.
    tl_status split(std::string_view text, SplitScratch &scratch, AllocVector<Piece> &out, AllocVector<Piece> &work) const;

private:
    Memory *memory_;
    pcre2_real_general_context_8 *general_ = nullptr;
    pcre2_real_code_8 *codes_[4] = {};
    int count_ = 0;
};

}  // namespace tl
