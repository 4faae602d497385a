// The 64 bits of a tl_tensor: which context, which storage, which slot, which generation.
// Layout, high to low: context tag (8) | storage depth (5) | slot (19) | generation (32).
// Depth 0 is the ambient store; depth d >= 1 is the scope at nesting depth d.  The context tag
// is never 0, so no issued handle is 0.
#pragma once
#include <cstdint>

#include "tensorlife/tl_tensor.h"

namespace tl {

struct HandleParts {
    uint32_t context_tag;
    uint32_t depth;
    uint32_t slot;
    uint32_t generation;
};

constexpr uint32_t kSlotBits = 19;
constexpr uint32_t kDepthBits = 5;
constexpr uint32_t kMaxSlots = (1u << kSlotBits) - 1;
static_assert(kMaxSlots == TL_MAX_TENSORS_PER_STORAGE, "header and handle layout disagree");
static_assert((1u << kDepthBits) - 1 == TL_MAX_SCOPE_DEPTH, "header and handle layout disagree");

inline tl_tensor pack_handle(HandleParts p) {
    uint64_t bits = (uint64_t(p.context_tag & 0xff) << 56) | (uint64_t(p.depth & 0x1f) << 51) |
                    (uint64_t(p.slot & kMaxSlots) << 32) | uint64_t(p.generation);
    return tl_tensor{bits};
}

inline HandleParts unpack_handle(tl_tensor t) {
    return HandleParts{uint32_t(t.bits >> 56), uint32_t(t.bits >> 51) & 0x1f,
                       uint32_t(t.bits >> 32) & kMaxSlots, uint32_t(t.bits)};
}

}  // namespace tl
