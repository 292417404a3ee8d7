/* Globalization of the operating-point solver (docs/convergence.md): the driver opoint_solve,
 * which falls back from Newton with line search and Levenberg-Marquardt steps (solve.c) to a
 * continuation, and the Newton homotopy followed in t for large subproblems (the dense
 * arc-length version, with a spring to the guess, is arclength.c).
 *
 * Why the Newton homotopy H(x, t) = F(x) - (1 - t) F(xs) and not a ramp of gravity and loads: it
 * is solved at t = 0 by the start xs itself, whatever the model (a guess that does not assemble,
 * a coupler, springs with preload, an ode state: no load to name and nothing to ramp), and the
 * path x(t) it follows is the set of points where the residual points the way it did at the guess,
 * shrunk by (1 - t): it ends on the solution connected to the guess, not on whichever one a long
 * Newton step happened to land. A ramp of gravity starts from a configuration that must itself be
 * solved (the unloaded mechanism, often a continuum) and can end on another branch than the
 * guess's. Along the path dx/dt solves J dx/dt = -F(xs) (the tangent, from the same minimum-norm
 * Newton step); each continuation step predicts along it and corrects with Newton on
 * H(., t + dt) to a scaled residual of 1e-8; the step dt is halved when the corrector fails or
 * lands far from the prediction, doubled after an easy one, and limited so that no unknown moves
 * by more than 0.2 of its scale. Where dt falls below 1e-6 the path turns back (a fold: the
 * Jacobian is singular there); that is the reason given. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "opoint_solve.h"

/* largest predicted move of an unknown per continuation step, relative to max(1, |x|) */
#define HOM_MAX_MOVE 0.2
#define HOM_DT_FIRST 0.125
#define HOM_DT_MIN 1e-6
#define HOM_MAX_STEPS 1000
#define HOM_CORR_ITER 8
#define HOM_CORR_TOL 1e-8
/* a Newton solution whose coordinates moved by more than this times max(1, |guess|) is compared
 * with the homotopy's, and the one nearer the start kept */
#define OPOINT_FAR 0.5

static double xscale(double x) { return fmax(1.0, fabs(x)); }

static void get_x(opoint_subproblem *sp, double *x)
{
    for (int c = 0; c < sp->ncol; c++) x[c] = *opoint_unknown_ptr(sp->md, sp->pt, sp->cols[c]);
}

static void set_x(opoint_subproblem *sp, const double *x)
{
    for (int c = 0; c < sp->ncol; c++) *opoint_unknown_ptr(sp->md, sp->pt, sp->cols[c]) = x[c];
}

/* the name of unknown column c of the subproblem (a coordinate's name, or the block's) */
static void col_name(const opoint_subproblem *sp, int c, char *buf, size_t size)
{
    static const char *blk[MBL_NBLK] = {"der(der(q))", "lambda", "mu", "der(q)", "q", "der(X)", "Z", "X", "r"};
    int col = sp->cols[c];
    for (int b = 0; b < MBL_NBLK; b++) {
        int j0 = model_blk0(sp->md, b), j1 = model_blk0(sp->md, b + 1);
        if (col < j0 || col >= j1) continue;
        if (b == MBL_BLK_Q) snprintf(buf, size, "%.60s", sp->mv.qname[col - j0]);
        else snprintf(buf, size, "%s[%d]", blk[b], col - j0 + 1);
        return;
    }
    snprintf(buf, size, "unknown %d", col);
}

/* largest |a_c - b_c| / max(1, |b_c|) over the coordinates (q block) of the subproblem, or over
 * every unknown when it has no coordinates */
static double q_dist(const opoint_subproblem *sp, const double *a, const double *b)
{
    int jq0 = model_blk0(sp->md, MBL_BLK_Q), jq1 = model_blk0(sp->md, MBL_BLK_Q + 1), anyq = 0;
    double d = 0, dall = 0;
    for (int c = 0; c < sp->ncol; c++) {
        double e = fabs(a[c] - b[c]) / xscale(b[c]);
        dall = fmax(dall, e);
        if (sp->cols[c] >= jq0 && sp->cols[c] < jq1) d = fmax(d, e), anyq = 1;
    }
    return anyq ? d : dall;
}

/* the tangent J xdot = -F0 at the current point (sp->jac current) */
static int tangent(opoint_subproblem *sp, const double *F0, double *xdot, mbl_status *st)
{
    for (int i = 0; i < sp->nrow; i++) sp->F[sp->rows[i]] = F0[i];
    return opoint_newton_step(sp, xdot, st);
}

/* One continuation step from (xt, *t) with step *dt: predicted along xdot, corrected. On success
 * *t advances and the point holds the corrected x; else the point is xt again and *dt halved. */
static int hom_step(opoint_subproblem *sp, const double *xt, const double *xdot, double *xp, double *t, double *dt,
                    int *ok, mbl_status *st)
{
    int n = sp->ncol;
    double t1 = *t + *dt;
    if (t1 > 1.0 - 1e-12) t1 = 1.0;
    for (int c = 0; c < n; c++) xp[c] = xt[c] + (t1 - *t) * xdot[c];
    set_x(sp, xp);
    sp->hom_t = t1;
    opoint_newton_par par = {1, HOM_CORR_ITER, HOM_CORR_TOL};
    opoint_newton_out out;
    mbl_status st2;
    int rc = opoint_newton(sp, "the continuation", 0, &par, &out, &st2);
    *ok = 0;
    if (rc == MBL_ENOMEM) return mbl_error(st, MBL_ENOMEM, "out of memory");
    double *x = xp; /* the corrected point, compared with the prediction */
    if (!rc) {
        int far = 0;
        for (int c = 0; c < n && !far; c++) {
            double xc = *opoint_unknown_ptr(sp->md, sp->pt, sp->cols[c]);
            far = !(fabs(xc - x[c]) <= 0.5 * HOM_MAX_MOVE * xscale(x[c]));
        }
        if (!far) {
            *ok = 1;
            *t = t1;
            if (out.it <= 3) *dt *= 2;
            return 0;
        }
    }
    set_x(sp, xt);
    *dt *= 0.5;
    return 0;
}

int opoint_homotopy(opoint_subproblem *sp, const double *xs, char *reason, size_t reason_size, mbl_status *st)
{
    int n = sp->ncol, m = sp->nrow, rc = 0;
    double *F0 = mbl_alloc_array((size_t)m + 1, sizeof *F0), *xdot = mbl_alloc_array((size_t)n + 1, sizeof *xdot);
    double *xt = mbl_alloc_array((size_t)n + 1, sizeof *xt), *xp = mbl_alloc_array((size_t)n + 1, sizeof *xp);
    if (!F0 || !xdot || !xt || !xp) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    double f2, finf;
    reason[0] = '\0';
    if (!rc) {
        set_x(sp, xs);
        sp->hom_F0 = NULL;
        rc = opoint_eval_F(sp, &f2, &finf, st);
    }
    if (!rc) {
        for (int i = 0; i < m; i++) F0[i] = sp->F[sp->rows[i]];
        sp->hom_F0 = F0;
        sp->hom_t = 0;
        memcpy(xt, xs, (size_t)n * sizeof *xt);
    }
    double t = 0, dt = HOM_DT_FIRST;
    for (int step = 0; !rc && t < 1.0; step++) {
        if (step >= HOM_MAX_STEPS) {
            snprintf(reason, reason_size, "the continuation from the guess took %d steps and reached only t = %.3g",
                     step, t);
            rc = MBL_ENOCONV;
            break;
        }
        sp->hom_t = t;
        rc = opoint_eval_F(sp, &f2, &finf, st);
        if (!rc) rc = opoint_eval_jac(sp, st);
        if (!rc) rc = tangent(sp, F0, xdot, st);
        if (rc) break;
        double s = 0;
        int big = 0;
        for (int c = 0; c < n; c++) {
            double e = fabs(xdot[c]) / xscale(xt[c]);
            if (!(e <= s)) s = e, big = c;
        }
        if (!isfinite(s)) s = INFINITY;
        if (s * dt > HOM_MAX_MOVE) dt = HOM_MAX_MOVE / s;
        int ok = 0;
        while (!rc && !ok && dt >= HOM_DT_MIN) rc = hom_step(sp, xt, xdot, xp, &t, &dt, &ok, st);
        if (rc) break;
        if (!ok) {
            char name[80];
            col_name(sp, big, name, sizeof name);
            snprintf(reason, reason_size,
                     "the continuation F(x) = (1 - t) F(guess) from the guess turns back at t = %.3g (a fold: the "
                     "Jacobian is singular there), near %s = %.4g",
                     t, name, xt[big]);
            rc = MBL_ENOCONV;
            break;
        }
        get_x(sp, xt);
    }
    sp->hom_F0 = NULL;
    sp->hom_t = 0;
    if (rc == MBL_ENOCONV) rc = mbl_error(st, MBL_ENOCONV, "%s", reason);
    mbl_free(F0), mbl_free(xdot), mbl_free(xt), mbl_free(xp);
    return rc;
}

/* Newton from the point; where it fails away from a solution (too many iterations, or the line
 * search and Levenberg-Marquardt stalled) the Newton homotopy from the same start, then Newton
 * again from its end. A degenerate root (Newton converging only linearly at a tiny scaled
 * residual) is reported as such, not continued. Where Newton converged but a coordinate moved by
 * more than OPOINT_FAR of its scale, the homotopy's solution is taken when it lies nearer the
 * start. */
/* "; the guess violates constraint NAME by X" when a constraint row of the subproblem is violated at
 * the start by more than 1e-6 (the largest), else "" */
static void guess_violation(opoint_subproblem *sp, const double *xs, char *buf, size_t size)
{
    const model_view *mv = &sp->mv;
    int p0 = mv->row0[MBL_ROW_PHI], big = -1;
    double f2, finf, worst = 1e-6;
    mbl_status st2;
    buf[0] = '\0';
    set_x(sp, xs);
    if (opoint_eval_F(sp, &f2, &finf, &st2)) return;
    for (int i = 0; i < sp->nrow; i++) {
        int row = sp->rows[i];
        if (row >= p0 && row < p0 + mv->m && fabs(sp->F[row]) > worst) worst = fabs(sp->F[row]), big = row - p0;
    }
    if (big >= 0)
        snprintf(buf, size, "; the guess violates %.80s by %.3g", mbl_model_constraint_name(sp->md, big),
                 worst);
}

/* "; at the guess the equation of motion of coordinate X is unbalanced ..." when, at the point
 * (the guess, after guess_violation), a row of the subproblem carries at least half the largest
 * residual and has no nonzero Jacobian entry in the subproblem's unknowns: no Newton step moves it
 * (a load that no stiffness balances: a spring constant set to 0; or a stiffness that vanishes at
 * the guess, as k x^3 at x = 0, which a better guess cures); else "" */
static void dead_row(opoint_subproblem *sp, char *buf, size_t size)
{
    const model_view *mv = &sp->mv;
    double f2, finf;
    mbl_status st2;
    buf[0] = '\0';
    if (opoint_eval_F(sp, &f2, &finf, &st2) || opoint_jac(sp, &st2) || !(finf > 0)) return;
    unsigned char *live = mbl_calloc((size_t)sp->nrow + 1, 1);
    if (!live) return;
    for (int p = 0; p < mv->jac.nz; p++) {
        int r = sp->row_pos[mv->jac.row[p]], c = sp->col_pos[mv->jac.col[p]];
        if (r >= 0 && c >= 0 && sp->jac[p] != 0) live[r] = 1;
    }
    int e0 = mv->row0[MBL_ROW_EOM], p0 = mv->row0[MBL_ROW_PHI];
    for (int i = 0; i < sp->nrow && !buf[0]; i++) {
        int row = sp->rows[i];
        if (live[i] || !(fabs(sp->F[row]) >= 0.5 * finf)) continue;
        if (row >= e0 && row < e0 + mv->n)
            snprintf(buf, size, "; at the guess the equation of motion of coordinate '%.60s' is unbalanced "
                     "(residual %.4g) and depends on no unknown: no step moves it (a load that no stiffness holds, "
                     "say a spring constant 0, or a stiffness that vanishes at the guess: try another --guess)", mv->qname[row - e0], sp->F[row]);
        else if (row >= p0 && row < p0 + mv->m)
            snprintf(buf, size, "; at the guess the constraint %.60s is violated by %.4g and depends on no "
                     "unknown: no step moves it", mbl_model_constraint_name(sp->md, row - p0), sp->F[row]);
    }
    mbl_free(live);
}

/* the continuation: in arc length where the subproblem is small enough for dense algebra, else in t */
static int continuation(opoint_subproblem *sp, const double *xs, char *reason, size_t size, mbl_status *st)
{
    if (sp->ncol < OPOINT_DENSE_MAX && sp->nrow <= OPOINT_DENSE_MAX) return opoint_arclength(sp, xs, reason, size, st);
    return opoint_homotopy(sp, xs, reason, size, st);
}

int opoint_solve(opoint_subproblem *sp, const char *what, int linear, mbl_status *st)
{
    int n = sp->ncol;
    opoint_newton_par par = {0, 0, 0};
    opoint_newton_out out;
    if (linear) return opoint_newton(sp, what, 1, &par, &out, st);
    double *xs = mbl_alloc_array((size_t)n + 1, sizeof *xs), *x1 = mbl_alloc_array((size_t)n + 1, sizeof *x1);
    if (!xs || !x1) {
        mbl_free(xs), mbl_free(x1);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    get_x(sp, xs);
    sp->neval_fail = 0;
    sp->eval_fail[0] = '\0';
    double res0 = sp->pt->residual, sres0 = sp->pt->scaled_residual;
    int rc = opoint_newton(sp, what, 0, &par, &out, st);
    char reason[300];
    if (sp->newton_only) {
        sp->hard = rc || out.damped > 0 || q_dist(sp, (get_x(sp, x1), x1), xs) > OPOINT_FAR;
        mbl_free(xs), mbl_free(x1);
        return rc;
    }
    if (rc == MBL_ENOCONV && (out.fail == OPOINT_NEWTON_MAXITER || out.fail == OPOINT_NEWTON_STALL)) {
        sp->hard = 1;
        char first[160];
        if (out.fail == OPOINT_NEWTON_STALL)
            snprintf(first, sizeof first,
                     "Newton stalled at residual %.3g, scaled residual %.3g (a local minimum of the residual norm)",
                     out.finf, out.rs);
        else
            snprintf(first, sizeof first, "Newton did not converge in %d iterations (scaled residual %.3g)", out.it,
                     out.rs);
        mbl_status st2;
        int hrc = continuation(sp, xs, reason, sizeof reason, &st2);
        if (!hrc) rc = opoint_newton(sp, what, 0, &par, &out, st);
        else if (hrc == MBL_ENOCONV) {
            char viol[200];
            guess_violation(sp, xs, viol, sizeof viol);
            char dead[400];
            dead_row(sp, dead, sizeof dead);
            char evals[480] = "";
            if (sp->neval_fail) /* the steps that left where the model can be evaluated: the cause, often */
                snprintf(evals, sizeof evals, "; the model could not be evaluated %ld times on the way, the last: %.320s",
                         sp->neval_fail, sp->eval_fail);
            rc = mbl_error(st, MBL_ENOCONV, "%s: no solution found from the initial guess: %s; %s%s%s%s", what, first,
                           reason, viol, dead, evals);
        }
        else {
            if (st) *st = st2;
            rc = hrc;
        }
    } else if (!rc && (out.damped > 0 || q_dist(sp, (get_x(sp, x1), x1), xs) > OPOINT_FAR)) {
        /* Newton was not in its local regime (damped steps) or went far: the continuation's
         * solution, if nearer the start */
        sp->hard = 1;
        get_x(sp, x1);
        double d1 = q_dist(sp, x1, xs), res1 = sp->pt->residual, sres1 = sp->pt->scaled_residual;
        int it1 = sp->pt->iterations, rank1 = sp->rank_last;
        sp->pt->residual = res0, sp->pt->scaled_residual = sres0;
        model_jac_memo *j1 = opoint_jac_save(sp); /* the Jacobian at Newton's solution, if kept */
        sp->jac_alt = j1; /* the continuation may end where Newton did */
        mbl_status st2;
        int hrc = continuation(sp, xs, reason, sizeof reason, &st2);
        if (!hrc) hrc = opoint_newton(sp, what, 0, &par, &out, &st2);
        sp->jac_alt = NULL;
        if (!hrc) {
            double *tmp = mbl_alloc_array((size_t)n + 1, sizeof *tmp);
            if (!tmp) hrc = MBL_ENOMEM;
            else {
                get_x(sp, tmp);
                if (!(q_dist(sp, tmp, xs) < 0.9 * d1)) hrc = MBL_ENOCONV;
                mbl_free(tmp);
            }
        }
        if (hrc == MBL_ENOMEM) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        else if (hrc) { /* keep Newton's solution */
            set_x(sp, x1);
            sp->pt->residual = res1, sp->pt->scaled_residual = sres1;
            sp->pt->iterations = it1;
            sp->rank_last = rank1;
            opoint_jac_restore(sp, j1); /* not evaluated there again */
            j1 = NULL;
            double f2, finf;
            rc = opoint_eval_F(sp, &f2, &finf, st);
        }
        model_jac_memo_free(j1);
    }
    mbl_free(xs), mbl_free(x1);
    return rc;
}
