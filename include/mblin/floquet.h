/* mblin: Floquet analysis of time-periodic linear models (src/study/floquet.c, docs/floquet.md).
 *
 *   mbl_floquet()        the monodromy matrix of the variational equations x' = A(t) x along a
 *                        periodic orbit of period T, its eigenvalues (the Floquet multipliers),
 *                        the exponents and the periodic mode shapes
 *
 * A(t) is the exact linear model of the augmented method at the orbit's point at time t
 * (mbl_relinearize: the expression engine's Jacobians, as `mblin linearize` uses them), with the
 * point's accelerations and multipliers solved at that time (at: given). The variational equations
 * are integrated over one period by SUNDIALS CVODE (Adams-Moulton, fixed-point iteration). The
 * orbit is either
 *   - given: the operating point itself, q(t) = q0 + v0 (t - t0), v(t) = v0 (an equilibrium of a
 *     time-periodic model, v0 = 0, e.g. Mathieu's equation or a pendulum on an oscillating pivot;
 *     or a steady motion whose cyclic coordinates turn at constant speed); at every evaluation the
 *     point must balance the equations of motion (the note of at: given,
 *     docs/linearization.md "A given point that moves"), else the call fails naming the time; or
 *   - shot: found by Newton's method on x(t0 + T) - x(t0) = 0, x = [q; v], from the operating
 *     point, with the monodromy matrix as its exact Jacobian in the states (models with holonomic
 *     constraints at most, no ODE states or implicit variables, whose states are selected
 *     coordinates and their rates; the point projected onto the constraints after each step).
 *
 * The multipliers mu_k are the eigenvalues of the monodromy matrix Phi(t0 + T) (Phi(t0) = I);
 * the exponents s_k = log(mu_k) / T, whose imaginary part is defined only modulo 2 pi / T: the
 * principal value in (-pi/T, pi/T] is reported. A periodic mode shape is
 * p_k(t) = exp(-s_k (t - t0)) Phi(t) v_k (v_k the eigenvector of mu_k), periodic with period T. */
#ifndef MBLIN_FLOQUET_H
#define MBLIN_FLOQUET_H

#include "mblin/export.h"

#include "mblin/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The multi-blade coordinate transform (MBC3; Bir, NREL/TP-500-42553, 2008) of an N-bladed rotor's
 * blade coordinates: blade b (0-based) at azimuth psi_b = psi0 + omega (t - t0) + 2 pi b / N, its
 * degree of freedom j the coordinate coord[j * nblades + b]. They are replaced by the collective
 * q_0 = (1/N) sum_b q_b, the cyclic q_ck = (2/N) sum_b q_b cos(k psi_b), q_sk = (2/N) sum_b q_b sin(k psi_b)
 * (k = 1 .. (N - 1)/2) and, N even, the differential q_d = (1/N) sum_b (-1)^b q_b: q_b = q_0 +
 * sum_k (q_ck cos k psi_b + q_sk sin k psi_b) + q_d (-1)^b, the states x = T(t) z and
 * z' = T^-1 (A T - T') z. */
typedef struct mbl_mbc_spec {
    int nblades;           /* N >= 3 */
    int ndof;              /* degrees of freedom per blade (>= 1) */
    const int *coord;      /* ndof * nblades coordinate indices (each a state of the linear model, with
                              its velocity) */
    double omega;          /* the rotor speed (rad/s; 0: 2 pi / period) */
    double psi0;           /* blade 0's azimuth at t0 (rad) */
    int samples;           /* azimuths over the period at which A_NR is formed and averaged (default
                              36 when 0; at most 10000) */
} mbl_mbc_spec;

typedef struct mbl_mbc {
    int nx, samples;
    char **state_names;    /* nx: the blade states renamed (NAME_0, NAME_c1, NAME_s1, NAME_d, der(...))
                              with NAME the coordinate of blade 0 */
    double *A;             /* nx * nx: A_NR averaged over the azimuths (column-major) */
    double *re, *im;       /* nx eigenvalues of A, by decreasing real part (a pair: positive imaginary
                              part first) */
    double variation;      /* max over the azimuths of ||A_NR(t) - A||_F / ||A||_F: rounding for an
                              isotropic rotor (time-invariant in multi-blade coordinates) */
} mbl_mbc;

typedef struct mbl_floquet_options {
    double period;         /* T > 0 (required) */
    int shoot;             /* 0 (default): the operating point is the orbit; 1: shoot for it */
    double rtol, atol;     /* CVODE's tolerances on the fundamental matrix (default 1e-10, 1e-12) */
    long max_steps;        /* CVODE steps allowed over one period (default 100000); a lower estimate
                              of them from A(t)'s eigenvalues above it is refused before integrating */
    int samples;           /* the periodic mode shapes at this many times t0 + j T / samples,
                              j = 0 .. samples - 1 (default 1: at t0 only; at most 10000) */
    int settle;            /* shooting: first follow the motion over this many periods from the
                              operating point (towards a stable orbit; default 0, at most 100000) */
    int shoot_max_iter;    /* shooting: Newton iterations (default 30) */
    double shoot_tol;      /* shooting: converged when max |x(t0 + T) - x(t0)| <= shoot_tol *
                              max(1, max |x(t0)|) (default 1e-9) */
    double shoot_rcond;    /* shooting: the Newton step is the least-squares one of (Phi - I) dx = -r,
                              singular values below shoot_rcond times the largest dropped (an
                              autonomous orbit's phase; default 1e-9) */
    double stab_tol;       /* the spectral radius counts as 1 (marginal) within stab_tol (default 1e-6) */
    const mbl_lin_options *lopt;    /* NULL: defaults; the method is augmented (the workspace path) */
    const mbl_opoint_options *popt; /* the at: given solves' tolerances (NULL: defaults) */
    const mbl_mbc_spec *mbc;        /* NULL: none; else the multi-blade coordinate transform too
                                       (along a given orbit, not with shoot) */
    double period_tol;     /* the period check: A(t + T) against A(t) at a few times t (and, shooting,
                              the accelerations at the starting state), refused when an entry differs
                              by more than period_tol times the largest entry (default 1e-6) */
} mbl_floquet_options;

MBL_API void mbl_floquet_options_default(mbl_floquet_options *opt);

enum { MBL_FLOQUET_STABLE = 0, MBL_FLOQUET_MARGINAL = 1, MBL_FLOQUET_UNSTABLE = 2 };

typedef struct mbl_floquet {
    int nx;                /* states of the linear model (its order) */
    char **state_names;    /* nx names (as mbl_linear's) */
    double t0, period;
    double *monodromy;     /* nx * nx, column-major: Phi(t0 + T) */
    /* nx multipliers, by decreasing modulus (a complex pair: positive imaginary part first) */
    double *mult_re, *mult_im, *mult_abs;
    double *exp_re, *exp_im; /* exponents log(mu) / T, exp_im in (-pi/T, pi/T] */
    int samples;           /* times of the shapes: t0 + j T / samples */
    double *shape_re, *shape_im; /* nx * nx * samples: shape k at sample j, state i at
                              [(j * nx + k) * nx + i]: p_k(t_j), p_k(t0) of unit 2-norm */
    double *shape_q_re, *shape_q_im; /* n * nx: the coordinate part q_S S of each shape at t0 (q_S of
                              the linear model at t0), shape k at [k * n] */
    double spectral_radius;
    int stability;         /* MBL_FLOQUET_STABLE, _MARGINAL or _UNSTABLE (stab_tol) */
    int shot;              /* 1 when the orbit was found by shooting */
    int n;                 /* coordinates */
    double *q0, *v0;       /* n each: the orbit's point at t0 */
    int shoot_iterations;
    double shoot_residual; /* max |x(t0 + T) - x(t0)| of the orbit (0 when given) */
    long steps, rhs_evals; /* CVODE's, over the last period integrated */
    char notes[512];
    mbl_mbc *mbc;          /* the multi-blade coordinate model when asked for (opt->mbc), else NULL */
    double *mult_berr;     /* nx, as the multipliers: the normwise backward error ||Phi v - mu v||_2 /
                              (||Phi||_F ||v||_2) of each multiplier with its eigenvector v (p_k(t0)) */
} mbl_floquet;

/* Floquet analysis of `model` about `point` (its operating point at t0 = point->t). 0, or a
 * negative MBL_E* code with a one-line message: a period that is not positive and finite, below
 * 1e-100 or 1e-9 |t0|, or not a period of the model's time dependence (MBL_EARG, naming the entry
 * of A that differs), an estimate of the integrator's steps above max_steps (MBL_ENOCONV), a given orbit that is not one (MBL_EMODEL, naming the time and the residual
 * acceleration), shooting on a model it does not cover (MBL_EARG), shooting that does not
 * converge (MBL_ENOCONV), the integrator's failure (MBL_ENOCONV with its message). */
MBL_API int mbl_floquet_run(const mbl_model *model, const mbl_point *point, const mbl_floquet_options *opt,
                            mbl_floquet **out, mbl_status *st);
MBL_API void mbl_floquet_free(mbl_floquet *f);

#ifdef __cplusplus
}
#endif
#endif
