/* The residual's parameter derivatives alone (issue 34, item 2): mbl_dae_deriv_new_param compiles
 * dF/dp without the second derivatives, and mbl_dae_deriv_eval_param gives one total column. A
 * pendulum in Cartesian coordinates with a dependent parameter (its weight w = m g): the column of
 * g must carry dw/dg = m into the equation of motion in y. Checked against the residual itself
 * (mbl_dae_eval_residual) on the model loaded at g +- h and L +- h: F is linear in g and quadratic
 * in L, so the central difference is exact up to rounding. The column equals the full derivatives'
 * (mbl_dae_deriv_eval's Fp) bit for bit on the full set and to rounding on the parameters-only
 * one, and what a parameters-only object cannot give is refused. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/dae.h"
#include "mblin/mblin.h"
#include "mblin/sensitivity.h"
#include "model/model_view.h"
#include "fixture.h"
#include "test.h"

static const char *const PEND = "model: dae\n"
                                "name: Cartesian pendulum, dependent weight\n"
                                "parameters: {m: 2, L: 1.5, g: 9.81, w: \"m*g\"}\n"
                                "coordinates: {x: 0.3, y: -1.2}\n"
                                "kinetic_energy: \"0.5*m*(der(x)^2 + der(y)^2)\"\n"
                                "potential_energy: \"w*y\"\n"
                                "constraints: [\"x^2 + y^2 - L^2\"]\n"
                                "linearize: {at: equilibrium}\n";

static mbl_model *load(const char *name, double value)
{
    mbl_setting s = {name, value};
    mbl_model *md = NULL;
    mbl_status st;
    int rc = mbl_model_load_string(PEND, strlen(PEND), "pendulum.yaml", name ? &s : NULL, name ? 1 : 0, &md, &st);
    CHECK_MSG(rc == 0, "%s", st.msg);
    return md;
}

/* the residual of the model loaded with name = value at the unknowns x */
static void residual(const char *name, double value, const double *x, double *F, int nF)
{
    mbl_model *md = load(name, value);
    mbl_dae_eval *e = NULL;
    mbl_status st;
    memset(F, 0, (size_t)nF * sizeof *F);
    if (md && mbl_dae_eval_new(md, &e, &st) == 0) CHECK_MSG(mbl_dae_eval_residual(e, 0, x, F, &st) == 0, "%s", st.msg);
    mbl_dae_eval_free(e);
    mbl_model_free(md);
}

TEST(param_column)
{
    mbl_model *md = load(NULL, 0);
    mbl_point *pt = NULL;
    mbl_dae_deriv *dp = NULL, *dfull = NULL;
    mbl_status st;
    if (!md) return;
    mbl_opoint_options po;
    mbl_opoint_options_default(&po);
    int rc = mbl_operating_point(md, &po, &pt, &st);
    CHECK_MSG(rc == 0, "%s", st.msg);
    if (!rc) rc = mbl_dae_deriv_new_param(md, &dp, &st);
    if (!rc) rc = mbl_dae_deriv_new(md, &dfull, &st);
    CHECK_MSG(rc == 0, "%s", st.msg);
    if (rc) goto done;
    mbl_dae_layout lay;
    mbl_dae_deriv_layout(dp, &lay);
    int nF = lay.nF, np = lay.np;
    double *x = calloc((size_t)lay.nunk, sizeof *x), *fp = calloc((size_t)nF, sizeof *fp);
    double *Fp = calloc((size_t)nF * (size_t)np, sizeof *Fp), *Fa = calloc((size_t)nF, sizeof *Fa);
    double *Fb = calloc((size_t)nF, sizeof *Fb);
    /* the point's unknowns in the public layout (zero velocities and accelerations) */
    for (int i = 0; i < lay.n; i++) x[lay.col0[MBL_DAE_Q] + i] = pt->q[i];
    memcpy(x + lay.col0[1], pt->lambda, (size_t)lay.m * sizeof *x); /* the multipliers' block follows vdot */
    CHECK_MSG(mbl_dae_deriv_eval(dfull, pt, NULL, Fp, NULL, &st) == 0, "%s", st.msg);
    const char *names[] = {"g", "L", "m"};
    const double h[] = {0.5, 0.25, 0.5};
    for (int a = 0; a < 3; a++) {
        int p = fixture_param_index(md, names[a]);
        CHECK(p >= 0);
        if (p < 0) continue;
        /* on the full set: bit for bit the column of mbl_dae_deriv_eval's Fp */
        CHECK_MSG(mbl_dae_deriv_eval_param(dfull, pt, p, fp, &st) == 0, "%s", st.msg);
        CHECK_MSG(!memcmp(fp, Fp + (size_t)p * nF, (size_t)nF * sizeof *fp), "d/d%s differs from the full set", names[a]);
        /* on the parameters alone: the same to rounding (a tape of other outputs, scheduled anew) */
        CHECK_MSG(mbl_dae_deriv_eval_param(dp, pt, p, fp, &st) == 0, "%s", st.msg);
        for (int r = 0; r < nF; r++) CHECK_CLOSE(fp[r], Fp[r + (size_t)p * nF], 1e-15);
        /* the residual's central difference (exact: F linear in g, w and m, quadratic in L) */
        double p0 = mbl_model_param_value(md, p);
        residual(names[a], p0 + h[a], x, Fa, nF);
        residual(names[a], p0 - h[a], x, Fb, nF);
        for (int r = 0; r < nF; r++) CHECK_CLOSE(fp[r], (Fa[r] - Fb[r]) / (2 * h[a]), 1e-12);
    }
    /* the weight's chain: dF/dg is not zero (the equation of motion in y moves by m) */
    int pg = fixture_param_index(md, "g");
    if (pg >= 0 && !mbl_dae_deriv_eval_param(dp, pt, pg, fp, &st)) {
        double s = 0;
        for (int r = 0; r < nF; r++) s += fabs(fp[r]);
        CHECK_CLOSE(s, 2.0, 1e-14); /* |dF_y/dg| = m = 2, every other row 0 */
    }
    /* what the parameters-only object does not hold is refused */
    double *big = calloc((size_t)lay.nunk * (size_t)np + (size_t)lay.jnz + 1, sizeof *big);
    CHECK_EQ_INT(mbl_dae_deriv_eval(dp, pt, NULL, NULL, big, &st), MBL_EARG);
    CHECK_EQ_INT(mbl_dae_deriv_jac_dir(dp, pt, x, 0, big, &st), MBL_EARG);
    CHECK_EQ_INT(mbl_dae_deriv_eval_param(dp, pt, np, fp, &st), MBL_EARG);
    free(big), free(x), free(fp), free(Fp), free(Fa), free(Fb);
done:
    mbl_dae_deriv_free(dp), mbl_dae_deriv_free(dfull);
    mbl_point_free(pt);
    mbl_model_free(md);
}

/* A sweep's warm corrector's evaluations (src/opoint/warm.c): one parameter's dR/dp column from a
 * tape of its own entries (model_dae_pcol: the weight's chain w = m g included in g's), and the
 * residual's equilibrium rows from a tape of those rows alone (model_compile_F_rows): each equal
 * to the whole tape's values to rounding, and the column to the residual's exact central
 * difference. */
TEST(warm_tapes)
{
    mbl_model *md = load(NULL, 0);
    mbl_point *pt = NULL;
    mbl_dae_deriv *dp = NULL;
    mbl_status st;
    if (!md) return;
    int rc = mbl_operating_point(md, NULL, &pt, &st);
    if (!rc) rc = mbl_dae_deriv_new_param(md, &dp, &st);
    CHECK_MSG(rc == 0, "%s", st.msg);
    if (rc) goto done;
    mbl_dae_layout lay;
    mbl_dae_deriv_layout(dp, &lay);
    int nF = lay.nF;
    double *fp = calloc((size_t)nF, sizeof *fp), *fc = calloc((size_t)nF, sizeof *fc);
    double *x = calloc((size_t)lay.nunk, sizeof *x), *Fa = calloc((size_t)nF, sizeof *Fa);
    double *Fb = calloc((size_t)nF, sizeof *Fb);
    for (int i = 0; i < lay.n; i++) x[lay.col0[MBL_DAE_Q] + i] = pt->q[i];
    memcpy(x + lay.col0[1], pt->lambda, (size_t)lay.m * sizeof *x);
    const char *names[] = {"g", "L", "m"};
    const double h[] = {0.5, 0.25, 0.5};
    for (int a = 0; a < 3; a++) {
        int p = fixture_param_index(md, names[a]);
        model_dae_pcol *c = p >= 0 ? model_dae_pcol_new(dp, p, &st) : NULL;
        CHECK_MSG(c != NULL, "%s", st.msg);
        if (!c) continue;
        CHECK_MSG(mbl_dae_deriv_eval_param(dp, pt, p, fp, &st) == 0, "%s", st.msg);
        CHECK_MSG(model_dae_pcol_eval(c, pt, fc, &st) == 0, "%s", st.msg);
        double s = 0;
        for (int r = 0; r < nF; r++) {
            CHECK_CLOSE(fc[r], fp[r], 1e-15);
            s += fabs(fc[r]);
        }
        CHECK(s > 0); /* g's column through w = m g: |dF_y/dg| = m */
        double p0 = mbl_model_param_value(md, p);
        residual(names[a], p0 + h[a], x, Fa, nF);
        residual(names[a], p0 - h[a], x, Fb, nF);
        for (int r = 0; r < nF; r++) CHECK_CLOSE(fc[r], (Fa[r] - Fb[r]) / (2 * h[a]), 1e-12);
        model_dae_pcol_free(c);
    }
    /* the equilibrium's rows (equations of motion, constraints) in the warm corrector's order */
    int rows[64], nrow = 0;
    for (int r = lay.row0[0]; r < lay.row0[1]; r++) rows[nrow++] = r;
    for (int r = lay.row0[MBL_DAE_PHI]; r < lay.row0[MBL_DAE_PHI + 1]; r++) rows[nrow++] = r;
    mblx_tape *t = model_compile_F_rows(md, nrow, rows, &st);
    CHECK_MSG(t != NULL, "%s", st.msg);
    model_view mv;
    model_view_get(md, &mv);
    double *syms = calloc((size_t)mv.nsym + 1, sizeof *syms), *work = calloc(mv.work_size + 1, sizeof *work);
    double *F = calloc((size_t)nF, sizeof *F), *Fr = calloc((size_t)nrow + 1, sizeof *Fr);
    double *tw = t ? calloc(mblx_tape_work_size(t) + 1, sizeof *tw) : NULL;
    pt->q[0] += 0.125, pt->lambda[0] *= 1.5; /* away from the solution: rows that are not zero */
    model_fill_syms_pt(md, pt, syms);
    CHECK_MSG(model_eval_F(md, syms, F, work, &st) == 0, "%s", st.msg);
    if (t) CHECK_MSG(mblx_tape_eval(t, syms, Fr, tw, &st) == 0, "%s", st.msg);
    for (int i = 0; t && i < nrow; i++) CHECK_CLOSE(Fr[i], F[rows[i]], 1e-15);
    CHECK(fabs(F[rows[0]]) + fabs(F[rows[nrow - 1]]) > 1e-3);
    rows[0] = nF; /* not a row */
    CHECK(model_compile_F_rows(md, nrow, rows, &st) == NULL);
    mblx_tape_free(t);
    free(syms), free(work), free(F), free(Fr), free(tw);
    free(fp), free(fc), free(x), free(Fa), free(Fb);
done:
    mbl_dae_deriv_free(dp);
    mbl_point_free(pt);
    mbl_model_free(md);
}

int main(void)
{
    RUN(param_column);
    RUN(warm_tapes);
    return test_summary("dae_param");
}
