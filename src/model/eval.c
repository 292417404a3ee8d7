/* The model's evaluators: the residuals and the residual Jacobian's values at a point, from the
 * tapes and then the structured terms evaluated numerically beside them (model/terms/term.h). */
#include <string.h>

#include "expr/tape_subset.h"
#include "model/eval_rows.h"
#include "model/model_internal.h"
#include "model/terms/term.h"

/* The model's evaluators: the tapes, then the terms evaluated numerically beside them (the table's
 * eval entries, model/terms/term.h); never a tree beside the others. */
int model_eval_F(const mbl_model *md, const double *syms, double *F, double *work, mbl_status *st)
{
    int rc = mblx_tape_eval(md->tape_F, syms, F, work, st);
    for (int t = 0; t < MODEL_NTERMS && !rc; t++)
        if (model_terms[t]->present(md)) rc = model_terms[t]->eval(md, syms, F, NULL, work, st);
    return rc;
}

mblx__subtape *model_F_rows_view(const mbl_model *md, int nrow, const int *rows)
{
    for (int t = 0; t < MODEL_NTERMS; t++)
        if (model_terms[t]->present(md)) return NULL;
    uint32_t *sel = mbl_alloc_array((size_t)nrow + 1, sizeof *sel);
    if (!sel) return NULL;
    for (int i = 0; i < nrow; i++) sel[i] = (uint32_t)rows[i];
    mblx__subtape *s = mblx__subtape_new(md->tape_F, (size_t)nrow, sel);
    mbl_free(sel);
    return s;
}

/* 1 when a term is present and every present term offers eval_sel */
int model_eval_sel_ok(const mbl_model *md)
{
    int any = 0;
    for (int t = 0; t < MODEL_NTERMS; t++)
        if (model_terms[t]->present(md)) {
            if (!model_terms[t]->eval_sel) return 0;
            any = 1;
        }
    return any;
}

int model_eval_F_sel(const mbl_model *md, unsigned rowmask, const double *syms, double *F, double *work,
                     mbl_status *st)
{
    int rc = mblx_tape_eval(md->tape_F, syms, F, work, st);
    for (int t = 0; t < MODEL_NTERMS && !rc; t++) {
        const model_term_ops *term = model_terms[t];
        if (!term->present(md)) continue;
        rc = term->eval_sel ? term->eval_sel(md, syms, F, NULL, work, rowmask, ~0u, st)
                            : term->eval(md, syms, F, NULL, work, st);
    }
    return rc;
}

static _Thread_local model_jac_observer jac_observer;
static _Thread_local void *jac_observer_ctx;

void model_set_jac_observer(model_jac_observer fn, void *ctx)
{
    jac_observer = fn, jac_observer_ctx = ctx;
}

/* tape_jac's values at syms: copied when they are the same at every point (md->jac0) */
static int jac_tape(const mbl_model *md, const double *syms, double *jac, double *work, mbl_status *st)
{
    if (!md->jac0) return mblx_tape_eval(md->tape_jac, syms, jac, work, st);
    memcpy(jac, md->jac0, (size_t)md->jac_ntape * sizeof *jac);
    mbl_status_clear(st);
    return 0;
}

/* model_eval_jac, or with sel its entries in the rows of rowmask and the blocks of colmask (the
 * terms' eval_sel where they offer it) */
static int eval_jac(const mbl_model *md, int sel, unsigned rowmask, unsigned colmask, const double *syms, double *jac,
                    double *work, mbl_status *st)
{
    if (jac_observer) jac_observer(jac_observer_ctx, md, syms);
    /* a model loaded with forward_jacobian has no Jacobian tape: forward sweeps of tape_F */
    int rc = md->tape_jac ? jac_tape(md, syms, jac, work, st)
                          : mblx_fwdjac_eval(mblx_tape_fwdjac(md->tape_F), md->tape_F, syms, jac, NULL, work, st),
        zeroed = 0;
    for (int t = 0; t < MODEL_NTERMS && !rc; t++) {
        const model_term_ops *term = model_terms[t];
        if (!term->present(md)) continue;
        if (term->after_tape && !zeroed) { /* the entries past the tape's are the terms' alone */
            for (int p = md->jac_ntape; p < md->jac.nz; p++) jac[p] = 0.0;
            zeroed = 1;
        }
        rc = sel && term->eval_sel ? term->eval_sel(md, syms, NULL, jac, work, rowmask, colmask, st)
                                   : term->eval(md, syms, NULL, jac, work, st);
    }
    return rc;
}

int model_eval_jac(const mbl_model *md, const double *syms, double *jac, double *work, mbl_status *st)
{
    return eval_jac(md, 0, ~0u, ~0u, syms, jac, work, st);
}

int model_eval_jac_sel(const mbl_model *md, unsigned rowmask, unsigned colmask, const double *syms, double *jac,
                       double *work, mbl_status *st)
{
    return eval_jac(md, 1, rowmask, colmask, syms, jac, work, st);
}

int model_eval_jac_rows(const mbl_model *md, mblx__subtape *view, const int *outpos, const double *syms, double *jac,
                        double *work, mbl_status *st)
{
    const mblx_fwdjac *J = md->tape_jac ? NULL : mblx_tape_fwdjac(md->tape_F);
    if (!J || !view) return model_eval_jac(md, syms, jac, work, st);
    if (jac_observer) jac_observer(jac_observer_ctx, md, syms);
    return mblx__fwdjac_eval_rows(J, view, outpos, syms, jac, work, st);
}

/* A rows' tape (the outputs', the user states'): its nrows rows, then its Jacobian's values, by
 * forward sweeps where a one-point load gave it a coloring (compile.c, rows_jacobian), else the
 * tape's own entries after the rows */
static int rows_tape_eval(const mblx_tape *t, int nrows, const double *syms, double *out, double *work, mbl_status *st)
{
    const mblx_fwdjac *J = mblx_tape_fwdjac(t);
    return J ? mblx_fwdjac_eval(J, t, syms, out + nrows, out, work, st) : mblx_tape_eval(t, syms, out, work, st);
}

/* Doubles of rows_tape_eval's work */
static size_t rows_tape_work(const mblx_tape *t)
{
    const mblx_fwdjac *J = mblx_tape_fwdjac(t);
    return J ? mblx_fwdjac_work_size(J, t) : mblx_tape_work_size(t);
}

int model_eval_outputs(const mbl_model *md, const double *syms, double *out, double *work, mbl_status *st)
{
    return rows_tape_eval(md->tape_y, md->ny, syms, out, work, st);
}

size_t model_outputs_work(const mbl_model *md) { return rows_tape_work(md->tape_y); }

int model_eval_user_states(const mbl_model *md, const double *syms, double *out, double *work, mbl_status *st)
{
    return rows_tape_eval(md->tape_us, 3 * md->nus + 2 * md->nuvs, syms, out, work, st);
}

size_t model_user_states_work(const mbl_model *md) { return rows_tape_work(md->tape_us); }

/* The Jacobian and the outputs with theirs (y: md->tape_y's layout; NULL: not wanted). A term with
 * a jac_y entry that is the model's only one evaluates both in one pass (a tree's texts and
 * outputs are one tape, its outputs_bind: the kinematics both read are computed once, and
 * evaluated there also when y is NULL, so that the Jacobian's values do not depend on whether the
 * outputs are wanted; that tape shares subexpressions across more outputs than the texts' own,
 * which can change their last bits). NULL when the model has no such term. */
static const model_term_ops *only_term(const mbl_model *md)
{
    const model_term_ops *only = NULL;
    for (int t = 0; t < MODEL_NTERMS; t++) {
        if (!model_terms[t]->present(md)) continue;
        if (only) return NULL;
        only = model_terms[t];
    }
    return only;
}

static const model_term_ops *jac_y_term(const mbl_model *md)
{
    const model_term_ops *only = md->ny > 0 ? only_term(md) : NULL;
    return only && only->jac_y ? only : NULL;
}

int model_eval_jac_y_shared(const mbl_model *md)
{
    return jac_y_term(md) != NULL;
}

int model_eval_jac_y(const mbl_model *md, const double *syms, double *jac, double *y, double *work, mbl_status *st)
{
    const model_term_ops *term = jac_y_term(md);
    if (!term) {
        int rc = model_eval_jac(md, syms, jac, work, st);
        return rc || !y ? rc : model_eval_outputs(md, syms, y, work, st);
    }
    if (jac_observer) jac_observer(jac_observer_ctx, md, syms);
    int rc = jac_tape(md, syms, jac, work, st);
    return rc ? rc : term->jac_y(md, syms, jac, y, work, st);
}

/* ---- the values at one point, kept (model_jac_memo) ---- */

unsigned long long model_serial(const mbl_model *md)
{
    static atomic_ullong last;
    atomic_ullong *s = (atomic_ullong *)&md->serial; /* given once, the first caller's */
    unsigned long long v = atomic_load(s);
    if (v) return v;
    unsigned long long mine = atomic_fetch_add(&last, 1) + 1;
    return atomic_compare_exchange_strong(s, &v, mine) ? mine : v;
}

model_jac_memo *model_jac_memo_new(const mbl_model *md, double *syms, double *jac)
{
    model_jac_memo *m = mbl_calloc(1, sizeof *m);
    if (!m) {
        mbl_free(syms), mbl_free(jac);
        return NULL;
    }
    m->serial = model_serial(md), m->nsym = md->nsym, m->nz = md->jac.nz, m->syms = syms, m->jac = jac;
    return m;
}

model_jac_memo *model_take_load_memo(const mbl_model *md)
{
    return atomic_exchange(&((mbl_model *)md)->load_memo, NULL);
}

void model_jac_memo_free(model_jac_memo *memo)
{
    if (!memo) return;
    mbl_free(memo->syms), mbl_free(memo->jac), mbl_free(memo);
}

const double *model_jac_memo_at(const mbl_model *md, const model_jac_memo *memo, const double *syms)
{
    if (!memo || memo->serial != model_serial(md) || memo->nsym != md->nsym || memo->nz != md->jac.nz) return NULL;
    return memcmp(memo->syms, syms, (size_t)md->nsym * sizeof *syms) ? NULL : memo->jac;
}

int model_eval_jac_memo(const mbl_model *md, const model_jac_memo *memo, const double *syms, double *jac, double *work,
                        mbl_status *st)
{
    const double *kept = model_jac_memo_at(md, memo, syms);
    if (!kept) return model_eval_jac(md, syms, jac, work, st);
    memcpy(jac, kept, (size_t)md->jac.nz * sizeof *jac);
    return 0;
}

/* ---- the inverse of the mass matrix by a term's own recursion (a tree's articulated bodies) ---- */

/* the model's only present term when it gives M^-1 (mass_only), with a Jacobian tape */
static const model_term_ops *mass_term(const mbl_model *md)
{
    const model_term_ops *only = only_term(md);
    return only && only->minv && md->tape_jac && only->mass_only(md) ? only : NULL;
}

int model_mass_inverse_ok(const mbl_model *md) { return mass_term(md) != NULL; }

size_t model_mass_inverse_work(const mbl_model *md)
{
    const model_term_ops *term = mass_term(md);
    return term ? term->mass_work(md) : 0;
}

/* The term's M^-1 with its entries added to jac (dense: three dense matrices, model_eval_dense_minv)
 * and y: from the term's shared tape with the outputs (jac_y_term), else from the outputs' own */
static int term_minv(const mbl_model *md, const model_term_ops *term, const double *syms, double *jac, double *y,
                     double *minv, double *mwork, double *work, int dense, mbl_status *st)
{
    int shared = jac_y_term(md) != NULL;
    int rc = term->minv(md, syms, jac, shared ? y : NULL, minv, mwork, work, dense, st);
    if (rc < 0 || shared || !y || md->ny <= 0) return rc;
    int rc2 = model_eval_outputs(md, syms, y, work, st);
    return rc2 ? rc2 : rc;
}

int model_eval_jac_y_minv(const mbl_model *md, const double *syms, double *jac, double *y, double *minv, double *mwork,
                          double *work, mbl_status *st)
{
    const model_term_ops *term = mass_term(md);
    if (!term) return mbl_error(st, MBL_EARG, "model_eval_jac_y_minv: the model's mass matrix is not a tree's alone");
    if (jac) {
        if (jac_observer) jac_observer(jac_observer_ctx, md, syms);
        int rc = jac_tape(md, syms, jac, work, st);
        if (rc) return rc;
    }
    return term_minv(md, term, syms, jac, y, minv, mwork, work, 0, st);
}

const double *model_jac_constant(const mbl_model *md)
{
    return md->jac0 && md->jac_ntape == md->jac.nz ? md->jac0 : NULL;
}

int model_mass_dense_ok(const mbl_model *md)
{
    const model_term_ops *term = mass_term(md);
    return term && term->dense_ok && term->dense_ok(md) && model_jac_constant(md) != NULL;
}

int model_eval_dense_minv(const mbl_model *md, const double *syms, double *KCM, double *y, double *minv, double *mwork,
                          double *work, mbl_status *st)
{
    const model_term_ops *term = mass_term(md);
    if (!term || !model_mass_dense_ok(md))
        return mbl_error(st, MBL_EARG, "model_eval_dense_minv: the model's Jacobian is not a tree's and constants");
    if (jac_observer) jac_observer(jac_observer_ctx, md, syms);
    return term_minv(md, term, syms, KCM, y, minv, mwork, work, 1, st);
}
