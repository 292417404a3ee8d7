/* One SPQR factorization kept for a matrix pattern factored again at other values (the
 * operating point's initial multipliers and its constraint rank test: the same pattern,
 * [Phi_q; A_nh]^T, at the guess and at the solution). Needs MBLIN_WITH_GPL; otherwise every
 * function reports MBL_ELIB. Not part of the public API. */
#ifndef MBLIN_LA_SPQR_H
#define MBLIN_LA_SPQR_H

#include "mblin/la.h"

typedef struct la_spqr la_spqr;

/* The m x n matrix A's ordering and symbolic analysis (SPQR's default ordering, rank detection
 * allowed; no singletons, as SPQR's numeric refactorization requires) and its numeric
 * factorization with SPQR's default tolerance (20 (m + n) eps times the largest column 2-norm).
 * Errors: MBL_EARG, MBL_ENOMEM, MBL_ELIB. */
int la_spqr_new(const mbla_csc *A, la_spqr **out, mbl_status *st);

/* 1 when A has the pattern (sizes, p, i) la_spqr_new analysed, else 0. */
int la_spqr_same_pattern(const la_spqr *qr, const mbla_csc *A);

/* The numeric factorization of A, whose pattern must be the analysed one (la_spqr_same_pattern),
 * with the default tolerance of A. Errors: MBL_EARG, MBL_EDIM (another pattern), MBL_ENOMEM,
 * MBL_ELIB. */
int la_spqr_refactor(la_spqr *qr, const mbla_csc *A, mbl_status *st);

/* The numerical rank of the last factorization (SPQR's Heath test). */
int la_spqr_rank_of(const la_spqr *qr);

/* The least-squares solution of A x = b for the m x n A (m >= n) last factored: x = E R \ (Q^T b)
 * (the basic solution if A is rank deficient: the dead columns' entries 0), as mbla_spqr_solve
 * gives it up to rounding, from the corrected semi-normal equations (R^T R x = E^T A^T b and one
 * correction from the residual: Q is not applied, which costs SPQR as much as the factorization).
 * b has m, x n entries. Errors: MBL_EARG, MBL_EDIM, MBL_ENOMEM, MBL_ELIB. */
int la_spqr_lstsq(la_spqr *qr, const mbla_csc *A, const double *b, double *x, mbl_status *st);

void la_spqr_free(la_spqr *qr);

#endif
