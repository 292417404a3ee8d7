/* The states' test's last part (src/lin/common.c, mass_condition): M-hat scaled to unit diagonal
 * must have a reciprocal condition of at least rcond_min. On M = [[1, x], [x, 1]] (an
 * unconstrained 2-DOF model in its coordinates: M-hat = M, not diagonally dominant for x > 0.5)
 * the reciprocal condition in the 1-norm is (1 - x) / (1 + x), exactly what dgecon gives for an
 * order 2: the linearization is refused exactly when that is below rcond_min, with that figure in
 * the message, far from the bound and on both sides of it.
 * Orders 3-40 (mass_condition_kms): M_ij = x^|i-j| (Kac-Murdock-Szego: positive definite, unit
 * diagonal, not diagonally dominant for x >= 1/3), so M-hat = M is the scaled matrix itself; the
 * decision at rcond_min far below, just below and above its reciprocal condition must be that of
 * dgetrf + dgecon (mbla_lu_rcond), the documented test, at orders up to 24 (where a figure 1e3
 * above rcond_min passes by the exact inverse, mbla_inv_rcond) and above. */
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

/* the n-coordinate model with M_ij = x^|i-j|, K = I */
static int kms_model(int n, double x, mbl_model **md)
{
    size_t cap = 64 + (size_t)n * (size_t)n * 48;
    char *t = malloc(cap);
    size_t l = (size_t)snprintf(t, cap, "model: dae\ncoordinates: {");
    for (int i = 0; i < n; i++) l += (size_t)snprintf(t + l, cap - l, "%sq%d: 0", i ? ", " : "", i);
    l += (size_t)snprintf(t + l, cap - l, "}\nmass_matrix: {");
    for (int i = 0; i < n; i++) {
        l += (size_t)snprintf(t + l, cap - l, "%sq%d: {", i ? ", " : "", i);
        for (int j = i; j < n; j++) l += (size_t)snprintf(t + l, cap - l, "%sq%d: %.17g", j > i ? ", " : "", j, pow(x, j - i));
        l += (size_t)snprintf(t + l, cap - l, "}");
    }
    l += (size_t)snprintf(t + l, cap - l, "}\npotential_energy: \"0.5*(");
    for (int i = 0; i < n; i++) l += (size_t)snprintf(t + l, cap - l, "%sq%d^2", i ? " + " : "", i);
    l += (size_t)snprintf(t + l, cap - l, ")\"\nlinearize: {at: given}\n");
    mbl_status st;
    int rc = mbl_model_load_string(t, l, "kms.yaml", NULL, 0, md, &st);
    if (rc) fprintf(stderr, "kms_model: %s\n", st.msg);
    free(t);
    return rc;
}

TEST(mass_condition_kms)
{
    static const int orders[] = {3, 5, 8, 16, 24, 25, 40};
    static const double xs[] = {0.6, 0.95};
    for (size_t a = 0; a < sizeof orders / sizeof orders[0]; a++)
        for (size_t b = 0; b < sizeof xs / sizeof xs[0]; b++) {
            int n = orders[a];
            double x = xs[b];
            mbl_model *md = NULL;
            CHECK_EQ_INT(kms_model(n, x, &md), 0);
            if (!md) continue;
            /* the reference: dgetrf + dgecon's figure of the matrix as the model's M-hat holds it */
            double *M = malloc(sizeof *M * (size_t)n * (size_t)n), ref = 0;
            for (int j = 0; j < n; j++)
                for (int i = 0; i < n; i++) M[i + (size_t)j * n] = pow(x, abs(i - j));
            CHECK_EQ_INT(mbla_lu_rcond(n, M, n, 0, NULL, 1, &ref, NULL), 0);
            free(M);
            double *q = calloc((size_t)n, sizeof *q), *v = calloc((size_t)n, sizeof *v);
            /* far below (the exact route up to order 24), 2x below (dgecon decides), 2x above (refused) */
            static const double fac[] = {1e-6, 0.5, 2.0};
            for (size_t c = 0; c < sizeof fac / sizeof fac[0]; c++) {
                mbl_point *pt = NULL;
                mbl_linear *lin = NULL;
                mbl_status st;
                mbl_lin_options lo;
                mbl_lin_options_default(&lo);
                lo.rcond_min = fac[c] * ref;
                int rc = fixture_point_given(md, q, v, &pt, &st);
                CHECK_EQ_INT(rc, 0);
                if (!rc) rc = mbl_linearize(md, pt, &lo, &lin, &st);
                int want = fac[c] > 1 ? MBL_ESINGULAR : 0;
                if (rc != want) fprintf(stderr, "n = %d, x = %g, rcond_min %g (dgecon %g): rc %d (%s)\n", n, x, lo.rcond_min, ref, rc, rc ? st.msg : "");
                CHECK_EQ_INT(rc, want);
                if (!rc) CHECK_EQ_INT(lin->z1, n);
                mbl_linear_free(lin);
                mbl_point_free(pt);
            }
            free(q), free(v);
            mbl_model_free(md);
        }
}

int main(void)
{
    RUN(mass_condition);
    RUN(mass_condition_kms);
    return test_summary("mass_condition");
}
