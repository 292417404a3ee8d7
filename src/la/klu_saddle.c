/* A fill-reducing order for KLU that respects a saddle-point structure (mbla_klu_opts.saddle).
 *
 * A constrained mechanism's Newton matrix and its shift-invert matrix K - sigma M are
 * [K G^T; G 0]: the multipliers' columns have no diagonal entry. KLU's default (a maximum
 * transversal on the diagonal, BTF, AMD on the permuted B + B^T) orders them without knowing
 * where the pivots of those columns will come from, and its threshold pivoting then takes them
 * where the order did not plan them: on the spatial beam bodies (an Euler-parameter column whose
 * diagonal is tiny beside its constraint row) the factor filled 10 times AMD's estimate.
 *
 * Here each column z without a structural diagonal entry is merged with the coordinates c it
 * couples to (a diagonal entry, A(c, z) and A(z, c) both in the pattern): always with the one of
 * largest |A(c, z)|, with the others while the group stays within MBLA_KLU_SADDLE_GROUP_MAX
 * columns (an Euler-parameter normalization thus groups its four parameters: the null direction
 * of their stiffness is pivoted inside the group). AMD orders the graph of the groups (A + A^T),
 * and the order is expanded group by group, coordinates first. KLU (no BTF, this order as its
 * user ordering) then factors each group as one block: wherever its threshold pivoting takes a
 * pivot inside the group, the rows stay inside the group's merged pattern, so the fill stays that
 * of the groups' AMD order. Where the groups' dense blocks alone pass the caller's limit on the
 * estimate (lnz_max: klu.c declines such an order), the grouping stops there and no order is
 * made (the chains of the N-loop four-bar's Newton matrix). */
#include "la/la_internal.h"

#include <amd.h>
#include <math.h>
#include <string.h>

/* Largest group of columns merged around the multiplier columns (documented in la.h). */
#define MBLA_KLU_SADDLE_GROUP_MAX 64

/* The matrix ordered: B = A Q, column j of B column q[j] of A (q NULL: B = A), its columns read
 * in place. */
typedef struct {
    const int *p, *i, *q;
} bview;

static inline int bcol(const bview *b, int j) { return b->q ? b->q[j] : j; }

/* position in A's arrays of row r in column j of B (rows sorted), -1 if absent */
static int find_row(const bview *b, int j, int r)
{
    const int *i = b->i;
    j = bcol(b, j);
    int lo = b->p[j], hi = b->p[j + 1] - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (i[mid] == r) return mid;
        if (i[mid] < r) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

static double mag(const double *x, int cplx, int t)
{
    if (!x) return 1.0;
    return cplx ? hypot(x[2 * t], x[2 * t + 1]) : fabs(x[t]);
}

/* union-find root of j */
static int root(int *up, int j)
{
    while (up[j] != j) up[j] = up[up[j]], j = up[j];
    return j;
}

/* The groups: up (n) a union-find forest whose roots have size[] columns. Each column z without
 * a diagonal entry joins its candidates c (a diagonal entry, A(c, z) and A(z, c) both present):
 * first the one of largest |A(c, z)|, then the others while the group stays within
 * MBLA_KLU_SADDLE_GROUP_MAX columns. *npairs: the columns z that found a candidate. hasdiag,
 * cand (n): scratch.
 * *dense: the groups' dense blocks, sum of s (s - 1) / 2 (a merge of groups of sizes a and b adds
 * a b). Returns 1, the grouping left unfinished, as soon as dense + n exceeds lnz_max (> 0): the
 * order's estimate of nnz(L) is at least that (la_klu_saddle_order), so it is declined already. */
static int group_columns(int n, const bview *B, const double *x, int cplx, int *up, int *size, int *hasdiag,
                         int *cand, int *npairs, double lnz_max, double *dense)
{
    const int *p = B->p, *i = B->i;
    for (int j = 0; j < n; j++) up[j] = j, size[j] = 1, hasdiag[j] = find_row(B, j, j) >= 0;
    *npairs = 0;
    *dense = 0.0;
    for (int z = 0; z < n; z++) {
        if (hasdiag[z]) continue;
        int best = -1, nc = 0; /* cand[0..nc): z's candidates, in column order */
        double bv = -1.0;
        int az = bcol(B, z);
        for (int t = p[az]; t < p[az + 1]; t++) {
            int c = i[t];
            if (!hasdiag[c] || find_row(B, c, z) < 0) continue;
            cand[nc++] = c;
            double v = mag(x, cplx, t);
            if (v > bv) bv = v, best = c;
        }
        if (best < 0) continue;
        (*npairs)++;
        for (int pass = 0; pass < 2; pass++)
            for (int u = 0; u < nc; u++) {
                int c = cand[u];
                if ((pass == 0) != (c == best)) continue;
                int a = root(up, z), b = root(up, c);
                if (a == b || (pass == 1 && size[a] + size[b] > MBLA_KLU_SADDLE_GROUP_MAX)) continue;
                if (size[a] < size[b]) a ^= b, b ^= a, a ^= b;
                *dense += (double)size[a] * size[b];
                up[b] = a, size[a] += size[b];
                if (lnz_max > 0 && *dense + n > lnz_max) return 1;
            }
    }
    return 0;
}

int la_klu_saddle_order(int n, const int *p, const int *i, const double *x, int cplx, const int *q, double lnz_max,
                        int *perm, double *lnz, int *npairs, mbl_status *st)
{
    const bview b = {p, i, q};
    const char *fn = "mbla_klu (saddle order)";
    int nz = p[n];
    int *up = mbl_alloc_array((size_t)n + 1, sizeof *up);
    int *size = mbl_alloc_array((size_t)n + 1, sizeof *size);
    int *hasdiag = mbl_alloc_array((size_t)n + 1, sizeof *hasdiag);
    int *node = mbl_alloc_array((size_t)n + 1, sizeof *node);     /* merged node of each column */
    int *head = mbl_alloc_array((size_t)n + 2, sizeof *head);     /* a node's columns: mem[head[k]..] */
    int *mem = mbl_alloc_array((size_t)n + 1, sizeof *mem);
    int *cp = mbl_alloc_array((size_t)n + 2, sizeof *cp);
    int *ci = mbl_alloc_array((size_t)nz + 1, sizeof *ci);
    int *pc = mbl_alloc_array((size_t)n + 1, sizeof *pc);
    int r = 0;
    if (!up || !size || !hasdiag || !node || !head || !mem || !cp || !ci || !pc) {
        r = mbl_error(st, MBL_ENOMEM, "%s: out of memory (n = %d, nnz = %d)", fn, n, nz);
        goto done;
    }
    double dense = 0.0;
    if (group_columns(n, &b, x, cplx, up, size, hasdiag, mem, npairs, lnz_max, &dense)) { /* mem: its scratch */
        *lnz = dense + n; /* above lnz_max: declined, perm not made */
        goto done;
    }
    /* merged nodes, numbered in the order of their first column */
    int nc = 0;
    for (int j = 0; j < n; j++) node[j] = -1;
    for (int j = 0; j < n; j++) {
        int a = root(up, j);
        if (node[a] < 0) node[a] = nc++;
        node[j] = node[a];
    }
    /* a node's columns: those with a diagonal entry first, then the multipliers (original order) */
    memset(head, 0, ((size_t)nc + 2) * sizeof *head);
    for (int j = 0; j < n; j++) head[node[j] + 2]++;
    for (int k = 0; k < nc; k++) head[k + 2] += head[k + 1];
    for (int pass = 0; pass < 2; pass++)
        for (int j = 0; j < n; j++)
            if (hasdiag[j] == !pass) mem[head[node[j] + 1]++] = j;
    /* the merged pattern (duplicates allowed: AMD sorts and merges them) */
    memset(cp, 0, ((size_t)nc + 2) * sizeof *cp);
    for (int j = 0; j < n; j++) cp[node[j] + 2] += p[bcol(&b, j) + 1] - p[bcol(&b, j)];
    for (int k = 0; k < nc; k++) cp[k + 2] += cp[k + 1];
    for (int j = 0; j < n; j++)
        for (int t = p[bcol(&b, j)]; t < p[bcol(&b, j) + 1]; t++) ci[cp[node[j] + 1]++] = node[i[t]];
    double info[AMD_INFO];
    int ar = amd_order(nc, cp, ci, pc, NULL, info);
    if (ar == AMD_OUT_OF_MEMORY) {
        r = mbl_error(st, MBL_ENOMEM, "%s: AMD out of memory (n = %d, nnz = %d)", fn, n, nz);
        goto done;
    }
    if (ar < AMD_OK) {
        r = mbl_error(st, MBL_ELIB, "%s: AMD failed (status %d)", fn, ar);
        goto done;
    }
    /* expand; nnz(L) estimated from the merged order's: its columns scaled by the mean node size,
     * plus each node's own dense block */
    int k = 0;
    dense = 0.0;
    for (int t = 0; t < nc; t++) {
        int a = pc[t], s0 = a ? head[a] : 0, s1 = head[a + 1];
        for (int u = s0; u < s1; u++) perm[k++] = mem[u];
        dense += 0.5 * (double)(s1 - s0) * (s1 - s0 - 1);
    }
    double w = (double)n / (nc > 0 ? nc : 1);
    *lnz = info[AMD_LNZ] * w * w + dense + n;
done:
    mbl_free(up), mbl_free(size), mbl_free(hasdiag), mbl_free(node), mbl_free(head), mbl_free(mem);
    mbl_free(cp), mbl_free(ci), mbl_free(pc);
    return r;
}
