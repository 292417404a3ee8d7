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

/* examples/fourbar.py 300 (603 coordinates, 602 constraints) with two more coordinates on springs
 * (605 equations of motion: the multipliers' least squares is tall) and, when dup, the constraint of
 * coupler 150 again, doubled (603 constraints of rank 602 at every configuration). */
static char *fourbar_text(int dup)
{
    enum { NL = 300 };
    size_t cap = 1 << 20, len = 0;
    char *s = malloc(cap);
#define PUT(...) (len += (size_t)snprintf(s + len, cap - len, __VA_ARGS__))
    PUT("model: dae\nparameters: {m: 1, l: 1, k: 25, L0: sqrt(2)*l, c: 0, gx: 0, gy: -9.81}\ncoordinates:\n");
    for (int i = 0; i <= NL; i++) PUT("  xB%d: %.17g\n  yB%d: %.17g\n", i, i + cos(2.0), i, sin(2.0));
    PUT("  phi: 2\n  z1: 0.1\n  z2: -0.2\nvariables:\n");
    for (int i = 1; i <= NL; i++) PUT("  s%d: \"sqrt((xB%d - %d)^2 + yB%d^2)\"\n", i, i, i - 1, i);
    PUT("kinetic_energy: \"m/2*der(z1)^2 + m/2*der(z2)^2");
    for (int i = 0; i <= NL; i++) PUT(" + m/6*(der(xB%d)^2 + der(yB%d)^2)", i, i);
    for (int i = 1; i <= NL; i++)
        PUT(" + m/6*(der(xB%d)^2 + der(yB%d)^2 + der(xB%d)*der(xB%d) + der(yB%d)*der(yB%d) + der(xB%d)^2 + "
            "der(yB%d)^2)", i - 1, i - 1, i - 1, i, i - 1, i, i, i);
    PUT("\"\npotential_energy: \"k/2*z1^2 + k/2*(z2 - z1)^2");
    for (int i = 0; i <= NL; i++) PUT(" - m*(gx*(xB%d + %d) + gy*yB%d)/2", i, i, i);
    for (int i = 1; i <= NL; i++)
        PUT(" - m*(gx*(xB%d + xB%d) + gy*(yB%d + yB%d))/2 + k/2*(s%d - L0)^2", i - 1, i, i - 1, i, i);
    PUT("\"\nconstraints:\n");
    for (int i = 0; i <= NL; i++) PUT("  - \"(xB%d - %d)^2 + yB%d^2 - l^2\"\n", i, i, i);
    for (int i = 1; i <= NL; i++) PUT("  - \"(xB%d - xB%d)^2 + (yB%d - yB%d)^2 - l^2\"\n", i, i - 1, i, i - 1);
    PUT("  - \"yB%d - l*sin(phi)\"\n", NL);
    if (dup) PUT("  - \"2*((xB150 - xB149)^2 + (yB150 - yB149)^2 - l^2)\"\n");
    PUT("linearize:\n  at: equilibrium\n  states: [phi]\n");
#undef PUT
    return s;
}

TEST(shared_rank_test_matches_separate)
{
    for (int dup = 0; dup <= 1; dup++) {
        char *text = fourbar_text(dup);
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
