/* The storage dtypes (f16, bf16, q8_0, q4_0): blocks bit for bit as GGUF stores them, ggml's
 * reference rounding, products and row gathers that read weights as they are stored (at any
 * offset, in any storage, inline or split), and every other op refusing them by name.  The
 * references here decode the bit layouts themselves (tl_tensor.h's description), independent
 * of the library's code. */
#include <math.h>
#include <stdint.h>

#include "common.h"

CONTEXT_SUITE(quant);

/* IEEE half to float by its bit layout (exact in double). */
static float half_ref(uint16_t h) {
    const int sign = h >> 15, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
    double v = exponent == 0 ? ldexp(mantissa, -24) : ldexp(1024 + mantissa, exponent - 25);
    return (float)(sign ? -v : v); /* the scales here are finite */
}

/* One row of n elements of a block dtype, decoded by the layout: Q8_0 [f16 d][32 x int8],
 * Q4_0 [f16 d][16 bytes: element j low nibble, j + 16 high nibble], value (q - 8) d. */
static void decode_row(tl_dtype dt, const unsigned char *row, float *out, int n) {
    const int bytes = dt == TL_Q8_0 ? 34 : 18;
    for (int b = 0; b < n / 32; ++b, row += bytes) {
        const float d = half_ref((uint16_t)(row[0] | row[1] << 8));
        for (int j = 0; j < 32; ++j) {
            if (dt == TL_Q8_0)
                out[b * 32 + j] = (float)(int8_t)row[2 + j] * d;
            else {
                const int q = j < 16 ? row[2 + j] & 0xf : row[2 + j - 16] >> 4;
                out[b * 32 + j] = (float)(q - 8) * d;
            }
        }
    }
}

static float lcg(unsigned *s) { return (float)((*s = *s * 1664525u + 1013904223u) >> 8) / 8388608.0f - 1.0f; }

Test(quant, blocks_are_the_gguf_layout_with_ggml_reference_rounding) {
    /* One block with hand-worked values: max |x| 127 makes d = 1 (f16 0x3c00) for q8_0, q = x. */
    float x[64];
    for (int j = 0; j < 64; ++j) x[j] = (float)(j % 2 ? -j : j) * (j < 32 ? 127.0f / 31.0f : 1.0f);
    const int64_t shape[2] = {2, 32};
    tl_tensor src, q8, q4, back;
    OK(tl_tensor_from_data(ctx, TL_F32, 2, shape, x, sizeof x, &src));
    OK(tl_convert(ctx, src, TL_Q8_0, &q8));
    unsigned char bytes8[68];
    OK(tl_tensor_read(ctx, q8, bytes8, sizeof bytes8));
    /* Block 1: values 32, -33, ..., -63: d = 63/127 (as f16), q = round(x * 127/63) = -127 at -63. */
    const float d1 = half_ref((uint16_t)(bytes8[34] | bytes8[35] << 8));
    cr_assert(fabsf(d1 - 63.0f / 127.0f) < 1e-3f, "q8_0 scale %g", d1);
    cr_assert_eq((int8_t)bytes8[34 + 2 + 31], -127, "the largest magnitude maps to -127");
    float dec[64];
    decode_row(TL_Q8_0, bytes8, dec, 64);
    const float d0 = half_ref((uint16_t)(bytes8[0] | bytes8[1] << 8));
    cr_assert_eq(d0, 1.0f, "block 0's largest magnitude is 127: scale 1");
    for (int j = 0; j < 64; ++j) /* half a step of the block's scale, plus the scale's own f16 rounding */
        cr_assert(fabsf(dec[j] - x[j]) <= (j < 32 ? d0 : d1) * 0.5f + 1e-3f * fabsf(x[j]), "q8_0 %d", j);
    /* The library's own dequantization is the layout's, exactly. */
    OK(tl_convert(ctx, q8, TL_F32, &back));
    float got[64];
    OK(tl_tensor_read(ctx, back, got, sizeof got));
    cr_assert(memcmp(got, dec, sizeof got) == 0, "q8_0 dequantization differs from the bit layout");
    /* Q4_0: d = (value of largest magnitude) / -8; nibbles min(15, trunc(x/d + 8.5)). */
    OK(tl_convert(ctx, src, TL_Q4_0, &q4));
    unsigned char bytes4[36];
    OK(tl_tensor_read(ctx, q4, bytes4, sizeof bytes4));
    decode_row(TL_Q4_0, bytes4, dec, 64);
    OK(tl_convert(ctx, q4, TL_F32, &back));
    OK(tl_tensor_read(ctx, back, got, sizeof got));
    cr_assert(memcmp(got, dec, sizeof got) == 0, "q4_0 dequantization differs from the bit layout");
    const float d4 = half_ref((uint16_t)(bytes4[18] | bytes4[19] << 8));
    cr_assert_eq(d4, 63.0f / 8.0f, "q4_0 scale: the value of largest magnitude (-63) over -8");
    /* ggml's rule, restated: nibble min(15, trunc(x / d + 8.5)) with d in f32, value (q - 8) * f16(d);
     * positive values past 7d clip (the range is [-8d, 7d]). */
    const float id4 = 1.0f / (-63.0f / -8.0f);
    for (int j = 32; j < 64; ++j) {
        int q = (int)(int8_t)(x[j] * id4 + 8.5f);
        if (q > 15) q = 15;
        cr_assert_eq(dec[j], (float)(q - 8) * d4, "q4_0 %d: %g, want %g", j, dec[j], (float)(q - 8) * d4);
    }
    /* An all-zero block: scale 0, every value 0. */
    float zeros[32] = {0};
    const int64_t one[1] = {32};
    OK(tl_tensor_from_data(ctx, TL_F32, 1, one, zeros, sizeof zeros, &src));
    OK(tl_convert(ctx, src, TL_Q8_0, &q8));
    OK(tl_tensor_read(ctx, q8, bytes8, 34));
    for (int j = 0; j < 34; ++j) cr_assert_eq(bytes8[j], 0);
}

Test(quant, shapes_take_whole_blocks) {
    float x[40] = {0};
    const int64_t odd[2] = {1, 40}, even[2] = {1, 32};
    tl_tensor src, q;
    OK(tl_tensor_from_data(ctx, TL_F32, 2, odd, x, sizeof x, &src));
    FAILS_WITH(tl_convert(ctx, src, TL_Q8_0, &q), TL_E_SHAPE);
    cr_assert(strstr(tl_last_error(), "blocks of 32"), "%s", tl_last_error());
    FAILS_WITH(tl_tensor_from_data(ctx, TL_Q4_0, 2, odd, x, 18, &q), TL_E_SHAPE);
    unsigned char raw[34] = {0};
    FAILS_WITH(tl_tensor_from_data(ctx, TL_Q8_0, 2, even, raw, 33, &q), TL_E_INVALID_ARGUMENT); /* 34 bytes a block */
    OK(tl_tensor_from_data(ctx, TL_Q8_0, 2, even, raw, 34, &q));
    int64_t elems;
    size_t bytes;
    OK(tl_dtype_block(TL_Q4_0, &elems, &bytes));
    cr_assert(elems == 32 && bytes == 18);
    OK(tl_dtype_block(TL_BF16, &elems, &bytes));
    cr_assert(elems == 1 && bytes == 2);
    cr_assert_eq(tl_dtype_size(TL_Q8_0), 0, "no per-element size for a block dtype");
    cr_assert_str_eq(tl_dtype_name(TL_Q4_0), "q4_0");
}

/* Every op that computes on elements refuses each storage dtype, naming the op and the dtype. */
Test(quant, every_other_op_refuses_the_storage_dtypes_by_name) {
    const tl_dtype storage[10] = {TL_F16, TL_BF16, TL_Q8_0, TL_Q4_0, TL_Q4_1, TL_Q5_0, TL_Q5_1, TL_Q4_K, TL_Q5_K, TL_Q6_K};
    float x[512];
    for (int j = 0; j < 512; ++j) x[j] = (float)(j % 61);
    const int64_t shape[2] = {2, 256};
    tl_tensor f;
    OK(tl_tensor_from_data(ctx, TL_F32, 2, shape, x, sizeof x, &f));
    for (int i = 0; i < 10; ++i) {
        tl_tensor w, out = {7};
        OK(tl_convert(ctx, f, storage[i], &w));
        const char *name = tl_dtype_name(storage[i]);
#define REFUSED(call, what)                                                                           \
  do {                                                                                                \
    FAILS_WITH(call, TL_E_DTYPE);                                                                     \
    cr_assert(strstr(tl_last_error(), what) && strstr(tl_last_error(), name), "%s", tl_last_error()); \
    cr_assert_eq(out.bits, 7, "the output is untouched");                                             \
  } while (0)
        REFUSED(tl_add(ctx, w, w, &out), "add");
        REFUSED(tl_mul(ctx, w, w, &out), "mul");
        REFUSED(tl_sum(ctx, w, 0, 0, &out), "sum");
        REFUSED(tl_argmax(ctx, w, 1, &out), "argmax");
        REFUSED(tl_relu(ctx, w, &out), "relu");
        REFUSED(tl_exp(ctx, w, &out), "exp");
        REFUSED(tl_softmax(ctx, w, 1, &out), "softmax");
        REFUSED(tl_scale(ctx, w, 2.0, &out), "scale");
        REFUSED(tl_matmul(ctx, w, f, &out), "matmul"); /* a storage dtype as the activations */
        char *json = NULL;
        FAILS_WITH(tl_tensor_to_json(ctx, w, &json), TL_E_DTYPE);
        if (storage[i] != TL_F16 && storage[i] != TL_BF16) {
            REFUSED(tl_contiguous(ctx, w, &out), "contiguous");
            const int64_t flat[1] = {512};
            REFUSED(tl_reshape(ctx, w, 1, flat, &out), "reshape");
            tl_tensor z = {7};
            FAILS_WITH(tl_tensor_zeros(ctx, storage[i], 2, shape, &z), TL_E_DTYPE);
        }
#undef REFUSED
    }
}

/* y = x W^T with W [n, k] stored in each dtype, against the product over W's decoded values.
 * Against block weights the activations are quantized per block of 32 (max|x| / 127 a step):
 * each element may move by half a step, which the bound adds (the exact values: test_golden). */
static void check_product(tl_dtype dt, int64_t m, int64_t k, int64_t n, float tol) {
    unsigned seed = 7u + (unsigned)dt;
    float *w = malloc(sizeof(float) * (size_t)(n * k)), *xa = malloc(sizeof(float) * (size_t)(m * k));
    float *dec = malloc(sizeof(float) * (size_t)(n * k)), *y = malloc(sizeof(float) * (size_t)(m * n));
    for (int64_t i = 0; i < n * k; ++i) w[i] = lcg(&seed);
    for (int64_t i = 0; i < m * k; ++i) xa[i] = lcg(&seed);
    const int64_t ws[2] = {n, k}, xs[2] = {m, k};
    tl_tensor wf, wq, wt, x, out, back;
    OK(tl_tensor_from_data(ctx, TL_F32, 2, ws, w, sizeof(float) * (size_t)(n * k), &wf));
    OK(tl_convert(ctx, wf, dt, &wq));
    OK(tl_convert(ctx, wq, TL_F32, &back)); /* the decoded weights (exact: checked above) */
    OK(tl_tensor_read(ctx, back, dec, sizeof(float) * (size_t)(n * k)));
    OK(tl_transpose(ctx, wq, 0, 1, &wt));
    OK(tl_tensor_from_data(ctx, TL_F32, 2, xs, xa, sizeof(float) * (size_t)(m * k), &x));
    OK(tl_matmul(ctx, x, wt, &out));
    tl_tensor_info info = TL_TENSOR_INFO_INIT;
    OK(tl_tensor_info_get(ctx, out, &info));
    cr_assert(info.dtype == TL_F32 && info.shape[0] == m && info.shape[1] == n);
    OK(tl_tensor_read(ctx, out, y, sizeof(float) * (size_t)(m * n)));
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
            double want = 0, mag = 0, rounding = 0;
            for (int64_t t = 0; t < k; ++t) {
                want += (double)xa[i * k + t] * dec[j * k + t];
                mag += fabs((double)xa[i * k + t] * dec[j * k + t]);
            }
            /* Quantized activations (quant.h): per 32 for q8_0/q4_0/q5_0/q4_1/q5_1, scale amax / 127 as
             * f16 (its rounding adds amax / 2048 an element), and for q4_1/q5_1 the block's min times
             * q8_1's s, the 32 q times the scale as f16 (at most 32 amax, off by 1 / 2048 of it);
             * per 256 (q8_K) for the K formats. */
            const int super = dt == TL_Q4_K || dt == TL_Q5_K || dt == TL_Q6_K, mins = dt == TL_Q4_1 || dt == TL_Q5_1;
            const int64_t run = super ? 256 : 32;
            for (int64_t b = 0; b < k && dt != TL_F16 && dt != TL_BF16; b += run) {
                double amax = 0, wsum = 0, wmax = 0;
                for (int64_t t = b; t < b + run; ++t) {
                    amax = fmax(amax, fabs(xa[i * k + t]));
                    wsum += fabs(dec[j * k + t]);
                    wmax = fmax(wmax, fabs(dec[j * k + t]));
                }
                rounding += (amax / 127 / 2 + (super ? 0 : amax / 2048)) * wsum * (1 + 1e-6);
                if (mins) rounding += wmax * 32 * amax / 2048;
            }
            cr_assert(fabs(y[i * n + j] - want) <= tol * mag + rounding + 1e-6, "%s [%lld,%lld]: %g, want %g",
                      tl_dtype_name(dt), (long long)i, (long long)j, y[i * n + j], want);
        }
    free(w), free(xa), free(dec), free(y);
}

Test(quant, products_read_weights_as_stored) {
    const tl_dtype all[4] = {TL_F16, TL_BF16, TL_Q8_0, TL_Q4_0};
    for (int i = 0; i < 4; ++i) {
        check_product(all[i], 1, 64, 33, 1e-5f); /* decode: one row */
        check_product(all[i], 5, 96, 17, 1e-5f); /* prefill: a few rows */
        if (i < 2) check_product(all[i], 2, 77, 9, 1e-5f); /* f16/bf16: a tail of 13 past the 32s */
    }
    /* ggml's other block formats: q5_0 against q8_0's activations, q4_1 and q5_1 against q8_1's,
     * the K formats against q8_K's. */
    const tl_dtype more[6] = {TL_Q4_1, TL_Q5_0, TL_Q5_1, TL_Q4_K, TL_Q5_K, TL_Q6_K};
    for (int i = 0; i < 6; ++i) {
        check_product(more[i], 1, 512, 33, 1e-5f);
        check_product(more[i], 7, 768, 19, 1e-5f);
    }
    /* The stored layout is required: the weight untransposed is refused with the reason. */
    float w[64] = {0};
    const int64_t ws[2] = {2, 32}, xs[2] = {1, 2};
    tl_tensor wq, wf, x, out;
    OK(tl_tensor_from_data(ctx, TL_F32, 2, ws, w, sizeof w, &wf));
    OK(tl_convert(ctx, wf, TL_Q8_0, &wq));
    OK(tl_tensor_ones(ctx, TL_F32, 2, xs, &x));
    FAILS_WITH(tl_matmul(ctx, x, wq, &out), TL_E_SHAPE);
    /* ... also where k is whole blocks, so nothing else would refuse it. */
    float w2[64 * 64] = {0};
    const int64_t w2s[2] = {64, 64}, x2s[2] = {1, 64};
    OK(tl_tensor_from_data(ctx, TL_F32, 2, w2s, w2, sizeof w2, &wf));
    OK(tl_convert(ctx, wf, TL_Q8_0, &wq));
    OK(tl_tensor_ones(ctx, TL_F32, 2, x2s, &x));
    FAILS_WITH(tl_matmul(ctx, x, wq, &out), TL_E_SHAPE);
    cr_assert(strstr(tl_last_error(), "transpose"), "%s", tl_last_error());
}

/* Round to nearest even at exact ties, where rounding half up would differ: bf16 from
 * 0x3F818000 (half way between 0x3F81 and 0x3F82) is 0x3F82; f16 from 0x3F803000 (half way between
 * 0x3C01 and 0x3C02) is 0x3C02. */
/* The f16 or bf16 bits tl_convert makes of the f32 with these bits. */
static uint16_t converted_bits(tl_dtype to, uint32_t bits) {
    float v;
    memcpy(&v, &bits, 4);
    const int64_t one = 1;
    tl_tensor f, h;
    uint16_t got;
    OK(tl_tensor_from_data(ctx, TL_F32, 1, &one, &v, 4, &f));
    OK(tl_convert(ctx, f, to, &h));
    OK(tl_tensor_read(ctx, h, &got, 2));
    return got;
}

Test(quant, half_and_bfloat16_round_ties_to_even) {
    const uint32_t bits[2] = {0x3F818000u, 0x3F803000u};
    const tl_dtype to[2] = {TL_BF16, TL_F16};
    const uint16_t want[2] = {0x3F82, 0x3C02};
    for (int i = 0; i < 2; ++i) {
        const uint16_t got = converted_bits(to[i], bits[i]);
        cr_assert_eq(got, want[i], "%s of 0x%08x: 0x%04x, want 0x%04x", tl_dtype_name(to[i]), bits[i], got, want[i]);
    }
    /* NaNs stay NaN, quiet, sign kept: a signaling NaN whose payload is all in the low bits would
     * round to infinity if rounded as a number. */
    const uint32_t nans[3] = {0x7F800001u, 0xFFC00000u, 0x7FBFFFFFu};
    for (int i = 0; i < 3; ++i)
        for (int d = 0; d < 2; ++d) {
            const uint16_t got = converted_bits(to[d], nans[i]);
            const uint16_t exponent = to[d] == TL_BF16 ? 0x7F80 : 0x7C00, quiet = to[d] == TL_BF16 ? 0x40 : 0x200;
            cr_assert((got & exponent) == exponent && (got & quiet) && (got >> 15) == (nans[i] >> 31),
                      "%s of NaN 0x%08x: 0x%04x", tl_dtype_name(to[d]), nans[i], got);
        }
}

/* ggml's block layouts decoded by hand-worked blocks (ggml-common.h's structs). */
static void expect_decoded(tl_dtype dt, const unsigned char *block, size_t bytes, const float *want, int n) {
    const int64_t shape[2] = {1, n};
    tl_tensor q, f;
    float got[256];
    OK(tl_tensor_from_data(ctx, dt, 2, shape, block, bytes, &q));
    OK(tl_convert(ctx, q, TL_F32, &f));
    OK(tl_tensor_read(ctx, f, got, sizeof(float) * (size_t)n));
    for (int i = 0; i < n; ++i) cr_assert_eq(got[i], want[i], "%s element %d: %g, want %g", tl_dtype_name(dt), i, got[i], want[i]);
}

Test(quant, ggml_block_formats_decode_by_their_layout) {
    unsigned char b[210] = {0};
    float want[256];
    /* q4_1: f16 d 0.5, f16 m -1, nibbles j and 15 - j: x * d + m. */
    b[0] = 0x00, b[1] = 0x38, b[2] = 0x00, b[3] = 0xBC;
    for (int j = 0; j < 16; ++j) b[4 + j] = (unsigned char)(j | (15 - j) << 4), want[j] = j * 0.5f - 1, want[j + 16] = (15 - j) * 0.5f - 1;
    expect_decoded(TL_Q4_1, b, 20, want, 32);
    /* q5_0: f16 d 0.25, all 32 fifth bits set, nibbles j: (x - 16) d with x = nibble | 16. */
    memset(b, 0, sizeof b);
    b[0] = 0x00, b[1] = 0x34, b[2] = b[3] = b[4] = b[5] = 0xFF;
    for (int j = 0; j < 16; ++j) b[6 + j] = (unsigned char)(j | j << 4), want[j] = want[j + 16] = (float)j * 0.25f;
    expect_decoded(TL_Q5_0, b, 22, want, 32);
    /* q4_K: d 1, dmin 0.5, sub-block s has scale s + 1 and min s (6 bits, packed), every byte of
     * nibbles 0x21: the low-nibble sub-blocks read 1, the high ones 2. */
    memset(b, 0, sizeof b);
    b[0] = 0x00, b[1] = 0x3C, b[2] = 0x00, b[3] = 0x38;
    for (int s = 0; s < 8; ++s) {
        if (s < 4)
            b[4 + s] = (unsigned char)(s + 1), b[8 + s] = (unsigned char)s;
        else
            b[8 + s] = (unsigned char)(((s + 1) & 0xF) | ((s & 0xF) << 4));
    }
    memset(b + 16, 0x21, 128);
    for (int s = 0; s < 8; ++s)
        for (int l = 0; l < 32; ++l) want[32 * s + l] = 1.0f * (float)(s + 1) * (float)(s % 2 ? 2 : 1) - 0.5f * (float)s;
    expect_decoded(TL_Q4_K, b, 144, want, 256);
    /* q6_K: zero low and high bits (q = -32), int8 scales i - 8, f16 d 0.5 at the end. */
    memset(b, 0, sizeof b);
    for (int i = 0; i < 16; ++i) b[192 + i] = (unsigned char)(int8_t)(i - 8);
    b[208] = 0x00, b[209] = 0x38;
    for (int half = 0; half < 2; ++half)
        for (int l = 0; l < 32; ++l)
            for (int g = 0; g < 4; ++g) want[128 * half + 32 * g + l] = 0.5f * (float)(8 * half + l / 16 + 2 * g - 8) * -32.0f;
    expect_decoded(TL_Q6_K, b, 210, want, 256);
}

/* SKaiNET's bug, named: a quantized weight times an activation in a scope's slab at a nonzero
 * offset (and at offsets that move step to step) must give the bits of the same product on a
 * fresh ambient activation, inline and on an executor. */
typedef struct {
    int calls;
} reverse_exec;
static void reverse_parallel_for(void *user, int64_t count, int64_t grain, tl_task_fn task, void *task_user) {
    ((reverse_exec *)user)->calls++;
    if (grain < 1) grain = 1;
    for (int64_t end = count; end > 0; end -= grain) task(task_user, end - grain > 0 ? end - grain : 0, end);
}

Test(quant, quantized_weight_times_slab_activation_at_an_offset) {
    const int64_t k = 256, n = 512, ws[2] = {n, k}, xs[2] = {1, k};
    unsigned seed = 3;
    float *w = malloc(sizeof(float) * (size_t)(n * k)), x[256], ref[512], got[512];
    for (int64_t i = 0; i < n * k; ++i) w[i] = lcg(&seed);
    for (int i = 0; i < 256; ++i) x[i] = lcg(&seed);
    const tl_dtype all[4] = {TL_Q8_0, TL_Q4_0, TL_F16, TL_BF16};
    for (int d = 0; d < 4; ++d) {
        tl_tensor wf, wq, wt, xa, y;
        OK(tl_tensor_from_data(ctx, TL_F32, 2, ws, w, sizeof(float) * (size_t)(n * k), &wf));
        OK(tl_convert(ctx, wf, all[d], &wq));
        OK(tl_transpose(ctx, wq, 0, 1, &wt));
        OK(tl_tensor_from_data(ctx, TL_F32, 2, xs, x, sizeof x, &xa));
        OK(tl_matmul(ctx, xa, wt, &y));
        OK(tl_tensor_read(ctx, y, ref, sizeof ref));
        tl_scope s;
        OK(tl_scope_open(ctx, "step", 0, &s));
        reverse_exec ex = {0};
        const tl_executor hook = {&ex, reverse_parallel_for};
        for (int step = 0; step < 6; ++step) {
            OK(tl_context_set_executor(ctx, step % 2 ? &hook : NULL));
            tl_tensor pad, xs_slab, ys;
            const int64_t padn[1] = {1 + 13 * step}; /* moves the activation's offset every step */
            OK(tl_tensor_zeros(ctx, TL_F32, 1, padn, &pad));
            OK(tl_tensor_from_data(ctx, TL_F32, 2, xs, x, sizeof x, &xs_slab));
            tl_tensor_info info = TL_TENSOR_INFO_INIT;
            OK(tl_tensor_info_get(ctx, xs_slab, &info));
            cr_assert_gt(info.offset, 0, "the activation sits at a nonzero slab offset");
            OK(tl_matmul(ctx, xs_slab, wt, &ys));
            OK(tl_tensor_read(ctx, ys, got, sizeof got));
            cr_assert(memcmp(got, ref, sizeof got) == 0, "%s step %d: the slab product differs from ambient",
                      tl_dtype_name(all[d]), step);
            OK(tl_scope_reset(ctx, s));
        }
        cr_assert_gt(ex.calls, 0, "the executor took the product");
        OK(tl_context_set_executor(ctx, NULL));
        OK(tl_scope_close(ctx, s));
    }
    free(w);
}

Test(quant, embedding_rows_and_f16_caches) {
    /* gather_rows from a q8_0 table gives the decoded rows as f32. */
    float t[4 * 32];
    unsigned seed = 11;
    for (int i = 0; i < 128; ++i) t[i] = lcg(&seed);
    const int64_t ts[2] = {4, 32};
    tl_tensor tf, tq, ids, rows, dec;
    OK(tl_tensor_from_data(ctx, TL_F32, 2, ts, t, sizeof t, &tf));
    OK(tl_convert(ctx, tf, TL_Q8_0, &tq));
    OK(tl_convert(ctx, tq, TL_F32, &dec));
    const int32_t id[3] = {3, 0, 3};
    const int64_t is[1] = {3};
    OK(tl_tensor_from_data(ctx, TL_I32, 1, is, id, sizeof id, &ids));
    OK(tl_gather_rows(ctx, tq, ids, &rows));
    float got[96], all[128];
    OK(tl_tensor_read(ctx, rows, got, sizeof got));
    OK(tl_tensor_read(ctx, dec, all, sizeof all));
    for (int r = 0; r < 3; ++r) cr_assert(memcmp(got + r * 32, all + id[r] * 32, 128) == 0, "row %d", r);
    /* No ids: no rows, [0, 32]. */
    const int64_t none[1] = {0};
    tl_tensor no_ids, no_rows;
    OK(tl_tensor_zeros(ctx, TL_I32, 1, none, &no_ids));
    OK(tl_gather_rows(ctx, tq, no_ids, &no_rows));
    tl_tensor_info info = TL_TENSOR_INFO_INIT;
    OK(tl_tensor_info_get(ctx, no_rows, &info));
    cr_assert(info.dtype == TL_F32 && info.ndim == 2 && info.shape[0] == 0 && info.shape[1] == 32);
    /* A q8_0 view whose rows are not adjacent is refused as bytes, never split or gathered. */
    const int64_t s3[3] = {2, 2, 32};
    tl_tensor t3, q3, every_other;
    OK(tl_tensor_from_data(ctx, TL_F32, 3, s3, t, sizeof t, &t3));
    OK(tl_convert(ctx, t3, TL_Q8_0, &q3));
    OK(tl_slice(ctx, q3, 1, 0, 1, &every_other));
    unsigned char bytes[2 * 34] = {0}, untouched[2 * 34] = {0};
    REFUSED_WITH(tl_tensor_read(ctx, every_other, bytes, sizeof bytes), TL_E_SHAPE,
                 "read: a q8_0 view that is not contiguous");
    cr_assert(memcmp(bytes, untouched, sizeof bytes) == 0, "a refused read wrote");
    /* A q8_0 tensor retained into a scope: its bytes as they are; its view of rows apart refused. */
    tl_scope keep;
    OK(tl_scope_open(ctx, "keep", 0, &keep));
    tl_tensor kept, refused = {0};
    OK(tl_tensor_retain(ctx, q3, keep, &kept));
    unsigned char want_q[4 * 34], got_q[4 * 34];
    OK(tl_tensor_read(ctx, q3, want_q, sizeof want_q));
    OK(tl_tensor_read(ctx, kept, got_q, sizeof got_q));
    cr_assert(memcmp(want_q, got_q, sizeof got_q) == 0);
    REFUSED_WITH(tl_tensor_retain(ctx, every_other, keep, &refused), TL_E_SHAPE, "retain: a q8_0 view that is not contiguous");
    cr_assert_eq(refused.bits, 0);
    OK(tl_scope_close(ctx, keep));
    /* A q8_0 weight is 2-D: a 3-D one is refused as matmul's operand, by its dims. */
    const int64_t xs[2] = {1, 32};
    tl_tensor x, y = {0};
    OK(tl_tensor_ones(ctx, TL_F32, 2, xs, &x));
    REFUSED_WITH(tl_matmul(ctx, x, q3, &y), TL_E_SHAPE, "not 2-D x 3-D");
    cr_assert_eq(y.bits, 0);
    /* An f16 KV cache: copy_into converts f32 rows into it; a row reads back within half's rounding. */
    const int64_t cs[2] = {8, 32}, rs[2] = {1, 32};
    tl_tensor cache, row, slot, back;
    OK(tl_tensor_zeros(ctx, TL_F16, 2, cs, &cache));
    OK(tl_tensor_from_data(ctx, TL_F32, 2, rs, t, 128, &row));
    OK(tl_slice(ctx, cache, 0, 5, 1, &slot));
    OK(tl_copy_into(ctx, row, slot));
    OK(tl_convert(ctx, slot, TL_F32, &back));
    OK(tl_tensor_read(ctx, back, got, 128));
    for (int j = 0; j < 32; ++j) cr_assert(fabsf(got[j] - t[j]) <= fabsf(t[j]) * 0x1p-11f, "f16 cache %d", j);
    FAILS_WITH(tl_copy_into(ctx, back, tq), TL_E_DTYPE); /* not into a quantized tensor */
}

/* Against NumPy (tests/golden/make_golden.py restates ggml's rounding in NumPy's float32
 * arithmetic, one operation for one): every stored byte of f32 converted to q8_0, q4_0, f16 and
 * bf16, and products over q8_0/q4_0 weights within a bound of the exact decimal product. */
static void read_golden_i32(tl_safetensors_file *f, const char *name, int32_t *out, size_t n) {
    tl_tensor t;
    OK(tl_safetensors_get(ctx, f, name, &t));
    OK(tl_tensor_read(ctx, t, out, n * sizeof(int32_t)));
}

Test(quant, stored_bytes_and_products_match_numpy) {
    tl_safetensors_file *f;
    OK(tl_safetensors_open(ctx, TL_SOURCE_DIR "/tests/golden/golden.safetensors", &f));
    tl_tensor x;
    OK(tl_safetensors_get(ctx, f, "quant.x", &x));
    const struct {
        tl_dtype dt;
        const char *name;
        size_t bytes; /* of the whole [4, 64] tensor */
    } kinds[4] = {{TL_Q8_0, "quant.x.q8_0", 4 * 68},
                  {TL_Q4_0, "quant.x.q4_0", 4 * 36},
                  {TL_F16, "quant.x.f16", 4 * 128},
                  {TL_BF16, "quant.x.bf16", 4 * 128}};
    for (int k = 0; k < 4; ++k) {
        tl_tensor q;
        OK(tl_convert(ctx, x, kinds[k].dt, &q));
        unsigned char got[512];
        OK(tl_tensor_read(ctx, q, got, kinds[k].bytes));
        static int32_t want[512];
        const size_t items = kinds[k].dt == TL_F16 || kinds[k].dt == TL_BF16 ? kinds[k].bytes / 2 : kinds[k].bytes;
        read_golden_i32(f, kinds[k].name, want, items);
        for (size_t i = 0; i < items; ++i) {
            const int32_t g = items == kinds[k].bytes ? got[i] : (int32_t)(got[2 * i] | got[2 * i + 1] << 8);
            cr_assert_eq(g, want[i], "%s item %zu: %d, NumPy says %d", kinds[k].name, i, g, want[i]);
        }
    }
    tl_tensor act, w;
    OK(tl_safetensors_get(ctx, f, "quant.act", &act));
    OK(tl_safetensors_get(ctx, f, "quant.w", &w));
    const tl_dtype blocks[2] = {TL_Q8_0, TL_Q4_0};
    const char *wants[2] = {"quant.y.q8_0", "quant.y.q4_0"}, *bounds[2] = {"quant.bound.q8_0", "quant.bound.q4_0"};
    for (int k = 0; k < 2; ++k) {
        tl_tensor wq, wt, y, tw, tb;
        OK(tl_convert(ctx, w, blocks[k], &wq));
        OK(tl_transpose(ctx, wq, 0, 1, &wt));
        OK(tl_matmul(ctx, act, wt, &y));
        float got[15];
        double want[15], bound[15];
        OK(tl_tensor_read(ctx, y, got, sizeof got));
        OK(tl_safetensors_get(ctx, f, wants[k], &tw));
        OK(tl_safetensors_get(ctx, f, bounds[k], &tb));
        OK(tl_tensor_read(ctx, tw, want, sizeof want));
        OK(tl_tensor_read(ctx, tb, bound, sizeof bound));
        for (int i = 0; i < 15; ++i) /* k = 64 sums in f32: 2 (k + 1) eps |x||w| */
            cr_assert(fabs(got[i] - want[i]) <= 2 * 65 * 0x1p-23 * bound[i], "%s %d: %.9g, NumPy %.9g",
                      tl_dtype_name(blocks[k]), i, got[i], want[i]);
    }
    tl_safetensors_close(f);
}

/* Blocks at the edges of f32: values so small that 1 / (max|x| / 127) overflows, and blocks
 * holding an infinity or a NaN.  The tiny block still rounds to +-127 at its extremes (not a
 * cast of infinity); a non-finite weight block decodes as NaN and a non-finite activation block
 * makes its products NaN, never a finite number made of garbage. */
Test(quant, extreme_blocks_round_or_poison_cleanly) {
    float w[64], x[64], back[64];
    for (int i = 0; i < 64; ++i) w[i] = (float)(i - 32) * 1e-41f, x[i] = 1.0f; /* subnormals */
    w[0] = -4e-40f, w[63] = 4e-40f;                                            /* each block's largest magnitude */
    const int64_t ws[2] = {2, 32}, xs[2] = {1, 32};
    tl_tensor tw, q, b, tx, y, t;
    OK(tl_tensor_from_data(ctx, TL_F32, 2, ws, w, sizeof w, &tw));
    OK(tl_convert(ctx, tw, TL_Q8_0, &q));
    unsigned char raw[68];
    OK(tl_tensor_read(ctx, q, raw, sizeof raw));
    cr_assert(raw[2] == (unsigned char)-127 && raw[34 + 2 + 31] == 127, "the extremes round to -127 and 127: %d %d",
              (int8_t)raw[2], (int8_t)raw[34 + 2 + 31]);
    w[5] = INFINITY, w[40] = NAN;
    OK(tl_tensor_from_data(ctx, TL_F32, 2, ws, w, sizeof w, &tw));
    OK(tl_convert(ctx, tw, TL_Q8_0, &q));
    OK(tl_convert(ctx, q, TL_F32, &b));
    OK(tl_tensor_read(ctx, b, back, sizeof back));
    for (int i = 0; i < 64; ++i) cr_assert(isnan(back[i]), "element %d of a non-finite block: %g", i, back[i]);
    /* An activation block with an infinity against finite weights: NaN products. */
    for (int i = 0; i < 64; ++i) w[i] = 0.5f;
    OK(tl_tensor_from_data(ctx, TL_F32, 2, ws, w, sizeof w, &tw));
    OK(tl_convert(ctx, tw, TL_Q4_0, &q));
    OK(tl_transpose(ctx, q, 0, 1, &t));
    x[3] = INFINITY;
    OK(tl_tensor_from_data(ctx, TL_F32, 2, xs, x, 32 * sizeof(float), &tx));
    OK(tl_matmul(ctx, tx, t, &y));
    float out[2];
    OK(tl_tensor_read(ctx, y, out, sizeof out));
    cr_assert(isnan(out[0]) && isnan(out[1]), "%g %g", out[0], out[1]);
    /* Activations past f16's range (a step of 1e5 / 127, q8_1's sums near 3e6): the step and the
     * sums are kept in f32, so the products stay finite and near the exact ones, for the 32-blocks
     * that quantize activations per block. */
    const tl_dtype per_block[5] = {TL_Q8_0, TL_Q4_0, TL_Q5_0, TL_Q4_1, TL_Q5_1};
    for (int i = 0; i < 64; ++i) w[i] = 0.25f + (float)(i % 7) / 8, x[i] = 1e5f * (1.0f - (float)(i % 5) / 8);
    for (int d = 0; d < 5; ++d) {
        OK(tl_tensor_from_data(ctx, TL_F32, 2, ws, w, sizeof w, &tw));
        OK(tl_convert(ctx, tw, per_block[d], &q));
        OK(tl_convert(ctx, q, TL_F32, &b));
        OK(tl_tensor_read(ctx, b, back, sizeof back));
        OK(tl_transpose(ctx, q, 0, 1, &t));
        OK(tl_tensor_from_data(ctx, TL_F32, 2, xs, x, 32 * sizeof(float), &tx));
        OK(tl_matmul(ctx, tx, t, &y));
        OK(tl_tensor_read(ctx, y, out, sizeof out));
        for (int r = 0; r < 2; ++r) {
            double want = 0;
            for (int i = 0; i < 32; ++i) want += (double)x[i] * back[r * 32 + i];
            cr_assert(isfinite(out[r]) && fabs(out[r] - want) <= 0.01 * fabs(want), "%s row %d: %g, want %g",
                      tl_dtype_name(per_block[d]), r, out[r], want);
        }
    }
}

/* Degenerate rows in every block dtype: all zero comes back as zeros, a constant within an
 * eighth of itself (exactly where the block keeps its minimum: q4_1, q5_1), values too small for
 * any f16 scale as at most themselves, a row whose first 16 elements are zero within an eighth of
 * its largest (q6_K's group of 16 zeros exactly 0: its scale rounds to 0); against each such
 * weight, an all-zero activation row gives exactly 0, rows of tiny values (1e-30, and 1e-38,
 * whose step -127 / max overflows f32) a finite product near the exact one, and a row holding a
 * NaN NaN (the K-quants' own activation blocks included). */
Test(quant, degenerate_rows_in_every_block_dtype) {
    const tl_dtype all[] = {TL_Q8_0, TL_Q4_0, TL_Q4_1, TL_Q5_0, TL_Q5_1, TL_Q4_K, TL_Q5_K, TL_Q6_K};
    enum { K = 256, ROWS = 5, XS = 4 };
    static float w[ROWS * K], back[ROWS * K], x[XS * K];
    const float level[ROWS] = {0.0f, 1.5f, -2.0f, 1e-20f, 2.0f};
    for (int i = 0; i < K; ++i) {
        for (int r = 0; r < 3; ++r) w[r * K + i] = level[r];
        w[3 * K + i] = level[3] * (float)(i % 3 - 1);
        w[4 * K + i] = i < 16 ? 0.0f : 1.5f + 0.25f * (float)(i % 3);
        x[i] = 0.0f, x[K + i] = 1e-30f * (float)(i % 5 - 2), x[2 * K + i] = i == 77 ? NAN : 0.25f;
        x[3 * K + i] = 1e-38f * (float)(i % 5 - 2);
    }
    const int64_t ws[2] = {ROWS, K}, xs[2] = {XS, K};
    tl_tensor tw, tx, q, b, t, y;
    OK(tl_tensor_from_data(ctx, TL_F32, 2, ws, w, sizeof w, &tw));
    OK(tl_tensor_from_data(ctx, TL_F32, 2, xs, x, sizeof x, &tx));
    for (size_t d = 0; d < sizeof all / sizeof all[0]; ++d) {
        const char *name = tl_dtype_name(all[d]);
        const int keeps_min = all[d] == TL_Q4_1 || all[d] == TL_Q5_1;
        OK(tl_convert(ctx, tw, all[d], &q));
        OK(tl_convert(ctx, q, TL_F32, &b));
        OK(tl_tensor_read(ctx, b, back, sizeof back));
        for (int r = 0; r < ROWS; ++r)
            for (int i = 0; i < K; ++i) {
                const float want = w[r * K + i], got = back[r * K + i];
                const float reach = r == 0 || (r < 3 && keeps_min) || (r == 4 && i < 16 && all[d] == TL_Q6_K) ? 0.0f
                                    : r == 3                                                           ? fabsf(want)
                                                                                                       : fabsf(level[r]) / 8;
                cr_assert(fabsf(got - want) <= reach, "%s row %d element %d: %g back as %g", name, r, i, want, got);
            }
        OK(tl_transpose(ctx, q, 0, 1, &t));
        OK(tl_matmul(ctx, tx, t, &y));
        float out[XS * ROWS];
        OK(tl_tensor_read(ctx, y, out, sizeof out));
        for (int r = 0; r < ROWS; ++r) {
            cr_assert(out[r] == 0.0f, "%s: zero activations against row %d give %g", name, r, out[r]);
            for (int a = 1; a < XS; a += 2) { /* the two rows of tiny values */
                double exact = 0, size = 0;
                for (int i = 0; i < K; ++i)
                    exact += (double)back[r * K + i] * x[a * K + i], size += fabs((double)back[r * K + i] * x[a * K + i]);
                const float got = out[a * ROWS + r];
                cr_assert(isfinite(got) && fabs(got - exact) <= 0.02 * size + 1e-45,
                          "%s: tiny activations (row %d) against row %d give %g, exact %g", name, a, r, got, exact);
            }
            cr_assert(isnan(out[2 * ROWS + r]), "%s: a NaN activation against row %d gives %g", name, r, out[2 * ROWS + r]);
        }
    }
}

static void batch_rows_give_their_own_bits(const tl_dtype *all, int count, int M) {
    enum { M_MAX = 19, K = 512, N = 40 };
    static float w[N * K], x[M_MAX * K], batch[M_MAX * N], alone[N];
    unsigned seed = 99;
    for (int i = 0; i < N * K; ++i) w[i] = lcg(&seed);
    for (int i = 0; i < M * K; ++i) x[i] = lcg(&seed) * (i % 7 + 1);
    for (int d = 0; d < count; ++d) {
        const int64_t ws[2] = {N, K}, xs[2] = {M, K}, one[2] = {1, K};
        tl_tensor wf, wq, wt, xt, y, row, yr;
        OK(tl_tensor_from_data(ctx, TL_F32, 2, ws, w, sizeof w, &wf));
        OK(tl_convert(ctx, wf, all[d], &wq));
        OK(tl_transpose(ctx, wq, 0, 1, &wt));
        OK(tl_tensor_from_data(ctx, TL_F32, 2, xs, x, sizeof(float) * M * K, &xt));
        OK(tl_matmul(ctx, xt, wt, &y));
        OK(tl_tensor_read(ctx, y, batch, sizeof(float) * M * N));
        for (int r = 0; r < M; ++r) {
            OK(tl_tensor_from_data(ctx, TL_F32, 2, one, x + r * K, sizeof(float) * K, &row));
            OK(tl_matmul(ctx, row, wt, &yr));
            OK(tl_tensor_read(ctx, yr, alone, sizeof alone));
            cr_assert(memcmp(alone, batch + r * N, sizeof alone) == 0, "%s: row %d of %d differs from the row alone",
                      tl_dtype_name(all[d]), r, M);
        }
    }
}

/* A prompt's rows through a stored weight give each row's bits as alone (the runner's chunk size
 * never changes a token): for every block dtype, 7 rows at once (the row-group kernels) and 19
 * (past 8: the panels of 16 weight rows where the CPU has them, the 40 weight rows two panels and
 * a tail of 8) against each row by itself. */
Test(quant, rows_of_a_batch_give_their_own_bits) {
    const tl_dtype all[9] = {TL_Q8_0, TL_Q4_0, TL_Q5_0, TL_Q4_1, TL_Q5_1, TL_Q4_K, TL_Q5_K, TL_Q6_K, TL_F16};
    for (int m = 7; m <= 19; m += 12) batch_rows_give_their_own_bits(all, 9, m);
}

/* Rows llama.cpp's own quantizer wrote (tests/golden/ggml_quantized.gguf, made by the llamacpp
 * stage from its Q4_K_M, Q5_K_M and Q6_K files, tests/llamacpp/ggml_quantized.py): tl_convert of
 * the same f32 rows gives their bytes exactly, for q4_K, q5_K, q6_K, q5_0, q5_1 and q8_0. */
Test(quant, conversions_give_llama_cpp_quantizers_bytes) {
    tl_gguf_file *g;
    OK(tl_gguf_open(ctx, TL_SOURCE_DIR "/tests/golden/ggml_quantized.gguf", &g));
    int checked = 0;
    for (size_t i = 0; i < tl_gguf_tensor_count(g); ++i) {
        const char *name = tl_gguf_tensor_name(g, i);
        const size_t len = strlen(name);
        if (len < 5 || strcmp(name + len - 4, ".f32") != 0) continue;
        char ggml_name[64];
        snprintf(ggml_name, sizeof ggml_name, "%.*s.ggml", (int)(len - 4), name);
        tl_tensor f32, ggml, made;
        OK(tl_gguf_get(ctx, g, name, &f32));
        OK(tl_gguf_get(ctx, g, ggml_name, &ggml));
        tl_tensor_info info = TL_TENSOR_INFO_INIT;
        OK(tl_tensor_info_get(ctx, ggml, &info));
        int64_t elements;
        size_t block_bytes;
        OK(tl_dtype_block(info.dtype, &elements, &block_bytes));
        const size_t bytes = (size_t)(info.shape[0] * info.shape[1] / elements) * block_bytes;
        unsigned char *want = malloc(bytes), *got = malloc(bytes);
        OK(tl_tensor_read(ctx, ggml, want, bytes));
        OK(tl_convert(ctx, f32, info.dtype, &made));
        OK(tl_tensor_read(ctx, made, got, bytes));
        size_t first = bytes;
        for (size_t b = 0; b < bytes && first == bytes; ++b)
            if (got[b] != want[b]) first = b;
        cr_assert_eq(first, bytes, "%s: byte %zu of %zu differs from llama.cpp's (%u, not %u)", tl_dtype_name(info.dtype),
                     first, bytes, first < bytes ? got[first] : 0, first < bytes ? want[first] : 0);
        free(want), free(got);
        ++checked;
    }
    cr_assert_eq(checked, 6, "six block types in the file, %d checked", checked);
    tl_gguf_close(g);
}
