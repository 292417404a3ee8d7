/* The frame's part of the spatial structured term (model/ffr3.h) as expression nodes, shared by its
 * expression form (terms/ffr3.c, on the model's graph) and its numeric form (terms/ffr3_num.c, on
 * a small graph of its own whose symbols are the frame's unknowns, gravity and the body sums,
 * compiled once into a tape). Internal to src/model/terms. */
#ifndef MBLIN_MODEL_TERMS_FFR3_NODES_H
#define MBLIN_MODEL_TERMS_FFR3_NODES_H

#include "mblin/expr.h"

#define FFR3_AB(a, b) (3 * (a) + (b))
/* the pairs (a, b) of M_ab at 3 a + b, and the six of Q (xx yy zz xy xz yz) */
#define FFR3_PA(k) ((k) / 3)
#define FFR3_PB(k) ((k) % 3)
#define FFR3_QA(u) ((u) < 3 ? (u) : (u) == 5 ? 1 : 0)
#define FFR3_QB(u) ((u) < 3 ? (u) : (u) == 3 ? 1 : 2)
/* Cu's entry (p, r) at elastic coordinate j (ffr3.h: int rho u0_p S_r, row-major 9 x nf) */
#define FFR3_CU(Cu, nf, p, r, j) ((Cu)[(size_t)FFR3_AB(p, r) * (size_t)(nf) + (size_t)(j)])
/* the loads of a modal body's geometric stiffness (ffr3.h's HL): (G_) 0..2, al 3..5, then W's
 * entries xx yy zz xy xz yz, W[FFR3_LW(l - 6)] */
#define FFR3_NL 12
#define FFR3_LW(u) ((u) < 3 ? 4 * (u) : (u) == 3 ? 1 : (u) == 4 ? 2 : 5)
/* the body sums the frame rows use: s 0..2, w1 3..5, w2 6..8, Q 9..14 (xx yy zz xy xz yz), D 15..23
 * (3a + b), h 24..26, tw.qf' 27, tw.qf'' 28 */
enum { Z_S = 0, Z_W1 = 3, Z_W2 = 6, Z_Q = 9, Z_D = 15, Z_H = 24, Z_T1 = 27, Z_T2 = 28, NZ = 29 };
/* the frame's unknowns, in the order of fsym: R'' (3), e'' (4), e' (4), e (4) */
enum { FFR3_NFS = 15 };

/* The frame's quantities: the rotation, angular velocity and acceleration, G_ = R'' - g turned into
 * the frame, W_ab = w_a w_b - d_ab |w|^2 and the elastic rows' coefficients Cq (of M q) and Cv (of
 * M q'), with their derivatives by the frame's unknowns fsym. */
typedef struct ffr3_frame {
    mblx_id e[4], ed[4], edd[4], aR[3], gn[3];
    mblx_id Gm[3][4], w[3], al[3], A[3][3], Gv[3], AtG[3], W[9], Cq[9], Cv[9], fsym[FFR3_NFS];
    mblx_id dAtG[3][FFR3_NFS], dal[3][FFR3_NFS], dw2[3][FFR3_NFS], dW[9][FFR3_NFS];
} ffr3_frame;

/* f's quantities from the nodes of e, e', e'', R'' and gravity gn (graph errors are sticky) */
void ffr3_frame_nodes(mblx_graph *g, const mblx_id e[4], const mblx_id ed[4], const mblx_id edd[4],
                      const mblx_id aR[3], const mblx_id gn[3], ffr3_frame *f);
/* the seven frame rows (R, then e) with the body sums as the nodes z (NZ), mass m and polar
 * inertia IpL */
void ffr3_frame_rows(mblx_graph *g, const ffr3_frame *f, double m, double IpL, const mblx_id *z, mblx_id Fr[7]);

#endif
