/* mblin: design sensitivities and stability boundaries (docs/study.md).
 *
 *   mbl_sensitivity_compute() the model's derivatives (mbl_dae_deriv, include/mblin/dae.h) +
 *                             point -> exact d(eigenvalue, frequency, damping ratio, mode
 *                             shape)/d(parameter), the shift of the operating point included
 *   mbl_boundary()            model + parameter -> the value where a mode's real part
 *                             crosses zero (or its frequency meets an order line), by Newton with
 *                             the exact sensitivities
 *
 * Every function returns 0 or a negative MBL_E* code with a one-line message in `st`;
 * destructors accept NULL. Matrices are dense and column-major. */
#ifndef MBLIN_SENSITIVITY_H
#define MBLIN_SENSITIVITY_H

#include "mblin/export.h"

#include "mblin/dae.h"
#include "mblin/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- sensitivities ----------------------------------------------------------------------- */

typedef struct mbl_sens_options {
    int shapes;          /* 1 (default): also the mode shapes' derivatives */
    int dense_max;       /* up to this pencil order N = n + m + k (default 600) the eigenvalues and
                            eigenvectors come from QZ on the 2N companion form (N^3); above it the
                            eigenvalues of the default linearization (mbl_linearize, mbl_modal) and
                            the eigenvectors by inverse iteration on the sparse pencil. The
                            pencil's derivatives are held dense: (3 + 3 nwrt) N^2 doubles, refused
                            above 2 GB */
    double zero_tol;     /* |lambda| <= zero_tol * max |lambda|: a zero mode (default 1e-9; never below
                            10 sqrt(eps) max |lambda|, the rounding split of a defective double zero,
                            as mbl_modal); two zero modes are a multiple zero, derivatives undefined */
    double repeat_tol;   /* two eigenvalues closer than repeat_tol * max(1, |lambda|) are repeated:
                            their derivatives are not defined one by one (default 1e-8) */
    double rank_tol;     /* relative rank tolerance of the constraint Jacobian (default 1e-9) */
} mbl_sens_options;
MBL_API void mbl_sens_options_default(mbl_sens_options *opt);

/* One mode: the eigenvalue and what follows from it, with derivatives with respect to the
 * parameters wrt[0..nwrt-1] (arrays of nwrt; NaN where not defined). */
typedef struct mbl_sens_mode {
    double re, im;          /* eigenvalue (1/s) */
    double freq_hz;         /* |lambda| / 2 pi */
    double damping_ratio;   /* -re / |lambda| */
    int kind;               /* MBL_MODE_* */
    int defined;            /* 1: simple eigenvalue, derivatives defined; 0: zero or repeated
                               (the derivative of a multiple eigenvalue is not one number) */
    double *dre, *dim;      /* d lambda / dp */
    double *dfreq_hz;       /* d freq_hz / dp */
    double *ddamping;       /* d damping_ratio / dp */
    double backward_error;  /* of the eigentriple (s, v, w) on the linearized equations' quadratic
                               pencil (Tisseur 2000), at most sqrt(eps) or the call fails */
    double error_estimate;  /* estimated absolute error of the eigenvalue: its condition on the
                               quadratic pencil (Tisseur 2000: sum |s|^k ||P_k|| ||w|| ||v|| /
                               |w^H P'(s) v|) times the larger of its backward error and 8 eps;
                               INFINITY at a defective eigenvalue, 0 for a deflated cyclic zero.
                               Whether a real part is zero is told against it (mbl_boundary) */
} mbl_sens_mode;

typedef struct mbl_sensitivity {
    int n;                  /* coordinates (shape length) */
    int np;                 /* parameters of the model */
    int nwrt;               /* parameters differentiated */
    int *wrt;               /* nwrt parameter indices */
    int nmode;              /* finite eigenvalues of the linearized DAE (= states of the linear model) */
    mbl_sens_mode *modes;   /* sorted as mbl_modal: frequency, then real part, +imaginary first */
    double *shape_re, *shape_im;   /* n*nmode: dq of each mode, largest component 1 (real) */
    double *dshape_re, *dshape_im; /* n*nmode*nwrt, [i + n*(mode + nmode*w)] (NULL without shapes) */
    double *dq, *dv, *dlambda;     /* n*nwrt, n*nwrt, m*nwrt: the shift of the operating point */
    int *point_defined;     /* nwrt: 0 when the point does not persist as the parameter changes (the
                               equations that define it have no solution nearby: a singular
                               configuration whose geometry the parameter changes); its derivatives
                               are then NaN */
    int m;                  /* holonomic constraints (rows of dlambda) */
    char notes[512];
    int exact;              /* 1; 0 when the model has user routines (docs/user-routines.md): their
                               second derivatives are central differences (notes say so) */
} mbl_sensitivity;

/* Sensitivities at a point of d's model with respect to the parameters wrt (NULL: all). */
MBL_API int mbl_sensitivity_compute(const mbl_dae_deriv *d, const mbl_point *pt, const int *wrt, int nwrt,
                            const mbl_sens_options *opt, mbl_sensitivity **out, mbl_status *st);
MBL_API void mbl_sensitivity_free(mbl_sensitivity *s);

/* ---- stability boundaries ---------------------------------------------------------------- */

/* A mode named without depending on where its eigenvalue lies (docs/study.md, "Naming a mode"):
 * by its number, by its shape, or by a sweep's branch. At most one of index, shape and branch is
 * set; all zero: not named (the caller's default applies). */
typedef struct mbl_mode_spec {
    int index;           /* > 0: mode I as listed by `mblin linearize` (1-based, mbl_mode_order) */
    const char *shape;   /* "NAME[=W],NAME[=W],...": the mode whose shape has the largest MAC with
                            the vector that has weight W (default 1; complex as a+bi or bi) at
                            coordinate NAME and 0 at every other coordinate */
    int branch;          /* > 0: branch B of the sweep in `sweep` ... */
    const char *sweep;   /* ... the JSON a `mblin sweep --json` wrote (or sweep.json of -o DIR) */
} mbl_mode_spec;

/* The 0-based index in S->modes of the mode `spec` names, at parameter `param` = `value` (used by
 * a sweep branch: its eigenvalue is interpolated there; param may be NULL otherwise). S needs its
 * shapes for `shape`. Errors: a bad spec (MBL_EARG: unknown coordinate, unreadable sweep, branch
 * not in it, index out of range), no mode that matches it (MBL_EMODEL). */
MBL_API int mbl_mode_pick(const mbl_model *md, const mbl_sensitivity *S, const mbl_mode_spec *spec, const char *param,
                          double value, int *mode, mbl_status *st);

typedef struct mbl_boundary_options {
    double order;        /* 0 (default): the real part of the mode crosses zero; else the mode's
                            damped frequency |Im lambda| (rad/s) meets the line order * p */
    mbl_mode_spec mode;  /* the mode to follow (default none: the boundary nearest `near` of any mode) */
    double from, to;     /* the range searched for a boundary (default NaN, NaN: chosen around
                            `near`, docs/study.md) */
    double tol;          /* the boundary is found to tol * max(1, |p|) (default 1e-10) */
    int max_iter;        /* iterations of the refinement (default 50) */
    mbl_opoint_options opoint; /* how each point is found (default: the file's) */
    mbl_sens_options sens;
    /* A Floquet boundary (include/mblin/floquet.h, docs/floquet.md "Boundaries"): NULL (default),
     * or where the spectral radius of the monodromy matrix leaves the unit circle, each point's
     * period floquet->period or 2 pi / floquet_spin (a spin_speeds parameter, by name) there;
     * bracketed on the same grid, refined by bisection (order and mode are not used) */
    const struct mbl_floquet_options *floquet;
    const char *floquet_spin;
} mbl_boundary_options;
MBL_API void mbl_boundary_options_default(mbl_boundary_options *opt);

typedef struct mbl_boundary_result {
    double value;        /* the parameter at the boundary */
    double re, im;       /* the mode's eigenvalue there */
    double f_near;       /* the crossing function (re, or |im| - order p; the pair's discriminant for a
                            collision) at `near` */
    double slope;        /* its derivative at the boundary (NaN where it is not defined: a double
                            eigenvalue reached exactly) */
    int iterations;      /* points evaluated inside the bracket */
    int points;          /* points evaluated in all (the search and the bracket) */
    int mode_near;       /* the mode's index at `near` (1-based, sorted as mbl_modal) */
    double last_step;    /* |last Newton step|, or the final bracket's width */
    double lo, hi;       /* the bracket of the search: two neighbouring points between which the
                            crossing function changed sign (lo < hi) */
    int collision;       /* 1: two eigenvalues meet and leave the imaginary axis together (a spectrum
                            symmetric about it, e.g. an undamped gyroscopic model: flutter; divergence
                            at zero). f_near and slope are then the pair's discriminant
                            Re (s1 - s2)^2 and its derivative, re + i im the meeting point, mode_near
                            the lower mode of the pair at `near` */
    int divergence;      /* 1: the eigenvalue (or the pair) is zero at the boundary: a real eigenvalue
                            through zero (static instability); 0: an oscillatory one (flutter) */
    /* a Floquet boundary (opt->floquet): floquet = 1, the multiplier of largest modulus on the
     * unstable side (mult_re + i mult_im), how it leaves the circle (MBL_FLOQUET_CROSS_*), re + i im
     * its exponent log(mu) / T there (imaginary part the principal value), f_near log(spectral
     * radius) at near, slope NaN, divergence 1 through +1 */
    int floquet, floquet_kind;
    double mult_re, mult_im;
    /* the answer's error: accuracy an estimate of |value - boundary| (opt.tol max(1, |value|); for
     * a boundary inside a zero cluster the Hermite root's distance to the chord's, docs/study.md);
     * verified the half-width d of the interval value -+ d across which the number of eigenvalues
     * on the unstable side was checked to change (the answer is refused when it does not) */
    double accuracy, verified;
} mbl_boundary_result;
enum { MBL_FLOQUET_CROSS_PLUS1 = 1, MBL_FLOQUET_CROSS_MINUS1 = 2, MBL_FLOQUET_CROSS_PAIR = 3 };

/* `model` is loaded by the caller (from a file or a string). At each point it is copied
 * (mbl_model_copy: its text loaded again with its own overrides, never its file) with sets plus
 * param = value over them (so that the parameters computed from param follow, as with --set), the
 * point found, linearized and differentiated. The boundary is bracketed first: the modes are tracked over a grid walked
 * outward from `near` (3 % steps, alternately up and down, within [opt.from, opt.to]: default
 * near / 3 .. 3 near) until a mode's crossing function changes sign; the nearest such change is
 * then refined by a safeguarded root finder (Newton steps with the exact sensitivity while they
 * stay inside the bracket and shrink it, else the Illinois method). A collision (two eigenvalues
 * meeting on the imaginary axis) is refined on their discriminant, a landing exactly on a double
 * or zero eigenvalue is the answer (docs/study.md). The caller's model is not changed. Errors:
 * unknown parameter, bad range or mode (MBL_EARG), no boundary in the range (MBL_EMODEL, naming
 * the range searched), the refinement not converging, or ending where the number of eigenvalues on
 * the unstable side does not change (res.verified: MBL_ENOCONV). */
MBL_API int mbl_boundary(const mbl_model *model, const mbl_setting *sets, int nsets, const char *param, double near,
                 const mbl_boundary_options *opt, mbl_boundary_result *res, mbl_status *st);

#ifdef __cplusplus
}
#endif
#endif
