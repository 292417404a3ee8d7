/* The spatial beam body of `model: mechanism` (docs/mechanism-reference.md, "Spatial beams").
 *
 *   arm:
 *     type: beam
 *     length: 2          elements: 10
 *     E: 2.1e11   G: 8.1e10   rho: 7850
 *     radius: 0.01        (or A:, Iy:, Iz:, J:)
 *     damping: {alpha: 0, beta: 1e-4}
 *     position: [0, 0, 0]   axis: [0, 0, 1]   angle: 0     (the floating frame, x along the beam)
 *     velocity: [0, 0, 0]   angular_velocity: [0, 0, 0]    (optional: initial, global axes)
 *     markers: {root: {node: 1}, tip: {s: 2}}
 *     geometric_stiffness: false   (optional: leave out the stiffening by the axial load)
 *
 * Coordinates: the frame <b>_x, _y, _z and Euler parameters <b>_e0.._e3 (with their normalization
 * constraint, as a rigid body's), and per node i the displacements <b>_ux<i>, _uy<i>, _uz<i> and
 * small rotations <b>_rx<i> (twist), _ry<i>, _rz<i> in the frame. The frame is attached tangent to
 * the beam at node 1 (its six elastic coordinates are held at 0: source 001 Sec. 4.2).
 *
 * The element is the spatial Euler-Bernoulli element of beam.c (cubic bending in both planes,
 * linear axial and St. Venant torsion; small strains) with the geometric stiffness of the axial load
 * in both bending planes (model/ffr3.h's H1, Hx; on unless `geometric_stiffness: false`). The body's
 * inertia, gravity on the deformed body, the stiffness and Rayleigh damping (alpha Mc + beta K)
 * are the structured term (model/ffr3.h: constant sparse invariants assembled here once, rows and
 * Jacobian in closed form); forces and torques at nodes act through A^T f, A^T tq (texts). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/vec3.h"
#include "mech/beam.h"
#include "mech/mech_internal.h"
#include "model/ffr3.h"

/* a positive number of the body given by key, and its text (NULL when txt is NULL) */
static int num(mech *M, const yaml_node_t *val, const char *key, const char *what, int req, double *out)
{
    return mech_beam_number_t(M, val, key, what, req, out, NULL);
}

void mech_flex_rot_xyz(mech *M, const char *const th[3], const char *Rn[9])
{
    const char *cx = mech_fmt(M, "cos(%s)", th[0]), *sx = mech_fmt(M, "sin(%s)", th[0]);
    const char *cy = mech_fmt(M, "cos(%s)", th[1]), *sy = mech_fmt(M, "sin(%s)", th[1]);
    const char *cz = mech_fmt(M, "cos(%s)", th[2]), *sz = mech_fmt(M, "sin(%s)", th[2]);
    /* Rn = Rx Ry Rz, row-major */
    const char *R[9] = {mech_fmt(M, "%s*%s", cy, cz),
                        mech_fmt(M, "(-%s*%s)", cy, sz),
                        sy,
                        mech_fmt(M, "(%s*%s + %s*%s*%s)", cx, sz, sx, sy, cz),
                        mech_fmt(M, "(%s*%s - %s*%s*%s)", cx, cz, sx, sy, sz),
                        mech_fmt(M, "(-%s*%s)", sx, cy),
                        mech_fmt(M, "(%s*%s - %s*%s*%s)", sx, sz, cx, sy, cz),
                        mech_fmt(M, "(%s*%s + %s*%s*%s)", sx, cz, cx, sy, sz),
                        mech_fmt(M, "%s*%s", cx, cy)};
    memcpy(Rn, R, sizeof R);
}

static int beam3_markers(mech *M, int bi, const yaml_node_t *mks, int ne, double L, const char *Lt,
                         const char *const *qf)
{
    if (!mks || (mks->type == YAML_SCALAR_NODE && mks->data.scalar.length == 0)) return 0;
    body *B = &M->b[bi];
    char what[200];
    snprintf(what, sizeof what, "markers of body '%s'", B->name);
    int rc = mech_want_map(M, mks, what);
    for (yaml_node_pair_t *p = mks->data.mapping.pairs.start; !rc && p < mks->data.mapping.pairs.top; p++) {
        yaml_node_t *key = mech_node(M->doc, p->key), *val = mech_node(M->doc, p->value);
        static const char *ok[] = {"node", "s", NULL};
        if ((rc = mech_flex_marker_key(M, B, key, val, ok, what, sizeof what))) return rc;
        const char *name = mech_sc(key);
        int node;
        if ((rc = mech_beam_node(M, val, what, ne, L, &node))) return rc;
        marker *K;
        if ((rc = mech_new_marker(M, name, bi, key, &K))) return rc;
        K->node = node + 1;
        memcpy(K->R0, B->R0, sizeof K->R0); /* the node's axes are the frame's in the file's configuration */
        K->mq[0] = 1;
        const char *const *d = qf + 6 * node;
        /* body-frame position (X + ux, uy, uz) and the node's axes Rx(rx) Ry(ry) Rz(rz) */
        /* the node's undeformed place as a text of the length (which may be a parameter) */
        const char *u[3] = {node ? mech_fmt(M, "((%s)*%d/%d + %s)", Lt, node, ne, d[0]) : mech_fmt(M, "(%s)", d[0]), d[1],
                            d[2]};
        if (node && B->gle) { /* drawn toward the root by the foreshortening (geometric stiffness) */
            const char *sh = mech_beam_sh_text(M, B, node), *shn = mech_fmt(M, "_sh_%s", name);
            if (!sh) return mech_oom(M);
            if ((rc = mech_add_var(M, shn, sh, K->line, K->col))) return rc;
            u[0] = mech_fmt(M, "((%s)*%d/%d + %s - %s)", Lt, node, ne, d[0], shn);
        }
        for (int k = 0; k < 3; k++) K->s[k] = u[k];
        const char *Rn[9];
        mech_flex_rot_xyz(M, d + 3, Rn);
        rc = mech_flex_marker_frame(M, K, B, NULL, u, Rn);
    }
    return rc;
}

/* initial velocities, as a rigid body's (body.c): `velocity`, and `angular_velocity` (global) as
 * the Euler parameters' rates der(e) = 1/2 E^T w at the initial e0 */
static int beam3_velocity(mech *M, const body *B, const yaml_node_t *val, const double e0[4])
{
    yaml_node_t *vn = mech_get(M, val, "velocity"), *wn = mech_get(M, val, "angular_velocity");
    const char *v0[3], *w0[3], *r0[4];
    int rc = 0;
    if (vn && !(rc = mech_vec_of(M, vn, 3, "velocity", v0)))
        for (int k = 0; k < 3 && !rc; k++) rc = mech_push_at(M, &M->src->velocities, B->r[k], v0[k], vn);
    if (!rc && wn && !(rc = mech_vec_of(M, wn, 3, "angular_velocity", w0))) {
        mech_tx_euler_rates(M, e0, w0, r0);
        for (int k = 0; k < 4 && !rc; k++) rc = mech_push_at(M, &M->src->velocities, B->e[k], r0[k], wn);
    }
    return rc;
}

int mech_read_beam3(mech *M, const yaml_node_t *key, const yaml_node_t *val)
{
    const char *name = mech_sc(key);
    char what[200];
    snprintf(what, sizeof what, "body '%s'", name);
    static const char *ok[] = {"type",   "length", "elements", "E",        "G",     "rho",   "radius",  "A",
                               "Iy",     "Iz",     "J",        "damping",  "position", "axis", "angle", "markers",
                               "geometric_stiffness", "velocity", "angular_velocity", NULL};
    int rc = mech_check_keys(M, val, ok, what);
    if (rc) return rc;
    int geo = 1; /* the geometric stiffness of the axial load (model/ffr3.h) */
    if ((rc = mech_beam_geometric_key(M, val, what, &geo))) return rc;
    mbl_beam_section sec;
    memset(&sec, 0, sizeof sec);
    double L, nel, r;
    const char *Lt, *Et, *Gt, *rhot, *Ar, *Iyt, *Izt, *Jt; /* texts of the parameters (sensitivities) */
    if ((rc = mech_beam_number_t(M, val, "length", what, 1, &L, &Lt)) || (rc = num(M, val, "elements", what, 1, &nel)) ||
        (rc = mech_beam_number_t(M, val, "E", what, 1, &sec.E, &Et)) || (rc = mech_beam_number_t(M, val, "G", what, 1, &sec.G, &Gt)) ||
        (rc = mech_beam_number_t(M, val, "rho", what, 1, &sec.rho, &rhot)))
        return rc;
    if (nel != floor(nel) || nel > 1e5)
        return err_at(M, mech_get(M, val, "elements"), "%s: 'elements' must be a whole number (1 to 1e5), not %g", what, nel);
    int ne = (int)nel, nf = 6 * (ne + 1);
    yaml_node_t *rn = mech_get(M, val, "radius");
    if (rn && (mech_get(M, val, "A") || mech_get(M, val, "Iy") || mech_get(M, val, "Iz") || mech_get(M, val, "J")))
        return err_at(M, rn, "%s: give the section by 'radius' or by 'A', 'Iy', 'Iz' and 'J', not both", what);
    if (rn) {
        const char *rt;
        if ((rc = mech_beam_number_t(M, val, "radius", what, 1, &r, &rt))) return rc;
        double pi = acos(-1.0);
        sec.A = pi * r * r, sec.Iy = sec.Iz = pi * r * r * r * r / 4, sec.J = pi * r * r * r * r / 2;
        Ar = mech_fmt(M, "pi*(%s)^2", rt), Iyt = Izt = mech_fmt(M, "pi*(%s)^4/4", rt), Jt = mech_fmt(M, "pi*(%s)^4/2", rt);
    } else if ((rc = mech_beam_number_t(M, val, "A", what, 1, &sec.A, &Ar)) || (rc = mech_beam_number_t(M, val, "Iy", what, 1, &sec.Iy, &Iyt)) ||
               (rc = mech_beam_number_t(M, val, "Iz", what, 1, &sec.Iz, &Izt)) || (rc = mech_beam_number_t(M, val, "J", what, 1, &sec.J, &Jt)))
        return rc;
    double ab[2] = {0, 0};
    const char *dt[2] = {NULL, NULL};
    yaml_node_t *dnode[2] = {NULL, NULL};
    if ((rc = mech_beam_damping(M, val, what, ab, dt, dnode, 0))) return rc;
    double alpha = ab[0], beta = ab[1];
    int bi;
    if ((rc = mech_flex_frame3(M, key, val, what, &bi))) return rc;
    body *B = &M->b[bi];
    char **e = B->e;

    /* elastic coordinates, the frame tangent at node 1 */
    const char **qf = mbl_calloc((size_t)nf + 4, sizeof *qf);
    if (!qf || !mech_keep(M, (char *)qf)) return mech_oom(M);
    for (int k = 0; k < 4; k++) qf[k] = e[k]; /* the structured term's coordinates: e0..e3, then the elastic ones */
    static const char *comp[6] = {"ux", "uy", "uz", "rx", "ry", "rz"};
    for (int i = 0; i < nf && !rc; i++) {
        qf[4 + i] = mech_fmt(M, "%s_%s%d", name, comp[i % 6], i / 6 + 1);
        rc = mech_push(M, &M->src->coordinates, qf[4 + i], "0", B->line, B->col);
    }
    for (int k = 0; k < 6 && !rc; k++)
        rc = mech_push(M, &M->src->constraints, mech_fmt(M, "body %s (floating frame tangent at node 1)", name), qf[4 + k],
                       B->line, B->col);
    if (rc) return rc;
    B->qf3 = qf + 4, B->nqf3 = nf;
    mbl_ffr_body *f = mech_flex_new(M, B, 4 + nf, qf);
    if (!f) return mech_oom(M);
    f->alpha = alpha, f->beta = beta;
    /* how the invariants depend on the parameters (model/ffr.h, ffr3.h): mass rho A, the sections'
     * polar inertia rho (Iy + Iz), stiffness EA (class 0: ux), E Iz (1: uy, rz), E Iy (2: uz, ry),
     * G J (3: rx), the length (the slopes ry, rz carry one), the damping */
    f->lexp = mbl_calloc((size_t)nf + 4, sizeof *f->lexp);
    f->kcls = mbl_calloc((size_t)nf + 4, sizeof *f->kcls);
    if (!f->lexp || !f->kcls) return mech_oom(M);
    static const signed char cls6[6] = {0, 1, 2, 3, 2, 1};
    for (int i = 0; i < nf; i++) f->lexp[i] = i % 6 >= 4, f->kcls[i] = cls6[i % 6]; /* over the elastic coordinates */
    f->kexp[0] = -1, f->kexp[1] = -3, f->kexp[2] = -3, f->kexp[3] = -1;
    {
        mech_flex_fac fa[9] = {{MBL_FFR_FAC_MASS, 0, mech_fmt(M, "(%s)*(%s)", rhot, Ar), sec.rho * sec.A, key},
                               {MBL_FFR_FAC_POLAR, 0, mech_fmt(M, "(%s)*((%s) + (%s))", rhot, Iyt, Izt), sec.rho * (sec.Iy + sec.Iz), key},
                               {MBL_FFR_FAC_STIFF, 0, mech_fmt(M, "(%s)*(%s)", Et, Ar), sec.E * sec.A, key},
                               {MBL_FFR_FAC_STIFF, 1, mech_fmt(M, "(%s)*(%s)", Et, Izt), sec.E * sec.Iz, key},
                               {MBL_FFR_FAC_STIFF, 2, mech_fmt(M, "(%s)*(%s)", Et, Iyt), sec.E * sec.Iy, key},
                               {MBL_FFR_FAC_STIFF, 3, mech_fmt(M, "(%s)*(%s)", Gt, Jt), sec.G * sec.J, key},
                               {MBL_FFR_FAC_LENGTH, 0, Lt, L, key},
                               {MBL_FFR_FAC_ALPHA, 0, dt[0], alpha, dnode[0]},
                               {MBL_FFR_FAC_BETA, 0, dt[1], beta, dnode[1]}};
        int frc = mech_flex_factors(M, f, fa, 9);
        if (frc) return frc;
    }
    mbl_ffr3 *sp = mbl_calloc(1, sizeof *sp);
    if (!sp) return mech_oom(M);
    f->sp = sp;
    rc = mech_beam3_invariants(&sec, L, ne, sp, M->st);
    if (rc) return rc == MBL_ENOMEM ? rc : err_at(M, key, "%s: %s", what, M->st->msg);
    if (!geo) {
        mbla_csc_free(sp->H1), mbla_csc_free(sp->Hx);
        sp->H1 = sp->Hx = NULL;
    }
    M->b[bi].gle = geo ? mech_fmt(M, "((%s)/%d)", Lt, ne) : NULL;
    if ((rc = mech_beam_strain_validity(M, &M->b[bi], qf[4 + 6 * ne], Lt))) return rc;
    return beam3_markers(M, bi, mech_get(M, val, "markers"), ne, L, Lt, qf + 4);
}

int mech_flex_frame3(mech *M, const yaml_node_t *key, const yaml_node_t *val, const char *what, int *bi)
{
    /* the frame's orientation: a rotation by 'angle' about 'axis' (Rodrigues) */
    const char *name = mech_sc(key);
    int rc = 0;
    double R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, e0[4];
    yaml_node_t *axn = mech_get(M, val, "axis"), *ann = mech_get(M, val, "angle");
    if (!axn != !ann) return err_at(M, axn ? axn : ann, "%s: give 'axis' and 'angle' together", what);
    if (axn) {
        double k[3], a;
        const char *at;
        int was = M->track_numeric;
        M->track_numeric = 1; /* numbers of the equations: no derivative by their parameters */
        if ((rc = mech_eval_vec(M, axn, 3, "axis", k)) || (rc = mech_text_of(M, ann, "angle", &at)) ||
            (rc = mech_eval_text(M, at, ann, "angle", &a))) {
            M->track_numeric = was;
            return rc;
        }
        M->track_numeric = was;
        double nk = sqrt(vec3_dot(k, k));
        if (!(nk > 0)) return err_at(M, axn, "%s: the rotation axis is zero", what);
        for (int i = 0; i < 3; i++) k[i] /= nk;
        double c = cos(a), s = sin(a), K[9] = {0, k[2], -k[1], -k[2], 0, k[0], k[1], -k[0], 0}; /* column-major */
        for (int j = 0; j < 3; j++)
            for (int i = 0; i < 3; i++) {
                double KK = 0;
                for (int l = 0; l < 3; l++) KK += K[i + 3 * l] * K[l + 3 * j];
                R[i + 3 * j] = (i == j) + s * K[i + 3 * j] + (1 - c) * KK;
            }
    }
    mech_euler_params(R, e0);
    const char *p0[3] = {"0", "0", "0"};
    yaml_node_t *pn = mech_get(M, val, "position");
    if (pn && (rc = mech_vec_of(M, pn, 3, "position", p0))) return rc;

    body *B = mech_new_body(M, name, key);
    if (!B) return mech_oom(M);
    *bi = M->nb - 1;
    B->kind = KIND_SPATIAL;
    memcpy(B->R0, R, sizeof R);
    memcpy(B->q0, e0, sizeof e0);
    B->oset = -1;
    for (int k = 0; k < 6; k++) B->I[k] = "0";
    static const char *cn[3] = {"x", "y", "z"};
    for (int k = 0; k < 3 && !rc; k++) {
        B->p0[k] = p0[k];
        B->r[k] = mech_fmt(M, "%s_%s", name, cn[k]);
        rc = mech_push_at(M, &M->src->coordinates, B->r[k], p0[k], pn ? pn : key);
    }
    for (int k = 0; k < 4 && !rc; k++) {
        B->e[k] = mech_fmt(M, "%s_e%d", name, k);
        rc = mech_push_at(M, &M->src->coordinates, B->e[k], mech_num(M, e0[k]), axn ? axn : key);
    }
    if (!rc) rc = beam3_velocity(M, B, val, e0);
    if (rc) return rc;
    /* inertia and gravity: the structured term (model/ffr3.c) */
    B->mass = "0";
    for (int k = 0; k < 3; k++) B->cm[k] = "0";
    return mech_euler_texts(M, B, 1, 1); /* normalization, B->A, B->w as a rigid body's */
}

/* c * the element blocks E (ne blocks 12 x 12, column-major, at dof 6 e) assembled */
static int assemble12(int ne, const double *E, mbla_csc **out, mbl_status *st)
{
    int nz = 0, nf = 6 * (ne + 1), rc = 0;
    for (int k = 0; k < 144; k++) nz += E[k] != 0;
    size_t tot = (size_t)nz * ne + 1;
    int *ti = mbl_alloc_array(tot, sizeof *ti), *tj = mbl_alloc_array(tot, sizeof *tj);
    double *tx = mbl_alloc_array(tot, sizeof *tx);
    if (!ti || !tj || !tx) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    size_t k = 0;
    for (int e = 0; e < ne && !rc; e++)
        for (int j = 0; j < 12; j++)
            for (int i = 0; i < 12; i++)
                if (E[i + 12 * j] != 0) ti[k] = 6 * e + i, tj[k] = 6 * e + j, tx[k++] = E[i + 12 * j];
    if (!rc) rc = mbla_csc_from_triplets(nf, nf, (int)k, ti, tj, tx, NULL, out, st);
    mbl_free(ti), mbl_free(tj), mbl_free(tx);
    return rc;
}

/* The geometric-stiffness invariants (model/ffr3.h) of a spatial beam: H1 = int rho A (L - X)
 * (Sy'^T Sy' + Sz'^T Sz') dX and Hx = int rho A (L^2 - X^2) / 2 (Sy'^T Sy' + Sz'^T Sz') dX, the
 * slopes of both bending planes (uy' of (uy, rz), uz' of (uz, -ry): beam.c's Hermite cubics), as
 * beam.c's beam2_geometric: per element three matrices G_p = int x^p d d^T dx (exact: degree <= 6). */
static int beam3_geometric(double rA, double L, int ne, mbl_ffr3 *sp, mbl_status *st)
{
    double le = L / ne, gx[4], gw[4], G[3][16] = {{0}};
    mech_beam3_gauss(gx, gw);
    for (int k = 0; k < 4; k++) {
        double xi = gx[k], x = xi * le, w = gw[k] * le;
        double d[4] = {(-6 * xi + 6 * xi * xi) / le, 1 - 4 * xi + 3 * xi * xi, (6 * xi - 6 * xi * xi) / le,
                       -2 * xi + 3 * xi * xi};
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++)
                for (int p = 0; p < 3; p++) G[p][i + 4 * j] += w * (p ? (p == 1 ? x : x * x) : 1.0) * d[i] * d[j];
    }
    size_t nz = (size_t)ne * 32;
    int *ti = mbl_alloc_array(nz + 1, sizeof *ti), *tj = mbl_alloc_array(nz + 1, sizeof *tj);
    double *t1 = mbl_alloc_array(nz + 1, sizeof *t1), *tx = mbl_alloc_array(nz + 1, sizeof *tx);
    int rc = 0, nf = 6 * (ne + 1);
    if (!ti || !tj || !t1 || !tx) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    /* the element's dofs of the two planes and the signs of their slopes: (uy_a, rz_a, uy_b, rz_b),
     * (uz_a, ry_a, uz_b, ry_b) with ry = -uz' */
    static const int dof[2][4] = {{1, 5, 7, 11}, {2, 4, 8, 10}};
    static const double sg[2][4] = {{1, 1, 1, 1}, {1, -1, 1, -1}};
    size_t k = 0;
    for (int e = 0; e < ne && !rc; e++) {
        double X0 = e * le, a1 = rA * (L - X0), ax = rA * (L * L - X0 * X0) / 2;
        for (int pl = 0; pl < 2; pl++)
            for (int j = 0; j < 4; j++)
                for (int i = 0; i < 4; i++, k++) {
                    int m = i + 4 * j;
                    double c = sg[pl][i] * sg[pl][j];
                    ti[k] = 6 * e + dof[pl][i], tj[k] = 6 * e + dof[pl][j];
                    t1[k] = c * (a1 * G[0][m] - rA * G[1][m]);
                    tx[k] = c * (ax * G[0][m] - rA * X0 * G[1][m] - rA * G[2][m] / 2);
                }
    }
    if (!rc) rc = mbla_csc_from_triplets(nf, nf, (int)k, ti, tj, t1, NULL, &sp->H1, st);
    if (!rc) rc = mbla_csc_from_triplets(nf, nf, (int)k, ti, tj, tx, NULL, &sp->Hx, st);
    mbl_free(ti), mbl_free(tj), mbl_free(t1), mbl_free(tx);
    return rc;
}

int mech_beam3_invariants(const mbl_beam_section *sec, double L, int ne, mbl_ffr3 *sp, mbl_status *st)
{
    memset(sp, 0, sizeof *sp);
    int nf = 6 * (ne + 1), rc = 0;
    /* per element: Sb (3 x 12), int rho X S (X within the element; the element's start is X0 Sb),
     * int rho S_a^T S_b (9 blocks 12 x 12), int rho Ip tw */
    double le = L / ne, rA = sec->rho * sec->A, rIp = sec->rho * (sec->Iy + sec->Iz), gx[4], gw[4];
    mech_beam3_gauss(gx, gw);
    double Sbe[3][12] = {{0}}, cxe[3][12] = {{0}}, Mab[9][144], twe[12] = {0};
    memset(Mab, 0, sizeof Mab);
    for (int k = 0; k < 4; k++) {
        double S[36], tw[12], w = gw[k] * le * rA, X = gx[k] * le;
        mech_beam3_shape(gx[k], le, S, tw);
        for (int i = 0; i < 12; i++) {
            twe[i] += gw[k] * le * rIp * tw[i];
            for (int a = 0; a < 3; a++) {
                Sbe[a][i] += w * S[12 * a + i];
                cxe[a][i] += w * X * S[12 * a + i];
                for (int b = 0; b < 3; b++)
                    for (int j = 0; j < 12; j++) Mab[3 * a + b][i + 12 * j] += w * S[12 * a + i] * S[12 * b + j];
            }
        }
    }
    sp->nf = nf;
    sp->Sb = mbl_calloc((size_t)3 * nf, sizeof *sp->Sb), sp->Cu = mbl_calloc((size_t)9 * nf, sizeof *sp->Cu);
    sp->tw = mbl_calloc((size_t)nf, sizeof *sp->tw);
    sp->nnode = ne + 1;
    sp->X0 = mbl_calloc((size_t)3 * (ne + 1), sizeof *sp->X0);
    sp->ndof = mbl_alloc_array((size_t)6 * (ne + 1), sizeof *sp->ndof);
    if (!sp->Sb || !sp->Cu || !sp->tw || !sp->X0 || !sp->ndof) {
        model_ffr3_free(sp);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    for (int el = 0; el < ne; el++)
        for (int i = 0; i < 12; i++) {
            int dof = 6 * el + i;
            sp->tw[dof] += twe[i];
            for (int a = 0; a < 3; a++) {
                sp->Sb[a * nf + dof] += Sbe[a][i];
                sp->Cu[a * nf + dof] += cxe[a][i] + el * le * Sbe[a][i];
            }
        }
    for (int i = 0; i <= ne; i++) {
        sp->X0[3 * i] = i * le;
        for (int k = 0; k < 6; k++) sp->ndof[6 * i + k] = 6 * i + k;
    }
    sp->m = rA * L, sp->s0[0] = rA * L * L / 2, sp->Q0[0] = rA * L * L * L / 3, sp->IpL = rIp * L;
    for (int k = 0; k < 9 && !rc; k++) rc = assemble12(ne, Mab[k], &sp->M[k], st);
    if (!rc) rc = mech_beam_assemble(3, sec, L, ne, &sp->K, &sp->Mc, st);
    if (!rc) rc = beam3_geometric(rA, L, ne, sp, st);
    if (rc) model_ffr3_free(sp);
    return rc;
}
