// safetensors and JSON.
#include <climits>

#include "io/json.h"
#include "core/owned_string.h"
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
