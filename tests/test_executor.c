/* The caller's executor: every op that splits must give bitwise the result of the inline run,
 * whatever order and threads the executor uses.  The hook here cuts [0, count) into grain-sized
 * chunks and runs them in reverse order on three threads of its own; and counts its calls, so a
 * test also proves the split happened. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "common.h"

typedef struct job {
    tl_task_fn task;
    void *task_user;
    int64_t count, grain;
    int worker, workers;
} job;

static atomic_long hook_calls, chunks_run;

static void *run_chunks(void *arg) {
    const job *j = arg;
    const int64_t chunks = (j->count + j->grain - 1) / j->grain;
    for (int64_t c = chunks - 1 - j->worker; c >= 0; c -= j->workers) { /* reverse order, interleaved */
        const int64_t lo = c * j->grain, hi = lo + j->grain < j->count ? lo + j->grain : j->count;
        j->task(j->task_user, lo, hi);
        atomic_fetch_add(&chunks_run, 1);
    }
    return NULL;
}

static void reverse_on_three_threads(void *user, int64_t count, int64_t grain, tl_task_fn task, void *task_user) {
    (void)user;
    atomic_fetch_add(&hook_calls, 1);
    cr_assert_gt(grain, 0);
    pthread_t t[3];
    job jobs[3];
    const int threads = !getenv("TL_TEST_NO_THREADS"); /* see common.h: the same chunks, one thread */
    for (int w = 0; w < 3; ++w) jobs[w] = (job){task, task_user, count, grain, w, 3};
    for (int w = 0; w < 3; ++w) {
        if (threads)
            pthread_create(&t[w], NULL, run_chunks, &jobs[w]);
        else
            run_chunks(&jobs[2 - w]);
    }
    for (int w = 0; threads && w < 3; ++w) pthread_join(t[w], NULL);
}

static tl_context *inline_ctx, *split_ctx;
static void setup(void) {
    OK(tl_context_create(NULL, &inline_ctx));
    OK(tl_context_create(NULL, &split_ctx));
    const tl_executor ex = {NULL, reverse_on_three_threads};
    OK(tl_context_set_executor(split_ctx, &ex));
}
static void teardown(void) {
    tl_context_destroy(inline_ctx);
    tl_context_destroy(split_ctx);
}
TestSuite(executor, .init = setup, .fini = teardown);

enum { R = 384, C = 256 };

/* The same data in both contexts, f32 or f64. */
static void make_pair(tl_dtype dt, int ndim, const int64_t *shape, unsigned seed, tl_tensor *a, tl_tensor *b) {
    int64_t n = 1;
    for (int i = 0; i < ndim; ++i) n *= shape[i];
    const size_t es = tl_dtype_size(dt);
    unsigned char *data = malloc((size_t)n * es);
    for (int64_t i = 0; i < n; ++i) {
        const float x = rand_unit(&seed) * 3.0f;
        if (dt == TL_F64)
            ((double *)data)[i] = x * 1.000001;
        else
            ((float *)data)[i] = x;
    }
    OK(tl_tensor_from_data(inline_ctx, dt, ndim, shape, data, (size_t)n * es, a));
    OK(tl_tensor_from_data(split_ctx, dt, ndim, shape, data, (size_t)n * es, b));
    free(data);
}

/* Bitwise comparison of an inline result and a split one. */
static void same_bits(tl_tensor x, tl_tensor y, const char *what) {
    tl_tensor_info ix = TL_TENSOR_INFO_INIT, iy = TL_TENSOR_INFO_INIT;
    OK(tl_tensor_info_get(inline_ctx, x, &ix));
    OK(tl_tensor_info_get(split_ctx, y, &iy));
    cr_assert_eq(ix.ndim, iy.ndim, "%s", what);
    int64_t n = 1;
    for (int i = 0; i < ix.ndim; ++i) n *= ix.shape[i];
    const size_t bytes = (size_t)n * tl_dtype_size(ix.dtype);
    unsigned char *bx = malloc(bytes), *by = malloc(bytes);
    OK(tl_tensor_read(inline_ctx, x, bx, bytes));
    OK(tl_tensor_read(split_ctx, y, by, bytes));
    cr_assert_eq(memcmp(bx, by, bytes), 0, "%s differs when split", what);
    free(bx);
    free(by);
}

Test(executor, every_split_op_is_bitwise_the_inline_one) {
    const int64_t s2[2] = {R, C}, srow[1] = {C}, s3[3] = {8, R / 8, C};
    for (int t = 0; t < 2; ++t) {
        const tl_dtype dt = t ? TL_F64 : TL_F32;
        tl_tensor a0, a1, b0, b1, w0, w1, bias0, bias1, x30, x31;
        make_pair(dt, 2, s2, 1, &a0, &a1);
        make_pair(dt, 2, s2, 2, &b0, &b1);
        make_pair(dt, 1, srow, 3, &w0, &w1);
        make_pair(dt, 1, srow, 4, &bias0, &bias1);
        make_pair(dt, 3, s3, 5, &x30, &x31);
        const long before = atomic_load(&hook_calls);
        tl_tensor y0, y1;
        OK(tl_add(inline_ctx, a0, w0, &y0));
        OK(tl_add(split_ctx, a1, w1, &y1));
        same_bits(y0, y1, "add (broadcast)");
        OK(tl_div(inline_ctx, a0, b0, &y0));
        OK(tl_div(split_ctx, a1, b1, &y1));
        same_bits(y0, y1, "div");
        OK(tl_gelu(inline_ctx, a0, &y0));
        OK(tl_gelu(split_ctx, a1, &y1));
        same_bits(y0, y1, "gelu");
        OK(tl_exp(inline_ctx, a0, &y0));
        OK(tl_exp(split_ctx, a1, &y1));
        same_bits(y0, y1, "exp");
        OK(tl_scale(inline_ctx, a0, 0.3, &y0));
        OK(tl_scale(split_ctx, a1, 0.3, &y1));
        same_bits(y0, y1, "scale");
        for (int axis = 0; axis < 2; ++axis) {
            OK(tl_softmax(inline_ctx, a0, axis, &y0));
            OK(tl_softmax(split_ctx, a1, axis, &y1));
            same_bits(y0, y1, "softmax");
            OK(tl_sum(inline_ctx, a0, axis, 0, &y0));
            OK(tl_sum(split_ctx, a1, axis, 0, &y1));
            same_bits(y0, y1, "sum");
            OK(tl_mean(inline_ctx, a0, axis, 1, &y0));
            OK(tl_mean(split_ctx, a1, axis, 1, &y1));
            same_bits(y0, y1, "mean");
            OK(tl_argmax(inline_ctx, a0, axis, &y0));
            OK(tl_argmax(split_ctx, a1, axis, &y1));
            same_bits(y0, y1, "argmax");
        }
        OK(tl_sum(inline_ctx, x30, 1, 0, &y0));
        OK(tl_sum(split_ctx, x31, 1, 0, &y1));
        same_bits(y0, y1, "sum of 3-D");
        for (int mode = 0; mode < 2; ++mode) { /* [8 heads, 48 positions, 256]: ranges start mid-head */
            OK(tl_rope(inline_ctx, x30, 5, 10000.0, mode ? TL_ROPE_HALVES : TL_ROPE_INTERLEAVED, &y0));
            OK(tl_rope(split_ctx, x31, 5, 10000.0, mode ? TL_ROPE_HALVES : TL_ROPE_INTERLEAVED, &y1));
            same_bits(y0, y1, "rope");
        }
        OK(tl_rmsnorm(inline_ctx, a0, w0, 1e-5, &y0));
        OK(tl_rmsnorm(split_ctx, a1, w1, 1e-5, &y1));
        same_bits(y0, y1, "rmsnorm");
        OK(tl_layernorm(inline_ctx, a0, w0, bias0, 1e-5, &y0));
        OK(tl_layernorm(split_ctx, a1, w1, bias1, 1e-5, &y1));
        same_bits(y0, y1, "layernorm");
        tl_tensor t0, t1;
        OK(tl_transpose(inline_ctx, a0, 0, 1, &t0));
        OK(tl_transpose(split_ctx, a1, 0, 1, &t1));
        OK(tl_contiguous(inline_ctx, t0, &y0));
        OK(tl_contiguous(split_ctx, t1, &y1));
        same_bits(y0, y1, "contiguous");
        OK(tl_copy_into(inline_ctx, w0, b0));
        OK(tl_copy_into(split_ctx, w1, b1));
        same_bits(b0, b1, "copy_into (broadcast)");
        /* gather_rows: 300 ids over a [R, C] table */
        int32_t ids[300];
        for (int i = 0; i < 300; ++i) ids[i] = (i * 37) % R;
        const int64_t si[1] = {300};
        tl_tensor i0, i1;
        OK(tl_tensor_from_data(inline_ctx, TL_I32, 1, si, ids, sizeof ids, &i0));
        OK(tl_tensor_from_data(split_ctx, TL_I32, 1, si, ids, sizeof ids, &i1));
        OK(tl_gather_rows(inline_ctx, a0, i0, &y0));
        OK(tl_gather_rows(split_ctx, a1, i1, &y1));
        same_bits(y0, y1, "gather_rows");
        /* attention: 16 heads over a 256-row cache, 200 valid */
        const int64_t sq[3] = {16, 1, 64}, skv[3] = {16, 256, 64};
        tl_tensor q0, q1, k0, k1, v0, v1;
        make_pair(dt, 3, sq, 6, &q0, &q1);
        make_pair(dt, 3, skv, 7, &k0, &k1);
        make_pair(dt, 3, skv, 8, &v0, &v1);
        OK(tl_attention(inline_ctx, q0, k0, v0, 200, 0.125, &y0));
        OK(tl_attention(split_ctx, q1, k1, v1, 200, 0.125, &y1));
        same_bits(y0, y1, "attention");
        /* a prompt's 9 queries: each split range widens its heads' rows into its own slot */
        const int64_t sq9[3] = {16, 9, 64};
        make_pair(dt, 3, sq9, 9, &q0, &q1);
        OK(tl_attention(inline_ctx, q0, k0, v0, 200, 0.125, &y0));
        OK(tl_attention(split_ctx, q1, k1, v1, 200, 0.125, &y1));
        same_bits(y0, y1, "attention of a prompt's queries");
        cr_assert_geq(atomic_load(&hook_calls) - before, 20, "the executor was asked %ld times",
                      atomic_load(&hook_calls) - before);
    }
    cr_assert_gt(atomic_load(&chunks_run), atomic_load(&hook_calls), "work was cut into more than one chunk a call");
}

Test(executor, small_work_runs_inline_and_the_executor_can_be_cleared) {
    const int64_t s[1] = {64};
    tl_tensor a, y;
    OK(tl_tensor_ones(split_ctx, TL_F32, 1, s, &a));
    const long before = atomic_load(&hook_calls);
    OK(tl_add(split_ctx, a, a, &y));
    cr_assert_eq(atomic_load(&hook_calls), before, "64 elements are not worth a split");
    OK(tl_context_set_executor(split_ctx, NULL));
    const int64_t big[2] = {R, C};
    OK(tl_tensor_ones(split_ctx, TL_F32, 2, big, &a));
    OK(tl_exp(split_ctx, a, &y));
    cr_assert_eq(atomic_load(&hook_calls), before, "a cleared executor is not called");
    tl_executor no_function = {NULL, NULL};
    OK(tl_context_set_executor(split_ctx, &no_function)); /* an executor without parallel_for clears it too */
    OK(tl_exp(split_ctx, a, &y));
    cr_assert_eq(atomic_load(&hook_calls), before, "an executor without parallel_for is not called");
    FAILS_WITH(tl_set_blas_threads(0), TL_E_INVALID_ARGUMENT);
    OK(tl_set_blas_threads(1));
    cr_assert_eq(tl_blas_threads(), 1);
}

/* [rows, cols] of data in both contexts, or its transpose (a view of a [cols, rows] tensor). */
static void matrix_pair(tl_dtype dt, int64_t rows, int64_t cols, int transposed, unsigned seed, tl_tensor *a,
                        tl_tensor *b) {
    const int64_t stored[2] = {transposed ? cols : rows, transposed ? rows : cols};
    make_pair(dt, 2, stored, seed, a, b);
    if (!transposed) return;
    OK(tl_transpose(inline_ctx, *a, 0, 1, a));
    OK(tl_transpose(split_ctx, *b, 0, 1, b));
}

/* Element i of a [rows, cols] tensor read whole, as double. */
static double element(const unsigned char *data, tl_dtype dt, int64_t i) {
    return dt == TL_F64 ? ((const double *)data)[i] : (double)((const float *)data)[i];
}

/* Matrix-vector products (decode projections) are cut into row blocks for the executor: one-row
 * products against [k, n] (partial sums over k) and against a transposed [n, k] (rows of the
 * output), one-column products likewise, f32 and f64, sizes no multiple of the blocks.  Split is
 * bitwise inline, and inline is the product within float rounding of a double reference. */
/* A prompt's products with block-dtype weights (panels of sixteen weight rows where the CPU has
 * them, a panel of scratch for each range the split makes), and with f32 and f64 ones (BLAS calls
 * on fixed chunks of columns): bitwise the inline run, every dtype. */
Test(executor, prompt_products_with_stored_weights_split_bitwise) {
    OK(tl_set_blas_threads(1)); /* the executor takes BLAS work only while BLAS runs on one thread */
    const tl_dtype all[11] = {TL_Q8_0, TL_Q4_0, TL_Q5_0, TL_Q4_1, TL_Q5_1, TL_Q4_K, TL_Q5_K, TL_Q6_K, TL_F16, TL_F32, TL_F64};
    const int64_t sx[2] = {19, 512}, sw[2] = {1000, 512};
    for (int d = 0; d < 11; ++d) {
        const tl_dtype activations = all[d] == TL_F64 ? TL_F64 : TL_F32;
        tl_tensor x0, x1, w0, w1, y0, y1;
        make_pair(activations, 2, sx, 21, &x0, &x1);
        make_pair(activations, 2, sw, 22, &w0, &w1);
        if (all[d] != activations) {
            OK(tl_convert(inline_ctx, w0, all[d], &w0));
            OK(tl_convert(split_ctx, w1, all[d], &w1));
        }
        OK(tl_transpose(inline_ctx, w0, 0, 1, &w0));
        OK(tl_transpose(split_ctx, w1, 0, 1, &w1));
        const long before = atomic_load(&hook_calls);
        OK(tl_matmul(inline_ctx, x0, w0, &y0));
        OK(tl_matmul(split_ctx, x1, w1, &y1));
        cr_assert_gt(atomic_load(&hook_calls), before, "%s: the product went to the executor", tl_dtype_name(all[d]));
        same_bits(y0, y1, tl_dtype_name(all[d]));
    }
}

Test(executor, matrix_vector_products_split_bitwise_and_stay_right) {
    OK(tl_set_blas_threads(1));      /* the executor takes BLAS work only while BLAS runs on one thread */
    const int64_t K = 1000, N = 600; /* 2.4 MB in f32: several 512 KiB blocks */
    for (int t = 0; t < 2; ++t) {
        const tl_dtype dt = t ? TL_F64 : TL_F32;
        const size_t es = tl_dtype_size(dt);
        for (int shape = 0; shape < 4; ++shape) {
            const int one_row = shape < 2, transposed = shape & 1;
            tl_tensor v0, v1, m0, m1, y0, y1;
            const int64_t row[2] = {1, K}, col[2] = {K, 1};
            make_pair(dt, 2, one_row ? row : col, 11, &v0, &v1);
            if (one_row)
                matrix_pair(dt, K, N, transposed, 12, &m0, &m1); /* [1,K] x [K,N] */
            else
                matrix_pair(dt, N, K, transposed, 12, &m0, &m1); /* [N,K] x [K,1] */
            const long before = atomic_load(&hook_calls);
            if (one_row) {
                OK(tl_matmul(inline_ctx, v0, m0, &y0));
                OK(tl_matmul(split_ctx, v1, m1, &y1));
            } else {
                OK(tl_matmul(inline_ctx, m0, v0, &y0));
                OK(tl_matmul(split_ctx, m1, v1, &y1));
            }
            cr_assert_gt(atomic_load(&hook_calls), before, "shape %d: the product went to the executor", shape);
            same_bits(y0, y1, one_row ? "one-row matmul" : "one-column matmul");
            /* against a double reference, from the operands as stored */
            unsigned char *vb = malloc((size_t)K * es), *mb = malloc((size_t)K * N * es), *yb = malloc((size_t)N * es);
            OK(tl_tensor_read(inline_ctx, v0, vb, (size_t)K * es));
            tl_tensor mc;
            OK(tl_contiguous(inline_ctx, m0, &mc)); /* the matrix in its logical layout */
            OK(tl_tensor_read(inline_ctx, mc, mb, (size_t)K * N * es));
            OK(tl_tensor_read(inline_ctx, y0, yb, (size_t)N * es));
            const double eps = dt == TL_F64 ? 1e-15 : 1e-6;
            for (int64_t j = 0; j < N; ++j) {
                double ref = 0, mag = 0;
                for (int64_t i = 0; i < K; ++i) {
                    const double p = element(vb, dt, i) * element(mb, dt, one_row ? i * N + j : j * K + i);
                    ref += p, mag += fabs(p);
                }
                cr_assert_leq(fabs(element(yb, dt, j) - ref), 8 * eps * mag + 1e-300,
                              "shape %d, %s: output %lld is %g, not %g", shape, t ? "f64" : "f32", (long long)j,
                              element(yb, dt, j), ref);
            }
            free(vb), free(mb), free(yb);
        }
    }
}

/* While OpenBLAS runs on threads of its own, a product that calls BLAS is not cut for the executor
 * (OpenBLAS's pool is not for calls from several threads at once): one BLAS call for the whole,
 * the same bits in a context with an executor as in one without. */
Test(executor, blas_on_its_own_threads_keeps_products_whole) {
    NEEDS_THREADS(); /* OpenBLAS's second thread */
    OK(tl_set_blas_threads(2));
    if (tl_blas_threads() == 1) /* an OpenBLAS built for one thread (the Windows cross build's) */
        cr_skip_test("this OpenBLAS runs on one thread only (tl_set_blas_threads(2) left it at 1)");
    const int64_t sx[2] = {19, 512}, sv[2] = {1, 512}, sw[2] = {512, 1000};
    const int64_t *activations[2] = {sx, sv}; /* a prompt's rows and a decode's one row */
    for (int a = 0; a < 2; ++a) {
        tl_tensor x0, x1, w0, w1, y0, y1;
        make_pair(TL_F32, 2, activations[a], 31, &x0, &x1);
        make_pair(TL_F32, 2, sw, 32, &w0, &w1);
        const long before = atomic_load(&hook_calls);
        OK(tl_matmul(inline_ctx, x0, w0, &y0));
        OK(tl_matmul(split_ctx, x1, w1, &y1));
        cr_assert_eq(atomic_load(&hook_calls), before, "%s: the executor was not called",
                     a ? "one row" : "19 rows");
        same_bits(y0, y1, a ? "one-row matmul, BLAS on 2 threads" : "prompt matmul, BLAS on 2 threads");
    }
    OK(tl_set_blas_threads(1));
}
