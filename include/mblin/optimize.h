/* mblin: design optimization on the exact sensitivities (src/opt, docs/optimize.md).
 *
 *   mbl_optimize()   parameters with bounds -> the design that minimizes (or maximizes) an
 *                    objective on the modes under constraints on the modes, by NLopt (SLSQP, MMA,
 *                    CCSA, or COBYLA without derivatives), the gradients the exact eigen-
 *                    sensitivities with the shift of the operating point (mbl_sensitivity_compute)
 *
 * Modes are named by their number at the starting design (as `mblin linearize` lists them) and
 * tracked from evaluation to evaluation by the sweeps' tracking (mbl_track_modes_pred: the
 * eigenvalue and shape predicted with their exact derivatives along the step, matched by MAC), so
 * an objective keeps its mode when the modes' order changes. A tracked mode that meets another
 * (a repeated eigenvalue: no derivative), stops oscillating or is no longer recognised (MAC below
 * min_mac) ends the run with a one-line reason, as do an operating point that is lost and a final
 * design that violates a constraint: never an "optimum" that is not one.
 *
 * Every function returns 0 or a negative MBL_E* code with a one-line message in `st`;
 * destructors accept NULL. */
#ifndef MBLIN_OPTIMIZE_H
#define MBLIN_OPTIMIZE_H

#include "mblin/export.h"

#include "mblin/model.h"
#include "mblin/sensitivity.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One varied parameter of the model (by name), its bounds lo < hi (finite) and where to start
 * (NaN: the model's value, which must then lie within the bounds). */
typedef struct mbl_opt_param {
    const char *name;
    double lo, hi, start;
} mbl_opt_param;

/* What a goal measures. */
enum {
    MBL_OPT_FREQ = 1,        /* the tracked mode's undamped frequency |lambda| / 2 pi (Hz) */
    MBL_OPT_DAMPING = 2,     /* the tracked mode's damping ratio -Re lambda / |lambda| */
    MBL_OPT_MIN_DAMPING = 3, /* the least damping ratio over the modes (zero modes left out); as an
                                objective maximized by the bound formulation: an extra variable t,
                                maximize t subject to zeta_i >= t for every mode i */
    MBL_OPT_CHANGE = 4,      /* the design's change from the model's values: sum over the varied
                                parameters of ((p - p0) / p0)^2 (|p0| below 1e-300: (p - p0)^2) */
    MBL_OPT_PEAK = 5,        /* the largest |H(i w)| over the band band[0]..band[1] Hz, H from the
                                model's input `input` to the displacement of coordinate `output`, or
                                to the output `output` of the file's outputs (a coordinate's name
                                first) (H-infinity over the band); an objective to minimize or a
                                constraint <= a. At an equilibrium of a model without non-holonomic
                                constraints, user ODE states, implicit variables or generalized
                                speeds (an output: nor a structured term) */
    MBL_OPT_CRITICAL = 6,    /* a critical speed: the value of the parameter `speed` (not varied)
                                where mode `mode` (numbered at speed = `near`) has its damped
                                frequency |Im lambda| (rad/s) on the line order * speed
                                (mbl_boundary with order; each design's search starts from the
                                previous design's critical speed); its derivative by the implicit
                                function theorem from the exact sensitivities there */
    MBL_OPT_REAL = 7,        /* the tracked mode's real part Re lambda (1/s; any nonzero mode): minus its
                                decay rate, <= 0 for a stable mode */
    MBL_OPT_EXPR = 8,        /* an expression of the model's parameters (`expr`, docs/expressions.md):
                                a mass m1 + m2, a cost; its derivatives symbolic. A parameter the
                                file computes from a varied one: its derivatives through the file's
                                chain of parameters (mbl_dae_deriv_param_chain) */
    MBL_OPT_ORDER = 9,       /* the tracked mode's distance from an order line: its frequency minus
                                order * speed / (2 pi) (Hz), `speed` a parameter in rad/s that may be
                                varied itself (a running speed moved off a resonance); OUTSIDE -d:d
                                keeps the mode d Hz off the line. Its derivative is the frequency's
                                minus order / (2 pi) times the speed's (symbolic, as EXPR's) */
    MBL_OPT_MAX_REAL = 10    /* the largest real part Re lambda over the modes (1/s; zero modes left
                                out): the spectral abscissa, minus the least decay rate. As an
                                objective minimized by the bound formulation: an extra variable t,
                                minimize t subject to Re lambda_i / rho <= t for every mode i (rho
                                the largest |lambda| at the start); as a constraint <= a, every
                                mode's real part <= a */
};
/* What is asked of it: objectives minimize, maximize or reach a target a (minimize
 * ((x - a) / a)^2); constraints keep it >= a, <= a, or outside the band [a, b] (a < b). */
enum {
    MBL_OPT_MINIMIZE = 1,
    MBL_OPT_MAXIMIZE = 2,
    MBL_OPT_TARGET = 3,
    MBL_OPT_GE = 4,
    MBL_OPT_LE = 5,
    MBL_OPT_OUTSIDE = 6
};

typedef struct mbl_opt_goal {
    int kind;    /* MBL_OPT_FREQ ... */
    int sense;   /* MBL_OPT_MINIMIZE ... */
    int mode;    /* FREQ, DAMPING, REAL: mode I (1-based) at the starting design, as `mblin linearize`
                    lists it (an oscillatory mode: its +imaginary eigenvalue is meant either way) */
    double a, b; /* the target or bound(s) (Hz for frequencies) */
    const char *input, *output; /* MBL_OPT_PEAK: the input and the coordinate or output */
    double band[2];             /* MBL_OPT_PEAK: the band (Hz), 0 < band[0] < band[1] */
    const char *speed;          /* MBL_OPT_CRITICAL: the speed parameter, the order, where to start;
                                   MBL_OPT_ORDER: the speed parameter and the order */
    double order, near;
    const char *expr;           /* MBL_OPT_EXPR: the expression */
} mbl_opt_goal;

/* The scaled value of a constraint, g <= 0 when it holds: (a - f) / a for f >= a, (f - a) / a for
 * f <= a (frequencies, peaks, critical speeds), a - q and q - a for damping ratios, real parts (one
 * row per mode for MAX_REAL) and changes, 1 - ((f - c) / h)^2 outside a band of centre c and half-width h. The "violation"
 * reported is max(g, 0) over the constraints. */

/* The optimizers (NLopt's, docs/optimize.md) */
enum {
    MBL_OPT_AUTO = -1,  /* (default) SLSQP, or MMA for the least damping ratio's maximum and the
                           largest real part's minimum: their optimum is often a double eigenvalue,
                           where the damping ratios and real parts are not differentiable and
                           SLSQP's quasi-Newton model stalls short of it */
    MBL_OPT_SLSQP = 0,  /* sequential quadratic programming */
    MBL_OPT_MMA = 1,    /* method of moving asymptotes (Svanberg) */
    MBL_OPT_CCSAQ = 2,  /* conservative convex separable approximations, quadratic */
    MBL_OPT_COBYLA = 3  /* derivative-free (linear approximations): for comparison */
};

/* What the progress callback sees after every evaluation of the design. */
typedef struct mbl_opt_step {
    int evaluation;        /* 1, 2, ... */
    int nparams;
    const double *p;       /* the design evaluated (nparams) */
    double value;          /* the objective's quantity there (Hz, damping ratio, change) */
    double objective;      /* the function minimized */
    double violation;      /* the largest constraint violation (scaled, as above) */
    int nactive;           /* parameters at one of their bounds (to 1e-6 of the range) */
    const int *at_bound;   /* nparams: -1 at lo, +1 at hi, 0 inside */
    const char *note;      /* "" or what happened (a tracked mode changed its place in the list) */
} mbl_opt_step;
/* 0: go on; nonzero: stop (mbl_optimize then returns MBL_ECANCELLED). */
typedef int (*mbl_opt_progress)(void *ud, const mbl_opt_step *step);

typedef struct mbl_optimize_options {
    const mbl_opt_param *params;    /* nparams varied parameters */
    int nparams;
    mbl_opt_goal objective;         /* sense MINIMIZE, MAXIMIZE or TARGET (MIN_DAMPING: MAXIMIZE,
                                       MAX_REAL: MINIMIZE) */
    const mbl_opt_goal *constraints;/* nconstraints, sense GE, LE or OUTSIDE */
    int nconstraints;
    int algorithm;                  /* MBL_OPT_AUTO (default), MBL_OPT_SLSQP ... */
    double xtol_rel;                /* stop when a step changes every parameter by less than xtol_rel
                                       of its range (default 1e-7) */
    double ftol_rel;                /* ... or the objective by less than ftol_rel of it (default 1e-10) */
    double ctol;                    /* the optimizer's tolerance on each scaled constraint (default 1e-8) */
    double feas_tol;                /* the final design is refused (MBL_EMODEL, "infeasible") when a
                                       scaled constraint is violated by more than feas_tol (default 1e-6) */
    double kkt_tol;                 /* the final design is refused (MBL_ENOCONV, "not a local optimum")
                                       when its first-order optimality residual (the objective's
                                       gradient not balanced by the active constraints' and bounds',
                                       relative to its norm; docs/optimize.md) exceeds kkt_tol
                                       (default 1e-3) */
    int max_eval;                   /* evaluations of the design at most (default 200); reaching it is
                                       not an error (the result says so) */
    double min_mac;                 /* a tracked mode is lost when its MAC with the shape predicted
                                       from the previous evaluation falls below min_mac (default 0.5) */
    const mbl_setting *sets;        /* parameter overrides of every evaluation's copy of the model */
    int nsets;
    mbl_opoint_options opoint;      /* how each operating point is found (default: the file's) */
    mbl_opt_progress progress;      /* may be NULL */
    void *progress_ud;
} mbl_optimize_options;
MBL_API void mbl_optimize_options_default(mbl_optimize_options *opt);

typedef struct mbl_opt_result {
    int nparams;
    double *p;              /* the final design (nparams) */
    int *at_bound;          /* nparams: -1 at lo, +1 at hi, 0 inside */
    double value;           /* the objective's quantity at p */
    double peak_hz;         /* MBL_OPT_PEAK objective: the frequency of the peak at p (NaN otherwise) */
    double objective;       /* the function minimized at p */
    double violation;       /* the largest scaled constraint violation at p (<= feas_tol) */
    double kkt;             /* the first-order optimality residual at p (<= kkt_tol unless coalesced) */
    int coalesced[2];       /* the least damping ratio maximized (the largest real part minimized)
                               at a double eigenvalue: its modes (1-based; 0, 0 otherwise). The
                               damping ratios and real parts have no derivative there and the
                               first-order condition does not apply: the design was checked
                               instead by probing each parameter 1e-5 of its range either way (no
                               feasible probe damps better, or decays faster) */
    int newton_steps;       /* the largest real part at a double eigenvalue: the Newton steps on the
                               pair's discriminant that moved the optimizer's design onto it (not
                               counted in evaluations; docs/optimize.md) */
    int valley_steps;       /* the largest real part at a double eigenvalue: the descent steps along
                               the designs that keep it double (its real part there is smooth; each
                               step's evaluations not counted in evaluations; docs/optimize.md) */
    int evaluations;
    int algorithm;          /* the one used (MBL_OPT_AUTO resolved) */
    int stop;               /* NLopt's result code (docs/optimize.md) */
    char stop_reason[128];  /* in words: "xtol reached", "max evaluations reached", ... */
    int nhistory;           /* = evaluations */
    double *history;        /* the objective's quantity at every evaluation */
    double *history_violation;
    mbl_sensitivity *S;     /* the modes at p with their derivatives with respect to the varied
                               parameters (S->wrt) */
    int tracked_objective;  /* the objective's mode in S->modes (0-based; -1 when it has none) */
    int *tracked;           /* nconstraints: each constraint's mode in S->modes (-1 when none) */
    int crossings;          /* evaluations at which a tracked mode changed its place in the list */
} mbl_opt_result;

/* Optimize the design of `model` (loaded by the caller, not changed: every evaluation is a copy,
 * mbl_model_copy, with opt->sets and the design's values). Errors: a bad option or goal (MBL_EARG:
 * unknown parameter, bounds, mode out of range or not oscillatory), a lost operating point or
 * tracked mode, a failed sensitivity (the evaluation's error, prefixed with the design), an
 * infeasible final design (MBL_EMODEL), NLopt's failure (MBL_ENOCONV), a stop (MBL_ECANCELLED). */
MBL_API int mbl_optimize(const mbl_model *model, const mbl_optimize_options *opt, mbl_opt_result **out,
                         mbl_status *st);
MBL_API void mbl_opt_result_free(mbl_opt_result *r);

/* The NLopt algorithm's name ("slsqp", "mma", "ccsaq", "cobyla"), NULL for an unknown one. */
MBL_API const char *mbl_opt_algorithm_name(int algorithm);

#ifdef __cplusplus
}
#endif
#endif
