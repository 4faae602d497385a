/* tokenize: text to token ids and back with a GGUF file's vocabulary, as llama.cpp's
 * llama-tokenize does it.
 *
 *   tokenize --model F [--text-file F] [--json-lines] [--add-special] [--parse-special] [--pieces]
 *   tokenize --model F --ids 1,2,3 [--parse-special]
 *
 * Each input line (from --text-file or standard input; with --json-lines each line is a JSON
 * string, so that it may hold newlines) prints one JSON line: {"ids":[...],"text":"..."} with
 * text the ids detokenized again, and with --pieces each id's bytes as text.  --ids prints the
 * text of the ids.  A failure prints the library's message and exits 1. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tensorlife/tl.h>

#include "check.h"
#include "usage.h"

static const char usage[] =
    "usage: tokenize --model F [--text-file F] [--json-lines] [--add-special] [--parse-special] [--pieces]\n"
    "       tokenize --model F --ids 1,2,3 [--parse-special]\n";

typedef struct options {
    const char *model, *text_file, *ids;
    int json_lines, add_special, parse_special, pieces;
} options;

static void print_json_string(const char *s, size_t n) {
    char *copy = tl_check_alloc(malloc(n + 1), "text");
    memcpy(copy, s, n);
    copy[n] = 0;
    cJSON *item = cJSON_CreateString(copy);
    char *text = cJSON_PrintUnformatted(item);
    fputs(text ? text : "null", stdout);
    free(text), cJSON_Delete(item), free(copy);
}

/* One line of text: its ids, the ids' text, and with --pieces each id's bytes. */
static void tokenize_line(tl_tokenizer *t, const options *o, const char *text, size_t n) {
    const unsigned flags = (o->add_special ? TL_TOKENIZE_ADD_SPECIAL : 0) | (o->parse_special ? TL_TOKENIZE_PARSE_SPECIAL : 0);
    size_t count = 0, length = 0;
    TL_CHECK(tl_tokenize(t, text, n, flags, NULL, 0, &count));
    int32_t *ids = tl_check_alloc(malloc(sizeof(int32_t) * (count + 1)), "ids");
    TL_CHECK(tl_tokenize(t, text, n, flags, ids, count, &count));
    const unsigned back = o->parse_special ? TL_DETOKENIZE_UNPARSE_SPECIAL : 0;
    TL_CHECK(tl_detokenize(t, ids, count, back, NULL, 0, &length));
    char *out = tl_check_alloc(malloc(length + 1), "text");
    TL_CHECK(tl_detokenize(t, ids, count, back, out, length + 1, &length));
    fputs("{\"ids\":[", stdout);
    for (size_t i = 0; i < count; ++i) printf("%s%d", i ? "," : "", ids[i]);
    fputs("],\"text\":", stdout);
    print_json_string(out, length);
    if (o->pieces) {
        fputs(",\"pieces\":[", stdout);
        for (size_t i = 0; i < count; ++i) {
            const char *piece;
            size_t len;
            TL_CHECK(tl_token_piece(t, ids[i], 1, &piece, &len));
            if (i) putchar(',');
            print_json_string(piece, len);
        }
        putchar(']');
    }
    puts("}");
    free(ids), free(out);
}

/* The next line of in without its newline, into *line (grown as needed): its length, or -1 at
 * the end.  (getline is POSIX only.) */
static long read_line(FILE *in, char **line, size_t *cap) {
    size_t n = 0;
    for (int c; (c = fgetc(in)) != EOF;) {
        if (n + 2 > *cap) {
            *cap = *cap ? *cap * 2 : 256;
            *line = tl_check_alloc(realloc(*line, *cap), "line");
        }
        if (c == '\n') break;
        (*line)[n++] = (char)c;
        (*line)[n] = 0;
    }
    if (n == 0 && feof(in)) return -1;
    if (*line) (*line)[n] = 0;
    return (long)n;
}

static int detokenize_ids(tl_tokenizer *t, const options *o) {
    size_t n = 0, cap = strlen(o->ids) / 2 + 1, length;
    int32_t *ids = tl_check_alloc(malloc(sizeof(int32_t) * cap), "ids");
    for (const char *p = o->ids; *p;) {
        char *end;
        const long v = strtol(p, &end, 10);
        if (end == p || (*end && *end != ',')) {
            fprintf(stderr, "tokenize: --ids wants numbers separated by commas\n");
            return 1;
        }
        ids[n++] = (int32_t)v;
        p = *end ? end + 1 : end;
    }
    const unsigned flags = o->parse_special ? TL_DETOKENIZE_UNPARSE_SPECIAL : 0;
    TL_CHECK(tl_detokenize(t, ids, n, flags, NULL, 0, &length));
    char *text = tl_check_alloc(malloc(length + 1), "text");
    TL_CHECK(tl_detokenize(t, ids, n, flags, text, length + 1, &length));
    fwrite(text, 1, length, stdout);
    putchar('\n');
    free(ids), free(text);
    return 0;
}

static int parse(int argc, char **argv, options *o) {
    memset(o, 0, sizeof *o);
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        const int has_value = i + 1 < argc;
        if (!strcmp(a, "--model") && has_value) o->model = argv[++i];
        else if (!strcmp(a, "--text-file") && has_value) o->text_file = argv[++i];
        else if (!strcmp(a, "--ids") && has_value) o->ids = argv[++i];
        else if (!strcmp(a, "--json-lines")) o->json_lines = 1;
        else if (!strcmp(a, "--add-special")) o->add_special = 1;
        else if (!strcmp(a, "--parse-special")) o->parse_special = 1;
        else if (!strcmp(a, "--pieces")) o->pieces = 1;
        else return -1;
    }
    return o->model ? 0 : -1;
}

int main(int argc, char **argv) {
    options o;
    answer_help(argc, argv, usage);
    if (parse(argc, argv, &o)) {
        fputs(usage, stderr);
        return 2;
    }
    tl_context *ctx;
    tl_gguf_file *f;
    tl_tokenizer *t;
    TL_CHECK(tl_context_create(NULL, &ctx));
    TL_CHECK(tl_gguf_open(ctx, o.model, &f));
    TL_CHECK(tl_tokenizer_open(ctx, f, &t));
    tl_gguf_close(f); /* the tokenizer keeps its own copy of the vocabulary */
    int rc = 0;
    if (o.ids) {
        rc = detokenize_ids(t, &o);
    } else {
        FILE *in = o.text_file ? fopen(o.text_file, "rb") : stdin;
        if (!in) {
            fprintf(stderr, "tokenize: cannot open %s\n", o.text_file);
            return 1;
        }
        char *line = NULL;
        size_t cap = 0;
        long n;
        while ((n = read_line(in, &line, &cap)) >= 0) {
            if (!o.json_lines) {
                tokenize_line(t, &o, n ? line : "", (size_t)n);
                continue;
            }
            if (n == 0) continue;
            cJSON *s = cJSON_Parse(line);
            if (!cJSON_IsString(s)) {
                fprintf(stderr, "tokenize: a line is not a JSON string: %s\n", line);
                return 1;
            }
            tokenize_line(t, &o, s->valuestring, strlen(s->valuestring));
            cJSON_Delete(s);
        }
        free(line);
        if (in != stdin) fclose(in);
    }
    tl_tokenizer_close(t);
    tl_context_destroy(ctx);
    return rc;
}
