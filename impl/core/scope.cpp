#include "core/scope.h"

namespace tl {

Scope::Scope(tl_context *ctx, Memory *memory, uint32_t d)
    : context(ctx),
      depth(d),
      name(memory),
      generations(memory),
      slab(memory),
      headers(UninitializedStlAllocator<TensorHeader>(memory)) {}

tl_scope_stats Scope::stats() const {
    tl_scope_stats s = TL_SCOPE_STATS_INIT;
    s.generation = resets();
    s.slab_bytes = slab.held_bytes();
    s.used_bytes = slab.used_bytes();
    s.peak_bytes = slab.peak_bytes();
    s.overflow_bytes = slab.overflow_bytes();
    s.grow_events = slab.grow_events();
    s.live_tensors = headers.size();
    return s;
}

}  // namespace tl
