// Whole UTF-8 characters out of a stream of bytes (tl_text_stream): what a piece leaves
// unfinished is held; what can never finish a character is U+FFFD.
#pragma once
#include <cstddef>

#include "tensorlife/tl_text.h"

namespace tl {

// The text held + bytes[0, n) completes, written to out when out is not null; returns its
// length.  *next_held/*next_count get what stays held.
size_t text_stream_step(const tl_text_stream &s, const char *bytes, size_t n, bool finish, char *out,
                        tl_text_stream *next);

}  // namespace tl
