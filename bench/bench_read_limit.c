/* The machine's read limit alone, for scripts that set a figure of theirs beside it
 * (bench/llamacpp.sh: a decoded token's weight bytes over its time): the best of every read
 * method over 512 MiB, far past the caches, the best of 5 each, at 1 and 2 threads, on 4 KiB
 * pages and on huge ones (where the system grants them).
 * Prints "read limit: GB1 GB2" (GB/s at 1 and 2 threads), then each kind of page's. */
#include <stdio.h>

#include "read_limit.h"

int main(void) {
    const size_t bytes = (size_t)512 << 20;
    double limit[2][2] = {{0, 0}, {0, 0}}; /* [huge][threads - 1] */
    for (int huge = 0; huge < 2; ++huge) {
        uint64_t *buf = read_buffer(bytes, huge), *copy = read_buffer(bytes, huge);
        if (buf && copy) {
            for (size_t i = 0; i < bytes / 8; ++i) buf[i] = i, copy[i] = 0;
            limit[huge][0] = read_bandwidth(buf, copy, bytes, 1, 5);
            limit[huge][1] = read_bandwidth(buf, copy, bytes, 2, 5);
        } else if (!huge) {
            return 1;
        }
        read_buffer_free(buf, bytes, huge), read_buffer_free(copy, bytes, huge);
    }
    printf("read limit: %.2f %.2f\n", limit[1][0] > limit[0][0] ? limit[1][0] : limit[0][0],
           limit[1][1] > limit[0][1] ? limit[1][1] : limit[0][1]);
    printf("on 4 KiB pages: %.2f %.2f; on huge pages: %.2f %.2f\n", limit[0][0], limit[0][1], limit[1][0], limit[1][1]);
    return 0;
}
