/* A small decode loop: the pattern tensorlife is built for.
 *
 * Weights live ambient for the whole run.  The KV cache lives in an outer scope that is never
 * reset; each step writes its key and value row into it with tl_copy_into.  Everything else a
 * step makes lives in the "decode-step" scope, which is reset after every token, so after the
 * first step the loop allocates nothing: the counting allocator below proves it.
 *
 * The model is a one-layer, one-head transformer with random weights from a fixed seed
 * (d_model 64, vocab 256): small, but every op a real decoder uses. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <tensorlife/tl.h>

#include "aligned_block.h"
#include "check.h"
#include "usage.h"

#define D 64
#define VOCAB 256
#define TOKENS 48

static long allocations;
static void *counting_alloc(void *user, size_t size, size_t alignment) {
    (void)user;
    ++allocations;
    return aligned_block_alloc(size, alignment);
}
static void counting_free(void *user, void *ptr, size_t size) {
    (void)user;
    (void)size;
    aligned_block_free(ptr);
}

static tl_tensor random_matrix(tl_context *ctx, int64_t rows, int64_t cols, unsigned *seed) {
    float *data = malloc(sizeof(float) * (size_t)(rows * cols));
    for (int64_t i = 0; i < rows * cols; ++i) {
        *seed = *seed * 1664525u + 1013904223u;
        data[i] = ((float)(*seed >> 8) / 16777216.0f - 0.5f) / sqrtf((float)rows);
    }
    int64_t shape[2] = {rows, cols};
    tl_tensor t;
    TL_CHECK(tl_tensor_from_data(ctx, TL_F32, 2, shape, data, sizeof(float) * (size_t)(rows * cols), &t));
    free(data);
    return t;
}

int main(int argc, char **argv) {
    no_arguments(argc, argv,
                 "usage: decode_loop\n"
                 "A one-layer decode loop whose steps live in a scope reset after every token; exits 1 unless\n"
                 "every step after the first makes no allocator call.\n");
    tl_allocator alloc = {NULL, counting_alloc, counting_free};
    tl_context *ctx;
    TL_CHECK(tl_context_create(&alloc, &ctx));

    unsigned seed = 42;
    tl_tensor embed = random_matrix(ctx, VOCAB, D, &seed), wq = random_matrix(ctx, D, D, &seed),
              wk = random_matrix(ctx, D, D, &seed), wv = random_matrix(ctx, D, D, &seed),
              wo = random_matrix(ctx, D, D, &seed), w_up = random_matrix(ctx, D, 4 * D, &seed),
              w_down = random_matrix(ctx, 4 * D, D, &seed), w_out = random_matrix(ctx, D, VOCAB, &seed);
    int64_t d_shape[1] = {D};
    tl_tensor norm_w;
    TL_CHECK(tl_tensor_ones(ctx, TL_F32, 1, d_shape, &norm_w));

    tl_scope cache_scope, step;
    TL_CHECK(tl_scope_open(ctx, "kv-cache", 0, &cache_scope));
    int64_t cache_shape[2] = {TOKENS, D};
    tl_tensor k_cache, v_cache;
    TL_CHECK(tl_tensor_zeros(ctx, TL_F32, 2, cache_shape, &k_cache));
    TL_CHECK(tl_tensor_zeros(ctx, TL_F32, 2, cache_shape, &v_cache));
    TL_CHECK(tl_scope_open(ctx, "decode-step", 0, &step));

    int32_t token = 1;
    long steady_allocations = 0; /* allocator calls in every step after the first: must stay 0 */
    printf("step  token  allocations  slab_bytes  peak_bytes  grow_events\n");
    for (int pos = 0; pos < TOKENS; ++pos) {
        long before = allocations;
        int64_t one = 1;
        tl_tensor ids, x, h, q, k, v, row, keys, values, kt, scores, attn, ctxv, o, up, down, logits, best;
        TL_CHECK(tl_tensor_from_data(ctx, TL_I32, 1, &one, &token, sizeof token, &ids));
        TL_CHECK(tl_gather_rows(ctx, embed, ids, &x)); /* [1, D] */
        TL_CHECK(tl_rmsnorm(ctx, x, norm_w, 1e-5, &h));
        TL_CHECK(tl_matmul(ctx, h, wq, &q));
        TL_CHECK(tl_matmul(ctx, h, wk, &k));
        TL_CHECK(tl_matmul(ctx, h, wv, &v));
        TL_CHECK(tl_slice(ctx, k_cache, 0, pos, 1, &row));
        TL_CHECK(tl_copy_into(ctx, k, row));
        TL_CHECK(tl_slice(ctx, v_cache, 0, pos, 1, &row));
        TL_CHECK(tl_copy_into(ctx, v, row));
        TL_CHECK(tl_slice(ctx, k_cache, 0, 0, pos + 1, &keys)); /* [pos+1, D] views of the cache */
        TL_CHECK(tl_slice(ctx, v_cache, 0, 0, pos + 1, &values));
        TL_CHECK(tl_transpose(ctx, keys, 0, 1, &kt));
        TL_CHECK(tl_matmul(ctx, q, kt, &scores)); /* [1, pos+1], BLAS reads the transposed view */
        TL_CHECK(tl_scale(ctx, scores, 1.0 / sqrt((double)D), &scores));
        TL_CHECK(tl_softmax(ctx, scores, -1, &attn));
        TL_CHECK(tl_matmul(ctx, attn, values, &ctxv));
        TL_CHECK(tl_matmul(ctx, ctxv, wo, &o));
        TL_CHECK(tl_add(ctx, x, o, &x));
        TL_CHECK(tl_rmsnorm(ctx, x, norm_w, 1e-5, &h));
        TL_CHECK(tl_matmul(ctx, h, w_up, &up));
        TL_CHECK(tl_silu(ctx, up, &up));
        TL_CHECK(tl_matmul(ctx, up, w_down, &down));
        TL_CHECK(tl_add(ctx, x, down, &x));
        TL_CHECK(tl_matmul(ctx, x, w_out, &logits));
        TL_CHECK(tl_argmax(ctx, logits, -1, &best));
        TL_CHECK(tl_tensor_read(ctx, best, &token, sizeof token));
        TL_CHECK(tl_scope_reset(ctx, step)); /* every tensor of this step dies here */
        if (pos > 0) steady_allocations += allocations - before;
        tl_scope_stats st = TL_SCOPE_STATS_INIT;
        TL_CHECK(tl_scope_stats_get(ctx, step, &st));
        if (pos < 3 || pos % 10 == 0 || pos == TOKENS - 1)
            printf("%4d  %5d  %11ld  %10zu  %10zu  %11llu\n", pos, token, allocations - before, st.slab_bytes,
                   st.peak_bytes, (unsigned long long)st.grow_events);
    }
    /* A handle kept past its reset is refused, with the storage named. */
    tl_tensor stale;
    int64_t one = 1;
    TL_CHECK(tl_tensor_zeros(ctx, TL_F32, 1, &one, &stale));
    TL_CHECK(tl_scope_reset(ctx, step));
    float value;
    tl_status st = tl_tensor_read(ctx, stale, &value, sizeof value);
    printf("stale handle: %s: %s\n", tl_status_string(st), tl_last_error());

    TL_CHECK(tl_scope_close(ctx, step));
    TL_CHECK(tl_scope_close(ctx, cache_scope));
    tl_context_destroy(ctx);
    /* The exit code is the two promises this loop shows: a steady state that allocates nothing,
     * and a stale handle refused as closed storage. */
    printf("allocator calls after step one: %ld\n", steady_allocations);
    if (steady_allocations != 0) {
        fprintf(stderr, "decode_loop: %ld allocator calls after the first step, want 0\n", steady_allocations);
        return 1;
    }
    if (st != TL_E_STORAGE_CLOSED) {
        fprintf(stderr, "decode_loop: the stale handle gave %s, want TL_E_STORAGE_CLOSED\n", tl_status_string(st));
        return 1;
    }
    return 0;
}
