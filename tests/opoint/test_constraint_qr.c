/* The operating point's shared constraint QR (src/opoint/constraint_qr.c): the initial
 * multipliers' SPQR factorization of Phi_q^T at the guess, refactored at the point for the rank
 * test, against the separate rank test it replaces (mbla_spqr_rank of the wide Phi_q, which the
 * point still takes when the caller gives the multipliers: nothing is kept then), on a large
 * model (beyond the dense sizes, OPOINT_DENSE_MAX = 600) with a redundant constraint and one
 * without: the same rank, notes, minimum-norm flag and point. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/mblin.h"
#include "test.h"
#include "fixture.h"
#include "fourbar_text.h"

TEST(shared_rank_test_matches_separate)
{
    for (int dup = 0; dup <= 1; dup++) {
        char *text = fourbar_text(300, 1, dup); /* 605 coordinates, 602 + dup constraints of rank 602 */
        mbl_status st;
        mbl_model *md = fixture_model(NULL, text, "fourbar300.yaml", &st);
        free(text);
        CHECK_MSG(md != NULL, "%s", st.msg);
        if (!md) continue;
        mbl_model_info info;
        mbl_model_get_info(md, &info);
        int n = info.ncoord, m = info.nhol;
        CHECK_EQ_INT(n, 605);
        CHECK_EQ_INT(m, 602 + dup);
        mbl_point *shared = NULL, *separate = NULL;
        CHECK_MSG(mbl_operating_point(md, NULL, &shared, &st) == 0, "%s", st.msg);
        if (shared) {
            CHECK_EQ_INT(shared->rank_phi_q, 602);
            CHECK_EQ_INT(shared->min_norm_multipliers, dup);
            CHECK(shared->scaled_residual <= 1e-12);
            /* the multipliers given (the shared one's): no QR kept, the rank by mbla_spqr_rank */
            mbl_opoint_options opt;
            mbl_opoint_options_default(&opt);
            opt.lambda = shared->lambda;
            CHECK_MSG(mbl_operating_point(md, &opt, &separate, &st) == 0, "%s", st.msg);
        }
        if (shared && separate) {
            CHECK_EQ_INT(separate->rank_phi_q, shared->rank_phi_q);
            CHECK_EQ_INT(separate->min_norm_multipliers, shared->min_norm_multipliers);
            CHECK_MSG(!strcmp(separate->notes, shared->notes), "notes '%s' against '%s'", separate->notes,
                      shared->notes);
            for (int i = 0; i < n; i++) CHECK_CLOSE(separate->q[i], shared->q[i], 1e-10);
        }
        mbl_point_free(shared);
        mbl_point_free(separate);
        mbl_model_free(md);
    }
}

int main(void)
{
    RUN(shared_rank_test_matches_separate);
    return test_summary("constraint_qr");
}
