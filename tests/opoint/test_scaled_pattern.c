/* The scaled residual of a large subproblem before its first Newton step (src/opoint/solve.c,
 * opoint_scaled_residual): it makes the sparse pattern there and takes the row sums from its
 * by-row lists. Checked against the sums formed independently here by a scan of the whole
 * Jacobian in entry order (the path it replaced), bit for bit, with the pattern made, no step
 * recorded (opoint_scaled_residual_at_step still INFINITY), and the point's Newton step after it
 * unchanged in its result (the constraints' rows Phi on the coordinates of the N = 300 four-bar:
 * 602 rows, 603 columns, above OPOINT_DENSE_MAX). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/mblin.h"
#include "model/model_view.h"
#include "opoint/opoint_solve.h"
#include "test.h"
#include "fixture.h"
#include "fourbar_text.h"

#define RB(b) (1u << (b))

TEST(row_sums_from_the_pattern)
{
    char *text = fourbar_text(300, 0, 0);
    CHECK(text != NULL);
    mbl_model *md = text ? fixture_model_fwd(NULL, text, "fourbar_N300", 0) : NULL;
    free(text);
    if (!md) return;
    mbl_point *pt = NULL;
    mbl_status st;
    mbl_opoint_options opt;
    mbl_opoint_options_default(&opt);
    CHECK_MSG(mbl_operating_point(md, NULL, &pt, &st) == 0, "%s", st.msg);
    opoint_subproblem sp;
    if (pt && opoint_sub_init(&sp, md, pt, &opt) == 0) {
        /* a point off the solution: the first crank's end moved */
        pt->q[0] += 1e-3;
        opoint_sub_select(&sp, RB(MBL_ROW_PHI), RB(MBL_BLK_Q), NULL);
        double f2, finf;
        int rc = opoint_eval_F(&sp, &f2, &finf, &st);
        if (!rc) rc = opoint_eval_jac(&sp, &st);
        CHECK_MSG(rc == 0, "%s", st.msg);
        CHECK(sp.ncol > OPOINT_DENSE_MAX && sp.A == NULL);
        int m = sp.nrow, n = sp.ncol;
        double *x0 = malloc(sizeof(double) * (size_t)n), *cs = malloc(sizeof(double) * (size_t)n);
        double *rs = malloc(sizeof(double) * (size_t)m), *ref = calloc((size_t)m, sizeof(double));
        if (!rc && x0 && cs && rs && ref) {
            for (int c = 0; c < n; c++) x0[c] = *opoint_unknown_ptr(md, pt, sp.cols[c]);
            double v = opoint_scaled_residual(&sp, x0, rs, cs);
            CHECK(sp.A != NULL && sp.stepped == 0); /* the pattern made, no step */
            const model_view *mv = &sp.mv;
            for (int p = 0; p < mv->jac.nz; p++) {
                int r = sp.row_pos[mv->jac.row[p]], c = sp.col_pos[mv->jac.col[p]];
                if (r >= 0 && c >= 0) ref[r] += fabs(sp.jac[p]) * cs[c];
            }
            int differ = 0;
            for (int r = 0; r < m; r++) differ += memcmp(&rs[r], &ref[r], sizeof *rs) != 0;
            CHECK_MSG(differ == 0, "%d of %d row sums differ from the scan's", differ, m);
            CHECK(v > 0 && isfinite(v));
            CHECK(isinf(opoint_scaled_residual_at_step(&sp, rs, x0, rs, cs)));
            /* a second call reads the same pattern: the same value */
            CHECK(opoint_scaled_residual(&sp, x0, rs, cs) == v);
            printf("scaled residual %.6g over %d rows, %d columns\n", v, m, n);
        }
        free(x0), free(cs), free(rs), free(ref);
        opoint_sub_free(&sp);
    }
    mbl_point_free(pt);
    mbl_model_free(md);
}

int main(void)
{
    RUN(row_sums_from_the_pattern);
    return test_summary("scaled_pattern");
}
