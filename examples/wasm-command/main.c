/*
 * wasm-command: a plain WASI command as a hugind agent (the Javy convention).
 *
 * It does not use the hugind ABI at all: input is JSON on stdin, output is
 * JSON on stdout, and the exit status says whether it worked. Any WASI
 * program that reads stdin and writes stdout runs this way; hugind only
 * grants it WASI preview 1 (no preopened directories, no sockets), so all it
 * can touch is its own memory and its three standard streams.
 *
 *   stdin:  {"text": "some words\nmore words"}
 *   stdout: {"words": 4, "lines": 2, "bytes": 21, "longest_word": "words"}
 *
 * Invalid input is reported on stderr with exit status 2, which the host turns
 * into an agent failure ("Exit: the module exited with status 2").
 *
 * Only hugind_json.h is used (for parsing and escaping), not hugind.h: the
 * module imports nothing but WASI.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hugind_json.h"

#define MAX_INPUT (16u << 20)

static int usage(const char *why) {
    fprintf(stderr, "wasm-command: %s; expected {\"text\": \"...\"} on stdin\n", why);
    return 2;
}

static int is_space(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

int main(void) {
    /* slurp stdin (bounded: the host caps memory anyway, this gives a clear error first) */
    hugind_buf in = {0};
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), stdin)) > 0) {
        hugind_buf_add(&in, chunk, n);
        if (in.len > MAX_INPUT)
            return usage("input larger than 16 MiB");
    }
    char *input = hugind_buf_finish(&in);
    if (!input)
        return usage("out of memory reading the input");

    size_t text_len = 0;
    char *text = hugind_json_field_string(input, strlen(input), "text");
    if (!text) {
        free(input);
        return usage("no \"text\" string in the input");
    }
    /* hugind_json_field_string gave a C string; its true length can differ
       only if the text held \u0000, which simply ends the text here. */
    text_len = strlen(text);

    size_t words = 0, lines = 0, best_at = 0, best_len = 0;
    for (size_t i = 0; i < text_len;) {
        if (text[i] == '\n')
            lines++;
        if (is_space(text[i])) {
            i++;
            continue;
        }
        size_t start = i;
        while (i < text_len && !is_space(text[i]))
            i++;
        words++;
        if (i - start > best_len) {
            best_len = i - start;
            best_at = start;
        }
    }
    if (text_len && text[text_len - 1] != '\n')
        lines++;

    hugind_buf out = {0};
    hugind_buf_str(&out, "{\"words\":");
    hugind_buf_int(&out, (long long)words);
    hugind_buf_str(&out, ",\"lines\":");
    hugind_buf_int(&out, (long long)lines);
    hugind_buf_str(&out, ",\"bytes\":");
    hugind_buf_int(&out, (long long)text_len);
    hugind_buf_str(&out, ",\"longest_word\":");
    hugind_buf_quote_n(&out, text + best_at, best_len);
    hugind_buf_str(&out, "}\n");
    char *result = hugind_buf_finish(&out);
    free(text);
    free(input);
    if (!result)
        return usage("out of memory writing the output");
    fputs(result, stdout);
    free(result);
    return 0;
}
