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

}  // namespace tl
