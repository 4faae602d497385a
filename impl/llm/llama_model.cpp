// Opening a Llama model: hyperparameters from GGUF's llama.* keys or Hugging Face's
// config.json, then every weight looked at once (present, of the shape the hyperparameters
// give, of a dtype the products take), so a session never meets a bad file.
#include "llm/llama_model.h"

#include <cjson/cJSON.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>

#include "core/context.h"
#include "core/error.h"
#include "kernels/quant.h"
#include "llm/tokenizer.h"
#include "platform/platform.h"

namespace {

const char *const kGgufNames[tl::kLayerWeights] = {"attn_norm", "attn_q", "attn_k",   "attn_v", "attn_output",
                                                   "ffn_norm",  "ffn_gate", "ffn_up", "ffn_down"};
const char *const kHfNames[tl::kLayerWeights] = {"input_layernorm",  "self_attn.q_proj", "self_attn.k_proj",
                                                 "self_attn.v_proj", "self_attn.o_proj", "post_attention_layernorm",
                                                 "mlp.gate_proj",    "mlp.up_proj",      "mlp.down_proj"};

}  // namespace

const char *tl_model::weight_name(int32_t l, int w, char *buf) const {
    static const char *const gguf_top[3] = {"token_embd.weight", "output_norm.weight", "output.weight"};
    static const char *const hf_top[3] = {"model.embed_tokens.weight", "model.norm.weight", "lm_head.weight"};
    if (l < 0) return gguf ? gguf_top[w] : hf_top[w];
    if (gguf)
        std::snprintf(buf, 128, "blk.%d.%s.weight", l, kGgufNames[w]);
    else
        std::snprintf(buf, 128, "model.layers.%d.%s.weight", l, kHfNames[w]);
    return buf;
}

tl_status tl_model::get(tl_context *ctx, const char *name, tl_tensor *out) const {
    return gguf ? tl_gguf_get(ctx, gguf, name, out) : tl_safetensors_get(ctx, safetensors, name, out);
}

namespace {
size_t slot_of(const tl::LlamaConfig &c, int32_t l, int w) {
    return size_t(l < 0 ? c.layers * tl::kLayerWeights + w : l * tl::kLayerWeights + w);
}
}  // namespace

const std::byte *tl_model::weight_rows16(int32_t l, int w) const {
    const size_t slot = slot_of(cfg, l, w);
    return slot < rows16.size() ? static_cast<const std::byte *>(rows16[slot].data) : nullptr;
}

tl_status tl_model::weight(tl_context *ctx, int32_t l, int w, tl_tensor *out) const {
    const size_t slot = slot_of(cfg, l, w);
    if (slot < converted.size() && converted[slot].data) {
        const tl::ConvertedWeight &c = converted[slot];
        const int64_t shape[2] = {c.rows, c.cols};
        return tl_tensor_wrap(ctx, c.dtype, 2, shape, c.data, c.bytes, out);
    }
    char buf[128];
    return get(ctx, weight_name(l, w, buf), out);
}

namespace tl {

namespace {

tl_status gguf_config(const tl_gguf_file *f, const char *path, LlamaConfig *c) {
    const char *arch;
    uint64_t len;
    if (tl_gguf_get_string(f, "general.architecture", &arch, &len) != TL_OK || len != 5 || std::memcmp(arch, "llama", 5))
        return fail(TL_E_PARSE, "%s: general.architecture is not \"llama\"", path);
    struct {
        const char *key;
        int32_t *to;
        int64_t fallback;  // -1: required
    } ints[] = {{"llama.embedding_length", &c->d_model, -1},     {"llama.block_count", &c->layers, -1},
                {"llama.attention.head_count", &c->heads, -1},   {"llama.feed_forward_length", &c->ffn, -1},
                {"llama.attention.head_count_kv", &c->kv_heads, 0}, {"llama.context_length", &c->context_length, 2048}};
    for (auto &k : ints) {
        int64_t v;
        const tl_status st = tl_gguf_get_int(f, k.key, &v);
        if (st == TL_E_NOT_FOUND && k.fallback >= 0) {
            v = k.fallback;
        } else if (st != TL_OK) {
            return fail(TL_E_PARSE, "%s: %s is missing or not an integer", path, k.key);
        }
        if (v < 0 || v > (1 << 24)) return fail(TL_E_PARSE, "%s: %s = %lld is out of range", path, k.key, (long long)v);
        *k.to = int32_t(v);
    }
    if (c->kv_heads == 0) c->kv_heads = c->heads;
    tl_gguf_get_float(f, "llama.rope.freq_base", &c->rope_theta);  // optional: llama.cpp's defaults
    tl_gguf_get_float(f, "llama.attention.layer_norm_rms_epsilon", &c->norm_eps);
    c->rope = TL_ROPE_INTERLEAVED;
    return TL_OK;
}

// An integer of config.json: fallback when the key is absent or null (Hugging Face's default),
// else a whole number from 1 to 2^24, refused by its name.
tl_status json_int(const cJSON *config, const std::string &path, const char *key, int32_t fallback, int32_t *out) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(config, key);
    if (!v || cJSON_IsNull(v)) return *out = fallback, TL_OK;
    if (!cJSON_IsNumber(v) || v->valuedouble != std::floor(v->valuedouble))
        return fail(TL_E_PARSE, "%s: %s is not a whole number", path.c_str(), key);
    if (v->valuedouble < 1 || v->valuedouble > (1 << 24))
        return fail(TL_E_PARSE, "%s: %s = %.17g is out of range (1 to 16777216)", path.c_str(), key, v->valuedouble);
    *out = int32_t(v->valuedouble);
    return TL_OK;
}

// A real number of config.json: fallback when absent or null, else above 0 and finite, refused by
// its name (a string such as "500000.0" must not run as the default).
tl_status json_positive(const cJSON *config, const std::string &path, const char *key, double fallback, double *out) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(config, key);
    if (!v || cJSON_IsNull(v)) return *out = fallback, TL_OK;
    if (!cJSON_IsNumber(v)) return fail(TL_E_PARSE, "%s: %s is not a number", path.c_str(), key);
    if (!std::isfinite(v->valuedouble)) return fail(TL_E_PARSE, "%s: %s is not finite", path.c_str(), key);
    if (!(v->valuedouble > 0))
        return fail(TL_E_PARSE, "%s: %s = %.17g is not a positive number", path.c_str(), key, v->valuedouble);
    *out = v->valuedouble;
    return TL_OK;
}

tl_status hf_config(const std::string &config_path, LlamaConfig *c) {
    std::FILE *f = std::fopen(config_path.c_str(), "rb");
    if (!f) return fail(TL_E_IO, "%s: cannot open (a Hugging Face model's config.json sits beside its weights)", config_path.c_str());
    std::string text;
    char buf[4096];
    for (size_t got; (got = std::fread(buf, 1, sizeof buf, f)) > 0 && text.size() < (1u << 20);) text.append(buf, got);
    std::fclose(f);
    cJSON *config = cJSON_Parse(text.c_str());
    if (!config) return fail(TL_E_PARSE, "%s: not JSON", config_path.c_str());
    struct {
        const char *key;
        int32_t *to;
        int32_t fallback;  // 0: required (refused below), but num_key_value_heads: one a head
    } ints[] = {{"hidden_size", &c->d_model, 0},      {"num_attention_heads", &c->heads, 0},
                {"num_hidden_layers", &c->layers, 0}, {"num_key_value_heads", &c->kv_heads, 0},
                {"intermediate_size", &c->ffn, 0},    {"vocab_size", &c->vocab, 0},
                {"max_position_embeddings", &c->context_length, 2048}};
    tl_status st = TL_OK;
    for (auto &k : ints)
        if (st == TL_OK) st = json_int(config, config_path, k.key, k.fallback, k.to);
    if (c->kv_heads == 0) c->kv_heads = c->heads;
    if (st == TL_OK) st = json_positive(config, config_path, "rope_theta", 10000, &c->rope_theta);
    if (st == TL_OK) st = json_positive(config, config_path, "rms_norm_eps", 1e-6, &c->norm_eps);
    c->rope = TL_ROPE_HALVES;
    cJSON_Delete(config);
    if (st != TL_OK) return st;
    if (!c->d_model || !c->heads || !c->layers || !c->ffn || !c->vocab)
        return fail(TL_E_PARSE, "%s: not a LlamaForCausalLM config (hidden_size, num_attention_heads, ...)", config_path.c_str());
    return TL_OK;
}

tl_status check_config(const LlamaConfig &c, const char *path) {
    if (c.d_model <= 0 || c.layers <= 0 || c.heads <= 0 || c.kv_heads <= 0 || c.ffn <= 0 || c.d_model % c.heads ||
        c.heads % c.kv_heads || c.head_dim() % 2 || c.layers > (1 << 16) || !(c.rope_theta > 0) || !(c.norm_eps > 0))
        return fail(TL_E_PARSE, "%s: the hyperparameters do not describe a Llama model (heads dividing d_model, ...)", path);
    return TL_OK;
}

// Every weight present, of its shape and of a dtype the op that reads it takes.
tl_status check_weights(tl_context *ctx, tl_model &m, const char *path) {
    const LlamaConfig &c = m.cfg;
    char buf[128];
    auto expect = [&](const char *name, int64_t rows, int64_t cols, bool norm, tl_dtype *dtype) -> tl_status {
        tl_tensor t;
        TL_TRY(m.get(ctx, name, &t));
        tl_tensor_info info = TL_TENSOR_INFO_INIT;
        tl_tensor_info_get(ctx, t, &info);
        tl_tensor_free(ctx, t);
        const bool ok = norm ? info.ndim == 1 && info.shape[0] == rows
                             : info.ndim == 2 && info.shape[0] == rows && info.shape[1] == cols;
        if (!ok)
            return cols ? fail(TL_E_PARSE, "%s: '%s' is not [%lld, %lld] as the hyperparameters say", path, name,
                               (long long)rows, (long long)cols)
                        : fail(TL_E_PARSE, "%s: '%s' is not [%lld] as the hyperparameters say", path, name, (long long)rows);
        if (norm && info.dtype != TL_F32 && info.dtype != TL_F16 && info.dtype != TL_BF16)
            return fail(TL_E_DTYPE, "%s: the norm '%s' is %s", path, name, tl_dtype_name(info.dtype));
        if (dtype) *dtype = info.dtype;
        return TL_OK;
    };
    tl_tensor embed;
    TL_TRY(m.get(ctx, m.weight_name(-1, 0, buf), &embed));
    tl_tensor_info info = TL_TENSOR_INFO_INIT;
    tl_tensor_info_get(ctx, embed, &info);
    tl_tensor_free(ctx, embed);
    if (info.ndim != 2 || info.shape[1] != c.d_model || info.shape[0] <= 0 || info.shape[0] > (1 << 24))
        return fail(TL_E_PARSE, "%s: the embedding table is not [vocab, %d]", path, c.d_model);
    if (m.cfg.vocab && m.cfg.vocab != info.shape[0])
        return fail(TL_E_PARSE, "%s: the embedding table has %lld rows, the config %d", path, (long long)info.shape[0], c.vocab);
    m.cfg.vocab = int32_t(info.shape[0]);
    const int64_t rows[kLayerWeights] = {c.d_model, c.d_model, c.kv_width(), c.kv_width(), c.d_model,
                                         c.d_model, c.ffn,     c.ffn,        c.d_model};
    const int64_t cols[kLayerWeights] = {0, c.d_model, c.d_model, c.d_model, c.d_model, 0, c.d_model, c.d_model, c.ffn};
    for (int32_t l = 0; l < c.layers; ++l)
        for (int w = 0; w < kLayerWeights; ++w)
            TL_TRY(expect(m.weight_name(l, w, buf), rows[w], cols[w], cols[w] == 0, l == 0 && w == kWq ? &m.weights_dtype : nullptr));
    TL_TRY(expect(m.weight_name(-1, 1, buf), c.d_model, 0, true, nullptr));
    tl_tensor head;
    const tl_status st = m.get(ctx, m.weight_name(-1, 2, buf), &head);
    if (st == TL_E_NOT_FOUND) {
        m.tied = true;
        return TL_OK;
    }
    TL_TRY(st);
    tl_tensor_free(ctx, head);
    return expect(m.weight_name(-1, 2, buf), c.vocab, c.d_model, false, nullptr);
}

bool ends_with(const std::string &s, const char *tail) {
    const size_t n = std::strlen(tail);
    return s.size() >= n && s.compare(s.size() - n, n, tail) == 0;
}

// The GGUF file's hyperparameters and tokenizer, once it is open.
tl_status from_gguf(const char *label, tl_model &m) {
    TL_TRY(gguf_config(m.gguf, label, &m.cfg));
    if (m.gguf->key("tokenizer.ggml.model")) TL_TRY(tokenizer_open(*m.gguf, m.memory, &m.tokenizer));
    return TL_OK;
}

// What a path holds, read rather than guessed from its name: a file downloaded or renamed
// without ".gguf" is still a GGUF file when it begins with GGUF's magic.
enum class PathHolds { gguf, another_file, no_file };
PathHolds what_path_holds(const char *path) {
    platform::File f;
    uint64_t bytes = 0;
    char magic[4];
    if (!platform::open_for_reading(path, &f, &bytes)) return PathHolds::no_file;  // a folder, or nothing
    const bool gguf = bytes >= 4 && platform::read_at(f, 0, magic, 4) && std::memcmp(magic, "GGUF", 4) == 0;
    platform::close(&f);
    return gguf ? PathHolds::gguf : PathHolds::another_file;
}

tl_status open_files(tl_context *ctx, const char *path, tl_model &m) {
    const std::string p(path);
    const PathHolds holds = what_path_holds(path);
    if (ends_with(p, ".gguf") || holds == PathHolds::gguf) {  // a missing .gguf: the GGUF reader says so
        TL_TRY(tl_gguf_open(ctx, path, &m.gguf));
        return from_gguf(path, m);
    }
    if (holds == PathHolds::another_file && !ends_with(p, ".safetensors"))
        return fail(TL_E_PARSE, "%s: neither a GGUF file (it does not begin with GGUF's magic) nor a Hugging Face "
                    "folder or its model.safetensors", path);
    // A Hugging Face folder, or its model.safetensors: config.json beside it.
    const bool folder_named = platform::folder_length(path) == p.size();  // ends with a separator
    const std::string weights = ends_with(p, ".safetensors") ? p : p + (folder_named ? "" : "/") + "model.safetensors";
    const std::string folder = weights.substr(0, platform::folder_length(weights.c_str()));
    TL_TRY(hf_config(folder + "config.json", &m.cfg));
    return tl_safetensors_map(ctx, weights.c_str(), &m.safetensors);
}

}  // namespace

namespace {

// One weight converted to dt into bytes the model owns (through f32 when the file holds
// neither f32 nor dt); tmp is a private ambient context.
tl_status convert_weight(tl_context *tmp, tl_model &m, int32_t l, int w, tl_dtype dt, ConvertedWeight *into) {
    tl_tensor stored, f32{}, made{};
    TL_TRY(m.weight(tmp, l, w, &stored));
    tl_tensor_info info = TL_TENSOR_INFO_INIT;
    tl_status st = tl_tensor_info_get(tmp, stored, &info);
    if (st == TL_OK && info.dtype == dt) return tl_tensor_free(tmp, stored);  // already so: read in place
    const bool via_f32 = info.dtype != TL_F32 && dt != TL_F32;
    if (st == TL_OK && via_f32) st = tl_convert(tmp, stored, TL_F32, &f32);
    if (st == TL_OK) st = tl_convert(tmp, via_f32 ? f32 : stored, dt, &made);
    if (st == TL_OK) {
        int64_t block = 1;
        size_t block_bytes = 0;
        tl_dtype_block(dt, &block, &block_bytes);
        into->dtype = dt, into->rows = info.shape[0], into->cols = info.shape[1];
        into->bytes = size_t(into->rows) * size_t(into->cols / block) * block_bytes;
        into->data = m.memory.allocate_streamed(into->bytes);
        st = into->data ? tl_tensor_read(tmp, made, into->data, into->bytes)
                        : allocation_refused("no memory for a converted weight");
    }
    char why[256];
    std::snprintf(why, sizeof why, "%s", st == TL_OK ? "" : tl_last_error());
    for (tl_tensor t : {stored, f32, made})
        if (t.bits) tl_tensor_free(tmp, t);
    char buf[128];
    return st == TL_OK ? TL_OK : fail(st, "model: converting '%s' to %s: %s", m.weight_name(l, w, buf), tl_dtype_name(dt), why);
}

// The projections, the head and the embedding table converted to dt (the norms stay).
tl_status convert_weights(tl_context *ctx, tl_model &m, tl_dtype dt) {
    const LlamaConfig &c = m.cfg;
    m.converted.resize(size_t(c.layers * kLayerWeights + 3));
    const tl_allocator allocator = ctx->memory.allocator();
    tl_context *tmp;
    TL_TRY(tl_context_create(&allocator, &tmp));
    tl_status st = TL_OK;
    for (int32_t l = 0; l < c.layers && st == TL_OK; ++l)
        for (int w = 0; w < kLayerWeights && st == TL_OK; ++w)
            if (w != kAttnNorm && w != kFfnNorm)
                st = convert_weight(tmp, m, l, w, dt, &m.converted[size_t(l * kLayerWeights + w)]);
    for (int w : {int(kEmbed), int(kHead)})
        if (st == TL_OK && !(w == kHead && m.tied))
            st = convert_weight(tmp, m, -1, w, dt, &m.converted[size_t(c.layers * kLayerWeights + w)]);
    tl_context_destroy(tmp);
    if (st == TL_OK) m.weights_dtype = dt;
    return st;
}

// Each q4_0, q8_0, q4_K, q5_K and q6_K projection's and the head's whole sixteens of rows laid out for
// decode, where this CPU has the kernel; every other one the file holds (f32, f16, bf16, the block
// types without a layout, any of them on a CPU without the kernel) copied as stored: both kinds on
// huge pages with the default allocator, where a decode step streams them (tl_model_options.repack).
tl_status repack_weights(tl_context *ctx, tl_model &m) {
    const size_t slots = size_t(m.cfg.layers * kLayerWeights + 3);
    m.rows16.resize(slots);
    if (m.converted.empty()) m.converted.resize(slots);
    const tl_allocator allocator = ctx->memory.allocator();
    tl_context *tmp;
    TL_TRY(tl_context_create(&allocator, &tmp));
    tl_status st = TL_OK;
    const auto repack = [&](int32_t l, int w) {
        ConvertedWeight &copy = m.converted[slot_of(m.cfg, l, w)];
        tl_tensor t;
        TL_TRY(m.weight(tmp, l, w, &t));
        tl_tensor_info info = TL_TENSOR_INFO_INIT;
        void *data = nullptr;
        tl_status got = tl_tensor_info_get(tmp, t, &info);
        if (got == TL_OK) got = tl_tensor_data(tmp, t, &data);
        if (got == TL_OK && rows16_kernel(info.dtype) && info.shape[0] >= kPanelRows) {
            const int64_t k = info.shape[1], sixteens = info.shape[0] / kPanelRows;
            const size_t row_bytes = size_t(bytes_of(info.dtype, k));
            const size_t bytes = size_t(sixteens) * rows16_bytes(info.dtype, k);
            ConvertedWeight &into = m.rows16[slot_of(m.cfg, l, w)];
            into.data = m.memory.allocate_streamed(bytes);
            if (!into.data) got = allocation_refused("no memory for a weight's decode layout");
            if (got == TL_OK) {
                into.bytes = bytes, into.dtype = info.dtype, into.rows = sixteens * kPanelRows, into.cols = k;
                for (int64_t i = 0; i < sixteens; ++i)
                    pack_rows16(info.dtype, static_cast<const std::byte *>(data) + size_t(i * kPanelRows) * row_bytes,
                                row_bytes, k, static_cast<std::byte *>(into.data) + size_t(i) * rows16_bytes(info.dtype, k));
                m.repacked_bytes += bytes;
            }
        } else if (got == TL_OK && !copy.data) {  // (converted at open: the model's own already)
            const size_t bytes = size_t(info.shape[0]) * size_t(bytes_of(info.dtype, info.shape[1]));
            copy.data = m.memory.allocate_streamed(bytes);
            if (!copy.data) got = allocation_refused("no memory for a weight's copy");
            if (got == TL_OK) {
                copy.bytes = bytes, copy.dtype = info.dtype, copy.rows = info.shape[0], copy.cols = info.shape[1];
                std::memcpy(copy.data, data, bytes);
                m.repacked_bytes += bytes;
            }
        }
        tl_tensor_free(tmp, t);
        return got;
    };
    for (int32_t l = 0; l < m.cfg.layers && st == TL_OK; ++l)
        for (int w = 0; w < kLayerWeights && st == TL_OK; ++w)
            if (w != kAttnNorm && w != kFfnNorm) st = repack(l, w);
    if (st == TL_OK && !m.tied) st = repack(-1, kHead);
    tl_context_destroy(tmp);
    return st;
}

// A model whose files open_files_of opens; checked whole, or closed with the refusal.
template <class Open>
tl_status open_model(tl_context *ctx, const char *path, const tl_model_options &o, Open open_files_of, tl_model **out) {
    void *at = ctx->memory.allocate(sizeof(tl_model), alignof(tl_model));
    if (!at) return allocation_refused("no memory for a model");
    tl_model *m = new (at) tl_model(ctx->memory);
    tl_status st;
    try {  // the model's own tables (converted weights' slots) throw bad_alloc: closed like any refusal
        st = open_files_of(*m);
        if (st == TL_OK) st = check_config(m->cfg, path);
        if (st == TL_OK) st = check_weights(ctx, *m, path);
        if (st == TL_OK && m->tokenizer && m->tokenizer->vocab.size() != m->cfg.vocab)
            st = fail(TL_E_PARSE, "%s: the vocabulary has %d tokens, the embedding table %d rows", path,
                      m->tokenizer->vocab.size(), m->cfg.vocab);
        if (st == TL_OK && o.weights_dtype) st = convert_weights(ctx, *m, o.weights_dtype);
        if (st == TL_OK && o.repack) st = repack_weights(ctx, *m);
    } catch (const std::bad_alloc &) {
        st = allocation_refused("%s: no memory for the model's tables", path);
    }
    if (st != TL_OK) {
        m->sessions = 0;
        model_close(m);
        return st;
    }
    *out = m;
    return TL_OK;
}

}  // namespace

tl_status model_open(tl_context *ctx, const char *path, const tl_model_options &o, tl_model **out) {
    return open_model(ctx, path, o, [&](tl_model &m) { return open_files(ctx, path, m); }, out);
}

tl_status model_open_memory(tl_context *ctx, const void *data, size_t size, tl_model **out) {
    static const char kLabel[] = "gguf in memory";
    const tl_model_options as_stored = TL_MODEL_OPTIONS_INIT;
    return open_model(ctx, kLabel, as_stored, [&](tl_model &m) {
        TL_TRY(tl_gguf_open_memory(ctx, data, size, &m.gguf));
        return from_gguf(kLabel, m);
    }, out);
}

tl_status model_close(tl_model *m) {
    const int32_t open = m->sessions.load();
    if (open) return fail(TL_E_BUSY, "model: %d sessions are still open: close them first", open);
    if (m->tokenizer) tokenizer_close(m->tokenizer);
    for (const auto *copies : {&m->converted, &m->rows16})
        for (const ConvertedWeight &c : *copies)
            if (c.data) m->memory.release_streamed(c.data, c.bytes);
    tl_gguf_close(m->gguf);
    tl_safetensors_close(m->safetensors);
    Memory memory = m->memory;
    m->~tl_model();
    memory.release(m, sizeof(tl_model));
    return TL_OK;
}

}  // namespace tl
