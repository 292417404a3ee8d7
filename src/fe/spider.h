/* The interfaces of a Craig-Bampton reduction (src/fe/reduce.c) as rows of the part: a node's own
 * rows, or a rigid spider's six new degrees of freedom (fe.h's fe_iface), eliminated by a sparse
 * transformation u = G v before the reduction. Internal to src/fe. */
#ifndef MBLIN_FE_SPIDER_H
#define MBLIN_FE_SPIDER_H

#include "fe/fe.h"

/* A spider's nodes must fix a rigid motion: the 6 x 6 Gram matrix of its constraint rows (the
 * rotation columns scaled by the spider's largest arm) has singular values above this fraction of
 * the largest (collinear nodes, or a single node without rotations, fall below it). */
#define FE_SPIDER_RANK_TOL 1e-10

typedef struct fe_elim {
    int n, nr;              /* the part's rows, the reduced rows v */
    mbla_csc *G;            /* n x nr: u = G v; the part's rows outside every spider keep their order
                             * (columns 0 .. nr - 6 nspider - 1), then 6 per spider (u, th at `at`) */
    int nb;                 /* interface rows of v (every interface's, in the order of the interfaces) */
    int *bnd;               /* nb: their indices in v */
    signed char *bdir;      /* nb: their directions FE_UX .. FE_RZ (a marker's T row) */
    int *ifc_ptr;           /* niface + 1: interface i's rows bnd[ifc_ptr[i] .. ifc_ptr[i + 1] - 1] */
    int *vnode;             /* nr: the part's node of each row of v (-1: a spider's) */
    signed char *vdir;      /* nr: its direction */
} fe_elim;

/* The rows of the interfaces and G. Errors (MBL_EMODEL) name the interface: a node out of range,
 * a node without rows, a node in two interfaces (both named), a spider whose nodes do not fix a
 * rigid motion, a point `at` not finite. */
int fe_elim_build(const fe_part *p, const fe_iface *ifc, int niface, fe_elim *e, mbl_status *st);
void fe_elim_free(fe_elim *e);

/* "UX" .. "RZ" */
const char *fe_dir_name(int dir);

#endif
