/* KLU's AMD ordering of BTF blocks, remembered by pattern (la_amd_memo).
 *
 * klu_analyze orders every BTF block of more than 3 rows by AMD, a call whose fixed cost (its
 * checks, workspaces, A + A^T, initialisation) is about 6,000 instructions on a block of 4 to 6
 * rows: the kinematic system of the N-loop four-bar mechanism has 3N such blocks (35 M
 * instructions at N = 2000, more than its factorization), all of one or two patterns. As KLU's
 * user ordering (common.ordering 3), la_amd_memo_order orders each block by AMD as klu_analyze
 * does (default controls, the same block pattern) and returns its estimate AMD_LNZ + n as
 * klu_analyze takes it; a block of at most LA_AMD_MEMO_BLOCK_MAX rows whose pattern (the sizes,
 * column pointers and row indices, compared in full) was ordered before gets the permutation
 * and estimate remembered. AMD's order depends on the pattern alone, so the permutations, the
 * estimates KLU sizes the factors by, and thus the factors are those of klu_analyze's own AMD
 * calls, bit for bit (only KLU's flop estimate and symmetry statistic, which nothing reads, are
 * left unset). */
#include "la/klu_amd_memo.h"
#include "la/la_internal.h"

#include <amd.h>
#include <stdint.h>
#include <string.h>

/* blocks up to this many rows are remembered (larger ones are ordered afresh: AMD's own work
 * dominates its fixed cost there) */
#define LA_AMD_MEMO_BLOCK_MAX 32
/* klu_analyze keeps the natural order in blocks of at most this many rows */
#define KLU_AMD_NATURAL_MAX 3
/* distinct patterns remembered per analysis (later ones are ordered afresh) */
#define LA_AMD_MEMO_ENTRIES 256

typedef struct {
    uint32_t hash;
    int n, nz, lnz;
    size_t at; /* in pool: p (n + 1), i (nz), perm (n) */
} memo_entry;

struct la_amd_memo {
    memo_entry e[LA_AMD_MEMO_ENTRIES];
    int ne;
    int *pool;
    size_t npool, cpool;
    int failed; /* AMD's status when it failed (AMD_OUT_OF_MEMORY or AMD_INVALID), else 0 */
};

la_amd_memo *la_amd_memo_new(void) { return mbl_calloc(1, sizeof(la_amd_memo)); }

void la_amd_memo_free(la_amd_memo *m)
{
    if (!m) return;
    mbl_free(m->pool);
    mbl_free(m);
}

int la_amd_memo_failed(const la_amd_memo *m) { return m ? m->failed : 0; }

static uint32_t pattern_hash(int n, const int *p, const int *i)
{
    uint32_t h = 2166136261u ^ (uint32_t)n;
    for (int k = 1; k <= n; k++) h = (h ^ (uint32_t)p[k]) * 16777619u;
    for (int k = 0; k < p[n]; k++) h = (h ^ (uint32_t)i[k]) * 16777619u;
    return h;
}

static const memo_entry *memo_find(const la_amd_memo *m, uint32_t h, int n, const int *p, const int *i)
{
    for (int k = 0; k < m->ne; k++) {
        const memo_entry *e = &m->e[k];
        if (e->hash != h || e->n != n || e->nz != p[n]) continue;
        const int *ep = m->pool + e->at;
        if (!memcmp(ep, p, ((size_t)n + 1) * sizeof *p) && !memcmp(ep + n + 1, i, (size_t)e->nz * sizeof *i)) return e;
    }
    return NULL;
}

/* remember perm and lnz for the pattern (nothing when the table or memory is full) */
static void memo_add(la_amd_memo *m, uint32_t h, int n, const int *p, const int *i, const int *perm, int lnz)
{
    size_t need = (size_t)n + 1 + (size_t)p[n] + (size_t)n;
    if (m->ne == LA_AMD_MEMO_ENTRIES) return;
    if (m->npool + need > m->cpool) {
        size_t cap = m->cpool ? 2 * m->cpool : 1024;
        while (cap < m->npool + need) cap *= 2;
        int *q = mbl_realloc_array(m->pool, cap, sizeof *q);
        if (!q) return;
        m->pool = q;
        m->cpool = cap;
    }
    int *d = m->pool + m->npool;
    memcpy(d, p, ((size_t)n + 1) * sizeof *p);
    memcpy(d + n + 1, i, (size_t)p[n] * sizeof *i);
    memcpy(d + n + 1 + p[n], perm, (size_t)n * sizeof *perm);
    m->e[m->ne++] = (memo_entry){h, n, p[n], lnz, m->npool};
    m->npool += need;
}

/* AMD's permutation of the n x n pattern Ap, Ai and klu_analyze's estimate, or 0 (failed) */
static int memo_order(la_amd_memo *m, int n, int *Ap, int *Ai, int *perm)
{
    int small = n <= LA_AMD_MEMO_BLOCK_MAX;
    uint32_t h = small ? pattern_hash(n, Ap, Ai) : 0;
    const memo_entry *e = small ? memo_find(m, h, n, Ap, Ai) : NULL;
    if (e) {
        memcpy(perm, m->pool + e->at + n + 1 + e->nz, (size_t)n * sizeof *perm);
        return e->lnz;
    }
    double info[AMD_INFO];
    int r = amd_order(n, Ap, Ai, perm, NULL, info);
    if (r < AMD_OK) {
        m->failed = r;
        return 0; /* KLU: the ordering failed */
    }
    int lnz = (int)info[AMD_LNZ] + n; /* klu_analyze's estimate of the block's nnz(L) */
    if (small) memo_add(m, h, n, Ap, Ai, perm, lnz);
    return lnz;
}

int la_amd_memo_order(int n, int *Ap, int *Ai, int *perm, klu_common *common)
{
    return memo_order(common->user_data, n, Ap, Ai, perm);
}

int la_amd_memo_blocks(la_amd_memo *m, int n, const int *Ap, const int *Ai, klu_symbolic *s)
{
    int nb = s->nblocks, mb = s->maxblock, nz = Ap[n];
    int *pinv = mbl_alloc_array((size_t)n + 1, sizeof *pinv), *cp = mbl_alloc_array((size_t)mb + 1, sizeof *cp);
    int *ci = mbl_alloc_array((size_t)nz + 1, sizeof *ci), *pblk = mbl_alloc_array(2 * (size_t)mb + 1, sizeof *pblk);
    int r = pinv && cp && ci && pblk ? 0 : AMD_OUT_OF_MEMORY;
    double lnz = 0;
    for (int k = 0; !r && k < n; k++) pinv[s->P[k]] = k;
    for (int b = 0; !r && b < nb; b++) { /* as klu_analyze's analyze_worker */
        int k1 = s->R[b], nk = s->R[b + 1] - k1, pc = 0, lnz1 = nk * (nk + 1) / 2;
        if (nk > KLU_AMD_NATURAL_MAX) {
            for (int k = 0; k < nk; k++) {
                cp[k] = pc;
                int col = s->Q[k1 + k];
                for (int p = Ap[col]; p < Ap[col + 1]; p++)
                    if (pinv[Ai[p]] >= k1) ci[pc++] = pinv[Ai[p]] - k1;
            }
            cp[nk] = pc;
            if (!(lnz1 = memo_order(m, nk, cp, ci, pblk))) {
                r = m->failed ? m->failed : AMD_INVALID;
                break;
            }
            int *t = pblk + mb;
            for (int k = 0; k < nk; k++) t[k] = s->Q[k1 + pblk[k]];
            memcpy(s->Q + k1, t, (size_t)nk * sizeof *t);
            for (int k = 0; k < nk; k++) t[k] = s->P[k1 + pblk[k]];
            memcpy(s->P + k1, t, (size_t)nk * sizeof *t);
        }
        s->Lnz[b] = lnz1;
        lnz += lnz1;
    }
    if (!r) s->lnz = s->unz = lnz, s->ordering = 0;
    mbl_free(pinv), mbl_free(cp), mbl_free(ci), mbl_free(pblk);
    return r;
}
