#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/json_plain.h"
#include "core/name_word.h"
#include "mblin/json.h"
#include "mblin/status.h"
#include "test.h"

TEST(status_messages)
{
    mbl_status st;
    mbl_status_clear(&st);
    CHECK_EQ_INT(st.code, 0);
    CHECK(st.msg[0] == '\0');
    int rc = mbl_error(&st, MBL_EDIM, "matrix is %d x %d,\nexpected %d", 2, 3, 4);
    CHECK_EQ_INT(rc, MBL_EDIM);
    CHECK_EQ_INT(st.code, MBL_EDIM);
    CHECK(strcmp(st.msg, "matrix is 2 x 3, expected 4") == 0); /* newline folded */
    mbl_error_prefix(&st, "in %s", "solve");
    CHECK(strcmp(st.msg, "in solve: matrix is 2 x 3, expected 4") == 0);
    CHECK_EQ_INT(mbl_error(NULL, MBL_ENOMEM, "x"), MBL_ENOMEM);
    mbl_status_clear(NULL);
    CHECK(strcmp(mbl_strerror(MBL_ESINGULAR), "singular matrix") == 0);
}

TEST(allocation)
{
    CHECK(mbl_alloc_array(SIZE_MAX / 2, 4) == NULL); /* overflow refused */
    void *p = mbl_alloc_array(10, 8);
    CHECK(p != NULL);
    mbl_free(p);
    mbl_alloc_fail_after(1);
    void *a = mbl_malloc(8);
    void *b = mbl_malloc(8);
    CHECK(a != NULL);
    CHECK(b == NULL);
    mbl_alloc_fail_after(-1);
    mbl_free(a);
    mbl_free(NULL);
}

/* The one JSON writer (include/mblin/json.h): RFC 8259 escapes, 17 digits, null off the reals. */
static void json_to(char *buf, size_t n, const char *s, const double *x, int zero_unsigned)
{
    FILE *f = fmemopen(buf, n, "w");
    if (s || !x) mbl_json_string(f, s);
    if (x) mbl_json_number(f, *x, 17, zero_unsigned);
    fclose(f);
}

TEST(json_writer)
{
    char buf[128];
    json_to(buf, sizeof buf, "a\"b\\c\n\t\x01\x1f\xc3\xa9", NULL, 0);
    CHECK(strcmp(buf, "\"a\\\"b\\\\c\\n\\t\\u0001\\u001f\xc3\xa9\"") == 0);
    json_to(buf, sizeof buf, NULL, NULL, 0);
    CHECK(strcmp(buf, "\"\"") == 0);
    /* the plain runs written whole (session 34): an escape first, last, twice in a row, none */
    json_to(buf, sizeof buf, "\"q1\\\\", NULL, 0);
    CHECK(strcmp(buf, "\"\\\"q1\\\\\\\\\"") == 0);
    json_to(buf, sizeof buf, "theta[12]", NULL, 0);
    CHECK(strcmp(buf, "\"theta[12]\"") == 0);
    /* the plain run the report's buffered names take as they are (core_json_plain_len) */
    CHECK(core_json_plain_len("theta[12]") == 9 && core_json_plain_len("ab\"c") == 2 &&
          core_json_plain_len("a\\b") == 1 && core_json_plain_len("\x1fx") == 0 && core_json_plain_len("") == 0 &&
          core_json_plain_len("\xc3\xa9\x7f") == 3);
    double x = 0.1;
    json_to(buf, sizeof buf, NULL, &x, 0);
    CHECK(strcmp(buf, "0.10000000000000001") == 0 && strtod(buf, NULL) == 0.1);
    x = -0.0;
    json_to(buf, sizeof buf, NULL, &x, 0);
    CHECK(strcmp(buf, "-0") == 0);
    json_to(buf, sizeof buf, NULL, &x, 1);
    CHECK(strcmp(buf, "0") == 0);
    x = INFINITY;
    json_to(buf, sizeof buf, NULL, &x, 1);
    CHECK(strcmp(buf, "null") == 0);
    x = NAN;
    json_to(buf, sizeof buf, NULL, &x, 0);
    CHECK(strcmp(buf, "null") == 0);
}

/* name_word against the bytes shifted in one at a time, at every length 0 to 12 and every offset of
 * a buffer (the overlapping loads of 4 read inside name[0 .. len) only: ASan checks the reads); and
 * name_word_has_nul finds a NUL at each position among the first len bytes and ignores those after */
TEST(name_words)
{
    char buf[24];
    for (int i = 0; i < 24; i++) buf[i] = (char)(0x41 + 7 * i);
    for (size_t len = 0; len <= 12; len++)
        for (size_t off = 0; off + len <= sizeof buf; off++) {
            char *name = malloc(len ? len : 1); /* exactly len bytes, so that a read past them is caught */
            memcpy(name, buf + off, len);
            uint64_t want = 0;
            for (size_t k = 0; k < len && k < 8; k++) want |= (uint64_t)(unsigned char)name[k] << (8 * k);
            CHECK(name_word(name, len) == want);
            CHECK(!name_word_has_nul(want, len));
            for (size_t z = 0; z < len && z < 8; z++) {
                char keep = name[z];
                name[z] = 0;
                CHECK(name_word_has_nul(name_word(name, len), len));
                name[z] = keep;
            }
            free(name);
        }
    CHECK(name_word("ab", 2) != name_word("ab\1", 3)); /* the zeros begin at the length */
    CHECK(!name_word_has_nul(name_word("abcd\0fg", 4), 4)); /* a NUL past len is not seen */
}

int main(void)
{
    RUN(status_messages);
    RUN(allocation);
    RUN(json_writer);
    RUN(name_words);
    return test_summary("core");
}
