/* The demo's two architectures:
 *   toy:   a small GPT-style model written here on the library's ops: embedding, N blocks of
 *          (rmsnorm, multi-head attention over a KV cache, rmsnorm, silu MLP), final rmsnorm,
 *          logits, greedy argmax;
 *   llama: the Llama family through the library's model runner (tl_model.h, llama_runner.c);
 *          here only its random weights (llama.c).
 *
 * The toy's step code runs in both memory modes:
 *   ambient: every tensor a step makes is ambient and freed at the end of the step;
 *   scoped:  every tensor a step makes lives in the "decode-step" scope, reset after the step.
 * The KV cache is written in place with tl_copy_into; in scoped mode it lives in the outer,
 * long-lived "kv-cache" scope. */
#ifndef TL_DECODE_MODEL_H
#define TL_DECODE_MODEL_H

#include <stdint.h>
#include <tensorlife/tl.h>

#include "weight_block.h"

typedef enum model_arch { ARCH_TOY = 0, ARCH_LLAMA = 1 } model_arch;

typedef struct model_config {
    int d_model, layers, heads, vocab, tokens; /* tokens: the KV cache's length */
    unsigned seed;
    int unfused_attention; /* 1: the reference path, a masked softmax over the whole cache */
    model_arch arch;
    int kv_heads, ffn; /* llama: key/value heads (divide heads), the MLP's width */
    double rope_theta, norm_eps;
    tl_dtype kv_dtype; /* the KV cache: f32, or f16/bf16 (llama) */
} model_config;

typedef struct layer_weights {
    tl_tensor attn_norm, wq, wk, wv, wo, mlp_norm, w_up, w_down;
    tl_tensor w_gate; /* llama only; llama's projections are their [out, in] rows */
} layer_weights;

typedef struct model {
    model_config cfg;
    tl_tensor embed, final_norm, lm_head;
    layer_weights *layer;
    tl_dtype weights_dtype; /* TL_F32, or what model_convert made the projections */
    tl_tensor *stored;      /* model_convert: the [n, k] weights the projections' views read */
    int stored_count;
    weight_block block; /* model_convert: where the stored weights lie */
} model;

typedef enum memory_mode { MODE_AMBIENT = 0, MODE_SCOPED = 1 } memory_mode;

/* Per-run state: the caches and, in ambient mode, the step's tensors to free. */
typedef struct decoder {
    tl_context *ctx;
    const model *m;
    memory_mode mode;
    tl_scope cache_scope, step_scope;
    tl_tensor *k_cache, *v_cache; /* [tokens, d_model] per layer */
    tl_tensor *made;              /* ambient mode: what this step made */
    float *mask_row;              /* host buffer for the step's causal mask */
    tl_scope_stats last_step;     /* scoped mode: the step scope's stats just before its reset */
    int made_count, made_capacity;
} decoder;

/* Reports a failing call and exits: the demo and benchmark treat any failure as fatal. */
#include "check.h" /* TL_CHECK */

/* Weights from the seed (ambient tensors).  model_free frees them. */
void model_init_random(tl_context *ctx, const model_config *cfg, model *m);
void model_free(tl_context *ctx, model *m);
/* The weights as models store them (dt: f32, f16, bf16, q8_0, q4_0): each [k, n] projection and
 * the logits' head become their [n, k] rows in dt, used through a transposed view (tl_matmul
 * reads them as stored, as it reads Hugging Face and GGUF weights); the embedding table's rows
 * are dt and gathered as f32.  The norms stay f32. */
void model_convert(tl_context *ctx, model *m, tl_dtype dt);
/* Bytes of weights one step reads (each projection and the head once, one embedding row). */
double model_weight_bytes(const model *m);
/* Weights by name in a safetensors file: embed [vocab, d], final_norm [d], lm_head [d, vocab],
 * layers.L.{attn_norm, wq, wk, wv, wo, mlp_norm, w_up, w_down}.  Loading takes d_model, vocab
 * and the layer count from the file (cfg->heads and cfg->tokens from the caller); it returns
 * 0, or -1 with a message on stderr for a file that is not such a model. */
int model_load(tl_context *ctx, const char *path, model_config *cfg, model *m);
void model_save(tl_context *ctx, const model *m, const char *path);

/* A tensor of random f32 values in [-scale, scale) from the seed (an ambient tensor). */
tl_tensor random_tensor(tl_context *ctx, int ndim, const int64_t *shape, float scale, unsigned *seed);

/* llama.c: random Llama weights from cfg (seed, d_model, layers, heads, kv_heads, ffn, vocab),
 * as ambient tensors; saved as a Hugging Face folder (path: its model.safetensors, config.json
 * written beside it; 0, or -1 with a message on stderr).  The demo runs them through the
 * library's model runner (llama_runner.c). */
void llama_init_random(tl_context *ctx, const model_config *cfg, model *m);
int llama_save_hf(tl_context *ctx, const model *m, const char *path);
void llama_free(tl_context *ctx, model *m);

void decoder_open(decoder *d, tl_context *ctx, const model *m, memory_mode mode);
/* One token at position pos: returns the next token; logits (vocab floats) are copied out when
 * not NULL.  Ends with the step's tensors dead (reset or freed). */
int32_t decoder_step(decoder *d, int32_t token, int pos, float *logits);
/* Every tensor a step makes goes through here (ambient mode frees them at the end of the step). */
tl_tensor decoder_keep(decoder *d, tl_tensor t);
/* A call that makes `out` (a local of that name), checked and its result kept. */
#define OP(call_with_out) (TL_CHECK(call_with_out), decoder_keep(d, out))
void decoder_close(decoder *d);

#endif
