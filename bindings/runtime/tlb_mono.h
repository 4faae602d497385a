/* Mono's fast way into native code for small, quick calls: internal calls, which skip the
 * P/Invoke wrapper and its GC transition (bench/README.md, "C# on Mono").  Context's static
 * constructor calls this; it finds Mono's embedding API at run time in whichever loaded module
 * exports it (libmono on Linux; Unity's mono-2.0-bdwgc.dll or mono-2.0-sgen.dll on Windows), so
 * the library links no Mono.  The calls registered are the bounded ops (tlb_small_*: never
 * waiting, a few microseconds at most), which allocate nothing the collector sees, as raw
 * internal calls must.  Tested by tests/packaging/mono_registration.c. */
#ifndef TLB_MONO_H
#define TLB_MONO_H
#ifdef __cplusplus
extern "C" {
#endif

/* 1 when Mono's mono_dangerous_add_raw_internal_call was found and every op registered; 0 under
 * another runtime (.NET), where the C# layer calls through P/Invoke. */
int tlb_cs_register_internal_calls(void);

#ifdef __cplusplus
}
#endif
#endif
