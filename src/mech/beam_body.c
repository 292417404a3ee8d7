/* The beam body of `model: mechanism` (planar; the spatial one reads in beam3.c): its keys read,
 * its coordinates, elements and markers made, its foreshortening; and what every flexible body
 * (beam, spatial beam, modal body) shares: markers, the floating frame, gravity and forces on its
 * elastic coordinates. The element matrices and invariants are beam.c's.
 *
 *   link1:
 *     type: beam
 *     length: 4          elements: 50
 *     E: 1e8   rho: 1500   radius: 0.15     (or A: and I:)
 *     damping: {alpha: 0, beta: 1e-4}      (Rayleigh, optional)
 *     position: [0, 0]   angle: -pi/2      (the floating frame: origin at node 1, x along the beam)
 *     velocity: [0, 0]   angular_velocity: 0   (optional: the frame's initial velocities, as a rigid body's)
 *     markers: {o: {node: 1}, tip: {s: 4}}  (at a node, by index 1..n+1 or arc length s)
 *     geometric_stiffness: false           (optional: leave out the stiffening by the axial load)
 *
 * Coordinates <b>_x, <b>_y, <b>_th (the frame) and <b>_u<i>, <b>_v<i>, <b>_phi<i> (node i's axial,
 * transverse displacement and slope in the frame), with the frame tangent to the beam at node 1:
 * the constraints <b>_u1 = <b>_v1 = <b>_phi1 = 0 (source 001 Sec. 4.2). */

#include <math.h>
#include <stdio.h>

#include "mech/beam.h"
#include "mech/mech_internal.h"

/* a positive number of the body given by key (its text in *txt when txt is not NULL) */
int mech_beam_number_t(mech *M, const yaml_node_t *val, const char *key, const char *what, int required, double *out,
                       const char **txt)
{
    yaml_node_t *n = mech_get(M, val, key);
    if (!n) {
        if (required) return err_at(M, val, "%s: missing '%s'", what, key);
        return 1;
    }
    const char *t;
    if (txt) *txt = NULL;
    char w[240];
    snprintf(w, sizeof w, "%s: %s", what, key);
    int rc = mech_text_of(M, n, w, &t);
    mech_set_track(M);
    if (!rc) rc = mech_eval_text(M, t, n, w, out);
    if (rc) return rc;
    if (!isfinite(*out) || !(*out > 0))
        return err_at(M, n, "%s: '%s' must be positive and finite (it is %g)%s", what, key, *out, mech_set_note(M));
    if (txt) *txt = t;
    return 0;
}

static int beam_number(mech *M, const yaml_node_t *val, const char *key, const char *what, int required, double *out)
{
    return mech_beam_number_t(M, val, key, what, required, out, NULL);
}

/* The foreshortening of a planar beam (model/ffr.h): element e (nodes e+1, e+2) draws the nodes
 * beyond it toward the root by 1/2 int_e w'^2 = 1/2 sh_e, with the Hermite cubic of d = v_b - v_a
 * and the slopes pa, pb: sh_e = 1.2 d^2 / le - 0.2 d (pa + pb) + le (2 pa^2 + 2 pb^2 - pa pb) / 15
 * (a rigid turn d = t le, pa = pb = t gives t^2 le). Its gradient by (v_a, v_b, phi_a, phi_b):
 * (-g, g, -0.2 d + le (4 pa - pb) / 15, -0.2 d + le (4 pb - pa) / 15), g = 2.4 d / le - 0.2 (pa + pb).
 * A marker at node i sits at X_i + u_i - 1/2 sum_{e < i-1} sh_e along the frame's x axis, so the
 * loads of joints and force elements at it enter the geometric stiffness like those spread over the
 * body (whose part the structured term carries). */
/* A spatial beam (beam3.c) has it in both bending planes: (uy, rz) as (v, phi), and (uz, ry) with
 * ry = -uz', taken as (-uz, ry) (sh_e is quadratic: the signs of d, pa, pb turn together). The
 * parts of element e in plane pl and the elastic coordinates (v_a, v_b, pa, pb) they are of. */
static void sh_parts(mech *M, const body *B, int e, int pl, const char **d, const char **pa, const char **pb, int dof[4])
{
    const char *b = B->name;
    if (!B->qf3) {
        *d = mech_fmt(M, "(%s_v%d - %s_v%d)", b, e + 2, b, e + 1);
        *pa = mech_fmt(M, "%s_phi%d", b, e + 1), *pb = mech_fmt(M, "%s_phi%d", b, e + 2);
        int o[4] = {3 * e + 1, 3 * e + 4, 3 * e + 2, 3 * e + 5};
        memcpy(dof, o, sizeof o);
    } else if (pl == 0) {
        *d = mech_fmt(M, "(%s_uy%d - %s_uy%d)", b, e + 2, b, e + 1);
        *pa = mech_fmt(M, "%s_rz%d", b, e + 1), *pb = mech_fmt(M, "%s_rz%d", b, e + 2);
        int o[4] = {6 * e + 1, 6 * e + 7, 6 * e + 5, 6 * e + 11};
        memcpy(dof, o, sizeof o);
    } else { /* d = -(uz_b - uz_a): v_a is uz_b, v_b is uz_a */
        *d = mech_fmt(M, "(%s_uz%d - %s_uz%d)", b, e + 1, b, e + 2);
        *pa = mech_fmt(M, "%s_ry%d", b, e + 1), *pb = mech_fmt(M, "%s_ry%d", b, e + 2);
        int o[4] = {6 * e + 8, 6 * e + 2, 6 * e + 4, 6 * e + 10};
        memcpy(dof, o, sizeof o);
    }
}

/* the text "0.5*(0 + sh_0 + ... + sh_{n-1})" of the n elements from node 1 (one growing buffer) */
const char *mech_beam_sh_text(mech *M, const body *B, int n)
{
    size_t cap = 256, len = 0;
    const char *le = B->gle;
    char *buf = mbl_malloc(cap);
    if (!buf) return NULL;
    len = (size_t)snprintf(buf, cap, "0.5*(0");
    for (int k = 0; k < n * (B->qf3 ? 2 : 1); k++) {
        int e = B->qf3 ? k / 2 : k, dof[4];
        const char *d, *pa, *pb;
        sh_parts(M, B, e, k % 2 * (B->qf3 != NULL), &d, &pa, &pb, dof);
        const char *t = mech_fmt(M, " + 1.2*%s^2/%s - 0.2*%s*(%s + %s) + %s*(2*%s^2 + 2*%s^2 - %s*%s)/15", d, le, d, pa,
                                 pb, le, pa, pb, pa, pb);
        size_t tl = strlen(t);
        if (M->oom) break;
        if (len + tl + 2 > cap) {
            while (len + tl + 2 > cap) cap *= 2;
            char *nb = mbl_realloc(buf, cap);
            if (!nb) break;
            buf = nb;
        }
        memcpy(buf + len, t, tl + 1);
        len += tl;
        if (k + 1 == n * (B->qf3 ? 2 : 1)) memcpy(buf + len, ")", 2);
    }
    if (n == 0) memcpy(buf + len, ")", 2);
    if (M->oom || (n && buf[len] != ')')) {
        mbl_free(buf);
        return NULL;
    }
    return mech_keep(M, buf);
}

/* a force along the frame's x axis fx (a text: (A^T f)_x) at node i of a beam with geometric
 * stiffness: its virtual work on the node's foreshortening, -fx/2 grad sh, added to the Fq */
static void sh_force(mech *M, body *B, int i, const char *fx)
{
    const char *le = B->gle;
    for (int k = 0; k < (i - 1) * (B->qf3 ? 2 : 1); k++) {
        int e = B->qf3 ? k / 2 : k, dof[4];
        const char *d, *pa, *pb;
        sh_parts(M, B, e, k % 2 * (B->qf3 != NULL), &d, &pa, &pb, dof);
        const char *g = mech_fmt(M, "(2.4*%s/%s - 0.2*(%s + %s))", d, le, pa, pb);
        const char *gr[4] = {mech_fmt(M, "(-%s)", g), g, mech_fmt(M, "(-0.2*%s + %s*(4*%s - %s)/15)", d, le, pa, pb),
                             mech_fmt(M, "(-0.2*%s + %s*(4*%s - %s)/15)", d, le, pb, pa)};
        for (int c = 0; c < 4; c++) {
            char *t = mech_fmt(M, "-0.5*%s*%s", fx, gr[c]);
            B->Fq[dof[c]] = B->Fq[dof[c]] ? mech_fmt(M, "%s + %s", B->Fq[dof[c]], t) : t;
        }
    }
}

int mech_beam_strain_validity(mech *M, const body *B, const char *utip, const char *Lt)
{
    char lim[300];
    snprintf(lim, sizeof lim,
             "%g (MBL_MECH_BEAM_STRAIN_NOTE), the small strains of the beam theory: its elastic forces, linear in the "
             "displacements, are not the beam's there",
             MBL_MECH_BEAM_STRAIN_NOTE);
    return mech_validity(M, mech_fmt(M, "body '%s' (beam): the mean axial strain (the tip's axial displacement over the length)", B->name),
                         mech_fmt(M, "(%s)/(%s)", utip, Lt), lim, B->line, B->col);
}

int mech_beam_geometric_key(mech *M, const yaml_node_t *val, const char *what, int *geo)
{
    *geo = 1;
    yaml_node_t *gs = mech_get(M, val, "geometric_stiffness");
    if (!gs) return 0;
    if (!mech_is_scalar(gs) || (strcmp(mech_sc(gs), "true") && strcmp(mech_sc(gs), "false")))
        return err_at(M, gs, "%s: 'geometric_stiffness' must be true or false", what);
    *geo = !strcmp(mech_sc(gs), "true");
    return 0;
}

static int beam_markers(mech *M, int bi, const yaml_node_t *mks, int ne, double L, const char *Lt)
{
    if (!mks || (mks->type == YAML_SCALAR_NODE && mks->data.scalar.length == 0)) return 0;
    body *B = &M->b[bi];
    char what[200];
    snprintf(what, sizeof what, "markers of body '%s'", B->name);
    int rc = mech_want_map(M, mks, what);
    for (yaml_node_pair_t *p = mks->data.mapping.pairs.start; !rc && p < mks->data.mapping.pairs.top; p++) {
        yaml_node_t *key = mech_node(M->doc, p->key), *val = mech_node(M->doc, p->value);
        static const char *ok[] = {"node", "s", "angle", NULL};
        if ((rc = mech_flex_marker_key(M, B, key, val, ok, what, sizeof what))) return rc;
        const char *name = mech_sc(key);
        int node;
        if ((rc = mech_beam_node(M, val, what, ne, L, &node))) return rc;
        const char *ang = "0";
        yaml_node_t *an = mech_get(M, val, "angle");
        if (an && (rc = mech_text_of(M, an, "marker angle", &ang))) return rc;
        marker *K;
        if ((rc = mech_new_marker(M, name, bi, key, &K))) return rc;
        K->node = node + 1;
        int i = node + 1;
        const char *u = mech_fmt(M, "%s_u%d", B->name, i), *v = mech_fmt(M, "%s_v%d", B->name, i);
        /* the node's undeformed place as a text of the length (which may be a parameter) */
        const char *X = node ? mech_fmt(M, "((%s)*%d/%d + %s)", Lt, node, ne, u) : mech_fmt(M, "(%s)", u);
        if (node && B->gle) { /* drawn toward the root by the foreshortening (geometric stiffness) */
            const char *sh = mech_beam_sh_text(M, B, node), *shn = mech_fmt(M, "_sh_%s", name);
            if (!sh) return mech_oom(M);
            if ((rc = mech_add_var(M, shn, sh, K->line, K->col))) return rc;
            X = mech_fmt(M, "((%s)*%d/%d + %s - %s)", Lt, node, ne, u, shn);
        }
        const char *s[3] = {X, v, "0"};
        rc = mech_flex_marker_frame(M, K, B, mech_fmt(M, "%s + %s_phi%d + (%s)", B->th, B->name, i, ang), s, NULL);
    }
    return rc;
}

/* a new flexible body entry in the source (its invariants filled by the caller) */
mbl_ffr_body *mech_flex_new(mech *M, body *B, int nf, const char *const *qf)
{
    mbl_src *s = M->src;
    mbl_ffr_body *f = mbl_realloc_array(s->ffr, (size_t)s->nffr + 1, sizeof *f);
    if (!f) return NULL;
    s->ffr = f;
    f = &s->ffr[s->nffr];
    memset(f, 0, sizeof *f);
    char nm[200];
    snprintf(nm, sizeof nm, "body '%s'", B->name);
    f->name = mech_dup_s(nm);
    for (int k = 0; k < 3; k++) f->coord[k] = mech_dup_s(k < 2 || !B->th ? B->r[k] : B->th); /* spatial: x, y, z */
    f->qf = mbl_calloc((size_t)nf + 1, sizeof *f->qf);
    int ok = f->name && f->coord[0] && f->coord[1] && f->coord[2] && f->qf;
    for (int i = 0; i < nf && ok && f->qf; i++) ok = (f->qf[i] = mech_dup_s(qf[i])) != NULL;
    f->inv.nf = nf; /* so that a failure frees the names; the invariants come next */
    s->nffr++;
    B->flex = s->nffr;
    B->Fq = mbl_calloc((size_t)nf + 1, sizeof *B->Fq);
    if (!B->Fq || !mech_keep(M, (char *)B->Fq)) ok = 0;
    return ok ? f : NULL;
}

/* ---- markers of flexible bodies (beam_body.c, beam3.c, modal_body.c) ---- */

/* A marker's key and value checked: a plain word, a valid and new name, a mapping of the keys in ok;
 * what (of size whatlen) then names the marker. */
int mech_flex_marker_key(mech *M, const body *B, const yaml_node_t *key, const yaml_node_t *val, const char *const *ok,
                         char *what, size_t whatlen)
{
    if (!mech_is_scalar(key)) return err_at(M, key, "%s: a marker name must be a plain word", what);
    const char *name = mech_sc(key);
    snprintf(what, whatlen, "marker '%s' of body '%s'", name, B->name);
    if (!mech_valid_name(name)) return err_at(M, key, "%s: not a valid name (letters, digits, _)", what);
    if (mech_find_marker(M, name, strlen(name)) >= 0) return err_at(M, key, "duplicate marker name '%s'", name);
    int rc = mech_want_map(M, val, what);
    if (!rc) rc = mech_check_keys(M, val, ok, what);
    return rc;
}

/* The variables of marker K on flexible body B: its global position _p_<m>_k and axes
 * _x_<m>_k, _y_<m>_k, _z_<m>_k. Planar (Rn NULL): the angle variable _phi_<m> of the text phi and
 * the point (s[0], s[1]) in the body frame, the axes those of the angle; spatial: the point s in the
 * body frame and the axes A Rn (Rn row-major: the node's axes in the frame). */
int mech_flex_marker_frame(mech *M, marker *K, const body *B, const char *phi, const char *const s[3],
                           const char *const Rn[9])
{
    const char *name = K->name;
    int line = K->line, col = K->col, rc = 0;
    static const char axn[3] = {'x', 'y', 'z'};
    if (Rn) {
        for (int k = 0; k < 3 && !rc; k++) {
            K->p[k] = mech_fmt(M, "_p_%s_%d", name, k + 1);
            rc = mech_add_var(M, K->p[k],
                              mech_fmt(M, "%s + %s*%s + %s*%s + %s*%s", B->r[k], B->A[3 * k], s[0], B->A[3 * k + 1], s[1],
                                       B->A[3 * k + 2], s[2]),
                              line, col);
        }
        for (int a = 0; a < 3 && !rc; a++)
            for (int k = 0; k < 3 && !rc; k++) { /* (A Rn)[k][a] */
                K->ax[a][k] = mech_fmt(M, "_%c_%s_%d", axn[a], name, k + 1);
                rc = mech_add_var(M, K->ax[a][k],
                                  mech_fmt(M, "%s*%s + %s*%s + %s*%s", B->A[3 * k], Rn[a], B->A[3 * k + 1], Rn[3 + a],
                                           B->A[3 * k + 2], Rn[6 + a]),
                                  line, col);
            }
        return rc;
    }
    const char *u = s[0], *v = s[1];
    K->phi = mech_fmt(M, "_phi_%s", name);
    rc = mech_add_var(M, K->phi, phi, line, col);
    const char *pt[3] = {mech_fmt(M, "%s + %s*%s - %s*%s", B->r[0], B->A[0], u, B->A[3], v),
                         mech_fmt(M, "%s + %s*%s + %s*%s", B->r[1], B->A[3], u, B->A[0], v), "0"};
    for (int k = 0; k < 3 && !rc; k++) {
        K->p[k] = mech_fmt(M, "_p_%s_%d", name, k + 1);
        rc = mech_add_var(M, K->p[k], pt[k], line, col);
    }
    const char *axt[3][3] = {{mech_fmt(M, "cos(%s)", K->phi), mech_fmt(M, "sin(%s)", K->phi), "0"},
                             {mech_fmt(M, "-sin(%s)", K->phi), mech_fmt(M, "cos(%s)", K->phi), "0"},
                             {"0", "0", "1"}};
    for (int a = 0; a < 3 && !rc; a++)
        for (int k = 0; k < 3 && !rc; k++) {
            K->ax[a][k] = mech_fmt(M, "_%c_%s_%d", axn[a], name, k + 1);
            rc = mech_add_var(M, K->ax[a][k], axt[a][k], line, col);
        }
    return rc;
}

/* the frame: coordinates x, y, th with their initial values, rotation texts (as a planar rigid body) */
int mech_flex_frame(mech *M, body *B, const yaml_node_t *key, const yaml_node_t *val)
{
    const char *p0[2] = {"0", "0"}, *a0 = "0";
    yaml_node_t *pn = mech_get(M, val, "position"), *an = mech_get(M, val, "angle");
    int rc = 0;
    if (pn && (rc = mech_vec_of(M, pn, 2, "position", p0))) return rc;
    if (an && (rc = mech_text_of(M, an, "angle", &a0))) return rc;
    B->kind = KIND_PLANAR;
    B->mass = "0";
    for (int k = 0; k < 6; k++) B->I[k] = "0";
    for (int k = 0; k < 3; k++) B->cm[k] = "0", B->r[k] = "0";
    static const char *cn[2] = {"x", "y"};
    for (int k = 0; k < 2 && !rc; k++) {
        B->r[k] = mech_fmt(M, "%s_%s", B->name, cn[k]);
        rc = mech_push_at(M, &M->src->coordinates, B->r[k], p0[k], pn ? pn : key);
    }
    B->th = mech_fmt(M, "%s_th", B->name);
    if (!rc) rc = mech_push_at(M, &M->src->coordinates, B->th, a0, an ? an : key);
    char *c = mech_fmt(M, "_c_%s", B->name), *s = mech_fmt(M, "_s_%s", B->name);
    if (!rc) rc = mech_add_var(M, c, mech_fmt(M, "cos(%s)", B->th), B->line, B->col);
    if (!rc) rc = mech_add_var(M, s, mech_fmt(M, "sin(%s)", B->th), B->line, B->col);
    static char *zero = "0", *one = "1";
    B->A[0] = c, B->A[1] = mech_fmt(M, "(-%s)", s), B->A[2] = zero;
    B->A[3] = s, B->A[4] = c, B->A[5] = zero;
    B->A[6] = zero, B->A[7] = zero, B->A[8] = one;
    B->w[0] = B->w[1] = zero;
    B->w[2] = mech_fmt(M, "der(%s)", B->th);
    /* initial velocities, as a rigid body's (body.c): the frame's `velocity` and `angular_velocity` */
    yaml_node_t *vn = mech_get(M, val, "velocity"), *wn = mech_get(M, val, "angular_velocity");
    const char *v0[2], *w0;
    if (!rc && vn && !(rc = mech_vec_of(M, vn, 2, "velocity", v0)))
        for (int k = 0; k < 2 && !rc; k++) rc = mech_push_at(M, &M->src->velocities, B->r[k], v0[k], vn);
    if (!rc && wn && !(rc = mech_text_of(M, wn, "angular_velocity", &w0)))
        rc = mech_push_at(M, &M->src->velocities, B->th, w0, wn);
    return rc;
}

/* The size of the model's beams before they are built: per element 3 (planar) or 6 (spatial)
 * coordinates (and the floating frame's 3 or 7), element mass and stiffness matrices of 2 x 6^2 or 2 x 12^2 entries, and the bytes
 * building takes (MBL_MECH_BEAM_BYTES, MBL_MECH_BEAM3_BYTES: measured). Issue 30: 1e6 planar
 * elements took 3 GB in 30 s before anything was checked. */
int mech_beam_budget(mech *M, const yaml_node_t *at, const char *what, int ne, int spatial)
{
    double nd = spatial ? 6 : 3;
    M->beam_elems += ne;
    M->beam_coords += nd * (ne + 1) + (spatial ? 7 : 3); /* nodes, and the floating frame */
    M->beam_nz += 2 * (2 * nd) * (2 * nd) * ne;
    M->beam_bytes += (spatial ? MBL_MECH_BEAM3_BYTES : MBL_MECH_BEAM_BYTES) * ne;
    double budget = M->src->mem_budget, gib = 1073741824.0;
    if (!(budget > 0) || M->beam_bytes <= budget) return 0;
    return model_yaml_error(M->st, MBL_ENOMEM, M->file, at,
                            "%s: %d beam elements; the model's beams (%.0f elements, %.0f coordinates, %.0f nonzeros "
                            "in their element matrices) need about %.3g GiB to build, over the memory budget of %.3g "
                            "GiB (--mem-budget): use fewer elements or raise the budget",
                            what, ne, M->beam_elems, M->beam_coords, M->beam_nz, M->beam_bytes / gib, budget / gib);
}

int mech_beam_prescan(mech *M, const yaml_node_t *bodies)
{
    if (M->relative) return 0; /* beams are refused there */
    for (yaml_node_pair_t *p = bodies->data.mapping.pairs.start; p < bodies->data.mapping.pairs.top; p++) {
        yaml_node_t *k = mech_node(M->doc, p->key), *v = mech_node(M->doc, p->value);
        yaml_node_t *ty = v && v->type == YAML_MAPPING_NODE ? mech_get(M, v, "type") : NULL, *en;
        if (!mech_is_scalar(k) || !mech_is_scalar(ty) || strcmp(mech_sc(ty), "beam") || !(en = mech_get(M, v, "elements")))
            continue;
        char what[200];
        snprintf(what, sizeof what, "body '%s'", mech_sc(k));
        double nel;
        int rc = mech_beam_number_t(M, v, "elements", what, 1, &nel, NULL);
        if (rc) return rc;
        if (nel != floor(nel) || nel < 1 || nel > (M->planar ? 1e7 : 1e5)) continue; /* the body's reader says why */
        if ((rc = mech_beam_budget(M, en, what, (int)nel, !M->planar))) return rc;
    }
    return 0;
}

int mech_read_beam(mech *M, const yaml_node_t *key, const yaml_node_t *val)
{
    const char *name = mech_sc(key);
    char what[200];
    snprintf(what, sizeof what, "body '%s'", name);
    if (!M->planar) return mech_read_beam3(M, key, val);
    static const char *ok[] = {"type", "length", "elements", "E", "rho", "radius", "A", "I", "damping", "position",
                               "angle", "velocity", "angular_velocity", "markers", "geometric_stiffness", NULL};
    int rc = mech_check_keys(M, val, ok, what);
    if (rc) return rc;
    /* the geometric stiffness of the axial load (model/ffr.h), on unless `geometric_stiffness: false` */
    int geo = 1;
    if ((rc = mech_beam_geometric_key(M, val, what, &geo))) return rc;
    mbl_beam_section sec;
    memset(&sec, 0, sizeof sec);
    double L, nel, r;
    const char *Lt, *Et, *rhot, *At, *It;
    if ((rc = mech_beam_number_t(M, val, "length", what, 1, &L, &Lt)) || (rc = beam_number(M, val, "elements", what, 1, &nel)) ||
        (rc = mech_beam_number_t(M, val, "E", what, 1, &sec.E, &Et)) || (rc = mech_beam_number_t(M, val, "rho", what, 1, &sec.rho, &rhot)))
        return rc;
    if (nel != floor(nel) || nel > 1e7)
        return err_at(M, mech_get(M, val, "elements"), "%s: 'elements' must be a whole number (1 to 1e7), not %g", what, nel);
    int ne = (int)nel;
    yaml_node_t *rn = mech_get(M, val, "radius"), *An = mech_get(M, val, "A"), *In = mech_get(M, val, "I");
    if (rn && (An || In)) return err_at(M, rn, "%s: give the section by 'radius' or by 'A' and 'I', not both", what);
    if (rn) {
        const char *rt;
        if ((rc = mech_beam_number_t(M, val, "radius", what, 1, &r, &rt))) return rc;
        sec.A = acos(-1.0) * r * r, sec.Iz = acos(-1.0) * r * r * r * r / 4;
        At = mech_fmt(M, "pi*(%s)^2", rt), It = mech_fmt(M, "pi*(%s)^4/4", rt);
    } else {
        if ((rc = mech_beam_number_t(M, val, "A", what, 1, &sec.A, &At)) || (rc = mech_beam_number_t(M, val, "I", what, 1, &sec.Iz, &It)))
            return rc;
    }
    double ab[2] = {0, 0};
    const char *dt[2] = {NULL, NULL};
    yaml_node_t *dnode[2] = {NULL, NULL};
    if ((rc = mech_beam_damping(M, val, what, ab, dt, dnode, 0))) return rc;
    double alpha = ab[0], beta = ab[1];
    body *B = mech_new_body(M, name, key);
    if (!B) return mech_oom(M);
    int bi = M->nb - 1;
    if ((rc = mech_flex_frame(M, B, key, val))) return rc;
    B = &M->b[bi];
    int nf = 3 * (ne + 1);
    const char **qf = mbl_calloc((size_t)nf, sizeof *qf);
    if (!qf || !mech_keep(M, (char *)qf)) return mech_oom(M);
    static const char *comp[3] = {"u", "v", "phi"};
    for (int i = 0; i < nf && !rc; i++) {
        qf[i] = mech_fmt(M, "%s_%s%d", name, comp[i % 3], i / 3 + 1);
        rc = mech_push(M, &M->src->coordinates, qf[i], "0", B->line, B->col);
    }
    for (int k = 0; k < 3 && !rc; k++)
        rc = mech_push(M, &M->src->constraints, mech_fmt(M, "body %s (floating frame tangent at node 1)", name), qf[k],
                       B->line, B->col);
    if (rc) return rc;
    mbl_ffr_body *f = mech_flex_new(M, B, nf, qf);
    if (!f) return mech_oom(M);
    f->alpha = alpha, f->beta = beta;
    f->nnode = ne + 1;
    f->X0 = mbl_calloc((size_t)2 * (ne + 1), sizeof *f->X0);
    f->ndof = mbl_alloc_array((size_t)3 * (ne + 1), sizeof *f->ndof);
    if (!f->X0 || !f->ndof) return mech_oom(M);
    for (int i = 0; i <= ne; i++) {
        f->X0[2 * i] = i * (L / ne);
        for (int k = 0; k < 3; k++) f->ndof[3 * i + k] = 3 * i + k;
    }
    /* how the invariants depend on the parameters (model/ffr.h): mass rho A, stiffness EA (axial
     * class 0) and EI (bending class 1), the length, the damping */
    f->lexp = mbl_calloc((size_t)nf, sizeof *f->lexp);
    f->kcls = mbl_calloc((size_t)nf, sizeof *f->kcls);
    if (!f->lexp || !f->kcls) return mech_oom(M);
    for (int i = 0; i < nf; i++) f->lexp[i] = i % 3 == 2, f->kcls[i] = i % 3 != 0;
    f->kexp[0] = -1, f->kexp[1] = -3;
    {
        mech_flex_fac fa[6] = {{MBL_FFR_FAC_MASS, 0, mech_fmt(M, "(%s)*(%s)", rhot, At), sec.rho * sec.A, key},
                               {MBL_FFR_FAC_STIFF, 0, mech_fmt(M, "(%s)*(%s)", Et, At), sec.E * sec.A, key},
                               {MBL_FFR_FAC_STIFF, 1, mech_fmt(M, "(%s)*(%s)", Et, It), sec.E * sec.Iz, key},
                               {MBL_FFR_FAC_LENGTH, 0, Lt, L, key},
                               {MBL_FFR_FAC_ALPHA, 0, dt[0], alpha, dnode[0]},
                               {MBL_FFR_FAC_BETA, 0, dt[1], beta, dnode[1]}};
        int frc = mech_flex_factors(M, f, fa, 6);
        if (frc) return frc;
    }
    f->inv.nf = 0;
    rc = mech_beam2_invariants(&sec, L, ne, &f->inv, M->st);
    if (rc) {
        f->inv.nf = nf;
        return rc == MBL_ENOMEM ? rc : err_at(M, key, "%s: %s", what, M->st->msg);
    }
    if (!geo) {
        mbla_csc_free(f->inv.H1), mbla_csc_free(f->inv.Hx);
        f->inv.H1 = f->inv.Hx = NULL;
    }
    M->b[bi].gle = geo ? mech_fmt(M, "((%s)/%d)", Lt, ne) : NULL;
    if ((rc = mech_beam_strain_validity(M, &M->b[bi], qf[3 * ne], Lt))) return rc;
    return beam_markers(M, bi, mech_get(M, val, "markers"), ne, L, Lt);
}

/* ---- gravity and forces on flexible bodies (beam and modal) ---- */

int mech_flex_gravity(mech *M, body *B, const char *const g[3], const yaml_node_t *at)
{
    mbl_ffr_body *f = &M->src->ffr[B->flex - 1];
    for (int k = 0; k < (f->sp ? 3 : 2); k++) {
        double x;
        int rc = mech_eval_text(M, g[k], at, "gravity", &x);
        if (rc) return rc;
        f->g[k] += x;
        /* and as a text of the parameters (sensitivities) */
        char *t = f->gtext[k] ? mech_fmt(M, "%s + (%s)", f->gtext[k], g[k]) : mech_fmt(M, "(%s)", g[k]);
        mbl_free(f->gtext[k]);
        if (!(f->gtext[k] = mech_dup_s(t))) return mech_oom(M);
    }
    mech_pos_of(at, &f->gline, &f->gcol);
    return 0;
}

void mech_flex_apply(mech *M, int m, char *const f[3], char *const tq[3], const char *sg)
{
    marker *K = &M->mk[m];
    body *B = &M->b[K->body];
    if (B->qf3 && K->shape) { /* a spatial modal body (modal_body3.c) */
        mech_modal3_apply(M, K, B, f, tq, sg);
        return;
    }
    if (B->qf3) { /* a spatial beam (beam3.c): node translations take A^T f, rotations A^T tq */
        if (!K->node) return;
        int base = 6 * (K->node - 1);
        for (int k = 0; k < 3; k++) {
            char *const *v = NULL;
            for (int part = 0; part < 2; part++) {
                v = part ? tq : f;
                if (!v) continue;
                char *t = mech_fmt(M, "%s(%s*%s + %s*%s + %s*%s)", sg, B->A[k], v[0], B->A[3 + k], v[1], B->A[6 + k], v[2]);
                int d = base + 3 * part + k;
                B->Fq[d] = B->Fq[d] ? mech_fmt(M, "%s + %s", B->Fq[d], t) : t;
                if (B->gle && !part && !k) sh_force(M, B, K->node, t); /* (A^T f)_x on the foreshortening */
            }
        }
        return;
    }
    const mbl_ffr_body *fb = &M->src->ffr[B->flex - 1];
    if (K->shape) {
        /* modal: Q_k = shape_u,k (A^T f)_x + shape_v,k (A^T f)_y + shape_phi,k tq_z */
        const char *c = B->A[0], *s = B->A[3];
        const char *fx = f ? mech_fmt(M, "(%s*%s + %s*%s)", c, f[0], s, f[1]) : NULL;
        const char *fy = f ? mech_fmt(M, "(%s*%s - %s*%s)", c, f[1], s, f[0]) : NULL;
        for (int k = 0; k < fb->inv.nf; k++) {
            const double *sh = K->shape + 3 * k;
            char *t = NULL;
            if (fx && sh[0] != 0) t = mech_fmt(M, "%s*%s", mech_num(M, sh[0]), fx);
            if (fy && sh[1] != 0) t = mech_fmt(M, "%s%s%s*%s", t ? t : "", t ? " + " : "", mech_num(M, sh[1]), fy);
            if (tq && sh[2] != 0) t = mech_fmt(M, "%s%s%s*%s", t ? t : "", t ? " + " : "", mech_num(M, sh[2]), tq[2]);
            /* a marker's geometric stiffness (modal_body.c): the point's shift -1/2 eta^T G_d eta along
             * the frame's axis d does the work -f_d (G_d eta)_k */
            for (int d = 0; d < 2 && f; d++) {
                if (!K->gk[d]) continue;
                sbuf gq = {0};
                for (int j = 0; j < fb->inv.nf; j++) {
                    double x = K->gk[d][k + (size_t)fb->inv.nf * j];
                    if (x != 0) mech_sb_add(M, &gq, gq.n ? " + " : "", mech_fmt(M, "%s*%s", mech_num(M, x), fb->qf[j]));
                }
                if (gq.n) t = mech_fmt(M, "%s - %s*(%s)", t ? t : "0", d ? fy : fx, mech_sb_done(M, &gq));
            }
            if (!t) continue;
            if (sg[0]) t = mech_fmt(M, "%s(%s)", sg, t);
            B->Fq[k] = B->Fq[k] ? mech_fmt(M, "%s + %s", B->Fq[k], t) : t;
        }
        return;
    }
    if (!K->node) return;
    int base = 3 * (K->node - 1);
    /* virtual work: dp = A (du, dv), dphi: Q_u = (A^T f)_x, Q_v = (A^T f)_y, Q_phi = tq_z */
    if (f) {
        const char *c = B->A[0], *s = B->A[3];
        char *qu = mech_fmt(M, "%s(%s*%s + %s*%s)", sg, c, f[0], s, f[1]);
        char *qv = mech_fmt(M, "%s(%s*%s - %s*%s)", sg, c, f[1], s, f[0]);
        B->Fq[base] = B->Fq[base] ? mech_fmt(M, "%s + %s", B->Fq[base], qu) : qu;
        B->Fq[base + 1] = B->Fq[base + 1] ? mech_fmt(M, "%s + %s", B->Fq[base + 1], qv) : qv;
        if (B->gle) sh_force(M, B, K->node, qu);
    }
    if (tq) {
        char *qp = mech_fmt(M, "%s%s", sg, tq[2]);
        B->Fq[base + 2] = B->Fq[base + 2] ? mech_fmt(M, "%s + %s", B->Fq[base + 2], qp) : qp;
    }
}

int mech_flex_forces(mech *M, body *B)
{
    if (B->qf3) {
        int rc = 0;
        for (int i = 0; i < B->nqf3 && !rc; i++)
            if (B->Fq[i]) rc = mech_push(M, &M->src->forces, B->qf3[i], B->Fq[i], B->line, B->col);
        return rc;
    }
    const mbl_ffr_body *f = &M->src->ffr[B->flex - 1];
    int rc = 0;
    for (int i = 0; i < f->inv.nf && !rc; i++)
        if (B->Fq[i]) rc = mech_push(M, &M->src->forces, f->qf[i], B->Fq[i], B->line, B->col);
    return rc;
}

int mech_flex_refuse(mech *M, const body *B, const yaml_node_t *at, const char *what)
{
    return err_at(M, at,
                  "%s: its reaction would act on the flexible body '%s' at another body's point; attach the element "
                  "with its first marker on '%s' (or use a force without 'reaction')",
                  what, B->name, B->name);
}

int mech_flex_factors(mech *M, struct mbl_ffr_body *f, const mech_flex_fac *fa, int n)
{
    for (int k = 0; k < n; k++) {
        if (!fa[k].text) continue;
        mbl_ffr_factor *x = &f->fac[f->nfac];
        x->kind = fa[k].kind, x->cls = fa[k].cls, x->value = fa[k].value;
        mech_pos_of(fa[k].at, &x->line, &x->col);
        if (!(x->text = mech_dup_s(fa[k].text))) return mech_oom(M);
        f->nfac++;
    }
    return 0;
}

int mech_beam_damping(mech *M, const yaml_node_t *val, const char *what, double ab[2], const char *dt[2],
                      yaml_node_t *dnode[2], int zeta_ok)
{
    yaml_node_t *dn = mech_get(M, val, "damping");
    if (!dn) return 0;
    static const char *okd[] = {"alpha", "beta", NULL}, *okz[] = {"alpha", "beta", "zeta", NULL};
    int rc;
    if ((rc = mech_want_map(M, dn, "damping")) || (rc = mech_check_keys(M, dn, zeta_ok ? okz : okd, "damping"))) return rc;
    const char *keys[2] = {"alpha", "beta"};
    for (int k = 0; k < 2; k++) {
        yaml_node_t *x = mech_get(M, dn, keys[k]);
        const char *t;
        if (!x) continue;
        if ((rc = mech_text_of(M, x, keys[k], &t)) || (rc = mech_eval_text(M, t, x, keys[k], &ab[k]))) return rc;
        dt[k] = t, dnode[k] = x;
        if (!(ab[k] >= 0) || !isfinite(ab[k]))
            return err_at(M, x, "%s: damping %s must be >= 0 and finite (it is %g)", what, keys[k], ab[k]);
    }
    return 0;
}
