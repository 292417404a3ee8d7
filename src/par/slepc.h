/* SLEPc over MPI as the engine of the sparse eigenproblems (src/par/slepc.c; docs/parallel.md,
 * "SLEPc eigensolver"). Part of the plugin libmblin_par.so: only the plugin links PETSc, SLEPc and
 * MPI. The calls are collective over PETSC_COMM_WORLD (every rank, the same arguments). */
#ifndef MBLIN_PAR_SLEPC_H
#define MBLIN_PAR_SLEPC_H

#include "mblin/la.h"

/* SlepcInitialize unless SLEPc is up (MPI is initialized by PETSc unless it is already); PETSc's
 * error handler returns codes (nothing printed). 0 or MBL_ELIB. */
int par_slepc_init(mbl_status *st);
/* SlepcFinalize if par_slepc_init started SLEPc (before MPI_Finalize when the caller owns MPI). */
void par_slepc_finalize(void);
/* Initialize and fill *be with the two calls below (name, root = rank 0). */
int par_slepc_backend(mbla_eigs_backend *be, mbl_status *st);

/* mbla_eigs_sinv by SLEPc (EPS_GNHEP, STSINVERT, MUMPS); a complex shift through the real form of
 * order 2n. Eigenvalues on every rank; Vre, Vim (unit 2-norm) on rank 0 only. */
int par_slepc_sinv(void *ctx, const mbla_csc *A, const mbla_csc *E, double sigma_re, double sigma_im, int k,
                      const mbla_eigs_opts *opts, double *lre, double *lim, double *Vre, double *Vim, int ldv,
                      int *nconv, mbl_status *st);
/* mbla_eigs_sym_sinv by SLEPc (EPS_GHEP, STSINVERT, MUMPS). w on every rank, V on rank 0 only. */
int par_slepc_sym_sinv(void *ctx, const mbla_csc *K, const mbla_csc *B, double sigma, int k,
                          const mbla_eigs_opts *opts, double *w, double *V, int ldv, int *nconv, mbl_status *st);

#endif
