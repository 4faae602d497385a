#include "llm/text_stream.h"

#include <cstring>

namespace tl {

namespace {

// The length of the character lead begins, 0 for a byte that begins none; and the range its
// second byte must lie in (UTF-8's rules against overlong forms and surrogates).
size_t expected_length(unsigned char lead, unsigned char *low, unsigned char *high) {
    *low = 0x80, *high = 0xBF;
    if (lead < 0x80) return 1;
    if (lead >= 0xC2 && lead <= 0xDF) return 2;
    if (lead >= 0xE0 && lead <= 0xEF) {
        if (lead == 0xE0) *low = 0xA0;
        if (lead == 0xED) *high = 0x9F;
        return 3;
    }
    if (lead >= 0xF0 && lead <= 0xF4) {
        if (lead == 0xF0) *low = 0x90;
        if (lead == 0xF4) *high = 0x8F;
        return 4;
    }
    return 0;
}

}  // namespace

size_t text_stream_step(const tl_text_stream &s, const char *bytes, size_t n, bool finish, char *out,
                        tl_text_stream *next) {
    static const char kReplacement[] = "\xEF\xBF\xBD";
    const size_t held = s.count < 4 ? s.count : 0;
    const size_t total = held + n;
    auto at = [&](size_t i) { return (unsigned char)(i < held ? s.held[i] : (unsigned char)bytes[i - held]); };
    size_t written = 0;
    auto emit = [&](const unsigned char *p, size_t len) {
        if (out) std::memcpy(out + written, p, len);
        written += len;
    };
    tl_text_stream rest = TL_TEXT_STREAM_INIT;
    for (size_t i = 0; i < total;) {
        unsigned char low, high, c[4] = {at(i), 0, 0, 0};
        const size_t len = expected_length(c[0], &low, &high);
        size_t k = 1;
        for (; len && k < len && i + k < total; ++k) {
            c[k] = at(i + k);
            if (c[k] < (k == 1 ? low : 0x80) || c[k] > (k == 1 ? high : 0xBF)) break;
        }
        if (len && k == len) {
            emit(c, len);
            i += len;
        } else if (len && i + k == total && !finish) {  // a valid start, cut by the end of what came
            for (size_t j = 0; j < k; ++j) rest.held[j] = c[j];
            rest.count = uint32_t(k);
            break;
        } else {
            emit(reinterpret_cast<const unsigned char *>(kReplacement), 3);
            ++i;  // the bytes after the bad one start again
            if (len) i += k - 1;
        }
    }
    *next = rest;
    return written;
}

}  // namespace tl
