/* The demo's text path: --prompt "text" through the library's model runner (tl_model.h). */
#ifndef TL_DECODE_CHAT_H
#define TL_DECODE_CHAT_H

#include <tensorlife/tl.h>

typedef struct chat_options {
    const char *model_path, *prompt;
    int tokens;             /* at most this many generated */
    tl_sampler sampler;     /* --temperature, --top-k, --top-p, --min-p, --repeat-penalty, --sample-seed */
    tl_dtype kv_dtype;
    const tl_executor *executor; /* NULL: one thread */
} chat_options;

/* Tokenizes the prompt with the model's vocabulary, feeds it as one batch, then generates and
 * prints the text as it comes; reports the prompt's and the generated ids, the prompt's time and
 * tokens per second, ms per generated token and the allocator calls once warm (which must be
 * 0).  Returns the process's exit status. */
int run_chat(const chat_options *o);

#endif
