/* tensorlife's products with q8_0, q4_0, q5_0, q4_1, q5_1, q4_K, q5_K and q6_K weights against llama.cpp's
 * own CPU kernels (libggml-cpu from LLamaSharp.Backend.Cpu, loaded at run time): the same activations
 * quantized by ggml's quantize_row_q8_0 / _q8_1 / _q8_K and dotted by its
 * ggml_vec_dot_*, row by row, must give the same float, bit for bit, as tl_matmul.  tensorlife
 * promises llama.cpp's order of additions on AVX3_DL (q8_0, q4_0, q5_0, q4_1, q5_1) and AVX3/AVX3_DL (the K formats,
 * kernels/kquant_dot.cpp): elsewhere the products are compared within rounding only.
 *   ggml_products DIR_OF_libggml-cpu.so */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tensorlife/tl.h>

#include "check.h"
#include "usage.h"

typedef void (*quantize_fn)(const float *, void *, int64_t);
typedef void (*dot_fn)(int, float *, size_t, const void *, size_t, const void *, size_t, int);

static uint32_t state = 12345;
static float uniform(void) { /* in [-1, 1) */
    state = state * 1664525u + 1013904223u;
    return (float)(state >> 8) / (float)(1 << 23) - 1.0f;
}

/* rows x k weights of dt against xrows rows of activations (a spread of magnitudes, zeros, a
 * tie; 1 row: the one-row kernel, 9: a prompt's, through the panels or row groups); returns how
 * many of the products differ from ggml's. */
static int compare(void *ggml, tl_dtype dt, const char *quantize_name, const char *dot_name, int64_t k, int64_t rows,
                   int64_t xrows, int exact) {
    quantize_fn quantize = (quantize_fn)dlsym(ggml, quantize_name);
    dot_fn dot = (dot_fn)dlsym(ggml, dot_name);
    if (!quantize || !dot) return printf("ggml products: %s or %s missing\n", quantize_name, dot_name), 1;
    float *x = malloc(sizeof(float) * (size_t)(k * xrows)), *w = malloc(sizeof(float) * (size_t)(k * rows));
    float *ours = malloc(sizeof(float) * (size_t)(rows * xrows));
    for (int64_t i = 0; i < k * xrows; ++i) x[i] = uniform() * (i % 97 == 0 ? 40.0f : i % 5 == 0 ? 0.01f : 2.0f);
    for (int64_t i = 0; i < 32; ++i) x[i] = 0; /* an all-zero block */
    for (int64_t i = 0; i < k * rows; ++i) w[i] = uniform();
    tl_context *ctx;
    TL_CHECK(tl_context_create(NULL, &ctx));
    const int64_t xs[2] = {xrows, k}, ws[2] = {rows, k};
    tl_tensor xt, wf, wq, wt, y;
    TL_CHECK(tl_tensor_from_data(ctx, TL_F32, 2, xs, x, sizeof(float) * (size_t)(k * xrows), &xt));
    TL_CHECK(tl_tensor_from_data(ctx, TL_F32, 2, ws, w, sizeof(float) * (size_t)(k * rows), &wf));
    TL_CHECK(tl_convert(ctx, wf, dt, &wq));
    TL_CHECK(tl_transpose(ctx, wq, 0, 1, &wt));
    TL_CHECK(tl_matmul(ctx, xt, wt, &y));
    TL_CHECK(tl_tensor_read(ctx, y, ours, sizeof(float) * (size_t)(rows * xrows)));
    int64_t block;
    size_t block_bytes;
    TL_CHECK(tl_dtype_block(dt, &block, &block_bytes));
    const size_t row_bytes = (size_t)(k / block) * block_bytes;
    const unsigned char *weights;
    TL_CHECK(tl_tensor_data(ctx, wq, (void **)&weights));
    unsigned char activations[1 << 16]; /* q8_0: 34 bytes a 32, q8_1: 36, q8_K: 292 a 256 */
    int differ = 0, outside = 0;
    for (int64_t i = 0; i < xrows; ++i) {
        quantize(x + i * k, activations, k);
        for (int64_t r = 0; r < rows; ++r) {
            float theirs;
            const float mine = ours[i * rows + r];
            dot((int)k, &theirs, 0, weights + (size_t)r * row_bytes, 0, activations, 0, 1);
            if (memcmp(&theirs, &mine, sizeof theirs) != 0) ++differ;
            if (fabsf(theirs - mine) > 1e-5f * (1 + fabsf(theirs))) ++outside;
        }
    }
    printf("ggml products: %s, k %lld, %lld activation row%s: %lld of %lld products bit-identical to llama.cpp's %s%s\n",
           tl_dtype_name(dt), (long long)k, (long long)xrows, xrows > 1 ? "s" : "", (long long)(rows * xrows - differ),
           (long long)(rows * xrows), dot_name, exact ? "" : " (not promised here)");
    free(x), free(w), free(ours);
    tl_context_destroy(ctx);
    return exact ? differ : outside;
}

int main(int argc, char **argv) {
    answer_help(argc, argv, "usage: ggml_products DIR_OF_libggml-cpu.so\n");
    if (argc != 2) return fputs("usage: ggml_products DIR_OF_libggml-cpu.so\n", stderr), 2;
    char path[4096];
    snprintf(path, sizeof path, "%s/libggml-base.so", argv[1]);
    if (!dlopen(path, RTLD_NOW | RTLD_GLOBAL)) return printf("ggml products: %s\n", dlerror()), 1;
    snprintf(path, sizeof path, "%s/libggml-cpu.so", argv[1]);
    void *ggml = dlopen(path, RTLD_NOW);
    if (!ggml) return printf("ggml products: %s\n", dlerror()), 1;
    void (*init)(void) = (void (*)(void))dlsym(ggml, "ggml_cpu_init"); /* its f16 table */
    if (!init) return puts("ggml products: ggml_cpu_init missing"), 1;
    init();
    const char *target = tl_simd_target();
    const int avx3 = !strcmp(target, "AVX3") || !strcmp(target, "AVX3_DL"), vnni = !strcmp(target, "AVX3_DL");
    printf("ggml products: tensorlife's kernels on %s\n", target);
    int bad = 0;
    const int64_t lengths[3] = {256, 1408 / 32 * 32, 4096}, super_lengths[2] = {256, 5632};
    for (int64_t xrows = 1; xrows <= 9; xrows += 8) {
        for (int i = 0; i < 3; ++i) {
            bad += compare(ggml, TL_Q8_0, "quantize_row_q8_0", "ggml_vec_dot_q8_0_q8_0", lengths[i], 67, xrows, vnni);
            bad += compare(ggml, TL_Q4_0, "quantize_row_q8_0", "ggml_vec_dot_q4_0_q8_0", lengths[i], 67, xrows, vnni);
            bad += compare(ggml, TL_Q5_0, "quantize_row_q8_0", "ggml_vec_dot_q5_0_q8_0", lengths[i], 67, xrows, vnni);
            bad += compare(ggml, TL_Q4_1, "quantize_row_q8_1", "ggml_vec_dot_q4_1_q8_1", lengths[i], 67, xrows, vnni);
            bad += compare(ggml, TL_Q5_1, "quantize_row_q8_1", "ggml_vec_dot_q5_1_q8_1", lengths[i], 67, xrows, vnni);
        }
        for (int i = 0; i < 2; ++i) {
            bad += compare(ggml, TL_Q4_K, "quantize_row_q8_K", "ggml_vec_dot_q4_K_q8_K", super_lengths[i], 67, xrows, avx3);
            bad += compare(ggml, TL_Q5_K, "quantize_row_q8_K", "ggml_vec_dot_q5_K_q8_K", super_lengths[i], 67, xrows, avx3);
            bad += compare(ggml, TL_Q6_K, "quantize_row_q8_K", "ggml_vec_dot_q6_K_q8_K", super_lengths[i], 67, xrows, avx3);
        }
    }
    return bad ? 1 : 0;
}
