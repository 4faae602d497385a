#include "scope.h"

#include <cstring>

tl_scope::tl_scope(tl_context *ctx, tl::Memory *memory, uint32_t d)
    : context(ctx), depth(d), name(memory), generations(memory), slab(memory),
      headers(tl::UninitializedStlAllocator<tl::TensorHeader>(memory)) {}

bool OwnedName::assign(const char *text) {
    size_t size = std::strlen(text) + 1;
    char *copy = static_cast<char *>(memory_->allocate(size, 1));
    if (!copy) return false;
    std::memcpy(copy, text, size);
    clear();
    text_ = copy;
    size_ = size;
    return true;
}

void OwnedName::take(OwnedName &other) {
    clear();
    text_ = other.text_;
    size_ = other.size_;
    other.text_ = nullptr;
    other.size_ = 0;
}

void OwnedName::clear() {
    memory_->release(text_, size_);
    text_ = nullptr;
    size_ = 0;
}
