/* The accelerations, multipliers, X' and Z of a state (q, v, X) on the constraints: Newton on the
 * acceleration-level equations [R; d; zeq; Phi''; c'] = 0 in (v', lambda, mu, X', Z) with the
 * inputs at t, the model's exact sparse Jacobian and KLU (linear in them for the usual models: one
 * step). The simulation's consistent start (sim.c) and every right-hand side of the coordinate
 * partitioning (ssode.c) solve it. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mblin/la.h"
#include "sim_internal.h"

int sim_accel_new(const sim *s, sim_accel *a, mbl_status *st)
{
    memset(a, 0, sizeof *a);
    const mbl_dae_layout *L = &s->L;
    int nu = s->n + s->m + s->k + s->nX + s->nZ, rc = 0;
    a->nu = nu;
    static const int rgroups[] = {MBL_DAE_EOM, MBL_DAE_ODE, MBL_DAE_VAR, MBL_DAE_PHIDD, MBL_DAE_NHD};
    int *rpos = mbl_alloc_array((size_t)L->nF + 1, sizeof *rpos), *cpos = mbl_alloc_array((size_t)L->nunk + 1, sizeof *cpos);
    int *ti = mbl_alloc_array((size_t)L->jnz + 1, sizeof *ti), *tj = mbl_alloc_array((size_t)L->jnz + 1, sizeof *tj);
    a->src = mbl_alloc_array((size_t)L->jnz + 1, sizeof *a->src);
    a->map = mbl_alloc_array((size_t)L->jnz + 1, sizeof *a->map);
    a->tx = mbl_alloc_array((size_t)L->jnz + 1, sizeof *a->tx);
    a->b = mbl_alloc_array((size_t)nu + 1, sizeof *a->b);
    a->rows = mbl_alloc_array((size_t)nu + 1, sizeof *a->rows);
    a->dst = mbl_alloc_array((size_t)nu + 1, sizeof *a->dst);
    if (!rpos || !cpos || !ti || !tj || !a->src || !a->map || !a->tx || !a->b || !a->rows || !a->dst) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    for (int r = 0; r < L->nF; r++) rpos[r] = -1;
    for (int c = 0; c < L->nunk; c++) cpos[c] = -1;
    int nr = 0, nc = 0;
    for (size_t gi = 0; gi < sizeof rgroups / sizeof rgroups[0]; gi++)
        for (int r = L->row0[rgroups[gi]]; r < L->row0[rgroups[gi] + 1]; r++) a->rows[nr] = r, rpos[r] = nr++;
    /* where each unknown lives: y (lambda, mu, Z) or y' (v', X'), offset + N for y' */
    static const int cblocks[] = {MBL_DAE_VDOT, MBL_DAE_LAMBDA, MBL_DAE_MU, MBL_DAE_XDOT, MBL_DAE_Z};
    for (size_t bi = 0; bi < sizeof cblocks / sizeof cblocks[0]; bi++) {
        int blk = cblocks[bi];
        int off = blk == MBL_DAE_VDOT ? s->N + s->ov : blk == MBL_DAE_LAMBDA ? s->ol : blk == MBL_DAE_MU ? s->omu
                : blk == MBL_DAE_XDOT ? s->N + s->oX : s->oZ;
        for (int c = L->col0[blk]; c < L->col0[blk + 1]; c++) a->dst[nc] = off + c - L->col0[blk], cpos[c] = nc++;
    }
    if (nr != nu || nc != nu) {
        rc = mbl_error(st, MBL_EDIM, "the start's accelerations: %d equations for %d unknowns", nr, nc);
        goto done;
    }
    int nz = 0;
    for (int p = 0; p < L->jnz; p++)
        if (rpos[L->jrow[p]] >= 0 && cpos[L->jcol[p]] >= 0) ti[nz] = rpos[L->jrow[p]], tj[nz] = cpos[L->jcol[p]], a->src[nz++] = p;
    a->nz = nz;
    rc = mbla_csc_from_triplets(nu, nu, nz, ti, tj, NULL, a->map, &a->A, st);
done:
    mbl_free(rpos), mbl_free(cpos), mbl_free(ti), mbl_free(tj);
    return rc;
}

void sim_accel_free(sim_accel *a)
{
    mbla_klu_free(a->lu);
    mbla_csc_free(a->A);
    mbl_free(a->src), mbl_free(a->map), mbl_free(a->tx), mbl_free(a->b), mbl_free(a->rows), mbl_free(a->dst);
    memset(a, 0, sizeof *a);
}

/* the Jacobian's entries of the system (s->J) factored */
static int accel_factor(sim_accel *a, const sim *s, mbl_status *st)
{
    for (int p = 0; p < a->nz; p++) a->tx[p] = s->J[a->src[p]];
    mbla_csc_refill(a->A, a->nz, a->map, a->tx);
    return a->lu ? mbla_klu_refactor(a->lu, a->A, st) : mbla_klu_new(a->A, NULL, &a->lu, st);
}

/* " (input 'F' = 1e+300)": the input of largest magnitude at the last sim_make_x (s->x), or "" */
static void largest_input(const sim *s, char *buf, size_t len)
{
    const double *r = s->x + s->L.col0[MBL_DAE_R];
    int best = -1;
    for (int j = 0; j < s->nr; j++)
        if (best < 0 || !isfinite(r[j]) || fabs(r[j]) > fabs(r[best])) best = j;
    if (best >= 0 && r[best] != 0)
        snprintf(buf, len, " (input '%s' = %g)", mbl_model_input_name(s->md, best), r[best]);
    else if (len)
        buf[0] = '\0';
}

int sim_accel_solve(sim *s, sim_accel *a, double t, double *y, double *yp, int given_jacobian, mbl_status *st)
{
    int nu = a->nu, rc = 0, converged = 0;
    double *b = a->b, dprev = INFINITY;
    for (int it = 0; !rc && it < SIM_ACCEL_MAX_ITER; it++) {
        rc = sim_make_x(s, t, y, yp, st);
        if (!rc) rc = mbl_dae_eval_residual(s->ev, t, s->x, s->F, st);
        if (rc) break;
        double fnorm = 0;
        for (int i = 0; i < nu; i++) b[i] = -s->F[a->rows[i]], fnorm = fnorm > fabs(b[i]) ? fnorm : fabs(b[i]);
        if (it > 0 && fnorm <= 1e-14) {
            converged = 1;
            break;
        }
        if (!given_jacobian) rc = mbl_dae_eval_jacobian(s->ev, t, s->x, s->J, st);
        if (!rc && (!given_jacobian || it == 0)) rc = accel_factor(a, s, st);
        if (!rc) rc = mbla_klu_solve(a->lu, 1, b, nu, st);
        if (rc) {
            if (given_jacobian) mbl_error_prefix(st, "the accelerations and multipliers at t = %.10g (redundant constraints?)", t);
            else mbl_error_prefix(st, "the start's accelerations and multipliers (redundant constraints?)");
            break;
        }
        double dmax = 0, xmax = 0;
        for (int i = 0; i < nu; i++) {
            int d = a->dst[i];
            double *dst = d >= s->N ? yp + (d - s->N) : y + d;
            *dst += b[i];
            dmax = fmax(dmax, fabs(b[i]));
            xmax = fmax(xmax, fabs(*dst));
        }
        if (dmax <= 1e-15 * (1 + xmax) ||
            (given_jacobian && dmax > 0.5 * dprev && dmax <= SIM_ACCEL_ROUND * (1 + xmax))) {
            converged = 1; /* (the second: corrections no longer shrinking, at the system's rounding) */
            break;
        }
        dprev = dmax;
    }
    if (!rc && given_jacobian && !converged)
        rc = mbl_error(st, MBL_ENOCONV, "the accelerations at t = %.10g: no convergence in %d iterations", t,
                       SIM_ACCEL_MAX_ITER);
    return rc;
}

int sim_consistent_start(sim *s, double t0, double *y, double *yp, mbl_status *st)
{
    sim_accel a;
    int rc = sim_accel_new(s, &a, st);
    if (!rc) rc = sim_accel_solve(s, &a, t0, y, yp, 0, st);
    sim_accel_free(&a);
    return rc;
}

int sim_start_in_range(sim *s, double t0, const double *y, const double *yp, double rtol, double atol, mbl_status *st)
{
    double ssq = 0, worst = -1;
    int iw = 0;
    for (int i = 0; i < s->ol; i++) { /* the differential variables q, v, X: IDA's error weights */
        double u = yp[i] / (rtol * fabs(y[i]) + atol);
        ssq += u * u;
        double size = isfinite(y[i]) && isfinite(u) ? fabs(u) : INFINITY;
        if (size > worst) worst = size, iw = i;
    }
    if (isfinite(ssq)) return 0;
    char in[320], var[300];
    largest_input(s, in, sizeof in);
    int j = iw < s->ov ? iw - s->oq : iw < s->oX ? iw - s->ov : iw - s->oX;
    const char *name = iw < s->oX ? mbl_model_coord_name(s->md, j) : mbl_model_ode_state_name(s->md, j);
    snprintf(var, sizeof var, iw >= s->ov && iw < s->oX ? "der(der(%.120s))" : "der(%.120s)", name);
    return mbl_error(st, MBL_EDOMAIN,
                     "the start at t = %g: %s = %g%s is not finite in the integrator's error norm (the sum of the "
                     "squares of y' / (rtol |y| + atol) overflows)", t0, var, yp[iw], in);
}
