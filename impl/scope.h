// One nesting depth of a context's scope stack.  The record outlives each scope opened at its
// depth, so that the generation counter runs on across them (a handle of an earlier scope at
// this depth can never look current) and a stale handle can still be told what closed it.
#pragma once
#include <cstdint>
#include <vector>

#include "slab.h"
#include "tensor.h"

struct tl_context;

// A name copied into allocator memory.
class OwnedName {
public:
    explicit OwnedName(tl::Memory *memory) : memory_(memory) {}
    ~OwnedName() { clear(); }
    OwnedName(const OwnedName &) = delete;
    OwnedName &operator=(const OwnedName &) = delete;
    bool assign(const char *text);  // false: no memory, the old text kept
    void take(OwnedName &other);    // moves other's text here
    void clear();
    const char *c_str() const { return text_ ? text_ : ""; }

private:
    tl::Memory *memory_;
    char *text_ = nullptr;
    size_t size_ = 0;
};

struct tl_scope {
    tl_scope(tl_context *context, tl::Memory *memory, uint32_t depth);

    tl_context *const context;
    const uint32_t depth;  // 1 = outermost

    bool open = false;
    uint64_t id = 0;              // "#N": the context's Nth scope
    OwnedName name;
    uint64_t generation = 0;      // runs on across every scope opened at this depth
    uint64_t first_generation = 0;  // the counter when this scope opened: its generation 0
    tl::Slab slab;
    std::vector<tl::TensorHeader, tl::StlAllocator<tl::TensorHeader>> headers;

    // The scope closed last at this depth, for messages about its handles.
    bool has_closed = false;
    uint64_t closed_id = 0, closed_first_generation = 0, closed_last_generation = 0;
    OwnedName closed_name;

    uint64_t resets() const { return generation - first_generation; }
    uint32_t handle_generation() const { return uint32_t(generation); }
};
