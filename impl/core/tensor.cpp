#include "core/tensor.h"

#include <cstring>
#include <initializer_list>

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

bool dtype_from_name(const char *name, tl_dtype *out) {
    for (tl_dtype dt : {TL_F32, TL_F64, TL_I32})
        if (std::strcmp(name, dtype_name(dt)) == 0) return *out = dt, true;
    return false;
}

}  // namespace tl
