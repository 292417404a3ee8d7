/* The tree's entries in the term table (model/terms/term.h): its formulation from the source (the
 * texts parsed, model_rtree_num_new), the compilation's steps (the pattern, the outputs' Jacobian and
 * tape), its evaluators, its expression form and the checks' question, each a call of rtree.c's or
 * rtree_y.c's functions on md->rtn. */
#include <string.h>

#include "model/formulate.h"
#include "model/model_internal.h"
#include "model/rtree.h"
#include "model/terms/term.h"

/* The structured term of a relative-coordinate tree (model/rtree.h): its texts parsed over the
 * mechanism's variables, its rows and closed-form Jacobian entries kept in md->Fs and md->sjac
 * beside the flexible bodies' until model_compile() has differentiated the text rows. */
static int num_formulate(loader *L)
{
    mbl_model *md = L->md;
    mbl_src *s = L->src;
    const mbl_rtree *t = s->rtree;
    if (!t || !t->nb) return 0;
    if (model_structured_rows(md, L->st)) return L->st ? L->st->code : MBL_ENOMEM;
    int rc = 0;
    int *qidx = mbl_alloc_array((size_t)t->nb, sizeof *qidx);
    mblx_id *tn = mbl_alloc_array((size_t)t->nb * MBL_RTREE_NT, sizeof *tn), gn[3];
    mblx_id *ln = mbl_alloc_array((size_t)t->nb * 6, sizeof *ln); /* the markers' sp, sc (rtree.h) */
    if (!qidx || !tn || !ln) rc = mbl_error(L->st, MBL_ENOMEM, "out of memory");
    for (int b = 0; b < t->nb && !rc; b++) {
        const mbl_rtree_body *B = &t->b[b];
        qidx[b] = -1;
        if (B->q && (qidx[b] = model_find_name(&s->coordinates, B->q, strlen(B->q))) < 0)
            rc = mbl_error(L->st, MBL_EMODEL, "%s: %s: coordinate '%s' is not a coordinate of the model", s->file,
                           B->name, B->q);
        for (int k = 0; k < MBL_RTREE_NT && !rc; k++) {
            mbl_src_item it = {NULL, NULL, B->t[k], B->line, B->col, B->line, B->col};
            rc = model_parse_item_text(L, &it, SCOPE_FULL, B->name, &tn[(size_t)b * MBL_RTREE_NT + k]);
        }
        for (int k = 0; k < 6 && !rc; k++) {
            ln[(size_t)b * 6 + k] = MBLX_NONE;
            if (!B->local) continue;
            mbl_src_item it = {NULL, NULL, k < 3 ? B->sp[k] : B->sc[k - 3], B->line, B->col, B->line, B->col};
            rc = model_parse_item_text(L, &it, SCOPE_FULL, B->name, &ln[(size_t)b * 6 + k]);
        }
    }
    for (int k = 0; k < 3 && !rc; k++) {
        mbl_src_item it = {NULL, NULL, t->g[k], 0, 0, 0, 0};
        rc = model_parse_item_text(L, &it, SCOPE_FULL, "gravity", &gn[k]);
    }
    if (!rc) rc = model_rtree_num_new(md, t, qidx, tn, gn, ln, &md->rtn, L->st);
    mbl_free(qidx);
    mbl_free(tn);
    mbl_free(ln);
    return rc;
}

static int num_present(const mbl_model *md) { return md->rtn != NULL; }

static int num_in_src(const mbl_src *s) { return s->rtree && s->rtree->nb; }

static int num_pattern(mbl_model *md, mbl_status *st) { return model_rtree_num_pattern(md, md->rtn, st); }

static int num_outputs_jac(mbl_model *md, mbl_status *st)
{
    return model_rtree_num_yjac(md, md->rtn, md->ny, md->y, &md->yjac, st);
}

static int num_outputs_bind(mbl_model *md, mbl_status *st)
{
    return model_rtree_num_bind_outputs(md, md->rtn, st);
}

static int num_eval(const mbl_model *md, const double *syms, double *F, double *jac, double *work, mbl_status *st)
{
    return F ? model_rtree_num_F(md->rtn, syms, F, work, st) : model_rtree_num_jac(md->rtn, syms, jac, work, st);
}

static int num_jac_y(const mbl_model *md, const double *syms, double *jac, double *y, double *work, mbl_status *st)
{
    return model_rtree_num_jac_y(md->rtn, syms, jac, y, work, st);
}

static int num_exprs(mbl_model *md, mblx_id *Fs, mbl_sjac *S, mbl_status *st)
{
    return model_rtree_num_exprs(md, md->rtn, Fs, S, st);
}

static size_t num_work(const mbl_model *md) { return model_rtree_num_work(md->rtn); }

/* an equation of motion of the tree (row < n, the row of joint q): its entries are numbers, the
 * masses and inertias of the bodies the row's joint carries are texts */
static int num_row_depends(const mbl_model *md, int r, mblx_id p)
{
    int dep = 0;
    for (int b = 0; !dep && r < md->n && b < model_rtree_num_nbodies(md->rtn); b++) {
        int in = 0, a = b, parent, kind, q;
        const mblx_id *tn;
        while (a >= 0 && !in) {
            model_rtree_num_body(md->rtn, a, &parent, &kind, &q, &tn);
            in = q == r;
            a = parent;
        }
        model_rtree_num_body(md->rtn, b, &parent, &kind, &q, &tn);
        for (int k = MBL_RTREE_M; in && !dep && k < MBL_RTREE_E; k++)
            dep = tn[k] != MBLX_NONE && mblx_depends(md->g, tn[k], p);
    }
    return dep;
}

static int num_mass_only(const mbl_model *md) { return model_rtree_num_mass_only(md->rtn); }

static size_t num_mass_work(const mbl_model *md) { return model_rtree_num_mass_work(md->rtn); }

static int num_minv(const mbl_model *md, const double *syms, double *jac, double *y, double *minv, double *mwork,
                    double *work, int dense, mbl_status *st)
{
    return model_rtree_num_minv(md->rtn, syms, jac, y, minv, mwork, work, dense, st);
}

static int num_dense_ok(const mbl_model *md) { return model_rtree_num_dense_ok(md->rtn); }

static void num_free(mbl_model *md) { model_rtree_num_free(md->rtn); }

const model_term_ops model_term_rtree = {
    .name = "relative-coordinate tree",
    .after_tape = 0,
    .present = num_present,
    .in_src = num_in_src,
    .formulate = num_formulate,
    .pattern = num_pattern,
    .outputs_jac = num_outputs_jac,
    .outputs_bind = num_outputs_bind,
    .work = num_work,
    .eval = num_eval,
    .jac_y = num_jac_y,
    .mass_only = num_mass_only,
    .mass_work = num_mass_work,
    .minv = num_minv,
    .dense_ok = num_dense_ok,
    .exprs = num_exprs,
    .row_depends = num_row_depends,
    .free = num_free,
};
