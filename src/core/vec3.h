/* 3-D vectors, 3x3 rotation matrices and quaternions on doubles: the one copy of this algebra
 * (the mechanism compiler writes the same operations as expression texts in src/mech/vec3_text.c).
 * Matrices are column-major (R[i + 3 j] = row i, column j) unless a name says _rm (row-major).
 * Quaternions (Euler parameters) are (w, x, y, z). Every function keeps the order of the
 * floating-point operations written in its body, so that results are the same bytes wherever it
 * is used; outputs may alias inputs. */
#ifndef MBLIN_CORE_VEC3_H
#define MBLIN_CORE_VEC3_H

#include <math.h>

/* a . b */
static inline double vec3_dot(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* o = a x b */
static inline void vec3_cross(const double a[3], const double b[3], double o[3])
{
    double t0 = a[1] * b[2] - a[2] * b[1], t1 = a[2] * b[0] - a[0] * b[2], t2 = a[0] * b[1] - a[1] * b[0];
    o[0] = t0;
    o[1] = t1;
    o[2] = t2;
}

/* Normalize v in place without overflow or underflow (scaled by its largest component first, so
 * [0, 0, 1e200] and [1e-200, 0, 0] are fine); returns 0 when v is zero or not finite. */
static inline int vec3_unit(double v[3])
{
    double s = fmax(fabs(v[0]), fmax(fabs(v[1]), fabs(v[2])));
    if (!(s > 0) || !isfinite(s)) return 0;
    double w[3] = {v[0] / s, v[1] / s, v[2] / s};
    double n = sqrt(vec3_dot(w, w));
    for (int i = 0; i < 3; i++) v[i] = w[i] / n;
    return 1;
}

/* o = a - b */
static inline void vec3_sub(const double a[3], const double b[3], double o[3])
{
    for (int i = 0; i < 3; i++) o[i] = a[i] - b[i];
}

/* o = R v */
static inline void mat3_vec(const double R[9], const double v[3], double o[3])
{
    double t[3];
    for (int i = 0; i < 3; i++) t[i] = R[i] * v[0] + R[3 + i] * v[1] + R[6 + i] * v[2];
    for (int i = 0; i < 3; i++) o[i] = t[i];
}

/* o = p + R v, summed left to right (p first) */
static inline void mat3_vec_add(const double p[3], const double R[9], const double v[3], double o[3])
{
    double t[3];
    for (int i = 0; i < 3; i++) t[i] = p[i] + R[i] * v[0] + R[3 + i] * v[1] + R[6 + i] * v[2];
    for (int i = 0; i < 3; i++) o[i] = t[i];
}

/* o = R^T v */
static inline void mat3_tvec(const double R[9], const double v[3], double o[3])
{
    double t[3];
    for (int a = 0; a < 3; a++) t[a] = R[3 * a] * v[0] + R[3 * a + 1] * v[1] + R[3 * a + 2] * v[2];
    for (int a = 0; a < 3; a++) o[a] = t[a];
}

/* C = A B */
static inline void mat3_mul(const double A[9], const double B[9], double C[9])
{
    double t[9];
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 3; i++) t[i + 3 * j] = A[i] * B[3 * j] + A[3 + i] * B[3 * j + 1] + A[6 + i] * B[3 * j + 2];
    for (int k = 0; k < 9; k++) C[k] = t[k];
}

/* C = A^T B */
static inline void mat3_tmul(const double A[9], const double B[9], double C[9])
{
    double t[9];
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            t[a + 3 * b] = A[3 * a] * B[3 * b] + A[3 * a + 1] * B[3 * b + 1] + A[3 * a + 2] * B[3 * b + 2];
    for (int k = 0; k < 9; k++) C[k] = t[k];
}

/* C = A B^T */
static inline void mat3_mult(const double A[9], const double B[9], double C[9])
{
    double t[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) t[i + 3 * j] = A[i] * B[j] + A[3 + i] * B[3 + j] + A[6 + i] * B[6 + j];
    for (int k = 0; k < 9; k++) C[k] = t[k];
}

/* C = R S R^T (a tensor S turned by R), as (R S) then (R S) R^T with the sums in index order */
static inline void mat3_rot_tensor(const double R[9], const double S[9], double C[9])
{
    double t[9], o[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            t[i + 3 * j] = 0;
            for (int k = 0; k < 3; k++) t[i + 3 * j] += R[i + 3 * k] * S[k + 3 * j];
        }
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            o[i + 3 * j] = 0;
            for (int k = 0; k < 3; k++) o[i + 3 * j] += t[i + 3 * k] * R[j + 3 * k];
        }
    for (int k = 0; k < 9; k++) C[k] = o[k];
}

/* the rotation about the unit axis a by the angle t */
static inline void mat3_axis_angle(const double a[3], double t, double R[9])
{
    double c = cos(t), s = sin(t), v = 1 - c;
    double M[3][3] = {{c + a[0] * a[0] * v, a[0] * a[1] * v - a[2] * s, a[0] * a[2] * v + a[1] * s},
                      {a[1] * a[0] * v + a[2] * s, c + a[1] * a[1] * v, a[1] * a[2] * v - a[0] * s},
                      {a[2] * a[0] * v - a[1] * s, a[2] * a[1] * v + a[0] * s, c + a[2] * a[2] * v}};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) R[i + 3 * j] = M[i][j];
}

/* o = a (x) b, the Hamilton product */
static inline void quat_mul(const double a[4], const double b[4], double o[4])
{
    double r[4] = {a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
                   a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
                   a[0] * b[2] + a[2] * b[0] + a[3] * b[1] - a[1] * b[3],
                   a[0] * b[3] + a[3] * b[0] + a[1] * b[2] - a[2] * b[1]};
    for (int k = 0; k < 4; k++) o[k] = r[k];
}

/* the rotation matrix, row-major, of unit Euler parameters q */
static inline void quat_rot_rm(const double q[4], double R[9])
{
    double w = q[0], x = q[1], y = q[2], z = q[3];
    double r[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z),     2 * (x * z + w * y),
                   2 * (x * y + w * z),     1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                   2 * (x * z - w * y),     2 * (y * z + w * x),     1 - 2 * (x * x + y * y)};
    for (int k = 0; k < 9; k++) R[k] = r[k];
}

/* E(e) of Euler parameters e (3 x 4): the angular velocity w = 2 E(e) der(e), der(e) = 1/2 E(e)^T w */
static inline void quat_E(const double e[4], double E[3][4])
{
    double t[3][4] = {{-e[1], e[0], -e[3], e[2]}, {-e[2], e[3], e[0], -e[1]}, {-e[3], -e[2], e[1], e[0]}};
    for (int a = 0; a < 3; a++)
        for (int k = 0; k < 4; k++) E[a][k] = t[a][k];
}

/* the rotation Rz(y) Ry(p) Rx(r) of fixed-axis roll, pitch, yaw rpy = (r, p, y) */
static inline void mat3_rpy(const double rpy[3], double R[9])
{
    double cr = cos(rpy[0]), sr = sin(rpy[0]), cp = cos(rpy[1]), sp = sin(rpy[1]), cy = cos(rpy[2]),
           sy = sin(rpy[2]);
    double M[3][3] = {{cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr},
                      {sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr},
                      {-sp, cp * sr, cp * cr}};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) R[i + 3 * j] = M[i][j];
}

/* a frame whose z axis is the unit vector a (x: the coordinate axis least aligned with a, made
 * perpendicular) */
static inline void mat3_zframe(const double a[3], double R[9])
{
    int k = 0;
    for (int i = 1; i < 3; i++)
        if (fabs(a[i]) < fabs(a[k])) k = i;
    double x[3] = {0, 0, 0};
    x[k] = 1;
    double d = vec3_dot(x, a);
    for (int i = 0; i < 3; i++) x[i] -= d * a[i];
    double n = sqrt(vec3_dot(x, x));
    for (int i = 0; i < 3; i++) x[i] /= n;
    double y[3];
    vec3_cross(a, x, y);
    for (int i = 0; i < 3; i++) {
        R[i] = x[i];
        R[3 + i] = y[i];
        R[6 + i] = a[i];
    }
}

/* ---- rigid transforms: R column-major (9) then p (3) ---- */

static inline void rigid_ident(double T[12])
{
    for (int k = 0; k < 12; k++) T[k] = 0;
    T[0] = T[4] = T[8] = 1;
}

/* C = A B */
static inline void rigid_mul(const double A[12], const double B[12], double C[12])
{
    double t[12];
    mat3_mul(A, B, t);
    mat3_vec_add(A + 9, A, B + 9, t + 9);
    for (int k = 0; k < 12; k++) C[k] = t[k];
}

#endif
