/* Hostile inputs that once ended in TL_OK with a wrong answer, a silently wrong file or an
 * unbounded cost (issue "no silent wrong results"): each must now end as a status with a
 * message, or as documented behaviour.  Each test is named after what it guards. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "common.h"
#include "raw_safetensors.h"

/* The counts that make a cost visible, cut under valgrind (some 50 times slower) so the memory
 * check still runs every path in minutes. */
static int scaled(int n) { return RUNNING_ON_VALGRIND ? n / 50 + 1 : n; }

CONTEXT_AND_DIR_SUITE(hostile);

static void path_in_dir(char *out, size_t n, const char *name) { snprintf(out, n, "%s/%s", dir, name); }

/* ---- 2. atomic, safe save ----------------------------------------------------------------- */
typedef struct saver {
    const char *path;
    float value;
    int rounds, failures;
} saver;

/* Each thread has its own context (the threading rule) and saves its own constant tensor. */
static void *save_rounds(void *arg) {
    saver *s = arg;
    tl_context *c;
    if (tl_context_create(NULL, &c) != TL_OK) return NULL;
    const int64_t shape[1] = {4096};
    tl_tensor t;
    tl_tensor_full(c, TL_F32, 1, shape, s->value, &t);
    const char *name = "x";
    for (int i = 0; i < s->rounds; ++i)
        if (tl_safetensors_save(c, s->path, 1, &name, &t) != TL_OK) s->failures++;
    tl_context_destroy(c);
    return NULL;
}

Test(hostile, atomic_save_two_contexts_one_path) {
    char path[300];
    path_in_dir(path, sizeof path, "shared.safetensors");
    NEEDS_THREADS();
    saver a = {path, 1.0f, 100, 0}, b = {path, 2.0f, 100, 0};
    pthread_t ta, tb;
    pthread_create(&ta, NULL, save_rounds, &a);
    pthread_create(&tb, NULL, save_rounds, &b);
    /* While they race, every read sees one whole file: all 1s or all 2s. */
    for (int round = 0; round < 200; ++round) {
        tl_safetensors_file *f;
        if (tl_safetensors_open(ctx, path, &f) != TL_OK) continue; /* not written yet */
        tl_tensor t;
        OK(tl_safetensors_get(ctx, f, "x", &t));
        float v[4096];
        OK(tl_tensor_read(ctx, t, v, sizeof v));
        for (int i = 1; i < 4096; ++i) cr_assert_eq(v[i], v[0], "a mixed file: %g then %g at %d", v[0], v[i], i);
        cr_assert(v[0] == 1.0f || v[0] == 2.0f);
        tl_tensor_free(ctx, t);
        tl_safetensors_close(f);
    }
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    cr_assert_eq(a.failures + b.failures, 0);
    /* No temporary file is left behind. */
    cr_assert_eq(dir_entry_count(dir), 1, "temporary files left in %s", dir);
}

Test(hostile, atomic_save_does_not_follow_planted_links) {
#ifdef _WIN32
    cr_skip_test("links need a privilege on Windows; the temporary file opens with CREATE_NEW, "
                 "which refuses any name that exists");
#else
    char path[300], victim[300], cmd[900];
    path_in_dir(path, sizeof path, "model.safetensors");
    path_in_dir(victim, sizeof victim, "victim");
    FILE *v = fopen(victim, "w");
    fputs("precious", v);
    fclose(v);
    /* Links at the old fixed temporary name and at the predictable part of the new one. */
    snprintf(cmd, sizeof cmd,
             "ln -s '%s' '%s.tmp-tensorlife'; for i in $(seq 0 99); do ln -s '%s' "
             "'%s/.model.safetensors.tmp-tensorlife-%ld-'$i; done",
             victim, path, victim, dir, (long)getpid());
    cr_assert_eq(system(cmd), 0);
    const int64_t shape[1] = {4};
    tl_tensor t;
    OK(tl_tensor_ones(ctx, TL_F32, 1, shape, &t));
    const char *name = "w";
    OK(tl_safetensors_save(ctx, path, 1, &name, &t));
    char text[16] = {0};
    v = fopen(victim, "r");
    cr_assert_not_null(fgets(text, sizeof text, v));
    fclose(v);
    cr_assert_str_eq(text, "precious");
    struct stat st;
    cr_assert_eq(lstat(path, &st), 0);
    cr_assert(S_ISREG(st.st_mode));
#endif
}

Test(hostile, atomic_save_keeps_permission_bits) {
#ifdef _WIN32
    cr_skip_test("Windows files have no permission bits");
#else
    char path[300];
    path_in_dir(path, sizeof path, "perm.safetensors");
    const int64_t shape[1] = {2};
    tl_tensor t;
    OK(tl_tensor_ones(ctx, TL_F32, 1, shape, &t));
    const char *name = "w";
    OK(tl_safetensors_save(ctx, path, 1, &name, &t));
    cr_assert_eq(chmod(path, 0640), 0);
    OK(tl_safetensors_save(ctx, path, 1, &name, &t));
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0640);
#endif
}

/* ---- 3. exact JSON ---------------------------------------------------------------------------- */
static uint64_t next_random(uint64_t *s) {
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

Test(hostile, exact_json_round_trip_of_100000_doubles, .timeout = 120) {
    const int N = 10000 * (scaled(100000) / 10000 + 1);
    double *v = malloc(N * sizeof(double)), *back = malloc(N * sizeof(double));
    uint64_t seed = 0x9e3779b97f4a7c15u;
    for (int i = 0; i < N; ++i) {
        uint64_t bits = next_random(&seed);
        memcpy(&v[i], &bits, sizeof bits); /* every exponent: subnormals and extremes too */
        if (isnan(v[i]) || isinf(v[i])) v[i] = (double)bits / 3.0;
    }
    const double edges[] = {0.1 + 0.2,
                            1.7976931348623157e308,
                            -1.7976931348623157e308,
                            4.9406564584124654e-324,
                            2.2250738585072014e-308,
                            2.2250738585072009e-308,
                            -0.0,
                            0.0,
                            1.0 / 3.0,
                            9007199254740993.0};
    memcpy(v, edges, sizeof edges);
    /* In chunks under the JSON size bound. */
    for (int at = 0; at < N; at += 10000) {
        const int64_t shape[1] = {10000};
        tl_tensor t, u;
        OK(tl_tensor_from_data(ctx, TL_F64, 1, shape, v + at, 10000 * sizeof(double), &t));
        char *json;
        OK(tl_tensor_to_json(ctx, t, &json));
        OK(tl_tensor_from_json(ctx, json, &u));
        tl_string_free(json);
        OK(tl_tensor_read(ctx, u, back + at, 10000 * sizeof(double)));
        tl_tensor_free(ctx, t);
        tl_tensor_free(ctx, u);
    }
    for (int i = 0; i < N; ++i)
        cr_assert_eq(memcmp(&v[i], &back[i], sizeof(double)), 0, "value %d: %.17g came back as %.17g", i, v[i],
                     back[i]);
    free(v);
    free(back);
}

Test(hostile, exact_json_round_trip_of_floats) {
    enum { N = 20000 };
    float v[N], back[N];
    uint64_t seed = 12345;
    for (int i = 0; i < N; ++i) {
        uint32_t bits = (uint32_t)next_random(&seed);
        memcpy(&v[i], &bits, sizeof bits);
        if (isnan(v[i]) || isinf(v[i])) v[i] = (float)bits;
    }
    v[0] = -0.0f, v[1] = 1.17549435e-38f, v[2] = 1.4e-45f, v[3] = 3.40282347e38f, v[4] = 0.1f;
    const int64_t shape[1] = {N};
    tl_tensor t, u;
    OK(tl_tensor_from_data(ctx, TL_F32, 1, shape, v, sizeof v, &t));
    char *json;
    OK(tl_tensor_to_json(ctx, t, &json));
    OK(tl_tensor_from_json(ctx, json, &u));
    tl_string_free(json);
    OK(tl_tensor_read(ctx, u, back, sizeof back));
    for (int i = 0; i < N; ++i)
        cr_assert_eq(memcmp(&v[i], &back[i], 4), 0, "float %d: %.9g came back as %.9g", i, v[i], back[i]);
}

/* An allocator that remembers its peak, to bound what a call takes. */
typedef struct peak_allocator {
    long long live, peak;
} peak_allocator;
static void *peak_alloc(void *user, size_t size, size_t alignment) {
    peak_allocator *p = user;
    void *m = NULL;
    if (!(m = aligned_block_alloc(size, alignment))) return NULL;
    p->live += (long long)size;
    if (p->live > p->peak) p->peak = p->live;
    return m;
}
static void peak_free(void *user, void *ptr, size_t size) {
    ((peak_allocator *)user)->live -= (long long)size;
    aligned_block_free(ptr);
}

Test(hostile, json_size_is_bounded, .timeout = 120) {
    /* A tensor whose text would pass TL_JSON_MAX_BYTES is refused, having taken at most about
     * that much memory (a tree of the data would have taken ~10x the tensor). */
    peak_allocator mem = {0, 0};
    const tl_allocator alloc = {&mem, peak_alloc, peak_free};
    tl_context *c;
    OK(tl_context_create(&alloc, &c));
    const int64_t shape[1] = {scaled(8 * 1024 * 1024) < (1 << 20) ? 1 << 20 : 8 * 1024 * 1024};
    tl_tensor t;
    OK(tl_tensor_full(c, TL_F64, 1, shape, 0.1, &t));
    char *json = NULL;
    const long long before = mem.live;
    mem.peak = mem.live;
    FAILS_WITH(tl_tensor_to_json(c, t, &json), TL_E_INVALID_ARGUMENT);
    cr_assert(strstr(tl_last_error(), "TL_JSON_MAX_BYTES"));
    cr_assert_leq(mem.peak - before, 2LL * TL_JSON_MAX_BYTES + 65536, "to_json took %lld bytes", mem.peak - before);
    cr_assert_eq(mem.live, before, "nothing left behind");
    cr_assert_null(json);
    tl_context_destroy(c);
    /* And a text past the bound is refused before parsing. */
    char *big = malloc(TL_JSON_MAX_BYTES + 2);
    memset(big, ' ', TL_JSON_MAX_BYTES + 1);
    big[0] = '{', big[TL_JSON_MAX_BYTES] = '}', big[TL_JSON_MAX_BYTES + 1] = 0;
    tl_tensor u;
    FAILS_WITH(tl_tensor_from_json(ctx, big, &u), TL_E_PARSE);
    free(big);
}

/* ---- 4. NUL characters and trailing bytes --------------------------------------------------- */
Test(hostile, nul_in_safetensors_names_and_dtypes) {
    char path[300];
    path_in_dir(path, sizeof path, "nul-bytes.safetensors"); /* "nul.*" is a device on Windows */
    const float data[1] = {1};
    const char *bad[] = {
        "{\"weight\\u0000evil\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}",
        "{\"w\":{\"dtype\":\"F32\\u0000\",\"shape\":[1],\"data_offsets\":[0,4]}}",
        "{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}} GARBAGE",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; ++i) {
        cr_assert_eq(write_raw_safetensors(path, bad[i], strlen(bad[i]), data, sizeof data), 0);
        tl_safetensors_file *f = NULL;
        FAILS_WITH(tl_safetensors_open(ctx, path, &f), TL_E_PARSE);
        cr_assert_null(f);
    }
    /* An escaped backslash before "u0000" is no NUL: that name loads. */
    const char *fine = "{\"a\\\\u0000\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}  ";
    cr_assert_eq(write_raw_safetensors(path, fine, strlen(fine), data, sizeof data), 0);
    tl_safetensors_file *f;
    OK(tl_safetensors_open(ctx, path, &f));
    cr_assert_str_eq(tl_safetensors_name(f, 0), "a\\u0000");
    tl_safetensors_close(f);
}

Test(hostile, nul_in_json_dtype_and_trailing_text) {
    tl_tensor t;
    FAILS_WITH(tl_tensor_from_json(ctx, "{\"dtype\":\"f32\\u0000junk\",\"shape\":[1],\"data\":[1]}", &t), TL_E_PARSE);
    FAILS_WITH(tl_tensor_from_json(ctx, "{\"dtype\":\"f32\",\"shape\":[1],\"data\":[1]} trailing", &t), TL_E_PARSE);
    OK(tl_tensor_from_json(ctx, "{\"dtype\":\"f32\",\"shape\":[1],\"data\":[1]}\n", &t));
}

/* ---- 5. costs linear in the input ---------------------------------------------------------- */
Test(hostile, million_tiny_tensors_open_and_get_fast, .timeout = 120) {
    /* 200,000 tensors of one float each (94 s to open before; a duplicate check per name). */
    const int N = scaled(200000);
    char path[300];
    path_in_dir(path, sizeof path, "many.safetensors");
    cr_assert_eq(write_tiny_tensors(path, N), 0);
    tl_safetensors_file *f;
    OK(tl_safetensors_open(ctx, path, &f));
    cr_assert_eq(tl_safetensors_count(f), N);
    tl_scope s;
    OK(tl_scope_open(ctx, "get-all", 0, &s));
    for (int i = N - 1; i >= 0; i -= 7) {
        char name[16];
        snprintf(name, sizeof name, "t%d", i);
        tl_tensor t;
        OK(tl_safetensors_get(ctx, f, name, &t));
        float x;
        OK(tl_tensor_read(ctx, t, &x, sizeof x));
        cr_assert_eq(x, (float)i);
        if (i % 4096 == 0) OK(tl_scope_reset(ctx, s));
    }
    OK(tl_scope_close(ctx, s));
    tl_safetensors_close(f);
    /* Two tensors of one name are still found. */
    const char *dup =
        "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_"
        "offsets\":[4,8]}}";
    const float two[2] = {0, 1};
    cr_assert_eq(write_raw_safetensors(path, dup, strlen(dup), two, sizeof two), 0);
    FAILS_WITH(tl_safetensors_open(ctx, path, &f), TL_E_PARSE);
    cr_assert(strstr(tl_last_error(), "appears twice"));
}

/* ---- 6. paths that are not files ------------------------------------------------------------ */
Test(hostile, paths_that_are_not_regular_files, .timeout = 10) {
    tl_safetensors_file *f;
    FAILS_WITH(tl_safetensors_open(ctx, dir, &f), TL_E_IO);
    cr_assert(strstr(tl_last_error(), "not a regular file"), "%s", tl_last_error());
#ifdef _WIN32
    /* A pipe with a server and no client yet, and a device. */
    const char *pipe_name = "\\\\.\\pipe\\tensorlife-hostile";
    HANDLE server = CreateNamedPipeA(pipe_name, PIPE_ACCESS_DUPLEX, PIPE_TYPE_BYTE, 1, 0, 0, 0, NULL);
    cr_assert_neq(server, INVALID_HANDLE_VALUE);
    FAILS_WITH(tl_safetensors_open(ctx, pipe_name, &f), TL_E_IO);
    CloseHandle(server);
    FAILS_WITH(tl_safetensors_open(ctx, "NUL", &f), TL_E_IO);
#else
    char fifo[300];
    path_in_dir(fifo, sizeof fifo, "fifo");
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    FAILS_WITH(tl_safetensors_open(ctx, fifo, &f), TL_E_IO); /* no writer: must not block */
    FAILS_WITH(tl_safetensors_open(ctx, "/dev/null", &f), TL_E_IO);
#endif
}

/* ---- 8. signed overflow in matmul ----------------------------------------------------------- */
Test(hostile, matmul_batch_product_overflow) {
    const int64_t sa[3] = {(int64_t)1 << 40, 2147483647, 0}, sb[2] = {0, 1};
    tl_tensor a, b, c;
    OK(tl_tensor_zeros(ctx, TL_F32, 3, sa, &a));
    OK(tl_tensor_zeros(ctx, TL_F32, 2, sb, &b));
    FAILS_WITH(tl_matmul(ctx, a, b, &c), TL_E_SHAPE);
}

/* ---- 9. the allocator contract ---------------------------------------------------------------- */
typedef struct misaligning {
    int frees, allocs;
} misaligning;
static void *misaligned_alloc(void *user, size_t size, size_t alignment) {
    misaligning *m = user;
    m->allocs++;
    unsigned char *p = NULL;
    if (!(p = aligned_block_alloc(size + 1, alignment < 16 ? 16 : alignment))) return NULL;
    return p + 1; /* one byte off, whatever was asked */
}
static void misaligned_free(void *user, void *ptr, size_t size) {
    (void)size;
    ((misaligning *)user)->frees++;
    aligned_block_free((unsigned char *)ptr - 1);
}

Test(hostile, allocator_returning_misaligned_memory_is_refused) {
    misaligning m = {0, 0};
    tl_allocator a = {&m, misaligned_alloc, misaligned_free};
    tl_context *c = NULL;
    FAILS_WITH(tl_context_create(&a, &c), TL_E_OUT_OF_MEMORY);
    cr_assert_null(c);
    cr_assert(strstr(tl_last_error(), "not aligned"), "%s", tl_last_error());
    cr_assert_eq(m.allocs, m.frees, "the misaligned block is given back");
}

/* An allocator that turns 8 bytes off the alignment asked for once `off` is set: every call
 * that allocates after that refuses with TL_E_OUT_OF_MEMORY and says the memory was misaligned,
 * not only tl_context_create. */
typedef struct drifting {
    size_t off;
    int allocs, frees;
} drifting;
static void *drifting_alloc(void *user, size_t size, size_t alignment) {
    drifting *d = user;
    unsigned char *base = aligned_block_alloc(size + 128, alignment < 64 ? 64 : alignment);
    if (!base) return NULL;
    d->allocs++;
    unsigned char *p = base + 64 + d->off;
    memcpy(p - 8, &d->off, sizeof d->off); /* where its block starts, for the free */
    return p;
}
static void drifting_free(void *user, void *ptr, size_t size) {
    (void)size;
    size_t off;
    memcpy(&off, (unsigned char *)ptr - 8, sizeof off);
    ((drifting *)user)->frees++;
    aligned_block_free((unsigned char *)ptr - 64 - off);
}
static void expect_misaligned(tl_status st, const char *what) {
    cr_assert_eq(st, TL_E_OUT_OF_MEMORY, "%s: %s", what, tl_status_string(st));
    cr_assert(strstr(tl_last_error(), "not aligned"), "%s: %s", what, tl_last_error());
}

Test(hostile, every_refusal_of_misaligned_memory_says_so) {
    drifting d = {0, 0, 0};
    tl_allocator a = {&d, drifting_alloc, drifting_free};
    tl_context *c = NULL;
    OK(tl_context_create(&a, &c));
    const int64_t shape[1] = {1000};
    tl_tensor t;
    tl_scope s, inner;
    d.off = 8;
    expect_misaligned(tl_scope_open(c, "drift", 0, &s), "tl_scope_open");
    expect_misaligned(tl_tensor_zeros(c, TL_F32, 1, shape, &t), "an ambient tensor");
    d.off = 0;
    OK(tl_scope_open(c, "drift", 0, &s));
    tl_scope_options small = TL_SCOPE_OPTIONS_INIT;
    small.slab_bytes = 256;
    OK(tl_scope_open_ex(c, "inner", &small, &inner));
    d.off = 8;
    expect_misaligned(tl_tensor_zeros(c, TL_F32, 1, shape, &t), "a scoped tensor past its slab");
    d.off = 0;
    OK(tl_scope_close(c, inner));
    OK(tl_scope_close(c, s));
    tl_context_destroy(c);
    cr_assert_eq(d.allocs, d.frees, "every block given back");
}

/* ---- 10. max_bytes honoured exactly ---------------------------------------------------------- */
Test(hostile, max_bytes_fits_what_it_allows) {
    tl_scope_options o = {sizeof o, TL_GROW, 0, 100000};
    tl_scope s;
    OK(tl_scope_open_ex(ctx, "capped", &o, &s));
    const int64_t shape[1] = {10000}; /* 40,000 bytes */
    tl_tensor t;
    for (int gen = 0; gen < 3; ++gen) {
        OK(tl_tensor_zeros(ctx, TL_F32, 1, shape, &t));
        OK(tl_tensor_zeros(ctx, TL_F32, 1, shape, &t));
        FAILS_WITH(tl_tensor_zeros(ctx, TL_F32, 1, shape, &t), TL_E_SCOPE_FULL); /* 120,000 > 100,000 */
        tl_scope_stats st = TL_SCOPE_STATS_INIT;
        OK(tl_scope_stats_get(ctx, s, &st));
        if (gen > 0) cr_assert_leq(st.slab_bytes, 100000, "gen %d holds %zu bytes", gen, st.slab_bytes);
        OK(tl_scope_reset(ctx, s));
    }
    OK(tl_scope_close(ctx, s));
}

/* A cap that is no multiple of 64 makes a chunk of that odd size: a request that fits before
 * its 64-byte rounding but not after must still be refused, not placed past the chunk's end. */
Test(hostile, max_bytes_counts_the_rounding) {
    tl_scope_options o = TL_SCOPE_OPTIONS_INIT;
    o.max_bytes = 1000;
    tl_scope s;
    OK(tl_scope_open_ex(ctx, "odd-cap", &o, &s));
    const int64_t big = 240, small = 8; /* 960 bytes, then 32 (64 once rounded) */
    tl_tensor t, u = {0x9};
    OK(tl_tensor_zeros(ctx, TL_F32, 1, &big, &t));
    FAILS_WITH(tl_tensor_zeros(ctx, TL_F32, 1, &small, &u), TL_E_SCOPE_FULL);
    cr_assert_eq(u.bits, 0x9);
    tl_scope_stats st = TL_SCOPE_STATS_INIT;
    OK(tl_scope_stats_get(ctx, s, &st));
    cr_assert_eq(st.used_bytes, 960);
    cr_assert_leq(st.slab_bytes, 1000);
    OK(tl_scope_close(ctx, s));
}

/* ---- 1. handles across contexts --------------------------------------------------------------- */
Test(hostile, handles_across_100000_contexts, .timeout = 120) {
    /* 100,000 contexts, a few alive at a time and the rest destroyed: a handle of one is refused
     * by every other (before, the 256th context took the first one's tag, slot and generation). */
    enum { ALIVE = 16 };
    const int N = scaled(100000);
    tl_context *alive[ALIVE] = {0};
    tl_tensor ambient_of[ALIVE], scoped_of[ALIVE];
    const int64_t shape[1] = {1};
    for (int i = 0; i < N; ++i) {
        const int k = i % ALIVE;
        if (alive[k]) tl_context_destroy(alive[k]);
        OK(tl_context_create(NULL, &alive[k]));
        OK(tl_tensor_full(alive[k], TL_F32, 1, shape, (double)i, &ambient_of[k]));
        tl_scope s;
        OK(tl_scope_open(alive[k], "s", 0, &s));
        OK(tl_tensor_full(alive[k], TL_F32, 1, shape, (double)-i, &scoped_of[k]));
        /* Cross: every other live context refuses both handles; the owner reads its own. */
        const int j = (k + 1 + i % (ALIVE - 1)) % ALIVE;
        if (alive[j] && j != k) {
            float x;
            FAILS_WITH(tl_tensor_read(alive[j], ambient_of[k], &x, sizeof x), TL_E_INVALID_HANDLE);
            FAILS_WITH(tl_tensor_read(alive[j], scoped_of[k], &x, sizeof x), TL_E_INVALID_HANDLE);
            FAILS_WITH(tl_tensor_free(alive[j], ambient_of[k]), TL_E_INVALID_HANDLE);
            OK(tl_tensor_read(alive[k], ambient_of[k], &x, sizeof x));
            cr_assert_eq(x, (float)i);
        }
    }
    for (int k = 0; k < ALIVE; ++k) tl_context_destroy(alive[k]);
}

Test(hostile, handle_of_a_destroyed_context_in_its_successor) {
    /* The old tag scheme made context 257 accept context 1's handles. */
    tl_context *first;
    OK(tl_context_create(NULL, &first));
    const int64_t shape[1] = {1};
    tl_tensor t;
    OK(tl_tensor_full(first, TL_F32, 1, shape, 7, &t));
    for (int i = 0; i < 600; ++i) {
        tl_context *c;
        OK(tl_context_create(NULL, &c));
        tl_tensor mine;
        OK(tl_tensor_full(c, TL_F32, 1, shape, 1, &mine));
        float x;
        FAILS_WITH(tl_tensor_read(c, t, &x, sizeof x), TL_E_INVALID_HANDLE);
        FAILS_WITH(tl_tensor_free(c, t), TL_E_INVALID_HANDLE);
        tl_context_destroy(c);
    }
    tl_context_destroy(first);
}

/* ---- 7. dead views -------------------------------------------------------------------------- */
Test(hostile, dead_views_give_back_their_slots, .timeout = 120) {
    /* A million base/view/free rounds (slots ran out after 524,287 before). */
    const int64_t shape[1] = {4};
    for (int i = 0; i < scaled(1000000); ++i) {
        tl_tensor base, view;
        OK(tl_tensor_zeros(ctx, TL_F32, 1, shape, &base));
        OK(tl_slice(ctx, base, 0, 1, 2, &view));
        OK(tl_tensor_free(ctx, base));
        float x[2];
        FAILS_WITH(tl_tensor_read(ctx, view, x, sizeof x), TL_E_INVALID_HANDLE);
    }
    /* A view freed on its own first leaves its base whole. */
    tl_tensor base, view;
    OK(tl_tensor_ones(ctx, TL_F32, 1, shape, &base));
    OK(tl_slice(ctx, base, 0, 1, 2, &view));
    OK(tl_tensor_free(ctx, view));
    float x[4];
    OK(tl_tensor_read(ctx, base, x, sizeof x));
    OK(tl_tensor_free(ctx, base));
}

/* ---- 11. messages after a second close ------------------------------------------------------- */
Test(hostile, stale_message_names_the_scope_after_another_close) {
    const int64_t shape[1] = {1};
    tl_scope s;
    tl_tensor kept;
    OK(tl_scope_open(ctx, "first-frame", 0, &s));
    OK(tl_tensor_zeros(ctx, TL_F32, 1, shape, &kept));
    OK(tl_scope_close(ctx, s));
    OK(tl_scope_open(ctx, "second-frame", 0, &s));
    OK(tl_scope_reset(ctx, s));
    OK(tl_scope_close(ctx, s));
    float x;
    FAILS_WITH(tl_tensor_read(ctx, kept, &x, sizeof x), TL_E_STORAGE_CLOSED);
    cr_assert_str_eq(tl_last_error(), "storage 'first-frame' #1 gen 0 is closed (scope was closed at gen 0)");
}

/* fuzz (extended API harness): an empty tensor with a dim past 2^53 was saved with TL_OK into a
 * file that does not read back (JSON readers hold dims as doubles). */
Test(hostile, save_refuses_dims_json_cannot_hold) {
    char path[300];
    path_in_dir(path, sizeof path, "huge.safetensors");
    const int64_t shape[2] = {INT64_MAX / 3, 0};
    tl_tensor t;
    OK(tl_tensor_zeros(ctx, TL_F32, 2, shape, &t));
    const char *name = "e";
    FAILS_WITH(tl_safetensors_save(ctx, path, 1, &name, &t), TL_E_INVALID_ARGUMENT);
    struct stat st;
    cr_assert_neq(stat(path, &st), 0, "no file written");
}

/* ---- hot reload (engines): many context lifetimes in one process ------------------------------ */

Test(hostile, hot_reload_10000_contexts, .timeout = 120) {
    char path[300];
    path_in_dir(path, sizeof path, "reload.safetensors");
    {
        const int64_t shape[2] = {64, 64};
        tl_tensor w;
        OK(tl_tensor_ones(ctx, TL_F32, 2, shape, &w));
        const char *name = "w";
        OK(tl_safetensors_save(ctx, path, 1, &name, &w));
    }
    long before = 0;
    const int rounds = scaled(10000);
    for (int i = 0; i < rounds; ++i) {
        counting_allocator counter = {0};
        tl_allocator alloc = counting_allocator_of(&counter);
        tl_context *c;
        OK(tl_context_create(&alloc, &c));
        tl_scope frame;
        tl_scope_options o = {sizeof o, TL_FIXED, 1 << 16, 0};
        OK(tl_scope_open_ex(c, "frame", &o, &frame));
        tl_safetensors_file *f;
        OK(i % 2 ? tl_safetensors_map(c, path, &f) : tl_safetensors_open(c, path, &f)); /* mapped, or read */
        tl_tensor w, x, y;
        OK(tl_safetensors_get(c, f, "w", &w));
        const int64_t xs[2] = {1, 64};
        OK(tl_tensor_ones(c, TL_F32, 2, xs, &x));
        OK(tl_matmul(c, x, w, &y));
        OK(tl_scope_reset(c, frame));
        tl_safetensors_close(f);
        tl_context_destroy(c); /* the scope left open: the destroy frees it (and unmaps the file) */
        cr_assert_eq(counter.live_bytes, 0, "round %d: %lld bytes still held", i, counter.live_bytes);
        cr_assert_eq(counter.allocs, counter.frees, "round %d", i);
        if (i == rounds / 10) before = resident_kib(); /* after warm-up: BLAS buffers, pages touched */
    }
    const long after = resident_kib();
    cr_assert(before >= 0 && after >= 0, "resident memory is not readable");
    /* Resident memory says nothing under ASan (its quarantine keeps freed blocks) or valgrind;
     * the allocator balance above holds in every build. */
#if !defined(__SANITIZE_ADDRESS__)
    if (!RUNNING_ON_VALGRIND)
        cr_assert_lt(after - before, 8 * 1024, "resident memory grew from %ld to %ld KiB over %d contexts", before,
                     after, rounds);
#endif
    (void)after;
}

/* ---- mapped weights (engines): zero copy, read-only, the mapping's lifetime ------------------ */

Test(hostile, mapped_weights_zero_copy_read_only_and_lifetime) {
    char path[300];
    path_in_dir(path, sizeof path, "mapped.safetensors");
    counting_allocator counter = {0};
    tl_allocator alloc = counting_allocator_of(&counter);
    tl_context *c;
    OK(tl_context_create(&alloc, &c));
    /* w: 64x64 F32 (mapped), ids: I32 (mapped), empty: no bytes (nothing to map), plus an F16 one
     * written raw (copied). */
    {
        const int64_t sw[2] = {64, 64}, si[1] = {3}, s0[2] = {4, 0};
        const int32_t ids[3] = {7, -8, 9};
        tl_tensor w, i, e;
        OK(tl_tensor_full(c, TL_F32, 2, sw, 0.5, &w));
        OK(tl_tensor_from_data(c, TL_I32, 1, si, ids, sizeof ids, &i));
        OK(tl_tensor_from_data(c, TL_F32, 2, s0, NULL, 0, &e)); /* no data for no elements */
        const char *names[3] = {"w", "ids", "empty"};
        const tl_tensor ts[3] = {w, i, e};
        OK(tl_safetensors_save(c, path, 3, names, ts));
        OK(tl_tensor_free(c, w));
        OK(tl_tensor_free(c, i));
        OK(tl_tensor_free(c, e));
    }
    tl_safetensors_file *f;
    OK(tl_safetensors_map(c, path, &f));
    cr_assert(file_is_mapped(path));
    cr_assert_eq(tl_safetensors_maps(f, "w"), 1);
    cr_assert_eq(tl_safetensors_maps(f, "ids"), 1);
    cr_assert_eq(tl_safetensors_maps(f, "none"), 0);
    cr_assert_eq(tl_safetensors_maps(f, "empty"), 0);
    tl_tensor w1, w2, ids, empty;
    OK(tl_safetensors_get(c, f, "empty", &empty));
    tl_tensor_info info = TL_TENSOR_INFO_INIT;
    OK(tl_tensor_info_get(c, empty, &info));
    cr_assert(info.ndim == 2 && info.shape[0] == 4 && info.shape[1] == 0);
    OK(tl_tensor_free(c, empty));
    OK(tl_safetensors_get(c, f, "w", &w1));
    OK(tl_safetensors_get(c, f, "w", &w2));
    OK(tl_safetensors_get(c, f, "ids", &ids));
    void *p1, *p2;
    OK(tl_tensor_data(c, w1, &p1));
    OK(tl_tensor_data(c, w2, &p2));
    cr_assert_eq(p1, p2, "two gets of a mapped tensor share the file's pages: no copy");
    static float all[64 * 64];
    OK(tl_tensor_read(c, w1, all, sizeof all));
    cr_assert_eq(all[4095], 0.5f);
    int32_t got[3];
    OK(tl_tensor_read(c, ids, got, sizeof got));
    cr_assert_eq(got[1], -8);
    /* Read-only: copy_into it, or into a view of it, is refused; reading it into others is fine. */
    const int64_t sw[2] = {64, 64};
    tl_tensor src, row, sum;
    OK(tl_tensor_zeros(c, TL_F32, 2, sw, &src));
    FAILS_WITH(tl_copy_into(c, src, w1), TL_E_INVALID_ARGUMENT);
    OK(tl_slice(c, w1, 0, 3, 1, &row));
    FAILS_WITH(tl_copy_into(c, src, row), TL_E_INVALID_ARGUMENT);
    OK(tl_copy_into(c, w1, src));
    OK(tl_add(c, w1, w2, &sum));
    /* The info says which pointers must not be written: the mapping and its views, not copies. */
    OK(tl_tensor_info_get(c, w1, &info));
    cr_assert_eq(info.read_only, 1, "over the mapping");
    OK(tl_tensor_info_get(c, row, &info));
    cr_assert_eq(info.read_only, 1, "a view of the mapping");
    OK(tl_tensor_info_get(c, sum, &info));
    cr_assert_eq(info.read_only, 0, "a result in memory of its own");
    /* Closing the file keeps the mapping while tensors over it live; the last one unmaps it. */
    tl_safetensors_close(f);
    cr_assert(file_is_mapped(path));
    OK(tl_tensor_read(c, w2, all, sizeof all));
    OK(tl_tensor_free(c, w1));
    OK(tl_tensor_free(c, w2));
    cr_assert(file_is_mapped(path), "ids still holds it");
    OK(tl_tensor_free(c, ids));
    cr_assert(!file_is_mapped(path), "the last tensor's death unmaps the file");
    /* In a scope: the reset is the death; the stale handle is refused, never read. */
    OK(tl_safetensors_map(c, path, &f));
    tl_scope s;
    OK(tl_scope_open(c, "frame", 0, &s));
    tl_tensor scoped;
    OK(tl_safetensors_get(c, f, "w", &scoped));
    tl_safetensors_close(f);
    cr_assert(file_is_mapped(path));
    OK(tl_scope_reset(c, s));
    cr_assert(!file_is_mapped(path));
    FAILS_WITH(tl_tensor_read(c, scoped, all, sizeof all), TL_E_STORAGE_CLOSED);
    OK(tl_scope_close(c, s));
    /* A context destroyed with mapped tensors alive gives everything back. */
    OK(tl_safetensors_map(c, path, &f));
    OK(tl_safetensors_get(c, f, "w", &w1));
    tl_safetensors_close(f);
    tl_context_destroy(c);
    cr_assert(!file_is_mapped(path));
    cr_assert_eq(counter.live_bytes, 0, "%lld bytes still held", counter.live_bytes);
}
