/* Every pointer an entry point of the model, text and file APIs reads or writes, given as NULL
 * one at a time with the others valid, and every struct of theirs with a wrong struct_size: each
 * call ends as TL_E_INVALID_ARGUMENT with a message, nothing written, and the objects still work
 * (the header's promise: misuse is a status, never a crash).  The tensor and scope calls get
 * theirs in test_handles and fuzz_api. */
#include <stdint.h>
#include <stdio.h>

#include "common.h"
#include "tiny_llama.h"

CONTEXT_AND_DIR_SUITE(arguments);

/* A failure whose message no call below makes: REFUSED sees the call's own message, not one
 * left by an earlier call. */
static char sentinel[256];
static void set_sentinel(void) {
    int64_t elements;
    size_t bytes;
    (void)tl_dtype_block((tl_dtype)-77, &elements, &bytes);
    snprintf(sentinel, sizeof sentinel, "%s", tl_last_error());
}

/* The call is refused as an invalid argument, with a message of its own. */
#define REFUSED(call)                                                                         \
  do {                                                                                        \
    set_sentinel();                                                                           \
    FAILS_WITH(call, TL_E_INVALID_ARGUMENT);                                                  \
    cr_assert(tl_last_error()[0] && strcmp(tl_last_error(), sentinel) != 0, "%s: no message", #call); \
  } while (0)

/* An open(ctx, path, &out) call refused with each of its three pointers NULL. */
#define OPEN_REFUSES_EACH_NULL(open, path, out) \
  do {                                          \
    REFUSED(open(NULL, path, out));             \
    REFUSED(open(ctx, NULL, out));              \
    REFUSED(open(ctx, path, NULL));             \
  } while (0)

typedef struct fixture {
    char path[512];
    tl_model *model;
    tl_session *session;
    tl_tokenizer *tokenizer;
    tl_gguf_file *gguf;
} fixture;

static fixture open_fixture(void) {
    fixture f;
    snprintf(f.path, sizeof f.path, "%s/model.gguf", dir);
    cr_assert_eq(write_tiny_llama(f.path, "llama", D), 0);
    OK(tl_model_open(ctx, f.path, &f.model));
    OK(tl_session_open(ctx, f.model, NULL, &f.session));
    f.tokenizer = tl_model_tokenizer(f.model);
    cr_assert(f.tokenizer);
    OK(tl_gguf_open(ctx, f.path, &f.gguf));
    return f;
}

static void close_fixture(fixture *f) {
    tl_gguf_close(f->gguf);
    tl_session_close(f->session);
    OK(tl_model_close(f->model));
}

Test(arguments, model_and_session_calls_refuse_each_null_pointer) {
    fixture f = open_fixture();
    tl_model *m = NULL;
    OPEN_REFUSES_EACH_NULL(tl_model_open, f.path, &m);
    const tl_model_options mo = TL_MODEL_OPTIONS_INIT;
    REFUSED(tl_model_open_with(ctx, f.path, &mo, NULL));
    static const unsigned char bytes[64];
    REFUSED(tl_model_open_memory(NULL, bytes, sizeof bytes, &m));
    REFUSED(tl_model_open_memory(ctx, NULL, sizeof bytes, &m));
    REFUSED(tl_model_open_memory(ctx, bytes, sizeof bytes, NULL));
    cr_assert_null(m, "a refused open wrote its output");
    tl_model_info info = TL_MODEL_INFO_INIT;
    REFUSED(tl_model_info_get(NULL, &info));
    REFUSED(tl_model_info_get(f.model, NULL));

    tl_session *s = NULL;
    REFUSED(tl_session_open(NULL, f.model, NULL, &s));
    REFUSED(tl_session_open(ctx, NULL, NULL, &s));
    REFUSED(tl_session_open(ctx, f.model, NULL, NULL));
    cr_assert_null(s);
    tl_scope_stats stats = {sizeof stats};
    REFUSED(tl_session_step_stats(NULL, &stats));
    REFUSED(tl_session_step_stats(f.session, NULL));
    const int32_t *history;
    size_t n;
    REFUSED(tl_session_history(NULL, &history, &n));
    REFUSED(tl_session_history(f.session, NULL, &n));
    REFUSED(tl_session_history(f.session, &history, NULL));
    const int32_t id = 1;
    REFUSED(tl_session_feed(NULL, &id, 1));
    REFUSED(tl_session_feed(f.session, NULL, 1));
    REFUSED(tl_session_feed(f.session, NULL, 0)); /* n >= 1, as the header says */
    REFUSED(tl_session_feed_text(NULL, "a", 1, 0));
    REFUSED(tl_session_feed_text(f.session, NULL, 1, 0));
    const float *logits;
    REFUSED(tl_session_logits(NULL, &logits, &n));
    REFUSED(tl_session_logits(f.session, NULL, &n));
    REFUSED(tl_session_logits(f.session, &logits, NULL));
    REFUSED(tl_session_rewind(NULL, 0));

    const tl_sampler greedy = TL_SAMPLER_GREEDY;
    int32_t token = -7;
    REFUSED(tl_session_sample(NULL, &greedy, &token));
    REFUSED(tl_session_sample(f.session, NULL, &token));
    REFUSED(tl_session_sample(f.session, &greedy, NULL));
    cr_assert_eq(token, -7, "a refused sample wrote its token");
    int done = 0;
    char text[256];
    size_t length = 0;
    REFUSED(tl_session_generate(NULL, &greedy, &token, &done, text, sizeof text, &length));
    REFUSED(tl_session_generate(f.session, NULL, &token, &done, text, sizeof text, &length));
    REFUSED(tl_session_generate(f.session, &greedy, NULL, &done, text, sizeof text, &length));
    REFUSED(tl_session_generate(f.session, &greedy, &token, NULL, text, sizeof text, &length));
    REFUSED(tl_session_generate(f.session, &greedy, &token, &done, NULL, sizeof text, &length));
    REFUSED(tl_session_generate(f.session, &greedy, &token, &done, text, sizeof text, NULL));
    cr_assert_eq(tl_session_position(f.session), 0, "a refused call fed a token");

    /* The NULL queries answer, and the session still works after all of it. */
    cr_assert_eq(tl_session_position(NULL), 0);
    cr_assert_eq(tl_session_context_length(NULL), 0);
    cr_assert_null(tl_model_tokenizer(NULL));
    OK(tl_model_close(NULL));
    tl_session_close(NULL);
    OK(tl_session_feed(f.session, &id, 1));
    OK(tl_session_generate(f.session, &greedy, &token, &done, text, sizeof text, &length));
    close_fixture(&f);
}

Test(arguments, structs_with_a_wrong_size_are_refused) {
    fixture f = open_fixture();
    tl_model *m = NULL;
    tl_model_options mo = TL_MODEL_OPTIONS_INIT;
    mo.struct_size = 3;
    REFUSED(tl_model_open_with(ctx, f.path, &mo, &m));
    cr_assert_null(m);
    tl_model_info info = TL_MODEL_INFO_INIT;
    info.struct_size = 0;
    REFUSED(tl_model_info_get(f.model, &info));
    tl_session_options so = TL_SESSION_OPTIONS_INIT;
    so.struct_size = 2;
    tl_session *s = NULL;
    REFUSED(tl_session_open(ctx, f.model, &so, &s));
    cr_assert_null(s);
    tl_scope_stats stats = {1};
    REFUSED(tl_session_step_stats(f.session, &stats));
    tl_sampler bad = TL_SAMPLER_GREEDY;
    bad.struct_size = 1;
    int32_t token;
    int done;
    char text[64];
    size_t length;
    REFUSED(tl_session_sample(f.session, &bad, &token));
    REFUSED(tl_session_generate(f.session, &bad, &token, &done, text, sizeof text, &length));
    close_fixture(&f);
}

Test(arguments, text_calls_refuse_each_null_pointer_and_bad_ids) {
    fixture f = open_fixture();
    tl_tokenizer *t = f.tokenizer;
    int32_t ids[16];
    size_t count = 99;
    REFUSED(tl_tokenize(NULL, "ab", 2, 0, ids, 16, &count));
    REFUSED(tl_tokenize(t, NULL, 2, 0, ids, 16, &count));
    REFUSED(tl_tokenize(t, "ab", 2, 0, NULL, 16, &count));
    REFUSED(tl_tokenize(t, "ab", 2, 0, ids, 16, NULL));
    REFUSED(tl_tokenize(t, "ab\xff", 3, 0, ids, 16, &count)); /* invalid UTF-8 */
    REFUSED(tl_tokenize(t, "ab ab ab ab", 11, 0, ids, 1, &count)); /* too little room */
    OK(tl_tokenize(t, NULL, 0, 0, NULL, 0, &count));
    cr_assert_eq(count, 0);

    const char *piece;
    size_t length;
    REFUSED(tl_token_piece(NULL, 1, 0, &piece, &length));
    REFUSED(tl_token_piece(t, 1, 0, NULL, &length));
    REFUSED(tl_token_piece(t, 1, 0, &piece, NULL));
    REFUSED(tl_token_piece(t, -1, 0, &piece, &length));
    REFUSED(tl_token_piece(t, tl_tokenizer_vocab_size(t), 0, &piece, &length));
    REFUSED(tl_token_text(NULL, 1, &piece, &length));
    REFUSED(tl_token_text(t, 1, NULL, &length));
    REFUSED(tl_token_text(t, 1, &piece, NULL));
    REFUSED(tl_token_text(t, -1, &piece, &length));
    OK(tl_token_text(t, 1, &piece, &length));

    const int32_t good[2] = {1, 2}, bad[2] = {1, 1 << 30};
    char text[64];
    REFUSED(tl_detokenize(NULL, good, 2, 0, text, sizeof text, &length));
    REFUSED(tl_detokenize(t, NULL, 2, 0, text, sizeof text, &length));
    REFUSED(tl_detokenize(t, good, 2, 0, NULL, sizeof text, &length));
    REFUSED(tl_detokenize(t, good, 2, 0, text, sizeof text, NULL));
    REFUSED(tl_detokenize(t, bad, 2, 0, text, sizeof text, &length));
    OK(tl_detokenize(t, good, 2, 0, NULL, 0, &length));

    /* The NULL tokenizer's queries answer as the header says. */
    cr_assert_eq(tl_tokenizer_vocab_size(NULL), 0);
    cr_assert_eq(tl_tokenizer_special(NULL, TL_TOKEN_BOS), -1);
    cr_assert_eq(tl_tokenizer_special(t, (tl_special_token)77), -1);
    cr_assert_eq(tl_tokenizer_is_end(NULL, 2), 0);
    tl_tokenizer_close(NULL);

    tl_text_stream stream = TL_TEXT_STREAM_INIT;
    REFUSED(tl_text_stream_push(NULL, "a", 1, text, sizeof text, &length));
    REFUSED(tl_text_stream_push(&stream, NULL, 1, text, sizeof text, &length));
    REFUSED(tl_text_stream_push(&stream, "a", 1, text, sizeof text, NULL));
    REFUSED(tl_text_stream_finish(&stream, text, sizeof text, NULL));
    REFUSED(tl_text_stream_finish(NULL, text, sizeof text, &length));

    tl_tokenizer *opened = NULL;
    REFUSED(tl_tokenizer_open(NULL, f.gguf, &opened));
    REFUSED(tl_tokenizer_open(ctx, NULL, &opened));
    REFUSED(tl_tokenizer_open(ctx, f.gguf, NULL));
    cr_assert_null(opened);
    close_fixture(&f);
}

Test(arguments, file_calls_refuse_each_null_pointer) {
    fixture f = open_fixture();
    tl_gguf_file *g = NULL;
    OPEN_REFUSES_EACH_NULL(tl_gguf_open, f.path, &g);
    static const unsigned char bytes[64];
    REFUSED(tl_gguf_open_memory(NULL, bytes, sizeof bytes, &g));
    REFUSED(tl_gguf_open_memory(ctx, NULL, sizeof bytes, &g));
    REFUSED(tl_gguf_open_memory(ctx, bytes, sizeof bytes, NULL));
    cr_assert_null(g);
    FAILS_WITH(tl_gguf_open_memory(ctx, NULL, 0, &g), TL_E_PARSE); /* no bytes: no GGUF, but no NULL to refuse */
    cr_assert(strstr(tl_last_error(), "GGUF") || strstr(tl_last_error(), "gguf"), "%s", tl_last_error());
    cr_assert_null(g);

    const char *name = tl_gguf_tensor_name(f.gguf, 0), *key = "general.architecture";
    cr_assert(name);
    tl_tensor t;
    REFUSED(tl_gguf_get(NULL, f.gguf, name, &t));
    REFUSED(tl_gguf_get(ctx, NULL, name, &t));
    REFUSED(tl_gguf_get(ctx, f.gguf, NULL, &t));
    REFUSED(tl_gguf_get(ctx, f.gguf, name, NULL));
    tl_gguf_type type, item;
    uint64_t count;
    REFUSED(tl_gguf_key_type(NULL, key, &type, &item, &count));
    REFUSED(tl_gguf_key_type(f.gguf, NULL, &type, &item, &count));
    REFUSED(tl_gguf_key_type(f.gguf, key, NULL, &item, &count));
    REFUSED(tl_gguf_key_type(f.gguf, key, &type, NULL, &count));
    REFUSED(tl_gguf_key_type(f.gguf, key, &type, &item, NULL));
    int64_t i64;
    double f64;
    const char *s;
    uint64_t length;
    REFUSED(tl_gguf_get_int(NULL, key, &i64));
    REFUSED(tl_gguf_get_int(f.gguf, NULL, &i64));
    REFUSED(tl_gguf_get_int(f.gguf, key, NULL));
    REFUSED(tl_gguf_get_float(NULL, key, &f64));
    REFUSED(tl_gguf_get_float(f.gguf, key, NULL));
    REFUSED(tl_gguf_get_string(NULL, key, &s, &length));
    REFUSED(tl_gguf_get_string(f.gguf, key, NULL, &length));
    REFUSED(tl_gguf_get_string(f.gguf, key, &s, NULL));
    const char *tokens = "tokenizer.ggml.tokens", *scores = "tokenizer.ggml.scores";
    REFUSED(tl_gguf_get_array_string(NULL, tokens, 0, &s, &length));
    REFUSED(tl_gguf_get_array_string(f.gguf, tokens, 0, NULL, &length));
    REFUSED(tl_gguf_get_array_string(f.gguf, tokens, 0, &s, NULL));
    REFUSED(tl_gguf_get_array_number(NULL, scores, 0, &i64, &f64));
    REFUSED(tl_gguf_get_array_number(f.gguf, scores, 0, NULL, NULL));
    OK(tl_gguf_get_array_number(f.gguf, scores, 0, NULL, &f64));
    cr_assert_eq(tl_gguf_tensor_count(NULL), 0);
    cr_assert_null(tl_gguf_tensor_name(NULL, 0));
    cr_assert_null(tl_gguf_tensor_name(f.gguf, tl_gguf_tensor_count(f.gguf)));
    cr_assert_eq(tl_gguf_key_count(NULL), 0);
    cr_assert_null(tl_gguf_key_name(NULL, 0));
    cr_assert_null(tl_gguf_key_name(f.gguf, tl_gguf_key_count(f.gguf)));

    char st[600];
    snprintf(st, sizeof st, "%s/x.safetensors", dir);
    const int64_t shape[1] = {3};
    tl_tensor x;
    OK(tl_tensor_full(ctx, TL_F32, 1, shape, 2.0f, &x));
    const char *names[1] = {"x"};
    REFUSED(tl_safetensors_save(NULL, st, 1, names, &x));
    REFUSED(tl_safetensors_save(ctx, NULL, 1, names, &x));
    REFUSED(tl_safetensors_save(ctx, st, 1, NULL, &x));
    REFUSED(tl_safetensors_save(ctx, st, 1, names, NULL));
    OK(tl_safetensors_save(ctx, st, 1, names, &x));
    tl_safetensors_file *file = NULL;
    OPEN_REFUSES_EACH_NULL(tl_safetensors_open, st, &file);
    OPEN_REFUSES_EACH_NULL(tl_safetensors_map, st, &file);
    cr_assert_null(file);
    OK(tl_safetensors_map(ctx, st, &file));
    REFUSED(tl_safetensors_get(NULL, file, "x", &t));
    REFUSED(tl_safetensors_get(ctx, NULL, "x", &t));
    REFUSED(tl_safetensors_get(ctx, file, NULL, &t));
    REFUSED(tl_safetensors_get(ctx, file, "x", NULL));
    cr_assert_eq(tl_safetensors_maps(NULL, "x"), 0);
    cr_assert_eq(tl_safetensors_maps(file, NULL), 0);
    cr_assert_eq(tl_safetensors_count(NULL), 0);
    cr_assert_null(tl_safetensors_name(NULL, 0));
    cr_assert_null(tl_safetensors_name(file, 1));
    tl_safetensors_close(file);
    tl_safetensors_close(NULL);

    char *json = NULL;
    REFUSED(tl_tensor_to_json(NULL, x, &json));
    REFUSED(tl_tensor_to_json(ctx, x, NULL));
    REFUSED(tl_tensor_from_json(NULL, "[1]", &t));
    REFUSED(tl_tensor_from_json(ctx, NULL, &t));
    REFUSED(tl_tensor_from_json(ctx, "[1]", NULL));
    REFUSED(tl_context_report_json(NULL, &json));
    REFUSED(tl_context_report_json(ctx, NULL));
    cr_assert_null(json);
    tl_string_free(NULL);
    close_fixture(&f);
}

Test(arguments, every_status_has_a_name_and_a_description) {
    const tl_status all[] = {
#define TL_TEST_STATUS_(name, value, description) TL_##name,
        TL_STATUS_MAP(TL_TEST_STATUS_)
#undef TL_TEST_STATUS_
    };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) {
        const char *name = tl_status_string(all[i]), *description = tl_status_description(all[i]);
        cr_assert(strncmp(name, "TL_", 3) == 0 && strcmp(name, "TL_E_UNKNOWN") != 0, "status %d: %s", all[i], name);
        cr_assert(description[0] && strcmp(description, "no tensorlife status") != 0, "status %d", all[i]);
        for (size_t j = 0; j < i; ++j) cr_assert(strcmp(name, tl_status_string(all[j])) != 0, "%s twice", name);
    }
    cr_assert_str_eq(tl_status_string((tl_status)12345), "TL_E_UNKNOWN");
    cr_assert_str_eq(tl_status_description((tl_status)-12345), "no tensorlife status");
    /* The enum's width marker is no status either. */
    cr_assert_str_eq(tl_status_string(TL_STATUS_FORCE_INT32_), "TL_E_UNKNOWN");
    cr_assert_str_eq(tl_status_description(TL_STATUS_FORCE_INT32_), "no tensorlife status");
    int64_t elements;
    size_t bytes;
    REFUSED(tl_dtype_block(TL_F32, NULL, &bytes));
    REFUSED(tl_dtype_block(TL_F32, &elements, NULL));
    REFUSED(tl_dtype_block((tl_dtype)999, &elements, &bytes));
}

/* Ops given shapes, dtypes and views they cannot take: each refused with its status and a
 * message that names the op and what is wrong. */
Test(arguments, ops_refuse_what_they_cannot_take_by_name) {
    const int64_t s3[3] = {2, 2, 64}, s2[2] = {4, 64}, s1[1] = {6}, s23[2] = {2, 3}, s24[2] = {2, 4}, two[1] = {2};
    tl_tensor f3, q3, f2, q2, f6, a, b, c, d, out;
    OK(tl_tensor_full(ctx, TL_F32, 3, s3, 0.5, &f3));
    OK(tl_convert(ctx, f3, TL_Q8_0, &q3));
    OK(tl_tensor_full(ctx, TL_F32, 2, s2, 0.25, &f2));
    OK(tl_convert(ctx, f2, TL_Q8_0, &q2));
    OK(tl_tensor_zeros(ctx, TL_F32, 1, s1, &f6));
    const int32_t ids_data[2] = {0, 1};
    tl_tensor ids;
    OK(tl_tensor_from_data(ctx, TL_I32, 1, two, ids_data, sizeof ids_data, &ids));
    REFUSED_WITH(tl_gather_rows(ctx, q3, ids, &out), TL_E_SHAPE, "gather_rows: a q8_0 table is 2-D, not 3-D");
    REFUSED_WITH(tl_slice(ctx, q2, 1, 0, 16, &out), TL_E_SHAPE, "slice: q8_0 keeps whole blocks of 32");
    const int64_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 6};
    REFUSED_WITH(tl_reshape(ctx, f6, 9, nine, &out), TL_E_INVALID_ARGUMENT, "reshape: ndim 9 is outside 0..8");
    const int64_t huge[3] = {INT64_MAX / 2, 4, -1}, unfilled[2] = {4, -1};
    REFUSED_WITH(tl_reshape(ctx, f6, 3, huge, &out), TL_E_SHAPE, "reshape: the shape overflows");
    REFUSED_WITH(tl_reshape(ctx, f6, 2, unfilled, &out), TL_E_SHAPE, "reshape: 6 elements do not fill the -1 dim");
    OK(tl_tensor_zeros(ctx, TL_F32, 1, two, &a));
    OK(tl_tensor_zeros(ctx, TL_F64, 1, two, &b));
    tl_tensor mixed[2] = {a, b};
    REFUSED_WITH(tl_concat(ctx, 2, mixed, 0, &out), TL_E_DTYPE, "concat: tensor 1 is f64, tensor 0 f32");
    OK(tl_tensor_zeros(ctx, TL_F32, 2, s23, &c));
    OK(tl_tensor_zeros(ctx, TL_F32, 2, s24, &d));
    tl_tensor ragged[2] = {c, d};
    REFUSED_WITH(tl_concat(ctx, 2, ragged, 0, &out), TL_E_SHAPE, "concat: tensor 1 differs in dim 1");
    const int64_t b2[3] = {2, 3, 4}, b3[3] = {3, 4, 5};
    OK(tl_tensor_zeros(ctx, TL_F32, 3, b2, &a));
    OK(tl_tensor_zeros(ctx, TL_F32, 3, b3, &b));
    REFUSED_WITH(tl_matmul(ctx, a, b, &out), TL_E_SHAPE, "matmul: batch 2 x batch 3");
    tl_tensor weight, x64, x1;
    OK(tl_transpose(ctx, q2, 0, 1, &weight)); /* [64, 4]: the stored [4, 64] rows' transpose */
    const int64_t row[2] = {1, 64}, flat[1] = {64};
    OK(tl_tensor_zeros(ctx, TL_F64, 2, row, &x64));
    OK(tl_tensor_zeros(ctx, TL_F32, 1, flat, &x1));
    REFUSED_WITH(tl_matmul(ctx, x64, weight, &out), TL_E_DTYPE, "a q8_0 weight takes f32 activations, not f64");
    REFUSED_WITH(tl_matmul(ctx, x1, weight, &out), TL_E_SHAPE, "against [...,m,k] activations, not 1-D x 2-D");
    REFUSED_WITH(tl_tensor_retain(ctx, weight, TL_NO_SCOPE, &out), TL_E_SHAPE, "retain: a q8_0 view that is not contiguous");
    REFUSED_WITH(tl_tensor_from_data(ctx, TL_F32, 1, two, NULL, 8, &out), TL_E_INVALID_ARGUMENT, "from_data: data is NULL");
}
