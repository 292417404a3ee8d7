/* Shared pieces of the methods other than `augmented` (partition, nullspace, projection,
 * descriptor, penalty, fd): dense blocks of the exact DAE Jacobian at a point, the choice of
 * independent constraint rows, and the reduction of the linearized DAE onto a set of
 * independent coordinates S = P q (P constant). Internal to the library. */
#ifndef MBLIN_METHODS_INTERNAL_H
#define MBLIN_METHODS_INTERNAL_H

#include "lin/lin_internal.h"
#include "mblin/la.h"

/* Dense blocks of the exact Jacobian of F = [R; Phidd; nhd; Phid; nh; Phi] at a point.
 * R = M vdot + Phi_q^T lambda - Q, so dR/dq includes the geometric stiffness (Phi_q^T lambda)_q. */
typedef struct mbl_blocks {
    int n, m, nr, ny;
    double *M, *Rv, *Rq, *Rr;              /* n x n, n x n, n x n, n x nr */
    double *Pq, *Pdq, *Pddv, *Pddq, *Pddr; /* m x n (Phi_q), m x n (d Phid/dq), m x n, m x n, m x nr */
    double *Ya, *Yv, *Yq, *Yr;             /* ny x n, ny x n, ny x n, ny x nr */
    double *Ylam;                          /* ny x m: outputs of the multipliers (lambda(c) in outputs) */
    mbl_eval ev;
} mbl_blocks;

int mbl_blocks_init(const mbl_model *md, const mbl_point *pt, mbl_blocks *B, mbl_status *st);
/* Re-evaluate the Jacobian values only (ev.jac) at (q, v, a, lambda) without filling blocks. */
int mbl_blocks_eval_jac(const mbl_model *md, const mbl_point *pt, const double *v, const double *lam,
                        double *jac, mbl_eval *ev, mbl_status *st);
void mbl_blocks_free(mbl_blocks *B);
/* Dense block of a sparse expression Jacobian J with values val: rows [r0, r1), unknown columns
 * of block cb. out is (r1 - r0) x (block width), column-major. */
void mbl_sjac_dense(const mbl_model *md, const mbl_sjac *J, const double *val, int r0, int r1, int cb, double *out);

/* 1 when some output depends on the unknowns of block blk (MBL_BLK_A: accelerations, MBL_BLK_LAMBDA,
 * MBL_BLK_MU: multipliers). */
int mbl_outputs_use(const mbl_model *md, int blk);

/* Refuse non-holonomic models (the methods here are written for holonomic constraints) and models
 * with more than opt->dense_n_max coordinates (the methods here are dense). */
int mbl_require_holonomic(const mbl_model *md, const mbl_lin_options *opt, const char *method, mbl_status *st);

/* Independent constraint rows: QRCP of Phi_q^T (n x m) with every row of Phi_q scaled to unit
 * 2-norm first (a constraint's units do not decide the rank); rows[0..r-1] receives the pivoted
 * (independent) rows, *r the numerical rank (relative tolerance tol). rows has room for m. */
int mbl_constraint_rank(const mbl_blocks *B, double tol, int *rows, int *r, mbl_status *st);
/* Scale every nonzero column of A (rows x cols, lda) to unit 2-norm in place. */
void mbl_unit_columns(int rows, int cols, double *A, int lda);
/* mbl_constraint_rank, then a one-line MBL_ESINGULAR refusal "<method>: Phi_q has rank r < m ...:
 * <why>; use descriptor, penalty or nullspace" when the constraints are not independent. */
int mbl_require_full_rank(const mbl_blocks *B, double tol, int *rows, int *r, const char *method, const char *why,
                          mbl_status *st);

/* The states S (z = n - r of them) of source 000 Eq. 20-22, shared with `augmented`
 * (mbl_select_states: Gauss elimination with full pivoting, source 004, user states preferred).
 * uidx[i] = -1 when S_i is coordinate cidx[i], else the user state index. names[i] points into the
 * model. selection (size selsize) receives what the selection did. Errors when the selection does
 * not give z position states with W = S' (user velocity states: use augmented). */
int mbl_lin_states(const mbl_model *md, const mbl_blocks *B, const mbl_lin_options *opt, int z, int *uidx, int *cidx,
                   char **names, char *selection, size_t selsize, mbl_status *st);

/* Rows of the states for the reduction engine, from user-state Jacobian values usjac (the part
 * of a tape_us evaluation after the 3 nus + 2 nuvs values): level 0: dS/dq (P), 1: d(S')/dq,
 * 2: d(S'')/dv, 3: d(S'')/dq. out is z x n (ld z); coordinate states give e_i (level 0) or 0. */
void mbl_lin_state_rows(const mbl_model *md, const int *uidx, const int *cidx, int z, const double *usjac, int level,
                        double *out);

/* The reduction engine. S = P q (P: z x n, ld z, z = n - r) completes the r independent constraint
 * rows to the regular matrix Jc = [Phi_q(rows, :); P]. With Qs = dq/dS = Jc^-1 [0; I], the velocity
 * and acceleration perturbations follow exactly from the linearized velocity and acceleration
 * constraints, and the projected equations of motion give M-hat = Qs^T M Qs, C-hat = Qs^T (M Ha +
 * Rv Qs), K-hat = Qs^T (M Ga + Rv Vs + Rq Qs), F = -Qs^T (M Ra + Rr) (source 000 Eq. 6-9 when P
 * selects coordinates; source 003 Eq. 4.7-4.13 when P = T^T is an orthonormal tangent basis).
 * Nonlinear states S = s(q) add their curvature through Pd_q = d(S')/dq, Pdd_v = d(S'')/dv, Pdd_q =
 * d(S'')/dq (z x n each, NULL: zero, as for S = P q), which enter the velocity and acceleration
 * rows like those of the constraints. Rq may be replaced by Rq_use (NULL: B->Rq). Fills A, B, C, D,
 * M, Cd, K, F, q_S (= Qs), v_W and cond of lin (allocated by the caller with z0 = z1 = z).
 * Outputs of the multipliers take dlambda from the linearized equations of motion, Phi_q^T dlambda =
 * -(M da + Rv dv + Rq dq + Rr dr), solved with Jc^T (exact: its last z rows are the reduced
 * equations); they need r == m (unique multipliers) and Rq_use == NULL, else an error.
 * Jc_lu_out (may be NULL; the caller frees it) returns the factorization of Jc. */
int mbl_reduce(const mbl_blocks *B, const int *rows, int r, const double *P, const double *Pd_q, const double *Pdd_v,
               const double *Pdd_q, int z, const double *Rq_use, double rcond_min, mbl_linear *lin,
               mbla_dlu **Jc_lu_out, mbl_status *st);

/* 1 when the point has nonzero velocities or accelerations (not an equilibrium): there the
 * spectrum of a linearization depends on the states chosen. */
int mbl_point_moving(const mbl_point *pt);

/* Text for the notes of methods whose states are not the user's at a point with motion. */
#define MBL_MOVING_NOTE                                                                              \
    "; point with motion: these states differ from the user's and the spectrum of a linearization "  \
    "away from equilibrium depends on the states"

/* Fill state names (pos[i] and "der(pos[i])"), input and output names. */
int mbl_lin_set_names(const mbl_model *md, mbl_linear *lin, char *const *pos);

/* Allocate the method-provided spectrum arrays of lin (neig eigenvalues, n x neig shapes). */
int mbl_lin_alloc_eigs(mbl_linear *lin, int neig);

/* Methods. */
int mbl_lin_partition(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, mbl_linear **out,
                      mbl_status *st);
int mbl_lin_nullspace(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, mbl_linear **out,
                      mbl_status *st);
int mbl_lin_projection(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, mbl_linear **out,
                       mbl_status *st);
int mbl_lin_descriptor(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, mbl_linear **out,
                       mbl_status *st);
int mbl_lin_penalty(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, mbl_linear **out,
                    mbl_status *st);
int mbl_lin_fd(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, mbl_linear **out,
               mbl_status *st);

/* ---- large models without dense matrices (src/lin/sparse_pencil.c) ---- */

/* Peak memory in bytes of the dense path of `method` (NULL: augmented) with its whole spectrum:
 * the result (A..D, M, C, K, F, q_S, v_W), the method's work arrays (augmented: X, N x (nx + nr)),
 * the eigen-solve (a copy of A, eigenvectors, mode shapes). An estimate from n, m, k, nr, ny and
 * the constraint rank at pt (pt may be NULL). */
double mbl_lin_dense_bytes(const mbl_model *md, const mbl_point *pt, const char *method);
/* Peak memory in bytes of the partial spectrum of nev eigenvalues by the sparse pencil. */
double mbl_lin_sparse_bytes(const mbl_model *md, int nev);
/* opt->mem_budget, or MBL_MEM_BUDGET_DEFAULT when it is not positive. */
double mbl_lin_mem_budget(const mbl_lin_options *opt);
/* The one-line MBL_ENOMEM refusal "<what> needs about X GiB, over the memory budget of Y GiB
 * (mem_budget): <hint>". */
int mbl_lin_refuse_memory(const char *what, double need, double budget, const char *hint, mbl_status *st);

/* The linearized-DAE pencil of source 001 Eq. 8, sparse, in x = [dq; dv; dlambda] (order
 * nd = 2n + m): A = Ad, E, and with want_io the dense Bd (nd x nr) and Cdd (ny x nd); scale is the
 * constraint scale s. Holonomic models at regular points only. */
typedef struct mbl_sparse_pencil {
    int nd, n, m;
    double scale;
    mbla_csc *A, *E;
    double *Bd, *Cdd;
} mbl_sparse_pencil;
int mbl_sparse_pencil_build(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, int want_io,
                            mbl_sparse_pencil *P, mbl_status *st);
void mbl_sparse_pencil_free(mbl_sparse_pencil *P);

/* The partial spectrum: the min(opt->nev, 2(n - m), nd - 2) eigenvalues nearest opt->shift of the
 * sparse pencil (ARPACK shift-invert) with the coordinate parts of their eigenvectors, into *lin:
 * an existing linear model (its state-space form kept) or, when *lin is NULL, a new one whose
 * state-space and MCK forms are not formed (A, B, C, D, M, Cd, K, F, q_S, v_W and state_names
 * NULL). Fills neig, eig_*, eig_partial, eig_shift, spectrum_reason (= reason), nd, Bd and Cdd
 * (when small), method and notes. Refuses up front (MBL_ENOMEM) when it would exceed the memory
 * budget. */
int mbl_lin_sparse_spectrum(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, const char *method,
                            const char *reason, mbl_linear **lin, mbl_status *st);

#endif
