// The decode step of examples/decode written with libtorch's C++ API, timed side by side with
// tensorlife's scoped and ambient modes in one run, on the same weights (copied out of the
// tensorlife model).  Also reports whether the greedy tokens agree.  At 2 threads each runs as it
// runs best: tensorlife on a 2-thread job pool as its executor with BLAS at 1 thread (an engine's
// setup), libtorch on 2 intra-op threads with BLAS at 2 (its matrix-vector products thread only
// in BLAS); the BLAS thread count is switched between them in every round.
// Build: cmake -DTL_BENCH_TORCH=ON (needs Debian's libtorch-dev).  Run: bench_torch_decode [--quick]
#include <torch/torch.h>

#include <cmath>
#include <cstdio>
#include <algorithm>
#include <cstring>
#include <vector>

extern "C" {
#include "bench_util.h"
#include "job_pool.h"
#include "model.h"
#include "usage.h"
}

extern "C" void openblas_set_num_threads(int);

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
            torch::Tensor qh = q.view({1, heads, hd}).transpose(0, 1);                // [H,1,hd]
            torch::Tensor keys = k_cache[l].view({T, heads, hd}).permute({1, 2, 0});  // [H,hd,T]
            torch::Tensor values = v_cache[l].view({T, heads, hd}).transpose(0, 1);   // [H,T,hd]
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
    int steps;
    std::vector<int32_t> tokens;
};

void torch_steps(void *arg) {
    auto *r = static_cast<TorchRun *>(arg);
    int32_t token = 1;
    for (int pos = 0; pos < r->steps; ++pos) r->tokens[size_t(pos)] = token = r->m->step(token, pos);
}

struct TlRun {
    decoder d;
    int steps;
    std::vector<int32_t> tokens;
};

void tl_steps(void *arg) {
    auto *r = static_cast<TlRun *>(arg);
    int32_t token = 1;
    for (int pos = 0; pos < r->steps; ++pos) r->tokens[size_t(pos)] = token = decoder_step(&r->d, token, pos, nullptr);
}

double median_of(std::vector<double> v, double *lo, double *hi) {
    std::sort(v.begin(), v.end());
    *lo = v.front(), *hi = v.back();
    return v[v.size() / 2];
}

}  // namespace

int main(int argc, char **argv) {
    const bool quick = quick_flag(argc, argv,
                                  "usage: bench_torch_decode [--quick] [--help]\n"
                                  "The decode step against libtorch's C++ API on the same weights, 1 and 2 threads.\n"
                                  "  --quick  fewer, shorter rounds\n");
    torch::InferenceMode no_autograd;
    const model_config configs[2] = {{256, 4, 4, 1024, 128, 1234, 0}, {1024, 8, 16, 4096, 128, 1234, 0}};
    tl_context *ctx;
    TL_CHECK(tl_context_create(nullptr, &ctx));
    job_pool pool;
    if (job_pool_start(&pool, 2) != 0) return 1;
    const tl_executor pool_executor = job_pool_executor(&pool);
    std::printf(
        "decode step vs libtorch %s at the same thread count, interleaved rounds\n"
        "(2 threads: tensorlife on a 2-thread job pool with BLAS at 1, libtorch on 2 intra-op and 2 BLAS threads)\n",
        TORCH_VERSION);
    for (const model_config &cfg : configs) {
        const int steps = cfg.d_model > 256 ? (quick ? 8 : 32) : cfg.tokens,
                  rounds = quick ? 3 : (cfg.d_model > 256 ? 5 : 7);
        model m;
        model_init_random(ctx, &cfg, &m);
        TorchModel tm(ctx, m);
        std::printf("\n   d_model %d, %d layers, vocab %d, %d steps a run; us/step min / median / max\n", cfg.d_model,
                    cfg.layers, cfg.vocab, steps);
        for (int threads = 1; threads <= 2; ++threads) {
            torch::set_num_threads(threads);
            openblas_set_num_threads(1);
            TL_CHECK(tl_context_set_executor(ctx, threads > 1 ? &pool_executor : nullptr));
            TlRun runs[2] = {{{}, steps, std::vector<int32_t>(size_t(steps))},
                             {{}, steps, std::vector<int32_t>(size_t(steps))}};
            for (int mode = 0; mode < 2; ++mode) {
                decoder_open(&runs[mode].d, ctx, &m, memory_mode(mode));
                tl_steps(&runs[mode]);
            }
            TorchRun tr{&tm, steps, std::vector<int32_t>(size_t(steps))};
            openblas_set_num_threads(threads);
            torch_steps(&tr); /* warm-up */
            std::vector<double> t[3];
            for (int r = 0; r < rounds; ++r) {
                openblas_set_num_threads(1);
                if (threads > 1) let_blas_workers_sleep(); /* after libtorch's BLAS threads */
                for (int mode = 0; mode < 2; ++mode)
                    t[mode].push_back(median_ns(1, steps, tl_steps, &runs[mode]) / 1e3);
                openblas_set_num_threads(threads);
                t[2].push_back(median_ns(1, steps, torch_steps, &tr) / 1e3);
            }
            int agree = 0;
            for (int i = 0; i < steps; ++i) agree += tr.tokens[size_t(i)] == runs[1].tokens[size_t(i)];
            double lo[3], hi[3], mid[3];
            for (int k = 0; k < 3; ++k) mid[k] = median_of(t[k], &lo[k], &hi[k]);
            const char *names[3] = {"tensorlife ambient", "tensorlife scoped", "libtorch"};
            for (int k = 0; k < 3; ++k)
                std::printf("   %d thread%s  %-19s %9.1f / %9.1f / %9.1f   libtorch/this %.2fx\n", threads,
                            threads > 1 ? "s" : " ", names[k], lo[k], mid[k], hi[k], mid[2] / mid[k]);
            std::printf("   greedy tokens agree at %d of %d steps (float rounding differs between the kernels)\n",
                        agree, steps);
            for (int mode = 0; mode < 2; ++mode) decoder_close(&runs[mode].d);
        }
        model_free(ctx, &m);
    }
    TL_CHECK(tl_context_set_executor(ctx, nullptr));
    tl_context_destroy(ctx);
    job_pool_stop(&pool);
    return 0;
}
