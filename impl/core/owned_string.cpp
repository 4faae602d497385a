#include "core/owned_string.h"

#include <cstring>

namespace tl {
namespace {

struct StringHeader {
    tl_allocator allocator;
    size_t block_size;
};
constexpr size_t kHeaderBytes =
    (sizeof(StringHeader) + alignof(std::max_align_t) - 1) & ~(alignof(std::max_align_t) - 1);

}  // namespace

char *make_owned_string(Memory &memory, const char *text, size_t len) {
    if (len > size_t(-1) - kHeaderBytes - 1) return nullptr;
    const size_t block = kHeaderBytes + len + 1;
    auto *p = static_cast<std::byte *>(memory.allocate(block));
    if (!p) return nullptr;
    StringHeader h{memory.allocator(), block};
    std::memcpy(p, &h, sizeof h);
    char *s = reinterpret_cast<char *>(p + kHeaderBytes);
    std::memcpy(s, text, len);
    s[len] = '\0';
    return s;
}

void free_owned_string(char *s) {
    if (!s) return;
    std::byte *p = reinterpret_cast<std::byte *>(s) - kHeaderBytes;
    StringHeader h;
    std::memcpy(&h, p, sizeof h);
    h.allocator.free(h.allocator.user, p, h.block_size);
}

bool OwnedString::assign(const char *text) {
    char *copy = make_owned_string(*memory_, text, std::strlen(text));
    if (!copy) return false;
    clear();
    text_ = copy;
    return true;
}

void OwnedString::clear() {
    free_owned_string(text_);
    text_ = nullptr;
}

}  // namespace tl
