/* The conformance suite against an independent reference: every case of tests/golden/golden.json
 * (computed by NumPy in tests/golden/make_golden.py; inputs and expected outputs in
 * golden.safetensors) runs with its operands in every layout and every storage:
 *
 *   layouts   contiguous; a nonzero offset into a larger buffer; transposed (the last two axes
 *             swapped in memory); a column slice (row stride past the row's length); a
 *             transposed column slice (col_stride > rows, BLAS's leading dimension); a row
 *             slice (for 3-D operands a batch stride past m * k); 1-D operands take stride 2
 *             in the matrix layouts; and each layout for the last operand alone, the others
 *             contiguous (mixed strides);
 *   storages  ambient; a scope at three shifting offsets across resets; inputs in an outer
 *             scope and the output in a nested one; copies retained out of a reset scope;
 *             tensors wrapped over the caller's buffers.
 *
 * Each result is compared with NumPy's value within the case's stated tolerance (bitwise for
 * IEEE-exact ops), and with the contiguous ambient result bit for bit: the library's own
 * kernels give the same bits whatever the layout and storage.  The one exception is matmul
 * across layouts, where BLAS takes another path (a transpose flag, a copy) and only NumPy's
 * bound applies. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "common.h"

enum layout { CONTIGUOUS, OFFSET, TRANSPOSED, COL_SLICE, TRANSPOSED_COL_SLICE, ROW_SLICE, LAYOUTS };
enum storage { AMBIENT, SCOPED, NESTED, RETAINED, WRAPPED, STORAGES };
static const char *layout_names[LAYOUTS] = {
    "contiguous", "offset", "transposed", "column slice", "transposed column slice", "row slice"};
static const char *storage_names[STORAGES] = {"ambient", "scope", "nested scope", "retained copy", "wrapped buffer"};

typedef struct array {
    tl_dtype dt;
    int ndim;
    int64_t shape[TL_MAX_DIMS];
    int64_t numel;
    unsigned char *data; /* numel elements, row-major */
} array;

typedef struct golden_case {
    const cJSON *json;
    const char *name, *op;
    int n_in;
    array in[3], out;
    int ulp;
    double atol;
} golden_case;

static size_t elem_size(tl_dtype dt) { return tl_dtype_size(dt); }

/* ---- reading the golden files ------------------------------------------------------------- */

static array read_array(tl_context *c, tl_safetensors_file *f, const char *name) {
    tl_tensor t;
    OK(tl_safetensors_get(c, f, name, &t));
    tl_tensor_info info = TL_TENSOR_INFO_INIT;
    OK(tl_tensor_info_get(c, t, &info));
    array a = {info.dtype, info.ndim, {0}, 1, NULL};
    for (int d = 0; d < a.ndim; ++d) a.shape[d] = info.shape[d], a.numel *= info.shape[d];
    a.data = malloc((size_t)a.numel * elem_size(a.dt) + 1);
    OK(tl_tensor_read(c, t, a.data, (size_t)a.numel * elem_size(a.dt)));
    OK(tl_tensor_free(c, t));
    return a;
}

static char *read_text(const char *path) {
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    cr_assert_eq(fread(s, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    s[n] = 0;
    return s;
}

/* ---- placing an operand in a layout -------------------------------------------------------- */

/* Bytes no element of the operand may be read from: a wrong stride shows up in the result. */
static void fill_garbage(unsigned char *p, size_t bytes) { memset(p, 0x5A, bytes); }

static void *host_buffer(void ***owned, int *n_owned, size_t bytes) {
    void *p = aligned_block_alloc(bytes ? bytes : 64, 64);
    cr_assert_not_null(p);
    (*owned)[(*n_owned)++] = p;
    return p;
}

typedef struct placer {
    tl_context *ctx;
    int wrap;     /* tensors over caller buffers instead of copies */
    void **owned; /* the caller buffers, freed after the case */
    int n_owned;
} placer;

/* A contiguous tensor of `shape` holding `bytes` at data: a copy, or a wrap of a buffer of ours. */
static tl_tensor make_contiguous(placer *p, tl_dtype dt, int ndim, const int64_t *shape, const void *data,
                                 size_t bytes) {
    tl_tensor t;
    if (p->wrap) {
        void *buf = host_buffer(&p->owned, &p->n_owned, bytes);
        memcpy(buf, data, bytes);
        OK(tl_tensor_wrap(p->ctx, dt, ndim, shape, buf, bytes, &t));
    } else {
        OK(tl_tensor_from_data(p->ctx, dt, ndim, shape, data, bytes, &t));
    }
    return t;
}

/* The elements of a (row-major, dims d0.. of shape) with the last two axes swapped, into a
 * buffer of row length `row` (>= a's rows) for the swapped matrix. */
static void transpose_into(const array *a, unsigned char *to, int64_t row) {
    const size_t e = elem_size(a->dt);
    const int64_t r = a->shape[a->ndim - 2], c = a->shape[a->ndim - 1];
    const int64_t batches = r * c ? a->numel / (r * c) : 0;
    for (int64_t b = 0; b < batches; ++b)
        for (int64_t i = 0; i < r; ++i)
            for (int64_t j = 0; j < c; ++j)
                memcpy(to + ((size_t)(b * c * row + j * row + i)) * e, a->data + (size_t)(b * r * c + i * c + j) * e,
                       e);
}

static tl_tensor place(placer *p, const array *a, enum layout layout) {
    tl_context *ctx = p->ctx;
    const size_t e = elem_size(a->dt), bytes = (size_t)a->numel * e;
    const int nd = a->ndim;
    if (nd == 1 && layout != CONTIGUOUS && layout != OFFSET) { /* a 1-D view of stride 2: column 0 of [n, 2] */
        const int64_t wide[2] = {a->numel, 2};
        unsigned char *buf = malloc(2 * bytes + 1);
        fill_garbage(buf, 2 * bytes);
        for (int64_t i = 0; i < a->numel; ++i) memcpy(buf + (size_t)(2 * i) * e, a->data + (size_t)i * e, e);
        tl_tensor w = make_contiguous(p, a->dt, 2, wide, buf, 2 * bytes), col;
        free(buf);
        OK(tl_slice(ctx, w, 1, 0, 1, &col));
        OK(tl_reshape(ctx, col, 1, a->shape, &w));
        return w;
    }
    if (nd < 2 && layout != CONTIGUOUS) layout = OFFSET; /* the matrix layouts need two axes */
    tl_tensor t, v;
    int64_t shape[TL_MAX_DIMS];
    memcpy(shape, a->shape, sizeof shape);
    switch (layout) {
        case CONTIGUOUS:
        case LAYOUTS:
            return make_contiguous(p, a->dt, nd, a->shape, a->data, bytes);
        case OFFSET: { /* 3 elements of garbage, then the elements: a view at offset 3 */
            const int64_t total = a->numel + 3;
            unsigned char *buf = malloc((size_t)total * e);
            fill_garbage(buf, 3 * e);
            memcpy(buf + 3 * e, a->data, bytes);
            t = make_contiguous(p, a->dt, 1, &total, buf, (size_t)total * e);
            free(buf);
            OK(tl_slice(ctx, t, 0, 3, a->numel, &v));
            OK(tl_reshape(ctx, v, nd, a->shape, &t));
            return t;
        }
        case TRANSPOSED: {
            shape[nd - 2] = a->shape[nd - 1], shape[nd - 1] = a->shape[nd - 2];
            unsigned char *buf = malloc(bytes + 1);
            transpose_into(a, buf, a->shape[nd - 2]);
            t = make_contiguous(p, a->dt, nd, shape, buf, bytes);
            free(buf);
            OK(tl_transpose(ctx, t, nd - 2, nd - 1, &v));
            return v;
        }
        case COL_SLICE: { /* rows of c + 2 elements, the last two garbage */
            const int64_t c = a->shape[nd - 1], total_rows = c ? a->numel / c : 0;
            shape[nd - 1] = c + 2;
            int64_t all = 1;
            for (int d = 0; d < nd; ++d) all *= shape[d];
            unsigned char *buf = malloc((size_t)all * e + 1);
            fill_garbage(buf, (size_t)all * e);
            for (int64_t i = 0; i < total_rows; ++i)
                memcpy(buf + (size_t)(i * (c + 2)) * e, a->data + (size_t)(i * c) * e, (size_t)c * e);
            t = make_contiguous(p, a->dt, nd, shape, buf, (size_t)all * e);
            free(buf);
            OK(tl_slice(ctx, t, nd - 1, 0, c, &v));
            return v;
        }
        case TRANSPOSED_COL_SLICE: { /* the transpose stored in rows of r + 2: strides (1, r + 2) */
            const int64_t r = a->shape[nd - 2], c = a->shape[nd - 1];
            shape[nd - 2] = c, shape[nd - 1] = r + 2;
            int64_t all = 1;
            for (int d = 0; d < nd; ++d) all *= shape[d];
            unsigned char *buf = malloc((size_t)all * e + 1);
            fill_garbage(buf, (size_t)all * e);
            transpose_into(a, buf, r + 2);
            t = make_contiguous(p, a->dt, nd, shape, buf, (size_t)all * e);
            free(buf);
            OK(tl_slice(ctx, t, nd - 1, 0, r, &v));
            OK(tl_transpose(ctx, v, nd - 2, nd - 1, &t));
            return t;
        }
        case ROW_SLICE: { /* one garbage row after each matrix: for 3-D, a batch stride of (r + 1) * c */
            const int64_t r = a->shape[nd - 2], c = a->shape[nd - 1];
            const int64_t batches = r * c ? a->numel / (r * c) : 0;
            shape[nd - 2] = r + 1;
            int64_t all = 1;
            for (int d = 0; d < nd; ++d) all *= shape[d];
            unsigned char *buf = malloc((size_t)all * e + 1);
            fill_garbage(buf, (size_t)all * e);
            for (int64_t b = 0; b < batches; ++b)
                memcpy(buf + (size_t)(b * (r + 1) * c) * e, a->data + (size_t)(b * r * c) * e, (size_t)(r * c) * e);
            t = make_contiguous(p, a->dt, nd, shape, buf, (size_t)all * e);
            free(buf);
            OK(tl_slice(ctx, t, nd - 2, 0, r, &v));
            return v;
        }
    }
    return t;
}

/* ---- running a case ------------------------------------------------------------------------ */

static int param_int(const golden_case *c, const char *key) {
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(c->json, "params"), key);
    cr_assert(cJSON_IsNumber(p), "%s: no parameter %s", c->name, key);
    return p->valueint;
}
static double param_double(const golden_case *c, const char *key) {
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(c->json, "params"), key);
    cr_assert(cJSON_IsNumber(p), "%s: no parameter %s", c->name, key);
    return p->valuedouble;
}

#define TL_TRY_TEST(call)         \
  do {                            \
    const tl_status st_ = (call); \
    if (st_ != TL_OK) return st_; \
  } while (0)

static tl_status run_op(tl_context *ctx, const golden_case *c, const tl_tensor *in, tl_tensor *out) {
    const char *op = c->op;
    if (!strcmp(op, "add")) return tl_add(ctx, in[0], in[1], out);
    if (!strcmp(op, "sub")) return tl_sub(ctx, in[0], in[1], out);
    if (!strcmp(op, "mul")) return tl_mul(ctx, in[0], in[1], out);
    if (!strcmp(op, "div")) return tl_div(ctx, in[0], in[1], out);
    if (!strcmp(op, "scale")) return tl_scale(ctx, in[0], param_double(c, "scale"), out);
    if (!strcmp(op, "relu")) return tl_relu(ctx, in[0], out);
    if (!strcmp(op, "exp")) return tl_exp(ctx, in[0], out);
    if (!strcmp(op, "tanh")) return tl_tanh(ctx, in[0], out);
    if (!strcmp(op, "gelu")) return tl_gelu(ctx, in[0], out);
    if (!strcmp(op, "silu")) return tl_silu(ctx, in[0], out);
    if (!strcmp(op, "softmax")) return tl_softmax(ctx, in[0], param_int(c, "axis"), out);
    if (!strcmp(op, "rmsnorm")) return tl_rmsnorm(ctx, in[0], in[1], param_double(c, "eps"), out);
    if (!strcmp(op, "layernorm")) return tl_layernorm(ctx, in[0], in[1], in[2], param_double(c, "eps"), out);
    if (!strcmp(op, "sum")) return tl_sum(ctx, in[0], param_int(c, "axis"), param_int(c, "keepdim"), out);
    if (!strcmp(op, "mean")) return tl_mean(ctx, in[0], param_int(c, "axis"), param_int(c, "keepdim"), out);
    if (!strcmp(op, "argmax")) return tl_argmax(ctx, in[0], param_int(c, "axis"), out);
    if (!strcmp(op, "matmul")) return tl_matmul(ctx, in[0], in[1], out);
    if (!strcmp(op, "contiguous")) return tl_contiguous(ctx, in[0], out);
    if (!strcmp(op, "concat")) return tl_concat(ctx, 2, in, param_int(c, "axis"), out);
    if (!strcmp(op, "gather_rows")) return tl_gather_rows(ctx, in[0], in[1], out);
    if (!strcmp(op, "slice"))
        return tl_slice(ctx, in[0], param_int(c, "axis"), param_int(c, "start"), param_int(c, "length"), out);
    if (!strcmp(op, "transpose")) return tl_transpose(ctx, in[0], param_int(c, "d0"), param_int(c, "d1"), out);
    if (!strcmp(op, "reshape")) {
        const int64_t shape[2] = {param_int(c, "rows"), param_int(c, "cols")};
        return tl_reshape(ctx, in[0], 2, shape, out);
    }
    if (!strcmp(op, "copy_into")) { /* into the second operand, in its layout: the result is what it holds after */
        TL_TRY_TEST(tl_copy_into(ctx, in[0], in[1]));
        *out = in[1];
        return TL_OK;
    }
    if (!strcmp(op, "attention"))
        return tl_attention(ctx, in[0], in[1], in[2], param_int(c, "valid"), param_double(c, "scale"), out);
    cr_assert_fail("%s: op %s has no runner here", c->name, op);
    return TL_E_INTERNAL;
}

/* The distance one ulp makes at |want| in the dtype (the smallest subnormal at 0). */
static double ulp_at(double want, tl_dtype dt) {
    if (dt == TL_F32) {
        const float w = fabsf((float)want);
        return (double)nextafterf(w, INFINITY) - (double)w;
    }
    const double w = fabs(want);
    return nextafter(w, INFINITY) - w;
}

static double element(const array *a, int64_t i) {
    const unsigned char *p = a->data + (size_t)i * elem_size(a->dt);
    float f;
    double d;
    int32_t n;
    switch (a->dt) {
        case TL_F32:
            memcpy(&f, p, 4);
            return f;
        case TL_F64:
            memcpy(&d, p, 8);
            return d;
        default:
            memcpy(&n, p, 4);
            return n;
    }
}

typedef struct variant {
    enum layout layout;
    enum storage storage;
    int round;
    int last_only; /* only the last operand in the layout, the others contiguous (mixed strides) */
} variant;

static enum layout layout_of(const golden_case *c, const variant *v, int k) {
    return v->last_only && k < c->n_in - 1 ? CONTIGUOUS : v->layout;
}

/* got against NumPy's value, within the case's tolerance. */
static void check_against_golden(const golden_case *c, const variant *v, const unsigned char *got) {
    const array *want = &c->out;
    const size_t e = elem_size(want->dt);
    const int exact = c->ulp == 0 && c->atol == 0;
    for (int64_t i = 0; i < want->numel; ++i) {
        const unsigned char *g = got + (size_t)i * e, *w = want->data + (size_t)i * e;
        array ga = {want->dt, 1, {1}, 1, (unsigned char *)g};
        const double gv = element(&ga, 0), wv = element(want, i);
        int ok;
        if (want->dt == TL_I32)
            ok = memcmp(g, w, e) == 0;
        else if (isnan(wv))
            ok = isnan(gv);
        else if (exact || isinf(wv))
            ok = memcmp(g, w, e) == 0;
        else
            ok = fabs(gv - wv) <= c->ulp * ulp_at(wv, want->dt) + c->atol;
        cr_assert(ok, "%s, %s operands%s in %s (round %d): element %lld is %.17g, NumPy says %.17g (ulp %d, atol %g)",
                  c->name, layout_names[v->layout], v->last_only ? " (the last only)" : "", storage_names[v->storage],
                  v->round, (long long)i, gv, wv, c->ulp, c->atol);
    }
}

/* Runs the case on the operands; checks the result's shape and values against NumPy and
 * returns its bytes (the caller frees them). */
static unsigned char *run_on(tl_context *ctx, const golden_case *c, const variant *v, const tl_tensor *in) {
    tl_tensor out;
    OK(run_op(ctx, c, in, &out));
    tl_tensor_info info = TL_TENSOR_INFO_INIT;
    OK(tl_tensor_info_get(ctx, out, &info));
    cr_assert_eq(info.dtype, c->out.dt, "%s: dtype", c->name);
    cr_assert_eq(info.ndim, c->out.ndim, "%s: ndim", c->name);
    for (int d = 0; d < info.ndim; ++d) cr_assert_eq(info.shape[d], c->out.shape[d], "%s: dim %d", c->name, d);
    const size_t bytes = (size_t)c->out.numel * elem_size(c->out.dt);
    unsigned char *got = malloc(bytes + 1);
    OK(tl_tensor_read(ctx, out, got, bytes));
    check_against_golden(c, v, got);
    return got;
}

/* run_on with operands placed in the variant's layout, in the storage's current target. */
static unsigned char *run_variant(placer *p, const golden_case *c, const variant *v) {
    tl_tensor in[3];
    for (int k = 0; k < c->n_in; ++k) in[k] = place(p, &c->in[k], layout_of(c, v, k));
    return run_on(p->ctx, c, v, in);
}

static void check_same_bits(const golden_case *c, const variant *v, const unsigned char *base,
                            const unsigned char *got) {
    const size_t bytes = (size_t)c->out.numel * elem_size(c->out.dt);
    if (!strcmp(c->op, "matmul") && v->layout != CONTIGUOUS) return; /* another BLAS path: NumPy's bound only */
    cr_assert(memcmp(base, got, bytes) == 0,
              "%s: %s operands%s in %s (round %d) differ in bits from contiguous ambient", c->name,
              layout_names[v->layout], v->last_only ? " (the last only)" : "", storage_names[v->storage], v->round);
}

/* got (then freed) against the contiguous ambient result, counted. */
static void against_base(const golden_case *c, const variant *v, const unsigned char *base, unsigned char *got,
                         int *compared) {
    check_same_bits(c, v, base, got);
    free(got);
    ++*compared;
}

/* Every layout in every storage; returns how many results were compared. */
static int run_case(const golden_case *c) {
    tl_context *ctx;
    OK(tl_context_create(NULL, &ctx));
    void *owned[64 * LAYOUTS * 3];
    placer p = {ctx, 0, owned, 0};
    const variant base_v = {CONTIGUOUS, AMBIENT, 0, 0};
    unsigned char *base = run_variant(&p, c, &base_v);
    int compared = 1;
    for (int l = 1; l < LAYOUTS && c->n_in > 1; ++l) { /* mixed: contiguous operands with one that is not */
        const variant v = {(enum layout)l, AMBIENT, 0, 1};
        against_base(c, &v, base, run_variant(&p, c, &v), &compared);
    }
    for (int l = 0; l < LAYOUTS; ++l) {
        for (int s = 0; s < STORAGES; ++s) {
            variant v = {(enum layout)l, (enum storage)s, 0, 0};
            tl_scope outer, inner;
            p.wrap = s == WRAPPED;
            switch ((enum storage)s) {
                case AMBIENT:
                case WRAPPED:
                    against_base(c, &v, base, run_variant(&p, c, &v), &compared);
                    break;
                case SCOPED: /* the same step three times, each at another slab offset */
                    OK(tl_scope_open(ctx, "golden-step", 0, &outer));
                    for (v.round = 0; v.round < 3; ++v.round) {
                        const int64_t pad = 7 * v.round + 1;
                        tl_tensor padding;
                        OK(tl_tensor_zeros(ctx, TL_F32, 1, &pad, &padding));
                        against_base(c, &v, base, run_variant(&p, c, &v), &compared);
                        OK(tl_scope_reset(ctx, outer));
                    }
                    OK(tl_scope_close(ctx, outer));
                    break;
                case NESTED: { /* operands in an outer scope, the result in the inner one */
                    OK(tl_scope_open(ctx, "golden-inputs", 0, &outer));
                    tl_tensor in[3];
                    for (int k = 0; k < c->n_in; ++k) in[k] = place(&p, &c->in[k], v.layout);
                    OK(tl_scope_open(ctx, "golden-outputs", 0, &inner));
                    against_base(c, &v, base, run_on(ctx, c, &v, in), &compared);
                    OK(tl_scope_close(ctx, inner));
                    OK(tl_scope_close(ctx, outer));
                    break;
                }
                case RETAINED: { /* copies retained out of a scope, which is then reset */
                    tl_tensor kept[3];
                    OK(tl_scope_open(ctx, "golden-made", 0, &outer));
                    for (int k = 0; k < c->n_in; ++k)
                        OK(tl_tensor_retain(ctx, place(&p, &c->in[k], v.layout), TL_NO_SCOPE, &kept[k]));
                    OK(tl_scope_reset(ctx, outer));
                    against_base(c, &v, base, run_on(ctx, c, &v, kept), &compared);
                    OK(tl_scope_close(ctx, outer));
                    for (int k = 0; k < c->n_in; ++k) OK(tl_tensor_free(ctx, kept[k]));
                    break;
                }
                case STORAGES:
                    break;
            }
        }
    }
    free(base);
    tl_context_destroy(ctx);
    for (int i = 0; i < p.n_owned; ++i) aligned_block_free(owned[i]);
    return compared;
}

Test(golden, every_case_in_every_layout_and_storage_matches_numpy) {
    char *text = read_text(TL_SOURCE_DIR "/tests/golden/golden.json");
    cJSON *root = cJSON_Parse(text);
    cr_assert_not_null(root, "golden.json does not parse");
    const cJSON *cases = cJSON_GetObjectItemCaseSensitive(root, "cases");
    cr_assert(cJSON_IsArray(cases) && cJSON_GetArraySize(cases) > 100, "golden.json holds too few cases");
    tl_context *reader;
    OK(tl_context_create(NULL, &reader));
    tl_safetensors_file *f;
    OK(tl_safetensors_open(reader, TL_SOURCE_DIR "/tests/golden/golden.safetensors", &f));
    int n_cases = 0, compared = 0;
    for (const cJSON *j = cases->child; j; j = j->next) {
        golden_case c = {j, NULL, NULL, 0, {{0}}, {0}, 0, 0};
        c.name = cJSON_GetObjectItemCaseSensitive(j, "name")->valuestring;
        c.op = cJSON_GetObjectItemCaseSensitive(j, "op")->valuestring;
        c.ulp = cJSON_GetObjectItemCaseSensitive(j, "ulp")->valueint;
        c.atol = cJSON_GetObjectItemCaseSensitive(j, "atol")->valuedouble;
        const cJSON *inputs = cJSON_GetObjectItemCaseSensitive(j, "inputs");
        for (const cJSON *in = inputs->child; in; in = in->next)
            c.in[c.n_in++] = read_array(reader, f, in->valuestring);
        c.out = read_array(reader, f, cJSON_GetObjectItemCaseSensitive(j, "output")->valuestring);
        compared += run_case(&c);
        for (int k = 0; k < c.n_in; ++k) free(c.in[k].data);
        free(c.out.data);
        ++n_cases;
    }
    cr_log_info("golden: %d NumPy cases, %d results compared (%d layouts x %d storages each)", n_cases, compared,
                LAYOUTS, STORAGES);
    tl_safetensors_close(f);
    tl_context_destroy(reader);
    cJSON_Delete(root);
    free(text);
}
