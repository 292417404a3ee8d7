/* mblx__fwdjac_new_narrow (fwdjac.c, session 35): the forward Jacobian's coloring declined at
 * the first row that depends on more than maxwidth of the columns (the model compile's widest-row
 * test, made by the pattern's own pass), else the very coloring mblx_fwdjac_new makes. Rows of 3, 5
 * and 2 columns (one of the 5-wide row's symbols not a column, one symbol in no row): maxwidth 4
 * and more gives mblx_fwdjac_new's pattern and colors, 3 declines (at the second row, without an
 * error), and a row list without the wide row passes at 3. */
#include <string.h>

#include "expr/fwdjac_narrow.h"
#include "mblin/expr.h"
#include "test.h"

static int same_coloring(const mblx_fwdjac *a, const mblx_fwdjac *b, size_t n)
{
    const int *cpa, *ria, *cpb, *rib;
    size_t nza = mblx_fwdjac_pattern(a, &cpa, &ria), nzb = mblx_fwdjac_pattern(b, &cpb, &rib);
    return nza == nzb && mblx_fwdjac_ncolors(a) == mblx_fwdjac_ncolors(b) && !memcmp(cpa, cpb, (n + 1) * sizeof *cpa) &&
           !memcmp(ria, rib, nza * sizeof *ria);
}

TEST(narrow_declines_at_wide_rows)
{
    mblx_graph *g = mblx_graph_new();
    mblx_id s[7];
    for (int k = 0; k < 7; k++) {
        char name[8] = {'s', (char)('0' + k), 0};
        s[k] = mblx_symbol(g, name);
    }
    mblx_id rows[3];
    rows[0] = mblx_mul(g, mblx_add(g, s[0], s[1]), mblx_sin(g, s[2]));                        /* 3 columns */
    rows[1] = mblx_add(g, mblx_mul(g, s[0], s[3]), mblx_add(g, mblx_mul(g, s[4], s[5]), s[6])); /* 5 deps, 4 columns */
    rows[2] = mblx_mul(g, s[1], s[3]);                                                          /* 2 columns */
    /* the columns, not in the symbols' order: s6 is none */
    mblx_id cols[6] = {s[5], s[4], s[3], s[1], s[0], s[2]};
    size_t n = 6;
    mbl_status st;
    mblx_fwdjac *ref = mblx_fwdjac_new(g, 3, rows, n, cols, &st);
    CHECK(ref != NULL);
    for (size_t w = 3; w <= 6; w++) {
        int wide = -1;
        memset(&st, 0, sizeof st);
        mblx_fwdjac *J = mblx__fwdjac_new_narrow(g, 3, rows, n, cols, w, &wide, &st);
        if (w < 4) {
            CHECK_MSG(J == NULL && wide == 1 && st.code == 0, "maxwidth %zu: declined", w);
        } else {
            CHECK_MSG(J != NULL && wide == 0, "maxwidth %zu: made", w);
            if (J && ref) CHECK_MSG(same_coloring(J, ref, n), "maxwidth %zu: mblx_fwdjac_new's coloring", w);
        }
        mblx_fwdjac_free(J);
    }
    /* without the wide row: 3 columns at most */
    mblx_id two[2] = {rows[0], rows[2]};
    int wide = -1;
    mblx_fwdjac *J = mblx__fwdjac_new_narrow(g, 2, two, n, cols, 3, &wide, &st), *J2 = mblx_fwdjac_new(g, 2, two, n, cols, &st);
    CHECK(J != NULL && wide == 0 && J2 != NULL);
    if (J && J2) CHECK(same_coloring(J, J2, n));
    mblx_fwdjac_free(J), mblx_fwdjac_free(J2), mblx_fwdjac_free(ref);
    /* a bad argument is still an error, not a decline */
    mblx_id bad[2] = {s[0], s[0]};
    wide = -1;
    CHECK(mblx__fwdjac_new_narrow(g, 3, rows, 2, bad, 3, &wide, &st) == NULL && wide == 0 && st.code != 0);
    mblx_graph_free(g);
}

int main(void)
{
    RUN(narrow_declines_at_wide_rows);
    return test_summary("expr_fwd_narrow");
}
