/* The Jacobian entries of a range of columns without a scan of the whole pattern
 * (src/model/checks.c, model_jac_col_range; src/opoint/solve.c, opoint_sub_col_run): where the
 * model's Jacobian pattern is sorted by column (the forward pattern, jacobian_unknowns), a range
 * of columns is a range of entries, found by binary search. Checked against scans of every entry
 * formed here: the same entries in the same order for every unknown block, the empty range, the
 * whole range and the subproblems the operating point selects; with the pattern marked unsorted,
 * the whole range and one run. And the scans replaced (the Newton pattern, the initial
 * multipliers, the rank test, the linearization's mass scale, multiplier test and constraint
 * Jacobian) give the N = 300 four-bar's point and linearization bit for bit as the full scans do
 * (a second model marked unsorted). The rank test's constraint rows from the Newton pattern's
 * by-row lists (opoint_constraint_triplets) against the scan: the same entries, each row's in the
 * same order. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/mblin.h"
#include "model/jac_cols.h"
#include "model/model_internal.h"
#include "opoint/opoint_constraint.h"
#include "test.h"
#include "fixture.h"
#include "fourbar_text.h"

#define RB(b) (1u << (b))

/* the N = 300 four-bar (fwd: with the forward Jacobian), or NULL */
static mbl_model *fourbar300(int fwd)
{
    char *text = fourbar_text(300, 0, 0);
    CHECK(text != NULL);
    mbl_model *md = text ? fixture_model_fwd(NULL, text, "fourbar_N300", fwd) : NULL;
    free(text);
    return md;
}

/* md's operating point in *pt and a subproblem on it (opt: its options, kept by sp): 0, or -1 */
static int point_and_sub(mbl_model *md, mbl_point **pt, opoint_subproblem *sp, mbl_opoint_options *opt)
{
    mbl_status st;
    mbl_opoint_options_default(opt);
    *pt = NULL;
    int rc = mbl_operating_point(md, NULL, pt, &st);
    CHECK_MSG(rc == 0, "%s", st.msg);
    return !rc && opoint_sub_init(sp, md, *pt, opt) == 0 ? 0 : -1;
}

/* the entries of columns [c0, c1) by the range against a scan of every entry: the same list */
static void check_range(const mbl_model *md, int c0, int c1)
{
    int p0, p1, k = 0, bad = 0;
    model_jac_col_range(md, c0, c1, &p0, &p1);
    CHECK(0 <= p0 && p0 <= p1 && p1 <= md->jac.nz);
    int *want = malloc(sizeof(int) * ((size_t)md->jac.nz + 1)), nwant = 0;
    if (!want) return;
    for (int p = 0; p < md->jac.nz; p++)
        if (md->jac.col[p] >= c0 && md->jac.col[p] < c1) want[nwant++] = p;
    for (int p = p0; p < p1; p++)
        if (md->jac.col[p] >= c0 && md->jac.col[p] < c1) bad += k >= nwant || want[k++] != p;
    CHECK_MSG(bad == 0 && k == nwant, "columns %d..%d: %d of %d entries found, %d out of place", c0, c1, k, nwant,
              bad);
    if (model_jac_by_col(md)) /* sorted: exactly those entries */
        CHECK_MSG(p1 - p0 == nwant, "columns %d..%d: a range of %d entries for %d", c0, c1, p1 - p0, nwant);
    else
        CHECK(p0 == 0 && p1 == md->jac.nz);
    free(want);
}

/* the subproblem's entries by its column runs against a scan: the same list; returns the runs */
static int check_runs(opoint_subproblem *sp, unsigned rows, unsigned cols)
{
    const mbl_model *md = sp->md;
    opoint_sub_select(sp, rows, cols, NULL);
    int *want = malloc(sizeof(int) * ((size_t)md->jac.nz + 1)), nwant = 0, k = 0, bad = 0, runs = 0;
    if (!want) return 0;
    for (int p = 0; p < md->jac.nz; p++)
        if (sp->row_pos[md->jac.row[p]] >= 0 && sp->col_pos[md->jac.col[p]] >= 0) want[nwant++] = p;
    for (int ci = 0, p0, p1; opoint_sub_col_run(sp, &ci, &p0, &p1); runs++)
        for (int p = p0; p < p1; p++)
            if (sp->row_pos[md->jac.row[p]] >= 0 && sp->col_pos[md->jac.col[p]] >= 0)
                bad += k >= nwant || want[k++] != p;
    CHECK_MSG(bad == 0 && k == nwant, "rows %#x, columns %#x: %d of %d entries found, %d out of place", rows, cols, k,
              nwant, bad);
    free(want);
    return runs;
}

static void check_model(mbl_model *md, int sorted)
{
    int sorted_here = 1;
    for (int p = 1; p < md->jac.nz; p++) sorted_here &= md->jac.col[p - 1] <= md->jac.col[p];
    CHECK_EQ_INT(model_jac_by_col(md), sorted && sorted_here);
    sorted = sorted && sorted_here;
    int nunk = model_blk0(md, MBL_NBLK);
    for (int b = 0; b < MBL_NBLK; b++) check_range(md, model_blk0(md, b), model_blk0(md, b + 1));
    check_range(md, 0, nunk);
    check_range(md, 5, 5);
    check_range(md, nunk - 3, nunk + 2);
    check_range(md, model_blk0(md, MBL_BLK_LAMBDA) + 7, model_blk0(md, MBL_BLK_Q) + 11);
    mbl_point *pt = NULL;
    mbl_opoint_options opt;
    opoint_subproblem sp;
    if (point_and_sub(md, &pt, &sp, &opt) == 0) {
        int r1 = check_runs(&sp, RB(MBL_ROW_EOM), RB(MBL_BLK_LAMBDA) | RB(MBL_BLK_MU));
        int r2 = check_runs(&sp, RB(MBL_ROW_EOM) | RB(MBL_ROW_PHI), RB(MBL_BLK_Q) | RB(MBL_BLK_LAMBDA) | RB(MBL_BLK_MU));
        int r3 = check_runs(&sp, RB(MBL_ROW_PHI), RB(MBL_BLK_Q));
        /* sorted: a run per stretch of consecutive unknowns (lambda and mu together; q apart) */
        CHECK_EQ_INT(r1, 1);
        CHECK_EQ_INT(r2, sorted ? 2 : 1);
        CHECK_EQ_INT(r3, 1);
        opoint_sub_free(&sp);
    }
    mbl_point_free(pt);
}

TEST(ranges_against_scans)
{
    for (int fwd = 1; fwd >= 0; fwd--)
        for (int sorted = 1; sorted >= 0; sorted--) {
            mbl_model *md = fourbar300(fwd);
            if (!md) continue;
            if (!sorted) atomic_store(&md->jac_by_col, 2); /* as a pattern out of column order */
            check_model(md, sorted);
            mbl_model_free(md);
        }
}

#define SAME(a, b, n, what) CHECK_MSG(!memcmp((a), (b), (size_t)(n) * sizeof *(a)), "%s differ", what)

TEST(point_and_linearization_as_by_scans)
{
    mbl_model *md[2] = {NULL, NULL};
    mbl_point *pt[2] = {NULL, NULL};
    mbl_linear *lin[2] = {NULL, NULL};
    mbl_status st;
    for (int k = 0; k < 2; k++) {
        md[k] = fourbar300(1);
        if (!md[k]) continue;
        if (k == 1) atomic_store(&md[k]->jac_by_col, 2); /* every scan over the whole pattern */
        CHECK_MSG(mbl_operating_point(md[k], NULL, &pt[k], &st) == 0, "%s", st.msg);
        if (pt[k]) CHECK_MSG(mbl_linearize(md[k], pt[k], NULL, &lin[k], &st) == 0, "%s", st.msg);
    }
    CHECK_EQ_INT(md[0] ? model_jac_by_col(md[0]) : 0, 1);
    if (pt[0] && pt[1]) {
        int n = md[0]->n, m = md[0]->m;
        SAME(pt[0]->q, pt[1]->q, n, "coordinates");
        SAME(pt[0]->lambda, pt[1]->lambda, m, "multipliers");
        CHECK_EQ_INT(pt[0]->rank_phi_q, pt[1]->rank_phi_q);
        CHECK_EQ_INT(pt[0]->rank_phi_q, m);
        CHECK_EQ_INT(pt[0]->iterations, pt[1]->iterations);
        CHECK(!memcmp(&pt[0]->residual, &pt[1]->residual, sizeof pt[0]->residual));
    }
    if (lin[0] && lin[1]) {
        CHECK_EQ_INT(lin[0]->nx, lin[1]->nx);
        CHECK_EQ_INT(lin[0]->z1, lin[1]->z1);
        if (lin[0]->nx == lin[1]->nx && lin[0]->z1 == lin[1]->z1) {
            int nx = lin[0]->nx, z1 = lin[0]->z1;
            SAME(lin[0]->A, lin[1]->A, (size_t)nx * nx, "A");
            SAME(lin[0]->M, lin[1]->M, (size_t)z1 * z1, "M-hat");
            SAME(lin[0]->K, lin[1]->K, (size_t)z1 * lin[0]->z0, "K-hat");
            SAME(lin[0]->q_S, lin[1]->q_S, (size_t)lin[0]->n * lin[0]->z0, "mode shapes");
            CHECK(!memcmp(&lin[0]->cond, &lin[1]->cond, sizeof lin[0]->cond));
        }
    }
    for (int k = 0; k < 2; k++) mbl_linear_free(lin[k]), mbl_point_free(pt[k]), mbl_model_free(md[k]);
}

/* the entries (i, j, value) of row i in the order given, the rows' sequences against each other */
static int cmp_key(const void *a, const void *b)
{
    const long long *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

TEST(rank_rows_from_the_pattern)
{
    mbl_model *md = fourbar300(1);
    if (!md) return;
    mbl_point *pt = NULL;
    mbl_status st;
    mbl_opoint_options opt;
    opoint_subproblem sp;
    if (point_and_sub(md, &pt, &sp, &opt) == 0) {
        /* the equilibrium's subproblem with its Newton pattern made (opoint_scaled_residual) */
        opoint_sub_select(&sp, RB(MBL_ROW_EOM) | RB(MBL_ROW_PHI), RB(MBL_BLK_Q) | RB(MBL_BLK_LAMBDA), NULL);
        double f2, finf;
        int rc = opoint_eval_F(&sp, &f2, &finf, &st);
        if (!rc) rc = opoint_eval_jac(&sp, &st);
        CHECK_MSG(rc == 0, "%s", st.msg);
        int n = sp.ncol, m = sp.nrow, nz = md->jac.nz;
        double *x0 = malloc(sizeof(double) * (size_t)n), *cs = malloc(sizeof(double) * (size_t)n);
        double *rs = malloc(sizeof(double) * (size_t)m);
        int *ti[2] = {malloc(sizeof(int) * (size_t)nz), malloc(sizeof(int) * (size_t)nz)};
        int *tj[2] = {malloc(sizeof(int) * (size_t)nz), malloc(sizeof(int) * (size_t)nz)};
        double *tx[2] = {malloc(sizeof(double) * (size_t)nz), malloc(sizeof(double) * (size_t)nz)};
        long long *key[2] = {malloc(sizeof(long long) * 2 * (size_t)nz), malloc(sizeof(long long) * 2 * (size_t)nz)};
        if (!rc && x0 && cs && rs && ti[0] && ti[1] && tj[0] && tj[1] && tx[0] && tx[1] && key[0] && key[1]) {
            for (int c = 0; c < n; c++) x0[c] = *opoint_unknown_ptr(md, pt, sp.cols[c]);
            opoint_scaled_residual(&sp, x0, rs, cs);
            CHECK(sp.rptr != NULL);
            int cnt[2];
            cnt[0] = opoint_constraint_triplets(&sp, ti[0], tj[0], tx[0]);
            int *keep = sp.rptr;
            sp.rptr = NULL; /* the scan */
            cnt[1] = opoint_constraint_triplets(&sp, ti[1], tj[1], tx[1]);
            sp.rptr = keep;
            CHECK_EQ_INT(cnt[0], cnt[1]);
            CHECK(cnt[0] > 2 * md->m);
            /* row after row from the pattern; each row's entries in the scan's order: the same
             * sequence once both are sorted stably by row (key: row, then position) */
            int rowwise = 1;
            for (int t = 1; t < cnt[0]; t++) rowwise &= ti[0][t - 1] <= ti[0][t];
            CHECK(rowwise);
            for (int k = 0; k < 2 && cnt[0] == cnt[1]; k++)
                for (int t = 0; t < cnt[k]; t++)
                    key[k][2 * t] = (long long)ti[k][t] * nz + t, key[k][2 * t + 1] = t;
            if (cnt[0] == cnt[1]) {
                qsort(key[1], (size_t)cnt[1], 2 * sizeof(long long), cmp_key);
                int differ = 0;
                for (int t = 0; t < cnt[0]; t++) {
                    int a = t, b = (int)key[1][2 * t + 1]; /* the pattern's t-th against the scan's */
                    differ += ti[0][a] != ti[1][b] || tj[0][a] != tj[1][b] || memcmp(&tx[0][a], &tx[1][b], sizeof(double));
                }
                CHECK_MSG(differ == 0, "%d of %d entries differ from the scan's", differ, cnt[0]);
            }
        }
        free(x0), free(cs), free(rs);
        for (int k = 0; k < 2; k++) free(ti[k]), free(tj[k]), free(tx[k]), free(key[k]);
        opoint_sub_free(&sp);
    }
    mbl_point_free(pt);
    mbl_model_free(md);
}

int main(void)
{
    RUN(ranges_against_scans);
    RUN(point_and_linearization_as_by_scans);
    RUN(rank_rows_from_the_pattern);
    return test_summary("jac_cols");
}
