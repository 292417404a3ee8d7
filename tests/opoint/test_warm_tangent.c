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
#include "opoint/opoint_solve.h"
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

/* Two correctors along the same 40 points of the N = 20 four-bar's k (the sweep's quadratic
 * predictions, chord steps): one with the one-row lower bound of the prediction's scaled residual
 * (the default), one computing that residual wherever a test reads it (opoint_warm_set_bound(ref,
 * 0)). The bound must decide every test as the full residual does: the points, iterations and
 * tangents bit for bit, the same factorizations and chord steps; the bound used at most points.
 * And the Jacobian the corrector hands on at each point (one tape with the residual's rows,
 * opoint_eval_F_jac) equals model_eval_jac's at the point's symbols to rounding (1e-13 of each
 * row's largest entry). */
TEST(bound_and_fj_tape)
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
    opoint_warm_set_bound(ref, 0);
    model_view mv;
    model_view_get(md, &mv);
    double k0 = 20, h = 0.008;
    mbl_point *pa = cold_at(md, ik, k0), *pb = pa ? opoint_point_copy(pa) : NULL;
    CHECK(pa && pb);
    if (!pa || !pb) goto out;
    int len = pa->n + pa->m + pa->k, nz = mv.jac.nz;
    double *y = calloc((size_t)len, sizeof *y), *yp = calloc((size_t)len, sizeof *yp);
    double *dy = calloc((size_t)len, sizeof *dy), *dyr = calloc((size_t)len, sizeof *dyr);
    double *g = calloc((size_t)len, sizeof *g), *syms = calloc((size_t)mv.nsym + 1, sizeof *syms);
    double *jac = calloc((size_t)nz + 1, sizeof *jac), *work = calloc(mv.work_size + 1, sizeof *work);
    double *rmax = calloc((size_t)mv.nF + 1, sizeof *rmax);
    double worst = 0;
    int npts = 40, njac = 0;
    for (int i = 0; i <= npts; i++) {
        double k = k0 + h * i;
        if (i > 0) {
            CHECK(mbl_model_set_param(md, ik, k, &st) == 0);
            for (int j = 0; j < len; j++)
                g[j] = i >= 2 ? y[j] + h * (dy[j] + h * ((yp[j] - y[j]) / h + dy[j]) / h) : y[j] + h * dy[j];
            mbl_point *na = NULL, *nb = NULL;
            int sa = 0, sb = 0;
            CHECK_MSG(opoint_warm_point(w, pa, g, i >= 2, &na, &sa, &st) == 0, "warm point %d", i);
            CHECK_MSG(opoint_warm_point(ref, pb, g, i >= 2, &nb, &sb, &st) == 0, "reference point %d", i);
            if (!na || !nb) {
                mbl_point_free(na), mbl_point_free(nb);
                break;
            }
            CHECK_EQ_INT(sa, sb);
            CHECK(memcmp(na->q, nb->q, (size_t)na->n * sizeof *na->q) == 0);
            CHECK(memcmp(na->lambda, nb->lambda, (size_t)na->m * sizeof *na->q) == 0);
            CHECK(na->scaled_residual == nb->scaled_residual && na->residual == nb->residual);
            /* the Jacobian handed on against the model's evaluator at the point */
            const double *jw = opoint_warm_jac(w, na);
            if (jw) {
                njac++;
                model_fill_syms_pt(md, na, syms);
                CHECK(model_eval_jac(md, syms, jac, work, &st) == 0);
                for (int r = 0; r < mv.nF; r++) rmax[r] = 0;
                for (int p = 0; p < nz; p++) rmax[mv.jac.row[p]] = fmax(rmax[mv.jac.row[p]], fabs(jac[p]));
                for (int p = 0; p < nz; p++) {
                    double d = fabs(jw[p] - jac[p]) / (rmax[mv.jac.row[p]] > 0 ? rmax[mv.jac.row[p]] : 1.0);
                    worst = fmax(worst, d);
                }
            }
            opoint_warm_recycle(w, pa), opoint_warm_recycle(ref, pb);
            pa = na, pb = nb;
        }
        memcpy(yp, y, (size_t)len * sizeof *y);
        get_y(pa, y);
        CHECK(opoint_warm_tangent(w, pa, dy, &st) == 0);
        CHECK(opoint_warm_tangent(ref, pb, dyr, &st) == 0);
        CHECK(memcmp(dy, dyr, (size_t)len * sizeof *dy) == 0);
    }
    opoint_warm_counts ca, cb;
    opoint_warm_get_counts(w, &ca);
    opoint_warm_get_counts(ref, &cb);
    printf("  bound_and_fj_tape: %lld predictions' scaled residuals replaced by the bound (%lld scaled "
           "residuals against %lld); %d Jacobians handed on, within %.3g of model_eval_jac's\n",
           ca.bound, ca.scaled, cb.scaled, njac, worst);
    CHECK_EQ_INT((int)cb.bound, 0);
    CHECK_EQ_INT((int)(cb.scaled - ca.scaled), (int)ca.bound);
    CHECK(ca.bound >= npts / 2);
    CHECK(ca.factor == cb.factor && ca.chord == cb.chord && ca.F == cb.F && ca.jac == cb.jac);
    CHECK(njac >= npts - 1);
    CHECK_MSG(worst <= 1e-13, "Jacobian %.3g from model_eval_jac's", worst);
    free(y), free(yp), free(dy), free(dyr), free(g), free(syms), free(jac), free(work), free(rmax);
    mbl_point_free(pa), mbl_point_free(pb);
out:
    opoint_warm_free(w), opoint_warm_free(ref);
    mbl_dae_deriv_free(dd);
    mbl_model_free(md);
}

int main(void)
{
    RUN(held_tangent);
    RUN(bound_and_fj_tape);
    return test_summary("warm_tangent");
}
