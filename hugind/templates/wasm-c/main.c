/*
 * __AGENT_NAME__: a hugind agent in C, compiled to wasm32-wasi.
 *
 * hugind calls hugind_main with the start message ({"input": {"args": [...],
 * "meta": {...}}}). The agent reads one file through the host's fs.read_text
 * op (the policy in agent.yaml judges the request: only data/ is readable) and
 * reports {"file", "bytes", "lines"} as its result. A denied read ends the run
 * with the host's error kind and message.
 *
 * The SDK (sdk/hugind.h, sdk/hugind_json.h) is a thin layer over the ABI:
 * requests and replies are JSON text. Every char * it returns is malloc'd.
 */
#define HUGIND_DEFINE_EXPORTS
#include "hugind.h"

/* Fail the run with the host's error kind and message. */
static void fail_with(const char *reply) {
    char *kind = hugind_error_kind(reply);
    char *message = hugind_error_message(reply);
    hugind_fail(kind ? kind : "HostError", message ? message : "the host call failed");
    free(kind);
    free(message);
}

HUGIND_EXPORT("hugind_main")
int32_t hugind_main(char *start, int32_t start_len) {
    /* The first argument, if any, names the file; else data/hello.txt. */
    size_t input_len = 0, args_len = 0, arg_len = 0;
    const char *input = hugind_json_field(start, (size_t)start_len, "input", &input_len);
    const char *args = input ? hugind_json_field(input, input_len, "args", &args_len) : NULL;
    const char *cursor = NULL;
    const char *arg = args ? hugind_json_next(args, args_len, &cursor, NULL, NULL, &arg_len) : NULL;
    char *path = arg ? hugind_json_string(arg, arg_len, NULL) : NULL;
    free(start);
    if (arg && !path)
        return hugind_fail("TypeError", "the argument must be a file path"), 0;

    const char *file = path ? path : "data/hello.txt";
    char *reply = hugind_fs_read_text(file);
    size_t raw_len = 0, len = 0;
    const char *raw = hugind_ok(reply, &raw_len);
    char *text = raw ? hugind_json_string(raw, raw_len, &len) : NULL;
    if (!text) {
        fail_with(reply);
        free(reply);
        free(path);
        return 0;
    }
    free(reply);

    size_t lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n';
    if (len && text[len - 1] != '\n')
        lines++; /* a last line without its newline still counts */

    hugind_buf out = {0};
    hugind_buf_str(&out, "{\"file\":");
    hugind_buf_quote(&out, file);
    hugind_buf_str(&out, ",\"bytes\":");
    hugind_buf_int(&out, (long long)len);
    hugind_buf_str(&out, ",\"lines\":");
    hugind_buf_int(&out, (long long)lines);
    hugind_buf_str(&out, "}");
    char *result = hugind_buf_finish(&out);
    if (result)
        hugind_result_json(result);
    else
        hugind_fail("OutOfMemory", "the result did not fit in memory");
    free(result);
    free(text);
    free(path);
    return 0;
}
