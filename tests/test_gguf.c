/* GGUF files written byte by byte here (the layout of llama.cpp's writer, independent of the
 * library): metadata of every type read back, tensors over the mapping in their own dtype with
 * GGUF's dims reversed, a q8_0 weight used as stored, and hostile files refused by name. */
#include <stdint.h>
#include <stdio.h>

#include "common.h"
#include "tiny_llama.h"

CONTEXT_AND_DIR_SUITE(gguf);

typedef struct {
    unsigned char bytes[1 << 16];
    size_t n;
} buf;

static void put(buf *b, const void *p, size_t n) {
    memcpy(b->bytes + b->n, p, n);
    b->n += n;
}
static void u32(buf *b, uint32_t v) { put(b, &v, 4); }
static void u64(buf *b, uint64_t v) { put(b, &v, 8); }
static void str(buf *b, const char *s) {
    u64(b, strlen(s));
    put(b, s, strlen(s));
}
static void align_to(buf *b, size_t a) {
    while (b->n % a) b->bytes[b->n++] = 0;
}
static void write_file(const char *path, const buf *b) {
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(b->bytes, 1, b->n, f), b->n);
    fclose(f);
}

/* A llama-like file: metadata of each kind, a f32 [2, 3] tensor "norm" (GGUF dims {3, 2}), a
 * q8_0 weight "w" of 4 rows of 32 (dims {32, 4}), and a tensor of a type tensorlife does not
 * hold (q3_K, 11). */
static void good_file(buf *b, const float *norm, const unsigned char *w_blocks) {
    b->n = 0;
    put(b, "GGUF", 4);
    u32(b, 3);
    u64(b, 3); /* tensors */
    u64(b, 6); /* keys */
    str(b, "general.architecture"), u32(b, 8), str(b, "llama");
    str(b, "llama.context_length"), u32(b, 4), u32(b, 4096);
    str(b, "llama.rope.freq_base"), u32(b, 6);
    const float theta = 10000.0f;
    put(b, &theta, 4);
    str(b, "big"), u32(b, 10), u64(b, UINT64_MAX);
    str(b, "tokenizer.ggml.tokens"), u32(b, 9), u32(b, 8), u64(b, 3);
    str(b, "<s>"), str(b, "hello"), str(b, "");
    str(b, "general.alignment"), u32(b, 4), u32(b, 32);
    str(b, "norm"), u32(b, 2), u64(b, 3), u64(b, 2), u32(b, 0), u64(b, 0);
    str(b, "w"), u32(b, 2), u64(b, 32), u64(b, 4), u32(b, 8), u64(b, 32);
    str(b, "unheld"), u32(b, 1), u64(b, 256), u32(b, 11), u64(b, 192);
    align_to(b, 32);
    put(b, norm, 24);
    align_to(b, 32);
    put(b, w_blocks, 4 * 34);
    align_to(b, 32);
    unsigned char zeros[144] = {0};
    put(b, zeros, sizeof zeros);
}

Test(gguf, metadata_and_tensors_as_llama_cpp_writes_them) {
    const float norm[6] = {1, 2, 3, 4, 5, 6};
    float w[128];
    unsigned seed = 1;
    for (int i = 0; i < 128; ++i) w[i] = lcg(&seed);
    /* The q8_0 bytes, made by the library from f32 (its rounding is tested in test_quant). */
    const int64_t ws[2] = {4, 32};
    tl_tensor wf, wq;
    OK(tl_tensor_from_data(ctx, TL_F32, 2, ws, w, sizeof w, &wf));
    OK(tl_convert(ctx, wf, TL_Q8_0, &wq));
    unsigned char blocks[4 * 34];
    OK(tl_tensor_read(ctx, wq, blocks, sizeof blocks));
    static buf b;
    good_file(&b, norm, blocks);
    char path[300];
    snprintf(path, sizeof path, "%s/model.gguf", dir);
    write_file(path, &b);

    tl_gguf_file *f;
    OK(tl_gguf_open(ctx, path, &f));
    cr_assert_eq(tl_gguf_key_count(f), 6);
    cr_assert_str_eq(tl_gguf_key_name(f, 0), "general.architecture");
    const char *s;
    uint64_t len;
    OK(tl_gguf_get_string(f, "general.architecture", &s, &len));
    cr_assert(len == 5 && memcmp(s, "llama", 5) == 0);
    int64_t n;
    OK(tl_gguf_get_int(f, "llama.context_length", &n));
    cr_assert_eq(n, 4096);
    double theta;
    OK(tl_gguf_get_float(f, "llama.rope.freq_base", &theta));
    cr_assert_eq(theta, 10000.0);
    FAILS_WITH(tl_gguf_get_int(f, "big", &n), TL_E_INVALID_ARGUMENT); /* a uint64 past INT64_MAX */
    FAILS_WITH(tl_gguf_get_int(f, "general.architecture", &n), TL_E_DTYPE);
    FAILS_WITH(tl_gguf_get_int(f, "no.such.key", &n), TL_E_NOT_FOUND);
    tl_gguf_type type, item;
    uint64_t count;
    OK(tl_gguf_key_type(f, "tokenizer.ggml.tokens", &type, &item, &count));
    cr_assert(type == TL_GGUF_ARRAY && item == TL_GGUF_STRING && count == 3);
    OK(tl_gguf_get_array_string(f, "tokenizer.ggml.tokens", 1, &s, &len));
    cr_assert(len == 5 && memcmp(s, "hello", 5) == 0);
    OK(tl_gguf_get_array_string(f, "tokenizer.ggml.tokens", 2, &s, &len));
    cr_assert_eq(len, 0);
    FAILS_WITH(tl_gguf_get_array_string(f, "tokenizer.ggml.tokens", 3, &s, &len), TL_E_SHAPE);

    cr_assert_eq(tl_gguf_tensor_count(f), 3);
    cr_assert_str_eq(tl_gguf_tensor_name(f, 1), "w");
    tl_tensor t, wt, x, y, yref, wt_ref;
    OK(tl_gguf_get(ctx, f, "norm", &t));
    tl_tensor_info info = TL_TENSOR_INFO_INIT;
    OK(tl_tensor_info_get(ctx, t, &info));
    cr_assert(info.dtype == TL_F32 && info.ndim == 2 && info.shape[0] == 2 && info.shape[1] == 3, "GGUF dims reversed");
    cr_assert_eq(info.read_only, 1, "over the mapping");
    float got[6];
    OK(tl_tensor_read(ctx, t, got, sizeof got));
    cr_assert(memcmp(got, norm, sizeof got) == 0);
    OK(tl_gguf_get(ctx, f, "w", &t));
    OK(tl_tensor_info_get(ctx, t, &info));
    cr_assert(info.dtype == TL_Q8_0 && info.shape[0] == 4 && info.shape[1] == 32);
    /* Used as stored: x [1, 32] times the weight's transpose equals the library's own q8_0 weight. */
    const int64_t xs[2] = {1, 32};
    OK(tl_tensor_ones(ctx, TL_F32, 2, xs, &x));
    OK(tl_transpose(ctx, t, 0, 1, &wt));
    OK(tl_matmul(ctx, x, wt, &y));
    OK(tl_transpose(ctx, wq, 0, 1, &wt_ref));
    OK(tl_matmul(ctx, x, wt_ref, &yref));
    float a[4], r[4];
    OK(tl_tensor_read(ctx, y, a, sizeof a));
    OK(tl_tensor_read(ctx, yref, r, sizeof r));
    cr_assert(memcmp(a, r, sizeof a) == 0, "the file's weight gives the same product");
    /* In a scope, a mapped tensor and a view of it die at the reset, the mapping given back once:
     * an ambient tensor over it still reads after the file is closed (below). */
    tl_tensor kept, in_scope, row;
    OK(tl_gguf_get(ctx, f, "norm", &kept));
    tl_scope sc;
    OK(tl_scope_open(ctx, "step", 0, &sc));
    OK(tl_gguf_get(ctx, f, "norm", &in_scope));
    OK(tl_slice(ctx, in_scope, 0, 1, 1, &row));
    float second[3];
    OK(tl_tensor_read(ctx, row, second, sizeof second));
    cr_assert(memcmp(second, norm + 3, sizeof second) == 0);
    OK(tl_scope_reset(ctx, sc));
    FAILS_WITH(tl_tensor_read(ctx, row, second, sizeof second), TL_E_STORAGE_CLOSED);
    OK(tl_scope_close(ctx, sc));
    FAILS_WITH(tl_gguf_get(ctx, f, "unheld", &t), TL_E_DTYPE);
    cr_assert(strstr(tl_last_error(), "is q3_K (ggml type 11)") && strstr(tl_last_error(), "1 tensor of the file is it: 'unheld'"),
              "%s", tl_last_error());
    FAILS_WITH(tl_gguf_get(ctx, f, "missing", &t), TL_E_NOT_FOUND);
    tl_gguf_close(f); /* the tensors over the mapping keep it */
    OK(tl_tensor_read(ctx, t, blocks, 0) == TL_E_INVALID_ARGUMENT ? TL_OK : TL_E_INTERNAL);
    OK(tl_tensor_read(ctx, kept, got, sizeof got));
    cr_assert(memcmp(got, norm, sizeof got) == 0);
}

/* Each hostile file is TL_E_PARSE with a message naming the problem, and leaks nothing. */
static void expect_refused(const char *dir, buf *b, const char *why) {
    memset(b->bytes + b->n, 0, 64); /* padding past the problem, so the counts alone could fit */
    b->n += 64;
    char path[300];
    snprintf(path, sizeof path, "%s/hostile.gguf", dir);
    write_file(path, b);
    tl_gguf_file *f = (tl_gguf_file *)0x1;
    FAILS_WITH(tl_gguf_open(ctx, path, &f), TL_E_PARSE);
    cr_assert(strstr(tl_last_error(), why), "wanted '%s' in: %s", why, tl_last_error());
    cr_assert_eq(f, (tl_gguf_file *)0x1, "the output is untouched");
}

/* b written as dir/name and opened. */
static tl_gguf_file *opened(const char *dir, const buf *b, const char *name) {
    char path[300];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    write_file(path, b);
    tl_gguf_file *f;
    OK(tl_gguf_open(ctx, path, &f));
    return f;
}

static void header(buf *b, uint32_t version, uint64_t tensors, uint64_t keys) {
    b->n = 0;
    put(b, "GGUF", 4);
    u32(b, version);
    u64(b, tensors);
    u64(b, keys);
}

Test(gguf, hostile_files_are_refused_by_name) {
    static buf b;
    b.n = 0, put(&b, "GGML", 4), u32(&b, 3), u64(&b, 0), u64(&b, 0);
    expect_refused(dir, &b, "magic");
    header(&b, 1, 0, 0);
    expect_refused(dir, &b, "version 1");
    header(&b, 3, 0, 1u << 30);
    expect_refused(dir, &b, "cannot fit");
    header(&b, 3, 0, 1), u64(&b, 1ull << 40), u64(&b, 0), u64(&b, 0);
    expect_refused(dir, &b, "past the end");
    header(&b, 3, 0, 1), u64(&b, 3), put(&b, "a\0b", 3), u32(&b, 4), u32(&b, 1);
    expect_refused(dir, &b, "NUL byte");
    header(&b, 3, 0, 1), str(&b, "k"), u32(&b, 99), u32(&b, 0);
    expect_refused(dir, &b, "value type 99");
    header(&b, 3, 0, 1), str(&b, "k"), u32(&b, 9), u32(&b, 4), u64(&b, 1ull << 60);
    expect_refused(dir, &b, "run past the end");
    header(&b, 3, 0, 1), str(&b, "k"), u32(&b, 9), u32(&b, 8), u64(&b, 1ull << 60);
    expect_refused(dir, &b, "cannot fit");
    header(&b, 3, 0, 2), str(&b, "k"), u32(&b, 4), u32(&b, 1), str(&b, "k"), u32(&b, 4), u32(&b, 2);
    expect_refused(dir, &b, "given twice");
    header(&b, 3, 0, 1), str(&b, "general.alignment"), u32(&b, 4), u32(&b, 24);
    expect_refused(dir, &b, "power of two");
    header(&b, 3, 1, 0), str(&b, "t"), u32(&b, 9), u64(&b, 1);
    expect_refused(dir, &b, "9 dims");
    header(&b, 3, 1, 0), str(&b, "t"), u32(&b, 1), u64(&b, 4), u32(&b, 0), u64(&b, 7);
    expect_refused(dir, &b, "not aligned");
    header(&b, 3, 2, 0), str(&b, "t"), u32(&b, 1), u64(&b, 4), u32(&b, 0), u64(&b, 0);
    str(&b, "t"), u32(&b, 1), u64(&b, 4), u32(&b, 0), u64(&b, 32);
    align_to(&b, 32);
    expect_refused(dir, &b, "given twice");
    header(&b, 3, 1, 0), str(&b, "t"), u32(&b, 0), u32(&b, 0), u64(&b, 0);
    expect_refused(dir, &b, "0 dims");
    /* Exactly at the end, no padding: a string one byte longer than the file holds, and a data
     * section that would start past the end (24 bytes of header, aligned to 32). */
    char exact[300];
    snprintf(exact, sizeof exact, "%s/exact.gguf", dir);
    tl_gguf_file *g = (tl_gguf_file *)0x1;
    header(&b, 3, 0, 1), str(&b, "k"), u32(&b, 8), u64(&b, 5), put(&b, "abcd", 4);
    write_file(exact, &b);
    FAILS_WITH(tl_gguf_open(ctx, exact, &g), TL_E_PARSE);
    cr_assert(strstr(tl_last_error(), "a string value at byte 45 runs past the end"), "%s", tl_last_error());
    header(&b, 3, 0, 0);
    write_file(exact, &b);
    FAILS_WITH(tl_gguf_open(ctx, exact, &g), TL_E_PARSE);
    cr_assert(strstr(tl_last_error(), "data section starts past the end"), "%s", tl_last_error());
    cr_assert_eq(g, (tl_gguf_file *)0x1, "the output is untouched");
    /* An empty file (nothing to map) and one shorter than the magic. */
    for (size_t bytes = 0; bytes <= 2; bytes += 2) {
        b.n = 0, put(&b, "GG", bytes);
        write_file(exact, &b);
        FAILS_WITH(tl_gguf_open(ctx, exact, &g), TL_E_PARSE);
        cr_assert(strstr(tl_last_error(), exact), "%s", tl_last_error());
        cr_assert_eq(g, (tl_gguf_file *)0x1, "the output is untouched");
    }
    /* Well formed, but a tensor's data runs past the end: refused at its get, by name. */
    header(&b, 3, 1, 0), str(&b, "t"), u32(&b, 1), u64(&b, 1024), u32(&b, 0), u64(&b, 0);
    align_to(&b, 32);
    tl_gguf_file *f = opened(dir, &b, "short.gguf");
    tl_tensor t;
    FAILS_WITH(tl_gguf_get(ctx, f, "t", &t), TL_E_PARSE);
    cr_assert(strstr(tl_last_error(), "'t'") && strstr(tl_last_error(), "past the end"), "%s", tl_last_error());
    tl_gguf_close(f);
}

/* Opening costs O(n log n) in the tensor count: 100k tensor infos open, and each get is a binary
 * search (bench_gguf-style timing lives in bench/, not here). */
Test(gguf, a_hundred_thousand_tensors_open, .timeout = 60) {
    enum { N = 100000 };
    const size_t cap = 64 + (size_t)N * 64 + 32 + (size_t)N * 32;
    unsigned char *bytes = malloc(cap);
    size_t n = 0;
#define PUT(p, k) (memcpy(bytes + n, (p), (k)), n += (k))
    const uint32_t version = 3, ndim = 1, type = 0;
    const uint64_t tensors = N, keys = 0, one = 8;
    PUT("GGUF", 4), PUT(&version, 4), PUT(&tensors, 8), PUT(&keys, 8);
    for (uint64_t i = 0; i < N; ++i) {
        char name[32];
        const uint64_t len = (uint64_t)snprintf(name, sizeof name, "blk.%llu.w", (unsigned long long)i);
        const uint64_t offset = i * 32;
        PUT(&len, 8), PUT(name, len), PUT(&ndim, 4), PUT(&one, 8), PUT(&type, 4), PUT(&offset, 8);
    }
    while (n % 32) bytes[n++] = 0;
    memset(bytes + n, 0, (size_t)N * 32), n += (size_t)N * 32;
#undef PUT
    char path[300];
    snprintf(path, sizeof path, "%s/many.gguf", dir);
    FILE *fp = fopen(path, "wb");
    cr_assert_eq(fwrite(bytes, 1, n, fp), n);
    fclose(fp);
    free(bytes);
    tl_gguf_file *f;
    OK(tl_gguf_open(ctx, path, &f));
    cr_assert_eq(tl_gguf_tensor_count(f), N);
    tl_tensor t;
    OK(tl_gguf_get(ctx, f, "blk.99999.w", &t));
    OK(tl_tensor_free(ctx, t));
    tl_gguf_close(f);
}

/* Arrays of numbers item by item, from the fixture the bindings read (make_golden.py writes it
 * with Python's struct alone). */
Test(gguf, arrays_of_numbers_item_by_item) {
    tl_gguf_file *f;
    OK(tl_gguf_open(ctx, TL_SOURCE_DIR "/tests/golden/metadata.gguf", &f));
    int64_t i = 0;
    double d = 0;
    OK(tl_gguf_get_array_number(f, "fixture.ids", 1, &i, &d));
    cr_assert(i == -8 && d == -8.0);
    OK(tl_gguf_get_array_number(f, "fixture.scores", 0, NULL, &d));
    cr_assert(d == 0.25);
    FAILS_WITH(tl_gguf_get_array_number(f, "fixture.scores", 0, &i, NULL), TL_E_DTYPE); /* floats are not ints */
    FAILS_WITH(tl_gguf_get_array_number(f, "fixture.ids", 3, &i, NULL), TL_E_SHAPE);
    cr_assert(strstr(tl_last_error(), "holds 3"), "%s", tl_last_error());
    FAILS_WITH(tl_gguf_get_array_number(f, "fixture.strings", 0, &i, NULL), TL_E_DTYPE);
    FAILS_WITH(tl_gguf_get_array_number(f, "fixture.nested", 0, &i, NULL), TL_E_DTYPE);
    /* Past the end of an array of strings or of arrays: not numbers, whatever the index. */
    REFUSED_WITH(tl_gguf_get_array_number(f, "fixture.strings", 99, &i, NULL), TL_E_DTYPE, "is not an array of numbers");
    REFUSED_WITH(tl_gguf_get_array_number(f, "fixture.nested", 99, &i, NULL), TL_E_DTYPE, "is not an array of numbers");
    i = 0;
    OK(tl_gguf_get_array_number(f, "fixture.ids", 2, &i, NULL)); /* the integer alone */
    cr_assert_eq(i, 9);
    FAILS_WITH(tl_gguf_get_array_number(f, "fixture.u8", 0, &i, NULL), TL_E_DTYPE); /* a scalar */
    FAILS_WITH(tl_gguf_get_array_number(f, "no.such.key", 0, &i, NULL), TL_E_NOT_FOUND);
    FAILS_WITH(tl_gguf_get_array_number(f, "fixture.ids", 0, NULL, NULL), TL_E_INVALID_ARGUMENT);
    int64_t big;
    FAILS_WITH(tl_gguf_get_int(f, "fixture.u64", &big), TL_E_INVALID_ARGUMENT);
    tl_gguf_close(f);
}

/* Opening a GGUF file (from a path and from memory) and getting a tensor, with each allocation
 * refused in turn, in a fresh context each time: TL_E_OUT_OF_MEMORY with a message, and every
 * byte given back once the context is destroyed. */
Test(gguf, every_refused_allocation_of_an_open_is_reported_and_given_back) {
    char path[512];
    snprintf(path, sizeof path, "%s/tiny.gguf", dir);
    cr_assert_eq(write_tiny_llama(path, "llama", D), 0);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    static unsigned char bytes[1 << 20] __attribute__((aligned(64)));
    const size_t size = fread(bytes, 1, sizeof bytes, f);
    fclose(f);
    cr_assert(size > 0 && size < sizeof bytes);
    for (int from_memory = 0; from_memory < 2; ++from_memory) {
        int refusals = 0;
        for (long k = 1;; ++k) {
            counting_allocator counter = {0};
            const tl_allocator a = counting_allocator_of(&counter);
            tl_context *c;
            OK(tl_context_create(&a, &c));
            counter.fail_at = counter.allocs + k;
            tl_gguf_file *g = NULL;
            tl_status st = from_memory ? tl_gguf_open_memory(c, bytes, size, &g) : tl_gguf_open(c, path, &g);
            tl_tensor t;
            if (st == TL_OK) st = tl_gguf_get(c, g, "blk.1.ffn_up.weight", &t);
            counter.fail_at = 0;
            tl_gguf_close(g);
            tl_context_destroy(c);
            cr_assert_eq(counter.live_bytes, 0, "refusal %ld kept %lld bytes", k, counter.live_bytes);
            if (st == TL_OK) break;
            cr_assert_eq(st, TL_E_OUT_OF_MEMORY, "refusal %ld: %s (%s)", k, tl_status_string(st), tl_last_error());
            cr_assert(tl_last_error()[0]);
            cr_assert_lt(k, 100000);
            ++refusals;
        }
        cr_assert_gt(refusals, 3, "only %d allocations refused", refusals);
    }
}

/* Tensors of types tensorlife does not hold: the refusal names the type and lists every tensor of
 * it (plural), cut with ", ..." where the list would pass the message's room; a type number past
 * ggml's known ones is named "unknown".  Each tensor one 256-element row of 84 bytes (q2_K's). */
Test(gguf, unheld_types_list_their_tensors) {
    static buf b;
    enum { MANY = 40 };
    header(&b, 3, 3 + MANY + 1, 0);
    char name[96];
    for (int i = 0; i < 3; ++i) {
        snprintf(name, sizeof name, "blk.%d.q3", i);
        str(&b, name), u32(&b, 1), u64(&b, 256), u32(&b, 11), u64(&b, (uint64_t)i * 128);
    }
    for (int i = 0; i < MANY; ++i) {
        snprintf(name, sizeof name, "a.long.name.for.a.q2_K.tensor.that.fills.the.list.%02d", i);
        str(&b, name), u32(&b, 1), u64(&b, 256), u32(&b, 10), u64(&b, (uint64_t)(3 + i) * 128);
    }
    str(&b, "strange"), u32(&b, 1), u64(&b, 256), u32(&b, 99), u64(&b, (uint64_t)(3 + MANY) * 128);
    align_to(&b, 32);
    memset(b.bytes + b.n, 0, (size_t)(4 + MANY) * 128);
    b.n += (size_t)(4 + MANY) * 128;
    tl_gguf_file *f = opened(dir, &b, "unheld.gguf");
    tl_tensor t;
    REFUSED_WITH(tl_gguf_get(ctx, f, "blk.1.q3", &t), TL_E_DTYPE,
                 "is q3_K (ggml type 11), which tensorlife does not hold; 3 tensors of the file are it: 'blk.0.q3', 'blk.1.q3', 'blk.2.q3'");
    snprintf(name, sizeof name, "a.long.name.for.a.q2_K.tensor.that.fills.the.list.%02d", 7);
    REFUSED_WITH(tl_gguf_get(ctx, f, name, &t), TL_E_DTYPE, "is q2_K (ggml type 10)");
    cr_assert(strstr(tl_last_error(), "40 tensors of the file are it: 'a.long.name") && strstr(tl_last_error(), ", ..."),
              "%s", tl_last_error());
    cr_assert(!strstr(tl_last_error(), "list.39"), "the list is cut: %s", tl_last_error());
    REFUSED_WITH(tl_gguf_get(ctx, f, "strange", &t), TL_E_DTYPE, "is unknown (ggml type 99)");
    tl_gguf_close(f);
    /* Names of 64, 57 and 57 bytes fill the list to 4 bytes short of where it stops taking names:
     * the fourth is cut at the list's room, and the message still ends with ", ...". */
    static const int lengths[5] = {64, 57, 57, 64, 64};
    char names[5][72];
    header(&b, 3, 5, 0);
    for (int i = 0; i < 5; ++i) {
        memset(names[i], 'a' + i, (size_t)lengths[i]);
        names[i][lengths[i]] = 0;
        str(&b, names[i]), u32(&b, 1), u64(&b, 256), u32(&b, 10), u64(&b, (uint64_t)i * 128);
    }
    align_to(&b, 32);
    memset(b.bytes + b.n, 0, 5 * 128);
    b.n += 5 * 128;
    f = opened(dir, &b, "unheld_long.gguf");
    REFUSED_WITH(tl_gguf_get(ctx, f, names[0], &t), TL_E_DTYPE, "5 tensors of the file are it");
    const char *message = tl_last_error();
    char whole[80];
    for (int i = 0; i < 3; ++i) {
        snprintf(whole, sizeof whole, "'%s'", names[i]);
        cr_assert(strstr(message, whole), "name %d is not whole in: %s", i, message);
    }
    const size_t n = strlen(message);
    cr_assert(n > 5 && strcmp(message + n - 5, ", ...") == 0, "%s", message);
    cr_assert(!strstr(message, names[4]), "%s", message);
    tl_gguf_close(f);
}
