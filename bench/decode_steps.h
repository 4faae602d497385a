/* The decode benchmarks' unit of work: `steps` decode steps of one decoder, greedy from token 1. */
#ifndef TL_BENCH_DECODE_STEPS_H
#define TL_BENCH_DECODE_STEPS_H
#include "model.h"

typedef struct decode_case {
    decoder d;
    int steps;
} decode_case;

static void run_steps(void *arg) {
    decode_case *c = arg;
    int32_t token = 1;
    for (int pos = 0; pos < c->steps; ++pos) token = decoder_step(&c->d, token, pos, NULL);
}
#endif
