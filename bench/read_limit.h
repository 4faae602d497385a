/* read_limit.c: the read limit's machine-built methods. */
#ifndef TL_BENCH_READ_LIMIT_H
#define TL_BENCH_READ_LIMIT_H
#include <stddef.h>
#include <stdint.h>

/* Reads bytes (a multiple of 512) once with the CPU's widest vectors; returns a sum to keep. */
uint64_t read_vectorised(const void *data, size_t bytes);
/* memcpy of bytes: read once, written once (streaming stores past the cache). */
void copy_streaming(void *dst, const void *src, size_t bytes);
#endif
