/* The listing order of modes and the canonical shapes of a repeated eigenvalue (src/modal/order.h,
 * docs/linearization.md "Mode numbers").
 *
 * The eigenvalues are sorted by mbl_mode_order. Eigenvalues within MODAL_REPEAT_TOL of each other
 * (relative, both folded into the upper half plane: a conjugate pair's members belong to one
 * repeated eigenvalue), and all zero modes, are one repeated eigenvalue: which eigenvectors a
 * solver returns for it is arbitrary (any basis of the eigenspace), and its members' order by
 * eigenvalue is rounding. Its modes are therefore listed together, where its first member falls,
 * with shapes replaced by a basis that depends on the eigenspace alone: the columns of its
 * orthogonal projector P = Q Q^H (Q an orthonormal basis of the members' shapes, conjugated in the
 * lower half plane) chosen by pivoting on the diagonal, as a pivoted Cholesky factorization of P:
 * u_1 = P e_i1 with i1 the coordinate of the largest P_ii (the lowest such index within 1e-6
 * relative), scaled to u_1[i1] = 1 (then its largest component, |P_ij| <= P_ii); P deflated by
 * u_1 and the next pivot taken the same way. Mode k of the repeated eigenvalue has shape u_k (and
 * its conjugate mode conj(u_k), listed right after it). Which member's eigenvalue goes with u_k
 * (they differ by rounding) is the member best correlated with it (MAC). A defective eigenvalue
 * (a Jordan chain: nearly parallel eigenvectors) has fewer basis vectors than members: the extra
 * members get the vector they correlate best with. */
#include "modal/order.h"

#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* a member's shape counts as a new direction when its part outside the others' span is above this
 * (relative; a defective pair's eigenvectors differ by about sqrt(eps)) */
#define ORDER_RANK_TOL 1e-6
/* pivots within this (relative) of the largest diagonal entry tie: the lowest coordinate wins */
#define ORDER_PIVOT_TIE 1e-6

static int cmp_items(const void *pa, const void *pb)
{
    const modal_item *a = pa, *b = pb;
    if (a->spurious != b->spurious) return a->spurious - b->spurious; /* physical first */
    int c = mbl_mode_order(a->freq, a->re, a->im, b->freq, b->re, b->im);
    return c ? c : a->idx - b->idx;
}

static int same_eigenvalue(const modal_item *a, const modal_item *b)
{
    if (a->spurious || b->spurious) return 0;
    if (a->zero || b->zero) return a->zero && b->zero;
    double ma = hypot(a->re, a->im), mb = hypot(b->re, b->im);
    return hypot(a->re - b->re, fabs(a->im) - fabs(b->im)) <= MODAL_REPEAT_TOL * fmax(ma, mb);
}

static int root_of(int *parent, int i)
{
    while (parent[i] != i) {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    return i;
}

/* |x^H y|^2 / (x^H x y^H y) */
static double mac_c(int n, const double complex *x, const double complex *y)
{
    double complex s = 0;
    double nx = 0, ny = 0;
    for (int i = 0; i < n; i++) {
        s += conj(x[i]) * y[i];
        nx += creal(x[i] * conj(x[i])), ny += creal(y[i] * conj(y[i]));
    }
    return nx > 0 && ny > 0 ? creal(s * conj(s)) / (nx * ny) : 0.0;
}

/* The canonical basis U (n x *r) of the span of the c vectors F (n x c): Q by modified Gram-Schmidt
 * (twice) with the rank decided by ORDER_RANK_TOL, then the pivoted columns of Q Q^H. */
static void canonical_basis(int n, int c, const double complex *F, double complex *Q, double complex *U, int *r_)
{
    int r = 0;
    for (int m = 0; m < c; m++) {
        const double complex *f = F + (size_t)m * n;
        double complex *q = Q + (size_t)r * n;
        double nf = 0;
        for (int i = 0; i < n; i++) q[i] = f[i], nf += creal(f[i] * conj(f[i]));
        if (!(nf > 0)) continue;
        for (int pass = 0; pass < 2; pass++)
            for (int k = 0; k < r; k++) {
                const double complex *p = Q + (size_t)k * n;
                double complex d = 0;
                for (int i = 0; i < n; i++) d += conj(p[i]) * q[i];
                for (int i = 0; i < n; i++) q[i] -= d * p[i];
            }
        double nq = 0;
        for (int i = 0; i < n; i++) nq += creal(q[i] * conj(q[i]));
        if (!(nq > ORDER_RANK_TOL * ORDER_RANK_TOL * nf)) continue;
        nq = sqrt(nq);
        for (int i = 0; i < n; i++) q[i] /= nq;
        r++;
    }
    for (int k = 0; k < r; k++) {
        /* the diagonal of the deflated projector: the row norms of Q */
        double big = 0;
        for (int i = 0; i < n; i++) {
            double d = 0;
            for (int j = 0; j < r; j++) d += creal(Q[i + (size_t)j * n] * conj(Q[i + (size_t)j * n]));
            big = fmax(big, d);
        }
        int piv = 0;
        for (int i = 0; i < n; i++) {
            double d = 0;
            for (int j = 0; j < r; j++) d += creal(Q[i + (size_t)j * n] * conj(Q[i + (size_t)j * n]));
            if (d >= (1.0 - ORDER_PIVOT_TIE) * big) {
                piv = i;
                break;
            }
        }
        /* u = Q z with z = Q(piv, :)^H; then Q <- Q - u z^H / |z|^2 */
        double complex *u = U + (size_t)k * n;
        double z2 = 0;
        for (int j = 0; j < r; j++) z2 += creal(Q[piv + (size_t)j * n] * conj(Q[piv + (size_t)j * n]));
        for (int i = 0; i < n; i++) {
            double complex s = 0;
            for (int j = 0; j < r; j++) s += Q[i + (size_t)j * n] * conj(Q[piv + (size_t)j * n]);
            u[i] = s;
        }
        for (int j = 0; j < r && z2 > 0; j++) {
            double complex zj = conj(Q[piv + (size_t)j * n]) / z2;
            for (int i = 0; i < n; i++) Q[i + (size_t)j * n] -= u[i] * conj(zj);
        }
        double complex up = u[piv];
        for (int i = 0; i < n; i++) u[i] = (i == piv) ? 1.0 : u[i] / up;
    }
    *r_ = r;
}

/* One repeated eigenvalue's members mem[0..c-1] (positions in it, in sorted order): their shapes
 * rewritten from the canonical basis and their listing order into out[0..c-1]. */
static int order_cluster(int c, const int *mem, const modal_item *it, int n, double *sre, double *sim, int *out)
{
    double complex *F = mbl_alloc_array((size_t)n * c * 3 + 1, sizeof *F);
    int *asg = mbl_alloc_array((size_t)c + 1, sizeof *asg);
    if (!F || !asg) {
        mbl_free(F), mbl_free(asg);
        return MBL_ENOMEM;
    }
    double complex *Q = F + (size_t)n * c, *U = Q + (size_t)n * c;
    for (int m = 0; m < c; m++) { /* the shapes folded into the upper half plane */
        const modal_item *a = &it[mem[m]];
        for (int i = 0; i < n; i++) {
            double complex v = sre[i + (size_t)a->idx * n] + I * sim[i + (size_t)a->idx * n];
            F[i + (size_t)m * n] = a->im < 0 ? conj(v) : v;
        }
    }
    int r = 0;
    canonical_basis(n, c, F, Q, U, &r);
    /* each basis vector to the unassigned member (upper half plane and real ones, then lower) it
     * correlates best with; the rest to the vector they correlate best with; zero shapes last */
    for (int m = 0; m < c; m++) asg[m] = -1;
    for (int half = 0; half < 2; half++)
        for (int k = 0; k < r; k++) {
            int best = -1;
            double bm = -1;
            for (int m = 0; m < c; m++) {
                if (asg[m] >= 0 || (it[mem[m]].im < 0) != half) continue;
                double q = mac_c(n, F + (size_t)m * n, U + (size_t)k * n);
                if (q > 0 && q > bm) bm = q, best = m;
            }
            if (best >= 0) asg[best] = k;
        }
    for (int m = 0; m < c; m++) {
        if (asg[m] >= 0) continue;
        double bm = 0;
        asg[m] = r;
        for (int k = 0; k < r; k++) {
            double q = mac_c(n, F + (size_t)m * n, U + (size_t)k * n);
            if (q > bm) bm = q, asg[m] = k;
        }
    }
    for (int m = 0; m < c; m++) {
        const modal_item *a = &it[mem[m]];
        if (asg[m] >= r) continue;
        const double complex *u = U + (size_t)asg[m] * n;
        for (int i = 0; i < n; i++) {
            double complex v = a->im < 0 ? conj(u[i]) : u[i];
            sre[i + (size_t)a->idx * n] = creal(v) + 0.0;
            sim[i + (size_t)a->idx * n] = cimag(v) + 0.0;
        }
    }
    int o = 0;
    for (int k = 0; k <= r; k++)
        for (int half = 0; half < 2; half++)
            for (int m = 0; m < c; m++)
                if (asg[m] == k && (it[mem[m]].im < 0) == half) out[o++] = mem[m];
    mbl_free(F), mbl_free(asg);
    return 0;
}

int modal_order(int nm, modal_item *it, int n, double *sre, double *sim, int *mult, mbl_status *st)
{
    if (nm <= 0) return 0;
    for (int i = 0; i < nm; i++)
        if (it[i].zero) it[i].freq = 0.0;
    if (nm == 2) { /* qsort's one comparison (a sweep point of one degree of freedom) */
        if (cmp_items(&it[0], &it[1]) > 0) {
            modal_item t = it[0];
            it[0] = it[1], it[1] = t;
        }
    } else {
        qsort(it, (size_t)nm, sizeof *it, cmp_items);
    }
    /* tmp, then parent, next, ord, size and tail, in one block */
    modal_item *tmp = mbl_alloc_array((size_t)nm, sizeof(modal_item) + 5 * sizeof(int));
    if (!tmp) return mbl_error(st, MBL_ENOMEM, "out of memory");
    int *parent = (int *)(void *)(tmp + nm);
    int *next = parent + nm, *ord = next + nm, *size = ord + nm, *tail = size + nm;
    for (int i = 0; i < nm; i++) parent[i] = i, next[i] = -1, size[i] = 0;
    /* single linkage over neighbours in the order (a repeated eigenvalue's moduli are within the
     * tolerance, and the order is by modulus) */
    for (int i = 0; i < nm; i++) {
        if (it[i].spurious) break;
        for (int j = i + 1; j < nm && !it[j].spurious; j++) {
            if (!(it[j].freq <= it[i].freq * (1.0 + 4.0 * MODAL_REPEAT_TOL))) break;
            if (!same_eigenvalue(&it[i], &it[j])) continue;
            int a = root_of(parent, i), b = root_of(parent, j);
            if (a != b) parent[a > b ? a : b] = a < b ? a : b; /* the root: the first member */
        }
    }
    for (int i = 0; i < nm; i++) { /* members listed from their root, in order */
        int r = root_of(parent, i);
        if (r != i) next[tail[r]] = i;
        tail[r] = i;
        size[r]++;
    }
    int o = 0, rc = 0;
    for (int i = 0; i < nm && !rc; i++) {
        if (root_of(parent, i) != i) continue;
        int c = size[i], *mem = tail; /* tail is no longer needed: the members' positions */
        for (int m = 0, p = i; m < c; m++, p = next[p]) mem[m] = p;
        /* the multiplicity: members in the upper half plane and on the real axis, or in the lower
         * (a simple conjugate pair is one) */
        int up = 0, low = 0;
        for (int m = 0; m < c; m++) it[mem[m]].im < 0 ? low++ : up++;
        int mu = up > low ? up : low;
        if (mu < 2 || !sre || !sim || n < 1) {
            for (int m = 0; m < c; m++) ord[o + m] = mem[m];
        } else if (order_cluster(c, mem, it, n, sre, sim, ord + o)) {
            rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        }
        for (int m = 0; m < c; m++)
            if (mult) mult[o + m] = mu;
        o += c;
    }
    if (!rc) {
        for (int k = 0; k < nm; k++) tmp[k] = it[ord[k]];
        memcpy(it, tmp, (size_t)nm * sizeof *it);
    }
    mbl_free(tmp); /* and parent .. tail */
    return rc;
}
