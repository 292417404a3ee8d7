/* Warm-started equilibria along a sweep (opoint_warm.h): the exact tangent of the solved point
 * along the swept parameter, and Newton from the predicted point with the cold solver's test. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "opoint_solve.h"
#include "opoint_warm.h"

#define RB(g) (1u << (g))
/* the rows and unknowns of an equilibrium (as mbl_operating_point's, without ode states) */
#define WARM_ROWS (RB(MBL_ROW_EOM) | RB(MBL_ROW_ODE) | RB(MBL_ROW_VAR) | RB(MBL_ROW_PHI) | RB(MBL_ROW_NH))
#define WARM_COLS (RB(MBL_BLK_Q) | RB(MBL_BLK_LAMBDA) | RB(MBL_BLK_MU) | RB(MBL_BLK_X) | RB(MBL_BLK_Z))

struct opoint_warm {
    const mbl_model *md;
    mbl_opoint_options opt;
    const mbl_dae_deriv *dd;
    int param, np, nF, len; /* len = n + m + k */
    int max_steps;          /* full Newton steps at most (opoint_warm_set_max_steps) */
    opoint_subproblem sp;
    mbl_point *scratch;     /* sp's point until a point is solved */
    mbl_point *spare;       /* a point given back (opoint_warm_recycle), or NULL */
    int fresh;              /* the subproblem must be selected anew (a block's start) */
    double *Fp;             /* nF: dR/dp */
    model_dae_pcol *pcol;   /* dR/dp of the swept parameter alone */
    double *dx, *xs, *rowscale, *colscale;
    double *ref;            /* 2 len: the tangent's right-hand side and its refinement's scratch */
    double *tan1, *tan2;    /* per subproblem column: the block's last two tangents (ntan of them) */
    double p1, p2;          /* the swept parameter's values there */
    int ntan;
    long long fac_at;       /* cnt.factor when age was last set to 0 */
    int age;                /* tangents solved with the held factorization since it was made */
    int refresh;            /* the last chord step contracted less than OPOINT_WARM_HELD_CONTRACT: factor */
    int chord_tight;        /* a chord step since the factorization left a residual above
                             * OPOINT_WARM_CHORD_MARGIN abs_tol, or a point took other steps */
    double *F0;             /* per subproblem row: the residual at the predicted point (see opoint_warm_point) */
    opoint_warm_counts cnt;
    int *pos;               /* per subproblem column: its place in y = [q; lambda; mu] */
    int pos_ok;             /* every column has its place (pos[c] >= 0), set where pos is */
    const mbl_point *jac_of; /* the point sp->jac was last evaluated at by opoint_warm_point (or NULL) */
    int chord_ok;           /* sp->lu holds the factorization of the last tangent (J at the block's last point) */
    int held_ok;            /* sp->lu holds a factorization of J at a point of this block (the last
                             * tangent's, or a Newton step's since) the next tangent may solve with */
    double **xp;            /* per subproblem column: the unknown in the point being solved (xpc's) */
    double **xpc[2];        /* xp of the last two points solved (a sweep's block alternates between
                             * two: opoint_warm_recycle), for the points whose arrays are xpk's */
    double *xpk[2][3];      /* their q, lambda, mu */
    int xpn;                /* the slot the next point's places go to */
    mblx_tape *rows_tape;   /* the subproblem's rows alone (sp->rows_tape), or NULL */
    mblx_tape *fj_tape;     /* the Jacobian's entries and those rows (sp->fj_tape), or NULL */
    int rows_tried;         /* the subproblem selected (and rows_tape compiled or refused) once */
    int no_bound;           /* opoint_warm_set_bound(w, 0) */
    int no_fused;           /* opoint_warm_set_fused(w, 0): no fj_tape */
    int *lbe;               /* per subproblem row: a Jacobian entry of the row (its place in sp->jac),
                             * the one warm_rs_bound reads (warm_rs_pick) */
    int lbe_ok, lbe_picks;  /* lbe is set; picks made in the block */
};

void opoint_warm_free(opoint_warm *w)
{
    if (!w) return;
    opoint_sub_free(&w->sp);
    mblx_tape_free(w->rows_tape), mblx_tape_free(w->fj_tape);
    mbl_free(w->sp.rows_F), mbl_free(w->sp.rows_work), mbl_free(w->sp.fj_work);
    mbl_point_free(w->scratch), mbl_point_free(w->spare);
    mbl_free(w->pos), mbl_free(w->lbe), mbl_free(w->xpc[0]), mbl_free(w->xpc[1]);
    mbl_free(w->F0);
    model_dae_pcol_free(w->pcol);
    mbl_free(w->ref), mbl_free(w->tan1), mbl_free(w->tan2);
    mbl_free(w->Fp), mbl_free(w->dx), mbl_free(w->xs), mbl_free(w->rowscale), mbl_free(w->colscale);
    mbl_free(w);
}

int opoint_warm_new(const mbl_model *md, const mbl_opoint_options *opt, const mbl_dae_deriv *dd, int param,
                    opoint_warm **out, mbl_status *st)
{
    *out = NULL;
    mbl_dae_layout lay;
    mbl_dae_deriv_layout(dd, &lay);
    if (param < 0 || param >= lay.np) return mbl_error(st, MBL_EARG, "opoint_warm_new: no parameter %d", param);
    opoint_warm *w = mbl_calloc(1, sizeof *w);
    if (!w) return mbl_error(st, MBL_ENOMEM, "out of memory");
    w->md = md, w->dd = dd, w->param = param, w->np = lay.np, w->nF = lay.nF, w->fresh = 1;
    w->max_steps = OPOINT_WARM_MAX_STEPS;
    if (opt) w->opt = *opt;
    else mbl_opoint_options_default(&w->opt);
    w->opt.q = w->opt.lambda = w->opt.mu = NULL, w->opt.guess = NULL, w->opt.nguess = 0;
    w->len = lay.n + lay.m + lay.k;
    w->scratch = opoint_point_new(md);
    int rc = w->scratch ? opoint_sub_init(&w->sp, md, w->scratch, &w->opt) : MBL_ENOMEM;
    w->sp.rows_view_off = 1;
    size_t nunk = (size_t)lay.nunk + (size_t)w->len + 1;
    w->Fp = mbl_alloc_array((size_t)lay.nF + 1, sizeof *w->Fp);
    w->F0 = mbl_alloc_array((size_t)lay.nF + 1, sizeof *w->F0);
    w->pcol = model_dae_pcol_new(dd, param, st);
    w->dx = mbl_alloc_array(nunk, sizeof *w->dx);
    w->xs = mbl_alloc_array(nunk, sizeof *w->xs);
    w->ref = mbl_alloc_array(2 * nunk, sizeof *w->ref);
    w->tan1 = mbl_alloc_array(nunk, sizeof *w->tan1);
    w->tan2 = mbl_alloc_array(nunk, sizeof *w->tan2);
    w->rowscale = mbl_alloc_array((size_t)lay.nF + 1, sizeof *w->rowscale);
    w->colscale = mbl_alloc_array(nunk, sizeof *w->colscale);
    w->pos = mbl_alloc_array(nunk, sizeof *w->pos);
    w->xpc[0] = mbl_alloc_array(nunk, sizeof *w->xpc[0]);
    w->xpc[1] = mbl_alloc_array(nunk, sizeof *w->xpc[1]);
    w->lbe = mbl_alloc_array((size_t)lay.nF + 1, sizeof *w->lbe);
    if (rc || !w->pos || !w->xpc[0] || !w->xpc[1] || !w->lbe || !w->Fp || !w->F0 || !w->pcol || !w->dx || !w->xs || !w->ref || !w->tan1 ||
        !w->tan2 || !w->rowscale || !w->colscale) {
        opoint_warm_free(w);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    *out = w;
    return 0;
}

void opoint_warm_reset(opoint_warm *w)
{
    if (w) w->fresh = 1, w->chord_ok = w->held_ok = w->ntan = w->refresh = w->lbe_ok = w->lbe_picks = 0, w->jac_of = NULL;
}

/* The Jacobian's entries and the subproblem's rows in one tape (sp->fj_tape, opoint_eval_F_jac): at
 * every iterate after a step the warm corrector wants both (the residual for the test, the Jacobian
 * for the scaled residual, the next step, the tangent and the linear model), and the entries'
 * expressions share most of their subexpressions with the rows' (the sines and cosines of the
 * coordinates, the products of the masses): on the N = 20 four-bar one pass of 1761 instructions
 * instead of 704 + 1679. Only with the rows tape (no term evaluated numerically beside the tapes) and
 * the Jacobian's own expressions (not a forward-mode load's); the values are model_eval_jac's and
 * the rows tape's to rounding (scheduled together). Without it the two are evaluated apart. */
static void warm_fj_tape(opoint_warm *w)
{
    opoint_subproblem *sp = &w->sp;
    int nz = sp->mv.jac.nz, nrow = sp->nrow;
    if (nz < 1 || !sp->mv.jac.node || sp->mv.jac.node[0] == MBLX_NONE) return;
    mblx_id *out = mbl_alloc_array((size_t)nz + (size_t)nrow, sizeof *out);
    double *jac = mbl_alloc_array((size_t)nz + (size_t)nrow, sizeof *jac);
    mbl_status st;
    mbl_status_clear(&st);
    const mblx_id *F = NULL, *jn = NULL;
    model_graph_lock(w->md, 1); /* read while no other thread grows it */
    int rc = !out || !jac ? MBL_ENOMEM : model_dae_nodes(w->md, &F, &jn, &st);
    if (!rc && (jn != sp->mv.jac.node || !F)) rc = MBL_EARG; /* the expressions the Jacobian tape's */
    if (!rc) {
        memcpy(out, jn, (size_t)nz * sizeof *out);
        for (int i = 0; i < nrow; i++) out[nz + i] = F[sp->rows[i]];
        w->fj_tape = mblx_compile_bound(sp->mv.g, (size_t)nz + (size_t)nrow, out, model_graph_lock_cb, (void *)w->md, &st);
    }
    model_graph_lock(w->md, 0);
    mbl_free(out);
    if (w->fj_tape) sp->fj_work = mbl_alloc_array(mblx_tape_work_size(w->fj_tape) + 1, sizeof *sp->fj_work);
    if (!w->fj_tape || !sp->fj_work) {
        mblx_tape_free(w->fj_tape), mbl_free(sp->fj_work), mbl_free(jac);
        w->fj_tape = NULL, sp->fj_work = NULL;
        return;
    }
    /* sp->jac with room for the rows after the entries (its values kept) */
    memcpy(jac, sp->jac, (size_t)nz * sizeof *jac);
    mbl_free(sp->jac);
    sp->jac = jac;
    sp->fj_tape = w->fj_tape;
}

/* The residual's rows of the subproblem alone (the same selection at every block start): the
 * equilibrium's rows without the velocity and acceleration constraints' rows the whole residual
 * tape also computes (on the N = 20 four-bar 1102 of its 1806 instructions), the same expressions
 * (model_compile_F_rows: equal to rounding; on that model bit for bit). Without it (a numerically
 * evaluated term, out of memory) opoint_eval_F evaluates the whole residual, as before. */
static void warm_rows_tape(opoint_warm *w)
{
    opoint_subproblem *sp = &w->sp;
    w->rows_tried = 1;
    mbl_status st;
    mbl_status_clear(&st);
    w->rows_tape = model_compile_F_rows(w->md, sp->nrow, sp->rows, &st);
    if (!w->rows_tape) return;
    sp->rows_F = mbl_alloc_array((size_t)sp->nrow + 1, sizeof *sp->rows_F);
    sp->rows_work = mbl_alloc_array(mblx_tape_work_size(w->rows_tape) + 1, sizeof *sp->rows_work);
    if (sp->rows_F && sp->rows_work) {
        sp->rows_tape = w->rows_tape;
        if (!w->no_fused) warm_fj_tape(w);
        return;
    }
    mbl_free(sp->rows_F), mbl_free(sp->rows_work);
    sp->rows_F = sp->rows_work = NULL;
    mblx_tape_free(w->rows_tape);
    w->rows_tape = NULL;
}

/* The subproblem on pt: at a block's start as selected anew (a fresh factorization: selected the
 * first time, restarted later with its pattern and analysis kept, opoint_sub_restart); whether the
 * warm start applies to the model's point (square, without ode states). */
static int warm_select(opoint_warm *w, mbl_point *pt)
{
    opoint_subproblem *sp = &w->sp;
    sp->pt = pt;
    if (w->fresh && w->rows_tried) {
        opoint_sub_restart(sp); /* the same rows and columns again */
        w->fresh = 0;
    } else if (w->fresh) {
        opoint_sub_select(sp, WARM_ROWS, WARM_COLS, NULL);
        w->fresh = 0;
        warm_rows_tape(w);
        /* the subproblem's columns are in the unknowns' order [lambda mu q]; y is [q; lambda; mu] */
        const mbl_model *md = w->md;
        int q0 = model_blk0(md, MBL_BLK_Q), l0 = model_blk0(md, MBL_BLK_LAMBDA), m0 = model_blk0(md, MBL_BLK_MU);
        for (int c = 0; c < sp->ncol; c++) {
            int col = sp->cols[c];
            w->pos[c] = col >= q0 && col < q0 + pt->n ? col - q0
                        : col >= l0 && col < l0 + pt->m ? pt->n + col - l0
                        : col >= m0 && col < m0 + pt->k ? pt->n + pt->m + col - m0
                                                        : -1;
        }
        w->pos_ok = 1;
        for (int c = 0; c < sp->ncol; c++)
            if (w->pos[c] < 0) w->pos_ok = 0;
    }
    if (!w->pos_ok) return 0;
    return pt->at == MBL_AT_EQUILIBRIUM && pt->nX == 0 && pt->nZ == 0 && sp->nrow == sp->ncol && sp->ncol == w->len &&
           pt->rank_phi_q == pt->m + pt->k && !pt->min_norm_multipliers;
}

void opoint_warm_set_bound(opoint_warm *w, int on)
{
    if (w) w->no_bound = !on;
}

void opoint_warm_set_fused(opoint_warm *w, int on)
{
    if (w) w->no_fused = !on;
}

void opoint_warm_set_max_steps(opoint_warm *w, int max_steps)
{
    if (w) w->max_steps = max_steps > 0 ? max_steps : OPOINT_WARM_MAX_STEPS;
}

const double *opoint_warm_jac(const opoint_warm *w, const mbl_point *pt)
{
    return w && pt && w->jac_of == pt ? w->sp.jac : NULL;
}

const double *opoint_warm_jac_syms(const opoint_warm *w, const mbl_point *pt)
{
    return w && pt && w->jac_of == pt && w->sp.jac_ok ? w->sp.jac_syms : NULL;
}

void opoint_warm_recycle(opoint_warm *w, mbl_point *pt)
{
    const mbl_point *s = w ? w->scratch : NULL;
    if (!pt || !s || pt->n != s->n || pt->m != s->m || pt->k != s->k || pt->nr != s->nr || pt->nX != s->nX ||
        pt->nZ != s->nZ) {
        mbl_point_free(pt);
        return;
    }
    mbl_point_free(w->spare);
    w->spare = pt;
}

void opoint_warm_get_counts(const opoint_warm *w, opoint_warm_counts *c)
{
    if (w) *c = w->cnt;
    else memset(c, 0, sizeof *c);
}

/* Whether the factorization held is due for renewal at a point without a tangent (none held in the
 * block, OPOINT_WARM_SKIP_AGE points old, or a chord step since that contracted little) */
int opoint_warm_tangent_due(const opoint_warm *w)
{
    int age = w->cnt.factor != w->fac_at ? 0 : w->age; /* factored since: age 0 */
    int limit = w->chord_tight || w->cnt.factor != w->fac_at ? OPOINT_WARM_SKIP_AGE : OPOINT_WARM_SKIP_AGE_MAX;
    return !w->held_ok || age >= limit || w->refresh;
}

/* The start of a tangent and of a renewal at pt_in (read only: the subproblem's evaluations do not
 * write it): the subproblem selected there (*unselected = 1 and MBL_EARG, the scratch point
 * restored, when it cannot be) and J evaluated at it, unless it is still there from
 * opoint_warm_point: the evaluation's rc. */
static int warm_jac_at(opoint_warm *w, const mbl_point *pt_in, int *unselected, mbl_status *st)
{
    mbl_point *pt = (mbl_point *)pt_in;
    opoint_subproblem *sp = &w->sp;
    w->chord_ok = 0;
    *unselected = !warm_select(w, pt);
    if (*unselected) {
        sp->pt = w->scratch;
        return MBL_EARG;
    }
    int rc = 0;
    if (w->jac_of != pt_in) {
        model_fill_syms_pt(w->md, pt, sp->syms);
        rc = opoint_eval_jac(sp, st);
        w->cnt.jac++;
    }
    w->jac_of = NULL;
    return rc;
}

int opoint_warm_refresh(opoint_warm *w, const mbl_point *pt_in, mbl_status *st)
{
    opoint_subproblem *sp = &w->sp;
    int unselected, rc = warm_jac_at(w, pt_in, &unselected, st);
    if (unselected) return rc;
    if (!rc) { /* the Newton step's factorization (a zero right-hand side where it also solves) */
        for (int r = 0; r < sp->nrow; r++) sp->F[sp->rows[r]] = 0.0;
        rc = opoint_newton_factor(sp, w->dx, st);
        w->cnt.factor++;
        if (!rc && sp->rank_last != sp->ncol) rc = MBL_EARG;
    }
    w->age = 0, w->fac_at = w->cnt.factor, w->chord_tight = 0;
    w->chord_ok = w->held_ok = !rc;
    w->refresh = 0, w->ntan = 0;
    sp->pt = w->scratch;
    return rc;
}

int opoint_warm_adopt_tangent(opoint_warm *w, const mbl_point *pt_in, const double *dy_in, double *dy_out,
                              mbl_status *st)
{
    (void)st;
    opoint_subproblem *sp = &w->sp;
    w->chord_ok = w->held_ok = w->ntan = w->refresh = 0, w->jac_of = NULL;
    if (!warm_select(w, (mbl_point *)pt_in)) {
        sp->pt = w->scratch;
        return MBL_EARG;
    }
    sp->pt = w->scratch;
    for (int c = 0; c < sp->ncol; c++) w->tan1[c] = dy_in[w->pos[c]];
    memcpy(dy_out, dy_in, (size_t)w->len * sizeof *dy_out);
    w->p1 = mbl_model_param_value(w->md, w->param), w->ntan = 1;
    return 0;
}

void opoint_warm_skip_tangent(opoint_warm *w)
{
    if (w->cnt.factor != w->fac_at) w->age = 0, w->fac_at = w->cnt.factor, w->chord_tight = 0;
    /* the block's first point without a tangent: the chord steps so far started from the tangent's
     * quadratic (error O(h^3), a residual above the cubic's whatever J's age), the next from the cubic */
    if (w->ntan > 0) w->chord_tight = 0;
    w->age++;
    w->chord_ok = w->held_ok; /* the next point's chord step solves with the factorization held */
    w->ntan = 0, w->jac_of = NULL;
}

int opoint_warm_tangent(opoint_warm *w, const mbl_point *pt_in, double *dy, mbl_status *st)
{
    mbl_point *pt = (mbl_point *)pt_in; /* read only: the subproblem's evaluations do not write it */
    opoint_subproblem *sp = &w->sp;
    int unselected, rc = warm_jac_at(w, pt_in, &unselected, st);
    if (unselected) return rc;
    /* dR/dp alone (the parameter column, no second derivatives) */
    if (!rc) rc = model_dae_pcol_eval(w->pcol, pt, w->Fp, st);
    w->cnt.dfdp++;
    /* J dy = -dR/dp: by one refinement step with the factorization held (J at an earlier point of
     * the block, opoint_held_refine) from the line through the last two tangents, where its
     * correction is small (OPOINT_WARM_HELD_STEP); else (a block's first tangent, a held J
     * OPOINT_WARM_HELD_AGE tangents old, a larger correction) the Newton step's solve with dR/dp
     * in place of the residual: J factored here, and held from then on. */
    int held = -1;
    double p = mbl_model_param_value(w->md, w->param);
    int here = w->cnt.factor != w->fac_at; /* factored since the last tangent: by this point's Newton steps */
    if (here) w->age = 0, w->fac_at = w->cnt.factor, w->chord_tight = 0;
    if (!rc && w->held_ok && w->ntan >= 1 && w->age < OPOINT_WARM_HELD_AGE && !w->refresh) {
        double *b = w->ref + sp->ncol;
        for (int r = 0; r < sp->nrow; r++) b[r] = -w->Fp[sp->rows[r]];
        /* the unknowns' scales max(1, |y|) (the scaled residual's, opoint_scaled_residual) */
        for (int c = 0, n = pt->n, nm = pt->n + pt->m; c < sp->ncol; c++) {
            int i = w->pos[c];
            double y = i < n ? pt->q[i] : i < nm ? pt->lambda[i - n] : pt->mu[i - nm];
            w->colscale[c] = fabs(y) > 1 ? fabs(y) : 1;
        }
        /* from the line through the block's last two tangents (or the last one) at p */
        if (w->ntan >= 2 && w->p1 != w->p2) {
            double s = (p - w->p1) / (w->p1 - w->p2);
            for (int c = 0; c < sp->ncol; c++) w->dx[c] = w->tan1[c] + s * (w->tan1[c] - w->tan2[c]);
        } else {
            memcpy(w->dx, w->tan1, (size_t)sp->ncol * sizeof *w->dx);
        }
        held = opoint_held_refine(sp, b, w->dx, w->colscale, w->ref, OPOINT_WARM_HELD_STEP, st);
        /* with J factored at an iterate of this very point (a block start's full Newton steps, a
         * block-long step from the last tangent), a second step from the first one's result: its
         * correction is that of a nearly exact J, unless the first step was far off */
        if (held == MBL_ENOCONV && here)
            held = opoint_held_refine(sp, b, w->dx, w->colscale, w->ref, OPOINT_WARM_HELD_STEP, st);
        if (held == MBL_ENOMEM) rc = held;
        if (!held) w->cnt.held++, w->age++;
    }
    if (!rc && held) {
        for (int r = 0; r < sp->nrow; r++) sp->F[sp->rows[r]] = w->Fp[sp->rows[r]];
        rc = opoint_newton_step(sp, w->dx, st);
        w->cnt.factor++;
        if (!rc && sp->rank_last != sp->ncol) rc = MBL_EARG; /* rank deficient: no tangent */
    }
    /* dy in the point's order [q; lambda; mu]: the subproblem's columns are in that order */
    for (int c = 0; !rc && c < sp->ncol; c++) dy[w->pos[c]] = w->dx[c];
    w->chord_ok = w->held_ok = !rc; /* the next point's chord step solves with this factorization */
    w->refresh = 0;
    if (!rc) { /* this tangent, the next one's start */
        double *t = w->tan2;
        w->tan2 = w->tan1, w->tan1 = t;
        memcpy(w->tan1, w->dx, (size_t)sp->ncol * sizeof *w->tan1);
        w->p2 = w->p1, w->p1 = p, w->ntan = w->ntan < 2 ? w->ntan + 1 : 2;
    } else {
        w->ntan = 0;
    }
    sp->pt = w->scratch;
    return rc;
}

/* A lower bound of the predicted point's scaled residual (opoint_scaled_residual_at_step at w->xs
 * with the residual w->F0 there) from the row whose term is likely the largest: the row of the
 * largest |F0_r| / rowscale_r with the scales at the current iterate (w->rowscale, which
 * opoint_scaled_residual has just filled: the step's matrix and the unknowns differ from them by
 * the step); the bound holds whichever row is taken. */
static double warm_step_bound(const opoint_warm *w)
{
    const opoint_subproblem *sp = &w->sp;
    const double *F0 = w->F0, *rsc = w->rowscale;
    int best = -1;
    double bq = -1;
    for (int r = 0; r < sp->nrow; r++) {
        double q = rsc[r] > 0 ? fabs(F0[r]) / rsc[r] : 0.0;
        if (q > bq) bq = q, best = r;
    }
    return opoint_scaled_residual_at_step_row(sp, F0, w->xs, best);
}

/* Per row of the subproblem, its Jacobian entry of the largest magnitude at the current iterate (sp->jac
 * current, the entries by row assembled: sp->rptr), for warm_rs_bound: any entry of the row gives a
 * bound, the largest a close one while J changes little (the rest of the block). */
static void warm_rs_pick(opoint_warm *w)
{
    const opoint_subproblem *sp = &w->sp;
    w->lbe_ok = 0;
    w->lbe_picks++;
    if (!sp->rptr || !sp->rsrc) return;
    const int *rptr = sp->rptr, *rsrc = sp->rsrc;
    const double *jac = sp->jac;
    for (int r = 0; r < sp->nrow; r++) {
        int best = -1;
        double b = -1;
        for (int k = rptr[r]; k < rptr[r + 1]; k++) {
            double a = fabs(jac[rsrc[k]]);
            if (a > b) b = a, best = rsrc[k];
        }
        if (best < 0) return; /* a row without entries (or only NaN ones): no bound */
        w->lbe[r] = best;
    }
    w->lbe_ok = 1;
}

/* An upper bound of the scaled residual (opoint_scaled_residual) at the current iterate, sp->jac
 * current, from the max-norm residual finf and one entry a row (warm_rs_pick). The scaled residual is
 * max_r t_r, t_r = |F_r| / s_r or, where s_r is below its floor, |F_r|, with s_r = sum_c |J_rc|
 * scale_c and every scale_c >= 1: so s_r >= |J_re| =: l_r for any entry e of row r (the computed
 * sums of nonnegative terms too: rounding is monotone), and t_r <= |F_r| max(1, 1 / l_r) <=
 * finf max(1, 1 / min_r l_r). INFINITY where an entry read is not a number. */
static double warm_rs_bound(const opoint_warm *w, double finf)
{
    const double *jac = w->sp.jac;
    const int *e = w->lbe;
    double lb = 1.0;
    for (int r = 0, nrow = w->sp.nrow; r < nrow; r++) {
        double a = fabs(jac[e[r]]);
        if (a < lb) lb = a;
        else if (a != a) return INFINITY;
    }
    return lb >= 1.0 ? finf : finf / lb; /* lb = 0: INFINITY */
}

/* The scaled residual of the acceptance test at the current iterate, or (where the max-norm clause
 * holds and warm_rs_bound is within tol) its upper bound; the rows' entries picked where none are
 * (the block's first test) or where the bound missed a point the test accepts (once more a block) */
static double warm_test_rs(opoint_warm *w, double f2, double finf)
{
    const mbl_opoint_options *opt = &w->opt;
    double rb = finf <= opt->abs_tol && f2 == f2 && w->lbe_ok ? warm_rs_bound(w, finf) : INFINITY;
    if (rb <= opt->tol) {
        w->cnt.rs_bound++;
        return rb;
    }
    double rs = opoint_scaled_residual(&w->sp, w->xs, w->rowscale, w->colscale);
    if (!w->lbe_ok ? w->lbe_picks == 0 : rs <= opt->tol && finf <= opt->abs_tol && w->lbe_picks < 2) warm_rs_pick(w);
    return rs;
}

/* The unknowns' places in pt (per subproblem column; every column is one of [q; lambda; mu], at its
 * place pos in y: opoint_unknown_ptr's, without its walk over the blocks per column). They depend on
 * the point's three arrays alone: those of the last two points are kept (a sweep's block alternates
 * between two points, opoint_warm_recycle). */
static double **warm_places(opoint_warm *w, const mbl_point *pt)
{
    int s = pt->q == w->xpk[0][0] && pt->lambda == w->xpk[0][1] && pt->mu == w->xpk[0][2]   ? 0
            : pt->q == w->xpk[1][0] && pt->lambda == w->xpk[1][1] && pt->mu == w->xpk[1][2] ? 1
                                                                                            : -1;
    if (s < 0) {
        s = w->xpn, w->xpn = !w->xpn;
        double **x = w->xpc[s];
        for (int c = 0, n = pt->n, nm = pt->n + pt->m; c < w->sp.ncol; c++) {
            int i = w->pos[c];
            x[c] = i < n ? pt->q + i : i < nm ? pt->lambda + (i - n) : pt->mu + (i - nm);
        }
        w->xpk[s][0] = pt->q, w->xpk[s][1] = pt->lambda, w->xpk[s][2] = pt->mu;
    }
    return w->xpc[s];
}

/* The residual at the point being solved, and (jac: where the corrector will want it there) the
 * Jacobian with it from one tape where there is one (opoint_eval_F_jac) */
static int warm_eval(opoint_warm *w, int jac, double *f2, double *finf, mbl_status *st)
{
    if (jac && w->sp.fj_tape) return opoint_eval_F_jac(&w->sp, f2, finf, st);
    return opoint_eval_F(&w->sp, f2, finf, st);
}

/* The predicted point's unknowns back (xs) and its residual evaluated again: a chord step that did
 * not contract is forgotten and full Newton starts from the prediction. */
static int warm_restart(opoint_warm *w, double *f2, double *finf, mbl_status *st)
{
    opoint_subproblem *sp = &w->sp;
    for (int c = 0; c < sp->ncol; c++) *w->xp[c] = w->xs[c];
    w->cnt.chord_fallback++;
    w->cnt.F++;
    return warm_eval(w, 1, f2, finf, st);
}

int opoint_warm_point(opoint_warm *w, const mbl_point *tmpl, const double *y, int chord_ok, mbl_point **out,
                      int *steps, mbl_status *st)
{
    *out = NULL;
    *steps = 0;
    w->jac_of = NULL;
    /* the factorization held is that of the previous point's tangent (J at the block's last point) */
    int chord = w->chord_ok && chord_ok;
    w->chord_ok = 0;
    opoint_subproblem *sp = &w->sp;
    const mbl_opoint_options *opt = &w->opt;
    mbl_point *pt = w->spare;
    w->spare = NULL;
    if (pt) opoint_point_clear(pt); /* as opoint_point_new makes it */
    else if (!(pt = opoint_point_new(w->md))) return mbl_error(st, MBL_ENOMEM, "out of memory");
    /* the template's fields (time, inputs, zero velocities, sizes), the predicted unknowns */
    pt->at = tmpl->at, pt->t = tmpl->t;
    pt->rank_phi_q = tmpl->rank_phi_q, pt->min_norm_multipliers = tmpl->min_norm_multipliers;
    memcpy(pt->r, tmpl->r, (size_t)pt->nr * sizeof *pt->r);
    int rc = 0;
    if (!warm_select(w, pt)) rc = MBL_EARG;
    if (!rc) { /* the unknowns' places in the point (warm_places), the prediction there */
        double **xp = w->xp = warm_places(w, pt);
        for (int c = 0; c < sp->ncol; c++) *xp[c] = w->xs[c] = y[w->pos[c]];
        sp->xp = xp; /* the unknowns' places, for the scaled residual */
    }
    double f2, finf, rs = INFINITY, rs_prev = INFINITY;
    int it = 0, rounding = 0, lazy = 0, chord_last = 0, factored = 0;
    /* at the prediction the Jacobian is wanted unless the first step is a chord one */
    if (!rc) rc = warm_eval(w, !chord, &f2, &finf, st), w->cnt.F++;
    while (!rc) {
        int skip = it == 0 && !(finf <= opt->abs_tol);
        int use_chord = skip && chord; /* the first step a chord one: no Jacobian at the prediction */
        if (!use_chord) { /* evaluated with F where warm_eval could (then not again: opoint_jac) */
            rc = opoint_eval_jac(sp, st);
            w->cnt.jac++;
            if (rc) break;
        }
        if (skip) {
            /* the predicted point itself cannot pass the test below (no step taken: neither rounding
             * nor superlinear), so its scaled residual matters only to the superlinear test of the
             * next iterate (and to the chord step's contraction); computed there if asked, from the
             * step's matrix (still in the subproblem) and this residual (saved). A residual that is
             * not finite rejects the start as an infinite scaled residual would. */
            if (isnan(f2) || isinf(finf)) {
                rc = MBL_ENOCONV;
                break;
            }
            for (int r = 0; r < sp->nrow; r++) w->F0[r] = sp->F[sp->rows[r]];
        } else {
            /* where its bound is within tol the test accepts as with the scaled residual itself
             * (then not computed; the point's scaled_residual is the bound) */
            rs = warm_test_rs(w, f2, finf);
            w->cnt.scaled++;
            if (!isfinite(rs) && !chord_last) {
                rc = MBL_ENOCONV;
                break;
            }
            /* the cold solver's acceptance (opoint_newton), every step a full one (or the chord
             * step: the superlinear test then asks the same hundredfold decrease of a step that
             * converges linearly, with the contraction of the previous point's Jacobian) */
            int superlinear = 0, need_super = it > 0 && rs <= opt->tol && !(finf <= opt->abs_tol) && !rounding;
            /* the prediction's scaled residual only where it is read: the superlinear clause, or the
             * chord step's contraction of a point not accepted otherwise */
            int need_chord = chord_last && !(rs <= opt->tol && (finf <= opt->abs_tol || rounding));
            if (lazy && (need_super || need_chord)) {
                /* first a lower bound from one row (warm_step_bound): where rs is within the
                 * strictest of the tests below of it (OPOINT_WARM_HELD_CONTRACT, below
                 * OPOINT_WARM_CHORD_CONTRACT and the superlinear 1e-2), every test decides as with
                 * the prediction's scaled residual itself, which is then not computed */
                double lb = w->no_bound ? 0.0 : warm_step_bound(w);
                if (!w->no_bound && rs <= OPOINT_WARM_HELD_CONTRACT * lb) {
                    rs_prev = lb;
                    w->cnt.bound++;
                } else {
                    rs_prev = opoint_scaled_residual_at_step(sp, w->F0, w->xs, w->rowscale, w->colscale);
                    w->cnt.scaled++;
                }
                lazy = 0;
            }
            if (need_super) superlinear = rs <= 1e-2 * rs_prev;
            /* the chord step's contraction, where it is known: the held factorization is to be
             * renewed at the next tangent well before the chord stops being kept */
            if (chord_last && !lazy && !(rs <= OPOINT_WARM_HELD_CONTRACT * rs_prev)) w->refresh = 1;
            if (rs <= opt->tol && (finf <= opt->abs_tol || rounding || superlinear)) break;
            if (chord_last && !(rs <= OPOINT_WARM_CHORD_CONTRACT * rs_prev)) {
                /* the chord step did not contract (a far step: the previous point's Jacobian is no
                 * longer the prediction's): full Newton from the prediction, as without it */
                chord = chord_last = 0, it = 0, rounding = 0, lazy = 0, rs = rs_prev = INFINITY;
                rc = warm_restart(w, &f2, &finf, st);
                continue;
            }
        }
        /* a chord step kept (it contracted) does not count against the full steps */
        if (it >= w->max_steps + chord) {
            rc = MBL_ENOCONV;
            break;
        }
        if (use_chord) {
            rc = opoint_chord_step(sp, w->dx, st);
            w->cnt.chord++;
        } else {
            rc = opoint_newton_step(sp, w->dx, st);
            w->cnt.factor++;
            w->refresh = 0; /* the factorization held is this one now */
            if (!rc && sp->rank_last != sp->ncol) rc = MBL_ENOCONV; /* rank deficient: the cold solver decides */
            factored = !rc;
        }
        if (rc) break;
        chord_last = use_chord;
        it++;
        rounding = 1;
        for (int c = 0; c < sp->ncol; c++) {
            double *x = w->xp[c], x1 = *x + w->dx[c];
            if (fabs(w->dx[c]) > 16 * DBL_EPSILON * fabs(x1)) rounding = 0;
            *x = x1;
        }
        rs_prev = rs, lazy = skip;
        rc = warm_eval(w, 1, &f2, &finf, st);
        w->cnt.F++;
        if (rc && chord_last && rc != MBL_ENOMEM) {
            /* the chord step left the model's domain: full Newton from the prediction */
            chord = chord_last = 0, it = 0, rounding = 0, lazy = 0, rs = rs_prev = INFINITY;
            rc = warm_restart(w, &f2, &finf, st);
        }
    }
    if (!rc) {
        pt->iterations = it, pt->residual = finf, pt->scaled_residual = rs;
        rc = opoint_check_solved_syms(sp, st); /* the symbols the accepted point's (its F's) */
        if (!rc && !(pt->nX + pt->nZ > 0)) w->jac_of = pt; /* the check evaluated no Jacobian */
    }
    *steps = it;
    sp->pt = w->scratch, sp->xp = NULL;
    /* a full step's factorization (J at an iterate of this point) is held for the next tangent, also
     * where none was (a block's first point took its tangent from the chain: opoint_warm_adopt_tangent) */
    if (!rc && factored) w->held_ok = 1;
    /* the held factorization's renewal (opoint_warm_tangent_due): later while its chord steps pass the
     * max-norm clause with room to spare */
    if (!rc && !(chord_last && it == 1 && finf <= OPOINT_WARM_CHORD_MARGIN * opt->abs_tol)) w->chord_tight = 1;
    if (rc) {
        mbl_point_free(pt);
        return rc == MBL_ENOMEM ? rc : MBL_ENOCONV;
    }
    *out = pt;
    return 0;
}
