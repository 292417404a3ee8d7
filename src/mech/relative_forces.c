/* `coordinates: relative`, the generalized forces: the loads of every subtree reduced to its root
 * body (in the body's axes for the recursive kinematics), their virtual power on the joint
 * coordinates and on the roots' absolute coordinates, loads given to one joint directly, and the
 * description of the tree's structured term (model/rtree.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/vec3.h"
#include "mech/mech_internal.h"
#include "mech/relative.h"
#include "model/rtree.h"

/* ---- generalized forces ---- */

/* The subtree loads of tree body b in its own axes, about its origin (_fsl_, _nsl_): its
 * d'Alembert load (tree_motion), its applied loads and weight (given globally: A^T of them), and
 * its children's, turned by their Rpc and moved by their rho. When b's parent is a floating root
 * (absolute coordinates), they are also given globally in Fs[b], Ns[b] for the root's rows. */
static int local_loads(mech *M, int b, const char *(*Fs)[3], const char *(*Ns)[3], char *hasl)
{
    int nb = M->nb, rc = 0;
    body *B = &M->b[b];
    /* a body of the structured term with no applied loads on its subtree has none to write */
    int any = !B->rt;
    for (int k = 0; k < 3; k++) any |= B->F[k] != NULL || B->N[k] != NULL;
    for (int h2 = 1; h2 < nb && !any; h2++) {
        int c = M->torder[h2];
        any = M->torder[nb + c] >= 0 && mech_rel_parent(M, c) == b && M->b[c].kind == KIND_SPATIAL && hasl[c];
    }
    hasl[b] = (char)any;
    if (!any) return 0;
    const char *A[9], *Fg[3], *Ng[3], *W[3], *AtF[3], *AtN[3], *AtW[3], *cm[3], *cW[3];
    for (int k = 0; k < 9; k++) A[k] = B->A[k];
    for (int k = 0; k < 3; k++) {
        W[k] = M->grav[k] && !B->rt ? mech_tx_mul(M, B->mass, M->grav[k]) : NULL;
        Fg[k] = B->F[k];
        Ng[k] = B->N[k];
        cm[k] = mech_tx_is0(B->cm[k]) ? NULL : B->cm[k];
    }
    mech_tx_matvec(M, A, Fg, 1, AtF);
    mech_tx_matvec(M, A, Ng, 1, AtN);
    mech_tx_matvec(M, A, W, 1, AtW);
    mech_tx_cross(M, cm, AtW, cW);
    sbuf fl[3] = {{0}, {0}, {0}}, nl[3] = {{0}, {0}, {0}};
    for (int k = 0; k < 3; k++) {
        if (!B->rt) {
            mech_sb_add(M, &fl[k], "", mech_fmt(M, "_fil_%s_%d", B->name, k + 1));
            mech_sb_add(M, &nl[k], "", mech_fmt(M, "_nil_%s_%d", B->name, k + 1));
        } else {
            mech_sb_add(M, &fl[k], "", "0");
            mech_sb_add(M, &nl[k], "", "0");
        }
        if (AtF[k]) mech_sb_add(M, &fl[k], " + ", mech_fmt(M, "(%s)", AtF[k]));
        if (AtW[k]) mech_sb_add(M, &fl[k], " + ", mech_fmt(M, "(%s)", AtW[k]));
        if (AtN[k]) mech_sb_add(M, &nl[k], " + ", mech_fmt(M, "(%s)", AtN[k]));
        if (cW[k]) mech_sb_add(M, &nl[k], " + ", mech_fmt(M, "(%s)", cW[k]));
    }
    for (int h2 = 1; h2 < nb; h2++) {
        int c = M->torder[h2];
        if (M->torder[nb + c] < 0 || mech_rel_parent(M, c) != b || M->b[c].kind != KIND_SPATIAL || !hasl[c]) continue;
        const char *R[9], *fc[3], *nc[3], *rho[3], *g[3], *gn[3], *rg[3];
        body *C = &M->b[c];
        for (int i = 0; i < 3; i++) {
            for (int j = 0; j < 3; j++) R[3 * i + j] = mech_fmt(M, "_Rpc_%s_%d%d", C->name, i + 1, j + 1);
            fc[i] = mech_fmt(M, "_fsl_%s_%d", C->name, i + 1);
            nc[i] = mech_fmt(M, "_nsl_%s_%d", C->name, i + 1);
            rho[i] = mech_fmt(M, "_rho_%s_%d", C->name, i + 1);
        }
        mech_tx_matvec(M, R, fc, 0, g);
        mech_tx_matvec(M, R, nc, 0, gn);
        mech_tx_cross(M, rho, g, rg);
        for (int k = 0; k < 3; k++) {
            if (g[k]) mech_sb_add(M, &fl[k], " + ", mech_fmt(M, "(%s)", g[k]));
            if (gn[k]) mech_sb_add(M, &nl[k], " + ", mech_fmt(M, "(%s)", gn[k]));
            if (rg[k]) mech_sb_add(M, &nl[k], " + ", mech_fmt(M, "(%s)", rg[k]));
        }
    }
    const char *fs[3], *ns[3];
    for (int k = 0; k < 3 && !rc; k++) {
        fs[k] = mech_fmt(M, "_fsl_%s_%d", B->name, k + 1);
        ns[k] = mech_fmt(M, "_nsl_%s_%d", B->name, k + 1);
        rc = mech_add_var(M, fs[k], mech_sb_done(M, &fl[k]), B->line, B->col);
        if (!rc) rc = mech_add_var(M, ns[k], mech_sb_done(M, &nl[k]), B->line, B->col);
    }
    if (rc) return rc;
    int p = mech_rel_parent(M, b);
    if (p >= 0 && M->b[p].kind != KIND_GROUND && M->torder[nb + p] < 0) { /* a floating root's child */
        const char *gf[3], *gm[3];
        mech_tx_matvec(M, A, fs, 0, gf);
        mech_tx_matvec(M, A, ns, 0, gm);
        for (int k = 0; k < 3 && !rc; k++) {
            Fs[b][k] = mech_fmt(M, "_Fs_%s_%d", B->name, k + 1);
            Ns[b][k] = mech_fmt(M, "_Ns_%s_%d", B->name, k + 1);
            rc = mech_add_var(M, Fs[b][k], gf[k] ? gf[k] : "0", B->line, B->col);
            if (!rc) rc = mech_add_var(M, Ns[b][k], gm[k] ? gm[k] : "0", B->line, B->col);
        }
    }
    return rc;
}

/* The generalized forces of tree body b's joint from its subtree loads in its own axes: the moment
 * about p_i, its components along the joint's axes (source 003 Table 2.2's columns of B). */
static int local_q(mech *M, int b, const joint *J, int kind)
{
    body *B = &M->b[b];
    int mp = J->child_i ? J->j : J->i, mc = J->child_i ? J->i : J->j;
    marker *P = &M->mk[mp], *C = &M->mk[mc];
    const char *F[3], *N[3], *R[9], *pi[3], *sc[3], *pM[3], *Mo[3];
    double Rmp[9], Rmc[9];
    quat_rot_rm(P->mq, Rmp);
    quat_rot_rm(C->mq, Rmc);
    for (int i = 0; i < 3; i++) {
        F[i] = mech_fmt(M, "_fsl_%s_%d", B->name, i + 1);
        N[i] = mech_fmt(M, "_nsl_%s_%d", B->name, i + 1);
        for (int j = 0; j < 3; j++) R[3 * i + j] = mech_fmt(M, "_Rpc_%s_%d%d", B->name, i + 1, j + 1);
        sc[i] = mech_tx_is0(C->s[i]) ? NULL : C->s[i];
    }
    if (kind == JK_PLN && !J->child_i) { /* marker i is the parent's: Rpc^T (s_p - rho) */
        const char *d[3];
        for (int k = 0; k < 3; k++) {
            const char *t[2] = {mech_tx_is0(P->s[k]) ? NULL : P->s[k], mech_fmt(M, "_rho_%s_%d", B->name, k + 1)};
            static const int sg2[2] = {1, -1};
            d[k] = mech_tx_sumz(M, 2, t, sg2);
        }
        mech_tx_matvec(M, R, d, 1, pi);
    } else { /* the child's marker (revolute, universal, spherical: the same point; cylindrical: on the axis) */
        for (int k = 0; k < 3; k++) pi[k] = sc[k];
    }
    mech_tx_cross(M, pi, F, pM);
    for (int k = 0; k < 3; k++) {
        const char *t[2] = {N[k], pM[k]};
        static const int sg2[2] = {1, -1};
        Mo[k] = mech_tx_sum(M, 2, t, sg2);
    }
    /* the markers' axes in b's axes: the child's constant, the parent's Rpc^T Rm_p */
    const char *axc[3][3], *axp[3][3];
    for (int a = 0; a < 3; a++) {
        const char *col[3];
        for (int k = 0; k < 3; k++) {
            axc[a][k] = fabs(Rmc[3 * k + a]) < 1e-15 ? NULL : mech_tx_num(M, Rmc[3 * k + a]);
            col[k] = fabs(Rmp[3 * k + a]) < 1e-15 ? NULL : mech_tx_num(M, Rmp[3 * k + a]);
        }
        mech_tx_matvec(M, R, col, 1, axp[a]);
    }
    const char *(*axi)[3] = J->child_i ? axc : axp, *(*axj)[3] = J->child_i ? axp : axc;
    const char *Q[4] = {NULL, NULL, NULL, NULL};
    switch (kind) {
    case JK_REV: Q[0] = mech_tx_dot(M, axj[2], Mo); break;
    case JK_PRI: Q[0] = mech_tx_dot(M, axj[2], F); break;
    case JK_CYL: Q[0] = mech_tx_dot(M, axj[2], Mo), Q[1] = mech_tx_dot(M, axj[2], F); break;
    case JK_UNI: Q[0] = mech_tx_dot(M, axj[2], Mo), Q[1] = mech_tx_dot(M, axi[2], Mo); break;
    case JK_PLN: Q[0] = mech_tx_dot(M, axj[0], F), Q[1] = mech_tx_dot(M, axj[1], F), Q[2] = mech_tx_dot(M, axj[2], Mo); break;
    case JK_SPH: {
        const char *m[3] = {mech_tx_dot(M, axj[0], Mo), mech_tx_dot(M, axj[1], Mo), mech_tx_dot(M, axj[2], Mo)};
        mech_tx_euler_forces(M, J->q, m, 1, Q);
        break;
    }
    default: break;
    }
    const char *sg = J->child_i ? "" : "-";
    int rc = 0;
    for (int k = 0; k < J->nq && !rc; k++) {
        const char *t = Q[k] && strcmp(Q[k], "0") ? mech_fmt(M, "%s(%s)", sg, Q[k]) : NULL;
        if (k == 0 && J->Qd) t = t ? mech_fmt(M, "%s + %s", t, J->Qd) : J->Qd;
        if (t) rc = mech_push(M, &M->src->forces, J->q[k], t, J->line, J->col);
    }
    return rc;
}

static void acc_term(mech *M, char **acc, const char *sg, const char *term)
{
    *acc = *acc ? mech_fmt(M, "%s %s (%s)", *acc, sg, term) : mech_fmt(M, "%s(%s)", *sg == '-' ? "-" : "", term);
}

int mech_rel_joint_load(mech *M, int mi, int re, int frame, const char *const fc[3], const char *const tc[3],
                        char *const f[3], char *const tq[3])
{
    int b = M->mk[mi].body;
    /* planar: the subtree loads' virtual power (mech_rel_forces) stays the path */
    if (!M->torder || M->planar || !M->b[b].rt || M->torder[M->nb + b] < 0) return 0;
    joint *J = &M->jt[M->torder[M->nb + b]];
    int kind = mech_rel_kind(M, J), p = mech_rel_parent(M, b);
    if ((kind != JK_REV && kind != JK_PRI) || M->mk[re].body != p) return 0;
    marker *Mj = &M->mk[J->j], *P = &M->mk[J->child_i ? J->j : J->i], *I = &M->mk[mi];
    const char *sg = J->child_i ? "" : "-";
    const char *u[3];
    for (int k = 0; k < 3; k++) u[k] = mech_fmt(M, "%s(%s)", sg, Mj->ax[2][k]);
    const char *Q;
    int local = frame == J->j; /* u = +-z of the frame: the z components */
    if (kind == JK_PRI) {
        Q = local ? mech_fmt(M, "%s(%s)", sg, fc[2]) : mech_fmt(M, "(%s)*%s + (%s)*%s + (%s)*%s", f[0], u[0], f[1], u[1], f[2], u[2]);
    } else { /* tq . u + f . (u x d), d = p_i - p_axis */
        const char *d[3], *ud[3];
        for (int k = 0; k < 3; k++) d[k] = mech_fmt(M, "(%s - %s)", I->p[k], P->p[k]);
        mech_tx_cross3(M, (char *const *)u, (char *const *)d, ud);
        const char *tu = local ? mech_fmt(M, "%s(%s)", sg, tc[2])
                               : mech_fmt(M, "(%s)*%s + (%s)*%s + (%s)*%s", tq[0], u[0], tq[1], u[1], tq[2], u[2]);
        int nof = local && mech_tx_is0(fc[0]) && mech_tx_is0(fc[1]) && mech_tx_is0(fc[2]);
        Q = nof ? tu : mech_fmt(M, "%s + (%s)*%s + (%s)*%s + (%s)*%s", tu, f[0], ud[0], f[1], ud[1], f[2], ud[2]);
    }
    J->Qd = J->Qd ? mech_fmt(M, "%s + %s", J->Qd, Q) : Q;
    /* the loads on both bodies at p_i, for the reactions (mech_rel_reaction) */
    for (int side = 0; side < 2; side++) {
        body *B = &M->b[side ? p : b];
        if (B->kind == KIND_GROUND) continue;
        const char *s2 = side ? "-" : "+";
        for (int k = 0; k < 3; k++) {
            int a = (k + 1) % 3, c = (k + 2) % 3;
            acc_term(M, &B->Fd[k], s2, f[k]);
            acc_term(M, &B->Nd[k], s2,
                     mech_fmt(M, "(%s - %s)*%s - (%s - %s)*%s + %s", I->p[a], B->r[a], f[c], I->p[c], B->r[c], f[a], tq[k]));
        }
    }
    return 1;
}

/* A planar body of the term as the spatial body it is in the plane z = 0 (relative_kinematics.c:
 * th_c = phi_p +- q for a revolute, the child's marker moved by +-q along the parent marker's x for
 * a prismatic; +: the child carries marker i): the axis z (revolute) or the in-plane x_p
 * (prismatic) through the parent's marker, the rotation about z by th (A, e), the origin and
 * centre of mass in the plane, the mass, and the moment of inertia about z as the tensor
 * diag(0, 0, Izz). The motion stays in the plane (angular velocity and acceleration along z,
 * velocities in the plane), where the x and y moments and the out-of-plane rows never enter a
 * joint's row S . F: the recursion is the planar body's. */
static void planar_texts(mech *M, const body *B, const joint *J, int kind, const marker *P, const char *tx[MBL_RTREE_NT])
{
    const char *sg = J->child_i ? "" : "-";
    for (int k = 0; k < MBL_RTREE_NT; k++) tx[k] = "0";
    if (kind == JK_REV) tx[MBL_RTREE_U + 2] = J->child_i ? "1" : "-1";
    else if (kind == JK_PRI)
        for (int k = 0; k < 2; k++) tx[MBL_RTREE_U + k] = mech_fmt(M, "%s(%s)", sg, P->ax[0][k]);
    else tx[MBL_RTREE_U + 2] = "1"; /* fixed: not read */
    for (int k = 0; k < 2; k++) {
        tx[MBL_RTREE_P + k] = P->p[k];
        tx[MBL_RTREE_R + k] = B->r[k];
        tx[MBL_RTREE_CM + k] = B->cm[k];
    }
    for (int k = 0; k < 9; k++) tx[MBL_RTREE_A + k] = B->A[k];
    tx[MBL_RTREE_M] = B->mass;
    tx[MBL_RTREE_I + 2] = B->I[2];
    tx[MBL_RTREE_E] = mech_fmt(M, "cos(0.5*(%s))", B->th);
    tx[MBL_RTREE_E + 3] = mech_fmt(M, "sin(0.5*(%s))", B->th);
}

/* The joint's local data for the kinematics the model computes natively (model/rtree.h,
 * mbl_rtree_body.local): the rotation of the child relative to its parent is, as
 * mech_rel_tree_kinematics writes it (e_c = e_p (x) m_p (x) xs (x) conj(m_c), xs = qz(q) (x) c or its
 * conjugate when the child carries marker j), R(m_p) Rz(+-q) R(c) R(m_c)^T or
 * R(m_p) R(c)^T Rz(-q) R(m_c)^T, split about Rz into C1 and C2; c, the joint's constant rotation
 * snapped from the file's configuration, by mech_rel_snap_c as the kinematics' texts have it.
 * 0, or an error of the file's numbers (already met by the kinematics). */
static int local_data(mech *M, const joint *J, int kind, const marker *P, const marker *C, mbl_rtree_body *R)
{
    double pf[3], Ri[9], Rj[9], phi, X[9], c[4];
    int rc = mech_rel_marker_file(M, J->i, pf, Ri, &phi);
    if (!rc) rc = mech_rel_marker_file(M, J->j, pf, Rj, &phi);
    if (rc) return rc;
    mat3_tmul(Rj, Ri, X);
    mech_rel_snap_c(kind, X, c);
    double cc[4] = {c[0], -c[1], -c[2], -c[3]}, mc[4] = {C->mq[0], -C->mq[1], -C->mq[2], -C->mq[3]}, q1[4], q2[4];
    if (J->child_i) {
        memcpy(q1, P->mq, sizeof q1);
        quat_mul(c, mc, q2);
    } else {
        quat_mul(P->mq, cc, q1);
        memcpy(q2, mc, sizeof q2);
    }
    quat_rot_rm(q1, R->C1);
    quat_rot_rm(q2, R->C2);
    memcpy(R->Q1, q1, sizeof q1);
    memcpy(R->Q2, q2, sizeof q2);
    R->sgn = J->child_i ? 1.0 : -1.0;
    int oom = 0;
    for (int k = 0; k < 3; k++) {
        oom |= !(R->sp[k] = mech_dup_s(P->s[k] ? P->s[k] : "0"));
        oom |= !(R->sc[k] = mech_dup_s(C->s[k] ? C->s[k] : "0"));
    }
    if (oom) return mech_oom(M);
    R->local = 1;
    return 0;
}

/* The bodies of the structured term (mark_rt) described for the model (model/rtree.h): texts of
 * the kinematic variables above, parents first. */
static int emit_rtree(mech *M)
{
    int nb = M->nb, n = 0;
    for (int b = 0; b < nb; b++) n += M->b[b].rt;
    if (!n) return 0;
    mbl_rtree *t = mbl_calloc(1, sizeof *t);
    int *idx = mbl_alloc_array((size_t)nb, sizeof *idx);
    if (!t || !idx || !(t->b = mbl_calloc((size_t)n, sizeof *t->b))) {
        mbl_free(idx);
        if (t) mbl_free(t->b);
        mbl_free(t);
        return mech_oom(M);
    }
    M->src->rtree = t;
    int oom = 0;
    for (int k = 0; k < 3; k++) oom |= !(t->g[k] = mech_dup_s(M->grav[k] ? M->grav[k] : "0"));
    for (int h = 1; h < nb && !oom; h++) {
        int b = M->torder[h];
        body *B = &M->b[b];
        idx[b] = -1;
        if (!B->rt) continue;
        joint *J = &M->jt[M->torder[nb + b]];
        int kind = mech_rel_kind(M, J), p = mech_rel_parent(M, b);
        mbl_rtree_body *R = &t->b[t->nb];
        idx[b] = t->nb++;
        R->parent = M->b[p].kind == KIND_GROUND ? -1 : idx[p];
        R->kind = kind == JK_REV ? MBL_RTREE_REV : kind == JK_PRI ? MBL_RTREE_PRI : MBL_RTREE_FIXED;
        R->line = J->line, R->col = J->col;
        oom |= !(R->name = mech_dup_s(mech_fmt(M, "body '%s'", B->name)));
        if (kind != JK_FIX) oom |= !(R->q = mech_dup_s(J->q[0]));
        /* the axis: z_j, turned or moved along by q when the child carries marker i, against it otherwise */
        marker *Mj = &M->mk[J->j], *P = &M->mk[J->child_i ? J->j : J->i];
        const char *tx[MBL_RTREE_NT];
        if (M->planar) {
            planar_texts(M, B, J, kind, P, tx);
            for (int k = 0; k < MBL_RTREE_NT; k++) oom |= !(R->t[k] = mech_dup_s(tx[k] ? tx[k] : "0"));
            continue;
        }
        for (int k = 0; k < 3; k++) {
            tx[MBL_RTREE_U + k] = J->child_i ? Mj->ax[2][k] : mech_fmt(M, "-(%s)", Mj->ax[2][k]);
            tx[MBL_RTREE_P + k] = P->p[k];
            tx[MBL_RTREE_R + k] = B->r[k];
            tx[MBL_RTREE_CM + k] = B->cm[k];
        }
        for (int k = 0; k < 9; k++) tx[MBL_RTREE_A + k] = B->A[k];
        tx[MBL_RTREE_M] = B->mass;
        for (int k = 0; k < 6; k++) tx[MBL_RTREE_I + k] = B->I[k];
        for (int k = 0; k < 4; k++) tx[MBL_RTREE_E + k] = B->e[k];
        for (int k = 0; k < MBL_RTREE_NT; k++) oom |= !(R->t[k] = mech_dup_s(tx[k] ? tx[k] : "0"));
        if (!oom && local_data(M, J, kind, P, &M->mk[J->child_i ? J->i : J->j], R)) {
            mbl_free(idx);
            return M->st ? M->st->code : MBL_EMODEL;
        }
    }
    mbl_free(idx);
    return oom || M->oom ? mech_oom(M) : 0;
}

int mech_rel_forces(mech *M)
{
    int nb = M->nb, rc = 0;
    const char *(*Fs)[3] = mbl_calloc((size_t)nb, sizeof *Fs), *(*Ns)[3] = mbl_calloc((size_t)nb, sizeof *Ns);
    char *hasl = mbl_calloc((size_t)nb, 1);
    if (!Fs || !Ns || !hasl) rc = mech_oom(M);
    for (int b = 0; b < nb && !rc; b++)
        for (int k = 0; k < 3; k++) Fs[b][k] = Ns[b][k] = NULL;
    /* subtree resultants, leaves first: F_s = F + sum F_s(child), N_s about the body origin */
    for (int h = nb - 1; h >= 1 && !rc; h--) {
        int b = M->torder[h];
        body *B = &M->b[b];
        const char *f[3], *n[3];
        for (int k = 0; k < 3; k++) f[k] = B->F[k], n[k] = B->N[k];
        if (B->kind == KIND_SPATIAL && M->torder[nb + b] >= 0) { /* in its own axes (tree_motion) */
            rc = local_loads(M, b, Fs, Ns, hasl);
            continue;
        }
        for (int h2 = h + 1; h2 < nb; h2++) { /* children come later in the order */
            int c = M->torder[h2], jc = M->torder[nb + c];
            if (jc < 0) continue;
            joint *J = &M->jt[jc];
            int pb = M->mk[J->child_i ? J->j : J->i].body;
            if (pb != b) continue;
            int any = 0;
            for (int k = 0; k < 3; k++) any |= Fs[c][k] != NULL || Ns[c][k] != NULL;
            if (!any) continue;
            body *Bc = &M->b[c];
            for (int k = 0; k < 3; k++) {
                int a1 = (k + 1) % 3, a2 = (k + 2) % 3;
                if (Fs[c][k]) f[k] = f[k] ? mech_fmt(M, "%s + %s", f[k], Fs[c][k]) : Fs[c][k];
                const char *m = Ns[c][k];
                if (Fs[c][a2] || Fs[c][a1]) {
                    const char *cr = mech_fmt(M, "(%s - %s)*(%s) - (%s - %s)*(%s)", Bc->r[a1], B->r[a1],
                                              Fs[c][a2] ? Fs[c][a2] : "0", Bc->r[a2], B->r[a2],
                                              Fs[c][a1] ? Fs[c][a1] : "0");
                    m = m ? mech_fmt(M, "%s + %s", m, cr) : cr;
                }
                if (m) n[k] = n[k] ? mech_fmt(M, "%s + %s", n[k], m) : m;
            }
        }
        for (int k = 0; k < 3 && !rc; k++) {
            if (M->planar && k == 2 && f[k] == NULL) f[k] = NULL;
            if (f[k]) {
                const char *v = mech_fmt(M, "_Fs_%s_%d", B->name, k + 1);
                rc = mech_add_var(M, v, f[k], B->line, B->col);
                Fs[b][k] = v;
            }
            if (n[k] && !rc) {
                const char *v = mech_fmt(M, "_Ns_%s_%d", B->name, k + 1);
                rc = mech_add_var(M, v, n[k], B->line, B->col);
                Ns[b][k] = v;
            }
        }
    }
    /* the generalized forces */
    for (int h = 1; h < nb && !rc; h++) {
        int b = M->torder[h], jc = M->torder[nb + b];
        body *B = &M->b[b];
        const char *F[3], *N[3];
        for (int k = 0; k < 3; k++) F[k] = Fs[b][k] ? Fs[b][k] : "0", N[k] = Ns[b][k] ? Ns[b][k] : "0";
        int anyF = Fs[b][0] || Fs[b][1] || Fs[b][2], anyN = Ns[b][0] || Ns[b][1] || Ns[b][2];
        if (!anyF && !anyN && !(B->kind == KIND_SPATIAL && jc >= 0)) continue;
        if (jc < 0) { /* a root: its absolute coordinates */
            static const char *cn3[3] = {"x", "y", "z"};
            int dim = M->planar ? 2 : 3;
            for (int k = 0; k < dim && !rc; k++)
                if (Fs[b][k])
                    rc = mech_push(M, &M->src->forces, mech_fmt(M, "%s_%s", B->name, cn3[k]), F[k], B->line, B->col);
            if (B->kind == KIND_POINT || !anyN) continue;
            if (B->kind == KIND_PLANAR) {
                if (Ns[b][2] && !rc)
                    rc = mech_push(M, &M->src->forces, mech_fmt(M, "%s_th", B->name), N[2], B->line, B->col);
                continue;
            }
            const char *Q[4];
            mech_tx_euler_forces(M, (const char *const *)B->e, N, 0, Q);
            for (int k = 0; k < 4 && !rc; k++)
                rc = mech_push(M, &M->src->forces, mech_fmt(M, "%s_e%d", B->name, k), Q[k], B->line, B->col);
            continue;
        }
        joint *J = &M->jt[jc];
        int kind = mech_rel_kind(M, J);
        if (!J->nq) continue;
        if (B->kind == KIND_SPATIAL) {
            if (hasl[b]) rc = local_q(M, b, J, kind);
            else if (J->Qd) rc = mech_push(M, &M->src->forces, J->q[0], J->Qd, J->line, J->col);
            continue;
        }
        marker *Mi = &M->mk[J->i], *Mj = &M->mk[J->j];
        const char *sg = J->child_i ? "" : "-";
        /* the moment about p_i of the subtree's forces: N_s + (r_c - p_i) x F_s */
        const char *Mo[3];
        for (int k = 0; k < 3; k++) {
            int a1 = (k + 1) % 3, a2 = (k + 2) % 3;
            Mo[k] = mech_fmt(M, "%s + (%s - %s)*(%s) - (%s - %s)*(%s)", N[k], B->r[a1], Mi->p[a1], F[a2], B->r[a2],
                             Mi->p[a2], F[a1]);
        }
        const char *Q[4] = {NULL, NULL, NULL, NULL};
        if (M->planar) {
            if (kind == JK_REV) Q[0] = Mo[2];
            else if (kind == JK_PRI) Q[0] = mech_tx_dot(M, (const char *const *)Mj->ax[0], F);
        } else {
            switch (kind) {
            case JK_REV: Q[0] = mech_tx_dot(M, (const char *const *)Mj->ax[2], Mo); break;
            case JK_PRI: Q[0] = mech_tx_dot(M, (const char *const *)Mj->ax[2], F); break;
            case JK_CYL: Q[0] = mech_tx_dot(M, (const char *const *)Mj->ax[2], Mo), Q[1] = mech_tx_dot(M, (const char *const *)Mj->ax[2], F); break;
            case JK_UNI: Q[0] = mech_tx_dot(M, (const char *const *)Mj->ax[2], Mo), Q[1] = mech_tx_dot(M, (const char *const *)Mi->ax[2], Mo); break;
            case JK_PLN:
                Q[0] = mech_tx_dot(M, (const char *const *)Mj->ax[0], F), Q[1] = mech_tx_dot(M, (const char *const *)Mj->ax[1], F), Q[2] = mech_tx_dot(M, (const char *const *)Mj->ax[2], Mo);
                break;
            case JK_SPH: {
                const char *m[3] = {mech_tx_dot(M, (const char *const *)Mj->ax[0], Mo), mech_tx_dot(M, (const char *const *)Mj->ax[1], Mo), mech_tx_dot(M, (const char *const *)Mj->ax[2], Mo)};
                mech_tx_euler_forces(M, J->q, m, 1, Q);
                break;
            }
            default: break;
            }
        }
        for (int k = 0; k < J->nq && !rc; k++)
            if (Q[k] && strcmp(Q[k], "0"))
                rc = mech_push(M, &M->src->forces, J->q[k], mech_fmt(M, "%s(%s)", sg, Q[k]), J->line, J->col);
    }
    if (!rc) rc = emit_rtree(M);
    mbl_free(Fs);
    mbl_free(Ns);
    mbl_free(hasl);
    if (!rc && M->oom) rc = mech_oom(M);
    return rc;
}
