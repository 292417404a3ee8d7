/* The model as the floors above src/model read it (src/opoint, src/lin, src/codegen): the layout of the
 * canonical DAE's unknowns and rows, and a view of a loaded model's sizes, file data and
 * expressions (model_view_get) with the evaluators they need, through functions: the struct
 * mbl_model itself stays inside src/model (model_internal.h). */
#ifndef MBLIN_MODEL_MODEL_VIEW_H
#define MBLIN_MODEL_MODEL_VIEW_H

#include <stddef.h>

#include "mblin/dae.h"
#include "mblin/expr.h"
#include "mblin/model.h"

/* Blocks of unknowns of the canonical DAE, in the column order of every Jacobian below: the
 * user ODE states' derivatives Xdot (nX), the implicit algebraic variables Z (nZ) and the user
 * ODE states X (nX) of source 000 Eq. 10 sit between q and the inputs (empty blocks without them). */
enum { MBL_BLK_A = 0, MBL_BLK_LAMBDA, MBL_BLK_MU, MBL_BLK_V, MBL_BLK_Q, MBL_BLK_XD, MBL_BLK_Z, MBL_BLK_X, MBL_BLK_R,
       MBL_NBLK };
/* Row groups of the residual vector F = [R; d; zeq; Phidd; nhd; Phid; nh; Phi]: d the user ODEs
 * (nX), zeq the implicit variables' equations (nZ). */
enum { MBL_ROW_EOM = 0, MBL_ROW_ODE, MBL_ROW_VAR, MBL_ROW_PHIDD, MBL_ROW_NHD, MBL_ROW_PHID, MBL_ROW_NH, MBL_ROW_PHI,
       MBL_NROWG };

/* A sparse Jacobian of expressions: entries (row, col, node); columns are unknown indices in
 * the layout [a(n) lambda(m) mu(k) v(n) q(n) Xdot(nX) Z(nZ) X(nX) r(nr)]. */
typedef struct mbl_sjac {
    int nz, cap;
    int *row, *col;
    mblx_id *node;
} mbl_sjac;

/* A loaded model's data, read only, valid while the model lives (the arrays are the model's). */
typedef struct model_view {
    const char *file;
    mblx_graph *g;               /* the expression graph: read or grown only under model_graph_lock */
    int n, m, k, nr, ny, np;     /* coordinates, holonomic and non-holonomic constraints, inputs,
                                    outputs, parameters */
    int nX, nZ, nspd;            /* user ODE states, implicit variables, generalized speeds */
    int nus, nuvs;               /* user states s(q,t) and velocity states w(q,v,t) */
    int nF, nunk, nsym;          /* residual rows, unknowns, symbols */
    size_t work_size;            /* doubles of work for the evaluators (model_eval_F, _jac, ...) */
    const int *row0;             /* MBL_NROWG + 1: first row of each row group */
    mbl_sjac jac;                /* the residual Jacobian's pattern (dF/d[unknowns]) */
    mbl_sjac usjac;              /* the user states' Jacobian pattern (model_eval_user_states) */
    /* symbols: t, parameters, coordinates, velocities, accelerations, multipliers, inputs */
    mblx_id t;
    const mblx_id *p, *q, *v, *a, *lam, *r;
    const mblx_id *y;            /* ny output expressions */
    const mblx_id *us;           /* nus user-state expressions s(q,t) */
    const char *const *pname, *const *qname, *const *rname, *const *yname, *const *us_text;
    const double *pval;          /* parameter values */
    /* the file's operating-point data */
    const double *q0, *v0, *r0, *X0;
    const int *cyclic;           /* n: 1 when no residual depends on q_i */
    /* held velocities of `at: given` (model/held.c): v_given (n) 1 for the coordinates whose rate
     * the file gives and holds, 2 where the file's rate is a start only; nheld conditions h_j(q, v, t) = held_val[j] keyed by an expression, their labels
     * and gradient pattern (entries held_gp[j] .. held_gp[j+1] - 1 in the coordinates held_gi) */
    const int *v_given;
    int nheld;
    const char *const *held_label;
    const double *held_val;
    const int *held_gp, *held_gi;
    /* trim (model/trim.c): ntt targets, their labels, values and gradient patterns over the unknowns
     * (entries tt_gp[j] .. tt_gp[j+1] - 1 in the unknown columns tt_gi); the accelerations' patterns
     * (ta_gp, ta_gi, n + 1 and ta_gp[n]); tfree (nr) 1 for the inputs the trim solves */
    int ntt;
    const char *const *tt_label;
    const double *tt_val;
    const int *tt_gp, *tt_gi, *ta_gp, *ta_gi, *tfree, *tmove; /* tmove (n): named in trim.accelerations */
    mbl_at at;
    double time;
    /* the flexible bodies' frame coordinates (model/ffr.h mbl_flex_nodes; at: steady's circling
     * frames, src/opoint/steady_frames.c) */
    const struct mbl_flex_nodes *flex;
    int nflex;
    /* the rigid spatial bodies' frame coordinates in absolute coordinates: 7 per body (origin x, y,
     * z; Euler parameters e0..e3), the same turning frames of at: steady */
    const int *rframe;
    int nrframe;
    /* for the linearization (src/lin): ext 1 when the DAE uses source 000 Eq. 10 features (X, Z, or
     * equations of motion that depend on multipliers beyond Phi_q^T lambda + A^T mu, on Xdot or Z);
     * the ODE states' names (nX) and the user velocity states' texts (nuvs); the symbol index of
     * each unknown (nunk); the outputs' Jacobian pattern (model_eval_outputs); the work of
     * model_eval_user_states and of model_eval_outputs alone (doubles); blk0[b] = model_blk0(md, b)
     * for b = 0 .. MBL_NBLK (the last: nunk), for loops over every Jacobian entry */
    int ext;
    const char *const *xname, *const *uvs_text;
    const int *sym_of_unknown;
    mbl_sjac yjac;
    size_t work_us, work_y;
    int blk0[MBL_NBLK + 1];
} model_view;
void model_view_get(const mbl_model *md, model_view *v);
/* The model's file name (model_view.file) alone, for a message's prefix. */
const char *model_file(const mbl_model *md);

/* The user states and their Jacobian's values at the symbol values syms (work: work_size
 * doubles): [s; sdot; sddot; w; wdot] (3 nus + 2 nuvs), then the usjac.nz entries. */
int model_eval_user_states(const mbl_model *md, const double *syms, double *out, double *work, mbl_status *st);
/* The outputs and their Jacobian's values at the symbol values syms (work: work_y doubles of
 * model_view, or work_size): y (ny), then the yjac.nz entries. */
int model_eval_outputs(const mbl_model *md, const double *syms, double *out, double *work, mbl_status *st);
/* Doubles of model_eval_outputs' work (forward sweeps when the outputs' tape has a coloring). */
size_t model_outputs_work(const mbl_model *md);

/* Lock (1) or unlock (0) the model's one mutex under which its loaded (const) graph may grow (or
 * be read while another thread may grow it): error explanations, the sensitivities' and the
 * evaluators' derivatives, the expression form of the numeric terms, the drawing's tape and the
 * velocity transformation build nodes after loading. */
void model_graph_lock(const mbl_model *md, int lock);
/* model_graph_lock as a bound tape's lock callback (mblx_compile_bound: ctx is the model) */
void model_graph_lock_cb(void *md, int on);

/* The residual rows (nF) and the Jacobian entries' nodes (jac.nz) as expressions, with the terms
 * evaluated numerically beside the tapes (the tree's, the planar flexible bodies') included:
 * md->F and md->jac.node themselves when there are none, otherwise built once on the first call.
 * The caller holds the graph lock (model_graph_lock). */
int model_dae_nodes(const mbl_model *md, const mblx_id **F, const mblx_id **jac, mbl_status *st);

/* The residuals F (nF) and the residual Jacobian's values (jac.nz) at the symbol values syms
 * (work: work_size doubles): the tapes and the numeric structured terms. Every evaluation of
 * tape_F / tape_jac goes through these (model/eval.c). */
int model_eval_F(const mbl_model *md, const double *syms, double *F, double *work, mbl_status *st);
int model_eval_jac(const mbl_model *md, const double *syms, double *jac, double *work, mbl_status *st);
/* A tape of the residual rows rows[0 .. nrow - 1] alone, in that order: the same expressions as
 * tape_F's, their values model_eval_F's to rounding (a tape of a subset is scheduled anew: not
 * always bit for bit); NULL where no such tape is made (a term evaluated numerically beside
 * tape_F, out of memory). Free with mblx_tape_free. */
mblx_tape *model_compile_F_rows(const mbl_model *md, int nrow, const int *rows, mbl_status *st);
/* One parameter's column of the total dR/dp as mbl_dae_deriv_eval_param (mblin/dae.h) gives it (to
 * rounding: the same expressions and sums, from a tape of that column's partial derivatives alone,
 * those of the parameters that use it included, scheduled anew), without allocating per call (a
 * sweep's warm corrector, at every point); d borrowed. NULL when out of memory (st says). One
 * thread at a time. */
typedef struct model_dae_pcol model_dae_pcol;
model_dae_pcol *model_dae_pcol_new(const mbl_dae_deriv *d, int param, mbl_status *st);
int model_dae_pcol_eval(model_dae_pcol *c, const mbl_point *pt, double *fp, mbl_status *st);
void model_dae_pcol_free(model_dae_pcol *c);
/* The residual Jacobian's values at one set of symbol values, kept so that an evaluation of the same
 * model at the same symbols, bit for bit, is not repeated (model/eval.c): the operating point hands
 * the values at its solution on to the linearization (mbl_point.jac_memo). The model is known by
 * model_serial (unique in the process: not its address, which a later model may reuse). */
typedef struct model_jac_memo {
    unsigned long long serial;
    int nsym, nz;
    double *syms, *jac; /* nsym, nz */
} model_jac_memo;
unsigned long long model_serial(const mbl_model *md);
/* A memo of md's values jac (jac.nz) at syms (nsym), taking both arrays (allocated by mbl_alloc);
 * NULL when out of memory, the arrays freed. */
model_jac_memo *model_jac_memo_new(const mbl_model *md, double *syms, double *jac);
void model_jac_memo_free(model_jac_memo *memo);
/* The memo's values when they are md's at syms (the same model, the same symbols bit for bit);
 * NULL otherwise (memo NULL included). */
const double *model_jac_memo_at(const mbl_model *md, const model_jac_memo *memo, const double *syms);
/* " (the value comes from --set name=value)" when entry p of md->jac (its expression, or its row's)
 * depends on a parameter that --set gave a value at load; "" otherwise. buf holds cap bytes. */
const char *model_jac_set_note(const mbl_model *md, int p, char *buf, size_t cap);
/* The values the mass check evaluated at the file's configuration at load (model_check_mass), to
 * the first caller (the first operating point, whose first evaluation is often there: an
 * equilibrium's guess), who frees them; NULL after. */
model_jac_memo *model_take_load_memo(const mbl_model *md);
/* model_eval_jac, unless memo holds md's values at syms: then copied from it. */
int model_eval_jac_memo(const mbl_model *md, const model_jac_memo *memo, const double *syms, double *jac, double *work,
                        mbl_status *st);
/* Tests: fn(ctx, md, syms) at every evaluation of a model's Jacobian in the calling thread
 * (model_eval_jac, and model_eval_jac_y's shared tape; not the values a memo gives); NULL: none. */
typedef void (*model_jac_observer)(void *ctx, const mbl_model *md, const double *syms);
void model_set_jac_observer(model_jac_observer fn, void *ctx);
/* model_eval_jac, then the outputs and their Jacobian's values into y (md->tape_y's layout; NULL:
 * not wanted). With a tree's outputs the values of jac come from one tape with the outputs (eval.c),
 * whether y is wanted or not: equal to model_eval_jac's to rounding, not always bit for bit. */
int model_eval_jac_y(const mbl_model *md, const double *syms, double *jac, double *y, double *work, mbl_status *st);
/* 1 when model_eval_jac_y takes the Jacobian's values from the tree's shared tape (a tree's outputs),
 * so that they may differ from model_eval_jac's in the last bits; 0 when it calls model_eval_jac. */
int model_eval_jac_y_shared(const mbl_model *md);

/* The inverse of the mass matrix M = dR/da by the tree's own recursion (the articulated bodies,
 * src/model/terms/rtree_minv.c), never from M itself: model_mass_inverse_ok 1 when the model's M is
 * its relative-coordinate tree's alone (every coordinate a joint of the tree, no text row of the
 * equations of motion with an acceleration entry). model_eval_jac_y_minv: M^-1 at syms into minv
 * (n x n by columns, both triangles; mwork: model_mass_inverse_work doubles) and, when jac is not
 * NULL, the Jacobian's values and the outputs (y: NULL, not wanted) as model_eval_jac_y gives
 * them, bit for bit, in the same pass. Returns 1 when M is not positive definite at syms (a joint
 * without inertia; minv undefined), else 0 or an error. */
int model_mass_inverse_ok(const mbl_model *md);
size_t model_mass_inverse_work(const mbl_model *md);
int model_eval_jac_y_minv(const mbl_model *md, const double *syms, double *jac, double *y, double *minv, double *mwork,
                          double *work, mbl_status *st);
/* The same with the Jacobian's entries of the equations of motion straight into three dense
 * matrices (issue 69; src/lin/relin_dense.c): model_mass_dense_ok 1 when the model's M is its tree's
 * alone (model_mass_inverse_ok) and every other Jacobian value is a constant (model_jac_constant:
 * md->jac's values, the same at every point; NULL otherwise). model_eval_dense_minv adds the tree's
 * entries at syms to KCM, three n x n matrices by columns (dR/dq, dR/dv, dR/da) that hold the
 * constants' on entry, and gives M^-1 and y as model_eval_jac_y_minv: each matrix entry is then the
 * Jacobian value model_eval_jac_y_minv gives, bit for bit (the same sums in the same order). */
const double *model_jac_constant(const mbl_model *md);
int model_mass_dense_ok(const mbl_model *md);
int model_eval_dense_minv(const mbl_model *md, const double *syms, double *KCM, double *y, double *minv, double *mwork,
                          double *work, mbl_status *st);

/* An evaluation of the model's tapes at the symbol values `syms` failed with `st` (MBL_EDOMAIN:
 * a division by zero, log/sqrt outside the domain, a non-finite result). Find which of the
 * user's expressions fails there, or which of its derivatives (up to the third, as the
 * equations of motion and their Jacobian use them), and rewrite st as one line
 * "file:line:col: <reason> in the second derivative with respect to x, x of potential_energy =
 * <text>, <when>". When none is found (or st is not MBL_EDOMAIN) the message keeps the engine's
 * reason with the file and `when` in front. Returns st->code. Thread-safe (serialised). */
int model_eval_error(const mbl_model *md, const double *syms, const char *when, mbl_status *st);

/* The held velocities' h_j (nheld) and gradient values g (held_gp[nheld] entries) at the symbol
 * values syms; an error naming the held velocity that cannot be evaluated there. */
/* The trim targets' values g (ntt) and gradients gg (tt_gp[ntt]), the accelerations a (n) and
 * their gradients ag (ta_gp[n]) at the symbol values syms (model/trim.c); an error naming the
 * expression that cannot be evaluated. */
int model_trim_eval(const mbl_model *md, const double *syms, double *g, double *gg, double *a, double *ag, mbl_status *st);
/* The index of the trim target keyed `label` as written, or -1. */
int model_trim_target_find(const mbl_model *md, const char *label);
int model_held_eval(const mbl_model *md, const double *syms, double *h, double *g, mbl_status *st);
/* A held velocity by name: the label of one keyed by an expression (*coord = 0, its index) or a
 * coordinate, `x` or `der(x)` (*coord = 1, its index); -1 when none. */
int model_velocity_find(const mbl_model *md, const char *name, int *coord);

/* Column offset of a block in the unknown layout. */
int model_blk0(const mbl_model *md, int blk);

/* NULL, or a short description of the Eq. 10 features the model uses (for the refusals of the
 * methods that do not take them yet). */
const char *model_ext_features(const mbl_model *md);

/* 0, or the refusal of a model whose kinetic_energy has no der() (mass_zero_line) and which has degrees
 * of freedom: M = d2T/dv2 is zero, named with the kinetic_energy's line and column (src/model/checks.c;
 * called by every linearization, lin_eval_init, and by mbl_dae_deriv_new) */
int model_require_mass(const mbl_model *md, mbl_status *st);

/* Fill the symbol-value vector for a point (params, t, q, v, a, lambda, mu, r). */
void model_fill_syms(const mbl_model *md, double t, const double *q, const double *v, const double *a,
                         const double *lam, const double *mu, const double *r, double *syms);
/* The same from a point, with its X, Xdot and Z. */
void model_fill_syms_pt(const mbl_model *md, const mbl_point *pt, double *syms);

/* At a point (jacval: the residual Jacobian's values there): the implicit equations (ode, implicit
 * variables) must determine Xdot and Z (d[d; zeq]/d[Xdot; Z] regular), and the generalized speeds'
 * T = du/dq' (usjac: the user-state Jacobian values) must have independent rows. A one-line
 * MBL_ESINGULAR error naming the file:line:col of the equation or speed otherwise. */
int model_check_point(const mbl_model *md, const double *jacval, const double *usjac, mbl_status *st);

/* Evaluate the user's own expressions (srcx) at a point (syms from model_fill_syms, work of
 * work_size doubles): 0, or MBL_EDOMAIN with "file:line:col: <what> is not defined at the
 * operating point: <reason>" naming the first expression outside its domain. */
int model_check_domain(const mbl_model *md, const double *syms, double *work, mbl_status *st);

/* The validity items (mbl_src.validity) at a solved point (syms from model_fill_syms): each whose
 * |value| exceeds its limit appends "<what> <value> at the point, beyond <limit>" to notes (cap
 * bytes, "; " between notes; cut when full). An item that cannot be evaluated is skipped (the
 * domain check above reports the model's own expressions). */
void model_validity_notes(const mbl_model *md, const double *syms, char *notes, size_t cap);

/* The 1-D functions of data at a solved point (syms from model_fill_syms): each evaluated exactly
 * at a point of its set where its slope jumps (a table's interior point) appends "table 'd' at
 * x = 2, where its slope jumps from 1 to 3: the slope to the right is used ..." to notes (as
 * model_validity_notes). Nothing is done for a model without data sets. */
void model_data_knot_notes(const mbl_model *md, const double *syms, char *notes, size_t cap);
/* User routines at the solved point syms (routines_check.c): a routine's own partials checked
 * against central differences (a disagreement beyond MODEL_USER_PARTIALS_TOL is refused,
 * MBL_EMODEL, naming the routine and the entry), and a note per routine into notes (the check
 * passed, or the estimated error of the differences that stand in for its partials). */
int model_routines_check(const mbl_model *md, const double *syms, char *notes, size_t cap, mbl_status *st);
/* 1 when a routine of the model has no partials of its own (its derivatives are differences) */
int model_routines_inexact(const mbl_model *md);

#endif
