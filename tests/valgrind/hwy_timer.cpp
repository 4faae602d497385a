// Preloaded under valgrind only (scripts/test.sh).  Debian's libhwy runs RDTSCP in a load-time
// initializer (nanobenchmark's timer resolution); valgrind decodes RDTSCP only when CPUID
// advertises it, and some hypervisors hide that bit although the instruction works, so every
// process would die with SIGILL before main.  tensorlife never reads this value.
#include <cstdint>

namespace hwy {
namespace platform {
__attribute__((visibility("default"))) uint64_t TimerResolution() { return 1; }
}  // namespace platform
}  // namespace hwy
