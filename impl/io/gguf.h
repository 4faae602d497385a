// GGUF (versions 2 and 3), as llama.cpp writes it: "GGUF", version, tensor and key counts, the
// key-value metadata, the tensor infos (name, dims innermost first, ggml type, offset), then
// the data at the file's alignment.  The file is mapped whole; tensors are read-only views of
// the mapping in their own dtype.  Every count, length and offset is checked against the file
// before it is used, so a hostile file is TL_E_PARSE with the problem named.
#pragma once
#include <vector>

#include "core/context.h"
#include "io/mapped.h"
#include "platform/platform.h"
#include "tensorlife/tl_io.h"

struct tl_gguf_file {
    explicit tl_gguf_file(const tl::Memory &m);
    ~tl_gguf_file();

    struct Key {
        size_t name;          // into names
        uint32_t type;        // TL_GGUF_* value type
        const std::byte *at;  // the value's bytes in the mapping
        uint32_t item_type;   // arrays: their items' type
        uint64_t count;       // arrays: their length
        size_t first_item;    // string arrays: their first item's offset in string_items
    };
    struct Entry {
        size_t name;  // into names
        int ndim;
        int64_t shape[TL_MAX_DIMS];  // row-major (GGUF's dims reversed)
        uint32_t ggml_type;
        uint64_t offset;  // from the data section's start
    };

    tl::Memory memory;
    tl::MappedRegion *region = nullptr;
    uint64_t data_start = 0;
    uint32_t version = 0;
    std::vector<Key, tl::StlAllocator<Key>> keys;
    std::vector<Entry, tl::StlAllocator<Entry>> entries;
    std::vector<uint32_t, tl::StlAllocator<uint32_t>> by_name;       // entries sorted by name
    std::vector<char, tl::StlAllocator<char>> names;                 // NUL-separated copies
    std::vector<uint64_t, tl::StlAllocator<uint64_t>> string_items;  // string arrays' items, from the file's start

    const Key *key(const char *name) const;
    const Entry *find(const char *name) const;
};

namespace tl {

tl_status gguf_open(tl_context &ctx, const char *path, tl_gguf_file **out);
// The same over bytes the caller holds (32-byte aligned), read where they lie.
tl_status gguf_open_memory(tl_context &ctx, const void *data, size_t bytes, tl_gguf_file **out);
void gguf_close(tl_gguf_file *f);
tl_status gguf_get(tl_context &ctx, tl_gguf_file &f, const char *name, tl_tensor *out);

// A value of GGUF type `type` at `at` as a number: as_int for integer and bool types (too_big: a
// uint64 past INT64_MAX), as_double for every number type.
struct GgufNumber {
    bool is_number, is_integer, too_big;
    int64_t as_int;
    double as_double;
};
GgufNumber gguf_number(uint32_t type, const std::byte *at);
// Where item i of a numeric array key lies (its items were bounds checked at open), or null
// when the key is not such an array.
const std::byte *gguf_array_item(const tl_gguf_file::Key &k, uint64_t i);
// The GGUF string at p in the mapping (a u64 length, then its bytes; bounds checked at open).
void gguf_string_at(const std::byte *p, const char **out, uint64_t *length);

}  // namespace tl
