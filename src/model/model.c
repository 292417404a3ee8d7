/* Formulation: from the text of a `model: dae` file to the canonical DAE as expressions,
 * their exact Jacobians and compiled tapes.
 *
 *   R = d/dt(dT/dv) - d(T - V - lambda.Phi)/dq + d(D + mu.c)/dv - F      (n, EOM residual)
 *   Phidd = d2 Phi/dt2, nhd = dc/dt, Phid = dPhi/dt, c = A v + b, Phi      (constraints)
 *
 * so M vdot + Phi_q^T lambda + A^T mu = Q with M = d2T/dv2 and the Coriolis, centrifugal,
 * geometric-stiffness and every higher derivative term exact by construction. */
#include "model/model_internal.h"
#include "model/ffr.h"
#include "model/rtree.h"
#include "model/pmech_num.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <lapacke.h>

#include "model/source.h"

/* Models with at least this many residuals compile their residual tape on a second thread. */
#define COMPILE_THREAD_MIN 2000

/* ---- small helpers ------------------------------------------------------------------------ */

int mbl_sjac_push(mbl_sjac *J, int row, int col, mblx_id node)
{
    if (J->nz == J->cap) {
        int cap = J->cap ? 2 * J->cap : 64;
        int *r = mbl_realloc_array(J->row, (size_t)cap, sizeof *r);
        if (!r) return MBL_ENOMEM;
        J->row = r;
        int *c = mbl_realloc_array(J->col, (size_t)cap, sizeof *c);
        if (!c) return MBL_ENOMEM;
        J->col = c;
        mblx_id *nd = mbl_realloc_array(J->node, (size_t)cap, sizeof *nd);
        if (!nd) return MBL_ENOMEM;
        J->node = nd;
        J->cap = cap;
    }
    J->row[J->nz] = row;
    J->col[J->nz] = col;
    J->node[J->nz] = node;
    J->nz++;
    return 0;
}

void mbl_sjac_free(mbl_sjac *J)
{
    if (!J) return;
    mbl_free(J->row);
    mbl_free(J->col);
    mbl_free(J->node);
    memset(J, 0, sizeof *J);
}

static char *str_dup(const char *s)
{
    size_t n = strlen(s);
    char *p = mbl_malloc(n + 1);
    if (p) memcpy(p, s, n + 1);
    return p;
}

int mbl_model_blk0(const mbl_model *md, int blk)
{
    int n = md->n, m = md->m, k = md->k, nX = md->nX, nZ = md->nZ;
    switch (blk) {
    case MBL_BLK_A: return 0;
    case MBL_BLK_LAMBDA: return n;
    case MBL_BLK_MU: return n + m;
    case MBL_BLK_V: return n + m + k;
    case MBL_BLK_Q: return 2 * n + m + k;
    case MBL_BLK_XD: return 3 * n + m + k;
    case MBL_BLK_Z: return 3 * n + m + k + nX;
    case MBL_BLK_X: return 3 * n + m + k + nX + nZ;
    case MBL_BLK_R: return 3 * n + m + k + 2 * nX + nZ;
    default: return 3 * n + m + k + 2 * nX + nZ + md->nr;
    }
}

static void fill_syms_blocks(const mbl_model *md, double t, const double *const blk[MBL_NBLK], double *syms)
{
    for (int i = 0; i < md->np; i++) syms[md->sym_p[i]] = md->pval[i];
    syms[md->sym_t] = t;
    for (int b = 0; b < MBL_NBLK; b++) {
        int j0 = mbl_model_blk0(md, b), j1 = mbl_model_blk0(md, b + 1);
        for (int j = j0; j < j1; j++) syms[md->sym_of_unknown[j]] = blk[b] ? blk[b][j - j0] : 0.0;
    }
}

void mbl_model_fill_syms(const mbl_model *md, double t, const double *q, const double *v, const double *a,
                         const double *lam, const double *mu, const double *r, double *syms)
{
    const double *blk[MBL_NBLK] = {a, lam, mu, v, q, NULL, NULL, NULL, r};
    fill_syms_blocks(md, t, blk, syms);
}

void mbl_model_fill_syms_pt(const mbl_model *md, const mbl_point *pt, double *syms)
{
    int ext = pt->nX == md->nX && pt->nZ == md->nZ;
    const double *blk[MBL_NBLK] = {pt->vdot, pt->lambda, pt->mu, pt->v, pt->q, ext ? pt->Xdot : NULL,
                                   ext ? pt->Z : NULL, ext ? pt->X : NULL, pt->r};
    fill_syms_blocks(md, pt->t, blk, syms);
}

/* ---- loading context ------------------------------------------------------------------------ */

enum { SCOPE_PARAM, SCOPE_VALUE, SCOPE_FULL, SCOPE_POSITION };
enum { VAR_NEW, VAR_BUSY, VAR_DONE };

typedef struct loader {
    mbl_model *md;
    mbl_src *src;
    mbl_status *st;
    int scope;
    int param_limit;          /* SCOPE_PARAM: parameters < this may be used */
    int *var_state;           /* per variable */
    mblx_id *var_node;
    int var_stack[64];        /* for cycle messages */
    int var_depth;
    const mbl_src_item *item; /* the item being parsed (for messages) */
    const char *what;         /* what it is ("kinetic_energy", "forces.y", ...) */
    int oom;                  /* an allocation failed inside the resolver */
    double *pvals;            /* symbol values for evaluating parameter expressions */
    int allow_mult;           /* 1 while parsing outputs: lambda() and mu() may be used */
    int mult_refused;         /* set when lambda()/mu() (or a constraint's name) was refused */
    int cname_refs, cname_calls; /* constraint names resolved / consumed by lambda() or mu() */
    int let_vars;             /* 1: a variable stands for let(its expression) (formulate_let) */
    mblx_id *derlet;          /* let_vars: the lets made by der(P) of a velocity-free P */
    int nderlet, derlet_cap;
    unsigned char *pmrow;     /* m: 1 for the constraints of joints evaluated numerically (pmech_num.h) */
} loader;

static int parse_item(loader *L, const mbl_src_item *it, int scope, const char *what, mblx_id *out);
static int formulate_ffr(loader *L);
static int formulate_rtree(loader *L);
static int formulate_pmech(loader *L);
static int formulate_let(loader *L, const mblx_id *Fgen);
static int parse_item_text(loader *L, const mbl_src_item *it, int scope, const char *what, mblx_id *out);
static int read_draw(loader *L, const mbl_src *s);
static void variable_what(char *buf, size_t len, const char *name);

/* Name lookup: every list of named items gets a hash index the first time it is searched, so
 * resolving names costs O(1) however large the model (a linear scan made loading O(n^2)). A slot
 * holds the name's hash beside the item index, so a probe compares keys only when the hashes
 * agree (comparing every probed key cost a cache miss on the item and one on its text: with
 * strlen on each, 16 % of the N = 10^4 mechanism four-bar's run). */
typedef struct name_index {
    const mbl_src_list *list;
    uint64_t *slot; /* open addressing: hash << 32 | (item index + 1), 0 empty */
    size_t cap;
} name_index;

#define NAME_INDEXES 16
static _Thread_local name_index name_idx[NAME_INDEXES];

static uint64_t name_hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h ^ (h >> 29);
}

static void name_index_reset(void)
{
    for (int i = 0; i < NAME_INDEXES; i++) {
        mbl_free(name_idx[i].slot);
        memset(&name_idx[i], 0, sizeof name_idx[i]);
    }
}

static int find_name(const mbl_src_list *l, const char *name, size_t len)
{
    if (l->n < 8) {
        for (int i = 0; i < l->n; i++)
            if (!strncmp(l->items[i].key, name, len) && l->items[i].key[len] == '\0') return i;
        return -1;
    }
    name_index *ix = NULL;
    for (int i = 0; i < NAME_INDEXES && !ix; i++)
        if (name_idx[i].list == l) ix = &name_idx[i];
    if (!ix) {
        for (int i = 0; i < NAME_INDEXES && !ix; i++)
            if (!name_idx[i].list) ix = &name_idx[i];
        size_t cap = 16;
        while (cap < 2 * (size_t)l->n) cap *= 2;
        uint64_t *slot = ix ? mbl_calloc(cap, sizeof *slot) : NULL;
        if (!slot) { /* no room or no memory: scan */
            for (int i = 0; i < l->n; i++)
                if (!strncmp(l->items[i].key, name, len) && l->items[i].key[len] == '\0') return i;
            return -1;
        }
        ix->list = l;
        ix->slot = slot;
        ix->cap = cap;
        for (int i = l->n - 1; i >= 0; i--) { /* first occurrence wins */
            const char *k = l->items[i].key;
            uint64_t hk = name_hash(k, strlen(k)), tag = hk >> 32;
            size_t h = (size_t)hk & (cap - 1);
            while (slot[h] && !((slot[h] >> 32) == tag && !strcmp(l->items[(uint32_t)slot[h] - 1].key, k)))
                h = (h + 1) & (cap - 1);
            slot[h] = tag << 32 | (uint64_t)(i + 1);
        }
    }
    uint64_t hn = name_hash(name, len), tag = hn >> 32;
    for (size_t h = (size_t)hn & (ix->cap - 1); ix->slot[h]; h = (h + 1) & (ix->cap - 1)) {
        if ((ix->slot[h] >> 32) != tag) continue;
        int i = (int)(uint32_t)ix->slot[h] - 1;
        const char *k = l->items[i].key;
        if (!strncmp(k, name, len) && k[len] == '\0') return i;
    }
    return -1;
}

/* der(e) as the total time derivative with q' = v, v' = a, visiting only e's own symbols. */
static mblx_id total_der(mbl_model *md, mblx_id e)
{
    size_t nd = 0;
    const uint32_t *deps = mblx_node_deps(md->g, e, &nd);
    if (!deps && nd) return MBLX_NONE;
    mblx_id stack_syms[16], stack_d[16];
    mblx_id *syms = stack_syms, *d = stack_d;
    if (nd > 16) {
        syms = mbl_alloc_array(nd, sizeof *syms);
        d = mbl_alloc_array(nd, sizeof *d);
        if (!syms || !d) {
            if (syms != stack_syms) mbl_free(syms);
            if (d != stack_d) mbl_free(d);
            return MBLX_NONE;
        }
    }
    /* copy the dependence set first: it may move when the graph grows */
    uint32_t *dep = mbl_alloc_array(nd ? nd : 1, sizeof *dep);
    if (!dep) {
        if (syms != stack_syms) mbl_free(syms), mbl_free(d);
        return MBLX_NONE;
    }
    memcpy(dep, deps, nd * sizeof *dep);
    size_t ns = 0;
    int has_t = 0;
    int j_v = mbl_model_blk0(md, MBL_BLK_V), j_q = mbl_model_blk0(md, MBL_BLK_Q), j_x = mbl_model_blk0(md, MBL_BLK_X);
    for (size_t i = 0; i < nd; i++) {
        int s = (int)dep[i];
        if (s == md->sym_t) {
            has_t = 1;
            continue;
        }
        int u = s < md->nsym ? md->unknown_of_sym[s] : -1;
        if (u >= j_q && u < j_q + md->n) { /* q_j -> v_j */
            syms[ns] = md->q[u - j_q];
            d[ns++] = md->v[u - j_q];
        } else if (u >= j_v && u < j_v + md->n) { /* v_j -> a_j */
            syms[ns] = md->v[u - j_v];
            d[ns++] = md->a[u - j_v];
        } else if (u >= j_x && u < j_x + md->nX) { /* X_j -> Xdot_j */
            syms[ns] = md->X[u - j_x];
            d[ns++] = md->Xd[u - j_x];
        }
    }
    mbl_free(dep);
    mblx_id r = mblx_total_der(md->g, e, ns, syms, d, has_t ? md->t : MBLX_NONE);
    if (syms != stack_syms) {
        mbl_free(syms);
        mbl_free(d);
    }
    return r;
}

static int depends_on_block(const mbl_model *md, mblx_id e, int blk)
{
    int j0 = mbl_model_blk0(md, blk), j1 = mbl_model_blk0(md, blk + 1);
    size_t nd = 0;
    const uint32_t *deps = mblx_node_deps(md->g, e, &nd);
    for (size_t i = 0; i < nd; i++) {
        int u = (int)deps[i] < md->nsym ? md->unknown_of_sym[deps[i]] : -1;
        if (u >= j0 && u < j1) return 1;
    }
    return 0;
}

/* lambda(c) / mu(c): the multiplier of a holonomic / non-holonomic constraint c, named (constraints
 * given as a mapping) or numbered from 1 in the file's order; in outputs only. */
static int resolve_multiplier(loader *L, int is_lam, int nargs, const mblx_id *args, mblx_id *out, char *why,
                              size_t whylen)
{
    const mbl_model *md = L->md;
    const char *fn = is_lam ? "lambda" : "mu";
    int cnt = is_lam ? md->m : md->k;
    const mblx_id *mult = is_lam ? md->lam : md->mu;
    if (!L->allow_mult) {
        L->mult_refused = 1;
        snprintf(why, whylen,
                 "%s() (a constraint force) can be used in forces, ode, implicit_variables, outputs and the "
                 "variables these use only",
                 fn);
        return 1;
    }
    if (nargs != 1) {
        snprintf(why, whylen, "%s() takes 1 argument (a constraint name or number), %d given", fn, nargs);
        return 1;
    }
    double v;
    for (int j = 0; j < cnt; j++)
        if (args[0] == mult[j]) {
            L->cname_calls++;
            *out = mult[j];
            return 0;
        }
    if (mblx_is_const(L->md->g, args[0], &v) && v == floor(v) && v >= 1 && v <= cnt) {
        *out = mult[(int)v - 1];
        return 0;
    }
    snprintf(why, whylen, "%s() takes the name or the number (1 to %d) of a %sconstraint", fn, cnt,
             is_lam ? "" : "non-holonomic ");
    return 1;
}

static int resolve(void *ud, mblx_graph *g, const char *name, size_t len, int nargs, const mblx_id *args,
                   mblx_id *out, char *why, size_t whylen)
{
    loader *L = ud;
    mbl_model *md = L->md;
    mbl_src *src = L->src;
    if (nargs >= 0) {
        if (len == 3 && !strncmp(name, "der", 3)) {
            if (L->scope != SCOPE_FULL) {
                snprintf(why, whylen, "der() cannot be used in %s", L->what);
                return 1;
            }
            if (nargs != 1) {
                snprintf(why, whylen, "der() takes 1 argument, %d given", nargs);
                return 1;
            }
            if (depends_on_block(md, args[0], MBL_BLK_A)) {
                snprintf(why, whylen, "der() of an expression that already contains accelerations (third "
                                      "time derivatives are not part of the model)");
                return 1;
            }
            if (depends_on_block(md, args[0], MBL_BLK_XD)) {
                snprintf(why, whylen, "der() of an expression that contains der() of an ode state (second "
                                      "derivatives of ode states are not part of the model)");
                return 1;
            }
            if (depends_on_block(md, args[0], MBL_BLK_Z)) {
                snprintf(why, whylen, "der() of an implicit variable (its time derivative is not part of the "
                                      "model; make it an ode state)");
                return 1;
            }
            if (depends_on_block(md, args[0], MBL_BLK_LAMBDA) || depends_on_block(md, args[0], MBL_BLK_MU)) {
                snprintf(why, whylen, "der() of a multiplier (the time derivative of a constraint force is not "
                                      "part of the model)");
                return 1;
            }
            *out = total_der(md, args[0]);
            if (*out != MBLX_NONE && L->let_vars && mblx_node_op(g, *out) == MBLX_OP_LET &&
                !depends_on_block(md, args[0], MBL_BLK_V)) { /* formulate_let: d(dP/dt)/dv = dP/dq */
                if (L->nderlet == L->derlet_cap) {
                    int cap = L->derlet_cap ? 2 * L->derlet_cap : 16;
                    mblx_id *x = mbl_realloc_array(L->derlet, (size_t)cap, sizeof *x);
                    if (x) L->derlet = x, L->derlet_cap = cap;
                }
                if (L->nderlet < L->derlet_cap) L->derlet[L->nderlet++] = *out; /* else: just not known */
            }
            if (*out == MBLX_NONE) {
                L->oom = 1;
                snprintf(why, whylen, "out of memory");
                return 1;
            }
            return 0;
        }
        int is_lam = len == 6 && !strncmp(name, "lambda", 6), is_mu = len == 2 && !strncmp(name, "mu", 2);
        if (is_lam || is_mu) return resolve_multiplier(L, is_lam, nargs, args, out, why, whylen);
        return 1; /* unknown function */
    }
    int i;
    if (len == 1 && name[0] == 't') {
        if (L->scope == SCOPE_PARAM || L->scope == SCOPE_VALUE) {
            snprintf(why, whylen, "time 't' cannot be used in %s", L->what);
            return 1;
        }
        *out = md->t;
        return 0;
    }
    if ((i = find_name(&src->parameters, name, len)) >= 0) {
        if (L->scope == SCOPE_PARAM && i >= L->param_limit) {
            if (i == L->param_limit)
                snprintf(why, whylen, "parameter '%.*s' refers to itself", (int)len, name);
            else
                snprintf(why, whylen,
                         "parameter '%.*s' is defined after '%s' (a parameter may only use earlier ones; "
                         "a cycle otherwise)",
                         (int)len, name, src->parameters.items[L->param_limit].key);
            return 1;
        }
        if (L->scope == SCOPE_PARAM || L->scope == SCOPE_VALUE) md->pbaked[i] = 1; /* mbl_model_set_param */
        *out = md->p[i];
        return 0;
    }
    if (L->scope == SCOPE_PARAM || L->scope == SCOPE_VALUE) {
        if (find_name(&src->coordinates, name, len) >= 0 || find_name(&src->variables, name, len) >= 0 ||
            find_name(&src->inputs, name, len) >= 0 || find_name(&src->ode_states, name, len) >= 0 ||
            find_name(&src->implicit_variables, name, len) >= 0) {
            snprintf(why, whylen, "'%.*s' cannot be used in %s (only parameters can)", (int)len, name, L->what);
            return 1;
        }
        return 1;
    }
    if ((i = find_name(&src->coordinates, name, len)) >= 0) {
        *out = md->q[i];
        return 0;
    }
    if ((i = find_name(&src->inputs, name, len)) >= 0) {
        *out = md->r[i];
        return 0;
    }
    if ((i = find_name(&src->ode_states, name, len)) >= 0) {
        *out = md->X[i];
        return 0;
    }
    if ((i = find_name(&src->implicit_variables, name, len)) >= 0) {
        *out = md->Z[i];
        return 0;
    }
    if ((i = find_name(&src->variables, name, len)) >= 0) {
        if (L->var_state[i] == VAR_DONE) {
            *out = L->var_node[i];
            return 0;
        }
        if (L->var_state[i] == VAR_BUSY) {
            char chain[512];
            size_t off = 0;
            chain[0] = '\0';
            int start = 0;
            for (int d = 0; d < L->var_depth; d++)
                if (L->var_stack[d] == i) start = d;
            for (int d = start; d < L->var_depth && off < sizeof chain; d++)
                off += (size_t)snprintf(chain + off, sizeof chain - off, "%s -> ",
                                        src->variables.items[L->var_stack[d]].key);
            snprintf(why, whylen, "cycle among variables: %s%.*s", chain, (int)len, name);
            return 1;
        }
        if (L->var_depth >= (int)(sizeof L->var_stack / sizeof *L->var_stack)) {
            snprintf(why, whylen, "variables nested too deeply (more than %d levels)",
                     (int)(sizeof L->var_stack / sizeof *L->var_stack));
            return 1;
        }
        /* parse the variable now, in the full scope, then come back */
        L->var_state[i] = VAR_BUSY;
        L->var_stack[L->var_depth++] = i;
        loader saved = *L;
        mblx_id node = MBLX_NONE;
        char what[160];
        variable_what(what, sizeof what, src->variables.items[i].key);
        int rc = parse_item(L, &src->variables.items[i], SCOPE_FULL, what, &node);
        L->scope = saved.scope;
        L->item = saved.item;
        L->what = saved.what;
        L->param_limit = saved.param_limit;
        L->var_depth--;
        if (rc) {
            /* the error is already in L->st: make the outer parse fail with it unchanged */
            snprintf(why, whylen, "%s", L->st ? L->st->msg : "error in variable");
            L->var_state[i] = VAR_NEW;
            return 2;
        }
        if (L->let_vars) node = mblx_let(md->g, node); /* formulate_let: kept as one shared node */
        L->var_state[i] = VAR_DONE;
        L->var_node[i] = node;
        *out = node;
        return 0;
    }
    if ((src->named_constraints && (i = find_name(&src->constraints, name, len)) >= 0) ||
        (src->named_nonholonomic && (i = find_name(&src->nonholonomic, name, len)) >= 0)) {
        int nh = !(src->named_constraints && find_name(&src->constraints, name, len) >= 0);
        if (!L->allow_mult) {
            L->mult_refused = 1;
            snprintf(why, whylen,
                     "'%.*s' names a constraint: its force %s(%.*s) can be used in forces, ode, implicit_variables "
                     "and outputs only",
                     (int)len, name, nh ? "mu" : "lambda", (int)len, name);
            return 1;
        }
        L->cname_refs++;
        *out = nh ? md->mu[i] : md->lam[i];
        return 0;
    }
    (void)g;
    return 1;
}

/* Keep an expression the user wrote, with its position, for mbl_model_check_domain. */
/* The parts concatenated into buf (cut at len - 1 like snprintf): the names of the expressions of
 * a model of many items without printf (glibc's formatting of them was 5 % of the N = 1000
 * four-bar mechanism's run). */
static void join_parts(char *buf, size_t len, const char *const *part, int n)
{
    size_t o = 0;
    for (int i = 0; i < n && o + 1 < len; i++) {
        size_t k = strlen(part[i]);
        if (k > len - 1 - o) k = len - 1 - o;
        memcpy(buf + o, part[i], k);
        o += k;
    }
    if (len) buf[o] = '\0';
}

/* v in decimal (buf: 12 characters) */
static const char *int_text(char *buf, int v)
{
    char t[12];
    int k = 0;
    unsigned u = v < 0 ? 0u - (unsigned)v : (unsigned)v;
    do t[k++] = (char)('0' + u % 10); while ((u /= 10) && k < 11);
    int o = 0;
    if (v < 0) buf[o++] = '-';
    while (k) buf[o++] = t[--k];
    buf[o] = '\0';
    return buf;
}

/* "variable 'name'" */
static void variable_what(char *buf, size_t len, const char *name)
{
    const char *part[3] = {"variable '", name, "'"};
    join_parts(buf, len, part, 3);
}

static int record_srcx(loader *L, const mbl_src_item *it, const char *what, mblx_id e)
{
    mbl_model *md = L->md;
    for (int i = md->nsrcx - 1; i >= 0 && i >= md->nsrcx - 4; i--)
        if (md->srcx[i] == e) return 0; /* the same expression just recorded (a symmetric entry) */
    if (md->nsrcx == md->srcx_cap) {
        int cap = md->srcx_cap ? 2 * md->srcx_cap : 16;
        mblx_id *x = mbl_realloc_array(md->srcx, (size_t)cap, sizeof *x);
        if (x) md->srcx = x;
        char **w = x ? mbl_realloc_array(md->srcx_what, (size_t)cap, sizeof *w) : NULL;
        if (w) md->srcx_what = w;
        if (!x || !w) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
        md->srcx_cap = cap;
    }
    char buf[512], ln[12], cn[12];
    const char *part[7] = {L->src->file, ":", int_text(ln, it->line), ":", int_text(cn, it->col), ": ", what};
    join_parts(buf, sizeof buf, part, 7); /* "file:line:col: what" */
    md->srcx_what[md->nsrcx] = str_dup(buf);
    if (!md->srcx_what[md->nsrcx]) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
    md->srcx[md->nsrcx++] = e;
    return 0;
}

/* The user's text of an item for a message: at most 60 characters. */
static void quote_text(const char *text, char *buf, size_t len)
{
    size_t n = strlen(text);
    if (n < 61 || len < 64) {
        join_parts(buf, len, &text, 1);
    } else {
        memcpy(buf, text, 57);
        memcpy(buf + 57, "...", 4);
    }
}

/* An expression with an undefined constant part (0/0, 1/0 - 1/0, log(0) - log(0), sqrt(-1)*0:
 * the expression engine keeps such parts whole instead of folding them away, see
 * include/mblin/expr.h) is an error where it is written, not a silent 0 or an error later. */
static int check_defined(loader *L, const mbl_src_item *it, const char *what, mblx_id e)
{
    size_t nd = 0;
    if (mblx_is_const(L->md->g, e, NULL) || (mblx_node_deps(L->md->g, e, &nd), nd > 0)) return 0;
    double dummy = 0.0, v = 0.0;
    mbl_status st;
    mbl_status_clear(&st);
    int rc = mblx_eval(L->md->g, e, &dummy, &v, &st);
    if (rc == MBL_ENOMEM) return mbl_error(L->st, rc, "%s: out of memory", L->src->file);
    char reason[MBL_MSG_MAX], text[64];
    snprintf(reason, sizeof reason, "%s", rc ? st.msg : "not a finite number");
    char *in = strstr(reason, " in "); /* the engine's excerpt is not what the user wrote */
    if (in) *in = '\0';
    quote_text(it->text, text, sizeof text);
    return mbl_error(L->st, MBL_EDOMAIN, "%s:%d:%d: %s = %s is undefined (%.200s)", L->src->file, it->line, it->col, what,
                     text, reason);
}

/* ---- naming the user's expression in evaluation errors ---------------------------------- */

struct mbl_model_expr {
    char *what, *text; /* "potential_energy", "the force on 'x'", ...; the text (shortened) */
    int line, col;
    mblx_id e;
};

static int record_expr(loader *L, const mbl_src_item *it, const char *what, mblx_id e)
{
    mbl_model *md = L->md;
    if (mblx_is_const(md->g, e, NULL)) return 0;
    if (md->nexprs == md->capexprs) {
        int cap = md->capexprs ? 2 * md->capexprs : 16;
        struct mbl_model_expr *x = mbl_realloc_array(md->exprs, (size_t)cap, sizeof *x);
        if (!x) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
        md->exprs = x;
        md->capexprs = cap;
    }
    char text[64], gen[200];
    quote_text(it->text, text, sizeof text);
    if (!strncmp(what, "variable '_", 11)) { /* made by the mechanism reader: its text is not the user's */
        snprintf(gen, sizeof gen, "the expression of the element here (mblin's %s)", what);
        what = gen;
        text[0] = '\0';
    }
    struct mbl_model_expr *x = &md->exprs[md->nexprs];
    x->what = str_dup(what);
    x->text = str_dup(text);
    x->line = it->line;
    x->col = it->col;
    x->e = e;
    if (!x->what || !x->text) {
        mbl_free(x->what);
        mbl_free(x->text);
        return mbl_error(L->st, MBL_ENOMEM, "out of memory");
    }
    md->nexprs++;
    return 0;
}

static void free_exprs(mbl_model *md)
{
    for (int i = 0; i < md->nexprs; i++) {
        mbl_free(md->exprs[i].what);
        mbl_free(md->exprs[i].text);
    }
    mbl_free(md->exprs);
    md->exprs = NULL;
    md->nexprs = md->capexprs = 0;
}

/* Bound on the expressions evaluated while looking for the failing one (error path only). */
enum { EXPLAIN_MAX_EVALS = 20000, EXPLAIN_MAX_ORDER = 3 };

typedef struct explain {
    mblx_graph *g;
    const mbl_model *md;
    const double *syms;
    long evals;
    int order;             /* derivative order looked at */
    uint32_t path[EXPLAIN_MAX_ORDER];
    mbl_status fail;       /* the engine's message for the failing node */
} explain;

/* Depth-first over derivatives of e with respect to the unknowns and t it depends on (index
 * tuples in nondecreasing order: derivatives commute), evaluating those of order x->order.
 * Returns 1 when one fails (x->path holds the symbols), -1 on out of memory or the bound. */
static int explain_dfs(explain *x, mblx_id e, int depth)
{
    mbl_status st;
    if (depth == x->order) {
        if (++x->evals > EXPLAIN_MAX_EVALS) return -1;
        double v;
        int rc = mblx_eval(x->g, e, x->syms, &v, &st);
        if (rc == MBL_ENOMEM) return -1;
        if (rc) {
            x->fail = st;
            return 1;
        }
        return 0;
    }
    size_t nd = 0;
    const uint32_t *deps = mblx_node_deps(x->g, e, &nd);
    if (!deps || !nd) return 0;
    uint32_t *ds = mbl_alloc_array(nd, sizeof *ds); /* builders below may move the pool */
    if (!ds) return -1;
    memcpy(ds, deps, nd * sizeof *ds);
    int res = 0;
    for (size_t i = 0; i < nd && !res; i++) {
        uint32_t s = ds[i];
        if (depth > 0 && s < x->path[depth - 1]) continue;
        if ((int)s != x->md->sym_t && (s >= (uint32_t)x->md->nsym || x->md->unknown_of_sym[s] < 0)) continue; /* parameters */
        mblx_id d = mblx_diff(x->g, e, mblx_symbol_node(x->g, s));
        if (d == MBLX_NONE) {
            res = -1;
            break;
        }
        if (mblx_is_const(x->g, d, NULL)) continue;
        x->path[depth] = s;
        res = explain_dfs(x, d, depth + 1);
    }
    mbl_free(ds);
    return res;
}

static pthread_mutex_t graph_lock = PTHREAD_MUTEX_INITIALIZER; /* a loaded model's graph grows only under it */

void mbl_model_graph_lock(int lock)
{
    if (lock) pthread_mutex_lock(&graph_lock);
    else pthread_mutex_unlock(&graph_lock);
}

int mbl_model_eval_error(const mbl_model *md, const double *syms, const char *when, mbl_status *st)
{
    if (!st) return MBL_EDOMAIN;
    if (!when) when = "while evaluating the model";
    char old[MBL_MSG_MAX];
    snprintf(old, sizeof old, "%s", st->msg);
    if (st->code != MBL_EDOMAIN || !md || !syms) {
        mbl_error(st, st->code ? st->code : MBL_EDOMAIN, "%s: %s: %.900s", md ? md->file : "model", when, old);
        return st->code;
    }
    explain x;
    memset(&x, 0, sizeof x);
    x.g = md->g;
    x.md = md;
    x.syms = syms;
    int found = -1, res = 0;
    mbl_model_graph_lock(1);
    for (int order = 0; order <= EXPLAIN_MAX_ORDER && found < 0 && res >= 0; order++) {
        x.order = order;
        for (int i = 0; i < md->nexprs && found < 0 && res >= 0; i++) {
            res = explain_dfs(&x, md->exprs[i].e, 0);
            if (res > 0) found = i;
        }
    }
    char syms_txt[200] = "";
    if (found >= 0)
        for (int k = 0; k < x.order; k++) {
            size_t l = strlen(syms_txt);
            snprintf(syms_txt + l, sizeof syms_txt - l, "%s%s", k ? ", " : "",
                     mblx_symbol_name(md->g, mblx_symbol_node(md->g, x.path[k])));
        }
    mbl_model_graph_lock(0);
    if (found < 0) {
        mbl_error(st, MBL_EDOMAIN, "%s: %s: %.900s", md->file, when, old);
        return st->code;
    }
    char reason[MBL_MSG_MAX];
    snprintf(reason, sizeof reason, "%s", x.fail.msg);
    char *in = strstr(reason, " in "); /* the engine's excerpt may be a derivative: not the user's text */
    if (in) *in = '\0';
    static const char *nth[] = {"", "first", "second", "third"};
    const struct mbl_model_expr *e = &md->exprs[found];
    const char *eq = e->text[0] ? " = " : "";
    if (x.order == 0)
        mbl_error(st, MBL_EDOMAIN, "%s:%d:%d: %.300s in %s%s%s, %s", md->file, e->line, e->col, reason, e->what, eq,
                  e->text, when);
    else
        mbl_error(st, MBL_EDOMAIN, "%s:%d:%d: %.300s in the %s derivative with respect to %s of %s%s%s, %s", md->file,
                  e->line, e->col, reason, nth[x.order], syms_txt, e->what, eq, e->text, when);
    return st->code;
}

/* Parse one item's text; errors come as "file:line:col: what (in <what>)". */
static int parse_item(loader *L, const mbl_src_item *it, int scope, const char *what, mblx_id *out)
{
    int rc = parse_item_text(L, it, scope, what, out);
    if (!rc && !L->let_vars && (scope == SCOPE_FULL || scope == SCOPE_POSITION)) rc = record_srcx(L, it, what, *out);
    return rc;
}

static int parse_item_text(loader *L, const mbl_src_item *it, int scope, const char *what, mblx_id *out)
{
    L->scope = scope;
    L->item = it;
    L->what = what;
    mblx_parse_opts po;
    memset(&po, 0, sizeof po);
    po.resolve = resolve;
    po.ud = L;
    po.line = it->line;
    po.col = it->col;
    mbl_status st;
    mbl_status_clear(&st);
    int rc = mblx_parse(L->md->g, it->text, strlen(it->text), &po, out, &st);
    if (rc && (L->oom || mblx_graph_status(L->md->g, NULL) == MBL_ENOMEM))
        return mbl_error(L->st, MBL_ENOMEM, "%s: out of memory", L->src->file);
    if (rc) {
        /* a nested variable's error message already names its own position: keep it as is */
        const char *msg = st.msg;
        const char *nested = strstr(msg, L->src->file);
        if (nested && nested != msg) return mbl_error(L->st, rc, "%s", nested);
        if (nested == msg) return mbl_error(L->st, rc, "%s", msg);
        if (it->line == 0) {
            /* a state given by the caller (mbl_load_options.states), not in the file: the
             * position is in its own text */
            int l = 0, c = 0, k = 0;
            if (sscanf(msg, "%d:%d: %n", &l, &c, &k) >= 2 && k > 0)
                return mbl_error(L->st, rc, "%s: %s (in %s '%s', column %d)", L->src->file, msg + k, what, it->text, c);
            return mbl_error(L->st, rc, "%s: %s (in %s '%s')", L->src->file, msg, what, it->text);
        }
        return mbl_error(L->st, rc, "%s:%s (in %s)", L->src->file, msg, what);
    }
    rc = check_defined(L, it, what, *out);
    if (!rc && (scope == SCOPE_FULL || scope == SCOPE_POSITION)) rc = record_expr(L, it, what, *out);
    return rc;
}

/* Evaluate an expression of parameters only (the loader's symbol vector holds the parameter
 * values known so far; it is allocated once, not per value). */
static int eval_params(loader *L, mblx_id e, const mbl_src_item *it, const char *what, double *val)
{
    mbl_model *md = L->md;
    if (!L->pvals) {
        L->pvals = mbl_calloc((size_t)md->nsym + 1, sizeof *L->pvals);
        if (!L->pvals) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
    }
    for (int i = 0; i < md->np; i++) L->pvals[md->sym_p[i]] = md->pval[i];
    mbl_status st;
    int rc = mblx_eval(md->g, e, L->pvals, val, &st);
    if (rc) return mbl_error(L->st, rc, "%s:%d:%d: %s (in %s)", L->src->file, it->line, it->col, st.msg, what);
    if (!isfinite(*val)) /* the engine reports non-finite results; this is a safety net */
        return mbl_error(L->st, MBL_EDOMAIN, "%s:%d:%d: %s is not a finite number", L->src->file, it->line, it->col,
                         what);
    return 0;
}

/* A number of the file given as an expression of the parameters (initial values, velocities,
 * input values, the time of the point). */
static int load_value(loader *L, const mbl_src_item *it, const char *what, double *val, mblx_id *node)
{
    mblx_id e;
    int rc = parse_item(L, it, SCOPE_VALUE, what, &e);
    /* a number (nearly every initial value) needs no tape: mblx_eval compiles one per call */
    if (!rc && !(mblx_is_const(L->md->g, e, val) && isfinite(*val))) rc = eval_params(L, e, it, what, val);
    if (!rc && node) *node = e;
    return rc;
}

static int check_names(loader *L)
{
    static const char *reserved[] = {"t",    "pi",   "der",   "sin",  "cos",  "tan",   "asin", "acos",
                                     "atan", "atan2", "sinh", "cosh", "tanh", "exp",   "log",  "sqrt",
                                     "abs",  "sign",  "min",  "max",  "step", "lambda", "mu"};
    const mbl_src_list *lists[] = {&L->src->parameters,  &L->src->coordinates,  &L->src->inputs,
                                   &L->src->variables,   &L->src->constraints,  &L->src->nonholonomic,
                                   &L->src->ode_states, &L->src->implicit_variables};
    const char *kinds[] = {"parameter",  "coordinate", "input", "variable", "constraint", "non-holonomic constraint",
                           "ode state", "implicit variable"};
    int nlists = 8;
    for (int a = 0; a < nlists; a++) {
        if ((a == 4 && !L->src->named_constraints) || (a == 5 && !L->src->named_nonholonomic)) continue;
        for (int i = 0; i < lists[a]->n; i++) {
            const mbl_src_item *it = &lists[a]->items[i];
            const char *nm = it->key;
            int ok = (nm[0] == '_' || (nm[0] >= 'A' && nm[0] <= 'Z') || (nm[0] >= 'a' && nm[0] <= 'z'));
            for (const char *c = nm; *c && ok; c++)
                ok = *c == '_' || (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9');
            if (!ok)
                return mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: %s name '%s' is not a valid name (letters, digits, _)",
                                 L->src->file, it->key_line, it->key_col, kinds[a], nm);
            for (size_t r = 0; r < sizeof reserved / sizeof *reserved; r++)
                if (!strcmp(nm, reserved[r]))
                    return mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: '%s' is reserved and cannot name a %s",
                                     L->src->file, it->key_line, it->key_col, nm, kinds[a]);
            for (int b = 0; b < a; b++) {
                if ((b == 4 && !L->src->named_constraints) || (b == 5 && !L->src->named_nonholonomic)) continue;
                int j = find_name(lists[b], nm, strlen(nm));
                if (j >= 0)
                    return mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: duplicate name '%s': already a %s (line %d)",
                                     L->src->file, it->key_line, it->key_col, nm, kinds[b],
                                     lists[b]->items[j].key_line);
            }
        }
    }
    /* every ode state has one equation under 'ode', keyed by its name */
    for (int i = 0; i < L->src->ode.n; i++) {
        const mbl_src_item *it = &L->src->ode.items[i];
        if (find_name(&L->src->ode_states, it->key, strlen(it->key)) < 0)
            return mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: '%s' in ode is not an ode state (declare it under ode_states)",
                             L->src->file, it->key_line, it->key_col, it->key);
    }
    for (int i = 0; i < L->src->ode_states.n; i++) {
        const mbl_src_item *it = &L->src->ode_states.items[i];
        if (find_name(&L->src->ode, it->key, strlen(it->key)) < 0)
            return mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: ode state '%s' has no equation under 'ode'", L->src->file,
                             it->key_line, it->key_col, it->key);
    }
    /* keys that must name coordinates (velocities: the other keys define generalized speeds) */
    const mbl_src_list *bycoord[] = {&L->src->forces};
    const char *bykind[] = {"forces"};
    for (int a = 0; a < 1; a++)
        for (int i = 0; i < bycoord[a]->n; i++) {
            const mbl_src_item *it = &bycoord[a]->items[i];
            if (find_name(&L->src->coordinates, it->key, strlen(it->key)) < 0)
                return mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: '%s' in %s is not a coordinate", L->src->file,
                                 it->key_line, it->key_col, it->key, bykind[a]);
        }
    for (int i = 0; i < L->src->mass_matrix.n; i++) {
        const mbl_src_item *it = &L->src->mass_matrix.items[i];
        if (find_name(&L->src->coordinates, it->key, strlen(it->key)) < 0)
            return mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: mass_matrix row '%s' is not a coordinate", L->src->file,
                             it->key_line, it->key_col, it->key);
        if (find_name(&L->src->coordinates, it->key2, strlen(it->key2)) < 0)
            return mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: mass_matrix column '%s' is not a coordinate", L->src->file,
                             it->key_line, it->key_col, it->key2);
    }
    return 0;
}

/* Generalized speeds (source 000 Eq. 14): a `velocities` key that is not a coordinate defines
 * u = T(q) q' by an expression linear in der(.). It becomes a variable of that name (usable in every
 * expression, der(u) its total derivative) and a user velocity state (W = u preferred by the state
 * selection), so the augmented matrix carries T = du/dq' and [T q']_q in its W rows. */
static int take_speed(loader *L, mbl_src_item it);

static int take_speeds(loader *L)
{
    mbl_src *s = L->src;
    mbl_model *md = L->md;
    int keep = 0, nspd = 0;
    for (int i = 0; i < s->velocities.n; i++)
        if (find_name(&s->coordinates, s->velocities.items[i].key, strlen(s->velocities.items[i].key)) < 0) nspd++;
    if (!nspd) return 0;
    md->spd_what = mbl_calloc((size_t)nspd, sizeof *md->spd_what);
    if (!md->spd_what) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
    int rc = 0, i = 0, nvel = s->velocities.n;
    for (; i < nvel && !rc; i++) {
        mbl_src_item it = s->velocities.items[i];
        if (find_name(&s->coordinates, it.key, strlen(it.key)) >= 0) {
            s->velocities.items[keep++] = it;
            continue;
        }
        rc = take_speed(L, it);
        if (rc == 1) { /* moved to the variables, then failed: it is theirs now */
            rc = MBL_ENOMEM;
            i++;
            break;
        }
        if (rc) break;
    }
    /* on an error, the items not examined stay velocities (each item has exactly one owner) */
    for (; rc && i < nvel; i++) s->velocities.items[keep++] = s->velocities.items[i];
    s->velocities.n = keep;
    name_index_reset(); /* the lists changed: their name indexes are rebuilt when next searched */
    return rc;
}

/* one speed `it` of take_speeds: checked, then a variable and a velocity state; 0, a negative
 * code with it still owned by the velocities, or 1 (out of memory after the variables took it) */
static int take_speed(loader *L, mbl_src_item it)
{
    mbl_src *s = L->src;
    mbl_model *md = L->md;
    {
        if (!strstr(it.text, "der("))
            return mbl_error(L->st, MBL_EMODEL,
                             "%s:%d:%d: '%s' in velocities is not a coordinate (a generalized speed u = T(q) q' is "
                             "defined by an expression in der(.))",
                             s->file, it.key_line, it.key_col, it.key);
        if (find_name(&s->variables, it.key, strlen(it.key)) >= 0)
            return mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: duplicate name '%s': the speed is also a variable", s->file,
                             it.key_line, it.key_col, it.key);
        mbl_src_list *lists[2] = {&s->variables, &s->velocity_states};
        for (int a = 0; a < 2; a++) {
            mbl_src_list *l = lists[a];
            if (l->n == l->cap) {
                int cap = l->cap ? 2 * l->cap : 8;
                mbl_src_item *x = mbl_realloc_array(l->items, (size_t)cap, sizeof *x);
                if (!x) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
                l->items = x;
                l->cap = cap;
            }
        }
        mbl_src_item st_it;
        memset(&st_it, 0, sizeof st_it);
        st_it.text = str_dup(it.key);
        if (!st_it.text) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
        st_it.line = st_it.key_line = it.key_line;
        st_it.col = st_it.key_col = it.key_col;
        s->velocity_states.items[s->velocity_states.n++] = st_it;
        s->variables.items[s->variables.n++] = it; /* owns key and text from here */
        char buf[512];
        snprintf(buf, sizeof buf, "%s:%d:%d: speed '%s'", s->file, it.key_line, it.key_col, it.key);
        md->spd_what[md->nspd] = str_dup(buf);
        if (!md->spd_what[md->nspd++]) {
            mbl_error(L->st, MBL_ENOMEM, "out of memory");
            return 1;
        }
    }
    return 0;
}

static int create_symbols(loader *L)
{
    mbl_model *md = L->md;
    mbl_src *s = L->src;
    md->n = s->coordinates.n;
    md->m = s->constraints.n;
    md->k = s->nonholonomic.n;
    md->nr = s->inputs.n;
    md->ny = s->outputs.n;
    md->np = s->parameters.n;
    md->nX = s->ode_states.n;
    md->nZ = s->implicit_variables.n;
    md->nunk = 3 * md->n + md->m + md->k + 2 * md->nX + md->nZ + md->nr;
    size_t n = (size_t)md->n;
#define ALLOC(p, cnt) (((p) = mbl_calloc((cnt) ? (size_t)(cnt) : 1, sizeof *(p))) == NULL)
    if (ALLOC(md->p, md->np) || ALLOC(md->q, n) || ALLOC(md->v, n) || ALLOC(md->a, n) || ALLOC(md->lam, md->m) ||
        ALLOC(md->mu, md->k) || ALLOC(md->r, md->nr) || ALLOC(md->sym_of_unknown, md->nunk) ||
        ALLOC(md->sym_p, md->np) || ALLOC(md->pval, md->np) || ALLOC(md->qname, n) || ALLOC(md->rname, md->nr) ||
        ALLOC(md->yname, md->ny) || ALLOC(md->pname, md->np) || ALLOC(md->q0, n) || ALLOC(md->v0, n) ||
        ALLOC(md->r0, md->nr) || ALLOC(md->v_given, n) || ALLOC(md->cyclic, n) || ALLOC(md->X, md->nX) ||
        ALLOC(md->Xd, md->nX) || ALLOC(md->Z, md->nZ) || ALLOC(md->X0, md->nX) || ALLOC(md->xname, md->nX) ||
        ALLOC(md->zname, md->nZ) || ALLOC(md->eq_what, md->nX + md->nZ) || ALLOC(md->pexpr, md->np) ||
        ALLOC(md->q0x, n) || ALLOC(md->v0x, n) || ALLOC(md->r0x, md->nr))
        return mbl_error(L->st, MBL_ENOMEM, "out of memory");
#undef ALLOC
    mblx_graph *g = md->g;
    char buf[512];
    for (int i = 0; i < md->np; i++) {
        md->p[i] = mblx_symbol(g, s->parameters.items[i].key);
        md->pname[i] = str_dup(s->parameters.items[i].key);
        if (!md->pname[i]) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
    }
    md->t = mblx_symbol(g, "t");
    int jv = mbl_model_blk0(md, MBL_BLK_V), jq = mbl_model_blk0(md, MBL_BLK_Q), ja = mbl_model_blk0(md, MBL_BLK_A);
    for (int i = 0; i < md->n; i++) {
        const char *nm = s->coordinates.items[i].key;
        md->q[i] = mblx_symbol(g, nm);
        snprintf(buf, sizeof buf, "der(%s)", nm);
        md->v[i] = mblx_symbol(g, buf);
        snprintf(buf, sizeof buf, "der(der(%s))", nm);
        md->a[i] = mblx_symbol(g, buf);
        md->qname[i] = str_dup(nm);
        if (!md->qname[i]) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
    }
    for (int j = 0; j < md->m; j++) {
        snprintf(buf, sizeof buf, "lambda[%d]", j + 1);
        md->lam[j] = mblx_symbol(g, buf);
    }
    for (int j = 0; j < md->k; j++) {
        snprintf(buf, sizeof buf, "mu[%d]", j + 1);
        md->mu[j] = mblx_symbol(g, buf);
    }
    for (int j = 0; j < md->nX; j++) {
        const char *nm = s->ode_states.items[j].key;
        md->X[j] = mblx_symbol(g, nm);
        snprintf(buf, sizeof buf, "der(%s)", nm);
        md->Xd[j] = mblx_symbol(g, buf);
        md->xname[j] = str_dup(nm);
        if (!md->xname[j]) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
    }
    for (int j = 0; j < md->nZ; j++) {
        md->Z[j] = mblx_symbol(g, s->implicit_variables.items[j].key);
        md->zname[j] = str_dup(s->implicit_variables.items[j].key);
        if (!md->zname[j]) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
    }
    for (int j = 0; j < md->nr; j++) {
        md->r[j] = mblx_symbol(g, s->inputs.items[j].key);
        md->rname[j] = str_dup(s->inputs.items[j].key);
        if (!md->rname[j]) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
    }
    for (int j = 0; j < md->ny; j++) {
        md->yname[j] = str_dup(s->outputs.items[j].key);
        if (!md->yname[j]) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
    }
    /* constraint names, for `mblin check` (redundant constraints, parts that do not assemble) */
    md->cname = mbl_calloc((size_t)(md->m ? md->m : 1), sizeof *md->cname);
    if (!md->cname) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
    for (int j = 0; j < md->m; j++) {
        char cbuf[160];
        snprintf(cbuf, sizeof cbuf, "constraint %d", j + 1);
        if (s->named_constraints) snprintf(cbuf, sizeof cbuf, "constraint %.140s", s->constraints.items[j].key);
        md->cname[j] = str_dup(s->constraints.items[j].key && !s->named_constraints ? s->constraints.items[j].key : cbuf);
        if (!md->cname[j]) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
    }
    int rc = mblx_graph_status(g, L->st);
    if (rc) return rc;
    md->nsym = (int)mblx_symbol_count(g);
    md->unknown_of_sym = mbl_alloc_array((size_t)md->nsym + 1, sizeof *md->unknown_of_sym);
    if (!md->unknown_of_sym) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
    md->sym_t = (int)mblx_symbol_index(g, md->t);
    for (int i = 0; i < md->np; i++) md->sym_p[i] = (int)mblx_symbol_index(g, md->p[i]);
    for (int i = 0; i < md->n; i++) {
        md->sym_of_unknown[ja + i] = (int)mblx_symbol_index(g, md->a[i]);
        md->sym_of_unknown[jv + i] = (int)mblx_symbol_index(g, md->v[i]);
        md->sym_of_unknown[jq + i] = (int)mblx_symbol_index(g, md->q[i]);
    }
    for (int j = 0; j < md->m; j++)
        md->sym_of_unknown[mbl_model_blk0(md, MBL_BLK_LAMBDA) + j] = (int)mblx_symbol_index(g, md->lam[j]);
    for (int j = 0; j < md->k; j++)
        md->sym_of_unknown[mbl_model_blk0(md, MBL_BLK_MU) + j] = (int)mblx_symbol_index(g, md->mu[j]);
    for (int j = 0; j < md->nr; j++)
        md->sym_of_unknown[mbl_model_blk0(md, MBL_BLK_R) + j] = (int)mblx_symbol_index(g, md->r[j]);
    for (int j = 0; j < md->nX; j++) {
        md->sym_of_unknown[mbl_model_blk0(md, MBL_BLK_X) + j] = (int)mblx_symbol_index(g, md->X[j]);
        md->sym_of_unknown[mbl_model_blk0(md, MBL_BLK_XD) + j] = (int)mblx_symbol_index(g, md->Xd[j]);
    }
    for (int j = 0; j < md->nZ; j++)
        md->sym_of_unknown[mbl_model_blk0(md, MBL_BLK_Z) + j] = (int)mblx_symbol_index(g, md->Z[j]);
    for (int s = 0; s < md->nsym; s++) md->unknown_of_sym[s] = -1;
    for (int j = 0; j < md->nunk; j++) md->unknown_of_sym[md->sym_of_unknown[j]] = j;
    return 0;
}

static int load_values(loader *L, const mbl_setting *sets, int nsets)
{
    mbl_model *md = L->md;
    mbl_src *s = L->src;
    for (int k = 0; k < nsets; k++) {
        if (find_name(&s->parameters, sets[k].name, strlen(sets[k].name)) < 0)
            return mbl_error(L->st, MBL_EARG, "--set %s: the model %s has no parameter '%s'", sets[k].name, s->file,
                             sets[k].name);
        if (!isfinite(sets[k].value))
            return mbl_error(L->st, MBL_EARG, "--set %s: the value is not a finite number", sets[k].name);
    }
    for (int i = 0; i < md->np; i++) {
        const mbl_src_item *it = &s->parameters.items[i];
        int over = -1;
        for (int k = 0; k < nsets; k++)
            if (!strcmp(sets[k].name, it->key)) over = k;
        L->param_limit = i;
        mblx_id e;
        char what[160];
        snprintf(what, sizeof what, "parameter '%s'", it->key);
        int rc = parse_item(L, it, SCOPE_PARAM, what, &e); /* parsed even when overridden: errors still count */
        if (rc) return rc;
        md->pexpr[i] = over >= 0 ? MBLX_NONE : e;
        if (over >= 0) {
            md->pval[i] = sets[over].value;
        } else {
            rc = eval_params(L, e, it, what, &md->pval[i]);
            if (rc) return rc;
        }
    }
    char what[160];
    int rc = 0;
    for (int i = 0; i < md->n && !rc; i++) {
        snprintf(what, sizeof what, "the initial value of coordinate '%s'", s->coordinates.items[i].key);
        rc = load_value(L, &s->coordinates.items[i], what, &md->q0[i], &md->q0x[i]);
    }
    for (int i = 0; i < s->velocities.n && !rc; i++) {
        const mbl_src_item *it = &s->velocities.items[i];
        int j = find_name(&s->coordinates, it->key, strlen(it->key));
        snprintf(what, sizeof what, "the velocity of '%s'", it->key);
        rc = load_value(L, it, what, &md->v0[j], &md->v0x[j]);
        md->v_given[j] = 1;
    }
    for (int i = 0; i < md->nX && !rc; i++) {
        snprintf(what, sizeof what, "the value of ode state '%s'", s->ode_states.items[i].key);
        rc = load_value(L, &s->ode_states.items[i], what, &md->X0[i], NULL);
    }
    for (int i = 0; i < md->nr && !rc; i++) {
        snprintf(what, sizeof what, "the value of input '%s'", s->inputs.items[i].key);
        rc = load_value(L, &s->inputs.items[i], what, &md->r0[i], &md->r0x[i]);
    }
    if (rc) return rc;
    md->at = MBL_AT_EQUILIBRIUM;
    if (s->at.text) {
        if (!strcmp(s->at.text, "equilibrium")) md->at = MBL_AT_EQUILIBRIUM;
        else if (!strcmp(s->at.text, "given")) md->at = MBL_AT_GIVEN;
        else if (!strcmp(s->at.text, "steady")) md->at = MBL_AT_STEADY;
        else
            return mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: linearize.at must be equilibrium, given or steady, not '%s'",
                             s->file, s->at.line, s->at.col, s->at.text);
    }
    if (s->time.text) {
        rc = load_value(L, &s->time, "linearize.time", &md->time, NULL);
        if (rc) return rc;
    }
    return 0;
}

/* Name the first unknown block that e depends on among the forbidden ones, or -1. */
static int forbidden_block(const mbl_model *md, mblx_id e, unsigned mask)
{
    for (int b = 0; b < MBL_NBLK; b++)
        if ((mask >> b) & 1u && depends_on_block(md, e, b)) return b;
    return -1;
}

static const char *block_word(int b)
{
    switch (b) {
    case MBL_BLK_A: return "accelerations (der(der(.)))";
    case MBL_BLK_V: return "velocities (der(.))";
    case MBL_BLK_Q: return "coordinates";
    case MBL_BLK_R: return "inputs";
    case MBL_BLK_XD: return "der() of ode states";
    case MBL_BLK_Z: return "implicit variables";
    case MBL_BLK_X: return "ode states";
    default: return "multipliers";
    }
}

static int check_deps(loader *L, mblx_id e, unsigned mask, const mbl_src_item *it, const char *what,
                      const char *hint)
{
    int b = forbidden_block(L->md, e, mask);
    if (b < 0) return 0;
    return mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: %s must not depend on %s%s", L->src->file, it->line, it->col, what,
                     block_word(b), hint ? hint : "");
}

/* An equation item: "expr" (= 0) or "lhs = rhs" (lhs - rhs), with the right-hand side's column
 * kept for messages when the text sits on one line. */
static int parse_equation(loader *L, const mbl_src_item *it, const char *what, mblx_id *out)
{
    const char *eq = strchr(it->text, '=');
    if (!eq) return parse_item(L, it, SCOPE_FULL, what, out);
    if (strchr(eq + 1, '='))
        return mbl_error(L->st, MBL_EPARSE, "%s:%d:%d: %s has more than one '='", L->src->file, it->line, it->col,
                         what);
    mbl_src_item lhs = *it, rhs = *it;
    size_t nl = (size_t)(eq - it->text);
    char *tl = mbl_malloc(nl + 1);
    if (!tl) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
    memcpy(tl, it->text, nl);
    tl[nl] = '\0';
    lhs.text = tl;
    rhs.text = (char *)eq + 1;
    int nlines = 0;
    for (const char *c = it->text; c < eq; c++) nlines += *c == '\n';
    if (!nlines) rhs.col = it->col + (int)nl + 1;
    mblx_id el, er;
    int rc = parse_item(L, &lhs, SCOPE_FULL, what, &el);
    if (!rc) rc = parse_item(L, &rhs, SCOPE_FULL, what, &er);
    mbl_free(tl);
    if (!rc) *out = mblx_sub(L->md->g, el, er);
    return rc;
}

#define BIT(b) (1u << (b))
/* multipliers, der() of ode states, implicit variables: not in energies, constraints or states */
#define BIT_EXT (BIT(MBL_BLK_LAMBDA) | BIT(MBL_BLK_MU) | BIT(MBL_BLK_XD) | BIT(MBL_BLK_Z))

/* One equation of the user ODEs (is_ode) or of an implicit variable: "expr" means der(x) = expr
 * (x = expr for an implicit variable, which expr may contain: x - v(..., x) = 0 of source 000
 * Eq. 10b), "lhs = rhs" an implicit equation; multipliers lambda(c) may be used. */
static int formulate_equation(loader *L, int is_ode, int j, mblx_id *out)
{
    mbl_model *md = L->md;
    mbl_src *s = L->src;
    const mbl_src_list *l = is_ode ? &s->ode : &s->implicit_variables;
    const char *name = is_ode ? md->xname[j] : md->zname[j];
    int e = is_ode ? find_name(l, name, strlen(name)) : j;
    const mbl_src_item *it = &l->items[e];
    char what[200];
    snprintf(what, sizeof what, "%s '%s'", is_ode ? "ode" : "implicit variable", name);
    char buf[512];
    snprintf(buf, sizeof buf, "%s:%d:%d: %s", s->file, it->line, it->col, what);
    md->eq_what[is_ode ? j : md->nX + j] = str_dup(buf);
    if (!md->eq_what[is_ode ? j : md->nX + j]) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
    L->allow_mult = 1;
    L->cname_refs = L->cname_calls = 0;
    int implicit = strchr(it->text, '=') != NULL, rc;
    mblx_id ex;
    if (implicit) rc = parse_equation(L, it, what, &ex);
    else rc = parse_item(L, it, SCOPE_FULL, what, &ex);
    L->allow_mult = 0;
    if (!rc && L->cname_refs != L->cname_calls)
        rc = mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: %s uses a constraint name outside lambda(name) or mu(name)",
                       s->file, it->line, it->col, what);
    if (rc) return rc;
    if (!implicit) ex = mblx_sub(md->g, is_ode ? md->Xd[j] : md->Z[j], ex);
    int blk = is_ode ? MBL_BLK_XD : MBL_BLK_Z;
    if (!depends_on_block(md, ex, blk))
        return mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: %s: the equation contains no %s, so it cannot determine %s%s%s",
                         s->file, it->line, it->col, what, is_ode ? "der() of an ode state" : "implicit variable",
                         is_ode ? "der(" : "", name, is_ode ? ")" : "");
    *out = ex;
    return 0;
}

/* The constraint row groups of a residual vector F: Phi (m) with its first and second time
 * derivatives, and the non-holonomic rows nh (k) with their first. */
static void constraint_rows(mbl_model *md, int m, const mblx_id *Phi, int k, const mblx_id *nh, mblx_id *F)
{
    for (int j = 0; j < m; j++) {
        mblx_id pd = total_der(md, Phi[j]);
        F[md->row0[MBL_ROW_PHID] + j] = pd;
        F[md->row0[MBL_ROW_PHIDD] + j] = total_der(md, pd);
        F[md->row0[MBL_ROW_PHI] + j] = Phi[j];
    }
    for (int j = 0; j < k; j++) {
        F[md->row0[MBL_ROW_NH] + j] = nh[j];
        F[md->row0[MBL_ROW_NHD] + j] = total_der(md, nh[j]);
    }
}

static int formulate(loader *L)
{
    mbl_model *md = L->md;
    mbl_src *s = L->src;
    mblx_graph *g = md->g;
    int n = md->n, m = md->m, k = md->k, rc;
    mblx_id zero = mblx_const(g, 0.0);

    /* kinetic energy, or the mass matrix turned into one */
    mblx_id T = zero;
    if (s->has_mass_matrix) {
        size_t nt = (size_t)s->mass_matrix.n;
        mblx_id *terms = mbl_alloc_array(nt ? nt : 1, sizeof *terms);
        if (!terms) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
        size_t nterm = 0;
        for (int e = 0; e < s->mass_matrix.n; e++) {
            const mbl_src_item *it = &s->mass_matrix.items[e];
            int i = find_name(&s->coordinates, it->key, strlen(it->key));
            int j = find_name(&s->coordinates, it->key2, strlen(it->key2));
            char what[200];
            snprintf(what, sizeof what, "mass_matrix entry (%s, %s)", it->key, it->key2);
            mblx_id mij;
            rc = parse_item(L, it, SCOPE_POSITION, what, &mij);
            if (!rc)
                rc = check_deps(L, mij, BIT(MBL_BLK_A) | BIT(MBL_BLK_V) | BIT(MBL_BLK_R) | BIT_EXT, it, what, NULL);
            if (rc) {
                mbl_free(terms);
                return rc;
            }
            double factor = 0.5;
            if (i != j) {
                /* symmetric: an entry given once counts for both triangles; both given must agree */
                int other = -1;
                for (int f = 0; f < s->mass_matrix.n; f++)
                    if (!strcmp(s->mass_matrix.items[f].key, it->key2) && !strcmp(s->mass_matrix.items[f].key2, it->key))
                        other = f;
                if (other < 0) factor = 1.0;
                else if (other < e) {
                    /* compare with the one already parsed */
                    mblx_id mji;
                    rc = parse_item(L, &s->mass_matrix.items[other], SCOPE_POSITION, what, &mji);
                    if (rc) {
                        mbl_free(terms);
                        return rc;
                    }
                    if (mji != mij) {
                        mbl_free(terms);
                        return mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: mass_matrix is not symmetric: (%s, %s) differs from (%s, %s)",
                                         s->file, it->key_line, it->key_col, it->key, it->key2, it->key2, it->key);
                    }
                }
            }
            mblx_id fs[3] = {mij, md->v[i], md->v[j]};
            terms[nterm++] = mblx_scale(g, factor, mblx_product(g, 3, fs));
        }
        T = mblx_sum(g, nterm, terms);
        mbl_free(terms);
    } else {
        rc = parse_item(L, &s->kinetic_energy, SCOPE_FULL, "kinetic_energy", &T);
        if (!rc)
            rc = check_deps(L, T, BIT(MBL_BLK_A) | BIT(MBL_BLK_R) | BIT_EXT, &s->kinetic_energy, "kinetic_energy", NULL);
        if (rc) return rc;
    }

    mblx_id V = zero, D = zero;
    if (s->potential_energy.text) {
        rc = parse_item(L, &s->potential_energy, SCOPE_FULL, "potential_energy", &V);
        if (!rc)
            rc = check_deps(L, V, BIT(MBL_BLK_A) | BIT(MBL_BLK_V) | BIT_EXT, &s->potential_energy, "potential_energy",
                            " (velocity-dependent forces go under 'forces' or 'dissipation')");
        if (rc) return rc;
    }
    if (s->dissipation.text) {
        rc = parse_item(L, &s->dissipation, SCOPE_FULL, "dissipation", &D);
        if (!rc) rc = check_deps(L, D, BIT(MBL_BLK_A) | BIT_EXT, &s->dissipation, "dissipation", NULL);
        if (rc) return rc;
    }

    /* constraints */
    mblx_id *Phi = mbl_calloc((size_t)(m ? m : 1), sizeof *Phi);
    mblx_id *nh = mbl_calloc((size_t)(k ? k : 1), sizeof *nh);
    mblx_id *Fgen = mbl_calloc((size_t)(n ? n : 1), sizeof *Fgen);
    mblx_id *g1 = mbl_calloc((size_t)n, sizeof *g1), *g2 = mbl_calloc((size_t)n, sizeof *g2);
    mblx_id *pv = mbl_calloc((size_t)n, sizeof *pv);
    int nX = md->nX, nZ = md->nZ;
    md->nF = n + nX + nZ + 3 * m + 2 * k;
    md->F = mbl_calloc((size_t)md->nF, sizeof *md->F);
    if (!Phi || !nh || !Fgen || !g1 || !g2 || !pv || !md->F) {
        rc = mbl_error(L->st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    for (int j = 0; j < m; j++) {
        const mbl_src_item *it = &s->constraints.items[j];
        char what[64];
        if (L->pmrow && L->pmrow[j]) { /* a revolute joint evaluated numerically (formulate_pmech) */
            Phi[j] = zero;
            continue;
        }
        snprintf(what, sizeof what, "constraint %d", j + 1);
        rc = parse_equation(L, it, what, &Phi[j]);
        if (rc) goto done;
        rc = check_deps(L, Phi[j], BIT(MBL_BLK_A) | BIT(MBL_BLK_V) | BIT(MBL_BLK_R) | BIT_EXT | BIT(MBL_BLK_X), it, what,
                        " (a constraint on velocities goes under 'nonholonomic')");
        if (rc) goto done;
        if (!depends_on_block(md, Phi[j], MBL_BLK_Q)) {
            rc = mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: %s does not depend on any coordinate", s->file, it->line,
                           it->col, what);
            goto done;
        }
    }
    for (int j = 0; j < k; j++) {
        const mbl_src_item *it = &s->nonholonomic.items[j];
        char what[64];
        snprintf(what, sizeof what, "non-holonomic constraint %d", j + 1);
        rc = parse_equation(L, it, what, &nh[j]);
        if (rc) goto done;
        rc = check_deps(L, nh[j], BIT(MBL_BLK_A) | BIT(MBL_BLK_R) | BIT_EXT | BIT(MBL_BLK_X), it, what, NULL);
        if (rc) goto done;
        if (!depends_on_block(md, nh[j], MBL_BLK_V)) {
            rc = mbl_error(L->st, MBL_EMODEL,
                           "%s:%d:%d: %s does not contain any der(.) (a position constraint goes under 'constraints')",
                           s->file, it->line, it->col, what);
            goto done;
        }
        /* linear in the velocities: every dc/dv must be free of velocities */
        for (int i = 0; i < n; i++) {
            if (!mblx_depends(g, nh[j], md->v[i])) continue;
            mblx_id d = mblx_diff(g, nh[j], md->v[i]);
            if (depends_on_block(md, d, MBL_BLK_V)) {
                rc = mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: %s is not linear in the velocities (in der(%s))", s->file,
                               it->line, it->col, what, md->qname[i]);
                goto done;
            }
        }
    }
    if (m + k > n) {
        rc = mbl_error(L->st, MBL_EMODEL, "%s: %d constraints (%d holonomic, %d non-holonomic) for %d coordinates: "
                       "more constraints than coordinates", s->file, m + k, m, k, n);
        goto done;
    }

    /* generalized forces by coordinate */
    for (int i = 0; i < n; i++) Fgen[i] = zero;
    for (int e = 0; e < s->forces.n; e++) {
        const mbl_src_item *it = &s->forces.items[e];
        int i = find_name(&s->coordinates, it->key, strlen(it->key));
        char what[160];
        snprintf(what, sizeof what, "the force on '%s'", it->key);
        /* forces may use q'', multipliers lambda(c), ode states and implicit variables (source 000 Eq. 10c) */
        L->allow_mult = 1;
        L->cname_refs = L->cname_calls = 0;
        rc = parse_item(L, it, SCOPE_FULL, what, &Fgen[i]);
        L->allow_mult = 0;
        if (!rc && L->cname_refs != L->cname_calls)
            rc = mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: %s uses a constraint name outside lambda(name) or mu(name)",
                           s->file, it->line, it->col, what);
        if (rc) goto done;
        if (forbidden_block(md, Fgen[i], BIT_EXT) >= 0) md->ext = 1;
    }

    /* quadratic kinetic energy: M = d2T/dv2 free of velocities */
    rc = mblx_gradient(g, T, (size_t)n, md->v, pv);
    if (rc) {
        rc = mblx_graph_status(g, L->st);
        goto done;
    }
    {
        mblx_sparse H;
        rc = mblx_jacobian(g, (size_t)n, pv, (size_t)n, md->v, &H);
        if (rc) {
            rc = mblx_graph_status(g, L->st) ? mblx_graph_status(g, L->st) : mbl_error(L->st, rc, "out of memory");
            goto done;
        }
        for (int j = 0; j < n && !rc; j++)
            for (int p = H.colptr[j]; p < H.colptr[j + 1]; p++)
                if (depends_on_block(md, H.node[p], MBL_BLK_V)) {
                    const mbl_src_item *it = s->has_mass_matrix ? &s->mass_matrix.items[0] : &s->kinetic_energy;
                    rc = mbl_error(L->st, MBL_EMODEL,
                                   "%s:%d:%d: the kinetic energy is not quadratic in the velocities (d2T/dv2 "
                                   "entry (%s, %s) depends on velocities)",
                                   s->file, it->line, it->col, md->qname[H.rowidx[p]], md->qname[j]);
                    break;
                }
        mblx_sparse_free(&H);
        if (rc) goto done;
    }

    /* R = d/dt(dT/dv) - d(T - V - lambda.Phi)/dq + d(D + mu.c)/dv - F */
    {
        size_t nterm = (size_t)(m > k ? m : k) + 1;
        mblx_id *terms = mbl_alloc_array(nterm, sizeof *terms);
        if (!terms) {
            rc = mbl_error(L->st, MBL_ENOMEM, "out of memory");
            goto done;
        }
        for (int j = 0; j < m; j++) terms[j] = mblx_mul(g, md->lam[j], Phi[j]);
        mblx_id lamPhi = mblx_sum(g, (size_t)m, terms);
        for (int j = 0; j < k; j++) terms[j] = mblx_mul(g, md->mu[j], nh[j]);
        mblx_id muC = mblx_sum(g, (size_t)k, terms);
        mbl_free(terms);
        mblx_id L1 = mblx_sub(g, mblx_sub(g, T, V), lamPhi);
        mblx_id L2 = mblx_add(g, D, muC);
        if (mblx_gradient(g, L1, (size_t)n, md->q, g1) || mblx_gradient(g, L2, (size_t)n, md->v, g2)) {
            rc = mblx_graph_status(g, L->st);
            goto done;
        }
    }
    md->row0[MBL_ROW_EOM] = 0;
    md->row0[MBL_ROW_ODE] = n;
    md->row0[MBL_ROW_VAR] = n + nX;
    md->row0[MBL_ROW_PHIDD] = n + nX + nZ;
    md->row0[MBL_ROW_NHD] = md->row0[MBL_ROW_PHIDD] + m;
    md->row0[MBL_ROW_PHID] = md->row0[MBL_ROW_NHD] + k;
    md->row0[MBL_ROW_NH] = md->row0[MBL_ROW_PHID] + m;
    md->row0[MBL_ROW_PHI] = md->row0[MBL_ROW_NH] + k;
    md->row0[MBL_NROWG] = md->nF;
    if (nX || nZ) md->ext = 1;
    for (int j = 0; j < nX; j++) {
        rc = formulate_equation(L, 1, j, &md->F[md->row0[MBL_ROW_ODE] + j]);
        if (rc) goto done;
    }
    for (int j = 0; j < nZ; j++) {
        rc = formulate_equation(L, 0, j, &md->F[md->row0[MBL_ROW_VAR] + j]);
        if (rc) goto done;
    }
    for (int i = 0; i < n; i++) {
        mblx_id dp = total_der(md, pv[i]);
        mblx_id t4[4] = {dp, mblx_neg(g, g1[i]), g2[i], mblx_neg(g, Fgen[i])};
        md->F[i] = mblx_sum(g, 4, t4);
    }
    rc = formulate_ffr(L);
    if (!rc) rc = formulate_rtree(L);
    if (!rc) rc = formulate_pmech(L);
    if (rc) goto done;
    constraint_rows(md, m, Phi, k, nh, md->F);
    rc = mblx_graph_status(g, L->st);
    if (!rc) rc = formulate_let(L, Fgen);
    if (rc) goto done;

    /* outputs */
    md->y = mbl_calloc((size_t)(md->ny ? md->ny : 1), sizeof *md->y);
    if (!md->y) {
        rc = mbl_error(L->st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    for (int j = 0; j < md->ny; j++) {
        const mbl_src_item *it = &s->outputs.items[j];
        char what[160];
        snprintf(what, sizeof what, "output '%s'", it->key);
        L->allow_mult = 1;
        L->cname_refs = L->cname_calls = 0;
        rc = parse_item(L, it, SCOPE_FULL, what, &md->y[j]);
        L->allow_mult = 0;
        if (!rc && L->cname_refs != L->cname_calls)
            rc = mbl_error(L->st, MBL_EMODEL,
                           "%s:%d:%d: %s uses a constraint name outside lambda(name) or mu(name)", s->file, it->line,
                           it->col, what);
        if (rc) goto done;
    }

    /* a mechanism's drawing */
    rc = read_draw(L, s);
    if (rc) goto done;
    /* relative-coordinate mechanisms: the bodies' kinematics, for the velocity transformation */
    if (s->kinematics.n) {
        md->kin = mbl_calloc((size_t)s->kinematics.n, sizeof *md->kin);
        md->kin_body = mbl_calloc((size_t)s->kinematics.n, sizeof *md->kin_body);
        if (!md->kin || !md->kin_body) {
            rc = mbl_error(L->st, MBL_ENOMEM, "out of memory");
            goto done;
        }
        md->nkin = s->kinematics.n;
        md->kin_planar = s->kin_planar;
        for (int j = 0; j < md->nkin; j++) {
            const mbl_src_item *it = &s->kinematics.items[j];
            char what[160];
            snprintf(what, sizeof what, "kinematics of body '%s'", it->key);
            if ((rc = parse_item(L, it, SCOPE_FULL, what, &md->kin[j]))) goto done;
            if (!(md->kin_body[j] = str_dup(it->key))) {
                rc = mbl_error(L->st, MBL_ENOMEM, "out of memory");
                goto done;
            }
        }
    }

    /* user states */
    md->nus = s->states.n;
    md->nuvs = s->velocity_states.n;
    md->us = mbl_calloc((size_t)(md->nus ? md->nus : 1), sizeof *md->us);
    md->uvs = mbl_calloc((size_t)(md->nuvs ? md->nuvs : 1), sizeof *md->uvs);
    md->us_text = mbl_calloc((size_t)(md->nus ? md->nus : 1), sizeof *md->us_text);
    md->uvs_text = mbl_calloc((size_t)(md->nuvs ? md->nuvs : 1), sizeof *md->uvs_text);
    if (!md->us || !md->uvs || !md->us_text || !md->uvs_text) {
        rc = mbl_error(L->st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    /* an ode state named among the states is always a state of the linear model (x = [S; W; X]) */
    md->nus = 0;
    for (int j0 = 0; j0 < s->states.n; j0++) {
        const mbl_src_item *it = &s->states.items[j0];
        char what[64];
        if (find_name(&s->ode_states, it->text, strlen(it->text)) >= 0) continue;
        int j = md->nus++;
        snprintf(what, sizeof what, "state %d%s", j0 + 1, it->line ? "" : " (given)");
        rc = parse_item(L, it, SCOPE_FULL, what, &md->us[j]);
        if (!rc)
            rc = check_deps(L, md->us[j], BIT(MBL_BLK_A) | BIT(MBL_BLK_V) | BIT(MBL_BLK_R) | BIT_EXT | BIT(MBL_BLK_X), it, what,
                            " (velocity-level states go under 'velocity_states')");
        if (rc) goto done;
        if (!depends_on_block(md, md->us[j], MBL_BLK_Q)) {
            rc = mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: %s does not depend on any coordinate", s->file, it->line,
                           it->col, what);
            goto done;
        }
        md->us_text[j] = str_dup(it->text);
        if (!md->us_text[j]) {
            rc = mbl_error(L->st, MBL_ENOMEM, "out of memory");
            goto done;
        }
    }
    for (int j = 0; j < md->nuvs; j++) {
        const mbl_src_item *it = &s->velocity_states.items[j];
        char what[64];
        snprintf(what, sizeof what, "velocity state %d%s", j + 1, it->line ? "" : " (given)");
        rc = parse_item(L, it, SCOPE_FULL, what, &md->uvs[j]);
        if (!rc)
            rc = check_deps(L, md->uvs[j], BIT(MBL_BLK_A) | BIT(MBL_BLK_R) | BIT_EXT | BIT(MBL_BLK_X), it,
                            what, NULL);
        if (rc) goto done;
        for (int i = 0; i < n && !rc; i++) {
            if (!mblx_depends(g, md->uvs[j], md->v[i])) continue;
            if (depends_on_block(md, mblx_diff(g, md->uvs[j], md->v[i]), MBL_BLK_V))
                rc = mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: %s is not linear in the velocities", s->file, it->line,
                               it->col, what);
        }
        if (rc) goto done;
        if (!depends_on_block(md, md->uvs[j], MBL_BLK_V)) {
            rc = mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: %s does not contain any der(.)", s->file, it->line, it->col,
                           what);
            goto done;
        }
        md->uvs_text[j] = str_dup(it->text);
        if (!md->uvs_text[j]) {
            rc = mbl_error(L->st, MBL_ENOMEM, "out of memory");
            goto done;
        }
    }
    rc = mblx_graph_status(g, L->st);

done:
    mbl_free(Phi);
    mbl_free(nh);
    mbl_free(Fgen);
    mbl_free(g1);
    mbl_free(g2);
    mbl_free(pv);
    return rc;
}

/* The structured term: the flexible bodies' rows and Jacobian entries (model/ffr.c), kept apart
 * in md->Fs and md->sjac until compile() has differentiated the text rows. */
static int formulate_ffr(loader *L)
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
            qidx[k] = find_name(&s->coordinates, nm, strlen(nm));
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
                rc = parse_item_text(L, &it, SCOPE_VALUE, "gravity", &gn[k]);
            }
        }
        for (int k = 0; k < fb->nfac && !rc; k++) {
            const mbl_ffr_factor *f = &fb->fac[k];
            mbl_src_item it = {NULL, NULL, f->text, f->line, f->col, f->line, f->col};
            rc = parse_item_text(L, &it, SCOPE_VALUE, fb->name, &fac[k]);
        }
        if (!rc) rc = mbl_ffr_add(md, fb, qidx, gn, md->Fs, &md->sjac, L->st);
        if (!rc) rc = mbl_ffr_keep_nodes(md, fb, qidx, L->st);
        if (!rc) rc = mbl_ffr_keep_deriv(md, fb, qidx, gn, fac, L->st);
        mbl_free(qidx);
        if (rc) return rc;
    }
    return 0;
}

/* The structured term of a relative-coordinate tree (model/rtree.h): its texts parsed over the
 * mechanism's variables, its rows and closed-form Jacobian entries kept in md->Fs and md->sjac
 * beside the flexible bodies' until compile() has differentiated the text rows. */
static int formulate_rtree(loader *L)
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
        if (B->q && (qidx[b] = find_name(&s->coordinates, B->q, strlen(B->q))) < 0)
            rc = mbl_error(L->st, MBL_EMODEL, "%s: %s: coordinate '%s' is not a coordinate of the model", s->file,
                           B->name, B->q);
        for (int k = 0; k < MBL_RTREE_NT && !rc; k++) {
            mbl_src_item it = {NULL, NULL, B->t[k], B->line, B->col, B->line, B->col};
            rc = parse_item_text(L, &it, SCOPE_FULL, B->name, &tn[(size_t)b * MBL_RTREE_NT + k]);
        }
    }
    for (int k = 0; k < 3 && !rc; k++) {
        mbl_src_item it = {NULL, NULL, t->g[k], 0, 0, 0, 0};
        rc = parse_item_text(L, &it, SCOPE_FULL, "gravity", &gn[k]);
    }
    if (!rc) rc = mbl_rtree_num_new(md, t, qidx, tn, gn, &md->rtn, L->st);
    mbl_free(qidx);
    mbl_free(tn);
    return rc;
}

/* Planar rigid bodies and revolute joints evaluated numerically (model/pmech_num.h): their texts
 * parsed (parameters only), the term's pattern kept in md->sjac beside the flexible bodies' until
 * compile() has differentiated the text rows (md->Fs makes compile() merge it). */
/* the numeric term's texts repeat (every bar's "m", "-l/2"): each distinct text parsed once */
typedef struct pm_cache {
    const char **key;
    mblx_id *node;
    size_t cap;
} pm_cache;

static int pm_parse(loader *L, pm_cache *c, const char *text, int line, int col, const char *what, mblx_id *out)
{
    size_t len = strlen(text), h = (size_t)name_hash(text, len) & (c->cap - 1);
    while (c->key[h] && strcmp(c->key[h], text)) h = (h + 1) & (c->cap - 1);
    if (c->key[h]) {
        *out = c->node[h];
        return 0;
    }
    mbl_src_item it = {NULL, NULL, (char *)text, line, col, line, col};
    int rc = parse_item_text(L, &it, SCOPE_VALUE, what, out);
    if (!rc) c->key[h] = text, c->node[h] = *out;
    return rc;
}

static int formulate_pmech(loader *L)
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
            if ((qidx[3 * b + k] = find_name(&L->src->coordinates, B->q[k], strlen(B->q[k]))) < 0)
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
            rc = parse_item_text(L, &it, SCOPE_VALUE, "gravity", &gn[k]);
        }
    }
    if (!rc) rc = mbl_pmech_num_new(md, p, qidx, bn, jn, sn, gn, L->st);
    mbl_free(qidx), mbl_free(bn), mbl_free(jn), mbl_free(sn), mbl_free(pc.key), mbl_free(pc.node);
    return rc;
}

/* out[i] = d/dt(dT/dv_i) - dT/dq_i for the kinetic energy T parsed with lets, through the lets
 * u_k that T uses directly (its top-level lets: body velocities): with T = f(u, q, v),
 *   out_i = d/dt(f_v_i) - f_q_i + sum_k [ d/dt(f_u_k) du_k/dv_i + f_u_k (d/dt(du_k/dv_i) - du_k/dq_i) ],
 * where the bracket is identically 0 for u_k = der(P) of a velocity-free P (the Coriolis terms of
 * the translational energy cancel there, as in Kane's equations: out_i = sum m P'' dP/dq_i), and
 * d/dt(f_u_k) (the rate of a body momentum) is one node shared by every row. f is T with its
 * top-level lets replaced by symbols that no tape reads (they are substituted back). */
static int lagrange_let(loader *L, mblx_id T, mblx_id *out)
{
    mbl_model *md = L->md;
    mblx_graph *g = md->g;
    int n = md->n, rc = 0;
    size_t nn = mblx_node_count(g);
    size_t stk_cap = 64;
    mblx_id *map = mbl_alloc_array(nn, sizeof *map), *stk = mbl_alloc_array(stk_cap, sizeof *stk);
    mblx_id *u = NULL, *us = NULL, *fu = NULL, *fv = NULL, *fq = NULL, *terms = NULL;
    int K = 0, cap = 0;
    size_t ns = 0;
    if (!map || !stk) goto oom;
    for (size_t e = 0; e < nn; e++) map[e] = MBLX_NONE;
    /* post-order rebuild of T down to its top-level lets */
    stk[ns++] = T;
    while (ns) {
        mblx_id e = stk[ns - 1];
        if (map[e] != MBLX_NONE) {
            ns--;
            continue;
        }
        mblx_op op = mblx_node_op(g, e);
        if (op == MBLX_OP_LET) {
            if (K == cap) {
                cap = cap ? 2 * cap : 32;
                mblx_id *x = mbl_realloc_array(u, (size_t)cap, sizeof *x), *y = x ? mbl_realloc_array(us, (size_t)cap, sizeof *y) : NULL;
                if (x) u = x;
                if (!x || !y) goto oom;
                us = y;
            }
            char name[48];
            snprintf(name, sizeof name, "let#%d", K);
            u[K] = e;
            us[K] = mblx_symbol(g, name);
            map[e] = us[K++];
            ns--;
            continue;
        }
        int na = mblx_node_nargs(g, e), pending = 0;
        for (int a = 0; a < na; a++) {
            mblx_id c = mblx_node_arg(g, e, a);
            if (map[c] != MBLX_NONE) continue;
            if (ns == stk_cap) { /* a shared operand can be on the stack more than once */
                mblx_id *x = mbl_realloc_array(stk, 2 * stk_cap, sizeof *x);
                if (!x) goto oom;
                stk = x;
                stk_cap *= 2;
            }
            stk[ns++] = c, pending = 1;
        }
        if (pending) continue;
        if (op == MBLX_OP_CONST || op == MBLX_OP_SYMBOL || na == 0) {
            map[e] = e;
        } else {
            mblx_id loc[8], *args = na <= 8 ? loc : mbl_alloc_array((size_t)na, sizeof *args);
            if (!args) goto oom;
            for (int a = 0; a < na; a++) args[a] = map[mblx_node_arg(g, e, a)];
            map[e] = mblx_apply(g, op, mblx_node_value(g, e), (size_t)na, args);
            if (args != loc) mbl_free(args);
            if (map[e] == MBLX_NONE) goto fail;
        }
        ns--;
    }
    mblx_id f = map[T];
    fu = mbl_alloc_array((size_t)(K ? K : 1), sizeof *fu);
    fv = mbl_alloc_array((size_t)n, sizeof *fv);
    fq = mbl_alloc_array((size_t)n, sizeof *fq);
    terms = mbl_alloc_array((size_t)(2 * K + 2), sizeof *terms);
    if (!fu || !fv || !fq || !terms) goto oom;
    if (mblx_gradient(g, f, (size_t)K, us, fu) || mblx_gradient(g, f, (size_t)n, md->v, fv) ||
        mblx_gradient(g, f, (size_t)n, md->q, fq))
        goto fail;
    for (int k = 0; k < K; k++) fu[k] = mblx_subst(g, fu[k], (size_t)K, us, u);
    mblx_id *dfu = mbl_alloc_array((size_t)(K ? K : 1), sizeof *dfu);
    if (!dfu) goto oom;
    for (int k = 0; k < K; k++) dfu[k] = total_der(md, fu[k]);
    for (int i = 0; i < n; i++) {
        int nt = 0;
        mblx_id a = mblx_subst(g, fv[i], (size_t)K, us, u), b = mblx_subst(g, fq[i], (size_t)K, us, u);
        terms[nt++] = mblx_sub(g, total_der(md, a), b);
        for (int k = 0; k < K; k++) {
            mblx_id jv = mblx_diff(g, u[k], md->v[i]);
            terms[nt++] = mblx_mul(g, dfu[k], jv);
            int der = 0;
            for (int d = 0; d < L->nderlet && !der; d++) der = L->derlet[d] == u[k];
            if (!der) {
                mblx_id br = mblx_sub(g, total_der(md, jv), mblx_diff(g, u[k], md->q[i]));
                terms[nt++] = mblx_mul(g, fu[k], br);
            }
        }
        out[i] = mblx_sum(g, (size_t)nt, terms);
    }
    mbl_free(dfu);
    rc = mblx_graph_status(g, L->st);
    goto done;
oom:
    rc = mbl_error(L->st, MBL_ENOMEM, "out of memory");
    goto done;
fail:
    rc = mblx_graph_status(g, L->st);
    if (!rc) rc = mbl_error(L->st, MBL_ENOMEM, "out of memory");
done:
    mbl_free(map), mbl_free(stk), mbl_free(u), mbl_free(us), mbl_free(fu), mbl_free(fv), mbl_free(fq);
    mbl_free(terms);
    return rc;
}

/* Does e contain a let node? */
static int has_let(const mblx_graph *g, mblx_id e)
{
    size_t nn = mblx_node_count(g), ns = 0, cap = 64;
    unsigned char *seen = mbl_calloc(nn ? nn : 1, 1);
    mblx_id *stk = mbl_alloc_array(cap, sizeof *stk);
    int found = 0;
    if (!seen || !stk) {
        mbl_free(seen), mbl_free(stk);
        return 1; /* out of memory: let the caller go on (it reports it) */
    }
    stk[ns++] = e;
    while (ns && !found) {
        mblx_id x = stk[--ns];
        if (seen[x]) continue;
        seen[x] = 1;
        if (mblx_node_op(g, x) == MBLX_OP_LET) found = 1;
        int na = mblx_node_nargs(g, x);
        for (int a = 0; a < na; a++) {
            if (ns == cap) {
                mblx_id *y = mbl_realloc_array(stk, 2 * cap, sizeof *y);
                if (!y) {
                    found = 1;
                    break;
                }
                stk = y;
                cap *= 2;
            }
            stk[ns++] = mblx_node_arg(g, x, a);
        }
    }
    mbl_free(seen), mbl_free(stk);
    return found;
}

/* The rows of the residual formed a second time with every variable of the file kept as one
 * shared node, let(its expression) (mblx_let), for the tapes only (md->Fc). The inlined rows md->F
 * flatten a variable into every product that uses it (sin(theta) * L3x with L3x = sps*sph is one
 * product of three), so d/dt(dT/dv) - dT/dq and then its Jacobian expand into long products that
 * differ by one factor; here dT/dv = sum_k dT/dw_k dw_k/dv through the variables w_k, the
 * derivatives of each variable are let nodes computed once, and the tape compiler reads let(x)
 * as x. The values are the same to rounding. md->F stays the model's rows for every analysis
 * (the Jacobian's pattern, second derivatives, code generation, checks): lets lose structural
 * cancellations, which the pattern must keep. Only the text rows (energies, constraints); models
 * without variables, with a mass matrix or with a structured term keep md->Fc NULL, and so do
 * mechanisms (their generated variables are short and the inlined form compiles 7-23 % shorter)
 * and models whose kinetic energy uses no variable (a four-bar: nothing to share, and the second
 * formulation cost the N = 300 four-bar 20 % of its loading). */
static int formulate_let(loader *L, const mblx_id *Fgen)
{
    mbl_model *md = L->md;
    mbl_src *s = L->src;
    mblx_graph *g = md->g;
    int n = md->n, m = md->m, k = md->k, nv = s->variables.n, rc = 0;
    if (!nv || s->has_mass_matrix || !s->kinetic_energy.text || md->Fs || !n || s->from_mechanism) return 0;
    int *state = mbl_calloc((size_t)nv, sizeof *state);
    mblx_id *node = mbl_calloc((size_t)nv, sizeof *node);
    mblx_id *Phi = mbl_calloc((size_t)(m ? m : 1), sizeof *Phi), *nh = mbl_calloc((size_t)(k ? k : 1), sizeof *nh);
    mblx_id *pv = mbl_calloc((size_t)n, sizeof *pv), *g1 = mbl_calloc((size_t)n, sizeof *g1);
    mblx_id *g2 = mbl_calloc((size_t)n, sizeof *g2);
    mblx_id *terms = mbl_calloc((size_t)(m > k ? m : k) + 1, sizeof *terms);
    md->Fc = mbl_calloc((size_t)md->nF, sizeof *md->Fc);
    if (!state || !node || !Phi || !nh || !pv || !g1 || !g2 || !terms || !md->Fc) {
        rc = mbl_error(L->st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    int *state0 = L->var_state;
    mblx_id *node0 = L->var_node;
    L->var_state = state;
    L->var_node = node;
    L->let_vars = 1;
    mblx_id zero = mblx_const(g, 0.0), T = zero, V = zero, D = zero;
    rc = parse_item(L, &s->kinetic_energy, SCOPE_FULL, "kinetic_energy", &T);
    if (!rc && !has_let(g, T)) { /* no variable in the kinetic energy: nothing to share (a four-bar) */
        L->let_vars = 0;
        L->var_state = state0;
        L->var_node = node0;
        rc = mblx_graph_status(g, L->st);
        if (!rc) {
            mbl_free(md->Fc);
            md->Fc = NULL;
        }
        goto done;
    }
    if (!rc && s->potential_energy.text) rc = parse_item(L, &s->potential_energy, SCOPE_FULL, "potential_energy", &V);
    if (!rc && s->dissipation.text) rc = parse_item(L, &s->dissipation, SCOPE_FULL, "dissipation", &D);
    for (int j = 0; j < m && !rc; j++) rc = parse_equation(L, &s->constraints.items[j], "constraint", &Phi[j]);
    for (int j = 0; j < k && !rc; j++) rc = parse_equation(L, &s->nonholonomic.items[j], "non-holonomic constraint", &nh[j]);
    L->let_vars = 0;
    L->var_state = state0;
    L->var_node = node0;
    if (rc) goto done;
    /* R = d/dt(dT/dv) - d(T - V - lambda.Phi)/dq + d(D + mu.c)/dv - F, as formulate() */
    for (int j = 0; j < m; j++) terms[j] = mblx_mul(g, md->lam[j], Phi[j]);
    mblx_id lamPhi = mblx_sum(g, (size_t)m, terms);
    for (int j = 0; j < k; j++) terms[j] = mblx_mul(g, md->mu[j], nh[j]);
    mblx_id muC = mblx_sum(g, (size_t)k, terms);
    rc = lagrange_let(L, T, pv);
    if (rc) goto done;
    if (mblx_gradient(g, mblx_add(g, V, lamPhi), (size_t)n, md->q, g1) ||
        mblx_gradient(g, mblx_add(g, D, muC), (size_t)n, md->v, g2)) {
        rc = mblx_graph_status(g, L->st);
        goto done;
    }
    memcpy(md->Fc, md->F, (size_t)md->nF * sizeof *md->Fc);
    for (int i = 0; i < n; i++) {
        mblx_id t4[4] = {pv[i], g1[i], g2[i], mblx_neg(g, Fgen[i])};
        md->Fc[i] = mblx_sum(g, 4, t4);
    }
    constraint_rows(md, m, Phi, k, nh, md->Fc);
    rc = mblx_graph_status(g, L->st);
done:
    if (rc) {
        mbl_free(md->Fc);
        md->Fc = NULL;
    }
    mbl_free(state), mbl_free(node), mbl_free(Phi), mbl_free(nh), mbl_free(pv), mbl_free(g1), mbl_free(g2);
    mbl_free(terms);
    return rc;
}

/* The values of the Jacobian's entries (md->jac: the pattern of the inlined rows md->F) as the
 * tape computes them: from the rows md->Fc where formulate_let made them (an entry of the pattern
 * that is structurally zero there is the constant 0; entries of Fc outside the pattern cancel in
 * the inlined form and are dropped), else md->jac's own nodes. *out: jac.nz nodes (mbl_free). */
static int jacobian_compiled(mbl_model *md, mblx_id **out, mbl_status *st)
{
    *out = NULL;
    if (!md->Fc) return 0;
    int nz = md->jac.nz, nu = md->nunk;
    mblx_id *syms = mbl_alloc_array((size_t)(nu ? nu : 1), sizeof *syms);
    mblx_id *val = mbl_alloc_array((size_t)(nz ? nz : 1), sizeof *val);
    if (!syms || !val) {
        mbl_free(syms), mbl_free(val);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    for (int j = 0; j < nu; j++) syms[j] = mblx_symbol_node(md->g, (size_t)md->sym_of_unknown[j]);
    mblx_sparse S;
    int rc = mblx_jacobian(md->g, (size_t)md->nF, md->Fc, (size_t)nu, syms, &S);
    mbl_free(syms);
    if (rc) {
        mbl_free(val);
        return mblx_graph_status(md->g, st) ? mblx_graph_status(md->g, st) : mbl_error(st, rc, "out of memory");
    }
    mblx_id zero = mblx_const(md->g, 0.0);
    for (int p = 0; p < nz; p++) {
        int r = md->jac.row[p], c = md->jac.col[p];
        val[p] = md->jac.node[p];
        if (r >= md->nF || md->Fc[r] == md->F[r]) continue;
        int lo = S.colptr[c], hi = S.colptr[c + 1];
        while (lo < hi) { /* rows are sorted within a column */
            int mid = lo + (hi - lo) / 2;
            if (S.rowidx[mid] < r) lo = mid + 1;
            else hi = mid;
        }
        val[p] = (lo < S.colptr[c + 1] && S.rowidx[lo] == r) ? S.node[lo] : zero;
    }
    mblx_sparse_free(&S);
    *out = val;
    return 0;
}

/* Jacobian of exprs w.r.t. all unknowns [a lam mu v q r] into J (appending rows from row0). */
static int jacobian_unknowns(mbl_model *md, int nexpr, const mblx_id *exprs, int row0, mbl_sjac *J, mbl_status *st)
{
    mblx_id *syms = mbl_alloc_array((size_t)md->nunk, sizeof *syms);
    if (!syms) return mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int j = 0; j < md->nunk; j++) syms[j] = mblx_symbol_node(md->g, (size_t)md->sym_of_unknown[j]);
    mblx_sparse S;
    int rc = mblx_jacobian(md->g, (size_t)nexpr, exprs, (size_t)md->nunk, syms, &S);
    mbl_free(syms);
    if (rc) return mblx_graph_status(md->g, st) ? mblx_graph_status(md->g, st) : mbl_error(st, rc, "out of memory");
    for (int j = 0; j < md->nunk && !rc; j++)
        for (int p = S.colptr[j]; p < S.colptr[j + 1] && !rc; p++)
            if (mbl_sjac_push(J, row0 + S.rowidx[p], j, S.node[p])) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    mblx_sparse_free(&S);
    return rc;
}

/* Keep only the user's expressions that can leave a function's domain (log, sqrt, asin, acos,
 * tan, or a power with a negative, fractional or variable exponent: division included) for
 * mbl_model_check_domain; the others (polynomials, sin, cos, exp, ...) are defined everywhere
 * their derivatives are. One pass over the nodes in handle order (operands come first). */
static int keep_restricted_srcx(mbl_model *md)
{
    if (!md->nsrcx) return 0;
    mblx_id top = 0;
    for (int i = 0; i < md->nsrcx; i++)
        if (md->srcx[i] > top) top = md->srcx[i];
    unsigned char *bad = mbl_calloc((size_t)top + 1, 1);
    if (!bad) return MBL_ENOMEM;
    /* bit 1: can leave a domain; bit 2: provably >= 0 (so sqrt(x^2 + y^2) is safe) */
    for (mblx_id e = 0; e <= top; e++) {
        mblx_op op = mblx_node_op(md->g, e);
        int na = mblx_node_nargs(md->g, e), b = 0, nonneg = 0, allnn = 1;
        for (int a = 0; a < na; a++) {
            mblx_id x = mblx_node_arg(md->g, e, a);
            if (x > top || (bad[x] & 1)) b = 1;
            if (x > top || !(bad[x] & 2)) allnn = 0;
        }
        mblx_id x0 = mblx_node_arg(md->g, e, 0);
        int nn0 = x0 <= top && (bad[x0] & 2);
        double c = 0;
        switch (op) {
        case MBLX_OP_CONST: nonneg = mblx_node_value(md->g, e) >= 0; break;
        case MBLX_OP_ADD:
        case MBLX_OP_MUL: nonneg = allnn && mblx_node_value(md->g, e) >= 0; break;
        case MBLX_OP_POW:
            if (!mblx_is_const(md->g, mblx_node_arg(md->g, e, 1), &c) || c < 0 || (c != floor(c) && !nn0)) b = 1;
            nonneg = nn0 || (c == floor(c) && fmod(c, 2.0) == 0);
            break;
        case MBLX_OP_SQRT:
            if (!nn0) b = 1;
            nonneg = 1;
            break;
        case MBLX_OP_LOG:
        case MBLX_OP_ASIN:
        case MBLX_OP_ACOS:
        case MBLX_OP_TAN: b = 1; break;
        case MBLX_OP_ABS:
        case MBLX_OP_EXP:
        case MBLX_OP_COSH: nonneg = 1; break;
        default: break;
        }
        bad[e] = (unsigned char)((b ? 1 : 0) | (nonneg ? 2 : 0));
    }
    int k = 0;
    for (int i = 0; i < md->nsrcx; i++) {
        if (bad[md->srcx[i]] & 1) {
            md->srcx[k] = md->srcx[i];
            md->srcx_what[k++] = md->srcx_what[i];
        } else {
            mbl_free(md->srcx_what[i]);
        }
    }
    md->nsrcx = k;
    mbl_free(bad);
    return 0;
}

/* A tape compiled on a second thread: the graph is read-only while tapes are compiled. */
typedef struct compile_job {
    const mblx_graph *g;
    size_t n;
    const mblx_id *out;
    mblx_tape *tape;
    mbl_status st;
} compile_job;

static void *compile_thread(void *arg)
{
    compile_job *j = arg;
    j->tape = mblx_compile(j->g, j->n, j->out, &j->st);
    return NULL;
}

/* A drawing coordinate's expression. Nearly every one is "0", a coordinate or a variable already
 * read (a marker's position): its node then directly, the node a parse would give, without the
 * parse and the records of the expression, which the variable has already (read_draw was 3 % of
 * the N = 1000 four-bar mechanism's run); anything else is parsed. */
static int draw_node(loader *L, const mbl_src_item *it, const char *what, mblx_id *out)
{
    size_t n = strlen(it->text);
    int i;
    if (n == 1 && it->text[0] == '0') {
        *out = mblx_const(L->md->g, 0.0);
        return mblx_graph_status(L->md->g, L->st);
    }
    if ((i = find_name(&L->src->coordinates, it->text, n)) >= 0) {
        *out = L->md->q[i];
        return 0;
    }
    if ((i = find_name(&L->src->variables, it->text, n)) >= 0 && L->var_state[i] == VAR_DONE) {
        *out = L->var_node[i];
        return 0;
    }
    return parse_item(L, it, SCOPE_FULL, what, out);
}

/* The drawing points of a mechanism (mbl_src draw, draw_links) as expressions. */
static int read_draw(loader *L, const mbl_src *s)
{
    mbl_model *md = L->md;
    int npt = s->draw.n / 3, nl = s->draw_links.n;
    if (!npt) return 0;
    md->ptname = mbl_calloc((size_t)npt, sizeof *md->ptname);
    md->ptbody = mbl_calloc((size_t)npt, sizeof *md->ptbody);
    md->dp = mbl_calloc((size_t)(3 * npt), sizeof *md->dp);
    md->lname = mbl_calloc((size_t)(nl ? nl : 1), sizeof *md->lname);
    md->ltype = mbl_calloc((size_t)(nl ? nl : 1), sizeof *md->ltype);
    md->link = mbl_calloc((size_t)(2 * nl + 1), sizeof *md->link);
    if (!md->ptname || !md->ptbody || !md->dp || !md->lname || !md->ltype || !md->link)
        return mbl_error(L->st, MBL_ENOMEM, "out of memory");
    md->npt = npt;
    md->nlink = nl;
    for (int i = 0; i < npt; i++) {
        const mbl_src_item *it = &s->draw.items[3 * i];
        if (!(md->ptname[i] = str_dup(it->key)) || !(md->ptbody[i] = str_dup(it->key2)))
            return mbl_error(L->st, MBL_ENOMEM, "out of memory");
        char what[200];
        snprintf(what, sizeof what, "position of '%s'", it->key);
        for (int k = 0; k < 3; k++) {
            int rc = draw_node(L, &s->draw.items[3 * i + k], what, &md->dp[3 * i + k]);
            if (rc) return rc;
        }
    }
    for (int j = 0; j < nl; j++) {
        const mbl_src_item *it = &s->draw_links.items[j];
        if (!(md->lname[j] = str_dup(it->key)) || !(md->ltype[j] = str_dup(it->key2)))
            return mbl_error(L->st, MBL_ENOMEM, "out of memory");
        if (sscanf(it->text, "%d %d", &md->link[2 * j], &md->link[2 * j + 1]) != 2)
            return mbl_error(L->st, MBL_EMODEL, "%s: joint '%s': internal drawing link", s->file, it->key);
    }
    return 0;
}

/* The same as jacobian_unknowns by reverse mode, row by row (mblx_gradient): for a few outputs of a
 * long chain (a relative tree's end-effector pose), forward mode differentiates the chain of
 * rotations once per joint column, N^2 nodes, where reverse mode makes O(N) per row. */
static int jacobian_unknowns_rows(mbl_model *md, int nexpr, const mblx_id *exprs, mbl_sjac *J, mbl_status *st)
{
    mblx_id *syms = mbl_alloc_array((size_t)md->nunk + 1, sizeof *syms);
    mblx_id *grad = mbl_alloc_array((size_t)md->nunk + 1, sizeof *grad);
    int rc = 0;
    if (!syms || !grad) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int j = 0; j < md->nunk && !rc; j++) syms[j] = mblx_symbol_node(md->g, (size_t)md->sym_of_unknown[j]);
    for (int i = 0; i < nexpr && !rc; i++) {
        if (mblx_gradient(md->g, exprs[i], (size_t)md->nunk, syms, grad)) {
            rc = mblx_graph_status(md->g, st) ? mblx_graph_status(md->g, st) : mbl_error(st, MBL_ENOMEM, "out of memory");
            break;
        }
        for (int j = 0; j < md->nunk && !rc; j++) {
            double x;
            if (grad[j] == MBLX_NONE || (mblx_is_const(md->g, grad[j], &x) && x == 0.0)) continue;
            if (mbl_sjac_push(J, i, j, grad[j])) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        }
    }
    mbl_free(syms), mbl_free(grad);
    return rc;
}

static int compile_draw(mbl_model *md, mbl_status *st)
{
    if (!md->npt) return 0;
    int rc = jacobian_unknowns(md, 3 * md->npt, md->dp, 0, &md->dpjac, st);
    if (rc) return rc;
    size_t nt = (size_t)(3 * md->npt) + (size_t)md->dpjac.nz;
    mblx_id *all = mbl_alloc_array(nt, sizeof *all);
    if (!all) return mbl_error(st, MBL_ENOMEM, "out of memory");
    memcpy(all, md->dp, (size_t)(3 * md->npt) * sizeof *all);
    if (md->dpjac.nz) memcpy(all + 3 * md->npt, md->dpjac.node, (size_t)md->dpjac.nz * sizeof *all);
    md->tape_draw = mblx_compile(md->g, nt, all, st);
    mbl_free(all);
    if (!md->tape_draw) return st ? st->code : MBL_ENOMEM;
    return 0;
}

static int compile(mbl_model *md, mbl_status *st)
{
    int rc = jacobian_unknowns(md, md->nF, md->F, 0, &md->jac, st);
    if (!rc && md->Fs) rc = mbl_ffr_merge(md, md->Fs, &md->sjac, st);
    if (!rc && md->rtn) rc = mbl_rtree_num_pattern(md, md->rtn, st);
    /* the flexible bodies' numeric entries last (never beside a tree: relative coordinates refuse
     * flexible bodies, src/mech/beam.c) */
    if (!rc) rc = mbl_ffr_num_bind(md, st);
    if (!rc) rc = md->rtn ? jacobian_unknowns_rows(md, md->ny, md->y, &md->yjac, st)
                          : jacobian_unknowns(md, md->ny, md->y, 0, &md->yjac, st);
    if (rc) return rc;
    /* user states: rows s (nus), sdot, sddot, then w (nuvs), wdot */
    int nus = md->nus, nuvs = md->nuvs, ne = 3 * nus + 2 * nuvs;
    mblx_id *e = mbl_alloc_array((size_t)(ne ? ne : 1), sizeof *e);
    if (!e) return mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int j = 0; j < nus; j++) {
        e[j] = md->us[j];
        e[nus + j] = total_der(md, e[j]);
        e[2 * nus + j] = total_der(md, e[nus + j]);
    }
    for (int j = 0; j < nuvs; j++) {
        e[3 * nus + j] = md->uvs[j];
        e[3 * nus + nuvs + j] = total_der(md, md->uvs[j]);
    }
    rc = mblx_graph_status(md->g, st);
    if (!rc) rc = jacobian_unknowns(md, ne, e, 0, &md->usjac, st);
    size_t nt = (size_t)ne + (size_t)md->usjac.nz, ny = (size_t)md->ny + (size_t)md->yjac.nz;
    mblx_id *all = rc ? NULL : mbl_alloc_array(nt ? nt : 1, sizeof *all);
    mblx_id *yn = rc ? NULL : mbl_alloc_array(ny ? ny : 1, sizeof *yn);
    if (!rc && (!all || !yn)) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    if (rc) {
        mbl_free(e), mbl_free(all), mbl_free(yn);
        return rc;
    }
    memcpy(all, e, (size_t)ne * sizeof *all);
    if (md->usjac.nz) memcpy(all + ne, md->usjac.node, (size_t)md->usjac.nz * sizeof *all);
    memcpy(yn, md->y, (size_t)md->ny * sizeof *yn);
    if (md->yjac.nz) memcpy(yn + md->ny, md->yjac.node, (size_t)md->yjac.nz * sizeof *yn);
    mbl_free(e);

    /* every node exists now: compile the residual tape on a second thread (large models spend
     * a quarter of their loading time compiling), the others here */
    mblx_id *jc = NULL; /* the Jacobian's entries from md->Fc (formulate_let), if any */
    if (jacobian_compiled(md, &jc, st)) {
        mbl_free(all), mbl_free(yn);
        return st ? st->code : MBL_ENOMEM;
    }
    compile_job job = {md->g, (size_t)md->nF, md->Fc ? md->Fc : md->F, NULL, {0, ""}};
    pthread_t th;
    int threaded = md->nF >= COMPILE_THREAD_MIN && pthread_create(&th, NULL, compile_thread, &job) == 0;
    if (!threaded) compile_thread(&job);
    md->tape_jac = mblx_compile(md->g, (size_t)md->jac_ntape, jc ? jc : md->jac.node, st);
    mbl_free(jc);
    if (md->tape_jac) md->tape_y = mblx_compile(md->g, ny, yn, st);
    if (md->tape_y) md->tape_us = mblx_compile(md->g, nt, all, st);
    if (md->tape_us && keep_restricted_srcx(md)) {
        mbl_error(st, MBL_ENOMEM, "out of memory");
    } else if (md->tape_us) {
        md->tape_srcx = mblx_compile(md->g, (size_t)md->nsrcx, md->srcx, st);
    }
    if (threaded) pthread_join(th, NULL);
    md->tape_F = job.tape;
    mbl_free(all), mbl_free(yn);
    if (!md->tape_jac || !md->tape_y || !md->tape_us || !md->tape_srcx) return st ? st->code : MBL_ENOMEM;
    if (!md->tape_F) {
        if (st) *st = job.st;
        return job.st.code ? job.st.code : MBL_ENOMEM;
    }
    md->work_size = mblx_tape_work_size(md->tape_F);
    if (md->rtn && mbl_rtree_num_work(md->rtn) > md->work_size) md->work_size = mbl_rtree_num_work(md->rtn);
    if (mblx_tape_work_size(md->tape_us) > md->work_size) md->work_size = mblx_tape_work_size(md->tape_us);
    if (mblx_tape_work_size(md->tape_jac) > md->work_size) md->work_size = mblx_tape_work_size(md->tape_jac);
    if (mblx_tape_work_size(md->tape_y) > md->work_size) md->work_size = mblx_tape_work_size(md->tape_y);
    if (mblx_tape_work_size(md->tape_srcx) > md->work_size) md->work_size = mblx_tape_work_size(md->tape_srcx);
    /* cyclic coordinates: no residual depends on them */
    int jq = mbl_model_blk0(md, MBL_BLK_Q);
    for (int i = 0; i < md->n; i++) md->cyclic[i] = 1;
    for (int p = 0; p < md->jac.nz; p++)
        if (md->jac.col[p] >= jq && md->jac.col[p] < jq + md->n) md->cyclic[md->jac.col[p] - jq] = 0;
    md->cyclic_known = 1;
    return 0;
}

int mbl_model_check_domain(const mbl_model *md, const double *syms, double *work, mbl_status *st)
{
    if (!md->nsrcx) return 0;
    double *vals = mbl_alloc_array((size_t)md->nsrcx, sizeof *vals);
    if (!vals) return mbl_error(st, MBL_ENOMEM, "out of memory");
    mbl_status st1;
    mbl_status_clear(&st1);
    int rc = mblx_tape_eval(md->tape_srcx, syms, vals, work, &st1);
    mbl_free(vals);
    if (rc != MBL_EDOMAIN) return rc ? mbl_error(st, rc, "%s", st1.msg) : 0;
    /* which one: each on its own tape (the error path only) */
    for (int i = 0; i < md->nsrcx; i++) {
        double v;
        mbl_status st2;
        mbl_status_clear(&st2);
        int rc2 = mblx_eval(md->g, md->srcx[i], syms, &v, &st2);
        if (rc2 == MBL_EDOMAIN)
            return mbl_error(st, rc2, "%s is not defined at the operating point: %s", md->srcx_what[i], st2.msg);
        if (rc2) return mbl_error(st, rc2, "%s", st2.msg);
    }
    return mbl_error(st, rc, "%s: %s at the operating point", md->file, st1.msg);
}

/* The position of the mass-matrix entry (i, j) in the file (the kinetic energy without a mass_matrix). */
static const mbl_src_item *mass_item(const mbl_src *s, const mbl_model *md, int i, int j)
{
    if (!s->has_mass_matrix) return &s->kinetic_energy;
    for (int e = 0; e < s->mass_matrix.n; e++) {
        const mbl_src_item *it = &s->mass_matrix.items[e];
        if ((!strcmp(it->key, md->qname[i]) && !strcmp(it->key2, md->qname[j])) ||
            (!strcmp(it->key, md->qname[j]) && !strcmp(it->key2, md->qname[i])))
            return it;
    }
    return s->mass_matrix.n ? &s->mass_matrix.items[0] : &s->kinetic_energy;
}

/* The kinetic energy T = 1/2 v^T M v of a physical system is never negative, so M must be positive
 * semi-definite. Checked at the file's configuration (q0, v0, r0, linearize.time) with what costs
 * O(nnz): every diagonal entry M_ii >= 0 (a negative mass or inertia) and every 2x2 principal
 * minor M_ii M_jj >= M_ij^2 of a non-zero M_ij, each to MBL_MASS_TOL relative to the largest
 * diagonal entry. Values that cannot be evaluated there are left to the operating point. */
#define MBL_MASS_TOL 1e-9
/* Up to this many coordinates M is also checked whole: its smallest eigenvalue (LAPACK dsyev). */
#define MBL_MASS_DENSE_MAX 200

/* " (the value comes from --set name=value)" when e depends on an overridden parameter */
static const char *mass_set_note(const mbl_model *md, mblx_id e, const mbl_setting *sets, int nsets, char *buf,
                                 size_t cap)
{
    buf[0] = '\0';
    for (int k = 0; k < nsets; k++)
        for (int i = 0; i < md->np; i++)
            if (!strcmp(md->pname[i], sets[k].name) && mblx_depends(md->g, e, md->p[i])) {
                char v[32];
                snprintf(v, sizeof v, "%.15g", sets[k].value);
                if (strtod(v, NULL) != sets[k].value) snprintf(v, sizeof v, "%.17g", sets[k].value);
                snprintf(buf, cap, " (the value comes from --set %s=%s)", sets[k].name, v);
                return buf;
            }
    return buf;
}

static int check_mass(const mbl_model *md, const mbl_src *s, const mbl_setting *sets, int nsets, mbl_status *st)
{
    char note[200];
    int n = md->n, rc = 0;
    double *syms = mbl_calloc((size_t)md->nsym + 1, sizeof *syms);
    double *jac = mbl_calloc((size_t)md->jac.nz + 1, sizeof *jac);
    double *work = mbl_calloc(md->work_size + 1, sizeof *work);
    double *diag = mbl_calloc((size_t)n + 1, sizeof *diag);
    if (!syms || !jac || !work || !diag) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto out;
    }
    mbl_model_fill_syms(md, md->time, md->q0, md->v0, NULL, NULL, NULL, md->r0, syms);
    mbl_status est;
    if (mbl_model_eval_jac(md, syms, jac, work, &est)) goto out; /* e.g. a domain error at q0 */
    /* M_ij = dF_i/da_j: the EOM rows, the acceleration columns */
    double big = 0;
    for (int p = 0; p < md->jac.nz; p++)
        if (md->jac.row[p] < n && md->jac.col[p] < n && md->jac.row[p] == md->jac.col[p]) {
            if (!isfinite(jac[p])) goto out;
            diag[md->jac.row[p]] += jac[p];
            if (fabs(jac[p]) > big) big = fabs(jac[p]);
        }
    for (int p = 0; p < md->jac.nz; p++) {
        int i = md->jac.row[p];
        if (i >= n || md->jac.col[p] != i || !(diag[i] < -MBL_MASS_TOL * big)) continue;
        const mbl_src_item *it = mass_item(s, md, i, i);
        rc = mbl_error(st, MBL_EMODEL,
                       "%s:%d:%d: the mass of coordinate '%s' is negative at the file's configuration (M(%s, %s) = "
                       "%.6g): the kinetic energy must never be negative (mass matrix positive semi-definite)%s",
                       s->file, it->line, it->col, md->qname[i], md->qname[i], md->qname[i], diag[i],
                       mass_set_note(md, md->jac.node[p], sets, nsets, note, sizeof note));
        goto out;
    }
    for (int p = 0; p < md->jac.nz; p++) {
        int i = md->jac.row[p], j = md->jac.col[p];
        if (i >= n || j >= n || i == j || !isfinite(jac[p])) continue;
        if (jac[p] * jac[p] > diag[i] * diag[j] + MBL_MASS_TOL * big * big) {
            const mbl_src_item *it = mass_item(s, md, i, j);
            rc = mbl_error(st, MBL_EMODEL,
                           "%s:%d:%d: the mass matrix is not positive semi-definite at the file's configuration: "
                           "M(%s, %s)^2 = %.6g exceeds M(%s, %s) M(%s, %s) = %.6g (the kinetic energy would be "
                           "negative for some velocities of '%s' and '%s')%s",
                           s->file, it->line, it->col, md->qname[i], md->qname[j], jac[p] * jac[p], md->qname[i],
                           md->qname[i], md->qname[j], md->qname[j], diag[i] * diag[j], md->qname[i], md->qname[j],
                           mass_set_note(md, md->jac.node[p], sets, nsets, note, sizeof note));
            goto out;
        }
    }
    if (n <= MBL_MASS_DENSE_MAX && n > 2) {
        double *A = mbl_calloc((size_t)n * (size_t)n, sizeof *A), *w = mbl_calloc((size_t)n, sizeof *w);
        if (!A || !w) {
            mbl_free(A);
            mbl_free(w);
            rc = mbl_error(st, MBL_ENOMEM, "out of memory");
            goto out;
        }
        for (int p = 0; p < md->jac.nz; p++)
            if (md->jac.row[p] < n && md->jac.col[p] < n && isfinite(jac[p]))
                A[(size_t)md->jac.col[p] * (size_t)n + (size_t)md->jac.row[p]] += jac[p];
        if (LAPACKE_dsyev(LAPACK_COL_MAJOR, 'V', 'U', n, A, n, w) == 0 && w[0] < -MBL_MASS_TOL * fmax(w[n - 1], big)) {
            /* the coordinate that takes the largest part of the direction of negative energy */
            int c = 0;
            for (int i = 1; i < n; i++)
                if (fabs(A[i]) > fabs(A[c])) c = i;
            const mbl_src_item *it = mass_item(s, md, c, c);
            rc = mbl_error(st, MBL_EMODEL,
                           "%s:%d:%d: the mass matrix is not positive semi-definite at the file's configuration "
                           "(smallest eigenvalue %.6g, mostly along coordinate '%s'): the kinetic energy would be "
                           "negative for some velocities",
                           s->file, it->line, it->col, w[0], md->qname[c]);
        }
        mbl_free(A);
        mbl_free(w);
    }
out:
    mbl_free(syms);
    mbl_free(jac);
    mbl_free(work);
    mbl_free(diag);
    return rc;
}

void mbl_load_options_default(mbl_load_options *opt)
{
    if (!opt) return;
    opt->max_file_size = MBL_MAX_FILE_SIZE;
    opt->max_nesting = MBL_MAX_NESTING;
    opt->states = opt->velocity_states = NULL;
    opt->nstates = opt->nvelocity_states = 0;
}

/* mbl_load_options.states / velocity_states: replace the file's list by the given expressions. */
static int replace_states(mbl_src_list *l, const char *const *text, int n, const char *what, mbl_status *st)
{
    if (n < 0) return mbl_error(st, MBL_EARG, "mbl_load_options: negative number of %s", what);
    mbl_src_item *items = mbl_calloc((size_t)(n ? n : 1), sizeof *items);
    if (!items) return mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int i = 0; i < n; i++) {
        if (!text[i] || !text[i][0]) {
            for (int j = 0; j < i; j++) mbl_free(items[j].text);
            mbl_free(items);
            return mbl_error(st, MBL_EARG, "mbl_load_options: %s %d is empty", what, i + 1);
        }
        items[i].text = str_dup(text[i]);
        if (!items[i].text) {
            for (int j = 0; j < i; j++) mbl_free(items[j].text);
            mbl_free(items);
            return mbl_error(st, MBL_ENOMEM, "out of memory");
        }
    }
    for (int i = 0; i < l->n; i++) {
        mbl_free(l->items[i].key);
        mbl_free(l->items[i].key2);
        mbl_free(l->items[i].text);
    }
    mbl_free(l->items);
    l->items = items;
    l->n = l->cap = n;
    return 0;
}

int mbl_model_load_string(const char *text, size_t len, const char *name, const mbl_setting *sets, int nsets,
                          mbl_model **out, mbl_status *st)
{
    return mbl_model_load_string_opt(text, len, name, sets, nsets, NULL, out, st);
}

int mbl_model_load_string_opt(const char *text, size_t len, const char *name, const mbl_setting *sets, int nsets,
                              const mbl_load_options *opt, mbl_model **out, mbl_status *st)
{
    if (!out) return mbl_error(st, MBL_EARG, "mbl_model_load_string: out is NULL");
    *out = NULL;
    if (!text) return mbl_error(st, MBL_EARG, "mbl_model_load_string: text is NULL");
    mbl_load_options lim;
    mbl_load_options_default(&lim);
    if (opt) lim = *opt;
    if (len > lim.max_file_size)
        return mbl_error(st, MBL_EIO, "%s: the model is larger than the limit of %zu bytes", name ? name : "<model>",
                         lim.max_file_size);
    mbl_src *src = NULL;
    int rc = mbl_src_read_opt(text, len, name, sets, nsets, lim.max_nesting, &src, st);
    if (rc) return rc;
    if (lim.states) rc = replace_states(&src->states, lim.states, lim.nstates, "states", st);
    if (!rc && lim.velocity_states)
        rc = replace_states(&src->velocity_states, lim.velocity_states, lim.nvelocity_states, "velocity states", st);
    if (rc) {
        mbl_src_free(src);
        return rc;
    }
    return mbl_model_from_src(src, sets, nsets, out, st);
}

int mbl_model_from_src(mbl_src *src, const mbl_setting *sets, int nsets, mbl_model **out, mbl_status *st)
{
    int rc = 0;
    *out = NULL;
    mbl_model *md = mbl_calloc(1, sizeof *md);
    if (!md) {
        mbl_src_free(src);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    md->g = mblx_graph_new();
    md->file = str_dup(src->file);
    md->name = str_dup(src->name);
    if (src->no_sens) md->no_sens = str_dup(src->no_sens);
    loader L;
    memset(&L, 0, sizeof L);
    L.md = md;
    L.src = src;
    L.st = st;
    if (!md->g || !md->file || !md->name) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    if (!rc) rc = take_speeds(&L); /* before the variables are counted: speeds are variables */
    if (!rc) {
        L.var_state = mbl_calloc((size_t)(src->variables.n ? src->variables.n : 1), sizeof *L.var_state);
        L.var_node = mbl_calloc((size_t)(src->variables.n ? src->variables.n : 1), sizeof *L.var_node);
        if (!L.var_state || !L.var_node) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    if (!rc) rc = check_names(&L);
    /* which parameters mbl_model_set_param may change: the resolver marks those used by values */
    if (!rc && !(md->pbaked = mbl_calloc((size_t)(src->parameters.n ? src->parameters.n : 1), sizeof *md->pbaked)))
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    if (!rc) rc = create_symbols(&L);
    if (!rc && src->from_mechanism)
        for (int i = 0; i < md->np; i++) md->pbaked[i] = 2; /* a mechanism's parameters are in its geometry */
    if (!rc) rc = load_values(&L, sets, nsets);
    /* variables in their order first: a variable then finds the earlier ones parsed, so a long
     * chain of them written in order (a mechanism tree in joint coordinates) does not nest */
    for (int i = 0; i < src->variables.n && !rc; i++)
        if (L.var_state[i] != VAR_DONE) {
            mblx_id e = MBLX_NONE;
            char what[160];
            variable_what(what, sizeof what, src->variables.items[i].key);
            L.var_state[i] = VAR_BUSY;
            L.var_stack[0] = i;
            L.var_depth = 1;
            L.mult_refused = 0;
            rc = parse_item(&L, &src->variables.items[i], SCOPE_FULL, what, &e);
            L.var_depth = 0;
            if (rc && L.mult_refused) {
                /* it uses a constraint force: parsed where a force, ode or output names it (where
                 * lambda() may be used), or refused there with the item that named it */
                rc = 0;
                mbl_status_clear(st);
                L.var_state[i] = VAR_NEW;
                continue;
            }
            L.var_node[i] = e;
            L.var_state[i] = VAR_DONE;
        }
    if (!rc && src->pmech && src->pmech->nj) {
        if (!(L.pmrow = mbl_calloc((size_t)src->constraints.n + 1, 1))) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        for (int j = 0; j < src->pmech->nj && !rc; j++) {
            int c0 = src->pmech->j[j].c0, t = src->pmech->j[j].type;
            int nc = t == MBL_PMECH_FIXED ? 3 : t == MBL_PMECH_ORIENTATION ? 1 : 2;
            if (c0 < 0 || c0 + nc > src->constraints.n)
                rc = mbl_error(st, MBL_EMODEL, "internal: %s has no constraints %d to %d", src->pmech->j[j].name, c0,
                               c0 + nc - 1);
            else
                memset(L.pmrow + c0, 1, (size_t)nc);
        }
    }
    if (!rc) rc = formulate(&L);
    if (!rc) {
        /* every variable must parse, even one that nothing uses */
        for (int i = 0; i < src->variables.n && !rc; i++)
            if (L.var_state[i] != VAR_DONE) {
                mblx_id e;
                char what[160];
                snprintf(what, sizeof what, "variable '%s'", src->variables.items[i].key);
                L.var_state[i] = VAR_BUSY;
                L.var_stack[0] = i;
                L.var_depth = 1;
                L.allow_mult = 1;
                rc = parse_item(&L, &src->variables.items[i], SCOPE_FULL, what, &e);
                L.allow_mult = 0;
                L.var_depth = 0;
                L.var_state[i] = VAR_DONE;
            }
    }
    if (!rc) rc = compile(md, st);
    if (!rc) rc = check_mass(md, src, sets, nsets, st);
    name_index_reset();
    mbl_free(L.pvals);
    mbl_free(L.var_state);
    mbl_free(L.var_node);
    mbl_free(L.derlet);
    mbl_free(L.pmrow);
    mbl_src_free(src);
    if (rc) {
        mbl_model_free(md);
        return rc;
    }
    *out = md;
    return 0;
}

int mbl_model_load_file(const char *path, const mbl_setting *sets, int nsets, mbl_model **out, mbl_status *st)
{
    return mbl_model_load_file_opt(path, sets, nsets, NULL, out, st);
}

int mbl_model_load_file_opt(const char *path, const mbl_setting *sets, int nsets, const mbl_load_options *opt,
                            mbl_model **out, mbl_status *st)
{
    if (!out) return mbl_error(st, MBL_EARG, "mbl_model_load_file: out is NULL");
    *out = NULL;
    if (!path) return mbl_error(st, MBL_EARG, "mbl_model_load_file: path is NULL");
    mbl_load_options lim;
    mbl_load_options_default(&lim);
    if (opt) lim = *opt;
    FILE *f = fopen(path, "rb");
    if (!f) return mbl_error(st, MBL_EIO, "%s: cannot open the model file (%s)", path, strerror(errno));
    /* only regular files: a directory reads as an error, a device or a pipe may never end */
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        int dir = S_ISDIR(sb.st_mode);
        fclose(f);
        return mbl_error(st, MBL_EIO, "%s: %s, not a model file", path,
                         dir ? "is a directory" : "is not a regular file (a device, pipe or socket)");
    }
    if ((uintmax_t)sb.st_size > (uintmax_t)lim.max_file_size) {
        fclose(f);
        return mbl_error(st, MBL_EIO, "%s: the file has %jd bytes, more than the limit of %zu bytes", path,
                         (intmax_t)sb.st_size, lim.max_file_size);
    }
    size_t cap = (size_t)sb.st_size + 1, len = 0;
    char *buf = mbl_malloc(cap);
    if (!buf) {
        fclose(f);
        return mbl_error(st, MBL_ENOMEM, "out of memory reading %s", path);
    }
    for (;;) { /* the file may grow while it is read: bounded all the same */
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (len < cap) break;
        if (len > lim.max_file_size) {
            mbl_free(buf);
            fclose(f);
            return mbl_error(st, MBL_EIO, "%s: the file is larger than the limit of %zu bytes", path,
                             lim.max_file_size);
        }
        char *nb = mbl_realloc(buf, cap * 2);
        if (!nb) {
            mbl_free(buf);
            fclose(f);
            return mbl_error(st, MBL_ENOMEM, "out of memory reading %s", path);
        }
        buf = nb;
        cap *= 2;
    }
    int err = ferror(f);
    fclose(f);
    if (err) {
        mbl_free(buf);
        return mbl_error(st, MBL_EIO, "%s: read error", path);
    }
    int rc = mbl_model_load_string_opt(buf, len, path, sets, nsets, &lim, out, st);
    mbl_free(buf);
    return rc;
}

static void free_names(char **names, int n)
{
    if (!names) return;
    for (int i = 0; i < n; i++) mbl_free(names[i]);
    mbl_free(names);
}

void mbl_model_free(mbl_model *md)
{
    if (!md) return;
    free_exprs(md);
    free_names(md->kin_body, md->nkin);
    mbl_free(md->kin);
    mblx_graph_free(md->g);
    mblx_tape_free(md->tape_F);
    mblx_tape_free(md->tape_jac);
    mblx_tape_free(md->tape_y);
    mblx_tape_free(md->tape_us);
    mblx_tape_free(md->tape_srcx);
    mblx_tape_free(md->tape_draw);
    mbl_rtree_num_free(md->rtn);
    mbl_free(md->Fx), mbl_free(md->jx);
    mbl_pmech_num_free(md->pmn);
    mbl_sjac_free(&md->dpjac);
    free_names(md->ptname, md->ptname ? md->npt : 0);
    free_names(md->ptbody, md->ptbody ? md->npt : 0);
    free_names(md->lname, md->lname ? md->nlink : 0);
    free_names(md->ltype, md->ltype ? md->nlink : 0);
    mbl_free(md->link);
    mbl_free(md->dp);
    free_names(md->srcx_what, md->nsrcx);
    mbl_free(md->srcx);
    mbl_sjac_free(&md->usjac);
    mbl_sjac_free(&md->jac);
    mbl_sjac_free(&md->sjac);
    mbl_free(md->Fs);
    mbl_ffr_free_nodes(md);
    mbl_ffr_free_deriv(md);
    mbl_ffr_num_free(md);
    mbl_free(md->no_sens);
    mbl_sjac_free(&md->yjac);
    free_names(md->qname, md->n);
    free_names(md->rname, md->nr);
    free_names(md->yname, md->ny);
    free_names(md->cname, md->cname ? md->m : 0);
    free_names(md->pname, md->np);
    free_names(md->us_text, md->nus);
    free_names(md->uvs_text, md->nuvs);
    free_names(md->xname, md->xname ? md->nX : 0);
    free_names(md->zname, md->zname ? md->nZ : 0);
    free_names(md->eq_what, md->eq_what ? md->nX + md->nZ : 0);
    free_names(md->spd_what, md->nspd);
    mbl_free(md->X), mbl_free(md->Xd), mbl_free(md->Z), mbl_free(md->X0);
    mbl_free(md->file);
    mbl_free(md->name);
    mbl_free(md->p);
    mbl_free(md->q);
    mbl_free(md->v);
    mbl_free(md->a);
    mbl_free(md->lam);
    mbl_free(md->mu);
    mbl_free(md->r);
    mbl_free(md->pval);
    mbl_free(md->pbaked);
    mbl_free(md->sym_of_unknown);
    mbl_free(md->unknown_of_sym);
    mbl_free(md->sym_p);
    mbl_free(md->q0);
    mbl_free(md->v0);
    mbl_free(md->r0);
    mbl_free(md->v_given);
    mbl_free(md->pexpr);
    mbl_free(md->q0x);
    mbl_free(md->v0x);
    mbl_free(md->r0x);
    mbl_free(md->F);
    mbl_free(md->Fc);
    mbl_free(md->y);
    mbl_free(md->us);
    mbl_free(md->uvs);
    mbl_free(md->cyclic);
    mbl_free(md);
}

void mbl_model_get_info(const mbl_model *md, mbl_model_info *info)
{
    memset(info, 0, sizeof *info);
    if (!md) return;
    info->name = md->name;
    info->file = md->file;
    info->ncoord = md->n;
    info->nhol = md->m;
    info->nnh = md->k;
    info->ninput = md->nr;
    info->noutput = md->ny;
    info->nparam = md->np;
    info->nuser_states = md->nus;
    info->nuser_velocity_states = md->nuvs;
    info->node_states = md->nX;
    info->nimplicit = md->nZ;
    info->nspeeds = md->nspd;
    info->at = md->at;
    info->time = md->time;
}

const char *mbl_model_coord_name(const mbl_model *md, int i) { return md && i >= 0 && i < md->n ? md->qname[i] : NULL; }
const char *mbl_model_input_name(const mbl_model *md, int i) { return md && i >= 0 && i < md->nr ? md->rname[i] : NULL; }
const char *mbl_model_output_name(const mbl_model *md, int i) { return md && i >= 0 && i < md->ny ? md->yname[i] : NULL; }
const char *mbl_model_param_name(const mbl_model *md, int i) { return md && i >= 0 && i < md->np ? md->pname[i] : NULL; }
double mbl_model_param_value(const mbl_model *md, int i) { return md && i >= 0 && i < md->np ? md->pval[i] : NAN; }
const char *mbl_model_ode_state_name(const mbl_model *md, int i)
{
    return md && i >= 0 && i < md->nX ? md->xname[i] : NULL;
}
const char *mbl_model_implicit_name(const mbl_model *md, int i)
{
    return md && i >= 0 && i < md->nZ ? md->zname[i] : NULL;
}

int mbl_model_outputs(const mbl_model *md, const mbl_point *pt, double *y, mbl_status *st)
{
    if (!md || !pt || (!y && md->ny)) return mbl_error(st, MBL_EARG, "mbl_model_outputs: NULL argument");
    if (pt->n != md->n || pt->m != md->m || pt->k != md->k || pt->nr != md->nr)
        return mbl_error(st, MBL_EDIM, "mbl_model_outputs: the point does not belong to the model");
    if (!md->ny) return 0;
    size_t nout = (size_t)md->ny + (size_t)md->yjac.nz;
    double *syms = mbl_calloc((size_t)md->nsym + 1, sizeof *syms);
    double *work = mbl_alloc_array(md->work_size + 1, sizeof *work);
    double *out = mbl_alloc_array(nout + 1, sizeof *out);
    int rc = 0;
    if (!syms || !work || !out) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    if (!rc) {
        mbl_model_fill_syms_pt(md, pt, syms);
        rc = mblx_tape_eval(md->tape_y, syms, out, work, st);
        if (rc) rc = mbl_error_prefix(st, "%s: evaluating the outputs", md->file);
    }
    if (!rc) memcpy(y, out, (size_t)md->ny * sizeof *y);
    mbl_free(syms), mbl_free(work), mbl_free(out);
    return rc;
}

void mbl_model_geometry(const mbl_model *md, mbl_geometry *g)
{
    if (!g) return;
    memset(g, 0, sizeof *g);
    if (!md || !md->npt) return;
    g->npoint = md->npt;
    g->point = (const char *const *)md->ptname;
    g->body = (const char *const *)md->ptbody;
    g->nlink = md->nlink;
    g->link = md->link;
    g->link_name = (const char *const *)md->lname;
    g->link_type = (const char *const *)md->ltype;
}

int mbl_model_draw(const mbl_model *md, const mbl_point *pt, const mbl_modes *modes, double *pos, double *dre,
                   double *dim, mbl_status *st)
{
    if (!md || !pt || (!pos && md->npt)) return mbl_error(st, MBL_EARG, "mbl_model_draw: NULL argument");
    if (pt->n != md->n || pt->m != md->m || pt->k != md->k || pt->nr != md->nr)
        return mbl_error(st, MBL_EDIM, "mbl_model_draw: the point does not belong to the model");
    if (modes && modes->n != md->n)
        return mbl_error(st, MBL_EDIM, "mbl_model_draw: the modes have %d coordinates, the model %d", modes->n, md->n);
    if (!md->npt) return 0;
    /* the drawing's positions and their Jacobian are compiled on the first drawing (its dp/dq is
     * dense in a chain's joint coordinates: N^2 entries that a linearization never needs) */
    mbl_model_graph_lock(1);
    int crc = md->tape_draw ? 0 : compile_draw((mbl_model *)md, st);
    mbl_model_graph_lock(0);
    if (crc) return crc;
    int np3 = 3 * md->npt, nx = modes ? modes->nx : 0;
    size_t nout = (size_t)np3 + (size_t)md->dpjac.nz;
    double *syms = mbl_calloc((size_t)md->nsym + 1, sizeof *syms);
    double *work = mbl_alloc_array(mblx_tape_work_size(md->tape_draw) + 1, sizeof *work);
    double *out = mbl_alloc_array(nout + 1, sizeof *out);
    int rc = 0;
    if (!syms || !work || !out) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    if (!rc) {
        mbl_model_fill_syms(md, pt->t, pt->q, pt->v, pt->vdot, pt->lambda, pt->mu, pt->r, syms);
        rc = mblx_tape_eval(md->tape_draw, syms, out, work, st);
        if (rc) rc = mbl_error_prefix(st, "%s: evaluating the marker positions", md->file);
    }
    if (!rc) {
        memcpy(pos, out, (size_t)np3 * sizeof *pos);
        int q0 = mbl_model_blk0(md, MBL_BLK_Q);
        for (int k = 0; k < nx; k++) {
            double *re = dre ? dre + (size_t)np3 * k : NULL, *im = dim ? dim + (size_t)np3 * k : NULL;
            if (re) memset(re, 0, (size_t)np3 * sizeof *re);
            if (im) memset(im, 0, (size_t)np3 * sizeof *im);
            const double *sr = modes->shape_re + (size_t)md->n * k, *si = modes->shape_im + (size_t)md->n * k;
            for (int e = 0; e < md->dpjac.nz; e++) {
                int c = md->dpjac.col[e] - q0;
                if (c < 0 || c >= md->n) continue;
                double d = out[np3 + e];
                if (re) re[md->dpjac.row[e]] += d * sr[c];
                if (im) im[md->dpjac.row[e]] += d * si[c];
            }
        }
    }
    mbl_free(syms), mbl_free(work), mbl_free(out);
    return rc;
}

int mbl_model_set_param(mbl_model *md, int i, double value, mbl_status *st)
{
    if (!md) return mbl_error(st, MBL_EARG, "mbl_model_set_param: model is NULL");
    if (i < 0 || i >= md->np) return mbl_error(st, MBL_EARG, "mbl_model_set_param: no parameter %d (the model has %d)", i, md->np);
    if (!isfinite(value))
        return mbl_error(st, MBL_EARG, "%s: parameter '%s': the value is not a finite number", md->file, md->pname[i]);
    if (md->pbaked[i])
        return mbl_error(st, MBL_EARG,
                         "%s: parameter '%s' cannot be changed in place: %s (reload the model with the new value)",
                         md->file, md->pname[i],
                         md->pbaked[i] == 2 ? "a mechanism's parameters are evaluated into its geometry"
                                            : "another parameter or a value of the file (initial coordinate, "
                                              "velocity, input value, linearize.time) uses it");
    md->pval[i] = value;
    return 0;
}

int mbl_model_jac_index(const mbl_model *md, int nt, const int *tr, const int *tc, int *out, mbl_status *st)
{
    int n = md->nF, rc = 0; /* rows */
    int *rp = mbl_calloc((size_t)n + 2, sizeof *rp), *ent = mbl_alloc_array((size_t)md->jac.nz + 1, sizeof *ent);
    int *srp = mbl_calloc((size_t)n + 2, sizeof *srp), *sent = mbl_alloc_array((size_t)nt + 1, sizeof *sent);
    int *pos = mbl_alloc_array((size_t)md->nunk + 1, sizeof *pos);
    if (!rp || !ent || !srp || !sent || !pos) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto out;
    }
    for (int p = 0; p < md->jac.nz; p++)
        if (md->jac.row[p] < n) rp[md->jac.row[p] + 2]++;
    for (int i = 0; i < n; i++) rp[i + 2] += rp[i + 1];
    for (int p = 0; p < md->jac.nz; p++)
        if (md->jac.row[p] < n) ent[rp[md->jac.row[p] + 1]++] = p;
    for (int t = 0; t < nt; t++) srp[tr[t] + 2]++;
    for (int i = 0; i < n; i++) srp[i + 2] += srp[i + 1];
    for (int t = 0; t < nt; t++) sent[srp[tr[t] + 1]++] = t;
    for (int j = 0; j < md->nunk; j++) pos[j] = -1;
    for (int i = 0; i < n; i++) {
        if (srp[i] == srp[i + 1]) continue;
        for (int t = rp[i]; t < rp[i + 1]; t++) pos[md->jac.col[ent[t]]] = ent[t];
        for (int t = srp[i]; t < srp[i + 1]; t++) out[sent[t]] = pos[tc[sent[t]]];
        for (int t = rp[i]; t < rp[i + 1]; t++) pos[md->jac.col[ent[t]]] = -1;
    }
out:
    mbl_free(rp), mbl_free(ent), mbl_free(srp), mbl_free(sent), mbl_free(pos);
    return rc;
}


int mbl_model_dae_nodes(const mbl_model *md, const mblx_id **F, const mblx_id **jac, mbl_status *st)
{
    *F = md->F;
    *jac = md->jac.node;
    if (!md->rtn && !md->nffrn && !md->pmn) return 0;
    if (!md->Fx) {
        mbl_model *w = (mbl_model *)md; /* the cache: built once, under the graph lock */
        mblx_graph *g = md->g;
        int n = md->nF, rc = 0; /* rows (the numeric joints have constraint rows) */
        mblx_id zero = mblx_const(g, 0.0);
        mblx_id *Fs = mbl_alloc_array((size_t)n + 1, sizeof *Fs);
        mblx_id *Fx = mbl_alloc_array((size_t)md->nF + 1, sizeof *Fx);
        mblx_id *jx = mbl_alloc_array((size_t)md->jac.nz + 1, sizeof *jx);
        int *at = NULL;
        mbl_sjac S = {0, 0, NULL, NULL, NULL};
        if (!Fs || !Fx || !jx) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        for (int i = 0; i < n && !rc; i++) Fs[i] = zero;
        /* the term's rows and entries as expressions (a tree and flexible bodies never meet) */
        if (!rc) rc = md->rtn ? mbl_rtree_num_exprs(md, md->rtn, Fs, &S, st) : mbl_ffr_num_exprs(w, Fs, &S, st);
        if (!rc && md->pmn) rc = mbl_pmech_num_exprs(w, md->pmn, Fs, &S, st);
        if (!rc && !(at = mbl_alloc_array((size_t)S.nz + 1, sizeof *at))) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        /* each entry at its (row, column) of md->jac (mbl_rtree_num_pattern and mbl_ffr_num_bind put
         * every one there) */
        if (!rc) rc = mbl_model_jac_index(md, S.nz, S.row, S.col, at, st);
        if (!rc) {
            memcpy(Fx, md->F, (size_t)md->nF * sizeof *Fx);
            memcpy(jx, md->jac.node, (size_t)md->jac.nz * sizeof *jx);
            for (int i = 0; i < n; i++)
                if (Fs[i] != zero) Fx[i] = mblx_add(g, Fx[i], Fs[i]);
            for (int p = 0; p < S.nz && !rc; p++) {
                if (at[p] < 0)
                    rc = mbl_error(st, MBL_EMODEL, "internal: the structured term's entry (%d, %d) is not in the Jacobian",
                                   S.row[p], S.col[p]);
                else
                    jx[at[p]] = mblx_add(g, jx[at[p]], S.node[p]);
            }
            if (!rc) rc = mblx_graph_status(g, st);
        }
        mbl_sjac_free(&S);
        mbl_free(Fs), mbl_free(at);
        if (rc) {
            mbl_free(Fx), mbl_free(jx);
            return rc;
        }
        w->Fx = Fx;
        w->jx = jx;
    }
    *F = md->Fx;
    *jac = md->jx;
    return 0;
}
