// A scope's memory: bump allocation from one slab, 64-byte aligned.  TL_GROW adds chunks when a
// request does not fit and merges them at the next reset into one slab of the high-water size,
// so a repeated step allocates nothing after warm-up.  TL_FIXED refuses instead.
//
// As LLVM's BumpPtrAllocator: the common case (a request that fits the current chunk) is an
// inline bump of one cursor; empty requests, new chunks and refusals are out of line.
#pragma once
#include <cstddef>
#include <vector>

#include "core/memory.h"
#include "core/poison.h"

namespace tl {

class Slab {
public:
    explicit Slab(Memory *memory);
    ~Slab();
    Slab(const Slab &) = delete;
    Slab &operator=(const Slab &) = delete;

    // A scope opening at this depth: its policy, and no slab yet.  The slab holds nothing then.
    tl_status open(tl_growth growth, size_t max_bytes, size_t initial_bytes, const char *scope_name);
    // On failure nothing changes.  A 0-byte request gets an aligned address that holds nothing.
    // *chunk_base is the start of the chunk that holds *out (a tensor's "storage").
    tl_status allocate(size_t bytes, const char *scope_name, std::byte **out, std::byte **chunk_base) {
        const size_t room = size_t(end_ - cursor_);
        if (bytes - 1 < room) {  // 1 <= bytes <= room, so rounding up cannot overflow
            const size_t rounded = aligned_up(bytes);
            if (rounded <= room) {
                *out = cursor_;
                *chunk_base = last_base_;
                cursor_ += rounded;
                used_ += rounded;
                if (used_ > peak_) peak_ = used_;
                mark_owned(*out, bytes);  // the rounding padding stays poisoned under ASan
                return TL_OK;
            }
        }
        return allocate_slow(bytes, scope_name, out, chunk_base);
    }
    // Forget every allocation; merge chunks into one slab of peak size when memory allows.
    void reset();
    void release_all();

    size_t held_bytes() const;
    size_t used_bytes() const { return used_; }
    size_t peak_bytes() const { return peak_; }
    // Bytes placed past the first chunk since the last reset: what the merge at reset absorbs.
    size_t overflow_bytes() const { return chunks_.size() > 1 ? used_ - chunks_.front().used : 0; }
    uint64_t grow_events() const { return grow_events_; }
    tl_growth growth() const { return growth_; }
    size_t max_bytes() const { return max_bytes_; }

private:
    struct Chunk {
        std::byte *base;
        size_t size;
        size_t used;  // for every chunk but the last; the last one's is cursor_ - base
    };
    tl_status allocate_slow(size_t bytes, const char *scope_name, std::byte **out, std::byte **chunk_base);
    tl_status add_chunk(size_t size, const char *scope_name);
    void point_cursor_at_last_chunk();

    Memory *memory_;
    tl_growth growth_ = TL_GROW;
    size_t max_bytes_ = 0;
    std::vector<Chunk, StlAllocator<Chunk>> chunks_;
    std::byte *last_base_ = nullptr;                // the last chunk's start
    std::byte *cursor_ = nullptr, *end_ = nullptr;  // its free bytes
    size_t used_ = 0, peak_ = 0;
    uint64_t grow_events_ = 0;
};

}  // namespace tl
