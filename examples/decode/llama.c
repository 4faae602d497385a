/* Random Llama weights for the demo (RMSNorm, grouped-query attention, SwiGLU MLP, final norm
 * and output head, each projection the [out, in] rows Hugging Face stores), saved as a Hugging
 * Face LlamaForCausalLM folder: model.safetensors with its config.json beside it.  The library's
 * model runner (tl_model.h) opens that folder as it opens any model; PyTorch
 * (scripts/llama_reference.py) reads the same files. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

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
static int tied(const model *m) { return m->lm_head.bits == m->embed.bits; }

void llama_free(tl_context *ctx, model *m) {
    for (int l = 0; l < m->cfg.layers; ++l)
        for (int i = 0; i < LAYER_TENSORS; ++i) TL_CHECK(tl_tensor_free(ctx, *layer_tensor(&m->layer[l], i)));
    if (!tied(m)) TL_CHECK(tl_tensor_free(ctx, m->lm_head));
    TL_CHECK(tl_tensor_free(ctx, m->embed));
    TL_CHECK(tl_tensor_free(ctx, m->final_norm));
    free(m->layer);
}

static int refuse(const char *path, const char *what) {
    fprintf(stderr, "decode: %s: %s\n", path, what);
    return -1;
}

static int config_beside(const char *path, char *out, size_t size) {
    const char *slash = strrchr(path, '/');
    const int dir = slash ? (int)(slash - path + 1) : 0;
    return snprintf(out, size, "%.*sconfig.json", dir, path) >= (int)size ? -1 : 0;
}

int llama_save_hf(tl_context *ctx, const model *m, const char *path) {
    const model_config *c = &m->cfg;
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
