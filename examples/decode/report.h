/* What the demo measured, per step and mode, and the two ways it writes it out. */
#ifndef TL_DECODE_REPORT_H
#define TL_DECODE_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

typedef struct step_record {
    double ms;
    long mallocs;        /* allocator calls during the step */
    size_t bytes_in_use; /* ambient: peak bytes the step held; scoped: slab bytes used */
    size_t slab_bytes, peak_bytes;
    uint64_t grow_events;
    int32_t token;
} step_record;

/* What one mode produced: a record per step, a row of logits per step, the output as text. */
typedef struct mode_result {
    step_record *steps;
    float *logits;
    char *text; /* where the weights carry a vocabulary, else empty */
    size_t text_capacity;
} mode_result;

typedef struct run_record {
    const char *mode;
    step_record *steps;
    int count;
} run_record;

/* 0 on success; -1 with a message on stderr.  prompt_tokens > 0: each run's first record fed
 * that many tokens as one batch (the Llama path), reported with its tokens per second. */
int write_json_report(const char *path, const model_config *cfg, int prompt_tokens, const run_record *runs, int nruns,
                      int identical);
int write_svg_chart(const char *path, const run_record *runs, int nruns);

#endif
