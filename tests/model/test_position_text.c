/* The position before the text of a user's expression kept for the domain check's message
 * (src/model/explain.c model_position_text, model_record_srcx): "file:line:col: what" written
 * without printf, against snprintf's "%s:%d:%d: %s" into buffers of every size around the text's
 * length (the cut at len - 1), for lines and columns of 1 to 10 digits, 0, negative and the ints'
 * ends, and file names and whats of 0 to 600 characters. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "model/position_text.h"
#include "test.h"

static long mismatches;

static void check(size_t len, const char *file, int line, int col, const char *what)
{
    char want[1400], got[1400];
    memset(got, 'Z', sizeof got);
    snprintf(want, len, "%s:%d:%d: %s", file, line, col, what);
    size_t n = model_position_text(got, len, file, line, col, what);
    if (strcmp(got, want) || n != strlen(want) || got[len] != 'Z') { /* nothing written past len */
        if (mismatches++ < 5)
            fprintf(stderr, "len %zu, %d:%d: '%.80s' (%zu), expected '%.80s' (%zu)\n", len, line, col, got, n, want,
                    strlen(want));
    }
}

TEST(as_snprintf_writes_it)
{
    static const int nums[] = {0, 1, 9, 10, 99, 100, 12345, 99999, 100000, 1234567890, INT_MAX, -1, -10, -99999,
                               INT_MIN, INT_MIN + 1};
    static const size_t lens[] = {0, 1, 7, 8, 20, 45, 46, 47, 60, 200};
    char file[700], what[700];
    for (size_t fi = 0; fi < sizeof lens / sizeof *lens; fi++)
        for (size_t wi = 0; wi < sizeof lens / sizeof *lens; wi++) {
            for (size_t k = 0; k < lens[fi]; k++) file[k] = (char)('a' + k % 26);
            file[lens[fi]] = '\0';
            for (size_t k = 0; k < lens[wi]; k++) what[k] = (char)('A' + k % 26);
            what[lens[wi]] = '\0';
            for (size_t a = 0; a < sizeof nums / sizeof *nums; a++)
                for (size_t b = 0; b < sizeof nums / sizeof *nums; b += 3) {
                    size_t full = (size_t)snprintf(NULL, 0, "%s:%d:%d: %s", file, nums[a], nums[b], what);
                    for (size_t len = 1; len <= full + 30; len++) check(len, file, nums[a], nums[b], what);
                    check(512, file, nums[a], nums[b], what);
                }
        }
    /* texts longer than the record's buffer of 512 */
    for (size_t n = 480; n <= 600; n += 7) {
        memset(file, 'f', n);
        file[n] = '\0';
        memset(what, 'w', n);
        what[n] = '\0';
        check(512, file, 12, 34, "constraint 7");
        check(512, "m.yaml", 12, 34, what);
        check(512, file, INT_MIN, INT_MAX, what);
    }
    CHECK_MSG(mismatches == 0, "%ld texts differ from snprintf's", mismatches);
}

int main(void)
{
    RUN(as_snprintf_writes_it);
    return test_summary("position_text");
}
