/*
 * wasm-files: a script agent written in C against the hugind ABI.
 *
 * For each argument it reads a file (or, for a path ending in '/', every file
 * of that directory) through the host's fs.read_text / fs.list_dir ops, and
 * returns a JSON summary: {"files": [{"path", "bytes", "lines", "first_line"}]}.
 * With no argument it summarizes "notes/".
 *
 * The agent has no filesystem of its own: every read is a request the policy
 * judges against agent.yaml's permissions.filesystem. A refused read ends the
 * run with the host's error kind and message (PermissionDenied: ...), the
 * same failure a JS agent gets from an uncaught fs.read_text error.
 */
#define HUGIND_DEFINE_EXPORTS
#include "hugind.h"

#define MAX_FILES 100
#define FIRST_LINE_MAX 80

/* Fail the run with the host's error, as an uncaught JS error would. */
static void fail_with(const char *reply) {
    char *kind = hugind_error_kind(reply);
    char *message = hugind_error_message(reply);
    hugind_fail(kind ? kind : "HostError", message ? message : "the host call failed");
    free(kind);
    free(message);
}

/* Append one file's summary to `out`; 0, or -1 once the run has been failed. */
static int summarize(hugind_buf *out, const char *path, int first) {
    char *reply = hugind_fs_read_text(path);
    size_t raw_len, len = 0;
    const char *raw = hugind_ok(reply, &raw_len);
    char *text = raw ? hugind_json_string(raw, raw_len, &len) : NULL;
    if (!text) {
        fail_with(reply);
        free(reply);
        return -1;
    }
    free(reply);

    size_t lines = 0, first_end = len;
    for (size_t i = 0; i < len; i++) {
        if (text[i] == '\n') {
            lines++;
            if (first_end == len)
                first_end = i;
        }
    }
    if (len && text[len - 1] != '\n')
        lines++; /* a last line without its newline still counts */
    if (first_end > FIRST_LINE_MAX) {
        first_end = FIRST_LINE_MAX;
        while (first_end && ((unsigned char)text[first_end] & 0xC0) == 0x80)
            first_end--; /* never cut a UTF-8 sequence in half */
    }

    hugind_buf_str(out, first ? "{\"path\":" : ",{\"path\":");
    hugind_buf_quote(out, path);
    hugind_buf_str(out, ",\"bytes\":");
    hugind_buf_int(out, (long long)len);
    hugind_buf_str(out, ",\"lines\":");
    hugind_buf_int(out, (long long)lines);
    hugind_buf_str(out, ",\"first_line\":");
    hugind_buf_quote_n(out, text, first_end);
    hugind_buf_str(out, "}");
    free(text);
    return 0;
}

/* Whether `path` is a regular file (fs.is_file answers {"ok": true|false}). */
static int is_file(const char *path) {
    char *reply = hugind_op_str("fs.is_file", "path", path);
    size_t len;
    const char *ok = hugind_ok(reply, &len);
    int yes = ok && len == 4 && memcmp(ok, "true", 4) == 0;
    free(reply);
    return yes;
}

/* Summarize every regular file listed in directory `dir` (which ends in '/'). */
static int summarize_dir(hugind_buf *out, const char *dir, int *count) {
    char *reply = hugind_fs_list_dir(dir);
    size_t list_len;
    const char *list = hugind_ok(reply, &list_len);
    if (!list || *list != '[') {
        fail_with(reply);
        free(reply);
        return -1;
    }
    const char *cursor = NULL, *entry;
    size_t entry_len;
    int status = 0;
    while (status == 0 && *count < MAX_FILES &&
           (entry = hugind_json_next(list, list_len, &cursor, NULL, NULL, &entry_len))) {
        char *name = hugind_json_string(entry, entry_len, NULL); /* entries are names */
        if (!name) {
            status = -1;
            hugind_fail("TypeError", "fs.list_dir returned an entry that is not a name");
            break;
        }
        hugind_buf path = {0};
        hugind_buf_str(&path, dir);
        hugind_buf_str(&path, name);
        char *p = hugind_buf_finish(&path);
        if (p && is_file(p)) { /* skip subdirectories and the like */
            status = summarize(out, p, *count == 0);
            *count += status == 0;
        }
        free(p);
        free(name);
    }
    free(reply);
    return status;
}

HUGIND_EXPORT("hugind_main")
int32_t hugind_main(char *start, int32_t start_len) {
    /* start message: {"input": {"args": [...], "meta": {...}}, ...} */
    size_t input_len = 0, args_len = 0;
    const char *input = hugind_json_field(start, (size_t)start_len, "input", &input_len);
    const char *args = input ? hugind_json_field(input, input_len, "args", &args_len) : NULL;

    hugind_buf out = {0};
    hugind_buf_str(&out, "{\"files\":[");
    int count = 0, status = 0, given = 0;
    const char *cursor = NULL, *arg;
    size_t arg_len;
    while (status == 0 && args && (arg = hugind_json_next(args, args_len, &cursor, NULL, NULL, &arg_len))) {
        char *path = hugind_json_string(arg, arg_len, NULL);
        given++;
        if (!path)
            status = -1, hugind_fail("TypeError", "arguments must be strings");
        else if (path[0] && path[strlen(path) - 1] == '/')
            status = summarize_dir(&out, path, &count);
        else if ((status = summarize(&out, path, count == 0)) == 0)
            count++;
        free(path);
    }
    if (status == 0 && given == 0)
        status = summarize_dir(&out, "notes/", &count);
    free(start);

    if (status == 0) {
        hugind_buf_str(&out, "],\"count\":");
        hugind_buf_int(&out, count);
        hugind_buf_str(&out, "}");
        char *result = hugind_buf_finish(&out);
        if (result)
            hugind_result_json(result);
        else
            hugind_fail("OutOfMemory", "the summary did not fit in memory");
        free(result);
    } else {
        free(out.data);
    }
    return 0;
}
