// One nesting depth of a context's scope stack.  The record outlives each scope opened at its
// depth, so that the generation counter runs on across them (a handle of an earlier scope at
// this depth can never look current) and a stale handle can still be told what closed it.
#pragma once
#include <cstdint>
#include <vector>

#include "core/generations.h"
#include "core/owned_string.h"
#include "core/slab.h"
#include "core/tensor.h"

struct tl_context;

namespace tl {

struct Scope {
    Scope(tl_context *context, Memory *memory, uint32_t depth);

    tl_context *const context;
    const uint32_t depth;  // 1 = outermost

    // Which scope held this depth and which generations it used: kept for the open scope, and
    // for each closed one so that its stale handles can be told what closed them.
    struct Epoch {
        uint64_t id = 0;           // "#N": the context's Nth scope
        uint64_t opened = 0;       // the generation it opened with: its tl_scope handle's
        uint64_t first_index = 0;  // generations' index of its first generation
        uint64_t resets = 0;       // its generation ("gen N"): resets so far
    };

    bool open = false;
    Epoch epoch;  // the open scope's
    OwnedString name;
    // Runs on across every scope opened at this depth, so a handle of an earlier scope here can
    // never look current; process-unique, so neither can another context's.
    GenerationSource generations;
    uint64_t current = 0;        // the generation of the open scope's live tensors
    uint32_t mapped_owners = 0;  // tensors over mapped files this generation (released at reset)
    Slab slab;
    std::vector<TensorHeader, UninitializedStlAllocator<TensorHeader>> headers;

    // The scopes closed last at this depth, newest first in a ring, for messages about their
    // handles ("storage 'frame' #1 gen 1 is closed (scope was closed at gen 1)").  Names are kept
    // up to 95 bytes; older scopes are reported without a name.
    struct Closed {
        Epoch epoch;
        uint64_t last_index;  // generations' index of its last generation
        char name[96];
    };
    static constexpr uint32_t kClosedKept = 8;
    Closed closed[kClosedKept] = {};
    uint64_t closed_count = 0;
    const Closed *last_closed() const { return closed_count ? &closed[(closed_count - 1) % kClosedKept] : nullptr; }

    uint64_t resets() const { return epoch.resets; }
    // What tl_scope_stats_get reports (struct_size left to the caller).
    tl_scope_stats stats() const;
};

}  // namespace tl
