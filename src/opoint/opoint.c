/* Operating points: equilibrium, a given point made consistent, steady motion.
 *
 * The subproblems (which residual rows, which unknowns) are chosen here; the nonlinear solver that
 * solves each (Newton, line search, Levenberg-Marquardt, continuation) is in solve.c and
 * homotopy.c (opoint_solve.h). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/progress.h"
#include "model/model_view.h"
#include "opoint_constraint.h"
#include "opoint_given.h"
#include "opoint_steady.h"
#include "opoint_trim.h"



void mbl_opoint_options_default(mbl_opoint_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->at = -1;
    opt->max_iter = 100;
    opt->tol = 1e-12;
    opt->abs_tol = 1e-12;
    opt->step_tol = 1e-12;
    opt->rank_tol = 1e-9;
    opt->move_note = 0.5;
}

void mbl_point_free(mbl_point *p)
{
    if (!p) return;
    mbl_free(p->q);
    mbl_free(p->v);
    mbl_free(p->vdot);
    mbl_free(p->lambda);
    mbl_free(p->mu);
    mbl_free(p->r);
    mbl_free(p->X);
    mbl_free(p->Xdot);
    mbl_free(p->Z);
    mbl_free(p->v_held);
    model_jac_memo_free(p->jac_memo);
    mbl_free(p);
}

mbl_point *opoint_point_new(const mbl_model *md)
{
    model_view view;
    model_view_get(md, &view);
    const model_view *mv = &view;
    mbl_point *p = mbl_calloc(1, sizeof *p);
    if (!p) return NULL;
    p->n = mv->n;
    p->m = mv->m;
    p->k = mv->k;
    p->nr = mv->nr;
    p->q = mbl_calloc((size_t)mv->n + 1, sizeof(double));
    p->v = mbl_calloc((size_t)mv->n + 1, sizeof(double));
    p->vdot = mbl_calloc((size_t)mv->n + 1, sizeof(double));
    p->lambda = mbl_calloc((size_t)mv->m + 1, sizeof(double));
    p->mu = mbl_calloc((size_t)mv->k + 1, sizeof(double));
    p->r = mbl_calloc((size_t)mv->nr + 1, sizeof(double));
    p->nX = mv->nX;
    p->nZ = mv->nZ;
    p->X = mbl_calloc((size_t)mv->nX + 1, sizeof(double));
    p->Xdot = mbl_calloc((size_t)mv->nX + 1, sizeof(double));
    p->Z = mbl_calloc((size_t)mv->nZ + 1, sizeof(double));
    if (!p->q || !p->v || !p->vdot || !p->lambda || !p->mu || !p->r || !p->X || !p->Xdot || !p->Z) {
        mbl_point_free(p);
        return NULL;
    }
    return p;
}

void opoint_point_clear(mbl_point *p)
{
    mbl_point keep = *p;
    mbl_free(p->v_held);
    model_jac_memo_free(p->jac_memo);
    memset(p, 0, sizeof *p);
    p->n = keep.n, p->m = keep.m, p->k = keep.k, p->nr = keep.nr, p->nX = keep.nX, p->nZ = keep.nZ;
    double *arr[] = {p->q = keep.q, p->v = keep.v, p->vdot = keep.vdot, p->lambda = keep.lambda, p->mu = keep.mu,
                     p->r = keep.r, p->X = keep.X, p->Xdot = keep.Xdot, p->Z = keep.Z};
    int len[] = {p->n, p->n, p->n, p->m, p->k, p->nr, p->nX, p->nX, p->nZ};
    for (int i = 0; i < 9; i++) memset(arr[i], 0, (size_t)len[i] * sizeof *arr[i]);
}

mbl_point *opoint_point_copy(const mbl_point *s)
{
    mbl_point *p = mbl_calloc(1, sizeof *p);
    if (!p) return NULL;
    *p = *s;
    p->q = p->v = p->vdot = p->lambda = p->mu = p->r = p->X = p->Xdot = p->Z = NULL;
    p->v_held = NULL, p->jac_memo = NULL;
    const double *src[9] = {s->q, s->v, s->vdot, s->lambda, s->mu, s->r, s->X, s->Xdot, s->Z};
    double **dst[9] = {&p->q, &p->v, &p->vdot, &p->lambda, &p->mu, &p->r, &p->X, &p->Xdot, &p->Z};
    int len[9] = {s->n, s->n, s->n, s->m, s->k, s->nr, s->nX, s->nX, s->nZ}, ok = 1;
    for (int i = 0; i < 9 && ok; i++) {
        ok = (*dst[i] = mbl_calloc((size_t)len[i] + 1, sizeof(double))) != NULL;
        if (ok && len[i]) memcpy(*dst[i], src[i], (size_t)len[i] * sizeof(double));
    }
    if (ok && s->v_held && (ok = (p->v_held = mbl_calloc((size_t)s->n + 1, sizeof *p->v_held)) != NULL))
        memcpy(p->v_held, s->v_held, (size_t)s->n * sizeof *p->v_held);
    if (!ok) {
        mbl_point_free(p);
        return NULL;
    }
    return p;
}

#define RB(g) (1u << (g))

static void note(mbl_point *pt, const char *fmt, const char *a, double x);

/* Steady motion: mark in skip the coordinates whose Jacobian column over the steady equations'
 * rows (every row group but the velocity-level ones of the equilibrium) is zero at the starting
 * point, relative to the largest entry of those rows (1e-13), and say so in the notes. */
static int steady_hold_zero_columns(opoint_subproblem *sp, int *skip, mbl_status *st)
{
    const mbl_model *md = sp->md;
    const model_view *mv = &sp->mv;
    int n = mv->n, jq = model_blk0(md, MBL_BLK_Q);
    model_fill_syms_pt(md, sp->pt, sp->syms);
    int rc = opoint_eval_jac(sp, st);
    if (rc) return rc;
    static const int groups[] = {MBL_ROW_EOM, MBL_ROW_ODE, MBL_ROW_VAR, MBL_ROW_PHIDD, MBL_ROW_NHD,
                                 MBL_ROW_PHID, MBL_ROW_NH, MBL_ROW_PHI};
    double *cmax = mbl_calloc((size_t)n + 1, sizeof *cmax), amax = 0;
    if (!cmax) return mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int p = 0; p < mv->jac.nz; p++) {
        int r = mv->jac.row[p], in = 0;
        for (size_t g = 0; g < sizeof groups / sizeof *groups && !in; g++)
            in = r >= mv->row0[groups[g]] && r < mv->row0[groups[g] + 1];
        if (!in) continue;
        double a = fabs(sp->jac[p]);
        amax = fmax(amax, a);
        int c = mv->jac.col[p] - jq;
        if (c >= 0 && c < n) cmax[c] = fmax(cmax[c], a);
    }
    for (int i = 0; i < n; i++)
        if (!skip[jq + i] && cmax[i] <= 1e-13 * fmax(amax, 1.0)) {
            skip[jq + i] = 1;
            note(sp->pt, "coordinate %s held at its given value %.6g (its column in the steady-motion equations is "
                 "zero: nothing depends on it)", mv->qname[i], sp->pt->q[i]);
        }
    mbl_free(cmax);
    return 0;
}


#define RB(g) (1u << (g))

/* vdot, lambda, mu from the acceleration-level equations at the current q, v. */
/* A tree's accelerations refined by its own M^-1 up to this many coordinates (the n x n inverse) */
#define OPOINT_TREE_REFINE_MAX_N 4000

/* At a given point of a tree without constraints, ODE states or implicit variables whose M is the
 * tree's alone (model_mass_inverse_ok): the accelerations the general solve found, vdot, refined by one step
 * vdot -= M^-1 R(vdot) with the tree's own M^-1 (its articulated bodies, never M's factor). The
 * solve factors M, whose condition grows like N^4 along a chain, and leaves errors of cond(M) eps
 * in vdot (1.2e-10 of it for the 100-link chain moving), which reach A through the terms dM/dq vdot;
 * the step leaves the rounding of R itself (docs/linearization.md, "A tree's own M^-1"). Skipped
 * (vdot kept) where the solve left vdot = 0 (R at vdot = 0 within its tolerance: a point at rest,
 * whose rounding-level accelerations would only add noise, and terms to the symbolic forms), where
 * M^-1 is not defined (a joint without inertia) or above OPOINT_TREE_REFINE_MAX_N coordinates. */
static int refine_tree_accelerations(opoint_subproblem *sp, mbl_status *st)
{
    const mbl_model *md = sp->md;
    const model_view *mv = &sp->mv;
    int n = mv->n, e0 = mv->row0[MBL_ROW_EOM];
    if (!model_mass_inverse_ok(md) || mv->m + mv->k + mv->nX + mv->nZ > 0 || n > OPOINT_TREE_REFINE_MAX_N) return 0;
    int moves = 0;
    for (int i = 0; i < n && !moves; i++) moves = sp->pt->vdot[i] != 0.0;
    if (!moves) return 0; /* the solve found the point at rest to its tolerance: vdot = 0 kept */
    double *minv = mbl_alloc_array((size_t)n * n + 1, sizeof *minv);
    double *mwork = mbl_alloc_array(model_mass_inverse_work(md) + 1, sizeof *mwork);
    double *dv = mbl_alloc_array((size_t)n + 1, sizeof *dv);
    int rc = !minv || !mwork || !dv ? mbl_error(st, MBL_ENOMEM, "out of memory") : 0;
    if (!rc) {
        model_fill_syms_pt(md, sp->pt, sp->syms);
        rc = model_eval_F(md, sp->syms, sp->F, sp->work, st);
        if (!rc) rc = model_eval_jac_y_minv(md, sp->syms, NULL, NULL, minv, mwork, sp->work, st);
        if (rc < 0) rc = model_eval_error(md, sp->syms, "at the point's accelerations", st);
    }
    if (!rc) {
        const double *R = sp->F + e0;
        for (int i = 0; i < n; i++) dv[i] = 0.0;
        for (int j = 0; j < n; j++) { /* dv = M^-1 R, by columns */
            const double *c = minv + (size_t)j * n, rj = R[j];
            for (int i = 0; i < n; i++) dv[i] += c[i] * rj;
        }
        for (int i = 0; i < n; i++) sp->pt->vdot[i] -= dv[i];
    }
    mbl_free(minv), mbl_free(mwork), mbl_free(dv);
    return rc == 1 ? 0 : rc;
}

static int solve_accelerations(opoint_subproblem *sp, mbl_status *st)
{
    opoint_sub_select(sp, RB(MBL_ROW_EOM) | RB(MBL_ROW_ODE) | RB(MBL_ROW_VAR) | RB(MBL_ROW_PHIDD) | RB(MBL_ROW_NHD),
               RB(MBL_BLK_A) | RB(MBL_BLK_LAMBDA) | RB(MBL_BLK_MU) | RB(MBL_BLK_XD) | RB(MBL_BLK_Z), NULL);
    int rc = opoint_solve(sp, "the accelerations and multipliers", 1, st);
    if (!rc && sp->rank_last >= 0 && sp->rank_last < sp->ncol) sp->pt->min_norm_multipliers = 1;
    return rc;
}

static void note(mbl_point *pt, const char *fmt, const char *a, double x)
{
    char text[sizeof pt->notes];
    snprintf(text, sizeof text, fmt, a, x);
    opoint_note_add(pt, text);
}

/* The note on a constraint whose Jacobian row vanishes at the point (opoint_constraint_rank) */
static void note_vanished_row(mbl_point *pt, const mbl_model *md, int row)
{
    const char *name = mbl_model_constraint_name(md, row);
    note(pt, "the Jacobian row of %s vanishes at the point (below %g of its norm at the guess): the constraint holds "
             "there only to second order, a singular configuration",
         name ? name : "a constraint", OPOINT_ROW_VANISH);
}

/* st's message begins with "file: " (model_eval_error's prefix): not prefixed again */
static int opoint_msg_has_file(const mbl_status *st, const char *file)
{
    size_t n = file ? strlen(file) : 0;
    return st && n && !strncmp(st->msg, file, n) && st->msg[n] == ':';
}

/* Initial multipliers: least squares on the equations of motion at the guess (q, v, vdot = 0),
 * lambda, mu minimizing ||R(q, v, 0, lambda, mu)|| (minimum-norm when [Phi_q; A] loses rank):
 * starting Newton from lambda = mu = 0 instead lets the first steps jump to another branch of
 * solutions. The equations are linear in the multipliers, so one minimum-norm least-squares step
 * (opoint_multipliers_step: dense SVD, or SPQR) from 0 gives them. keep (may be NULL): a large
 * one's QR, kept for the rank test (opoint_constraint_rank). */
static int initial_multipliers(opoint_subproblem *sp, la_spqr **keep, mbl_status *st)
{
    const mbl_model *md = sp->md;
    const model_view *mv = &sp->mv;
    if (mv->m + mv->k == 0) return 0;
    if (sp->opt->lambda && (sp->opt->mu || mv->k == 0)) { /* given by the caller */
        memcpy(sp->pt->lambda, sp->opt->lambda, (size_t)mv->m * sizeof(double));
        if (mv->k) memcpy(sp->pt->mu, sp->opt->mu, (size_t)mv->k * sizeof(double));
        return 0;
    }
    opoint_sub_select(sp, RB(MBL_ROW_EOM), RB(MBL_BLK_LAMBDA) | RB(MBL_BLK_MU), NULL);
    double *dx = mbl_alloc_array((size_t)sp->ncol + 1, sizeof *dx);
    if (!dx) return mbl_error(st, MBL_ENOMEM, "out of memory");
    double f2, finf;
    int rc = opoint_eval_F(sp, &f2, &finf, st);
    if (!rc) rc = opoint_eval_jac(sp, st);
    if (!rc) rc = opoint_multipliers_step(sp, keep, dx, st);
    for (int c = 0; !rc && c < sp->ncol; c++) *opoint_unknown_ptr(md, sp->pt, sp->cols[c]) += dx[c];
    /* redundant constraints: the multipliers are the minimum-norm ones (kept when the point's solve
     * then takes no step, its guess being solved already) */
    if (!rc && sp->rank_last >= 0 && sp->rank_last < sp->ncol) sp->pt->min_norm_multipliers = 1;
    mbl_free(dx);
    /* an evaluation's failure names the file and the element already (model_eval_error) */
    if (rc && !opoint_msg_has_file(st, mv->file)) mbl_error_prefix(st, "the initial multipliers");
    return rc;
}

/* A guess that violates the constraints (by more than 1e-10 of a row's scale) projected onto
 * Phi = 0 (minimum-norm corrections, as with at: given): the configuration nearest the guess on
 * the constraint manifold. *moved = 1 where it moved and converged; else the point is unchanged. */
static int assemble_guess(opoint_subproblem *sp, int *moved, mbl_status *st)
{
    const model_view *mv = &sp->mv;
    *moved = 0;
    if (mv->m == 0) return 0;
    opoint_sub_select(sp, RB(MBL_ROW_PHI), RB(MBL_BLK_Q), NULL);
    double f2, finf;
    int rc = opoint_eval_F(sp, &f2, &finf, st);
    if (!rc) rc = opoint_eval_jac(sp, st);
    if (rc) return rc;
    double *x0 = mbl_alloc_array((size_t)sp->ncol + 1, sizeof *x0), *rs = mbl_alloc_array((size_t)sp->nrow + 1, sizeof *rs);
    double *cs = mbl_alloc_array((size_t)sp->ncol + 1, sizeof *cs);
    if (!x0 || !rs || !cs) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int c = 0; !rc && c < sp->ncol; c++) x0[c] = *opoint_unknown_ptr(sp->md, sp->pt, sp->cols[c]);
    if (!rc && opoint_scaled_residual(sp, x0, rs, cs) > 1e-10) {
        mbl_status st2;
        int iters = sp->pt->iterations;
        double res = sp->pt->residual, sres = sp->pt->scaled_residual;
        int prc = opoint_solve(sp, "the assembly of the guess", 0, &st2);
        *moved = !prc;
        if (prc == MBL_ENOMEM) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        else if (prc) {
            for (int c = 0; c < sp->ncol; c++) *opoint_unknown_ptr(sp->md, sp->pt, sp->cols[c]) = x0[c];
            sp->pt->iterations = iters;
        }
        sp->pt->residual = res, sp->pt->scaled_residual = sres;
    }
    mbl_free(x0), mbl_free(rs), mbl_free(cs);
    return rc;
}

/* With constraints, where Newton alone from the guess was not enough (sp->hard) and only one of
 * the two searches (from the guess, from its projection onto the constraints) reached the
 * solution kept, or they reached different ones: a solution more than OPOINT_REFUSE_FAR of
 * max(1, |guess|) from the guess in some coordinate (for a body's Euler parameters, a rotation
 * of more than OPOINT_REFUSE_FAR rad) is refused, naming that coordinate. Such a search crossed
 * from the guess's basin into another one (a closed chain projected onto its dead point, a body
 * swung over to its inverted equilibrium) and is not known to have found the solution nearest the
 * guess. A far solution that both searches reach is kept (a unique equilibrium far from a rough
 * guess), as is every solution without constraints (docs/convergence.md). */
#define OPOINT_REFUSE_FAR 1.0
static int refuse_far(opoint_subproblem *sp, const char *what, const double *g, mbl_status *st)
{
    const model_view *mv = &sp->mv;
    const double *q = sp->pt->q;
    int big = -1, rot = -1;
    double worst = OPOINT_REFUSE_FAR, angle = 0;
    for (int i = 0; i < mv->n; i++) {
        size_t len = strlen(mv->qname[i]);
        if (i + 3 < mv->n && len > 3 && !strcmp(mv->qname[i] + len - 3, "_e0") &&
            strlen(mv->qname[i + 3]) == len && !strncmp(mv->qname[i + 3], mv->qname[i], len - 1) &&
            mv->qname[i + 3][len - 1] == '3') {
            /* a body's Euler parameters: the angle of the rotation from the guess to the solution */
            double dot = 0, ng = 0, nq = 0;
            for (int j = i; j < i + 4; j++) dot += g[j] * q[j], ng += g[j] * g[j], nq += q[j] * q[j];
            double c = ng > 0 && nq > 0 ? fmin(1.0, fabs(dot) / sqrt(ng * nq)) : 1.0, a = 2 * acos(c);
            if (a > worst) worst = a, big = i, rot = 1, angle = a;
            i += 3;
            continue;
        }
        double d = fabs(q[i] - g[i]) / fmax(1.0, fabs(g[i]));
        if (d > worst) worst = d, big = i, rot = 0;
    }
    if (big < 0) return 0;
    if (rot)
        return mbl_error(st, MBL_ENOCONV,
                         "%s: the solution found after damped steps lies far from the initial guess (the Euler "
                         "parameters from %.100s rotated by %.3g rad), reached by only one search, and may not be the "
                         "one nearest the guess; give a guess nearer the intended solution",
                         what, mv->qname[big], angle);
    return mbl_error(st, MBL_ENOCONV,
                     "%s: the solution found after damped steps lies far from the initial guess (%.100s: %.4g -> "
                     "%.4g), reached by only one search, and may not be the one nearest the guess; give a guess "
                     "nearer the intended solution",
                     what, mv->qname[big], g[big], q[big]);
}

/* The equilibrium or steady motion on the rows and unknowns selected (the point holds the guess
 * and its initial multipliers). With constraints, Newton alone first; where it fails, needs damped
 * steps or goes far (sp->hard), the whole search (opoint_solve: Newton, then the continuation) is
 * made again, from the guess projected onto the constraints where it violates them
 * (assemble_guess: the search starts on the constraint manifold instead of fighting the
 * constraints and the equations of motion at once, as a closed chain guessed with every joint a
 * little off must), else from the guess itself; of two solutions the one nearer the guess is
 * kept. Guesses that Newton solves with full steps are solved as before. */
static int solve_point(opoint_subproblem *sp, const char *what, unsigned rows, unsigned cols, const int *skip,
                       mbl_status *st)
{
    const model_view *mv = &sp->mv;
    mbl_point *pt = sp->pt;
    size_t nq = (size_t)mv->n, nl = (size_t)(mv->m + mv->k), nx = (size_t)(mv->nX + mv->nZ);
    double *save = mbl_alloc_array(2 * (nq + nl + nx) + 2, sizeof *save);
    if (!save) return mbl_error(st, MBL_ENOMEM, "out of memory");
    double *g = save, *first = save + nq + nl + nx + 1;
    /* the guess: q, multipliers (lambda, mu), X and Z */
    memcpy(g, pt->q, nq * sizeof *g);
    memcpy(g + nq, pt->lambda, (size_t)mv->m * sizeof *g);
    memcpy(g + nq + mv->m, pt->mu, (size_t)mv->k * sizeof *g);
    memcpy(g + nq + nl, pt->X, (size_t)mv->nX * sizeof *g);
    memcpy(g + nq + nl + mv->nX, pt->Z, (size_t)mv->nZ * sizeof *g);
    opoint_sub_select(sp, rows, cols, skip);
    sp->hard = 0;
    sp->newton_only = mv->m > 0; /* with constraints: Newton first, the rest from the projection */
    int rc = opoint_solve(sp, what, 0, st), moved = 0;
    model_jac_memo *j1 = NULL;
    sp->newton_only = 0;
    if ((rc == MBL_ENOCONV || (!rc && sp->hard)) && mv->m > 0) {
        int it1 = pt->iterations, rank1 = sp->rank_last;
        double res1 = pt->residual, sres1 = pt->scaled_residual;
        memcpy(first, pt->q, nq * sizeof *first);
        memcpy(first + nq, pt->lambda, (size_t)mv->m * sizeof *first);
        memcpy(first + nq + mv->m, pt->mu, (size_t)mv->k * sizeof *first);
        memcpy(first + nq + nl, pt->X, (size_t)mv->nX * sizeof *first);
        memcpy(first + nq + nl + mv->nX, pt->Z, (size_t)mv->nZ * sizeof *first);
        if (!rc) j1 = opoint_jac_save(sp); /* the Jacobian at the first solution, if there */
        memcpy(pt->q, g, nq * sizeof *g);
        memcpy(pt->X, g + nq + nl, (size_t)mv->nX * sizeof *g);
        memcpy(pt->Z, g + nq + nl + mv->nX, (size_t)mv->nZ * sizeof *g);
        mbl_status st2;
        int rc2 = assemble_guess(sp, &moved, &st2);
        if (!rc2 && !moved) { /* the guess itself, multipliers and all */
            memcpy(pt->lambda, g + nq, (size_t)mv->m * sizeof *g);
            memcpy(pt->mu, g + nq + mv->m, (size_t)mv->k * sizeof *g);
        }
        if (!rc2 && moved) rc2 = initial_multipliers(sp, NULL, &st2);
        if (!rc2) {
            opoint_sub_select(sp, rows, cols, skip);
            rc2 = opoint_solve(sp, what, 0, &st2);
        }
        double d1 = 0, d2 = 0, d12 = 0;
        for (size_t i = 0; i < nq; i++) {
            double sc = fmax(1.0, fabs(g[i]));
            d1 = fmax(d1, fabs(first[i] - g[i]) / sc), d2 = fmax(d2, fabs(pt->q[i] - g[i]) / sc);
            d12 = fmax(d12, fabs(first[i] - pt->q[i]) / fmax(1.0, fabs(first[i])));
        }
        int agree = !rc && !rc2 && d12 <= 1e-6; /* both searches reached the same solution */
        if (rc2 == MBL_ENOMEM) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        else if (!rc2 && (rc || d2 < d1)) rc = 0; /* the second search */
        else if (rc && rc2) { /* neither: the second's reason (it tried more) */
            if (st) *st = st2;
            rc = rc2;
        } else { /* the first: its solution */
            memcpy(pt->q, first, nq * sizeof *first);
            memcpy(pt->lambda, first + nq, (size_t)mv->m * sizeof *first);
            memcpy(pt->mu, first + nq + mv->m, (size_t)mv->k * sizeof *first);
            memcpy(pt->X, first + nq + nl, (size_t)mv->nX * sizeof *first);
            memcpy(pt->Z, first + nq + nl + mv->nX, (size_t)mv->nZ * sizeof *first);
            pt->iterations = it1, pt->residual = res1, pt->scaled_residual = sres1;
            sp->rank_last = rank1;
            opoint_jac_restore(sp, j1); /* not evaluated there again */
            j1 = NULL;
        }
        model_jac_memo_free(j1);
        if (!rc && !agree) rc = refuse_far(sp, what, g, st);
    }
    mbl_free(save);
    return rc;
}

/* Name the coordinates that moved from the initial guess by more than opt->move_note *
 * max(1, |guess|): a solution far from the guess may be another branch than the one meant. */
static void note_far_moves(mbl_point *pt, const mbl_model *md, const double *guess, double move_note)
{
    model_view view;
    model_view_get(md, &view);
    const model_view *mv = &view;
    if (!(move_note > 0)) return;
    char buf[512];
    size_t len = 0;
    int count = 0, shown = 0;
    buf[0] = '\0';
    for (int i = 0; i < mv->n; i++) {
        double d = pt->q[i] - guess[i];
        if (!(fabs(d) > move_note * fmax(1.0, fabs(guess[i])))) continue;
        count++;
        if (shown < 4 && len + 80 < sizeof buf) {
            len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s (%.4g -> %.4g)", shown ? ", " : "",
                                    mv->qname[i], guess[i], pt->q[i]);
            shown++;
        }
    }
    if (!count) return;
    if (count > shown) snprintf(buf + len, sizeof buf - len, " and %d more", count - shown);
    char msg[700];
    snprintf(msg, sizeof msg,
             "the point moved far from the initial guess: %s; another solution may lie nearer the guess", buf);
    opoint_note_add(pt, msg);
}

/* An equilibrium is at rest: velocities given in the file (a body's angular_velocity, a
 * coordinate's der(q)) are not used there; say so, naming the largest, since a user who gave a
 * spin and asked for an equilibrium gets the model at rest (at: given or steady keep them). */
static void note_unused_velocities(mbl_point *pt, const mbl_model *md, const double *v0)
{
    model_view view;
    model_view_get(md, &view);
    const model_view *mv = &view;
    int big = -1, count = 0;
    for (int i = 0; i < mv->n; i++)
        if (v0[i] != 0.0 && isfinite(v0[i])) {
            count++;
            if (big < 0 || fabs(v0[i]) > fabs(v0[big])) big = i;
        }
    if (big < 0) return;
    char msg[400];
    snprintf(msg, sizeof msg,
             "the velocities of the initial state are not used at an equilibrium (%d nonzero, largest der(%.100s) = "
             "%.4g); use at: given or at: steady for a point with motion",
             count, mv->qname[big], v0[big]);
    opoint_note_add(pt, msg);
}

/* A given point's accelerations are residual when the inertia term of some equation of motion is
 * more than this fraction of the forces in that equation (docs/linearization.md, "A given point
 * that moves"). */
#define OPOINT_ACCEL_NOTE 1e-6
/* ... in rows whose terms exceed this fraction of the largest row's (rounding-level rows are skipped). */
#define OPOINT_ACCEL_ROUND 1e-9

/* Steady in the user's states (they cover the degrees of freedom, position states only): every
 * s'' = s_q vdot + s_qq(v, v) is zero to OPOINT_ACCEL_NOTE relative to its two terms, |s_q||vdot|
 * summed and |s'' - s_q vdot| (a conical pendulum in Cartesian coordinates: the bob's centripetal
 * acceleration, its angles' second derivatives zero). 1 when so, 0 otherwise or without such states;
 * negative on an error. */
static int steady_in_user_states(opoint_subproblem *sp, mbl_status *st)
{
    const mbl_model *md = sp->md;
    const model_view *mv = &sp->mv;
    int nus = mv->nus, n = mv->n, jq = model_blk0(md, MBL_BLK_Q);
    if (nus == 0 || mv->nuvs > 0 || nus < n - mv->m - mv->k) return 0;
    size_t nv = (size_t)(3 * nus + 2 * mv->nuvs);
    double *us = mbl_alloc_array(nv + (size_t)mv->usjac.nz + 1, sizeof *us);
    double *lin = mbl_calloc((size_t)nus + 1, sizeof *lin), *abs_ = mbl_calloc((size_t)nus + 1, sizeof *abs_);
    int rc = !us || !lin || !abs_ ? mbl_error(st, MBL_ENOMEM, "out of memory") : 0;
    if (!rc) rc = model_eval_user_states(md, sp->syms, us, sp->work, st);
    int steady = 1;
    for (int p = 0; !rc && p < mv->usjac.nz; p++) {
        int r = mv->usjac.row[p], c = mv->usjac.col[p] - jq;
        if (r >= nus || c < 0 || c >= n) continue;
        double t = us[nv + p] * sp->pt->vdot[c];
        lin[r] += t, abs_[r] += fabs(t);
    }
    for (int i = 0; !rc && i < nus && steady; i++) {
        double sdd = us[2 * nus + i], scale = abs_[i] + fabs(sdd - lin[i]);
        steady = scale > 0 ? fabs(sdd) <= OPOINT_ACCEL_NOTE * scale : 1;
    }
    mbl_free(us), mbl_free(lin), mbl_free(abs_);
    return rc ? rc : steady;
}

/* At a given point: the accelerations vdot the model has there (solved), and whether they are
 * residual. In EOM row i, R_i = (M vdot)_i + (the other terms) = 0; the test compares the inertia
 * term |(M vdot)_i| with the size of the forces it balances, f_i = sum_c |dR_i/dx_c x_c| over the
 * other unknowns (multipliers, velocities, coordinates, ode states, inputs: reactions, gyroscopic,
 * spring and damper forces) plus |(M vdot)_i| itself. Each term is in the row's own units, so the
 * ratio |(M vdot)_i| / f_i is free of the units of the coordinates and of the equation (exact
 * equilibrium and steady motion: rounding; a free fall: 1). The coordinate with the largest ratio
 * above OPOINT_ACCEL_NOTE is named with its acceleration in pt->accel_note and the notes. */
static int note_residual_accelerations(opoint_subproblem *sp, mbl_status *st)
{
    const mbl_model *md = sp->md;
    const model_view *mv = &sp->mv;
    mbl_point *pt = sp->pt;
    int n = mv->n, e0 = mv->row0[MBL_ROW_EOM], ja = model_blk0(md, MBL_BLK_A);
    model_fill_syms_pt(md, pt, sp->syms);
    int rc = opoint_jac(sp, st);
    if (rc) return model_eval_error(md, sp->syms, "at the given point", st);
    double *inert = mbl_calloc((size_t)n + 1, sizeof *inert), *force = mbl_calloc((size_t)n + 1, sizeof *force);
    double *rscale = mbl_calloc((size_t)n + 1, sizeof *rscale);
    if (!inert || !force || !rscale) {
        mbl_free(inert), mbl_free(force), mbl_free(rscale);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    for (int p = 0; p < mv->jac.nz; p++) {
        int r = mv->jac.row[p] - e0, c = mv->jac.col[p];
        const double *x = r >= 0 && r < n ? opoint_unknown_ptr(md, pt, c) : NULL;
        if (!x) continue;
        double t = sp->jac[p] * *x;
        if (c >= ja && c < ja + n) inert[r] += t;
        else force[r] += fabs(t);
        rscale[r] += fabs(sp->jac[p]) * fmax(1.0, fabs(*x));
    }
    int big = -1;
    double worst = OPOINT_ACCEL_NOTE, fall = 0;
    for (int i = 0; i < n; i++) fall = fmax(fall, fabs(inert[i]) + force[i]);
    for (int i = 0; i < n; i++) {
        double f = fabs(inert[i]) + force[i], ratio = f > 0 ? fabs(inert[i]) / f : 0.0;
        /* a row whose terms are all at the level of rounding (a coordinate no force acts on at an
         * exact equilibrium: 1e-13 over 1e-11) says nothing */
        if (f <= OPOINT_ACCEL_ROUND * fall) continue;
        /* nor a row whose inertia term, the residual of its equation at vdot = 0, is within the
         * equilibrium solve's own convergence test (scaled residual |R_i| / sum_c |dR_i/dx_c|
         * max(1, |x_c|) at most opt->tol): the rounding level of the row's terms at an exact
         * equilibrium where they all vanish (a chain hanging straight: the gravity torques' 1e-13) */
        if (fabs(inert[i]) <= sp->opt->tol * rscale[i]) continue;
        /* a later coordinate only when clearly larger: ties (a symmetric mechanism) name the first
         * on every BLAS kernel */
        if (isfinite(ratio) && ratio > (big < 0 ? worst : worst * (1.0 + 1e-6))) worst = ratio, big = i;
    }
    mbl_free(inert), mbl_free(force), mbl_free(rscale);
    if (big < 0) return 0;
    /* the acceleration behind that row's inertia term: its largest entry M_ij vdot_j (the row's own
     * coordinate, or one the mass matrix couples to it: a flexible body's frame row and its nodes) */
    int acc = big;
    double amax = 0;
    for (int p = 0; p < mv->jac.nz; p++) {
        int c = mv->jac.col[p] - ja;
        if (mv->jac.row[p] - e0 != big || c < 0 || c >= n) continue;
        double t = fabs(sp->jac[p] * pt->vdot[c]);
        if (t > amax * (1.0 + 1e-6)) amax = t, acc = c;
    }
    model_fill_syms_pt(md, pt, sp->syms);
    rc = steady_in_user_states(sp, st);
    if (rc) return rc < 0 ? rc : 0;
    if (acc == big)
        snprintf(pt->accel_note, sizeof pt->accel_note,
                 "the given point is not an equilibrium or steady motion of the model: residual acceleration "
                 "der(der(%.48s)) = %.6g (its inertia term is %.3g of the forces in its equation); the linear model "
                 "is about a point that moves",
                 mv->qname[acc], pt->vdot[acc], worst);
    else
        snprintf(pt->accel_note, sizeof pt->accel_note,
                 "the given point is not an equilibrium or steady motion of the model: residual acceleration "
                 "der(der(%.40s)) = %.6g (inertia %.3g of the forces in the equation of %.40s); the linear model "
                 "is about a point that moves",
                 mv->qname[acc], pt->vdot[acc], worst, mv->qname[big]);
    opoint_note_add(pt, pt->accel_note);
    return 0;
}

/* The held velocities of a given point (docs/model-files.md, "Held velocities"): per coordinate
 * whether its rate is held (hq) and at what (hcq), the held expressions' values (hc). */
typedef struct held_set {
    int *hq, *opt_q; /* opt_q: held at a value of the options */
    int *he;         /* nheld: 1 for a held expression in use */
    double *hcq, *hc;
    int any; /* something is held */
} held_set;

/* linearize.at: given: the coordinates projected onto the constraints, the velocities solved with
 * the held ones kept (or, with nothing held, projected onto the velocity constraints), with notes
 * of what moved or was solved, then the accelerations and multipliers solved. */
static int solve_given(opoint_subproblem *sp, const double *v0, const held_set *hs, mbl_status *st)
{
    const model_view *mv = &sp->mv;
    mbl_point *pt = sp->pt;
    int n = mv->n, rc = 0;
    double *qgiven = mbl_alloc_array((size_t)n + 1, sizeof *qgiven);
    if (!qgiven) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        return rc;
    }
    memcpy(qgiven, pt->q, (size_t)n * sizeof *qgiven);
    memcpy(pt->v, v0, (size_t)n * sizeof(double));
    memcpy(pt->X, mv->X0, (size_t)mv->nX * sizeof(double));
    if (mv->m) {
        opoint_sub_select(sp, RB(MBL_ROW_PHI), RB(MBL_BLK_Q), NULL);
        rc = opoint_solve(sp, "the projection of the coordinates onto the constraints", 0, st);
    }
    for (int i = 0; !rc && i < n; i++)
        if (fabs(pt->q[i] - qgiven[i]) > 1e-9 * fmax(1.0, fabs(qgiven[i])))
            note(pt, "coordinate %s moved by %.3g to satisfy the constraints", mv->qname[i], pt->q[i] - qgiven[i]);
    mbl_free(qgiven);
    if (!rc && hs->any) {
        rc = opoint_given_velocities(sp, hs->hq, hs->hcq, hs->he, hs->hc, st);
    } else if (!rc && mv->m + mv->k) {
        double *vg = mbl_alloc_array((size_t)n + 1, sizeof *vg);
        if (!vg) {
            rc = mbl_error(st, MBL_ENOMEM, "out of memory");
            return rc;
        }
        memcpy(vg, pt->v, (size_t)n * sizeof *vg);
        opoint_sub_select(sp, RB(MBL_ROW_PHID) | RB(MBL_ROW_NH), RB(MBL_BLK_V), NULL);
        rc = opoint_solve(sp, "the projection of the velocities onto the velocity constraints", 1, st);
        for (int i = 0; !rc && i < n; i++)
            if (fabs(pt->v[i] - vg[i]) > 1e-9 * fmax(1.0, fabs(vg[i])))
                note(pt, "velocity der(%s) changed by %.3g to satisfy the velocity constraints", mv->qname[i],
                     pt->v[i] - vg[i]);
        mbl_free(vg);
    }
    if (!rc) rc = solve_accelerations(sp, st);
    if (!rc) rc = refine_tree_accelerations(sp, st);
    if (!rc) rc = note_residual_accelerations(sp, st);
    return rc;
}

/* Is some velocity constraint (Phi' = Phi_q v + Phi_t, c = A v + b) violated at the point's q and v
 * beyond rounding (scaled as the held velocities' check)? Then the velocities not written are
 * solved for (opoint_given_velocities, the written ones held). */
static int steady_complete_velocities(opoint_subproblem *sp, const held_set *hs, mbl_status *st)
{
    const mbl_model *md = sp->md;
    const model_view *mv = &sp->mv;
    mbl_point *pt = sp->pt;
    int nc = mv->m + mv->k, r0 = mv->row0[MBL_ROW_PHID], jv = model_blk0(md, MBL_BLK_V);
    if (!nc) return 0;
    model_fill_syms_pt(md, pt, sp->syms);
    int rc = model_eval_F(md, sp->syms, sp->F, sp->work, st);
    if (!rc) rc = opoint_jac(sp, st);
    if (rc) return model_eval_error(md, sp->syms, "at the initial guess", st);
    double *scale = mbl_calloc((size_t)nc + 1, sizeof *scale);
    if (!scale) return mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int p = 0; p < mv->jac.nz; p++) { /* PHID and NH are consecutive row groups */
        int row = mv->jac.row[p] - r0, c = mv->jac.col[p] - jv;
        if (row >= 0 && row < nc && c >= 0 && c < mv->n) scale[row] += fabs(sp->jac[p]) * fmax(1.0, fabs(pt->v[c]));
    }
    int broken = 0;
    for (int r = 0; r < nc; r++)
        if (fabs(sp->F[r0 + r]) > sp->opt->abs_tol && fabs(sp->F[r0 + r]) > OPOINT_GIVEN_TOL_FACTOR * sp->opt->tol * scale[r])
            broken = 1;
    mbl_free(scale);
    return broken ? opoint_given_velocities(sp, hs->hq, hs->hcq, hs->he, hs->hc, st) : 0;
}

/* linearize.at: steady: the velocities kept, vdot = 0, the non-cyclic coordinates and the
 * multipliers solved, then the accelerations (a note when they are not small). */
static int solve_steady(opoint_subproblem *sp, const double *v0, const held_set *hs, const double *q_guess,
                        double move_note, mbl_status *st)
{
    const mbl_model *md = sp->md;
    const model_view *mv = &sp->mv;
    mbl_point *pt = sp->pt;
    int n = mv->n, rc;
    /* keep v; vdot = 0; solve the non-cyclic coordinates and the multipliers */
    memcpy(pt->v, v0, (size_t)n * sizeof(double));
    memcpy(pt->X, mv->X0, (size_t)mv->nX * sizeof(double));
    /* velocities that break the velocity constraints at the guess (a driver's rate nobody wrote:
     * a blade on a driven hub, whose body takes no velocity keys) are completed first, the written
     * ones held, as at a given point */
    rc = steady_complete_velocities(sp, hs, st);
    if (rc) return rc;
    rc = initial_multipliers(sp, NULL, st);
    if (rc) return rc;
    /* cyclic coordinates and ode states (no residual depends on them) keep their values */
    int *skip = mbl_calloc((size_t)mv->nunk + 1, sizeof *skip);
    if (!skip) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        return rc;
    }
    int jq = model_blk0(md, MBL_BLK_Q), jx = model_blk0(md, MBL_BLK_X);
    for (int i = 0; i < n; i++) skip[jq + i] = mv->cyclic[i];
    for (int i = 0; i < mv->nX; i++) skip[jx + i] = 1;
    for (int p = 0; p < mv->jac.nz; p++)
        if (mv->jac.col[p] >= jx && mv->jac.col[p] < jx + mv->nX) skip[mv->jac.col[p]] = 0;
    /* and coordinates whose column in the steady equations is numerically zero at the start (a
     * spin angle of joint coordinates that enters only through sin^2 + cos^2): nothing fixes
     * them, and Newton steps in them would be driven by rounding */
    rc = steady_hold_zero_columns(sp, skip, st);
    if (rc) {
        mbl_free(skip);
        return rc;
    }
    /* the accelerations of the steady motion: 0, but for the turning frames of flexible bodies and
     * rigid spatial ones (their origins circle the axis, their Euler parameters turn:
     * steady_frames.c), which depend on the coordinates solved: solved again while they change
     * beyond rounding */
    double *acc = mbl_calloc((size_t)n + 1, sizeof *acc);
    if (!acc) {
        mbl_free(skip);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    double amag = 0;
    opoint_steady_frame_accels(mv, pt->q, pt->v, acc);
    /* with frames that turn, the rank of the least-squares steps is decided at a tighter
     * tolerance (the subproblem is not equilibrated: a blade's EA / h beside its frame's e Omega^2
     * puts regular directions below rank_tol times the largest singular value, and dropping them
     * stalls Newton) */
    const mbl_opoint_options *opt0 = sp->opt;
    mbl_opoint_options opt_frames = *opt0;
    for (int i = 0; i < n; i++)
        if (acc[i] != 0) opt_frames.rank_tol = fmin(opt0->rank_tol, OPOINT_STEADY_FRAME_RANK_TOL), sp->opt = &opt_frames;
    for (int pass = 0; !rc && pass < OPOINT_STEADY_FRAME_PASSES; pass++) {
        memcpy(pt->vdot, acc, (size_t)n * sizeof *acc);
        rc = solve_point(sp, "the steady motion",
                         RB(MBL_ROW_EOM) | RB(MBL_ROW_ODE) | RB(MBL_ROW_VAR) | RB(MBL_ROW_PHIDD) | RB(MBL_ROW_NHD) |
                             RB(MBL_ROW_PHID) | RB(MBL_ROW_NH) | RB(MBL_ROW_PHI),
                         RB(MBL_BLK_Q) | RB(MBL_BLK_LAMBDA) | RB(MBL_BLK_MU) | RB(MBL_BLK_X) | RB(MBL_BLK_Z), skip, st);
        amag = 0;
        for (int i = 0; i < n; i++) amag = fmax(amag, fabs(acc[i]));
        if (!rc && !(opoint_steady_frame_accels(mv, pt->q, pt->v, acc) > OPOINT_STEADY_FRAME_TOL * fmax(1.0, amag)))
            break;
    }
    sp->opt = opt0;
    mbl_free(skip);
    if (!rc) note_far_moves(pt, md, q_guess, move_note);
    if (!rc) rc = solve_accelerations(sp, st);
    if (!rc) {
        double amax = 0;
        for (int i = 0; i < n; i++) amax = fmax(amax, fabs(pt->vdot[i] - acc[i]));
        if (amax > 1e-6) note(pt, "the steady motion has accelerations up to %.3g%s", "", amax);
    }
    mbl_free(acc);
    return rc;
}

/* At the solved point: the model's own expressions defined there, and (with ode states, implicit
 * variables or speeds) the implicit equations and the speeds regular. */
static int check_solved(opoint_subproblem *sp, int rc, int fill, mbl_status *st)
{
    const mbl_model *md = sp->md;
    const model_view *mv = &sp->mv;
    mbl_point *pt = sp->pt;
    if (!rc) {
        /* the model's own expressions (energies, forces, constraints, outputs, variables), not
         * only their derivatives, must be defined at the point: log(x - 1) at x = 0 is an error */
        if (fill) model_fill_syms_pt(md, pt, sp->syms);
        rc = model_check_domain(md, sp->syms, sp->work, st);
        /* validity items (a bushing rotated beyond small angles): notes, never a refusal */
        if (!rc) model_validity_notes(md, sp->syms, pt->notes, sizeof pt->notes);
        /* a table's one-sided slope at one of its points (issue 65, item 20) */
        if (!rc) model_data_knot_notes(md, sp->syms, pt->notes, sizeof pt->notes);
        /* user routines: their own partials checked, the differences' accuracy said (issue 68) */
        if (!rc) rc = model_routines_check(md, sp->syms, pt->notes, sizeof pt->notes, st);
    }
    if (!rc && (mv->nX + mv->nZ > 0 || mv->nspd > 0)) {
        /* the implicit equations determine der(X) and Z there, the speeds' T is regular */
        size_t nus = (size_t)(3 * mv->nus + 2 * mv->nuvs);
        double *us = mbl_alloc_array(nus + (size_t)mv->usjac.nz + 1, sizeof *us);
        if (!us) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        if (!rc) rc = opoint_jac(sp, st);
        if (!rc) rc = model_eval_user_states(md, sp->syms, us, sp->work, st);
        if (!rc) rc = model_check_point(md, sp->jac, us + nus, st);
        mbl_free(us);
    }
    return rc;
}

int opoint_check_solved(opoint_subproblem *sp, int rc, mbl_status *st) { return check_solved(sp, rc, 1, st); }

int opoint_check_solved_syms(opoint_subproblem *sp, mbl_status *st) { return check_solved(sp, 0, 0, st); }

/* The held velocities from the model (the file's velocities: by coordinate and by expression) and
 * the options' (mbl_opoint_options.velocities, by name): hs, and *vset, a copy of v0 with the held
 * coordinate rates the options give (NULL when they give none). MBL_EARG naming an unknown name;
 * held expressions with at: steady are refused (steady keeps velocities by coordinate). */
static int held_setup(const mbl_model *md, const mbl_opoint_options *opt, const double *v0, held_set *hs,
                      double **vset, mbl_status *st)
{
    model_view view;
    model_view_get(md, &view);
    const model_view *mv = &view;
    int n = mv->n;
    *vset = NULL;
    hs->hq = mbl_calloc((size_t)n + 1, sizeof *hs->hq);
    hs->hcq = mbl_calloc((size_t)n + 1, sizeof *hs->hcq);
    hs->hc = mbl_calloc((size_t)mv->nheld + 1, sizeof *hs->hc);
    hs->opt_q = mbl_calloc((size_t)n + 1, sizeof *hs->opt_q);
    hs->he = mbl_calloc((size_t)mv->nheld + 1, sizeof *hs->he);
    if (!hs->hq || !hs->hcq || !hs->hc || !hs->opt_q || !hs->he) return MBL_ENOMEM;
    /* the file's held velocities, unless the caller gives all velocities (opt->v: a simulation's
     * state, projected as a whole as before; only opt->velocities are held then) */
    for (int i = 0; !opt->v && i < n; i++)
        if (mv->v_given[i] == 1) hs->hq[i] = 1, hs->hcq[i] = v0[i], hs->any = 1;
    for (int j = 0; j < mv->nheld; j++) hs->hc[j] = mv->held_val[j], hs->he[j] = !opt->v, hs->any |= !opt->v;
    for (int g = 0; g < opt->nvelocities; g++) {
        const char *name = opt->velocities[g].name;
        double val = opt->velocities[g].value;
        int coord = 0, i = name ? model_velocity_find(md, name, &coord) : -1;
        if (i < 0)
            return mbl_error(st, MBL_EARG,
                             "%s: no coordinate or key of velocities named '%s' (in the held velocities)", mv->file,
                             name ? name : "(null)");
        if (!isfinite(val))
            return mbl_error(st, MBL_EARG, "%s: the held velocity '%s' is not a finite number", mv->file, name);
        hs->any = 1;
        if (!coord) {
            hs->hc[i] = val, hs->he[i] = 1;
            continue;
        }
        if (!*vset) {
            if (!(*vset = mbl_alloc_array((size_t)n + 1, sizeof **vset))) return MBL_ENOMEM;
            memcpy(*vset, v0, (size_t)n * sizeof **vset);
        }
        (*vset)[i] = val;
        hs->hq[i] = 1, hs->hcq[i] = val, hs->opt_q[i] = 1;
    }
    int at = opt->at >= 0 ? opt->at : (int)mv->at;
    if (at == MBL_AT_STEADY && (mv->nheld || opt->nvelocities))
        for (int g = -1; g < opt->nvelocities; g++) {
            int coord = 0, j = g < 0 ? (mv->nheld ? 0 : -1) : model_velocity_find(md, opt->velocities[g].name, &coord);
            if (j >= 0 && !coord)
                return mbl_error(st, MBL_EARG,
                                 "%s: the held velocity '%s' applies to at: given only (at: steady keeps the velocities "
                                 "of the coordinates: give those)",
                                 mv->file, mv->held_label[j]);
        }
    return 0;
}

int mbl_operating_point(const mbl_model *md, const mbl_opoint_options *opt_in, mbl_point **out, mbl_status *st)
{
    if (!out) return mbl_error(st, MBL_EARG, "mbl_operating_point: out is NULL");
    *out = NULL;
    if (!md) return mbl_error(st, MBL_EARG, "mbl_operating_point: model is NULL");
    if (core_progress(st, "point", 0, 0)) return MBL_ECANCELLED;
    model_view view;
    model_view_get(md, &view);
    const model_view *mv = &view;
    mbl_opoint_options opt;
    if (opt_in) opt = *opt_in;
    else mbl_opoint_options_default(&opt);
    mbl_point *pt = opoint_point_new(md);
    opoint_subproblem sp;
    la_spqr *qr = NULL; /* the initial multipliers' QR, for the rank test */
    int rc = pt ? opoint_sub_init(&sp, md, pt, &opt) : MBL_ENOMEM;
    if (rc) {
        if (pt) opoint_sub_free(&sp);
        mbl_point_free(pt);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    sp.load_memo = model_take_load_memo(md); /* the first point's: freed with sp */
    pt->at = opt.at >= 0 ? (mbl_at)opt.at : mv->at;
    pt->t = opt.has_t ? opt.t : mv->time;
    memcpy(pt->q, opt.q ? opt.q : mv->q0, (size_t)mv->n * sizeof(double));
    for (int g = 0; g < opt.nguess; g++) {
        int i = 0;
        while (i < mv->n && (!opt.guess[g].name || strcmp(opt.guess[g].name, mv->qname[i]))) i++;
        if (i == mv->n) {
            opoint_sub_free(&sp);
            mbl_point_free(pt);
            return mbl_error(st, MBL_EARG, "%s: no coordinate named '%s' (in the initial guess)", mv->file,
                             opt.guess[g].name ? opt.guess[g].name : "(null)");
        }
        pt->q[i] = opt.guess[g].value;
    }
    double *guess = NULL; /* the initial guess, for the notes */
    if (opt.nguess > 0 && !(guess = mbl_alloc_array((size_t)mv->n + 1, sizeof *guess))) rc = MBL_ENOMEM;
    if (guess) memcpy(guess, pt->q, (size_t)mv->n * sizeof *guess);
    const double *q_guess = guess ? guess : opt.q ? opt.q : mv->q0;
    const double *v0 = opt.v ? opt.v : mv->v0;
    memcpy(pt->r, opt.r ? opt.r : mv->r0, (size_t)mv->nr * sizeof(double));
    held_set hs;
    memset(&hs, 0, sizeof hs);
    double *vset = NULL; /* v0 with the options' held coordinate rates */
    if (!rc) rc = held_setup(md, &opt, v0, &hs, &vset, st);
    if (rc && rc != MBL_ENOMEM) {
        opoint_sub_free(&sp);
        mbl_free(guess);
        mbl_free(hs.hq), mbl_free(hs.opt_q), mbl_free(hs.he), mbl_free(hs.hcq), mbl_free(hs.hc), mbl_free(vset);
        mbl_point_free(pt);
        return rc;
    }
    if (vset) v0 = vset;

    switch (rc ? -1 : (int)pt->at) {
    case -1:
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        break;
    case MBL_AT_EQUILIBRIUM:
        /* v = vdot = 0; solve R(q, 0, 0, lambda, mu) = 0, Phi(q) = 0, c(q, 0) = 0 */
        rc = initial_multipliers(&sp, &qr, st);
        if (rc) break;
        /* with user ODE states: der(X) = 0 too, X and the implicit variables solved with q */
        memcpy(pt->X, mv->X0, (size_t)mv->nX * sizeof(double));
        rc = solve_point(&sp, "the equilibrium",
                         RB(MBL_ROW_EOM) | RB(MBL_ROW_ODE) | RB(MBL_ROW_VAR) | RB(MBL_ROW_PHI) | RB(MBL_ROW_NH),
                         RB(MBL_BLK_Q) | RB(MBL_BLK_LAMBDA) | RB(MBL_BLK_MU) | RB(MBL_BLK_X) | RB(MBL_BLK_Z), NULL, st);
        if (!rc && sp.rank_last >= 0 && sp.rank_last < sp.ncol) pt->min_norm_multipliers = 1;
        if (!rc) note_far_moves(pt, md, q_guess, opt.move_note);
        if (!rc) note_unused_velocities(pt, md, v0);
        break;
    case MBL_AT_GIVEN:
        rc = solve_given(&sp, v0, &hs, st);
        if (!rc && !(pt->v_held = mbl_calloc((size_t)mv->n + 1, sizeof *pt->v_held)))
            rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        for (int i = 0; !rc && i < mv->n; i++) pt->v_held[i] = hs.hq[i] ? (mv->v_given[i] == 1 && !hs.opt_q[i] ? 1 : 2) : 0;
        for (int j = 0; !rc && j < mv->nheld; j++) pt->nheld_expr += hs.he[j];
        break;
    case MBL_AT_STEADY:
        rc = solve_steady(&sp, v0, &hs, q_guess, opt.move_note, st);
        break;
    case MBL_AT_TRIM:
        rc = opoint_trim(&sp, v0, q_guess, st);
        if (!rc) note(pt, "trim: %s", pt->trim, 0);
        break;
    default:
        rc = mbl_error(st, MBL_EARG, "unknown operating point kind %d", (int)pt->at);
    }
    int vanished = -1;
    if (!rc) rc = opoint_constraint_rank(&sp, qr, q_guess, &pt->rank_phi_q, &vanished, st);
    la_spqr_free(qr);
    if (!rc && vanished >= 0) pt->singular_row = vanished + 1, note_vanished_row(pt, md, vanished);
    if (!rc && pt->rank_phi_q < mv->m + mv->k) {
        char buf[64];
        snprintf(buf, sizeof buf, "%d", pt->rank_phi_q);
        note(pt, "the constraint Jacobian has rank %s (rank deficiency %g): minimum-norm multipliers", buf,
             (double)(mv->m + mv->k - pt->rank_phi_q));
        pt->min_norm_multipliers = 1;
    }
    if (rc && st && !opoint_msg_has_file(st, mv->file)) mbl_error_prefix(st, "%s", mv->file);
    rc = opoint_check_solved(&sp, rc, st);
    if (rc && core_progress_stopped()) rc = mbl_error(st, MBL_ECANCELLED, "cancelled during the operating point");
    if (!rc) { /* the Jacobian's values at the point, when the last evaluation was there: to the linearization */
        model_fill_syms_pt(md, pt, sp.syms);
        opoint_keep_jac(&sp);
    }
    opoint_sub_free(&sp);
    mbl_free(guess);
    mbl_free(hs.hq), mbl_free(hs.opt_q), mbl_free(hs.he), mbl_free(hs.hcq), mbl_free(hs.hc), mbl_free(vset);
    if (rc) {
        mbl_point_free(pt);
        return rc;
    }
    *out = pt;
    return 0;
}
