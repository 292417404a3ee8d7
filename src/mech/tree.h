/* Relative (joint) coordinates: the spanning tree of a mechanism and the recursive kinematics of
 * source 003 Ch. 2-3 (Trom 1990), as pure numeric functions.
 *
 * The mechanism compiler uses mech_tree_span() to choose which joints carry joint coordinates (the
 * tree) and which close loops (the cut joints, written as constraints); it writes the recursive
 * kinematics itself as expression text (src/model/mechanism.c, `coordinates: relative`). The
 * numeric kinematics here (body poses, the velocity transformation B and its derivative dB/dq)
 * are the same recursion evaluated at a point, for the user who wants to check source 003
 * Eq. 3.38-3.44 and for the tests that compare the two (tests/mech/test_tree.c).
 *
 * Conventions (source 003 Table 2.2): bodies are numbered parents first; body b's rows of B are
 * [v_cm; w] (the global velocity of its centre of mass, its global angular velocity), so that
 * with the block-diagonal Cartesian mass matrix M = diag(m_b I3, J_b) the joint-space mass
 * matrix is B^T M B (Eq. 3.8) and, at rest, the stiffness of the applied forces f (global
 * [force at the cm; moment]) is K = -(sum_k dB^T/dq_k f e_k^T + B^T df/dq) (Eq. 3.10). */
#ifndef MBLIN_MECH_TREE_H
#define MBLIN_MECH_TREE_H

/* ---- the spanning tree ------------------------------------------------------------------ */

/* Bodies 0 .. nb-1, body 0 the ground. Joint k connects bodies jb[2k] and jb[2k+1]; it may be a
 * tree joint when cand[k] != 0 (a joint type with joint coordinates, not named as a cut).
 * Breadth-first from the ground over the candidate joints in their order (so the tree is the
 * shortest path to ground for every body, and the file's order breaks ties); a body no tree
 * joint reaches from the ground becomes the root of its own subtree (a floating base: parent -1,
 * tree_joint -1), breadth-first again from the lowest such body.
 * Out (arrays the caller sizes): parent[nb] (-1 for the ground and the roots), tree_joint[nb]
 * (the joint from the parent, -1 for ground and roots), child_is_i[nb] (1 when the body is the
 * joint's marker-i side), order[nb] (bodies, every parent before its children, ground first),
 * cut[nj] (1 for a candidate joint that closes a loop, or any non-candidate joint between two
 * bodies; 0 for the tree joints). Returns 0, or -1 for bad arguments (a body out of range, a
 * joint from a body to itself). */
int mech_tree_span(int nb, int nj, const int *jb, const int *cand, int *parent, int *tree_joint, int *child_is_i,
                   int *order, int *cut);

/* ---- numeric recursive kinematics --------------------------------------------------------- */

enum { MBL_TREE_REVOLUTE = 0, MBL_TREE_PRISMATIC = 1 };

/* One body of a tree with one elementary joint from its parent (a joint of several coordinates,
 * cylindrical, universal, planar, is a chain of elementary joints through massless bodies).
 * The joint frame is fixed on the parent at (Rp, pp) and on the child at (Rc, pc) (rotations
 * column-major, positions in the body's axes); the joint turns or slides the child's frame about
 * or along the common z axis by q: R_child = R_parent Rp Rz(q) Rc^T, and the child's joint frame
 * origin is the parent's plus q z for a prismatic joint. cm is the centre of mass in body axes. */
typedef struct mbl_tree_link {
    int parent; /* index of the parent body among the links, -1 = ground */
    int type;   /* MBL_TREE_REVOLUTE or MBL_TREE_PRISMATIC */
    double Rp[9], pp[3];
    double Rc[9], pc[3];
    double cm[3];
} mbl_tree_link;

/* Poses at q (n links, one coordinate each, parents before children): R[9n] column-major,
 * r[3n] body origins, c[3n] centres of mass, u[3n] global joint axes, s[3n] global joint points
 * (any output may be NULL). Returns 0, or -1 for a link whose parent is not earlier. */
int mech_tree_poses(int n, const mbl_tree_link *L, const double *q, double *R, double *r, double *c, double *u,
                    double *s);

/* The velocity transformation B (6n x n, column-major, rows [v_cm; w] per body): column k of
 * body b is [u_k x (c_b - s_k); u_k] for a revolute joint k on b's path to ground, [u_k; 0] for a
 * prismatic one, zero otherwise. dB (optional, n planes of 6n x n: plane m is dB/dq_m) is its
 * exact derivative, written out by the rules of source 003 Tables 3.2-3.4: du_k/dq_m = u_m x u_k
 * and ds_k/dq_m = u_m x (s_k - s_m) when joint m is above joint k, dc_b/dq_m = column m's
 * velocity part when m is on b's path. ws: 12n doubles. Returns 0, or -1 as mech_tree_poses. */
int mech_tree_B(int n, const mbl_tree_link *L, const double *q, double *B, double *dB, double *ws);

#endif
