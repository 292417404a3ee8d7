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

/* a and b are one point for same_eigenvalue (bitwise: the same frequency, real part and |imaginary
 * part|, both zero or not, both physical): every link of one is a link of the other, so a run of
 * them (k identical subsystems) is joined to its first in O(k), not compared pairwise */
static int same_point(const modal_item *a, const modal_item *b)
{
    return !a->spurious && !b->spurious && a->zero == b->zero && a->freq == b->freq && a->re == b->re &&
           fabs(a->im) == fabs(b->im) && same_eigenvalue(a, b);
}

static int root_of(int *parent, int i)
{
    while (parent[i] != i) {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    return i;
}

/* A repeated eigenvalue's members split into components: members whose shapes share a coordinate
 * (a nonzero entry), transitively. The projector P of the span is block diagonal over them, so the
 * pivoted Cholesky of P below is each component's own, interleaved by one global pivot rule; and
 * a shape correlates (MAC > 0) only with basis vectors of its component. Everything below is the
 * computation over the whole cluster restricted to the nonzero entries (the same sums in the same
 * order, bit for bit), so a cluster of k identical uncoupled subsystems costs O(k n) to read the
 * shapes and O(k log n) to order, not O(k^2 n). */
typedef struct cl_comp {
    int nc, c, r;     /* coordinates, members, basis vectors */
    int *crd, *mem;   /* its coordinates (ascending, cluster-global) and members (in order) */
    double complex *F, *Q, *U; /* nc x c shapes, nc x c orthonormal basis, nc x r canonical vectors */
    int *kglob;       /* global step of each of its basis vectors */
    int done;         /* basis vectors chosen so far */
} cl_comp;

/* max segment tree over n leaves (the deflated projector's diagonal by coordinate) */
static void seg_set(double *t, int size, int i, double v)
{
    i += size;
    t[i] = v;
    for (i >>= 1; i >= 1; i >>= 1) t[i] = fmax(t[2 * i], t[2 * i + 1]);
}

/* the lowest leaf >= thr (one exists: thr <= the root) */
static int seg_first(const double *t, int size, double thr)
{
    int i = 1;
    while (i < size) i = t[2 * i] >= thr ? 2 * i : 2 * i + 1;
    return i - size;
}

/* Q (nc x c) by modified Gram-Schmidt (twice) over the component's shapes F, the rank decided by
 * ORDER_RANK_TOL */
static void comp_gram_schmidt(cl_comp *K)
{
    int n = K->nc, r = 0;
    for (int m = 0; m < K->c; m++) {
        const double complex *f = K->F + (size_t)m * n;
        double complex *q = K->Q + (size_t)r * n;
        double nf = 0;
        for (int i = 0; i < n; i++) q[i] = f[i], nf += creal(f[i] * conj(f[i]));
        if (!(nf > 0)) continue;
        for (int pass = 0; pass < 2; pass++)
            for (int k = 0; k < r; k++) {
                const double complex *p = K->Q + (size_t)k * n;
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
    K->r = r;
}

/* the diagonal entry of the deflated projector at local coordinate i: the row norm of Q */
static double comp_diag(const cl_comp *K, int i)
{
    double d = 0;
    for (int j = 0; j < K->r; j++) d += creal(K->Q[i + (size_t)j * K->nc] * conj(K->Q[i + (size_t)j * K->nc]));
    return d;
}

/* one pivot of K at local coordinate lp: u = Q z with z = Q(lp, :)^H, then Q <- Q - u z^H / |z|^2,
 * u scaled to u[lp] = 1, stored as K's next canonical vector */
static void comp_pivot(cl_comp *K, int lp)
{
    int n = K->nc, r = K->r;
    double complex *Q = K->Q, *u = K->U + (size_t)K->done * n;
    double z2 = 0;
    for (int j = 0; j < r; j++) z2 += creal(Q[lp + (size_t)j * n] * conj(Q[lp + (size_t)j * n]));
    for (int i = 0; i < n; i++) {
        double complex s = 0;
        for (int j = 0; j < r; j++) s += Q[i + (size_t)j * n] * conj(Q[lp + (size_t)j * n]);
        u[i] = s;
    }
    for (int j = 0; j < r && z2 > 0; j++) {
        double complex zj = conj(Q[lp + (size_t)j * n]) / z2;
        for (int i = 0; i < n; i++) Q[i + (size_t)j * n] -= u[i] * conj(zj);
    }
    double complex up = u[lp];
    for (int i = 0; i < n; i++) u[i] = (i == lp) ? 1.0 : u[i] / up;
    K->done++;
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

/* One repeated eigenvalue's members mem[0..c-1] (positions in it, in sorted order): their shapes
 * rewritten from the canonical basis and their listing order into out[0..c-1]. */
static int order_cluster(int c, const int *mem, const modal_item *it, int n, double *sre, double *sim, int *out)
{
    /* ints: par, cm (member -> component), owner (coordinate -> a member), cc (coordinate -> component),
     * lidx (coordinate -> local index), nnz, asg, bucket counts (2 c + 3), kcomp (step -> component),
     * the components' coordinate and member lists */
    size_t ni = (size_t)7 * c + 3 * (size_t)n + 2 * (size_t)c + 3 + (size_t)n + (size_t)c + 8;
    int *ib = mbl_alloc_array(ni, sizeof *ib);
    cl_comp *comps = mbl_calloc((size_t)c + 1, sizeof *comps);
    int size = 1;
    while (size < n) size <<= 1;
    double *seg = mbl_calloc(2 * (size_t)size, sizeof *seg);
    if (!ib || !comps || !seg) {
        mbl_free(ib), mbl_free(comps), mbl_free(seg);
        return MBL_ENOMEM;
    }
    int *par = ib, *cm = par + c, *owner = cm + c, *cc = owner + n, *lidx = cc + n, *asg = lidx + n;
    int *cnt = asg + c, *kcomp = cnt + 2 * c + 3, *crds = kcomp + c, *mems = crds + n, *kgl = mems + c;
    for (int m = 0; m < c; m++) par[m] = m;
    for (int i = 0; i < n; i++) owner[i] = -1;
    /* components: members joined through the coordinates their shapes share */
    for (int m = 0; m < c; m++) {
        size_t o = (size_t)it[mem[m]].idx * n;
        for (int i = 0; i < n; i++) {
            if (sre[o + i] == 0.0 && sim[o + i] == 0.0) continue;
            if (owner[i] < 0) {
                owner[i] = m;
                continue;
            }
            int a = root_of(par, m), b = root_of(par, owner[i]);
            if (a != b) par[a > b ? a : b] = a < b ? a : b;
        }
    }
    int nk = 0;
    for (int m = 0; m < c; m++) {
        int rt = root_of(par, m);
        if (rt == m) comps[nk].done = 0, cm[m] = nk++;
        else cm[m] = cm[rt];
        comps[cm[m]].c++;
    }
    for (int i = 0; i < n; i++) {
        cc[i] = owner[i] < 0 ? -1 : cm[owner[i]];
        if (cc[i] >= 0) comps[cc[i]].nc++;
    }
    size_t fsz = 0;
    for (int k = 0, oc = 0, om = 0; k < nk; k++) {
        cl_comp *K = &comps[k];
        K->crd = crds + oc, K->mem = mems + om, K->kglob = kgl + om;
        oc += K->nc, om += K->c;
        fsz += (size_t)K->nc * K->c * 3;
        K->nc = K->c = 0;
    }
    for (int i = 0; i < n; i++)
        if (cc[i] >= 0) lidx[i] = comps[cc[i]].nc, comps[cc[i]].crd[comps[cc[i]].nc++] = i;
    for (int m = 0; m < c; m++) comps[cm[m]].mem[comps[cm[m]].c++] = m;
    double complex *arena = mbl_alloc_array(fsz + 1, sizeof *arena);
    if (!arena) {
        mbl_free(ib), mbl_free(comps), mbl_free(seg);
        return MBL_ENOMEM;
    }
    int r = 0;
    for (int k = 0, off = 0; k < nk; k++) { /* the shapes folded into the upper half plane; Q */
        cl_comp *K = &comps[k];
        size_t b = (size_t)K->nc * K->c;
        K->F = arena + off, K->Q = K->F + b, K->U = K->Q + b;
        off += 3 * b;
        for (int t = 0; t < K->c; t++) {
            const modal_item *a = &it[mem[K->mem[t]]];
            for (int l = 0; l < K->nc; l++) {
                size_t o = (size_t)K->crd[l] + (size_t)a->idx * n;
                double complex v = sre[o] + I * sim[o];
                K->F[l + (size_t)t * K->nc] = a->im < 0 ? conj(v) : v;
            }
        }
        comp_gram_schmidt(K);
        r += K->r;
        for (int l = 0; l < K->nc; l++) seg[size + K->crd[l]] = comp_diag(K, l);
    }
    for (int i = size - 1; i >= 1; i--) seg[i] = fmax(seg[2 * i], seg[2 * i + 1]);
    /* the pivots: the largest diagonal entry of the deflated projector (the lowest coordinate
     * within ORDER_PIVOT_TIE of it), in whichever component it lies */
    int steps = 0;
    for (; steps < r; steps++) {
        double big = seg[1];
        if (!(big > 0)) break; /* nothing left (rounding): the rest get no vector */
        int piv = seg_first(seg, size, (1.0 - ORDER_PIVOT_TIE) * big);
        cl_comp *K = &comps[cc[piv]];
        if (K->done >= K->r) break;
        K->kglob[K->done] = steps, kcomp[steps] = cc[piv];
        comp_pivot(K, lidx[piv]);
        for (int l = 0; l < K->nc; l++) seg_set(seg, size, K->crd[l], comp_diag(K, l));
    }
    r = steps;
    /* each basis vector to the unassigned member (upper half plane and real ones, then lower) of its
     * component it correlates best with; the rest to the vector they correlate best with; zero
     * shapes last */
    for (int m = 0; m < c; m++) asg[m] = -1;
    for (int half = 0; half < 2; half++)
        for (int k = 0; k < r; k++) {
            cl_comp *K = &comps[kcomp[k]];
            int t = 0, best = -1;
            while (K->kglob[t] != k) t++;
            double bm = -1;
            for (int a = 0; a < K->c; a++) {
                int m = K->mem[a];
                if (asg[m] >= 0 || (it[mem[m]].im < 0) != half) continue;
                double q = mac_c(K->nc, K->F + (size_t)a * K->nc, K->U + (size_t)t * K->nc);
                if (q > 0 && q > bm) bm = q, best = m;
            }
            if (best >= 0) asg[best] = k;
        }
    for (int k = 0; k < nk; k++) {
        cl_comp *K = &comps[k];
        for (int a = 0; a < K->c; a++) {
            int m = K->mem[a];
            if (asg[m] >= 0) continue;
            double bm = 0;
            asg[m] = r;
            for (int t = 0; t < K->done; t++) {
                double q = mac_c(K->nc, K->F + (size_t)a * K->nc, K->U + (size_t)t * K->nc);
                if (q > bm) bm = q, asg[m] = K->kglob[t];
            }
        }
    }
    for (int m = 0; m < c; m++) {
        const modal_item *a = &it[mem[m]];
        if (asg[m] >= r) continue;
        cl_comp *K = &comps[kcomp[asg[m]]];
        int t = 0;
        while (K->kglob[t] != asg[m]) t++;
        const double complex *u = K->U + (size_t)t * K->nc;
        double *cr = sre + (size_t)a->idx * n, *ci = sim + (size_t)a->idx * n;
        memset(cr, 0, (size_t)n * sizeof *cr), memset(ci, 0, (size_t)n * sizeof *ci);
        for (int l = 0; l < K->nc; l++) {
            double complex v = a->im < 0 ? conj(u[l]) : u[l];
            cr[K->crd[l]] = creal(v) + 0.0;
            ci[K->crd[l]] = cimag(v) + 0.0;
        }
    }
    /* the listing: by vector (the unassigned last), upper half plane first, in member order (a
     * counting sort on the key 2 asg + half) */
    for (int b = 0; b < 2 * r + 3; b++) cnt[b] = 0;
    for (int m = 0; m < c; m++) cnt[2 * asg[m] + (it[mem[m]].im < 0) + 1]++;
    for (int b = 1; b < 2 * r + 3; b++) cnt[b] += cnt[b - 1];
    for (int m = 0; m < c; m++) out[cnt[2 * asg[m] + (it[mem[m]].im < 0)]++] = mem[m];
    mbl_free(arena), mbl_free(ib), mbl_free(comps), mbl_free(seg);
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
        if (i > 0 && same_point(&it[i - 1], &it[i])) { /* the same links as its predecessor's: joined */
            int a = root_of(parent, i - 1), b = root_of(parent, i);
            if (a != b) parent[a > b ? a : b] = a < b ? a : b;
            continue;
        }
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
