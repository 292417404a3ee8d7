/* The model's small texts in blocks (src/model/text_blocks.c): the records of the user's
 * expressions (the domain check's srcx_what, formatted "file:line:col: what" only for its message;
 * the evaluation errors' exprs) and the symbols' names. Every text given stays as written while
 * later ones fill the blocks (texts of 0 to 300 bytes, and longer than a block), and a model of
 * several blocks of names and records names its coordinates and, in the domain check's message,
 * the position of its last variable as the file has them. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "mblin/mblin.h"
#include "model/formulate.h"
#include "model/text_blocks.h"

static size_t text_len(int i)
{
    if (i == 5000) return 65536 - 64 - 1; /* a block's bytes with its NUL */
    if (i == 5001) return 65536 - 64;     /* one more: a block of its own */
    if (i == 9000) return 200000;
    return (size_t)(i * 37) % 301;
}

static void fill(char *s, int i)
{
    size_t n = text_len(i);
    for (size_t k = 0; k < n; k++) s[k] = (char)('a' + (size_t)(i + (int)k) % 26);
    s[n] = '\0';
}

TEST(every_text_kept_as_given)
{
    enum { NT = 20000 };
    mbl_model *md = calloc(1, sizeof *md);
    char **got = calloc(NT, sizeof *got), *want = malloc(200001);
    CHECK(md && got && want);
    if (!md || !got || !want) return;
    for (int i = 0; i < NT; i++) {
        if (i % 3 == 0) { /* the records' way: bytes at an int's alignment, then the text */
            size_t n = text_len(i) + 1;
            int *p = model_text_bytes(md, sizeof(int) + n);
            CHECK(p && (uintptr_t)p % _Alignof(int) == 0);
            if (!p) break;
            *p = i;
            got[i] = (char *)(p + 1);
            fill(got[i], i);
        } else {
            fill(want, i);
            got[i] = model_text_copy(md, want);
            CHECK(got[i] != NULL);
            if (!got[i]) break;
        }
    }
    int bad = 0;
    for (int i = 0; i < NT && got[i]; i++) {
        fill(want, i);
        if (strcmp(got[i], want) || (i % 3 == 0 && ((const int *)got[i])[-1] != i)) bad++;
    }
    CHECK_EQ_INT(bad, 0);
    model_free_text_blocks(md);
    CHECK(md->text_blocks == NULL);
    free(md);
    free(got);
    free(want);
}

/* N coordinates of long names and N variables of a restricted function (log: its derivative is defined at 0), the last out of its
 * domain at the given point: names and records over several blocks. */
TEST(names_and_a_late_record_over_blocks)
{
    enum { N = 3000 };
    const char *pad = "coordinate_with_a_rather_long_name_";
    size_t cap = (size_t)N * 160 + 4096, o = 0;
    char *text = malloc(cap);
    CHECK(text != NULL);
    if (!text) return;
    o += (size_t)snprintf(text + o, cap - o, "model: dae\nparameters: {m: 1}\ncoordinates:\n");
    for (int i = 1; i <= N; i++) o += (size_t)snprintf(text + o, cap - o, "  %s%d: 0\n", pad, i);
    o += (size_t)snprintf(text + o, cap - o, "variables:\n");
    for (int i = 1; i <= N; i++)
        o += (size_t)snprintf(text + o, cap - o, "  w%d: \"log(%s%d %s)\"\n", i, pad, i, i == N ? "- 1" : "+ 2");
    o += (size_t)snprintf(text + o, cap - o, "kinetic_energy: \"0.5*m*(");
    for (int i = 1; i <= N; i++) o += (size_t)snprintf(text + o, cap - o, "%sder(%s%d)^2", i > 1 ? " + " : "", pad, i);
    o += (size_t)snprintf(text + o, cap - o, ")\"\npotential_energy: \"");
    for (int i = 1; i <= N; i++) o += (size_t)snprintf(text + o, cap - o, "%sw%d", i > 1 ? " + " : "", i);
    o += (size_t)snprintf(text + o, cap - o, "\"\nlinearize: {at: given}\n");
    CHECK(o < cap);
    mbl_status st;
    mbl_model *md = fixture_model(NULL, text, "blocks.yaml", &st);
    CHECK_MSG(md != NULL, "%s", st.msg);
    free(text);
    if (!md) return;
    int bad = 0;
    char want[256];
    for (int i = 0; i < N; i++) {
        snprintf(want, sizeof want, "%s%d", pad, i + 1);
        const char *nm = mbl_model_coord_name(md, i);
        if (!nm || strcmp(nm, want)) bad++;
    }
    CHECK_EQ_INT(bad, 0);
    CHECK(!strcmp(mbl_model_param_name(md, 0), "m"));
    mbl_point *pt = NULL;
    int rc = mbl_operating_point(md, NULL, &pt, &st);
    CHECK_EQ_INT(rc, MBL_EDOMAIN);
    /* w_N's text on line 4 + N + N, after "  wN: \"" */
    snprintf(want, sizeof want, "blocks.yaml:%d:%d: variable 'w%d' is not defined at the operating point", 4 + 2 * N,
             (int)strlen("  w3000: \"") + 1, N);
    CHECK_MSG(strstr(st.msg, want) == st.msg, "%s\nexpected %s", st.msg, want);
    mbl_point_free(pt);
    mbl_model_free(md);
}

int main(void)
{
    RUN(every_text_kept_as_given);
    RUN(names_and_a_late_record_over_blocks);
    return test_summary("text_blocks");
}
