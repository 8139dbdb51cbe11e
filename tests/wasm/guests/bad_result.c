/* Test guest: reports a result that is not JSON; the SDK must fail the run, not stall it. */
#define HUGIND_DEFINE_EXPORTS
#include "hugind.h"

HUGIND_EXPORT("hugind_main")
int32_t hugind_main(char *start, int32_t len) {
    (void)len;
    free(start);
    hugind_result_json("{\"unterminated\": ");
    return 0;
}
