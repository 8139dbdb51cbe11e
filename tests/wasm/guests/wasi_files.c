/* Uses plain libc file I/O (WASI), not the hugind ABI: what it can touch is
   decided by the preopens hugind derives from the policy. Each line of the
   result says what one attempt did. */
#define HUGIND_DEFINE_EXPORTS
#include "hugind.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static void attempt_read(hugind_buf *out, const char *path) {
    char line[128] = {0};
    FILE *f = fopen(path, "r");
    if (!f) {
        hugind_buf_str(out, "\"read ");
        hugind_buf_str(out, path);
        hugind_buf_str(out, ": denied\",");
        return;
    }
    if (!fgets(line, sizeof line, f))
        line[0] = 0;
    fclose(f);
    line[strcspn(line, "\n")] = 0;
    hugind_buf_str(out, "\"read ");
    hugind_buf_str(out, path);
    hugind_buf_str(out, ": ");
    hugind_buf_str(out, line);
    hugind_buf_str(out, "\",");
}

static void attempt_write(hugind_buf *out, const char *path) {
    FILE *f = fopen(path, "w");
    int ok = f && fputs("written by wasm\n", f) >= 0;
    if (f)
        ok = (fclose(f) == 0) && ok;
    hugind_buf_str(out, "\"write ");
    hugind_buf_str(out, path);
    hugind_buf_str(out, ok ? ": ok\"," : ": denied\",");
}

HUGIND_EXPORT("hugind_main")
int32_t hugind_main(uint8_t *input, int32_t len) {
    (void)len;
    hugind_free(input);
    hugind_buf out = {0};
    hugind_buf_str(&out, "[");
    attempt_read(&out, "data/in.txt");
    attempt_read(&out, "/data/in.txt");
    attempt_read(&out, "../outside.txt");
    attempt_read(&out, "/etc/hostname");
    attempt_write(&out, "data/new.txt");
    attempt_write(&out, "out/new.txt");
    attempt_write(&out, "/scratch/new.txt");
    hugind_buf_str(&out, "\"end\"]");
    char *json = hugind_buf_finish(&out);
    hugind_result_json(json);
    free(json);
    return 0;
}
