/* `trim:` of a mechanism (linearize.at: trim; docs/mechanism-reference.md, "Steady turns (trim)"):
 * the targets and free inputs of the equation level (model/trim.c) with measures in the targets'
 * keys, and `turn: <body>`, the steady motion of a vehicle turning about the vertical:
 *
 * Every body is at rest in a frame that turns at the rate W = n . w_b about the vertical n (w_b
 * the named body's global angular velocity; n the unit vector opposite the sum of the gravity
 * elements' g, z without gravity, as the rolling wheel's default plane), but for a spin about an
 * axis fixed in that frame (a wheel on its axle, constant rate). Then every vector fixed in the
 * turning frame turns at W n: the velocity of a body's origin and the body's global angular
 * velocity w, so the accelerations of the steady motion are
 *   der(der(r)) = W n x der(r),  der(w) = W n x w,
 * the second on Euler parameters through der(e) = 1/2 E(e)^T w (|e| = 1, E = [-e, e~ + e0 I]):
 *   der(der(e)) = 1/2 E(der(e))^T w + 1/2 E(e)^T (W n x w)
 * (which keeps e . der(der(e)) + |der(e)|^2 = 0); a planar body's angle has der(der(th)) = 0.
 * These go to trim.accelerations with every coordinate solved (not held: the turn's centre and
 * phase are directions nothing fixes, kept at the guess by the minimum-norm steps). */
#include <math.h>
#include <string.h>

#include "mech/mech_internal.h"

/* the unit vertical n: opposite the gravity elements' sum, else z */
static int turn_up(mech *M, const yaml_node_t *at, double nv[3])
{
    double g[3] = {0, 0, 0};
    for (int k = 0; k < 3; k++) {
        if (!M->grav[k]) continue;
        int rc = mech_eval_text(M, M->grav[k], at, "gravity", &g[k]);
        if (rc) return rc;
    }
    double gl = sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
    for (int k = 0; k < 3; k++) nv[k] = gl > 0 ? -g[k] / gl : k == 2;
    return 0;
}

/* the accelerations of every body of the steady turn at the yaw rate of body `tb` */
static int turn_accelerations(mech *M, const yaml_node_t *kn, const yaml_node_t *vn)
{
    if (!mech_is_scalar(vn)) return err_at(M, vn, "trim.turn must name a body (the one whose yaw rate the turn has)");
    int tb = mech_find_body(M, mech_sc(vn));
    if (tb < 0 || M->b[tb].kind == KIND_GROUND)
        return err_at(M, vn, "trim.turn: '%s' is not a body of the mechanism", mech_sc(vn));
    if (M->relative)
        return err_at(M, kn, "trim.turn needs 'coordinates: absolute' (the turn's accelerations are written for the "
                             "bodies' positions and orientations)");
    if (M->b[tb].kind == KIND_POINT) return err_at(M, vn, "trim.turn: body '%s' is a point mass: it has no yaw rate", mech_sc(vn));
    double nv[3];
    int rc = turn_up(M, vn, nv);
    if (rc) return rc;
    const char *n[3];
    for (int k = 0; k < 3; k++) n[k] = mech_tx_num(M, nv[k]);
    const body *T = &M->b[tb];
    const char *W = M->planar ? mech_fmt(M, "der(%s)", T->th) : mech_dot3(M, (char *const *)n, T->w);
    const char *Wn[3];
    for (int k = 0; k < 3; k++) Wn[k] = mech_tx_mul(M, mech_fmt(M, "(%s)", W), n[k]);
    int line, col;
    mech_pos_of(vn, &line, &col);
    for (int bi = 0; bi < M->nb && !rc; bi++) {
        body *B = &M->b[bi];
        if (B->kind == KIND_GROUND) continue;
        if (B->nat)
            return err_at(M, vn, "trim.turn: body '%s' has natural coordinates: the turn is written for a body's "
                          "position and angle", B->name);
        if (B->flex)
            return err_at(M, vn, "trim.turn: body '%s' is flexible: the turn's steady motion is written for rigid bodies",
                          B->name);
        const char *dr[3], *ar[3];
        for (int k = 0; k < 3; k++) dr[k] = mech_tx_is0(B->r[k]) ? NULL : mech_fmt(M, "der(%s)", B->r[k]);
        mech_tx_cross(M, Wn, dr, ar);
        for (int k = 0; k < (M->planar ? 2 : 3) && !rc; k++)
            if (!mech_tx_is0(B->r[k])) rc = mech_push(M, &M->src->trim_acc, B->r[k], ar[k] ? ar[k] : "0", line, col);
        if (B->kind == KIND_PLANAR && !rc) rc = mech_push(M, &M->src->trim_acc, B->th, "0", line, col);
        if (B->kind != KIND_SPATIAL || rc) continue;
        if (B->eul)
            return err_at(M, vn, "trim.turn: body '%s' has orientation euler313: the turn is written for Euler parameters",
                          B->name);
        const char *d[4], *w[3], *al[3], *Q1[4], *Q2[4];
        for (int k = 0; k < 4; k++) d[k] = mech_fmt(M, "der(%s)", B->e[k]);
        for (int k = 0; k < 3; k++) w[k] = B->w[k];
        mech_tx_cross(M, Wn, w, al);
        for (int k = 0; k < 3; k++)
            if (!al[k]) al[k] = "0";
        mech_tx_euler_forces(M, d, w, 1, Q1); /* 2 E(der(e))^T w */
        const char *e[4] = {B->e[0], B->e[1], B->e[2], B->e[3]};
        mech_tx_euler_forces(M, e, al, 1, Q2);
        for (int k = 0; k < 4 && !rc; k++)
            rc = mech_push(M, &M->src->trim_acc, B->e[k], mech_fmt(M, "0.25*(%s + %s)", Q1[k], Q2[k]), line, col);
    }
    M->src->trim_acc_solve = 1;
    return rc ? rc : M->oom ? mech_oom(M) : 0;
}

/* targets {expression with measures: value}: the key as written stays the label (key2) */
static int trim_targets(mech *M, const yaml_node_t *m)
{
    if (m->type != YAML_MAPPING_NODE || m->data.mapping.pairs.start == m->data.mapping.pairs.top)
        return err_at(M, m, "trim.targets must be a mapping of expression: value");
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        yaml_node_t *k = mech_node(M->doc, p->key), *v = mech_node(M->doc, p->value);
        if (!mech_is_scalar(k) || k->data.scalar.length == 0) return err_at(M, k, "in trim.targets: a key must be an expression");
        for (int i = 0; i < M->src->trim_targets.n; i++)
            if (!strcmp(M->src->trim_targets.items[i].key2, mech_sc(k))) return err_at(M, k, "trim.targets: '%s' named twice", mech_sc(k));
        const char *t = NULL, *x = NULL;
        int rc = mech_text_of(M, v, "trim.targets", &t);
        if (!rc) rc = mech_subst(M, mech_sc(k), k, NULL, 0, &x);
        if (rc) return rc;
        int line, col;
        mech_pos_of(v, &line, &col);
        if ((rc = mech_push(M, &M->src->trim_targets, x, t, line, col))) return rc;
        mbl_src_item *it = &M->src->trim_targets.items[M->src->trim_targets.n - 1];
        mech_pos_of(k, &it->key_line, &it->key_col);
        if (!(it->key2 = mech_dup_s(mech_sc(k)))) return mech_oom(M);
    }
    return 0;
}

int mech_read_trim(mech *M, const yaml_node_t *tn)
{
    if (!tn) return 0;
    int rc = mech_want_map(M, tn, "'trim'");
    static const char *ok[] = {"targets", "free", "turn", "accelerations", NULL};
    if (!rc) rc = mech_check_keys(M, tn, ok, "trim");
    if (rc) return rc;
    yaml_node_t *t = mech_get(M, tn, "targets"), *f = mech_get(M, tn, "free"), *u = mech_get(M, tn, "turn");
    yaml_node_t *a = mech_get(M, tn, "accelerations");
    if (!t) return err_at(M, tn, "'trim' needs 'targets' (expression: value)");
    if (u && a) return err_at(M, a, "trim: give 'turn' or 'accelerations', not both (the turn writes every body's accelerations)");
    if ((rc = trim_targets(M, t))) return rc;
    if (f && !(f->type == YAML_SCALAR_NODE && f->data.scalar.length == 0)) {
        if (f->type != YAML_SEQUENCE_NODE) return err_at(M, f, "trim.free must be a list of input names");
        for (yaml_node_item_t *p = f->data.sequence.items.start; p < f->data.sequence.items.top && !rc; p++) {
            yaml_node_t *v = mech_node(M->doc, *p);
            if (!mech_is_scalar(v)) return err_at(M, v, "trim.free: an input name must be a plain word");
            rc = mech_push_at(M, &M->src->trim_free, NULL, mech_sc(v), v);
        }
        if (rc) return rc;
    }
    if (u) return turn_accelerations(M, tn, u);
    if (!a || (a->type == YAML_SCALAR_NODE && a->data.scalar.length == 0)) return 0;
    if (a->type != YAML_MAPPING_NODE) return err_at(M, a, "trim.accelerations must be a mapping of coordinate: expression");
    for (yaml_node_pair_t *p = a->data.mapping.pairs.start; p < a->data.mapping.pairs.top && !rc; p++) {
        yaml_node_t *k = mech_node(M->doc, p->key), *v = mech_node(M->doc, p->value);
        const char *x = NULL;
        if (!mech_is_scalar(k)) return err_at(M, k, "trim.accelerations: a key must be a coordinate name");
        rc = mech_text_of(M, v, "trim.accelerations", &x);
        if (!rc) rc = mech_subst(M, x, v, NULL, 0, &x);
        if (!rc) rc = mech_push_at(M, &M->src->trim_acc, mech_sc(k), x, v);
        if (!rc) mech_pos_of(k, &M->src->trim_acc.items[M->src->trim_acc.n - 1].key_line,
                             &M->src->trim_acc.items[M->src->trim_acc.n - 1].key_col);
    }
    return rc;
}
