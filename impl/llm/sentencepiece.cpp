// SentencePiece-style tokenizing as llama.cpp's llm_tokenizer_spm does it: start from UTF-8
// characters, repeatedly merge the adjacent pair whose joined text is the highest-scoring token
// (leftmost on a tie), then emit each symbol's token, or its bytes as <0xXX> tokens.
#include <algorithm>

#include "core/error.h"
#include "llm/tokenizer_algorithms.h"

namespace tl {

namespace {

using Symbol = TokenizeScratch::Symbol;
using Bigram = TokenizeScratch::Bigram;

bool lower_priority(const Bigram &a, const Bigram &b) {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
}

void try_pair(const Vocabulary &v, TokenizeScratch &s, int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const Symbol &l = s.symbols[size_t(left)], &r = s.symbols[size_t(right)];
    const uint32_t length = l.length + r.length;
    const int32_t id = v.find(std::string_view(&s.text[l.offset], length));
    if (id < 0) return;
    s.heap.push_back({left, right, v.scores[size_t(id)], 0, length});
    std::push_heap(s.heap.begin(), s.heap.end(), lower_priority);
}

size_t utf8_length(unsigned char c) { return c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4; }

}  // namespace

tl_status sentencepiece_run(const Vocabulary &v, std::string_view run, bool space_first, TokenizeScratch &s) {
    static const char kSpace[] = "\xe2\x96\x81";  // U+2581, SentencePiece's visible space
    s.text.clear();
    if (space_first) s.text.insert(s.text.end(), kSpace, kSpace + 3);
    for (char c : run) {
        if (c == ' ')
            s.text.insert(s.text.end(), kSpace, kSpace + 3);
        else
            s.text.push_back(c);
    }
    s.symbols.clear();
    s.heap.clear();
    const uint32_t n = uint32_t(s.text.size());
    for (uint32_t at = 0; at < n;) {
        const uint32_t len = uint32_t(std::min<size_t>(utf8_length(uint8_t(s.text[at])), n - at));
        const int32_t index = int32_t(s.symbols.size());
        s.symbols.push_back({index - 1, at + len == n ? -1 : index + 1, at, len});
        at += len;
    }
    merge_pairs(s, lower_priority, [&](int32_t left, int32_t right) { try_pair(v, s, left, right); });
    for (int32_t i = s.symbols.empty() ? -1 : 0; i != -1; i = s.symbols[size_t(i)].next) {
        const Symbol &sym = s.symbols[size_t(i)];
        const int32_t id = v.find(std::string_view(&s.text[sym.offset], sym.length));
        if (id >= 0) {
            s.ids.push_back(id);
            continue;
        }
        for (uint32_t k = 0; k < sym.length; ++k) {
            const uint8_t byte = uint8_t(s.text[sym.offset + k]);
            if (v.byte_token[byte] < 0)
                return fail(TL_E_INVALID_ARGUMENT,
                            "tokenize: the vocabulary has neither a token for a character of the text nor <0x%02X>",
                            unsigned(byte));
            s.ids.push_back(v.byte_token[byte]);
        }
    }
    return TL_OK;
}

}  // namespace tl
