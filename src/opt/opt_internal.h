/* The optimizer's own context, shared by its files (src/opt): the evaluation of a design (its
 * modes, their tracking, the objective and constraints with their gradients; opt_eval.c) and the
 * driver around NLopt (optimize.c). */
#ifndef MBLIN_OPT_OPT_INTERNAL_H
#define MBLIN_OPT_OPT_INTERNAL_H

#include "mblin/dae.h"
#include "mblin/optimize.h"

/* A parameter counts as at a bound within AT_BOUND_TOL of its range. */
#define OPT_AT_BOUND_TOL 1e-6
/* A change objective's reference value below this is taken as zero (absolute change). */
#define OPT_CHANGE_TINY 1e-300

typedef struct opt_expr opt_expr; /* opt_expr.c */

typedef struct opt_ctx {
    const mbl_model *model;
    const mbl_optimize_options *o;
    int np;             /* varied parameters */
    int bound;          /* the objective by the bound formulation (x[np] = t): 1 MIN_DAMPING (maximize t,
                           t <= zeta_i), 2 PEAK (minimize t, |H|_k / pscale <= t), 3 MAX_REAL (minimize
                           t, Re lambda_i / pscale <= t); 0 none */
    int nbound;         /* its rows: one per mode (1, 3), one per local peak (2, OPT_FRF_PEAKS) */
    double pscale;      /* PEAK objective: its value at the start (t is the peak over it); MAX_REAL: the
                           largest |lambda| of a nonzero mode at the start */
    int nx;             /* np + bound */
    int algorithm;      /* MBL_OPT_* used (MBL_OPT_AUTO resolved) */
    int *idx;           /* np: the parameters' indices in the model */
    double *lo, *hi, *p0; /* np: bounds and the model's values */
    mbl_setting *sets;  /* o->nsets + np */
    int nsets;
    int shapes;         /* the goals name modes: shapes are computed and tracked by MAC */
    int ncon;           /* scalar constraints (a MIN_DAMPING or MAX_REAL goal: one per mode) */
    int nmode;          /* modes of every evaluation (fixed by the first; -1 before it) */
    /* the last evaluation */
    int have;
    double *x, *p;      /* nx, np */
    mbl_sensitivity *S; /* its modes and their derivatives */
    int *branch;        /* nmode: branch b (numbered at the start) is S->modes[branch[b]] */
    int *goal_branch;   /* 1 + nconstraints: the branch of the objective and of each constraint (-1) */
    double f, *fgrad;   /* objective and its gradient in x (nx) */
    double g0;          /* ||fgrad|| at the start: the first-order residual's scale */
    double value;       /* the objective's quantity */
    double *cval, *cgrad; /* ncon and ncon x nx (row-major, as NLopt) */
    double violation;
    int *at_bound;      /* np */
    double *crit_near;  /* 1 + nconstraints: where each critical speed's next search starts */
    opt_expr **ex;      /* 1 + nconstraints: the expression goals' (NULL for the others) */
    double *pk_val, *pk_grad, *pk_hz; /* (1 + nconstraints) x OPT_FRF_PEAKS (pk_grad x np): the peak
                                         goals' local peaks, their gradients in p and frequencies
                                         (Hz) at the last point */
    int crossings;
    char note[160];
    /* the best feasible design evaluated (the objective's own value: the least damping ratio, not
     * t, under the bound formulation): what mbl_optimize returns */
    double *best_x, best_merit;
    int has_best;
    /* the history and how the run ended */
    int evals, cap;
    double *hist, *hist_viol;
    int fail;           /* 0, or the code of the error that stopped the run (in err) */
    mbl_status err;
    void *nl;           /* the nlopt_opt, to force a stop */
} opt_ctx;

/* optimize.c: the bounds of the bound formulation's t: [-1, 1] for the least damping ratio,
 * [0, OPT_PEAK_TMAX] for the peak, unbounded for the largest real part (its rows bound it below) */
void opt_t_bounds(const opt_ctx *c, double *lo, double *hi);
/* optimize.c: the context of a run: the options and parameters checked, its arrays made, x0 (nx)
 * the scaled start (its t, x0[np], left to the caller); and its release (also after a failed
 * init). 0 or an error code with st set. */
int opt_ctx_init(opt_ctx *c, const mbl_model *model, const mbl_optimize_options *o, double *x0, mbl_status *st);
void opt_ctx_free(opt_ctx *c);
/* opt_eval.c: evaluate the design x (nx, scaled to [0, 1] per parameter) into c (cached: a second
 * call at the same x does nothing). 0 or an error code with st set. */
int opt_eval(opt_ctx *c, const double *x, mbl_status *st);
/* opt_eval.c: the constraints' count for the goals (after the first evaluation fixed nmode) */
int opt_constraint_count(const opt_ctx *c);
/* opt_kkt.c: the first-order optimality residual at c's design (documented there); constraints
 * and bounds within act_tol (scaled) count as active */
#define OPT_KKT_ACTIVE 1e-3
int opt_kkt_residual(const opt_ctx *c, double act_tol, double *res, mbl_status *st);
/* the same with the rows skip[k] != 0 left out and nextra further active directions (nextra x nx,
 * each with a non-negative multiplier) first; resid (nx, or NULL): grad f + sum lambda_i grad g_i,
 * unscaled (its negative is a first-order descent direction within the active set) */
int opt_kkt_core(const opt_ctx *c, double act_tol, const char *skip, const double *extra, int nextra, double *res,
                 double *resid, mbl_status *st);
/* opt_kkt.c: a max-min optimum at a double eigenvalue, and its check by probing (documented
 * there): two eigenvalues closer than OPT_COALESCE_REL of their size coincide; probes
 * OPT_PROBE_STEP (scaled) away must not raise the least damping ratio (lower the largest real
 * part) by OPT_PROBE_GAIN of it */
#define OPT_COALESCE_REL 1e-2
#define OPT_COALESCE_REL_REAL 1e-1 /* the largest real part's (bound 3; opt_coalesced says why) */
#define OPT_PROBE_STEP 1e-5
#define OPT_PROBE_GAIN 1e-8
int opt_coalesced(const opt_ctx *c, int *i, int *j);
/* the same with the window widened by the factor widen (a valley step's pair, put back by opt_polish) */
int opt_coalesced_within(const opt_ctx *c, double widen, int *i, int *j);
int opt_probe(opt_ctx *c, const double *x, int *better, mbl_status *st);
/* opt_kkt.c: the largest real part's optimum at a double eigenvalue approached by Newton steps on
 * the pair's discriminant (documented there): at most OPT_POLISH_STEPS steps, none longer than
 * OPT_POLISH_MAX (scaled), to the pair apart by OPT_POLISH_SEP of its |lambda|; the pair found within
 * widen times the coalescence window */
#define OPT_POLISH_STEPS 8
#define OPT_POLISH_MAX 1e-2
#define OPT_POLISH_SEP 1e-4
int opt_polish(opt_ctx *c, double *x, double widen, int *steps, mbl_status *st);
/* opt_valley.c: the largest real part's optimum at a double eigenvalue checked, and approached, on
 * the valley where the coalescing eigenvalues' real parts are equal (documented there): at most
 * OPT_VALLEY_STEPS descent steps, none longer than OPT_VALLEY_MAX (scaled) */
#define OPT_VALLEY_STEPS 60
#define OPT_VALLEY_MAX 5e-2
#define OPT_VALLEY_WIDEN 5
int opt_valley_kkt(const opt_ctx *c, int ia, int ib, int on_valley, double *res, double *dir, mbl_status *st);
int opt_valley_descend(opt_ctx *c, double *x, int *ia, int *ib, int *steps, double *res, mbl_status *st);
/* opt_frf.c: the local peaks of a frequency response over a band and their gradients in p
 * (documented there): the band's grid points, the peaks' refinement to OPT_FRF_WTOL of their
 * frequency, the OPT_FRF_PEAKS largest kept (val, wpk: OPT_FRF_PEAKS; grad: OPT_FRF_PEAKS x np) */
#define OPT_FRF_GRID 400
#define OPT_FRF_WTOL 1e-12
#define OPT_FRF_PEAKS 8
/* the PEAK objective's t (the peak over its start value) lies in 0..OPT_PEAK_TMAX */
#define OPT_PEAK_TMAX 1e6
/* opt_frf.c: the output of the file's outputs a peak goal names (its index), or -1 (a coordinate of
 * that name, or none) */
int opt_frf_output(const mbl_model *md, const mbl_opt_goal *g);
int opt_frf_peaks(const opt_ctx *c, const mbl_model *md, const mbl_dae_deriv *dd, const mbl_point *pt,
                 const mbl_sensitivity *S, const mbl_opt_goal *g, double *val, double *grad, double *wpk,
                 mbl_status *st);
/* opt_crit.c: a critical speed goal's value and gradient in p at the design in c->sets
 * (documented there); *near: where its search starts, then the speed found */
int opt_critical(opt_ctx *c, const mbl_opt_goal *g, double *near, double *val, double *grad, mbl_status *st);
/* opt_expr.c: an expression goal made (parsed, its derivatives formed, its parameters checked:
 * those computed from a varied one marked derived), evaluated at the design p (np) with its gradient in p, freed */
int opt_expr_new(const opt_ctx *c, const char *text, opt_expr **out, mbl_status *st);
int opt_expr_eval(const opt_ctx *c, opt_expr *x, const double *p, double *val, double *grad, mbl_status *st);
void opt_expr_free(opt_expr *x);
/* opt_expr.c: an expression's derived symbols (computed by the file from a varied parameter) at the
 * design of model md: their values and derivatives through the chain of parameters, staged until
 * opt_expr_commit (the design's evaluation succeeded); nothing without derived symbols */
int opt_expr_point(const opt_ctx *c, opt_expr *x, const mbl_model *md, const mbl_dae_deriv *dd, const mbl_point *pt,
                   mbl_status *st);
void opt_expr_commit(opt_expr *x);
/* opt_eval.c: the validity of one goal (kind, sense, values; its mode against nmode) */
int opt_goal_check(const mbl_opt_goal *g, int objective, int nmode, mbl_status *st);

#endif
