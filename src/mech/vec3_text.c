/* 3-D vectors, rotation matrices and quaternions as expression texts: the one text algebra of the
 * mechanism compiler (the numbers are src/core/vec3.h). "0" and "1" are folded so that the texts
 * stay short; NULL stands for zero where a function says so. The texts go on to parsing and
 * differentiation: a change of one byte (spacing, order of terms) changes the outputs. */
#include <math.h>
#include <string.h>

#include "core/vec3.h"
#include "mech/mech_internal.h"

/* ---- small text algebra: "0" and "1" are folded so that the texts stay short ---- */

int mech_tx_is0(const char *a) { return !a || !strcmp(a, "0"); }
static int is1(const char *a) { return !strcmp(a, "1"); }

const char *mech_tx_num(mech *M, double x)
{
    if (fabs(x) < 1e-15) return "0";
    if (x == 1) return "1";
    if (x == -1) return "-1";
    return mech_num(M, x);
}

/* a*b (NULL when zero) */
const char *mech_tx_mul(mech *M, const char *a, const char *b)
{
    if (mech_tx_is0(a) || mech_tx_is0(b)) return NULL;
    if (is1(a)) return b;
    if (is1(b)) return a;
    return mech_fmt(M, "(%s)*(%s)", a, b);
}

/* sum of signed terms (NULL terms skipped): "0" when empty */
const char *mech_tx_sum(mech *M, int n, const char *const *t, const int *sg)
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
void mech_tx_qmul(mech *M, const char *const a[4], const char *const b[4], const char *o[4])
{
    const char *t[4];
    int s[4];
    t[0] = mech_tx_mul(M, a[0], b[0]), t[1] = mech_tx_mul(M, a[1], b[1]), t[2] = mech_tx_mul(M, a[2], b[2]),
    t[3] = mech_tx_mul(M, a[3], b[3]);
    s[0] = 1, s[1] = s[2] = s[3] = -1;
    const char *r0 = mech_tx_sum(M, 4, t, s);
    t[0] = mech_tx_mul(M, a[0], b[1]), t[1] = mech_tx_mul(M, a[1], b[0]), t[2] = mech_tx_mul(M, a[2], b[3]),
    t[3] = mech_tx_mul(M, a[3], b[2]);
    s[0] = s[1] = s[2] = 1, s[3] = -1;
    const char *r1 = mech_tx_sum(M, 4, t, s);
    t[0] = mech_tx_mul(M, a[0], b[2]), t[1] = mech_tx_mul(M, a[2], b[0]), t[2] = mech_tx_mul(M, a[3], b[1]),
    t[3] = mech_tx_mul(M, a[1], b[3]);
    const char *r2 = mech_tx_sum(M, 4, t, s);
    t[0] = mech_tx_mul(M, a[0], b[3]), t[1] = mech_tx_mul(M, a[3], b[0]), t[2] = mech_tx_mul(M, a[1], b[2]),
    t[3] = mech_tx_mul(M, a[2], b[1]);
    const char *r3 = mech_tx_sum(M, 4, t, s);
    o[0] = r0, o[1] = r1, o[2] = r2, o[3] = r3;
}

void mech_tx_qnum(mech *M, const double q[4], const char *o[4])
{
    for (int k = 0; k < 4; k++) o[k] = mech_tx_num(M, q[k]);
}

void mech_tx_qconj(mech *M, const char *const a[4], const char *o[4])
{
    o[0] = a[0];
    for (int k = 1; k < 4; k++) o[k] = mech_tx_is0(a[k]) ? "0" : mech_fmt(M, "(-(%s))", a[k]);
}

/* the rotation about z by the angle text q */
void mech_tx_qz(mech *M, const char *q, const char *o[4])
{
    o[0] = mech_fmt(M, "cos(0.5*(%s))", q);
    o[1] = o[2] = "0";
    o[3] = mech_fmt(M, "sin(0.5*(%s))", q);
}

/* ---- vectors and matrices with NULL for zero ---- */

/* texts with NULL for zero */
const char *mech_tx_sumz(mech *M, int n, const char *const *t, const int *sg)
{
    const char *s = mech_tx_sum(M, n, t, sg);
    return mech_tx_is0(s) ? NULL : s;
}

void mech_tx_cross(mech *M, const char *const a[3], const char *const b[3], const char *o[3])
{
    static const int s2[2] = {1, -1};
    for (int k = 0; k < 3; k++) {
        int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
        const char *t[2] = {mech_tx_mul(M, a[k1], b[k2]), mech_tx_mul(M, a[k2], b[k1])};
        o[k] = mech_tx_sumz(M, 2, t, s2);
    }
}

/* the rotation matrix (row-major) of Euler parameters given as texts */
void mech_tx_qrot(mech *M, const char *const x[4], const char *R[9])
{
    static const int s2[2] = {1, 1}, sd[2] = {1, -1};
    const char *t[2];
#define QR_SQ(i, a)                                                                                            \
    t[0] = mech_tx_mul(M, x[0], x[0]), t[1] = mech_tx_mul(M, x[a], x[a]),                                      \
    R[i] = mech_fmt(M, "2*(%s) - 1", mech_tx_sum(M, 2, t, s2))
#define QR_OFF(i, a, b, c, sgn)                                                                                \
    t[0] = mech_tx_mul(M, x[a], x[b]), t[1] = mech_tx_mul(M, x[0], x[c]), R[i] = mech_tx_sumz(M, 2, t, sgn),   \
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

/* R v (R row-major texts or numbers) */
void mech_tx_matvec(mech *M, const char *const R[9], const char *const v[3], int transpose, const char *o[3])
{
    static const int s3[3] = {1, 1, 1};
    for (int i = 0; i < 3; i++) {
        const char *t[3];
        for (int j = 0; j < 3; j++) t[j] = mech_tx_mul(M, transpose ? R[3 * j + i] : R[3 * i + j], v[j]);
        o[i] = mech_tx_sumz(M, 3, t, s3);
    }
}

void mech_tx_num_mat(mech *M, const double R[9], const char *o[9])
{
    for (int k = 0; k < 9; k++) o[k] = fabs(R[k]) < 1e-15 ? NULL : mech_tx_num(M, R[k]);
}

const char *mech_tx_dot(mech *M, const char *const a[3], const char *const b[3])
{
    static const int s3[3] = {1, 1, 1};
    const char *t[3] = {mech_tx_mul(M, a[0], b[0]), mech_tx_mul(M, a[1], b[1]), mech_tx_mul(M, a[2], b[2])};
    return mech_tx_sum(M, 3, t, s3);
}

/* a x b (texts; NULL entries are zero) added to acc with the sign */
void mech_tx_add_cross(mech *M, const char *acc[3], const char *const a[3], const char *const b[3], int sign)
{
    for (int k = 0; k < 3; k++) {
        int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
        const char *t1 = mech_tx_mul(M, a[k1], b[k2]), *t2 = mech_tx_mul(M, a[k2], b[k1]);
        if (!t1 && !t2) continue;
        const char *t = mech_fmt(M, "(%s - %s)", t1 ? t1 : "0", t2 ? t2 : "0");
        acc[k] = acc[k] ? mech_fmt(M, "%s %c %s", acc[k], sign > 0 ? '+' : '-', t) : (sign > 0 ? t : mech_fmt(M, "-%s", t));
    }
}

void mech_tx_add_vec(mech *M, const char *acc[3], const char *const a[3], int sign)
{
    for (int k = 0; k < 3; k++) {
        if (mech_tx_is0(a[k])) continue;
        acc[k] = acc[k] ? mech_fmt(M, "%s %c (%s)", acc[k], sign > 0 ? '+' : '-', a[k])
                        : (sign > 0 ? mech_fmt(M, "(%s)", a[k]) : mech_fmt(M, "-(%s)", a[k]));
    }
}

/* a . b as "(a0*b0 + a1*b1 + a2*b2)", the products with a factor "0" left out */
const char *mech_dot3(mech *M, char *const a[3], char *const b[3])
{
    /* the products with a factor "0" left out (z of planar vectors) */
    int z[3], nz = 0;
    for (int k = 0; k < 3; k++) nz += z[k] = !strcmp(a[k], "0") || !strcmp(b[k], "0");
    if (!nz) return mech_fmt(M, "(%s*%s + %s*%s + %s*%s)", a[0], b[0], a[1], b[1], a[2], b[2]);
    sbuf s = {0};
    for (int k = 0; k < 3; k++)
        if (!z[k]) {
            mech_sb_add(M, &s, s.n ? " + " : "(", a[k]);
            mech_sb_add(M, &s, "*", b[k]);
        }
    if (s.n) mech_sb_add(M, &s, ")", "");
    return mech_sb_done(M, &s);
}

/* a x b as "(a1*b2 - a2*b1)" per component */
void mech_tx_cross3(mech *M, char *const a[3], char *const b[3], const char *out[3])
{
    for (int k = 0; k < 3; k++) {
        int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
        out[k] = mech_fmt(M, "(%s*%s - %s*%s)", a[k1], b[k2], a[k2], b[k1]);
    }
}

/* ---- Euler parameters ---- */

/* q = e (x) m, the Hamilton product written out ("(e0*m0 - e1*m1 - ...)") */
void mech_tx_qmul_plain(mech *M, const char *const e[4], const char *const m[4], const char *q[4])
{
    q[0] = mech_fmt(M, "(%s*%s - %s*%s - %s*%s - %s*%s)", e[0], m[0], e[1], m[1], e[2], m[2], e[3], m[3]);
    q[1] = mech_fmt(M, "(%s*%s + %s*%s + %s*%s - %s*%s)", e[0], m[1], e[1], m[0], e[2], m[3], e[3], m[2]);
    q[2] = mech_fmt(M, "(%s*%s + %s*%s + %s*%s - %s*%s)", e[0], m[2], e[2], m[0], e[3], m[1], e[1], m[3]);
    q[3] = mech_fmt(M, "(%s*%s + %s*%s + %s*%s - %s*%s)", e[0], m[3], e[3], m[0], e[1], m[2], e[2], m[1]);
}

/* the body-frame angular velocity w' = 2 G(e) der(e) (d[k]: the text of der(e_k)) */
void mech_tx_body_rate(mech *M, const char *const e[4], const char *const d[4], const char *w[3])
{
    w[0] = mech_fmt(M, "2*(-%s*%s + %s*%s + %s*%s - %s*%s)", e[1], d[0], e[0], d[1], e[3], d[2], e[2], d[3]);
    w[1] = mech_fmt(M, "2*(-%s*%s - %s*%s + %s*%s + %s*%s)", e[2], d[0], e[3], d[1], e[0], d[2], e[1], d[3]);
    w[2] = mech_fmt(M, "2*(-%s*%s + %s*%s - %s*%s + %s*%s)", e[3], d[0], e[2], d[1], e[1], d[2], e[0], d[3]);
}

/* the generalized forces 2 E(e)^T n of a moment n (global) on the Euler parameters e; paren: the
 * components of n in parentheses */
void mech_tx_euler_forces(mech *M, const char *const e[4], const char *const n[3], int paren, const char *Q[4])
{
    if (paren) {
        Q[0] = mech_fmt(M, "2*(-%s*(%s) - %s*(%s) - %s*(%s))", e[1], n[0], e[2], n[1], e[3], n[2]);
        Q[1] = mech_fmt(M, "2*(%s*(%s) + %s*(%s) - %s*(%s))", e[0], n[0], e[3], n[1], e[2], n[2]);
        Q[2] = mech_fmt(M, "2*(-%s*(%s) + %s*(%s) + %s*(%s))", e[3], n[0], e[0], n[1], e[1], n[2]);
        Q[3] = mech_fmt(M, "2*(%s*(%s) - %s*(%s) + %s*(%s))", e[2], n[0], e[1], n[1], e[0], n[2]);
        return;
    }
    Q[0] = mech_fmt(M, "2*(-%s*%s - %s*%s - %s*%s)", e[1], n[0], e[2], n[1], e[3], n[2]);
    Q[1] = mech_fmt(M, "2*(%s*%s + %s*%s - %s*%s)", e[0], n[0], e[3], n[1], e[2], n[2]);
    Q[2] = mech_fmt(M, "2*(-%s*%s + %s*%s + %s*%s)", e[3], n[0], e[0], n[1], e[1], n[2]);
    Q[3] = mech_fmt(M, "2*(%s*%s - %s*%s + %s*%s)", e[2], n[0], e[1], n[1], e[0], n[2]);
}

/* the initial rates der(e) = 1/2 E(q0)^T w0 of Euler parameters q0 (numbers) for the angular
 * velocity w0 (global texts) */
void mech_tx_euler_rates(mech *M, const double q0[4], const char *const w0[3], const char *o[4])
{
    double E[3][4];
    quat_E(q0, E);
    for (int k = 0; k < 4; k++)
        o[k] = mech_fmt(M, "0.5*(%s*(%s) + %s*(%s) + %s*(%s))", mech_num(M, E[0][k]), w0[0], mech_num(M, E[1][k]), w0[1],
                        mech_num(M, E[2][k]), w0[2]);
}
