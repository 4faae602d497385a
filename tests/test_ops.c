/* Op results against hand-worked cases and naive loops written here, independent of the library. */
#include <stdint.h>

#include "common.h"

CONTEXT_SUITE(ops);

static void naive_matmul(const float *a, const float *b, float *c, int m, int k, int n) {
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
            double acc = 0;
            for (int p = 0; p < k; ++p) acc += (double)a[i * k + p] * b[p * n + j];
            c[i * n + j] = (float)acc;
        }
}

static void fill_random(float *x, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; ++i) x[i] = rand_unit(&seed);
}

Test(ops, matmul_hand_worked) {
    const float a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8}, want[4] = {19, 22, 43, 50};
    int64_t s[2] = {2, 2};
    tl_tensor c;
    OK(tl_matmul(ctx, make_f32(ctx, 2, s, a), make_f32(ctx, 2, s, b), &c));
    float got[4];
    read_f32(ctx, c, got, 4);
    assert_close(got, want, 4, 0);
    double ad[4] = {1, 2, 3, 4}, bd[4] = {5, 6, 7, 8}, gd[4];
    tl_tensor x, y, z;
    OK(tl_tensor_from_data(ctx, TL_F64, 2, s, ad, sizeof ad, &x));
    OK(tl_tensor_from_data(ctx, TL_F64, 2, s, bd, sizeof bd, &y));
    OK(tl_matmul(ctx, x, y, &z));
    OK(tl_tensor_read(ctx, z, gd, sizeof gd));
    for (int i = 0; i < 4; ++i) cr_assert_eq(gd[i], (double)want[i]);
}

Test(ops, matmul_random_2d_and_batched) {
    enum { B = 3, M = 5, K = 7, N = 4 };
    float a[B * M * K], b[B * K * N], want[B * M * N], got[B * M * N];
    fill_random(a, B * M * K, 1);
    fill_random(b, B * K * N, 2);
    int64_t sa[3] = {B, M, K}, sb[3] = {B, K, N}, sb2[2] = {K, N};
    tl_tensor ta = make_f32(ctx, 3, sa, a), tb = make_f32(ctx, 3, sb, b), tb2 = make_f32(ctx, 2, sb2, b), c;
    OK(tl_matmul(ctx, ta, tb, &c));
    for (int i = 0; i < B; ++i) naive_matmul(a + i * M * K, b + i * K * N, want + i * M * N, M, K, N);
    read_f32(ctx, c, got, B * M * N);
    assert_close(got, want, B * M * N, 1e-5f);
    OK(tl_matmul(ctx, ta, tb2, &c)); /* shared [k,n] */
    for (int i = 0; i < B; ++i) naive_matmul(a + i * M * K, b, want + i * M * N, M, K, N);
    read_f32(ctx, c, got, B * M * N);
    assert_close(got, want, B * M * N, 1e-5f);
    tl_tensor_info info = TL_TENSOR_INFO_INIT;
    OK(tl_tensor_info_get(ctx, c, &info));
    cr_assert_eq(info.ndim, 3);
    cr_assert_eq(info.shape[0], B);
    cr_assert_eq(info.shape[2], N);
}

/* A prompt-sized product (BLAS calls on chunks of 256 columns of C, matmul.cpp) against the naive
 * loop: a [k, n] operand as stored, and the transpose of a stored [n, k] weight (Hugging Face's
 * layout), n no multiple of the chunk; with and without an executor. */
static void run_inline(void *user, int64_t count, int64_t grain, tl_task_fn task, void *task_user) {
    (void)user;
    for (int64_t begin = 0; begin < count; begin += grain) task(task_user, begin, begin + grain < count ? begin + grain : count);
}
Test(ops, prompt_sized_products_in_column_chunks_match_the_naive_loop) {
    enum { M = 20, K = 300, N = 700 };
    static float a[M * K], b[K * N], bt[N * K], want[M * N], got[M * N];
    fill_random(a, M * K, 11);
    fill_random(b, K * N, 12);
    for (int p = 0; p < K; ++p)
        for (int j = 0; j < N; ++j) bt[j * K + p] = b[p * N + j];
    naive_matmul(a, b, want, M, K, N);
    OK(tl_set_blas_threads(1));
    for (int split = 0; split < 2; ++split) {
        if (split) {
            const tl_executor ex = {NULL, run_inline};
            OK(tl_context_set_executor(ctx, &ex));
        }
        const int64_t sa[2] = {M, K}, sb[2] = {K, N}, sbt[2] = {N, K};
        tl_tensor stored = make_f32(ctx, 2, sbt, bt), weight, c;
        OK(tl_transpose(ctx, stored, 0, 1, &weight));
        OK(tl_matmul(ctx, make_f32(ctx, 2, sa, a), make_f32(ctx, 2, sb, b), &c));
        read_f32(ctx, c, got, M * N);
        assert_close(got, want, M * N, 1e-4f);
        OK(tl_matmul(ctx, make_f32(ctx, 2, sa, a), weight, &c));
        read_f32(ctx, c, got, M * N);
        assert_close(got, want, M * N, 1e-4f);
    }
}

Test(ops, matmul_on_views_transposed_sliced_and_uncooperative) {
    enum { M = 6, K = 5, N = 4 };
    float base[K * M], b[K * N], a_ref[M * K], want[M * N], got[M * N];
    fill_random(base, K * M, 3);
    fill_random(b, K * N, 4);
    for (int i = 0; i < M; ++i)
        for (int p = 0; p < K; ++p) a_ref[i * K + p] = base[p * M + i];
    naive_matmul(a_ref, b, want, M, K, N);
    int64_t sbase[2] = {K, M}, sb[2] = {K, N};
    tl_tensor tbase = make_f32(ctx, 2, sbase, base), tb = make_f32(ctx, 2, sb, b), at, c;
    OK(tl_transpose(ctx, tbase, 0, 1, &at)); /* [M,K] with strides (1, M): BLAS's transpose flag */
    OK(tl_matmul(ctx, at, tb, &c));
    read_f32(ctx, c, got, M * N);
    assert_close(got, want, M * N, 1e-5f);

    /* Columns 2..2+K of a wider matrix: a leading dimension larger than K. */
    float wide[M * 9];
    fill_random(wide, M * 9, 5);
    float a2[M * K];
    for (int i = 0; i < M; ++i)
        for (int p = 0; p < K; ++p) a2[i * K + p] = wide[i * 9 + 2 + p];
    naive_matmul(a2, b, want, M, K, N);
    int64_t sw[2] = {M, 9};
    tl_tensor tw = make_f32(ctx, 2, sw, wide), cols;
    OK(tl_slice(ctx, tw, 1, 2, K, &cols));
    OK(tl_matmul(ctx, cols, tb, &c));
    read_f32(ctx, c, got, M * N);
    assert_close(got, want, M * N, 1e-5f);

    /* Neither stride 1: [K,M,2] sliced to [K,M,1], reshaped to [K,M] (strides 2M, 2), transposed. */
    float deep[K * M * 2];
    fill_random(deep, K * M * 2, 6);
    for (int i = 0; i < M; ++i)
        for (int p = 0; p < K; ++p) a_ref[i * K + p] = deep[(p * M + i) * 2];
    naive_matmul(a_ref, b, want, M, K, N);
    int64_t sd[3] = {K, M, 2}, skm[2] = {K, M};
    tl_tensor td = make_f32(ctx, 3, sd, deep), first, flat, odd;
    OK(tl_slice(ctx, td, 2, 0, 1, &first));
    OK(tl_reshape(ctx, first, 2, skm, &flat));
    OK(tl_transpose(ctx, flat, 0, 1, &odd));
    tl_tensor_info info = TL_TENSOR_INFO_INIT;
    OK(tl_tensor_info_get(ctx, odd, &info));
    cr_assert_eq(info.strides[0], 2);
    cr_assert_eq(info.strides[1], 2 * M);
    OK(tl_matmul(ctx, odd, tb, &c));
    read_f32(ctx, c, got, M * N);
    assert_close(got, want, M * N, 1e-5f);
}

Test(ops, matmul_empty_inner_dim_is_zeros) {
    int64_t sa[2] = {3, 0}, sb[2] = {0, 2};
    tl_tensor a, b, c;
    OK(tl_tensor_zeros(ctx, TL_F32, 2, sa, &a));
    OK(tl_tensor_zeros(ctx, TL_F32, 2, sb, &b));
    tl_scope s;
    OK(tl_scope_open(ctx, "dirty", 4096, &s));
    tl_tensor junk;
    int64_t sj[1] = {6};
    OK(tl_tensor_full(ctx, TL_F32, 1, sj, 9.0, &junk));
    OK(tl_scope_reset(ctx, s));
    OK(tl_matmul(ctx, a, b, &c));
    float got[6];
    read_f32(ctx, c, got, 6);
    for (int i = 0; i < 6; ++i) cr_assert_eq(got[i], 0.0f);
    OK(tl_scope_close(ctx, s));
}

/* Empty dims beside a one-row or one-column product (the matrix-vector path plans its partial
 * sums before anything is placed): an empty sum is zeros, an empty output is empty. */
Test(ops, matmul_empty_dims_around_one_row_and_one_column) {
    const struct {
        int ndim_a, ndim_b;
        int64_t a[3], b[3], outputs;
    } cases[] = {
        {2, 2, {1, 0}, {0, 5}, 5},       /* one row, k = 0 */
        {2, 2, {4, 0}, {0, 1}, 4},       /* one column, k = 0 */
        {3, 2, {2, 1, 0}, {0, 3}, 6},    /* batched one-row, k = 0 */
        {3, 3, {2, 4, 0}, {2, 0, 1}, 8}, /* batched one-column, k = 0 */
        {2, 2, {1, 5}, {5, 0}, 0},       /* one row, n = 0 */
        {2, 2, {0, 5}, {5, 1}, 0},       /* one column, m = 0 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
        tl_tensor a, b, c;
        OK(tl_tensor_zeros(ctx, TL_F32, cases[i].ndim_a, cases[i].a, &a));
        OK(tl_tensor_full(ctx, TL_F32, cases[i].ndim_b, cases[i].b, 2.0, &b));
        OK(tl_matmul(ctx, a, b, &c));
        tl_tensor_info info = TL_TENSOR_INFO_INIT;
        OK(tl_tensor_info_get(ctx, c, &info));
        int64_t n = 1;
        for (int d = 0; d < info.ndim; ++d) n *= info.shape[d];
        cr_assert_eq(n, cases[i].outputs, "case %zu: %lld outputs", i, (long long)n);
        float got[8] = {1, 1, 1, 1, 1, 1, 1, 1};
        if (n > 0) read_f32(ctx, c, got, (size_t)n);
        for (int64_t j = 0; j < n; ++j) cr_assert_eq(got[j], 0.0f, "case %zu: output %lld", i, (long long)j);
    }
}

Test(ops, add_broadcasts_like_numpy) {
    float x[24], y[3] = {10, 20, 30}, got[24];
    for (int i = 0; i < 24; ++i) x[i] = (float)i;
    int64_t sx[3] = {2, 3, 4}, sy[2] = {3, 1};
    tl_tensor c, d;
    OK(tl_add(ctx, make_f32(ctx, 3, sx, x), make_f32(ctx, 2, sy, y), &c));
    read_f32(ctx, c, got, 24);
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 3; ++j)
            for (int k = 0; k < 4; ++k) cr_assert_eq(got[(i * 3 + j) * 4 + k], x[(i * 3 + j) * 4 + k] + y[j]);
    float two = 2;
    tl_tensor scalar = make_f32(ctx, 0, NULL, &two);
    OK(tl_mul(ctx, scalar, c, &d)); /* scalar on the left */
    read_f32(ctx, d, got, 24);
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 3; ++j)
            for (int k = 0; k < 4; ++k) cr_assert_eq(got[(i * 3 + j) * 4 + k], 2 * (x[(i * 3 + j) * 4 + k] + y[j]));
    /* [4,1] - [3]: both sides broadcast, to [4,3]. */
    float col[4] = {1, 2, 3, 4}, row[3] = {1, 10, 100}, out[12];
    int64_t s41[2] = {4, 1}, s3[1] = {3};
    OK(tl_sub(ctx, make_f32(ctx, 2, s41, col), make_f32(ctx, 1, s3, row), &c));
    read_f32(ctx, c, out, 12);
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 3; ++j) cr_assert_eq(out[i * 3 + j], col[i] - row[j]);
    OK(tl_div(ctx, make_f32(ctx, 2, s41, col), make_f32(ctx, 1, s3, row), &c));
    read_f32(ctx, c, out, 12);
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 3; ++j) cr_assert_eq(out[i * 3 + j], col[i] / row[j]);
}

/* The bounded form makes the same op, or nothing at all past its bound. */
Test(ops, binary_bounded_makes_small_results_only) {
    float col[4] = {1, 2, 3, 4}, row[3] = {1, 10, 100}, got[12], want[12];
    int64_t s41[2] = {4, 1}, s3[1] = {3};
    const tl_tensor a = make_f32(ctx, 2, s41, col), b = make_f32(ctx, 1, s3, row);
    tl_tensor bounded, plain;
    OK(tl_sub(ctx, a, b, &plain));
    OK(tl_binary_bounded(ctx, TL_BINARY_sub, a, b, 12, &bounded));
    cr_assert_neq(bounded.bits, 0);
    read_f32(ctx, plain, want, 12);
    read_f32(ctx, bounded, got, 12);
    for (int i = 0; i < 12; ++i) cr_assert_eq(got[i], want[i], "element %d", i);
    /* One past the bound: TL_OK, no tensor, nothing made in the scope. */
    tl_scope s;
    OK(tl_scope_open(ctx, "bounded", 0, &s));
    tl_scope_stats before = TL_SCOPE_STATS_INIT, after = TL_SCOPE_STATS_INIT;
    OK(tl_scope_stats_get(ctx, s, &before));
    bounded.bits = 99;
    OK(tl_binary_bounded(ctx, TL_BINARY_add, a, b, 11, &bounded));
    cr_assert_eq(bounded.bits, 0);
    OK(tl_scope_stats_get(ctx, s, &after));
    cr_assert_eq(after.live_tensors, before.live_tensors);
    cr_assert_eq(after.used_bytes, before.used_bytes);
    OK(tl_scope_close(ctx, s));
    /* An empty result is within any bound, 0 included: made, [4, 0]. */
    int64_t s0[1] = {0};
    tl_tensor none;
    OK(tl_tensor_zeros(ctx, TL_F32, 1, s0, &none));
    OK(tl_binary_bounded(ctx, TL_BINARY_mul, a, none, 0, &bounded));
    tl_tensor_info info = TL_TENSOR_INFO_INIT;
    OK(tl_tensor_info_get(ctx, bounded, &info));
    cr_assert(info.ndim == 2 && info.shape[0] == 4 && info.shape[1] == 0);
    /* Its failures are the op's, and its own arguments are checked. */
    int64_t s2[1] = {2};
    FAILS_WITH(tl_binary_bounded(ctx, TL_BINARY_mul, b, make_f32(ctx, 1, s2, row), 100, &bounded), TL_E_SHAPE); /* [3] with [2] */
    FAILS_WITH(tl_binary_bounded(ctx, 4, a, b, 100, &bounded), TL_E_INVALID_ARGUMENT);
    FAILS_WITH(tl_binary_bounded(ctx, -1, a, b, 100, &bounded), TL_E_INVALID_ARGUMENT);
    FAILS_WITH(tl_binary_bounded(ctx, TL_BINARY_div, a, b, -1, &bounded), TL_E_INVALID_ARGUMENT);
    cr_assert_eq(TL_BINARY_add, 0, "the numbers are fixed for good");
    cr_assert_eq(TL_BINARY_div, 3);
}

Test(ops, i32_arithmetic_wraps) {
    int32_t a[3] = {INT32_MAX, -5, 7}, b[3] = {1, 3, -2}, got[3];
    int64_t s[1] = {3};
    tl_tensor ta, tb, c;
    OK(tl_tensor_from_data(ctx, TL_I32, 1, s, a, sizeof a, &ta));
    OK(tl_tensor_from_data(ctx, TL_I32, 1, s, b, sizeof b, &tb));
    OK(tl_add(ctx, ta, tb, &c));
    OK(tl_tensor_read(ctx, c, got, sizeof got));
    cr_assert_eq(got[0], INT32_MIN);
    cr_assert_eq(got[1], -2);
    cr_assert_eq(got[2], 5);
    OK(tl_mul(ctx, ta, tb, &c));
    OK(tl_tensor_read(ctx, c, got, sizeof got));
    cr_assert_eq(got[1], -15);
    OK(tl_sum(ctx, ta, 0, 0, &c));
    OK(tl_tensor_read(ctx, c, got, sizeof(int32_t)));
    cr_assert_eq(got[0], (int32_t)((uint32_t)INT32_MAX - 5u + 7u));
}

/* The unary ops of one tensor each (tl_scale, with its factor, is called on its own). */
typedef tl_status (*unary_fn)(tl_context *, tl_tensor, tl_tensor *);
static const unary_fn kUnary[5] = {tl_relu, tl_gelu, tl_silu, tl_exp, tl_tanh};

Test(ops, unary_math) {
    float x[7] = {-3, -1, -0.5f, 0, 0.5f, 1, 3}, got[7];
    int64_t s[1] = {7};
    tl_tensor t = make_f32(ctx, 1, s, x), y;
    OK(tl_relu(ctx, t, &y));
    read_f32(ctx, y, got, 7);
    for (int i = 0; i < 7; ++i) cr_assert_eq(got[i], x[i] > 0 ? x[i] : 0);
    OK(tl_gelu(ctx, t, &y));
    read_f32(ctx, y, got, 7);
    for (int i = 0; i < 7; ++i) {
        double v = x[i], want = 0.5 * v * (1 + tanh(sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
        cr_assert(fabs(got[i] - want) < 1e-6, "gelu(%g) = %g, want %g", v, got[i], want);
    }
    OK(tl_silu(ctx, t, &y));
    read_f32(ctx, y, got, 7);
    for (int i = 0; i < 7; ++i) cr_assert(fabs(got[i] - x[i] / (1 + exp(-x[i]))) < 1e-6);
    OK(tl_exp(ctx, t, &y));
    read_f32(ctx, y, got, 7);
    for (int i = 0; i < 7; ++i) cr_assert(fabs(got[i] - exp(x[i])) < 1e-5 * exp(x[i]));
    OK(tl_tanh(ctx, t, &y));
    read_f32(ctx, y, got, 7);
    for (int i = 0; i < 7; ++i) cr_assert(fabs(got[i] - tanh(x[i])) < 1e-6);
    OK(tl_scale(ctx, t, -2.0, &y));
    read_f32(ctx, y, got, 7);
    for (int i = 0; i < 7; ++i) cr_assert_eq(got[i], -2 * x[i]);
    /* Each refuses an i32 tensor by its own name. */
    const char *refusals[6] = {"relu takes f32 or f64, not i32", "gelu takes f32 or f64, not i32",
                               "silu takes f32 or f64, not i32", "exp takes f32 or f64, not i32",
                               "tanh takes f32 or f64, not i32", "scale takes f32 or f64, not i32"};
    tl_tensor ints;
    OK(tl_tensor_zeros(ctx, TL_I32, 1, s, &ints));
    for (int u = 0; u < 6; ++u) {
        tl_tensor none = {0};
        REFUSED_WITH(u < 5 ? kUnary[u](ctx, ints, &none) : tl_scale(ctx, ints, 2.0, &none), TL_E_DTYPE, refusals[u]);
        cr_assert_eq(none.bits, 0);
    }
}

Test(ops, softmax_hand_worked_and_stable) {
    /* softmax([0, ln 3]) = [1/4, 3/4] */
    float x[2] = {0, (float)log(3.0)}, got[6];
    int64_t s[1] = {2};
    tl_tensor y;
    OK(tl_softmax(ctx, make_f32(ctx, 1, s, x), 0, &y));
    read_f32(ctx, y, got, 2);
    cr_assert(fabsf(got[0] - 0.25f) < 1e-6f && fabsf(got[1] - 0.75f) < 1e-6f);
    /* Huge logits would overflow exp without the max subtracted. */
    float big[6] = {1000, 1001, 1002, -1000, 0, 1000};
    int64_t s23[2] = {2, 3};
    tl_tensor tb = make_f32(ctx, 2, s23, big);
    OK(tl_softmax(ctx, tb, -1, &y));
    read_f32(ctx, y, got, 6);
    for (int r = 0; r < 2; ++r) {
        double m = -INFINITY, total = 0;
        for (int j = 0; j < 3; ++j) m = fmax(m, big[r * 3 + j]);
        for (int j = 0; j < 3; ++j) total += exp(big[r * 3 + j] - m);
        for (int j = 0; j < 3; ++j) {
            double want = exp(big[r * 3 + j] - m) / total;
            cr_assert(fabs(got[r * 3 + j] - want) < 1e-6, "row %d col %d: %g vs %g", r, j, got[r * 3 + j], want);
        }
    }
    OK(tl_softmax(ctx, tb, 0, &y)); /* down the columns */
    read_f32(ctx, y, got, 6);
    for (int j = 0; j < 3; ++j) cr_assert(fabsf(got[j] + got[3 + j] - 1.0f) < 1e-6f);
    cr_assert(fabsf(got[0] - 1.0f) < 1e-6f); /* 1000 vs -1000 */
}

Test(ops, rmsnorm_and_layernorm) {
    float x[8] = {1, 2, 3, 4, -1, 0, 1, 2}, w[4] = {1, 0.5f, 2, -1}, b[4] = {0, 1, 0, -1}, got[8];
    int64_t sx[2] = {2, 4}, sw[1] = {4};
    tl_tensor tx = make_f32(ctx, 2, sx, x), tw = make_f32(ctx, 1, sw, w), tb = make_f32(ctx, 1, sw, b), y;
    const double eps = 1e-5;
    OK(tl_rmsnorm(ctx, tx, tw, eps, &y));
    read_f32(ctx, y, got, 8);
    for (int r = 0; r < 2; ++r) {
        double ms = 0;
        for (int j = 0; j < 4; ++j) ms += (double)x[r * 4 + j] * x[r * 4 + j];
        double inv = 1 / sqrt(ms / 4 + eps);
        for (int j = 0; j < 4; ++j) cr_assert(fabs(got[r * 4 + j] - x[r * 4 + j] * inv * w[j]) < 1e-6);
    }
    OK(tl_layernorm(ctx, tx, tw, tb, eps, &y));
    read_f32(ctx, y, got, 8);
    for (int r = 0; r < 2; ++r) {
        double mean = 0, var = 0;
        for (int j = 0; j < 4; ++j) mean += x[r * 4 + j] / 4.0;
        for (int j = 0; j < 4; ++j) var += (x[r * 4 + j] - mean) * (x[r * 4 + j] - mean) / 4.0;
        for (int j = 0; j < 4; ++j) {
            double want = (x[r * 4 + j] - mean) / sqrt(var + eps) * w[j] + b[j];
            cr_assert(fabs(got[r * 4 + j] - want) < 1e-5, "%g vs %g", got[r * 4 + j], want);
        }
    }
    tl_tensor none = {0};
    OK(tl_layernorm(ctx, tx, none, none, eps, &y)); /* no weight, no bias */
    read_f32(ctx, y, got, 8);
    cr_assert(fabsf(got[0] + got[1] + got[2] + got[3]) < 1e-5f);
}

Test(ops, sum_mean_argmax) {
    float x[6] = {1, 5, 3, 4, 2, 6}, got[3];
    int64_t s[2] = {2, 3};
    tl_tensor t = make_f32(ctx, 2, s, x), y;
    OK(tl_sum(ctx, t, 0, 0, &y));
    read_f32(ctx, y, got, 3);
    cr_assert(got[0] == 5 && got[1] == 7 && got[2] == 9);
    OK(tl_mean(ctx, t, -1, 1, &y));
    tl_tensor_info info = TL_TENSOR_INFO_INIT;
    OK(tl_tensor_info_get(ctx, y, &info));
    cr_assert(info.ndim == 2 && info.shape[0] == 2 && info.shape[1] == 1);
    read_f32(ctx, y, got, 2);
    cr_assert(got[0] == 3 && got[1] == 4);
    int32_t idx[3];
    OK(tl_argmax(ctx, t, 1, &y));
    OK(tl_tensor_read(ctx, y, idx, 2 * sizeof(int32_t)));
    cr_assert(idx[0] == 1 && idx[1] == 2);
    float ties[4] = {2, 7, 7, NAN};
    int64_t s4[1] = {3};
    OK(tl_argmax(ctx, make_f32(ctx, 1, s4, ties), 0, &y));
    OK(tl_tensor_read(ctx, y, idx, sizeof(int32_t)));
    cr_assert_eq(idx[0], 1, "first of equal maxima");
    s4[0] = 4;
    OK(tl_argmax(ctx, make_f32(ctx, 1, s4, ties), 0, &y));
    OK(tl_tensor_read(ctx, y, idx, sizeof(int32_t)));
    cr_assert_eq(idx[0], 3, "NaN counts as largest");
    /* A NaN first, and two NaNs: the first NaN wins, in f32 and f64. */
    const double firsts[2][4] = {{NAN, 9, 1, 12}, {1, NAN, 30, NAN}};
    for (int f64 = 0; f64 < 2; ++f64)
        for (int c = 0; c < 2; ++c) {
            float f[4];
            for (int i = 0; i < 4; ++i) f[i] = (float)firsts[c][i];
            tl_tensor a;
            OK(tl_tensor_from_data(ctx, f64 ? TL_F64 : TL_F32, 1, s4, f64 ? (const void *)firsts[c] : (const void *)f,
                                   f64 ? sizeof firsts[c] : sizeof f, &a));
            OK(tl_argmax(ctx, a, 0, &y));
            OK(tl_tensor_read(ctx, y, idx, sizeof(int32_t)));
            cr_assert_eq(idx[0], c, "%s case %d: the first NaN", f64 ? "f64" : "f32", c);
        }
}

Test(ops, views_share_storage_and_report_layout) {
    float x[12];
    for (int i = 0; i < 12; ++i) x[i] = (float)i;
    int64_t s[2] = {3, 4};
    tl_tensor t = make_f32(ctx, 2, s, x), v, tt, flat, c;
    OK(tl_slice(ctx, t, 0, 1, 2, &v)); /* rows 1..2 */
    tl_tensor_info info = TL_TENSOR_INFO_INIT;
    OK(tl_tensor_info_get(ctx, v, &info));
    cr_assert_eq(info.offset, 4);
    cr_assert_eq(info.shape[0], 2);
    cr_assert_eq(info.strides[0], 4);
    void *pt, *pv;
    OK(tl_tensor_data(ctx, t, &pt));
    OK(tl_tensor_data(ctx, v, &pv));
    cr_assert_eq((char *)pv, (char *)pt + 4 * sizeof(float), "a view shares its base's storage");
    OK(tl_transpose(ctx, t, 0, 1, &tt));
    int64_t s12[1] = {12};
    OK(tl_reshape(ctx, tt, 1, s12, &flat)); /* not expressible as a view: copied */
    float got[12];
    read_f32(ctx, flat, got, 12);
    for (int j = 0; j < 4; ++j)
        for (int i = 0; i < 3; ++i) cr_assert_eq(got[j * 3 + i], x[i * 4 + j]);
    int64_t s26[2] = {2, 6};
    OK(tl_reshape(ctx, t, 2, s26, &c)); /* a view */
    void *pc;
    OK(tl_tensor_data(ctx, c, &pc));
    cr_assert_eq(pc, pt);
    int64_t infer[3] = {2, -1, 3};
    OK(tl_reshape(ctx, t, 3, infer, &c));
    OK(tl_tensor_info_get(ctx, c, &info));
    cr_assert_eq(info.shape[1], 2);
    OK(tl_contiguous(ctx, tt, &c));
    OK(tl_tensor_info_get(ctx, c, &info));
    cr_assert(info.strides[0] == 3 && info.strides[1] == 1);
    read_f32(ctx, c, got, 12);
    for (int j = 0; j < 4; ++j)
        for (int i = 0; i < 3; ++i) cr_assert_eq(got[j * 3 + i], x[i * 4 + j]);
}

Test(ops, concat_and_gather_rows) {
    float a[4] = {1, 2, 3, 4}, b[2] = {5, 6}, got[6];
    int64_t sa[2] = {2, 2}, sb[2] = {2, 1}, sc[2] = {1, 2};
    tl_tensor parts[2] = {make_f32(ctx, 2, sa, a), make_f32(ctx, 2, sb, b)}, c;
    OK(tl_concat(ctx, 2, parts, 1, &c));
    read_f32(ctx, c, got, 6);
    const float want1[6] = {1, 2, 5, 3, 4, 6};
    assert_close(got, want1, 6, 0);
    parts[1] = make_f32(ctx, 2, sc, b);
    OK(tl_concat(ctx, 2, parts, 0, &c));
    read_f32(ctx, c, got, 6);
    const float want0[6] = {1, 2, 3, 4, 5, 6};
    assert_close(got, want0, 6, 0);

    float table[8] = {0, 1, 10, 11, 20, 21, 30, 31}, rows[8];
    int64_t st[2] = {4, 2}, si[2] = {2, 2};
    int32_t ids[4] = {3, 0, 2, 2};
    tl_tensor tids;
    OK(tl_tensor_from_data(ctx, TL_I32, 2, si, ids, sizeof ids, &tids));
    OK(tl_gather_rows(ctx, make_f32(ctx, 2, st, table), tids, &c));
    tl_tensor_info info = TL_TENSOR_INFO_INIT;
    OK(tl_tensor_info_get(ctx, c, &info));
    cr_assert(info.ndim == 3 && info.shape[0] == 2 && info.shape[1] == 2 && info.shape[2] == 2);
    read_f32(ctx, c, rows, 8);
    for (int i = 0; i < 4; ++i) cr_assert(rows[i * 2] == table[ids[i] * 2] && rows[i * 2 + 1] == table[ids[i] * 2 + 1]);
    /* An id outside the table, first, in the middle or last, negative or past the end: refused,
     * naming the first such id, nothing made. */
    const int32_t outside[3][4] = {{-1, 0, 1, 2}, {0, 4, -7, 1}, {0, 1, 2, -2147483647 - 1}};
    const char *named[3] = {"id -1 is outside 0..3", "id 4 is outside 0..3", "id -2147483648 is outside 0..3"};
    for (int k = 0; k < 3; ++k) {
        tl_tensor bad_ids, none = {0};
        OK(tl_tensor_from_data(ctx, TL_I32, 2, si, outside[k], sizeof outside[k], &bad_ids));
        REFUSED_WITH(tl_gather_rows(ctx, make_f32(ctx, 2, st, table), bad_ids, &none), TL_E_SHAPE, named[k]);
        cr_assert_eq(none.bits, 0);
    }
    /* A 0-D table has no rows to gather. */
    tl_tensor none = {0};
    REFUSED_WITH(tl_gather_rows(ctx, make_f32(ctx, 0, NULL, table), tids, &none), TL_E_SHAPE, "the table needs at least 1 dim");
    cr_assert_eq(none.bits, 0);
}

Test(ops, copy_into_a_cache_row_and_overlapping) {
    int64_t sc[2] = {4, 3}, sr[1] = {3};
    tl_tensor cache, row;
    OK(tl_tensor_zeros(ctx, TL_F32, 2, sc, &cache));
    float r[3] = {7, 8, 9}, got[12];
    OK(tl_slice(ctx, cache, 0, 2, 1, &row));
    OK(tl_copy_into(ctx, make_f32(ctx, 1, sr, r), row)); /* broadcast [3] into [1,3] */
    read_f32(ctx, cache, got, 12);
    for (int i = 0; i < 12; ++i) cr_assert_eq(got[i], (i >= 6 && i < 9) ? r[i - 6] : 0.0f);
    /* Shift rows 0..2 down to 1..3 inside the same tensor: overlapping source and destination. */
    float seq[12];
    for (int i = 0; i < 12; ++i) seq[i] = (float)i;
    tl_tensor t = make_f32(ctx, 2, sc, seq), src, dst;
    OK(tl_slice(ctx, t, 0, 0, 3, &src));
    OK(tl_slice(ctx, t, 0, 1, 3, &dst));
    OK(tl_copy_into(ctx, src, dst));
    read_f32(ctx, t, got, 12);
    for (int i = 0; i < 3; ++i) cr_assert_eq(got[i], (float)i);
    for (int i = 3; i < 12; ++i) cr_assert_eq(got[i], (float)(i - 3));
    /* A row broadcast into no rows (an empty destination): nothing to copy, nothing touched. */
    tl_tensor no_rows;
    OK(tl_slice(ctx, t, 0, 2, 0, &no_rows));
    OK(tl_copy_into(ctx, make_f32(ctx, 1, sr, r), no_rows));
    read_f32(ctx, t, got, 12);
    for (int i = 3; i < 12; ++i) cr_assert_eq(got[i], (float)(i - 3));
}

Test(ops, scalars_and_empty_tensors) {
    float v = 3, got = 0;
    tl_tensor s = make_f32(ctx, 0, NULL, &v), y;
    OK(tl_add(ctx, s, s, &y));
    read_f32(ctx, y, &got, 1);
    cr_assert_eq(got, 6);
    int64_t e[2] = {0, 5};
    tl_tensor empty, sum;
    OK(tl_tensor_zeros(ctx, TL_F32, 2, e, &empty));
    OK(tl_exp(ctx, empty, &y));
    OK(tl_softmax(ctx, empty, 1, &y));
    OK(tl_sum(ctx, empty, 0, 0, &sum));
    float five[5];
    read_f32(ctx, sum, five, 5);
    for (int i = 0; i < 5; ++i) cr_assert_eq(five[i], 0.0f);
    FAILS_WITH(tl_argmax(ctx, empty, 0, &y), TL_E_SHAPE);
    OK(tl_tensor_read(ctx, empty, NULL, 0));
}

Test(ops, wrap_borrows_caller_memory) {
    float buf[6] = {1, 2, 3, 4, 5, 6}, got[6];
    int64_t s[2] = {2, 3};
    tl_tensor w, t, y;
    OK(tl_tensor_wrap(ctx, TL_F32, 2, s, buf, sizeof buf, &w));
    void *p;
    OK(tl_tensor_data(ctx, w, &p));
    cr_assert_eq(p, (void *)buf, "no copy");
    OK(tl_scale(ctx, w, 2.0, &y));
    read_f32(ctx, y, got, 6);
    for (int i = 0; i < 6; ++i) cr_assert_eq(got[i], 2 * buf[i]);
    OK(tl_tensor_full(ctx, TL_F32, 1, s + 1, 9.0, &t));
    tl_tensor row;
    OK(tl_slice(ctx, w, 0, 1, 1, &row));
    OK(tl_copy_into(ctx, t, row)); /* writes into the caller's buffer */
    cr_assert(buf[3] == 9 && buf[5] == 9 && buf[0] == 1);
    OK(tl_tensor_free(ctx, w)); /* the handle only: the buffer is the caller's */
    cr_assert_eq(buf[1], 2);
    FAILS_WITH(tl_tensor_wrap(ctx, TL_F32, 2, s, (char *)buf + 1, sizeof buf, &w), TL_E_INVALID_ARGUMENT);
    FAILS_WITH(tl_tensor_wrap(ctx, TL_F32, 2, s, buf, sizeof buf - 4, &w), TL_E_INVALID_ARGUMENT);
    FAILS_WITH(tl_tensor_wrap(ctx, TL_F32, 2, s, NULL, sizeof buf, &w), TL_E_INVALID_ARGUMENT);
}

/* A tensor's elements as doubles, whatever its float dtype. */
static void read_as_doubles(tl_tensor t, int f64, double *out, size_t n) {
    if (f64) {
        OK(tl_tensor_read(ctx, t, out, n * sizeof(double)));
        return;
    }
    float *tmp = malloc(n * sizeof(float));
    OK(tl_tensor_read(ctx, t, tmp, n * sizeof(float)));
    for (size_t i = 0; i < n; ++i) out[i] = tmp[i];
    free(tmp);
}

/* One-row and one-column products of matrices large enough for the matrix-vector path, in every
 * layout BLAS takes as it is: the vector contiguous or a transposed view, the matrix row-major,
 * transposed, or a column slice (leading dimension past its width); f32 and f64.  Against a
 * double loop over the logical elements. */
Test(ops, matmul_one_row_and_one_column_products_in_every_layout) {
    enum { K = 384, N = 448, PAD = 64 };
    const size_t big = (size_t)(K + PAD) * (N + PAD);
    float *wf = malloc(big * sizeof(float));
    double *wd = malloc(big * sizeof(double));
    unsigned seed = 7;
    for (size_t i = 0; i < big; ++i) wd[i] = (double)(wf[i] = rand_unit(&seed));
    for (int dt = 0; dt < 2; ++dt) {
        const tl_dtype type = dt ? TL_F64 : TL_F32;
        const size_t es = dt ? 8 : 4;
        void *store = dt ? (void *)wd : (void *)wf;
        const int64_t sstore[2] = {K + PAD, N + PAD};
        tl_tensor whole;
        OK(tl_tensor_wrap(ctx, type, 2, sstore, store, big * es, &whole));
        /* M: [K, N] as a column slice of the padded store (leading dimension N + PAD). */
        tl_tensor rows, m;
        OK(tl_slice(ctx, whole, 0, 0, K, &rows));
        OK(tl_slice(ctx, rows, 1, 0, N, &m));
        tl_tensor mc, mt, mtt;
        OK(tl_contiguous(ctx, m, &mc));       /* row-major, ld = N */
        OK(tl_transpose(ctx, mc, 0, 1, &mt)); /* [N, K] as a transposed view */
        OK(tl_contiguous(ctx, mt, &mtt));     /* [N, K] row-major */
        tl_tensor mtt_t;
        OK(tl_transpose(ctx, mtt, 0, 1, &mtt_t)); /* [K, N] again, as a transposed view */
        double *mref = malloc((size_t)K * N * sizeof(double));
        OK(tl_contiguous(ctx, m, &mc));
        read_as_doubles(mc, dt, mref, (size_t)K * N);
        /* x: [1, K] contiguous, and as a transposed view of a [K, 1] column. */
        double xs[K];
        for (int i = 0; i < K; ++i) xs[i] = 0.25 * (i % 7) - 0.5;
        const int64_t sx[2] = {1, K}, scol[2] = {K, 1};
        tl_tensor x, xcol, xt;
        OK(tl_tensor_zeros(ctx, type, 2, sx, &x));
        OK(tl_tensor_zeros(ctx, type, 2, scol, &xcol));
        void *p, *q;
        OK(tl_tensor_data(ctx, x, &p));
        OK(tl_tensor_data(ctx, xcol, &q));
        for (int i = 0; i < K; ++i) {
            if (dt)
                ((double *)p)[i] = ((double *)q)[i] = xs[i];
            else
                ((float *)p)[i] = ((float *)q)[i] = (float)xs[i];
        }
        OK(tl_transpose(ctx, xcol, 0, 1, &xt));
        double want_row[N];
        for (int j = 0; j < N; ++j) {
            want_row[j] = 0;
            for (int i = 0; i < K; ++i) want_row[j] += xs[i] * mref[(size_t)i * N + j];
        }
        const tl_tensor mats[4] = {m, mc, mtt_t, mt}; /* [K,N] slice, [K,N], [K,N] view; [N,K] view */
        const tl_tensor vecs[2] = {x, xt};
        for (int a = 0; a < 2; ++a)
            for (int b = 0; b < 3; ++b) {
                tl_tensor y;
                OK(tl_matmul(ctx, vecs[a], mats[b], &y));
                double got[N];
                read_as_doubles(y, dt, got, N);
                for (int j = 0; j < N; ++j)
                    cr_assert(fabs(got[j] - want_row[j]) <= (dt ? 1e-10 : 1e-3) * (1 + fabs(want_row[j])),
                              "dt %d vec %d mat %d col %d: %g, want %g", dt, a, b, j, got[j], want_row[j]);
            }
        /* One column: [N, K] (a transposed view, and row-major) times the [K, 1] column, contiguous
         * and as a column slice of a [K, 2] matrix (its elements 2 apart). */
        const int64_t stwo[2] = {K, 2};
        tl_tensor two, xstrided;
        OK(tl_tensor_zeros(ctx, type, 2, stwo, &two));
        OK(tl_tensor_data(ctx, two, &p));
        for (int i = 0; i < K; ++i) {
            if (dt)
                ((double *)p)[2 * i] = xs[i], ((double *)p)[2 * i + 1] = 99;
            else
                ((float *)p)[2 * i] = (float)xs[i], ((float *)p)[2 * i + 1] = 99;
        }
        OK(tl_slice(ctx, two, 1, 0, 1, &xstrided));
        for (int b = 0; b < 4; ++b) {
            const tl_tensor left = b & 1 ? mtt : mt; /* both [N, K] */
            tl_tensor y;
            OK(tl_matmul(ctx, left, b & 2 ? xstrided : xcol, &y));
            double got[N];
            read_as_doubles(y, dt, got, N);
            for (int j = 0; j < N; ++j)
                cr_assert(fabs(got[j] - want_row[j]) <= (dt ? 1e-10 : 1e-3) * (1 + fabs(want_row[j])),
                          "column product dt %d left %d row %d: %g, want %g", dt, b, j, got[j], want_row[j]);
        }
        free(mref);
    }
    free(wf);
    free(wd);
}

/* A matrix of two rows, each wider than the 512 KiB a product's row block holds: one row a block,
 * both ways (y = M x and y = x M), exactly the sums (small integers). */
Test(ops, one_row_products_with_rows_wider_than_a_block) {
    enum { W = 200000 };
    float *m = malloc(2 * (size_t)W * sizeof(float)), *x = malloc((size_t)W * sizeof(float));
    float *got = malloc((size_t)W * sizeof(float));
    for (int i = 0; i < W; ++i) m[i] = (float)(i % 3 - 1), m[W + i] = (float)(i % 4 == 0), x[i] = (float)(i % 5 == 0);
    const int64_t sm[2] = {2, W}, sx[2] = {1, W}, s2[2] = {1, 2};
    tl_tensor tm, tmt, tx, ty, two, y;
    OK(tl_tensor_from_data(ctx, TL_F32, 2, sm, m, 2 * (size_t)W * sizeof(float), &tm));
    OK(tl_tensor_from_data(ctx, TL_F32, 2, sx, x, (size_t)W * sizeof(float), &tx));
    OK(tl_transpose(ctx, tm, 0, 1, &tmt)); /* [W, 2]: y[2] = M x through the rows */
    OK(tl_matmul(ctx, tx, tmt, &y));
    float both[2];
    read_f32(ctx, y, both, 2);
    for (int r = 0; r < 2; ++r) {
        double want = 0;
        for (int i = 0; i < W; ++i) want += (double)m[(size_t)r * W + i] * x[i];
        cr_assert_eq(both[r], (float)want, "row %d: %g, want %g", r, both[r], want);
    }
    const float pair[2] = {3, -2}; /* y[W] = [3, -2] M: the columns, each a sum of two */
    OK(tl_tensor_from_data(ctx, TL_F32, 2, s2, pair, sizeof pair, &two));
    OK(tl_matmul(ctx, two, tm, &ty));
    read_f32(ctx, ty, got, W);
    for (int i = 0; i < W; ++i) cr_assert_eq(got[i], 3 * m[i] - 2 * m[W + i], "column %d: %g", i, got[i]);
    free(m), free(x), free(got);
}

/* Fused attention against the unfused ops on the same cache views: the demo's layout, a [T, D]
 * cache reshaped to [T, H, hd] and transposed to [H, T, hd]; every valid count, one and three
 * queries, f32 and f64, and the shape checks. */
static void unfused_attention(tl_context *c, tl_tensor q, tl_tensor k, tl_tensor v, int valid, double scale,
                              tl_dtype dt, int T, tl_tensor *out) {
    tl_tensor kt, s, masked, p, maskt;
    tl_tensor_info qi = TL_TENSOR_INFO_INIT;
    OK(tl_tensor_info_get(c, q, &qi));
    const int tq = (int)qi.shape[1];
    double *mask = malloc((size_t)tq * T * sizeof(double));
    for (int i = 0; i < tq; ++i)
        for (int j = 0; j < T; ++j) mask[i * T + j] = j <= valid - tq + i ? 0.0 : -INFINITY;
    const int64_t ms[2] = {tq, T};
    if (dt == TL_F64)
        OK(tl_tensor_from_data(c, TL_F64, 2, ms, mask, (size_t)tq * T * 8, &maskt));
    else {
        float *mf = malloc((size_t)tq * T * 4);
        for (int i = 0; i < tq * T; ++i) mf[i] = (float)mask[i];
        OK(tl_tensor_from_data(c, TL_F32, 2, ms, mf, (size_t)tq * T * 4, &maskt));
        free(mf);
    }
    OK(tl_transpose(c, k, 1, 2, &kt));
    OK(tl_matmul(c, q, kt, &s));
    OK(tl_scale(c, s, scale, &s));
    OK(tl_add(c, s, maskt, &masked));
    OK(tl_softmax(c, masked, -1, &p));
    OK(tl_matmul(c, p, v, out));
    free(mask);
}

Test(ops, fused_attention_matches_the_unfused_ops) {
    enum { T = 24, H = 4, HD = 8, D = H * HD };
    for (int dt = 0; dt < 2; ++dt) {
        const tl_dtype type = dt ? TL_F64 : TL_F32;
        const int64_t cs[2] = {T, D}, kvs[3] = {T, H, HD};
        float kf[T * D], vf[T * D];
        unsigned seed = 11;
        for (int i = 0; i < T * D; ++i) kf[i] = rand_unit(&seed), vf[i] = rand_unit(&seed);
        tl_tensor kc, vc;
        if (dt) {
            double kd[T * D], vd[T * D];
            for (int i = 0; i < T * D; ++i) kd[i] = kf[i], vd[i] = vf[i];
            OK(tl_tensor_from_data(ctx, TL_F64, 2, cs, kd, sizeof kd, &kc));
            OK(tl_tensor_from_data(ctx, TL_F64, 2, cs, vd, sizeof vd, &vc));
        } else {
            kc = make_f32(ctx, 2, cs, kf);
            vc = make_f32(ctx, 2, cs, vf);
        }
        tl_tensor k, v;
        OK(tl_reshape(ctx, kc, 3, kvs, &k));
        OK(tl_transpose(ctx, k, 0, 1, &k)); /* [H, T, hd], strides [hd, D, 1] */
        OK(tl_reshape(ctx, vc, 3, kvs, &v));
        OK(tl_transpose(ctx, v, 0, 1, &v));
        for (int tq = 1; tq <= 3; tq += 2)
            for (int valid = tq; valid <= T; ++valid) {
                const int64_t qs[3] = {H, tq, HD};
                tl_tensor q, fused, ref;
                OK(tl_tensor_full(ctx, type, 3, qs, 0.0, &q));
                void *qd;
                OK(tl_tensor_data(ctx, q, &qd));
                for (int i = 0; i < H * tq * HD; ++i) {
                    const double x = 0.3 * sin(1.0 + i * 0.7 + valid);
                    if (dt)
                        ((double *)qd)[i] = x;
                    else
                        ((float *)qd)[i] = (float)x;
                }
                const double scale = 1.0 / sqrt((double)HD);
                OK(tl_attention(ctx, q, k, v, valid, scale, &fused));
                unfused_attention(ctx, q, k, v, valid, scale, type, T, &ref);
                double a[H * 3 * HD], b[H * 3 * HD];
                const size_t n = (size_t)H * tq * HD;
                if (dt) {
                    OK(tl_tensor_read(ctx, fused, a, n * 8));
                    OK(tl_tensor_read(ctx, ref, b, n * 8));
                } else {
                    float fa[H * 3 * HD], fb[H * 3 * HD];
                    OK(tl_tensor_read(ctx, fused, fa, n * 4));
                    OK(tl_tensor_read(ctx, ref, fb, n * 4));
                    for (size_t i = 0; i < n; ++i) a[i] = fa[i], b[i] = fb[i];
                }
                for (size_t i = 0; i < n; ++i)
                    cr_assert(fabs(a[i] - b[i]) <= (dt ? 1e-12 : 2e-6), "dt %d tq %d valid %d elem %zu: %.9g vs %.9g",
                              dt, tq, valid, i, a[i], b[i]);
            }
    }
    /* Shapes it refuses, and a dtype mix. */
    const int64_t qs[3] = {2, 1, 4}, ks[3] = {2, 5, 4}, bad[3] = {3, 5, 4}, q2[3] = {2, 2, 4};
    tl_tensor q, k, kb, qq, kd, out;
    OK(tl_tensor_ones(ctx, TL_F32, 3, qs, &q));
    OK(tl_tensor_ones(ctx, TL_F32, 3, ks, &k));
    OK(tl_tensor_ones(ctx, TL_F32, 3, bad, &kb));
    OK(tl_tensor_ones(ctx, TL_F32, 3, q2, &qq));
    OK(tl_tensor_ones(ctx, TL_F64, 3, ks, &kd));
    FAILS_WITH(tl_attention(ctx, q, k, k, 6, 1.0, &out), TL_E_SHAPE);   /* more valid rows than the cache */
    FAILS_WITH(tl_attention(ctx, qq, k, k, 1, 1.0, &out), TL_E_SHAPE);  /* fewer valid rows than queries */
    FAILS_WITH(tl_attention(ctx, q, kb, kb, 1, 1.0, &out), TL_E_SHAPE); /* heads differ */
    FAILS_WITH(tl_attention(ctx, q, kd, kd, 1, 1.0, &out), TL_E_DTYPE);
    FAILS_WITH(tl_attention(ctx, q, k, k, 1, NAN, &out), TL_E_INVALID_ARGUMENT);
    OK(tl_attention(ctx, q, k, k, 5, 1.0, &out));
    float o[8];
    OK(tl_tensor_read(ctx, out, o, sizeof o));
    for (int i = 0; i < 8; ++i) cr_assert_float_eq(o[i], 1.0f, 1e-6); /* all-ones values average to one */
}

/* Attention on views whose last dim is not contiguous (every element of a row apart), any of q, k
 * and v, gives the bits of its contiguous copies: one query and a prompt's (4, 5: the widened path when
 * contiguous), head sizes a whole number of eight lanes and not (8, 12, 40, 72), f32 and f16
 * caches, grouped heads. */
Test(ops, attention_on_strided_views_gives_the_contiguous_bits) {
    enum { H = 4, HKV = 2, T = 24, TQ_MAX = 5, HD_MAX = 72 };
    static float qf[HD_MAX * TQ_MAX * H], kf[HD_MAX * T * HKV], vf[HD_MAX * T * HKV];
    static float a[H * TQ_MAX * HD_MAX], b[H * TQ_MAX * HD_MAX];
    const int hds[4] = {8, 12, 40, 72}, tqs[3] = {1, 4, 5};
    unsigned seed = 5;
    for (int i = 0; i < HD_MAX * T * HKV; ++i) kf[i] = rand_unit(&seed), vf[i] = rand_unit(&seed);
    for (int i = 0; i < HD_MAX * TQ_MAX * H; ++i) qf[i] = rand_unit(&seed);
    for (int hi = 0; hi < 4; ++hi)
        for (int half = 0; half < 2; ++half) {
            const int hd = hds[hi];
            const int64_t ks[3] = {hd, T, HKV};
            tl_tensor ks_store, vs_store, k, v, kc, vc;
            OK(tl_tensor_from_data(ctx, TL_F32, 3, ks, kf, sizeof(float) * (size_t)(hd * T * HKV), &ks_store));
            OK(tl_tensor_from_data(ctx, TL_F32, 3, ks, vf, sizeof(float) * (size_t)(hd * T * HKV), &vs_store));
            if (half) {
                OK(tl_convert(ctx, ks_store, TL_F16, &ks_store));
                OK(tl_convert(ctx, vs_store, TL_F16, &vs_store));
            }
            OK(tl_transpose(ctx, ks_store, 0, 2, &k)); /* [HKV, T, hd], its last dim T * HKV apart */
            OK(tl_transpose(ctx, vs_store, 0, 2, &v));
            OK(tl_contiguous(ctx, k, &kc));
            OK(tl_contiguous(ctx, v, &vc));
            for (int ti = 0; ti < 3; ++ti) {
                const int tq = tqs[ti];
                const int64_t qs[3] = {hd, tq, H};
                tl_tensor q_store, q, qc, strided, packed;
                OK(tl_tensor_from_data(ctx, TL_F32, 3, qs, qf, sizeof(float) * (size_t)(hd * tq * H), &q_store));
                OK(tl_transpose(ctx, q_store, 0, 2, &q));
                OK(tl_contiguous(ctx, q, &qc));
                for (int valid = tq; valid <= T; valid += 5) {
                    const double scale = 1.0 / sqrt((double)hd);
                    const size_t n = (size_t)H * tq * hd;
                    OK(tl_attention(ctx, qc, kc, vc, valid, scale, &packed));
                    read_f32(ctx, packed, b, n);
                    for (int which = 1; which < 8; ++which) { /* q, k, v strided: each alone and together */
                        OK(tl_attention(ctx, which & 1 ? q : qc, which & 2 ? k : kc, which & 4 ? v : vc, valid, scale,
                                        &strided));
                        read_f32(ctx, strided, a, n);
                        cr_assert(memcmp(a, b, n * sizeof(float)) == 0, "hd %d, %s cache, %d queries, %d valid rows, strided %d",
                                  hd, half ? "f16" : "f32", tq, valid, which);
                    }
                }
            }
        }
}

/* A few f32 rows against a large weight given as the transpose of its stored [n, k] rows take
 * the one-row kernel per row: each row's result has the bits of that row alone, for every m the
 * path takes (2-4) and the next one (5, sgemm), and all are close to a double-precision product. */
Test(ops, few_rows_against_stored_rows_match_one_row_products) {
    enum { K = 512, N = 300, M = 5 }; /* k * n * 4 = 600 KiB: past the one-row threshold */
    static float w[N * K], x[M * K], alone[M * N], got[M * N];
    fill_random(w, N * K, 3);
    fill_random(x, M * K, 4);
    const int64_t ws[2] = {N, K};
    tl_tensor stored, wt;
    OK(tl_tensor_from_data(ctx, TL_F32, 2, ws, w, sizeof w, &stored));
    OK(tl_transpose(ctx, stored, 0, 1, &wt));
    for (int r = 0; r < M; ++r) {
        const int64_t xs[2] = {1, K};
        tl_tensor xr, y;
        OK(tl_tensor_from_data(ctx, TL_F32, 2, xs, x + r * K, sizeof(float) * K, &xr));
        OK(tl_matmul(ctx, xr, wt, &y));
        read_f32(ctx, y, alone + r * N, N);
    }
    for (int m = 2; m <= M; ++m) {
        const int64_t xs[2] = {m, K};
        tl_tensor xm, y;
        OK(tl_tensor_from_data(ctx, TL_F32, 2, xs, x, sizeof(float) * (size_t)(m * K), &xm));
        OK(tl_matmul(ctx, xm, wt, &y));
        read_f32(ctx, y, got, (size_t)(m * N));
        for (int r = 0; r < m; ++r)
            for (int j = 0; j < N; ++j) {
                double want = 0, size = 0;
                for (int p = 0; p < K; ++p)
                    want += (double)x[r * K + p] * w[j * K + p], size += fabs((double)x[r * K + p] * w[j * K + p]);
                cr_assert(fabs(got[r * N + j] - want) <= 1e-6 * size + 1e-30, "m %d row %d col %d: %g, want %g", m,
                          r, j, got[r * N + j], want);
                if (m <= 4)
                    cr_assert(memcmp(&got[r * N + j], &alone[r * N + j], 4) == 0,
                              "m %d row %d col %d: %.9g, alone %.9g", m, r, j, got[r * N + j], alone[r * N + j]);
            }
    }
}

/* An elementwise op's numbers on views are those on fresh contiguous copies, bit for bit, in each
 * arithmetic dtype and each inner-loop shape the strided walk takes: runs contiguous with gaps
 * between them (a column slice), the right operand broadcast along the last axis, and a
 * transposed operand; and on the contiguous copies they are C's own arithmetic on each element
 * (i32 wrapping).  Unary math likewise on a transposed view in f32 and f64. */
static tl_tensor filled(tl_dtype dt, int ndim, const int64_t *shape, unsigned seed) {
    int64_t n = 1;
    for (int d = 0; d < ndim; ++d) n *= shape[d];
    const size_t es = tl_dtype_size(dt);
    unsigned char *bytes = malloc((size_t)n * es);
    for (int64_t i = 0; i < n; ++i) {
        const double v = 4 * rand_unit(&seed) - 2;
        const float f = (float)v;
        const int32_t k = (int32_t)(seed * 2654435761u + (unsigned)i * 40503u);
        memcpy(bytes + i * es, dt == TL_F64 ? (const void *)&v : dt == TL_F32 ? (const void *)&f : (const void *)&k, es);
    }
    tl_tensor t;
    OK(tl_tensor_from_data(ctx, dt, ndim, shape, bytes, (size_t)n * es, &t));
    free(bytes);
    return t;
}

/* n elements of a contiguous f32, f64 or i32 tensor as doubles (each exact). */
static void as_doubles(tl_tensor t, tl_dtype dt, int64_t n, double *out) {
    const size_t es = tl_dtype_size(dt);
    unsigned char *bytes = malloc((size_t)n * es);
    OK(tl_tensor_read(ctx, t, bytes, (size_t)n * es));
    for (int64_t i = 0; i < n; ++i) {
        float f;
        int32_t k;
        if (dt == TL_F64) memcpy(&out[i], bytes + i * es, 8);
        if (dt == TL_F32) memcpy(&f, bytes + i * es, 4), out[i] = f;
        if (dt == TL_I32) memcpy(&k, bytes + i * es, 4), out[i] = k;
    }
    free(bytes);
}

static void same_bytes(tl_tensor x, tl_tensor y, size_t bytes, const char *what) {
    unsigned char *a = malloc(bytes), *b = malloc(bytes);
    OK(tl_tensor_read(ctx, x, a, bytes));
    OK(tl_tensor_read(ctx, y, b, bytes));
    cr_assert(memcmp(a, b, bytes) == 0, "%s: views and contiguous copies differ", what);
    free(a);
    free(b);
}

static double element_op(int op, tl_dtype dt, double x, double y) {
    if (dt == TL_I32) {
        const uint32_t a = (uint32_t)(int32_t)x, b = (uint32_t)(int32_t)y;
        return (double)(int32_t)(op == TL_BINARY_add ? a + b : op == TL_BINARY_sub ? a - b : a * b);
    }
    if (dt == TL_F32) {
        const float a = (float)x, b = (float)y;
        return op == TL_BINARY_add ? a + b : op == TL_BINARY_sub ? a - b : op == TL_BINARY_mul ? a * b : a / b;
    }
    return op == TL_BINARY_add ? x + y : op == TL_BINARY_sub ? x - y : op == TL_BINARY_mul ? x * y : x / y;
}

Test(ops, elementwise_on_views_equals_contiguous_copies_in_every_dtype) {
    const tl_dtype dts[3] = {TL_F32, TL_F64, TL_I32};
    enum { R = 6, C = 9 };
    for (int d = 0; d < 3; ++d) {
        const tl_dtype dt = dts[d];
        const size_t es = tl_dtype_size(dt);
        int64_t s_rc[2] = {R, C}, s_cr[2] = {C, R}, s_r1[2] = {R, 1};
        const tl_tensor wide = filled(dt, 2, s_rc, 3 + d), tall = filled(dt, 2, s_cr, 5 + d);
        const tl_tensor col = filled(dt, 2, s_r1, 7 + d);
        tl_tensor gapped, flipped, x_cases[3], y_cases[3];
        OK(tl_slice(ctx, wide, 1, 2, 5, &gapped)); /* [6,5]: runs of 5 with gaps of 4 */
        OK(tl_transpose(ctx, tall, 0, 1, &flipped)); /* [6,9]: stride 6 along the last axis */
        tl_tensor gapped2;
        OK(tl_slice(ctx, wide, 1, 4, 5, &gapped2));
        x_cases[0] = gapped, y_cases[0] = gapped2; /* contiguous runs, gaps between */
        x_cases[1] = wide, y_cases[1] = col;       /* the right one broadcast along the last axis */
        x_cases[2] = flipped, y_cases[2] = wide;   /* a transposed operand */
        for (int op = TL_BINARY_add; op <= TL_BINARY_div; ++op) {
            if (dt == TL_I32 && op == TL_BINARY_div) continue; /* refused: tested elsewhere */
            for (int c = 0; c < 3; ++c) {
                tl_tensor xv = x_cases[c], yv = y_cases[c], xc, yc, on_views, on_copies;
                OK(tl_contiguous(ctx, xv, &xc));
                OK(tl_contiguous(ctx, yv, &yc));
                OK(tl_binary_bounded(ctx, op, xv, yv, R * C, &on_views));
                OK(tl_binary_bounded(ctx, op, xc, yc, R * C, &on_copies));
                tl_tensor_info info = TL_TENSOR_INFO_INIT;
                OK(tl_tensor_info_get(ctx, on_views, &info));
                const int64_t cols = info.shape[1], n = R * cols;
                char what[64];
                snprintf(what, sizeof what, "%s op %d case %d", tl_dtype_name(dt), op, c);
                same_bytes(on_views, on_copies, (size_t)n * es, what);
                /* Against C's arithmetic on each element of the copies. */
                double *xs = malloc((size_t)n * sizeof(double)), *ys = malloc((size_t)R * cols * sizeof(double));
                double *got = malloc((size_t)n * sizeof(double));
                tl_tensor_info yi = TL_TENSOR_INFO_INIT;
                OK(tl_tensor_info_get(ctx, yc, &yi));
                as_doubles(xc, dt, n, xs);
                as_doubles(yc, dt, yi.shape[0] * yi.shape[1], ys);
                as_doubles(on_copies, dt, n, got);
                for (int64_t i = 0; i < R; ++i)
                    for (int64_t j = 0; j < cols; ++j) {
                        const double y = yi.shape[1] == 1 ? ys[i] : ys[i * cols + j];
                        const double want = element_op(op, dt, xs[i * cols + j], y);
                        cr_assert(got[i * cols + j] == want || (want != want && got[i * cols + j] != got[i * cols + j]),
                                  "%s: element [%lld,%lld] is %.17g, want %.17g", what, (long long)i, (long long)j,
                                  got[i * cols + j], want);
                    }
                free(xs), free(ys), free(got);
            }
        }
        if (dt == TL_I32) continue;
        tl_tensor flat;
        OK(tl_contiguous(ctx, flipped, &flat));
        for (int u = 0; u < 6; ++u) {
            tl_tensor on_view, on_copy;
            if (u == 5) {
                OK(tl_scale(ctx, flipped, -1.75, &on_view));
                OK(tl_scale(ctx, flat, -1.75, &on_copy));
            } else {
                OK(kUnary[u](ctx, flipped, &on_view));
                OK(kUnary[u](ctx, flat, &on_copy));
            }
            char what[48];
            snprintf(what, sizeof what, "%s unary %d", tl_dtype_name(dt), u);
            same_bytes(on_view, on_copy, (size_t)R * C * es, what);
        }
    }
}

/* full, ones and zeros in each element dtype: the stored bits of the value as that dtype holds it
 * (f16 and bf16 rounded from the double, -0.0 keeping its sign), in every element of a tensor
 * past the fill's 4 KiB pattern and not a multiple of it. */
Test(ops, full_writes_each_dtypes_bits) {
    enum { kCount = 2 * 4096 + 3 };
    int64_t s[1] = {kCount};
    struct {
        tl_dtype dt;
        double value;
        uint64_t bits; /* of one element, little-endian in its size */
    } cases[] = {
        {TL_F32, 1.5, 0x3fc00000u},  {TL_F32, -0.0, 0x80000000u}, {TL_F64, -2.25, 0xc002000000000000ull},
        {TL_I32, -7, 0xfffffff9u},   {TL_F16, 1.5, 0x3e00},        {TL_F16, -0.0, 0x8000},
        {TL_F16, 65504, 0x7bff},     {TL_BF16, 1.5, 0x3fc0},       {TL_BF16, -3.0, 0xc040},
        {TL_BF16, -0.0, 0x8000},     {TL_F16, 0.0, 0},             {TL_BF16, 1.0, 0x3f80},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        const size_t es = tl_dtype_size(cases[c].dt);
        tl_tensor t;
        if (cases[c].value == 1.0)
            OK(tl_tensor_ones(ctx, cases[c].dt, 1, s, &t));
        else if (cases[c].value == 0.0 && !signbit(cases[c].value))
            OK(tl_tensor_zeros(ctx, cases[c].dt, 1, s, &t));
        else
            OK(tl_tensor_full(ctx, cases[c].dt, 1, s, cases[c].value, &t));
        static unsigned char got[kCount * 8];
        OK(tl_tensor_read(ctx, t, got, kCount * es));
        for (int i = 0; i < kCount; ++i) {
            uint64_t bits = 0;
            for (size_t b = 0; b < es; ++b) bits |= (uint64_t)got[i * es + b] << (8 * b);
            cr_assert_eq(bits, cases[c].bits, "case %zu (%s %g) element %d: %#llx", c, tl_dtype_name(cases[c].dt),
                         cases[c].value, i, (unsigned long long)bits);
        }
    }
}
