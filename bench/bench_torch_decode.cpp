// The decode step of examples/decode written with libtorch's C++ API, timed side by side with
// tensorlife's scoped and ambient modes in one run, on the same weights (copied out of the
// tensorlife model).  Also reports whether the greedy tokens agree.
// Build: cmake -DTL_BENCH_TORCH=ON (needs Debian's libtorch-dev).  Run: bench_torch_decode [--quick]
#include <torch/torch.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

extern "C" {
#include "bench_util.h"
#include "model.h"
}

namespace {

torch::Tensor to_torch(tl_context *ctx, tl_tensor t) {
    tl_tensor_info info{};
    info.struct_size = sizeof info;
    TL_CHECK(tl_tensor_info_get(ctx, t, &info));
    std::vector<int64_t> shape(info.shape, info.shape + info.ndim);
    torch::Tensor out = torch::empty(shape, torch::kFloat32);
    TL_CHECK(tl_tensor_read(ctx, t, out.data_ptr<float>(), size_t(out.numel()) * sizeof(float)));
    return out;
}

struct TorchLayer {
    torch::Tensor attn_norm, wq, wk, wv, wo, mlp_norm, w_up, w_down;
};

struct TorchModel {
    model_config cfg;
    torch::Tensor embed, final_norm, lm_head;
    std::vector<TorchLayer> layers;
    std::vector<torch::Tensor> k_cache, v_cache;

    TorchModel(tl_context *ctx, const model &m) : cfg(m.cfg) {
        embed = to_torch(ctx, m.embed);
        final_norm = to_torch(ctx, m.final_norm);
        lm_head = to_torch(ctx, m.lm_head);
        for (int l = 0; l < cfg.layers; ++l) {
            const layer_weights &w = m.layer[l];
            layers.push_back({to_torch(ctx, w.attn_norm), to_torch(ctx, w.wq), to_torch(ctx, w.wk), to_torch(ctx, w.wv),
                              to_torch(ctx, w.wo), to_torch(ctx, w.mlp_norm), to_torch(ctx, w.w_up),
                              to_torch(ctx, w.w_down)});
            k_cache.push_back(torch::zeros({cfg.tokens, cfg.d_model}));
            v_cache.push_back(torch::zeros({cfg.tokens, cfg.d_model}));
        }
    }

    static torch::Tensor rmsnorm(const torch::Tensor &x, const torch::Tensor &w) {
        return x * torch::rsqrt(x.pow(2).mean(-1, true) + 1e-5) * w;
    }

    int32_t step(int32_t token, int pos) {
        const int64_t heads = cfg.heads, hd = cfg.d_model / cfg.heads, T = cfg.tokens;
        torch::Tensor mask = torch::full({1, T}, -INFINITY);
        mask.narrow(1, 0, pos + 1).zero_();
        torch::Tensor x = embed.narrow(0, token, 1);
        for (int l = 0; l < cfg.layers; ++l) {
            const TorchLayer &w = layers[l];
            torch::Tensor h = rmsnorm(x, w.attn_norm);
            torch::Tensor q = h.matmul(w.wq), k = h.matmul(w.wk), v = h.matmul(w.wv);
            k_cache[l].narrow(0, pos, 1).copy_(k);
            v_cache[l].narrow(0, pos, 1).copy_(v);
            torch::Tensor qh = q.view({1, heads, hd}).transpose(0, 1);                      // [H,1,hd]
            torch::Tensor keys = k_cache[l].view({T, heads, hd}).permute({1, 2, 0});        // [H,hd,T]
            torch::Tensor values = v_cache[l].view({T, heads, hd}).transpose(0, 1);         // [H,T,hd]
            torch::Tensor probs = torch::softmax(qh.matmul(keys) / std::sqrt(double(hd)) + mask, -1);
            torch::Tensor mixed = probs.matmul(values).transpose(0, 1).reshape({1, cfg.d_model});
            x = x + mixed.matmul(w.wo);
            h = torch::silu(rmsnorm(x, w.mlp_norm).matmul(w.w_up)).matmul(w.w_down);
            x = x + h;
        }
        torch::Tensor logits = rmsnorm(x, final_norm).matmul(lm_head);
        return int32_t(logits.argmax(-1).item<int64_t>());
    }
};

struct TorchRun {
    TorchModel *m;
    std::vector<int32_t> tokens;
};

void torch_steps(void *arg) {
    auto *r = static_cast<TorchRun *>(arg);
    int32_t token = 1;
    for (int pos = 0; pos < r->m->cfg.tokens; ++pos) r->tokens[size_t(pos)] = token = r->m->step(token, pos);
}

struct TlRun {
    decoder d;
    std::vector<int32_t> tokens;
};

void tl_steps(void *arg) {
    auto *r = static_cast<TlRun *>(arg);
    int32_t token = 1;
    for (int pos = 0; pos < r->d.m->cfg.tokens; ++pos) r->tokens[size_t(pos)] = token = decoder_step(&r->d, token, pos, nullptr);
}

}  // namespace

int main(int argc, char **argv) {
    const bool quick = argc > 1 && !std::strcmp(argv[1], "--quick");
    const int reps = quick ? 3 : 9;
    torch::InferenceMode no_autograd;
    model_config cfg = {256, 4, 4, 1024, 128, 1234};
    tl_context *ctx;
    TL_CHECK(tl_context_create(nullptr, &ctx));
    model m;
    model_init_random(ctx, &cfg, &m);
    std::printf("decode step vs libtorch %s (%d intra-op threads), d_model %d, %d layers, %d-token cache, median of %d\n",
                TORCH_VERSION, torch::get_num_threads(), cfg.d_model, cfg.layers, cfg.tokens, reps);

    double us[3];
    std::vector<int32_t> tl_tokens;
    for (int mode = 0; mode < 2; ++mode) {
        TlRun r{{}, std::vector<int32_t>(size_t(cfg.tokens))};
        decoder_open(&r.d, ctx, &m, memory_mode(mode));
        tl_steps(&r);
        us[mode] = median_ns(reps, cfg.tokens, tl_steps, &r) / 1e3;
        decoder_close(&r.d);
        tl_tokens = r.tokens;
    }
    TorchModel tm(ctx, m);
    TorchRun tr{&tm, std::vector<int32_t>(size_t(cfg.tokens))};
    torch_steps(&tr);
    us[2] = median_ns(reps, cfg.tokens, torch_steps, &tr) / 1e3;
    int agree = 0;
    for (int i = 0; i < cfg.tokens; ++i) agree += tr.tokens[size_t(i)] == tl_tokens[size_t(i)];

    std::printf("   libtorch            %8.1f us/step   baseline\n", us[2]);
    std::printf("   tensorlife ambient  %8.1f us/step   %.3fx libtorch\n", us[0], us[0] / us[2]);
    std::printf("   tensorlife scoped   %8.1f us/step   %.3fx libtorch\n", us[1], us[1] / us[2]);
    std::printf("   greedy tokens agree at %d of %d steps (float rounding differs between the kernels)\n", agree, cfg.tokens);
    model_free(ctx, &m);
    tl_context_destroy(ctx);
    return 0;
}
