/* The augmented method's sweep workspace, shared by augmented.c (the method, the workspace's
 * first point), augmented_finish.c (from its solutions to the linear model) and relin.c
 * (mbl_relinearize: one factorization per point, frozen scaling). */
#ifndef MBL_LIN_AUGMENTED_INTERNAL_H
#define MBL_LIN_AUGMENTED_INTERNAL_H

#include "lin/lin_internal.h"
#include "mblin/la.h"

/* rows of the user-state Jacobian: value of d(row)/d(unknown col) at the point */
typedef struct sparse_rows {
    int *ptr, *col;
    int *src;   /* index of each entry in the Jacobian's value array (for refills) */
    double *val;
} sparse_rows;

/* Right-hand sides are solved in blocks of this many columns (a model with thousands of states
 * never holds its N x (2z + nr) solution at once). */
#define AUG_RHS_BLOCK 256
/* v_W^T times a matrix is taken over the nonzeros of v_W when at most this fraction of it is
 * nonzero (coordinate states of a large model: v_W is mostly a selection), else by dgemm. */
#define AUG_SPARSE_VW 0.125
/* Entries in the lists of v_W's nonzeros (augmented_finish.c's vw_index) for n x z1 */
static inline size_t aug_vw_cap(int n, int z1)
{
    return (size_t)(AUG_SPARSE_VW * (double)n * (double)z1) + 1;
}

/* Source of a triplet value: >= 0 an index into the residual Jacobian's values, <= -2 the
 * user-state Jacobian entry -src-2, -1 the constant 1. */
#define TSRC_ONE (-1)

/* The arrays of a workspace's part: in one block, or (a large workspace) each on its own */
#define AUG_ALLOC_PARTS 16
typedef struct aug_alloc {
    void *block;
    void *part[AUG_ALLOC_PARTS];
    int n;
} aug_alloc;

struct mbl_lin_work {
    const mbl_model *md; /* read through ev.mv (the view) */
    mbl_lin_options opt;
    mbl_eval ev;
    mbl_state_ref *S, *W;
    int z0, z1, N, nrhs, nz;
    int *ti, *tj, *tsrc, *map;
    double *tx, *X, *dS, *dW, *dXd, *MvW, *tmpy;
    double *er, *ec, *ework; /* equilibration: Aug holds diag(er) A diag(ec) (see equilibrate) */
    /* the kinematic system (see the opening comment): 3n x 3n, columns [vdot; v; q], rows
     * [Phi''; c'; Phi'; c; Phi; S; W; dW/dt]; Xk its solution for S-bar and W-bar, G the EOM rows
     * times it */
    int kin, Nk, nzk, xcols, kcols;
    int *kti, *ktj, *ktsrc, *kmap, *vw_ptr, *vw_row;
    int ng, *gent; /* the Jacobian entries in EOM rows with a kinematic column: (entry, row, column) */
    double *ktx, *Xk, *G, *kr, *kc, *kwork;
    mbla_csc *Kin;
    mbla_klu *klu_k;
    sparse_rows U, Y;
    mbla_csc *Aug;
    mbla_klu *lu;
    int nfact;
    /* sweeps (relin.c): the triplets' scale factors er x ec (ker x kec) frozen at the first point;
     * the one-factorization path (direct) and its dense M-hat factors, right-hand sides and scratch */
    double *tsc, *ktsc, *ywork;
    unsigned char *tfirst, *ktfirst; /* 1: the triplet is the first into its matrix entry */
    int *mdiag, nmdiag;              /* the Jacobian entries of M's diagonal (lin_mass_diag) */
    int direct;
    int small_vw;                    /* v_W^T B by a loop, not dgemm (relin.c: small models) */
    mbla_dlu *mlu;
    /* the unconstrained tree's dense path (relin_dense.c): chosen at the first point; the
     * Jacobian entries (desrc) and their offsets (dedst: the first ndm into M in dbuf, n x n, then
     * up to ndk into K-hat, up to ndc into C-hat and up to nde, negated, into F: F in dbuf after M,
     * K-hat and C-hat in the result or, when their pattern does not fill them, in dbuf after F) */
    int dense, nde, ndm, ndk, ndc;
    int *desrc, *dedst, *diwork;
    int *dcptr, *dcrow; /* the right-hand sides' pattern, by column */
    double *dbuf;
    /* a tree whose M is its bodies' alone (model_mass_inverse_ok): M^-1 by the articulated-body
     * recursion at each evaluation (w->ev.minv = dminv, n x n; dmwork its work) instead of a
     * factorization of M */
    double *dminv, *dmwork;
    /* and when every other Jacobian value is a constant (model_mass_dense_ok): the tree's entries
     * added straight into dkcm (K-hat, C-hat, M: n x n each, by columns) at each evaluation
     * (aug_dense_eval), which starts from dtpl (the constants' K-hat, C-hat and M as the gathers
     * above leave them, then F, n x nr); ddiag: M's diagonal in M; ddone: this point's evaluation
     * went so (w->ev.jac not made) */
    int ddirect, ddone;
    double *dkcm, *dtpl;
    int *ddiag;
    aug_alloc wa, ka; /* the allocations of work_prepare's arrays (ti .. ework), of kin_prepare's */
    /* a sweep's workspace (mbl_lin_work_new): it keeps the triplets, their maps and the matrices for
     * the next points; a one-shot's (0) drops each as soon as the factorizations no longer need it,
     * and reads the Jacobian's values in place (lin_eval_init_lean) */
    int sweep;
};

/* Column of the kinematic system for an unknown of the augmented one: vdot, v, q; -1 for the others.
 * Inline, on the view's block offsets (model_view.blk0): called for every Jacobian entry (about 7 k
 * instructions of calls in a 2-link chain's one-shot). */
static inline int aug_kin_col(const model_view *mv, int c)
{
    int n = mv->n, ja = mv->blk0[MBL_BLK_A], jv = mv->blk0[MBL_BLK_V], jq = mv->blk0[MBL_BLK_Q];
    if (c >= ja && c < ja + n) return c - ja;
    if (c >= jv && c < jv + n) return n + c - jv;
    if (c >= jq && c < jq + n) return 2 * n + c - jq;
    return -1;
}

/* augmented.c */
void aug_fill_values(const mbl_lin_work *w, int nz, const int *tsrc, double *tx);
void aug_rows_refill(sparse_rows *R, int nrows, const double *val);
int aug_singular_error(mbl_status *st, double cond);
int aug_kin_singular_error(mbl_status *st, double cond);
/* augmented_finish.c */
int aug_finish(mbl_lin_work *w, mbl_linear *lin, mbl_status *st);
int aug_finish_dS_init(const mbl_lin_work *w);
void aug_finish_post_block(mbl_lin_work *w, mbl_linear *lin, int j0, int nb, int exact_sdot);
void aug_finish_assemble(const mbl_lin_work *w, mbl_linear *lin);
int aug_finish_mck(mbl_lin_work *w, mbl_linear *lin, mbl_status *st);

/* relin.c: after the workspace's first linearization, freeze the scaling and choose the path */
int aug_relin_prepare(mbl_lin_work *w, const mbl_linear *lin, mbl_status *st);
/* relin.c: the one-factorization path's conditions on the pattern (the kinematic system, no ode
 * states, every right-hand side in one block, inputs only in the equations of motion, outputs and
 * user states without multipliers), its numerical one (v_W^T R_lambda = 0 to rounding, v_W known),
 * and its solve (aug_finish_mck done, M-hat factored in w->mlu, w->ywork z1 x nrhs) */
int aug_direct_structural(const mbl_lin_work *w);
int aug_multipliers_projected_out(const mbl_lin_work *w, const mbl_linear *lin, mbl_status *st, int *ok);
int aug_direct_finish(mbl_lin_work *w, mbl_linear *lin, mbl_status *st);

/* relin_dense.c: the unconstrained tree's path (w->dense); aug_dense_relin returns 1 where M is not
 * symmetric positive definite (then the general path), else 0 or an error */
int aug_dense_prepare(mbl_lin_work *w, mbl_status *st);
int aug_dense_relin(mbl_lin_work *w, mbl_linear *lin, mbl_status *st);
/* relin_dense.c: a one-shot's (lin from the general path at the point in w->ev) responses again by
 * the tree's articulated bodies when the model's mass is theirs alone (model_mass_inverse_ok) and
 * the dense path applies; otherwise lin stays as it is */
int aug_dense_oneshot(mbl_lin_work *w, mbl_linear *lin, mbl_status *st);
/* The point's evaluation straight into the dense matrices (w->ddirect): syms from pt, then
 * model_eval_dense_minv, the user states' rows; w->ddone 1 when it went so, 0 when the point keeps
 * Jacobian values the evaluation would take (pt->jac_memo, not a tree with outputs: the caller
 * evaluates as before). 0 or an error. */
int aug_dense_eval(mbl_lin_work *w, const mbl_point *pt, int outputs, mbl_status *st);

#endif
