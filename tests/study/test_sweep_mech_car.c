/* The mechanism single-track car (examples/mech/single_track_car.yaml) swept over its front
 * cornering stiffness Cf: Cf changes in place (the mechanism never evaluates it into a number), so
 * the sweep takes the fast path (warm point + mbl_relinearize); its tracked branches must be those
 * of the reload path (force_reload) and of the closed form at every point.
 *
 * Closed form (the file's opening comment; tests/mech/test_rolling_wheel.c): the lateral/yaw pair
 * of the 2 x 2 single-track model with the wheels' masses, and the speed's -kc / (m + 2 Iwa / r^2),
 * which does not depend on Cf. Over Cf = 60000..100000 the pair stays complex, so each tracked
 * branch keeps its closed-form eigenvalue: the real one stays -1.923..., the pair's members keep the
 * sign of their imaginary parts.
 *
 * Before the fix the car's mode shapes from dgeev had backward errors of 0.06 (its scaling
 * balancer, factors of 3e23 on A's rounding-level entries: shapes made of the wheels' spin angles);
 * the reload path's garbage happened to repeat from point to point, the fast path's did not, and
 * its tracking swapped the real mode and the pair at the third point (MAC 0.0005). */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mblin/mblin.h"
#include "test.h"

#define CAR "examples/mech/single_track_car.yaml"
#define NPTS 41
#define CF0 60000.0
#define CF1 100000.0
#define EIG_TOL 1e-9 /* relative: closed form and fast against reload */
#define MAC_MIN 0.999 /* consecutive points 1000 N/rad apart: the shapes move by far less */

/* the closed-form eigenvalues at Cf (the file's other parameters): the pair (+ then -), the speed's */
static void closed_form(double Cf, double complex want[3])
{
    const double mc = 1500, Izc = 2500, a = 1.2, b = 1.5, mw = 20, Iwd = 0.5, Cr = 90000, u = 20;
    const double Iwa = 0.9, r = 0.3, kc = 3000;
    double m = mc + 2 * mw, Iz = Izc + mw * (a * a + b * b) + 2 * Iwd, xg = mw * (a - b) / m;
    double M[2][2] = {{m, m * xg}, {m * xg, Iz}};
    double K[2][2] = {{-(Cf + Cr) / u, -m * u - (a * Cf - b * Cr) / u},
                      {-(a * Cf - b * Cr) / u, -m * xg * u - (a * a * Cf + b * b * Cr) / u}};
    double d = M[0][0] * M[1][1] - M[0][1] * M[1][0];
    double Mi[2][2] = {{M[1][1] / d, -M[0][1] / d}, {-M[1][0] / d, M[0][0] / d}}, A[2][2];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) A[i][j] = Mi[i][0] * K[0][j] + Mi[i][1] * K[1][j];
    double tr = A[0][0] + A[1][1], de = A[0][0] * A[1][1] - A[0][1] * A[1][0];
    double complex sq = csqrt(tr * tr / 4 - de);
    want[0] = tr / 2 + sq;
    want[1] = tr / 2 - sq;
    want[2] = -kc / (m + 2 * Iwa / (r * r));
}

static mbl_sweep *run(const mbl_model *md, int reload, int predictor)
{
    mbl_sweep_options so;
    mbl_sweep_options_default(&so);
    so.naxes = 1;
    so.axis[0] = (mbl_sweep_axis){"Cf", CF0, CF1, NPTS};
    so.force_reload = reload;
    so.predictor = predictor;
    mbl_status st;
    mbl_sweep *sw = NULL;
    int rc = mbl_sweep_run(md, &so, &sw, &st);
    CHECK_MSG(rc == 0, "sweep (reload %d, predictor %d): %s", reload, predictor, st.msg);
    return rc ? NULL : sw;
}

/* every non-zero branch of sw follows one closed-form eigenvalue from the first point to the last,
 * with consecutive MACs of at least MAC_MIN; the branches' eigenvalues equal ref's (when given) */
static void check_branches(const mbl_sweep *sw, const mbl_sweep *ref, const char *what)
{
    int nm = sw->nmodes, tracked = 0;
    double worst_cf = 0, worst_ref = 0, worst_mac = 1;
    CHECK_EQ_INT(nm, 8);
    CHECK_EQ_INT(sw->npoints, NPTS);
    for (int b = 0; b < nm && sw->npoints == NPTS; b++) {
        int k = -1; /* the closed-form eigenvalue branch b follows, from its first point */
        for (int p = 0; p < NPTS; p++) {
            int i = p * nm + b;
            CHECK(sw->ok[p]);
            double complex s = sw->re[i] + I * sw->im[i], want[3];
            closed_form(sw->value[p], want);
            if (cabs(s) < 1e-6) { /* a zero mode (x, y, yaw, the wheels' angles) */
                /* no damping ratio of its own: 0, not the +-1 of a rounding-level real part's sign */
                CHECK_MSG(sw->damping[i] == 0.0, "%s: zero branch %d has damping ratio %g at Cf = %g", what, b,
                          sw->damping[i], sw->value[p]);
                CHECK_MSG(k < 0, "%s: branch %d leaves a closed-form eigenvalue for zero at Cf = %g", what, b,
                          sw->value[p]);
                continue;
            }
            if (p == 0)
                for (int j = 0; j < 3; j++)
                    if (cabs(s - want[j]) <= EIG_TOL * cabs(want[j])) k = j;
            CHECK_MSG(k >= 0, "%s: branch %d = %g%+gi at Cf = %g is no closed-form eigenvalue", what, b, creal(s),
                      cimag(s), sw->value[p]);
            if (k < 0) break;
            worst_cf = fmax(worst_cf, cabs(s - want[k]) / cabs(want[k]));
            CHECK_CLOSE(sw->damping[i], -creal(want[k]) / cabs(want[k]), 1e-9);
            if (ref) worst_ref = fmax(worst_ref, cabs(s - (ref->re[i] + I * ref->im[i])) / cabs(s));
            if (p > 0) worst_mac = fmin(worst_mac, sw->mac[i]);
        }
        tracked += k >= 0;
    }
    printf("  %s: %d branches on the closed form to %.2g", what, tracked, worst_cf);
    if (ref) printf(", on the reload path's to %.2g", worst_ref);
    printf(", consecutive MAC >= %.6f\n", worst_mac);
    CHECK_EQ_INT(tracked, 3);
    CHECK_MSG(worst_cf <= EIG_TOL, "%s: %.3g from the closed form", what, worst_cf);
    CHECK_MSG(worst_ref <= EIG_TOL, "%s: %.3g from the reload path's branches", what, worst_ref);
    CHECK_MSG(worst_mac >= MAC_MIN, "%s: a consecutive MAC of %.3g", what, worst_mac);
}

TEST(mechanism_car_fast_path_branches)
{
    mbl_status st;
    mbl_model *md = NULL;
    CHECK_MSG(mbl_model_load_file(CAR, NULL, 0, &md, &st) == 0, "%s", st.msg);
    if (!md) return;
    mbl_sweep *reload = run(md, 1, MBL_PREDICT_LINEAR);
    mbl_sweep *fast = run(md, 0, MBL_PREDICT_LINEAR);
    mbl_sweep *fast_sens = run(md, 0, MBL_PREDICT_DEFAULT);
    if (reload && fast && fast_sens) {
        CHECK_EQ_INT(reload->fast, 0);
        CHECK_EQ_INT(fast->fast, 1); /* Cf changed in place */
        CHECK_EQ_INT(fast_sens->fast, 1);
        check_branches(reload, NULL, "reload, linear predictor");
        check_branches(fast, reload, "fast path, linear predictor");
        check_branches(fast_sens, reload, "fast path, default predictor");
    }
    mbl_sweep_free(reload);
    mbl_sweep_free(fast);
    mbl_sweep_free(fast_sens);
    mbl_model_free(md);
}

int main(void)
{
    RUN(mechanism_car_fast_path_branches);
    return test_summary("sweep_mech_car");
}
