/* The structured term of the canonical DAE: a flexible body in a floating frame of reference
 * (planar), given by constant sparse matrices, whose contribution to the equations of motion and
 * to their Jacobian is written in closed form (src/model/terms/ffr.c), never as text to be parsed and
 * differentiated term by term. Beam bodies (src/mech/beam.c) and modal bodies
 * (src/mech/modal_body.c) both produce one. Internal to the library.
 *
 * A material point of the body is at r = R + A(th) u, u = u0 + S qf (body frame, qf the nf elastic
 * coordinates, A the rotation by th). The invariants (integrals over the body, rho the density):
 *   m = int rho, s0 = int rho u0, J0 = int rho |u0|^2,
 *   Sb = int rho S (2 x nf), c1 = int rho S^T u0, c2 = int rho S^T Jt u0 (Jt = [0 -1; 1 0]),
 *   Mff = int rho S^T S, P = int rho S^T Jt S (antisymmetric),
 * and the elastic stiffness K (constant: small strains). A beam also has the geometric-stiffness
 * invariants H1 = int rho H(X) dX and Hx = int rho X H(X) dX, H(X) = int_0^X S'^T S' (S' the slopes
 * of the transverse shape functions): the foreshortening -1/2 qf^T H(X) qf of the point at X along
 * the body x axis, whose virtual work with the axial inertia and gravity load gives the elastic rows
 * KG qf, KG = -(A^T G)_x H1 + th'^2 Hx (G = R'' - g; the axial force N(X) of these loads times
 * int S'^T S'); the other terms of the foreshortening are of second order in qf and are left out. A
 * modal body may also have Hy and Ha (its FE code's geometric stiffness per unit load, read from
 * files: src/mech/modal_body.c), and then KG = -(A^T G)_x H1 - (A^T G)_y Hy + th'' Ha + th'^2 Hx. With
 * s = s0 + Sb qf and J = J0 + 2 c1.qf + qf^T Mff qf, the virtual work of the inertia forces
 * int rho dr . r'' and of gravity g (a global vector) give the rows
 *   R:  m R'' + A (Jt s th'' - s th'^2 + 2 Jt Sb qf' th' + Sb qf'') - m g
 *   th: (A Jt s).R'' + J th'' + 2 th' (c1 + Mff qf).qf' + (c2 + P qf).qf'' - (A Jt s).g
 *   qf: Sb^T A^T R'' + (c2 + P qf) th'' - (c1 + Mff qf) th'^2 + 2 th' P qf' + Mff qf''
 *       + C qf' + (K + KG) qf - Sb^T A^T g
 * (C = alpha Mff + beta K, Rayleigh damping on the elastic coordinates). */
#ifndef MBLIN_MODEL_FFR_H
#define MBLIN_MODEL_FFR_H

#include "mblin/expr.h"
#include "mblin/la.h"
#include "mblin/status.h"

typedef struct mbl_ffr_invariants {
    int nf;
    double m, s0[2], J0;
    double *Sb, *c1, *c2;       /* 2*nf (row-major: Sb[k*nf + j]), nf, nf */
    mbla_csc *Mff, *P, *K;      /* nf x nf */
    mbla_csc *H1, *Hx;          /* geometric stiffness per unit axial load (beams; NULL: none) */
    mbla_csc *Hy, *Ha;          /* per unit -(A^T G)_y and th'' (modal bodies; NULL: none) */
} mbl_ffr_invariants;

void model_ffr_invariants_free(mbl_ffr_invariants *inv);

/* How the invariants depend on the model's parameters, for the sensitivities (exact: every entry
 * of a beam's invariants is a monomial in these factors at a fixed mesh). A factor is a text of the
 * parameters with its value at loading:
 *   MASS:   every mass invariant (m, s0, J0, Sb, c1, c2, Mff, P) is proportional to it (rho A);
 *   STIFF:  the entries of K between two coordinates of stiffness class `cls` (EA, EI, GJ, ...);
 *   LENGTH: the length L: an entry is proportional to L^e, e = (1 for the mass invariants, +1 for
 *           each undeformed position u0 in it: s0 2, c1 and c2 2, J0 3; K: kexp[cls]) + lexp of
 *           each elastic coordinate in it (1 for a slope: its shape function carries a length);
 *   ALPHA, BETA: the Rayleigh damping factors;
 *   SCALAR: one number of the invariants given alone (a modal body's): cls 0 m, 1 J0, 2 s0 x, 3 s0 y. */
enum { MBL_FFR_FAC_MASS, MBL_FFR_FAC_STIFF, MBL_FFR_FAC_LENGTH, MBL_FFR_FAC_ALPHA, MBL_FFR_FAC_BETA,
       MBL_FFR_FAC_SCALAR, MBL_FFR_FAC_POLAR /* spatial beams: rho (Iy + Iz), ffr3.h */ };
#define MBL_FFR_MAXFAC 12
typedef struct mbl_ffr_factor {
    int kind, cls;
    char *text;                 /* an expression of the parameters */
    double value;               /* its value at loading (the invariants were computed with it) */
    int line, col;              /* where the file gives it */
} mbl_ffr_factor;

/* A flexible body of a model: its invariants, damping, gravity, and the names of its coordinates
 * (frame x, y, th, then the nf elastic ones). */
typedef struct mbl_ffr_body {
    char *name;                 /* for messages: "body 'link1'" */
    mbl_ffr_invariants inv;
    double alpha, beta;         /* Rayleigh damping C = alpha Mff + beta K */
    mbla_csc *Cm;               /* modal damping (modal bodies' zeta): Mff Phi diag(2 zeta_i omega_i)
                                   Phi^T Mff on the elastic coordinates, added to C; NULL: none */
    double g[3];                /* gravity (global; planar: x, y) */
    char *coord[3];             /* frame x, y, th */
    char **qf;                  /* nf elastic coordinate names */
    int nnode;                  /* nodes for the mode shapes in the outputs (beams; 0: none) */
    double *X0;                 /* 2 x nnode: undeformed node positions in the body frame */
    int *ndof;                  /* 3 x nnode: the elastic coordinate (index in qf) of the node's u, v, phi */
    /* for the sensitivities (optional: NULL / 0 when the body does not depend on parameters) */
    char *gtext[3];             /* gravity as expressions of the parameters (g holds their values) */
    int gline, gcol;
    int nfac;
    mbl_ffr_factor fac[MBL_FFR_MAXFAC];
    signed char *lexp, *kcls;   /* nf each: length power and stiffness class of each coordinate */
    double kexp[4];             /* length power of the stiffness entries of each class */
    /* a spatial body (model/ffr3.h; its coordinates: coord = x, y, z, qf = e0..e3 then the
     * elastic ones, inv.nf = 4 + sp->nf, inv's arrays unused); NULL: planar */
    struct mbl_ffr3 *sp;
} mbl_ffr_body;

/* What the model keeps of a flexible body for the outputs (mbl_model_flex_*). */
typedef struct mbl_flex_nodes {
    char *name;
    int dim;                    /* 2 (planar) or 3 (spatial: the rest as in the comments' brackets) */
    int q[7];                   /* model coordinate indices of the frame x, y, th [x, y, z, e0..e3] */
    int nnode;
    double *X0;                 /* 2 [3] x nnode */
    int *qn;                    /* 3 [6] x nnode: model coordinate index of each node's u, v, phi [ux .. rz] */
} mbl_flex_nodes;

void model_ffr_body_free(mbl_ffr_body *b);
/* The body's damping of the elastic coordinates, C = alpha Mass + beta K + Cm (Mass, K: the
 * invariants of the planar Mff or the spatial Mc), into *C; *C = NULL when the body has none. */
int model_ffr_damping(const mbl_ffr_body *b, const mbla_csc *Mass, const mbla_csc *K, mbla_csc **C, mbl_status *st);

struct mbl_model;
struct mbl_sjac;
/* Add body b's rows to Fs (n expression nodes, accumulated: Fs[i] = Fs[i] + row i) and its closed-form
 * Jacobian entries (EOM rows, columns in the unknown layout) to J. qidx: the model coordinate
 * indices of frame x, y, th and of the nf elastic coordinates. */
int model_ffr_formulate(struct mbl_model *md, const mbl_ffr_body *b, const int *qidx, mblx_id *Fs,
                      struct mbl_sjac *J, mbl_status *st);
/* The same with the gravity given as nodes (gnode[3]; NULL: the constants b->g). */
int model_ffr_formulate_g(struct mbl_model *md, const mbl_ffr_body *b, const int *qidx, const mblx_id *gnode,
                        mblx_id *Fs, struct mbl_sjac *J, mbl_status *st);

/* What the sensitivities need of a flexible body whose invariants depend on parameters: a copy of
 * the invariants and of the dependence (mbl_ffr_factor), the factors as nodes of the parameters. */
typedef struct mbl_ffr_dinfo {
    mbl_ffr_body b;             /* name, invariants, damping, lexp, kcls, kexp, nfac/fac (texts NULL) */
    int *qidx;                  /* 3 + nf model coordinate indices */
    mblx_id gnode[3];
    mblx_id facnode[MBL_FFR_MAXFAC];
} mbl_ffr_dinfo;

/* Keep body b's dependence on the parameters in the model (md->ffrd) when one of its factors
 * (facnode, nodes of the parameters) is not a constant; nothing otherwise. */
int model_ffr_keep_deriv(struct mbl_model *md, const mbl_ffr_body *b, const int *qidx, const mblx_id *gnode,
                       const mblx_id *facnode, mbl_status *st);
void model_ffr_free_deriv(struct mbl_model *md);

/* The parameter columns of the second derivatives (src/model/dae_deriv.c): add to H (d jac.node /
 * d[unknowns; p], nunk + np columns) and Fp (dF/dp, np columns) the structured term's dependence on
 * the parameters through the invariants: the structured term is linear in the invariants, so its
 * derivative along a factor is the same closed form written with the invariants' derivatives
 * (model_ffr_formulate on them), times the factor's derivative by each parameter. psym: the np
 * parameter symbols. Call under model_graph_lock. */
int model_ffr_param_deriv(const struct mbl_model *md, int np, const mblx_id *psym, mblx_sparse *H, mblx_sparse *Fp,
                        mbl_status *st);
/* Keep body b's nodes in the model (md->flex) for the mode shapes of the outputs. */
int model_ffr_keep_nodes(struct mbl_model *md, const mbl_ffr_body *b, const int *qidx, mbl_status *st);
void model_ffr_free_nodes(struct mbl_model *md);

/* The planar structured term evaluated numerically beside the tapes (src/model/terms/ffr_num.c; the
 * default: model_ffr_set_numeric(0) before loading keeps the expression form of ffr.c instead). */
typedef struct mbl_ffr_num mbl_ffr_num;
void model_ffr_set_numeric(int on);
int model_ffr_numeric(void);
/* Body b's structured term: numerically (a planar body added to md->sjac's pattern and md->ffrn)
 * when model_ffr_numeric() and J is md->sjac, else as expressions (model_ffr_formulate_g). */
int model_ffr_add(struct mbl_model *md, const mbl_ffr_body *b, const int *qidx, const mblx_id *gnode, mblx_id *Fs,
                struct mbl_sjac *J, mbl_status *st);
void model_ffr_num_free(struct mbl_model *md);
/* The expression form of the numeric bodies (under model_graph_lock): their rows added to Fs
 * (Fs[i]: coordinate i's EOM row) and their Jacobian entries appended to S, as ffr.c formulates
 * them; model_dae_nodes merges them into the model's rows and entries. */
int model_ffr_num_exprs(struct mbl_model *md, mblx_id *Fs, struct mbl_sjac *S, mbl_status *st);
/* ffr.c's formulation of a planar body given by its invariants, damping matrix and gravity nodes. */
int model_ffr_formulate_inv(struct mbl_model *md, const mbl_ffr_invariants *inv, const mbla_csc *C, const mblx_id gn[2],
                          const int *qidx, mblx_id *Fs, struct mbl_sjac *J, mbl_status *st);

#endif
