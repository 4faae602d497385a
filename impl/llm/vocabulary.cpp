// Loading a vocabulary from GGUF metadata, with llama.cpp's defaults for what a file leaves out.
#include "llm/vocabulary.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "core/error.h"

namespace tl {

Vocabulary::Vocabulary(Memory *m)
    : text(StlAllocator<char>(m)),
      starts(StlAllocator<uint32_t>(m)),
      scores(StlAllocator<float>(m)),
      attrs(StlAllocator<uint8_t>(m)),
      id_of(0, std::hash<std::string_view>(), std::equal_to<std::string_view>(),
            StlAllocator<std::pair<const std::string_view, int32_t>>(m)),
      merge_rank(0, std::hash<uint64_t>(), std::equal_to<uint64_t>(),
                 StlAllocator<std::pair<const uint64_t, int32_t>>(m)),
      specials(StlAllocator<int32_t>(m)),
      end_ids(StlAllocator<int32_t>(m)) {
    std::fill(std::begin(byte_token), std::end(byte_token), -1);
}

bool Vocabulary::is_end(int32_t id) const { return std::find(end_ids.begin(), end_ids.end(), id) != end_ids.end(); }

namespace {

constexpr const char *kTokens = "tokenizer.ggml.tokens";

std::string_view string_item(const tl_gguf_file &f, const tl_gguf_file::Key &k, uint64_t i) {
    const char *s;
    uint64_t n;
    gguf_string_at(f.region->data + f.string_items[k.first_item + i], &s, &n);
    return {s, size_t(n)};
}

const tl_gguf_file::Key *array_key(const tl_gguf_file &f, const char *name, uint32_t item_type_or_any) {
    const tl_gguf_file::Key *k = f.key(name);
    if (!k || k->type != TL_GGUF_ARRAY) return nullptr;
    if (item_type_or_any != ~0u && k->item_type != item_type_or_any) return nullptr;
    return k;
}

// An optional key: *out unchanged when absent; a key of another type is refused.
tl_status read_bool(const tl_gguf_file &f, const char *name, bool *out) {
    const tl_gguf_file::Key *k = f.key(name);
    if (!k) return TL_OK;
    const GgufNumber n = gguf_number(k->type, k->at);
    if (!n.is_integer) return fail(TL_E_PARSE, "vocabulary: %s is not a bool", name);
    *out = n.as_int != 0;
    return TL_OK;
}

tl_status read_id(const tl_gguf_file &f, const char *name, int32_t size, int32_t *out) {
    const tl_gguf_file::Key *k = f.key(name);
    if (!k) return TL_OK;
    const GgufNumber n = gguf_number(k->type, k->at);
    if (!n.is_integer) return fail(TL_E_PARSE, "vocabulary: %s is not an integer", name);
    if (n.too_big || n.as_int < 0 || n.as_int >= size)
        return fail(TL_E_PARSE, "vocabulary: %s = %lld is not a token id (the vocabulary holds %d)", name,
                    (long long)n.as_int, size);
    *out = int32_t(n.as_int);
    return TL_OK;
}

tl_status read_kind(const tl_gguf_file &f, Vocabulary *v) {
    const tl_gguf_file::Key *k = f.key("tokenizer.ggml.model");
    if (!k || k->type != TL_GGUF_STRING) return fail(TL_E_NOT_FOUND, "vocabulary: the file has no tokenizer.ggml.model");
    const char *s;
    uint64_t n;
    gguf_string_at(k->at, &s, &n);
    const std::string_view model(s, size_t(n));
    if (model == "llama") {
        v->kind = VocabKind::sentencepiece;
        v->bos = 1, v->eos = 2, v->unk = 0;  // llama.cpp's defaults, overridden by the keys below
        v->add_space_prefix = true, v->add_bos = true;
        return TL_OK;
    }
    if (model != "gpt2")
        return fail(TL_E_PARSE, "vocabulary: tokenizer.ggml.model \"%.*s\" is not one tensorlife reads (\"llama\", \"gpt2\")",
                    int(n < 64 ? n : 64), s);
    v->kind = VocabKind::bpe;
    v->bos = 11, v->eos = 11;
    v->clean_spaces = true;
    std::string_view pre = "default";
    if (const tl_gguf_file::Key *p = f.key("tokenizer.ggml.pre")) {  // of another kind: refused, as llama.cpp does
        if (p->type != TL_GGUF_STRING) return fail(TL_E_PARSE, "vocabulary: tokenizer.ggml.pre is not a string");
        gguf_string_at(p->at, &s, &n);
        pre = std::string_view(s, size_t(n));
    }
    if (pre == "llama3" || pre == "llama-v3" || pre == "llama-bpe") {
        v->pre = PreTokenizer::llama3, v->ignore_merges = true, v->add_bos = true;
    } else if (pre == "gpt-2" || pre == "gpt2") {
        v->pre = PreTokenizer::gpt2;
    } else if (pre == "default") {
        v->pre = PreTokenizer::fallback;
    } else {
        return fail(TL_E_PARSE, "vocabulary: pre-tokenizer \"%.*s\" is not one tensorlife reads (llama-bpe, gpt-2, default)",
                    int(pre.size() < 64 ? pre.size() : 64), pre.data());
    }
    return TL_OK;
}

tl_status read_tokens(const tl_gguf_file &f, Vocabulary *v) {
    const tl_gguf_file::Key *tokens = array_key(f, kTokens, TL_GGUF_STRING);
    if (!tokens) return fail(TL_E_NOT_FOUND, "vocabulary: the file has no %s (an array of strings)", kTokens);
    if (tokens->count == 0 || tokens->count > (1u << 30))
        return fail(TL_E_PARSE, "vocabulary: %s holds %llu tokens", kTokens, (unsigned long long)tokens->count);
    const int32_t size = int32_t(tokens->count);
    const tl_gguf_file::Key *scores = array_key(f, "tokenizer.ggml.scores", ~0u);
    const tl_gguf_file::Key *types = array_key(f, "tokenizer.ggml.token_type", ~0u);
    if (scores && scores->count != tokens->count)
        return fail(TL_E_PARSE, "vocabulary: %llu scores for %d tokens", (unsigned long long)scores->count, size);
    if (types && types->count != tokens->count)
        return fail(TL_E_PARSE, "vocabulary: %llu token types for %d tokens", (unsigned long long)types->count, size);
    size_t bytes = 0;
    for (int32_t i = 0; i < size; ++i) bytes += string_item(f, *tokens, uint64_t(i)).size();
    if (bytes > (1u << 31)) return fail(TL_E_PARSE, "vocabulary: %zu bytes of token text", bytes);
    v->text.reserve(bytes);
    v->starts.reserve(size_t(size) + 1);
    v->scores.resize(size_t(size), 0.0f);
    v->attrs.resize(size_t(size), kTokenNormal);
    v->id_of.reserve(size_t(size));
    for (int32_t i = 0; i < size; ++i) {
        v->starts.push_back(uint32_t(v->text.size()));
        const std::string_view t = string_item(f, *tokens, uint64_t(i));
        if (t.empty()) return fail(TL_E_PARSE, "vocabulary: token %d is empty", i);
        v->text.insert(v->text.end(), t.begin(), t.end());
        if (scores) {
            const std::byte *at = gguf_array_item(*scores, uint64_t(i));
            const GgufNumber n = at ? gguf_number(scores->item_type, at) : GgufNumber{};
            if (!n.is_number) return fail(TL_E_PARSE, "vocabulary: tokenizer.ggml.scores is not an array of numbers");
            v->scores[size_t(i)] = float(n.as_double);
        }
        if (types) {
            const std::byte *at = gguf_array_item(*types, uint64_t(i));
            const GgufNumber n = at ? gguf_number(types->item_type, at) : GgufNumber{};
            if (!n.is_integer) return fail(TL_E_PARSE, "vocabulary: tokenizer.ggml.token_type is not an array of integers");
            static const uint8_t attr_of_type[7] = {kTokenUndefined, kTokenNormal,  kTokenUnknown, kTokenControl,
                                                    kTokenUserDefined, kTokenUnused, kTokenByte};
            v->attrs[size_t(i)] = n.as_int >= 0 && n.as_int < 7 ? attr_of_type[n.as_int] : uint8_t(kTokenUndefined);
        }
    }
    v->starts.push_back(uint32_t(v->text.size()));
    for (int32_t i = 0; i < size; ++i)
        if (!v->id_of.emplace(v->token(i), i).second)
            return fail(TL_E_PARSE, "vocabulary: tokens %d and %d have the same text", v->find(v->token(i)), i);
    return TL_OK;
}

tl_status read_merges(const tl_gguf_file &f, Vocabulary *v) {
    const tl_gguf_file::Key *merges = array_key(f, "tokenizer.ggml.merges", TL_GGUF_STRING);
    if (!merges) return fail(TL_E_NOT_FOUND, "vocabulary: a gpt2 (BPE) vocabulary without tokenizer.ggml.merges");
    if (merges->count > (1u << 30)) return fail(TL_E_PARSE, "vocabulary: %llu merges", (unsigned long long)merges->count);
    v->merge_rank.reserve(size_t(merges->count));
    for (uint64_t i = 0; i < merges->count; ++i) {
        const std::string_view m = string_item(f, *merges, i);
        const size_t space = m.size() > 1 ? m.find(' ', 1) : std::string_view::npos;
        const int32_t left = space == std::string_view::npos ? -1 : v->find(m.substr(0, space));
        const int32_t right = space == std::string_view::npos ? -1 : v->find(m.substr(space + 1));
        if (left < 0 || right < 0)
            return fail(TL_E_PARSE, "vocabulary: merge %llu \"%.*s\" does not name two tokens", (unsigned long long)i,
                        int(m.size() < 64 ? m.size() : 64), m.data());
        v->merge_rank.emplace(uint64_t(uint32_t(left)) << 32 | uint32_t(right), int32_t(i));  // the first rank wins
    }
    return TL_OK;
}

// llama.cpp finds these by their text (GGUF has no key for most of them).
bool ends_generation(std::string_view t) {
    static const char *const names[] = {"<|eot_id|>", "<|im_end|>",   "<|end|>", "<end_of_turn>",   "<|endoftext|>",
                                        "<|eom_id|>", "<EOT>",        "_<EOT>",  "<|end_of_text|>", "<end_of_utterance>"};
    for (const char *n : names)
        if (t == n) return true;
    return false;
}

}  // namespace

tl_status vocabulary_load(const tl_gguf_file &f, Vocabulary *v) {
    TL_TRY(read_kind(f, v));
    TL_TRY(read_tokens(f, v));
    if (v->kind == VocabKind::bpe) TL_TRY(read_merges(f, v));
    const int32_t size = v->size();
    TL_TRY(read_bool(f, "tokenizer.ggml.add_space_prefix", &v->add_space_prefix));
    TL_TRY(read_id(f, "tokenizer.ggml.bos_token_id", size, &v->bos));
    TL_TRY(read_id(f, "tokenizer.ggml.eos_token_id", size, &v->eos));
    TL_TRY(read_id(f, "tokenizer.ggml.eot_token_id", size, &v->eot));
    TL_TRY(read_id(f, "tokenizer.ggml.unknown_token_id", size, &v->unk));
    TL_TRY(read_bool(f, "tokenizer.ggml.add_bos_token", &v->add_bos));
    TL_TRY(read_bool(f, "tokenizer.ggml.add_eos_token", &v->add_eos));
    if (v->bos >= size) v->bos = -1;  // llama.cpp's defaults past a small vocabulary (unk's 0 never is)
    if (v->eos >= size) v->eos = -1;
    if ((v->add_bos && v->bos < 0) || (v->add_eos && v->eos < 0))
        return fail(TL_E_PARSE, "vocabulary: adds a BOS or EOS token that it does not hold");
    for (int32_t i = 0; i < size; ++i) {
        const std::string_view t = v->token(i);
        if (ends_generation(t)) {
            if (v->eot < 0 && t != "<|eom_id|>") v->eot = i;
            v->attrs[size_t(i)] |= kTokenControl;
            v->end_ids.push_back(i);
        }
        if (v->attrs[size_t(i)] & (kTokenControl | kTokenUserDefined | kTokenUnknown)) v->specials.push_back(i);
        const int byte = v->kind == VocabKind::sentencepiece ? byte_of_token_text(t) : -1;
        if (byte >= 0) v->byte_token[byte] = i;
    }
    for (int32_t id : {v->eos, v->eot})
        if (id >= 0 && !v->is_end(id)) v->end_ids.push_back(id);
    std::stable_sort(v->specials.begin(), v->specials.end(),
                     [v](int32_t a, int32_t b) { return v->token(a).size() > v->token(b).size(); });
    return TL_OK;
}

}  // namespace tl
