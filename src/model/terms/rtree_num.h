/* The numeric tree term's data and the bodies' layout of its passes (rtree_pass.c), shared with the
 * articulated-body inverse of its mass matrix (rtree_minv.c). Internal to src/model/terms. */
#ifndef MBLIN_MODEL_TERMS_RTREE_NUM_H
#define MBLIN_MODEL_TERMS_RTREE_NUM_H

#include <stddef.h>

#include "model/rtree.h"

struct mbl_rtree_num {
    mbl_rtree tree;   /* nb, parents and kinds (no texts) */
    int n;            /* the model's coordinates */
    int *qidx;        /* nb: coordinate of each body (-1 fixed) */
    int *vs, *as;     /* nb: symbol index of its q' and q'' (-1 fixed) */
    mblx_tape *in;    /* the texts but e: nb * NTV values, then gravity (3) */
    size_t nin, in_work;
    mblx_tape *iny;   /* NULL, or the texts, then the model's outputs and their Jacobian (ny values) */
    size_t ny, iny_work;
    struct mblx__subtape *intx; /* NULL, or a view of iny computing the texts alone (bit for bit iny's,
                                 * in iny's registers): the evaluations that want no outputs */
    mblx_id *tn, gn[3]; /* the texts as nodes (the lazy expression form) */
    int npair;        /* (i, j): j = i or an ancestor of i, both with coordinates */
    int *pi, *pj;
    int *pos;         /* 6 per pair: positions in the Jacobian's values, -1 for none */
    int *dpos;        /* 6 per pair: the same entries' places in three n x n matrices by columns, K = dR/dq,
                       * C = dR/dv, M = dR/da one after the other (model_rtree_jac_dense), -1 for none */
    char *qzero;      /* nb: the rows do not depend on the body's coordinate (in structure) */
    /* the articulated-body inverse of M (rtree_minv.c): mass_only 1 when M = dR/da is the term's
     * alone (every coordinate a joint of the tree, no text row of the equations of motion with an
     * acceleration entry); qlo, qhi (nb): the least and the greatest coordinate of the joints in a
     * body's subtree, itself included (qlo > qhi: none) */
    int mass_only;
    int *qlo, *qhi;
    int preorder;     /* the coordinates number the joints in a preorder of the tree (rtree_minv.c) */
    /* the texts computed natively (rtree_kin.c; then in is NULL and iny, when made, computes the
     * outputs alone): kin (nb) the joints' rotations, qs (nb) the symbol index of each body's
     * coordinate (-1 fixed); the values that are not kinematics, NLV per body (the markers' sp,
     * sc, then the texts from the centre of mass to the inertia) and gravity, in lv0 when all are
     * numbers, else computed by the tape lvt at every evaluation (parameters) into the first nlv
     * doubles of its work (in_work doubles in all: nlv and lvt's registers) */
    struct rtree_kin *kin;
    int *qs;
    double *lv0;
    mblx_tape *lvt;
    size_t nlv;
    /* with the texts computed natively, the outputs and their Jacobian's entries over stand-in
     * symbols for the bodies' A, r, e and the joints' u, p (rtree_y.c: ysn, ny of them, yjsn in
     * md->yjac's order, nyj), whose values come from the native kinematics: stand-in k is the
     * symbol of index st_sym[k], its value at st_src[k] of [the texts (nin); the bodies' Euler
     * parameters (4 nb)]. yst: iny was compiled from them (then only the stand-ins it reads are
     * kept), and reads the symbols' values from a copy of syms (its first nsym0, as far as the
     * tape reads) with the stand-ins' (next in all), in iny's work after iny_regs doubles, then
     * the Euler parameters */
    mblx_id *ysn, *yjsn;
    int nyj, nst, yst;
    int *st_sym, *st_src;
    size_t nsym0, next, iny_regs;
    unsigned char *eneed; /* nb: the body's Euler parameters are read: 1 by the chain of products
                           * (its own or a descendant's), 2 from its A (the outputs even in them) */
    /* the Jacobian's chain parts computed natively (rtree_y.c, rtree_kin.c; with yst): yjsn holds
     * each entry's direct part df/dx (the stand-ins held), yphn (6 nphi) the wrenches Phi of the
     * bodies whose stand-ins an output reads (one per output and body); iny computes the outputs,
     * the direct parts, then the wrenches. Pair t (nyc in all) adds S . Phi to the entry at yc_pos[t]
     * of y (the output's derivative by a joint's coordinate), S the axis of the joint of body
     * yc_b[t], Phi wrench yc_phi[t] of a body that joint carries (F_j = the sum of its Phi) */
    mblx_id *yphn;
    int nphi, nyc;
    int *yc_b, *yc_phi, *yc_pos;
};

enum { NLV = 6 + MBL_RTREE_E - MBL_RTREE_CM };

/* A joint's rotations (model/rtree.h, mbl_rtree_body.local); c1id, c2id: C1, C2 the identity
 * (their products left out) */
typedef struct rtree_kin {
    double C1[9], C2[9], Q1[4], Q2[4], sgn;
    int c1id, c2id;
} rtree_kin;

struct mbl_model;
/* rtree_kin.c: kin, qs and lv0 or lvt when every body is local (1), else 0 (nothing set, the
 * texts' tape); -1 with st set on an error */
int model_rtree_kin_setup(const struct mbl_model *md, const mbl_rtree *t, const mblx_id *tn, const mblx_id *gn,
                          const mblx_id *ln, mbl_rtree_num *r, mbl_status *st);
/* with r->kin: model_rtree_num_bind_outputs and model_rtree_num_texts_y (rtree.h) */
int model_rtree_kin_bind_outputs(struct mbl_model *md, mbl_rtree_num *r, mbl_status *st);
int model_rtree_kin_texts_y(const mbl_rtree_num *r, const double *syms, double *y, double *work, mbl_status *st);
/* the bodies' Euler parameters (4 nb) at syms, natively (r->kin; tv: the texts' values there) */
void model_rtree_kin_euler(const mbl_rtree_num *r, const double *syms, const double *tv, double *E);
/* the texts' values (nin) at syms: natively when r->kin, else by the tape r->in (registers in
 * work: r->in_work doubles) */
int model_rtree_num_texts(const mbl_rtree_num *r, const double *syms, double *tv, double *work, mbl_status *st);

/* The texts the evaluation reads (all but the Euler parameters, which only the outputs'
 * Jacobian's expressions use, rtree_y.c), NTV per body, then gravity */
#define NTV MBL_RTREE_E

enum { NB_S = 0, NB_VP = 6, NB_AP = 12, NB_V = 18, NB_A = 24, NB_F = 30, NB_HC = 36, NB_P = 42, NB_Q = 48,
       NB_U = 54, NB_G = 60, NB_D = 66, NB_E = 72, NB_I = 78, NB_IC = 114, NB_BC = 150, NB_SUB = 186,
       NB_O = 187, NB_DP = 190, NB_GL = 194, NB_SIZE = 278 };
/* NB_IC, NB_BC: the subtree's sums of I and B, NB_SUB: not zero once a child has added to them (the
 * first contribution is copied, not added to zeros: the sums differ at most in the sign of a zero
 * entry, which no product or sum that reads them sees: nm6v's sums start from +0, to which adding
 * a zero of either sign gives +0, and a zero added to anything else changes nothing) */

/* NB_O: the body's point (model_rtree_point), NB_DP: it less its parent's (the ground's: the
 * global origin), NB_GL: the Jacobian's S, G, U, P, Q, D, E about the tree's first point (its pair
 * products with other bodies; model_rtree_jac_entries), two of them interleaved entry by entry
 * where a pair's two dot products run in the two lanes of a vector (rtree_pass.c, GL_PQ ..; 84 in all).
 * Each body's vectors are about its own point, in global axes: about one global
 * origin a body r = 100 m down a chain has inertia entries m r^2 and velocities w r, and the
 * velocity terms' subtree sums of v x* I - I v x lose r^3 eps against their own size (1.1e-10 in A
 * of the 100-link chain moving; docs/linearization.md) */

/* The forward and backward passes from the texts' values tv into the bodies N (nb * NB_SIZE; full:
 * the subtree sums the Jacobian needs), rtree_pass.c */
void model_rtree_nrnea_tv(const mbl_rtree_num *r, const double *syms, const double *tv, double *N, int full);
/* A body's spatial inertia (6 x 6 by columns) from its texts t, about the point o (NULL: the
 * global origin), rtree_pass.c */
void model_rtree_inertia(const double *t, const double *o, double *I6);
/* A body's point from its kind and texts tb (a point of its joint's axis; its origin without a
 * joint), rtree_pass.c */
const double *model_rtree_point(int kind, const double *tb);
/* X' = T^T X T: a 6 x 6 map of motions to forces about a body's point moved to a point d behind
 * it (d = the body's point less the other's), rtree_pass.c */
void model_rtree_shift6(const double *X, const double *d, double *out);
/* The texts' values into work (nin of them) from the outputs' shared tape iny, and the outputs with
 * their Jacobian's values into y (NULL: not wanted, and not computed: the view intx), iny's
 * registers after them (rtree.c) */
int model_rtree_num_texts_y(const mbl_rtree_num *r, const double *syms, double *y, double *work, mbl_status *st);
/* The Jacobian's entries added to out from the bodies N of the full pass, rtree_pass.c */
void model_rtree_jac_entries(const mbl_rtree_num *r, double *N, double *out);
/* The same entries added to the three matrices KCM at their places dpos instead (the dense path of
 * src/lin/relin_dense.c; model_eval_dense_minv) */
void model_rtree_jac_dense(const mbl_rtree_num *r, double *N, double *KCM);
/* rtree_minv.c: M^-1 (n x n by columns) from the texts' values tv (the articulated bodies, each
 * about its own point; mwork: model_rtree_minv_work doubles); 1 when a pivot is not positive. N:
 * NULL, or the bodies of model_rtree_nrnea_tv's pass at the same point, whose points, axes and
 * inertias (NB_O, NB_S, NB_I) are taken instead of computed again from tv */
size_t model_rtree_minv_work(const mbl_rtree_num *r);
int model_rtree_minv(const mbl_rtree_num *r, const double *tv, const double *N, double *Minv, double *mwork);
/* rtree_minv.c: mass_only, qlo and qhi from the model's Jacobian pattern before the term's entries
 * are added (model_rtree_num_pattern); 0 or MBL_ENOMEM */
struct mbl_model;
int model_rtree_minv_setup(const struct mbl_model *md, mbl_rtree_num *r, mbl_status *st);

#endif
