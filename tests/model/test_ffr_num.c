/* The numeric structured term (src/model/terms/ffr_num.c) against the expression form of ffr.c: the same
 * models loaded both ways (model_ffr_set_numeric), the residual and every Jacobian entry at random
 * points with velocities and accelerations (moving), undamped and damped, beam and modal bodies,
 * equal to 1e-13 relative. Also: the pattern is the same, the sensitivities' derivatives (which
 * build the expression form on demand) are the same, and the tape no longer holds the term. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/codegen.h"
#include "mblin/model.h"
#include "mblin/sensitivity.h"
#include "model/ffr.h"
#include "model/model_internal.h"
#include "test.h"
#include "fixture.h"


/* index of (row, col) in md's jac, -1 if absent */
static int find(const mbl_model *md, int row, int col)
{
    for (int p = 0; p < md->jac.nz; p++)
        if (md->jac.row[p] == row && md->jac.col[p] == col) return p;
    return -1;
}

/* worst relative difference of F and jac between the two forms over npt random points */
static void compare(const char *path, const char *text, int npt, int *nbody)
{
    mbl_model *me = FIXTURE_LOAD_FORM(model_ffr_set_numeric, 0, path, text, "damped-beam");
    mbl_model *mn = FIXTURE_LOAD_FORM(model_ffr_set_numeric, 1, path, text, "damped-beam");
    if (!me || !mn) {
        mbl_model_free(me), mbl_model_free(mn);
        return;
    }
    const char *nm = path ? path : "damped beam";
    *nbody = mn->nffrn;
    CHECK_MSG(mn->nffrn > 0 && me->nffrn == 0, "%s: %d numeric bodies (expression form: %d)", nm, mn->nffrn, me->nffrn);
    CHECK_MSG(mn->jac.nz == me->jac.nz, "%s: %d Jacobian entries, expression form %d", nm, mn->jac.nz, me->jac.nz);
    CHECK_MSG(mn->jac_ntape < mn->jac.nz, "%s: every entry still in the tape", nm);
    int n = me->n, m = me->m, k = me->k, nr = me->nr;
    int *map = calloc((size_t)me->jac.nz + 1, sizeof *map);
    for (int p = 0; p < me->jac.nz; p++) {
        map[p] = find(mn, me->jac.row[p], me->jac.col[p]);
        CHECK_MSG(map[p] >= 0, "%s: entry (%d, %d) missing in the numeric form", nm, me->jac.row[p], me->jac.col[p]);
    }
    double *q = calloc((size_t)n + 1, sizeof *q), *v = calloc((size_t)n + 1, sizeof *v), *a = calloc((size_t)n + 1, sizeof *a);
    double *lam = calloc((size_t)m + 1, sizeof *lam), *mu = calloc((size_t)k + 1, sizeof *mu), *r = calloc((size_t)nr + 1, sizeof *r);
    double *se = calloc((size_t)me->nsym + 1, sizeof *se), *sn = calloc((size_t)mn->nsym + 1, sizeof *sn);
    size_t ws = me->work_size > mn->work_size ? me->work_size : mn->work_size;
    double *work = calloc(ws + 1, sizeof *work);
    double *Fe = calloc((size_t)me->nF + 1, sizeof *Fe), *Fn = calloc((size_t)mn->nF + 1, sizeof *Fn);
    double *Je = calloc((size_t)me->jac.nz + 1, sizeof *Je), *Jn = calloc((size_t)mn->jac.nz + 1, sizeof *Jn);
    unsigned seed = 12345;
    double worstF = 0, worstJ = 0, worstR = 0, *rowmax = calloc((size_t)me->nF + 1, sizeof *rowmax);
    for (int t = 0; t < npt; t++) {
        for (int i = 0; i < n; i++) {
            q[i] = me->q0[i] + (t ? 0.1 * test_urand(&seed) : 0);
            v[i] = t ? test_urand(&seed) : 0;
            a[i] = t ? 3 * test_urand(&seed) : 0;
        }
        for (int j = 0; j < m; j++) lam[j] = 10 * test_urand(&seed);
        for (int j = 0; j < nr; j++) r[j] = test_urand(&seed);
        model_fill_syms(me, 0.0, q, v, a, lam, mu, r, se);
        model_fill_syms(mn, 0.0, q, v, a, lam, mu, r, sn);
        mbl_status st;
        int rc = model_eval_F(me, se, Fe, work, &st);
        if (!rc) rc = model_eval_F(mn, sn, Fn, work, &st);
        if (!rc) rc = model_eval_jac(me, se, Je, work, &st);
        if (!rc) rc = model_eval_jac(mn, sn, Jn, work, &st);
        CHECK_MSG(rc == 0, "%s: %s", nm, rc ? st.msg : "");
        if (rc) break;
        for (int i = 0; i < me->nF; i++) {
            double d = fabs(Fe[i] - Fn[i]) / fmax(fmax(fabs(Fe[i]), fabs(Fn[i])), 1e-300);
            if (Fe[i] != Fn[i] && d > worstF) worstF = d;
        }
        /* each row's largest entry: the scale of a closed form that is a difference of terms */
        for (int i = 0; i < me->nF; i++) rowmax[i] = 0;
        for (int p = 0; p < me->jac.nz; p++)
            if (fabs(Je[p]) > rowmax[me->jac.row[p]]) rowmax[me->jac.row[p]] = fabs(Je[p]);
        for (int p = 0; p < me->jac.nz; p++) {
            if (map[p] < 0) continue;
            double x = Je[p], y = Jn[map[p]];
            double d = fabs(x - y) / fmax(fmax(fabs(x), fabs(y)), 1e-300), dr = fabs(x - y) / fmax(rowmax[me->jac.row[p]], 1e-300);
            if (dr > worstR) worstR = dr;
            if (x != y && d > worstJ) {
                worstJ = d;
                if (getenv("FFR_NUM_DEBUG"))
                    printf("    entry (%d, %d): %.17g %.17g\n", me->jac.row[p], me->jac.col[p], x, y);
            }
        }
    }
    printf("  %s: %d numeric bodies, %d Jacobian entries (%d by the tape), %d points: worst relative difference "
           "F %.2g, Jacobian %.2g of the entry, %.2g of the row's largest entry\n", nm, mn->nffrn, mn->jac.nz,
           mn->jac_ntape, npt, worstF, worstJ, worstR);
    /* an entry that is a difference of terms (2 P qf' - 2 th' y1, ...) loses digits to cancellation in
     * either form: relative to its row's largest entry 1e-13, relative to itself 1e-11 */
    CHECK_MSG(worstF <= 1e-13 && worstR <= 1e-13 && worstJ <= 1e-11, "%s: F %.3g, Jacobian %.3g (entry), %.3g (row)",
              nm, worstF, worstJ, worstR);
    free(rowmax);
    /* the second derivatives (sensitivities: the expression form built on demand) along random
     * directions and along each parameter, at the equilibrium with random velocities and accelerations */
    mbl_point *pt = NULL;
    mbl_dae_deriv *de = NULL, *dn = NULL;
    mbl_status st;
    int rc = mbl_operating_point(me, NULL, &pt, &st);
    if (!rc) rc = mbl_dae_deriv_new(me, &de, &st);
    if (!rc) rc = mbl_dae_deriv_new(mn, &dn, &st);
    CHECK_MSG(rc == 0, "%s: %s", nm, rc ? st.msg : "");
    int nunk = me->nunk;
    double *dx = calloc((size_t)nunk + 1, sizeof *dx), *dJe = calloc((size_t)me->jac.nz + 1, sizeof *dJe);
    double *dJn = calloc((size_t)mn->jac.nz + 1, sizeof *dJn), worstD = 0;
    for (int i = 0; !rc && i < n; i++) pt->v[i] = test_urand(&seed), pt->vdot[i] = test_urand(&seed);
    for (int w = -1; !rc && w < me->np; w++) {
        for (int c = 0; c < nunk; c++) dx[c] = w < 0 ? test_urand(&seed) : 0;
        rc = mbl_dae_deriv_jac_dir(de, pt, dx, w, dJe, &st);
        if (!rc) rc = mbl_dae_deriv_jac_dir(dn, pt, dx, w, dJn, &st);
        CHECK_MSG(rc == 0, "%s: %s", nm, rc ? st.msg : "");
        double big = 0;
        for (int p = 0; p < me->jac.nz; p++) big = fmax(big, fabs(dJe[p]));
        for (int p = 0; !rc && p < me->jac.nz; p++)
            if (map[p] >= 0) worstD = fmax(worstD, fabs(dJe[p] - dJn[map[p]]) / fmax(big, 1e-300));
    }
    printf("    second derivatives along %d directions: worst difference %.2g of the largest\n", me->np + 1, worstD);
    CHECK_MSG(worstD <= 1e-13, "%s: second derivatives differ by %.3g", nm, worstD);
    free(dx), free(dJe), free(dJn);
    mbl_dae_deriv_free(de), mbl_dae_deriv_free(dn);
    mbl_point_free(pt);
    free(map), free(q), free(v), free(a), free(lam), free(mu), free(r), free(se), free(sn), free(work);
    free(Fe), free(Fn), free(Je), free(Jn);
    mbl_model_free(me), mbl_model_free(mn);
}

TEST(beam_pendulum)
{
    int nb = 0;
    compare("examples/flexible_pendulum_beams.yaml", NULL, 6, &nb);
    CHECK_EQ_INT(nb, 2);
}

TEST(damped_beam_with_point_mass)
{
    int nb = 0;
    compare("tests/mech/damped_beam_tip.yaml", NULL, 6, &nb);
    CHECK_EQ_INT(nb, 1);
}

TEST(modal_pendulum)
{
    int nb = 0;
    compare("examples/flexible_pendulum_modal.yaml", NULL, 6, &nb);
    CHECK(nb >= 1);
}

/* issue 32, item 4: modal bodies with a geometric stiffness per unit load of every kind (Hy, Ha
 * besides H1, Hx; one body with only Hy and Ha) and at a marker */
TEST(modal_geometric)
{
    int nb = 0;
    compare("tests/model/modal_geo/pendulum.yaml", NULL, 6, &nb);
    CHECK_EQ_INT(nb, 2);
}

/* the generated code of a symbolic linear model (src/codegen/symlin.c builds the structured term's
 * expression form on demand) is the same text from both forms: two links of two beam elements */
static char *code_of(const char *text, int numeric)
{
    mbl_model *md = FIXTURE_LOAD_FORM(model_ffr_set_numeric, numeric, NULL, text, "damped-beam");
    mbl_point *pt = NULL;
    mbl_symlin *sl = NULL;
    mbl_status st;
    char *buf = NULL;
    size_t len = 0;
    int rc = md ? mbl_operating_point(md, NULL, &pt, &st) : -1;
    if (!rc) rc = mbl_symlin_new(md, pt, 0, &sl, &st);
    FILE *f = rc ? NULL : open_memstream(&buf, &len);
    if (f) rc = mbl_codegen(sl, MBL_LANG_C, "flex", "chain", f, &st), fclose(f);
    CHECK_MSG(rc == 0 && f, "codegen (numeric %d): %s", numeric, rc ? st.msg : "");
    mbl_symlin_free(sl), mbl_point_free(pt), mbl_model_free(md);
    return buf;
}

TEST(codegen_same_text)
{
    const char *text = "model: mechanism\nspace: planar\n"
                       "parameters: {l: 2, Ey: 2e9, rho: 1150, r: 0.02, g: 9.81}\n"
                       "ground:\n  markers:\n    o: {position: [0, 0]}\n"
                       "bodies:\n  link1:\n    type: beam\n    length: l\n    elements: 2\n    E: Ey\n    rho: rho\n"
                       "    radius: r\n    angle: -pi/2\n    markers:\n      a1: {node: 1}\n      b1: {s: l}\n"
                       "  link2:\n    type: beam\n    length: l\n    elements: 2\n    E: Ey\n    rho: rho\n"
                       "    radius: r\n    position: [0, -l]\n    angle: -pi/2\n    markers:\n      a2: {node: 1}\n"
                       "      b2: {s: l}\n"
                       "joints:\n  pin0: {type: revolute, i: a1, j: o}\n  pin1: {type: revolute, i: a2, j: b1}\n"
                       "forces:\n  weight: {type: gravity, g: [0, -g]}\n"
                       /* at the file's point: the equilibrium's elastic coordinates are 0 up to
                        * rounding, which differs between the forms' sums (3e-19) */
                       "linearize:\n  at: given\n";
    char *ce = code_of(text, 0), *cn = code_of(text, 1);
    CHECK(ce && cn && strlen(ce) > 1000);
    CHECK_MSG(ce && cn && !strcmp(ce, cn), "the generated code differs (%zu and %zu bytes)", ce ? strlen(ce) : 0,
              cn ? strlen(cn) : 0);
    free(ce), free(cn);
}

int main(void)
{
    RUN(beam_pendulum);
    RUN(damped_beam_with_point_mass);
    RUN(modal_pendulum);
    RUN(modal_geometric);
    RUN(codegen_same_text);
    return test_summary("ffr_num");
}
