/* Handles and bad input: stale, freed, foreign and forged handles; NULLs; bad shapes.
 * Every failure must leave outputs untouched and state as it was. */
#include <stdint.h>
#include <stdio.h>

#include "common.h"

static const int64_t shape4[1] = {4};

CONTEXT_SUITE(handles);

Test(handles, use_after_reset_is_caught_everywhere_and_names_the_storage) {
    tl_scope s;
    OK(tl_scope_open(ctx, "decode-step", 1 << 14, &s));
    for (int i = 0; i < 41; ++i) OK(tl_scope_reset(ctx, s));
    tl_tensor t, v, other;
    OK(tl_tensor_ones(ctx, TL_F32, 1, shape4, &t));
    OK(tl_slice(ctx, t, 0, 1, 2, &v));
    OK(tl_scope_reset(ctx, s));
    OK(tl_tensor_ones(ctx, TL_F32, 1, shape4, &other)); /* the slot is reused by a live tensor */

    float buf[4];
    void *ptr = (void *)0x1;
    tl_tensor out = {777};
    tl_tensor_info info = TL_TENSOR_INFO_INIT;
    FAILS_WITH(tl_tensor_read(ctx, t, buf, sizeof buf), TL_E_STORAGE_CLOSED);
    char want[128];
    tl_scope_stats st = stats_of(s);
    cr_assert_eq(st.generation, 42);
    snprintf(want, sizeof want, "storage 'decode-step' #1 gen 41 is closed (scope is at gen 42)");
    cr_assert_str_eq(tl_last_error(), want);
    FAILS_WITH(tl_tensor_data(ctx, t, &ptr), TL_E_STORAGE_CLOSED);
    FAILS_WITH(tl_tensor_info_get(ctx, v, &info), TL_E_STORAGE_CLOSED);
    FAILS_WITH(tl_tensor_free(ctx, t), TL_E_STORAGE_CLOSED);
    FAILS_WITH(tl_add(ctx, other, t, &out), TL_E_STORAGE_CLOSED);
    FAILS_WITH(tl_matmul(ctx, t, other, &out), TL_E_STORAGE_CLOSED);
    FAILS_WITH(tl_softmax(ctx, v, 0, &out), TL_E_STORAGE_CLOSED);
    FAILS_WITH(tl_slice(ctx, t, 0, 0, 1, &out), TL_E_STORAGE_CLOSED);
    FAILS_WITH(tl_copy_into(ctx, other, v), TL_E_STORAGE_CLOSED);
    FAILS_WITH(tl_tensor_retain(ctx, t, TL_NO_SCOPE, &out), TL_E_STORAGE_CLOSED);
    FAILS_WITH(tl_concat(ctx, 1, &t, 0, &out), TL_E_STORAGE_CLOSED);
    cr_assert_eq(ptr, (void *)0x1);
    cr_assert_eq(out.bits, 777);
    cr_assert_eq(stats_of(s).live_tensors, 1, "failed calls placed nothing");
    OK(tl_tensor_read(ctx, other, buf, sizeof buf));
    OK(tl_scope_close(ctx, s));
}

Test(handles, use_after_close_names_the_closed_scope) {
    tl_scope a, b;
    OK(tl_scope_open(ctx, "frame", 0, &a));
    OK(tl_scope_reset(ctx, a));
    tl_tensor t;
    OK(tl_tensor_zeros(ctx, TL_F32, 1, shape4, &t));
    OK(tl_scope_close(ctx, a));
    float buf[4];
    FAILS_WITH(tl_tensor_read(ctx, t, buf, sizeof buf), TL_E_STORAGE_CLOSED);
    cr_assert_str_eq(tl_last_error(), "storage 'frame' #1 gen 1 is closed (scope was closed at gen 1)");
    /* A new scope at the same depth: the old handle still cannot look current. */
    OK(tl_scope_open(ctx, "next", 0, &b));
    tl_tensor u;
    OK(tl_tensor_zeros(ctx, TL_F32, 1, shape4, &u));
    FAILS_WITH(tl_tensor_read(ctx, t, buf, sizeof buf), TL_E_STORAGE_CLOSED);
    OK(tl_tensor_read(ctx, u, buf, sizeof buf));
    OK(tl_scope_close(ctx, b));
    /* A closed scope pointer is refused, not used. */
    FAILS_WITH(tl_scope_close(ctx, b), TL_E_INVALID_HANDLE);
    FAILS_WITH(tl_scope_reset(ctx, b), TL_E_INVALID_HANDLE);
    tl_scope_stats st = TL_SCOPE_STATS_INIT;
    FAILS_WITH(tl_scope_stats_get(ctx, b, &st), TL_E_INVALID_HANDLE);
    cr_assert_null(tl_scope_name(ctx, b));
}

Test(handles, freed_ambient_and_views_of_it) {
    tl_tensor t, v, again;
    OK(tl_tensor_ones(ctx, TL_F32, 1, shape4, &t));
    OK(tl_slice(ctx, t, 0, 0, 2, &v));
    OK(tl_tensor_free(ctx, t));
    FAILS_WITH(tl_tensor_free(ctx, t), TL_E_INVALID_HANDLE); /* double free */
    float buf[4];
    FAILS_WITH(tl_tensor_read(ctx, v, buf, sizeof buf), TL_E_INVALID_HANDLE); /* a view dies with its base */
    OK(tl_tensor_ones(ctx, TL_F32, 1, shape4, &again));                       /* reuses the slot */
    cr_assert_neq(again.bits, t.bits);
    FAILS_WITH(tl_tensor_read(ctx, t, buf, sizeof buf), TL_E_INVALID_HANDLE);
    FAILS_WITH(tl_tensor_free(ctx, v), TL_E_INVALID_HANDLE); /* its slot went with the base */
    OK(tl_tensor_free(ctx, again));
}

/* An ambient tensor's views, freed in any order: the older view first (the newer one stays
 * linked and readable), then the base, which ends the other view. */
Test(handles, ambient_views_freed_oldest_first) {
    tl_tensor t, older, newer, newest;
    OK(tl_tensor_ones(ctx, TL_F32, 1, shape4, &t));
    OK(tl_slice(ctx, t, 0, 0, 2, &older));
    OK(tl_slice(ctx, t, 0, 1, 2, &newer));
    OK(tl_slice(ctx, t, 0, 2, 2, &newest));
    OK(tl_tensor_free(ctx, newer)); /* from the middle of the base's list */
    OK(tl_tensor_free(ctx, older)); /* its last */
    float buf[2];
    FAILS_WITH(tl_tensor_read(ctx, older, buf, sizeof buf), TL_E_INVALID_HANDLE);
    OK(tl_tensor_read(ctx, newest, buf, sizeof buf));
    cr_assert(buf[0] == 1 && buf[1] == 1);
    OK(tl_tensor_free(ctx, t));
    FAILS_WITH(tl_tensor_read(ctx, newest, buf, sizeof buf), TL_E_INVALID_HANDLE);
    FAILS_WITH(tl_tensor_free(ctx, newer), TL_E_INVALID_HANDLE);
}

/* Caller memory wrapped inside a scope is a handle of that scope: it dies at the reset, naming
 * the storage, while the caller's bytes stay as they were. */
Test(handles, a_wrapped_buffer_in_a_scope_dies_with_the_scope_not_the_bytes) {
    float buf[4] = {1, 2, 3, 4}, got[4];
    tl_scope s;
    OK(tl_scope_open(ctx, "frame", 0, &s));
    tl_tensor w, half;
    OK(tl_tensor_wrap(ctx, TL_F32, 1, shape4, buf, sizeof buf, &w));
    OK(tl_slice(ctx, w, 0, 2, 2, &half));
    OK(tl_tensor_read(ctx, half, got, 2 * sizeof(float)));
    cr_assert(got[0] == 3 && got[1] == 4);
    OK(tl_scope_reset(ctx, s));
    FAILS_WITH(tl_tensor_read(ctx, w, got, sizeof got), TL_E_STORAGE_CLOSED);
    FAILS_WITH(tl_tensor_read(ctx, half, got, sizeof got), TL_E_STORAGE_CLOSED);
    cr_assert(buf[0] == 1 && buf[1] == 2 && buf[2] == 3 && buf[3] == 4, "the reset touched the caller's bytes");
    OK(tl_tensor_wrap(ctx, TL_F32, 1, shape4, buf, sizeof buf, &w)); /* again, in the reset scope */
    OK(tl_tensor_read(ctx, w, got, sizeof got));
    cr_assert_eq(got[3], 4);
    OK(tl_scope_close(ctx, s));
}

Test(handles, foreign_and_forged_handles) {
    tl_context *a = ctx, *b; /* b: another context */
    OK(tl_context_create(NULL, &b));
    tl_tensor t, out = {5};
    OK(tl_tensor_ones(a, TL_F32, 1, shape4, &t));
    float buf[4];
    FAILS_WITH(tl_tensor_read(b, t, buf, sizeof buf), TL_E_INVALID_HANDLE);
    cr_assert(strstr(tl_last_error(), "another context") != NULL, "%s", tl_last_error());
    FAILS_WITH(tl_add(b, t, t, &out), TL_E_INVALID_HANDLE);
    FAILS_WITH(tl_tensor_free(b, t), TL_E_INVALID_HANDLE);
    tl_tensor none = {0};
    FAILS_WITH(tl_tensor_read(a, none, buf, sizeof buf), TL_E_INVALID_HANDLE);
    unsigned seed = 99;
    for (int i = 0; i < 2000; ++i) {
        tl_tensor forged;
        forged.bits = ((uint64_t)(seed = seed * 1103515245u + 12345u) << 32) ^ (seed = seed * 1103515245u + 12345u);
        if (forged.bits == t.bits) continue;
        tl_status st = tl_tensor_read(a, forged, buf, sizeof buf);
        cr_assert(st == TL_E_INVALID_HANDLE || st == TL_E_STORAGE_CLOSED, "forged handle gave %s",
                  tl_status_string(st));
    }
    cr_assert_eq(out.bits, 5);
    OK(tl_tensor_read(a, t, buf, sizeof buf));
    tl_context_destroy(b);
}

/* A handle of the scope's current generation whose slot was never issued (the next one, and
 * ones past it within the table's capacity) is refused, not read from an unused table entry. */
Test(handles, current_generation_with_an_unissued_slot) {
    tl_scope s;
    OK(tl_scope_open(ctx, "slots", 0, &s));
    tl_tensor t;
    OK(tl_tensor_ones(ctx, TL_F32, 1, shape4, &t));
    const int slot_shift = 40; /* handle layout (impl/handle.h): depth 5 | slot 19 | generation 40 */
    const uint64_t slot_mask = ((uint64_t)1 << 19) - 1;
    float buf[4];
    for (uint64_t slot = 1; slot < 40; slot += 3) {
        tl_tensor forged = {(t.bits & ~(slot_mask << slot_shift)) | (slot << slot_shift)};
        FAILS_WITH(tl_tensor_read(ctx, forged, buf, sizeof buf), TL_E_INVALID_HANDLE);
    }
    OK(tl_tensor_read(ctx, t, buf, sizeof buf));
    OK(tl_scope_close(ctx, s));
}

Test(handles, null_pointers_are_refused) {
    tl_tensor t;
    tl_context *refused = NULL;
    FAILS_WITH(tl_context_create(NULL, NULL), TL_E_INVALID_ARGUMENT);
    tl_allocator half = {NULL, counting_alloc, NULL};
    FAILS_WITH(tl_context_create(&half, &refused), TL_E_INVALID_ARGUMENT);
    cr_assert_null(refused, "a refused create leaves its output alone");
    tl_allocator no_alloc = {NULL, NULL, counting_free};
    FAILS_WITH(tl_context_create(&no_alloc, &refused), TL_E_INVALID_ARGUMENT);
    cr_assert(strstr(tl_last_error(), "both alloc and free"), "%s", tl_last_error());
    cr_assert_null(refused);
    FAILS_WITH(tl_tensor_zeros(NULL, TL_F32, 1, shape4, &t), TL_E_INVALID_ARGUMENT);
    FAILS_WITH(tl_tensor_zeros(ctx, TL_F32, 1, shape4, NULL), TL_E_INVALID_ARGUMENT);
    FAILS_WITH(tl_tensor_zeros(ctx, TL_F32, 1, NULL, &t), TL_E_INVALID_ARGUMENT);
    FAILS_WITH(tl_tensor_from_data(ctx, TL_F32, 1, shape4, NULL, 16, &t), TL_E_INVALID_ARGUMENT);
    FAILS_WITH(tl_scope_open(ctx, NULL, 0, NULL), TL_E_INVALID_ARGUMENT);
    tl_scope s;
    FAILS_WITH(tl_scope_open(ctx, NULL, 0, &s), TL_E_INVALID_ARGUMENT);
    FAILS_WITH(tl_scope_reset(ctx, TL_NO_SCOPE), TL_E_INVALID_ARGUMENT);
    FAILS_WITH(tl_scope_close(ctx, TL_NO_SCOPE), TL_E_INVALID_ARGUMENT);
    FAILS_WITH(tl_scope_stats_get(ctx, TL_NO_SCOPE, NULL), TL_E_INVALID_ARGUMENT);
    FAILS_WITH(tl_scope_reset(NULL, s), TL_E_INVALID_ARGUMENT);
    OK(tl_tensor_ones(ctx, TL_F32, 1, shape4, &t));
    FAILS_WITH(tl_tensor_read(ctx, t, NULL, 16), TL_E_INVALID_ARGUMENT);
    FAILS_WITH(tl_tensor_data(ctx, t, NULL), TL_E_INVALID_ARGUMENT);
    FAILS_WITH(tl_tensor_info_get(ctx, t, NULL), TL_E_INVALID_ARGUMENT);
    FAILS_WITH(tl_concat(ctx, 1, NULL, 0, &t), TL_E_INVALID_ARGUMENT);
    FAILS_WITH(tl_reshape(ctx, t, 1, NULL, &t), TL_E_INVALID_ARGUMENT);
    tl_context_destroy(NULL); /* a no-op */
}

Test(handles, bad_shapes_and_dtypes) {
    tl_tensor t = {31};
    int64_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    FAILS_WITH(tl_tensor_zeros(ctx, TL_F32, 9, nine, &t), TL_E_INVALID_ARGUMENT);
    FAILS_WITH(tl_tensor_zeros(ctx, TL_F32, -1, nine, &t), TL_E_INVALID_ARGUMENT);
    int64_t negative[2] = {3, -2};
    FAILS_WITH(tl_tensor_zeros(ctx, TL_F32, 2, negative, &t), TL_E_INVALID_ARGUMENT);
    FAILS_WITH(tl_tensor_zeros(ctx, (tl_dtype)99, 1, shape4, &t), TL_E_INVALID_ARGUMENT);
    int64_t huge[2] = {INT64_MAX / 2, 3};
    FAILS_WITH(tl_tensor_zeros(ctx, TL_F32, 2, huge, &t), TL_E_OUT_OF_MEMORY);
    int64_t bytes_overflow[1] = {INT64_MAX / 4 + 1}; /* the count fits int64, its bytes do not */
    FAILS_WITH(tl_tensor_zeros(ctx, TL_F64, 1, bytes_overflow, &t), TL_E_OUT_OF_MEMORY);
    int64_t wraps_to_small[3] = {(int64_t)1 << 32, (int64_t)1 << 32, 2}; /* product wraps to 0 in 64 bits */
    FAILS_WITH(tl_tensor_zeros(ctx, TL_F32, 3, wraps_to_small, &t), TL_E_OUT_OF_MEMORY);
    int64_t too_big[1] = {(int64_t)1 << 60}; /* representable, but no allocator has it */
    FAILS_WITH(tl_tensor_zeros(ctx, TL_F32, 1, too_big, &t), TL_E_OUT_OF_MEMORY);
    float four[4] = {1, 2, 3, 4};
    FAILS_WITH(tl_tensor_from_data(ctx, TL_F32, 1, shape4, four, 12, &t), TL_E_INVALID_ARGUMENT);
    cr_assert_eq(t.bits, 31, "no failed call wrote its output");

    tl_tensor a, b, i;
    int64_t s23[2] = {2, 3}, s32[2] = {3, 2}, s4[1] = {4};
    OK(tl_tensor_ones(ctx, TL_F32, 2, s23, &a));
    OK(tl_tensor_ones(ctx, TL_F64, 2, s32, &b));
    OK(tl_tensor_ones(ctx, TL_I32, 1, s4, &i));
    FAILS_WITH(tl_matmul(ctx, a, b, &t), TL_E_DTYPE);
    FAILS_WITH(tl_matmul(ctx, a, a, &t), TL_E_SHAPE);
    FAILS_WITH(tl_add(ctx, a, i, &t), TL_E_DTYPE);
    FAILS_WITH(tl_add(ctx, a, b, &t), TL_E_DTYPE);
    FAILS_WITH(tl_exp(ctx, i, &t), TL_E_DTYPE);
    FAILS_WITH(tl_div(ctx, i, i, &t), TL_E_DTYPE);
    tl_tensor c;
    OK(tl_tensor_ones(ctx, TL_F32, 1, s4, &c));
    FAILS_WITH(tl_add(ctx, a, c, &t), TL_E_SHAPE); /* [2,3] + [4] */
    FAILS_WITH(tl_slice(ctx, a, 1, 2, 2, &t), TL_E_SHAPE);
    FAILS_WITH(tl_slice(ctx, a, 1, -1, 1, &t), TL_E_SHAPE);
    FAILS_WITH(tl_slice(ctx, a, 1, 0, INT64_MAX, &t), TL_E_SHAPE);
    FAILS_WITH(tl_slice(ctx, a, 2, 0, 1, &t), TL_E_INVALID_ARGUMENT);
    FAILS_WITH(tl_softmax(ctx, a, -3, &t), TL_E_INVALID_ARGUMENT);
    FAILS_WITH(tl_transpose(ctx, a, 0, 5, &t), TL_E_INVALID_ARGUMENT);
    int64_t s7[1] = {7};
    FAILS_WITH(tl_reshape(ctx, a, 1, s7, &t), TL_E_SHAPE);
    int64_t two_infer[2] = {-1, -1};
    FAILS_WITH(tl_reshape(ctx, a, 2, two_infer, &t), TL_E_INVALID_ARGUMENT);
    int32_t bad_ids[2] = {0, 5};
    int64_t s2[1] = {2};
    tl_tensor ids;
    OK(tl_tensor_from_data(ctx, TL_I32, 1, s2, bad_ids, sizeof bad_ids, &ids));
    FAILS_WITH(tl_gather_rows(ctx, a, ids, &t), TL_E_SHAPE);
    FAILS_WITH(tl_gather_rows(ctx, a, c, &t), TL_E_DTYPE);
    FAILS_WITH(tl_rmsnorm(ctx, a, c, 1e-5, &t), TL_E_SHAPE);
    FAILS_WITH(tl_copy_into(ctx, c, a), TL_E_SHAPE);
    tl_tensor parts[2] = {a, c};
    FAILS_WITH(tl_concat(ctx, 2, parts, 0, &t), TL_E_SHAPE);
    FAILS_WITH(tl_concat(ctx, 0, parts, 0, &t), TL_E_INVALID_ARGUMENT);
    float small[2];
    FAILS_WITH(tl_tensor_read(ctx, a, small, sizeof small), TL_E_INVALID_ARGUMENT);
    tl_tensor_info tiny = {0};
    FAILS_WITH(tl_tensor_info_get(ctx, a, &tiny), TL_E_INVALID_ARGUMENT);
    cr_assert_eq(t.bits, 31);
}

Test(handles, status_strings_and_versions) {
    cr_assert_str_eq(tl_status_string(TL_E_STORAGE_CLOSED), "TL_E_STORAGE_CLOSED");
    cr_assert_str_eq(tl_status_string(TL_OK), "TL_OK");
    cr_assert_str_eq(tl_status_string((tl_status)-999), "TL_E_UNKNOWN");
    cr_assert_eq(tl_abi_version(), TL_ABI_VERSION);
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", TL_VERSION_MAJOR, TL_VERSION_MINOR, TL_VERSION_PATCH);
    cr_assert_str_eq(tl_version_string(), want);
    cr_assert_not_null(tl_last_error());
}

/* A closed scope's handle never names the scope opened after it at the same depth: each call
 * refuses it, names the closed scope, and leaves the new scope and its tensors alone. */
Test(handles, closed_scope_handle_never_names_a_later_scope) {
    tl_scope a, b, cur;
    OK(tl_scope_open(ctx, "a", 0, &a));
    OK(tl_scope_close(ctx, a));
    OK(tl_scope_open(ctx, "b", 0, &b));
    cr_assert_eq(a.bits >> 40, b.bits >> 40, "the same depth");
    tl_tensor t;
    OK(tl_tensor_ones(ctx, TL_F32, 1, shape4, &t));
    FAILS_WITH(tl_scope_reset(ctx, a), TL_E_INVALID_HANDLE);
    cr_assert(strstr(tl_last_error(), "scope 'a'") && strstr(tl_last_error(), "closed"), "%s", tl_last_error());
    FAILS_WITH(tl_scope_close(ctx, a), TL_E_INVALID_HANDLE);
    tl_scope_stats st = TL_SCOPE_STATS_INIT;
    FAILS_WITH(tl_scope_stats_get(ctx, a, &st), TL_E_INVALID_HANDLE);
    char *json = NULL;
    FAILS_WITH(tl_scope_stats_json(ctx, a, &json), TL_E_INVALID_HANDLE);
    cr_assert_null(json);
    tl_tensor kept = {7};
    FAILS_WITH(tl_tensor_retain(ctx, t, a, &kept), TL_E_INVALID_HANDLE);
    cr_assert_eq(kept.bits, 7, "the output is untouched");
    cr_assert_null(tl_scope_name(ctx, a));
    cr_assert_str_eq(tl_scope_name(ctx, b), "b");
    OK(tl_scope_current(ctx, &cur));
    cr_assert_eq(cur.bits, b.bits, "b is still open and current");
    float v[4];
    OK(tl_tensor_read(ctx, t, v, sizeof v)); /* b's tensor lives */
    cr_assert_eq(v[3], 1.0f);
    OK(tl_scope_close(ctx, b));
    /* Reopened many times at that depth: a's handle stays refused, past the kept history too. */
    for (int i = 0; i < 20; ++i) {
        tl_scope again;
        OK(tl_scope_open(ctx, "again", 0, &again));
        FAILS_WITH(tl_scope_reset(ctx, a), TL_E_INVALID_HANDLE);
        FAILS_WITH(tl_scope_reset(ctx, b), TL_E_INVALID_HANDLE);
        OK(tl_scope_close(ctx, again));
    }
}

/* Scope handles of another context (open, closed, destroyed), forged bits and 0 are refused. */
Test(handles, foreign_and_forged_scope_handles_are_refused) {
    tl_context *other;
    OK(tl_context_create(NULL, &other));
    tl_scope theirs, mine;
    OK(tl_scope_open(other, "theirs", 0, &theirs));
    OK(tl_scope_open(ctx, "mine", 0, &mine));
    FAILS_WITH(tl_scope_reset(ctx, theirs), TL_E_INVALID_HANDLE);
    cr_assert(strstr(tl_last_error(), "not issued by this context"), "%s", tl_last_error());
    FAILS_WITH(tl_scope_close(other, mine), TL_E_INVALID_HANDLE);
    cr_assert_null(tl_scope_name(ctx, theirs));
    cr_assert_str_eq(tl_scope_name(other, theirs), "theirs");
    tl_context_destroy(other); /* its open scope dies with it */
    FAILS_WITH(tl_scope_reset(ctx, theirs), TL_E_INVALID_HANDLE);
    const tl_scope forged[] = {
        {1}, {UINT64_MAX}, {mine.bits + 1}, {mine.bits ^ (UINT64_C(3) << 40)}, {(uint64_t)31 << 40}};
    for (size_t i = 0; i < sizeof forged / sizeof forged[0]; ++i) {
        FAILS_WITH(tl_scope_reset(ctx, forged[i]), TL_E_INVALID_HANDLE);
        cr_assert_null(tl_scope_name(ctx, forged[i]));
    }
    FAILS_WITH(tl_scope_reset(ctx, TL_NO_SCOPE), TL_E_INVALID_ARGUMENT);
    cr_assert_null(tl_scope_name(ctx, TL_NO_SCOPE));
    cr_assert_null(tl_scope_name(NULL, mine));
    OK(tl_scope_reset(ctx, mine)); /* the real one still works */
    OK(tl_scope_close(ctx, mine));
}
