/* The first-order optimality check of the final design (docs/optimize.md, "Is it an optimum?"):
 * an optimizer may stop where the step or the objective's change fell below its tolerance
 * without being at a local optimum (seen: MMA on a band constraint from a start at the
 * objective's own minimum). At a local optimum the objective's gradient is a non-negative
 * combination of the gradients of the active constraints and bounds (Karush-Kuhn-Tucker):
 *
 *     min || grad f + sum_i lambda_i grad g_i ||,  lambda >= 0,  i active,
 *
 * solved by Lawson and Hanson's non-negative least squares (Solving Least Squares Problems,
 * 1974, ch. 23), its residual relative to the larger of ||grad f|| there and at the start (at an
 * unconstrained optimum grad f itself is rounding). mbl_optimize refuses a final design whose
 * residual exceeds kkt_tol. */
#include <complex.h>
#include <math.h>
#include <string.h>

#include "mblin/la.h"
#include "opt/opt_internal.h"

/* x = argmin ||A x - b||, x >= 0 (A: n x m column-major). work: (n * m + n + 3 m) doubles, iwork m. */
static int nnls(int n, int m, const double *A, const double *b, double *x, double *work, int *passive, mbl_status *st)
{
    double *w = work, *z = w + m, *r = z + m, *As = r + n, *bz = As + (size_t)n * m;
    int rc = 0;
    memset(x, 0, (size_t)m * sizeof *x);
    memset(passive, 0, (size_t)m * sizeof *passive);
    for (int outer = 0; outer < 3 * m + 3 && !rc; outer++) {
        for (int i = 0; i < n; i++) {
            r[i] = b[i];
            for (int j = 0; j < m; j++) r[i] -= A[i + (size_t)j * n] * x[j];
        }
        int t = -1;
        double big = 1e-14;
        for (int j = 0; j < m; j++) {
            w[j] = 0;
            for (int i = 0; i < n; i++) w[j] += A[i + (size_t)j * n] * r[i];
            if (!passive[j] && w[j] > big) big = w[j], t = j;
        }
        if (t < 0) break; /* optimal */
        passive[t] = 1;
        for (int inner = 0; inner < 3 * m + 3; inner++) {
            int np = 0, cols[256];
            for (int j = 0; j < m && np < 256; j++)
                if (passive[j]) {
                    cols[np] = j;
                    memcpy(As + (size_t)np * n, A + (size_t)j * n, (size_t)n * sizeof *A);
                    np++;
                }
            int ld = n > np ? n : np;
            memset(bz, 0, (size_t)ld * sizeof *bz);
            memcpy(bz, b, (size_t)n * sizeof *b);
            if ((rc = mbla_lstsq(n, np, 1, As, n, bz, ld, -1.0, NULL, st))) break;
            memset(z, 0, (size_t)m * sizeof *z);
            int allpos = 1;
            for (int k = 0; k < np; k++) z[cols[k]] = bz[k], allpos &= bz[k] > 0;
            if (allpos) {
                memcpy(x, z, (size_t)m * sizeof *x);
                break;
            }
            double alpha = 1;
            for (int j = 0; j < m; j++)
                if (passive[j] && z[j] <= 0 && x[j] - z[j] > 0) alpha = fmin(alpha, x[j] / (x[j] - z[j]));
            for (int j = 0; j < m; j++) {
                x[j] += alpha * (z[j] - x[j]);
                if (passive[j] && x[j] <= 1e-300) passive[j] = 0, x[j] = 0;
            }
        }
    }
    return rc;
}

int opt_kkt_core(const opt_ctx *c, double act_tol, const char *skip, const double *extra, int nextra, double *res,
                 double *resid, mbl_status *st)
{
    int nx = c->nx, m = 0, rc = 0;
    double gn = 0;
    for (int j = 0; j < nx; j++) gn += c->fgrad[j] * c->fgrad[j];
    gn = sqrt(gn);
    *res = 0;
    if (!(gn > 0)) return 0; /* a stationary objective: optimal whatever is active */
    double scale = fmax(gn, c->g0);
    int mmax = c->ncon + nx + nextra;
    if (mmax > 256) mmax = 256; /* at most 256 active directions are combined */
    double *A = mbl_alloc_array((size_t)nx * mmax + 1, sizeof *A);
    double *work = mbl_alloc_array((size_t)nx * mmax + nx + 3 * (size_t)mmax + (size_t)(nx > mmax ? nx : mmax) + 1,
                                   sizeof *work);
    double *b = mbl_alloc_array((size_t)nx + (size_t)mmax + 1, sizeof *b), *lam = b + nx;
    int *passive = mbl_alloc_array((size_t)mmax + 1, sizeof *passive);
    if (!A || !work || !b || !passive) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    for (int k = 0; k < nextra && m < mmax; k++, m++)
        memcpy(A + (size_t)m * nx, extra + (size_t)k * nx, (size_t)nx * sizeof *A);
    for (int k = 0; k < c->ncon && m < mmax; k++)
        if (c->cval[k] >= -act_tol && !(skip && skip[k])) {
            for (int j = 0; j < nx; j++) A[j + (size_t)m * nx] = c->cgrad[(size_t)k * nx + j];
            m++;
        }
    for (int j = 0; j < nx && m < mmax; j++) {
        double lo = 0, hi = 1;
        if (j >= c->np) opt_t_bounds(c, &lo, &hi);
        int side = c->x[j] <= lo + act_tol ? -1 : c->x[j] >= hi - act_tol ? 1 : 0;
        if (!side) continue;
        memset(A + (size_t)m * nx, 0, (size_t)nx * sizeof *A);
        A[j + (size_t)m * nx] = side; /* lo - x <= 0: -e_j; x - hi <= 0: +e_j */
        m++;
    }
    for (int j = 0; j < nx; j++) b[j] = -c->fgrad[j];
    if (m && (rc = nnls(nx, m, A, b, lam, work, passive, st))) goto done;
    double r2 = 0;
    for (int j = 0; j < nx; j++) {
        double v = -b[j];
        for (int k = 0; k < m; k++) v += A[j + (size_t)k * nx] * lam[k];
        r2 += v * v;
        if (resid) resid[j] = v;
    }
    *res = sqrt(r2) / scale;
done:
    mbl_free(A);
    mbl_free(work);
    mbl_free(b);
    mbl_free(passive);
    return rc;
}

int opt_kkt_residual(const opt_ctx *c, double act_tol, double *res, mbl_status *st)
{
    return opt_kkt_core(c, act_tol, NULL, NULL, 0, res, NULL, st);
}

/* Two modes of the active least-damping or largest-real-part rows (the bound formulation's) that
 * nearly coincide: the max-min optimum at a double eigenvalue (a tuned mass damper's equal-damping
 * optimum, and its least spectral abscissa), where the damping ratios and real parts are not
 * differentiable and the first-order condition does not apply. *i, *j: the modes (1-based). */
int opt_coalesced(const opt_ctx *c, int *i, int *j)
{
    return opt_coalesced_within(c, 1, i, j);
}

int opt_coalesced_within(const opt_ctx *c, double widen, int *i, int *j)
{
    if (c->bound != 1 && c->bound != 3) return 0;
    /* the largest real part's pair is put onto its coalescence by Newton steps on an analytic
     * function (opt_polish) and checked along its valley (opt_valley.c): it is looked for further
     * off, since a pair leaves a double root like the square root of the parameters' distance (an
     * oscillator's damping 1e-4 of critical parts its roots by 2 % of their size) */
    double rel = widen * (c->bound == 3 ? OPT_COALESCE_REL_REAL : OPT_COALESCE_REL);
    int r0 = c->ncon - c->nmode;
    for (int a = 0; a < c->nmode; a++)
        for (int b = 0; b < c->nmode; b++) {
            const mbl_sens_mode *ma = &c->S->modes[c->branch[a]], *mb = &c->S->modes[c->branch[b]];
            if (a == b || ma->im < 0 || mb->im < 0 || ma->kind == MBL_MODE_ZERO || mb->kind == MBL_MODE_ZERO) continue;
            /* both rows active; for the largest real part one of them (two real roots parted from a
             * double one: only the right one's row is active) */
            int act_a = c->cval[r0 + a] >= -OPT_KKT_ACTIVE, act_b = c->cval[r0 + b] >= -OPT_KKT_ACTIVE;
            if (c->bound == 3 ? !act_a && !act_b : !act_a || !act_b) continue;
            if (hypot(ma->re - mb->re, ma->im - mb->im) <= rel * hypot(ma->re, ma->im)) {
                *i = c->branch[a] + 1, *j = c->branch[b] + 1;
                return 1;
            }
        }
    /* a pair meeting its own conjugate on the real axis (*i == *j): a double real eigenvalue, the
     * exceptional point of one oscillator's critical damping, where its real part stops moving
     * with the damping and one of the two real roots it splits into moves back towards zero */
    for (int a = 0; a < c->nmode; a++) {
        const mbl_sens_mode *ma = &c->S->modes[c->branch[a]];
        if (ma->kind == MBL_MODE_ZERO || !(ma->im > 0) || c->cval[r0 + a] < -OPT_KKT_ACTIVE) continue;
        if (2 * ma->im <= rel * hypot(ma->re, ma->im)) {
            *i = *j = c->branch[a] + 1;
            return 1;
        }
    }
    return 0;
}

/* The design x probed at x +- OPT_PROBE_STEP along each parameter (within the bounds): *better = 1
 * when a feasible probe has a larger least damping ratio (a smaller largest real part) than x by
 * more than OPT_PROBE_GAIN of it. c is evaluated at x again afterwards (its modes tracked back). */
int opt_probe(opt_ctx *c, const double *x, int *better, mbl_status *st)
{
    double xp[64 + 2], v0 = c->value, dir = c->bound == 3 ? -1 : 1;
    int rc = 0;
    *better = 0;
    if (c->nx > 64) return 0;
    for (int j = 0; j < c->np && !rc && !*better; j++)
        for (int sg = -1; sg <= 1 && !rc && !*better; sg += 2) {
            memcpy(xp, x, (size_t)c->nx * sizeof *x);
            xp[j] = fmin(1, fmax(0, x[j] + sg * OPT_PROBE_STEP));
            if (xp[j] == x[j]) continue;
            rc = opt_eval(c, xp, st);
            if (!rc && c->violation <= c->o->feas_tol && dir * (c->value - v0) > OPT_PROBE_GAIN * fabs(v0)) *better = 1;
        }
    int rc2 = opt_eval(c, x, st);
    return rc ? rc : rc2;
}

/* The largest real part minimized where two pairs coalesce (the tuned mass damper's least
 * spectral abscissa, a double pair): the optimizers approach that point along the valley where the
 * two real parts are equal, where the real parts are not differentiable, and stop short of it
 * (MMA 5e-7 of the value away, SLSQP 4e-4). The pair's discriminant D = (lambda_a - lambda_b)^2 is
 * analytic in p where the eigenvalues are not (dD = 2 (lambda_a - lambda_b)(dlambda_a -
 * dlambda_b)), so Newton steps on D = -(OPT_POLISH_SEP |lambda|)^2 (the valley, the pair just apart:
 * its derivatives stay defined) move the design to the coalescence: the minimum-norm step of the
 * two real equations in the scaled parameters. A step is kept when its design is feasible and has
 * a smaller largest real part; at most OPT_POLISH_STEPS, none longer than OPT_POLISH_MAX (scaled).
 * x (nx) is updated, c left evaluated at it; *steps: the steps kept. */
int opt_polish(opt_ctx *c, double *x, double widen, int *steps, mbl_status *st)
{
    int np = c->np, ia, ib, rc = 0;
    *steps = 0;
    double xn[64 + 2], A[2 * 64], b[64 + 2];
    if (c->bound != 3 || c->nx > 64) return 0;
    for (int it = 0; it < OPT_POLISH_STEPS && opt_coalesced_within(c, widen, &ia, &ib); it++) {
        const mbl_sens_mode *ma = &c->S->modes[ia - 1], *mb = &c->S->modes[ib - 1];
        if (!ma->defined || !mb->defined) break;
        /* one pair and its conjugate (ia == ib): lambda_b = conj(lambda_a) */
        double cj = ia == ib ? -1 : 1;
        double complex dl = (ma->re - mb->re) + I * (ma->im - cj * mb->im), D = dl * dl;
        double sep = OPT_POLISH_SEP * hypot(ma->re, ma->im);
        for (int w = 0; w < np; w++) {
            double complex dD = 2 * dl * ((ma->dre[w] - mb->dre[w]) + I * (ma->dim[w] - cj * mb->dim[w])) * (c->hi[w] - c->lo[w]);
            A[2 * w] = creal(dD), A[2 * w + 1] = cimag(dD);
        }
        memset(b, 0, sizeof b);
        b[0] = -sep * sep - creal(D), b[1] = -cimag(D);
        if ((rc = mbla_lstsq(2, np, 1, A, 2, b, np > 2 ? np : 2, -1.0, NULL, st))) return rc;
        double len = 0;
        for (int w = 0; w < np; w++) len += b[w] * b[w];
        if (!(sqrt(len) <= OPT_POLISH_MAX)) break;
        memcpy(xn, x, (size_t)c->nx * sizeof *x);
        for (int w = 0; w < np; w++) xn[w] = fmin(1, fmax(0, x[w] + b[w]));
        double v0 = c->value;
        mbl_status s2;
        mbl_status_clear(&s2);
        if (opt_eval(c, xn, &s2) || c->violation > c->o->feas_tol || !(c->value < v0)) break; /* c unchanged on failure */
        xn[np] = c->value / c->pscale; /* t at its rows */
        memcpy(x, xn, (size_t)c->nx * sizeof *x);
        (*steps)++;
        if ((rc = opt_eval(c, x, st))) return rc;
    }
    return opt_eval(c, x, st); /* back at x when the last step was refused */
}
