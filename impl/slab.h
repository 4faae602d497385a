// A scope's memory: bump allocation from one slab, 64-byte aligned.  TL_GROW adds chunks when a
// request does not fit and merges them at the next reset into one slab of the high-water size,
// so a repeated step allocates nothing after warm-up.  TL_FIXED refuses instead.
#pragma once
#include <cstddef>
#include <vector>

#include "memory.h"

namespace tl {

class Slab {
public:
    Slab(Memory *memory, tl_growth growth, size_t max_bytes);
    ~Slab();
    Slab(const Slab &) = delete;
    Slab &operator=(const Slab &) = delete;

    // Set when a scope opens at this depth; the slab holds nothing then.
    void configure(tl_growth growth, size_t max_bytes) {
        growth_ = growth;
        max_bytes_ = max_bytes;
        peak_ = 0;
        grow_events_ = 0;
    }
    // The first slab, at open.  0 bytes: none until first use.
    tl_status reserve_initial(size_t bytes, const char *scope_name);
    // On failure nothing changes.  A 0-byte request gets an aligned address that holds nothing.
    // *chunk_base is the start of the chunk that holds *out (a tensor's "storage").
    tl_status allocate(size_t bytes, const char *scope_name, std::byte **out, std::byte **chunk_base);
    // Forget every allocation; merge chunks into one slab of peak size when memory allows.
    void reset();
    void release_all();

    size_t held_bytes() const;
    size_t used_bytes() const { return used_; }
    size_t peak_bytes() const { return peak_; }
    size_t overflow_bytes() const { return overflow_; }
    uint64_t grow_events() const { return grow_events_; }
    tl_growth growth() const { return growth_; }
    size_t max_bytes() const { return max_bytes_; }

private:
    struct Chunk {
        std::byte *base;
        size_t size;
        size_t used;
    };
    tl_status add_chunk(size_t at_least, const char *scope_name);

    Memory *memory_;
    tl_growth growth_;
    size_t max_bytes_;
    std::vector<Chunk, StlAllocator<Chunk>> chunks_;
    size_t used_ = 0, peak_ = 0, overflow_ = 0;
    uint64_t grow_events_ = 0;
};

}  // namespace tl
