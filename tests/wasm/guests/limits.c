/*
 * Test guest: runs away in the way named by its first argument, so the tests
 * can check that each resource limit stops a raw wasm agent with its own
 * message: loop (deadline, fuel), recurse (native stack), malloc (memory cap,
 * seen by the agent as malloc returning NULL), grow (memory.grow ignored until
 * a store past the end traps), spew (output cap), abort.
 */
#define HUGIND_DEFINE_EXPORTS
#include "hugind.h"

#include <stdio.h>

volatile unsigned long long sink;
static char *volatile kept;
volatile unsigned long long depth_limit = ~0ULL; /* never reached; hides the infinite recursion */

/* Recursion the compiler cannot turn into a loop: the call's result is used
   after the call, and the frame lives on the native (not the shadow) stack. */
__attribute__((noinline)) static unsigned long long recurse(unsigned long long n) {
    if (n >= depth_limit)
        return n;
    unsigned long long r = recurse(n + 1);
    sink += r;
    return r * 31 + n;
}

HUGIND_EXPORT("hugind_main")
int32_t hugind_main(char *start, int32_t start_len) {
    size_t input_len, args_len, mode_len;
    const char *input = hugind_json_field(start, (size_t)start_len, "input", &input_len);
    const char *args = hugind_json_field(input, input_len, "args", &args_len);
    const char *mode_raw = hugind_json_index(args, args_len, 0, &mode_len);
    char *mode = hugind_json_string(mode_raw, mode_raw ? mode_len : 0, NULL);
    free(start);
    if (!mode)
        return hugind_fail("Usage", "give a mode"), 0;

    if (strcmp(mode, "loop") == 0) {
        for (;;)
            sink++;
    } else if (strcmp(mode, "recurse") == 0) {
        sink = recurse(0);
    } else if (strcmp(mode, "malloc") == 0) {
        long long mib = 0;
        for (;;) {
            char *p = (char *)malloc(1 << 20);
            if (!p)
                break;
            memset(p, 1, 1 << 20);
            *(void **)p = (void *)kept; /* keep it: an unused malloc may be optimized away */
            kept = p;
            mib++;
        }
        hugind_buf msg = {0};
        hugind_buf_str(&msg, "malloc returned NULL after ");
        hugind_buf_int(&msg, mib);
        hugind_buf_str(&msg, " MiB");
        hugind_fail("OutOfMemory", msg.data ? msg.data : "malloc returned NULL");
    } else if (strcmp(mode, "grow") == 0) {
        while (__builtin_wasm_memory_grow(0, 16) != (size_t)-1)
            ;
        volatile char *past_end = (volatile char *)(__builtin_wasm_memory_size(0) * 65536);
        *past_end = 1; /* as a C program that ignores a failed allocation would */
    } else if (strcmp(mode, "spew") == 0) {
        static const char line[] = "spam spam spam spam spam spam spam spam spam spam spam spam spam\n";
        for (;;)
            fwrite(line, 1, sizeof(line) - 1, stdout);
    } else if (strcmp(mode, "abort") == 0) {
        abort();
    } else {
        hugind_fail("Usage", "unknown mode");
    }
    hugind_result_json("\"not reached\"");
    return 0;
}
