/* The rolling wheel joint (issue 35, item 2): a thin disc rolling on a plane fixed to the ground.
 *
 * Marker i sits at the centre of the disc, its z axis a along the axle; the plane passes through
 * marker j's point p with normal n = j's z axis (j is a ground marker), or, without j, through the
 * ground origin with n opposite to the model's gravity (z up when there is none). With
 * c = n . a and s = sqrt(1 - c^2), the contact point is the point of the rim lowest along n,
 *   P = o - r u,   u = (n - c a) / s,
 * and its unit tangents are t1 = (a x n) / s (longitudinal: the direction the disc rolls) and
 * t2 = n x t1 = (a - c n) / s (lateral). The joint writes
 *   - one holonomic constraint, the contact point on the plane: n . (o - p) - r s = 0;
 *   - two non-holonomic ones, no slip: the velocity of the body's material point at P,
 *     v_P = der(o) - r w x u, has no component along t1 and t2 (its normal component is the
 *     derivative of the holonomic one). Both are linear in the body's speeds.
 * An optional `tire` replaces the lateral no-slip constraint by a lateral force F t2 at P, with
 * the slip angle alpha = atan(t2 . v_P / sqrt((t1 . der(o))^2 + vmin^2)) (vmin =
 * MBL_MECH_TIRE_MIN_SPEED: the force stays defined at a standstill, where the methods evaluate
 * parts of the Jacobian) and F = -Ca alpha (linear),
 * F = -D sin(C atan(B alpha - E (B alpha - atan(B alpha)))) (Pacejka's Magic Formula), or any
 * expression of the model (`model: force`, `lateral:`), in which the measure SLIP(joint) is a
 * wheel's alpha (measure.c; a user routine's output, issue 68, is such an expression). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mech/mech_internal.h"

/* the texts of a 3-vector's entries, written as generated variables "<base>_k" */
static int vars3(mech *M, const char *base, const char *const t[3], const char *out[3], int line, int col)
{
    for (int k = 0; k < 3; k++) {
        const char *nm = mech_fmt(M, "%s_%d", base, k + 1);
        int rc = mech_add_var(M, nm, t[k], line, col);
        if (rc) return rc;
        out[k] = nm;
    }
    return M->oom ? mech_oom(M) : 0;
}

static void add_term(mech *M, char **acc, const char *term)
{
    *acc = *acc ? mech_fmt(M, "%s + %s", *acc, term) : mech_fmt(M, "%s", term);
}

/* The plane's normal (texts and numbers in the file's configuration) and point: marker j's, or
 * the default (through the ground origin, opposite to the sum of the gravity elements' g, else z). */
static int plane_of(mech *M, joint *J, const yaml_node_t *val, const char *n[3], double nv[3], const char *p[3])
{
    if (J->j >= 0) {
        marker *K = &M->mk[J->j];
        if (M->b[K->body].kind != KIND_GROUND)
            return err_at(M, mech_get(M, val, "j"), "joint '%s': the plane's marker '%s' must be a ground marker (the plane is fixed)",
                          J->name, K->name);
        char *const *kp = mech_mk_p(M, J->j);
        for (int k = 0; k < 3; k++) n[k] = K->ax[2][k], p[k] = kp[k], nv[k] = K->R0[6 + k];
        return 0;
    }
    double g[3] = {0, 0, 0};
    yaml_node_t *root = yaml_document_get_root_node(M->doc), *fs = mech_get(M, root, "forces");
    if (fs && fs->type == YAML_MAPPING_NODE)
        for (yaml_node_pair_t *q = fs->data.mapping.pairs.start; q < fs->data.mapping.pairs.top; q++) {
            yaml_node_t *v = mech_node(M->doc, q->value);
            yaml_node_t *ty = v && v->type == YAML_MAPPING_NODE ? mech_get(M, v, "type") : NULL;
            yaml_node_t *gn = ty && mech_is_scalar(ty) && !strcmp(mech_sc(ty), "gravity") ? mech_get(M, v, "g") : NULL;
            double gk[3];
            if (!gn) continue;
            int rc = mech_eval_vec(M, gn, 3, "gravity 'g'", gk);
            if (rc) return rc;
            for (int k = 0; k < 3; k++) g[k] += gk[k];
        }
    double gl = sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
    for (int k = 0; k < 3; k++) {
        nv[k] = gl > 0 ? -g[k] / gl : k == 2;
        n[k] = mech_tx_num(M, nv[k]);
        p[k] = "0";
    }
    return M->oom ? mech_oom(M) : 0;
}

/* `tire: {model: linear, cornering_stiffness: Ca}`, `{model: magic_formula, B:, C:, D:, E:}` or
 * `{model: force, lateral: EXPR}`: the text of the lateral force along t2 in *out, -F(alpha) of
 * the built-in laws F (alpha the text of the slip angle), the expression itself (its measures,
 * SLIP(joint) among them, written out) for `force` */
static int tire_law(mech *M, joint *J, const yaml_node_t *tn, const char *alpha, const char **out)
{
    char what[200];
    snprintf(what, sizeof what, "joint '%s': tire", J->name);
    int rc = mech_want_map(M, tn, what);
    if (rc) return rc;
    yaml_node_t *mn = mech_get(M, tn, "model");
    const char *model = mn && mech_is_scalar(mn) ? mech_sc(mn) : "";
    if (!strcmp(model, "linear")) {
        static const char *ok[] = {"model", "cornering_stiffness", NULL};
        const char *ca = NULL;
        if ((rc = mech_check_keys(M, tn, ok, what))) return rc;
        yaml_node_t *cn = mech_get(M, tn, "cornering_stiffness");
        if (!cn) return err_at(M, tn, "%s: missing 'cornering_stiffness' (N/rad)", what);
        if ((rc = mech_text_of(M, cn, "cornering_stiffness", &ca))) return rc;
        *out = mech_fmt(M, "-((%s)*(%s))", ca, alpha);
    } else if (!strcmp(model, "magic_formula")) {
        static const char *ok[] = {"model", "B", "C", "D", "E", NULL};
        static const char *key[] = {"B", "C", "D", "E"};
        const char *c[4];
        if ((rc = mech_check_keys(M, tn, ok, what))) return rc;
        for (int k = 0; k < 4; k++) {
            yaml_node_t *kn = mech_get(M, tn, key[k]);
            if (!kn) return err_at(M, tn, "%s: missing '%s' (magic_formula needs B, C, D and E)", what, key[k]);
            if ((rc = mech_text_of(M, kn, key[k], &c[k]))) return rc;
        }
        const char *ba = mech_fmt(M, "(%s)*(%s)", c[0], alpha);
        *out = mech_fmt(M, "-((%s)*sin((%s)*atan(%s - (%s)*(%s - atan(%s)))))", c[2], c[1], ba, c[3], ba, ba);
    } else if (!strcmp(model, "force")) {
        static const char *ok[] = {"model", "lateral", NULL};
        const char *t = NULL, *x = NULL;
        if ((rc = mech_check_keys(M, tn, ok, what))) return rc;
        yaml_node_t *ln = mech_get(M, tn, "lateral");
        if (!ln)
            return err_at(M, tn, "%s: missing 'lateral' (model: force takes the lateral force along t2 at the contact point, "
                                 "an expression such as \"-Ca*SLIP(%s)\")",
                          what, J->name);
        if ((rc = mech_text_of(M, ln, "lateral", &t)) || (rc = mech_subst(M, t, ln, NULL, 0, &x))) return rc;
        *out = mech_fmt(M, "(%s)", x);
    } else {
        return err_at(M, mn ? mn : tn, "%s: 'model' must be linear, magic_formula or force", what);
    }
    return M->oom ? mech_oom(M) : 0;
}

/* the checks of the disc's body and of its configuration in the file */
static int wheel_checks(mech *M, joint *J, const yaml_node_t *val, const double nv[3], double *rv)
{
    marker *I = &M->mk[J->i];
    body *B = &M->b[I->body];
    yaml_node_t *in = mech_get(M, val, "i");
    if (M->planar) return err_at(M, mech_get(M, val, "type"), "joint '%s': a rolling wheel needs a spatial mechanism", J->name);
    if (B->kind == KIND_GROUND) return err_at(M, in, "joint '%s': the wheel marker '%s' is on the ground", J->name, I->name);
    if (B->kind == KIND_POINT)
        return err_at(M, in, "joint '%s': marker '%s' is on point mass '%s', which has no wheel axis (a disc needs a rigid body)",
                      J->name, I->name, B->name);
    if (B->flex || B->qf3)
        return err_at(M, in, "joint '%s': marker '%s' is on flexible body '%s' (a rolling wheel needs a rigid body)", J->name,
                      I->name, B->name);
    yaml_node_t *rn = mech_get(M, val, "radius");
    if (!rn) return err_at(M, val, "joint '%s': missing 'radius' (the disc's radius)", J->name);
    mech_set_track(M);
    const char *rt = NULL;
    int rc = mech_text_of(M, rn, "radius", &rt);
    if (!rc) rc = mech_eval_text(M, rt, rn, "radius", rv);
    if (rc) return rc;
    if (!(*rv > 0)) return err_at(M, rn, "joint '%s': the radius must be positive (it is %g)%s", J->name, *rv, mech_set_note(M));
    const double *a = &I->R0[6];
    double c = a[0] * nv[0] + a[1] * nv[1] + a[2] * nv[2];
    if (1 - c * c < MBL_MECH_WHEEL_FLAT * MBL_MECH_WHEEL_FLAT)
        return err_at(M, in,
                      "joint '%s': the wheel axis (z of marker '%s') is parallel to the plane's normal: the disc lies flat, "
                      "its contact point is undefined (|a x n| = %.3g < MBL_MECH_WHEEL_FLAT = %g)",
                      J->name, I->name, sqrt(fabs(1 - c * c)), MBL_MECH_WHEEL_FLAT);
    return 0;
}

int mech_wheel_joint(mech *M, joint *J, const yaml_node_t *val)
{
    const char *n[3], *p[3];
    double nv[3], rv = 0;
    int rc = plane_of(M, J, val, n, nv, p);
    if (!rc) rc = wheel_checks(M, J, val, nv, &rv);
    if (rc) return rc;
    marker *I = &M->mk[J->i];
    body *B = &M->b[I->body];
    const char *r = NULL;
    rc = mech_text_of(M, mech_get(M, val, "radius"), "radius", &r);
    if (rc) return rc;
    r = mech_fmt(M, "(%s)", r);
    int line = J->line, col = J->col;
    const char *base = mech_fmt(M, "_wheel_%s", J->name);
    char *const *a = I->ax[2], *const *o = mech_mk_p(M, J->i);
    /* c = n . a, s = |a x n|, u, t1, t2 */
    const char *c = mech_fmt(M, "%s_c", base), *s = mech_fmt(M, "%s_s", base);
    if ((rc = mech_add_var(M, c, mech_fmt(M, "(%s*%s + %s*%s + %s*%s)", n[0], a[0], n[1], a[1], n[2], a[2]), line, col)))
        return rc;
    if ((rc = mech_add_var(M, s, mech_fmt(M, "sqrt(1 - %s^2)", c), line, col))) return rc;
    const char *ut[3], *t1t[3], *t2t[3], *u[3], *t1[3], *t2[3];
    for (int k = 0; k < 3; k++) {
        int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
        ut[k] = mech_fmt(M, "(%s - %s*%s)/%s", n[k], c, a[k], s);
        t1t[k] = mech_fmt(M, "(%s*%s - %s*%s)/%s", a[k1], n[k2], a[k2], n[k1], s);
        t2t[k] = mech_fmt(M, "(%s - %s*%s)/%s", a[k], c, n[k], s);
    }
    if ((rc = vars3(M, mech_fmt(M, "%s_u", base), ut, u, line, col))) return rc;
    if ((rc = vars3(M, mech_fmt(M, "%s_t", base), t1t, t1, line, col))) return rc;
    if ((rc = vars3(M, mech_fmt(M, "%s_l", base), t2t, t2, line, col))) return rc;
    /* v_P = der(o) - r w x u */
    const char *vp[3];
    for (int k = 0; k < 3; k++) {
        int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
        vp[k] = mech_fmt(M, "der(%s) - %s*(%s*%s - %s*%s)", o[k], r, B->w[k1], u[k2], B->w[k2], u[k1]);
    }
    if ((rc = vars3(M, mech_fmt(M, "%s_v", base), vp, vp, line, col))) return rc;
    const char *nm = mech_fmt(M, "joint %s (rolling_wheel)", J->name);
    const char *hol = mech_fmt(M, "%s*(%s - %s) + %s*(%s - %s) + %s*(%s - %s) - %s*%s", n[0], o[0], p[0], n[1], o[1], p[1],
                               n[2], o[2], p[2], r, s);
    J->c0 = M->src->constraints.n; /* no reaction measures (FX .. TZ refuse a rolling wheel) */
    if ((rc = mech_con(M, nm, hol, line, col))) return rc;
    const char *lon = mech_fmt(M, "%s*%s + %s*%s + %s*%s", t1[0], vp[0], t1[1], vp[1], t1[2], vp[2]);
    const char *lat = mech_fmt(M, "%s*%s + %s*%s + %s*%s", t2[0], vp[0], t2[1], vp[1], t2[2], vp[2]);
    if ((rc = mech_push(M, &M->src->nonholonomic, mech_fmt(M, "%s longitudinal", nm), lon, line, col))) return rc;
    yaml_node_t *tn = mech_get(M, val, "tire");
    if (!tn) return mech_push(M, &M->src->nonholonomic, mech_fmt(M, "%s lateral", nm), lat, line, col);
    /* the tire: lateral force F t2 at P, alpha = atan(t2 . v_P / sqrt((t1 . der(o))^2 + vmin^2)) */
    const char *alpha = mech_fmt(M, "%s_alpha", base), *F = NULL;
    const char *vx = mech_fmt(M, "(%s*der(%s) + %s*der(%s) + %s*der(%s))", t1[0], o[0], t1[1], o[1], t1[2], o[2]);
    if ((rc = mech_add_var(M, alpha, mech_fmt(M, "atan((%s)/sqrt(%s^2 + %s))", lat, vx, mech_num(M, MBL_MECH_TIRE_MIN_SPEED * MBL_MECH_TIRE_MIN_SPEED)), line, col)))
        return rc;
    if ((rc = tire_law(M, J, tn, alpha, &F))) return rc;
    /* a note at a point where the wheel (nearly) stands still: the regularisation's force */
    char lim[300];
    snprintf(lim, sizeof lim,
             "%g (MBL_MECH_TIRE_SLOW_NOTE): the lateral force is the regularisation's (a damping Ca/vmin of the "
             "slip speed, vmin = %g), and so are the fast modes it makes",
             MBL_MECH_TIRE_SLOW_NOTE, MBL_MECH_TIRE_MIN_SPEED);
    if ((rc = mech_validity(M, mech_fmt(M, "joint '%s' (tire): its wheel nearly at a standstill, the share "
                                           "vmin/sqrt(u^2 + vmin^2) of the slip angle's regularisation", J->name),
                            mech_fmt(M, "%s/sqrt(%s^2 + %s)", mech_num(M, MBL_MECH_TIRE_MIN_SPEED), vx,
                                     mech_num(M, MBL_MECH_TIRE_MIN_SPEED * MBL_MECH_TIRE_MIN_SPEED)),
                            lim, line, col)))
        return rc;
    const char *Fn = mech_fmt(M, "%s_Fy", base);
    if ((rc = mech_add_var(M, Fn, F, line, col))) return rc;
    const char *f[3], *arm[3];
    for (int k = 0; k < 3; k++) {
        f[k] = mech_fmt(M, "%s*%s", Fn, t2[k]);
        arm[k] = mech_fmt(M, "(%s - %s - %s*%s)", o[k], B->r[k], r, u[k]);
        add_term(M, &B->F[k], f[k]);
    }
    for (int k = 0; k < 3; k++) {
        int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
        add_term(M, &B->N[k], mech_fmt(M, "(%s*%s - %s*%s)", arm[k1], f[k2], arm[k2], f[k1]));
    }
    return M->oom ? mech_oom(M) : 0;
}
