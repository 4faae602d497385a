// platform.h's failure() and format_message: why this thread's last failing platform call failed.
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "platform/failure.h"
#include "platform/platform.h"

namespace tl::platform {
namespace {
// A fixed buffer: a failure is reported without allocating (memory may be what ran out).
thread_local char failure_text[512] = "";

bool continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }
}  // namespace

void format_message(char *out, std::size_t size, const char *format, std::va_list args) {
    char whole[8192];  // on the stack: a path of PATH_MAX and its reason fit
    const int n = std::vsnprintf(whole, sizeof whole, format, args);
    const std::size_t length = n < 0 ? 0 : std::size_t(n) < sizeof whole ? std::size_t(n) : sizeof whole - 1;
    const std::size_t room = size - 1;
    if (length <= room) {
        std::memcpy(out, whole, length + 1);
        return;
    }
    std::size_t head = room / 3, tail = length - (room - room / 3 - 3);  // head + "..." + the rest: room
    while (head > 0 && continuation(whole[head])) --head;
    while (tail < length && continuation(whole[tail])) ++tail;
    std::memcpy(out, whole, head);
    std::memcpy(out + head, "...", 3);
    std::memcpy(out + head + 3, whole + tail, length - tail + 1);
}

bool failed(const char *format, ...) {
    va_list args;
    va_start(args, format);
    format_message(failure_text, sizeof failure_text, format, args);
    va_end(args);
    return false;
}

const char *failure() { return failure_text; }

}  // namespace tl::platform
