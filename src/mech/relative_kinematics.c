/* `coordinates: relative`, the recursive kinematics: every tree body's pose (Euler parameters and
 * origin) from its parent's and its joint's coordinates, its angular velocity and accelerations
 * in its own axes (the recursion below), its d'Alembert loads; and the bodies' global kinematics
 * for the outputs' velocity transformation. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/vec3.h"
#include "mech/mech_internal.h"
#include "mech/relative.h"

void mech_rel_snap_c(int kind, const double X[9], double c[4])
{
    c[0] = 1, c[1] = c[2] = c[3] = 0;
    int zz = X[8] >= 0, xx = X[0] >= 0;
    if (kind == JK_REV || kind == JK_CYL || kind == JK_PLN) {
        if (!zz) c[0] = 0, c[1] = 1; /* z_i = -z_j: flipped about x */
    } else if (kind == JK_PRI || kind == JK_FIX) {
        if (zz && !xx) c[0] = 0, c[3] = 1;       /* Rz(pi) */
        else if (!zz && xx) c[0] = 0, c[1] = 1;  /* Rx(pi) */
        else if (!zz && !xx) c[0] = 0, c[2] = 1; /* Ry(pi) */
    }
}

/* ---- recursive velocities and accelerations of the tree (spatial) ----
 *
 * Every tree body's angular velocity w, angular acceleration al and the acceleration ao of its
 * origin are variables written from its parent's (source 003 Eq. 2.x, the recursion of Table 2.2):
 * with R the parent marker's axes (global), xs the child marker's rotation relative to it and tl
 * the joint's translation in R's axes (both functions of the joint's own coordinates only),
 *   w_c  = w_p + R wr,             wr = 2 E(xs) der(xs)
 *   al_c = al_p + w_p x (R wr) + R der(wr)
 *   a(o) = a_p + al_p x D + w_p x (w_p x D) + 2 w_p x (R der(tl)) + R der(der(tl))
 *   ao_c = a(o) - al_c x d_c - w_c x (w_c x d_c)
 * (D from the parent's origin to the child's marker, d_c = A_c s_c from the child's origin to its
 * marker). der() is then only ever taken of a joint's own coordinates, so the text, the graph and
 * its derivatives stay linear in the number of bodies per coordinate (the kinetic energy of the
 * chain, differentiated symbolically, grew like N^3 and its linearization like N^4). The bodies'
 * inertia enters as d'Alembert loads (mech_rel_forces). */

/* a variable per component (NULL entries stay NULL = zero) */
static int vars3(mech *M, const char *fmt, const char *name, const char *t[3], const joint *J)
{
    int rc = 0;
    for (int k = 0; k < 3 && !rc; k++) {
        if (!t[k]) continue;
        const char *v = mech_fmt(M, fmt, name, k + 1);
        rc = mech_add_var(M, v, t[k], J->line, J->col);
        t[k] = v;
    }
    return rc;
}

/* body-frame motion of a body's parent: angular velocity, angular acceleration, origin acceleration
 * (texts in the parent's axes, NULL = zero) */
static void body_motion_local(mech *M, int b, const char *w[3], const char *al[3], const char *ao[3])
{
    body *B = &M->b[b];
    for (int k = 0; k < 3; k++) w[k] = al[k] = ao[k] = NULL;
    if (B->kind == KIND_GROUND) return;
    if (M->torder[M->nb + b] >= 0) {
        for (int k = 0; k < 3; k++) {
            w[k] = mech_fmt(M, "_wl_%s_%d", B->name, k + 1);
            al[k] = mech_fmt(M, "_all_%s_%d", B->name, k + 1);
            ao[k] = mech_fmt(M, "_aol_%s_%d", B->name, k + 1);
        }
        return;
    }
    /* a root: A^T of its global rates, which are its own coordinates' */
    const char *gw[3], *ga[3], *gr[3], *A[9];
    for (int k = 0; k < 3; k++) {
        gw[k] = mech_tx_is0(B->w[k]) ? NULL : B->w[k];
        ga[k] = gw[k] ? mech_fmt(M, "der(%s)", gw[k]) : NULL;
        gr[k] = mech_tx_is0(B->r[k]) ? NULL : mech_fmt(M, "der(der(%s))", B->r[k]);
    }
    for (int k = 0; k < 9; k++) A[k] = B->A[k];
    mech_tx_matvec(M, A, gw, 1, w);
    mech_tx_matvec(M, A, ga, 1, al);
    mech_tx_matvec(M, A, gr, 1, ao);
}

/* all three components as variables named fmt (zero components as "0"); t then names them */
static int vars3_all(mech *M, const char *fmt, const char *name, const char *t[3], const joint *J)
{
    int rc = 0;
    for (int k = 0; k < 3 && !rc; k++) {
        const char *v = mech_fmt(M, fmt, name, k + 1);
        rc = mech_add_var(M, v, t[k] ? t[k] : "0", J->line, J->col);
        t[k] = v;
    }
    return rc;
}

/* What the steps of tree_motion share: the joint, its markers on the parent (P) and the child (C),
 * the child, and the texts written so far (NULL = zero). */
typedef struct tmotion {
    const joint *J;
    int kind;
    marker *P, *C;
    body *Bc;
    const char *nm;                      /* the child's name */
    const char *qa;                      /* the joint's one angle about z, or NULL */
    const char *wp[3], *alp[3], *aop[3]; /* the parent's motion in its axes (body_motion_local) */
    const char *Rmp[9], *X[9], *Rpc[9];  /* the parent marker's axes, R(xs), the child's axes in the parent's */
    const char *om[3], *al[3];           /* the child's angular velocity and acceleration, its axes */
    const char *D[3], *am[3];            /* the parent's origin to the child's marker, its acceleration */
    const char *ao[3];                   /* the acceleration of the child's origin, its axes */
} tmotion;

/* Rpc = Rm_p R(xs) Rm_c^T, as variables _Rpc_<child>_ij */
static int motion_rotation(mech *M, tmotion *T, const char *const xs[4], const double cq[4])
{
    const joint *J = T->J;
    int kind = T->kind, rc = 0;
    static const int s3[3] = {1, 1, 1};
    double Rmp_n[9], Rmc_n[9];
    quat_rot_rm(T->P->mq, Rmp_n);
    quat_rot_rm(T->C->mq, Rmc_n);
    const char **Rmp = T->Rmp, **X = T->X, **Rpc = T->Rpc, *T1[9];
    mech_tx_num_mat(M, Rmp_n, Rmp);
    /* one angle about z (revolute, cylindrical, planar): its rate w_r = q' z (x^* = C^T Rz(q)^T:
     * w_r = -q' C^T z) in closed form */
    const char *qa = T->qa = kind == JK_REV || kind == JK_CYL ? J->q[0] : kind == JK_PLN ? J->q[2] : NULL;
    if (qa) { /* x = Rz(q) C with cos q, sin q: its z row and column stay exact (no cos^2 + sin^2) */
        double C4[9];
        quat_rot_rm(cq, C4);
        const char *c = mech_fmt(M, "cos(%s)", qa), *sn = mech_fmt(M, "sin(%s)", qa), *ms = mech_fmt(M, "(-sin(%s))", qa);
        const char *Rz[9] = {c, ms, NULL, sn, c, NULL, NULL, NULL, "1"}, *Cn[9];
        mech_tx_num_mat(M, C4, Cn);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                const char *t[3];
                for (int k = 0; k < 3; k++)
                    t[k] = J->child_i ? mech_tx_mul(M, Rz[3 * i + k], Cn[3 * k + j]) : mech_tx_mul(M, Cn[3 * k + i], Rz[3 * j + k]);
                X[3 * i + j] = mech_tx_sumz(M, 3, t, s3);
            }
    } else {
        mech_tx_qrot(M, xs, X);
    }
    for (int i = 0; i < 3; i++)
        for (int b = 0; b < 3; b++) {
            const char *t[3] = {mech_tx_mul(M, Rmp[3 * i], X[b]), mech_tx_mul(M, Rmp[3 * i + 1], X[3 + b]), mech_tx_mul(M, Rmp[3 * i + 2], X[6 + b])};
            T1[3 * i + b] = mech_tx_sumz(M, 3, t, s3);
        }
    for (int i = 0; i < 3 && !rc; i++)
        for (int j = 0; j < 3 && !rc; j++) {
            const char *t[3];
            for (int b = 0; b < 3; b++) t[b] = fabs(Rmc_n[3 * j + b]) < 1e-15 ? NULL : mech_tx_mul(M, T1[3 * i + b], mech_tx_num(M, Rmc_n[3 * j + b]));
            const char *v = mech_tx_sumz(M, 3, t, s3);
            Rpc[3 * i + j] = mech_fmt(M, "_Rpc_%s_%d%d", T->nm, i + 1, j + 1);
            rc = mech_add_var(M, Rpc[3 * i + j], v ? v : "0", J->line, J->col);
        }
    return rc;
}

/* the child's angular velocity and acceleration in its axes (_wl_, _all_) from the joint's rate
 * wr, and its global angular velocity */
static int motion_rates(mech *M, tmotion *T, const char *const xs[4], const double cq[4])
{
    const joint *J = T->J;
    const char *qa = T->qa, *nm = T->nm, **om = T->om, **al = T->al;
    int kind = T->kind, rc = 0;
    static const int s3[3] = {1, 1, 1};
    /* wr = 2 E(xs) der(xs) in the parent marker's axes, then in the parent's */
    const char *wr[3] = {NULL, NULL, NULL};
    if (qa) {
        double C4[9];
        quat_rot_rm(cq, C4);
        for (int a = 0; a < 3; a++) {
            double u = J->child_i ? (a == 2) : -C4[6 + a];
            wr[a] = fabs(u) < 1e-15 ? NULL : mech_tx_mul(M, mech_tx_num(M, u), mech_fmt(M, "der(%s)", qa));
        }
        if ((rc = vars3(M, "_wr_%s_%d", nm, wr, J))) return rc;
    } else if (kind != JK_PRI && kind != JK_FIX) {
        static const int idx[3][4] = {{1, 0, 3, 2}, {2, 3, 0, 1}, {3, 2, 1, 0}};
        static const int sg[3][4] = {{-1, 1, -1, 1}, {-1, 1, 1, -1}, {-1, -1, 1, 1}};
        const char *dx[4];
        for (int c = 0; c < 4; c++) dx[c] = mech_tx_is0(xs[c]) ? NULL : mech_fmt(M, "der(%s)", xs[c]);
        for (int a = 0; a < 3; a++) {
            const char *t[4];
            for (int c = 0; c < 4; c++) t[c] = dx[c] ? mech_tx_mul(M, xs[idx[a][c]], dx[c]) : NULL;
            const char *s = mech_tx_sumz(M, 4, t, sg[a]);
            wr[a] = s ? mech_fmt(M, "2*(%s)", s) : NULL;
        }
        if ((rc = vars3(M, "_wr_%s_%d", nm, wr, J))) return rc;
    }
    const char *wrp[3], *dwr[3], *dwrp[3];
    mech_tx_matvec(M, T->Rmp, wr, 0, wrp);
    for (int a = 0; a < 3; a++) dwr[a] = wr[a] ? mech_fmt(M, "der(%s)", wr[a]) : NULL;
    mech_tx_matvec(M, T->Rmp, dwr, 0, dwrp);
    /* w_c = Rpc^T (w_p + wrp), al_c = Rpc^T (al_p + w_p x wrp + dwrp) */
    const char *u[3], *v[3], *wxw[3];
    mech_tx_cross(M, T->wp, wrp, wxw);
    for (int k = 0; k < 3; k++) {
        const char *t[2] = {T->wp[k], wrp[k]}, *t3[3] = {T->alp[k], wxw[k], dwrp[k]};
        u[k] = mech_tx_sumz(M, 2, t, s3);
        v[k] = mech_tx_sumz(M, 3, t3, s3);
    }
    mech_tx_matvec(M, T->Rpc, u, 1, om);
    mech_tx_matvec(M, T->Rpc, v, 1, al);
    if ((rc = vars3_all(M, "_wl_%s_%d", nm, om, J)) || (rc = vars3_all(M, "_all_%s_%d", nm, al, J))) return rc;
    /* the global angular velocity (force elements, reactions): A_c w_c */
    const char *A[9], *gw[3];
    for (int k = 0; k < 9; k++) A[k] = T->Bc->A[k];
    mech_tx_matvec(M, A, om, 0, gw);
    for (int k = 0; k < 3 && !rc; k++) rc = mech_add_var(M, T->Bc->w[k], gw[k] ? gw[k] : "0", J->line, J->col);
    return rc;
}

/* the joint's translation (_tl_), D from the parent's origin to the child's marker (_D_) and its
 * acceleration (_am_), in the parent's axes */
static int motion_translation(mech *M, tmotion *T)
{
    const joint *J = T->J;
    const char *nm = T->nm, **X = T->X, **Rmp = T->Rmp, **D = T->D, **am = T->am;
    int kind = T->kind, rc = 0;
    static const int s3[3] = {1, 1, 1}, s5[5] = {1, 1, 1, 1, 1};
    /* the joint's translation tl in the parent marker's axes */
    const char *tj[3] = {NULL, NULL, NULL}, *tl[3] = {NULL, NULL, NULL};
    if (kind == JK_PRI) tj[2] = J->q[0];
    else if (kind == JK_CYL) tj[2] = J->q[1];
    else if (kind == JK_PLN) tj[0] = J->q[0], tj[1] = J->q[1];
    if (tj[0] || tj[2]) {
        if (J->child_i) {
            for (int a = 0; a < 3; a++) tl[a] = tj[a];
        } else { /* -R(xs) tj */
            for (int a = 0; a < 3; a++) {
                const char *t[3] = {mech_tx_mul(M, X[3 * a], tj[0]), mech_tx_mul(M, X[3 * a + 1], tj[1]), mech_tx_mul(M, X[3 * a + 2], tj[2])};
                static const int m3[3] = {-1, -1, -1};
                tl[a] = mech_tx_sumz(M, 3, t, m3);
            }
        }
        if ((rc = vars3(M, "_tl_%s_%d", nm, tl, J))) return rc;
    }
    /* D: from the parent's origin to the child's marker (parent axes); its acceleration */
    const char *sp[3] = {T->P->s[0], T->P->s[1], T->P->s[2]};
    const char *Rtl[3], *dtl[3], *ddtl[3], *Rdtl[3], *Rddtl[3];
    mech_tx_matvec(M, Rmp, tl, 0, Rtl);
    for (int a = 0; a < 3; a++) {
        dtl[a] = tl[a] ? mech_fmt(M, "der(%s)", tl[a]) : NULL;
        ddtl[a] = tl[a] ? mech_fmt(M, "der(der(%s))", tl[a]) : NULL;
    }
    mech_tx_matvec(M, Rmp, dtl, 0, Rdtl);
    mech_tx_matvec(M, Rmp, ddtl, 0, Rddtl);
    for (int k = 0; k < 3; k++) {
        const char *t[2] = {mech_tx_is0(sp[k]) ? NULL : sp[k], Rtl[k]};
        D[k] = mech_tx_sumz(M, 2, t, s3);
    }
    if ((rc = vars3(M, "_D_%s_%d", nm, D, J))) return rc;
    const char *aD[3], *wD[3], *wwD[3], *wRd[3];
    mech_tx_cross(M, T->alp, D, aD);
    mech_tx_cross(M, T->wp, D, wD);
    mech_tx_cross(M, T->wp, wD, wwD);
    mech_tx_cross(M, T->wp, Rdtl, wRd);
    for (int k = 0; k < 3; k++) {
        if (wRd[k]) wRd[k] = mech_fmt(M, "2*(%s)", wRd[k]);
        const char *t[5] = {T->aop[k], aD[k], wwD[k], wRd[k], Rddtl[k]};
        am[k] = mech_tx_sumz(M, 5, t, s5);
    }
    return vars3(M, "_am_%s_%d", nm, am, J);
}

/* the child's origin: ao = Rpc^T a(o) - al x s_c - w x (w x s_c) (_aol_); rho = D - Rpc s_c (_rho_) */
static int motion_origin(mech *M, tmotion *T)
{
    const joint *J = T->J;
    const char *nm = T->nm, **ao = T->ao;
    int rc = 0;
    const char *sc[3] = {T->C->s[0], T->C->s[1], T->C->s[2]};
    const char *ram[3], *as[3], *ws[3], *wws[3], *Rs[3], *rho[3];
    mech_tx_matvec(M, T->Rpc, T->am, 1, ram);
    const char *scz[3];
    for (int k = 0; k < 3; k++) scz[k] = mech_tx_is0(sc[k]) ? NULL : sc[k];
    mech_tx_cross(M, T->al, scz, as);
    mech_tx_cross(M, T->om, scz, ws);
    mech_tx_cross(M, T->om, ws, wws);
    for (int k = 0; k < 3; k++) {
        const char *t[3] = {ram[k], as[k], wws[k]};
        static const int sg3[3] = {1, -1, -1};
        ao[k] = mech_tx_sumz(M, 3, t, sg3);
    }
    if ((rc = vars3_all(M, "_aol_%s_%d", nm, ao, J))) return rc;
    mech_tx_matvec(M, T->Rpc, scz, 0, Rs);
    for (int k = 0; k < 3; k++) {
        const char *t[2] = {T->D[k], Rs[k]};
        static const int sg2[2] = {1, -1};
        rho[k] = mech_tx_sumz(M, 2, t, sg2);
    }
    return vars3_all(M, "_rho_%s_%d", nm, rho, J);
}

/* d'Alembert loads at the origin, body axes: f = -m a_cm, n = cm x f - (I al + w x I w) (_fil_, _nil_) */
static int motion_inertia_loads(mech *M, tmotion *T)
{
    const joint *J = T->J;
    body *Bc = T->Bc;
    const char *nm = T->nm, **om = T->om, **al = T->al;
    int rc = 0;
    static const int s3[3] = {1, 1, 1};
    const char *cm[3], *ac[3], *wc[3], *wwc[3], *acm[3], *Fi[3], *Iw[3], *Ia[3], *wIw[3], *cF[3], *Ni[3];
    for (int k = 0; k < 3; k++) cm[k] = mech_tx_is0(Bc->cm[k]) ? NULL : Bc->cm[k];
    mech_tx_cross(M, al, cm, ac);
    mech_tx_cross(M, om, cm, wc);
    mech_tx_cross(M, om, wc, wwc);
    for (int k = 0; k < 3; k++) {
        const char *t[3] = {T->ao[k], ac[k], wwc[k]};
        acm[k] = mech_tx_sumz(M, 3, t, s3);
        Fi[k] = mech_tx_is0(Bc->mass) || !acm[k] ? NULL : mech_fmt(M, "-(%s)*(%s)", Bc->mass, acm[k]);
    }
    if ((rc = vars3_all(M, "_fil_%s_%d", nm, Fi, J))) return rc;
    const char *I6[6] = {Bc->I[0], Bc->I[1], Bc->I[2], Bc->I[3], Bc->I[4], Bc->I[5]};
    const char *Jm[9] = {I6[0], I6[3], I6[4], I6[3], I6[1], I6[5], I6[4], I6[5], I6[2]};
    for (int k = 0; k < 9; k++) Jm[k] = mech_tx_is0(Jm[k]) ? NULL : Jm[k];
    mech_tx_matvec(M, Jm, om, 0, Iw);
    mech_tx_matvec(M, Jm, al, 0, Ia);
    mech_tx_cross(M, om, Iw, wIw);
    mech_tx_cross(M, cm, Fi, cF);
    for (int k = 0; k < 3; k++) {
        const char *t[3] = {cF[k], Ia[k], wIw[k]};
        static const int sg3[3] = {1, -1, -1};
        Ni[k] = mech_tx_sumz(M, 3, t, sg3);
    }
    return vars3_all(M, "_nil_%s_%d", nm, Ni, J);
}

/* The recursion in the bodies' own axes: with Rpc the child's axes in the parent's (a function
 * of the joint's coordinates only), every quantity of a body is a short expression of its
 * parent's, so that neither the graph nor its derivatives grow with the depth of the tree. */
static int tree_motion(mech *M, const joint *J, int kind, const char *const xs[4], const double cq[4])
{
    int mp = J->child_i ? J->j : J->i, mc = J->child_i ? J->i : J->j;
    tmotion T;
    memset(&T, 0, sizeof T);
    T.J = J;
    T.kind = kind;
    T.P = &M->mk[mp], T.C = &M->mk[mc];
    T.Bc = &M->b[T.C->body];
    T.nm = T.Bc->name;
    body_motion_local(M, T.P->body, T.wp, T.alp, T.aop);
    int rc = motion_rotation(M, &T, xs, cq);
    if (!rc) rc = motion_rates(M, &T, xs, cq);
    if (!rc) rc = motion_translation(M, &T);
    if (!rc) rc = motion_origin(M, &T);
    if (rc) return rc;
    if (T.Bc->rt) return 0; /* its inertia is in the structured term */
    return motion_inertia_loads(M, &T);
}

int mech_rel_tree_kinematics(mech *M, int ji)
{
    joint *J = &M->jt[ji];
    int kind = mech_rel_kind(M, J);
    int mp = J->child_i ? J->j : J->i, mc = J->child_i ? J->i : J->j;
    marker *P = &M->mk[mp], *C = &M->mk[mc];
    body *Bc = &M->b[C->body];
    int rc = 0;
    const char *sg = J->child_i ? "+" : "-";
    /* the translation of the child's marker (global texts) */
    const char *tr[3] = {"0", "0", "0"};
    marker *Mj = &M->mk[J->j];
    char *const *ax_j[3] = {Mj->ax[0], Mj->ax[1], Mj->ax[2]};
    if (M->planar) {
        /* a planar prismatic slides along x_j: x of the parent's marker (the angles are equal) */
        if (kind == JK_PRI)
            for (int k = 0; k < 2; k++) tr[k] = mech_fmt(M, "%s(%s)*%s", sg, J->q[0], P->ax[0][k]);
    } else if (kind == JK_PRI || kind == JK_CYL) {
        int qi = kind == JK_PRI ? 0 : 1;
        for (int k = 0; k < 3; k++) tr[k] = mech_fmt(M, "%s(%s)*%s", sg, J->q[qi], ax_j[2][k]);
    } else if (kind == JK_PLN) {
        for (int k = 0; k < 3; k++)
            tr[k] = mech_fmt(M, "%s((%s)*%s + (%s)*%s)", sg, J->q[0], ax_j[0][k], J->q[1], ax_j[1][k]);
    }
    if (M->planar) {
        /* angles: phi_c = phi_p +- q (revolute), phi_p (prismatic, fixed) */
        const char *phic = kind == JK_REV ? mech_fmt(M, "%s %s (%s)", P->phi, sg, J->q[0]) : P->phi;
        rc = mech_add_var(M, Bc->th, mech_fmt(M, "%s - (%s)", phic, C->ang ? C->ang : "0"), J->line, J->col);
        const char *pc[2];
        for (int k = 0; k < 2; k++) pc[k] = mech_fmt(M, "%s + %s", P->p[k], tr[k]);
        /* p = r + A s: r_x = p_x - (c s_x - s s_y), r_y = p_y - (s s_x + c s_y) */
        if (!rc)
            rc = mech_add_var(M, Bc->r[0],
                              mech_fmt(M, "%s - (%s*(%s) - %s*(%s))", pc[0], Bc->A[0], C->s[0], Bc->A[3], C->s[1]),
                              J->line, J->col);
        if (!rc)
            rc = mech_add_var(M, Bc->r[1],
                              mech_fmt(M, "%s - (%s*(%s) + %s*(%s))", pc[1], Bc->A[3], C->s[0], Bc->A[0], C->s[1]),
                              J->line, J->col);
        return rc;
    }
    /* rotation: e_c = q_p (x) x' (x) conj(m_c) */
    double pf[3], Rif[9], Rjf[9], dummy;
    if ((rc = mech_rel_marker_file(M, J->i, pf, Rif, &dummy)) || (rc = mech_rel_marker_file(M, J->j, pf, Rjf, &dummy))) return rc;
    double X[9];
    mat3_tmul(Rjf, Rif, X);
    double cq[4];
    mech_rel_snap_c(kind, X, cq);
    const char *x[4], *c4[4], *t[4];
    mech_tx_qnum(M, cq, c4);
    switch (kind) {
    case JK_REV: case JK_CYL: mech_tx_qz(M, J->q[0], t), mech_tx_qmul(M, t, c4, x); break;
    case JK_PLN: mech_tx_qz(M, J->q[2], t), mech_tx_qmul(M, t, c4, x); break;
    case JK_PRI: case JK_FIX: for (int k = 0; k < 4; k++) x[k] = c4[k]; break;
    case JK_SPH: for (int k = 0; k < 4; k++) x[k] = J->q[k]; break;
    case JK_UNI: {
        const char *a[4], *b[4], *ab[4], *yq[4];
        double y[4] = {0.70710678118654752440, 0, 0.70710678118654752440, 0}; /* Ry(pi/2) */
        mech_tx_qnum(M, y, yq);
        mech_tx_qz(M, J->q[0], a);
        mech_tx_qz(M, J->q[1], b);
        mech_tx_qmul(M, a, yq, ab);
        mech_tx_qmul(M, ab, b, x);
        break;
    }
    default: return 0;
    }
    const char *xs[4];
    if (J->child_i) for (int k = 0; k < 4; k++) xs[k] = x[k];
    else mech_tx_qconj(M, x, xs);
    const char *qp[4], *qpv[4], *qc[4], *mcq[4], *mcc[4], *ec[4];
    mech_rel_marker_q(M, mp, qp);
    for (int k = 0; k < 4 && !rc; k++) { /* the parent's marker, once */
        qpv[k] = mech_fmt(M, "_qm_%s_%d", J->name, k);
        rc = mech_add_var(M, qpv[k], qp[k], J->line, J->col);
    }
    mech_tx_qmul(M, qpv, xs, qc);
    mech_tx_qnum(M, C->mq, mcq);
    mech_tx_qconj(M, mcq, mcc);
    mech_tx_qmul(M, qc, mcc, ec);
    for (int k = 0; k < 4 && !rc; k++) rc = mech_add_var(M, Bc->e[k], ec[k], J->line, J->col);
    /* position: r_c = p_p + translation - A_c s_c */
    for (int k = 0; k < 3 && !rc; k++) {
        const char *As = mech_fmt(M, "%s*(%s) + %s*(%s) + %s*(%s)", Bc->A[3 * k], C->s[0], Bc->A[3 * k + 1], C->s[1],
                                  Bc->A[3 * k + 2], C->s[2]);
        rc = mech_add_var(M, Bc->r[k], mech_fmt(M, "%s + %s - (%s)", P->p[k], tr[k], As), J->line, J->col);
    }
    if (!rc && Bc->kind == KIND_SPATIAL) rc = tree_motion(M, J, kind, xs, cq);
    return rc;
}

/* The global kinematics of every moving rigid body (not point masses, not flexible bodies), for
 * the velocity transformation B of the outputs (model/vtrans.c): the centre of mass r + A cm and
 * the Euler parameters (spatial) or the angle (planar), as texts over the variables above. */
int mech_rel_kinematics(mech *M)
{
    int rc = 0;
    M->src->kin_planar = M->planar;
    for (int h = 1; h < M->nb && !rc; h++) {
        body *B = &M->b[M->torder ? M->torder[h] : h];
        if (B->kind == KIND_GROUND || B->kind == KIND_POINT || B->flex) continue;
        int d = M->planar ? 2 : 3;
        for (int k = 0; k < d && !rc; k++) {
            const char *t = M->planar ? mech_fmt(M, "%s + %s*(%s) + %s*(%s)", B->r[k], B->A[3 * k], B->cm[0],
                                                 B->A[3 * k + 1], B->cm[1])
                                      : mech_fmt(M, "%s + %s*(%s) + %s*(%s) + %s*(%s)", B->r[k], B->A[3 * k],
                                                 B->cm[0], B->A[3 * k + 1], B->cm[1], B->A[3 * k + 2], B->cm[2]);
            rc = mech_push(M, &M->src->kinematics, B->name, t, B->line, B->col);
        }
        if (M->planar) {
            if (!rc) rc = mech_push(M, &M->src->kinematics, B->name, B->th, B->line, B->col);
        } else {
            for (int k = 0; k < 4 && !rc; k++) rc = mech_push(M, &M->src->kinematics, B->name, B->e[k], B->line, B->col);
        }
    }
    return rc;
}
