/* A binding's native layer opened the way its runtime opens it (LoadLibrary on Windows, dlopen
 * elsewhere: a library beside it found by the loader alone), for the test programs that check
 * the natives where no .NET or JVM runs (load_native.c, mono_registration.c).  Each says why it
 * failed on stderr and returns NULL. */
#ifndef TENSORLIFE_TESTS_NATIVE_LIBRARY_H
#define TENSORLIFE_TESTS_NATIVE_LIBRARY_H
#include <stdio.h>
#ifdef _WIN32
#  include <windows.h>
#else
#  include <dlfcn.h>
#endif

/* global: its symbols are seen by libraries loaded later (dlopen's RTLD_GLOBAL; every module's
 * exports are visible on Windows). */
static void *native_load(const char *path, int global) {
#ifdef _WIN32
    (void)global;
    void *lib = (void *)LoadLibraryExA(path, NULL, LOAD_WITH_ALTERED_SEARCH_PATH);
    if (!lib) fprintf(stderr, "%s: not loaded (error %lu)\n", path, GetLastError());
#else
    void *lib = dlopen(path, RTLD_NOW | (global ? RTLD_GLOBAL : RTLD_LOCAL));
    if (!lib) fprintf(stderr, "%s\n", dlerror());
#endif
    return lib;
}

static void (*native_find(void *lib, const char *name))(void) {
#ifdef _WIN32
    void (*f)(void) = (void (*)(void))GetProcAddress((HMODULE)lib, name);
#else
    void (*f)(void) = (void (*)(void))dlsym(lib, name);
#endif
    if (!f) fprintf(stderr, "no %s\n", name);
    return f;
}

#endif
