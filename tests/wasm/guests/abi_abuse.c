/*
 * Test guest: abuses the hugind imports from C and reports every status the
 * host returned, so the test can compare them with ABI.md. The run must end
 * normally afterwards: an abusive guest gets negative codes, the host lives.
 */
#define HUGIND_DEFINE_EXPORTS
#include "hugind.h"

static hugind_buf out;

static void put(const char *key, long long value) {
    hugind_buf_str(&out, out.len ? ",\"" : "{\"");
    hugind_buf_str(&out, key);
    hugind_buf_str(&out, "\":");
    hugind_buf_int(&out, value);
}

static void on_reply(int32_t op_id, const char *reply, size_t len, void *user) {
    (void)op_id;
    (void)len;
    (void)user;
    char *kind = hugind_error_kind(reply);
    put(kind && strcmp(kind, "InvalidArgument") == 0 ? "submit_sync_op_invalid" : "submit_sync_op_other", 1);
    free(kind);
    hugind_buf_str(&out, "}");
    hugind_result_json(out.data);
}

HUGIND_EXPORT("hugind_main")
int32_t hugind_main(char *start, int32_t start_len) {
    (void)start_len;
    free(start);
    static const char req[] = "{\"op\":\"agent.set_system_prompt\",\"args\":{\"prompt\":\"abi test\"}}";
    char buf[256];

    put("call_oob_ptr", hugind_abi_call((const void *)0xFFFFFF00u, 64));
    /* read the size right before the call: appending to `out` may grow memory */
    char *mem_end = (char *)(__builtin_wasm_memory_size(0) * 65536);
    int32_t past_end = hugind_abi_call(mem_end - 8, 64);
    put("call_past_end", past_end);
    put("call_negative_len", hugind_abi_call(req, -1));
    put("call_huge_len", hugind_abi_call(req, 0x7FFFFFFF));
    put("call_just_too_big", hugind_abi_call(req, (64 << 20) + 1));
    put("submit_oob_ptr", hugind_abi_submit((const void *)0xFFFFFF00u, 64));
    put("submit_negative_len", hugind_abi_submit(req, -5));
    put("take_empty", hugind_abi_take(buf, sizeof(buf)));

    int32_t n = hugind_abi_call(req, (int32_t)strlen(req));
    put("call_ok", n > 0);
    put("take_small", hugind_abi_take(buf, n - 1));
    put("take_zero_cap", hugind_abi_take(buf, 0));
    put("take_negative_cap", hugind_abi_take(buf, -1));
    put("take_oob_ptr", hugind_abi_take((void *)0xFFFFFF00u, n));
    memset(buf, 0, sizeof(buf));
    put("take_after_errors", hugind_abi_take(buf, (int32_t)sizeof(buf) - 1) == n);
    put("reply_intact", strcmp(buf, "{\"ok\":null}") == 0);
    put("take_twice", hugind_abi_take(buf, sizeof(buf)));

    static const char garbage[] = "this is not json";
    char *reply = hugind_request(garbage, NULL);
    char *kind = hugind_error_kind(reply);
    put("garbage_is_invalid_argument", kind && strcmp(kind, "InvalidArgument") == 0);
    free(kind);
    free(reply);

    reply = hugind_op("time.sleep", "{\"ms\":1}");
    kind = hugind_error_kind(reply);
    put("call_async_op_invalid", kind && strcmp(kind, "InvalidArgument") == 0);
    free(kind);
    free(reply);

    /* a sync op submitted: its id is valid, the error arrives as a completion */
    put("submit_sync_op_id_positive", hugind_submit_op("agent.done", "{\"has_value\":false}", on_reply, NULL) > 0);
    return 0;
}
