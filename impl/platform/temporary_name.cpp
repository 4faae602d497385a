// The temporary file name of an atomic save, for every system's AtomicWriter.
#include <atomic>
#include <cstdio>

#include "platform/platform.h"

namespace tl::platform {

bool temporary_name(const char *target, size_t folder_length, unsigned long process_id, char *out, size_t n) {
    static std::atomic<uint64_t> serial{0};
    const int len = std::snprintf(out, n, "%.*s.%s.tmp-tensorlife-%lu-%llu-%016llx", int(folder_length), target,
                                  target + folder_length, process_id,
                                  (unsigned long long)serial.fetch_add(1, std::memory_order_relaxed),
                                  (unsigned long long)random_bits());
    return len >= 0 && size_t(len) < n;
}

}  // namespace tl::platform
