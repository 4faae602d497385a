// Tokens back to bytes (llama.cpp's token_to_piece with special = true, made once at open) and
// whole id lists back to text (its detokenize: BOS/EOS dropped when asked, the space prefix
// taken off, and BPE vocabularies' clean-up of spaces before punctuation).
#include <cstring>

#include "core/error.h"
#include "llm/byte_level.h"
#include "llm/tokenizer_algorithms.h"

namespace tl {

namespace {

void append_piece(const Vocabulary &v, int32_t id, AllocVector<char> &out) {
    const std::string_view t = v.token(id);
    const uint8_t attr = v.attrs[size_t(id)];
    if (attr & (kTokenUnknown | kTokenControl | kTokenUserDefined)) {
        out.insert(out.end(), t.begin(), t.end());
    } else if (v.kind == VocabKind::sentencepiece && (attr & kTokenNormal)) {
        for (size_t i = 0; i < t.size(); ++i) {
            if (t.compare(i, 3, "\xe2\x96\x81") == 0) {
                out.push_back(' ');
                i += 2;
            } else {
                out.push_back(t[i]);
            }
        }
    } else if (v.kind == VocabKind::sentencepiece && (attr & kTokenByte)) {
        const int byte = byte_of_token_text(t);
        if (byte >= 0) out.push_back(char(byte));
    } else if (v.kind == VocabKind::bpe && (attr & kTokenNormal)) {
        // GPT-2's characters back to bytes; a character outside the alphabet stays as it is.
        const auto *p = reinterpret_cast<const unsigned char *>(t.data());
        for (size_t i = 0; i < t.size();) {
            const size_t len = p[i] < 0x80 ? 1 : p[i] < 0xE0 ? 2 : p[i] < 0xF0 ? 3 : 4;
            const uint32_t cp = len == 1 ? p[i] : len == 2 && i + 1 < t.size() ? (p[i] & 0x1Fu) << 6 | (p[i + 1] & 0x3Fu) : 0x144;
            if (cp < 0x144 && kByteLevel.byte_of[cp] >= 0)
                out.push_back(char(kByteLevel.byte_of[cp]));
            else
                out.insert(out.end(), t.begin() + long(i), t.begin() + long(std::min(t.size(), i + len)));
            i += len;
        }
    }
}

}  // namespace

tl_status make_pieces(const Vocabulary &v, AllocVector<char> &pieces, AllocVector<uint32_t> &starts) {
    pieces.reserve(v.text.size());
    starts.reserve(size_t(v.size()) + 1);
    for (int32_t id = 0; id < v.size(); ++id) {
        starts.push_back(uint32_t(pieces.size()));
        append_piece(v, id, pieces);
    }
    starts.push_back(uint32_t(pieces.size()));
    return TL_OK;
}

size_t detokenize(const tl_tokenizer &t, const int32_t *ids, size_t n, bool remove_special, bool unparse_special,
                  char *out, size_t capacity) {
    const Vocabulary &v = t.vocab;
    bool remove_space = v.add_space_prefix;
    if (remove_special && v.add_bos && n > 0 && ids[0] == v.bos) remove_space = false, ++ids, --n;
    if (remove_special && v.add_eos && n > 0 && ids[n - 1] == v.eos) --n;
    // Written as far as capacity allows; the clean-up below reads what it wrote, so with a
    // short buffer it runs on the prefix and the length is counted without it.
    size_t total = 0;
    for (size_t i = 0; i < n; ++i) {
        std::string_view p = token_piece(t, ids[i], unparse_special);
        if (remove_space && !p.empty() && p[0] == ' ') p.remove_prefix(1);
        remove_space = false;
        if (total < capacity && !p.empty()) std::memcpy(out + total, p.data(), std::min(p.size(), capacity - total));
        total += p.size();
    }
    if (!v.clean_spaces || total > capacity) return total;
    // llama.cpp's three passes: " ?" " !" " ." " ,"; a lone "'" between spaces; " 's" " 'm" " 're" " 've".
    size_t w = total ? 1 : 0;
    for (size_t i = 1; i < total; ++i) {
        const char x = out[i];
        if (out[i - 1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ',')) --w;
        out[w++] = x;
    }
    size_t total2 = w;
    w = total2 ? 1 : 0;
    for (size_t i = 1; i < total2; ++i) {
        const char x = out[i];
        if (x == '\'' && i + 1 < total2 && out[i - 1] == ' ' && out[i + 1] == ' ') {
            --w;
            out[++i] = '\0';
        }
        out[w++] = x;
    }
    const size_t total3 = w;
    w = total3 ? 1 : 0;
    for (size_t i = 1; i < total3; ++i) {
        const char x = out[i];
        if (out[i - 1] == ' ' && x == '\'' && i + 1 < total3) {
            const char x1 = out[i + 1];
            if (x1 == 's' || x1 == 'm')
                --w;
            else if (i + 2 < total3 && ((x1 == 'r' && out[i + 2] == 'e') || (x1 == 'v' && out[i + 2] == 'e')))
                --w;
        }
        out[w++] = x;
    }
    return w;
}

}  // namespace tl
