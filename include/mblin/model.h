/* mblin: models, operating points, linear models and modes: the public pipeline.
 *
 *   mbl_model_load_file()    model file (YAML) -> parsed, formulated and compiled model
 *   mbl_model_copy()         model -> a fresh model loaded again from its text, more overrides
 *   mbl_operating_point()    model -> consistent (t, q, v, vdot, lambda, mu, inputs)
 *   mbl_linearize()          model + point -> A, B, C, D; M, C, K; map states -> q
 *   mbl_modal()              linear model -> eigenvalues, frequencies, damping, mode shapes
 *
 * A loaded model is immutable: every function that evaluates it takes it as const and keeps
 * what it writes in its own result or workspace objects, so one model serves many threads.
 * Every function returns 0 or a negative MBL_E* code with a one-line message in `st`;
 * destructors accept NULL. Matrices are dense, column-major, with the leading dimension equal
 * to the number of rows. */
#ifndef MBLIN_MODEL_H
#define MBLIN_MODEL_H

#include "mblin/export.h"

#include <stdio.h>

#include "mblin/status.h"
#include "mblin/user.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- models -------------------------------------------------------------------------- */

typedef struct mbl_model mbl_model;

/* A parameter override, as given on the command line by --set name=value. */
typedef struct mbl_setting {
    const char *name;
    double value;
} mbl_setting;

/* Load a `model: dae` file (YAML or JSON). Parameter overrides replace the file's values;
 * naming a parameter the model does not have is an error. */
MBL_API int mbl_model_load_file(const char *path, const mbl_setting *sets, int nsets, mbl_model **out, mbl_status *st);
/* The same from text in memory; `name` is used for file positions in messages. */
MBL_API int mbl_model_load_string(const char *text, size_t len, const char *name, const mbl_setting *sets, int nsets,
                          mbl_model **out, mbl_status *st);
MBL_API void mbl_model_free(mbl_model *model);

/* Limits of the readers (docs/model-files.md), so that no input makes them run long or use much
 * memory: the file's size, and how deep YAML lists and mappings may nest. The file must be a
 * regular file (not a directory, device or pipe). */
#define MBL_MAX_FILE_SIZE ((size_t)256 << 20) /* 256 MiB */
#define MBL_MAX_NESTING 64
typedef struct mbl_load_options {
    size_t max_file_size; /* bytes (default MBL_MAX_FILE_SIZE); also bounds the text of _string */
    int max_nesting;      /* levels of lists and mappings (default MBL_MAX_NESTING) */
    /* User states replacing the file's linearize.states / linearize.velocity_states (the Python
     * package's linearize(states=[...])): NULL (default) keeps the file's, else nstates expressions
     * (0: none, the states are chosen among the coordinates). They are expressions of the
     * equation level (coordinate, variable and parameter names; for a `model: mechanism` its
     * generated coordinates, not measure functions); a message about one names it "state i
     * (given)" with its text, and has no position in the file (none, or line 0). */
    const char *const *states;
    int nstates;
    const char *const *velocity_states;
    int nvelocity_states;
    /* Bytes building the model may use (default, and when 0: MBL_MEM_BUDGET_DEFAULT = 2 GiB, the
     * linearization's default; negative or not finite: refused). A model whose estimated size is
     * over it is refused before it is built (MBL_ENOMEM), with the estimate: today the elements of
     * beam bodies, which dominate (docs/mechanism-reference.md, "Size of a model"). The tool passes
     * its --mem-budget here and to mbl_lin_options.mem_budget. */
    double mem_budget;
    /* Outputs kept (the tool's --outputs a,b; the Python package's load(outputs=[...])): NULL (default)
     * keeps the file's, else noutputs names of the file's outputs, kept in this order and the others
     * dropped before the model is built (so that a method that cannot compute an output of a
     * multiplier, reaction or acceleration can be run on the rest). A name the file does not have, or
     * one given twice, is refused (MBL_EARG, naming it and the file's outputs). */
    const char *const *outputs;
    int noutputs;
    /* 1: the residual Jacobian's values by forward-mode differentiation of the residual tape with
     * column coloring (mblx_fwdjac) instead of a symbolic Jacobian and its tape: faster to load,
     * the same values to rounding, the pattern structural (entries that cancel are kept as zeros).
     * Only for models without numerically evaluated terms (the others load as with 0); what needs
     * the Jacobian's expressions (simulation, sensitivities, code generation) builds them when
     * first asked. The user states' Jacobian (linearize.states, velocity_states) and the outputs'
     * (outputs:, without a term of their own) likewise, by sweeps of their rows' tape, where no
     * row depends on more than 48 unknowns. Default 0; the tool sets 1 for linearize,
     * equilibrium, check, compare and report (their `--symbolic-jacobian` sets 0), not for sweeps
     * and the other many-point commands. */
    int forward_jacobian;
    /* User routines (include/mblin/user.h, docs/user-routines.md). A model whose file names a
     * shared library under `routines:` runs that library's code when it is loaded and evaluated:
     * it is refused (MBL_EPERM, naming the library's entry in the file) unless allow_user_code is
     * 1 (the tool's --allow-user-code, the Python package's load(allow_user_code=True)). Default 0.
     * A copy (mbl_model_copy) and the studies' models keep the permission of the load. */
    int allow_user_code;
    /* Routines the calling program gives itself (the Python package's load(user={name: fn}), a C
     * program's own functions): a `routines:` entry without `library:` takes the routine of its
     * `routine:` name (default its key) from here. Running them needs no allow_user_code (the
     * program chose to). The array and what it points to must outlive every model loaded with it
     * (copies included). NULL, 0: none. */
    const struct mbl_user_routine_def *user_routines;
    int nuser_routines;
    /* 1: a mechanism's drawing (mbl_model_geometry, mbl_model_draw: the report's picture and mode
     * animation) is not built: its points are not read, and the marker positions that only the
     * drawing used are not variables of the model; mbl_model_geometry then gives no points. No
     * other result changes. Ignored when states or velocity_states are given (they may name
     * those variables). The tool sets it for linearize, equilibrium, check and compare (the
     * N = 2000 four-bar mechanism: 12 % fewer instructions). 0 (default): drawn. */
    int no_drawing;
} mbl_load_options;
/* A routine given by the calling program (mbl_load_options.user_routines). */
typedef struct mbl_user_routine_def {
    const char *name;   /* the name a model file's `routine:` gives */
    mbl_user_fn fn;
    void *user_data;    /* passed to fn in mbl_user_call.user_data */
} mbl_user_routine_def;
MBL_API void mbl_load_options_default(mbl_load_options *opt);
/* mbl_model_load_file / _string with explicit limits (opt NULL: the defaults). */
MBL_API int mbl_model_load_file_opt(const char *path, const mbl_setting *sets, int nsets, const mbl_load_options *opt,
                            mbl_model **out, mbl_status *st);
MBL_API int mbl_model_load_string_opt(const char *text, size_t len, const char *name, const mbl_setting *sets, int nsets,
                              const mbl_load_options *opt, mbl_model **out, mbl_status *st);
/* A fresh, independent model loaded from `model` as it was loaded: a loaded model keeps its text
 * (the file's as it was read, or the string's; the memory of the text's size), the name it was
 * loaded under, its overrides and its load options, and this loads that text again with them and
 * then `sets` (a later setting of the same name wins), so it works as well for a model that has no
 * file (mbl_model_load_string, Python's loads) and does not see a file changed since. Data, mesh
 * and URDF files named relative to the model are found as the load found them (from the working
 * directory of the load when its name is relative; the copy's name, mbl_model_info.file, is then
 * the absolute one if the directory changed since); one that is no longer there fails the copy with
 * the load's message, naming it. Values changed in place by mbl_model_set_param are carried, as
 * overrides after the load's and before `sets` (a parameter set in place to 100 is 100 in the
 * copy unless `sets` names it). The studies make their own models so (mbl_sweep_run, mbl_boundary;
 * docs/study.md). 0, or a negative code with st filled (the load's errors). */
MBL_API int mbl_model_copy(const mbl_model *model, const mbl_setting *sets, int nsets, mbl_model **out,
                           mbl_status *st);

/* MBL_AT_TRIM: a steady motion (a steady turn) that meets the file's `trim:` targets, solving the
 * coordinates, velocities and free inputs the targets leave open (docs/model-files.md, "Trim"). */
typedef enum mbl_at { MBL_AT_EQUILIBRIUM = 0, MBL_AT_GIVEN = 1, MBL_AT_STEADY = 2, MBL_AT_TRIM = 3 } mbl_at;

typedef struct mbl_model_info {
    const char *name;       /* the model's name ("" if none) */
    const char *file;       /* the file it came from (mbl_model_load_string: the name given) */
    int ncoord;             /* n: coordinates q */
    int nhol;               /* m: holonomic constraints */
    int nnh;                /* k: non-holonomic constraints */
    int ninput, noutput, nparam;
    int nuser_states, nuser_velocity_states;
    int node_states, nimplicit; /* user ODE states X, implicit algebraic variables Z */
    int nspeeds;            /* generalized speeds defined under velocities */
    mbl_at at;              /* linearize.at of the file */
    double time;            /* linearize.time of the file (0 if absent) */
} mbl_model_info;

MBL_API void mbl_model_get_info(const mbl_model *model, mbl_model_info *info);
MBL_API const char *mbl_model_coord_name(const mbl_model *model, int i);
MBL_API const char *mbl_model_input_name(const mbl_model *model, int i);
/* Copy the model's data sets (its `data:` section: spline, table, spline2) into graph g, which
 * must have none, so that expressions parsed there may use them (mblin simulate's inputs).
 * 0, or a negative code with st filled. */
struct mblx_graph;
MBL_API int mbl_model_copy_data(const mbl_model *model, struct mblx_graph *g, mbl_status *st);
MBL_API const char *mbl_model_output_name(const mbl_model *model, int i);
MBL_API const char *mbl_model_param_name(const mbl_model *model, int i);
MBL_API double mbl_model_param_value(const mbl_model *model, int i);
/* Parameter i declared a spin speed (the file's spin_speeds, docs/model-files.md): revolutions per
 * second per unit of it (1/(2 pi) for rad/s, 1 for Hz, 1/60 for rpm); 0 when it is not one. A
 * sweep over it draws the 1x order line and reports critical speeds without --orders. */
MBL_API double mbl_model_param_spin(const mbl_model *model, int i);
/* Change parameter i of a loaded model in place, so that a sweep over a parameter re-linearizes
 * without reloading (src/study, docs/study.md): the compiled evaluators read parameter values at
 * each evaluation, so the next mbl_operating_point / mbl_relinearize see the new value. Refused
 * (MBL_EARG, naming the parameter) when the value was evaluated into numbers at load time: a
 * parameter that a `model: mechanism` evaluated (its geometry, masses and inertias, initial
 * positions and velocities, another parameter's value; the ones its equations only name, such as
 * a tire's cornering stiffness or a spring's constant, change in place), or one that another
 * parameter or a value of the file (an initial coordinate, a velocity, an input value,
 * linearize.time) uses; reload such a model with the new value (mbl_model_load_file's sets). This
 * is the one function that changes a loaded model: not while another thread uses the same model
 * (give each thread its own copy). */
MBL_API int mbl_model_set_param(mbl_model *model, int i, double value, mbl_status *st);

/* Flexible bodies (beam bodies of `model: mechanism`, docs/mechanism-reference.md): how many, body b's name
 * and number of nodes, and for the coordinates q (n) the nodes' global positions pos (2 x nodes:
 * x, y per node) and, for a coordinate-space vector dq (n; a mode shape, re or im part), the
 * nodes' global displacements and rotations disp (3 x nodes: dx, dy, drot per node), linear in
 * dq. pos or disp may be NULL. Returns 0 or MBL_EARG. */
MBL_API int mbl_model_flex_count(const mbl_model *model);
MBL_API const char *mbl_model_flex_name(const mbl_model *model, int b);
MBL_API int mbl_model_flex_nodes(const mbl_model *model, int b);
MBL_API int mbl_model_flex_shape(const mbl_model *model, int b, const double *q, const double *dq, double *pos, double *disp);
/* Spatial flexible bodies (spatial beams): mbl_model_flex_dim is 3 and pos holds 3 x nodes (x, y,
 * z per node), disp 6 x nodes (dx, dy, dz and the small rotation rx, ry, rz about the global axes,
 * per node). mbl_model_flex_dim: 2 (planar), 3 (spatial), 0 for a bad index. */
MBL_API int mbl_model_flex_dim(const mbl_model *model, int b);

/* ---- operating points ------------------------------------------------------------------ */

typedef struct mbl_opoint_options {
    int at;              /* -1: the model file's choice; else an mbl_at */
    int max_iter;        /* Newton iterations (default 100) */
    double tol;          /* tolerance on the scaled residual max_i |F_i| / sum_c |dF_i/dx_c| scale_c,
                            scale_c = max(|x_c|, |initial x_c|, 1): unit-free, independent of the
                            starting residual (default 1e-12). Convergence needs it AND either the
                            residual below abs_tol or a last Newton step at rounding level */
    double abs_tol;      /* absolute max-norm residual tolerance (default 1e-12) */
    double step_tol;     /* at the rounding floor (the line search makes no progress) the point is
                            accepted when every Newton step component is below step_tol * scale_c
                            and the scaled residual below 1e4 * tol (default 1e-12) */
    double move_note;    /* equilibrium and steady: a coordinate that moved from its initial guess by
                            more than move_note * max(1, |guess|) is named in the point's notes
                            (default 0.5; 0 disables) */
    double rank_tol;     /* relative singular-value threshold for ranks (default 1e-9) */
    const double *q;     /* n coordinates replacing the file's (initial guess, or the point with
                            `given`); NULL: the file's */
    const double *v;     /* n velocities replacing the file's (`given`, `steady`); NULL: the file's. With
                            `given` they are projected as a whole onto the velocity constraints (a
                            simulation's state): the file's held velocities are not held then, only
                            those of `velocities` below */
    const mbl_setting *guess; /* nguess coordinates by name replacing single initial values (after q);
                            an unknown name is an MBL_EARG error (the CLI's --guess NAME=VALUE) */
    int nguess;
    const mbl_setting *velocities; /* nvelocities held velocities of `at: given` by name, holding or
                            replacing the file's (the CLI's --set-velocity NAME=VALUE): a key of the
                            file's `velocities:` as written (e.g. "JV(crank)"), or a coordinate x
                            (or "der(x)"): its rate. An unknown name is an MBL_EARG error
                            (mbl_model_velocity_find). Held velocities are kept exactly; the others
                            are solved, by the minimum-norm change (docs/model-files.md) */
    int nvelocities;
    double t;            /* the time of the point when has_t is 1, else the file's linearize.time */
    int has_t;
    const double *lambda; /* m holonomic and k non-holonomic multipliers to start equilibrium and steady */
    const double *mu;     /* points from (a continuation's guess, with q); NULL: the least-squares ones
                             at the initial q (both must be given, mu may be NULL when k = 0) */
    const mbl_setting *targets; /* ntargets values of the file's `trim:` targets by their key as written
                             (the CLI's --target KEY=VALUE), replacing the file's values (at: trim); an
                             unknown key is an MBL_EARG error */
    int ntargets;
    const double *r;      /* nr input values replacing the file's (NULL: the file's `inputs:`): a
                             simulation's start and samples keep the inputs of the point they come
                             from (a trim's solved ones) */
} mbl_opoint_options;

MBL_API void mbl_opoint_options_default(mbl_opoint_options *opt);
/* 1 when `name` can be held as a velocity of the model (mbl_opoint_options.velocities: a key of the
 * file's `velocities:` as written, a coordinate or der(coordinate)), else 0. */
MBL_API int mbl_model_velocity_find(const mbl_model *model, const char *name);
/* 1 when `name` is a key of the file's trim targets as written (mbl_opoint_options.targets), else 0. */
MBL_API int mbl_model_trim_target_find(const mbl_model *model, const char *name);

typedef struct mbl_point {
    mbl_at at;           /* how the point was found */
    double t;
    int n, m, k, nr;
    double *q, *v, *vdot;     /* n each */
    double *lambda;           /* m: holonomic multipliers */
    double *mu;               /* k: non-holonomic multipliers */
    double *r;                /* nr: inputs */
    int iterations;           /* Newton iterations used */
    double residual;          /* final max-norm residual of the equations solved */
    double scaled_residual;   /* final scaled residual (mbl_opoint_options.tol) */
    int rank_phi_q;           /* numerical rank of [Phi_q; A_nh] at the point */
    int min_norm_multipliers; /* 1 when the multipliers are the minimum-norm ones (rank loss) */
    char notes[1024];         /* what happened, for the report (moved coordinates, rank loss) */
    int nX, nZ;               /* user ODE states and implicit variables (ode_states, implicit_variables) */
    double *X, *Xdot, *Z;     /* nX, nX, nZ values */
    char accel_note[320];     /* at: given, when the point is no equilibrium or steady motion of the model
                                 (its accelerations are not zero: docs/linearization.md, "A given point
                                 that moves"): the largest residual acceleration, also in notes; "" else */
    int *v_held;              /* at: given, n: 1 where the velocity was held at the file's value, 2 where
                                 at a value of mbl_opoint_options.velocities, 0 where solved; NULL at the
                                 other kinds of point (docs/model-files.md, "Held velocities") */
    int nheld_expr;           /* at: given: held velocities keyed by an expression (JV(crank)) */
    char trim[768];           /* at: trim: what was solved and the targets met ("" else) */
    double trim_residual;     /* at: trim: the largest |target - value| at the point, and the largest */
    double trim_eq_residual;  /* residual of the steady-motion equations (max-norm) */
    void *jac_memo;           /* internal: NULL, or the model's Jacobian values at this point as
                                 mbl_operating_point last evaluated them, handed on to mbl_linearize
                                 (used only while the point's values and the model's parameters are
                                 those they were evaluated at, bit for bit); freed by mbl_point_free.
                                 A point made by the caller leaves it NULL */
    int singular_row;         /* 0, or 1 + the first row of [Phi_q; A_nh] (Phi's m rows, then A_nh's) that
                                 vanishes at the point: a solve that converged only linearly to where a
                                 constraint holds only to second order (a pendulum of zero length), a
                                 singular configuration that mbl_linearize refuses (docs/linearization.md) */
} mbl_point;

MBL_API int mbl_operating_point(const mbl_model *model, const mbl_opoint_options *opt, mbl_point **out, mbl_status *st);
MBL_API void mbl_point_free(mbl_point *p);

/* The user states s(q, t) of linearize.states (mbl_model_info.nuser_states of them) at a point:
 * their values s and their exact gradients ds/dq (nuser_states x n, column-major); either may be
 * NULL. 0, or a negative MBL_E* code naming the state that cannot be evaluated there. The text of
 * state i as written (NULL when out of range). */
MBL_API int mbl_model_user_states(const mbl_model *model, const mbl_point *pt, double *s, double *ds_dq, mbl_status *st);
MBL_API const char *mbl_model_user_state_text(const mbl_model *model, int i);
/* At a point with motion, the first-order velocity change dv that goes with a coordinate change dq
 * made in the user states (dq = dq/dS dS, the linear model's q_S): the state-to-coordinate map turns
 * with the motion, so the state rates dS' = ds/dq dv + d(ds/dt)/dq dq and the velocity constraints
 * Phi_q dv + d(Phi_q v)/dq dq = 0 determine it. This returns dv for the given dq when the rates are
 * unchanged ([ds/dq; Phi_q] dv = -[d(ds/dt)/dq; d(Phi_q v)/dq] dq); a mode's start adds q_S Re(s phi_S).
 * Needs as many user states as coordinates less holonomic constraints, and no non-holonomic
 * constraints, velocity states or ODE states (MBL_EARG otherwise). */
MBL_API int mbl_model_user_states_dv(const mbl_model *model, const mbl_point *pt, const double *dq, double *dv, mbl_status *st);

/* The outputs y = h(q, v, vdot, lambda, mu, r, t) at a point (ny = noutput values into y), e.g. the
 * reaction forces lambda(c) and accelerations der(der(x)) of the operating point. */
MBL_API int mbl_model_outputs(const mbl_model *model, const mbl_point *point, double *y, mbl_status *st);

/* ---- constraint diagnosis (mblin check) ------------------------------------------------- */

/* Which holonomic constraints are at fault, each equation named by its source (a mechanism's joint,
 * driver or coupler; "constraint <j>" at the equation level: mbl_model_constraint_name).
 * With a point: the rank of Phi_q (relative singular-value threshold 1e-9, as the operating
 * point's rank_tol) and, when it is below m, the equations that take part in its left null space
 * (weight above 1e-6 in a unit null vector): kind MBL_DIAG_REDUNDANT. Without a point (none was
 * found): the equations whose residual at the file's initial configuration exceeds 1e-8 in
 * absolute value: kind MBL_DIAG_VIOLATED, with the residuals; where none does (the parts assemble
 * there), the rank test above at that configuration: MBL_DIAG_REDUNDANT or none. MBL_DIAG_NONE when nothing is at
 * fault; MBL_DIAG_UNEVALUATED (with the reason in msg) when the constraints cannot be evaluated. */
typedef enum mbl_diag_kind {
    MBL_DIAG_NONE = 0,
    MBL_DIAG_REDUNDANT = 1,
    MBL_DIAG_VIOLATED = 2,
    MBL_DIAG_UNEVALUATED = 3
} mbl_diag_kind;

typedef struct mbl_constraint_diag {
    mbl_diag_kind kind;
    int m, n;         /* holonomic constraint equations, coordinates */
    int rank;         /* rank of Phi_q at the point or the initial configuration (REDUNDANT), else m */
    int *flag;        /* m: 1 where equation j takes part */
    double *residual; /* m: the residuals at the initial configuration (VIOLATED), else NULL */
    char msg[256];    /* UNEVALUATED: why */
} mbl_constraint_diag;

/* Returns 0 (the diagnosis in *out, free with mbl_constraint_diag_free) or MBL_EARG/MBL_ENOMEM. */
MBL_API int mbl_constraint_diagnose(const mbl_model *model, const mbl_point *point, mbl_constraint_diag **out,
                            mbl_status *st);
MBL_API void mbl_constraint_diag_free(mbl_constraint_diag *d);
/* 1 when a mechanism file used parameter p as a number fixed when the file was loaded, in a part of
 * the equations' geometry (a marker's or body's orientation, a spatial beam's axis and angle): the
 * equations carry no derivative by it, so mbl_sensitivity_compute refuses it (and leaves it out
 * when asked for all parameters); a sweep or boundary over it reloads the file and is exact. 0
 * otherwise (every parameter of a `model: dae` file), -1 for a bad index. */
MBL_API int mbl_model_param_numeric(const mbl_model *model, int p);
/* The source of constraint equation j (several equations of a joint share its name): j < m a
 * holonomic one, m <= j < m + k the non-holonomic one j - m (mbl_model_info's nhol, nnh). */
MBL_API const char *mbl_model_constraint_name(const mbl_model *model, int j);
/* 1 when input i appears in some equation or output of the model (a structurally nonzero entry of
 * dF/dr or dy/dr), 0 when it appears nowhere (its columns of B and D are zero whatever the point:
 * usually an input declared and never used by a force; the reports say so), -1 for a bad index. */
MBL_API int mbl_model_input_used(const mbl_model *model, int i);
/* User ODE state i (0..node_states-1) and implicit variable i (0..nimplicit-1) by name. */
MBL_API const char *mbl_model_ode_state_name(const mbl_model *model, int i);
MBL_API const char *mbl_model_implicit_name(const mbl_model *model, int i);

/* ---- the drawing of a mechanism (mblin report) ----------------------------------------- */

/* What a `model: mechanism` gives to draw it: points (every body's origin, named as the body,
 * and every marker, ground's included) fixed to bodies, and links (the joints, each between
 * the points of its two markers). A model of the equation level has no points. The arrays
 * belong to the model. */
typedef struct mbl_geometry {
    int npoint;
    const char *const *point; /* npoint names: a marker, or a body's name for its origin */
    const char *const *body;  /* npoint: the body the point is fixed to ("ground" for ground's) */
    int nlink;
    const int *link;          /* 2 nlink point indices: the joint's markers i, j */
    const char *const *link_name, *const *link_type;
} mbl_geometry;

MBL_API void mbl_model_geometry(const mbl_model *model, mbl_geometry *g);

/* The global positions of the points at pt (pos: 3 npoint, x y z per point) and, for nshape > 0
 * mode shapes (shape_re, shape_im: nq x nshape column-major, nq the model's coordinates, e.g.
 * mbl_modes' shape_re, shape_im, n and nx), each shape's point displacements, dp/dq times the
 * shape (exact derivatives of the positions): dre, dim of 3 npoint * nshape, shape k's block at
 * 3 npoint k (either NULL to skip). */
MBL_API int mbl_model_draw(const mbl_model *model, const mbl_point *pt, int nshape, int nq, const double *shape_re,
                   const double *shape_im, double *pos, double *dre, double *dim, mbl_status *st);
/* The velocity transformation of a `coordinates: relative` mechanism at a point (source 003
 * Eq. 2.x, 3.8, 3.38-3.44): the absolute velocities of the moving rigid bodies' centres of mass
 * and their global angular velocities, [v_cm; w] per body (6 rows "body.vx" .. "body.wz" when
 * spatial, 3 rows "body.vx", "body.vy", "body.w" when planar), are B(q) q' over the model's
 * coordinates q (ncol = n: the joint coordinates, and a floating root's own). dB holds ncol
 * planes, plane m = dB/dq_m (exact, from the expression engine); Bdot = sum_m dB/dq_m q'_m at the
 * point's velocities. Matrices are column-major, nrow x ncol. *out = NULL (and 0 returned) for a
 * model that is no relative-coordinate mechanism. Cost: B's entries are formed symbolically at
 * each call (under a lock: the model's expression graph grows) and dB by forward-mode sweeps of
 * their tape (mblx_fwdjac: exact to rounding; entries that cancel may come out at the rounding
 * level instead of 0). A 100-link URDF chain: 1.6 s and 330 MB for `linearize --json`. The dense
 * B, Bdot and dB (and the entries' nodes) over the load's memory budget (mbl_load_options.mem_budget,
 * default 2 GiB) are refused before any work: MBL_ENOMEM, the message giving their size. */
typedef struct mbl_vtrans {
    int nrow, ncol;
    char **row_name;  /* nrow */
    char **col_name;  /* ncol: the coordinates' names */
    double *B;        /* nrow x ncol */
    double *dB;       /* ncol planes of nrow x ncol */
    double *Bdot;     /* nrow x ncol */
} mbl_vtrans;
MBL_API int mbl_model_velocity_transformation(const mbl_model *model, const mbl_point *point, mbl_vtrans **out, mbl_status *st);
MBL_API void mbl_vtrans_free(mbl_vtrans *v);
/* The stiffness before the constraint forces are applied, K_l of source 003 Sec. 3.2.2 (Eq. 3.9-3.10):
 * K (n x n, column-major, the caller's) = dR/dq of the equations of motion at the point's q, v, v'
 * with every multiplier 0 (R = M v' + Phi_q^T lambda + ... - Q is linear in them). For a mechanism in
 * relative coordinates it is the open tree's stiffness, before the cut joints' constraints add
 * d(Phi_q^T lambda)/dq (Eq. 4.7): Eq. 4.18's K_I of the spatial four-bar; the MCK form's K of a tree
 * without cut joints. Errors: MBL_EARG, MBL_ENOMEM, an evaluation's. */
MBL_API int mbl_open_tree_stiffness(const mbl_model *model, const mbl_point *point, double *K, mbl_status *st);

/* ---- linear models ---------------------------------------------------------------------- */

typedef struct mbl_lin_options {
    const char *method;    /* "augmented" (default; NULL means default) */
    double state_weight;   /* weight of the identity block of source 000 Eq. 22 (default 1e-3):
                              smaller prefers user states more strongly */
    double pivot_tol;      /* relative pivot threshold of the state selection (default 1e-9) */
    double rcond_min;      /* below this reciprocal condition the equilibrated augmented matrix
                              (rows and columns scaled by powers of 2 to unit max-norm, so the
                              units do not count) is singular (default 1e-13); also the bound of
                              the row-scaled [Phi_q; dS/dq] of partition, nullspace, projection,
                              fd (docs/linearization.md "Scaling and refusals") */
    /* ---- the other methods (docs/methods.md); a field left at 0 takes its default, except
     * constraint_scale (0 = automatic) and pen_xi (0 is a valid damping ratio) ---- */
    double rank_tol;       /* relative rank tolerance of the constraint Jacobian (QRCP diagonal or
                              full-pivot LU pivots) in partition, nullspace, projection, descriptor,
                              penalty, fd (default 1e-9) */
    int dense_max;         /* descriptor: pencils up to this order go to QZ (dggev), larger ones to
                              ARPACK shift-invert; nullspace: up to this many coordinates the dense
                              QRCP, above it SPQR (default 1000) */
    int dense_n_max;       /* partition, nullspace, projection, penalty, fd and the QZ descriptor are
                              dense (n^2 memory, n^3 time): above this many coordinates they refuse
                              (default 4000; the sparse methods are augmented and descriptor) */
    int nev;               /* partial spectrum (the sparse path of augmented and descriptor, ARPACK
                              shift-invert on the sparse pencil): eigenvalues wanted nearest the
                              shift, a complex-conjugate pair counting as two (default 20; never
                              more than the 2(n - m) of the model) */
    double shift;          /* partial spectrum: real shift sigma (default -1e-3: near zero, so the
                              lowest modes, but never an eigenvalue of a conservative or damped
                              system; 0 also means the default) */
    double constraint_scale; /* descriptor: factor on the constraint rows and multiplier columns;
                              0 (default) = automatic, ||[K M]||_1 / ||Phi_q||_1 */
    double pen_alpha;      /* penalty: factor alpha of Xi = alpha I, in the units of the model (default
                              1e6, source 001 Sec. 5.1) */
    double pen_xi;         /* penalty: damping ratio xi of Theta = 2 xi omega I (default 1) */
    double pen_omega;      /* penalty: frequency omega of Omega = omega^2 I (default 10) */
    double pen_ratio;      /* penalty: the error estimate repeats the eigenanalysis with alpha divided
                              by this factor and extrapolates the O(1/alpha) error (default 10) */
    double fd_step;        /* fd: relative central-difference step h (default eps^(1/3) ~ 6.06e-6) */
    double fd_tol;         /* fd: convergence check, relative change of A between steps h and h/2
                              above which fd fails (default 1e-3) */
    /* ---- large models (docs/linearization.md, "Large models: partial spectra") ---- */
    double mem_budget;     /* bytes the linearization and its eigen-solve may use (default, and
                              when <= 0: MBL_MEM_BUDGET_DEFAULT = 2 GiB). augmented computes the
                              whole spectrum dense only when the estimated peak of that fits, else
                              the nev eigenvalues nearest the shift by the sparse path; every other
                              request that would not fit (a dense method, too large an nev) is
                              refused up front with the memory it would need (MBL_ENOMEM) */
    int partial;           /* MBL_PARTIAL_AUTO (0, default): as above; MBL_PARTIAL_ALWAYS: the
                              sparse path even on small models (augmented, descriptor; the other
                              methods refuse); MBL_PARTIAL_NEVER: refuse instead of switching */
    double shift_im;       /* partial spectrum: imaginary part of the shift (default 0). Nonzero:
                              the eigenvalues nearest the complex shift (rotors: the whirl modes near
                              i Omega) from the first-order pencil (complex shift-invert) */
    const struct mbla_eigs_backend *eigs_backend; /* partial spectrum: the engine (mblin/la.h);
                              NULL (default): ARPACK shift-invert with KLU */
    double state_tol;      /* the states' test (docs/linearization.md, "States that stop describing
                              the motion"): a velocity state W_i whose unit rate moves mass
                              M-hat_ii < state_tol * m_max * |dv/dW_i|^2 (m_max the largest diagonal
                              entry of the model's mass matrix) is refused, in every method that
                              takes the user's states and in sweeps (default 1e-10; 0: default) */
    int dense_tree;        /* sweeps (mbl_lin_work_new, mbl_relinearize) of a model without
                              constraints whose states are its coordinates and their rates (a
                              URDF robot, a tree in relative coordinates without cut joints):
                              MBL_DENSE_TREE_AUTO (0, default) solves with the inverse of the
                              mass matrix by the tree's articulated bodies (a relative-coordinate
                              tree whose mass is its bodies' alone) or else a Cholesky
                              factorization of it, the general path at a point where it is not
                              positive definite; MBL_DENSE_TREE_CHOLESKY the Cholesky
                              factorization of M also for a tree (for comparison);
                              MBL_DENSE_TREE_OFF the general path always (for comparison;
                              docs/linearization.md "Sweeps") */
    int skip_outputs;      /* sweeps: nonzero, mbl_relinearize forms no C and D (left zero; the
                              workspace's first point has them) and evaluates no outputs, except a
                              tree's in joint coordinates, whose tape they share with its
                              kinematics: for a sweep that wants A, B and the modes only (default 0) */
    double cond_max;       /* augmented: above this condition estimate of the equilibrated augmented
                              matrix (where it is factored) the linearization is refused, naming the
                              largest entry of the model's Jacobian: its entries span more orders of
                              magnitude than double precision resolves (a tire with C = 1e300). A
                              stiff model's condition grows as (omega_max / omega_min)^2 and its
                              lowest mode keeps a relative accuracy of about eps sqrt(cond), so the
                              default 1 / DBL_EPSILON^2 = 2.0e31 is where not even that is left
                              (0: default; docs/linearization.md "Scaling and refusals") */
    int pen_equilibrium;   /* penalty: nonzero linearizes at the penalty system's own rest point near the
                              constrained one, its constraints violated by the amount that balances the
                              forces (source 001 Sec. 3.3), instead of at the constrained point (default 0;
                              points at rest of models with holonomic constraints only; dense path) */
    int desc_zero;         /* descriptor: nonzero takes the variant of source 001 Sec. 3.2 whose 3r spurious
                              eigenvalues are zero instead of infinite: Phi_q^T moves into E (the multipliers
                              as rates, lambda = mu') and Phi_q too (the constraints at acceleration level),
                              E = [I 0 0; 0 M s Phi_q^T; 0 s Phi_q 0] (default 0; dense QZ path, holonomic
                              constraints at rest, no outputs of multipliers or accelerations) */
    const double *pen_Xi;    /* penalty: general m x m matrices (column-major; m = pen_m, the model's holonomic */
    const double *pen_Theta; /* constraints in their order) of lambda = Xi (Phi'' + Theta Phi' + Omega Phi), */
    const double *pen_Omega; /* source 001 Eq. 11-12, each in place of its scalar form alpha I, 2 xi omega I,
                              omega^2 I; NULL (default): the scalar form. Xi and Omega symmetric positive
                              definite, Theta symmetric positive semidefinite (MBL_PEN_SYM_TOL); the error
                              estimate divides Xi by pen_ratio; non-holonomic constraints keep alpha, omega */
    int pen_m;               /* penalty: the order of pen_Xi, pen_Theta, pen_Omega (must equal the model's m) */
} mbl_lin_options;

/* relative tolerance of the symmetry of pen_Xi, pen_Theta, pen_Omega (|A_ij - A_ji| <= it max|A|;
 * the matrix used is (A + A^T) / 2) and of Theta's semidefiniteness */
#define MBL_PEN_SYM_TOL 1e-12

#define MBL_MEM_BUDGET_DEFAULT 2147483648.0
enum { MBL_PARTIAL_AUTO = 0, MBL_PARTIAL_ALWAYS = 1, MBL_PARTIAL_NEVER = -1 };
enum { MBL_DENSE_TREE_AUTO = 0, MBL_DENSE_TREE_OFF = -1, MBL_DENSE_TREE_CHOLESKY = 1 };

MBL_API void mbl_lin_options_default(mbl_lin_options *opt);
/* The model file's linearization options over opt (call it after mbl_lin_options_default and
 * before the caller's own): linearize.penalty_alpha, penalty_xi, penalty_omega set pen_alpha,
 * pen_xi, pen_omega where the file gives them; linearize.penalty_Xi, _Theta, _Omega set pen_Xi,
 * pen_Theta, pen_Omega (pointing into the model, valid while it lives) and pen_m; the other
 * fields are left as they are. */
MBL_API void mbl_lin_options_from_model(const mbl_model *model, mbl_lin_options *opt);

/* ---- the result of a linearization: the common part and what a method adds ----
 *
 * Every method fills the common part of mbl_linear: sizes, names, the state-space form
 * x' = A x + B u, y = C x + D u, the MCK form, the maps to the coordinates, the selection and the
 * condition. A method with an eigenproblem of its own (descriptor, penalty, the partial spectrum of
 * a large model) adds `spectrum`; the descriptor method adds `descriptor`, its pencil. Those
 * pointers are NULL when the method did not produce them; mbl_linear_free frees them.
 *
 * A partial spectrum (spectrum->partial = 1 from the sparse path of a large model, or when asked
 * for) leaves the dense outputs unformed: A, B, C, D, M, Cd, K, F, q_S, v_W and state_names are NULL
 * while nx, z0, z1 keep the sizes of the state-space form that was not formed (z0 = z1 = n - m);
 * the eigenvalues and mode shapes are in `spectrum`, the input/output maps of the pencil in
 * descriptor->Bd, Cdd (when small, else NULL too). The default augmented path and descriptor with
 * the state-space form fitting the budget fill them all as usual. */

/* The method-provided spectrum (descriptor, penalty: the method's own eigenproblem; the sparse
 * pencil's partial spectrum). mbl_modal reports these eigenvalues and flags instead of eig(A). */
typedef struct mbl_lin_spectrum {
    int neig;              /* number of eigenvalues below (> 0) */
    double *re, *im;       /* neig eigenvalues; infinite ones are +-INFINITY (JSON null) */
    int *spurious;         /* neig: 1 when the eigenvalue is spurious (infinite, constraint-tied) */
    double *berr;          /* neig: backward error of each eigenpair on the method's pencil, NaN where
                              not measured (the partial spectra of the sparse path measure it) */
    double *err;           /* neig: estimated absolute error of each eigenvalue (penalty: its extrapolation
                              in alpha and its QZ's spread over three other roundings of its pencil,
                              times 4, mbla_gev_rounding), NaN where not estimated */
    double *vre, *vim;     /* n*neig: the coordinate part dq of each eigenvector (may be NULL) */
    /* a partial spectrum (the sparse pencil; 0, "" otherwise) */
    int partial;           /* 1 when the list is part of the spectrum (ARPACK: nev nearest the shift) */
    double shift;          /* the shift of the partial spectrum (when from ARPACK) */
    char solver[16];       /* the engine of the partial spectrum ("" or "arpack": ARPACK; "slepc") */
    char reason[256];      /* why the spectrum is partial ("" when asked for or whole) */
} mbl_lin_spectrum;

/* The descriptor form E x' = Ad x + Bd u, y = Cdd x + Dd u (the descriptor method, and the sparse
 * pencil of a partial spectrum). Its transfer function Cdd (sE - Ad)^-1 Bd + Dd is the state-space
 * model's C (sI - A)^-1 B + D. An output of a multiplier is a column of Cdd (the multipliers are
 * descriptor variables) and an output of an acceleration or of der(X) a combination of the
 * descriptor variables and inputs through the pencil's dynamic rows, so Dd holds only what the
 * output takes from the inputs directly and differs from D for such outputs (docs/methods.md). */
typedef struct mbl_lin_descriptor {
    int nd;                /* order 2n + rank: x = [dq; dv; dlambda (independent constraints)] */
    double *E, *Ad, *Bd, *Cdd; /* nd*nd, nd*nd, nd*nu, ny*nd; E and Ad are NULL on the sparse (ARPACK)
                              path of large models, where they are never formed dense (Bd, Cdd
                              there: when they take less than an eighth of mem_budget) */
    double *Dd;            /* ny*nu, or NULL: then Dd = D (the sparse path) */
} mbl_lin_descriptor;

typedef struct mbl_linear {
    char method[32];
    int n;                 /* coordinates */
    int nx, nu, ny;        /* states x = [S; W], inputs, outputs */
    int z0, z1;            /* position-level and velocity-level state counts */
    int zx;                /* user ODE states X (last in x = [S; W; X]): nx = z0 + z1 + zx */
    char **state_names;    /* nx names: S names then W names ("der(theta)") */
    char **input_names, **output_names;
    double *A, *B, *C, *D; /* nx*nx, nx*nu, ny*nx, ny*nu */
    double *M, *Cd, *K;    /* z1*z1, z1*z1, z1*z0: M-hat S'' + C-hat S' + K-hat S = F r */
    double *F;             /* z1*nu: input matrix of the MCK form */
    double *q_S;           /* n*z0: dq/dS-bar (mode shapes at position level) */
    double *v_W;           /* n*z1: dv/dW-bar */
    double cond;           /* 1-norm condition estimate of the solve, of the equilibrated matrix
                              (augmented: the augmented matrix after row and column scaling;
                              partition, nullspace, projection, fd: [Phi_q; dS/dq] with rows
                              scaled): independent of the model's units */
    int nsel_added;        /* internal coordinates added to complete the user states */
    int nsel_dropped;      /* user states dropped (too many or dependent) */
    char selection[1024];  /* what the state selection did, for the report */
    double err_est;        /* estimated absolute error of the physical eigenvalues (penalty, fd);
                              0 for the exact methods */
    char notes[512];       /* what the method did (rank, spurious count, parameters), for reports */
    mbl_lin_spectrum *spectrum;     /* the method's own spectrum, or NULL (use eig(A)) */
    mbl_lin_descriptor *descriptor; /* the descriptor form, or NULL */
} mbl_linear;

/* An eigenvalue of a list: its parts, its modulus (INFINITY for an infinite one) and its index in
 * the list. mbl_eig_sort_modulus sorts n of them by ascending modulus, equal moduli by index (the
 * physical/spurious split of a pencil's eigenvalues, the finite eigenvalues of a sensitivity). */
typedef struct mbl_eig_item {
    double re, im, mag;
    int idx;
} mbl_eig_item;
MBL_API void mbl_eig_sort_modulus(mbl_eig_item *items, int n);

/* The linearization methods (docs/methods.md): number, and name i (NULL out of range). */
MBL_API int mbl_lin_method_count(void);
MBL_API const char *mbl_lin_method_name(int i);

/* The linear model of `model` at `point` by opt->method (NULL opt: the defaults). A numeric option
 * left at 0 takes its default; a negative or non-finite one (nev = -5, mem_budget = -1) is refused
 * (MBL_EARG), never read as the default. A singular configuration, or user states that stop
 * describing the motion (the states' test of opt->state_tol, every method but penalty; also in
 * mbl_lin_work_new and mbl_relinearize), is refused with MBL_ESINGULAR and one line naming the
 * rank deficiency or the state. */
MBL_API int mbl_linearize(const mbl_model *model, const mbl_point *point, const mbl_lin_options *opt,
                  mbl_linear **out, mbl_status *st);

/* Sweeps: re-linearize a compiled model at many points, fast (the augmented method).
 * mbl_lin_work_new linearizes at `point` like mbl_linearize (into *lin) and keeps what does not
 * change from point to point: the chosen states, the sparsity pattern of the augmented matrix
 * and its symbolic analysis, every work array. mbl_relinearize then updates `lin` in place at a
 * new point without allocating: evaluation, numeric refactorization (KLU), solve. The states
 * stay those chosen at the first point; when they stop parametrizing the motion the matrix is
 * singular and mbl_relinearize says so (make a new workspace there). The matrices keep the
 * power-of-2 scaling of the workspace's first point (KLU's own row scaling is off); where the
 * kinematic system of the augmented method applies (docs/linearization.md, "Sweeps"), only it is
 * factored at a new point and A, B follow from M-hat [dW] = [-K-hat, -C-hat, F] (equal to the
 * one-shot result to rounding). The reported condition is then the cheap pivot-ratio estimate of
 * the equilibrated kinematic matrix, else of the augmented one, unless it falls below 1e-8, when
 * the 1-norm estimate is computed. A model without constraints whose states are its coordinates
 * (a URDF robot, a tree in joint coordinates) is solved instead with a Cholesky factorization of
 * its mass matrix (mbl_lin_options.dense_tree, skip_outputs; docs/linearization.md "Sweeps").
 * A workspace serves one thread at a time; the model may be shared. */
typedef struct mbl_lin_work mbl_lin_work;
MBL_API int mbl_lin_work_new(const mbl_model *model, const mbl_point *point, const mbl_lin_options *opt,
                     mbl_lin_work **work, mbl_linear **lin, mbl_status *st);
MBL_API int mbl_relinearize(mbl_lin_work *work, const mbl_point *point, mbl_linear *lin, mbl_status *st);
MBL_API void mbl_lin_work_free(mbl_lin_work *work);
MBL_API void mbl_linear_free(mbl_linear *lin);

/* ---- comparison of every method (mblin compare) --------------------------------------- */

typedef struct mbl_compare_row {
    char method[32];
    int ok;                /* 1 when the method ran; 0 when it refused (note says why) */
    double seconds;        /* wall time of linearize + modal (median of the repetitions) */
    int nphys;             /* number of physical (non-spurious) eigenvalues */
    double max_rel_dev;    /* largest relative deviation of a physical eigenvalue from the
                              reference (-1 when not comparable) */
    double err_est;        /* the method's own error estimate (penalty, fd), else 0 */
    char note[512];
    char states[512];      /* the states of its linear model: "S1, S2; W1, W2" (position level; velocity
                              level), "..." when cut; "" when not formed (partial spectrum) */
    int user_states;       /* 1 when they are those of augmented (the user's states, completed by full
                              pivoting), 0 when the method's own or augmented did not run */
} mbl_compare_row;

typedef struct mbl_comparison {
    char reference[32];    /* "augmented", or the first exact method that ran when it refused */
    int nrows;
    mbl_compare_row *rows;
} mbl_comparison;

/* Run every method on (model, point), repeat each `repeat` times (<= 0: 3) for the timing. A
 * method that refuses is a row with ok = 0, not an error. Deviations are
 * |s - s_ref| / max(|s_ref|, zero_tol of the reference modes), eigenvalues matched nearest first;
 * from a zero eigenvalue of the reference, relative to its largest one (zero in both: equal). */
MBL_API int mbl_compare(const mbl_model *model, const mbl_point *point, const mbl_lin_options *opt, int repeat,
                mbl_comparison **out, mbl_status *st);
MBL_API void mbl_comparison_free(mbl_comparison *c);

/* ---- modes ------------------------------------------------------------------------------ */

typedef struct mbl_mode {
    double re, im;         /* eigenvalue */
    double freq_hz;        /* undamped natural frequency |lambda| / 2 pi */
    double damping_ratio;  /* -re / |lambda| (1 for real negative, -1 for real positive, 0 if |lambda| = 0) */
    int spurious;          /* 1 when the method flags the eigenvalue as spurious */
    int kind;              /* MBL_MODE_* */
    double backward_error; /* normwise backward error of the eigenpair (Tisseur 2000): the smallest
                              relative change of the data for which it is exact; for the quadratic
                              solvers ||(s^2 M + s C + K) x|| / ((|s|^2 ||M|| + |s| ||C|| + ||K||) ||x||)
                              with the reported M-hat, C-hat, K-hat (Frobenius norms), for dgeev
                              ||(A - s I) v|| / (||A|| ||v||); NAN for a method's own spectrum
                              (lin->neig > 0). docs/linearization.md, "Eigenvalues: which solver
                              and why" */
    double error_estimate; /* estimated absolute error of the eigenvalue where the method measures it
                              (penalty; descriptor on its QZ path: backward error times condition)
                              or where an eigenvalue near zero was judged a mode (sygvd: its
                              uncertainty), NAN elsewhere; an eigenvalue no
                              larger than its own error estimate is a zero mode. The JSON reports it
                              with "digits", the decimal digits it is worth */
} mbl_mode;

enum { MBL_MODE_OSCILLATORY = 0, MBL_MODE_REAL = 1, MBL_MODE_ZERO = 2 };

typedef struct mbl_modes {
    int nx;                /* number of eigenvalues */
    int n;                 /* coordinates (mode shape length) */
    mbl_mode *modes;       /* sorted by frequency, then real part (docs/linearization.md, "Mode numbers") */
    double *shape_re, *shape_im; /* n*nx: mode shapes mapped back to all coordinates */
    double zero_tol;       /* max(zero_tol * max |lambda|, the solver's floor): |lambda| below it is
                              zero unless its own error estimate says otherwise */
    char solver[32];       /* the eigen strategy used: "sygvd" (undamped, symmetric, M-hat definite),
                              "quadratic-qz" (the quadratic pencil by QZ), "dgeev" (A), or the
                              linearization method's own ("descriptor", "penalty") */
} mbl_modes;

typedef struct mbl_modal_options {
    double zero_tol;       /* |lambda| <= zero_tol * max |lambda| is a zero candidate (default 1e-9):
                              zero when below the rounding level of a zero eigenvalue for the solver
                              used (dgeev: 10 sqrt(eps ||A||_1), a rigid-body mode is a defective
                              double zero that rounding splits by about that much; quadratic-qz:
                              10 sqrt(eps) max |lambda|; sygvd decides its zeros per eigenvalue) or
                              1e-12, else only within its own error estimate (a mode with it
                              otherwise; docs/linearization.md, "Zero eigenvalues") */
} mbl_modal_options;

MBL_API void mbl_modal_options_default(mbl_modal_options *opt);
/* The order of every listing of modes (mbl_modal, mbl_sensitivity, the sweeps' and boundary's mode
 * numbers): frequency ascending, two frequencies within 1e-12 relative counting as equal (a
 * conjugate pair, or the stable and unstable pair of a flutter, whose magnitudes differ by
 * rounding only); then the real part ascending (within 1e-12 of the larger |s| counting as
 * equal); then each conjugate pair together (|im| ascending, bitwise), the positive imaginary part
 * first. freq_* in any unit common to both (zero modes
 * at 0), re_* and im_* the eigenvalue's parts. Returns < 0, 0 or > 0 as qsort's comparators do.
 * The listings then keep the modes of a repeated eigenvalue (within 1e-8 relative; all zero modes)
 * together, each with its conjugate, in the order of a canonical basis of their shapes that both
 * mbl_modal and mbl_sensitivity_compute give them (docs/linearization.md, "Mode numbers"). */
MBL_API int mbl_mode_order(double freq_a, double re_a, double im_a, double freq_b, double re_b, double im_b);
MBL_API int mbl_modal(const mbl_linear *lin, const mbl_modal_options *opt, mbl_modes **out, mbl_status *st);
MBL_API void mbl_modes_free(mbl_modes *m);

#ifdef __cplusplus
}
#endif
#endif
