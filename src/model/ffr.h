/* The structured term of the canonical DAE: a flexible body in a floating frame of reference
 * (planar), given by constant sparse matrices, whose contribution to the equations of motion and
 * to their Jacobian is written in closed form (src/model/ffr.c), never as text to be parsed and
 * differentiated term by term. Beam bodies (src/mech/beam.c) and modal bodies
 * (src/mech/modal_body.c) both produce one. Internal to the library.
 *
 * A material point of the body is at r = R + A(th) u, u = u0 + S qf (body frame, qf the nf elastic
 * coordinates, A the rotation by th). The invariants (integrals over the body, rho the density):
 *   m = int rho, s0 = int rho u0, J0 = int rho |u0|^2,
 *   Sb = int rho S (2 x nf), c1 = int rho S^T u0, c2 = int rho S^T Jt u0 (Jt = [0 -1; 1 0]),
 *   Mff = int rho S^T S, P = int rho S^T Jt S (antisymmetric),
 * and the elastic stiffness K (constant: small strains, no geometric stiffening). With
 * s = s0 + Sb qf and J = J0 + 2 c1.qf + qf^T Mff qf, the virtual work of the inertia forces
 * int rho dr . r'' and of gravity g (a global vector) give the rows
 *   R:  m R'' + A (Jt s th'' - s th'^2 + 2 Jt Sb qf' th' + Sb qf'') - m g
 *   th: (A Jt s).R'' + J th'' + 2 th' (c1 + Mff qf).qf' + (c2 + P qf).qf'' - (A Jt s).g
 *   qf: Sb^T A^T R'' + (c2 + P qf) th'' - (c1 + Mff qf) th'^2 + 2 th' P qf' + Mff qf''
 *       + C qf' + K qf - Sb^T A^T g
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
} mbl_ffr_invariants;

void mbl_ffr_invariants_free(mbl_ffr_invariants *inv);

/* A flexible body of a model: its invariants, damping, gravity, and the names of its coordinates
 * (frame x, y, th, then the nf elastic ones). */
typedef struct mbl_ffr_body {
    char *name;                 /* for messages: "body 'link1'" */
    mbl_ffr_invariants inv;
    double alpha, beta;         /* Rayleigh damping C = alpha Mff + beta K */
    double g[2];                /* gravity (global) */
    char *coord[3];             /* frame x, y, th */
    char **qf;                  /* nf elastic coordinate names */
    int nnode;                  /* nodes for the mode shapes in the outputs (beams; 0: none) */
    double *X0;                 /* 2 x nnode: undeformed node positions in the body frame */
    int *ndof;                  /* 3 x nnode: the elastic coordinate (index in qf) of the node's u, v, phi */
} mbl_ffr_body;

/* What the model keeps of a flexible body for the outputs (mbl_model_flex_*). */
typedef struct mbl_flex_nodes {
    char *name;
    int q[3];                   /* model coordinate indices of the frame x, y, th */
    int nnode;
    double *X0;                 /* 2 x nnode */
    int *qn;                    /* 3 x nnode: model coordinate index of each node's u, v, phi */
} mbl_flex_nodes;

void mbl_ffr_body_free(mbl_ffr_body *b);

struct mbl_model;
struct mbl_sjac;
/* Add body b's rows to Fs (n expression nodes, accumulated: Fs[i] = Fs[i] + row i) and its closed-form
 * Jacobian entries (EOM rows, columns in the unknown layout) to J. qidx: the model coordinate
 * indices of frame x, y, th and of the nf elastic coordinates. */
int mbl_ffr_formulate(struct mbl_model *md, const mbl_ffr_body *b, const int *qidx, mblx_id *Fs,
                      struct mbl_sjac *J, mbl_status *st);
/* Keep body b's nodes in the model (md->flex) for the mode shapes of the outputs. */
int mbl_ffr_keep_nodes(struct mbl_model *md, const mbl_ffr_body *b, const int *qidx, mbl_status *st);
void mbl_ffr_free_nodes(struct mbl_model *md);
/* After the text rows are differentiated: F[i] += Fs[i], and S's entries merged into md->jac. */
int mbl_ffr_merge(struct mbl_model *md, const mblx_id *Fs, const struct mbl_sjac *S, mbl_status *st);

#endif
