/* The loaded model: symbols, the canonical DAE as expressions, and its compiled evaluators.
 * Internal to the library; the public view is include/mblin/model.h. */
#ifndef MBLIN_MODEL_INTERNAL_H
#define MBLIN_MODEL_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "mblin/expr.h"
#include "mblin/model.h"
#include "model/model_view.h"

struct mbl_model {
    char *file, *name;
    mblx_graph *g;
    pthread_mutex_t graph_mutex; /* the one lock under which the graph grows after loading (model_graph_lock) */
    atomic_ullong serial;        /* model_serial: unique in the process, given on first use (0: not yet) */
    _Atomic(model_jac_memo *) load_memo; /* NULL, or the Jacobian's values at the file's configuration that
                                    the mass check evaluated at load (model_check_mass), taken by the first
                                    operating point (model_take_load_memo) for its evaluation there */
    atomic_int jac_by_col;       /* 0: not known yet; 1: jac's entries sorted by column (each column's
                                    together, columns ascending), 2: not (model_jac_col_range) */
    int n, m, k, nr, ny, np;
    /* user routines (routines.c): nroutines, routine r's index in g (routine_graph), its input
     * nodes routine_in[routine_in0[r] .. routine_in0[r + 1]) (MBLX_NONE until parsed), the loading's
     * state of each (VAR_*), and the libraries opened (closed by mbl_model_free, after the tapes) */
    int nroutines;
    long *routine_graph;
    int *routine_in0;
    mblx_id *routine_in;
    int *routine_state;
    void **user_libs;
    int nuser_libs;
    char **qname, **rname, **yname, **pname;
    char **cname;                /* m: what each holonomic constraint comes from (the item's key, e.g. a
                                    mechanism's "joint pin (revolute)"), "constraint <j>" when unnamed */
    double *pval;                /* parameter values (after --set) */
    double *pspin;               /* np: a spin speed's revolutions per second per unit (1/(2 pi) rad/s, 1 Hz,
                                    1/60 rpm) when spin_speeds declares the parameter one, else 0 */
    double *pset;                /* np: the value --set gave the parameter at load, NaN where none (the
                                    messages that blame a value name it: model_jac_set_note) */
    int *pbaked;                 /* np: 1 when the value is evaluated into a number at load time (used by
                                    another parameter or a value of the file, or a mechanism's): see
                                    mbl_model_set_param */
    /* symbols */
    mblx_id t;
    mblx_id *p, *q, *v, *a, *lam, *mu, *r;
    int nsym;                    /* symbols in the graph */
    int *sym_of_unknown;         /* symbol index of unknown j in [a lam mu v q r] */
    int *unknown_of_sym;         /* nsym: unknown index of a symbol, -1 for parameters and t */
    int nunk;                    /* 3n + m + k + 2 nX + nZ + nr */
    /* user ODE states X, implicit variables Z (source 000 Eq. 10a, 10b) */
    int nX, nZ;
    char **xname, **zname;
    mblx_id *X, *Xd, *Z;
    double *X0;                  /* nX: the file's values of X (initial guess, or the point with `given`) */
    char **eq_what;              /* nX + nZ: "file:line:col: ode 'x'" of each equation, for messages */
    int ext;                     /* 1 when the DAE uses Eq. 10 features (X, Z, or equations of motion that
                                    depend on multipliers beyond Phi_q^T lambda + A^T mu, on Xdot or Z):
                                    methods other than augmented refuse such models for now */
    /* generalized speeds u = T(q) q' (velocities: name: expr), the last nspd user velocity states */
    int nspd;
    char **spd_what;             /* nspd: "file:line:col: speed 'u'" */
    int sym_t, *sym_p;           /* symbol indices of t and parameters */
    /* operating-point data from the file (evaluated numbers) */
    double *q0, *v0, *r0;
    int *v_given;                /* 1 when the file gives the velocity of coordinate i (held at a given point), 2
                                    when it is a start only (a joint rate derived from bodies' velocities) */
    /* held velocities keyed by an expression (model/held.c): nheld conditions h_j(q, v, t) = held_val[j],
     * labels as written, gradient entries p in [held_gp[j], held_gp[j+1]): d h_j / d v[held_gi[p]] = held_gd[p] */
    /* trim (model/trim.c): ntt targets g_j(q, v, r, t) = tt_val[j] with labels as written and gradient
     * entries p in [tt_gp[j], tt_gp[j+1]): d g_j / d unknown tt_gi[p] = tt_gd[p]; the steady motion's
     * accelerations a_i(q, v) of coordinate i (tacc[i], MBLX_NONE for 0) with entries in
     * [ta_gp[i], ta_gp[i+1]); tfree[i] = 1 for input i solved by the trim */
    int ntt;
    char **tt_label;
    mblx_id *tt_x, *tt_gd, *tacc, *ta_gd;
    double *tt_val;
    mblx_tape *tape_trim; /* tt_x, tt_gd, then tacc (those not MBLX_NONE) and ta_gd, in that order (model_compile_trim) */
    int *tt_gp, *tt_gi, *ta_gp, *ta_gi, *tfree, *tmove; /* tmove (n): 1 for a coordinate trim.accelerations names (held), 2 the same solved (trim_acc_solve) */
    int nheld;
    char **held_label;
    mblx_id *held_x, *held_gd;
    double *held_val;
    int *held_gp, *held_gi;
    /* the same as expressions of the parameter symbols (for sensitivities, src/model/dae_deriv.c):
     * each parameter's value expression (MBLX_NONE when --set overrides it, or not kept), the
     * coordinates' initial values, the velocities (read only where v_given) and the inputs' values */
    mblx_id *pexpr, *q0x, *v0x, *r0x;
    mbl_at at;
    double time;
    double pen[3];               /* linearize.penalty_alpha, _xi, _omega of the file */
    int pen_given;               /* bit i: pen[i] given (mbl_lin_options_from_model) */
    double *pen_mat[3];          /* linearize.penalty_Xi, _Theta, _Omega of the file: m x m column-major, NULL absent */
    /* the DAE as expressions */
    mblx_id *F;                  /* nF = n + 2m + 2k + m residuals, row groups as MBL_ROW_* */
    int nF;
    int row0[MBL_NROWG + 1];     /* first row of each group */
    mblx_id *y;                  /* ny outputs */
    /* user states */
    int nus, nuvs;
    mblx_id *us, *uvs;           /* expressions s(q,t) and w(q,v,t) */
    char **us_text, **uvs_text;
    /* compiled: residuals, their Jacobian w.r.t. all unknowns, outputs and their Jacobian */
    mbl_sjac jac;                /* dF/d[a lam mu v q r] */
    mbl_sjac yjac;               /* dy/d[a lam mu v q r] */
    mblx_tape *tape_F;           /* -> F (nF) */
    mblx_tape *tape_jac;         /* -> jac values (jac.nz) */
    /* tape_jac's outputs when it reads no symbol (the same at every point: a tree's text rows with
     * constant partials), copied instead of evaluated; NULL otherwise (model_compile) */
    double *jac0;
    mblx_id *Fc;                 /* NULL, or the rows as tape_F and tape_jac compile them (formulate_let) */
    mblx_tape *tape_y;           /* -> y (ny) then yjac values */
    /* d[s; sdot; sddot; w; wdot]/d[a lam mu v q r] of the user states; a forward-mode load's has
     * no nodes (MBLX_NONE: model_user_state_nodes builds them, cached in usjx) */
    mbl_sjac usjac;
    mblx_id *usjx;
    /* -> [s; sdot; sddot; w; wdot] (3 nus + 2 nuvs) then usjac values, or the rows alone and their
     * Jacobian by its forward coloring (mblx_tape_fwdjac): read through model_eval_user_states */
    mblx_tape *tape_us;
    /* the expressions as the user wrote them (kinetic and potential energy, dissipation, forces,
     * constraints, outputs, variables, states, mass matrix entries), checked for domain errors at
     * the operating point by model_check_domain: only their derivatives are in the tapes above */
    int nsrcx, srcx_cap;
    mblx_id *srcx;
    struct model_srcx_what **srcx_what; /* the position and what of each (explain.c), written
                                           "file:line:col: what" only for a message */
    struct model_text_block *text_blocks; /* srcx_what, exprs' and the names' texts (text_blocks.h) */
    mblx_tape *tape_srcx;        /* -> nsrcx values */
    size_t work_size;            /* largest work array of the tapes */
    int mass_zero_line, mass_zero_col; /* > 0: the kinetic_energy (at this line and column of the file)
                                          has no der(): M = d2T/dv2 is identically zero (issue 33, item 6) */
    int cyclic_known;
    int *cyclic;                 /* n: 1 when no residual depends on q_i */
    /* a mechanism's drawing (mbl_model_geometry, mbl_model_draw): npt points, their global
     * positions (3 npt expressions) and dp/dq; links between points (two per joint) */
    int npt, nlink;
    char **ptname, **ptbody, **lname, **ltype;
    int *link;                   /* 2 nlink point indices */
    mblx_id *dp;                 /* 3 npt */
    mbl_sjac dpjac;              /* d dp / d[a lam mu v q r] (only q entries are nonzero) */
    mblx_tape *tape_draw;        /* -> dp (3 npt) then dpjac values */
    /* the user's expressions as written (item, position, node), to name them in evaluation
     * errors: see model_eval_error */
    struct mbl_model_expr *exprs;
    int nexprs, capexprs;
    /* the structured term (model/ffr.h): its EOM rows and closed-form Jacobian entries, merged into
     * F and jac after the text rows are differentiated (NULL / empty without flexible bodies) */
    mblx_id *Fs;
    mbl_sjac sjac;
    struct mbl_flex_nodes *flex; /* the flexible bodies' nodes, for the mode shapes of the outputs */
    int nflex;
    int *rframe; /* 7 per rigid spatial body (src->rigid_frames): model coordinate indices of x, y, z, e0..e3 */
    int nrframe;
    char *no_sens;               /* why sensitivities are refused (spatial beams: mbl_src.no_sens), or NULL */
    unsigned char *param_numeric; /* np flags or NULL: parameters a mechanism evaluated into its geometry
                                     (mbl_src.param_numeric): no derivative by them */
    struct mbl_ffr_dinfo *ffrd;  /* flexible bodies whose invariants depend on parameters (sensitivities) */
    int nffrd;
    /* relative-coordinate mechanisms: the bodies' global kinematics (mbl_src.kinematics), parsed;
     * nkin = 0 otherwise (see model/vtrans.c) */
    int nkin, kin_planar;
    mblx_id *kin;
    char **kin_body;             /* nkin: the body name of each item */
    double kin_budget;           /* the load's memory budget (mbl_src.mem_budget): B, Bdot and dB/dq beyond it are refused */
    /* the tree's structured term evaluated numerically beside tape_F and tape_jac (model/rtree.h),
     * NULL without one; then md->F and md->jac.node lack its rows and entries, and the full
     * expressions are built on demand (model_dae_nodes: Fx, jx) */
    struct mbl_rtree_num *rtn;
    mblx_id *Fx, *jx;
    /* mbl_load_options.forward_jacobian (mbl_src.forward_jacobian): model_compile takes the forward
     * path where it can (compile.c, forward_eligible) */
    int forward_jacobian;
    /* a forward-mode load whose tapes read md->Fc: md->F's EOM and constraint rows (the inlined
     * rows, which only the expressions asked for later read) are MBLX_NONE until
     * model_inlined_rows (formulate.c) builds them from these parts; NULL otherwise */
    struct model_inlined *Fdefer;
    /* planar flexible bodies evaluated numerically (model/terms/ffr_num.c): tape_jac computes the first
     * jac_ntape entries of jac, model_eval_jac the rest and adds theirs (never beside a tree:
     * relative coordinates refuse flexible bodies) */
    struct mbl_ffr_num *ffrn;
    int nffrn, jac_ntape;
    /* spatial flexible bodies evaluated numerically (model/terms/ffr3_num.c), like ffrn */
    struct mbl_ffr3_num *ffr3n;
    int nffr3n;
    /* planar rigid bodies and revolute joints in absolute coordinates evaluated numerically
     * (model/pmech_num.h): like ffrn, its entries are past jac_ntape; NULL without one */
    struct mbl_pmech_num *pmn;
    /* validity items (mbl_src.validity): nval expressions, their descriptions and limits (key,
     * key2 and the number key2 starts with), evaluated at a solved point by model_validity_notes */
    int nval;
    mblx_id *val;
    char **val_what, **val_limit_text;
    double *val_limit;
    /* singular items (mbl_src.singular), the same fields: sing_what with its file position, checked
     * by model_singular_check at a solved point and in mbl_dae_eval_residual */
    int nsing;
    mblx_id *sing;
    mblx_tape *tape_sing; /* the nsing items (compile.c) */
    char **sing_what, **sing_limit_text;
    double *sing_limit;
    /* what the model was loaded from (src/model/origin.h; mbl_model_copy), NULL: nothing */
    struct model_origin *origin;
    /* np flags or NULL (none yet): 1 for a parameter changed in place by mbl_model_set_param, whose
     * value a copy takes as an override (model_origin_current) */
    unsigned char *pmoved;
};

/* model_blk0 (model_view.h) inline: the one definition of the unknowns' layout [a lam mu v q Xdot Z
 * X r], for loops over every Jacobian entry; model_blk0 returns it (model_view.blk0 holds it for src/lin). */
static inline int model_blk0_inline(const mbl_model *md, int blk)
{
    int n = md->n, m = md->m, k = md->k, nX = md->nX, nZ = md->nZ;
    switch (blk) {
    case MBL_BLK_A: return 0;
    case MBL_BLK_LAMBDA: return n;
    case MBL_BLK_MU: return n + m;
    case MBL_BLK_V: return n + m + k;
    case MBL_BLK_Q: return 2 * n + m + k;
    case MBL_BLK_XD: return 3 * n + m + k;
    case MBL_BLK_Z: return 3 * n + m + k + nX;
    case MBL_BLK_X: return 3 * n + m + k + nX + nZ;
    case MBL_BLK_R: return 3 * n + m + k + 2 * nX + nZ;
    default: return 3 * n + m + k + 2 * nX + nZ + md->nr;
    }
}

/* Positions in md->jac of nt (row, column) pairs (tr, tc; rows < nF):
 * out[t] the entry's index, -1 where md->jac has none. */
int model_jac_index(const mbl_model *md, int nt, const int *tr, const int *tc, int *out, mbl_status *st);

/* Builds md->F's deferred inlined rows (md->Fdefer; nothing without) under the graph lock or before
 * the model is shared; model_inlined_free frees the parts. */
int model_inlined_rows(const mbl_model *md, mbl_status *st);
void model_inlined_free(mbl_model *md);
/* The public layout of the unknowns and rows (include/mblin/sensitivity.h) from the model and the
 * row and column offsets (row0: MBL_DAE_NROWG + 1, col0: MBL_DAE_NBLK + 1), for the derivative
 * and evaluation workspaces (dae_deriv.c, dae_eval.c). */
struct mbl_dae_layout;
void model_dae_layout_fill(const mbl_model *md, const int *row0, const int *col0, struct mbl_dae_layout *lay);

/* Sparse Jacobian helpers. model_sjac_push appends one entry (nonzero when out of memory); inline,
 * its room grown by doubling out of line (model_sjac_push_grow): the numeric terms push one entry
 * at a time, 548,000 of them at the N = 2000 four-bar, where the call itself was half the cost. */
int model_sjac_push_grow(mbl_sjac *J, int row, int col, mblx_id node);
static inline int model_sjac_push(mbl_sjac *J, int row, int col, mblx_id node)
{
    if (J->nz == J->cap) return model_sjac_push_grow(J, row, col, node);
    J->row[J->nz] = row;
    J->col[J->nz] = col;
    J->node[J->nz++] = node;
    return 0;
}
/* Room in J for add more entries at once, at the exact size when J has less (a Jacobian whose
 * entries are counted before they are pushed: one allocation, not a chain grown by doubling);
 * nonzero when out of memory. */
int model_sjac_reserve(mbl_sjac *J, size_t add);
void model_sjac_free(mbl_sjac *J);

/* The user states' rows [s; sdot; sddot; w; wdot] (3 nus + 2 nuvs nodes) into e (ustates.c). */
void model_user_state_rows(mbl_model *md, mblx_id *e);
/* md->usjac's nodes (its own, or for a forward-mode load built once under the graph lock, or
 * before the model is shared, and cached); nonzero with st filled on failure. */
int model_user_state_nodes(const mbl_model *md, const mblx_id **nodes, mbl_status *st);
/* Doubles of model_eval_user_states's work array. */
size_t model_user_states_work(const mbl_model *md);

/* The singular items (md->sing) at syms (work: md->work_size): MBL_ESINGULAR, "<file:line:col:
 * what> = <value> <where>, below <limit>" (where: "at t = <*t>", or "at the operating point" for t
 * NULL), for the first whose |value| is below its limit; else 0 (checks.c). */
int model_singular_check(const mbl_model *md, const double *syms, double *work, const double *t, mbl_status *st);

#endif
