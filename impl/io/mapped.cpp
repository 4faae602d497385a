#include "io/mapped.h"

#include <new>

#include "core/error.h"
#include "io/system_failure.h"

namespace tl {
namespace {

// The last reference: unmap, then free the record with the memory it came from.
void unmap(SharedStorage *storage) {
    auto *region = static_cast<MappedRegion *>(storage);
    if (region->mapped) platform::unmap_file(region->data, region->bytes);
    Memory m = region->memory;
    region->~MappedRegion();
    m.release(region, sizeof(MappedRegion));
}

}  // namespace

MappedRegion::MappedRegion(const std::byte *data, size_t bytes, const Memory &memory, bool mapped)
    : SharedStorage(unmap), data(data), bytes(bytes), memory(memory), mapped(mapped) {}

tl_status MappedRegion::map(Memory &memory, const platform::File &file, size_t bytes, const char *path,
                            MappedRegion **out) {
    void *p = memory.allocate(sizeof(MappedRegion), alignof(MappedRegion));
    if (!p) return allocation_refused("%s: no memory for its mapping record", path);
    const std::byte *data = nullptr;
    if (!platform::map_file(file, bytes, path, &data)) {
        memory.release(p, sizeof(MappedRegion));
        return system_failure();
    }
    *out = new (p) MappedRegion(data, bytes, memory, true);
    return TL_OK;
}

tl_status MappedRegion::borrow(Memory &memory, const std::byte *data, size_t bytes, MappedRegion **out) {
    void *p = memory.allocate(sizeof(MappedRegion), alignof(MappedRegion));
    if (!p) return allocation_refused("no memory for the record of the caller's bytes");
    *out = new (p) MappedRegion(data, bytes, memory, false);
    return TL_OK;
}

}  // namespace tl
