/* The exact number text and the exact literal (session 27): core_fmt_g (src/core/numfmt.c, behind
 * mbl_json_number and the text report) must print the very
 * characters of printf's "%.*g", and a decimal literal of the expression parser must be the double
 * strtod gives, bit for bit. Both are checked against glibc on random values of every magnitude
 * they take (and on the rounding ties, where an inexact method goes wrong first), so a change that
 * breaks either fails here rather than in a report's last digit. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/expr.h"
#include "core/numfmt.h"
#include "report/obuf.h"
#include "test.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

static long fmt_bad, fmt_checked, fmt_fallback;

static void check_fmt(double x, int prec)
{
    char a[CORE_NUMFMT_MAX], b[64];
    int n = core_fmt_g(a, x, prec);
    snprintf(b, sizeof b, "%.*g", prec, x);
    if (n < 0) {
        fmt_fallback++;
        /* only where the exact arithmetic would not fit, never in the range reports live in */
        if (isfinite(x) && fabs(x) >= 1e-10 && fabs(x) <= 1e30 && fmt_bad < 10) {
            printf("  fallback at %a (%s), prec %d\n", x, b, prec);
            fmt_bad++;
        }
        return;
    }
    fmt_checked++;
    if ((strcmp(a, b) || n != (int)strlen(b)) && fmt_bad++ < 10) printf("  %a prec %d: '%s', printf '%s'\n", x, prec, a, b);
}

TEST(fmt_matches_printf)
{
    static const double edge[] = {0.0, -0.0, 1.0, -1.0, 0.1, 0.5, 1e-4, 9.99995e-5, 0.000099999999999999995, 1e-5,
                                  123456789012345678.0, 1e16, 1e17, 9.9999999999999995e16, 1e21, 1e22, 1e23,
                                  5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 1e38, 1e39, 3.0e-14,
                                  9.5, 0.95, 0.095, 2.5, 0.25, 1.25e-3, 100000.0, 999999.5, 9999995.0};
    for (size_t i = 0; i < sizeof edge / sizeof *edge; i++)
        for (int p = 1; p <= 17; p++) check_fmt(edge[i], p), check_fmt(-edge[i], p);
    for (long i = 0; i < 400000; i++) {
        uint64_t r = next();
        double x;
        switch (i % 5) {
        case 0: memcpy(&x, &r, sizeof x); break;                                   /* any bit pattern */
        case 1: x = ldexp((double)(r >> 11), (int)(next() % 200) - 150); break;    /* the reports' range */
        case 2: x = (double)(int64_t)(r % 2000001 - 1000000) / (double)(1 + next() % 997); break;
        case 3: x = (double)(r >> 11) * 0.5; break;                                 /* x.5: ties at every precision */
        default: {                                                                  /* short decimals */
            char t[40];
            snprintf(t, sizeof t, "%.*g", (int)(1 + next() % 17), ldexp((double)(r >> 11), (int)(next() % 120) - 90));
            x = strtod(t, NULL);
        }
        }
        if (!isfinite(x)) continue;
        check_fmt(x, i % 3 ? (int)(1 + next() % 17) : 17);
    }
    printf("  %ld values as printf prints them, %ld left to printf (out of range), %ld wrong\n", fmt_checked,
           fmt_fallback, fmt_bad);
    CHECK(fmt_bad == 0);
    CHECK(fmt_checked > 300000);
    char b[CORE_NUMFMT_MAX];
    CHECK(core_fmt_g(b, NAN, 17) < 0 && core_fmt_g(b, INFINITY, 17) < 0 && core_fmt_g(b, 1.0, 0) < 0 &&
          core_fmt_g(b, 1.0, 18) < 0);
}

/* The small values (session 47: below about 1e-14 at 17 digits, scaled in four 64-bit words): every
 * precision against printf from 1e-12 down to 1e-70, where the words run out and printf takes
 * over, and the ties (a value with few significant bits, halfway at a short precision). */
TEST(fmt_small_values)
{
    long before = fmt_bad, checked = fmt_checked, fallback = fmt_fallback;
    for (long i = 0; i < 300000; i++) {
        uint64_t r = next();
        double x = ldexp((double)(r >> 11), -(int)(next() % 190) - 93); /* 2^-93 .. 2^-230 times 2^0 .. 2^53 */
        if (i % 4 == 0) x = ldexp((double)(r >> 50) + 0.5, -(int)(next() % 180) - 40); /* short mantissas */
        check_fmt(i % 2 ? -x : x, i % 3 ? (int)(1 + next() % 17) : 17);
    }
    long small = fmt_checked - checked;
    printf("  %ld small values as printf prints them, %ld left to printf\n", small, fmt_fallback - fallback);
    CHECK(fmt_bad == before);
    CHECK(small > 200000);
    char b[CORE_NUMFMT_MAX];
    CHECK(core_fmt_g(b, 3.5e-16, 17) > 0 && !strcmp(b, "3.5000000000000002e-16"));
    CHECK(core_fmt_g(b, 1e-60, 17) > 0 && core_fmt_g(b, 1e-75, 17) < 0);
}

/* put_digits (session 34): eight digits at a time, then pairs, then one: every digit count and
 * every digit position, on integers around the powers of ten (where a carry or a leading zero
 * goes wrong first), the subnormals and the largest values; and at 17 digits the text reads back
 * as the same double (strtod), as printf's does. */
TEST(fmt_digits_and_round_trip)
{
    long before = fmt_bad;
    for (int k = 0; k <= 22; k++) {
        double p = pow(10.0, k);
        const double near[] = {p - 1, p, p + 1, 2 * p - 1, p * 1.2345678901234567, p - 0.5, p / 7};
        for (size_t i = 0; i < sizeof near / sizeof *near; i++)
            for (int prec = 1; prec <= 17; prec++) check_fmt(near[i], prec), check_fmt(-near[i] / 1e9, prec);
    }
    const double edge[] = {5e-324, -5e-324, 1e-310, 2.2250738585072009e-308, 1e308, -1.7976931348623157e308,
                           9007199254740993.0, 4503599627370497.0, 12345678.0, 87654321.0, 1234567890123456.0};
    for (size_t i = 0; i < sizeof edge / sizeof *edge; i++)
        for (int prec = 1; prec <= 17; prec++) check_fmt(edge[i], prec);
    long trips = 0, lost = 0;
    for (long i = 0; i < 200000; i++) {
        uint64_t r = next();
        double x;
        if (i % 2) memcpy(&x, &r, sizeof x);
        else x = ldexp((double)(r >> 11), (int)(next() % 140) - 100);
        char a[CORE_NUMFMT_MAX];
        if (!isfinite(x) || core_fmt_g(a, x, 17) < 0) continue;
        trips++;
        double y = strtod(a, NULL);
        if (memcmp(&x, &y, sizeof x) && lost++ < 10) printf("  %a printed '%s' reads back as %a\n", x, a, y);
    }
    printf("  %ld values read back from 17 digits, %ld not the same\n", trips, lost);
    CHECK(fmt_bad == before);
    CHECK(lost == 0);
    CHECK(trips > 50000);
}

static long lit_bad, lit_checked;

static void check_literal(mblx_graph *g, const char *t)
{
    mblx_id e;
    mbl_status st;
    double v = NAN, w = strtod(t, NULL);
    if (mblx_parse(g, t, strlen(t), NULL, &e, &st) || !mblx_is_const(g, e, &v)) {
        if (isfinite(w) && lit_bad++ < 10) printf("  '%s' not parsed: %s\n", t, st.msg);
        return;
    }
    lit_checked++;
    if (memcmp(&v, &w, sizeof v) && lit_bad++ < 10) printf("  '%s': %a, strtod %a\n", t, v, w);
}

TEST(literals_match_strtod)
{
    mblx_graph *g = mblx_graph_new();
    CHECK(g != NULL);
    if (!g) return;
    static const char *edge[] = {"0", "0.0", "000123", "0.000123", ".5", "1e0", "1e+5", "1E-5", "9007199254740993",
                                 "9007199254740995", "4503599627370496.5", "4503599627370497.5", "18446744073709551615",
                                 "18446744073709551616", "9999999999999999999", "1.7976931348623157e308", "1e-20",
                                 "1e-21", "1e19", "1e20", "123456789012345678.9e-3", "0.1", "0.2", "0.3",
                                 "2.2250738585072014e-308", "4.9406564584124654e-324", "1e400"};
    for (size_t i = 0; i < sizeof edge / sizeof *edge; i++)
        if (isfinite(strtod(edge[i], NULL))) check_literal(g, edge[i]);
    char t[96];
    for (long i = 0; i < 300000; i++) {
        int pos = 0;
        if (i % 4 == 3) { /* a tie: an integer of 54 significant bits, or one of 53 plus .5 */
            uint64_t k = i % 8 == 3 ? (1ull << 53) + next() % (1ull << 53) : (1ull << 52) + next() % (1ull << 52);
            pos = snprintf(t, sizeof t, i % 8 == 3 ? "%llu" : "%llu.5", (unsigned long long)k);
        } else {
            int nd = 1 + (int)(next() % 21), dot = (int)(next() % (unsigned)(nd + 2));
            for (int k = 0; k < nd; k++) {
                if (k == dot) t[pos++] = '.';
                t[pos++] = (char)('0' + next() % 10);
            }
        }
        if (next() % 2) pos += snprintf(t + pos, sizeof t - (size_t)pos, "e%d", (int)(next() % 60) - 30);
        t[pos] = '\0';
        check_literal(g, t);
        if (i % 20000 == 19999) { /* a fresh graph now and then: the constants would fill one */
            mblx_graph_free(g);
            g = mblx_graph_new();
            if (!g) break;
        }
    }
    mblx_graph_free(g);
    printf("  %ld literals as strtod reads them, %ld wrong\n", lit_checked, lit_bad);
    CHECK(lit_bad == 0);
    CHECK(lit_checked > 250000);
}

/* report_ob_g's memo of the texts formatted last (session 35): a report's values repeat, and a
 * repeated value's text is copied from the memo. Values drawn from a pool of 600 (more than the
 * memo's slots: collisions and evictions), at three precisions and two widths, -0.0, and values
 * printf alone prints (NaN, the largest): each text as printf's "%*.*g", in order. */
TEST(ob_g_memo_matches_printf)
{
    double pool[600];
    for (int i = 0; i < 600; i++) {
        uint64_t r = next();
        pool[i] = i == 0 ? -0.0 : i == 1 ? NAN : i == 2 ? 1.7976931348623157e308
                                                      : ldexp((double)(r >> 11), (int)(next() % 120) - 90) * (r & 1 ? -1 : 1);
    }
    char *got = NULL, *want = malloc(64 * 40000 + 1);
    size_t got_len = 0, wn = 0;
    FILE *f = open_memstream(&got, &got_len);
    CHECK(f != NULL && want != NULL);
    if (!f || !want) return;
    obuf o;
    report_ob_init(&o, f);
    static const int precs[3] = {17, 6, 12};
    for (int k = 0; k < 40000; k++) {
        double x = pool[next() % 600];
        int prec = precs[next() % 3], width = next() % 4 ? 0 : 24;
        report_ob_g(&o, x, width, prec);
        report_ob_put(&o, ",", 1);
        wn += (size_t)snprintf(want + wn, 64, "%*.*g,", width, prec, x == 0.0 ? 0.0 : x);
    }
    report_ob_flush(&o);
    fclose(f);
    CHECK_EQ_INT((int)got_len, (int)wn);
    CHECK(got && got_len == wn && !memcmp(got, want, wn));
    free(got), free(want);
}

/* core_fmt_int against printf's "%d": the extremes, every power of ten and its neighbours of either
 * sign (each digit count), and 100,000 values spread over the range */
static int int_differs(int v)
{
    char a[16], b[16];
    memset(a, 'x', sizeof a);
    size_t n = core_fmt_int(a, v);
    int m = snprintf(b, sizeof b, "%d", v);
    return (int)n != m || strcmp(a, b) != 0;
}

TEST(fmt_int_matches_printf)
{
    int bad = int_differs(0) + int_differs(INT32_MAX) + int_differs(INT32_MIN) + int_differs(INT32_MIN + 1);
    for (long long t = 1; t <= INT32_MAX; t *= 10)
        for (int d = -1; d <= 1; d++)
            if (t + d <= INT32_MAX) bad += int_differs((int)(t + d)) + int_differs((int)-(t + d));
    uint32_t x = 12345u;
    for (int i = 0; i < 100000; i++) {
        x = x * 1664525u + 1013904223u;
        bad += int_differs((int)x) + int_differs((int)(x >> (x & 31)));
    }
    CHECK_MSG(bad == 0, "%d values differ", bad);
}

int main(void)
{
    RUN(fmt_matches_printf);
    RUN(fmt_small_values);
    RUN(fmt_digits_and_round_trip);
    RUN(literals_match_strtod);
    RUN(ob_g_memo_matches_printf);
    RUN(fmt_int_matches_printf);
    return test_summary("numfmt");
}
