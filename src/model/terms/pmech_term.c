/* The planar rigid bodies' and revolute joints' entries in the term table (model/terms/term.h): their
 * formulation from the source (the texts parsed, model_pmech_num_new), the constraint rows their
 * joints evaluate claimed, and the calls of pmech_num.c's evaluators, expression form and remap on
 * md->pmn. Apart from pmech_num.c, whose formulas would meet the loader's headers (<complex.h>'s I). */
#include <string.h>

#include "model/formulate.h"
#include "model/pmech_num.h"
#include "model/terms/term.h"

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

static int num_formulate(loader *L)
{
    mbl_model *md = L->md;
    const mbl_pmech_src *p = L->src->pmech;
    if (!p || (!p->nb && !p->nj && !p->ns)) return 0;
    if (model_structured_rows(md, L->st)) return L->st ? L->st->code : MBL_ENOMEM;
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

/* the constraint rows of the joints evaluated here, which formulate_constraints leaves zero (the
 * mechanism compiler wrote them as texts too, at c0 .. c0 + nc - 1) */
static int num_claim_rows(loader *L)
{
    const mbl_pmech_src *p = L->src->pmech;
    int rc = 0;
    for (int j = 0; j < p->nj && !rc; j++) {
        int c0 = p->j[j].c0, t = p->j[j].type;
        int nc = t == MBL_PMECH_FIXED ? 3 : t == MBL_PMECH_ORIENTATION ? 1 : 2;
        if (c0 < 0 || c0 + nc > L->src->constraints.n)
            rc = mbl_error(L->st, MBL_EMODEL, "internal: %s has no constraints %d to %d", p->j[j].name, c0, c0 + nc - 1);
        else
            memset(L->term_row + c0, 1, (size_t)nc);
    }
    return rc;
}

/* the term's entries in the table of model/terms/term.h */
static int num_present(const mbl_model *md) { return md->pmn != NULL; }

static int num_in_src(const mbl_src *s) { return s->pmech && (s->pmech->nb || s->pmech->nj || s->pmech->ns); }

static int num_eval(const mbl_model *md, const double *syms, double *F, double *jac, double *work, mbl_status *st)
{
    (void)work;
    return model_pmech_num_eval(md, md->pmn, syms, F, jac, st);
}

static int num_check(const mbl_model *md, const double *syms, mbl_status *st)
{
    return model_pmech_num_check(md, md->pmn, syms, st);
}

static int num_eval_sel(const mbl_model *md, const double *syms, double *F, double *jac, double *work, unsigned rowmask,
                        unsigned colmask, mbl_status *st)
{
    (void)work;
    return model_pmech_num_eval_sel(md, md->pmn, syms, F, jac, rowmask, colmask, st);
}

static int num_exprs(mbl_model *md, mblx_id *Fs, mbl_sjac *S, mbl_status *st)
{
    return model_pmech_num_exprs(md, md->pmn, Fs, S, st);
}

static size_t num_work(const mbl_model *md)
{
    (void)md;
    return 0;
}

static void num_remap(mbl_model *md, const int *map) { model_pmech_num_remap(md->pmn, map); }

static void num_free(mbl_model *md) { model_pmech_num_free(md->pmn); }

const model_term_ops model_term_pmech = {
    .name = "planar rigid bodies and joints",
    .after_tape = 1,
    .present = num_present,
    .in_src = num_in_src,
    .claim_rows = num_claim_rows,
    .formulate = num_formulate,
    .remap = num_remap,
    .work = num_work,
    .eval = num_eval,
    .eval_sel = num_eval_sel,
    .check_point = num_check,
    .exprs = num_exprs,
    .free = num_free,
};
