/* The mechanism compiler's plain formatting (src/mech/util.c: mech_snprintf's fmt_plain, the
 * conversions %s, %d, %c and %%) against the C library's snprintf: the same length and the same
 * bytes at every buffer size from 0 to past the text (cut short and terminated as snprintf cuts),
 * and another conversion left to vsnprintf. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "mech/mech_internal.h"
#include "test.h"

/* mech_snprintf(f, s, d, c) and snprintf's text at every cap from 0 to the length + 3; a byte past
 * cap stays as it was */
static void same_at_every_cap(const char *f, const char *s, int d, int c)
{
    char want[256], got[256];
    int n = snprintf(want, sizeof want, f, s, d, c);
    CHECK(n >= 0 && n < (int)sizeof want - 8);
    for (int cap = 0; cap <= n + 3; cap++) {
        char ref[256];
        memset(got, 'Z', sizeof got), memset(ref, 'Z', sizeof ref);
        int r = snprintf(ref, (size_t)cap, f, s, d, c);
        int k = mech_snprintf(got, (size_t)cap, f, s, d, c);
        CHECK_EQ_INT(k, r);
        CHECK(!memcmp(got, ref, sizeof got));
    }
}

TEST(plain_formats_as_snprintf)
{
    /* every format takes a string, then two ints (the first also as a %c; unused ones allowed) */
    const char *fmts[] = {"",         "abc",      "%s",       "_p_%s_%d", "cos(%s)%d%c", "%s%d%%%c",
                          "%%%s%%",   "(%s*%s)",  "%s_%d%c",  "x%s%c%d",  "%s%d",        "-%s-%d-%c-"};
    const char *strs[] = {"", "rear_wheel", "a_rather_long_name_of_a_marker_on_the_front_frame_e0"};
    const int ints[] = {0, 7, -7, 1234567, INT_MAX, INT_MIN};
    for (size_t a = 0; a < sizeof fmts / sizeof *fmts; a++)
        for (size_t b = 0; b < sizeof strs / sizeof *strs; b++)
            for (size_t e = 0; e < sizeof ints / sizeof *ints; e++) {
                if (!strcmp(fmts[a], "(%s*%s)")) { /* two strings */
                    char want[256], got[256];
                    for (int cap = 0; cap < 24; cap++) {
                        memset(got, 'Z', sizeof got), memset(want, 'Z', sizeof want);
                        CHECK_EQ_INT(mech_snprintf(got, (size_t)cap, fmts[a], strs[b], "y"),
                                     snprintf(want, (size_t)cap, fmts[a], strs[b], "y"));
                        CHECK(!memcmp(got, want, sizeof got));
                    }
                    continue;
                }
                same_at_every_cap(fmts[a], strs[b], ints[e], 'q');
            }
}

TEST(other_conversions_by_vsnprintf)
{
    char got[64], want[64];
    CHECK_EQ_INT(mech_snprintf(got, sizeof got, "%s=%.3g (%5d)", "k", 0.123456, 42),
                 snprintf(want, sizeof want, "%s=%.3g (%5d)", "k", 0.123456, 42));
    CHECK(!strcmp(got, want));
    volatile size_t cap = 4; /* cut short (not known to the compiler) */
    CHECK_EQ_INT(mech_snprintf(got, cap, "%s%x", "abcdef", 255), snprintf(want, cap, "%s%x", "abcdef", 255));
    CHECK(!strcmp(got, want));
}

int main(void)
{
    RUN(plain_formats_as_snprintf);
    RUN(other_conversions_by_vsnprintf);
    return test_summary("mech_fmt");
}
