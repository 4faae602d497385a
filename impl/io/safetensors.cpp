#include "io/safetensors.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "io/system_failure.h"
#include "kernels/kernels.h"
#include "io/cjson_util.h"
#include "platform/platform.h"

tl_safetensors_file::tl_safetensors_file(const tl::Memory &m)
    : memory(m),
      entries(tl::StlAllocator<Entry>(&memory)),
      names(tl::StlAllocator<char>(&memory)),
      by_name(tl::StlAllocator<uint32_t>(&memory)) {}

tl_safetensors_file::~tl_safetensors_file() {
    tl::platform::close(&file);
    if (region) region->release();  // tensors over it keep it until they die
}

const tl_safetensors_file::Entry *tl_safetensors_file::find(const char *name) const {
    auto it = std::lower_bound(by_name.begin(), by_name.end(), name,
                               [this](uint32_t i, const char *n) { return std::strcmp(name_of(entries[i]), n) < 0; });
    return it != by_name.end() && std::strcmp(name_of(entries[*it]), name) == 0 ? &entries[*it] : nullptr;
}

namespace tl {
namespace {

static_assert(sizeof(float) == 4 && sizeof(double) == 8, "IEEE float sizes assumed");

bool host_is_little_endian() {
    const uint16_t probe = 1;
    unsigned char first;
    std::memcpy(&first, &probe, 1);
    return first == 1;
}

// A file open for reading, closed on every path unless released.
struct OpenFile {
    platform::File file;
    ~OpenFile() { platform::close(&file); }
    platform::File release() {
        platform::File f = file;
        file = platform::File{};
        return f;
    }
};

// Transient bytes from the context's allocator, released on every path.
struct Buffer {
    Memory &memory;
    std::byte *data = nullptr;
    size_t size = 0;
    Buffer(Memory &m, size_t n) : memory(m), data(static_cast<std::byte *>(m.allocate(n))), size(n) {}
    ~Buffer() { memory.release(data, size); }
};

using platform::read_at;

// Checks one header entry and appends it; the message names the tensor and the problem.
tl_status parse_entry(tl_safetensors_file &f, const cJSON *item, uint64_t data_bytes, const char *path) {
    const char *name = item->string;
    if (!cJSON_IsObject(item)) return fail(TL_E_PARSE, "%s: entry '%s' is not an object", path, name);
    const cJSON *dtype = cJSON_GetObjectItemCaseSensitive(item, "dtype");
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(item, "shape");
    const cJSON *offsets = cJSON_GetObjectItemCaseSensitive(item, "data_offsets");
    tl_safetensors_file::Entry e{};
    if (!cJSON_IsString(dtype)) return fail(TL_E_PARSE, "%s: tensor '%s' has no dtype string", path, name);
    if (!dtype_from_safetensors(dtype->valuestring, &e.dtype))
        return fail(TL_E_PARSE, "%s: tensor '%s' has dtype '%s'; F32, F64, I32, F16 and BF16 load", path, name,
                    dtype->valuestring);
    if (!cJSON_IsArray(shape)) return fail(TL_E_PARSE, "%s: tensor '%s' has no shape array", path, name);
    const int ndim = cJSON_GetArraySize(shape);
    if (ndim > TL_MAX_DIMS)
        return fail(TL_E_PARSE, "%s: tensor '%s' has %d dims (at most %d)", path, name, ndim, TL_MAX_DIMS);
    e.ndim = ndim;
    for (int d = 0; d < ndim; ++d) {
        uint64_t dim;  // at most 2^53: fits int64
        if (!json_uint(cJSON_GetArrayItem(shape, d), &dim))
            return fail(TL_E_PARSE, "%s: tensor '%s' dim %d is not a non-negative integer", path, name, d);
        e.shape[d] = int64_t(dim);
    }
    if (!cJSON_IsArray(offsets) || cJSON_GetArraySize(offsets) != 2 ||
        !json_uint(cJSON_GetArrayItem(offsets, 0), &e.begin) || !json_uint(cJSON_GetArrayItem(offsets, 1), &e.end))
        return fail(TL_E_PARSE, "%s: tensor '%s' needs data_offsets [begin, end] of integers", path, name);
    if (e.begin > e.end || e.end > data_bytes)
        return fail(TL_E_PARSE, "%s: tensor '%s' data_offsets [%llu, %llu] fall outside the %llu data bytes", path,
                    name, (unsigned long long)e.begin, (unsigned long long)e.end, (unsigned long long)data_bytes);
    int64_t bytes;
    if (!count_of(ndim, e.shape, int64_t(dtype_size(e.dtype)), &bytes) || uint64_t(bytes) != e.end - e.begin)
        return fail(TL_E_PARSE, "%s: tensor '%s' shape and dtype do not match its %llu data bytes", path, name,
                    (unsigned long long)(e.end - e.begin));
    e.name_offset = f.names.size();
    f.names.insert(f.names.end(), name, name + std::strlen(name) + 1);
    f.entries.push_back(e);
    return TL_OK;
}

// The name index; two tensors of one name are neighbours in it.
tl_status index_names(tl_safetensors_file &f, const char *path) {
    if (f.entries.size() > UINT32_MAX) return fail(TL_E_PARSE, "%s: too many tensors", path);
    f.by_name.resize(f.entries.size());
    for (uint32_t i = 0; i < f.by_name.size(); ++i) f.by_name[i] = i;
    std::sort(f.by_name.begin(), f.by_name.end(), [&f](uint32_t a, uint32_t b) {
        return std::strcmp(f.name_of(f.entries[a]), f.name_of(f.entries[b])) < 0;
    });
    for (size_t i = 1; i < f.by_name.size(); ++i)
        if (std::strcmp(f.name_of(f.entries[f.by_name[i - 1]]), f.name_of(f.entries[f.by_name[i]])) == 0)
            return fail(TL_E_PARSE, "%s: tensor name '%s' appears twice", path, f.name_of(f.entries[f.by_name[i]]));
    return TL_OK;
}

// No two tensors may share a byte.
tl_status check_no_overlap(tl_safetensors_file &f, const char *path) {
    std::vector<const tl_safetensors_file::Entry *, StlAllocator<const tl_safetensors_file::Entry *>> order(
        StlAllocator<const tl_safetensors_file::Entry *>(&f.memory));
    for (const auto &e : f.entries)
        if (e.end > e.begin) order.push_back(&e);
    std::sort(order.begin(), order.end(), [](auto *a, auto *b) { return a->begin < b->begin; });
    for (size_t i = 1; i < order.size(); ++i)
        if (order[i]->begin < order[i - 1]->end)
            return fail(TL_E_PARSE, "%s: tensors '%s' and '%s' overlap in the data section", path,
                        &f.names[order[i - 1]->name_offset], &f.names[order[i]->name_offset]);
    return TL_OK;
}

}  // namespace

}  // namespace tl

bool tl_safetensors_file::maps(const Entry &e) const {
    if (!region || e.end == e.begin) return false;
    return (data_start + e.begin) % tl::dtype_size(e.dtype) == 0;  // a misaligned tensor is copied
}

namespace tl {

tl_status safetensors_open(tl_context &ctx, const char *path, tl_safetensors_file **out) {
    if (!host_is_little_endian()) return fail(TL_E_IO, "safetensors needs a little-endian host");
    OpenFile file;
    uint64_t file_bytes = 0;
    if (!platform::open_for_reading(path, &file.file, &file_bytes)) return system_failure();
    unsigned char len_bytes[8];
    if (file_bytes < 8 || !read_at(file.file, 0, len_bytes, 8))
        return fail(TL_E_PARSE, "%s: truncated: %llu bytes, no 8-byte header length", path,
                    (unsigned long long)file_bytes);
    uint64_t header_bytes = 0;
    for (int i = 7; i >= 0; --i) header_bytes = header_bytes << 8 | len_bytes[i];
    if (header_bytes > TL_SAFETENSORS_MAX_HEADER_BYTES)
        return fail(TL_E_PARSE, "%s: header length %llu is past the %u-byte limit", path,
                    (unsigned long long)header_bytes, TL_SAFETENSORS_MAX_HEADER_BYTES);
    if (header_bytes > file_bytes - 8)
        return fail(TL_E_PARSE, "%s: header length %llu runs past the end of the %llu-byte file", path,
                    (unsigned long long)header_bytes, (unsigned long long)file_bytes);
    if (header_bytes < 2)
        return fail(TL_E_PARSE, "%s: header of %llu bytes is no JSON object", path, (unsigned long long)header_bytes);
    Buffer text(ctx.memory, size_t(header_bytes));
    if (!text.data)
        return fail(TL_E_OUT_OF_MEMORY, "%s: no memory for its %llu-byte header", path,
                    (unsigned long long)header_bytes);
    if (!read_at(file.file, 8, text.data, size_t(header_bytes)))
        return fail(TL_E_IO, "%s: cannot read its header", path);
    JsonPtr header;
    size_t at = 0;  // after the object only padding: safetensors writers pad with spaces
    switch (parse_exactly(reinterpret_cast<const char *>(text.data), size_t(header_bytes), &header, &at)) {
        case JsonProblem::nul:
            return fail(TL_E_PARSE, "%s: header holds a NUL character (a raw 0 byte or \\u0000)", path);
        case JsonProblem::invalid:
            return fail(TL_E_PARSE, "%s: header is not valid JSON", path);
        case JsonProblem::trailing:
            return fail(TL_E_PARSE, "%s: bytes after the header's JSON object (at %zu)", path, at);
        case JsonProblem::none:
            break;
    }
    if (!cJSON_IsObject(header.get())) return fail(TL_E_PARSE, "%s: header is not a JSON object", path);

    void *p = ctx.memory.allocate(sizeof(tl_safetensors_file), alignof(tl_safetensors_file));
    if (!p) return allocation_refused("%s: no memory for the file's index", path);
    tl_safetensors_file *f = new (p) tl_safetensors_file(ctx.memory);
    f->data_start = 8 + header_bytes;
    f->file_bytes = file_bytes;
    const uint64_t data_bytes = file_bytes - f->data_start;
    tl_status st = TL_OK;
    try {
        for (const cJSON *item = header->child; item && st == TL_OK; item = item->next) {
            if (std::strcmp(item->string, "__metadata__") == 0) continue;
            st = parse_entry(*f, item, data_bytes, path);
        }
        if (st == TL_OK) st = index_names(*f, path);
        if (st == TL_OK) st = check_no_overlap(*f, path);
    } catch (const std::bad_alloc &) {
        st = allocation_refused("%s: no memory for the file's index", path);
    }
    if (st != TL_OK) {
        safetensors_close(f);
        return st;
    }
    f->file = file.release();
    *out = f;
    return TL_OK;
}

tl_status safetensors_map(tl_context &ctx, const char *path, tl_safetensors_file **out) {
    tl_safetensors_file *f = nullptr;
    TL_TRY(safetensors_open(ctx, path, &f));
    if (f->file_bytes > SIZE_MAX) {
        safetensors_close(f);
        return fail(TL_E_IO, "%s: too large to map", path);
    }
    const tl_status st = MappedRegion::map(f->memory, f->file, size_t(f->file_bytes), path, &f->region);
    if (st != TL_OK) {
        safetensors_close(f);
        return st;
    }
    *out = f;
    return TL_OK;
}

void safetensors_close(tl_safetensors_file *f) {
    Memory memory = f->memory;  // the file's own copy frees the file itself last
    f->~tl_safetensors_file();
    memory.release(f, sizeof(tl_safetensors_file));
}

tl_status safetensors_get(tl_context &ctx, tl_safetensors_file &f, const char *name, tl_tensor *out) {
    const tl_safetensors_file::Entry *e = f.find(name);
    if (!e) return fail(TL_E_NOT_FOUND, "safetensors: no tensor named '%s'", name);
    if (f.maps(*e)) {  // a read-only tensor over the mapping: no copy
        View v{};
        v.dtype = e->dtype;
        v.ndim = e->ndim;
        for (int d = 0; d < e->ndim; ++d) v.shape[d] = e->shape[d];
        set_contiguous_strides(v.ndim, v.shape, v.strides);
        v.data = const_cast<std::byte *>(f.region->data + f.data_start + e->begin);  // never written: read_only
        return ctx.map_tensor(v, f.region, out);
    }
    // Read into scratch first: a failed read leaves no tensor behind and no slab bytes used.
    const size_t bytes = size_t(e->end - e->begin);
    std::byte *staging = nullptr;
    if (bytes) TL_TRY(ctx.scratch(bytes, &staging));
    if (!read_at(f.file, f.data_start + e->begin, staging, bytes))
        return fail(TL_E_IO, "safetensors: cannot read the %zu bytes of '%s'", bytes, name);
    NewTensor made;
    TL_TRY(ctx.make_tensor(e->dtype, e->ndim, e->shape, &made));
    if (bytes) std::memcpy(made.view.data, staging, bytes);  // every dtype loads as itself
    *out = made.handle;
    return TL_OK;
}

namespace {

// The JSON header of a save: each tensor's dtype, shape and data offsets, in order.
tl_status save_header(int n, const char *const *names, const View *views, JsonPtr *out) {
    JsonPtr header(cJSON_CreateObject());
    if (!header) return fail(TL_E_OUT_OF_MEMORY, "safetensors_save: no memory for the header");
    uint64_t offset = 0;
    for (int i = 0; i < n; ++i) {
        const View &v = views[i];
        // A dim JSON readers cannot hold exactly (past 2^53, as doubles) would make a file that
        // does not read back (an empty tensor can have such dims): refused, not written.
        for (int d = 0; d < v.ndim; ++d)
            if (uint64_t(v.shape[d]) > (uint64_t(1) << 53))
                return fail(TL_E_INVALID_ARGUMENT,
                            "safetensors_save: tensor '%s' dim %d (%lld) is past 2^53, not exact in JSON", names[i], d,
                            (long long)v.shape[d]);
        cJSON *entry = cJSON_AddObjectToObject(header.get(), names[i]);
        cJSON *shape = entry ? cJSON_AddArrayToObject(entry, "shape") : nullptr;
        cJSON *offsets = entry ? cJSON_AddArrayToObject(entry, "data_offsets") : nullptr;
        if (!offsets || !cJSON_AddStringToObject(entry, "dtype", dtype_info(v.dtype).safetensors))
            return fail(TL_E_OUT_OF_MEMORY, "safetensors_save: no memory for the header");
        // Raw integer tokens: cJSON would print numbers past INT_MAX in exponent form.
        char num[24];
        for (int d = 0; d < v.ndim; ++d) {
            std::snprintf(num, sizeof num, "%lld", (long long)v.shape[d]);
            cJSON_AddItemToArray(shape, cJSON_CreateRaw(num));
        }
        std::snprintf(num, sizeof num, "%llu", (unsigned long long)offset);
        cJSON_AddItemToArray(offsets, cJSON_CreateRaw(num));
        offset += uint64_t(v.numel()) * dtype_size(v.dtype);
        std::snprintf(num, sizeof num, "%llu", (unsigned long long)offset);
        cJSON_AddItemToArray(offsets, cJSON_CreateRaw(num));
    }
    *out = std::move(header);
    return TL_OK;
}

// The file, whole or not at all: length, header padded to 8 bytes, then each tensor's
// elements (a non-contiguous one through staging, which holds the largest).
tl_status write_atomically(const char *path, const char *text, int n, const View *views, std::byte *staging) {
    const size_t text_len = std::strlen(text);
    const size_t padded = (text_len + 7) & ~size_t(7);  // data starts 8-byte aligned; spaces pad
    platform::AtomicWriter out;
    if (!out.create(path)) return system_failure();
    unsigned char len_bytes[8];
    for (int i = 0; i < 8; ++i) len_bytes[i] = (unsigned char)(uint64_t(padded) >> (8 * i));
    static const char spaces[8] = {' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '};
    bool ok = out.write(len_bytes, 8) && out.write(text, text_len) && out.write(spaces, padded - text_len);
    for (int i = 0; ok && i < n; ++i) {
        const View &v = views[i];
        const size_t bytes = size_t(v.numel()) * dtype_size(v.dtype);
        const std::byte *src = v.data;
        if (!v.is_contiguous()) {
            copy_kernel(v, contiguous_over(v, staging));
            src = staging;
        }
        ok = out.write(src, bytes);
    }
    return ok && out.commit() ? TL_OK : system_failure();
}

}  // namespace

tl_status safetensors_save(tl_context &ctx, const char *path, int n, const char *const *names,
                           const tl_tensor *tensors) {
    if (n < 0) return fail(TL_E_INVALID_ARGUMENT, "safetensors_save: n is %d", n);
    if (n > 0 && (!names || !tensors)) return fail(TL_E_INVALID_ARGUMENT, "safetensors_save: names or tensors is NULL");
    if (!host_is_little_endian()) return fail(TL_E_IO, "safetensors needs a little-endian host");
    // Each tensor resolved once: its View is what the header describes and what is written.
    std::vector<View, StlAllocator<View>> views{StlAllocator<View>(&ctx.memory)};
    views.reserve(size_t(n));  // bad_alloc: TL_E_OUT_OF_MEMORY at the boundary, nothing written
    size_t largest = 0;
    for (int i = 0; i < n; ++i) {
        if (!names[i] || !names[i][0] || std::strcmp(names[i], "__metadata__") == 0)
            return fail(TL_E_INVALID_ARGUMENT, "safetensors_save: name %d is empty, NULL or reserved", i);
        for (int j = 0; j < i; ++j)
            if (std::strcmp(names[i], names[j]) == 0)
                return fail(TL_E_INVALID_ARGUMENT, "safetensors_save: name '%s' is given twice", names[i]);
        Resolved r;
        TL_TRY(ctx.resolve(tensors[i], &r));
        if (!dtype_info(r.view.dtype).safetensors)
            return fail(TL_E_DTYPE, "safetensors_save: tensor '%s' is %s, which safetensors has no dtype for (GGUF has)",
                        names[i], dtype_name(r.view.dtype));
        views.push_back(r.view);
        largest = std::max(largest, size_t(r.view.numel()) * dtype_size(r.view.dtype));
    }
    JsonPtr header;
    TL_TRY(save_header(n, names, views.data(), &header));
    JsonText text(cJSON_PrintUnformatted(header.get()));
    if (!text) return fail(TL_E_OUT_OF_MEMORY, "safetensors_save: no memory to print the header");
    std::byte *staging = nullptr;
    if (largest) TL_TRY(ctx.scratch(largest, &staging));
    return write_atomically(path, text.get(), n, views.data(), staging);
}

}  // namespace tl
