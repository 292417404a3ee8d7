/* Planar rigid bodies and revolute joints evaluated numerically (src/model/terms/pmech_num.c) against the
 * text path (the mechanism compiler's kinetic energy, weight and constraint texts, differentiated by
 * the engine): the same models loaded both ways (model_pmech_set_numeric), the residual rows and every
 * Jacobian entry at random points (velocities, accelerations and multipliers nonzero) equal to
 * rounding; the expression form built on demand (model_dae_nodes) equal to the numeric values;
 * the eigenvalues equal; the second derivatives of the sensitivities (along random directions and
 * along every parameter) equal; and the graph no longer grows with the bodies and joints. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/model.h"
#include "mblin/sensitivity.h"
#include "model/eval_rows.h"
#include "model/model_internal.h"
#include "model/pmech_num.h"
#include "test.h"
#include "fixture.h"

/* dense (row, column) -> index in md's jac, -1 where absent */
static int *jac_map(const mbl_model *md)
{
    int *m = malloc(((size_t)md->nF * md->nunk + 1) * sizeof *m);
    for (size_t i = 0; i < (size_t)md->nF * md->nunk; i++) m[i] = -1;
    for (int p = 0; p < md->jac.nz; p++) m[(size_t)md->jac.row[p] * md->nunk + md->jac.col[p]] = p;
    return m;
}

/* tape of the expression form (rows then entries) */
static mblx_tape *expr_tape(const mbl_model *md)
{
    const mblx_id *F, *J;
    mbl_status st;
    model_graph_lock(md, 1);
    int rc = model_dae_nodes(md, &F, &J, &st);
    mblx_tape *t = NULL;
    if (!rc) {
        mblx_id *all = malloc(((size_t)md->nF + md->jac.nz + 1) * sizeof *all);
        memcpy(all, F, (size_t)md->nF * sizeof *all);
        memcpy(all + md->nF, J, (size_t)md->jac.nz * sizeof *all);
        t = mblx_compile(md->g, (size_t)md->nF + md->jac.nz, all, &st);
        free(all);
    }
    model_graph_lock(md, 0);
    CHECK_MSG(t != NULL, "expression form: %s", st.msg);
    return t;
}

static double rel(double x, double y, double scale)
{
    return x == y ? 0 : fabs(x - y) / fmax(fmax(fabs(x), fabs(y)), fmax(scale, 1e-300));
}

/* The operating point's selection (model_eval_F_sel, model_eval_jac_sel: the rows of the equations
 * of motion and of Phi, the entries in the coordinates' and multipliers' columns, and every row and
 * column) against the whole evaluation's values F, J at the symbols s: bit for bit. 1 if they agree. */
static int selection_agrees(const mbl_model *md, const double *s, const double *F, const double *J, double *work)
{
    const unsigned rows[2] = {(1u << MBL_ROW_EOM) | (1u << MBL_ROW_PHI), ~0u};
    const unsigned cols[2] = {(1u << MBL_BLK_Q) | (1u << MBL_BLK_LAMBDA), ~0u};
    double *Fs = malloc(((size_t)md->nF + 1) * sizeof *Fs), *Js = malloc(((size_t)md->jac.nz + 1) * sizeof *Js);
    int ok = 1;
    for (int k = 0; k < 2 && ok; k++) {
        mbl_status st;
        for (int i = 0; i < md->nF; i++) Fs[i] = NAN;
        for (int p = 0; p < md->jac.nz; p++) Js[p] = NAN;
        ok = !model_eval_F_sel(md, rows[k], s, Fs, work, &st) &&
             !model_eval_jac_sel(md, rows[k], cols[k], s, Js, work, &st);
        for (int g = 0; ok && g < MBL_NROWG; g++)
            for (int i = md->row0[g]; ok && (rows[k] >> g) & 1u && i < md->row0[g + 1]; i++)
                ok = !memcmp(&Fs[i], &F[i], sizeof *F);
        for (int p = 0; ok && p < md->jac.nz; p++) {
            int g = 0, c = md->jac.col[p];
            while (md->jac.row[p] >= md->row0[g + 1]) g++;
            int b = 0;
            while (c >= model_blk0(md, b + 1)) b++;
            if ((rows[k] >> g) & 1u && (cols[k] >> b) & 1u) ok = !memcmp(&Js[p], &J[p], sizeof *J);
        }
    }
    free(Fs), free(Js);
    return ok;
}

/* the two forms of one model: *nb, *nj the numeric term's size */
static void compare(const char *path, const char *text, int npt, int want_numeric)
{
    mbl_model *me = FIXTURE_LOAD_FORM(model_pmech_set_numeric, 0, path, text, "pmech-test");
    mbl_model *mn = FIXTURE_LOAD_FORM(model_pmech_set_numeric, 1, path, text, "pmech-test");
    const char *nm = path ? path : "model text";
    if (!me || !mn) {
        mbl_model_free(me), mbl_model_free(mn);
        return;
    }
    CHECK_MSG(me->pmn == NULL, "%s: the text path has a numeric term", nm);
    CHECK_MSG((mn->pmn != NULL) == want_numeric, "%s: numeric term %s", nm, mn->pmn ? "present" : "absent");
    CHECK_EQ_INT(me->nF, mn->nF);
    CHECK_EQ_INT(me->nunk, mn->nunk);
    for (int j = 0; j < me->m && j < mn->m; j++)
        CHECK_MSG(!strcmp(me->cname[j], mn->cname[j]), "%s: constraint %d '%s' / '%s'", nm, j, me->cname[j], mn->cname[j]);
    int n = me->n, m = me->m, nr = me->nr, nF = me->nF, nu = me->nunk;
    int *mape = jac_map(me), *mapn = jac_map(mn);
    mblx_tape *tx = mn->pmn ? expr_tape(mn) : NULL;
    size_t ws = me->work_size > mn->work_size ? me->work_size : mn->work_size;
    if (tx && mblx_tape_work_size(tx) > ws) ws = mblx_tape_work_size(tx);
    double *q = calloc((size_t)n + 1, sizeof *q), *v = calloc((size_t)n + 1, sizeof *v), *a = calloc((size_t)n + 1, sizeof *a);
    double *lam = calloc((size_t)m + 1, sizeof *lam), *mu = calloc(1, sizeof *mu), *r = calloc((size_t)nr + 1, sizeof *r);
    double *se = calloc((size_t)me->nsym + 1, sizeof *se), *sn = calloc((size_t)mn->nsym + 1, sizeof *sn);
    double *work = calloc(ws + 1, sizeof *work);
    double *Fe = calloc((size_t)nF + 1, sizeof *Fe), *Fn = calloc((size_t)nF + 1, sizeof *Fn);
    double *Je = calloc((size_t)me->jac.nz + 1, sizeof *Je), *Jn = calloc((size_t)mn->jac.nz + 1, sizeof *Jn);
    double *X = calloc((size_t)nF + mn->jac.nz + 1, sizeof *X), *rowmax = calloc((size_t)nF + 1, sizeof *rowmax);
    unsigned seed = 4242;
    double wF = 0, wJ = 0, wX = 0;
    int absent = 0;
    for (int t = 0; t < npt; t++) {
        for (int i = 0; i < n; i++) {
            q[i] = me->q0[i] + 0.3 * test_urand(&seed);
            v[i] = test_urand(&seed);
            a[i] = 3 * test_urand(&seed);
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
        if (!rc && tx) rc = mblx_tape_eval(tx, sn, X, work, &st);
        CHECK_MSG(rc == 0, "%s: %s", nm, rc ? st.msg : "");
        if (rc) break;
        CHECK_MSG(model_eval_sel_ok(mn) == (mn->pmn != NULL) && !model_eval_sel_ok(me), "%s: model_eval_sel_ok", nm);
        if (mn->pmn) CHECK_MSG(selection_agrees(mn, sn, Fn, Jn, work), "%s: the selected rows' values differ", nm);
        /* scale of a row: its largest Jacobian entry times the largest unknown (|a| <= 3, |lambda| <= 10) */
        for (int i = 0; i < nF; i++) rowmax[i] = 0;
        for (int p = 0; p < me->jac.nz; p++) rowmax[me->jac.row[p]] = fmax(rowmax[me->jac.row[p]], fabs(Je[p]));
        for (int i = 0; i < nF; i++) {
            wF = fmax(wF, rel(Fe[i], Fn[i], 10 * rowmax[i] * 1e-3));
            if (tx) wX = fmax(wX, rel(X[i], Fn[i], 10 * rowmax[i] * 1e-3));
        }
        /* every (row, column) of either pattern; an entry only one pattern has must be 0 in the other */
        for (size_t rc2 = 0; rc2 < (size_t)nF * nu; rc2++) {
            int pe = mape[rc2], pn = mapn[rc2];
            if (pe < 0 && pn < 0) continue;
            double x = pe >= 0 ? Je[pe] : 0, y = pn >= 0 ? Jn[pn] : 0, sc = rowmax[rc2 / nu] * 1e-3;
            if (pe < 0 || pn < 0) absent++;
            wJ = fmax(wJ, rel(x, y, sc));
            if (tx && pn >= 0) wX = fmax(wX, rel(X[nF + pn], y, sc));
        }
    }
    printf("  %s: %d numeric entries; %d entries (text path %d, %d by the tape), %d points: worst relative "
           "difference F %.2g, Jacobian %.2g, expression form %.2g (entries in one pattern only: %d)\n",
           nm, model_pmech_num_entries(mn->pmn), mn->jac.nz, me->jac.nz, mn->jac_ntape, npt, wF, wJ, wX, absent / (npt ? npt : 1));
    /* relative to the entry, or to 1e-3 of its row's largest (a sum of terms that cancel to nearly 0
     * at a random point keeps the rounding of its terms in either form) */
    CHECK_MSG(wF <= 1e-13 && wJ <= 1e-13 && wX <= 1e-13, "%s: F %.3g, Jacobian %.3g, expression form %.3g", nm, wF,
              wJ, wX);

    /* eigenvalues at the operating point */
    mbl_point *pe_ = NULL, *pn_ = NULL;
    mbl_linear *le = NULL, *ln = NULL;
    mbl_modes *oe = NULL, *on = NULL;
    mbl_status st;
    int rc = mbl_operating_point(me, NULL, &pe_, &st);
    if (!rc) rc = mbl_operating_point(mn, NULL, &pn_, &st);
    if (!rc) rc = mbl_linearize(me, pe_, NULL, &le, &st);
    if (!rc) rc = mbl_linearize(mn, pn_, NULL, &ln, &st);
    if (!rc) rc = mbl_modal(le, NULL, &oe, &st);
    if (!rc) rc = mbl_modal(ln, NULL, &on, &st);
    CHECK_MSG(rc == 0, "%s: %s", nm, rc ? st.msg : "");
    if (!rc) {
        CHECK_EQ_INT(oe->nx, on->nx);
        double big = 0, wE = 0;
        for (int i = 0; i < oe->nx; i++) big = fmax(big, hypot(oe->modes[i].re, oe->modes[i].im));
        for (int i = 0; i < oe->nx && i < on->nx; i++)
            wE = fmax(wE, hypot(oe->modes[i].re - on->modes[i].re, oe->modes[i].im - on->modes[i].im) / fmax(big, 1e-300));
        printf("    %d eigenvalues: worst difference %.2g of the largest\n", oe->nx, wE);
        CHECK_MSG(wE <= 1e-12, "%s: eigenvalues differ by %.3g", nm, wE);
    }
    /* second derivatives (sensitivities: the expression form) along random directions and every parameter */
    mbl_dae_deriv *de = NULL, *dn = NULL;
    if (!rc) rc = mbl_dae_deriv_new(me, &de, &st);
    if (!rc) rc = mbl_dae_deriv_new(mn, &dn, &st);
    CHECK_MSG(rc == 0, "%s: %s", nm, rc ? st.msg : "");
    double *dx = calloc((size_t)nu + 1, sizeof *dx), *dJe = calloc((size_t)me->jac.nz + 1, sizeof *dJe);
    double *dJn = calloc((size_t)mn->jac.nz + 1, sizeof *dJn), wD = 0;
    for (int i = 0; !rc && i < n; i++) pn_->v[i] = pe_->v[i] = test_urand(&seed), pn_->vdot[i] = pe_->vdot[i] = test_urand(&seed);
    for (int j = 0; !rc && j < m; j++) pn_->lambda[j] = pe_->lambda[j];
    for (int w = -1; !rc && w < me->np; w++) {
        for (int c = 0; c < nu; c++) dx[c] = w < 0 ? test_urand(&seed) : 0;
        rc = mbl_dae_deriv_jac_dir(de, pe_, dx, w, dJe, &st);
        if (!rc) rc = mbl_dae_deriv_jac_dir(dn, pe_, dx, w, dJn, &st);
        CHECK_MSG(rc == 0, "%s: %s", nm, rc ? st.msg : "");
        double big = 0;
        for (int p = 0; p < me->jac.nz; p++) big = fmax(big, fabs(dJe[p]));
        for (size_t rc2 = 0; !rc && rc2 < (size_t)nF * nu; rc2++) {
            int p1 = mape[rc2], p2 = mapn[rc2];
            if (p1 < 0 && p2 < 0) continue;
            double x = p1 >= 0 ? dJe[p1] : 0, y = p2 >= 0 ? dJn[p2] : 0;
            wD = fmax(wD, fabs(x - y) / fmax(big, 1e-300));
        }
    }
    printf("    second derivatives along %d directions: worst difference %.2g of the largest\n", me->np + 1, wD);
    CHECK_MSG(wD <= 1e-13, "%s: second derivatives differ by %.3g", nm, wD);
    free(dx), free(dJe), free(dJn);
    mbl_dae_deriv_free(de), mbl_dae_deriv_free(dn);
    mbl_modes_free(oe), mbl_modes_free(on);
    mbl_linear_free(le), mbl_linear_free(ln);
    mbl_point_free(pe_), mbl_point_free(pn_);
    mblx_tape_free(tx);
    free(mape), free(mapn), free(q), free(v), free(a), free(lam), free(mu), free(r), free(se), free(sn), free(work);
    free(Fe), free(Fn), free(Je), free(Jn), free(X), free(rowmax);
    mbl_model_free(me), mbl_model_free(mn);
}

TEST(fourbars)
{
    static const char *f[] = {"examples/mech/fourbar_N1.yaml",  "examples/mech/fourbar_N1_damped.yaml",
                              "examples/mech/fourbar_N5.yaml",  "examples/mech/fourbar_N5_damped.yaml",
                              "examples/mech/fourbar_N10.yaml", "examples/mech/fourbar_N10_damped.yaml",
                              "examples/mech/fourbar_N15.yaml", "examples/mech/fourbar_N15_damped.yaml",
                              "examples/mech/fourbar_N20.yaml", "examples/mech/fourbar_N20_damped.yaml"};
    for (size_t i = 0; i < sizeof f / sizeof *f; i++) compare(f[i], NULL, 3, 1);
}

TEST(slider_pendulum)
{
    compare("examples/mech/slider_pendulum.yaml", NULL, 4, 1);
}

/* flexible bodies: the joints to beam markers stay texts, the rigid tip body is numeric or not */
TEST(flexible_examples)
{
    compare("examples/flexible_pendulum_modal.yaml", NULL, 2, 0);
    compare("tests/mech/damped_beam_tip.yaml", NULL, 2, 0);
}

/* centres of mass off the body origin, turned markers, a ground marker off the origin, parameter
 * expressions in masses, inertias, positions and gravity (both components), springs to the ground
 * and between bodies (damped, preloaded), fixed and orientation joints with turned markers, and
 * beside the numeric term texts on the same bodies: a torsion spring, a point mass on a revolute
 * joint, a prismatic joint: every slot of the term */
TEST(offsets_and_parameters)
{
    const char *text = "model: mechanism\nspace: planar\n"
                       "parameters: {m1: 2, m2: 1.5, l: 1.2, a: 0.3, g: 9.81, gx: 0.7, k: 40}\n"
                       "ground:\n  markers:\n    o: {position: [0.4, -a]}\n"
                       "bodies:\n"
                       "  b1:\n    mass: m1\n    inertia: m1*l^2/10\n    cm: [a, -a/2]\n    position: [0.1, -0.5]\n"
                       "    angle: -1.2\n    markers:\n      p1: {position: [-l/2, 0.1], angle: 0.4}\n"
                       "      q1: {position: [l/2, 0]}\n"
                       "  b2:\n    mass: m2\n    inertia: 0.2\n    cm: [0, a]\n    position: [0.6, -1.4]\n"
                       "    angle: 0.3\n    markers:\n      p2: {position: [0, l/3]}\n      q2: {}\n"
                       "  free:\n    mass: 1\n    inertia: 0.1\n    position: [3, 0]\n"
                       "    markers:\n      f1: {position: [0.2, 0]}\n      f2: {}\n"
                       "  glued:\n    mass: 0.3\n    inertia: 0.05\n    cm: [0.1, 0]\n    position: [0.6, -1.0]\n"
                       "    angle: 0.5\n    markers:\n      g1: {position: [0, -0.4+a], angle: -0.2}\n"
                       "  turn:\n    mass: 0.7\n    inertia: 0.02\n    position: [2, 1]\n    angle: 0.25\n"
                       "    markers:\n      h1: {angle: a - 0.05}\n      h2: {position: [0.3, 0.1]}\n"
                       "  pm:\n    type: point\n    mass: 0.5\n    position: [0.6, -1.4]\n    markers:\n      m1: {}\n"
                       "joints:\n  j0: {type: revolute, i: p1, j: o}\n  j1: {type: revolute, i: p2, j: q1}\n"
                       "  j2: {type: revolute, i: m1, j: q2}\n  j3: {type: prismatic, i: f2, j: o}\n"
                       "  j4: {type: fixed, i: g1, j: p2}\n  j5: {type: orientation, i: h1, j: o}\n"
                       "forces:\n  weight: {type: gravity, g: [gx, -g]}\n"
                       "  tor: {type: torsion, i: q2, j: o, stiffness: k}\n"
                       "  sp: {type: spring, i: f1, j: o, stiffness: k, length: 2}\n"
                       "  sp2: {type: spring, i: f1, j: q2, stiffness: k, length: 2}\n"
                       "  sp3: {type: spring, i: h2, j: o, stiffness: k, damping: 0.4, length: 1, preload: 0.3}\n"
                       "outputs: {rx: \"FX(j0)\", ry: \"FY(j1, q2)\"}\n";
    compare(NULL, text, 5, 1);
}

/* the graph of the numeric form does not grow with the bodies and joints as the text path's does
 * (per added loop of the N-loop four-bar: nodes of the graph and instructions of the tapes) */
TEST(growth)
{
    const char *f5 = "examples/mech/fourbar_N5.yaml", *f20 = "examples/mech/fourbar_N20.yaml";
    mbl_model *e5 = FIXTURE_LOAD_FORM(model_pmech_set_numeric, 0, f5, NULL, NULL);
    mbl_model *e20 = FIXTURE_LOAD_FORM(model_pmech_set_numeric, 0, f20, NULL, NULL);
    mbl_model *n5 = FIXTURE_LOAD_FORM(model_pmech_set_numeric, 1, f5, NULL, NULL);
    mbl_model *n20 = FIXTURE_LOAD_FORM(model_pmech_set_numeric, 1, f20, NULL, NULL);
    if (e5 && e20 && n5 && n20) {
        double ge = (double)(mblx_node_count(e20->g) - mblx_node_count(e5->g)) / 15;
        double gn = (double)(mblx_node_count(n20->g) - mblx_node_count(n5->g)) / 15;
        double te = (double)(mblx_tape_ninstr(e20->tape_jac) - mblx_tape_ninstr(e5->tape_jac)) / 15;
        double tn = (double)(mblx_tape_ninstr(n20->tape_jac) - mblx_tape_ninstr(n5->tape_jac)) / 15;
        printf("  per loop: graph nodes %.0f (text path %.0f), Jacobian tape instructions %.0f (text path %.0f)\n", gn,
               ge, tn, te);
        /* today 47 against 334 nodes (what is left per loop: the markers' position variables and
         * the drawing, parsed, never differentiated) and 0 against 230 instructions */
        CHECK_MSG(gn < 0.25 * ge, "graph nodes per loop %.0f, text path %.0f", gn, ge);
        CHECK_MSG(tn <= 0.05 * te, "Jacobian tape per loop %.0f, text path %.0f", tn, te);
    }
    mbl_model_free(e5), mbl_model_free(e20), mbl_model_free(n5), mbl_model_free(n20);
}

int main(void)
{
    RUN(fourbars);
    RUN(slider_pendulum);
    RUN(flexible_examples);
    RUN(offsets_and_parameters);
    RUN(growth);
    return test_summary("pmech_num");
}
