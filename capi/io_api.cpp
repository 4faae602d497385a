// The C API of files: safetensors, GGUF and JSON (tl_io.h).
#include <climits>
#include <cstring>

#include "io/json.h"
#include "core/owned_string.h"
#include "io/gguf.h"
#include "io/safetensors.h"
#include "boundary.h"
#include "tensorlife/tl.h"

using tl::fail;
using tl::with_context;

extern "C" {

tl_status tl_safetensors_open(tl_context *ctx, const char *path, tl_safetensors_file **out) {
    return with_context(ctx, out, [&](tl_context &c) {
        if (!path) return fail(TL_E_INVALID_ARGUMENT, "path is NULL");
        return tl::safetensors_open(c, path, out);
    });
}

size_t tl_safetensors_count(const tl_safetensors_file *f) { return f ? f->entries.size() : 0; }

const char *tl_safetensors_name(const tl_safetensors_file *f, size_t i) {
    return f && i < f->entries.size() ? &f->names[f->entries[i].name_offset] : nullptr;
}

tl_status tl_safetensors_map(tl_context *ctx, const char *path, tl_safetensors_file **out) {
    return with_context(ctx, out, [&](tl_context &c) {
        if (!path) return fail(TL_E_INVALID_ARGUMENT, "path is NULL");
        return tl::safetensors_map(c, path, out);
    });
}

int tl_safetensors_maps(const tl_safetensors_file *f, const char *name) {
    if (!f || !name) return 0;
    const tl_safetensors_file::Entry *e = f->find(name);
    return e && f->maps(*e) ? 1 : 0;
}

tl_status tl_safetensors_get(tl_context *ctx, tl_safetensors_file *f, const char *name, tl_tensor *out) {
    return with_context(ctx, out, [&](tl_context &c) {
        if (!f || !name) return fail(TL_E_INVALID_ARGUMENT, "file or name is NULL");
        return tl::safetensors_get(c, *f, name, out);
    });
}

void tl_safetensors_close(tl_safetensors_file *f) {
    if (f) tl::safetensors_close(f);
}

tl_status tl_safetensors_save(tl_context *ctx, const char *path, size_t n, const char *const *names,
                              const tl_tensor *tensors) {
    return with_context(ctx, [&](tl_context &c) {
        if (!path) return fail(TL_E_INVALID_ARGUMENT, "path is NULL");
        if (n > size_t(INT_MAX)) return fail(TL_E_INVALID_ARGUMENT, "safetensors_save: %zu tensors, past INT_MAX", n);
        return tl::safetensors_save(c, path, int(n), names, tensors);
    });
}

tl_status tl_scope_stats_json(tl_context *ctx, tl_scope scope, char **out) {
    return with_context(ctx, out, [&](tl_context &c) {
        tl::Scope *s;
        TL_TRY(c.find_scope(scope, &s));
        return tl::scope_stats_json(*s, out);
    });
}

tl_status tl_context_report_json(tl_context *ctx, char **out) {
    return with_context(ctx, out, [&](tl_context &c) { return tl::context_report_json(c, out); });
}

tl_status tl_tensor_to_json(tl_context *ctx, tl_tensor t, char **out) {
    return with_context(ctx, out, [&](tl_context &c) { return tl::tensor_to_json(c, t, out); });
}

tl_status tl_tensor_from_json(tl_context *ctx, const char *json, tl_tensor *out) {
    return with_context(ctx, out, [&](tl_context &c) {
        if (!json) return fail(TL_E_INVALID_ARGUMENT, "json is NULL");
        return tl::tensor_from_json(c, json, out);
    });
}

void tl_string_free(char *s) { tl::free_owned_string(s); }

}  // extern "C"

// ---- GGUF ------------------------------------------------------------------------------------
namespace {

tl_status find_key(const tl_gguf_file *f, const char *key, const tl_gguf_file::Key **out) {
    if (!f || !key) return fail(TL_E_INVALID_ARGUMENT, "gguf: file or key is NULL");
    if (!(*out = f->key(key))) return fail(TL_E_NOT_FOUND, "gguf: no key '%s'", key);
    return TL_OK;
}

}  // namespace

extern "C" {

tl_status tl_gguf_open_memory(tl_context *ctx, const void *data, size_t size, tl_gguf_file **out) {
    return with_context(ctx, out, [&](tl_context &c) {
        if (!data && size) return fail(TL_E_INVALID_ARGUMENT, "data is NULL");
        return tl::gguf_open_memory(c, data, size, out);
    });
}

tl_status tl_gguf_open(tl_context *ctx, const char *path, tl_gguf_file **out) {
    return with_context(ctx, out, [&](tl_context &c) {
        if (!path) return fail(TL_E_INVALID_ARGUMENT, "path is NULL");
        return tl::gguf_open(c, path, out);
    });
}

void tl_gguf_close(tl_gguf_file *f) {
    if (f) tl::gguf_close(f);
}

size_t tl_gguf_tensor_count(const tl_gguf_file *f) { return f ? f->entries.size() : 0; }

const char *tl_gguf_tensor_name(const tl_gguf_file *f, size_t i) {
    return f && i < f->entries.size() ? &f->names[f->entries[i].name] : nullptr;
}

tl_status tl_gguf_get(tl_context *ctx, tl_gguf_file *f, const char *name, tl_tensor *out) {
    return with_context(ctx, out, [&](tl_context &c) {
        if (!f || !name) return fail(TL_E_INVALID_ARGUMENT, "gguf: file or name is NULL");
        return tl::gguf_get(c, *f, name, out);
    });
}

size_t tl_gguf_key_count(const tl_gguf_file *f) { return f ? f->keys.size() : 0; }

const char *tl_gguf_key_name(const tl_gguf_file *f, size_t i) {
    return f && i < f->keys.size() ? &f->names[f->keys[i].name] : nullptr;
}

tl_status tl_gguf_key_type(const tl_gguf_file *f, const char *key, tl_gguf_type *type, tl_gguf_type *item_type,
                           uint64_t *count) {
    const tl_gguf_file::Key *k;
    if (!type || !item_type || !count) return fail(TL_E_INVALID_ARGUMENT, "output pointer is NULL");
    TL_TRY(find_key(f, key, &k));
    *type = tl_gguf_type(k->type);
    *item_type = tl_gguf_type(k->type == TL_GGUF_ARRAY ? k->item_type : k->type);
    *count = k->type == TL_GGUF_ARRAY ? k->count : 1;
    return TL_OK;
}

tl_status tl_gguf_get_int(const tl_gguf_file *f, const char *key, int64_t *out) {
    const tl_gguf_file::Key *k;
    if (!out) return fail(TL_E_INVALID_ARGUMENT, "output pointer is NULL");
    TL_TRY(find_key(f, key, &k));
    const tl::GgufNumber n = tl::gguf_number(k->type, k->at);
    if (!n.is_integer) return fail(TL_E_DTYPE, "gguf: key '%s' is of type %u, not an integer", key, k->type);
    if (n.too_big) return fail(TL_E_INVALID_ARGUMENT, "gguf: key '%s' holds a uint64 past INT64_MAX", key);
    *out = n.as_int;
    return TL_OK;
}

tl_status tl_gguf_get_float(const tl_gguf_file *f, const char *key, double *out) {
    const tl_gguf_file::Key *k;
    if (!out) return fail(TL_E_INVALID_ARGUMENT, "output pointer is NULL");
    TL_TRY(find_key(f, key, &k));
    const tl::GgufNumber n = tl::gguf_number(k->type, k->at);
    if (!n.is_number) return fail(TL_E_DTYPE, "gguf: key '%s' is of type %u, not a number", key, k->type);
    *out = n.as_double;
    return TL_OK;
}

tl_status tl_gguf_get_string(const tl_gguf_file *f, const char *key, const char **out, uint64_t *length) {
    const tl_gguf_file::Key *k;
    if (!out || !length) return fail(TL_E_INVALID_ARGUMENT, "output pointer is NULL");
    TL_TRY(find_key(f, key, &k));
    if (k->type != TL_GGUF_STRING) return fail(TL_E_DTYPE, "gguf: key '%s' is of type %u, not a string", key, k->type);
    tl::gguf_string_at(k->at, out, length);
    return TL_OK;
}

tl_status tl_gguf_get_array_number(const tl_gguf_file *f, const char *key, uint64_t i, int64_t *as_int,
                                   double *as_double) {
    const tl_gguf_file::Key *k;
    if (!as_int && !as_double) return fail(TL_E_INVALID_ARGUMENT, "output pointers are NULL");
    TL_TRY(find_key(f, key, &k));
    const std::byte *at = tl::gguf_array_item(*k, i);
    if (!at && k->type == TL_GGUF_ARRAY && i >= k->count && k->item_type != TL_GGUF_STRING &&
        k->item_type != TL_GGUF_ARRAY)
        return fail(TL_E_SHAPE, "gguf: item %llu of key '%s', which holds %llu", (unsigned long long)i, key,
                    (unsigned long long)k->count);
    if (!at) return fail(TL_E_DTYPE, "gguf: key '%s' is not an array of numbers", key);
    const tl::GgufNumber n = tl::gguf_number(k->item_type, at);
    if (as_int && !n.is_integer)
        return fail(TL_E_DTYPE, "gguf: key '%s' holds items of type %u, not integers", key, k->item_type);
    if (as_int && n.too_big)
        return fail(TL_E_INVALID_ARGUMENT, "gguf: item %llu of key '%s' is past INT64_MAX", (unsigned long long)i, key);
    if (as_int) *as_int = n.as_int;
    if (as_double) *as_double = n.as_double;
    return TL_OK;
}

tl_status tl_gguf_get_array_string(const tl_gguf_file *f, const char *key, uint64_t i, const char **out,
                                   uint64_t *length) {
    const tl_gguf_file::Key *k;
    if (!out || !length) return fail(TL_E_INVALID_ARGUMENT, "output pointer is NULL");
    TL_TRY(find_key(f, key, &k));
    if (k->type != TL_GGUF_ARRAY || k->item_type != TL_GGUF_STRING)
        return fail(TL_E_DTYPE, "gguf: key '%s' is not an array of strings", key);
    if (i >= k->count)
        return fail(TL_E_SHAPE, "gguf: item %llu of key '%s', which holds %llu", (unsigned long long)i, key,
                    (unsigned long long)k->count);
    tl::gguf_string_at(f->region->data + f->string_items[k->first_item + i], out, length);
    return TL_OK;
}

}  // extern "C"
