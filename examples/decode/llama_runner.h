/* The demo's Llama path: the library's model runner (tl_model.h) in one memory mode. */
#ifndef TL_DECODE_LLAMA_RUNNER_H
#define TL_DECODE_LLAMA_RUNNER_H

#include <tensorlife/tl.h>

#include "model.h"
#include "report.h"

typedef struct llama_run {
    const char *model_path;      /* a GGUF file or a Hugging Face folder */
    tl_dtype weights_dtype;      /* 0: as the file stores them; else converted at open */
    const int32_t *prompt;       /* at least one id, fed as one batch */
    int prompt_len;
    int tokens;                  /* positions in all: the session's context */
    tl_dtype kv_dtype;
    const tl_executor *executor; /* NULL: one thread */
    int repack;                  /* tl_model_options.repack */
} llama_run;

/* A model and a session (ambient, or scoped) in a fresh context whose allocator counts:
 * out->steps[0] is the prompt's feed, out->steps[k] the k-th greedy token's, each with the
 * logits after it; out->text the generated tokens' text where the model has a vocabulary.
 * Returns the number of records, tokens - prompt_len + 1.  A refused call ends the program. */
int llama_run_mode(const llama_run *r, memory_mode mode, mode_result *out);

/* The model's shape (a probe open, no session): exits 1 with the library's message when the
 * file is no Llama model. */
void llama_describe(const char *model_path, model_config *cfg);

#endif
