/* A stand-in for Mono's embedding API, loaded by tests/packaging/mono_registration.c into a
 * process with no Mono: it exports the one function the C# native layer looks up
 * (mono_dangerous_add_raw_internal_call) and keeps what was registered with it. */
#ifdef _WIN32
#  define FAKE_MONO_API __declspec(dllexport)
#else
#  define FAKE_MONO_API __attribute__((visibility("default")))
#endif

enum { FAKE_MONO_MAX = 64 };
static const char *registered_names[FAKE_MONO_MAX];
static const void *registered_methods[FAKE_MONO_MAX];
static int registered;

FAKE_MONO_API void mono_dangerous_add_raw_internal_call(const char *name, const void *method) {
    if (registered < FAKE_MONO_MAX) {
        registered_names[registered] = name;
        registered_methods[registered] = method;
    }
    ++registered;
}

/* How many calls were registered; the i-th one's name and method, where i is in range. */
FAKE_MONO_API int fake_mono_registered(int i, const char **name, const void **method) {
    if (i >= 0 && i < registered && i < FAKE_MONO_MAX) {
        *name = registered_names[i];
        *method = registered_methods[i];
    }
    return registered;
}
