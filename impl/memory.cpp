#include "memory.h"

#include <cstdlib>

namespace tl {
namespace {

void *default_alloc(void *, size_t size, size_t alignment) {
    if (alignment < sizeof(void *)) alignment = sizeof(void *);
    void *p = nullptr;
    return posix_memalign(&p, alignment, size) == 0 ? p : nullptr;
}

void default_free(void *, void *ptr, size_t) { std::free(ptr); }

alignas(kTensorAlignment) std::byte empty_home[kTensorAlignment];

}  // namespace

std::byte *empty_tensor_home() { return empty_home; }

Memory::Memory(const tl_allocator *custom)
    : allocator_(custom ? *custom : tl_allocator{nullptr, default_alloc, default_free}) {}

void *Memory::allocate(size_t size, size_t alignment) {
    if (size == 0) size = 1;  // an allocator need not handle 0; we never hand such memory out
    return allocator_.alloc(allocator_.user, size, alignment);
}

void Memory::release(void *ptr, size_t size) {
    if (ptr) allocator_.free(allocator_.user, ptr, size == 0 ? 1 : size);
}

}  // namespace tl
