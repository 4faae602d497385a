/* The demo's allocator: counts every call and the bytes held, with a resettable high-water mark. */
#ifndef TL_DECODE_METER_H
#define TL_DECODE_METER_H

#include <stddef.h>
#include <time.h>

#include "aligned_block.h"

typedef struct memory_meter {
    long calls;
    size_t live, peak;
} memory_meter;

static inline void *meter_alloc(void *user, size_t size, size_t alignment) {
    memory_meter *m = (memory_meter *)user;
    void *p = aligned_block_alloc(size, alignment);
    if (!p) return NULL;
    m->calls++;
    m->live += size;
    if (m->live > m->peak) m->peak = m->live;
    return p;
}

static inline void meter_free(void *user, void *ptr, size_t size) {
    memory_meter *m = (memory_meter *)user;
    m->live -= size;
    aligned_block_free(ptr);
}

static inline double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

#endif
