/* Each quantized tensor of a file written by llama.cpp's quantizer, against what tl_convert makes
 * of the same tensor of the f32 file it came from: prints, per dtype, how many tensors have
 * identical bytes, and exits 1 unless all do.
 *   quantized_bytes F32.gguf QUANTIZED.gguf */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tensorlife/tl.h>

#include "check.h"
#include "usage.h"

int main(int argc, char **argv) {
    answer_help(argc, argv, "usage: quantized_bytes F32.gguf QUANTIZED.gguf\n");
    if (argc != 3) return fputs("usage: quantized_bytes F32.gguf QUANTIZED.gguf\n", stderr), 2;
    tl_context *ctx;
    tl_gguf_file *f32, *q;
    TL_CHECK(tl_context_create(NULL, &ctx));
    TL_CHECK(tl_gguf_open(ctx, argv[1], &f32));
    TL_CHECK(tl_gguf_open(ctx, argv[2], &q));
    int same[32] = {0}, total[32] = {0}, bad = 0;
    for (size_t i = 0; i < tl_gguf_tensor_count(q); ++i) {
        const char *name = tl_gguf_tensor_name(q, i);
        tl_tensor stored, source, made;
        TL_CHECK(tl_gguf_get(ctx, q, name, &stored));
        tl_tensor_info info = TL_TENSOR_INFO_INIT;
        TL_CHECK(tl_tensor_info_get(ctx, stored, &info));
        if (info.dtype == TL_F32) continue;
        TL_CHECK(tl_gguf_get(ctx, f32, name, &source));
        TL_CHECK(tl_convert(ctx, source, info.dtype, &made));
        int64_t block, n = 1;
        size_t bytes;
        TL_CHECK(tl_dtype_block(info.dtype, &block, &bytes));
        for (int d = 0; d < info.ndim; ++d) n *= info.shape[d];
        void *a, *b;
        TL_CHECK(tl_tensor_data(ctx, stored, &a));
        TL_CHECK(tl_tensor_data(ctx, made, &b));
        const int equal = memcmp(a, b, (size_t)(n / block) * bytes) == 0;
        total[info.dtype]++, same[info.dtype] += equal;
        if (!equal) bad = 1, printf("quantized bytes: %s (%s) differs from tl_convert's\n", name, tl_dtype_name(info.dtype));
        TL_CHECK(tl_tensor_free(ctx, made));
        TL_CHECK(tl_tensor_free(ctx, source));
        TL_CHECK(tl_tensor_free(ctx, stored));
    }
    for (int dt = 0; dt < 32; ++dt)
        if (total[dt]) printf("quantized bytes: %s: %d of %d tensors identical to tl_convert's\n", tl_dtype_name((tl_dtype)dt), same[dt], total[dt]);
    tl_gguf_close(q);
    tl_gguf_close(f32);
    tl_context_destroy(ctx);
    return bad;
}
