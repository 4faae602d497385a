// platform.h on Windows (Win32; built with mingw-w64 or MSVC).  Paths are UTF-8, as everywhere
// in the API, and reach the system as UTF-16 (the W calls), so every file name Windows allows
// opens; both '/' and '\' separate folders.
#ifndef WIN32_LEAN_AND_MEAN
#  define WIN32_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#  define NOMINMAX
#endif
#include <windows.h>
#include <bcrypt.h>

#include <malloc.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "platform/failure.h"
#include "platform/platform.h"

namespace tl::platform {
namespace {

HANDLE handle_of(intptr_t handle) { return reinterpret_cast<HANDLE>(handle); }

// The system's text for the calling thread's last error, in a thread-local buffer.
const char *last_error_text() {
    static thread_local char text[256];
    const DWORD code = GetLastError();
    DWORD len = FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, nullptr, code, 0, text,
                               sizeof text, nullptr);
    while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\r' || text[len - 1] == '.')) text[--len] = 0;
    if (len == 0) std::snprintf(text, sizeof text, "error %lu", (unsigned long)code);
    return text;
}

// UTF-8 to UTF-16; false for text that is not UTF-8.
bool widen(const char *path, std::vector<wchar_t> *out) {
    const int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, nullptr, 0);
    if (n <= 0) return false;
    out->assign(size_t(n), L'\0');
    return MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, out->data(), n) == n;
}

}  // namespace

size_t folder_length(const char *path) {
    size_t end = 0;
    for (size_t i = 0; path[i]; ++i)
        if (path[i] == '/' || path[i] == '\\') end = i + 1;
    return end;
}

bool open_for_reading(const char *path, File *out, uint64_t *bytes) {
    std::vector<wchar_t> wide;
    if (!widen(path, &wide)) return failed("%s: cannot open: the path is not UTF-8", path);
    // Others may read, rename or delete it while it is open (the POSIX behaviour); a folder
    // does not open without FILE_FLAG_BACKUP_SEMANTICS, and a pipe or device is refused below.
    HANDLE h = CreateFileW(wide.data(), GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                           nullptr, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, nullptr);
    if (h == INVALID_HANDLE_VALUE) {
        const char *why = last_error_text();
        const DWORD attributes = GetFileAttributesW(wide.data());
        if (attributes != INVALID_FILE_ATTRIBUTES && (attributes & FILE_ATTRIBUTE_DIRECTORY))
            return failed("%s: not a regular file", path);
        return failed("%s: cannot open: %s", path, why);
    }
    LARGE_INTEGER size;
    if (GetFileType(h) != FILE_TYPE_DISK || !GetFileSizeEx(h, &size)) {
        CloseHandle(h);
        return failed("%s: not a regular file", path);
    }
    out->handle = reinterpret_cast<intptr_t>(h);
    *bytes = uint64_t(size.QuadPart);
    return true;
}

bool read_at(const File &file, uint64_t offset, void *dst, size_t n) {
    auto *to = static_cast<char *>(dst);
    while (n > 0) {
        OVERLAPPED at = {};
        at.Offset = DWORD(offset & 0xFFFFFFFFu);
        at.OffsetHigh = DWORD(offset >> 32);
        const DWORD want = n > 0x40000000u ? 0x40000000u : DWORD(n);
        DWORD got = 0;
        if (!ReadFile(handle_of(file.handle), to, want, &got, &at) || got == 0) return false;
        to += got, offset += got, n -= got;
    }
    return true;
}

void close(File *file) {
    if (file->is_open()) CloseHandle(handle_of(file->handle));
    file->handle = -1;
}

bool map_file(const File &file, size_t bytes, const char *path, const std::byte **out) {
    if (bytes == 0) return *out = nullptr, true;
    const uint64_t size = bytes;
    HANDLE mapping = CreateFileMappingW(handle_of(file.handle), nullptr, PAGE_READONLY, DWORD(size >> 32),
                                        DWORD(size & 0xFFFFFFFFu), nullptr);
    if (!mapping) return failed("%s: cannot map: %s", path, last_error_text());
    void *data = MapViewOfFile(mapping, FILE_MAP_READ, 0, 0, bytes);
    const char *why = data ? "" : last_error_text();
    CloseHandle(mapping);  // the view keeps the mapping alive
    if (!data) return failed("%s: cannot map: %s", path, why);
    *out = static_cast<const std::byte *>(data);
    return true;
}

void unmap_file(const std::byte *data, size_t bytes) {
    if (data && bytes) UnmapViewOfFile(data);
}

void *map_pages(size_t bytes) { return VirtualAlloc(nullptr, bytes, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE); }

void unmap_pages(void *data, size_t) {
    if (data) VirtualFree(data, 0, MEM_RELEASE);
}

// Large pages on Windows need the lock-pages privilege, which a library cannot assume.
void *map_huge_pages(size_t bytes) { return map_pages(bytes); }

void *allocate_aligned(size_t size, size_t alignment) { return _aligned_malloc(size ? size : 1, alignment); }

void free_aligned(void *data) { _aligned_free(data); }

uint64_t random_bits() {
    uint64_t bits = 0;
    if (BCryptGenRandom(nullptr, reinterpret_cast<PUCHAR>(&bits), sizeof bits, BCRYPT_USE_SYSTEM_PREFERRED_RNG) >= 0)
        return bits;
    LARGE_INTEGER now;
    QueryPerformanceCounter(&now);
    return uint64_t(now.QuadPart) * 0x9e3779b97f4a7c15u ^ uint64_t(GetCurrentProcessId());
}

AtomicWriter::~AtomicWriter() {
    if (handle_ == -1) return;
    CloseHandle(handle_of(handle_));
    std::vector<wchar_t> wide;
    if (widen(tmp_, &wide)) DeleteFileW(wide.data());
}

bool AtomicWriter::create(const char *target) {
    target_ = target;
    const size_t dir_len = folder_length(target);
    if (!target[dir_len]) return failed("%s: names a folder, not a file", target);
    for (int attempt = 0; attempt < 100; ++attempt) {
        if (!temporary_name(target, dir_len, (unsigned long)GetCurrentProcessId(), tmp_, sizeof tmp_))
            return failed("path too long (%zu bytes) for a temporary file beside it: %.200s...", std::strlen(target), target);
        std::vector<wchar_t> wide;
        if (!widen(tmp_, &wide)) return failed("%s: cannot create: the path is not UTF-8", target);
        // CREATE_NEW fails on any existing name, a link among them: nothing planted is followed.
        HANDLE h = CreateFileW(wide.data(), GENERIC_WRITE, 0, nullptr, CREATE_NEW, FILE_ATTRIBUTE_NORMAL, nullptr);
        if (h == INVALID_HANDLE_VALUE && GetLastError() == ERROR_FILE_EXISTS) continue;
        if (h == INVALID_HANDLE_VALUE) return failed("%s: cannot create: %s", tmp_, last_error_text());
        handle_ = reinterpret_cast<intptr_t>(h);
        return true;
    }
    return failed("%s: no unused temporary name beside it", target);
}

bool AtomicWriter::write(const void *data, size_t n) {
    auto *from = static_cast<const char *>(data);
    while (n > 0) {
        const DWORD want = n > 0x40000000u ? 0x40000000u : DWORD(n);
        DWORD put = 0;
        if (!WriteFile(handle_of(handle_), from, want, &put, nullptr) || put == 0) {
            return failed("%s: cannot write: %s", target_,
                          put == 0 && GetLastError() == 0 ? "nothing written" : last_error_text());
        }
        from += put, n -= put;
    }
    return true;
}

bool AtomicWriter::commit() {
    HANDLE h = handle_of(handle_);
    handle_ = -1;
    const bool synced = FlushFileBuffers(h) != 0;
    const char *why = synced ? "" : last_error_text();
    CloseHandle(h);
    std::vector<wchar_t> from, to;
    if (synced && widen(tmp_, &from) && widen(target_, &to)) {
        // The replacement is one rename, written through to disk before it returns.  Windows
        // refuses it for a while when another process or writer holds the target in a way that
        // forbids deletion (a rename racing ours, an open without FILE_SHARE_DELETE): retried.
        for (int attempt = 0; attempt < 200; ++attempt) {
            if (MoveFileExW(from.data(), to.data(), MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH)) return true;
            const DWORD code = GetLastError();
            if (code != ERROR_ACCESS_DENIED && code != ERROR_SHARING_VIOLATION) break;
            Sleep(attempt < 10 ? 0 : 1);
        }
        why = last_error_text();
    }
    if (widen(tmp_, &from)) DeleteFileW(from.data());
    return failed("%s: cannot write: %s", target_, why);
}

}  // namespace tl::platform
