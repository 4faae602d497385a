/* examples/decode: runs the same greedy decode in ambient mode and in scoped mode, checks that
 * both give identical token ids and logits, and prints per phase: ms/step, allocator calls per
 * step, bytes in use, slab bytes, peak and grow events.  Scoped mode must make 0 allocator
 * calls per step once warm; the program fails otherwise.
 *
 *   decode [--d-model N] [--layers N] [--heads N] [--vocab N] [--tokens N] [--seed N]
 *          [--weights in.safetensors] [--save-weights out.safetensors]
 *          [--report out.json] [--svg out.svg] [--unfused-attention] [--threads N]
 * --threads N (default: this machine's cores, at most 16) runs each context's work on a job pool
 * of N threads as its executor, with BLAS at one thread (an engine's setup: the large matmuls'
 * row blocks go to the pool); --threads 1 runs everything on the calling thread.
 * --unfused-attention runs the toy's reference attention (a masked softmax over the whole cache)
 * instead of tl_attention.  --arch llama runs the library's model runner (tl_model.h): the
 * ambient run is a session with tl_session_options.ambient, the prompt one batch.  With
 * --weights, d_model, vocab and the layer count come from the file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aligned_block.h"
#include "chat.h"
#include "job_pool.h"
#include "llama_runner.h"
#include "meter.h"
#include "model.h"
#include "report.h"
#include "temp_dir.h"
#include "usage.h"

/* What the command line asks beyond the model's shape. */
typedef struct options {
    const char *weights_path, *save_path, *report, *svg;
    tl_dtype weights_dtype; /* --weights-dtype: converted at load */
    int convert_weights;    /* --weights-dtype given (else a file's weights stay as stored) */
    int repack;             /* --repack: the weights also copied for decode (tl_model_options) */
    int32_t *prompt;        /* --prompt-ids: fed at positions 0.., then greedy */
    int prompt_len;
    int threads;
    job_pool *pool;          /* NULL: one thread */
    const char *prompt_text; /* --prompt: the text path, through the library's runner */
    tl_sampler sampler;
} options;

/* Runs the toy in one mode from a fresh context. */
static void run_mode(const model_config *cfg, const options *o, memory_mode mode, mode_result *out) {
    memory_meter meter = {0, 0, 0};
    tl_allocator alloc = {&meter, meter_alloc, meter_free};
    tl_context *ctx;
    TL_CHECK(tl_context_create(&alloc, &ctx));
    if (o->pool) {
        const tl_executor ex = job_pool_executor(o->pool);
        TL_CHECK(tl_context_set_executor(ctx, &ex));
    }
    model m;
    model_config loaded = *cfg;
    if (o->weights_path) {
        if (model_load(ctx, o->weights_path, &loaded, &m) != 0) exit(1);
        m.cfg.tokens = cfg->tokens, m.cfg.unfused_attention = cfg->unfused_attention;
    } else {
        model_init_random(ctx, cfg, &m);
    }
    if (o->save_path && mode == MODE_AMBIENT) model_save(ctx, &m, o->save_path);
    model_convert(ctx, &m, o->weights_dtype);
    decoder d;
    decoder_open(&d, ctx, &m, mode);
    int32_t token = 1;
    out->text[0] = 0;
    for (int pos = 0; pos < cfg->tokens; ++pos) {
        if (pos < o->prompt_len) token = o->prompt[pos];
        const long calls = meter.calls;
        const size_t live = meter.live;
        meter.peak = live;
        const double t0 = now_ms();
        token = decoder_step(&d, token, pos, out->logits + (size_t)pos * (size_t)cfg->vocab);
        step_record *r = &out->steps[pos];
        r->ms = now_ms() - t0;
        r->mallocs = meter.calls - calls;
        r->token = token;
        if (mode == MODE_SCOPED) {
            r->bytes_in_use = d.last_step.used_bytes;
            r->slab_bytes = d.last_step.slab_bytes;
            r->peak_bytes = d.last_step.peak_bytes;
            r->grow_events = d.last_step.grow_events;
        } else {
            r->bytes_in_use = meter.peak - live;
            r->slab_bytes = r->peak_bytes = 0;
            r->grow_events = 0;
        }
    }
    decoder_close(&d);
    model_free(ctx, &m);
    tl_context_destroy(ctx);
}

/* The scratch folder of random Llama weights, removed at exit. */
static char scratch_dir[1024], scratch_weights[1100], scratch_config[1100];
static void remove_scratch(void) {
    remove(scratch_weights);
    remove(scratch_config);
#ifdef _WIN32
    _rmdir(scratch_dir);
#else
    rmdir(scratch_dir);
#endif
}

/* Random Llama weights from cfg's seed, saved as a Hugging Face folder for the runner to open:
 * at --save-weights, else in a scratch folder.  Returns the path of the weights. */
static const char *random_llama_file(const model_config *cfg, const char *save_path) {
    if (!save_path) {
        if (temp_dir_make(scratch_dir, sizeof scratch_dir, "decode") != 0) {
            fprintf(stderr, "decode: cannot make a scratch folder under %s\n", temp_root());
            exit(1);
        }
        snprintf(scratch_weights, sizeof scratch_weights, "%s/model.safetensors", scratch_dir);
        snprintf(scratch_config, sizeof scratch_config, "%s/config.json", scratch_dir);
        atexit(remove_scratch);
        save_path = scratch_weights;
    }
    tl_context *ctx;
    TL_CHECK(tl_context_create(NULL, &ctx));
    model m;
    llama_init_random(ctx, cfg, &m);
    if (llama_save_hf(ctx, &m, save_path) != 0) exit(1);
    llama_free(ctx, &m);
    tl_context_destroy(ctx);
    return save_path;
}

static void print_phase(const char *mode, const char *phase, const step_record *r, int from, int to) {
    double ms = 0, mallocs = 0, bytes = 0;
    for (int i = from; i < to; ++i) ms += r[i].ms, mallocs += (double)r[i].mallocs, bytes += (double)r[i].bytes_in_use;
    const int n = to - from;
    printf("%-8s %-20s %9.3f %14.1f %14.0f %12zu %12zu %6llu\n", mode, phase, ms / n, mallocs / n, bytes / n,
           r[to - 1].slab_bytes, r[to - 1].peak_bytes, (unsigned long long)r[to - 1].grow_events);
}

static int parse_int(const char *flag, const char *value) {
    char *end;
    long v = strtol(value, &end, 10);
    if (*end || v <= 0 || v > 1 << 20) {
        fprintf(stderr, "decode: %s needs a positive integer\n", flag);
        exit(2);
    }
    return (int)v;
}

static const char USAGE[] =
    "usage: decode [--d-model N] [--layers N] [--heads N] [--vocab N] [--tokens N] [--seed N]\n"
    "              [--weights in.safetensors] [--save-weights out.safetensors]\n"
    "              [--report out.json] [--svg out.svg] [--unfused-attention] [--threads N]\n"
    "              [--weights-dtype f32|f16|bf16|q8_0|q4_0] [--repack] [--prompt-ids ID,ID,...]\n"
    "              [--arch toy|llama] [--kv-heads N] [--ffn N] [--kv-dtype f32|f16|bf16]\n"
    "Greedy decode with random weights from the seed (or --weights), in ambient and in scoped\n"
    "mode; prints the tokens, per-step times and allocator calls.\n"
    "  --arch llama  the Llama architecture (RoPE, grouped-query attention, SwiGLU) through the\n"
    "               library's model runner (tl_model.h); --weights takes a GGUF file (llama.cpp's)\n"
    "               or a Hugging Face model.safetensors with its config.json beside it;\n"
    "               --save-weights writes the random weights as the latter\n"
    "  --kv-heads N  key/value heads (default: --heads); --ffn N the MLP width (default 3 x d)\n"
    "  --prompt-ids  token ids fed first (llama: as one batch, its time reported), then the\n"
    "               model's own\n"
    "  --threads N  a job pool of N threads as each context's executor (default: the cores)\n"
    "  --weights-dtype T  the projections, head and embedding converted to T at load (read as\n"
    "               stored); a file's weights stay in their own dtype without it\n"
    "  --repack     llama: q4_0, q8_0, q4_K, q5_K, q6_K weights also copied at load into sixteen-row\n"
    "               groups for decode, the file's other projections copied as stored\n"
    "               (tl_model_options.repack; the header says how much, or that nothing was)\n"
    "  --kv-dtype T  the llama KV cache in f32, f16 or bf16\n"
    "  --prompt TEXT  with a GGUF --weights that carries a vocabulary: the text tokenized, fed as\n"
    "               one batch and continued for --tokens tokens through the library's model runner\n"
    "               (tl_model.h), printed as it comes; sampling: --temperature X (0: greedy, the\n"
    "               default), --top-k N, --top-p X, --min-p X, --repeat-penalty X, --sample-seed N\n";

/* A dtype by name among the first n of f32, f16, bf16, q8_0, q4_0. */
static tl_dtype parse_dtype(const char *name, int n) {
    const tl_dtype all[5] = {TL_F32, TL_F16, TL_BF16, TL_Q8_0, TL_Q4_0};
    for (int k = 0; k < n; ++k)
        if (!strcmp(name, tl_dtype_name(all[k]))) return all[k];
    refuse_argument(name, USAGE);
    return TL_F32;
}

/* --prompt-ids 1,2,3: token ids, each >= 0 (checked against the vocabulary once it is known). */
static void parse_prompt(const char *text, options *o) {
    for (const char *p = text; *p;) {
        char *end;
        const long id = strtol(p, &end, 10);
        if (end == p || id < 0 || id > 1 << 30 || (*end && *end != ',')) {
            fprintf(stderr, "decode: --prompt-ids takes token ids separated by commas, not '%s'\n", text);
            exit(2);
        }
        o->prompt = tl_check_alloc(realloc(o->prompt, sizeof(int32_t) * (size_t)(o->prompt_len + 1)), "--prompt-ids");
        o->prompt[o->prompt_len++] = (int32_t)id;
        p = *end ? end + 1 : end;
    }
}

/* One flag: its name, and what its value (NULL for a switch) does to the configuration. */
typedef struct flag {
    const char *name;
    int takes_value;
    void (*apply)(const char *flag, const char *value, model_config *cfg, options *o);
} flag;

static void set_d_model(const char *f, const char *v, model_config *c, options *o) {
    (void)o, c->d_model = parse_int(f, v);
}
static void set_layers(const char *f, const char *v, model_config *c, options *o) {
    (void)o, c->layers = parse_int(f, v);
}
static void set_heads(const char *f, const char *v, model_config *c, options *o) {
    (void)o, c->heads = parse_int(f, v);
}
static void set_kv_heads(const char *f, const char *v, model_config *c, options *o) {
    (void)o, c->kv_heads = parse_int(f, v);
}
static void set_ffn(const char *f, const char *v, model_config *c, options *o) { (void)o, c->ffn = parse_int(f, v); }
static void set_vocab(const char *f, const char *v, model_config *c, options *o) {
    (void)o, c->vocab = parse_int(f, v);
}
static void set_tokens(const char *f, const char *v, model_config *c, options *o) {
    (void)o, c->tokens = parse_int(f, v);
}
static void set_seed(const char *f, const char *v, model_config *c, options *o) {
    (void)o, c->seed = (unsigned)parse_int(f, v);
}
static void set_threads(const char *f, const char *v, model_config *c, options *o) {
    (void)c, o->threads = parse_int(f, v);
}
static void set_weights(const char *f, const char *v, model_config *c, options *o) {
    (void)f, (void)c, o->weights_path = v;
}
static void set_save(const char *f, const char *v, model_config *c, options *o) { (void)f, (void)c, o->save_path = v; }
static void set_report(const char *f, const char *v, model_config *c, options *o) { (void)f, (void)c, o->report = v; }
static void set_svg(const char *f, const char *v, model_config *c, options *o) { (void)f, (void)c, o->svg = v; }
static void set_unfused(const char *f, const char *v, model_config *c, options *o) {
    (void)f, (void)v, (void)o, c->unfused_attention = 1;
}
static void set_prompt(const char *f, const char *v, model_config *c, options *o) {
    (void)f, (void)c, parse_prompt(v, o);
}
static void set_kv_dtype(const char *f, const char *v, model_config *c, options *o) {
    (void)f, (void)o, c->kv_dtype = parse_dtype(v, 3);
}
static void set_repack(const char *f, const char *v, model_config *c, options *o) {
    (void)f, (void)v, (void)c, o->repack = 1;
}
static void set_weights_dtype(const char *f, const char *v, model_config *c, options *o) {
    (void)f, (void)c, o->weights_dtype = parse_dtype(v, 5), o->convert_weights = 1;
}
static double parse_real(const char *flag, const char *v) {
    char *end;
    const double x = strtod(v, &end);
    if (end == v || *end) {
        fprintf(stderr, "decode: %s takes a number, not '%s'\n", flag, v);
        exit(2);
    }
    return x;
}
static void set_prompt_text(const char *f, const char *v, model_config *c, options *o) { (void)f, (void)c, o->prompt_text = v; }
static void set_temperature(const char *f, const char *v, model_config *c, options *o) {
    (void)c, o->sampler.temperature = (float)parse_real(f, v);
}
static void set_top_k(const char *f, const char *v, model_config *c, options *o) { (void)c, o->sampler.top_k = parse_int(f, v); }
static void set_top_p(const char *f, const char *v, model_config *c, options *o) {
    (void)c, o->sampler.top_p = (float)parse_real(f, v);
}
static void set_min_p(const char *f, const char *v, model_config *c, options *o) {
    (void)c, o->sampler.min_p = (float)parse_real(f, v);
}
static void set_repeat_penalty(const char *f, const char *v, model_config *c, options *o) {
    (void)c, o->sampler.repeat_penalty = (float)parse_real(f, v);
}
static void set_sample_seed(const char *f, const char *v, model_config *c, options *o) {
    (void)c, o->sampler.seed = (uint64_t)parse_int(f, v);
}
static void set_arch(const char *f, const char *v, model_config *c, options *o) {
    (void)f, (void)o;
    if (strcmp(v, "toy") && strcmp(v, "llama")) refuse_argument(v, USAGE);
    c->arch = strcmp(v, "llama") ? ARCH_TOY : ARCH_LLAMA;
}

static const flag FLAGS[] = {
    {"--d-model", 1, set_d_model},
    {"--layers", 1, set_layers},
    {"--heads", 1, set_heads},
    {"--kv-heads", 1, set_kv_heads},
    {"--ffn", 1, set_ffn},
    {"--vocab", 1, set_vocab},
    {"--tokens", 1, set_tokens},
    {"--seed", 1, set_seed},
    {"--threads", 1, set_threads},
    {"--weights", 1, set_weights},
    {"--save-weights", 1, set_save},
    {"--report", 1, set_report},
    {"--svg", 1, set_svg},
    {"--unfused-attention", 0, set_unfused},
    {"--prompt-ids", 1, set_prompt},
    {"--kv-dtype", 1, set_kv_dtype},
    {"--weights-dtype", 1, set_weights_dtype},
    {"--repack", 0, set_repack},
    {"--arch", 1, set_arch},
    {"--prompt", 1, set_prompt_text},
    {"--temperature", 1, set_temperature},
    {"--top-k", 1, set_top_k},
    {"--top-p", 1, set_top_p},
    {"--min-p", 1, set_min_p},
    {"--repeat-penalty", 1, set_repeat_penalty},
    {"--sample-seed", 1, set_sample_seed},
};

static void parse_args(int argc, char **argv, model_config *cfg, options *o) {
    for (int i = 1; i < argc; ++i) {
        const flag *f = NULL;
        for (size_t k = 0; k < sizeof FLAGS / sizeof FLAGS[0] && !f; ++k)
            if (!strcmp(argv[i], FLAGS[k].name)) f = &FLAGS[k];
        if (!f) refuse_argument(argv[i], USAGE);
        if (f->takes_value && i + 1 == argc) {
            fprintf(stderr, "decode: %s needs a value\n%s", f->name, USAGE);
            exit(2);
        }
        f->apply(f->name, f->takes_value ? argv[++i] : NULL, cfg, o);
    }
}

/* The model's shape and the prompt, checked together once the file (if any) has given its part:
 * 0, or 2 with a message. */
static int check_shape(const model_config *cfg, const options *o) {
    if (cfg->kv_dtype != TL_F32 && cfg->arch != ARCH_LLAMA) {
        fprintf(stderr, "decode: --kv-dtype is for --arch llama\n");
        return 2;
    }
    if (cfg->d_model % cfg->heads || cfg->heads % cfg->kv_heads ||
        (cfg->arch == ARCH_LLAMA && cfg->d_model / cfg->heads % 2)) {
        fprintf(stderr, "decode: --d-model must be a multiple of --heads, --heads of --kv-heads (an even head size)\n");
        return 2;
    }
    if (o->prompt_len > cfg->tokens) {
        fprintf(stderr, "decode: %d prompt ids for a %d-token run (--tokens)\n", o->prompt_len, cfg->tokens);
        return 2;
    }
    for (int i = 0; i < o->prompt_len; ++i)
        if (o->prompt[i] >= cfg->vocab) {
            fprintf(stderr, "decode: prompt id %d is past the vocabulary (%d)\n", o->prompt[i], cfg->vocab);
            return 2;
        }
    if (o->threads > JOB_POOL_MAX_THREADS) {
        fprintf(stderr, "decode: --threads takes 1 to %d\n", JOB_POOL_MAX_THREADS);
        return 2;
    }
    return 0;
}

static void print_header(const model_config *cfg, const options *o) {
    const char *pool = o->threads > 1 ? " (a job pool as the executor, BLAS at 1)" : "";
    if (cfg->arch == ARCH_LLAMA)
        printf(
            "decode: llama, d_model %d, %d layers, %d heads (%d kv), ffn %d, vocab %d, %d tokens, KV cache %s, "
            "weights %s%s%s; %d thread%s%s\n",
            cfg->d_model, cfg->layers, cfg->heads, cfg->kv_heads, cfg->ffn, cfg->vocab, cfg->tokens,
            tl_dtype_name(cfg->kv_dtype), o->weights_path ? o->weights_path : "from a fixed seed",
            o->convert_weights ? " converted to "
            : o->weights_path  ? " as stored"
                               : " in f32",
            o->convert_weights ? tl_dtype_name(o->weights_dtype) : "", o->threads, o->threads > 1 ? "s" : "", pool);
    else
        printf("decode: d_model %d, %d layers, %d heads, vocab %d, %d tokens, weights %s in %s; %d thread%s%s\n",
               cfg->d_model, cfg->layers, cfg->heads, cfg->vocab, cfg->tokens,
               o->weights_path ? o->weights_path : "from a fixed seed", tl_dtype_name(o->weights_dtype), o->threads,
               o->threads > 1 ? "s" : "", pool);
    printf("machine: OpenBLAS core %s, SIMD kernels %s\n\n", tl_blas_core(), tl_simd_target());
}

static void mode_result_open(mode_result *r, const model_config *cfg) {
    r->steps = tl_check_alloc(calloc((size_t)cfg->tokens, sizeof *r->steps), "the step records");
    r->logits = tl_check_alloc(malloc((size_t)cfg->tokens * (size_t)cfg->vocab * sizeof(float)), "the logits");
    r->text_capacity = 1 << 16;
    r->text = tl_check_alloc(malloc(r->text_capacity), "the output text");
}

static void mode_result_close(mode_result *r) {
    free(r->steps);
    free(r->logits);
    free(r->text);
}

int main(int argc, char **argv) {
    answer_help(argc, argv, USAGE);
    model_config cfg = {256, 4, 4, 1024, 128, 1234};
    cfg.rope_theta = 10000, cfg.norm_eps = 1e-5, cfg.kv_dtype = TL_F32;
    const long cores = job_pool_online_cores();
    options o = {0};
    o.weights_dtype = TL_F32;
    o.threads = cores < 1 ? 1 : cores > JOB_POOL_MAX_THREADS ? JOB_POOL_MAX_THREADS : (int)cores;
    const tl_sampler greedy = TL_SAMPLER_GREEDY;
    o.sampler = greedy;
    parse_args(argc, argv, &cfg, &o);
    if (o.prompt_text) {
        if (!o.weights_path) {
            fprintf(stderr, "decode: --prompt needs --weights (a GGUF file with a vocabulary)\n");
            return 2;
        }
        job_pool chat_pool;
        tl_executor chat_executor;
        TL_CHECK(tl_set_blas_threads(1));
        if (o.threads > 1) {
            if (job_pool_start(&chat_pool, o.threads) != 0) return 1;
            chat_executor = job_pool_executor(&chat_pool);
        }
        printf("decode: %s through the model runner, %d thread%s; machine: OpenBLAS core %s, SIMD kernels %s\n\n",
               o.weights_path, o.threads, o.threads > 1 ? "s" : "", tl_blas_core(), tl_simd_target());
        const chat_options co = {o.weights_path, o.prompt_text, cfg.tokens, o.sampler, cfg.kv_dtype,
                                 o.threads > 1 ? &chat_executor : NULL};
        const int status = run_chat(&co);
        if (o.threads > 1) job_pool_stop(&chat_pool);
        return status;
    }
    const size_t path_len = o.weights_path ? strlen(o.weights_path) : 0;
    if (path_len > 5 && !strcmp(o.weights_path + path_len - 5, ".gguf")) cfg.arch = ARCH_LLAMA;
    const int llama = cfg.arch == ARCH_LLAMA;
    if (!cfg.kv_heads) cfg.kv_heads = cfg.heads;
    if (!cfg.ffn) cfg.ffn = 3 * cfg.d_model;
    if (llama && cfg.unfused_attention) {
        fprintf(stderr, "decode: --unfused-attention is the toy's (the runner's attention is tl_attention)\n");
        return 2;
    }
    int refused;
    const char *model_path = o.weights_path;
    if (llama && !model_path && (refused = check_shape(&cfg, &o)) != 0) return refused; /* before saving */
    if (llama) { /* the runner opens a file: random weights are saved first */
        if (!model_path) model_path = random_llama_file(&cfg, o.save_path);
        llama_describe(model_path, &cfg);
    } else if (model_path) { /* the file decides the toy's shape */
        tl_context *probe;
        model m = {0};
        TL_CHECK(tl_context_create(NULL, &probe));
        const int loaded = model_load(probe, model_path, &cfg, &m);
        if (loaded == 0) model_free(probe, &m);
        tl_context_destroy(probe);
        if (loaded != 0) return 1;
    }
    if ((refused = check_shape(&cfg, &o)) != 0) return refused;
    job_pool threads_pool;
    TL_CHECK(tl_set_blas_threads(1));
    if (o.threads > 1) {
        if (job_pool_start(&threads_pool, o.threads) != 0) {
            fprintf(stderr, "decode: could not start %d threads\n", o.threads);
            return 1;
        }
        o.pool = &threads_pool;
    }
    print_header(&cfg, &o);
    /* Llama: the prompt (token 1 without --prompt-ids) as one batch, then a record per token. */
    const int32_t start_token = 1;
    const tl_executor executor = o.pool ? job_pool_executor(o.pool) : (tl_executor){0};
    const llama_run run = {model_path, o.convert_weights ? o.weights_dtype : (tl_dtype)0,
                           o.prompt_len ? o.prompt : &start_token, o.prompt_len ? o.prompt_len : 1,
                           cfg.tokens, cfg.kv_dtype, o.pool ? &executor : NULL, o.repack};
    mode_result ambient, scoped;
    mode_result_open(&ambient, &cfg);
    mode_result_open(&scoped, &cfg);
    int records = cfg.tokens;
    if (llama) {
        llama_run_mode(&run, MODE_AMBIENT, &ambient);
        records = llama_run_mode(&run, MODE_SCOPED, &scoped);
    } else {
        run_mode(&cfg, &o, MODE_AMBIENT, &ambient);
        run_mode(&cfg, &o, MODE_SCOPED, &scoped);
    }

    const size_t nlogits = (size_t)records * (size_t)cfg.vocab;
    int same_tokens = 1;
    for (int i = 0; i < records; ++i) same_tokens &= ambient.steps[i].token == scoped.steps[i].token;
    const int same_logits = memcmp(ambient.logits, scoped.logits, nlogits * sizeof(float)) == 0;

    printf("%-8s %-20s %9s %14s %14s %12s %12s %6s\n", "mode", "phase", "ms/step", "mallocs/step", "bytes in use",
           "slab bytes", "peak", "grows");
    /* The toy's first step warms the scopes up; the Llama's prompt and first token do (their
     * shapes differ). */
    const int warm = records < (llama ? 2 : 1) ? records : (llama ? 2 : 1);
    char first[32], steady[32];
    snprintf(first, sizeof first, "prompt (%d token%s)", run.prompt_len, run.prompt_len > 1 ? "s" : "");
    snprintf(steady, sizeof steady, llama ? "tokens 2..%d" : "steps 2..%d", llama ? records - 1 : records);
    const mode_result *results[2] = {&ambient, &scoped};
    for (int k = 0; k < 2; ++k) {
        const char *mode = k ? "scoped" : "ambient";
        print_phase(mode, llama ? first : "step 1 (warm-up)", results[k]->steps, 0, 1);
        if (llama && records > 1) print_phase(mode, "token 1 (warm-up)", results[k]->steps, 1, 2);
        if (records > warm) print_phase(mode, steady, results[k]->steps, warm, records);
    }

    long steady_mallocs = 0;
    for (int i = warm; i < records; ++i) steady_mallocs += scoped.steps[i].mallocs;
    if (llama)
        printf("\nprompt: %d tokens in %.2f ms (%.1f tokens/s, one batch), then %d tokens one a step\n", run.prompt_len,
               scoped.steps[0].ms, run.prompt_len / (scoped.steps[0].ms / 1e3), records - 1);
    printf("\ntokens:");
    for (int i = 0; i < records && i < 16; ++i) printf(" %d", scoped.steps[i].token);
    printf("%s\n", records > 16 ? " ..." : "");
    if (scoped.text[0]) printf("text: %s\n", scoped.text);
    printf("ambient and scoped: token ids %s, logits %s (bitwise)\n", same_tokens ? "identical" : "DIFFER",
           same_logits ? "identical" : "DIFFER");
    uint64_t hash = 14695981039346656037ull; /* FNV-1a of the logits' bytes: the same on any thread count */
    for (size_t i = 0; i < nlogits * sizeof(float); ++i)
        hash = (hash ^ ((const unsigned char *)scoped.logits)[i]) * 1099511628211ull;
    printf("logits hash: %016llx\n", (unsigned long long)hash);
    printf("scoped steady state: %ld allocator calls over %d steps\n", steady_mallocs, records - warm);

    run_record runs[2] = {{"ambient", ambient.steps, records}, {"scoped", scoped.steps, records}};
    int failed = !same_tokens || !same_logits || steady_mallocs != 0;
    if (o.report && write_json_report(o.report, &cfg, llama ? run.prompt_len : 0, runs, 2, same_tokens && same_logits) != 0)
        failed = 1;
    if (o.svg && write_svg_chart(o.svg, runs, 2) != 0) failed = 1;
    if (o.report) printf("report: %s\n", o.report);
    if (o.svg) printf("chart: %s\n", o.svg);
    mode_result_close(&ambient);
    mode_result_close(&scoped);
    free(o.prompt);
    if (o.pool) job_pool_stop(o.pool);
    return failed;
}
