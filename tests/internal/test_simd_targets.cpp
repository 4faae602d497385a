// The f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, q4_K, q5_K and q6_K products on every instruction set this CPU offers, not
// only the best one: each target has its own way to the block sums (int16 pairs, VNNI's byte dot
// products on AVX3_DL, or AVX-512's byte pairs for the super blocks) and its own vector width for f32's rows four at a time, so each is checked against a
// double-precision reference here, whatever machine runs the test.
// A prompt's rows with block-dtype weights (9 at once: row groups, or on AVX3_DL the panels of
// sixteen weight rows) give each row the one-row product's bits on every target.
// Highway's target mock picks the target (hence the static library).
#include <criterion/criterion.h>
#include <hwy/targets.h>
#include <tensorlife/tl.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#define OK(call) cr_assert_eq((call), TL_OK, "%s: %s", #call, tl_last_error())

namespace {

// An odd block count, rows not a multiple of four, and for f32 a row not whole lines: the tails.
// f32 takes more rows: a one-row product reaches its own kernel from 512 KiB of weights (matmul.cpp).
constexpr int64_t kBlocks = 37, kK = 32 * kBlocks, kN = 19, kF32Tail = 7, kF32Rows = 119;
constexpr int64_t kSuperK = 256 * 5;  // q4_K, q5_K, q6_K: super blocks of 256

// For the block dtypes, the activation rounding quant.h states (llama.cpp's x86 quantize_row_q8_0):
// q = x * (127 / amax) rounded half to even, the scale amax / 127 rounded to f16.  The products'
// exact value for these activations, and its magnitude.
struct Reference {
    std::vector<double> value, magnitude;
};

enum class Activations { f32, q8_0, q8_K };

// v rounded to IEEE half and back, by the library's conversion (test_quant checks its ties and
// subnormals against hand-worked bits; not every compiler here has _Float16 in C++).
float through_half(tl_context *ctx, float v) {
    const int64_t one = 1;
    tl_tensor f, h, back;
    OK(tl_tensor_from_data(ctx, TL_F32, 1, &one, &v, sizeof v, &f));
    OK(tl_convert(ctx, f, TL_F16, &h));
    OK(tl_convert(ctx, h, TL_F32, &back));
    float out;
    OK(tl_tensor_read(ctx, back, &out, sizeof out));
    return out;
}

Reference reference(tl_context *ctx, const std::vector<float> &x, const std::vector<float> &w, Activations kind) {
    const int64_t k = int64_t(x.size()), n = int64_t(w.size()) / k;
    std::vector<double> xq(x.begin(), x.end());
    for (int64_t b = 0; kind == Activations::q8_0 && b < k / 32; ++b) {
        float top = 0;
        for (int64_t i = 0; i < 32; ++i) top = std::fmax(top, std::fabs(x[b * 32 + i]));
        const float d = through_half(ctx, top / 127), id = top != 0 ? 127 / top : 0.0f;
        for (int64_t i = 0; i < 32; ++i) xq[b * 32 + i] = double(d) * std::nearbyint(x[b * 32 + i] * id);
    }
    // q8_K (quant.h): per 256, q = x * (-127 / max) to nearest even, the scale 1 / that factor.
    for (int64_t b = 0; kind == Activations::q8_K && b < k / 256; ++b) {
        float top = 0, max = 0;
        for (int64_t i = 0; i < 256; ++i)
            if (std::fabs(x[b * 256 + i]) > top) top = std::fabs(x[b * 256 + i]), max = x[b * 256 + i];
        const float iscale = -127.0f / max;
        for (int64_t i = 0; i < 256; ++i) xq[b * 256 + i] = double(1 / iscale) * std::nearbyint(iscale * x[b * 256 + i]);
    }
    Reference r{std::vector<double>(n), std::vector<double>(n)};
    for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < k; ++i)
            r.value[j] += xq[i] * w[j * k + i], r.magnitude[j] += std::fabs(xq[i] * w[j * k + i]);
    return r;
}

void check_every_target(tl_dtype dt) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    const bool super_blocks = dt == TL_Q4_K || dt == TL_Q5_K || dt == TL_Q6_K;
    const bool halves = dt == TL_F16 || dt == TL_BF16;  // rows of any length, as f32's
    const int64_t k = dt == TL_F32 || halves ? kK + kF32Tail : super_blocks ? kSuperK : kK, n = dt == TL_F32 ? kF32Rows : kN;
    std::vector<float> x(k), w(n * k);
    for (float &v : x) v = uniform(rng) * 4;
    for (float &v : w) v = uniform(rng);
    tl_context *ctx;
    OK(tl_context_create(nullptr, &ctx));
    constexpr int64_t kPrompt = 9;
    std::vector<float> prompt;
    for (int64_t r = 0; r < kPrompt; ++r) prompt.insert(prompt.end(), x.begin(), x.end());
    const int64_t xs[2] = {1, k}, ws[2] = {n, k}, ps[2] = {kPrompt, k};
    tl_tensor xt, pt, wt, wq, wback, wtq, y, yp;
    OK(tl_tensor_from_data(ctx, TL_F32, 2, xs, x.data(), x.size() * 4, &xt));
    OK(tl_tensor_from_data(ctx, TL_F32, 2, ps, prompt.data(), prompt.size() * 4, &pt));
    OK(tl_tensor_from_data(ctx, TL_F32, 2, ws, w.data(), w.size() * 4, &wt));
    wq = wt;
    if (dt != TL_F32) {
        OK(tl_convert(ctx, wt, dt, &wq));
        OK(tl_convert(ctx, wq, TL_F32, &wback));  // the weights' exact values
        OK(tl_tensor_read(ctx, wback, w.data(), w.size() * 4));
    }
    OK(tl_transpose(ctx, wq, 0, 1, &wtq));
    const Reference want =
        reference(ctx, x, w, dt == TL_F32 || halves ? Activations::f32 : super_blocks ? Activations::q8_K : Activations::q8_0);
    // q4_1's and q5_1's mins meet each activation block's sum as rounded to half (quant.h): within
    // half's rounding of those sums; every other product within f32's summation error.
    const double tolerance = dt == TL_Q4_1 || dt == TL_Q5_1 ? 1.0 / 1024 : 1e-5;
    int tested = 0;
    const int64_t supported = hwy::SupportedTargets();
    for (int bit = 0; bit < 63; ++bit) {
        const int64_t target = int64_t(1) << bit;
        if (!(supported & target)) continue;
        hwy::SetSupportedTargetsForTest(target);
        const std::string name = tl_simd_target();
        if (name == "Unknown") continue;  // a target this Highway detects but the kernels are not built for
        OK(tl_matmul(ctx, xt, wtq, &y));
        std::vector<float> got(n);
        OK(tl_tensor_read(ctx, y, got.data(), got.size() * 4));
        for (int64_t j = 0; j < n; ++j)
            cr_assert(std::fabs(got[j] - want.value[j]) <= tolerance * want.magnitude[j],
                      "%s on %s: output %lld is %.9g, the exact value %.9g", tl_dtype_name(dt), name.c_str(),
                      (long long)j, got[j], want.value[j]);
        std::vector<float> rows(kPrompt * n);
        if (dt != TL_F32) {  // (f32 prompts go to sgemm, whose bits are its own)
            OK(tl_matmul(ctx, pt, wtq, &yp));
            OK(tl_tensor_read(ctx, yp, rows.data(), rows.size() * 4));
        }
        for (int64_t r = 0; dt != TL_F32 && r < kPrompt; ++r)
            cr_assert(std::memcmp(rows.data() + r * n, got.data(), size_t(n) * 4) == 0,
                      "%s on %s: row %lld of a prompt differs from the row alone", tl_dtype_name(dt), name.c_str(),
                      (long long)r);
        ++tested;
    }
    hwy::SetSupportedTargetsForTest(0);
    cr_assert_gt(tested, 0);
    tl_context_destroy(ctx);
}

}  // namespace

Test(simd_targets, f32_products_on_every_target) { check_every_target(TL_F32); }
Test(simd_targets, q8_0_products_on_every_target) { check_every_target(TL_Q8_0); }
Test(simd_targets, q4_0_products_on_every_target) { check_every_target(TL_Q4_0); }
Test(simd_targets, q5_0_products_on_every_target) { check_every_target(TL_Q5_0); }
Test(simd_targets, f16_products_on_every_target) { check_every_target(TL_F16); }
Test(simd_targets, bf16_products_on_every_target) { check_every_target(TL_BF16); }
Test(simd_targets, q4_1_products_on_every_target) { check_every_target(TL_Q4_1); }
Test(simd_targets, q5_1_products_on_every_target) { check_every_target(TL_Q5_1); }
Test(simd_targets, q4_K_products_on_every_target) { check_every_target(TL_Q4_K); }
Test(simd_targets, q5_K_products_on_every_target) { check_every_target(TL_Q5_K); }
Test(simd_targets, q6_K_products_on_every_target) { check_every_target(TL_Q6_K); }
