// Status names, the last error, versions.
#include "boundary.h"
#include "tensorlife/tl.h"

#define TL_STR2(x) #x
#define TL_STR(x) TL_STR2(x)

extern "C" {

const char *tl_status_string(tl_status status) {
    switch (status) {
        case TL_OK: return "TL_OK";
        case TL_E_INVALID_ARGUMENT: return "TL_E_INVALID_ARGUMENT";
        case TL_E_INVALID_HANDLE: return "TL_E_INVALID_HANDLE";
        case TL_E_STORAGE_CLOSED: return "TL_E_STORAGE_CLOSED";
        case TL_E_SHAPE: return "TL_E_SHAPE";
        case TL_E_DTYPE: return "TL_E_DTYPE";
        case TL_E_SCOPE_FULL: return "TL_E_SCOPE_FULL";
        case TL_E_OUT_OF_MEMORY: return "TL_E_OUT_OF_MEMORY";
        case TL_E_SCOPE_ORDER: return "TL_E_SCOPE_ORDER";
        case TL_E_IO: return "TL_E_IO";
        case TL_E_PARSE: return "TL_E_PARSE";
        case TL_E_INTERNAL: return "TL_E_INTERNAL";
        case TL_STATUS_FORCE_INT32: break;
    }
    return "TL_E_UNKNOWN";
}

const char *tl_last_error(void) { return tl::last_error_message(); }

const char *tl_version_string(void) {
    return TL_STR(TL_VERSION_MAJOR) "." TL_STR(TL_VERSION_MINOR) "." TL_STR(TL_VERSION_PATCH);
}

int tl_abi_version(void) { return TL_ABI_VERSION; }

size_t tl_dtype_size(tl_dtype dt) { return tl::dtype_size(dt); }

}  // extern "C"
