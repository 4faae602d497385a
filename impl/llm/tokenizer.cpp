// Tokenizing: special tokens cut out of the text (llama.cpp's partition), then each run of
// text through the vocabulary's own algorithm (sentencepiece.cpp, bpe.cpp).
#include "llm/tokenizer.h"

#include <cstring>
#include <new>

#include "core/error.h"
#include "llm/tokenizer_algorithms.h"

tl_tokenizer::tl_tokenizer(const tl::Memory &m)
    : memory(m),
      vocab(&memory),
      regex(&memory),
      pieces(tl::StlAllocator<char>(&memory)),
      piece_starts(tl::StlAllocator<uint32_t>(&memory)),
      scratch(&memory) {}

tl_tokenizer::~tl_tokenizer() = default;

namespace tl {

TokenizeScratch::TokenizeScratch(Memory *m)
    : fragments(StlAllocator<Fragment>(m)),
      next_fragments(StlAllocator<Fragment>(m)),
      text(StlAllocator<char>(m)),
      symbols(StlAllocator<Symbol>(m)),
      heap(StlAllocator<Bigram>(m)),
      words(StlAllocator<Piece>(m)),
      word_work(StlAllocator<Piece>(m)),
      ids(StlAllocator<int32_t>(m)) {}

size_t invalid_utf8_at(std::string_view s) {
    const auto *p = reinterpret_cast<const unsigned char *>(s.data());
    const size_t n = s.size();
    for (size_t i = 0; i < n;) {
        const unsigned c = p[i];
        size_t len;
        uint32_t cp, min;
        if (c < 0x80) {
            ++i;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            len = 2, cp = c & 0x1F, min = 0x80;
        } else if ((c & 0xF0) == 0xE0) {
            len = 3, cp = c & 0x0F, min = 0x800;
        } else if ((c & 0xF8) == 0xF0) {
            len = 4, cp = c & 0x07, min = 0x10000;
        } else {
            return i;
        }
        if (n - i < len) return i;
        for (size_t k = 1; k < len; ++k) {
            if ((p[i + k] & 0xC0) != 0x80) return i;
            cp = cp << 6 | (p[i + k] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
        i += len;
    }
    return std::string_view::npos;
}

namespace {

// llama.cpp's tokenizer_st_partition: for each special token, longest first, every occurrence in
// the text fragments left becomes a token fragment.
void cut_special_tokens(const Vocabulary &v, std::string_view text, bool parse_special, TokenizeScratch &s) {
    s.fragments.clear();
    if (text.empty()) return;
    s.fragments.push_back({-1, 0, text.size()});
    for (int32_t id : v.specials) {
        const uint8_t attr = v.attrs[size_t(id)];
        if (!parse_special && (attr & (kTokenControl | kTokenUnknown))) continue;
        const std::string_view t = v.token(id);
        s.next_fragments.clear();
        for (const TokenizeScratch::Fragment &f : s.fragments) {
            if (f.token >= 0) {
                s.next_fragments.push_back(f);
                continue;
            }
            size_t at = f.offset;
            const size_t end = f.offset + f.length;
            for (;;) {
                const size_t match = text.substr(0, end).find(t, at);
                if (match == std::string_view::npos) break;
                if (match > at) s.next_fragments.push_back({-1, at, match - at});
                s.next_fragments.push_back({id, 0, 0});
                at = match + t.size();
            }
            if (at < end) s.next_fragments.push_back({-1, at, end - at});
        }
        s.fragments.swap(s.next_fragments);
    }
    s.next_fragments.reserve(s.fragments.capacity());  // both as large: the next text's swaps need no more
}

}  // namespace

tl_status tokenize(const tl_tokenizer &t, std::string_view text, unsigned flags, TokenizeScratch &s) {
    const Vocabulary &v = t.vocab;
    s.ids.clear();
    const size_t bad = invalid_utf8_at(text);
    if (bad != std::string_view::npos)
        return fail(TL_E_INVALID_ARGUMENT, "tokenize: the text is not valid UTF-8 (byte %zu of %zu, 0x%02x)", bad,
                    text.size(), unsigned(uint8_t(text[bad])));
    const bool add_special = flags & kAddSpecial;
    cut_special_tokens(v, text, flags & kParseSpecial, s);
    if (add_special && v.add_bos) s.ids.push_back(v.bos);
    bool after_special = true;  // SentencePiece: a space goes before the text at the start and after a special token
    for (size_t i = 0; i < s.fragments.size(); ++i) {
        const TokenizeScratch::Fragment f = s.fragments[i];
        if (f.token >= 0) {
            s.ids.push_back(f.token);
            after_special = true;
            continue;
        }
        const std::string_view run = text.substr(f.offset, f.length);
        if (v.kind == VocabKind::sentencepiece) {
            TL_TRY(sentencepiece_run(v, run, v.add_space_prefix && after_special, s));
        } else {
            TL_TRY(t.regex.split(run, s.split, s.words, s.word_work));
            for (const Piece &w : s.words) bpe_word(v, run.substr(w.offset, w.length), s);
        }
        after_special = false;
    }
    if (add_special && v.add_eos) s.ids.push_back(v.eos);
    return TL_OK;
}

std::string_view token_piece(const tl_tokenizer &t, int32_t id, bool special) {
    if (!special && (t.vocab.attrs[size_t(id)] & (kTokenControl | kTokenUnknown))) return std::string_view("", 0);
    return {&t.pieces[t.piece_starts[size_t(id)]], size_t(t.piece_starts[size_t(id) + 1] - t.piece_starts[size_t(id)])};
}

tl_status tokenizer_open(const tl_gguf_file &f, const Memory &memory, tl_tokenizer **out) {
    Memory m = memory;
    void *at = m.allocate(sizeof(tl_tokenizer), alignof(tl_tokenizer));
    if (!at) return allocation_refused("no memory for a tokenizer");
    tl_tokenizer *t;
    try {
        t = new (at) tl_tokenizer(m);
    } catch (...) {
        m.release(at, sizeof(tl_tokenizer));
        throw;
    }
    tl_status st;
    try {
        st = vocabulary_load(f, &t->vocab);
        if (st == TL_OK) st = t->regex.compile(t->vocab.pre);
        if (st == TL_OK) st = make_pieces(t->vocab, t->pieces, t->piece_starts);
    } catch (...) {
        tokenizer_close(t);
        throw;
    }
    if (st != TL_OK) {
        tokenizer_close(t);
        return st;
    }
    *out = t;
    return TL_OK;
}

void tokenizer_close(tl_tokenizer *t) {
    Memory m = t->memory;
    t->~tl_tokenizer();
    m.release(t, sizeof(tl_tokenizer));
}

}  // namespace tl
