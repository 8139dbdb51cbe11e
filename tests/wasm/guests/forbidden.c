/* Test guest: imports a function hugind does not grant; it must never run. */
#define HUGIND_DEFINE_EXPORTS
#include "hugind.h"

#include <stdio.h>

/* Would show that the module was started (a reactor runs constructors in _initialize). */
__attribute__((constructor)) static void announce(void) {
    fputs("constructor ran\n", stdout);
    fputs("constructor ran\n", stderr);
}

__attribute__((import_module("env"), import_name("forbidden"))) int32_t forbidden(int32_t);

HUGIND_EXPORT("hugind_main")
int32_t hugind_main(char *start, int32_t len) {
    free(start);
    hugind_result_json(forbidden(len) ? "true" : "false");
    return 0;
}
