/* An allocator that counts calls and bytes and can refuse the Nth allocation: for the suites
 * (through common.h) and the test programs that are no Criterion suite (threads/soak.c). */
#ifndef TL_TESTS_COUNTING_ALLOCATOR_H
#define TL_TESTS_COUNTING_ALLOCATOR_H

#include <tensorlife/tl.h>

#include "aligned_block.h"

typedef struct counting_allocator {
    long allocs, frees;
    long long live_bytes;
    long fail_at; /* 0: never; else the allocation with this number (1-based) fails */
} counting_allocator;

static inline void *counting_alloc(void *user, size_t size, size_t alignment) {
    counting_allocator *c = (counting_allocator *)user;
    c->allocs++;
    if (c->fail_at && c->allocs == c->fail_at) return NULL;
    void *p = aligned_block_alloc(size, alignment);
    if (!p) return NULL;
    c->live_bytes += (long long)size;
    return p;
}

static inline void counting_free(void *user, void *ptr, size_t size) {
    counting_allocator *c = (counting_allocator *)user;
    c->frees++;
    c->live_bytes -= (long long)size;
    aligned_block_free(ptr);
}

static inline tl_allocator counting_allocator_of(counting_allocator *c) {
    tl_allocator a = {c, counting_alloc, counting_free};
    return a;
}

#endif
