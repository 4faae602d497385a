#include "core/slab.h"

#include "core/error.h"

namespace tl {
namespace {

constexpr size_t kMinChunk = 64 * 1024;

}  // namespace

Slab::Slab(Memory *memory) : memory_(memory), chunks_(StlAllocator<Chunk>(memory)) {}

Slab::~Slab() { release_all(); }

size_t Slab::held_bytes() const {
    size_t total = 0;
    for (const Chunk &c : chunks_) total += c.size;
    return total;
}

void Slab::point_cursor_at_last_chunk() {
    if (chunks_.empty()) {
        cursor_ = end_ = last_base_ = nullptr;
        return;
    }
    Chunk &last = chunks_.back();
    last_base_ = last.base;
    cursor_ = last.base + last.used;
    end_ = last.base + last.size;
}

tl_status Slab::add_chunk(size_t size, const char *scope_name) {
    if (!room_for_one_more(chunks_, 4))
        return allocation_refused("scope '%s': no memory for its chunk table", scope_name);
    void *p = memory_->allocate(size, kTensorAlignment);
    if (!p) return allocation_refused("scope '%s': %zu bytes", scope_name, size);
    if (!chunks_.empty()) chunks_.back().used = size_t(cursor_ - chunks_.back().base);  // frozen from now on
    chunks_.push_back(Chunk{static_cast<std::byte *>(p), size, 0});
    mark_unowned(chunks_.back().base, size);
    point_cursor_at_last_chunk();
    return TL_OK;
}

tl_status Slab::open(tl_growth growth, size_t max_bytes, size_t initial_bytes, const char *scope_name) {
    growth_ = growth;
    max_bytes_ = max_bytes;
    peak_ = 0;
    grow_events_ = 0;
    if (initial_bytes == 0) return TL_OK;
    size_t rounded;
    if (!round_up(initial_bytes, &rounded))
        return fail(TL_E_OUT_OF_MEMORY, "scope '%s': slab of %zu bytes overflows", scope_name, initial_bytes);
    if (max_bytes_ && rounded > max_bytes_)
        return fail(TL_E_INVALID_ARGUMENT, "scope '%s': slab_bytes %zu exceeds max_bytes %zu", scope_name,
                    initial_bytes, max_bytes_);
    return add_chunk(rounded, scope_name);
}

tl_status Slab::allocate_slow(size_t bytes, const char *scope_name, std::byte **out, std::byte **chunk_base) {
    if (bytes == 0) {
        *out = *chunk_base = empty_tensor_home();
        return TL_OK;
    }
    size_t rounded;
    if (!round_up(bytes, &rounded))
        return fail(TL_E_OUT_OF_MEMORY, "scope '%s': a request of %zu bytes overflows", scope_name, bytes);
    // Here the request does not fit the last chunk (or there is none).
    const size_t held = held_bytes();
    if (growth_ == TL_FIXED)
        return fail(TL_E_SCOPE_FULL, "scope '%s' is TL_FIXED: %zu of %zu bytes used, %zu more do not fit", scope_name,
                    used_, held, rounded);
    if (max_bytes_ && (rounded > max_bytes_ || used_ > max_bytes_ - rounded))
        return fail(TL_E_SCOPE_FULL, "scope '%s' uses %zu bytes; %zu more would pass its max_bytes %zu", scope_name,
                    used_, rounded, max_bytes_);
    // Double what is held, so a scope that keeps growing makes few chunks; under a cap, no
    // chunk larger than what the cap still allows (the merge at reset then fits the cap).
    size_t size = held > rounded ? held : rounded;
    if (size < kMinChunk) size = kMinChunk;
    if (max_bytes_ && size > max_bytes_ - used_) size = max_bytes_ - used_;
    TL_TRY(add_chunk(size, scope_name));
    ++grow_events_;
    return allocate(bytes, scope_name, out, chunk_base);  // fits now: the inline path takes it
}

void Slab::reset() {
    if (!chunks_.empty()) chunks_.back().used = size_t(cursor_ - chunks_.back().base);
    if (chunks_.size() > 1) {
        // One slab of the high-water size: the next identical step fits without a chunk.
        void *merged = memory_->allocate(peak_, kTensorAlignment);
        if (merged) {
            for (Chunk &c : chunks_) {
                mark_owned(c.base, c.size);
                memory_->release(c.base, c.size);
            }
            chunks_.clear();
            chunks_.push_back(Chunk{static_cast<std::byte *>(merged), peak_, 0});  // capacity kept: no throw
            ++grow_events_;
            mark_unowned(chunks_.back().base, peak_);
        }
        // Without memory to merge, the chunks are kept and reused as they are.
    }
    for (Chunk &c : chunks_) {
        mark_unowned(c.base, c.used);
        c.used = 0;
    }
    used_ = 0;
    point_cursor_at_last_chunk();
}

void Slab::release_all() {
    for (Chunk &c : chunks_) {
        mark_owned(c.base, c.size);  // the allocator may reuse it
        memory_->release(c.base, c.size);
    }
    chunks_.clear();
    used_ = 0;
    point_cursor_at_last_chunk();
}

}  // namespace tl
