/* Test guest: 64 MiB of zeroed static data, so its memory starts above small caps. */
#define HUGIND_DEFINE_EXPORTS
#include "hugind.h"

static char big[64 << 20];

HUGIND_EXPORT("hugind_main")
int32_t hugind_main(char *start, int32_t len) {
    big[len] = 1; /* used, so the array is not optimized away */
    free(start);
    hugind_result_json(((volatile char *)big)[len] ? "true" : "false");
    return 0;
}
