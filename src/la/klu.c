/* Sparse LU by KLU (SuiteSparse; LGPL): real (klu_*) and complex (klu_z_*).
 *
 * KLU factors B = A Q, A with its columns permuted (B(:, i) = A(:, q[i])) to put a maximum
 * transversal found by Hopcroft-Karp (mbla_csc_maxmatch) on the diagonal. Since the row indices
 * of each column are sorted, KLU's own btf_maxtrans then finds that diagonal in its cheap pass
 * (column i's first unmatched row is i), in O(nnz), instead of a depth-first search whose cost
 * depended on the column order (O(n^1.6) on the mechanism four-bar). Its block triangular form
 * and fill-reducing orderings are unchanged. Solves permute: A x = b is B x' = b with
 * x[q[i]] = x'[i]; A^T y = c is B^T y = c' with c'[i] = c[q[i]].
 *
 * With opts->equilibrate, A is replaced by S = diag(r) A diag(c) (mbla_csc_equilibrate on |A|,
 * powers of 2): A x = b is S y = diag(r) b, x = diag(c) y; A^T y = b is S^T z = diag(c) b,
 * y = diag(r) z. */
#include "core/progress.h"
#include "la/klu_amd_memo.h"
#include "la/la_equilibrate.h"
#include "la/la_internal.h"

#include <amd.h>
#include <klu.h>
#include <math.h>
#include <string.h>

/* Defaults (documented in la.h and docs/linear-algebra.md). */
#define MBLA_KLU_PIVOT_TOL_DEFAULT 0.001 /* KLU's own default partial-pivoting threshold */
#define MBLA_KLU_REFACTOR_DROP_DEFAULT 1e-3
#define MBLA_KLU_PIVOT_TOL_TRY_DEFAULT 0.0 /* off: opt in per caller */
#define MBLA_KLU_RGROWTH_MIN 1e-6 /* accept the first attempt when growth <= 1e6 */
/* opts->saddle is taken only when the groups' order predicts nnz(L) <= this times nnz(A): the
 * N-loop four-bar's Newton matrix (chains of constraints grouped into coarse blocks) predicts 19
 * times and fills 5.5 times KLU's own order (1.69e6 against 3.1e5 entries at N = 10^4, whose
 * threshold pivoting does no harm there); the spatial beams and flexible pendulums it is made
 * for predict 0.3-1.2 times. */
#define MBLA_KLU_SADDLE_FILL_MAX 4.0
/* klu_analyze keeps the natural order inside BTF blocks of at most this many rows (its
 * analyze_worker) and orders larger ones by AMD or COLAMD */
#define KLU_NATURAL_BLOCK_MAX 3

struct mbla_klu {
    int n, nz, cplx;
    int *p, *i; /* copy of the analysed pattern */
    int *q;          /* column permutation: B(:, j) = A(:, q[j]); NULL: B = A */
    int *bp, *bi;    /* pattern of B (q != NULL) */
    int *bsrc;       /* position in A's arrays of each entry of B */
    int *uperm;      /* opts->saddle with pairs: the order given to KLU (klu_saddle.c) */
    double ulnz;     /* its nnz(L) estimate */
    double *bx;      /* values of B (nz, or 2 nz complex) */
    double *perm;    /* n doubles (2 n complex): a permuted right-hand side */
    int eq, eq_warm; /* equilibrate; er, ec hold factors of earlier values */
    double *er, *ec, *ework; /* row and column factors (n each), scratch (LA_EQUILIBRATE_WS) */
    double *eabs;    /* |A| (nz), equilibrated in place */
    double *sx;      /* the scaled values diag(er) A diag(ec) (nz, or 2 nz complex) */
    klu_common common;
    klu_symbolic *sym;
    klu_numeric *num;
    double rcond_ref; /* crude rcond of the last pivoting factorization */
    double refactor_drop;
    double pivot_tol, pivot_tol_try;
    int nfactor, nrefactor, nfallback;
    int solve_only; /* mbla_klu_solve_only: p, i, bp, bi, bsrc, bx, eabs, sx freed */
    int matched;    /* permute_to_matching found a perfect matching: B's diagonal is zero-free */
    int small;      /* the analysis from BTF's components alone (analyze) */
    int saddle_declined; /* opts->saddle's order declined for its fill (saddle_setup) */
};

void mbla_klu_opts_default(mbla_klu_opts *opts)
{
    if (!opts) return;
    opts->ordering = MBLA_ORDER_AMD;
    opts->btf = 1;
    opts->pivot_tol = MBLA_KLU_PIVOT_TOL_DEFAULT;
    opts->refactor_drop = MBLA_KLU_REFACTOR_DROP_DEFAULT;
    opts->pivot_tol_try = MBLA_KLU_PIVOT_TOL_TRY_DEFAULT;
    opts->equilibrate = 0;
    opts->saddle = 0;
    opts->saddle_cols = NULL;
}

void mbla_klu_free(mbla_klu *k)
{
    if (!k) return;
    if (k->num) {
        if (k->cplx) klu_z_free_numeric(&k->num, &k->common);
        else klu_free_numeric(&k->num, &k->common);
    }
    if (k->sym) klu_free_symbolic(&k->sym, &k->common);
    mbl_free(k->p);
    mbl_free(k->i);
    mbl_free(k->uperm);
    mbl_free(k->q), mbl_free(k->bp), mbl_free(k->bi), mbl_free(k->bsrc), mbl_free(k->bx), mbl_free(k->perm);
    mbl_free(k->er), mbl_free(k->ec), mbl_free(k->ework), mbl_free(k->eabs), mbl_free(k->sx);
    mbl_free(k);
}

void mbla_klu_solve_only(mbla_klu *k)
{
    if (!k) return;
    mbl_free(k->p), mbl_free(k->i), mbl_free(k->uperm);
    mbl_free(k->bp), mbl_free(k->bi), mbl_free(k->bsrc), mbl_free(k->bx);
    mbl_free(k->eabs), mbl_free(k->sx);
    k->p = k->i = k->uperm = k->bp = k->bi = k->bsrc = NULL;
    k->bx = k->eabs = k->sx = NULL;
    k->solve_only = 1;
}

void mbla_klu_stats(const mbla_klu *k, int *nfactor, int *nrefactor)
{
    if (nfactor) *nfactor = k ? k->nfactor : 0;
    if (nrefactor) *nrefactor = k ? k->nrefactor : 0;
}

int mbla_klu_nfallback(const mbla_klu *k)
{
    return k ? k->nfallback : 0;
}

void mbla_klu_factor_stats(const mbla_klu *k, double *lu_nnz, int *noffdiag)
{
    if (lu_nnz) *lu_nnz = k && k->num ? (double)k->num->lnz + (double)k->num->unz : 0.0;
    if (noffdiag) *noffdiag = k && k->num ? k->common.noffdiag : 0;
}

int mbla_klu_offdiag_nnz(const mbla_klu *k)
{
    return k && k->sym ? (int)k->sym->nzoff : 0;
}

/* Map a KLU status after a failed call. */
static int klu_fail(mbla_klu *k, mbl_status *st, const char *fn, const char *what)
{
    int s = k->common.status;
    if (s == KLU_SINGULAR) {
        int col = k->common.singular_col;
        if (col >= 0 && col < k->n && k->q) col = k->q[col];
        if (col >= 0 && col < k->n)
            return mbl_error(st, MBL_ESINGULAR, "%s: matrix is singular (KLU: zero pivot in column %d)",
                             fn, col);
        return mbl_error(st, MBL_ESINGULAR, "%s: matrix is singular (KLU %s)", fn, what);
    }
    if (s == KLU_OUT_OF_MEMORY) return mbl_error(st, MBL_ENOMEM, "%s: KLU %s: out of memory", fn, what);
    if (s == KLU_TOO_LARGE)
        return mbl_error(st, MBL_ENOMEM, "%s: KLU %s: problem too large for int indices", fn, what);
    return mbl_error(st, MBL_ELIB, "%s: KLU %s failed (status %d)", fn, what, s);
}

static void free_numeric(mbla_klu *k)
{
    if (!k->num) return;
    if (k->cplx) klu_z_free_numeric(&k->num, &k->common);
    else klu_free_numeric(&k->num, &k->common);
    k->num = NULL;
}

/* The equilibration factors er, ec of the values x (real or interleaved complex): those of
 * mbla_csc_equilibrate on |A|, warm from the previous factors after the first call. */
static void equilibrate(mbla_klu *k, const double *x)
{
    for (int t = 0; t < k->nz; t++) k->eabs[t] = k->cplx ? hypot(x[2 * t], x[2 * t + 1]) : fabs(x[t]);
    mbla_csc a = {k->n, k->n, k->p, k->i, k->eabs};
    la_csc_equilibrate_ws(&a, MBLA_EQUILIBRATE_MAXITER_DEFAULT, k->eq_warm, k->er, k->ec, k->ework);
    k->eq_warm = 1;
}

/* The pattern and values KLU sees: A's, or B = A Q's (values gathered into bx); with
 * equilibration, those of diag(er) A diag(ec) (into sx) with the current factors. */
static const int *kp(const mbla_klu *k) { return k->q ? k->bp : k->p; }
static const int *ki(const mbla_klu *k) { return k->q ? k->bi : k->i; }
static const double *kx(mbla_klu *k, const double *x)
{
    if (k->eq && x) {
        for (int j = 0; j < k->n; j++)
            for (int p = k->p[j]; p < k->p[j + 1]; p++) {
                double f = k->er[k->i[p]] * k->ec[j];
                if (k->cplx) k->sx[2 * p] = f * x[2 * p], k->sx[2 * p + 1] = f * x[2 * p + 1];
                else k->sx[p] = f * x[p];
            }
        x = k->sx;
    }
    if (!k->q || !x || x == k->bx) return x; /* bx: B's values gathered already */
    if (k->cplx)
        for (int t = 0; t < k->nz; t++) k->bx[2 * t] = x[2 * k->bsrc[t]], k->bx[2 * t + 1] = x[2 * k->bsrc[t] + 1];
    else
        for (int t = 0; t < k->nz; t++) k->bx[t] = x[k->bsrc[t]];
    return k->bx;
}

/* a pivoting factorization at the values x KLU sees (kx) with pivot threshold tol */
static void numeric_at(mbla_klu *k, const double *x, double tol)
{
    k->common.tol = tol;
    if (k->cplx) k->num = klu_z_factor((int *)kp(k), (int *)ki(k), (double *)x, k->sym, &k->common);
    else k->num = klu_factor((int *)kp(k), (int *)ki(k), (double *)x, k->sym, &k->common);
}

/* Fresh pivoting factorization at values x (real or interleaved complex). With pivot_tol_try
 * below pivot_tol, a first factorization with that small threshold keeps (nearly) the
 * fill-reducing order; it is kept only when its pivot growth is bounded (klu_rgrowth: the
 * reciprocal growth min_j max|A(:,j)| / max|U(:,j)| at least MBLA_KLU_RGROWTH_MIN, so the backward
 * error stays within about 1e6 eps |A|); otherwise (or when it hits a zero pivot) the matrix is
 * factored again with pivot_tol, so accuracy never degrades silently. */
static int factor(mbla_klu *k, const double *x, mbl_status *st, const char *fn)
{
    free_numeric(k);
    if (k->eq) equilibrate(k, x);
    x = kx(k, x);
    if (k->pivot_tol_try > 0.0 && k->pivot_tol_try < k->pivot_tol) {
        numeric_at(k, x, k->pivot_tol_try);
        if (k->num && k->common.status == KLU_OK) {
            int ok = k->cplx ? klu_z_rgrowth((int *)kp(k), (int *)ki(k), (double *)x, k->sym, k->num, &k->common)
                             : klu_rgrowth((int *)kp(k), (int *)ki(k), (double *)x, k->sym, k->num, &k->common);
            if (ok && k->common.rgrowth >= MBLA_KLU_RGROWTH_MIN) {
                ok = k->cplx ? klu_z_rcond(k->sym, k->num, &k->common)
                             : klu_rcond(k->sym, k->num, &k->common);
                k->rcond_ref = ok ? k->common.rcond : 0.0;
                k->nfactor++;
                return 0;
            }
        }
        if (k->common.status == KLU_OUT_OF_MEMORY) {
            int r = klu_fail(k, st, fn, "factor");
            free_numeric(k);
            return r;
        }
        free_numeric(k);
        k->nfallback++;
    }
    numeric_at(k, x, k->pivot_tol);
    if (!k->num || k->common.status != KLU_OK) {
        int r = klu_fail(k, st, fn, "factor");
        free_numeric(k);
        return r;
    }
    int ok = k->cplx ? klu_z_rcond(k->sym, k->num, &k->common) : klu_rcond(k->sym, k->num, &k->common);
    k->rcond_ref = ok ? k->common.rcond : 0.0;
    k->nfactor++;
    return 0;
}

static int check_opts(const mbla_klu_opts *o, mbl_status *st, const char *fn)
{
    if (o->ordering != MBLA_ORDER_AMD && o->ordering != MBLA_ORDER_COLAMD)
        return mbl_error(st, MBL_EARG, "%s: unknown ordering %d", fn, o->ordering);
    if (!(o->pivot_tol > 0.0 && o->pivot_tol <= 1.0))
        return mbl_error(st, MBL_EARG, "%s: pivot_tol %g outside (0, 1]", fn, o->pivot_tol);
    if (!(o->pivot_tol_try >= 0.0 && o->pivot_tol_try <= 1.0))
        return mbl_error(st, MBL_EARG, "%s: pivot_tol_try %g outside [0, 1]", fn, o->pivot_tol_try);
    if (!(o->refactor_drop >= 0.0 && o->refactor_drop <= 1.0))
        return mbl_error(st, MBL_EARG, "%s: refactor_drop %g outside [0, 1]", fn, o->refactor_drop);
    return 0;
}

static int permute_columns(mbla_klu *k, int *q, mbl_status *st);

/* KLU's user ordering (common.ordering 3, btf off: called once on the whole matrix): the saddle
 * order computed in create */
static int user_order(int n, int *Ap, int *Ai, int *perm, klu_common *common)
{
    (void)Ap, (void)Ai;
    const mbla_klu *k = common->user_data;
    memcpy(perm, k->uperm, (size_t)n * sizeof *perm);
    return (int)fmin(k->ulnz, 2e9);
}

/* opts->saddle: the saddle-point order (klu_saddle.c) as KLU's ordering, without BTF or the
 * transversal, on A or on B = A Q with Q = opts->saddle_cols (read in place; B formed only where
 * the order is taken); a matrix whose every column has a diagonal entry keeps the default path. */
static int saddle_setup(mbla_klu *k, const mbla_klu_opts *o, const double *x, mbl_status *st)
{
    int n = k->n, npairs = 0, r = 0;
    int *q = NULL;
    if (o->saddle_cols) {
        int *seen = mbl_calloc((size_t)n + 1, sizeof *seen);
        q = mbl_alloc_array((size_t)n + 1, sizeof *q);
        if (!q || !seen) r = mbl_error(st, MBL_ENOMEM, "mbla_klu: out of memory (n = %d)", n);
        for (int j = 0; !r && j < n; j++) {
            int c = o->saddle_cols[j];
            if (c < 0 || c >= n || seen[c]++) r = mbl_error(st, MBL_EARG, "mbla_klu: saddle_cols is not a permutation");
            else q[j] = c;
        }
        mbl_free(seen);
        if (r) {
            mbl_free(q);
            return r;
        }
    }
    k->uperm = mbl_alloc_array((size_t)n + 1, sizeof *k->uperm);
    if (!k->uperm) r = mbl_error(st, MBL_ENOMEM, "mbla_klu: out of memory (n = %d)", n);
    double lnz_max = MBLA_KLU_SADDLE_FILL_MAX * (double)k->nz;
    if (!r) r = la_klu_saddle_order(n, k->p, k->i, x, k->cplx, q, lnz_max, k->uperm, &k->ulnz, &npairs, st);
    if (!r && k->ulnz > lnz_max) npairs = 0, k->saddle_declined = 1; /* KLU's own order, on A itself */
    if (r || npairs == 0) {
        mbl_free(k->uperm), mbl_free(q);
        k->uperm = NULL;
        return r;
    }
    if (q && (r = permute_columns(k, q, st))) return r; /* q is k's now */
    k->common.btf = 0;
    k->common.ordering = 3;
    k->common.user_order = user_order;
    k->common.user_data = k;
    return 0;
}

/* B = A Q for the column permutation q (taken over by k): B's pattern and its entries' positions
 * in A. */
static int permute_columns(mbla_klu *k, int *q, mbl_status *st)
{
    int n = k->n, nz = k->nz;
    k->q = q;
    k->bp = mbl_alloc_array((size_t)n + 1, sizeof *k->bp);
    k->bi = mbl_alloc_array((size_t)nz + 1, sizeof *k->bi);
    k->bsrc = mbl_alloc_array((size_t)nz + 1, sizeof *k->bsrc);
    k->bx = mbl_alloc_array((size_t)nz * (k->cplx ? 2 : 1) + 1, sizeof *k->bx);
    k->perm = mbl_alloc_array((size_t)n * (k->cplx ? 2 : 1) + 1, sizeof *k->perm);
    if (!k->bp || !k->bi || !k->bsrc || !k->bx || !k->perm)
        return mbl_error(st, MBL_ENOMEM, "mbla_klu: out of memory (n = %d, nnz = %d)", n, nz);
    int t = 0;
    k->bp[0] = 0;
    for (int j = 0; j < n; j++) {
        int c = k->q[j];
        for (int p = k->p[c]; p < k->p[c + 1]; p++) k->bi[t] = k->i[p], k->bsrc[t++] = p;
        k->bp[j + 1] = t;
    }
    return 0;
}

/* With a perfect maximum transversal (Hopcroft-Karp), the column permutation q that puts it on
 * the diagonal and B's pattern; a structurally singular A keeps q = NULL (KLU reports it). */
static int permute_to_matching(mbla_klu *k, const mbla_csc *A, mbl_status *st)
{
    int n = k->n, nm = 0;
    int *rm = mbl_alloc_array((size_t)n + 1, sizeof *rm);
    if (!rm) return mbl_error(st, MBL_ENOMEM, "mbla_klu: out of memory (n = %d)", n);
    int r = mbla_csc_maxmatch(A, rm, &nm, st);
    if (r || nm < n) {
        mbl_free(rm);
        return r;
    }
    k->matched = 1;
    int ident = 1;
    for (int i = 0; i < n && ident; i++) ident = rm[i] == i;
    if (ident) { /* already a zero-free diagonal */
        mbl_free(rm);
        return 0;
    }
    return permute_columns(k, rm, st);
}

/* The argument checks of a matrix to factor (values x): 0 or the error. */
static int check_matrix(const mbla_csc *A, const double *x, mbl_status *st, const char *fn)
{
    if (!A) return mbl_error(st, MBL_EARG, "%s: A is NULL", fn);
    if (A->m != A->n || A->n < 0)
        return mbl_error(st, MBL_EDIM, "%s: matrix must be square, got %d x %d", fn, A->m, A->n);
    if (!A->p || (A->p[A->n] > 0 && (!A->i || !x)))
        return mbl_error(st, MBL_EARG, "%s: matrix arrays are NULL", fn);
    return 0;
}

/* A factorization of order n with nz entries and the options o, nothing factored yet (KLU's
 * settings made); NULL when out of memory. */
static mbla_klu *klu_alloc(int n, int nz, int cplx, const mbla_klu_opts *o)
{
    mbla_klu *k = mbl_calloc(1, sizeof *k);
    if (!k) return NULL;
    k->n = n;
    k->nz = nz;
    k->cplx = cplx;
    k->refactor_drop = o->refactor_drop;
    k->pivot_tol = o->pivot_tol;
    k->pivot_tol_try = o->pivot_tol_try;
    k->eq = o->equilibrate != 0;
    klu_defaults(&k->common);
    k->common.ordering = o->ordering;
    k->common.btf = o->btf ? 1 : 0;
    k->common.tol = o->pivot_tol;
    k->common.halt_if_singular = 1;
    return k;
}

/* KLU's analysis of the pattern it sees (kp, ki). small: the caller expects the block triangular
 * form in blocks of at most KLU_NATURAL_BLOCK_MAX rows. On B with a zero-free diagonal
 * (permute_to_matching), klu_analyze's maximum transversal is the identity (its cheap pass takes
 * each column's first unmatched row: the diagonal, rows sorted), and blocks that small keep their
 * natural order; klu_analyze_given without orders (BTF's strongly connected components alone)
 * then makes the same P, Q and blocks, without the transversal and the blocks' copies. Kept where
 * small and every block is that small (the factors of klu_analyze's analysis, bit for bit);
 * otherwise (with AMD, small or not) its larger blocks are ordered by AMD as klu_analyze orders
 * them (la_amd_memo_blocks), or, without a matching, klu_analyze with its blocks' AMD orders
 * remembered by pattern (klu_amd_memo.c). */
static klu_symbolic *analyze(mbla_klu *k, int small)
{
    int amd = k->common.ordering == 0 && k->common.btf;
    la_amd_memo *m = amd ? la_amd_memo_new() : NULL;
    if (amd && !m) {
        k->common.status = KLU_OUT_OF_MEMORY;
        return NULL;
    }
    if (k->matched && k->common.btf && k->n > 0 && (small || amd)) {
        klu_symbolic *s = klu_analyze_given(k->n, (int *)kp(k), (int *)ki(k), NULL, NULL, &k->common);
        if (small && s && s->maxblock <= KLU_NATURAL_BLOCK_MAX) {
            k->small = 1;
            la_amd_memo_free(m);
            return s;
        }
        /* larger blocks: the same blocks ordered by AMD as klu_analyze's (its transversal is the
         * identity here), without its second pass over the pattern */
        int r = s && amd ? la_amd_memo_blocks(m, k->n, kp(k), ki(k), s) : -1;
        if (!r) {
            la_amd_memo_free(m);
            return s;
        }
        if (s) klu_free_symbolic(&s, &k->common);
        if (r == AMD_OUT_OF_MEMORY) {
            la_amd_memo_free(m);
            k->common.status = KLU_OUT_OF_MEMORY;
            return NULL;
        }
    }
    if (!amd) return klu_analyze(k->n, (int *)kp(k), (int *)ki(k), &k->common);
    /* AMD on the blocks as klu_analyze's own, small blocks' orders remembered by pattern
     * (klu_amd_memo.c: the same orders and estimates, bit for bit) */
    k->common.ordering = 3;
    k->common.user_order = la_amd_memo_order;
    k->common.user_data = m;
    klu_symbolic *s = klu_analyze(k->n, (int *)kp(k), (int *)ki(k), &k->common);
    k->common.ordering = 0;
    k->common.user_order = NULL;
    k->common.user_data = NULL;
    if (!s && la_amd_memo_failed(m) == AMD_OUT_OF_MEMORY) k->common.status = KLU_OUT_OF_MEMORY;
    la_amd_memo_free(m);
    return s;
}

int la_klu_small_blocks(const mbla_klu *k) { return k ? k->small : 0; }

/* flags: LA_KLU_UNSCALED, KLU's own row scaling off from the first factorization (common.scale
 * -1, as mbla_klu_set_row_scale(k, 0)); LA_KLU_SMALL, small blocks expected (analyze);
 * LA_KLU_SADDLE_COLAMD, KLU's COLAMD where opts->saddle's order is declined for its fill */
static int create(const mbla_csc *A, const double *x, int cplx, const mbla_klu_opts *opts, int flags,
                  mbla_klu **out, mbl_status *st, const char *fn)
{
    if (!out) return mbl_error(st, MBL_EARG, "%s: out is NULL", fn);
    *out = NULL;
    int r = check_matrix(A, x, st, fn);
    if (r) return r;
    mbla_klu_opts o;
    mbla_klu_opts_default(&o);
    if (opts) o = *opts;
    if ((r = check_opts(&o, st, fn))) return r;
    int n = A->n, nz = A->p[n];
    mbla_klu *k = klu_alloc(n, nz, cplx, &o);
    if (!k) return mbl_error(st, MBL_ENOMEM, "%s: out of memory", fn);
    if (flags & LA_KLU_UNSCALED) k->common.scale = -1;
    k->p = mbl_alloc_array((size_t)n + 1, sizeof *k->p);
    k->i = mbl_alloc_array((size_t)nz, sizeof *k->i);
    if (k->eq) {
        k->er = mbl_alloc_array((size_t)n + 1, sizeof *k->er);
        k->ec = mbl_alloc_array((size_t)n + 1, sizeof *k->ec);
        k->ework = mbl_alloc_array(LA_EQUILIBRATE_WS(n, n) + 1, sizeof *k->ework);
        k->eabs = mbl_alloc_array((size_t)nz + 1, sizeof *k->eabs);
        k->sx = mbl_alloc_array((size_t)nz * (cplx ? 2 : 1) + 1, sizeof *k->sx);
    }
    if (!k->p || !k->i || (k->eq && (!k->er || !k->ec || !k->ework || !k->eabs || !k->sx))) {
        mbla_klu_free(k);
        return mbl_error(st, MBL_ENOMEM, "%s: out of memory (n = %d, nnz = %d)", fn, n, nz);
    }
    memcpy(k->p, A->p, ((size_t)n + 1) * sizeof *k->p);
    if (nz) memcpy(k->i, A->i, (size_t)nz * sizeof *k->i);
    if (n == 0) { /* the empty matrix: nothing to factor, every solve is a no-op */
        *out = k;
        return 0;
    }
    if (o.saddle && (r = saddle_setup(k, &o, x, st))) {
        mbla_klu_free(k);
        return r;
    }
    if (k->saddle_declined && (flags & LA_KLU_SADDLE_COLAMD)) k->common.ordering = MBLA_ORDER_COLAMD;
    if (o.btf && !k->uperm && (r = permute_to_matching(k, A, st))) {
        mbla_klu_free(k);
        return r;
    }
    k->sym = analyze(k, (flags & LA_KLU_SMALL) != 0);
    if (!k->sym) {
        r = k->common.status == KLU_INVALID
                ? mbl_error(st, MBL_EDIM, "%s: KLU rejected the matrix structure (unsorted, "
                            "duplicate or out-of-range indices?)", fn)
                : klu_fail(k, st, fn, "analyze");
        mbla_klu_free(k);
        return r;
    }
    if ((r = factor(k, x, st, fn))) {
        mbla_klu_free(k);
        return r;
    }
    *out = k;
    return 0;
}

int mbla_klu_new(const mbla_csc *A, const mbla_klu_opts *opts, mbla_klu **out, mbl_status *st)
{
    return create(A, A ? A->x : NULL, 0, opts, 0, out, st, "mbla_klu_new");
}

int la_klu_new_unscaled(const mbla_csc *A, const mbla_klu_opts *opts, mbla_klu **out, mbl_status *st)
{
    return create(A, A ? A->x : NULL, 0, opts, LA_KLU_UNSCALED | LA_KLU_SADDLE_COLAMD, out, st, "la_klu_new_unscaled");
}

int la_klu_new_small(const mbla_csc *A, int flags, mbla_klu **out, mbl_status *st)
{
    return create(A, A ? A->x : NULL, 0, NULL, flags | LA_KLU_SMALL, out, st, "la_klu_new_small");
}

/* The one-shot path (mbla_klu_new_taken): A's arrays are taken over as the pattern and values
 * KLU sees (A itself, or B = A Q gathered once, after which A is freed before the factors are
 * made: about 20 bytes per nonzero less at the factorization's peak than mbla_klu_new, the
 * copies of the pattern and the values' positions). The same analysis, factors and estimate. */
static int take_factor(mbla_klu *k, mbla_csc **Ap, double *condest, int small, mbl_status *st, const char *fn)
{
    mbla_csc *A = *Ap;
    int r = permute_to_matching(k, A, st);
    const double *x = A->x;
    if (!r && k->q) { /* B's values once; A (and the positions) not needed after */
        for (int t = 0; t < k->nz; t++) k->bx[t] = A->x[k->bsrc[t]];
        x = k->bx;
        mbl_free(k->bsrc), k->bsrc = NULL;
        k->p = k->i = NULL;
        mbla_csc_free(A), *Ap = A = NULL;
    }
    if (!r && !(k->sym = analyze(k, small)))
        r = k->common.status == KLU_INVALID ? mbl_error(st, MBL_EDIM, "%s: KLU rejected the matrix structure", fn)
                                            : klu_fail(k, st, fn, "analyze");
    if (!r) r = factor(k, x, st, fn);
    if (!r && condest && !klu_condest((int *)kp(k), (double *)x, k->sym, k->num, &k->common))
        r = klu_fail(k, st, fn, "condest");
    if (!r && condest) *condest = k->common.condest;
    return r;
}

static int new_taken(mbla_csc *A, double *condest, int small, mbla_klu **out, mbl_status *st, const char *fn)
{
    if (!out) {
        mbla_csc_free(A);
        return mbl_error(st, MBL_EARG, "%s: out is NULL", fn);
    }
    *out = NULL;
    int r = check_matrix(A, A ? A->x : NULL, st, fn);
    mbla_klu_opts o;
    mbla_klu_opts_default(&o);
    mbla_klu *k = r ? NULL : klu_alloc(A->n, A->p[A->n], 0, &o);
    if (!k) {
        mbla_csc_free(A);
        return r ? r : mbl_error(st, MBL_ENOMEM, "%s: out of memory", fn);
    }
    k->p = A->p, k->i = A->i; /* A's own (permute_to_matching reads them), never freed through k */
    if (k->n == 0) {
        if (condest) *condest = 1.0;
    } else {
        r = take_factor(k, &A, condest, small, st, fn);
    }
    k->p = k->i = NULL;
    mbla_csc_free(A);
    if (r && !k->num) { /* not factored */
        mbla_klu_free(k);
        return r;
    }
    mbla_klu_solve_only(k);
    *out = k; /* factored; r != 0: its estimate failed */
    return r;
}

int mbla_klu_new_taken(mbla_csc *A, double *condest, mbla_klu **out, mbl_status *st)
{
    return new_taken(A, condest, 0, out, st, "mbla_klu_new_taken");
}

int la_klu_new_taken_small(mbla_csc *A, double *condest, mbla_klu **out, mbl_status *st)
{
    return new_taken(A, condest, 1, out, st, "la_klu_new_taken_small");
}

int mbla_kluz_new(const mbla_csc *A, const double *az, const mbla_klu_opts *opts,
                  mbla_klu **out, mbl_status *st)
{
    return create(A, az, 1, opts, 0, out, st, "mbla_kluz_new");
}

static int same_pattern(const mbla_klu *k, const mbla_csc *A)
{
    if (!A || !A->p || A->m != k->n || A->n != k->n || A->p[k->n] != k->nz) return 0;
    if (memcmp(A->p, k->p, ((size_t)k->n + 1) * sizeof *k->p)) return 0;
    return k->nz == 0 || (A->i && !memcmp(A->i, k->i, (size_t)k->nz * sizeof *k->i));
}

/* new values x for the analysed pattern A: 0, or the error */
static int values_check(const mbla_klu *k, const mbla_csc *A, const double *x, mbl_status *st, const char *fn)
{
    if (k->solve_only) return mbl_error(st, MBL_EARG, "%s: the factorization was kept for solves only", fn);
    if (!same_pattern(k, A))
        return mbl_error(st, MBL_EDIM, "%s: sparsity pattern differs from the analysed one", fn);
    if (!x && k->nz) return mbl_error(st, MBL_EARG, "%s: values are NULL", fn);
    return 0;
}

static int refactor(mbla_klu *k, const mbla_csc *A, const double *x, mbl_status *st,
                    const char *fn)
{
    int rc = values_check(k, A, x, st, fn);
    if (rc || k->n == 0) return rc;
    if (k->num) {
        if (k->eq) equilibrate(k, x);
        const double *bx = kx(k, x);
        int ok = k->cplx ? klu_z_refactor((int *)kp(k), (int *)ki(k), (double *)bx, k->sym, k->num, &k->common)
                         : klu_refactor((int *)kp(k), (int *)ki(k), (double *)bx, k->sym, k->num, &k->common);
        if (ok && k->common.status == KLU_OK) {
            ok = k->cplx ? klu_z_rcond(k->sym, k->num, &k->common)
                         : klu_rcond(k->sym, k->num, &k->common);
            /* accept the old pivot sequence unless pivot quality dropped */
            if (ok && k->common.rcond > 0.0 && k->common.rcond >= k->refactor_drop * k->rcond_ref) {
                k->nrefactor++;
                return 0;
            }
        }
        if (k->common.status == KLU_OUT_OF_MEMORY) {
            free_numeric(k);
            return klu_fail(k, st, fn, "refactor");
        }
    }
    return factor(k, x, st, fn); /* fresh factorization with pivoting */
}

int mbla_klu_factor(mbla_klu *k, const mbla_csc *A, mbl_status *st)
{
    const char *fn = "mbla_klu_factor";
    if (!k) return mbl_error(st, MBL_EARG, "%s: k is NULL", fn);
    if (k->cplx) return mbl_error(st, MBL_EARG, "%s: factorization is complex", fn);
    const double *x = A ? A->x : NULL;
    int rc = values_check(k, A, x, st, fn);
    return rc || !k->n ? rc : factor(k, x, st, fn);
}

int mbla_klu_refactor(mbla_klu *k, const mbla_csc *A, mbl_status *st)
{
    if (!k) return mbl_error(st, MBL_EARG, "mbla_klu_refactor: k is NULL");
    if (k->cplx) return mbl_error(st, MBL_EARG, "mbla_klu_refactor: factorization is complex");
    return refactor(k, A, A ? A->x : NULL, st, "mbla_klu_refactor");
}

int mbla_kluz_refactor(mbla_klu *k, const mbla_csc *A, const double *az, mbl_status *st)
{
    if (!k) return mbl_error(st, MBL_EARG, "mbla_kluz_refactor: k is NULL");
    if (!k->cplx) return mbl_error(st, MBL_EARG, "mbla_kluz_refactor: factorization is real");
    return refactor(k, A, az, st, "mbla_kluz_refactor");
}

static int solve_check(mbla_klu *k, int cplx, int nrhs, const double *B, int ldb,
                       mbl_status *st, const char *fn)
{
    if (!k) return mbl_error(st, MBL_EARG, "%s: k is NULL", fn);
    if (k->cplx != cplx)
        return mbl_error(st, MBL_EARG, "%s: factorization is %s", fn, k->cplx ? "complex" : "real");
    if (!k->num && k->n) return mbl_error(st, MBL_EARG, "%s: no valid factorization", fn);
    if (nrhs < 0) return mbl_error(st, MBL_EDIM, "%s: nrhs = %d", fn, nrhs);
    if (ldb < la_max1(k->n)) return mbl_error(st, MBL_EDIM, "%s: ldb %d < max(1, %d)", fn, ldb, k->n);
    if (!B && nrhs && k->n) return mbl_error(st, MBL_EARG, "%s: B is NULL", fn);
    return 0;
}

/* with equilibration, X(i, :) *= f[i] (w = 1 real, 2 complex doubles per entry) */
static void scale_rows(const mbla_klu *k, const double *f, int nrhs, double *X, int ldb, int w)
{
    if (!k->eq) return;
    for (int c = 0; c < nrhs; c++) {
        double *x = X + (size_t)c * ldb * w;
        for (int i = 0; i < k->n; i++)
            for (int e = 0; e < w; e++) x[(size_t)i * w + e] *= f[i];
    }
}

/* x[q[i]] = x'[i] after a solve with B (w = 1 real, 2 complex doubles per entry) */
static void unpermute_solution(mbla_klu *k, int nrhs, double *X, int ldb, int w)
{
    if (!k->q) return;
    for (int c = 0; c < nrhs; c++) {
        double *x = X + (size_t)c * ldb * w;
        memcpy(k->perm, x, (size_t)k->n * w * sizeof *x);
        for (int i = 0; i < k->n; i++)
            for (int e = 0; e < w; e++) x[(size_t)k->q[i] * w + e] = k->perm[(size_t)i * w + e];
    }
}

/* c'[i] = c[q[i]] before a transposed solve with B */
static void permute_rhs(mbla_klu *k, int nrhs, double *X, int ldb, int w)
{
    if (!k->q) return;
    for (int c = 0; c < nrhs; c++) {
        double *x = X + (size_t)c * ldb * w;
        memcpy(k->perm, x, (size_t)k->n * w * sizeof *x);
        for (int i = 0; i < k->n; i++)
            for (int e = 0; e < w; e++) x[(size_t)i * w + e] = k->perm[(size_t)k->q[i] * w + e];
    }
}

/* Many right-hand sides are solved SOLVE_CHUNK columns at a time, with a progress report between
 * (core/progress.h; stage "solve"): KLU solves each column on its own, in groups of 4, so the
 * results are those of one call. */
enum { SOLVE_CHUNK = 32 };

int mbla_klu_solve(mbla_klu *k, int nrhs, double *B, int ldb, mbl_status *st)
{
    int r = solve_check(k, 0, nrhs, B, ldb, st, "mbla_klu_solve");
    if (r || !nrhs || !k->n) return r;
    scale_rows(k, k->er, nrhs, B, ldb, 1);
    for (int c = 0; c < nrhs; c += SOLVE_CHUNK) {
        if (nrhs > SOLVE_CHUNK && (r = core_progress(st, "solve", c, nrhs))) return r;
        int nc = nrhs - c < SOLVE_CHUNK ? nrhs - c : SOLVE_CHUNK;
        if (!klu_solve(k->sym, k->num, ldb, nc, B + (size_t)c * ldb, &k->common))
            return klu_fail(k, st, "mbla_klu_solve", "solve");
    }
    unpermute_solution(k, nrhs, B, ldb, 1);
    scale_rows(k, k->ec, nrhs, B, ldb, 1);
    return 0;
}

int mbla_klu_solve_t(mbla_klu *k, int nrhs, double *B, int ldb, mbl_status *st)
{
    int r = solve_check(k, 0, nrhs, B, ldb, st, "mbla_klu_solve_t");
    if (r || !nrhs || !k->n) return r;
    scale_rows(k, k->ec, nrhs, B, ldb, 1);
    permute_rhs(k, nrhs, B, ldb, 1);
    if (!klu_tsolve(k->sym, k->num, ldb, nrhs, B, &k->common))
        return klu_fail(k, st, "mbla_klu_solve_t", "tsolve");
    scale_rows(k, k->er, nrhs, B, ldb, 1);
    return 0;
}

int mbla_kluz_solve(mbla_klu *k, char trans, int nrhs, double *B, int ldb, mbl_status *st)
{
    const char *fn = "mbla_kluz_solve";
    if (trans != 'N' && trans != 'T' && trans != 'C')
        return mbl_error(st, MBL_EARG, "%s: trans must be 'N', 'T' or 'C'", fn);
    int r = solve_check(k, 1, nrhs, B, ldb, st, fn);
    if (r || !nrhs || !k->n) return r;
    scale_rows(k, trans == 'N' ? k->er : k->ec, nrhs, B, ldb, 2);
    if (trans != 'N') permute_rhs(k, nrhs, B, ldb, 2);
    int ok = trans == 'N' ? klu_z_solve(k->sym, k->num, ldb, nrhs, B, &k->common)
                          : klu_z_tsolve(k->sym, k->num, ldb, nrhs, B, trans == 'C', &k->common);
    if (!ok) return klu_fail(k, st, fn, "solve");
    if (trans == 'N') unpermute_solution(k, nrhs, B, ldb, 2);
    scale_rows(k, trans == 'N' ? k->ec : k->er, nrhs, B, ldb, 2);
    return 0;
}

int mbla_klu_set_row_scale(mbla_klu *k, int on, mbl_status *st)
{
    if (!k) return mbl_error(st, MBL_EARG, "mbla_klu_set_row_scale: k is NULL");
    k->common.scale = on ? 2 : -1; /* KLU's max-norm row scaling, or none without checks */
    return 0;
}

int mbla_klu_rcond(mbla_klu *k, double *rcond, mbl_status *st)
{
    if (!k || !rcond) return mbl_error(st, MBL_EARG, "mbla_klu_rcond: NULL argument");
    if (k->n == 0) {
        *rcond = 1.0;
        return 0;
    }
    if (!k->num) return mbl_error(st, MBL_EARG, "mbla_klu_rcond: no valid factorization");
    int ok = k->cplx ? klu_z_rcond(k->sym, k->num, &k->common) : klu_rcond(k->sym, k->num, &k->common);
    if (!ok) return klu_fail(k, st, "mbla_klu_rcond", "rcond");
    *rcond = k->common.rcond;
    return 0;
}

int mbla_klu_condest(mbla_klu *k, const mbla_csc *A, double *condest, mbl_status *st)
{
    const char *fn = "mbla_klu_condest";
    if (!k || !condest) return mbl_error(st, MBL_EARG, "%s: NULL argument", fn);
    if (k->cplx) return mbl_error(st, MBL_EARG, "%s: factorization is complex", fn);
    if (!k->num && k->n) return mbl_error(st, MBL_EARG, "%s: no valid factorization", fn);
    if (k->solve_only) return mbl_error(st, MBL_EARG, "%s: the factorization was kept for solves only", fn);
    if (!same_pattern(k, A))
        return mbl_error(st, MBL_EDIM, "%s: A's pattern differs from the factored one", fn);
    if (k->n == 0) {
        *condest = 1.0;
        return 0;
    }
    if (!klu_condest((int *)kp(k), (double *)kx(k, A->x), k->sym, k->num, &k->common))
        return klu_fail(k, st, fn, "condest");
    *condest = k->common.condest;
    return 0;
}
