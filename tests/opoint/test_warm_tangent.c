/* The warm corrector's tangent without a factorization (issue 34 item 2, src/opoint/warm.c): along
 * the N = 20 four-bar's stiffness k, the tangent dy/dk of y = [q; lambda; mu] that
 * opoint_warm_tangent solves with the block's held factorization (one refinement step against the
 * exact Jacobian at the point, from the line through the last two tangents) equals, to 2e-8
 * relative (measured: 6e-9), the one a fresh factorization of the Jacobian at the same point gives (a second
 * corrector reset before each tangent: the former path, every tangent factored), which is also
 * checked against the central difference of the points solved cold at k -+ 1e-4 (to 1e-6);
 * after a far jump in k the held step is refused and the tangent factored (bit for bit the fresh
 * one's). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/mblin.h"
#include "opoint/opoint_warm.h"
#include "fixture.h"
#include "test.h"

#define MODEL "examples/fourbar_N20.yaml"

static void get_y(const mbl_point *pt, double *y)
{
    memcpy(y, pt->q, (size_t)pt->n * sizeof *y);
    if (pt->m) memcpy(y + pt->n, pt->lambda, (size_t)pt->m * sizeof *y);
    if (pt->k) memcpy(y + pt->n + pt->m, pt->mu, (size_t)pt->k * sizeof *y);
}

/* max_i |a_i - b_i| / max_i |b_i| */
static double rel_diff(int len, const double *a, const double *b)
{
    double d = 0, s = 0;
    for (int i = 0; i < len; i++) d = fmax(d, fabs(a[i] - b[i])), s = fmax(s, fabs(b[i]));
    return d / s;
}

/* the equilibrium cold (from the file's guess) at k = v */
static mbl_point *cold_at(mbl_model *md, int ik, double v)
{
    mbl_status st;
    mbl_point *pt = NULL;
    if (mbl_model_set_param(md, ik, v, &st) || mbl_operating_point(md, NULL, &pt, &st)) return NULL;
    return pt;
}

TEST(held_tangent)
{
    mbl_status st;
    mbl_model *md = FIXTURE_LOAD(MODEL, NULL, "fourbar_N20");
    if (!md) return;
    int ik = fixture_param_index(md, "k");
    CHECK(ik >= 0);
    mbl_dae_deriv *dd = NULL;
    CHECK_MSG(mbl_dae_deriv_new_param(md, &dd, &st) == 0, "%s", st.msg);
    opoint_warm *w = NULL, *ref = NULL;
    CHECK(opoint_warm_new(md, NULL, dd, ik, &w, &st) == 0);
    CHECK(opoint_warm_new(md, NULL, dd, ik, &ref, &st) == 0);
    if (ik < 0 || !dd || !w || !ref) goto out;
    double k0 = 20, h = 0.008;
    mbl_point *pt = cold_at(md, ik, k0);
    CHECK(pt != NULL);
    if (!pt) goto out;
    int len = pt->n + pt->m + pt->k;
    double *y = calloc((size_t)len, sizeof *y), *yp = calloc((size_t)len, sizeof *yp);
    double *dy = calloc((size_t)len, sizeof *dy), *dyp = calloc((size_t)len, sizeof *dyp);
    double *dyr = calloc((size_t)len, sizeof *dyr), *g = calloc((size_t)len, sizeof *g);
    opoint_warm_counts c0, c1;
    double worst = 0;
    int npts = 24;
    for (int i = 0; i <= npts; i++) {
        double k = k0 + h * i;
        if (i > 0) {
            /* the quadratic through the point before with the last tangent, as the sweep's */
            CHECK(mbl_model_set_param(md, ik, k, &st) == 0);
            for (int j = 0; j < len; j++)
                g[j] = i >= 2 ? y[j] + h * (dy[j] + h * ((yp[j] - y[j]) / h + dy[j]) / h) : y[j] + h * dy[j];
            mbl_point *next = NULL;
            int steps = 0;
            CHECK_MSG(opoint_warm_point(w, pt, g, i >= 2, &next, &steps, &st) == 0, "warm point %d", i);
            if (!next) break;
            opoint_warm_recycle(w, pt);
            pt = next;
        }
        memcpy(yp, y, (size_t)len * sizeof *y);
        get_y(pt, y);
        memcpy(dyp, dy, (size_t)len * sizeof *dy);
        CHECK(opoint_warm_tangent(w, pt, dy, &st) == 0);
        opoint_warm_reset(ref);
        CHECK(opoint_warm_tangent(ref, pt, dyr, &st) == 0);
        double d = rel_diff(len, dy, dyr);
        if (i >= 2) worst = fmax(worst, d);
        CHECK_MSG(d <= 2e-8, "k = %g: held tangent %.3g from the factored one", k, d);
    }
    opoint_warm_get_counts(w, &c0);
    printf("  held_tangent: %lld of %d tangents without a factorization (%lld factorizations), "
           "largest difference %.3g\n",
           c0.held, npts + 1, c0.factor, worst);
    CHECK_MSG(c0.held >= npts / 2, "%lld tangents held", c0.held);
    CHECK(c0.factor < npts / 2);
    /* the reference against the central difference of cold points */
    {
        double kc = k0 + h * npts, e = 1e-4;
        mbl_point *a = cold_at(md, ik, kc - e), *b = cold_at(md, ik, kc + e);
        CHECK(a && b);
        if (a && b) {
            double *ya = calloc((size_t)len, sizeof *ya), *yb = calloc((size_t)len, sizeof *yb);
            get_y(a, ya), get_y(b, yb);
            for (int j = 0; j < len; j++) g[j] = (yb[j] - ya[j]) / (2 * e);
            double d = rel_diff(len, dyr, g);
            CHECK_MSG(d <= 1e-6, "factored tangent %.3g from the central difference", d);
            free(ya), free(yb);
        }
        mbl_point_free(a), mbl_point_free(b);
        CHECK(mbl_model_set_param(md, ik, kc, &st) == 0);
    }
    /* a far point (k = 28, solved cold): the held step's correction is too large, J is factored */
    {
        mbl_point *far = cold_at(md, ik, 28);
        CHECK(far != NULL);
        if (far) {
            opoint_warm_get_counts(w, &c0);
            CHECK(opoint_warm_tangent(w, far, dy, &st) == 0);
            opoint_warm_get_counts(w, &c1);
            CHECK_EQ_INT((int)(c1.held - c0.held), 0);
            CHECK_EQ_INT((int)(c1.factor - c0.factor), 1);
            opoint_warm_reset(ref);
            CHECK(opoint_warm_tangent(ref, far, dyr, &st) == 0);
            CHECK(memcmp(dy, dyr, (size_t)len * sizeof *dy) == 0);
        }
        mbl_point_free(far);
    }
    free(y), free(yp), free(dy), free(dyp), free(dyr), free(g);
    mbl_point_free(pt);
out:
    opoint_warm_free(w), opoint_warm_free(ref);
    mbl_dae_deriv_free(dd);
    mbl_model_free(md);
}

int main(void)
{
    RUN(held_tangent);
    return test_summary("warm_tangent");
}
