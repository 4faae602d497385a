/* Aligned blocks from the C heap, for the allocators that programs hand to tl_context_create:
 * posix_memalign on POSIX, _aligned_malloc on Windows (whose blocks go back to _aligned_free). */
#ifndef TL_PROGRAM_ALIGNED_BLOCK_H
#define TL_PROGRAM_ALIGNED_BLOCK_H

#include <stdlib.h>
#ifdef _WIN32
#  include <malloc.h>
#endif

static inline void *aligned_block_alloc(size_t size, size_t alignment) {
    if (alignment < sizeof(void *)) alignment = sizeof(void *);
#ifdef _WIN32
    return _aligned_malloc(size ? size : 1, alignment);
#else
    void *p = NULL;
    return posix_memalign(&p, alignment, size) == 0 ? p : NULL;
#endif
}

static inline void aligned_block_free(void *p) {
#ifdef _WIN32
    _aligned_free(p);
#else
    free(p);
#endif
}

#endif
