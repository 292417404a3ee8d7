/* Planar rigid bodies, revolute, fixed and orientation joints and spring-dampers in absolute
 * coordinates handed to the model's numeric term (model/pmech_num.h) instead of texts: a body's
 * kinetic energy and weight, a joint's constraint equations and a spring-damper's force (its
 * stiffness, damping, free length and preload functions of the parameters) are not written (their
 * derivatives, time derivatives and tapes were most of a large planar mechanism's loading); the
 * constraint items stay, with the text "0", so that the constraints keep their names and order.
 * Anything else (torsion springs, `force:` springs, drivers, couplers, measures, other joints, point
 * masses, flexible bodies, spatial or relative mechanisms, a text that is not a function of the
 * parameters) keeps the text path. See docs/mechanism-reference.md. */
#include "mech/mech_internal.h"

#include <string.h>

#include "model/pmech_num.h"
#include "model/source.h"

/* 1 when text is a function of the parameters alone (what the numeric term evaluates once); each
 * distinct text parsed once (M->hpt: 1 yes, 0 no) */
static int param_text(mech *M, const char *text)
{
    /* a run of up to 15 digits ("0", "12": most marker positions and angles of the N = 2000 four-bar)
     * is a constant, as its parse says (an exact integer, expr/parse.c): no lookup */
    size_t nd = 0;
    while (text[nd] >= '0' && text[nd] <= '9') nd++;
    if (nd && nd <= 15 && !text[nd]) return 1;
    int known = mech_ns_find(&M->hpt, text, nd + strlen(text + nd));
    if (known >= 0) return known;
    mblx_parse_opts po;
    memset(&po, 0, sizeof po);
    po.resolve = mech_resolve_param;
    po.ud = M;
    mbl_status st;
    mblx_id e;
    int used = M->used_set, rc = mblx_parse(M->g, text, strlen(text), &po, &e, &st);
    M->used_set = used;
    if (rc == MBL_ENOMEM) M->oom = 1;
    if (rc != MBL_ENOMEM && mech_ns_add(&M->hpt, text, rc == 0)) M->oom = 1;
    return rc == 0;
}

static mbl_pmech_src *pm_src(mech *M)
{
    if (!M->src->pmech && !(M->src->pmech = mbl_calloc(1, sizeof *M->src->pmech))) M->oom = 1;
    return M->src->pmech;
}

/* a copy owned by the numeric term's source (its blocks) */
static char *dup(mech *M, const char *s)
{
    char *d = model_pmech_src_text(M->src->pmech, s);
    if (!d) M->oom = 1;
    return d;
}

/* arr (n used of *cap elements of sz bytes) with room for one more: the same block or a larger
 * one (then *cap updated), NULL when out of memory */
static void *pm_room(void *arr, int n, int *cap, size_t sz)
{
    if (n < *cap) return arr;
    int c = *cap ? 2 * *cap : 16;
    void *a = mbl_realloc_array(arr, (size_t)c, sz);
    if (a) *cap = c;
    return a;
}

int mech_pm_body(mech *M, int bi)
{
    body *B = &M->b[bi];
    if (!M->pnum || B->kind != KIND_PLANAR || B->flex) return 0;
    if (!param_text(M, B->mass) || !param_text(M, B->I[2]) || !param_text(M, B->cm[0]) || !param_text(M, B->cm[1]))
        return M->oom ? mech_oom(M) : 0;
    mbl_pmech_src *p = pm_src(M);
    if (!p) return mech_oom(M);
    mbl_pmech_body *grown = pm_room(p->b, p->nb, &p->cb, sizeof *grown);
    if (!grown) return mech_oom(M);
    p->b = grown;
    mbl_pmech_body *x = &p->b[p->nb++];
    memset(x, 0, sizeof *x);
    x->name = dup(M, B->name);
    x->q[0] = dup(M, B->r[0]), x->q[1] = dup(M, B->r[1]), x->q[2] = dup(M, B->th);
    x->t[0] = dup(M, B->mass), x->t[1] = dup(M, B->I[2]), x->t[2] = dup(M, B->cm[0]), x->t[3] = dup(M, B->cm[1]);
    x->line = B->line, x->col = B->col;
    B->pn = p->nb;
    return M->oom ? mech_oom(M) : 0;
}

/* a marker the numeric joint can take: on a numeric body or the ground, its position (and its
 * angle when `angle`) a function of the parameters */
static int pm_marker_a(mech *M, int mi, int angle)
{
    const marker *K = &M->mk[mi];
    const body *B = &M->b[K->body];
    if (!(B->pn || B->kind == KIND_GROUND) || K->node || K->shape) return 0;
    return param_text(M, K->s[0]) && param_text(M, K->s[1]) && (!angle || param_text(M, K->ang ? K->ang : "0"));
}

static int pm_marker(mech *M, int mi) { return pm_marker_a(M, mi, 0); }

int mech_pm_joint(mech *M, joint *J, const char *cname, int *done)
{
    *done = 0;
    int type = !strcmp(J->type, "revolute") ? MBL_PMECH_REVOLUTE
               : !strcmp(J->type, "fixed")  ? MBL_PMECH_FIXED
               : !strcmp(J->type, "orientation") ? MBL_PMECH_ORIENTATION
                                                 : -1;
    int ang = type != MBL_PMECH_REVOLUTE;
    if (!M->pnum || type < 0 || !pm_marker_a(M, J->i, ang) || !pm_marker_a(M, J->j, ang))
        return M->oom ? mech_oom(M) : 0;
    mbl_pmech_src *p = pm_src(M);
    if (!p) return mech_oom(M);
    mbl_pmech_joint *grown = pm_room(p->j, p->nj, &p->cj, sizeof *grown);
    if (!grown) return mech_oom(M);
    p->j = grown;
    mbl_pmech_joint *x = &p->j[p->nj++];
    memset(x, 0, sizeof *x);
    x->name = dup(M, mech_fmt(M, "joint '%s'", J->name));
    x->type = type;
    x->line = J->line, x->col = J->col;
    x->c0 = M->src->constraints.n;
    int mk[2] = {J->i, J->j};
    for (int a = 0; a < 2; a++) {
        const body *B = &M->b[M->mk[mk[a]].body];
        x->b[a] = B->kind == KIND_GROUND ? -1 : B->pn - 1;
        for (int k = 0; k < 2; k++) x->s[a][k] = dup(M, M->mk[mk[a]].s[k]);
        x->a[a] = dup(M, M->mk[mk[a]].ang ? M->mk[mk[a]].ang : "0");
    }
    /* the reactions' measures read these (joint.c: the planar revolute's, fixed's, orientation's) */
    static const char *e3[3][3] = {{"1", "0", "0"}, {"0", "1", "0"}, {"0", "0", "1"}};
    int np = type == MBL_PMECH_ORIENTATION ? 0 : 2, nc = np + (type != MBL_PMECH_REVOLUTE);
    for (int r = 0; r < np; r++)
        for (int k = 0; k < 3; k++) J->fg[r][k] = e3[r][k];
    if (nc > np)
        for (int k = 0; k < 3; k++) J->mg[np][k] = e3[2][k];
    J->c0 = M->src->constraints.n;
    J->nc = nc;
    int rc = 0;
    for (int r = 0; r < nc && !rc; r++) rc = mech_con(M, cname, "0", J->line, J->col);
    *done = 1;
    return rc ? rc : M->oom ? mech_oom(M) : 0;
}

int mech_pm_spring(mech *M, const char *name, int mi, int mj, const char *const t[4], int line, int col)
{
    if (!M->pnum || !M->src->pmech || !pm_marker(M, mi) || !pm_marker(M, mj)) return M->oom ? mech_oom(M) : 0;
    for (int k = 0; k < 4; k++)
        if (!param_text(M, t[k])) return M->oom ? mech_oom(M) : 0;
    mbl_pmech_src *p = M->src->pmech;
    mbl_pmech_spring *grown = pm_room(p->s, p->ns, &p->cs, sizeof *grown);
    if (!grown) return mech_oom(M);
    p->s = grown;
    mbl_pmech_spring *x = &p->s[p->ns++];
    memset(x, 0, sizeof *x);
    x->name = dup(M, mech_fmt(M, "force '%s'", name));
    x->line = line, x->col = col;
    int mk[2] = {mi, mj};
    for (int a = 0; a < 2; a++) {
        const body *B = &M->b[M->mk[mk[a]].body];
        x->b[a] = B->kind == KIND_GROUND ? -1 : B->pn - 1;
        for (int k = 0; k < 2; k++) x->s[a][k] = dup(M, M->mk[mk[a]].s[k]);
    }
    for (int k = 0; k < 4; k++) x->t[k] = dup(M, t[k]);
    return M->oom ? mech_oom(M) : 1;
}

int mech_pm_gravity(mech *M, const char *const g[3], int line, int col)
{
    mbl_pmech_src *p = M->src->pmech;
    if (!p || !p->nb || !param_text(M, g[0]) || !param_text(M, g[1])) return M->oom ? mech_oom(M) : 0;
    for (int k = 0; k < 2; k++) {
        const char *t = p->g[k] ? mech_fmt(M, "%s + (%s)", p->g[k], g[k]) : mech_fmt(M, "(%s)", g[k]);
        p->g[k] = dup(M, t); /* the earlier text stays in the blocks */
    }
    p->gline = line, p->gcol = col;
    return M->oom ? mech_oom(M) : 1;
}
