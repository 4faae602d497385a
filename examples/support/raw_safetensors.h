/* Safetensors files written byte by byte, for the tests and benchmarks that need a file the
 * library's own writer would not make (a chosen header text or declared length), or a great
 * many tiny tensors written fast.  Each returns 0 when every byte was written, else -1. */
#ifndef TL_SUPPORT_RAW_SAFETENSORS_H
#define TL_SUPPORT_RAW_SAFETENSORS_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* The 8-byte little-endian length `declared`, header_len bytes of header text, then data_len
 * bytes of data (data NULL: that many bytes of 0x11). */
static inline int write_safetensors_declaring(const char *path, uint64_t declared, const char *header,
                                              size_t header_len, const void *data, size_t data_len) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    unsigned char len[8];
    for (int i = 0; i < 8; ++i) len[i] = (unsigned char)(declared >> (8 * i));
    int ok = fwrite(len, 1, 8, f) == 8 && fwrite(header, 1, header_len, f) == header_len;
    if (data)
        ok = ok && (data_len == 0 || fwrite(data, 1, data_len, f) == data_len);
    else
        for (size_t i = 0; ok && i < data_len; ++i) ok = fputc(0x11, f) != EOF;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* The same with the header's true length. */
static inline int write_raw_safetensors(const char *path, const char *header, size_t header_len, const void *data,
                                        size_t data_len) {
    return write_safetensors_declaring(path, header_len, header, header_len, data, data_len);
}

/* n tensors "t0" .. "t<n-1>" of one F32 each, tensor i holding the value i. */
static inline int write_tiny_tensors(const char *path, int n) {
    size_t cap = (size_t)n * 96 + 16, len = 0; /* an entry takes at most 80 bytes while n < 10^8 */
    char *header = malloc(cap);
    float *data = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
    int rc = -1;
    if (header && data) {
        len += (size_t)snprintf(header + len, cap - len, "{");
        for (int i = 0; i < n; ++i) {
            len += (size_t)snprintf(header + len, cap - len,
                                    "%s\"t%d\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[%lld,%lld]}",
                                    i ? "," : "", i, 4LL * i, 4LL * i + 4);
            data[i] = (float)i;
        }
        len += (size_t)snprintf(header + len, cap - len, "}");
        rc = write_raw_safetensors(path, header, len, data, sizeof(float) * (size_t)n);
    }
    free(header);
    free(data);
    return rc;
}
#endif
