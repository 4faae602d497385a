// Marking slab memory that no tensor owns, so that raw tl_tensor_data pointers used after a
// reset are caught:
//  - under AddressSanitizer, freed slab bytes are poisoned and each bump allocation unpoisons
//    its own bytes, so a read or write through a stale pointer is reported;
//  - with TL_FILL_RESET_SLABS (a CMake option, on by default in Debug builds), reset slabs are
//    filled with 0xFF bytes, a NaN pattern for f32 and f64, so stale reads show up as NaN.
#pragma once
#include <cstddef>
#include <cstring>

#if defined(__SANITIZE_ADDRESS__)
#  define TL_ASAN 1
#elif defined(__has_feature)
#  if __has_feature(address_sanitizer)
#    define TL_ASAN 1
#  endif
#endif

#ifdef TL_ASAN
#  include <sanitizer/asan_interface.h>
#endif

namespace tl {

// No tensor owns these bytes (any more).
inline void mark_unowned(std::byte *p, size_t n) {
#ifdef TL_FILL_RESET_SLABS
    std::memset(p, 0xFF, n);
#endif
#ifdef TL_ASAN
    ASAN_POISON_MEMORY_REGION(p, n);
#endif
    (void)p;
    (void)n;
}

// A tensor now owns these bytes.
inline void mark_owned(std::byte *p, size_t n) {
#ifdef TL_ASAN
    ASAN_UNPOISON_MEMORY_REGION(p, n);
#endif
    (void)p;
    (void)n;
}

}  // namespace tl
