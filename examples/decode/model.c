#include "model.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

tl_tensor random_tensor(tl_context *ctx, int ndim, const int64_t *shape, float scale, unsigned *seed) {
    int64_t n = 1;
    for (int i = 0; i < ndim; ++i) n *= shape[i];
    float *data = tl_check_alloc(malloc(sizeof(float) * (size_t)n), "data");
    for (int64_t i = 0; i < n; ++i) {
        *seed = *seed * 1664525u + 1013904223u;
        data[i] = ((float)(*seed >> 8) / 16777216.0f * 2.0f - 1.0f) * scale;
    }
    tl_tensor t;
    TL_CHECK(tl_tensor_from_data(ctx, TL_F32, ndim, shape, data, sizeof(float) * (size_t)n, &t));
    free(data);
    return t;
}

static tl_tensor matrix(tl_context *ctx, int rows, int cols, unsigned *seed) {
    int64_t shape[2] = {rows, cols};
    return random_tensor(ctx, 2, shape, 1.0f / sqrtf((float)rows), seed);
}

static tl_tensor norm_weight(tl_context *ctx, int d) {
    int64_t shape[1] = {d};
    tl_tensor t;
    TL_CHECK(tl_tensor_ones(ctx, TL_F32, 1, shape, &t));
    return t;
}

void model_init_random(tl_context *ctx, const model_config *cfg, model *m) {
    unsigned seed = cfg->seed;
    const int d = cfg->d_model;
    memset(m, 0, sizeof *m);
    m->cfg = *cfg;
    m->weights_dtype = TL_F32;
    int64_t embed_shape[2] = {cfg->vocab, d};
    m->embed = random_tensor(ctx, 2, embed_shape, 1.0f, &seed);
    m->layer = tl_check_alloc(calloc((size_t)cfg->layers, sizeof *m->layer), "m->layer");
    for (int l = 0; l < cfg->layers; ++l) {
        layer_weights *w = &m->layer[l];
        w->attn_norm = norm_weight(ctx, d);
        w->wq = matrix(ctx, d, d, &seed);
        w->wk = matrix(ctx, d, d, &seed);
        w->wv = matrix(ctx, d, d, &seed);
        w->wo = matrix(ctx, d, d, &seed);
        w->mlp_norm = norm_weight(ctx, d);
        w->w_up = matrix(ctx, d, 4 * d, &seed);
        w->w_down = matrix(ctx, 4 * d, d, &seed);
    }
    m->final_norm = norm_weight(ctx, d);
    m->lm_head = matrix(ctx, d, cfg->vocab, &seed);
}

void model_free(tl_context *ctx, model *m) {
    for (int l = 0; l < m->cfg.layers; ++l) {
        tl_tensor *w = &m->layer[l].attn_norm;
        for (size_t i = 0; i < offsetof(layer_weights, w_gate) / sizeof(tl_tensor); ++i)
            TL_CHECK(tl_tensor_free(ctx, w[i]));
    }
    TL_CHECK(tl_tensor_free(ctx, m->embed));
    TL_CHECK(tl_tensor_free(ctx, m->final_norm));
    TL_CHECK(tl_tensor_free(ctx, m->lm_head));
    for (int i = 0; i < m->stored_count; ++i) TL_CHECK(tl_tensor_free(ctx, m->stored[i]));
    free(m->stored);
    if (m->block.base) weight_block_close(&m->block);
    free(m->layer);
}

/* W [k, n] (f32) as its rows [n, k] in dt (contiguous); W is freed. */
static tl_tensor as_stored_rows(tl_context *ctx, tl_tensor w, tl_dtype dt) {
    tl_tensor t, rows, stored;
    TL_CHECK(tl_transpose(ctx, w, 0, 1, &t));
    TL_CHECK(tl_contiguous(ctx, t, &rows));
    if (dt == TL_F32)
        stored = rows;
    else
        TL_CHECK(tl_convert(ctx, rows, dt, &stored));
    TL_CHECK(tl_tensor_free(ctx, w)); /* its view t dies with it */
    if (dt != TL_F32) TL_CHECK(tl_tensor_free(ctx, rows));
    return stored;
}

void model_convert(tl_context *ctx, model *m, tl_dtype dt) {
    m->weights_dtype = dt;
    const int count = 6 * m->cfg.layers + 1;
    tl_tensor **projections = tl_check_alloc(malloc(sizeof(tl_tensor *) * (size_t)count), "projections"); /* in the order a step reads them */
    for (int l = 0; l < m->cfg.layers; ++l) {
        layer_weights *w = &m->layer[l];
        tl_tensor *of_layer[6] = {&w->wq, &w->wk, &w->wv, &w->wo, &w->w_up, &w->w_down};
        memcpy(projections + 6 * l, of_layer, sizeof of_layer);
    }
    projections[count - 1] = &m->lm_head;
    m->stored = tl_check_alloc(malloc(sizeof(tl_tensor) * (size_t)count), "m->stored");
    for (int i = 0; i < count; ++i) m->stored[i] = as_stored_rows(ctx, *projections[i], dt);
    m->stored_count = count;
    weight_block_open(ctx, &m->block, m->stored, count);
    for (int i = 0; i < count; ++i) {
        m->stored[i] = weight_block_take(ctx, &m->block, m->stored[i]);
        TL_CHECK(tl_transpose(ctx, m->stored[i], 0, 1, projections[i])); /* the [k, n] view a product takes */
    }
    free(projections);
    if (dt == TL_F32) return;
    tl_tensor embed;
    TL_CHECK(tl_convert(ctx, m->embed, dt, &embed));
    TL_CHECK(tl_tensor_free(ctx, m->embed));
    m->embed = embed;
}

double model_weight_bytes(const model *m) {
    int64_t block;
    size_t bytes;
    TL_CHECK(tl_dtype_block(m->weights_dtype ? m->weights_dtype : TL_F32, &block, &bytes));
    const double per = (double)bytes / (double)block, d = m->cfg.d_model;
    const double projections = m->cfg.layers * (4 * d * d + 2 * 4 * d * d) + d * m->cfg.vocab;
    return per * (projections + d) + 4.0 * d * (2 * m->cfg.layers + 1);
}

static const char *const layer_names[8] = {"attn_norm", "wq", "wk", "wv", "wo", "mlp_norm", "w_up", "w_down"};

void model_save(tl_context *ctx, const model *m, const char *path) {
    const int n = 3 + 8 * m->cfg.layers;
    const char **names = tl_check_alloc(malloc(sizeof(char *) * (size_t)n), "names");
    char(*storage)[64] = tl_check_alloc(malloc(64 * (size_t)n), "storage");
    tl_tensor *tensors = tl_check_alloc(malloc(sizeof(tl_tensor) * (size_t)n), "tensors");
    names[0] = "embed", names[1] = "final_norm", names[2] = "lm_head";
    tensors[0] = m->embed, tensors[1] = m->final_norm, tensors[2] = m->lm_head;
    for (int l = 0; l < m->cfg.layers; ++l)
        for (int k = 0; k < 8; ++k) {
            const int i = 3 + 8 * l + k;
            snprintf(storage[i], 64, "layers.%d.%s", l, layer_names[k]);
            names[i] = storage[i];
            tensors[i] = (&m->layer[l].attn_norm)[k];
        }
    TL_CHECK(tl_safetensors_save(ctx, path, n, names, tensors));
    free(names);
    free(storage);
    free(tensors);
}

/* One named tensor of the expected f32 shape, or -1. */
static int load_tensor(tl_context *ctx, tl_safetensors_file *f, const char *name, int ndim, const int64_t *shape,
                       tl_tensor *out) {
    if (tl_safetensors_get(ctx, f, name, out) != TL_OK) {
        fprintf(stderr, "decode: weights: %s\n", tl_last_error());
        return -1;
    }
    tl_tensor_info info = TL_TENSOR_INFO_INIT;
    TL_CHECK(tl_tensor_info_get(ctx, *out, &info));
    int ok = info.dtype == TL_F32 && info.ndim == ndim;
    for (int i = 0; ok && i < ndim; ++i) ok = info.shape[i] == shape[i];
    if (!ok) fprintf(stderr, "decode: weights: '%s' does not have the shape the model needs\n", name);
    return ok ? 0 : -1;
}

int model_load(tl_context *ctx, const char *path, model_config *cfg, model *m) {
    tl_safetensors_file *f;
    if (tl_safetensors_open(ctx, path, &f) != TL_OK) {
        fprintf(stderr, "decode: %s\n", tl_last_error());
        return -1;
    }
    tl_tensor embed;
    if (tl_safetensors_get(ctx, f, "embed", &embed) != TL_OK) {
        fprintf(stderr, "decode: weights: %s\n", tl_last_error());
        tl_safetensors_close(f);
        return -1;
    }
    tl_tensor_info info = TL_TENSOR_INFO_INIT;
    TL_CHECK(tl_tensor_info_get(ctx, embed, &info));
    TL_CHECK(tl_tensor_free(ctx, embed));
    int layers = 0;
    char name[64];
    for (;; ++layers) {
        snprintf(name, sizeof name, "layers.%d.wq", layers);
        int found = 0;
        for (size_t i = 0; i < tl_safetensors_count(f) && !found; ++i)
            found = strcmp(tl_safetensors_name(f, i), name) == 0;
        if (!found) break;
    }
    if (info.ndim != 2 || layers == 0) {
        fprintf(stderr, "decode: %s is not a decoder model (embed [vocab, d] and layers.N.*)\n", path);
        tl_safetensors_close(f);
        return -1;
    }
    cfg->vocab = (int)info.shape[0];
    cfg->d_model = (int)info.shape[1];
    cfg->layers = layers;
    memset(m, 0, sizeof *m);
    m->cfg = *cfg;
    m->weights_dtype = TL_F32;
    m->layer = tl_check_alloc(calloc((size_t)layers, sizeof *m->layer), "m->layer");
    const int64_t d = cfg->d_model, v = cfg->vocab;
    const int64_t s_embed[2] = {v, d}, s_head[2] = {d, v}, s_d[1] = {d}, s_dd[2] = {d, d}, s_up[2] = {d, 4 * d},
                  s_down[2] = {4 * d, d};
    int bad = load_tensor(ctx, f, "embed", 2, s_embed, &m->embed) ||
              load_tensor(ctx, f, "final_norm", 1, s_d, &m->final_norm) ||
              load_tensor(ctx, f, "lm_head", 2, s_head, &m->lm_head);
    const int64_t *shapes[8] = {s_d, s_dd, s_dd, s_dd, s_dd, s_d, s_up, s_down};
    for (int l = 0; l < layers && !bad; ++l)
        for (int k = 0; k < 8 && !bad; ++k) {
            snprintf(name, sizeof name, "layers.%d.%s", l, layer_names[k]);
            bad = load_tensor(ctx, f, name, shapes[k] == s_d ? 1 : 2, shapes[k], &(&m->layer[l].attn_norm)[k]);
        }
    tl_safetensors_close(f);
    return bad ? -1 : 0;
}

void decoder_open(decoder *d, tl_context *ctx, const model *m, memory_mode mode) {
    memset(d, 0, sizeof *d);
    d->ctx = ctx;
    d->m = m;
    d->mode = mode;
    const model_config *c = &m->cfg;
    if (mode == MODE_SCOPED) TL_CHECK(tl_scope_open(ctx, "kv-cache", 0, &d->cache_scope));
    d->k_cache = tl_check_alloc(calloc((size_t)c->layers, sizeof(tl_tensor)), "d->k_cache");
    d->v_cache = tl_check_alloc(calloc((size_t)c->layers, sizeof(tl_tensor)), "d->v_cache");
    int64_t shape[2] = {c->tokens, c->d_model};
    for (int l = 0; l < c->layers; ++l) {
        TL_CHECK(tl_tensor_zeros(ctx, TL_F32, 2, shape, &d->k_cache[l]));
        TL_CHECK(tl_tensor_zeros(ctx, TL_F32, 2, shape, &d->v_cache[l]));
    }
    if (mode == MODE_SCOPED) TL_CHECK(tl_scope_open(ctx, "decode-step", 0, &d->step_scope));
    d->mask_row = tl_check_alloc(malloc(sizeof(float) * (size_t)c->tokens), "the causal mask's row");
    d->made_capacity = 64;
    d->made = tl_check_alloc(malloc(sizeof(tl_tensor) * (size_t)d->made_capacity), "the step's tensor list");
}

tl_tensor decoder_keep(decoder *d, tl_tensor t) {
    if (d->mode == MODE_AMBIENT) {
        if (d->made_count == d->made_capacity) {
            d->made_capacity *= 2;
            d->made = tl_check_alloc(realloc(d->made, sizeof(tl_tensor) * (size_t)d->made_capacity),
                                     "the step's tensor list");
        }
        d->made[d->made_count++] = t;
    }
    return t;
}

static tl_tensor attention(decoder *d, int l, tl_tensor h, tl_tensor mask, int pos) {
    const model_config *c = &d->m->cfg;
    const layer_weights *w = &d->m->layer[l];
    tl_context *ctx = d->ctx;
    const int heads = c->heads, hd = c->d_model / c->heads, len = c->tokens;
    tl_tensor out, q, k, v, row;
    q = OP(tl_matmul(ctx, h, w->wq, &out)); /* [1, D] */
    k = OP(tl_matmul(ctx, h, w->wk, &out));
    v = OP(tl_matmul(ctx, h, w->wv, &out));
    row = OP(tl_slice(ctx, d->k_cache[l], 0, pos, 1, &out));
    TL_CHECK(tl_copy_into(ctx, k, row));
    row = OP(tl_slice(ctx, d->v_cache[l], 0, pos, 1, &out));
    TL_CHECK(tl_copy_into(ctx, v, row));
    const int64_t q_shape[3] = {1, heads, hd}, kv_shape[3] = {len, heads, hd}, flat[2] = {1, c->d_model};

    if (!c->unfused_attention) {
        /* The fused op over the pos + 1 valid cache rows: the output is [H, 1, hd] at every
         * position, so the step's slab stays the same size without computing masked rows. */
        tl_tensor qh = OP(tl_reshape(ctx, q, 3, q_shape, &out));
        qh = OP(tl_transpose(ctx, qh, 0, 1, &out)); /* [H, 1, hd] */
        tl_tensor keys = OP(tl_reshape(ctx, d->k_cache[l], 3, kv_shape, &out));
        keys = OP(tl_transpose(ctx, keys, 0, 1, &out)); /* [H, T, hd] */
        tl_tensor values = OP(tl_reshape(ctx, d->v_cache[l], 3, kv_shape, &out));
        values = OP(tl_transpose(ctx, values, 0, 1, &out));
        tl_tensor mixed = OP(tl_attention(ctx, qh, keys, values, pos + 1, 1.0 / sqrt((double)hd), &out));
        mixed = OP(tl_transpose(ctx, mixed, 0, 1, &out));  /* [1, H, hd] */
        mixed = OP(tl_reshape(ctx, mixed, 2, flat, &out)); /* [1, D] */
        return OP(tl_matmul(ctx, mixed, w->wo, &out));
    }

    /* Attention runs over the whole cache with a causal mask, so every step has the same shapes
     * (the repeated step that a scope makes allocation-free); rows past pos are masked out.
     * q: [1, D] -> [1, H, hd] -> [H, 1, hd]; keys: [T, D] -> [T, H, hd] -> [H, hd, T]. */
    tl_tensor qh = OP(tl_reshape(ctx, q, 3, q_shape, &out));
    qh = OP(tl_transpose(ctx, qh, 0, 1, &out));
    tl_tensor keys = OP(tl_reshape(ctx, d->k_cache[l], 3, kv_shape, &out));
    keys = OP(tl_transpose(ctx, keys, 0, 1, &out)); /* [H, T, hd] */
    keys = OP(tl_transpose(ctx, keys, 1, 2, &out)); /* [H, hd, T]: BLAS's transpose flag */
    tl_tensor values = OP(tl_reshape(ctx, d->v_cache[l], 3, kv_shape, &out));
    values = OP(tl_transpose(ctx, values, 0, 1, &out)); /* [H, T, hd], leading dimension D */

    tl_tensor scores = OP(tl_matmul(ctx, qh, keys, &out)); /* [H, 1, len] */
    scores = OP(tl_scale(ctx, scores, 1.0 / sqrt((double)hd), &out));
    scores = OP(tl_add(ctx, scores, mask, &out)); /* [1, T] broadcast over heads */
    tl_tensor probs = OP(tl_softmax(ctx, scores, -1, &out));
    tl_tensor mixed = OP(tl_matmul(ctx, probs, values, &out)); /* [H, 1, hd] */
    mixed = OP(tl_transpose(ctx, mixed, 0, 1, &out));          /* [1, H, hd] */
    mixed = OP(tl_reshape(ctx, mixed, 2, flat, &out));         /* [1, D] */
    return OP(tl_matmul(ctx, mixed, w->wo, &out));
}

static tl_tensor toy_logits(decoder *d, int32_t token, int pos) {
    const model *m = d->m;
    tl_context *ctx = d->ctx;
    tl_tensor out, ids, x, h, y;
    const int64_t one = 1;
    ids = OP(tl_tensor_from_data(ctx, TL_I32, 1, &one, &token, sizeof token, &out));
    x = OP(tl_gather_rows(ctx, m->embed, ids, &out)); /* [1, D] */
    /* The reference path's causal mask over the cache: 0 up to pos, -inf after. */
    tl_tensor mask = {0};
    if (m->cfg.unfused_attention) {
        for (int i = 0; i < m->cfg.tokens; ++i) d->mask_row[i] = i <= pos ? 0.0f : -INFINITY;
        const int64_t mask_shape[2] = {1, m->cfg.tokens};
        mask = OP(
            tl_tensor_from_data(ctx, TL_F32, 2, mask_shape, d->mask_row, sizeof(float) * (size_t)m->cfg.tokens, &out));
    }
    for (int l = 0; l < m->cfg.layers; ++l) {
        const layer_weights *w = &m->layer[l];
        h = OP(tl_rmsnorm(ctx, x, w->attn_norm, 1e-5, &out));
        y = attention(d, l, h, mask, pos);
        x = OP(tl_add(ctx, x, y, &out));
        h = OP(tl_rmsnorm(ctx, x, w->mlp_norm, 1e-5, &out));
        h = OP(tl_matmul(ctx, h, w->w_up, &out));
        h = OP(tl_silu(ctx, h, &out));
        h = OP(tl_matmul(ctx, h, w->w_down, &out));
        x = OP(tl_add(ctx, x, h, &out));
    }
    h = OP(tl_rmsnorm(ctx, x, m->final_norm, 1e-5, &out));
    return OP(tl_matmul(ctx, h, m->lm_head, &out));
}

int32_t decoder_step(decoder *d, int32_t token, int pos, float *logits) {
    const model *m = d->m;
    tl_context *ctx = d->ctx;
    tl_tensor out;
    tl_tensor lg = toy_logits(d, token, pos);
    tl_tensor best = OP(tl_argmax(ctx, lg, -1, &out));
    int32_t next;
    TL_CHECK(tl_tensor_read(ctx, best, &next, sizeof next));
    if (logits) TL_CHECK(tl_tensor_read(ctx, lg, logits, sizeof(float) * (size_t)m->cfg.vocab));
    if (d->mode == MODE_SCOPED) {
        d->last_step.struct_size = sizeof d->last_step;
        TL_CHECK(tl_scope_stats_get(ctx, d->step_scope, &d->last_step));
        TL_CHECK(tl_scope_reset(ctx, d->step_scope));
    } else {
        for (int i = d->made_count - 1; i >= 0; --i) TL_CHECK(tl_tensor_free(ctx, d->made[i]));
        d->made_count = 0;
    }
    return next;
}

void decoder_close(decoder *d) {
    if (d->mode == MODE_SCOPED) {
        TL_CHECK(tl_scope_close(d->ctx, d->step_scope));
        TL_CHECK(tl_scope_close(d->ctx, d->cache_scope));
    } else {
        for (int l = 0; l < d->m->cfg.layers; ++l) {
            TL_CHECK(tl_tensor_free(d->ctx, d->k_cache[l]));
            TL_CHECK(tl_tensor_free(d->ctx, d->v_cache[l]));
        }
    }
    free(d->k_cache);
    free(d->v_cache);
    free(d->made);
    free(d->mask_row);
}
