/* The eigen strategies of a linear model behind one call (DESIGN.md sec. 9; docs/linearization.md,
 * "Eigenvalues: which solver and why").
 *
 * eig_solve takes the second-order data M-hat, C-hat, K-hat (order z, z0 == z1) and the
 * first-order A as the fallback, and chooses the strategy from the structure of the data, never
 * from a flag of the caller:
 *
 *   "sygvd"         the top block of A is exactly [0 I] (S' = W), C-hat is zero (||C||_F <=
 *                   damp_tol sqrt(||M||_F ||K||_F)), K-hat and M-hat are symmetric (||X - X^T||_F
 *                   <= sym_tol ||X||_F) and M-hat is positive definite: K x = w^2 M x by LAPACK
 *                   dsygvd after a symmetric diagonal (Jacobi) scaling by 1/sqrt(M_ii).
 *                   Eigenvalues s = +-i w (w^2 > 0), +-sqrt(-w^2) (w^2 < 0), 0 twice (a w^2
 *                   near the rounding level 100 eps max|w^2| is judged on its own: zero when
 *                   its Rayleigh quotient is within its own uncertainty: the residual bounds
 *                   of the pencil and the data's rounding, eig.c sygvd_zero_test; else a mode
 *                   with 100 times that uncertainty in err);
 *                   eigenvectors real, M-orthonormal.
 *   "quadratic-qz"  the top block of A is [0 I] but the rest does not hold: the quadratic pencil
 *                   s^2 M + s C + K, scaled symmetrically by 1/sqrt(M_ii) and then as Fan, Lin
 *                   and Van Dooren 2004 (s = gamma mu), through its first companion pencil, by
 *                   QZ with permutation balancing (dggevx 'P'; LAPACK's scaling balancer made
 *                   backward errors worse on these pencils, the two scalings do its job).
 *   "dgeev"         anything else (z0 != z1: non-holonomic constraints or user velocity states;
 *                   no M, C, K; a top block of A that is not [0 I]; a QZ that returns an infinite
 *                   eigenvalue): the eigenvalues of A by dgeev (which balances A, 'B').
 *
 * Before the quadratic strategies the coordinates are split into independent blocks (the
 * connected components of the nonzero pattern of M + C + K); each block is solved on its own,
 * so uncoupled subsystems cost what their sizes cost.
 *
 * For every eigenvalue the normwise backward error (Tisseur 2000) is reported:
 *   quadratic:  ||(s^2 M + s C + K) x||_2 / ((|s|^2 ||M||_F + |s| ||C||_F + ||K||_F) ||x||_2)
 *   dgeev:      ||(A - s I) v||_2 / (||A||_F ||v||_2)
 * with the caller's M, C, K and A (not the symmetrized or scaled copies): the smallest relative
 * perturbation of the data for which the computed pair is exact. */
#ifndef MBLIN_EIG_H
#define MBLIN_EIG_H

#include "mblin/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mbl_eig_options {
    double damp_tol; /* C-hat counts as zero when ||C||_F <= damp_tol sqrt(||M||_F ||K||_F)
                        (default 1e-12): dropping it is a backward perturbation of that relative
                        size, the level of the rounding of the quadratic QZ itself */
    double sym_tol;  /* M-hat, K-hat count as symmetric when ||X - X^T||_F <= sym_tol ||X||_F
                        (default 1e-10); the symmetric part is used */
    double refine_rel; /* sygvd: a w^2 whose a-priori relative error eps max|w^2| / |w^2| exceeds
                        this is refined by the Rayleigh quotient in doubled precision (fma-compensated) (default 1e-12) */
    int refine_max;    /* at most this many (the slowest first; default 200; 0: none), and no more
                        than cost a quarter of the eigensolve (or 16 modes of the largest block):
                        each costs 2 b^2 compensated multiply-adds, b the order of its block,
                        against ~b^3 */
} mbl_eig_options;

void eig_options_default(mbl_eig_options *opt);

/* The data: A (nx x nx, nx = z0 + z1) is required; M, C, K (z1 x z1, z1 x z1, z1 x z0) may be
 * NULL (then dgeev on A). */
typedef struct mbl_eig_problem {
    int z0, z1;
    const double *A;
    const double *M, *C, *K;
} mbl_eig_problem;

typedef struct mbl_eig_result {
    char solver[32];  /* "sygvd", "quadratic-qz" or "dgeev" */
    int neig;         /* number of eigenvalues: z0 + z1 */
    double *re, *im;  /* neig eigenvalues (complex pairs adjacent, positive imaginary part first) */
    double *berr;     /* neig normwise backward errors (see above) */
    unsigned char *zero; /* neig: 1 where the eigenpair is also one of 0 within the rounding of K
                            (quadratic-qz: a cyclic coordinate's split zero; sygvd: every zero,
                            decided per eigenvalue from its own residual and condition; see eig.c) */
    double *err;      /* neig: the uncertainty of an eigenvalue that was judged near zero and found
                         a mode (sygvd: from its residual and condition), NAN for the others */
    int nrow;         /* length of the eigenvectors given: z0 (the position part on dgeev) */
    /* Eigenvectors, as real columns: eigenvalue i has x = col(vre[i]) + i vsign[i] col(vim[i])
     * (vim[i] == -1: x real). The columns are grouped by block: block c holds the rows
     * rows[rptr[c] .. rptr[c+1]) of x and the columns cptr[c] .. cptr[c+1]-1, stored densely
     * (nb = rptr[c+1] - rptr[c] rows, ld nb) at V + voff[c]; every other row of those columns is
     * zero. eig_vector expands one. Vector scale is arbitrary (sygvd: M-orthonormal). */
    int nvec;
    int *vre, *vim, *vsign;
    int ncomp;
    int *rptr, *rows, *cptr;
    size_t *voff;
    double *V;
    double zero_floor; /* rounding level of a zero eigenvalue for the solver used: |s| below it
                          is indistinguishable from 0 (sygvd: 0, zeros are flagged per eigenvalue
                          in zero; quadratic-qz: 10 sqrt(eps) max|s|;
                          dgeev: 10 sqrt(eps ||A||_1), the split of a defective double zero) */
} mbl_eig_result;

/* Solve (see the top of this file). want_vectors 0: no eigenvectors (nvec = 0, V NULL).
 * Errors: MBL_EARG, MBL_EDIM, MBL_ENOMEM, MBL_ENOCONV (the last strategy failed too). */
int eig_solve(const mbl_eig_problem *p, const mbl_eig_options *opt, int want_vectors,
              mbl_eig_result **out, mbl_status *st);

/* Eigenvector i expanded to nrow entries (xim may be NULL when only the real part is wanted). */
void eig_vector(const mbl_eig_result *r, int i, double *xre, double *xim);

void eig_result_free(mbl_eig_result *r);

/* The "dgeev" strategy on its own, for any general A (nx x nx; also the Floquet monodromy
 * matrix, src/study/floquet.c): eigenvalues (wr, wi) and right eigenvectors VR (nx x nx, LAPACK's
 * packed form as mbla_eig's) by dgeev, which balances A ('B'), and berr (nx) the normwise backward
 * errors ||A v - s v||_2 / (||A||_F ||v||_2). Where one exceeds 10 nx eps (DGEEV_STABLE_NEPS in
 * eig.c; dgeev's scaling balancer can spoil the vectors and values of an A with entries at the
 * rounding level of zero ones, docs/linearization.md "dgeev's scaling balancer"), A is solved
 * again with the permutation only: a pair of a modulus above the rounding level of a zero
 * (zero_floor) with that backward error takes the value and vector of its match there (the nearest
 * of the same kind, within 10 nx eps, whose own nearest in the first solve is that pair); then,
 * when retry is set, a pair whose backward error still exceeds 1e-12 (DGEEV_BERR_RETRY) takes the
 * vector of its match (the eigenvalue stays); berr recomputed; *retried (may be NULL) is then 1.
 * Without a second solve the results are dgeev's (mbla_eig) bits. Errors: MBL_ENOMEM, mbla_eig's. */
int eig_dgeev(int nx, const double *A, int retry, double *wr, double *wi, double *VR, double *berr, int *retried,
              mbl_status *st);

#ifdef __cplusplus
}
#endif
#endif
