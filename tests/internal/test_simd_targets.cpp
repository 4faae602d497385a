// The q8_0/q4_0 products on every instruction set this CPU offers, not only the best one: each
// target has its own way to the block sums (int16 pairs, or VNNI's byte dot products on AVX3_DL),
// so each is checked against a double-precision reference here, whatever machine runs the test.
// Highway's target mock picks the target (hence the static library).
#include <criterion/criterion.h>
#include <hwy/targets.h>
#include <tensorlife/tl.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#define OK(call) cr_assert_eq((call), TL_OK, "%s: %s", #call, tl_last_error())

namespace {

constexpr int64_t kBlocks = 37, kK = 32 * kBlocks, kN = 19;  // an odd block count: the loops' tails

// ggml's activation rounding, as quant.h states it: scale max|x| / 127 kept in f32, q rounded
// half away from zero.  The products' exact value for these activations, and its magnitude.
struct Reference {
    std::vector<double> value, magnitude;
};

Reference reference(const std::vector<float> &x, const std::vector<float> &w) {
    std::vector<double> xq(kK);
    for (int64_t b = 0; b < kBlocks; ++b) {
        float top = 0;
        for (int64_t i = 0; i < 32; ++i) top = std::fmax(top, std::fabs(x[b * 32 + i]));
        const float d = top / 127, id = d != 0 ? 1.0f / d : 0.0f;
        for (int64_t i = 0; i < 32; ++i) xq[b * 32 + i] = double(d) * std::round(x[b * 32 + i] * id);
    }
    Reference r{std::vector<double>(kN), std::vector<double>(kN)};
    for (int64_t j = 0; j < kN; ++j)
        for (int64_t i = 0; i < kK; ++i)
            r.value[j] += xq[i] * w[j * kK + i], r.magnitude[j] += std::fabs(xq[i] * w[j * kK + i]);
    return r;
}

void check_every_target(tl_dtype dt) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::vector<float> x(kK), w(kN * kK);
    for (float &v : x) v = uniform(rng) * 4;
    for (float &v : w) v = uniform(rng);
    tl_context *ctx;
    OK(tl_context_create(nullptr, &ctx));
    const int64_t xs[2] = {1, kK}, ws[2] = {kN, kK};
    tl_tensor xt, wt, wq, wback, wtq, y;
    OK(tl_tensor_from_data(ctx, TL_F32, 2, xs, x.data(), x.size() * 4, &xt));
    OK(tl_tensor_from_data(ctx, TL_F32, 2, ws, w.data(), w.size() * 4, &wt));
    OK(tl_convert(ctx, wt, dt, &wq));
    OK(tl_convert(ctx, wq, TL_F32, &wback));  // the weights' exact values
    OK(tl_tensor_read(ctx, wback, w.data(), w.size() * 4));
    OK(tl_transpose(ctx, wq, 0, 1, &wtq));
    const Reference want = reference(x, w);
    int tested = 0;
    const int64_t supported = hwy::SupportedTargets();
    for (int bit = 0; bit < 63; ++bit) {
        const int64_t target = int64_t(1) << bit;
        if (!(supported & target)) continue;
        hwy::SetSupportedTargetsForTest(target);
        const std::string name = tl_simd_target();
        if (name == "Unknown") continue;  // a target this Highway detects but the kernels are not built for
        OK(tl_matmul(ctx, xt, wtq, &y));
        std::vector<float> got(kN);
        OK(tl_tensor_read(ctx, y, got.data(), got.size() * 4));
        for (int64_t j = 0; j < kN; ++j)
            cr_assert(std::fabs(got[j] - want.value[j]) <= 1e-5 * want.magnitude[j],
                      "%s on %s: output %lld is %.9g, the exact value %.9g", tl_dtype_name(dt), name.c_str(),
                      (long long)j, got[j], want.value[j]);
        ++tested;
    }
    hwy::SetSupportedTargetsForTest(0);
    cr_assert_gt(tested, 0);
    tl_context_destroy(ctx);
}

}  // namespace

Test(simd_targets, q8_0_products_on_every_target) { check_every_target(TL_Q8_0); }
Test(simd_targets, q4_0_products_on_every_target) { check_every_target(TL_Q4_0); }
