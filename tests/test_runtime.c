/* The binding runtime (bindings/runtime/tlb.c) on its own, as every language binding uses it:
 * context records and their references, failures recorded on the record, scope tokens, the
 * info and stats layouts the generated lists name, dtype-exact reads, and one record used from
 * several threads at once (serialised, never refused or raced). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "common.h"
#include "tlb.h"

static const int64_t shape4[1] = {4};

/* Either kind of record (locked, or serialised by its language) behaves the same to its caller. */
static void failures_of(uint64_t c) {
    cr_assert_neq(c, 0);
    float data[4] = {1, 2, 3, 4};
    const uint64_t a = tlb_from_f32(c, (int64_t *)shape4, 1, data, 4);
    cr_assert_neq(a, 0, "%s", tlb_message(c));
    /* A failure is recorded on the record, with the library's message; a success keeps it. */
    cr_assert_eq(tlb_from_f32(c, (int64_t *)shape4, 1, data, 3), 0);
    cr_assert_eq(tlb_status(c), TL_E_INVALID_ARGUMENT);
    cr_assert(strstr(tlb_message(c), "bytes"), "%s", tlb_message(c));
    cr_assert_neq(tlb_relu(c, a), 0);
    cr_assert_eq(tlb_status(c), TL_E_INVALID_ARGUMENT, "a success does not clear the last failure");
    /* Closed: every call is refused on the record; the record lives until released. */
    tlb_context_close(c);
    cr_assert_eq(tlb_relu(c, a), 0);
    cr_assert_eq(tlb_status(c), TL_E_INVALID_HANDLE);
    cr_assert_str_eq(tlb_message(c), "the context is closed");
    tlb_context_close(c); /* idempotent */
    tlb_context_release(c);
    /* No context at all: refused on the shared no-context record. */
    cr_assert_eq(tlb_relu(0, a), 0);
    cr_assert_eq(tlb_status(0), TL_E_INVALID_HANDLE);
    cr_assert_str_eq(tlb_message(0), "no context (0)");
}
Test(runtime, a_context_record_and_its_failures) { failures_of(tlb_context_new()); }
Test(runtime, a_serialised_record_and_its_failures) { failures_of(tlb_context_new_serialised()); }

Test(runtime, scope_tokens_are_the_handles_and_never_revive) {
    const uint64_t c = tlb_context_new(), other = tlb_context_new();
    cr_assert_eq(tlb_scope_current(c), 0, "ambient");
    const uint64_t a = tlb_scope_open(c, "a", TL_GROW, 0, 0);
    cr_assert_neq(a, 0);
    cr_assert_eq(tlb_scope_current(c), (int64_t)a);
    cr_assert_str_eq(tlb_scope_name(c, a), "a");
    cr_assert_eq(tlb_scope_close(c, a), TL_OK);
    const uint64_t b = tlb_scope_open(c, "b", TL_GROW, 0, 0);
    /* a's token names no scope, though b sits at its depth. */
    cr_assert_eq(tlb_scope_reset(c, a), TL_E_INVALID_HANDLE);
    cr_assert(strstr(tlb_message(c), "scope 'a'"), "%s", tlb_message(c));
    cr_assert_null(tlb_scope_name(c, a));
    cr_assert_eq(tlb_scope_close(c, a), TL_E_INVALID_HANDLE);
    cr_assert_eq(tlb_scope_current(c), (int64_t)b, "b is still open");
    /* Another record's token, and negative sizes. */
    cr_assert_eq(tlb_scope_reset(other, b), TL_E_INVALID_HANDLE);
    cr_assert_eq(tlb_scope_open(c, "neg", TL_GROW, -1, 0), 0);
    cr_assert_eq(tlb_status(c), TL_E_INVALID_ARGUMENT);
    cr_assert_eq(tlb_scope_close(c, b), TL_OK);
    tlb_context_release(c);
    tlb_context_release(other);
}

Test(runtime, a_scope_object_outliving_its_context_keeps_the_record) {
    const uint64_t c = tlb_context_new();
    const uint64_t outer = tlb_scope_open(c, "outer", TL_GROW, 0, 0);
    const uint64_t inner = tlb_scope_open(c, "inner", TL_GROW, 0, 0);
    tlb_scope_hold(c); /* two Scope objects whose finalizers may run after the Context's */
    tlb_scope_hold(c);
    tlb_scope_release(c, outer); /* not innermost: stays open */
    cr_assert_eq(tlb_scope_current(c), (int64_t)inner);
    tlb_scope_release(c, inner); /* innermost: closed */
    cr_assert_eq(tlb_scope_current(c), (int64_t)outer);
    tlb_scope_hold(c);
    tlb_context_release(c); /* the Context first: the library's context goes, the record stays */
    cr_assert_eq(tlb_scope_current(c), -1);
    cr_assert_eq(tlb_status(c), TL_E_INVALID_HANDLE);
    tlb_scope_release(c, outer); /* the last reference frees the record (ASan/valgrind: no leak) */
}

/* Exports (the Python buffer protocol and DLPack): the memory stays alive until each is
 * released; a scope reset, a free over it are refused; a close waits.  Under ASan and valgrind
 * a read after an early free would be reported. */
static void exports_of(uint64_t c) {
    int64_t info[64];
    void *data = NULL;
    float values[4] = {1, 2, 3, 4};
    const uint64_t w = tlb_from_f32(c, (int64_t *)shape4, 1, values, 4);
    const uint64_t outer = tlb_scope_open(c, "ambient", TL_GROW, 0, 0); /* a scope named like ambient */
    const uint64_t step = tlb_scope_open(c, "step", TL_GROW, 0, 0);
    const uint64_t y = tlb_add(c, w, w);
    cr_assert_eq(tlb_export(c, y, &data, info, 64), TL_OK, "%s", tlb_message(c));
    cr_assert_eq(tlb_export(c, y, &data, info, 64), TL_OK); /* twice: two views */
    cr_assert_eq(((float *)data)[3], 8.0f);
    cr_assert_eq(tlb_scope_reset(c, step), TL_E_BUSY);
    cr_assert(strstr(tlb_message(c), "resetting scope 'step'") && strstr(tlb_message(c), "2 views"), "%s",
              tlb_message(c));
    tlb_unexport(c, y);
    cr_assert_eq(tlb_scope_close(c, step), TL_E_BUSY);
    tlb_unexport(c, y);
    cr_assert_eq(tlb_scope_reset(c, step), TL_OK, "%s", tlb_message(c));
    cr_assert_eq(tlb_scope_close(c, step), TL_OK);
    /* The outer scope (generation 0, named "ambient") and an ambient export are told apart. */
    const uint64_t z = tlb_mul(c, w, w);
    cr_assert_eq(tlb_export(c, w, &data, info, 64), TL_OK);
    cr_assert_eq(tlb_scope_reset(c, outer), TL_OK, "an ambient export does not hold a scope: %s", tlb_message(c));
    cr_assert_eq(tlb_info(c, z, info, 64), TL_E_STORAGE_CLOSED);
    const uint64_t z2 = tlb_mul(c, w, w);
    cr_assert_eq(tlb_export(c, z2, &data, info, 64), TL_OK);
    cr_assert_eq(tlb_scope_reset(c, outer), TL_E_BUSY);
    tlb_unexport(c, z2);
    cr_assert_eq(tlb_scope_close(c, outer), TL_OK);
    /* A free over exported memory is refused: the tensor itself, or the base of an exported view. */
    cr_assert_eq(tlb_free(c, w), TL_E_BUSY);
    tlb_unexport(c, w);
    const uint64_t view = tlb_slice(c, w, 0, 1, 2);
    cr_assert_eq(tlb_export(c, view, &data, info, 64), TL_OK);
    cr_assert_eq(tlb_free(c, w), TL_E_BUSY);
    cr_assert(strstr(tlb_message(c), "freeing"), "%s", tlb_message(c));
    /* Closed and released while exported: calls refused, the memory still there until the end. */
    tlb_context_close(c);
    cr_assert_eq(tlb_relu(c, w), 0);
    cr_assert_eq(tlb_status(c), TL_E_INVALID_HANDLE);
    cr_assert_eq(tlb_export(c, view, &data, info, 64), TL_E_INVALID_HANDLE);
    tlb_context_release(c);
    cr_assert_eq(((float *)data)[0], 2.0f);
    cr_assert_eq(((float *)data)[1], 3.0f);
    tlb_unexport(c, view); /* the last export: the context and then the record go */
}
Test(runtime, exported_memory_outlives_resets_frees_and_closes) { exports_of(tlb_context_new()); }
Test(runtime, exported_memory_of_a_serialised_record) { exports_of(tlb_context_new_serialised()); }

/* Many tensors exported at once: found in constant time, each released. */
Test(runtime, many_exports) {
    const uint64_t c = tlb_context_new();
    const uint64_t s = tlb_scope_open(c, "many", TL_GROW, 0, 0);
    enum { count = 20000 };
    static uint64_t bits[count];
    int64_t info[64];
    void *data = NULL;
    float one[4] = {1, 1, 1, 1};
    const uint64_t w = tlb_from_f32(c, (int64_t *)shape4, 1, one, 4);
    for (int i = 0; i < count; ++i) {
        bits[i] = tlb_add(c, w, w);
        cr_assert_eq(tlb_export(c, bits[i], &data, info, 64), TL_OK);
    }
    for (int i = 0; i < count; i += 2) tlb_unexport(c, bits[i]); /* every other: holes in the table */
    cr_assert_eq(tlb_scope_reset(c, s), TL_E_BUSY);
    for (int i = 1; i < count; i += 2) {
        cr_assert_eq(tlb_export(c, bits[i], &data, info, 64), TL_OK); /* found again: counted twice */
        tlb_unexport(c, bits[i]);
        tlb_unexport(c, bits[i]);
    }
    cr_assert_eq(tlb_scope_reset(c, s), TL_OK, "%s", tlb_message(c));
    tlb_context_release(c);
}

Test(runtime, info_and_stats_layouts_match_the_library) {
    const uint64_t c = tlb_context_new();
    const uint64_t s = tlb_scope_open(c, "step", TL_GROW, 1 << 12, 0);
    const int64_t shape[2] = {3, 5};
    const uint64_t t = tlb_fill(c, TL_F32, (int64_t *)shape, 2, 1, 0.0);
    const uint64_t v = tlb_transpose(c, t, 0, 1);
    cr_assert_neq(v, 0);
    enum { kSlots = 2 + 2 * TL_MAX_DIMS + 3 + 1 }; /* TL_TENSOR_INFO_FIELDS, then the count */
    int64_t info[kSlots + 1];
    cr_assert_eq(tlb_info(c, v, info, kSlots - 1), TL_E_INVALID_ARGUMENT, "too few slots");
    info[kSlots] = -7;
    cr_assert_eq(tlb_info(c, v, info, kSlots + 1), TL_OK);
    cr_assert_eq(info[kSlots], -7, "nothing past the layout written");
    cr_assert_eq(info[0], TL_F32);
    cr_assert_eq(info[1], 2);
    cr_assert_eq(info[2], 5);
    cr_assert_eq(info[3], 3);
    cr_assert_eq(info[4], 0, "dims past ndim are 0");
    cr_assert_eq(info[2 + TL_MAX_DIMS], 1, "strides");
    cr_assert_eq(info[3 + TL_MAX_DIMS], 5);
    cr_assert_eq(info[2 + 2 * TL_MAX_DIMS + 1], 0, "generation 0: no reset yet");
    cr_assert_eq(info[2 + 2 * TL_MAX_DIMS + 2], 0, "not read-only");
    cr_assert_eq(info[kSlots - 1], 15, "the element count");
    uint64_t stats[8] = {0};
    cr_assert_eq(tlb_scope_stats(c, s, stats, 6), TL_E_INVALID_ARGUMENT, "too few slots");
    cr_assert_eq(tlb_scope_stats(c, s, stats, 8), TL_OK);
    cr_assert_eq(stats[0], 0, "generation");
    cr_assert_eq(stats[2], 64, "used bytes: the tensor's 60 rounded to 64; a view takes none");
    cr_assert_eq(stats[6], 2, "live tensors: the tensor and its view");
    cr_assert_eq(tlb_scope_reset(c, s), TL_OK);
    cr_assert_eq(tlb_info(c, t, info, kSlots), TL_E_STORAGE_CLOSED);
    tlb_context_release(c);
}

Test(runtime, reads_never_reinterpret_bits) {
    const uint64_t c = tlb_context_new();
    const uint64_t t = tlb_fill(c, TL_F32, (int64_t *)shape4, 1, 2, 1.5);
    double d[4];
    cr_assert_eq(tlb_read_f64(c, t, d, 4), TL_E_DTYPE);
    cr_assert(strstr(tlb_message(c), "f32") && strstr(tlb_message(c), "f64"), "%s", tlb_message(c));
    float f[4];
    cr_assert_eq(tlb_read_f32(c, t, f, 3), TL_E_INVALID_ARGUMENT, "too small");
    cr_assert_eq(tlb_read_f32(c, t, f, 4), TL_OK);
    cr_assert_eq(f[3], 1.5f);
    char dir[256], path[300];
    temp_dir_create(dir, sizeof dir, "runtime");
    snprintf(path, sizeof path, "%s/x.safetensors", dir);
    uint64_t both[2] = {t, t};
    cr_assert_eq(tlb_safetensors_save(c, path, "a", both, 2), TL_E_INVALID_ARGUMENT, "one name, two tensors");
    cr_assert(strstr(tlb_message(c), "1 names for 2 tensors"), "%s", tlb_message(c));
    cr_assert_eq(tlb_safetensors_save(c, path, "a\nb", both, 2), TL_OK, "%s", tlb_message(c));
    const uint64_t file = tlb_st_open(c, path);
    cr_assert_neq(file, 0);
    cr_assert_eq(tlb_st_count(file), 2);
    cr_assert_eq(tlb_st_get(c, file, "missing"), 0);
    cr_assert_eq(tlb_status(c), TL_E_NOT_FOUND);
    tlb_st_close(file);
    temp_dir_remove(dir);
    tlb_context_release(c);
}

/* ---- one record from several threads: the record's lock serialises them ------------------ */
typedef struct {
    uint64_t c, a;
    int way; /* 0 tlb_add; 1 tlb_direct_binary first, as Go's binding; 2 tlb_small_add first, as C#'s under Mono */
    int failures;
} shared_record;

/* One direct call (Go's), as the binding makes it. */
static tlb_direct_call direct(uint64_t c, int op, uint64_t a, uint64_t b) {
    tlb_direct_call call = {c, a, b, 0, op, 0};
    tlb_direct_binary(&call);
    return call;
}

/* The add as Go makes it: the direct call, and the ordinary one when that did nothing. */
static uint64_t add_as_go(uint64_t c, uint64_t a, uint64_t b) {
    const tlb_direct_call call = direct(c, TLB_DIRECT_add, a, b);
    return call.done ? call.out : tlb_add(c, a, b);
}

/* The add as C# makes it under Mono: the internal call, and the ordinary one when that made nothing. */
static uint64_t add_as_mono(uint64_t c, uint64_t a, uint64_t b) {
    const uint64_t y = tlb_small_add(c, a, b);
    return y ? y : tlb_add(c, a, b);
}

static void *adds(void *arg) {
    shared_record *r = arg;
    for (int i = 0; i < 2000; ++i) {
        const uint64_t y = r->way == 1   ? add_as_go(r->c, r->a, r->a)
                           : r->way == 2 ? add_as_mono(r->c, r->a, r->a)
                                         : tlb_add(r->c, r->a, r->a);
        float v[4];
        if (!y || tlb_read_f32(r->c, y, v, 4) != TL_OK || v[3] != 8.0f || tlb_free(r->c, y) != TL_OK) ++r->failures;
    }
    return NULL;
}

Test(runtime, one_record_from_four_threads_is_serialised) {
    NEEDS_THREADS();
    float data[4] = {1, 2, 3, 4};
    shared_record r = {tlb_context_new(), 0, 0, 0};
    r.a = tlb_from_f32(r.c, (int64_t *)shape4, 1, data, 4);
    shared_record each[4];
    pthread_t threads[4];
    for (int i = 0; i < 4; ++i) {
        each[i] = r;
        each[i].way = i % 3;
        cr_assert_eq(pthread_create(&threads[i], NULL, adds, &each[i]), 0);
    }
    for (int i = 0; i < 4; ++i) {
        pthread_join(threads[i], NULL);
        cr_assert_eq(each[i].failures, 0, "thread %d: a call was refused (TL_E_BUSY?) or wrong", i);
    }
    tlb_context_release(r.c);
}

/* ---- the direct call (Go's): bounded work, failures recorded, nothing done past the bound -- */
Test(runtime, the_direct_call_does_small_ops_and_leaves_the_rest) {
    const uint64_t c = tlb_context_new();
    float data[4] = {1, 2, 3, 4}, v[4];
    const uint64_t a = tlb_from_f32(c, (int64_t *)shape4, 1, data, 4);
    tlb_direct_call call = direct(c, TLB_DIRECT_mul, a, a);
    cr_assert(call.done && call.out, "%s", tlb_message(c));
    cr_assert_eq(tlb_read_f32(c, call.out, v, 4), TL_OK);
    cr_assert_eq(v[3], 16.0f);
    /* The bound is on the broadcast result: 128 x 128 is done, 128 x 129 is left alone. */
    int64_t column[2] = {128, 1}, row[2] = {1, 128}, wider[2] = {1, 129};
    const uint64_t col = tlb_fill(c, TL_F32, column, 2, 1, 0), r128 = tlb_fill(c, TL_F32, row, 2, 1, 0),
                   r129 = tlb_fill(c, TL_F32, wider, 2, 1, 0);
    cr_assert_eq(TLB_DIRECT_ELEMENTS, 128 * 128);
    call = direct(c, TLB_DIRECT_add, col, r128);
    cr_assert(call.done && call.out, "%s", tlb_message(c));
    call = direct(c, TLB_DIRECT_add, col, r129);
    cr_assert_eq(call.done, 0);
    cr_assert_eq(call.out, 0);
    int64_t big[1] = {TLB_DIRECT_ELEMENTS + 1};
    const uint64_t large = tlb_fill(c, TL_F32, big, 1, 0, 0);
    cr_assert_eq(direct(c, TLB_DIRECT_sub, large, large).done, 0);
    /* A failure is the op's own, recorded on the record as any call's. */
    const uint64_t s = tlb_scope_open(c, "step", TL_GROW, 0, 0);
    const uint64_t t = tlb_from_f32(c, (int64_t *)shape4, 1, data, 4);
    cr_assert_eq(tlb_scope_reset(c, s), TL_OK);
    call = direct(c, TLB_DIRECT_div, t, a);
    cr_assert(call.done && !call.out);
    cr_assert_eq(tlb_status(c), TL_E_STORAGE_CLOSED);
    cr_assert(strstr(tlb_message(c), "'step'"), "%s", tlb_message(c));
    /* No op, no context, a closed context: nothing done, for the ordinary call to say why. */
    cr_assert_eq(direct(c, 1 << 20, a, a).done, 0);
    cr_assert_eq(direct(c, -1, a, a).done, 0);
    cr_assert_eq(direct(0, TLB_DIRECT_add, a, a).done, 0);
    tlb_context_close(c);
    cr_assert_eq(direct(c, TLB_DIRECT_add, a, a).done, 0);
    tlb_context_release(c);
}

/* ---- Mono's internal calls: the same bounded op, 0 whenever it made nothing ------------------ */
Test(runtime, the_small_ops_make_small_results_and_nothing_else) {
    const uint64_t c = tlb_context_new();
    float data[4] = {1, 2, 3, 4}, v[4];
    const uint64_t a = tlb_from_f32(c, (int64_t *)shape4, 1, data, 4);
    const uint64_t y = tlb_small_mul(c, a, a);
    cr_assert(y, "%s", tlb_message(c));
    cr_assert_eq(tlb_read_f32(c, y, v, 4), TL_OK);
    cr_assert_eq(v[3], 16.0f);
    const uint64_t q = tlb_small_div(c, y, a);
    cr_assert(q, "%s", tlb_message(c));
    cr_assert_eq(tlb_read_f32(c, q, v, 4), TL_OK);
    cr_assert_eq(v[3], 4.0f);
    int64_t big[1] = {TLB_DIRECT_ELEMENTS + 1};
    const uint64_t large = tlb_fill(c, TL_F32, big, 1, 0, 0);
    cr_assert_eq(tlb_small_sub(c, large, large), 0);
    cr_assert(tlb_sub(c, large, large), "%s", tlb_message(c)); /* the ordinary call makes it */
    /* A failure: 0, recorded; the binding's ordinary call then says the same. */
    const uint64_t s = tlb_scope_open(c, "step", TL_GROW, 0, 0);
    const uint64_t t = tlb_from_f32(c, (int64_t *)shape4, 1, data, 4);
    cr_assert_eq(tlb_scope_reset(c, s), TL_OK);
    cr_assert_eq(tlb_small_add(c, t, a), 0);
    cr_assert_eq(tlb_status(c), TL_E_STORAGE_CLOSED);
    cr_assert_eq(tlb_add(c, t, a), 0);
    cr_assert(strstr(tlb_message(c), "'step'"), "%s", tlb_message(c));
    cr_assert_eq(tlb_small_add(0, a, a), 0);
    tlb_context_close(c);
    cr_assert_eq(tlb_small_add(c, a, a), 0);
    tlb_context_release(c);
}
