#include "core/ambient.h"

#include "core/error.h"
#include "core/handle.h"

namespace tl {

tl_status AmbientStore::reserve_one() {
    TL_TRY(generations_.reserve());
    if (free_head_ != kNone) return TL_OK;
    if (slots_.size() >= kMaxSlots)
        return fail(TL_E_OUT_OF_MEMORY, "ambient store holds the most tensors a storage can (%u)", kMaxSlots);
    if (!room_for_one_more(slots_, 64)) return allocation_refused("no memory to grow the ambient tensor table");
    return TL_OK;
}

void AmbientStore::add(const TensorHeader &header, uint32_t base_slot, uint32_t *slot, uint64_t *generation) {
    uint32_t index;
    if (free_head_ != kNone) {
        index = free_head_;
        free_head_ = slots_[index].next_free;
    } else {
        index = uint32_t(slots_.size());
        slots_.push_back(Slot{header, 0, kNone, false, kNone, kNone, kNone, kNone});  // capacity was reserved
    }
    Slot &s = slots_[index];
    s.header = header;
    s.live = true;
    s.next_free = kNone;
    s.generation = generations_.next();
    s.base = base_slot;
    s.first_view = s.prev_view = s.next_view = kNone;
    if (base_slot != kNone) {  // at the head of the base's list
        Slot &b = slots_[base_slot];
        s.next_view = b.first_view;
        if (b.first_view != kNone) slots_[b.first_view].prev_view = index;
        b.first_view = index;
    }
    ++live_;
    live_bytes_ += header.storage_bytes;
    *slot = index;
    *generation = s.generation;
}

void AmbientStore::unlink_view(Slot &view) {
    if (view.prev_view != kNone)
        slots_[view.prev_view].next_view = view.next_view;
    else
        slots_[view.base].first_view = view.next_view;
    if (view.next_view != kNone) slots_[view.next_view].prev_view = view.prev_view;
}

void AmbientStore::release(uint32_t slot) {
    Slot &s = slots_[slot];
    s.live = false;
    live_bytes_ -= s.header.storage_bytes;
    s.next_free = free_head_;
    free_head_ = slot;
    --live_;
}

void AmbientStore::remove(uint32_t slot) {
    Slot &s = slots_[slot];
    if (s.base != kNone) unlink_view(s);
    // A base's views die with it: their slots go back to the free list too.
    for (uint32_t v = s.first_view; v != kNone;) {
        const uint32_t next = slots_[v].next_view;
        release(v);
        v = next;
    }
    s.first_view = kNone;
    release(slot);
}

}  // namespace tl
