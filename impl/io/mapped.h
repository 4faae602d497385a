// A file's data mapped read-only, shared by the tensors over it and the file that made it;
// unmapped when the file is closed and the last tensor over it has died.
#pragma once
#include <cstddef>

#include "core/memory.h"
#include "core/shared_storage.h"
#include "platform/platform.h"

namespace tl {

struct MappedRegion : SharedStorage {
    const std::byte *data;
    size_t bytes;
    Memory memory;  // what the record itself came from
    bool mapped;    // ours to unmap at the end; else the caller's memory, left as it is

    MappedRegion(const std::byte *data, size_t bytes, const Memory &memory, bool mapped);
    // A mapping of the first bytes of file, one reference held; a status with a message.
    static tl_status map(Memory &memory, const platform::File &file, size_t bytes, const char *path,
                         MappedRegion **out);
    // The caller's memory (a mapping of its own, a package's bytes) as such a region.
    static tl_status borrow(Memory &memory, const std::byte *data, size_t bytes, MappedRegion **out);
};

}  // namespace tl
