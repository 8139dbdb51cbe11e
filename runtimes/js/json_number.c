/* JSON.parse's text-to-number conversion for the hugind JS engine.

   QuickJS-NG converts JSON numbers with the C library's strtod (its only call
   of it; source literals and Number() use its own js_atod). wasi-libc's strtod
   (musl's) scans into a 128-bit long double, which wasm32 has no instructions
   for: every digit goes through compiler-rt's software float128 routines. Under
   wasmtime that made strtod 15% of the time of JSON.parse-heavy code, where
   glibc's strtod is 2% natively. build_engine.py compiles quickjs.c with
   -Dstrtod=hugind_json_strtod, so that one call lands here.

   The caller has already checked the JSON number grammar
   (-?digits(.digits)?([eE][+-]?digits)?), so only that grammar is handled. */

#include <stdint.h>

#include "dtoa.h"

double hugind_json_strtod(const char *s, char **end);

/* 10^0 .. 10^22: every one is exactly representable as a double. */
static const double exact_pow10[23] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* Clinger's fast path: with a significand m <= 2^53 and |e| <= 22, both m and
   10^|e| are exact doubles, so the one IEEE multiplication or division that
   combines them is correctly rounded, as strtod's result is. Returns 0 when
   the text needs the exact (big-number) conversion. */
static int convert_fast(const char *s, const char **end, double *out) {
    const char *p = s;
    int negative = *p == '-';
    if (*p == '-' || *p == '+')
        p++;
    uint64_t m = 0;
    int significant = 0, scale = 0;
    for (; is_digit(*p); p++) {
        if (significant == 19)
            return 0; /* m would overflow: more digits than the fast path keeps */
        m = m * 10 + (uint64_t)(*p - '0');
        significant += m != 0;
    }
    if (*p == '.') {
        for (p++; is_digit(*p); p++) {
            if (significant == 19)
                return 0;
            m = m * 10 + (uint64_t)(*p - '0');
            significant += m != 0;
            scale--;
        }
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        int exp_negative = *p == '-';
        if (*p == '-' || *p == '+')
            p++;
        int exponent = 0;
        for (; is_digit(*p); p++) {
            if (exponent > 9999)
                return 0; /* far out of range: leave overflow and underflow to js_atod */
            exponent = exponent * 10 + (*p - '0');
        }
        scale += exp_negative ? -exponent : exponent;
    }
    double value;
    if (m == 0) {
        value = 0.0;
    } else {
        if (m > (UINT64_C(1) << 53) || scale < -22 || scale > 22)
            return 0;
        value = scale >= 0 ? (double)m * exact_pow10[scale] : (double)m / exact_pow10[-scale];
    }
    *out = negative ? -value : value;
    *end = p;
    return 1;
}

double hugind_json_strtod(const char *s, char **end) {
    const char *next;
    double value;
    if (!convert_fast(s, &next, &value)) {
        /* QuickJS-NG's own exact conversion, the one its number literals use. */
        JSATODTempMem tmp;
        value = js_atod(s, &next, 10, 0, &tmp);
    }
    if (end)
        *end = (char *)next;
    return value;
}
