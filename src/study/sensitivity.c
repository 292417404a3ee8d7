/* Eigenvalue, frequency, damping-ratio and mode-shape sensitivities (docs/study.md).
 *
 * The linearized DAE at a point, with dq, dlambda, dmu ~ e^{s t}, is the quadratic pencil over
 * z = [dq; dlambda; dmu] (independent constraints only, N = n + m' + k'):
 *
 *   P(s) = s^2 P2 + s P1 + P0,  P2 = [R_vdot 0; 0 0],  P1 = [R_v 0; c_v 0],
 *                               P0 = [R_q Phi_q^T A^T; Phi_q 0 0; c_q 0 0]
 *
 * (R the equations of motion, Phi the holonomic and c the non-holonomic constraints; R_lambda =
 * Phi_q^T, R_mu = A^T = c_v^T). Its finite eigenvalues are those of every exact method's linear
 * model, with no choice of states. For a simple eigenvalue s with right and left null vectors
 * P(s) v = 0, w^H P(s) = 0:
 *
 *   ds/dp = - w^H (dP/dp)(s) v / (w^H P'(s) v),   P'(s) = 2 s P2 + P1,
 *
 * where dP/dp is the total derivative: d(J)/dp = J_p + sum_c J_{x_c} dx_c/dp, J the model's
 * Jacobian, dx/dp the shift of the operating point by the implicit function theorem on the
 * equations that define it (the same rows and unknowns as mbl_operating_point solves). Every
 * derivative comes from the expression engine (mbl_dae_deriv); the eigenvectors from QZ on the
 * companion form of P (v its lower half, w the upper half of the left vector). The mode shape
 * (dq with its largest component fixed at 1) and its derivative come from the bordered system
 * [P(s) P'(s) v; e_k^T 0] [v'; s'] = [-dP(s) v; 0] (complex KLU).
 *
 * This file: the computation, step by step; the shift of the point is sens_point.c, the pencil
 * and its eigentriples sens_pencil.c, the pencil in the user states sens_spen.c. */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "modal/order.h"
#include "model/model_view.h"
#include "study/sens_internal.h"

#define TWO_PI 6.283185307179586476925286766559
/* The largest backward error of an eigentriple that is reported: half the digits of the data. */
#define SENS_BERR_MAX 1.4901161193847656e-08

void mbl_sens_options_default(mbl_sens_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->shapes = 1;
    opt->dense_max = 600;
    opt->zero_tol = 1e-9;
    opt->repeat_tol = 1e-8;
    opt->rank_tol = 1e-9;
}

void mbl_sensitivity_free(mbl_sensitivity *s)
{
    if (!s) return;
    if (s->modes)
        for (int i = 0; i < s->nmode; i++) {
            mbl_free(s->modes[i].dre);
            mbl_free(s->modes[i].dim);
            mbl_free(s->modes[i].dfreq_hz);
            mbl_free(s->modes[i].ddamping);
        }
    mbl_free(s->modes);
    mbl_free(s->wrt);
    mbl_free(s->shape_re);
    mbl_free(s->shape_im);
    mbl_free(s->dshape_re);
    mbl_free(s->dshape_im);
    mbl_free(s->dq);
    mbl_free(s->dv);
    mbl_free(s->dlambda);
    mbl_free(s->point_defined);
    mbl_free(s);
}

/* ---- the eigenvalues ------------------------------------------------------------------------ */

static int cmp_modes(const void *pa, const void *pb) /* as mbl_modal, conjugates kept together */
{
    const mbl_eig_item *a = pa, *b = pb;
    int c = mbl_mode_order(a->mag, a->re, a->im, b->mag, b->re, b->im);
    return c ? c : a->idx - b->idx;
}

/* ---- the computation ------------------------------------------------------------------------ */

#define NEW(p, cnt) (((p) = mbl_alloc_array((size_t)(cnt) + 1, sizeof *(p))) == NULL)

/* One computation: its context, the result being filled and every work array (job_free). */
typedef struct job {
    const mbl_dae_deriv *d;
    const mbl_point *pt;
    mbl_sens_options opt;
    ctx c;
    mbl_sensitivity *S;
    int nwrt, large;
    double *Jv, *dJ, *dx, *P0, *P1, *P2, *dP, *A2, *B2;
    double *ar, *ai, *be, *VL, *VR;
    mbl_eig_item *ev;
    double complex *vbuf;
    int smode; /* 1: the pencil in the user states (study_sens_spen_build) */
    spen sp;
    double complex *ybuf;
    mbla_csc *Apat;
    double *apz;
    int N, N2;                /* the pencil's order, the companion form's */
    size_t NN;
    int nfin, nev;            /* finite eigenvalues expected, and listed in ev */
    double gam;               /* the companion form's eigenvalue scaling */
    double magmax;            /* the largest |eigenvalue| */
    int nshape;               /* the pencil's leading entries that are the displacement */
    double pnrm[3];           /* Frobenius norms of P0, P1, P2 (backward errors) */
    double zthr;              /* |eigenvalue| at or below which a mode is zero */
    double *rhs;              /* the bordered system's right-hand side (shape derivatives) */
    int nundef;               /* modes whose derivatives are not defined */
    int *defl, ndefl;         /* cyclic columns divided by s (study_sens_deflate), their sum */
} job;

static void job_free(job *j)
{
    mbl_free(j->Jv);
    mbl_free(j->dJ);
    mbl_free(j->dx);
    mbl_free(j->c.Jd);
    mbl_free(j->c.Fp);
    mbl_free(j->c.x0p);
    mbl_free(j->c.cyclic);
    mbl_free(j->c.rowmap);
    mbl_free(j->c.colmap);
    mbl_free(j->c.colmat);
    mbl_free(j->P0);
    mbl_free(j->P1);
    mbl_free(j->P2);
    mbl_free(j->dP);
    mbl_free(j->A2);
    mbl_free(j->B2);
    mbl_free(j->ar);
    mbl_free(j->ai);
    mbl_free(j->be);
    mbl_free(j->VL);
    mbl_free(j->VR);
    mbl_free(j->ev);
    mbl_free(j->vbuf);
    mbla_csc_free(j->Apat);
    mbl_free(j->apz);
    mbl_free(j->sp.T0), mbl_free(j->sp.dT0), mbl_free(j->ybuf);
    mbl_free(j->rhs);
    mbl_free(j->defl);
}

/* The result's arrays, the model's Jacobian at the point (dense, and which coordinates are
 * cyclic) and the shift of the point per parameter. */
static int job_point(job *j, const int *wrt_in, mbl_status *st)
{
    ctx *c = &j->c;
    const mbl_dae_layout *L = &c->L;
    mbl_sensitivity *S = j->S;
    int n = L->n, np = L->np, nF = L->nF, nunk = L->nunk, nwrt = j->nwrt, rc = 0;
    S->n = n;
    S->m = L->m;
    S->np = np;
    S->nwrt = nwrt;
    if (NEW(S->wrt, nwrt) || NEW(j->Jv, L->jnz) || NEW(j->dJ, L->jnz) || NEW(c->Jd, (size_t)nF * nunk) ||
        NEW(c->Fp, (size_t)nF * np) || NEW(c->x0p, (size_t)nunk * np) || NEW(c->cyclic, n) ||
        NEW(j->dx, (size_t)nunk * (nwrt ? nwrt : 1)) || NEW(S->dq, (size_t)n * nwrt) || NEW(S->dv, (size_t)n * nwrt) ||
        NEW(S->dlambda, (size_t)L->m * nwrt) || NEW(S->point_defined, nwrt))
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    const double *Jv = j->Jv, *dx = j->dx;
    for (int w = 0; w < nwrt; w++) S->wrt[w] = wrt_in ? wrt_in[w] : w;
    rc = mbl_dae_deriv_eval(j->d, j->pt, j->Jv, c->Fp, c->x0p, st);
    if (rc) return rc;
    memset(c->Jd, 0, (size_t)nF * nunk * sizeof *c->Jd);
    for (int i = 0; i < n; i++) c->cyclic[i] = 1;
    for (int e = 0; e < L->jnz; e++) {
        c->Jd[L->jrow[e] + (size_t)L->jcol[e] * nF] += Jv[e];
        int q = L->jcol[e] - L->col0[MBL_DAE_Q];
        if (q >= 0 && q < n) c->cyclic[q] = 0;
    }
    /* the shift of the point, per parameter; a velocity held by an expression (docs/model-files.md,
     * "Held velocities") is a row the stages do not have */
    if (j->pt->at == MBL_AT_TRIM) {
        mbl_model_info in;
        mbl_model_get_info(mbl_dae_deriv_model(j->d), &in);
        return mbl_error(st, MBL_EMODEL,
                         "%s: sensitivities of a trimmed point (at: trim) are not available: its targets and free inputs "
                         "are rows and unknowns the sensitivity stages do not have (use a sweep of the parameter)",
                         in.file);
    }
    if (j->pt->at == MBL_AT_GIVEN && j->pt->nheld_expr) {
        mbl_model_info in;
        mbl_model_get_info(mbl_dae_deriv_model(j->d), &in);
        return mbl_error(st, MBL_EMODEL,
                         "%s: sensitivities of a given point whose velocities are held by an expression (a key of "
                         "velocities such as JV(crank)) are not available: hold coordinate rates instead",
                         in.file);
    }
    rc = study_sens_point_derivative(c, nwrt, S->wrt, j->dx, S->point_defined, st);
    if (rc) return rc;
    for (int w = 0; w < nwrt; w++) {
        const double *x = dx + (size_t)w * nunk;
        for (int i = 0; i < n; i++) {
            S->dq[i + (size_t)w * n] = x[L->col0[MBL_DAE_Q] + i];
            S->dv[i + (size_t)w * n] = x[L->col0[MBL_DAE_V] + i];
        }
        for (int i = 0; i < L->m; i++) S->dlambda[i + (size_t)w * L->m] = x[L->col0[MBL_DAE_LAMBDA] + i];
    }
    return 0;
}

/* The pencil P0, P1, P2 over the independent constraints, its pattern, and its derivatives dP
 * along each parameter (the point's shift included). */
static int job_pencil(job *j, mbl_status *st)
{
    ctx *c = &j->c;
    int nunk = c->L.nunk, nwrt = j->nwrt, large = j->large, rc = 0;
    /* the pencil and its eigenvalues: companion form [-P1 -P0; I 0] x = s [P2 0; 0 I] x */
    rc = study_sens_pencil_map(c, st);
    if (rc) return rc;
    int N = j->N = c->N, N2 = j->N2 = 2 * N;
    size_t NN = j->NN = (size_t)N * N;
    if (NEW(j->P0, NN) || NEW(j->P1, NN) || NEW(j->P2, NN) || NEW(j->dP, 3 * NN * (nwrt ? nwrt : 1)) || NEW(j->ev, N2) ||
        NEW(j->vbuf, 6 * (size_t)N + 2) || NEW(j->defl, N) || NEW(j->ybuf, 4 * (size_t)c->L.n + 4) ||
        (!large && (NEW(j->A2, (size_t)N2 * N2) || NEW(j->B2, (size_t)N2 * N2) || NEW(j->ar, N2) || NEW(j->ai, N2) ||
                    NEW(j->be, N2) || NEW(j->VL, (size_t)N2 * N2) || NEW(j->VR, (size_t)N2 * N2))) ||
        (large && NEW(j->A2, 3 * NN)))
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    study_sens_fill_pencil(c, j->Jv, j->P0, j->P1, j->P2);
    rc = study_sens_pencil_pattern(N, j->P0, j->P1, j->P2, &j->Apat, st);
    if (rc) return rc;
    if (NEW(j->apz, 2 * (size_t)mbla_csc_nnz(j->Apat))) return mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int w = 0; w < nwrt; w++) {
        rc = mbl_dae_deriv_jac_dir(j->d, j->pt, j->dx + (size_t)w * nunk, j->S->wrt[w], j->dJ, st);
        if (rc) return rc;
        double *D = j->dP + 3 * NN * w;
        study_sens_fill_pencil(c, j->dJ, D, D + NN, D + 2 * NN);
    }
    return 0;
}

/* The finite eigenvalues by QZ on the companion form (into ev; nev of them). */
static int job_eigen_qz(job *j, mbl_status *st)
{
    int N = j->N, N2 = j->N2, rc = 0, nev = 0;
    size_t NN = j->NN;
    const double *P0 = j->P0, *P1 = j->P1, *P2 = j->P2;
    double *A2 = j->A2, *B2 = j->B2, *ar = j->ar, *ai = j->ai, *be = j->be;
    mbl_eig_item *ev = j->ev;
    double gam = 1.0;
    memset(A2, 0, (size_t)N2 * N2 * sizeof *A2);
    memset(B2, 0, (size_t)N2 * N2 * sizeof *B2);
    /* scaling of Fan, Lin and Van Dooren (2004): s = gamma mu, the pencil times delta, so
     * that the three coefficients have comparable norms (stiff models span 1e10 between M
     * and K) */
    double n0 = 0, n1 = 0, n2 = 0;
    for (size_t e = 0; e < NN; e++) n0 += P0[e] * P0[e], n1 += P1[e] * P1[e], n2 += P2[e] * P2[e];
    n0 = sqrt(n0), n1 = sqrt(n1), n2 = sqrt(n2);
    gam = n0 > 0 && n2 > 0 ? sqrt(n0 / n2) : 1.0;
    double del = n0 + gam * n1 > 0 ? 2.0 / (n0 + gam * n1) : 1.0;
    for (int jj = 0; jj < N; jj++) {
        for (int i = 0; i < N; i++) {
            A2[i + (size_t)jj * N2] = -del * gam * P1[i + (size_t)jj * N];
            A2[i + (size_t)(N + jj) * N2] = -del * P0[i + (size_t)jj * N];
            B2[i + (size_t)jj * N2] = del * gam * gam * P2[i + (size_t)jj * N];
        }
        A2[N + jj + (size_t)jj * N2] = 1.0;
        B2[N + jj + (size_t)(N + jj) * N2] = 1.0;
    }
    j->gam = gam;
    rc = mbla_ggevx('P', N2, A2, N2, B2, N2, ar, ai, be, j->VL, N2, j->VR, N2, NULL, NULL, st);
    if (rc) return rc;
    /* finite, infinite or undetermined from the pencil (mbla_gev_classify), never from |s| */
    double *sre = mbl_alloc_array((size_t)N2, sizeof *sre), *sim = mbl_alloc_array((size_t)N2, sizeof *sim);
    int *kind = mbl_alloc_array((size_t)N2, sizeof *kind);
    rc = !sre || !sim || !kind ? mbl_error(st, MBL_ENOMEM, "out of memory")
                               : mbla_gev_classify(N2, A2, N2, B2, N2, ar, ai, be, sre, sim, kind, NULL, NULL, st);
    for (int jj = 0; !rc && jj < N2; jj++) {
        if (kind[jj] != MBLA_EIG_FINITE) continue;
        double re = gam * sre[jj], im = gam * sim[jj];
        ev[nev].re = re, ev[nev].im = im, ev[nev].mag = hypot(re, im), ev[nev].idx = jj;
        nev++;
    }
    j->nev = nev;
    mbl_free(sre), mbl_free(sim), mbl_free(kind);
    if (rc == MBL_ESINGULAR)
        mbl_error_prefix(st, "sensitivities: the linearized equations (redundant or singular constraints?)");
    return rc;
}

/* The eigenvalues of the linear model of the default method (sparse for large models). */
static int job_eigen_model(job *j, mbl_status *st)
{
    int N2 = j->N2, nfin = j->nfin, nev = 0, rc = 0;
    mbl_eig_item *ev = j->ev;
    mbl_linear *lin = NULL;
    mbl_modes *modes = NULL;
    rc = mbl_linearize(mbl_dae_deriv_model(j->d), j->pt, NULL, &lin, st);
    if (!rc) rc = mbl_modal(lin, NULL, &modes, st);
    for (int i = 0; !rc && i < modes->nx && nev < N2; i++) {
        if (modes->modes[i].spurious) continue;
        ev[nev].re = modes->modes[i].re, ev[nev].im = modes->modes[i].im;
        ev[nev].mag = hypot(ev[nev].re, ev[nev].im), ev[nev].idx = nev;
        nev++;
    }
    j->nev = nev;
    mbl_modes_free(modes);
    mbl_linear_free(lin);
    if (rc) return rc;
    if (nev != nfin)
        return mbl_error(st, MBL_ESINGULAR,
                         "sensitivities: the linear model has %d eigenvalues where the linearized equations have %d",
                         nev, nfin);
    return 0;
}

/* The pencil's finite eigenvalues, sorted as mbl_modal, and the largest magnitude. */
static int job_eigen(job *j, mbl_status *st)
{
    const ctx *c = &j->c;
    int n = c->L.n, rc = 0;
    j->nfin = 2 * (n - c->mi) - c->ki + c->nX, j->nev = 0;
    j->gam = 1.0;
    j->ndefl = 0;
    for (int jj = 0; jj < j->N; jj++) j->defl[jj] = 0;
    if (!j->large && j->smode)
        study_sens_deflate(j->N, j->smode ? j->sp.ns : n, j->P0, j->P1, j->P2, j->dP, j->nwrt, j->defl, &j->ndefl);
    rc = !j->large ? job_eigen_qz(j, st) : job_eigen_model(j, st);
    if (rc) return rc;
    int nfin = j->nfin - j->ndefl, nev = j->nev;
    mbl_eig_item *ev = j->ev;
    if (nev < nfin)
        return mbl_error(st, MBL_ESINGULAR,
                         "sensitivities: the linearized equations have %d finite eigenvalues where %d were expected (a "
                         "singular pencil: redundant or singular constraints?)",
                         nev, nfin);
    mbl_eig_sort_modulus(ev, nev);
    nev = nfin;
    for (int jj = 0; jj < j->N; jj++) /* the deflated zeros, exact: idx -1 - (their column) */
        for (int d = 0; d < j->defl[jj]; d++) ev[nev].re = ev[nev].im = ev[nev].mag = 0, ev[nev].idx = -1 - jj, nev++;
    j->nev = nev;
    qsort(ev, (size_t)nev, sizeof *ev, cmp_modes);
    double magmax = 0;
    for (int i = 0; i < nev; i++) magmax = fmax(magmax, ev[i].mag);
    j->magmax = magmax;
    return 0;
}

/* The pencil is the linearization only where it does not change along the nominal motion:
 * dJ/dt = J_x xdot with xdot = (0, 0, 0, vdot, v, 0) (a steady point: cyclic coordinates
 * may move, nothing else). Where it does, the pencil in the file's user states replaces it
 * (*again = 1: its eigenvalues to be computed anew). */
static int job_steady(job *j, int *again, mbl_status *st)
{
    const ctx *c = &j->c;
    const mbl_dae_layout *L = &c->L;
    const mbl_point *pt = j->pt;
    int n = L->n, nunk = L->nunk, N = j->N, rc = 0;
    size_t NN = j->NN;
    double *dJ = j->dJ, *A2 = j->A2, magmax = j->magmax;
    *again = 0;
    /* the pencil as it was before its cyclic columns were deflated (the rates are of that one) */
    double *U = mbl_alloc_array(3 * NN + 1, sizeof *U);
    double *xt = mbl_alloc_array((size_t)nunk + 1, sizeof *xt);
    if (!xt || !U) {
        mbl_free(xt), mbl_free(U);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    const double *P0 = U, *P1 = U + NN, *P2 = U + 2 * NN;
    study_sens_undeflate(N, j->P0, j->P1, j->P2, j->defl, U, U + NN, U + 2 * NN);
    for (int q = 0; q < nunk; q++) xt[q] = 0;
    for (int i = 0; i < n; i++) {
        xt[L->col0[MBL_DAE_V] + i] = pt->vdot[i];
        xt[L->col0[MBL_DAE_Q] + i] = pt->v[i];
    }
    for (int i = 0; i < c->nX && pt->Xdot; i++) xt[L->col0[MBL_DAE_X] + i] = pt->Xdot[i];
    rc = mbl_dae_deriv_jac_dir(j->d, pt, xt, -1, dJ, st);
    mbl_free(xt);
    if (rc) {
        mbl_free(U);
        return rc;
    }
    double *T0 = A2, *T1 = A2 + NN, *T2 = A2 + 2 * NN; /* A2 holds at least 3 NN: scratch */
    study_sens_fill_pencil(c, dJ, T0, T1, T2);
    /* only the part the eigenvalues see (study_sens_project): in relative coordinates the Whipple
     * bicycle's rear frame's Euler parameters leave the equations in the normalization's direction
     * depending on the front wheel's spin angle (rate 0.0044), which moves no eigenvalue */
    double *Tk[3] = {T0, T1, T2}, tmax = 0;
    for (size_t e = 0; e < 3 * NN; e++) tmax = fmax(tmax, fabs(A2[e])); /* at rest: nothing moves */
    rc = tmax > 0 ? study_sens_project(c, N, P0, P1, Tk, st) : 0;
    if (rc) {
        mbl_free(U);
        return rc;
    }
    double sm = fmax(magmax, 1e-300), worst = 0;
    for (int i = 0; i < N; i++) {
        double a = 0, b = 0;
        for (int jj = 0; jj < N; jj++) {
            size_t e = i + (size_t)jj * N;
            a = fmax(a, fabs(T0[e]) + sm * fabs(T1[e]) + sm * sm * fabs(T2[e]));
            b = fmax(b, fabs(P0[e]) + sm * fabs(P1[e]) + sm * sm * fabs(P2[e]));
        }
        if (b > 0) worst = fmax(worst, a / (sm * b));
    }
    mbl_free(U);
    if (!(worst > 1e-6)) return 0;
    /* the pencil in the file's user states, when they parametrize the positions */
    int nZ = L->col0[MBL_DAE_Z + 1] - L->col0[MBL_DAE_Z];
    if (j->large || c->nX || nZ || L->nuvs || c->mi != L->m || c->ki != L->k || L->nus != n - L->m || n - L->m < 1)
        return mbl_error(st, MBL_EMODEL,
                         "sensitivities: the linearized equations change along the motion at this point (relative "
                         "rate %.2g: coordinates that are not steady, such as the Euler parameters of a spinning "
                         "body), and the model has no %d user states (linearize.states) to hold the steady "
                         "motion (docs/study.md)",
                         worst, n - L->m);
    rc = study_sens_spen_build(c, j->d, pt, j->Jv, j->dx, j->S->wrt, j->nwrt, j->P0, j->P1, j->P2, j->dP, &j->sp, st);
    if (rc) return rc;
    j->smode = 1;
    N = j->N = n + L->k, j->N2 = 2 * N, j->NN = (size_t)N * N;
    mbla_csc_free(j->Apat);
    j->Apat = NULL;
    mbl_free(j->apz);
    j->apz = NULL;
    rc = study_sens_pencil_pattern(N, j->P0, j->P1, j->P2, &j->Apat, st);
    if (rc) return rc;
    if (NEW(j->apz, 2 * (size_t)mbla_csc_nnz(j->Apat)))
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    *again = 1;
    return 0;
}

/* Mode t's eigentriple (s, v, wl): the QZ one refined, or by inverse iteration on the sparse
 * pencil (large models); its backward error checked; the real part of the vectors of a real
 * eigenvalue. *refined: 1 when the refinement kept the triple (else its derivatives are not
 * trusted). */
static int mode_triple(job *j, int t, double complex *sp_, double complex *v, double complex *wl, double complex *tmp,
                       double complex *tmp2, int *refined_, mbl_status *st)
{
    mbl_sens_mode *md = &j->S->modes[t];
    const mbl_eig_item *ev = j->ev;
    int N = j->N, nev = j->nev, jv = ev[t].idx, N2 = j->N2;
    const double *P0 = j->P0, *P1 = j->P1, *P2 = j->P2, *ai = j->ai, *pnrm = j->pnrm;
    double complex s = *sp_;
    int isreal = ev[t].im == 0, refined = 0;
    double berr = INFINITY;
    if (ev[t].idx < 0) { /* a cyclic coordinate's zero, deflated (study_sens_deflate): exact, vector e_j */
        for (int i = 0; i < N; i++) v[i] = wl[i] = 0;
        v[-1 - ev[t].idx] = wl[-1 - ev[t].idx] = 1;
        md->backward_error = md->error_estimate = 0;
        md->re = md->im = md->freq_hz = md->damping_ratio = 0;
        *sp_ = 0, *refined_ = 0; /* no derivatives: a zero mode */
        return 0;
    }
    if (!j->large) {
        study_sens_unpack_vec(j->VR, N2, N, N, ai, jv, v);  /* lower half: v */
        study_sens_unpack_vec(j->VL, N2, N, 0, ai, jv, wl); /* upper half: w */
        study_sens_refine(j->Apat, j->apz, N, P0, P1, P2, pnrm, &s, v, wl, tmp, tmp2, isreal, 2, &berr);
        /* still this eigenvalue: nearer its QZ value than half the distance to any other */
        double gap = HUGE_VAL;
        for (int u = 0; u < nev; u++)
            if (u != t) gap = fmin(gap, hypot(ev[u].re - ev[t].re, ev[u].im - ev[t].im));
        if (cabs(s - (ev[t].re + I * ev[t].im)) > 0.5 * gap) {
            s = ev[t].re + I * ev[t].im;
            study_sens_unpack_vec(j->VR, N2, N, N, ai, jv, v);
            study_sens_unpack_vec(j->VL, N2, N, 0, ai, jv, wl);
            berr = study_sens_pair_berr(j->Apat, N, P0, P1, P2, pnrm, s, v, wl, tmp);
        }
        refined = 1;
    } else { /* inverse iteration from fixed pseudo-random vectors */
        unsigned long long x = 88172645463325252ull + (unsigned long long)t;
        for (int i = 0; i < N; i++) {
            double u[4];
            for (int k = 0; k < 4; k++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                u[k] = (double)(x >> 11) / 9007199254740992.0 - 0.5;
            }
            v[i] = u[0] + I * (isreal ? 0 : u[1]);
            wl[i] = u[2] + I * (isreal ? 0 : u[3]);
        }
        refined = study_sens_refine(j->Apat, j->apz, N, P0, P1, P2, pnrm, &s, v, wl, tmp, tmp2, isreal, 3, &berr) > 0;
    }
    md->backward_error = berr;
    *sp_ = s;
    *refined_ = refined;
    if (!(berr <= SENS_BERR_MAX))
        return mbl_error(st, MBL_ESINGULAR,
                         "sensitivities: eigenvalue %d (%.6g%+.6gi) has backward error %.3g on the linearized "
                         "equations, above %.3g: no eigenpair of them (a singular or nearly singular pencil: "
                         "redundant or singular constraints?)",
                         t + 1, creal(s), cimag(s), berr, SENS_BERR_MAX);
    md->re = creal(s) + 0.0;
    md->im = cimag(s) + 0.0;
    double smag = cabs(s);
    md->freq_hz = smag / TWO_PI;
    md->damping_ratio = smag > 0 ? -md->re / smag + 0.0 : 0.0;
    if (isreal) /* real vectors for a real eigenvalue */
        for (int i = 0; i < N; i++) v[i] = creal(v[i]), wl[i] = creal(wl[i]);
    return 0;
}

/* Mode t's shape: v scaled so that its largest displacement component kk is 1 (*big: its size
 * before, 0 for none); in the user states dq = T0 v = y, its largest component y_ky = *yk. */
/* The displacement u (nshape) of a vector v of the pencil: v with its deflated entries divided
 * by s^defl (study_sens_deflate); at s = 0 exactly, the deflated entries alone when they are not
 * all zero (the chain's eigenvector: the cyclic coordinates' directions) */
static void mode_disp(const job *j, double complex s, const double complex *v, double complex *u)
{
    int any = 0;
    for (int i = 0; i < j->nshape; i++) any |= j->defl[i] && v[i] != 0;
    for (int i = 0; i < j->nshape; i++) {
        int d = j->defl[i];
        u[i] = !d ? (s == 0 && any ? 0 : v[i]) : s != 0 ? v[i] / (d == 1 ? s : s * s) : v[i];
    }
}

static void mode_shape(job *j, int t, double complex s, double complex *v, int *kk_, double *big_, double complex *yk_,
                       int *ky_)
{
    const ctx *c = &j->c;
    mbl_sensitivity *S = j->S;
    const spen *sp = &j->sp;
    int n = c->L.n, N = j->N, nshape = j->nshape, smode = j->smode;
    /* shape: dq with its largest component 1 (a mode of the user ODE states alone, dq = 0: its
     * largest X component) */
    int kk = 0;
    double big = 0;
    for (int i = 0; i < nshape; i++) big = fmax(big, cabs(v[i]));
    for (int i = 0; i < nshape; i++) /* the first within MODAL_SHAPE_TIE of the largest, as mbl_modal */
        if (cabs(v[i]) >= (1.0 - MODAL_SHAPE_TIE) * big) {
            kk = i;
            break;
        }
    for (int i = c->x0; big == 0 && i < c->x0 + c->nX; i++)
        if (cabs(v[i]) > big) big = cabs(v[i]), kk = i;
    double complex sc = big > 0 ? 1.0 / v[kk] : 1.0;
    for (int i = 0; i < N; i++) v[i] *= sc;
    double complex *y = j->ybuf, *u = j->ybuf + 2 * n, yk = 1;
    int ky = 0, gen = smode || j->ndefl;
    if (gen) { /* dq = T0 u (u itself without user states), its largest component 1 */
        double yb = 0;
        mode_disp(j, s, v, u);
        for (int i = 0; i < n; i++) {
            y[i] = smode ? 0 : u[i];
            for (int jj = 0; smode && jj < sp->ns; jj++) y[i] += sp->T0[i + (size_t)jj * n] * u[jj];
            yb = fmax(yb, cabs(y[i]));
        }
        while (yb > 0 && cabs(y[ky]) < (1.0 - MODAL_SHAPE_TIE) * yb) ky++;
        yk = yb > 0 ? y[ky] : 1;
    }
    for (int i = 0; i < n; i++) {
        double complex sh = gen ? y[i] / yk : v[i];
        S->shape_re[i + (size_t)t * n] = creal(sh) + 0.0;
        S->shape_im[i + (size_t)t * n] = cimag(sh) + 0.0;
    }
    *kk_ = kk, *big_ = big, *yk_ = yk, *ky_ = ky;
}

/* The denominator w^H P'(s) v of mode t's derivative, and whether the eigenvalue is simple
 * (*defined): |w^H P' v| against ||P'^H w|| ||v||, where P' acts on dq only (a defective pair:
 * rounding level, sqrt(eps)), and no other eigenvalue repeats it. */
static double complex mode_denominator(const job *j, int t, double complex s, const double complex *v,
                                       const double complex *wl, double complex *tmp, int refined, double big,
                                       int *defined_)
{
    const ctx *c = &j->c;
    const mbl_eig_item *ev = j->ev;
    int N = j->N, nev = j->nev, nshape = j->nshape, smode = j->smode;
    const double *P1 = j->P1, *P2 = j->P2;
    /* denominator w^H P'(s) v, and whether the eigenvalue is simple: |w^H P' v| against
     * ||P'^H w|| ||v||, where P' acts on dq only (a defective pair: rounding level, sqrt(eps)) */
    double complex den = 0;
    for (int jj = 0; jj < N; jj++) {
        tmp[jj] = 0;
        for (int i = 0; i < N; i++) tmp[jj] += conj(wl[i]) * (2 * s * P2[i + (size_t)jj * N] + P1[i + (size_t)jj * N]);
    }
    double wn = 0, vn = 0;
    for (int i = 0; i < N; i++) {
        den += tmp[i] * v[i];
        wn += cabs(tmp[i]) * cabs(tmp[i]);
        if (i < nshape || (!smode && i >= c->x0 && i < c->x0 + c->nX)) vn += cabs(v[i]) * cabs(v[i]);
    }
    int defined = refined && big > 0 && wn > 0 && cabs(den) > 1e-6 * sqrt(wn * vn);
    for (int u = 0; u < nev && defined; u++)
        if (u != t && (hypot(ev[u].re - ev[t].re, ev[u].im - ev[t].im) <= j->opt.repeat_tol * fmax(1.0, ev[t].mag) ||
                       (ev[t].mag <= j->zthr && ev[u].mag <= j->zthr))) /* a multiple zero */
            defined = 0;
    *defined_ = defined;
    return den;
}

/* The estimated absolute error of eigenvalue s (mbl_sens_mode.error_estimate): its condition on the
 * pencil, sum_k |s|^k ||P_k||_F ||w|| ||v|| / |w^H P'(s) v| (Tisseur 2000, Theorem 5, the
 * Frobenius norms for the 2-norms: an overestimate within sqrt(N)), times the larger of its
 * backward error and MODE_ROUND (the rounding of the pencil's own entries). */
#define MODE_ROUND (8 * DBL_EPSILON)
static double mode_error(const job *j, double complex s, const double complex *v, const double complex *wl,
                         double complex den, double berr)
{
    double vn = 0, wn = 0, as = cabs(s);
    for (int i = 0; i < j->N; i++) vn += creal(v[i] * conj(v[i])), wn += creal(wl[i] * conj(wl[i]));
    double a = as * as * j->pnrm[2] + as * j->pnrm[1] + j->pnrm[0];
    double e = a * sqrt(vn * wn) / cabs(den) * fmax(berr, MODE_ROUND);
    return isfinite(e) ? e : INFINITY;
}

/* Mode t's shape derivative along parameter w from the bordered system (factored in lu; the
 * right-hand side -dP(s) v in tmp2), into S->dshape_re/im: in the user states d(y / y_k) with
 * y = T0 v. */
static int mode_dshape(job *j, int t, int w, mbla_klu *lu, const double complex *v, const double complex *tmp2,
                       int ky, double complex yk, double complex s, double complex ds, mbl_status *st)
{
    mbl_sensitivity *S = j->S;
    const spen *sp = &j->sp;
    int n = j->c.L.n, N = j->N, nev = j->nev;
    const double complex *y = j->ybuf;
    double *b = j->rhs;
    for (int i = 0; i < N; i++) b[2 * i] = -creal(tmp2[i]), b[2 * i + 1] = -cimag(tmp2[i]);
    b[2 * N] = b[2 * N + 1] = 0;
    int rc = mbla_kluz_solve(lu, 'N', 1, b, N + 1, st);
    if (rc) return rc;
    if (j->smode || j->ndefl) { /* d(y / y_k) with y = T0 u: dy = dT0 u + T0 du (y = u without user states) */
        double complex *dy = j->ybuf + n, *u = j->ybuf + 2 * n, *du = j->ybuf + 3 * n;
        for (int i = 0; i < j->nshape; i++) { /* u_i = v_i / s^d: du_i = dv_i / s^d - d v_i ds / s^(d + 1) */
            int d = s != 0 ? j->defl[i] : 0;
            double complex dv = b[2 * i] + I * b[2 * i + 1], sd = d == 0 ? 1 : d == 1 ? s : s * s;
            du[i] = dv / sd - (d ? d * v[i] * ds / (sd * s) : 0);
        }
        const double *dT = j->smode ? sp->dT0 + (size_t)n * sp->ns * w : NULL;
        for (int i = 0; i < n; i++) {
            dy[i] = j->smode ? 0 : du[i];
            for (int jj = 0; j->smode && jj < sp->ns; jj++)
                dy[i] += dT[i + (size_t)jj * n] * u[jj] + sp->T0[i + (size_t)jj * n] * du[jj];
        }
        for (int i = 0; i < n; i++) {
            double complex ds2 = (dy[i] - y[i] / yk * dy[ky]) / yk;
            S->dshape_re[i + (size_t)n * (t + (size_t)nev * w)] = creal(ds2) + 0.0;
            S->dshape_im[i + (size_t)n * (t + (size_t)nev * w)] = cimag(ds2) + 0.0;
        }
    } else {
        for (int i = 0; i < n; i++) {
            S->dshape_re[i + (size_t)n * (t + (size_t)nev * w)] = b[2 * i] + 0.0;
            S->dshape_im[i + (size_t)n * (t + (size_t)nev * w)] = b[2 * i + 1] + 0.0;
        }
    }
    return 0;
}

/* Mode t's derivatives along every parameter: ds = -w^H dP(s) v / den, the frequency's and the
 * damping ratio's from it, and with shapes the shape's (the bordered system [P(s) P'(s) v;
 * e_kk^T 0], factored once per mode). NaN where the mode or the point has none. */
static int mode_derivatives(job *j, int t, double complex s, const double complex *v, const double complex *wl,
                            double complex *tmp2, double complex den, int defined, int kk, int ky, double complex yk,
                            mbl_status *st)
{
    mbl_sensitivity *S = j->S;
    mbl_sens_mode *md = &S->modes[t];
    int n = j->c.L.n, N = j->N, nev = j->nev, nwrt = j->nwrt, rc = 0;
    size_t NN = j->NN;
    const double *P0 = j->P0, *P1 = j->P1, *P2 = j->P2, *dP = j->dP;
    double smag = cabs(s);
    mbla_csc *B = NULL;
    double *bz = NULL;
    mbla_klu *lu = NULL;
    if (defined && j->opt.shapes && nwrt) {
        for (int i = 0; i < N; i++) { /* P'(s) v */
            tmp2[i] = 0;
        }
        for (int jj = 0; jj < N; jj++)
            for (int i = 0; i < N; i++) tmp2[i] += (2 * s * P2[i + (size_t)jj * N] + P1[i + (size_t)jj * N]) * v[jj];
        rc = study_sens_bordered(N, P0, P1, P2, s, tmp2, kk, &B, &bz, st);
        if (!rc) rc = mbla_kluz_new(B, bz, NULL, &lu, st);
    }
    for (int w = 0; !rc && w < nwrt; w++) {
        const double *D0 = dP + 3 * NN * w, *D1 = D0 + NN, *D2 = D1 + NN;
        if (!defined || !S->point_defined[w]) {
            md->dre[w] = md->dim[w] = md->dfreq_hz[w] = md->ddamping[w] = NAN;
            if (S->dshape_re)
                for (int i = 0; i < n; i++)
                    S->dshape_re[i + (size_t)n * (t + (size_t)nev * w)] = S->dshape_im[i + (size_t)n * (t + (size_t)nev * w)] = NAN;
            continue;
        }
        study_sens_pencil_apply(N, D0, D1, D2, s, v, tmp2);
        double complex num = 0;
        for (int i = 0; i < N; i++) num += conj(wl[i]) * tmp2[i];
        double complex ds = -num / den;
        double dre = creal(ds), dim = cimag(ds), mag = smag;
        md->dre[w] = dre + 0.0;
        md->dim[w] = dim + 0.0;
        if (mag > 0) {
            double dmag = (md->re * dre + md->im * dim) / mag;
            md->dfreq_hz[w] = dmag / TWO_PI + 0.0;
            md->ddamping[w] = -(dre * mag - md->re * dmag) / (mag * mag) + 0.0;
        } else {
            md->dfreq_hz[w] = md->ddamping[w] = NAN;
        }
        if (lu) rc = mode_dshape(j, t, w, lu, v, tmp2, ky, yk, s, ds, st);
    }
    mbla_klu_free(lu);
    mbla_csc_free(B);
    mbl_free(bz);
    return rc;
}

/* Every mode: its eigenvalue and kind, eigentriple, shape and derivatives (into S). */
static int job_modes(job *j, mbl_status *st)
{
    mbl_sensitivity *S = j->S;
    const mbl_eig_item *ev = j->ev;
    int n = j->c.L.n, N = j->N, nev = j->nev, nwrt = j->nwrt, rc = 0;
    j->nshape = j->smode ? j->sp.ns : n; /* the pencil's leading entries that are the displacement */
    S->nmode = nev;
    if (NEW(S->modes, nev) || NEW(S->shape_re, (size_t)n * nev) || NEW(S->shape_im, (size_t)n * nev))
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    memset(S->modes, 0, (size_t)nev * sizeof *S->modes);
    if (j->opt.shapes && (NEW(S->dshape_re, (size_t)n * nev * nwrt) || NEW(S->dshape_im, (size_t)n * nev * nwrt)))
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    double complex *v = j->vbuf, *wl = j->vbuf + N, *tmp = j->vbuf + 2 * N, *tmp2 = j->vbuf + 4 * N;
    /* Frobenius norms of P0, P1, P2 (backward errors) */
    j->pnrm[0] = mbla_norm_fro(N, N, j->P0, N), j->pnrm[1] = mbla_norm_fro(N, N, j->P1, N);
    j->pnrm[2] = mbla_norm_fro(N, N, j->P2, N);
    if (j->opt.shapes && NEW(j->rhs, 2 * (size_t)(N + 1) * (nwrt ? nwrt : 1)))
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    j->nundef = 0;
    /* zero: below zero_tol of the largest, and never below the rounding split of a defective
     * double zero (a rigid-body or cyclic coordinate), 10 sqrt(eps) of the spectral radius, as
     * mbl_modal's quadratic-qz (both listings must agree on which modes are zero); the pencil in the
     * user states has no rounding noise where it is exactly zero (study_sens_spen_build) */
    j->zthr = fmax(j->opt.zero_tol, 10 * sqrt(DBL_EPSILON)) * j->magmax;
    for (int t = 0; t < nev; t++) {
        mbl_sens_mode *md = &S->modes[t];
        double complex s = ev[t].re + I * ev[t].im;
        md->re = ev[t].re + 0.0;
        md->im = ev[t].im + 0.0;
        md->freq_hz = ev[t].mag / TWO_PI;
        md->damping_ratio = ev[t].mag > 0 ? -md->re / ev[t].mag + 0.0 : 0.0;
        md->kind = ev[t].mag <= j->zthr ? MBL_MODE_ZERO : md->im == 0 ? MBL_MODE_REAL : MBL_MODE_OSCILLATORY;
        if (NEW(md->dre, nwrt) || NEW(md->dim, nwrt) || NEW(md->dfreq_hz, nwrt) || NEW(md->ddamping, nwrt))
            return mbl_error(st, MBL_ENOMEM, "out of memory");
        int refined = 0, kk = 0, ky = 0, defined = 0;
        double big = 0;
        double complex yk = 1;
        rc = mode_triple(j, t, &s, v, wl, tmp, tmp2, &refined, st);
        if (rc) return rc;
        mode_shape(j, t, s, v, &kk, &big, &yk, &ky);
        double complex den = mode_denominator(j, t, s, v, wl, tmp, refined, big, &defined);
        if (ev[t].idx >= 0) md->error_estimate = mode_error(j, s, v, wl, den, md->backward_error);
        md->defined = defined;
        if (!defined) j->nundef++;
        rc = mode_derivatives(j, t, s, v, wl, tmp2, den, defined, kk, ky, yk, st);
        if (rc) return rc;
    }
    return 0;
}

/* The listing order of mbl_modal (modal_order, the same rule): the modes of a repeated eigenvalue
 * together, with the canonical basis of their shapes; a mode of a repeated eigenvalue has no
 * derivatives (repeat_tol may be set below MODAL_REPEAT_TOL: the shapes that were differentiated
 * are replaced). */
static int job_order(job *j, mbl_status *st)
{
    mbl_sensitivity *S = j->S;
    int nm = S->nmode, n = S->n, nwrt = j->nwrt, rc = 0;
    size_t nn = (size_t)n * nm;
    modal_item *it = NULL;
    int *mult = NULL;
    mbl_sens_mode *md = NULL;
    double *buf = NULL;
    if (NEW(it, nm) || NEW(mult, nm) || NEW(md, nm) || NEW(buf, nn)) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    for (int t = 0; t < nm; t++) {
        const mbl_sens_mode *m = &S->modes[t];
        it[t] = (modal_item){hypot(m->re, m->im), m->re, m->im, m->kind == MBL_MODE_ZERO, 0, t};
    }
    if ((rc = modal_order(nm, it, n, S->shape_re, S->shape_im, mult, st))) goto done;
    for (int k = 0; k < nm; k++) md[k] = S->modes[it[k].idx];
    memcpy(S->modes, md, (size_t)nm * sizeof *md);
    double *arr[2] = {S->shape_re, S->shape_im}, *darr[2] = {S->dshape_re, S->dshape_im};
    for (int a = 0; a < 2; a++) {
        for (int k = 0; k < nm; k++) memcpy(buf + (size_t)k * n, arr[a] + (size_t)it[k].idx * n, (size_t)n * sizeof *buf);
        memcpy(arr[a], buf, nn * sizeof *buf);
        for (int w = 0; darr[a] && w < nwrt; w++) {
            double *D = darr[a] + nn * w;
            for (int k = 0; k < nm; k++) memcpy(buf + (size_t)k * n, D + (size_t)it[k].idx * n, (size_t)n * sizeof *buf);
            memcpy(D, buf, nn * sizeof *buf);
        }
    }
    for (int k = 0; k < nm; k++) {
        mbl_sens_mode *m = &S->modes[k];
        if (mult[k] < 2 || !m->defined) continue;
        m->defined = 0;
        j->nundef++;
        for (int w = 0; w < nwrt; w++) {
            m->dre[w] = m->dim[w] = m->dfreq_hz[w] = m->ddamping[w] = NAN;
            for (int i = 0; S->dshape_re && i < n; i++)
                S->dshape_re[i + (size_t)n * (k + (size_t)nm * w)] = S->dshape_im[i + (size_t)n * (k + (size_t)nm * w)] = NAN;
        }
    }
done:
    mbl_free(it), mbl_free(mult), mbl_free(md), mbl_free(buf);
    return rc;
}

/* The notes: modes without derivatives, a point that does not persist, dropped constraints. */
static void job_notes(job *j)
{
    mbl_sensitivity *S = j->S;
    const ctx *c = &j->c;
    const mbl_dae_layout *L = &c->L;
    int n = L->n, nwrt = j->nwrt, nundef = j->nundef;
    if (nundef)
        snprintf(S->notes, sizeof S->notes,
                 "%d zero or repeated eigenvalue(s): their derivatives are not defined one by one (null in the JSON)", nundef);
    for (int w = 0; w < nwrt; w++)
        if (!S->point_defined[w]) {
            /* the point does not persist: no derivative of it either */
            for (int i = 0; i < n; i++) S->dq[i + (size_t)w * n] = S->dv[i + (size_t)w * n] = NAN;
            for (int i = 0; i < L->m; i++) S->dlambda[i + (size_t)w * L->m] = NAN;
            size_t l = strlen(S->notes);
            snprintf(S->notes + l, sizeof S->notes - l, "%sthe operating point does not persist when parameter %d changes (a "
                     "singular configuration it moves): no derivatives", l ? "; " : "", S->wrt[w] + 1);
        }
    if (c->mi < L->m || c->ki < L->k)
        snprintf(S->notes + strlen(S->notes), sizeof S->notes - strlen(S->notes), "%s%d dependent constraint(s) dropped",
                 S->notes[0] ? "; " : "", L->m + L->k - c->mi - c->ki);
}

static int sensitivity_compute(const mbl_dae_deriv *d, const mbl_point *pt, const int *wrt_in, int nwrt,
                               const mbl_sens_options *opt_in, mbl_sensitivity **out, mbl_status *st);

/* Parameters a mechanism evaluated into numbers of its geometry (mbl_model_param_numeric) have no
 * derivative in the equations: asked for by name they are refused, and with all parameters asked
 * for they are left out, with a note naming them. */
static int sensitivity_by_param(const mbl_dae_deriv *d, const mbl_point *pt, const int *wrt_in, int nwrt,
                                const mbl_sens_options *opt_in, mbl_sensitivity **out, mbl_status *st);

/* A model with user routines: its second derivatives through them are central differences of their
 * partials (docs/user-routines.md, "Exactness"): the result says it is not exact. */
int mbl_sensitivity_compute(const mbl_dae_deriv *d, const mbl_point *pt, const int *wrt_in, int nwrt,
                            const mbl_sens_options *opt_in, mbl_sensitivity **out, mbl_status *st)
{
    int rc = sensitivity_by_param(d, pt, wrt_in, nwrt, opt_in, out, st);
    if (rc || !out || !*out) return rc;
    mbl_sensitivity *S = *out;
    S->exact = 1;
    model_view view;
    model_view_get(mbl_dae_deriv_model(d), &view);
    mblx_user_def ud;
    if (!mblx_user_count(view.g) || mblx_user_info(view.g, 0, &ud)) return 0;
    S->exact = 0;
    size_t l = strlen(S->notes);
    snprintf(S->notes + l, sizeof S->notes - l,
             "%snot exact: the second derivatives through user routine%s '%s'%s are central differences of their partials",
             l ? "; " : "", mblx_user_count(view.g) > 1 ? "s" : "", ud.name, mblx_user_count(view.g) > 1 ? " and others" : "");
    return 0;
}

static int sensitivity_by_param(const mbl_dae_deriv *d, const mbl_point *pt, const int *wrt_in, int nwrt,
                                const mbl_sens_options *opt_in, mbl_sensitivity **out, mbl_status *st)
{
    const mbl_model *md = d ? mbl_dae_deriv_model(d) : NULL;
    mbl_model_info mi;
    memset(&mi, 0, sizeof mi);
    if (md) mbl_model_get_info(md, &mi);
    int np = mi.nparam, nnum = 0;
    for (int p = 0; p < np; p++) nnum += mbl_model_param_numeric(md, p) == 1;
    if (!nnum) return sensitivity_compute(d, pt, wrt_in, nwrt, opt_in, out, st);
    static const char why[] = "a number of the mechanism's geometry (an orientation), evaluated when the file is "
                              "loaded, so the equations have no derivative by it";
    if (wrt_in) {
        for (int w = 0; w < nwrt; w++)
            if (wrt_in[w] >= 0 && wrt_in[w] < np && mbl_model_param_numeric(md, wrt_in[w]) == 1) {
                if (out) *out = NULL;
                return mbl_error(st, MBL_EMODEL, "sensitivity by parameter '%s': it is %s (mblin sweep and boundary "
                                 "over it reload the file)", mbl_model_param_name(md, wrt_in[w]), why);
            }
        return sensitivity_compute(d, pt, wrt_in, nwrt, opt_in, out, st);
    }
    int *wrt = mbl_alloc_array((size_t)np, sizeof *wrt), nw = 0;
    if (!wrt) return mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int p = 0; p < np; p++)
        if (mbl_model_param_numeric(md, p) != 1) wrt[nw++] = p;
    int rc = sensitivity_compute(d, pt, wrt, nw, opt_in, out, st);
    mbl_free(wrt);
    if (!rc && *out) {
        mbl_sensitivity *S = *out;
        size_t l = strlen(S->notes);
        l += (size_t)snprintf(S->notes + l, sizeof S->notes - l, "%sleft out:", l ? "; " : "");
        for (int p = 0, k = 0; p < np && l < sizeof S->notes; p++)
            if (mbl_model_param_numeric(md, p) == 1)
                l += (size_t)snprintf(S->notes + l, sizeof S->notes - l, "%s %s", k++ ? "," : "", mbl_model_param_name(md, p));
        if (l < sizeof S->notes) snprintf(S->notes + l, sizeof S->notes - l, " (%s)", why);
    }
    return rc;
}

static int sensitivity_compute(const mbl_dae_deriv *d, const mbl_point *pt, const int *wrt_in, int nwrt,
                               const mbl_sens_options *opt_in, mbl_sensitivity **out, mbl_status *st)
{
    if (!out) return mbl_error(st, MBL_EARG, "mbl_sensitivity_compute: out is NULL");
    *out = NULL;
    if (!d || !pt) return mbl_error(st, MBL_EARG, "mbl_sensitivity_compute: NULL model derivatives or point");
    job j;
    memset(&j, 0, sizeof j);
    j.d = d, j.pt = pt;
    if (opt_in) j.opt = *opt_in;
    else mbl_sens_options_default(&j.opt);
    mbl_dae_deriv_layout(d, &j.c.L);
    j.c.pt = pt;
    j.c.rank_tol = j.opt.rank_tol > 0 ? j.opt.rank_tol : 1e-9;
    const mbl_dae_layout *L = &j.c.L;
    int n = L->n, np = L->np, nF = L->nF, nunk = L->nunk, rc = 0;
    if (!wrt_in) nwrt = np;
    if (nwrt < 0) return mbl_error(st, MBL_EARG, "mbl_sensitivity_compute: negative parameter count");
    for (int w = 0; wrt_in && w < nwrt; w++)
        if (wrt_in[w] < 0 || wrt_in[w] >= np) return mbl_error(st, MBL_EARG, "mbl_sensitivity_compute: no parameter %d", wrt_in[w]);
    /* above dense_max the eigenvalues come from the linear model (mbl_linearize, mbl_modal) and
     * the eigenvectors from inverse iteration on the sparse pencil; the pencil's coefficients and
     * their derivatives are still held dense: (3 + 3 nwrt) N^2 doubles */
    j.large = n + L->m + L->k > j.opt.dense_max;
    j.nwrt = nwrt;
    double Nd = (double)(n + L->m + L->k);
    if (Nd * Nd * (3.0 + 3.0 * nwrt) * 8.0 + (double)nF * nunk * 8.0 > 2147483648.0)
        return mbl_error(st, MBL_ENOMEM,
                         "sensitivities: the pencil has order %d (n + m + k): its derivatives with respect to %d "
                         "parameters would take %.3g GB (above 2 GB): ask for fewer parameters (--wrt)",
                         n + L->m + L->k, nwrt, (Nd * Nd * (3.0 + 3.0 * nwrt) * 8.0 + (double)nF * nunk * 8.0) / 1e9);
    j.S = mbl_calloc(1, sizeof *j.S);
    if (!j.S) return mbl_error(st, MBL_ENOMEM, "out of memory");
    /* at a regular configuration the refusal of a linearization in the user's states (states that
     * stop describing the motion: lin_check_states, issue 30 item 1) holds here too, since the pencil
     * below would give numbers; at a singular configuration (rank of [Phi_q; A_nh] below m + k) the
     * pencil is the answer, as descriptor's */
    if (!j.large && pt->rank_phi_q >= pt->m + pt->k) {
        mbl_linear *lin = NULL;
        mbl_status st2;
        mbl_status_clear(&st2);
        rc = mbl_linearize(mbl_dae_deriv_model(d), pt, NULL, &lin, &st2);
        mbl_linear_free(lin);
        if (rc == MBL_ESINGULAR) {
            mbl_sensitivity_free(j.S);
            if (st) *st = st2;
            return rc;
        }
        rc = 0;
    }
    rc = job_point(&j, wrt_in, st);
    if (!rc) rc = job_pencil(&j, st);
    while (!rc) { /* once more in the user states where the pencil changes along the motion */
        int again = 0;
        rc = job_eigen(&j, st);
        if (!rc && !j.smode) rc = job_steady(&j, &again, st);
        if (!again) break;
    }
    if (!rc) rc = job_modes(&j, st);
    if (!rc) rc = job_order(&j, st);
    if (!rc) job_notes(&j);
    job_free(&j);
    if (rc) {
        mbl_sensitivity_free(j.S);
        return rc;
    }
    *out = j.S;
    return 0;
}
