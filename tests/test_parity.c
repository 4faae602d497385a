/* Parity: the same ops on slab tensors (nonzero offsets that shift from step to step, across
 * resets) and on fresh ambient tensors give bitwise-equal results, since the same kernels run.
 * The one exception documented here: a matmul whose operand is a transposed view goes to BLAS
 * with the transpose flag, a different kernel than on the contiguous copy, so it is compared
 * within float tolerance. */
#include <stdint.h>

#include "common.h"

enum { B = 2, M = 9, K = 33, N = 17 };

typedef struct results {
    float mm[M * N], bmm[B * M * N], add[B * M * K], sm[M * K], rms[M * K], mmt[K * N];
} results;

static float a_data[B * M * K], b_data[B * K * N], bias[K], w[K];

static void make_inputs(void) {
    unsigned seed = 7;
    for (int i = 0; i < B * M * K; ++i) a_data[i] = rand_unit(&seed) * 3;
    for (int i = 0; i < B * K * N; ++i) b_data[i] = rand_unit(&seed);
    for (int i = 0; i < K; ++i) bias[i] = rand_unit(&seed), w[i] = 1 + rand_unit(&seed) / 4;
}

/* Runs every op in the current target and reads the results. */
static void run_ops(tl_context *ctx, results *r, int64_t *a_offset) {
    int64_t s3a[3] = {B, M, K}, s3b[3] = {B, K, N}, s2b[2] = {K, N}, s1[1] = {K}, s2a[2] = {M, K};
    tl_tensor a3 = make_f32(ctx, 3, s3a, a_data), b3 = make_f32(ctx, 3, s3b, b_data);
    tl_tensor a2 = make_f32(ctx, 2, s2a, a_data), b2 = make_f32(ctx, 2, s2b, b_data);
    tl_tensor tbias = make_f32(ctx, 1, s1, bias), tw = make_f32(ctx, 1, s1, w), out, at;
    tl_tensor_info info = TL_TENSOR_INFO_INIT;
    OK(tl_tensor_info_get(ctx, a3, &info));
    *a_offset = info.offset;
    OK(tl_matmul(ctx, a2, b2, &out));
    read_f32(ctx, out, r->mm, M * N);
    OK(tl_matmul(ctx, a3, b3, &out));
    read_f32(ctx, out, r->bmm, B * M * N);
    OK(tl_add(ctx, a3, tbias, &out));
    read_f32(ctx, out, r->add, B * M * K);
    OK(tl_softmax(ctx, a2, -1, &out));
    read_f32(ctx, out, r->sm, M * K);
    OK(tl_rmsnorm(ctx, a2, tw, 1e-6, &out));
    read_f32(ctx, out, r->rms, M * K);
    OK(tl_transpose(ctx, a2, 0, 1, &at)); /* [K,M] view, strides (1,K) */
    int64_t sbm[2] = {M, N};
    tl_tensor bm = make_f32(ctx, 2, sbm, b_data);
    OK(tl_matmul(ctx, at, bm, &out));
    read_f32(ctx, out, r->mmt, K * N);
}

Test(parity, slab_tensors_at_shifting_offsets_match_ambient_bitwise) {
    make_inputs();
    tl_context *ctx;
    OK(tl_context_create(NULL, &ctx));
    static results ambient, scoped;
    int64_t offset;
    run_ops(ctx, &ambient, &offset);
    cr_assert_eq(offset, 0);

    /* The reference for the transposed case: a contiguous copy of the transpose, ambient. */
    float at_data[K * M], want_t[K * N];
    for (int i = 0; i < M; ++i)
        for (int p = 0; p < K; ++p) at_data[p * M + i] = a_data[i * K + p];
    for (int i = 0; i < K; ++i)
        for (int j = 0; j < N; ++j) {
            double acc = 0;
            for (int p = 0; p < M; ++p) acc += (double)at_data[i * M + p] * b_data[p * N + j];
            want_t[i * N + j] = (float)acc;
        }

    tl_scope step;
    OK(tl_scope_open(ctx, "parity", 1 << 16, &step));
    int64_t last_offset = -1;
    for (int s = 0; s < 5; ++s) {
        int64_t pad = 1 + 17 * s; /* shifts every later tensor's offset */
        tl_tensor padding;
        OK(tl_tensor_full(ctx, TL_F32, 1, &pad, NAN, &padding));
        memset(&scoped, 0xAB, sizeof scoped);
        run_ops(ctx, &scoped, &offset);
        cr_assert_gt(offset, 0, "step %d: slab offset", s);
        cr_assert_neq(offset, last_offset, "step %d: the offset moved", s);
        last_offset = offset;
        cr_assert(memcmp(scoped.mm, ambient.mm, sizeof ambient.mm) == 0, "matmul differs at step %d", s);
        cr_assert(memcmp(scoped.bmm, ambient.bmm, sizeof ambient.bmm) == 0, "batched matmul differs at step %d", s);
        cr_assert(memcmp(scoped.add, ambient.add, sizeof ambient.add) == 0, "add differs at step %d", s);
        cr_assert(memcmp(scoped.sm, ambient.sm, sizeof ambient.sm) == 0, "softmax differs at step %d", s);
        cr_assert(memcmp(scoped.rms, ambient.rms, sizeof ambient.rms) == 0, "rmsnorm differs at step %d", s);
        cr_assert(memcmp(scoped.mmt, ambient.mmt, sizeof ambient.mmt) == 0, "transposed matmul differs at step %d", s);
        assert_close(scoped.mmt, want_t, K * N, 1e-5f);
        OK(tl_scope_reset(ctx, step));
    }
    cr_assert_eq(stats_of(step).generation, 5);
    OK(tl_scope_close(ctx, step));
    tl_context_destroy(ctx);
}
