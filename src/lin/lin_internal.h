/* Shared pieces of the linearization methods. Internal to the library. */
#ifndef MBLIN_LIN_INTERNAL_H
#define MBLIN_LIN_INTERNAL_H

#include "model/model_view.h"

/* The advice of every refusal for a constraint Jacobian of deficient rank (redundant constraints or a
 * singular configuration): the methods that take one (issue 33, item 6) */
#define LIN_RANK_ADVICE                                                                                     \
    "use --method nullspace, descriptor or penalty, which take redundant constraints (descriptor needs no " \
    "states)"

/* A chosen state: an internal coordinate (or velocity) or a user state expression. */
typedef struct mbl_state_ref {
    int kind;  /* MBL_SREF_* */
    int index; /* coordinate index, user state index, or (for SDOT) position state index */
} mbl_state_ref;

enum {
    MBL_SREF_COORD = 0,    /* q_i (position level) or v_i (velocity level) */
    MBL_SREF_USER = 1,     /* user state s_j (position) or user velocity state w_j (velocity) */
    MBL_SREF_SDOT = 2      /* velocity level only: the time derivative of position state S_index */
};

/* Everything evaluated at one point: residual Jacobian values, user-state values and their
 * Jacobian values, output values and Jacobian values. */
typedef struct mbl_eval {
    model_view mv;      /* the model's sizes and patterns, read once (model_view_get) by lin_eval_init */
    double *syms;
    double *work;       /* work_cap doubles (mv.work_size + 1 unless lean) */
    const double *jac;  /* mv.jac.nz: jac_buf, or (lean) the values the point or the caller gave */
    double *us;         /* 3 nus + 2 nuvs values, then mv.usjac.nz Jacobian values */
    double *y;          /* ny values then mv.yjac.nz Jacobian values */
    double *jac_buf;    /* the evaluator's own Jacobian values (NULL until needed when lean) */
    size_t work_cap;
    int lean;
    /* when minv is set (relin_dense.c: a tree whose M is its bodies' alone, model_mass_inverse_ok),
     * each evaluation also gives M^-1 there (n x n by columns; mwork: model_mass_inverse_work
     * doubles; both the caller's), minv_rc 0, or 1 when M is not positive definite there */
    double *minv, *mwork;
    int minv_rc;
} mbl_eval;

int lin_eval_init(const mbl_model *md, mbl_eval *ev, mbl_status *st);
/* An evaluator for one call (its ev must not outlive pt nor the values given to lin_eval_at_given):
 * the Jacobian's values that the point holds (mbl_point.jac_memo) or the caller gives are read in
 * place, not copied, and work is sized for the tapes evaluated (the point's own values: the user
 * states' and the outputs' tapes, not the Jacobian's). Only ev->jac, us, y are for the caller;
 * ev->work is not (lin_eval_init's is). */
int lin_eval_init_lean(const mbl_model *md, mbl_eval *ev, mbl_status *st);
/* A lean evaluator's work array of need doubles and, unless given, its own Jacobian values' (eval.c) */
int lin_eval_lean_arrays(mbl_eval *ev, size_t need, int given, mbl_status *st);
int lin_eval_at(const mbl_model *md, const mbl_point *pt, mbl_eval *ev, mbl_status *st);
/* The same with the outputs' tape only when outputs is nonzero (a sweep that does not want C, D) */
int lin_eval_at_y(const mbl_model *md, const mbl_point *pt, mbl_eval *ev, int outputs, mbl_status *st);
/* The same with the model's Jacobian values at the point given (jac: the view's jac.nz values, as
 * model_eval_jac gives them at pt; NULL: evaluated here) */
int lin_eval_at_given(const mbl_model *md, const mbl_point *pt, mbl_eval *ev, int outputs, const double *jac,
                      mbl_status *st);
void lin_eval_free(mbl_eval *ev);

/* Dense (rows x cols, column-major) copy of the block of the residual Jacobian with row group
 * rg (MBL_ROW_*) and column block cb (MBL_BLK_*). */
void lin_jac_block(const model_view *mv, const double *jacval, int rg, int cb, double *out);

/* Choose the position-level states S (z0 of them) and the velocity-level states W (z1) by LU
 * with full pivoting on the weighted Jacobian of source 000 Eq. 22, preferring user states; a full
 * set of given states is tested first and used as given when it passes (src/lin/select.c,
 * given_states_pass). Writes what happened into lin->selection and the counts into lin. */
int lin_select_states(const mbl_model *md, const mbl_eval *ev, const mbl_lin_options *opt, mbl_linear *lin,
                      mbl_state_ref **S, int *z0, mbl_state_ref **W, int *z1, mbl_status *st);
/* The same with given_first 0: the full selection always, without the given states' test first
 * (src/lin/select.c, given_states_pass); lin_select_states is given_first 1. For the tests. */
int lin_select_states_how(const mbl_model *md, const mbl_eval *ev, const mbl_lin_options *opt, int given_first,
                          mbl_linear *lin, mbl_state_ref **S, int *z0, mbl_state_ref **W, int *z1, mbl_status *st);

int lin_augmented(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, mbl_linear **out,
                  mbl_status *st);

/* A new string: a alone (b NULL), or a, b and ")" (lin_name_join("der(", "x") = "der(x)"). */
char *lin_name_join(const char *a, const char *b);

/* Allocate a linear model with its arrays (names not filled). */
mbl_linear *lin_linear_alloc(int n, int z0, int z1, int nu, int ny);
/* The same with zx user ODE states (nx = z0 + z1 + zx). */
mbl_linear *lin_linear_alloc_x(int n, int z0, int z1, int zx, int nu, int ny);

#endif
