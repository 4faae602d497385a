/* tensorlife: safetensors, GGUF and JSON.  Part of <tensorlife/tl.h>.  Why: docs/files.md.
 *
 * JSON is parsed and printed with cJSON.  cJSON's allocation hooks are process-wide, so
 * tensorlife leaves them to the application: the transient nodes of a parse or a print come
 * from the C heap.  Every byte tensorlife keeps (tensors, an open file's index, returned
 * strings) comes from the context's allocator; an open file holds one descriptor.
 *
 * Paths must name regular files: directories, FIFOs and devices are TL_E_IO, and opening never
 * blocks on them. */
#ifndef TENSORLIFE_TL_IO_H
#define TENSORLIFE_TL_IO_H

#include "tl_tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- safetensors ---------------------------------------------------------------------------
 * An open file: its header is parsed and checked at open (dtypes, shapes, offsets in range and
 * not overlapping, byte counts matching shapes); tensor data is read at tl_safetensors_get.  F32, F64,
 * I32, F16 and BF16 load as themselves (TL_F16, TL_BF16 are storage dtypes: tl_tensor.h).  Malformed files give TL_E_PARSE
 * (or TL_E_IO for files that cannot be opened or read) with a message naming the problem. */
typedef struct tl_safetensors_file tl_safetensors_file;

/* Headers larger than this are refused as malformed (TL_E_PARSE). */
#define TL_SAFETENSORS_MAX_HEADER_BYTES (100u * 1024u * 1024u)

TL_API tl_status tl_safetensors_open(tl_context *ctx, const char *path, tl_safetensors_file **out);
/* tl_safetensors_open with the data mapped read-only: tl_safetensors_get then gives aligned
 * tensors over the mapping, no copy (tl_safetensors_maps says which), read-only (tl_copy_into
 * into one is TL_E_INVALID_ARGUMENT).  The mapping lives until the file is closed and the last
 * tensor over it has died. */
TL_API tl_status tl_safetensors_map(tl_context *ctx, const char *path, tl_safetensors_file **out);
/* 1 when tl_safetensors_get of name gives a tensor over the mapping, 0 when it copies or there is none. */
TL_API int tl_safetensors_maps(const tl_safetensors_file *f, const char *name);
/* Number of tensors (0 for NULL).  Names in file order, NULL past the end. */
TL_API size_t tl_safetensors_count(const tl_safetensors_file *f);
TL_API const char *tl_safetensors_name(const tl_safetensors_file *f, size_t i);
/* Reads one tensor into the current target (ambient or the current scope).  Names are looked
 * up in a sorted index: opening costs O(n log n) in the tensor count, a get O(log n).  A header
 * whose strings hold a NUL character, or with bytes after its JSON object other than space
 * padding, is TL_E_PARSE.  A name the file does not hold is TL_E_NOT_FOUND. */
TL_API tl_status tl_safetensors_get(tl_context *ctx, tl_safetensors_file *f, const char *name, tl_tensor *out);
/* NULL is a no-op.  A file keeps its own copy of the allocator, so it may outlive its context. */
TL_API void tl_safetensors_close(tl_safetensors_file *f);
/* Writes n tensors (any layout; stored contiguous) under their names, atomically: readers see
 * the old file or the new one, never a mix; a replaced file's permission bits are kept.  Names
 * must be distinct, non-empty, not "__metadata__". */
TL_API tl_status tl_safetensors_save(tl_context *ctx, const char *path, size_t n, const char *const *names,
                                     const tl_tensor *tensors);

/* ---- GGUF ------------------------------------------------------------------------------------
 * A GGUF file (versions 2 and 3), mapped read-only at open: its metadata, and each tensor over
 * the mapping in its own dtype (another ggml type is TL_E_DTYPE at get), its dims reversed into
 * a row-major shape (GGUF's [in, out] weight is [out, in] here).  A hostile file is TL_E_PARSE
 * naming the problem.  The mapping lives until the file is closed and the last tensor over it
 * has died; returned strings are valid until tl_gguf_close. */
typedef struct tl_gguf_file tl_gguf_file;

/* GGUF's metadata value types, by its numbers. */
typedef enum tl_gguf_type {
    TL_GGUF_UINT8 = 0,
    TL_GGUF_INT8 = 1,
    TL_GGUF_UINT16 = 2,
    TL_GGUF_INT16 = 3,
    TL_GGUF_UINT32 = 4,
    TL_GGUF_INT32 = 5,
    TL_GGUF_FLOAT32 = 6,
    TL_GGUF_BOOL = 7,
    TL_GGUF_STRING = 8,
    TL_GGUF_ARRAY = 9,
    TL_GGUF_UINT64 = 10,
    TL_GGUF_INT64 = 11,
    TL_GGUF_FLOAT64 = 12,
    TL_GGUF_TYPE_FORCE_SIGNED_ = -1,
    TL_GGUF_TYPE_FORCE_INT32_ = 0x7fffffff
} tl_gguf_type;

TL_API tl_status tl_gguf_open(tl_context *ctx, const char *path, tl_gguf_file **out);
/* The same over size bytes the caller holds (a mapping of its own, a package's data), aligned to
 * 32 bytes, read where they lie: they must stay valid and unchanged until the file is closed and
 * the last tensor over them has died. */
TL_API tl_status tl_gguf_open_memory(tl_context *ctx, const void *data, size_t size, tl_gguf_file **out);
/* NULL is a no-op.  The file keeps its own copy of the allocator, so it may outlive its context. */
TL_API void tl_gguf_close(tl_gguf_file *f);
/* Tensors in file order (0 and NULL past the end or for NULL). */
TL_API size_t tl_gguf_tensor_count(const tl_gguf_file *f);
TL_API const char *tl_gguf_tensor_name(const tl_gguf_file *f, size_t i);
/* A read-only tensor over the mapping, in the current target; TL_E_NOT_FOUND for a name the
 * file does not hold. */
TL_API tl_status tl_gguf_get(tl_context *ctx, tl_gguf_file *f, const char *name, tl_tensor *out);
/* Keys in file order. */
TL_API size_t tl_gguf_key_count(const tl_gguf_file *f);
TL_API const char *tl_gguf_key_name(const tl_gguf_file *f, size_t i);
/* A key's type, and for an array its items' type and length (count 1 otherwise).
 * TL_E_NOT_FOUND for a key the file does not hold. */
TL_API tl_status tl_gguf_key_type(const tl_gguf_file *f, const char *key, tl_gguf_type *type, tl_gguf_type *item_type,
                                  uint64_t *count);
/* Values: an integer or bool key as int64 (a uint64 past INT64_MAX is TL_E_INVALID_ARGUMENT);
 * a float or integer key as double; a string key as a pointer and length (not NUL-terminated);
 * item i of a string array likewise.  Another type is TL_E_DTYPE. */
TL_API tl_status tl_gguf_get_int(const tl_gguf_file *f, const char *key, int64_t *out);
TL_API tl_status tl_gguf_get_float(const tl_gguf_file *f, const char *key, double *out);
TL_API tl_status tl_gguf_get_string(const tl_gguf_file *f, const char *key, const char **out, uint64_t *length);
TL_API tl_status tl_gguf_get_array_string(const tl_gguf_file *f, const char *key, uint64_t i, const char **out,
                                          uint64_t *length);
/* Item i of an array of numbers (tokenizer scores, token types, ...): as int64 into *as_int
 * (integer and bool items; else TL_E_DTYPE) and/or as double into *as_double (any number); either
 * pointer may be NULL.  TL_E_SHAPE past the end, TL_E_DTYPE for another kind of key. */
TL_API tl_status tl_gguf_get_array_number(const tl_gguf_file *f, const char *key, uint64_t i, int64_t *as_int,
                                          double *as_double);

/* ---- JSON ------------------------------------------------------------------------------------
 * Returned strings are NUL-terminated and owned by the caller: free them with tl_string_free. */
TL_API tl_status tl_scope_stats_json(tl_context *ctx, tl_scope scope, char **out);
/* Every open scope (outermost first), the ambient store's totals, and the context's counters. */
TL_API tl_status tl_context_report_json(tl_context *ctx, char **out);
/* JSON texts of tensors are bounded: to_json refuses (TL_E_INVALID_ARGUMENT) a tensor whose
 * text would pass this size, from_json (TL_E_PARSE) a longer text.  to_json costs about the
 * text's size in allocator memory (no tree of the data); from_json's cJSON tree costs up to
 * ~32 bytes of C heap per text byte.  Larger tensors travel as safetensors. */
#define TL_JSON_MAX_BYTES (4u * 1024u * 1024u)
/* {"dtype":"f32","shape":[2,2],"data":[...]}: data flat in logical order; every value exact:
 * printed with the fewest digits that read back (strtod, then a cast for f32) to the same
 * bits, -0 included; non-finite values as the strings "nan", "inf", "-inf". */
TL_API tl_status tl_tensor_to_json(tl_context *ctx, tl_tensor t, char **out);
/* The same form back, into the current target.  A text holding a NUL character (\u0000), or
 * anything but white space after the object, is TL_E_PARSE. */
TL_API tl_status tl_tensor_from_json(tl_context *ctx, const char *json, tl_tensor *out);
/* NULL is a no-op. */
TL_API void tl_string_free(char *s);

#ifdef __cplusplus
}
#endif
#endif
