/*
 * hugind_json.h - the little JSON a C agent needs to talk to the hugind host.
 *
 * Part of the hugind C SDK (hugind.h includes it; it also stands alone).
 * Header-only, no global state, malloc/free only.
 *
 * Writing: a growable buffer (`hugind_buf`) with an escaper that always emits
 * a valid JSON string, whatever bytes it is given. That matters because the
 * host parses every request strictly as UTF-8 JSON: one stray quote or
 * invalid byte in a file name would otherwise turn a request into an
 * InvalidArgument error, or worse, into a different request.
 *
 * Reading: a span-based extractor, not a parser. It finds the raw text of a
 * member of an object (`hugind_json_field`) or of an element of an array
 * (`hugind_json_index`) and decodes string literals (`hugind_json_string`).
 * That is all host replies need. Limits, on purpose:
 *   - it trusts its input to be well-formed JSON (host replies are); on
 *     malformed input it returns NULL rather than crashing, but it does not
 *     report where or why;
 *   - keys are compared byte for byte with their escapes undecoded, so look up
 *     plain ASCII keys (every key of the ABI is one);
 *   - numbers are returned as raw text (`hugind_json_int` reads integers);
 *   - a decoded string containing \u0000 is cut short at that NUL when used
 *     as a C string (`out_len` still gives the full length);
 *   - each lookup rescans from the start: fine for replies, slow for
 *     iterating a 100k-element array (walk it with hugind_json_next instead).
 */
#ifndef HUGIND_JSON_H
#define HUGIND_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- writing -------------------------------------------------------------- */

/* A NUL-terminated growable string. Allocation failure is sticky (`failed`),
   so a request can be built with unchecked appends and checked once. */
typedef struct {
    char *data;
    size_t len, cap;
    int failed;
} hugind_buf;

static inline void hugind_buf_add(hugind_buf *b, const char *s, size_t n) {
    if (b->failed)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = (char *)realloc(b->data, cap);
        if (!p) {
            b->failed = 1;
            return;
        }
        b->data = p;
        b->cap = cap;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

static inline void hugind_buf_str(hugind_buf *b, const char *s) { hugind_buf_add(b, s, strlen(s)); }

static inline void hugind_buf_int(hugind_buf *b, long long v) {
    char tmp[24];
    int i = (int)sizeof(tmp);
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do {
        tmp[--i] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        tmp[--i] = '-';
    hugind_buf_add(b, tmp + i, sizeof(tmp) - (size_t)i);
}

/* Length of the valid UTF-8 sequence at s[0..n), 0 if invalid (overlong forms
   and surrogates count as invalid: Python's decoder refuses them too). */
static inline size_t hugind__utf8_len(const unsigned char *s, size_t n) {
    unsigned char c = s[0];
    size_t need;
    uint32_t cp, min;
    if (c < 0x80)
        return 1;
    if ((c & 0xE0) == 0xC0) { need = 2; cp = c & 0x1F; min = 0x80; }
    else if ((c & 0xF0) == 0xE0) { need = 3; cp = c & 0x0F; min = 0x800; }
    else if ((c & 0xF8) == 0xF0) { need = 4; cp = c & 0x07; min = 0x10000; }
    else return 0;
    if (n < need)
        return 0;
    for (size_t i = 1; i < need; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return need;
}

/* Append `n` bytes of arbitrary text as one quoted JSON string. Quotes,
   backslashes and control bytes are escaped; each invalid UTF-8 byte becomes
   U+FFFD, so the result is always a valid string, never an injection. */
static inline void hugind_buf_quote_n(hugind_buf *b, const char *s, size_t n) {
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)s;
    hugind_buf_add(b, "\"", 1);
    size_t i = 0;
    while (i < n) {
        size_t run = i; /* copy runs of plain bytes in one append */
        while (run < n && p[run] >= 0x20 && p[run] < 0x80 && p[run] != '"' && p[run] != '\\')
            run++;
        hugind_buf_add(b, s + i, run - i);
        if ((i = run) >= n)
            break;
        unsigned char c = p[i];
        if (c == '"' || c == '\\') {
            char esc[2] = {'\\', (char)c};
            hugind_buf_add(b, esc, 2);
            i++;
        } else if (c < 0x20) {
            char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            if (c == '\n') hugind_buf_add(b, "\\n", 2);
            else if (c == '\t') hugind_buf_add(b, "\\t", 2);
            else if (c == '\r') hugind_buf_add(b, "\\r", 2);
            else hugind_buf_add(b, esc, 6);
            i++;
        } else {
            size_t k = hugind__utf8_len(p + i, n - i);
            if (k) hugind_buf_add(b, s + i, k);
            else hugind_buf_add(b, "\xEF\xBF\xBD", 3); /* U+FFFD */
            i += k ? k : 1;
        }
    }
    hugind_buf_add(b, "\"", 1);
}

static inline void hugind_buf_quote(hugind_buf *b, const char *s) { hugind_buf_quote_n(b, s ? s : "", s ? strlen(s) : 0); }

/* Start member `key` of the one object `b` holds: the first member opens the
   object; close it with hugind_buf_str(b, "}"). Follow with the value. */
static inline void hugind_buf_key(hugind_buf *b, const char *key) {
    hugind_buf_str(b, b->len ? "," : "{");
    hugind_buf_quote(b, key);
    hugind_buf_add(b, ":", 1);
}

/* The finished string (caller frees), or NULL if any append ran out of memory. */
static inline char *hugind_buf_finish(hugind_buf *b) {
    if (b->failed || !b->data) {
        free(b->data);
        b->data = NULL;
        return b->failed ? NULL : (char *)calloc(1, 1);
    }
    return b->data;
}

/* `s` as a malloc'd JSON string literal, quotes included. */
static inline char *hugind_json_quote(const char *s) {
    hugind_buf b = {0};
    hugind_buf_quote(&b, s);
    return hugind_buf_finish(&b);
}

/* ---- reading ---------------------------------------------------------------- */

static inline const char *hugind__ws(const char *p, const char *end) {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

/* Skip one JSON value starting at p (no leading whitespace); return the
   first byte after it, or NULL if it is malformed or runs past `end`. */
static inline const char *hugind__skip(const char *p, const char *end) {
    if (p >= end)
        return NULL;
    if (*p == '"') {
        for (p++; p < end; p++) {
            if (*p == '\\') p++;
            else if (*p == '"') return p + 1;
        }
        return NULL;
    }
    if (*p == '{' || *p == '[') {
        int depth = 0; /* brackets only need counting: strings are skipped whole */
        while (p < end) {
            if (*p == '"') {
                if (!(p = hugind__skip(p, end))) return NULL;
                continue;
            }
            if (*p == '{' || *p == '[') depth++;
            else if (*p == '}' || *p == ']') {
                if (--depth == 0) return p + 1;
            }
            p++;
        }
        return NULL;
    }
    const char *start = p; /* number, true, false, null */
    while (p < end && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\n' && *p != '\r' && *p != '\t')
        p++;
    return p > start ? p : NULL;
}

/* Walk a container: call with *cursor == NULL first; each call yields the next
   member (its key span in *key and *key_len for objects, NULL for arrays) and returns
   its value, or NULL at the end. */
static inline const char *hugind_json_next(const char *json, size_t len, const char **cursor, const char **key,
                                           size_t *key_len, size_t *value_len) {
    const char *end = json + len, *p = *cursor;
    if (!p) {
        p = hugind__ws(json, end);
        if (p >= end || (*p != '{' && *p != '['))
            return NULL;
        p++;
    }
    p = hugind__ws(p, end);
    if (p < end && *p == ',')
        p = hugind__ws(p + 1, end);
    if (p >= end || *p == '}' || *p == ']')
        return NULL;
    if (key) *key = NULL;
    if (*p == '"') { /* an object member "key": value (an array of strings is told apart by the ':') */
        const char *k_end = hugind__skip(p, end);
        const char *colon = k_end ? hugind__ws(k_end, end) : NULL;
        if (colon && colon < end && *colon == ':') {
            if (key) { *key = p + 1; *key_len = (size_t)(k_end - p - 2); }
            p = hugind__ws(colon + 1, end);
        }
    }
    const char *after = hugind__skip(p, end);
    if (!after)
        return NULL;
    if (value_len) *value_len = (size_t)(after - p);
    *cursor = after;
    return p;
}

/* The raw value of member `key` of the object json[0..len), or NULL. */
static inline const char *hugind_json_field(const char *json, size_t len, const char *key, size_t *out_len) {
    const char *cur = NULL, *k, *v;
    size_t klen, vlen, want = strlen(key);
    while ((v = hugind_json_next(json, len, &cur, &k, &klen, &vlen))) {
        if (k && klen == want && memcmp(k, key, want) == 0) {
            if (out_len) *out_len = vlen;
            return v;
        }
    }
    return NULL;
}

/* The raw value of element `index` of the array json[0..len), or NULL. */
static inline const char *hugind_json_index(const char *json, size_t len, size_t index, size_t *out_len) {
    const char *cur = NULL, *v;
    size_t vlen;
    while ((v = hugind_json_next(json, len, &cur, NULL, NULL, &vlen))) {
        if (index-- == 0) {
            if (out_len) *out_len = vlen;
            return v;
        }
    }
    return NULL;
}

static inline int hugind__hex4(const char *p, uint32_t *out) {
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (uint32_t)(c - 'A' + 10);
        else return 0;
    }
    *out = v;
    return 1;
}

/* Decode the JSON string literal raw[0..len) into malloc'd, NUL-terminated
   UTF-8 (caller frees). NULL if it is not a string. */
static inline char *hugind_json_string(const char *raw, size_t len, size_t *out_len) {
    if (!raw || len < 2 || raw[0] != '"' || raw[len - 1] != '"')
        return NULL;
    char *out = (char *)malloc(len); /* decoding never grows the text */
    if (!out)
        return NULL;
    size_t o = 0;
    for (size_t i = 1; i + 1 < len; i++) {
        char c = raw[i];
        if (c != '\\') { out[o++] = c; continue; }
        if (++i + 1 >= len) break;
        switch (raw[i]) {
        case 'n': out[o++] = '\n'; break;
        case 't': out[o++] = '\t'; break;
        case 'r': out[o++] = '\r'; break;
        case 'b': out[o++] = '\b'; break;
        case 'f': out[o++] = '\f'; break;
        case 'u': {
            uint32_t cp, lo;
            if (i + 5 > len - 1 || !hugind__hex4(raw + i + 1, &cp)) { free(out); return NULL; }
            i += 4;
            /* a surrogate pair spells one code point; a lone half becomes U+FFFD */
            if (cp >= 0xD800 && cp <= 0xDBFF && i + 7 <= len - 1 && raw[i + 1] == '\\' && raw[i + 2] == 'u' &&
                hugind__hex4(raw + i + 3, &lo) && lo >= 0xDC00 && lo <= 0xDFFF) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                i += 6;
            } else if (cp >= 0xD800 && cp <= 0xDFFF) {
                cp = 0xFFFD;
            }
            if (cp < 0x80) out[o++] = (char)cp;
            else if (cp < 0x800) { out[o++] = (char)(0xC0 | cp >> 6); out[o++] = (char)(0x80 | (cp & 0x3F)); }
            else if (cp < 0x10000) {
                out[o++] = (char)(0xE0 | cp >> 12); out[o++] = (char)(0x80 | ((cp >> 6) & 0x3F));
                out[o++] = (char)(0x80 | (cp & 0x3F));
            } else {
                out[o++] = (char)(0xF0 | cp >> 18); out[o++] = (char)(0x80 | ((cp >> 12) & 0x3F));
                out[o++] = (char)(0x80 | ((cp >> 6) & 0x3F)); out[o++] = (char)(0x80 | (cp & 0x3F));
            }
            break;
        }
        default: out[o++] = raw[i]; /* \" \\ \/ */
        }
    }
    out[o] = '\0';
    if (out_len) *out_len = o;
    return out;
}

/* Member `key` of an object, decoded as a string (caller frees), or NULL. */
static inline char *hugind_json_field_string(const char *json, size_t len, const char *key) {
    size_t vlen;
    const char *v = hugind_json_field(json, len, key, &vlen);
    return v ? hugind_json_string(v, vlen, NULL) : NULL;
}

/* An integer literal raw[0..len) (fractions are cut), or `fallback`. */
static inline long long hugind_json_int(const char *raw, size_t len, long long fallback) {
    if (!raw || !len || !(raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9')))
        return fallback;
    int neg = raw[0] == '-';
    long long v = 0;
    for (size_t i = (size_t)neg; i < len && raw[i] >= '0' && raw[i] <= '9'; i++)
        v = v * 10 + (raw[i] - '0');
    return neg ? -v : v;
}

#endif /* HUGIND_JSON_H */
