/* Dense eigenproblems by LAPACK through LAPACKE's *_work variants (every work array allocated here
 * through mbl_malloc): the nonsymmetric eigenproblem (dgeev, dgeevx), the generalized one by QZ
 * (dggev, dggevx) with the classification of its eigenvalues and their backward errors, and the
 * symmetric-definite one (dsygvd). The linear systems and factorizations are dense.c's. */
#include "la/la_internal.h"

#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>

int mbla_eig(int n, const double *A, int lda, double *wr, double *wi, double *VL, int ldvl,
             double *VR, int ldvr, mbl_status *st)
{
    const char *fn = "mbla_eig";
    int r = la_check_mat(st, fn, "A", n, n, A, lda);
    if (r) return r;
    if (n > 0 && (!wr || !wi)) return mbl_error(st, MBL_EARG, "%s: wr or wi is NULL", fn);
    if ((r = la_check_finite(st, fn, "A", n, n, A, lda))) return r;
    if (VL && (r = la_check_mat(st, fn, "VL", n, n, VL, ldvl))) return r;
    if (VR && (r = la_check_mat(st, fn, "VR", n, n, VR, ldvr))) return r;
    if (n == 0) return 0;
    double *C = la_alloc_dmat(n, n);
    if (!C) return mbl_error(st, MBL_ENOMEM, "%s: out of memory (n = %d)", fn, n);
    la_copy_dmat(n, n, A, lda, C, n);
    char jl = VL ? 'V' : 'N', jr = VR ? 'V' : 'N';
    double dummy = 0.0, wq = 0.0;
    double *vl = VL ? VL : &dummy, *vr = VR ? VR : &dummy;
    int ll = VL ? ldvl : 1, lr = VR ? ldvr : 1;
    int info = LAPACKE_dgeev_work(LAPACK_COL_MAJOR, jl, jr, n, C, n, wr, wi, vl, ll, vr, lr, &wq, -1);
    double *work = NULL;
    if (info == 0) {
        int lwork = la_query_lwork(wq, 4 * n);
        work = mbl_alloc_array((size_t)lwork, sizeof *work);
        if (!work) {
            mbl_free(C);
            return mbl_error(st, MBL_ENOMEM, "%s: out of memory (workspace %d)", fn, lwork);
        }
        info = LAPACKE_dgeev_work(LAPACK_COL_MAJOR, jl, jr, n, C, n, wr, wi, vl, ll, vr, lr, work,
                                  lwork);
    }
    mbl_free(work);
    mbl_free(C);
    if (info < 0) return la_lapacke_error(st, "mbla_eig (dgeev)", info);
    if (info > 0)
        return mbl_error(st, MBL_ENOCONV, "%s: QR algorithm failed (eigenvalues %d.. not computed)",
                         fn, info);
    return 0;
}

int mbla_eig_balance(char balanc, int n, const double *A, int lda, double *wr, double *wi, double *VR, int ldvr,
                     mbl_status *st)
{
    const char *fn = "mbla_eig_balance";
    if (balanc != 'N' && balanc != 'P' && balanc != 'S' && balanc != 'B')
        return mbl_error(st, MBL_EARG, "%s: balanc must be 'N', 'P', 'S' or 'B'", fn);
    int r = la_check_mat(st, fn, "A", n, n, A, lda);
    if (r) return r;
    if (n > 0 && (!wr || !wi)) return mbl_error(st, MBL_EARG, "%s: wr or wi is NULL", fn);
    if ((r = la_check_finite(st, fn, "A", n, n, A, lda))) return r;
    if (VR && (r = la_check_mat(st, fn, "VR", n, n, VR, ldvr))) return r;
    if (n == 0) return 0;
    double *C = la_alloc_dmat(n, n), *scale = mbl_alloc_array((size_t)n, sizeof *scale);
    if (!C || !scale) {
        mbl_free(C), mbl_free(scale);
        return mbl_error(st, MBL_ENOMEM, "%s: out of memory (n = %d)", fn, n);
    }
    la_copy_dmat(n, n, A, lda, C, n);
    char jr = VR ? 'V' : 'N';
    double dummy = 0.0, wq = 0.0, abnrm = 0.0;
    double *vr = VR ? VR : &dummy;
    int lr = VR ? ldvr : 1, ilo = 0, ihi = 0;
    /* sense 'N': no condition numbers, rconde, rcondv and iwork are not referenced */
    int info = LAPACKE_dgeevx_work(LAPACK_COL_MAJOR, balanc, 'N', jr, 'N', n, C, n, wr, wi, &dummy, 1, vr, lr, &ilo,
                                   &ihi, scale, &abnrm, &dummy, &dummy, &wq, -1, NULL);
    double *work = NULL;
    if (info == 0) {
        int lwork = la_query_lwork(wq, 3 * n);
        work = mbl_alloc_array((size_t)lwork, sizeof *work);
        if (!work) {
            mbl_free(C), mbl_free(scale);
            return mbl_error(st, MBL_ENOMEM, "%s: out of memory (workspace %d)", fn, lwork);
        }
        info = LAPACKE_dgeevx_work(LAPACK_COL_MAJOR, balanc, 'N', jr, 'N', n, C, n, wr, wi, &dummy, 1, vr, lr, &ilo,
                                   &ihi, scale, &abnrm, &dummy, &dummy, work, lwork, NULL);
    }
    mbl_free(work), mbl_free(C), mbl_free(scale);
    if (info < 0) return la_lapacke_error(st, "mbla_eig_balance (dgeevx)", info);
    if (info > 0)
        return mbl_error(st, MBL_ENOCONV, "%s: QR algorithm failed (eigenvalues %d.. not computed)", fn, info);
    return 0;
}

/* The arguments of a generalized eigenproblem (A, B) with its outputs (dggev, dggevx). */
static int check_pencil(mbl_status *st, const char *fn, int n, const double *A, int lda, const double *B, int ldb,
                        const double *alphar, const double *alphai, const double *beta, const double *VL, int ldvl,
                        const double *VR, int ldvr)
{
    int r;
    if ((r = la_check_mat(st, fn, "A", n, n, A, lda)) || (r = la_check_mat(st, fn, "B", n, n, B, ldb))) return r;
    if (n > 0 && (!alphar || !alphai || !beta))
        return mbl_error(st, MBL_EARG, "%s: alphar, alphai or beta is NULL", fn);
    if ((r = la_check_finite(st, fn, "A", n, n, A, lda)) || (r = la_check_finite(st, fn, "B", n, n, B, ldb))) return r;
    if (VL && (r = la_check_mat(st, fn, "VL", n, n, VL, ldvl))) return r;
    if (VR && (r = la_check_mat(st, fn, "VR", n, n, VR, ldvr))) return r;
    return 0;
}

int mbla_ggev(int n, const double *A, int lda, const double *B, int ldb, double *alphar,
              double *alphai, double *beta, double *VL, int ldvl, double *VR, int ldvr,
              mbl_status *st)
{
    const char *fn = "mbla_ggev";
    int r = check_pencil(st, fn, n, A, lda, B, ldb, alphar, alphai, beta, VL, ldvl, VR, ldvr);
    if (r) return r;
    if (n == 0) return 0;
    double *CA = la_alloc_dmat(n, n), *CB = la_alloc_dmat(n, n);
    if (!CA || !CB) {
        mbl_free(CA);
        mbl_free(CB);
        return mbl_error(st, MBL_ENOMEM, "%s: out of memory (n = %d)", fn, n);
    }
    la_copy_dmat(n, n, A, lda, CA, n);
    la_copy_dmat(n, n, B, ldb, CB, n);
    char jl = VL ? 'V' : 'N', jr = VR ? 'V' : 'N';
    double dummy = 0.0, wq = 0.0;
    double *vl = VL ? VL : &dummy, *vr = VR ? VR : &dummy;
    int ll = VL ? ldvl : 1, lr = VR ? ldvr : 1;
    int info = LAPACKE_dggev_work(LAPACK_COL_MAJOR, jl, jr, n, CA, n, CB, n, alphar, alphai, beta,
                                  vl, ll, vr, lr, &wq, -1);
    double *work = NULL;
    if (info == 0) {
        int lwork = la_query_lwork(wq, 8 * n);
        work = mbl_alloc_array((size_t)lwork, sizeof *work);
        if (!work) {
            mbl_free(CA);
            mbl_free(CB);
            return mbl_error(st, MBL_ENOMEM, "%s: out of memory (workspace %d)", fn, lwork);
        }
        info = LAPACKE_dggev_work(LAPACK_COL_MAJOR, jl, jr, n, CA, n, CB, n, alphar, alphai, beta,
                                  vl, ll, vr, lr, work, lwork);
    }
    mbl_free(work);
    mbl_free(CA);
    mbl_free(CB);
    if (info < 0) return la_lapacke_error(st, "mbla_ggev (dggev)", info);
    if (info > 0)
        return mbl_error(st, MBL_ENOCONV, "%s: QZ iteration failed (dggev info %d)", fn, info);
    return 0;
}

double mbla_norm_fro(int m, int n, const double *A, int lda)
{
    if (m <= 0 || n <= 0 || !A) return 0.0;
    return LAPACKE_dlange_work(LAPACK_COL_MAJOR, 'F', m, n, A, lda, NULL);
}

typedef struct gev_cand {
    double chord; /* (|beta| / ||B||) / (|alpha| / ||A||): small is near infinity */
    int j;
} gev_cand;

static int cmp_gev_cand(const void *pa, const void *pb)
{
    const gev_cand *a = pa, *b = pb;
    if (a->chord != b->chord) return a->chord < b->chord ? -1 : 1;
    return a->j - b->j;
}

int mbla_gev_classify(int n, const double *A, int lda, const double *B, int ldb, const double *alphar,
                      const double *alphai, const double *beta, double *re, double *im, int *kind, int *nfinite,
                      int *rank_b, mbl_status *st)
{
    const char *fn = "mbla_gev_classify";
    int r;
    if ((r = la_check_mat(st, fn, "A", n, n, A, lda)) || (r = la_check_mat(st, fn, "B", n, n, B, ldb))) return r;
    if (n > 0 && (!alphar || !alphai || !beta || !re || !im || !kind))
        return mbl_error(st, MBL_EARG, "%s: an eigenvalue array is NULL", fn);
    if (nfinite) *nfinite = 0;
    if (rank_b) *rank_b = 0;
    if (n == 0) return 0;
    double nA = mbla_norm_fro(n, n, A, lda), nB = mbla_norm_fro(n, n, B, ldb), tol = MBLA_GEV_TOL_FACTOR * n * DBL_EPSILON;
    /* rank of B within tol ||B|| (singular values against the Frobenius norm) */
    double *Bc = la_alloc_dmat(n, n), *sv = mbl_alloc_array((size_t)n, sizeof *sv);
    gev_cand *cand = mbl_alloc_array((size_t)n, sizeof *cand);
    if (!Bc || !sv || !cand) {
        mbl_free(Bc), mbl_free(sv), mbl_free(cand);
        return mbl_error(st, MBL_ENOMEM, "%s: out of memory (n = %d)", fn, n);
    }
    la_copy_dmat(n, n, B, ldb, Bc, n);
    r = mbla_svd(n, n, Bc, n, 'S', sv, NULL, 1, NULL, 1, st);
    int rank = 0;
    while (!r && rank < n && sv[rank] > tol * nB) rank++;
    int ninf = 0, nc = 0;
    for (int j = 0; !r && j < n; j++) {
        double am = hypot(alphar[j], alphai[j]), bm = fabs(beta[j]);
        int small_a = !(am > tol * nA), small_b = !(bm > tol * nB);
        kind[j] = small_a && small_b ? MBLA_EIG_UNDETERMINED : small_b ? MBLA_EIG_INFINITE : MBLA_EIG_FINITE;
        if (kind[j] != MBLA_EIG_FINITE) ninf++;
        else cand[nc].chord = (bm / nB) / (am / (nA > 0 ? nA : 1.0)), cand[nc++].j = j;
    }
    /* at least n - rank(B) infinite: the finite-looking ones nearest infinity, a conjugate pair
     * together */
    if (!r && ninf < n - rank) {
        qsort(cand, (size_t)nc, sizeof *cand, cmp_gev_cand);
        for (int c = 0; c < nc && ninf < n - rank; c++) {
            int j = cand[c].j;
            if (kind[j] != MBLA_EIG_FINITE) continue;
            kind[j] = MBLA_EIG_INFINITE, ninf++;
            int p = alphai[j] > 0 ? j + 1 : alphai[j] < 0 ? j - 1 : -1;
            if (p >= 0 && p < n && kind[p] == MBLA_EIG_FINITE) kind[p] = MBLA_EIG_INFINITE, ninf++;
        }
    }
    for (int j = 0; !r && j + 1 < n; j++) /* a conjugate pair is of one kind: the farther from finite */
        if (alphai[j] > 0 && alphai[j + 1] < 0) {
            int k = kind[j] > kind[j + 1] ? kind[j] : kind[j + 1];
            kind[j] = kind[j + 1] = k;
            j++;
        }
    for (int j = 0; !r && j < n; j++) {
        if (kind[j] != MBLA_EIG_FINITE) {
            re[j] = INFINITY, im[j] = 0.0;
            continue;
        }
        if (alphai[j] < 0 && j > 0 && alphai[j - 1] > 0 && kind[j - 1] == MBLA_EIG_FINITE) {
            re[j] = re[j - 1], im[j] = -im[j - 1]; /* the pair's second: the exact conjugate */
            continue;
        }
        re[j] = alphar[j] / beta[j], im[j] = alphai[j] / beta[j];
        if (!isfinite(re[j]) || !isfinite(im[j])) kind[j] = MBLA_EIG_INFINITE, re[j] = INFINITY, im[j] = 0.0;
    }
    int nf = 0, nund = 0;
    for (int j = 0; !r && j < n; j++) nf += kind[j] == MBLA_EIG_FINITE, nund += kind[j] == MBLA_EIG_UNDETERMINED;
    if (nfinite) *nfinite = nf;
    if (rank_b) *rank_b = rank;
    mbl_free(Bc), mbl_free(sv), mbl_free(cand);
    if (!r && nund)
        r = mbl_error(st, MBL_ESINGULAR,
                      "the pencil is singular (%d eigenvalues undetermined: alpha and beta both at rounding level "
                      "of the pencil's norms)",
                      nund);
    return r;
}

int mbla_gev_berr(int n, const double *A, int lda, const double *B, int ldb, const double *re, const double *im,
                  const double *alphai, const double *VR, int ldvr, double *berr, mbl_status *st)
{
    const char *fn = "mbla_gev_berr";
    int r;
    if ((r = la_check_mat(st, fn, "A", n, n, A, lda)) || (r = la_check_mat(st, fn, "B", n, n, B, ldb)) ||
        (r = la_check_mat(st, fn, "VR", n, n, VR, ldvr)))
        return r;
    if (n > 0 && (!re || !im || !alphai || !berr)) return mbl_error(st, MBL_EARG, "%s: an array is NULL", fn);
    if (n == 0) return 0;
    /* A VR and B VR by two products (LAPACK's packing: a pair's real and imaginary parts are
     * columns j, j + 1), then each residual (A - s B)(xr + i xi) from their columns */
    double *AV = la_alloc_dmat(n, n), *BV = la_alloc_dmat(n, n);
    if (!AV || !BV) {
        mbl_free(AV), mbl_free(BV);
        return mbl_error(st, MBL_ENOMEM, "%s: out of memory (n = %d)", fn, n);
    }
    r = mbla_gemm('N', 'N', n, n, n, 1.0, A, lda, VR, ldvr, 0.0, AV, n, st);
    if (!r) r = mbla_gemm('N', 'N', n, n, n, 1.0, B, ldb, VR, ldvr, 0.0, BV, n, st);
    double nA = mbla_norm_fro(n, n, A, lda), nB = mbla_norm_fro(n, n, B, ldb);
    for (int j = 0; !r && j < n; j++) {
        double sr = re[j], si = im[j];
        if (!isfinite(sr) || !isfinite(si)) {
            berr[j] = INFINITY;
            continue;
        }
        int c0 = j, c1 = -1; /* x = V(:, c0) + i sg V(:, c1) */
        double sg = 1.0;
        if (alphai[j] > 0.0 && j + 1 < n) c1 = j + 1;
        else if (alphai[j] < 0.0 && j > 0) c0 = j - 1, c1 = j, sg = -1.0;
        const double *ar_ = AV + (size_t)c0 * n, *br_ = BV + (size_t)c0 * n, *xr = VR + (size_t)c0 * ldvr;
        const double *ai_ = c1 >= 0 ? AV + (size_t)c1 * n : NULL, *bi_ = c1 >= 0 ? BV + (size_t)c1 * n : NULL;
        const double *xi = c1 >= 0 ? VR + (size_t)c1 * ldvr : NULL;
        double res = 0.0, xn = 0.0;
        for (int i = 0; i < n; i++) {
            double axr = ar_[i], axi = ai_ ? sg * ai_[i] : 0.0, bxr = br_[i], bxi = bi_ ? sg * bi_[i] : 0.0;
            double rr = axr - (sr * bxr - si * bxi), ri = axi - (sr * bxi + si * bxr);
            res += rr * rr + ri * ri;
            xn += xr[i] * xr[i] + (xi ? xi[i] * xi[i] : 0.0);
        }
        double den = (nA + hypot(sr, si) * nB) * sqrt(xn);
        berr[j] = den > 0 ? sqrt(res) / den : INFINITY;
    }
    mbl_free(AV), mbl_free(BV);
    return r;
}

int mbla_gev_rounding(int n, const double *A, int lda, const double *B, int ldb, const double *re, const double *im,
                      const int *kind, double *err, mbl_status *st)
{
    const char *fn = "mbla_gev_rounding";
    int r;
    if ((r = la_check_mat(st, fn, "A", n, n, A, lda)) || (r = la_check_mat(st, fn, "B", n, n, B, ldb))) return r;
    if (n > 0 && (!re || !im || !kind || !err)) return mbl_error(st, MBL_EARG, "%s: an array is NULL", fn);
    if (n == 0) return 0;
    size_t nn = (size_t)n * n;
    double *At = mbl_alloc_array(nn, sizeof *At), *Bt = mbl_alloc_array(nn, sizeof *Bt);
    double *w = mbl_alloc_array(5 * (size_t)n, sizeof *w);
    int *k2 = mbl_alloc_array((size_t)n, sizeof *k2);
    if (!At || !Bt || !w || !k2) {
        mbl_free(At), mbl_free(Bt), mbl_free(w), mbl_free(k2);
        return mbl_error(st, MBL_ENOMEM, "%s: out of memory (n = %d)", fn, n);
    }
    double *br = w, *bi = w + n, *bb = w + 2 * n, *sr = w + 3 * n, *si = w + 4 * n;
    for (int j = 0; j < n; j++) err[j] = kind[j] == MBLA_EIG_FINITE ? 0.0 : INFINITY;
    for (int smp = 0; !r && smp < 3; smp++) {
        int tr = smp != 1, rev = smp != 0;
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++) {
                int ra = rev ? n - 1 - a : a, rb = rev ? n - 1 - b : b;
                size_t ia = tr ? (size_t)b + (size_t)a * lda : (size_t)a + (size_t)b * lda;
                size_t ib = tr ? (size_t)b + (size_t)a * ldb : (size_t)a + (size_t)b * ldb;
                At[ra + (size_t)rb * n] = A[ia], Bt[ra + (size_t)rb * n] = B[ib];
            }
        r = mbla_ggev(n, At, n, Bt, n, br, bi, bb, NULL, 1, NULL, 1, st);
        if (!r) r = mbla_gev_classify(n, At, n, Bt, n, br, bi, bb, sr, si, k2, NULL, NULL, st);
        for (int j = 0; !r && j < n; j++) {
            if (kind[j] != MBLA_EIG_FINITE) continue;
            double d = INFINITY;
            for (int i = 0; i < n; i++)
                if (k2[i] == MBLA_EIG_FINITE) d = fmin(d, hypot(re[j] - sr[i], im[j] - si[i]));
            err[j] = fmax(err[j], d);
        }
    }
    mbl_free(At), mbl_free(Bt), mbl_free(w), mbl_free(k2);
    return r;
}

int mbla_ggevx(char balanc, int n, const double *A, int lda, const double *B, int ldb,
               double *alphar, double *alphai, double *beta, double *VL, int ldvl, double *VR,
               int ldvr, double *abnrm, double *bbnrm, mbl_status *st)
{
    const char *fn = "mbla_ggevx";
    int r;
    if (balanc != 'N' && balanc != 'P' && balanc != 'S' && balanc != 'B')
        return mbl_error(st, MBL_EARG, "%s: balanc must be 'N', 'P', 'S' or 'B'", fn);
    if ((r = check_pencil(st, fn, n, A, lda, B, ldb, alphar, alphai, beta, VL, ldvl, VR, ldvr))) return r;
    if (abnrm) *abnrm = 0.0;
    if (bbnrm) *bbnrm = 0.0;
    if (n == 0) return 0;
    double *CA = la_alloc_dmat(n, n), *CB = la_alloc_dmat(n, n);
    double *lscale = mbl_alloc_array((size_t)n, sizeof *lscale), *rscale = mbl_alloc_array((size_t)n, sizeof *rscale);
    int *iwork = mbl_alloc_array((size_t)n + 6, sizeof *iwork);
    lapack_logical *bwork = mbl_alloc_array((size_t)n, sizeof *bwork);
    double *work = NULL;
    r = 0;
    if (!CA || !CB || !lscale || !rscale || !iwork || !bwork) {
        r = mbl_error(st, MBL_ENOMEM, "%s: out of memory (n = %d)", fn, n);
        goto done;
    }
    la_copy_dmat(n, n, A, lda, CA, n);
    la_copy_dmat(n, n, B, ldb, CB, n);
    char jl = VL ? 'V' : 'N', jr = VR ? 'V' : 'N';
    double dummy = 0.0, wq = 0.0, an = 0.0, bn = 0.0, rce = 0.0, rcv = 0.0;
    double *vl = VL ? VL : &dummy, *vr = VR ? VR : &dummy;
    int ll = VL ? ldvl : 1, lr = VR ? ldvr : 1, ilo = 0, ihi = 0;
    int info = LAPACKE_dggevx_work(LAPACK_COL_MAJOR, balanc, jl, jr, 'N', n, CA, n, CB, n, alphar, alphai,
                                   beta, vl, ll, vr, lr, &ilo, &ihi, lscale, rscale, &an, &bn, &rce, &rcv,
                                   &wq, -1, iwork, bwork);
    if (info == 0) {
        int lwork = la_query_lwork(wq, 6 * n);
        work = mbl_alloc_array((size_t)lwork, sizeof *work);
        if (!work) {
            r = mbl_error(st, MBL_ENOMEM, "%s: out of memory (workspace %d)", fn, lwork);
            goto done;
        }
        info = LAPACKE_dggevx_work(LAPACK_COL_MAJOR, balanc, jl, jr, 'N', n, CA, n, CB, n, alphar, alphai,
                                   beta, vl, ll, vr, lr, &ilo, &ihi, lscale, rscale, &an, &bn, &rce, &rcv,
                                   work, lwork, iwork, bwork);
    }
    if (info < 0) r = la_lapacke_error(st, "mbla_ggevx (dggevx)", info);
    else if (info > 0) r = mbl_error(st, MBL_ENOCONV, "%s: QZ iteration failed (dggevx info %d)", fn, info);
    else {
        if (abnrm) *abnrm = an;
        if (bbnrm) *bbnrm = bn;
    }
done:
    mbl_free(CA), mbl_free(CB), mbl_free(lscale), mbl_free(rscale), mbl_free(iwork), mbl_free(bwork),
        mbl_free(work);
    return r;
}

int mbla_sygvd(int n, const double *A, int lda, const double *B, int ldb, double *w,
               double *Z, int ldz, mbl_status *st)
{
    const char *fn = "mbla_sygvd";
    int r;
    if ((r = la_check_mat(st, fn, "A", n, n, A, lda)) || (r = la_check_mat(st, fn, "B", n, n, B, ldb)))
        return r;
    if (n > 0 && !w) return mbl_error(st, MBL_EARG, "%s: w is NULL", fn);
    if ((r = la_check_finite(st, fn, "A", n, n, A, lda)) || (r = la_check_finite(st, fn, "B", n, n, B, ldb)))
        return r;
    if (Z && (r = la_check_mat(st, fn, "Z", n, n, Z, ldz))) return r;
    if (n == 0) return 0;
    double *CA = la_alloc_dmat(n, n), *CB = la_alloc_dmat(n, n);
    double *work = NULL;
    int *iwork = NULL;
    if (!CA || !CB) {
        r = mbl_error(st, MBL_ENOMEM, "%s: out of memory (n = %d)", fn, n);
        goto done;
    }
    la_copy_dmat(n, n, A, lda, CA, n);
    la_copy_dmat(n, n, B, ldb, CB, n);
    char jobz = Z ? 'V' : 'N';
    double wq = 0.0;
    int iwq = 0;
    int info = LAPACKE_dsygvd_work(LAPACK_COL_MAJOR, 1, jobz, 'U', n, CA, n, CB, n, w, &wq, -1,
                                   &iwq, -1);
    if (info == 0) {
        int lwork = la_query_lwork(wq, 2 * n + 1), liwork = iwq > 1 ? iwq : 1;
        work = mbl_alloc_array((size_t)lwork, sizeof *work);
        iwork = mbl_alloc_array((size_t)liwork, sizeof *iwork);
        if (!work || !iwork) {
            r = mbl_error(st, MBL_ENOMEM, "%s: out of memory (workspace)", fn);
            goto done;
        }
        info = LAPACKE_dsygvd_work(LAPACK_COL_MAJOR, 1, jobz, 'U', n, CA, n, CB, n, w, work, lwork,
                                   iwork, liwork);
    }
    if (info < 0) {
        r = la_lapacke_error(st, "mbla_sygvd (dsygvd)", info);
    } else if (info > n) {
        r = mbl_error(st, MBL_ESINGULAR, "%s: B is not positive definite (leading minor of order %d)",
                      fn, info - n);
    } else if (info > 0) {
        r = mbl_error(st, MBL_ENOCONV, "%s: dsygvd did not converge (info %d)", fn, info);
    } else if (Z) {
        la_copy_dmat(n, n, CA, n, Z, ldz);
    }
done:
    mbl_free(CA);
    mbl_free(CB);
    mbl_free(work);
    mbl_free(iwork);
    return r;
}
