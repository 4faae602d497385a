// What the JSON and safetensors code share around cJSON: ownership of trees and printed text,
// a strict parse, and reading an exact non-negative integer out of a JSON number.
#pragma once
#include <cjson/cJSON.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>

namespace tl {

struct JsonDeleter {
    void operator()(cJSON *j) const { cJSON_Delete(j); }
};
using JsonPtr = std::unique_ptr<cJSON, JsonDeleter>;

struct JsonTextDeleter {
    void operator()(char *s) const { cJSON_free(s); }
};
using JsonText = std::unique_ptr<char, JsonTextDeleter>;

// Whether text[0..n) holds a NUL character: a raw 0 byte or a \u0000 escape (cJSON would cut the
// string there, so "weight\u0000evil" would read as "weight").  An escaped backslash before
// "u0000" is no escape of a NUL.
inline bool json_text_has_nul(const char *text, size_t n) {
    if (std::memchr(text, 0, n)) return true;
    for (size_t i = 0; i + 1 < n; ++i) {
        if (text[i] != '\\') continue;
        if (text[i + 1] == 'u' && i + 5 < n && std::strncmp(text + i + 2, "0000", 4) == 0) return true;
        ++i;  // an escaped character (\\ included) is no escape of its own
    }
    return false;
}

// text[0..n) parsed as one JSON value, with nothing but white space after it and no NUL
// character in it.  On `trailing`, *at is where the extra bytes start.
enum class JsonProblem { none, nul, invalid, trailing };
inline JsonProblem parse_exactly(const char *text, size_t n, JsonPtr *out, size_t *at) {
    if (json_text_has_nul(text, n)) return JsonProblem::nul;
    const char *end = nullptr;
    out->reset(cJSON_ParseWithLengthOpts(text, n, &end, false));
    if (!*out) return JsonProblem::invalid;
    for (const char *c = end; c < text + n; ++c)
        if (*c != ' ' && *c != '\t' && *c != '\n' && *c != '\r') {
            *at = size_t(c - text);
            out->reset();
            return JsonProblem::trailing;
        }
    return JsonProblem::none;
}

// A JSON number that is an exact non-negative integer (at most 2^53, where doubles stay exact).
inline bool json_uint(const cJSON *j, uint64_t *out) {
    if (!cJSON_IsNumber(j)) return false;
    const double v = j->valuedouble;
    if (!(v >= 0) || v > 9007199254740992.0 || std::floor(v) != v) return false;
    *out = uint64_t(v);
    return true;
}

}  // namespace tl
