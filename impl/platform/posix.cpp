// platform.h on POSIX systems (Linux and the BSDs).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__linux__)
#  include <sys/random.h>
#endif

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "platform/failure.h"
#include "platform/platform.h"

namespace tl::platform {
namespace {

int fd_of(intptr_t handle) { return int(handle); }

}  // namespace

bool open_for_reading(const char *path, File *out, uint64_t *bytes) {
    // O_NONBLOCK so that a FIFO with no writer cannot hang the open.
    const int fd = ::open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return failed("%s: cannot open: %s", path, std::strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        return failed("%s: not a regular file", path);
    }
    const int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
        const int err = errno;
        ::close(fd);
        return failed("%s: cannot open: %s", path, std::strerror(err));
    }
    out->handle = fd;
    *bytes = uint64_t(st.st_size);
    return true;
}

bool read_at(const File &file, uint64_t offset, void *dst, size_t n) {
    auto *to = static_cast<char *>(dst);
    while (n > 0) {
        if (offset > uint64_t(INT64_MAX)) return false;
        const ssize_t got = ::pread(fd_of(file.handle), to, n, off_t(offset));
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return false;  // an error, or the file ends first
        to += got, offset += uint64_t(got), n -= size_t(got);
    }
    return true;
}

void close(File *file) {
    if (file->is_open()) ::close(fd_of(file->handle));
    file->handle = -1;
}

bool map_file(const File &file, size_t bytes, const char *path, const std::byte **out) {
    if (bytes == 0) return *out = nullptr, true;
    void *data = mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE, fd_of(file.handle), 0);
    if (data == MAP_FAILED) return failed("%s: cannot map: %s", path, std::strerror(errno));
    *out = static_cast<const std::byte *>(data);
    return true;
}

void unmap_file(const std::byte *data, size_t bytes) {
    if (data && bytes) munmap(const_cast<std::byte *>(data), bytes);
}

void *map_pages(size_t bytes) {
    void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? nullptr : p;
}

void unmap_pages(void *data, size_t bytes) { munmap(data, bytes); }

void *map_huge_pages(size_t bytes) {
#ifdef MADV_HUGEPAGE
    constexpr size_t kHuge = size_t(2) << 20;
    if (bytes > size_t(-1) - kHuge) return nullptr;
    void *p = mmap(nullptr, bytes + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    // Keep [start, start + bytes) of the larger mapping: the slack before and after goes back.
    const uintptr_t first = reinterpret_cast<uintptr_t>(p), start = (first + kHuge - 1) & ~uintptr_t(kHuge - 1);
    const size_t page = size_t(sysconf(_SC_PAGESIZE)), kept = (bytes + page - 1) & ~(page - 1);
    if (start > first) munmap(p, start - first);
    if (first + bytes + kHuge > start + kept) munmap(reinterpret_cast<void *>(start + kept), first + bytes + kHuge - start - kept);
    madvise(reinterpret_cast<void *>(start), kept, MADV_HUGEPAGE);  // advice: refused, the pages stay small
    return reinterpret_cast<void *>(start);
#else
    return map_pages(bytes);
#endif
}

void *allocate_aligned(size_t size, size_t alignment) {
    void *p = nullptr;
    return posix_memalign(&p, alignment, size) == 0 ? p : nullptr;
}

void free_aligned(void *data) { std::free(data); }

uint64_t random_bits() {
    uint64_t bits = 0;
#if defined(__linux__)
    if (getrandom(&bits, sizeof bits, GRND_NONBLOCK) == ssize_t(sizeof bits)) return bits;
#else
    arc4random_buf(&bits, sizeof bits);
    return bits;
#endif
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_nsec) * 0x9e3779b97f4a7c15u ^ uint64_t(ts.tv_sec);
}

AtomicWriter::~AtomicWriter() {
    if (handle_ == -1) return;
    ::close(fd_of(handle_));
    ::unlink(tmp_);
}

size_t folder_length(const char *path) {
    const char *slash = std::strrchr(path, '/');
    return slash ? size_t(slash - path + 1) : 0;
}

bool AtomicWriter::create(const char *target) {
    target_ = target;
    const size_t dir_len = folder_length(target);
    if (!target[dir_len]) return failed("%s: names a folder, not a file", target);
    for (int attempt = 0; attempt < 100; ++attempt) {
        if (!temporary_name(target, dir_len, (unsigned long)getpid(), tmp_, sizeof tmp_))
            return failed("path too long (%zu bytes) for a temporary file beside it: %.200s...", std::strlen(target), target);
        const int fd = ::open(tmp_, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd < 0 && errno == EEXIST) continue;
        if (fd < 0) return failed("%s: cannot create: %s", tmp_, std::strerror(errno));
        struct stat st;
        if (::stat(target, &st) == 0 && S_ISREG(st.st_mode)) fchmod(fd, st.st_mode & 07777);
        handle_ = fd;
        return true;
    }
    return failed("%s: no unused temporary name beside it", target);
}

bool AtomicWriter::write(const void *data, size_t n) {
    auto *from = static_cast<const char *>(data);
    while (n > 0) {
        const ssize_t put = ::write(fd_of(handle_), from, n);
        if (put < 0 && errno == EINTR) continue;
        if (put <= 0) {
            return failed("%s: cannot write: %s", target_, put < 0 ? std::strerror(errno) : "nothing written");
        }
        from += put, n -= size_t(put);
    }
    return true;
}

bool AtomicWriter::commit() {
    const int fd = fd_of(handle_);
    handle_ = -1;
    const bool synced = fsync(fd) == 0;
    int err = errno;
    const bool closed = ::close(fd) == 0;
    if (synced && closed && std::rename(tmp_, target_) == 0) {
        char dir[4096];
        const char *slash = std::strrchr(target_, '/');
        std::snprintf(dir, sizeof dir, "%.*s", slash ? (slash == target_ ? 1 : int(slash - target_)) : 1,
                      slash ? target_ : ".");
        const int dfd = ::open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0) {
            fsync(dfd);  // the rename durable too; failing here still leaves a complete file
            ::close(dfd);
        }
        return true;
    }
    if (synced && closed) err = errno;
    ::unlink(tmp_);
    return failed("%s: cannot write: %s", target_, std::strerror(err));
}

}  // namespace tl::platform
