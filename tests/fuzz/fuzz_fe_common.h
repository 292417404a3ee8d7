/* Shared body of the FE reader targets (fuzz_calculix.c, fuzz_nastran.c): the input is the files of
 * one part, separated by lines "====", written to a temporary folder of this process (a part
 * missing: its file absent); the reader must return a part that holds its invariants (K and M valid
 * CSC matrices, symmetric; every row's node and direction in range; the nodes ascending; the sets'
 * nodes in range) or a documented code with a one-line message, and print nothing. */
#ifndef FUZZ_FE_COMMON_H
#define FUZZ_FE_COMMON_H

#define _GNU_SOURCE /* memmem, mkdtemp */
#include "fuzz_model_common.h"

#include "fe/fe.h"

enum { FUZZ_FE_MAX_INPUT = 1 << 16, FUZZ_FE_NFILE = 4 };

static char fuzz_fe_dir[64];
static char fuzz_fe_path[FUZZ_FE_NFILE][128];

static void fuzz_fe_remove(void)
{
    for (int k = 0; k < FUZZ_FE_NFILE; k++)
        if (fuzz_fe_path[k][0]) unlink(fuzz_fe_path[k]);
    rmdir(fuzz_fe_dir);
}

/* the folder and the files' paths (n names) */
static void fuzz_fe_init(const char *const *names, int n)
{
    snprintf(fuzz_fe_dir, sizeof fuzz_fe_dir, "/tmp/fuzz_fe.XXXXXX");
    if (!mkdtemp(fuzz_fe_dir)) abort();
    for (int k = 0; k < n; k++) snprintf(fuzz_fe_path[k], sizeof fuzz_fe_path[k], "%s/%s", fuzz_fe_dir, names[k]);
    atexit(fuzz_fe_remove);
}

/* the parts of the input into the n files */
static void fuzz_fe_write(const uint8_t *data, size_t size, int n)
{
    static const char sep[] = "\n====\n";
    const uint8_t *p = data, *end = data + size;
    for (int k = 0; k < n; k++) {
        unlink(fuzz_fe_path[k]);
        if (!p) continue;
        const uint8_t *q = memmem(p, (size_t)(end - p), sep, sizeof sep - 1);
        size_t len = q ? (size_t)(q - p) + 1 : (size_t)(end - p);
        FILE *f = fopen(fuzz_fe_path[k], "wb");
        if (!f) abort();
        if (len && fwrite(p, 1, len, f) != len) abort();
        if (fclose(f)) abort();
        p = q ? q + sizeof sep - 1 : NULL;
    }
}

static void fuzz_fe_check_csc(const mbla_csc *A, int n)
{
    if (!A || A->m != n || A->n != n || mbla_csc_check(A, NULL)) abort();
    for (int c = 0; c < n; c++)
        for (int q = A->p[c]; q < A->p[c + 1]; q++) {
            int r = A->i[q], t = A->p[r];
            while (t < A->p[r + 1] && A->i[t] != c) t++;
            if (t == A->p[r + 1] || A->x[t] != A->x[q]) abort(); /* symmetric */
        }
}

/* the outcome of a reader: a part that holds its invariants, or a one-line error */
static void fuzz_fe_check(int rc, fe_part *p, const mbl_status *st, int mass)
{
    if (rc) {
        fuzz_check_status(rc, st);
        return;
    }
    if (p->ndof <= 0 || p->nnode <= 0 || !p->file) abort();
    fuzz_fe_check_csc(p->K, p->ndof);
    if (mass) fuzz_fe_check_csc(p->M, p->ndof);
    for (int r = 0; r < p->ndof; r++)
        if (p->dof_node[r] < 0 || p->dof_node[r] >= p->nnode || p->dof_dir[r] < FE_UX || p->dof_dir[r] > FE_RZ)
            abort();
    for (int k = 1; k < p->nnode; k++)
        if (p->node_id[k] <= p->node_id[k - 1]) abort();
    for (int s = 0; s < p->nset; s++)
        for (int q = p->set_ptr[s]; q < p->set_ptr[s + 1]; q++)
            if (p->set_node[q] < 0 || p->set_node[q] >= p->nnode || fe_part_set(p, p->set_name[s]) < 0) abort();
    fe_part_free(p);
}

#endif
