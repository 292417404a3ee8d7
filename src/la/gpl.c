/* The parts of src/la that use GPL-licensed SuiteSparse components: sparse Cholesky by
 * CHOLMOD (its supernodal module is GPL) and rank-revealing sparse QR by SPQR (GPL).
 * Compiled in only with MBLIN_WITH_GPL; otherwise every function reports MBL_ELIB. */
#include "la/la_internal.h"
#include "la/la_spqr.h"

#include <string.h>

#define GPL_OFF_MSG "built without GPL components (MBLIN_WITH_GPL=OFF)"

#ifdef MBLIN_WITH_GPL

#include <SuiteSparseQR_C.h>
#include <cholmod.h>

/* ============================== CHOLMOD ===================================================== */

struct mbla_chol {
    int n, nz, stype;
    int *p, *i; /* analysed pattern */
    cholmod_common c;
    cholmod_factor *L;
    int started;
};

void mbla_chol_free(mbla_chol *ch)
{
    if (!ch) return;
    if (ch->started) {
        if (ch->L) cholmod_free_factor(&ch->L, &ch->c);
        cholmod_finish(&ch->c);
    }
    mbl_free(ch->p);
    mbl_free(ch->i);
    mbl_free(ch);
}

static cholmod_sparse wrap_int(const mbla_csc *A, int stype)
{
    cholmod_sparse s;
    memset(&s, 0, sizeof s);
    s.nrow = (size_t)A->m;
    s.ncol = (size_t)A->n;
    s.nzmax = (size_t)A->p[A->n];
    s.p = A->p;
    s.i = A->i;
    s.x = A->x;
    s.stype = stype;
    s.itype = CHOLMOD_INT;
    s.xtype = CHOLMOD_REAL;
    s.dtype = CHOLMOD_DOUBLE;
    s.sorted = 1;
    s.packed = 1;
    return s;
}

static int chol_status(mbla_chol *ch, mbl_status *st, const char *fn, const char *what)
{
    int s = ch->c.status;
    if (s == CHOLMOD_NOT_POSDEF)
        return mbl_error(st, MBL_ESINGULAR, "%s: matrix not positive definite (column %zu)", fn,
                         ch->L ? ch->L->minor : (size_t)0);
    if (s == CHOLMOD_OUT_OF_MEMORY || s == CHOLMOD_TOO_LARGE)
        return mbl_error(st, MBL_ENOMEM, "%s: CHOLMOD %s: out of memory", fn, what);
    return mbl_error(st, MBL_ELIB, "%s: CHOLMOD %s failed (status %d)", fn, what, s);
}

static int chol_numeric(mbla_chol *ch, const mbla_csc *A, mbl_status *st, const char *fn)
{
    cholmod_sparse s = wrap_int(A, ch->stype);
    int ok = cholmod_factorize(&s, ch->L, &ch->c);
    if (!ok || ch->c.status != CHOLMOD_OK) return chol_status(ch, st, fn, "factorize");
    return 0;
}

static int chol_args(const mbla_csc *A, char uplo, mbl_status *st, const char *fn)
{
    int r = la_csc_arg(A, fn, "A", st);
    if (r) return r;
    if (A->m != A->n)
        return mbl_error(st, MBL_EDIM, "%s: matrix must be square, got %d x %d", fn, A->m, A->n);
    if (uplo != 'U' && uplo != 'L') return mbl_error(st, MBL_EARG, "%s: uplo must be 'U' or 'L'", fn);
    return 0;
}

int mbla_chol_new(const mbla_csc *A, char uplo, mbla_chol **out, mbl_status *st)
{
    const char *fn = "mbla_chol_new";
    if (!out) return mbl_error(st, MBL_EARG, "%s: out is NULL", fn);
    *out = NULL;
    int r = chol_args(A, uplo, st, fn);
    if (r) return r;
    mbla_chol *ch = mbl_calloc(1, sizeof *ch);
    if (!ch) return mbl_error(st, MBL_ENOMEM, "%s: out of memory", fn);
    ch->n = A->n;
    ch->nz = A->p[A->n];
    ch->stype = uplo == 'U' ? 1 : -1;
    ch->p = mbl_alloc_array((size_t)ch->n + 1, sizeof *ch->p);
    ch->i = mbl_alloc_array((size_t)ch->nz, sizeof *ch->i);
    if (!ch->p || !ch->i) {
        mbla_chol_free(ch);
        return mbl_error(st, MBL_ENOMEM, "%s: out of memory", fn);
    }
    memcpy(ch->p, A->p, ((size_t)ch->n + 1) * sizeof *ch->p);
    if (ch->nz) memcpy(ch->i, A->i, (size_t)ch->nz * sizeof *ch->i);
    if (!cholmod_start(&ch->c)) {
        mbla_chol_free(ch);
        return mbl_error(st, MBL_ELIB, "%s: cholmod_start failed", fn);
    }
    ch->started = 1;
    ch->c.print = 0;        /* the library never prints */
    ch->c.error_handler = NULL;
    ch->c.final_ll = 1;     /* L L^T: an indefinite matrix is reported, not factored as LDL^T */
    cholmod_sparse s = wrap_int(A, ch->stype);
    ch->L = cholmod_analyze(&s, &ch->c);
    if (!ch->L) {
        r = chol_status(ch, st, fn, "analyze");
        mbla_chol_free(ch);
        return r;
    }
    if ((r = chol_numeric(ch, A, st, fn))) {
        mbla_chol_free(ch);
        return r;
    }
    *out = ch;
    return 0;
}

int mbla_chol_lnz(const mbla_csc *A, char uplo, double *lnz, mbl_status *st)
{
    const char *fn = "mbla_chol_lnz";
    if (!lnz) return mbl_error(st, MBL_EARG, "%s: lnz is NULL", fn);
    *lnz = -1;
    int r = chol_args(A, uplo, st, fn);
    if (r) return r;
    cholmod_common c;
    if (!cholmod_start(&c)) return mbl_error(st, MBL_ELIB, "%s: cholmod_start failed", fn);
    c.print = 0; /* the library never prints */
    c.error_handler = NULL;
    cholmod_sparse s = wrap_int(A, uplo == 'U' ? 1 : -1);
    cholmod_factor *L = cholmod_analyze(&s, &c);
    if (!L || c.status != CHOLMOD_OK)
        r = c.status == CHOLMOD_OUT_OF_MEMORY || c.status == CHOLMOD_TOO_LARGE
                ? mbl_error(st, MBL_ENOMEM, "%s: CHOLMOD analyze: out of memory", fn)
                : mbl_error(st, MBL_ELIB, "%s: CHOLMOD analyze failed (status %d)", fn, c.status);
    else
        *lnz = c.lnz;
    if (L) cholmod_free_factor(&L, &c);
    cholmod_finish(&c);
    return r;
}

int mbla_chol_refactor(mbla_chol *ch, const mbla_csc *A, mbl_status *st)
{
    const char *fn = "mbla_chol_refactor";
    if (!ch) return mbl_error(st, MBL_EARG, "%s: factorization is NULL", fn);
    int r = chol_args(A, ch->stype > 0 ? 'U' : 'L', st, fn);
    if (r) return r;
    if (A->n != ch->n || A->p[A->n] != ch->nz ||
        memcmp(A->p, ch->p, ((size_t)ch->n + 1) * sizeof *ch->p) ||
        (ch->nz && memcmp(A->i, ch->i, (size_t)ch->nz * sizeof *ch->i)))
        return mbl_error(st, MBL_EDIM, "%s: sparsity pattern differs from the analysed one", fn);
    return chol_numeric(ch, A, st, fn);
}

int mbla_chol_solve(mbla_chol *ch, int nrhs, double *B, int ldb, mbl_status *st)
{
    const char *fn = "mbla_chol_solve";
    if (!ch) return mbl_error(st, MBL_EARG, "%s: factorization is NULL", fn);
    if (nrhs < 0) return mbl_error(st, MBL_EDIM, "%s: nrhs = %d", fn, nrhs);
    if (ldb < la_max1(ch->n)) return mbl_error(st, MBL_EDIM, "%s: ldb %d < max(1, %d)", fn, ldb, ch->n);
    if (!nrhs || !ch->n) return 0;
    if (!B) return mbl_error(st, MBL_EARG, "%s: B is NULL", fn);
    cholmod_dense b;
    memset(&b, 0, sizeof b);
    b.nrow = (size_t)ch->n;
    b.ncol = (size_t)nrhs;
    b.d = (size_t)ldb;
    b.nzmax = (size_t)ldb * (size_t)nrhs;
    b.x = B;
    b.xtype = CHOLMOD_REAL;
    b.dtype = CHOLMOD_DOUBLE;
    cholmod_dense *X = cholmod_solve(CHOLMOD_A, ch->L, &b, &ch->c);
    if (!X) return chol_status(ch, st, fn, "solve");
    const double *x = X->x;
    for (int j = 0; j < nrhs; j++)
        for (int i = 0; i < ch->n; i++) B[i + (size_t)j * ldb] = x[i + (size_t)j * X->d];
    cholmod_free_dense(&X, &ch->c);
    return 0;
}

/* ============================== SPQR ======================================================== */

/* A CSC copy with SuiteSparse_long indices, as the SPQR C API needs. */
typedef struct {
    cholmod_sparse s;
    SuiteSparse_long *p, *i;
} lsparse;

static int lsparse_make(lsparse *L, const mbla_csc *A, mbl_status *st, const char *fn)
{
    int nz = A->p[A->n];
    memset(L, 0, sizeof *L);
    L->p = mbl_alloc_array((size_t)A->n + 1, sizeof *L->p);
    L->i = mbl_alloc_array((size_t)nz, sizeof *L->i);
    if (!L->p || !L->i) {
        mbl_free(L->p);
        mbl_free(L->i);
        L->p = L->i = NULL;
        return mbl_error(st, MBL_ENOMEM, "%s: out of memory", fn);
    }
    for (int j = 0; j <= A->n; j++) L->p[j] = A->p[j];
    for (int k = 0; k < nz; k++) L->i[k] = A->i[k];
    L->s.nrow = (size_t)A->m;
    L->s.ncol = (size_t)A->n;
    L->s.nzmax = (size_t)nz;
    L->s.p = L->p;
    L->s.i = L->i;
    L->s.x = A->x;
    L->s.stype = 0;
    L->s.itype = CHOLMOD_LONG;
    L->s.xtype = CHOLMOD_REAL;
    L->s.dtype = CHOLMOD_DOUBLE;
    L->s.sorted = 1;
    L->s.packed = 1;
    return 0;
}

static void lsparse_free(lsparse *L)
{
    mbl_free(L->p);
    mbl_free(L->i);
}

static int spqr_start(cholmod_common *cc, mbl_status *st, const char *fn)
{
    if (!cholmod_l_start(cc)) return mbl_error(st, MBL_ELIB, "%s: cholmod_l_start failed", fn);
    cc->print = 0;
    cc->error_handler = NULL;
    return 0;
}

static int spqr_fail(cholmod_common *cc, mbl_status *st, const char *fn, const char *what)
{
    if (cc->status == CHOLMOD_OUT_OF_MEMORY || cc->status == CHOLMOD_TOO_LARGE)
        return mbl_error(st, MBL_ENOMEM, "%s: SPQR %s: out of memory", fn, what);
    return mbl_error(st, MBL_ELIB, "%s: SPQR %s failed (status %d)", fn, what, cc->status);
}

static double spqr_tol(double tol) { return tol < 0 ? (double)SPQR_DEFAULT_TOL : tol; }

int mbla_spqr_rank(const mbla_csc *A, double tol, int *rank, double *tol_used, mbl_status *st)
{
    const char *fn = "mbla_spqr_rank";
    int r = la_csc_arg(A, fn, "A", st);
    if (r) return r;
    if (!rank) return mbl_error(st, MBL_EARG, "%s: rank is NULL", fn);
    lsparse L;
    if ((r = lsparse_make(&L, A, st, fn))) return r;
    cholmod_common cc;
    if ((r = spqr_start(&cc, st, fn))) {
        lsparse_free(&L);
        return r;
    }
    SuiteSparseQR_C_factorization *QR =
        SuiteSparseQR_C_factorize(SPQR_ORDERING_DEFAULT, spqr_tol(tol), &L.s, &cc);
    if (!QR) {
        r = spqr_fail(&cc, st, fn, "factorize");
    } else {
        *rank = (int)cc.SPQR_istat[4];
        if (tol_used) *tol_used = cc.SPQR_tol_used;
        SuiteSparseQR_C_free(&QR, &cc);
    }
    cholmod_l_finish(&cc);
    lsparse_free(&L);
    return r;
}

/* Factor A^T (n x m) by SPQR. On success *QR and the started cc are live. */
static int factor_transpose(const mbla_csc *A, double tol, cholmod_common *cc,
                            SuiteSparseQR_C_factorization **QR, mbl_status *st, const char *fn)
{
    mbla_csc *At = NULL;
    int r = mbla_csc_transpose(A, &At, st);
    if (r) return r;
    lsparse L;
    if ((r = lsparse_make(&L, At, st, fn))) {
        mbla_csc_free(At);
        return r;
    }
    if ((r = spqr_start(cc, st, fn))) {
        lsparse_free(&L);
        mbla_csc_free(At);
        return r;
    }
    *QR = SuiteSparseQR_C_factorize(SPQR_ORDERING_DEFAULT, spqr_tol(tol), &L.s, cc);
    lsparse_free(&L);
    mbla_csc_free(At);
    if (!*QR) {
        r = spqr_fail(cc, st, fn, "factorize");
        cholmod_l_finish(cc);
    }
    return r;
}

int mbla_spqr_nullspace(const mbla_csc *A, double tol, double **N, int *nnull, int *rank,
                        mbl_status *st)
{
    const char *fn = "mbla_spqr_nullspace";
    if (!N || !nnull) return mbl_error(st, MBL_EARG, "%s: N or nnull is NULL", fn);
    *N = NULL;
    *nnull = 0;
    int r = la_csc_arg(A, fn, "A", st);
    if (r) return r;
    int n = A->n;
    cholmod_common cc;
    SuiteSparseQR_C_factorization *QR = NULL;
    if ((r = factor_transpose(A, tol, &cc, &QR, st, fn))) return r;
    int rk = (int)cc.SPQR_istat[4];
    int nn = n - rk;
    if (rank) *rank = rk;
    if (nn > 0) {
        cholmod_dense *X = cholmod_l_zeros((size_t)n, (size_t)nn, CHOLMOD_REAL, &cc);
        cholmod_dense *Y = NULL;
        double *out = NULL;
        if (X) {
            double *x = X->x;
            for (int j = 0; j < nn; j++) x[rk + j + (size_t)j * X->d] = 1.0;
            Y = SuiteSparseQR_C_qmult(SPQR_QX, QR, X, &cc);
        }
        if (!X || !Y) {
            r = spqr_fail(&cc, st, fn, "qmult");
        } else if (!(out = la_alloc_dmat(n, nn))) {
            r = mbl_error(st, MBL_ENOMEM, "%s: out of memory (%d x %d)", fn, n, nn);
        } else {
            la_copy_dmat(n, nn, Y->x, (int)Y->d, out, n);
            *N = out;
            *nnull = nn;
        }
        if (X) cholmod_l_free_dense(&X, &cc);
        if (Y) cholmod_l_free_dense(&Y, &cc);
    }
    SuiteSparseQR_C_free(&QR, &cc);
    cholmod_l_finish(&cc);
    return r;
}

static cholmod_dense wrap_dense(int m, int n, const double *B, int ldb)
{
    cholmod_dense d;
    memset(&d, 0, sizeof d);
    d.nrow = (size_t)m;
    d.ncol = (size_t)n;
    d.d = (size_t)ldb;
    d.nzmax = (size_t)ldb * (size_t)n;
    d.x = (void *)B;
    d.xtype = CHOLMOD_REAL;
    d.dtype = CHOLMOD_DOUBLE;
    return d;
}

int mbla_spqr_solve(const mbla_csc *A, double tol, int nrhs, const double *B, int ldb,
                    double *X, int ldx, mbl_status *st)
{
    const char *fn = "mbla_spqr_solve";
    int r = la_csc_arg(A, fn, "A", st);
    if (r) return r;
    int m = A->m, n = A->n;
    if (nrhs < 0) return mbl_error(st, MBL_EDIM, "%s: nrhs = %d", fn, nrhs);
    if (ldb < la_max1(m) || ldx < la_max1(n))
        return mbl_error(st, MBL_EDIM, "%s: ldb %d or ldx %d too small for %d x %d", fn, ldb, ldx, m, n);
    if (!nrhs || !n) return 0;
    if (!X || (!B && m)) return mbl_error(st, MBL_EARG, "%s: B or X is NULL", fn);
    if (m == 0) {
        for (int j = 0; j < nrhs; j++)
            for (int i = 0; i < n; i++) X[i + (size_t)j * ldx] = 0.0;
        return 0;
    }
    cholmod_common cc;
    cholmod_dense b = wrap_dense(m, nrhs, B, ldb), *Y = NULL;
    if (m >= n) {
        lsparse L;
        if ((r = lsparse_make(&L, A, st, fn))) return r;
        if ((r = spqr_start(&cc, st, fn))) {
            lsparse_free(&L);
            return r;
        }
        Y = SuiteSparseQR_C_backslash(SPQR_ORDERING_DEFAULT, spqr_tol(tol), &L.s, &b, &cc);
        lsparse_free(&L);
        if (!Y) r = spqr_fail(&cc, st, fn, "backslash");
    } else {
        /* minimum-norm: A^T E = Q R, x = Q [R^-T E^T b; 0] */
        SuiteSparseQR_C_factorization *QR = NULL;
        if ((r = factor_transpose(A, tol, &cc, &QR, st, fn))) return r;
        cholmod_dense *Z = SuiteSparseQR_C_solve(SPQR_RTX_EQUALS_ETB, QR, &b, &cc);
        if (Z) Y = SuiteSparseQR_C_qmult(SPQR_QX, QR, Z, &cc);
        if (!Y) r = spqr_fail(&cc, st, fn, "min-norm solve");
        if (Z) cholmod_l_free_dense(&Z, &cc);
        SuiteSparseQR_C_free(&QR, &cc);
    }
    if (Y) {
        la_copy_dmat(n, nrhs, Y->x, (int)Y->d, X, ldx);
        cholmod_l_free_dense(&Y, &cc);
    }
    cholmod_l_finish(&cc);
    return r;
}

/* ============================== SPQR kept for refactorization ================================ */

struct la_spqr {
    int m, n;
    lsparse L; /* the analysed pattern (L.s.x set to the values at each factorization) */
    cholmod_common cc;
    SuiteSparseQR_C_factorization *QR;
};

void la_spqr_free(la_spqr *qr)
{
    if (!qr) return;
    if (qr->QR) SuiteSparseQR_C_free(&qr->QR, &qr->cc);
    cholmod_l_finish(&qr->cc);
    lsparse_free(&qr->L);
    mbl_free(qr);
}

static int spqr_numeric(la_spqr *qr, const mbla_csc *A, mbl_status *st, const char *fn)
{
    qr->L.s.x = A->x;
    int ok = SuiteSparseQR_C_numeric(spqr_tol(-1.0), &qr->L.s, qr->QR, &qr->cc);
    qr->L.s.x = NULL;
    return ok ? 0 : spqr_fail(&qr->cc, st, fn, "numeric factorization");
}

int la_spqr_new(const mbla_csc *A, la_spqr **out, mbl_status *st)
{
    const char *fn = "la_spqr_new";
    if (!out) return mbl_error(st, MBL_EARG, "%s: out is NULL", fn);
    *out = NULL;
    int r = la_csc_arg(A, fn, "A", st);
    if (r) return r;
    la_spqr *qr = mbl_calloc(1, sizeof *qr);
    if (!qr) return mbl_error(st, MBL_ENOMEM, "%s: out of memory", fn);
    if ((r = lsparse_make(&qr->L, A, st, fn))) {
        mbl_free(qr);
        return r;
    }
    if ((r = spqr_start(&qr->cc, st, fn))) {
        lsparse_free(&qr->L);
        mbl_free(qr);
        return r;
    }
    qr->m = A->m, qr->n = A->n;
    qr->QR = SuiteSparseQR_C_symbolic(SPQR_ORDERING_DEFAULT, 1, &qr->L.s, &qr->cc);
    if (!qr->QR) r = spqr_fail(&qr->cc, st, fn, "symbolic analysis");
    if (!r) r = spqr_numeric(qr, A, st, fn);
    if (r) la_spqr_free(qr);
    else *out = qr;
    return r;
}

int la_spqr_same_pattern(const la_spqr *qr, const mbla_csc *A)
{
    if (!qr || !A || A->m != qr->m || A->n != qr->n) return 0;
    for (int j = 0; j <= A->n; j++)
        if (A->p[j] != qr->L.p[j]) return 0;
    for (int k = 0; k < A->p[A->n]; k++)
        if (A->i[k] != qr->L.i[k]) return 0;
    return 1;
}

int la_spqr_refactor(la_spqr *qr, const mbla_csc *A, mbl_status *st)
{
    const char *fn = "la_spqr_refactor";
    if (!qr) return mbl_error(st, MBL_EARG, "%s: factorization is NULL", fn);
    int r = la_csc_arg(A, fn, "A", st);
    if (r) return r;
    if (!la_spqr_same_pattern(qr, A))
        return mbl_error(st, MBL_EDIM, "%s: sparsity pattern differs from the analysed one", fn);
    return spqr_numeric(qr, A, st, fn);
}

int la_spqr_rank_of(const la_spqr *qr) { return qr ? (int)qr->cc.SPQR_istat[4] : 0; }

/* y = E R \ (R^T \ (E^T c)) (R's live part where A is rank deficient: y's dead entries 0). c has n,
 * y n entries. */
static int spqr_normal_solve(la_spqr *qr, const double *c, double *y, mbl_status *st, const char *fn)
{
    cholmod_dense cd = wrap_dense(qr->n, 1, c, qr->n);
    cholmod_dense *Z = SuiteSparseQR_C_solve(SPQR_RTX_EQUALS_ETB, qr->QR, &cd, &qr->cc), *Y = NULL;
    if (Z) Y = SuiteSparseQR_C_solve(SPQR_RETX_EQUALS_B, qr->QR, Z, &qr->cc);
    int r = Y ? 0 : spqr_fail(&qr->cc, st, fn, "solve");
    if (Y) la_copy_dmat(qr->n, 1, Y->x, (int)Y->d, y, qr->n);
    if (Z) cholmod_l_free_dense(&Z, &qr->cc);
    if (Y) cholmod_l_free_dense(&Y, &qr->cc);
    return r;
}

int la_spqr_lstsq(la_spqr *qr, const mbla_csc *A, const double *b, double *x, mbl_status *st)
{
    const char *fn = "la_spqr_lstsq";
    if (!qr || !b || !x) return mbl_error(st, MBL_EARG, "%s: factorization, b or x is NULL", fn);
    int r = la_csc_arg(A, fn, "A", st);
    if (r) return r;
    if (A->m != qr->m || A->n != qr->n || qr->m < qr->n)
        return mbl_error(st, MBL_EDIM, "%s: A is %d x %d, the factorization's %d x %d (must be tall)", fn, A->m, A->n,
                         qr->m, qr->n);
    if (!qr->n) return 0;
    double *c = mbl_alloc_array((size_t)qr->n, sizeof *c), *res = mbl_alloc_array((size_t)qr->m, sizeof *res);
    if (!c || !res) r = mbl_error(st, MBL_ENOMEM, "%s: out of memory", fn);
    /* the semi-normal equations R^T R x = E^T A^T b, then one correction from the residual b - A x
     * (corrected semi-normal equations: the least-squares accuracy of Q^T b without applying Q) */
    if (!r) r = mbla_csc_gemv_t(A, 1.0, b, 0.0, c, st);
    if (!r) r = spqr_normal_solve(qr, c, x, st, fn);
    if (!r) {
        memcpy(res, b, (size_t)qr->m * sizeof *res);
        r = mbla_csc_gemv(A, -1.0, x, 1.0, res, st);
    }
    if (!r) r = mbla_csc_gemv_t(A, 1.0, res, 0.0, c, st);
    if (!r) r = spqr_normal_solve(qr, c, c, st, fn);
    for (int j = 0; !r && j < qr->n; j++) x[j] += c[j];
    mbl_free(c);
    mbl_free(res);
    return r;
}

#else /* !MBLIN_WITH_GPL */

struct mbla_chol {
    int unused;
};

int mbla_chol_new(const mbla_csc *A, char uplo, mbla_chol **out, mbl_status *st)
{
    (void)A;
    (void)uplo;
    if (out) *out = NULL;
    return mbl_error(st, MBL_ELIB, "mbla_chol_new: " GPL_OFF_MSG);
}

int mbla_chol_refactor(mbla_chol *c, const mbla_csc *A, mbl_status *st)
{
    (void)c;
    (void)A;
    return mbl_error(st, MBL_ELIB, "mbla_chol_refactor: " GPL_OFF_MSG);
}

int mbla_chol_solve(mbla_chol *c, int nrhs, double *B, int ldb, mbl_status *st)
{
    (void)c;
    (void)nrhs;
    (void)B;
    (void)ldb;
    return mbl_error(st, MBL_ELIB, "mbla_chol_solve: " GPL_OFF_MSG);
}

void mbla_chol_free(mbla_chol *c) { (void)c; }

int mbla_chol_lnz(const mbla_csc *A, char uplo, double *lnz, mbl_status *st)
{
    (void)A;
    (void)uplo;
    if (lnz) *lnz = -1;
    return mbl_error(st, MBL_ELIB, "mbla_chol_lnz: " GPL_OFF_MSG);
}

int mbla_spqr_rank(const mbla_csc *A, double tol, int *rank, double *tol_used, mbl_status *st)
{
    (void)A;
    (void)tol;
    (void)rank;
    (void)tol_used;
    return mbl_error(st, MBL_ELIB, "mbla_spqr_rank: " GPL_OFF_MSG);
}

int mbla_spqr_nullspace(const mbla_csc *A, double tol, double **N, int *nnull, int *rank,
                        mbl_status *st)
{
    (void)A;
    (void)tol;
    (void)rank;
    if (N) *N = NULL;
    if (nnull) *nnull = 0;
    return mbl_error(st, MBL_ELIB, "mbla_spqr_nullspace: " GPL_OFF_MSG);
}

int mbla_spqr_solve(const mbla_csc *A, double tol, int nrhs, const double *B, int ldb,
                    double *X, int ldx, mbl_status *st)
{
    (void)A;
    (void)tol;
    (void)nrhs;
    (void)B;
    (void)ldb;
    (void)X;
    (void)ldx;
    return mbl_error(st, MBL_ELIB, "mbla_spqr_solve: " GPL_OFF_MSG);
}

struct la_spqr {
    int unused;
};

int la_spqr_new(const mbla_csc *A, la_spqr **out, mbl_status *st)
{
    (void)A;
    if (out) *out = NULL;
    return mbl_error(st, MBL_ELIB, "la_spqr_new: " GPL_OFF_MSG);
}

int la_spqr_same_pattern(const la_spqr *qr, const mbla_csc *A)
{
    (void)qr;
    (void)A;
    return 0;
}

int la_spqr_refactor(la_spqr *qr, const mbla_csc *A, mbl_status *st)
{
    (void)qr;
    (void)A;
    return mbl_error(st, MBL_ELIB, "la_spqr_refactor: " GPL_OFF_MSG);
}

int la_spqr_rank_of(const la_spqr *qr)
{
    (void)qr;
    return 0;
}

int la_spqr_lstsq(la_spqr *qr, const mbla_csc *A, const double *b, double *x, mbl_status *st)
{
    (void)qr;
    (void)A;
    (void)b;
    (void)x;
    return mbl_error(st, MBL_ELIB, "la_spqr_lstsq: " GPL_OFF_MSG);
}

void la_spqr_free(la_spqr *qr) { (void)qr; }

#endif
