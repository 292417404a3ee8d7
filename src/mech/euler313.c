/* 3-1-3 (z-x-z) Euler angles as the orientation coordinates of a spatial rigid body (`orientation:
 * euler313`; Adams' internal set, source 000's introduction): R = Rz(psi) Rx(theta) Rz(phi), the
 * coordinates <body>_psi, <body>_theta, <body>_phi. The body's Euler parameters become variables of
 * the angles (the half-angle products of qz(psi) (x) qx(theta) (x) qz(phi)), so that its rotation
 * matrix, angular velocity, markers and measures are the Euler-parameter texts of body.c and
 * util.c, exact to differentiate; the moments' generalized forces are the angles' own
 * (omega = psi' z + theta' (Rz(psi) x) + phi' (Rz(psi) Rx(theta) z)). At sin(theta) = 0 the first and
 * third angles turn about one axis: the file's configuration is refused there, and the model's
 * singular items (mbl_src.singular) refuse an operating point or a simulation that reaches it.
 * See docs/mechanism-reference.md, "Euler angles". */
#include "mech/mech_internal.h"

#include <math.h>
#include <string.h>

static const char *const ang_name[3] = {"psi", "theta", "phi"};

int mech_e313_mode(mech *M, const yaml_node_t *n, const char *what, int *eul)
{
    if (!n) return 0;
    if (!mech_is_scalar(n) || (strcmp(mech_sc(n), "euler313") && strcmp(mech_sc(n), "euler_parameters")))
        return err_at(M, n, "%s: orientation must be euler_parameters or euler313", what);
    *eul = !strcmp(mech_sc(n), "euler313");
    if (*eul && M->planar) /* a planar body has one angle */
        return err_at(M, n, "%s: orientation euler313 is for spatial mechanisms (a planar body has one angle)", what);
    return 0;
}

/* the angles of R (column-major) = Rz(psi) Rx(theta) Rz(phi), theta in [0, pi] */
static void angles_of(const double R[9], double a[3])
{
#define RR(i, j) R[3 * (j) + (i)]
    a[1] = atan2(hypot(RR(0, 2), RR(1, 2)), RR(2, 2));
    a[0] = atan2(RR(0, 2), -RR(1, 2));
    a[2] = atan2(RR(2, 0), RR(2, 1));
#undef RR
}

/* the initial angles: the file's `euler: [psi, theta, phi]` texts as written (whole turns kept),
 * else those of the orientation R0 */
static int initial_angles(mech *M, body *B, const yaml_node_t *val, const char *t[3], double a[3])
{
    yaml_node_t *eu = mech_get(M, val, "euler");
    if (eu) {
        int rc = mech_vec_of(M, eu, 3, "euler", t);
        if (!rc) rc = mech_eval_vec(M, eu, 3, "euler", a);
        return rc;
    }
    angles_of(B->R0, a);
    for (int k = 0; k < 3; k++) t[k] = mech_num(M, a[k]);
    return 0;
}

/* the singular item: sin(theta) at the operating point and along a simulation */
static int singular_item(mech *M, body *B)
{
    const char *what = mech_fmt(M, "body '%s': orientation euler313 is singular (psi and phi turn about one axis): "
                                "sin(%s)", B->name, B->ea[1]);
    mbl_src_list *l = &M->src->singular;
    int rc = mech_push(M, l, what, mech_fmt(M, "sin(%s)", B->ea[1]), B->line, B->col);
    if (rc) return rc;
    l->items[l->n - 1].key2 = mech_dup_s(mech_fmt(M, "%g (give the body orientation: euler_parameters)",
                                                  MBL_MECH_EULER313_SING_TOL));
    return l->items[l->n - 1].key2 ? 0 : mech_oom(M);
}

int mech_e313_body(mech *M, body *B, const yaml_node_t *key, const yaml_node_t *val, const yaml_node_t *wn,
                   const char *what)
{
    const char *t[3];
    double a[3];
    int rc = initial_angles(M, B, val, t, a);
    if (rc) return rc;
    if (!(fabs(sin(a[1])) >= MBL_MECH_EULER313_SING_TOL))
        return err_at(M, key,
                      "%s: orientation euler313 is singular in the file's configuration (theta = %.6g, sin(theta) = "
                      "%.3g: psi and phi turn about one axis); give it orientation: euler_parameters or turn its z axis",
                      what, a[1], sin(a[1]));
    for (int k = 0; k < 3 && !rc; k++) {
        B->ea[k] = mech_fmt(M, "%s_%s", B->name, ang_name[k]);
        rc = mech_push_at(M, &M->src->coordinates, B->ea[k], t[k], key);
    }
    if (!rc) rc = singular_item(M, B);
    /* e = qz(psi) (x) qx(theta) (x) qz(phi) */
    const char *p = B->ea[0], *th = B->ea[1], *f = B->ea[2];
    const char *et[4] = {mech_fmt(M, "cos(0.5*%s)*cos(0.5*(%s + %s))", th, p, f),
                         mech_fmt(M, "sin(0.5*%s)*cos(0.5*(%s - %s))", th, p, f),
                         mech_fmt(M, "sin(0.5*%s)*sin(0.5*(%s - %s))", th, p, f),
                         mech_fmt(M, "cos(0.5*%s)*sin(0.5*(%s + %s))", th, p, f)};
    for (int k = 0; k < 4 && !rc; k++) {
        B->e[k] = mech_fmt(M, "_e_%s_%d", B->name, k);
        rc = mech_add_var(M, B->e[k], et[k], B->line, B->col);
    }
    /* rotation and angular velocity texts from e, no normalization constraint */
    if (!rc) rc = mech_euler_texts(M, B, 0, 1);
    if (rc || !wn) return rc;
    /* initial rates: theta' = w . u, phi' = (w . (s_psi, -c_psi, 0)) / sin(theta), psi' = w_z - cos(theta) phi' */
    const char *w0[3];
    if ((rc = mech_vec_of(M, wn, 3, "angular_velocity", w0))) return rc;
    const char *cp = mech_num(M, cos(a[0])), *sp = mech_num(M, sin(a[0]));
    const char *fd = mech_fmt(M, "(%s*(%s) - %s*(%s))/%s", sp, w0[0], cp, w0[1], mech_num(M, sin(a[1])));
    const char *r0[3] = {mech_fmt(M, "(%s) - %s*%s", w0[2], mech_num(M, cos(a[1])), fd),
                         mech_fmt(M, "%s*(%s) + %s*(%s)", cp, w0[0], sp, w0[1]), fd};
    for (int k = 0; k < 3 && !rc; k++) rc = mech_push_at(M, &M->src->velocities, B->ea[k], r0[k], wn);
    return rc;
}

int mech_e313_forces(mech *M, const body *B, const char *const N[3])
{
    const char *p = B->ea[0], *th = B->ea[1];
    const char *Q[3] = {N[2], mech_fmt(M, "cos(%s)*%s + sin(%s)*%s", p, N[0], p, N[1]),
                        mech_fmt(M, "sin(%s)*(sin(%s)*%s - cos(%s)*%s) + cos(%s)*%s", th, p, N[0], p, N[1], th, N[2])};
    int rc = 0;
    for (int k = 0; k < 3 && !rc; k++) rc = mech_push(M, &M->src->forces, B->ea[k], Q[k], B->line, B->col);
    return rc;
}
