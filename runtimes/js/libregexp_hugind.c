/* libregexp as hugind compiles it: the pinned libregexp.c, unchanged, with its
   lre_exec renamed so that fast_regex.c can wrap it (quickjs.c calls lre_exec
   by name, and gets the wrapper). */

#define lre_exec hugind_lre_exec_upstream
#include "libregexp.c"
#undef lre_exec

#include "fast_regex.c"
