/* The states' test's last part (src/lin/common.c, mass_condition): M-hat scaled to unit diagonal
 * must have a reciprocal condition of at least rcond_min. On M = [[1, x], [x, 1]] (an
 * unconstrained 2-DOF model in its coordinates: M-hat = M, not diagonally dominant for x > 0.5)
 * the reciprocal condition in the 1-norm is (1 - x) / (1 + x), exactly what dgecon gives for an
 * order 2: the linearization is refused exactly when that is below rcond_min, with that figure in
 * the message, far from the bound and on both sides of it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/mblin.h"
#include "fixture.h"
#include "test.h"

static const char text[] = "model: dae\ncoordinates: {x: 0.5, y: 0}\n"
                           "mass_matrix: {x: {x: 1, y: \"x\"}, y: {y: 1}}\n"
                           "potential_energy: \"0.5*x^2 + 0.5*y^2 + 0.1*x*y\"\nlinearize: {at: given}\n";

/* linearize at q = (x, 0), v = 0 with rcond_min; the status code; msg receives the message */
static int lin_at(const mbl_model *md, double x, double rcond_min, char *msg, size_t len)
{
    double q[2] = {x, 0}, v[2] = {0, 0};
    mbl_point *pt = NULL;
    mbl_linear *lin = NULL;
    mbl_status st;
    mbl_lin_options lo;
    mbl_lin_options_default(&lo);
    lo.rcond_min = rcond_min;
    int rc = fixture_point_given(md, q, v, &pt, &st);
    if (!rc) {
        rc = mbl_linearize(md, pt, &lo, &lin, &st);
        if (!rc) { /* M-hat is M itself here */
            CHECK_EQ_INT(lin->z1, 2);
            CHECK(fabs(lin->M[1] - x) <= 1e-15 && fabs(lin->M[2] - x) <= 1e-15);
        }
    }
    snprintf(msg, len, "%s", rc ? st.msg : "");
    mbl_linear_free(lin);
    mbl_point_free(pt);
    return rc;
}

TEST(mass_condition)
{
    mbl_status st;
    mbl_model *md = NULL;
    int rc = mbl_model_load_string(text, sizeof text - 1, "mass_condition.yaml", NULL, 0, &md, &st);
    if (rc) fprintf(stderr, "mass_condition: %s\n", st.msg);
    CHECK_EQ_INT(rc, 0);
    if (rc) return;
    /* x, rcond_min: far above the bound, just above it, just below it, far below */
    static const double cases[][2] = {
        {0.9, 1e-13}, {0.9, 1e-5}, {0.9, 0.05}, {0.9, 0.06}, {0.99, 1e-3}, {1 - 1e-12, 1e-13},
        {1 - 1e-12, 4e-13}, {1 - 1e-12, 6e-13}, {1 - 1e-12, 1e-11}, {0.6, 0.2}, {0.6, 0.3},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        double x = cases[c][0], rmin = cases[c][1], rcond = (1 - x) / (1 + x);
        char msg[1024];
        int r = lin_at(md, x, rmin, msg, sizeof msg);
        int refuse = rcond < rmin;
        if ((r != 0) != refuse) fprintf(stderr, "x = %.17g, rcond_min %g: rc %d (%s)\n", x, rmin, r, msg);
        CHECK_EQ_INT(r, refuse ? MBL_ESINGULAR : 0);
        if (refuse) {
            /* the figure in the message: that of the LU of the rounded matrix (1 - x^2 rounded: a relative
             * error of about 1e-16 / (1 - x^2)) */
            const char *p = strstr(msg, "reciprocal condition ");
            double got = p ? strtod(p + strlen("reciprocal condition "), NULL) : -1;
            if (!(fabs(got - rcond) <= 2e-2 * rcond)) fprintf(stderr, "x = %.17g: %g, want %g ('%s')\n", x, got, rcond, msg);
            CHECK(fabs(got - rcond) <= 2e-2 * rcond);
        }
    }
    mbl_model_free(md);
}

int main(void)
{
    RUN(mass_condition);
    return test_summary("mass_condition");
}
