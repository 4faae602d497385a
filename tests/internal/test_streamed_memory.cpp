// Memory::allocate_streamed, where a model's decode copies of its weights live: with the default
// allocator, blocks mapped on their own that start on a 2 MiB boundary (so the system can back
// them with huge pages; whether it does is the machine's choice, not asserted), zeroed, every
// byte writable, given back whole; with an embedder's allocator, its blocks, 4096-aligned, freed
// with the size asked.
#include <criterion/criterion.h>

#include <cstdint>
#include <cstring>

#include "aligned_block.h"
#include "core/memory.h"

namespace {

struct Counted {
    long allocs = 0, frees = 0;
    size_t last_alignment = 0, freed_size = 0;
    void *block = nullptr;
};

void *counted_alloc(void *user, size_t size, size_t alignment) {
    auto *c = static_cast<Counted *>(user);
    ++c->allocs, c->last_alignment = alignment;
    return c->block = aligned_block_alloc(size, alignment);
}

void counted_free(void *user, void *ptr, size_t size) {
    auto *c = static_cast<Counted *>(user);
    ++c->frees, c->freed_size = size;
    aligned_block_free(ptr);
}

}  // namespace

Test(streamed_memory, the_default_allocator_maps_blocks_on_2_mib_boundaries) {
    tl::Memory memory(nullptr);
    for (size_t bytes : {size_t(1), size_t(4096), size_t(300000), (size_t(2) << 20) + 123, size_t(5) << 20}) {
        auto *p = static_cast<unsigned char *>(memory.allocate_streamed(bytes));
        cr_assert(p, "%zu bytes refused", bytes);
#if defined(__linux__)
        cr_assert_eq(reinterpret_cast<uintptr_t>(p) % (size_t(2) << 20), 0u, "%zu bytes at %p", bytes, (void *)p);
#endif
        cr_assert_eq(reinterpret_cast<uintptr_t>(p) % 4096, 0u);
        cr_assert(p[0] == 0 && p[bytes - 1] == 0, "not zeroed");
        std::memset(p, 0xab, bytes);  // every byte its own (ASan and valgrind watch the edges)
        cr_assert(p[bytes / 2] == 0xab);
        memory.release_streamed(p, bytes);
    }
    memory.release_streamed(nullptr, 10);  // nothing
    auto *one = static_cast<unsigned char *>(memory.allocate_streamed(0));  // a byte, as allocate gives
    cr_assert(one);
    one[0] = 1;
    memory.release_streamed(one, 0);
}

Test(streamed_memory, an_embedders_allocator_gives_every_block) {
    Counted c;
    const tl_allocator a{&c, counted_alloc, counted_free};
    tl::Memory memory(&a);
    void *p = memory.allocate_streamed(size_t(3) << 20);
    cr_assert(p && p == c.block);
    cr_assert_eq(c.allocs, 1);
    cr_assert_eq(c.last_alignment, 4096u);
    memory.release_streamed(p, size_t(3) << 20);
    cr_assert_eq(c.frees, 1);
    cr_assert_eq(c.freed_size, size_t(3) << 20);
    memory.release_streamed(nullptr, 10);  // nothing
    cr_assert_eq(c.frees, 1);
}
