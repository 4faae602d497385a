/* tensorlife: text to token ids and back.  Part of <tensorlife/tl.h>.
 *
 * A tokenizer is read from a GGUF file's tokenizer.ggml.* metadata and tokenizes as llama.cpp
 * does for the same file: SentencePiece-style vocabularies ("llama": scores, byte fallback
 * <0xXX>, the space prefix) and byte-level BPE ("gpt2": ranked merges after the pre-tokenizer
 * tokenizer.ggml.pre names: "llama-bpe" (Llama 3), "gpt-2", "default").  Special tokens in the
 * text (control tokens such as <|eot_id|>) become their ids only with TL_TOKENIZE_PARSE_SPECIAL;
 * user-defined tokens always do.  A vocabulary whose arrays disagree, whose merges name unknown
 * tokens or whose tokenizer is of another kind is refused at open, named in the message.
 *
 * Every byte a tokenizer keeps comes from the context's allocator (PCRE2's included); it keeps
 * its own copy of the allocator, so it may outlive the context and the GGUF file.  One tokenizer
 * may be used from several threads at once (calls take its lock); tokenizing again needs no new
 * memory once a text as long has been seen. */
#ifndef TENSORLIFE_TL_TEXT_H
#define TENSORLIFE_TL_TEXT_H

#include "tl_io.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tl_tokenizer tl_tokenizer;

/* tl_tokenize's flags: add the BOS (and EOS) the vocabulary asks for; parse control tokens. */
#define TL_TOKENIZE_ADD_SPECIAL 1u
#define TL_TOKENIZE_PARSE_SPECIAL 2u
/* tl_detokenize's flags: drop a leading BOS and trailing EOS the vocabulary adds; print control
 * tokens' text (else they print as nothing). */
#define TL_DETOKENIZE_REMOVE_SPECIAL 1u
#define TL_DETOKENIZE_UNPARSE_SPECIAL 2u

TL_API tl_status tl_tokenizer_open(tl_context *ctx, const tl_gguf_file *f, tl_tokenizer **out);
/* NULL is a no-op. */
TL_API void tl_tokenizer_close(tl_tokenizer *t);
/* Number of tokens (0 for NULL). */
TL_API int32_t tl_tokenizer_vocab_size(const tl_tokenizer *t);

typedef enum tl_special_token {
    TL_TOKEN_BOS = 0,
    TL_TOKEN_EOS = 1,
    TL_TOKEN_EOT = 2, /* end of turn (<|eot_id|>), where the vocabulary has one */
    TL_TOKEN_UNK = 3,
    TL_SPECIAL_TOKEN_FORCE_INT32_ = 0x7fffffff
} tl_special_token;
/* The id, or -1 when the vocabulary has none (or t is NULL). */
TL_API int32_t tl_tokenizer_special(const tl_tokenizer *t, tl_special_token which);
/* 1 when id ends generation (EOS, EOT and the tokens llama.cpp counts with them), else 0. */
TL_API int tl_tokenizer_is_end(const tl_tokenizer *t, int32_t id);

/* The ids of text (length bytes of valid UTF-8; invalid UTF-8 is TL_E_INVALID_ARGUMENT naming the
 * byte).  *count is the number of ids.  With ids NULL and capacity 0 only *count is set; a
 * capacity below the count is TL_E_INVALID_ARGUMENT.  No text makes more than 3 * length + 4 ids. */
TL_API tl_status tl_tokenize(tl_tokenizer *t, const char *text, size_t length, unsigned flags, int32_t *ids,
                             size_t capacity, size_t *count);
/* The bytes token id stands for (a piece may hold part of a UTF-8 character: join pieces, or
 * pass them through a tl_text_stream); control and unknown tokens are empty unless special is
 * non-zero.  *piece points into the tokenizer, valid until it is closed. */
TL_API tl_status tl_token_piece(const tl_tokenizer *t, int32_t id, int special, const char **piece, size_t *length);
/* The vocabulary's own text of token id (SentencePiece's U+2581 spaces, BPE's byte characters). */
TL_API tl_status tl_token_text(const tl_tokenizer *t, int32_t id, const char **text, size_t *length);
/* The text of n ids, as llama.cpp's llama_detokenize makes it.  *length is its length; it is
 * written NUL-terminated when capacity > *length.  With text NULL and capacity 0 only *length is
 * set (for BPE vocabularies, which clean spaces before punctuation, a bound the text may come
 * under); a smaller capacity is TL_E_INVALID_ARGUMENT. */
TL_API tl_status tl_detokenize(tl_tokenizer *t, const int32_t *ids, size_t n, unsigned flags, char *text,
                               size_t capacity, size_t *length);

/* Bytes in, whole UTF-8 characters out: a character cut between two pieces is held until its
 * last byte comes; a byte that can begin no character, or a character cut short by another,
 * comes out as U+FFFD.  Zero it (TL_TEXT_STREAM_INIT) to start. */
typedef struct tl_text_stream {
    unsigned char held[4];
    uint32_t count;
} tl_text_stream;
#define TL_TEXT_STREAM_INIT {{0, 0, 0, 0}, 0}
/* The characters completed by n more bytes, NUL-terminated into out.  3 * (n + 4) + 1 bytes of
 * capacity always suffice; less than the text needs is TL_E_INVALID_ARGUMENT, the stream unchanged. */
TL_API tl_status tl_text_stream_push(tl_text_stream *s, const char *bytes, size_t n, char *out, size_t capacity,
                                     size_t *length);
/* The end of the text: a character still held comes out as U+FFFD; the stream is zeroed. */
TL_API tl_status tl_text_stream_finish(tl_text_stream *s, char *out, size_t capacity, size_t *length);

#ifdef __cplusplus
}
#endif
#endif
