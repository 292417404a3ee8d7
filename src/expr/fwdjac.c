/* A forward Jacobian's structure (issue 31, item 2): the pattern of its rows by the graph's dependence
 * sets and a greedy coloring of its columns (no two columns of one color share a row), its lifetime
 * and accessors. Its values, ncolors directional derivatives by forward sweeps of a tape, are
 * tape_forward.c's. */
#include <string.h>

#include "expr/fwdjac_internal.h"
#include "expr/fwdjac_narrow.h"
#include "expr/tape_internal.h"

void mblx_fwdjac_free(mblx_fwdjac *J) { mblx__fwdjac_free(J); }

void mblx__fwdjac_free(mblx_fwdjac *J)
{
    if (!J) return;
    mbl_free(J->colptr), mbl_free(J->rowidx), mbl_free(J->color), mbl_free(J->symcolor), mbl_free(J->src);
    mbl_free(J);
}

size_t mblx_fwdjac_pattern(const mblx_fwdjac *J, const int **colptr, const int **rowidx)
{
    if (colptr) *colptr = J ? J->colptr : NULL;
    if (rowidx) *rowidx = J ? J->rowidx : NULL;
    return J ? J->nnz : 0;
}

size_t mblx_fwdjac_ncolors(const mblx_fwdjac *J) { return J ? J->ncolors : 0; }

int mblx_fwdjac_color(const mblx_fwdjac *J, size_t j) { return J && j < J->n ? J->color[j] : -1; }

/* pattern's answer for a row of more than maxwidth columns (J then incomplete, freed by the caller;
 * the status codes are 0 and negative) */
enum { PATTERN_WIDE = 1 };

/* The pattern by column from the rows' dependence sets (colof: a symbol index's column or -1);
 * PATTERN_WIDE at the first row of more than maxwidth columns. */

static int pattern(mblx_fwdjac *J, const mblx_graph *g, const mblx_id *rows, const int *colof, size_t maxwidth)
{
    J->colptr = mbl_calloc(J->n + 1, sizeof *J->colptr);
    if (!J->colptr) return MBL_ENOMEM;
    size_t nnz = 0;
    for (size_t i = 0; i < J->m; i++) {
        size_t cnt, nnz0 = nnz;
        const uint32_t *d = mblx_node_deps(g, rows[i], &cnt);
        for (size_t e = 0; e < cnt; e++)
            if (colof[d[e]] >= 0) J->colptr[colof[d[e]] + 1]++, nnz++;
        if (nnz - nnz0 > maxwidth) return PATTERN_WIDE;
    }
    if (nnz > INT32_MAX) return MBL_ENOMEM;
    for (size_t j = 0; j < J->n; j++) J->colptr[j + 1] += J->colptr[j];
    J->nnz = nnz;
    int *next = mbl_alloc_array(J->n ? J->n : 1, sizeof *next);
    J->rowidx = mbl_alloc_array(nnz ? nnz : 1, sizeof *J->rowidx);
    if (!next || !J->rowidx) {
        mbl_free(next);
        return MBL_ENOMEM;
    }
    memcpy(next, J->colptr, J->n * sizeof *next);
    for (size_t i = 0; i < J->m; i++) { /* rows in order: sorted within each column */
        size_t cnt;
        const uint32_t *d = mblx_node_deps(g, rows[i], &cnt);
        for (size_t e = 0; e < cnt; e++)
            if (colof[d[e]] >= 0) J->rowidx[next[colof[d[e]]]++] = (int)i;
    }
    mbl_free(next);
    return 0;
}

/* The rows' columns (*prp: m + 1 row pointers, *pci: nnz columns, each row's in order), by
 * transposition; mark: n entries set to -1. MBL_ENOMEM when out of memory. */
static int row_columns(const mblx_fwdjac *J, int **prp, int **pci, int **pmark)
{
    size_t m = J->m, n = J->n, nnz = J->nnz;
    int *rp = *prp = mbl_calloc(m + 1, sizeof *rp), *ci = *pci = mbl_alloc_array(nnz ? nnz : 1, sizeof *ci);
    int *mark = *pmark = mbl_alloc_array(n ? n : 1, sizeof *mark);
    if (!rp || !ci || !mark) return MBL_ENOMEM;
    for (size_t e = 0; e < nnz; e++) rp[J->rowidx[e] + 1]++;
    for (size_t i = 0; i < m; i++) rp[i + 1] += rp[i];
    for (size_t j = 0; j < n; j++) {
        mark[j] = -1;
        for (int e = J->colptr[j]; e < J->colptr[j + 1]; e++) ci[rp[J->rowidx[e]]++] = (int)j;
    }
    for (size_t i = m; i > 0; i--) rp[i] = rp[i - 1];
    rp[0] = 0;
    return 0;
}

/* Greedy coloring in column order: each column takes the least color that no column sharing a
 * row with it has yet. The colors below 64 that each row's columns have so far are a bit set
 * (taken): a column's least free color is the first bit none of its rows has; only where all 64
 * are taken are the rows' earlier columns read (cost: the sum over rows of their lengths squared;
 * the N = 10^4 four-bar's 12 colors: 21 M instructions of it), from the rows' columns made then
 * (row_columns: about 9 M instructions at N = 10^4, for nothing below 64 colors). */
static int coloring(mblx_fwdjac *J)
{
    size_t m = J->m, n = J->n;
    int *rp = NULL, *ci = NULL, *mark = NULL;
    uint64_t *taken = mbl_calloc(m ? m : 1, sizeof *taken);
    J->color = mbl_alloc_array(n ? n : 1, sizeof *J->color);
    if (!taken || !J->color) {
        mbl_free(taken);
        return MBL_ENOMEM;
    }
    size_t nc = 0;
    for (size_t j = 0; j < n; j++) {
        uint64_t busy = 0;
        for (int e = J->colptr[j]; e < J->colptr[j + 1]; e++) busy |= taken[J->rowidx[e]];
        int c = 0;
        if (~busy) {
            while (busy >> c & 1) c++;
        } else {
            if (!rp && row_columns(J, &rp, &ci, &mark)) {
                mbl_free(rp), mbl_free(ci), mbl_free(mark), mbl_free(taken);
                return MBL_ENOMEM;
            }
            for (int e = J->colptr[j]; e < J->colptr[j + 1]; e++) {
                int i = J->rowidx[e];
                /* a row's columns are in order (ci: transposed in column order), and the columns
                 * before j are the colored ones: the row is read up to j alone */
                for (int f = rp[i], k; f < rp[i + 1] && (k = ci[f]) < (int)j; f++) mark[J->color[k]] = (int)j;
            }
            while (mark[c] == (int)j) c++;
        }
        J->color[j] = c;
        if (c < 64)
            for (int e = J->colptr[j]; e < J->colptr[j + 1]; e++) taken[J->rowidx[e]] |= (uint64_t)1 << c;
        if ((size_t)c + 1 > nc) nc = (size_t)c + 1;
    }
    mbl_free(rp), mbl_free(ci), mbl_free(mark), mbl_free(taken);
    J->ncolors = nc;
    return 0;
}

mblx_fwdjac *mblx_fwdjac_new(const mblx_graph *g, size_t m, const mblx_id *rows, size_t n, const mblx_id *syms,
                             mbl_status *st)
{
    int wide;
    return mblx__fwdjac_new_narrow(g, m, rows, n, syms, SIZE_MAX, &wide, st);
}

mblx_fwdjac *mblx__fwdjac_new_narrow(const mblx_graph *g, size_t m, const mblx_id *rows, size_t n, const mblx_id *syms,
                                     size_t maxwidth, int *wide, mbl_status *st)
{
    *wide = 0;
    if (!g || (m && !rows) || (n && !syms) || m > INT32_MAX || n > INT32_MAX) {
        mbl_error(st, MBL_EARG, "mblx_fwdjac_new: bad argument");
        return NULL;
    }
    size_t nsym = mblx_symbol_count(g);
    for (size_t i = 0; i < m; i++)
        if (mblx_node_op(g, rows[i]) == MBLX_OP_COUNT_) {
            mbl_error(st, MBL_EARG, "mblx_fwdjac_new: row %zu is not a node", i);
            return NULL;
        }
    mblx_fwdjac *J = mbl_calloc(1, sizeof *J);
    int *colof = mbl_alloc_array(nsym ? nsym : 1, sizeof *colof);
    int rc = J && colof ? 0 : MBL_ENOMEM;
    for (size_t s = 0; s < nsym && !rc; s++) colof[s] = -1;
    for (size_t j = 0; j < n && !rc; j++) {
        long s = mblx_symbol_index(g, syms[j]);
        if (s < 0 || colof[s] >= 0) {
            mbl_error(st, MBL_EARG, "mblx_fwdjac_new: column %zu is %s", j, s < 0 ? "not a symbol" : "repeated");
            mbl_free(colof);
            mblx_fwdjac_free(J);
            return NULL;
        }
        colof[s] = (int)j;
    }
    if (!rc) {
        J->m = m, J->n = n, J->nsym = nsym;
        rc = pattern(J, g, rows, colof, maxwidth);
    }
    if (rc == PATTERN_WIDE) { /* declined: not an error */
        mbl_free(colof);
        mblx_fwdjac_free(J);
        *wide = 1;
        mbl_status_clear(st);
        return NULL;
    }
    if (!rc) rc = coloring(J);
    if (!rc) { /* colof becomes the symbols' colors */
        for (size_t s = 0; s < nsym; s++)
            if (colof[s] >= 0) colof[s] = J->color[colof[s]];
        J->symcolor = colof;
        colof = NULL;
    }
    mbl_free(colof);
    if (rc) {
        mblx_fwdjac_free(J);
        mbl_error(st, MBL_ENOMEM, "out of memory while coloring a Jacobian");
        return NULL;
    }
    mbl_status_clear(st);
    return J;
}
