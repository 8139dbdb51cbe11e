/*
 * Test guest (WASI command): exercises hugind_json.h on many inputs per run.
 * stdin is a sequence of records, each a 4-byte little-endian length then
 * that many bytes; argv[1] picks what is done to each record, and stdout gets
 * one line per record:
 *   quote   the record's bytes as a JSON string literal
 *   decode  the record is a JSON string literal: decode it, quote it again
 *   field   the record is "KEY\0JSON": the raw value of member KEY, or <none>
 *   index   the record is "N\0JSON": the raw value of element N, or <none>
 * Quoted output never holds a raw newline, so one record is one line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hugind_json.h"

int main(int argc, char **argv) {
    if (argc < 2)
        return 2;
    const char *mode = argv[1];
    unsigned char head[4];
    while (fread(head, 1, 4, stdin) == 4) {
        size_t len = head[0] | head[1] << 8 | head[2] << 16 | (size_t)head[3] << 24;
        char *rec = malloc(len + 1);
        if (!rec || fread(rec, 1, len, stdin) != len)
            return 3;
        rec[len] = '\0';
        hugind_buf out = {0};
        if (strcmp(mode, "quote") == 0) {
            hugind_buf_quote_n(&out, rec, len);
        } else if (strcmp(mode, "decode") == 0) {
            size_t n;
            char *s = hugind_json_string(rec, len, &n);
            if (s)
                hugind_buf_quote_n(&out, s, n);
            else
                hugind_buf_str(&out, "<none>");
            free(s);
        } else {
            size_t klen = strlen(rec), vlen = 0;
            const char *json = rec + klen + 1, *v;
            size_t jlen = len - klen - 1;
            if (strcmp(mode, "field") == 0)
                v = hugind_json_field(json, jlen, rec, &vlen);
            else
                v = hugind_json_index(json, jlen, (size_t)atoi(rec), &vlen);
            if (v)
                hugind_buf_add(&out, v, vlen);
            else
                hugind_buf_str(&out, "<none>");
        }
        hugind_buf_str(&out, "\n");
        char *line = hugind_buf_finish(&out);
        if (!line)
            return 4;
        fputs(line, stdout);
        free(line);
        free(rec);
    }
    return 0;
}
