/* Re-linearization (mbl_relinearize, src/lin/relin.c; issue 34 item 1): at a second point, every
 * matrix of the sweep workspace's result (A, B, C, D, M-hat, C-hat, K-hat, F, q_S, v_W) equals a
 * fresh mbl_linearize there (two factorizations, its own scaling) to 1e-9 of the matrix's largest
 * entry, on models with holonomic and nonholonomic constraints, generalized speeds, inputs and
 * outputs, damping, spin and a mechanism. Where the one-factorization path applies (the N-loop
 * four-bars) the augmented matrix is factored once, at the workspace's first point, and never
 * again; the scaling of both matrices stays that of the first point. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lin/augmented_internal.h"
#include "mblin/mblin.h"
#include "test.h"

/* max |a - b| over max |b| (0 when b is zero and a is too) */
static double rel_diff(const double *a, const double *b, size_t n)
{
    double d = 0, s = 0;
    for (size_t i = 0; i < n; i++) {
        if (fabs(a[i] - b[i]) > d || isnan(a[i])) d = isnan(a[i]) ? INFINITY : fabs(a[i] - b[i]);
        if (fabs(b[i]) > s) s = fabs(b[i]);
    }
    return s > 0 ? d / s : d;
}

static void compare(const char *path, const char *what, const double *a, const double *b, size_t n)
{
    double r = rel_diff(a, b, n);
    if (getenv("RELIN_VERBOSE")) fprintf(stderr, "%s %s %.3g\n", path, what, r);
    if (!(r <= 1e-9)) fprintf(stderr, "%s: %s differs from a fresh linearization by %.3g\n", path, what, r);
    CHECK(r <= 1e-9);
}

/* the workspace at the file's point, re-linearized at points with the first coordinate moved by
 * dq (made consistent) and back; direct: whether one factorization per point is expected */
static void check_model(const char *path, double dq, int direct)
{
    mbl_status st;
    mbl_model *md = NULL;
    mbl_point *p0 = NULL, *p1 = NULL;
    mbl_lin_work *w = NULL;
    mbl_linear *lin = NULL, *fresh = NULL;
    int ok = mbl_model_load_file(path, NULL, 0, &md, &st) == 0 && mbl_operating_point(md, NULL, &p0, &st) == 0;
    if (!ok) fprintf(stderr, "%s: %s\n", path, st.msg);
    CHECK(ok);
    if (!ok) goto done;
    mbl_model_info info;
    mbl_model_get_info(md, &info);
    double *q = malloc(sizeof *q * (size_t)info.ncoord);
    memcpy(q, p0->q, sizeof *q * (size_t)info.ncoord);
    q[0] += dq;
    mbl_opoint_options po;
    mbl_opoint_options_default(&po);
    po.at = MBL_AT_GIVEN;
    po.q = q;
    po.v = p0->v;
    ok = mbl_operating_point(md, &po, &p1, &st) == 0 && mbl_lin_work_new(md, p0, NULL, &w, &lin, &st) == 0;
    free(q);
    if (!ok) fprintf(stderr, "%s: %s\n", path, st.msg);
    CHECK(ok);
    if (!ok) goto done;
    CHECK(w->direct == direct);
    for (int k = 0; k < 3; k++) {
        const mbl_point *pt = k == 1 ? p0 : p1;
        ok = mbl_relinearize(w, pt, lin, &st) == 0 && mbl_linearize(md, pt, NULL, &fresh, &st) == 0;
        if (!ok) fprintf(stderr, "%s: %s\n", path, st.msg);
        CHECK(ok);
        if (!ok) break;
        size_t nx = (size_t)lin->nx, nu = (size_t)lin->nu, ny = (size_t)lin->ny, n = (size_t)lin->n;
        size_t z0 = (size_t)lin->z0, z1 = (size_t)lin->z1;
        CHECK(fresh->nx == lin->nx && fresh->z0 == lin->z0 && fresh->z1 == lin->z1);
        if (fresh->nx != lin->nx || fresh->z0 != lin->z0) break;
        compare(path, "A", lin->A, fresh->A, nx * nx);
        compare(path, "B", lin->B, fresh->B, nx * nu);
        compare(path, "C", lin->C, fresh->C, ny * nx);
        compare(path, "D", lin->D, fresh->D, ny * nu);
        compare(path, "M-hat", lin->M, fresh->M, z1 * z1);
        compare(path, "C-hat", lin->Cd, fresh->Cd, z1 * z1);
        compare(path, "K-hat", lin->K, fresh->K, z1 * z0);
        compare(path, "F", lin->F, fresh->F, z1 * nu);
        compare(path, "q_S", lin->q_S, fresh->q_S, n * z0);
        compare(path, "v_W", lin->v_W, fresh->v_W, n * z1);
        mbl_linear_free(fresh);
        fresh = NULL;
    }
    if (w && direct) { /* the augmented matrix: factored once (the first point), never refactored */
        int nf = -1, nrf = -1;
        mbla_klu_stats(w->lu, &nf, &nrf);
        CHECK(nf == 1 && nrf == 0);
    }
done:
    mbl_linear_free(fresh);
    mbl_linear_free(lin);
    mbl_lin_work_free(w);
    mbl_point_free(p1);
    mbl_point_free(p0);
    mbl_model_free(md);
}

TEST(constrained_fourbars)
{
    check_model("examples/fourbar_N20.yaml", 1e-3, 1);
    check_model("examples/fourbar_N5_damped.yaml", 2e-3, 1);
    check_model("examples/fourbar_N1.yaml", 1e-2, 1);
    check_model("examples/mech/fourbar_N10_damped.yaml", 1e-3, 1);
}

TEST(speeds_inputs_outputs)
{
    check_model("examples/whipple_bicycle_nonlinear.yaml", 1e-2, 1);
    check_model("examples/rolling_disc_speeds.yaml", 1e-2, 1);
    check_model("examples/nh_sleigh.yaml", 1e-2, 1);
    check_model("examples/slider_pendulum.yaml", 1e-2, 1);
    check_model("examples/spring_pendulum.yaml", 1e-2, 1);
    check_model("examples/mech/rigid_rotor.yaml", 1e-4, 1);
}

/* ode states, or a friction force of the reaction (a multiplier outside Phi_q^T lambda, with and
 * without an ode state): both matrices are factored at every point */
TEST(two_factorizations)
{
    check_model("examples/ode/cart_pd_controller.yaml", 1e-2, 0);
    check_model("examples/ode/dc_motor_pendulum.yaml", 1e-2, 0);
    check_model("examples/ode/arm_friction_of_reaction.yaml", 1e-2, 0);
    check_model("tests/lin/relin_friction_of_reaction.yaml", 1e-2, 0);
}

int main(void)
{
    RUN(constrained_fourbars);
    RUN(speeds_inputs_outputs);
    RUN(two_factorizations);
    return test_summary("relin");
}
