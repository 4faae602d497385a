/* Shapes at the edges: each shape rule of attention, RoPE, matmul, slice, reshape, concat and
 * convert refuses its own case with a message naming it, and a dim of 0 anywhere gives an empty
 * result, never a refusal or a read (the header's promise: misuse is a status, an empty tensor
 * is a tensor).  Shape rules with more than one way to break are each broken alone. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "common.h"

CONTEXT_SUITE(shapes);

static tl_tensor ones(tl_dtype dt, int ndim, const int64_t *shape) {
    tl_tensor t;
    OK(tl_tensor_ones(ctx, dt, ndim, shape, &t));
    return t;
}

static tl_tensor ones3(int64_t a, int64_t b, int64_t c) {
    const int64_t s[3] = {a, b, c};
    return ones(TL_F32, 3, s);
}

static int64_t elements_of(tl_tensor t) {
    tl_tensor_info info = TL_TENSOR_INFO_INIT;
    OK(tl_tensor_info_get(ctx, t, &info));
    int64_t n = 1;
    for (int d = 0; d < info.ndim; ++d) n *= info.shape[d];
    return n;
}

Test(shapes, attention_refuses_each_mismatch_alone) {
    const tl_tensor q = ones3(4, 1, 8), k = ones3(2, 5, 8);
    const int64_t flat[2] = {4, 8};
    tl_tensor out;
    REFUSED_WITH(tl_attention(ctx, ones(TL_F32, 2, flat), k, k, 5, 1.0, &out), TL_E_SHAPE, "not 2-D, 3-D, 3-D");
    REFUSED_WITH(tl_attention(ctx, q, ones(TL_F32, 2, flat), k, 5, 1.0, &out), TL_E_SHAPE, "not 3-D, 2-D, 3-D");
    REFUSED_WITH(tl_attention(ctx, q, k, ones(TL_F32, 2, flat), 5, 1.0, &out), TL_E_SHAPE, "not 3-D, 3-D, 2-D");
    const struct {
        tl_tensor k, v;
        const char *why;
    } mismatched[] = {
        {ones3(0, 5, 8), ones3(0, 5, 8), "no key heads"},
        {ones3(3, 5, 8), ones3(3, 5, 8), "key heads not a divisor of the query heads"},
        {k, ones3(1, 5, 8), "v's heads not k's"},
        {ones3(2, 5, 4), ones3(2, 5, 8), "k's head size not q's"},
        {k, ones3(2, 5, 4), "v's head size not q's"},
        {k, ones3(2, 4, 8), "v's rows not k's"},
    };
    for (size_t i = 0; i < sizeof mismatched / sizeof mismatched[0]; ++i) {
        FAILS_WITH(tl_attention(ctx, q, mismatched[i].k, mismatched[i].v, 4, 1.0, &out), TL_E_SHAPE);
        cr_assert(strstr(tl_last_error(), "do not match"), "%s: %s", mismatched[i].why, tl_last_error());
    }
    REFUSED_WITH(tl_attention(ctx, q, k, k, 1, INFINITY, &out), TL_E_INVALID_ARGUMENT, "scale inf is not finite");
    REFUSED_WITH(tl_attention(ctx, q, ones3(2, 0, 8), ones3(2, 0, 8), 1, 1.0, &out), TL_E_SHAPE,
                 "1 valid rows for 1 queries over a cache of 0 rows");
}

Test(shapes, attention_over_empty_dims_is_empty) {
    tl_tensor out;
    OK(tl_attention(ctx, ones3(4, 0, 8), ones3(2, 0, 8), ones3(2, 0, 8), 0, 1.0, &out)); /* nothing cached yet */
    cr_assert_eq(elements_of(out), 0);
    OK(tl_attention(ctx, ones3(4, 0, 8), ones3(2, 5, 8), ones3(2, 5, 8), 3, 1.0, &out)); /* no queries */
    cr_assert_eq(elements_of(out), 0);
    OK(tl_attention(ctx, ones3(4, 2, 0), ones3(2, 5, 0), ones3(2, 5, 0), 5, 1.0, &out)); /* heads of size 0 */
    cr_assert_eq(elements_of(out), 0);
    OK(tl_attention(ctx, ones3(0, 2, 8), ones3(2, 5, 8), ones3(2, 5, 8), 5, 1.0, &out)); /* no query heads */
    cr_assert_eq(elements_of(out), 0);
}

Test(shapes, rope_refuses_a_scalar_and_an_infinite_theta_and_takes_empty_rows) {
    const int64_t pairs[2] = {3, 4}, none[2] = {0, 4};
    tl_tensor scalar, y;
    OK(tl_tensor_full(ctx, TL_F32, 0, NULL, 1.0, &scalar));
    REFUSED_WITH(tl_rope(ctx, scalar, 0, 10000.0, TL_ROPE_HALVES, &y), TL_E_SHAPE, "must be even (pairs), not 0");
    REFUSED_WITH(tl_rope(ctx, ones(TL_F32, 2, pairs), 0, INFINITY, TL_ROPE_HALVES, &y), TL_E_INVALID_ARGUMENT,
                 "theta inf is not positive");
    REFUSED_WITH(tl_rope(ctx, ones(TL_F32, 2, pairs), 0, NAN, TL_ROPE_HALVES, &y), TL_E_INVALID_ARGUMENT,
                 "is not positive");
    OK(tl_rope(ctx, ones(TL_F32, 2, none), 7, 10000.0, TL_ROPE_INTERLEAVED, &y));
    cr_assert_eq(elements_of(y), 0);
    /* A 1-D x is one row at the position: the bits of the same row as [1, d]. */
    const int64_t flat[1] = {8}, row[2] = {1, 8};
    const float v[8] = {0.5f, -1, 2, 0.25f, 3, -0.75f, 1, 4};
    tl_tensor x1, x2, y1, y2;
    OK(tl_tensor_from_data(ctx, TL_F32, 1, flat, v, sizeof v, &x1));
    OK(tl_tensor_from_data(ctx, TL_F32, 2, row, v, sizeof v, &x2));
    for (int mode = 0; mode < 2; ++mode) {
        float a[8], b[8];
        OK(tl_rope(ctx, x1, 5, 10000.0, mode ? TL_ROPE_HALVES : TL_ROPE_INTERLEAVED, &y1));
        OK(tl_rope(ctx, x2, 5, 10000.0, mode ? TL_ROPE_HALVES : TL_ROPE_INTERLEAVED, &y2));
        OK(tl_tensor_read(ctx, y1, a, sizeof a));
        OK(tl_tensor_read(ctx, y2, b, sizeof b));
        cr_assert(!memcmp(a, b, sizeof a) && a[0] != v[0], "mode %d", mode);
    }
}

Test(shapes, matmul_refuses_each_rank_and_dim_mismatch) {
    const int64_t v3[1] = {3}, m23[2] = {2, 3}, m34[2] = {3, 4}, m44[2] = {4, 4}, b234[3] = {2, 3, 4},
                  b334[3] = {3, 3, 4}, b223[3] = {2, 2, 3}, r4[4] = {1, 2, 3, 4};
    tl_tensor y;
    REFUSED_WITH(tl_matmul(ctx, ones(TL_F32, 1, v3), ones(TL_F32, 2, m34), &y), TL_E_SHAPE, "not 1-D x 2-D");
    REFUSED_WITH(tl_matmul(ctx, ones(TL_F32, 2, m23), ones(TL_F32, 1, v3), &y), TL_E_SHAPE, "not 2-D x 1-D");
    REFUSED_WITH(tl_matmul(ctx, ones(TL_F32, 4, r4), ones(TL_F32, 2, m44), &y), TL_E_SHAPE, "not 4-D x 2-D");
    REFUSED_WITH(tl_matmul(ctx, ones(TL_F32, 2, m23), ones(TL_F32, 3, b234), &y), TL_E_SHAPE, "not 2-D x 3-D");
    REFUSED_WITH(tl_matmul(ctx, ones(TL_F32, 3, b223), ones(TL_F32, 3, b334), &y), TL_E_SHAPE, "batch 2 x batch 3");
    REFUSED_WITH(tl_matmul(ctx, ones(TL_F32, 2, m23), ones(TL_F32, 2, m44), &y), TL_E_SHAPE,
                 "inner dims differ ([2,3] x [4,4])");
    /* A stored weight: q8_0 rows [n, k], used as their transpose. */
    const int64_t stored[2] = {4, 64}, acts[2] = {2, 64}, short_acts[2] = {2, 32}, one_row[2] = {1, 32};
    tl_tensor w, wt, w1;
    OK(tl_convert(ctx, ones(TL_F32, 2, stored), TL_Q8_0, &w));
    OK(tl_transpose(ctx, w, 0, 1, &wt));
    OK(tl_matmul(ctx, ones(TL_F32, 2, acts), wt, &y));
    REFUSED_WITH(tl_matmul(ctx, ones(TL_F32, 1, stored + 1), wt, &y), TL_E_SHAPE,
                 "a q8_0 weight is [k,n] against [...,m,k] activations, not 1-D x 2-D");
    REFUSED_WITH(tl_matmul(ctx, ones(TL_F32, 2, short_acts), wt, &y), TL_E_SHAPE, "inner dims differ ([2,32] x [64,4])");
    REFUSED_WITH(tl_matmul(ctx, ones(TL_F32, 2, acts), w, &y), TL_E_SHAPE, "inner dims differ ([2,64] x [4,64])");
    /* k = 1: the stride rule does not apply, the block rule does (a [1, 32] q8_0 weight as it lies). */
    OK(tl_convert(ctx, ones(TL_F32, 2, one_row), TL_Q8_0, &w1));
    const int64_t col[2] = {2, 1};
    REFUSED_WITH(tl_matmul(ctx, ones(TL_F32, 2, col), w1, &y), TL_E_SHAPE, "k 1 is not whole q8_0 blocks of 32");
    /* A weight not transposed: its k runs across rows. */
    const int64_t wide[2] = {64, 64};
    tl_tensor square;
    OK(tl_convert(ctx, ones(TL_F32, 2, wide), TL_Q8_0, &square));
    REFUSED_WITH(tl_matmul(ctx, ones(TL_F32, 2, acts), square, &y), TL_E_SHAPE, "this one's k has stride 64");
}

Test(shapes, matmul_over_empty_dims_is_empty_or_zero) {
    const int64_t a30[2] = {3, 0}, b05[2] = {0, 5}, a04[2] = {0, 4}, b45[2] = {4, 5}, batch0[3] = {0, 3, 4};
    tl_tensor y;
    OK(tl_matmul(ctx, ones(TL_F32, 2, a30), ones(TL_F32, 2, b05), &y)); /* k = 0: a sum of nothing */
    float got[15];
    OK(tl_tensor_read(ctx, y, got, sizeof got));
    for (int i = 0; i < 15; ++i) cr_assert_eq(got[i], 0.0f);
    OK(tl_matmul(ctx, ones(TL_F32, 2, a04), ones(TL_F32, 2, b45), &y));
    cr_assert_eq(elements_of(y), 0);
    OK(tl_matmul(ctx, ones(TL_F32, 3, batch0), ones(TL_F32, 2, b45), &y));
    cr_assert_eq(elements_of(y), 0);
    /* Stored weights of every block size: no activation rows, and no weight rows. */
    const tl_dtype stored[] = {TL_F16, TL_BF16, TL_Q8_0, TL_Q4_0, TL_Q4_K};
    for (size_t i = 0; i < sizeof stored / sizeof stored[0]; ++i) {
        const int64_t rows[2] = {8, 256}, no_rows[2] = {0, 256}, no_acts[2] = {0, 256}, acts[2] = {2, 256};
        tl_tensor w, wt, e, et;
        OK(tl_convert(ctx, ones(TL_F32, 2, rows), stored[i], &w));
        OK(tl_transpose(ctx, w, 0, 1, &wt));
        OK(tl_matmul(ctx, ones(TL_F32, 2, no_acts), wt, &y));
        cr_assert_eq(elements_of(y), 0, "%s", tl_dtype_name(stored[i]));
        OK(tl_convert(ctx, ones(TL_F32, 2, no_rows), stored[i], &e));
        OK(tl_transpose(ctx, e, 0, 1, &et));
        OK(tl_matmul(ctx, ones(TL_F32, 2, acts), et, &y));
        cr_assert_eq(elements_of(y), 0, "%s", tl_dtype_name(stored[i]));
        /* k = 0: weight rows of no elements, so every output is a sum of nothing. */
        const int64_t empty_rows[2] = {3, 0}, no_k[2] = {2, 0}, many[2] = {40, 0};
        for (int m = 0; m < 2; ++m) {
            tl_tensor k0;
            OK(tl_convert(ctx, ones(TL_F32, 2, empty_rows), stored[i], &e));
            OK(tl_transpose(ctx, e, 0, 1, &k0));
            OK(tl_matmul(ctx, ones(TL_F32, 2, m ? many : no_k), k0, &y));
            float zeros[120];
            const size_t count = m ? 120 : 6;
            memset(zeros, 0x7f, sizeof zeros);
            OK(tl_tensor_read(ctx, y, zeros, count * sizeof(float)));
            for (size_t j = 0; j < count; ++j) cr_assert_eq(zeros[j], 0.0f, "%s k 0, element %zu", tl_dtype_name(stored[i]), j);
        }
    }
}

/* Rows read as f32 from any layout: a scalar, an f32 transpose, an f16 and a bf16 transpose,
 * converted and gathered element by element. */
Test(shapes, convert_and_gather_read_any_element_layout) {
    tl_tensor scalar, y;
    OK(tl_tensor_full(ctx, TL_F32, 0, NULL, 2.5, &scalar));
    OK(tl_convert(ctx, scalar, TL_F16, &y));
    uint16_t h;
    OK(tl_tensor_read(ctx, y, &h, 2));
    cr_assert_eq(h, 0x4100, "2.5 as f16");
    const float v[6] = {1, 2, 3, 4, 5, 6}; /* [2, 3] */
    const int64_t s23[2] = {2, 3}, one[1] = {1};
    const int32_t id = 2;
    tl_tensor x, ids;
    OK(tl_tensor_from_data(ctx, TL_F32, 2, s23, v, sizeof v, &x));
    OK(tl_tensor_from_data(ctx, TL_I32, 1, one, &id, sizeof id, &ids));
    const tl_dtype dts[3] = {TL_F32, TL_F16, TL_BF16};
    for (int d = 0; d < 3; ++d) {
        tl_tensor stored, t, back, row;
        if (dts[d] == TL_F32) stored = x;
        else OK(tl_convert(ctx, x, dts[d], &stored));
        OK(tl_transpose(ctx, stored, 0, 1, &t)); /* [3, 2]: rows of stride 3 */
        float got[6], gathered[2];
        OK(tl_convert(ctx, t, dts[d] == TL_F32 ? TL_BF16 : TL_F32, &back));
        if (dts[d] == TL_F32) OK(tl_convert(ctx, back, TL_F32, &back));
        OK(tl_tensor_read(ctx, back, got, sizeof got));
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 2; ++j) cr_assert_eq(got[i * 2 + j], v[j * 3 + i], "%s [%d,%d]", tl_dtype_name(dts[d]), i, j);
        OK(tl_gather_rows(ctx, t, ids, &row));
        OK(tl_tensor_read(ctx, row, gathered, sizeof gathered));
        cr_assert(gathered[0] == 3 && gathered[1] == 6, "%s row 2: %g %g", tl_dtype_name(dts[d]), gathered[0], gathered[1]);
    }
}

Test(shapes, layout_rules_refuse_their_own_cases) {
    const int64_t rows[2] = {2, 64}, zero_dim[2] = {0, 6}, minus[2] = {-1, 0};
    tl_tensor q, v, r;
    OK(tl_convert(ctx, ones(TL_F32, 2, rows), TL_Q8_0, &q));
    REFUSED_WITH(tl_slice(ctx, q, 1, 16, 32, &v), TL_E_SHAPE, "keeps whole blocks of 32 along its stored rows, not [16, +32)");
    REFUSED_WITH(tl_slice(ctx, q, 1, 0, 48, &v), TL_E_SHAPE, "not [0, +48)");
    OK(tl_slice(ctx, q, 1, 32, 32, &v)); /* a whole block */
    OK(tl_slice(ctx, q, 0, 1, 1, &v));   /* rows are free */
    const int64_t one_row[2] = {1, 32};
    tl_tensor single, column;
    OK(tl_convert(ctx, ones(TL_F32, 2, one_row), TL_Q8_0, &single));
    OK(tl_transpose(ctx, single, 0, 1, &column)); /* [32, 1]: a dim of length 1 along the blocks */
    OK(tl_slice(ctx, column, 1, 0, 1, &v));
    const tl_tensor empty = ones(TL_F32, 2, zero_dim);
    REFUSED_WITH(tl_reshape(ctx, empty, 2, minus, &r), TL_E_SHAPE, "0 elements do not fill the -1 dim");
    const int64_t fine[2] = {-1, 3};
    OK(tl_reshape(ctx, empty, 2, fine, &r));
    cr_assert_eq(elements_of(r), 0);
    REFUSED_WITH(tl_reshape(ctx, empty, TL_MAX_DIMS + 1, fine, &r), TL_E_INVALID_ARGUMENT, "is outside 0..");
    REFUSED_WITH(tl_reshape(ctx, empty, -1, fine, &r), TL_E_INVALID_ARGUMENT, "ndim -1 is outside");
    /* Two empty tensors whose axis lengths add past INT64_MAX. */
    const int64_t huge[2] = {INT64_MAX / 2 + 1, 0};
    tl_tensor pair[2];
    OK(tl_tensor_zeros(ctx, TL_F32, 2, huge, &pair[0]));
    OK(tl_tensor_zeros(ctx, TL_F32, 2, huge, &pair[1]));
    REFUSED_WITH(tl_concat(ctx, 2, pair, 0, &r), TL_E_SHAPE, "the axis length overflows");
    OK(tl_concat(ctx, 2, pair, 1, &r));
    cr_assert_eq(elements_of(r), 0);
}

Test(shapes, convert_takes_f32_to_itself_and_refuses_other_pairs) {
    const int64_t rows[2] = {2, 32}, none[2] = {0, 256};
    tl_tensor f, q, y;
    OK(tl_tensor_full(ctx, TL_F32, 2, rows, 0.375, &f));
    OK(tl_convert(ctx, f, TL_F32, &y));
    float got[64];
    OK(tl_tensor_read(ctx, y, got, sizeof got));
    for (int i = 0; i < 64; ++i) cr_assert_eq(got[i], 0.375f);
    OK(tl_convert(ctx, f, TL_Q8_0, &q));
    REFUSED_WITH(tl_convert(ctx, q, TL_F16, &y), TL_E_DTYPE, "convert: q8_0 to f16");
    REFUSED_WITH(tl_convert(ctx, q, TL_Q4_0, &y), TL_E_DTYPE, "convert: q8_0 to q4_0");
    REFUSED_WITH(tl_convert(ctx, ones(TL_F64, 2, rows), TL_F16, &y), TL_E_DTYPE, "convert: f64 to f16");
    for (int to = 0; to < 2; ++to) {
        OK(tl_convert(ctx, ones(TL_F32, 2, none), to ? TL_Q4_K : TL_BF16, &y));
        cr_assert_eq(elements_of(y), 0);
    }
}

/* A new tensor's shape: each reason it is refused, one message each. */
Test(shapes, new_tensor_shapes_are_refused_by_reason) {
    tl_tensor t;
    const int64_t negative[2] = {2, -3}, nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1}, odd_row[2] = {2, 48};
    REFUSED_WITH(tl_tensor_zeros(ctx, (tl_dtype)999, 1, negative, &t), TL_E_INVALID_ARGUMENT, "dtype 999 is no dtype");
    REFUSED_WITH(tl_tensor_zeros(ctx, TL_F32, 2, NULL, &t), TL_E_INVALID_ARGUMENT, "shape is NULL");
    REFUSED_WITH(tl_tensor_zeros(ctx, TL_F32, 9, nine, &t), TL_E_INVALID_ARGUMENT, "ndim 9 is outside 0..8");
    REFUSED_WITH(tl_tensor_zeros(ctx, TL_F32, -1, nine, &t), TL_E_INVALID_ARGUMENT, "ndim -1 is outside 0..8");
    REFUSED_WITH(tl_tensor_zeros(ctx, TL_F32, 2, negative, &t), TL_E_INVALID_ARGUMENT, "dim 1 is negative (-3)");
    static unsigned char data[512]; /* block dtypes come wrapped or converted, never zeroed */
    REFUSED_WITH(tl_tensor_wrap(ctx, TL_Q8_0, 0, NULL, data, sizeof data, &t), TL_E_SHAPE, "a 0-D shape whose last dim is 0");
    REFUSED_WITH(tl_tensor_wrap(ctx, TL_Q4_K, 2, odd_row, data, sizeof data, &t), TL_E_SHAPE,
                 "q4_k stores blocks of 256 along the last dim");
    /* Counts past int64: the elements, the bytes of f32 (elements fit), the bytes of q8_0's
     * blocks (34 bytes for 32 elements: elements fit, bytes do not). */
    const int64_t elements[2] = {INT64_C(1) << 32, INT64_C(1) << 32}, f32_bytes[1] = {INT64_C(1) << 62},
                  q8_bytes[1] = {INT64_MAX / 32 * 32};
    REFUSED_WITH(tl_tensor_zeros(ctx, TL_F32, 2, elements, &t), TL_E_OUT_OF_MEMORY, "element count overflows");
    REFUSED_WITH(tl_tensor_zeros(ctx, TL_F32, 1, f32_bytes, &t), TL_E_OUT_OF_MEMORY, "byte or element count overflows");
    REFUSED_WITH(tl_tensor_wrap(ctx, TL_Q8_0, 1, q8_bytes, data, sizeof data, &t), TL_E_OUT_OF_MEMORY, "byte or element count overflows");
    OK(tl_tensor_zeros(ctx, TL_F32, 0, NULL, &t)); /* a scalar needs no shape */
    cr_assert_eq(elements_of(t), 1);
    /* Empty stored rows of a block dtype hold no block to split: any slice of them is whole. */
    const int64_t empty_rows[2] = {2, 0};
    tl_tensor ef, eq, es;
    OK(tl_tensor_zeros(ctx, TL_F32, 2, empty_rows, &ef));
    OK(tl_convert(ctx, ef, TL_Q8_0, &eq));
    OK(tl_slice(ctx, eq, 1, 0, 0, &es));
    tl_tensor_info info = TL_TENSOR_INFO_INIT;
    OK(tl_tensor_info_get(ctx, es, &info));
    cr_assert(info.dtype == TL_Q8_0 && info.ndim == 2 && info.shape[0] == 2 && info.shape[1] == 0);
    REFUSED_WITH(tl_slice(ctx, eq, 1, 0, 1, &es), TL_E_SHAPE, "outside axis 1 of length 0");
}
