#include "tensor.h"

namespace tl {

const char *dtype_name(tl_dtype dt) {
    switch (dt) {
        case TL_F32: return "f32";
        case TL_F64: return "f64";
        case TL_I32: return "i32";
        default: break;  // no dtype: refused by every caller before it names one
    }
    return "?";
}

bool View::is_contiguous() const {
    int64_t expected = 1;
    for (int i = ndim - 1; i >= 0; --i) {
        if (shape[i] != 1 && strides[i] != expected) return false;
        expected *= shape[i];
    }
    return true;
}

bool count_of(int ndim, const int64_t *shape, int64_t elem, int64_t *out) {
    for (int i = 0; i < ndim; ++i)
        if (shape[i] == 0) return *out = 0, true;
    int64_t n = elem;
    for (int i = 0; i < ndim; ++i)
        if (__builtin_mul_overflow(n, shape[i], &n)) return false;
    *out = n;
    return true;
}

void set_contiguous_strides(int ndim, const int64_t *shape, int64_t *strides) {
    // An empty tensor may have huge dims whose product overflows; its strides are never used
    // to reach an element, so they saturate instead of wrapping.
    int64_t s = 1;
    for (int i = ndim - 1; i >= 0; --i) {
        strides[i] = s;
        if (__builtin_mul_overflow(s, shape[i] > 0 ? shape[i] : 1, &s)) s = INT64_MAX;
    }
}

}  // namespace tl
