// A session: its own context (the opener's allocator and executor), handles over the model's
// weights, the KV cache and the residual rows in a long-lived scope, each step's tensors in a
// scope reset after each of its layers, and the host-side state of generation (the ids fed, the
// logits, the sampler's and the text stream's).
#pragma once
#include <cstdint>

#include "llm/llama_model.h"
#include "llm/tokenizer.h"

namespace tl {

struct LayerHandles {
    tl_tensor w[kLayerWeights];
    const std::byte *rows16[kLayerWeights];  // the model's decode layouts (nullptr: none)
};

// One candidate token of a draw.
struct Candidate {
    int32_t id;
    float logit;
    double p;
};

}  // namespace tl

struct tl_session {
    explicit tl_session(const tl::Memory &m);
    tl::Memory memory;
    tl_model *model = nullptr;
    tl_context *ctx = nullptr;
    tl_scope cache_scope{}, step_scope{};
    tl::AllocVector<tl::LayerHandles> layers;
    tl_tensor embed{}, final_norm{}, lm_head{};
    const std::byte *lm_head_rows16 = nullptr;
    tl::AllocVector<tl_tensor> k_cache, v_cache;
    tl_tensor residual{};  // scoped: [max_chunk, D], the residual stream between a step's layers
    bool ambient = false;
    tl::AllocVector<tl_tensor> made;  // ambient mode: the step's tensors, freed after it
    tl_scope_stats last_step = TL_SCOPE_STATS_INIT;
    tl::AllocVector<float> logits;
    bool have_logits = false;
    tl::AllocVector<int32_t> history;
    tl::AllocVector<tl::Candidate> candidates;
    tl::AllocVector<uint8_t> seen;  // repetition penalty: the tokens marked once each
    tl::TokenizeScratch tokens;
    tl_text_stream stream = TL_TEXT_STREAM_INIT;
    uint64_t draws = 0;
    int32_t context_length = 0, max_chunk = 64;
    tl_dtype kv_dtype = TL_F32;
};

namespace tl {

tl_status session_open(tl_context *ctx, tl_model *m, const tl_session_options &o, tl_session **out);
void session_close(tl_session *s);
// ids at the next positions, in chunks of at most max_chunk; the logits after the last.
tl_status session_feed(tl_session *s, const int32_t *ids, size_t n);
tl_status session_rewind(tl_session *s, int32_t keep);
// TL_E_SHAPE saying why s has no logits: nothing fed yet, or its last feed refused.
tl_status no_logits(const tl_session *s);
// sampler.cpp
tl_status session_sample(tl_session *s, const tl_sampler &p, int32_t *token);

}  // namespace tl
