/*
 * hugind JS engine: a thin C layer over QuickJS-NG, compiled to a
 * wasm32-wasi reactor. It is the first guest of the hugind host ABI v1
 * (runtimes/wasm/ABI.md).
 *
 * The C side stays small on purpose: it owns the runtime, the module loader
 * (which asks the host to resolve and load every import, so the import rules
 * are enforced in Python, in one place), the bridge of the sync and async
 * host calls, UTF-8 and raw stdio. Everything agents see as globals is
 * written in JS in prelude.js, on top of the `native` object built here.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "quickjs.h"
#include "prelude.h" /* generated: hugind_prelude_src[], hugind_prelude_len */

extern const JSMallocFunctions hugind_malloc_functions; /* engine_alloc.c */

#define HUGIND_ABI_VERSION 1

/* ---- imports of module "hugind" (see ABI.md) ---------------------------- */

#ifndef HUGIND_STANDALONE
__attribute__((import_module("hugind"), import_name("call")))
int32_t hugind_host_call(const uint8_t *req, int32_t req_len);

__attribute__((import_module("hugind"), import_name("call_into")))
int32_t hugind_host_call_into(const uint8_t *req, int32_t req_len, uint8_t *dst, int32_t cap);

__attribute__((import_module("hugind"), import_name("take")))
int32_t hugind_host_take(uint8_t *dst, int32_t cap);

__attribute__((import_module("hugind"), import_name("submit")))
int32_t hugind_host_submit(const uint8_t *req, int32_t req_len);
#else
/* A standalone build has no hugind host: the same three calls are answered
   inside the engine (the HUGIND_STANDALONE section at the end of this file). */
static int32_t hugind_host_call(const uint8_t *req, int32_t req_len);
static int32_t hugind_host_take(uint8_t *dst, int32_t cap);
static int32_t hugind_host_submit(const uint8_t *req, int32_t req_len);

/* call_into over the in-engine call/take: same contract as the host import
   (the reply lands in dst when it fits, else it waits for take). */
static int32_t hugind_host_call_into(const uint8_t *req, int32_t req_len, uint8_t *dst, int32_t cap) {
    int32_t n = hugind_host_call(req, req_len);
    if (n > 0 && n <= cap && hugind_host_take(dst, n) != n)
        return -3; /* E_NO_RESPONSE: the mailbox lost the reply */
    return n;
}
#endif

/* ---- engine state ------------------------------------------------------- */

static JSRuntime *rt;
static JSContext *ctx;
static JSValue entry_fn; /* the prelude's dispatcher, called by every export */

/* Report a failure of the engine itself (not of agent code) on stderr. */
static void engine_fatal(const char *what) {
    static const char prefix[] = "hugind-js: ";
    write(2, prefix, sizeof(prefix) - 1);
    write(2, what, strlen(what));
    write(2, "\n", 1);
}

/* ---- host call bridge --------------------------------------------------- */

/* Replies that fit here (most: a bool, a short path, a small JSON value)
   cost one crossing: call_into writes them straight into it. */
#define EXCHANGE_BYTES 16384
static uint8_t exchange[EXCHANGE_BYTES];

/* Sync calls that report to the host (agent.*, tool.*), counted: a batch of
   completions stops after the one whose callbacks reported, since the host
   may be waiting for exactly that (hugind_complete_many). */
static uint32_t reports_made;

static int is_report(const char *req, size_t len) {
    static const char agent[] = "{\"op\":\"agent.", tool[] = "{\"op\":\"tool.";
    return (len >= sizeof(agent) - 1 && memcmp(req, agent, sizeof(agent) - 1) == 0) ||
           (len >= sizeof(tool) - 1 && memcmp(req, tool, sizeof(tool) - 1) == 0);
}

/* Perform one synchronous host call; returns the response as a JS string. */
static JSValue host_call_str(JSContext *c, const char *req, size_t req_len) {
    if (is_report(req, req_len))
        reports_made++;
    int32_t n = hugind_host_call_into((const uint8_t *)req, (int32_t)req_len, exchange, EXCHANGE_BYTES);
    if (n < 0)
        return JS_ThrowInternalError(c, "host call rejected by the ABI (%d)", n);
    if (n <= EXCHANGE_BYTES)
        return JS_NewStringLen(c, (const char *)exchange, (size_t)n);
    /* Too big for the exchange buffer: the reply waits in the mailbox. */
    char *buf = malloc((size_t)n + 1);
    if (!buf)
        return JS_ThrowOutOfMemory(c);
    int32_t got = hugind_host_take((uint8_t *)buf, n);
    if (got != n) {
        free(buf);
        return JS_ThrowInternalError(c, "host response truncated");
    }
    JSValue s = JS_NewStringLen(c, buf, (size_t)n);
    free(buf);
    return s;
}

static JSValue js_native_call(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv) {
    size_t len;
    const char *req = JS_ToCStringLen(c, &len, argv[0]);
    if (!req)
        return JS_EXCEPTION;
    JSValue res = host_call_str(c, req, len);
    JS_FreeCString(c, req);
    return res;
}

/* native.submit(request) -> op id. The prelude keeps the promise for each
   id; its completion comes back through hugind_complete. */
static JSValue js_native_submit(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv) {
    size_t len;
    const char *req = JS_ToCStringLen(c, &len, argv[0]);
    if (!req)
        return JS_EXCEPTION;
    int32_t op_id = hugind_host_submit((const uint8_t *)req, (int32_t)len);
    JS_FreeCString(c, req);
    if (op_id <= 0)
        return JS_ThrowInternalError(c, "async host call rejected by the ABI (%d)", op_id);
    return JS_NewInt32(c, op_id);
}

/* ---- raw stdio (WASI fds) ----------------------------------------------- */

static int write_all(int fd, const uint8_t *buf, size_t len) {
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n <= 0)
            return -1;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* native.write(fd, string | Uint8Array) -> bytes written */
static JSValue js_native_write(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv) {
    int32_t fd;
    if (JS_ToInt32(c, &fd, argv[0]))
        return JS_EXCEPTION;
    if (fd != 1 && fd != 2)
        return JS_ThrowRangeError(c, "can only write to fd 1 (stdout) or 2 (stderr), not %d", fd);
    size_t len;
    if (JS_IsString(argv[1])) {
        const char *s = JS_ToCStringLen(c, &len, argv[1]);
        if (!s)
            return JS_EXCEPTION;
        int rc = write_all(fd, (const uint8_t *)s, len);
        JS_FreeCString(c, s);
        if (rc)
            return JS_ThrowInternalError(c, "write to fd %d failed", fd);
        return JS_NewInt64(c, (int64_t)len);
    }
    uint8_t *buf = JS_GetUint8Array(c, &len, argv[1]);
    if (!buf)
        return JS_EXCEPTION;
    if (write_all(fd, buf, len))
        return JS_ThrowInternalError(c, "write to fd %d failed", fd);
    return JS_NewInt64(c, (int64_t)len);
}

/* native.read(fd, Uint8Array) -> bytes read (0 at end of input) */
static JSValue js_native_read(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv) {
    int32_t fd;
    if (JS_ToInt32(c, &fd, argv[0]))
        return JS_EXCEPTION;
    if (fd != 0)
        return JS_ThrowRangeError(c, "can only read from fd 0 (stdin), not %d", fd);
    size_t len;
    uint8_t *buf = JS_GetUint8Array(c, &len, argv[1]);
    if (!buf)
        return JS_EXCEPTION;
    ssize_t n = read(0, buf, len);
    if (n < 0)
        return JS_ThrowInternalError(c, "read from stdin failed");
    return JS_NewInt64(c, (int64_t)n);
}

/* ---- UTF-8 -------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s[0..n), or 0 if invalid. */
static size_t utf8_seq_len(const uint8_t *s, size_t n) {
    uint8_t b = s[0];
    size_t need;
    uint32_t min, cp;
    if (b < 0x80)
        return 1;
    if ((b & 0xE0) == 0xC0) { need = 2; min = 0x80; cp = b & 0x1F; }
    else if ((b & 0xF0) == 0xE0) { need = 3; min = 0x800; cp = b & 0x0F; }
    else if ((b & 0xF8) == 0xF0) { need = 4; min = 0x10000; cp = b & 0x07; }
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

static JSValue js_native_encode(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv) {
    size_t len;
    const char *s = JS_ToCStringLen(c, &len, argv[0]);
    if (!s)
        return JS_EXCEPTION;
    JSValue arr = JS_NewUint8ArrayCopy(c, (const uint8_t *)s, len);
    JS_FreeCString(c, s);
    return arr;
}

/* native.decode(Uint8Array, fatal) -> string. Invalid input throws when
   fatal, else each bad byte becomes U+FFFD (as TextDecoder does). */
static JSValue js_native_decode(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv) {
    size_t len;
    const uint8_t *in = JS_GetUint8Array(c, &len, argv[0]);
    if (!in)
        return JS_EXCEPTION;
    int fatal = JS_ToBool(c, argv[1]);
    /* worst case every byte becomes the 3-byte replacement character */
    uint8_t *out = malloc(len * 3 + 1);
    if (!out)
        return JS_ThrowOutOfMemory(c);
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        size_t k = utf8_seq_len(in + i, len - i);
        if (k == 0) {
            if (fatal) {
                free(out);
                return JS_ThrowTypeError(c, "The encoded data was not valid utf-8");
            }
            out[o++] = 0xEF; out[o++] = 0xBF; out[o++] = 0xBD;
            i++;
            continue;
        }
        memcpy(out + o, in + i, k);
        o += k;
        i += k;
    }
    JSValue s = JS_NewStringLen(c, (const char *)out, o);
    free(out);
    return s;
}

/* ---- bytecode ----------------------------------------------------------- */

/* native.compile(name, source, resolve) -> Uint8Array of module bytecode.
   Used by `hugind build`. With `resolve`, the module's imports are then
   loaded through the host loader (JS_ResolveModule), which is how the host
   learns the module graph without running any agent code. */
static JSValue js_native_compile(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv) {
    const char *name = JS_ToCString(c, argv[0]);
    if (!name)
        return JS_EXCEPTION;
    size_t len;
    const char *src = JS_ToCStringLen(c, &len, argv[1]);
    if (!src) {
        JS_FreeCString(c, name);
        return JS_EXCEPTION;
    }
    int resolve = JS_ToBool(c, argv[2]);
    JSValue fn = JS_Eval(c, src, len, name, JS_EVAL_TYPE_MODULE | JS_EVAL_FLAG_COMPILE_ONLY);
    JS_FreeCString(c, src);
    JS_FreeCString(c, name);
    if (JS_IsException(fn))
        return fn;
    size_t size;
    uint8_t *bc = JS_WriteObject(c, &size, fn, JS_WRITE_OBJ_BYTECODE);
    if (!bc) {
        JS_FreeValue(c, fn);
        return JS_EXCEPTION;
    }
    JSValue arr = JS_NewUint8ArrayCopy(c, bc, size);
    js_free(c, bc);
    if (resolve && JS_ResolveModule(c, fn) < 0) {
        JS_FreeValue(c, arr);
        arr = JS_EXCEPTION;
    }
    JS_FreeValue(c, fn);
    return arr;
}

/* ---- base64 (bytecode travels inside JSON) ----------------------------- */

static int b64_value(char ch) {
    if (ch >= 'A' && ch <= 'Z') return ch - 'A';
    if (ch >= 'a' && ch <= 'z') return ch - 'a' + 26;
    if (ch >= '0' && ch <= '9') return ch - '0' + 52;
    if (ch == '+') return 62;
    if (ch == '/') return 63;
    return -1;
}

/* Decode standard base64 (with '=' padding); returns the byte count or -1. */
static long base64_decode(const char *in, size_t len, uint8_t *out) {
    if (len % 4)
        return -1;
    long o = 0;
    for (size_t i = 0; i < len; i += 4) {
        int v[4];
        int pad = 0;
        for (int k = 0; k < 4; k++) {
            char ch = in[i + k];
            if (ch == '=' && i + 4 == len && k >= 2) {
                v[k] = 0;
                pad++;
            } else if (pad || (v[k] = b64_value(ch)) < 0) {
                return -1;
            }
        }
        uint32_t w = ((uint32_t)v[0] << 18) | ((uint32_t)v[1] << 12) | ((uint32_t)v[2] << 6) | (uint32_t)v[3];
        out[o++] = (uint8_t)(w >> 16);
        if (pad < 2) out[o++] = (uint8_t)(w >> 8);
        if (pad < 1) out[o++] = (uint8_t)w;
    }
    return o;
}

/* ---- module loading: the host decides ----------------------------------- */

/* Ask the host; returns the parsed {"ok": ...} payload or throws. */
static JSValue host_request(JSContext *c, const char *op, JSValue args) {
    JSValue req = JS_NewObject(c);
    JS_SetPropertyStr(c, req, "op", JS_NewString(c, op));
    JS_SetPropertyStr(c, req, "args", args);
    JSValue text = JS_JSONStringify(c, req, JS_UNDEFINED, JS_UNDEFINED);
    JS_FreeValue(c, req);
    if (JS_IsException(text))
        return text;
    size_t len;
    const char *s = JS_ToCStringLen(c, &len, text);
    JS_FreeValue(c, text);
    if (!s)
        return JS_EXCEPTION;
    JSValue resp_text = host_call_str(c, s, len);
    JS_FreeCString(c, s);
    if (JS_IsException(resp_text))
        return resp_text;
    size_t rlen;
    const char *r = JS_ToCStringLen(c, &rlen, resp_text);
    JS_FreeValue(c, resp_text);
    if (!r)
        return JS_EXCEPTION;
    JSValue resp = JS_ParseJSON(c, r, rlen, "<host>");
    JS_FreeCString(c, r);
    if (JS_IsException(resp))
        return resp;
    JSValue err = JS_GetPropertyStr(c, resp, "error");
    if (!JS_IsUndefined(err) && !JS_IsNull(err)) {
        JSValue e = JS_NewError(c);
        JS_SetPropertyStr(c, e, "message", JS_GetPropertyStr(c, err, "message"));
        JS_SetPropertyStr(c, e, "name", JS_GetPropertyStr(c, err, "kind"));
        JS_FreeValue(c, err);
        JS_FreeValue(c, resp);
        return JS_Throw(c, e);
    }
    JS_FreeValue(c, err);
    JSValue ok = JS_GetPropertyStr(c, resp, "ok");
    JS_FreeValue(c, resp);
    return ok;
}

/* The entry module the host handed over with hugind_js_start, already
   resolved and read under the same rules as module.resolve/module.load
   (hugind/host/modules.py). Consulted once, for the prelude's import of the
   entry, and cleared when that start returns. */
static struct {
    char *name;      /* normalized name, e.g. "main.js"; NULL when none */
    const char *src; /* NUL-terminated source, inside the same block */
    size_t src_len;
} preload;

static int is_preloaded_entry(const char *base, const char *specifier) {
    return preload.name && !strcmp(base, "hugind:prelude") && specifier[0] == '.' && specifier[1] == '/' &&
           !strcmp(specifier + 2, preload.name);
}

static char *module_normalize(JSContext *c, const char *base, const char *name, void *opaque) {
    if (is_preloaded_entry(base, name))
        return js_strdup(c, preload.name);
    JSValue args = JS_NewObject(c);
    JS_SetPropertyStr(c, args, "base", JS_NewString(c, base));
    JS_SetPropertyStr(c, args, "specifier", JS_NewString(c, name));
    JSValue ok = host_request(c, "module.resolve", args);
    if (JS_IsException(ok))
        return NULL;
    const char *resolved = JS_ToCString(c, ok);
    JS_FreeValue(c, ok);
    if (!resolved)
        return NULL;
    char *copy = js_strdup(c, resolved);
    JS_FreeCString(c, resolved);
    return copy;
}

static JSModuleDef *module_from_function(JSContext *c, JSValue fn) {
    if (JS_IsException(fn))
        return NULL;
    /* A compiled module is a JS_TAG_MODULE value holding the JSModuleDef. */
    JSModuleDef *m = JS_VALUE_GET_PTR(fn);
    JS_FreeValue(c, fn);
    return m;
}

static JSModuleDef *module_load(JSContext *c, const char *name, void *opaque) {
    if (preload.name && !strcmp(name, preload.name)) {
        JSValue fn = JS_Eval(c, preload.src, preload.src_len, name, JS_EVAL_TYPE_MODULE | JS_EVAL_FLAG_COMPILE_ONLY);
        return module_from_function(c, fn);
    }
    JSValue args = JS_NewObject(c);
    JS_SetPropertyStr(c, args, "name", JS_NewString(c, name));
    JSValue ok = host_request(c, "module.load", args);
    if (JS_IsException(ok))
        return NULL;
    JSValue bc = JS_GetPropertyStr(c, ok, "bytecode");
    if (JS_IsString(bc)) {
        /* bytecode arrives base64-encoded (see ABI.md, "module.load") */
        size_t b64_len;
        const char *b64 = JS_ToCStringLen(c, &b64_len, bc);
        JS_FreeValue(c, bc);
        JS_FreeValue(c, ok);
        if (!b64)
            return NULL;
        uint8_t *buf = malloc(b64_len / 4 * 3 + 3);
        if (!buf) {
            JS_FreeCString(c, b64);
            JS_ThrowOutOfMemory(c);
            return NULL;
        }
        long n = base64_decode(b64, b64_len, buf);
        JS_FreeCString(c, b64);
        JSValue fn = JS_EXCEPTION;
        if (n < 0) {
            JS_ThrowSyntaxError(c, "bytecode of '%s' is not valid base64", name);
        } else {
            fn = JS_ReadObject(c, buf, (size_t)n, JS_READ_OBJ_BYTECODE);
            if (!JS_IsException(fn) && JS_VALUE_GET_TAG(fn) != JS_TAG_MODULE) {
                JS_FreeValue(c, fn);
                JS_ThrowSyntaxError(c, "bytecode of '%s' is not a module", name);
                fn = JS_EXCEPTION;
            }
        }
        free(buf);
        return module_from_function(c, fn);
    }
    JS_FreeValue(c, bc);
    JSValue src = JS_GetPropertyStr(c, ok, "source");
    JS_FreeValue(c, ok);
    size_t len;
    const char *s = JS_ToCStringLen(c, &len, src);
    JS_FreeValue(c, src);
    if (!s)
        return NULL;
    JSValue fn = JS_Eval(c, s, len, name, JS_EVAL_TYPE_MODULE | JS_EVAL_FLAG_COMPILE_ONLY);
    JS_FreeCString(c, s);
    return module_from_function(c, fn);
}

/* ---- the job loop ------------------------------------------------------- */

/* Run every queued promise job. A job that throws outside any promise
   (rare: e.g. a FinalizationRegistry callback) is reported on stderr. */
static void drain_jobs(void) {
    for (;;) {
        JSContext *jc;
        int r = JS_ExecutePendingJob(rt, &jc);
        if (r == 0)
            return;
        if (r < 0) {
            JSValue e = JS_GetException(jc);
            const char *m = JS_ToCString(jc, e);
            engine_fatal(m ? m : "uncaught exception in a job");
            if (m)
                JS_FreeCString(jc, m);
            JS_FreeValue(jc, e);
        }
    }
}

/* Hand one message to the prelude's dispatcher, then drain jobs.
   Returns 0, or -1 if the dispatcher itself threw (a prelude bug). */
static int32_t dispatch(const char *kind, uint8_t *ptr, int32_t len, int32_t op_id) {
    JSValue args[3];
    args[0] = JS_NewString(ctx, kind);
    args[1] = JS_NewStringLen(ctx, (const char *)ptr, (size_t)len);
    args[2] = JS_NewInt32(ctx, op_id);
    free(ptr);
    JSValue r = JS_Call(ctx, entry_fn, JS_UNDEFINED, 3, args);
    JS_FreeValue(ctx, args[0]);
    JS_FreeValue(ctx, args[1]);
    int32_t status = 0;
    if (JS_IsException(r)) {
        JSValue e = JS_GetException(ctx);
        const char *m = JS_ToCString(ctx, e);
        engine_fatal(m ? m : "dispatcher failed");
        if (m)
            JS_FreeCString(ctx, m);
        JS_FreeValue(ctx, e);
        status = -1;
    }
    JS_FreeValue(ctx, r);
    drain_jobs();
    return status;
}

/* ---- web API natives (entropy, digests) ---------------------------------- */

/* Helpers for the web globals in runtimes/js/web/: they use only WASI, so they
   work in every build of the engine. Nothing here runs while the prelude is
   evaluated (a snapshot would freeze it); each call draws or hashes afresh. */

/* native.randomFill(Uint8Array): fill with the host's entropy (WASI random_get,
   via getentropy, which takes at most 256 bytes a call). */
static JSValue js_native_random_fill(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv) {
    size_t len;
    uint8_t *buf = JS_GetUint8Array(c, &len, argv[0]);
    if (!buf)
        return JS_EXCEPTION;
    for (size_t off = 0; off < len; off += 256) {
        size_t n = len - off < 256 ? len - off : 256;
        if (getentropy(buf + off, n) != 0)
            return JS_ThrowInternalError(c, "crypto: no entropy from the host");
    }
    return JS_UNDEFINED;
}

#define ROR32(x, n) (((x) >> (n)) | ((x) << (32 - (n))))
#define ROL32(x, n) (((x) << (n)) | ((x) >> (32 - (n))))
#define ROR64(x, n) (((x) >> (n)) | ((x) << (64 - (n))))

static uint32_t be32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t be64(const uint8_t *p) { return (uint64_t)be32(p) << 32 | be32(p + 4); }

static void put_be32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}

static void put_be64(uint8_t *p, uint64_t v) {
    put_be32(p, (uint32_t)(v >> 32));
    put_be32(p + 4, (uint32_t)v);
}

static void sha1_block(uint32_t h[5], const uint8_t *p) {
    uint32_t w[80];
    for (int i = 0; i < 16; i++)
        w[i] = be32(p + 4 * i);
    for (int i = 16; i < 80; i++)
        w[i] = ROL32(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    uint32_t a = h[0], b = h[1], cc = h[2], d = h[3], e = h[4];
    for (int i = 0; i < 80; i++) {
        uint32_t f, k;
        if (i < 20) { f = (b & cc) | (~b & d); k = 0x5A827999; }
        else if (i < 40) { f = b ^ cc ^ d; k = 0x6ED9EBA1; }
        else if (i < 60) { f = (b & cc) | (b & d) | (cc & d); k = 0x8F1BBCDC; }
        else { f = b ^ cc ^ d; k = 0xCA62C1D6; }
        uint32_t t = ROL32(a, 5) + f + e + k + w[i];
        e = d; d = cc; cc = ROL32(b, 30); b = a; a = t;
    }
    h[0] += a; h[1] += b; h[2] += cc; h[3] += d; h[4] += e;
}

static const uint32_t sha256_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static void sha256_block(uint32_t h[8], const uint8_t *p) {
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = be32(p + 4 * i);
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ROR32(w[i - 15], 7) ^ ROR32(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ROR32(w[i - 2], 17) ^ ROR32(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t v[8];
    memcpy(v, h, sizeof(v));
    for (int i = 0; i < 64; i++) {
        uint32_t s1 = ROR32(v[4], 6) ^ ROR32(v[4], 11) ^ ROR32(v[4], 25);
        uint32_t ch = (v[4] & v[5]) ^ (~v[4] & v[6]);
        uint32_t t1 = v[7] + s1 + ch + sha256_k[i] + w[i];
        uint32_t s0 = ROR32(v[0], 2) ^ ROR32(v[0], 13) ^ ROR32(v[0], 22);
        uint32_t maj = (v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]);
        memmove(v + 1, v, 7 * sizeof(uint32_t));
        v[4] += t1;
        v[0] = t1 + s0 + maj;
    }
    for (int i = 0; i < 8; i++)
        h[i] += v[i];
}

static const uint64_t sha512_k[80] = {
    0x428a2f98d728ae22ULL, 0x7137449123ef65cdULL, 0xb5c0fbcfec4d3b2fULL, 0xe9b5dba58189dbbcULL,
    0x3956c25bf348b538ULL, 0x59f111f1b605d019ULL, 0x923f82a4af194f9bULL, 0xab1c5ed5da6d8118ULL,
    0xd807aa98a3030242ULL, 0x12835b0145706fbeULL, 0x243185be4ee4b28cULL, 0x550c7dc3d5ffb4e2ULL,
    0x72be5d74f27b896fULL, 0x80deb1fe3b1696b1ULL, 0x9bdc06a725c71235ULL, 0xc19bf174cf692694ULL,
    0xe49b69c19ef14ad2ULL, 0xefbe4786384f25e3ULL, 0x0fc19dc68b8cd5b5ULL, 0x240ca1cc77ac9c65ULL,
    0x2de92c6f592b0275ULL, 0x4a7484aa6ea6e483ULL, 0x5cb0a9dcbd41fbd4ULL, 0x76f988da831153b5ULL,
    0x983e5152ee66dfabULL, 0xa831c66d2db43210ULL, 0xb00327c898fb213fULL, 0xbf597fc7beef0ee4ULL,
    0xc6e00bf33da88fc2ULL, 0xd5a79147930aa725ULL, 0x06ca6351e003826fULL, 0x142929670a0e6e70ULL,
    0x27b70a8546d22ffcULL, 0x2e1b21385c26c926ULL, 0x4d2c6dfc5ac42aedULL, 0x53380d139d95b3dfULL,
    0x650a73548baf63deULL, 0x766a0abb3c77b2a8ULL, 0x81c2c92e47edaee6ULL, 0x92722c851482353bULL,
    0xa2bfe8a14cf10364ULL, 0xa81a664bbc423001ULL, 0xc24b8b70d0f89791ULL, 0xc76c51a30654be30ULL,
    0xd192e819d6ef5218ULL, 0xd69906245565a910ULL, 0xf40e35855771202aULL, 0x106aa07032bbd1b8ULL,
    0x19a4c116b8d2d0c8ULL, 0x1e376c085141ab53ULL, 0x2748774cdf8eeb99ULL, 0x34b0bcb5e19b48a8ULL,
    0x391c0cb3c5c95a63ULL, 0x4ed8aa4ae3418acbULL, 0x5b9cca4f7763e373ULL, 0x682e6ff3d6b2b8a3ULL,
    0x748f82ee5defb2fcULL, 0x78a5636f43172f60ULL, 0x84c87814a1f0ab72ULL, 0x8cc702081a6439ecULL,
    0x90befffa23631e28ULL, 0xa4506cebde82bde9ULL, 0xbef9a3f7b2c67915ULL, 0xc67178f2e372532bULL,
    0xca273eceea26619cULL, 0xd186b8c721c0c207ULL, 0xeada7dd6cde0eb1eULL, 0xf57d4f7fee6ed178ULL,
    0x06f067aa72176fbaULL, 0x0a637dc5a2c898a6ULL, 0x113f9804bef90daeULL, 0x1b710b35131c471bULL,
    0x28db77f523047d84ULL, 0x32caab7b40c72493ULL, 0x3c9ebe0a15c9bebcULL, 0x431d67c49c100d4cULL,
    0x4cc5d4becb3e42b6ULL, 0x597f299cfc657e2aULL, 0x5fcb6fab3ad6faecULL, 0x6c44198c4a475817ULL,
};

static void sha512_block(uint64_t h[8], const uint8_t *p) {
    uint64_t w[80];
    for (int i = 0; i < 16; i++)
        w[i] = be64(p + 8 * i);
    for (int i = 16; i < 80; i++) {
        uint64_t s0 = ROR64(w[i - 15], 1) ^ ROR64(w[i - 15], 8) ^ (w[i - 15] >> 7);
        uint64_t s1 = ROR64(w[i - 2], 19) ^ ROR64(w[i - 2], 61) ^ (w[i - 2] >> 6);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint64_t v[8];
    memcpy(v, h, sizeof(v));
    for (int i = 0; i < 80; i++) {
        uint64_t s1 = ROR64(v[4], 14) ^ ROR64(v[4], 18) ^ ROR64(v[4], 41);
        uint64_t ch = (v[4] & v[5]) ^ (~v[4] & v[6]);
        uint64_t t1 = v[7] + s1 + ch + sha512_k[i] + w[i];
        uint64_t s0 = ROR64(v[0], 28) ^ ROR64(v[0], 34) ^ ROR64(v[0], 39);
        uint64_t maj = (v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]);
        memmove(v + 1, v, 7 * sizeof(uint64_t));
        v[4] += t1;
        v[0] = t1 + s0 + maj;
    }
    for (int i = 0; i < 8; i++)
        h[i] += v[i];
}

/* The Merkle-Damgard padding shared by the SHA family: 0x80, zeros, then the
   bit length big-endian in the last 8 (of `len_bytes`) bytes of the block. */
typedef void (*sha_block_fn)(void *state, const uint8_t *block);

static void sha_run(void *state, sha_block_fn block, size_t block_size, size_t len_bytes, const uint8_t *data,
                    size_t len) {
    size_t full = len - len % block_size;
    for (size_t off = 0; off < full; off += block_size)
        block(state, data + off);
    uint8_t tail[256];
    memset(tail, 0, sizeof(tail));
    size_t rest = len - full;
    memcpy(tail, data + full, rest);
    tail[rest] = 0x80;
    size_t total = rest + 1 + len_bytes <= block_size ? block_size : 2 * block_size;
    put_be64(tail + total - 8, (uint64_t)len * 8);
    for (size_t off = 0; off < total; off += block_size)
        block(state, tail + off);
}

static void sha1_fn(void *s, const uint8_t *p) { sha1_block((uint32_t *)s, p); }
static void sha256_fn(void *s, const uint8_t *p) { sha256_block((uint32_t *)s, p); }
static void sha512_fn(void *s, const uint8_t *p) { sha512_block((uint64_t *)s, p); }

/* native.digest(name, Uint8Array) -> Uint8Array; name is "SHA-1", "SHA-256",
   "SHA-384" or "SHA-512" (the prelude normalizes what WebCrypto accepts). */
static JSValue js_native_digest(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv) {
    const char *name = JS_ToCString(c, argv[0]);
    if (!name)
        return JS_EXCEPTION;
    size_t len;
    const uint8_t *data = JS_GetUint8Array(c, &len, argv[1]);
    if (!data) {
        JS_FreeCString(c, name);
        return JS_EXCEPTION;
    }
    uint8_t out[64];
    size_t out_len = 0;
    if (!strcmp(name, "SHA-1")) {
        uint32_t h[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
        sha_run(h, sha1_fn, 64, 8, data, len);
        for (int i = 0; i < 5; i++)
            put_be32(out + 4 * i, h[i]);
        out_len = 20;
    } else if (!strcmp(name, "SHA-256")) {
        uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                         0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
        sha_run(h, sha256_fn, 64, 8, data, len);
        for (int i = 0; i < 8; i++)
            put_be32(out + 4 * i, h[i]);
        out_len = 32;
    } else if (!strcmp(name, "SHA-384") || !strcmp(name, "SHA-512")) {
        int is384 = name[4] == '3';
        uint64_t h384[8] = {0xcbbb9d5dc1059ed8ULL, 0x629a292a367cd507ULL, 0x9159015a3070dd17ULL,
                            0x152fecd8f70e5939ULL, 0x67332667ffc00b31ULL, 0x8eb44a8768581511ULL,
                            0xdb0c2e0d64f98fa7ULL, 0x47b5481dbefa4fa4ULL};
        uint64_t h512[8] = {0x6a09e667f3bcc908ULL, 0xbb67ae8584caa73bULL, 0x3c6ef372fe94f82bULL,
                            0xa54ff53a5f1d36f1ULL, 0x510e527fade682d1ULL, 0x9b05688c2b3e6c1fULL,
                            0x1f83d9abfb41bd6bULL, 0x5be0cd19137e2179ULL};
        uint64_t *h = is384 ? h384 : h512;
        /* the 128-bit length field's high half is always zero here */
        sha_run(h, sha512_fn, 128, 16, data, len);
        out_len = is384 ? 48 : 64;
        for (size_t i = 0; i < out_len / 8; i++)
            put_be64(out + 8 * i, h[i]);
    }
    JS_FreeCString(c, name);
    if (!out_len)
        return JS_ThrowTypeError(c, "digest: unsupported algorithm");
    return JS_NewUint8ArrayCopy(c, out, out_len);
}

/* fast_bytes.c (in the QuickJS unit, for the array internals) */
JSValue hugind_byte_list(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv);
JSValue hugind_list_bytes(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv);

static const JSCFunctionListEntry native_funcs[] = {
    JS_CFUNC_DEF("call", 1, js_native_call),
    JS_CFUNC_DEF("submit", 1, js_native_submit),
    JS_CFUNC_DEF("write", 2, js_native_write),
    JS_CFUNC_DEF("read", 2, js_native_read),
    JS_CFUNC_DEF("encode", 1, js_native_encode),
    JS_CFUNC_DEF("decode", 2, js_native_decode),
    JS_CFUNC_DEF("compile", 3, js_native_compile),
    JS_CFUNC_DEF("randomFill", 1, js_native_random_fill),
    JS_CFUNC_DEF("digest", 2, js_native_digest),
    JS_CFUNC_DEF("byteList", 1, hugind_byte_list),
    JS_CFUNC_DEF("listBytes", 1, hugind_list_bytes),
};

/* ---- per-instance state that must not come from a snapshot --------------- */

/* Math.random. QuickJS-NG seeds its generator from the clock in JS_NewContext,
   which a snapshot (runtimes/wasm/ABI.md, "Snapshot start") would freeze: every
   instance made from one image would draw the same sequence. This replacement
   (the same xorshift64* generator) seeds itself on first use, from the host's
   entropy (WASI random_get), so each instance gets its own sequence whether or
   not it started from a snapshot. */
static uint64_t random_state; /* 0 until the first Math.random() of this instance */

static JSValue js_math_random(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv) {
    while (random_state == 0) {
        if (getentropy(&random_state, sizeof(random_state)) != 0)
            return JS_ThrowInternalError(c, "Math.random: no entropy from the host");
    }
    uint64_t x = random_state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    random_state = x;
    /* 52 random bits as the mantissa of a double in [1, 2), minus 1 */
    union {
        double d;
        uint64_t u;
    } v;
    v.u = ((x * 0x2545F4914F6CDD1DULL) >> 12) | 0x3FF0000000000000ULL;
    return JS_NewFloat64(c, v.d - 1.0);
}

/* Put `fn` in place of the builtin `holder.name` (holder: a global object such as
   Math); the builtin it replaces goes to *previous when that is not NULL. */
static int replace_builtin(const char *holder, const char *name, JSValue fn, JSValue *previous) {
    JSValue global = JS_GetGlobalObject(ctx);
    JSValue object = JS_GetPropertyStr(ctx, global, holder);
    JS_FreeValue(ctx, global);
    if (!JS_IsObject(object)) {
        JS_FreeValue(ctx, object);
        JS_FreeValue(ctx, fn);
        return -1;
    }
    if (previous)
        *previous = JS_GetPropertyStr(ctx, object, name);
    int rc = JS_DefinePropertyValueStr(ctx, object, name, fn, JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE);
    JS_FreeValue(ctx, object);
    return rc < 0 ? -1 : 0;
}

static int install_math_random(void) {
    return replace_builtin("Math", "random", JS_NewCFunction(ctx, js_math_random, "random", 0), NULL);
}

/* JSON.parse with a nesting limit. QuickJS-NG's parser recurses in C once per
   level, and its stack check reads the shadow stack pointer, which those frames
   do not move: a few tens of thousands of '[' exhausted wasm's own stack, a trap
   that ended the run with nothing for the agent to catch. Text from outside
   (an LLM's reply, a fetched body, an MCP server's result) decides that depth, so
   deeper text is refused up front with a RangeError the agent can catch. */
#define JSON_MAX_DEPTH 2000
static JSValue json_parse_original; /* the engine's own JSON.parse, held for the context's life */

/* How many times `ch` occurs in s[0, len), counting no further than one past
   `cap`: memchr's word-at-a-time search, since every wasm instruction a scan
   runs is fuel the agent pays. */
static size_t count_byte(const char *s, size_t len, char ch, size_t cap) {
    size_t count = 0;
    const char *end = s + len;
    for (const char *at = memchr(s, ch, len); at; at = memchr(at + 1, ch, (size_t)(end - at - 1)))
        if (++count > cap)
            break;
    return count;
}

/* Whether brackets nest deeper than `limit` outside string literals (the real
   parser judges everything else, syntax included). Text with no more opening
   brackets than the limit cannot (most text: a long string, a flat list), and
   is not scanned byte by byte. The counts stop one past the limit: text with
   more brackets (a large document) is scanned anyway, and counting all of them
   first had cost JSON.parse of such text 3% of its time. */
static int json_nesting_exceeds(const char *s, size_t len, int limit) {
    size_t opening = count_byte(s, len, '[', (size_t)limit);
    if (opening <= (size_t)limit)
        opening += count_byte(s, len, '{', (size_t)limit - opening);
    if (opening <= (size_t)limit)
        return 0;
    int depth = 0;
    for (size_t i = 0; i < len; i++) {
        char ch = s[i];
        if (ch == '"') {
            for (i++; i < len && s[i] != '"'; i++) {
                if (s[i] == '\\')
                    i++;
            }
        } else if (ch == '[' || ch == '{') {
            if (++depth > limit)
                return 1;
        } else if (ch == ']' || ch == '}') {
            depth--;
        }
    }
    return 0;
}

static JSValue js_json_parse_guarded(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv) {
    if (argc == 0)
        return JS_Call(c, json_parse_original, this_val, argc, argv);
    /* The text as the engine's parse would take it (ToString once: a toString with
       side effects runs once, as it would without this guard). */
    JSValue text = JS_ToString(c, argv[0]);
    if (JS_IsException(text))
        return text;
    size_t len;
    const char *bytes = JS_ToCStringLen(c, &len, text);
    if (!bytes) {
        JS_FreeValue(c, text);
        return JS_EXCEPTION;
    }
    if (len > JSON_MAX_DEPTH && json_nesting_exceeds(bytes, len, JSON_MAX_DEPTH)) {
        JS_FreeCString(c, bytes);
        JS_FreeValue(c, text);
        return JS_ThrowRangeError(c, "JSON.parse: the text nests deeper than %d levels", JSON_MAX_DEPTH);
    }
    JSValue result;
    if (argc > 1 && JS_IsFunction(c, argv[1])) {
        /* A reviver: the engine's own parse applies it (and converts the text again). */
        JSValueConst args[2] = {text, argv[1]};
        result = JS_Call(c, json_parse_original, this_val, 2, args);
    } else {
        /* What the engine's parse does without one, on the bytes already at hand:
           converting a long text twice cost an agent a third more fuel. */
        result = JS_ParseJSON(c, bytes, len, "<input>");
    }
    JS_FreeCString(c, bytes);
    JS_FreeValue(c, text);
    return result;
}

/* JSON.stringify that walks plain objects and arrays over the engine's
   internals (fast_stringify.c, compiled with quickjs.c) and hands everything
   else to the engine's own. */
JSValue hugind_json_stringify(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv);

static int install_json_stringify(void) {
    return replace_builtin("JSON", "stringify", JS_NewCFunction(ctx, hugind_json_stringify, "stringify", 3), NULL);
}

static int install_json_parse_guard(void) {
    JSValue fn = JS_NewCFunction(ctx, js_json_parse_guarded, "parse", 2);
    if (replace_builtin("JSON", "parse", fn, &json_parse_original))
        return -1;
    return JS_IsFunction(ctx, json_parse_original) ? 0 : -1;
}

/* Create the runtime and evaluate the prelude. The prelude is a script that
   evaluates to the dispatcher function; `native` is passed in and never
   stored on globalThis. */
static int engine_init(void) {
    if (ctx)
        return 0;
    rt = JS_NewRuntime2(&hugind_malloc_functions, NULL); /* engine_alloc.c */
    if (!rt)
        return -1;
    ctx = JS_NewContext(rt);
    if (!ctx)
        return -1;
    JS_SetModuleLoaderFunc(rt, module_normalize, module_load, NULL);
    if (install_math_random())
        return -1;
    if (install_json_parse_guard())
        return -1;
    if (install_json_stringify())
        return -1;
    JSValue native = JS_NewObject(ctx);
    JS_SetPropertyFunctionList(ctx, native, native_funcs, sizeof(native_funcs) / sizeof(native_funcs[0]));
    JSValue factory = JS_Eval(ctx, (const char *)hugind_prelude_src, hugind_prelude_len, "hugind:prelude",
                              JS_EVAL_TYPE_GLOBAL | JS_EVAL_FLAG_STRICT);
    if (JS_IsException(factory)) {
        JSValue e = JS_GetException(ctx);
        const char *m = JS_ToCString(ctx, e);
        engine_fatal(m ? m : "prelude failed to evaluate");
        if (m)
            JS_FreeCString(ctx, m);
        JS_FreeValue(ctx, e);
        JS_FreeValue(ctx, native);
        return -1;
    }
    entry_fn = JS_Call(ctx, factory, JS_UNDEFINED, 1, (JSValueConst *)&native);
    JS_FreeValue(ctx, factory);
    JS_FreeValue(ctx, native);
    if (JS_IsException(entry_fn) || !JS_IsFunction(ctx, entry_fn)) {
        engine_fatal("prelude did not return its dispatcher");
        return -1;
    }
    return 0;
}

/* ---- exports ------------------------------------------------------------ */

__attribute__((export_name("hugind_abi_version")))
int32_t hugind_abi_version(void) { return HUGIND_ABI_VERSION; }

__attribute__((export_name("hugind_alloc")))
uint8_t *hugind_alloc(int32_t size) { return size < 0 ? NULL : malloc(size ? (size_t)size : 1); }

__attribute__((export_name("hugind_free")))
void hugind_free(uint8_t *ptr) { free(ptr); }

/* performance, counting from now. QuickJS-NG's JS_AddPerformance gives
   `timeOrigin` on its monotonic clock, which cannot be changed afterwards (the
   property is not configurable); High Resolution Time and node give it in
   milliseconds of the Unix epoch. So the global is replaced by an object
   holding the engine's `now` (it counts from the same instant) and the
   epoch's time of that instant. */
static int add_performance(void) {
    if (JS_AddPerformance(ctx))
        return -1;
    struct timespec ts;
    if (clock_gettime(CLOCK_REALTIME, &ts))
        return -1;
    double origin = (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
    JSValue global = JS_GetGlobalObject(ctx);
    JSValue engine_perf = JS_GetPropertyStr(ctx, global, "performance");
    JSValue now = JS_GetPropertyStr(ctx, engine_perf, "now");
    JS_FreeValue(ctx, engine_perf);
    JSValue perf = JS_NewObject(ctx);
    int rc = -1;
    if (!JS_IsException(now) && !JS_IsException(perf) &&
        JS_DefinePropertyValueStr(ctx, perf, "now", now, JS_PROP_ENUMERABLE) >= 0 &&
        JS_DefinePropertyValueStr(ctx, perf, "timeOrigin", JS_NewFloat64(ctx, origin), JS_PROP_ENUMERABLE) >= 0 &&
        JS_DefinePropertyValueStr(ctx, global, "performance", JS_DupValue(ctx, perf),
                                  JS_PROP_WRITABLE | JS_PROP_ENUMERABLE | JS_PROP_CONFIGURABLE) >= 0)
        rc = 0;
    else if (!JS_IsException(now) && JS_IsException(perf))
        JS_FreeValue(ctx, now);
    JS_FreeValue(ctx, perf);
    JS_FreeValue(ctx, global);
    return rc;
}

/* Limits the host wants the engine to enforce itself (in bytes); turning a
   memory bomb into a catchable JS "out of memory" error beats a trap.
   Called once per instance, after instantiation: with a snapshot this is the
   first export to run, so whatever must be this instance's own is set here.
   The host also calls it with (0, 0) to build the snapshot: that only
   initializes the engine. */
__attribute__((export_name("hugind_js_configure")))
int32_t hugind_js_configure(int32_t memory_limit, int32_t stack_limit) {
    if (engine_init())
        return -1;
    /* performance.timeOrigin/now() count from this instance's start, not the snapshot's. */
    if (add_performance())
        return -1;
    if (memory_limit > 0)
        JS_SetMemoryLimit(rt, (size_t)memory_limit);
    if (stack_limit > 0)
        JS_SetMaxStackSize(rt, (size_t)stack_limit);
    return 0;
}

__attribute__((export_name("hugind_main")))
int32_t hugind_main(uint8_t *input, int32_t len) {
    if (engine_init())
        return -1;
    return dispatch("main", input, len, 0);
}

/* One crossing for the start of a run (runtimes/wasm/ABI.md, "Fused start"):
   hugind_js_configure(memory_limit, stack_limit), then hugind_main with the
   entry module preloaded. buf holds the start message (msg_len bytes), then
   the entry's normalized name and its source, each NUL-terminated; the
   engine owns buf. Returns hugind_main's status, -1 if the limits could not
   be set, -2 if the layout is wrong. */
__attribute__((export_name("hugind_js_start")))
int32_t hugind_js_start(uint8_t *buf, int32_t msg_len, int32_t name_len, int32_t src_len, int32_t memory_limit,
                        int32_t stack_limit) {
    if (!buf || msg_len < 0 || name_len <= 0 || src_len < 0) {
        free(buf);
        return -2;
    }
    const char *name = (const char *)buf + msg_len;
    const char *src = name + name_len + 1;
    if (name[name_len] || src[src_len] || memchr(name, 0, (size_t)name_len)) {
        free(buf);
        return -2;
    }
    if (hugind_js_configure(memory_limit, stack_limit)) {
        free(buf);
        return -1;
    }
    /* dispatch frees buf before the import runs: the entry moves to a block of its own */
    char *block = malloc((size_t)name_len + 1 + (size_t)src_len + 1);
    if (!block) {
        free(buf);
        return -1;
    }
    memcpy(block, name, (size_t)name_len + 1 + (size_t)src_len + 1);
    preload.name = block;
    preload.src = block + name_len + 1;
    preload.src_len = (size_t)src_len;
    int32_t status = dispatch("main", buf, msg_len, 0);
    preload.name = NULL;
    preload.src = NULL;
    free(block);
    return status;
}

__attribute__((export_name("hugind_tool")))
int32_t hugind_tool(uint8_t *input, int32_t len) {
    if (engine_init())
        return -1;
    return dispatch("tool", input, len, 0);
}

/* hugind build: compile one module to bytecode (see prelude.js, "compile"). */
__attribute__((export_name("hugind_js_compile")))
int32_t hugind_js_compile(uint8_t *input, int32_t len) {
    if (engine_init())
        return -1;
    return dispatch("compile", input, len, 0);
}

/* Deliver the completion (or a progress event) of async op `op_id`. */
__attribute__((export_name("hugind_complete")))
int32_t hugind_complete(int32_t op_id, uint8_t *resp, int32_t len) {
    if (!ctx) {
        free(resp);
        return -1;
    }
    return dispatch("complete", resp, len, op_id);
}

/* Deliver several completions in one entry: `batch` holds records of
   [op id: i32 LE][length: i32 LE][reply bytes], each handled as one
   hugind_complete (its jobs drained before the next). Stops after a record
   whose callbacks reported to the host (agent.*, tool.*): what the host waits
   for may have happened, and it decides about the rest. Returns how many
   records were consumed (the host delivers the others later), or a negative
   status (a malformed batch: nothing delivered; a dispatcher failure). */
__attribute__((export_name("hugind_complete_many")))
int32_t hugind_complete_many(uint8_t *batch, int32_t len) {
    if (!ctx || len < 0) {
        free(batch);
        return -1;
    }
    /* Check every record's bounds before delivering any. */
    int32_t records = 0;
    for (size_t at = 0; at < (size_t)len; records++) {
        int32_t n;
        if ((size_t)len - at < 8) {
            free(batch);
            return -2;
        }
        memcpy(&n, batch + at + 4, 4);
        if (n < 0 || (size_t)n > (size_t)len - at - 8) {
            free(batch);
            return -2;
        }
        at += 8 + (size_t)n;
    }
    int32_t done = 0, status = 0;
    size_t at = 0;
    while (done < records && status == 0) {
        int32_t id, n;
        memcpy(&id, batch + at, 4);
        memcpy(&n, batch + at + 4, 4);
        uint8_t *copy = malloc(n ? (size_t)n : 1); /* dispatch owns and frees its text */
        if (!copy) {
            status = -3;
            break;
        }
        memcpy(copy, batch + at + 8, (size_t)n);
        at += 8 + (size_t)n;
        uint32_t before = reports_made;
        status = dispatch("complete", copy, n, id);
        done++;
        if (reports_made != before)
            break;
    }
    free(batch);
    return status ? status : done;
}

#ifdef HUGIND_STANDALONE
/* ---- standalone build: a WASI command with no hugind host ---------------
 *
 * `hugind build --standalone` turns this variant into one self-contained
 * WASI command: it calls hugind_standalone_prepare with the agent's bundle
 * (entry, declared env, each module's bytecode; JSON) and snapshots the
 * instance (hugind/wasm/snapshot.py). The image then holds the started
 * engine, the prelude and the agent's modules already read (JS_ReadObject)
 * and linked, so _start only evaluates them.
 *
 * The hugind host calls are answered by standalone.js (compiled in below),
 * so the prelude and the module loader above run exactly as under hugind.
 */
#include <wasi/api.h>

#include "standalone.h" /* generated: hugind_standalone_src[], hugind_standalone_len */

#define STANDALONE_JS_STACK_LIMIT 786432 /* the limit hugind run gives the engine */
#define STANDALONE_EXIT_BROKEN 70        /* the bundle or the engine itself is broken */
#define STANDALONE_SLEEP_SLICE_MS 20     /* the longest single sleep of the event loop */

static JSValue standalone_host; /* what standalone.js returns; its methods answer the host calls */
static int standalone_ready;
static char *standalone_mailbox; /* hugind.call's reply, until hugind.take */
static int32_t standalone_mailbox_len;

/* Call standalone_host[name](arg?) */
static JSValue standalone_invoke(const char *name, int argc, JSValueConst *argv) {
    JSValue fn = JS_GetPropertyStr(ctx, standalone_host, name);
    JSValue r = JS_Call(ctx, fn, standalone_host, argc, argv);
    JS_FreeValue(ctx, fn);
    return r;
}

static int32_t hugind_host_call(const uint8_t *req, int32_t req_len) {
    JSValue text = JS_NewStringLen(ctx, (const char *)req, (size_t)req_len);
    JSValue reply = standalone_invoke("call", 1, (JSValueConst *)&text);
    JS_FreeValue(ctx, text);
    size_t len;
    const char *s = JS_IsException(reply) ? NULL : JS_ToCStringLen(ctx, &len, reply);
    JS_FreeValue(ctx, reply);
    if (!s)
        return -1;
    free(standalone_mailbox);
    standalone_mailbox = malloc(len ? len : 1);
    if (standalone_mailbox)
        memcpy(standalone_mailbox, s, len);
    standalone_mailbox_len = standalone_mailbox ? (int32_t)len : 0;
    JS_FreeCString(ctx, s);
    return standalone_mailbox ? (int32_t)len : -1;
}

static int32_t hugind_host_take(uint8_t *dst, int32_t cap) {
    if (!standalone_mailbox)
        return -3;
    if (cap < standalone_mailbox_len)
        return -4;
    int32_t n = standalone_mailbox_len;
    memcpy(dst, standalone_mailbox, (size_t)n);
    free(standalone_mailbox);
    standalone_mailbox = NULL;
    return n;
}

static int32_t hugind_host_submit(const uint8_t *req, int32_t req_len) {
    JSValue text = JS_NewStringLen(ctx, (const char *)req, (size_t)req_len);
    JSValue id = standalone_invoke("submit", 1, (JSValueConst *)&text);
    JS_FreeValue(ctx, text);
    int32_t op_id = -1;
    if (JS_IsException(id) || JS_ToInt32(ctx, &op_id, id))
        op_id = -1;
    JS_FreeValue(ctx, id);
    return op_id;
}

/* sys.getenv(name) -> string | undefined (WASI environ: what the runtime passes) */
static JSValue js_standalone_getenv(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv) {
    const char *name = JS_ToCString(c, argv[0]);
    if (!name)
        return JS_EXCEPTION;
    const char *value = getenv(name);
    JS_FreeCString(c, name);
    return value ? JS_NewString(c, value) : JS_UNDEFINED;
}

/* sys.argv() -> the WASI program arguments */
static JSValue js_standalone_argv(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv) {
    __wasi_size_t count, size;
    if (__wasi_args_sizes_get(&count, &size))
        return JS_NewArray(c);
    uint8_t **ptrs = malloc((count + 1) * sizeof(uint8_t *));
    uint8_t *buf = malloc(size ? size : 1);
    JSValue arr = JS_NewArray(c);
    if (ptrs && buf && !__wasi_args_get(ptrs, buf)) {
        for (__wasi_size_t i = 0; i < count; i++)
            JS_SetPropertyUint32(c, arr, i, JS_NewString(c, (const char *)ptrs[i]));
    }
    free(ptrs);
    free(buf);
    return arr;
}

/* sys.entropy(n) -> Uint8Array of n random bytes (a snapshot must not fix them) */
static JSValue js_standalone_entropy(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv) {
    int32_t n;
    if (JS_ToInt32(c, &n, argv[0]) || n < 0 || n > 256)
        return JS_ThrowRangeError(c, "entropy: 0 to 256 bytes");
    uint8_t buf[256];
    if (n && __wasi_random_get(buf, (__wasi_size_t)n))
        return JS_ThrowInternalError(c, "random_get failed");
    return JS_NewUint8ArrayCopy(c, buf, (size_t)n);
}

static const JSCFunctionListEntry standalone_sys_funcs[] = {
    JS_CFUNC_DEF("write", 2, js_native_write),
    JS_CFUNC_DEF("getenv", 1, js_standalone_getenv),
    JS_CFUNC_DEF("argv", 0, js_standalone_argv),
    JS_CFUNC_DEF("entropy", 1, js_standalone_entropy),
};

static void standalone_report(const char *what) {
    JSValue e = JS_GetException(ctx);
    const char *m = JS_ToCString(ctx, e);
    engine_fatal(m ? m : what);
    if (m)
        JS_FreeCString(ctx, m);
    JS_FreeValue(ctx, e);
}

/* Read the entry module and everything it imports, through the stand-in
   host, and link them without evaluating anything. */
static int standalone_preload(void) {
    JSValue entry = standalone_invoke("entry", 0, NULL);
    const char *name = JS_IsException(entry) ? NULL : JS_ToCString(ctx, entry);
    JS_FreeValue(ctx, entry);
    if (!name)
        return -1;
    JSModuleDef *m = module_load(ctx, name, NULL);
    JS_FreeCString(ctx, name);
    if (!m)
        return -1;
    return JS_ResolveModule(ctx, JS_MKPTR(JS_TAG_MODULE, m)) < 0 ? -1 : 0;
}

/* Start the engine and the stand-in host over the bundle, and load the agent. */
static int standalone_prepare(const char *bundle, size_t len) {
    if (standalone_ready)
        return 0;
    if (engine_init())
        return -1;
    JSValue factory = JS_Eval(ctx, (const char *)hugind_standalone_src, hugind_standalone_len, "hugind:standalone",
                              JS_EVAL_TYPE_GLOBAL | JS_EVAL_FLAG_STRICT);
    if (JS_IsException(factory)) {
        standalone_report("standalone.js failed to evaluate");
        return -1;
    }
    JSValue args[2];
    args[0] = JS_NewObject(ctx);
    JS_SetPropertyFunctionList(ctx, args[0], standalone_sys_funcs,
                               sizeof(standalone_sys_funcs) / sizeof(standalone_sys_funcs[0]));
    args[1] = JS_NewStringLen(ctx, bundle, len);
    standalone_host = JS_Call(ctx, factory, JS_UNDEFINED, 2, args);
    JS_FreeValue(ctx, factory);
    JS_FreeValue(ctx, args[0]);
    JS_FreeValue(ctx, args[1]);
    if (JS_IsException(standalone_host)) {
        standalone_report("the standalone bundle is not valid");
        return -1;
    }
    if (standalone_preload()) {
        standalone_report("the agent's modules could not be loaded");
        return -1;
    }
    standalone_ready = 1;
    return 0;
}

/* Bytes of a JS string, malloc'd for dispatch (which frees them). */
static uint8_t *standalone_bytes(JSValue v, int32_t *len) {
    size_t n;
    const char *s = JS_ToCStringLen(ctx, &n, v);
    if (!s)
        return NULL;
    uint8_t *buf = malloc(n ? n : 1);
    if (buf)
        memcpy(buf, s, n);
    JS_FreeCString(ctx, s);
    *len = (int32_t)n;
    return buf;
}

/* Called once, after _initialize, by `hugind build --standalone` before it
   snapshots the instance; the bundle (hugind_alloc'd) is the engine's now. */
__attribute__((export_name("hugind_standalone_prepare")))
int32_t hugind_standalone_prepare(uint8_t *bundle, int32_t len) {
    int rc = standalone_prepare((const char *)bundle, (size_t)len);
    free(bundle);
    return rc;
}

/* The Javy convention: run the built-in agent; stdin in, stdout out. */
__attribute__((export_name("_start")))
void hugind_standalone_start(void) {
    if (!standalone_ready) {
        engine_fatal("this engine has no agent built in (make one with `hugind build --standalone`)");
        _Exit(STANDALONE_EXIT_BROKEN);
    }
    /* What is this instance's own, not the snapshot's: where its stack starts,
       and the origin of performance.now(). */
    JS_SetMaxStackSize(rt, STANDALONE_JS_STACK_LIMIT);
    if (add_performance()) {
        engine_fatal("performance could not be set up");
        _Exit(STANDALONE_EXIT_BROKEN);
    }
    JSValue start = standalone_invoke("start", 0, NULL);
    if (JS_IsException(start)) {
        standalone_report("the start message could not be made");
        _Exit(STANDALONE_EXIT_BROKEN);
    }
    if (JS_IsNull(start))
        _Exit(2); /* a required environment variable is missing, as hugind run exits */
    int32_t len;
    uint8_t *msg = standalone_bytes(start, &len);
    JS_FreeValue(ctx, start);
    if (!msg || dispatch("main", msg, len, 0))
        _Exit(STANDALONE_EXIT_BROKEN);
    /* The event loop: deliver each async reply; sleep until the next timer. */
    for (;;) {
        JSValue step = standalone_invoke("next", 0, NULL);
        if (JS_IsException(step)) {
            standalone_report("the event loop failed");
            _Exit(STANDALONE_EXIT_BROKEN);
        }
        if (JS_IsNull(step))
            break;
        int32_t id = 0;
        JSValue first = JS_GetPropertyUint32(ctx, step, 0);
        JSValue second = JS_GetPropertyUint32(ctx, step, 1);
        JS_ToInt32(ctx, &id, first);
        JS_FreeValue(ctx, first);
        JS_FreeValue(ctx, step);
        if (id == 0) {
            double ms = 0;
            JS_ToFloat64(ctx, &ms, second);
            JS_FreeValue(ctx, second);
            /* In slices: a host bounds a guest's time only while guest code
               runs (hugind's deadline is epoch interruption), never inside a
               blocking WASI call, so a long timer must not be one. */
            if (ms > STANDALONE_SLEEP_SLICE_MS)
                ms = STANDALONE_SLEEP_SLICE_MS;
            struct timespec ts = {0, (long)(ms * 1e6)};
            nanosleep(&ts, NULL);
            continue;
        }
        uint8_t *reply = standalone_bytes(second, &len);
        JS_FreeValue(ctx, second);
        if (!reply || dispatch("complete", reply, len, id))
            _Exit(STANDALONE_EXIT_BROKEN);
    }
    JSValue code = standalone_invoke("finish", 0, NULL);
    int32_t status = STANDALONE_EXIT_BROKEN;
    if (JS_IsException(code))
        standalone_report("the result could not be printed");
    else
        JS_ToInt32(ctx, &status, code);
    JS_FreeValue(ctx, code);
    if (status)
        _Exit(status);
}
#endif /* HUGIND_STANDALONE */
