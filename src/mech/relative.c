/* `coordinates: relative`: joint coordinates on a spanning tree, cut joints closing the loops,
 * recursive kinematics (source 003 Ch. 2-4; docs/mechanism-reference.md, "Relative coordinates").
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

#include "core/vec3.h"
#include "mech/mech_internal.h"
#include "mech/relative.h"
#include "mech/tree.h"

/* ---- joint kinds ---- */

int mech_rel_kind(mech *M, const joint *J)
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

int mech_rel_ncoord(mech *M, int kind)
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
int mech_rel_marker_file(mech *M, int m, double p[3], double R[9], double *phi)
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
    mat3_vec_add(r0, B->R0, s0, p);
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
    double a[3], wa[3];
    vec3_sub(pm, r0, a);
    vec3_cross(w, a, wa);
    for (int k = 0; k < 3; k++) v[k] += wa[k];
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
    int kind = mech_rel_kind(M, J);
    J->nq = mech_rel_ncoord(M, kind);
    if (!J->nq) return 0;
    /* initial values from the file's configuration: marker i relative to marker j */
    double pi[3], pj[3], Ri[9], Rj[9], fi, fj;
    int rc = mech_rel_marker_file(M, J->i, pi, Ri, &fi);
    if (!rc) rc = mech_rel_marker_file(M, J->j, pj, Rj, &fj);
    if (rc) return rc;
    double d[3], X[9]; /* X = Rj^T Ri */
    vec3_sub(pi, pj, d);
    mat3_tmul(Rj, Ri, X);
    double dj[3]; /* d in j's axes */
    mat3_tvec(Rj, d, dj);
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
    int given = 0, vgiven = 0, derived = 0;
    if ((rc = read_texts(M, J, "q0", J->nq, init, &given))) return rc;
    if ((rc = read_texts(M, J, "v0", J->nq, vel, &vgiven))) return rc;
    if (!vgiven) { /* the joint rates that the bodies' velocity and angular_velocity imply */
        double vi[3], wi[3], vj[3], wj[3], rd[4] = {0, 0, 0, 0};
        int any = 0;
        if ((rc = body_rates(M, J->i, pi, vi, wi, &any)) || (rc = body_rates(M, J->j, pj, vj, wj, &any))) return rc;
        if (any) {
            double w[3], wl[3], dd[3], tl[3], wxd[3];
            vec3_sub(wi, wj, w);
            /* d/dt of d in j's axes: (v_i - v_j) - w_j x d, taken along j's axes */
            vec3_cross(wj, d, wxd);
            for (int a = 0; a < 3; a++) dd[a] = vi[a] - vj[a] - wxd[a];
            mat3_tvec(Rj, w, wl);
            mat3_tvec(Rj, dd, tl);
            double zi[3] = {X[6], X[7], X[8]}; /* z_i in j */
            switch (kind) {
            case JK_REV: rd[0] = wl[2]; break;
            case JK_PRI: rd[0] = M->planar ? tl[0] : tl[2]; break;
            case JK_CYL: rd[0] = wl[2], rd[1] = tl[2]; break;
            case JK_PLN: rd[0] = tl[0], rd[1] = tl[1], rd[2] = wl[2]; break;
            case JK_UNI: rd[0] = wl[2], rd[1] = vec3_dot(wl, zi); break;
            case JK_SPH: {
                const double *e = v0; /* der(e) = 1/2 E(e)^T w, w in j's axes */
                double E[3][4];
                quat_E(e, E);
                for (int k = 0; k < 4; k++) rd[k] = 0.5 * (E[0][k] * wl[0] + E[1][k] * wl[1] + E[2][k] * wl[2]);
                break;
            }
            default: break;
            }
            for (int k = 0; k < J->nq; k++) vel[k] = mech_num(M, rd[k]);
            vgiven = derived = 1;
        }
    }
    for (int k = 0; k < J->nq && !rc; k++) {
        J->q[k] = mech_fmt(M, "%s_%s", J->name, suf[k]);
        rc = mech_push(M, &M->src->coordinates, J->q[k], given ? init[k] : mech_num(M, v0[k]), J->line, J->col);
        if (!rc && vgiven) rc = mech_push(M, &M->src->velocities, J->q[k], vel[k], J->line, J->col);
        /* rates derived from the bodies' velocities are where the solve starts, not held: the bodies'
         * own velocities are held (held_body_velocities) */
        if (!rc && derived && !(M->src->velocities.items[M->src->velocities.n - 1].key2 = mech_dup_s("start")))
            rc = mech_oom(M);
    }
    if (!rc && kind == JK_SPH)
        rc = mech_push(M, &M->src->constraints, mech_fmt(M, "joint %s (Euler parameter normalization)", J->name),
                       mech_fmt(M, "%s^2 + %s^2 + %s^2 + %s^2 - 1", J->q[0], J->q[1], J->q[2], J->q[3]), J->line,
                       J->col);
    return rc;
}

/* marker m's global Euler parameters as texts (its body's times the marker's) */
void mech_rel_marker_q(mech *M, int m, const char *o[4])
{
    marker *K = &M->mk[m];
    body *B = &M->b[K->body];
    static const char *one[4] = {"1", "0", "0", "0"};
    const char *mq[4];
    mech_tx_qnum(M, K->mq, mq);
    if (B->kind == KIND_GROUND) {
        for (int k = 0; k < 4; k++) o[k] = mq[k];
        return;
    }
    mech_tx_qmul(M, B->kind == KIND_SPATIAL ? (const char *const *)B->e : one, mq, o);
}

/* the body of b's parent in the tree (-1: b is a root) */
int mech_rel_parent(mech *M, int b)
{
    int j = M->torder[M->nb + b];
    if (j < 0) return -1;
    joint *J = &M->jt[j];
    return M->mk[J->child_i ? J->j : J->i].body;
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
        const char *r0[4];
        if (!rc) mech_tx_euler_rates(M, q, w0, r0);
        for (int k = 0; k < 4 && !rc; k++) rc = mech_push_at(M, &M->src->velocities, e[k], r0[k], wn);
    }
    return rc;
}

/* A body the tree reaches keeps the names of its absolute coordinates as variables of the joint
 * coordinates (<body>_x, _y(, _z), _th or _e0 ... _e3: the expressions the tree wrote for its pose),
 * so that states, outputs and texts that name them read the same in both formulations (issue 30).
 * A root body has them as coordinates (root_coords). */
static int pose_names(mech *M, int b)
{
    body *B = &M->b[b];
    static const char *cn3[3] = {"x", "y", "z"};
    int dim = M->planar ? 2 : 3, rc = 0;
    if (B->kind != KIND_PLANAR && B->kind != KIND_SPATIAL && B->kind != KIND_POINT) return 0;
    for (int k = 0; k < dim && !rc; k++) rc = mech_add_var(M, mech_fmt(M, "%s_%s", B->name, cn3[k]), B->r[k], B->line, B->col);
    if (!rc && B->kind == KIND_PLANAR) rc = mech_add_var(M, mech_fmt(M, "%s_th", B->name), B->th, B->line, B->col);
    for (int k = 0; k < 4 && !rc && B->kind == KIND_SPATIAL; k++)
        rc = mech_add_var(M, mech_fmt(M, "%s_e%d", B->name, k), B->e[k], B->line, B->col);
    return rc;
}

/* A body the tree reaches with a `velocity` or `angular_velocity` in the file: those held at a given
 * point (model/held.c), as der(<body>_x) .. and der(<body>_th) (planar) or the global angular
 * velocity's components (spatial, labelled angular_velocity(<body>)[x] ..), rather than the joint
 * rates derived from them, which assume the bodies without velocities at rest. */
static int held_body_velocities(mech *M, int b)
{
    body *B = &M->b[b];
    static const char *cn3[3] = {"x", "y", "z"};
    int dim = M->planar ? 2 : 3, rc = 0;
    if (B->kind != KIND_PLANAR && B->kind != KIND_SPATIAL && B->kind != KIND_POINT) return 0;
    yaml_node_t *vn = mech_get(M, B->val, "velocity"), *wn = mech_get(M, B->val, "angular_velocity");
    mbl_src_list *l = &M->src->held_body_velocities; /* dropped where the joints fix them (model/held.c) */
    const char *v[3] = {NULL, NULL, NULL}, *w[3] = {NULL, NULL, NULL};
    if (vn && (rc = mech_vec_of(M, vn, dim, "velocity", v))) return rc;
    for (int k = 0; vn && k < dim && !rc; k++) {
        const char *key = mech_fmt(M, "der(%s_%s)", B->name, cn3[k]);
        rc = mech_push_at(M, l, key, v[k], vn);
        if (!rc && !(l->items[l->n - 1].key2 = mech_dup_s(key))) rc = mech_oom(M);
    }
    if (rc || !wn || B->kind == KIND_POINT) return rc;
    if (M->planar) rc = mech_text_of(M, wn, "angular_velocity", &w[2]);
    else rc = mech_vec_of(M, wn, 3, "angular_velocity", w);
    for (int k = M->planar ? 2 : 0; k < 3 && !rc; k++) {
        const char *key = M->planar ? mech_fmt(M, "der(%s_th)", B->name) : B->w[k];
        const char *label = M->planar ? key : mech_fmt(M, "angular_velocity(%s)[%s]", B->name, cn3[k]);
        rc = mech_push_at(M, l, key, w[k], wn);
        if (!rc && !(l->items[l->n - 1].key2 = mech_dup_s(label))) rc = mech_oom(M);
    }
    return rc;
}

/* Body b joins the tree's structured term (model/rtree.h) when it is a rigid spatial or planar body
 * whose tree joint is revolute, prismatic or fixed and whose parent is the ground or in the term
 * (parents are marked first): its inertia and weight then leave the text rows (tree_motion,
 * local_loads; a planar body's kinetic and potential energy, force.c). A planar body is the
 * spatial body turned about z by its angle (emit_rtree, relative_forces.c). */
static void mark_rt(mech *M, int b)
{
    body *B = &M->b[b];
    int jc = M->torder[M->nb + b];
    B->rt = 0;
    if (M->tree_symbolic || jc < 0 || B->flex || B->qf3) return;
    if (B->kind != (M->planar ? KIND_PLANAR : KIND_SPATIAL)) return;
    joint *J = &M->jt[jc];
    int kind = mech_rel_kind(M, J);
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
        int bi = M->mk[J->i].body, bj = J->j >= 0 ? M->mk[J->j].body : 0; /* j < 0: a rolling wheel's default plane */
        jb[2 * ng] = bi, jb[2 * ng + 1] = bj;
        yaml_node_t *cn = mech_get(M, J->val, "cut");
        int named_cut = 0;
        if (cn) {
            if (!mech_is_scalar(cn) || (strcmp(mech_sc(cn), "true") && strcmp(mech_sc(cn), "false")))
                rc = err_at(M, cn, "joint '%s': cut must be true or false", J->name);
            named_cut = !strcmp(mech_sc(cn), "true");
        }
        int kind = mech_rel_kind(M, J);
        cand[ng] = !named_cut && (kind != JK_NONE) && M->b[bi].kind != KIND_POINT && M->b[bj].kind != KIND_POINT;
        gmap[ng++] = k;
    }
    if (!rc && mech_tree_span(nb, ng, jb, cand, par, M->torder + nb, ci, M->torder, cut) < 0)
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
        if (M->torder[nb + b] >= 0) rc = mech_rel_tree_kinematics(M, M->torder[nb + b]);
    }
    for (int h = 1; h < nb && !rc; h++) {
        int b = M->torder[h];
        if (M->torder[nb + b] >= 0) rc = pose_names(M, b);
        if (!rc && M->torder[nb + b] >= 0) rc = held_body_velocities(M, b);
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
