// The 64 bits of a tl_tensor: which storage, which slot, which generation.
// Layout, high to low: storage depth (5) | slot (19) | generation (40).
// Depth 0 is the ambient store; depth d >= 1 is the scope at nesting depth d.  Generations are
// unique in the process (generations.h): they also tell contexts apart, and never wrap.  No
// generation is 0, so no issued handle is 0.
#pragma once
#include <cstdint>

#include "core/generations.h"
#include "tensorlife/tl_tensor.h"

namespace tl {

struct HandleParts {
    uint32_t depth;
    uint32_t slot;
    uint64_t generation;
};

constexpr uint32_t kSlotBits = 19;
constexpr uint32_t kDepthBits = 5;
constexpr uint32_t kMaxSlots = (1u << kSlotBits) - 1;
static_assert(kMaxSlots == TL_MAX_TENSORS_PER_STORAGE, "header and handle layout disagree");
static_assert((1u << kDepthBits) - 1 == TL_MAX_SCOPE_DEPTH, "header and handle layout disagree");
static_assert(kDepthBits + kSlotBits + kGenerationBits == 64, "a handle is 64 bits");

inline tl_tensor pack_handle(HandleParts p) {
    return tl_tensor{(uint64_t(p.depth) << (kSlotBits + kGenerationBits)) | (uint64_t(p.slot) << kGenerationBits) |
                     p.generation};
}

inline HandleParts unpack_handle(tl_tensor t) {
    return HandleParts{uint32_t(t.bits >> (kSlotBits + kGenerationBits)),
                       uint32_t(t.bits >> kGenerationBits) & kMaxSlots, t.bits & (kGenerationLimit - 1)};
}

// The 64 bits of a tl_scope: depth (5) above the generation the scope opened with (40).  That
// generation is process-unique, so the handle of a closed scope never matches a later one.
inline tl_scope pack_scope_handle(uint32_t depth, uint64_t opened) {
    return tl_scope{(uint64_t(depth) << kGenerationBits) | opened};
}
inline uint32_t scope_handle_depth(tl_scope s) { return uint32_t(s.bits >> kGenerationBits); }
inline uint64_t scope_handle_generation(tl_scope s) { return s.bits & (kGenerationLimit - 1); }

}  // namespace tl
