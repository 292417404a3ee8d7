/* Sparse matrices in compressed sparse column form (0-based, sorted, no duplicates). */
#include "la/la_equilibrate.h"
#include "la/la_internal.h"

#include <limits.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int la_csc_arg(const mbla_csc *A, const char *fn, const char *name, mbl_status *st)
{
    if (!A) return mbl_error(st, MBL_EARG, "%s: %s is NULL", fn, name);
    if (A->m < 0 || A->n < 0)
        return mbl_error(st, MBL_EDIM, "%s: %s has negative size %d x %d", fn, name, A->m, A->n);
    if (!A->p) return mbl_error(st, MBL_EARG, "%s: %s has no column pointers", fn, name);
    if (A->p[A->n] > 0 && (!A->i || !A->x))
        return mbl_error(st, MBL_EARG, "%s: %s has entries but no index/value arrays", fn, name);
    return 0;
}

void mbla_csc_free(mbla_csc *A)
{
    if (!A) return;
    mbl_free(A->p);
    mbl_free(A->i);
    mbl_free(A->x);
    mbl_free(A);
}

int mbla_csc_new(int m, int n, int nzmax, mbla_csc **out, mbl_status *st)
{
    if (!out) return mbl_error(st, MBL_EARG, "mbla_csc_new: out is NULL");
    *out = NULL;
    if (m < 0 || n < 0 || nzmax < 0)
        return mbl_error(st, MBL_EDIM, "mbla_csc_new: negative size (%d x %d, nzmax %d)", m, n, nzmax);
    if (n == INT_MAX) return mbl_error(st, MBL_ENOMEM, "mbla_csc_new: n too large");
    mbla_csc *A = mbl_calloc(1, sizeof *A);
    if (!A) return mbl_error(st, MBL_ENOMEM, "mbla_csc_new: out of memory");
    A->m = m;
    A->n = n;
    A->p = mbl_calloc((size_t)n + 1, sizeof *A->p);
    A->i = mbl_alloc_array((size_t)nzmax, sizeof *A->i);
    A->x = mbl_alloc_array((size_t)nzmax, sizeof *A->x);
    if (!A->p || !A->i || !A->x) {
        mbla_csc_free(A);
        return mbl_error(st, MBL_ENOMEM, "mbla_csc_new: out of memory (%d x %d, nzmax %d)", m, n,
                         nzmax);
    }
    *out = A;
    return 0;
}

int mbla_csc_nnz(const mbla_csc *A) { return A && A->p ? A->p[A->n] : 0; }

double mbla_csc_norm1(const mbla_csc *A)
{
    double m = 0;
    for (int j = 0; j < A->n; j++) {
        double s = 0;
        for (int q = A->p[j]; q < A->p[j + 1]; q++) s += fabs(A->x[q]);
        m = fmax(m, s);
    }
    return m;
}

int mbla_csc_check(const mbla_csc *A, mbl_status *st)
{
    const char *fn = "mbla_csc_check";
    int r = la_csc_arg(A, fn, "A", st);
    if (r) return r;
    if (A->p[0] != 0) return mbl_error(st, MBL_EDIM, "%s: p[0] = %d, must be 0", fn, A->p[0]);
    for (int j = 0; j < A->n; j++) {
        if (A->p[j + 1] < A->p[j])
            return mbl_error(st, MBL_EDIM, "%s: column pointers decrease at column %d", fn, j);
        for (int k = A->p[j]; k < A->p[j + 1]; k++) {
            int i = A->i[k];
            if (i < 0 || i >= A->m)
                return mbl_error(st, MBL_EDIM, "%s: entry %d: row %d out of range in column %d", fn,
                                 k, i, j);
            if (k > A->p[j] && A->i[k - 1] >= i)
                return mbl_error(st, MBL_EDIM,
                                 "%s: entry %d: rows not sorted or duplicated in column %d", fn, k,
                                 j);
        }
    }
    return 0;
}

int mbla_csc_copy(const mbla_csc *A, mbla_csc **out, mbl_status *st)
{
    if (!out) return mbl_error(st, MBL_EARG, "mbla_csc_copy: out is NULL");
    *out = NULL;
    int r = la_csc_arg(A, "mbla_csc_copy", "A", st);
    if (r) return r;
    int nz = A->p[A->n];
    mbla_csc *C;
    if ((r = mbla_csc_new(A->m, A->n, nz, &C, st))) return r;
    memcpy(C->p, A->p, ((size_t)A->n + 1) * sizeof *C->p);
    if (nz) {
        memcpy(C->i, A->i, (size_t)nz * sizeof *C->i);
        memcpy(C->x, A->x, (size_t)nz * sizeof *C->x);
    }
    *out = C;
    return 0;
}

/* Transpose into a new matrix. A transpose always produces sorted row indices, which the
 * routines below use to sort a matrix assembled with unsorted columns (two transposes). */
static int transpose_raw(const mbla_csc *A, mbla_csc **out, mbl_status *st)
{
    mbla_csc *T;
    int nz = A->p[A->n];
    int r = mbla_csc_new(A->n, A->m, nz, &T, st);
    if (r) return r;
    int *w = mbl_calloc((size_t)A->m + 1, sizeof *w);
    if (!w) {
        mbla_csc_free(T);
        return mbl_error(st, MBL_ENOMEM, "mbla_csc_transpose: out of memory");
    }
    for (int k = 0; k < nz; k++) w[A->i[k]]++;
    int s = 0;
    for (int i = 0; i < A->m; i++) {
        T->p[i] = s;
        s += w[i];
        w[i] = T->p[i];
    }
    T->p[A->m] = s;
    for (int j = 0; j < A->n; j++)
        for (int k = A->p[j]; k < A->p[j + 1]; k++) {
            int q = w[A->i[k]]++;
            T->i[q] = j;
            T->x[q] = A->x[k];
        }
    mbl_free(w);
    *out = T;
    return 0;
}

int mbla_csc_transpose(const mbla_csc *A, mbla_csc **out, mbl_status *st)
{
    if (!out) return mbl_error(st, MBL_EARG, "mbla_csc_transpose: out is NULL");
    *out = NULL;
    int r = la_csc_arg(A, "mbla_csc_transpose", "A", st);
    if (r) return r;
    return transpose_raw(A, out, st);
}

/* Sort the row indices of every column of *A (no duplicates assumed) by transposing twice;
 * replaces *A. */
static int sort_columns(mbla_csc **A, mbl_status *st)
{
    mbla_csc *T, *S;
    int r = transpose_raw(*A, &T, st);
    if (r) return r;
    r = transpose_raw(T, &S, st);
    mbla_csc_free(T);
    if (r) return r;
    mbla_csc_free(*A);
    *A = S;
    return 0;
}

/* A triplet's key in compressed-column order, and its index */
typedef struct {
    long long key;
    int k;
} triplet_key;

static int triplet_key_cmp(const void *a, const void *b)
{
    const triplet_key *x = a, *y = b;
    return x->key != y->key ? (x->key > y->key) - (x->key < y->key) : (x->k > y->k) - (x->k < y->k);
}

/* The number of the first np triplets (keys increasing) whose key is below key (strict) or at
 * most key (!strict): a binary search. */
static int prefix_count(const int *ti, const int *tj, int m, int np, long long key, int strict)
{
    int lo = 0, hi = np;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        long long k = (long long)tj[mid] * m + ti[mid];
        if (strict ? k < key : k <= key) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Triplets whose first np are in compressed-column order already (keys tj m + ti increasing: no
 * repeated entry among them) and whose nz - np others, a short tail, are sorted here by key (then
 * index) and merged in, the prefix's first on a tie. As the general path: the entries in key
 * order, each entry's values summed from 0.0 in the triplets' order (a lone -0.0 becomes +0.0). */
static int from_ordered_prefix(int m, int n, int nz, int np, const int *ti, const int *tj, const double *tx,
                               int *map, mbla_csc **out, mbl_status *st)
{
    int nt = nz - np, unique = np;
    triplet_key *t = mbl_alloc_array((size_t)nt + 1, sizeof *t);
    if (!t) return mbl_error(st, MBL_ENOMEM, "mbla_csc_from_triplets: out of memory (nz = %d)", nz);
    for (int u = 0; u < nt; u++) t[u].key = (long long)tj[np + u] * m + ti[np + u], t[u].k = np + u;
    if (nt > 1) qsort(t, (size_t)nt, sizeof *t, triplet_key_cmp);
    for (int u = 0; u < nt; u++) { /* the tail's keys not in the prefix, each once */
        int p = prefix_count(ti, tj, m, np, t[u].key, 1);
        unique += (p == np || (long long)tj[p] * m + ti[p] != t[u].key) && (u == 0 || t[u].key != t[u - 1].key);
    }
    mbla_csc *A = NULL;
    int r = mbla_csc_new(m, n, unique, &A, st);
    if (r) {
        mbl_free(t);
        return r;
    }
    int *Ap = A->p, *Ai = A->i, pos = -1, j = 0;
    double *Ax = A->x;
    for (int u = 0, p = 0; u <= nt; u++) {
        /* the prefix's entries up to the next tail triplet's key (each a new entry), then that one */
        int last = u == nt, pend = last ? np : prefix_count(ti, tj, m, np, t[u].key, 0);
        for (; p < pend; p++) {
            for (pos++; j <= tj[p]; j++) Ap[j] = pos;
            Ai[pos] = ti[p];
            Ax[pos] = 0.0 + (tx ? tx[p] : 0.0);
            if (map) map[p] = pos;
        }
        if (last) break;
        int k = t[u].k;
        if (pos < 0 || Ai[pos] != ti[k] || j <= tj[k]) { /* not the entry before it */
            for (pos++; j <= tj[k]; j++) Ap[j] = pos;
            Ai[pos] = ti[k];
            Ax[pos] = 0.0;
        }
        Ax[pos] += tx ? tx[k] : 0.0;
        if (map) map[k] = pos;
    }
    for (; j <= n; j++) Ap[j] = pos + 1;
    mbl_free(t);
    *out = A;
    return 0;
}

/* Columns of at most this many triplets are sorted by row on their own (insertion sort) where the
 * triplets leave some column's rows unsorted; a longer one sends all through the transpose trick. */
#define LA_CSC_SORT_COLUMN_MAX 32

/* bycol: the triplet ids bucketed by column, stably in the order `order` (NULL: 0, 1, ..., nz - 1);
 * colcount[j] holds column j's start, on return its end. */
static void bucket_by_column(int nz, const int *tj, const int *order, int *colcount, int *bycol)
{
    for (int q = 0; q < nz; q++) {
        int k = order ? order[q] : q;
        bycol[colcount[tj[k]]++] = k;
    }
}

/* A's entries (room for every triplet) from the bucketed triplets (colend[j]: column j's end in
 * bycol), a repeated entry (the one before it in its column) summed from 0.0 in the triplets'
 * order, map[k] the entry of triplet k: the number of entries, or -1 when some column's rows are
 * not nondecreasing (what was written is then of no use). One pass, where counting the entries
 * first took a second over the triplets (14 instructions of the 63 a triplet cost). */
static int fill_columns(mbla_csc *A, int n, const int *ti, const double *tx, const int *bycol, const int *colend,
                        int *map)
{
    int pos = -1, q = 0, *Ai = A->i;
    double *Ax = A->x;
    for (int j = 0; j < n; j++) {
        A->p[j] = pos + 1;
        for (int prev = -1; q < colend[j]; q++) {
            int k = bycol[q], i = ti[k];
            if (i != prev) {
                if (i < prev) return -1;
                prev = i;
                pos++;
                Ai[pos] = i;
                Ax[pos] = 0.0;
            }
            Ax[pos] += tx ? tx[k] : 0.0;
            if (map) map[k] = pos;
        }
    }
    A->p[n] = pos + 1;
    return pos + 1;
}

/* Column j's triplet ids bycol[q0..q1) stably sorted by row (insertion sort: a short column) */
static void sort_column_rows(const int *ti, int *bycol, int q0, int q1)
{
    for (int q = q0 + 1; q < q1; q++) {
        int k = bycol[q], i = ti[k], u = q;
        for (; u > q0 && ti[bycol[u - 1]] > i; u--) bycol[u] = bycol[u - 1];
        bycol[u] = k;
    }
}

/* The triplets' column counts (colcount[j + 1], cleared before) from k0 on, their indices checked:
 * 0, or the first triplet out of range plus 1 (as a negative number) */
static int count_columns(int m, int n, int nz, int k0, const int *ti, const int *tj, int *colcount)
{
    for (int k = k0; k < nz; k++) {
        if ((unsigned)ti[k] >= (unsigned)m || (unsigned)tj[k] >= (unsigned)n) return -(k + 1);
        colcount[tj[k] + 1]++;
    }
    return 0;
}

int mbla_csc_from_triplets(int m, int n, int nz, const int *ti, const int *tj,
                           const double *tx, int *map, mbla_csc **out, mbl_status *st)
{
    const char *fn = "mbla_csc_from_triplets";
    if (!out) return mbl_error(st, MBL_EARG, "%s: out is NULL", fn);
    *out = NULL;
    if (m < 0 || n < 0 || nz < 0)
        return mbl_error(st, MBL_EDIM, "%s: negative size (%d x %d, nz %d)", fn, m, n, nz);
    if (nz > 0 && (!ti || !tj)) return mbl_error(st, MBL_EARG, "%s: ti or tj is NULL", fn);
    /* the triplets before np in compressed-column order (the keys tj m + ti increasing), their
     * indices checked; the rest checked as the general path counts its columns (one pass) */
    int np = nz, bad = -1;
    long long prev = -1;
    for (int k = 0; k < nz; k++) {
        if ((unsigned)ti[k] >= (unsigned)m || (unsigned)tj[k] >= (unsigned)n) {
            bad = k;
            break;
        }
        long long key = (long long)tj[k] * m + ti[k];
        if (key <= prev) {
            np = k;
            break;
        }
        prev = key;
    }
    int ordered = bad < 0 && nz - np <= nz / 8;
    for (int k = np; ordered && k < nz && bad < 0; k++) /* the ordered path's tail */
        if ((unsigned)ti[k] >= (unsigned)m || (unsigned)tj[k] >= (unsigned)n) bad = k;
    if (bad >= 0)
        return mbl_error(st, MBL_EDIM, "%s: triplet %d: index (%d, %d) out of range for %d x %d", fn, bad, ti[bad],
                         tj[bad], m, n);
    if (ordered) return from_ordered_prefix(m, n, nz, np, ti, tj, tx, map, out, st);
    /* bucket by column (counting sort), stably in the triplets' order; where that leaves some
     * column's rows unsorted, each such column sorted by row (stably: short columns, by insertion),
     * or, with a column longer than LA_CSC_SORT_COLUMN_MAX, the transpose trick: first bucket by
     * row, then stably by column. */
    /* the scratch in one allocation: rowcount (m + 1), colcount (n + 1), byrow (nz: triplet ids
     * sorted by row), bycol (nz: then stably by column) */
    size_t ncount = (size_t)m + (size_t)n + 2;
    int *rowcount = mbl_alloc_array(ncount + 2 * (size_t)nz + 1, sizeof *rowcount);
    int *colcount = rowcount ? rowcount + (size_t)m + 1 : NULL;
    int *byrow = rowcount ? rowcount + ncount : NULL;
    int *bycol = rowcount ? byrow + (size_t)nz : NULL;
    mbla_csc *A = NULL;
    int r = 0;
    if (rowcount) memset(rowcount, 0, ncount * sizeof *rowcount);
    if (!rowcount) {
        r = mbl_error(st, MBL_ENOMEM, "%s: out of memory (nz = %d)", fn, nz);
        goto done;
    }
    for (int k = 0; k < np; k++) colcount[tj[k] + 1]++; /* checked above */
    if ((bad = -count_columns(m, n, nz, np, ti, tj, colcount) - 1) >= 0) {
        r = mbl_error(st, MBL_EDIM, "%s: triplet %d: index (%d, %d) out of range for %d x %d", fn, bad, ti[bad],
                      tj[bad], m, n);
        goto done;
    }
    int longest = 0;
    for (int j = 0; j < n; j++) {
        if (colcount[j + 1] > longest) longest = colcount[j + 1];
        colcount[j + 1] += colcount[j];
    }
    bucket_by_column(nz, tj, NULL, colcount, bycol);
    /* colcount[j] is now the end of column j: the entries filled at once (room for every triplet,
     * the arrays cut to the count after), the columns' rows checked as they come */
    if ((r = mbla_csc_new(m, n, nz, &A, st))) goto done;
    int unique = fill_columns(A, n, ti, tx, bycol, colcount, map);
    if (unique < 0 && longest <= LA_CSC_SORT_COLUMN_MAX) {
        for (int j = 0; j < n; j++) sort_column_rows(ti, bycol, j ? colcount[j - 1] : 0, colcount[j]);
        unique = fill_columns(A, n, ti, tx, bycol, colcount, map); /* rows nondecreasing now */
    } else if (unique < 0) {
        for (int k = 0; k < nz; k++) rowcount[ti[k] + 1]++;
        for (int i = 0; i < m; i++) rowcount[i + 1] += rowcount[i];
        for (int k = 0; k < nz; k++) byrow[rowcount[ti[k]]++] = k;
        for (int j = n; j > 0; j--) colcount[j] = colcount[j - 1]; /* the columns' starts again */
        colcount[0] = 0;
        bucket_by_column(nz, tj, byrow, colcount, bycol);
        unique = fill_columns(A, n, ti, tx, bycol, colcount, map); /* rows nondecreasing now */
    }
    if (unique < nz) { /* a repeated entry: the arrays to the entries' count (a shrink: stays if refused) */
        int *ai = mbl_realloc_array(A->i, (size_t)(unique ? unique : 1), sizeof *ai);
        if (ai) A->i = ai;
        double *ax = mbl_realloc_array(A->x, (size_t)(unique ? unique : 1), sizeof *ax);
        if (ax) A->x = ax;
    }
    *out = A;
done:
    if (r) mbla_csc_free(A);
    mbl_free(rowcount);
    return r;
}

void mbla_csc_refill(mbla_csc *A, int nz, const int *map, const double *tx)
{
    int nnz = A->p[A->n];
    for (int k = 0; k < nnz; k++) A->x[k] = 0.0;
    for (int k = 0; k < nz; k++) A->x[map[k]] += tx[k];
}

int mbla_csc_gemv(const mbla_csc *A, double alpha, const double *x, double beta, double *y,
                  mbl_status *st)
{
    int r = la_csc_arg(A, "mbla_csc_gemv", "A", st);
    if (r) return r;
    if ((!x && A->n) || (!y && A->m)) return mbl_error(st, MBL_EARG, "mbla_csc_gemv: x or y is NULL");
    for (int i = 0; i < A->m; i++) y[i] = beta == 0.0 ? 0.0 : beta * y[i];
    if (alpha == 0.0) return 0;
    for (int j = 0; j < A->n; j++) {
        double xj = alpha * x[j];
        for (int k = A->p[j]; k < A->p[j + 1]; k++) y[A->i[k]] += A->x[k] * xj;
    }
    return 0;
}

int mbla_csc_gemv_t(const mbla_csc *A, double alpha, const double *x, double beta, double *y,
                    mbl_status *st)
{
    int r = la_csc_arg(A, "mbla_csc_gemv_t", "A", st);
    if (r) return r;
    if ((!x && A->m) || (!y && A->n))
        return mbl_error(st, MBL_EARG, "mbla_csc_gemv_t: x or y is NULL");
    for (int j = 0; j < A->n; j++) {
        double s = 0.0;
        for (int k = A->p[j]; k < A->p[j + 1]; k++) s += A->x[k] * x[A->i[k]];
        y[j] = (beta == 0.0 ? 0.0 : beta * y[j]) + alpha * s;
    }
    return 0;
}

int mbla_csc_matmul(const mbla_csc *A, const mbla_csc *B, mbla_csc **out, mbl_status *st)
{
    const char *fn = "mbla_csc_matmul";
    if (!out) return mbl_error(st, MBL_EARG, "%s: out is NULL", fn);
    *out = NULL;
    int r;
    if ((r = la_csc_arg(A, fn, "A", st)) || (r = la_csc_arg(B, fn, "B", st))) return r;
    if (A->n != B->m)
        return mbl_error(st, MBL_EDIM, "%s: inner dimensions differ (%d x %d times %d x %d)", fn,
                         A->m, A->n, B->m, B->n);
    int m = A->m, n = B->n;
    int *mark = mbl_alloc_array((size_t)m, sizeof *mark);
    if (!mark && m) return mbl_error(st, MBL_ENOMEM, "%s: out of memory", fn);
    /* pass 1: count nnz(C) */
    long long total = 0;
    for (int i = 0; i < m; i++) mark[i] = -1;
    for (int j = 0; j < n; j++)
        for (int kb = B->p[j]; kb < B->p[j + 1]; kb++) {
            int c = B->i[kb];
            for (int ka = A->p[c]; ka < A->p[c + 1]; ka++)
                if (mark[A->i[ka]] != j) {
                    mark[A->i[ka]] = j;
                    total++;
                }
        }
    if (total > INT_MAX) {
        mbl_free(mark);
        return mbl_error(st, MBL_ENOMEM, "%s: product has %lld entries (int overflow)", fn, total);
    }
    double *acc = mbl_alloc_array((size_t)m, sizeof *acc);
    mbla_csc *C = NULL;
    if ((!acc && m) || (r = mbla_csc_new(m, n, (int)total, &C, st))) {
        mbl_free(mark);
        mbl_free(acc);
        return r ? r : mbl_error(st, MBL_ENOMEM, "%s: out of memory", fn);
    }
    /* pass 2: Gustavson's algorithm, columns unsorted */
    for (int i = 0; i < m; i++) mark[i] = -1;
    int pos = 0;
    for (int j = 0; j < n; j++) {
        C->p[j] = pos;
        int start = pos;
        for (int kb = B->p[j]; kb < B->p[j + 1]; kb++) {
            int c = B->i[kb];
            double bx = B->x[kb];
            for (int ka = A->p[c]; ka < A->p[c + 1]; ka++) {
                int i = A->i[ka];
                if (mark[i] != j) {
                    mark[i] = j;
                    acc[i] = 0.0;
                    C->i[pos++] = i;
                }
                acc[i] += A->x[ka] * bx;
            }
        }
        for (int q = start; q < pos; q++) C->x[q] = acc[C->i[q]];
    }
    C->p[n] = pos;
    mbl_free(mark);
    mbl_free(acc);
    if ((r = sort_columns(&C, st))) {
        mbla_csc_free(C);
        return r;
    }
    *out = C;
    return 0;
}

int mbla_csc_add(double alpha, const mbla_csc *A, double beta, const mbla_csc *B,
                 mbla_csc **out, mbl_status *st)
{
    const char *fn = "mbla_csc_add";
    if (!out) return mbl_error(st, MBL_EARG, "%s: out is NULL", fn);
    *out = NULL;
    int r;
    if ((r = la_csc_arg(A, fn, "A", st)) || (r = la_csc_arg(B, fn, "B", st))) return r;
    if (A->m != B->m || A->n != B->n)
        return mbl_error(st, MBL_EDIM, "%s: sizes differ (%d x %d and %d x %d)", fn, A->m, A->n,
                         B->m, B->n);
    long long total = (long long)A->p[A->n] + B->p[B->n];
    if (total > INT_MAX) return mbl_error(st, MBL_ENOMEM, "%s: too many entries", fn);
    mbla_csc *C;
    if ((r = mbla_csc_new(A->m, A->n, (int)total, &C, st))) return r;
    int pos = 0;
    for (int j = 0; j < A->n; j++) {
        C->p[j] = pos;
        int ka = A->p[j], kb = B->p[j], ea = A->p[j + 1], eb = B->p[j + 1];
        while (ka < ea || kb < eb) {
            int ia = ka < ea ? A->i[ka] : INT_MAX, ib = kb < eb ? B->i[kb] : INT_MAX;
            if (ia < ib) {
                C->i[pos] = ia;
                C->x[pos++] = alpha * A->x[ka++];
            } else if (ib < ia) {
                C->i[pos] = ib;
                C->x[pos++] = beta * B->x[kb++];
            } else {
                C->i[pos] = ia;
                C->x[pos++] = alpha * A->x[ka++] + beta * B->x[kb++];
            }
        }
    }
    C->p[A->n] = pos;
    *out = C;
    return 0;
}

int mbla_csc_block(const mbla_csc *A, int r0, int r1, int c0, int c1, mbla_csc **out,
                   mbl_status *st)
{
    const char *fn = "mbla_csc_block";
    if (!out) return mbl_error(st, MBL_EARG, "%s: out is NULL", fn);
    *out = NULL;
    int r = la_csc_arg(A, fn, "A", st);
    if (r) return r;
    if (r0 < 0 || r1 < r0 || r1 > A->m || c0 < 0 || c1 < c0 || c1 > A->n)
        return mbl_error(st, MBL_EDIM, "%s: block rows [%d, %d) cols [%d, %d) outside %d x %d", fn,
                         r0, r1, c0, c1, A->m, A->n);
    int nz = 0;
    for (int j = c0; j < c1; j++)
        for (int k = A->p[j]; k < A->p[j + 1]; k++)
            if (A->i[k] >= r0 && A->i[k] < r1) nz++;
    mbla_csc *C;
    if ((r = mbla_csc_new(r1 - r0, c1 - c0, nz, &C, st))) return r;
    int pos = 0;
    for (int j = c0; j < c1; j++) {
        C->p[j - c0] = pos;
        for (int k = A->p[j]; k < A->p[j + 1]; k++)
            if (A->i[k] >= r0 && A->i[k] < r1) {
                C->i[pos] = A->i[k] - r0;
                C->x[pos++] = A->x[k];
            }
    }
    C->p[c1 - c0] = pos;
    *out = C;
    return 0;
}

int mbla_csc_select(const mbla_csc *A, int nr, const int *rows, int nc, const int *cols,
                    mbla_csc **out, mbl_status *st)
{
    const char *fn = "mbla_csc_select";
    if (!out) return mbl_error(st, MBL_EARG, "%s: out is NULL", fn);
    *out = NULL;
    int r = la_csc_arg(A, fn, "A", st);
    if (r) return r;
    if (nr < 0 || nc < 0) return mbl_error(st, MBL_EDIM, "%s: negative list length", fn);
    if ((!rows && nr != A->m) || (!cols && nc != A->n))
        return mbl_error(st, MBL_EARG, "%s: NULL index list needs the full length", fn);
    for (int b = 0; b < nc; b++)
        if (cols && (cols[b] < 0 || cols[b] >= A->n))
            return mbl_error(st, MBL_EDIM, "%s: cols[%d] = %d out of range (n = %d)", fn, b, cols[b],
                             A->n);
    int *rmap = mbl_alloc_array((size_t)A->m, sizeof *rmap);
    if (!rmap && A->m) return mbl_error(st, MBL_ENOMEM, "%s: out of memory", fn);
    for (int i = 0; i < A->m; i++) rmap[i] = rows ? -1 : i;
    int sorted = 1;
    for (int a = 0; rows && a < nr; a++) {
        if (rows[a] < 0 || rows[a] >= A->m || rmap[rows[a]] >= 0) {
            int bad = rows[a] >= 0 && rows[a] < A->m;
            mbl_free(rmap);
            return mbl_error(st, MBL_EDIM, "%s: rows[%d] = %d %s", fn, a, rows[a],
                             bad ? "repeated" : "out of range");
        }
        rmap[rows[a]] = a;
        if (a > 0 && rows[a] < rows[a - 1]) sorted = 0;
    }
    long long total = 0;
    for (int b = 0; b < nc; b++) {
        int j = cols ? cols[b] : b;
        for (int k = A->p[j]; k < A->p[j + 1]; k++)
            if (rmap[A->i[k]] >= 0) total++;
    }
    mbla_csc *C = NULL;
    if (total > INT_MAX) r = mbl_error(st, MBL_ENOMEM, "%s: too many entries", fn);
    else r = mbla_csc_new(nr, nc, (int)total, &C, st);
    if (r) {
        mbl_free(rmap);
        return r;
    }
    int pos = 0;
    for (int b = 0; b < nc; b++) {
        int j = cols ? cols[b] : b;
        C->p[b] = pos;
        for (int k = A->p[j]; k < A->p[j + 1]; k++)
            if (rmap[A->i[k]] >= 0) {
                C->i[pos] = rmap[A->i[k]];
                C->x[pos++] = A->x[k];
            }
    }
    C->p[nc] = pos;
    mbl_free(rmap);
    if (!sorted && (r = sort_columns(&C, st))) {
        mbla_csc_free(C);
        return r;
    }
    *out = C;
    return 0;
}

int mbla_csc_to_dense(const mbla_csc *A, double *D, int ldd, mbl_status *st)
{
    int r = la_csc_arg(A, "mbla_csc_to_dense", "A", st);
    if (r) return r;
    if (!D && A->m && A->n) return mbl_error(st, MBL_EARG, "mbla_csc_to_dense: D is NULL");
    if (ldd < la_max1(A->m))
        return mbl_error(st, MBL_EDIM, "mbla_csc_to_dense: ldd %d < max(1, %d)", ldd, A->m);
    for (int j = 0; j < A->n; j++) {
        for (int i = 0; i < A->m; i++) D[i + (size_t)j * ldd] = 0.0;
        for (int k = A->p[j]; k < A->p[j + 1]; k++) D[A->i[k] + (size_t)j * ldd] = A->x[k];
    }
    return 0;
}

int mbla_csc_from_dense(int m, int n, const double *D, int ldd, double droptol,
                        mbla_csc **out, mbl_status *st)
{
    const char *fn = "mbla_csc_from_dense";
    if (!out) return mbl_error(st, MBL_EARG, "%s: out is NULL", fn);
    *out = NULL;
    if (m < 0 || n < 0) return mbl_error(st, MBL_EDIM, "%s: negative size %d x %d", fn, m, n);
    if (!D && m && n) return mbl_error(st, MBL_EARG, "%s: D is NULL", fn);
    if (ldd < la_max1(m)) return mbl_error(st, MBL_EDIM, "%s: ldd %d < max(1, %d)", fn, ldd, m);
    if (droptol < 0) droptol = 0.0;
    long long nz = 0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++)
            if (fabs(D[i + (size_t)j * ldd]) > droptol) nz++;
    if (nz > INT_MAX) return mbl_error(st, MBL_ENOMEM, "%s: too many entries", fn);
    mbla_csc *A;
    int r = mbla_csc_new(m, n, (int)nz, &A, st);
    if (r) return r;
    int pos = 0;
    for (int j = 0; j < n; j++) {
        A->p[j] = pos;
        for (int i = 0; i < m; i++) {
            double v = D[i + (size_t)j * ldd];
            if (fabs(v) > droptol) {
                A->i[pos] = i;
                A->x[pos++] = v;
            }
        }
    }
    A->p[n] = pos;
    *out = A;
    return 0;
}

int mbla_csc_drop(mbla_csc *A, double tol)
{
    if (!A || !A->p) return 0;
    if (tol < 0) tol = 0.0;
    int pos = 0;
    for (int j = 0; j < A->n; j++) {
        int start = A->p[j];
        A->p[j] = pos;
        for (int k = start; k < A->p[j + 1]; k++)
            if (fabs(A->x[k]) > tol) {
                A->i[pos] = A->i[k];
                A->x[pos++] = A->x[k];
            }
    }
    A->p[A->n] = pos;
    return pos;
}

/* Power of two nearest 1/sqrt(x) (x > 0 finite): 2^-s with s = ceil(t / 2), t = floor(log2 x):
 * log2(x) / 2 lies in [t/2, (t+1)/2), so s is its nearest integer up to the mantissa (a factor
 * sqrt 2 at most). Exact, so scaling by it is. The exponent is read from the bits for normal
 * numbers (frexp and ldexp cost more than the rest of a sweep). */
static inline double inv_sqrt_pow2(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    int be = (int)((b >> 52) & 0x7ff), t, s;
    if (be == 0) { /* subnormal */
        int e = 0;
        frexp(x, &e);
        t = e - 1;
    } else {
        t = be - 1023;
    }
    s = t >= 0 ? (t + 1) / 2 : -((-t) / 2);
    uint64_t r = (uint64_t)(1023 - s) << 52; /* |s| <= 538: 2^-s is a normal double */
    double f;
    memcpy(&f, &r, sizeof f);
    return f;
}

/* f[k] = the factor of the norm f[k] for k < len: inv_sqrt_pow2(f[k]) for a positive finite norm,
 * else 1 (norms in [1/2, 2), the rest of a sweep that converged, read as 1 from the exponent's
 * bits: inv_sqrt_pow2's 2^0). 1 when some factor is not 1. */
static int pow2_factors(double *f, int len)
{
    int changed = 0;
    for (int k = 0; k < len; k++) {
        uint64_t b;
        memcpy(&b, &f[k], sizeof b);
        unsigned be = (unsigned)(b >> 52); /* the sign and the biased exponent */
        if (be - 1022u <= 1u || be >= 0x7ffu || b == 0) { /* [1/2, 2); negative, infinite, NaN; +0 */
            f[k] = 1.0;
            continue;
        }
        f[k] = inv_sqrt_pow2(f[k]);
        changed |= f[k] != 1.0;
    }
    return changed;
}

/* The max-norms of A's rows (fr, m) and columns (fc, n), with the warm start's factors applied
 * first in the same pass (x *= r_i c_j, as a pass of its own would) when r is given. */
static void equil_norms(mbla_csc *A, const double *r, const double *c, double *fr, double *fc)
{
    const int m = A->m, n = A->n, *Ap = A->p, *Ai = A->i;
    double *Ax = A->x;
    for (int i = 0; i < m; i++) fr[i] = 0.0;
    for (int j = 0; j < n; j++) {
        double cm = 0.0;
        if (r) {
            double cj = c[j];
            for (int p = Ap[j]; p < Ap[j + 1]; p++) {
                int i = Ai[p];
                double a = fabs(Ax[p] *= r[i] * cj);
                if (a > cm) cm = a;
                if (a > fr[i]) fr[i] = a;
            }
        } else {
            for (int p = Ap[j]; p < Ap[j + 1]; p++) {
                double a = fabs(Ax[p]);
                if (a > cm) cm = a;
                if (a > fr[Ai[p]]) fr[Ai[p]] = a;
            }
        }
        fc[j] = cm;
    }
}

/* The sweeps of mbla_csc_equilibrate; rnext (m doubles, or NULL): scratch for the next sweep's row
 * norms, which are then taken in the pass that applies a sweep's factors (one pass over A per
 * sweep instead of two; the same products, so the same bits). */
static int equilibrate_sweeps(mbla_csc *A, int maxiter, int warm, double *r, double *c, double *work, double *rnext)
{
    const int m = A->m, n = A->n, *Ap = A->p, *Ai = A->i;
    double *Ax = A->x;
    int it = 0;
    double *fr = work, *fc = work + m; /* row and column max-norms, then this sweep's factors */
    if (!warm) {
        for (int i = 0; i < m; i++) r[i] = 1.0;
        for (int j = 0; j < n; j++) c[j] = 1.0;
    }
    /* the first sweep's norms (warm: the given factors, powers of 2, applied exactly in the pass) */
    if (maxiter > 0 || warm) equil_norms(A, warm ? r : NULL, c, fr, fc);
    int have = 1; /* fr, fc hold the current matrix's norms */
    for (; it < maxiter; it++) {
        if (!have) equil_norms(A, NULL, NULL, fr, fc);
        have = 0;
        /* both factors at once (Ruiz), then one pass to apply them */
        int changed = pow2_factors(fr, m);
        changed |= pow2_factors(fc, n);
        if (!changed) break;
        for (int i = 0; i < m; i++) r[i] *= fr[i];
        if (!rnext) {
            for (int j = 0; j < n; j++) {
                c[j] *= fc[j];
                for (int p = Ap[j]; p < Ap[j + 1]; p++) Ax[p] *= fr[Ai[p]] * fc[j];
            }
            continue;
        }
        /* apply, and the next sweep's norms of the result */
        for (int i = 0; i < m; i++) rnext[i] = 0.0;
        for (int j = 0; j < n; j++) {
            double fj = fc[j], cm = 0.0;
            c[j] *= fj;
            for (int p = Ap[j]; p < Ap[j + 1]; p++) {
                int i = Ai[p];
                double a = fabs(Ax[p] *= fr[i] * fj);
                if (a > cm) cm = a;
                if (a > rnext[i]) rnext[i] = a;
            }
            fc[j] = cm;
        }
        double *t = fr;
        fr = rnext, rnext = t;
        have = 1;
    }
    return it;
}

int mbla_csc_equilibrate(mbla_csc *A, int maxiter, int warm, double *r, double *c, double *work, mbl_status *st)
{
    const char *fn = "mbla_csc_equilibrate";
    int rc = la_csc_arg(A, fn, "A", st);
    if (rc) return rc;
    int m = A->m, n = A->n;
    if ((m && !r) || (n && !c) || (m + n && !work)) return mbl_error(st, MBL_EARG, "%s: r, c or work is NULL", fn);
    if (maxiter < 0) maxiter = MBLA_EQUILIBRATE_MAXITER_DEFAULT;
    return equilibrate_sweeps(A, maxiter, warm, r, c, work, NULL);
}

int la_csc_equilibrate_ws(mbla_csc *A, int maxiter, int warm, double *r, double *c, double *work)
{
    if (maxiter < 0) maxiter = MBLA_EQUILIBRATE_MAXITER_DEFAULT;
    return equilibrate_sweeps(A, maxiter, warm, r, c, work, work + A->m + A->n);
}
