/* Spanning tree and numeric recursive kinematics in joint coordinates (source 003 Ch. 2-3).
 * See tree.h. Pure functions: no allocation, no model, no output. */
#include "mech/tree.h"

#include <math.h>
#include <string.h>

#include "core/vec3.h"

int mech_tree_span(int nb, int nj, const int *jb, const int *cand, int *parent, int *tree_joint, int *child_is_i,
                   int *order, int *cut)
{
    if (nb < 1 || nj < 0 || (nj && (!jb || !cand)) || !parent || !tree_joint || !child_is_i || !order ||
        (nj && !cut))
        return -1;
    for (int k = 0; k < nj; k++) {
        if (jb[2 * k] < 0 || jb[2 * k] >= nb || jb[2 * k + 1] < 0 || jb[2 * k + 1] >= nb) return -1;
        if (jb[2 * k] == jb[2 * k + 1]) return -1;
        cut[k] = 1;
    }
    for (int b = 0; b < nb; b++) {
        parent[b] = -1;
        tree_joint[b] = -1;
        child_is_i[b] = 0;
        order[b] = -1;
    }
    /* order[] doubles as the breadth-first queue; parent[] == -2 marks "not reached yet" */
    for (int b = 1; b < nb; b++) parent[b] = -2;
    int head = 0, tail = 0;
    order[tail++] = 0;
    int next_root = 1;
    for (;;) {
        while (head < tail) {
            int b = order[head++];
            for (int k = 0; k < nj; k++) {
                if (!cand[k] || !cut[k]) continue;
                int side = jb[2 * k] == b ? 0 : jb[2 * k + 1] == b ? 1 : -1;
                if (side < 0) continue;
                int o = jb[2 * k + (1 - side)];
                if (parent[o] != -2) continue; /* reached already: k closes a loop (stays cut) */
                parent[o] = b;
                tree_joint[o] = k;
                child_is_i[o] = side == 1; /* o is marker i's body when b is marker j's */
                cut[k] = 0;
                order[tail++] = o;
            }
        }
        while (next_root < nb && parent[next_root] != -2) next_root++;
        if (next_root >= nb) break;
        parent[next_root] = -1; /* a floating base */
        order[tail++] = next_root;
    }
    return 0;
}

int mech_tree_poses(int n, const mbl_tree_link *L, const double *q, double *R, double *r, double *c, double *u,
                    double *s)
{
    double Rl[9], rl[3], ul[3], sl[3];
    /* keep every pose: the recursion reads the parent's */
    for (int b = 0; b < n; b++)
        if (L[b].parent >= b || L[b].parent < -1) return -1;
    if (!R || !r) return -1;
    for (int b = 0; b < n; b++) {
        const mbl_tree_link *l = &L[b];
        static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, Z3[3] = {0, 0, 0};
        const double *Rpar = l->parent < 0 ? I3 : R + 9 * l->parent;
        const double *rpar = l->parent < 0 ? Z3 : r + 3 * l->parent;
        double F[9], t[3];
        mat3_mul(Rpar, l->Rp, F); /* the joint frame on the parent, global */
        mat3_vec(Rpar, l->pp, t);
        for (int i = 0; i < 3; i++) sl[i] = rpar[i] + t[i];
        for (int i = 0; i < 3; i++) ul[i] = F[6 + i];
        double Fq[9];
        if (l->type == MBL_TREE_REVOLUTE) {
            double cq = cos(q[b]), sq = sin(q[b]);
            double Rz[9] = {cq, sq, 0, -sq, cq, 0, 0, 0, 1};
            mat3_mul(F, Rz, Fq);
        } else {
            memcpy(Fq, F, sizeof Fq);
        }
        mat3_mult(Fq, l->Rc, Rl); /* R_child = F Rz(q) Rc^T */
        double o[3];        /* the child's joint frame origin */
        for (int i = 0; i < 3; i++) o[i] = sl[i] + (l->type == MBL_TREE_PRISMATIC ? q[b] * ul[i] : 0.0);
        mat3_vec(Rl, l->pc, t);
        for (int i = 0; i < 3; i++) rl[i] = o[i] - t[i];
        memcpy(R + 9 * b, Rl, sizeof Rl);
        memcpy(r + 3 * b, rl, sizeof rl);
        if (c) {
            mat3_vec(Rl, l->cm, t);
            for (int i = 0; i < 3; i++) c[3 * b + i] = rl[i] + t[i];
        }
        if (u) memcpy(u + 3 * b, ul, sizeof ul);
        if (s) memcpy(s + 3 * b, sl, sizeof sl);
    }
    return 0;
}

/* is link a on the path from link b to the ground (a == b included)? */
static int on_path(const mbl_tree_link *L, int a, int b)
{
    for (; b >= 0; b = L[b].parent)
        if (b == a) return 1;
    return 0;
}

int mech_tree_B(int n, const mbl_tree_link *L, const double *q, double *B, double *dB, double *ws)
{
    if (n < 1 || !L || !q || !B || !ws) return -1;
    double *R = ws, *r = R + 9 * (size_t)n; /* 12n doubles: every body's rotation and origin */
    if (mech_tree_poses(n, L, q, R, r, NULL, NULL, NULL)) return -1;
    const size_t rows = 6 * (size_t)n;
    memset(B, 0, sizeof(double) * rows * (size_t)n);
    if (dB) memset(dB, 0, sizeof(double) * rows * (size_t)n * (size_t)n);
    /* the joint axis, joint point and centre of mass of link k, from the stored poses */
#define AXIS_POINT(k, uk, sk)                                                                            \
    do {                                                                                                 \
        static const double I3_[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, Z3_[3] = {0, 0, 0};                    \
        const double *Rp_ = L[k].parent < 0 ? I3_ : R + 9 * L[k].parent;                                 \
        const double *rp_ = L[k].parent < 0 ? Z3_ : r + 3 * L[k].parent;                                 \
        double F_[9], t_[3];                                                                             \
        mat3_mul(Rp_, L[k].Rp, F_);                                                                      \
        mat3_vec(Rp_, L[k].pp, t_);                                                                      \
        for (int i_ = 0; i_ < 3; i_++) {                                                                 \
            (uk)[i_] = F_[6 + i_];                                                                       \
            (sk)[i_] = rp_[i_] + t_[i_];                                                                 \
        }                                                                                                \
    } while (0)
    for (int b = 0; b < n; b++) {
        double cb[3], t[3];
        mat3_vec(R + 9 * b, L[b].cm, t);
        for (int i = 0; i < 3; i++) cb[i] = r[3 * b + i] + t[i];
        for (int k = b; k >= 0; k = L[k].parent) {
            double uk[3], sk[3], d[3], v[3];
            AXIS_POINT(k, uk, sk);
            double *col = B + rows * (size_t)k + 6 * (size_t)b;
            if (L[k].type == MBL_TREE_REVOLUTE) {
                for (int i = 0; i < 3; i++) d[i] = cb[i] - sk[i];
                vec3_cross(uk, d, v);
                for (int i = 0; i < 3; i++) {
                    col[i] = v[i];
                    col[3 + i] = uk[i];
                }
            } else {
                for (int i = 0; i < 3; i++) col[i] = uk[i];
            }
            if (!dB) continue;
            /* d(column k of body b)/dq_m for every joint m on b's path */
            for (int m = b; m >= 0; m = L[m].parent) {
                double um[3], sm[3];
                AXIS_POINT(m, um, sm);
                int above_k = m != k && on_path(L, m, k); /* m moves k's parent: u_k, s_k turn */
                double duk[3] = {0, 0, 0}, dsk[3] = {0, 0, 0}, dcb[3], e[3];
                if (L[m].type == MBL_TREE_REVOLUTE) {
                    for (int i = 0; i < 3; i++) e[i] = cb[i] - sm[i];
                    vec3_cross(um, e, dcb);
                    if (above_k) {
                        vec3_cross(um, uk, duk);
                        for (int i = 0; i < 3; i++) e[i] = sk[i] - sm[i];
                        vec3_cross(um, e, dsk);
                    }
                } else {
                    for (int i = 0; i < 3; i++) dcb[i] = um[i];
                    if (above_k)
                        for (int i = 0; i < 3; i++) dsk[i] = um[i];
                }
                double *dcol = dB + rows * (size_t)n * (size_t)m + rows * (size_t)k + 6 * (size_t)b;
                if (L[k].type == MBL_TREE_REVOLUTE) {
                    double a1[3], a2[3], dd[3];
                    for (int i = 0; i < 3; i++) {
                        d[i] = cb[i] - sk[i];
                        dd[i] = dcb[i] - dsk[i];
                    }
                    vec3_cross(duk, d, a1);
                    vec3_cross(uk, dd, a2);
                    for (int i = 0; i < 3; i++) {
                        dcol[i] = a1[i] + a2[i];
                        dcol[3 + i] = duk[i];
                    }
                } else {
                    for (int i = 0; i < 3; i++) dcol[i] = duk[i];
                }
            }
        }
    }
#undef AXIS_POINT
    return 0;
}
