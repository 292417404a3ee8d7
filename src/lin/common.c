/* Shared pieces of the methods partition, nullspace, projection, descriptor, penalty and fd:
 * dense blocks of the exact DAE Jacobian, independent constraint rows (QRCP), coordinate
 * partitioning (full pivoting), and the reduction engine of methods_internal.h. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lin/methods_internal.h"
#include "mblin/la.h"

#define NEW(p, count) ((p) = mbl_calloc((size_t)(count) + 1, sizeof *(p)))

void mbl_sjac_dense(const mbl_model *md, const mbl_sjac *J, const double *val, int r0, int r1, int cb, double *out)
{
    int c0 = mbl_model_blk0(md, cb), c1 = mbl_model_blk0(md, cb + 1), nr = r1 - r0;
    memset(out, 0, (size_t)nr * (size_t)(c1 - c0) * sizeof *out);
    for (int p = 0; p < J->nz; p++) {
        int r = J->row[p], c = J->col[p];
        if (r >= r0 && r < r1 && c >= c0 && c < c1) out[(r - r0) + (size_t)(c - c0) * nr] += val[p];
    }
}

void mbl_blocks_free(mbl_blocks *B)
{
    if (!B) return;
    mbl_free(B->M), mbl_free(B->Rv), mbl_free(B->Rq), mbl_free(B->Rr);
    mbl_free(B->Pq), mbl_free(B->Pdq), mbl_free(B->Pddv), mbl_free(B->Pddq), mbl_free(B->Pddr);
    mbl_free(B->Ya), mbl_free(B->Yv), mbl_free(B->Yq), mbl_free(B->Yr);
    mbl_free(B->Ylam);
    mbl_eval_free(&B->ev);
    memset(B, 0, sizeof *B);
}

int mbl_blocks_init(const mbl_model *md, const mbl_point *pt, mbl_blocks *B, mbl_status *st)
{
    memset(B, 0, sizeof *B);
    int n = md->n, m = md->m, nr = md->nr, ny = md->ny;
    B->n = n, B->m = m, B->nr = nr, B->ny = ny;
    int rc = mbl_eval_init(md, &B->ev, st);
    if (rc) return rc;
    size_t nn = (size_t)n * (size_t)n, mn = (size_t)m * (size_t)n, yn = (size_t)ny * (size_t)n;
    NEW(B->M, nn), NEW(B->Rv, nn), NEW(B->Rq, nn), NEW(B->Rr, (size_t)n * nr);
    NEW(B->Pq, mn), NEW(B->Pdq, mn), NEW(B->Pddv, mn), NEW(B->Pddq, mn), NEW(B->Pddr, (size_t)m * nr);
    NEW(B->Ya, yn), NEW(B->Yv, yn), NEW(B->Yq, yn), NEW(B->Yr, (size_t)ny * nr);
    NEW(B->Ylam, (size_t)ny * m);
    if (!B->Ylam || !B->M || !B->Rv || !B->Rq || !B->Rr || !B->Pq || !B->Pdq || !B->Pddv || !B->Pddq || !B->Pddr || !B->Ya ||
        !B->Yv || !B->Yq || !B->Yr) {
        mbl_blocks_free(B);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    rc = mbl_eval_at(md, pt, &B->ev, st);
    if (rc) {
        mbl_blocks_free(B);
        return rc;
    }
    const mbl_sjac *J = &md->jac;
    const double *x = B->ev.jac;
    int e0 = md->row0[MBL_ROW_EOM], e1 = md->row0[MBL_ROW_EOM + 1];
    int d0 = md->row0[MBL_ROW_PHIDD], d1 = md->row0[MBL_ROW_PHIDD + 1];
    int v0 = md->row0[MBL_ROW_PHID], v1 = md->row0[MBL_ROW_PHID + 1];
    int p0 = md->row0[MBL_ROW_PHI], p1 = md->row0[MBL_ROW_PHI + 1];
    mbl_sjac_dense(md, J, x, e0, e1, MBL_BLK_A, B->M);
    mbl_sjac_dense(md, J, x, e0, e1, MBL_BLK_V, B->Rv);
    mbl_sjac_dense(md, J, x, e0, e1, MBL_BLK_Q, B->Rq);
    mbl_sjac_dense(md, J, x, e0, e1, MBL_BLK_R, B->Rr);
    mbl_sjac_dense(md, J, x, p0, p1, MBL_BLK_Q, B->Pq);
    mbl_sjac_dense(md, J, x, v0, v1, MBL_BLK_Q, B->Pdq);
    mbl_sjac_dense(md, J, x, d0, d1, MBL_BLK_V, B->Pddv);
    mbl_sjac_dense(md, J, x, d0, d1, MBL_BLK_Q, B->Pddq);
    mbl_sjac_dense(md, J, x, d0, d1, MBL_BLK_R, B->Pddr);
    const double *yv = B->ev.y + ny;
    mbl_sjac_dense(md, &md->yjac, yv, 0, ny, MBL_BLK_A, B->Ya);
    mbl_sjac_dense(md, &md->yjac, yv, 0, ny, MBL_BLK_V, B->Yv);
    mbl_sjac_dense(md, &md->yjac, yv, 0, ny, MBL_BLK_Q, B->Yq);
    mbl_sjac_dense(md, &md->yjac, yv, 0, ny, MBL_BLK_R, B->Yr);
    mbl_sjac_dense(md, &md->yjac, yv, 0, ny, MBL_BLK_LAMBDA, B->Ylam);
    return 0;
}

int mbl_outputs_use(const mbl_model *md, int blk)
{
    int c0 = mbl_model_blk0(md, blk), c1 = mbl_model_blk0(md, blk + 1);
    for (int p = 0; p < md->yjac.nz; p++)
        if (md->yjac.col[p] >= c0 && md->yjac.col[p] < c1) return 1;
    return 0;
}

int mbl_blocks_eval_jac(const mbl_model *md, const mbl_point *pt, const double *v, const double *lam,
                        double *jac, mbl_eval *ev, mbl_status *st)
{
    mbl_model_fill_syms(md, pt->t, pt->q, v, pt->vdot, lam, pt->mu, pt->r, ev->syms);
    int rc = mblx_tape_eval(md->tape_jac, ev->syms, jac, ev->work, st);
    if (rc) return mbl_model_eval_error(md, ev->syms, "evaluating the model Jacobian", st);
    return 0;
}

int mbl_require_holonomic(const mbl_model *md, const mbl_lin_options *opt, const char *method, mbl_status *st)
{
    if (md->n > opt->dense_n_max)
        return mbl_error(st, MBL_EDIM,
                         "method '%s' is dense (n^2 memory, n^3 time) and n = %d exceeds dense_n_max = %d: "
                         "use augmented or descriptor",
                         method, md->n, opt->dense_n_max);
    if (md->k > 0)
        return mbl_error(st, MBL_EMODEL,
                         "method '%s' supports holonomic constraints only (%d non-holonomic): use augmented",
                         method, md->k);
    return 0;
}

int mbl_require_full_rank(const mbl_blocks *B, double tol, int *rows, int *r, const char *method, const char *why,
                          mbl_status *st)
{
    int rc = mbl_constraint_rank(B, tol, rows, r, st);
    if (rc) return rc;
    if (*r < B->m)
        return mbl_error(st, MBL_ESINGULAR,
                         "%s: Phi_q has rank %d < %d constraints at this point (singular configuration or redundant "
                         "constraints): %s; use descriptor, penalty or nullspace",
                         method, *r, B->m, why);
    return 0;
}

/* Scale every nonzero column of the rows x cols matrix A to unit 2-norm: a constraint's row of
 * Phi_q (a column of Phi_q^T) carries the constraint's units, which must not decide a rank. */
void mbl_unit_columns(int rows, int cols, double *A, int lda)
{
    for (int j = 0; j < cols; j++) {
        double *a = A + (size_t)j * lda, nrm = 0;
        for (int i = 0; i < rows; i++) nrm = hypot(nrm, a[i]);
        if (nrm > 0 && isfinite(nrm))
            for (int i = 0; i < rows; i++) a[i] /= nrm;
    }
}

int mbl_constraint_rank(const mbl_blocks *B, double tol, int *rows, int *r, mbl_status *st)
{
    int n = B->n, m = B->m;
    *r = 0;
    if (m == 0) return 0;
    double *At = mbl_alloc_array((size_t)n * (size_t)m + 1, sizeof *At);
    int *jp = mbl_alloc_array((size_t)m + 1, sizeof *jp);
    if (!At || !jp) {
        mbl_free(At), mbl_free(jp);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) At[j + (size_t)i * n] = B->Pq[i + (size_t)j * m];
    mbl_unit_columns(n, m, At, n);
    int rc = mbla_qrcp(n, m, At, n, tol, jp, r, NULL, 1, 0, NULL, 1, st);
    if (!rc) memcpy(rows, jp, (size_t)m * sizeof *rows);
    mbl_free(At), mbl_free(jp);
    return rc;
}

int mbl_lin_states(const mbl_model *md, const mbl_blocks *B, const mbl_lin_options *opt, int z, int *uidx, int *cidx,
                   char **names, char *selection, size_t selsize, mbl_status *st)
{
    mbl_linear tmp;
    memset(&tmp, 0, sizeof tmp);
    mbl_state_ref *S = NULL, *W = NULL;
    int z0 = 0, z1 = 0;
    int rc = mbl_select_states(md, &B->ev, opt, &tmp, &S, &z0, &W, &z1, st);
    if (rc) return rc;
    if (z0 != z || z1 != z) {
        rc = mbl_error(st, MBL_ESINGULAR, "the state selection gave %d position and %d velocity states, expected %d",
                       z0, z1, z);
        goto done;
    }
    for (int i = 0; i < z; i++) {
        if (W[i].kind != MBL_SREF_SDOT || W[i].index != i) {
            rc = mbl_error(st, MBL_EMODEL, "user velocity states are supported by augmented only");
            goto done;
        }
        uidx[i] = S[i].kind == MBL_SREF_USER ? S[i].index : -1;
        cidx[i] = S[i].kind == MBL_SREF_COORD ? S[i].index : -1;
        names[i] = uidx[i] >= 0 ? md->us_text[uidx[i]] : md->qname[cidx[i]];
    }
    snprintf(selection, selsize, "%s", tmp.selection);
done:
    mbl_free(S), mbl_free(W);
    return rc;
}

void mbl_lin_state_rows(const mbl_model *md, const int *uidx, const int *cidx, int z, const double *usjac, int level,
                        double *out)
{
    int n = md->n, nus = md->nus;
    int blk = level == 2 ? MBL_BLK_V : MBL_BLK_Q, c0 = mbl_model_blk0(md, blk);
    int rowoff = level == 0 ? 0 : level == 1 ? nus : 2 * nus;
    memset(out, 0, (size_t)z * (size_t)n * sizeof *out);
    for (int i = 0; i < z; i++)
        if (uidx[i] < 0 && level == 0) out[i + (size_t)cidx[i] * z] = 1.0;
    for (int p = 0; p < md->usjac.nz; p++) {
        int r = md->usjac.row[p] - rowoff, c = md->usjac.col[p] - c0;
        if (r < 0 || r >= nus || c < 0 || c >= n) continue;
        for (int i = 0; i < z; i++)
            if (uidx[i] == r) out[i + (size_t)c * z] += usjac[p];
    }
}

/* out (n x z) = -Jc^-1 [top (r x z); 0], lu the factors of diag(d) Jc */
static int solve_top(const mbla_dlu *lu, const double *d, int n, int r, int z, const double *top, double *out,
                     mbl_status *st)
{
    memset(out, 0, (size_t)n * (size_t)z * sizeof *out);
    for (int j = 0; j < z; j++)
        for (int i = 0; i < r; i++) out[i + (size_t)j * n] = -d[i] * top[i + (size_t)j * r];
    return z ? mbla_dlu_solve(lu, 'N', z, out, n, st) : 0;
}

/* out (r + z) x zc: rows `rows` of X (m x n) times Y (n x zc), then C (z x n, may be NULL) times Y */
static void stack_mul(const double *X, int m, const int *rows, int r, const double *C, int z, int n, const double *Y,
                      int zc, double *out)
{
    int N = r + z;
    for (int j = 0; j < zc; j++) {
        for (int i = 0; i < r; i++) {
            double s = 0;
            const double *x = X + rows[i];
            for (int c = 0; c < n; c++) s += x[(size_t)c * m] * Y[c + (size_t)j * n];
            out[i + (size_t)j * N] = s;
        }
        for (int i = 0; i < z; i++) {
            double s = 0;
            if (C)
                for (int c = 0; c < n; c++) s += C[i + (size_t)c * z] * Y[c + (size_t)j * n];
            out[r + i + (size_t)j * N] = s;
        }
    }
}

/* Outputs of the multipliers (see mbl_reduce): W1 (ny x (2z + nr)) += Ylam dlambda with Phi_q^T dlambda =
 * -(M dA + Rv dv + Rq dq + Rr dr), dq = [Qs 0 0], dv = [Vs Qs 0], solved as Jc^T [dlambda; x] = -G; lu holds
 * the factors of diag(dJ) Jc, so the solution of its transpose is scaled back by dJ. */
static int reduce_multiplier_outputs(const mbl_blocks *B, const mbla_dlu *lu, const double *dJ, const int *rows,
                                     int r, int z,
                                     const double *Qs, const double *Vs, const double *dA, const double *Rq_use,
                                     const char *method, double *W1, mbl_status *st)
{
    int n = B->n, m = B->m, nr = B->nr, ny = B->ny, nc = 2 * z + nr;
    if (Rq_use)
        return mbl_error(st, MBL_EMODEL,
                         "%s: outputs of multipliers (lambda) need the multipliers of the operating point, which this "
                         "method does not use; use augmented",
                         method);
    if (r < m)
        return mbl_error(st, MBL_ESINGULAR,
                         "%s: outputs of multipliers (lambda): rank(Phi_q) = %d < %d constraints, the multipliers are "
                         "not unique at this point",
                         method, r, m);
    double *G = mbl_calloc((size_t)n * (size_t)nc + 1, sizeof *G);
    double *dL = mbl_calloc((size_t)m * (size_t)nc + 1, sizeof *dL);
    if (!G || !dL) {
        mbl_free(G), mbl_free(dL);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    mbla_gemm('N', 'N', n, nc, n, 1.0, B->M, n, dA, n, 0.0, G, n, NULL);
    if (z) {
        mbla_gemm('N', 'N', n, z, n, 1.0, B->Rq, n, Qs, n, 1.0, G, n, NULL);
        mbla_gemm('N', 'N', n, z, n, 1.0, B->Rv, n, Vs, n, 1.0, G, n, NULL);
        mbla_gemm('N', 'N', n, z, n, 1.0, B->Rv, n, Qs, n, 1.0, G + (size_t)n * z, n, NULL);
    }
    for (int j = 0; j < nr; j++)
        for (int i = 0; i < n; i++) G[i + (size_t)(2 * z + j) * n] += B->Rr[i + (size_t)j * n];
    for (size_t i = 0; i < (size_t)n * nc; i++) G[i] = -G[i];
    int rc = nc ? mbla_dlu_solve(lu, 'T', nc, G, n, st) : 0;
    if (!rc) {
        for (int j = 0; j < nc; j++)
            for (int i = 0; i < r; i++) dL[rows[i] + (size_t)j * m] = dJ[i] * G[i + (size_t)j * n];
        mbla_gemm('N', 'N', ny, nc, m, 1.0, B->Ylam, ny, dL, m, 1.0, W1, ny, NULL);
    }
    mbl_free(G), mbl_free(dL);
    return rc;
}

int mbl_reduce(const mbl_blocks *B, const int *rows, int r, const double *P, const double *Pd_q, const double *Pdd_v,
               const double *Pdd_q, int z, const double *Rq_use, double rcond_min, mbl_linear *lin,
               mbla_dlu **Jc_lu_out, mbl_status *st)
{
    int n = B->n, m = B->m, nr = B->nr, ny = B->ny, nx = 2 * z, rc = 0;
    const double *Rq = Rq_use ? Rq_use : B->Rq;
    size_t nz_ = (size_t)n * (size_t)z;
    double *Jc = NULL, *dJ = NULL, *Qs = NULL, *Vs = NULL, *Ha = NULL, *Ga = NULL, *Ra = NULL, *T = NULL, *W1 = NULL, *W2 = NULL;
    mbla_dlu *lu = NULL, *mlu = NULL;
    if (Jc_lu_out) *Jc_lu_out = NULL;
    NEW(Jc, (size_t)n * n), NEW(dJ, n), NEW(Qs, nz_), NEW(Vs, nz_), NEW(Ha, nz_), NEW(Ga, nz_), NEW(Ra, (size_t)n * nr);
    size_t big = ((size_t)n + (size_t)ny) * ((size_t)nx + (size_t)nr);
    NEW(T, big), NEW(W1, big), NEW(W2, big);
    if (!Jc || !dJ || !Qs || !Vs || !Ha || !Ga || !Ra || !T || !W1 || !W2) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    for (int j = 0; j < n; j++) {
        for (int i = 0; i < r; i++) Jc[i + (size_t)j * n] = B->Pq[rows[i] + (size_t)j * m];
        for (int i = 0; i < z; i++) Jc[r + i + (size_t)j * n] = P[i + (size_t)j * z];
    }
    /* rows to unit max-norm by powers of 2 (exact): the units of a constraint or a state must not
     * decide the refusal; the factors are those of diag(dJ) Jc */
    for (int i = 0; i < n; i++) {
        double mx = 0;
        for (int j = 0; j < n; j++) mx = fmax(mx, fabs(Jc[i + (size_t)j * n]));
        int e = 0;
        if (mx > 0 && isfinite(mx)) frexp(mx, &e);
        dJ[i] = ldexp(1.0, -e);
        for (int j = 0; j < n; j++) Jc[i + (size_t)j * n] *= dJ[i];
    }
    rc = mbla_dlu_new(n, Jc, n, &lu, st);
    double rcond = 0;
    if (!rc) rc = mbla_dlu_rcond(lu, &rcond, st);
    if (rc && rc != MBL_ESINGULAR) goto done;
    if (rc || !(rcond >= rcond_min)) {
        rc = mbl_error(st, MBL_ESINGULAR,
                       "the constraint Jacobian completed by the independent coordinates is singular "
                       "(reciprocal condition %.3g): the coordinates do not parametrize the motion",
                       rcond);
        goto done;
    }
    lin->cond = 1.0 / rcond;
    /* Qs = Jc^-1 [0; I] */
    for (int j = 0; j < z; j++) Qs[r + j + (size_t)j * n] = dJ[r + j];
    if (z) rc = mbla_dlu_solve(lu, 'N', z, Qs, n, st);
    if (rc) goto done;
    /* Vs = -Jc^-1 [Pdq Qs; Pd_q Qs] */
    stack_mul(B->Pdq, m, rows, r, Pd_q, z, n, Qs, z, T);
    rc = solve_top(lu, dJ, n, n, z, T, Vs, st);
    /* Ha = -Jc^-1 [Pddv Qs; ..], Ga = -Jc^-1 [Pddv Vs + Pddq Qs; ..], Ra = -Jc^-1 [Pddr; 0] */
    if (!rc) {
        stack_mul(B->Pddv, m, rows, r, Pdd_v, z, n, Qs, z, T);
        rc = solve_top(lu, dJ, n, n, z, T, Ha, st);
    }
    if (!rc) {
        stack_mul(B->Pddv, m, rows, r, Pdd_v, z, n, Vs, z, T);
        stack_mul(B->Pddq, m, rows, r, Pdd_q, z, n, Qs, z, W1);
        for (size_t i = 0; i < (size_t)n * z; i++) T[i] += W1[i];
        rc = solve_top(lu, dJ, n, n, z, T, Ga, st);
    }
    if (!rc && nr) {
        for (int j = 0; j < nr; j++)
            for (int i = 0; i < r; i++) T[i + (size_t)j * r] = B->Pddr[rows[i] + (size_t)j * m];
        rc = solve_top(lu, dJ, n, r, nr, T, Ra, st);
    }
    if (rc) goto done;
    /* M-hat = Qs^T M Qs */
    mbla_gemm('N', 'N', n, z, n, 1.0, B->M, n, Qs, n, 0.0, W1, n, NULL);
    mbla_gemm('T', 'N', z, z, n, 1.0, Qs, n, W1, n, 0.0, lin->M, z, NULL);
    /* C-hat = Qs^T (M Ha + Rv Qs) */
    mbla_gemm('N', 'N', n, z, n, 1.0, B->M, n, Ha, n, 0.0, W1, n, NULL);
    mbla_gemm('N', 'N', n, z, n, 1.0, B->Rv, n, Qs, n, 1.0, W1, n, NULL);
    mbla_gemm('T', 'N', z, z, n, 1.0, Qs, n, W1, n, 0.0, lin->Cd, z, NULL);
    /* K-hat = Qs^T (M Ga + Rv Vs + Rq Qs) */
    mbla_gemm('N', 'N', n, z, n, 1.0, B->M, n, Ga, n, 0.0, W1, n, NULL);
    mbla_gemm('N', 'N', n, z, n, 1.0, B->Rv, n, Vs, n, 1.0, W1, n, NULL);
    mbla_gemm('N', 'N', n, z, n, 1.0, Rq, n, Qs, n, 1.0, W1, n, NULL);
    mbla_gemm('T', 'N', z, z, n, 1.0, Qs, n, W1, n, 0.0, lin->K, z, NULL);
    /* F = -Qs^T (M Ra + Rr) */
    if (nr) {
        mbla_gemm('N', 'N', n, nr, n, 1.0, B->M, n, Ra, n, 0.0, W1, n, NULL);
        for (size_t i = 0; i < (size_t)n * nr; i++) W1[i] += B->Rr[i];
        mbla_gemm('T', 'N', z, nr, n, -1.0, Qs, n, W1, n, 0.0, lin->F, z, NULL);
    }
    /* A = [0 I; -Mh^-1 Kh, -Mh^-1 Ch], B = [0; Mh^-1 F] */
    if (z) {
        rc = mbla_dlu_new(z, lin->M, z, &mlu, st);
        if (rc == MBL_ESINGULAR) {
            rc = mbl_error(st, MBL_ESINGULAR, "the reduced mass matrix M-hat is singular");
            goto done;
        }
        if (rc) goto done;
        for (int j = 0; j < z; j++) {
            for (int i = 0; i < z; i++) {
                W1[i + (size_t)j * z] = -lin->K[i + (size_t)j * z];
                W1[i + (size_t)(z + j) * z] = -lin->Cd[i + (size_t)j * z];
            }
        }
        rc = mbla_dlu_solve(mlu, 'N', 2 * z, W1, z, st);
        if (!rc && nr) {
            memcpy(W2, lin->F, (size_t)z * nr * sizeof *W2);
            rc = mbla_dlu_solve(mlu, 'N', nr, W2, z, st);
        }
        if (rc) goto done;
        for (int j = 0; j < nx; j++)
            for (int i = 0; i < z; i++) {
                lin->A[i + (size_t)j * nx] = (j == z + i) ? 1.0 : 0.0;
                lin->A[z + i + (size_t)j * nx] = W1[i + (size_t)j * z];
            }
        for (int j = 0; j < nr; j++)
            for (int i = 0; i < z; i++) lin->B[z + i + (size_t)j * nx] = W2[i + (size_t)j * z];
    }
    /* outputs y = h(q, v, a, r): dq = Qs S, dv = Vs S + Qs W, da = Qs W' + Ga S + Ha W + Ra r */
    if (ny) {
        /* acceleration columns: da/dS = Ga + Qs A21, da/dW = Ha + Qs A22, da/dr = Ra + Qs B2 */
        double *dA = mbl_calloc((size_t)n * (size_t)(nx + nr) + 1, sizeof *dA);
        if (!dA) {
            rc = mbl_error(st, MBL_ENOMEM, "out of memory");
            goto done;
        }
        for (int j = 0; j < z; j++)
            for (int i = 0; i < n; i++) {
                dA[i + (size_t)j * n] = Ga[i + (size_t)j * n];
                dA[i + (size_t)(z + j) * n] = Ha[i + (size_t)j * n];
            }
        for (int j = 0; j < nr; j++)
            for (int i = 0; i < n; i++) dA[i + (size_t)(nx + j) * n] = Ra[i + (size_t)j * n];
        if (z) mbla_gemm('N', 'N', n, nx, z, 1.0, Qs, n, lin->A + z, nx, 1.0, dA, n, NULL);
        if (z && nr) mbla_gemm('N', 'N', n, nr, z, 1.0, Qs, n, lin->B + z, nx, 1.0, dA + (size_t)n * nx, n, NULL);
        int ok = 0;
        ok |= mbla_gemm('N', 'N', ny, nx + nr, n, 1.0, B->Ya, ny, dA, n, 0.0, W1, ny, NULL);
        if (z) {
            ok |= mbla_gemm('N', 'N', ny, z, n, 1.0, B->Yq, ny, Qs, n, 1.0, W1, ny, NULL);
            ok |= mbla_gemm('N', 'N', ny, z, n, 1.0, B->Yv, ny, Vs, n, 1.0, W1, ny, NULL);
            ok |= mbla_gemm('N', 'N', ny, z, n, 1.0, B->Yv, ny, Qs, n, 1.0, W1 + (size_t)ny * z, ny, NULL);
        }
        if (m && mbla_norm1(ny, m, B->Ylam, ny) > 0) rc = reduce_multiplier_outputs(B, lu, dJ, rows, r, z, Qs, Vs, dA, Rq_use, lin->method, W1, st);
        mbl_free(dA);
        if (rc) goto done;
        memcpy(lin->C, W1, (size_t)ny * nx * sizeof *W1);
        for (size_t i = 0; i < (size_t)ny * nr; i++) lin->D[i] = W1[(size_t)ny * nx + i] + B->Yr[i];
        (void)ok;
    }
    memcpy(lin->q_S, Qs, nz_ * sizeof *Qs);
    memcpy(lin->v_W, Qs, nz_ * sizeof *Qs);
    if (Jc_lu_out) { /* the caller solves with Jc itself: factor the unscaled rows (exact) */
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) Jc[i + (size_t)j * n] /= dJ[i];
        rc = mbla_dlu_new(n, Jc, n, Jc_lu_out, st);
    }
done:
    mbl_free(Jc), mbl_free(dJ), mbl_free(Qs), mbl_free(Vs), mbl_free(Ha), mbl_free(Ga), mbl_free(Ra);
    mbl_free(T), mbl_free(W1), mbl_free(W2);
    mbla_dlu_free(lu);
    mbla_dlu_free(mlu);
    return rc;
}

int mbl_lin_set_names(const mbl_model *md, mbl_linear *lin, char *const *pos)
{
    int z = lin->z0, bad = 0;
    for (int i = 0; i < z; i++) {
        lin->state_names[i] = mbl_name_join(pos[i], NULL);
        if (i < lin->z1) lin->state_names[z + i] = mbl_name_join("der(", pos[i]);
    }
    for (int j = 0; j < lin->nu; j++) lin->input_names[j] = mbl_name_join(md->rname[j], NULL);
    for (int j = 0; j < lin->ny; j++) lin->output_names[j] = mbl_name_join(md->yname[j], NULL);
    for (int i = 0; i < lin->nx; i++) bad |= !lin->state_names[i];
    for (int j = 0; j < lin->nu; j++) bad |= !lin->input_names[j];
    for (int j = 0; j < lin->ny; j++) bad |= !lin->output_names[j];
    return bad ? MBL_ENOMEM : 0;
}

int mbl_point_moving(const mbl_point *pt)
{
    for (int j = 0; j < pt->n; j++)
        if (pt->v[j] != 0.0 || pt->vdot[j] != 0.0) return 1;
    return 0;
}

int mbl_lin_alloc_eigs(mbl_linear *lin, int neig)
{
    size_t sz = (size_t)lin->n * (size_t)neig + 1;
    lin->eig_re = mbl_calloc((size_t)neig + 1, sizeof(double));
    lin->eig_im = mbl_calloc((size_t)neig + 1, sizeof(double));
    lin->eig_spurious = mbl_calloc((size_t)neig + 1, sizeof(int));
    lin->eig_berr = mbl_alloc_array((size_t)neig + 1, sizeof(double));
    if (lin->eig_berr)
        for (int i = 0; i < neig; i++) lin->eig_berr[i] = NAN;
    lin->eig_vre = mbl_calloc(sz, sizeof(double));
    lin->eig_vim = mbl_calloc(sz, sizeof(double));
    if (!lin->eig_re || !lin->eig_im || !lin->eig_spurious || !lin->eig_berr || !lin->eig_vre || !lin->eig_vim)
        return MBL_ENOMEM;
    lin->neig = neig;
    return 0;
}
