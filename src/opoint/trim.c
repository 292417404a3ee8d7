/* linearize.at: trim (docs/model-files.md, "Trim: steady turns"): the steady motion that meets the
 * file's trim targets.
 *
 * Unknowns: the accelerations vdot (n), the multipliers lambda, mu, the velocities v (n), the
 * coordinates q (but the cyclic ones no target or acceleration depends on: they keep their
 * values, as at: steady), the user states X the equations depend on, the implicit variables Z and
 * the free inputs (trim.free). Rows, all at once:
 *   the equations of motion, ode and implicit equations, and the constraints at position,
 *   velocity and acceleration level (every row group of at: steady);
 *   vdot_i = a_i(q, v) for every coordinate (the steady motion's accelerations, trim.accelerations,
 *   default 0: velocities constant, or turning with the vehicle for ground-fixed coordinates);
 *   g_j(q, v, r, t) = c_j for every target.
 * Gauss-Newton with minimum-norm steps (LAPACK dgelsd: the rotation of a turn about its centre, a
 * cyclic angle, leave directions that nothing fixes, and the least change keeps them at the
 * guess) and a backtracking line search on |F|; dense (models up to OPOINT_DENSE_MAX unknowns).
 * Before the first step the targets are checked to be independent of the rest at the guess
 * (more targets than unknowns, or a target the equations fix, is one line). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mblin/la.h"
#include "opoint_trim.h"

#define RB(g) (1u << (g))

typedef struct trim_ws {
    opoint_subproblem *sp;
    int nrow, ncol, nmod; /* rows (model rows first, nmod of them), unknowns */
    int turn;             /* a coordinate with tmove 2 (a mechanism's trim.turn) */
    int *mrow;            /* nF: position of a model row, or -1 */
    int *cols, *cpos;     /* unknown columns; cpos (nunk): position or -1 */
    double *tval;         /* ntt target values */
    double *g, *gg, *a, *ag;
    double *J, *F, *dx, *x0, *B;
    double *rsc;          /* nrow: row scales of the step and the line search */
} trim_ws;

static int trim_eval(trim_ws *w, int with_jac, mbl_status *st)
{
    opoint_subproblem *sp = w->sp;
    const mbl_model *md = sp->md;
    const model_view *mv = &sp->mv;
    mbl_point *pt = sp->pt;
    int n = mv->n, ja = model_blk0(md, MBL_BLK_A);
    model_fill_syms_pt(md, pt, sp->syms);
    int rc = model_eval_F(md, sp->syms, sp->F, sp->work, st);
    if (!rc && with_jac) rc = opoint_jac(sp, st);
    if (rc) return model_eval_error(md, sp->syms, "while the trim is solved", st);
    if ((rc = model_trim_eval(md, sp->syms, w->g, w->gg, w->a, w->ag, st))) return rc;
    for (int r = 0; r < mv->nF; r++)
        if (w->mrow[r] >= 0) w->F[w->mrow[r]] = sp->F[r];
    for (int i = 0; i < n; i++) w->F[w->nmod + i] = pt->vdot[i] - w->a[i];
    for (int j = 0; j < mv->ntt; j++) w->F[w->nmod + n + j] = w->g[j] - w->tval[j];
    if (!with_jac) return 0;
    int nr = w->nrow;
    memset(w->J, 0, (size_t)nr * (size_t)w->ncol * sizeof *w->J);
    for (int p = 0; p < mv->jac.nz; p++) {
        int r = w->mrow[mv->jac.row[p]], c = w->cpos[mv->jac.col[p]];
        if (r >= 0 && c >= 0) w->J[(size_t)c * (size_t)nr + (size_t)r] += sp->jac[p];
    }
    for (int i = 0; i < n; i++) {
        int r = w->nmod + i, c = w->cpos[ja + i];
        if (c >= 0) w->J[(size_t)c * (size_t)nr + (size_t)r] += 1.0;
        for (int p = mv->ta_gp[i]; p < mv->ta_gp[i + 1]; p++)
            if ((c = w->cpos[mv->ta_gi[p]]) >= 0) w->J[(size_t)c * (size_t)nr + (size_t)r] -= w->ag[p];
    }
    for (int j = 0; j < mv->ntt; j++)
        for (int p = mv->tt_gp[j]; p < mv->tt_gp[j + 1]; p++) {
            int c = w->cpos[mv->tt_gi[p]];
            if (c >= 0) w->J[(size_t)c * (size_t)nr + (size_t)(w->nmod + n + j)] += w->gg[p];
        }
    return 0;
}

/* max-norm and the scaled residual max_i |F_i| / max(sum_c |J_ic| max(1, |x_c|), tiny) */
static double trim_scaled(const trim_ws *w, double *finf)
{
    double worst = 0;
    *finf = 0;
    for (int r = 0; r < w->nrow; r++) {
        double s = 0;
        for (int c = 0; c < w->ncol; c++) {
            double x = *opoint_unknown_ptr(w->sp->md, w->sp->pt, w->cols[c]);
            s += fabs(w->J[(size_t)c * (size_t)w->nrow + (size_t)r]) * fmax(1.0, fabs(x));
        }
        double f = fabs(w->F[r]);
        *finf = fmax(*finf, f);
        worst = fmax(worst, s > 0 ? f / s : (f > 0 ? INFINITY : 0));
    }
    return worst;
}

/* the 2-norm of the residual with every row scaled by rsc */
static double trim_norm2(const trim_ws *w)
{
    double s = 0;
    for (int r = 0; r < w->nrow; r++) s += (w->rsc[r] * w->F[r]) * (w->rsc[r] * w->F[r]);
    return sqrt(s);
}

/* rsc: each row scaled by the inverse of sum_c |J_rc| max(1, |x_c|) (rows of forces of 1e5 and of
 * velocity constraints of 1 weigh alike in the least-squares step and the line search) */
static void trim_row_scales(trim_ws *w)
{
    for (int r = 0; r < w->nrow; r++) {
        double s = 0;
        for (int c = 0; c < w->ncol; c++) {
            double x = *opoint_unknown_ptr(w->sp->md, w->sp->pt, w->cols[c]);
            s += fabs(w->J[(size_t)c * (size_t)w->nrow + (size_t)r]) * fmax(1.0, fabs(x));
        }
        w->rsc[r] = s > 0 ? 1.0 / s : 1.0;
    }
}

/* The number of targets independent of the other rows at the current point (*nind): rank [J] -
 * rank [J without the target rows]. */
static int trim_count_independent(trim_ws *w, int *nind, mbl_status *st)
{
    const model_view *mv = &w->sp->mv;
    int nr = w->nrow, nc = w->ncol, nt = mv->ntt, rall = 0, rrest = 0, ld = nr > nc ? nr : nc;
    double rcond = w->sp->opt->rank_tol;
    /* ranks of the scaled matrix: rows by rsc, columns by max(1, |x_c|) */
    trim_row_scales(w);
    for (int c = 0; c < nc; c++) {
        double cs = fmax(1.0, fabs(*opoint_unknown_ptr(w->sp->md, w->sp->pt, w->cols[c])));
        for (int r = 0; r < nr; r++) w->B[(size_t)c * (size_t)nr + r] = w->rsc[r] * w->J[(size_t)c * (size_t)nr + r] * cs;
    }
    double *S = mbl_alloc_array((size_t)nr * (size_t)nc + 1, sizeof *S);
    if (!S) return mbl_error(st, MBL_ENOMEM, "out of memory");
    memcpy(S, w->B, (size_t)nr * (size_t)nc * sizeof *S);
    memset(w->dx, 0, (size_t)ld * sizeof *w->dx);
    int rc = mbla_lstsq(nr, nc, 1, w->B, nr, w->dx, ld, rcond, &rall, st);
    for (int c = 0; !rc && c < nc; c++)
        memcpy(w->B + (size_t)c * (size_t)(nr - nt), S + (size_t)c * (size_t)nr, (size_t)(nr - nt) * sizeof *w->B);
    mbl_free(S);
    memset(w->dx, 0, (size_t)ld * sizeof *w->dx);
    if (!rc) rc = mbla_lstsq(nr - nt, nc, 1, w->B, nr - nt, w->dx, ld, rcond, &rrest, st);
    *nind = rall - rrest;
    return rc;
}

/* The targets independent of the other rows (trim_count_independent): all of them, else one line. */
static int trim_check_count(trim_ws *w, const char *where, mbl_status *st)
{
    int nt = w->sp->mv.ntt, nind = 0, rc = trim_count_independent(w, &nind, st);
    if (rc || nind >= nt) return rc;
    return mbl_error(st, MBL_EMODEL,
                     "%s: the %d trim targets over-determine the steady motion: only %d of them are independent of its "
                     "equations %s (more targets than unknowns, or a target the equations fix): drop a "
                     "target or free an input (trim.free)",
                     w->sp->mv.file, nt, nind, where);
}

/* At the solution: every free input determined, i.e. its unit column (scaled as the step's)
 * outside the null space of the scaled Jacobian: the norm of its projection on the null space
 * (rows of V^T past the rank) at most OPOINT_TRIM_UNDETERMINED. Else one line naming the input
 * (nothing the trim solves depends on it, or only together with another unknown). */
static int trim_check_free(trim_ws *w, mbl_status *st)
{
    const model_view *mv = &w->sp->mv;
    int nr = w->nrow, nc = w->ncol, rank = 0, jr = model_blk0(w->sp->md, MBL_BLK_R), rc = 0;
    int any = 0;
    for (int i = 0; i < mv->nr; i++) any |= mv->tfree[i];
    if (!any) return 0;
    trim_row_scales(w);
    int nrp = nr > nc ? nr : nc; /* rows padded with zeros: the full V^T of a wide matrix too */
    double *S = mbl_calloc((size_t)nrp * (size_t)nc + 1, sizeof *S), *sv = mbl_calloc((size_t)nc + 1, sizeof *sv);
    double *VT = mbl_alloc_array((size_t)nc * (size_t)nc + 1, sizeof *VT);
    if (!S || !sv || !VT) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int c = 0; !rc && c < nc; c++) {
        double cs = fmax(1.0, fabs(*opoint_unknown_ptr(w->sp->md, w->sp->pt, w->cols[c])));
        for (int r = 0; r < nr; r++) S[(size_t)c * (size_t)nrp + r] = w->rsc[r] * w->J[(size_t)c * (size_t)nr + r] * cs;
    }
    if (!rc) rc = mbla_svd(nrp, nc, S, nrp, 'A', sv, NULL, 1, VT, nc, st);
    if (!rc) rank = mbla_rank_from_diag(nrp, nc, nc, sv, 1, w->sp->opt->rank_tol);
    for (int i = 0; !rc && i < mv->nr; i++) {
        int c = w->cpos[jr + i];
        if (!mv->tfree[i] || c < 0) continue;
        double p = 0;
        for (int k = rank; k < nc; k++) p += VT[(size_t)c * (size_t)nc + k] * VT[(size_t)c * (size_t)nc + k];
        if (sqrt(p) > OPOINT_TRIM_UNDETERMINED)
            rc = mbl_error(st, MBL_EMODEL,
                           "%s: the trim leaves the free input '%s' undetermined (the steady-motion equations and the "
                           "targets do not fix it: nothing depends on it, or only together with another unknown): drop "
                           "it from trim.free or add a target",
                           mv->file, mv->rname[i]);
    }
    mbl_free(S), mbl_free(sv), mbl_free(VT);
    return rc;
}

/* the row a residual belongs to, for messages */
static void trim_row_label(const trim_ws *w, int r, char *buf, size_t cap)
{
    const model_view *mv = &w->sp->mv;
    if (r >= w->nmod + mv->n) snprintf(buf, cap, "the target '%s'", mv->tt_label[r - w->nmod - mv->n]);
    else if (r >= w->nmod) snprintf(buf, cap, "the acceleration of %s", mv->qname[r - w->nmod]);
    else snprintf(buf, cap, "the equations of the model");
}

static void trim_append(char *buf, size_t cap, const char *fmt, const char *a, double x)
{
    size_t len = strlen(buf);
    if (len + 1 < cap) snprintf(buf + len, cap - len, fmt, a, x);
}

/* " label = value," for every target (the last without the comma), appended to buf */
static void trim_append_targets(const trim_ws *w, char *buf, size_t cap)
{
    const model_view *mv = &w->sp->mv;
    for (int j = 0; j < mv->ntt; j++) {
        trim_append(buf, cap, " %s = ", mv->tt_label[j], 0);
        trim_append(buf, cap, "%s%.9g", "", w->tval[j]);
        if (j + 1 < mv->ntt) trim_append(buf, cap, "%s,", "", 0);
    }
}

static int trim_newton(trim_ws *w, mbl_status *st)
{
    opoint_subproblem *sp = w->sp;
    const model_view *mv = &sp->mv;
    const mbl_opoint_options *opt = sp->opt;
    int nr = w->nrow, nc = w->ncol, ld = nr > nc ? nr : nc, rc = 0;
    double finf = 0, rs = 0;
    int guess_ind = 0; /* a turn's targets independent at the guess */
    for (int it = 0; it <= opt->max_iter; it++) {
        if ((rc = trim_eval(w, 1, st))) return rc;
        /* at the guess; a turn's rows (mech/trim.c) are consistent only near a steady motion, so
         * there the count is checked where Gauss-Newton stops short (and only counted here) */
        if (it == 0 && !w->turn && (rc = trim_check_count(w, "at the guess", st))) return rc;
        if (it == 0 && w->turn && (rc = trim_count_independent(w, &guess_ind, st))) return rc;
        rs = trim_scaled(w, &finf);
        sp->pt->iterations = it;
        if (rs <= opt->tol || finf <= opt->abs_tol) return 0;
        if (it == opt->max_iter) break;
        trim_row_scales(w);
        for (int c = 0; c < nc; c++)
            for (int r = 0; r < nr; r++) w->B[(size_t)c * (size_t)nr + r] = w->rsc[r] * w->J[(size_t)c * (size_t)nr + r];
        memset(w->dx, 0, (size_t)ld * sizeof *w->dx);
        for (int r = 0; r < nr; r++) w->dx[r] = -w->rsc[r] * w->F[r];
        if ((rc = mbla_lstsq(nr, nc, 1, w->B, nr, w->dx, ld, opt->rank_tol, NULL, st))) return rc;
        for (int c = 0; c < nc; c++) w->x0[c] = *opoint_unknown_ptr(sp->md, sp->pt, w->cols[c]);
        double f0 = trim_norm2(w), alpha = 1, f1 = INFINITY, smax = 0;
        for (int c = 0; c < nc; c++) smax = fmax(smax, fabs(w->dx[c]) / fmax(1.0, fabs(w->x0[c])));
        for (int ls = 0; ls < 30; ls++, alpha *= 0.5) {
            for (int c = 0; c < nc; c++) *opoint_unknown_ptr(sp->md, sp->pt, w->cols[c]) = w->x0[c] + alpha * w->dx[c];
            mbl_status st1;
            mbl_status_clear(&st1);
            if (trim_eval(w, 0, &st1)) continue; /* outside the expressions' domain: shorter */
            f1 = trim_norm2(w);
            if (f1 < f0 || f1 <= opt->abs_tol) break;
        }
        if (!(f1 < f0)) { /* no progress: at the rounding floor, or stalled */
            for (int c = 0; c < nc; c++) *opoint_unknown_ptr(sp->md, sp->pt, w->cols[c]) = w->x0[c];
            if (rs <= OPOINT_TRIM_FLOOR * opt->tol && smax <= OPOINT_TRIM_FLOOR * opt->step_tol) return trim_eval(w, 1, st);
            break;
        }
    }
    /* A turn's targets fewer independent where Gauss-Newton stops than at the guess (where its rows,
     * consistent only near a steady motion, may already lack one): not a count of targets and
     * unknowns but the edge of the steady motions the model has (a fold: the residual's
     * least-squares minimum where its Jacobian loses rank, a turn beyond the tires' grip); as
     * few at both: over-determined */
    int fold = 0, nind_stop = 0;
    if (w->turn) {
        if ((rc = trim_count_independent(w, &nind_stop, st))) return rc;
        fold = nind_stop < mv->ntt && nind_stop < guess_ind;
        if (!fold && (rc = trim_check_count(w, "where Gauss-Newton stops", st))) return rc;
    }
    int worst = 0;
    for (int r = 0; r < nr; r++)
        if (fabs(w->F[r]) > fabs(w->F[worst])) worst = r;
    char lab[200];
    trim_row_label(w, worst, lab, sizeof lab);
    if (fold) {
        char at[600] = "";
        trim_append_targets(w, at, sizeof at);
        return mbl_error(st, MBL_ENOCONV,
                         "%s: no steady motion at%s: Gauss-Newton stops at a residual of %.3g (largest in %s; scaled "
                         "%.3g) where the targets lose their independence of the equations (%d of %d, %d at the "
                         "guess): the edge of the steady motions the model has, the targets beyond it (a turn beyond "
                         "the tires' grip: a lateral acceleration above what they can hold)",
                         mv->file, at, finf, lab, rs, nind_stop, mv->ntt, guess_ind);
    }
    return mbl_error(st, MBL_ENOCONV,
                     "%s: no steady motion meets the trim targets: Gauss-Newton from the guesses stops at a residual of "
                     "%.3g (largest in %s; scaled %.3g): the targets may be out of the model's reach, or the guesses too "
                     "far (give better coordinates, velocities or inputs)",
                     mv->file, finf, lab, rs);
}

/* The unknowns and rows of the trim (see the head of the file). */
static int trim_setup(trim_ws *w, mbl_status *st)
{
    opoint_subproblem *sp = w->sp;
    const mbl_model *md = sp->md;
    const model_view *mv = &sp->mv;
    int n = mv->n, nunk = mv->nunk;
    static const int groups[] = {MBL_ROW_EOM, MBL_ROW_ODE, MBL_ROW_VAR, MBL_ROW_PHIDD, MBL_ROW_NHD,
                                 MBL_ROW_PHID, MBL_ROW_NH, MBL_ROW_PHI};
    w->mrow = mbl_alloc_array((size_t)mv->nF + 1, sizeof *w->mrow);
    w->cpos = mbl_alloc_array((size_t)nunk + 1, sizeof *w->cpos);
    w->cols = mbl_alloc_array((size_t)nunk + 1, sizeof *w->cols);
    if (!w->mrow || !w->cpos || !w->cols) return mbl_error(st, MBL_ENOMEM, "out of memory");
    w->nmod = 0;
    for (int r = 0; r < mv->nF; r++) {
        int in = 0;
        for (size_t g = 0; g < sizeof groups / sizeof *groups && !in; g++)
            in = r >= mv->row0[groups[g]] && r < mv->row0[groups[g] + 1];
        w->mrow[r] = in ? w->nmod++ : -1;
    }
    /* the unknowns: all but the cyclic coordinates nothing of the trim depends on, the rates of
     * the coordinates that stay put, the ode
     * states no residual depends on, and the inputs not freed */
    int jq = model_blk0(md, MBL_BLK_Q), jx = model_blk0(md, MBL_BLK_X), jr = model_blk0(md, MBL_BLK_R);
    int *use = w->cpos;
    for (int c = 0; c < nunk; c++) use[c] = 1;
    for (int i = 0; i < n; i++) use[jq + i] = (!mv->cyclic[i] && !mv->tmove[i]) || mv->tmove[i] == 2;
    for (int i = 0; i < n; i++) w->turn |= mv->tmove[i] == 2;
    for (int p = 0; p < mv->tt_gp[mv->ntt]; p++) use[mv->tt_gi[p]] = 1;
    for (int p = 0; p < mv->ta_gp[n]; p++) use[mv->ta_gi[p]] = 1;
    for (int i = 0; i < n; i++) /* a moving coordinate keeps its value: the phase of the motion
                                   (but a mechanism's turn: solved, the minimum-norm steps keep
                                   the phase and the centre at the guess) */
        if (mv->tmove[i] == 1) use[jq + i] = 0;
    for (int i = 0; i < mv->nX; i++) use[jx + i] = 0;
    for (int p = 0; p < mv->jac.nz; p++)
        if (mv->jac.col[p] >= jx && mv->jac.col[p] < jx + mv->nX) use[mv->jac.col[p]] = 1;
    for (int i = 0; i < mv->nr; i++) use[jr + i] = mv->tfree[i];
    /* a coordinate the equations depend on stays put in a steady motion (its rate 0) unless
     * trim.accelerations names it (a heading that turns) */
    int jv = model_blk0(md, MBL_BLK_V);
    for (int i = 0; i < n; i++)
        if (!mv->cyclic[i] && !mv->tmove[i]) use[jv + i] = 0, sp->pt->v[i] = 0;
    w->ncol = 0;
    for (int c = 0; c < nunk; c++) {
        int u = use[c];
        use[c] = u ? w->ncol : -1;
        if (u) w->cols[w->ncol++] = c;
    }
    w->nrow = w->nmod + n + mv->ntt;
    if (w->ncol > OPOINT_DENSE_MAX)
        return mbl_error(st, MBL_EARG, "%s: at: trim solves up to %d unknowns (dense), the model has %d", mv->file,
                         OPOINT_DENSE_MAX, w->ncol);
    size_t ld = (size_t)(w->nrow > w->ncol ? w->nrow : w->ncol), mn = (size_t)w->nrow * (size_t)w->ncol;
    w->g = mbl_calloc((size_t)mv->ntt + 1, sizeof *w->g);
    w->gg = mbl_calloc((size_t)mv->tt_gp[mv->ntt] + 1, sizeof *w->gg);
    w->a = mbl_calloc((size_t)n + 1, sizeof *w->a);
    w->ag = mbl_calloc((size_t)mv->ta_gp[n] + 1, sizeof *w->ag);
    w->J = mbl_alloc_array(mn + 1, sizeof *w->J);
    w->B = mbl_alloc_array(mn + 1, sizeof *w->B);
    w->F = mbl_alloc_array((size_t)w->nrow + 1, sizeof *w->F);
    w->dx = mbl_alloc_array(ld + 1, sizeof *w->dx);
    w->x0 = mbl_alloc_array((size_t)w->ncol + 1, sizeof *w->x0);
    w->rsc = mbl_alloc_array((size_t)w->nrow + 1, sizeof *w->rsc);
    if (!w->rsc || !w->g || !w->gg || !w->a || !w->ag || !w->J || !w->B || !w->F || !w->dx || !w->x0)
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    return 0;
}

static void trim_free_ws(trim_ws *w)
{
    mbl_free(w->mrow), mbl_free(w->cpos), mbl_free(w->cols), mbl_free(w->tval);
    mbl_free(w->g), mbl_free(w->gg), mbl_free(w->a), mbl_free(w->ag);
    mbl_free(w->J), mbl_free(w->B), mbl_free(w->F), mbl_free(w->dx), mbl_free(w->x0), mbl_free(w->rsc);
}


/* pt->trim: what was solved (free inputs, coordinates and velocities that moved from the guess)
 * and the targets with their residuals */
static void trim_report(trim_ws *w, const double *q_guess, const double *v0)
{
    opoint_subproblem *sp = w->sp;
    const model_view *mv = &sp->mv;
    mbl_point *pt = sp->pt;
    char *b = pt->trim;
    size_t cap = sizeof pt->trim;
    b[0] = 0;
    trim_append(b, cap, "%ssolved:", "", 0);
    int any = 0;
    for (int i = 0; i < mv->nr; i++)
        if (mv->tfree[i]) trim_append(b, cap, " %s = %.9g,", mv->rname[i], pt->r[i]), any = 1;
    for (int i = 0; i < mv->n; i++)
        if (w->cpos[model_blk0(sp->md, MBL_BLK_Q) + i] >= 0 &&
            fabs(pt->q[i] - q_guess[i]) > 1e-9 * fmax(1.0, fabs(q_guess[i])))
            trim_append(b, cap, " %s = %.9g,", mv->qname[i], pt->q[i]), any = 1;
    for (int i = 0; i < mv->n; i++)
        if (fabs(pt->v[i] - v0[i]) > 1e-9 * fmax(1.0, fabs(v0[i])))
            trim_append(b, cap, " der(%s) = %.9g,", mv->qname[i], pt->v[i]), any = 1;
    size_t len = strlen(b);
    if (any && len && b[len - 1] == ',') b[len - 1] = 0;
    if (!any) trim_append(b, cap, "%s nothing moved from the guesses", "", 0);
    trim_append(b, cap, "%s; targets:", "", 0);
    pt->trim_residual = 0;
    trim_append_targets(w, b, cap);
    for (int j = 0; j < mv->ntt; j++) pt->trim_residual = fmax(pt->trim_residual, fabs(w->g[j] - w->tval[j]));
    pt->trim_eq_residual = 0;
    for (int r = 0; r < w->nmod + mv->n; r++) pt->trim_eq_residual = fmax(pt->trim_eq_residual, fabs(w->F[r]));
    trim_append(b, cap, "%s (largest target residual %.3g", "", pt->trim_residual);
    trim_append(b, cap, "%s, of the steady-motion equations %.3g)", "", pt->trim_eq_residual);
    pt->residual = fmax(pt->trim_residual, pt->trim_eq_residual);
}

int opoint_trim(opoint_subproblem *sp, const double *v0, const double *q_guess, mbl_status *st)
{
    const model_view *mv = &sp->mv;
    const mbl_opoint_options *opt = sp->opt;
    mbl_point *pt = sp->pt;
    if (!mv->ntt) return mbl_error(st, MBL_EARG, "%s: at: trim needs a 'trim:' section with its targets", mv->file);
    trim_ws w;
    memset(&w, 0, sizeof w);
    w.sp = sp;
    int rc = 0;
    if (!(w.tval = mbl_alloc_array((size_t)mv->ntt + 1, sizeof *w.tval))) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int j = 0; !rc && j < mv->ntt; j++) w.tval[j] = mv->tt_val[j];
    for (int g = 0; !rc && g < opt->ntargets; g++) {
        int j = model_trim_target_find(sp->md, opt->targets[g].name);
        if (j < 0)
            rc = mbl_error(st, MBL_EARG, "%s: no trim target '%s' (the file's targets are keyed as written in trim.targets)",
                           mv->file, opt->targets[g].name ? opt->targets[g].name : "(null)");
        else if (!isfinite(opt->targets[g].value))
            rc = mbl_error(st, MBL_EARG, "%s: the trim target '%s' is not a finite number", mv->file, opt->targets[g].name);
        else w.tval[j] = opt->targets[g].value;
    }
    if (!rc) {
        memcpy(pt->v, v0, (size_t)mv->n * sizeof(double));
        memcpy(pt->X, mv->X0, (size_t)mv->nX * sizeof(double));
        rc = trim_setup(&w, st);
    }
    /* start: the accelerations of the steady motion at the guess */
    if (!rc) rc = trim_eval(&w, 0, st);
    for (int i = 0; !rc && i < mv->n; i++) pt->vdot[i] = w.a[i];
    if (!rc) rc = trim_newton(&w, st);
    if (!rc) rc = trim_check_free(&w, st);
    if (!rc) trim_report(&w, q_guess, v0);
    if (!rc) {
        pt->scaled_residual = trim_scaled(&w, &pt->residual);
        pt->residual = fmax(pt->trim_residual, pt->trim_eq_residual);
    }
    trim_free_ws(&w);
    return rc;
}
