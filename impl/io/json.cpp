#include "json.h"

#include <cmath>
#include <cstring>

#include "../error.h"
#include "../kernels/strided_loop.h"
#include "cjson_util.h"
#include "owned_string.h"

namespace tl {
namespace {

// Prints j and hands the text to the caller in allocator memory.
tl_status finish(Memory &memory, cJSON *j, char **out) {
    JsonText text(cJSON_PrintUnformatted(j));
    if (!text) return fail(TL_E_OUT_OF_MEMORY, "no memory to print JSON");
    char *s = make_owned_string(memory, text.get(), std::strlen(text.get()));
    if (!s) return fail(TL_E_OUT_OF_MEMORY, "no memory for the JSON string");
    *out = s;
    return TL_OK;
}

void add_scope(cJSON *o, const tl_scope &s) {
    cJSON_AddStringToObject(o, "name", s.name.c_str());
    cJSON_AddNumberToObject(o, "id", double(s.id));
    cJSON_AddNumberToObject(o, "depth", s.depth);
    cJSON_AddStringToObject(o, "growth", s.slab.growth() == TL_FIXED ? "fixed" : "grow");
    cJSON_AddNumberToObject(o, "max_bytes", double(s.slab.max_bytes()));
    cJSON_AddNumberToObject(o, "generation", double(s.resets()));
    cJSON_AddNumberToObject(o, "slab_bytes", double(s.slab.held_bytes()));
    cJSON_AddNumberToObject(o, "used_bytes", double(s.slab.used_bytes()));
    cJSON_AddNumberToObject(o, "peak_bytes", double(s.slab.peak_bytes()));
    cJSON_AddNumberToObject(o, "overflow_bytes", double(s.slab.overflow_bytes()));
    cJSON_AddNumberToObject(o, "grow_events", double(s.slab.grow_events()));
    cJSON_AddNumberToObject(o, "live_tensors", double(s.headers.size()));
}

cJSON *number_or_name(double v) {
    if (std::isnan(v)) return cJSON_CreateString("nan");
    if (std::isinf(v)) return cJSON_CreateString(v > 0 ? "inf" : "-inf");
    return cJSON_CreateNumber(v);
}

bool value_of(const cJSON *j, double *v) {
    if (cJSON_IsNumber(j)) return *v = j->valuedouble, true;
    if (!cJSON_IsString(j)) return false;
    if (!std::strcmp(j->valuestring, "nan")) return *v = NAN, true;
    if (!std::strcmp(j->valuestring, "inf")) return *v = INFINITY, true;
    if (!std::strcmp(j->valuestring, "-inf")) return *v = -INFINITY, true;
    return false;
}

}  // namespace

tl_status scope_stats_json(const tl_scope &scope, char **out) {
    JsonPtr root(cJSON_CreateObject());
    if (!root) return fail(TL_E_OUT_OF_MEMORY, "no memory for JSON");
    add_scope(root.get(), scope);
    return finish(scope.context->memory, root.get(), out);
}

tl_status context_report_json(tl_context &ctx, char **out) {
    JsonPtr root(cJSON_CreateObject());
    if (!root) return fail(TL_E_OUT_OF_MEMORY, "no memory for JSON");
    cJSON *scopes = cJSON_AddArrayToObject(root.get(), "scopes");
    size_t slab_total = 0;
    ctx.for_each_open_scope([&](const tl_scope &s) {
        cJSON *o = cJSON_CreateObject();
        add_scope(o, s);
        cJSON_AddItemToArray(scopes, o);
        slab_total += s.slab.held_bytes();
    });
    cJSON *ambient = cJSON_AddObjectToObject(root.get(), "ambient");
    cJSON_AddNumberToObject(ambient, "live_tensors", double(ctx.ambient().live()));
    cJSON_AddNumberToObject(ambient, "bytes", double(ctx.ambient().live_bytes()));
    cJSON *totals = cJSON_AddObjectToObject(root.get(), "context");
    cJSON_AddNumberToObject(totals, "open_scopes", cJSON_GetArraySize(scopes));
    cJSON_AddNumberToObject(totals, "scopes_opened", double(ctx.scopes_opened()));
    cJSON_AddNumberToObject(totals, "slab_bytes", double(slab_total));
    cJSON_AddNumberToObject(totals, "scratch_bytes", double(ctx.scratch_bytes()));
    return finish(ctx.memory, root.get(), out);
}

tl_status tensor_to_json(tl_context &ctx, tl_tensor t, char **out) {
    Resolved r;
    TL_TRY(ctx.resolve(t, &r));
    const View &v = r.view;
    JsonPtr root(cJSON_CreateObject());
    if (!root) return fail(TL_E_OUT_OF_MEMORY, "no memory for JSON");
    cJSON_AddStringToObject(root.get(), "dtype", dtype_name(v.dtype));
    cJSON *shape = cJSON_AddArrayToObject(root.get(), "shape");
    for (int d = 0; d < v.ndim; ++d) cJSON_AddItemToArray(shape, cJSON_CreateNumber(double(v.shape[d])));
    cJSON *data = cJSON_AddArrayToObject(root.get(), "data");
    Operands<1> ops{{v.data}, {v.strides}, {int64_t(dtype_size(v.dtype))}};
    strided_for_each<1>(v.ndim, v.shape, ops, [&](std::byte *const *p, int64_t n, const int64_t *s) {
        for (int64_t i = 0; i < n; ++i) {
            const std::byte *e = p[0] + i * s[0];
            double x = v.dtype == TL_F32   ? double(*reinterpret_cast<const float *>(e))
                       : v.dtype == TL_F64 ? *reinterpret_cast<const double *>(e)
                                           : double(*reinterpret_cast<const int32_t *>(e));
            cJSON_AddItemToArray(data, number_or_name(x));
        }
    });
    return finish(ctx.memory, root.get(), out);
}

tl_status tensor_from_json(tl_context &ctx, const char *json, tl_tensor *out) {
    JsonPtr root(cJSON_Parse(json));
    if (!root || !cJSON_IsObject(root.get())) return fail(TL_E_PARSE, "tensor JSON: not a JSON object");
    const cJSON *dtype = cJSON_GetObjectItemCaseSensitive(root.get(), "dtype");
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(root.get(), "shape");
    const cJSON *data = cJSON_GetObjectItemCaseSensitive(root.get(), "data");
    if (!cJSON_IsString(dtype)) return fail(TL_E_PARSE, "tensor JSON: no \"dtype\" string");
    tl_dtype dt;
    if (!std::strcmp(dtype->valuestring, "f32")) dt = TL_F32;
    else if (!std::strcmp(dtype->valuestring, "f64")) dt = TL_F64;
    else if (!std::strcmp(dtype->valuestring, "i32")) dt = TL_I32;
    else return fail(TL_E_PARSE, "tensor JSON: dtype '%s' is not f32, f64 or i32", dtype->valuestring);
    if (!cJSON_IsArray(shape) || cJSON_GetArraySize(shape) > TL_MAX_DIMS)
        return fail(TL_E_PARSE, "tensor JSON: \"shape\" must be an array of at most 8 dims");
    int64_t dims[TL_MAX_DIMS];
    const int ndim = cJSON_GetArraySize(shape);
    for (int d = 0; d < ndim; ++d) {
        uint64_t dim;
        if (!json_uint(cJSON_GetArrayItem(shape, d), &dim))
            return fail(TL_E_PARSE, "tensor JSON: dim %d is not a non-negative integer", d);
        dims[d] = int64_t(dim);
    }
    int64_t numel;
    size_t bytes;
    TL_TRY(check_shape(ndim, dims, dt, &numel, &bytes));
    if (!cJSON_IsArray(data) || cJSON_GetArraySize(data) != numel)
        return fail(TL_E_PARSE, "tensor JSON: \"data\" must hold %lld values", (long long)numel);
    for (const cJSON *j = data->child; j; j = j->next) {  // check every value before placing anything
        double x;
        if (!value_of(j, &x)) return fail(TL_E_PARSE, "tensor JSON: a data value is no number");
        if (dt == TL_I32 && !(std::floor(x) == x && x >= -2147483648.0 && x <= 2147483647.0))
            return fail(TL_E_PARSE, "tensor JSON: %g is no i32 value", x);
    }
    View v;
    tl_tensor result;
    TL_TRY(ctx.make_tensor(dt, ndim, dims, &v, &result));
    int64_t i = 0;
    for (const cJSON *j = data->child; j; j = j->next, ++i) {
        double x = 0;
        value_of(j, &x);
        if (dt == TL_F32) reinterpret_cast<float *>(v.data)[i] = float(x);
        else if (dt == TL_F64) reinterpret_cast<double *>(v.data)[i] = x;
        else reinterpret_cast<int32_t *>(v.data)[i] = int32_t(x);
    }
    *out = result;
    return TL_OK;
}

}  // namespace tl
