/* printf's "%.*g" of a double without printf, and (core_decimal_value) a decimal literal's double
 * without strtod. printf: glibc's __printf_fp takes about 2,800 instructions
 * a number at 17 digits (multi-precision arithmetic for every value), 28 M of the N = 1000
 * four-bar's `--json`. Here x = m 2^e is scaled by 10^k in 128-bit integers, exactly, so the
 * digits are those of the exact binary value, rounded half to even as glibc rounds them in the
 * default rounding mode; the text is laid out by the rules of %g (C11 7.21.6.1). Small values
 * (below about 1e-14 at 17 digits, the rounding noise of a point's zero coordinates) are scaled in
 * four 64-bit words (scaled_wide). Values whose scaling does not fit (|x| beyond about 1e38 or
 * below about 1e-63 at 17 digits) are left to printf. */
#include "core/numfmt.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__SIZEOF_INT128__)
__extension__ typedef unsigned __int128 u128;

static int bitlen(u128 v)
{
    uint64_t hi = (uint64_t)(v >> 64), lo = (uint64_t)v;
    return hi ? 128 - __builtin_clzll(hi) : lo ? 64 - __builtin_clzll(lo) : 0;
}

/* 10^j (j <= 38) and 5^k (k <= 54): u128 */
static u128 pow10_u128(int j)
{
    static const uint64_t p[20] = {1ull,
                                   10ull,
                                   100ull,
                                   1000ull,
                                   10000ull,
                                   100000ull,
                                   1000000ull,
                                   10000000ull,
                                   100000000ull,
                                   1000000000ull,
                                   10000000000ull,
                                   100000000000ull,
                                   1000000000000ull,
                                   10000000000000ull,
                                   100000000000000ull,
                                   1000000000000000ull,
                                   10000000000000000ull,
                                   100000000000000000ull,
                                   1000000000000000000ull,
                                   10000000000000000000ull};
    return j <= 19 ? (u128)p[j] : (u128)p[19] * p[j - 19];
}

static u128 pow5_u128(int k) /* k <= 54 */
{
    static const uint64_t p[28] = {1ull,
                                   5ull,
                                   25ull,
                                   125ull,
                                   625ull,
                                   3125ull,
                                   15625ull,
                                   78125ull,
                                   390625ull,
                                   1953125ull,
                                   9765625ull,
                                   48828125ull,
                                   244140625ull,
                                   1220703125ull,
                                   6103515625ull,
                                   30517578125ull,
                                   152587890625ull,
                                   762939453125ull,
                                   3814697265625ull,
                                   19073486328125ull,
                                   95367431640625ull,
                                   476837158203125ull,
                                   2384185791015625ull,
                                   11920928955078125ull,
                                   59604644775390625ull,
                                   298023223876953125ull,
                                   1490116119384765625ull,
                                   7450580596923828125ull};
    return k <= 27 ? (u128)p[k] : (u128)p[27] * p[k - 27];
}

/* 10^i as a double, i = -40 .. 40 (the literal's rounding: only a guess of the exponent below) */
#define P10_MIN (-40)
#define P10_MAX 40
static const double p10[P10_MAX - P10_MIN + 1] = {
    1e-40, 1e-39, 1e-38, 1e-37, 1e-36, 1e-35, 1e-34, 1e-33, 1e-32, 1e-31, 1e-30, 1e-29, 1e-28, 1e-27,
    1e-26, 1e-25, 1e-24, 1e-23, 1e-22, 1e-21, 1e-20, 1e-19, 1e-18, 1e-17, 1e-16, 1e-15, 1e-14, 1e-13,
    1e-12, 1e-11, 1e-10, 1e-9,  1e-8,  1e-7,  1e-6,  1e-5,  1e-4,  1e-3,  1e-2,  1e-1,  1e0,   1e1,
    1e2,   1e3,   1e4,   1e5,   1e6,   1e7,   1e8,   1e9,   1e10,  1e11,  1e12,  1e13,  1e14,  1e15,
    1e16,  1e17,  1e18,  1e19,  1e20,  1e21,  1e22,  1e23,  1e24,  1e25,  1e26,  1e27,  1e28,  1e29,
    1e30,  1e31,  1e32,  1e33,  1e34,  1e35,  1e36,  1e37,  1e38,  1e39,  1e40};

/* scaled's small values (k from 32 to 80: |x| below about 1e-14 at 17 digits, down to about
 * 1e-63): m 5^k in four 64-bit words (at most 53 + 186 bits), then its bits from s = -(e + k) up
 * as the quotient (at most 64 bits, else -1) and those below s against a half */
static int scaled_wide(uint64_t m, int e, int k, u128 *q, int *cmp)
{
    uint64_t w[4] = {m, 0, 0, 0};
    for (int left = k; left > 0;) {
        int t = left > 27 ? 27 : left;
        uint64_t f = (uint64_t)pow5_u128(t); /* 5^27 < 2^63 */
        u128 carry = 0;
        for (int i = 0; i < 4; i++) {
            u128 p = (u128)w[i] * f + carry;
            w[i] = (uint64_t)p, carry = p >> 64;
        }
        if (carry) return -1;
        left -= t;
    }
    int s = -(e + k);
    if (s < 1 || s > 255 - 64) return -1;
    int wi = s / 64, b = s % 64;
    for (int i = wi + 2; i < 4; i++)
        if (w[i]) return -1; /* the quotient beyond 128 bits */
    u128 hi = wi + 1 < 4 ? w[wi + 1] : 0;
    u128 v = ((u128)hi << 64 | w[wi]) >> b;
    if (v >> 64) return -1;
    *q = v;
    /* the rest: bit s - 1 (the half) and any bit below it */
    int hb = s - 1;
    int half = (int)((w[hb / 64] >> (hb % 64)) & 1u), below = (w[hb / 64] & ((1ull << (hb % 64)) - 1)) != 0;
    for (int i = 0; i < hb / 64 && !below; i++) below = w[i] != 0;
    *cmp = !half ? -1 : below ? 1 : 0;
    return 0;
}

/* floor(|x| 10^k) (prec digits wanted) and whether the rest is above, at or below a half (1, 0,
 * -1 in *cmp): 0, or -1 when it does not fit */
static int scaled(uint64_t m, int e, int k, u128 *q, int *cmp)
{
    u128 num = m;
    if (k >= 0) {
        if (k > 31) return k <= 80 ? scaled_wide(m, e, k, q, cmp) : -1; /* m 5^k in 127 bits */
        num *= pow5_u128(k);
        int t = e + k; /* the power of 2 left */
        if (t >= 0) {
            if (bitlen(num) + t > 127) return -1;
            *q = num << t;
            *cmp = -1;
            return 0;
        }
        int s = -t;
        if (s > 126) return -1;
        *q = num >> s;
        u128 r = num & (((u128)1 << s) - 1), half = (u128)1 << (s - 1);
        *cmp = r > half ? 1 : r == half ? 0 : -1;
        return 0;
    }
    int j = -k;
    if (j > 38) return -1;
    u128 den = pow10_u128(j);
    if (e >= 0) {
        if (bitlen(num) + e > 127) return -1;
        num <<= e;
    } else {
        if (bitlen(den) - e > 126) return -1;
        den <<= -e;
    }
    *q = num / den;
    u128 r2 = (num % den) << 1;
    *cmp = r2 > den ? 1 : r2 == den ? 0 : -1;
    return 0;
}

/* v's n decimal digits (v < 10^n, n <= 19), leading zeros included, into d[0 .. n): eight at a
 * time in 32-bit halves (a 64-bit division by 100 a pair before: 140 instructions a 17-digit
 * number, a third of core_fmt_g) */
static void put_digits(char *d, uint64_t v, int n)
{
    static const char pairs[201] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                   "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                   "8081828384858687888990919293949596979899";
    for (; n >= 8; n -= 8, v /= 100000000u) {
        uint32_t low = (uint32_t)(v % 100000000u), a = low / 10000, b = low % 10000;
        memcpy(d + n - 2, pairs + 2 * (b % 100), 2);
        memcpy(d + n - 4, pairs + 2 * (b / 100), 2);
        memcpy(d + n - 6, pairs + 2 * (a % 100), 2);
        memcpy(d + n - 8, pairs + 2 * (a / 100), 2);
    }
    uint32_t w = (uint32_t)v;
    for (; n >= 2; n -= 2, w /= 100) memcpy(d + n - 2, pairs + 2 * (w % 100), 2);
    if (n) d[0] = (char)('0' + w);
}

size_t core_fmt_int(char *buf, int v)
{
    uint32_t u = v < 0 ? 0u - (uint32_t)v : (uint32_t)v;
    size_t k = v < 0;
    int n = 1;
    for (uint64_t t = 10; n < 10 && u >= t; t *= 10) n++;
    if (k) buf[0] = '-';
    put_digits(buf + k, u, n);
    buf[k + (size_t)n] = '\0';
    return k + (size_t)n;
}

int core_fmt_g(char *buf, double x, int prec)
{
    if (!isfinite(x) || prec < 1 || prec > 17) return -1;
    char *o = buf;
    if (signbit(x)) *o++ = '-';
    if (x == 0) {
        *o++ = '0';
        *o = '\0';
        return (int)(o - buf);
    }
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    int be = (int)((bits >> 52) & 0x7ff);
    uint64_t m = bits & ((1ull << 52) - 1);
    int e;
    if (be) m |= 1ull << 52, e = be - 1075;
    else e = -1074;
    int L = 64 - __builtin_clzll(m);
    /* X = floor(log10 |x|) is X0 or X0 + 1 (log10 |x| lies in [(e + L - 1), (e + L)) log10 2);
     * the table's power of ten guesses which, the scaled value's digit count decides */
    int n2 = e + L - 1;
    int X = n2 >= 0 ? (n2 * 78913) >> 18 : -((-n2 * 78913 + (1 << 18) - 1) >> 18);
    if (X + 1 >= P10_MIN && X + 1 <= P10_MAX && fabs(x) >= p10[X + 1 - P10_MIN]) X++;
    const u128 lo = pow10_u128(prec - 1), hi = lo * 10;
    u128 q;
    int cmp;
    if (scaled(m, e, prec - 1 - X, &q, &cmp)) return -1;
    if (q >= hi || q < lo) {
        X += q >= hi ? 1 : -1;
        if (scaled(m, e, prec - 1 - X, &q, &cmp)) return -1;
    }
    if (q < lo || q >= hi) return -1; /* not expected */
    if (cmp > 0 || (cmp == 0 && (q & 1))) q++;
    if (q == hi) q = lo, X++; /* 9.99...95 -> 10.0...0 */
    char d[20];
    put_digits(d, (uint64_t)q, prec);
    int nd = prec; /* the digits without trailing zeros */
    while (nd > 1 && d[nd - 1] == '0') nd--;
    if (X < prec && X >= -4) { /* %f with prec - 1 - X decimals, trailing zeros removed */
        if (X >= 0) {
            memcpy(o, d, (size_t)X + 1);
            o += X + 1;
            if (nd > X + 1) {
                *o++ = '.';
                memcpy(o, d + X + 1, (size_t)(nd - X - 1));
                o += nd - X - 1;
            }
        } else {
            *o++ = '0';
            *o++ = '.';
            for (int i = 0; i < -X - 1; i++) *o++ = '0';
            memcpy(o, d, (size_t)nd);
            o += nd;
        }
    } else { /* %e with prec - 1 decimals, trailing zeros removed */
        *o++ = d[0];
        if (nd > 1) {
            *o++ = '.';
            memcpy(o, d + 1, (size_t)nd - 1);
            o += nd - 1;
        }
        *o++ = 'e';
        *o++ = X < 0 ? '-' : '+';
        int a = X < 0 ? -X : X;
        if (a >= 100) *o++ = (char)('0' + a / 100);
        *o++ = (char)('0' + a / 10 % 10);
        *o++ = (char)('0' + a % 10);
    }
    *o = '\0';
    return (int)(o - buf);
}

/* (numfmt.h) The N = 1000 four-bar's 2,003 initial values have 17 significant digits, beyond
 * strtod's exact fast path: about 1,100 instructions each in its multi-precision code. */
int core_decimal_value(uint64_t d, int e, double *out)
{
    if (d == 0) {
        *out = 0.0;
        return 0;
    }
    u128 q;
    int sticky = 0, scale; /* the value: q 2^scale, and more when sticky (a rest below q's last bit) */
    if (e >= 0) {
        if (e > 19) return -1;
        q = (u128)d * pow10_u128(e); /* below 2^64 10^19 < 2^128 */
        scale = 0;
    } else {
        if (e < -20) return -1;
        u128 den = pow10_u128(-e), num;
        int s = 127 - bitlen(d); /* num in [2^126, 2^127) */
        num = (u128)d << s;
        q = num / den; /* at least 2^126 / 10^20 > 2^59: 53 bits and more */
        sticky = num % den != 0;
        scale = -s;
    }
    int b = bitlen(q);
    if (b > 53) {
        int sh = b - 53;
        u128 low = q & (((u128)1 << sh) - 1), half = (u128)1 << (sh - 1);
        q >>= sh;
        scale += sh;
        if (low > half || (low == half && (sticky || (q & 1)))) q++; /* q may reach 2^53: still exact */
    } else if (sticky) {
        return -1; /* not expected: the division keeps more than 53 bits */
    }
    *out = ldexp((double)(uint64_t)q, scale);
    return 0;
}
#else
int core_fmt_g(char *buf, double x, int prec)
{
    (void)buf, (void)x, (void)prec;
    return -1;
}

int core_decimal_value(uint64_t d, int e, double *out)
{
    (void)d, (void)e, (void)out;
    return -1;
}
#endif

void core_put_g(FILE *f, double x, int prec)
{
    char b[CORE_NUMFMT_MAX];
    int n = core_fmt_g(b, x, prec);
    if (n >= 0) fwrite(b, 1, (size_t)n, f);
    else fprintf(f, "%.*g", prec, x);
}
