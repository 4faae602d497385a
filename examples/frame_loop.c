/* An engine's frame loop: every frame, 256 agents each run their own 2-layer MLP policy (obs 32
 * -> 64 relu -> 8 actions, argmax), batched as one [A,1,32] x [A,32,64] product per layer.
 *   - The context's memory comes from a fixed block the engine owns (a first-fit arena behind a
 *     tl_allocator): the library takes no byte from malloc.
 *   - Each frame's tensors live in a `frame` scope opened TL_FIXED on a budget and reset at the
 *     end of the frame: once warm, a frame makes 0 allocator calls.
 *   - Every 100th frame a burst of 4x the agents would pass the budget: the call returns
 *     TL_E_SCOPE_FULL, nothing is half-done, and the engine recovers by running the burst in
 *     slices that fit (reading each slice's actions before the reset).
 * The same frames run in ambient mode (tensors freed one by one) for comparison; actions must be
 * identical.  Prints per-frame p50 / p99 / max and allocator calls per frame, and with --svg
 * draws both modes' frame times.
 *   frame_loop [--frames N] [--svg out.svg]                 exit 0 when every check holds */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tensorlife/tl.h>

#include "check.h"
#include <time.h>
#include "usage.h"

enum { AGENTS = 256, BURST = 4 * AGENTS, OBS = 32, HIDDEN = 64, ACTIONS = 8, BURST_EVERY = 100 };

/* ---- the engine's memory: one block, first fit, freed blocks reused ------------------------ */
typedef struct arena {
    unsigned char *base;
    size_t size, top;
    struct free_block {
        size_t at, size;
    } freed[4096];
    int nfreed;
    long allocs, frees;
} arena;

static void *arena_alloc(void *user, size_t size, size_t alignment) {
    arena *a = user;
    a->allocs++;
    for (int i = 0; i < a->nfreed; ++i) /* a freed block that fits, aligned */
        if (a->freed[i].size >= size && a->freed[i].at % alignment == 0) {
            void *p = a->base + a->freed[i].at;
            a->freed[i] = a->freed[--a->nfreed];
            return p;
        }
    size_t at = (a->top + alignment - 1) & ~(alignment - 1);
    if (at > a->size || size > a->size - at) return NULL; /* the engine's block is all there is */
    a->top = at + size;
    return a->base + at;
}

static void arena_free(void *user, void *ptr, size_t size) {
    arena *a = user;
    a->frees++;
    if (a->nfreed < 4096) a->freed[a->nfreed++] = (struct free_block){(size_t)((unsigned char *)ptr - a->base), size};
}

/* ---- the agents ------------------------------------------------------------------------------- */
static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static float obs_value(int frame, int agent, int i) {
    return sinf(0.01f * (float)frame + 0.37f * (float)agent + 0.11f * (float)i);
}

typedef struct world {
    tl_context *ctx;
    tl_tensor w1, w2; /* [BURST, OBS, HIDDEN], [BURST, HIDDEN, ACTIONS]: agent i's weights at row i */
    float obs[BURST * OBS];
    int32_t actions[BURST];
} world;

/* Agents [first, first+count): their actions into w->actions.  Every tensor goes to the current
 * target (the frame scope, or ambient); ambient ones are freed here. */
static tl_status policy(world *w, int first, int count, int ambient) {
    const int64_t so[3] = {count, 1, OBS};
    tl_tensor obs, w1, w2, h, r, logits, best, made[8];
    int n = 0;
    tl_status st = tl_tensor_from_data(w->ctx, TL_F32, 3, so, w->obs + (size_t)first * OBS,
                                       sizeof(float) * (size_t)count * OBS, &obs);
    if (st == TL_OK) made[n++] = obs, st = tl_slice(w->ctx, w->w1, 0, first, count, &w1);
    if (st == TL_OK) made[n++] = w1, st = tl_slice(w->ctx, w->w2, 0, first, count, &w2);
    if (st == TL_OK) made[n++] = w2, st = tl_matmul(w->ctx, obs, w1, &h); /* [count,1,HIDDEN] */
    if (st == TL_OK) made[n++] = h, st = tl_relu(w->ctx, h, &r);
    if (st == TL_OK) made[n++] = r, st = tl_matmul(w->ctx, r, w2, &logits); /* [count,1,ACTIONS] */
    if (st == TL_OK) made[n++] = logits, st = tl_argmax(w->ctx, logits, -1, &best);
    if (st == TL_OK)
        made[n++] = best, st = tl_tensor_read(w->ctx, best, w->actions + first, sizeof(int32_t) * (size_t)count);
    if (ambient)
        for (int i = n - 1; i >= 0; --i) tl_tensor_free(w->ctx, made[i]);
    return st;
}

typedef struct run {
    double us[4096];
    long allocs[4096];
    uint32_t checksum[4096];
    int over_budget, recovered;
} run;

static void frame_loop(int frames, int scoped, run *out, const float *w1d, const float *w2d) {
    static arena mem;
    static _Alignas(4096) unsigned char block[96 << 20]; /* the engine's block, page aligned */
    memset(&mem, 0, sizeof mem);
    mem.base = block, mem.size = sizeof block;
    const tl_allocator alloc = {&mem, arena_alloc, arena_free};
    world *w = calloc(1, sizeof *w);
    TL_CHECK(tl_context_create(&alloc, &w->ctx));
    const int64_t s1[3] = {BURST, OBS, HIDDEN}, s2[3] = {BURST, HIDDEN, ACTIONS};
    TL_CHECK(tl_tensor_from_data(w->ctx, TL_F32, 3, s1, w1d, sizeof(float) * BURST * OBS * HIDDEN, &w->w1));
    TL_CHECK(tl_tensor_from_data(w->ctx, TL_F32, 3, s2, w2d, sizeof(float) * BURST * HIDDEN * ACTIONS, &w->w2));
    tl_scope frame = TL_NO_SCOPE;
    if (scoped) {
        /* The budget: a normal frame of AGENTS needs ~170 KB; a burst (~680 KB) does not fit. */
        tl_scope_options o = TL_SCOPE_OPTIONS_INIT;
        o.growth = TL_FIXED;
        o.slab_bytes = 256 << 10;
        TL_CHECK(tl_scope_open_ex(w->ctx, "frame", &o, &frame));
    }
    for (int f = 0; f < frames; ++f) {
        const int agents = f % BURST_EVERY == BURST_EVERY - 1 ? BURST : AGENTS; /* a burst now and then */
        for (int a = 0; a < agents; ++a)
            for (int i = 0; i < OBS; ++i) w->obs[a * OBS + i] = obs_value(f, a, i);
        const long before = mem.allocs;
        const double t0 = now_us();
        tl_status st = policy(w, 0, agents, !scoped);
        if (st == TL_E_SCOPE_FULL) {
            /* Over budget: the failed call changed nothing.  Reset, then run the agents in slices
             * the budget holds, reading each slice's actions before the next reset. */
            ++out->over_budget;
            TL_CHECK(tl_scope_reset(w->ctx, frame));
            for (int first = 0; first < agents; first += AGENTS) {
                TL_CHECK(policy(w, first, AGENTS, 0));
                TL_CHECK(tl_scope_reset(w->ctx, frame));
            }
            ++out->recovered;
        } else {
            TL_CHECK(st);
            if (scoped) TL_CHECK(tl_scope_reset(w->ctx, frame));
        }
        out->us[f] = now_us() - t0;
        out->allocs[f] = mem.allocs - before;
        uint32_t sum = 0; /* unsigned: it wraps by design */
        for (int a = 0; a < agents; ++a) sum = sum * 31u + (uint32_t)w->actions[a];
        out->checksum[f] = sum;
    }
    if (scoped) TL_CHECK(tl_scope_close(w->ctx, frame));
    tl_context_destroy(w->ctx);
    if (mem.allocs != mem.frees) {
        fprintf(stderr, "the engine's block: %ld allocations, %ld frees\n", mem.allocs, mem.frees);
        exit(1);
    }
    free(w);
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void percentiles(const run *r, int frames, double *p50, double *p99, double *max) {
    double *s = malloc(sizeof(double) * (size_t)frames);
    memcpy(s, r->us, sizeof(double) * (size_t)frames);
    qsort(s, (size_t)frames, sizeof *s, compare);
    *p50 = s[frames / 2], *p99 = s[(frames * 99) / 100], *max = s[frames - 1];
    free(s);
}

static void write_svg(const char *path, const run *runs, int frames) {
    FILE *f = fopen(path, "w");
    if (!f) return;
    double top = 1;
    for (int m = 0; m < 2; ++m)
        for (int i = 0; i < frames; ++i) top = runs[m].us[i] > top ? runs[m].us[i] : top;
    const int W = 900, H = 320, L = 60, B = 40;
    fprintf(f,
            "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' font-family='sans-serif' font-size='12'>\n",
            W, H);
    fprintf(f,
            "<rect width='%d' height='%d' fill='white'/>\n<text x='%d' y='18'>frame time (us) per frame: "
            "256 agents, a burst of 1024 every %d frames</text>\n",
            W, H, L, BURST_EVERY);
    const char *colour[2] = {"#d62728", "#1f77b4"}, *name[2] = {"ambient", "scoped (TL_FIXED frame scope)"};
    for (int m = 0; m < 2; ++m) {
        fprintf(f, "<polyline fill='none' stroke='%s' stroke-width='1' points='", colour[m]);
        for (int i = 0; i < frames; ++i)
            fprintf(f, "%.1f,%.1f ", L + (double)(W - L - 20) * i / (frames - 1),
                    H - B - (H - B - 40) * runs[m].us[i] / top);
        fprintf(f, "'/>\n<text x='%d' y='%d' fill='%s'>%s</text>\n", L + 10 + 260 * m, 34, colour[m], name[m]);
    }
    fprintf(f, "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='black'/>\n", L, H - B, W - 20, H - B);
    fprintf(f, "<line x1='%d' y1='40' x2='%d' y2='%d' stroke='black'/>\n", L, L, H - B);
    fprintf(f, "<text x='%d' y='%d'>frame</text><text x='5' y='50'>%.0f us</text><text x='5' y='%d'>0</text>\n", W / 2,
            H - 10, top, H - B);
    fprintf(f, "</svg>\n");
    fclose(f);
}

static const char USAGE[] =
    "usage: frame_loop [--frames N] [--svg out.svg]\n"
    "An engine's frame loop: small policies per frame in a TL_FIXED frame scope over the engine's own\n"
    "memory block, with an over-budget frame recovered; prints per-frame times and allocator calls.\n";

int main(int argc, char **argv) {
    answer_help(argc, argv, USAGE);
    int frames = 600;
    const char *svg = NULL;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--frames") && i + 1 < argc)
            frames = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--svg") && i + 1 < argc)
            svg = argv[++i];
        else
            refuse_argument(argv[i], USAGE);
    }
    if (frames < BURST_EVERY || frames > 4096) frames = 600;
    float *w1 = malloc(sizeof(float) * BURST * OBS * HIDDEN), *w2 = malloc(sizeof(float) * BURST * HIDDEN * ACTIONS);
    unsigned seed = 7;
    for (int i = 0; i < BURST * OBS * HIDDEN; ++i)
        w1[i] = (float)((seed = seed * 1664525u + 1013904223u) >> 8) / 8388608.0f - 1.0f;
    for (int i = 0; i < BURST * HIDDEN * ACTIONS; ++i)
        w2[i] = (float)((seed = seed * 1664525u + 1013904223u) >> 8) / 8388608.0f - 1.0f;
    static run runs[2];
    frame_loop(frames, 0, &runs[0], w1, w2);
    frame_loop(frames, 1, &runs[1], w1, w2);
    printf("frame loop: %d frames of %d agents (a burst of %d every %d), memory from the engine's own block\n\n",
           frames, AGENTS, BURST, BURST_EVERY);
    printf("%-8s %9s %9s %9s %22s %14s\n", "mode", "p50 us", "p99 us", "max us", "allocator calls/frame",
           "over budget");
    long warm_allocs[2] = {0, 0};
    for (int m = 0; m < 2; ++m) {
        for (int i = 1; i < frames; ++i) warm_allocs[m] += runs[m].allocs[i];
        double p50, p99, max;
        percentiles(&runs[m], frames, &p50, &p99, &max);
        printf("%-8s %9.1f %9.1f %9.1f %22.1f %8d (%d recovered)\n", m ? "scoped" : "ambient", p50, p99, max,
               (double)warm_allocs[m] / (frames - 1), runs[m].over_budget, runs[m].recovered);
    }
    int same = 1;
    for (int i = 0; i < frames; ++i) same &= runs[0].checksum[i] == runs[1].checksum[i];
    printf("\nactions: ambient and scoped %s; scoped frames after the first: %ld allocator calls\n",
           same ? "identical" : "DIFFER", warm_allocs[1]);
    if (svg) {
        write_svg(svg, runs, frames);
        printf("chart: %s\n", svg);
    }
    free(w1);
    free(w2);
    const int expected_bursts = frames / BURST_EVERY;
    return same && warm_allocs[1] == 0 && runs[1].over_budget == expected_bursts && runs[1].recovered == expected_bursts
               ? 0
               : 1;
}
