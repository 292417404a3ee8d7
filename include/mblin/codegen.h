/* mblin: symbolic linear models in the parameters and generated code (src/codegen, issue 17,
 * docs/symbolic.md).
 *
 *   mbl_symlin_new()     model + point -> M-hat, C-hat, K-hat, F, A, B, C, D as expressions of
 *                        the parameters p, the point's coordinates q and the inputs r
 *   mbl_symlin_special() keep only some parameters as symbols, the point in closed form
 *   mbl_codegen()        straight-line C, Python (NumPy) or Octave code of the same matrices
 *
 * At a point with motion, or with states that are the file's state functions s(q) (a mechanism's
 * joint measures), the reduction runs on the stacked constraints [s(q) - S; Phi(q)] and adds the
 * velocity and acceleration terms (gyroscopic C-hat, centrifugal K-hat; docs/symbolic.md).
 * The reduction is source 002's (Ge et al., Eq. 15-64) at a point at rest (v = 0, vdot = 0):
 * the states S are coordinates (those the library's linearization chooses), q = [S; y], the
 * dependent coordinates y follow from Phi_S + Phi_y H_y = 0, H = [I; H_y] (H_x of the source),
 * lambda from the dependent rows of the equations of motion R(q, v, vdot, lambda, r) = 0, and
 *     M-hat = H^T R_vdot H,  C-hat = H^T R_v H,  K-hat = H^T R_q H (R_q holds the constraint-force
 *     coupling (Phi_q^T lambda)_q),  F = -H^T R_r,
 *     A = [0 I; -M-hat^-1 K-hat  -M-hat^-1 C-hat],  B = [0; M-hat^-1 F],
 *     C = [y_q H  y_v H],  D = y_r, and for outputs of accelerations and multipliers (no ODE
 *     states) their sensitivities dvdot = H [A21 A22 B2] and dlambda from the dependent rows of the
 *     linearized equations of motion (src/codegen/symlin_outputs.c; with motion symlin_moving.c).
 * The inverses are symbolic Gaussian eliminations whose pivots are chosen by their values at the
 * model's point (valid wherever those pivots do not vanish). Expressions live in a graph of the
 * symbolic model's own (the model's graph is copied, so the model stays immutable). */
#ifndef MBLIN_CODEGEN_H
#define MBLIN_CODEGEN_H

#include "mblin/export.h"

#include <stdio.h>

#include "mblin/expr.h"
#include "mblin/model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mbl_symlin {
    mblx_graph *g;
    int n, m, np, nr, ny;     /* coordinates, constraints, parameters, inputs, outputs */
    int z, nx;                /* states S (coordinates), nx = 2 z */
    char **pname, **qname, **rname, **yname, **state_names; /* state_names: nx ("x2", "der(x2)") */
    double *pval, *qval, *rval; /* the model's parameter values and point (np, n, nr) */
    int nq;                   /* point values passed as q: the n coordinates, then the user ODE states X and
                                 implicit variables Z (nq = n + nX + nZ; q, qname, qval have nq entries) */
    int *pkept;               /* np: 1 when parameter i stays a symbol (mbl_symlin_special; NULL before) */
    double t;                 /* time of the point (substituted as a number) */
    int *sidx;                /* z: coordinate index of each state */
    mblx_id *p, *q, *r;       /* symbols (np, n, nr) */
    mblx_id *lam;             /* m: lambda(q, p, r) */
    mblx_id *H;               /* n*z: dq/dS (column-major) */
    mblx_id *M, *Cd, *K;      /* z*z */
    mblx_id *F;               /* z*nr */
    mblx_id *A, *B, *C, *D;   /* nx*nx, nx*nr, ny*nx, ny*nr */
    mblx_id *qpoint;          /* n: the point as mbl_symlin_special found it (NULL before) */
    mblx_id *res;             /* m + n: Phi(q) and R(q, lambda(q)) at rest, zero at an equilibrium */
    char note[512];           /* what was done (e.g. the point kept as symbols) */
    /* points with motion (v != 0 or vdot != 0): the matrices are functions of the velocities too */
    int moving;               /* 1 at a point with motion (the v symbols appear), 0 at rest */
    mblx_id *v;               /* n: velocity symbols, named der(q) */
    double *vval;             /* n: the point's velocities */
    mblx_id *acc;             /* n: vdot(q, v, p, r) at the point (moving only; NULL at rest) */
    int at;                   /* mbl_at of the point (the Newton iteration solves equilibrium or steady) */
    /* kept for mbl_symlin_newton: the equations of motion R(q, v, vdot, lambda, r), Phi(q) and the
     * vdot and lambda symbols (n, m, n, m) */
    mblx_id *R, *Phi, *asym, *lsym;
    /* the Newton iteration for the operating point (mbl_symlin_newton; nn = 0 before) */
    int nn;                   /* unknowns = equations */
    int *nunk;                /* nn: unknown j is coordinate nunk[j] (< n) or multiplier nunk[j] - n */
    mblx_id *nres, *njac;     /* nn residuals, nn x nn Jacobian (column-major) */
    mblx_id *nstep;           /* nn: the Newton step -njac^-1 nres as expressions (symbolic elimination) */
} mbl_symlin;

/* Symbolic linear model at `point` (at rest, or with motion: then the matrices are functions of
 * the velocities v too, with the gyroscopic and centrifugal terms in C-hat and K-hat; holonomic
 * constraints only; no user velocity states; outputs of accelerations or multipliers only without
 * ODE states (else refused: drop them, mbl_load_options.outputs); user ODE states X and implicit
 * variables Z at a point at rest with coordinate states: x = [S; S'; X], and X, Z stand for their point
 * values as symbols after the coordinates in q, sl->nq = n + nX + nZ). max_nodes bounds the size of the
 * result (0: 2,000,000 nodes): estimated from the model's sizes before any work and refused up front
 * (MBL_EMODEL) with the estimate; the graph may grow to 8 max_nodes while the reduction works; a larger
 * result is refused with its size. */
MBL_API int mbl_symlin_new(const mbl_model *model, const mbl_point *point, size_t max_nodes, mbl_symlin **out,
                   mbl_status *st);
MBL_API void mbl_symlin_free(mbl_symlin *sl);

/* Specialize in place for printing: parameters not named in keep (nkeep names; keep_all = 1 keeps
 * all) become their numbers; the point's coordinates are replaced by closed forms in the kept
 * parameters when every coordinate's value matches one of c, +-p, +-p/2, +-2p, +-(p1 +- p2)
 * (c a number of the point that no parameter changes; p any parameter, kept or not) and the closed-form point satisfies the
 * equilibrium (constraints and the reduced equations of motion) at 20 random parameter sets to
 * 1e-9; else the coordinates stay symbols (sl->note says which). *closed receives 1 or 0. */
MBL_API int mbl_symlin_special(mbl_symlin *sl, const char *const *keep, int nkeep, int keep_all, int *closed,
                       mbl_status *st);
/* The same with the point's coordinates kept as symbols when point_symbols is 1 (M-hat at a general
 * configuration, e.g. the slider-pendulum's M(theta); K-hat, A, ... hold only at the point). */
MBL_API int mbl_symlin_special2(mbl_symlin *sl, const char *const *keep, int nkeep, int keep_all, int point_symbols,
                        int *closed, mbl_status *st);

/* The check of a specialized model (after mbl_symlin_special) against mblin's numeric linearization:
 * at MBL_SYMLIN_VERIFY_SETS random values of the parameters kept as symbols (each varies: by a factor
 * in [0.8, 1.2], a zero one in [-0.2, 0.2]; one set, the model's, when none is kept) the model file
 * `path` is loaded with those values (and the caller's sets for the others), its operating point
 * solved with po, linearized (augmented), and A, B, C, D of sl evaluated there (the point's
 * coordinates, ODE states and velocities where sl keeps them as symbols) must agree within tol
 * (0: MBL_SYMLIN_VERIFY_TOL) relative to each matrix's largest entry. A set whose point does not
 * solve or whose states differ is not compared. MBL_EMODEL with the set and the deviation
 * otherwise; out receives the counts and the largest deviation. */
#define MBL_SYMLIN_VERIFY_SETS 20
#define MBL_SYMLIN_VERIFY_TOL 1e-6
typedef struct mbl_symlin_check {
    int tried, compared;      /* sets tried, sets compared */
    int failed_set;           /* 1-based set that disagreed (0: none) */
    double worst;             /* largest relative deviation over the sets compared */
} mbl_symlin_check;
MBL_API int mbl_symlin_verify(const mbl_symlin *sl, const char *path, const mbl_setting *sets, int nsets,
                              const mbl_opoint_options *po, double tol, mbl_symlin_check *out, mbl_status *st);

/* The expanded canonical form of e (src/codegen/expand.c): products distributed over sums,
 * integer powers 2..8 of sums multiplied out, then the engine's canonical form (like terms
 * collected, equal bases collecting exponents). Two rational expressions whose denominators are
 * monomials are equal as functions iff their expanded forms are the same node (e.g. (m1 + m2)/3
 * and m1/3 + m2/3; g*(m1*L2 + m2*(2*L2 + L1))/(2*L1*L2) and m2*g/(2*L2) + (m1*g/2 + m2*g)/L1);
 * sums in denominators stay as powers of their expanded sums. A product whose expansion would
 * have more than max_terms terms is kept unexpanded. MBLX_NONE on failure (graph error). */
MBL_API mblx_id mbl_symlin_expand(mblx_graph *g, mblx_id e, size_t max_terms);

/* Number of distinct nodes reachable from every matrix of sl (the size of its straight-line code). */
MBL_API size_t mbl_symlin_size(const mbl_symlin *sl);

/* LaTeX of an expression of sl->g (fractions with rational coefficients, m1 -> m_{1}); a new string
 * (free with mbl_free), or NULL with st set. */
MBL_API char *mbl_symlin_latex(const mblx_graph *g, mblx_id e, mbl_status *st);

/* Number of nodes of every matrix of sl printed as trees (shared subexpressions counted at each
 * use: the size of the printed text, which grows much faster than mbl_symlin_size). */
MBL_API double mbl_symlin_print_size(const mbl_symlin *sl);

/* The Newton iteration for the operating point (an equilibrium: v = 0; or a steady motion: the
 * point's velocities kept, vdot = 0, cyclic coordinates kept): residuals [R(q, v, 0, lambda, r);
 * Phi(q); Phi_q v; (Phi_q v)_q v] in the unknowns [q; lambda] (cyclic coordinates and coordinates
 * whose column vanishes at the point left out), square rows chosen by QR with column pivoting of
 * the Jacobian's transpose at the point; fills sl->nn, nunk, nres, njac, nstep (the step by a
 * symbolic elimination with pivots chosen at the point, for the generated C). A given point is
 * refused (MBL_EARG); a singular system at the point is MBL_ESINGULAR. Call before
 * mbl_symlin_special (it uses the unspecialized matrices' symbols). */
MBL_API int mbl_symlin_newton(mbl_symlin *sl, mbl_status *st);

typedef enum mbl_lang { MBL_LANG_C = 0, MBL_LANG_PYTHON = 1, MBL_LANG_OCTAVE = 2 } mbl_lang;

/* Write straight-line code for A, B, C, D, M-hat, C-hat, K-hat, F of sl to f: a function
 * `name`(p, q, r) of the parameter values, the point's coordinates and the inputs (C:
 * `void name(const double *p, const double *q, const double *r, double *A, double *B, double *C,
 * double *D, double *M, double *Cd, double *K, double *F)`, column-major like mbl_linear, only
 * <math.h>; Python: `name(p, q, r)` returning a dict of NumPy arrays; Octave: `[A, B, C, D, M,
 * Cd, K, F] = name(p, q, r)`), with the model's values as NAME_P, NAME_Q, NAME_R. At a point
 * with motion the velocities v follow q (C: name(p, q, v, r, ...); Python name(p, q, r, v);
 * Octave name(p, q, r, v)), NAME_V their values. With the Newton iteration (sl->nn > 0): C
 * `int name_newton(const double *p, const double *r, [const double *v,] double *q, double *lam)`
 * (q: guess in, point out; returns the iterations or -1), Python `name_newton(p, r, q, v)`
 * returning (q, lam, iterations), Octave: the main function takes q as the guess and returns
 * [A, ..., F, q, lam, its] at the point it solves. */
/* NULL if name can be the generated function's name in lang, else why not (a static string, e.g.
 * "is a Python keyword"): an identifier (C, Octave: a letter first; Python: a letter or _), at most
 * 56 characters, not a keyword of lang and not a name the generated code uses itself (arguments,
 * locals t<number>, helpers, np, numpy, math, the math functions it calls; docs/symbolic.md).
 * mbl_codegen refuses such a name (MBL_EARG). */
MBL_API const char *mbl_codegen_name_check(mbl_lang lang, const char *name);

MBL_API int mbl_codegen(const mbl_symlin *sl, mbl_lang lang, const char *name, const char *model_file, FILE *f,
                mbl_status *st);

#ifdef __cplusplus
}
#endif
#endif
