/* KLU's AMD ordering of BTF blocks, remembered by pattern (klu_amd_memo.c) */
#ifndef MBLIN_LA_KLU_AMD_MEMO_H
#define MBLIN_LA_KLU_AMD_MEMO_H

#include <klu.h>

typedef struct la_amd_memo la_amd_memo;

/* An empty memo (NULL when out of memory), and its release */
la_amd_memo *la_amd_memo_new(void);
void la_amd_memo_free(la_amd_memo *m);

/* KLU's user ordering (common->user_data: the memo): AMD's permutation of the block and
 * klu_analyze's estimate AMD_LNZ + n, remembered for small blocks; 0 when AMD failed */
int la_amd_memo_order(int n, int *Ap, int *Ai, int *perm, klu_common *common);

/* s, klu_analyze_given's analysis without orders (BTF's blocks in their natural order) of the
 * n x n pattern Ap, Ai with a zero-free diagonal, made klu_analyze's with AMD on the blocks (the
 * transversal is the identity there): each block of more than 3 rows ordered by AMD (remembered),
 * its estimates set. 0, or AMD's status of the failure (AMD_OUT_OF_MEMORY, AMD_INVALID). */
int la_amd_memo_blocks(la_amd_memo *m, int n, const int *Ap, const int *Ai, klu_symbolic *s);

/* AMD's status of a failed ordering (AMD_OUT_OF_MEMORY, AMD_INVALID), 0 when none failed */
int la_amd_memo_failed(const la_amd_memo *m);

#endif
