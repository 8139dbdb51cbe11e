/* QuickJS-NG as hugind compiles it: the pinned quickjs.c, unchanged, in one
   translation unit with hugind's fast paths, which need its internals (object
   shapes, the sort's comparison context, the StringBuffer). Each fast path is
   its own file, included after quickjs.c; each one does what the code it
   stands in for does, and falls back to it for anything it does not handle. */

#include "cutils.h"

/* Array.prototype.sort and %TypedArray%.prototype.sort with a comparator go to
   hugind_sort (fast_sort.c); every other rqsort call is QuickJS's own. The macro
   is defined after cutils.h, so rqsort's definition keeps its name, and its
   expansion names rqsort again, which the preprocessor does not expand twice. */
static void hugind_sort(void *base, size_t nmemb, size_t size, cmp_f cmp, void *opaque);
static int js_array_cmp_generic(const void *a, const void *b, void *opaque);
static int js_TA_cmp_generic(const void *a, const void *b, void *opaque);
#define rqsort(base, nmemb, size, cmp, opaque)                                                     \
    (((cmp) == js_array_cmp_generic || (cmp) == js_TA_cmp_generic)                                 \
         ? hugind_sort((base), (nmemb), (size), (cmp), (opaque))                                   \
         : rqsort((base), (nmemb), (size), (cmp), (opaque)))

/* quickjs.c converts numbers to text only through js_dtoa; it calls
   hugind_js_dtoa (fast_dtoa.c) instead. dtoa.h comes first, so its own
   declarations keep their names. */
#include "dtoa.h"
static int hugind_js_dtoa(char *buf, double d, int radix, int n_digits, int flags, JSDTOATempMem *tmp_mem);
#define js_dtoa hugind_js_dtoa

#include "quickjs.c"

#undef rqsort
#undef js_dtoa

#include "fast_sort.c"
#include "fast_dtoa.c"

/* JSON.stringify without a replacer (hugind_json_stringify, installed by
   shim.c in place of the engine's, which it calls for what it does not handle). */
#include "fast_stringify.c"

/* Bytes between a Uint8Array and a number[] for fs.read_bytes/write_bytes
   (native.byteList, native.listBytes). */
#include "fast_bytes.c"
