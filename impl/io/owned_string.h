// Strings handed to the caller.  The block starts with the allocator that made it, so that
// tl_string_free needs no context (and works after the context is gone).
#pragma once
#include <cstddef>

#include "../memory.h"

namespace tl {

// A copy of text[0..len) with a NUL; nullptr when the allocator refuses.
char *make_owned_string(Memory &memory, const char *text, size_t len);
void free_owned_string(char *s);

}  // namespace tl
