// A failed platform call as the library's failure: TL_E_IO with the platform's text.
#pragma once
#include "core/error.h"
#include "platform/platform.h"

namespace tl {

inline tl_status system_failure() { return fail(TL_E_IO, "%s", platform::failure()); }

}  // namespace tl
