// A tokenizer's vocabulary as llama.cpp reads it from a GGUF file's tokenizer.ggml.* keys: the
// tokens (their text, scores and types), BPE's ranked merges, the special ids and flags.  Every
// array is checked against the others at load (lengths, ids in range, merges naming tokens), so a
// malformed vocabulary is a status with the problem named, never an abort later.
#pragma once
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/memory.h"
#include "io/gguf.h"

namespace tl {

template <class T>
using AllocVector = std::vector<T, StlAllocator<T>>;

// llama.cpp's token attributes, from GGUF's token types (1 normal ... 6 byte).
enum TokenAttr : uint8_t {
    kTokenNormal = 1,
    kTokenUnknown = 2,
    kTokenControl = 4,
    kTokenUserDefined = 8,
    kTokenUnused = 16,
    kTokenByte = 32,
    kTokenUndefined = 64,
};

enum class VocabKind { sentencepiece, bpe };  // tokenizer.ggml.model "llama" or "gpt2"
// The pre-tokenizer tokenizer.ggml.pre names (BPE only): Llama 3's, GPT-2's, or llama.cpp's default.
enum class PreTokenizer { none, llama3, gpt2, fallback };

struct Vocabulary {
    explicit Vocabulary(Memory *m);

    using IdOf = std::unordered_map<std::string_view, int32_t, std::hash<std::string_view>,
                                    std::equal_to<std::string_view>,
                                    StlAllocator<std::pair<const std::string_view, int32_t>>>;
    using Ranks = std::unordered_map<uint64_t, int32_t, std::hash<uint64_t>, std::equal_to<uint64_t>,
                                     StlAllocator<std::pair<const uint64_t, int32_t>>>;

    VocabKind kind = VocabKind::sentencepiece;
    PreTokenizer pre = PreTokenizer::none;
    AllocVector<char> text;        // every token's text, back to back
    AllocVector<uint32_t> starts;  // token i is text[starts[i], starts[i + 1])
    AllocVector<float> scores;
    AllocVector<uint8_t> attrs;
    IdOf id_of;
    Ranks merge_rank;                // BPE: (left id << 32 | right id) -> rank, lower first
    AllocVector<int32_t> specials;   // control, user-defined and unknown tokens, longest text first
    AllocVector<int32_t> end_ids;    // tokens that end generation (EOS, EOT, ... as llama.cpp lists them)
    int32_t byte_token[256];         // SentencePiece: <0xXX>, or -1
    int32_t bos = -1, eos = -1, eot = -1, unk = -1;
    bool add_bos = false, add_eos = false, add_space_prefix = false, ignore_merges = false, clean_spaces = false;

    int32_t size() const { return int32_t(attrs.size()); }
    std::string_view token(int32_t id) const { return {&text[starts[id]], size_t(starts[id + 1] - starts[id])}; }
    int32_t find(std::string_view s) const {
        auto it = id_of.find(s);
        return it == id_of.end() ? -1 : it->second;
    }
    int32_t rank(int32_t left, int32_t right) const {
        auto it = merge_rank.find(uint64_t(uint32_t(left)) << 32 | uint32_t(right));
        return it == merge_rank.end() ? -1 : it->second;
    }
    bool is_end(int32_t id) const;
};

// The byte a SentencePiece byte token's text <0xXX> names (upper-case hex, as llama.cpp writes
// and looks them up), or -1.
inline int byte_of_token_text(std::string_view t) {
    const auto hex = [](char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1; };
    if (t.size() != 6 || t.substr(0, 3) != "<0x" || t[5] != '>' || hex(t[3]) < 0 || hex(t[4]) < 0) return -1;
    return hex(t[3]) * 16 + hex(t[4]);
}

// Reads f's tokenizer.ggml.* keys into *v (empty, made on v's memory).
tl_status vocabulary_load(const tl_gguf_file &f, Vocabulary *v);

}  // namespace tl
