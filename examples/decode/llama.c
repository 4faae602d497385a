/* The Llama architecture on tensorlife: RMSNorm, grouped-query attention with RoPE over a KV
 * cache, SwiGLU MLP, final norm and output head.  Every projection is kept as the [out, in] rows
 * its file stores (any weight dtype, read where it lies) and multiplied through a transposed
 * view, so Hugging Face and GGUF weights run without a copy.  Hugging Face checkpoints rotate
 * halves; llama.cpp permutes q and k for interleaved pairs when it writes GGUF, so a model and
 * its GGUF conversion compute the same tokens. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

/* ---- weights ----------------------------------------------------------------------------- */

static void count_weight_bytes(tl_context *ctx, model *m);

static tl_tensor random_rows(tl_context *ctx, int64_t rows, int64_t cols, unsigned *seed) {
    const int64_t shape[2] = {rows, cols};
    return random_tensor(ctx, 2, shape, 1.0f / sqrtf((float)cols), seed);
}

/* A norm's weight near 1 (not all ones, so that a reference which ignored it would differ). */
static tl_tensor random_norm(tl_context *ctx, int64_t d, unsigned *seed) {
    tl_tensor w, one, r = random_tensor(ctx, 1, &d, 0.25f, seed);
    TL_CHECK(tl_tensor_ones(ctx, TL_F32, 1, &d, &one));
    TL_CHECK(tl_add(ctx, one, r, &w));
    TL_CHECK(tl_tensor_free(ctx, r));
    TL_CHECK(tl_tensor_free(ctx, one));
    return w;
}

void llama_init_random(tl_context *ctx, const model_config *cfg, model *m) {
    memset(m, 0, sizeof *m);
    m->cfg = *cfg;
    m->weights_dtype = TL_F32;
    unsigned seed = cfg->seed;
    const int64_t d = cfg->d_model, hd = d / cfg->heads, kvw = hd * cfg->kv_heads, ffn = cfg->ffn;
    const int64_t embed_shape[2] = {cfg->vocab, d};
    m->embed = random_tensor(ctx, 2, embed_shape, 1.0f, &seed);
    m->layer = tl_check_alloc(calloc((size_t)cfg->layers, sizeof *m->layer), "m->layer");
    for (int l = 0; l < cfg->layers; ++l) {
        layer_weights *w = &m->layer[l];
        w->attn_norm = random_norm(ctx, d, &seed);
        w->wq = random_rows(ctx, d, d, &seed);
        w->wk = random_rows(ctx, kvw, d, &seed);
        w->wv = random_rows(ctx, kvw, d, &seed);
        w->wo = random_rows(ctx, d, d, &seed);
        w->mlp_norm = random_norm(ctx, d, &seed);
        w->w_gate = random_rows(ctx, ffn, d, &seed);
        w->w_up = random_rows(ctx, ffn, d, &seed);
        w->w_down = random_rows(ctx, d, ffn, &seed);
    }
    m->final_norm = random_norm(ctx, d, &seed);
    m->lm_head = random_rows(ctx, cfg->vocab, d, &seed);
    count_weight_bytes(ctx, m);
}

/* Each weight of a layer, in one order for every loop below (and its names in both formats). */
enum { LAYER_TENSORS = 9 };
static tl_tensor *layer_tensor(layer_weights *w, int i) {
    tl_tensor *all[LAYER_TENSORS] = {&w->attn_norm, &w->wq,     &w->wk,   &w->wv,    &w->wo,
                                     &w->mlp_norm,  &w->w_gate, &w->w_up, &w->w_down};
    return all[i];
}
static const char *const hf_names[LAYER_TENSORS] = {"input_layernorm",  "self_attn.q_proj", "self_attn.k_proj",
                                                    "self_attn.v_proj", "self_attn.o_proj", "post_attention_layernorm",
                                                    "mlp.gate_proj",    "mlp.up_proj",      "mlp.down_proj"};
static const char *const gguf_names[LAYER_TENSORS] = {"attn_norm", "attn_q",   "attn_k", "attn_v",  "attn_output",
                                                      "ffn_norm",  "ffn_gate", "ffn_up", "ffn_down"};

static int tied(const model *m) { return m->lm_head.bits == m->embed.bits; }

void llama_free(tl_context *ctx, model *m) {
    for (int l = 0; l < m->cfg.layers; ++l)
        for (int i = 0; i < LAYER_TENSORS; ++i) TL_CHECK(tl_tensor_free(ctx, *layer_tensor(&m->layer[l], i)));
    if (!tied(m)) TL_CHECK(tl_tensor_free(ctx, m->lm_head));
    TL_CHECK(tl_tensor_free(ctx, m->embed));
    TL_CHECK(tl_tensor_free(ctx, m->final_norm));
    if (m->token_text)
        for (int i = 0; i < m->cfg.vocab; ++i) free(m->token_text[i]);
    free(m->token_text);
    free(m->layer);
    if (m->block.base) weight_block_close(&m->block);
}

static tl_dtype dtype_of(tl_context *ctx, tl_tensor t) {
    tl_tensor_info info = TL_TENSOR_INFO_INIT;
    TL_CHECK(tl_tensor_info_get(ctx, t, &info));
    return info.dtype;
}

/* *t in dt (through f32 when it is in another storage dtype); the old tensor is freed.  Whether
 * it was converted (else it stays as it was, over a file's mapping or not). */
static int convert_in_place(tl_context *ctx, tl_tensor *t, tl_dtype dt) {
    const tl_dtype from = dtype_of(ctx, *t);
    if (from == dt) return 0;
    tl_tensor f32 = *t, out;
    if (from != TL_F32) TL_CHECK(tl_convert(ctx, *t, TL_F32, &f32));
    if (dt != TL_F32)
        TL_CHECK(tl_convert(ctx, f32, dt, &out));
    else
        out = f32;
    if (f32.bits != out.bits && f32.bits != t->bits) TL_CHECK(tl_tensor_free(ctx, f32));
    TL_CHECK(tl_tensor_free(ctx, *t));
    *t = out;
    return 1;
}

void llama_convert(tl_context *ctx, model *m, tl_dtype dt) {
    m->weights_dtype = dt;
    /* The converted projections (and head), in the order a step reads them, then into one block. */
    tl_tensor **converted = tl_check_alloc(malloc(sizeof(tl_tensor *) * (size_t)(LAYER_TENSORS * m->cfg.layers + 1)), "converted");
    int count = 0;
    for (int l = 0; l < m->cfg.layers; ++l)
        for (int i = 0; i < LAYER_TENSORS; ++i) {
            tl_tensor *t = layer_tensor(&m->layer[l], i);
            if (i != 0 && i != 5 && convert_in_place(ctx, t, dt)) converted[count++] = t; /* not the norms */
        }
    const int share = tied(m);
    convert_in_place(ctx, &m->embed, dt); /* rows gathered, not streamed: left where it is */
    if (share)
        m->lm_head = m->embed;
    else if (convert_in_place(ctx, &m->lm_head, dt))
        converted[count++] = &m->lm_head;
    if (count) {
        tl_tensor *tensors = tl_check_alloc(malloc(sizeof(tl_tensor) * (size_t)count), "tensors");
        for (int i = 0; i < count; ++i) tensors[i] = *converted[i];
        weight_block_open(ctx, &m->block, tensors, count);
        for (int i = 0; i < count; ++i) *converted[i] = weight_block_take(ctx, &m->block, *converted[i]);
        free(tensors);
    }
    free(converted);
    count_weight_bytes(ctx, m);
}

static double bytes_of(tl_context *ctx, tl_tensor t) {
    tl_tensor_info info = TL_TENSOR_INFO_INIT;
    TL_CHECK(tl_tensor_info_get(ctx, t, &info));
    int64_t block, n = 1;
    size_t bytes;
    TL_CHECK(tl_dtype_block(info.dtype, &block, &bytes));
    for (int i = 0; i < info.ndim; ++i) n *= info.shape[i];
    return (double)n / (double)block * (double)bytes;
}

/* Bytes one step reads: every projection and the head once, one embedding row, the norms. */
static void count_weight_bytes(tl_context *ctx, model *m) {
    double total = 0;
    for (int l = 0; l < m->cfg.layers; ++l)
        for (int i = 0; i < LAYER_TENSORS; ++i) total += bytes_of(ctx, *layer_tensor(&m->layer[l], i));
    total += bytes_of(ctx, m->lm_head) + bytes_of(ctx, m->final_norm);
    total += bytes_of(ctx, m->embed) / m->cfg.vocab;
    m->weight_bytes = total;
}

double llama_weight_bytes(const model *m) { return m->weight_bytes; }

/* ---- the step ------------------------------------------------------------------------------ */

/* x [1, k] times a weight stored as rows [n, k]: [1, n]. */
static tl_tensor project(decoder *d, tl_tensor x, tl_tensor rows) {
    tl_tensor out, view;
    view = OP(tl_transpose(d->ctx, rows, 0, 1, &out));
    return OP(tl_matmul(d->ctx, x, view, &out));
}

/* A [1, heads * hd] row as [heads, 1, hd], turned by RoPE at pos. */
static tl_tensor rotated_heads(decoder *d, tl_tensor row, int heads, int pos) {
    const model_config *c = &d->m->cfg;
    const int64_t shape[3] = {1, heads, c->d_model / c->heads};
    tl_tensor out, t;
    t = OP(tl_reshape(d->ctx, row, 3, shape, &out));
    t = OP(tl_transpose(d->ctx, t, 0, 1, &out));
    return OP(tl_rope(d->ctx, t, pos, c->rope_theta, c->rope, &out));
}

/* The cache [T, kv_heads * hd] as [kv_heads, T, hd]. */
static tl_tensor cache_heads(decoder *d, tl_tensor cache) {
    const model_config *c = &d->m->cfg;
    const int64_t shape[3] = {c->tokens, c->kv_heads, c->d_model / c->heads};
    tl_tensor out, t;
    t = OP(tl_reshape(d->ctx, cache, 3, shape, &out));
    return OP(tl_transpose(d->ctx, t, 0, 1, &out));
}

static tl_tensor llama_attention(decoder *d, int l, tl_tensor h, int pos) {
    const model_config *c = &d->m->cfg;
    const layer_weights *w = &d->m->layer[l];
    tl_context *ctx = d->ctx;
    const int hd = c->d_model / c->heads;
    const int64_t kv_row[2] = {1, (int64_t)c->kv_heads * hd}, flat[2] = {1, c->d_model};
    tl_tensor out;
    tl_tensor q = rotated_heads(d, project(d, h, w->wq), c->heads, pos); /* [H, 1, hd] */
    tl_tensor k = rotated_heads(d, project(d, h, w->wk), c->kv_heads, pos);
    k = OP(tl_reshape(ctx, k, 2, kv_row, &out)); /* [Hkv, 1, hd] is [1, Hkv * hd] when T = 1 */
    tl_tensor v = project(d, h, w->wv);
    tl_tensor row = OP(tl_slice(ctx, d->k_cache[l], 0, pos, 1, &out));
    TL_CHECK(tl_copy_into(ctx, k, row)); /* into an f16/bf16 cache: rounded once */
    row = OP(tl_slice(ctx, d->v_cache[l], 0, pos, 1, &out));
    TL_CHECK(tl_copy_into(ctx, v, row));
    tl_tensor mixed = OP(tl_attention(ctx, q, cache_heads(d, d->k_cache[l]), cache_heads(d, d->v_cache[l]), pos + 1,
                                      1.0 / sqrt((double)hd), &out)); /* [H, 1, hd] */
    mixed = OP(tl_transpose(ctx, mixed, 0, 1, &out));
    mixed = OP(tl_reshape(ctx, mixed, 2, flat, &out));
    return project(d, mixed, w->wo);
}

tl_tensor llama_logits(decoder *d, int32_t token, int pos) {
    const model *m = d->m;
    const model_config *c = &m->cfg;
    tl_context *ctx = d->ctx;
    tl_tensor out, x, h, g, u;
    const int64_t one = 1;
    x = OP(tl_tensor_from_data(ctx, TL_I32, 1, &one, &token, sizeof token, &out));
    x = OP(tl_gather_rows(ctx, m->embed, x, &out)); /* [1, D] f32, from a table in any dtype */
    for (int l = 0; l < c->layers; ++l) {
        const layer_weights *w = &m->layer[l];
        h = OP(tl_rmsnorm(ctx, x, w->attn_norm, c->norm_eps, &out));
        x = OP(tl_add(ctx, x, llama_attention(d, l, h, pos), &out));
        h = OP(tl_rmsnorm(ctx, x, w->mlp_norm, c->norm_eps, &out));
        g = OP(tl_silu(ctx, project(d, h, w->w_gate), &out));
        u = project(d, h, w->w_up);
        g = OP(tl_mul(ctx, g, u, &out));
        x = OP(tl_add(ctx, x, project(d, g, w->w_down), &out));
    }
    h = OP(tl_rmsnorm(ctx, x, m->final_norm, c->norm_eps, &out));
    return project(d, h, m->lm_head);
}

/* ---- files ----------------------------------------------------------------------------------- */

static int refuse(const char *path, const char *what) {
    fprintf(stderr, "decode: %s: %s\n", path, what);
    return -1;
}

/* A weight of the expected shape; norms come out f32 (rmsnorm takes f32 weights). */
static int expect(tl_context *ctx, const char *path, const char *name, tl_tensor t, int ndim, int64_t rows,
                  int64_t cols) {
    tl_tensor_info info = TL_TENSOR_INFO_INIT;
    TL_CHECK(tl_tensor_info_get(ctx, t, &info));
    const int ok = info.ndim == ndim && info.shape[0] == rows && (ndim == 1 || info.shape[1] == cols);
    if (ok) return 0;
    char what[256], dims[64];
    if (ndim == 1)
        snprintf(dims, sizeof dims, "%lld", (long long)rows);
    else
        snprintf(dims, sizeof dims, "%lld, %lld", (long long)rows, (long long)cols);
    snprintf(what, sizeof what, "'%s' is not [%s] as the hyperparameters say", name, dims);
    return refuse(path, what);
}

/* Fills the layer tensors from get(name) (HF's or GGUF's names), checking every shape. */
typedef tl_status (*get_fn)(tl_context *ctx, void *file, const char *name, tl_tensor *out);

static tl_status get_gguf(tl_context *ctx, void *f, const char *name, tl_tensor *out) {
    return tl_gguf_get(ctx, f, name, out);
}
static tl_status get_safetensors(tl_context *ctx, void *f, const char *name, tl_tensor *out) {
    return tl_safetensors_get(ctx, f, name, out);
}

static int load_weights(tl_context *ctx, const char *path, void *file, get_fn get, int gguf, model *m) {
    const model_config *c = &m->cfg;
    const int64_t d = c->d_model, kvw = (int64_t)(c->d_model / c->heads) * c->kv_heads, ffn = c->ffn;
    const int64_t rows[LAYER_TENSORS] = {d, d, kvw, kvw, d, d, ffn, ffn, d};
    const int64_t cols[LAYER_TENSORS] = {0, d, d, d, d, 0, d, d, ffn};
    char name[128];
    m->layer = tl_check_alloc(calloc((size_t)c->layers, sizeof *m->layer), "m->layer");
    int loaded = 0; /* layer tensors got so far, so a refusal frees them */
    int bad = 0;
    for (int l = 0; l < c->layers && !bad; ++l)
        for (int i = 0; i < LAYER_TENSORS && !bad; ++i) {
            if (gguf)
                snprintf(name, sizeof name, "blk.%d.%s.weight", l, gguf_names[i]);
            else
                snprintf(name, sizeof name, "model.layers.%d.%s.weight", l, hf_names[i]);
            tl_tensor *t = layer_tensor(&m->layer[l], i);
            if (get(ctx, file, name, t) != TL_OK) {
                bad = refuse(path, tl_last_error());
                break;
            }
            ++loaded;
            bad = expect(ctx, path, name, *t, cols[i] ? 2 : 1, rows[i], cols[i]);
            if (!bad && !cols[i]) convert_in_place(ctx, t, TL_F32);
        }
    const char *norm = gguf ? "output_norm.weight" : "model.norm.weight";
    const char *head = gguf ? "output.weight" : "lm_head.weight";
    int have_norm = 0, have_head = 0;
    if (!bad) {
        bad = get(ctx, file, norm, &m->final_norm) != TL_OK ? refuse(path, tl_last_error()) : 0;
        have_norm = !bad;
        if (!bad) bad = expect(ctx, path, norm, m->final_norm, 1, d, 0);
        if (!bad) convert_in_place(ctx, &m->final_norm, TL_F32);
    }
    if (!bad) {
        const tl_status st = get(ctx, file, head, &m->lm_head);
        if (st == TL_E_NOT_FOUND) {
            m->lm_head = m->embed; /* tied to the embedding table */
        } else if (st != TL_OK) {
            bad = refuse(path, tl_last_error());
        } else {
            have_head = 1;
            bad = expect(ctx, path, head, m->lm_head, 2, c->vocab, d);
        }
    }
    if (bad) {
        for (int l = 0, n = 0; n < loaded; ++l)
            for (int i = 0; i < LAYER_TENSORS && n < loaded; ++i, ++n)
                TL_CHECK(tl_tensor_free(ctx, *layer_tensor(&m->layer[l], i)));
        if (have_norm) TL_CHECK(tl_tensor_free(ctx, m->final_norm));
        if (have_head) TL_CHECK(tl_tensor_free(ctx, m->lm_head));
        TL_CHECK(tl_tensor_free(ctx, m->embed));
        free(m->layer);
        return -1;
    }
    m->weights_dtype = dtype_of(ctx, m->layer[0].wq);
    count_weight_bytes(ctx, m);
    return 0;
}

static int gguf_int(tl_gguf_file *f, const char *key, int64_t fallback, int64_t *out) {
    const tl_status st = tl_gguf_get_int(f, key, out);
    if (st == TL_E_NOT_FOUND && fallback >= 0) *out = fallback;
    return st == TL_OK || (st == TL_E_NOT_FOUND && fallback >= 0) ? 0 : -1;
}

static int load_gguf(tl_context *ctx, const char *path, model_config *cfg, model *m) {
    tl_gguf_file *f;
    if (tl_gguf_open(ctx, path, &f) != TL_OK) return refuse(path, tl_last_error());
    const char *arch;
    uint64_t len;
    if (tl_gguf_get_string(f, "general.architecture", &arch, &len) != TL_OK || len != 5 || memcmp(arch, "llama", 5)) {
        tl_gguf_close(f);
        return refuse(path, "general.architecture is not \"llama\"");
    }
    int64_t d, layers, heads, kv_heads, ffn;
    double theta = 10000, eps = 1e-5;
    if (gguf_int(f, "llama.embedding_length", -1, &d) || gguf_int(f, "llama.block_count", -1, &layers) ||
        gguf_int(f, "llama.attention.head_count", -1, &heads) ||
        gguf_int(f, "llama.attention.head_count_kv", heads, &kv_heads) ||
        gguf_int(f, "llama.feed_forward_length", -1, &ffn)) {
        tl_gguf_close(f);
        return refuse(path, "the llama.* hyperparameters are missing or not integers");
    }
    tl_gguf_get_float(f, "llama.rope.freq_base", &theta); /* optional: llama.cpp's defaults */
    tl_gguf_get_float(f, "llama.attention.layer_norm_rms_epsilon", &eps);
    if (d <= 0 || layers <= 0 || heads <= 0 || kv_heads <= 0 || ffn <= 0 || d % heads || heads % kv_heads ||
        (d / heads) % 2 || d > 1 << 20 || layers > 1 << 16 || ffn > 1 << 24 || !(theta > 0) || !(eps > 0)) {
        tl_gguf_close(f);
        return refuse(path, "the llama.* hyperparameters do not describe a model (heads dividing d_model, ...)");
    }
    memset(m, 0, sizeof *m);
    if (tl_gguf_get(ctx, f, "token_embd.weight", &m->embed) != TL_OK) {
        tl_gguf_close(f);
        return refuse(path, tl_last_error());
    }
    tl_tensor_info info = TL_TENSOR_INFO_INIT;
    TL_CHECK(tl_tensor_info_get(ctx, m->embed, &info));
    if (info.ndim != 2 || info.shape[1] != d) {
        TL_CHECK(tl_tensor_free(ctx, m->embed));
        tl_gguf_close(f);
        return refuse(path, "token_embd.weight is not [vocab, embedding_length]");
    }
    cfg->arch = ARCH_LLAMA, cfg->d_model = (int)d, cfg->layers = (int)layers, cfg->heads = (int)heads;
    cfg->kv_heads = (int)kv_heads, cfg->ffn = (int)ffn, cfg->vocab = (int)info.shape[0];
    cfg->rope_theta = theta, cfg->norm_eps = eps, cfg->rope = TL_ROPE_INTERLEAVED;
    m->cfg = *cfg;
    const int bad = load_weights(ctx, path, f, get_gguf, 1, m);
    tl_gguf_type type, item;
    uint64_t count;
    if (!bad && tl_gguf_key_type(f, "tokenizer.ggml.tokens", &type, &item, &count) == TL_OK && item == TL_GGUF_STRING &&
        count == (uint64_t)cfg->vocab) {
        m->token_text = tl_check_alloc(calloc((size_t)count, sizeof(char *)), "m->token_text");
        for (uint64_t i = 0; i < count; ++i) {
            const char *text;
            TL_CHECK(tl_gguf_get_array_string(f, "tokenizer.ggml.tokens", i, &text, &len));
            m->token_text[i] = tl_check_alloc(malloc(len + 1), "m->token_text[i]");
            memcpy(m->token_text[i], text, len);
            m->token_text[i][len] = 0;
        }
    }
    tl_gguf_close(f); /* the tensors keep their mapping */
    return bad;
}

/* The config.json in the folder of a model.safetensors path: 0, or -1 when it does not fit. */
static int config_beside(const char *path, char *out, size_t size) {
    const char *slash = strrchr(path, '/');
    const int dir = slash ? (int)(slash - path + 1) : 0;
    return snprintf(out, size, "%.*sconfig.json", dir, path) >= (int)size ? -1 : 0;
}

static int json_int(const cJSON *config, const char *key, int fallback) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(config, key);
    return cJSON_IsNumber(v) && v->valuedouble >= 1 && v->valuedouble <= (1 << 24) ? (int)v->valuedouble : fallback;
}

static int load_hf(tl_context *ctx, const char *path, model_config *cfg, model *m) {
    char config_path[4096];
    if (config_beside(path, config_path, sizeof config_path)) return refuse(path, "path too long");
    FILE *cf = fopen(config_path, "rb");
    if (!cf) return refuse(config_path, "cannot open (a Hugging Face model's config.json sits beside its weights)");
    char *text = NULL;
    size_t size = 0;
    for (char buf[4096];;) {
        const size_t got = fread(buf, 1, sizeof buf, cf);
        if (!got || size + got > (1u << 20)) break;
        text = tl_check_alloc(realloc(text, size + got + 1), config_path);
        memcpy(text + size, buf, got);
        size += got;
    }
    fclose(cf);
    cJSON *config = text ? (text[size] = 0, cJSON_Parse(text)) : NULL;
    free(text);
    if (!config) return refuse(config_path, "not JSON");
    const cJSON *theta = cJSON_GetObjectItemCaseSensitive(config, "rope_theta");
    const cJSON *eps = cJSON_GetObjectItemCaseSensitive(config, "rms_norm_eps");
    const int d = json_int(config, "hidden_size", 0), heads = json_int(config, "num_attention_heads", 0);
    cfg->arch = ARCH_LLAMA, cfg->d_model = d, cfg->heads = heads;
    cfg->layers = json_int(config, "num_hidden_layers", 0);
    cfg->kv_heads = json_int(config, "num_key_value_heads", heads);
    cfg->ffn = json_int(config, "intermediate_size", 0);
    cfg->vocab = json_int(config, "vocab_size", 0);
    cfg->rope_theta = cJSON_IsNumber(theta) ? theta->valuedouble : 10000;
    cfg->norm_eps = cJSON_IsNumber(eps) ? eps->valuedouble : 1e-6;
    cfg->rope = TL_ROPE_HALVES;
    cJSON_Delete(config);
    if (!d || !heads || !cfg->layers || !cfg->kv_heads || !cfg->ffn || !cfg->vocab || d % heads ||
        heads % cfg->kv_heads || (d / heads) % 2 || !(cfg->rope_theta > 0) || !(cfg->norm_eps > 0))
        return refuse(config_path, "not a LlamaForCausalLM config (hidden_size, num_attention_heads, ...)");
    tl_safetensors_file *f;
    if (tl_safetensors_open(ctx, path, &f) != TL_OK) return refuse(path, tl_last_error());
    memset(m, 0, sizeof *m);
    m->cfg = *cfg;
    int bad =
        tl_safetensors_get(ctx, f, "model.embed_tokens.weight", &m->embed) != TL_OK ? refuse(path, tl_last_error()) : 0;
    if (!bad && expect(ctx, path, "model.embed_tokens.weight", m->embed, 2, cfg->vocab, d)) {
        TL_CHECK(tl_tensor_free(ctx, m->embed));
        bad = -1;
    }
    if (!bad) bad = load_weights(ctx, path, f, get_safetensors, 0, m);
    tl_safetensors_close(f);
    return bad;
}

int llama_load(tl_context *ctx, const char *path, model_config *cfg, model *m) {
    const size_t n = strlen(path);
    return n > 5 && !strcmp(path + n - 5, ".gguf") ? load_gguf(ctx, path, cfg, m) : load_hf(ctx, path, cfg, m);
}

int llama_save_hf(tl_context *ctx, const model *m, const char *path) {
    const model_config *c = &m->cfg;
    if (c->rope != TL_ROPE_HALVES) return refuse(path, "the weights came from GGUF (interleaved RoPE): not saved");
    const int n = 3 + LAYER_TENSORS * c->layers - (tied(m) ? 1 : 0);
    const char **names = tl_check_alloc(malloc(sizeof(char *) * (size_t)n), "names");
    char(*storage)[96] = tl_check_alloc(malloc(96 * (size_t)n), "storage");
    tl_tensor *tensors = tl_check_alloc(malloc(sizeof(tl_tensor) * (size_t)n), "tensors");
    int i = 0;
    names[i] = "model.embed_tokens.weight", tensors[i++] = m->embed;
    names[i] = "model.norm.weight", tensors[i++] = m->final_norm;
    if (!tied(m)) names[i] = "lm_head.weight", tensors[i++] = m->lm_head;
    for (int l = 0; l < c->layers; ++l)
        for (int k = 0; k < LAYER_TENSORS; ++k, ++i) {
            snprintf(storage[i], 96, "model.layers.%d.%s.weight", l, hf_names[k]);
            names[i] = storage[i];
            tensors[i] = *layer_tensor(&m->layer[l], k);
        }
    int bad = tl_safetensors_save(ctx, path, (size_t)n, names, tensors) != TL_OK ? refuse(path, tl_last_error()) : 0;
    free(names), free(storage), free(tensors);
    if (bad) return -1;
    cJSON *config = cJSON_CreateObject();
    cJSON *archs = cJSON_AddArrayToObject(config, "architectures");
    cJSON_AddItemToArray(archs, cJSON_CreateString("LlamaForCausalLM"));
    cJSON_AddStringToObject(config, "model_type", "llama");
    cJSON_AddNumberToObject(config, "hidden_size", c->d_model);
    cJSON_AddNumberToObject(config, "num_hidden_layers", c->layers);
    cJSON_AddNumberToObject(config, "num_attention_heads", c->heads);
    cJSON_AddNumberToObject(config, "num_key_value_heads", c->kv_heads);
    cJSON_AddNumberToObject(config, "intermediate_size", c->ffn);
    cJSON_AddNumberToObject(config, "vocab_size", c->vocab);
    cJSON_AddNumberToObject(config, "rope_theta", c->rope_theta);
    cJSON_AddNumberToObject(config, "rms_norm_eps", c->norm_eps);
    cJSON_AddBoolToObject(config, "tie_word_embeddings", tied(m));
    cJSON_AddStringToObject(config, "hidden_act", "silu");
    cJSON_AddStringToObject(config, "torch_dtype", "float32");
    char *text = cJSON_Print(config);
    cJSON_Delete(config);
    char config_path[4096];
    if (config_beside(path, config_path, sizeof config_path)) {
        free(text);
        return refuse(path, "path too long");
    }
    FILE *f = fopen(config_path, "w");
    bad = !f || fputs(text, f) < 0 || fputc('\n', f) == EOF;
    if (f && fclose(f) != 0) bad = 1;
    free(text);
    return bad ? refuse(config_path, "cannot write") : 0;
}

const char *llama_token_text(const model *m, int32_t id, char *buf, size_t size) {
    /* SentencePiece pieces: U+2581 is a space, <0xNN> a byte. */
    buf[0] = 0;
    if (!m->token_text || id < 0 || id >= m->cfg.vocab) return buf;
    const char *t = m->token_text[id];
    unsigned byte;
    if (strlen(t) == 6 && sscanf(t, "<0x%2X>", &byte) == 1) { /* raw bytes; controls but \n and \t escaped */
        if (byte >= 0x20 || byte == '\n' || byte == '\t')
            snprintf(buf, size, "%c", (char)byte);
        else
            snprintf(buf, size, "\\x%02x", byte);
        return buf;
    }
    size_t o = 0;
    for (; *t && o + 1 < size; ++t) {
        if ((unsigned char)t[0] == 0xe2 && (unsigned char)t[1] == 0x96 && (unsigned char)t[2] == 0x81) {
            buf[o++] = ' ';
            t += 2;
        } else {
            buf[o++] = *t;
        }
    }
    buf[o] = 0;
    return buf;
}
