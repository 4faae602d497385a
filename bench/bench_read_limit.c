/* The machine's read limit alone, for scripts that set a figure of theirs beside it
 * (bench/llamacpp.sh: a decoded token's weight bytes over its time): the best of every read
 * method over 512 MiB, far past the caches, the best of 5 each, at 1 and 2 threads.
 * Prints "read limit: GB1 GB2" (GB/s at 1 and 2 threads). */
#include <stdio.h>
#include <stdlib.h>

#include "read_limit.h"

int main(void) {
    const size_t bytes = (size_t)512 << 20;
    uint64_t *buf = malloc(bytes), *copy = malloc(bytes);
    if (!buf || !copy) return 1;
    for (size_t i = 0; i < bytes / 8; ++i) buf[i] = i, copy[i] = 0;
    const double one = read_bandwidth(buf, copy, bytes, 1, 5), two = read_bandwidth(buf, copy, bytes, 2, 5);
    printf("read limit: %.2f %.2f\n", one, two);
    free(buf), free(copy);
    return 0;
}
