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

typedef struct run_record {
    const char *mode;
    step_record *steps;
    int count;
} run_record;

/* 0 on success; -1 with a message on stderr. */
int write_json_report(const char *path, const model_config *cfg, const run_record *runs, int nruns, int identical);
int write_svg_chart(const char *path, const run_record *runs, int nruns);

#endif
