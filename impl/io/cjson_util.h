// What the JSON and safetensors code share around cJSON: ownership of trees and printed text,
// and reading an exact non-negative integer out of a JSON number.
#pragma once
#include <cjson/cJSON.h>

#include <cmath>
#include <cstdint>
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

// A JSON number that is an exact non-negative integer (at most 2^53, where doubles stay exact).
inline bool json_uint(const cJSON *j, uint64_t *out) {
    if (!cJSON_IsNumber(j)) return false;
    const double v = j->valuedouble;
    if (!(v >= 0) || v > 9007199254740992.0 || std::floor(v) != v) return false;
    *out = uint64_t(v);
    return true;
}

}  // namespace tl
