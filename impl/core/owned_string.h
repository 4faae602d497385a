// Strings in allocator memory, one kind of block for all of them: those handed to the caller
// (tl_string_free needs no context, and works after the context is gone, because the block
// starts with the allocator that made it) and those the library keeps (a scope's name).
#pragma once
#include <cstddef>

#include "core/memory.h"

namespace tl {

// A copy of text[0..len) with a NUL; nullptr when the allocator refuses.
char *make_owned_string(Memory &memory, const char *text, size_t len);
void free_owned_string(char *s);

// A string the library keeps, in such a block.
class OwnedString {
public:
    explicit OwnedString(Memory *memory) : memory_(memory) {}
    ~OwnedString() { clear(); }
    OwnedString(const OwnedString &) = delete;
    OwnedString &operator=(const OwnedString &) = delete;
    bool assign(const char *text);  // false: no memory, the old text kept
    void clear();
    const char *c_str() const { return text_ ? text_ : ""; }

private:
    Memory *memory_;
    char *text_ = nullptr;
};

}  // namespace tl
