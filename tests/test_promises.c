/* The headers' promises, each with a test that fails when the promise breaks:
 *  - "a failed call leaves every output untouched and every tensor and scope as it was"
 *    (tl_base.h), for failures past the argument checks: a scope open that fails after
 *    rounding, an op refused by a full TL_FIXED scope, a budget exhausted mid-step;
 *  - every byte comes back to the allocator after every growth path (scratch grown many times,
 *    chunk tables, header tables, the ambient table);
 *  - tl_copy_into handles overlapping source and destination "as if src were copied first",
 *    for non-contiguous overlaps too;
 *  - views die with their base ("they share their base's storage and die with it");
 *  - tl_matmul on views whose rows are contiguous (row slices, offsets, batches in any layout)
 *    gives the bits of the same values made contiguous, and a transposed operand stays within
 *    rounding (tl_ops.h; scripts/check_blas_cores.sh runs this under several OpenBLAS kernels);
 *  - safetensors F16 and BF16 arrive as f32 exactly: subnormals, +-0, inf and NaN included,
 *    against values computed here from the bit layout (ldexp), not by the library's decoder. */
#include <math.h>
#include <stdint.h>

#include "common.h"
#include "raw_safetensors.h"

CONTEXT_SUITE(promises);

static tl_tensor iota_f32(tl_context *c, int ndim, const int64_t *shape) {
    int64_t n = 1;
    for (int d = 0; d < ndim; ++d) n *= shape[d];
    float *v = malloc(sizeof(float) * (size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; ++i) v[i] = (float)i;
    tl_tensor t = make_f32(c, ndim, shape, v);
    free(v);
    return t;
}

/* ---- a failed call changes nothing ---------------------------------------------------------- */

Test(promises, scope_open_failing_after_rounding_changes_nothing) {
    tl_scope outer, got = {1};
    OK(tl_scope_open(ctx, "outer", 0, &outer));
    /* 100 bytes fit max_bytes 100, but the slab rounds them up to 128: refused after rounding. */
    tl_scope_options o = TL_SCOPE_OPTIONS_INIT;
    o.slab_bytes = 100;
    o.max_bytes = 100;
    FAILS_WITH(tl_scope_open_ex(ctx, "rounded", &o, &got), TL_E_INVALID_ARGUMENT);
    cr_assert_eq(got.bits, 1, "the output is untouched");
    tl_scope cur;
    OK(tl_scope_current(ctx, &cur));
    cr_assert(SAME_SCOPE(cur, outer), "the failed open left the current scope as it was");
    tl_tensor t;
    const int64_t n = 4;
    OK(tl_tensor_zeros(ctx, TL_F32, 1, &n, &t));
    tl_tensor_info info = TL_TENSOR_INFO_INIT;
    OK(tl_tensor_info_get(ctx, t, &info));
    cr_assert_str_eq(info.storage, "outer");
    /* The same depth opens fine afterwards, and its stats start from nothing. */
    o.max_bytes = 0;
    OK(tl_scope_open_ex(ctx, "next", &o, &got));
    tl_scope_stats st = stats_of(got);
    cr_assert_eq(st.used_bytes, 0);
    cr_assert_eq(st.live_tensors, 0);
    cr_assert_eq(st.generation, 0);
    OK(tl_scope_close(ctx, got));
    OK(tl_scope_close(ctx, outer));
}

Test(promises, op_refused_by_a_full_fixed_scope_changes_nothing) {
    tl_scope s;
    tl_scope_options o = TL_SCOPE_OPTIONS_INIT;
    o.growth = TL_FIXED;
    o.slab_bytes = 3500; /* 3,520 once rounded: three 1 KiB tensors fit, a fourth does not */
    OK(tl_scope_open_ex(ctx, "fixed", &o, &s));
    const int64_t shape[2] = {16, 16}; /* 1 KiB each */
    tl_tensor a = iota_f32(ctx, 2, shape), b = iota_f32(ctx, 2, shape), c;
    OK(tl_matmul(ctx, a, b, &c)); /* 3 KiB used */
    const tl_scope_stats before = stats_of(s);
    tl_tensor out = {0x1234};
    FAILS_WITH(tl_matmul(ctx, a, b, &out), TL_E_SCOPE_FULL);
    FAILS_WITH(tl_add(ctx, a, b, &out), TL_E_SCOPE_FULL);
    FAILS_WITH(tl_concat(ctx, 2, (tl_tensor[]){a, b}, 0, &out), TL_E_SCOPE_FULL);
    cr_assert_eq(out.bits, 0x1234, "the output is untouched");
    const tl_scope_stats after = stats_of(s);
    cr_assert_eq(after.used_bytes, before.used_bytes);
    cr_assert_eq(after.live_tensors, before.live_tensors, "no half-made tensor stays in the table");
    cr_assert_eq(after.slab_bytes, before.slab_bytes);
    float got[256];
    read_f32(ctx, c, got, 256); /* the earlier result is intact */
    double want = 0;
    for (int k = 0; k < 16; ++k) want += (double)k * (double)(k * 16);
    cr_assert_eq(got[0], (float)want);
    OK(tl_scope_reset(ctx, s)); /* and the scope recovers */
    OK(tl_matmul(ctx, iota_f32(ctx, 2, shape), iota_f32(ctx, 2, shape), &out));
    OK(tl_scope_close(ctx, s));
}

/* tl_scope_stats: peak_bytes is the high-water of used_bytes over all generations. */
Test(promises, peak_bytes_is_a_high_water_mark_across_resets) {
    tl_scope s;
    OK(tl_scope_open(ctx, "peaks", 0, &s));
    const int64_t big = 1000, small = 10;
    tl_tensor t;
    OK(tl_tensor_zeros(ctx, TL_F32, 1, &big, &t)); /* 4,000 bytes: 4,032 rounded */
    OK(tl_scope_reset(ctx, s));
    OK(tl_tensor_zeros(ctx, TL_F32, 1, &small, &t));
    tl_scope_stats st = stats_of(s);
    cr_assert_eq(st.used_bytes, 64);
    cr_assert_eq(st.peak_bytes, 4032, "peak %zu", st.peak_bytes);
    OK(tl_scope_close(ctx, s));
}

/* full writes its value's exact bits: -0.0 keeps its sign (a zero fill must not drop it). */
Test(promises, full_writes_negative_zero_with_its_sign) {
    const int64_t n = 5;
    tl_tensor t;
    float f[5];
    double d[5];
    OK(tl_tensor_full(ctx, TL_F32, 1, &n, -0.0, &t));
    read_f32(ctx, t, f, 5);
    OK(tl_tensor_full(ctx, TL_F64, 1, &n, -0.0, &t));
    OK(tl_tensor_read(ctx, t, d, sizeof d));
    for (int i = 0; i < 5; ++i) cr_assert(f[i] == 0 && signbit(f[i]) && d[i] == 0 && signbit(d[i]), "element %d", i);
}

/* ---- allocator balance after every growth path ---------------------------------------------- */

Test(promises, every_growth_path_gives_every_byte_back) {
    counting_allocator counter = {0};
    tl_allocator alloc = counting_allocator_of(&counter);
    tl_context *counted;
    OK(tl_context_create(&alloc, &counted));
    tl_scope s;
    OK(tl_scope_open(counted, "growing", 0, &s)); /* chunks from nothing */
    for (int64_t n = 2; n <= 256; n *= 2) {
        /* Scratch grows: matmul copies an operand BLAS cannot take (a strided view), attention
         * keeps scores, concat keeps its operands' views. */
        const int64_t shape[3] = {n, n, 2};
        tl_tensor t = iota_f32(counted, 3, shape), view, x, y;
        OK(tl_slice(counted, t, 2, 0, 1, &view)); /* [n, n, 1]: strides n*2, 2, 1 */
        const int64_t square[2] = {n, n};
        OK(tl_reshape(counted, view, 2, square, &x)); /* a copy or a view with row stride 2n */
        OK(tl_transpose(counted, x, 0, 1, &y));
        OK(tl_matmul(counted, x, y, &view));
        const int64_t q[3] = {2, 1, 8}, kv[3] = {2, n, 8};
        tl_tensor qt = iota_f32(counted, 3, q), kt = iota_f32(counted, 3, kv);
        OK(tl_attention(counted, qt, kt, kt, n, 0.01, &y));
        tl_tensor many[64];
        for (int i = 0; i < 64; ++i) many[i] = qt;
        OK(tl_concat(counted, (size_t)(n < 64 ? n : 64), many, 0, &y));
        OK(tl_scope_reset(counted, s)); /* merges the chunks */
    }
    for (int i = 0; i < 300; ++i) { /* the ambient table and the header table grow too */
        OK(tl_scope_close(counted, s));
        const int64_t one = 1;
        tl_tensor amb;
        OK(tl_tensor_zeros(counted, TL_F32, 1, &one, &amb));
        OK(tl_scope_open(counted, "again", 0, &s));
        for (int j = 0; j < i; ++j) OK(tl_tensor_zeros(counted, TL_F32, 1, &one, &amb));
    }
    tl_context_destroy(counted);
    cr_assert_eq(counter.allocs, counter.frees, "%ld allocations, %ld frees", counter.allocs, counter.frees);
    cr_assert_eq(counter.live_bytes, 0, "%lld bytes never given back", counter.live_bytes);
}

/* ---- copy_into with overlapping, non-contiguous operands -------------------------------------- */

Test(promises, copy_into_overlapping_strided_views_is_as_if_copied_first) {
    const int64_t shape[2] = {6, 6};
    tl_tensor m = iota_f32(ctx, 2, shape), mt;
    OK(tl_transpose(ctx, m, 0, 1, &mt));
    OK(tl_copy_into(ctx, mt, m)); /* m = m^T, in place: every element overlaps */
    float got[36];
    read_f32(ctx, m, got, 36);
    for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 6; ++j) cr_assert_eq(got[i * 6 + j], (float)(j * 6 + i), "[%d,%d]", i, j);
    /* A strided source overlapping a shifted strided destination: columns 0..2 into 1..3. */
    tl_tensor w = iota_f32(ctx, 2, shape), src, dst;
    OK(tl_slice(ctx, w, 1, 0, 3, &src));
    OK(tl_slice(ctx, w, 1, 1, 3, &dst));
    OK(tl_copy_into(ctx, src, dst));
    read_f32(ctx, w, got, 36);
    for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 6; ++j) {
            const float want = j == 0 ? (float)(i * 6) : j <= 3 ? (float)(i * 6 + j - 1) : (float)(i * 6 + j);
            cr_assert_eq(got[i * 6 + j], want, "[%d,%d]: %g, want %g", i, j, got[i * 6 + j], want);
        }
}

/* ---- views die with their base -------------------------------------------------------------- */

Test(promises, views_die_with_their_base_in_every_storage) {
    const int64_t shape[2] = {4, 4};
    float buf[16];
    /* ambient base freed: its ambient view and a view placed in a scope both die */
    tl_tensor base = iota_f32(ctx, 2, shape), ambient_view, scoped_view;
    OK(tl_slice(ctx, base, 0, 1, 2, &ambient_view));
    tl_scope s;
    OK(tl_scope_open(ctx, "views", 0, &s));
    OK(tl_transpose(ctx, base, 0, 1, &scoped_view));
    OK(tl_tensor_free(ctx, base));
    FAILS_WITH(tl_tensor_read(ctx, ambient_view, buf, sizeof buf), TL_E_INVALID_HANDLE);
    FAILS_WITH(tl_tensor_read(ctx, scoped_view, buf, sizeof buf), TL_E_INVALID_HANDLE);
    tl_tensor out = {0x77};
    FAILS_WITH(tl_add(ctx, scoped_view, scoped_view, &out), TL_E_INVALID_HANDLE);
    cr_assert_eq(out.bits, 0x77);
    /* scoped base, view in a nested scope: the outer reset kills the view too */
    tl_tensor sbase = iota_f32(ctx, 2, shape), inner_view;
    tl_scope inner;
    OK(tl_scope_open(ctx, "inner", 0, &inner));
    OK(tl_slice(ctx, sbase, 1, 0, 2, &inner_view));
    OK(tl_tensor_read(ctx, inner_view, buf, 8 * sizeof(float)));
    OK(tl_scope_close(ctx, inner));
    tl_tensor outer_view;
    OK(tl_slice(ctx, sbase, 0, 0, 1, &outer_view));
    OK(tl_scope_reset(ctx, s));
    FAILS_WITH(tl_tensor_read(ctx, outer_view, buf, sizeof buf), TL_E_STORAGE_CLOSED);
    cr_assert(strstr(tl_last_error(), "views") != NULL, "the message names the storage: %s", tl_last_error());
    OK(tl_scope_close(ctx, s));
}

/* ---- F16 and BF16 bit patterns ------------------------------------------------------------ */

/* A 16-bit float of `exponent_bits` exponent bits (the rest mantissa), computed from the
 * definition: IEEE half has 5 (bias 15), bfloat16 8 (bias 127, the upper half of an f32). */
static float float16_reference(uint16_t h, int exponent_bits) {
    const int mantissa_bits = 15 - exponent_bits, bias = (1 << (exponent_bits - 1)) - 1;
    const int sign = h >> 15, exponent = (h >> mantissa_bits) & ((1 << exponent_bits) - 1);
    const int mantissa = h & ((1 << mantissa_bits) - 1);
    double v;
    if (exponent == (1 << exponent_bits) - 1)
        v = mantissa ? NAN : INFINITY;
    else if (exponent == 0)
        v = ldexp((double)mantissa, 1 - bias - mantissa_bits); /* subnormal */
    else
        v = ldexp(1.0 + ldexp((double)mantissa, -mantissa_bits), exponent - bias);
    return (float)(sign ? -v : v);
}

Test(promises, f16_and_bf16_decode_exactly_including_subnormals_inf_and_nan) {
    static const uint16_t patterns[] = {0x0000, 0x8000, 0x0001, 0x8001, 0x0002, 0x03ff, 0x83ff, 0x0200,
                                        0x0400, 0x0401, 0x3c00, 0xbc00, 0x3555, 0x7bff, 0xfbff, 0x7c00,
                                        0xfc00, 0x7e00, 0x7c01, 0xfe00, 0x1234, 0x5678};
    enum { N = sizeof patterns / sizeof patterns[0] };
    char dir[64];
    temp_dir_create(dir, sizeof dir, "promises");
    char path[128], header[256];
    snprintf(path, sizeof path, "%s/halves.safetensors", dir);
    snprintf(header, sizeof header,
             "{\"h\":{\"dtype\":\"F16\",\"shape\":[%d],\"data_offsets\":[0,%d]},"
             "\"b\":{\"dtype\":\"BF16\",\"shape\":[%d],\"data_offsets\":[%d,%d]}}",
             N, 2 * N, N, 2 * N, 4 * N);
    unsigned char data[4 * N];
    for (int i = 0; i < N; ++i) {
        data[2 * i] = (unsigned char)(patterns[i] & 0xff), data[2 * i + 1] = (unsigned char)(patterns[i] >> 8);
        data[2 * N + 2 * i] = data[2 * i], data[2 * N + 2 * i + 1] = data[2 * i + 1];
    }
    cr_assert_eq(write_raw_safetensors(path, header, strlen(header), data, sizeof data), 0);
    tl_safetensors_file *f;
    OK(tl_safetensors_open(ctx, path, &f));
    const char *names[2] = {"h", "b"};
    for (int k = 0; k < 2; ++k) {
        tl_tensor stored, t, back;
        OK(tl_safetensors_get(ctx, f, names[k], &stored));
        OK(tl_convert(ctx, stored, TL_F32, &t));
        float got[N];
        read_f32(ctx, t, got, N);
        /* And back: every value that is no NaN rounds to its own bits (NaN stays a NaN). */
        OK(tl_convert(ctx, t, k == 0 ? TL_F16 : TL_BF16, &back));
        uint16_t bits[N];
        OK(tl_tensor_read(ctx, back, bits, sizeof bits));
        for (int i = 0; i < N; ++i) {
            if (isnan(got[i])) cr_assert((bits[i] & 0x7fff) > (k == 0 ? 0x7c00 : 0x7f80), "%s 0x%04x: NaN lost", names[k], patterns[i]);
            else cr_assert_eq(bits[i], patterns[i], "%s 0x%04x came back as 0x%04x", names[k], patterns[i], bits[i]);
        }
        for (int i = 0; i < N; ++i) {
            const float want = float16_reference(patterns[i], k == 0 ? 5 : 8);
            if (isnan(want)) {
                cr_assert(isnan(got[i]), "%s 0x%04x: %g, want NaN", names[k], patterns[i], got[i]);
                cr_assert_eq(signbit(got[i]) != 0, signbit(want) != 0, "%s 0x%04x: NaN sign", names[k], patterns[i]);
            } else {
                cr_assert(memcmp(&got[i], &want, 4) == 0, "%s 0x%04x: %.9g, want %.9g (bits differ)", names[k],
                          patterns[i], got[i], want);
            }
        }
    }
    tl_safetensors_close(f);
    temp_dir_remove(dir);
}

/* ---- tl_matmul on views: the bits of contiguous operands ------------------------------------ */

static unsigned view_seed = 11;
static int64_t pick(int64_t lo, int64_t hi) {
    view_seed = view_seed * 1664525u + 1013904223u;
    return lo + (int64_t)((view_seed >> 8) % (unsigned)(hi - lo + 1));
}
static tl_tensor random_f32(int ndim, const int64_t *shape) {
    int64_t n = 1;
    for (int d = 0; d < ndim; ++d) n *= shape[d];
    float *v = malloc(sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < n; ++i) v[i] = (float)pick(-1000000, 1000000) / 1e6f;
    tl_tensor t = make_f32(ctx, ndim, shape, v);
    free(v);
    return t;
}
/* y = av bv against the same values made contiguous: 1 if bit-identical; else asserts the two
 * agree within rounding (k ulps of the magnitude) and returns 0. */
static int product_keeps_bits(tl_tensor av, tl_tensor bv, int64_t k) {
    tl_tensor ac, bc, y1, y2;
    OK(tl_contiguous(ctx, av, &ac));
    OK(tl_contiguous(ctx, bv, &bc));
    OK(tl_matmul(ctx, av, bv, &y1));
    OK(tl_matmul(ctx, ac, bc, &y2));
    tl_tensor_info info = TL_TENSOR_INFO_INIT;
    OK(tl_tensor_info_get(ctx, y1, &info));
    int64_t n = 1;
    for (int d = 0; d < info.ndim; ++d) n *= info.shape[d];
    float *p = malloc(sizeof(float) * (size_t)n), *q = malloc(sizeof(float) * (size_t)n);
    OK(tl_tensor_read(ctx, y1, p, sizeof(float) * (size_t)n));
    OK(tl_tensor_read(ctx, y2, q, sizeof(float) * (size_t)n));
    const int same = memcmp(p, q, sizeof(float) * (size_t)n) == 0;
    for (int64_t i = 0; i < n; ++i)  /* |terms| <= 1: a sum of k of them rounds by at most k ulps of k */
        cr_assert(fabsf(p[i] - q[i]) <= (float)k * (float)k * 1.2e-7f, "element %lld: %.9g vs %.9g", (long long)i, p[i], q[i]);
    free(p), free(q);
    return same;
}

Test(promises, matmul_on_row_views_gives_the_bits_of_contiguous_operands) {
    int transposed_differ = 0, transposed = 0;
    for (int t = 0; t < 120; ++t) {
        tl_scope s;
        OK(tl_scope_open(ctx, "views", 0, &s));
        const int big = t % 10 == 0; /* one-row products from 512 KiB: the matrix-vector kernels */
        const int64_t m = big ? 1 : pick(1, 60), k = big ? pick(400, 1200) : pick(1, 70), n = big ? pick(400, 1200) : pick(1, 50);
        const int64_t batches = pick(2, 4);
        tl_tensor a, b, av, bv;
        /* a's rows sliced out of wider rows, at an offset */
        const int64_t wide_a[2] = {m, k + 3}, plain_b[2] = {k, n};
        a = random_f32(2, wide_a);
        OK(tl_slice(ctx, a, 1, 2, k, &av));
        cr_assert(product_keeps_bits(av, random_f32(2, plain_b), k), "a row-sliced, [%lld,%lld]x[%lld,%lld]", (long long)m,
                  (long long)k, (long long)k, (long long)n);
        /* b's rows sliced, and b taken from a later row of a bigger matrix */
        const int64_t plain_a[2] = {m, k}, wide_b[2] = {k + 4, n + 5};
        b = random_f32(2, wide_b);
        OK(tl_slice(ctx, b, 1, 1, n, &bv));
        OK(tl_slice(ctx, bv, 0, 4, k, &bv));
        cr_assert(product_keeps_bits(random_f32(2, plain_a), bv, k), "b row-sliced at an offset");
        /* batches sliced out of a taller stack, and batches transposed, against a shared b */
        const int64_t tall[3] = {batches, m + 2, k}, turned[3] = {batches, k, m};
        a = random_f32(3, tall);
        OK(tl_slice(ctx, a, 1, 1, m, &av));
        cr_assert(product_keeps_bits(av, random_f32(2, plain_b), k), "batches sliced");
        a = random_f32(3, turned);
        OK(tl_transpose(ctx, a, 1, 2, &av));
        cr_assert(product_keeps_bits(av, random_f32(2, plain_b), k), "batches transposed");
        /* a transposed weight: within rounding, bits not promised */
        const int64_t stored[2] = {n, k};
        b = random_f32(2, stored);
        OK(tl_transpose(ctx, b, 0, 1, &bv));
        transposed_differ += !product_keeps_bits(random_f32(2, plain_a), bv, k), ++transposed;
        OK(tl_scope_close(ctx, s));
    }
    cr_log_info("transposed weights: %d of %d products differ in their last bits", transposed_differ, transposed);
}
