// The context's allocator, and an STL allocator on top of it, so that every byte the library
// owns (tables included) comes from the embedder's tl_allocator.
#pragma once
#include <cstddef>
#include <new>
#include <utility>

#include "core/error.h"
#include "tensorlife/tl_context.h"

namespace tl {

constexpr size_t kTensorAlignment = 64;

// bytes rounded up to kTensorAlignment, for a size that cannot be near the top of size_t (the
// size of memory that exists, or one already checked).
constexpr size_t aligned_up(size_t bytes) { return (bytes + kTensorAlignment - 1) & ~(kTensorAlignment - 1); }
// The same for any size: false when rounding up would wrap.
inline bool round_up(size_t bytes, size_t *out) {
    if (bytes > size_t(-1) - (kTensorAlignment - 1)) return false;
    *out = aligned_up(bytes);
    return true;
}

// Where tensors with no elements point: aligned, owned by nobody, never read or written.
std::byte *empty_tensor_home();

// TL_E_OUT_OF_MEMORY after Memory::allocate returned nullptr (directly, or as StlAllocator's
// bad_alloc): the message formatted from format, then why this thread's last allocation failed
// (": the allocator refused it", or that it returned memory misaligned, given back to it).
tl_status allocation_refused(const char *format, ...) TL_PRINTF_FORMAT(1, 2);

class Memory {
public:
    explicit Memory(const tl_allocator *custom);
    // nullptr when the allocator refuses or returns memory not aligned as asked (then
    // allocation_refused says which); size 0 is never passed on.
    void *allocate(size_t size, size_t alignment = alignof(std::max_align_t));
    void release(void *ptr, size_t size);
    // A block read as a stream over and over (a model's decode copies of its weights): with the
    // default allocator mapped on its own, on huge pages where the system offers them
    // (platform::map_huge_pages); with the embedder's allocator from it, 4096-aligned, where it
    // chooses the pages.  Given back with release_streamed.
    void *allocate_streamed(size_t size);
    void release_streamed(void *ptr, size_t size);
    const tl_allocator &allocator() const { return allocator_; }

private:
    tl_allocator allocator_;
};

// Throws std::bad_alloc on refusal; the ABI boundary turns that into TL_E_OUT_OF_MEMORY.
template <class T>
struct StlAllocator {
    using value_type = T;
    Memory *memory;
    explicit StlAllocator(Memory *m) : memory(m) {}
    template <class U>
    StlAllocator(const StlAllocator<U> &other) : memory(other.memory) {}
    T *allocate(size_t n) {
        if (n > size_t(-1) / sizeof(T)) throw std::bad_alloc();
        void *p = memory->allocate(n * sizeof(T),
                                   alignof(T) < alignof(std::max_align_t) ? alignof(std::max_align_t) : alignof(T));
        if (!p) throw std::bad_alloc();
        return static_cast<T *>(p);
    }
    void deallocate(T *p, size_t n) { memory->release(p, n * sizeof(T)); }
    template <class U>
    bool operator==(const StlAllocator<U> &o) const {
        return memory == o.memory;
    }
    template <class U>
    bool operator!=(const StlAllocator<U> &o) const {
        return memory != o.memory;
    }
};

// Room for one more element of a table in allocator memory, by doubling (`first` when it is
// empty), so a table that keeps growing reallocates rarely and a steady state never; false
// when the allocator refuses (the table is as it was).
template <class Vector>
bool room_for_one_more(Vector &v, size_t first) {
    if (v.size() < v.capacity()) return true;
    try {
        v.reserve(v.empty() ? first : v.size() * 2);
    } catch (const std::bad_alloc &) {
        return false;
    }
    return true;
}

// For a table whose elements are written field by field right after they are placed (a
// scope's tensor headers): emplace_back() leaves the new element uninitialized instead of
// zeroing it, which cost more than the rest of placing a tensor.
template <class T>
struct UninitializedStlAllocator : StlAllocator<T> {
    using StlAllocator<T>::StlAllocator;
    template <class U>
    UninitializedStlAllocator(const UninitializedStlAllocator<U> &other) : StlAllocator<T>(other.memory) {}
    template <class U>
    void construct(U *p) noexcept {
        ::new (static_cast<void *>(p)) U;
    }
    template <class U, class... Args>
    void construct(U *p, Args &&...args) {
        ::new (static_cast<void *>(p)) U(std::forward<Args>(args)...);
    }
};

}  // namespace tl
