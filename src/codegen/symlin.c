/* Symbolic linear models in the parameters: source 002's H_x reduction (Ge et al., Eq. 15-64) on
 * the canonical DAE of a loaded model, in a graph of its own (include/mblin/codegen.h).
 *
 * Unknowns of the source: q = [S; y] (S the states, coordinates; y the dependent ones), lambda.
 * At a point at rest the linearized equations of motion R(vdot, lambda, v, q, r) = 0 give
 *     R_vdot dvdot + R_lambda dlambda + R_v dv + R_q dq + R_r dr = 0,   Phi_q dq = 0,
 * and with dq = H dS, H = [I; -Phi_y^-1 Phi_S] (H^T R_lambda = H^T Phi_q^T = 0):
 *     M-hat = H^T R_vdot H, C-hat = H^T R_v H, K-hat = H^T R_q H, F = -H^T R_r   (Eq. 52-58).
 * lambda(q, p, r) solves the dependent rows R_y = 0 at rest (linear in lambda). Every inverse is a
 * symbolic Gaussian elimination with pivots chosen by their values at the model's point.
 *
 * This file: the model's expressions copied into the new graph and the reduction at rest; the
 * elimination is symlin_elim.c, points with motion and state functions symlin_moving.c, the
 * specialization for printing symlin_special.c, the Newton iteration symlin_newton.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/symlin_internal.h"
#include "model/model_view.h"

#define SYMLIN_MAX_NODES_DEFAULT 2000000
/* The graph may grow to this many times max_nodes while the reduction works (intermediate nodes
 * that the result does not keep) before it stops (issue 30, item 17). */
#define SYMLIN_WORK_FACTOR 8

/* The expression nodes the reduction would build, estimated before any is built from the sizes of
 * the numeric linear model at the point (issue 30, item 17): the elimination of M-hat for A and B
 * (nnz(M-hat) (2z + nx_ode + nr) multiply-adds), the congruences H^T X H (3 z nnz(H)), the
 * eliminations of the constraints as a band of the constraint Jacobian's nonzeros per row r
 * (nphi: nnz(Phi_q)): m r^2 + m r z at rest; with motion or state functions the n x n stacked
 * Jacobian (r of its rows with the z state rows) against 4z columns: n r^2 + 4 n r z; and the ODE
 * rows ((n + nX + nZ)^3 / 3 + (n + nX + nZ)^2 (2z + nX + nr)). A fill beyond the band is what the
 * work limit (symlin_work_check) is for. */
static double symlin_estimate(const mbl_linear *lin, int n, int m, int nX, int nZ, int nr, int general, double nphi)
{
    int z = lin->z0;
    double nM = 0, nH = 0, zd = z, nd = n, md = m;
    if (lin->M)
        for (size_t i = 0; i < (size_t)lin->z1 * lin->z1; i++) nM += lin->M[i] != 0.0;
    else nM = zd * zd;
    if (lin->q_S)
        for (size_t i = 0; i < (size_t)n * z; i++) nH += lin->q_S[i] != 0.0;
    else nH = nd * zd;
    double est = nM * (2.0 * zd + nr) + 3.0 * zd * nH;
    double r = general ? (nphi + zd * nd) / (nd > 0 ? nd : 1) : nphi / (md > 0 ? md : 1);
    est += general ? nd * r * r + 4.0 * nd * r * zd : md * r * r + md * r * zd;
    if (nX + nZ) {
        double ne = nd + nX + nZ;
        est += ne * ne * ne / 3.0 + ne * ne * (2.0 * zd + nX + nr);
    }
    return est;
}

/* The work limit: the graph's nodes against SYMLIN_WORK_FACTOR times max_nodes, checked between the
 * reduction's steps and inside its long loops (the Jacobians, row by row). */
static int symlin_work_check(const mblx_graph *g, size_t max_nodes, const char *step, mbl_status *st)
{
    size_t nn = mblx_node_count(g);
    if ((double)nn <= (double)SYMLIN_WORK_FACTOR * (double)max_nodes) return 0;
    return mbl_error(st, MBL_EMODEL,
                     "the symbolic linear model's work limit was reached in %s (%zu expression nodes built; limit "
                     "%d x %zu)", step, nn, SYMLIN_WORK_FACTOR, max_nodes);
}

static char *dupstr(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = mbl_alloc_array(n, 1);
    if (d) memcpy(d, s, n);
    return d;
}

static void free_names(char **v, int n)
{
    if (!v) return;
    for (int i = 0; i < n; i++) mbl_free(v[i]);
    mbl_free(v);
}

void mbl_symlin_free(mbl_symlin *sl)
{
    if (!sl) return;
    mblx_graph_free(sl->g);
    free_names(sl->pname, sl->np);
    free_names(sl->qname, sl->nq > sl->n ? sl->nq : sl->n);
    free_names(sl->rname, sl->nr);
    free_names(sl->yname, sl->ny);
    free_names(sl->state_names, sl->nx);
    mbl_free(sl->pval);
    mbl_free(sl->pkept);
    mbl_free(sl->qval);
    mbl_free(sl->rval);
    mbl_free(sl->sidx);
    mbl_free(sl->p);
    mbl_free(sl->q);
    mbl_free(sl->r);
    mbl_free(sl->lam);
    mbl_free(sl->H);
    mbl_free(sl->M);
    mbl_free(sl->Cd);
    mbl_free(sl->K);
    mbl_free(sl->F);
    mbl_free(sl->A);
    mbl_free(sl->B);
    mbl_free(sl->C);
    mbl_free(sl->D);
    mbl_free(sl->res);
    mbl_free(sl->qpoint);
    mbl_free(sl->v);
    mbl_free(sl->vval);
    mbl_free(sl->acc);
    mbl_free(sl->R);
    mbl_free(sl->Phi);
    mbl_free(sl->asym);
    mbl_free(sl->lsym);
    mbl_free(sl->nunk);
    mbl_free(sl->nres);
    mbl_free(sl->njac);
    mbl_free(sl->nstep);
    mbl_free(sl);
}

/* ---- copying the model's expressions into the new graph ------------------------------------- */

typedef struct copier {
    const mblx_graph *src;
    mblx_graph *dst;
    mblx_id *map;       /* src handle -> dst handle (MBLX_NONE: not yet) */
    mblx_id *symmap;    /* src symbol index -> dst node */
} copier;

static mblx_id copy_node(copier *c, mblx_id root, mbl_status *st)
{
    if (c->map[root] != MBLX_NONE) return c->map[root];
    /* explicit stack, post-order */
    size_t cap = 64, top = 0;
    mblx_id *stack = mbl_alloc_array(cap, sizeof *stack);
    mblx_id args[8];
    mblx_id *big = NULL;
    size_t bigcap = 0;
    if (!stack) return MBLX_NONE;
    stack[top++] = root;
    while (top) {
        mblx_id e = stack[top - 1];
        if (c->map[e] != MBLX_NONE) {
            top--;
            continue;
        }
        int na = mblx_node_nargs(c->src, e), pending = 0;
        for (int i = 0; i < na; i++) {
            mblx_id a = mblx_node_arg(c->src, e, i);
            if (c->map[a] == MBLX_NONE) {
                if (top == cap) {
                    mblx_id *ns = mbl_realloc(stack, 2 * cap * sizeof *stack);
                    if (!ns) goto oom;
                    stack = ns, cap *= 2;
                }
                stack[top++] = a;
                pending = 1;
            }
        }
        if (pending) continue;
        top--;
        mblx_op op = mblx_node_op(c->src, e);
        mblx_id r;
        if (op == MBLX_OP_CONST) {
            r = mblx_const(c->dst, mblx_node_value(c->src, e));
        } else if (op == MBLX_OP_SYMBOL) {
            r = c->symmap[mblx_symbol_index(c->src, e)];
        } else {
            mblx_id *av = args;
            if (na > 8) {
                if ((size_t)na > bigcap) {
                    mblx_id *nb = mbl_realloc(big, (size_t)na * sizeof *nb);
                    if (!nb) goto oom;
                    big = nb, bigcap = (size_t)na;
                }
                av = big;
            }
            for (int i = 0; i < na; i++) av[i] = c->map[mblx_node_arg(c->src, e, i)];
            r = mblx_apply(c->dst, op, mblx_node_value(c->src, e), (size_t)na, av);
        }
        if (r == MBLX_NONE) break;
        c->map[e] = r;
    }
    mbl_free(stack);
    mbl_free(big);
    return c->map[root];
oom:
    mbl_free(stack);
    mbl_free(big);
    mbl_error(st, MBL_ENOMEM, "out of memory");
    return MBLX_NONE;
}

size_t mbl_symlin_size(const mbl_symlin *sl)
{
    size_t nn = mblx_node_count(sl->g);
    unsigned char *mark = mbl_calloc(nn + 1, 1);
    if (!mark) return 0;
    size_t cap = 1024, top = 0, count = 0;
    mblx_id *stack = mbl_alloc_array(cap, sizeof *stack);
    const mblx_id *mats[] = {sl->A, sl->B, sl->C, sl->D, sl->M, sl->Cd, sl->K, sl->F, sl->H};
    size_t lens[] = {(size_t)sl->nx * sl->nx, (size_t)sl->nx * sl->nr, (size_t)sl->ny * sl->nx,
                     (size_t)sl->ny * sl->nr, (size_t)sl->z * sl->z, (size_t)sl->z * sl->z,
                     (size_t)sl->z * sl->z, (size_t)sl->z * sl->nr, (size_t)sl->n * sl->z};
    for (int mi = 0; stack && mi < 9; mi++)
        for (size_t i = 0; i < lens[mi]; i++) {
            mblx_id r = mats[mi][i];
            if (r == MBLX_NONE || mark[r]) continue;
            mark[r] = 1, count++;
            stack[top++] = r;
            while (top) {
                mblx_id e = stack[--top];
                int na = mblx_node_nargs(sl->g, e);
                for (int k = 0; k < na; k++) {
                    mblx_id a = mblx_node_arg(sl->g, e, k);
                    if (mark[a]) continue;
                    mark[a] = 1, count++;
                    if (top == cap) {
                        mblx_id *ns = mbl_realloc(stack, 2 * cap * sizeof *stack);
                        if (!ns) {
                            mbl_free(stack), mbl_free(mark);
                            return 0;
                        }
                        stack = ns, cap *= 2;
                    }
                    stack[top++] = a;
                }
            }
        }
    mbl_free(stack);
    mbl_free(mark);
    return count;
}

/* ---- the reduction at rest ------------------------------------------------------------------- */

/* One reduction: the model, its point and the library's linear model there (its states), the
 * symbolic model being built and the expressions its steps share (build_free). */
typedef struct build {
    const model_view *md;    /* the model's data (model/model_view.h) */
    const mbl_point *pt;
    const mbl_linear *lin;
    mbl_symlin *sl;
    int n, m, z;
    int general;             /* 1: a point with motion or state functions (codegen_build_moving) */
    int *usidx;              /* z: the file's state function of each state, -1 for a coordinate */
    mblx_id *sexpr;          /* z: the state functions s(q) */
    /* the model's symbols and nodes in the new graph; v, vdot, lambda symbols; R, Phi, outputs */
    mblx_id *symmap, *map, *vs, *as, *ls, *R, *Phi, *Y;
    /* at rest: the Jacobians of R and Phi, their values and the eliminations' matrices */
    mblx_id *Ma, *Rv, *Rq, *Rl, *Rr, *Pq;
    double *sv, *vals;
    mblx_id *Py, *Rhs, *Ly;
    mblx_id *rest_syms, *rest_zero; /* v, vdot and the zeros they become at rest */
    int *dep;                /* m: the dependent coordinates (not states) */
    /* user ODE states X and implicit variables Z (symlin_ode.c) */
    const mbl_model *model;
    int nX, nZ;
    mblx_id *Ode;            /* n + nX + nZ: R, then the ODEs d and the implicit variables' equations */
    mblx_id *Xd;             /* nX: the symbols der(X) */
    size_t max_nodes;        /* the result's limit (symlin_work_check) */
    int dyn_outputs;         /* 1: some output uses accelerations or multipliers (symlin_outputs.c) */
} build;

static void build_free(build *b)
{
    mbl_free(b->symmap), mbl_free(b->map), mbl_free(b->vs), mbl_free(b->as), mbl_free(b->ls), mbl_free(b->R);
    mbl_free(b->Phi), mbl_free(b->Y), mbl_free(b->Ma), mbl_free(b->Rv), mbl_free(b->Rq), mbl_free(b->Rl);
    mbl_free(b->Rr), mbl_free(b->Pq), mbl_free(b->sv), mbl_free(b->vals), mbl_free(b->Py), mbl_free(b->Ly);
    mbl_free(b->Rhs), mbl_free(b->rest_zero), mbl_free(b->rest_syms), mbl_free(b->dep);
    mbl_free(b->usidx), mbl_free(b->sexpr), mbl_free(b->Ode), mbl_free(b->Xd);
}

/* The symbolic model's sizes, names and the model's values at the point. */
static int build_names(build *b, mbl_status *st)
{
    const model_view *md = b->md;
    const mbl_point *pt = b->pt;
    const mbl_linear *lin = b->lin;
    mbl_symlin *sl = b->sl;
    int n = b->n, z = b->z;
    int nq = n + b->nX + b->nZ;
    sl->n = n, sl->m = b->m, sl->np = md->np, sl->nr = md->nr, sl->ny = md->ny, sl->z = z, sl->nx = 2 * z + b->nX;
    sl->nq = nq;
    sl->t = pt->t;
    sl->at = (int)pt->at;
    size_t N1 = (size_t)nq + 1;
    sl->g = mblx_graph_new();
    if (sl->g) (void)mblx_data_copy(sl->g, md->g); /* spline/table nodes keep their data sets (an error is sticky) */
    sl->pname = mbl_calloc((size_t)md->np + 1, sizeof(char *));
    sl->qname = mbl_calloc(N1, sizeof(char *));
    sl->rname = mbl_calloc((size_t)md->nr + 1, sizeof(char *));
    sl->yname = mbl_calloc((size_t)md->ny + 1, sizeof(char *));
    sl->state_names = mbl_calloc((size_t)sl->nx + 1, sizeof(char *));
    sl->pval = mbl_calloc((size_t)md->np + 1, sizeof(double));
    sl->qval = mbl_calloc(N1, sizeof(double));
    sl->rval = mbl_calloc((size_t)md->nr + 1, sizeof(double));
    sl->sidx = mbl_calloc((size_t)z + 1, sizeof(int));
    sl->p = mbl_calloc((size_t)md->np + 1, sizeof(mblx_id));
    sl->q = mbl_calloc(N1, sizeof(mblx_id));
    sl->r = mbl_calloc((size_t)md->nr + 1, sizeof(mblx_id));
    if (!sl->g || !sl->pname || !sl->qname || !sl->rname || !sl->yname || !sl->state_names || !sl->pval ||
        !sl->qval || !sl->rval || !sl->sidx || !sl->p || !sl->q || !sl->r)
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int i = 0; i < md->np; i++) sl->pname[i] = dupstr(md->pname[i]), sl->pval[i] = md->pval[i];
    for (int i = 0; i < n; i++) sl->qname[i] = dupstr(md->qname[i]), sl->qval[i] = pt->q[i];
    for (int j = 0; j < b->nX; j++)
        sl->qname[n + j] = dupstr(mbl_model_ode_state_name(b->model, j)), sl->qval[n + j] = pt->X[j];
    for (int j = 0; j < b->nZ; j++)
        sl->qname[n + b->nX + j] = dupstr(mbl_model_implicit_name(b->model, j)), sl->qval[n + b->nX + j] = pt->Z[j];
    for (int i = 0; i < nq; i++)
        if (!sl->qname[i]) return mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int i = 0; i < md->nr; i++) sl->rname[i] = dupstr(md->rname[i]), sl->rval[i] = pt->r[i];
    for (int i = 0; i < md->ny; i++) sl->yname[i] = dupstr(md->yname[i]);
    for (int i = 0; i < sl->nx; i++) sl->state_names[i] = dupstr(lin->state_names[i]);
    return 0;
}

/* The states: coordinates (sidx), or the file's state functions s(q) (usidx, e.g. joint measures). */
static int build_states(build *b, mbl_status *st)
{
    const model_view *md = b->md;
    const mbl_linear *lin = b->lin;
    mbl_symlin *sl = b->sl;
    int n = b->n, z = b->z;
    /* states: coordinates (sidx), or the file's state functions s(q) (usidx, e.g. joint measures) */
    int *usidx = b->usidx = mbl_alloc_array((size_t)z + 1, sizeof *usidx);
    if (!usidx) return mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int s = 0; s < z; s++) {
        sl->sidx[s] = -1, usidx[s] = -1;
        for (int i = 0; i < n; i++)
            if (!strcmp(lin->state_names[s], md->qname[i])) sl->sidx[s] = i;
        for (int k = 0; sl->sidx[s] < 0 && k < md->nus; k++)
            if (!strcmp(lin->state_names[s], md->us_text[k])) usidx[s] = k;
        if (sl->sidx[s] < 0 && usidx[s] < 0)
            return mbl_error(st, MBL_EMODEL, "symbolic linear models: the state %s is neither a coordinate nor a state "
                             "function of the file", lin->state_names[s]);
        b->general |= usidx[s] >= 0;
    }
    return 0;
}

/* The symbols of the new graph (v, vdot, lambda get names no user name can have) and the model's
 * symbols mapped to them; the arrays of the copy and the reduction. */
static int build_symbols(build *b, mbl_status *st)
{
    const model_view *md = b->md;
    const mbl_point *pt = b->pt;
    mbl_symlin *sl = b->sl;
    mblx_graph *g = sl->g;
    int n = b->n, m = b->m;
    size_t N1 = (size_t)n + 1;
    /* symbols of the new graph; v, vdot, lambda get names no user name can have */
    size_t nsym = mblx_symbol_count(md->g);
    mblx_id *symmap = b->symmap = mbl_alloc_array(nsym + 1, sizeof *symmap);
    mblx_id *map = b->map = mbl_alloc_array(mblx_node_count(md->g) + 1, sizeof *map);
    mblx_id *vs = b->vs = mbl_alloc_array(N1, sizeof *vs), *as = b->as = mbl_alloc_array(N1, sizeof *as);
    mblx_id *ls = b->ls = mbl_alloc_array((size_t)m + 1, sizeof *ls);
    b->R = mbl_alloc_array(N1, sizeof *b->R), b->Phi = mbl_alloc_array((size_t)m + 1, sizeof *b->Phi);
    b->Y = mbl_alloc_array((size_t)md->ny + 1, sizeof *b->Y);
    size_t nn = (size_t)n * n + 1;
    b->Ma = mbl_alloc_array(nn, sizeof(mblx_id)), b->Rv = mbl_alloc_array(nn, sizeof(mblx_id)),
    b->Rq = mbl_alloc_array(nn, sizeof(mblx_id));
    b->Rl = mbl_alloc_array((size_t)n * m + 1, sizeof(mblx_id));
    b->Rr = mbl_alloc_array((size_t)n * md->nr + 1, sizeof(mblx_id));
    b->Pq = mbl_alloc_array((size_t)m * n + 1, sizeof(mblx_id));
    if (!symmap || !map || !vs || !as || !ls || !b->R || !b->Phi || !b->Y || !b->Ma || !b->Rv || !b->Rq || !b->Rl ||
        !b->Rr || !b->Pq)
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    for (size_t i = 0; i < nsym; i++) symmap[i] = MBLX_NONE;
    for (size_t i = 0; i < mblx_node_count(md->g); i++) map[i] = MBLX_NONE;
    char buf[64];
    /* the ODE states X, their derivatives and the implicit variables: symbols of their names (the
     * model's own symbols of these names map to them below) */
    b->Xd = mbl_alloc_array((size_t)b->nX + 1, sizeof *b->Xd);
    if (!b->Xd) return mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int j = n; j < sl->nq; j++) sl->q[j] = mblx_symbol(g, sl->qname[j]);
    for (int j = 0; j < b->nX; j++) {
        char *dn = mbl_alloc_array(strlen(sl->qname[n + j]) + 8, 1);
        if (!dn) return mbl_error(st, MBL_ENOMEM, "out of memory");
        sprintf(dn, "der(%s)", sl->qname[n + j]);
        b->Xd[j] = mblx_symbol(g, dn);
        mbl_free(dn);
    }
    for (int i = 0; i < md->np; i++) symmap[mblx_symbol_index(md->g, md->p[i])] = sl->p[i] = mblx_symbol(g, md->pname[i]);
    for (int i = 0; i < n; i++) {
        symmap[mblx_symbol_index(md->g, md->q[i])] = sl->q[i] = mblx_symbol(g, md->qname[i]);
        snprintf(buf, sizeof buf, "der(%s)", md->qname[i]);
        symmap[mblx_symbol_index(md->g, md->v[i])] = vs[i] = mblx_symbol(g, buf);
        snprintf(buf, sizeof buf, "@a%d", i);
        symmap[mblx_symbol_index(md->g, md->a[i])] = as[i] = mblx_symbol(g, buf);
    }
    for (int j = 0; j < m; j++) {
        snprintf(buf, sizeof buf, "@l%d", j);
        symmap[mblx_symbol_index(md->g, md->lam[j])] = ls[j] = mblx_symbol(g, buf);
    }
    for (int j = 0; j < md->nr; j++) symmap[mblx_symbol_index(md->g, md->r[j])] = sl->r[j] = mblx_symbol(g, md->rname[j]);
    symmap[mblx_symbol_index(md->g, md->t)] = mblx_const(g, pt->t);
    for (size_t i = 0; i < nsym; i++)
        if (symmap[i] == MBLX_NONE) symmap[i] = mblx_symbol(g, mblx_symbol_name(md->g, mblx_symbol_node(md->g, i)));
    return 0;
}

/* R, Phi, the outputs and the state functions copied into the new graph (Fn: the model's residual
 * rows as expressions); the outputs checked; what the Newton iteration needs kept in sl. */
static int build_copy(build *b, const mblx_id *Fn, mbl_status *st)
{
    const model_view *md = b->md;
    const mbl_point *pt = b->pt;
    mbl_symlin *sl = b->sl;
    mblx_graph *g = sl->g;
    int n = b->n, m = b->m, z = b->z, rc = 0;
    size_t N1 = (size_t)n + 1;
    mblx_id *R = b->R, *Phi = b->Phi, *Y = b->Y, *vs = b->vs, *as = b->as, *ls = b->ls;
    copier cp = {md->g, g, b->map, b->symmap};
    for (int i = 0; i < n && !rc; i++)
        if ((R[i] = copy_node(&cp, Fn[md->row0[MBL_ROW_EOM] + i], st)) == MBLX_NONE) rc = -1;
    for (int j = 0; j < m && !rc; j++)
        if ((Phi[j] = copy_node(&cp, Fn[md->row0[MBL_ROW_PHI] + j], st)) == MBLX_NONE) rc = -1;
    for (int j = 0; j < md->ny && !rc; j++)
        if ((Y[j] = copy_node(&cp, md->y[j], st)) == MBLX_NONE) rc = -1;
    if (!rc && b->nX + b->nZ) { /* the ODEs and the implicit variables' equations (symlin_ode.c) */
        b->Ode = mbl_alloc_array((size_t)(n + b->nX + b->nZ) + 1, sizeof *b->Ode);
        if (!b->Ode) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        for (int i = 0; !rc && i < n; i++) b->Ode[i] = R[i];
        for (int j = 0; !rc && j < b->nX; j++)
            if ((b->Ode[n + j] = copy_node(&cp, Fn[md->row0[MBL_ROW_ODE] + j], st)) == MBLX_NONE) rc = -1;
        for (int j = 0; !rc && j < b->nZ; j++)
            if ((b->Ode[n + b->nX + j] = copy_node(&cp, Fn[md->row0[MBL_ROW_VAR] + j], st)) == MBLX_NONE) rc = -1;
    }
    mblx_id *sexpr = b->sexpr = mbl_alloc_array((size_t)z + 1, sizeof *sexpr);
    if (!sexpr && !rc) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int s = 0; s < z && !rc; s++) {
        sexpr[s] = sl->sidx[s] >= 0 ? sl->q[sl->sidx[s]] : copy_node(&cp, md->us[b->usidx[s]], st);
        if (sexpr[s] == MBLX_NONE) rc = -1;
    }
    if (rc) return st && st->code ? st->code : mblx_graph_status(g, st);
    /* outputs of accelerations or multipliers: without ODE states (symlin_outputs.c at rest with
     * coordinate states, symlin_moving.c otherwise); with them refused */
    for (int j = 0; j < md->ny; j++)
        for (int i = 0; i < n; i++)
            if (mblx_depends(g, Y[j], as[i]) || (i < m && mblx_depends(g, Y[j], ls[i]))) {
                b->dyn_outputs = 1;
                if (b->nX + b->nZ)
                    return mbl_error(st, MBL_EMODEL,
                                     "symbolic linear models: output %s depends on accelerations or multipliers, "
                                     "not taken with ode states or implicit variables (yet); drop it with --outputs",
                                     md->yname[j]);
            }
    /* kept for the Newton iteration (mbl_symlin_newton) */
    sl->R = mbl_alloc_array(N1, sizeof(mblx_id)), sl->Phi = mbl_alloc_array((size_t)m + 1, sizeof(mblx_id));
    sl->v = mbl_alloc_array(N1, sizeof(mblx_id)), sl->asym = mbl_alloc_array(N1, sizeof(mblx_id));
    sl->lsym = mbl_alloc_array((size_t)m + 1, sizeof(mblx_id)), sl->vval = mbl_alloc_array(N1, sizeof(double));
    if (!sl->R || !sl->Phi || !sl->v || !sl->asym || !sl->lsym || !sl->vval)
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    memcpy(sl->R, R, (size_t)n * sizeof *R), memcpy(sl->Phi, Phi, (size_t)m * sizeof *Phi);
    memcpy(sl->v, vs, (size_t)n * sizeof *vs), memcpy(sl->asym, as, (size_t)n * sizeof *as);
    memcpy(sl->lsym, ls, (size_t)m * sizeof *ls), memcpy(sl->vval, pt->v, (size_t)n * sizeof(double));
    return 0;
}

#define REST(e) mblx_subst(g, (e), 2 * (size_t)n, rest_syms, rest_zero)

/* The Jacobians of R and Phi at rest (v = 0, vdot = 0) and the dependent coordinates. */
static int rest_jacobians(build *b, mbl_status *st)
{
    const model_view *md = b->md;
    mbl_symlin *sl = b->sl;
    mblx_graph *g = sl->g;
    int n = b->n, m = b->m, z = b->z;
    size_t N1 = (size_t)n + 1;
    const mblx_id *R = b->R, *Phi = b->Phi, *vs = b->vs, *as = b->as, *ls = b->ls;
    mblx_id *Ma = b->Ma, *Rv = b->Rv, *Rq = b->Rq, *Rl = b->Rl, *Rr = b->Rr, *Pq = b->Pq;
    /* Jacobians, then rest: v = 0, vdot = 0 */
    mblx_id *rest_syms = b->rest_syms = mbl_alloc_array(2 * N1, sizeof(mblx_id));
    mblx_id *rest_zero = b->rest_zero = mbl_alloc_array(2 * N1, sizeof(mblx_id));
    if (!rest_syms || !rest_zero) return mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int i = 0; i < n; i++) rest_syms[i] = vs[i], rest_syms[n + i] = as[i];
    for (int i = 0; i < 2 * n; i++) rest_zero[i] = mblx_const(g, 0.0);
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++) {
            Ma[i + (size_t)j * n] = REST(mblx_diff(g, R[i], as[j]));
            Rv[i + (size_t)j * n] = REST(mblx_diff(g, R[i], vs[j]));
            Rq[i + (size_t)j * n] = REST(mblx_diff(g, R[i], sl->q[j]));
        }
        int rc = symlin_work_check(g, b->max_nodes, "the Jacobians of the equations of motion", st);
        if (rc) return rc;
    }
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < m; j++) Rl[i + (size_t)j * n] = REST(mblx_diff(g, R[i], ls[j]));
        for (int j = 0; j < md->nr; j++) Rr[i + (size_t)j * n] = REST(mblx_diff(g, R[i], sl->r[j]));
    }
    for (int j = 0; j < m; j++)
        for (int i = 0; i < n; i++) Pq[j + (size_t)i * m] = mblx_diff(g, Phi[j], sl->q[i]);
    /* dependent coordinates: those that are not states */
    int *dep = b->dep = mbl_alloc_array((size_t)m + 1, sizeof *dep);
    if (!dep) return mbl_error(st, MBL_ENOMEM, "out of memory");
    int nd = 0;
    for (int i = 0; i < n; i++) {
        int isstate = 0;
        for (int s = 0; s < z; s++) isstate |= sl->sidx[s] == i;
        if (!isstate) dep[nd++] = i;
    }
    return 0;
}

/* The symbols' values at the point; lambda(q, p, r) from the dependent rows of R at rest, H =
 * [I; -Phi_y^-1 Phi_S], and the equilibrium residuals. */
static int rest_lambda_h(build *b, mbl_status *st)
{
    const model_view *md = b->md;
    const mbl_point *pt = b->pt;
    mbl_symlin *sl = b->sl;
    mblx_graph *g = sl->g;
    int n = b->n, m = b->m, z = b->z, rc = 0;
    const mblx_id *R = b->R, *Phi = b->Phi, *ls = b->ls, *Rl = b->Rl, *Pq = b->Pq, *rest_syms = b->rest_syms;
    mblx_id *rest_zero = b->rest_zero;
    const int *dep = b->dep;
    /* values of every symbol at the point */
    size_t gs = mblx_symbol_count(g) + 16;
    double *sv = b->sv = mbl_calloc(gs, sizeof *sv);
    double *vals = b->vals = mbl_alloc_array((size_t)m * m + (size_t)n + 1, sizeof *vals);
    mblx_id *Py = b->Py = mbl_alloc_array((size_t)m * m + 1, sizeof *Py);
    mblx_id *Ly = b->Ly = mbl_alloc_array((size_t)m * m + 1, sizeof *Ly);
    mblx_id *Rhs = b->Rhs = mbl_alloc_array((size_t)m * (z > 1 ? z : 1) + (size_t)m + 1, sizeof *Rhs);
    sl->H = mbl_alloc_array((size_t)n * z + 1, sizeof(mblx_id));
    sl->lam = mbl_alloc_array((size_t)m + 1, sizeof(mblx_id));
    if (!sv || !vals || !Py || !Ly || !Rhs || !sl->H || !sl->lam) return mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int i = 0; i < md->np; i++) sv[mblx_symbol_index(g, sl->p[i])] = md->pval[i];
    for (int i = 0; i < sl->nq; i++) sv[mblx_symbol_index(g, sl->q[i])] = sl->qval[i];
    for (int i = 0; i < md->nr; i++) sv[mblx_symbol_index(g, sl->r[i])] = pt->r[i];
    for (int j = 0; j < m; j++) sv[mblx_symbol_index(g, ls[j])] = pt->lambda[j];
    /* lambda(q, p, r): R_y(lambda) = R_y(0) + R_lambda,y lambda = 0 */
    for (int a = 0; a < m; a++) {
        int i = dep[a];
        for (int j = 0; j < m; j++) Ly[a + (size_t)j * m] = Rl[i + (size_t)j * n];
        mblx_id r0 = REST(R[i]);
        for (int j = 0; j < m; j++) r0 = mblx_subst(g, r0, 1, &ls[j], &rest_zero[0]);
        Rhs[a] = mblx_neg(g, r0);
    }
    rc = codegen_eval_nodes(g, (size_t)m * m, Ly, sv, vals, st);
    if (!rc) rc = codegen_sym_solve(g, m, Ly, vals, 1, Rhs, "the multiplier block of the dependent equations", st);
    if (!rc) {
        for (int j = 0; j < m; j++) sl->lam[j] = Rhs[j];
        /* H = [I; -Phi_y^-1 Phi_S] */
        for (int a = 0; a < m; a++)
            for (int c = 0; c < m; c++) Py[a + (size_t)c * m] = Pq[a + (size_t)dep[c] * m];
        for (int a = 0; a < m; a++)
            for (int s = 0; s < z; s++) Rhs[a + (size_t)s * m] = mblx_neg(g, Pq[a + (size_t)sl->sidx[s] * m]);
        rc = codegen_eval_nodes(g, (size_t)m * m, Py, sv, vals, st);
    }
    if (!rc) rc = codegen_sym_solve(g, m, Py, vals, z, Rhs, "Phi_y (the constraint Jacobian of the dependent coordinates)", st);
    if (!rc) {
        for (size_t i = 0; i < (size_t)n * z; i++) sl->H[i] = mblx_const(g, 0.0);
        for (int s = 0; s < z; s++) {
            sl->H[sl->sidx[s] + (size_t)s * n] = mblx_const(g, 1.0);
            for (int a = 0; a < m; a++) sl->H[dep[a] + (size_t)s * n] = Rhs[a + (size_t)s * m];
        }
        /* the equilibrium residuals Phi(q), R(q, lambda(q)) at rest */
        sl->res = mbl_alloc_array((size_t)m + n + 1, sizeof(mblx_id));
        if (!sl->res) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        for (int j = 0; !rc && j < m; j++) sl->res[j] = Phi[j];
        for (int i = 0; !rc && i < n; i++) sl->res[m + i] = mblx_subst(g, REST(R[i]), (size_t)m, ls, sl->lam);
    }
    return rc;
}

/* lambda(q) substituted; M-hat, C-hat, K-hat = H^T (R_vdot, R_v, R_q) H, F = -H^T R_r; A and B. */
static int rest_matrices(build *b, mbl_status *st)
{
    const model_view *md = b->md;
    const mbl_point *pt = b->pt;
    mbl_symlin *sl = b->sl;
    mblx_graph *g = sl->g;
    int n = b->n, m = b->m, z = b->z, rc = 0;
    size_t N1 = (size_t)n + 1;
    const mblx_id *ls = b->ls;
    mblx_id *Ma = b->Ma, *Rv = b->Rv, *Rq = b->Rq, *Rr = b->Rr;
    double *sv = b->sv;
    /* substitute lambda(q) */
    for (size_t i = 0; i < (size_t)n * n; i++) {
        Rq[i] = mblx_subst(g, Rq[i], (size_t)m, ls, sl->lam);
        Rv[i] = mblx_subst(g, Rv[i], (size_t)m, ls, sl->lam);
        Ma[i] = mblx_subst(g, Ma[i], (size_t)m, ls, sl->lam);
    }
    for (size_t i = 0; i < (size_t)n * md->nr; i++) Rr[i] = mblx_subst(g, Rr[i], (size_t)m, ls, sl->lam);
    sl->M = codegen_congruence(g, n, z, sl->H, Ma, z, sl->H);
    sl->Cd = codegen_congruence(g, n, z, sl->H, Rv, z, sl->H);
    sl->K = codegen_congruence(g, n, z, sl->H, Rq, z, sl->H);
    /* F = -H^T R_r */
    sl->F = mbl_alloc_array((size_t)z * md->nr + 1, sizeof(mblx_id));
    if (!sl->M || !sl->Cd || !sl->K || !sl->F) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    if (!rc) {
        mblx_id *terms = mbl_alloc_array(N1, sizeof *terms);
        if (!terms) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        for (int s = 0; !rc && s < z; s++)
            for (int j = 0; j < md->nr; j++) {
                size_t nt = 0;
                for (int i = 0; i < n; i++) {
                    mblx_id h = sl->H[i + (size_t)s * n], rr = Rr[i + (size_t)j * n];
                    if (codegen_is_zero(g, h) || codegen_is_zero(g, rr)) continue;
                    terms[nt++] = mblx_mul(g, h, rr);
                }
                sl->F[s + (size_t)j * z] = mblx_neg(g, mblx_sum(g, nt, terms));
            }
        mbl_free(terms);
    }
    /* A, B: M-hat X = [K-hat C-hat F] */
    if (!rc) {
        for (int j = 0; j < m; j++) sv[mblx_symbol_index(g, ls[j])] = pt->lambda[j];
        rc = codegen_make_ab(sl, sv, st);
    }
    return rc;
}

/* C = [y_q H, y_v H], D = y_r (at rest) */
static int rest_outputs(build *b, mbl_status *st)
{
    const model_view *md = b->md;
    mbl_symlin *sl = b->sl;
    mblx_graph *g = sl->g;
    int n = b->n, z = b->z, rc = 0;
    size_t N1 = (size_t)n + 1;
    const mblx_id *Y = b->Y, *vs = b->vs, *rest_syms = b->rest_syms, *rest_zero = b->rest_zero;
    int ny = md->ny, nx = 2 * z, nr = md->nr;
    sl->C = mbl_alloc_array((size_t)ny * nx + 1, sizeof(mblx_id));
    sl->D = mbl_alloc_array((size_t)ny * nr + 1, sizeof(mblx_id));
    mblx_id *terms = mbl_alloc_array(N1, sizeof *terms), *tv = mbl_alloc_array(N1, sizeof *tv);
    if (!sl->C || !sl->D || !terms || !tv) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int k = 0; !rc && k < ny; k++) {
        for (int s = 0; s < z; s++) {
            size_t nq = 0, nv = 0;
            for (int i = 0; i < n; i++) {
                mblx_id h = sl->H[i + (size_t)s * n];
                if (codegen_is_zero(g, h)) continue;
                mblx_id dq = REST(mblx_diff(g, Y[k], sl->q[i])), dv = REST(mblx_diff(g, Y[k], vs[i]));
                if (!codegen_is_zero(g, dq)) terms[nq++] = mblx_mul(g, dq, h);
                if (!codegen_is_zero(g, dv)) tv[nv++] = mblx_mul(g, dv, h);
            }
            sl->C[k + (size_t)s * ny] = mblx_sum(g, nq, terms);
            sl->C[k + (size_t)(s + z) * ny] = mblx_sum(g, nv, tv);
        }
        for (int j = 0; j < nr; j++) sl->D[k + (size_t)j * ny] = REST(mblx_diff(g, Y[k], sl->r[j]));
    }
    mbl_free(terms), mbl_free(tv);
    return rc;
}

#undef REST

/* User ODE states and implicit variables (symlin_ode.c) are taken where they do not change (der(X) =
 * 0: an equilibrium, a steady motion, a given point where they rest); elsewhere they are refused,
 * naming them (never dropped). */
static int ode_supported(build *b, mbl_status *st)
{
    if (!b->nX && !b->nZ) return 0;
    for (int j = 0; j < b->nX; j++)
        if (b->pt->Xdot[j] != 0.0)
            return mbl_error(st, MBL_EMODEL,
                             "symbolic linear models: the ODE state %s changes at the given point (der(%s) = %g): "
                             "not supported",
                             b->sl->qname[b->n + j], b->sl->qname[b->n + j], b->pt->Xdot[j]);
    return 0;
}

int mbl_symlin_new(const mbl_model *model, const mbl_point *pt, size_t max_nodes, mbl_symlin **out, mbl_status *st)
{
    model_view view; /* the model's data (model/model_view.h) */
    model_view_get(model, &view);
    const model_view *md = &view;
    *out = NULL;
    if (!max_nodes) max_nodes = SYMLIN_MAX_NODES_DEFAULT;
    if (md->k) return mbl_error(st, MBL_EMODEL, "symbolic linear models: non-holonomic constraints are not supported");
    if (md->nuvs) return mbl_error(st, MBL_EMODEL, "symbolic linear models: velocity states are not supported");
    mblx_user_def ud;
    if (mblx_user_count(md->g) && !mblx_user_info(md->g, 0, &ud))
        return mbl_error(st, MBL_EMODEL,
                         "%s: symbolic linear models and generated code need every expression in closed form; the model "
                         "uses the user routine '%s' (compiled code, opaque to them): use mblin linearize",
                         md->file ? md->file : "the model", ud.name);
    int moving = 0;
    for (int i = 0; i < md->n; i++) moving |= pt->v[i] != 0.0 || pt->vdot[i] != 0.0;
    /* the states the library chooses (coordinates only) */
    mbl_linear *lin = NULL;
    int rc = mbl_linearize(model, pt, NULL, &lin, st);
    if (rc) return rc;
    int n = md->n, m = md->m, z = lin->z0;
    /* estimate before any work: refuse up front (the check of the result's size stays below) */
    int general0 = moving || md->nus > 0;
    double nphi = 0; /* nonzeros of Phi_q: the Jacobian's pattern in the Phi rows and q columns */
    int jq0 = model_blk0(model, MBL_BLK_Q);
    for (int p = 0; p < md->jac.nz; p++)
        nphi += md->jac.row[p] >= md->row0[MBL_ROW_PHI] && md->jac.row[p] < md->row0[MBL_ROW_PHI] + m &&
                md->jac.col[p] >= jq0 && md->jac.col[p] < jq0 + n;
    double est = ceil(symlin_estimate(lin, n, m, md->nX, md->nZ, md->nr, general0, nphi));
    if (est > (double)max_nodes) {
        mbl_linear_free(lin);
        return mbl_error(st, MBL_EMODEL,
                         "the symbolic linear model of %s would have about %.0f expression nodes (estimated from %d "
                         "coordinates, %d constraints, %d states%s; limit %zu): too large",
                         md->file ? md->file : "the model", est, n, m, z, md->nX + md->nZ ? " and the ODE states" : "", max_nodes);
    }
    if (lin->z1 != z || n - m != z) {
        mbl_linear_free(lin);
        return mbl_error(st, MBL_EMODEL,
                         "symbolic linear models: %d coordinates, %d constraints and %d states do not match "
                         "(redundant constraints or non-coordinate states)", n, m, z);
    }
    mbl_symlin *sl = mbl_calloc(1, sizeof *sl);
    if (!sl) {
        mbl_linear_free(lin);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    sl->moving = moving;
    build b;
    memset(&b, 0, sizeof b);
    b.md = md, b.pt = pt, b.lin = lin, b.sl = sl, b.n = n, b.m = m, b.z = z, b.general = moving;
    b.model = model, b.nX = md->nX, b.nZ = md->nZ, b.max_nodes = max_nodes;
    rc = build_names(&b, st);
    if (!rc) rc = build_states(&b, st);
    if (!rc) rc = ode_supported(&b, st);
    /* the residual with the terms evaluated beside the tapes (a relative tree's) as expressions:
     * built before the node map below is sized */
    const mblx_id *Fn = NULL, *jn = NULL;
    if (!rc) {
        /* the model's graph is read until the copy is made: under its lock (model_graph_lock) */
        model_graph_lock(model, 1);
        rc = model_dae_nodes(model, &Fn, &jn, st);
        if (!rc) rc = build_symbols(&b, st);
        if (!rc) rc = build_copy(&b, Fn, st);
        model_graph_lock(model, 0);
    }
    int reduced = 0; /* the reduction ran (at rest or in codegen_build_moving) */
    if (!rc && b.general) {
        mblx_id *hv = NULL, *ha1 = NULL, *ha0 = NULL;
        double *msv = NULL;
        int ode = b.nX + b.nZ > 0;
        rc = codegen_build_moving(sl, pt, b.Y, b.sexpr, b.dyn_outputs, ode ? &hv : NULL, &ha1, &ha0, &msv, st);
        if (!rc) rc = symlin_work_check(sl->g, max_nodes, "the reduction at a point with motion", st);
        if (!rc && ode) {
            for (int j = 0; j < b.nX; j++) msv[mblx_symbol_index(sl->g, b.Xd[j])] = pt->Xdot[j];
            for (int j = n; j < sl->nq; j++) msv[mblx_symbol_index(sl->g, sl->q[j])] = sl->qval[j];
            codegen_ode_in oi = {b.nX, b.nZ, b.Ode, b.Y, b.Xd, msv, hv, ha1, ha0};
            rc = codegen_ode_extend(sl, &oi, st);
        }
        mbl_free(hv), mbl_free(ha1), mbl_free(ha0), mbl_free(msv);
        reduced = 1;
    } else if (!rc) {
        rc = rest_jacobians(&b, st);
        if (!rc) rc = rest_lambda_h(&b, st);
        if (!rc) rc = symlin_work_check(sl->g, max_nodes, "the multipliers and H_x", st);
        if (!rc) rc = rest_matrices(&b, st);
        if (!rc) rc = symlin_work_check(sl->g, max_nodes, "M-hat, C-hat, K-hat and A, B", st);
        if (!rc) rc = rest_outputs(&b, st);
        if (!rc && b.dyn_outputs) {
            codegen_rest_in ri = {b.Y, b.as, b.ls, b.Ma, b.Rv, b.Rq, b.Rl, b.Rr, b.rest_syms, b.rest_zero, b.dep, b.sv};
            rc = codegen_rest_outputs_dyn(sl, &ri, st);
        }
        if (!rc && b.nX + b.nZ) {
            codegen_ode_in oi = {b.nX, b.nZ, b.Ode, b.Y, b.Xd, b.sv, NULL, NULL, NULL};
            rc = codegen_ode_extend(sl, &oi, st);
        }
        reduced = 1;
    }
    if (reduced && !rc) rc = mblx_graph_status(sl->g, st);
    if (reduced && !rc) {
        size_t size = mbl_symlin_size(sl);
        if (size > max_nodes)
            rc = mbl_error(st, MBL_EMODEL, "the symbolic linear model would have %zu expression nodes (limit %zu): too large",
                           size, max_nodes);
    }
    build_free(&b);
    mbl_linear_free(lin);
    if (rc) {
        mbl_symlin_free(sl);
        return rc;
    }
    *out = sl;
    return 0;
}
