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

#include <lapacke.h>

#include "mblin/codegen.h"
#include "model/model_view.h"

#define SYMLIN_MAX_NODES_DEFAULT 2000000
#define SYMLIN_EXPAND_MAX_TERMS 2000

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

/* A = [0 I; -M-hat^-1 K-hat, -M-hat^-1 C-hat], B = [0; M-hat^-1 F] by a symbolic elimination with
 * pivots chosen by M-hat's values at the symbol values sv */
static int make_ab(mbl_symlin *sl, const double *sv, mbl_status *st)
{
    mblx_graph *g = sl->g;
    int z = sl->z, nx = 2 * z, nr = sl->nr, c = 2 * z + nr, rc = 0;
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
    return rc;
}

/* ---- points with motion ------------------------------------------------------------------------ */

static mblx_id *new_ids(size_t n)
{
    return mbl_alloc_array(n + 1, sizeof(mblx_id));
}

/* out (ra x cb) = A (ra x ca) B (ca x cb); NULL when out of memory */
static mblx_id *matmul(mblx_graph *g, int ra, int ca, const mblx_id *A, int cb, const mblx_id *B)
{
    mblx_id *out = new_ids((size_t)ra * cb), *terms = new_ids((size_t)ca);
    if (!out || !terms) {
        mbl_free(out), mbl_free(terms);
        return NULL;
    }
    for (int j = 0; j < cb; j++)
        for (int i = 0; i < ra; i++) {
            size_t nt = 0;
            for (int l = 0; l < ca; l++) {
                mblx_id a = A[i + (size_t)l * ra], b = B[l + (size_t)j * ca];
                if (is_zero(g, a) || is_zero(g, b)) continue;
                terms[nt++] = mblx_mul(g, a, b);
            }
            out[i + (size_t)j * ra] = mblx_sum(g, nt, terms);
        }
    mbl_free(terms);
    return out;
}

/* X = P^-1 B for a k x k P (not modified: the elimination works on copies), B k x c overwritten */
static int solve_copy(mblx_graph *g, int k, const mblx_id *P, const double *Pv, int c, mblx_id *B, const char *what,
                      mbl_status *st)
{
    mblx_id *Pc = new_ids((size_t)k * k);
    double *Vc = mbl_alloc_array((size_t)k * k + 1, sizeof *Vc);
    int rc = (!Pc || !Vc) ? mbl_error(st, MBL_ENOMEM, "out of memory") : 0;
    if (!rc) {
        memcpy(Pc, P, (size_t)k * k * sizeof *Pc), memcpy(Vc, Pv, (size_t)k * k * sizeof *Vc);
        rc = sym_solve(g, k, Pc, Vc, c, B, what, st);
    }
    mbl_free(Pc), mbl_free(Vc);
    return rc;
}

/* The linear model at a point with motion, or with states S = s(q) that are not coordinates (a
 * mechanism's joint measures): with the stacked constraints Psi(q) = [s(q) - S; Phi(q)] (n rows,
 * J = Psi_q square), perturb q = q0 + H dS and keep the perturbed motion on them at every level:
 *     J dq = [dS; 0]                                        -> dq = H dS,   H = J^-1 [I; 0]
 *     J dv + Wq dq = [dS'; 0],  Wq = (J v)_q                -> dv = H dS' + Hv dS,  Hv = -J^-1 Wq H
 *     J da + (J a)_q dq + gamma_q dq + gamma_v dv = [dS''; 0],  gamma = Wq v
 *                                 -> da = H dS'' + Ha1 dS' + Ha0 dS,  Ha1 = -J^-1 gamma_v H,
 *                                    Ha0 = -J^-1 ((J a)_q H + gamma_q H + gamma_v Hv)
 * the accelerations a and multipliers lambda at the point from [R_a R_lambda; Phi_q 0] [a; lambda]
 * = [-R(q, v, 0, 0); -gamma_Phi] (linear in both), and H^T R_lambda = (Phi_q H)^T = 0 leaves
 *     M-hat = H^T R_a H,  C-hat = H^T (R_a Ha1 + R_v H),  K-hat = H^T (R_a Ha0 + R_v Hv + R_q H),
 *     F = -H^T R_r,  C = [y_q H + y_v Hv, y_v H],  D = y_r.
 * With coordinate states at rest (v = 0, a = 0) this is the reduction of mbl_symlin_new's main path
 * (Wq, gamma, Hv, Ha1, Ha0 vanish). sexpr: the z state functions s(q). */
static int build_moving(mbl_symlin *sl, const mbl_point *pt, const mblx_id *Y, const mblx_id *sexpr, mbl_status *st)
{
    mblx_graph *g = sl->g;
    int n = sl->n, m = sl->m, z = sl->z, nr = sl->nr, ny = sl->ny, N = n + m, rc = 0;
    const mblx_id *R = sl->R, *Phi = sl->Phi, *vs = sl->v, *as = sl->asym, *ls = sl->lsym;
    size_t ns = mblx_symbol_count(g) + 1;
    double *sv = mbl_calloc(ns, sizeof *sv);
    double *vals = mbl_alloc_array((size_t)N * N + 1, sizeof *vals), *jvals = mbl_alloc_array((size_t)n * n + 1, sizeof *jvals);
    mblx_id *al = new_ids((size_t)N), *zero = new_ids((size_t)N), *sol = new_ids((size_t)N);
    mblx_id *Jq = new_ids((size_t)n * n), *Wq = new_ids((size_t)n * n), *Gv = new_ids((size_t)n * n);
    mblx_id *Gq = new_ids((size_t)n * n), *Sys = new_ids((size_t)N * N), *terms = new_ids(2 * (size_t)n);
    mblx_id *Ma = new_ids((size_t)n * n), *Rv = new_ids((size_t)n * n), *Rq = new_ids((size_t)n * n);
    mblx_id *Rr = new_ids((size_t)n * nr), *X = new_ids((size_t)n * 2 * z);
    mblx_id *Hv = new_ids((size_t)n * z), *Ha1 = new_ids((size_t)n * z), *Ha0 = new_ids((size_t)n * z);
    mblx_id *T[8] = {NULL};
    sl->H = new_ids((size_t)n * z), sl->lam = new_ids((size_t)m), sl->acc = new_ids((size_t)n);
    sl->F = new_ids((size_t)z * nr), sl->C = new_ids((size_t)ny * 2 * z), sl->D = new_ids((size_t)ny * nr);
    if (!sv || !vals || !jvals || !al || !zero || !sol || !Jq || !Wq || !Gv || !Gq || !Sys || !terms || !Ma || !Rv ||
        !Rq || !Rr || !X || !Hv || !Ha1 || !Ha0 || !sl->H || !sl->lam || !sl->acc || !sl->F || !sl->C || !sl->D) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto out;
    }
    for (int i = 0; i < sl->np; i++) sv[mblx_symbol_index(g, sl->p[i])] = sl->pval[i];
    for (int i = 0; i < n; i++) {
        sv[mblx_symbol_index(g, sl->q[i])] = pt->q[i];
        sv[mblx_symbol_index(g, vs[i])] = pt->v[i];
        sv[mblx_symbol_index(g, as[i])] = pt->vdot[i];
    }
    for (int j = 0; j < m; j++) sv[mblx_symbol_index(g, ls[j])] = pt->lambda[j];
    for (int j = 0; j < nr; j++) sv[mblx_symbol_index(g, sl->r[j])] = pt->r[j];
    for (int i = 0; i < n; i++) al[i] = as[i];
    for (int j = 0; j < m; j++) al[n + j] = ls[j];
    for (int i = 0; i < N; i++) zero[i] = mblx_const(g, 0.0);
    /* J = Psi_q, Wq = (J v)_q, gamma = Wq v, gamma_v, gamma_q + (J a)_q; the system for a, lambda */
    for (int i = 0; i < N * N; i++) Sys[i] = zero[0];
    for (int k = 0; k < n; k++) {
        mblx_id psi = k < z ? sexpr[k] : Phi[k - z];
        for (int i = 0; i < n; i++) Jq[k + (size_t)i * n] = mblx_diff(g, psi, sl->q[i]);
        size_t nv = 0, na = 0;
        for (int i = 0; i < n; i++)
            if (!is_zero(g, Jq[k + (size_t)i * n])) terms[nv++] = mblx_mul(g, Jq[k + (size_t)i * n], vs[i]);
        mblx_id pv = mblx_sum(g, nv, terms);
        for (int i = 0; i < n; i++)
            if (!is_zero(g, Jq[k + (size_t)i * n])) terms[na++] = mblx_mul(g, Jq[k + (size_t)i * n], as[i]);
        mblx_id pa = mblx_sum(g, na, terms);
        size_t ng = 0;
        for (int i = 0; i < n; i++) {
            Wq[k + (size_t)i * n] = mblx_diff(g, pv, sl->q[i]);
            if (!is_zero(g, Wq[k + (size_t)i * n])) terms[ng++] = mblx_mul(g, Wq[k + (size_t)i * n], vs[i]);
        }
        mblx_id gamma = mblx_sum(g, ng, terms);
        for (int i = 0; i < n; i++) {
            Gv[k + (size_t)i * n] = mblx_diff(g, gamma, vs[i]);
            Gq[k + (size_t)i * n] = mblx_add(g, mblx_diff(g, gamma, sl->q[i]), mblx_diff(g, pa, sl->q[i]));
        }
        if (k >= z) {
            int j = k - z;
            for (int i = 0; i < n; i++) Sys[(n + j) + (size_t)i * N] = Jq[k + (size_t)i * n];
            sol[n + j] = mblx_neg(g, gamma);
        }
    }
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++) Sys[i + (size_t)j * N] = mblx_diff(g, R[i], as[j]);
        for (int j = 0; j < m; j++) Sys[i + (size_t)(n + j) * N] = mblx_diff(g, R[i], ls[j]);
        sol[i] = mblx_neg(g, mblx_subst(g, R[i], (size_t)N, al, zero));
    }
    rc = eval_nodes(g, (size_t)N * N, Sys, sv, vals, st);
    if (!rc) rc = sym_solve(g, N, Sys, vals, 1, sol, "the accelerations' system [M Phi_q^T; Phi_q 0]", st);
    if (rc) goto out;
    memcpy(sl->acc, sol, (size_t)n * sizeof *sol), memcpy(sl->lam, sol + n, (size_t)m * sizeof *sol);
    /* the Jacobians of R at (a, lambda) of the point */
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++) {
            Ma[i + (size_t)j * n] = mblx_subst(g, mblx_diff(g, R[i], as[j]), (size_t)N, al, sol);
            Rv[i + (size_t)j * n] = mblx_subst(g, mblx_diff(g, R[i], vs[j]), (size_t)N, al, sol);
            Rq[i + (size_t)j * n] = mblx_subst(g, mblx_diff(g, R[i], sl->q[j]), (size_t)N, al, sol);
        }
        for (int j = 0; j < nr; j++) Rr[i + (size_t)j * n] = mblx_subst(g, mblx_diff(g, R[i], sl->r[j]), (size_t)N, al, sol);
    }
    for (size_t i = 0; i < (size_t)n * n; i++) Gq[i] = mblx_subst(g, Gq[i], (size_t)N, al, sol);
    /* H = J^-1 [I; 0] */
    const char *j_what = "[s_q; Phi_q] (the state functions' and constraints' Jacobian)";
    rc = eval_nodes(g, (size_t)n * n, Jq, sv, jvals, st);
    if (rc) goto out;
    for (int s = 0; s < z; s++)
        for (int k = 0; k < n; k++) X[k + (size_t)s * n] = k == s ? mblx_const(g, 1.0) : zero[0];
    rc = solve_copy(g, n, Jq, jvals, z, X, j_what, st);
    if (rc) goto out;
    memcpy(sl->H, X, (size_t)n * z * sizeof *X);
    /* Hv, Ha1 from [Wq H, gamma_v H]; Ha0 from (gamma_q + (J a)_q) H + gamma_v Hv */
    T[0] = matmul(g, n, n, Wq, z, sl->H), T[1] = matmul(g, n, n, Gv, z, sl->H);
    if (!T[0] || !T[1]) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto out;
    }
    memcpy(X, T[0], (size_t)n * z * sizeof *X), memcpy(X + (size_t)n * z, T[1], (size_t)n * z * sizeof *X);
    rc = solve_copy(g, n, Jq, jvals, 2 * z, X, j_what, st);
    if (rc) goto out;
    for (size_t i = 0; i < (size_t)n * z; i++) Hv[i] = mblx_neg(g, X[i]), Ha1[i] = mblx_neg(g, X[i + (size_t)n * z]);
    T[2] = matmul(g, n, n, Gq, z, sl->H), T[3] = matmul(g, n, n, Gv, z, Hv);
    if (!T[2] || !T[3]) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < (size_t)n * z; i++) X[i] = mblx_add(g, T[2][i], T[3][i]);
    rc = solve_copy(g, n, Jq, jvals, z, X, j_what, st);
    if (rc) goto out;
    for (size_t i = 0; i < (size_t)n * z; i++) Ha0[i] = mblx_neg(g, X[i]);
    /* M-hat, C-hat, K-hat */
    sl->M = congruence(g, n, z, sl->H, Ma, z, sl->H);
    T[4] = congruence(g, n, z, sl->H, Ma, z, Ha1), T[5] = congruence(g, n, z, sl->H, Rv, z, sl->H);
    T[6] = congruence(g, n, z, sl->H, Ma, z, Ha0), T[7] = congruence(g, n, z, sl->H, Rv, z, Hv);
    sl->K = congruence(g, n, z, sl->H, Rq, z, sl->H);
    sl->Cd = new_ids((size_t)z * z);
    if (!sl->M || !sl->K || !sl->Cd || !T[4] || !T[5] || !T[6] || !T[7]) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < (size_t)z * z; i++) {
        sl->Cd[i] = mblx_add(g, T[4][i], T[5][i]);
        mblx_id k3[3] = {T[6][i], T[7][i], sl->K[i]};
        sl->K[i] = mblx_sum(g, 3, k3);
    }
    /* F = -H^T R_r */
    for (int s = 0; s < z; s++)
        for (int j = 0; j < nr; j++) {
            size_t nt = 0;
            for (int i = 0; i < n; i++) {
                mblx_id h = sl->H[i + (size_t)s * n], rr = Rr[i + (size_t)j * n];
                if (!is_zero(g, h) && !is_zero(g, rr)) terms[nt++] = mblx_mul(g, h, rr);
            }
            sl->F[s + (size_t)j * z] = mblx_neg(g, mblx_sum(g, nt, terms));
        }
    /* C = [y_q H + y_v Hv, y_v H], D = y_r */
    for (int k = 0; k < ny; k++) {
        for (int s = 0; s < z; s++) {
            size_t nq = 0;
            mblx_id *tv = new_ids((size_t)n);
            if (!tv) {
                rc = mbl_error(st, MBL_ENOMEM, "out of memory");
                goto out;
            }
            size_t nv = 0;
            for (int i = 0; i < n; i++) {
                mblx_id dq = mblx_diff(g, Y[k], sl->q[i]), dv = mblx_diff(g, Y[k], vs[i]);
                mblx_id h = sl->H[i + (size_t)s * n], hv = Hv[i + (size_t)s * n];
                if (!is_zero(g, dq) && !is_zero(g, h)) terms[nq++] = mblx_mul(g, dq, h);
                if (!is_zero(g, dv) && !is_zero(g, hv)) terms[nq++] = mblx_mul(g, dv, hv);
                if (!is_zero(g, dv) && !is_zero(g, h)) tv[nv++] = mblx_mul(g, dv, h);
            }
            sl->C[k + (size_t)s * ny] = mblx_sum(g, nq, terms);
            sl->C[k + (size_t)(s + z) * ny] = mblx_sum(g, nv, tv);
            mbl_free(tv);
        }
        for (int j = 0; j < nr; j++) sl->D[k + (size_t)j * ny] = mblx_diff(g, Y[k], sl->r[j]);
    }
    rc = mblx_graph_status(g, st);
    if (!rc && !sl->moving) {
        /* at rest (states that are not coordinates): v = 0 */
        mblx_id *mats[] = {sl->H, sl->M, sl->Cd, sl->K, sl->F, sl->C, sl->D, sl->lam, sl->acc};
        size_t lens[] = {(size_t)n * z, (size_t)z * z, (size_t)z * z, (size_t)z * z, (size_t)z * nr,
                         (size_t)ny * 2 * z, (size_t)ny * nr, (size_t)m, (size_t)n};
        for (int k = 0; k < 9; k++)
            for (size_t i = 0; i < lens[k]; i++) mats[k][i] = mblx_subst(g, mats[k][i], (size_t)n, vs, zero);
    }
    if (!rc) rc = make_ab(sl, sv, st);
out:
    for (int k = 0; k < 8; k++) mbl_free(T[k]);
    mbl_free(sv), mbl_free(vals), mbl_free(jvals), mbl_free(al), mbl_free(zero), mbl_free(sol), mbl_free(Jq);
    mbl_free(Wq), mbl_free(Gv), mbl_free(Gq), mbl_free(Sys), mbl_free(terms), mbl_free(Ma), mbl_free(Rv), mbl_free(Rq);
    mbl_free(Rr), mbl_free(X), mbl_free(Hv), mbl_free(Ha1), mbl_free(Ha0);
    return rc;
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

int mbl_symlin_new(const mbl_model *model, const mbl_point *pt, size_t max_nodes, mbl_symlin **out, mbl_status *st)
{
    model_view view; /* the model's data (model/model_view.h) */
    model_view_get(model, &view);
    const model_view *md = &view;
    *out = NULL;
    if (!max_nodes) max_nodes = SYMLIN_MAX_NODES_DEFAULT;
    if (md->k) return mbl_error(st, MBL_EMODEL, "symbolic linear models: non-holonomic constraints are not supported");
    if (md->nuvs) return mbl_error(st, MBL_EMODEL, "symbolic linear models: velocity states are not supported");
    int moving = 0;
    for (int i = 0; i < md->n; i++) moving |= pt->v[i] != 0.0 || pt->vdot[i] != 0.0;
    /* the states the library chooses (coordinates only) */
    mbl_linear *lin = NULL;
    int rc = mbl_linearize(model, pt, NULL, &lin, st);
    if (rc) return rc;
    int n = md->n, m = md->m, z = lin->z0;
    if (lin->z1 != z || n - m != z) {
        mbl_linear_free(lin);
        return mbl_error(st, MBL_EMODEL,
                         "symbolic linear models: %d coordinates, %d constraints and %d states do not match "
                         "(redundant constraints or non-coordinate states)", n, m, z);
    }
    int *usidx = NULL;
    mblx_id *sexpr = NULL;
    mbl_symlin *sl = mbl_calloc(1, sizeof *sl);
    if (!sl) {
        mbl_linear_free(lin);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    sl->n = n, sl->m = m, sl->np = md->np, sl->nr = md->nr, sl->ny = md->ny, sl->z = z, sl->nx = 2 * z;
    sl->t = pt->t;
    sl->moving = moving;
    sl->at = (int)pt->at;
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
    /* states: coordinates (sidx), or the file's state functions s(q) (usidx, e.g. joint measures) */
    int general = moving;
    usidx = mbl_alloc_array((size_t)z + 1, sizeof *usidx);
    if (!usidx) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    for (int s = 0; s < z; s++) {
        sl->sidx[s] = -1, usidx[s] = -1;
        for (int i = 0; i < n; i++)
            if (!strcmp(lin->state_names[s], md->qname[i])) sl->sidx[s] = i;
        for (int k = 0; sl->sidx[s] < 0 && k < md->nus; k++)
            if (!strcmp(lin->state_names[s], md->us_text[k])) usidx[s] = k;
        if (sl->sidx[s] < 0 && usidx[s] < 0) {
            rc = mbl_error(st, MBL_EMODEL, "symbolic linear models: the state %s is neither a coordinate nor a state "
                           "function of the file", lin->state_names[s]);
            goto done;
        }
        general |= usidx[s] >= 0;
    }
    /* the residual with the terms evaluated beside the tapes (a relative tree's) as expressions:
     * built before the node map below is sized */
    const mblx_id *Fn, *jn;
    model_graph_lock(model, 1);
    rc = model_dae_nodes(model, &Fn, &jn, st);
    model_graph_lock(model, 0);
    if (rc) goto done;
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
    copier cp = {md->g, g, map, symmap};
    for (int i = 0; i < n && !rc; i++)
        if ((R[i] = copy_node(&cp, Fn[md->row0[MBL_ROW_EOM] + i], st)) == MBLX_NONE) rc = -1;
    for (int j = 0; j < m && !rc; j++)
        if ((Phi[j] = copy_node(&cp, Fn[md->row0[MBL_ROW_PHI] + j], st)) == MBLX_NONE) rc = -1;
    for (int j = 0; j < md->ny && !rc; j++)
        if ((Y[j] = copy_node(&cp, md->y[j], st)) == MBLX_NONE) rc = -1;
    sexpr = mbl_alloc_array((size_t)z + 1, sizeof *sexpr);
    if (!sexpr && !rc) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int s = 0; s < z && !rc; s++) {
        sexpr[s] = sl->sidx[s] >= 0 ? sl->q[sl->sidx[s]] : copy_node(&cp, md->us[usidx[s]], st);
        if (sexpr[s] == MBLX_NONE) rc = -1;
    }
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
    /* kept for the Newton iteration (mbl_symlin_newton) */
    sl->R = mbl_alloc_array(N1, sizeof(mblx_id)), sl->Phi = mbl_alloc_array((size_t)m + 1, sizeof(mblx_id));
    sl->v = mbl_alloc_array(N1, sizeof(mblx_id)), sl->asym = mbl_alloc_array(N1, sizeof(mblx_id));
    sl->lsym = mbl_alloc_array((size_t)m + 1, sizeof(mblx_id)), sl->vval = mbl_alloc_array(N1, sizeof(double));
    if (!sl->R || !sl->Phi || !sl->v || !sl->asym || !sl->lsym || !sl->vval) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done2;
    }
    memcpy(sl->R, R, (size_t)n * sizeof *R), memcpy(sl->Phi, Phi, (size_t)m * sizeof *Phi);
    memcpy(sl->v, vs, (size_t)n * sizeof *vs), memcpy(sl->asym, as, (size_t)n * sizeof *as);
    memcpy(sl->lsym, ls, (size_t)m * sizeof *ls), memcpy(sl->vval, pt->v, (size_t)n * sizeof(double));
    if (general) {
        rc = build_moving(sl, pt, Y, sexpr, st);
        goto moving_done;
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
        for (int j = 0; j < m; j++) sv[mblx_symbol_index(g, ls[j])] = pt->lambda[j];
        rc = make_ab(sl, sv, st);
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
moving_done:
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
    mbl_free(usidx), mbl_free(sexpr);
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
    for (long combo = 0; !point_symbols && sl->res && !ok && combos <= SPECIAL_MAX_COMBOS && combo < (long)combos; combo++) {
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
        if (sl->moving && !point_symbols)
            snprintf(sl->note, sizeof sl->note,
                     "a point with motion: the coordinates q and velocities der(q) stand for the point's values "
                     "(no closed form is searched)");
        else if (point_symbols)
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
    /* the printed matrices in the expanded canonical form where it prints at most twice as long
     * as the form built (A and B, which hold M-hat^-1, stay as the elimination built them) */
    {
        mblx_id *mats[] = {sl->H, sl->M, sl->Cd, sl->K, sl->F, sl->C, sl->D, sl->qpoint, sl->lam};
        size_t lens[] = {(size_t)n * sl->z, (size_t)sl->z * sl->z, (size_t)sl->z * sl->z, (size_t)sl->z * sl->z,
                         (size_t)sl->z * sl->nr, (size_t)sl->ny * sl->nx, (size_t)sl->ny * sl->nr, (size_t)n,
                         (size_t)m};
        size_t total = 0, at = 0;
        for (int k = 0; k < 9; k++) total += mats[k] ? lens[k] : 0;
        mblx_id *xs = mbl_alloc_array(total + 1, sizeof *xs);
        if (!xs) {
            rc = mbl_error(st, MBL_ENOMEM, "out of memory");
            goto out;
        }
        /* printed sizes (trees) of the forms built: entries too long to print are not expanded */
        size_t nn = mblx_node_count(g);
        double *ts0 = mbl_alloc_array(nn + 1, sizeof *ts0);
        if (!ts0) {
            mbl_free(xs);
            rc = mbl_error(st, MBL_ENOMEM, "out of memory");
            goto out;
        }
        for (size_t e = 0; e < nn; e++) {
            double sz = 1.0;
            int na = mblx_node_nargs(g, (mblx_id)e);
            for (int i = 0; i < na; i++) sz += ts0[mblx_node_arg(g, (mblx_id)e, i)];
            ts0[e] = sz;
        }
        for (int k = 0; k < 9; k++)
            for (size_t i = 0; mats[k] && i < lens[k]; i++)
                xs[at++] = ts0[mats[k][i]] <= SYMLIN_EXPAND_MAX_TERMS ? mbl_symlin_expand(g, mats[k][i], SYMLIN_EXPAND_MAX_TERMS)
                                                                      : MBLX_NONE;
        mbl_free(ts0);
        nn = mblx_node_count(g);
        double *ts = mbl_alloc_array(nn + 1, sizeof *ts);
        if (!ts) {
            mbl_free(xs);
            rc = mbl_error(st, MBL_ENOMEM, "out of memory");
            goto out;
        }
        for (size_t e = 0; e < nn; e++) {
            double sz = 1.0;
            int na = mblx_node_nargs(g, (mblx_id)e);
            for (int i = 0; i < na; i++) sz += ts[mblx_node_arg(g, (mblx_id)e, i)];
            ts[e] = sz;
        }
        at = 0;
        for (int k = 0; k < 9; k++)
            for (size_t i = 0; mats[k] && i < lens[k]; i++, at++)
                if (xs[at] != MBLX_NONE && ts[xs[at]] <= 2.0 * ts[mats[k][i]]) mats[k][i] = xs[at];
        mbl_free(ts), mbl_free(xs);
    }
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

/* ---- the Newton iteration for the operating point ------------------------------------------------ */

int mbl_symlin_newton(mbl_symlin *sl, mbl_status *st)
{
    if (sl->at != MBL_AT_EQUILIBRIUM && sl->at != MBL_AT_STEADY)
        return mbl_error(st, MBL_EARG,
                         "the Newton iteration solves an equilibrium or a steady motion; this point is given "
                         "(linearize.at: given)");
    mblx_graph *g = sl->g;
    int n = sl->n, m = sl->m, N = n + m, nrow = n + 3 * m, rc = 0;
    sl->nn = 0;
    mbl_free(sl->nunk), mbl_free(sl->nres), mbl_free(sl->njac), mbl_free(sl->nstep);
    sl->nunk = NULL, sl->nres = sl->njac = sl->nstep = NULL;
    mblx_id *rows = new_ids((size_t)nrow), *unk = new_ids((size_t)N), *al = new_ids(2 * (size_t)n);
    mblx_id *sub = new_ids(2 * (size_t)n), *terms = new_ids(2 * (size_t)n), *J = NULL;
    int *cols = mbl_alloc_array((size_t)N + 1, sizeof *cols), *jpvt = NULL;
    size_t ns = mblx_symbol_count(g) + 1;
    double *sv = mbl_calloc(ns, sizeof *sv), *Jv = NULL, *tau = NULL, *vals = NULL;
    if (!rows || !unk || !al || !sub || !terms || !cols || !sv) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto out;
    }
    /* residuals at vdot = 0 (and v = 0 at rest) */
    for (int i = 0; i < n; i++) al[i] = sl->asym[i], sub[i] = mblx_const(g, 0.0);
    size_t nsub = (size_t)n;
    if (!sl->moving) {
        for (int i = 0; i < n; i++) al[n + i] = sl->v[i], sub[n + i] = sub[0];
        nsub = 2 * (size_t)n;
    }
    int nr = 0;
    for (int i = 0; i < n; i++) rows[nr++] = mblx_subst(g, sl->R[i], nsub, al, sub);
    for (int j = 0; j < m; j++) rows[nr++] = sl->Phi[j];
    if (sl->moving)
        for (int j = 0; j < m; j++) {
            size_t nt = 0;
            for (int i = 0; i < n; i++) {
                mblx_id d = mblx_diff(g, sl->Phi[j], sl->q[i]);
                if (!is_zero(g, d)) terms[nt++] = mblx_mul(g, d, sl->v[i]);
            }
            mblx_id pv = mblx_sum(g, nt, terms);
            rows[nr++] = pv;
            nt = 0;
            for (int i = 0; i < n; i++) {
                mblx_id d = mblx_diff(g, pv, sl->q[i]);
                if (!is_zero(g, d)) terms[nt++] = mblx_mul(g, d, sl->v[i]);
            }
            rows[nr++] = mblx_sum(g, nt, terms);
        }
    int keep = 0;
    for (int i = 0; i < nr; i++)
        if (!is_zero(g, rows[i])) rows[keep++] = rows[i];
    nr = keep;
    for (int i = 0; i < n; i++) unk[i] = sl->q[i];
    for (int j = 0; j < m; j++) unk[n + j] = sl->lsym[j];
    /* the Jacobian's values at the point */
    J = new_ids((size_t)nr * N);
    Jv = mbl_alloc_array((size_t)nr * N + 1, sizeof *Jv);
    if (!J || !Jv) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto out;
    }
    for (int j = 0; j < N; j++)
        for (int i = 0; i < nr; i++) J[i + (size_t)j * nr] = mblx_diff(g, rows[i], unk[j]);
    for (int i = 0; i < sl->np; i++) sv[mblx_symbol_index(g, sl->p[i])] = sl->pval[i];
    for (int i = 0; i < n; i++) {
        sv[mblx_symbol_index(g, sl->q[i])] = sl->qval[i];
        sv[mblx_symbol_index(g, sl->v[i])] = sl->moving ? sl->vval[i] : 0.0;
    }
    for (int j = 0; j < sl->nr; j++) sv[mblx_symbol_index(g, sl->r[j])] = sl->rval[j];
    {
        /* the multipliers at the point: the linear model's lambda (moving: exact; at rest lambda(q)) */
        double *lv = mbl_alloc_array((size_t)m + 1, sizeof *lv);
        if (!lv) {
            rc = mbl_error(st, MBL_ENOMEM, "out of memory");
            goto out;
        }
        rc = eval_nodes(g, (size_t)m, sl->lam, sv, lv, st);
        for (int j = 0; !rc && j < m; j++) sv[mblx_symbol_index(g, sl->lsym[j])] = lv[j];
        mbl_free(lv);
    }
    if (!rc) rc = eval_nodes(g, (size_t)nr * N, J, sv, Jv, st);
    if (rc) goto out;
    /* unknowns whose column vanishes at the point (cyclic coordinates, a spin angle): kept */
    double scale = 0.0;
    for (size_t i = 0; i < (size_t)nr * N; i++) scale = fmax(scale, fabs(Jv[i]));
    int nc = 0;
    for (int j = 0; j < N; j++) {
        double cm = 0.0;
        for (int i = 0; i < nr; i++) cm = fmax(cm, fabs(Jv[i + (size_t)j * nr]));
        if (cm > 1e-13 * scale) cols[nc++] = j;
    }
    if (nc > nr || nc == 0) {
        rc = mbl_error(st, MBL_ESINGULAR, "the Newton iteration: %d unknowns and %d equations at the point", nc, nr);
        goto out;
    }
    /* rows: QR with column pivoting of the transpose of the kept columns */
    tau = mbl_alloc_array((size_t)nr + 1, sizeof *tau);
    jpvt = mbl_calloc((size_t)nr + 1, sizeof *jpvt);
    double *JT = mbl_alloc_array((size_t)nc * nr + 1, sizeof *JT);
    if (!tau || !jpvt || !JT) {
        mbl_free(JT);
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto out;
    }
    for (int a = 0; a < nc; a++)
        for (int i = 0; i < nr; i++) JT[a + (size_t)i * nc] = Jv[i + (size_t)cols[a] * nr];
    lapack_int info = LAPACKE_dgeqp3(LAPACK_COL_MAJOR, nc, nr, JT, nc, jpvt, tau);
    double r0 = info == 0 ? fabs(JT[0]) : 0.0, rlast = info == 0 ? fabs(JT[(nc - 1) + (size_t)(nc - 1) * nc]) : 0.0;
    mbl_free(JT);
    if (info != 0 || !(rlast > 1e-10 * r0)) {
        rc = mbl_error(st, MBL_ESINGULAR,
                       "the Newton iteration: the operating point's equations are singular at the point (%d unknowns)",
                       nc);
        goto out;
    }
    sl->nn = nc;
    sl->nunk = mbl_alloc_array((size_t)nc + 1, sizeof *sl->nunk);
    sl->nres = new_ids((size_t)nc), sl->njac = new_ids((size_t)nc * nc), sl->nstep = new_ids((size_t)nc);
    vals = mbl_alloc_array((size_t)nc * nc + 1, sizeof *vals);
    if (!sl->nunk || !sl->nres || !sl->njac || !sl->nstep || !vals) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto out;
    }
    for (int a = 0; a < nc; a++) {
        int i = jpvt[a] - 1;
        sl->nunk[a] = cols[a];
        sl->nres[a] = rows[i];
        sl->nstep[a] = mblx_neg(g, rows[i]);
        for (int b = 0; b < nc; b++) {
            sl->njac[a + (size_t)b * nc] = J[i + (size_t)cols[b] * nr];
            vals[a + (size_t)b * nc] = Jv[i + (size_t)cols[b] * nr];
        }
    }
    rc = solve_copy(g, nc, sl->njac, vals, 1, sl->nstep, "the Newton iteration's Jacobian", st);
    if (!rc) rc = mblx_graph_status(g, st);
out:
    if (rc) sl->nn = 0;
    mbl_free(rows), mbl_free(unk), mbl_free(al), mbl_free(sub), mbl_free(terms), mbl_free(J), mbl_free(cols);
    mbl_free(jpvt), mbl_free(sv), mbl_free(Jv), mbl_free(tau), mbl_free(vals);
    return rc;
}
