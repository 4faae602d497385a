// Products that share their activations (ops/ops.h's op_matmul_shared, behind a layer's q, k and v
// and its gate and up): each output has the bits tl_matmul gives it alone, for weights whose
// products take the activations in one form (q4_0 beside q8_0, q4_K beside q6_K, f16 beside bf16),
// in two forms (q4_0 beside q4_K: each alone), as f32 (BLAS's), with decode layouts, at 1, 3 and
// 9 activation rows (9: the panels).  Misuse is refused by name, and a failure part way leaves no
// output behind.
#include <criterion/criterion.h>
#include <tensorlife/tl.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/context.h"
#include "counting_allocator.h"
#include "kernels/quant.h"
#include "ops/ops.h"
#include "random_values.h"

#define OK(call) cr_assert_eq((call), TL_OK, "%s: %s", #call, tl_last_error())

namespace {

constexpr int64_t kK = 512;

// A weight of n stored rows in dt, as the transposed view a product takes, and (where this CPU
// has the kernel and asked) its decode layout.
struct Weight {
    tl_tensor view{};
    std::vector<std::byte> rows16;
};
Weight make_weight(tl_context *ctx, tl_dtype dt, int64_t n, unsigned seed, bool layout) {
    const std::vector<float> w = random_values(size_t(n * kK), seed);
    const int64_t shape[2] = {n, kK};
    tl_tensor f, stored;
    OK(tl_tensor_from_data(ctx, TL_F32, 2, shape, w.data(), w.size() * sizeof(float), &f));
    if (dt == TL_F32) stored = f;
    else OK(tl_convert(ctx, f, dt, &stored));
    Weight out;
    OK(tl_transpose(ctx, stored, 0, 1, &out.view));
    if (layout && tl::rows16_kernel(dt)) {
        void *data;
        OK(tl_tensor_data(ctx, stored, &data));
        int64_t block;
        size_t block_bytes;
        OK(tl_dtype_block(dt, &block, &block_bytes));
        const size_t row_bytes = size_t(kK / block) * block_bytes, bytes = tl::rows16_bytes(dt, kK);
        out.rows16.resize(size_t(n / 16) * bytes);
        for (int64_t i = 0; i < n / 16; ++i)
            tl::pack_rows16(dt, static_cast<const std::byte *>(data) + size_t(i * 16) * row_bytes, row_bytes, kK,
                            out.rows16.data() + size_t(i) * bytes);
    }
    return out;
}

// One row of kK activations.
tl_tensor one_row(tl_context *ctx) {
    const std::vector<float> x = random_values(kK, 3);
    const int64_t xs[2] = {1, kK};
    tl_tensor xt;
    OK(tl_tensor_from_data(ctx, TL_F32, 2, xs, x.data(), x.size() * sizeof(float), &xt));
    return xt;
}

std::vector<float> read_all(tl_context *ctx, tl_tensor t) {
    tl_tensor_info info = TL_TENSOR_INFO_INIT;
    OK(tl_tensor_info_get(ctx, t, &info));
    std::vector<float> v(size_t(info.shape[0] * info.shape[1]));
    OK(tl_tensor_read(ctx, t, v.data(), v.size() * sizeof(float)));
    return v;
}

}  // namespace

Test(shared_activations, each_output_has_its_bits_alone) {
    tl_context *ctx;
    OK(tl_context_create(nullptr, &ctx));
    const std::vector<std::vector<tl_dtype>> groups = {
        {TL_Q4_0, TL_Q8_0, TL_Q4_0}, {TL_Q4_K, TL_Q6_K, TL_Q5_K}, {TL_Q4_1, TL_Q5_1}, {TL_F16, TL_BF16},
        {TL_Q4_0, TL_Q4_K},          {TL_F32, TL_F32},            {TL_Q8_0},         {TL_Q4_0, TL_F32}};
    const std::vector<float> x = random_values(size_t(9 * kK), 99);
    for (const auto &group : groups)
        for (int layout = 0; layout < 2; ++layout) {
            const int count = int(group.size());
            std::vector<Weight> weights;
            for (int i = 0; i < count; ++i) weights.push_back(make_weight(ctx, group[size_t(i)], 48 + 16 * i, 7 + i, layout));
            tl_tensor views[4];
            const std::byte *rows16[4];
            for (int i = 0; i < count; ++i)
                views[i] = weights[size_t(i)].view,
                rows16[i] = weights[size_t(i)].rows16.empty() ? nullptr : weights[size_t(i)].rows16.data();
            for (const int64_t m : {1, 3, 9}) {
                const int64_t xs[2] = {m, kK};
                tl_tensor xt, outs[4];
                OK(tl_tensor_from_data(ctx, TL_F32, 2, xs, x.data(), size_t(m * kK) * sizeof(float), &xt));
                OK(tl::op_matmul_shared(*ctx, xt, count, views, rows16, outs));
                for (int i = 0; i < count; ++i) {
                    tl_tensor alone;
                    OK(rows16[i] ? tl::op_matmul_rows16(*ctx, xt, views[i], rows16[i], &alone)
                                 : tl_matmul(ctx, xt, views[i], &alone));
                    const std::vector<float> a = read_all(ctx, alone), b = read_all(ctx, outs[i]);
                    cr_assert_eq(a.size(), b.size());
                    for (size_t e = 0; e < a.size(); ++e)
                        cr_assert(std::memcmp(&a[e], &b[e], sizeof(float)) == 0,
                                  "%s (weight %d of %d, layout %d), %lld rows: output %zu %.9g, alone %.9g",
                                  tl_dtype_name(group[size_t(i)]), i, count, layout, (long long)m, e, double(b[e]),
                                  double(a[e]));
                    OK(tl_tensor_free(ctx, alone));
                    OK(tl_tensor_free(ctx, outs[i]));
                }
                OK(tl_tensor_free(ctx, xt));
            }
        }
    tl_context_destroy(ctx);
}

// A weight of no rows beside one with rows: an empty output and the other's bits.
Test(shared_activations, an_empty_product_beside_another) {
    tl_context *ctx;
    OK(tl_context_create(nullptr, &ctx));
    const Weight some = make_weight(ctx, TL_Q4_0, 48, 1, false), none = make_weight(ctx, TL_Q8_0, 0, 2, false);
    const tl_tensor xt = one_row(ctx);
    tl_tensor outs[2], alone;
    for (const bool empty_first : {true, false}) {
        const tl_tensor views[2] = {empty_first ? none.view : some.view, empty_first ? some.view : none.view};
        const std::byte *layouts[2] = {};
        OK(tl::op_matmul_shared(*ctx, xt, 2, views, layouts, outs));
        OK(tl_matmul(ctx, xt, some.view, &alone));
        const std::vector<float> a = read_all(ctx, alone), b = read_all(ctx, outs[empty_first ? 1 : 0]);
        cr_assert(a.size() == 48 && b == a, "the product with rows has its bits alone");
        tl_tensor_info info = TL_TENSOR_INFO_INIT;
        OK(tl_tensor_info_get(ctx, outs[empty_first ? 0 : 1], &info));
        cr_assert(info.ndim == 2 && info.shape[0] == 1 && info.shape[1] == 0, "the empty one is [1, 0]");
    }
    tl_context_destroy(ctx);
}

Test(shared_activations, misuse_is_refused_by_name) {
    tl_context *ctx;
    OK(tl_context_create(nullptr, &ctx));
    const Weight q = make_weight(ctx, TL_Q4_0, 32, 1, false), f = make_weight(ctx, TL_F32, 32, 2, false);
    const std::vector<float> x = random_values(kK, 3);  // (half of it for a row too short)
    const tl_tensor xt = one_row(ctx);
    tl_tensor outs[5];
    const tl_tensor views[5] = {q.view, q.view, q.view, q.view, q.view};
    const std::byte *none[5] = {};
    for (const int count : {0, 5}) {
        cr_assert_eq(tl::op_matmul_shared(*ctx, xt, count, views, none, outs), TL_E_INVALID_ARGUMENT);
        cr_assert(std::string(tl_last_error()).find("share activations") != std::string::npos, "%s", tl_last_error());
    }
    const std::byte fake[16] = {};
    const tl_tensor mixed[2] = {q.view, f.view};
    const std::byte *layouts[2] = {nullptr, fake};  // a layout claimed for f32 rows
    cr_assert_eq(tl::op_matmul_shared(*ctx, xt, 2, mixed, layouts, outs), TL_E_DTYPE);
    cr_assert(std::string(tl_last_error()).find("rows16 layout of f32") != std::string::npos, "%s", tl_last_error());
    // A weight whose k is not the activations': refused before any output is made.
    const int64_t short_shape[2] = {1, kK / 2};
    tl_tensor short_x;
    OK(tl_tensor_from_data(ctx, TL_F32, 2, short_shape, x.data(), size_t(kK / 2) * sizeof(float), &short_x));
    cr_assert_eq(tl::op_matmul_shared(*ctx, short_x, 2, views, none, outs), TL_E_SHAPE);
    // A stale weight handle.
    tl_tensor stale = q.view;
    OK(tl_tensor_free(ctx, stale));
    const tl_tensor with_stale[2] = {f.view, stale};
    cr_assert_neq(tl::op_matmul_shared(*ctx, xt, 2, with_stale, none, outs), TL_OK);
    tl_context_destroy(ctx);
}

// An allocator refusing the first, then the second, ... allocation of a call (its outputs,
// ambient): every refusal leaves the memory as it was before the call, until one succeeds.
Test(shared_activations, a_failure_part_way_leaves_no_output) {
    for (const bool stored : {true, false}) {  // one quantization for both, or each product alone
        counting_allocator counts = {0, 0, 0, 0};
        const tl_allocator allocator = counting_allocator_of(&counts);
        tl_context *ctx;
        OK(tl_context_create(&allocator, &ctx));
        const Weight a = make_weight(ctx, stored ? TL_Q8_0 : TL_F32, 64, 1, false);
        const Weight b = make_weight(ctx, stored ? TL_Q4_0 : TL_F32, 64, 2, false);
        const tl_tensor xt = one_row(ctx);
        tl_tensor outs[2];
        const tl_tensor views[2] = {a.view, b.view};
        const std::byte *none[2] = {};
        OK(tl::op_matmul_shared(*ctx, xt, 2, views, none, outs));  // the scratch grown, and kept
        for (int i = 0; i < 2; ++i) OK(tl_tensor_free(ctx, outs[i]));
        int refused = 0;
        for (long nth = 1;; ++nth) {
            const long long before = counts.live_bytes;
            counts.fail_at = counts.allocs + nth;
            const tl_status st = tl::op_matmul_shared(*ctx, xt, 2, views, none, outs);
            counts.fail_at = 0;
            if (st == TL_OK) {
                for (int i = 0; i < 2; ++i) OK(tl_tensor_free(ctx, outs[i]));
                break;
            }
            cr_assert_eq(st, TL_E_OUT_OF_MEMORY, "%s", tl_last_error());
            cr_assert_eq(counts.live_bytes, before, "%s, allocation %ld refused: %lld bytes left behind",
                         stored ? "stored" : "f32", nth, counts.live_bytes - before);
            ++refused;
        }
        cr_assert_geq(refused, 2, "both outputs' allocations were refused in turn (%d)", refused);
        tl_context_destroy(ctx);
    }
}
