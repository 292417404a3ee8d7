/* The spatial structured term evaluated numerically (src/model/terms/ffr3_num.c) against its
 * expression form (src/model/terms/ffr3.c, loaded with model_ffr_set_numeric(0)) and against central
 * differences of its own residual: the spatial beam pendulum (2 elements per link, Rayleigh damping
 * on link 1; and the example at 10 elements) at points where the links are deformed, rotated (unit
 * Euler parameters turned by up to about 0.3 rad), moving and accelerating, with multipliers; and
 * the damped one with the geometric stiffness of both bending planes (issue 32: the example says
 * `geometric_stiffness: false`, the source's model).
 * Checked: the expression form's every Jacobian entry is in the numeric pattern (the others hold 0);
 * residual and entries equal to 1e-12 of their row's largest entry; every entry of the whole
 * Jacobian (tapes and numeric term) equal to the central differences of the residual to 1e-6 of
 * the row's largest entry; and the tapes no longer hold the term. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/mblin.h"
#include "model/ffr.h"
#include "model/model_internal.h"
#include "test.h"
#include "fixture.h"

/* tolerances: the two forms sum the same products in other orders (rounding); central differences
 * with step H_FD have truncation error ~ H_FD^2 times third derivatives of order 1 to 1e3 here */
#define TOL_FORMS 1e-12
#define H_FD 1e-5
#define TOL_FD 1e-6

/* the example with ne elements per link ("10" or "2 ", two characters) and, when damped, Rayleigh
 * damping on link 1; geo: with the geometric stiffness (the example's `false` turned into `true `) */
static char *pendulum_text(const char *ne, int damped, int geo)
{
    char *sp = test_slurp("examples/mech/spatial_beam_pendulum.yaml"), *p;
    if (!sp) return NULL;
    while (geo && (p = strstr(sp, "geometric_stiffness: false"))) memcpy(p + 21, "true ", 5);
    if (strcmp(ne, "10"))
        while ((p = strstr(sp, "elements: 10"))) memcpy(p + 10, ne, 2);
    const char *at = strstr(sp, "    markers:\n      a1:");
    char *text = malloc(strlen(sp) + 128);
    if (at && text) sprintf(text, "%.*s%s%s", (int)(at - sp), sp, damped ? "    damping: {alpha: 0.05, beta: 2e-4}\n" : "", at);
    free(sp);
    return text;
}

/* the index of every (row, col) in md's jac, -1 if absent (dense: small models) */
static int *index_of(const mbl_model *md)
{
    size_t nn = (size_t)md->nF * md->nunk;
    int *ix = malloc((nn + 1) * sizeof *ix);
    for (size_t k = 0; k < nn; k++) ix[k] = -1;
    for (int p = 0; p < md->jac.nz; p++) ix[(size_t)md->jac.row[p] * md->nunk + md->jac.col[p]] = p;
    return ix;
}

/* a deformed, rotated, moving point: q0 plus noise, each body's Euler parameters turned and
 * normalized */
static void random_point(const mbl_model *md, unsigned *seed, double *q, double *v, double *a, double *lam)
{
    int n = md->n;
    for (int i = 0; i < n; i++) {
        q[i] = md->q0[i] + 0.02 * test_urand(seed);
        v[i] = test_urand(seed);
        a[i] = 3 * test_urand(seed);
    }
    for (int i = 0; i + 3 < n; i++) {
        size_t l = strlen(md->qname[i]);
        if (l < 3 || strcmp(md->qname[i] + l - 3, "_e0")) continue;
        double s = 0;
        for (int k = 0; k < 4; k++) q[i + k] = md->q0[i + k] + 0.15 * test_urand(seed), s += q[i + k] * q[i + k];
        for (int k = 0; k < 4; k++) q[i + k] /= sqrt(s);
    }
    for (int j = 0; j < md->m; j++) lam[j] = 10 * test_urand(seed);
}

static double *rowmax_of(const mbl_model *md, const double *J, double *rm)
{
    for (int i = 0; i < md->nF; i++) rm[i] = 0;
    for (int p = 0; p < md->jac.nz; p++) rm[md->jac.row[p]] = fmax(rm[md->jac.row[p]], fabs(J[p]));
    return rm;
}

/* the numeric Jacobian (all of it: tapes and terms) against central differences of the residual */
static double fd_check(const mbl_model *mn, const double *sn, const double *Jn, double *work)
{
    int nF = mn->nF;
    double *s = malloc((size_t)(mn->nsym + 1) * sizeof *s), *Fp = calloc((size_t)nF + 1, sizeof *Fp);
    double *Fm = calloc((size_t)nF + 1, sizeof *Fm), *D = calloc((size_t)mn->jac.nz + 1, sizeof *D);
    double *rm = calloc((size_t)nF + 1, sizeof *rm), worst = 0;
    int *ix = index_of(mn);
    memcpy(s, sn, (size_t)mn->nsym * sizeof *s);
    mbl_status st;
    for (int c = 0; c < mn->nunk; c++) {
        int k = mn->sym_of_unknown[c];
        double x = s[k], h = H_FD * fmax(1.0, fabs(x));
        s[k] = x + h;
        int rc = model_eval_F(mn, s, Fp, work, &st);
        s[k] = x - h;
        if (!rc) rc = model_eval_F(mn, s, Fm, work, &st);
        s[k] = x;
        CHECK_MSG(rc == 0, "%s", rc ? st.msg : "");
        /* every entry of column c; no derivative outside the pattern */
        for (int i = 0; i < nF; i++) {
            double d = (Fp[i] - Fm[i]) / (2 * h);
            int p = ix[(size_t)i * mn->nunk + c];
            if (p >= 0) D[p] = d;
            else if (fabs(d) > TOL_FD * fmax(1.0, fabs(Fp[i])))
                CHECK_MSG(0, "d F[%d] / d unknown %d = %.3g outside the pattern", i, c, d);
        }
    }
    rowmax_of(mn, Jn, rm);
    for (int p = 0; p < mn->jac.nz; p++) worst = fmax(worst, fabs(D[p] - Jn[p]) / fmax(rm[mn->jac.row[p]], 1.0));
    free(s), free(Fp), free(Fm), free(D), free(rm), free(ix);
    return worst;
}

static void compare(const char *what, const char *text, int npt)
{
    mbl_model *me = FIXTURE_LOAD_FORM(model_ffr_set_numeric, 0, NULL, text, "beam3.yaml");
    mbl_model *mn = FIXTURE_LOAD_FORM(model_ffr_set_numeric, 1, NULL, text, "beam3.yaml");
    if (!me || !mn) {
        mbl_model_free(me), mbl_model_free(mn);
        return;
    }
    CHECK_MSG(mn->nffr3n == 2 && me->nffr3n == 0, "%s: %d numeric bodies (expression form: %d)", what, mn->nffr3n,
              me->nffr3n);
    CHECK_MSG(mn->jac_ntape < mn->jac.nz, "%s: every entry still in the tape", what);
    int n = me->n, m = me->m, nz = mn->jac.nz;
    int *map = calloc((size_t)me->jac.nz + 1, sizeof *map), *hit = calloc((size_t)nz + 1, sizeof *hit);
    int *ix = index_of(mn);
    CHECK(me->nunk == mn->nunk && me->nF == mn->nF);
    for (int p = 0; p < me->jac.nz; p++) {
        map[p] = ix[(size_t)me->jac.row[p] * mn->nunk + me->jac.col[p]];
        CHECK_MSG(map[p] >= 0, "%s: entry (%d, %d) missing in the numeric form", what, me->jac.row[p], me->jac.col[p]);
        if (map[p] >= 0) hit[map[p]] = 1;
    }
    double *q = calloc((size_t)n + 1, sizeof *q), *v = calloc((size_t)n + 1, sizeof *v), *a = calloc((size_t)n + 1, sizeof *a);
    double *lam = calloc((size_t)m + 1, sizeof *lam);
    double *se = calloc((size_t)me->nsym + 1, sizeof *se), *sn = calloc((size_t)mn->nsym + 1, sizeof *sn);
    size_t ws = me->work_size > mn->work_size ? me->work_size : mn->work_size;
    double *work = calloc(ws + 1, sizeof *work), *rm = calloc((size_t)me->nF + 1, sizeof *rm);
    double *Fe = calloc((size_t)me->nF + 1, sizeof *Fe), *Fn = calloc((size_t)mn->nF + 1, sizeof *Fn);
    double *Je = calloc((size_t)me->jac.nz + 1, sizeof *Je), *Jn = calloc((size_t)nz + 1, sizeof *Jn);
    unsigned seed = 4242;
    double worstF = 0, worstJ = 0, worstX = 0, worstD = 0;
    for (int t = 0; t < npt; t++) {
        random_point(me, &seed, q, v, a, lam);
        model_fill_syms(me, 0.0, q, v, a, lam, NULL, NULL, se);
        model_fill_syms(mn, 0.0, q, v, a, lam, NULL, NULL, sn);
        mbl_status st;
        int rc = model_eval_F(me, se, Fe, work, &st);
        if (!rc) rc = model_eval_F(mn, sn, Fn, work, &st);
        if (!rc) rc = model_eval_jac(me, se, Je, work, &st);
        if (!rc) rc = model_eval_jac(mn, sn, Jn, work, &st);
        CHECK_MSG(rc == 0, "%s: %s", what, rc ? st.msg : "");
        if (rc) break;
        rowmax_of(me, Je, rm);
        for (int i = 0; i < me->nF; i++) worstF = fmax(worstF, fabs(Fe[i] - Fn[i]) / fmax(fmax(rm[i], fabs(Fe[i])), 1e-300));
        for (int p = 0; p < me->jac.nz; p++)
            if (map[p] >= 0) worstJ = fmax(worstJ, fabs(Je[p] - Jn[map[p]]) / fmax(rm[me->jac.row[p]], 1e-300));
        for (int p = 0; p < nz; p++)
            if (!hit[p]) worstX = fmax(worstX, fabs(Jn[p]));
        if (t < 2) worstD = fmax(worstD, fd_check(mn, sn, Jn, work));
    }
    printf("  %s: %d Jacobian entries (%d by the tape; expression form %d), %d points: worst difference F %.2g, "
           "Jacobian %.2g (of the row's largest), extra entries %.2g; central differences %.2g\n",
           what, nz, mn->jac_ntape, me->jac.nz, npt, worstF, worstJ, worstX, worstD);
    CHECK_MSG(worstF <= TOL_FORMS && worstJ <= TOL_FORMS, "%s: F %.3g, Jacobian %.3g", what, worstF, worstJ);
    CHECK_MSG(worstX == 0, "%s: an entry outside the expression form's pattern is %.3g", what, worstX);
    CHECK_MSG(worstD <= TOL_FD, "%s: the Jacobian is off the central differences by %.3g", what, worstD);
    free(map), free(hit), free(ix), free(q), free(v), free(a), free(lam), free(se), free(sn), free(work), free(rm);
    free(Fe), free(Fn), free(Je), free(Jn);
    mbl_model_free(me), mbl_model_free(mn);
}

TEST(damped_two_elements)
{
    char *text = pendulum_text("2 ", 1, 0);
    CHECK(text != NULL);
    if (text) compare("spatial pendulum n_p = 2, damped", text, 5);
    free(text);
}

TEST(geometric_two_elements)
{
    char *text = pendulum_text("2 ", 1, 1);
    CHECK(text != NULL);
    if (text) compare("spatial pendulum n_p = 2, damped, geometric stiffness", text, 5);
    free(text);
}

TEST(example_ten_elements)
{
    char *text = pendulum_text("10", 0, 0);
    CHECK(text != NULL);
    if (text) compare("spatial pendulum n_p = 10", text, 3);
    free(text);
}

int main(void)
{
    RUN(damped_two_elements);
    RUN(geometric_two_elements);
    RUN(example_ten_elements);
    return test_summary("ffr3_num");
}
