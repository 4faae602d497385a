// Status names, the last error, versions.
#include "boundary.h"
#include "tensorlife/tl.h"

#define TL_STR2(x) #x
#define TL_STR(x) TL_STR2(x)

extern "C" {

const char *tl_status_string(tl_status status) {
    switch (status) {
#define TL_STATUS_CASE_(name, value, description) \
  case TL_##name:                                 \
    return "TL_" #name;
        TL_STATUS_MAP(TL_STATUS_CASE_)
#undef TL_STATUS_CASE_
        case TL_STATUS_FORCE_INT32_:
            break;
    }
    return "TL_E_UNKNOWN";
}

const char *tl_last_error(void) { return tl::last_error_message(); }

const char *tl_version_string(void) {
    return TL_STR(TL_VERSION_MAJOR) "." TL_STR(TL_VERSION_MINOR) "." TL_STR(TL_VERSION_PATCH);
}

int tl_abi_version(void) { return TL_ABI_VERSION; }

const char *tl_status_description(tl_status status) {
    switch (status) {
#define TL_STATUS_DESCRIPTION_(name, value, description) \
  case TL_##name:                                        \
    return description;
        TL_STATUS_MAP(TL_STATUS_DESCRIPTION_)
#undef TL_STATUS_DESCRIPTION_
        case TL_STATUS_FORCE_INT32_:
            break;
    }
    return "no tensorlife status";
}

size_t tl_dtype_size(tl_dtype dt) { return tl::dtype_size(dt); }

const char *tl_dtype_name(tl_dtype dt) { return tl::dtype_name(dt); }

tl_status tl_dtype_block(tl_dtype dt, int64_t *elements, size_t *bytes) {
    const tl::DtypeInfo &d = tl::dtype_info(dt);
    if (!elements || !bytes) return tl::fail(TL_E_INVALID_ARGUMENT, "output pointer is NULL");
    if (d.block_bytes == 0) return tl::fail(TL_E_INVALID_ARGUMENT, "dtype %d is no dtype", int(dt));
    *elements = d.block;
    *bytes = d.block_bytes;
    return TL_OK;
}

}  // extern "C"
