/* The spatial beam body of `model: mechanism` (docs/mechanism.md, "Spatial beams").
 *
 *   arm:
 *     type: beam
 *     length: 2          elements: 10
 *     E: 2.1e11   G: 8.1e10   rho: 7850
 *     radius: 0.01        (or A:, Iy:, Iz:, J:)
 *     damping: {alpha: 0, beta: 1e-4}
 *     position: [0, 0, 0]   axis: [0, 0, 1]   angle: 0     (the floating frame, x along the beam)
 *     markers: {root: {node: 1}, tip: {s: 2}}
 *
 * Coordinates: the frame <b>_x, _y, _z and Euler parameters <b>_e0.._e3 (with their normalization
 * constraint, as a rigid body's), and per node i the displacements <b>_ux<i>, _uy<i>, _uz<i> and
 * small rotations <b>_rx<i> (twist), _ry<i>, _rz<i> in the frame. The frame is attached tangent to
 * the beam at node 1 (its six elastic coordinates are held at 0: source 001 Sec. 4.2).
 *
 * The element is the spatial Euler-Bernoulli element of beam.c (cubic bending in both planes,
 * linear axial and St. Venant torsion; small strains, no geometric stiffening). With u = u0 + S q
 * the body-frame position of a point of the centre line, the kinetic energy is written exactly
 * through the inertia invariants of the element's shape functions:
 *   T = m/2 |R'|^2 + R'.A (w x s + Sb q') + w^T I(q) w / 2 + w.h(q, q') + q'^T Mff q' / 2
 *       + rho Ip L wx^2 / 2 + wx (int rho Ip tw).q'
 * with w the body-frame angular velocity, s = s0 + Sb q, I(q) = int rho (|u|^2 - u u^T),
 * h = int rho u x u', and the sections' polar inertia (rho Ip) turning with the frame and the
 * twist. The invariants int rho S_a^T S_b are the same for every element; the texts are written
 * once per element. Gravity acts on the deformed body (m R + A s), K q and Rayleigh damping
 * (alpha Mff + beta K) q' act on the elastic coordinates, forces at nodes through A^T f, A^T tq. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mech/beam.h"
#include "mech/mech_internal.h"

static int num(mech *M, const yaml_node_t *val, const char *key, const char *what, int req, double *out)
{
    yaml_node_t *n = mech_get(M, val, key);
    if (!n) return req ? err_at(M, val, "%s: missing '%s'", what, key) : 1;
    const char *t;
    int rc = mech_text_of(M, n, key, &t);
    mech_set_track(M);
    if (!rc) rc = mech_eval_text(M, t, n, key, out);
    if (rc) return rc;
    if (!isfinite(*out) || !(*out > 0))
        return err_at(M, n, "%s: '%s' must be positive and finite (it is %g)%s", what, key, *out, mech_set_note(M));
    return 0;
}

/* c*x*y terms of sum_e sum_ij E_ij x[6e + i] y[6e + j] (E 12 x 12 column-major) */
static void bil_text(mech *M, sbuf *b, int ne, const double *E, const char *const *x, const char *const *y)
{
    for (int e = 0; e < ne; e++)
        for (int j = 0; j < 12; j++)
            for (int i = 0; i < 12; i++) {
                double c = E[i + 12 * j];
                if (c == 0) continue;
                mech_sb_add(M, b, " + ", mech_fmt(M, "%s*%s*%s", mech_num(M, c), x[6 * e + i], y[6 * e + j]));
            }
}

/* sum_j v_j x_j */
static void lin_text(mech *M, sbuf *b, int nf, const double *v, const char *const *x)
{
    for (int j = 0; j < nf; j++)
        if (v[j] != 0) mech_sb_add(M, b, " + ", mech_fmt(M, "%s*%s", mech_num(M, v[j]), x[j]));
}

static const char *done(mech *M, sbuf *b)
{
    if (!b->n) mech_sb_add(M, b, "", "0");
    return mech_sb_done(M, b);
}

static int beam3_markers(mech *M, int bi, const yaml_node_t *mks, int ne, double L, const char *const *qf)
{
    if (!mks || (mks->type == YAML_SCALAR_NODE && mks->data.scalar.length == 0)) return 0;
    body *B = &M->b[bi];
    char what[200];
    snprintf(what, sizeof what, "markers of body '%s'", B->name);
    int rc = mech_want_map(M, mks, what);
    for (yaml_node_pair_t *p = mks->data.mapping.pairs.start; !rc && p < mks->data.mapping.pairs.top; p++) {
        yaml_node_t *key = yaml_document_get_node(M->doc, p->key), *val = yaml_document_get_node(M->doc, p->value);
        if (!mech_is_scalar(key)) return err_at(M, key, "%s: a marker name must be a plain word", what);
        const char *name = mech_sc(key);
        snprintf(what, sizeof what, "marker '%s' of body '%s'", name, B->name);
        if (!mech_valid_name(name)) return err_at(M, key, "%s: not a valid name (letters, digits, _)", what);
        if (mech_find_marker(M, name, strlen(name)) >= 0) return err_at(M, key, "duplicate marker name '%s'", name);
        if ((rc = mech_want_map(M, val, what))) return rc;
        static const char *ok[] = {"node", "s", NULL};
        if ((rc = mech_check_keys(M, val, ok, what))) return rc;
        int node;
        if ((rc = mech_beam_node(M, val, what, ne, L, &node))) return rc;
        marker *K;
        if ((rc = mech_new_marker(M, name, bi, key, &K))) return rc;
        K->node = node + 1;
        memcpy(K->R0, B->R0, sizeof K->R0); /* the node's axes are the frame's in the file's configuration */
        K->mq[0] = 1;
        const char *const *d = qf + 6 * node;
        /* body-frame position (X + ux, uy, uz) and the node's axes Rx(rx) Ry(ry) Rz(rz) */
        const char *u[3] = {mech_fmt(M, "(%s*%s + %s)", mech_num(M, node * (L / ne)), "1", d[0]), d[1], d[2]};
        for (int k = 0; k < 3; k++) K->s[k] = u[k];
        const char *cx = mech_fmt(M, "cos(%s)", d[3]), *sx = mech_fmt(M, "sin(%s)", d[3]);
        const char *cy = mech_fmt(M, "cos(%s)", d[4]), *sy = mech_fmt(M, "sin(%s)", d[4]);
        const char *cz = mech_fmt(M, "cos(%s)", d[5]), *sz = mech_fmt(M, "sin(%s)", d[5]);
        /* Rn = Rx Ry Rz, row-major */
        const char *Rn[9] = {mech_fmt(M, "%s*%s", cy, cz),
                             mech_fmt(M, "(-%s*%s)", cy, sz),
                             sy,
                             mech_fmt(M, "(%s*%s + %s*%s*%s)", cx, sz, sx, sy, cz),
                             mech_fmt(M, "(%s*%s - %s*%s*%s)", cx, cz, sx, sy, sz),
                             mech_fmt(M, "(-%s*%s)", sx, cy),
                             mech_fmt(M, "(%s*%s - %s*%s*%s)", sx, sz, cx, sy, cz),
                             mech_fmt(M, "(%s*%s + %s*%s*%s)", sx, cz, cx, sy, sz),
                             mech_fmt(M, "%s*%s", cx, cy)};
        for (int k = 0; k < 3 && !rc; k++) {
            K->p[k] = mech_fmt(M, "_p_%s_%d", name, k + 1);
            rc = mech_add_var(M, K->p[k],
                              mech_fmt(M, "%s + %s*%s + %s*%s + %s*%s", B->r[k], B->A[3 * k], u[0], B->A[3 * k + 1], u[1],
                                       B->A[3 * k + 2], u[2]),
                              K->line, K->col);
        }
        static const char axn[3] = {'x', 'y', 'z'};
        for (int a = 0; a < 3 && !rc; a++)
            for (int k = 0; k < 3 && !rc; k++) { /* (A Rn)[k][a] */
                K->ax[a][k] = mech_fmt(M, "_%c_%s_%d", axn[a], name, k + 1);
                rc = mech_add_var(M, K->ax[a][k],
                                  mech_fmt(M, "%s*%s + %s*%s + %s*%s", B->A[3 * k], Rn[a], B->A[3 * k + 1], Rn[3 + a],
                                           B->A[3 * k + 2], Rn[6 + a]),
                                  K->line, K->col);
            }
    }
    return rc;
}

int mech_read_beam3(mech *M, const yaml_node_t *key, const yaml_node_t *val)
{
    const char *name = mech_sc(key);
    char what[200];
    snprintf(what, sizeof what, "body '%s'", name);
    static const char *ok[] = {"type",   "length", "elements", "E",        "G",     "rho",   "radius",  "A",
                               "Iy",     "Iz",     "J",        "damping",  "position", "axis", "angle", "markers", NULL};
    int rc = mech_check_keys(M, val, ok, what);
    if (rc) return rc;
    mbl_beam_section sec;
    memset(&sec, 0, sizeof sec);
    double L, nel, r;
    if ((rc = num(M, val, "length", what, 1, &L)) || (rc = num(M, val, "elements", what, 1, &nel)) ||
        (rc = num(M, val, "E", what, 1, &sec.E)) || (rc = num(M, val, "G", what, 1, &sec.G)) ||
        (rc = num(M, val, "rho", what, 1, &sec.rho)))
        return rc;
    if (nel != floor(nel) || nel > 1e5)
        return err_at(M, mech_get(M, val, "elements"), "%s: 'elements' must be a whole number (1 to 1e5), not %g", what, nel);
    int ne = (int)nel, nf = 6 * (ne + 1);
    yaml_node_t *rn = mech_get(M, val, "radius");
    if (rn && (mech_get(M, val, "A") || mech_get(M, val, "Iy") || mech_get(M, val, "Iz") || mech_get(M, val, "J")))
        return err_at(M, rn, "%s: give the section by 'radius' or by 'A', 'Iy', 'Iz' and 'J', not both", what);
    if (rn) {
        if ((rc = num(M, val, "radius", what, 1, &r))) return rc;
        double pi = acos(-1.0);
        sec.A = pi * r * r, sec.Iy = sec.Iz = pi * r * r * r * r / 4, sec.J = pi * r * r * r * r / 2;
    } else if ((rc = num(M, val, "A", what, 1, &sec.A)) || (rc = num(M, val, "Iy", what, 1, &sec.Iy)) ||
               (rc = num(M, val, "Iz", what, 1, &sec.Iz)) || (rc = num(M, val, "J", what, 1, &sec.J)))
        return rc;
    double alpha = 0, beta = 0;
    yaml_node_t *dn = mech_get(M, val, "damping");
    if (dn) {
        static const char *okd[] = {"alpha", "beta", NULL};
        if ((rc = mech_want_map(M, dn, "damping")) || (rc = mech_check_keys(M, dn, okd, "damping"))) return rc;
        const char *keys[2] = {"alpha", "beta"};
        double *dst[2] = {&alpha, &beta};
        for (int k = 0; k < 2; k++) {
            yaml_node_t *x = mech_get(M, dn, keys[k]);
            const char *t;
            if (!x) continue;
            if ((rc = mech_text_of(M, x, keys[k], &t)) || (rc = mech_eval_text(M, t, x, keys[k], dst[k]))) return rc;
            if (!(*dst[k] >= 0) || !isfinite(*dst[k]))
                return err_at(M, x, "%s: damping %s must be >= 0 and finite (it is %g)", what, keys[k], *dst[k]);
        }
    }
    /* the frame's orientation: a rotation by 'angle' about 'axis' (Rodrigues), x along the beam */
    double R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, e0[4];
    yaml_node_t *axn = mech_get(M, val, "axis"), *ann = mech_get(M, val, "angle");
    if (!axn != !ann) return err_at(M, axn ? axn : ann, "%s: give 'axis' and 'angle' together", what);
    if (axn) {
        double k[3], a;
        const char *at;
        if ((rc = mech_eval_vec(M, axn, 3, "axis", k)) || (rc = mech_text_of(M, ann, "angle", &at)) ||
            (rc = mech_eval_text(M, at, ann, "angle", &a)))
            return rc;
        double nk = sqrt(k[0] * k[0] + k[1] * k[1] + k[2] * k[2]);
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
    int bi = M->nb - 1;
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
    if (rc) return rc;
    char **e = B->e;
    rc = mech_push(M, &M->src->constraints, mech_fmt(M, "body %s (Euler parameter normalization)", name),
                   mech_fmt(M, "%s^2 + %s^2 + %s^2 + %s^2 - 1", e[0], e[1], e[2], e[3]), B->line, B->col);
    const char *At[9] = {
        mech_fmt(M, "2*(%s^2 + %s^2) - 1", e[0], e[1]),     mech_fmt(M, "2*(%s*%s - %s*%s)", e[1], e[2], e[0], e[3]),
        mech_fmt(M, "2*(%s*%s + %s*%s)", e[1], e[3], e[0], e[2]), mech_fmt(M, "2*(%s*%s + %s*%s)", e[1], e[2], e[0], e[3]),
        mech_fmt(M, "2*(%s^2 + %s^2) - 1", e[0], e[2]),     mech_fmt(M, "2*(%s*%s - %s*%s)", e[2], e[3], e[0], e[1]),
        mech_fmt(M, "2*(%s*%s - %s*%s)", e[1], e[3], e[0], e[2]), mech_fmt(M, "2*(%s*%s + %s*%s)", e[2], e[3], e[0], e[1]),
        mech_fmt(M, "2*(%s^2 + %s^2) - 1", e[0], e[3])};
    for (int k = 0; k < 9 && !rc; k++) {
        B->A[k] = mech_fmt(M, "_A_%s_%d%d", name, k / 3 + 1, k % 3 + 1);
        rc = mech_add_var(M, B->A[k], At[k], B->line, B->col);
    }
    const char *d[4];
    for (int k = 0; k < 4; k++) d[k] = mech_fmt(M, "der(%s)", e[k]);
    const char *wg[3] = {
        mech_fmt(M, "2*(-%s*%s + %s*%s - %s*%s + %s*%s)", e[1], d[0], e[0], d[1], e[3], d[2], e[2], d[3]),
        mech_fmt(M, "2*(-%s*%s + %s*%s + %s*%s - %s*%s)", e[2], d[0], e[3], d[1], e[0], d[2], e[1], d[3]),
        mech_fmt(M, "2*(-%s*%s - %s*%s + %s*%s + %s*%s)", e[3], d[0], e[2], d[1], e[1], d[2], e[0], d[3])};
    const char *wb[3] = {
        mech_fmt(M, "2*(-%s*%s + %s*%s + %s*%s - %s*%s)", e[1], d[0], e[0], d[1], e[3], d[2], e[2], d[3]),
        mech_fmt(M, "2*(-%s*%s - %s*%s + %s*%s + %s*%s)", e[2], d[0], e[3], d[1], e[0], d[2], e[1], d[3]),
        mech_fmt(M, "2*(-%s*%s + %s*%s - %s*%s + %s*%s)", e[3], d[0], e[2], d[1], e[1], d[2], e[0], d[3])};
    const char *om[3];
    for (int k = 0; k < 3 && !rc; k++) {
        B->w[k] = mech_fmt(M, "_w_%s_%d", name, k + 1);
        rc = mech_add_var(M, B->w[k], wg[k], B->line, B->col);
        om[k] = mech_fmt(M, "_wb3_%s_%d", name, k + 1);
        if (!rc) rc = mech_add_var(M, om[k], wb[k], B->line, B->col);
    }
    if (rc) return rc;

    /* elastic coordinates, the frame tangent at node 1 */
    const char **qf = mbl_calloc((size_t)nf, sizeof *qf), **dq = mbl_calloc((size_t)nf, sizeof *dq);
    if (!qf || !mech_keep(M, (char *)qf) || !dq || !mech_keep(M, (char *)dq)) return mech_oom(M);
    static const char *comp[6] = {"ux", "uy", "uz", "rx", "ry", "rz"};
    for (int i = 0; i < nf && !rc; i++) {
        qf[i] = mech_fmt(M, "%s_%s%d", name, comp[i % 6], i / 6 + 1);
        dq[i] = mech_fmt(M, "der(%s)", qf[i]);
        rc = mech_push(M, &M->src->coordinates, qf[i], "0", B->line, B->col);
    }
    for (int k = 0; k < 6 && !rc; k++)
        rc = mech_push(M, &M->src->constraints, mech_fmt(M, "body %s (floating frame tangent at node 1)", name), qf[k],
                       B->line, B->col);
    if (rc) return rc;
    B->qf3 = qf, B->nqf3 = nf;
    if (!M->src->no_sens &&
        !(M->src->no_sens = mech_dup_s(mech_fmt(M, "sensitivities are not available for models with spatial flexible "
                                                   "bodies (beam '%s') yet: their element matrices are numbers",
                                                   name))))
        return mech_oom(M);
    B->Fq = mbl_calloc((size_t)nf + 1, sizeof *B->Fq);
    if (!B->Fq || !mech_keep(M, (char *)B->Fq)) return mech_oom(M);

    /* invariants: per element Sb (3 x 12), int rho X S (3 x 12; X within the element and the
     * element's start as a separate part), int rho S_a^T S_b (9 blocks 12 x 12), int rho Ip tw */
    double le = L / ne, rA = sec.rho * sec.A, rIp = sec.rho * (sec.Iy + sec.Iz), gx[4], gw[4];
    mbl_beam3_gauss(gx, gw);
    double Sbe[3][12] = {{0}}, cxe[3][12] = {{0}}, Mab[9][144], twe[12] = {0};
    memset(Mab, 0, sizeof Mab);
    for (int k = 0; k < 4; k++) {
        double S[36], tw[12], w = gw[k] * le * rA, X = gx[k] * le;
        mbl_beam3_shape(gx[k], le, S, tw);
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
    double *Sb = mbl_calloc((size_t)3 * nf, sizeof *Sb), *cx = mbl_calloc((size_t)3 * nf, sizeof *cx);
    double *tw = mbl_calloc((size_t)nf, sizeof *tw);
    if (!Sb || !mech_keep(M, (char *)Sb) || !cx || !mech_keep(M, (char *)cx) || !tw || !mech_keep(M, (char *)tw))
        return mech_oom(M);
    for (int el = 0; el < ne; el++)
        for (int i = 0; i < 12; i++) {
            int dof = 6 * el + i;
            tw[dof] += twe[i];
            for (int a = 0; a < 3; a++) {
                Sb[a * nf + dof] += Sbe[a][i];
                cx[a * nf + dof] += cxe[a][i] + el * le * Sbe[a][i];
            }
        }
    double m = rA * L, s0x = rA * L * L / 2, I0 = rA * L * L * L / 3, IpL = rIp * L;
    B->mass = mech_num(M, m);
    /* s = s0 + Sb q (body frame), w1 = Sb q'; the centre of mass s/m carries gravity */
    const char *sv[3], *w1[3];
    for (int a = 0; a < 3 && !rc; a++) {
        sbuf b = {0}, c = {0};
        if (a == 0) mech_sb_add(M, &b, "", mech_num(M, s0x));
        lin_text(M, &b, nf, Sb + (size_t)a * nf, qf);
        lin_text(M, &c, nf, Sb + (size_t)a * nf, dq);
        sv[a] = mech_fmt(M, "_s3_%s_%d", name, a + 1), w1[a] = mech_fmt(M, "_w1_%s_%d", name, a + 1);
        rc = mech_add_var(M, sv[a], done(M, &b), B->line, B->col);
        if (!rc) rc = mech_add_var(M, w1[a], done(M, &c), B->line, B->col);
        B->cm[a] = mech_fmt(M, "(%s/%s)", sv[a], B->mass);
    }
    /* Q_ab = int rho u_a u_b: Qxx, Qyy, Qzz, Qxy, Qxz, Qyz */
    static const int qa[6] = {0, 1, 2, 0, 0, 1}, qb[6] = {0, 1, 2, 1, 2, 2};
    const char *Q[6];
    for (int t = 0; t < 6 && !rc; t++) {
        int a = qa[t], b2 = qb[t];
        sbuf b = {0};
        if (t == 0) mech_sb_add(M, &b, "", mech_num(M, I0));
        if (a == 0) { /* u_x = X + S_x q: X S_b q (twice when b = x) */
            double f = b2 == 0 ? 2.0 : 1.0;
            for (int j = 0; j < nf; j++)
                if (cx[b2 * nf + j] != 0) mech_sb_add(M, &b, " + ", mech_fmt(M, "%s*%s", mech_num(M, f * cx[b2 * nf + j]), qf[j]));
        }
        bil_text(M, &b, ne, Mab[3 * a + b2], qf, qf);
        Q[t] = mech_fmt(M, "_Q3_%s_%d", name, t + 1);
        rc = mech_add_var(M, Q[t], done(M, &b), B->line, B->col);
    }
    /* h = int rho u x u' */
    const char *h[3];
    for (int k = 0; k < 3 && !rc; k++) {
        int a = (k + 1) % 3, b2 = (k + 2) % 3; /* h_k = int rho (u_a u'_b - u_b u'_a) */
        sbuf b = {0};
        if (a == 0) lin_text(M, &b, nf, cx + (size_t)b2 * nf, dq);
        bil_text(M, &b, ne, Mab[3 * a + b2], qf, dq);
        if (b2 == 0) {
            double *neg = mbl_alloc_array((size_t)nf, sizeof *neg);
            if (!neg || !mech_keep(M, (char *)neg)) return mech_oom(M);
            for (int j = 0; j < nf; j++) neg[j] = -cx[(size_t)a * nf + j];
            lin_text(M, &b, nf, neg, dq);
        }
        double Mn[144];
        for (int i = 0; i < 144; i++) Mn[i] = -Mab[3 * b2 + a][i];
        bil_text(M, &b, ne, Mn, qf, dq);
        h[k] = mech_fmt(M, "_h3_%s_%d", name, k + 1);
        rc = mech_add_var(M, h[k], done(M, &b), B->line, B->col);
    }
    if (rc) return rc;
    /* the element mass and stiffness, assembled; Rayleigh damping */
    mbla_csc *Kc = NULL, *Mc = NULL, *Cc = NULL;
    rc = mbl_beam_assemble(3, &sec, L, ne, &Kc, &Mc, M->st);
    if (rc) return rc == MBL_ENOMEM ? rc : err_at(M, key, "%s: %s", what, M->st->msg);
    if (alpha != 0 || beta != 0) rc = mbla_csc_add(alpha, Mc, beta, Kc, &Cc, M->st);
    sbuf tq = {0};
    for (int j = 0; j < nf && !rc; j++) { /* symmetric: column j = row j */
        sbuf f = {0};
        for (int p = Kc->p[j]; p < Kc->p[j + 1]; p++)
            if (Kc->x[p] != 0) mech_sb_add(M, &f, " - ", mech_fmt(M, "%s*%s", mech_num(M, Kc->x[p]), qf[Kc->i[p]]));
        for (int p = Cc ? Cc->p[j] : 0; Cc && p < Cc->p[j + 1]; p++)
            if (Cc->x[p] != 0) mech_sb_add(M, &f, " - ", mech_fmt(M, "%s*%s", mech_num(M, Cc->x[p]), dq[Cc->i[p]]));
        if (f.n) B->Fq[j] = mech_fmt(M, "(%s)", mech_sb_done(M, &f));
        else mech_sb_done(M, &f);
        for (int p = Mc->p[j]; p < Mc->p[j + 1]; p++)
            if (Mc->x[p] != 0)
                mech_sb_add(M, &tq, " + ", mech_fmt(M, "%s*%s*%s", mech_num(M, 0.5 * Mc->x[p]), dq[Mc->i[p]], dq[j]));
    }
    mbla_csc_free(Kc), mbla_csc_free(Mc), mbla_csc_free(Cc);
    if (rc) return rc;
    /* T */
    const char *vR[3], *g[3];
    for (int k = 0; k < 3; k++) vR[k] = mech_fmt(M, "der(%s)", B->r[k]);
    for (int a = 0; a < 3; a++) {
        int b1 = (a + 1) % 3, b2 = (a + 2) % 3;
        g[a] = mech_fmt(M, "(%s*%s - %s*%s + %s)", om[b1], sv[b2], om[b2], sv[b1], w1[a]);
    }
    sbuf T = {0};
    mech_sb_add(M, &T, "", mech_fmt(M, "0.5*%s*(%s^2 + %s^2 + %s^2)", B->mass, vR[0], vR[1], vR[2]));
    for (int k = 0; k < 3; k++)
        mech_sb_add(M, &T, " + ",
                    mech_fmt(M, "%s*(%s*%s + %s*%s + %s*%s)", vR[k], B->A[3 * k], g[0], B->A[3 * k + 1], g[1], B->A[3 * k + 2], g[2]));
    mech_sb_add(M, &T, " + ",
                mech_fmt(M, "0.5*((%s + %s)*%s^2 + (%s + %s)*%s^2 + (%s + %s)*%s^2) - %s*%s*%s - %s*%s*%s - %s*%s*%s", Q[1], Q[2],
                         om[0], Q[0], Q[2], om[1], Q[0], Q[1], om[2], Q[3], om[0], om[1], Q[4], om[0], om[2], Q[5], om[1], om[2]));
    mech_sb_add(M, &T, " + ", mech_fmt(M, "%s*%s + %s*%s + %s*%s", om[0], h[0], om[1], h[1], om[2], h[2]));
    mech_sb_add(M, &T, " + ", mech_fmt(M, "0.5*%s*%s^2", mech_num(M, IpL), om[0]));
    {
        sbuf b = {0};
        lin_text(M, &b, nf, tw, dq);
        mech_sb_add(M, &T, " + ", mech_fmt(M, "%s*(%s)", om[0], done(M, &b)));
    }
    mech_sb_add(M, &T, " + ", done(M, &tq));
    B->Tx = mech_sb_done(M, &T);
    if (M->oom) return mech_oom(M);
    return beam3_markers(M, bi, mech_get(M, val, "markers"), ne, L, qf);
}
