/* The Whipple bicycle written as a nonlinear model (examples/whipple_bicycle_nonlinear.yaml: four
 * spatial rigid bodies, knife-edge wheels rolling without slip; 8 coordinates, 1 holonomic and 4
 * non-holonomic constraints), linearized at upright straight running: its lean and steer
 * eigenvalues must be the published ones of Meijaard, Papadopoulos, Ruina, Schwab (2007), Table 2,
 * at v = 0, 1, ..., 10 m/s (an independent route: the paper's linear equations were derived by
 * hand and checked by two other programs there), and the other six eigenvalues (x, y, yaw, wheel
 * angles, speed) are zero. Also against the linear benchmark model of the same paper
 * (examples/whipple_bicycle.yaml) with a changed parameter (trail), through every exact method
 * that takes non-holonomic constraints. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mblin/mblin.h"
#include "test.h"
#include "eig_match.h"

#include "meijaard_table2.h"

/* v = 0: the two real weave eigenvalues */
static const double weave0[2] = {3.13164324790656, 5.53094371765393};

enum { NX = 10, NMAX = 64 };

/* Eigenvalues of a model file at the settings, by a method (NULL: default), those the method
 * flags spurious left out; returns the count (at most NMAX kept), -1 on failure. */
static int eigenvalues(const char *path, const mbl_setting *sets, int nsets, const char *method,
                       double complex *ev)
{
    mbl_status st;
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_linear *lin = NULL;
    mbl_modes *modes = NULL;
    mbl_lin_options lo;
    mbl_lin_options_default(&lo);
    if (method) lo.method = method;
    int rc = mbl_model_load_file(path, sets, nsets, &md, &st);
    if (!rc) rc = mbl_operating_point(md, NULL, &pt, &st);
    if (!rc) rc = mbl_linearize(md, pt, &lo, &lin, &st);
    if (!rc) rc = mbl_modal(lin, NULL, &modes, &st);
    int n = -1;
    if (rc) {
        fprintf(stderr, "%s (%s): %s\n", path, method ? method : "default", st.msg);
    } else {
        n = 0;
        for (int i = 0; i < modes->nx && n < NMAX; i++)
            if (!modes->modes[i].spurious) ev[n++] = modes->modes[i].re + I * modes->modes[i].im;
    }
    mbl_modes_free(modes);
    mbl_linear_free(lin);
    mbl_point_free(pt);
    mbl_model_free(md);
    return n;
}

TEST(table2_v0_to_10)
{
    double worst = 0;
    for (int k = 0; k <= 10; k++) {
        mbl_setting s = {"v", (double)k};
        double complex ev[NMAX], want[4];
        int n = eigenvalues("examples/whipple_bicycle_nonlinear.yaml", &s, 1, NULL, ev);
        CHECK_EQ_INT(n, NX);
        if (n != NX) continue;
        want[0] = cap[k];
        want[3] = cast[k];
        if (k == 0) {
            want[1] = weave0[0];
            want[2] = weave0[1];
        } else {
            want[1] = weave_re[k] + I * weave_im[k];
            want[2] = weave_re[k] - I * weave_im[k];
        }
        double w = eig_match(ev, n, want, 4, 1e-9, 1e-7);
        if (w > worst) worst = w;
    }
    printf("  Table 2, v = 0..10: largest relative difference %.2g\n", worst);
}

TEST(linear_benchmark_and_methods)
{
    /* a changed trail (c = 0.12) at v = 3: the published linear equations (examples/
     * whipple_bicycle.yaml, the paper's Appendix A formulas) against the nonlinear model, by
     * each exact method that takes non-holonomic constraints */
    mbl_setting s[2] = {{"v", 3.0}, {"c", 0.12}};
    double complex lin[NMAX], ev[NMAX];
    int nl = eigenvalues("examples/whipple_bicycle.yaml", s, 2, NULL, lin);
    CHECK_EQ_INT(nl, 4);
    if (nl != 4) return;
    static const char *const methods[] = {NULL, "partition", "nullspace", "descriptor"};
    for (size_t m = 0; m < sizeof methods / sizeof methods[0]; m++) {
        int n = eigenvalues("examples/whipple_bicycle_nonlinear.yaml", s, 2, methods[m], ev);
        CHECK_MSG(n >= 4, "%s: %d eigenvalues", methods[m] ? methods[m] : "default", n);
        if (n < 4) continue;
        double w = eig_match(ev, n, lin, 4, 1e-9, 1e-6);
        printf("  %s: largest relative difference to the linear model %.2g\n", methods[m] ? methods[m] : "augmented", w);
    }
}

int main(void)
{
    RUN(table2_v0_to_10);
    RUN(linear_benchmark_and_methods);
    return test_summary("bicycle");
}
