// GPT-2's byte-level alphabet: each byte as a printable character (bytes that print stand for
// themselves, the others for U+0100 on, in byte order), so a BPE vocabulary's text is UTF-8.
#pragma once
#include <cstdint>

namespace tl {

struct ByteLevel {
    // Byte b as UTF-8: utf8[b][0..length[b]).
    char utf8[256][2];
    uint8_t length[256];
    // Code point (below 0x144) back to its byte; -1 for one no byte maps to.
    int16_t byte_of[0x144];

    constexpr ByteLevel() : utf8{}, length{}, byte_of{} {
        for (int c = 0; c < 0x144; ++c) byte_of[c] = -1;
        int next = 256;
        for (int b = 0; b < 256; ++b) {
            const bool prints = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            const int cp = prints ? b : next++;
            byte_of[cp] = int16_t(b);
            if (cp < 0x80) {
                utf8[b][0] = char(cp), length[b] = 1;
            } else {
                utf8[b][0] = char(0xC0 | cp >> 6), utf8[b][1] = char(0x80 | (cp & 0x3F)), length[b] = 2;
            }
        }
    }
};

inline constexpr ByteLevel kByteLevel{};

}  // namespace tl
