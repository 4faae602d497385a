// The system under the library: files read by offset, read-only mappings, anonymous pages,
// files replaced atomically, random bytes.  One implementation per system (posix.cpp; a Win32
// one beside it for Windows); no other file of the library includes a system header.
// The bottom layer: it knows nothing of the library above it (statuses, contexts, messages).
#pragma once
#include <cstdarg>
#include <cstddef>
#include <cstdint>

namespace tl::platform {

// Why this thread's last failing call below failed, as text naming the path
// ("model.gguf: cannot open: No such file or directory"); kept until its next failure.
const char *failure();

// Formats a message into out[size] without allocating: one longer than size - 1 bytes keeps its
// start and its end (the reason after a long path), "..." between, each cut at a whole UTF-8
// character.  Every failure text of the library is formatted so.
void format_message(char *out, std::size_t size, const char *format, std::va_list args);

// An open file, read at offsets: no shared position and no stdio buffer (no memory but the
// descriptor).
struct File {
    intptr_t handle = -1;
    bool is_open() const { return handle != -1; }
};

// Opens path for reading, refusing (without blocking) anything but a regular file: a folder,
// a FIFO, a device.  *bytes is its size.  false on failure.
bool open_for_reading(const char *path, File *out, uint64_t *bytes);
// Reads exactly n bytes at offset: false on an error or a short file.
bool read_at(const File &file, uint64_t offset, void *dst, size_t n);
void close(File *file);  // a file not open: nothing

// The first `bytes` of file mapped read-only (nullptr for 0 bytes); it outlives the file's
// closing until unmap_file.  false on failure.
bool map_file(const File &file, size_t bytes, const char *path, const std::byte **out);
void unmap_file(const std::byte *data, size_t bytes);

// Page-aligned, zeroed anonymous memory (large blocks go straight to the system, so they are
// given back at their free); nullptr when refused.
void *map_pages(size_t bytes);
void unmap_pages(void *data, size_t bytes);
// The same, starting on a 2 MiB boundary and advised for transparent huge pages where the system
// has them (Linux; elsewhere map_pages): for blocks read as streams over and over, whose reads
// then stop paying a TLB miss every 4 KiB (bench/README.md).  Given back with unmap_pages.
void *map_huge_pages(size_t bytes);

// size bytes aligned to `alignment` (a power of two, at least a pointer's size) from the C heap,
// given back with free_aligned (Windows' aligned blocks cannot go to free); nullptr when refused.
void *allocate_aligned(size_t size, size_t alignment);
void free_aligned(void *data);

// A file written beside its target under a name of its own and renamed over it: readers never
// see half a file, two writers of one path never mix their bytes (the last rename wins, whole),
// and a link planted at any name it might use is never followed.  The new file keeps the
// permission bits of the file it replaces (a first one: 0666 less the umask); data and the
// folder entry are made durable.  Destroyed before commit: the temporary file is removed.
// Each step returns false on failure.
class AtomicWriter {
public:
    AtomicWriter() = default;
    ~AtomicWriter();
    AtomicWriter(const AtomicWriter &) = delete;
    AtomicWriter &operator=(const AtomicWriter &) = delete;

    bool create(const char *target);
    bool write(const void *data, size_t n);  // all of it
    bool commit();

private:
    intptr_t handle_ = -1;
    const char *target_ = nullptr;
    char tmp_[4096] = {};
};

// The bytes of path up to and including its last folder separator ('/', and '\\' too on
// Windows); 0 when it has none.
size_t folder_length(const char *path);

// 64 unpredictable bits from the system's generator; from the clock when it has none.
uint64_t random_bits();

// The name AtomicWriter::create tries for target's temporary file, beside it (target's first
// folder_length bytes are its folder): "<folder>.<file>.tmp-tensorlife-<process>-<serial>-<16 hex
// random digits>", unique in the process and unpredictable across processes, so names planted
// in advance cannot block a save.  false when it does not fit in n bytes.
bool temporary_name(const char *target, size_t folder_length, unsigned long process_id, char *out, size_t n);

}  // namespace tl::platform
