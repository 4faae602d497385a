/* tensorlife: a Llama-family model as a runner: open a file, start sessions, feed them text or
 * token ids, sample what comes next.  Part of <tensorlife/tl.h>.
 *
 * A model is opened from a GGUF file as llama.cpp writes one (general.architecture "llama",
 * any weight dtype tensorlife holds, read where the file lies) or from a Hugging Face
 * LlamaForCausalLM folder (config.json beside model.safetensors, mapped), or converted once
 * at open (tl_model_open_with: an f32 file's weights as q8_0, say).  Its weights are
 * read-only and shared without a copy by every session; sessions may run on different threads
 * at once (each session on one thread at a time).
 *
 * A session has a context of its own, made with the opening context's allocator and executor,
 * so every byte it uses comes from the caller's allocator and its scopes never mix with the
 * caller's: the KV cache (f32, f16 or bf16) and the residual rows between layers in a
 * long-lived scope, each step's tensors in a scope reset after each layer (a step holds one
 * layer's tensors at a time, whatever the depth).  Once the first steps have grown them, a step
 * allocates nothing: feeding, sampling and turning tokens into text included.
 *
 * Positions are counted in tokens fed: a session holds at most context_length of them; feeding
 * past that is TL_E_SHAPE naming the limit (never a silent wrap); tl_session_rewind keeps a
 * prefix (a chat's earlier turns) and drops the rest. */
#ifndef TENSORLIFE_TL_MODEL_H
#define TENSORLIFE_TL_MODEL_H

#include "tl_text.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tl_model tl_model;
typedef struct tl_session tl_session;

/* path: a GGUF file (known by its magic, whatever its name), or a folder (or its
 * model.safetensors) holding a Hugging Face Llama. */
TL_API tl_status tl_model_open(tl_context *ctx, const char *path, tl_model **out);
/* A GGUF model in size bytes the caller holds (32-byte aligned; tl_gguf_open_memory): they must
 * stay valid and unchanged until the model and its last session are closed. */
TL_API tl_status tl_model_open_memory(tl_context *ctx, const void *data, size_t size, tl_model **out);

/* How tl_model_open_with opens a model (tl_model_open: the defaults). */
typedef struct tl_model_options {
    uint32_t struct_size;
    tl_dtype weights_dtype; /* 0: every weight read where the file holds it (no copy); else the
                             * projections, the output head and the embedding table converted
                             * at open into copies the model owns (from ctx's allocator; the
                             * default one maps them on huge pages where the system grants them,
                             * docs/memory-and-scopes.md), read by every session: an f32 file's
                             * weights as q8_0, say */
    int32_t repack;         /* 0: none; 1: the q4_0, q8_0, q4_K, q5_K and q6_K projections and head also
                             * copied at open, sixteen rows interleaved block by block, for decode steps
                             * (fewer than 8 tokens a product), where this CPU has that kernel
                             * (AVX-512 VNNI): the same bits, one stream of memory a product;
                             * prompts still read the weights as above.  Every other projection
                             * the file holds (f32, f16, bf16, the rest, or all on a CPU without
                             * that kernel) copied as stored, read by every step.  The copies are
                             * those weights' size again, from ctx's allocator as above
                             * (tl_model_info.repacked_bytes) */
} tl_model_options;
#define TL_MODEL_OPTIONS_INIT {sizeof(tl_model_options), (tl_dtype)0, 0}
/* options may be NULL (the defaults).  A dtype the products do not take, or rows that are not
 * whole blocks of it, is refused with the tensor's name. */
TL_API tl_status tl_model_open_with(tl_context *ctx, const char *path, const tl_model_options *options, tl_model **out);
/* TL_E_BUSY while sessions of the model are open (close them first); NULL is a no-op. */
TL_API tl_status tl_model_close(tl_model *m);
/* The model's tokenizer (owned by the model), or NULL when the file carries no vocabulary. */
TL_API tl_tokenizer *tl_model_tokenizer(const tl_model *m);

typedef struct tl_model_info {
    uint32_t struct_size;
    int32_t vocab, d_model, layers, heads, kv_heads, ffn;
    int32_t context_length; /* what the file says the model was trained for */
    tl_dtype weights_dtype; /* the projections' (attn_q's) */
    uint64_t repacked_bytes; /* the decode copies tl_model_options.repack made (0: none) */
} tl_model_info;
#define TL_MODEL_INFO_INIT {sizeof(tl_model_info), 0, 0, 0, 0, 0, 0, 0, (tl_dtype)0, 0}
TL_API tl_status tl_model_info_get(const tl_model *m, tl_model_info *out);

typedef struct tl_session_options {
    uint32_t struct_size;
    int32_t context_length; /* tokens the KV cache holds; 0: the model's, at most 4096 */
    tl_dtype kv_dtype;      /* TL_F32 (0 means it), TL_F16 or TL_BF16 */
    int32_t max_chunk;      /* the most tokens one tl_session_feed computes at once (longer
                             * feeds run in chunks); 0: 64 */
    int32_t ambient;        /* 0: scoped (above); 1: the KV cache and each step's tensors are
                             * ambient, each step's freed one by one after it: no scope at all,
                             * allocator calls every step, the same bits (the reference a
                             * scoped run is checked against) */
} tl_session_options;
#define TL_SESSION_OPTIONS_INIT {sizeof(tl_session_options), 0, TL_F32, 0, 0}

/* ctx lends its allocator and executor; the session does not use ctx itself afterwards.
 * options may be NULL (the defaults). */
TL_API tl_status tl_session_open(tl_context *ctx, tl_model *m, const tl_session_options *options, tl_session **out);
/* NULL is a no-op. */
TL_API void tl_session_close(tl_session *s);
/* Tokens fed so far (the position of the next one). */
TL_API int32_t tl_session_position(const tl_session *s);
TL_API int32_t tl_session_context_length(const tl_session *s);
/* The step scope's figures just before its last reset (slab, peak and used bytes, grow
 * events): what a scoped step costs (its peak: the largest layer's).  All zero before the first
 * step and in ambient mode. */
TL_API tl_status tl_session_step_stats(const tl_session *s, tl_scope_stats *out);
/* The ids fed so far, in order: *ids points into the session, valid until it changes. */
TL_API tl_status tl_session_history(const tl_session *s, const int32_t **ids, size_t *n);

/* Runs ids (n >= 1) through the model at the next positions, as batches of at most max_chunk
 * tokens (an engine that spreads a long prompt over frames feeds a chunk a frame); afterwards
 * the logits are those after the last id. */
TL_API tl_status tl_session_feed(tl_session *s, const int32_t *ids, size_t n);
/* Tokenizes text (TL_TOKENIZE_* flags) with the model's tokenizer and feeds it. */
TL_API tl_status tl_session_feed_text(tl_session *s, const char *text, size_t length, unsigned flags);
/* The logits after the last token fed: *n (the vocabulary's size) floats, valid until the
 * next feed.  TL_E_SHAPE before anything was fed. */
TL_API tl_status tl_session_logits(const tl_session *s, const float **logits, size_t *n);
/* Keeps the first keep tokens and forgets the rest (keep <= position); the logits become those
 * after token keep - 1, computed again. */
TL_API tl_status tl_session_rewind(tl_session *s, int32_t keep);

/* How the next token is chosen from the logits, in llama.cpp's order: repetition penalty over
 * the last repeat_last_n tokens fed, then greedy when temperature <= 0, else top-k, top-p,
 * min-p, temperature, and a draw from the rest.  The draw's random numbers come from seed
 * alone (a counter-based generator), and the logits never depend on the thread count, the
 * binding or the chunk size: the same seed gives the same tokens on every thread count and
 * binding, and on every machine of the same SIMD target (tl_simd_target(); another target's
 * products may differ in the last bits, and so, at a near tie, a token). */
typedef struct tl_sampler {
    uint32_t struct_size;
    float temperature;    /* <= 0: greedy (argmax, the first on a tie) */
    int32_t top_k;        /* <= 0: off */
    float top_p;          /* >= 1: off */
    float min_p;          /* <= 0: off */
    float repeat_penalty; /* 1: off (llama.cpp's: positive logits divided, negative multiplied) */
    int32_t repeat_last_n;
    uint64_t seed;
} tl_sampler;
#define TL_SAMPLER_GREEDY {sizeof(tl_sampler), 0.0f, 0, 1.0f, 0.0f, 1.0f, 64, 0}
#define TL_SAMPLER_INIT {sizeof(tl_sampler), 0.8f, 40, 0.95f, 0.05f, 1.0f, 64, 0}

/* The next token from the current logits; the session's draw counter moves on by one. */
TL_API tl_status tl_session_sample(tl_session *s, const tl_sampler *sampler, int32_t *token);

/* One step of generation: samples a token; if it ends generation (tl_tokenizer_is_end) it is
 * returned and not fed, *done set to 1; else it is fed and its text, as whole UTF-8 characters
 * (a character cut between tokens comes out with the token that finishes it), is written
 * NUL-terminated into text.  Too small a capacity (256 bytes suffice for every Llama
 * vocabulary) is TL_E_INVALID_ARGUMENT and leaves the session as it was. */
TL_API tl_status tl_session_generate(tl_session *s, const tl_sampler *sampler, int32_t *token, int *done, char *text,
                                     size_t capacity, size_t *length);

#ifdef __cplusplus
}
#endif
#endif
