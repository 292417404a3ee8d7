/* `coordinates: relative`: joint coordinates on a spanning tree, cut joints closing the loops,
 * recursive kinematics (source 003 Ch. 2-4; docs/mechanism.md, "Relative coordinates").
 *
 * The tree (tree.c, breadth-first from ground over the joints that have coordinates) decides
 * which joints carry coordinates; the others (cut joints, joints without coordinates) stay
 * constraints, written by joint.c as in absolute coordinates. Every body's pose is written as
 * named variables of its parent's: with q_p the Euler parameters of the parent's joint marker
 * (body times marker), x(q) the rotation of marker i relative to marker j (revolute: about z_j by
 * q; universal: Rz(q1) Ry(pi/2) Rz(q2); spherical: Euler parameters that are coordinates), the
 * child's Euler parameters are e_c = q_p x (x) conj(m_c) (x replaced by conj(x) when the child
 * carries marker j), its marker sits at the parent's marker plus the joint's translation, and
 * r_c = p_c - A_c s_c. The rotation matrices, angular velocities, markers, energies and measures
 * then follow from e_c and r_c exactly as for absolute coordinates (body.c, force.c), so the
 * kinetic energy is that of the same bodies and the equation level differentiates it (M = B^T M B
 * of source 003 Eq. 3.8 comes out of d2T/dv2 exactly). Generalized forces are by virtual power:
 * the forces on a subtree reduced to its root body (F_s, N_s about its origin, recursively from
 * the leaves), and Q_q = u . (N_s + (r_c - p_i) x F_s) for a rotation about u through p_i,
 * Q_q = u . F_s for a translation along u (source 003 Table 2.2's columns of B). A body no tree
 * joint reaches from the ground keeps absolute coordinates (a floating base). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mech/mech_internal.h"
#include "mech/tree.h"
#include "model/rtree.h"

/* ---- small text algebra: "0" and "1" are folded so that the texts stay short ---- */

static int is0(const char *a) { return !a || !strcmp(a, "0"); }
static int is1(const char *a) { return !strcmp(a, "1"); }

static const char *numt(mech *M, double x)
{
    if (fabs(x) < 1e-15) return "0";
    if (x == 1) return "1";
    if (x == -1) return "-1";
    return mech_num(M, x);
}

/* a*b (NULL when zero) */
static const char *mul(mech *M, const char *a, const char *b)
{
    if (is0(a) || is0(b)) return NULL;
    if (is1(a)) return b;
    if (is1(b)) return a;
    return mech_fmt(M, "(%s)*(%s)", a, b);
}

/* sum of signed terms (NULL terms skipped): "0" when empty */
static const char *sum(mech *M, int n, const char *const *t, const int *sg)
{
    const char *s = NULL;
    for (int k = 0; k < n; k++) {
        if (!t[k]) continue;
        if (!s) s = sg[k] > 0 ? mech_fmt(M, "%s", t[k]) : mech_fmt(M, "-(%s)", t[k]);
        else s = mech_fmt(M, "%s %c (%s)", s, sg[k] > 0 ? '+' : '-', t[k]);
    }
    return s ? s : "0";
}

/* Hamilton product of quaternions given as texts */
static void qmul(mech *M, const char *const a[4], const char *const b[4], const char *o[4])
{
    const char *t[4];
    int s[4];
    t[0] = mul(M, a[0], b[0]), t[1] = mul(M, a[1], b[1]), t[2] = mul(M, a[2], b[2]), t[3] = mul(M, a[3], b[3]);
    s[0] = 1, s[1] = s[2] = s[3] = -1;
    const char *r0 = sum(M, 4, t, s);
    t[0] = mul(M, a[0], b[1]), t[1] = mul(M, a[1], b[0]), t[2] = mul(M, a[2], b[3]), t[3] = mul(M, a[3], b[2]);
    s[0] = s[1] = s[2] = 1, s[3] = -1;
    const char *r1 = sum(M, 4, t, s);
    t[0] = mul(M, a[0], b[2]), t[1] = mul(M, a[2], b[0]), t[2] = mul(M, a[3], b[1]), t[3] = mul(M, a[1], b[3]);
    const char *r2 = sum(M, 4, t, s);
    t[0] = mul(M, a[0], b[3]), t[1] = mul(M, a[3], b[0]), t[2] = mul(M, a[1], b[2]), t[3] = mul(M, a[2], b[1]);
    const char *r3 = sum(M, 4, t, s);
    o[0] = r0, o[1] = r1, o[2] = r2, o[3] = r3;
}

static void qnum(mech *M, const double q[4], const char *o[4])
{
    for (int k = 0; k < 4; k++) o[k] = numt(M, q[k]);
}

static void qconj(mech *M, const char *const a[4], const char *o[4])
{
    o[0] = a[0];
    for (int k = 1; k < 4; k++) o[k] = is0(a[k]) ? "0" : mech_fmt(M, "(-(%s))", a[k]);
}

/* the rotation about z by the angle text q */
static void qz(mech *M, const char *q, const char *o[4])
{
    o[0] = mech_fmt(M, "cos(0.5*(%s))", q);
    o[1] = o[2] = "0";
    o[3] = mech_fmt(M, "sin(0.5*(%s))", q);
}

static void qmul_n(const double a[4], const double b[4], double o[4])
{
    double r[4] = {a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
                   a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
                   a[0] * b[2] + a[2] * b[0] + a[3] * b[1] - a[1] * b[3],
                   a[0] * b[3] + a[3] * b[0] + a[1] * b[2] - a[2] * b[1]};
    memcpy(o, r, sizeof r);
}

/* ---- joint kinds ---- */

enum { JK_NONE, JK_REV, JK_PRI, JK_CYL, JK_UNI, JK_SPH, JK_PLN, JK_FIX };

static int kind_of(mech *M, const joint *J)
{
    const char *t = J->type;
    if (!strcmp(t, "revolute")) return JK_REV;
    if (!strcmp(t, "prismatic")) return JK_PRI;
    if (!strcmp(t, "fixed")) return JK_FIX;
    if (M->planar) return JK_NONE;
    if (!strcmp(t, "cylindrical")) return JK_CYL;
    if (!strcmp(t, "universal")) return JK_UNI;
    if (!strcmp(t, "spherical")) return JK_SPH;
    if (!strcmp(t, "planar")) return JK_PLN;
    return JK_NONE;
}

static int ncoord(mech *M, int kind)
{
    switch (kind) {
    case JK_REV: case JK_PRI: return 1;
    case JK_CYL: case JK_UNI: return 2;
    case JK_PLN: return 3;
    case JK_SPH: return 4;
    default: (void)M; return 0;
    }
}

/* ---- numbers of the file's configuration ---- */

/* a marker's global position and axes (column-major R; planar: the angle in phi) in the file */
static int marker_file(mech *M, int m, double p[3], double R[9], double *phi)
{
    marker *K = &M->mk[m];
    body *B = &M->b[K->body];
    double r0[3] = {0, 0, 0}, s0[3] = {0, 0, 0}, th = 0, a = 0;
    int rc = 0;
    int dim = M->planar ? 2 : 3;
    for (int k = 0; k < dim && !rc; k++) {
        if (B->kind != KIND_GROUND) rc = mech_eval_text(M, B->p0[k], B->val, "position", &r0[k]);
        if (!rc) rc = mech_eval_text(M, K->s[k], K->val ? K->val : B->val, "marker position", &s0[k]);
    }
    if (rc) return rc;
    if (M->planar) {
        if (B->kind == KIND_PLANAR) {
            yaml_node_t *an = B->val ? mech_get(M, B->val, "angle") : NULL;
            if (an && (rc = mech_eval_text(M, mech_sc(an), an, "angle", &th))) return rc;
        }
        if (K->ang && (rc = mech_eval_text(M, K->ang, K->val, "marker angle", &a))) return rc;
        double c = cos(th), s = sin(th);
        p[0] = r0[0] + c * s0[0] - s * s0[1];
        p[1] = r0[1] + s * s0[0] + c * s0[1];
        p[2] = 0;
        *phi = th + a;
        double cf = cos(th + a), sf = sin(th + a);
        double Rp[9] = {cf, sf, 0, -sf, cf, 0, 0, 0, 1};
        memcpy(R, Rp, sizeof Rp);
        return 0;
    }
    const double *Rb = B->R0;
    for (int k = 0; k < 3; k++) p[k] = r0[k] + Rb[k] * s0[0] + Rb[3 + k] * s0[1] + Rb[6 + k] * s0[2];
    memcpy(R, K->R0, 9 * sizeof *R);
    *phi = 0;
    return 0;
}

/* the velocity of marker m's point and its body's angular velocity (global) in the file: the body's
 * `velocity` (of its origin) and `angular_velocity`; *any is set when either is given */
static int body_rates(mech *M, int m, const double pm[3], double v[3], double w[3], int *any)
{
    body *B = &M->b[M->mk[m].body];
    for (int k = 0; k < 3; k++) v[k] = w[k] = 0;
    if (B->kind == KIND_GROUND || !B->val) return 0;
    int dim = M->planar ? 2 : 3, rc = 0;
    yaml_node_t *vn = mech_get(M, B->val, "velocity"), *wn = mech_get(M, B->val, "angular_velocity");
    if (vn && (rc = mech_eval_vec(M, vn, dim, "velocity", v))) return rc;
    if (wn) {
        if (M->planar) rc = mech_eval_text(M, mech_sc(wn), wn, "angular_velocity", &w[2]);
        else rc = mech_eval_vec(M, wn, 3, "angular_velocity", w);
        if (rc) return rc;
    }
    if (!vn && !wn) return 0;
    *any = 1;
    double r0[3] = {0, 0, 0};
    for (int k = 0; k < dim && !rc; k++) rc = mech_eval_text(M, B->p0[k], B->val, "position", &r0[k]);
    double a[3] = {pm[0] - r0[0], pm[1] - r0[1], pm[2] - r0[2]};
    v[0] += w[1] * a[2] - w[2] * a[1];
    v[1] += w[2] * a[0] - w[0] * a[2];
    v[2] += w[0] * a[1] - w[1] * a[0];
    return rc;
}

/* ---- the tree ---- */

static int read_texts(mech *M, const joint *J, const char *key, int n, const char **out, int *given)
{
    *given = 0;
    yaml_node_t *v = mech_get(M, J->val, key);
    if (!v) return 0;
    char what[200];
    snprintf(what, sizeof what, "joint '%s': %s", J->name, key);
    if (n == 1 && mech_is_scalar(v)) {
        *given = 1;
        return mech_text_of(M, v, what, &out[0]);
    }
    *given = 1;
    return mech_vec_of(M, v, n, what, out);
}

static int coords_of_joint(mech *M, int ji)
{
    joint *J = &M->jt[ji];
    int kind = kind_of(M, J);
    J->nq = ncoord(M, kind);
    if (!J->nq) return 0;
    /* initial values from the file's configuration: marker i relative to marker j */
    double pi[3], pj[3], Ri[9], Rj[9], fi, fj;
    int rc = marker_file(M, J->i, pi, Ri, &fi);
    if (!rc) rc = marker_file(M, J->j, pj, Rj, &fj);
    if (rc) return rc;
    double d[3] = {pi[0] - pj[0], pi[1] - pj[1], pi[2] - pj[2]}, X[9]; /* X = Rj^T Ri */
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            X[a + 3 * b] = Rj[3 * a] * Ri[3 * b] + Rj[3 * a + 1] * Ri[3 * b + 1] + Rj[3 * a + 2] * Ri[3 * b + 2];
    double dj[3]; /* d in j's axes */
    for (int a = 0; a < 3; a++) dj[a] = Rj[3 * a] * d[0] + Rj[3 * a + 1] * d[1] + Rj[3 * a + 2] * d[2];
    double v0[4] = {0, 0, 0, 0};
    const char *suffix1[1] = {"q"}, *suffix2[2] = {"q1", "q2"}, *suffix3[3] = {"q1", "q2", "q3"},
               *suffix4[4] = {"e0", "e1", "e2", "e3"};
    const char *const *suf = J->nq == 1 ? suffix1 : J->nq == 2 ? suffix2 : J->nq == 3 ? suffix3 : suffix4;
    double ang = M->planar ? fi - fj : atan2(X[1], X[0]);
    switch (kind) {
    case JK_REV: v0[0] = ang; break;
    case JK_PRI: v0[0] = M->planar ? dj[0] : dj[2]; break;
    case JK_CYL: v0[0] = ang, v0[1] = dj[2]; break;
    case JK_PLN: v0[0] = dj[0], v0[1] = dj[1], v0[2] = ang; break;
    case JK_UNI: {
        /* z_i in j: (cos q1, sin q1, 0); x_i.z_j = -cos q2, x_i.(z_j x z_i) = sin q2 */
        double zi[3] = {X[6], X[7], X[8]}, xi[3] = {X[0], X[1], X[2]};
        v0[0] = atan2(zi[1], zi[0]);
        double c = -xi[2], s = -zi[1] * xi[0] + zi[0] * xi[1];
        v0[1] = atan2(s, c);
        break;
    }
    case JK_SPH: mech_euler_params(X, v0); break;
    default: break;
    }
    const char *init[4] = {NULL, NULL, NULL, NULL}, *vel[4] = {NULL, NULL, NULL, NULL};
    int given = 0, vgiven = 0;
    if ((rc = read_texts(M, J, "q0", J->nq, init, &given))) return rc;
    if ((rc = read_texts(M, J, "v0", J->nq, vel, &vgiven))) return rc;
    if (!vgiven) { /* the joint rates that the bodies' velocity and angular_velocity imply */
        double vi[3], wi[3], vj[3], wj[3], rd[4] = {0, 0, 0, 0};
        int any = 0;
        if ((rc = body_rates(M, J->i, pi, vi, wi, &any)) || (rc = body_rates(M, J->j, pj, vj, wj, &any))) return rc;
        if (any) {
            double w[3] = {wi[0] - wj[0], wi[1] - wj[1], wi[2] - wj[2]}, wl[3], dd[3], tl[3];
            /* d/dt of d in j's axes: (v_i - v_j) - w_j x d, taken along j's axes */
            double wxd[3] = {wj[1] * d[2] - wj[2] * d[1], wj[2] * d[0] - wj[0] * d[2], wj[0] * d[1] - wj[1] * d[0]};
            for (int a = 0; a < 3; a++) dd[a] = vi[a] - vj[a] - wxd[a];
            for (int a = 0; a < 3; a++) {
                wl[a] = Rj[3 * a] * w[0] + Rj[3 * a + 1] * w[1] + Rj[3 * a + 2] * w[2];
                tl[a] = Rj[3 * a] * dd[0] + Rj[3 * a + 1] * dd[1] + Rj[3 * a + 2] * dd[2];
            }
            double zi[3] = {X[6], X[7], X[8]}; /* z_i in j */
            switch (kind) {
            case JK_REV: rd[0] = wl[2]; break;
            case JK_PRI: rd[0] = M->planar ? tl[0] : tl[2]; break;
            case JK_CYL: rd[0] = wl[2], rd[1] = tl[2]; break;
            case JK_PLN: rd[0] = tl[0], rd[1] = tl[1], rd[2] = wl[2]; break;
            case JK_UNI: rd[0] = wl[2], rd[1] = wl[0] * zi[0] + wl[1] * zi[1] + wl[2] * zi[2]; break;
            case JK_SPH: {
                const double *e = v0; /* der(e) = 1/2 E(e)^T w, w in j's axes */
                double E[3][4] = {{-e[1], e[0], -e[3], e[2]}, {-e[2], e[3], e[0], -e[1]}, {-e[3], -e[2], e[1], e[0]}};
                for (int k = 0; k < 4; k++) rd[k] = 0.5 * (E[0][k] * wl[0] + E[1][k] * wl[1] + E[2][k] * wl[2]);
                break;
            }
            default: break;
            }
            for (int k = 0; k < J->nq; k++) vel[k] = mech_num(M, rd[k]);
            vgiven = 1;
        }
    }
    for (int k = 0; k < J->nq && !rc; k++) {
        J->q[k] = mech_fmt(M, "%s_%s", J->name, suf[k]);
        rc = mech_push(M, &M->src->coordinates, J->q[k], given ? init[k] : mech_num(M, v0[k]), J->line, J->col);
        if (!rc && vgiven) rc = mech_push(M, &M->src->velocities, J->q[k], vel[k], J->line, J->col);
    }
    if (!rc && kind == JK_SPH)
        rc = mech_push(M, &M->src->constraints, mech_fmt(M, "joint %s (Euler parameter normalization)", J->name),
                       mech_fmt(M, "%s^2 + %s^2 + %s^2 + %s^2 - 1", J->q[0], J->q[1], J->q[2], J->q[3]), J->line,
                       J->col);
    return rc;
}

/* the constant part of a joint's relative rotation, snapped to the joint (numbers) */
static void snap_C(int kind, const double X[9], double c[4])
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

/* marker m's global Euler parameters as texts (its body's times the marker's) */
static void marker_q(mech *M, int m, const char *o[4])
{
    marker *K = &M->mk[m];
    body *B = &M->b[K->body];
    static const char *one[4] = {"1", "0", "0", "0"};
    const char *mq[4];
    qnum(M, K->mq, mq);
    if (B->kind == KIND_GROUND) {
        for (int k = 0; k < 4; k++) o[k] = mq[k];
        return;
    }
    qmul(M, B->kind == KIND_SPATIAL ? (const char *const *)B->e : one, mq, o);
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

/* texts with NULL for zero */
static const char *sumz(mech *M, int n, const char *const *t, const int *sg)
{
    const char *s = sum(M, n, t, sg);
    return is0(s) ? NULL : s;
}

static void cross3(mech *M, const char *const a[3], const char *const b[3], const char *o[3])
{
    static const int s2[2] = {1, -1};
    for (int k = 0; k < 3; k++) {
        int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
        const char *t[2] = {mul(M, a[k1], b[k2]), mul(M, a[k2], b[k1])};
        o[k] = sumz(M, 2, t, s2);
    }
}

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

/* the rotation matrix (row-major) of Euler parameters given as texts */
static void qrot(mech *M, const char *const x[4], const char *R[9])
{
    static const int s2[2] = {1, 1}, sd[2] = {1, -1};
    const char *t[2];
#define QR_SQ(i, a)                                                                                            \
    t[0] = mul(M, x[0], x[0]), t[1] = mul(M, x[a], x[a]),                                                      \
    R[i] = mech_fmt(M, "2*(%s) - 1", sum(M, 2, t, s2))
#define QR_OFF(i, a, b, c, sgn)                                                                                \
    t[0] = mul(M, x[a], x[b]), t[1] = mul(M, x[0], x[c]), R[i] = sumz(M, 2, t, sgn),                           \
    R[i] = R[i] ? mech_fmt(M, "2*(%s)", R[i]) : NULL
    QR_SQ(0, 1);
    QR_OFF(1, 1, 2, 3, sd);
    QR_OFF(2, 1, 3, 2, s2);
    QR_OFF(3, 1, 2, 3, s2);
    QR_SQ(4, 2);
    QR_OFF(5, 2, 3, 1, sd);
    QR_OFF(6, 1, 3, 2, sd);
    QR_OFF(7, 2, 3, 1, s2);
    QR_SQ(8, 3);
#undef QR_SQ
#undef QR_OFF
}

/* numeric rotation matrix (row-major) of unit Euler parameters */
static void qrot_n(const double q[4], double R[9])
{
    double w = q[0], x = q[1], y = q[2], z = q[3];
    double r[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z),     2 * (x * z + w * y),
                   2 * (x * y + w * z),     1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                   2 * (x * z - w * y),     2 * (y * z + w * x),     1 - 2 * (x * x + y * y)};
    memcpy(R, r, sizeof r);
}

/* R v (R row-major texts or numbers) */
static void mat3(mech *M, const char *const R[9], const char *const v[3], int transpose, const char *o[3])
{
    static const int s3[3] = {1, 1, 1};
    for (int i = 0; i < 3; i++) {
        const char *t[3];
        for (int j = 0; j < 3; j++) t[j] = mul(M, transpose ? R[3 * j + i] : R[3 * i + j], v[j]);
        o[i] = sumz(M, 3, t, s3);
    }
}

static void numR(mech *M, const double R[9], const char *o[9])
{
    for (int k = 0; k < 9; k++) o[k] = fabs(R[k]) < 1e-15 ? NULL : numt(M, R[k]);
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
        gw[k] = is0(B->w[k]) ? NULL : B->w[k];
        ga[k] = gw[k] ? mech_fmt(M, "der(%s)", gw[k]) : NULL;
        gr[k] = is0(B->r[k]) ? NULL : mech_fmt(M, "der(der(%s))", B->r[k]);
    }
    for (int k = 0; k < 9; k++) A[k] = B->A[k];
    mat3(M, A, gw, 1, w);
    mat3(M, A, ga, 1, al);
    mat3(M, A, gr, 1, ao);
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

/* The recursion in the bodies' own axes: with Rpc the child's axes in the parent's (a function
 * of the joint's coordinates only), every quantity of a body is a short expression of its
 * parent's, so that neither the graph nor its derivatives grow with the depth of the tree. */
static int tree_motion(mech *M, const joint *J, int kind, const char *const xs[4], const double cq[4])
{
    int mp = J->child_i ? J->j : J->i, mc = J->child_i ? J->i : J->j;
    marker *P = &M->mk[mp], *C = &M->mk[mc];
    int pb = P->body;
    body *Bc = &M->b[C->body];
    const char *nm = Bc->name;
    const char *wp[3], *alp[3], *aop[3];
    body_motion_local(M, pb, wp, alp, aop);
    int rc = 0;
    static const int s3[3] = {1, 1, 1}, s5[5] = {1, 1, 1, 1, 1};
    /* Rpc = Rm_p R(xs) Rm_c^T */
    double Rmp_n[9], Rmc_n[9];
    qrot_n(P->mq, Rmp_n);
    qrot_n(C->mq, Rmc_n);
    const char *Rmp[9], *X[9], *T1[9], *Rpc[9];
    numR(M, Rmp_n, Rmp);
    /* one angle about z (revolute, cylindrical, planar): its rate w_r = q' z (x^* = C^T Rz(q)^T:
     * w_r = -q' C^T z) in closed form */
    const char *qa = kind == JK_REV || kind == JK_CYL ? J->q[0] : kind == JK_PLN ? J->q[2] : NULL;
    if (qa) { /* x = Rz(q) C with cos q, sin q: its z row and column stay exact (no cos^2 + sin^2) */
        double C4[9];
        qrot_n(cq, C4);
        const char *c = mech_fmt(M, "cos(%s)", qa), *sn = mech_fmt(M, "sin(%s)", qa), *ms = mech_fmt(M, "(-sin(%s))", qa);
        const char *Rz[9] = {c, ms, NULL, sn, c, NULL, NULL, NULL, "1"}, *Cn[9];
        numR(M, C4, Cn);
        static const int s3[3] = {1, 1, 1};
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                const char *t[3];
                for (int k = 0; k < 3; k++)
                    t[k] = J->child_i ? mul(M, Rz[3 * i + k], Cn[3 * k + j]) : mul(M, Cn[3 * k + i], Rz[3 * j + k]);
                X[3 * i + j] = sumz(M, 3, t, s3);
            }
    } else {
        qrot(M, xs, X);
    }
    for (int i = 0; i < 3; i++)
        for (int b = 0; b < 3; b++) {
            const char *t[3] = {mul(M, Rmp[3 * i], X[b]), mul(M, Rmp[3 * i + 1], X[3 + b]), mul(M, Rmp[3 * i + 2], X[6 + b])};
            T1[3 * i + b] = sumz(M, 3, t, s3);
        }
    for (int i = 0; i < 3 && !rc; i++)
        for (int j = 0; j < 3 && !rc; j++) {
            const char *t[3];
            for (int b = 0; b < 3; b++) t[b] = fabs(Rmc_n[3 * j + b]) < 1e-15 ? NULL : mul(M, T1[3 * i + b], numt(M, Rmc_n[3 * j + b]));
            const char *v = sumz(M, 3, t, s3);
            Rpc[3 * i + j] = mech_fmt(M, "_Rpc_%s_%d%d", nm, i + 1, j + 1);
            rc = mech_add_var(M, Rpc[3 * i + j], v ? v : "0", J->line, J->col);
        }
    if (rc) return rc;
    /* wr = 2 E(xs) der(xs) in the parent marker's axes, then in the parent's */
    const char *wr[3] = {NULL, NULL, NULL};
    if (qa) {
        double C4[9];
        qrot_n(cq, C4);
        for (int a = 0; a < 3; a++) {
            double u = J->child_i ? (a == 2) : -C4[6 + a];
            wr[a] = fabs(u) < 1e-15 ? NULL : mul(M, numt(M, u), mech_fmt(M, "der(%s)", qa));
        }
        if ((rc = vars3(M, "_wr_%s_%d", nm, wr, J))) return rc;
    } else if (kind != JK_PRI && kind != JK_FIX) {
        static const int idx[3][4] = {{1, 0, 3, 2}, {2, 3, 0, 1}, {3, 2, 1, 0}};
        static const int sg[3][4] = {{-1, 1, -1, 1}, {-1, 1, 1, -1}, {-1, -1, 1, 1}};
        const char *dx[4];
        for (int c = 0; c < 4; c++) dx[c] = is0(xs[c]) ? NULL : mech_fmt(M, "der(%s)", xs[c]);
        for (int a = 0; a < 3; a++) {
            const char *t[4];
            for (int c = 0; c < 4; c++) t[c] = dx[c] ? mul(M, xs[idx[a][c]], dx[c]) : NULL;
            const char *s = sumz(M, 4, t, sg[a]);
            wr[a] = s ? mech_fmt(M, "2*(%s)", s) : NULL;
        }
        if ((rc = vars3(M, "_wr_%s_%d", nm, wr, J))) return rc;
    }
    const char *wrp[3], *dwr[3], *dwrp[3];
    mat3(M, Rmp, wr, 0, wrp);
    for (int a = 0; a < 3; a++) dwr[a] = wr[a] ? mech_fmt(M, "der(%s)", wr[a]) : NULL;
    mat3(M, Rmp, dwr, 0, dwrp);
    /* w_c = Rpc^T (w_p + wrp), al_c = Rpc^T (al_p + w_p x wrp + dwrp) */
    const char *u[3], *v[3], *wxw[3], *om[3], *al[3];
    cross3(M, wp, wrp, wxw);
    for (int k = 0; k < 3; k++) {
        const char *t[2] = {wp[k], wrp[k]}, *t3[3] = {alp[k], wxw[k], dwrp[k]};
        u[k] = sumz(M, 2, t, s3);
        v[k] = sumz(M, 3, t3, s3);
    }
    mat3(M, Rpc, u, 1, om);
    mat3(M, Rpc, v, 1, al);
    if ((rc = vars3_all(M, "_wl_%s_%d", nm, om, J)) || (rc = vars3_all(M, "_all_%s_%d", nm, al, J))) return rc;
    /* the global angular velocity (force elements, reactions): A_c w_c */
    {
        const char *A[9], *gw[3];
        for (int k = 0; k < 9; k++) A[k] = Bc->A[k];
        mat3(M, A, om, 0, gw);
        for (int k = 0; k < 3 && !rc; k++) rc = mech_add_var(M, Bc->w[k], gw[k] ? gw[k] : "0", J->line, J->col);
        if (rc) return rc;
    }
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
                const char *t[3] = {mul(M, X[3 * a], tj[0]), mul(M, X[3 * a + 1], tj[1]), mul(M, X[3 * a + 2], tj[2])};
                static const int m3[3] = {-1, -1, -1};
                tl[a] = sumz(M, 3, t, m3);
            }
        }
        if ((rc = vars3(M, "_tl_%s_%d", nm, tl, J))) return rc;
    }
    /* D: from the parent's origin to the child's marker (parent axes); its acceleration */
    const char *sp[3] = {P->s[0], P->s[1], P->s[2]}, *sc[3] = {C->s[0], C->s[1], C->s[2]};
    const char *Rtl[3], *dtl[3], *ddtl[3], *Rdtl[3], *Rddtl[3], *D[3];
    mat3(M, Rmp, tl, 0, Rtl);
    for (int a = 0; a < 3; a++) {
        dtl[a] = tl[a] ? mech_fmt(M, "der(%s)", tl[a]) : NULL;
        ddtl[a] = tl[a] ? mech_fmt(M, "der(der(%s))", tl[a]) : NULL;
    }
    mat3(M, Rmp, dtl, 0, Rdtl);
    mat3(M, Rmp, ddtl, 0, Rddtl);
    for (int k = 0; k < 3; k++) {
        const char *t[2] = {is0(sp[k]) ? NULL : sp[k], Rtl[k]};
        D[k] = sumz(M, 2, t, s3);
    }
    if ((rc = vars3(M, "_D_%s_%d", nm, D, J))) return rc;
    const char *aD[3], *wD[3], *wwD[3], *wRd[3], *am[3];
    cross3(M, alp, D, aD);
    cross3(M, wp, D, wD);
    cross3(M, wp, wD, wwD);
    cross3(M, wp, Rdtl, wRd);
    for (int k = 0; k < 3; k++) {
        if (wRd[k]) wRd[k] = mech_fmt(M, "2*(%s)", wRd[k]);
        const char *t[5] = {aop[k], aD[k], wwD[k], wRd[k], Rddtl[k]};
        am[k] = sumz(M, 5, t, s5);
    }
    if ((rc = vars3(M, "_am_%s_%d", nm, am, J))) return rc;
    /* the child's origin: ao = Rpc^T a(o) - al x s_c - w x (w x s_c); rho = D - Rpc s_c */
    const char *ram[3], *as[3], *ws[3], *wws[3], *ao[3], *Rs[3], *rho[3];
    mat3(M, Rpc, am, 1, ram);
    const char *scz[3];
    for (int k = 0; k < 3; k++) scz[k] = is0(sc[k]) ? NULL : sc[k];
    cross3(M, al, scz, as);
    cross3(M, om, scz, ws);
    cross3(M, om, ws, wws);
    for (int k = 0; k < 3; k++) {
        const char *t[3] = {ram[k], as[k], wws[k]};
        static const int sg3[3] = {1, -1, -1};
        ao[k] = sumz(M, 3, t, sg3);
    }
    if ((rc = vars3_all(M, "_aol_%s_%d", nm, ao, J))) return rc;
    mat3(M, Rpc, scz, 0, Rs);
    for (int k = 0; k < 3; k++) {
        const char *t[2] = {D[k], Rs[k]};
        static const int sg2[2] = {1, -1};
        rho[k] = sumz(M, 2, t, sg2);
    }
    if ((rc = vars3_all(M, "_rho_%s_%d", nm, rho, J))) return rc;
    if (Bc->rt) return 0; /* its inertia is in the structured term */
    /* d'Alembert loads at the origin, body axes: f = -m a_cm, n = cm x f - (I al + w x I w) */
    const char *cm[3], *ac[3], *wc[3], *wwc[3], *acm[3], *Fi[3], *Iw[3], *Ia[3], *wIw[3], *cF[3], *Ni[3];
    for (int k = 0; k < 3; k++) cm[k] = is0(Bc->cm[k]) ? NULL : Bc->cm[k];
    cross3(M, al, cm, ac);
    cross3(M, om, cm, wc);
    cross3(M, om, wc, wwc);
    for (int k = 0; k < 3; k++) {
        const char *t[3] = {ao[k], ac[k], wwc[k]};
        acm[k] = sumz(M, 3, t, s3);
        Fi[k] = is0(Bc->mass) || !acm[k] ? NULL : mech_fmt(M, "-(%s)*(%s)", Bc->mass, acm[k]);
    }
    if ((rc = vars3_all(M, "_fil_%s_%d", nm, Fi, J))) return rc;
    const char *I6[6] = {Bc->I[0], Bc->I[1], Bc->I[2], Bc->I[3], Bc->I[4], Bc->I[5]};
    const char *Jm[9] = {I6[0], I6[3], I6[4], I6[3], I6[1], I6[5], I6[4], I6[5], I6[2]};
    for (int k = 0; k < 9; k++) Jm[k] = is0(Jm[k]) ? NULL : Jm[k];
    mat3(M, Jm, om, 0, Iw);
    mat3(M, Jm, al, 0, Ia);
    cross3(M, om, Iw, wIw);
    cross3(M, cm, Fi, cF);
    for (int k = 0; k < 3; k++) {
        const char *t[3] = {cF[k], Ia[k], wIw[k]};
        static const int sg3[3] = {1, -1, -1};
        Ni[k] = sumz(M, 3, t, sg3);
    }
    return vars3_all(M, "_nil_%s_%d", nm, Ni, J);
}

static int tree_kinematics(mech *M, int ji)
{
    joint *J = &M->jt[ji];
    int kind = kind_of(M, J);
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
    if ((rc = marker_file(M, J->i, pf, Rif, &dummy)) || (rc = marker_file(M, J->j, pf, Rjf, &dummy))) return rc;
    double X[9];
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            X[a + 3 * b] = Rjf[3 * a] * Rif[3 * b] + Rjf[3 * a + 1] * Rif[3 * b + 1] + Rjf[3 * a + 2] * Rif[3 * b + 2];
    double cq[4];
    snap_C(kind, X, cq);
    const char *x[4], *c4[4], *t[4];
    qnum(M, cq, c4);
    switch (kind) {
    case JK_REV: case JK_CYL: qz(M, J->q[0], t), qmul(M, t, c4, x); break;
    case JK_PLN: qz(M, J->q[2], t), qmul(M, t, c4, x); break;
    case JK_PRI: case JK_FIX: for (int k = 0; k < 4; k++) x[k] = c4[k]; break;
    case JK_SPH: for (int k = 0; k < 4; k++) x[k] = J->q[k]; break;
    case JK_UNI: {
        const char *a[4], *b[4], *ab[4], *yq[4];
        double y[4] = {0.70710678118654752440, 0, 0.70710678118654752440, 0}; /* Ry(pi/2) */
        qnum(M, y, yq);
        qz(M, J->q[0], a);
        qz(M, J->q[1], b);
        qmul(M, a, yq, ab);
        qmul(M, ab, b, x);
        break;
    }
    default: return 0;
    }
    const char *xs[4];
    if (J->child_i) for (int k = 0; k < 4; k++) xs[k] = x[k];
    else qconj(M, x, xs);
    const char *qp[4], *qpv[4], *qc[4], *mcq[4], *mcc[4], *ec[4];
    marker_q(M, mp, qp);
    for (int k = 0; k < 4 && !rc; k++) { /* the parent's marker, once */
        qpv[k] = mech_fmt(M, "_qm_%s_%d", J->name, k);
        rc = mech_add_var(M, qpv[k], qp[k], J->line, J->col);
    }
    qmul(M, qpv, xs, qc);
    qnum(M, C->mq, mcq);
    qconj(M, mcq, mcc);
    qmul(M, qc, mcc, ec);
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

/* a body no tree joint reaches: absolute coordinates, as body.c writes them */
static int root_coords(mech *M, int bi)
{
    body *B = &M->b[bi];
    static const char *cn3[3] = {"x", "y", "z"};
    int dim = M->planar ? 2 : 3, rc = 0;
    yaml_node_t *pn = mech_get(M, B->val, "position"), *vn = mech_get(M, B->val, "velocity"),
                *wn = mech_get(M, B->val, "angular_velocity");
    const yaml_node_t *at = pn ? pn : B->key;
    const char *v0[3] = {NULL, NULL, NULL};
    if (vn && (rc = mech_vec_of(M, vn, dim, "velocity", v0))) return rc;
    for (int k = 0; k < dim && !rc; k++) {
        const char *c = mech_fmt(M, "%s_%s", B->name, cn3[k]);
        rc = mech_push_at(M, &M->src->coordinates, c, B->p0[k], at);
        if (!rc) rc = mech_add_var(M, B->r[k], c, B->line, B->col);
        if (!rc && vn) rc = mech_push_at(M, &M->src->velocities, c, v0[k], vn);
    }
    if (rc || B->kind == KIND_POINT) return rc;
    if (B->kind == KIND_PLANAR) {
        const char *a0 = "0";
        yaml_node_t *an = mech_get(M, B->val, "angle");
        if (an && (rc = mech_text_of(M, an, "angle", &a0))) return rc;
        const char *c = mech_fmt(M, "%s_th", B->name);
        rc = mech_push_at(M, &M->src->coordinates, c, a0, an ? an : B->key);
        if (!rc) rc = mech_add_var(M, B->th, c, B->line, B->col);
        if (!rc && wn) {
            const char *w0;
            rc = mech_text_of(M, wn, "angular_velocity", &w0);
            if (!rc) rc = mech_push_at(M, &M->src->velocities, c, w0, wn);
        }
        return rc;
    }
    const char *e[4];
    for (int k = 0; k < 4 && !rc; k++) {
        e[k] = mech_fmt(M, "%s_e%d", B->name, k);
        rc = mech_push(M, &M->src->coordinates, e[k], mech_num(M, B->q0[k]), B->line, B->col);
        if (!rc) rc = mech_add_var(M, B->e[k], e[k], B->line, B->col);
    }
    if (!rc)
        rc = mech_push(M, &M->src->constraints, mech_fmt(M, "body %s (Euler parameter normalization)", B->name),
                       mech_fmt(M, "%s^2 + %s^2 + %s^2 + %s^2 - 1", e[0], e[1], e[2], e[3]), B->line, B->col);
    /* global angular velocity w = 2 E(e) der(e) (body.c leaves it to the tree in relative coordinates) */
    for (int k = 0; k < 3 && !rc; k++) {
        static const int idx[3][4] = {{1, 0, 3, 2}, {2, 3, 0, 1}, {3, 2, 1, 0}};
        static const char sg[3][4] = {{'-', '+', '-', '+'}, {'-', '+', '+', '-'}, {'-', '-', '+', '+'}};
        rc = mech_add_var(M, B->w[k],
                          mech_fmt(M, "2*(%c%s*der(%s) %c %s*der(%s) %c %s*der(%s) %c %s*der(%s))", sg[k][0],
                                   e[idx[k][0]], e[0], sg[k][1], e[idx[k][1]], e[1], sg[k][2], e[idx[k][2]], e[2],
                                   sg[k][3], e[idx[k][3]], e[3]),
                          B->line, B->col);
    }
    if (!rc && wn) {
        const char *w0[3];
        const double *q = B->q0;
        rc = mech_vec_of(M, wn, 3, "angular_velocity", w0);
        double E[3][4] = {{-q[1], q[0], -q[3], q[2]}, {-q[2], q[3], q[0], -q[1]}, {-q[3], -q[2], q[1], q[0]}};
        for (int k = 0; k < 4 && !rc; k++)
            rc = mech_push_at(M, &M->src->velocities, e[k],
                              mech_fmt(M, "0.5*(%s*(%s) + %s*(%s) + %s*(%s))", mech_num(M, E[0][k]), w0[0],
                                       mech_num(M, E[1][k]), w0[1], mech_num(M, E[2][k]), w0[2]),
                              wn);
    }
    return rc;
}

/* Body b joins the tree's structured term (model/rtree.h) when it is a rigid spatial body whose
 * tree joint is revolute, prismatic or fixed and whose parent is the ground or in the term (parents
 * are marked first): its inertia and weight then leave the text rows (tree_motion, local_loads). */
static void mark_rt(mech *M, int b)
{
    body *B = &M->b[b];
    int jc = M->torder[M->nb + b];
    B->rt = 0;
    if (M->planar || M->tree_symbolic || jc < 0 || B->kind != KIND_SPATIAL || B->flex || B->qf3) return;
    joint *J = &M->jt[jc];
    int kind = kind_of(M, J);
    if (kind != JK_REV && kind != JK_PRI && kind != JK_FIX) return;
    int p = M->mk[J->child_i ? J->j : J->i].body;
    B->rt = M->b[p].kind == KIND_GROUND || M->b[p].rt;
}

int mech_rel_tree(mech *M)
{
    int nb = M->nb, nj = M->nj, rc = 0;
    int *jb = mbl_calloc((size_t)(2 * nj + 1), sizeof *jb), *cand = mbl_calloc((size_t)nj + 1, sizeof *cand),
        *par = mbl_calloc((size_t)nb, sizeof *par), *cut = mbl_calloc((size_t)nj + 1, sizeof *cut),
        *ci = mbl_calloc((size_t)nb, sizeof *ci);
    M->torder = mbl_calloc(2 * (size_t)nb, sizeof *M->torder);
    if (!jb || !cand || !par || !cut || !ci || !M->torder) rc = mech_oom(M);
    /* candidates: joints with coordinates between two bodies that are not point masses; couplers
     * are no joints of the graph (their "markers" are -1): give them a self-loop-free dummy */
    int ng = 0, *gmap = mbl_calloc((size_t)nj + 1, sizeof *gmap);
    if (!rc && !gmap) rc = mech_oom(M);
    for (int k = 0; k < nj && !rc; k++) {
        joint *J = &M->jt[k];
        if (J->i < 0) continue; /* coupler */
        int bi = M->mk[J->i].body, bj = M->mk[J->j].body;
        jb[2 * ng] = bi, jb[2 * ng + 1] = bj;
        yaml_node_t *cn = mech_get(M, J->val, "cut");
        int named_cut = 0;
        if (cn) {
            if (!mech_is_scalar(cn) || (strcmp(mech_sc(cn), "true") && strcmp(mech_sc(cn), "false")))
                rc = err_at(M, cn, "joint '%s': cut must be true or false", J->name);
            named_cut = !strcmp(mech_sc(cn), "true");
        }
        int kind = kind_of(M, J);
        cand[ng] = !named_cut && (kind != JK_NONE) && M->b[bi].kind != KIND_POINT && M->b[bj].kind != KIND_POINT;
        gmap[ng++] = k;
    }
    if (!rc && mbl_tree_span(nb, ng, jb, cand, par, M->torder + nb, ci, M->torder, cut) < 0)
        rc = mbl_error(M->st, MBL_EMODEL, "%s: the spanning tree could not be built", M->file);
    /* torder[nb + b]: the graph index of b's tree joint -> the joint index */
    for (int b = 0; b < nb && !rc; b++) {
        int g = M->torder[nb + b];
        M->torder[nb + b] = g >= 0 ? gmap[g] : -1;
        if (g >= 0) {
            joint *J = &M->jt[gmap[g]];
            J->tree = 1;
            J->child_i = ci[b];
        }
    }
    /* coordinates in the joints' order, then the roots' */
    for (int k = 0; k < nj && !rc; k++)
        if (M->jt[k].tree) rc = coords_of_joint(M, k);
    for (int h = 1; h < nb && !rc; h++) {
        int b = M->torder[h];
        if (M->torder[nb + b] < 0) rc = root_coords(M, b);
    }
    for (int h = 1; h < nb && !rc; h++) mark_rt(M, M->torder[h]);
    for (int h = 1; h < nb && !rc; h++) {
        int b = M->torder[h];
        if (M->torder[nb + b] >= 0) rc = tree_kinematics(M, M->torder[nb + b]);
    }
    mbl_free(jb);
    mbl_free(cand);
    mbl_free(par);
    mbl_free(cut);
    mbl_free(ci);
    mbl_free(gmap);
    if (!rc && M->oom) rc = mech_oom(M);
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

/* ---- generalized forces ---- */

static const char *dotv(mech *M, char *const a[3], const char *const b[3])
{
    const char *t[3] = {mul(M, a[0], b[0]), mul(M, a[1], b[1]), mul(M, a[2], b[2])};
    static const int s[3] = {1, 1, 1};
    return sum(M, 3, t, s);
}

static const char *dot3t(mech *M, const char *const a[3], const char *const b[3])
{
    static const int s3[3] = {1, 1, 1};
    const char *t[3] = {mul(M, a[0], b[0]), mul(M, a[1], b[1]), mul(M, a[2], b[2])};
    return sum(M, 3, t, s3);
}

static int parent_of(mech *M, int b)
{
    int j = M->torder[M->nb + b];
    if (j < 0) return -1;
    joint *J = &M->jt[j];
    return M->mk[J->child_i ? J->j : J->i].body;
}

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
        any = M->torder[nb + c] >= 0 && parent_of(M, c) == b && M->b[c].kind == KIND_SPATIAL && hasl[c];
    }
    hasl[b] = (char)any;
    if (!any) return 0;
    const char *A[9], *Fg[3], *Ng[3], *W[3], *AtF[3], *AtN[3], *AtW[3], *cm[3], *cW[3];
    for (int k = 0; k < 9; k++) A[k] = B->A[k];
    for (int k = 0; k < 3; k++) {
        W[k] = M->grav[k] && !B->rt ? mul(M, B->mass, M->grav[k]) : NULL;
        Fg[k] = B->F[k];
        Ng[k] = B->N[k];
        cm[k] = is0(B->cm[k]) ? NULL : B->cm[k];
    }
    mat3(M, A, Fg, 1, AtF);
    mat3(M, A, Ng, 1, AtN);
    mat3(M, A, W, 1, AtW);
    cross3(M, cm, AtW, cW);
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
        if (M->torder[nb + c] < 0 || parent_of(M, c) != b || M->b[c].kind != KIND_SPATIAL || !hasl[c]) continue;
        const char *R[9], *fc[3], *nc[3], *rho[3], *g[3], *gn[3], *rg[3];
        body *C = &M->b[c];
        for (int i = 0; i < 3; i++) {
            for (int j = 0; j < 3; j++) R[3 * i + j] = mech_fmt(M, "_Rpc_%s_%d%d", C->name, i + 1, j + 1);
            fc[i] = mech_fmt(M, "_fsl_%s_%d", C->name, i + 1);
            nc[i] = mech_fmt(M, "_nsl_%s_%d", C->name, i + 1);
            rho[i] = mech_fmt(M, "_rho_%s_%d", C->name, i + 1);
        }
        mat3(M, R, fc, 0, g);
        mat3(M, R, nc, 0, gn);
        cross3(M, rho, g, rg);
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
    int p = parent_of(M, b);
    if (p >= 0 && M->b[p].kind != KIND_GROUND && M->torder[nb + p] < 0) { /* a floating root's child */
        const char *gf[3], *gm[3];
        mat3(M, A, fs, 0, gf);
        mat3(M, A, ns, 0, gm);
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
    qrot_n(P->mq, Rmp);
    qrot_n(C->mq, Rmc);
    for (int i = 0; i < 3; i++) {
        F[i] = mech_fmt(M, "_fsl_%s_%d", B->name, i + 1);
        N[i] = mech_fmt(M, "_nsl_%s_%d", B->name, i + 1);
        for (int j = 0; j < 3; j++) R[3 * i + j] = mech_fmt(M, "_Rpc_%s_%d%d", B->name, i + 1, j + 1);
        sc[i] = is0(C->s[i]) ? NULL : C->s[i];
    }
    if (kind == JK_PLN && !J->child_i) { /* marker i is the parent's: Rpc^T (s_p - rho) */
        const char *d[3];
        for (int k = 0; k < 3; k++) {
            const char *t[2] = {is0(P->s[k]) ? NULL : P->s[k], mech_fmt(M, "_rho_%s_%d", B->name, k + 1)};
            static const int sg2[2] = {1, -1};
            d[k] = sumz(M, 2, t, sg2);
        }
        mat3(M, R, d, 1, pi);
    } else { /* the child's marker (revolute, universal, spherical: the same point; cylindrical: on the axis) */
        for (int k = 0; k < 3; k++) pi[k] = sc[k];
    }
    cross3(M, pi, F, pM);
    for (int k = 0; k < 3; k++) {
        const char *t[2] = {N[k], pM[k]};
        static const int sg2[2] = {1, -1};
        Mo[k] = sum(M, 2, t, sg2);
    }
    /* the markers' axes in b's axes: the child's constant, the parent's Rpc^T Rm_p */
    const char *axc[3][3], *axp[3][3];
    for (int a = 0; a < 3; a++) {
        const char *col[3];
        for (int k = 0; k < 3; k++) {
            axc[a][k] = fabs(Rmc[3 * k + a]) < 1e-15 ? NULL : numt(M, Rmc[3 * k + a]);
            col[k] = fabs(Rmp[3 * k + a]) < 1e-15 ? NULL : numt(M, Rmp[3 * k + a]);
        }
        mat3(M, R, col, 1, axp[a]);
    }
    const char *(*axi)[3] = J->child_i ? axc : axp, *(*axj)[3] = J->child_i ? axp : axc;
    const char *Q[4] = {NULL, NULL, NULL, NULL};
    switch (kind) {
    case JK_REV: Q[0] = dot3t(M, axj[2], Mo); break;
    case JK_PRI: Q[0] = dot3t(M, axj[2], F); break;
    case JK_CYL: Q[0] = dot3t(M, axj[2], Mo), Q[1] = dot3t(M, axj[2], F); break;
    case JK_UNI: Q[0] = dot3t(M, axj[2], Mo), Q[1] = dot3t(M, axi[2], Mo); break;
    case JK_PLN: Q[0] = dot3t(M, axj[0], F), Q[1] = dot3t(M, axj[1], F), Q[2] = dot3t(M, axj[2], Mo); break;
    case JK_SPH: {
        const char *m[3] = {dot3t(M, axj[0], Mo), dot3t(M, axj[1], Mo), dot3t(M, axj[2], Mo)};
        const char *const *e = J->q;
        Q[0] = mech_fmt(M, "2*(-%s*(%s) - %s*(%s) - %s*(%s))", e[1], m[0], e[2], m[1], e[3], m[2]);
        Q[1] = mech_fmt(M, "2*(%s*(%s) + %s*(%s) - %s*(%s))", e[0], m[0], e[3], m[1], e[2], m[2]);
        Q[2] = mech_fmt(M, "2*(-%s*(%s) + %s*(%s) + %s*(%s))", e[3], m[0], e[0], m[1], e[1], m[2]);
        Q[3] = mech_fmt(M, "2*(%s*(%s) - %s*(%s) + %s*(%s))", e[2], m[0], e[1], m[1], e[0], m[2]);
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
    if (!M->torder || !M->b[b].rt || M->torder[M->nb + b] < 0) return 0;
    joint *J = &M->jt[M->torder[M->nb + b]];
    int kind = kind_of(M, J), p = parent_of(M, b);
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
        for (int k = 0; k < 3; k++) {
            int a = (k + 1) % 3, c = (k + 2) % 3;
            ud[k] = mech_fmt(M, "(%s*%s - %s*%s)", u[a], d[c], u[c], d[a]);
        }
        const char *tu = local ? mech_fmt(M, "%s(%s)", sg, tc[2])
                               : mech_fmt(M, "(%s)*%s + (%s)*%s + (%s)*%s", tq[0], u[0], tq[1], u[1], tq[2], u[2]);
        int nof = local && is0(fc[0]) && is0(fc[1]) && is0(fc[2]);
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
        int kind = kind_of(M, J), p = parent_of(M, b);
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
        for (int k = 0; k < 3; k++) {
            tx[MBL_RTREE_U + k] = J->child_i ? Mj->ax[2][k] : mech_fmt(M, "-(%s)", Mj->ax[2][k]);
            tx[MBL_RTREE_P + k] = P->p[k];
            tx[MBL_RTREE_R + k] = B->r[k];
            tx[MBL_RTREE_CM + k] = B->cm[k];
        }
        for (int k = 0; k < 9; k++) tx[MBL_RTREE_A + k] = B->A[k];
        tx[MBL_RTREE_M] = B->mass;
        for (int k = 0; k < 6; k++) tx[MBL_RTREE_I + k] = B->I[k];
        for (int k = 0; k < MBL_RTREE_NT; k++) oom |= !(R->t[k] = mech_dup_s(tx[k] ? tx[k] : "0"));
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
            char **e = B->e;
            const char *Q[4] = {mech_fmt(M, "2*(-%s*%s - %s*%s - %s*%s)", e[1], N[0], e[2], N[1], e[3], N[2]),
                                mech_fmt(M, "2*(%s*%s + %s*%s - %s*%s)", e[0], N[0], e[3], N[1], e[2], N[2]),
                                mech_fmt(M, "2*(-%s*%s + %s*%s + %s*%s)", e[3], N[0], e[0], N[1], e[1], N[2]),
                                mech_fmt(M, "2*(%s*%s - %s*%s + %s*%s)", e[2], N[0], e[1], N[1], e[0], N[2])};
            for (int k = 0; k < 4 && !rc; k++)
                rc = mech_push(M, &M->src->forces, mech_fmt(M, "%s_e%d", B->name, k), Q[k], B->line, B->col);
            continue;
        }
        joint *J = &M->jt[jc];
        int kind = kind_of(M, J);
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
            else if (kind == JK_PRI) Q[0] = dotv(M, Mj->ax[0], F);
        } else {
            switch (kind) {
            case JK_REV: Q[0] = dotv(M, Mj->ax[2], Mo); break;
            case JK_PRI: Q[0] = dotv(M, Mj->ax[2], F); break;
            case JK_CYL: Q[0] = dotv(M, Mj->ax[2], Mo), Q[1] = dotv(M, Mj->ax[2], F); break;
            case JK_UNI: Q[0] = dotv(M, Mj->ax[2], Mo), Q[1] = dotv(M, Mi->ax[2], Mo); break;
            case JK_PLN:
                Q[0] = dotv(M, Mj->ax[0], F), Q[1] = dotv(M, Mj->ax[1], F), Q[2] = dotv(M, Mj->ax[2], Mo);
                break;
            case JK_SPH: {
                const char *m[3] = {dotv(M, Mj->ax[0], Mo), dotv(M, Mj->ax[1], Mo), dotv(M, Mj->ax[2], Mo)};
                const char *const *e = J->q;
                Q[0] = mech_fmt(M, "2*(-%s*(%s) - %s*(%s) - %s*(%s))", e[1], m[0], e[2], m[1], e[3], m[2]);
                Q[1] = mech_fmt(M, "2*(%s*(%s) + %s*(%s) - %s*(%s))", e[0], m[0], e[3], m[1], e[2], m[2]);
                Q[2] = mech_fmt(M, "2*(-%s*(%s) + %s*(%s) + %s*(%s))", e[3], m[0], e[0], m[1], e[1], m[2]);
                Q[3] = mech_fmt(M, "2*(%s*(%s) - %s*(%s) + %s*(%s))", e[2], m[0], e[1], m[1], e[0], m[2]);
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

/* ---- JQ(joint, k) ---- */

const char *mech_joint_coord_k(mech *M, int ji, int k, char *why, size_t whylen)
{
    joint *J = &M->jt[ji];
    int kind = kind_of(M, J);
    int nk = kind == JK_SPH ? 3 : ncoord(M, kind);
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
        char *zx[3];
        for (int a = 0; a < 3; a++) {
            int a1 = (a + 1) % 3, a2 = (a + 2) % 3;
            zx[a] = mech_fmt(M, "(%s*%s - %s*%s)", K->ax[2][a1], I->ax[2][a2], K->ax[2][a2], I->ax[2][a1]);
        }
        return mech_fmt(M, "atan2(%s, -%s)", mech_dot3(M, I->ax[0], zx), mech_dot3(M, I->ax[0], K->ax[2]));
    }
    case JK_SPH: {
        /* r = conj(q_j) (x) q_i, sign fixed so that r0 > 0 in the file's configuration */
        const char *qi[4], *qj[4], *cj[4], *r[4];
        marker_q(M, J->i, qi);
        marker_q(M, J->j, qj);
        qconj(M, qj, cj);
        qmul(M, cj, qi, r);
        const double *bi = M->b[I->body].q0, *bj = M->b[K->body].q0;
        double ni[4], nj[4], rn[4];
        qmul_n(bi, I->mq, ni);
        qmul_n(bj, K->mq, nj);
        nj[1] = -nj[1], nj[2] = -nj[2], nj[3] = -nj[3];
        qmul_n(nj, ni, rn);
        double s = rn[0] < 0 ? -1 : 1;
        return mech_fmt(M, "(2*atan2(%s*(%s), %s*(%s)))", mech_num(M, s), r[k], mech_num(M, s), r[0]);
    }
    default: break;
    }
    snprintf(why, whylen, "joint '%s' (%s) has no joint coordinate %d", J->name, J->type, k);
    return NULL;
}

/* ---- reactions of tree joints ---- */

static int parent_body(mech *M, int b)
{
    int j = M->torder[M->nb + b];
    if (j < 0) return -1;
    joint *J = &M->jt[j];
    return M->mk[J->child_i ? J->j : J->i].body;
}

static int in_subtree(mech *M, int b, int c)
{
    for (; b >= 0; b = parent_body(M, b))
        if (b == c) return 1;
    return 0;
}

/* a x b (texts; NULL entries are zero) added to acc with the sign */
static void add_cross(mech *M, const char *acc[3], const char *const a[3], const char *const b[3], int sign)
{
    for (int k = 0; k < 3; k++) {
        int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
        const char *t1 = mul(M, a[k1], b[k2]), *t2 = mul(M, a[k2], b[k1]);
        if (!t1 && !t2) continue;
        const char *t = mech_fmt(M, "(%s - %s)", t1 ? t1 : "0", t2 ? t2 : "0");
        acc[k] = acc[k] ? mech_fmt(M, "%s %c %s", acc[k], sign > 0 ? '+' : '-', t) : (sign > 0 ? t : mech_fmt(M, "-%s", t));
    }
}

static void add_vec(mech *M, const char *acc[3], const char *const a[3], int sign)
{
    for (int k = 0; k < 3; k++) {
        if (is0(a[k])) continue;
        acc[k] = acc[k] ? mech_fmt(M, "%s %c (%s)", acc[k], sign > 0 ? '+' : '-', a[k])
                        : (sign > 0 ? mech_fmt(M, "(%s)", a[k]) : mech_fmt(M, "-(%s)", a[k]));
    }
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
        add_vec(M, F, ma, 1);
        add_cross(M, T, rel, ma, 1);
        /* dH/dt */
        if (M->planar) {
            const char *h[3] = {"0", "0", mech_fmt(M, "(%s)*der(%s)", B->I[2], B->w[2])};
            add_vec(M, T, h, 1);
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
                const char *t1[3] = {mul(M, Jm[k][0], wb[0]), mul(M, Jm[k][1], wb[1]), mul(M, Jm[k][2], wb[2])};
                const char *t2[3] = {mul(M, Jm[k][0], ab[0]), mul(M, Jm[k][1], ab[1]), mul(M, Jm[k][2], ab[2])};
                static const int s3[3] = {1, 1, 1};
                jw[k] = sum(M, 3, t1, s3);
                ja[k] = sum(M, 3, t2, s3);
            }
            for (int k = 0; k < 3; k++) { /* back to global */
                gw[k] = mech_fmt(M, "(%s*(%s) + %s*(%s) + %s*(%s))", B->A[3 * k], jw[0], B->A[3 * k + 1], jw[1],
                                 B->A[3 * k + 2], jw[2]);
                ga[k] = mech_fmt(M, "(%s*(%s) + %s*(%s) + %s*(%s))", B->A[3 * k], ja[0], B->A[3 * k + 1], ja[1],
                                 B->A[3 * k + 2], ja[2]);
            }
            add_vec(M, T, ga, 1);
            const char *w[3] = {B->w[0], B->w[1], B->w[2]};
            add_cross(M, T, w, gw, 1);
        }
        /* applied forces and moments (F at the origin, N about it), with those given to joints directly */
        const char *Fb[3] = {B->F[0], B->F[1], B->F[2]}, *Nb[3] = {B->N[0], B->N[1], B->N[2]};
        for (int k = 0; k < 3; k++) {
            if (B->Fd[k]) Fb[k] = Fb[k] ? mech_fmt(M, "%s + %s", Fb[k], B->Fd[k]) : B->Fd[k];
            if (B->Nd[k]) Nb[k] = Nb[k] ? mech_fmt(M, "%s + %s", Nb[k], B->Nd[k]) : B->Nd[k];
        }
        add_vec(M, F, Fb, -1);
        add_vec(M, T, Nb, -1);
        const char *ro[3];
        for (int k = 0; k < 3; k++) ro[k] = mech_fmt(M, "(%s - %s)", B->r[k], Mi->p[k]);
        add_cross(M, T, ro, Fb, -1);
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
        add_vec(M, F, fk, sg);
        add_vec(M, T, tk, sg);
        add_cross(M, T, arm, fk, sg);
    }
    /* on the child; on marker i's body: the same when the child carries i, else the opposite */
    const char *const *v = torque ? T : F;
    const char *t[3] = {mul(M, v[0] ? v[0] : "0", e[0]), mul(M, v[1] ? v[1] : "0", e[1]), mul(M, v[2] ? v[2] : "0", e[2])};
    static const int s3[3] = {1, 1, 1};
    (void)comp;
    const char *r = sum(M, 3, t, s3);
    return J->child_i ? mech_fmt(M, "(%s)", r) : mech_fmt(M, "(-(%s))", r);
}
