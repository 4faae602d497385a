// The vocabulary-specific steps of tokenizer.cpp, each in its own file.
#pragma once
#include <string_view>

#include "llm/tokenizer.h"

namespace tl {

// sentencepiece.cpp: one run of text (no special tokens in it) appended to s.ids: ' ' as U+2581
// (and one before the run when `space_first`), characters merged by score, then byte fallback.
tl_status sentencepiece_run(const Vocabulary &v, std::string_view run, bool space_first, TokenizeScratch &s);
// bpe.cpp: one pre-tokenized word appended to s.ids: its bytes as GPT-2's printable characters,
// merged by rank.
void bpe_word(const Vocabulary &v, std::string_view word, TokenizeScratch &s);
// pieces.cpp: each token's bytes, as token_piece hands them out.
tl_status make_pieces(const Vocabulary &v, AllocVector<char> &pieces, AllocVector<uint32_t> &starts);

}  // namespace tl
