/* The largest real part minimized where eigenvalues coalesce (docs/optimize.md, "Largest real
 * part"): there the real parts are not differentiable, so the first-order condition of the bound
 * formulation does not apply, and probes along the parameters' axes miss a valley that runs
 * diagonally (seen: an oscillator m x'' + c x' + k x = 0 with c and k varied stops where c is
 * critical for k, 2 sqrt(k m), and every axis probe is worse, while c and k raised together keep
 * the double root and move it to the left).
 *
 * Near a coalescence of lambda_a and lambda_b (a pair and its own conjugate, or two pairs) two
 * functions are analytic in the parameters where the eigenvalues are not: their mean
 * s = (lambda_a + lambda_b) / 2 and their discriminant D = (lambda_a - lambda_b)^2. Where D is real
 * and not positive the two real parts are equal (Re sqrt(D) = 0): the valley. On it the largest
 * real part of the two is Re s, a smooth function. So the check at such a design is the
 * first-order condition of the smooth problem
 *
 *     minimize t   subject to   Re s / rho <= t,   Re D <= 0,   Im D = 0 (two pairs only),
 *
 * with every other row and bound of the bound formulation as it is (the coalescing modes' own rows,
 * and their conjugates', replaced by these). Its residual (opt_kkt_core) is the design's
 * first-order residual. Where it is not small, the same problem with Re D = 0 (on the valley) gives
 * its negative residual as a first-order descent direction along the valley within the active
 * constraints (on_valley): opt_valley_descend steps along it
 * (backtracking, the step kept when the design is feasible and its largest real part smaller), puts
 * the pair back onto the valley by opt_polish's Newton steps, and repeats. */
#include <complex.h>
#include <math.h>
#include <string.h>

#include "mblin/status.h"
#include "opt/opt_internal.h"

/* the mode whose eigenvalue is the conjugate of mode k's (0-based), or -1 */
static int conjugate_of(const opt_ctx *c, int k)
{
    const mbl_sens_mode *m = &c->S->modes[k];
    double tol = 1e-9 * hypot(m->re, m->im);
    for (int j = 0; j < c->S->nmode; j++)
        if (j != k && fabs(c->S->modes[j].re - m->re) <= tol && fabs(c->S->modes[j].im + m->im) <= tol) return j;
    return -1;
}

int opt_valley_kkt(const opt_ctx *c, int ia, int ib, int on_valley, double *res, double *dir, mbl_status *st)
{
    int nx = c->nx, np = c->np, r0 = c->ncon - c->nmode, rc = 0;
    const mbl_sens_mode *ma = &c->S->modes[ia - 1], *mb = &c->S->modes[ib - 1];
    if (c->bound != 3 || !ma->defined || !mb->defined) return mbl_error(st, MBL_EARG, "opt_valley_kkt: no valley here");
    int ca = conjugate_of(c, ia - 1), cb = conjugate_of(c, ib - 1);
    char *skip = mbl_alloc_array((size_t)c->ncon + 1, 1);
    double *extra = mbl_alloc_array(5 * (size_t)nx, sizeof *extra);
    if (!skip || !extra) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    memset(skip, 0, (size_t)c->ncon + 1);
    for (int a = 0; a < c->nmode; a++) {
        int k = c->branch[a];
        if (k == ia - 1 || k == ib - 1 || k == ca || k == cb) skip[r0 + a] = 1;
    }
    /* one pair and its conjugate (ia == ib): lambda_b = conj(lambda_a) */
    double cj = ia == ib ? -1 : 1, lam2 = ma->re * ma->re + ma->im * ma->im;
    double complex dl = (ma->re - mb->re) + I * (ma->im - cj * mb->im);
    memset(extra, 0, 5 * (size_t)nx * sizeof *extra);
    for (int w = 0; w < np; w++) {
        double h = c->hi[w] - c->lo[w];
        double complex dD = 2 * dl * ((ma->dre[w] - mb->dre[w]) + I * (ma->dim[w] - cj * mb->dim[w])) * h / lam2;
        extra[w] = (ma->dre[w] + mb->dre[w]) / 2 * h / c->pscale; /* Re s / rho - t <= 0 */
        extra[nx + w] = creal(dD);                                   /* Re D <= 0 */
        extra[2 * nx + w] = -creal(dD);                              /* on_valley: Re D = 0 */
        extra[3 * nx + w] = cimag(dD), extra[4 * nx + w] = -cimag(dD); /* Im D = 0: both signs */
    }
    extra[np] = -1;
    int ne = 2 + (on_valley != 0);
    if (ia != ib) { /* two pairs: Im D = 0 too */
        memmove(extra + (size_t)ne * nx, extra + 3 * (size_t)nx, 2 * (size_t)nx * sizeof *extra);
        ne += 2;
    }
    rc = opt_kkt_core(c, OPT_KKT_ACTIVE, skip, extra, ne, res, dir, st);
    for (int j = 0; !rc && dir && j < nx; j++) dir[j] = -dir[j];
done:
    mbl_free(skip);
    mbl_free(extra);
    return rc;
}

int opt_valley_descend(opt_ctx *c, double *x, int *ia, int *ib, int *steps, double *res, mbl_status *st)
{
    int nx = c->nx, np = c->np, rc = 0;
    double dir[64 + 2], xn[64 + 2];
    if (nx > 64) return mbl_error(st, MBL_EARG, "opt_valley_descend: more than 64 parameters");
    for (int it = 0; it < OPT_VALLEY_STEPS; it++) {
        if ((rc = opt_valley_kkt(c, *ia, *ib, 1, res, dir, st))) return rc;
        if (*res <= c->o->kkt_tol) return 0;
        double len = 0;
        for (int j = 0; j < np; j++) len += dir[j] * dir[j];
        len = sqrt(len);
        if (!(len > 0)) return 0;
        double v0 = c->value, alpha = fmin(1.0, OPT_VALLEY_MAX / len);
        for (int j = 0; j < np; j++) { /* no further than the nearest bound: a step that reaches it lands on it */
            double room = dir[j] > 0 ? (1 - x[j]) / dir[j] : dir[j] < 0 ? -x[j] / dir[j] : INFINITY;
            if (room > 1e-12 && room < alpha) alpha = room;
        }
        int kept = 0;
        for (int ls = 0; ls < 20 && !kept; ls++, alpha /= 2) {
            memcpy(xn, x, (size_t)nx * sizeof *x);
            for (int j = 0; j < np; j++) xn[j] = fmin(1, fmax(0, x[j] + alpha * dir[j]));
            mbl_status s2;
            mbl_status_clear(&s2);
            if (opt_eval(c, xn, &s2)) continue; /* a design where the model fails: shorter */
            xn[np] = c->value / c->pscale;
            int pol = 0; /* the step leaves a curved valley by its square (seen: 26 % apart for 5e-2 on
                          * c = 2 sqrt(k) with c in 1..1e5, k in 1e7..1e9): the pair looked for in a wider
                          * window, put back, and the step kept only on the valley */
            if (opt_coalesced_within(c, OPT_VALLEY_WIDEN, ia, ib) && (rc = opt_polish(c, xn, OPT_VALLEY_WIDEN, &pol, st))) return rc;
            kept = c->violation <= c->o->feas_tol && c->value < v0 && opt_coalesced(c, ia, ib);
            if (kept) memcpy(x, xn, (size_t)nx * sizeof *x);
        }
        if ((rc = opt_eval(c, x, st))) return rc;
        if (!kept || !opt_coalesced(c, ia, ib)) return 0; /* no progress, or the pair has parted: the caller checks */
        (*steps)++;
    }
    return opt_valley_kkt(c, *ia, *ib, 1, res, NULL, st);
}
