// The pre-tokenizers' expressions are llama.cpp's, with one change: \s and \S spelled out as the
// characters llama.cpp counts as white space (tab to CR, NEL, and Unicode's separators), which
// PCRE2's \s would take without NEL.
#define PCRE2_CODE_UNIT_WIDTH 8
#include "llm/pretokenizer.h"

#include <pcre2.h>

#include <cstring>

#include "core/error.h"

namespace tl {

namespace {

#define TL_WS "\\t\\n\\x{0B}\\f\\r\\x{85}\\p{Z}"
const char *const kLlama3[] = {
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}"
    "| ?[^" TL_WS "\\p{L}\\p{N}]+[\\r\\n]*|[" TL_WS "]*[\\r\\n]+|[" TL_WS "]+(?![^" TL_WS "])|[" TL_WS "]+"};
#define TL_GPT2 "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^" TL_WS "\\p{L}\\p{N}]+|[" TL_WS "]+(?![^" TL_WS "])"
const char *const kGpt2[] = {TL_GPT2};
const char *const kFallback[] = {"[\\p{P}\\$\\+<=>\\^~\\|]+", TL_GPT2, "\\p{N}+", "[0-9][0-9][0-9]"};
#undef TL_GPT2
#undef TL_WS

// PCRE2's memory from the tokenizer's allocator; PCRE2 frees without a size, so each block
// carries its own in front.
constexpr size_t kHeader = alignof(std::max_align_t);
void *regex_alloc(size_t size, void *memory) {
    if (size > size_t(-1) - kHeader) return nullptr;
    auto *p = static_cast<std::byte *>(static_cast<Memory *>(memory)->allocate(size + kHeader));
    if (!p) return nullptr;
    std::memcpy(p, &size, sizeof size);
    return p + kHeader;
}
void regex_free(void *ptr, void *memory) {
    if (!ptr) return;
    std::byte *p = static_cast<std::byte *>(ptr) - kHeader;
    size_t size;
    std::memcpy(&size, p, sizeof size);
    static_cast<Memory *>(memory)->release(p, size + kHeader);
}

}  // namespace

SplitScratch::~SplitScratch() { pcre2_match_data_free(match); }

PreTokenizerRegex::PreTokenizerRegex(Memory *m) : memory_(m) {}

PreTokenizerRegex::~PreTokenizerRegex() {
    for (int i = 0; i < count_; ++i) pcre2_code_free(codes_[i]);
    pcre2_general_context_free(general_);
}

tl_status PreTokenizerRegex::compile(PreTokenizer which) {
    const char *const *patterns = nullptr;
    int n = 0;
    switch (which) {
        case PreTokenizer::none: return TL_OK;
        case PreTokenizer::llama3: patterns = kLlama3, n = 1; break;
        case PreTokenizer::gpt2: patterns = kGpt2, n = 1; break;
        case PreTokenizer::fallback: patterns = kFallback, n = 4; break;
    }
    general_ = pcre2_general_context_create(regex_alloc, regex_free, memory_);
    if (!general_) return allocation_refused("no memory for the pre-tokenizer");
    pcre2_compile_context *cc = pcre2_compile_context_create(general_);
    if (!cc) return allocation_refused("no memory for the pre-tokenizer");
    for (; count_ < n; ++count_) {
        int code;
        PCRE2_SIZE at;
        codes_[count_] = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(patterns[count_]), PCRE2_ZERO_TERMINATED,
                                       PCRE2_UTF | PCRE2_UCP | PCRE2_NO_UTF_CHECK, &code, &at, cc);
        if (!codes_[count_]) {
            pcre2_compile_context_free(cc);
            if (code == PCRE2_ERROR_HEAP_FAILED) return allocation_refused("no memory for the pre-tokenizer");
            PCRE2_UCHAR message[160];
            pcre2_get_error_message(code, message, sizeof message);
            return fail(TL_E_INTERNAL, "pre-tokenizer: PCRE2 refused expression %d at %zu: %s", count_, size_t(at),
                        reinterpret_cast<const char *>(message));
        }
        pcre2_jit_compile(codes_[count_], PCRE2_JIT_COMPLETE);  // without a JIT, pcre2_match interprets
    }
    pcre2_compile_context_free(cc);
    return TL_OK;
}

tl_status PreTokenizerRegex::split(std::string_view text, SplitScratch &scratch, AllocVector<Piece> &out,
                                   AllocVector<Piece> &work) const {
    out.clear();
    out.push_back({0, text.size()});
    if (text.empty() || count_ == 0) return TL_OK;
    if (!scratch.match) {
        scratch.match = pcre2_match_data_create(8, general_);
        if (!scratch.match) return allocation_refused("no memory for the pre-tokenizer's match data");
    }
    const auto *subject = reinterpret_cast<PCRE2_SPTR>(text.data());
    for (int r = 0; r < count_; ++r) {
        work.clear();
        for (const Piece &p : out) {
            size_t done = 0;  // within p
            while (done < p.length) {
                const int rc = pcre2_match(codes_[r], subject + p.offset, p.length, done, PCRE2_NO_UTF_CHECK,
                                           scratch.match, nullptr);
                if (rc == PCRE2_ERROR_NOMATCH) break;
                if (rc == PCRE2_ERROR_NOMEMORY || rc == PCRE2_ERROR_HEAP_FAILED)
                    return allocation_refused("no memory for the pre-tokenizer's match");
                if (rc < 0) return fail(TL_E_INTERNAL, "pre-tokenizer: PCRE2 match failed (%d)", rc);
                const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(scratch.match);
                if (ov[1] == ov[0]) {  // these expressions match no empty text; step a character on to be safe
                    for (++done; done < p.length && (uint8_t(text[p.offset + done]) & 0xC0) == 0x80;) ++done;
                    continue;
                }
                if (ov[0] > done) work.push_back({p.offset + done, ov[0] - done});
                work.push_back({p.offset + ov[0], ov[1] - ov[0]});
                done = ov[1];
            }
            if (done < p.length) work.push_back({p.offset + done, p.length - done});
        }
        out.swap(work);
    }
    work.reserve(out.capacity());  // both buffers as large, so the next text's swaps need no more
    return TL_OK;
}

}  // namespace tl
