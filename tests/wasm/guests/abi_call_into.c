/*
 * Test guest: abuses the call_into import (ABI.md) and reports every status,
 * so the test can compare them with the documented codes. A bad destination
 * is refused before the request is served; a reply too long for `cap` waits
 * in the mailbox for take.
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

HUGIND_EXPORT("hugind_main")
int32_t hugind_main(char *start, int32_t start_len) {
    (void)start_len;
    free(start);
    static const char req[] = "{\"op\":\"agent.set_system_prompt\",\"args\":{\"prompt\":\"abi test\"}}";
    static const char reply[] = "{\"ok\":null}";
    const int32_t len = (int32_t)strlen(req);
    const int32_t want = (int32_t)strlen(reply);
    char buf[64];

    /* the request side: as call */
    put("req_oob_ptr", hugind_abi_call_into((const void *)0xFFFFFF00u, 64, buf, sizeof(buf)));
    put("req_negative_len", hugind_abi_call_into(req, -1, buf, sizeof(buf)));
    put("req_huge_len", hugind_abi_call_into(req, (64 << 20) + 1, buf, sizeof(buf)));

    /* the destination side: checked before the request is served */
    put("dst_oob_ptr", hugind_abi_call_into(req, len, (void *)0xFFFFFF00u, 64));
    put("dst_wraps", hugind_abi_call_into(req, len, (void *)0xFFFFFFF0u, 0x20));
    char *mem_end = (char *)(__builtin_wasm_memory_size(0) * 65536);
    put("dst_past_end", hugind_abi_call_into(req, len, mem_end - 8, 64));
    put("dst_negative_cap", hugind_abi_call_into(req, len, buf, -1));
    put("nothing_queued_by_refusals", hugind_abi_take(buf, sizeof(buf)));

    /* a reply that fits: written to dst, nothing left for take */
    memset(buf, 'x', sizeof(buf));
    int32_t n = hugind_abi_call_into(req, len, buf, sizeof(buf));
    put("fits_len", n == want);
    put("fits_bytes", memcmp(buf, reply, (size_t)want) == 0);
    put("fits_rest_untouched", buf[want] == 'x');
    put("fits_then_take", hugind_abi_take(buf, sizeof(buf)));

    /* exactly the reply's size fits too */
    memset(buf, 'x', sizeof(buf));
    put("exact_cap", hugind_abi_call_into(req, len, buf, want) == want && memcmp(buf, reply, (size_t)want) == 0);

    /* too small (or zero) a buffer: the length comes back, dst is untouched, take gets the reply */
    memset(buf, 'x', sizeof(buf));
    n = hugind_abi_call_into(req, len, buf, want - 1);
    put("small_returns_len", n == want);
    put("small_untouched", buf[0] == 'x');
    put("small_take_small", hugind_abi_take(buf, want - 1));
    memset(buf, 0, sizeof(buf));
    put("small_take", hugind_abi_take(buf, sizeof(buf)) == want && strcmp(buf, reply) == 0);
    put("zero_cap_null_dst", hugind_abi_call_into(req, len, NULL, 0) == want);
    memset(buf, 0, sizeof(buf));
    put("zero_cap_take", hugind_abi_take(buf, sizeof(buf)) == want && strcmp(buf, reply) == 0);

    /* request errors still travel as {"error": ...} replies */
    static const char garbage[] = "this is not json";
    static char big[1024];
    n = hugind_abi_call_into(garbage, (int32_t)strlen(garbage), big, sizeof(big) - 1);
    char *kind = n > 0 && n < (int32_t)sizeof(big) ? hugind_error_kind(big) : NULL;
    put("garbage_is_invalid_argument", kind && strcmp(kind, "InvalidArgument") == 0);
    free(kind);

    hugind_buf_str(&out, "}");
    hugind_result_json(out.data);
    return 0;
}
