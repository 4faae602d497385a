#include "core/memory.h"

#include <cstdint>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>

#include "platform/platform.h"

namespace tl {
namespace {

// Blocks this large (slabs, big ambient tensors) are mapped and unmapped directly.  Through
// malloc they would outlive their free: glibc raises its mmap threshold after the first such
// free and keeps later ones in its heap, so contexts made and destroyed over and over (a
// language's collector, an editor's hot reload) would grow the process without bound.
constexpr size_t kMappedBlockBytes = 512 * 1024;

void *default_alloc(void *, size_t size, size_t alignment) {
    if (size >= kMappedBlockBytes && alignment <= 4096) {
        return platform::map_pages(size);
    }
    if (alignment < sizeof(void *)) alignment = sizeof(void *);
    return platform::allocate_aligned(size, alignment);
}

// The size is the one asked for, so it tells which way the block was made.
void default_free(void *, void *ptr, size_t size) {
    if (size >= kMappedBlockBytes)
        platform::unmap_pages(ptr, size);
    else
        platform::free_aligned(ptr);
}

alignas(kTensorAlignment) std::byte empty_home[kTensorAlignment];

thread_local char refusal_text[160] = "refused it";

}  // namespace

tl_status allocation_refused(const char *format, ...) {
    char what[384];
    va_list args;
    va_start(args, format);
    std::vsnprintf(what, sizeof what, format, args);
    va_end(args);
    return fail(TL_E_OUT_OF_MEMORY, "%s: the allocator %s", what, refusal_text);
}

std::byte *empty_tensor_home() { return empty_home; }

Memory::Memory(const tl_allocator *custom)
    : allocator_(custom ? *custom : tl_allocator{nullptr, default_alloc, default_free}) {}

void *Memory::allocate(size_t size, size_t alignment) {
    if (size == 0) size = 1;  // an allocator need not handle 0; we never hand such memory out
    void *p = allocator_.alloc(allocator_.user, size, alignment);
    if (!p) {
        std::snprintf(refusal_text, sizeof refusal_text, "refused it");
        return nullptr;
    }
    if (reinterpret_cast<uintptr_t>(p) & (alignment - 1)) {
        std::snprintf(refusal_text, sizeof refusal_text, "returned %p, not aligned to %zu bytes as tl_allocator asks",
                      p, alignment);
        allocator_.free(allocator_.user, p, size);
        return nullptr;
    }
    return p;
}

void Memory::release(void *ptr, size_t size) {
    if (ptr) allocator_.free(allocator_.user, ptr, size == 0 ? 1 : size);
}

void *Memory::allocate_streamed(size_t size) {
    if (allocator_.alloc != default_alloc) return allocate(size, 4096);
    void *p = platform::map_huge_pages(size == 0 ? 1 : size);
    if (!p) std::snprintf(refusal_text, sizeof refusal_text, "refused it");
    return p;
}

void Memory::release_streamed(void *ptr, size_t size) {
    if (!ptr) return;
    if (allocator_.alloc != default_alloc) return release(ptr, size);
    platform::unmap_pages(ptr, size == 0 ? 1 : size);
}

}  // namespace tl
