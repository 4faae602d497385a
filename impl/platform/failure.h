// How each system's implementation reports a failure (platform.h's failure() reads it back).
#pragma once

namespace tl::platform {

// Formats why the call failed into this thread's failure text and returns false.
bool failed(const char *format, ...)
#if defined(__MINGW32__)
    __attribute__((format(gnu_printf, 1, 2)))  // C99 formats through mingw's own stdio
#elif defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

}  // namespace tl::platform
