// The vocabulary-specific steps of tokenizer.cpp, each in its own file.
#pragma once
#include <algorithm>
#include <string_view>

#include "llm/tokenizer.h"

namespace tl {

// The merge loop both algorithms share, over s.symbols from pairs of neighbours: the best pair
// by lower_priority's order is joined unless either side has joined another since, and the new
// symbol's pairs with its neighbours are offered (try_pair(left, right) pushes one onto s.heap
// when the vocabulary has it).
template <class Order, class TryPair>
void merge_pairs(TokenizeScratch &s, Order lower_priority, TryPair try_pair) {
    using Symbol = TokenizeScratch::Symbol;
    for (int32_t i = 1; i < int32_t(s.symbols.size()); ++i) try_pair(i - 1, i);
    while (!s.heap.empty()) {
        std::pop_heap(s.heap.begin(), s.heap.end(), lower_priority);
        const TokenizeScratch::Bigram b = s.heap.back();
        s.heap.pop_back();
        Symbol &l = s.symbols[size_t(b.left)], &r = s.symbols[size_t(b.right)];
        if (l.length == 0 || r.length == 0 || l.length + r.length != b.length) continue;  // joined since
        l.length += r.length;
        r.length = 0;
        l.next = r.next;
        if (r.next >= 0) s.symbols[size_t(r.next)].prev = b.left;
        try_pair(l.prev, b.left);
        try_pair(b.left, l.next);
    }
}

// sentencepiece.cpp: one run of text (no special tokens in it) appended to s.ids: ' ' as U+2581
// (and one before the run when `space_first`), characters merged by score, then byte fallback.
tl_status sentencepiece_run(const Vocabulary &v, std::string_view run, bool space_first, TokenizeScratch &s);
// bpe.cpp: one pre-tokenized word appended to s.ids: its bytes as GPT-2's printable characters,
// merged by rank.
void bpe_word(const Vocabulary &v, std::string_view word, TokenizeScratch &s);
// pieces.cpp: each token's bytes, as token_piece hands them out.
tl_status make_pieces(const Vocabulary &v, AllocVector<char> &pieces, AllocVector<uint32_t> &starts);

}  // namespace tl
