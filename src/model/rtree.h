/* The structured term of a tree in relative coordinates (src/model/terms/rtree.c): the inertia and
 * gravity rows of the equations of motion of rigid bodies joined to the ground by revolute and
 * prismatic tree joints (and fixed ones), written by the recursive Newton-Euler algorithm in
 * spatial vectors, with their Jacobian with respect to q, q', q'' in closed form (the analytical
 * derivatives of Carpentier & Mansard 2018; derivation in docs/mechanism-reference.md, "The tree's
 * structured term"). The mechanism compiler (src/mech/relative.c) describes the tree as texts of
 * its kinematic variables; the model parses them and evaluates the rows and Jacobian entries
 * numerically beside its residual and Jacobian tapes (mbl_rtree_num_*, below), so that every
 * method, the operating point and the simulation see them; the same closed forms as expression
 * nodes (model_rtree_formulate) are built only for the sensitivities and the code generator.
 * Internal to the library. */
#ifndef MBLIN_MODEL_RTREE_H
#define MBLIN_MODEL_RTREE_H

#include "mblin/expr.h"
#include "mblin/status.h"

enum { MBL_RTREE_FIXED, MBL_RTREE_REV, MBL_RTREE_PRI };

/* The texts of a body, in this order: the joint axis u (global, the direction in which the
 * coordinate turns or moves the body), a point p on it (global), the body's rotation matrix A
 * (row-major), its origin r, its centre of mass in body axes, its mass, its inertia about the
 * centre of mass in body axes (xx yy zz xy xz yz), its Euler parameters e (A = R(e), Hamilton:
 * only the outputs' Jacobian reads them, rtree_y.c). */
enum { MBL_RTREE_U = 0, MBL_RTREE_P = 3, MBL_RTREE_A = 6, MBL_RTREE_R = 15, MBL_RTREE_CM = 18, MBL_RTREE_M = 21,
       MBL_RTREE_I = 22, MBL_RTREE_E = 28, MBL_RTREE_NT = 32 };

typedef struct mbl_rtree_body {
    char *name;                 /* "body 'link1'", for messages */
    int parent;                 /* index of the parent in the list (parents come first), -1: the ground */
    int kind;                   /* MBL_RTREE_* */
    char *q;                    /* its joint coordinate (NULL for a fixed joint) */
    char *t[MBL_RTREE_NT];
    int line, col;
    /* The joint's local data, for the kinematics computed natively (rtree_kin.c) instead of from
     * the texts u, p, A, r: local = 1 when given (a spatial tree's revolute, prismatic or fixed
     * joint). With the parent's rotation A_p and origin r_p (the identity and zero for the ground),
     * W = A_p C1, the axis u = sgn W e_z, its point p = r_p + A_p sp, and
     *   A = W Rz(sgn q) C2 (revolute), W C2 (prismatic, fixed),  r = p + q u (prismatic) - A sc:
     * C1, C2 constant rotations (row-major), sp the parent's marker in the parent's axes (for the
     * ground: global), sc the child's in the body's axes (texts); Q1, Q2 the Euler parameters of
     * C1 and C2, with which e = e_p (x) Q1 (x) qz(sgn q) (x) Q2 (without qz but for a revolute) */
    int local;
    double sgn, C1[9], C2[9], Q1[4], Q2[4];
    char *sp[3], *sc[3];
} mbl_rtree_body;

typedef struct mbl_rtree {
    int nb;
    mbl_rtree_body *b;
    char *g[3];                 /* gravity (global) */
} mbl_rtree;

void model_rtree_free(mbl_rtree *t);

struct mbl_model;
struct mbl_sjac;
/* Add the tree's rows to Fs (Fs[i] += row of coordinate i) and their Jacobian entries to J. qidx:
 * the model coordinate index of each body's coordinate (-1: fixed joint); tn: nb * MBL_RTREE_NT
 * nodes (the texts parsed), gn: gravity nodes. */
int model_rtree_formulate(struct mbl_model *md, const mbl_rtree *t, const int *qidx, const mblx_id *tn,
                        const mblx_id gn[3], mblx_id *Fs, struct mbl_sjac *J, mbl_status *st);

/* The same term evaluated numerically beside the tapes (the default; rtree.c explains why): the
 * texts computed natively from the joints' local data when every body has them and they, the
 * masses, centres, inertias and gravity are numbers (ln: nb * 6 nodes, each body's sp then sc,
 * MBLX_NONE where not local; rtree_kin.c), else compiled into a tape of their own, the rows added to the residual tape's outputs and the
 * entries to the Jacobian tape's by model_rtree_num_F and model_rtree_num_jac, which the model's
 * evaluators call after the tapes (model_eval_F, model_eval_jac; work: at least
 * model_rtree_num_work doubles, contents free). Steps: model_rtree_num_new when the model is
 * formulated (instead of model_rtree_formulate), model_rtree_num_pattern once the Jacobian's entries
 * are known (adds the term's entries to md->jac, with a zero node where the text has none, and
 * records their positions). The expression form
 * (rows into Fs, entries into S) is built on demand by model_rtree_num_exprs (graph lock held). */
typedef struct mbl_rtree_num mbl_rtree_num;
int model_rtree_num_new(struct mbl_model *md, const mbl_rtree *t, const int *qidx, const mblx_id *tn,
                      const mblx_id gn[3], const mblx_id *ln, mbl_rtree_num **out, mbl_status *st);
int model_rtree_num_pattern(struct mbl_model *md, mbl_rtree_num *r, mbl_status *st);
size_t model_rtree_num_work(const mbl_rtree_num *r);
int model_rtree_num_F(const mbl_rtree_num *r, const double *syms, double *F, double *work, mbl_status *st);
int model_rtree_num_jac(const mbl_rtree_num *r, const double *syms, double *jac, double *work, mbl_status *st);
int model_rtree_num_exprs(const struct mbl_model *md, const mbl_rtree_num *r, mblx_id *Fs, struct mbl_sjac *S,
                        mbl_status *st);
/* The tree as the outputs' Jacobian sees it (rtree_y.c): its number of bodies and, for body b,
 * its parent (-1: the ground), kind (MBL_RTREE_*), model coordinate (-1: none) and its texts'
 * nodes (MBL_RTREE_NT of them). */
int model_rtree_num_nbodies(const mbl_rtree_num *r);
void model_rtree_num_body(const mbl_rtree_num *r, int b, int *parent, int *kind, int *q, const mblx_id **tn);
/* The outputs' Jacobian dy/d[a lam mu v q r] into J (rows 0 .. ny - 1, columns increasing in each
 * row), each entry the partial derivative at the tree's body poses plus the closed-form
 * derivatives of the poses (rtree_y.c): O(depth) nodes per output of a body's pose, where
 * differentiating through the chain of rotations costs hundreds per joint. */
int model_rtree_num_yjac(struct mbl_model *md, mbl_rtree_num *r, int ny, const mblx_id *y, struct mbl_sjac *J,
                         mbl_status *st);
/* The outputs with the texts (model_compile, once md->yjac is made): with the kinematics computed
 * natively, a tape of the outputs and their Jacobian over stand-in symbols for the bodies' poses
 * and the joints' axes, whose values the native kinematics give (rtree_y.c, rtree_kin.c); else one
 * tape computes the kinematics that both read. model_rtree_num_jac_y evaluates the term's Jacobian
 * entries (as model_rtree_num_jac) and the outputs with their Jacobian's values into y
 * (md->tape_y's layout; NULL: not wanted, and only the texts computed; model_eval_jac_y). */
int model_rtree_num_bind_outputs(struct mbl_model *md, mbl_rtree_num *r, mbl_status *st);
int model_rtree_num_jac_y(const mbl_rtree_num *r, const double *syms, double *jac, double *y, double *work,
                          mbl_status *st);
/* The inverse of the mass matrix by the tree's articulated bodies (rtree_minv.c), when
 * model_rtree_num_mass_only: M^-1 at syms into minv (n x n by columns), and when jac is not NULL the
 * term's Jacobian entries added to jac and the outputs into y (NULL: not wanted, nor computed) as
 * model_rtree_num_jac_y or model_rtree_num_jac add them (the same values, bit for bit); dense: jac
 * is three n x n matrices by columns (dR/dq, dR/dv, dR/da) and the entries are added at their
 * places there instead (model_rtree_num_dense_ok: when the term has them). mwork:
 * model_rtree_num_mass_work doubles. 1 when M is not positive definite there (a pivot), else 0 or
 * an error of the texts' evaluation. */
int model_rtree_num_mass_only(const mbl_rtree_num *r);
int model_rtree_num_dense_ok(const mbl_rtree_num *r);
size_t model_rtree_num_mass_work(const mbl_rtree_num *r);
int model_rtree_num_minv(const mbl_rtree_num *r, const double *syms, double *jac, double *y, double *minv,
                         double *mwork, double *work, int dense, mbl_status *st);
/* Number of Jacobian entries the term writes (for tests and benchmarks). */
int model_rtree_num_entries(const mbl_rtree_num *r);
void model_rtree_num_free(mbl_rtree_num *r);

#endif
