/* Number to string in base 10 (String(x), template literals, JSON.stringify,
   console output) by a shortest-digits algorithm with 128-bit scaling, in the
   manner of Giulietti's Schubfach. Included by quickjs_hugind.c, whose calls
   of js_dtoa come here.

   QuickJS's js_dtoa finds the fewest digits that read back as the same double
   by trying digit counts one after another in multi-precision arithmetic: about
   350 ns a number natively and twice that under wasm. Here one scaling of the
   double's rounding interval by a 126-bit power of ten (hugind_pow10.h, which
   build_engine.py computes exactly) gives the candidates, as in the
   standard's Number::toString: the fewest digits, and of those the closest
   to the double (ties to even).

   The scaled bounds are a little above the exact ones (the power of ten is
   rounded up). When that margin could hide an exact tie with a candidate (the
   product's fraction is below 2^-64 with an inexact power: about one double
   in a thousand), the number goes to QuickJS's js_dtoa, as does every other
   radix, format and special value. */

#include "hugind_pow10.h"

static inline void mul_64x64(uint64_t a, uint64_t b, uint64_t *hi, uint64_t *lo) {
    uint64_t a0 = (uint32_t)a, a1 = a >> 32, b0 = (uint32_t)b, b1 = b >> 32;
    uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    uint64_t mid = (p00 >> 32) + (uint32_t)p01 + (uint32_t)p10;
    *lo = (mid << 32) | (uint32_t)p00;
    *hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

/* (g * cp) / 2^128, rounded to odd (a dropped nonzero fraction sets the last
   bit, so comparisons with even numbers stay exact); false when an exact tie
   cannot be told from the rounding margin. */
static inline bool scale_to_odd(const uint64_t g[2], bool inexact, uint64_t cp, uint64_t *out) {
    uint64_t hh, hl, lh, ll;
    mul_64x64(g[0], cp, &hh, &hl);
    mul_64x64(g[1], cp, &lh, &ll);
    uint64_t mid = hl + lh;
    uint64_t top = hh + (mid < hl);
    if (inexact && mid == 0)
        return false;
    *out = top | ((mid | ll) != 0);
    return true;
}

/* The shortest closest decimal digits * 10^exp10 of a finite nonzero |v|;
   false to leave it to js_dtoa. */
static bool shortest_decimal(double v, uint64_t *digits, int *exp10) {
    uint64_t bits = float64_as_uint64(v);
    int biased = (int)((bits >> 52) & 0x7ff);
    uint64_t fraction = bits & (((uint64_t)1 << 52) - 1);
    uint64_t c = biased ? fraction | ((uint64_t)1 << 52) : fraction;
    int q = biased ? biased - 1075 : -1074;
    if (q < 0 && q > -53 && ((c >> -q) << -q) == c) { /* an integer below 2^53 */
        *digits = c >> -q;
        *exp10 = 0;
        return true;
    }
    /* The interval of reals that round to v, in units of 2^(q-2): [cbl, cbr],
       closed when c is even. Below a power of two the lower gap is half. */
    bool irregular = fraction == 0 && biased > 1;
    uint64_t cb = c << 2, cbr = cb + 2, cbl = irregular ? cb - 1 : cb - 2;
    int out = (int)(c & 1);
    /* k = floor(log10(2^q)), or floor(log10(3/4 * 2^q)) when irregular, so the
       interval scaled by 10^-k is narrower than 10 (the constants were checked
       against exact arithmetic for every q a double has). */
    int k = irregular ? (q * 315653 - 131072) >> 20 : (q * 315653) >> 20;
    int m = -k;
    if (m < HUGIND_POW10_MIN || m > HUGIND_POW10_MAX)
        return false;
    const uint64_t *g = hugind_pow10[m - HUGIND_POW10_MIN];
    bool inexact = hugind_pow10_inexact[m - HUGIND_POW10_MIN];
    int h = q + ((m * 1741647) >> 19) + 3; /* floor(log2(10^m)) = (m * 1741647) >> 19 */
    uint64_t vb, vbl, vbr;
    if (!scale_to_odd(g, inexact, cb << h, &vb) || !scale_to_odd(g, inexact, cbl << h, &vbl) ||
        !scale_to_odd(g, inexact, cbr << h, &vbr))
        return false;
    /* In quarters: s is v * 10^-k rounded down. One digit fewer when exactly
       one multiple of ten lies in the interval (s has two digits or more only
       for a subnormal with a tiny significand: 6e-323 is 60 * 10^-324); else
       s or s + 1. */
    uint64_t s = vb >> 2;
    if (s >= 10) {
        uint64_t sp10 = s / 10 * 10, tp10 = sp10 + 10;
        bool upin = vbl + out <= sp10 << 2;
        bool wpin = (tp10 << 2) + out <= vbr;
        if (upin != wpin) {
            *digits = upin ? sp10 : tp10;
            *exp10 = k;
            return true;
        }
    }
    uint64_t t = s + 1;
    bool uin = vbl + out <= s << 2;
    bool win = (t << 2) + out <= vbr;
    if (uin != win) {
        *digits = uin ? s : t;
    } else {
        int64_t cmp = (int64_t)(vb - ((s + t) << 1)); /* against the midpoint of s and t */
        *digits = cmp < 0 || (cmp == 0 && (s & 1) == 0) ? s : t;
    }
    *exp10 = k;
    return true;
}

/* Number::toString's layout of digits * 10^exp10. */
static int format_number(char *buf, bool negative, uint64_t digits, int exp10) {
    char text[24];
    while (digits % 10 == 0) {
        digits /= 10;
        exp10++;
    }
    int len = (int)u64toa(text, digits);
    int point = len + exp10; /* the value is 0.text * 10^point */
    char *p = buf;
    if (negative)
        *p++ = '-';
    if (len <= point && point <= 21) {
        memcpy(p, text, len);
        p += len;
        for (int i = len; i < point; i++)
            *p++ = '0';
    } else if (0 < point && point <= 21) {
        memcpy(p, text, point);
        p += point;
        *p++ = '.';
        memcpy(p, text + point, len - point);
        p += len - point;
    } else if (-6 < point && point <= 0) {
        *p++ = '0';
        *p++ = '.';
        for (int i = point; i < 0; i++)
            *p++ = '0';
        memcpy(p, text, len);
        p += len;
    } else {
        int e = point - 1;
        *p++ = text[0];
        if (len > 1) {
            *p++ = '.';
            memcpy(p, text + 1, len - 1);
            p += len - 1;
        }
        *p++ = 'e';
        *p++ = e < 0 ? '-' : '+';
        p += u32toa(p, (uint32_t)(e < 0 ? -e : e));
    }
    return (int)(p - buf);
}

static int hugind_js_dtoa(char *buf, double d, int radix, int n_digits, int flags, JSDTOATempMem *tmp_mem) {
    uint64_t digits;
    int exp10;
    if (radix == 10 && flags == JS_DTOA_FORMAT_FREE && isfinite(d) && d != 0 &&
        shortest_decimal(fabs(d), &digits, &exp10))
        return format_number(buf, d < 0, digits, exp10);
    return js_dtoa(buf, d, radix, n_digits, flags, tmp_mem);
}
