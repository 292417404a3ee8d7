/* What every method shares: the evaluator of the model's Jacobians at a point, the result
 * (allocation, names, the method-provided spectrum and descriptor form, mbl_linear_free), and the
 * option defaults. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lin/lin_internal.h"
#include "lin/methods_internal.h"
#include "lin/relin_jac.h"

/* ---- the evaluator ---- */

static int eval_alloc(const mbl_model *md, mbl_eval *ev, int lean, mbl_status *st)
{
    memset(ev, 0, sizeof *ev);
    model_view_get(md, &ev->mv);
    const model_view *mv = &ev->mv;
    int rc = model_require_mass(md, st); /* a kinetic energy without der(): say so */
    if (rc) return rc;
    size_t nus = (size_t)(3 * mv->nus + 2 * mv->nuvs) + (size_t)mv->usjac.nz;
    size_t ny = (size_t)mv->ny + (size_t)mv->yjac.nz;
    ev->lean = lean;
    ev->syms = mbl_calloc((size_t)mv->nsym + 1, sizeof *ev->syms);
    ev->us = mbl_alloc_array(nus + 1, sizeof *ev->us);
    ev->y = mbl_alloc_array(ny + 1, sizeof *ev->y);
    if (!lean) {
        ev->work_cap = mv->work_size + 1;
        ev->work = mbl_alloc_array(ev->work_cap, sizeof *ev->work);
        ev->jac = ev->jac_buf = mbl_alloc_array((size_t)mv->jac.nz + 1, sizeof *ev->jac_buf);
    }
    if (!ev->syms || !ev->us || !ev->y || (!lean && (!ev->work || !ev->jac_buf))) {
        lin_eval_free(ev);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    return 0;
}

int lin_eval_init(const mbl_model *md, mbl_eval *ev, mbl_status *st)
{
    return eval_alloc(md, ev, 0, st);
}

int lin_eval_init_lean(const mbl_model *md, mbl_eval *ev, mbl_status *st)
{
    return eval_alloc(md, ev, 1, st);
}

void lin_eval_free(mbl_eval *ev)
{
    if (!ev) return;
    mbl_free(ev->syms);
    mbl_free(ev->work);
    mbl_free(ev->jac_buf);
    mbl_free(ev->us);
    mbl_free(ev->y);
    memset(ev, 0, sizeof *ev);
}

int lin_eval_at(const mbl_model *md, const mbl_point *pt, mbl_eval *ev, mbl_status *st)
{
    return lin_eval_at_y(md, pt, ev, 1, st);
}

int lin_eval_at_y(const mbl_model *md, const mbl_point *pt, mbl_eval *ev, int outputs, mbl_status *st)
{
    return lin_eval_at_given(md, pt, ev, outputs, NULL, st);
}

/* A lean evaluator's work (need doubles) and, unless the values are given (given), its own Jacobian
 * values; 0 or MBL_ENOMEM. */
int lin_eval_lean_arrays(mbl_eval *ev, size_t need, int given, mbl_status *st)
{
    const model_view *mv = &ev->mv;
    if (need + 1 > ev->work_cap) {
        mbl_free(ev->work);
        ev->work_cap = 0;
        if (!(ev->work = mbl_alloc_array(need + 1, sizeof *ev->work))) return mbl_error(st, MBL_ENOMEM, "out of memory");
        ev->work_cap = need + 1;
    }
    if (!given && !ev->jac_buf && !(ev->jac_buf = mbl_alloc_array((size_t)mv->jac.nz + 1, sizeof *ev->jac_buf)))
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    return 0;
}

int lin_eval_at_given(const mbl_model *md, const mbl_point *pt, mbl_eval *ev, int outputs, const double *jac,
                      mbl_status *st)
{
    return lin_eval_at_given_syms(md, pt, ev, outputs, jac, NULL, st);
}

int lin_eval_at_given_syms(const mbl_model *md, const mbl_point *pt, mbl_eval *ev, int outputs, const double *jac,
                           const double *syms, mbl_status *st)
{
    const model_view *mv = &ev->mv;
    if (syms) memcpy(ev->syms, syms, (size_t)mv->nsym * sizeof *ev->syms); /* model_fill_syms_pt's, given */
    else model_fill_syms_pt(md, pt, ev->syms);
    /* else the point's own, when mbl_operating_point evaluated them there (at the same symbols) */
    if (!jac) jac = model_jac_memo_at(md, pt->jac_memo, ev->syms);
    /* the caller's Jacobian values (a sweep's warm corrector: model_eval_jac's), unless the tree's
     * shared tape gives them here (model_eval_jac_y_shared: equal to rounding, not bit for bit) */
    int given = jac && !model_eval_jac_y_shared(md), rc = 0;
    if (ev->lean) {
        size_t need = mv->work_size, wy = outputs ? mv->work_y : 0;
        if (given && !ev->minv) need = mv->work_us > wy ? mv->work_us : wy;
        if ((rc = lin_eval_lean_arrays(ev, need, given, st))) return rc;
    }
    if (given) {
        if (ev->lean) {
            ev->jac = jac; /* read in place: the point or the caller keeps them for the call */
        } else {
            memcpy(ev->jac_buf, jac, (size_t)mv->jac.nz * sizeof *ev->jac_buf);
            ev->jac = ev->jac_buf;
        }
        if (outputs) rc = model_eval_outputs(md, ev->syms, ev->y, ev->work, st);
        if (!rc && ev->minv) rc = model_eval_jac_y_minv(md, ev->syms, NULL, NULL, ev->minv, ev->mwork, ev->work, st);
    } else if (ev->minv) {
        ev->jac = ev->jac_buf;
        rc = model_eval_jac_y_minv(md, ev->syms, ev->jac_buf, outputs ? ev->y : NULL, ev->minv, ev->mwork, ev->work, st);
    } else {
        ev->jac = ev->jac_buf;
        rc = model_eval_jac_y(md, ev->syms, ev->jac_buf, outputs ? ev->y : NULL, ev->work, st);
    }
    if (ev->minv) ev->minv_rc = rc > 0, rc = rc > 0 ? 0 : rc;
    if (!rc) rc = model_eval_user_states(md, ev->syms, ev->us, ev->work, st);
    if (rc) return model_eval_error(md, ev->syms, "at the operating point", st);
    return 0;
}

void lin_jac_block(const model_view *mv, const double *jacval, int rg, int cb, double *out)
{
    int r0 = mv->row0[rg], r1 = mv->row0[rg + 1];
    int c0 = mv->blk0[cb], c1 = mv->blk0[cb + 1];
    int nr = r1 - r0;
    memset(out, 0, (size_t)nr * (size_t)(c1 - c0) * sizeof *out);
    for (int p = 0; p < mv->jac.nz; p++) {
        int r = mv->jac.row[p], c = mv->jac.col[p];
        if (r >= r0 && r < r1 && c >= c0 && c < c1) out[(r - r0) + (size_t)(c - c0) * nr] = jacval[p];
    }
}

/* ---- the result ---- */

mbl_linear *lin_linear_alloc(int n, int z0, int z1, int nu, int ny)
{
    return lin_linear_alloc_x(n, z0, z1, 0, nu, ny);
}

mbl_linear *lin_linear_alloc_x(int n, int z0, int z1, int zx, int nu, int ny)
{
    mbl_linear *L = mbl_calloc(1, sizeof *L);
    if (!L) return NULL;
    int nx = z0 + z1 + zx;
    L->n = n;
    L->nx = nx;
    L->zx = zx;
    L->nu = nu;
    L->ny = ny;
    L->z0 = z0;
    L->z1 = z1;
    L->state_names = mbl_calloc((size_t)nx + 1, sizeof *L->state_names);
    L->input_names = mbl_calloc((size_t)nu + 1, sizeof *L->input_names);
    L->output_names = mbl_calloc((size_t)ny + 1, sizeof *L->output_names);
    L->A = mbl_calloc((size_t)nx * (size_t)nx + 1, sizeof(double));
    L->B = mbl_calloc((size_t)nx * (size_t)nu + 1, sizeof(double));
    L->C = mbl_calloc((size_t)ny * (size_t)nx + 1, sizeof(double));
    L->D = mbl_calloc((size_t)ny * (size_t)nu + 1, sizeof(double));
    L->M = mbl_calloc((size_t)z1 * (size_t)z1 + 1, sizeof(double));
    L->Cd = mbl_calloc((size_t)z1 * (size_t)z1 + 1, sizeof(double));
    L->K = mbl_calloc((size_t)z1 * (size_t)z0 + 1, sizeof(double));
    L->F = mbl_calloc((size_t)z1 * (size_t)nu + 1, sizeof(double));
    L->q_S = mbl_calloc((size_t)n * (size_t)z0 + 1, sizeof(double));
    L->v_W = mbl_calloc((size_t)n * (size_t)z1 + 1, sizeof(double));
    if (!L->state_names || !L->input_names || !L->output_names || !L->A || !L->B || !L->C || !L->D || !L->M ||
        !L->Cd || !L->K || !L->F || !L->q_S || !L->v_W) {
        mbl_linear_free(L);
        return NULL;
    }
    return L;
}

static void spectrum_free(mbl_lin_spectrum *sp)
{
    if (!sp) return;
    mbl_free(sp->re);
    mbl_free(sp->im);
    mbl_free(sp->spurious);
    mbl_free(sp->berr);
    mbl_free(sp->err);
    mbl_free(sp->vre);
    mbl_free(sp->vim);
    mbl_free(sp);
}

static void descriptor_free(mbl_lin_descriptor *ds)
{
    if (!ds) return;
    mbl_free(ds->E);
    mbl_free(ds->Ad);
    mbl_free(ds->Bd);
    mbl_free(ds->Cdd);
    mbl_free(ds->Dd);
    mbl_free(ds);
}

void mbl_linear_free(mbl_linear *L)
{
    if (!L) return;
    if (L->state_names)
        for (int i = 0; i < L->nx; i++) mbl_free(L->state_names[i]);
    if (L->input_names)
        for (int i = 0; i < L->nu; i++) mbl_free(L->input_names[i]);
    if (L->output_names)
        for (int i = 0; i < L->ny; i++) mbl_free(L->output_names[i]);
    mbl_free(L->state_names);
    mbl_free(L->input_names);
    mbl_free(L->output_names);
    mbl_free(L->A);
    mbl_free(L->B);
    mbl_free(L->C);
    mbl_free(L->D);
    mbl_free(L->M);
    mbl_free(L->Cd);
    mbl_free(L->K);
    mbl_free(L->F);
    mbl_free(L->q_S);
    mbl_free(L->v_W);
    spectrum_free(L->spectrum);
    descriptor_free(L->descriptor);
    mbl_free(L);
}

char *lin_name_join(const char *a, const char *b)
{
    size_t la = strlen(a), lb = b ? strlen(b) : 0;
    char *p = mbl_malloc(la + lb + 8);
    if (!p) return NULL;
    if (b) snprintf(p, la + lb + 8, "%s%s)", a, b);
    else memcpy(p, a, la + 1);
    return p;
}

int lin_set_names(const mbl_model *md, mbl_linear *lin, const char *const *pos)
{
    model_view view;
    model_view_get(md, &view);
    const model_view *mv = &view;
    int z = lin->z0, bad = 0;
    for (int i = 0; i < z; i++) {
        lin->state_names[i] = lin_name_join(pos[i], NULL);
        if (i < lin->z1) lin->state_names[z + i] = lin_name_join("der(", pos[i]);
    }
    for (int i = 0; i < lin->zx && i < mv->nX; i++) lin->state_names[z + lin->z1 + i] = lin_name_join(mv->xname[i], NULL);
    for (int j = 0; j < lin->nu; j++) lin->input_names[j] = lin_name_join(mv->rname[j], NULL);
    for (int j = 0; j < lin->ny; j++) lin->output_names[j] = lin_name_join(mv->yname[j], NULL);
    for (int i = 0; i < lin->nx; i++) bad |= !lin->state_names[i];
    for (int j = 0; j < lin->nu; j++) bad |= !lin->input_names[j];
    for (int j = 0; j < lin->ny; j++) bad |= !lin->output_names[j];
    return bad ? MBL_ENOMEM : 0;
}

/* ---- what a method adds: its own spectrum, the descriptor form ---- */

int lin_alloc_eigs(mbl_linear *lin, int neig)
{
    if (!lin->spectrum && !(lin->spectrum = mbl_calloc(1, sizeof *lin->spectrum))) return MBL_ENOMEM;
    mbl_lin_spectrum *sp = lin->spectrum;
    size_t sz = (size_t)lin->n * (size_t)neig + 1;
    sp->re = mbl_calloc((size_t)neig + 1, sizeof(double));
    sp->im = mbl_calloc((size_t)neig + 1, sizeof(double));
    sp->spurious = mbl_calloc((size_t)neig + 1, sizeof(int));
    sp->berr = mbl_alloc_array((size_t)neig + 1, sizeof(double));
    sp->err = mbl_alloc_array((size_t)neig + 1, sizeof(double));
    if (sp->berr)
        for (int i = 0; i < neig; i++) sp->berr[i] = NAN;
    if (sp->err)
        for (int i = 0; i < neig; i++) sp->err[i] = NAN;
    sp->vre = mbl_calloc(sz, sizeof(double));
    sp->vim = mbl_calloc(sz, sizeof(double));
    if (!sp->re || !sp->im || !sp->spurious || !sp->berr || !sp->err || !sp->vre || !sp->vim) return MBL_ENOMEM;
    sp->neig = neig;
    return 0;
}

int lin_alloc_descriptor(mbl_linear *lin, int nd)
{
    if (!lin->descriptor && !(lin->descriptor = mbl_calloc(1, sizeof *lin->descriptor))) return MBL_ENOMEM;
    lin->descriptor->nd = nd;
    return 0;
}

/* ---- the options ---- */

void mbl_lin_options_default(mbl_lin_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->method = "augmented";
    opt->state_weight = 1e-3;
    opt->pivot_tol = 1e-9;
    opt->rcond_min = 1e-13;
    opt->rank_tol = 1e-9;
    opt->dense_max = 1000;
    opt->dense_n_max = 4000;
    opt->nev = 20;
    opt->shift = -1e-3;
    opt->constraint_scale = 0.0;
    opt->pen_alpha = 1e6;
    opt->pen_xi = 1.0;
    opt->pen_omega = 10.0;
    opt->pen_ratio = 10.0;
    opt->fd_step = cbrt(DBL_EPSILON);
    opt->fd_tol = 1e-3;
    opt->state_tol = 1e-10;
    opt->cond_max = 1.0 / (DBL_EPSILON * DBL_EPSILON);
}

/* Options no computation can honour: a negative or non-finite count, budget or tolerance (0 is
 * "the default" for a zero-initialized struct; a negative value is a mistake, never a default). */
int lin_options_check(const mbl_lin_options *o, mbl_status *st)
{
    const struct {
        const char *name;
        double v;
    } nonneg[] = {{"state_weight", o->state_weight}, {"pivot_tol", o->pivot_tol}, {"rcond_min", o->rcond_min},
                  {"rank_tol", o->rank_tol},         {"dense_max", o->dense_max}, {"dense_n_max", o->dense_n_max},
                  {"nev", o->nev},                   {"pen_alpha", o->pen_alpha}, {"pen_xi", o->pen_xi},
                  {"pen_omega", o->pen_omega},       {"pen_ratio", o->pen_ratio}, {"fd_step", o->fd_step},
                  {"fd_tol", o->fd_tol},             {"mem_budget", o->mem_budget}, {"constraint_scale", o->constraint_scale},
                  {"state_tol", o->state_tol},       {"cond_max", o->cond_max}};
    for (size_t i = 0; i < sizeof nonneg / sizeof nonneg[0]; i++)
        if (!(nonneg[i].v >= 0) || !isfinite(nonneg[i].v))
            return mbl_error(st, MBL_EARG, "linearization option %s = %g: expected a finite number >= 0 (0: the default)",
                             nonneg[i].name, nonneg[i].v);
    if (!isfinite(o->shift)) return mbl_error(st, MBL_EARG, "linearization option shift = %g: expected a finite number", o->shift);
    return 0;
}

void lin_options_complete(const mbl_lin_options *opt, mbl_lin_options *out)
{
    /* options of the other methods left at 0 (a zero-initialized struct) take their defaults */
    mbl_lin_options o = *opt, d;
    mbl_lin_options_default(&d);
    if (!(o.rank_tol > 0)) o.rank_tol = d.rank_tol;
    if (o.dense_max <= 0) o.dense_max = d.dense_max;
    if (o.dense_n_max <= 0) o.dense_n_max = d.dense_n_max;
    if (o.nev <= 0) o.nev = d.nev;
    if (o.shift == 0.0) o.shift = d.shift;
    if (o.pen_alpha == 0.0) o.pen_alpha = d.pen_alpha;
    if (o.pen_omega == 0.0) o.pen_omega = d.pen_omega;
    if (o.pen_ratio == 0.0) o.pen_ratio = d.pen_ratio;
    if (o.fd_step == 0.0) o.fd_step = d.fd_step;
    if (o.fd_tol == 0.0) o.fd_tol = d.fd_tol;
    if (o.state_tol == 0.0) o.state_tol = d.state_tol;
    if (o.cond_max == 0.0) o.cond_max = d.cond_max;
    if (!(o.mem_budget > 0)) o.mem_budget = MBL_MEM_BUDGET_DEFAULT;
    *out = o;
}
