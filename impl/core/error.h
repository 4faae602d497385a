// Failure reporting: every failing path sets this thread's message and returns its status.
#pragma once
#include "tensorlife/tl_base.h"

namespace tl {

// printf-checked arguments: format is parameter `f`, its arguments start at `a`.
#if defined(__MINGW32__)
#  define TL_PRINTF_FORMAT(f, a) __attribute__((format(gnu_printf, f, a)))  // C99 formats (%zu) through mingw's stdio
#elif defined(__GNUC__)
#  define TL_PRINTF_FORMAT(f, a) __attribute__((format(printf, f, a)))
#else
#  define TL_PRINTF_FORMAT(f, a)
#endif

// Formats the message into a thread-local buffer (no allocation) and returns `status`.
tl_status fail(tl_status status, const char *format, ...) TL_PRINTF_FORMAT(2, 3);

const char *last_error_message();

}  // namespace tl

// Propagates a failing status from a call that already set the message.
#define TL_TRY(expr)                                    \
  do {                                                  \
    tl_status tl_try_status_ = (expr);                  \
    if (tl_try_status_ != TL_OK) return tl_try_status_; \
  } while (0)
