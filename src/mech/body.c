/* Rigid bodies (planar and spatial, Euler parameters), point masses and their markers: the
 * coordinates, rotation matrices, angular velocities and marker positions and axes as generated
 * variables, the orientation specifications and the inertia checks. See docs/mechanism-reference.md. */
#include "mech/mech_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <lapacke.h>
#undef I /* complex.h (through lapacke.h) defines it; a body's inertia is B->I here */

#include "core/vec3.h"

/* ---- orientation specifications (spatial): R column-major, column a = axis a ------------- */

/* R, and in turn / *turn_kind the orientation as given (body.turn): an axis and an angle (1), none (2),
 * another form (0) */
static int orientation_eval(mech *M, const yaml_node_t *map, const char *what, double R[9], const yaml_node_t **where,
                            double turn[4], int *turn_kind);

/* orientations are numbers of the equations (rotation matrices): the parameters they use are
 * flagged, so no sensitivity claims a derivative by them (mbl_model_param_numeric) */
int mech_orientation(mech *M, const yaml_node_t *map, const char *what, double R[9], const yaml_node_t **where,
                     double turn[4], int *turn_kind)
{
    int was = M->track_numeric;
    M->track_numeric = 1;
    int rc = orientation_eval(M, map, what, R, where, turn, turn_kind);
    M->track_numeric = was;
    return rc;
}

static int orientation_eval(mech *M, const yaml_node_t *map, const char *what, double R[9], const yaml_node_t **where,
                            double turn[4], int *turn_kind)
{
    static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    memcpy(R, I3, sizeof I3);
    *where = NULL;
    turn[0] = turn[1] = turn[3] = 0, turn[2] = 1;
    *turn_kind = 0;
    mech_set_track(M);
    yaml_node_t *ax = mech_get(M, map, "axis"), *an = mech_get(M, map, "angle"), *eu = mech_get(M, map, "euler");
    yaml_node_t *zx = mech_get(M, map, "zaxis"), *xx = mech_get(M, map, "xaxis"), *ro = mech_get(M, map, "rotation");
    int forms = (ax || an) + (eu != NULL) + (zx || xx) + (ro != NULL);
    if (forms > 1)
        return err_at(M, map, "%s: give one orientation (axis+angle, euler, zaxis/xaxis or rotation)", what);
    char w[200];
    int rc = 0;
    if (ax || an) {
        *where = ax ? ax : an;
        if (!ax || !an) return err_at(M, *where, "%s: 'axis' and 'angle' go together", what);
        double k[3], a;
        snprintf(w, sizeof w, "%s: axis", what);
        rc = mech_eval_vec(M, ax, 3, w, k);
        const char *at = NULL;
        if (!rc) rc = mech_text_of(M, an, "angle", &at);
        if (!rc) rc = mech_eval_text(M, at, an, "angle", &a);
        if (rc) return rc;
        if (!vec3_unit(k)) return err_at(M, ax, "%s: the rotation axis is zero%s", what, mech_set_note(M));
        mat3_axis_angle(k, a, R);
        turn[0] = k[0], turn[1] = k[1], turn[2] = k[2], turn[3] = a;
        *turn_kind = 1;
        return 0;
    }
    if (eu) {
        *where = eu;
        double e[3];
        snprintf(w, sizeof w, "%s: euler", what);
        rc = mech_eval_vec(M, eu, 3, w, e);
        if (rc) return rc;
        /* body-fixed z-x-z: R = Rz(a) Rx(b) Rz(c) */
        double ca = cos(e[0]), sa = sin(e[0]), cb = cos(e[1]), sb = sin(e[1]), cc = cos(e[2]), s3 = sin(e[2]);
        double r[9] = {ca * cc - sa * cb * s3, -ca * s3 - sa * cb * cc, sa * sb,
                       sa * cc + ca * cb * s3, -sa * s3 + ca * cb * cc, -ca * sb,
                       sb * s3,                sb * cc,                 cb};
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) R[3 * j + i] = r[3 * i + j];
        return 0;
    }
    if (zx || xx) {
        *where = zx ? zx : xx;
        if (!zx) return err_at(M, xx, "%s: 'xaxis' needs 'zaxis'", what);
        double z[3], x[3];
        snprintf(w, sizeof w, "%s: zaxis", what);
        rc = mech_eval_vec(M, zx, 3, w, z);
        if (rc) return rc;
        if (!vec3_unit(z)) return err_at(M, zx, "%s: zaxis is zero%s", what, mech_set_note(M));
        if (xx) {
            snprintf(w, sizeof w, "%s: xaxis", what);
            rc = mech_eval_vec(M, xx, 3, w, x);
            if (rc) return rc;
        } else {
            /* any direction perpendicular to z: the global axis least aligned with it */
            int m = 0;
            for (int i = 1; i < 3; i++)
                if (fabs(z[i]) < fabs(z[m])) m = i;
            x[0] = x[1] = x[2] = 0;
            x[m] = 1;
            double d = z[m];
            for (int i = 0; i < 3; i++) x[i] -= d * z[i];
        }
        if (!vec3_unit(x)) return err_at(M, xx ? xx : zx, "%s: xaxis is zero%s", what, mech_set_note(M));
        double d = vec3_dot(x, z);
        if (fabs(d) > MBL_MECH_FRAME_TOL)
            return err_at(M, xx, "%s: xaxis is not perpendicular to zaxis (cosine %.3g): the frame is not orthonormal%s",
                          what, d, mech_set_note(M));
        double y[3];
        vec3_cross(z, x, y);
        for (int i = 0; i < 3; i++) {
            R[i] = x[i];
            R[3 + i] = y[i];
            R[6 + i] = z[i];
        }
        return 0;
    }
    if (ro) {
        *where = ro;
        if (ro->type != YAML_SEQUENCE_NODE || ro->data.sequence.items.top - ro->data.sequence.items.start != 3)
            return err_at(M, ro, "%s: rotation must be a list of 3 rows of 3 numbers", what);
        for (int i = 0; i < 3; i++) {
            double row[3];
            snprintf(w, sizeof w, "%s: rotation row %d", what, i + 1);
            rc = mech_eval_vec(M, mech_node(M->doc, ro->data.sequence.items.start[i]), 3, w, row);
            if (rc) return rc;
            for (int j = 0; j < 3; j++) R[3 * j + i] = row[j];
        }
        double dev = 0;
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++) {
                double d = -(a == b);
                for (int k = 0; k < 3; k++) d += R[3 * a + k] * R[3 * b + k];
                if (fabs(d) > dev) dev = fabs(d);
            }
        if (dev > MBL_MECH_FRAME_TOL)
            return err_at(M, ro, "%s: the rotation is not orthonormal (|R^T R - I| = %.3g)%s", what, dev, mech_set_note(M));
        double det = R[0] * (R[4] * R[8] - R[7] * R[5]) - R[3] * (R[1] * R[8] - R[7] * R[2]) +
                     R[6] * (R[1] * R[5] - R[4] * R[2]);
        if (det < 0) return err_at(M, ro, "%s: the frame is left-handed (det R = %.3g)%s", what, det, mech_set_note(M));
        return 0;
    }
    *turn_kind = 2; /* none given: the identity */
    return 0;
}

/* Euler parameters of a rotation matrix (column-major), e0 >= 0 */
void mech_euler_params(const double R[9], double e[4])
{
#define RR(i, j) R[3 * (j) + (i)]
    double tr = RR(0, 0) + RR(1, 1) + RR(2, 2);
    double c[4] = {tr, RR(0, 0), RR(1, 1), RR(2, 2)};
    int k = 0;
    for (int i = 1; i < 4; i++)
        if (c[i] > c[k]) k = i;
    if (k == 0) {
        double s = 2 * sqrt(1 + tr);
        e[0] = s / 4;
        e[1] = (RR(2, 1) - RR(1, 2)) / s;
        e[2] = (RR(0, 2) - RR(2, 0)) / s;
        e[3] = (RR(1, 0) - RR(0, 1)) / s;
    } else if (k == 1) {
        double s = 2 * sqrt(1 + RR(0, 0) - RR(1, 1) - RR(2, 2));
        e[0] = (RR(2, 1) - RR(1, 2)) / s;
        e[1] = s / 4;
        e[2] = (RR(0, 1) + RR(1, 0)) / s;
        e[3] = (RR(0, 2) + RR(2, 0)) / s;
    } else if (k == 2) {
        double s = 2 * sqrt(1 - RR(0, 0) + RR(1, 1) - RR(2, 2));
        e[0] = (RR(0, 2) - RR(2, 0)) / s;
        e[1] = (RR(0, 1) + RR(1, 0)) / s;
        e[2] = s / 4;
        e[3] = (RR(1, 2) + RR(2, 1)) / s;
    } else {
        double s = 2 * sqrt(1 - RR(0, 0) - RR(1, 1) + RR(2, 2));
        e[0] = (RR(1, 0) - RR(0, 1)) / s;
        e[1] = (RR(0, 2) + RR(2, 0)) / s;
        e[2] = (RR(1, 2) + RR(2, 1)) / s;
        e[3] = s / 4;
    }
    if (e[0] < 0)
        for (int i = 0; i < 4; i++) e[i] = -e[i];
#undef RR
}

/* component k of a marker's axis: a row of its body's rotation texts A (global) times the axis in
 * body axes n (numbers), "A1*n1 + A2*n2 + A3*n3" without the terms whose number is 0, "A" for 1 and
 * "-A" for -1 ("0" when every number is 0): the same expression in a third of the text where the
 * marker's axes lie along the body's (most markers) */
static const char *axis_text(mech *M, char *const A[3], const double n[3])
{
    sbuf b = {0};
    for (int j = 0; j < 3; j++) {
        if (n[j] == 0) continue;
        const char *sep = n[j] == -1 ? (b.n ? " - " : "-") : b.n ? " + " : "";
        mech_sb_add(M, &b, sep, A[j]);
        if (n[j] != 1 && n[j] != -1) mech_sb_add(M, &b, "*", mech_num(M, n[j]));
    }
    if (!b.n) return "0";
    return mech_sb_done(M, &b);
}

/* ---- bodies and markers ---------------------------------------------------------------------- */

static int marker_pos_vars(mech *M, marker *K);

static int add_marker(mech *M, int bi, const yaml_node_t *key, const yaml_node_t *val)
{
    body *B = &M->b[bi];
    const char *name = mech_sc(key);
    /* the marker's description in its messages, written when one is (the checks first quietly, a
     * NULL what: 6 M instructions of formatting for the 10,003 markers of the N = 2000 four-bar) */
    char what[200];
#define MARKER_WHAT (mech_snprintf(what, sizeof what, "marker '%s' of body '%s'", name, B->name), what)
    if (!mech_valid_name(name)) return err_at(M, key, "%s: not a valid name (letters, digits, _)", MARKER_WHAT);
    if (mech_find_marker(M, name, strlen(name)) >= 0) return err_at(M, key, "duplicate marker name '%s'", name);
    if (val->type == YAML_SCALAR_NODE && val->data.scalar.length == 0) {
        /* marker at the body origin, body axes */
    } else {
        if (val->type != YAML_MAPPING_NODE) return mech_want_map(M, val, MARKER_WHAT);
        static const char *okp[] = {"position", "angle", NULL};
        static const char *oks[] = {"position", "axis", "angle", "euler", "zaxis", "xaxis", "rotation", NULL};
        if (mech_check_keys(M, val, M->planar ? okp : oks, NULL))
            return mech_check_keys(M, val, M->planar ? okp : oks, MARKER_WHAT);
    }
    marker *K;
    int nrc = mech_new_marker(M, name, bi, key, &K);
    if (nrc) return nrc;
    int dim = M->planar ? 2 : 3;
    const char *s[3] = {"0", "0", "0"};
    yaml_node_t *pn = mech_get(M, val, "position");
#define POSITION_WHAT (mech_snprintf(what, sizeof what, "marker '%s': position", name), what)
    if (pn) {
        int rc = mech_vec_of(M, pn, dim, NULL, s) ? mech_vec_of(M, pn, dim, POSITION_WHAT, s) : 0;
        if (rc) return rc;
    }
    int line = K->line, col = K->col;
    static const char axn[3] = {'x', 'y', 'z'};
    for (int k = 0; k < 3; k++) K->s[k] = s[k];
    K->val = val;
    if (M->planar) {
        const char *ang = "0";
        yaml_node_t *an = mech_get(M, val, "angle");
        if (an) {
            int rc = mech_text_of(M, an, "marker angle", &ang);
            if (rc) return rc;
        }
        K->ang = ang;
        const char *th = B->kind == KIND_PLANAR ? B->th : "0";
        /* the marker's angle and axes (x = (c, s, 0), y = (-s, c, 0), z = (0, 0, 1)): a marker not
         * turned on its body has the body's (the rotation texts B->A, or ground's 1 and 0); a
         * turned one gets spare variables, dropped when unused (each planar marker made 10) */
        const char *c, *sn, *msn;
        int rc = 0;
        if (!strcmp(ang, "0")) {
            K->phi = (char *)th;
            c = B->kind == KIND_PLANAR ? B->A[0] : "1";
            sn = B->kind == KIND_PLANAR ? B->A[3] : "0";
            msn = B->kind == KIND_PLANAR ? B->A[1] : "0";
        } else {
            K->phi = mech_fmt(M, "_phi_%s", name);
            c = mech_fmt(M, "_x_%s_1", name);
            sn = mech_fmt(M, "_x_%s_2", name);
            msn = mech_fmt(M, "(-%s)", sn);
            rc = mech_add_spare_var(M, K->phi, mech_fmt(M, "%s + (%s)", th, ang), line, col);
            if (!rc) rc = mech_add_spare_var(M, c, mech_fmt(M, "cos(%s)", K->phi), line, col);
            if (!rc) rc = mech_add_spare_var(M, sn, mech_fmt(M, "sin(%s)", K->phi), line, col);
        }
        const char *axt[3][3] = {{c, sn, "0"}, {msn, c, "0"}, {"0", "0", "1"}};
        for (int a = 0; a < 3; a++)
            for (int k = 0; k < 3; k++) K->ax[a][k] = (char *)axt[a][k];
        /* z is 0 in the plane: the text itself, not a variable (every marker's _p_<m>_3 = 0 was an
         * item of the source that the drawing kept) */
        K->p[2] = "0";
        if (rc) return rc;
        /* x, y: variables made on their first use (a measure, a text force, the drawing), in the
         * place they had when made here (10,003 markers of the N = 2000 four-bar mechanism made 20,006
         * and dropped them all); relative coordinates make them here */
        K->lseq = M->nseq;
        M->nseq += 2;
        for (int k = 0; k < 2; k++) K->lr[k] = B->r[k];
        if (B->kind == KIND_PLANAR) K->lc = B->A[0], K->lsn = B->A[3];
        K->lazy = 1;
        return M->relative ? marker_pos_vars(M, K) : 0;
    }
    double R[9];
    const yaml_node_t *where;
    /* the orientation's messages name the marker as the last description written did */
    int rc = mech_orientation(M, val, pn ? POSITION_WHAT : MARKER_WHAT, R, &where, K->turn, &K->turn_kind);
#undef MARKER_WHAT
#undef POSITION_WHAT
    if (rc) return rc;
    mat3_mul(B->R0, R, K->R0);
    mech_euler_params(R, K->mq);
    K->oset = M->used_set >= 0 ? M->used_set : B->oset;
    for (int k = 0; k < 3 && !rc; k++) {
        K->p[k] = mech_fmt(M, "_p_%s_%d", name, k + 1);
        const char *a[3] = {B->A[3 * k], B->A[3 * k + 1], B->A[3 * k + 2]};
        const char *t = mech_affine(M, B->r[k], 3, a, s, "+++");
        rc = mech_add_spare_var(M, K->p[k], t, line, col);
    }
    for (int a = 0; a < 3 && !rc; a++)
        for (int k = 0; k < 3 && !rc; k++) {
            K->ax[a][k] = mech_fmt(M, "_%c_%s_%d", axn[a], name, k + 1);
            const char *t = axis_text(M, &B->A[3 * k], &R[3 * a]);
            rc = mech_add_spare_var(M, K->ax[a][k], t, line, col);
        }
    return rc;
}

/* a planar marker's position variables _p_<m>_1, _p_<m>_2 (the drawing uses them, when there is
 * one), in their places (marker.lseq) */
static int marker_pos_vars(mech *M, marker *K)
{
    int rc = 0;
    K->lazy = 0;
    for (int k = 0; k < 2; k++) K->p[k] = mech_fmt(M, "_p_%s_%d", K->name, k + 1);
    for (int k = 0; k < 2 && !rc; k++) {
        const char *t;
        if (K->lc) {
            const char *a[2] = {k == 0 ? K->lc : K->lsn, k == 0 ? K->lsn : K->lc}, *x[2] = {K->s[0], K->s[1]};
            t = mech_affine(M, K->lr[k], 2, a, x, k == 0 ? "+-" : "++");
        } else {
            t = mech_fmt(M, "%s + (%s)", K->lr[k], K->s[k]);
        }
        rc = mech_add_spare_var(M, K->p[k], t, K->line, K->col);
        if (!rc) M->vseq[M->src->variables.n - 1] = K->lseq + k;
    }
    return rc;
}

char *const *mech_mk_p(mech *M, int mi)
{
    marker *K = &M->mk[mi];
    if (!K->lazy) return K->p;
    if (marker_pos_vars(M, K)) M->oom = 1;
    M->nlate++; /* made out of order */
    return K->p;
}

int mech_add_markers(mech *M, int bi, const yaml_node_t *mks)
{
    if (!mks) return 0;
    if (mks->type == YAML_SCALAR_NODE && mks->data.scalar.length == 0) return 0;
    char what[160];
    mech_snprintf(what, sizeof what, "markers of body '%s'", M->b[bi].name);
    int rc = mech_want_map(M, mks, what);
    for (yaml_node_pair_t *p = mks->data.mapping.pairs.start; !rc && p < mks->data.mapping.pairs.top; p++) {
        yaml_node_t *k = mech_node(M->doc, p->key);
        if (!mech_is_scalar(k)) return err_at(M, k, "%s: a marker name must be a plain word", what);
        rc = add_marker(M, bi, k, mech_node(M->doc, p->value));
    }
    return rc;
}

body *mech_new_body(mech *M, const char *name, const yaml_node_t *key)
{
    if (M->nb == M->cb) {
        int cap = M->cb ? 2 * M->cb : 16;
        body *b = mbl_realloc_array(M->b, (size_t)cap, sizeof *b);
        if (!b) return NULL;
        M->b = b;
        M->cb = cap;
    }
    if (mech_ns_add(&M->hb, name, M->nb)) return NULL;
    body *B = &M->b[M->nb++];
    memset(B, 0, sizeof *B);
    B->name = name;
    if (key) mech_pos_of(key, &B->line, &B->col);
    for (int k = 0; k < 9; k++) B->R0[k] = k % 4 == 0;
    B->q0[0] = 1;
    B->turn[2] = 1, B->turn_kind = 2;
    B->oset = -1;
    return B;
}

static int add_coord(mech *M, const char *name, const char *init, const yaml_node_t *at)
{
    return mech_push_at(M, &M->src->coordinates, name, init, at);
}

/* The principal moments of a rigid body's inertia tensor J (3x3, positive definite) satisfy the
 * triangle inequalities I1 + I2 >= I3 (each moment is an integral of a sum of two squared
 * coordinates); a tensor that violates them belongs to no body. Relative tolerance
 * MBL_MECH_FRAME_TOL of the trace. */
static int inertia_triangle(mech *M, const yaml_node_t *in, const char *what, const double J[9])
{
    double A[9], w[3];
    memcpy(A, J, sizeof A);
    if (LAPACKE_dsyev(LAPACK_COL_MAJOR, 'N', 'U', 3, A, 3, w) != 0)
        return err_at(M, in, "%s: the principal moments of inertia cannot be computed", what);
    /* w ascending: the binding inequality is w0 + w1 >= w2 */
    if (w[0] + w[1] < w[2] - MBL_MECH_FRAME_TOL * (w[0] + w[1] + w[2]))
        return err_at(M, in,
                      "%s: the principal moments of inertia %.6g, %.6g, %.6g violate the triangle inequality "
                      "(%.6g + %.6g < %.6g): no rigid body has this inertia%s",
                      what, w[0], w[1], w[2], w[0], w[1], w[2], mech_set_note(M));
    return 0;
}

/* mass, inertia (checked: positive, or 0 for a massless link in relative coordinates) */
int mech_body_inertia(mech *M, body *B, const yaml_node_t *val, const char *what)
{
    int rc;
    yaml_node_t *mn = mech_get(M, val, "mass");
    if (!mn) return err_at(M, val, "%s: missing 'mass'", what);
    rc = mech_text_of(M, mn, "mass", &B->mass);
    double mv;
    mech_set_track(M);
    if (!rc) rc = mech_eval_text(M, B->mass, mn, "mass", &mv);
    if (rc) return rc;
    /* relative coordinates accept a massless link (mass 0; its subtree carries the mass) */
    if (!(mv > 0) && !(M->relative && mv == 0 && B->kind != KIND_POINT))
        return err_at(M, mn, "%s: the mass must be positive (it is %g)%s%s", what, mv,
                      M->relative ? " or 0 for a massless link" : "", mech_set_note(M));
    for (int k = 0; k < 6; k++) B->I[k] = "0";
    for (int k = 0; k < 3; k++) B->cm[k] = "0";
    yaml_node_t *in = mech_get(M, val, "inertia");
    if (B->kind == KIND_PLANAR) {
        if (!in) return err_at(M, val, "%s: missing 'inertia' (the moment of inertia about the centre of mass)", what);
        double iv;
        rc = mech_text_of(M, in, "inertia", &B->I[2]);
        mech_set_track(M);
        if (!rc) rc = mech_eval_text(M, B->I[2], in, "inertia", &iv);
        if (rc) return rc;
        if (!(iv > 0) && !(M->relative && iv == 0))
            return err_at(M, in, "%s: the moment of inertia must be positive (it is %g)%s", what, iv, mech_set_note(M));
    } else if (B->kind == KIND_SPATIAL) {
        if (!in) return err_at(M, val, "%s: missing 'inertia' [Ixx, Iyy, Izz] or [Ixx, Iyy, Izz, Ixy, Ixz, Iyz]", what);
        int cnt = in->type == YAML_SEQUENCE_NODE ? (int)(in->data.sequence.items.top - in->data.sequence.items.start) : 0;
        if (cnt != 3 && cnt != 6)
            return err_at(M, in, "%s: inertia must be [Ixx, Iyy, Izz] or [Ixx, Iyy, Izz, Ixy, Ixz, Iyz]", what);
        double iv[6] = {0};
        rc = mech_vec_of(M, in, cnt, "inertia", B->I);
        mech_set_track(M);
        if (!rc) rc = mech_eval_vec(M, in, cnt, "inertia", iv);
        if (rc) return rc;
        /* positive definite: Cholesky of [[xx xy xz] [xy yy yz] [xz yz zz]] */
        double J[9] = {iv[0], iv[3], iv[4], iv[3], iv[1], iv[5], iv[4], iv[5], iv[2]};
        double scale = fabs(iv[0]) + fabs(iv[1]) + fabs(iv[2]);
        int zero = 1; /* relative coordinates: a zero inertia (a point-like or massless link) */
        for (int k = 0; k < cnt; k++) zero &= iv[k] == 0;
        if (M->relative && zero) goto inertia_done;
        double l00 = J[0];
        double ok = l00 > MBL_MECH_FRAME_TOL * scale;
        if (ok) {
            double l10 = J[3] / sqrt(l00), l20 = J[6] / sqrt(l00);
            double l11 = J[4] - l10 * l10;
            ok = l11 > MBL_MECH_FRAME_TOL * scale;
            if (ok) {
                double l21 = (J[7] - l20 * l10) / sqrt(l11);
                ok = J[8] - l20 * l20 - l21 * l21 > MBL_MECH_FRAME_TOL * scale;
            }
        }
        if (!ok)
            return err_at(M, in, "%s: the inertia tensor is %s (it must be positive definite)%s", what,
                          scale == 0 ? "zero" : "singular or indefinite", mech_set_note(M));
        if ((rc = inertia_triangle(M, in, what, J))) return rc;
    inertia_done:;
    } else if (in) {
        return err_at(M, in, "%s: a point mass has no inertia", what);
    }
    return 0;
}

/* centre of mass, coordinates of the position and their initial values and rates */
static int body_position(mech *M, body *B, const char *name, const yaml_node_t *key, const yaml_node_t *val,
                         const char *what, int dim)
{
    int rc = 0;
    yaml_node_t *cn = mech_get(M, val, "cm");
    if (cn) {
        if (B->kind == KIND_POINT) return err_at(M, cn, "%s: a point mass has no centre-of-mass offset", what);
        rc = mech_vec_of(M, cn, dim, "cm", B->cm);
        if (rc) return rc;
    }
    /* coordinates and their initial values */
    const char *p0[3] = {"0", "0", "0"};
    yaml_node_t *pn = mech_get(M, val, "position");
    if (pn && (rc = mech_vec_of(M, pn, dim, "position", p0))) return rc;
    static const char *cn3[3] = {"x", "y", "z"};
    const yaml_node_t *at = pn ? pn : key;
    for (int k = 0; k < 3; k++) B->r[k] = "0";
    B->key = key;
    B->val = val;
    for (int k = 0; k < 3; k++) B->p0[k] = p0[k];
    for (int k = 0; k < dim && !rc; k++) {
        if (M->relative) { /* written by the tree (relative.c), or made coordinates for a root */
            B->r[k] = mech_fmt(M, "_r_%s_%d", name, k + 1);
            continue;
        }
        B->r[k] = mech_fmt(M, "%s_%s", name, cn3[k]);
        rc = add_coord(M, B->r[k], p0[k], at);
    }
    if (rc) return rc;
    const char *v0[3] = {NULL, NULL, NULL};
    yaml_node_t *vn = mech_get(M, val, "velocity");
    if (vn && M->relative) {
        if ((rc = mech_vec_of(M, vn, dim, "velocity", v0))) return rc; /* used if the body is a root */
    } else if (vn) {
        rc = mech_vec_of(M, vn, dim, "velocity", v0);
        for (int k = 0; k < dim && !rc; k++) rc = mech_push_at(M, &M->src->velocities, B->r[k], v0[k], vn);
        if (rc) return rc;
    }
    return 0;
}

/* a planar body's angle coordinate, rotation texts and angular velocity */
static int body_planar_rotation(mech *M, body *B, int bi, const char *name, const yaml_node_t *key,
                                const yaml_node_t *val, const yaml_node_t *wn)
{
    int rc = 0;
    const char *a0 = "0";
    yaml_node_t *an = mech_get(M, val, "angle");
    if (an && (rc = mech_text_of(M, an, "angle", &a0))) return rc;
    B->th = mech_fmt(M, M->relative ? "_th_%s" : "%s_th", name);
    if (!M->relative) rc = add_coord(M, B->th, a0, an ? an : key);
    if (!rc && wn && !M->relative) {
        const char *w0;
        rc = mech_text_of(M, wn, "angular_velocity", &w0);
        if (!rc) rc = mech_push_at(M, &M->src->velocities, B->th, w0, wn);
    }
    char *c = mech_fmt(M, "_c_%s", name), *s = mech_fmt(M, "_s_%s", name);
    /* spare: unused when the body's texts do not need them (the numeric term, no drawing), made
     * only where used */
    if (!rc) rc = mech_defer_rot(M, c, s, B->th, B->line, B->col);
    B->A[0] = c;
    B->A[1] = mech_fmt(M, "(-%s)", s);
    B->A[2] = "0";
    B->A[3] = s;
    B->A[4] = c;
    B->A[5] = "0";
    B->A[6] = "0";
    B->A[7] = "0";
    B->A[8] = "1";
    B->w[0] = "0";
    B->w[1] = "0";
    B->w[2] = mech_fmt(M, "der(%s)", B->th);
    if (!rc) rc = mech_pm_body(M, bi); /* its inertia and weight evaluated numerically (pmech.c) */
    if (rc) return rc;
    return 0;
}

/* a spatial body's orientation, its Euler parameter coordinates, rotation and angular velocity
 * texts, speeds and initial rates */
static int body_spatial_rotation(mech *M, body *B, const char *name, const yaml_node_t *key, const yaml_node_t *val,
                                 const yaml_node_t *wn, const char *what)
{
    int rc = 0;
    double R[9], e0[4];
    const yaml_node_t *where;
    rc = mech_orientation(M, val, what, R, &where, B->turn, &B->turn_kind);
    if (rc) return rc;
    memcpy(B->R0, R, sizeof R);
    B->oset = M->used_set;
    mech_euler_params(R, e0);
    memcpy(B->q0, e0, sizeof e0);
    B->eul = M->eul313;
    if ((rc = mech_e313_mode(M, mech_get(M, val, "orientation"), what, &B->eul))) return rc;
    if (B->eul) {
        yaml_node_t *bad = mech_get(M, val, "speeds");
        if (M->relative || bad)
            return err_at(M, bad ? bad : key, "%s: orientation euler313 %s", what,
                          bad ? "has the angle rates as speeds (no 'speeds')" : "needs coordinates: absolute");
        return mech_e313_body(M, B, key, val, wn, what);
    }
    for (int k = 0; k < 4 && !rc; k++) {
        if (M->relative) { /* variables of the tree (relative.c), or aliases of a root's coordinates */
            B->e[k] = mech_fmt(M, "_e_%s_%d", name, k);
            continue;
        }
        B->e[k] = mech_fmt(M, "%s_e%d", name, k);
        rc = add_coord(M, B->e[k], mech_num(M, e0[k]), where ? where : key);
    }
    /* its frame's coordinates, for at: steady's turning frames (model source rigid_frames) */
    for (int k = 0; k < 7 && !rc && !M->relative; k++)
        rc = mech_push_at(M, &M->src->rigid_frames, name, k < 3 ? B->r[k] : B->e[k - 3], key);
    if (rc) return rc;
    /* normalization constraint, rotation and angular velocity texts (relative coordinates: the
     * tree writes w recursively, or from a root's e: relative.c) */
    rc = mech_euler_texts(M, B, !M->relative, !M->relative);
    char **e = B->e;
    const char *d[4];
    for (int k = 0; k < 4; k++) d[k] = mech_fmt(M, "der(%s)", e[k]);
    /* speeds: body_angular_velocity: the body-frame angular velocity w' = 2 G(e) der(e) as three
     * generalized speeds <body>_wx, _wy, _wz (source 000 Eq. 14; the velocity-level states of the
     * linear model), instead of Euler-parameter rates */
    yaml_node_t *sn = mech_get(M, val, "speeds");
    if (!rc && sn && M->relative && strcmp(mech_sc(sn), "euler_rates"))
        return err_at(M, sn, "%s: speeds: body_angular_velocity needs coordinates: absolute (relative "
                      "coordinates use joint rates)", what);
    if (!rc && sn) {
        if (!mech_is_scalar(sn) || (strcmp(mech_sc(sn), "body_angular_velocity") && strcmp(mech_sc(sn), "euler_rates")))
            return err_at(M, sn, "%s: speeds must be body_angular_velocity or euler_rates", what);
        if (!strcmp(mech_sc(sn), "body_angular_velocity")) {
            const char *gt[3];
            mech_tx_body_rate(M, (const char *const *)e, d, gt);
            static const char *ax[3] = {"wx", "wy", "wz"};
            for (int k = 0; k < 3 && !rc; k++)
                rc = mech_push_at(M, &M->src->velocities, mech_fmt(M, "%s_%s", name, ax[k]), gt[k], sn);
        }
    }
    if (!rc && wn && !M->relative) {
        /* der(e) = 1/2 E^T w with the initial e */
        const char *w0[3];
        rc = mech_vec_of(M, wn, 3, "angular_velocity", w0);
        const char *r0[4];
        if (!rc) mech_tx_euler_rates(M, e0, w0, r0);
        for (int k = 0; k < 4 && !rc; k++) rc = mech_push_at(M, &M->src->velocities, e[k], r0[k], wn);
    }
    if (rc) return rc;
    return 0;
}

int mech_read_body(mech *M, const yaml_node_t *key, const yaml_node_t *val)
{
    const char *name = mech_sc(key);
    char what[200];
    mech_snprintf(what, sizeof what, "body '%s'", name);
    if (!mech_valid_name(name)) return err_at(M, key, "%s: not a valid name (letters, digits, _)", what);
    if (!strcmp(name, "ground")) return err_at(M, key, "'ground' is built in: give its markers under 'ground'");
    if (mech_find_body(M, name) >= 0) return err_at(M, key, "duplicate body name '%s'", name);
    int rc = mech_want_map(M, val, what);
    if (rc) return rc;
    yaml_node_t *ft = mech_get(M, val, "type");
    if (M->relative && mech_is_scalar(ft) && (!strcmp(mech_sc(ft), "beam") || !strcmp(mech_sc(ft), "modal")))
        return err_at(M, ft, "%s: flexible bodies need coordinates: absolute (not yet in relative coordinates)", what);
    if (mech_is_scalar(ft) && !strcmp(mech_sc(ft), "beam")) return mech_read_beam(M, key, val);
    if (mech_is_scalar(ft) && !strcmp(mech_sc(ft), "natural")) return mech_read_natural(M, key, val);
    if (mech_is_scalar(ft) && !strcmp(mech_sc(ft), "modal"))
        return M->planar ? mech_read_modal(M, key, val) : mech_read_modal3(M, key, val);
    static const char *okp[] = {"type", "mass", "inertia", "cm", "position", "angle", "velocity", "angular_velocity",
                                "markers", NULL};
    static const char *oks[] = {"type", "mass", "inertia", "cm", "position", "axis", "angle", "euler", "zaxis",
                                "xaxis", "rotation", "velocity", "angular_velocity", "markers", "speeds", "orientation", NULL};
    rc = mech_check_keys(M, val, M->planar ? okp : oks, what);
    if (rc) return rc;
    body *B = mech_new_body(M, name, key);
    if (!B) return mech_oom(M);
    int bi = M->nb - 1;
    B->kind = M->planar ? KIND_PLANAR : KIND_SPATIAL;
    yaml_node_t *ty = mech_get(M, val, "type");
    if (ty) {
        if (!mech_is_scalar(ty)) return err_at(M, ty, "%s: type must be rigid, point, natural, beam or modal", what);
        if (!strcmp(mech_sc(ty), "point")) B->kind = KIND_POINT;
        else if (strcmp(mech_sc(ty), "rigid")) return err_at(M, ty, "%s: unknown type '%s' (expected rigid, point, natural, beam or modal)", what, mech_sc(ty));
    }
    int dim = M->planar ? 2 : 3;
    if ((rc = mech_body_inertia(M, B, val, what))) return rc;
    if ((rc = body_position(M, B, name, key, val, what, dim))) return rc;
    yaml_node_t *wn = mech_get(M, val, "angular_velocity");
    if (wn && B->kind == KIND_POINT) return err_at(M, wn, "%s: a point mass has no angular velocity", what);
    static const char *Iv[9] = {"1", "0", "0", "0", "1", "0", "0", "0", "1"};
    if (B->kind == KIND_POINT) {
        for (int k = 0; k < 9; k++) B->A[k] = (char *)Iv[k];
        for (int k = 0; k < 3; k++) B->w[k] = "0";
    } else if (B->kind == KIND_PLANAR) {
        if ((rc = body_planar_rotation(M, B, bi, name, key, val, wn))) return rc;
    } else {
        if ((rc = body_spatial_rotation(M, B, name, key, val, wn, what))) return rc;
    }
    return mech_add_markers(M, bi, mech_get(M, val, "markers"));
}

