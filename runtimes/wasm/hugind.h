/*
 * hugind.h - single-header C SDK for raw wasm32-wasi hugind agents (ABI v1).
 *
 * The contract is runtimes/wasm/ABI.md; this header is a thin, honest layer
 * over it: requests are JSON text you build (hugind_json.h helps), replies are
 * JSON text you read. Nothing is hidden behind the host: every capability is
 * still one request the policy engine judges.
 *
 * Use:
 *     #define HUGIND_DEFINE_EXPORTS   // in exactly ONE .c file of the module
 *     #include "hugind.h"
 *
 *     HUGIND_EXPORT("hugind_main")
 *     int32_t hugind_main(char *input, int32_t len) {   // input: start message
 *         ... hugind_result_json("{\"hello\":\"world\"}");
 *         free(input);
 *         return 0;
 *     }
 *
 * Build (a reactor: no main(), the host calls the exports):
 *     python -m ziglang cc -target wasm32-wasi -mexec-model=reactor -O2 -s \
 *         -I runtimes/wasm main.c -o agent.wasm
 *
 * HUGIND_DEFINE_EXPORTS adds hugind_alloc, hugind_free, hugind_abi_version and
 * hugind_complete (which runs the callbacks of async ops). The agent writes
 * hugind_main, and hugind_tool in agentic mode.
 *
 * Memory: every char * this SDK returns is malloc'd and the caller frees it.
 * Buffers the host hands to exports are NUL-terminated (hugind_alloc reserves
 * one extra byte), so `input` can be used as a C string.
 */
#ifndef HUGIND_H
#define HUGIND_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hugind_json.h"

#define HUGIND_ABI_VERSION 1

/* Negative statuses of the ABI imports (ABI.md) ... */
#define HUGIND_E_FAULT (-1)        /* pointer/length outside memory, or negative length */
#define HUGIND_E_TOO_BIG (-2)      /* request over 64 MiB */
#define HUGIND_E_NO_RESPONSE (-3)  /* take() with an empty mailbox */
#define HUGIND_E_SMALL_BUFFER (-4) /* take() buffer too small; the reply stays */
/* ... and of the SDK itself. */
#define HUGIND_E_NOMEM (-10)       /* malloc failed in the guest */
#define HUGIND_E_TABLE_FULL (-11)  /* HUGIND_MAX_PENDING async ops already await a reply */
#define HUGIND_E_REJECTED (-12)    /* the host answered {"error": ...} */

#ifndef HUGIND_MAX_PENDING
#define HUGIND_MAX_PENDING 64
#endif

#define HUGIND_EXPORT(name) __attribute__((export_name(name)))

/* ---- the imports (module "hugind") ---------------------------------------------
   Exposed under their own names so an agent (or a test) can use the raw ABI.
   call_into is call that writes a reply of at most `cap` bytes straight to
   `dst` (one crossing instead of call + take); a longer reply waits for take. */

__attribute__((import_module("hugind"), import_name("call")))
int32_t hugind_abi_call(const void *req, int32_t len);

__attribute__((import_module("hugind"), import_name("call_into")))
int32_t hugind_abi_call_into(const void *req, int32_t len, void *dst, int32_t cap);

__attribute__((import_module("hugind"), import_name("take")))
int32_t hugind_abi_take(void *dst, int32_t cap);

__attribute__((import_module("hugind"), import_name("submit")))
int32_t hugind_abi_submit(const void *req, int32_t len);

/* ---- synchronous requests ------------------------------------------------------ */

/* Serve `json` (a complete request) now. Returns the reply, NUL-terminated
   (caller frees), with its length in *out_len; NULL on an ABI or memory
   failure, with the negative status in *out_len. */
static inline char *hugind_request(const char *json, int32_t *out_len) {
    int32_t n = hugind_abi_call(json, (int32_t)strlen(json));
    if (n > 0) {
        char *buf = (char *)malloc((size_t)n + 1);
        if (!buf) {
            n = HUGIND_E_NOMEM; /* the unread reply is replaced by the next call's */
        } else if (hugind_abi_take(buf, n) == n) {
            buf[n] = '\0';
            if (out_len) *out_len = n;
            return buf;
        } else {
            free(buf);
            n = HUGIND_E_FAULT;
        }
    }
    if (out_len) *out_len = n < 0 ? n : HUGIND_E_NO_RESPONSE;
    return NULL;
}

/* {"op": op, "args": args_json} as a malloc'd request (args_json NULL: {}). */
static inline char *hugind_make_request(const char *op, const char *args_json) {
    hugind_buf b = {0};
    hugind_buf_key(&b, "op");
    hugind_buf_quote(&b, op);
    hugind_buf_key(&b, "args");
    hugind_buf_str(&b, args_json ? args_json : "{}");
    hugind_buf_str(&b, "}");
    return hugind_buf_finish(&b);
}

/* Call sync op `op`; the reply (caller frees), or NULL on an ABI failure. */
static inline char *hugind_op(const char *op, const char *args_json) {
    char *req = hugind_make_request(op, args_json);
    char *reply = req ? hugind_request(req, NULL) : NULL;
    free(req);
    return reply;
}

/* ---- reading replies: {"ok": v} | {"error": {"kind","message"}} | {"progress": v} */

static inline const char *hugind__member(const char *reply, const char *key, size_t *len) {
    size_t l;
    const char *v = reply ? hugind_json_field(reply, strlen(reply), key, &l) : NULL;
    if (v && l == 4 && memcmp(v, "null", 4) == 0)
        v = NULL;
    if (v && len) *len = l;
    return v;
}

/* A NULL reply (the call itself failed) counts as an error. */
static inline int hugind_is_error(const char *reply) { return !reply || hugind__member(reply, "error", NULL); }
static inline int hugind_is_progress(const char *reply) { return hugind__member(reply, "progress", NULL) != NULL; }

/* The raw JSON of the "ok" value (points into reply), or NULL. */
static inline const char *hugind_ok(const char *reply, size_t *len) { return hugind__member(reply, "ok", len); }

/* The "ok" value decoded as a string (caller frees); NULL if it is not one. */
static inline char *hugind_ok_text(const char *reply) {
    size_t len;
    const char *v = hugind_ok(reply, &len);
    return v ? hugind_json_string(v, len, NULL) : NULL;
}

static inline char *hugind__error_part(const char *reply, const char *key) {
    size_t len;
    const char *err = hugind__member(reply, "error", &len);
    return err ? hugind_json_field_string(err, len, key) : NULL;
}

/* The error's kind ("PermissionDenied", ...) and message (caller frees), or NULL. */
static inline char *hugind_error_kind(const char *reply) { return hugind__error_part(reply, "kind"); }
static inline char *hugind_error_message(const char *reply) { return hugind__error_part(reply, "message"); }

/* Close the args object in `b`, call `op` with it, free it: 0 or a negative status. */
static inline int hugind__send(const char *op, hugind_buf *b) {
    hugind_buf_str(b, b->len ? "}" : "{}");
    char *args = hugind_buf_finish(b);
    char *reply = args ? hugind_op(op, args) : NULL;
    int status = !args ? HUGIND_E_NOMEM : !reply ? HUGIND_E_FAULT : hugind_is_error(reply) ? HUGIND_E_REJECTED : 0;
    free(args);
    free(reply);
    return status;
}

/* ---- asynchronous requests ------------------------------------------------------

   submit() returns at once with an op id; the host runs the op on a worker
   thread and later calls the hugind_complete export with its reply. The SDK
   keeps a small table op id -> callback. A streaming op calls its callback
   once per {"progress": v} event and once more with the final reply. The
   reply passed to a callback is NUL-terminated and freed when it returns. */

typedef void (*hugind_callback)(int32_t op_id, const char *reply, size_t len, void *user);

struct hugind__pending {
    int32_t op_id; /* 0: free slot */
    hugind_callback cb;
    void *user;
};
extern struct hugind__pending hugind__table[HUGIND_MAX_PENDING];

/* Start the async request `json`. Returns the op id (> 0) or a negative status.
   `cb` may be NULL (fire and forget: the reply is dropped). */
static inline int32_t hugind_submit(const char *json, hugind_callback cb, void *user) {
    struct hugind__pending *slot = NULL;
    for (int i = 0; i < HUGIND_MAX_PENDING && !slot; i++)
        if (hugind__table[i].op_id == 0)
            slot = &hugind__table[i];
    /* refuse before submitting: a reply nobody could take would be lost */
    if (cb && !slot)
        return HUGIND_E_TABLE_FULL;
    int32_t id = hugind_abi_submit(json, (int32_t)strlen(json));
    /* no race: the host never calls an export while an import is running */
    if (id > 0 && cb) {
        slot->op_id = id;
        slot->cb = cb;
        slot->user = user;
    }
    return id;
}

static inline int32_t hugind_submit_op(const char *op, const char *args_json, hugind_callback cb, void *user) {
    char *req = hugind_make_request(op, args_json);
    int32_t id = req ? hugind_submit(req, cb, user) : HUGIND_E_NOMEM;
    free(req);
    return id;
}

/* Number of submitted ops whose callback has not had its final reply yet. */
static inline int hugind_pending(void) {
    int n = 0;
    for (int i = 0; i < HUGIND_MAX_PENDING; i++)
        n += hugind__table[i].op_id != 0;
    return n;
}

/* ---- one-string-argument ops and the capabilities built on them -------------------
   Each capability is judged by the run's policy. Sync ones return the whole
   reply (check it with hugind_is_error); async ones return the op id. */

static inline char *hugind__args1(const char *key, const char *value) {
    hugind_buf b = {0};
    hugind_buf_key(&b, key);
    hugind_buf_quote(&b, value);
    hugind_buf_str(&b, "}");
    return hugind_buf_finish(&b);
}

/* Sync op `op` with args {key: value}; the reply (caller frees). */
static inline char *hugind_op_str(const char *op, const char *key, const char *value) {
    char *args = hugind__args1(key, value);
    char *reply = args ? hugind_op(op, args) : NULL;
    free(args);
    return reply;
}

/* Async op `op` with args {key: value}; the op id or a negative status. */
static inline int32_t hugind_submit_str(const char *op, const char *key, const char *value, hugind_callback cb,
                                        void *user) {
    char *args = hugind__args1(key, value);
    int32_t id = args ? hugind_submit_op(op, args, cb, user) : HUGIND_E_NOMEM;
    free(args);
    return id;
}

/* ok: the file's text */
static inline char *hugind_fs_read_text(const char *path) { return hugind_op_str("fs.read_text", "path", path); }
/* ok: the directory's entry names, sorted */
static inline char *hugind_fs_list_dir(const char *path) { return hugind_op_str("fs.list_dir", "path", path); }

/* ok: {"stdout", "stderr", "exit_code", "timed_out", "truncated"} */
static inline int32_t hugind_shell_run(const char *command, hugind_callback cb, void *user) {
    return hugind_submit_str("shell.run", "command", command, cb, user);
}

/* A GET request; ok: {"status", "url", "headers", "body"} */
static inline int32_t hugind_net_fetch(const char *url, hugind_callback cb, void *user) {
    return hugind_submit_str("net.fetch", "url", url, cb, user);
}

/* A host timer (ok: null after `ms` milliseconds); needs no permission. */
static inline int32_t hugind_sleep(long long ms, hugind_callback cb, void *user) {
    hugind_buf b = {0};
    hugind_buf_key(&b, "ms");
    hugind_buf_int(&b, ms < 0 ? 0 : ms);
    hugind_buf_str(&b, "}");
    char *args = hugind_buf_finish(&b);
    int32_t id = args ? hugind_submit_op("time.sleep", args, cb, user) : HUGIND_E_NOMEM;
    free(args);
    return id;
}

/* ---- reporting the outcome ---------------------------------------------------------- */

/* agent.error: the run fails with "name: message". Returns 0 or a negative status. */
static inline int hugind_fail(const char *name, const char *message) {
    hugind_buf b = {0};
    hugind_buf_key(&b, "name");
    hugind_buf_quote(&b, name);
    hugind_buf_key(&b, "message");
    hugind_buf_quote(&b, message);
    return hugind__send("agent.error", &b);
}

/* Send {head..., "value": value_json}; if the host refuses it (the usual
   cause: value_json is not valid JSON), fail the run with the reason rather
   than leave it waiting for an outcome that never comes. */
static inline int hugind__report(const char *op, const char *head, const char *value_json) {
    hugind_buf b = {0};
    hugind_buf_str(&b, head);
    hugind_buf_key(&b, "value");
    hugind_buf_str(&b, value_json);
    hugind_buf_str(&b, "}");
    char *args = hugind_buf_finish(&b);
    char *reply = args ? hugind_op(op, args) : NULL;
    int status = hugind_is_error(reply) ? HUGIND_E_REJECTED : 0;
    if (status) {
        char *msg = hugind_error_message(reply);
        hugind_fail("InvalidResult", msg ? msg : "the host refused the result");
        free(msg);
    }
    free(args);
    free(reply);
    return status;
}

/* agent.done with a result: `value_json` must be valid JSON text. */
static inline int hugind_result_json(const char *value_json) {
    return hugind__report("agent.done", "{\"has_value\":true", value_json);
}

/* agent.done with a string result (any bytes; escaped for you). */
static inline int hugind_result_text(const char *text) {
    char *quoted = hugind_json_quote(text);
    int status = quoted ? hugind_result_json(quoted) : HUGIND_E_NOMEM;
    free(quoted);
    return status;
}

/* agent.done without a result (a program, or an agentic agent done setting up). */
static inline int hugind_done(void) {
    hugind_buf b = {0};
    hugind_buf_key(&b, "has_value");
    hugind_buf_str(&b, "false");
    return hugind__send("agent.done", &b);
}

/* agent.set_result: an explicit result that wins over agent.done's value. */
static inline int hugind_set_result_json(const char *value_json) { return hugind__report("agent.set_result", "", value_json); }

/* ---- agentic mode ---------------------------------------------------------------------- */

/* Declare a tool the model may call; parameters_json is a JSON Schema
   object, NULL for "no parameters". Calls arrive at your hugind_tool export. */
static inline int hugind_register_tool(const char *name, const char *description, const char *parameters_json) {
    hugind_buf b = {0};
    hugind_buf_key(&b, "name");
    hugind_buf_quote(&b, name);
    hugind_buf_key(&b, "description");
    hugind_buf_quote(&b, description);
    hugind_buf_key(&b, "parameters");
    hugind_buf_str(&b, parameters_json ? parameters_json : "{\"type\":\"object\",\"properties\":{}}");
    return hugind__send("agent.register_tool", &b);
}

static inline int hugind_set_system_prompt(const char *prompt) {
    hugind_buf b = {0};
    hugind_buf_key(&b, "prompt");
    hugind_buf_quote(&b, prompt);
    return hugind__send("agent.set_system_prompt", &b);
}

/* A tool call as hugind_tool receives it: {"call_id", "name", "args"}, where
   "args" is the arguments object encoded as a JSON string. */
typedef struct {
    int32_t call_id;
    char *name; /* malloc'd */
    char *args; /* malloc'd JSON object text, e.g. {"path":"a.txt"} */
} hugind_tool_call;

/* Parse a hugind_tool message; 0 or a negative status. Free with hugind_tool_call_free. */
static inline int hugind_parse_tool_call(const char *msg, size_t len, hugind_tool_call *out) {
    size_t n;
    const char *id = hugind_json_field(msg, len, "call_id", &n);
    out->call_id = (int32_t)hugind_json_int(id, id ? n : 0, -1);
    out->name = hugind_json_field_string(msg, len, "name");
    out->args = hugind_json_field_string(msg, len, "args");
    return out->call_id >= 0 && out->name && out->args ? 0 : HUGIND_E_FAULT;
}

static inline void hugind_tool_call_free(hugind_tool_call *c) {
    free(c->name);
    free(c->args);
    c->name = c->args = NULL;
}

/* Answer tool call `call_id` with a JSON value. The JS runtime answers with
   strings, which is what a model reads; hugind_tool_result does that. */
static inline int hugind_tool_result_json(int32_t call_id, const char *value_json) {
    hugind_buf b = {0};
    hugind_buf_key(&b, "call_id");
    hugind_buf_int(&b, call_id);
    hugind_buf_key(&b, "value");
    hugind_buf_str(&b, value_json);
    return hugind__send("tool.result", &b);
}

/* Answer tool call `call_id` with text (any bytes; escaped for you). */
static inline int hugind_tool_result(int32_t call_id, const char *text) {
    char *quoted = hugind_json_quote(text);
    int status = quoted ? hugind_tool_result_json(call_id, quoted) : HUGIND_E_NOMEM;
    free(quoted);
    return status;
}

/* Fail tool call `call_id`; the model sees "name: message". */
static inline int hugind_tool_error(int32_t call_id, const char *name, const char *message) {
    hugind_buf b = {0};
    hugind_buf_key(&b, "call_id");
    hugind_buf_int(&b, call_id);
    hugind_buf_str(&b, ",\"error\":{\"name\":");
    hugind_buf_quote(&b, name);
    hugind_buf_str(&b, ",\"message\":");
    hugind_buf_quote(&b, message);
    hugind_buf_str(&b, "}");
    return hugind__send("tool.result", &b);
}

/* ---- the exports, in one translation unit --------------------------------------------- */

#ifdef HUGIND_DEFINE_EXPORTS

struct hugind__pending hugind__table[HUGIND_MAX_PENDING];

/* One byte more than asked, zeroed: the host writes `size` bytes, so what it
   hands to hugind_main/hugind_tool/hugind_complete is always NUL-terminated. */
HUGIND_EXPORT("hugind_alloc")
void *hugind_alloc(int32_t size) {
    char *p = size < 0 ? NULL : (char *)malloc((size_t)size + 1);
    if (p)
        p[size] = '\0';
    return p;
}

HUGIND_EXPORT("hugind_free")
void hugind_free(void *ptr) { free(ptr); }

HUGIND_EXPORT("hugind_abi_version")
int32_t hugind_abi_version(void) { return HUGIND_ABI_VERSION; }

/* The host delivers an async reply (or a progress event): find the op's
   callback, free its slot first if the reply is final (so the callback may
   submit again), run the callback, free the buffer. */
HUGIND_EXPORT("hugind_complete")
int32_t hugind_complete(int32_t op_id, char *reply, int32_t len) {
    for (int i = 0; i < HUGIND_MAX_PENDING && op_id > 0; i++) {
        struct hugind__pending *slot = &hugind__table[i];
        if (slot->op_id != op_id)
            continue;
        hugind_callback cb = slot->cb;
        void *user = slot->user;
        if (!hugind_is_progress(reply))
            slot->op_id = 0;
        cb(op_id, reply, (size_t)len, user);
        break;
    }
    free(reply); /* an op submitted without a callback lands here too */
    return 0;
}

#endif /* HUGIND_DEFINE_EXPORTS */

#endif /* HUGIND_H */
