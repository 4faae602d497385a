#include "ambient.h"

#include "error.h"
#include "handle.h"

namespace tl {

tl_status AmbientStore::reserve_one() {
    if (free_head_ != kNone) return TL_OK;
    if (slots_.size() >= kMaxSlots)
        return fail(TL_E_OUT_OF_MEMORY, "ambient store holds the most tensors a storage can (%u)", kMaxSlots);
    if (slots_.size() == slots_.capacity()) {
        try {
            slots_.reserve(slots_.empty() ? 64 : slots_.size() * 2);
        } catch (const std::bad_alloc &) {
            return fail(TL_E_OUT_OF_MEMORY, "no memory to grow the ambient tensor table");
        }
    }
    return TL_OK;
}

void AmbientStore::add(const TensorHeader &header, uint32_t *slot, uint32_t *generation) {
    uint32_t index;
    if (free_head_ != kNone) {
        index = free_head_;
        free_head_ = slots_[index].next_free;
    } else {
        index = uint32_t(slots_.size());
        slots_.push_back(Slot{header, 0, kNone, false});  // capacity was reserved
    }
    Slot &s = slots_[index];
    s.header = header;
    s.live = true;
    s.next_free = kNone;
    ++live_;
    live_bytes_ += header.storage_bytes;
    *slot = index;
    *generation = s.generation;
}

const TensorHeader *AmbientStore::find(uint32_t slot, uint32_t generation) const {
    if (slot >= slots_.size()) return nullptr;
    const Slot &s = slots_[slot];
    return s.live && s.generation == generation ? &s.header : nullptr;
}

void AmbientStore::remove(uint32_t slot) {
    Slot &s = slots_[slot];
    s.live = false;
    live_bytes_ -= s.header.storage_bytes;
    ++s.generation;
    s.next_free = free_head_;
    free_head_ = slot;
    --live_;
}

}  // namespace tl
