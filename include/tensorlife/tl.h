/* tensorlife: eager tensor math with scoped memory lifetimes.  The umbrella header.
 *
 * Compiles as C99 and as C++.  The contract is documented per function in the pieces below:
 *   tl_base.h     status codes, tl_last_error, versions
 *   tl_context.h  contexts, allocators, scopes and their stats
 *   tl_tensor.h   handles, factories, read/data/info, free, retain
 *   tl_ops.h      the eager ops
 *   tl_io.h       safetensors files, JSON reports and tensors as JSON
 *   tl_text.h     tokenizers: text to token ids and back
 *   tl_model.h    Llama models as a runner: sessions, KV caches, sampling
 */
#ifndef TENSORLIFE_TL_H
#define TENSORLIFE_TL_H

#include "tl_base.h"
#include "tl_context.h"
#include "tl_tensor.h"
#include "tl_ops.h"
#include "tl_io.h"
#include "tl_text.h"
#include "tl_model.h"

#endif
