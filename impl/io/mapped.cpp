#include "mapped.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <new>

#include "../error.h"

namespace tl {

tl_status MappedRegion::map(Memory &memory, int fd, size_t bytes, const char *path, MappedRegion **out) {
    void *p = memory.allocate(sizeof(MappedRegion), alignof(MappedRegion));
    if (!p) return fail(TL_E_OUT_OF_MEMORY, "%s: no memory for its mapping record: the allocator %s", path, refusal());
    void *data = bytes ? mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE, fd, 0) : nullptr;
    if (data == MAP_FAILED) {
        const int err = errno;
        memory.release(p, sizeof(MappedRegion));
        return fail(TL_E_IO, "%s: cannot map: %s", path, std::strerror(err));
    }
    *out = new (p) MappedRegion{static_cast<const std::byte *>(data), bytes, {1}, memory};
    return TL_OK;
}

void MappedRegion::release() {
    if (refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    if (bytes) munmap(const_cast<std::byte *>(data), bytes);
    Memory m = memory;
    this->~MappedRegion();
    m.release(this, sizeof(MappedRegion));
}

}  // namespace tl
