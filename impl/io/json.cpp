#include "io/json.h"

#include <clocale>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "kernels/strided_loop.h"
#include "io/cjson_util.h"
#include "core/owned_string.h"
#include "tensorlife/tl_io.h"

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

void add_scope(cJSON *o, const tl::Scope &s) {
    cJSON_AddStringToObject(o, "name", s.name.c_str());
    cJSON_AddNumberToObject(o, "id", double(s.epoch.id));
    cJSON_AddNumberToObject(o, "depth", s.depth);
    cJSON_AddStringToObject(o, "growth", s.slab.growth() == TL_FIXED ? "fixed" : "grow");
    cJSON_AddNumberToObject(o, "max_bytes", double(s.slab.max_bytes()));
    const tl_scope_stats stats = s.stats();
#define TL_ADD_STAT_(field) cJSON_AddNumberToObject(o, #field, double(stats.field));
    TL_SCOPE_STATS_FIELDS(TL_ADD_STAT_)
#undef TL_ADD_STAT_
}

// Text that a tensor prints to, in allocator memory, refusing to grow past TL_JSON_MAX_BYTES.
class TextBuilder {
public:
    explicit TextBuilder(Memory *memory) : text_(StlAllocator<char>(memory)) {}
    bool append(const char *s, size_t n) {
        if (n > TL_JSON_MAX_BYTES - text_.size()) return false;
        if (text_.size() + n > text_.capacity()) {  // doubling, but never past the limit itself
            size_t grown = text_.capacity() * 2;
            if (grown < text_.size() + n) grown = text_.size() + n;
            text_.reserve(grown < TL_JSON_MAX_BYTES ? grown : TL_JSON_MAX_BYTES);
        }
        text_.insert(text_.end(), s, s + n);
        return true;
    }
    bool append(const char *s) { return append(s, std::strlen(s)); }
    const char *data() const { return text_.data(); }
    size_t size() const { return text_.size(); }

private:
    std::vector<char, StlAllocator<char>> text_;
};

// The printed number with the C locale's '.', whatever LC_NUMERIC the application set.
void fix_decimal_point(char *s) {
    const char point = *std::localeconv()->decimal_point;
    if (point == '.') return;
    for (char *c = s; *c; ++c)
        if (*c == point) *c = '.';
}

// The fewest significant digits that read back as exactly x, read the way readers (this
// library's, NumPy's, most others') read a JSON number: strtod, then, for f32, a cast to float.
// %.17g (%.9g for a float) always reads back exactly, so the loop ends by then.
void shortest_exact(double x, bool as_float, char *out, size_t size) {
    for (int digits = as_float ? 1 : 15; digits <= 17; ++digits) {
        std::snprintf(out, size, "%.*g", digits, x);
        const double back = std::strtod(out, nullptr);  // in the current locale, as printed
        if (as_float ? float(back) == float(x) && std::signbit(back) == std::signbit(x)
                     : std::memcmp(&back, &x, sizeof x) == 0)
            break;
    }
    fix_decimal_point(out);
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

tl_status scope_stats_json(const tl::Scope &scope, char **out) {
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
    ctx.for_each_open_scope([&](const tl::Scope &s) {
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
    if (!is_arithmetic(v.dtype))
        return fail(TL_E_DTYPE, "to_json takes f32, f64 or i32, not %s (convert it with tl_convert)", dtype_name(v.dtype));
    // Printed straight into allocator memory, a value at a time: no JSON tree of the data.
    TextBuilder text(&ctx.memory);
    char num[40];
    bool ok = text.append("{\"dtype\":\"") && text.append(dtype_name(v.dtype)) && text.append("\",\"shape\":[");
    for (int d = 0; ok && d < v.ndim; ++d) {
        std::snprintf(num, sizeof num, d ? ",%lld" : "%lld", (long long)v.shape[d]);
        ok = text.append(num);
    }
    ok = ok && text.append("],\"data\":[");
    bool first = true;
    Operands<1> ops{{v.data}, {v.strides}, {int64_t(dtype_size(v.dtype))}};
    strided_for_each<1>(v.ndim, v.shape, ops, [&](std::byte *const *p, int64_t n, const int64_t *s) {
        for (int64_t i = 0; ok && i < n; ++i) {
            const std::byte *e = p[0] + i * s[0];
            if (!first) ok = text.append(",", 1);
            first = false;
            double x = v.dtype == TL_F32   ? double(*reinterpret_cast<const float *>(e))
                       : v.dtype == TL_F64 ? *reinterpret_cast<const double *>(e)
                                           : double(*reinterpret_cast<const int32_t *>(e));
            if (v.dtype == TL_I32)
                std::snprintf(num, sizeof num, "%d", *reinterpret_cast<const int32_t *>(e));
            else if (std::isnan(x))
                std::snprintf(num, sizeof num, "\"nan\"");
            else if (std::isinf(x))
                std::snprintf(num, sizeof num, x > 0 ? "\"inf\"" : "\"-inf\"");
            else
                shortest_exact(x, v.dtype == TL_F32, num, sizeof num);
            ok = ok && text.append(num);
        }
    });
    ok = ok && text.append("]}");
    if (!ok)
        return fail(TL_E_INVALID_ARGUMENT,
                    "tensor JSON: the text of %lld values is past TL_JSON_MAX_BYTES (%u); use safetensors",
                    (long long)v.numel(), TL_JSON_MAX_BYTES);
    char *s = make_owned_string(ctx.memory, text.data(), text.size());
    if (!s) return fail(TL_E_OUT_OF_MEMORY, "no memory for the JSON string");
    *out = s;
    return TL_OK;
}

tl_status tensor_from_json(tl_context &ctx, const char *json, tl_tensor *out) {
    const size_t length = strnlen(json, size_t(TL_JSON_MAX_BYTES) + 1);
    if (length > TL_JSON_MAX_BYTES)
        return fail(TL_E_PARSE, "tensor JSON: text past TL_JSON_MAX_BYTES (%u); use safetensors", TL_JSON_MAX_BYTES);
    JsonPtr root;
    size_t at = 0;
    switch (parse_exactly(json, length, &root, &at)) {
        case JsonProblem::nul:
            return fail(TL_E_PARSE, "tensor JSON: a string holds a NUL character (\\u0000)");
        case JsonProblem::trailing:
            return fail(TL_E_PARSE, "tensor JSON: text after the object (at byte %zu)", at);
        case JsonProblem::invalid:
        case JsonProblem::none:
            break;
    }
    if (!root || !cJSON_IsObject(root.get())) return fail(TL_E_PARSE, "tensor JSON: not a JSON object");
    const cJSON *dtype = cJSON_GetObjectItemCaseSensitive(root.get(), "dtype");
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(root.get(), "shape");
    const cJSON *data = cJSON_GetObjectItemCaseSensitive(root.get(), "data");
    if (!cJSON_IsString(dtype)) return fail(TL_E_PARSE, "tensor JSON: no \"dtype\" string");
    tl_dtype dt;
    if (!dtype_from_name(dtype->valuestring, &dt) || !is_arithmetic(dt))
        return fail(TL_E_PARSE, "tensor JSON: dtype '%s' is not f32, f64 or i32", dtype->valuestring);
    if (!cJSON_IsArray(shape) || cJSON_GetArraySize(shape) > TL_MAX_DIMS)
        return fail(TL_E_PARSE, "tensor JSON: \"shape\" must be an array of at most %d dims", TL_MAX_DIMS);
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
        if (dt == TL_I32 && !is_int32_value(x)) return fail(TL_E_PARSE, "tensor JSON: %g is no i32 value", x);
    }
    NewTensor made;
    TL_TRY(ctx.make_tensor(dt, ndim, dims, &made));
    const View &v = made.view;
    int64_t i = 0;
    for (const cJSON *j = data->child; j; j = j->next, ++i) {
        double x = 0;
        value_of(j, &x);
        if (dt == TL_F32)
            reinterpret_cast<float *>(v.data)[i] = float(x);
        else if (dt == TL_F64)
            reinterpret_cast<double *>(v.data)[i] = x;
        else
            reinterpret_cast<int32_t *>(v.data)[i] = int32_t(x);
    }
    *out = made.handle;
    return TL_OK;
}

}  // namespace tl
