/* Mode tracking over a sweep (docs/study.md, "Sweeps and Campbell diagrams").
 *
 * From point a to the next point p every branch b (an eigenvalue lambda_b(a) with its mode shape
 * phi_b(a)) is matched to one eigenvalue j of p by a minimum-cost assignment (Hungarian method,
 * shortest augmenting paths with potentials, O(nm^3)) of
 *
 *     cost(b, j) = w (1 - MAC(phi_b(a), phi_j(p))) + |lambda_j(p) - pred_b| / (|pred_b| + |lambda_j(p)| + ref)
 *
 * MAC(x, y) = |x^H y|^2 / (x^H x y^H y) is the modal assurance criterion (eigenvector correlation)
 * and pred_b the eigenvalue predicted at p: lambda_b(a) + (d lambda_b / dx)(a) (x_p - x_a) when the
 * caller gives exact eigenvalue derivatives, else the branch extrapolated linearly in the
 * parameter from its last two points (lambda_b(a) itself at the first step). With exact shape
 * derivatives (mbl_track_modes_pred) the MAC is taken with the predicted shape
 * phi_b(a) + (d phi_b / dx)(a) (x_p - x_a) instead of phi_b(a). The MAC term keeps a branch on
 * its shape through a crossing (the shapes of two crossing modes are distinct) and through a
 * veering (the shapes rotate continuously, so consecutive points of one branch stay correlated);
 * the predictor separates what shapes cannot: the members of a conjugate pair and the two
 * branches of a real pair (equal shapes up to conjugation), and eigenvalues that merge into a
 * complex pair (coalescing eigenvectors at the merge point). */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "mblin/sweep.h"

/* assign's scratch for an n x n matrix (one allocation for all of a sweep's points): doubles, then
 * ints and chars (ASSIGN_WORK of them) */
#define ASSIGN_WORK(n) (3 * ((size_t)(n) + 1) + ((size_t)(n) + 1) * (2 * sizeof(int) + 1) / sizeof(double) + 1)

/* Minimum-cost perfect assignment of an n x n cost matrix (row-major): row i -> column asg[i];
 * work: ASSIGN_WORK(n) doubles. */
static void assign(int n, const double *cost, int *asg, double *work)
{
    size_t m = (size_t)n + 1;
    double *u = work, *v = u + m, *minv = v + m;
    int *p = (int *)(void *)(minv + m), *way = p + m;
    char *used = (char *)(way + m);
    memset(u, 0, 2 * m * sizeof *u);
    memset(p, 0, 2 * m * sizeof *p);
    /* 1-based rows/columns; p[j] = row assigned to column j, column 0 is the virtual start */
    for (int i = 1; i <= n; i++) {
        p[0] = i;
        int j0 = 0;
        for (int j = 0; j <= n; j++) minv[j] = INFINITY, used[j] = 0;
        do {
            used[j0] = 1;
            int i0 = p[j0], j1 = 0;
            double delta = INFINITY;
            for (int j = 1; j <= n; j++) {
                if (used[j]) continue;
                double cur = cost[(size_t)(i0 - 1) * (size_t)n + (size_t)(j - 1)] - u[i0] - v[j];
                if (cur < minv[j]) minv[j] = cur, way[j] = j0;
                if (minv[j] < delta) delta = minv[j], j1 = j;
            }
            if (j1 == 0) { /* only with non-finite costs: take the first free column */
                for (int j = 1; j <= n && !j1; j++)
                    if (!used[j]) j1 = j;
                delta = 0;
            }
            for (int j = 0; j <= n; j++) {
                if (used[j]) u[p[j]] += delta, v[j] -= delta;
                else minv[j] -= delta;
            }
            j0 = j1;
        } while (p[j0] != 0);
        do {
            int j1 = way[j0];
            p[j0] = p[j1];
            j0 = j1;
        } while (j0);
    }
    for (int j = 1; j <= n; j++) asg[p[j] - 1] = j - 1;
}

/* A shape's squared norm x^H x and whether it is real (every imaginary part +-0: its bits but the
 * sign 0). For a real shape the complex sum is the real one bit for bit: x * x + (+-0) * (+-0) is
 * x * x + 0 = x * x (never -0). Computed once per shape, not once per pair (mac_of). */
static double shape_norm(int n, const double *xr, const double *xi, int *real)
{
    uint64_t im = 0;
    for (int k = 0; k < n; k++) {
        uint64_t x;
        memcpy(&x, xi + k, sizeof x);
        im |= x << 1;
    }
    double na = 0;
    for (int k = 0; k < n; k++) na += xr[k] * xr[k] + xi[k] * xi[k];
    *real = !im;
    return na;
}

/* MAC(a, b) from the shapes' norms na, nb (shape_norm) and whether both are real */
static double mac_of(int n, const double *ar, const double *ai, const double *br, const double *bi, double na,
                     double nb, int real)
{
    double sr = 0, si = 0;
    if (real) { /* the same sums without the imaginary parts: x + (+-0) is x, and no sum here is -0 */
        for (int k = 0; k < n; k++) sr += ar[k] * br[k];
        if (!(na > 0) || !(nb > 0)) return 0.0;
        double m = sr * sr / (na * nb);
        return m > 1 ? 1 : m;
    }
    for (int k = 0; k < n; k++) {
        /* conj(a) * b */
        sr += ar[k] * br[k] + ai[k] * bi[k];
        si += ar[k] * bi[k] - ai[k] * br[k];
    }
    if (!(na > 0) || !(nb > 0)) return 0.0;
    double m = (sr * sr + si * si) / (na * nb);
    return m > 1 ? 1 : m;
}

int mbl_track_modes(int np, int nm, int n, const double *lre, const double *lim, const double *dre,
                    const double *dim, const double *sre, const double *sim, const double *x, const int *prev,
                    double mac_weight, int *perm, double *mac, mbl_status *st)
{
    return mbl_track_modes_pred(np, nm, n, lre, lim, dre, dim, sre, sim, NULL, NULL, x, prev, mac_weight, perm, mac,
                                st);
}

int mbl_track_modes_pred(int np, int nm, int n, const double *lre, const double *lim, const double *dre,
                         const double *dim, const double *sre, const double *sim, const double *dsre,
                         const double *dsim, const double *x, const int *prev, double mac_weight, int *perm,
                         double *mac, mbl_status *st)
{
    if (np < 1 || nm < 0 || !lre || !lim || !perm || (sre && (!sim || n < 1)) || (!dsre != !dsim) ||
        (dsre && !sre))
        return mbl_error(st, MBL_EARG, "mbl_track_modes: invalid arguments");
    if (nm == 0) return 0;
    if (!(mac_weight >= 0)) mac_weight = 1.0;
    /* the costs, their MACs (macs) and assign's scratch in one block */
    double *cost = mbl_alloc_array(2 * (size_t)nm * (size_t)nm + ASSIGN_WORK(nm), sizeof *cost);
    double *macs = cost ? cost + (size_t)nm * nm : NULL, *work = cost ? macs + (size_t)nm * nm : NULL;
    double *pr = mbl_alloc_array((size_t)nm, sizeof *pr), *pi = mbl_alloc_array((size_t)nm, sizeof *pi);
    int *asg = mbl_alloc_array((size_t)nm, sizeof *asg);
    /* the predicted shapes of the branches (nm * n, complex), when shape derivatives are given */
    double *ps = dsre ? mbl_alloc_array(2 * (size_t)nm * (size_t)n + 1, sizeof *ps) : NULL;
    /* each shape's norm and whether it is real (shape_norm), once; then the predicted shapes' (psn) */
    size_t ns = (size_t)np * (size_t)nm;
    double *nrm = sre ? mbl_alloc_array(ns + (size_t)nm + 1, sizeof *nrm) : NULL, *psn = nrm ? nrm + ns : NULL;
    char *rl = sre ? mbl_alloc_array(ns + (size_t)nm + 1, sizeof *rl) : NULL, *psr = rl ? rl + ns : NULL;
    if (!cost || !pr || !pi || !asg || (dsre && !ps) || (sre && (!nrm || !rl))) {
        mbl_free(cost), mbl_free(pr), mbl_free(pi), mbl_free(asg), mbl_free(ps), mbl_free(nrm), mbl_free(rl);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    for (size_t e = 0; sre && e < ns; e++) {
        int r;
        nrm[e] = shape_norm(n, sre + e * (size_t)n, sim + e * (size_t)n, &r);
        rl[e] = (char)r;
    }
    int rc = 0;
    for (int p = 0; p < np && !rc; p++) {
        int a = prev ? prev[p] : p - 1;
        if (a < 0) {
            for (int b = 0; b < nm; b++) {
                perm[(size_t)p * nm + b] = b;
                if (mac) mac[(size_t)p * nm + b] = sre ? 1.0 : NAN;
            }
            continue;
        }
        if (a >= p) {
            rc = mbl_error(st, MBL_EARG, "mbl_track_modes: point %d is tracked from a later point %d", p, a);
            break;
        }
        int aa = prev ? prev[a] : a - 1; /* the point before a: the predictor's second point */
        double big = 0;
        for (int b = 0; b < nm; b++) {
            int ja = perm[(size_t)a * nm + b];
            double r = lre[(size_t)a * nm + ja], i = lim[(size_t)a * nm + ja];
            pr[b] = r, pi[b] = i;
            double gr = dre && dim ? dre[(size_t)a * nm + ja] : NAN, gi = dre && dim ? dim[(size_t)a * nm + ja] : NAN;
            if (x && x[p] != x[a] && isfinite(gr) && isfinite(gi)) {
                /* exact derivative given: first-order Taylor step */
                pr[b] += gr * (x[p] - x[a]), pi[b] += gi * (x[p] - x[a]);
            } else if (aa >= 0 && x && x[a] != x[aa] && x[p] != x[a]) {
                int jaa = perm[(size_t)aa * nm + b];
                double s = (x[p] - x[a]) / (x[a] - x[aa]);
                double dr = r - lre[(size_t)aa * nm + jaa], di = i - lim[(size_t)aa * nm + jaa];
                if (isfinite(dr) && isfinite(di)) pr[b] += s * dr, pi[b] += s * di;
            }
            if (isfinite(r) && isfinite(i)) big = fmax(big, hypot(r, i));
            if (ps) {
                /* the shape predicted at p: phi_b(a) + (d phi_b / dx)(a) (x_p - x_a) where the
                 * derivative is given (finite), else phi_b(a) */
                size_t o = ((size_t)a * nm + ja) * (size_t)n;
                double *yr = ps + 2 * (size_t)b * n, *yi = yr + n, h = x ? x[p] - x[a] : 0.0;
                int fin = isfinite(h);
                for (int k = 0; k < n && fin; k++) fin = isfinite(dsre[o + k]) && isfinite(dsim[o + k]);
                for (int k = 0; k < n; k++) {
                    yr[k] = sre[o + k] + (fin ? dsre[o + k] * h : 0.0);
                    yi[k] = sim[o + k] + (fin ? dsim[o + k] * h : 0.0);
                }
                int r;
                psn[b] = shape_norm(n, yr, yi, &r);
                psr[b] = (char)r;
            }
        }
        for (int j = 0; j < nm; j++) {
            double r = lre[(size_t)p * nm + j], i = lim[(size_t)p * nm + j];
            if (isfinite(r) && isfinite(i)) big = fmax(big, hypot(r, i));
        }
        double ref = 1e-8 * big + DBL_MIN;
        for (int b = 0; b < nm; b++) {
            int ja = perm[(size_t)a * nm + b];
            for (int j = 0; j < nm; j++) {
                double r = lre[(size_t)p * nm + j], i = lim[(size_t)p * nm + j];
                double d = hypot(r - pr[b], i - pi[b]) / (hypot(pr[b], pi[b]) + hypot(r, i) + ref);
                if (!isfinite(d)) d = 1e6;
                double c = d;
                if (sre) {
                    size_t ea = (size_t)a * nm + ja, ep = (size_t)p * nm + j;
                    const double *xr = sre + ea * (size_t)n, *xi = sim + ea * (size_t)n;
                    double na = nrm[ea];
                    int ra = rl[ea];
                    if (ps) xr = ps + 2 * (size_t)b * n, xi = xr + n, na = psn[b], ra = psr[b];
                    const double *yr = sre + ep * (size_t)n, *yi = sim + ep * (size_t)n;
                    double m = macs[(size_t)b * nm + j] = mac_of(n, xr, xi, yr, yi, na, nrm[ep], ra && rl[ep]);
                    if (!isfinite(m)) m = 0;
                    c += mac_weight * (1.0 - m);
                }
                cost[(size_t)b * nm + j] = c;
            }
        }
        assign(nm, cost, asg, work);
        for (int b = 0; b < nm; b++) {
            perm[(size_t)p * nm + b] = asg[b];
            if (mac) {
                size_t ea = (size_t)a * nm + perm[(size_t)a * nm + b], ep = (size_t)p * nm + asg[b];
                /* without predicted shapes the cost's MAC is of these two shapes */
                mac[(size_t)p * nm + b] = !sre ? NAN
                                          : !ps ? macs[(size_t)b * nm + asg[b]]
                                                : mac_of(n, sre + ea * (size_t)n, sim + ea * (size_t)n, sre + ep * (size_t)n,
                                                         sim + ep * (size_t)n, nrm[ea], nrm[ep], rl[ea] && rl[ep]);
            }
        }
    }
    mbl_free(cost), mbl_free(pr), mbl_free(pi), mbl_free(asg), mbl_free(ps), mbl_free(nrm), mbl_free(rl);
    return rc;
}
