/* Symbolic linear models (symlin.c) at a point with motion, or with states that are the file's
 * state functions s(q) (a mechanism's joint measures): the reduction on the stacked constraints. */
#include <stdlib.h>
#include <string.h>

#include "codegen/symlin_internal.h"

/* out (ra x cb) = A (ra x ca) B (ca x cb); NULL when out of memory */
static mblx_id *matmul(mblx_graph *g, int ra, int ca, const mblx_id *A, int cb, const mblx_id *B)
{
    mblx_id *out = codegen_new_ids((size_t)ra * cb), *terms = codegen_new_ids((size_t)ca);
    if (!out || !terms) {
        mbl_free(out), mbl_free(terms);
        return NULL;
    }
    for (int j = 0; j < cb; j++)
        for (int i = 0; i < ra; i++) {
            size_t nt = 0;
            for (int l = 0; l < ca; l++) {
                mblx_id a = A[i + (size_t)l * ra], b = B[l + (size_t)j * ca];
                if (codegen_is_zero(g, a) || codegen_is_zero(g, b)) continue;
                terms[nt++] = mblx_mul(g, a, b);
            }
            out[i + (size_t)j * ra] = mblx_sum(g, nt, terms);
        }
    mbl_free(terms);
    return out;
}

/* One reduction at a point with motion: the symbolic model, the point's symbol values and the
 * matrices the steps share (mov_free). */
typedef struct mov {
    mbl_symlin *sl;
    mblx_graph *g;
    int n, m, z, nr, ny, N;  /* N = n + m: the accelerations' system */
    double *sv, *vals, *jvals;
    mblx_id *al, *zero, *sol; /* [a; lambda] symbols, zeros, and their solution at the point */
    mblx_id *Jq, *Wq, *Gv, *Gq, *Sys, *terms;
    mblx_id *Ma, *Rv, *Rq, *Rr, *X, *Hv, *Ha1, *Ha0;
    mblx_id *T[8];
} mov;

static void mov_free(mov *w)
{
    for (int k = 0; k < 8; k++) mbl_free(w->T[k]);
    mbl_free(w->sv), mbl_free(w->vals), mbl_free(w->jvals), mbl_free(w->al), mbl_free(w->zero), mbl_free(w->sol);
    mbl_free(w->Jq), mbl_free(w->Wq), mbl_free(w->Gv), mbl_free(w->Gq), mbl_free(w->Sys), mbl_free(w->terms);
    mbl_free(w->Ma), mbl_free(w->Rv), mbl_free(w->Rq), mbl_free(w->Rr), mbl_free(w->X), mbl_free(w->Hv);
    mbl_free(w->Ha1), mbl_free(w->Ha0);
}

/* The arrays (the symbolic model's too) and every symbol's value at the point. */
static int mov_alloc(mov *w, const mbl_point *pt, mbl_status *st)
{
    mbl_symlin *sl = w->sl;
    mblx_graph *g = w->g;
    int n = w->n, m = w->m, z = w->z, nr = w->nr, ny = w->ny, N = w->N;
    const mblx_id *vs = sl->v, *as = sl->asym, *ls = sl->lsym;
    size_t ns = mblx_symbol_count(g) + 1;
    double *sv = w->sv = mbl_calloc(ns, sizeof *sv);
    w->vals = mbl_alloc_array((size_t)N * N + 1, sizeof *w->vals), w->jvals = mbl_alloc_array((size_t)n * n + 1, sizeof *w->jvals);
    w->al = codegen_new_ids((size_t)N), w->zero = codegen_new_ids((size_t)N), w->sol = codegen_new_ids((size_t)N);
    w->Jq = codegen_new_ids((size_t)n * n), w->Wq = codegen_new_ids((size_t)n * n), w->Gv = codegen_new_ids((size_t)n * n);
    w->Gq = codegen_new_ids((size_t)n * n), w->Sys = codegen_new_ids((size_t)N * N), w->terms = codegen_new_ids(2 * (size_t)n);
    w->Ma = codegen_new_ids((size_t)n * n), w->Rv = codegen_new_ids((size_t)n * n), w->Rq = codegen_new_ids((size_t)n * n);
    w->Rr = codegen_new_ids((size_t)n * nr), w->X = codegen_new_ids((size_t)n * 2 * z);
    w->Hv = codegen_new_ids((size_t)n * z), w->Ha1 = codegen_new_ids((size_t)n * z), w->Ha0 = codegen_new_ids((size_t)n * z);
    sl->H = codegen_new_ids((size_t)n * z), sl->lam = codegen_new_ids((size_t)m), sl->acc = codegen_new_ids((size_t)n);
    sl->F = codegen_new_ids((size_t)z * nr), sl->C = codegen_new_ids((size_t)ny * 2 * z), sl->D = codegen_new_ids((size_t)ny * nr);
    if (!sv || !w->vals || !w->jvals || !w->al || !w->zero || !w->sol || !w->Jq || !w->Wq || !w->Gv || !w->Gq ||
        !w->Sys || !w->terms || !w->Ma || !w->Rv || !w->Rq || !w->Rr || !w->X || !w->Hv || !w->Ha1 || !w->Ha0 ||
        !sl->H || !sl->lam || !sl->acc || !sl->F || !sl->C || !sl->D)
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int i = 0; i < sl->np; i++) sv[mblx_symbol_index(g, sl->p[i])] = sl->pval[i];
    for (int i = 0; i < n; i++) {
        sv[mblx_symbol_index(g, sl->q[i])] = pt->q[i];
        sv[mblx_symbol_index(g, vs[i])] = pt->v[i];
        sv[mblx_symbol_index(g, as[i])] = pt->vdot[i];
    }
    for (int j = 0; j < m; j++) sv[mblx_symbol_index(g, ls[j])] = pt->lambda[j];
    for (int j = 0; j < nr; j++) sv[mblx_symbol_index(g, sl->r[j])] = pt->r[j];
    for (int i = 0; i < n; i++) w->al[i] = as[i];
    for (int j = 0; j < m; j++) w->al[n + j] = ls[j];
    for (int i = 0; i < N; i++) w->zero[i] = mblx_const(g, 0.0);
    return 0;
}

/* J = Psi_q, Wq = (J v)_q, gamma = Wq v, gamma_v, gamma_q + (J a)_q; the system for a, lambda,
 * solved at the point (sl->acc, sl->lam). */
static int mov_accelerations(mov *w, const mblx_id *sexpr, mbl_status *st)
{
    mbl_symlin *sl = w->sl;
    mblx_graph *g = w->g;
    int n = w->n, m = w->m, z = w->z, N = w->N, rc = 0;
    const mblx_id *R = sl->R, *Phi = sl->Phi, *vs = sl->v, *as = sl->asym, *ls = sl->lsym;
    mblx_id *Jq = w->Jq, *Wq = w->Wq, *Gv = w->Gv, *Gq = w->Gq, *Sys = w->Sys, *terms = w->terms, *sol = w->sol;
    /* J = Psi_q, Wq = (J v)_q, gamma = Wq v, gamma_v, gamma_q + (J a)_q; the system for a, lambda */
    for (int i = 0; i < N * N; i++) Sys[i] = w->zero[0];
    for (int k = 0; k < n; k++) {
        mblx_id psi = k < z ? sexpr[k] : Phi[k - z];
        for (int i = 0; i < n; i++) Jq[k + (size_t)i * n] = mblx_diff(g, psi, sl->q[i]);
        size_t nv = 0, na = 0;
        for (int i = 0; i < n; i++)
            if (!codegen_is_zero(g, Jq[k + (size_t)i * n])) terms[nv++] = mblx_mul(g, Jq[k + (size_t)i * n], vs[i]);
        mblx_id pv = mblx_sum(g, nv, terms);
        for (int i = 0; i < n; i++)
            if (!codegen_is_zero(g, Jq[k + (size_t)i * n])) terms[na++] = mblx_mul(g, Jq[k + (size_t)i * n], as[i]);
        mblx_id pa = mblx_sum(g, na, terms);
        size_t ng = 0;
        for (int i = 0; i < n; i++) {
            Wq[k + (size_t)i * n] = mblx_diff(g, pv, sl->q[i]);
            if (!codegen_is_zero(g, Wq[k + (size_t)i * n])) terms[ng++] = mblx_mul(g, Wq[k + (size_t)i * n], vs[i]);
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
        sol[i] = mblx_neg(g, mblx_subst(g, R[i], (size_t)N, w->al, w->zero));
    }
    rc = codegen_eval_nodes(g, (size_t)N * N, Sys, w->sv, w->vals, st);
    if (!rc) rc = codegen_sym_solve(g, N, Sys, w->vals, 1, sol, "the accelerations' system [M Phi_q^T; Phi_q 0]", st);
    if (rc) return rc;
    memcpy(sl->acc, sol, (size_t)n * sizeof *sol), memcpy(sl->lam, sol + n, (size_t)m * sizeof *sol);
    return 0;
}

/* The Jacobians of R at (a, lambda) of the point; gamma_q + (J a)_q there. */
static void mov_jacobians(mov *w)
{
    mbl_symlin *sl = w->sl;
    mblx_graph *g = w->g;
    int n = w->n, nr = w->nr, N = w->N;
    const mblx_id *R = sl->R, *vs = sl->v, *as = sl->asym, *al = w->al, *sol = w->sol;
    mblx_id *Ma = w->Ma, *Rv = w->Rv, *Rq = w->Rq, *Rr = w->Rr, *Gq = w->Gq;
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
}

/* H = J^-1 [I; 0]; Hv, Ha1 from [Wq H, gamma_v H]; Ha0 from (gamma_q + (J a)_q) H + gamma_v Hv. */
static int mov_h(mov *w, mbl_status *st)
{
    mbl_symlin *sl = w->sl;
    mblx_graph *g = w->g;
    int n = w->n, z = w->z, rc = 0;
    mblx_id *X = w->X, *Hv = w->Hv, *Ha1 = w->Ha1, *Ha0 = w->Ha0, **T = w->T;
    const mblx_id *Jq = w->Jq;
    const double *jvals = w->jvals;
    /* H = J^-1 [I; 0] */
    const char *j_what = "[s_q; Phi_q] (the state functions' and constraints' Jacobian)";
    rc = codegen_eval_nodes(g, (size_t)n * n, Jq, w->sv, w->jvals, st);
    if (rc) return rc;
    for (int s = 0; s < z; s++)
        for (int k = 0; k < n; k++) X[k + (size_t)s * n] = k == s ? mblx_const(g, 1.0) : w->zero[0];
    rc = codegen_solve_copy(g, n, Jq, jvals, z, X, j_what, st);
    if (rc) return rc;
    memcpy(sl->H, X, (size_t)n * z * sizeof *X);
    /* Hv, Ha1 from [Wq H, gamma_v H]; Ha0 from (gamma_q + (J a)_q) H + gamma_v Hv */
    T[0] = matmul(g, n, n, w->Wq, z, sl->H), T[1] = matmul(g, n, n, w->Gv, z, sl->H);
    if (!T[0] || !T[1]) return mbl_error(st, MBL_ENOMEM, "out of memory");
    memcpy(X, T[0], (size_t)n * z * sizeof *X), memcpy(X + (size_t)n * z, T[1], (size_t)n * z * sizeof *X);
    rc = codegen_solve_copy(g, n, Jq, jvals, 2 * z, X, j_what, st);
    if (rc) return rc;
    for (size_t i = 0; i < (size_t)n * z; i++) Hv[i] = mblx_neg(g, X[i]), Ha1[i] = mblx_neg(g, X[i + (size_t)n * z]);
    T[2] = matmul(g, n, n, w->Gq, z, sl->H), T[3] = matmul(g, n, n, w->Gv, z, Hv);
    if (!T[2] || !T[3]) return mbl_error(st, MBL_ENOMEM, "out of memory");
    for (size_t i = 0; i < (size_t)n * z; i++) X[i] = mblx_add(g, T[2][i], T[3][i]);
    rc = codegen_solve_copy(g, n, Jq, jvals, z, X, j_what, st);
    if (rc) return rc;
    for (size_t i = 0; i < (size_t)n * z; i++) Ha0[i] = mblx_neg(g, X[i]);
    return 0;
}

/* M-hat, C-hat, K-hat */
static int mov_mck(mov *w, mbl_status *st)
{
    mbl_symlin *sl = w->sl;
    mblx_graph *g = w->g;
    int n = w->n, z = w->z;
    mblx_id **T = w->T;
    const mblx_id *Ma = w->Ma, *Rv = w->Rv, *Rq = w->Rq, *Hv = w->Hv, *Ha1 = w->Ha1, *Ha0 = w->Ha0;
    /* M-hat, C-hat, K-hat */
    sl->M = codegen_congruence(g, n, z, sl->H, Ma, z, sl->H);
    T[4] = codegen_congruence(g, n, z, sl->H, Ma, z, Ha1), T[5] = codegen_congruence(g, n, z, sl->H, Rv, z, sl->H);
    T[6] = codegen_congruence(g, n, z, sl->H, Ma, z, Ha0), T[7] = codegen_congruence(g, n, z, sl->H, Rv, z, Hv);
    sl->K = codegen_congruence(g, n, z, sl->H, Rq, z, sl->H);
    sl->Cd = codegen_new_ids((size_t)z * z);
    if (!sl->M || !sl->K || !sl->Cd || !T[4] || !T[5] || !T[6] || !T[7]) return mbl_error(st, MBL_ENOMEM, "out of memory");
    for (size_t i = 0; i < (size_t)z * z; i++) {
        sl->Cd[i] = mblx_add(g, T[4][i], T[5][i]);
        mblx_id k3[3] = {T[6][i], T[7][i], sl->K[i]};
        sl->K[i] = mblx_sum(g, 3, k3);
    }
    return 0;
}

/* F = -H^T R_r, C = [y_q H + y_v Hv, y_v H], D = y_r */
static int mov_outputs(mov *w, const mblx_id *Y, mbl_status *st)
{
    mbl_symlin *sl = w->sl;
    mblx_graph *g = w->g;
    int n = w->n, z = w->z, nr = w->nr, ny = w->ny;
    const mblx_id *vs = sl->v, *Rr = w->Rr, *Hv = w->Hv;
    mblx_id *terms = w->terms;
    /* F = -H^T R_r */
    for (int s = 0; s < z; s++)
        for (int j = 0; j < nr; j++) {
            size_t nt = 0;
            for (int i = 0; i < n; i++) {
                mblx_id h = sl->H[i + (size_t)s * n], rr = Rr[i + (size_t)j * n];
                if (!codegen_is_zero(g, h) && !codegen_is_zero(g, rr)) terms[nt++] = mblx_mul(g, h, rr);
            }
            sl->F[s + (size_t)j * z] = mblx_neg(g, mblx_sum(g, nt, terms));
        }
    /* C = [y_q H + y_v Hv, y_v H], D = y_r */
    for (int k = 0; k < ny; k++) {
        for (int s = 0; s < z; s++) {
            size_t nq = 0;
            mblx_id *tv = codegen_new_ids((size_t)n);
            if (!tv) return mbl_error(st, MBL_ENOMEM, "out of memory");
            size_t nv = 0;
            for (int i = 0; i < n; i++) {
                mblx_id dq = mblx_diff(g, Y[k], sl->q[i]), dv = mblx_diff(g, Y[k], vs[i]);
                mblx_id h = sl->H[i + (size_t)s * n], hv = Hv[i + (size_t)s * n];
                if (!codegen_is_zero(g, dq) && !codegen_is_zero(g, h)) terms[nq++] = mblx_mul(g, dq, h);
                if (!codegen_is_zero(g, dv) && !codegen_is_zero(g, hv)) terms[nq++] = mblx_mul(g, dv, hv);
                if (!codegen_is_zero(g, dv) && !codegen_is_zero(g, h)) tv[nv++] = mblx_mul(g, dv, h);
            }
            sl->C[k + (size_t)s * ny] = mblx_sum(g, nq, terms);
            sl->C[k + (size_t)(s + z) * ny] = mblx_sum(g, nv, tv);
            mbl_free(tv);
        }
        for (int j = 0; j < nr; j++) sl->D[k + (size_t)j * ny] = mblx_diff(g, Y[k], sl->r[j]);
    }
    return 0;
}

/* Outputs of accelerations and multipliers (issue 33, item 2), after A and B: with dS'' = [A21 A22
 * B2] [dS; dS'; dr] (A's and B's S'' rows),
 *     da = H dS'' + Ha1 dS' + Ha0 dS,  dv = H dS' + Hv dS,  dq = H dS,
 * and the multipliers from the rows of the linearized equations of motion that H^T removes:
 * R_lambda dlambda = -(R_a da + R_v dv + R_q dq + R_r dr) =: -G, taken with J^-T (J = [s_q; Phi_q]):
 * its last m rows, [0 I] J^-T R_lambda dlambda = -[0 I] J^-T G, where [0 I] J^-T R_lambda = I when
 * R_lambda = Phi_q^T (the same nodes: then that block is not formed). C += y_a da + y_lambda
 * dlambda, D likewise, every derivative at the point's (a, lambda). */
static int mov_dyn_outputs(mov *w, const mblx_id *Y, mbl_status *st)
{
    mbl_symlin *sl = w->sl;
    mblx_graph *g = w->g;
    int n = w->n, m = w->m, z = w->z, nr = w->nr, ny = w->ny, N = w->N, nx = 2 * z, nc = nx + nr, rc = 0;
    const mblx_id *H = sl->H, *as = sl->asym, *ls = sl->lsym;
    size_t nn = (size_t)n * nc;
    mblx_id *da = codegen_new_ids(nn), *dv = codegen_new_ids(nn), *G = codegen_new_ids(nn);
    mblx_id *JT = codegen_new_ids((size_t)n * n), *X = codegen_new_ids((size_t)n * (m + nc));
    mblx_id *Rl = codegen_new_ids((size_t)n * m + 1), *P = codegen_new_ids((size_t)m * m + 1);
    mblx_id *tt = codegen_new_ids(3 * (size_t)n + (size_t)m + 1), *col = codegen_new_ids((size_t)z + 1);
    double *jv = mbl_alloc_array((size_t)n * n + (size_t)m * m + 1, sizeof *jv);
    if (!da || !dv || !G || !JT || !X || !Rl || !P || !tt || !col || !jv) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
#define AT(e) mblx_subst(g, (e), (size_t)N, w->al, w->sol)
    for (int c = 0; c < nc; c++) {
        for (int t = 0; t < z; t++) col[t] = c < nx ? sl->A[z + t + (size_t)c * nx] : sl->B[z + t + (size_t)(c - nx) * nx];
        for (int i = 0; i < n; i++) {
            size_t nt = 0;
            for (int t = 0; t < z; t++)
                if (!codegen_is_zero(g, H[i + (size_t)t * n]) && !codegen_is_zero(g, col[t]))
                    tt[nt++] = mblx_mul(g, H[i + (size_t)t * n], col[t]);
            if (c < z) tt[nt++] = w->Ha0[i + (size_t)c * n];
            else if (c < nx) tt[nt++] = w->Ha1[i + (size_t)(c - z) * n];
            da[i + (size_t)c * n] = mblx_sum(g, nt, tt);
            dv[i + (size_t)c * n] = c < z ? w->Hv[i + (size_t)c * n] : c < nx ? H[i + (size_t)(c - z) * n] : w->zero[0];
        }
    }
    /* G = R_a da + R_v dv + R_q dq + R_r dr */
    for (int c = 0; c < nc; c++)
        for (int i = 0; i < n; i++) {
            size_t nt = 0;
            for (int j = 0; j < n; j++) {
                mblx_id a = w->Ma[i + (size_t)j * n], b = w->Rv[i + (size_t)j * n], q = w->Rq[i + (size_t)j * n];
                mblx_id x = da[j + (size_t)c * n], y = dv[j + (size_t)c * n];
                if (!codegen_is_zero(g, a) && !codegen_is_zero(g, x)) tt[nt++] = mblx_mul(g, a, x);
                if (!codegen_is_zero(g, b) && !codegen_is_zero(g, y)) tt[nt++] = mblx_mul(g, b, y);
                if (c < z && !codegen_is_zero(g, q) && !codegen_is_zero(g, H[j + (size_t)c * n]))
                    tt[nt++] = mblx_mul(g, q, H[j + (size_t)c * n]);
            }
            if (c >= nx) tt[nt++] = w->Rr[i + (size_t)(c - nx) * n];
            G[i + (size_t)c * n] = mblx_sum(g, nt, tt);
        }
    /* J^T X = [R_lambda G] (R_lambda only when it is not Phi_q^T node for node) */
    int same = 1;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++) {
            Rl[i + (size_t)j * n] = AT(mblx_diff(g, sl->R[i], ls[j]));
            same &= Rl[i + (size_t)j * n] == w->Jq[z + j + (size_t)i * n];
        }
    int off = same ? 0 : m;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) JT[i + (size_t)j * n] = w->Jq[j + (size_t)i * n], jv[i + (size_t)j * n] = w->jvals[j + (size_t)i * n];
    if (!same) memcpy(X, Rl, (size_t)n * m * sizeof *X);
    for (size_t p = 0; p < nn; p++) X[(size_t)n * off + p] = mblx_neg(g, G[p]);
    rc = codegen_solve_copy(g, n, JT, jv, off + nc, X, "[s_q; Phi_q]^T (the multipliers' rows)", st);
    if (rc) goto done;
    /* dlambda: rows z.. of the G part (the R_lambda block's rows z.. solved against them first) */
    for (int c = 0; c < nc; c++)
        for (int j = 0; j < m; j++) G[j + (size_t)c * m] = X[z + j + (size_t)(off + c) * n];
    if (!same && m) {
        for (int a = 0; a < m; a++)
            for (int j = 0; j < m; j++) P[a + (size_t)j * m] = X[z + a + (size_t)j * n];
        rc = codegen_eval_nodes(g, (size_t)m * m, P, w->sv, jv, st);
        if (!rc) rc = codegen_solve_copy(g, m, P, jv, nc, G, "the multipliers' block", st);
        if (rc) goto done;
    }
    for (int k = 0; k < ny; k++)
        for (int c = 0; c < nc; c++) {
            size_t nt = 0;
            for (int i = 0; i < n; i++) {
                mblx_id y = AT(mblx_diff(g, Y[k], as[i]));
                if (!codegen_is_zero(g, y)) tt[nt++] = mblx_mul(g, y, da[i + (size_t)c * n]);
            }
            for (int j = 0; j < m; j++) {
                mblx_id y = AT(mblx_diff(g, Y[k], ls[j]));
                if (!codegen_is_zero(g, y)) tt[nt++] = mblx_mul(g, y, G[j + (size_t)c * m]);
            }
            mblx_id *dst = c < nx ? &sl->C[k + (size_t)c * ny] : &sl->D[k + (size_t)(c - nx) * ny];
            tt[nt++] = AT(*dst);
            *dst = mblx_sum(g, nt, tt);
            if (!sl->moving) *dst = mblx_subst(g, *dst, (size_t)n, sl->v, w->zero);
        }
#undef AT
    rc = mblx_graph_status(g, st);
done:
    mbl_free(da), mbl_free(dv), mbl_free(G), mbl_free(JT), mbl_free(X), mbl_free(Rl), mbl_free(P), mbl_free(tt);
    mbl_free(col), mbl_free(jv);
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
 * (Wq, gamma, Hv, Ha1, Ha0 vanish). sexpr: the z state functions s(q). dyn_outputs: some output uses
 * accelerations or multipliers (mov_dyn_outputs). */
int codegen_build_moving(mbl_symlin *sl, const mbl_point *pt, const mblx_id *Y, const mblx_id *sexpr, int dyn_outputs,
                         mblx_id **hv_out, mblx_id **ha1_out, mblx_id **ha0_out, double **sv_out, mbl_status *st)
{
    mov w;
    memset(&w, 0, sizeof w);
    w.sl = sl, w.g = sl->g;
    w.n = sl->n, w.m = sl->m, w.z = sl->z, w.nr = sl->nr, w.ny = sl->ny, w.N = sl->n + sl->m;
    mblx_graph *g = sl->g;
    int n = w.n, m = w.m, z = w.z, nr = w.nr, ny = w.ny;
    int rc = mov_alloc(&w, pt, st);
    if (!rc) rc = mov_accelerations(&w, sexpr, st);
    if (!rc) mov_jacobians(&w);
    if (!rc) rc = mov_h(&w, st);
    if (!rc) rc = mov_mck(&w, st);
    if (!rc) rc = mov_outputs(&w, Y, st);
    if (!rc) rc = mblx_graph_status(g, st);
    if (!rc && !sl->moving) {
        /* at rest (states that are not coordinates): v = 0 */
        mblx_id *mats[] = {sl->H, sl->M, sl->Cd, sl->K, sl->F, sl->C, sl->D, sl->lam, sl->acc};
        size_t lens[] = {(size_t)n * z, (size_t)z * z, (size_t)z * z, (size_t)z * z, (size_t)z * nr,
                         (size_t)ny * 2 * z, (size_t)ny * nr, (size_t)m, (size_t)n};
        for (int k = 0; k < 9; k++)
            for (size_t i = 0; i < lens[k]; i++) mats[k][i] = mblx_subst(g, mats[k][i], (size_t)n, sl->v, w.zero);
    }
    if (!rc) rc = codegen_make_ab(sl, w.sv, st);
    if (!rc && dyn_outputs) rc = mov_dyn_outputs(&w, Y, st);
    if (!rc && hv_out) { /* for the ODE states (symlin_ode.c) */
        *hv_out = w.Hv, *ha1_out = w.Ha1, *ha0_out = w.Ha0, *sv_out = w.sv;
        w.Hv = w.Ha1 = w.Ha0 = NULL, w.sv = NULL;
    }
    mov_free(&w);
    return rc;
}
