/* A complete orthogonal factorization kept for several right-hand sides: mbla_lstsq_qr's minimum-norm
 * least squares (LAPACK dgelsy) in two steps, its factorization made once. The steps are dgelsy's
 * own calls in its order with its workspace lengths (dgeqp3, the rank by dlaic1's incremental
 * condition estimate, dtzrzf; then per right-hand side dormqr, dtrsm, dormrz and the column
 * permutation, with dgelsy's scalings of A and B), so that a solve gives dgelsy's numbers bit for
 * bit (tests/la/test_la_cod.c compares them with LAPACKE_dgelsy_work's). mbla_lstsq_qr is the
 * two steps at once. */
#include "la/la_internal.h"

#include <cblas.h>
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <string.h>

/* LAPACK's incremental condition estimate has no LAPACKE wrapper: declare the Fortran symbol. */
extern void dlaic1_(const int *job, const int *j, const double *x, const double *sest, const double *w,
                    const double *gamma, double *sestpr, double *s, double *c);

struct mbla_cod {
    int m, n, mn, rank;
    double *A;    /* m x n (leading dimension m): dgeqp3's and dtzrzf's reflectors, T11 */
    double *tau;  /* mn: Q's scalars (dgeqp3) */
    double *tauz; /* mn: Y's scalars (dtzrzf; rank < n) */
    lapack_int *jpvt;
    double anrm, smlnum, bignum;
    int iascl; /* dgelsy's scaling of A: 0 none, 1 up to smlnum, 2 down to bignum */
};

void mbla_cod_free(mbla_cod *f)
{
    if (!f) return;
    mbl_free(f->A), mbl_free(f->tau), mbl_free(f->tauz), mbl_free(f->jpvt);
    mbl_free(f);
}

int mbla_cod_rank(const mbla_cod *f) { return f ? f->rank : 0; }

/* dgelsy's workspace length for nrhs right-hand sides (its query), -1 when LAPACK refuses */
static int gelsy_lwork(int m, int n, int nrhs)
{
    double wq = 0.0;
    int rk = 0, mx = m > n ? m : n;
    lapack_int jp = 0;
    double a = 0.0, b = 0.0;
    int info = LAPACKE_dgelsy_work(LAPACK_COL_MAJOR, m, n, nrhs, &a, la_max1(m), &b, la_max1(mx), &jp, 0.0, &rk,
                                   &wq, -1);
    return info < 0 ? -1 : la_query_lwork(wq, 1);
}

int mbla_cod_new(int m, int n, const double *A, int lda, double rcond, mbla_cod **out, mbl_status *st)
{
    const char *fn = "mbla_cod_new";
    if (!out) return mbl_error(st, MBL_EARG, "%s: out is NULL", fn);
    *out = NULL;
    int r = la_check_mat(st, fn, "A", m, n, A, lda);
    if (!r) r = la_check_finite(st, fn, "A", m, n, A, lda);
    if (r) return r;
    int mn = m < n ? m : n;
    mbla_cod *f = mbl_calloc(1, sizeof *f);
    if (!f) return mbl_error(st, MBL_ENOMEM, "%s: out of memory", fn);
    f->m = m, f->n = n, f->mn = mn;
    f->A = mbl_alloc_array((size_t)m * (size_t)n + 1, sizeof *f->A);
    f->tau = mbl_alloc_array((size_t)mn + 1, sizeof *f->tau);
    f->tauz = mbl_alloc_array((size_t)mn + 1, sizeof *f->tauz);
    f->jpvt = mbl_calloc((size_t)n + 1, sizeof *f->jpvt); /* all 0: every column free (dgeqp3) */
    int lwork = mn ? gelsy_lwork(m, n, 1) : 1;
    double *work = lwork > 0 ? mbl_alloc_array((size_t)lwork, sizeof *work) : NULL;
    if (!f->A || !f->tau || !f->tauz || !f->jpvt || !work) {
        mbl_free(work), mbla_cod_free(f);
        return lwork < 0 ? mbl_error(st, MBL_ELIB, "%s: dgelsy's workspace query failed", fn)
                         : mbl_error(st, MBL_ENOMEM, "%s: out of memory (%d x %d)", fn, m, n);
    }
    for (int j = 0; j < n; j++) memcpy(f->A + (size_t)j * m, A + (size_t)j * lda, (size_t)m * sizeof *A);
    *out = f;
    if (!mn) {
        mbl_free(work);
        return 0;
    }
    if (rcond < 0) rcond = DBL_EPSILON; /* as mbla_lstsq_qr */
    f->smlnum = LAPACKE_dlamch_work('S') / LAPACKE_dlamch_work('P');
    f->bignum = 1.0 / f->smlnum;
    f->anrm = LAPACKE_dlange_work(LAPACK_COL_MAJOR, 'M', m, n, f->A, m, work);
    int info = 0;
    if (f->anrm > 0.0 && f->anrm < f->smlnum) {
        info = LAPACKE_dlascl_work(LAPACK_COL_MAJOR, 'G', 0, 0, f->anrm, f->smlnum, m, n, f->A, m);
        f->iascl = 1;
    } else if (f->anrm > f->bignum) {
        info = LAPACKE_dlascl_work(LAPACK_COL_MAJOR, 'G', 0, 0, f->anrm, f->bignum, m, n, f->A, m);
        f->iascl = 2;
    } else if (f->anrm == 0.0) {
        mbl_free(work);
        return 0; /* rank 0: every solution 0 */
    }
    if (!info) info = LAPACKE_dgeqp3_work(LAPACK_COL_MAJOR, m, n, f->A, m, f->jpvt, f->tau, work + mn, lwork - mn);
    if (info) {
        mbl_free(work), mbla_cod_free(f), *out = NULL;
        return la_lapacke_error(st, "mbla_cod_new (dgeqp3)", info);
    }
    /* the rank by incremental condition estimation (dlaic1) on R's leading triangles */
    double *xmin = work + mn, *xmax = work + 2 * mn; /* dgelsy's WORK(ISMIN), WORK(ISMAX) */
    xmin[0] = xmax[0] = 1.0;
    double smax = fabs(f->A[0]), smin = smax;
    int rank = smax == 0.0 ? 0 : 1;
    const int imax = 1, imin = 2;
    while (rank && rank < mn) {
        int i = rank; /* 0-based: column i + 1 of dgelsy */
        double sminpr, smaxpr, s1, c1, s2, c2;
        const double *col = f->A + (size_t)i * m;
        dlaic1_(&imin, &rank, xmin, &smin, col, &col[i], &sminpr, &s1, &c1);
        dlaic1_(&imax, &rank, xmax, &smax, col, &col[i], &smaxpr, &s2, &c2);
        if (!(smaxpr * rcond <= sminpr)) break;
        for (int k = 0; k < rank; k++) xmin[k] *= s1, xmax[k] *= s2;
        xmin[rank] = c1, xmax[rank] = c2;
        smin = sminpr, smax = smaxpr;
        rank++;
    }
    f->rank = rank;
    if (rank && rank < n)
        info = LAPACKE_dtzrzf_work(LAPACK_COL_MAJOR, rank, n, f->A, m, f->tauz, work + 2 * mn, lwork - 2 * mn);
    mbl_free(work);
    if (info) {
        mbla_cod_free(f), *out = NULL;
        return la_lapacke_error(st, "mbla_cod_new (dtzrzf)", info);
    }
    return 0;
}

int mbla_cod_solve(const mbla_cod *f, int nrhs, double *B, int ldb, mbl_status *st)
{
    const char *fn = "mbla_cod_solve";
    if (!f) return mbl_error(st, MBL_EARG, "%s: no factorization", fn);
    int m = f->m, n = f->n, mn = f->mn, mx = m > n ? m : n, rank = f->rank;
    if (nrhs < 0) return mbl_error(st, MBL_EDIM, "%s: nrhs = %d", fn, nrhs);
    if (ldb < la_max1(mx)) return mbl_error(st, MBL_EDIM, "%s: ldb %d < max(1, %d, %d)", fn, ldb, m, n);
    if (!B && nrhs && mx) return mbl_error(st, MBL_EARG, "%s: B is NULL", fn);
    int r = la_check_finite(st, fn, "B", m, nrhs, B, ldb);
    if (r || nrhs == 0) return r;
    if (!rank) { /* an empty or zero matrix, or R(1,1) = 0: the minimum-norm solution 0 */
        for (int c = 0; c < nrhs; c++)
            for (int i = 0; i < mx; i++) B[i + (size_t)c * ldb] = 0.0;
        return 0;
    }
    int lwork = gelsy_lwork(m, n, nrhs);
    double *work = lwork > 0 ? mbl_alloc_array((size_t)lwork, sizeof *work) : NULL;
    if (!work)
        return lwork < 0 ? mbl_error(st, MBL_ELIB, "%s: dgelsy's workspace query failed", fn)
                         : mbl_error(st, MBL_ENOMEM, "%s: out of memory (workspace %d)", fn, lwork);
    double bnrm = LAPACKE_dlange_work(LAPACK_COL_MAJOR, 'M', m, nrhs, B, ldb, work);
    int ibscl = 0, info = 0;
    if (bnrm > 0.0 && bnrm < f->smlnum) {
        info = LAPACKE_dlascl_work(LAPACK_COL_MAJOR, 'G', 0, 0, bnrm, f->smlnum, m, nrhs, B, ldb);
        ibscl = 1;
    } else if (bnrm > f->bignum) {
        info = LAPACKE_dlascl_work(LAPACK_COL_MAJOR, 'G', 0, 0, bnrm, f->bignum, m, nrhs, B, ldb);
        ibscl = 2;
    }
    /* B := Q^T B, B(1:rank) := T11^-1 B(1:rank), B(rank+1:n) := 0, B := Y^T B, B := P B */
    if (!info)
        info = LAPACKE_dormqr_work(LAPACK_COL_MAJOR, 'L', 'T', m, nrhs, mn, f->A, m, f->tau, B, ldb, work + 2 * mn,
                                   lwork - 2 * mn);
    if (!info) {
        cblas_dtrsm(CblasColMajor, CblasLeft, CblasUpper, CblasNoTrans, CblasNonUnit, rank, nrhs, 1.0, f->A, m, B, ldb);
        for (int c = 0; c < nrhs; c++)
            for (int i = rank; i < n; i++) B[i + (size_t)c * ldb] = 0.0;
        if (rank < n)
            info = LAPACKE_dormrz_work(LAPACK_COL_MAJOR, 'L', 'T', n, nrhs, rank, n - rank, f->A, m, f->tauz, B, ldb,
                                       work + 2 * mn, lwork - 2 * mn);
    }
    for (int c = 0; !info && c < nrhs; c++) {
        double *b = B + (size_t)c * ldb;
        for (int i = 0; i < n; i++) work[f->jpvt[i] - 1] = b[i];
        memcpy(b, work, (size_t)n * sizeof *b);
    }
    if (!info && f->iascl)
        info = LAPACKE_dlascl_work(LAPACK_COL_MAJOR, 'G', 0, 0, f->anrm, f->iascl == 1 ? f->smlnum : f->bignum, n, nrhs,
                                   B, ldb);
    if (!info && ibscl)
        info = LAPACKE_dlascl_work(LAPACK_COL_MAJOR, 'G', 0, 0, ibscl == 1 ? f->smlnum : f->bignum, bnrm, n, nrhs, B,
                                   ldb);
    mbl_free(work);
    if (info) return la_lapacke_error(st, "mbla_cod_solve (dormqr, dormrz, dlascl)", info);
    return 0;
}
