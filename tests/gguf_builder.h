/* GGUF files written byte by byte for the suites (llama.cpp's layout, independent of the
 * library's reader): keys of each kind, f32 tensors, the file. */
#ifndef TL_TESTS_GGUF_BUILDER_H
#define TL_TESTS_GGUF_BUILDER_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct gguf_builder {
    unsigned char *keys, *infos, *data;
    size_t n_keys_bytes, n_infos_bytes, n_data, cap_keys, cap_infos, cap_data;
    uint64_t keys_count, tensors;
} gguf_builder;

static inline void gb_put(unsigned char **buf, size_t *n, size_t *cap, const void *p, size_t len) {
    if (*n + len > *cap) {
        *cap = (*n + len) * 2 + 4096;
        *buf = (unsigned char *)realloc(*buf, *cap);
    }
    memcpy(*buf + *n, p, len);
    *n += len;
}
#define GB_KEY(b, p, len) gb_put(&(b)->keys, &(b)->n_keys_bytes, &(b)->cap_keys, (p), (len))
static inline void gb_u32(gguf_builder *b, uint32_t v) { GB_KEY(b, &v, 4); }
static inline void gb_u64(gguf_builder *b, uint64_t v) { GB_KEY(b, &v, 8); }
static inline void gb_str(gguf_builder *b, const char *s) {
    gb_u64(b, strlen(s));
    GB_KEY(b, s, strlen(s));
}
static inline void gb_key_string(gguf_builder *b, const char *key, const char *value) {
    gb_str(b, key), gb_u32(b, 8), gb_str(b, value), b->keys_count++;
}
static inline void gb_key_u32(gguf_builder *b, const char *key, uint32_t value) {
    gb_str(b, key), gb_u32(b, 4), gb_u32(b, value), b->keys_count++;
}
static inline void gb_key_f32(gguf_builder *b, const char *key, float value) {
    gb_str(b, key), gb_u32(b, 6), GB_KEY(b, &value, 4), b->keys_count++;
}
static inline void gb_key_strings(gguf_builder *b, const char *key, const char *const *items, size_t n) {
    gb_str(b, key), gb_u32(b, 9), gb_u32(b, 8), gb_u64(b, n), b->keys_count++;
    for (size_t i = 0; i < n; ++i) gb_str(b, items[i]);
}
static inline void gb_key_floats(gguf_builder *b, const char *key, const float *items, size_t n) {
    gb_str(b, key), gb_u32(b, 9), gb_u32(b, 6), gb_u64(b, n), b->keys_count++;
    GB_KEY(b, items, n * sizeof(float));
}
static inline void gb_key_ints(gguf_builder *b, const char *key, const int32_t *items, size_t n) {
    gb_str(b, key), gb_u32(b, 9), gb_u32(b, 5), gb_u64(b, n), b->keys_count++;
    GB_KEY(b, items, n * sizeof(int32_t));
}
/* An f32 tensor of row-major shape (rows, cols), cols 0 for a vector. */
static inline void gb_tensor_f32(gguf_builder *b, const char *name, int64_t rows, int64_t cols, const float *values) {
    const uint64_t len = strlen(name), ndim = cols ? 2 : 1, offset = b->n_data;
    gb_put(&b->infos, &b->n_infos_bytes, &b->cap_infos, &len, 8);
    gb_put(&b->infos, &b->n_infos_bytes, &b->cap_infos, name, len);
    const uint32_t nd = (uint32_t)ndim, type = 0;
    gb_put(&b->infos, &b->n_infos_bytes, &b->cap_infos, &nd, 4);
    const uint64_t dims[2] = {(uint64_t)(cols ? cols : rows), (uint64_t)rows}; /* innermost first */
    gb_put(&b->infos, &b->n_infos_bytes, &b->cap_infos, dims, 8 * ndim);
    gb_put(&b->infos, &b->n_infos_bytes, &b->cap_infos, &type, 4);
    gb_put(&b->infos, &b->n_infos_bytes, &b->cap_infos, &offset, 8);
    const size_t bytes = (size_t)(rows * (cols ? cols : 1)) * sizeof(float);
    gb_put(&b->data, &b->n_data, &b->cap_data, values, bytes);
    static const unsigned char zeros[32] = {0};
    gb_put(&b->data, &b->n_data, &b->cap_data, zeros, (32 - bytes % 32) % 32);
    b->tensors++;
}
/* The whole file at path; 0 on success.  The builder is emptied. */
static inline int gb_write(gguf_builder *b, const char *path) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    const uint32_t version = 3;
    fwrite("GGUF", 1, 4, f), fwrite(&version, 4, 1, f), fwrite(&b->tensors, 8, 1, f), fwrite(&b->keys_count, 8, 1, f);
    fwrite(b->keys, 1, b->n_keys_bytes, f), fwrite(b->infos, 1, b->n_infos_bytes, f);
    const long head = 24 + (long)b->n_keys_bytes + (long)b->n_infos_bytes;
    static const unsigned char zeros[32] = {0};
    fwrite(zeros, 1, (size_t)((32 - head % 32) % 32), f);
    fwrite(b->data, 1, b->n_data, f);
    const int bad = fclose(f) != 0;
    free(b->keys), free(b->infos), free(b->data);
    memset(b, 0, sizeof *b);
    return bad ? -1 : 0;
}
#endif
