/* mblin: the canonical DAE of a model as workspaces for the studies (src/model: dae_deriv.c,
 * dae_eval.c), in one public layout of its rows and unknowns.
 *
 *   mbl_dae_deriv_new()  model -> compiled second derivatives of the DAE residual with respect to
 *                        the unknowns and the parameters (expression engine): the sensitivities
 *                        (include/mblin/sensitivity.h)
 *   mbl_dae_eval_new()   model -> the DAE residual, its exact sparse Jacobian and outputs at any
 *                        (t, unknowns), for an integrator (include/mblin/sim.h)
 *
 * Every function returns 0 or a negative MBL_E* code with a one-line message in `st`;
 * destructors accept NULL. Matrices are dense and column-major. */
#ifndef MBLIN_DAE_H
#define MBLIN_DAE_H

#include "mblin/export.h"

#include "mblin/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- derivatives of the canonical DAE (the model's residual, public layout) ------------------
 *
 * The residual F of a model (nF rows) is [R (n); d (nX); zeq (nZ); Phi'' (m); c' (k); Phi' (m);
 * c (k); Phi (m)]: R = M vdot + Phi_q^T lambda + A^T mu - Q the equations of motion, d the user
 * ODEs, zeq the implicit variables' equations, Phi the holonomic and c the non-holonomic
 * constraints with their time derivatives. Its unknowns x (nunk columns) are [vdot (n);
 * lambda (m); mu (k); v (n); q (n); Xdot (nX); Z (nZ); X (nX); r (nr inputs)] (the same order
 * as the model's internal layout, src/model/model_internal.h). J = dF/dx is sparse with a fixed
 * pattern (jrow, jcol). Parameters that are expressions of earlier ones follow them: every
 * derivative with respect to parameter j is the total one, the parameters computed from p_j
 * changing with it (except those overridden by --set, which are then constants). */
enum { MBL_DAE_EOM = 0, MBL_DAE_ODE, MBL_DAE_VAR, MBL_DAE_PHIDD, MBL_DAE_NHD, MBL_DAE_PHID, MBL_DAE_NH, MBL_DAE_PHI,
       MBL_DAE_NROWG };
enum { MBL_DAE_VDOT = 0, MBL_DAE_LAMBDA, MBL_DAE_MU, MBL_DAE_V, MBL_DAE_Q, MBL_DAE_XDOT, MBL_DAE_Z, MBL_DAE_X, MBL_DAE_R,
       MBL_DAE_NBLK };

typedef struct mbl_dae_layout {
    int n, m, k, nr, np;
    int nF, nunk;
    int row0[MBL_DAE_NROWG + 1]; /* first row of each row group, row0[MBL_DAE_NROWG] = nF */
    int col0[MBL_DAE_NBLK + 1];  /* first column of each block, col0[MBL_DAE_NBLK] = nunk */
    int jnz;                     /* entries of J */
    const int *jrow, *jcol;      /* their rows and columns (valid while the object lives) */
    int nus, nuvs;               /* the file's user states S = s(q, t) and velocity states W (linearize.states) */
} mbl_dae_layout;

/* Compiled once per model; immutable afterwards (any number of threads may evaluate it). It
 * differentiates the model's Jacobian once more symbolically, so the model's expression graph
 * grows (under the model's lock; the model's results are unchanged). */
typedef struct mbl_dae_deriv mbl_dae_deriv;
MBL_API int mbl_dae_deriv_new(const mbl_model *model, mbl_dae_deriv **out, mbl_status *st);
MBL_API void mbl_dae_deriv_free(mbl_dae_deriv *d);
MBL_API void mbl_dae_deriv_layout(const mbl_dae_deriv *d, mbl_dae_layout *lay);
/* The same restricted to the derivatives with respect to the parameters (dF/dp and the dependent
 * parameters' chain; no second derivatives: cheaper to make and to evaluate): for
 * mbl_dae_deriv_eval's J and Fp and mbl_dae_deriv_eval_param; x0p, mbl_dae_deriv_jac_dir and
 * mbl_dae_deriv_states' dSq are refused (MBL_EARG). A model with flexible bodies gets the full set. */
MBL_API int mbl_dae_deriv_new_param(const mbl_model *model, mbl_dae_deriv **out, mbl_status *st);
/* The model the derivatives belong to. */
MBL_API const mbl_model *mbl_dae_deriv_model(const mbl_dae_deriv *d);

/* At a point: J (jnz values), Fp (nF x np: dF/dp at fixed unknowns), x0p (nunk x np: the
 * derivative of the model file's data for the point: in the q block the coordinates' initial
 * values, in the v block the velocities the file gives, in the r block the inputs' values, 0
 * elsewhere). Any output may be NULL. */
MBL_API int mbl_dae_deriv_eval(const mbl_dae_deriv *d, const mbl_point *pt, double *J, double *Fp, double *x0p,
                       mbl_status *st);
/* Column `param` of mbl_dae_deriv_eval's Fp at a point (fp: nF values): the same numbers from the
 * same object; from a mbl_dae_deriv_new_param object the same to rounding (its tape holds fewer
 * outputs and is scheduled anew). Only the column's total derivatives of the dependent
 * parameters are formed. */
MBL_API int mbl_dae_deriv_eval_param(const mbl_dae_deriv *d, const mbl_point *pt, int param, double *fp,
                                     mbl_status *st);
/* The total derivative of J along a direction: dJ_e = sum_c dJ_e/dx_c dx[c] + dJ_e/dp_j
 * (dx: nunk values; param -1: none). */
MBL_API int mbl_dae_deriv_jac_dir(const mbl_dae_deriv *d, const mbl_point *pt, const double *dx, int param, double *dJ,
                          mbl_status *st);

/* The user states' position Jacobians at a point: Sq (3 nus x n, column-major) holds d/dq of
 * [s; ds/dt; d2s/dt2] (the total time derivatives along the point's motion, as the model's
 * linearization uses them) and, when dSq and dx are given, dSq their total derivative along
 * (dx, param) as mbl_dae_deriv_jac_dir (second derivatives of the states' expressions). */
MBL_API int mbl_dae_deriv_states(const mbl_dae_deriv *d, const mbl_point *pt, const double *dx, int param, double *Sq,
                         double *dSq, mbl_status *st);

/* The parameters' total derivatives with respect to parameters cols[0..ncols-1]: T (np x ncols,
 * column-major) T[i + np c] = dp_i / dp_cols[c], through the file's chain of parameters computed
 * from earlier ones (1 for cols[c] itself, 0 for the independent ones and those a setting
 * overrides), at the values of the point's model: the same total derivatives the sensitivities use. */
MBL_API int mbl_dae_deriv_param_chain(const mbl_dae_deriv *d, const mbl_point *pt, int ncols, const int *cols, double *T,
                                      mbl_status *st);
/* The same with the outputs' derivatives too (for mbl_dae_deriv_outputs: a frequency response's
 * peak to an output as an optimization goal, src/opt). Refused (MBL_EARG) for a model with a
 * structured term (a tree's or flexible bodies' rows: their outputs are evaluated numerically). */
MBL_API int mbl_dae_deriv_new_outputs(const mbl_model *model, mbl_dae_deriv **out, mbl_status *st);
/* The outputs' Jacobian at a point, Yx (ny x nunk, column-major: dy/dx over the unknowns above),
 * and (dYx and dx given) its total derivative along (dx, param) as mbl_dae_deriv_jac_dir's (the
 * outputs' second derivatives). Needs an object of mbl_dae_deriv_new_outputs when ny > 0. */
MBL_API int mbl_dae_deriv_outputs(const mbl_dae_deriv *d, const mbl_point *pt, const double *dx, int param, double *Yx,
                                  double *dYx, mbl_status *st);

/* ---- the residual of the canonical DAE for integrators --------------------------------------
 * x is the public unknown layout above ([vdot lambda mu v q Xdot Z X r], nunk values,
 * mbl_dae_layout.col0), F the residual rows (row0), J the values of dF/dx on the pattern
 * (jrow, jcol). The stabilization's extra terms: g = Phi_q^T w and H = d(w^T Phi)/dq dq (n x n,
 * sparse pattern hrow, hcol) with w given in the multiplier block (lambda) of x. A workspace is
 * for one thread at a time (it holds scratch arrays); the model may be shared. */
typedef struct mbl_dae_eval mbl_dae_eval;
MBL_API int mbl_dae_eval_new(const mbl_model *model, mbl_dae_eval **out, mbl_status *st);
MBL_API void mbl_dae_eval_free(mbl_dae_eval *e);
MBL_API void mbl_dae_eval_layout(const mbl_dae_eval *e, mbl_dae_layout *lay);
MBL_API const mbl_model *mbl_dae_eval_model(const mbl_dae_eval *e);
MBL_API void mbl_dae_eval_hessian_pattern(const mbl_dae_eval *e, int *nz, const int **hrow, const int **hcol);
MBL_API int mbl_dae_eval_residual(mbl_dae_eval *e, double t, const double *x, double *F, mbl_status *st);
MBL_API int mbl_dae_eval_jacobian(mbl_dae_eval *e, double t, const double *x, double *J, mbl_status *st);
MBL_API int mbl_dae_eval_outputs(mbl_dae_eval *e, double t, const double *x, double *y, mbl_status *st);
MBL_API int mbl_dae_eval_phi_t(mbl_dae_eval *e, double t, const double *x, double *g, mbl_status *st);
MBL_API int mbl_dae_eval_hessian(mbl_dae_eval *e, double t, const double *x, double *H, mbl_status *st);

#ifdef __cplusplus
}
#endif
#endif
