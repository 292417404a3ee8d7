/* Re-linearization with the model's Jacobian values handed in (lin_relinearize_jac, src/lin/relin.c;
 * issue 34, item 2: a sweep's warm corrector has just evaluated them at the accepted point): the
 * result is bit for bit mbl_relinearize's at the same point, which evaluates them itself, and it
 * is the values handed in that are used (the values of another point give another result). Both
 * also agree with a fresh mbl_linearize at the point (test_relin checks that to 1e-9; here A). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lin/lin_internal.h"
#include "lin/relin_jac.h"
#include "mblin/mblin.h"
#include "test.h"

static int same(const double *a, const double *b, size_t n)
{
    return !memcmp(a, b, n * sizeof *a);
}

/* max |a - b| over max |b| */
static double rel_diff(const double *a, const double *b, size_t n)
{
    double d = 0, s = 0;
    for (size_t i = 0; i < n; i++) d = fmax(d, fabs(a[i] - b[i])), s = fmax(s, fabs(b[i]));
    return s > 0 ? d / s : d;
}

static void check_model(const char *path, double dq)
{
    mbl_status st;
    mbl_model *md = NULL;
    mbl_point *p0 = NULL, *p1 = NULL;
    mbl_lin_work *w = NULL;
    mbl_linear *lin = NULL, *fresh = NULL;
    mbl_eval ev0, ev1;
    memset(&ev0, 0, sizeof ev0), memset(&ev1, 0, sizeof ev1);
    double *A = NULL, *B = NULL, *C = NULL, *M = NULL;
    int ok = mbl_model_load_file(path, NULL, 0, &md, &st) == 0 && mbl_operating_point(md, NULL, &p0, &st) == 0;
    CHECK_MSG(ok, "%s: %s", path, st.msg);
    if (!ok) goto done;
    mbl_model_info info;
    mbl_model_get_info(md, &info);
    double *q = malloc(sizeof *q * (size_t)info.ncoord);
    memcpy(q, p0->q, sizeof *q * (size_t)info.ncoord);
    q[0] += dq;
    mbl_opoint_options po;
    mbl_opoint_options_default(&po);
    po.at = MBL_AT_GIVEN, po.q = q, po.v = p0->v;
    ok = mbl_operating_point(md, &po, &p1, &st) == 0 && mbl_lin_work_new(md, p0, NULL, &w, &lin, &st) == 0 &&
         lin_eval_init(md, &ev0, &st) == 0 && lin_eval_init(md, &ev1, &st) == 0 && lin_eval_at(md, p0, &ev0, &st) == 0 &&
         lin_eval_at(md, p1, &ev1, &st) == 0;
    free(q);
    CHECK_MSG(ok, "%s: %s", path, st.msg);
    if (!ok) goto done;
    size_t nx = (size_t)lin->nx, nu = (size_t)lin->nu, ny = (size_t)lin->ny, z1 = (size_t)lin->z1;
    A = malloc(sizeof *A * (nx * nx + 1)), B = malloc(sizeof *B * (nx * nu + 1));
    C = malloc(sizeof *C * (ny * nx + 1)), M = malloc(sizeof *M * (z1 * z1 + 1));
    /* mbl_relinearize at p1 (its own evaluation) */
    ok = mbl_relinearize(w, p1, lin, &st) == 0;
    CHECK_MSG(ok, "%s: %s", path, st.msg);
    if (!ok) goto done;
    memcpy(A, lin->A, sizeof *A * nx * nx), memcpy(B, lin->B, sizeof *B * nx * nu);
    memcpy(C, lin->C, sizeof *C * ny * nx), memcpy(M, lin->M, sizeof *M * z1 * z1);
    /* the values at p0 handed in at p1: another result (the values handed in are the ones used) */
    ok = lin_relinearize_jac(w, p1, ev0.jac, NULL, lin, &st) == 0;
    CHECK_MSG(ok, "%s: %s", path, st.msg);
    int moved = 0; /* the Jacobian differs between the points (not where q[0] is cyclic) */
    for (int p = 0; p < ev0.mv.jac.nz; p++) moved |= ev0.jac[p] != ev1.jac[p];
    if (moved) CHECK_MSG(!same(lin->A, A, nx * nx), "%s: A at p1 with p0's Jacobian is p1's", path);
    /* the values at p1 handed in: bit for bit mbl_relinearize's */
    ok = lin_relinearize_jac(w, p1, ev1.jac, NULL, lin, &st) == 0;
    CHECK_MSG(ok, "%s: %s", path, st.msg);
    if (!ok) goto done;
    CHECK_MSG(same(lin->A, A, nx * nx) && same(lin->B, B, nx * nu) && same(lin->C, C, ny * nx) &&
                  same(lin->M, M, z1 * z1),
              "%s: the Jacobian handed in changes the result", path);
    /* and a fresh linearization at p1 */
    ok = mbl_linearize(md, p1, NULL, &fresh, &st) == 0 && fresh->nx == lin->nx;
    CHECK_MSG(ok, "%s: %s", path, st.msg);
    if (ok) CHECK_MSG(rel_diff(lin->A, fresh->A, nx * nx) <= 1e-9, "%s: A %.3g from a fresh linearization", path,
                      rel_diff(lin->A, fresh->A, nx * nx));
done:
    free(A), free(B), free(C), free(M);
    lin_eval_free(&ev0), lin_eval_free(&ev1);
    mbl_linear_free(fresh);
    mbl_linear_free(lin);
    mbl_lin_work_free(w);
    mbl_point_free(p1);
    mbl_point_free(p0);
    mbl_model_free(md);
}

TEST(jacobian_handed_in)
{
    check_model("examples/fourbar_N20.yaml", 1e-3);
    check_model("examples/whipple_bicycle_nonlinear.yaml", 1e-2);
    check_model("examples/ode/dc_motor_pendulum.yaml", 1e-2);
}

int main(void)
{
    RUN(jacobian_handed_in);
    return test_summary("relin_jac");
}
