// The decode layout of q4_0, q8_0, q4_K, q5_K and q6_K weights (kernels/quant.h's pack_rows16, which a model opened
// with tl_model_options.repack makes) gives tl_matmul's bits: 1 to 7 activation rows against
// weights of 87 rows (five sixteens and a tail of 7 the one-row kernel takes), activations near 1
// and scaled to 1e-30 and 1e30 (the scales' products far from 1), run inline and on an
// executor whose ranges start off the sixteens' edges.  Where this CPU has no kernel for the
// layout, the op refuses it by name (the model then makes none).
#include <criterion/criterion.h>
#include <tensorlife/tl.h>

#include <cstring>
#include <vector>

#include "core/context.h"
#include "kernels/quant.h"
#include "ops/ops.h"
#include "random_values.h"

#define OK(call) cr_assert_eq((call), TL_OK, "%s: %s", #call, tl_last_error())

namespace {

constexpr int64_t kN = 87;

// Ranges of at least seven items (and at least the grain asked), so most start inside a sixteen.
void sevens(void *, int64_t count, int64_t grain, tl_task_fn task, void *task_user) {
    const int64_t step = grain > 7 ? grain : 7;
    for (int64_t lo = 0; lo < count; lo += step) task(task_user, lo, lo + step < count ? lo + step : count);
}

}  // namespace

Test(rows16, the_decode_layout_gives_the_stored_bits) {
    tl_context *ctx;
    OK(tl_context_create(nullptr, &ctx));
    const tl_dtype dts[5] = {TL_Q4_0, TL_Q8_0, TL_Q4_K, TL_Q5_K, TL_Q6_K};
    for (tl_dtype dt : dts) {
        const int64_t kK = dt == TL_Q4_K || dt == TL_Q5_K || dt == TL_Q6_K ? 256 * 5 : 32 * 37;  // odd counts of blocks
        const std::vector<float> w = random_values(size_t(kN * kK), 7), x = random_values(size_t(7 * kK), 8);
        const int64_t ws[2] = {kN, kK};
        tl_tensor wf, wq, wt;
        OK(tl_tensor_from_data(ctx, TL_F32, 2, ws, w.data(), w.size() * sizeof(float), &wf));
        OK(tl_convert(ctx, wf, dt, &wq));
        OK(tl_transpose(ctx, wq, 0, 1, &wt));
        void *stored;
        OK(tl_tensor_data(ctx, wq, &stored));
        int64_t block;
        size_t block_bytes;
        OK(tl_dtype_block(dt, &block, &block_bytes));
        const size_t row_bytes = size_t(kK / block) * block_bytes;
        std::vector<std::byte> rows16(size_t(kN / 16) * tl::rows16_bytes(dt, kK));
        for (int64_t i = 0; i < kN / 16; ++i)
            tl::pack_rows16(dt, static_cast<const std::byte *>(stored) + size_t(i * 16) * row_bytes, row_bytes, kK,
                            rows16.data() + size_t(i) * tl::rows16_bytes(dt, kK));
        for (int split = 0; split < 2; ++split) {
            const tl_executor ex = {nullptr, sevens};
            OK(tl_context_set_executor(ctx, split ? &ex : nullptr));
            for (int64_t m = 1; m <= 7; ++m)
                for (const float magnitude : {1.0f, 1e-30f, 1e30f}) {
                    const int64_t xs[2] = {m, kK};
                    std::vector<float> xm(x.begin(), x.begin() + m * kK);
                    for (float &v : xm) v *= magnitude;
                    tl_tensor xt, want, got;
                    OK(tl_tensor_from_data(ctx, TL_F32, 2, xs, xm.data(), xm.size() * sizeof(float), &xt));
                    OK(tl_matmul(ctx, xt, wt, &want));
                    const tl_status st = tl::op_matmul_rows16(*ctx, xt, wt, rows16.data(), &got);
                    if (!tl::rows16_kernel(dt)) {
                        cr_assert_eq(st, TL_E_DTYPE, "no kernel here, so no layout: %s", tl_last_error());
                        continue;
                    }
                    OK(st);
                    std::vector<float> a(size_t(m * kN)), b(size_t(m * kN));
                    OK(tl_tensor_read(ctx, want, a.data(), a.size() * sizeof(float)));
                    OK(tl_tensor_read(ctx, got, b.data(), b.size() * sizeof(float)));
                    for (size_t i = 0; i < a.size(); ++i)
                        cr_assert(std::memcmp(&a[i], &b[i], sizeof(float)) == 0,
                                  "%s, %lld rows x %g, split %d: output %zu %.9g, stored %.9g", tl_dtype_name(dt),
                                  (long long)m, double(magnitude), split, i, double(b[i]), double(a[i]));
                }
        }
    }
    tl_context_destroy(ctx);
}
