#include "weight_block.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aligned_block.h"
#include "check.h"
#ifdef __linux__
#  include <sys/mman.h>
#endif

enum { kPlacement = 64, kHugePage = 2 << 20 };

static size_t bytes_of(tl_context *ctx, tl_tensor t, tl_tensor_info *info) {
    TL_CHECK(tl_tensor_info_get(ctx, t, info));
    int64_t block, n = 1;
    size_t bytes;
    TL_CHECK(tl_dtype_block(info->dtype, &block, &bytes));
    for (int i = 0; i < info->ndim; ++i) n *= info->shape[i];
    return (size_t)(n / block) * bytes;
}

static size_t placed(size_t bytes) { return (bytes + kPlacement - 1) / kPlacement * kPlacement; }

void weight_block_open(tl_context *ctx, weight_block *b, const tl_tensor *tensors, int count) {
    size_t size = 0;
    for (int i = 0; i < count; ++i) {
        tl_tensor_info info = TL_TENSOR_INFO_INIT;
        size += placed(bytes_of(ctx, tensors[i], &info));
    }
    b->size = (size + kHugePage - 1) / kHugePage * kHugePage;
    b->used = 0;
    b->base = aligned_block_alloc(b->size, kHugePage);
    if (!b->base) {
        fprintf(stderr, "out of memory for a %zu-byte weight block\n", b->size);
        exit(1);
    }
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    (void)madvise(b->base, b->size, MADV_HUGEPAGE); /* a request: the kernel may not grant it */
#endif
}

tl_tensor weight_block_take(tl_context *ctx, weight_block *b, tl_tensor t) {
    tl_tensor_info info = TL_TENSOR_INFO_INIT;
    const size_t bytes = bytes_of(ctx, t, &info);
    if (b->used + placed(bytes) > b->size) {
        fprintf(stderr, "the weight block was sized for other tensors\n");
        exit(1);
    }
    void *data;
    TL_CHECK(tl_tensor_data(ctx, t, &data));
    memcpy(b->base + b->used, data, bytes);
    tl_tensor wrapped;
    TL_CHECK(tl_tensor_wrap(ctx, info.dtype, info.ndim, info.shape, b->base + b->used, bytes, &wrapped));
    b->used += placed(bytes);
    TL_CHECK(tl_tensor_free(ctx, t));
    return wrapped;
}

void weight_block_close(weight_block *b) {
    aligned_block_free(b->base);
    b->base = NULL;
    b->size = b->used = 0;
}
