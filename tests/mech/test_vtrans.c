/* The velocity transformation of a relative-coordinate mechanism in the public API
 * (mbl_model_velocity_transformation): source 003 Eq. 3.38 and Eq. 3.43 (with the erratum of
 * papers/README.md: the 1 of dB^T/dq2 in column 9) on the slider-pendulum, K22 = 196.2 from
 * -dB^T/dq2 f of Eq. 3.40, and dB/dq, Bdot against central differences of B on the spatial
 * four-bar. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/mblin.h"
#include "test.h"
#include "fixture.h"

TEST(slider_pendulum_eq_3_38_3_43)
{
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_status st;
    memset(&st, 0, sizeof st);
    int rc = fixture_model_point("examples/mech/slider_pendulum_relative.yaml", NULL, NULL, &md, &pt, &st);
    CHECK_MSG(rc == 0, "%s", st.msg);
    mbl_vtrans *v = NULL;
    if (!rc) CHECK_EQ_INT(mbl_model_velocity_transformation(md, pt, &v, &st), 0);
    CHECK(v != NULL);
    if (v) {
        CHECK_EQ_INT(v->nrow, 12);
        CHECK_EQ_INT(v->ncol, 2);
        CHECK(!strcmp(v->row_name[8], "pendulum.vz"));
        /* Eq. 3.38: B^T = [u2 0 | u2 0; 0 0 | u3 x d33, u3], u2 = y, u3 = x, d33 = (0, 0, -l/2) */
        static const double BT[2][12] = {{0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0}};
        for (int k = 0; k < 2; k++)
            for (int i = 0; i < 12; i++) CHECK_CLOSE(v->B[i + 12 * k], BT[k][i], 1e-14);
        /* Eq. 3.43 (erratum): dB/dq1 = 0; dB/dq2 has its only 1 in row 9 (pendulum vz), column 2 */
        for (int m = 0; m < 2; m++)
            for (int k = 0; k < 2; k++)
                for (int i = 0; i < 12; i++)
                    CHECK_CLOSE(v->dB[24 * m + 12 * k + i], (m == 1 && k == 1 && i == 8) ? 1.0 : 0.0, 1e-14);
        /* Eq. 3.10 with Eq. 3.40's f (gravity: -m2 g, -m3 g on the z rows): K22 = -(dB^T/dq2 f)_2 */
        double f[12] = {0};
        f[2] = -10 * 9.81, f[8] = -20 * 9.81;
        double k22 = 0;
        for (int i = 0; i < 12; i++) k22 -= v->dB[24 + 12 + i] * f[i];
        CHECK_CLOSE(k22, 196.2, 1e-12);
        /* Eq. 3.8: B^T M B = [30 20; 20 35] with M = diag(m2 I, I2, m3 I, j3 I) */
        double Md[12] = {10, 10, 10, 1, 1, 1, 20, 20, 20, 15, 15, 15}, Ml[4] = {0};
        for (int a = 0; a < 2; a++)
            for (int b = 0; b < 2; b++)
                for (int i = 0; i < 12; i++) Ml[a + 2 * b] += v->B[i + 12 * a] * Md[i] * v->B[i + 12 * b];
        CHECK_CLOSE(Ml[0], 30, 1e-12);
        CHECK_CLOSE(Ml[1], 20, 1e-12);
        CHECK_CLOSE(Ml[3], 35, 1e-12);
    }
    mbl_vtrans_free(v);
    mbl_point_free(pt);
    mbl_model_free(md);
}

/* dB/dq against central differences of B, and Bdot = sum_m dB/dq_m q'_m, on the model at path
 * moved to a generic configuration and velocity */
static void dB_central_differences(const char *path, const char *what)
{
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_status st;
    memset(&st, 0, sizeof st);
    int rc = mbl_model_load_file(path, NULL, 0, &md, &st);
    if (!rc) rc = mbl_operating_point(md, NULL, &pt, &st);
    CHECK_MSG(rc == 0, "%s: %s", what, st.msg);
    if (rc) {
        mbl_model_free(md);
        return;
    }
    int n = pt->n;
    /* a generic configuration and velocity (B is a function of q alone) */
    for (int i = 0; i < n; i++) pt->q[i] += 0.3 + 0.17 * i, pt->v[i] = 0.5 - 0.4 * i;
    mbl_vtrans *v = NULL, *vp = NULL, *vm = NULL;
    CHECK_EQ_INT(mbl_model_velocity_transformation(md, pt, &v, &st), 0);
    CHECK(v && v->ncol == n && v->nrow % 6 == 0 && v->nrow >= 18);
    double h = 1e-5, maxerr = 0, maxd = 0;
    for (int m = 0; v && m < n; m++) {
        double q0 = pt->q[m];
        pt->q[m] = q0 + h;
        CHECK_EQ_INT(mbl_model_velocity_transformation(md, pt, &vp, &st), 0);
        pt->q[m] = q0 - h;
        CHECK_EQ_INT(mbl_model_velocity_transformation(md, pt, &vm, &st), 0);
        pt->q[m] = q0;
        size_t nB = (size_t)v->nrow * (size_t)n;
        for (size_t e = 0; vp && vm && e < nB; e++) {
            double fd = (vp->B[e] - vm->B[e]) / (2 * h);
            maxerr = fmax(maxerr, fabs(fd - v->dB[nB * (size_t)m + e]));
            maxd = fmax(maxd, fabs(fd));
        }
        mbl_vtrans_free(vp), mbl_vtrans_free(vm);
        vp = vm = NULL;
    }
    CHECK(maxd > 0.1);        /* the derivative is not trivially zero */
    CHECK(maxerr < 1e-8);
    printf("  %s: max |dB/dq - central differences| = %.2e (max |dB/dq| %.3f)\n", what, maxerr, maxd);
    /* Bdot = sum_m dB/dq_m q'_m */
    for (int e = 0; v && e < v->nrow * n; e++) {
        double s = 0;
        for (int m = 0; m < n; m++) s += v->dB[(size_t)v->nrow * n * m + e] * pt->v[m];
        CHECK_CLOSE(v->Bdot[e], s, 1e-12);
    }
    mbl_vtrans_free(v);
    mbl_point_free(pt);
    mbl_model_free(md);
}

TEST(fourbar_dB_central_differences)
{
    dB_central_differences("examples/mech/spatial_fourbar_relative.yaml", "spatial four-bar");
}

/* a URDF arm: a chain of seven revolute joints, dB/dq by forward sweeps of B's tape */
TEST(arm7_dB_central_differences)
{
    dB_central_differences("examples/urdf/arm7.urdf", "arm7");
}

int main(void)
{
    RUN(slider_pendulum_eq_3_38_3_43);
    RUN(fourbar_dB_central_differences);
    RUN(arm7_dB_central_differences);
    return test_summary("mech vtrans");
}
