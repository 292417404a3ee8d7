/* Maximum transversal (maximum bipartite matching of columns to rows) by Hopcroft-Karp.
 *
 * KLU's own btf_maxtrans is a depth-first search whose cost depends on the column order: on the
 * augmented matrices of the mechanism level it explored O(n^1.6) entries (1.7e10 at n = 3e5, 82 %
 * of a 41 s run), while a reversed order made the equation-level twin as slow. Hopcroft-Karp
 * grows augmenting paths breadth first in phases, O(nnz sqrt(n)) in the worst case and a few
 * phases on these matrices, whatever the order. mbla_klu hands KLU the matrix with its columns
 * permuted to put this matching on the diagonal (see klu.c). */
#include "mblin/la.h"

#include <stdint.h>

int mbla_csc_maxmatch(const mbla_csc *A, int *rowmatch, int *nmatch, mbl_status *st)
{
    const char *fn = "mbla_csc_maxmatch";
    if (!A) return mbl_error(st, MBL_EARG, "%s: A is NULL", fn);
    if (A->m < 0 || A->n < 0 || !A->p || (A->p[A->n] > 0 && !A->i))
        return mbl_error(st, MBL_EARG, "%s: A has a negative size or no index arrays", fn);
    if (!rowmatch) return mbl_error(st, MBL_EARG, "%s: rowmatch is NULL", fn);
    int m = A->m, n = A->n;
    const int *Ap = A->p, *Ai = A->i;
    /* colmatch[j]: row of column j; dist[j]: BFS layer; it[j]: DFS position in column j;
     * queue (n), stack of columns (n) */
    size_t n1 = (size_t)n + 1; /* the five in one allocation */
    int *colmatch = mbl_alloc_array(5 * n1, sizeof *colmatch);
    if (!colmatch) return mbl_error(st, MBL_ENOMEM, "%s: out of memory (n = %d)", fn, n);
    int *dist = colmatch + n1, *it = dist + n1, *queue = it + n1, *stack = queue + n1;
    for (int i = 0; i < m; i++) rowmatch[i] = -1;
    int nm = 0;
    /* cheap pass: each column takes its first free row */
    for (int j = 0; j < n; j++) {
        colmatch[j] = -1;
        for (int p = Ap[j]; p < Ap[j + 1]; p++)
            if (rowmatch[Ai[p]] < 0) {
                rowmatch[Ai[p]] = j, colmatch[j] = Ai[p], nm++;
                break;
            }
    }
    const int INF = INT32_MAX;
    for (;;) {
        /* BFS from the free columns over alternating paths; stop at the layer of the first
         * free row */
        int qh = 0, qt = 0, limit = INF;
        for (int j = 0; j < n; j++) {
            if (colmatch[j] < 0) dist[j] = 0, queue[qt++] = j;
            else dist[j] = INF;
        }
        while (qh < qt) {
            int j = queue[qh++];
            if (dist[j] >= limit) break;
            for (int p = Ap[j]; p < Ap[j + 1]; p++) {
                int j2 = rowmatch[Ai[p]];
                if (j2 < 0) {
                    if (limit == INF) limit = dist[j] + 1;
                } else if (dist[j2] == INF) {
                    dist[j2] = dist[j] + 1;
                    queue[qt++] = j2;
                }
            }
        }
        if (limit == INF) break; /* no augmenting path: the matching is maximum */
        /* vertex-disjoint shortest augmenting paths by an iterative DFS along the layers */
        int found = 0;
        for (int j = 0; j < n; j++) it[j] = Ap[j];
        for (int j0 = 0; j0 < n; j0++) {
            if (colmatch[j0] >= 0 || dist[j0] != 0) continue;
            int top = 0;
            stack[0] = j0;
            while (top >= 0) {
                int j = stack[top], pushed = 0, aug = 0;
                while (it[j] < Ap[j + 1]) {
                    int i = Ai[it[j]], j2 = rowmatch[i];
                    if (j2 < 0) {
                        if (dist[j] + 1 == limit) {
                            aug = 1;
                            break;
                        }
                    } else if (dist[j2] == dist[j] + 1 && dist[j2] < limit) {
                        stack[++top] = j2;
                        pushed = 1;
                        break;
                    }
                    it[j]++;
                }
                if (aug) { /* flip the path: each stacked column takes the row it[] points at */
                    for (int s = top; s >= 0; s--) {
                        int c = stack[s], i = Ai[it[c]];
                        rowmatch[i] = c, colmatch[c] = i;
                        it[c]++;
                        dist[c] = INF; /* used: keep the paths of this phase disjoint */
                    }
                    nm++, found++;
                    break;
                }
                if (!pushed) { /* dead end */
                    dist[j] = INF;
                    top--;
                    if (top >= 0) it[stack[top]]++;
                }
            }
        }
        if (!found) break;
    }
    mbl_free(colmatch);
    if (nmatch) *nmatch = nm;
    return 0;
}
