#include "io/gguf.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "core/error.h"
#include "io/system_failure.h"

tl_gguf_file::tl_gguf_file(const tl::Memory &m)
    : memory(m),
      keys(tl::StlAllocator<Key>(&memory)),
      entries(tl::StlAllocator<Entry>(&memory)),
      by_name(tl::StlAllocator<uint32_t>(&memory)),
      names(tl::StlAllocator<char>(&memory)),
      string_items(tl::StlAllocator<uint64_t>(&memory)) {}

tl_gguf_file::~tl_gguf_file() {
    if (region) region->release();  // tensors over it keep it until they die
}

const tl_gguf_file::Key *tl_gguf_file::key(const char *name) const {
    for (const Key &k : keys)
        if (std::strcmp(&names[k.name], name) == 0) return &k;
    return nullptr;
}

const tl_gguf_file::Entry *tl_gguf_file::find(const char *name) const {
    auto it = std::lower_bound(by_name.begin(), by_name.end(), name, [this](uint32_t i, const char *n) {
        return std::strcmp(&names[entries[i].name], n) < 0;
    });
    return it != by_name.end() && std::strcmp(&names[entries[*it].name], name) == 0 ? &entries[*it] : nullptr;
}

namespace tl {
namespace {

constexpr uint32_t kMaxNesting = 4;  // arrays of arrays, at most this deep

// A reader over the mapping that checks every read against the end first.
struct Cursor {
    const std::byte *p, *begin, *end;
    const char *path;

    uint64_t at() const { return uint64_t(p - begin); }
    tl_status need(uint64_t n, const char *what) {
        if (n > uint64_t(end - p))
            return fail(TL_E_PARSE, "%s: %s at byte %llu runs past the end of the file", path, what,
                        (unsigned long long)at());
        return TL_OK;
    }
    template <class T>
    tl_status read(T *out, const char *what) {
        TL_TRY(need(sizeof(T), what));
        std::memcpy(out, p, sizeof(T));
        p += sizeof(T);
        return TL_OK;
    }
    // A GGUF string: u64 length, then its bytes; a NUL inside is refused (names are C strings).
    tl_status string(const std::byte **bytes, uint64_t *len, const char *what) {
        TL_TRY(read(len, what));
        TL_TRY(need(*len, what));
        *bytes = p;
        if (std::memchr(p, 0, size_t(*len)))
            return fail(TL_E_PARSE, "%s: %s at byte %llu holds a NUL byte", path, what, (unsigned long long)at());
        p += *len;
        return TL_OK;
    }
};

// Bytes of one value of a fixed-size type; 0 for strings and arrays; -1 for no type.
int64_t fixed_size(uint32_t type) {
    switch (type) {
        case TL_GGUF_UINT8:
        case TL_GGUF_INT8:
        case TL_GGUF_BOOL:
            return 1;
        case TL_GGUF_UINT16:
        case TL_GGUF_INT16:
            return 2;
        case TL_GGUF_UINT32:
        case TL_GGUF_INT32:
        case TL_GGUF_FLOAT32:
            return 4;
        case TL_GGUF_UINT64:
        case TL_GGUF_INT64:
        case TL_GGUF_FLOAT64:
            return 8;
        case TL_GGUF_STRING:
        case TL_GGUF_ARRAY:
            return 0;
        default:
            return -1;
    }
}

// Steps over one value of `type`; a string array's items are listed (offsets from the file's
// start) when `items` is given.
tl_status skip_value(Cursor &c, uint32_t type, uint32_t depth, const char *key,
                     std::vector<uint64_t, StlAllocator<uint64_t>> *items) {
    const int64_t size = fixed_size(type);
    if (size < 0) return fail(TL_E_PARSE, "%s: key '%s' has value type %u, which GGUF has not", c.path, key, type);
    if (size > 0) {
        TL_TRY(c.need(uint64_t(size), "a value"));
        c.p += size;
        return TL_OK;
    }
    if (type == TL_GGUF_STRING) {
        const std::byte *bytes;
        uint64_t len;
        return c.string(&bytes, &len, "a string value");
    }
    if (depth >= kMaxNesting)
        return fail(TL_E_PARSE, "%s: key '%s' nests arrays past %u deep", c.path, key, kMaxNesting);
    uint32_t item;
    uint64_t count;
    TL_TRY(c.read(&item, "an array's item type"));
    TL_TRY(c.read(&count, "an array's length"));
    const int64_t item_size = fixed_size(item);
    if (item_size < 0)
        return fail(TL_E_PARSE, "%s: key '%s' is an array of type %u, which GGUF has not", c.path, key, item);
    if (item_size > 0) {  // one bounds check for the whole run, no loop over a hostile count
        if (count > uint64_t(c.end - c.p) / uint64_t(item_size))
            return fail(TL_E_PARSE, "%s: key '%s': %llu items run past the end of the file", c.path, key,
                        (unsigned long long)count);
        c.p += count * uint64_t(item_size);
        return TL_OK;
    }
    if (count > uint64_t(c.end - c.p) / 8)  // every string or array item takes at least 8 bytes
        return fail(TL_E_PARSE, "%s: key '%s': %llu items cannot fit the rest of the file", c.path, key,
                    (unsigned long long)count);
    for (uint64_t i = 0; i < count; ++i) {
        if (items && item == TL_GGUF_STRING) items->push_back(c.at());
        TL_TRY(skip_value(c, item, depth + 1, key, nullptr));
    }
    return TL_OK;
}

// Appends name (not NUL-terminated in the file) to f.names; returns its offset there.
size_t keep_name(tl_gguf_file &f, const std::byte *bytes, uint64_t len) {
    const size_t at = f.names.size();
    f.names.insert(f.names.end(), reinterpret_cast<const char *>(bytes), reinterpret_cast<const char *>(bytes) + len);
    f.names.push_back('\0');
    return at;
}

tl_status parse(tl_gguf_file &f, Cursor &c) {
    uint32_t magic;
    TL_TRY(c.read(&magic, "the magic"));
    if (std::memcmp(&magic, "GGUF", 4) != 0) return fail(TL_E_PARSE, "%s: not a GGUF file (no \"GGUF\" magic)", c.path);
    TL_TRY(c.read(&f.version, "the version"));
    if (f.version != 2 && f.version != 3)
        return fail(TL_E_PARSE, "%s: GGUF version %u; versions 2 and 3 are read", c.path, f.version);
    uint64_t tensors, kvs;
    TL_TRY(c.read(&tensors, "the tensor count"));
    TL_TRY(c.read(&kvs, "the key count"));
    // Each key takes at least 12 bytes and each tensor info 24: counts past that are lies.
    if (kvs > uint64_t(c.end - c.p) / 12 || tensors > uint64_t(c.end - c.p) / 24 || tensors > UINT32_MAX)
        return fail(TL_E_PARSE, "%s: %llu keys and %llu tensors cannot fit a %llu-byte file", c.path,
                    (unsigned long long)kvs, (unsigned long long)tensors, (unsigned long long)(c.end - c.begin));
    uint64_t alignment = 32;
    for (uint64_t i = 0; i < kvs; ++i) {
        const std::byte *name;
        uint64_t len;
        TL_TRY(c.string(&name, &len, "a key's name"));
        tl_gguf_file::Key k{};
        k.name = keep_name(f, name, len);
        const char *key = &f.names[k.name];
        TL_TRY(c.read(&k.type, "a key's value type"));
        k.at = c.p;
        if (k.type == TL_GGUF_ARRAY) {
            Cursor peek = c;
            TL_TRY(peek.read(&k.item_type, "an array's item type"));
            TL_TRY(peek.read(&k.count, "an array's length"));
            k.first_item = f.string_items.size();
        }
        TL_TRY(skip_value(c, k.type, 0, key, &f.string_items));
        if (std::strcmp(key, "general.alignment") == 0) {
            uint32_t a;
            if (k.type != TL_GGUF_UINT32) return fail(TL_E_PARSE, "%s: general.alignment is not a uint32", c.path);
            std::memcpy(&a, k.at, 4);
            if (a == 0 || (a & (a - 1)) != 0 || a > 65536)
                return fail(TL_E_PARSE, "%s: general.alignment %u is not a power of two up to 65536", c.path, a);
            alignment = a;
        }
        for (const tl_gguf_file::Key &other : f.keys)
            if (std::strcmp(&f.names[other.name], key) == 0)
                return fail(TL_E_PARSE, "%s: key '%s' is given twice", c.path, key);
        f.keys.push_back(k);
    }
    for (uint64_t i = 0; i < tensors; ++i) {
        const std::byte *name;
        uint64_t len;
        TL_TRY(c.string(&name, &len, "a tensor's name"));
        tl_gguf_file::Entry e{};
        e.name = keep_name(f, name, len);
        const char *tname = &f.names[e.name];
        uint32_t ndim;
        TL_TRY(c.read(&ndim, "a tensor's dim count"));
        if (ndim == 0 || ndim > 4)  // GGUF_MAX_DIMS
            return fail(TL_E_PARSE, "%s: tensor '%s' has %u dims (1 to 4)", c.path, tname, ndim);
        e.ndim = int(ndim);
        for (uint32_t d = 0; d < ndim; ++d) {
            uint64_t n;
            TL_TRY(c.read(&n, "a tensor's dim"));
            if (n > uint64_t(INT64_MAX))
                return fail(TL_E_PARSE, "%s: tensor '%s' dim %u is %llu", c.path, tname, d, (unsigned long long)n);
            e.shape[ndim - 1 - d] = int64_t(n);  // GGUF lists the innermost dim first
        }
        TL_TRY(c.read(&e.ggml_type, "a tensor's type"));
        TL_TRY(c.read(&e.offset, "a tensor's offset"));
        if (e.offset % alignment != 0)
            return fail(TL_E_PARSE, "%s: tensor '%s' at offset %llu is not aligned to %llu", c.path, tname,
                        (unsigned long long)e.offset, (unsigned long long)alignment);
        f.entries.push_back(e);
    }
    f.data_start = (c.at() + alignment - 1) / alignment * alignment;
    if (f.data_start > uint64_t(c.end - c.begin))
        return fail(TL_E_PARSE, "%s: the data section starts past the end of the file", c.path);
    // Names sorted: duplicates are neighbours, and a get is a binary search.
    f.by_name.resize(f.entries.size());
    for (uint32_t i = 0; i < f.entries.size(); ++i) f.by_name[i] = i;
    std::sort(f.by_name.begin(), f.by_name.end(), [&f](uint32_t a, uint32_t b) {
        return std::strcmp(&f.names[f.entries[a].name], &f.names[f.entries[b].name]) < 0;
    });
    for (size_t i = 1; i < f.by_name.size(); ++i)
        if (std::strcmp(&f.names[f.entries[f.by_name[i]].name], &f.names[f.entries[f.by_name[i - 1]].name]) == 0)
            return fail(TL_E_PARSE, "%s: tensor '%s' is given twice", c.path, &f.names[f.entries[f.by_name[i]].name]);
    return TL_OK;
}

}  // namespace

namespace {

// Parses the region f holds (its index into f's memory); f is closed on a refusal.
tl_status parse_region(tl_gguf_file *f, const char *label, tl_gguf_file **out) {
    const std::byte *begin = f->region->data;
    Cursor c{begin, begin, begin + f->region->bytes, label};
    tl_status st;
    try {
        st = parse(*f, c);
    } catch (const std::bad_alloc &) {
        st = allocation_refused("%s: no memory for the file's index", label);
    }
    if (st != TL_OK) {
        gguf_close(f);
        return st;
    }
    *out = f;
    return TL_OK;
}

}  // namespace

tl_status gguf_open(tl_context &ctx, const char *path, tl_gguf_file **out) {
    platform::File file;
    uint64_t bytes = 0;
    if (!platform::open_for_reading(path, &file, &bytes)) return system_failure();
    void *p = ctx.memory.allocate(sizeof(tl_gguf_file), alignof(tl_gguf_file));
    if (!p) {
        platform::close(&file);
        return allocation_refused("%s: no memory for the file's index", path);
    }
    tl_gguf_file *f = new (p) tl_gguf_file(ctx.memory);
    tl_status st = bytes > SIZE_MAX ? fail(TL_E_IO, "%s: too large to map", path)
                                    : MappedRegion::map(f->memory, file, size_t(bytes), path, &f->region);
    platform::close(&file);  // the mapping outlives the descriptor
    if (st != TL_OK) {
        gguf_close(f);
        return st;
    }
    return parse_region(f, path, out);
}

tl_status gguf_open_memory(tl_context &ctx, const void *data, size_t bytes, tl_gguf_file **out) {
    if (reinterpret_cast<uintptr_t>(data) % 32 != 0)
        return fail(TL_E_INVALID_ARGUMENT, "gguf: memory at %p is not aligned to 32 bytes (GGUF's alignment)", data);
    void *p = ctx.memory.allocate(sizeof(tl_gguf_file), alignof(tl_gguf_file));
    if (!p) return allocation_refused("gguf in memory: no memory for the file's index");
    tl_gguf_file *f = new (p) tl_gguf_file(ctx.memory);
    const tl_status st = MappedRegion::borrow(f->memory, static_cast<const std::byte *>(data), bytes, &f->region);
    if (st != TL_OK) {
        gguf_close(f);
        return st;
    }
    return parse_region(f, "gguf in memory", out);
}

void gguf_close(tl_gguf_file *f) {
    Memory memory = f->memory;
    f->~tl_gguf_file();
    memory.release(f, sizeof(tl_gguf_file));
}

namespace {

template <class T>
T load(const std::byte *p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

}  // namespace

GgufNumber gguf_number(uint32_t type, const std::byte *at) {
    GgufNumber n{true, true, false, 0, 0};
    switch (type) {
        case TL_GGUF_UINT8:
            n.as_int = load<uint8_t>(at);
            break;
        case TL_GGUF_INT8:
            n.as_int = load<int8_t>(at);
            break;
        case TL_GGUF_BOOL:
            n.as_int = load<uint8_t>(at) != 0;
            break;
        case TL_GGUF_UINT16:
            n.as_int = load<uint16_t>(at);
            break;
        case TL_GGUF_INT16:
            n.as_int = load<int16_t>(at);
            break;
        case TL_GGUF_UINT32:
            n.as_int = load<uint32_t>(at);
            break;
        case TL_GGUF_INT32:
            n.as_int = load<int32_t>(at);
            break;
        case TL_GGUF_INT64:
            n.as_int = load<int64_t>(at);
            break;
        case TL_GGUF_UINT64: {
            const uint64_t u = load<uint64_t>(at);
            n.too_big = u > uint64_t(INT64_MAX);
            n.as_int = int64_t(u & uint64_t(INT64_MAX));
            n.as_double = double(u);
            return n;
        }
        case TL_GGUF_FLOAT32:
            n.is_integer = false, n.as_double = load<float>(at);
            return n;
        case TL_GGUF_FLOAT64:
            n.is_integer = false, n.as_double = load<double>(at);
            return n;
        default:
            n.is_number = n.is_integer = false;
            return n;
    }
    n.as_double = double(n.as_int);
    return n;
}

const std::byte *gguf_array_item(const tl_gguf_file::Key &k, uint64_t i) {
    static const uint8_t sizes[13] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};  // by GGUF type; 0: not a number
    if (k.type != TL_GGUF_ARRAY || k.item_type > 12 || sizes[k.item_type] == 0 || i >= k.count) return nullptr;
    return k.at + 4 + 8 + i * sizes[k.item_type];  // past the item type and the length
}

void gguf_string_at(const std::byte *p, const char **out, uint64_t *length) {
    *length = load<uint64_t>(p);
    *out = reinterpret_cast<const char *>(p + 8);
}

namespace {

// ggml's names of its types, by number (ggml.h's enum ggml_type), for the refusals.
const char *ggml_type_name(uint32_t type) {
    static const char *const names[] = {"f32",     "f16",     "q4_0",    "q4_1",  "q4_2",   "q4_3",   "q5_0",
                                        "q5_1",    "q8_0",    "q8_1",    "q2_K",  "q3_K",   "q4_K",   "q5_K",
                                        "q6_K",    "q8_K",    "iq2_xxs", "iq2_xs", "iq3_xxs", "iq1_s", "iq4_nl",
                                        "iq3_s",   "iq2_s",   "iq4_xs",  "i8",    "i16",    "i32",    "i64",
                                        "f64",     "iq1_m",   "bf16",    "q4_0_4_4", "q4_0_4_8", "q4_0_8_8",
                                        "tq1_0",   "tq2_0",   "iq4_nl_4_4", "iq4_nl_4_8", "iq4_nl_8_8", "mxfp4"};
    return type < sizeof names / sizeof names[0] ? names[type] : "unknown";
}

// A tensor of a type tensorlife does not hold: the type by its ggml name, and every tensor of the
// file of that type (a user converting a file learns all that would need another type at once).
// Names cut at 64 bytes and the list at 256, so the whole message, its ", ..." included, fits
// the last error's 512.
tl_status refuse_ggml_type(const tl_gguf_file &f, const tl_gguf_file::Entry &e) {
    char list[256];
    size_t used = 0, count = 0;
    list[0] = 0;
    for (const tl_gguf_file::Entry &other : f.entries) {
        if (other.ggml_type != e.ggml_type) continue;
        ++count;
        if (used < sizeof list - 64) {
            const int n = std::snprintf(list + used, sizeof list - used, "%s'%.64s'", used ? ", " : "", &f.names[other.name]);
            used += n > 0 ? size_t(n) : 0;
            if (used >= sizeof list) used = sizeof list - 1;
        }
    }
    return fail(TL_E_DTYPE,
                "gguf: tensor '%.64s' is %s (ggml type %u), which tensorlife does not hold; %zu tensor%s of the file %s it: %s%s",
                &f.names[e.name], ggml_type_name(e.ggml_type), e.ggml_type, count, count == 1 ? "" : "s",
                count == 1 ? "is" : "are", list, used >= sizeof list - 64 ? ", ..." : "");
}

}  // namespace

tl_status gguf_get(tl_context &ctx, tl_gguf_file &f, const char *name, tl_tensor *out) {
    const tl_gguf_file::Entry *e = f.find(name);
    if (!e) return fail(TL_E_NOT_FOUND, "gguf: no tensor named '%s'", name);
    tl_dtype dt;
    if (!dtype_from_gguf(e->ggml_type, &dt)) return refuse_ggml_type(f, *e);
    int64_t numel;
    size_t bytes;
    TL_TRY(check_shape(e->ndim, e->shape, dt, &numel, &bytes));  // a block type's rows: whole blocks
    const uint64_t file_bytes = f.region->bytes;
    if (e->offset > file_bytes - f.data_start || bytes > file_bytes - f.data_start - e->offset)
        return fail(TL_E_PARSE, "gguf: tensor '%s' (%zu bytes at offset %llu) runs past the end of the file", name,
                    bytes, (unsigned long long)e->offset);
    View v{};
    v.dtype = dt;
    v.ndim = e->ndim;
    for (int d = 0; d < e->ndim; ++d) v.shape[d] = e->shape[d];
    set_contiguous_strides(v.ndim, v.shape, v.strides);
    v.data = const_cast<std::byte *>(f.region->data + f.data_start + e->offset);  // read-only
    return ctx.map_tensor(v, f.region, out);
}

}  // namespace tl
