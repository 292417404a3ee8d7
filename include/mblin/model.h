/* mblin: models, operating points, linear models and modes: the public pipeline.
 *
 *   mbl_model_load_file()    model file (YAML) -> parsed, formulated and compiled model
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

#include <stdio.h>

#include "mblin/status.h"

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
int mbl_model_load_file(const char *path, const mbl_setting *sets, int nsets, mbl_model **out, mbl_status *st);
/* The same from text in memory; `name` is used for file positions in messages. */
int mbl_model_load_string(const char *text, size_t len, const char *name, const mbl_setting *sets, int nsets,
                          mbl_model **out, mbl_status *st);
void mbl_model_free(mbl_model *model);

typedef enum mbl_at { MBL_AT_EQUILIBRIUM = 0, MBL_AT_GIVEN = 1, MBL_AT_STEADY = 2 } mbl_at;

typedef struct mbl_model_info {
    const char *name;       /* the model's name ("" if none) */
    const char *file;       /* the file it came from */
    int ncoord;             /* n: coordinates q */
    int nhol;               /* m: holonomic constraints */
    int nnh;                /* k: non-holonomic constraints */
    int ninput, noutput, nparam;
    int nuser_states, nuser_velocity_states;
    mbl_at at;              /* linearize.at of the file */
    double time;            /* linearize.time of the file (0 if absent) */
} mbl_model_info;

void mbl_model_get_info(const mbl_model *model, mbl_model_info *info);
const char *mbl_model_coord_name(const mbl_model *model, int i);
const char *mbl_model_input_name(const mbl_model *model, int i);
const char *mbl_model_output_name(const mbl_model *model, int i);
const char *mbl_model_param_name(const mbl_model *model, int i);
double mbl_model_param_value(const mbl_model *model, int i);

/* ---- operating points ------------------------------------------------------------------ */

typedef struct mbl_opoint_options {
    int at;              /* -1: the model file's choice; else an mbl_at */
    int max_iter;        /* Newton iterations (default 100) */
    double tol;          /* residual tolerance, scaled by the residual at the start (default 1e-12) */
    double abs_tol;      /* absolute residual tolerance (default 1e-12) */
    double rank_tol;     /* relative singular-value threshold for ranks (default 1e-9) */
} mbl_opoint_options;

void mbl_opoint_options_default(mbl_opoint_options *opt);

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
    int rank_phi_q;           /* numerical rank of [Phi_q; A_nh] at the point */
    int min_norm_multipliers; /* 1 when the multipliers are the minimum-norm ones (rank loss) */
    char notes[1024];         /* what happened, for the report (moved coordinates, rank loss) */
} mbl_point;

int mbl_operating_point(const mbl_model *model, const mbl_opoint_options *opt, mbl_point **out, mbl_status *st);
void mbl_point_free(mbl_point *p);

/* ---- linear models ---------------------------------------------------------------------- */

typedef struct mbl_lin_options {
    const char *method;    /* "augmented" (default; NULL means default) */
    double state_weight;   /* weight of the identity block of source 000 Eq. 22 (default 1e-3):
                              smaller prefers user states more strongly */
    double pivot_tol;      /* relative pivot threshold of the state selection (default 1e-9) */
    double rcond_min;      /* below this reciprocal condition the augmented matrix counts as
                              singular (default 1e-13) */
} mbl_lin_options;

void mbl_lin_options_default(mbl_lin_options *opt);

typedef struct mbl_linear {
    char method[32];
    int n;                 /* coordinates */
    int nx, nu, ny;        /* states x = [S; W], inputs, outputs */
    int z0, z1;            /* position-level and velocity-level state counts */
    char **state_names;    /* nx names: S names then W names ("der(theta)") */
    char **input_names, **output_names;
    double *A, *B, *C, *D; /* nx*nx, nx*nu, ny*nx, ny*nu */
    double *M, *Cd, *K;    /* z1*z1, z1*z1, z1*z0: M-hat S'' + C-hat S' + K-hat S = F r */
    double *F;             /* z1*nu: input matrix of the MCK form */
    double *q_S;           /* n*z0: dq/dS-bar (mode shapes at position level) */
    double *v_W;           /* n*z1: dv/dW-bar */
    double cond;           /* 1-norm condition estimate of the solve */
    int nsel_added;        /* internal coordinates added to complete the user states */
    int nsel_dropped;      /* user states dropped (too many or dependent) */
    char selection[1024];  /* what the state selection did, for the report */
} mbl_linear;

int mbl_linearize(const mbl_model *model, const mbl_point *point, const mbl_lin_options *opt,
                  mbl_linear **out, mbl_status *st);
void mbl_linear_free(mbl_linear *lin);

/* ---- modes ------------------------------------------------------------------------------ */

typedef struct mbl_mode {
    double re, im;         /* eigenvalue */
    double freq_hz;        /* undamped natural frequency |lambda| / 2 pi */
    double damping_ratio;  /* -re / |lambda| (1 for real negative, -1 for real positive, 0 if |lambda| = 0) */
    int spurious;          /* 1 when the method flags the eigenvalue as spurious */
    int kind;              /* MBL_MODE_* */
} mbl_mode;

enum { MBL_MODE_OSCILLATORY = 0, MBL_MODE_REAL = 1, MBL_MODE_ZERO = 2 };

typedef struct mbl_modes {
    int nx;                /* number of eigenvalues */
    int n;                 /* coordinates (mode shape length) */
    mbl_mode *modes;       /* sorted by frequency, then real part */
    double *shape_re, *shape_im; /* n*nx: mode shapes mapped back to all coordinates */
    double zero_tol;       /* |lambda| below this counted as zero */
} mbl_modes;

typedef struct mbl_modal_options {
    double zero_tol;       /* |lambda| <= zero_tol * max |lambda| counts as zero (default 1e-9); the
                              threshold is never below 10 sqrt(eps ||A||_1) (a rigid-body mode is a
                              defective double zero that rounding splits by about that much) nor
                              below 1e-12 */
} mbl_modal_options;

void mbl_modal_options_default(mbl_modal_options *opt);
int mbl_modal(const mbl_linear *lin, const mbl_modal_options *opt, mbl_modes **out, mbl_status *st);
void mbl_modes_free(mbl_modes *m);

#ifdef __cplusplus
}
#endif
#endif
