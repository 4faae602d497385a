// A file's data mapped read-only, shared by the tensors over it and the file that made it.
// Reference counted (atomically: tensors of several contexts, on several threads, may share
// one mapping); unmapped when the file is closed and the last tensor over it has died.
#pragma once
#include <atomic>
#include <cstddef>

#include "core/memory.h"
#include "platform/platform.h"

namespace tl {

struct MappedRegion {
    const std::byte *data;
    size_t bytes;
    std::atomic<long> refs;
    Memory memory;  // what the record itself came from

    // A mapping of the first bytes of file, one reference held; a status with a message.
    static tl_status map(Memory &memory, const platform::File &file, size_t bytes, const char *path,
                         MappedRegion **out);
    void acquire() { refs.fetch_add(1, std::memory_order_relaxed); }
    void release();  // the last release unmaps and frees the record
};

}  // namespace tl
