#include "core/error.h"

#include <cstdarg>

#include "platform/platform.h"

namespace tl {
namespace {
// A fixed buffer: reporting an error must not allocate (the allocator may be what failed).
thread_local char last_error_buffer[512] = "";
}  // namespace

tl_status fail(tl_status status, const char *format, ...) {
    va_list args;
    va_start(args, format);
    platform::format_message(last_error_buffer, sizeof last_error_buffer, format, args);
    va_end(args);
    return status;
}

const char *last_error_message() { return last_error_buffer; }

}  // namespace tl
