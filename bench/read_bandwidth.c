/* The read limit's methods run on 1 or 2 threads, each thread its own share of the buffer; built
 * like the benchmarks (the portable loop stays the loop a library's baseline build makes). */
#include <pthread.h>
#include <stdlib.h>
#ifdef __linux__
#  include <sys/mman.h>
#endif

#include "bench_util.h"
#include "read_limit.h"

const char *const read_method_names[READ_METHODS] = {"read loop", "vectorised read", "streaming copy"};

typedef struct reader {
    int method;
    const uint64_t *data;
    uint64_t *copy; /* where a streaming copy of data goes */
    size_t words;
    uint64_t sum;
} reader;

static void *read_all(void *arg) {
    reader *r = arg;
    if (r->method == READ_VECTORISED) {
        r->sum = read_vectorised(r->data, r->words * 8);
    } else if (r->method == READ_COPY) {
        copy_streaming(r->copy, r->data, r->words * 8);
        r->sum = r->copy[0];
    } else {
        uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        for (size_t i = 0; i + 4 <= r->words; i += 4)
            s0 += r->data[i], s1 += r->data[i + 1], s2 += r->data[i + 2], s3 += r->data[i + 3];
        r->sum = s0 + s1 + s2 + s3;
    }
    return NULL;
}

double read_bandwidth_by(int method, const uint64_t *buf, uint64_t *copy, size_t bytes, int threads, int reps) {
    double best = 0;
    if (threads < 1 || threads > 2) return 0; /* the benchmarks measure 1 and 2 */
    for (int r = 0; r < reps; ++r) {
        pthread_t t[2];
        reader part[2];
        const size_t share = bytes / 8 / (size_t)threads;
        const double t0 = now_ns();
        for (int i = 0; i < threads; ++i) {
            part[i] = (reader){method, buf + (size_t)i * share, copy + (size_t)i * share, share, 0};
            pthread_create(&t[i], NULL, read_all, &part[i]);
        }
        for (int i = 0; i < threads; ++i) pthread_join(t[i], NULL);
        const double gbs = (double)bytes / (now_ns() - t0);
        if (part[0].sum == 42) printf(" "); /* keep the sums */
        if (gbs > best) best = gbs;
    }
    return best;
}

double read_bandwidth(const uint64_t *buf, uint64_t *copy, size_t bytes, int threads, int reps) {
    double best = 0;
    for (int m = 0; m < READ_METHODS; ++m) {
        const double gbs = read_bandwidth_by(m, buf, copy, bytes, threads, reps);
        if (gbs > best) best = gbs;
    }
    return best;
}

uint64_t *read_buffer(size_t bytes, int huge) {
    if (!huge) return malloc(bytes);
#ifdef __linux__
    const size_t two_mib = (size_t)2 << 20;
    char *p = mmap(NULL, bytes + two_mib, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    char *start = (char *)(((uintptr_t)p + two_mib - 1) & ~(uintptr_t)(two_mib - 1));
    if (start > p) munmap(p, (size_t)(start - p));
    if (p + bytes + two_mib > start + bytes) munmap(start + bytes, (size_t)(p + two_mib - start));
    madvise(start, bytes, MADV_HUGEPAGE);
    return (uint64_t *)start;
#else
    return NULL;
#endif
}

void read_buffer_free(uint64_t *buf, size_t bytes, int huge) {
    if (!huge) {
        free(buf);
        return;
    }
#ifdef __linux__
    if (buf) munmap(buf, bytes);
#else
    (void)buf, (void)bytes;
#endif
}
