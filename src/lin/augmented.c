/* The augmented method of source 000 (Eq. 17, 23-25, Table 1, Eq. 29-30), the default.
 *
 * With T(q) = I (v = dq/dt) the unknowns of the sensitivity system are
 *     X = [vdot (n); lambda (m); mu (k); v (n); q (n)]
 * and its rows are the linearized equations
 *     EOM (n), Phi'' (m), c' (k), Phi' (m), c (k), Phi (m), S = s(q) (z0), W = w(q, v) (z1)
 * (rows 23b and 23g of Table 1 are eliminated exactly: dq/dt = v and dS/dt = W are identities).
 * The right-hand sides are unit vectors for S-bar and W-bar and -dF/dr for the inputs; one
 * sparse LU (KLU) serves all z0 + z1 + nr of them. The state derivatives follow by the chain
 * rule from the exact Jacobians of sdot, sddot and wdot. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lin/lin_internal.h"
#include "mblin/la.h"

/* Re-linearization checks the KLU pivot ratio at each point and computes the 1-norm condition
 * estimate only when the ratio falls below this. */
#define RELIN_RCOND_CHECK 1e-8

int mbl_eval_init(const mbl_model *md, mbl_eval *ev, mbl_status *st)
{
    memset(ev, 0, sizeof *ev);
    size_t nus = (size_t)(3 * md->nus + 2 * md->nuvs) + (size_t)md->usjac.nz;
    size_t ny = (size_t)md->ny + (size_t)md->yjac.nz;
    ev->syms = mbl_calloc((size_t)md->nsym + 1, sizeof *ev->syms);
    ev->work = mbl_alloc_array(md->work_size + 1, sizeof *ev->work);
    ev->jac = mbl_alloc_array((size_t)md->jac.nz + 1, sizeof *ev->jac);
    ev->us = mbl_alloc_array(nus + 1, sizeof *ev->us);
    ev->y = mbl_alloc_array(ny + 1, sizeof *ev->y);
    if (!ev->syms || !ev->work || !ev->jac || !ev->us || !ev->y) {
        mbl_eval_free(ev);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    return 0;
}

void mbl_eval_free(mbl_eval *ev)
{
    if (!ev) return;
    mbl_free(ev->syms);
    mbl_free(ev->work);
    mbl_free(ev->jac);
    mbl_free(ev->us);
    mbl_free(ev->y);
    memset(ev, 0, sizeof *ev);
}

int mbl_eval_at(const mbl_model *md, const mbl_point *pt, mbl_eval *ev, mbl_status *st)
{
    mbl_model_fill_syms(md, pt->t, pt->q, pt->v, pt->vdot, pt->lambda, pt->mu, pt->r, ev->syms);
    int rc = mblx_tape_eval(md->tape_jac, ev->syms, ev->jac, ev->work, st);
    if (!rc) rc = mblx_tape_eval(md->tape_us, ev->syms, ev->us, ev->work, st);
    if (!rc) rc = mblx_tape_eval(md->tape_y, ev->syms, ev->y, ev->work, st);
    if (rc) return mbl_model_eval_error(md, ev->syms, "at the operating point", st);
    return 0;
}

void mbl_jac_block(const mbl_model *md, const double *jacval, int rg, int cb, double *out)
{
    int r0 = md->row0[rg], r1 = md->row0[rg + 1];
    int c0 = mbl_model_blk0(md, cb), c1 = mbl_model_blk0(md, cb + 1);
    int nr = r1 - r0;
    memset(out, 0, (size_t)nr * (size_t)(c1 - c0) * sizeof *out);
    for (int p = 0; p < md->jac.nz; p++) {
        int r = md->jac.row[p], c = md->jac.col[p];
        if (r >= r0 && r < r1 && c >= c0 && c < c1) out[(r - r0) + (size_t)(c - c0) * nr] = jacval[p];
    }
}

mbl_linear *mbl_linear_alloc(int n, int z0, int z1, int nu, int ny)
{
    mbl_linear *L = mbl_calloc(1, sizeof *L);
    if (!L) return NULL;
    int nx = z0 + z1;
    L->n = n;
    L->nx = nx;
    L->nu = nu;
    L->ny = ny;
    L->z0 = z0;
    L->z1 = z1;
    L->state_names = mbl_calloc((size_t)nx + 1, sizeof *L->state_names);
    L->input_names = mbl_calloc((size_t)nu + 1, sizeof *L->input_names);
    L->output_names = mbl_calloc((size_t)ny + 1, sizeof *L->output_names);
    L->A = mbl_calloc((size_t)nx * (size_t)nx + 1, sizeof(double));
    L->B = mbl_calloc((size_t)nx * (size_t)nu + 1, sizeof(double));
    L->C = mbl_calloc((size_t)ny * (size_t)nx + 1, sizeof(double));
    L->D = mbl_calloc((size_t)ny * (size_t)nu + 1, sizeof(double));
    L->M = mbl_calloc((size_t)z1 * (size_t)z1 + 1, sizeof(double));
    L->Cd = mbl_calloc((size_t)z1 * (size_t)z1 + 1, sizeof(double));
    L->K = mbl_calloc((size_t)z1 * (size_t)z0 + 1, sizeof(double));
    L->F = mbl_calloc((size_t)z1 * (size_t)nu + 1, sizeof(double));
    L->q_S = mbl_calloc((size_t)n * (size_t)z0 + 1, sizeof(double));
    L->v_W = mbl_calloc((size_t)n * (size_t)z1 + 1, sizeof(double));
    if (!L->state_names || !L->input_names || !L->output_names || !L->A || !L->B || !L->C || !L->D || !L->M ||
        !L->Cd || !L->K || !L->F || !L->q_S || !L->v_W) {
        mbl_linear_free(L);
        return NULL;
    }
    return L;
}

void mbl_linear_free(mbl_linear *L)
{
    if (!L) return;
    if (L->state_names)
        for (int i = 0; i < L->nx; i++) mbl_free(L->state_names[i]);
    if (L->input_names)
        for (int i = 0; i < L->nu; i++) mbl_free(L->input_names[i]);
    if (L->output_names)
        for (int i = 0; i < L->ny; i++) mbl_free(L->output_names[i]);
    mbl_free(L->state_names);
    mbl_free(L->input_names);
    mbl_free(L->output_names);
    mbl_free(L->A);
    mbl_free(L->B);
    mbl_free(L->C);
    mbl_free(L->D);
    mbl_free(L->M);
    mbl_free(L->Cd);
    mbl_free(L->K);
    mbl_free(L->F);
    mbl_free(L->q_S);
    mbl_free(L->v_W);
    mbl_free(L->eig_re);
    mbl_free(L->eig_im);
    mbl_free(L->eig_spurious);
    mbl_free(L->eig_vre);
    mbl_free(L->eig_vim);
    mbl_free(L->E);
    mbl_free(L->Ad);
    mbl_free(L->Bd);
    mbl_free(L->Cdd);
    mbl_free(L);
}

char *mbl_name_join(const char *a, const char *b)
{
    size_t la = strlen(a), lb = b ? strlen(b) : 0;
    char *p = mbl_malloc(la + lb + 8);
    if (!p) return NULL;
    if (b) snprintf(p, la + lb + 8, "%s%s)", a, b);
    else memcpy(p, a, la + 1);
    return p;
}

/* rows of the user-state Jacobian: value of d(row)/d(unknown col) at the point */
typedef struct sparse_rows {
    int *ptr, *col;
    int *src;   /* index of each entry in the Jacobian's value array (for refills) */
    double *val;
} sparse_rows;

static int rows_of(const mbl_sjac *J, const double *val, int nrows, sparse_rows *R)
{
    R->ptr = mbl_calloc((size_t)nrows + 2, sizeof *R->ptr);
    R->col = mbl_alloc_array((size_t)J->nz + 1, sizeof *R->col);
    R->val = mbl_alloc_array((size_t)J->nz + 1, sizeof *R->val);
    R->src = mbl_alloc_array((size_t)J->nz + 1, sizeof *R->src);
    if (!R->ptr || !R->col || !R->val || !R->src) return MBL_ENOMEM;
    for (int p = 0; p < J->nz; p++) R->ptr[J->row[p] + 1]++;
    for (int i = 0; i < nrows; i++) R->ptr[i + 1] += R->ptr[i];
    int *fill = mbl_alloc_array((size_t)nrows + 1, sizeof *fill);
    if (!fill) return MBL_ENOMEM;
    memcpy(fill, R->ptr, (size_t)nrows * sizeof *fill);
    for (int p = 0; p < J->nz; p++) {
        int d = fill[J->row[p]]++;
        R->col[d] = J->col[p];
        R->src[d] = p;
        R->val[d] = val[p];
    }
    mbl_free(fill);
    return 0;
}

static void rows_refill(sparse_rows *R, int nrows, const double *val)
{
    for (int d = 0; d < R->ptr[nrows]; d++) R->val[d] = val[R->src[d]];
}

static void rows_free(sparse_rows *R)
{
    mbl_free(R->src);
    mbl_free(R->ptr);
    mbl_free(R->col);
    mbl_free(R->val);
}

/* out[j] = sum_c row(c) * X[c, j] over the unknown columns c < N (a lam mu v q), for j < nrhs */
static void row_times(const sparse_rows *R, int row, const double *X, int N, int nrhs, double *out, int ldo)
{
    for (int j = 0; j < nrhs; j++) out[(size_t)j * ldo] = 0.0;
    for (int p = R->ptr[row]; p < R->ptr[row + 1]; p++) {
        int c = R->col[p];
        if (c >= N) continue;
        double v = R->val[p];
        for (int j = 0; j < nrhs; j++) out[(size_t)j * ldo] += v * X[c + (size_t)j * N];
    }
}

/* ---- the sweep workspace: everything that does not change from one point to the next ---- */

/* Source of a triplet value: >= 0 an index into the residual Jacobian's values, <= -2 the
 * user-state Jacobian entry -src-2, -1 the constant 1. */
#define TSRC_ONE (-1)

struct mbl_lin_work {
    const mbl_model *md;
    mbl_lin_options opt;
    mbl_eval ev;
    mbl_state_ref *S, *W;
    int z0, z1, N, nrhs, nz;
    int *ti, *tj, *tsrc, *map;
    double *tx, *X, *dS, *dW, *MvW, *tmpy;
    sparse_rows U, Y;
    mbla_csc *Aug;
    mbla_klu *lu;
    int nfact;
};

void mbl_lin_work_free(mbl_lin_work *w)
{
    if (!w) return;
    mbl_eval_free(&w->ev);
    rows_free(&w->U);
    rows_free(&w->Y);
    mbl_free(w->S), mbl_free(w->W), mbl_free(w->ti), mbl_free(w->tj), mbl_free(w->tsrc), mbl_free(w->map);
    mbl_free(w->tx), mbl_free(w->X), mbl_free(w->dS), mbl_free(w->dW), mbl_free(w->MvW), mbl_free(w->tmpy);
    mbla_csc_free(w->Aug);
    mbla_klu_free(w->lu);
    mbl_free(w);
}

static int singular_error(mbl_status *st, double cond)
{
    if (cond > 0)
        return mbl_error(st, MBL_ESINGULAR,
                         "the augmented matrix (source 000 Table 1) is numerically singular (condition estimate %.3g): "
                         "a singular configuration or states that do not parametrize the motion",
                         cond);
    return mbl_error(st, MBL_ESINGULAR,
                     "the augmented matrix (source 000 Table 1) is singular at this point: the reduced mass matrix "
                     "is singular or the states do not parametrize the motion (a singular configuration)");
}

/* Values of the triplets at the point in w->ev. */
static void fill_triplets(mbl_lin_work *w)
{
    const double *usjac = w->ev.us + 3 * w->md->nus + 2 * w->md->nuvs;
    for (int t = 0; t < w->nz; t++) {
        int s = w->tsrc[t];
        w->tx[t] = s >= 0 ? w->ev.jac[s] : s == TSRC_ONE ? 1.0 : usjac[-s - 2];
    }
}

/* Solve at the point in w->ev (already evaluated, matrix refilled and factored) into lin. */
static int finish(mbl_lin_work *w, mbl_linear *lin, mbl_status *st)
{
    const mbl_model *md = w->md;
    int n = md->n, k = md->k, nr = md->nr, ny = md->ny, nus = md->nus, nuvs = md->nuvs;
    int N = w->N, z0 = w->z0, z1 = w->z1, nrhs = w->nrhs, nx = z0 + z1;
    const mbl_state_ref *S = w->S, *W = w->W;
    double *X = w->X, *dS = w->dS, *dW = w->dW;
    int jv = mbl_model_blk0(md, MBL_BLK_V), jq = mbl_model_blk0(md, MBL_BLK_Q), ja = mbl_model_blk0(md, MBL_BLK_A);
    int jr = mbl_model_blk0(md, MBL_BLK_R);

    /* right-hand sides: S-bar, W-bar, inputs */
    memset(X, 0, (size_t)N * (size_t)nrhs * sizeof *X);
    for (int i = 0; i < nx; i++) X[(size_t)(md->nF + i) + (size_t)i * N] = 1.0;
    for (int p = 0; p < md->jac.nz; p++)
        if (md->jac.col[p] >= jr) X[md->jac.row[p] + (size_t)(nx + md->jac.col[p] - jr) * N] = -w->ev.jac[p];
    int rc = mbla_klu_solve(w->lu, nrhs, X, N, st);
    if (rc) return rc;

    /* state derivatives by the chain rule */
    memset(dS, 0, (size_t)z0 * (size_t)nrhs * sizeof *dS);
    int exact_sdot = (k == 0 && nuvs == 0); /* W = dS/dt exactly: dS/dt rows are [0 I] */
    for (int i = 0; i < z0; i++) {
        if (exact_sdot) {
            dS[i + (size_t)(z0 + i) * z0] = 1.0;
        } else if (S[i].kind == MBL_SREF_COORD) {
            for (int j = 0; j < nrhs; j++) dS[i + (size_t)j * z0] = X[jv + S[i].index + (size_t)j * N];
        } else {
            row_times(&w->U, nus + S[i].index, X, N, nrhs, dS + i, z0);
        }
    }
    for (int i = 0; i < z1; i++) {
        if (W[i].kind == MBL_SREF_COORD) {
            for (int j = 0; j < nrhs; j++) dW[i + (size_t)j * z1] = X[ja + W[i].index + (size_t)j * N];
        } else if (W[i].kind == MBL_SREF_SDOT) {
            const mbl_state_ref *s = &S[W[i].index];
            if (s->kind == MBL_SREF_COORD)
                for (int j = 0; j < nrhs; j++) dW[i + (size_t)j * z1] = X[ja + s->index + (size_t)j * N];
            else
                row_times(&w->U, 2 * nus + s->index, X, N, nrhs, dW + i, z1);
        } else {
            row_times(&w->U, 3 * nus + nuvs + W[i].index, X, N, nrhs, dW + i, z1);
        }
    }
    for (int j = 0; j < nx; j++) {
        for (int i = 0; i < z0; i++) lin->A[i + (size_t)j * nx] = dS[i + (size_t)j * z0];
        for (int i = 0; i < z1; i++) lin->A[z0 + i + (size_t)j * nx] = dW[i + (size_t)j * z1];
    }
    for (int j = 0; j < nr; j++) {
        for (int i = 0; i < z0; i++) lin->B[i + (size_t)j * nx] = dS[i + (size_t)(nx + j) * z0];
        for (int i = 0; i < z1; i++) lin->B[z0 + i + (size_t)j * nx] = dW[i + (size_t)(nx + j) * z1];
    }
    /* outputs: y = h(q, v, vdot, r) */
    for (int i = 0; i < ny; i++) {
        row_times(&w->Y, i, X, N, nrhs, w->tmpy, 1);
        for (int j = 0; j < nx; j++) lin->C[i + (size_t)j * ny] = w->tmpy[j];
        for (int j = 0; j < nr; j++) lin->D[i + (size_t)j * ny] = w->tmpy[nx + j];
        for (int p = w->Y.ptr[i]; p < w->Y.ptr[i + 1]; p++)
            if (w->Y.col[p] >= jr) lin->D[i + (size_t)(w->Y.col[p] - jr) * ny] += w->Y.val[p];
    }
    /* maps back to the coordinates */
    for (int j = 0; j < z0; j++)
        for (int i = 0; i < n; i++) lin->q_S[i + (size_t)j * n] = X[jq + i + (size_t)j * N];
    for (int j = 0; j < z1; j++)
        for (int i = 0; i < n; i++) lin->v_W[i + (size_t)j * n] = X[jv + i + (size_t)(z0 + j) * N];

    /* MCK (Eq. 29-30): M-hat = v_W^T M v_W, C-hat = -M-hat dW/dW, K-hat = -M-hat dW/dS; M v_W with
     * M = dR/dvdot straight from the sparse Jacobian */
    memset(w->MvW, 0, (size_t)n * (size_t)z1 * sizeof *w->MvW);
    for (int p = 0; p < md->jac.nz; p++) {
        int r = md->jac.row[p], c = md->jac.col[p];
        if (r >= md->row0[MBL_ROW_EOM + 1] || c < ja || c >= ja + n) continue;
        for (int j = 0; j < z1; j++) w->MvW[r + (size_t)j * n] += w->ev.jac[p] * lin->v_W[(c - ja) + (size_t)j * n];
    }
    mbla_gemm('T', 'N', z1, z1, n, 1.0, lin->v_W, n, w->MvW, n, 0.0, lin->M, z1, NULL);
    /* dW columns: S-bar (z0), W-bar (z1), inputs (nr) */
    mbla_gemm('N', 'N', z1, z1, z1, -1.0, lin->M, z1, dW + (size_t)z0 * z1, z1, 0.0, lin->Cd, z1, NULL);
    mbla_gemm('N', 'N', z1, z0, z1, -1.0, lin->M, z1, dW, z1, 0.0, lin->K, z1, NULL);
    if (nr) mbla_gemm('N', 'N', z1, nr, z1, 1.0, lin->M, z1, dW + (size_t)nx * z1, z1, 0.0, lin->F, z1, NULL);
    return 0;
}

/* Choose the states at pt, fix the pattern of the augmented matrix and analyse it; evaluate and
 * factor at pt. */
static int work_prepare(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, mbl_lin_work **out,
                        mbl_linear **linout, mbl_status *st)
{
    int n = md->n, m = md->m, k = md->k, nr = md->nr, ny = md->ny, nus = md->nus, nuvs = md->nuvs;
    mbl_linear *lin = NULL, tmp;
    *out = NULL;
    *linout = NULL;
    mbl_lin_work *w = mbl_calloc(1, sizeof *w);
    if (!w) return mbl_error(st, MBL_ENOMEM, "out of memory");
    w->md = md;
    w->opt = *opt;
    w->N = 3 * n + m + k; /* unknowns without the inputs */
    int N = w->N, rc = mbl_eval_init(md, &w->ev, st);
    if (!rc) rc = mbl_eval_at(md, pt, &w->ev, st);
    memset(&tmp, 0, sizeof tmp);
    if (!rc) rc = mbl_select_states(md, &w->ev, opt, &tmp, &w->S, &w->z0, &w->W, &w->z1, st);
    if (rc) goto fail;
    int z0 = w->z0, z1 = w->z1, nx = z0 + z1;
    if (md->nF + nx != N) {
        rc = mbl_error(st, MBL_ESINGULAR,
                       "the augmented system is not square (%d equations, %d unknowns): redundant constraints",
                       md->nF + nx, N);
        goto fail;
    }
    lin = mbl_linear_alloc(n, z0, z1, nr, ny);
    w->nrhs = nx + nr;
    int nus_rows = 3 * nus + 2 * nuvs;
    size_t cap = (size_t)md->jac.nz + (size_t)md->usjac.nz * 2 + (size_t)nx + 1;
    w->ti = mbl_alloc_array(cap, sizeof *w->ti);
    w->tj = mbl_alloc_array(cap, sizeof *w->tj);
    w->tsrc = mbl_alloc_array(cap, sizeof *w->tsrc);
    w->map = mbl_alloc_array(cap, sizeof *w->map);
    w->tx = mbl_alloc_array(cap, sizeof *w->tx);
    w->X = mbl_alloc_array((size_t)N * (size_t)w->nrhs + 1, sizeof *w->X);
    w->dS = mbl_alloc_array((size_t)z0 * (size_t)w->nrhs + 1, sizeof *w->dS);
    w->dW = mbl_alloc_array((size_t)z1 * (size_t)w->nrhs + 1, sizeof *w->dW);
    w->MvW = mbl_alloc_array((size_t)n * (size_t)z1 + 1, sizeof *w->MvW);
    w->tmpy = mbl_alloc_array((size_t)w->nrhs + 1, sizeof *w->tmpy);
    if (!lin || !w->ti || !w->tj || !w->tsrc || !w->map || !w->tx || !w->X || !w->dS || !w->dW || !w->MvW ||
        !w->tmpy || rows_of(&md->usjac, w->ev.us + nus_rows, nus_rows, &w->U) ||
        rows_of(&md->yjac, w->ev.y + ny, ny, &w->Y)) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto fail;
    }
    snprintf(lin->method, sizeof lin->method, "augmented");
    memcpy(lin->selection, tmp.selection, sizeof lin->selection);
    lin->nsel_added = tmp.nsel_added;
    lin->nsel_dropped = tmp.nsel_dropped;

    /* the pattern of the augmented matrix (Table 1) as triplets with their value sources */
    const mbl_state_ref *S = w->S, *W = w->W;
    const sparse_rows *U = &w->U;
    int nz = 0;
    int jv = mbl_model_blk0(md, MBL_BLK_V), jq = mbl_model_blk0(md, MBL_BLK_Q);
    for (int p = 0; p < md->jac.nz; p++)
        if (md->jac.col[p] < N) w->ti[nz] = md->jac.row[p], w->tj[nz] = md->jac.col[p], w->tsrc[nz++] = p;
    for (int i = 0; i < z0; i++) {
        int row = md->nF + i;
        if (S[i].kind == MBL_SREF_COORD) {
            w->ti[nz] = row, w->tj[nz] = jq + S[i].index, w->tsrc[nz++] = TSRC_ONE;
        } else {
            int ur = S[i].index;
            for (int p = U->ptr[ur]; p < U->ptr[ur + 1]; p++)
                if (U->col[p] < N) w->ti[nz] = row, w->tj[nz] = U->col[p], w->tsrc[nz++] = -U->src[p] - 2;
        }
    }
    for (int i = 0; i < z1; i++) {
        int row = md->nF + z0 + i, ur = -1;
        if (W[i].kind == MBL_SREF_COORD) {
            w->ti[nz] = row, w->tj[nz] = jv + W[i].index, w->tsrc[nz++] = TSRC_ONE;
            continue;
        }
        if (W[i].kind == MBL_SREF_SDOT) {
            const mbl_state_ref *sr = &S[W[i].index];
            if (sr->kind == MBL_SREF_COORD) {
                w->ti[nz] = row, w->tj[nz] = jv + sr->index, w->tsrc[nz++] = TSRC_ONE;
                continue;
            }
            ur = nus + sr->index;
        } else {
            ur = 3 * nus + W[i].index;
        }
        for (int p = U->ptr[ur]; p < U->ptr[ur + 1]; p++)
            if (U->col[p] < N) w->ti[nz] = row, w->tj[nz] = U->col[p], w->tsrc[nz++] = -U->src[p] - 2;
    }
    w->nz = nz;
    fill_triplets(w);
    rc = mbla_csc_from_triplets(N, N, nz, w->ti, w->tj, w->tx, w->map, &w->Aug, st);
    if (rc) goto fail;
    rc = mbla_klu_new(w->Aug, NULL, &w->lu, st);
    if (rc == MBL_ESINGULAR) rc = singular_error(st, 0.0);
    if (rc) goto fail;
    rc = mbla_klu_condest(w->lu, w->Aug, &lin->cond, st);
    if (!rc && !(lin->cond > 0 && 1.0 / lin->cond >= opt->rcond_min)) rc = singular_error(st, lin->cond);
    if (!rc) rc = finish(w, lin, st);
    if (rc) goto fail;

    /* names */
    for (int i = 0; i < z0; i++)
        lin->state_names[i] =
            mbl_name_join(S[i].kind == MBL_SREF_COORD ? md->qname[S[i].index] : md->us_text[S[i].index], NULL);
    for (int i = 0; i < z1; i++) {
        if (W[i].kind == MBL_SREF_USER) lin->state_names[z0 + i] = mbl_name_join(md->uvs_text[W[i].index], NULL);
        else if (W[i].kind == MBL_SREF_COORD) lin->state_names[z0 + i] = mbl_name_join("der(", md->qname[W[i].index]);
        else lin->state_names[z0 + i] = mbl_name_join("der(", lin->state_names[W[i].index]);
    }
    for (int j = 0; j < nr; j++) lin->input_names[j] = mbl_name_join(md->rname[j], NULL);
    for (int j = 0; j < ny; j++) lin->output_names[j] = mbl_name_join(md->yname[j], NULL);
    for (int i = 0; i < nx; i++)
        if (!lin->state_names[i]) rc = MBL_ENOMEM;
    for (int j = 0; j < nr; j++)
        if (!lin->input_names[j]) rc = MBL_ENOMEM;
    for (int j = 0; j < ny; j++)
        if (!lin->output_names[j]) rc = MBL_ENOMEM;
    if (rc) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto fail;
    }
    *out = w;
    *linout = lin;
    return 0;
fail:
    mbl_linear_free(lin);
    mbl_lin_work_free(w);
    return rc;
}

int mbl_lin_work_new(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, mbl_lin_work **out,
                     mbl_linear **lin, mbl_status *st)
{
    if (!out || !lin) return mbl_error(st, MBL_EARG, "mbl_lin_work_new: out or lin is NULL");
    *out = NULL;
    *lin = NULL;
    if (!md || !pt) return mbl_error(st, MBL_EARG, "mbl_lin_work_new: model or point is NULL");
    mbl_lin_options def;
    if (!opt) {
        mbl_lin_options_default(&def);
        opt = &def;
    }
    if (opt->method && strcmp(opt->method, "augmented"))
        return mbl_error(st, MBL_EARG, "mbl_lin_work_new: sweeps use the augmented method, not '%s'", opt->method);
    int rc = work_prepare(md, pt, opt, out, lin, st);
    if (rc) mbl_error_prefix(st, "%s", md->file);
    return rc;
}

int mbl_relinearize(mbl_lin_work *w, const mbl_point *pt, mbl_linear *lin, mbl_status *st)
{
    if (!w || !pt || !lin) return mbl_error(st, MBL_EARG, "mbl_relinearize: workspace, point or result is NULL");
    const mbl_model *md = w->md;
    if (lin->nx != w->z0 + w->z1 || lin->n != md->n || lin->nu != md->nr || lin->ny != md->ny)
        return mbl_error(st, MBL_EDIM, "mbl_relinearize: the linear model was not made by this workspace");
    int rc = mbl_eval_at(md, pt, &w->ev, st);
    if (rc) return rc;
    fill_triplets(w);
    mbla_csc_refill(w->Aug, w->nz, w->map, w->tx);
    rows_refill(&w->U, 3 * md->nus + 2 * md->nuvs, w->ev.us + 3 * md->nus + 2 * md->nuvs);
    rows_refill(&w->Y, md->ny, w->ev.y + md->ny);
    rc = mbla_klu_refactor(w->lu, w->Aug, st);
    if (rc == MBL_ESINGULAR) {
        singular_error(st, 0.0);
        return mbl_error_prefix(st, "%s", md->file);
    }
    if (rc) return rc;
    /* the cheap pivot-ratio check per point; the 1-norm estimate when it looks doubtful */
    double rcond = 0;
    rc = mbla_klu_rcond(w->lu, &rcond, st);
    if (rc) return rc;
    lin->cond = rcond > 0 ? 1.0 / rcond : INFINITY;
    if (rcond < RELIN_RCOND_CHECK) {
        rc = mbla_klu_condest(w->lu, w->Aug, &lin->cond, st);
        if (rc) return rc;
        if (!(lin->cond > 0 && 1.0 / lin->cond >= w->opt.rcond_min)) {
            singular_error(st, lin->cond);
            return mbl_error_prefix(st, "%s", md->file);
        }
    }
    return finish(w, lin, st);
}

int mbl_lin_augmented(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, mbl_linear **out,
                      mbl_status *st)
{
    mbl_lin_work *w = NULL;
    int rc = work_prepare(md, pt, opt, &w, out, st);
    mbl_lin_work_free(w);
    return rc;
}

/* mbl_lin_options_default() and the dispatcher mbl_linearize() are in src/lin/methods.c. */
