/* mbla_csc_equilibrate with more scratch, for the library's own callers. Not part of the public
 * API. */
#ifndef MBLIN_LA_EQUILIBRATE_H
#define MBLIN_LA_EQUILIBRATE_H

#include "mblin/la.h"

/* mbla_csc_equilibrate (the same factors and matrix, bit for bit) with work of 2 m + n doubles:
 * the extra m hold the next sweep's row norms, taken in the pass that applies a sweep's factors
 * (one pass over A per sweep instead of two). A, r, c and work are not checked. */
#define LA_EQUILIBRATE_WS(m, n) (2 * (size_t)(m) + (size_t)(n))
int la_csc_equilibrate_ws(mbla_csc *A, int maxiter, int warm, double *r, double *c, double *work);

/* mbla_klu_new for a matrix its caller has equilibrated already (la_csc_equilibrate_ws: every
 * row's and column's largest entry in [1/2, 2) once its sweeps converge): KLU's own max-norm row
 * scaling, a pass over the matrix at every factorization and refactorization, off from the first
 * factorization (the factors of mbla_klu_new, mbla_klu_set_row_scale(k, 0), mbla_klu_factor).
 * Pivots, rcond and condest are those of the matrix as given. With opts->saddle, where the
 * saddle-point order is declined for its fill (klu.c MBLA_KLU_SADDLE_FILL_MAX), KLU orders the
 * matrix's blocks by COLAMD instead of AMD (LA_KLU_SADDLE_COLAMD): the operating point's Newton
 * matrices of chains of loops, whose ordering AMD makes at a higher cost and with more fill (the
 * N-loop four-bar mechanism at N = 10^4: COLAMD 152 M instructions against AMD's 207 M,
 * nnz(L + U) 7.90e5 against 8.50e5, KLU's crude rcond 0.093 against 0.020). */
int la_klu_new_unscaled(const mbla_csc *A, const mbla_klu_opts *opts, mbla_klu **out, mbl_status *st);

/* mbla_klu_new (default options; flags LA_KLU_UNSCALED: as la_klu_new_unscaled) and
 * mbla_klu_new_taken for a matrix whose block triangular form its caller expects in blocks of at
 * most 3 rows (a kinematic system's levels, a constraint Jacobian with its states' rows): where
 * KLU's own analysis would keep every block in its natural order, the blocks are found without
 * its maximum transversal and ordering pass (klu_analyze_given). The same factors, pivots, rcond,
 * condest and solutions bit for bit; any other matrix is analysed as by mbla_klu_new.
 * la_klu_small_blocks: 1 where the short analysis was taken. */
enum { LA_KLU_UNSCALED = 1, LA_KLU_SMALL = 2, LA_KLU_SADDLE_COLAMD = 4 };
int la_klu_new_small(const mbla_csc *A, int flags, mbla_klu **out, mbl_status *st);
int la_klu_new_taken_small(mbla_csc *A, double *condest, mbla_klu **out, mbl_status *st);
int la_klu_small_blocks(const mbla_klu *k);

#endif
