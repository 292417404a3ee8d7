/* The steps of fe_reduce (src/fe/reduce.c), one function each, so that bench/bench_fe_reduce.c can
 * time and measure each: fe_reduce is fe_cb_eliminate, fe_cb_factor, fe_cb_fixed,
 * fe_cb_constraint and fe_cb_basis in that order, then fe_cb_free. Internal to src/fe. */
#ifndef MBLIN_FE_REDUCE_STEPS_H
#define MBLIN_FE_REDUCE_STEPS_H

#include "fe/spider.h"

/* The cut-off's first try asks ARPACK for this many fixed-interface modes, and twice as many while
 * all of them lie below the cut-off. */
#define FE_CUTOFF_FIRST 20
/* Below max(2 k + 1, FE_DENSE_ROWS) interior rows the k fixed-interface modes come from LAPACK's
 * dense symmetric-definite driver (ARPACK's Krylov space would be the whole space). */
#define FE_DENSE_ROWS 20

/* ARPACK's relative accuracy of the fixed-interface Ritz values (mbla_eigs_opts' tol): far below the
 * reduction's own error, and the machine precision (tol 0) took 1.7 times as long on a lattice of
 * 30,720 rows (docs/benchmarks.md). */
#define FE_EIGS_TOL 1e-12

typedef struct fe_cb {
    const fe_part *p;
    const fe_iface *ifc;
    int niface;
    fe_reduce_opts o;
    fe_elim e;              /* the interface rows, u = G v */
    mbla_csc *Kv, *Mv;      /* G^T K G, G^T M G (NULL: no spider, K and M themselves) */
    int ni, *inner;         /* the interior rows of v */
    mbla_csc *Kii, *Mii, *Kib;
    mbla_chol *chol;        /* K_ii = L L^T */
    int nfixed;             /* fixed-interface modes kept */
    double *wfix, *Vfix;    /* their w^2 and shapes (ni x nfixed) */
    double *Psi;            /* ni x nb: -K_ii^-1 K_ib */
} fe_cb;

/* the options checked, the interfaces eliminated, the interior rows and the blocks of K and M */
int fe_cb_eliminate(fe_cb *c, const fe_part *p, const fe_iface *ifc, int niface, const fe_reduce_opts *o,
                    mbl_status *st);
/* CHOLMOD's factor of K_ii (refused naming the interfaces when it is not positive definite) */
int fe_cb_factor(fe_cb *c, mbl_status *st);
/* the fixed-interface modes (ARPACK on the factor of K_ii, or LAPACK below FE_DENSE_ROWS) */
int fe_cb_fixed(fe_cb *c, mbl_status *st);
/* the constraint modes */
int fe_cb_constraint(fe_cb *c, mbl_status *st);
/* T = [Phi_i Psi; 0 I], the pair (T^T K T, T^T M T) by LAPACK's dsygvd, the rigid modes dropped,
 * the modes on the part's rows and the markers' motion */
int fe_cb_basis(fe_cb *c, fe_basis *b, mbl_status *st);
void fe_cb_free(fe_cb *c);

#endif
