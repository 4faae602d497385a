// Ambient tensors: individually owned, individually freed.  Slots are reused through a free
// list; each use takes a new process-unique generation, so a freed handle (or another
// context's) never matches again.  A base keeps a list of its ambient views: freeing the base
// frees them too, so views never hold slots after their base is gone.
#pragma once
#include <cstdint>
#include <vector>

#include "core/generations.h"
#include "core/memory.h"
#include "core/tensor.h"

namespace tl {

class AmbientStore {
public:
    explicit AmbientStore(Memory *memory) : slots_(StlAllocator<Slot>(memory)), generations_(memory) {}

    // Makes room for one more slot and its generation, so that add() cannot fail after the
    // storage is allocated.
    tl_status reserve_one();
    // Requires reserve_one() first.  base_slot: the slot of the ambient base a view is of, or
    // kNone for a tensor that owns its storage.
    void add(const TensorHeader &header, uint32_t base_slot, uint32_t *slot, uint64_t *generation);
    const TensorHeader *find(uint32_t slot, uint64_t generation) const {
        if (slot >= slots_.size()) return nullptr;
        const Slot &s = slots_[slot];
        return s.live && s.generation == generation ? &s.header : nullptr;
    }
    // Whether this store ever issued generation g (else the handle is another context's).
    bool issued(uint64_t generation) const {
        return generations_.index_of(generation) >= 0 || generations_.before_history(generation);
    }
    // Frees the slot, and the slots of its views (their storage is the base's, freed by the caller).
    void remove(uint32_t slot);
    static constexpr uint32_t kNone = UINT32_MAX;
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
        uint64_t generation;
        uint32_t next_free;
        bool live;
        uint32_t base;                  // a view's base slot, else kNone
        uint32_t first_view;            // a base's views, a doubly linked list
        uint32_t prev_view, next_view;  // a view's neighbours in its base's list
    };
    void unlink_view(Slot &view);
    void release(uint32_t slot);
    std::vector<Slot, StlAllocator<Slot>> slots_;
    GenerationSource generations_;
    uint32_t free_head_ = kNone;
    uint64_t live_ = 0;
    uint64_t live_bytes_ = 0;
};

}  // namespace tl
