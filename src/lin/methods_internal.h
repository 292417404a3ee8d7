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
    int n, m, k, nr, ny;
    double *M, *Rv, *Rq, *Rr;              /* n x n, n x n, n x n, n x nr */
    double *Pq, *Pdq, *Pddv, *Pddq, *Pddr; /* m x n (Phi_q), m x n (d Phid/dq), m x n, m x n, m x nr */
    /* non-holonomic c = A_nh v + b (k rows): Nv = dc/dv = A_nh, Nq = dc/dq, and its derivative c':
     * Ndv = dc'/dv, Ndq = dc'/dq, Ndr = dc'/dr (dc'/da = A_nh) */
    double *Nv, *Nq, *Ndv, *Ndq, *Ndr;     /* k x n (four), k x nr */
    double *Ya, *Yv, *Yq, *Yr;             /* ny x n, ny x n, ny x n, ny x nr */
    double *Ylam, *Ymu;                    /* ny x m, ny x k: outputs of the multipliers (lambda(c), mu(c)) */
    /* models with source 000 Eq. 10 features (the view's ext: ode states X, implicit variables Z, forces of
     * multipliers): ext = 1 and the dense Jacobian of the ne = n + nX + nZ dynamic rows [R; d; zeq]
     * (EOM, ode, implicit variables) with respect to every unknown block, and the outputs' X, der(X)
     * and Z columns; NULL otherwise */
    int ext, nX, nZ, ne;
    double *Ea, *El, *Em, *Ev, *Eq, *Exd, *Ez, *Ex, *Er; /* ne x (n, m, k, n, n, nX, nZ, nX, nr) */
    double *Yxd, *Yz, *Yx;                 /* ny x (nX, nZ, nX) */
    mbl_eval ev;
} mbl_blocks;

int lin_blocks_init(const mbl_model *md, const mbl_point *pt, mbl_blocks *B, mbl_status *st);
/* Re-evaluate the Jacobian values only (ev.jac) at (q, v, a, lambda, mu) without filling blocks. */
int lin_blocks_eval_jac(const mbl_model *md, const mbl_point *pt, const double *v, const double *lam,
                        const double *mu, double *jac, mbl_eval *ev, mbl_status *st);
void lin_blocks_free(mbl_blocks *B);
/* Dense block of a sparse expression Jacobian J with values val: rows [r0, r1), unknown columns
 * of block cb. out is (r1 - r0) x (block width), column-major. */
void lin_sjac_dense(const model_view *mv, const mbl_sjac *J, const double *val, int r0, int r1, int cb, double *out);

/* 1 when some output depends on the unknowns of block blk (MBL_BLK_A: accelerations, MBL_BLK_LAMBDA,
 * MBL_BLK_MU: multipliers). */
int lin_outputs_use(const model_view *mv, int blk);

/* Refuse models with more than opt->dense_n_max coordinates (the methods here are dense). */
int lin_require_dense(const mbl_model *md, const mbl_lin_options *opt, const char *method, mbl_status *st);

/* Independent constraint rows: QRCP of Phi_q^T (n x m) with every row of Phi_q scaled to unit
 * 2-norm first (a constraint's units do not decide the rank); rows[0..r-1] receives the pivoted
 * (independent) rows, *r the numerical rank (relative tolerance tol). rows has room for m. */
int lin_constraint_rank(const mbl_blocks *B, double tol, int *rows, int *r, mbl_status *st);
/* Scale every nonzero column of A (rows x cols, lda) to unit 2-norm in place. */
void lin_unit_columns(int rows, int cols, double *A, int lda);
/* The largest finite entry of the model's Jacobian values jacval, described into buf (cap bytes):
 * "6e+304 in the equation of motion of 'y', with respect to der(y) (the value comes from --set
 * C=1e300)"; "" when there is none. Returns buf. */
const char *lin_jac_largest(const mbl_model *md, const double *jacval, char *buf, size_t cap);
/* The refusal of an augmented matrix whose condition estimate cond exceeds cond_max (option
 * cond_max): one MBL_ESINGULAR line with both and the largest Jacobian entry (lin_jac_largest). */
int lin_cond_refusal(const mbl_model *md, const double *jacval, double cond, double cond_max, mbl_status *st);
/* Orthonormal basis of the null space of the rows X (nrow x n, ld nrow; rows scaled to unit norm
 * first): the last n - rank columns of the full Q (n x n) of the QRCP of X^T (relative tolerance
 * tol); rank, and the pivoted rows in piv (room for nrow). */
int lin_null_basis(int n, int nrow, const double *X, double tol, double *Q, int *piv, int *rank, mbl_status *st);
/* The velocity constraints' rows [Phi_q(rows[0..r-1]); A_nh] into X ((r + k) x n, ld r + k). */
void lin_velocity_rows(const mbl_blocks *B, const int *rows, int r, double *X);
/* The mass matrix on the tangent space of the independent constraints rows[0..r-1] and the
 * non-holonomic ones, T^T M T (T an orthonormal basis of null([Phi_q(rows); A_nh])): every direction
 * moves mass at least opt->state_tol times the largest diagonal entry of M, and scaled to unit
 * diagonal its reciprocal condition is at least opt->rcond_min; else a one-line MBL_ESINGULAR
 * refusal prefixed with method (a degree of freedom without mass: the constrained equations do
 * not determine the motion). */
int lin_tangent_mass(const mbl_blocks *B, const int *rows, int r, const mbl_lin_options *opt, const char *method,
                     mbl_status *st);
/* lin_constraint_rank, then a one-line MBL_ESINGULAR refusal "<method>: Phi_q has rank r < m ...:
 * <why>; use descriptor, penalty or nullspace" when the constraints are not independent. */
int lin_require_full_rank(const mbl_blocks *B, double tol, int *rows, int *r, const char *method, const char *why,
                          mbl_status *st);

/* The states of a reduction: positions S = s(q) (z0 = n - r) and velocities W = w(q, v)
 * (z1 = n - r - k), with the rows of their exact derivatives at the point (column-major, ld z0
 * for the position rows, z1 for the velocity rows):
 *   P = dS/dq, Pd_q = d(S')/dq, Pdd_v = d(S'')/dv, Pdd_q = d(S'')/dq          (z0 x n)
 *   Pw = dW/dv, Wq = dW/dq, Wd_v = d(W')/dv, Wd_q = d(W')/dq                    (z1 x n)
 * (d(S')/dv = P and d(W')/da = Pw). sdot = 1 when W = S' (then A = [0 I; ...] exactly). S and W
 * (may be NULL for states that are not the user's, e.g. tangent coordinates) say which states
 * they are, as in lin_select_states. */
typedef struct mbl_rstates {
    int z0, z1, sdot;
    mbl_state_ref *S, *W;
    double *P, *Pd_q, *Pdd_v, *Pdd_q;
    double *Pw, *Wq, *Wd_v, *Wd_q;
} mbl_rstates;

/* Allocate the rows of rs for z0, z1 (zeroed; S and W untouched). */
int lin_rstates_alloc(mbl_rstates *rs, int n, int z0, int z1);
void lin_rstates_free(mbl_rstates *rs);

/* The states of `augmented` (source 000 Eq. 20-22: lin_select_states, full pivoting, user states
 * preferred; with non-holonomic constraints the velocity states W are chosen among the
 * derivatives of the position states, user velocity states first) and their rows at the point.
 * selection (size selsize) receives what the selection did. */
int lin_states(const mbl_model *md, const mbl_blocks *B, const mbl_lin_options *opt, mbl_rstates *rs,
               char *selection, size_t selsize, mbl_status *st);

/* (Re)fill the rows of rs (S and W set) from user-state Jacobian values usjac (the part of a
 * tape_us evaluation after its 3 nus + 2 nuvs values). */
void lin_rstates_rows(const model_view *mv, mbl_rstates *rs, const double *usjac);

/* Value of position state i and velocity state i from a tape_us evaluation us and (q, v, a). */
double lin_rstates_S(const model_view *mv, const mbl_rstates *rs, int i, const double *us, const double *q);
double lin_rstates_W(const model_view *mv, const mbl_rstates *rs, int i, const double *us, const double *v);

/* State names as `augmented` gives them (S names, then "der(S)" or the velocity state's text). */
int lin_state_names(const mbl_model *md, mbl_linear *lin, const mbl_rstates *rs);

/* The opening of the dense methods (partition, nullspace, projection, fd; after lin_require_dense):
 * the dense blocks B at pt and *rows, room for the m constraint rows (the caller frees both; on an
 * error nothing is left). */
int lin_dense_open(const mbl_model *md, const mbl_point *pt, mbl_blocks *B, int **rows, mbl_status *st);
/* Their states (partition, projection, fd): the *r independent constraint rows (or the refusal of
 * lin_require_full_rank with method and why), the states of augmented rs with the selection sel
 * (lin_states); at a point with motion whose velocity states are speeds (lin_states_frozen,
 * *frozen = 1), us receives those states and rs the position states with their rates instead. The
 * caller frees rs and us, also after an error. */
int lin_dense_states(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, const mbl_blocks *B,
                     const char *method, const char *why, int *rows, int *r, mbl_rstates *rs, mbl_rstates *us,
                     int *frozen, char *sel, size_t selsize, mbl_status *st);

/* The kinematic sensitivities of a reduction (n rows each): dq = Qs dS, dv = Qw dW + Vs dS,
 * da = Qw dW' + Ha dW + Ga dS + Ra dr. */
typedef struct mbl_rkin {
    double *Qs, *Vs, *Ga;  /* n x z0 */
    double *Qw, *Ha;       /* n x z1 */
    double *Ra;            /* n x nr */
} mbl_rkin;
void lin_rkin_free(mbl_rkin *K);

/* The reduction engine. The positions complete the r independent constraint rows to the regular
 * Jc = [Phi_q(rows, :); P], the velocities the velocity constraints to the regular
 * Jv = [Phi_q(rows, :); A_nh; Pw]. With Qs = Jc^-1 [0; I] and Qw = Jv^-1 [0; 0; I] the velocity and
 * acceleration perturbations follow exactly from the linearized velocity and acceleration
 * constraints (and the states' own rows), and projecting the linearized equations of motion on Qw
 * (which removes lambda and mu) gives
 *   M-hat = Qw^T M Qw, C-hat = Qw^T (M Ha + Rv Qw), K-hat = Qw^T (M Ga + Rv Vs + Rq Qs),
 *   F = -Qw^T (M Ra + Rr),
 * and S' = (P Vs + Pd_q Qs) S + P Qw W (source 000 Eq. 6-9 when P selects coordinates; source 003
 * Eq. 4.7-4.13 when P = T^T is an orthonormal tangent basis). Rq may be replaced by Rq_use (NULL:
 * B->Rq; then the outputs of the multipliers are left to the caller: lin_reduce_multipliers). Fills A, B, C, D, M, Cd, K, F, q_S (= Qs), v_W (= Qw) and cond of lin (allocated by the
 * caller with z0, z1). Outputs of the multipliers take (dlambda, dmu) from the linearized equations
 * of motion, Phi_q^T dlambda + A_nh^T dmu = -(M da + Rv dv + Rq dq + Rr dr), solved with Jv^T;
 * they need r == m, else an error. kin (may be NULL) receives the kinematic
 * sensitivities (the caller frees them with lin_rkin_free), Jv_lu_out (may be NULL; the caller
 * frees it) the factorization of Jv. */
int lin_reduce(const mbl_blocks *B, const int *rows, int r, const mbl_rstates *rs, const double *Rq_use,
               double rcond_min, mbl_linear *lin, mbl_rkin *kin, mbla_dlu **Jv_lu_out, mbl_status *st);

/* The outputs of the multipliers of a finished reduction whose lin_reduce had Rq_use (projection):
 * lin->C, D += Ylam dlambda + Ymu dmu, with da = [Ga Ha Ra] + Qw [A21 A22 B2] from the method's own A
 * and B (in the states of K) and Phi_q^T dlambda + A_nh^T dmu = -(M da + Rv dv + Rq dq + Rr dr) (the
 * rows R^T removes) solved with Jv^T (Jv_lu: lin_reduce's Jv_lu_out); Rq (n x n) the EOM rows'
 * q-Jacobian at the multipliers the method recovered. Needs r == m (MBL_ESINGULAR otherwise). */
int lin_reduce_multipliers(const mbl_blocks *B, const int *rows, int r, const mbl_rkin *K, const mbla_dlu *Jv_lu,
                           const double *Rq, mbl_linear *lin, mbl_status *st);

/* lin_reduce in the states ts (e.g. tangent coordinates), the result reported in the states us
 * (S = s(q), W = w(q, v); the same counts) by the exact change of the kinematic sensitivities:
 * with G = P Qs, Hw = Pw Qw, H21 = Pw Vs + Wq Qs and L = d(W')/d(old states, inputs) at fixed
 * old-state accelerations, Qs' = Qs G^-1, Qw' = Qw Hw^-1, Vs' = (Vs - Qw' H21) G^-1,
 * [Ga' Ha'] = ([Ga Ha] - Qw' L_x) H^-1, Ra' = Ra - Qw' L_u (at a point with motion the states'
 * second derivatives enter through L and H21); then M, C, K are projected with Qw' from the full
 * matrices as in lin_reduce (no products that cancel on stiff models). Rq is B->Rq. */
/* The kinematic part of lin_reduce: Jc = [Phi_q(rows); P], Jv = [Phi_q(rows); A_nh; Pw] (factored:
 * *luv, with the row scales dv), the sensitivities K (the caller frees them with lin_rkin_free and
 * *luv with mbla_dlu_free), *cond the larger of the two scaled condition estimates. */
int lin_reduce_kin(const mbl_blocks *B, const int *rows, int r, const mbl_rstates *rs, double rcond_min, mbl_rkin *K,
                   mbla_dlu **luv, double *dv, double *cond, mbl_status *st);

/* The dynamic part of a reduction of a model with Eq. 10 features (B->ext), from the kinematic
 * sensitivities kin of lin_reduce (in the states rs, r == m independent constraint rows): the
 * linearized dynamic rows [R; d; zeq] (EOM, ode, implicit variables) with da = Qw dW' + Ga dS +
 * Ha dW + Ra dr, dv = Vs dS + Qw dW, dq = Qs dS are solved for (dW', dlambda, dmu, der(dX), dZ)
 * per column of [S, W, X, r] (a square system: n + nX + nZ equations and unknowns), so forces,
 * ode rows and outputs may depend on the multipliers, der(X) and Z. x = [S; W; X]: A, B, C, D as
 * augmented's; M-hat = Qw^T M Qw, C-hat = -M-hat dW'/dW, K-hat = -M-hat dW'/dS, F = M-hat dW'/dr
 * (source 000 Eq. 29-30 with X held, as augmented). With Rq_use (projection) the EOM rows are
 * projected on Qw instead (the multipliers eliminated; needs forces free of multipliers and ode and
 * implicit-variable rows free of them, else MBL_EMODEL), their q columns are Rq_use and Kx (z1 x z0,
 * may be NULL) is added to the projected rows' S columns; the outputs of the multipliers are then
 * taken from the EOM rows at the solved perturbations (Eq at the point's multipliers) with Jv_lu (the
 * unscaled Jv, rows: its constraint rows), and left out when Jv_lu is NULL. lin has zx = nX. */
int lin_reduce_finish_ext(const mbl_blocks *B, int r, const mbl_rstates *rs, const mbl_rkin *K, const double *Rq_use,
                          const double *Kx, const int *rows, const mbla_dlu *Jv_lu, double rcond_min, mbl_linear *lin,
                          mbl_status *st);
/* 1 when the model's multipliers enter its dynamic rows only as the reactions Phi_q^T lambda +
 * A_nh^T mu (structurally: the EOM rows' multiplier columns are the constraint Jacobian's nodes,
 * and neither the ode nor the implicit-variable rows use them). */
int lin_multipliers_reactions_only(const mbl_model *md);
/* The largest distance from an eigenvalue of A1 (nx x nx) to the nearest of A2's (w: 4 nx
 * doubles); INFINITY when an eigenvalue solve fails (common.c). */
double lin_spec_dist(int nx, const double *A1, const double *A2, double *w, mbl_status *st);

int lin_reduce_change(const mbl_blocks *B, const int *rows, int r, const mbl_rstates *ts, const mbl_rstates *us,
                      double rcond_min, mbl_linear *lin, mbl_status *st);

/* Generalized speeds at a point with motion (docs/linearization.md): velocity states W = w(q, v)
 * that are not the position states' rates S' make the linearized equations time-varying in
 * (S, W) when their map from (S, S') moves along the motion (a spinning body's body-frame transverse
 * rates turn with the spin): the instantaneous Jacobian in (S, W) then has no modal meaning. The
 * linear model is taken in (S, S', X) instead and changed to (S, W, X) by the constant map H at the
 * point (W = H21 S + Hw S'): A = H A_ref H^-1, B = H B_ref, C = C_ref H^-1, M, C, K likewise.
 * lin_states_frozen: 1 when that applies (a point with motion, holonomic, z0 == z1, some W a user
 * velocity state). lin_rstates_rates: ref = the states S with W = S' (rows filled at B's point).
 * lin_frozen_change: lin (in ref's states) changed to us's. */
int lin_states_frozen(const mbl_model *md, const mbl_point *pt, const mbl_state_ref *W, int z0, int z1);
int lin_rstates_rates(const mbl_blocks *B, const mbl_rstates *us, mbl_rstates *ref);
int lin_frozen_change(const mbl_blocks *B, const int *rows, int r, const mbl_rstates *us, const mbl_rstates *ref,
                      double rcond_min, mbl_linear *lin, mbl_status *st);

/* The states' test, the same in every method that takes the user's states and in sweeps (issue 30,
 * item 1; docs/linearization.md "States that stop describing the motion"), on a finished linear
 * model lin (M-hat, v_W) and the Jacobian values jacval at its point: every velocity state must move
 * mass, M-hat_ii > 0, and relative to the model's own mass scale, M-hat_ii >= state_tol m_max
 * |dv/dW_i|^2 (m_max the largest diagonal entry of M = dR/dvdot; free of the states' and the mass
 * unit); and M-hat scaled to unit diagonal must be regular (rcond_min). MBL_ESINGULAR naming the
 * state otherwise. Allocates only for a non-dominant M-hat of more than one state. */
int lin_check_states(const mbl_model *md, const double *jacval, const mbl_linear *lin, const mbl_lin_options *opt,
                     mbl_status *st);
/* The same with the Jacobian entries of M's diagonal listed once (lin_mass_diag: mdiag holds at
 * most n entries; their count returned), for a loop over points (mbl_relinearize). */
int lin_mass_diag(const model_view *mv, int *mdiag);
/* The first coordinate without mass that no constraint holds at the Jacobian values jacval, or -1
 * (named when the augmented matrix is singular). */
int lin_massless_coordinate(const mbl_model *md, const double *jacval);
/* " (the value comes from --set name=value)" when coordinate c's mass M(c, c) depends on a parameter
 * --set gave a value at load (model_jac_set_note), "" otherwise; buf holds cap bytes */
const char *lin_mass_set_note(const mbl_model *md, int c, char *buf, size_t cap);
int lin_check_states_at(const mbl_model *md, const double *jacval, const int *mdiag, int nmdiag,
                        const mbl_linear *lin, const mbl_lin_options *opt, mbl_status *st);
/* The same without the last test (M-hat scaled to unit diagonal regular), for a caller that makes
 * it with a factorization of its own (relin_dense.c: Cholesky). */
int lin_check_states_mass(const mbl_model *md, const double *jacval, const int *mdiag, int nmdiag,
                          const mbl_linear *lin, const mbl_lin_options *opt, mbl_status *st);
/* opt->state_tol, or its default 1e-10 when not positive. */
double lin_state_tol(const mbl_lin_options *opt);

/* 1 when the point has nonzero velocities or accelerations (not an equilibrium): there the
 * spectrum of a linearization depends on the states chosen. */
int lin_point_moving(const mbl_point *pt);

/* Text for the notes of methods whose states are not the user's at a point with motion. */
#define MBL_MOVING_NOTE                                                                              \
    "; point with motion: these states differ from the user's and the spectrum of a linearization "  \
    "away from equilibrium depends on the states"

/* Fill state names (pos[i] and "der(pos[i])"), input and output names. */
int lin_set_names(const mbl_model *md, mbl_linear *lin, const char *const *pos);

/* Allocate the method-provided spectrum of lin (lin->spectrum: neig eigenvalues, n x neig shapes). */
int lin_alloc_eigs(mbl_linear *lin, int neig);
/* Allocate lin->descriptor (order nd, its matrices NULL) when it is not there yet; set its order. */
int lin_alloc_descriptor(mbl_linear *lin, int nd);

/* opt with the options of the other methods left at 0 (a zero-initialized struct) at their defaults,
 * into out. */
void lin_options_complete(const mbl_lin_options *opt, mbl_lin_options *out);
/* MBL_EARG for an option no computation can honour (negative or not finite) */
int lin_options_check(const mbl_lin_options *o, mbl_status *st);

/* Methods. */
int lin_partition(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, mbl_linear **out,
                  mbl_status *st);
int lin_nullspace(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, mbl_linear **out,
                  mbl_status *st);
int lin_projection(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, mbl_linear **out,
                   mbl_status *st);
/* `descriptor` (src/lin/descriptor.c), composed in src/lin/methods.c. lin_descriptor_path: which
 * path it takes for md at pt (LIN_DESC_DENSE: QZ, LIN_DESC_SPARSE: the sparse pencil), or its
 * refusal (negative). lin_descriptor: the dense pencil at pt attached to lin (the state-space form
 * of another method): lin->descriptor, lin->spectrum and lin->notes. */
enum { LIN_DESC_DENSE = 0, LIN_DESC_SPARSE = 1 };
int lin_descriptor_path(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, mbl_status *st);
int lin_descriptor(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, mbl_linear *lin,
                   mbl_status *st);
int lin_penalty(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, mbl_linear **out,
                mbl_status *st);
int lin_fd(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, mbl_linear **out,
           mbl_status *st);

/* ---- large models without dense matrices (the budget: src/lin/budget.c; the pencil:
 * src/lin/sparse_pencil.c) ---- */

/* Peak memory in bytes of the dense path of `method` (NULL: augmented) with its whole spectrum:
 * the result (A..D, M, C, K, F, q_S, v_W), the method's work arrays (augmented: X, N x (nx + nr)),
 * the eigen-solve (a copy of A, eigenvectors, mode shapes). An estimate from n, m, k, nr, ny and
 * the constraint rank at pt (pt may be NULL). */
double lin_dense_bytes(const mbl_model *md, const mbl_point *pt, const char *method);
/* Peak memory in bytes of the partial spectrum of nev eigenvalues by the sparse pencil. */
double lin_sparse_bytes(const mbl_model *md, int nev);
/* opt->mem_budget, or MBL_MEM_BUDGET_DEFAULT when it is not positive. */
double lin_mem_budget(const mbl_lin_options *opt);
/* The one-line MBL_ENOMEM refusal "<what> needs about X GiB, over the memory budget of Y GiB
 * (mem_budget): <hint>". */
int lin_refuse_memory(const char *what, double need, double budget, const char *hint, mbl_status *st);

/* The linearized-DAE pencil of source 001 Eq. 8, sparse, in x = [dq; dv; dlambda] (order
 * nd = 2n + m): A = Ad, E, and with want_io the dense Bd (nd x nr) and Cdd (ny x nd); scale is the
 * constraint scale s. Holonomic models at regular points only. */
typedef struct mbl_sparse_pencil {
    int nd, n, m;
    double scale;
    mbla_csc *A, *E;
    double *Bd, *Cdd;
} mbl_sparse_pencil;
int lin_sparse_pencil_build(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, int want_io,
                            mbl_sparse_pencil *P, mbl_status *st);
void lin_sparse_pencil_free(mbl_sparse_pencil *P);

/* The partial spectrum: the min(opt->nev, 2(n - m), nd - 2) eigenvalues nearest opt->shift of the
 * sparse pencil (ARPACK shift-invert) with the coordinate parts of their eigenvectors, into *lin:
 * an existing linear model (its state-space form kept) or, when *lin is NULL, a new one whose
 * state-space and MCK forms are not formed (A, B, C, D, M, Cd, K, F, q_S, v_W and state_names
 * NULL). Fills lin->spectrum (with partial, shift, solver, reason = reason), lin->descriptor (nd, Bd
 * and Cdd when small), method and notes. Refuses up front (MBL_ENOMEM) when it would exceed the memory
 * budget. */
int lin_sparse_spectrum(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, const char *method,
                        const char *reason, mbl_linear **lin, mbl_status *st);

/* A linear model whose state-space and MCK forms are not formed: sizes (z0 = z1 = z, nx = 2z) and
 * names of inputs and outputs only (docs/linearization.md); NULL when out of memory. */
mbl_linear *lin_linear_shell(const mbl_model *md, int z);

/* `penalty` on large models (src/lin/penalty_sparse.c): lin_penalty_path says which path a request
 * takes: 0 the dense QZ of lin_penalty, 1 the sparse penalty pencil (nev asked for, or its order 2n
 * above dense_max on a model it takes: holonomic constraints, a regular point at rest), 2 the dense
 * one for a nev ARPACK cannot give on the pencil (more than 2n - 2 eigenvalues: no constraints),
 * negative: the refusal of a nev it cannot honour (the dispatch also takes the dense one when the
 * sparse path returns MBL_ENOCONV, fewer physical ones found than wanted, and the dense fits). lin_penalty_sparse: the min(nev, 2(n - m)) physical eigenvalues
 * nearest the shift, their mode shapes and error estimates (state-space and MCK forms not formed);
 * reason: why the spectrum is partial ("" when asked for). */
/* The penalty ODE's state-space and MCK forms alone (A, B, C, D, M, Cd, K, F, q_S, v_W and names;
 * no spectrum), dense: for the sparse path when they fit the memory budget. Not for Eq. 10 models. */
int lin_penalty_state_space(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, mbl_linear **out,
                            mbl_status *st);
int lin_penalty_path(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, mbl_status *st);
/* B: the blocks at the penalty system's own rest point near pt (opt->pen_equilibrium, src/lin/penalty_equil.c),
 * lambda = alpha omega^2 Phi there; moved: max |q - pt->q|, viol: max |Phi| there. */
int lin_penalty_equilibrium(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, mbl_blocks *B,
                            double *moved, double *viol, mbl_status *st);
int lin_penalty_sparse(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, const char *reason,
                       mbl_linear **out, mbl_status *st);
/* The penalty ODE's mass matrix M_p = M + alpha Phi_q^T Phi_q and the matrix its sparse path factors,
 * Q(sigma) = K_p + sigma C_p + sigma^2 M_p, in CSC at the options' alpha, xi, omega (src/lin/sparsity.c) */
int lin_penalty_sparse_matrices(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, double sigma,
                                mbla_csc **Mp, mbla_csc **Qs, mbl_status *st);
/* The penalty's rows with general Xi, Theta, Omega (src/lin/penalty_mats.c): Pl = Xh Phi_q (Phi_q
 * itself without pen_Xi), Pv = dPhi''/dv + Theta Phi_q, Pk = dPhi''/dq + Theta dPhi'/dq + Omega Phi_q
 * (m x n each); Xh = Xi / alpha (m x m, NULL without pen_Xi: the identity), xnorm its 1-norm (0 then).
 * lin_pen_check: the given matrices' order and symmetry and definiteness, one line naming the matrix;
 * lin_pen_general: nonzero when some matrix is given; lin_pen_rows_apply: L(0:m, 0:nc) = Xh L (ld). */
typedef struct lin_pen_rows {
    const double *Pl, *Xh;
    double *Pv, *Pk, *buf;
    double xnorm;
} lin_pen_rows;
int lin_pen_check(const mbl_lin_options *opt, int m, mbl_status *st);
int lin_pen_general(const mbl_lin_options *opt);
/* Xh = Xi / alpha, Theta, Omega (m x m each): the symmetric parts of the given matrices, else the scalar
 * form (I, 2 xi omega I, omega^2 I); lin_pen_check first */
void lin_pen_dense(const mbl_lin_options *opt, int m, double *Xh, double *Th, double *Om);
int lin_pen_rows_init(const mbl_blocks *B, const mbl_lin_options *opt, lin_pen_rows *R, mbl_status *st);
void lin_pen_rows_free(lin_pen_rows *R);
int lin_pen_rows_apply(const lin_pen_rows *R, int m, int nc, double *L, int ld, mbl_status *st);
/* pen_equilibrium's run at alpha / pen_ratio for the error estimate: the blocks at that alpha's own
 * rest point and their rows (src/lin/penalty_equil.c); lin_pen_second_free frees both */
typedef struct lin_pen_second {
    mbl_blocks B;
    lin_pen_rows PR;
} lin_pen_second;
int lin_penalty_equilibrium_ratio(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt,
                                  lin_pen_second *S, mbl_status *st);
void lin_pen_second_free(lin_pen_second *S);
/* Refuses an alpha whose penalty mass alpha |Pl^T Phi_q|_1 is negligible against |M|_1 (PEN_ALPHA_NEGLIGIBLE) */
int lin_pen_alpha_check(const mbl_blocks *B, const lin_pen_rows *R, double alpha, mbl_status *st);

/* Error estimates of clustered eigenvalues (src/lin/eigsort.c; issue 30, item 9): eigenvalues whose
 * discs |s - s_i| <= err_i overlap, directly or through others, cannot be told apart within their
 * estimates, so each gets max over its cluster of |s_i - s_j| + err_j (a split double eigenvalue, a
 * near-zero beside a zero). An infinite estimate (a pair that could not be refined) stays infinite
 * and makes infinite those whose discs cover it, but has no disc of its own: the others keep theirs.
 * re, im, err (n); skip (may be NULL): eigenvalues left out (spurious). Errors: MBL_ENOMEM. */
int lin_err_clusters(int n, const double *re, const double *im, const int *skip, double *err, mbl_status *st);

#endif
