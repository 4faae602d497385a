/* Tokenizers from GGUF vocabularies written byte by byte here: SentencePiece's merges by score
 * and byte fallback, BPE's merges by rank through GPT-2's byte characters, special tokens,
 * detokenizing, the UTF-8 stream; malformed vocabularies and texts refused with their reason; no
 * allocation when a text is tokenized again; every refused allocation at open reported and
 * nothing leaked.  (Agreement with llama.cpp on real vocabularies: tests/llamacpp.) */
#include <stdint.h>
#include <stdio.h>

#include "common.h"

CONTEXT_AND_DIR_SUITE(text);

typedef struct {
    unsigned char bytes[1 << 16];
    size_t n;
    uint64_t keys;
} gguf_buf;

static void put(gguf_buf *b, const void *p, size_t n) {
    cr_assert_lt(b->n + n, sizeof b->bytes);
    memcpy(b->bytes + b->n, p, n);
    b->n += n;
}
static void u32(gguf_buf *b, uint32_t v) { put(b, &v, 4); }
static void u64(gguf_buf *b, uint64_t v) { put(b, &v, 8); }
static void str(gguf_buf *b, const char *s) {
    u64(b, strlen(s));
    put(b, s, strlen(s));
}
static void key_string(gguf_buf *b, const char *key, const char *value) {
    str(b, key), u32(b, 8), str(b, value), b->keys++;
}
static void key_u32(gguf_buf *b, const char *key, uint32_t value) { str(b, key), u32(b, 4), u32(b, value), b->keys++; }
static void key_strings(gguf_buf *b, const char *key, const char *const *items, size_t n) {
    str(b, key), u32(b, 9), u32(b, 8), u64(b, n), b->keys++;
    for (size_t i = 0; i < n; ++i) str(b, items[i]);
}
static void key_floats(gguf_buf *b, const char *key, const float *items, size_t n) {
    str(b, key), u32(b, 9), u32(b, 6), u64(b, n), b->keys++;
    put(b, items, n * sizeof(float));
}
static void key_ints(gguf_buf *b, const char *key, const int32_t *items, size_t n) {
    str(b, key), u32(b, 9), u32(b, 5), u64(b, n), b->keys++;
    put(b, items, n * sizeof(int32_t));
}

/* The file: header (no tensors), then the keys the builder wrote. */
static tl_tokenizer *open_vocab(const gguf_buf *keys, tl_status want) {
    static gguf_buf file;
    file.n = 0;
    put(&file, "GGUF", 4), u32(&file, 3), u64(&file, 0), u64(&file, keys->keys);
    put(&file, keys->bytes, keys->n);
    while (file.n % 32) file.bytes[file.n++] = 0; /* the (empty) data section starts aligned */
    char path[512];
    snprintf(path, sizeof path, "%s/vocab.gguf", dir);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(file.bytes, 1, file.n, f), file.n);
    fclose(f);
    tl_gguf_file *g;
    OK(tl_gguf_open(ctx, path, &g));
    tl_tokenizer *t = NULL;
    cr_assert_eq(tl_tokenizer_open(ctx, g, &t), want, "%s", tl_last_error());
    tl_gguf_close(g);
    return t;
}

/* SentencePiece: <unk> <s> </s>, the 256 byte tokens, then words with scores (the last a word
 * that only looks like a byte token: z is no hex digit). */
enum { SPM_WORDS = 8 };
static const char *const spm_words[SPM_WORDS] = {"\xe2\x96\x81", "a", "b", "\xe2\x96\x81" "a", "ab", "\xe2\x96\x81" "ab", "<user>",
                                                 "<0xAz>"};
static const float spm_scores[SPM_WORDS] = {-1, -2, -3, -4, -5, -0.5f, 0, -9};
#define SPM_FIRST 259

static void spm_keys(gguf_buf *b, int n_scores) {
    static char byte_names[256][8];
    const char *tokens[SPM_FIRST + SPM_WORDS];
    float scores[SPM_FIRST + SPM_WORDS];
    int32_t types[SPM_FIRST + SPM_WORDS];
    tokens[0] = "<unk>", tokens[1] = "<s>", tokens[2] = "</s>";
    types[0] = 2, types[1] = types[2] = 3;
    for (int i = 0; i < 256; ++i) {
        snprintf(byte_names[i], 8, "<0x%02X>", i);
        tokens[3 + i] = byte_names[i], types[3 + i] = 6;
    }
    for (int i = 0; i < SPM_FIRST + SPM_WORDS; ++i) scores[i] = i < SPM_FIRST ? 0 : spm_scores[i - SPM_FIRST];
    for (int i = 0; i < SPM_WORDS; ++i) tokens[SPM_FIRST + i] = spm_words[i], types[SPM_FIRST + i] = i == 6 ? 4 : 1;
    b->n = 0, b->keys = 0;
    key_string(b, "tokenizer.ggml.model", "llama");
    key_strings(b, "tokenizer.ggml.tokens", tokens, SPM_FIRST + SPM_WORDS);
    key_floats(b, "tokenizer.ggml.scores", scores, (size_t)n_scores);
    key_ints(b, "tokenizer.ggml.token_type", types, SPM_FIRST + SPM_WORDS);
}

static size_t ids_of(tl_tokenizer *t, const char *text, unsigned flags, int32_t *ids) {
    size_t n;
    OK(tl_tokenize(t, text, strlen(text), flags, ids, 64, &n));
    return n;
}

Test(text, sentencepiece_merges_by_score_and_falls_back_to_bytes) {
    static gguf_buf b;
    spm_keys(&b, SPM_FIRST + SPM_WORDS);
    tl_tokenizer *t = open_vocab(&b, TL_OK);
    int32_t ids[64];
    /* " ab ab": the space prefix, then ▁ab (score -0.5) beats ▁a + b. */
    cr_assert_eq(ids_of(t, "ab ab", TL_TOKENIZE_ADD_SPECIAL, ids), 3);
    cr_assert(ids[0] == 1 && ids[1] == SPM_FIRST + 5 && ids[2] == SPM_FIRST + 5);
    /* é is no token: its two bytes. */
    cr_assert_eq(ids_of(t, "\xc3\xa9", 0, ids), 3);
    cr_assert(ids[0] == SPM_FIRST && ids[1] == 3 + 0xC3 && ids[2] == 3 + 0xA9);
    /* a user-defined token is cut out of the text always, control tokens only when asked. */
    cr_assert_eq(ids_of(t, "a<user>", 0, ids), 2);
    cr_assert_eq(ids[1], SPM_FIRST + 6);
    cr_assert_eq(ids_of(t, "<s>", TL_TOKENIZE_PARSE_SPECIAL, ids), 1);
    cr_assert_eq(ids[0], 1);
    cr_assert_gt(ids_of(t, "<s>", 0, ids), 1);
    /* back to text: BOS dropped and the prefix space taken off. */
    const int32_t back[] = {1, SPM_FIRST + 5, SPM_FIRST + 5, 3 + 0xC3, 3 + 0xA9};
    char text[64];
    size_t len;
    OK(tl_detokenize(t, back, 5, TL_DETOKENIZE_REMOVE_SPECIAL, text, sizeof text, &len));
    cr_assert_str_eq(text, " ab ab\xc3\xa9");
    OK(tl_detokenize(t, back + 1, 4, 0, text, sizeof text, &len));
    cr_assert_str_eq(text, "ab ab\xc3\xa9");
    /* Removing special tokens where none leads: the prefix space still taken off; no ids, no text. */
    OK(tl_detokenize(t, back + 1, 4, TL_DETOKENIZE_REMOVE_SPECIAL, text, sizeof text, &len));
    cr_assert_str_eq(text, "ab ab\xc3\xa9");
    OK(tl_detokenize(t, back, 0, TL_DETOKENIZE_REMOVE_SPECIAL, text, sizeof text, &len));
    cr_assert(len == 0 && text[0] == 0);
    /* A byte token is its byte; a word that only looks like one is its text. */
    const int32_t byte_and_word[2] = {3 + 'A', SPM_FIRST + 7};
    OK(tl_detokenize(t, byte_and_word, 2, 0, text, sizeof text, &len));
    cr_assert_str_eq(text, "A<0xAz>");
    cr_assert_eq(tl_tokenizer_special(t, TL_TOKEN_BOS), 1);
    cr_assert_eq(tl_tokenizer_special(t, TL_TOKEN_EOS), 2);
    cr_assert(tl_tokenizer_is_end(t, 2) && !tl_tokenizer_is_end(t, 1));
    tl_tokenizer_close(t);
}

/* A BPE vocabulary's keys (b emptied first): its pre-tokenizer (NULL: a number where its name
 * belongs), n tokens of these types, the merges. */
static void gpt2_keys(gguf_buf *b, const char *pre, const char *const *tokens, const int32_t *types, size_t n,
                      const char *const *merges, size_t n_merges) {
    b->n = 0, b->keys = 0;
    key_string(b, "tokenizer.ggml.model", "gpt2");
    if (pre)
        key_string(b, "tokenizer.ggml.pre", pre);
    else
        key_u32(b, "tokenizer.ggml.pre", 2);
    key_strings(b, "tokenizer.ggml.tokens", tokens, n);
    key_ints(b, "tokenizer.ggml.token_type", types, n);
    key_strings(b, "tokenizer.ggml.merges", merges, n_merges);
}

/* BPE over GPT-2's byte characters: "Ġ" is the space. */
static void bpe_keys(gguf_buf *b, const char *merge, const char *pre) {
    const char *tokens[] = {"a", "b", "c", "\xc4\xa0", "ab", "\xc4\xa0" "a", "\xc4\xa0" "ab", "abc", "<|end|>"};
    const int32_t types[] = {1, 1, 1, 1, 1, 1, 1, 1, 3};
    const char *merges[] = {"\xc4\xa0 a", "a b", merge, "ab c"};
    gpt2_keys(b, pre, tokens, types, 9, merges, 4);
    key_u32(b, "tokenizer.ggml.bos_token_id", 8);
}

Test(text, bpe_merges_by_rank_after_the_pre_tokenizer) {
    static gguf_buf b;
    bpe_keys(&b, "\xc4\xa0" "a b", "gpt-2");
    tl_tokenizer *t = open_vocab(&b, TL_OK);
    int32_t ids[64];
    /* "abc ab": words "abc", " ab"; abc merges a+b (rank 1) then ab+c (rank 3), " ab" Ġ+a (rank 0)
     * then Ġa+b (rank 2). */
    cr_assert_eq(ids_of(t, "abc ab", 0, ids), 2);
    cr_assert(ids[0] == 7 && ids[1] == 6);
    cr_assert_eq(ids_of(t, "x<|end|>", TL_TOKENIZE_PARSE_SPECIAL, ids), 1); /* x is no token: dropped, as llama.cpp does */
    cr_assert_eq(ids[0], 8);
    char text[64];
    size_t len;
    const int32_t back[] = {7, 6, 8};
    OK(tl_detokenize(t, back, 3, 0, text, sizeof text, &len));
    cr_assert_str_eq(text, "abc ab");
    /* llama.cpp's other names of the two pre-tokenizers: the same ids (llama3's adds a BOS). */
    const char *aliases[4] = {"gpt2", "llama3", "llama-v3", "llama-bpe"};
    for (int i = 0; i < 4; ++i) {
        static gguf_buf a;
        bpe_keys(&a, "\xc4\xa0" "a b", aliases[i]);
        tl_tokenizer *alias = open_vocab(&a, TL_OK);
        cr_assert_eq(ids_of(alias, "abc ab", 0, ids), 2, "%s", aliases[i]);
        cr_assert(ids[0] == 7 && ids[1] == 6, "%s", aliases[i]);
        tl_tokenizer_close(alias);
    }
    OK(tl_detokenize(t, back, 3, TL_DETOKENIZE_UNPARSE_SPECIAL, text, sizeof text, &len));
    cr_assert_str_eq(text, "abc ab<|end|>");
    FAILS_WITH(tl_detokenize(t, back, 3, TL_DETOKENIZE_UNPARSE_SPECIAL, text, 5, &len), TL_E_INVALID_ARGUMENT);
    const char *piece;
    OK(tl_token_piece(t, 6, 0, &piece, &len));
    cr_assert(len == 3 && !memcmp(piece, " ab", 3));
    cr_assert(tl_tokenizer_is_end(t, 8));
    tl_tokenizer_close(t);
}

/* Detokenizing with a BPE vocabulary cleans spaces as llama.cpp's three passes do: before ? ! . ,;
 * both round a lone apostrophe; before 's 'm 're 've (and no other); with add_eos_token, a final
 * EOS is dropped when special tokens are removed. */
Test(text, bpe_detokenizing_cleans_spaces_as_llama_cpp) {
    static gguf_buf b;
    const char *tokens[] = {"a", "\xc4\xa0", "?", "!", ".", ",", "'", "s", "m", "r", "e", "v", "x", "<|end|>",
                            "\xf0\x9f\x98\x80", "\xe2\x82\xac"};
    const int32_t types[] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 3, 1, 1};
    const char *merges[] = {"\xc4\xa0 a"};
    gpt2_keys(&b, "gpt-2", tokens, types, 16, merges, 1);
    key_u32(&b, "tokenizer.ggml.eos_token_id", 13);
    str(&b, "tokenizer.ggml.add_eos_token"), u32(&b, 7), put(&b, "\1", 1), b.keys++; /* a bool */
    tl_tokenizer *t = open_vocab(&b, TL_OK);
    /* "a ? ! . , ' a 's 'm 're 've 'x 'rv 'vr '" and the end token */
    const int32_t ids[] = {0, 1, 2, 1, 3, 1, 4, 1, 5, 1, 6, 1, 0, 1, 6, 7, 1, 6, 8, 1, 6, 9, 10, 1,
                           6, 11, 10, 1, 6, 12, 1, 6, 9, 11, 1, 6, 11, 9, 1, 6, 13};
    const size_t n = sizeof ids / sizeof ids[0];
    char text[128];
    size_t len;
    OK(tl_detokenize(t, ids, n, TL_DETOKENIZE_REMOVE_SPECIAL, text, sizeof text, &len));
    cr_assert_str_eq(text, "a?!.,'a's'm're've 'x 'rv 'vr '");
    cr_assert_eq(len, strlen(text));
    OK(tl_detokenize(t, ids, n, TL_DETOKENIZE_UNPARSE_SPECIAL, text, sizeof text, &len));
    cr_assert_str_eq(text, "a?!.,'a's'm're've 'x 'rv 'vr '<|end|>");
    /* Asked for the length alone: the text before its clean-up, a bound the text comes under. */
    size_t bound;
    OK(tl_detokenize(t, ids, n, TL_DETOKENIZE_REMOVE_SPECIAL, NULL, 0, &bound));
    cr_assert_eq(bound, strlen("a ? ! . , ' a 's 'm 're 've 'x 'rv 'vr '"));
    /* A buffer under the bound but room for the cleaned text takes it; one byte less is refused. */
    const size_t exact = strlen("a?!.,'a's'm're've 'x 'rv 'vr '");
    memset(text, '#', sizeof text);
    OK(tl_detokenize(t, ids, n, TL_DETOKENIZE_REMOVE_SPECIAL, text, exact + 1, &len));
    cr_assert(len == exact && !strcmp(text, "a?!.,'a's'm're've 'x 'rv 'vr '"), "%s", text);
    FAILS_WITH(tl_detokenize(t, ids, n, TL_DETOKENIZE_REMOVE_SPECIAL, text, exact, &len), TL_E_INVALID_ARGUMENT);
    char want[64];
    snprintf(want, sizeof want, "%zu bytes of text and its NUL, room for %zu", exact + 1, exact);
    cr_assert(strstr(tl_last_error(), want), "%s", tl_last_error());
    /* Only a final EOS is dropped: text not ending in one keeps its last token; no ids, no text. */
    OK(tl_detokenize(t, ids, n - 1, TL_DETOKENIZE_REMOVE_SPECIAL, text, sizeof text, &len));
    cr_assert_str_eq(text, "a?!.,'a's'm're've 'x 'rv 'vr '");
    const int32_t eos_then_a[2] = {13, 0};
    OK(tl_detokenize(t, eos_then_a, 2, TL_DETOKENIZE_REMOVE_SPECIAL, text, sizeof text, &len));
    cr_assert_str_eq(text, "a");
    OK(tl_detokenize(t, ids, 0, TL_DETOKENIZE_REMOVE_SPECIAL, text, sizeof text, &len));
    cr_assert(len == 0 && text[0] == 0);
    /* A character outside GPT-2's byte alphabet (four bytes, three) stays as it is. */
    const int32_t emoji_a[3] = {14, 0, 15};
    OK(tl_detokenize(t, emoji_a, 3, 0, text, sizeof text, &len));
    cr_assert_str_eq(text, "\xf0\x9f\x98\x80" "a" "\xe2\x82\xac");
    /* An apostrophe after a letter is no lone one; " 'v" ending the text is no 've. */
    const int32_t inner_and_final[] = {0, 6, 12, 1, 0, 1, 6, 11};
    OK(tl_detokenize(t, inner_and_final, 8, 0, text, sizeof text, &len));
    cr_assert_str_eq(text, "a'x a 'v");
    tl_tokenizer_close(t);
}

Test(text, malformed_vocabularies_are_refused_by_name) {
    static gguf_buf b;
    spm_keys(&b, 10); /* 10 scores for 267 tokens */
    open_vocab(&b, TL_E_PARSE);
    cr_assert(strstr(tl_last_error(), "10 scores for 267 tokens"), "%s", tl_last_error());
    bpe_keys(&b, "\xc4\xa0" "a zz", "gpt-2");
    open_vocab(&b, TL_E_PARSE);
    cr_assert(strstr(tl_last_error(), "does not name two tokens"), "%s", tl_last_error());
    bpe_keys(&b, "\xc4\xa0" "a b", "no-such-pre");
    open_vocab(&b, TL_E_PARSE);
    cr_assert(strstr(tl_last_error(), "no-such-pre"), "%s", tl_last_error());
    /* A name and a merge of 70 bytes and more: the message quotes their first 64. */
    char long_pre[71], long_merge[80], want[96];
    memset(long_pre, 'p', 70), long_pre[70] = 0;
    snprintf(long_merge, sizeof long_merge, "\xc4\xa0" "a %s", long_pre);
    bpe_keys(&b, "\xc4\xa0" "a b", long_pre);
    open_vocab(&b, TL_E_PARSE);
    snprintf(want, sizeof want, "\"%.64s\" is not", long_pre);
    cr_assert(strstr(tl_last_error(), want), "%s", tl_last_error());
    bpe_keys(&b, long_merge, "gpt-2");
    open_vocab(&b, TL_E_PARSE);
    snprintf(want, sizeof want, "\"%.64s\" does not name two tokens", long_merge);
    cr_assert(strstr(tl_last_error(), want), "%s", tl_last_error());
    bpe_keys(&b, "\xc4\xa0" "a b", NULL);
    open_vocab(&b, TL_E_PARSE);
    cr_assert(strstr(tl_last_error(), "tokenizer.ggml.pre is not a string"), "%s", tl_last_error());
    b.n = 0, b.keys = 0;
    key_string(&b, "tokenizer.ggml.model", "llama");
    open_vocab(&b, TL_E_NOT_FOUND);
    cr_assert(strstr(tl_last_error(), "tokenizer.ggml.tokens"), "%s", tl_last_error());
    const char *twice[] = {"a", "b", "a"};
    b.n = 0, b.keys = 0;
    key_string(&b, "tokenizer.ggml.model", "llama");
    key_strings(&b, "tokenizer.ggml.tokens", twice, 3);
    open_vocab(&b, TL_E_PARSE);
    cr_assert(strstr(tl_last_error(), "same text"), "%s", tl_last_error());
    const char *few[] = {"a", "b", "c"};
    b.n = 0, b.keys = 0;
    key_string(&b, "tokenizer.ggml.model", "llama");
    key_strings(&b, "tokenizer.ggml.tokens", few, 3);
    key_u32(&b, "tokenizer.ggml.bos_token_id", 3);
    open_vocab(&b, TL_E_PARSE);
    cr_assert(strstr(tl_last_error(), "bos_token_id = 3 is not a token id"), "%s", tl_last_error());
    /* llama.cpp's default ids past a small vocabulary: BOS 1 of a one-token vocabulary, which
     * SentencePiece adds by default, and EOS 2 of three tokens once add_eos_token asks for it. */
    const char *one[] = {"a"};
    b.n = 0, b.keys = 0;
    key_string(&b, "tokenizer.ggml.model", "llama");
    key_strings(&b, "tokenizer.ggml.tokens", one, 1);
    open_vocab(&b, TL_E_PARSE);
    cr_assert(strstr(tl_last_error(), "adds a BOS or EOS token that it does not hold"), "%s", tl_last_error());
    b.n = 0, b.keys = 0;
    key_string(&b, "tokenizer.ggml.model", "llama");
    key_strings(&b, "tokenizer.ggml.tokens", few, 3);
    tl_tokenizer_close(open_vocab(&b, TL_OK)); /* EOS 2 is held; BOS 1 too */
    b.n = 0, b.keys = 0;
    key_string(&b, "tokenizer.ggml.model", "llama");
    key_strings(&b, "tokenizer.ggml.tokens", few, 2);
    tl_tokenizer_close(open_vocab(&b, TL_OK)); /* EOS 2 is past two tokens, and not added */
    b.n = 0, b.keys = 0;
    key_string(&b, "tokenizer.ggml.model", "llama");
    key_strings(&b, "tokenizer.ggml.tokens", few, 2);
    str(&b, "tokenizer.ggml.add_eos_token"), u32(&b, 7), put(&b, "\1", 1), b.keys++;
    open_vocab(&b, TL_E_PARSE);
    cr_assert(strstr(tl_last_error(), "adds a BOS or EOS token that it does not hold"), "%s", tl_last_error());
    b.n = 0, b.keys = 0;
    key_string(&b, "tokenizer.ggml.model", "t5");
    key_strings(&b, "tokenizer.ggml.tokens", few, 3);
    open_vocab(&b, TL_E_PARSE);
    cr_assert(strstr(tl_last_error(), "\"t5\""), "%s", tl_last_error());
    /* Each key of the wrong shape or kind, one at a time. */
    const float three_scores[3] = {0, -1, -2};
    const int32_t two_types[2] = {1, 1};
    const char *score_words[3] = {"x", "y", "z"};
    const char *with_empty[3] = {"a", "", "c"};
    const struct {
        int what;
        tl_status status;
        const char *message;
    } cases[] = {
        {0, TL_E_PARSE, "2 token types for 3 tokens"},
        {1, TL_E_PARSE, "tokenizer.ggml.scores is not an array of numbers"},
        {2, TL_E_PARSE, "tokenizer.ggml.token_type is not an array of integers"},
        {3, TL_E_PARSE, "token 1 is empty"},
        {4, TL_E_NOT_FOUND, "the file has no tokenizer.ggml.tokens"},
        {5, TL_E_NOT_FOUND, "without tokenizer.ggml.merges"},
        {6, TL_E_PARSE, "merge 0 \"ab\" does not name two tokens"},
        {7, TL_E_PARSE, "adds a BOS or EOS token that it does not hold"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        const int what = cases[i].what;
        b.n = 0, b.keys = 0;
        key_string(&b, "tokenizer.ggml.model", what >= 5 ? "gpt2" : "llama");
        if (what == 4)
            key_u32(&b, "tokenizer.ggml.tokens", 3); /* a number, not an array */
        else
            key_strings(&b, "tokenizer.ggml.tokens", what == 3 ? with_empty : few, 3);
        if (what == 0) key_ints(&b, "tokenizer.ggml.token_type", two_types, 2);
        if (what == 1) key_strings(&b, "tokenizer.ggml.scores", score_words, 3);
        if (what == 2) key_floats(&b, "tokenizer.ggml.token_type", three_scores, 3);
        if (what != 1) key_floats(&b, "tokenizer.ggml.scores", three_scores, 3);
        if (what >= 6) {
            const char *merges[1] = {what == 6 ? "ab" : "a b"};
            key_strings(&b, "tokenizer.ggml.merges", merges, 1);
        }
        if (what == 7) { /* BPE's default BOS (11) is past these 3 tokens: none */
            str(&b, "tokenizer.ggml.add_bos_token"), u32(&b, 7), put(&b, "\1", 1), b.keys++;
        }
        open_vocab(&b, cases[i].status);
        cr_assert(strstr(tl_last_error(), cases[i].message), "case %zu: %s", i, tl_last_error());
    }
}

/* The tokens that end a generation are found by their text, as llama.cpp finds them: the first
 * of them (not <|eom_id|>) is the end-of-turn token when the file names none, each is a control
 * token. */
Test(text, end_of_generation_tokens_are_found_by_their_text) {
    static gguf_buf b;
    const char *tokens[] = {"a", "b", "<|eom_id|>", "<|eot_id|>", "<|im_end|>"};
    b.n = 0, b.keys = 0;
    key_string(&b, "tokenizer.ggml.model", "llama");
    key_strings(&b, "tokenizer.ggml.tokens", tokens, 5);
    str(&b, "tokenizer.ggml.add_space_prefix"), u32(&b, 7), put(&b, "\0", 1), b.keys++;
    tl_tokenizer *t = open_vocab(&b, TL_OK);
    cr_assert_eq(tl_tokenizer_special(t, TL_TOKEN_EOT), 3, "<|eom_id|> ends a message, not a turn");
    cr_assert_eq(tl_tokenizer_special(t, TL_TOKEN_UNK), 0, "SentencePiece's default");
    for (int32_t id = 0; id < 5; ++id) cr_assert_eq(tl_tokenizer_is_end(t, id), id >= 2, "id %d", id);
    int32_t ids[8];
    cr_assert_eq(ids_of(t, "a<|im_end|>b", TL_TOKENIZE_PARSE_SPECIAL, ids), 3); /* a control token, parsed */
    cr_assert(ids[0] == 0 && ids[1] == 4 && ids[2] == 1);
    tl_tokenizer_close(t);
}

Test(text, hostile_texts_and_ids_are_statuses) {
    static gguf_buf b;
    bpe_keys(&b, "\xc4\xa0" "a b", "llama-bpe");
    tl_tokenizer *t = open_vocab(&b, TL_OK);
    int32_t ids[64];
    size_t n;
    /* llama.cpp aborts on these 4 bytes with Llama 3's vocabulary: a code point past U+10FFFF. */
    FAILS_WITH(tl_tokenize(t, "\xf4\x90\x80\x80", 4, 0, ids, 64, &n), TL_E_INVALID_ARGUMENT);
    cr_assert(strstr(tl_last_error(), "not valid UTF-8 (byte 0 of 4"), "%s", tl_last_error());
    const char *bad[] = {"\xc0\xaf", "\xed\xa0\x80", "a\xe2\x82", "\x80", "\xff", "ab\xc3(c"};
    for (int i = 0; i < 6; ++i) FAILS_WITH(tl_tokenize(t, bad[i], strlen(bad[i]), 0, ids, 64, &n), TL_E_INVALID_ARGUMENT);
    cr_assert(strstr(tl_last_error(), "not valid UTF-8 (byte 2 of 5"), "%s", tl_last_error()); /* a lead byte, then '(' */
    FAILS_WITH(tl_tokenize(t, "abc ab abc", 10, 0, ids, 1, &n), TL_E_INVALID_ARGUMENT);
    OK(tl_tokenize(t, "abc ab abc", 10, 0, NULL, 0, &n)); /* abc, Ġab, Ġab c: Llama 3's words */
    cr_assert_eq(n, 4);
    OK(tl_tokenize(t, "", 0, TL_TOKENIZE_ADD_SPECIAL, ids, 64, &n));
    cr_assert(n == 1 && ids[0] == 8);
    const int32_t out_of_range[] = {1, 9};
    char text[16];
    OK(tl_detokenize(t, NULL, 0, 0, text, sizeof text, &n)); /* no ids at all: no text */
    cr_assert(n == 0 && text[0] == 0);
    FAILS_WITH(tl_detokenize(t, out_of_range, 2, 0, text, sizeof text, &n), TL_E_INVALID_ARGUMENT);
    cr_assert(strstr(tl_last_error(), "id 1 is 9"), "%s", tl_last_error());
    const char *piece;
    FAILS_WITH(tl_token_piece(t, -1, 0, &piece, &n), TL_E_INVALID_ARGUMENT);
    FAILS_WITH(tl_token_piece(NULL, 0, 0, &piece, &n), TL_E_INVALID_ARGUMENT);
    FAILS_WITH(tl_tokenize(NULL, "a", 1, 0, ids, 64, &n), TL_E_INVALID_ARGUMENT);
    FAILS_WITH(tl_tokenizer_open(ctx, NULL, &t), TL_E_INVALID_ARGUMENT);
    tl_tokenizer_close(t);
    tl_tokenizer_close(NULL);
}

Test(text, a_stream_hands_out_whole_characters) {
    tl_text_stream s = TL_TEXT_STREAM_INIT;
    char out[64];
    size_t n;
    OK(tl_text_stream_push(&s, NULL, 0, out, sizeof out, &n)); /* no bytes: no text */
    cr_assert(n == 0 && out[0] == 0);
    REFUSED_WITH(tl_text_stream_push(&s, "a", 1, NULL, sizeof out, &n), TL_E_INVALID_ARGUMENT, "stream, text or output is NULL");
    OK(tl_text_stream_push(&s, "a\xc3", 2, out, sizeof out, &n)); /* é cut after its first byte */
    cr_assert(n == 1 && !strcmp(out, "a"));
    OK(tl_text_stream_push(&s, "\xa9!", 2, out, sizeof out, &n));
    cr_assert_str_eq(out, "\xc3\xa9!");
    OK(tl_text_stream_push(&s, "\xff" "b", 2, out, sizeof out, &n)); /* no character begins with 0xFF */
    cr_assert_str_eq(out, "\xef\xbf\xbd" "b");
    OK(tl_text_stream_push(&s, "\xe2\x82", 2, out, sizeof out, &n));
    cr_assert_eq(n, 0);
    FAILS_WITH(tl_text_stream_push(&s, "\xac", 1, out, 3, &n), TL_E_INVALID_ARGUMENT); /* € needs 4 with its NUL */
    OK(tl_text_stream_push(&s, "\xac", 1, out, 4, &n));
    cr_assert_str_eq(out, "\xe2\x82\xac");
    OK(tl_text_stream_push(&s, "\xf0\x9f\x98", 3, out, sizeof out, &n));
    OK(tl_text_stream_push(&s, "x", 1, out, sizeof out, &n)); /* cut short by another character */
    cr_assert_str_eq(out, "\xef\xbf\xbdx");
    OK(tl_text_stream_push(&s, "\xf0\x9f", 2, out, sizeof out, &n));
    OK(tl_text_stream_finish(&s, out, sizeof out, &n));
    cr_assert_str_eq(out, "\xef\xbf\xbd");
    cr_assert_eq(s.count, 0);
}

Test(text, tokenizing_again_allocates_nothing_and_open_reports_every_refusal) {
    static gguf_buf b;
    bpe_keys(&b, "\xc4\xa0" "a b", "llama-bpe");
    counting_allocator counter = {0};
    const tl_allocator a = counting_allocator_of(&counter);
    tl_context *own;
    OK(tl_context_create(&a, &own));
    tl_context *saved = ctx;
    ctx = own;
    tl_tokenizer *t = open_vocab(&b, TL_OK);
    int32_t ids[64];
    ids_of(t, "abc ab abc abcabc", 0, ids);
    const long before = counter.allocs;
    for (int i = 0; i < 10; ++i) ids_of(t, "abc ab abc abcabc", 0, ids);
    cr_assert_eq(counter.allocs, before, "tokenizing again made %ld allocator calls", counter.allocs - before);
    tl_tokenizer_close(t);
    /* Each allocation of an open refused in turn: TL_E_OUT_OF_MEMORY, nothing kept. */
    for (long k = 1;; ++k) {
        counter.fail_at = counter.allocs + 1;
        tl_tokenizer *u = NULL;
        const long long live = counter.live_bytes;
        char path[512];
        snprintf(path, sizeof path, "%s/vocab.gguf", dir);
        counter.fail_at = 0;
        tl_gguf_file *g;
        OK(tl_gguf_open(ctx, path, &g));
        counter.fail_at = counter.allocs + k;
        const tl_status st = tl_tokenizer_open(ctx, g, &u);
        counter.fail_at = 0;
        tl_gguf_close(g);
        if (st == TL_OK) {
            tl_tokenizer_close(u);
            cr_assert_eq(counter.live_bytes, live);
            cr_assert_gt(k, 3);
            break;
        }
        cr_assert_eq(st, TL_E_OUT_OF_MEMORY, "refusal %ld: %s", k, tl_last_error());
        cr_assert_eq(counter.live_bytes, live, "refusal %ld left %lld bytes", k, counter.live_bytes - live);
    }
    ctx = saved;
    tl_context_destroy(own);
    cr_assert_eq(counter.live_bytes, 0);
}

/* The merge loop's rules that only a crafted vocabulary reaches (the real ones are compared with
 * llama.cpp's in the llamacpp stage): SentencePiece's equal scores join the leftmost pair first; a
 * queued pair whose side has joined another since is skipped, not joined as text no rule made;
 * Llama 3's pre-tokenizer takes a word that is a token whole, merges or not. */
static void small_bpe_keys(gguf_buf *b, const char *pre, const char *const *merges, size_t n_merges) {
    const char *tokens[] = {"a", "b", "c", "ab", "bc", "abc", "ca"};
    const int32_t types[] = {1, 1, 1, 1, 1, 1, 1};
    gpt2_keys(b, pre, tokens, types, 7, merges, n_merges);
    key_u32(b, "tokenizer.ggml.bos_token_id", 0); /* llama-bpe adds one */
}

Test(text, merges_take_the_leftmost_tie_skip_stale_pairs_and_whole_words) {
    static gguf_buf b;
    int32_t ids[64];
    /* "abc": b+c (rank 0) first; a+b (rank 1) was queued before and its right side is bc now:
     * skipped, so a, bc (not the text "abc", which is a token but no rule makes it). */
    const char *merges[] = {"b c", "a b"};
    small_bpe_keys(&b, "gpt-2", merges, 2);
    tl_tokenizer *t = open_vocab(&b, TL_OK);
    cr_assert_eq(ids_of(t, "abc", 0, ids), 2);
    cr_assert(ids[0] == 0 && ids[1] == 4, "a, bc: got %d, %d", ids[0], ids[1]);
    /* "ca" has no rule: c, a under gpt-2's pre-tokenizer ... */
    cr_assert_eq(ids_of(t, "ca", 0, ids), 2);
    tl_tokenizer_close(t);
    /* ... and the token ca whole under Llama 3's (llama.cpp's ignore_merges). */
    small_bpe_keys(&b, "llama-bpe", merges, 2);
    t = open_vocab(&b, TL_OK);
    cr_assert_eq(ids_of(t, "ca", 0, ids), 1);
    cr_assert_eq(ids[0], 6);
    tl_tokenizer_close(t);
    /* BPE's ties too: "aaaaa" with one rule a+a: four pairs of one rank, the leftmost first each
     * time: aa, aa, a (the rightmost would give a, aa, aa). */
    const char *a_tokens[] = {"a", "aa"};
    const int32_t a_types[] = {1, 1};
    const char *a_merges[] = {"a a"};
    gpt2_keys(&b, "gpt-2", a_tokens, a_types, 2, a_merges, 1);
    t = open_vocab(&b, TL_OK);
    cr_assert_eq(ids_of(t, "aaaaa", 0, ids), 3);
    cr_assert(ids[0] == 1 && ids[1] == 1 && ids[2] == 0, "aa, aa, a: got %d %d %d", ids[0], ids[1], ids[2]);
    tl_tokenizer_close(t);

    /* SentencePiece: "aaa" with "aa" (score -0.1) above "\u2581a": the pairs (a,a) at 1-2 and 2-3
     * tie, the leftmost joins: \u2581, aa, a (the rightmost would leave \u2581a, aa). */
    static char byte_names[256][8];
    const char *tokens[SPM_FIRST + 3];
    float scores[SPM_FIRST + 3];
    int32_t types[SPM_FIRST + 3];
    tokens[0] = "<unk>", tokens[1] = "<s>", tokens[2] = "</s>";
    types[0] = 2, types[1] = types[2] = 3;
    for (int i = 0; i < 256; ++i) snprintf(byte_names[i], 8, "<0x%02X>", i), tokens[3 + i] = byte_names[i], types[3 + i] = 6;
    for (int i = 0; i < SPM_FIRST + 3; ++i) scores[i] = 0;
    tokens[SPM_FIRST] = "\xe2\x96\x81", tokens[SPM_FIRST + 1] = "a", tokens[SPM_FIRST + 2] = "aa";
    scores[SPM_FIRST] = -1, scores[SPM_FIRST + 1] = -2, scores[SPM_FIRST + 2] = -0.1f;
    types[SPM_FIRST] = types[SPM_FIRST + 1] = types[SPM_FIRST + 2] = 1;
    const char *with_prefix[SPM_FIRST + 4];
    memcpy(with_prefix, tokens, sizeof tokens);
    with_prefix[SPM_FIRST + 3] = "\xe2\x96\x81" "a";
    float prefix_scores[SPM_FIRST + 4];
    int32_t prefix_types[SPM_FIRST + 4];
    memcpy(prefix_scores, scores, sizeof scores), memcpy(prefix_types, types, sizeof types);
    prefix_scores[SPM_FIRST + 3] = -4, prefix_types[SPM_FIRST + 3] = 1;
    b.n = 0, b.keys = 0;
    key_string(&b, "tokenizer.ggml.model", "llama");
    key_strings(&b, "tokenizer.ggml.tokens", with_prefix, SPM_FIRST + 4);
    key_floats(&b, "tokenizer.ggml.scores", prefix_scores, SPM_FIRST + 4);
    key_ints(&b, "tokenizer.ggml.token_type", prefix_types, SPM_FIRST + 4);
    t = open_vocab(&b, TL_OK);
    cr_assert_eq(ids_of(t, "aaa", 0, ids), 3);
    cr_assert(ids[0] == SPM_FIRST && ids[1] == SPM_FIRST + 2 && ids[2] == SPM_FIRST + 1, "\u2581, aa, a: got %d %d %d",
              ids[0], ids[1], ids[2]);
    tl_tokenizer_close(t);
}

/* White space as llama.cpp counts it includes NEL (U+0085), which PCRE2's \s leaves out: in
 * "a!" NEL the pre-tokenizer cuts "!" from NEL, so the merge of "!" with NEL's first byte-level
 * character (Â, for byte 0xC2; 0x85 is ħ) never applies.  Were NEL punctuation, "!Âħ" would be
 * one piece and merge.  Both gpt-2's and Llama 3's pre-tokenizers. */
Test(text, nel_is_white_space_to_the_pre_tokenizer) {
    static gguf_buf b;
    const char *tokens[] = {"a", "!", "\xc3\x82", "\xc4\xa7", "!\xc3\x82"}; /* a ! Â ħ !Â */
    const int32_t types[] = {1, 1, 1, 1, 1};
    const char *merges[] = {"! \xc3\x82"};
    const char *pres[] = {"gpt-2", "llama-bpe"};
    for (int p = 0; p < 2; ++p) {
        gpt2_keys(&b, pres[p], tokens, types, 5, merges, 1);
        key_u32(&b, "tokenizer.ggml.bos_token_id", 0);
        tl_tokenizer *t = open_vocab(&b, TL_OK);
        int32_t ids[8];
        const size_t n = ids_of(t, "a!\xc2\x85", 0, ids);
        cr_assert_eq(n, 4, "%s: %zu ids", pres[p], n);
        cr_assert(ids[0] == 0 && ids[1] == 1 && ids[2] == 2 && ids[3] == 3, "%s: a ! Â ħ, got %d %d %d %d", pres[p],
                  ids[0], ids[1], ids[2], ids[3]);
        tl_tokenizer_close(t);
    }
}
