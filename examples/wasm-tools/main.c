/*
 * wasm-tools: an agentic-mode agent in C. hugind_main registers tools; the
 * host's agentic loop lets the model call them, and each call arrives at the
 * hugind_tool export as {"call_id", "name", "args"}.
 *
 * A tool answers with tool.result, either at once (count_lines: one sync
 * fs.read_text) or later, from the callback of an async host op
 * (run_command: shell.run; echo_later: time.sleep). hugind_tool returns as
 * soon as the op is submitted; the host delivers the op's reply through
 * hugind_complete (implemented by hugind.h), whose callback sends the result.
 * Several calls can be in flight at once, and their host work runs in
 * parallel.
 */
#define HUGIND_DEFINE_EXPORTS
#include "hugind.h"

#include <stdio.h>

/* ---- helpers ----------------------------------------------------------------- */

/* Answer call `call_id` with the host's error (kind: message). */
static void tool_fail_with(int32_t call_id, const char *reply) {
    char *kind = hugind_error_kind(reply);
    char *message = hugind_error_message(reply);
    hugind_tool_error(call_id, kind ? kind : "HostError", message ? message : "the host call failed");
    free(kind);
    free(message);
}

/* A string argument of a call (caller frees), or NULL. */
static char *arg_string(const hugind_tool_call *c, const char *key) {
    return hugind_json_field_string(c->args, strlen(c->args), key);
}

/* What a callback needs to finish its tool call. */
typedef struct {
    int32_t call_id;
    char *text; /* echo_later only */
} pending_call;

static pending_call *pending_new(int32_t call_id, char *text) {
    pending_call *p = (pending_call *)malloc(sizeof(*p));
    if (p) {
        p->call_id = call_id;
        p->text = text;
    }
    return p;
}

/* Submitting failed (table full, out of memory): answer now instead. */
static void submit_failed(pending_call *p, int32_t call_id, int32_t status) {
    char message[64];
    snprintf(message, sizeof(message), "could not start the host operation (status %d)", (int)status);
    hugind_tool_error(call_id, "InternalError", message);
    if (p)
        free(p->text);
    free(p);
}

/* ---- count_lines: synchronous ---------------------------------------------------- */

static void count_lines(const hugind_tool_call *c) {
    char *path = arg_string(c, "path");
    if (!path) {
        hugind_tool_error(c->call_id, "TypeError", "count_lines: 'path' must be a string");
        return;
    }
    char *reply = hugind_fs_read_text(path);
    char *text = hugind_ok_text(reply);
    if (!text) {
        tool_fail_with(c->call_id, reply);
    } else {
        size_t lines = 0, len = strlen(text);
        for (size_t i = 0; i < len; i++)
            lines += text[i] == '\n';
        lines += len && text[len - 1] != '\n';
        char answer[64];
        snprintf(answer, sizeof(answer), "%zu lines", lines);
        hugind_tool_result(c->call_id, answer);
    }
    free(text);
    free(reply);
    free(path);
}

/* ---- run_command: shell.run, answered from its completion ------------------------- */

static void on_shell_done(int32_t op_id, const char *reply, size_t len, void *user) {
    (void)op_id;
    pending_call *p = (pending_call *)user;
    size_t ok_len;
    const char *ok = hugind_ok(reply, &ok_len);
    if (!ok) {
        tool_fail_with(p->call_id, reply);
    } else {
        /* what a terminal would show: stdout, stderr, then a non-zero status */
        char *out = hugind_json_field_string(ok, ok_len, "stdout");
        char *err = hugind_json_field_string(ok, ok_len, "stderr");
        size_t code_len;
        const char *code_raw = hugind_json_field(ok, ok_len, "exit_code", &code_len);
        long long code = hugind_json_int(code_raw, code_raw ? code_len : 0, 0);
        hugind_buf text = {0};
        hugind_buf_str(&text, out ? out : "");
        hugind_buf_str(&text, err ? err : "");
        if (code != 0) {
            hugind_buf_str(&text, "[exit status ");
            hugind_buf_int(&text, code);
            hugind_buf_str(&text, "]");
        }
        char *answer = hugind_buf_finish(&text);
        hugind_tool_result(p->call_id, answer ? answer : "(out of memory)");
        free(answer);
        free(out);
        free(err);
    }
    (void)len;
    free(p);
}

static void run_command(const hugind_tool_call *c) {
    char *command = arg_string(c, "command");
    if (!command) {
        hugind_tool_error(c->call_id, "TypeError", "run_command: 'command' must be a string");
        return;
    }
    pending_call *p = pending_new(c->call_id, NULL);
    int32_t id = p ? hugind_shell_run(command, on_shell_done, p) : HUGIND_E_NOMEM;
    if (id <= 0)
        submit_failed(p, c->call_id, id);
    free(command);
}

/* ---- echo_later: a host timer, then the text back ----------------------------------- */

static void on_timer(int32_t op_id, const char *reply, size_t len, void *user) {
    (void)op_id;
    (void)len;
    pending_call *p = (pending_call *)user;
    if (hugind_is_error(reply))
        tool_fail_with(p->call_id, reply);
    else
        hugind_tool_result(p->call_id, p->text);
    free(p->text);
    free(p);
}

static void echo_later(const hugind_tool_call *c) {
    char *text = arg_string(c, "text");
    size_t ms_len;
    const char *ms_raw = hugind_json_field(c->args, strlen(c->args), "ms", &ms_len);
    long long ms = hugind_json_int(ms_raw, ms_raw ? ms_len : 0, 10);
    if (!text) {
        hugind_tool_error(c->call_id, "TypeError", "echo_later: 'text' must be a string");
        return;
    }
    pending_call *p = pending_new(c->call_id, text);
    int32_t id = p ? hugind_sleep(ms, on_timer, p) : HUGIND_E_NOMEM;
    if (id <= 0) {
        if (!p)
            free(text);
        submit_failed(p, c->call_id, id);
    }
}

/* ---- exports -------------------------------------------------------------------- */

HUGIND_EXPORT("hugind_main")
int32_t hugind_main(char *start, int32_t len) {
    (void)len;
    free(start); /* this agent needs nothing from the start message */
    hugind_set_system_prompt("You are a careful assistant. Use the tools to inspect files and run commands.");
    hugind_register_tool("count_lines", "Count the lines of a text file.",
                         "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"}},"
                         "\"required\":[\"path\"]}");
    hugind_register_tool("run_command", "Run a shell command and return its output.",
                         "{\"type\":\"object\",\"properties\":{\"command\":{\"type\":\"string\"}},"
                         "\"required\":[\"command\"]}");
    hugind_register_tool("echo_later", "Wait `ms` milliseconds, then return `text` unchanged.",
                         "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"},"
                         "\"ms\":{\"type\":\"integer\"}},\"required\":[\"text\"]}");
    hugind_done(); /* set up; from here on the host drives the conversation */
    return 0;
}

HUGIND_EXPORT("hugind_tool")
int32_t hugind_tool(char *msg, int32_t len) {
    hugind_tool_call c;
    if (hugind_parse_tool_call(msg, (size_t)len, &c) == 0) {
        if (strcmp(c.name, "count_lines") == 0)
            count_lines(&c);
        else if (strcmp(c.name, "run_command") == 0)
            run_command(&c);
        else if (strcmp(c.name, "echo_later") == 0)
            echo_later(&c);
        else {
            hugind_buf m = {0};
            hugind_buf_str(&m, "unknown tool '");
            hugind_buf_str(&m, c.name);
            hugind_buf_str(&m, "'");
            char *message = hugind_buf_finish(&m);
            hugind_tool_error(c.call_id, "Error", message ? message : "unknown tool");
            free(message);
        }
    } else if (c.call_id >= 0) {
        hugind_tool_error(c.call_id, "TypeError", "malformed tool call");
    }
    hugind_tool_call_free(&c);
    free(msg);
    return 0;
}
