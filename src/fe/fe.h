/* FE substructures (issue 67): a flexible part as an FE code wrote it, reduced by Craig-Bampton to
 * the modal basis of a spatial modal body, and the floating-frame invariants of that basis.
 *
 *   fe_read_calculix / fe_read_nastran  ->  fe_part (nodes, node sets, dof map, K and M)
 *   fe_reduce(part, interfaces, options) ->  fe_basis (M-orthonormal elastic modes, the markers' motion)
 *   fe_invariants_of(part, basis)        ->  fe_invariants (model/ffr3.h's invariants, general u0)
 *
 * The folder sits on its own floor between src/la and src/model (tests/layering/check.py): it uses
 * src/core and src/la only, and src/mech's modal bodies call it while they compile a model (as they
 * read Matrix Market files), which src/load, above src/mech, could not serve. Internal to the
 * library; every function returns 0 or a negative MBL_E* code with a one-line message in st. */
#ifndef MBLIN_FE_FE_H
#define MBLIN_FE_FE_H

#include "mblin/la.h"
#include "mblin/status.h"

/* ---- the part as read ---- */

/* The directions of a degree of freedom. A part of solid elements has the first three only. */
enum { FE_UX, FE_UY, FE_UZ, FE_RX, FE_RY, FE_RZ };

typedef struct fe_part {
    char *file;             /* the file of the matrices (for messages) */
    int nnode;
    int *node_id;           /* the FE code's node numbers, ascending */
    double *xyz;            /* 3 x nnode: undeformed positions, in the deck's units and axes */
    int ndof;               /* rows (and columns) of K and M */
    int *dof_node;          /* per row: the node's index in node_id */
    signed char *dof_dir;   /* per row: FE_UX .. FE_RZ */
    mbla_csc *K, *M;        /* ndof x ndof, symmetric, both triangles stored */
    int nset;               /* node sets of the deck (CalculiX *NSET, gmsh's physical groups) */
    char **set_name;        /* nset names, as written (compared without case, as CalculiX does) */
    int *set_ptr, *set_node;/* set s: node indices set_node[set_ptr[s] .. set_ptr[s + 1] - 1] */
} fe_part;

void fe_part_free(fe_part *p);
/* the index of node number id (-1: none); of the set named name (-1: none) */
int fe_part_node(const fe_part *p, int id);
int fe_part_set(const fe_part *p, const char *name);

/* Limits decided before the matrices are read (bounded memory): at most FE_MAX_DOF rows and
 * FE_MAX_NNZ stored entries (both triangles), FE_LINE_MAX characters a line. */
#define FE_MAX_DOF 2000000
#define FE_MAX_NNZ 200000000L
#define FE_LINE_MAX 1024

/* CalculiX 2.20, a step `*FREQUENCY, SOLVER=MATRIXSTORAGE`: job.sti and job.mas (one triangle as
 * `row column value` lines, 1-based), job.dof (`node.direction` of each row), and the input deck
 * job.inp for *NODE and *NSET (*INCLUDE followed). job: the path without extension (a trailing
 * .inp, .sti, .mas or .dof is taken off). */
int fe_read_calculix(const char *job, fe_part *p, mbl_status *st);

/* Nastran: the DMIG entries named kname and mname (stiffness, mass; mname NULL: no mass, an error
 * for a body) of a punch file pch (small field, large field `DMIG*` and free field), with the GRID
 * entries of bulk (NULL: the GRID entries of pch itself; basic coordinates only, CP = 0). */
int fe_read_nastran(const char *pch, const char *kname, const char *mname, const char *bulk, fe_part *p,
                    mbl_status *st);

/* ---- the reduction ---- */

/* One interface: a marker of the body. Either one node (its own degrees of freedom: translations,
 * and rotations where the part has them), or a set of nodes tied rigidly to a point `at` (a rigid
 * spider: u_i = u + th x (x_i - at), six new degrees of freedom u, th at the point). */
typedef struct fe_iface {
    const char *name;       /* the marker's name (messages) */
    int node;               /* a node index, or -1 for a spider */
    int nnodes;             /* spider: its nodes (indices), and the point */
    const int *nodes;
    double at[3];
} fe_iface;

typedef struct fe_reduce_opts {
    int modes;              /* fixed-interface normal modes kept (-1: by cutoff only) */
    double cutoff_hz;       /* fixed-interface modes below this frequency (<= 0: by count only);
                             * both given: the fewer */
} fe_reduce_opts;
/* The rigid-body motions are removed exactly (the modes are M-orthogonal to them); of the rest, a
 * mode whose 1/w^2 is below FE_MASSLESS_TOL times the largest (the lowest mode's) is a direction
 * without mass (an infinite frequency: a quadratic tetrahedron's consistent mass has three) and is
 * dropped. */
#define FE_MASSLESS_TOL 1e-12

typedef struct fe_basis {
    int n, k;               /* the part's rows (ndof); elastic modes kept */
    int nfixed, nconstr;    /* fixed-interface modes and constraint modes before orthonormalising */
    int nrigid;             /* rigid-body motions projected out (6) */
    double *Phi;            /* n x k, column-major: the modes over the part's rows, Phi^T M Phi = I */
    double *w2;             /* k: Phi^T K Phi's diagonal, ascending (the squared circular frequencies
                             * of the part held at nothing, its frame free) */
    double *wfixed;         /* nfixed: the fixed-interface modes' squared circular frequencies */
    int niface;
    double *X;              /* 3 x niface: the markers' undeformed places (a node's, or `at`) */
    double *T;              /* 6 x k per marker (6 * k * niface, marker i at T + 6 k i, column-major
                             * 6 x k): its translation and small rotation per unit modal coordinate;
                             * the rotation rows are zero for a single node without rotations */
} fe_basis;

void fe_basis_free(fe_basis *b);
/* Craig-Bampton from K and M: the interface rows (spiders eliminated first by their rigid
 * constraint), fixed-interface modes of (K_ii, M_ii) by ARPACK (mbla_eigs_sym_chol), constraint
 * modes -K_ii^-1 K_ib by CHOLMOD (mbla_chol), the rigid-body motions projected out and the rest
 * orthonormalised (LAPACK). Errors name the interface or the option (an interface that does not
 * hold the part: K_ii singular; a node without mass; more modes than interior rows). */
int fe_reduce(const fe_part *p, const fe_iface *ifc, int niface, const fe_reduce_opts *o, fe_basis *b,
              mbl_status *st);

/* ---- the invariants (model/ffr3.h's, u0 general) ---- */

/* u = u0 + S eta over the body, u0 the node positions in the body frame (the part's axes, origin
 * `origin`), S the translation rows of Phi; rho dV the mass matrix's scalar part (its UX-UX
 * block; the UY-UY and UZ-UZ blocks must equal it and the blocks between directions be zero, as for
 * solid elements' lumped or consistent masses, else an error naming the row). */
typedef struct fe_invariants {
    int k;
    double m, s0[3], Q0[6]; /* Q0: xx yy zz xy xz yz of int rho u0 u0^T */
    double *Sb;             /* 3 x k, row-major: int rho S_a */
    double *Cu;             /* 9 x k, row-major: row 3 p + r = int rho u0_p S_r */
    double *Mab;            /* 9 blocks k x k column-major: block 3 a + b = int rho S_a^T S_b */
    double *Mc;             /* k x k: Phi^T M Phi (the identity up to rounding) */
    double *Kr;             /* k x k: Phi^T K Phi */
} fe_invariants;

void fe_invariants_free(fe_invariants *v);
int fe_invariants_of(const fe_part *p, const fe_basis *b, const double origin[3], fe_invariants *v,
                     mbl_status *st);

#endif
