/* One point of a sweep (sweep.c): the operating point at the axis values (warm-started from the
 * previous points of the block), the linear model and its modes, on the fast path (the worker's
 * own model, its parameter changed in place, re-linearized) or the reload path, and the point's
 * sensitivities for the predictor. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lin/relin_jac.h"
#include "modal/modal_compute.h"
#include "study/floquet_internal.h"
#include "study/sweep_internal.h"

/* the smallest sweep whose warm correctors evaluate F and the Jacobian by one tape (warm_tangent) */
#define SWEEP_FUSED_MIN_POINTS 600

void study_sweep_worker_clear(worker *w)
{
    opoint_warm_counts k;
    opoint_warm_get_counts(w->ow, &k);
    w->wcnt.F += k.F, w->wcnt.jac += k.jac, w->wcnt.scaled += k.scaled, w->wcnt.factor += k.factor;
    w->wcnt.dfdp += k.dfdp, w->wcnt.chord += k.chord, w->wcnt.chord_fallback += k.chord_fallback;
    opoint_warm_free(w->ow);
    mbl_point_free(w->wpt);
    mbl_free(w->wtan);
    w->ow = NULL, w->wpt = NULL, w->wtan = NULL, w->ow_off = w->tan_ok = w->tan_skip = 0;
    mbl_dae_deriv_free(w->dd), mbl_dae_deriv_free(w->dfp);
    w->dd = w->dfp = NULL;
    mbl_free(w->wq), mbl_free(w->wq2), mbl_free(w->wq3), mbl_free(w->wq4), mbl_free(w->wdq), mbl_free(w->wguess);
    mbl_free(w->wd1), mbl_free(w->wd2);
    modal_reuse_free(&w->mru);
    w->wq = w->wq2 = w->wq3 = w->wq4 = w->wdq = w->wguess = w->wd1 = w->wd2 = NULL;
    w->nwarm = w->wdq_ok = 0;
    mbl_linear_free(w->lin);
    mbl_lin_work_free(w->work);
    mbl_model_free(w->model);
    w->lin = NULL, w->work = NULL, w->model = NULL;
}

void study_sweep_ctx_free(ctx *c)
{
    if (!c) return;
    mbl_free(c->path);
    model_origin_free(c->origin);
    if (c->set_names)
        for (int i = 0; i < c->nsets; i++) mbl_free(c->set_names[i]);
    mbl_free(c->set_names);
    mbl_free(c->sets);
    mbl_point_free(c->pt0);
    mbl_free(c);
}

double study_sweep_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU time of the calling thread (the phases' costs, not inflated by other jobs on the machine),
 * where the caller asked for the phases' times (mbl_sweep_options.phase_times); 0 otherwise: each
 * reading is a system call (0.6 us on a KVM guest), five a warm point */
static double cpu_s(const ctx *c)
{
    if (!c->phase_times) return 0.0;
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Operating point of `model` at the axis values x (time axes set the time); y0 = [q; lambda; mu]
 * (may be NULL) replaces the initial guess of the coordinates (and the --guess values) and of the
 * multipliers. */
static int point_at(const ctx *c, const mbl_model *model, const double *x, const double *y0, mbl_point **pt,
                    mbl_status *st)
{
    mbl_opoint_options po = c->popt;
    if (y0) {
        po.q = y0, po.guess = NULL, po.nguess = 0;
        po.lambda = y0 + c->n, po.mu = y0 + c->n + c->m;
    }
    for (int a = 0; a < c->naxes; a++)
        if (c->pidx[a] < 0) po.t = x[a], po.has_t = 1;
    return mbl_operating_point(model, &po, pt, st);
}

/* The cubic through the block's last four points at x (no tangent at the last: the warm corrector
 * skipped it, opoint_warm_skip_tangent), error O(h^4): 1 and w->wguess, or 0 where the four are not
 * on x's row, not distinct, or the guess is not finite. */
static int warm_guess4(worker *w, const double *x, double h)
{
    if (w->nwarm < 4 || (w->c->naxes > 1 && (w->wx2[1] != x[1] || w->wx3[1] != x[1] || w->wx4[1] != x[1]))) return 0;
    double x1 = w->wx[0], x2 = w->wx2[0], x3 = w->wx3[0], x4 = w->wx4[0];
    if (!(x1 != x2 && x2 != x3 && x3 != x4 && x1 != x3 && x2 != x4 && x1 != x4)) return 0;
    /* Newton's form: y1 + h (d12 + (x - x2) (d123 + (x - x3) d1234)) */
    double i12 = 1 / (x1 - x2), i23 = 1 / (x2 - x3), i34 = 1 / (x3 - x4), i13 = 1 / (x1 - x3), i24 = 1 / (x2 - x4);
    double i14 = 1 / (x1 - x4), b = x[0] - x2, c = x[0] - x3;
    const double *restrict y1 = w->wq, *restrict y2 = w->wq2, *restrict y3 = w->wq3, *restrict y4 = w->wq4;
    double *restrict g = w->wguess, *restrict e1 = w->wd1, *restrict e2 = w->wd2;
    double z = 0;
    if (w->wdd_rec == w->nrec - 1) {
        /* the last cubic's d12 and d123 are this one's d23 and d234: the same operations on the same
         * values (the points and their axis values shifted by one record), so the same bits */
        for (int i = 0, len = w->wlen; i < len; i++) {
            double d12 = (y1[i] - y2[i]) * i12, d123 = (d12 - e1[i]) * i13;
            g[i] = y1[i] + h * (d12 + b * (d123 + c * ((d123 - e2[i]) * i14)));
            e1[i] = d12, e2[i] = d123;
            z += g[i] - g[i];
        }
    } else {
        for (int i = 0, len = w->wlen; i < len; i++) {
            double d12 = (y1[i] - y2[i]) * i12, d23 = (y2[i] - y3[i]) * i23, d34 = (y3[i] - y4[i]) * i34;
            double d123 = (d12 - d23) * i13, d234 = (d23 - d34) * i24;
            g[i] = y1[i] + h * (d12 + b * (d123 + c * ((d123 - d234) * i14)));
            e1[i] = d12, e2[i] = d123;
            z += g[i] - g[i];
        }
    }
    w->wdd_rec = w->nrec;
    if (z != 0) return 0;
    w->wquad = 1;
    w->warm_points++;
    return 1;
}

/* The initial guess at x from the previous points of the block: y = [q; lambda; mu] (NULL: the
 * file's). Only within a row of the grid (the other axis unchanged), componentwise: y_a + (dy/dx)_a
 * (x - x_a) with the exact derivative of the last point where its sensitivities give one (the
 * implicit function theorem on the point's equations: dq, dlambda), else the line through the
 * last two points, else the last point's value. After a point the warm corrector gave no tangent
 * (w->tan_skip): the cubic through the last four points (warm_guess4) where it applies. */
static const double *warm_guess(worker *w, const double *x)
{
    w->wquad = 0;
    if (w->nwarm < 1 || !w->wq || (w->c->naxes > 1 && w->wx[1] != x[1])) return NULL;
    int len = w->wlen;
    double h = x[0] - w->wx[0];
    if (w->tan_skip && warm_guess4(w, x, h)) return w->wguess; /* (before the sensitivities' line) */
    int two = w->nwarm >= 2 && w->wx2[0] != w->wx[0] && (w->c->naxes < 2 || w->wx2[1] == x[1]);
    double s = two ? h / (w->wx[0] - w->wx2[0]) : 0.0;
    /* with the warm corrector's exact tangent and the point before on the same row: the quadratic
     * through the point before with the last point's value and tangent (error O(h^3), so that the
     * chord step from it converges: opoint_warm_point) */
    double d = two ? w->wx[0] - w->wx2[0] : 0.0;
    int quad = two && w->tan_ok && d != 0;
    w->wquad = quad && w->wdq_ok;
    const double *restrict wq = w->wq, *restrict wq2 = w->wq2, *restrict wdq = w->wdq;
    double *restrict g = w->wguess; /* four arrays of their own (warm_record) */
    int dq_ok = w->wdq_ok;
    /* per component: the quadratic (dq_ok, quad) or the tangent's line (dq_ok) where its
     * derivative is finite, else the line through the last two points (two), else the last value;
     * each case's loop without the others' tests (the same operations on each component) */
    /* z: 0 where every g is finite, else NaN (g - g is 0 or NaN); a derivative that is not finite
     * makes its g not finite, and only then are the components checked one by one */
    double z = dq_ok ? 0.0 : NAN;
    if (dq_ok && quad)
        for (int i = 0; i < len; i++) {
            g[i] = wq[i] + h * (wdq[i] + h * ((wq2[i] - wq[i]) / d + wdq[i]) / d);
            z += g[i] - g[i];
        }
    else if (dq_ok)
        for (int i = 0; i < len; i++) {
            g[i] = wq[i] + wdq[i] * h;
            z += g[i] - g[i];
        }
    for (int i = 0; z != 0 && i < len; i++) {
        if (dq_ok && isfinite(wdq[i])) continue;
        if (two) g[i] = wq[i] + s * (wq[i] - wq2[i]);
        else g[i] = wq[i];
    }
    w->warm_points++;
    return w->wguess;
}

/* Remember the point (NULL: it failed; the block starts anew) and its derivative for the next
 * guess (tan: the warm corrector's tangent d[q; lambda; mu]/dx, else S's); only equilibrium and
 * steady points, whose q is an initial guess (a given point's q is data). */
static void warm_record(worker *w, const double *x, const mbl_point *pt, const mbl_sensitivity *S, const double *tan)
{
    int n = w->c->n;
    if (!pt || n < 1 || pt->n != n || (pt->at != MBL_AT_EQUILIBRIUM && pt->at != MBL_AT_STEADY)) {
        w->nwarm = 0, w->wdq_ok = 0;
        return;
    }
    int len = n + pt->m + pt->k;
    if (!w->wq) {
        w->wlen = len;
        w->wq = mbl_alloc_array((size_t)len, sizeof *w->wq);
        w->wq2 = mbl_alloc_array((size_t)len, sizeof *w->wq2);
        w->wq3 = mbl_alloc_array((size_t)len, sizeof *w->wq3);
        w->wq4 = mbl_alloc_array((size_t)len, sizeof *w->wq4);
        w->wdq = mbl_alloc_array((size_t)len, sizeof *w->wdq);
        w->wguess = mbl_alloc_array((size_t)len, sizeof *w->wguess);
        w->wd1 = mbl_alloc_array((size_t)len, sizeof *w->wd1);
        w->wd2 = mbl_alloc_array((size_t)len, sizeof *w->wd2);
        w->wdd_rec = -2;
        if (!w->wq || !w->wq2 || !w->wq3 || !w->wq4 || !w->wdq || !w->wguess || !w->wd1 || !w->wd2) {
            mbl_free(w->wq), mbl_free(w->wq2), mbl_free(w->wq3), mbl_free(w->wq4), mbl_free(w->wdq), mbl_free(w->wguess);
            mbl_free(w->wd1), mbl_free(w->wd2);
            w->wq = w->wq2 = w->wq3 = w->wq4 = w->wdq = w->wguess = w->wd1 = w->wd2 = NULL;
            w->nwarm = 0;
            return;
        }
    }
    if (len != w->wlen) {
        w->nwarm = 0, w->wdq_ok = 0;
        return;
    }
    double *t = w->wq4;
    w->wq4 = w->wq3, w->wq3 = w->wq2, w->wq2 = w->wq, w->wq = t;
    w->wx4[0] = w->wx3[0], w->wx4[1] = w->wx3[1];
    w->wx3[0] = w->wx2[0], w->wx3[1] = w->wx2[1];
    w->wx2[0] = w->wx[0], w->wx2[1] = w->wx[1];
    memcpy(w->wq, pt->q, (size_t)n * sizeof *w->wq);
    if (pt->m) memcpy(w->wq + n, pt->lambda, (size_t)pt->m * sizeof *w->wq);
    if (pt->k) memcpy(w->wq + n + pt->m, pt->mu, (size_t)pt->k * sizeof *w->wq);
    w->wx[0] = x[0], w->wx[1] = w->c->naxes > 1 ? x[1] : 0;
    w->nwarm = w->nwarm < 4 ? w->nwarm + 1 : 4;
    w->nrec++;
    w->wdq_ok = 0;
    if (tan) {
        memcpy(w->wdq, tan, (size_t)len * sizeof *w->wdq);
        w->wdq_ok = 1;
    } else if (S && S->nwrt == 1 && S->n == n && S->m == pt->m && S->point_defined && S->point_defined[0]) {
        for (int i = 0; i < len; i++) w->wdq[i] = NAN; /* mu: no derivative */
        memcpy(w->wdq, S->dq, (size_t)n * sizeof *w->wdq);
        if (pt->m) memcpy(w->wdq + n, S->dlambda, (size_t)pt->m * sizeof *w->wdq);
        w->wdq_ok = 1;
    }
}

/* The warm corrector's tangent at the solved point pt of the fast path (NULL where the warm start
 * does not apply): the worker's derivatives and corrector made on first use; block_cont = 0 at a
 * block's first point, where the corrector starts a fresh factorization (the block's results do not
 * depend on the thread). */
static const double *warm_tangent(worker *w, const mbl_point *pt, int block_cont, int may_skip, const double *given)
{
    ctx *c = w->c;
    w->tan_ok = w->tan_skip = 0;
    if (w->ow_off || c->pidx[0] < 0 || pt->at != MBL_AT_EQUILIBRIUM) return NULL;
    double t0 = cpu_s(c);
    mbl_status st;
    mbl_status_clear(&st);
    int rc = 0;
    if (!w->wtan && !(w->wtan = mbl_alloc_array((size_t)(pt->n + pt->m + pt->k) + 1, sizeof *w->wtan))) return NULL;
    if (!w->dfp) rc = mbl_dae_deriv_new_param(w->model, &w->dfp, &st);
    if (!rc && !w->ow) {
        rc = opoint_warm_new(w->model, &c->popt, w->dfp, c->pidx[0], &w->ow, &st);
        /* the fused F and Jacobian tape pays for its compilation from about 600 points on (N = 20
         * four-bar: 3.7 M instructions once, 6-7 k fewer a point); decided by the whole sweep's
         * count, so that every thread and rank evaluates alike (the same bits) */
        if (!rc) opoint_warm_set_fused(w->ow, c->npoints >= SWEEP_FUSED_MIN_POINTS);
    }
    if (!rc && !block_cont) opoint_warm_reset(w->ow);
    if (rc || !w->ow) {
        w->ow_off = 1; /* no derivatives of this model: never (the same on every thread) */
    } else if (may_skip && block_cont && w->pt_warm && w->nwarm >= 3) {
        /* a point solved warm within the block after three others: no tangent. The next point is
         * predicted by the cubic through the last four (error O(h^4), below the tangent's quadratic
         * O(h^3)) and its chord step solves with the factorization held, or with one made here where
         * that one is OPOINT_WARM_SKIP_AGE points old or its last chord step contracted little. */
        if (!opoint_warm_tangent_due(w->ow)) opoint_warm_skip_tangent(w->ow);
        else rc = opoint_warm_refresh(w->ow, pt, &st);
        w->tan_skip = !rc;
        w->t_point += cpu_s(c) - t0;
        return NULL;
    } else if (given && !block_cont) {
        /* a block's first point, a start of the chain: its tangent the chain's (not solved again) */
        rc = opoint_warm_adopt_tangent(w->ow, pt, given, w->wtan, &st);
    } else {
        rc = opoint_warm_tangent(w->ow, pt, w->wtan, &st); /* MBL_EARG: not at this point (rank loss) */
    }
    w->tan_ok = !rc;
    w->t_point += cpu_s(c) - t0;
    return rc ? NULL : w->wtan;
}

/* The operating point at x on the fast path: from the warm guess by the warm corrector (at most
 * OPOINT_WARM_MAX_STEPS Newton steps) where the block's previous point gave a tangent, else (or
 * where that start is rejected) mbl_operating_point from the guess, and where that fails too from
 * the file's guess (a point's first error is the one reported). */
static int point_warm(worker *w, const double *x, mbl_point **pt, mbl_status *st)
{
    ctx *c = w->c;
    int had_tan = ((w->tan_ok && w->wdq_ok) || w->tan_skip) && w->ow && w->wpt && w->nwarm >= 1;
    w->pt_warm = 0;
    const double *g = warm_guess(w, x);
    int rc = MBL_ENOCONV, steps = 0;
    if (g && had_tan) {
        mbl_status st2;
        mbl_status_clear(&st2);
        rc = opoint_warm_point(w->ow, w->wpt, g, w->wquad && !w->no_chord, pt, &steps, &st2);
        if (rc == MBL_ENOMEM) return mbl_error(st, MBL_ENOMEM, "out of memory");
        if (!rc) w->warm_ok++, w->warm_steps += steps, w->pt_warm = 1;
        else w->warm_rejected++;
    }
    if (rc) rc = point_at(c, w->model, x, g, pt, st);
    if (rc && g && rc != MBL_ENOMEM && rc != MBL_ECANCELLED) {
        /* the prediction led nowhere (past a fold, the branch it followed has ended): the file's
         * guess, as at a block's first point */
        mbl_status st2;
        mbl_status_clear(&st2);
        if (point_at(c, w->model, x, NULL, pt, &st2) == 0) rc = 0;
    }
    if (w->steps) w->steps[w->cur] = rc ? -1 : (*pt)->iterations;
    return rc;
}

/* Block starts (sweep.c, block_starts): the operating point at x continued from the worker's last
 * point, as a block's next point is (point_warm: its tangent's prediction, the warm corrector with
 * up to SWEEP_START_STEPS full Newton steps, the solver from that guess, the file's guess), then
 * this point's tangent for the next. Only where the last point gave a tangent (an equilibrium of
 * the warm corrector's kind on the fast path); *out NULL where not, or where no point was found. */
#define SWEEP_START_STEPS 6
void study_sweep_start(worker *w, const double *xprev, const double *x, mbl_point **out)
{
    ctx *c = w->c;
    *out = NULL;
    /* the sweep's first point (solved before the sizes were known: not recorded) starts the chain */
    if (w->nwarm < 1 && w->tan_ok && w->wpt) warm_record(w, xprev, w->wpt, NULL, w->wtan);
    if (!c->fast || !w->work || !w->wpt || !w->tan_ok || !w->wdq_ok || w->nwarm < 1 || (c->naxes > 1 && w->wx[1] != x[1]))
        return;
    mbl_status st;
    mbl_status_clear(&st);
    int rc = 0;
    for (int a = 0; a < c->naxes && !rc; a++)
        if (c->pidx[a] >= 0) rc = mbl_model_set_param(w->model, c->pidx[a], x[a], &st);
    mbl_point *pt = NULL;
    /* full Newton steps from the prediction: a chord step with the last start's factorization does
     * not contract over a block-long step (it would be forgotten: the same point, an F more) */
    opoint_warm_set_max_steps(w->ow, SWEEP_START_STEPS);
    w->no_chord = 1;
    if (!rc) rc = point_warm(w, x, &pt, &st);
    w->no_chord = 0;
    opoint_warm_set_max_steps(w->ow, OPOINT_WARM_MAX_STEPS);
    warm_record(w, x, rc ? NULL : pt, NULL, rc ? NULL : warm_tangent(w, pt, 1, 0, NULL));
    opoint_warm_recycle(w->ow, w->wpt);
    w->wpt = rc ? NULL : pt;
    if (!rc) *out = opoint_point_copy(pt);
}

/* The exact sensitivities of the point with respect to the first axis' parameter (the sensitivity
 * predictor). dd: the worker's derivatives (made on first use) or, for a model of this point only
 * (reload path), NULL: made and freed here. */
static int point_sens(worker *w, const mbl_model *model, const mbl_point *pt, int own, mbl_sensitivity **sens,
                      mbl_status *st)
{
    ctx *c = w->c;
    double t0 = cpu_s(c);
    mbl_dae_deriv *dd = own ? w->dd : NULL;
    int rc = 0;
    if (!dd) rc = mbl_dae_deriv_new(model, &dd, st);
    if (own) w->dd = dd;
    mbl_sens_options so;
    mbl_sens_options_default(&so);
    if (!rc) rc = mbl_sensitivity_compute(dd, pt, &c->pidx[0], 1, &so, sens, st);
    if (!own) mbl_dae_deriv_free(dd);
    w->t_sens += cpu_s(c) - t0;
    return rc;
}

/* A sweep's point reports its eigen stage (mbl_modal's "eigen", the stop requests' check within a
 * point) only on a model of at least this order n + m + k (points of some 0.2 ms and more); on a
 * smaller one (the N = 20 four-bar: a report 0.8 k instructions, with the tool's callback, of a
 * 250 k point) a stop takes effect at the block's end (the "sweep" report, at most 64 points). */
#define SWEEP_EIGEN_REPORT_MIN 1000

/* the modes of a linear model (the worker's memory of the last point's reused), or a Floquet
 * sweep's exponents at the point */
static int point_modes(worker *w, const mbl_model *model, const mbl_point *pt, const mbl_linear *lin, mbl_modes **modes,
                       mbl_status *st)
{
    const ctx *c = w->c;
    if (c->floquet) return study_floquet_modes(model, pt, &c->fo, c->spin, modes, st);
    return modal_compute_reuse(lin, NULL, modes, c->order >= SWEEP_EIGEN_REPORT_MIN, &w->mru, st);
}

/* Linear model and modes at x; modes returned (caller frees). With sens (not NULL) and the
 * sensitivity predictor, also the point's sensitivities (*sens NULL when they failed; the reason
 * in sst when given). */
int study_sweep_eval_modes(worker *w, const double *x, int warm, mbl_modes **modes, mbl_sensitivity **sens,
                           mbl_status *sst, mbl_status *st)
{
    ctx *c = w->c;
    mbl_point *pt = NULL;
    mbl_linear *one = NULL;
    int rc = 0;
    *modes = NULL;
    if (!warm) w->nwarm = 0, w->wdq_ok = 0;
    if (!w->nwarm) opoint_warm_reset(w->ow); /* a fresh factorization wherever the chain restarts */
    if (sens) *sens = NULL;
    mbl_status st_sens;
    if (!sst) sst = &st_sens;
    mbl_status_clear(sst);
    if (c->fast) {
        /* the block's first point, solved already: a block start of the chain, or the sweep's first
         * point (from the file's guess, as a block's first point without a chain) */
        const mbl_point *start = warm ? NULL : w->start;
        const double *stan = start ? w->start_tan : NULL; /* the chain's tangent there */
        w->start_tan = NULL;
        if (!warm && !start && c->pt0 && x[0] == c->pt0_x[0] && (c->naxes < 2 || x[1] == c->pt0_x[1])) start = c->pt0;
        w->start = NULL;
        mbl_point *ws = NULL; /* the workspace's point: x0's from the file's guess */
        if (!w->work) {
            /* the model (unless fast_probe loaded it), and a workspace made at the sweep's first point
             * (x0; a copy of that point where another worker solved it, from the same guess) */
            if (!w->model) rc = load_copy(c->origin, c->sets, c->nbase, &w->model, st);
            for (int a = 0; a < c->naxes && !rc; a++)
                if (c->pidx[a] >= 0) rc = mbl_model_set_param(w->model, c->pidx[a], w->x0[a], st);
            int have = c->pt0 && c->pt0_x[0] == w->x0[0] && c->pt0_x[1] == w->x0[1];
            if (!rc && have && !(ws = opoint_point_copy(c->pt0))) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
            if (!rc && !have) rc = point_at(c, w->model, w->x0, NULL, &ws, st);
            if (!rc) rc = mbl_lin_work_new(w->model, ws, &c->lopt, &w->work, &w->lin, st);
            if (rc) {
                mbl_point_free(ws);
                study_sweep_worker_clear(w);
                return rc;
            }
            /* the point at x0 from the file's guess, the same computation as point_warm's without a
             * warm start: not solved twice */
            if (warm || start || x[0] != w->x0[0] || (c->naxes > 1 && x[1] != w->x0[1])) mbl_point_free(ws), ws = NULL;
        }
        for (int a = 0; a < c->naxes && !rc; a++)
            if (c->pidx[a] >= 0) rc = mbl_model_set_param(w->model, c->pidx[a], x[a], st);
        double t0 = cpu_s(c);
        if (!rc && (start || ws)) {
            w->pt_warm = 0;
            pt = ws ? ws : opoint_point_copy(start);
            ws = NULL;
            if (!pt) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
            if (w->steps) w->steps[w->cur] = rc ? -1 : pt->iterations;
        } else if (!rc) {
            rc = point_warm(w, x, &pt, st);
        }
        mbl_point_free(ws);
        double t1 = cpu_s(c);
        w->t_point += t1 - t0;
        if (!rc) {
            mbl_status st2;
            mbl_status_clear(&st2);
            /* the Jacobian the warm corrector has just evaluated at the point, not evaluated again */
            const double *jac = w->pt_warm ? opoint_warm_jac(w->ow, pt) : NULL;
            const double *syms = jac ? opoint_warm_jac_syms(w->ow, pt) : NULL; /* and the symbols there */
            if (lin_relinearize_jac(w->work, pt, jac, syms, w->lin, &st2) == 0) {
                rc = point_modes(w, w->model, pt, w->lin, modes, st);
            } else {
                /* the first point's states do not parametrize the motion here: choose anew */
                rc = mbl_linearize(w->model, pt, &c->lopt, &one, st);
                if (!rc) rc = point_modes(w, w->model, pt, one, modes, st);
            }
            w->t_lin += cpu_s(c) - t1;
        }
        if (!rc && sens && c->predictor == MBL_PREDICT_SENSITIVITY) point_sens(w, w->model, pt, 1, sens, sst);
        /* the tangent for the block's next point (none after its last: the next block starts anew,
         * from its own first point, with a fresh factorization) */
        const double *tan = NULL;
        if (!rc && !w->block_last) tan = warm_tangent(w, pt, warm, 1, stan);
        else w->tan_ok = w->tan_skip = 0;
        warm_record(w, x, rc ? NULL : pt, sens ? *sens : NULL, tan);
        opoint_warm_recycle(w->ow, w->wpt); /* the block's last point: the template of the next warm start */
        w->wpt = rc ? NULL : pt;
        if (!rc) pt = NULL;
    } else {
        mbl_model *model = NULL;
        /* the base overrides and this point's values (a copy: threads share c) */
        mbl_setting *sets = mbl_alloc_array((size_t)c->nsets + 1, sizeof *sets);
        if (!sets) return mbl_error(st, MBL_ENOMEM, "out of memory");
        memcpy(sets, c->sets, (size_t)c->nsets * sizeof *sets);
        for (int a = 0, k = c->nbase; a < c->naxes; a++)
            if (c->pidx[a] >= 0) sets[k++].value = x[a];
        double t0 = cpu_s(c);
        rc = load_copy(c->origin, sets, c->nsets, &model, st);
        mbl_free(sets);
        double t1 = cpu_s(c);
        if (!rc) rc = point_at(c, model, x, warm_guess(w, x), &pt, st);
        double t2 = cpu_s(c);
        if (!rc) rc = mbl_linearize(model, pt, &c->lopt, &one, st);
        if (!rc) rc = point_modes(w, model, pt, one, modes, st);
        w->t_load += t1 - t0, w->t_point += t2 - t1, w->t_lin += cpu_s(c) - t2;
        if (!rc && sens && c->predictor == MBL_PREDICT_SENSITIVITY) point_sens(w, model, pt, 0, sens, sst);
        warm_record(w, x, rc ? NULL : pt, sens ? *sens : NULL, NULL);
        mbl_model_free(model);
    }
    mbl_linear_free(one);
    mbl_point_free(pt);
    if (rc) {
        mbl_modes_free(*modes);
        *modes = NULL;
    }
    return rc;
}
