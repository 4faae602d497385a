#include "core/tensor.h"

#include <cstring>

namespace tl {

// clang-format off
const DtypeInfo kDtypes[kDtypeCount + 1] = {
    {0, 1, 0, "?", nullptr, -1},
#define TL_DTYPE_INFO_(NAME, value, name, block, bytes, safetensors, gguf) \
    {block == 1 ? size_t(bytes) : 0, block, bytes, name, safetensors, gguf},
    TL_DTYPE_MAP(TL_DTYPE_INFO_)
#undef TL_DTYPE_INFO_
};
// clang-format on
// The table is indexed by value: the map must list the dtypes in value order, 1, 2, ...
namespace {
#define TL_DTYPE_VALUE_(NAME, value, name, block, bytes, safetensors, gguf) value,
constexpr int kValues[] = {0, TL_DTYPE_MAP(TL_DTYPE_VALUE_)};
#undef TL_DTYPE_VALUE_
constexpr bool listed_in_value_order() {
    for (unsigned i = 0; i <= kDtypeCount; ++i)
        if (kValues[i] != int(i)) return false;
    return true;
}
static_assert(listed_in_value_order(), "TL_DTYPE_MAP lists the dtypes in value order, from 1");
}  // namespace

bool dtype_from_name(const char *name, tl_dtype *out) {
    for (unsigned v = 1; v <= kDtypeCount; ++v)
        if (std::strcmp(name, kDtypes[v].name) == 0) return *out = tl_dtype(v), true;
    return false;
}

bool dtype_from_safetensors(const char *s, tl_dtype *out) {
    for (unsigned v = 1; v <= kDtypeCount; ++v)
        if (kDtypes[v].safetensors && std::strcmp(s, kDtypes[v].safetensors) == 0) return *out = tl_dtype(v), true;
    return false;
}

bool dtype_from_gguf(uint32_t ggml_type, tl_dtype *out) {
    for (unsigned v = 1; v <= kDtypeCount; ++v)
        if (kDtypes[v].gguf >= 0 && uint32_t(kDtypes[v].gguf) == ggml_type) return *out = tl_dtype(v), true;
    return false;
}

}  // namespace tl
