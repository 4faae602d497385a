// safetensors: an 8-byte little-endian header length, a JSON header naming each tensor's
// dtype, shape and [begin, end) byte range in the data section, then the data.
#pragma once
#include <vector>

#include "core/context.h"
#include "io/mapped.h"
#include "platform/platform.h"
#include "tensorlife/tl_io.h"

struct tl_safetensors_file {
    explicit tl_safetensors_file(const tl::Memory &m);
    ~tl_safetensors_file();

    struct Entry {
        size_t name_offset;  // into names
        tl_dtype dtype;  // as stored, and as it loads
        int ndim;
        int64_t shape[TL_MAX_DIMS];
        uint64_t begin, end;  // in the data section
    };

    tl::Memory memory;        // a copy: the file may outlive its context
    tl::platform::File file;  // read at offsets: no stdio buffer
    uint64_t data_start = 0, file_bytes = 0;
    tl::MappedRegion *region = nullptr;  // tl_safetensors_map: the whole file, one reference
    std::vector<Entry, tl::StlAllocator<Entry>> entries;
    std::vector<char, tl::StlAllocator<char>> names;  // NUL-separated
    // Entries by name (indices into entries, sorted with strcmp): duplicates are neighbours and
    // tl_safetensors_get is a binary search, so a file of a million tiny tensors costs n log n, not n^2.
    std::vector<uint32_t, tl::StlAllocator<uint32_t>> by_name;

    const char *name_of(const Entry &e) const { return &names[e.name_offset]; }
    const Entry *find(const char *name) const;
    // Whether tl_safetensors_get of e gives a tensor over the mapping (else a copy).
    bool maps(const Entry &e) const;
};

namespace tl {

tl_status safetensors_open(tl_context &ctx, const char *path, tl_safetensors_file **out);
// safetensors_open, and the whole file mapped read-only for tensors over it.
tl_status safetensors_map(tl_context &ctx, const char *path, tl_safetensors_file **out);
// Closes the file and frees its index (with the allocator it was made with).
void safetensors_close(tl_safetensors_file *f);
tl_status safetensors_get(tl_context &ctx, tl_safetensors_file &f, const char *name, tl_tensor *out);
tl_status safetensors_save(tl_context &ctx, const char *path, int n, const char *const *names,
                           const tl_tensor *tensors);

}  // namespace tl
