#include "io/mapped.h"

#include <new>

#include "core/error.h"

namespace tl {

tl_status MappedRegion::map(Memory &memory, const platform::File &file, size_t bytes, const char *path,
                            MappedRegion **out) {
    void *p = memory.allocate(sizeof(MappedRegion), alignof(MappedRegion));
    if (!p) return fail(TL_E_OUT_OF_MEMORY, "%s: no memory for its mapping record: the allocator %s", path, refusal());
    const std::byte *data = nullptr;
    const tl_status st = platform::map_file(file, bytes, path, &data);
    if (st != TL_OK) {
        memory.release(p, sizeof(MappedRegion));
        return st;
    }
    *out = new (p) MappedRegion{data, bytes, {1}, memory};
    return TL_OK;
}

void MappedRegion::release() {
    if (refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    platform::unmap_file(data, bytes);
    Memory m = memory;
    this->~MappedRegion();
    m.release(this, sizeof(MappedRegion));
}

}  // namespace tl
