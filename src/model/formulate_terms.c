/* The structured terms' part of the formulation: the flexible bodies' rows (model/terms/ffr.c), a
 * relative-coordinate tree's (model/rtree.h) and the planar bodies and joints evaluated
 * numerically (model/pmech_num.h), parsed and attached to the model. */
#include "model/formulate.h"

/* The structured term: the flexible bodies' rows and Jacobian entries (model/terms/ffr.c), kept apart
 * in md->Fs and md->sjac until model_compile() has differentiated the text rows. */
int model_formulate_ffr(loader *L)
{
    mbl_model *md = L->md;
    mbl_src *s = L->src;
    if (!s->nffr) return 0;
    md->Fs = mbl_alloc_array((size_t)md->n + 1, sizeof *md->Fs);
    if (!md->Fs) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
    mblx_id zero = mblx_const(md->g, 0.0);
    for (int i = 0; i < md->n; i++) md->Fs[i] = zero;
    for (int b = 0; b < s->nffr; b++) {
        const mbl_ffr_body *fb = &s->ffr[b];
        int nc = 3 + fb->inv.nf, rc = 0;
        int *qidx = mbl_alloc_array((size_t)nc, sizeof *qidx);
        if (!qidx) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
        for (int k = 0; k < nc && !rc; k++) {
            const char *nm = k < 3 ? fb->coord[k] : fb->qf[k - 3];
            qidx[k] = model_find_name(&s->coordinates, nm, strlen(nm));
            if (qidx[k] < 0)
                rc = mbl_error(L->st, MBL_EMODEL, "%s: %s: coordinate '%s' is not a coordinate of the model", s->file,
                               fb->name, nm);
        }
        /* gravity and the invariants' factors as expressions of the parameters (sensitivities) */
        mblx_id gn[3], fac[MBL_FFR_MAXFAC];
        for (int k = 0; k < 3 && !rc; k++) {
            gn[k] = mblx_const(md->g, fb->g[k]);
            if (fb->gtext[k]) {
                mbl_src_item it = {NULL, NULL, fb->gtext[k], fb->gline, fb->gcol, fb->gline, fb->gcol};
                rc = model_parse_item_text(L, &it, SCOPE_VALUE, "gravity", &gn[k]);
            }
        }
        for (int k = 0; k < fb->nfac && !rc; k++) {
            const mbl_ffr_factor *f = &fb->fac[k];
            mbl_src_item it = {NULL, NULL, f->text, f->line, f->col, f->line, f->col};
            rc = model_parse_item_text(L, &it, SCOPE_VALUE, fb->name, &fac[k]);
        }
        if (!rc) rc = model_ffr_add(md, fb, qidx, gn, md->Fs, &md->sjac, L->st);
        if (!rc) rc = model_ffr_keep_nodes(md, fb, qidx, L->st);
        if (!rc) rc = model_ffr_keep_deriv(md, fb, qidx, gn, fac, L->st);
        mbl_free(qidx);
        if (rc) return rc;
    }
    return 0;
}

/* The structured term of a relative-coordinate tree (model/rtree.h): its texts parsed over the
 * mechanism's variables, its rows and closed-form Jacobian entries kept in md->Fs and md->sjac
 * beside the flexible bodies' until model_compile() has differentiated the text rows. */
int model_formulate_rtree(loader *L)
{
    mbl_model *md = L->md;
    mbl_src *s = L->src;
    const mbl_rtree *t = s->rtree;
    if (!t || !t->nb) return 0;
    if (!md->Fs) {
        md->Fs = mbl_alloc_array((size_t)md->n + 1, sizeof *md->Fs);
        if (!md->Fs) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
        mblx_id zero = mblx_const(md->g, 0.0);
        for (int i = 0; i < md->n; i++) md->Fs[i] = zero;
    }
    int rc = 0;
    int *qidx = mbl_alloc_array((size_t)t->nb, sizeof *qidx);
    mblx_id *tn = mbl_alloc_array((size_t)t->nb * MBL_RTREE_NT, sizeof *tn), gn[3];
    if (!qidx || !tn) rc = mbl_error(L->st, MBL_ENOMEM, "out of memory");
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
    }
    for (int k = 0; k < 3 && !rc; k++) {
        mbl_src_item it = {NULL, NULL, t->g[k], 0, 0, 0, 0};
        rc = model_parse_item_text(L, &it, SCOPE_FULL, "gravity", &gn[k]);
    }
    if (!rc) rc = model_rtree_num_new(md, t, qidx, tn, gn, &md->rtn, L->st);
    mbl_free(qidx);
    mbl_free(tn);
    return rc;
}

/* Planar rigid bodies and revolute joints evaluated numerically (model/pmech_num.h): their texts
 * parsed (parameters only), the term's pattern kept in md->sjac beside the flexible bodies' until
 * model_compile() has differentiated the text rows (md->Fs makes model_compile() merge it). */
/* the numeric term's texts repeat (every bar's "m", "-l/2"): each distinct text parsed once */
typedef struct pm_cache {
    const char **key;
    mblx_id *node;
    size_t cap;
} pm_cache;

static int pm_parse(loader *L, pm_cache *c, const char *text, int line, int col, const char *what, mblx_id *out)
{
    size_t len = strlen(text), h = (size_t)model_name_hash(text, len) & (c->cap - 1);
    while (c->key[h] && strcmp(c->key[h], text)) h = (h + 1) & (c->cap - 1);
    if (c->key[h]) {
        *out = c->node[h];
        return 0;
    }
    mbl_src_item it = {NULL, NULL, (char *)text, line, col, line, col};
    int rc = model_parse_item_text(L, &it, SCOPE_VALUE, what, out);
    if (!rc) c->key[h] = text, c->node[h] = *out;
    return rc;
}

int model_formulate_pmech(loader *L)
{
    mbl_model *md = L->md;
    const mbl_pmech_src *p = L->src->pmech;
    if (!p || (!p->nb && !p->nj && !p->ns)) return 0;
    if (!md->Fs) {
        md->Fs = mbl_alloc_array((size_t)md->n + 1, sizeof *md->Fs);
        if (!md->Fs) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
        mblx_id zero = mblx_const(md->g, 0.0);
        for (int i = 0; i < md->n; i++) md->Fs[i] = zero;
    }
    int rc = 0;
    int *qidx = mbl_alloc_array(3 * (size_t)p->nb + 1, sizeof *qidx);
    mblx_id *bn = mbl_alloc_array(4 * (size_t)p->nb + 1, sizeof *bn), *jn = mbl_alloc_array(6 * (size_t)p->nj + 1, sizeof *jn);
    mblx_id *sn = mbl_alloc_array(8 * (size_t)p->ns + 1, sizeof *sn);
    mblx_id gn[2];
    pm_cache pc = {NULL, NULL, 16};
    while (pc.cap < 2 * (4 * (size_t)p->nb + 6 * (size_t)p->nj + 8 * (size_t)p->ns + 2)) pc.cap *= 2;
    pc.key = mbl_calloc(pc.cap, sizeof *pc.key);
    pc.node = mbl_alloc_array(pc.cap, sizeof *pc.node);
    if (!qidx || !bn || !jn || !sn || !pc.key || !pc.node) rc = mbl_error(L->st, MBL_ENOMEM, "out of memory");
    for (int b = 0; b < p->nb && !rc; b++) {
        const mbl_pmech_body *B = &p->b[b];
        for (int k = 0; k < 3 && !rc; k++)
            if ((qidx[3 * b + k] = model_find_name(&L->src->coordinates, B->q[k], strlen(B->q[k]))) < 0)
                rc = mbl_error(L->st, MBL_EMODEL, "%s: body '%s': coordinate '%s' is not a coordinate of the model",
                               L->src->file, B->name, B->q[k]);
        for (int k = 0; k < 4 && !rc; k++) rc = pm_parse(L, &pc, B->t[k], B->line, B->col, B->name, &bn[4 * b + k]);
    }
    for (int j = 0; j < p->nj && !rc; j++)
        for (int k = 0; k < 6 && !rc; k++) {
            const mbl_pmech_joint *J = &p->j[j];
            rc = pm_parse(L, &pc, k < 4 ? J->s[k / 2][k % 2] : J->a[k - 4], J->line, J->col, J->name, &jn[6 * j + k]);
        }
    for (int j = 0; j < p->ns && !rc; j++)
        for (int k = 0; k < 8 && !rc; k++) {
            const mbl_pmech_spring *S = &p->s[j];
            rc = pm_parse(L, &pc, k < 4 ? S->s[k / 2][k % 2] : S->t[k - 4], S->line, S->col, S->name, &sn[8 * j + k]);
        }
    for (int k = 0; k < 2 && !rc; k++) {
        gn[k] = mblx_const(md->g, 0.0);
        if (p->g[k]) {
            mbl_src_item it = {NULL, NULL, p->g[k], p->gline, p->gcol, p->gline, p->gcol};
            rc = model_parse_item_text(L, &it, SCOPE_VALUE, "gravity", &gn[k]);
        }
    }
    if (!rc) rc = model_pmech_num_new(md, p, qidx, bn, jn, sn, gn, L->st);
    mbl_free(qidx), mbl_free(bn), mbl_free(jn), mbl_free(sn), mbl_free(pc.key), mbl_free(pc.node);
    return rc;
}
