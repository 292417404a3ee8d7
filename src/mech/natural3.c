/* Spatial natural-coordinate bodies (`type: natural` in a spatial mechanism; source 002 Sec. 2,
 * Eq. 4-10, after Garcia de Jalon): two points A, B and two unit vectors u, v, their global
 * coordinates shared by name between bodies (natural.c makes them). With S = [r_B - r_A, u, v] and
 * its body-axes value S0 = [d0, u0, v0], the rotation is A = S S0^-1 (linear in the coordinates:
 * A = d g1^T + u g2^T + v g3^T with g_i the rows of S0^-1), every point r_P = r_A + S S0^-1 (s_P - s_A)
 * and the kinetic energy 1/2 qdot^T (Me (x) I3) qdot with Eq. 10's constant
 *   Me = [m - 2 a1 + b11, a1 - b11, a2 - b12, a3 - b13; ., b11, b12, b13; ., ., b22, b23; ., ., ., b33],
 *   a_i = m g_i . c, b_ij = g_i^T J g_j, c = cm - s_A, J = integral rho rho^T dm about A
 *   = tr(I)/2 E - I + m c c^T (I the inertia tensor about the centre of mass).
 * The rigid-body constraints: d.d, d.u, d.v, u.v constant (a vector's unit length once, natural.c).
 * The angular velocity is w = 1/2 sum_i h_i x der(s_i) (h_i = A g_i, s = (d, u, v): the axial vector of
 * der(A) A^T), so a moment N gives Q_{s_i} = 1/2 N x h_i, and a force F at the origin
 * r_A - sum sigma_i s_i (sigma_i = g_i . s_A) gives Q_A = F, Q_{s_i} = -sigma_i F. Markers, measures,
 * gravity use A, the origin and Euler parameters of A (the branch of the file's orientation) as a
 * rigid body's. See docs/mechanism-reference.md, "Natural-coordinate bodies". */
#include "mech/mech_internal.h"

#include <math.h>
#include <string.h>

#include "core/vec3.h"

/* the texts of a point or vector's coordinates */
static const char *const *pc(const mech *M, const body *B, int i) { return M->npt[B->natp[i]].c; }

/* u x v of texts ("0" for zero in and out) */
static void tcross(mech *M, const char *const a[3], const char *const b[3], const char *o[3])
{
    for (int k = 0; k < 3; k++) {
        int i = (k + 1) % 3, j = (k + 2) % 3;
        o[k] = mech_nat_dot2(M, a[i], b[j], a[j], b[i], -1);
    }
}

static const char *tdot3(mech *M, const char *const a[3], const char *const b[3])
{
    const char *t[3] = {mech_tx_mul(M, a[0], b[0]), mech_tx_mul(M, a[1], b[1]), mech_tx_mul(M, a[2], b[2])};
    static const int sg[3] = {1, 1, 1};
    const char *s = mech_tx_sum(M, 3, t, sg);
    return strcmp(s, "0") ? mech_fmt(M, "(%s)", s) : "0";
}

/* the points and vectors: (name: [x, y, z]) in body axes, 2 of each; global values from the file's
 * position p0 and orientation B->R0, rates from `velocity` and `angular_velocity`; s[0..3] their
 * body-axes texts (A, B, u, v) */
static int read_entities(mech *M, body *B, const yaml_node_t *val, const char *what, const double p0[3],
                         const char *s[4][3], double sl[4][3])
{
    const char *v0[3] = {NULL, NULL, NULL}, *w0[3] = {NULL, NULL, NULL};
    yaml_node_t *n;
    int rc = 0;
    if ((n = mech_get(M, val, "velocity")) && (rc = mech_vec_of(M, n, 3, "velocity", v0))) return rc;
    if ((n = mech_get(M, val, "angular_velocity")) && (rc = mech_vec_of(M, n, 3, "angular_velocity", w0))) return rc;
    static const char *key[2] = {"points", "vectors"};
    for (int e = 0; e < 2; e++) {
        yaml_node_t *pn = mech_get(M, val, key[e]);
        int cnt = pn && pn->type == YAML_MAPPING_NODE ? (int)(pn->data.mapping.pairs.top - pn->data.mapping.pairs.start) : 0;
        if (cnt != 2)
            return err_at(M, pn ? pn : val, "%s: '%s' must name 2 %s with their %s in body axes ([x, y, z])", what,
                          key[e], key[e], e ? "directions (unit)" : "positions");
        for (int i = 0; i < 2; i++) {
            yaml_node_pair_t *p = &pn->data.mapping.pairs.start[i];
            yaml_node_t *k = mech_node(M->doc, p->key), *v = mech_node(M->doc, p->value);
            if (!mech_is_scalar(k)) return err_at(M, k, "%s: a %s name must be a plain word", what, e ? "vector" : "point");
            char w[200];
            mech_snprintf(w, sizeof w, "%s: %s '%s'", what, e ? "vector" : "point", mech_sc(k));
            int j = 2 * e + i;
            mech_set_track(M);
            if ((rc = mech_vec_of(M, v, 3, w, s[j])) || (rc = mech_eval_vec(M, v, 3, w, sl[j]))) return rc;
            if (e && fabs(vec3_dot(sl[j], sl[j]) - 1) > MBL_MECH_FRAME_TOL)
                return err_at(M, v, "%s: not a unit vector (length %.9g)%s", w, sqrt(vec3_dot(sl[j], sl[j])),
                              mech_set_note(M));
            double g[3], x0[3];
            mat3_vec(B->R0, sl[j], g);
            for (int c = 0; c < 3; c++) x0[c] = (e ? 0 : p0[c]) + g[c];
            const char *vp[3] = {NULL, NULL, NULL};
            for (int c = 0; c < 3 && (w0[0] || (v0[0] && !e)); c++) {
                int a = (c + 1) % 3, b = (c + 2) % 3;
                const char *t[3] = {e ? NULL : v0[c], w0[0] ? mech_fmt(M, "(%s)*%s", w0[a], mech_num(M, g[b])) : NULL,
                                    w0[0] ? mech_fmt(M, "(%s)*%s", w0[b], mech_num(M, g[a])) : NULL};
                static const int sg[3] = {1, 1, -1};
                vp[c] = mech_tx_sum(M, 3, t, sg);
            }
            if ((rc = mech_natural_point(M, B, k, x0, vp, e, &B->natp[j]))) return rc;
        }
    }
    return 0;
}

/* the constants of the body (variables of the parameters): det S0, the rows g_i of S0^-1, J about A,
 * a_i, b_ij (names in g, a, b) */
static int constants(mech *M, body *B, const char *s[4][3], const char *g[3][3], const char *a[3], const char *b[3][3])
{
    const char *d0[3], *c[3], *cr[3][3];
    for (int k = 0; k < 3; k++) d0[k] = mech_nat_sub(M, s[1][k], s[0][k]), c[k] = mech_nat_sub(M, B->cm[k], s[0][k]);
    const char *const *u0 = s[2], *const *v0 = s[3];
    tcross(M, u0, v0, cr[0]);
    tcross(M, v0, d0, cr[1]);
    tcross(M, d0, u0, cr[2]);
    const char *det = mech_fmt(M, "_det_%s", B->name), *nm = B->name;
    int rc = mech_add_var(M, det, tdot3(M, d0, cr[0]), B->line, B->col);
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3 && !rc; k++) {
            g[i][k] = mech_fmt(M, "_g_%s_%d%d", nm, i + 1, k + 1);
            rc = mech_add_var(M, g[i][k], mech_nat_over(M, cr[i][k], det), B->line, B->col);
        }
    /* J = tr(I)/2 E - I + m c c^T; I = [xx yy zz xy xz yz] */
    static const int ix[3][3] = {{0, 3, 4}, {3, 1, 5}, {4, 5, 2}};
    const char *m = mech_fmt(M, "(%s)", B->mass), *J[3][3];
    for (int k = 0; k < 3; k++)
        for (int l = k; l < 3 && !rc; l++) {
            const char *mc = mech_tx_mul(M, m, mech_tx_mul(M, c[k], c[l]));
            const char *t = k == l ? mech_fmt(M, "0.5*((%s) + (%s) + (%s)) - (%s)", B->I[0], B->I[1], B->I[2], B->I[ix[k][k]])
                                   : mech_fmt(M, "-(%s)", B->I[ix[k][l]]);
            J[k][l] = J[l][k] = mech_fmt(M, "_J_%s_%d%d", nm, k + 1, l + 1);
            rc = mech_add_var(M, J[k][l], mc ? mech_fmt(M, "%s + %s", t, mc) : t, B->line, B->col);
        }
    for (int i = 0; i < 3 && !rc; i++) {
        a[i] = mech_fmt(M, "_a_%s_%d", nm, i + 1);
        rc = mech_add_var(M, a[i], mech_fmt(M, "%s*%s", m, tdot3(M, g[i], c)), B->line, B->col);
    }
    for (int i = 0; i < 3; i++)
        for (int j = i; j < 3 && !rc; j++) {
            sbuf t = {0};
            for (int k = 0; k < 3; k++)
                for (int l = 0; l < 3; l++) mech_sb_add(M, &t, t.n ? " + " : "", mech_fmt(M, "%s*%s*%s", g[i][k], J[k][l], g[j][l]));
            b[i][j] = b[j][i] = mech_fmt(M, "_b_%s_%d%d", nm, i + 1, j + 1);
            rc = mech_add_var(M, b[i][j], mech_sb_done(M, &t), B->line, B->col);
        }
    return rc;
}

/* the Euler parameters of A by the branch of the file's orientation (mech_euler_params): e_k from the
 * diagonal, the others from 4 e_k e_j (signed so that they are B->q0 in the file's configuration) */
static int euler_of_A(mech *M, body *B)
{
    const double *R = B->R0;
    double c[4] = {R[0] + R[4] + R[8], R[0], R[4], R[8]};
    int k = 0;
    for (int i = 1; i < 4; i++)
        if (c[i] > c[k]) k = i;
    char **A = B->A;
    static const char sd[4][3] = {{'+', '+', '+'}, {'+', '-', '-'}, {'-', '+', '-'}, {'-', '-', '+'}};
    /* 4 e_i e_j, i < j (A row-major) */
    const char *pr[4][4] = {{NULL}};
    pr[0][1] = mech_fmt(M, "(%s - %s)", A[7], A[5]), pr[0][2] = mech_fmt(M, "(%s - %s)", A[2], A[6]);
    pr[0][3] = mech_fmt(M, "(%s - %s)", A[3], A[1]), pr[1][2] = mech_fmt(M, "(%s + %s)", A[1], A[3]);
    pr[1][3] = mech_fmt(M, "(%s + %s)", A[2], A[6]), pr[2][3] = mech_fmt(M, "(%s + %s)", A[5], A[7]);
    const char *ek = mech_fmt(M, "%s0.5*sqrt(1 %c %s %c %s %c %s)", B->q0[k] < 0 ? "-" : "", sd[k][0], A[0], sd[k][1], A[4],
                              sd[k][2], A[8]);
    int rc = 0;
    const char *en = mech_fmt(M, "_e_%s_%d", B->name, k);
    for (int j = 0; j < 4 && !rc; j++) {
        B->e[j] = mech_fmt(M, "_e_%s_%d", B->name, j);
        const char *t = j == k ? ek : mech_fmt(M, "%s/(4*%s)", pr[j < k ? j : k][j < k ? k : j], en);
        rc = mech_add_var(M, B->e[j], t, B->line, B->col);
    }
    return rc;
}

/* A, the origin, h_i, w, the constraints */
static int frame(mech *M, body *B, const char *s[4][3], const char *g[3][3])
{
    const char *const *rA = pc(M, B, 0), *const *rB = pc(M, B, 1), *const *u = pc(M, B, 2), *const *v = pc(M, B, 3);
    const char *d[3], *d0[3];
    for (int k = 0; k < 3; k++) d[k] = mech_nat_sub(M, rB[k], rA[k]), d0[k] = mech_nat_sub(M, s[1][k], s[0][k]);
    const char *const *S[3] = {d, u, v}, *const *S0[3] = {d0, s[2], s[3]};
    static const char *cname[4] = {"distance", "d.u", "d.v", "u.v"};
    static const int pa[4] = {0, 0, 0, 1}, pb[4] = {0, 1, 2, 2};
    int rc = 0;
    for (int c = 0; c < 4 && !rc; c++)
        rc = mech_push(M, &M->src->constraints, mech_fmt(M, "body %s (natural coordinates: %s)", B->name, cname[c]),
                       mech_fmt(M, "%s - %s", tdot3(M, S[pa[c]], S[pb[c]]), tdot3(M, S0[pa[c]], S0[pb[c]])), B->line, B->col);
    for (int k = 0; k < 3; k++)
        for (int j = 0; j < 3 && !rc; j++) {
            B->A[3 * k + j] = mech_fmt(M, "_A_%s_%d%d", B->name, k + 1, j + 1);
            const char *t[3] = {mech_tx_mul(M, d[k], g[0][j]), mech_tx_mul(M, u[k], g[1][j]), mech_tx_mul(M, v[k], g[2][j])};
            static const int sg[3] = {1, 1, 1};
            rc = mech_add_var(M, B->A[3 * k + j], mech_tx_sum(M, 3, t, sg), B->line, B->col);
        }
    /* origin r_A - sum sigma_i s_i */
    for (int i = 0; i < 3; i++) B->nat_sig[i] = tdot3(M, g[i], s[0]);
    for (int k = 0; k < 3 && !rc; k++) {
        const char *t[4] = {rA[k], mech_tx_mul(M, B->nat_sig[0], d[k]), mech_tx_mul(M, B->nat_sig[1], u[k]),
                            mech_tx_mul(M, B->nat_sig[2], v[k])};
        static const int sg[4] = {1, -1, -1, -1};
        B->r[k] = mech_fmt(M, "_o_%s_%d", B->name, k + 1);
        rc = mech_add_var(M, B->r[k], mech_tx_sum(M, 4, t, sg), B->line, B->col);
    }
    /* h_i = A g_i, w = 1/2 sum h_i x der(s_i) */
    const char *ds[3][3], *wt[3] = {NULL, NULL, NULL};
    for (int k = 0; k < 3; k++) {
        const char *da = mech_fmt(M, "der(%s)", rA[k]), *db = mech_fmt(M, "der(%s)", rB[k]);
        ds[0][k] = mech_fmt(M, "(%s - %s)", db, da);
        ds[1][k] = mech_fmt(M, "der(%s)", u[k]);
        ds[2][k] = mech_fmt(M, "der(%s)", v[k]);
    }
    for (int i = 0; i < 3 && !rc; i++) {
        const char *h[3];
        for (int k = 0; k < 3 && !rc; k++) {
            h[k] = B->nat_h[i][k] = mech_fmt(M, "_h_%s_%d%d", B->name, i + 1, k + 1);
            const char *row[3] = {B->A[3 * k], B->A[3 * k + 1], B->A[3 * k + 2]};
            rc = mech_add_var(M, h[k], tdot3(M, row, g[i]), B->line, B->col);
        }
        const char *x[3];
        tcross(M, h, ds[i], x);
        for (int k = 0; k < 3; k++) wt[k] = wt[k] ? mech_fmt(M, "%s + %s", wt[k], x[k]) : x[k];
    }
    for (int k = 0; k < 3 && !rc; k++) {
        B->w[k] = mech_fmt(M, "_w_%s_%d", B->name, k + 1);
        rc = mech_add_var(M, B->w[k], mech_fmt(M, "0.5*(%s)", wt[k]), B->line, B->col);
    }
    return rc ? rc : euler_of_A(M, B);
}

/* each point a marker of its name (body axes) on the body that made it */
static int point_markers(mech *M, int bi, const yaml_node_t *val, const char *s[4][3])
{
    body *B = &M->b[bi];
    yaml_node_t *pn = mech_get(M, val, "points");
    for (int i = 0; i < 2; i++) {
        mech_point *P = &M->npt[B->natp[i]];
        if (P->body != bi) continue;
        marker *K;
        int rc = mech_new_marker(M, P->name, bi, mech_node(M->doc, pn->data.mapping.pairs.start[i].key), &K);
        if (rc) return rc;
        memcpy(K->R0, B->R0, sizeof K->R0);
        K->mq[0] = 1;
        K->turn[2] = 1, K->turn_kind = 2;
        K->oset = B->oset;
        for (int c = 0; c < 3; c++) {
            K->s[c] = s[i][c], K->p[c] = (char *)P->c[c];
            for (int a = 0; a < 3; a++) K->ax[a][c] = B->A[3 * c + a];
        }
    }
    return 0;
}

int mech_read_natural3(mech *M, const yaml_node_t *key, const yaml_node_t *val, const char *what)
{
    static const char *oks[] = {"type", "mass", "inertia", "cm", "points", "vectors", "position", "axis", "angle", "euler",
                                "zaxis", "xaxis", "rotation", "velocity", "angular_velocity", "markers", NULL};
    int bi, rc = mech_natural_body(M, key, val, what, oks, &bi);
    if (rc) return rc;
    body *B = &M->b[bi];
    yaml_node_t *n;
    const yaml_node_t *where;
    double R[9], p0[3] = {0, 0, 0}, sl[4][3];
    if ((rc = mech_orientation(M, val, what, R, &where, B->turn, &B->turn_kind))) return rc;
    memcpy(B->R0, R, sizeof R);
    B->oset = M->used_set;
    mech_euler_params(R, B->q0);
    mech_set_track(M);
    if ((n = mech_get(M, val, "position")) && (rc = mech_eval_vec(M, n, 3, "position", p0))) return rc;
    const char *s[4][3];
    if ((rc = read_entities(M, B, val, what, p0, s, sl))) return rc;
    B->nat = 4;
    double d0[3] = {sl[1][0] - sl[0][0], sl[1][1] - sl[0][1], sl[1][2] - sl[0][2]}, x[3];
    vec3_cross(sl[2], sl[3], x);
    double det = vec3_dot(d0, x);
    if (!(fabs(det) > MBL_MECH_FRAME_TOL * sqrt(vec3_dot(d0, d0))))
        return err_at(M, key, "%s: its points and vectors do not span space (det [B - A, u, v] = %.3g): no frame", what,
                      det);
    const char *g[3][3], *a[3], *b[3][3];
    if ((rc = constants(M, B, s, g, a, b))) return rc;
    for (int i = 0; i < 3; i++) {
        B->nat_a[i] = a[i];
        for (int j = 0; j < 3; j++) B->nat_b[i][j] = b[i][j];
    }
    if ((rc = frame(M, B, s, g))) return rc;
    if ((rc = point_markers(M, bi, val, s))) return rc;
    return mech_add_markers(M, bi, mech_get(M, val, "markers"));
}

/* 1/2 qdot^T (Me (x) I3) qdot (Eq. 10) */
int mech_natural3_energy(mech *M, body *B, const char **Tb)
{
    const char *const *a = B->nat_a, *m = mech_fmt(M, "(%s)", B->mass);
    const char *(*b)[3] = B->nat_b;
    const char *n[4][4] = {{mech_fmt(M, "(%s - 2*%s + %s)", m, a[0], b[0][0]), mech_fmt(M, "(%s - %s)", a[0], b[0][0]),
                            mech_fmt(M, "(%s - %s)", a[1], b[0][1]), mech_fmt(M, "(%s - %s)", a[2], b[0][2])},
                           {NULL, b[0][0], b[0][1], b[0][2]},
                           {NULL, NULL, b[1][1], b[1][2]},
                           {NULL, NULL, NULL, b[2][2]}};
    sbuf t = {0};
    for (int i = 0; i < 4; i++)
        for (int j = i; j < 4; j++) {
            const char *const *p = pc(M, B, i), *const *q = pc(M, B, j);
            const char *dd = mech_fmt(M, "(der(%s)*der(%s) + der(%s)*der(%s) + der(%s)*der(%s))", p[0], q[0], p[1], q[1],
                                      p[2], q[2]);
            mech_sb_add(M, &t, t.n ? " + " : "", mech_fmt(M, "%s%s*%s", i == j ? "0.5*" : "", n[i][j], dd));
        }
    *Tb = mech_sb_done(M, &t);
    return M->oom ? mech_oom(M) : 0;
}

int mech_natural3_forces(mech *M, body *B)
{
    int anyF = B->F[0] || B->F[1] || B->F[2], anyN = B->N[0] || B->N[1] || B->N[2];
    if (!anyF && !anyN) return 0;
    const char *F[3], *N[3], *Q[4][3];
    for (int k = 0; k < 3; k++) {
        F[k] = B->F[k] ? mech_fmt(M, "(%s)", B->F[k]) : "0";
        N[k] = B->N[k] ? mech_fmt(M, "(%s)", B->N[k]) : "0";
    }
    /* Q_{s_i} = -sigma_i F + 1/2 N x h_i */
    for (int i = 0; i < 3; i++) {
        const char *x[3];
        tcross(M, N, B->nat_h[i], x);
        for (int k = 0; k < 3; k++) {
            const char *t[2] = {mech_tx_mul(M, B->nat_sig[i], F[k]), mech_tx_is0(x[k]) ? NULL : mech_fmt(M, "0.5*%s", x[k])};
            static const int sg[2] = {-1, 1};
            Q[i + 1][k] = mech_tx_sumz(M, 2, t, sg);
        }
    }
    /* s_1 = r_B - r_A */
    for (int k = 0; k < 3; k++) {
        const char *t[2] = {mech_tx_is0(F[k]) ? NULL : F[k], Q[1][k]};
        static const int sg[2] = {1, -1};
        Q[0][k] = mech_tx_sumz(M, 2, t, sg);
    }
    for (int i = 0; i < 4; i++) {
        mech_point *P = &M->npt[B->natp[i]];
        for (int k = 0; k < 3; k++) {
            const char *t[2] = {P->Q[k], Q[i][k]};
            static const int sg[2] = {1, 1};
            P->Q[k] = mech_tx_sumz(M, 2, t, sg);
        }
    }
    return M->oom ? mech_oom(M) : 0;
}
