/* Sweeps over one or two parameters (or time), on several threads (docs/study.md).
 *
 * Each point is an operating point, a linear model and its modes, computed independently of the
 * others and of the thread that computes it, so the results are the same on any number of
 * threads. Two ways to compute a point:
 *   - fast: every thread loads its own copy of the caller's model once (its file with the base
 *     overrides: a parameter changes in place only on a model of its own), makes a workspace
 *     (mbl_lin_work_new) at the sweep's first point, and then for each of its points changes the
 *     parameter in place (mbl_model_set_param), finds the operating point from the file's initial
 *     guess and re-linearizes (mbl_relinearize: no allocation, the states of the first point).
 *     A point where those states stop parametrizing the motion is linearized one-shot instead
 *     (mbl_linearize, states chosen there). Time sweeps change only the point's time.
 *   - reload: when the parameter was evaluated into numbers at load time (a mechanism's
 *     parameters, a parameter other parameters or initial values use), the model's file is loaded
 *     with the point's values (mbl_model_load_file's overrides) and linearized one-shot.
 * Which of the two is decided on the first thread's copy: the fast path when the axes' parameters
 * change in place there (mbl_model_set_param).
 * The modes of all points are then tracked in order (track.c); critical speeds of a Campbell
 * diagram are refined by the secant method on new points computed the same way. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mblin/json.h"
#include "mblin/sensitivity.h"
#include "mblin/report.h"
#include "mblin/sweep.h"

#define TWO_PI 6.283185307179586476925286766559
/* mode shapes are kept for the MAC while they take fewer doubles than this (else eigenvalues only) */
#define SHAPES_MAX 50000000.0
/* the default predictor is the sensitivity one up to this pencil order n + m + k: its dense QZ
 * (O((n + m + k)^3)) then costs about what the point does; above it, linear (docs/study.md) */
#define SENS_DEFAULT_MAX 60

void mbl_sweep_options_default(mbl_sweep_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->threads = 1;
    opt->mac_weight = 1.0;
    opt->predictor = MBL_PREDICT_DEFAULT;
}

/* ---- what every point needs ------------------------------------------------------------- */

typedef struct ctx {
    char *path;              /* the caller's model's file (mbl_model_info.file), loaded again */
    int naxes;
    int pidx[2];             /* parameter index of each axis, -1 for time */
    mbl_setting *sets;       /* the base overrides + one per parameter axis (values set per point) */
    char **set_names;
    int nsets, nbase;
    mbl_opoint_options popt;
    mbl_lin_options lopt;
    int fast;
    int order;               /* n + m + k of the model (the sensitivity pencil's order) */
    int m;                   /* holonomic constraints */
    int n, nm;               /* coordinates, eigenvalues per point (from the first point) */
    int predictor;           /* MBL_PREDICT_LINEAR or MBL_PREDICT_SENSITIVITY (decided at the first point) */
} ctx;

/* One thread's state: its own model (fast path) and workspace. */
typedef struct worker {
    ctx *c;
    mbl_model *model;
    mbl_lin_work *work;
    mbl_linear *lin;
    mbl_dae_deriv *dd;       /* the model's second derivatives (sensitivity predictor, fast path) */
    double x0[2];            /* the values the workspace was made at */
    double t_load, t_point, t_lin, t_sens; /* seconds in loading, operating points, linearization +
                                              modes, sensitivities */
    /* warm start: the last points of this block (equilibrium and steady points) */
    int wlen;                /* n + m + k */
    double *wq, *wq2;        /* wlen: [q; lambda; mu] of the last and the one before */
    double wx[2], wx2[2];    /* their axis values */
    int nwarm;               /* 0, 1 or 2 of them valid */
    double *wdq;             /* wlen: d[q; lambda]/dx of the last point (its sensitivities; NAN for mu) */
    double *wguess;          /* wlen: the guess handed to the operating point */
    int wdq_ok;
    long long warm_points;   /* points started from the previous point */
} worker;

/* A computed point: eigenvalues and shapes (as mbl_modal orders them). */
typedef struct point_out {
    double *re, *im;         /* nm */
    double *sre, *sim;       /* nm * n or NULL */
    double *dre, *dim;       /* nm: d eigenvalue / dx (sensitivity predictor; NULL or NAN: none) */
    double *dsre, *dsim;     /* nm * n: d shape / dx in the normalization of sre, sim */
} point_out;

static void worker_clear(worker *w)
{
    mbl_dae_deriv_free(w->dd);
    w->dd = NULL;
    mbl_free(w->wq), mbl_free(w->wq2), mbl_free(w->wdq), mbl_free(w->wguess);
    w->wq = w->wq2 = w->wdq = w->wguess = NULL;
    w->nwarm = w->wdq_ok = 0;
    mbl_linear_free(w->lin);
    mbl_lin_work_free(w->work);
    mbl_model_free(w->model);
    w->lin = NULL, w->work = NULL, w->model = NULL;
}

static void ctx_free(ctx *c)
{
    if (!c) return;
    mbl_free(c->path);
    if (c->set_names)
        for (int i = 0; i < c->nsets; i++) mbl_free(c->set_names[i]);
    mbl_free(c->set_names);
    mbl_free(c->sets);
    mbl_free(c);
}

static char *dup_str(const char *s)
{
    size_t l = strlen(s);
    char *d = mbl_malloc(l + 1);
    if (d) memcpy(d, s, l + 1);
    return d;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU time of the calling thread (the phases' costs, not inflated by other jobs on the machine) */
static double cpu_s(void)
{
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

/* The initial guess at x from the previous points of the block: y = [q; lambda; mu] (NULL: the
 * file's). Only within a row of the grid (the other axis unchanged), componentwise: y_a + (dy/dx)_a
 * (x - x_a) with the exact derivative of the last point where its sensitivities give one (the
 * implicit function theorem on the point's equations: dq, dlambda), else the line through the
 * last two points, else the last point's value. */
static const double *warm_guess(worker *w, const double *x)
{
    if (w->nwarm < 1 || !w->wq || (w->c->naxes > 1 && w->wx[1] != x[1])) return NULL;
    int len = w->wlen;
    double h = x[0] - w->wx[0];
    int two = w->nwarm >= 2 && w->wx2[0] != w->wx[0] && (w->c->naxes < 2 || w->wx2[1] == x[1]);
    double s = two ? h / (w->wx[0] - w->wx2[0]) : 0.0;
    for (int i = 0; i < len; i++) {
        if (w->wdq_ok && isfinite(w->wdq[i])) w->wguess[i] = w->wq[i] + w->wdq[i] * h;
        else if (two) w->wguess[i] = w->wq[i] + s * (w->wq[i] - w->wq2[i]);
        else w->wguess[i] = w->wq[i];
    }
    w->warm_points++;
    return w->wguess;
}

/* Remember the point (NULL: it failed; the block starts anew) and its derivative for the next
 * guess; only equilibrium and steady points, whose q is an initial guess (a given point's q is
 * data). */
static void warm_record(worker *w, const double *x, const mbl_point *pt, const mbl_sensitivity *S)
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
        w->wdq = mbl_alloc_array((size_t)len, sizeof *w->wdq);
        w->wguess = mbl_alloc_array((size_t)len, sizeof *w->wguess);
        if (!w->wq || !w->wq2 || !w->wdq || !w->wguess) {
            mbl_free(w->wq), mbl_free(w->wq2), mbl_free(w->wdq), mbl_free(w->wguess);
            w->wq = w->wq2 = w->wdq = w->wguess = NULL;
            w->nwarm = 0;
            return;
        }
    }
    if (len != w->wlen) {
        w->nwarm = 0, w->wdq_ok = 0;
        return;
    }
    double *t = w->wq2;
    w->wq2 = w->wq, w->wq = t;
    w->wx2[0] = w->wx[0], w->wx2[1] = w->wx[1];
    memcpy(w->wq, pt->q, (size_t)n * sizeof *w->wq);
    if (pt->m) memcpy(w->wq + n, pt->lambda, (size_t)pt->m * sizeof *w->wq);
    if (pt->k) memcpy(w->wq + n + pt->m, pt->mu, (size_t)pt->k * sizeof *w->wq);
    w->wx[0] = x[0], w->wx[1] = w->c->naxes > 1 ? x[1] : 0;
    w->nwarm = w->nwarm < 2 ? w->nwarm + 1 : 2;
    w->wdq_ok = 0;
    if (S && S->nwrt == 1 && S->n == n && S->m == pt->m && S->point_defined && S->point_defined[0]) {
        for (int i = 0; i < len; i++) w->wdq[i] = NAN; /* mu: no derivative */
        memcpy(w->wdq, S->dq, (size_t)n * sizeof *w->wdq);
        if (pt->m) memcpy(w->wdq + n, S->dlambda, (size_t)pt->m * sizeof *w->wdq);
        w->wdq_ok = 1;
    }
}

/* The exact sensitivities of the point with respect to the first axis' parameter (the sensitivity
 * predictor). dd: the worker's derivatives (made on first use) or, for a model of this point only
 * (reload path), NULL: made and freed here. */
static int point_sens(worker *w, const mbl_model *model, const mbl_point *pt, int own, mbl_sensitivity **sens,
                      mbl_status *st)
{
    ctx *c = w->c;
    double t0 = cpu_s();
    mbl_dae_deriv *dd = own ? w->dd : NULL;
    int rc = 0;
    if (!dd) rc = mbl_dae_deriv_new(model, &dd, st);
    if (own) w->dd = dd;
    mbl_sens_options so;
    mbl_sens_options_default(&so);
    if (!rc) rc = mbl_sensitivity_compute(dd, pt, &c->pidx[0], 1, &so, sens, st);
    if (!own) mbl_dae_deriv_free(dd);
    w->t_sens += cpu_s() - t0;
    return rc;
}

/* Linear model and modes at x; modes returned (caller frees). With sens (not NULL) and the
 * sensitivity predictor, also the point's sensitivities (*sens NULL when they failed; the reason
 * in sst when given). */
static int eval_modes(worker *w, const double *x, int warm, mbl_modes **modes, mbl_sensitivity **sens,
                      mbl_status *sst, mbl_status *st)
{
    ctx *c = w->c;
    mbl_point *pt = NULL;
    mbl_linear *one = NULL;
    int rc = 0;
    *modes = NULL;
    if (!warm) w->nwarm = 0, w->wdq_ok = 0;
    if (sens) *sens = NULL;
    mbl_status st_sens;
    if (!sst) sst = &st_sens;
    mbl_status_clear(sst);
    if (c->fast) {
        if (!w->work) {
            /* the model (unless fast_probe loaded it), and a workspace made at the sweep's first point (x0) */
            if (!w->model) rc = mbl_model_load_file(c->path, c->sets, c->nbase, &w->model, st);
            for (int a = 0; a < c->naxes && !rc; a++)
                if (c->pidx[a] >= 0) rc = mbl_model_set_param(w->model, c->pidx[a], w->x0[a], st);
            if (!rc) rc = point_at(c, w->model, w->x0, NULL, &pt, st);
            if (!rc) rc = mbl_lin_work_new(w->model, pt, &c->lopt, &w->work, &w->lin, st);
            mbl_point_free(pt);
            pt = NULL;
            if (rc) {
                worker_clear(w);
                return rc;
            }
        }
        for (int a = 0; a < c->naxes && !rc; a++)
            if (c->pidx[a] >= 0) rc = mbl_model_set_param(w->model, c->pidx[a], x[a], st);
        double t0 = cpu_s();
        if (!rc) rc = point_at(c, w->model, x, warm_guess(w, x), &pt, st);
        double t1 = cpu_s();
        w->t_point += t1 - t0;
        if (!rc) {
            mbl_status st2;
            mbl_status_clear(&st2);
            if (mbl_relinearize(w->work, pt, w->lin, &st2) == 0) {
                rc = mbl_modal(w->lin, NULL, modes, st);
            } else {
                /* the first point's states do not parametrize the motion here: choose anew */
                rc = mbl_linearize(w->model, pt, &c->lopt, &one, st);
                if (!rc) rc = mbl_modal(one, NULL, modes, st);
            }
            w->t_lin += cpu_s() - t1;
        }
        if (!rc && sens && c->predictor == MBL_PREDICT_SENSITIVITY) point_sens(w, w->model, pt, 1, sens, sst);
        warm_record(w, x, rc ? NULL : pt, sens ? *sens : NULL);
    } else {
        mbl_model *model = NULL;
        /* the base overrides and this point's values (a copy: threads share c) */
        mbl_setting *sets = mbl_alloc_array((size_t)c->nsets + 1, sizeof *sets);
        if (!sets) return mbl_error(st, MBL_ENOMEM, "out of memory");
        memcpy(sets, c->sets, (size_t)c->nsets * sizeof *sets);
        for (int a = 0, k = c->nbase; a < c->naxes; a++)
            if (c->pidx[a] >= 0) sets[k++].value = x[a];
        double t0 = cpu_s();
        rc = mbl_model_load_file(c->path, sets, c->nsets, &model, st);
        mbl_free(sets);
        double t1 = cpu_s();
        if (!rc) rc = point_at(c, model, x, warm_guess(w, x), &pt, st);
        double t2 = cpu_s();
        if (!rc) rc = mbl_linearize(model, pt, &c->lopt, &one, st);
        if (!rc) rc = mbl_modal(one, NULL, modes, st);
        w->t_load += t1 - t0, w->t_point += t2 - t1, w->t_lin += cpu_s() - t2;
        if (!rc && sens && c->predictor == MBL_PREDICT_SENSITIVITY) point_sens(w, model, pt, 0, sens, sst);
        warm_record(w, x, rc ? NULL : pt, sens ? *sens : NULL);
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

/* ---- the grid and the threads ------------------------------------------------------------ */

typedef struct run {
    ctx *c;
    const mbl_sweep_options *opt;
    mbl_sweep *sw;
    point_out *pts;
    int keep_shapes;
    pthread_mutex_t lock;
    int next, done, chunk;
    int rank, size;          /* block k of the points is computed by rank k mod size (mbl_sweep_dist) */
    int nchunks;
    double t0;               /* when the points started (wall clock) */
} run;

static void axis_value(const mbl_sweep *sw, const mbl_sweep_options *opt, int p, double *x)
{
    int i[2] = {p % sw->count[0], p / sw->count[0]};
    for (int a = 0; a < sw->naxes; a++) {
        const mbl_sweep_axis *ax = &opt->axis[a];
        x[a] = i[a] == ax->count - 1 ? ax->to : ax->from + (ax->to - ax->from) * (double)i[a] / (double)(ax->count - 1);
    }
}

/* The derivatives of the modes m (mbl_modal's order and shapes) from the sensitivities S of the
 * same point: each eigenvalue of m is paired with the nearest of S (the two are computed
 * differently and agree to rounding); the shape derivative is carried into m's normalization
 * (m's shape = c S's shape: d(m's shape) = c d(S's shape), the change of c along the sweep does not
 * change a MAC). NAN where no eigenvalue of S is within 1e-6 relative, where S has no derivative
 * (a zero or repeated eigenvalue) or where the shapes do not correlate (MAC < 0.99). */
static void sens_to_modes(const mbl_modes *m, const mbl_sensitivity *S, int n, double *dre, double *dim, double *dsre,
                          double *dsim)
{
    int nm = m->nx;
    for (int j = 0; j < nm; j++) dre[j] = dim[j] = NAN;
    for (size_t e = 0; e < (size_t)nm * n; e++) dsre[e] = dsim[e] = NAN;
    if (!S || S->nwrt != 1 || S->n != n) return;
    char *used = mbl_calloc((size_t)S->nmode + 1, 1);
    if (!used) return;
    double big = 0;
    for (int j = 0; j < nm; j++) big = fmax(big, hypot(m->modes[j].re, m->modes[j].im));
    for (int j = 0; j < nm; j++) {
        double re = m->modes[j].re, im = m->modes[j].im, best = INFINITY;
        int tb = -1;
        for (int t = 0; t < S->nmode; t++) {
            double d = hypot(S->modes[t].re - re, S->modes[t].im - im);
            if (!used[t] && d < best) best = d, tb = t;
        }
        if (tb < 0 || !(best <= 1e-6 * (hypot(re, im) + 1e-6 * big))) continue;
        used[tb] = 1;
        const mbl_sens_mode *sm = &S->modes[tb];
        if (!sm->defined) continue;
        dre[j] = sm->dre[0], dim[j] = sm->dim[0];
        if (!m->shape_re || !m->shape_im || !S->dshape_re || !S->dshape_im) continue;
        const double *ar = S->shape_re + (size_t)n * tb, *ai = S->shape_im + (size_t)n * tb;
        const double *br = m->shape_re + (size_t)n * j, *bi = m->shape_im + (size_t)n * j;
        double sr = 0, si = 0, na = 0, nb = 0; /* a^H b */
        for (int k = 0; k < n; k++) {
            sr += ar[k] * br[k] + ai[k] * bi[k];
            si += ar[k] * bi[k] - ai[k] * br[k];
            na += ar[k] * ar[k] + ai[k] * ai[k];
            nb += br[k] * br[k] + bi[k] * bi[k];
        }
        if (!(na > 0) || !(nb > 0) || !((sr * sr + si * si) >= 0.99 * na * nb)) continue;
        double cr = sr / na, ci = si / na; /* b = c a */
        const double *dr = S->dshape_re + (size_t)n * tb, *di = S->dshape_im + (size_t)n * tb;
        for (int k = 0; k < n; k++) {
            dsre[(size_t)j * n + k] = cr * dr[k] - ci * di[k];
            dsim[(size_t)j * n + k] = cr * di[k] + ci * dr[k];
        }
    }
    mbl_free(used);
}

/* Store the modes of point p (the count must be the first point's) and, with the sensitivity
 * predictor, their derivatives from S (NULL: none at this point). */
static int store_point(run *r, int p, const mbl_modes *m, const mbl_sensitivity *S, mbl_status *st)
{
    ctx *c = r->c;
    if (m->nx != c->nm)
        return mbl_error(st, MBL_EDIM, "%d eigenvalues here, %d at the first point (a partial spectrum?)", m->nx, c->nm);
    point_out *o = &r->pts[p];
    o->re = mbl_alloc_array((size_t)c->nm + 1, sizeof(double));
    o->im = mbl_alloc_array((size_t)c->nm + 1, sizeof(double));
    if (!o->re || !o->im) return mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int j = 0; j < c->nm; j++) o->re[j] = m->modes[j].re, o->im[j] = m->modes[j].im;
    if (r->keep_shapes && m->shape_re && m->shape_im) {
        size_t len = (size_t)c->nm * (size_t)c->n;
        o->sre = mbl_alloc_array(len + 1, sizeof(double));
        o->sim = mbl_alloc_array(len + 1, sizeof(double));
        if (!o->sre || !o->sim) return mbl_error(st, MBL_ENOMEM, "out of memory");
        memcpy(o->sre, m->shape_re, len * sizeof(double));
        memcpy(o->sim, m->shape_im, len * sizeof(double));
    }
    if (c->predictor == MBL_PREDICT_SENSITIVITY && S) {
        size_t len = (size_t)c->nm * (size_t)c->n;
        o->dre = mbl_alloc_array((size_t)c->nm + 1, sizeof(double));
        o->dim = mbl_alloc_array((size_t)c->nm + 1, sizeof(double));
        o->dsre = mbl_alloc_array(len + 1, sizeof(double));
        o->dsim = mbl_alloc_array(len + 1, sizeof(double));
        if (!o->dre || !o->dim || !o->dsre || !o->dsim) return mbl_error(st, MBL_ENOMEM, "out of memory");
        sens_to_modes(m, S, c->n, o->dre, o->dim, o->dsre, o->dsim);
    }
    return 0;
}

typedef struct thread_arg {
    run *r;
    worker w;
} thread_arg;

static void *thread_main(void *arg)
{
    thread_arg *ta = arg;
    run *r = ta->r;
    mbl_sweep *sw = r->sw;
    for (;;) {
        /* points are handed out in blocks (fewer lock round trips on cheap points) */
        pthread_mutex_lock(&r->lock);
        int k = r->rank + r->next * r->size; /* this rank's next block */
        if (k < r->nchunks) r->next++;
        pthread_mutex_unlock(&r->lock);
        if (k >= r->nchunks) break;
        int p0 = k * r->chunk, p1 = p0 + r->chunk;
        if (p1 > sw->npoints) p1 = sw->npoints;
        for (int p = p0; p < p1; p++) {
            double x[2] = {0, 0};
            axis_value(sw, r->opt, p, x);
            mbl_status st;
            mbl_status_clear(&st);
            mbl_modes *m = NULL;
            mbl_sensitivity *S = NULL;
            int rc = eval_modes(&ta->w, x, p > p0, &m, &S, NULL, &st);
            if (!rc) rc = store_point(r, p, m, S, &st);
            mbl_modes_free(m);
            mbl_sensitivity_free(S);
            if (rc) {
                char buf[MBL_MSG_MAX + 64];
                snprintf(buf, sizeof buf, "%s", st.msg[0] ? st.msg : mbl_strerror(rc));
                sw->error[p] = dup_str(buf);
                sw->ok[p] = 0;
            } else {
                sw->ok[p] = 1;
            }
        }
        pthread_mutex_lock(&r->lock);
        r->done += p1 - p0;
        if (r->opt->progress) r->opt->progress(r->opt->progress_ud, r->done, sw->npoints);
        pthread_mutex_unlock(&r->lock);
    }
    return NULL;
}

void mbl_sweep_free(mbl_sweep *sw)
{
    if (!sw) return;
    mbl_free(sw->value);
    mbl_free(sw->re), mbl_free(sw->im), mbl_free(sw->freq_hz), mbl_free(sw->damping), mbl_free(sw->mac);
    mbl_free(sw->ok);
    if (sw->error)
        for (int p = 0; p < sw->npoints; p++) mbl_free(sw->error[p]);
    mbl_free(sw->error);
    if (sw->ctx) {
        worker *w = sw->ctx;
        ctx *c = w->c;
        worker_clear(w);
        ctx_free(c);
        mbl_free(w);
    }
    mbl_free(sw);
}


/* Check the options against the model and set up the context. */
static int make_ctx(const mbl_model *md, const mbl_sweep_options *opt, ctx **out, mbl_status *st)
{
    *out = NULL;
    if (!md) /* the caller's load failed (its reason in st): a distributed sweep still gathers it */
        return st && st->code ? st->code : mbl_error(st, MBL_EARG, "mbl_sweep_run: model is NULL");
    if (opt->naxes < 1 || opt->naxes > 2)
        return mbl_error(st, MBL_EARG, "a sweep has one or two parameters (%d given)", opt->naxes);
    for (int a = 0; a < opt->naxes; a++) {
        const mbl_sweep_axis *ax = &opt->axis[a];
        if (!ax->name || !ax->name[0]) return mbl_error(st, MBL_EARG, "sweep parameter %d has no name", a + 1);
        if (strlen(ax->name) >= MBL_SWEEP_NAME_MAX) return mbl_error(st, MBL_EARG, "sweep parameter name too long");
        if (ax->count < 2)
            return mbl_error(st, MBL_EARG, "%s: COUNT must be at least 2 (got %d)", ax->name, ax->count);
        if (!isfinite(ax->from) || !isfinite(ax->to) || !(ax->from < ax->to))
            return mbl_error(st, MBL_EARG, "%s: FROM must be below TO (got %g:%g)", ax->name, ax->from, ax->to);
        if (a == 1 && !strcmp(ax->name, opt->axis[0].name))
            return mbl_error(st, MBL_EARG, "%s: the two sweep parameters are the same", ax->name);
    }
    if (opt->lopt && opt->lopt->method && strcmp(opt->lopt->method, "augmented"))
        return mbl_error(st, MBL_EARG, "sweeps use the augmented method (the re-linearization workspace), not '%s'",
                         opt->lopt->method);
    ctx *c = mbl_calloc(1, sizeof *c);
    if (!c) return mbl_error(st, MBL_ENOMEM, "out of memory");
    mbl_model_info info;
    mbl_model_get_info(md, &info);
    const char *path = info.file;
    c->path = dup_str(path);
    c->naxes = opt->naxes;
    c->nbase = opt->nsets > 0 ? opt->nsets : 0;
    c->nsets = c->nbase + opt->naxes;
    c->sets = mbl_calloc((size_t)c->nsets, sizeof *c->sets);
    c->set_names = mbl_calloc((size_t)c->nsets, sizeof *c->set_names);
    if (!c->path || !c->sets || !c->set_names) {
        ctx_free(c);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    for (int i = 0; i < c->nbase; i++) {
        c->set_names[i] = dup_str(opt->sets[i].name ? opt->sets[i].name : "");
        if (!c->set_names[i]) {
            ctx_free(c);
            return mbl_error(st, MBL_ENOMEM, "out of memory");
        }
        c->sets[i].name = c->set_names[i];
        c->sets[i].value = opt->sets[i].value;
    }
    if (opt->popt) c->popt = *opt->popt;
    else mbl_opoint_options_default(&c->popt);
    if (opt->lopt) c->lopt = *opt->lopt;
    else mbl_lin_options_default(&c->lopt);
    c->lopt.method = "augmented";
    /* the caller's model: names of the axes (whether their parameters change in place: fast_probe) */
    int rc = 0;
    c->order = info.ncoord + info.nhol + info.nnh;
    c->m = info.nhol;
    c->fast = !opt->force_reload;
    int k = c->nbase;
    for (int a = 0; a < opt->naxes && !rc; a++) {
        const char *name = opt->axis[a].name;
        int i = 0;
        while (i < info.nparam && strcmp(mbl_model_param_name(md, i), name)) i++;
        if (i == info.nparam) {
            if (!strcmp(name, "t")) {
                c->pidx[a] = -1;
                continue;
            }
            char list[512] = "";
            for (int j = 0; j < info.nparam; j++) {
                size_t l = strlen(list);
                if (l + 8 >= sizeof list) break;
                snprintf(list + l, sizeof list - l, "%s%s", j ? ", " : "", mbl_model_param_name(md, j));
            }
            rc = mbl_error(st, MBL_EARG, "%s: the model has no parameter '%s' (parameters: %s; or t for time)", path,
                           name, info.nparam ? list : "none");
            break;
        }
        c->pidx[a] = i;
        for (int s = 0; s < c->nbase; s++)
            if (!strcmp(c->sets[s].name, name)) {
                rc = mbl_error(st, MBL_EARG, "%s is both swept and set", name);
                break;
            }
        if (rc) break;
        c->set_names[k] = dup_str(name);
        if (!c->set_names[k]) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        else c->sets[k].name = c->set_names[k], c->sets[k].value = 0, k++;
    }
    c->nsets = k;
    if (rc) {
        ctx_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

/* Whether the axes' parameters change in place (the fast path): tried on the first worker's own
 * copy of the model, which it keeps (eval_modes makes its workspace on it); else the reload path. */
static int fast_probe(worker *w, mbl_status *st)
{
    ctx *c = w->c;
    int rc = mbl_model_load_file(c->path, c->sets, c->nbase, &w->model, st);
    if (rc) return rc;
    for (int a = 0; a < c->naxes; a++) {
        mbl_status st2;
        if (c->pidx[a] >= 0 && mbl_model_set_param(w->model, c->pidx[a], mbl_model_param_value(w->model, c->pidx[a]), &st2))
            c->fast = 0;
    }
    if (!c->fast) worker_clear(w);
    return 0;
}

/* The sweep's setup and this rank's points (all points on one process) into r->pts, sw->ok and
 * sw->error; *out NULL on failure (everything freed). */
static int sweep_points(const mbl_model *model, const mbl_sweep_options *opt, run *rr, mbl_sweep **out,
                        mbl_status *st)
{
    *out = NULL;
    ctx *c = NULL;
    int rc = make_ctx(model, opt, &c, st);
    if (rc) return rc;
    const char *path = c->path;
    mbl_sweep *sw = mbl_calloc(1, sizeof *sw);
    if (!sw) {
        ctx_free(c);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    sw->naxes = opt->naxes;
    sw->count[0] = opt->axis[0].count;
    sw->count[1] = opt->naxes > 1 ? opt->axis[1].count : 1;
    for (int a = 0; a < opt->naxes; a++) snprintf(sw->axis_name[a], MBL_SWEEP_NAME_MAX, "%s", opt->axis[a].name);
    if ((double)sw->count[0] * (double)sw->count[1] > 1e8) {
        mbl_sweep_free(sw);
        ctx_free(c);
        return mbl_error(st, MBL_EARG, "too many sweep points (%d x %d)", sw->count[0], sw->count[1]);
    }
    sw->npoints = sw->count[0] * sw->count[1];
    sw->ranks = rr->size;
    int threads = opt->threads > 0 ? opt->threads : 1;
    if (threads > sw->npoints) threads = sw->npoints;
    if (threads > 256) threads = 256;
    sw->threads = threads;
    worker *keep = mbl_calloc(1, sizeof *keep); /* the state kept for mbl_sweep_critical */
    sw->value = mbl_alloc_array((size_t)sw->npoints * (size_t)sw->naxes, sizeof *sw->value);
    sw->ok = mbl_calloc((size_t)sw->npoints, sizeof *sw->ok);
    sw->error = mbl_calloc((size_t)sw->npoints, sizeof *sw->error);
    if (!keep || !sw->value || !sw->ok || !sw->error) {
        mbl_free(keep);
        mbl_sweep_free(sw);
        ctx_free(c);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    keep->c = c;
    sw->ctx = keep;
    for (int p = 0; p < sw->npoints; p++) axis_value(sw, opt, p, sw->value + (size_t)p * sw->naxes);
    double x0[2] = {opt->axis[0].from, opt->naxes > 1 ? opt->axis[1].from : 0};
    keep->x0[0] = x0[0], keep->x0[1] = x0[1];

    /* the first point on this thread: sizes, the error when the sweep cannot start, and whether
     * the sensitivity predictor is available */
    int want = opt->predictor == MBL_PREDICT_SENSITIVITY || (opt->predictor == MBL_PREDICT_DEFAULT && c->order <= SENS_DEFAULT_MAX);
    if (opt->predictor < MBL_PREDICT_DEFAULT || opt->predictor > MBL_PREDICT_SENSITIVITY) {
        mbl_sweep_free(sw);
        return mbl_error(st, MBL_EARG, "unknown tracking predictor %d", opt->predictor);
    }
    c->predictor = want && c->pidx[0] >= 0 ? MBL_PREDICT_SENSITIVITY : MBL_PREDICT_LINEAR;
    if (want && c->pidx[0] < 0) {
        if (opt->predictor == MBL_PREDICT_SENSITIVITY) {
            mbl_sweep_free(sw);
            return mbl_error(st, MBL_EARG,
                             "the sensitivity predictor needs a parameter as the first sweep axis (not the time t): "
                             "use --predictor linear");
        }
        snprintf(sw->predictor_note, sizeof sw->predictor_note, "a sweep over the time t has no parameter derivative");
    }
    if (c->fast && (rc = fast_probe(keep, st))) {
        mbl_sweep_free(sw);
        return rc;
    }
    sw->fast = c->fast;
    mbl_modes *m0 = NULL;
    mbl_sensitivity *S0 = NULL;
    mbl_status sst;
    mbl_status_clear(&sst);
    rc = eval_modes(keep, x0, 0, &m0, &S0, &sst, st);
    if (rc) {
        mbl_error_prefix(st, "%s: the sweep's first point (%s = %g)", path, opt->axis[0].name, x0[0]);
        mbl_sweep_free(sw);
        return rc;
    }
    if (c->predictor == MBL_PREDICT_SENSITIVITY && !S0) {
        if (opt->predictor == MBL_PREDICT_SENSITIVITY) {
            mbl_modes_free(m0);
            mbl_sweep_free(sw);
            *st = sst;
            mbl_error_prefix(st, "%s: the sensitivity predictor at the sweep's first point (%s = %g)", path,
                             opt->axis[0].name, x0[0]);
            return st->code ? st->code : MBL_EMODEL;
        }
        c->predictor = MBL_PREDICT_LINEAR;
        snprintf(sw->predictor_note, sizeof sw->predictor_note, "%s", sst.msg[0] ? sst.msg : "sensitivities failed");
    }
    mbl_sensitivity_free(S0);
    sw->predictor = c->predictor;
    c->nm = m0->nx;
    c->n = m0->n;
    sw->nmodes = c->nm;
    sw->n = c->n;
    mbl_modes_free(m0);

    run r = *rr;
    r.c = c;
    r.opt = opt;
    r.sw = sw;
    /* blocks of consecutive points, each computed by one thread in order (the warm start runs
     * within a block): their size does not depend on the number of threads, so neither do the
     * results */
    r.chunk = sw->npoints / 16;
    if (r.chunk < 1) r.chunk = 1;
    if (r.chunk > 16) r.chunk = 16;
    r.nchunks = (sw->npoints + r.chunk - 1) / r.chunk;
    r.keep_shapes = (double)sw->npoints * (double)c->nm * (double)c->n <= SHAPES_MAX;
    r.pts = mbl_calloc((size_t)sw->npoints, sizeof *r.pts);
    thread_arg *ta = mbl_calloc((size_t)threads, sizeof *ta);
    pthread_t *tid = mbl_calloc((size_t)threads, sizeof *tid);
    if (!r.pts || !ta || !tid || pthread_mutex_init(&r.lock, NULL)) {
        mbl_free(r.pts), mbl_free(ta), mbl_free(tid);
        mbl_sweep_free(sw);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    double t0 = r.t0 = now_s();
    int *started = mbl_calloc((size_t)threads, sizeof *started);
    for (int t = 0; t < threads; t++) {
        ta[t].r = &r;
        ta[t].w.c = c;
        ta[t].w.x0[0] = x0[0], ta[t].w.x0[1] = x0[1];
    }
    /* thread 0 is this one; a thread that cannot be started leaves its points to the others */
    for (int t = 1; t < threads && started; t++) started[t] = pthread_create(&tid[t], NULL, thread_main, &ta[t]) == 0;
    thread_main(&ta[0]);
    for (int t = 1; t < threads && started; t++)
        if (started[t]) pthread_join(tid[t], NULL);
    sw->seconds = now_s() - t0;
    for (int t = 0; t < threads; t++) {
        sw->seconds_load += ta[t].w.t_load, sw->seconds_point += ta[t].w.t_point, sw->seconds_lin += ta[t].w.t_lin;
        sw->seconds_sens += ta[t].w.t_sens;
        sw->nwarm += (int)ta[t].w.warm_points;
        worker_clear(&ta[t].w);
    }
    pthread_mutex_destroy(&r.lock);
    mbl_free(started);
    mbl_free(ta);
    mbl_free(tid);
    *rr = r;
    *out = sw;
    return 0;
}

/* The modes of the computed points tracked in order, into sw (r->pts: every point's raw results). */
static int sweep_track(mbl_sweep *sw, const run *rp, const mbl_sweep_options *opt, mbl_status *st)
{
    const run r = *rp;
    ctx *c = r.c;
    int rc = 0;
    /* tracking, over the points that were computed, in order (rows of a 2-axis grid start from
     * the start of the previous row) */
    int nm = c->nm, n = c->n;
    size_t tot = (size_t)sw->npoints * (size_t)nm;
    sw->re = mbl_alloc_array(tot + 1, sizeof(double));
    sw->im = mbl_alloc_array(tot + 1, sizeof(double));
    sw->freq_hz = mbl_alloc_array(tot + 1, sizeof(double));
    sw->damping = mbl_alloc_array(tot + 1, sizeof(double));
    sw->mac = mbl_alloc_array(tot + 1, sizeof(double));
    int *idx = mbl_alloc_array((size_t)sw->npoints + 1, sizeof(int)), *prev = mbl_alloc_array((size_t)sw->npoints + 1, sizeof(int));
    int nok = 0;
    for (int p = 0; p < sw->npoints; p++) nok += sw->ok[p];
    sw->nfailed = sw->npoints - nok;
    size_t okt = (size_t)(nok ? nok : 1) * (size_t)nm;
    double *lre = mbl_alloc_array(okt + 1, sizeof(double)), *lim = mbl_alloc_array(okt + 1, sizeof(double));
    double *xx = mbl_alloc_array((size_t)nok + 1, sizeof(double)), *mac = mbl_alloc_array(okt + 1, sizeof(double));
    int *perm = mbl_alloc_array(okt + 1, sizeof(int));
    int shapes = r.keep_shapes;
    for (int p = 0; p < sw->npoints && shapes; p++)
        if (sw->ok[p] && !r.pts[p].sre) shapes = 0;
    double *sre = shapes ? mbl_alloc_array(okt * (size_t)n + 1, sizeof(double)) : NULL;
    double *sim = shapes ? mbl_alloc_array(okt * (size_t)n + 1, sizeof(double)) : NULL;
    /* the sensitivity predictor's derivatives (NAN at points without them: linear there) */
    int sens = c->predictor == MBL_PREDICT_SENSITIVITY;
    double *dre = sens ? mbl_alloc_array(okt + 1, sizeof(double)) : NULL;
    double *dim = sens ? mbl_alloc_array(okt + 1, sizeof(double)) : NULL;
    double *dsre = sens && shapes ? mbl_alloc_array(okt * (size_t)n + 1, sizeof(double)) : NULL;
    double *dsim = sens && shapes ? mbl_alloc_array(okt * (size_t)n + 1, sizeof(double)) : NULL;
    if (!sw->re || !sw->im || !sw->freq_hz || !sw->damping || !sw->mac || !idx || !prev || !lre || !lim || !xx ||
        !mac || !perm || (shapes && (!sre || !sim)) || (sens && (!dre || !dim)) || (sens && shapes && (!dsre || !dsim)))
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    if (!rc) {
        /* order of the ok points; prev = the ok point each is tracked from */
        int k = 0, last_row_start = -1;
        for (int i1 = 0; i1 < sw->count[1]; i1++) {
            int last = -1, row_start = -1;
            for (int i0 = 0; i0 < sw->count[0]; i0++) {
                int p = i0 + sw->count[0] * i1;
                if (!sw->ok[p]) continue;
                idx[k] = p;
                prev[k] = last >= 0 ? last : last_row_start;
                xx[k] = sw->value[(size_t)p * sw->naxes];
                memcpy(lre + (size_t)k * nm, r.pts[p].re, (size_t)nm * sizeof(double));
                memcpy(lim + (size_t)k * nm, r.pts[p].im, (size_t)nm * sizeof(double));
                if (shapes) {
                    memcpy(sre + (size_t)k * nm * n, r.pts[p].sre, (size_t)nm * n * sizeof(double));
                    memcpy(sim + (size_t)k * nm * n, r.pts[p].sim, (size_t)nm * n * sizeof(double));
                }
                if (sens) {
                    const point_out *o = &r.pts[p];
                    sw->npredicted += o->dre != NULL;
                    for (int j = 0; j < nm; j++) {
                        dre[(size_t)k * nm + j] = o->dre ? o->dre[j] : NAN;
                        dim[(size_t)k * nm + j] = o->dim ? o->dim[j] : NAN;
                    }
                    for (size_t e = 0; shapes && e < (size_t)nm * n; e++) {
                        dsre[(size_t)k * nm * n + e] = o->dsre ? o->dsre[e] : NAN;
                        dsim[(size_t)k * nm * n + e] = o->dsim ? o->dsim[e] : NAN;
                    }
                }
                if (row_start < 0) row_start = k;
                last = k++;
            }
            if (row_start >= 0) last_row_start = row_start;
        }
        if (nok)
            rc = mbl_track_modes_pred(nok, nm, n, lre, lim, dre, dim, sre, sim, dsre, dsim, xx, prev, opt->mac_weight,
                                      perm, mac, st);
    }
    if (!rc) {
        for (size_t i = 0; i < tot; i++)
            sw->re[i] = sw->im[i] = sw->freq_hz[i] = sw->damping[i] = sw->mac[i] = NAN;
        for (int k = 0; k < nok; k++) {
            int p = idx[k];
            for (int b = 0; b < nm; b++) {
                int j = perm[(size_t)k * nm + b];
                double re = lre[(size_t)k * nm + j], im = lim[(size_t)k * nm + j], a = hypot(re, im);
                size_t o = (size_t)p * nm + b;
                sw->re[o] = re, sw->im[o] = im;
                sw->freq_hz[o] = a / TWO_PI;
                sw->damping[o] = a > 0 ? -re / a + 0.0 : 0.0; /* + 0.0: no negative zero */
                sw->mac[o] = mac[(size_t)k * nm + b];
            }
        }
    }
    mbl_free(idx), mbl_free(prev), mbl_free(lre), mbl_free(lim), mbl_free(xx), mbl_free(mac), mbl_free(perm);
    mbl_free(sre), mbl_free(sim), mbl_free(dre), mbl_free(dim), mbl_free(dsre), mbl_free(dsim);
    return rc;
}

static void pts_free(run *r, int npoints)
{
    for (int p = 0; r->pts && p < npoints; p++) {
        mbl_free(r->pts[p].re), mbl_free(r->pts[p].im), mbl_free(r->pts[p].sre), mbl_free(r->pts[p].sim);
        mbl_free(r->pts[p].dre), mbl_free(r->pts[p].dim), mbl_free(r->pts[p].dsre), mbl_free(r->pts[p].dsim);
    }
    mbl_free(r->pts);
    r->pts = NULL;
}

/* ---- a sweep over several processes (mbl_sweep_dist) ---------------------------------------- */

/* A growing array of doubles: the packed raw results of a rank. */
typedef struct pack {
    double *d;
    size_t n, cap;
    int oom;
} pack;

static double *pk_room(pack *b, size_t n)
{
    if (b->oom) return NULL;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->n + n) cap *= 2;
        double *t = mbl_realloc_array(b->d, cap, sizeof *t);
        if (!t) return b->oom = 1, NULL;
        b->d = t, b->cap = cap;
    }
    double *at = b->d + b->n;
    b->n += n;
    return at;
}

static void pk(pack *b, const double *x, size_t n)
{
    double *at = pk_room(b, n);
    if (at && n) memcpy(at, x, n * sizeof *x);
}

static void pk1(pack *b, double x) { pk(b, &x, 1); }

/* a string: its length, then its bytes in whole doubles */
static void pk_str(pack *b, const char *s)
{
    size_t l = strlen(s), nd = (l + sizeof(double) - 1) / sizeof(double);
    pk1(b, (double)l);
    double *at = pk_room(b, nd);
    if (!at) return;
    memset(at, 0, nd * sizeof *at);
    memcpy(at, s, l);
}

/* Reading a rank's part back; every read checks the length (a short part: *bad = 1). */
typedef struct unpack {
    const double *d;
    size_t n, at;
    int bad;
} unpack;

static const double *up_take(unpack *u, size_t n)
{
    if (u->bad || n > u->n - u->at) return u->bad = 1, NULL;
    const double *x = u->d + u->at;
    u->at += n;
    return x;
}

static double up1(unpack *u)
{
    const double *x = up_take(u, 1);
    return x ? *x : 0;
}

static double *up_arr(unpack *u, size_t n)
{
    const double *x = up_take(u, n);
    double *a = x ? mbl_alloc_array(n + 1, sizeof *a) : NULL;
    if (!a) return u->bad = 1, NULL;
    memcpy(a, x, n * sizeof *a);
    return a;
}

static char *up_str(unpack *u)
{
    double l = up1(u);
    if (u->bad || !(l >= 0) || l > 1e6) return u->bad = 1, NULL;
    size_t len = (size_t)l;
    const double *x = up_take(u, (len + sizeof(double) - 1) / sizeof(double));
    char *s = x ? mbl_malloc(len + 1) : NULL;
    if (!s) return u->bad = 1, NULL;
    memcpy(s, x, len);
    s[len] = '\0';
    return s;
}

enum { HDR_RC, HDR_LOAD, HDR_POINT, HDR_LIN, HDR_SENS, HDR_WARM, HDR_NPTS, HDR_N }; /* then the message */
enum { PT_SHAPES = 1, PT_DERIV = 2, PT_DSHAPES = 4 }; /* shape derivatives: only with the shapes (tracking uses them then) */

/* How many points rank q computes (its blocks k = q, q + size, ...). */
static int rank_points(const run *r, int npoints, int q, int size)
{
    int cnt = 0;
    for (int k = q; k < r->nchunks; k += size) cnt += (k + 1) * r->chunk > npoints ? npoints - k * r->chunk : r->chunk;
    return cnt;
}

/* Every rank's raw results to rank 0 (one collective call on every rank, whatever rc is): rank 0
 * then holds every point in r->pts, sw->ok, sw->error, as if it had computed them. On the other
 * ranks *swp is freed and NULL. Returns the sweep's status, the same failure on every rank. */
static int sweep_gather(const mbl_sweep_dist *d, int rc, run *r, mbl_sweep **swp, mbl_status *st)
{
    mbl_sweep *sw = *swp;
    pack b = {0};
    double hdr[HDR_N] = {0};
    hdr[HDR_RC] = rc;
    if (sw) {
        hdr[HDR_LOAD] = sw->seconds_load, hdr[HDR_POINT] = sw->seconds_point, hdr[HDR_LIN] = sw->seconds_lin;
        hdr[HDR_SENS] = sw->seconds_sens, hdr[HDR_WARM] = sw->nwarm;
    }
    size_t nm = sw && !rc ? (size_t)r->c->nm : 0, n = sw && !rc ? (size_t)r->c->n : 0;
    int npts = !rc && d->rank != 0 ? rank_points(r, sw->npoints, d->rank, d->size) : 0;
    hdr[HDR_NPTS] = npts;
    pk(&b, hdr, HDR_N);
    pk_str(&b, rc ? st->msg : "");
    for (int k = d->rank; npts && k < r->nchunks; k += d->size)
        for (int p = k * r->chunk; p < (k + 1) * r->chunk && p < sw->npoints; p++) {
            const point_out *o = &r->pts[p];
            pk1(&b, p);
            pk1(&b, sw->ok[p]);
            if (!sw->ok[p]) {
                pk_str(&b, sw->error[p] ? sw->error[p] : "");
                continue;
            }
            int fl = (o->sre && o->sim ? PT_SHAPES : 0) | (o->dre && o->dim ? PT_DERIV : 0);
            if ((fl & PT_SHAPES) && (fl & PT_DERIV) && o->dsre && o->dsim) fl |= PT_DSHAPES;
            pk1(&b, fl);
            pk(&b, o->re, nm), pk(&b, o->im, nm);
            if (fl & PT_SHAPES) pk(&b, o->sre, nm * n), pk(&b, o->sim, nm * n);
            if (fl & PT_DERIV) pk(&b, o->dre, nm), pk(&b, o->dim, nm);
            if (fl & PT_DSHAPES) pk(&b, o->dsre, nm * n), pk(&b, o->dsim, nm * n);
        }
    if (b.oom) { /* an honest part that says so: the others are not left waiting */
        b.n = 0, b.oom = 0;
        hdr[HDR_RC] = MBL_ENOMEM, hdr[HDR_NPTS] = 0;
        pk(&b, hdr, HDR_N);
        pk_str(&b, "out of memory packing the results");
        if (!rc) rc = mbl_error(st, MBL_ENOMEM, "out of memory packing the results");
    }
    double *all = NULL;
    size_t *counts = d->rank == 0 ? mbl_calloc((size_t)d->size, sizeof *counts) : NULL;
    mbl_status gst;
    mbl_status_clear(&gst);
    int grc = b.oom ? MBL_ENOMEM : d->gather(d->ud, b.d, b.n, &all, counts, &gst);
    mbl_free(b.d);
    if (d->rank != 0 || grc || rc || !counts) {
        mbl_free(all);
        mbl_free(counts);
        if (!rc && grc) *st = gst, rc = grc;
        if (!rc && d->rank == 0) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        if (d->rank != 0 || rc) {
            mbl_sweep_free(sw);
            *swp = NULL;
        }
        return rc;
    }
    /* rank 0: the others' parts */
    size_t off = counts[0];
    double bytes = 0;
    for (int q = 1; q < d->size && !rc; off += counts[q], q++) {
        unpack u = {all + off, counts[q], 0, 0};
        const double *h = up_take(&u, HDR_N);
        char *msg = up_str(&u);
        if (u.bad) {
            mbl_free(msg);
            rc = mbl_error(st, MBL_EIO, "rank %d sent a malformed part (%zu doubles)", q, counts[q]);
            break;
        }
        if (h[HDR_RC] != 0) {
            rc = mbl_error(st, (int)h[HDR_RC], "rank %d: %s", q, msg[0] ? msg : mbl_strerror((int)h[HDR_RC]));
            mbl_free(msg);
            break;
        }
        mbl_free(msg);
        bytes += (double)counts[q] * sizeof(double);
        sw->seconds_load += h[HDR_LOAD], sw->seconds_point += h[HDR_POINT], sw->seconds_lin += h[HDR_LIN];
        sw->seconds_sens += h[HDR_SENS], sw->nwarm += (int)h[HDR_WARM];
        int cnt = (int)h[HDR_NPTS];
        if (cnt != rank_points(r, sw->npoints, q, d->size)) u.bad = 1;
        for (int i = 0; i < cnt && !u.bad; i++) {
            double pv = up1(&u), okv = up1(&u);
            int p = (int)pv;
            if (u.bad || pv != p || p < 0 || p >= sw->npoints || (p / r->chunk) % d->size != q || r->pts[p].re ||
                sw->error[p]) {
                u.bad = 1;
                break;
            }
            if (okv == 0) {
                sw->ok[p] = 0;
                sw->error[p] = up_str(&u);
                continue;
            }
            point_out *o = &r->pts[p];
            int fl = (int)up1(&u);
            o->re = up_arr(&u, nm), o->im = up_arr(&u, nm);
            if (fl & PT_SHAPES) o->sre = up_arr(&u, nm * n), o->sim = up_arr(&u, nm * n);
            if (fl & PT_DERIV) o->dre = up_arr(&u, nm), o->dim = up_arr(&u, nm);
            if (fl & PT_DSHAPES) o->dsre = up_arr(&u, nm * n), o->dsim = up_arr(&u, nm * n);
            sw->ok[p] = !u.bad;
        }
        if (u.bad || u.at != u.n) rc = mbl_error(st, MBL_EIO, "rank %d sent a malformed part (%zu doubles)", q, counts[q]);
    }
    mbl_free(all);
    mbl_free(counts);
    if (rc) {
        mbl_sweep_free(sw);
        *swp = NULL;
        return rc;
    }
    sw->gathered_bytes = bytes;
    sw->seconds = now_s() - r->t0;
    return 0;
}

int mbl_sweep_run(const mbl_model *model, const mbl_sweep_options *opt_in, mbl_sweep **out, mbl_status *st)
{
    if (!out) return mbl_error(st, MBL_EARG, "mbl_sweep_run: out is NULL");
    *out = NULL;
    mbl_sweep_options defaults;
    mbl_sweep_options_default(&defaults);
    const mbl_sweep_options *opt = opt_in ? opt_in : &defaults;
    const mbl_sweep_dist *d = opt->dist && opt->dist->size > 1 ? opt->dist : NULL;
    if (d && (!d->gather || d->rank < 0 || d->rank >= d->size))
        return mbl_error(st, MBL_EARG, "mbl_sweep_run: bad distribution (rank %d of %d%s)", d->rank, d->size,
                         d->gather ? "" : ", no gather");
    run r;
    memset(&r, 0, sizeof r);
    r.rank = d ? d->rank : 0;
    r.size = d ? d->size : 1;
    mbl_sweep *sw = NULL;
    int rc = sweep_points(model, opt, &r, &sw, st);
    int np = sw ? sw->npoints : 0;
    if (d) rc = sweep_gather(d, rc, &r, &sw, st); /* on ranks other than 0, sw is freed */
    if (!rc && sw) rc = sweep_track(sw, &r, opt, st);
    pts_free(&r, np);
    if (rc || !sw) {
        mbl_sweep_free(sw);
        return rc;
    }
    const char *path = ((const worker *)sw->ctx)->c->path;
    const char *slash = strrchr(path, '/');
    snprintf(sw->model_name, sizeof sw->model_name, "%s", slash ? slash + 1 : path);
    *out = sw;
    return 0;
}


/* ---- Campbell diagram: critical speeds ------------------------------------------------------ */

/* The oscillatory eigenvalue (Im > 0) of a new point nearest `target`. */
static int nearest_at(worker *w, double x, double tr, double ti, double zero, double *re, double *im, mbl_status *st)
{
    double xv[2] = {x, w->x0[1]};
    mbl_modes *m = NULL;
    int rc = eval_modes(w, xv, 0, &m, NULL, NULL, st);
    if (rc) return rc;
    double best = INFINITY;
    for (int j = 0; j < m->nx; j++) {
        double d = hypot(m->modes[j].re - tr, m->modes[j].im - ti);
        if (m->modes[j].im > zero && d < best) best = d, *re = m->modes[j].re, *im = m->modes[j].im;
    }
    mbl_modes_free(m);
    if (!isfinite(best)) return mbl_error(st, MBL_ENOCONV, "no oscillatory mode at %g", x);
    return 0;
}

int mbl_sweep_critical(mbl_sweep *sw, const double *orders, int norders, double hz_per_unit, double tol,
                       mbl_critical **out, int *ncrit, mbl_status *st)
{
    if (!sw || !out || !ncrit || (norders && !orders)) return mbl_error(st, MBL_EARG, "mbl_sweep_critical: NULL argument");
    *out = NULL;
    *ncrit = 0;
    if (sw->naxes != 1) return mbl_error(st, MBL_EARG, "critical speeds need a sweep over one parameter");
    if (!(hz_per_unit > 0) || !isfinite(hz_per_unit)) return mbl_error(st, MBL_EARG, "hz_per_unit must be positive");
    if (!(tol > 0)) tol = 1e-10;
    worker *w = sw->ctx;
    int nm = sw->nmodes, cap = 0, nc = 0;
    double zero = mbl_sweep_zero_level(sw);
    mbl_critical *cr = NULL;
    for (int o = 0; o < norders; o++) {
        double k = orders[o];
        if (!(k > 0) || !isfinite(k)) {
            mbl_free(cr);
            return mbl_error(st, MBL_EARG, "excitation orders must be positive (got %g)", k);
        }
        for (int b = 0; b < nm; b++)
            for (int p = 0; p + 1 < sw->npoints; p++) {
                size_t i0 = (size_t)p * nm + b, i1 = (size_t)(p + 1) * nm + b;
                if (!sw->ok[p] || !sw->ok[p + 1] || !(sw->im[i0] > zero) || !(sw->im[i1] > zero)) continue;
                double xa = sw->value[p], xb = sw->value[p + 1];
                double ga = sw->im[i0] / TWO_PI - k * xa * hz_per_unit, gb = sw->im[i1] / TWO_PI - k * xb * hz_per_unit;
                if (!(ga == 0 || (ga < 0) != (gb < 0))) continue;
                if (gb == 0) continue; /* counted at the next interval */
                /* regula falsi (Illinois) on the bracket [xa, xb], the branch followed by the
                 * eigenvalue nearest the interpolation between the bracket's ends */
                double ra = sw->re[i0], ia = sw->im[i0], rb = sw->re[i1], ib = sw->im[i1];
                double x = xa, fr = ra, fi = ia;
                int refined = 0, side = 0;
                if (ga != 0 && w && w->c) {
                    double xprev = INFINITY;
                    for (int it = 0; it < 30; it++) {
                        x = xa - ga * (xb - xa) / (gb - ga);
                        if (!(x > xa && x < xb)) x = 0.5 * (xa + xb);
                        double s = (x - xa) / (xb - xa);
                        double re = 0, im = 0;
                        mbl_status st2;
                        if (nearest_at(w, x, ra + s * (rb - ra), ia + s * (ib - ia), zero, &re, &im, &st2)) break;
                        fr = re, fi = im;
                        double g = im / TWO_PI - k * x * hz_per_unit;
                        if (fabs(x - xprev) <= tol * fmax(fabs(x), 1e-300) || g == 0) {
                            refined = 1;
                            break;
                        }
                        xprev = x;
                        if ((g < 0) == (ga < 0)) {
                            xa = x, ga = g, ra = re, ia = im;
                            if (side == -1) gb *= 0.5;
                            side = -1;
                        } else {
                            xb = x, gb = g, rb = re, ib = im;
                            if (side == 1) ga *= 0.5;
                            side = 1;
                        }
                    }
                }
                if (!refined && ga != 0) {
                    /* linear interpolation between the sweep's points */
                    x = xa - ga * (xb - xa) / (gb - ga);
                    double s = (x - xa) / (xb - xa);
                    fr = ra + s * (rb - ra), fi = ia + s * (ib - ia);
                }
                if (nc == cap) {
                    cap = cap ? 2 * cap : 16;
                    mbl_critical *t = mbl_realloc_array(cr, (size_t)cap, sizeof *cr);
                    if (!t) {
                        mbl_free(cr);
                        return mbl_error(st, MBL_ENOMEM, "out of memory");
                    }
                    cr = t;
                }
                double slope = (sw->im[i1] - sw->im[i0]) / TWO_PI / (sw->value[p + 1] - sw->value[p]);
                double rel = 1e-6 * fabs(sw->im[i0]) / TWO_PI / (sw->value[p + 1] - sw->value[p] + 1e-300);
                cr[nc].branch = b;
                cr[nc].order = k;
                cr[nc].speed = x;
                cr[nc].freq_hz = fi / TWO_PI;
                (void)fr;
                cr[nc].refined = refined;
                cr[nc].whirl = slope > rel ? 1 : slope < -rel ? -1 : 0;
                nc++;
            }
    }
    *out = cr;
    *ncrit = nc;
    return 0;
}

/* ---- CSV and JSON ---------------------------------------------------------------------------- */

int mbl_sweep_write_csv(FILE *f, const mbl_sweep *sw)
{
    if (!f || !sw) return MBL_EARG;
    for (int a = 0; a < sw->naxes; a++) fprintf(f, "%s,", sw->axis_name[a]);
    fprintf(f, "branch,re,im,freq_hz,damping_ratio,mac\n");
    for (int p = 0; p < sw->npoints; p++)
        for (int b = 0; b < sw->nmodes; b++) {
            for (int a = 0; a < sw->naxes; a++) fprintf(f, "%.17g,", sw->value[(size_t)p * sw->naxes + a]);
            size_t o = (size_t)p * sw->nmodes + b;
            fprintf(f, "%d,%.17g,%.17g,%.17g,%.17g,%.17g\n", b + 1, sw->re[o], sw->im[o], sw->freq_hz[o], sw->damping[o],
                    sw->mac[o]);
        }
    return ferror(f) ? MBL_EIO : 0;
}

int mbl_sweep_write_json(FILE *f, const mbl_sweep *sw, const mbl_critical *crit, int ncrit)
{
    if (!f || !sw) return MBL_EARG;
    fputs("{\"model\": ", f);
    mbl_json_string(f, sw->model_name);
    fputs(", \"axes\": [", f);
    for (int a = 0; a < sw->naxes; a++) {
        int c = sw->count[a];
        fputs(a ? ", {\"name\": " : "{\"name\": ", f);
        mbl_json_string(f, sw->axis_name[a]);
        size_t plast = a == 0 ? (size_t)(c - 1) : (size_t)(c - 1) * (size_t)sw->count[0];
        double first = sw->value[a], last = sw->value[plast * (size_t)sw->naxes + (size_t)a];
        fputs(", \"from\": ", f);
        mbl_json_number(f, first, 17, 0);
        fputs(", \"to\": ", f);
        mbl_json_number(f, last, 17, 0);
        fprintf(f, ", \"count\": %d}", c);
    }
    fprintf(f, "], \"points\": %d, \"modes\": %d, \"fast\": %s, \"threads\": %d, \"seconds\": %.6f,",
            sw->npoints, sw->nmodes, sw->fast ? "true" : "false", sw->threads, sw->seconds);
    fprintf(f, " \"predictor\": \"%s\", \"predicted_points\": %d, \"predictor_note\": ",
            sw->predictor == MBL_PREDICT_SENSITIVITY ? "sensitivity" : "linear", sw->npredicted);
    mbl_json_string(f, sw->predictor_note);
    fputs(",\n\"values\": [", f);
    for (int p = 0; p < sw->npoints; p++) {
        fputs(p ? ", [" : "[", f);
        for (int a = 0; a < sw->naxes; a++) {
            if (a) fputs(", ", f);
            mbl_json_number(f, sw->value[(size_t)p * sw->naxes + a], 17, 0);
        }
        fputc(']', f);
    }
    fputs("],\n\"branches\": [", f);
    const char *keys[] = {"re", "im", "freq_hz", "damping_ratio", "mac"};
    const double *arr[] = {sw->re, sw->im, sw->freq_hz, sw->damping, sw->mac};
    for (int b = 0; b < sw->nmodes; b++) {
        fputs(b ? ",\n {" : "\n {", f);
        for (int k = 0; k < 5; k++) {
            fprintf(f, "%s\"%s\": [", k ? ", " : "", keys[k]);
            for (int p = 0; p < sw->npoints; p++) {
                if (p) fputs(", ", f);
                mbl_json_number(f, arr[k][(size_t)p * sw->nmodes + b], 17, 0);
            }
            fputc(']', f);
        }
        fputc('}', f);
    }
    fputs("],\n\"failed\": [", f);
    int first = 1;
    for (int p = 0; p < sw->npoints; p++)
        if (!sw->ok[p]) {
            fprintf(f, "%s{\"point\": %d, \"error\": ", first ? "" : ", ", p);
            mbl_json_string(f, sw->error[p] ? sw->error[p] : "");
            fputc('}', f);
            first = 0;
        }
    fputc(']', f);
    if (crit) {
        fputs(",\n\"critical_speeds\": [", f);
        for (int i = 0; i < ncrit; i++) {
            fprintf(f, "%s{\"branch\": %d, \"order\": ", i ? ", " : "", crit[i].branch + 1);
            mbl_json_number(f, crit[i].order, 17, 0);
            fputs(", \"speed\": ", f);
            mbl_json_number(f, crit[i].speed, 17, 0);
            fputs(", \"freq_hz\": ", f);
            mbl_json_number(f, crit[i].freq_hz, 17, 0);
            fprintf(f, ", \"trend\": \"%s\", \"refined\": %s}",
                    crit[i].whirl > 0 ? "rising" : crit[i].whirl < 0 ? "falling" : "flat", crit[i].refined ? "true" : "false");
        }
        fputc(']', f);
    }
    fputs("}\n", f);
    return ferror(f) ? MBL_EIO : 0;
}

double mbl_sweep_zero_level(const mbl_sweep *sw)
{
    double big = 0;
    size_t tot = sw ? (size_t)sw->npoints * (size_t)sw->nmodes : 0;
    for (size_t i = 0; i < tot; i++) {
        double a = hypot(sw->re[i], sw->im[i]);
        if (isfinite(a) && a > big) big = a;
    }
    return 1e-6 * big;
}
