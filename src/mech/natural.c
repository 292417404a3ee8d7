/* Natural-coordinate bodies (`type: natural`; source 002 Sec. 2, Eq. 4-13, after Garcia de Jalon):
 * a rigid body described by the global coordinates of its points (planar: two points A, B), which
 * bodies share by name (a point of two bodies is one set of coordinates, the source's joint), with
 * a constant mass matrix and the rigid-body constraints generated.
 *
 * Planar: with d = r_B - r_A and its body-frame value d0 = s_B - s_A, L2 = d0 . d0, every point of
 * the body is r_P = r_A + (rho_x/L) (r_B - r_A) + (rho_y/L) R (r_B - r_A) (R the quarter turn, rho
 * the point from A in the axes of d0), so T = 1/2 qdot^T M qdot with the constant
 *   M_AA = (m - 2 m c.d0/L2 + J/L2) I,  M_AB = (m c.d0/L2 - J/L2) I + (m (c x d0)_z'/L2) R,
 *   M_BB = (J/L2) I,  c = cm - s_A,  J = Izz + m c.c  (Izz about the centre of mass),
 * the uniform rod's m/3, m/6, m/3 of source 002 Eq. 47. The constraint is d.d = L2. The body's
 * rotation is A = [d, R d] [d0, R d0]^-1 (linear in the coordinates: c = d.d0/L2, s = (d0 x d)/L2),
 * its origin r_A - A s_A, its angle the file's plus the continuous atan2 of d against d in the
 * file's configuration; markers, measures and gravity use these texts as a rigid body's, and a force
 * F at the origin and a moment N give Q_A = F + G - N grad(theta), Q_B = -G + N grad(theta) with
 * G = d(A s_A)/dd ^T F and grad(theta) = (-d_y, d_x)/(d.d). See docs/mechanism-reference.md,
 * "Natural-coordinate bodies". */
#include "mech/mech_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* a - b (texts; "0" terms left out) */
const char *mech_nat_sub(mech *M, const char *a, const char *b)
{
    const char *t[2] = {mech_tx_is0(a) ? NULL : a, mech_tx_is0(b) ? NULL : b};
    static const int sg[2] = {1, -1};
    const char *s = mech_tx_sum(M, 2, t, sg);
    return strcmp(s, "0") ? mech_fmt(M, "(%s)", s) : "0";
}

/* a*b + c*d as a text ("0" products left out) */
const char *mech_nat_dot2(mech *M, const char *a, const char *b, const char *c, const char *d, int sign)
{
    const char *t[2] = {mech_tx_mul(M, a, b), mech_tx_mul(M, c, d)};
    const int sg[2] = {1, sign};
    const char *s = mech_tx_sum(M, 2, t, sg);
    return strcmp(s, "0") ? mech_fmt(M, "(%s)", s) : "0";
}

/* a text over L2 ("0" stays "0") */
const char *mech_nat_over(mech *M, const char *a, const char *L2)
{
    return mech_tx_is0(a) ? "0" : mech_fmt(M, "%s/%s", a, L2);
}

int mech_natural_point(mech *M, body *B, const yaml_node_t *key, const double x0[3], const char *const v0[3], int unit,
                       int *idx)
{
    const char *name = mech_sc(key);
    const char *kind = unit ? "vector" : "point";
    int dim = M->planar ? 2 : 3;
    int i = mech_ns_find(&M->hnp, name, strlen(name));
    if (i >= 0) {
        if (M->npt[i].body == B - M->b || M->npt[i].unit != unit)
            return err_at(M, key, "body '%s': %s '%s' given twice", B->name, kind, name);
        *idx = i;
        return 0;
    }
    if (!mech_valid_name(name))
        return err_at(M, key, "body '%s': %s '%s': not a valid name (letters, digits, _)", B->name, kind, name);
    if (mech_find_marker(M, name, strlen(name)) >= 0)
        return err_at(M, key, "body '%s': %s '%s': a marker has this name", B->name, kind, name);
    if (M->nnp == M->cnp) {
        int cap = M->cnp ? 2 * M->cnp : 16;
        mech_point *p = mbl_realloc_array(M->npt, (size_t)cap, sizeof *p);
        if (!p) return mech_oom(M);
        M->npt = p;
        M->cnp = cap;
    }
    if (mech_ns_add(&M->hnp, name, M->nnp)) return mech_oom(M);
    mech_point *P = &M->npt[M->nnp];
    memset(P, 0, sizeof *P);
    P->name = name;
    P->body = (int)(B - M->b);
    P->unit = unit;
    static const char axn[3] = {'x', 'y', 'z'};
    int rc = 0;
    for (int k = 0; k < 3; k++) P->c[k] = "0";
    for (int k = 0; k < dim && !rc; k++) {
        P->c[k] = mech_fmt(M, "%s_%c", name, axn[k]);
        rc = mech_push_at(M, &M->src->coordinates, P->c[k], mech_num(M, x0[k]), key);
        if (!rc && v0[k]) rc = mech_push_at(M, &M->src->velocities, P->c[k], v0[k], key);
    }
    /* a unit vector's length, once (bodies sharing it share the constraint) */
    if (!rc && unit)
        rc = mech_push(M, &M->src->constraints, mech_fmt(M, "vector %s (natural coordinates: unit length)", name),
                       mech_fmt(M, "%s^2 + %s^2 + %s^2 - 1", P->c[0], P->c[1], P->c[2]), B->line, B->col);
    *idx = M->nnp++;
    return rc;
}

/* the body's points: (name: [x, y]) in body axes; A and B the first two; their global positions
 * in the file from the body's `position` and `angle` (and rates from `velocity`,
 * `angular_velocity`) */
static int natural_points(mech *M, body *B, const yaml_node_t *val, const char *what, const char *s[][3], int *np)
{
    yaml_node_t *pn = mech_get(M, val, "points");
    int need = 2;
    int cnt = pn && pn->type == YAML_MAPPING_NODE ? (int)(pn->data.mapping.pairs.top - pn->data.mapping.pairs.start) : 0;
    if (cnt != need)
        return err_at(M, pn ? pn : val, "%s: 'points' must name %d points with their positions in body axes "
                      "(planar: A and B, [x, y])", what, need);
    double p0[3] = {0, 0, 0}, a0 = 0;
    const char *v0[3] = {NULL, NULL, NULL}, *w0 = NULL;
    yaml_node_t *n;
    int rc = 0;
    mech_set_track(M);
    if ((n = mech_get(M, val, "position")) && (rc = mech_eval_vec(M, n, 2, "position", p0))) return rc;
    if ((n = mech_get(M, val, "angle"))) {
        const char *t;
        if ((rc = mech_text_of(M, n, "angle", &t)) || (rc = mech_eval_text(M, t, n, "angle", &a0))) return rc;
    }
    if ((n = mech_get(M, val, "velocity")) && (rc = mech_vec_of(M, n, 2, "velocity", v0))) return rc;
    if ((n = mech_get(M, val, "angular_velocity")) && (rc = mech_text_of(M, n, "angular_velocity", &w0))) return rc;
    B->R0[0] = B->R0[4] = cos(a0), B->R0[1] = sin(a0), B->R0[3] = -sin(a0); /* the file's rotation */
    double loc[2][2]; /* the points in body axes, for the check that they differ */
    for (int i = 0; i < cnt && !rc; i++) {
        yaml_node_pair_t *p = &pn->data.mapping.pairs.start[i];
        yaml_node_t *k = mech_node(M->doc, p->key), *v = mech_node(M->doc, p->value);
        if (!mech_is_scalar(k)) return err_at(M, k, "%s: a point name must be a plain word", what);
        char w[200];
        mech_snprintf(w, sizeof w, "%s: point '%s'", what, mech_sc(k));
        s[i][2] = "0";
        double sl[3] = {0, 0, 0}, x0[3] = {0, 0, 0};
        if ((rc = mech_vec_of(M, v, 2, w, s[i])) || (rc = mech_eval_vec(M, v, 2, w, sl))) return rc;
        loc[i][0] = sl[0], loc[i][1] = sl[1];
        double gx = cos(a0) * sl[0] - sin(a0) * sl[1], gy = sin(a0) * sl[0] + cos(a0) * sl[1];
        x0[0] = p0[0] + gx, x0[1] = p0[1] + gy;
        const char *vp[3] = {NULL, NULL, NULL};
        if (v0[0] || w0)
            for (int c = 0; c < 2; c++) {
                const char *t[2] = {v0[c], w0 ? mech_fmt(M, "(%s)*%s", w0, mech_num(M, c ? gx : -gy)) : NULL};
                static const int sg[2] = {1, 1};
                vp[c] = mech_tx_sum(M, 2, t, sg);
            }
        if ((rc = mech_natural_point(M, B, k, x0, vp, 0, &B->natp[i]))) return rc;
    }
    /* B - A gives the body its direction and length (M and the constraint divide by L^2): two points
     * at one place (relative to their size, as the spatial body's frame is judged) are no body */
    double L = hypot(loc[1][0] - loc[0][0], loc[1][1] - loc[0][1]);
    if (!(L > MBL_MECH_FRAME_TOL * fmax(hypot(loc[0][0], loc[0][1]), hypot(loc[1][0], loc[1][1]))))
        return err_at(M, pn, "%s: its points %s and %s are at one place in body axes (|B - A| = %.3g): no direction, "
                      "no length", what, mech_sc(mech_node(M->doc, pn->data.mapping.pairs.start[0].key)),
                      mech_sc(mech_node(M->doc, pn->data.mapping.pairs.start[1].key)), L);
    *np = cnt;
    return rc;
}

/* the rotation texts, origin, angle and angular velocity of planar body B from its points A, B
 * (local positions sa, sb) */
static int natural_planar_frame(mech *M, body *B, const char *const sa[3], const char *const sb[3])
{
    const mech_point *PA = &M->npt[B->natp[0]], *PB = &M->npt[B->natp[1]];
    const char *l[2] = {mech_nat_sub(M, sb[0], sa[0]), mech_nat_sub(M, sb[1], sa[1])};
    const char *d[2] = {mech_nat_sub(M, PB->c[0], PA->c[0]), mech_nat_sub(M, PB->c[1], PA->c[1])};
    const char *L2 = mech_nat_dot2(M, l[0], l[0], l[1], l[1], 1);
    B->nat_L2 = L2;
    for (int k = 0; k < 2; k++) B->nat_l[k] = l[k];
    int rc = mech_push(M, &M->src->constraints, mech_fmt(M, "body %s (natural coordinates: distance %s-%s)", B->name,
                                                         PA->name, PB->name),
                       mech_fmt(M, "%s - %s", mech_nat_dot2(M, d[0], d[0], d[1], d[1], 1), L2), B->line, B->col);
    const char *c = mech_fmt(M, "_c_%s", B->name), *s = mech_fmt(M, "_s_%s", B->name);
    if (!rc) rc = mech_add_var(M, c, mech_nat_over(M, mech_nat_dot2(M, d[0], l[0], d[1], l[1], 1), L2), B->line, B->col);
    if (!rc) rc = mech_add_var(M, s, mech_nat_over(M, mech_nat_dot2(M, d[1], l[0], d[0], l[1], -1), L2), B->line, B->col);
    const char *At[9] = {c, mech_fmt(M, "(-%s)", s), "0", s, c, "0", "0", "0", "1"};
    for (int k = 0; k < 9; k++) B->A[k] = (char *)At[k];
    /* origin r_A - A s_A */
    for (int k = 0; k < 2 && !rc; k++) {
        B->r[k] = mech_fmt(M, "_o_%s_%d", B->name, k + 1);
        const char *As = mech_nat_dot2(M, At[3 * k], sa[0], At[3 * k + 1], sa[1], 1);
        rc = mech_add_var(M, B->r[k], strcmp(As, "0") ? mech_fmt(M, "%s - %s", PA->c[k], As) : PA->c[k], B->line, B->col);
    }
    B->r[2] = "0";
    /* the angle: the file's plus the turn of d from its value in the file's configuration */
    double a0 = atan2(B->R0[1], B->R0[0]);
    double l0[2];
    mech_set_track(M);
    if (!rc) rc = mech_eval_text(M, l[0], NULL, "point", &l0[0]);
    if (!rc) rc = mech_eval_text(M, l[1], NULL, "point", &l0[1]);
    if (rc) return rc;
    double g0[2] = {cos(a0) * l0[0] - sin(a0) * l0[1], sin(a0) * l0[0] + cos(a0) * l0[1]};
    const char *gx = mech_num(M, g0[0]), *gy = mech_num(M, g0[1]);
    B->th = mech_fmt(M, "_th_%s", B->name);
    rc = mech_add_var(M, B->th, mech_fmt(M, "%s + atan2(%s*%s - %s*%s, %s*%s + %s*%s)", mech_num(M, a0), gx, d[1], gy, d[0],
                                         gx, d[0], gy, d[1]), B->line, B->col);
    B->w[0] = B->w[1] = "0";
    B->w[2] = mech_fmt(M, "der(%s)", B->th);
    return rc;
}

/* the point markers: each point a marker of its name on the body that made it */
static int natural_markers(mech *M, int bi, const yaml_node_t *val, const char *s[][3], int np)
{
    body *B = &M->b[bi];
    yaml_node_t *pn = mech_get(M, val, "points");
    for (int i = 0; i < np; i++) {
        mech_point *P = &M->npt[B->natp[i]];
        if (P->body != bi) continue;
        marker *K;
        yaml_node_t *k = mech_node(M->doc, pn->data.mapping.pairs.start[i].key);
        int rc = mech_new_marker(M, P->name, bi, k, &K);
        if (rc) return rc;
        for (int c = 0; c < 3; c++) K->s[c] = s[i][c], K->p[c] = (char *)P->c[c];
        K->ang = "0";
        K->phi = B->th;
        const char *axt[3][3] = {{B->A[0], B->A[3], "0"}, {B->A[1], B->A[4], "0"}, {"0", "0", "1"}};
        for (int a = 0; a < 3; a++)
            for (int c = 0; c < 3; c++) K->ax[a][c] = (char *)axt[a][c];
    }
    return 0;
}

int mech_natural_body(mech *M, const yaml_node_t *key, const yaml_node_t *val, const char *what, const char *const *ok,
                      int *bi)
{
    int rc = mech_check_keys(M, val, ok, what);
    if (rc) return rc;
    body *B = mech_new_body(M, mech_sc(key), key);
    if (!B) return mech_oom(M);
    *bi = M->nb - 1;
    B->kind = M->planar ? KIND_PLANAR : KIND_SPATIAL;
    if ((rc = mech_body_inertia(M, B, val, what))) return rc;
    yaml_node_t *cn = mech_get(M, val, "cm");
    return cn ? mech_vec_of(M, cn, M->planar ? 2 : 3, "cm", B->cm) : 0;
}

int mech_read_natural(mech *M, const yaml_node_t *key, const yaml_node_t *val)
{
    const char *name = mech_sc(key);
    char what[200];
    mech_snprintf(what, sizeof what, "body '%s'", name);
    if (M->relative) return err_at(M, key, "%s: natural coordinates need coordinates: absolute", what);
    if (!M->planar) return mech_read_natural3(M, key, val, what);
    static const char *okp[] = {"type", "mass", "inertia", "cm", "points", "position", "angle", "velocity",
                                "angular_velocity", "markers", NULL};
    int bi, rc = mech_natural_body(M, key, val, what, okp, &bi);
    if (rc) return rc;
    body *B = &M->b[bi];
    const char *s[4][3];
    int np = 0;
    if ((rc = natural_points(M, B, val, what, s, &np))) return rc;
    B->nat = np;
    if (B->natp[0] == B->natp[1]) return err_at(M, key, "%s: its two points are one", what);
    for (int k = 0; k < 3; k++) B->nat_sa[k] = s[0][k];
    if ((rc = natural_planar_frame(M, B, s[0], s[1]))) return rc;
    if ((rc = natural_markers(M, bi, val, s, np))) return rc;
    return mech_add_markers(M, bi, mech_get(M, val, "markers"));
}

/* planar: T = 1/2 qdot^T M qdot with the constant M (the opening comment); Q of the accumulated
 * force and moment */
int mech_natural_energy(mech *M, body *B, const char **Tb)
{
    if (!M->planar) return mech_natural3_energy(M, B, Tb);
    const mech_point *PA = &M->npt[B->natp[0]], *PB = &M->npt[B->natp[1]];
    const char *L2 = B->nat_L2, *m = mech_fmt(M, "(%s)", B->mass);
    const char *const *l = B->nat_l;
    const char *c[2] = {mech_nat_sub(M, B->cm[0], B->nat_sa[0]), mech_nat_sub(M, B->cm[1], B->nat_sa[1])};
    const char *cd = mech_nat_dot2(M, c[0], l[0], c[1], l[1], 1), *cx = mech_nat_dot2(M, c[1], l[0], c[0], l[1], -1);
    const char *J = mech_fmt(M, "(%s + %s*%s)", B->I[2], m, mech_nat_dot2(M, c[0], c[0], c[1], c[1], 1));
    const char *mcd = mech_tx_is0(cd) ? "0" : mech_fmt(M, "%s*%s", m, cd);
    const char *Maa = mech_fmt(M, "(%s - 2*%s + %s)", m, mech_nat_over(M, mcd, L2), mech_nat_over(M, J, L2));
    const char *Mab = mech_fmt(M, "(%s - %s)", mech_nat_over(M, mcd, L2), mech_nat_over(M, J, L2));
    const char *Mr = mech_tx_is0(cx) ? "0" : mech_nat_over(M, mech_fmt(M, "%s*%s", m, cx), L2);
    const char *Mbb = mech_nat_over(M, J, L2);
    const char *da[2], *db[2];
    for (int k = 0; k < 2; k++) da[k] = mech_fmt(M, "der(%s)", PA->c[k]), db[k] = mech_fmt(M, "der(%s)", PB->c[k]);
    const char *T = mech_fmt(M, "0.5*%s*(%s^2 + %s^2) + %s*(%s*%s + %s*%s) + 0.5*%s*(%s^2 + %s^2)", Maa, da[0], da[1],
                             Mab, da[0], db[0], da[1], db[1], Mbb, db[0], db[1]);
    if (strcmp(Mr, "0")) T = mech_fmt(M, "%s + %s*(%s*%s - %s*%s)", T, Mr, da[1], db[0], da[0], db[1]);
    *Tb = T;
    return 0;
}

int mech_natural_forces(mech *M, body *B)
{
    if (!M->planar) return mech_natural3_forces(M, B);
    const mech_point *PA = &M->npt[B->natp[0]], *PB = &M->npt[B->natp[1]];
    int anyF = B->F[0] || B->F[1], anyN = B->N[2] != NULL;
    if (!anyF && !anyN) return 0;
    const char *F[2] = {B->F[0] ? mech_fmt(M, "(%s)", B->F[0]) : "0", B->F[1] ? mech_fmt(M, "(%s)", B->F[1]) : "0"};
    /* G = d(A s_A)/dd ^T F: d(A s_A)/dd = [[al, be], [-be, al]], al = (l . s_A)/L2, be = (l x s_A)_z/L2 */
    const char *const *l = B->nat_l, *const *sa = B->nat_sa, *L2 = B->nat_L2;
    const char *al = mech_nat_over(M, mech_nat_dot2(M, l[0], sa[0], l[1], sa[1], 1), L2);
    const char *be = mech_nat_over(M, mech_nat_dot2(M, l[1], sa[0], l[0], sa[1], -1), L2);
    const char *G[2] = {mech_nat_dot2(M, al, F[0], be, F[1], -1), mech_nat_dot2(M, be, F[0], al, F[1], 1)};
    const char *gt[2] = {"0", "0"};
    if (anyN) {
        const char *d[2] = {mech_nat_sub(M, PB->c[0], PA->c[0]), mech_nat_sub(M, PB->c[1], PA->c[1])};
        const char *dd = mech_nat_dot2(M, d[0], d[0], d[1], d[1], 1), *N = mech_fmt(M, "(%s)", B->N[2]);
        gt[0] = mech_fmt(M, "(-%s*%s/%s)", N, d[1], dd);
        gt[1] = mech_fmt(M, "(%s*%s/%s)", N, d[0], dd);
    }
    mech_point *P[2] = {&M->npt[B->natp[0]], &M->npt[B->natp[1]]};
    for (int k = 0; k < 2; k++) {
        const char *ta[4] = {P[0]->Q[k], mech_tx_is0(F[k]) ? NULL : F[k], mech_tx_is0(G[k]) ? NULL : G[k],
                             mech_tx_is0(gt[k]) ? NULL : gt[k]};
        static const int sa_[4] = {1, 1, 1, -1}, sb_[4] = {1, 1, -1, 1};
        P[0]->Q[k] = mech_tx_sumz(M, 4, ta, sa_);
        ta[0] = P[1]->Q[k], ta[1] = NULL;
        P[1]->Q[k] = mech_tx_sumz(M, 4, ta, sb_);
    }
    return M->oom ? mech_oom(M) : 0;
}

int mech_natural_names(mech *M)
{
    const mbl_src_list *l = &M->src->coordinates;
    nameset seen;
    memset(&seen, 0, sizeof seen);
    int rc = 0;
    for (int i = 0; i < l->n && !rc; i++) {
        const mbl_src_item *it = &l->items[i];
        int j = mech_ns_find(&seen, it->key, strlen(it->key));
        if (j >= 0)
            rc = mbl_error(M->st, MBL_EMODEL,
                           "%s:%d:%d: coordinate '%s' is made twice (at %d:%d too): a point or vector of a natural body "
                           "and another body or point have names that clash; rename one", M->file, it->key_line,
                           it->key_col, it->key, l->items[j].key_line, l->items[j].key_col);
        else if (mech_ns_add(&seen, it->key, i))
            rc = mech_oom(M);
    }
    mech_ns_free(&seen);
    return rc;
}

int mech_natural_flush(mech *M)
{
    int rc = 0;
    for (int i = 0; i < M->nnp && !rc; i++) {
        const mech_point *P = &M->npt[i];
        const body *B = &M->b[P->body];
        for (int k = 0; k < 3 && !rc; k++)
            if (P->Q[k]) rc = mech_push(M, &M->src->forces, P->c[k], P->Q[k], B->line, B->col);
    }
    return rc;
}
