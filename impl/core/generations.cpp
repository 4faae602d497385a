#include "core/generations.h"

#include <algorithm>
#include <atomic>

#include "core/error.h"

namespace tl {
namespace {

std::atomic<uint64_t> next_unissued{1};  // 0 is never a generation: no handle is all zero bits

}  // namespace

uint64_t next_unissued_generation() { return next_unissued.load(); }
void set_next_unissued_generation(uint64_t value) { next_unissued.store(value); }

tl_status GenerationSource::draw_block() {
    const uint64_t size =
        blocks_.empty() ? kFirstBlock : std::min(kMaxBlock, 2 * (blocks_.back().end - blocks_.back().start));
    if (blocks_.capacity() < kKeptBlocks) {
        try {
            blocks_.reserve(kKeptBlocks);
        } catch (const std::bad_alloc &) {
            return allocation_refused("no memory for the list of handle generations");
        }
    }
    uint64_t start = next_unissued.load(std::memory_order_relaxed);
    do {
        if (start > kGenerationLimit - size)
            return fail(TL_E_OUT_OF_MEMORY,
                        "this process has issued its 2^%u handle generations (resets, scope opens and ambient "
                        "tensors); handles never wrap, so no more can be made",
                        kGenerationBits);
    } while (!next_unissued.compare_exchange_weak(start, start + size, std::memory_order_relaxed));
    if (blocks_.size() == kKeptBlocks) {  // the oldest block leaves the history; no allocation
        blocks_.erase(blocks_.begin());
        forgotten_ = true;
    }
    blocks_.push_back(Block{start, start + size, issued_});  // capacity reserved: cannot throw
    next_ = start;
    end_ = start + size;
    return TL_OK;
}

int64_t GenerationSource::index_of(uint64_t v) const {
    auto it =
        std::upper_bound(blocks_.begin(), blocks_.end(), v, [](uint64_t x, const Block &b) { return x < b.start; });
    if (it == blocks_.begin()) return -1;
    const Block &b = *--it;
    const bool issued = v < b.end && (&b != &blocks_.back() || v < next_);
    return issued ? int64_t(b.first_index + (v - b.start)) : -1;
}

}  // namespace tl
