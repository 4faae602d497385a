// Handle generations unique in the process.  Every storage (each scope depth's record, the
// ambient store) draws its generation values in blocks from one process-wide counter, so no two
// storages of any two contexts ever issue the same value: a handle kept past its scope's reset,
// or taken to another context, can never look current.  Blocks start small (short-lived
// contexts take little of the space) and double up to kMaxBlock; each storage keeps its last
// kKeptBlocks blocks (allocated once, at its first draw: a steady state allocates nothing), so a
// stale value can be told apart from another context's and given its index ("gen 49") in the
// storage's history.  That history reaches back about 49 million values per storage; a value
// older than that is reported as "an old generation, or another context's".  The space is 40 bits (the handle's
// generation field): once 2^40 values are issued, drawing fails with a status and nothing wraps.
#pragma once
#include <cstdint>
#include <vector>

#include "core/error.h"
#include "core/memory.h"

namespace tl {

constexpr uint32_t kGenerationBits = 40;
constexpr uint64_t kGenerationLimit = uint64_t(1) << kGenerationBits;  // values are 1 .. limit-1

// For tests only (tests/internal): where the process-wide counter stands, and moving it.
uint64_t next_unissued_generation();
void set_next_unissued_generation(uint64_t value);

class GenerationSource {
public:
    explicit GenerationSource(Memory *memory) : blocks_(StlAllocator<Block>(memory)) {}

    // Makes sure the next value is at hand, or fails with a message (the process's
    // generations are used up, or no memory for the block list); then next() cannot fail.
    tl_status reserve() { return next_ != end_ ? TL_OK : draw_block(); }
    // A new value, larger than every earlier one of this source.  Requires reserve() first.
    uint64_t next() {
        ++issued_;
        return next_++;
    }
    // How many values this source issued before v (0 for its first), or -1 when v is not one
    // of its values (another context's, or never issued) or older than the kept history.
    int64_t index_of(uint64_t v) const;
    // Whether v is older than the kept history (it may be this source's or another's).
    bool before_history(uint64_t v) const { return forgotten_ && v < blocks_.front().start; }
    uint64_t issued() const { return issued_; }

private:
    struct Block {
        uint64_t start, end;  // values [start, end)
        uint64_t first_index;
    };
    static constexpr uint64_t kFirstBlock = 16, kMaxBlock = uint64_t(1) << 20;
    static constexpr size_t kKeptBlocks = 64;
    tl_status draw_block();

    std::vector<Block, StlAllocator<Block>> blocks_;
    uint64_t next_ = 0, end_ = 0, issued_ = 0;
    bool forgotten_ = false;  // blocks were dropped from the front of the history
};

}  // namespace tl
