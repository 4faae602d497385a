/* safetensors and JSON: files from an independent writer load to the right values, save->load
 * round-trips bit-exactly, every malformed file is refused with a message, and the JSON
 * reports parse (with cJSON, here in the test) to the scope's real figures. */
#include <cjson/cJSON.h>
#include <locale.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"
#include "raw_safetensors.h"

CONTEXT_AND_DIR_SUITE(io);

static const char *in_dir(const char *name) {
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return path;
}

/* A file of: the 8-byte length `declared` (or the real one when -1), the header text, `data` bytes of 0x11. */
static const char *write_raw(const char *name, const char *header, long long declared, size_t data) {
    const char *path = in_dir(name);
    const uint64_t n = declared < 0 ? (uint64_t)strlen(header) : (uint64_t)declared;
    cr_assert_eq(write_safetensors_declaring(path, n, header, strlen(header), NULL, data), 0);
    return path;
}

static void expect_parse_error(const char *path, tl_status code, const char *words) {
    tl_safetensors_file *f = (tl_safetensors_file *)0x1;
    FAILS_WITH(tl_safetensors_open(ctx, path, &f), code);
    cr_assert_eq(f, (tl_safetensors_file *)0x1, "output untouched");
    cr_assert(strstr(tl_last_error(), words) != NULL, "message '%s' lacks '%s'", tl_last_error(), words);
}

Test(io, independent_writer_files_load_to_the_written_values) {
#ifdef _WIN32
    cr_skip_test("the independent writer is the build machine's Python, which a Windows program cannot start");
#endif
    char cmd[600];
    /* Debian's python3, which scripts/setup.sh gives python3-numpy (a pyenv shim first on PATH may lack it). */
    const char *python = "/usr/bin/python3";
    snprintf(cmd, sizeof cmd, "%s %s/tests/io/write_safetensors.py %s >/dev/null", python, TL_SOURCE_DIR, dir);
    cr_assert_eq(system(cmd), 0, "the python writer failed");
    tl_safetensors_file *f;
    OK(tl_safetensors_open(ctx, in_dir("independent.safetensors"), &f));
    cr_assert_eq(tl_safetensors_count(f), 6);
    cr_assert_str_eq(tl_safetensors_name(f, 0), "empty"); /* file (header) order */
    cr_assert_null(tl_safetensors_name(f, 6));
    tl_tensor t;
    tl_tensor_info info = TL_TENSOR_INFO_INIT;
    float f32[12];
    OK(tl_safetensors_get(ctx, f, "w_f32", &t));
    OK(tl_tensor_info_get(ctx, t, &info));
    cr_assert(info.dtype == TL_F32 && info.ndim == 2 && info.shape[0] == 3 && info.shape[1] == 4);
    read_f32(ctx, t, f32, 12);
    for (int i = 0; i < 12; ++i) cr_assert_eq(f32[i], (float)(i * 0.25 - 1.5));
    double f64[6];
    OK(tl_safetensors_get(ctx, f, "w_f64", &t));
    OK(tl_tensor_read(ctx, t, f64, sizeof f64));
    for (int i = 0; i < 6; ++i) cr_assert_eq(f64[i], i / 3.0);
    int32_t ids[5];
    OK(tl_safetensors_get(ctx, f, "ids", &t));
    OK(tl_tensor_read(ctx, t, ids, sizeof ids));
    for (int i = 0; i < 5; ++i) cr_assert_eq(ids[i], i * 7 - 10);
    OK(tl_safetensors_get(ctx, f, "h_f16", &t)); /* F16 and BF16 arrive as themselves */
    OK(tl_tensor_info_get(ctx, t, &info));
    cr_assert_eq(info.dtype, TL_F16);
    OK(tl_convert(ctx, t, TL_F32, &t));
    read_f32(ctx, t, f32, 6);
    for (int i = 0; i < 6; ++i) cr_assert_eq(f32[i], (float)(i * 0.5 - 1.0));
    OK(tl_safetensors_get(ctx, f, "b_bf16", &t));
    OK(tl_tensor_info_get(ctx, t, &info));
    cr_assert_eq(info.dtype, TL_BF16);
    OK(tl_convert(ctx, t, TL_F32, &t));
    read_f32(ctx, t, f32, 4);
    for (int i = 0; i < 4; ++i) cr_assert_eq(f32[i], (float)((i - 2) * 1.5));
    tl_scope s;
    OK(tl_scope_open(ctx, "loading", 0, &s));
    OK(tl_safetensors_get(ctx, f, "empty", &t)); /* into the current target */
    OK(tl_tensor_info_get(ctx, t, &info));
    cr_assert_str_eq(info.storage, "loading");
    cr_assert(info.shape[0] == 0 && info.shape[1] == 3);
    FAILS_WITH(tl_safetensors_get(ctx, f, "missing", &t), TL_E_NOT_FOUND);
    OK(tl_scope_close(ctx, s));
    tl_safetensors_close(f);

    /* numpy-made arrays: expected values via the JSON python wrote (no numpy: the writer failed above). */
    cr_assert_eq(access(in_dir("numpy.safetensors"), R_OK), 0, "the writer made no numpy fixture");
    {
        FILE *jf = fopen(in_dir("numpy_expected.json"), "r");
        char json[4096];
        size_t n = fread(json, 1, sizeof json - 1, jf);
        fclose(jf);
        json[n] = 0;
        tl_tensor want, got;
        OK(tl_tensor_from_json(ctx, json, &want));
        OK(tl_safetensors_open(ctx, in_dir("numpy.safetensors"), &f));
        OK(tl_safetensors_get(ctx, f, "arr", &got));
        float a[12], b[12];
        read_f32(ctx, want, a, 12);
        read_f32(ctx, got, b, 12);
        cr_assert(memcmp(a, b, sizeof a) == 0, "numpy array differs");
        tl_safetensors_close(f);
    }
}

Test(io, save_then_load_round_trips_bit_exactly) {
    float weird[6] = {1.5f, -0.0f, NAN, INFINITY, -INFINITY, 1e-42f}; /* a subnormal too */
    int64_t s23[2] = {2, 3}, s0[1] = {0};
    double d[3] = {1.0 / 3, -2e300, 5e-324};
    int32_t iv[4] = {INT32_MIN, -1, 0, INT32_MAX};
    int64_t s3[1] = {3}, s4[1] = {4};
    tl_tensor t[6];
    t[0] = make_f32(ctx, 2, s23, weird);
    OK(tl_tensor_from_data(ctx, TL_F64, 1, s3, d, sizeof d, &t[1]));
    OK(tl_tensor_from_data(ctx, TL_I32, 1, s4, iv, sizeof iv, &t[2]));
    OK(tl_transpose(ctx, t[0], 0, 1, &t[3])); /* a strided view: stored contiguous */
    float scalar = 42;
    t[4] = make_f32(ctx, 0, NULL, &scalar);
    OK(tl_tensor_zeros(ctx, TL_F32, 1, s0, &t[5]));
    const char *names[6] = {"weird", "doubles", "ints", "transposed", "scalar", "empty"};
    OK(tl_safetensors_save(ctx, in_dir("round.safetensors"), 6, names, t));
    tl_safetensors_file *f;
    OK(tl_safetensors_open(ctx, in_dir("round.safetensors"), &f));
    cr_assert_eq(tl_safetensors_count(f), 6);
    for (int i = 0; i < 6; ++i) {
        tl_tensor back;
        OK(tl_safetensors_get(ctx, f, names[i], &back));
        tl_tensor_info a = TL_TENSOR_INFO_INIT, b = TL_TENSOR_INFO_INIT;
        OK(tl_tensor_info_get(ctx, t[i], &a));
        OK(tl_tensor_info_get(ctx, back, &b));
        cr_assert_eq(a.dtype, b.dtype);
        cr_assert_eq(a.ndim, b.ndim);
        for (int k = 0; k < a.ndim; ++k) cr_assert_eq(a.shape[k], b.shape[k]);
        unsigned char x[64], y[64];
        memset(x, 1, sizeof x);
        memset(y, 2, sizeof y);
        OK(tl_tensor_read(ctx, t[i], x, sizeof x));
        OK(tl_tensor_read(ctx, back, y, sizeof y));
        size_t bytes = tl_dtype_size(a.dtype);
        for (int k = 0; k < a.ndim; ++k) bytes *= (size_t)a.shape[k];
        cr_assert(memcmp(x, y, bytes) == 0, "'%s' differs after the round trip", names[i]);
    }
    tl_safetensors_close(f);
    /* The transposed view was stored in logical order. */
    float tr[6];
    OK(tl_safetensors_open(ctx, in_dir("round.safetensors"), &f));
    tl_tensor back;
    OK(tl_safetensors_get(ctx, f, "transposed", &back));
    read_f32(ctx, back, tr, 6);
    cr_assert(tr[0] == 1.5f && tr[1] == INFINITY && signbit(tr[2]) && tr[3] == -INFINITY);
    tl_safetensors_close(f);
}

Test(io, save_refuses_bad_input_and_leaves_no_file) {
    float v[3] = {1, 2, 3};
    int64_t s3[1] = {3};
    tl_tensor t[2] = {make_f32(ctx, 1, s3, v), make_f32(ctx, 1, s3, v)};
    const char *dup[2] = {"a", "a"}, *meta[1] = {"__metadata__"}, *ok[2] = {"a", "b"};
    FAILS_WITH(tl_safetensors_save(ctx, in_dir("bad.safetensors"), 2, dup, t), TL_E_INVALID_ARGUMENT);
    FAILS_WITH(tl_safetensors_save(ctx, in_dir("bad.safetensors"), 1, meta, t), TL_E_INVALID_ARGUMENT);
    FAILS_WITH(tl_safetensors_save(ctx, "/nonexistent-dir/x.safetensors", 2, ok, t), TL_E_IO);
    const char *empty[2] = {"a", ""}, *null_name[2] = {NULL, "b"};
    REFUSED_WITH(tl_safetensors_save(ctx, in_dir("bad.safetensors"), 2, empty, t), TL_E_INVALID_ARGUMENT, "name 1");
    REFUSED_WITH(tl_safetensors_save(ctx, in_dir("bad.safetensors"), 2, null_name, t), TL_E_INVALID_ARGUMENT, "name 0");
    /* A block dtype has no safetensors dtype: refused by name, not written as bytes of another. */
    const int64_t row[2] = {1, 32};
    tl_tensor f, q[2];
    OK(tl_tensor_ones(ctx, TL_F32, 2, row, &f));
    OK(tl_convert(ctx, f, TL_Q8_0, &q[1]));
    q[0] = t[0];
    REFUSED_WITH(tl_safetensors_save(ctx, in_dir("bad.safetensors"), 2, ok, q), TL_E_DTYPE, "tensor 'b' is q8_0, which safetensors has no dtype for");
    tl_scope s;
    OK(tl_scope_open(ctx, "gone", 0, &s));
    tl_tensor stale[2] = {t[0], make_f32(ctx, 1, s3, v)};
    OK(tl_scope_reset(ctx, s));
    FAILS_WITH(tl_safetensors_save(ctx, in_dir("bad.safetensors"), 2, ok, stale), TL_E_STORAGE_CLOSED);
    OK(tl_scope_close(ctx, s));
    cr_assert_neq(access(in_dir("bad.safetensors"), F_OK), 0, "no file was left behind");
    cr_assert_neq(access(in_dir("bad.safetensors.tmp-tensorlife"), F_OK), 0);
}

/* Where a save goes: a path naming a folder and one too long for its temporary name beside it are
 * refused saying so; a bare file name goes to the working folder. */
Test(io, a_save_target_is_a_file_name_that_fits) {
    float v[2] = {1, 2};
    int64_t s2[1] = {2};
    tl_tensor t = make_f32(ctx, 1, s2, v);
    const char *names[1] = {"a"};
    REFUSED_WITH(tl_safetensors_save(ctx, in_dir(""), 1, names, &t), TL_E_IO, "names a folder, not a file");
    static char long_path[5000];
    memset(long_path, 'x', sizeof long_path - 1);
    memcpy(long_path, in_dir(""), strlen(in_dir("")));
    REFUSED_WITH(tl_safetensors_save(ctx, long_path, 1, names, &t), TL_E_IO, "path too long (4999 bytes)");
    char here[4096];
    cr_assert_not_null(getcwd(here, sizeof here));
    cr_assert_eq(chdir(in_dir("")), 0);
    const tl_status saved = tl_safetensors_save(ctx, "bare.safetensors", 1, names, &t);
    cr_assert_eq(chdir(here), 0);
    OK(saved);
    tl_safetensors_file *f;
    OK(tl_safetensors_open(ctx, in_dir("bare.safetensors"), &f));
    tl_tensor back;
    OK(tl_safetensors_get(ctx, f, "a", &back));
    float got[2];
    read_f32(ctx, back, got, 2);
    cr_assert(got[0] == 1 && got[1] == 2);
    tl_safetensors_close(f);
}

/* Whether s is whole UTF-8 sequences (leads and their continuation bytes, no more, no less). */
static int whole_utf8(const char *s) {
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        const int extra = *p < 0x80 ? 0 : (*p & 0xE0) == 0xC0 ? 1 : (*p & 0xF0) == 0xE0 ? 2 : (*p & 0xF8) == 0xF0 ? 3 : -1;
        if (extra < 0) return 0;
        ++p;
        for (int i = 0; i < extra; ++i, ++p)
            if ((*p & 0xC0) != 0x80) return 0;
    }
    return 1;
}

/* A message longer than the last error's 511 bytes keeps its start and its end: a missing file
 * whose path is hundreds of bytes of two-byte characters (folders that do not exist, each name
 * within a file system's 255 bytes) is still named by its start and refused with its reason, each
 * part cut at a whole character.  An ASCII letter before and after the run, or not, puts each cut
 * at the first or the second byte of a character, wherever the library cuts. */
Test(io, a_long_path_keeps_the_reason_in_the_message) {
    for (int before = 0; before < 2; ++before)
        for (int after = 0; after < 2; ++after) {
            char path[1200] = "";
            strcpy(path, in_dir(before ? "missing-" : "missing"));
            for (int folder = 0; folder < 4; ++folder) {
                strcat(path, "/");
                for (int i = 0; i < 100; ++i) strcat(path, "\xc3\xa9"); /* U+00E9 */
            }
            strcat(path, after ? "x.safetensors" : ".safetensors");
            tl_safetensors_file *f = NULL;
            FAILS_WITH(tl_safetensors_open(ctx, path, &f), TL_E_IO);
            const char *message = tl_last_error(), *reason = strstr(message, ".safetensors: cannot open: ");
            cr_assert_leq(strlen(message), 511, "%zu bytes", strlen(message));
            cr_assert_eq(strncmp(message, path, 100), 0, "starts with the path: %s", message);
            cr_assert(strstr(message, "..."), "%s", message);
            cr_assert(reason && strlen(reason) > strlen(".safetensors: cannot open: "), "ends with the reason: %s", message);
            cr_assert(whole_utf8(message), "whole characters (%d, %d): %s", before, after, message);
        }
    /* A path past the formatter's 8 KiB (the message then ends within the path, cut there), and a
     * relative one whose first 200 bytes are all continuation bytes (not UTF-8: a POSIX name may
     * be any bytes), whose head is then cut to nothing. */
    static char huge[9000];
    memset(huge, 'x', sizeof huge - 1);
    for (size_t i = 200; i < sizeof huge - 1; i += 201) huge[i] = '/';
    tl_safetensors_file *f = NULL;
    FAILS_WITH(tl_safetensors_open(ctx, huge, &f), TL_E_IO);
    cr_assert_leq(strlen(tl_last_error()), 511);
    cr_assert_eq(strncmp(tl_last_error(), huge, 100), 0, "%s", tl_last_error());
    char raw[700];
    memset(raw, 0x80, sizeof raw - 1), raw[sizeof raw - 1] = 0;
    for (size_t i = 200; i < sizeof raw - 1; i += 201) raw[i] = '/';
    FAILS_WITH(tl_safetensors_open(ctx, raw, &f), TL_E_IO);
    cr_assert_leq(strlen(tl_last_error()), 511);
    cr_assert_eq(strncmp(tl_last_error(), "...", 3), 0, "%s", tl_last_error());
    /* Past 8 KiB of continuation bytes the message is those bytes alone, and both cuts find no
     * character: what is left is the "..." between them. */
    memset(huge, 0x80, sizeof huge - 1);
    FAILS_WITH(tl_safetensors_open(ctx, huge, &f), TL_E_IO);
    cr_assert_str_eq(tl_last_error(), "...");
}

Test(io, malformed_files_are_refused_with_the_problem_named) {
    expect_parse_error(in_dir("missing.safetensors"), TL_E_IO, "cannot open");
    FILE *f = fopen(in_dir("short"), "wb");
    fwrite("abc", 1, 3, f);
    fclose(f);
    expect_parse_error(in_dir("short"), TL_E_PARSE, "truncated");
    expect_parse_error(write_raw("past_end", "{}", 1000, 0), TL_E_PARSE, "past the end");
    expect_parse_error(write_raw("huge", "{}", 200LL * 1024 * 1024, 0), TL_E_PARSE, "limit");
    expect_parse_error(write_raw("not_json", "{\"a\": ", -1, 0), TL_E_PARSE, "not valid JSON");
    expect_parse_error(write_raw("not_object", "[1,2]", -1, 0), TL_E_PARSE, "not a JSON object");
    expect_parse_error(write_raw("range", "{\"t\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", -1, 8),
                       TL_E_PARSE, "outside");
    expect_parse_error(write_raw("overlap",
                                 "{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]},"
                                 "\"b\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[8,24]}}",
                                 -1, 24),
                       TL_E_PARSE, "overlap");
    expect_parse_error(write_raw("dtype", "{\"t\":{\"dtype\":\"I64\",\"shape\":[2],\"data_offsets\":[0,16]}}", -1, 16),
                       TL_E_PARSE, "'I64'");
    expect_parse_error(
        write_raw("mismatch", "{\"t\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,16]}}", -1, 16), TL_E_PARSE,
        "do not match");
    expect_parse_error(
        write_raw("overflow", "{\"t\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,4],\"data_offsets\":[0,16]}}",
                  -1, 16),
        TL_E_PARSE, "do not match");
    expect_parse_error(write_raw("dup",
                                 "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                                 "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
                                 -1, 8),
                       TL_E_PARSE, "twice");
    expect_parse_error(
        write_raw("negative", "{\"t\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", -1, 4), TL_E_PARSE,
        "dim 0");
    expect_parse_error(
        write_raw("fraction", "{\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0.5,4]}}", -1, 4), TL_E_PARSE,
        "data_offsets");
    expect_parse_error(
        write_raw("nine", "{\"t\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,4]}}", -1, 4),
        TL_E_PARSE, "9 dims");
    expect_parse_error(write_raw("entry", "{\"t\":5}", -1, 0), TL_E_PARSE, "not an object");
    /* A well-formed one, to show the helper itself makes loadable files. */
    tl_safetensors_file *ok;
    OK(tl_safetensors_open(
        ctx, write_raw("fine", "{\"t\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", -1, 8), &ok));
    tl_safetensors_close(ok);
}

static cJSON *parse_and_free(char *s) {
    cJSON *j = cJSON_Parse(s);
    cr_assert_not_null(j, "not JSON: %s", s);
    tl_string_free(s);
    return j;
}

static double number(const cJSON *o, const char *key) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);
    cr_assert(cJSON_IsNumber(j), "no number '%s'", key);
    return j->valuedouble;
}

Test(io, json_reports_carry_the_real_figures) {
    tl_scope outer, inner;
    OK(tl_scope_open(ctx, "outer", 4096, &outer));
    OK(tl_scope_open(ctx, "inner", 0, &inner));
    int64_t s[1] = {100};
    tl_tensor t;
    OK(tl_tensor_zeros(ctx, TL_F32, 1, s, &t));
    OK(tl_scope_reset(ctx, inner));
    OK(tl_tensor_zeros(ctx, TL_F32, 1, s, &t));
    char *text = NULL;
    OK(tl_scope_stats_json(ctx, inner, &text));
    cJSON *j = parse_and_free(text);
    tl_scope_stats st = stats_of(inner);
    cr_assert_str_eq(cJSON_GetObjectItem(j, "name")->valuestring, "inner");
    cr_assert_eq(number(j, "generation"), (double)st.generation);
    cr_assert_eq(number(j, "used_bytes"), (double)st.used_bytes);
    cr_assert_eq(number(j, "slab_bytes"), (double)st.slab_bytes);
    cr_assert_eq(number(j, "live_tensors"), 1);
    cJSON_Delete(j);
    OK(tl_context_report_json(ctx, &text));
    j = parse_and_free(text);
    const cJSON *scopes = cJSON_GetObjectItem(j, "scopes");
    cr_assert_eq(cJSON_GetArraySize(scopes), 2);
    cr_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(scopes, 0), "name")->valuestring, "outer");
    cr_assert_eq(number(cJSON_GetObjectItem(j, "ambient"), "live_tensors"), 0);
    cJSON_Delete(j);
    OK(tl_scope_close(ctx, inner));
    OK(tl_scope_close(ctx, outer));
    OK(tl_tensor_zeros(ctx, TL_F64, 1, s, &t));
    OK(tl_context_report_json(ctx, &text));
    j = parse_and_free(text);
    cr_assert_eq(number(cJSON_GetObjectItem(j, "ambient"), "live_tensors"), 1);
    cr_assert_eq(number(cJSON_GetObjectItem(j, "ambient"), "bytes"), 800);
    cJSON_Delete(j);
    FAILS_WITH(tl_scope_stats_json(ctx, inner, &text), TL_E_INVALID_HANDLE); /* closed */
}

Test(io, tensor_json_round_trips_and_refuses_bad_json) {
    float v[6] = {0.1f, -0.0f, NAN, INFINITY, -INFINITY, 3.4028235e38f};
    int64_t s[2] = {3, 2};
    tl_tensor t = make_f32(ctx, 2, s, v), tt, back;
    OK(tl_transpose(ctx, t, 0, 1, &tt));
    char *text;
    OK(tl_tensor_to_json(ctx, tt, &text));
    cr_assert(strstr(text, "\"shape\":[2,3]") != NULL, "%s", text);
    cr_assert(strstr(text, "\"nan\"") != NULL && strstr(text, "\"-inf\"") != NULL, "%s", text);
    OK(tl_tensor_from_json(ctx, text, &back));
    tl_string_free(text);
    float a[6], b[6];
    read_f32(ctx, tt, a, 6);
    read_f32(ctx, back, b, 6);
    cr_assert(memcmp(a, b, sizeof a) == 0, "f32 values changed in the JSON round trip");
    int32_t iv[3] = {INT32_MIN, 0, INT32_MAX}, ib[3];
    int64_t s3[1] = {3};
    tl_tensor ti;
    OK(tl_tensor_from_data(ctx, TL_I32, 1, s3, iv, sizeof iv, &ti));
    OK(tl_tensor_to_json(ctx, ti, &text));
    OK(tl_tensor_from_json(ctx, text, &back));
    tl_string_free(text);
    OK(tl_tensor_read(ctx, back, ib, sizeof ib));
    cr_assert(memcmp(iv, ib, sizeof iv) == 0);
    tl_tensor out = {9};
    FAILS_WITH(tl_tensor_from_json(ctx, "{\"dtype\":\"f32\",\"shape\":[2],\"data\":[1]}", &out), TL_E_PARSE);
    FAILS_WITH(tl_tensor_from_json(ctx, "{\"dtype\":\"f16\",\"shape\":[1],\"data\":[1]}", &out), TL_E_PARSE);
    FAILS_WITH(tl_tensor_from_json(ctx, "{\"dtype\":\"i32\",\"shape\":[1],\"data\":[1.5]}", &out), TL_E_PARSE);
    FAILS_WITH(tl_tensor_from_json(ctx, "{\"dtype\":\"f32\",\"shape\":[1],\"data\":[\"x\"]}", &out), TL_E_PARSE);
    FAILS_WITH(tl_tensor_from_json(ctx, "{\"dtype\":\"f32\",\"shape\":[2],\"data\":[true,null]}", &out), TL_E_PARSE);
    FAILS_WITH(tl_tensor_from_json(ctx, "{\"dtype\":\"f32\",\"shape\":[-1],\"data\":[]}", &out), TL_E_PARSE);
    FAILS_WITH(tl_tensor_from_json(ctx, "not json", &out), TL_E_PARSE);
    FAILS_WITH(tl_tensor_from_json(ctx, NULL, &out), TL_E_INVALID_ARGUMENT);
    /* Each malformed document refused naming what is wrong. */
    static const struct {
        const char *json, *message;
    } bad[] = {
        {"[1, 2]", "not a JSON object"},
        {"{\"shape\":[1],\"data\":[1]}", "no \"dtype\" string"},
        {"{\"dtype\":5,\"shape\":[1],\"data\":[1]}", "no \"dtype\" string"},
        {"{\"dtype\":\"q4_0\",\"shape\":[32],\"data\":[]}", "dtype 'q4_0' is not f32, f64 or i32"},
        {"{\"dtype\":\"f128\",\"shape\":[1],\"data\":[1]}", "dtype 'f128' is not f32, f64 or i32"},
        {"{\"dtype\":\"f32\",\"shape\":3,\"data\":[1]}", "\"shape\" must be an array of at most 8 dims"},
        {"{\"dtype\":\"f32\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data\":[1]}", "at most 8 dims"},
        {"{\"dtype\":\"f32\",\"shape\":[1.5],\"data\":[1]}", "dim 0 is not a non-negative integer"},
        {"{\"dtype\":\"f32\",\"shape\":[1],\"data\":1}", "\"data\" must hold 1 values"},
        {"{\"dtype\":\"f32\",\"shape\":[1],\"data\":[1]} x", "text after the object"},
        {"{\"dtype\":\"f\\u0000\",\"shape\":[1],\"data\":[1]}", "a string holds a NUL character"},
        {"{\"dtype\":\"i32\",\"shape\":[1],\"data\":[3000000000]}", "3e+09 is no i32 value"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        FAILS_WITH(tl_tensor_from_json(ctx, bad[i].json, &out), TL_E_PARSE);
        cr_assert(strstr(tl_last_error(), bad[i].message), "%s: %s", bad[i].json, tl_last_error());
    }
    FAILS_WITH(tl_tensor_from_json(ctx, "{\"dtype\":\"f32\",\"shape\":[4294967296,4294967296,4294967296],\"data\":[]}", &out),
               TL_E_OUT_OF_MEMORY); /* tl_base.h: a byte count that overflows */
    cr_assert_eq(out.bits, 9);
    tl_string_free(NULL);
}

Test(io, strings_and_files_come_from_the_allocator_and_outlive_the_context) {
    counting_allocator counter = {0};
    tl_allocator alloc = counting_allocator_of(&counter);
    tl_context *c;
    OK(tl_context_create(&alloc, &c));
    float v[2] = {1, 2};
    int64_t s[1] = {2};
    tl_tensor t = make_f32(c, 1, s, v);
    const char *names[1] = {"v"};
    OK(tl_safetensors_save(c, in_dir("alloc.safetensors"), 1, names, &t));
    char *text;
    OK(tl_tensor_to_json(c, t, &text));
    tl_safetensors_file *f;
    OK(tl_safetensors_open(c, in_dir("alloc.safetensors"), &f));
    tl_context_destroy(c);
    cr_assert_gt(counter.live_bytes, 0, "the string and the file's index are still held");
    cr_assert_str_eq(tl_safetensors_name(f, 0), "v");
    tl_string_free(text);
    tl_safetensors_close(f);
    cr_assert_eq(counter.live_bytes, 0);
    cr_assert_eq(counter.allocs, counter.frees);
}

/* A locale with a decimal comma for LC_NUMERIC (an application's choice, which the library must
 * not follow in JSON): one the system has, or de_DE made here with localedef into dir.  1 when
 * set (the previous one copied into was), else 0. */
static int set_comma_locale(char *was, size_t n) {
    snprintf(was, n, "%s", setlocale(LC_NUMERIC, NULL));
    const char *names[] = {"de_DE.UTF-8", "de_DE.utf8", "German_Germany.1252", "German"};
    for (int attempt = 0; attempt < 2; ++attempt) {
        for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i)
            if (setlocale(LC_NUMERIC, names[i]) && localeconv()->decimal_point[0] == ',') return 1;
#ifndef _WIN32
        char cmd[700];
        snprintf(cmd, sizeof cmd, "localedef -i de_DE -f UTF-8 '%s/de_DE.UTF-8' >/dev/null 2>&1", dir);
        if (attempt == 0 && system(cmd) == 0) setenv("LOCPATH", dir, 1);
#endif
    }
    setlocale(LC_NUMERIC, was);
    return 0;
}

Test(io, json_numbers_keep_their_point_under_a_decimal_comma_locale) {
    char was[256];
    if (!set_comma_locale(was, sizeof was)) cr_skip_test("no locale with a decimal comma here, nor localedef to make one");
    float v[4] = {1.5f, -0.25f, 3.4028235e38f, 1e-7f}, back_v[4];
    double d[2] = {0.1, -2.5e-300}, back_d[2];
    int64_t s4[1] = {4}, s2[1] = {2};
    tl_tensor t = make_f32(ctx, 1, s4, v), td, back;
    OK(tl_tensor_from_data(ctx, TL_F64, 1, s2, d, sizeof d, &td));
    char *text;
    OK(tl_tensor_to_json(ctx, t, &text));
    const int f32_point = strstr(text, "1.5,-0.25,") != NULL && !strstr(text, "1,5");
    OK(tl_tensor_from_json(ctx, text, &back));
    tl_string_free(text);
    OK(tl_tensor_read(ctx, back, back_v, sizeof back_v));
    OK(tl_tensor_to_json(ctx, td, &text));
    const int f64_point = strstr(text, "[0.1,-2.5e-300]") != NULL;
    char f64_text[256];
    snprintf(f64_text, sizeof f64_text, "%s", text);
    OK(tl_tensor_from_json(ctx, text, &back));
    tl_string_free(text);
    OK(tl_tensor_read(ctx, back, back_d, sizeof back_d));
    OK(tl_tensor_from_json(ctx, "{\"dtype\":\"f64\",\"shape\":[2],\"data\":[0.1,-2.5e-300]}", &back));
    double typed[2];
    OK(tl_tensor_read(ctx, back, typed, sizeof typed));
    setlocale(LC_NUMERIC, was); /* before asserting: a failure must not leave the comma behind */
    cr_assert(f32_point, "f32 JSON printed with the locale's comma");
    cr_assert(f64_point, "f64 JSON: %s", f64_text);
    cr_assert(memcmp(v, back_v, sizeof v) == 0, "f32 values changed in the round trip");
    cr_assert(memcmp(d, back_d, sizeof d) == 0, "f64 values changed in the round trip");
    cr_assert(memcmp(d, typed, sizeof d) == 0, "JSON written by hand read under the comma locale");
}
