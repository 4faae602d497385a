/* The model's stored weights in one block of memory, one after another in the order a step reads
 * them (ggml keeps a model in one buffer too): a step then streams one region, not one mapping per
 * matrix, and on Linux the block asks for huge pages.  Measured in bench/README.md. */
#ifndef TL_DECODE_WEIGHT_BLOCK_H
#define TL_DECODE_WEIGHT_BLOCK_H

#include <stddef.h>
#include <tensorlife/tl.h>

typedef struct weight_block {
    unsigned char *base;
    size_t size, used;
} weight_block;

/* A block for these tensors (contiguous, each placed at a 64-byte boundary). */
void weight_block_open(tl_context *ctx, weight_block *b, const tl_tensor *tensors, int count);
/* t copied into the block and wrapped there (same dtype and shape); t is freed. */
tl_tensor weight_block_take(tl_context *ctx, weight_block *b, tl_tensor t);
/* After the wrapped tensors are freed. */
void weight_block_close(weight_block *b);

#endif
