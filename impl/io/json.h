// JSON through cJSON: scope and context reports, and tensors as {"dtype","shape","data"}.
#pragma once
#include "core/context.h"

namespace tl {

tl_status scope_stats_json(const tl::Scope &scope, char **out);
tl_status context_report_json(tl_context &ctx, char **out);
tl_status tensor_to_json(tl_context &ctx, tl_tensor t, char **out);
tl_status tensor_from_json(tl_context &ctx, const char *json, tl_tensor *out);

}  // namespace tl
