/* The structured term of a spatial flexible body (a spatial beam, src/mech/beam3.c): the body's
 * rows of the equations of motion and their Jacobian entries in closed form from constant sparse
 * matrices (src/model/terms/ffr3.c), as ffr.h does for planar bodies. ffr.c dispatches to it when a
 * body's `sp` is set. Internal to the library.
 *
 * Coordinates: the frame's origin R (3), its Euler parameters e (4; A(e) the rotation, body-frame
 * angular velocity w = 2 G(e) e', acceleration al = 2 G(e) e'', G = [-e1 e0 e3 -e2; -e2 -e3 e0 e1;
 * -e3 e2 -e1 e0]) and nf elastic coordinates qf. A point of the centre line is at R + A u,
 * u = u0 + S qf, u0 the undeformed place (a beam's (X, 0, 0); a modal body's any). The invariants
 * (rho the mass per length of a beam, per volume of a modal body's part):
 *   m, s0 = int rho u0, Q0_ab = int rho u0_a u0_b, Sb = int rho S (3 x nf), Cu_pr = int rho u0_p S_r
 *   (9 x nf, row 3 p + r; a beam's rows 3..8 are 0),
 *   M_ab = int rho S_a^T S_b (9 sparse nf x nf, M_ba = M_ab^T),
 * a beam's sections' polar inertia IpL = int rho Ip and tw = int rho Ip t (t the twist's shape; both 0
 * for a modal body), the
 * assembled mass Mc (= M_xx + M_yy + M_zz + int rho Ip t t^T) and stiffness K (constant: small
 * strains). A beam also has the geometric-stiffness invariants H1 = int rho H(X) dX and
 * Hx = int rho X H(X) dX, H(X) = int_0^X (Sy'^T Sy' + Sz'^T Sz') (the slopes of both bending
 * planes): the foreshortening -1/2 qf^T H(X) qf of the point at X along the body x axis, whose
 * virtual work with the axial inertia and gravity load gives the elastic rows KG qf,
 * KG = -(G_)_x H1 + (w_y^2 + w_z^2) Hx = -(G_)_x H1 - W_xx Hx (the axial force N(X) of these loads
 * times int S'^T S'; the centrifugal load of a turning about an axis across the beam); its other
 * terms are of second order in qf and are left out. With s = s0 + Sb qf, w1 = Sb qf', w2 = Sb qf'',
 * Q_ab = int rho u_a u_b, D_ab = int rho u_a u'_b, h = int rho u x u'', I = tr(Q) 1 - Q,
 * G_ = A^T (R'' - g), the virtual work of the inertia forces and gravity gives the rows
 *   R:  m (R'' - g) + A (al x s + w x (w x s) + 2 w x w1 + w2)
 *   e:  2 G^T n + dV/de,  n = s x A^T R'' + I al + w x (I w) + 2 (tr(D) w - D^T w) + h
 *                     + (IpL al_x + tw.qf'') e_x + w x (IpL w_x + tw.qf') e_x,  V = -g.A(e) s
 *       (gravity as its potential's derivative: 2 G^T (s x A^T (-g)) up to a multiple of e, but
 *       the stiffness at an equilibrium stays symmetric, so the symmetric sparse path applies)
 *   qf_i: Sb_i.G_ + al.int rho u x S_i + sum_ab (w_a w_b - d_ab |w|^2) int rho S_a,i u_b
 *         + 2 w.int rho u' x S_i + (Mc qf'')_i + tw_i al_x + ((K + KG) qf)_i + (C qf')_i
 * (C = alpha Mc + beta K). A modal body's geometric stiffness adds KG = sum_l L_l HL_l to the elastic
 * rows' K, the loads L = ((G_)_x, _y, _z, al_x, al_y, al_z, W_xx, W_yy, W_zz, W_xy, W_xz, W_yz)
 * (its FE code's stiffness per unit load; ffr3_nodes.h's FFR3_NL, FFR3_LW); like H1, Hx, only in
 * the elastic rows. These are the Lagrange equations of the kinetic energy the text form of
 * the spatial beam wrote (up to a multiple of e in the e rows, which the normalization's multiplier
 * takes). Every row is linear in the invariants (the sensitivities use that). */
#ifndef MBLIN_MODEL_FFR3_H
#define MBLIN_MODEL_FFR3_H

#include "model/ffr.h"

typedef struct mbl_ffr3 {
    int nf;                     /* elastic coordinates */
    double m, s0[3], Q0[6];     /* Q0: xx yy zz xy xz yz */
    double IpL;                 /* int rho Ip */
    double *Sb, *Cu, *tw;       /* 3 x nf (row-major), 9 x nf (row-major, row 3 p + r), nf (0: none) */
    mbla_csc *M[9];             /* int rho S_a^T S_b at 3 a + b */
    mbla_csc *Mc, *K;           /* nf x nf (may be NULL in a derivative: zero) */
    mbla_csc *H1, *Hx;          /* geometric stiffness per unit axial load (NULL: none) */
    mbla_csc *HL[12];           /* a modal body's geometric stiffness per unit load (NULL: none; below) */
    int nnode;                  /* nodes for the mode shapes */
    double *X0;                 /* 3 x nnode: undeformed node positions in the body frame */
    int *ndof;                  /* 6 x nnode: the elastic coordinate of the node's ux, uy, uz, rx, ry, rz */
} mbl_ffr3;

void model_ffr3_free(mbl_ffr3 *sp);
/* a deep copy (the nodes not copied) */
int model_ffr3_copy(const mbl_ffr3 *a, mbl_ffr3 *b, mbl_status *st);

/* body b (b->sp set): rows into Fs, Jacobian entries into J; qidx: x, y, z, e0..e3, then the nf
 * elastic coordinates; gn: gravity (3 nodes) */
int model_ffr3_formulate(struct mbl_model *md, const mbl_ffr_body *b, const int *qidx, const mblx_id *gn, mblx_id *Fs,
                       struct mbl_sjac *J, mbl_status *st);
/* the same for invariants sp and damping matrix C (NULL: none): the derivatives' form */
int model_ffr3_formulate_inv(struct mbl_model *md, const mbl_ffr3 *sp, const mbla_csc *C, const mblx_id *gn,
                           const int *qidx, mblx_id *Fs, struct mbl_sjac *J, mbl_status *st);
/* The term evaluated numerically beside the tapes (src/model/terms/ffr3_num.c), under ffr.h's switch
 * model_ffr_set_numeric: model_ffr_add calls model_ffr3_num_add for a spatial body (0: added to
 * md->sjac's pattern with the node 0 and to md->ffr3n; 1: not taken, nothing pushed, the expression
 * form instead; < 0: an error); model_compile's bind maps its places through model_ffr3_num_remap
 * (the term's remap entry). */
typedef struct mbl_ffr3_num mbl_ffr3_num;
int model_ffr3_num_add(struct mbl_model *md, const mbl_ffr_body *b, const int *qidx, const mblx_id *gnode,
                       mbl_status *st);
void model_ffr3_num_remap(struct mbl_model *md, const int *map);
void model_ffr3_num_free(struct mbl_model *md);
/* their expression form (under model_graph_lock), as model_ffr_num_exprs */
int model_ffr3_num_exprs(struct mbl_model *md, mblx_id *Fs, struct mbl_sjac *S, mbl_status *st);
/* the derivative of body b's invariants (b->sp) and damping matrix by its factor k (ffr.h's
 * mbl_ffr_factor; lexp and kcls over the elastic coordinates) */
int model_ffr3_dinv(const mbl_ffr_body *b, int k, mbl_ffr3 *dv, mbla_csc **dC, mbl_status *st);
/* the nodes of body b for the outputs (f: its entry in md->flex, name set by the caller) */
int model_ffr3_keep_nodes(const mbl_ffr_body *b, const int *qidx, mbl_flex_nodes *f, mbl_status *st);
/* positions (3 x nnode) and displacements and small rotations (6 x nnode), global */
void model_ffr3_shape(const mbl_flex_nodes *f, const double *q, const double *dq, double *pos, double *disp);

#endif
