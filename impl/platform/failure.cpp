// platform.h's failure(): why this thread's last failing platform call failed.
#include <cstdarg>
#include <cstdio>

#include "platform/failure.h"

namespace tl::platform {
namespace {
// A fixed buffer: a failure is reported without allocating (memory may be what ran out).
thread_local char failure_text[512] = "";
}  // namespace

bool failed(const char *format, ...) {
    va_list args;
    va_start(args, format);
    std::vsnprintf(failure_text, sizeof failure_text, format, args);
    va_end(args);
    return false;
}

const char *failure() { return failure_text; }

}  // namespace tl::platform
