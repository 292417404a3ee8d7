/* Symbolic linear models in the parameters: source 002's H_x reduction (Ge et al., Eq. 15-64) on
 * the canonical DAE of a loaded model, in a graph of its own (include/mblin/codegen.h).
 *
 * Unknowns of the source: q = [S; y] (S the states, coordinates; y the dependent ones), lambda.
 * At a point at rest the linearized equations of motion R(vdot, lambda, v, q, r) = 0 give
 *     R_vdot dvdot + R_lambda dlambda + R_v dv + R_q dq + R_r dr = 0,   Phi_q dq = 0,
 * and with dq = H dS, H = [I; -Phi_y^-1 Phi_S] (H^T R_lambda = H^T Phi_q^T = 0):
 *     M-hat = H^T R_vdot H, C-hat = H^T R_v H, K-hat = H^T R_q H, F = -H^T R_r   (Eq. 52-58).
 * lambda(q, p, r) solves the dependent rows R_y = 0 at rest (linear in lambda). Every inverse is a
 * symbolic Gaussian elimination with pivots chosen by their values at the model's point. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/codegen.h"
#include "model/model_internal.h"

#define SYMLIN_MAX_NODES_DEFAULT 2000000

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
    free_names(sl->qname, sl->n);
    free_names(sl->rname, sl->nr);
    free_names(sl->yname, sl->ny);
    free_names(sl->state_names, sl->nx);
    mbl_free(sl->pval);
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
    mbl_free(sl);
}

static int is_zero(const mblx_graph *g, mblx_id e)
{
    double v;
    return mblx_is_const(g, e, &v) && v == 0.0;
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

/* ---- symbolic Gaussian elimination ------------------------------------------------------------ */

/* Solve P X = R (P k x k, R k x c, both column-major nodes, modified) with partial pivoting on
 * the values Pv of P at the model's point; X overwrites R. */
static int sym_solve(mblx_graph *g, int k, mblx_id *P, double *Pv, int c, mblx_id *R, const char *what,
                     mbl_status *st)
{
    for (int j = 0; j < k; j++) {
        int piv = -1;
        double best = 0.0, scale = 0.0;
        for (int i = 0; i < k; i++)
            if (fabs(Pv[i + (size_t)j * k]) > scale) scale = fabs(Pv[i + (size_t)j * k]);
        for (int i = j; i < k; i++) {
            double a = fabs(Pv[i + (size_t)j * k]);
            if (a > best && !is_zero(g, P[i + (size_t)j * k])) best = a, piv = i;
        }
        if (piv < 0 || best <= 1e-12 * scale)
            return mbl_error(st, MBL_ESINGULAR, "%s is singular at the model's point (column %d)", what, j + 1);
        if (piv != j) {
            for (int l = 0; l < k; l++) {
                mblx_id tn = P[j + (size_t)l * k];
                P[j + (size_t)l * k] = P[piv + (size_t)l * k], P[piv + (size_t)l * k] = tn;
                double tv = Pv[j + (size_t)l * k];
                Pv[j + (size_t)l * k] = Pv[piv + (size_t)l * k], Pv[piv + (size_t)l * k] = tv;
            }
            for (int l = 0; l < c; l++) {
                mblx_id tn = R[j + (size_t)l * k];
                R[j + (size_t)l * k] = R[piv + (size_t)l * k], R[piv + (size_t)l * k] = tn;
            }
        }
        mblx_id pjj = P[j + (size_t)j * k];
        for (int i = j + 1; i < k; i++) {
            mblx_id pij = P[i + (size_t)j * k];
            if (is_zero(g, pij)) continue;
            mblx_id f = mblx_div(g, pij, pjj);
            double fv = Pv[i + (size_t)j * k] / Pv[j + (size_t)j * k];
            for (int l = j + 1; l < k; l++) {
                mblx_id pjl = P[j + (size_t)l * k];
                if (is_zero(g, pjl)) continue;
                P[i + (size_t)l * k] = mblx_sub(g, P[i + (size_t)l * k], mblx_mul(g, f, pjl));
                Pv[i + (size_t)l * k] -= fv * Pv[j + (size_t)l * k];
            }
            for (int l = 0; l < c; l++) {
                mblx_id rjl = R[j + (size_t)l * k];
                if (is_zero(g, rjl)) continue;
                R[i + (size_t)l * k] = mblx_sub(g, R[i + (size_t)l * k], mblx_mul(g, f, rjl));
            }
            P[i + (size_t)j * k] = mblx_const(g, 0.0);
            Pv[i + (size_t)j * k] = 0.0;
        }
    }
    mblx_id *terms = mbl_alloc_array((size_t)k + 1, sizeof *terms);
    if (!terms) return mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int l = 0; l < c; l++) {
        for (int j = k - 1; j >= 0; j--) {
            size_t nt = 0;
            terms[nt++] = R[j + (size_t)l * k];
            for (int i = j + 1; i < k; i++) {
                mblx_id pji = P[j + (size_t)i * k], xi = R[i + (size_t)l * k];
                if (is_zero(g, pji) || is_zero(g, xi)) continue;
                terms[nt++] = mblx_neg(g, mblx_mul(g, pji, xi));
            }
            R[j + (size_t)l * k] = mblx_div(g, mblx_sum(g, nt, terms), P[j + (size_t)j * k]);
        }
    }
    mbl_free(terms);
    return mblx_graph_status(g, st);
}

/* values of nodes at symbol values sv */
static int eval_nodes(const mblx_graph *g, size_t n, const mblx_id *e, const double *sv, double *out,
                      mbl_status *st)
{
    if (!n) return 0;
    mblx_tape *t = mblx_compile(g, n, e, st);
    if (!t) return st ? st->code : MBL_ENOMEM;
    double *w = mbl_alloc_array(mblx_tape_work_size(t) + 1, sizeof *w);
    int rc = w ? mblx_tape_eval(t, sv, out, w, st) : mbl_error(st, MBL_ENOMEM, "out of memory");
    mbl_free(w);
    mblx_tape_free(t);
    return rc;
}

/* out (a x b) = L^T (n x a)^T * X (n x b) * R (n x b)... : out = L^T X R, X n x n */
static mblx_id *congruence(mblx_graph *g, int n, int a, const mblx_id *L, const mblx_id *X, int b,
                           const mblx_id *R)
{
    /* T = X R (n x b), out = L^T T */
    mblx_id *T = mbl_alloc_array((size_t)n * b + 1, sizeof *T);
    mblx_id *out = mbl_alloc_array((size_t)a * b + 1, sizeof *out);
    mblx_id *terms = mbl_alloc_array((size_t)n + 1, sizeof *terms);
    if (!T || !out || !terms) {
        mbl_free(T), mbl_free(out), mbl_free(terms);
        return NULL;
    }
    for (int j = 0; j < b; j++)
        for (int i = 0; i < n; i++) {
            size_t nt = 0;
            for (int l = 0; l < n; l++) {
                mblx_id x = X[i + (size_t)l * n], r = R[l + (size_t)j * n];
                if (is_zero(g, x) || is_zero(g, r)) continue;
                terms[nt++] = mblx_mul(g, x, r);
            }
            T[i + (size_t)j * n] = mblx_sum(g, nt, terms);
        }
    for (int j = 0; j < b; j++)
        for (int i = 0; i < a; i++) {
            size_t nt = 0;
            for (int l = 0; l < n; l++) {
                mblx_id x = L ? L[l + (size_t)i * n] : MBLX_NONE, t = T[l + (size_t)j * n];
                if (!L) {
                    if (l == i) terms[nt++] = t;
                    continue;
                }
                if (is_zero(g, x) || is_zero(g, t)) continue;
                terms[nt++] = mblx_mul(g, x, t);
            }
            out[i + (size_t)j * a] = mblx_sum(g, nt, terms);
        }
    mbl_free(T);
    mbl_free(terms);
    return out;
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

int mbl_symlin_new(const mbl_model *md, const mbl_point *pt, size_t max_nodes, mbl_symlin **out, mbl_status *st)
{
    *out = NULL;
    if (!max_nodes) max_nodes = SYMLIN_MAX_NODES_DEFAULT;
    if (md->k) return mbl_error(st, MBL_EMODEL, "symbolic linear models: non-holonomic constraints are not supported");
    if (md->nuvs) return mbl_error(st, MBL_EMODEL, "symbolic linear models: velocity states are not supported");
    for (int i = 0; i < md->n; i++)
        if (pt->v[i] != 0.0 || pt->vdot[i] != 0.0)
            return mbl_error(st, MBL_EMODEL,
                             "symbolic linear models need a point at rest; %s moves there (v = %g, vdot = %g)",
                             md->qname[i], pt->v[i], pt->vdot[i]);
    /* the states the library chooses (coordinates only) */
    mbl_linear *lin = NULL;
    int rc = mbl_linearize(md, pt, NULL, &lin, st);
    if (rc) return rc;
    int n = md->n, m = md->m, z = lin->z0;
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
    sl->n = n, sl->m = m, sl->np = md->np, sl->nr = md->nr, sl->ny = md->ny, sl->z = z, sl->nx = 2 * z;
    sl->t = pt->t;
    size_t N1 = (size_t)n + 1;
    sl->g = mblx_graph_new();
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
        !sl->qval || !sl->rval || !sl->sidx || !sl->p || !sl->q || !sl->r) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    mblx_graph *g = sl->g;
    for (int i = 0; i < md->np; i++) sl->pname[i] = dupstr(md->pname[i]), sl->pval[i] = md->pval[i];
    for (int i = 0; i < n; i++) sl->qname[i] = dupstr(md->qname[i]), sl->qval[i] = pt->q[i];
    for (int i = 0; i < md->nr; i++) sl->rname[i] = dupstr(md->rname[i]), sl->rval[i] = pt->r[i];
    for (int i = 0; i < md->ny; i++) sl->yname[i] = dupstr(md->yname[i]);
    for (int i = 0; i < sl->nx; i++) sl->state_names[i] = dupstr(lin->state_names[i]);
    for (int s = 0; s < z; s++) {
        sl->sidx[s] = -1;
        for (int i = 0; i < n; i++)
            if (!strcmp(lin->state_names[s], md->qname[i])) sl->sidx[s] = i;
        if (sl->sidx[s] < 0) {
            rc = mbl_error(st, MBL_EMODEL, "symbolic linear models: the state %s is not a coordinate",
                           lin->state_names[s]);
            goto done;
        }
    }
    /* symbols of the new graph; v, vdot, lambda get names no user name can have */
    size_t nsym = mblx_symbol_count(md->g);
    mblx_id *symmap = mbl_alloc_array(nsym + 1, sizeof *symmap);
    mblx_id *map = mbl_alloc_array(mblx_node_count(md->g) + 1, sizeof *map);
    mblx_id *vs = mbl_alloc_array(N1, sizeof *vs), *as = mbl_alloc_array(N1, sizeof *as);
    mblx_id *ls = mbl_alloc_array((size_t)m + 1, sizeof *ls);
    mblx_id *R = mbl_alloc_array(N1, sizeof *R), *Phi = mbl_alloc_array((size_t)m + 1, sizeof *Phi);
    mblx_id *Y = mbl_alloc_array((size_t)md->ny + 1, sizeof *Y);
    size_t nn = (size_t)n * n + 1;
    mblx_id *Ma = mbl_alloc_array(nn, sizeof(mblx_id)), *Rv = mbl_alloc_array(nn, sizeof(mblx_id)),
            *Rq = mbl_alloc_array(nn, sizeof(mblx_id));
    mblx_id *Rl = mbl_alloc_array((size_t)n * m + 1, sizeof(mblx_id));
    mblx_id *Rr = mbl_alloc_array((size_t)n * md->nr + 1, sizeof(mblx_id));
    mblx_id *Pq = mbl_alloc_array((size_t)m * n + 1, sizeof(mblx_id));
    double *sv = NULL, *vals = NULL;
    mblx_id *Py = NULL, *Rhs = NULL, *Ly = NULL, *zero = NULL;
    if (!symmap || !map || !vs || !as || !ls || !R || !Phi || !Y || !Ma || !Rv || !Rq || !Rl || !Rr || !Pq) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done2;
    }
    for (size_t i = 0; i < nsym; i++) symmap[i] = MBLX_NONE;
    for (size_t i = 0; i < mblx_node_count(md->g); i++) map[i] = MBLX_NONE;
    char buf[64];
    for (int i = 0; i < md->np; i++) symmap[mblx_symbol_index(md->g, md->p[i])] = sl->p[i] = mblx_symbol(g, md->pname[i]);
    for (int i = 0; i < n; i++) {
        symmap[mblx_symbol_index(md->g, md->q[i])] = sl->q[i] = mblx_symbol(g, md->qname[i]);
        snprintf(buf, sizeof buf, "@v%d", i);
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
    copier cp = {md->g, g, map, symmap};
    for (int i = 0; i < n && !rc; i++)
        if ((R[i] = copy_node(&cp, md->F[md->row0[MBL_ROW_EOM] + i], st)) == MBLX_NONE) rc = -1;
    for (int j = 0; j < m && !rc; j++)
        if ((Phi[j] = copy_node(&cp, md->F[md->row0[MBL_ROW_PHI] + j], st)) == MBLX_NONE) rc = -1;
    for (int j = 0; j < md->ny && !rc; j++)
        if ((Y[j] = copy_node(&cp, md->y[j], st)) == MBLX_NONE) rc = -1;
    if (rc) {
        rc = st && st->code ? st->code : mblx_graph_status(g, st);
        goto done2;
    }
    /* outputs must be functions of q, v, r */
    for (int j = 0; j < md->ny; j++)
        for (int i = 0; i < n; i++)
            if (mblx_depends(g, Y[j], as[i]) || (i < m && mblx_depends(g, Y[j], ls[i]))) {
                rc = mbl_error(st, MBL_EMODEL,
                               "symbolic linear models: output %s depends on accelerations or multipliers",
                               md->yname[j]);
                goto done2;
            }
    /* Jacobians, then rest: v = 0, vdot = 0 */
    mblx_id *rest_syms = mbl_alloc_array(2 * N1, sizeof(mblx_id)), *rest_zero = mbl_alloc_array(2 * N1, sizeof(mblx_id));
    zero = rest_zero;
    if (!rest_syms || !rest_zero) {
        mbl_free(rest_syms);
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done2;
    }
    for (int i = 0; i < n; i++) rest_syms[i] = vs[i], rest_syms[n + i] = as[i];
    for (int i = 0; i < 2 * n; i++) rest_zero[i] = mblx_const(g, 0.0);
#define REST(e) mblx_subst(g, (e), 2 * (size_t)n, rest_syms, rest_zero)
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            Ma[i + (size_t)j * n] = REST(mblx_diff(g, R[i], as[j]));
            Rv[i + (size_t)j * n] = REST(mblx_diff(g, R[i], vs[j]));
            Rq[i + (size_t)j * n] = REST(mblx_diff(g, R[i], sl->q[j]));
        }
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < m; j++) Rl[i + (size_t)j * n] = REST(mblx_diff(g, R[i], ls[j]));
        for (int j = 0; j < md->nr; j++) Rr[i + (size_t)j * n] = REST(mblx_diff(g, R[i], sl->r[j]));
    }
    for (int j = 0; j < m; j++)
        for (int i = 0; i < n; i++) Pq[j + (size_t)i * m] = mblx_diff(g, Phi[j], sl->q[i]);
    /* dependent coordinates: those that are not states */
    int *dep = mbl_alloc_array((size_t)m + 1, sizeof *dep);
    if (!dep) {
        mbl_free(rest_syms);
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done2;
    }
    int nd = 0;
    for (int i = 0; i < n; i++) {
        int isstate = 0;
        for (int s = 0; s < z; s++) isstate |= sl->sidx[s] == i;
        if (!isstate) dep[nd++] = i;
    }
    /* values of every symbol at the point */
    size_t gs = mblx_symbol_count(g) + 16;
    sv = mbl_calloc(gs, sizeof *sv);
    vals = mbl_alloc_array((size_t)m * m + (size_t)n + 1, sizeof *vals);
    Py = mbl_alloc_array((size_t)m * m + 1, sizeof *Py);
    Ly = mbl_alloc_array((size_t)m * m + 1, sizeof *Ly);
    Rhs = mbl_alloc_array((size_t)m * (z > 1 ? z : 1) + (size_t)m + 1, sizeof *Rhs);
    sl->H = mbl_alloc_array((size_t)n * z + 1, sizeof(mblx_id));
    sl->lam = mbl_alloc_array((size_t)m + 1, sizeof(mblx_id));
    if (!sv || !vals || !Py || !Ly || !Rhs || !sl->H || !sl->lam) {
        mbl_free(rest_syms), mbl_free(dep);
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done2;
    }
    for (int i = 0; i < md->np; i++) sv[mblx_symbol_index(g, sl->p[i])] = md->pval[i];
    for (int i = 0; i < n; i++) sv[mblx_symbol_index(g, sl->q[i])] = pt->q[i];
    for (int i = 0; i < md->nr; i++) sv[mblx_symbol_index(g, sl->r[i])] = pt->r[i];
    for (int j = 0; j < m; j++) sv[mblx_symbol_index(g, ls[j])] = pt->lambda[j];
    /* lambda(q, p, r): R_y(lambda) = R_y(0) + R_lambda,y lambda = 0 */
    for (int a = 0; a < m; a++) {
        int i = dep[a];
        for (int j = 0; j < m; j++) Ly[a + (size_t)j * m] = Rl[i + (size_t)j * n];
        mblx_id r0 = REST(R[i]);
        mblx_id zl[1];
        (void)zl;
        for (int j = 0; j < m; j++) r0 = mblx_subst(g, r0, 1, &ls[j], &rest_zero[0]);
        Rhs[a] = mblx_neg(g, r0);
    }
    rc = eval_nodes(g, (size_t)m * m, Ly, sv, vals, st);
    if (!rc) rc = sym_solve(g, m, Ly, vals, 1, Rhs, "the multiplier block of the dependent equations", st);
    if (!rc) {
        for (int j = 0; j < m; j++) sl->lam[j] = Rhs[j];
        /* H = [I; -Phi_y^-1 Phi_S] */
        for (int a = 0; a < m; a++)
            for (int b = 0; b < m; b++) Py[a + (size_t)b * m] = Pq[a + (size_t)dep[b] * m];
        for (int a = 0; a < m; a++)
            for (int s = 0; s < z; s++) Rhs[a + (size_t)s * m] = mblx_neg(g, Pq[a + (size_t)sl->sidx[s] * m]);
        rc = eval_nodes(g, (size_t)m * m, Py, sv, vals, st);
    }
    if (!rc) rc = sym_solve(g, m, Py, vals, z, Rhs, "Phi_y (the constraint Jacobian of the dependent coordinates)", st);
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
    if (!rc) {
        /* substitute lambda(q) */
        for (size_t i = 0; i < (size_t)n * n; i++) {
            Rq[i] = mblx_subst(g, Rq[i], (size_t)m, ls, sl->lam);
            Rv[i] = mblx_subst(g, Rv[i], (size_t)m, ls, sl->lam);
            Ma[i] = mblx_subst(g, Ma[i], (size_t)m, ls, sl->lam);
        }
        for (size_t i = 0; i < (size_t)n * md->nr; i++) Rr[i] = mblx_subst(g, Rr[i], (size_t)m, ls, sl->lam);
        sl->M = congruence(g, n, z, sl->H, Ma, z, sl->H);
        sl->Cd = congruence(g, n, z, sl->H, Rv, z, sl->H);
        sl->K = congruence(g, n, z, sl->H, Rq, z, sl->H);
        /* F = -H^T R_r */
        sl->F = mbl_alloc_array((size_t)z * md->nr + 1, sizeof(mblx_id));
        if (!sl->M || !sl->Cd || !sl->K || !sl->F) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    if (!rc) {
        mblx_id *terms = mbl_alloc_array(N1, sizeof *terms);
        if (!terms) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        for (int s = 0; !rc && s < z; s++)
            for (int j = 0; j < md->nr; j++) {
                size_t nt = 0;
                for (int i = 0; i < n; i++) {
                    mblx_id h = sl->H[i + (size_t)s * n], rr = Rr[i + (size_t)j * n];
                    if (is_zero(g, h) || is_zero(g, rr)) continue;
                    terms[nt++] = mblx_mul(g, h, rr);
                }
                sl->F[s + (size_t)j * z] = mblx_neg(g, mblx_sum(g, nt, terms));
            }
        mbl_free(terms);
    }
    /* A, B: M-hat X = [K-hat C-hat F] */
    if (!rc) {
        int nx = 2 * z, nr = md->nr, c = 2 * z + nr;
        mblx_id *Mc = mbl_alloc_array((size_t)z * z + 1, sizeof *Mc), *X = mbl_alloc_array((size_t)z * c + 1, sizeof *X);
        double *mv = mbl_alloc_array((size_t)z * z + 1, sizeof *mv);
        sl->A = mbl_alloc_array((size_t)nx * nx + 1, sizeof(mblx_id));
        sl->B = mbl_alloc_array((size_t)nx * nr + 1, sizeof(mblx_id));
        if (!Mc || !X || !mv || !sl->A || !sl->B) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        if (!rc) {
            memcpy(Mc, sl->M, (size_t)z * z * sizeof *Mc);
            memcpy(X, sl->K, (size_t)z * z * sizeof *X);
            memcpy(X + (size_t)z * z, sl->Cd, (size_t)z * z * sizeof *X);
            memcpy(X + 2 * (size_t)z * z, sl->F, (size_t)z * nr * sizeof *X);
            for (int j = 0; j < m; j++) sv[mblx_symbol_index(g, ls[j])] = pt->lambda[j];
            rc = eval_nodes(g, (size_t)z * z, Mc, sv, mv, st);
        }
        if (!rc) rc = sym_solve(g, z, Mc, mv, c, X, "M-hat", st);
        if (!rc) {
            mblx_id zero0 = mblx_const(g, 0.0), one = mblx_const(g, 1.0);
            for (int j = 0; j < nx; j++)
                for (int i = 0; i < nx; i++) {
                    mblx_id e;
                    if (i < z) e = (j == i + z) ? one : zero0;
                    else if (j < z) e = mblx_neg(g, X[(i - z) + (size_t)j * z]);
                    else e = mblx_neg(g, X[(i - z) + (size_t)(j - z) * z + (size_t)z * z]);
                    sl->A[i + (size_t)j * nx] = e;
                }
            for (int j = 0; j < nr; j++)
                for (int i = 0; i < nx; i++)
                    sl->B[i + (size_t)j * nx] = i < z ? zero0 : X[(i - z) + (size_t)j * z + 2 * (size_t)z * z];
        }
        mbl_free(Mc), mbl_free(X), mbl_free(mv);
    }
    /* C = [y_q H, y_v H], D = y_r (at rest) */
    if (!rc) {
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
                    if (is_zero(g, h)) continue;
                    mblx_id dq = REST(mblx_diff(g, Y[k], sl->q[i])), dv = REST(mblx_diff(g, Y[k], vs[i]));
                    if (!is_zero(g, dq)) terms[nq++] = mblx_mul(g, dq, h);
                    if (!is_zero(g, dv)) tv[nv++] = mblx_mul(g, dv, h);
                }
                sl->C[k + (size_t)s * ny] = mblx_sum(g, nq, terms);
                sl->C[k + (size_t)(s + z) * ny] = mblx_sum(g, nv, tv);
            }
            for (int j = 0; j < nr; j++) sl->D[k + (size_t)j * ny] = REST(mblx_diff(g, Y[k], sl->r[j]));
        }
        mbl_free(terms), mbl_free(tv);
    }
#undef REST
    mbl_free(rest_syms);
    mbl_free(dep);
    if (!rc) rc = mblx_graph_status(g, st);
    if (!rc) {
        size_t size = mbl_symlin_size(sl);
        if (size > max_nodes)
            rc = mbl_error(st, MBL_EMODEL, "the symbolic linear model would have %zu expression nodes (limit %zu)",
                           size, max_nodes);
    }
done2:
    mbl_free(symmap), mbl_free(map), mbl_free(vs), mbl_free(as), mbl_free(ls), mbl_free(R), mbl_free(Phi);
    mbl_free(Y), mbl_free(Ma), mbl_free(Rv), mbl_free(Rq), mbl_free(Rl), mbl_free(Rr), mbl_free(Pq);
    mbl_free(sv), mbl_free(vals), mbl_free(Py), mbl_free(Ly), mbl_free(Rhs), mbl_free(zero);
done:
    mbl_linear_free(lin);
    if (rc) {
        mbl_symlin_free(sl);
        return rc;
    }
    *out = sl;
    return 0;
}

/* ---- specialization for printing --------------------------------------------------------------- */

/* a deterministic uniform number in [0, 1) (xorshift64*) */
static double uniform(unsigned long long *s)
{
    *s ^= *s >> 12, *s ^= *s << 25, *s ^= *s >> 27;
    return (double)((*s * 2685821657736338717ULL) >> 11) * (1.0 / 9007199254740992.0);
}

/* replace every entry of a matrix by its substitution */
static void subst_all(mblx_graph *g, mblx_id *v, size_t len, size_t n, const mblx_id *syms, const mblx_id *repl)
{
    for (size_t i = 0; v && i < len; i++) v[i] = mblx_subst(g, v[i], n, syms, repl);
}

int mbl_symlin_special(mbl_symlin *sl, const char *const *keep, int nkeep, int keep_all, int *closed, mbl_status *st)
{
    return mbl_symlin_special2(sl, keep, nkeep, keep_all, 0, closed, st);
}

int mbl_symlin_special2(mbl_symlin *sl, const char *const *keep, int nkeep, int keep_all, int point_symbols,
                        int *closed, mbl_status *st)
{
    mblx_graph *g = sl->g;
    int np = sl->np, n = sl->n, m = sl->m;
    *closed = 0;
    int *kept = mbl_calloc((size_t)np + 1, sizeof *kept);
    mblx_id *syms = mbl_alloc_array((size_t)(np + n) + 1, sizeof *syms);
    mblx_id *repl = mbl_alloc_array((size_t)(np + n) + 1, sizeof *repl);
    mblx_id *qcf = mbl_alloc_array((size_t)n + 1, sizeof *qcf);
    mblx_id *res = mbl_alloc_array((size_t)(m + n) + 1, sizeof *res);
    double *sv = NULL, *rv = NULL;
    int rc = 0;
    if (!kept || !syms || !repl || !qcf || !res) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto out;
    }
    for (int k = 0; k < nkeep; k++) {
        int found = 0;
        for (int i = 0; i < np; i++)
            if (!strcmp(keep[k], sl->pname[i])) kept[i] = 1, found = 1;
        if (!found) {
            rc = mbl_error(st, MBL_EARG, "the model has no parameter '%s'", keep[k]);
            goto out;
        }
    }
    if (keep_all)
        for (int i = 0; i < np; i++) kept[i] = 1;
    /* closed-form candidates of the point's coordinates (at most SPECIAL_NCAND each) */
#define SPECIAL_NCAND 8
#define SPECIAL_MAX_COMBOS 4096
    double qscale = 1.0;
    for (int i = 0; i < n; i++) qscale = fmax(qscale, fabs(sl->qval[i]));
    mblx_id *cand = mbl_alloc_array((size_t)n * SPECIAL_NCAND + 1, sizeof *cand);
    int *ncand = mbl_calloc((size_t)n + 1, sizeof *ncand), *pick = mbl_calloc((size_t)n + 1, sizeof *pick);
    if (!cand || !ncand || !pick) {
        mbl_free(cand), mbl_free(ncand), mbl_free(pick);
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto out;
    }
    for (int i = 0; i < np; i++) syms[i] = sl->p[i], repl[i] = kept[i] ? sl->p[i] : mblx_const(g, sl->pval[i]);
#define CAND(e) mblx_subst(g, (e), (size_t)np, syms, repl)
    double combos = 1.0;
    for (int i = 0; i < n; i++) {
        double v = sl->qval[i], tol = 1e-9 * fmax(1.0, fabs(v));
        mblx_id *c = cand + (size_t)i * SPECIAL_NCAND;
        int nc = 0;
        if (fabs(v) <= 1e-12 * qscale) c[nc++] = mblx_const(g, 0.0);
        static const double coef[] = {1, -1, 0.5, -0.5, 2, -2};
        for (int a = 0; a < np; a++) {
            for (int k = 0; nc < SPECIAL_NCAND - 1 && k < 6; k++)
                if (fabs(coef[k] * sl->pval[a] - v) <= tol) c[nc++] = CAND(mblx_scale(g, coef[k], sl->p[a]));
            for (int b = a + 1; b < np; b++) {
                for (int sa = -1; sa <= 1; sa += 2)
                    for (int sb = -1; sb <= 1; sb += 2)
                        if (nc < SPECIAL_NCAND - 1 && fabs(sa * sl->pval[a] + sb * sl->pval[b] - v) <= tol)
                            c[nc++] = CAND(mblx_add(g, mblx_scale(g, sa, sl->p[a]), mblx_scale(g, sb, sl->p[b])));
            }
        }
        if (!nc) c[nc++] = mblx_const(g, v); /* a number no parameter changes (verified below) */
        ncand[i] = nc;
#undef CAND
        combos *= nc;
    }
    /* verify each combination at 20 random parameter sets (kept parameters within +-20 %) */
    size_t ns = mblx_symbol_count(g) + 1;
    sv = mbl_calloc(ns, sizeof *sv);
    rv = mbl_alloc_array((size_t)(m + n) + 1, sizeof *rv);
    if (!sv || !rv) {
        mbl_free(cand), mbl_free(ncand), mbl_free(pick);
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto out;
    }
    for (int i = 0; i < n; i++) syms[np + i] = sl->q[i];
    double pscale = 1.0;
    for (int i = 0; i < np; i++) pscale = fmax(pscale, fabs(sl->pval[i]));
    int ok = 0;
    for (long combo = 0; !point_symbols && !ok && combos <= SPECIAL_MAX_COMBOS && combo < (long)combos; combo++) {
        long rest = combo;
        for (int i = 0; i < n; i++) {
            pick[i] = (int)(rest % ncand[i]), rest /= ncand[i];
            repl[np + i] = cand[(size_t)i * SPECIAL_NCAND + pick[i]];
        }
        for (int i = 0; i < m + n; i++) res[i] = mblx_subst(g, sl->res[i], (size_t)(np + n), syms, repl);
        unsigned long long seed = 0x9e3779b97f4a7c15ULL;
        ok = mblx_graph_status(g, NULL) == 0;
        for (int trial = 0; ok && trial < 20; trial++) {
            for (int i = 0; i < np; i++)
                sv[mblx_symbol_index(g, sl->p[i])] = sl->pval[i] * (kept[i] ? 0.8 + 0.4 * uniform(&seed) : 1.0);
            for (int i = 0; i < sl->nr; i++) sv[mblx_symbol_index(g, sl->r[i])] = sl->rval[i];
            mbl_status est = {0};
            if (eval_nodes(g, (size_t)(m + n), res, sv, rv, &est)) {
                ok = 0;
                break;
            }
            for (int i = 0; i < m + n; i++)
                if (!(fabs(rv[i]) <= 1e-9 * pscale * pscale * pscale)) ok = 0;
        }
    }
    mbl_free(cand), mbl_free(ncand), mbl_free(pick);
    if (ok) {
        *closed = 1;
        snprintf(sl->note, sizeof sl->note,
                 "the operating point in closed form (verified at 20 random parameter sets)");
    } else {
        for (int i = 0; i < n; i++) repl[np + i] = sl->q[i];
        if (point_symbols)
            snprintf(sl->note, sizeof sl->note,
                     "the coordinates stand for the point's values (asked for): M-hat holds at any configuration, "
                     "the rest at the operating point");
        else
            snprintf(sl->note, sizeof sl->note,
                     "the operating point has no closed form found here: the coordinates stand for the point's values");
    }
    size_t nsub = (size_t)(np + n);
    mbl_free(sl->qpoint);
    sl->qpoint = mbl_alloc_array((size_t)n + 1, sizeof(mblx_id));
    if (!sl->qpoint) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto out;
    }
    for (int i = 0; i < n; i++) sl->qpoint[i] = repl[np + i];
    subst_all(g, sl->H, (size_t)n * sl->z, nsub, syms, repl);
    subst_all(g, sl->lam, (size_t)m, nsub, syms, repl);
    subst_all(g, sl->M, (size_t)sl->z * sl->z, nsub, syms, repl);
    subst_all(g, sl->Cd, (size_t)sl->z * sl->z, nsub, syms, repl);
    subst_all(g, sl->K, (size_t)sl->z * sl->z, nsub, syms, repl);
    subst_all(g, sl->F, (size_t)sl->z * sl->nr, nsub, syms, repl);
    subst_all(g, sl->A, (size_t)sl->nx * sl->nx, nsub, syms, repl);
    subst_all(g, sl->B, (size_t)sl->nx * sl->nr, nsub, syms, repl);
    subst_all(g, sl->C, (size_t)sl->ny * sl->nx, nsub, syms, repl);
    subst_all(g, sl->D, (size_t)sl->ny * sl->nr, nsub, syms, repl);
    subst_all(g, sl->res, (size_t)(m + n), nsub, syms, repl);
    rc = mblx_graph_status(g, st);
out:
    mbl_free(kept), mbl_free(syms), mbl_free(repl), mbl_free(qcf), mbl_free(res), mbl_free(sv), mbl_free(rv);
    return rc;
}

double mbl_symlin_print_size(const mbl_symlin *sl)
{
    size_t nn = mblx_node_count(sl->g);
    double *ts = mbl_alloc_array(nn + 1, sizeof *ts);
    if (!ts) return INFINITY;
    for (size_t e = 0; e < nn; e++) {
        double s = 1.0;
        int na = mblx_node_nargs(sl->g, (mblx_id)e);
        for (int i = 0; i < na; i++) s += ts[mblx_node_arg(sl->g, (mblx_id)e, i)];
        ts[e] = s;
    }
    const mblx_id *mats[] = {sl->A, sl->B, sl->C, sl->D, sl->M, sl->Cd, sl->K, sl->F, sl->H};
    size_t lens[] = {(size_t)sl->nx * sl->nx, (size_t)sl->nx * sl->nr, (size_t)sl->ny * sl->nx,
                     (size_t)sl->ny * sl->nr, (size_t)sl->z * sl->z, (size_t)sl->z * sl->z,
                     (size_t)sl->z * sl->z, (size_t)sl->z * sl->nr, (size_t)sl->n * sl->z};
    double total = 0.0;
    for (int k = 0; k < 9; k++)
        for (size_t i = 0; mats[k] && i < lens[k]; i++) total += ts[mats[k][i]];
    mbl_free(ts);
    return total;
}
