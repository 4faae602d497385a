/* The machine's read limit, measured the ways a kernel could reach it, built for this machine
 * (-O3 -march=native: the widest vectors the CPU has, whatever the library's baseline):
 *   a vectorised read with eight independent accumulators (no chain between loads), and
 *   a streaming copy (memcpy: glibc streams large copies past the cache), counted as bytes read.
 * The benchmarks take the best of these, read_bandwidth.c's portable loop and raw sgemv as the limit. */
#include "read_limit.h"

#include <stdint.h>
#include <string.h>

typedef long long lanes __attribute__((vector_size(64), aligned(8)));

uint64_t read_vectorised(const void *data, size_t bytes) {
    const lanes *p = data;
    const size_t n = bytes / sizeof(lanes);
    lanes a0 = {0}, a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        a0 += p[i], a1 += p[i + 1], a2 += p[i + 2], a3 += p[i + 3];
        a4 += p[i + 4], a5 += p[i + 5], a6 += p[i + 6], a7 += p[i + 7];
    }
    const lanes s = ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7));
    uint64_t sum = 0;
    for (int l = 0; l < 8; ++l) sum += (uint64_t)s[l];
    return sum;
}

void copy_streaming(void *dst, const void *src, size_t bytes) { memcpy(dst, src, bytes); }
