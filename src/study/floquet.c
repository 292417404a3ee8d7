/* Floquet analysis of a time-periodic linear model (include/mblin/floquet.h, docs/floquet.md).
 *
 * Along a periodic orbit (q(t), v(t)) of period T the linear model x' = A(t) x has T-periodic
 * coefficients. Its fundamental matrix Phi(t) (Phi' = A(t) Phi, Phi(t0) = I) over one period is
 * the monodromy matrix; its eigenvalues are the Floquet multipliers. A(t) is the augmented
 * method's exact linear model (mbl_relinearize, the states chosen once at t0) at the orbit's point
 * at time t, whose accelerations and multipliers are solved there (at: given). SUNDIALS CVODE
 * integrates the nx^2 entries of Phi (with the orbit's [q; v] ahead of them when shooting) by
 * Adams-Moulton with fixed-point iteration: the equations are linear in Phi, and no Newton matrix
 * of order nx^2 is formed.
 *
 * Shooting (models with holonomic constraints at most, no ODE states or implicit variables, the
 * states selected coordinates and their rates) solves x(t0 + T; x0) - x0 = 0, x = [q; v], by
 * Newton's method in the states, whose Jacobian Phi(t0 + T) - I is the monodromy matrix itself
 * (exact: the variational equations of the orbit integrated beside it). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cvode/cvode.h>
#include <nvector/nvector_serial.h>
#include <sundials/sundials_context.h>
#include <sunnonlinsol/sunnonlinsol_fixedpoint.h>

#include "mblin/floquet.h"
#include "eig/eig.h"
#include "mblin/la.h"
#include "study/floquet_internal.h"

#define FLOQUET_TWO_PI 6.283185307179586476925286766559
#define FLOQUET_MAX_SAMPLES 10000
#define FLOQUET_MAX_SETTLE 100000
/* a given orbit whose point at t0 already draws at: given's note (a coordinate whose equation has
 * no force at all there, so the note's ratio is rounding over rounding) is refused at time t only
 * when its accelerations exceed this many times those at t0 */
#define FLOQUET_ACCEL_GROWTH 1e6
#define FLOQUET_SHOOT_HALVINGS 20 /* the damped Newton step of shooting: at most 20 halvings */
#define FLOQUET_NPHASE 3          /* the period check's phases (period_phase) */
#define FLOQUET_PERIOD_KMAX 1e6   /* and its k T for a short period: k at most this */
#define FLOQUET_STEPS_STAB 0.5    /* the steps' lower estimate (steps_lower): per unit of |lambda| T */
#define FLOQUET_STEPS_OSC 0.7     /* and per radian of an oscillation, times rtol^(-1/10) */
#define FLOQUET_MIN_PERIOD 1e-100 /* the shortest period (CVODE's step arithmetic underflows near 1e-160) */
#define FLOQUET_TIME_RES 1e-9     /* and at least this times |t0| (t0 + t resolved within it) */

void mbl_floquet_options_default(mbl_floquet_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->rtol = 1e-10;
    opt->atol = 1e-12;
    opt->max_steps = 100000L;
    opt->period_tol = 1e-6;
    opt->samples = 1;
    opt->shoot_max_iter = 30;
    opt->shoot_tol = 1e-9;
    opt->shoot_rcond = 1e-9;
    opt->stab_tol = 1e-6;
}

static void mbc_free(mbl_mbc *m);

void mbl_floquet_free(mbl_floquet *f)
{
    if (!f) return;
    if (f->state_names)
        for (int i = 0; i < f->nx; i++) mbl_free(f->state_names[i]);
    mbl_free(f->state_names);
    mbl_free(f->monodromy), mbl_free(f->mult_re), mbl_free(f->mult_im), mbl_free(f->mult_abs), mbl_free(f->mult_berr);
    mbl_free(f->exp_re), mbl_free(f->exp_im), mbl_free(f->shape_re), mbl_free(f->shape_im);
    mbl_free(f->shape_q_re), mbl_free(f->shape_q_im);
    mbl_free(f->q0), mbl_free(f->v0);
    mbc_free(f->mbc);
    mbl_free(f);
}

/* ---- the integrator's view: the orbit's point and A(t) at any time ---------------------------- */

typedef struct fq {
    const mbl_model *md;
    mbl_opoint_options po;
    mbl_lin_work *work;
    mbl_linear *lin;
    int n, nx, shoot, ny; /* ny: orbit entries ahead of Phi (2n when shooting, else 0) */
    double t0;
    const double *q0, *v0; /* the given orbit's point at t0 */
    double *q;             /* n: the given orbit's coordinates at t */
    mbl_status err;        /* the first failure inside the right-hand side */
    long nrhs;
    int *sel;              /* shooting: nx indices in [q; v] of the states (check_shoot) */
    double acc0;           /* given orbit: max |vdot| at t0 when at: given's note fires there already
                              (its test at rounding level at the solved point), else 0 */
} fq;

/* The orbit's point at time t (at: given with q, v): 0 or an MBL_E* code in st. */
static int point_at(fq *F, double t, const double *q, const double *v, mbl_point **pt, mbl_status *st)
{
    mbl_opoint_options po = F->po;
    po.at = MBL_AT_GIVEN, po.q = q, po.v = v, po.t = t, po.has_t = 1, po.guess = NULL, po.nguess = 0;
    int rc = mbl_operating_point(F->md, &po, pt, st);
    if (rc) return mbl_error_prefix(st, "the orbit's point at t = %.10g", t);
    double amax = 0;
    for (int i = 0; i < (*pt)->n; i++) amax = fmax(amax, fabs((*pt)->vdot[i]));
    if (!F->shoot && (*pt)->accel_note[0] && !(F->acc0 > 0 && amax <= FLOQUET_ACCEL_GROWTH * F->acc0)) {
        rc = mbl_error(st, MBL_EMODEL,
                       "the operating point is no periodic orbit of the model: at t = %.10g, %s (use --shoot to find the "
                       "orbit, docs/floquet.md)", t, (*pt)->accel_note);
        mbl_point_free(*pt), *pt = NULL;
    }
    return rc;
}

/* The orbit's point at time t and A(t) there (F->lin): 0 or an MBL_E* code in st. */
static int model_at(fq *F, double t, const double *q, const double *v, mbl_point **pt, mbl_status *st)
{
    int rc = point_at(F, t, q, v, pt, st);
    if (!rc && (rc = mbl_relinearize(F->work, *pt, F->lin, st)))
        mbl_error_prefix(st, "the linear model at t = %.10g (its states chosen at t0)", t);
    return rc;
}

/* the given orbit's coordinates at time t: q0 + v0 (t - t0) in F->q */
static const double *given_q(fq *F, double t)
{
    for (int i = 0; i < F->n; i++) F->q[i] = F->q0[i] + F->v0[i] * (t - F->t0);
    return F->q;
}

static int rhs(realtype t, N_Vector yv, N_Vector ydv, void *ud)
{
    fq *F = ud;
    const double *y = N_VGetArrayPointer(yv);
    double *yd = N_VGetArrayPointer(ydv);
    int n = F->n, nx = F->nx;
    const double *q = F->q, *v = F->v0;
    F->nrhs++;
    if (F->err.code) { /* an earlier failure (below) */
        memset(yd, 0, ((size_t)F->ny + (size_t)nx * nx) * sizeof *yd);
        return 0;
    }
    if (F->shoot) q = y, v = y + n;
    else q = given_q(F, t);
    mbl_point *pt = NULL;
    mbl_status st = {0};
    int rc = model_at(F, t, q, v, &pt, &st);
    if (!rc && F->shoot) {
        memcpy(yd, v, (size_t)n * sizeof *yd);
        memcpy(yd + n, pt->vdot, (size_t)n * sizeof *yd);
    }
    if (!rc) rc = mbla_gemm('N', 'N', nx, nx, nx, 1.0, F->lin->A, nx, y + F->ny, nx, 0.0, yd + F->ny, nx, &st);
    mbl_point_free(pt);
    if (rc) {
        /* the first failure ends the period: CVODE takes a failed right-hand side of the fixed-point
         * iteration for a convergence failure and retries with ever smaller steps, so the rest of
         * the period is integrated as x' = 0 and period() reports this failure */
        if (!F->err.code) F->err = st;
        memset(yd, 0, ((size_t)F->ny + (size_t)nx * nx) * sizeof *yd);
    }
    return 0;
}

/* CVODE reports its errors to this handler (else it prints them); the tool's messages are its own
 * (cv_why) */
static void cv_err(int code, const char *module, const char *function, char *msg, void *ud)
{
    (void)code, (void)module, (void)function, (void)msg, (void)ud;
}

/* what a failure of CVode() (flag < 0, other than too much work) means here */
static const char *cv_why(int flag)
{
    switch (flag) {
    case CV_TOO_MUCH_ACC:
        return "the tolerances ask for more accuracy than double precision gives there (raise --rtol or --atol)";
    case CV_ERR_FAILURE:
        return "the error test failed repeatedly at the smallest step (A(t) jumps there, or the model is stiff; "
               "docs/floquet.md, \"Limits\")";
    case CV_CONV_FAILURE:
    case CV_NLS_FAIL:
        return "the fixed-point iteration of the Adams step did not converge at the smallest step (a stiff model; "
               "docs/floquet.md, \"Limits\")";
    case CV_TOO_CLOSE:
        return "the period is too short for the integrator to take a step";
    default:
        return "the integrator (SUNDIALS CVODE) failed";
    }
}

/* One period from t0: y0 = the orbit's [q; v] at t0 when shooting (ny entries), Phi(t0) = I.
 * Out: yT (ny), Phi at the samples' times t0 + j T / ns (Phis: nx * nx * ns; j = 0 is I) and
 * Phi(t0 + T) (mono). */
static int period(fq *F, const mbl_floquet_options *o, const double *y0, double *yT, double *Phis, double *mono,
                  long *steps, mbl_status *st)
{
    int nx = F->nx, ny = F->ny, ns = o->samples;
    size_t N = (size_t)ny + (size_t)nx * nx;
    SUNContext ctx = NULL;
    N_Vector y = NULL;
    SUNNonlinearSolver NLS = NULL;
    void *mem = NULL;
    int rc = 0;
    F->err.code = 0, F->err.msg[0] = 0, F->nrhs = 0;
    if (SUNContext_Create(NULL, &ctx)) return mbl_error(st, MBL_ENOMEM, "SUNDIALS: no context");
    y = N_VNew_Serial((sunindextype)N, ctx);
    mem = y ? CVodeCreate(CV_ADAMS, ctx) : NULL;
    if (!mem) {
        rc = mbl_error(st, MBL_ENOMEM, "SUNDIALS: setting up CVODE failed");
        goto done;
    }
    double *yy = N_VGetArrayPointer(y);
    memset(yy, 0, N * sizeof *yy);
    if (ny) memcpy(yy, y0, (size_t)ny * sizeof *yy);
    for (int i = 0; i < nx; i++) yy[ny + (size_t)i * nx + i] = 1.0;
    memcpy(Phis, yy + ny, (size_t)nx * nx * sizeof *Phis);
    CVodeSetErrHandlerFn(mem, cv_err, NULL);
    NLS = SUNNonlinSol_FixedPoint(y, 0, ctx);
    double tend = F->t0 + o->period;
    if (!NLS || CVodeInit(mem, rhs, F->t0, y) || CVodeSStolerances(mem, o->rtol, o->atol) ||
        CVodeSetUserData(mem, F) || CVodeSetNonlinearSolver(mem, NLS) || CVodeSetMaxNumSteps(mem, o->max_steps) ||
        CVodeSetStopTime(mem, tend)) {
        rc = mbl_error(st, MBL_ENOMEM, "setting up the integrator (SUNDIALS CVODE) failed");
        goto done;
    }
    for (int j = 1; j <= ns; j++) {
        double tout = j == ns ? tend : F->t0 + o->period * j / ns, tret = 0;
        long done = 0; /* max_steps bounds the whole period, whatever the samples */
        CVodeGetNumSteps(mem, &done);
        CVodeSetMaxNumSteps(mem, o->max_steps - done > 0 ? o->max_steps - done : 1);
        int flag = CVode(mem, tout, y, &tret, CV_NORMAL);
        if (flag < 0 || F->err.code) {
            if (F->err.code) {
                *st = F->err, rc = F->err.code;
            } else if (flag == CV_TOO_MUCH_WORK) {
                rc = mbl_error(st, MBL_ENOCONV, "CVODE needed more than %ld steps over the period (max_steps, --max-steps): "
                                                "stopped at t = %.10g; a stiff model? (docs/floquet.md, \"Limits\")",
                               o->max_steps, tret);
            } else {
                double h = 0;
                CVodeGetCurrentStep(mem, &h);
                rc = mbl_error(st, MBL_ENOCONV, "the integration over the period stopped at t = %.10g (step %.3g): %s",
                               tret, h, cv_why(flag));
            }
            goto done;
        }
        yy = N_VGetArrayPointer(y);
        memcpy(j == ns ? mono : Phis + (size_t)j * nx * nx, yy + ny, (size_t)nx * nx * sizeof *Phis);
    }
    if (ny) memcpy(yT, yy, (size_t)ny * sizeof *yT);
    CVodeGetNumSteps(mem, steps);
done:
    if (mem) CVodeFree(&mem);
    if (NLS) SUNNonlinSolFree(NLS);
    if (y) N_VDestroy(y);
    if (ctx) SUNContext_Free(&ctx);
    return rc;
}

/* ---- the multipliers, exponents and periodic shapes ------------------------------------------- */

typedef struct mult {
    double re, im, mag;
    int idx;
} mult;

/* by decreasing modulus; equal moduli (a pair): positive imaginary part first, then the index */
static int mult_cmp(const void *a, const void *b)
{
    const mult *x = a, *y = b;
    if (x->mag != y->mag) return x->mag > y->mag ? -1 : 1;
    if (x->im != y->im) return x->im > y->im ? -1 : 1;
    return x->idx - y->idx;
}

/* eigenvector j of dgeev's packed VR as (re, im) columns */
static void eigvec(int nx, const double *wi, const double *VR, int j, double *vr, double *vi)
{
    for (int i = 0; i < nx; i++) {
        if (wi[j] > 0) vr[i] = VR[(size_t)j * nx + i], vi[i] = VR[(size_t)(j + 1) * nx + i];
        else if (wi[j] < 0) vr[i] = VR[(size_t)(j - 1) * nx + i], vi[i] = -VR[(size_t)j * nx + i];
        else vr[i] = VR[(size_t)j * nx + i], vi[i] = 0;
    }
}

/* the coordinate part of the shapes at t0: dq = q_S S (q_S: n x z0 at t0) */
static void coord_shapes(mbl_floquet *f, const double *qS, int z0)
{
    int n = f->n, nx = f->nx;
    for (int k = 0; k < nx; k++) {
        const double *sr = f->shape_re + (size_t)k * nx, *si = f->shape_im + (size_t)k * nx;
        for (int i = 0; i < n; i++) {
            double a = 0, b = 0;
            for (int j = 0; j < z0; j++) a += qS[(size_t)j * n + i] * sr[j], b += qS[(size_t)j * n + i] * si[j];
            f->shape_q_re[(size_t)k * n + i] = a, f->shape_q_im[(size_t)k * n + i] = b;
        }
    }
}

static int analyse(mbl_floquet *f, const mbl_floquet_options *o, const double *Phis, mbl_status *st)
{
    int nx = f->nx, ns = f->samples;
    double T = f->period;
    size_t nn = (size_t)nx * nx;
    double *wr = mbl_alloc_array((size_t)nx, sizeof *wr), *wi = mbl_alloc_array((size_t)nx, sizeof *wi);
    double *VR = mbl_alloc_array(nn, sizeof *VR), *vr = mbl_alloc_array((size_t)nx * 5, sizeof *vr);
    mult *ml = mbl_alloc_array((size_t)nx, sizeof *ml);
    int rc = wr && wi && VR && vr && ml ? 0 : mbl_error(st, MBL_ENOMEM, "out of memory (Floquet multipliers)");
    /* dgeev, with src/eig's retry of the vectors its scaling balancer spoils (a cyclic coordinate's
     * column of Phi is e_j plus rounding-level entries, as in the car's A) */
    double *berr = vr + 4 * (size_t)nx;
    if (!rc) rc = eig_dgeev(nx, f->monodromy, 1, wr, wi, VR, berr, NULL, st);
    if (rc) goto done;
    for (int j = 0; j < nx; j++) ml[j] = (mult){wr[j], wi[j], hypot(wr[j], wi[j]), j};
    qsort(ml, (size_t)nx, sizeof *ml, mult_cmp);
    f->spectral_radius = nx ? ml[0].mag : 0;
    f->stability = f->spectral_radius > 1 + o->stab_tol   ? MBL_FLOQUET_UNSTABLE
                   : f->spectral_radius < 1 - o->stab_tol ? MBL_FLOQUET_STABLE
                                                          : MBL_FLOQUET_MARGINAL;
    double *vi = vr + nx, *wre = vr + 2 * nx, *wim = vr + 3 * nx;
    for (int k = 0; k < nx; k++) {
        f->mult_re[k] = ml[k].re, f->mult_im[k] = ml[k].im, f->mult_abs[k] = ml[k].mag, f->mult_berr[k] = berr[ml[k].idx];
        f->exp_re[k] = log(ml[k].mag) / T;
        f->exp_im[k] = atan2(ml[k].im, ml[k].re) / T; /* (-pi/T, pi/T] */
        eigvec(nx, wi, VR, ml[k].idx, vr, vi);
        for (int j = 0; j < ns; j++) {
            const double *P = Phis + (size_t)j * nn;
            double tau = T * j / ns, g = exp(-f->exp_re[k] * tau), ph = -f->exp_im[k] * tau;
            double cr = g * cos(ph), ci = g * sin(ph);
            mbla_gemv('N', nx, nx, 1.0, P, nx, vr, 0.0, wre, NULL);
            mbla_gemv('N', nx, nx, 1.0, P, nx, vi, 0.0, wim, NULL);
            double *sr = f->shape_re + ((size_t)j * nx + k) * nx, *si = f->shape_im + ((size_t)j * nx + k) * nx;
            for (int i = 0; i < nx; i++) sr[i] = cr * wre[i] - ci * wim[i], si[i] = cr * wim[i] + ci * wre[i];
        }
    }
done:
    mbl_free(wr), mbl_free(wi), mbl_free(VR), mbl_free(vr), mbl_free(ml);
    return rc;
}

/* ---- the multi-blade coordinate transform (MBC3) ------------------------------------------------ */

static void mbc_free(mbl_mbc *m)
{
    if (!m) return;
    if (m->state_names)
        for (int i = 0; i < m->nx; i++) mbl_free(m->state_names[i]);
    mbl_free(m->state_names), mbl_free(m->A), mbl_free(m->re), mbl_free(m->im);
    mbl_free(m);
}

/* basis function m of N blades at azimuth psi (blade b): f, df/dt, d2f/dt2 at speed w */
static void mbc_basis(int N, int m, int b, double psi, double w, double *f, double *f1, double *f2)
{
    if (m == 0) {
        *f = 1, *f1 = *f2 = 0;
    } else if (N % 2 == 0 && m == N - 1) {
        *f = b % 2 ? -1 : 1, *f1 = *f2 = 0;
    } else {
        int k = (m + 1) / 2;
        double c = cos(k * psi), s = sin(k * psi), kw = k * w;
        if (m % 2) *f = c, *f1 = -kw * s, *f2 = -kw * kw * c;
        else *f = s, *f1 = kw * c, *f2 = -kw * kw * s;
    }
}

static const char *mbc_suffix(int N, int m, char *buf, size_t len)
{
    if (m == 0) snprintf(buf, len, "_0");
    else if (N % 2 == 0 && m == N - 1) snprintf(buf, len, "_d");
    else snprintf(buf, len, "_%c%d", m % 2 ? 'c' : 's', (m + 1) / 2);
    return buf;
}

/* the states of the blade coordinates: position state P[j * N + b], velocity state V[j * N + b] */
static int mbc_states(const mbl_linear *lin, const mbl_model *md, const mbl_mbc_spec *sp, int *P, int *V, mbl_status *st)
{
    int n = lin->n, z0 = lin->z0, z1 = lin->z1, nb = sp->nblades * sp->ndof;
    for (int i = 0; i < nb; i++) {
        int c = sp->coord[i];
        if (c < 0 || c >= n) return mbl_error(st, MBL_EARG, "MBC: blade coordinate index %d out of range", c);
        for (int k = 0; k < i; k++)
            if (sp->coord[k] == c) return mbl_error(st, MBL_EARG, "MBC: coordinate '%s' is named twice", mbl_model_coord_name(md, c));
        P[i] = V[i] = -1;
        for (int s = 0; s < z0 && P[i] < 0; s++) {
            int unit = 1;
            for (int r = 0; r < n && unit; r++) unit = lin->q_S[(size_t)s * n + r] == (r == c);
            if (unit) P[i] = s;
        }
        for (int s = 0; s < z1 && V[i] < 0; s++) {
            int unit = 1;
            for (int r = 0; r < n && unit; r++) unit = lin->v_W[(size_t)s * n + r] == (r == c);
            if (unit) V[i] = z0 + s;
        }
        if (P[i] < 0 || V[i] < 0)
            return mbl_error(st, MBL_EARG, "MBC: blade coordinate '%s' is not a state of the linear model with its velocity "
                                           "(name it in linearize.states)", mbl_model_coord_name(md, c));
    }
    return 0;
}

/* T(t) and T'(t) (nx x nx, column-major) at blade 0's azimuth psi */
static void mbc_T(int nx, const mbl_mbc_spec *sp, const int *P, const int *V, double psi, double w, double *T, double *Td)
{
    int N = sp->nblades;
    memset(T, 0, (size_t)nx * nx * sizeof *T), memset(Td, 0, (size_t)nx * nx * sizeof *Td);
    for (int i = 0; i < nx; i++) T[(size_t)i * nx + i] = 1;
    for (int j = 0; j < sp->ndof; j++) {
        const int *Pj = P + j * N, *Vj = V + j * N;
        for (int b = 0; b < N; b++) {
            T[(size_t)Pj[b] * nx + Pj[b]] = 0, T[(size_t)Vj[b] * nx + Vj[b]] = 0;
        }
        for (int b = 0; b < N; b++)
            for (int m = 0; m < N; m++) {
                double f, f1, f2;
                mbc_basis(N, m, b, psi + FLOQUET_TWO_PI * b / N, w, &f, &f1, &f2);
                T[(size_t)Pj[m] * nx + Pj[b]] = f, T[(size_t)Vj[m] * nx + Vj[b]] = f, T[(size_t)Pj[m] * nx + Vj[b]] = f1;
                Td[(size_t)Pj[m] * nx + Pj[b]] = f1, Td[(size_t)Vj[m] * nx + Vj[b]] = f1, Td[(size_t)Pj[m] * nx + Vj[b]] = f2;
            }
    }
}

static int mbc_names(mbl_mbc *m, const mbl_floquet *f, const mbl_model *md, const mbl_mbc_spec *sp, const int *P,
                     const int *V)
{
    int N = sp->nblades;
    for (int i = 0; i < m->nx; i++) {
        const char *s = f->state_names[i];
        char buf[512], suf[16];
        for (int k = 0; k < N * sp->ndof; k++) {
            const char *base = mbl_model_coord_name(md, sp->coord[(k / N) * N]);
            if (P[k] == i) snprintf(buf, sizeof buf, "%s%s", base, mbc_suffix(N, k % N, suf, sizeof suf)), s = buf;
            if (V[k] == i) snprintf(buf, sizeof buf, "der(%s%s)", base, mbc_suffix(N, k % N, suf, sizeof suf)), s = buf;
        }
        m->state_names[i] = mbl_malloc(strlen(s) + 1);
        if (!m->state_names[i]) return -1;
        strcpy(m->state_names[i], s);
    }
    return 0;
}

/* A_NR(t) = T^-1 (A(t) T - T') at the azimuth samples, averaged; its eigenvalues */
static int mbc_run(fq *F, mbl_floquet *f, const mbl_mbc_spec *sp, mbl_status *st)
{
    int nx = F->nx, N = sp->nblades, nb = N * sp->ndof, ns = sp->samples ? sp->samples : 36;
    size_t nn = (size_t)nx * nx;
    double w = sp->omega > 0 ? sp->omega : FLOQUET_TWO_PI / f->period;
    mbl_mbc *m = mbl_calloc(1, sizeof *m);
    int *P = mbl_alloc_array((size_t)nb * 2, sizeof *P);
    double *buf = mbl_alloc_array(nn * (4 + (size_t)ns) + 2 * (size_t)nx, sizeof *buf);
    if (m) m->nx = nx, m->samples = ns, m->state_names = mbl_calloc(nx ? (size_t)nx : 1, sizeof *m->state_names);
    if (m) m->A = mbl_calloc(nn ? nn : 1, sizeof *m->A), m->re = mbl_alloc_array(nx ? (size_t)nx : 1, sizeof *m->re);
    if (m) m->im = mbl_alloc_array(nx ? (size_t)nx : 1, sizeof *m->im);
    int rc = m && P && buf && m->state_names && m->A && m->re && m->im ? 0 : mbl_error(st, MBL_ENOMEM, "out of memory (MBC)");
    if (!rc) rc = mbc_states(F->lin, F->md, sp, P, P + nb, st);
    if (!rc && mbc_names(m, f, F->md, sp, P, P + nb)) rc = mbl_error(st, MBL_ENOMEM, "out of memory (MBC)");
    double *T = buf, *Td = T + nn, *B = Td + nn, *Tc = B + nn, *X = Tc + nn, *wr = X + nn * ns, *wi = wr + nx;
    for (int j = 0; !rc && j < ns; j++) {
        double t = f->t0 + f->period * j / ns;
        mbl_point *pt = NULL;
        rc = model_at(F, t, given_q(F, t), F->v0, &pt, st);
        mbl_point_free(pt);
        if (rc) break;
        mbc_T(nx, sp, P, P + nb, sp->psi0 + w * (t - f->t0), w, T, Td);
        memcpy(B, Td, nn * sizeof *B);
        rc = mbla_gemm('N', 'N', nx, nx, nx, 1.0, F->lin->A, nx, T, nx, -1.0, B, nx, st);
        memcpy(Tc, T, nn * sizeof *Tc);
        if (!rc) rc = mbla_lu_solve(nx, nx, Tc, nx, B, nx, st);
        if (rc) break;
        memcpy(X + nn * j, B, nn * sizeof *B);
        for (size_t e = 0; e < nn; e++) m->A[e] += B[e] / ns;
    }
    double na = rc ? 0 : mbla_norm_fro(nx, nx, m->A, nx);
    for (int j = 0; !rc && j < ns; j++) {
        double d = 0;
        for (size_t e = 0; e < nn; e++) d += (X[nn * j + e] - m->A[e]) * (X[nn * j + e] - m->A[e]);
        m->variation = fmax(m->variation, na > 0 ? sqrt(d) / na : sqrt(d));
    }
    if (!rc) rc = mbla_eig(nx, m->A, nx, wr, wi, NULL, 1, NULL, 1, st);
    if (!rc) {
        mult *ml = mbl_alloc_array(nx ? (size_t)nx : 1, sizeof *ml);
        if (!ml) rc = mbl_error(st, MBL_ENOMEM, "out of memory (MBC)");
        for (int i = 0; !rc && i < nx; i++) ml[i] = (mult){wr[i], wi[i], wr[i], i};
        if (!rc) qsort(ml, (size_t)nx, sizeof *ml, mult_cmp);
        for (int i = 0; !rc && i < nx; i++) m->re[i] = ml[i].re, m->im[i] = ml[i].im;
        mbl_free(ml);
    }
    mbl_free(P), mbl_free(buf);
    if (rc) mbc_free(m);
    else f->mbc = m;
    return rc;
}

/* ---- the analysis ------------------------------------------------------------------------------ */

static int check_options(const mbl_floquet_options *o, mbl_status *st)
{
    if (!(o->period > 0) || !isfinite(o->period))
        return mbl_error(st, MBL_EARG, "the period must be positive and finite (got %g)", o->period);
    if (!(o->rtol > 0 && o->rtol < 1) || !(o->atol > 0) || !isfinite(o->atol))
        return mbl_error(st, MBL_EARG, "the tolerances must be positive (rtol below 1): rtol %g, atol %g", o->rtol, o->atol);
    if (!(o->period_tol > 0) || !isfinite(o->period_tol))
        return mbl_error(st, MBL_EARG, "period_tol must be positive and finite (got %g)", o->period_tol);
    if (o->samples < 1 || o->samples > FLOQUET_MAX_SAMPLES)
        return mbl_error(st, MBL_EARG, "samples must be 1 .. %d (got %d)", FLOQUET_MAX_SAMPLES, o->samples);
    if (o->max_steps < 1 || o->shoot_max_iter < 1 || !(o->shoot_tol > 0) || !(o->shoot_rcond > 0 && o->shoot_rcond < 1) ||
        !(o->stab_tol >= 0) || !isfinite(o->stab_tol))
        return mbl_error(st, MBL_EARG, "max_steps, shoot_max_iter and shoot_tol must be positive, shoot_rcond in (0, 1), "
                                       "stab_tol finite and not negative");
    if (o->settle < 0 || o->settle > FLOQUET_MAX_SETTLE)
        return mbl_error(st, MBL_EARG, "settle must be 0 .. %d periods (got %d)", FLOQUET_MAX_SETTLE, o->settle);
    if (o->mbc && (o->shoot || o->mbc->nblades < 3 || o->mbc->ndof < 1 || !o->mbc->coord || o->mbc->samples < 0 ||
                   o->mbc->samples > FLOQUET_MAX_SAMPLES || !(o->mbc->omega >= 0) || !isfinite(o->mbc->omega) ||
                   !isfinite(o->mbc->psi0)))
        return mbl_error(st, MBL_EARG, "the multi-blade coordinate transform needs at least 3 blades, 1 degree of freedom "
                                       "each, a rotor speed >= 0, 0 .. %d samples, and a given orbit (not shooting)",
                         FLOQUET_MAX_SAMPLES);
    if (o->lopt && o->lopt->method && strcmp(o->lopt->method, "augmented"))
        return mbl_error(st, MBL_EARG, "Floquet analysis re-linearizes along the orbit with the augmented method (got --method %s)",
                         o->lopt->method);
    return 0;
}

/* shooting: models with holonomic constraints at most (no non-holonomic ones, ODE states or implicit
 * variables), whose position states are coordinates (column i of q_S one 1 at coordinate c_i, 0
 * for the other states there) and velocity states their rates (v_W likewise at c_i): the selected
 * coordinates, as the state selection chooses them without linearize.states. sel[i] (nx entries)
 * is the index in [q; v] of state i. */
static int check_shoot(const mbl_model *md, const mbl_linear *lin, int *sel, mbl_status *st)
{
    mbl_model_info in;
    mbl_model_get_info(md, &in);
    int n = in.ncoord, z0 = lin->z0;
    if (in.nnh || in.node_states || in.nimplicit)
        return mbl_error(st, MBL_EARG,
                         "shooting for a periodic orbit covers models without non-holonomic constraints, ode_states or "
                         "implicit_variables (this one has %d, %d, %d); give the orbit as the operating point instead "
                         "(docs/floquet.md)", in.nnh, in.node_states, in.nimplicit);
    int ok = lin->nx == 2 * z0 && lin->z1 == z0 && lin->zx == 0 && lin->q_S && lin->v_W;
    for (int i = 0; ok && i < z0; i++) {
        int c = -1;
        for (int r = 0; r < n && c < 0; r++) {
            int unit = lin->q_S[(size_t)i * n + r] == 1 && lin->v_W[(size_t)i * n + r] == 1;
            for (int j = 0; unit && j < z0; j++)
                if (j != i && (lin->q_S[(size_t)j * n + r] != 0 || lin->v_W[(size_t)j * n + r] != 0)) unit = 0;
            if (unit) c = r;
        }
        if (c < 0) ok = 0;
        else sel[i] = c, sel[z0 + i] = n + c;
    }
    if (!ok)
        return mbl_error(st, MBL_EARG, "shooting needs coordinates as the position states and their rates as the velocity "
                                       "states (remove linearize.states and velocity_states)");
    return 0;
}

/* ---- the period and the work, checked before integrating ---------------------------------------- */

/* the period check's phases s / T: A(t) at t0 + s against t0 + s + T */
static const double period_phase[FLOQUET_NPHASE] = {0.0, 0.3819660112501051, 0.7236067977499790};

/* a lower estimate of CVODE's steps over the period from A's eigenvalues a + i w at one time: at
 * least FLOQUET_STEPS_STAB per unit of |lambda| T (the Adams step with fixed-point iteration is
 * stable for |lambda| h of order 1: 1.2-1.3 measured at rtol 0.5 and on an overdamped mass, c/m up
 * to 1e5), and for an oscillation FLOQUET_STEPS_OSC rtol^(-1/10) a radian while it lasts above rtol
 * (accuracy; 15-24 a radian measured at rtol 1e-10 on Mathieu's equation and the tutorial's blade,
 * 2.3-2.8 at 1e-2) */
static double steps_lower(int nx, const double *wr, const double *wi, double T, double rtol)
{
    double est = 0, per_rad = FLOQUET_STEPS_OSC * pow(rtol, -0.1);
    for (int k = 0; k < nx; k++) {
        double live = wr[k] < 0 ? fmin(T, log(1 / rtol) / -wr[k]) : T;
        est = fmax(est, fmax(FLOQUET_STEPS_STAB * hypot(wr[k], wi[k]) * T, per_rad * fabs(wi[k]) * live));
    }
    return est;
}

/* A(t) (nx * nx), with shoot the accelerations (n) at the starting state, and the steps' estimate
 * from A's eigenvalues (*est the larger, *rho A's spectral radius) */
static int check_at(fq *F, const mbl_floquet_options *o, double t, double *A, double *acc, double *wr, double *est,
                    double *rho, mbl_status *st)
{
    int nx = F->nx, n = F->n;
    mbl_point *pt = NULL;
    int rc = model_at(F, t, F->shoot ? F->q0 : given_q(F, t), F->v0, &pt, st);
    if (!rc) {
        memcpy(A, F->lin->A, (size_t)nx * nx * sizeof *A);
        if (F->shoot) memcpy(acc, pt->vdot, (size_t)n * sizeof *acc);
        rc = mbla_eig(nx, A, nx, wr, wr + nx, NULL, 1, NULL, 1, st);
    }
    mbl_point_free(pt);
    if (rc) return rc;
    *rho = 0;
    for (int k = 0; k < nx; k++) *rho = fmax(*rho, hypot(wr[k], wr[nx + k]));
    *est = fmax(*est, steps_lower(nx, wr, wr + nx, o->period, o->rtol));
    return 0;
}

/* The period check (docs/floquet.md, "The period"): A(t) at t0 + s and t0 + s + T for the phases
 * period_phase, and when T is short beside A(t0)'s time scale 1 / rho also at t0 + s + k T,
 * k = min(1 / (rho T), FLOQUET_PERIOD_KMAX) (a model that barely changes over T must still repeat
 * itself over many); with shoot (the orbit not known yet) the accelerations at the starting state
 * too. The largest difference of an entry over the largest entry of all those times (A's, the
 * accelerations') above opt->period_tol is refused naming the entry. Then the work: the estimate
 * steps_lower() at those times above max_steps is refused before any integration. */
static int check_period(fq *F, const mbl_floquet_options *o, mbl_status *st)
{
    int nx = F->nx, n = F->n, npair = FLOQUET_NPHASE + 1, ne = 2 * npair;
    size_t nn = (size_t)nx * nx;
    double T = o->period, est = 0, rho = 0, r, rmax;
    double *A = mbl_alloc_array((size_t)ne * (nn + (size_t)n) + 2 * (size_t)nx + 1, sizeof *A);
    if (!A) return mbl_error(st, MBL_ENOMEM, "out of memory (the period check)");
    double *acc = A + ne * nn, *wr = acc + (size_t)ne * n, tp[2 * (FLOQUET_NPHASE + 1)], kp[FLOQUET_NPHASE + 1];
    int rc = check_at(F, o, F->t0, A, acc, wr, &est, &rho, st), used = 1;
    double k = rho > 0 && rho * T < 1 ? fmin(FLOQUET_PERIOD_KMAX, floor(1 / (rho * T))) : 1;
    rmax = rho;
    for (int j = 0; j < npair; j++) {
        kp[j] = j < FLOQUET_NPHASE ? 1 : k;
        tp[2 * j] = F->t0 + T * period_phase[j < FLOQUET_NPHASE ? j : 1], tp[2 * j + 1] = tp[2 * j] + kp[j] * T;
    }
    if (k == 1) npair--;
    for (int e = 1; !rc && e < 2 * npair; e++, used++) {
        rc = check_at(F, o, tp[e], A + e * nn, acc + (size_t)e * n, wr, &est, &r, st);
        rmax = fmax(rmax, r);
    }
    double amax = 0, fmaxv = 0, worst = 0;
    int wj = 0, wi = 0, wacc = 0;
    for (int e = 0; !rc && e < used; e++) {
        for (size_t i = 0; i < nn; i++) amax = fmax(amax, fabs(A[e * nn + i]));
        for (int i = 0; F->shoot && i < n; i++) fmaxv = fmax(fmaxv, fabs(acc[(size_t)e * n + i]));
    }
    for (int j = 0; !rc && j < npair; j++) {
        const double *A0 = A + 2 * j * nn, *A1 = A0 + nn, *a0 = acc + (size_t)2 * j * n, *a1 = a0 + n;
        for (size_t i = 0; i < nn; i++)
            if (fabs(A1[i] - A0[i]) > worst * amax) worst = fabs(A1[i] - A0[i]) / amax, wj = j, wi = (int)i, wacc = 0;
        for (int i = 0; F->shoot && i < n; i++)
            if (fabs(a1[i] - a0[i]) > worst * fmaxv) worst = fabs(a1[i] - a0[i]) / fmaxv, wj = j, wi = i, wacc = 1;
    }
    if (!rc && worst > o->period_tol) {
        char kT[32] = "";
        if (kp[wj] != 1) snprintf(kT, sizeof kT, "%.0f ", kp[wj]);
        const double *x0 = wacc ? acc + (size_t)2 * wj * n : A + 2 * wj * nn, *x1 = x0 + (wacc ? (size_t)n : nn);
        char what[160];
        if (wacc)
            snprintf(what, sizeof what, "the acceleration of %s at the starting state", mbl_model_coord_name(F->md, wi));
        else if (F->lin->state_names)
            snprintf(what, sizeof what, "the entry of A in row %s, column %s", F->lin->state_names[wi % nx],
                     F->lin->state_names[wi / nx]);
        else
            snprintf(what, sizeof what, "the entry of A in row %d, column %d", wi % nx + 1, wi / nx + 1);
        rc = mbl_error(st, MBL_EARG,
                       "the model is not periodic with period T = %.10g: %s is %.10g at t = %.10g and %.10g at t + %sT, "
                       "a difference of %.3g of the largest entry (tolerance %.3g, period_tol, --period-tol); give the "
                       "period of the model's time dependence (docs/floquet.md, \"The period\")",
                       T, what, x0[wi], tp[2 * wj], x1[wi], kT, worst, o->period_tol);
    }
    if (!rc && est > (double)o->max_steps)
        rc = mbl_error(st, MBL_ENOCONV,
                       "the period T = %.10g needs about %.3g integrator steps or more (A(t)'s largest |eigenvalue| %.6g "
                       "1/s, rtol %.3g), above max_steps %ld (--max-steps): refused before integrating; a shorter "
                       "period, or a larger --max-steps (docs/floquet.md, \"Limits\")",
                       T, est, rmax, o->rtol, o->max_steps);
    mbl_free(A);
    return rc;
}

static int result_new(const mbl_linear *lin, const mbl_point *pt, const mbl_floquet_options *o, mbl_floquet **out,
                      mbl_status *st)
{
    int nx = lin->nx, n = pt->n;
    size_t nn = (size_t)nx * nx, nsh = nn * (size_t)o->samples;
    mbl_floquet *f = mbl_calloc(1, sizeof *f);
    if (!f) return mbl_error(st, MBL_ENOMEM, "out of memory (Floquet result)");
    *out = f;
    f->nx = nx, f->n = n, f->t0 = pt->t, f->period = o->period, f->samples = o->samples;
    f->state_names = mbl_calloc(nx ? (size_t)nx : 1, sizeof *f->state_names);
    f->monodromy = mbl_alloc_array(nn ? nn : 1, sizeof(double));
    f->mult_re = mbl_alloc_array(nx ? (size_t)nx : 1, sizeof(double));
    f->mult_im = mbl_alloc_array(nx ? (size_t)nx : 1, sizeof(double));
    f->mult_abs = mbl_alloc_array(nx ? (size_t)nx : 1, sizeof(double));
    f->mult_berr = mbl_alloc_array(nx ? (size_t)nx : 1, sizeof(double));
    f->exp_re = mbl_alloc_array(nx ? (size_t)nx : 1, sizeof(double));
    f->exp_im = mbl_alloc_array(nx ? (size_t)nx : 1, sizeof(double));
    f->shape_re = mbl_alloc_array(nsh ? nsh : 1, sizeof(double));
    f->shape_im = mbl_alloc_array(nsh ? nsh : 1, sizeof(double));
    f->shape_q_re = mbl_alloc_array((size_t)n * nx + 1, sizeof(double));
    f->shape_q_im = mbl_alloc_array((size_t)n * nx + 1, sizeof(double));
    f->q0 = mbl_alloc_array(n ? (size_t)n : 1, sizeof(double));
    f->v0 = mbl_alloc_array(n ? (size_t)n : 1, sizeof(double));
    int bad = !f->state_names || !f->monodromy || !f->mult_re || !f->mult_im || !f->mult_abs || !f->mult_berr || !f->exp_re || !f->exp_im ||
              !f->shape_re || !f->shape_im || !f->shape_q_re || !f->shape_q_im || !f->q0 || !f->v0;
    for (int i = 0; !bad && i < nx; i++) {
        const char *s = lin->state_names && lin->state_names[i] ? lin->state_names[i] : "";
        f->state_names[i] = mbl_malloc(strlen(s) + 1);
        if (f->state_names[i]) strcpy(f->state_names[i], s);
        else bad = 1;
    }
    if (bad) return mbl_error(st, MBL_ENOMEM, "out of memory (Floquet result of order %d)", nx);
    memcpy(f->q0, pt->q, (size_t)n * sizeof(double));
    memcpy(f->v0, pt->v, (size_t)n * sizeof(double));
    return 0;
}

/* max |x(t0 + T) - x0| */
static double shoot_residual(int ny, const double *x0, const double *xT)
{
    double r = 0;
    for (int i = 0; i < ny; i++) r = fmax(r, fabs(xT[i] - x0[i]));
    return r;
}

/* Newton's method on x(t0 + T) - x0 = 0 (or one period along the given orbit): the step the
 * least-squares solution of (Phi(t0 + T) - I) dx = x0 - x(t0 + T), halved (at most
 * FLOQUET_SHOOT_HALVINGS times) until the residual decreases (a trial that fails to integrate, a
 * motion that runs away, counts as no decrease). The trial's fundamental matrices go to the
 * second half of Phis and mono2, swapped with the first when it is accepted. */
/* x projected onto the constraints at t0 (at: given): its consistent [q; v] */
static int project(fq *F, double *x, mbl_status *st)
{
    mbl_point *pt = NULL;
    int rc = point_at(F, F->t0, x, x + F->n, &pt, st);
    if (!rc) memcpy(x, pt->q, (size_t)F->n * sizeof *x), memcpy(x + F->n, pt->v, (size_t)F->n * sizeof *x);
    mbl_point_free(pt);
    return rc;
}

/* Newton's method on x(t0 + T) - x0 = 0 (or one period along the given orbit), x = [q; v]: the
 * residual and the step in the states (the selected coordinates and their rates, F->sel), whose
 * Jacobian is Phi(t0 + T) - I; the step is the least-squares solution of (Phi - I) dz = -r_z,
 * added to the selected coordinates and rates, and the point projected onto the constraints. It
 * is halved (at most FLOQUET_SHOOT_HALVINGS times) until max |x(t0 + T) - x0| decreases (a trial
 * that fails to integrate, a motion that runs away, counts as no decrease). The trial's
 * fundamental matrices go to the second half of Phis and mono1, swapped with the first when it is
 * accepted. */
static int orbit(fq *F, mbl_floquet *f, const mbl_floquet_options *o, double *Phis, size_t nphis, mbl_status *st)
{
    int n = F->n, ny = F->ny, nx = F->nx;
    size_t nn = (size_t)nx * nx;
    double *x0 = mbl_alloc_array((size_t)ny * 4 + nn * 2 + (size_t)nx + 1, sizeof *x0);
    if (!x0) return mbl_error(st, MBL_ENOMEM, "out of memory (shooting)");
    double *xT = x0 + ny, *x1 = xT + ny, *xT1 = x1 + ny, *J = xT1 + ny, *mono1 = J + nn, *dz = mono1 + nn;
    double *P0 = Phis, *P1 = Phis + nphis, *m0 = f->monodromy, *m1 = mono1;
    if (ny) memcpy(x0, f->q0, (size_t)n * sizeof *x0), memcpy(x0 + n, f->v0, (size_t)n * sizeof *x0);
    int rc = 0;
    for (int i = 0; i < o->settle && ny; i++) { /* the motion over whole periods, towards a stable orbit */
        rc = period(F, o, x0, xT, P0, m0, &f->steps, st);
        if (!rc) memcpy(x0, xT, (size_t)ny * sizeof *x0), rc = project(F, x0, st);
        if (rc) {
            mbl_error_prefix(st, "settling (period %d of %d)", i + 1, o->settle);
            break;
        }
    }
    if (!rc) rc = period(F, o, x0, xT, P0, m0, &f->steps, st);
    f->rhs_evals = F->nrhs;
    for (int it = 0; !rc && ny; it++) {
        double r = shoot_residual(ny, x0, xT), s = 1;
        for (int i = 0; i < ny; i++) s = fmax(s, fabs(x0[i]));
        f->shoot_residual = r, f->shoot_iterations = it;
        if (r <= o->shoot_tol * s) break;
        if (it == o->shoot_max_iter) {
            rc = mbl_error(st, MBL_ENOCONV, "shooting for a periodic orbit of period %.10g did not converge in %d Newton "
                                            "iterations (max |x(t0 + T) - x(t0)| = %.3g)", o->period, it, r);
            break;
        }
        for (int j = 0; j < nx; j++)
            for (int i = 0; i < nx; i++) J[(size_t)j * nx + i] = m0[(size_t)j * nx + i] - (i == j);
        for (int i = 0; i < nx; i++) dz[i] = x0[F->sel[i]] - xT[F->sel[i]];
        rc = mbla_lstsq(nx, nx, 1, J, nx, dz, nx, o->shoot_rcond, NULL, st);
        if (rc) break;
        int ok = 0;
        long steps = 0;
        for (int h = 0; !ok && h <= FLOQUET_SHOOT_HALVINGS; h++) {
            double alpha = ldexp(1.0, -h);
            mbl_status st1 = {0};
            memcpy(x1, x0, (size_t)ny * sizeof *x1);
            for (int i = 0; i < nx; i++) x1[F->sel[i]] += alpha * dz[i];
            ok = !project(F, x1, &st1) && !period(F, o, x1, xT1, P1, m1, &steps, &st1) &&
                 shoot_residual(ny, x1, xT1) < (1 - 1e-4 * alpha) * r;
        }
        if (!ok) {
            rc = mbl_error(st, MBL_ENOCONV, "shooting for a periodic orbit of period %.10g stalled after %d Newton iterations "
                                            "(max |x(t0 + T) - x(t0)| = %.3g; no step along Newton's direction decreases it)",
                                            o->period, it, r);
            break;
        }
        double *t;
        memcpy(x0, x1, (size_t)ny * sizeof *x0), memcpy(xT, xT1, (size_t)ny * sizeof *xT);
        t = P0, P0 = P1, P1 = t, t = m0, m0 = m1, m1 = t;
        f->steps = steps, f->rhs_evals = F->nrhs;
    }
    if (!rc && P0 != Phis) memcpy(Phis, P0, nphis * sizeof *Phis);
    if (!rc && m0 != f->monodromy) memcpy(f->monodromy, m0, nn * sizeof *m0);
    if (!rc && ny) memcpy(f->q0, x0, (size_t)n * sizeof *x0), memcpy(f->v0, x0 + n, (size_t)n * sizeof *x0);
    mbl_free(x0);
    return rc;
}

int mbl_floquet_run(const mbl_model *model, const mbl_point *point, const mbl_floquet_options *opt, mbl_floquet **out,
                    mbl_status *st)
{
    mbl_floquet_options o;
    if (!out) return mbl_error(st, MBL_EARG, "mbl_floquet_run: out is NULL");
    *out = NULL;
    if (!model || !point || !opt) return mbl_error(st, MBL_EARG, "mbl_floquet_run: model, point and options are required");
    o = *opt;
    int rc = check_options(&o, st);
    if (rc) return rc;
    double tmin = fmax(FLOQUET_MIN_PERIOD, FLOQUET_TIME_RES * fabs(point->t));
    if (o.period < tmin)
        return mbl_error(st, MBL_EARG, "the period T = %g is below %g, the shortest one integrated (%s; --period)", o.period,
                         tmin, tmin > FLOQUET_MIN_PERIOD ? "1e-9 of |t0|: the times within it are not resolved"
                                                         : "the integrator's step arithmetic underflows near 1e-160");
    mbl_lin_options lo;
    mbl_lin_options_default(&lo);
    if (o.lopt) lo = *o.lopt;
    lo.method = "augmented";
    lo.partial = MBL_PARTIAL_NEVER;
    fq F = {0};
    F.md = model;
    if (o.popt) F.po = *o.popt;
    else mbl_opoint_options_default(&F.po);
    mbl_floquet *f = NULL;
    double *Phis = NULL;
    rc = mbl_lin_work_new(model, point, &lo, &F.work, &F.lin, st);
    if (!rc && !F.lin->A) rc = mbl_error(st, MBL_EARG, "Floquet analysis needs the whole state-space model (a partial spectrum has none)");
    if (!rc && o.shoot) {
        F.sel = mbl_alloc_array((size_t)F.lin->nx + 1, sizeof *F.sel);
        rc = F.sel ? check_shoot(model, F.lin, F.sel, st) : mbl_error(st, MBL_ENOMEM, "out of memory (shooting)");
    }
    if (!rc) rc = result_new(F.lin, point, &o, &f, st);
    if (rc) goto done;
    F.n = point->n, F.nx = F.lin->nx, F.shoot = o.shoot != 0, F.ny = o.shoot ? 2 * point->n : 0, F.t0 = point->t;
    F.q0 = f->q0, F.v0 = f->v0, f->shot = F.shoot;
    F.q = mbl_alloc_array(F.n ? (size_t)F.n : 1, sizeof *F.q);
    size_t nphis = (size_t)F.nx * F.nx * o.samples, nqs = (size_t)F.n * F.lin->z0;
    Phis = mbl_alloc_array(2 * nphis + nqs + 1, sizeof *Phis);
    if (Phis && F.lin->q_S) memcpy(Phis + 2 * nphis, F.lin->q_S, nqs * sizeof *Phis); /* q_S at t0 */
    else if (Phis) memset(Phis + 2 * nphis, 0, nqs * sizeof *Phis);
    if (!F.q || !Phis) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory (fundamental matrices of order %d)", F.nx);
        goto done;
    }
    if (!F.shoot) { /* the given orbit at t0: the note's level at the solved point */
        mbl_point *p0 = NULL;
        F.shoot = 1; /* no check for this one */
        rc = point_at(&F, F.t0, F.q0, F.v0, &p0, st);
        F.shoot = 0;
        for (int i = 0; !rc && p0->accel_note[0] && i < p0->n; i++) F.acc0 = fmax(F.acc0, fabs(p0->vdot[i]));
        if (!rc && p0->accel_note[0] && !(F.acc0 > 0)) F.acc0 = DBL_MIN;
        mbl_point_free(p0);
    }
    if (!rc) rc = check_period(&F, &o, st);
    if (!rc) rc = orbit(&F, f, &o, Phis, nphis, st);
    if (!rc) rc = analyse(f, &o, Phis, st);
    if (!rc) coord_shapes(f, Phis + 2 * nphis, F.lin->z0);
    if (!rc && o.mbc) rc = mbc_run(&F, f, o.mbc, st);
    if (!rc)
        snprintf(f->notes, sizeof f->notes, "%s; CVODE Adams, rtol %.3g, atol %.3g: %ld steps, %ld evaluations of A(t)",
                 f->shot ? "orbit found by shooting" : "the operating point is the orbit", o.rtol, o.atol, f->steps,
                 f->rhs_evals);
done:
    mbl_free(Phis), mbl_free(F.q), mbl_free(F.sel);
    mbl_linear_free(F.lin);
    mbl_lin_work_free(F.work);
    if (rc) mbl_floquet_free(f);
    else *out = f;
    return rc;
}

/* ---- a sweep's point as modes (floquet_internal.h) ---------------------------------------------- */

typedef struct mode_ix {
    mbl_mode m;
    int k;
} mode_ix;

static int mode_ix_cmp(const void *a, const void *b)
{
    const mode_ix *x = a, *y = b;
    int c = mbl_mode_order(x->m.freq_hz, x->m.re, x->m.im, y->m.freq_hz, y->m.re, y->m.im);
    return c ? c : x->k - y->k;
}

int study_floquet_modes(const mbl_model *model, const mbl_point *point, const mbl_floquet_options *opt, int spin_param,
                        mbl_modes **out, mbl_status *st)
{
    mbl_floquet_options o = *opt;
    *out = NULL;
    if (spin_param >= 0) {
        double rps = mbl_model_param_spin(model, spin_param) * mbl_model_param_value(model, spin_param);
        if (!(fabs(rps) > 0) || !isfinite(rps))
            return mbl_error(st, MBL_EARG, "the spin speed %s = %g gives no period", mbl_model_param_name(model, spin_param),
                             mbl_model_param_value(model, spin_param));
        o.period = 1.0 / fabs(rps);
    }
    o.samples = 1, o.mbc = NULL;
    mbl_floquet *f = NULL;
    int rc = mbl_floquet_run(model, point, &o, &f, st);
    if (rc) return rc;
    int nx = f->nx, n = f->n;
    mbl_modes *M = mbl_calloc(1, sizeof *M);
    mode_ix *ix = mbl_alloc_array(nx ? (size_t)nx : 1, sizeof *ix);
    if (M) {
        M->modes = mbl_calloc(nx ? (size_t)nx : 1, sizeof *M->modes);
        M->shape_re = mbl_alloc_array((size_t)n * nx + 1, sizeof(double));
        M->shape_im = mbl_alloc_array((size_t)n * nx + 1, sizeof(double));
    }
    if (!M || !ix || !M->modes || !M->shape_re || !M->shape_im) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory (Floquet modes)");
    } else {
        M->nx = nx, M->n = n, M->zero_tol = 0;
        snprintf(M->solver, sizeof M->solver, "floquet");
        for (int k = 0; k < nx; k++) {
            mbl_mode *m = &ix[k].m;
            double re = f->exp_re[k], im = f->exp_im[k], mag = hypot(re, im);
            memset(m, 0, sizeof *m);
            m->re = re, m->im = im, m->freq_hz = mag / FLOQUET_TWO_PI;
            m->damping_ratio = mag > 0 ? -re / mag : 0;
            m->kind = im != 0 ? MBL_MODE_OSCILLATORY : mag > 0 ? MBL_MODE_REAL : MBL_MODE_ZERO;
            m->backward_error = m->error_estimate = NAN;
            ix[k].k = k;
        }
        qsort(ix, (size_t)nx, sizeof *ix, mode_ix_cmp);
        for (int j = 0; j < nx; j++) {
            M->modes[j] = ix[j].m;
            memcpy(M->shape_re + (size_t)j * n, f->shape_q_re + (size_t)ix[j].k * n, (size_t)n * sizeof(double));
            memcpy(M->shape_im + (size_t)j * n, f->shape_q_im + (size_t)ix[j].k * n, (size_t)n * sizeof(double));
        }
    }
    mbl_free(ix);
    mbl_floquet_free(f);
    if (rc) mbl_modes_free(M);
    else *out = M;
    return rc;
}
