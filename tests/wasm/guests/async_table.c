/*
 * Test guest: the SDK's async side. A streaming op delivers progress events to
 * its callback before the final reply; the completion table refuses the op
 * past HUGIND_MAX_PENDING; an op submitted without a callback is dropped.
 */
#define HUGIND_MAX_PENDING 8
#define HUGIND_DEFINE_EXPORTS
#include "hugind.h"

static hugind_buf progress; /* the progress values, as a JSON array body */
static char *final_reply;
static int sleeps_left, table_full, pending_at_full, fire_and_forget;

static void finish_if_done(void) {
    if (sleeps_left || !final_reply)
        return;
    hugind_buf out = {0};
    hugind_buf_key(&out, "progress");
    hugind_buf_str(&out, "[");
    hugind_buf_str(&out, progress.data ? progress.data : "");
    hugind_buf_str(&out, "]");
    hugind_buf_key(&out, "final");
    hugind_buf_str(&out, final_reply);
    hugind_buf_key(&out, "table_full");
    hugind_buf_int(&out, table_full);
    hugind_buf_key(&out, "pending_at_full");
    hugind_buf_int(&out, pending_at_full);
    hugind_buf_key(&out, "fire_and_forget_id_positive");
    hugind_buf_int(&out, fire_and_forget > 0);
    hugind_buf_key(&out, "pending_now");
    hugind_buf_int(&out, hugind_pending());
    hugind_buf_str(&out, "}");
    hugind_result_json(out.data);
}

static void on_stream(int32_t op_id, const char *reply, size_t len, void *user) {
    (void)op_id, (void)len, (void)user;
    size_t vlen;
    const char *v;
    if ((v = hugind_json_field(reply, strlen(reply), "progress", &vlen))) {
        if (progress.len)
            hugind_buf_str(&progress, ",");
        hugind_buf_add(&progress, v, vlen);
        return;
    }
    final_reply = strdup(reply);
    finish_if_done();
}

static void on_sleep(int32_t op_id, const char *reply, size_t len, void *user) {
    (void)op_id, (void)reply, (void)len, (void)user;
    sleeps_left--;
    finish_if_done();
}

HUGIND_EXPORT("hugind_main")
int32_t hugind_main(char *start, int32_t len) {
    (void)len;
    free(start);
    hugind_submit_op("test.stream", "{\"n\":3}", on_stream, NULL);
    for (;;) {
        int32_t id = hugind_sleep(5, on_sleep, NULL);
        if (id == HUGIND_E_TABLE_FULL) {
            table_full = 1;
            break;
        }
        sleeps_left++;
    }
    pending_at_full = hugind_pending();
    fire_and_forget = hugind_sleep(1, NULL, NULL);
    return 0;
}
