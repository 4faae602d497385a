/* Inputs the fuzzer (tests/fuzz) found to crash or trip UBSan, kept as tests.  Each was an
 * empty tensor (a zero dim) whose other dims are huge: its element count is 0, but products of
 * its dims and strides overflow, and loops over "the other dims" would be astronomically long. */
#include <stdint.h>

#include "common.h"

CONTEXT_SUITE(regressions);

static const int64_t H = INT64_MAX / 3;

/* fuzz crash-27994ee3: contiguous strides of [H, H, 0] overflowed while filling nothing. */
Test(regressions, full_of_an_empty_tensor_with_huge_dims) {
    const int64_t shape[3] = {H, H, 0};
    tl_tensor t;
    OK(tl_tensor_full(ctx, TL_F32, 3, shape, 1.0, &t));
    tl_tensor_info info = TL_TENSOR_INFO_INIT;
    OK(tl_tensor_info_get(ctx, t, &info));
    cr_assert_eq(info.shape[0], H);
    OK(tl_tensor_read(ctx, t, NULL, 0));
    OK(tl_exp(ctx, t, &t));
}

/* fuzz crash-8c2bf8c6: softmax over the empty axis of [H, 0] walked H outer positions. */
Test(regressions, softmax_and_norms_over_an_empty_axis, .timeout = 10) {
    const int64_t shape[2] = {H, 0};
    tl_tensor t, y;
    OK(tl_tensor_zeros(ctx, TL_F64, 2, shape, &t));
    OK(tl_softmax(ctx, t, 1, &y));
    OK(tl_softmax(ctx, t, 0, &y));
    OK(tl_rmsnorm(ctx, t, (tl_tensor){0}, 1e-5, &y));
    OK(tl_layernorm(ctx, t, (tl_tensor){0}, (tl_tensor){0}, 1e-5, &y));
    FAILS_WITH(tl_sum(ctx, t, 1, 0, &y), TL_E_OUT_OF_MEMORY); /* a real [H] result: refused */
}

/* fuzz crash-4fb1ac08: concat and slice offsets of empty results multiplied huge strides. */
Test(regressions, concat_and_slice_of_empty_tensors_with_huge_dims) {
    const int64_t shape[3] = {0, H, 2};
    tl_tensor t, y;
    OK(tl_tensor_zeros(ctx, TL_F64, 3, shape, &t));
    tl_tensor parts[2] = {t, t};
    OK(tl_concat(ctx, 2, parts, 2, &y));
    OK(tl_slice(ctx, t, 1, H - 1, 1, &y));
    OK(tl_slice(ctx, t, 2, 1, 1, &y));
    OK(tl_contiguous(ctx, y, &y));
}

/* fuzz (long run) crash-a091fabb: gather_rows with no ids from an empty table whose rows are
 * huge ([0, H]) computed the rows' byte size (H * 4, overflowing) for a result that is empty;
 * likewise a table of empty rows. */
Test(regressions, gather_rows_of_empty_rows_with_huge_dims) {
    const int64_t table_shape[3] = {4, H, 0}, ids_shape[1] = {2};
    const int32_t ids[2] = {3, 1};
    tl_tensor table, idx, y;
    OK(tl_tensor_zeros(ctx, TL_F32, 3, table_shape, &table));
    OK(tl_tensor_from_data(ctx, TL_I32, 1, ids_shape, ids, sizeof ids, &idx));
    OK(tl_gather_rows(ctx, table, idx, &y));
    tl_tensor_info info = TL_TENSOR_INFO_INIT;
    OK(tl_tensor_info_get(ctx, y, &info));
    cr_assert_eq(info.ndim, 3);
    cr_assert_eq(info.shape[1], H);
    const int64_t empty_table[2] = {0, H}, no_ids[1] = {0};
    OK(tl_tensor_zeros(ctx, TL_F32, 2, empty_table, &table));
    OK(tl_tensor_zeros(ctx, TL_I32, 1, no_ids, &idx));
    OK(tl_gather_rows(ctx, table, idx, &y));
}

/* fuzz (ten-million run of fuzz_gguf) crash-3af6cead: a GGUF tensor of a block dtype whose bytes
 * fit int64 while its elements do not (q4_0 keeps 32 in 18 bytes) counted its elements with a
 * signed overflow; every such shape is refused, its bytes or its elements too many. */
Test(regressions, block_dtype_shapes_whose_elements_overflow) {
    const tl_dtype blocks[4] = {TL_Q4_0, TL_Q4_K, TL_Q5_K, TL_Q6_K};
    for (int i = 0; i < 4; ++i) {
        int64_t per;
        size_t bytes;
        OK(tl_dtype_block(blocks[i], &per, &bytes));
        const int64_t shape[2] = {INT64_MAX / (int64_t)bytes, per}; /* bytes fit, elements (per > bytes) do not */
        tl_tensor t;
        static unsigned char data[256];
        FAILS_WITH(tl_tensor_wrap(ctx, blocks[i], 2, shape, data, sizeof data, &t), TL_E_OUT_OF_MEMORY);
        cr_assert(strstr(tl_last_error(), "overflows"), "%s: %s", tl_dtype_name(blocks[i]), tl_last_error());
    }
}

/* Found by the coverage list (an untaken branch of require_rows): the transpose of a one-row
 * q8_0 tensor, [32, 1], passed as rows of one element, each read from its block's start, so
 * tl_convert gave the first value 32 times with TL_OK and gather_rows others.  A block dtype's
 * view is read along its stored rows or refused; an f16 transpose still converts element by
 * element. */
Test(regressions, a_transposed_block_row_is_refused_not_misread) {
    float v[32];
    for (int i = 0; i < 32; ++i) v[i] = (float)i * 0.5f - 3;
    const int64_t row[2] = {1, 32}, one[1] = {1};
    const int32_t id = 3;
    tl_tensor f, stored, column, ids, out;
    OK(tl_tensor_from_data(ctx, TL_F32, 2, row, v, sizeof v, &f));
    OK(tl_tensor_from_data(ctx, TL_I32, 1, one, &id, sizeof id, &ids));
    for (int dt = 0; dt < 2; ++dt) {
        OK(tl_convert(ctx, f, dt ? TL_F16 : TL_Q8_0, &stored));
        OK(tl_transpose(ctx, stored, 0, 1, &column));
        if (dt == 0) {
            REFUSED_WITH(tl_convert(ctx, column, TL_F32, &out), TL_E_SHAPE, "convert: a q8_0 tensor is read along its stored rows");
            REFUSED_WITH(tl_gather_rows(ctx, column, ids, &out), TL_E_SHAPE, "gather_rows: a q8_0 tensor is read along");
            continue;
        }
        float got[32];
        OK(tl_convert(ctx, column, TL_F32, &out));
        OK(tl_tensor_read(ctx, out, got, sizeof got));
        for (int i = 0; i < 32; ++i) cr_assert_eq(got[i], v[i], "f16 column element %d", i); /* halves of small ints: exact */
        OK(tl_gather_rows(ctx, column, ids, &out));
        OK(tl_tensor_read(ctx, out, got, 4));
        cr_assert_eq(got[0], v[3]);
    }
}

/* fuzz_api (2026-12-07, built at 2d3273a; UBSan): an activation of no elements whose leading
 * dims multiply past int64 ([huge, huge, 0]) against a stored weight overflowed counting its
 * rows. Now an empty result where the weight has no rows, and a refusal where the result's
 * elements cannot be counted (f16 and q8_0 weights of k 0). */
Test(regressions, stored_weight_products_of_empty_rows_with_huge_dims) {
    const int64_t huge = INT64_C(3074457345618258602), a_shape[3] = {huge, huge, 0};
    const int64_t no_rows[2] = {0, 0}, one_row[2] = {1, 0};
    const tl_dtype kinds[2] = {TL_F16, TL_Q8_0};
    tl_tensor a, w0, w1, stored, t, out;
    OK(tl_tensor_from_data(ctx, TL_F32, 3, a_shape, NULL, 0, &a));
    OK(tl_tensor_from_data(ctx, TL_F32, 2, no_rows, NULL, 0, &w0));
    OK(tl_tensor_from_data(ctx, TL_F32, 2, one_row, NULL, 0, &w1));
    for (int i = 0; i < 2; ++i) {
        OK(tl_convert(ctx, w0, kinds[i], &stored));
        OK(tl_transpose(ctx, stored, 0, 1, &t));
        OK(tl_matmul(ctx, a, t, &out));
        tl_tensor_info info = TL_TENSOR_INFO_INIT;
        OK(tl_tensor_info_get(ctx, out, &info));
        cr_assert(info.ndim == 3 && info.shape[0] == huge && info.shape[1] == huge && info.shape[2] == 0);
        OK(tl_convert(ctx, w1, kinds[i], &stored));
        OK(tl_transpose(ctx, stored, 0, 1, &t));
        out.bits = 7;
        REFUSED_WITH(tl_matmul(ctx, a, t, &out), TL_E_OUT_OF_MEMORY, "element count overflows");
        cr_assert_eq(out.bits, 7);
    }
}
