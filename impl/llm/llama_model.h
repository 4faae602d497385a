// A Llama-family model opened for sessions: its hyperparameters, the open file its weights lie
// in (GGUF, or a Hugging Face folder's mapped model.safetensors), its tokenizer.  Sessions take
// their own handles over the file's mapping (no copy), so the model itself is never written
// after open and any number of sessions on any threads may share it.
#pragma once
#include <atomic>
#include <cstdint>

#include "core/memory.h"
#include "llm/vocabulary.h"  // AllocVector
#include "tensorlife/tl.h"

namespace tl {

struct LlamaConfig {
    int32_t vocab = 0, d_model = 0, layers = 0, heads = 0, kv_heads = 0, ffn = 0, context_length = 0;
    double rope_theta = 10000, norm_eps = 1e-5;
    tl_rope_mode rope = TL_ROPE_INTERLEAVED;  // GGUF's Llama files; Hugging Face's rotate halves
    int32_t head_dim() const { return d_model / heads; }
    int32_t kv_width() const { return head_dim() * kv_heads; }
};

// The weights of a layer, in one order for every loop over them.
enum LayerWeight { kAttnNorm, kWq, kWk, kWv, kWo, kFfnNorm, kWGate, kWUp, kWDown, kLayerWeights };
// The model's other weights, as weight(-1, w) names them.
enum TopWeight { kEmbed, kFinalNorm, kHead };

// A weight converted at open (tl_model_options.weights_dtype): bytes the model owns.
struct ConvertedWeight {
    void *data = nullptr;  // nullptr: read from the file
    size_t bytes = 0;
    tl_dtype dtype = TL_F32;
    int64_t rows = 0, cols = 0;
};

}  // namespace tl

struct tl_model {
    explicit tl_model(const tl::Memory &m) : memory(m) {}
    tl::Memory memory;
    tl::LlamaConfig cfg;
    tl_gguf_file *gguf = nullptr;
    tl_safetensors_file *safetensors = nullptr;
    tl_tokenizer *tokenizer = nullptr;
    bool tied = false;  // no output head: the logits come from the embedding table
    tl_dtype weights_dtype = TL_F32;
    // One slot a weight (layer l's w at l * kLayerWeights + w, then the TopWeights); empty when
    // the weights are read from the file as stored.
    tl::AllocVector<tl::ConvertedWeight> converted{tl::StlAllocator<tl::ConvertedWeight>(&memory)};
    // The same slots: each q4_0 weight's whole sixteens of rows laid out for decode
    // (tl_model_options.repack; kernels/quant.h's pack_rows16), or empty.
    tl::AllocVector<tl::ConvertedWeight> rows16{tl::StlAllocator<tl::ConvertedWeight>(&memory)};
    uint64_t repacked_bytes = 0;
    std::atomic<int32_t> sessions{0};

    // name of layer l's weight w (or, for l < 0, of the embedding table, final norm and head:
    // w 0, 1, 2) in this model's file, into buf (128 bytes).
    const char *weight_name(int32_t l, int w, char *buf) const;
    // A tensor over the file in ctx's current target.
    tl_status get(tl_context *ctx, const char *name, tl_tensor *out) const;
    // Weight w of layer l (l < 0: a TopWeight) as sessions read it: the converted copy, or the file's.
    tl_status weight(tl_context *ctx, int32_t l, int w, tl_tensor *out) const;
    // Weight w of layer l's rows16 layout, or nullptr.
    const std::byte *weight_rows16(int32_t l, int w) const;
};

namespace tl {

tl_status model_open(tl_context *ctx, const char *path, const tl_model_options &o, tl_model **out);
tl_status model_open_memory(tl_context *ctx, const void *data, size_t size, tl_model **out);
tl_status model_close(tl_model *m);

}  // namespace tl
