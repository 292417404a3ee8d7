/* `coordinates: relative`, measures of tree joints: JQ(joint, k) in either formulation and the
 * reactions FX .. TZ of a tree joint from the Newton-Euler balance of the subtree it carries. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/vec3.h"
#include "mech/mech_internal.h"
#include "mech/relative.h"

/* ---- JQ(joint, k) ---- */

const char *mech_joint_coord_k(mech *M, int ji, int k, char *why, size_t whylen)
{
    joint *J = &M->jt[ji];
    int kind = mech_rel_kind(M, J);
    int nk = kind == JK_SPH ? 3 : mech_rel_ncoord(M, kind);
    if (!strcmp(J->type, "coupler") || kind == JK_NONE || kind == JK_FIX) {
        snprintf(why, whylen, "joint '%s' (%s) has no joint coordinate", J->name, J->type);
        return NULL;
    }
    if (k < 1 || k > nk) {
        snprintf(why, whylen, "joint '%s' (%s) has %d joint coordinate%s (JQ(%s, 1)%s)", J->name, J->type, nk,
                 nk > 1 ? "s" : "", J->name, nk > 1 ? mech_fmt(M, " .. JQ(%s, %d)", J->name, nk) : "");
        return NULL;
    }
    if (M->relative && J->tree) {
        if (kind == JK_SPH) return mech_fmt(M, "(2*atan2(%s, %s))", J->q[k], J->q[0]);
        return J->q[k - 1];
    }
    marker *I = &M->mk[J->i], *K = &M->mk[J->j];
    char *d[3];
    mech_dvec(M, J->i, J->j, d);
    if (M->planar || ((kind == JK_REV || kind == JK_CYL || kind == JK_PRI) && k == 1))
        return mech_joint_coord(M, ji, why, whylen);
    switch (kind) {
    case JK_CYL: return mech_dot3(M, d, K->ax[2]);
    case JK_PLN:
        if (k == 1) return mech_dot3(M, d, K->ax[0]);
        if (k == 2) return mech_dot3(M, d, K->ax[1]);
        return mech_twist_angle(M, J->i, J->j);
    case JK_UNI: {
        if (k == 1) return mech_fmt(M, "atan2(%s, %s)", mech_dot3(M, I->ax[2], K->ax[1]), mech_dot3(M, I->ax[2], K->ax[0]));
        /* sin q2 = x_i . (z_j x z_i), cos q2 = -x_i . z_j */
        const char *zx[3];
        mech_tx_cross3(M, K->ax[2], I->ax[2], zx);
        return mech_fmt(M, "atan2(%s, -%s)", mech_dot3(M, I->ax[0], (char *const *)zx), mech_dot3(M, I->ax[0], K->ax[2]));
    }
    case JK_SPH: {
        /* r = conj(q_j) (x) q_i, sign fixed so that r0 > 0 in the file's configuration */
        const char *qi[4], *qj[4], *cj[4], *r[4];
        mech_rel_marker_q(M, J->i, qi);
        mech_rel_marker_q(M, J->j, qj);
        mech_tx_qconj(M, qj, cj);
        mech_tx_qmul(M, cj, qi, r);
        const double *bi = M->b[I->body].q0, *bj = M->b[K->body].q0;
        double ni[4], nj[4], rn[4];
        quat_mul(bi, I->mq, ni);
        quat_mul(bj, K->mq, nj);
        nj[1] = -nj[1], nj[2] = -nj[2], nj[3] = -nj[3];
        quat_mul(nj, ni, rn);
        double s = rn[0] < 0 ? -1 : 1;
        return mech_fmt(M, "(2*atan2(%s*(%s), %s*(%s)))", mech_num(M, s), r[k], mech_num(M, s), r[0]);
    }
    default: break;
    }
    snprintf(why, whylen, "joint '%s' (%s) has no joint coordinate %d", J->name, J->type, k);
    return NULL;
}

/* ---- reactions of tree joints ---- */

static int in_subtree(mech *M, int b, int c)
{
    for (; b >= 0; b = mech_rel_parent(M, b))
        if (b == c) return 1;
    return 0;
}

/* The force (torque about p_i) the joint exerts on the body of its marker i: with S the bodies
 * the joint carries (the child and its descendants), the force on the child is
 * sum_S m (a_cm - g) - F_applied(S) - F_cut(S), the torque about p_i
 * sum_S [(c - p_i) x m (a_cm - g) + dH/dt] - N_applied(S) - N_cut(S) (dH/dt = A J A^T der(w) +
 * w x A J A^T w); the parent (when it carries marker i) receives the opposite. */
const char *mech_rel_reaction(mech *M, int ji, int torque, int comp, char *const e[3], char *why, size_t whylen)
{
    joint *J = &M->jt[ji];
    for (int d = 0; d < M->ndrv; d++)
        if (M->drv[d].driver) {
            snprintf(why, whylen, "the reaction of tree joint '%s' is not available in relative coordinates with drivers "
                     "(their generalized forces act on the joint coordinates); give the joint 'cut: true'", J->name);
            return NULL;
        }
    for (int k = 0; k < M->nj; k++)
        if (!strcmp(M->jt[k].type, "coupler")) {
            snprintf(why, whylen, "the reaction of tree joint '%s' is not available in relative coordinates with couplers; "
                     "give the joint 'cut: true'", J->name);
            return NULL;
        }
    int c = M->mk[J->child_i ? J->i : J->j].body;
    marker *Mi = &M->mk[J->i];
    const char *F[3] = {NULL, NULL, NULL}, *T[3] = {NULL, NULL, NULL};
    for (int b = 1; b < M->nb; b++) {
        if (!in_subtree(M, b, c)) continue;
        body *B = &M->b[b];
        /* inertia and gravity: m (a_cm - g) at c_b */
        const char *cb[3], *ma[3], *rel[3];
        for (int k = 0; k < 3; k++) {
            cb[k] = mech_fmt(M, "(%s + %s*(%s) + %s*(%s) + %s*(%s))", B->r[k], B->A[3 * k], B->cm[0], B->A[3 * k + 1],
                             B->cm[1], B->A[3 * k + 2], B->cm[2]);
            const char *g = M->grav[k] ? M->grav[k] : "0";
            ma[k] = (M->planar && k == 2) ? "0" : mech_fmt(M, "(%s)*(der(der(%s)) - %s)", B->mass, cb[k], g);
            rel[k] = mech_fmt(M, "(%s - %s)", cb[k], Mi->p[k]);
        }
        mech_tx_add_vec(M, F, ma, 1);
        mech_tx_add_cross(M, T, rel, ma, 1);
        /* dH/dt */
        if (M->planar) {
            const char *h[3] = {"0", "0", mech_fmt(M, "(%s)*der(%s)", B->I[2], B->w[2])};
            mech_tx_add_vec(M, T, h, 1);
        } else {
            const char *I6[6] = {B->I[0], B->I[1], B->I[2], B->I[3], B->I[4], B->I[5]};
            const char *Jm[3][3] = {{I6[0], I6[3], I6[4]}, {I6[3], I6[1], I6[5]}, {I6[4], I6[5], I6[2]}};
            const char *wb[3], *ab[3], *jw[3], *ja[3], *gw[3], *ga[3];
            for (int k = 0; k < 3; k++) { /* body-frame w and der(w): A^T w, A^T der(w) */
                wb[k] = mech_fmt(M, "(%s*%s + %s*%s + %s*%s)", B->A[k], B->w[0], B->A[3 + k], B->w[1], B->A[6 + k], B->w[2]);
                ab[k] = mech_fmt(M, "(%s*der(%s) + %s*der(%s) + %s*der(%s))", B->A[k], B->w[0], B->A[3 + k], B->w[1],
                                 B->A[6 + k], B->w[2]);
            }
            for (int k = 0; k < 3; k++) {
                const char *t1[3] = {mech_tx_mul(M, Jm[k][0], wb[0]), mech_tx_mul(M, Jm[k][1], wb[1]), mech_tx_mul(M, Jm[k][2], wb[2])};
                const char *t2[3] = {mech_tx_mul(M, Jm[k][0], ab[0]), mech_tx_mul(M, Jm[k][1], ab[1]), mech_tx_mul(M, Jm[k][2], ab[2])};
                static const int s3[3] = {1, 1, 1};
                jw[k] = mech_tx_sum(M, 3, t1, s3);
                ja[k] = mech_tx_sum(M, 3, t2, s3);
            }
            for (int k = 0; k < 3; k++) { /* back to global */
                gw[k] = mech_fmt(M, "(%s*(%s) + %s*(%s) + %s*(%s))", B->A[3 * k], jw[0], B->A[3 * k + 1], jw[1],
                                 B->A[3 * k + 2], jw[2]);
                ga[k] = mech_fmt(M, "(%s*(%s) + %s*(%s) + %s*(%s))", B->A[3 * k], ja[0], B->A[3 * k + 1], ja[1],
                                 B->A[3 * k + 2], ja[2]);
            }
            mech_tx_add_vec(M, T, ga, 1);
            const char *w[3] = {B->w[0], B->w[1], B->w[2]};
            mech_tx_add_cross(M, T, w, gw, 1);
        }
        /* applied forces and moments (F at the origin, N about it), with those given to joints directly */
        const char *Fb[3] = {B->F[0], B->F[1], B->F[2]}, *Nb[3] = {B->N[0], B->N[1], B->N[2]};
        for (int k = 0; k < 3; k++) {
            if (B->Fd[k]) Fb[k] = Fb[k] ? mech_fmt(M, "%s + %s", Fb[k], B->Fd[k]) : B->Fd[k];
            if (B->Nd[k]) Nb[k] = Nb[k] ? mech_fmt(M, "%s + %s", Nb[k], B->Nd[k]) : B->Nd[k];
        }
        mech_tx_add_vec(M, F, Fb, -1);
        mech_tx_add_vec(M, T, Nb, -1);
        const char *ro[3];
        for (int k = 0; k < 3; k++) ro[k] = mech_fmt(M, "(%s - %s)", B->r[k], Mi->p[k]);
        mech_tx_add_cross(M, T, ro, Fb, -1);
    }
    /* the cut joints between S and the rest: their reactions on S */
    static const char *fx[3] = {"FX", "FY", "FZ"}, *tx[3] = {"TX", "TY", "TZ"};
    for (int k = 0; k < M->nj; k++) {
        joint *K = &M->jt[k];
        if (K->tree || K->i < 0 || !K->nc) continue;
        int si = in_subtree(M, M->mk[K->i].body, c), sj = in_subtree(M, M->mk[K->j].body, c);
        if (si == sj) continue;
        const char *fk[3], *tk[3], *arm[3];
        const char *arg[1] = {K->name};
        size_t alen[1] = {strlen(K->name)};
        for (int a = 0; a < 3; a++) {
            if (M->planar && a == 2) fk[a] = "0";
            else if (!(fk[a] = mech_measure(M, fx[a], 1, arg, alen, why, whylen))) return NULL;
            if (M->planar && a < 2) tk[a] = "0";
            else if (!(tk[a] = mech_measure(M, tx[a], 1, arg, alen, why, whylen))) return NULL;
            arm[a] = mech_fmt(M, "(%s - %s)", M->mk[K->i].p[a], Mi->p[a]);
        }
        int sg = si ? -1 : 1; /* on S: +reaction at i's side, its opposite at j's side; moved to the left */
        mech_tx_add_vec(M, F, fk, sg);
        mech_tx_add_vec(M, T, tk, sg);
        mech_tx_add_cross(M, T, arm, fk, sg);
    }
    /* on the child; on marker i's body: the same when the child carries i, else the opposite */
    const char *const *v = torque ? T : F;
    const char *t[3] = {mech_tx_mul(M, v[0] ? v[0] : "0", e[0]), mech_tx_mul(M, v[1] ? v[1] : "0", e[1]), mech_tx_mul(M, v[2] ? v[2] : "0", e[2])};
    static const int s3[3] = {1, 1, 1};
    (void)comp;
    const char *r = mech_tx_sum(M, 3, t, s3);
    return J->child_i ? mech_fmt(M, "(%s)", r) : mech_fmt(M, "(-(%s))", r);
}
