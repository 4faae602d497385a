/* The machine's read limit, measured several ways: read_limit.c's machine-built methods, run on
 * 1 or 2 threads by read_bandwidth.c. */
#ifndef TL_BENCH_READ_LIMIT_H
#define TL_BENCH_READ_LIMIT_H
#include <stddef.h>
#include <stdint.h>

/* Reads bytes (a multiple of 512) once with the CPU's widest vectors; returns a sum to keep. */
uint64_t read_vectorised(const void *data, size_t bytes);
/* memcpy of bytes: read once, written once (streaming stores past the cache). */
void copy_streaming(void *dst, const void *src, size_t bytes);

/* The ways of reading, each counted as bytes read a second: a portable loop (four scalar
 * accumulators), the machine-built vectorised read, a streaming copy. */
enum { READ_LOOP, READ_VECTORISED, READ_COPY, READ_METHODS };
extern const char *const read_method_names[READ_METHODS];
/* GB/s reading `bytes` of buf once by `method` on `threads` (1 or 2) threads, each its own share
 * (a copy goes into copy, as large as buf); the best of `reps`. */
double read_bandwidth_by(int method, const uint64_t *buf, uint64_t *copy, size_t bytes, int threads, int reps);
/* The best of every method, each the best of `reps`. */
double read_bandwidth(const uint64_t *buf, uint64_t *copy, size_t bytes, int threads, int reps);
/* A buffer of bytes to read: on 4 KiB pages (huge 0: malloc), or (huge 1) a 2 MiB-aligned mapping
 * advised for transparent huge pages, where a stream's reads pay no TLB miss every 4 KiB (Linux;
 * NULL elsewhere).  Given back with read_buffer_free. */
uint64_t *read_buffer(size_t bytes, int huge);
void read_buffer_free(uint64_t *buf, size_t bytes, int huge);
#endif
