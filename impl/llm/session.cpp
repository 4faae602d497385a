// The Llama forward pass over a session's KV cache, on the library's own ops: RMSNorm,
// grouped-query attention with RoPE, SwiGLU MLP, each projection a product with the [out, in]
// rows the file stores (any weight dtype, read where it lies).  A chunk of n tokens runs as one
// batch: its products n rows at once, its attention causal within the chunk (tl_attention places
// query i at position valid_rows - n + i), the last layer's queries and MLP for the last row alone
// (its logits are the chunk's only output).
#include "llm/session.h"

#include <cmath>
#include <new>

#include "core/context.h"
#include "core/error.h"
#include "ops/ops.h"

tl_session::tl_session(const tl::Memory &m)
    : memory(m),
      layers(tl::StlAllocator<tl::LayerHandles>(&memory)),
      k_cache(tl::StlAllocator<tl_tensor>(&memory)),
      v_cache(tl::StlAllocator<tl_tensor>(&memory)),
      made(tl::StlAllocator<tl_tensor>(&memory)),
      logits(tl::StlAllocator<float>(&memory)),
      history(tl::StlAllocator<int32_t>(&memory)),
      candidates(tl::StlAllocator<tl::Candidate>(&memory)),
      seen(tl::StlAllocator<uint8_t>(&memory)),
      tokens(&memory) {}

namespace tl {

namespace {

// A step's calls, each checked: the first failure leaves its status (and message) and the step
// stops.  In ambient mode each tensor made is kept, to be freed after the step.
struct Step {
    tl_session &s;
    tl_status status = TL_OK;
    tl_tensor run(tl_status st, tl_tensor t) {
        if (status == TL_OK) status = st;
        if (st == TL_OK && s.ambient) s.made.push_back(t);
        return t;
    }
};
#define STEP(call) (step.status == TL_OK ? step.run((call), out) : out)

// x times the transpose of a weight's stored rows; rows16: their decode layout, or nullptr.
tl_tensor project(Step &step, tl_tensor x, tl_tensor rows, const std::byte *rows16 = nullptr) {
    tl_context *ctx = step.s.ctx;
    tl_tensor out{}, view;
    view = STEP(tl_transpose(ctx, rows, 0, 1, &out));
    if (rows16) return STEP(op_matmul_rows16(*ctx, x, view, rows16, &out));
    return STEP(tl_matmul(ctx, x, view, &out));
}

// x times the transposes of count weights' stored rows (w.w[which[i]]) into outs: the
// activations converted and quantized once for all (op_matmul_shared).
void project_shared(Step &step, tl_tensor x, const LayerHandles &w, int count, const int *which, tl_tensor *outs) {
    tl_context *ctx = step.s.ctx;
    tl_tensor out{}, views[4];
    const std::byte *rows16[4];
    for (int i = 0; i < count; ++i) {
        views[i] = STEP(tl_transpose(ctx, w.w[which[i]], 0, 1, &out));
        rows16[i] = w.rows16[which[i]];
        outs[i] = tl_tensor{};
    }
    if (step.status != TL_OK) return;
    tl_tensor made[4];
    const tl_status st = op_matmul_shared(*ctx, x, count, views, rows16, made);
    for (int i = 0; i < count && st == TL_OK; ++i) outs[i] = step.run(st, made[i]);
    if (st != TL_OK) step.run(st, tl_tensor{});
}

// [n, heads * hd] rows as [heads, n, hd], turned by RoPE from position pos.
tl_tensor rotated_heads(Step &step, tl_tensor rows, int64_t n, int32_t heads, int32_t pos) {
    const LlamaConfig &c = step.s.model->cfg;
    tl_context *ctx = step.s.ctx;
    const int64_t shape[3] = {n, heads, c.head_dim()};
    tl_tensor out{}, t;
    t = STEP(tl_reshape(ctx, rows, 3, shape, &out));
    t = STEP(tl_transpose(ctx, t, 0, 1, &out));
    return STEP(tl_rope(ctx, t, pos, c.rope_theta, c.rope, &out));
}

// Rows [first, first + n) of a cache [T, Hkv * hd] as [Hkv, n, hd].
tl_tensor cache_heads(Step &step, tl_tensor cache, int64_t first, int64_t n) {
    const LlamaConfig &c = step.s.model->cfg;
    tl_context *ctx = step.s.ctx;
    const int64_t shape[3] = {n, c.kv_heads, c.head_dim()};
    tl_tensor out{}, t;
    t = STEP(tl_slice(ctx, cache, 0, first, n, &out));
    t = STEP(tl_reshape(ctx, t, 3, shape, &out));
    return STEP(tl_transpose(ctx, t, 0, 1, &out));
}

// The attention block of layer l over h's n rows (all of them into the cache), for its last nq
// rows' queries: [nq, D].
tl_tensor attention(Step &step, int32_t l, tl_tensor h, int64_t n, int64_t nq, int32_t pos) {
    tl_session &s = step.s;
    const LlamaConfig &c = s.model->cfg;
    const LayerHandles &w = s.layers[size_t(l)];
    tl_context *ctx = s.ctx;
    tl_tensor out{}, queries = h;
    if (nq < n) queries = STEP(tl_slice(ctx, h, 0, n - nq, nq, &out));
    // q, k and v of every row from one quantization of h; the queries apart when they are fewer.
    tl_tensor qkv[3];
    const int which[3] = {kWk, kWv, kWq};
    project_shared(step, h, w, nq < n ? 2 : 3, which, qkv);
    if (nq < n) qkv[2] = project(step, queries, w.w[kWq], w.rows16[kWq]);
    const tl_tensor q = rotated_heads(step, qkv[2], nq, c.heads, pos + int32_t(n - nq));  // [H, nq, hd]
    const tl_tensor k = rotated_heads(step, qkv[0], n, c.kv_heads, pos);                // [Hkv, n, hd]
    const tl_tensor v = qkv[1];                                                          // [n, Hkv * hd]
    if (step.status == TL_OK) step.status = tl_copy_into(ctx, k, cache_heads(step, s.k_cache[size_t(l)], pos, n));
    tl_tensor rows = STEP(tl_slice(ctx, s.v_cache[size_t(l)], 0, pos, n, &out));
    if (step.status == TL_OK) step.status = tl_copy_into(ctx, v, rows);
    const int64_t valid = pos + n;
    // The whole cache, of which valid rows are read: attention's scratch is then the same size at
    // every position (grown once).
    const int64_t all = s.context_length;
    tl_tensor mixed = STEP(tl_attention(ctx, q, cache_heads(step, s.k_cache[size_t(l)], 0, all),
                                        cache_heads(step, s.v_cache[size_t(l)], 0, all), valid,
                                        1.0 / std::sqrt(double(c.head_dim())), &out));  // [H, nq, hd]
    const int64_t flat[2] = {nq, c.d_model};
    mixed = STEP(tl_transpose(ctx, mixed, 0, 1, &out));
    mixed = STEP(tl_reshape(ctx, mixed, 2, flat, &out));
    return project(step, mixed, w.w[kWo], w.rows16[kWo]);
}

// The step's tensors dead whatever happened: the scope reset (its figures kept first), or in
// ambient mode each freed, the last made first (a view before its base).
tl_status finish_step(tl_session &s, tl_status status) {
    if (s.ambient) {
        tl_status freed = TL_OK;
        for (size_t i = s.made.size(); i-- > 0;)
            if (freed == TL_OK) freed = tl_tensor_free(s.ctx, s.made[i]);
        s.made.clear();
        return status != TL_OK ? status : freed;
    }
    tl_status st = tl_scope_stats_get(s.ctx, s.step_scope, &s.last_step);
    const tl_status reset = tl_scope_reset(s.ctx, s.step_scope);
    if (st == TL_OK) st = reset;
    return status != TL_OK ? status : st;
}

// The residual stream x after a stage of the step.  Scoped: copied into the session's residual
// rows and the step scope reset, so a step holds one layer's tensors at a time, not every
// layer's; the rows as a view made after the reset.  Ambient: x itself.
tl_tensor end_layer(Step &step, tl_tensor x, int64_t n) {
    tl_session &s = step.s;
    if (s.ambient || step.status != TL_OK) return x;
    tl_tensor out{}, rows;
    rows = STEP(tl_slice(s.ctx, s.residual, 0, 0, n, &out));
    if (step.status == TL_OK) step.status = tl_copy_into(s.ctx, x, rows);
    const tl_status reset = tl_scope_reset(s.ctx, s.step_scope);
    if (step.status == TL_OK) step.status = reset;
    return STEP(tl_slice(s.ctx, s.residual, 0, 0, n, &out));
}

// One chunk: the logits after its last token into s.logits; the step's tensors dead whatever happened.
tl_status forward(tl_session &s, const int32_t *ids, int64_t n, int32_t pos) {
    const LlamaConfig &c = s.model->cfg;
    tl_context *ctx = s.ctx;
    Step step{s};
    tl_tensor out{}, x, h, g, u;
    x = STEP(tl_tensor_from_data(ctx, TL_I32, 1, &n, ids, size_t(n) * sizeof(int32_t), &out));
    x = STEP(tl_gather_rows(ctx, s.embed, x, &out));  // [n, D] f32, from a table in any dtype
    x = end_layer(step, x, n);
    for (int32_t l = 0; l < c.layers && step.status == TL_OK; ++l) {
        const LayerHandles &w = s.layers[size_t(l)];
        // Only the last row reaches the logits: the last layer fills the cache with every row's
        // keys and values and takes the rest for that row alone (as llama.cpp takes its MLP).
        const int64_t rows = l + 1 < c.layers ? n : 1;
        h = STEP(tl_rmsnorm(ctx, x, w.w[kAttnNorm], c.norm_eps, &out));
        const tl_tensor mixed = attention(step, l, h, n, rows, pos);
        if (rows < n) x = STEP(tl_slice(ctx, x, 0, n - rows, rows, &out));
        x = STEP(tl_add(ctx, x, mixed, &out));
        h = STEP(tl_rmsnorm(ctx, x, w.w[kFfnNorm], c.norm_eps, &out));
        tl_tensor gate_up[2];
        const int which[2] = {kWGate, kWUp};
        project_shared(step, h, w, 2, which, gate_up);
        g = STEP(tl_silu(ctx, gate_up[0], &out));
        u = gate_up[1];
        g = STEP(tl_mul(ctx, g, u, &out));
        x = STEP(tl_add(ctx, x, project(step, g, w.w[kWDown], w.rows16[kWDown]), &out));
        x = end_layer(step, x, rows);
    }
    h = STEP(tl_rmsnorm(ctx, x, s.final_norm, c.norm_eps, &out));
    const tl_tensor logits = project(step, h, s.lm_head, s.lm_head_rows16);
    if (step.status == TL_OK)
        step.status = tl_tensor_read(ctx, logits, s.logits.data(), s.logits.size() * sizeof(float));
    return finish_step(s, step.status);
}
#undef STEP

// A norm's weight as f32 (rmsnorm takes f32 weights): a file's f16/bf16 norm converted once, the
// tensor over the file freed.
tl_status norm_as_f32(tl_context *ctx, tl_tensor *t) {
    tl_tensor_info info = TL_TENSOR_INFO_INIT;
    TL_TRY(tl_tensor_info_get(ctx, *t, &info));
    if (info.dtype == TL_F32) return TL_OK;
    tl_tensor f32;
    TL_TRY(tl_convert(ctx, *t, TL_F32, &f32));
    TL_TRY(tl_tensor_free(ctx, *t));
    *t = f32;
    return TL_OK;
}

tl_status take_weights(tl_session &s) {
    const tl_model &m = *s.model;
    s.layers.resize(size_t(m.cfg.layers));
    for (int32_t l = 0; l < m.cfg.layers; ++l)
        for (int w = 0; w < kLayerWeights; ++w) {
            tl_tensor *t = &s.layers[size_t(l)].w[w];
            s.layers[size_t(l)].rows16[w] = m.weight_rows16(l, w);
            TL_TRY(m.weight(s.ctx, l, w, t));
            if (w == kAttnNorm || w == kFfnNorm) TL_TRY(norm_as_f32(s.ctx, t));
        }
    TL_TRY(m.weight(s.ctx, -1, kEmbed, &s.embed));
    TL_TRY(m.weight(s.ctx, -1, kFinalNorm, &s.final_norm));
    TL_TRY(norm_as_f32(s.ctx, &s.final_norm));
    if (m.tied) {
        s.lm_head = s.embed;
        return TL_OK;
    }
    s.lm_head_rows16 = m.weight_rows16(-1, kHead);
    return m.weight(s.ctx, -1, kHead, &s.lm_head);
}

tl_status open_in(tl_session &s) {
    const LlamaConfig &c = s.model->cfg;
    TL_TRY(take_weights(s));
    if (!s.ambient) TL_TRY(tl_scope_open(s.ctx, "kv-cache", 0, &s.cache_scope));
    const int64_t shape[2] = {s.context_length, c.kv_width()};
    s.k_cache.resize(size_t(c.layers));
    s.v_cache.resize(size_t(c.layers));
    for (int32_t l = 0; l < c.layers; ++l) {
        TL_TRY(tl_tensor_zeros(s.ctx, s.kv_dtype, 2, shape, &s.k_cache[size_t(l)]));
        TL_TRY(tl_tensor_zeros(s.ctx, s.kv_dtype, 2, shape, &s.v_cache[size_t(l)]));
    }
    const int64_t residual_shape[2] = {s.max_chunk, c.d_model};
    if (!s.ambient) TL_TRY(tl_tensor_zeros(s.ctx, TL_F32, 2, residual_shape, &s.residual));
    if (!s.ambient) TL_TRY(tl_scope_open(s.ctx, "session-step", 0, &s.step_scope));
    s.logits.resize(size_t(c.vocab));
    s.candidates.reserve(size_t(c.vocab));
    s.seen.resize(size_t(c.vocab));
    s.history.reserve(size_t(s.context_length));
    return TL_OK;
}

}  // namespace

tl_status session_open(tl_context *ctx, tl_model *m, const tl_session_options &o, tl_session **out) {
    if (o.kv_dtype != TL_F32 && o.kv_dtype != TL_F16 && o.kv_dtype != TL_BF16 && o.kv_dtype != 0)
        return fail(TL_E_DTYPE, "session: a KV cache of %s (f32, f16 or bf16)", tl_dtype_name(o.kv_dtype));
    if (o.context_length < 0 || o.context_length > (1 << 20) || o.max_chunk < 0 || (o.ambient != 0 && o.ambient != 1))
        return fail(TL_E_INVALID_ARGUMENT, "session: context_length %d, max_chunk %d, ambient %d", o.context_length,
                    o.max_chunk, o.ambient);
    void *at = ctx->memory.allocate(sizeof(tl_session), alignof(tl_session));
    if (!at) return allocation_refused("no memory for a session");
    tl_session *s;
    try {
        s = new (at) tl_session(ctx->memory);
    } catch (...) {
        ctx->memory.release(at, sizeof(tl_session));
        throw;
    }
    s->model = m;
    ++m->sessions;
    s->context_length = o.context_length ? o.context_length : (m->cfg.context_length > 0 && m->cfg.context_length < 4096 ? m->cfg.context_length : 4096);
    s->max_chunk = o.max_chunk ? o.max_chunk : 64;
    s->kv_dtype = o.kv_dtype ? o.kv_dtype : TL_F32;
    s->ambient = o.ambient != 0;
    const tl_allocator allocator = ctx->memory.allocator();
    tl_status st = tl_context_create(&allocator, &s->ctx);
    if (st == TL_OK && ctx->executor.parallel_for) st = tl_context_set_executor(s->ctx, &ctx->executor);
    try {
        if (st == TL_OK) st = open_in(*s);
    } catch (...) {
        session_close(s);
        throw;
    }
    if (st != TL_OK) {
        session_close(s);
        return st;
    }
    *out = s;
    return TL_OK;
}

void session_close(tl_session *s) {
    if (s->ctx) tl_context_destroy(s->ctx);
    --s->model->sessions;
    Memory memory = s->memory;
    s->~tl_session();
    memory.release(s, sizeof(tl_session));
}

tl_status session_feed(tl_session *s, const int32_t *ids, size_t n) {
    const int32_t vocab = s->model->cfg.vocab;
    const int32_t pos = int32_t(s->history.size());
    if (n == 0) return fail(TL_E_INVALID_ARGUMENT, "session: nothing to feed");
    if (n > size_t(s->context_length - pos))
        return fail(TL_E_SHAPE, "session: the context of %d tokens is full (%d fed, %zu more): rewind, or open a session with a longer context",
                    s->context_length, pos, n);
    for (size_t i = 0; i < n; ++i)
        if (ids[i] < 0 || ids[i] >= vocab)
            return fail(TL_E_INVALID_ARGUMENT, "session: id %zu is %d, not in the vocabulary (0..%d)", i, ids[i], vocab - 1);
    for (size_t done = 0; done < n;) {
        const int64_t chunk = int64_t(std::min<size_t>(n - done, size_t(s->max_chunk)));
        const tl_status st = forward(*s, ids + done, chunk, int32_t(s->history.size()));
        if (st != TL_OK) {
            s->have_logits = false;  // the cache rows past history are garbage now, but never read
            return st;
        }
        s->history.insert(s->history.end(), ids + done, ids + done + chunk);
        done += size_t(chunk);
    }
    s->have_logits = true;
    return TL_OK;
}

tl_status no_logits(const tl_session *s) {
    if (s->history.empty()) return fail(TL_E_SHAPE, "session: nothing fed yet, so no logits");
    return fail(TL_E_SHAPE, "session: its last feed was refused, so no logits (rewind to %zu to compute them)",
                s->history.size());
}

tl_status session_rewind(tl_session *s, int32_t keep) {
    const int32_t pos = int32_t(s->history.size());
    if (keep < 0 || keep > pos) return fail(TL_E_INVALID_ARGUMENT, "session: rewind to %d of %d tokens", keep, pos);
    s->stream = TL_TEXT_STREAM_INIT;
    if (keep == pos && s->have_logits) return TL_OK;  // else (a refused feed) the last token again
    s->history.resize(size_t(keep));
    s->have_logits = false;
    if (keep == 0) return TL_OK;
    const int32_t last = s->history.back();
    s->history.pop_back();
    return session_feed(s, &last, 1);
}

}  // namespace tl
