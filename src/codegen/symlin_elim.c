/* Symbolic linear algebra of the symbolic linear models (symlin.c): Gaussian elimination with
 * pivots chosen by their values at the model's point, congruences H^T X H, and A, B from M-hat,
 * C-hat, K-hat, F. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/symlin_internal.h"

int codegen_is_zero(const mblx_graph *g, mblx_id e)
{
    double v;
    return mblx_is_const(g, e, &v) && v == 0.0;
}

mblx_id *codegen_new_ids(size_t n)
{
    return mbl_alloc_array(n + 1, sizeof(mblx_id));
}

/* Solve P X = R (P k x k, R k x c, both column-major nodes, modified) with partial pivoting on
 * the values Pv of P at the model's point; X overwrites R. */
int codegen_sym_solve(mblx_graph *g, int k, mblx_id *P, double *Pv, int c, mblx_id *R, const char *what,
                      mbl_status *st)
{
    for (int j = 0; j < k; j++) {
        int piv = -1;
        double best = 0.0, scale = 0.0;
        for (int i = 0; i < k; i++)
            if (fabs(Pv[i + (size_t)j * k]) > scale) scale = fabs(Pv[i + (size_t)j * k]);
        for (int i = j; i < k; i++) {
            double a = fabs(Pv[i + (size_t)j * k]);
            if (a > best && !codegen_is_zero(g, P[i + (size_t)j * k])) best = a, piv = i;
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
            if (codegen_is_zero(g, pij)) continue;
            mblx_id f = mblx_div(g, pij, pjj);
            double fv = Pv[i + (size_t)j * k] / Pv[j + (size_t)j * k];
            for (int l = j + 1; l < k; l++) {
                mblx_id pjl = P[j + (size_t)l * k];
                if (codegen_is_zero(g, pjl)) continue;
                P[i + (size_t)l * k] = mblx_sub(g, P[i + (size_t)l * k], mblx_mul(g, f, pjl));
                Pv[i + (size_t)l * k] -= fv * Pv[j + (size_t)l * k];
            }
            for (int l = 0; l < c; l++) {
                mblx_id rjl = R[j + (size_t)l * k];
                if (codegen_is_zero(g, rjl)) continue;
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
                if (codegen_is_zero(g, pji) || codegen_is_zero(g, xi)) continue;
                terms[nt++] = mblx_neg(g, mblx_mul(g, pji, xi));
            }
            R[j + (size_t)l * k] = mblx_div(g, mblx_sum(g, nt, terms), P[j + (size_t)j * k]);
        }
    }
    mbl_free(terms);
    return mblx_graph_status(g, st);
}

/* values of nodes at symbol values sv */
int codegen_eval_nodes(const mblx_graph *g, size_t n, const mblx_id *e, const double *sv, double *out,
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
mblx_id *codegen_congruence(mblx_graph *g, int n, int a, const mblx_id *L, const mblx_id *X, int b,
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
                if (codegen_is_zero(g, x) || codegen_is_zero(g, r)) continue;
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
                if (codegen_is_zero(g, x) || codegen_is_zero(g, t)) continue;
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
int codegen_make_ab(mbl_symlin *sl, const double *sv, mbl_status *st)
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
        rc = codegen_eval_nodes(g, (size_t)z * z, Mc, sv, mv, st);
    }
    if (!rc) rc = codegen_sym_solve(g, z, Mc, mv, c, X, "M-hat", st);
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

/* X = P^-1 B for a k x k P (not modified: the elimination works on copies), B k x c overwritten */
int codegen_solve_copy(mblx_graph *g, int k, const mblx_id *P, const double *Pv, int c, mblx_id *B, const char *what,
                       mbl_status *st)
{
    mblx_id *Pc = codegen_new_ids((size_t)k * k);
    double *Vc = mbl_alloc_array((size_t)k * k + 1, sizeof *Vc);
    int rc = (!Pc || !Vc) ? mbl_error(st, MBL_ENOMEM, "out of memory") : 0;
    if (!rc) {
        memcpy(Pc, P, (size_t)k * k * sizeof *Pc), memcpy(Vc, Pv, (size_t)k * k * sizeof *Vc);
        rc = codegen_sym_solve(g, k, Pc, Vc, c, B, what, st);
    }
    mbl_free(Pc), mbl_free(Vc);
    return rc;
}
