/* Sweeps over one or two parameters (or time), on several threads (docs/study.md).
 *
 * Each point is an operating point, a linear model and its modes, computed independently of the
 * others and of the thread that computes it, so the results are the same on any number of
 * threads. Two ways to compute a point:
 *   - fast: every thread loads its own copy of the caller's model once (mbl_model_copy's: its
 *     text with the base overrides; a parameter changes in place only on a model of its own),
 *     makes a workspace (mbl_lin_work_new) at the sweep's first point, and then for each of its
 *     points changes the parameter in place (mbl_model_set_param), finds the operating point from
 *     the file's initial guess and re-linearizes (mbl_relinearize: no allocation, the states of
 *     the first point).
 *     A point where those states stop parametrizing the motion is linearized one-shot instead
 *     (mbl_linearize, states chosen there). Time sweeps change only the point's time.
 *   - reload: when the parameter was evaluated into numbers at load time (a mechanism's
 *     parameters, a parameter other parameters or initial values use), the model is copied with the
 *     point's values (mbl_model_copy's overrides) and linearized one-shot. The copies are loaded from
 *     the text the caller's model keeps (src/model/origin.h), never from its file: a model loaded
 *     from a string sweeps as one loaded from a file.
 * Which of the two is decided on the first thread's copy: the fast path when the axes' parameters
 * change in place there (mbl_model_set_param).
 * The modes of all points are then tracked in order (track.c); critical speeds of a Campbell
 * diagram are refined by the secant method on new points computed the same way
 * (sweep_critical.c). This file: the grid, its threads and the tracking; a point is computed in
 * sweep_point.c, a distributed sweep's results gathered in sweep_dist.c, written in sweep_write.c. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/progress.h"
#include "study/sweep_internal.h"

/* mode shapes are kept for the MAC while they take fewer doubles than this (else eigenvalues only) */
#define SHAPES_MAX 50000000.0
/* the default predictor is the sensitivity one up to this pencil order n + m + k: its dense QZ
 * (O((n + m + k)^3)) then costs about what the point does; above it, linear (docs/study.md) */
#define SENS_DEFAULT_MAX 60
/* the largest block of consecutive points one thread computes in order: its first point is solved
 * cold (from the file's guess), the others warm-started (docs/study.md, "Warm start"); a sixteenth
 * of the points below 16 * SWEEP_BLOCK_MAX points, so that every thread gets several blocks */
#define SWEEP_BLOCK_MAX 64

void mbl_sweep_options_default(mbl_sweep_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->threads = 1;
    opt->mac_weight = 1.0;
    opt->predictor = MBL_PREDICT_DEFAULT;
    opt->max_points = MBL_SWEEP_MAX_POINTS;
}

static char *dup_str(const char *s)
{
    size_t l = strlen(s);
    char *d = mbl_malloc(l + 1);
    if (d) memcpy(d, s, l + 1);
    return d;
}

/* ---- the grid and the threads ------------------------------------------------------------ */


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

/* A worker's times and counts added to the sweep's, and its model and workspace freed. */
static void worker_sum(mbl_sweep *sw, worker *w)
{
    sw->seconds_load += w->t_load, sw->seconds_point += w->t_point, sw->seconds_lin += w->t_lin;
    sw->seconds_sens += w->t_sens;
    sw->nwarm += (int)w->warm_points, sw->nwarm_ok += (int)w->warm_ok;
    sw->nwarm_rejected += (int)w->warm_rejected;
    study_sweep_worker_clear(w); /* adds its corrector's counts to w->wcnt */
    const opoint_warm_counts *k = &w->wcnt;
    sw->warm_nF += k->F, sw->warm_njac += k->jac, sw->warm_nscaled += k->scaled;
    sw->warm_nfactor += k->factor, sw->warm_ndfdp += k->dfdp;
    sw->warm_nchord += k->chord, sw->warm_nchord_fallback += k->chord_fallback;
}

/* Store the modes of point p (the count must be the first point's) and, with the sensitivity
 * predictor, their derivatives from S (NULL: none at this point). */
static int store_point(run *r, int p, const mbl_modes *m, const mbl_sensitivity *S, mbl_status *st)
{
    ctx *c = r->c;
    if (m->nx != c->nm)
        return mbl_error(st, MBL_EDIM, "%d eigenvalues here, %d at the first point (a partial spectrum?)", m->nx, c->nm);
    point_out *o = &r->pts[p];
    /* re, im and the shapes at p's places in the run's store (no allocation a point; the tracking
     * reads them there: sweep_track) */
    size_t nm = (size_t)c->nm, np = (size_t)r->sw->npoints, len = nm * (size_t)c->n;
    int shapes = r->keep_shapes && m->shape_re && m->shape_im;
    o->re = r->sto + (size_t)p * nm, o->im = r->sto + (np + (size_t)p) * nm;
    for (size_t j = 0; j < nm; j++) o->re[j] = m->modes[j].re, o->im[j] = m->modes[j].im;
    if (shapes) {
        o->sre = r->sto + 2 * np * nm + (size_t)p * len, o->sim = o->sre + np * len;
        memcpy(o->sre, m->shape_re, len * sizeof(double));
        memcpy(o->sim, m->shape_im, len * sizeof(double));
    }
    if (c->predictor == MBL_PREDICT_SENSITIVITY && S) { /* likewise in o->dre's block */
        size_t nm1 = nm + 1, len1 = len + 1;
        o->dre = mbl_alloc_array(2 * nm1 + 2 * len1, sizeof(double));
        if (!o->dre) return mbl_error(st, MBL_ENOMEM, "out of memory");
        o->dim = o->dre + nm1, o->dsre = o->dim + nm1, o->dsim = o->dsre + len1;
        sens_to_modes(m, S, c->n, o->dre, o->dim, o->dsre, o->dsim);
    }
    return 0;
}

typedef struct thread_arg {
    run *r;
    worker w;
    void *progress; /* the caller's progress installation (core/progress.h) */
} thread_arg;

static void *thread_main(void *arg)
{
    thread_arg *ta = arg;
    run *r = ta->r;
    mbl_sweep *sw = r->sw;
    core_progress_adopt(ta->progress, NULL);
    while (!core_progress_stopped()) {
        /* points are handed out in blocks (fewer lock round trips on cheap points) */
        pthread_mutex_lock(&r->lock);
        int k = r->rank + r->next * r->size; /* this rank's next block */
        if (k < r->nchunks) r->next++;
        pthread_mutex_unlock(&r->lock);
        if (k >= r->nchunks) break;
        int p0 = k * r->chunk, p1 = p0 + r->chunk;
        if (p1 > sw->npoints) p1 = sw->npoints;
        ta->w.start = r->starts ? r->starts[k] : NULL;
        ta->w.start_tan = r->start_tan ? r->start_tan[k] : NULL;
        for (int p = p0; p < p1 && !core_progress_stopped(); p++) {
            double x[2] = {0, 0};
            axis_value(sw, r->opt, p, x);
            mbl_status st;
            mbl_status_clear(&st);
            mbl_modes *m = NULL;
            mbl_sensitivity *S = NULL;
            ta->w.cur = p;
            ta->w.block_last = p == p1 - 1;
            int rc = study_sweep_eval_modes(&ta->w, x, p > p0, &m, &S, NULL, &st);
            if (!rc) rc = store_point(r, p, m, S, &st);
            modal_reuse_give(&ta->w.mru, m); /* its arrays the next point's */
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
        ta->w.block_last = 0;
        pthread_mutex_lock(&r->lock);
        r->done += p1 - p0;
        if (r->opt->progress) r->opt->progress(r->opt->progress_ud, r->done, sw->npoints);
        (void)core_progress(NULL, "sweep", r->done, sw->npoints); /* a stop ends the loop */
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
    mbl_free(sw->steps);
    if (sw->error)
        for (int p = 0; p < sw->npoints; p++) mbl_free(sw->error[p]);
    mbl_free(sw->error);
    if (sw->ctx) {
        worker *w = sw->ctx;
        ctx *c = w->c;
        study_sweep_worker_clear(w);
        study_sweep_ctx_free(c);
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
    /* the work, before any: every point is an operating point, a linear model and its modes */
    long maxp = opt->max_points ? opt->max_points : MBL_SWEEP_MAX_POINTS;
    double npts = (double)opt->axis[0].count * (opt->naxes > 1 ? (double)opt->axis[1].count : 1.0);
    if (maxp < 0) return mbl_error(st, MBL_EARG, "the sweep's point limit must be positive (got %ld)", maxp);
    if (npts > (double)maxp)
        return mbl_error(st, MBL_EARG,
                         "%.0f points%s are more than the limit of %ld (--max-points; max_points in Python): each is an operating point, a "
                         "linear model and its modes; raise the limit to run it",
                         npts, opt->naxes > 1 ? " (the grid of both parameters)" : "", maxp);
    if (opt->lopt && opt->lopt->method && strcmp(opt->lopt->method, "augmented"))
        return mbl_error(st, MBL_EARG, "sweeps use the augmented method (the re-linearization workspace), not '%s'",
                         opt->lopt->method);
    ctx *c = mbl_calloc(1, sizeof *c);
    if (!c) return mbl_error(st, MBL_ENOMEM, "out of memory");
    mbl_model_info info;
    mbl_model_get_info(md, &info);
    const char *path = info.file;
    c->path = dup_str(path);
    const model_origin *mo = model_origin_of(md);
    if (!mo) {
        mbl_free(c->path), mbl_free(c);
        return mbl_error(st, MBL_EARG, "%s: the model keeps no text to load its own copies from (mbl_model_copy)", path);
    }
    int fresh; /* the parameters changed in place on md carried as overrides (mbl_model_copy) */
    model_origin *cur = model_origin_current(md, &fresh);
    c->origin = fresh ? cur : model_origin_dup(mo);
    c->naxes = opt->naxes;
    c->nbase = opt->nsets > 0 ? opt->nsets : 0;
    c->nsets = c->nbase + opt->naxes;
    c->sets = mbl_calloc((size_t)c->nsets, sizeof *c->sets);
    c->set_names = mbl_calloc((size_t)c->nsets, sizeof *c->set_names);
    if (!c->path || !c->origin || !c->sets || !c->set_names) {
        study_sweep_ctx_free(c);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    for (int i = 0; i < c->nbase; i++) {
        c->set_names[i] = dup_str(opt->sets[i].name ? opt->sets[i].name : "");
        if (!c->set_names[i]) {
            study_sweep_ctx_free(c);
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
    c->lopt.skip_outputs = 1; /* a sweep's points give modes (and sensitivities of the point): no C, D */
    /* the caller's model: names of the axes (whether their parameters change in place: fast_probe) */
    int rc = 0;
    c->order = info.ncoord + info.nhol + info.nnh;
    c->m = info.nhol;
    c->fast = !opt->force_reload;
    c->phase_times = opt->phase_times;
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
    c->spin = -1;
    if (!rc && opt->floquet) { /* a Floquet sweep: the period fixed, or from a spin speed */
        c->floquet = 1, c->fo = *opt->floquet;
        c->fo.lopt = NULL, c->fo.popt = NULL, c->fo.mbc = NULL;
        if (opt->floquet_spin) {
            int i = 0;
            while (i < info.nparam && strcmp(mbl_model_param_name(md, i), opt->floquet_spin)) i++;
            if (i == info.nparam || mbl_model_param_spin(md, i) == 0)
                rc = mbl_error(st, MBL_EARG, "%s: '%s' is not a spin speed of the model (spin_speeds:), no period", path,
                               opt->floquet_spin);
            c->spin = i;
        } else if (!(c->fo.period > 0) || !isfinite(c->fo.period)) {
            rc = mbl_error(st, MBL_EARG, "a Floquet sweep needs a positive period (got %g)", c->fo.period);
        }
        if (!rc && opt->predictor == MBL_PREDICT_SENSITIVITY)
            rc = mbl_error(st, MBL_EARG, "a Floquet sweep tracks with the linear predictor (no exact sensitivities of "
                                         "Floquet exponents): use --predictor linear");
    }
    if (rc) {
        study_sweep_ctx_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

/* Whether the axes' parameters change in place (the fast path): tried on the first worker's own
 * copy of the model, which it keeps (study_sweep_eval_modes makes its workspace on it); else the
 * reload path. */
static int fast_probe(worker *w, mbl_status *st)
{
    ctx *c = w->c;
    int rc = load_copy(c->origin, c->sets, c->nbase, &w->model, st);
    if (rc) return rc;
    for (int a = 0; a < c->naxes; a++) {
        int i = c->pidx[a];
        mbl_status st2;
        if (i >= 0 && mbl_model_set_param(w->model, i, mbl_model_param_value(w->model, i), &st2)) c->fast = 0;
    }
    if (!c->fast) study_sweep_worker_clear(w);
    return 0;
}

/* The corrector's tangent at start k (the kept worker's, just made there), kept for the block's first
 * point (study_sweep_eval_modes: not solved again there); none where the start or its tangent is not */
static void start_tangent(const worker *keep, run *r, int k)
{
    const mbl_point *p = r->starts[k];
    if (!r->start_tan || !p || !keep->tan_ok || !keep->wtan) return;
    size_t len = (size_t)p->n + (size_t)p->m + (size_t)p->k;
    if ((r->start_tan[k] = mbl_alloc_array(len + 1, sizeof *r->start_tan[k])))
        memcpy(r->start_tan[k], keep->wtan, len * sizeof *r->start_tan[k]);
}

/* Each block's first point solved in order before the blocks, continued from the previous block's
 * first point (study_sweep_start) instead of from the file's guess, by the kept worker: the same
 * points whichever thread then computes a block. Only for blocks of more than one point and while
 * the warm corrector gives a tangent (equilibria of its kind); the chain stops at the first start it
 * does not give (a grid's next row, a failed point), and those blocks solve their first point as
 * before. */
static void block_starts(worker *keep, run *r, const double *x0)
{
    const ctx *c = r->c;
    double v0[2] = {0, 0};
    axis_value(r->sw, r->opt, 0, v0);
    if (!c->fast || r->chunk < 2 || r->nchunks < 2 || !keep->wpt || !keep->tan_ok || v0[0] != x0[0] || v0[1] != x0[1])
        return;
    if (!(r->starts = mbl_calloc((size_t)r->nchunks, sizeof *r->starts))) return;
    r->start_tan = mbl_calloc((size_t)r->nchunks, sizeof *r->start_tan); /* NULL: every block its own */
    r->starts[0] = opoint_point_copy(keep->wpt);
    start_tangent(keep, r, 0);
    double xprev[2] = {v0[0], v0[1]};
    for (int k = 1; k < r->nchunks && r->starts[k - 1] && !core_progress_stopped(); k++) {
        double x[2] = {0, 0};
        axis_value(r->sw, r->opt, k * r->chunk, x);
        study_sweep_start(keep, xprev, x, &r->starts[k]);
        start_tangent(keep, r, k);
        xprev[0] = x[0], xprev[1] = x[1];
    }
}

/* The first thread computes on the kept worker's model, workspace, derivatives and corrector (a
 * load and a workspace fewer): lent before the blocks (the corrector's counts so far in *c0) and
 * given back before the counts are summed (only the blocks' work counted). A worker's points do
 * not depend on what its model and workspace computed before (the blocks' bits do not depend on the
 * thread). */
static int lend_model(worker *keep, worker *w, opoint_warm_counts *c0)
{
    if (!keep->c->fast || !keep->model || !keep->work) return 0;
    w->model = keep->model, w->work = keep->work, w->lin = keep->lin, w->dd = keep->dd, w->dfp = keep->dfp;
    w->ow = keep->ow, w->ow_off = keep->ow_off;
    keep->model = NULL, keep->work = NULL, keep->lin = NULL, keep->dd = NULL, keep->dfp = NULL, keep->ow = NULL;
    opoint_warm_get_counts(w->ow, c0);
    return 1;
}

static void give_back(worker *keep, worker *w, const opoint_warm_counts *c0)
{
    opoint_warm_counts k;
    opoint_warm_get_counts(w->ow, &k);
    w->wcnt.F += k.F - c0->F, w->wcnt.jac += k.jac - c0->jac, w->wcnt.scaled += k.scaled - c0->scaled;
    w->wcnt.factor += k.factor - c0->factor, w->wcnt.dfdp += k.dfdp - c0->dfdp;
    w->wcnt.chord += k.chord - c0->chord, w->wcnt.chord_fallback += k.chord_fallback - c0->chord_fallback;
    keep->model = w->model, keep->work = w->work, keep->lin = w->lin, keep->dd = w->dd, keep->dfp = w->dfp;
    keep->ow = w->ow, keep->ow_off = w->ow_off;
    w->model = NULL, w->work = NULL, w->lin = NULL, w->dd = NULL, w->dfp = NULL, w->ow = NULL;
    mbl_point_free(keep->wpt); /* the corrector's template and chain: the blocks' now */
    keep->wpt = NULL, keep->nwarm = 0, keep->wdq_ok = 0, keep->tan_ok = 0;
}

static void starts_free(run *r)
{
    for (int k = 0; r->starts && k < r->nchunks; k++) mbl_point_free(r->starts[k]);
    for (int k = 0; r->start_tan && k < r->nchunks; k++) mbl_free(r->start_tan[k]);
    mbl_free(r->starts), mbl_free(r->start_tan);
    r->starts = NULL, r->start_tan = NULL;
}

/* The blocks on the threads (thread 0 is this one, on the kept worker's model: lend_model; a thread
 * that cannot be started leaves its points to the others). */
static void run_blocks(worker *keep, thread_arg *ta, pthread_t *tid, int *started, int threads)
{
    opoint_warm_counts lent;
    int lend = lend_model(keep, &ta[0].w, &lent);
    for (int t = 1; t < threads && started; t++) started[t] = pthread_create(&tid[t], NULL, thread_main, &ta[t]) == 0;
    thread_main(&ta[0]);
    for (int t = 1; t < threads && started; t++)
        if (started[t]) pthread_join(tid[t], NULL);
    if (lend) give_back(keep, &ta[0].w, &lent);
}

/* The results' memory, once the first point gave the sizes: per point and mode the eigenvalue, its
 * derivative and the five result arrays; the shapes and their derivatives while they are kept.
 * Refused above the linearization's memory budget. */
static int results_memory(const mbl_sweep *sw, const mbl_sweep_options *opt, int keep_shapes, mbl_status *st)
{
    const ctx *c = ((const worker *)sw->ctx)->c;
    double budget = opt->lopt && opt->lopt->mem_budget > 0 ? opt->lopt->mem_budget : MBL_MEM_BUDGET_DEFAULT;
    double bytes = (double)sw->npoints * (double)c->nm * 9.0 * sizeof(double) +
                   (keep_shapes ? 4.0 * (double)sw->npoints * (double)c->nm * (double)c->n * sizeof(double) : 0.0);
    if (bytes <= budget) return 0;
    return mbl_error(st, MBL_EARG,
                     "%s: %d points of %d modes would hold about %.3g bytes of results, more than the memory budget "
                     "of %.3g bytes (--mem-budget): fewer points, or a larger budget",
                     c->path, sw->npoints, c->nm, bytes, budget);
}

/* The modes (and sensitivities) at the sweep's first point x0, where the workspace is made. A
 * singular first point (a singular configuration, states that stop describing the motion: issue 30,
 * item 1) is one refused point, not the sweep's end: the workspace and the sizes then come from the
 * first point that is answered (x0 and keep->x0 updated), and the refused ones are marked in the
 * per-point pass. The first point's error when none is answered. */
static int first_answered(worker *keep, const mbl_sweep *sw, double *x0, mbl_modes **m0, mbl_sensitivity **S0,
                          mbl_status *sst, mbl_status *st)
{
    int rc = study_sweep_eval_modes(keep, x0, 0, m0, S0, sst, st);
    for (int p = 1; rc == MBL_ESINGULAR && p < sw->npoints; p++) {
        mbl_status st2;
        mbl_status_clear(&st2);
        double xp[2] = {sw->value[(size_t)p * sw->naxes], sw->naxes > 1 ? sw->value[(size_t)p * sw->naxes + 1] : 0};
        study_sweep_worker_clear(keep);
        keep->x0[0] = xp[0], keep->x0[1] = xp[1];
        mbl_status_clear(sst);
        if (study_sweep_eval_modes(keep, xp, 0, m0, S0, sst, &st2) == 0) {
            rc = 0;
            x0[0] = xp[0], x0[1] = xp[1];
        } else if (st2.code != MBL_ESINGULAR) {
            *st = st2;
            rc = st2.code ? st2.code : MBL_EMODEL;
        }
    }
    return rc;
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
        study_sweep_ctx_free(c);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    sw->naxes = opt->naxes;
    sw->count[0] = opt->axis[0].count;
    sw->count[1] = opt->naxes > 1 ? opt->axis[1].count : 1;
    for (int a = 0; a < opt->naxes; a++) snprintf(sw->axis_name[a], MBL_SWEEP_NAME_MAX, "%s", opt->axis[a].name);
    if ((double)sw->count[0] * (double)sw->count[1] > 1e8) {
        mbl_sweep_free(sw);
        study_sweep_ctx_free(c);
        return mbl_error(st, MBL_EARG, "too many sweep points (%d x %d)", sw->count[0], sw->count[1]);
    }
    sw->npoints = sw->count[0] * sw->count[1];
    c->npoints = sw->npoints;
    sw->ranks = rr->size;
    int threads = opt->threads > 0 ? opt->threads : 1;
    if (threads > sw->npoints) threads = sw->npoints;
    if (threads > 256) threads = 256;
    sw->threads = threads;
    worker *keep = mbl_calloc(1, sizeof *keep); /* the state kept for mbl_sweep_critical */
    sw->value = mbl_alloc_array((size_t)sw->npoints * (size_t)sw->naxes, sizeof *sw->value);
    sw->ok = mbl_calloc((size_t)sw->npoints, sizeof *sw->ok);
    sw->error = mbl_calloc((size_t)sw->npoints, sizeof *sw->error);
    sw->steps = mbl_alloc_array((size_t)sw->npoints + 1, sizeof *sw->steps);
    if (!keep || !sw->value || !sw->ok || !sw->error || !sw->steps) {
        mbl_free(keep);
        mbl_sweep_free(sw);
        study_sweep_ctx_free(c);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    keep->c = c;
    sw->ctx = keep;
    for (int p = 0; p < sw->npoints; p++) axis_value(sw, opt, p, sw->value + (size_t)p * sw->naxes), sw->steps[p] = -1;
    double x0[2] = {opt->axis[0].from, opt->naxes > 1 ? opt->axis[1].from : 0};
    keep->x0[0] = x0[0], keep->x0[1] = x0[1];

    /* the first point on this thread: sizes, the error when the sweep cannot start, and whether
     * the sensitivity predictor is available */
    int want = opt->predictor == MBL_PREDICT_SENSITIVITY || (opt->predictor == MBL_PREDICT_DEFAULT && c->order <= SENS_DEFAULT_MAX);
    if (c->floquet) { /* Floquet exponents have no exact sensitivities here */
        want = 0;
        snprintf(sw->predictor_note, sizeof sw->predictor_note, "a Floquet sweep: the exponents have no exact derivatives here");
    }
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
    rc = first_answered(keep, sw, x0, &m0, &S0, &sst, st);
    if (rc) {
        mbl_error_prefix(st, "%s: the sweep's first point (%s = %g)", path, opt->axis[0].name, x0[0]);
        mbl_sweep_free(sw);
        return rc;
    }
    if (c->predictor == MBL_PREDICT_SENSITIVITY && !S0) {
        if (opt->predictor == MBL_PREDICT_SENSITIVITY) {
            mbl_modes_free(m0);
            *st = sst;
            mbl_error_prefix(st, "%s: the sensitivity predictor at the sweep's first point (%s = %g)", path,
                             opt->axis[0].name, x0[0]);
            mbl_sweep_free(sw); /* after the message: path is the sweep's */
            return st->code ? st->code : MBL_EMODEL;
        }
        c->predictor = MBL_PREDICT_LINEAR;
        snprintf(sw->predictor_note, sizeof sw->predictor_note, "%s", sst.msg[0] ? sst.msg : "sensitivities failed");
    }
    mbl_sensitivity_free(S0);
    sw->predictor = c->predictor;
    /* the first point, for the other workers' workspaces (made at x0 from the file's guess) */
    if (c->fast && keep->wpt && (c->pt0 = opoint_point_copy(keep->wpt))) c->pt0_x[0] = x0[0], c->pt0_x[1] = x0[1];
    c->nm = m0->nx;
    c->n = m0->n;
    sw->nmodes = c->nm;
    sw->n = c->n;
    mbl_modes_free(m0);

    run r = *rr;
    r.c = c;
    r.starts = NULL, r.start_tan = NULL;
    r.opt = opt;
    r.sw = sw;
    /* blocks of consecutive points, each computed by one thread in order (the warm start runs
     * within a block): their size does not depend on the number of threads, so neither do the
     * results */
    r.chunk = sw->npoints / 16;
    if (r.chunk < 1) r.chunk = 1;
    if (r.chunk > SWEEP_BLOCK_MAX) r.chunk = SWEEP_BLOCK_MAX;
    r.nchunks = (sw->npoints + r.chunk - 1) / r.chunk;
    r.keep_shapes = (double)sw->npoints * (double)c->nm * (double)c->n <= SHAPES_MAX;
    if ((rc = results_memory(sw, opt, r.keep_shapes, st))) {
        mbl_sweep_free(sw); /* after the message: path is the sweep's */
        return rc;
    }
    block_starts(keep, &r, x0);
    r.pts = mbl_calloc((size_t)sw->npoints, sizeof *r.pts);
    size_t nsto = 2 * (size_t)sw->npoints * (size_t)c->nm * (r.keep_shapes ? 1 + (size_t)c->n : 1);
    r.sto = mbl_alloc_array(nsto + 1, sizeof *r.sto);
    thread_arg *ta = mbl_calloc((size_t)threads, sizeof *ta);
    pthread_t *tid = mbl_calloc((size_t)threads, sizeof *tid);
    if (!r.pts || !r.sto || !ta || !tid || pthread_mutex_init(&r.lock, NULL)) {
        starts_free(&r);
        mbl_free(r.pts), mbl_free(r.sto), mbl_free(ta), mbl_free(tid);
        r.pts = NULL, r.sto = NULL;
        mbl_sweep_free(sw);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    double t0 = r.t0 = study_sweep_now();
    int *started = mbl_calloc((size_t)threads, sizeof *started);
    for (int t = 0; t < threads; t++) {
        ta[t].progress = core_progress_current();
        ta[t].r = &r;
        ta[t].w.c = c;
        ta[t].w.x0[0] = x0[0], ta[t].w.x0[1] = x0[1], ta[t].w.steps = sw->steps;
    }
    run_blocks(keep, ta, tid, started, threads);
    sw->seconds = study_sweep_now() - t0;
    for (int t = 0; t < threads; t++) worker_sum(sw, &ta[t].w);
    starts_free(&r);
    pthread_mutex_destroy(&r.lock);
    mbl_free(started), mbl_free(ta), mbl_free(tid);
    *rr = r;
    *out = sw;
    return core_progress_stopped() ? mbl_error(st, MBL_ECANCELLED, "cancelled during the sweep") : 0;
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
    int shapes = r.keep_shapes;
    for (int p = 0; p < sw->npoints && shapes; p++)
        if (sw->ok[p] && !r.pts[p].sre) shapes = 0;
    /* every point ok and in this process's store (not gathered from other ranks): the k-th ok point is
     * point k, and the store holds the eigenvalues and shapes in the order read below (no copies) */
    int inplace = nok == sw->npoints && r.sto;
    for (int p = 0; p < sw->npoints && inplace; p++) inplace = !r.pts[p].own;
    size_t np = (size_t)sw->npoints;
    double *lre = inplace ? r.sto : mbl_alloc_array(okt + 1, sizeof(double));
    double *lim = inplace ? r.sto + np * nm : mbl_alloc_array(okt + 1, sizeof(double));
    double *xx = mbl_alloc_array((size_t)nok + 1, sizeof(double)), *mac = mbl_alloc_array(okt + 1, sizeof(double));
    int *perm = mbl_alloc_array(okt + 1, sizeof(int));
    double *sre = !shapes ? NULL : inplace ? r.sto + 2 * np * nm : mbl_alloc_array(okt * (size_t)n + 1, sizeof(double));
    double *sim = !shapes ? NULL : inplace ? sre + np * nm * n : mbl_alloc_array(okt * (size_t)n + 1, sizeof(double));
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
                if (!inplace) {
                    memcpy(lre + (size_t)k * nm, r.pts[p].re, (size_t)nm * sizeof(double));
                    memcpy(lim + (size_t)k * nm, r.pts[p].im, (size_t)nm * sizeof(double));
                }
                if (shapes && !inplace) {
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
        /* a zero mode (within the sweep's zero level) has no damping ratio to speak of: the sign of a
         * rounding-level real part made it +-1; 0, as `linearize` prints for its zero modes */
        double zl = mbl_sweep_zero_level(sw);
        for (size_t i = 0; i < tot; i++)
            if (hypot(sw->re[i], sw->im[i]) <= zl) sw->damping[i] = 0.0;
    }
    if (!inplace) mbl_free(lre), mbl_free(lim), mbl_free(sre), mbl_free(sim);
    mbl_free(idx), mbl_free(prev), mbl_free(xx), mbl_free(mac), mbl_free(perm);
    mbl_free(dre), mbl_free(dim), mbl_free(dsre), mbl_free(dsim);
    return rc;
}

static void pts_free(run *r, int npoints)
{
    for (int p = 0; r->pts && p < npoints; p++) {
        if (r->pts[p].own) mbl_free(r->pts[p].re); /* im, sre, sim: in its block (else in r->sto) */
        mbl_free(r->pts[p].dre);                    /* dim, dsre, dsim: in its block */
    }
    mbl_free(r->pts), mbl_free(r->sto);
    r->pts = NULL, r->sto = NULL;
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
    if (d) rc = study_sweep_gather(d, rc, &r, &sw, st); /* on ranks other than 0, sw is freed */
    if (!rc && sw) rc = sweep_track(sw, &r, opt, st);
    pts_free(&r, np);
    if (rc && core_progress_stopped()) rc = mbl_error(st, MBL_ECANCELLED, "cancelled during the sweep");
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
