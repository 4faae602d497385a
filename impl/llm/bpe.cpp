// Byte-level BPE as llama.cpp's llm_tokenizer_bpe does it for one pre-tokenized word: the word's
// bytes as GPT-2's characters; the whole word's token when it is one and the vocabulary ignores
// merges (Llama 3); else from single characters, repeatedly the adjacent pair of lowest merge
// rank (leftmost on a tie) joined, then each symbol's token (or the single bytes that are tokens).
#include <algorithm>

#include "llm/byte_level.h"
#include "llm/tokenizer_algorithms.h"

namespace tl {

namespace {

using Symbol = TokenizeScratch::Symbol;
using Bigram = TokenizeScratch::Bigram;

bool lower_priority(const Bigram &a, const Bigram &b) { return a.rank > b.rank || (a.rank == b.rank && a.left > b.left); }

int32_t id_of(const Vocabulary &v, const TokenizeScratch &s, const Symbol &sym) {
    return v.find(std::string_view(&s.text[sym.offset], sym.length));
}

void try_pair(const Vocabulary &v, TokenizeScratch &s, int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const Symbol &l = s.symbols[size_t(left)], &r = s.symbols[size_t(right)];
    const int32_t a = id_of(v, s, l), b = id_of(v, s, r);
    if (a < 0 || b < 0) return;  // merges name tokens only (checked at load)
    const int32_t rank = v.rank(a, b);
    if (rank < 0) return;
    s.heap.push_back({left, right, 0.0f, rank, l.length + r.length});
    std::push_heap(s.heap.begin(), s.heap.end(), lower_priority);
}

}  // namespace

void bpe_word(const Vocabulary &v, std::string_view word, TokenizeScratch &s) {
    s.text.clear();
    s.symbols.clear();
    s.heap.clear();
    for (char c : word) {
        const uint8_t b = uint8_t(c);
        const int32_t index = int32_t(s.symbols.size());
        s.symbols.push_back({index - 1, index + 1, uint32_t(s.text.size()), kByteLevel.length[b]});
        s.text.insert(s.text.end(), kByteLevel.utf8[b], kByteLevel.utf8[b] + kByteLevel.length[b]);
    }
    if (s.symbols.empty()) return;
    s.symbols.back().next = -1;
    if (v.ignore_merges) {
        const int32_t whole = v.find(std::string_view(s.text.data(), s.text.size()));
        if (whole >= 0) {
            s.ids.push_back(whole);
            return;
        }
    }
    merge_pairs(s, lower_priority, [&](int32_t left, int32_t right) { try_pair(v, s, left, right); });
    for (int32_t i = 0; i != -1; i = s.symbols[size_t(i)].next) {
        const Symbol &sym = s.symbols[size_t(i)];
        const int32_t id = id_of(v, s, sym);
        if (id >= 0) {
            s.ids.push_back(id);
            continue;
        }
        for (uint32_t k = 0; k < sym.length; ++k) {  // llama.cpp's fallback: single bytes that are tokens
            const int32_t byte = v.find(std::string_view(&s.text[sym.offset + k], 1));
            if (byte >= 0) s.ids.push_back(byte);
        }
    }
}

}  // namespace tl
