/* Symbolic linear models (symlin.c) with user ODE states X and implicit variables Z (source 000
 * Eq. 10; issue 30, item 4): the state x = [S; S'; X] as `mblin linearize` orders it.
 *
 * At a point at rest with coordinate states (dq = H dS, dv = H dS', da = H dS''), the linearized
 * rows g = [R (n); d (nX); zeq (nZ)] (equations of motion, ODEs, implicit variables' equations) give
 *     [g_a H, g_lambda, g_Xdot, g_Z] [dS''; dlambda; dXdot; dZ]
 *         = -(g_q H dS + g_v H dS' + g_X dX + g_r dr)
 * (n + nX + nZ rows and as many unknowns: n = z + m), every Jacobian at the point (v = 0, vdot = 0,
 * Xdot = 0, lambda = lambda(q)). It is solved by a symbolic elimination with pivots chosen by the
 * values at the model's point; the dS'' and dXdot rows of the solution are the rows of A and B.
 * X and Z at the point stand for their values (symbols named as in the file, passed to generated
 * code after the coordinates: q = [coordinates; X; Z]). M-hat, C-hat, K-hat and F stay the
 * mechanical part with X and Z held, as mbl_linearize gives them. C gains y_X; outputs of Xdot or
 * Z are refused. */
#include <string.h>

#include "codegen/symlin_internal.h"

int codegen_ode_extend(mbl_symlin *sl, const codegen_ode_in *in, mbl_status *st)
{
    mblx_graph *g = sl->g;
    int n = sl->n, m = sl->m, z = sl->z, nr = sl->nr, ny = sl->ny, nX = in->nX, nZ = in->nZ;
    int ne = n + nX + nZ, c = 2 * z + nX + nr, nx = 2 * z + nX, rc = 0;
    const mblx_id *Xs = sl->q + n, *Zs = sl->q + n + nX;
    /* the point: v = 0 (at rest), vdot = 0 (at rest) or vdot(q, v) (with motion), Xdot = 0,
     * lambda = lambda(q) */
    int moving = in->Hv != NULL, vzero = !sl->moving;
    size_t ns = 2 * (size_t)n + (size_t)m + (size_t)nX;
    mblx_id *syms = codegen_new_ids(ns), *repl = codegen_new_ids(ns);
    mblx_id *P = codegen_new_ids((size_t)ne * ne), *X = codegen_new_ids((size_t)ne * c);
    mblx_id *ga = codegen_new_ids((size_t)n), *terms = codegen_new_ids(3 * (size_t)n);
    double *pv = mbl_alloc_array((size_t)ne * ne + 1, sizeof *pv);
    mblx_id *A = codegen_new_ids((size_t)nx * nx), *B = codegen_new_ids((size_t)nx * nr);
    mblx_id *C = codegen_new_ids((size_t)ny * nx);
    if (!syms || !repl || !P || !X || !ga || !terms || !pv || !A || !B || !C) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto out;
    }
    mblx_id zero = mblx_const(g, 0.0), one = mblx_const(g, 1.0);
    size_t k0 = 0;
    for (int i = 0; vzero && i < n; i++) syms[k0] = sl->v[i], repl[k0++] = zero;
    for (int i = 0; i < n; i++) syms[k0] = sl->asym[i], repl[k0++] = moving ? sl->acc[i] : zero;
    for (int j = 0; j < m; j++) syms[k0] = sl->lsym[j], repl[k0++] = sl->lam[j];
    for (int j = 0; j < nX; j++) syms[k0] = in->Xd[j], repl[k0++] = zero;
#define PT(e) mblx_subst(g, (e), k0, syms, repl)
    for (int k = 0; k < ne; k++) {
        mblx_id row = in->rows[k];
        for (int i = 0; i < n; i++) ga[i] = PT(mblx_diff(g, row, sl->asym[i]));
        for (int s = 0; s < z; s++) {
            size_t na = 0, nq = 0, nv = 0;
            for (int i = 0; i < n; i++) {
                mblx_id h = sl->H[i + (size_t)s * n];
                if (!codegen_is_zero(g, h) && !codegen_is_zero(g, ga[i])) terms[na++] = mblx_mul(g, ga[i], h);
            }
            P[k + (size_t)s * ne] = mblx_sum(g, na, terms);
            /* dS: g_a Ha0 + g_v Hv + g_q H;  dS': g_a Ha1 + g_v H */
            for (int i = 0; i < n; i++) {
                mblx_id h = sl->H[i + (size_t)s * n], gq = PT(mblx_diff(g, row, sl->q[i]));
                if (!codegen_is_zero(g, h) && !codegen_is_zero(g, gq)) terms[nq++] = mblx_mul(g, gq, h);
                if (!moving) continue;
                mblx_id gv = PT(mblx_diff(g, row, sl->v[i])), hv = in->Hv[i + (size_t)s * n];
                mblx_id h0 = in->Ha0[i + (size_t)s * n];
                if (!codegen_is_zero(g, hv) && !codegen_is_zero(g, gv)) terms[nq++] = mblx_mul(g, gv, hv);
                if (!codegen_is_zero(g, h0) && !codegen_is_zero(g, ga[i])) terms[nq++] = mblx_mul(g, ga[i], h0);
            }
            X[k + (size_t)s * ne] = mblx_neg(g, mblx_sum(g, nq, terms));
            for (int i = 0; i < n; i++) {
                mblx_id h = sl->H[i + (size_t)s * n], gv = PT(mblx_diff(g, row, sl->v[i]));
                if (!codegen_is_zero(g, h) && !codegen_is_zero(g, gv)) terms[nv++] = mblx_mul(g, gv, h);
                mblx_id h1 = moving ? in->Ha1[i + (size_t)s * n] : zero;
                if (!codegen_is_zero(g, h1) && !codegen_is_zero(g, ga[i])) terms[nv++] = mblx_mul(g, ga[i], h1);
            }
            X[k + (size_t)(z + s) * ne] = mblx_neg(g, mblx_sum(g, nv, terms));
        }
        for (int j = 0; j < m; j++) P[k + (size_t)(z + j) * ne] = PT(mblx_diff(g, row, sl->lsym[j]));
        for (int j = 0; j < nX; j++) {
            P[k + (size_t)(z + m + j) * ne] = PT(mblx_diff(g, row, in->Xd[j]));
            X[k + (size_t)(2 * z + j) * ne] = mblx_neg(g, PT(mblx_diff(g, row, Xs[j])));
        }
        for (int j = 0; j < nZ; j++) P[k + (size_t)(z + m + nX + j) * ne] = PT(mblx_diff(g, row, Zs[j]));
        for (int j = 0; j < nr; j++) X[k + (size_t)(2 * z + nX + j) * ne] = mblx_neg(g, PT(mblx_diff(g, row, sl->r[j])));
    }
    if (moving && vzero) /* state functions at rest: Hv, Ha1, Ha0 still hold the velocities */
        for (size_t i = 0; i < (size_t)ne * ne + (size_t)ne * c; i++) {
            mblx_id *e = i < (size_t)ne * ne ? &P[i] : &X[i - (size_t)ne * ne];
            for (int v = 0; v < n; v++) *e = mblx_subst(g, *e, 1, &sl->v[v], &zero);
        }
    rc = mblx_graph_status(g, st);
    if (!rc) rc = codegen_eval_nodes(g, (size_t)ne * ne, P, in->sv, pv, st);
    if (!rc)
        rc = codegen_sym_solve(g, ne, P, pv, c, X,
                               "the linearized equations of motion, ODEs and implicit variables' equations", st);
    if (rc) goto out;
    /* x = [S; S'; X]: A and B from the dS'' (rows 0..z-1) and dXdot (rows z+m..) of the solution */
    for (int j = 0; j < nx; j++)
        for (int i = 0; i < nx; i++) {
            mblx_id e;
            if (i < z) e = j == z + i ? one : zero;
            else if (i < 2 * z) e = X[(i - z) + (size_t)j * ne];
            else e = X[(z + m + i - 2 * z) + (size_t)j * ne];
            A[i + (size_t)j * nx] = e;
        }
    for (int j = 0; j < nr; j++)
        for (int i = 0; i < nx; i++) {
            size_t col = (size_t)(nx + j) * ne;
            B[i + (size_t)j * nx] = i < z ? zero : i < 2 * z ? X[(i - z) + col] : X[(z + m + i - 2 * z) + col];
        }
    /* C = [y_q H, y_v H, y_X]; outputs of Xdot or Z are refused */
    memcpy(C, sl->C, (size_t)ny * 2 * z * sizeof *C);
    for (int k = 0; k < ny; k++) {
        for (int j = 0; j < nX + nZ; j++)
            if (mblx_depends(g, in->Y[k], j < nX ? in->Xd[j] : Zs[j - nX])) {
                rc = mbl_error(st, MBL_EMODEL,
                               "symbolic linear models: output %s depends on %s%s%s (an ODE state's derivative or an "
                               "implicit variable): not supported",
                               sl->yname[k], j < nX ? "der(" : "", mblx_symbol_name(g, j < nX ? Xs[j] : Zs[j - nX]),
                               j < nX ? ")" : "");
                goto out;
            }
        for (int j = 0; j < nX; j++) C[k + (size_t)(2 * z + j) * ny] = PT(mblx_diff(g, in->Y[k], Xs[j]));
    }
#undef PT
    rc = mblx_graph_status(g, st);
    if (rc) goto out;
    mbl_free(sl->A), mbl_free(sl->B), mbl_free(sl->C);
    sl->A = A, sl->B = B, sl->C = C;
    A = B = C = NULL;
out:
    mbl_free(syms), mbl_free(repl), mbl_free(P), mbl_free(X), mbl_free(ga), mbl_free(terms), mbl_free(pv);
    mbl_free(A), mbl_free(B), mbl_free(C);
    return rc;
}
