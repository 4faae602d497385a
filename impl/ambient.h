// Ambient tensors: individually owned, individually freed.  Slots are reused through a free
// list; each reuse bumps the slot's generation so a freed handle never matches again.
#pragma once
#include <cstdint>
#include <vector>

#include "memory.h"
#include "tensor.h"

namespace tl {

class AmbientStore {
public:
    explicit AmbientStore(Memory *memory) : slots_(StlAllocator<Slot>(memory)) {}

    // Makes room for one more slot, so that add() cannot fail after the storage is allocated.
    tl_status reserve_one();
    // Requires reserve_one() first.
    void add(const TensorHeader &header, uint32_t *slot, uint32_t *generation);
    const TensorHeader *find(uint32_t slot, uint32_t generation) const;
    bool was_issued(uint32_t slot) const { return slot < slots_.size(); }
    void remove(uint32_t slot);
    uint64_t live() const { return live_; }
    uint64_t live_bytes() const { return live_bytes_; }  // bytes of the live tensors' own blocks

    // Every live owner's block, for the context's destruction.
    template <class F>
    void for_each_live(F &&f) const {
        for (const Slot &s : slots_)
            if (s.live) f(s.header);
    }

private:
    struct Slot {
        TensorHeader header;
        uint32_t generation;
        uint32_t next_free;
        bool live;
    };
    static constexpr uint32_t kNone = UINT32_MAX;
    std::vector<Slot, StlAllocator<Slot>> slots_;
    uint32_t free_head_ = kNone;
    uint64_t live_ = 0;
    uint64_t live_bytes_ = 0;
};

}  // namespace tl
