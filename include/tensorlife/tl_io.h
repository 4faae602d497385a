/* tensorlife: safetensors files and JSON.  Part of <tensorlife/tl.h>.
 *
 * JSON is parsed and printed with cJSON.  cJSON's allocation hooks are process-wide, so
 * tensorlife leaves them to the application: the transient nodes of a parse or a print come
 * from the C heap.  Every byte tensorlife keeps (tensors, a file's index, returned strings)
 * comes from the context's allocator. */
#ifndef TENSORLIFE_TL_IO_H
#define TENSORLIFE_TL_IO_H

#include "tl_tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- safetensors ---------------------------------------------------------------------------
 * An open file: its header is parsed and checked at open (dtypes, shapes, offsets in range and
 * not overlapping, byte counts matching shapes); tensor data is read at tl_st_get.  F32, F64 and
 * I32 load as they are; F16 and BF16 are converted to TL_F32.  Malformed files give TL_E_PARSE
 * (or TL_E_IO for files that cannot be opened or read) with a message naming the problem. */
typedef struct tl_st_file tl_st_file;

/* Headers larger than this are refused as malformed (TL_E_PARSE). */
#define TL_ST_MAX_HEADER_BYTES (100u * 1024u * 1024u)

TL_API tl_status tl_safetensors_open(tl_context *ctx, const char *path, tl_st_file **out);
/* Number of tensors (0 for NULL).  Names in file order, NULL past the end. */
TL_API size_t tl_st_count(const tl_st_file *f);
TL_API const char *tl_st_name(const tl_st_file *f, size_t i);
/* Reads one tensor into the current target (ambient or the current scope). */
TL_API tl_status tl_st_get(tl_context *ctx, tl_st_file *f, const char *name, tl_tensor *out);
/* NULL is a no-op.  A file keeps its own copy of the allocator, so it may outlive its context. */
TL_API void tl_st_close(tl_st_file *f);
/* Writes n tensors (any layout; stored contiguous) under their names, atomically: the file
 * appears complete or not at all.  Names must be distinct, non-empty, not "__metadata__". */
TL_API tl_status tl_safetensors_save(tl_context *ctx, const char *path, int n, const char *const *names,
                                     const tl_tensor *tensors);

/* ---- JSON ------------------------------------------------------------------------------------
 * Returned strings are NUL-terminated and owned by the caller: free them with tl_string_free. */
TL_API tl_status tl_scope_stats_json(const tl_scope *scope, char **out);
/* Every open scope (outermost first), the ambient store's totals, and the context's counters. */
TL_API tl_status tl_context_report_json(tl_context *ctx, char **out);
/* {"dtype":"f32","shape":[2,2],"data":[...]}: data flat in logical order; floats exact
 * (round-trip), non-finite values as the strings "nan", "inf", "-inf". */
TL_API tl_status tl_tensor_to_json(tl_context *ctx, tl_tensor t, char **out);
/* The same form back, into the current target. */
TL_API tl_status tl_tensor_from_json(tl_context *ctx, const char *json, tl_tensor *out);
/* NULL is a no-op. */
TL_API void tl_string_free(char *s);

#ifdef __cplusplus
}
#endif
#endif
