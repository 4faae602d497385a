/* A small random Llama as GGUF for the runner's tests (tests/test_model.c, tests/threads/):
 * SentencePiece vocabulary of 271 tokens, d 32, 2 layers, 4 heads over 2 KV heads, f32. */
#ifndef TL_TESTS_TINY_LLAMA_H
#define TL_TESTS_TINY_LLAMA_H
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gguf_builder.h"

enum { D = 32, LAYERS = 2, HEADS = 4, KV_HEADS = 2, FFN = 48, WORDS = 12, VOCAB = 259 + WORDS };
static const char *const words[WORDS] = {"\xe2\x96\x81", "a", "b", "c", "\xe2\x96\x81" "a", "ab", "\xe2\x96\x81" "ab",
                                         "abc", "\xe2\x96\x81" "c", "ca", "bc", "\xe2\x96\x81" "abc"};

static float lcg(unsigned *s) { return (float)((*s = *s * 1664525u + 1013904223u) >> 8) / 8388608.0f - 1.0f; }

static void random_tensor(gguf_builder *b, const char *name, int64_t rows, int64_t cols, unsigned *seed, float scale,
                          float offset) {
    const int64_t n = rows * (cols ? cols : 1);
    float *v = (float *)malloc(sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < n; ++i) v[i] = offset + scale * lcg(seed);
    gb_tensor_f32(b, name, rows, cols, v);
    free(v);
}

/* One thing wrong with the model, for the loader's refusals: a hyperparameter key written with
 * value instead (left out when value < 0, written as a string when as_string), a tensor written as
 * rows x cols instead (cols 0: a vector; left out when rows is 0), or the embedding table and the
 * head both of vocab_rows rows (not the vocabulary's). */
typedef struct tiny_spoil {
    const char *key;
    double value;
    int as_string;
    const char *tensor;
    int64_t rows, cols;
    int64_t vocab_rows;
} tiny_spoil;

static void spoiled_u32(gguf_builder *b, const tiny_spoil *spoil, const char *key, uint32_t value) {
    if (!spoil || !spoil->key || strcmp(spoil->key, key) != 0) gb_key_u32(b, key, value);
    else if (spoil->as_string) gb_key_string(b, key, "twelve");
    else if (spoil->value >= 0) gb_key_u32(b, key, (uint32_t)spoil->value);
}
static void spoiled_f32(gguf_builder *b, const tiny_spoil *spoil, const char *key, float value) {
    if (!spoil || !spoil->key || strcmp(spoil->key, key) != 0) gb_key_f32(b, key, value);
    else if (spoil->value >= 0) gb_key_f32(b, key, (float)spoil->value);
}
static void spoiled_tensor(gguf_builder *b, const tiny_spoil *spoil, const char *name, int64_t rows, int64_t cols,
                           unsigned *seed, float scale, float offset) {
    if (spoil && spoil->tensor && strcmp(spoil->tensor, name) == 0) {
        if (!spoil->rows) return;
        rows = spoil->rows, cols = spoil->cols;
    }
    random_tensor(b, name, rows, cols, seed, scale, offset);
}

/* The model at path (0, or -1 when it cannot be written), with one thing spoiled (spoil NULL: none)
 * for the refusals, output.weight scaled (0: every logit 0, all tied), an MLP ffn wide, layers
 * deep. */
static int write_tiny_llama_deep(const char *path, const char *arch, const tiny_spoil *spoil, float output_scale,
                                 int64_t ffn, int layers) {
    gguf_builder b = {0};
    static char byte_names[256][8];
    const char *tokens[VOCAB];
    float scores[VOCAB];
    int32_t types[VOCAB];
    tokens[0] = "<unk>", tokens[1] = "<s>", tokens[2] = "</s>";
    types[0] = 2, types[1] = types[2] = 3;
    for (int i = 0; i < 256; ++i) snprintf(byte_names[i], 8, "<0x%02X>", i), tokens[3 + i] = byte_names[i], types[3 + i] = 6;
    for (int i = 0; i < VOCAB; ++i) scores[i] = i < 259 ? 0.0f : -(float)(i - 259);
    for (int i = 0; i < WORDS; ++i) tokens[259 + i] = words[i], types[259 + i] = 1;
    gb_key_string(&b, "general.architecture", arch);
    spoiled_u32(&b, spoil, "llama.embedding_length", D);
    spoiled_u32(&b, spoil, "llama.block_count", (uint32_t)layers);
    spoiled_u32(&b, spoil, "llama.attention.head_count", HEADS);
    spoiled_u32(&b, spoil, "llama.attention.head_count_kv", KV_HEADS);
    spoiled_u32(&b, spoil, "llama.feed_forward_length", (uint32_t)ffn);
    spoiled_u32(&b, spoil, "llama.context_length", 64);
    spoiled_f32(&b, spoil, "llama.attention.layer_norm_rms_epsilon", 1e-5f);
    spoiled_f32(&b, spoil, "llama.rope.freq_base", 10000.0f);
    gb_key_string(&b, "tokenizer.ggml.model", "llama");
    gb_key_strings(&b, "tokenizer.ggml.tokens", tokens, VOCAB);
    gb_key_floats(&b, "tokenizer.ggml.scores", scores, VOCAB);
    gb_key_ints(&b, "tokenizer.ggml.token_type", types, VOCAB);
    unsigned seed = 7;
    const int64_t kvw = D / HEADS * KV_HEADS;
    const int64_t vocab_rows = spoil && spoil->vocab_rows ? spoil->vocab_rows : VOCAB;
    spoiled_tensor(&b, spoil, "token_embd.weight", vocab_rows, D, &seed, 1.0f, 0);
    char n[64];
    for (int l = 0; l < layers; ++l) {
        const struct {
            const char *name;
            int64_t rows, cols;
        } w[9] = {{"attn_norm", D, 0},   {"attn_q", D, D}, {"attn_k", kvw, D},
                  {"attn_v", kvw, D},    {"attn_output", D, D},              {"ffn_norm", D, 0},
                  {"ffn_gate", ffn, D},  {"ffn_up", ffn, D},                 {"ffn_down", D, ffn}};
        for (int i = 0; i < 9; ++i) {
            snprintf(n, sizeof n, "blk.%d.%s.weight", l, w[i].name);
            spoiled_tensor(&b, spoil, n, w[i].rows, w[i].cols, &seed, w[i].cols ? 1.0f / sqrtf((float)w[i].cols) : 0.25f,
                           w[i].cols ? 0.0f : 1.0f);
        }
    }
    spoiled_tensor(&b, spoil, "output_norm.weight", D, 0, &seed, 0.25f, 1.0f);
    spoiled_tensor(&b, spoil, "output.weight", vocab_rows, D, &seed, output_scale, 0);
    return gb_write(&b, path);
}
static int write_tiny_llama_shaped(const char *path, const char *arch, const tiny_spoil *spoil, float output_scale,
                                   int64_t ffn) {
    return write_tiny_llama_deep(path, arch, spoil, output_scale, ffn, LAYERS);
}
static int write_tiny_llama_spoiled(const char *path, const char *arch, const tiny_spoil *spoil, float output_scale) {
    return write_tiny_llama_shaped(path, arch, spoil, output_scale, FFN);
}
static int write_tiny_llama_scaled(const char *path, const char *arch, int64_t q_rows, float output_scale) {
    const tiny_spoil q = {NULL, 0, 0, "blk.0.attn_q.weight", q_rows, D};
    return write_tiny_llama_spoiled(path, arch, q_rows == D ? NULL : &q, output_scale);
}
static int write_tiny_llama(const char *path, const char *arch, int64_t q_rows) {
    return write_tiny_llama_scaled(path, arch, q_rows, 0.5f);
}

#endif
