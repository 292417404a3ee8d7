/* Planar rigid bodies and revolute joints evaluated numerically beside the tapes (pmech_num.h).
 *
 * A body with coordinates (x, y, th), mass m, inertia I about its centre of mass, centre of mass
 * c in body axes (u = A(th) c in global axes) and gravity g: from T = m/2 |d/dt (r + u)|^2 +
 * I/2 th'^2 and V = -m g.(r + u) its rows of the equations of motion are
 *   R_x  = m (x'' - g_x - th'' u_y - th'^2 u_x)
 *   R_y  = m (y'' - g_y + th'' u_x - th'^2 u_y)
 *   R_th = I th'' + m |c|^2 th'' + m (-u_y (x'' - g_x) + u_x (y'' - g_y)).
 * A revolute joint between markers at s_i on body i and s_j on body j (w = A s, w' = dw/dth =
 * (-w_y, w_x)): Phi = r_i + w_i - r_j - w_j (two rows), Phid = r_i' + th_i' w_i' - (..)_j,
 * Phidd = r_i'' + th_i'' w_i' - th_i'^2 w_i - (..)_j, and the reactions Phi_q^T lambda in the rows
 * of both bodies: (+-) (lambda_x, lambda_y, -lambda_x w_y + lambda_y w_x). A marker on the ground is
 * a constant point. Every Jacobian entry below is the derivative of these, term by term; the
 * expression form (mbl_pmech_num_exprs) writes the same formulas with the parameter nodes.
 *
 * The entries are "slots": 12 per body, 23 per side of a joint, each present where the text path
 * would have one (the centre-of-mass and the marker terms only when c, s are not the constant 0). */
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "model/model_internal.h"
#include "model/pmech_num.h"

enum { BSLOTS = 12, JSLOTS = 23 };

typedef struct pbody {
    int q[3];
    double m, I, c[2];
    mblx_id n[4];  /* m, I, c_x, c_y as nodes */
    int hasc;      /* c is not the constant 0 */
    int pos[BSLOTS];
} pbody;

typedef struct pjoint {
    int c0, b[2];
    double s[2][2];
    mblx_id sn[2][2];
    int hass[2];
    int pos[2][JSLOTS];
} pjoint;

struct mbl_pmech_num {
    int nb, nj;
    pbody *b;
    pjoint *j;
    double g[2];
    mblx_id gn[2];
};

static atomic_int numeric_on = 1;

void mbl_pmech_set_numeric(int on) { atomic_store(&numeric_on, on ? 1 : 0); }
int mbl_pmech_numeric(void) { return atomic_load(&numeric_on); }

void mbl_pmech_src_free(mbl_pmech_src *p)
{
    if (!p) return;
    for (int b = 0; b < p->nb; b++) {
        mbl_free(p->b[b].name);
        for (int k = 0; k < 3; k++) mbl_free(p->b[b].q[k]);
        for (int k = 0; k < 4; k++) mbl_free(p->b[b].t[k]);
    }
    for (int j = 0; j < p->nj; j++) {
        mbl_free(p->j[j].name);
        for (int k = 0; k < 4; k++) mbl_free(p->j[j].s[k / 2][k % 2]);
    }
    mbl_free(p->b), mbl_free(p->j);
    mbl_free(p->g[0]), mbl_free(p->g[1]);
    memset(p, 0, sizeof *p);
}

void mbl_pmech_num_free(mbl_pmech_num *t)
{
    if (!t) return;
    mbl_free(t->b), mbl_free(t->j);
    mbl_free(t);
}

/* ---- the slots: (row, column) and presence ------------------------------------------------- */

typedef struct cols {
    int ja, jl, jv, jq, e0, p0, d0, a0;
} cols;

static cols cols_of(const mbl_model *md)
{
    cols c = {mbl_model_blk0(md, MBL_BLK_A), mbl_model_blk0(md, MBL_BLK_LAMBDA), mbl_model_blk0(md, MBL_BLK_V),
              mbl_model_blk0(md, MBL_BLK_Q), md->row0[MBL_ROW_EOM], md->row0[MBL_ROW_PHI], md->row0[MBL_ROW_PHID],
              md->row0[MBL_ROW_PHIDD]};
    return c;
}

/* body slot k: row (coordinate index 0 x, 1 y, 2 th), column block and coordinate index */
static const signed char bslot[BSLOTS][3] = {
    {0, 'a', 0}, {0, 'a', 2}, {0, 'v', 2}, {0, 'q', 2}, {1, 'a', 1}, {1, 'a', 2},
    {1, 'v', 2}, {1, 'q', 2}, {2, 'a', 0}, {2, 'a', 1}, {2, 'a', 2}, {2, 'q', 2}};
static const unsigned char bslot_c[BSLOTS] = {0, 1, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1};

/* joint side slot k: row group ('P' Phi, 'D' Phid, 'A' Phidd, 'E' the body's EOM), row component
 * (P/D/A: 0 x, 1 y; E: the body's coordinate), column block ('q', 'v', 'a', 'l') and index (a
 * coordinate of the body, or for 'l' the joint's row 0/1) */
static const signed char jslot[JSLOTS][4] = {
    {'P', 0, 'q', 0}, {'P', 1, 'q', 1}, {'P', 0, 'q', 2}, {'P', 1, 'q', 2}, {'D', 0, 'v', 0}, {'D', 1, 'v', 1},
    {'D', 0, 'v', 2}, {'D', 1, 'v', 2}, {'D', 0, 'q', 2}, {'D', 1, 'q', 2}, {'A', 0, 'a', 0}, {'A', 1, 'a', 1},
    {'A', 0, 'a', 2}, {'A', 1, 'a', 2}, {'A', 0, 'v', 2}, {'A', 1, 'v', 2}, {'A', 0, 'q', 2}, {'A', 1, 'q', 2},
    {'E', 0, 'l', 0}, {'E', 1, 'l', 1}, {'E', 2, 'l', 0}, {'E', 2, 'l', 1}, {'E', 2, 'q', 2}};
static const unsigned char jslot_s[JSLOTS] = {0, 0, 1, 1, 0, 0, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1};

static int blk_col(const cols *c, char blk, int coord)
{
    return (blk == 'a' ? c->ja : blk == 'v' ? c->jv : c->jq) + coord;
}

static void body_rc(const cols *c, const pbody *B, int k, int *row, int *col)
{
    *row = c->e0 + B->q[(int)bslot[k][0]];
    *col = blk_col(c, (char)bslot[k][1], B->q[(int)bslot[k][2]]);
}

static void joint_rc(const cols *c, const pjoint *J, const pbody *B, int k, int *row, int *col)
{
    char grp = (char)jslot[k][0];
    int comp = jslot[k][1];
    if (grp == 'E') *row = c->e0 + B->q[comp];
    else *row = (grp == 'P' ? c->p0 : grp == 'D' ? c->d0 : c->a0) + J->c0 + comp;
    *col = jslot[k][2] == 'l' ? c->jl + J->c0 + jslot[k][3] : blk_col(c, (char)jslot[k][2], B->q[(int)jslot[k][3]]);
}

static int is_zero(const mblx_graph *g, mblx_id e)
{
    double v;
    return mblx_is_const(g, e, &v) && v == 0;
}

int mbl_pmech_num_new(mbl_model *md, const mbl_pmech_src *p, const int *qidx, const mblx_id *bn, const mblx_id *jn,
                      const mblx_id gn[2], mbl_status *st)
{
    mblx_graph *g = md->g;
    mbl_pmech_num *t = mbl_calloc(1, sizeof *t);
    double *syms = mbl_calloc((size_t)md->nsym + 1, sizeof *syms);
    if (!t || !syms || !(t->b = mbl_calloc((size_t)p->nb + 1, sizeof *t->b)) ||
        !(t->j = mbl_calloc((size_t)p->nj + 1, sizeof *t->j))) {
        mbl_free(syms);
        mbl_pmech_num_free(t);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    t->nb = p->nb, t->nj = p->nj;
    for (int i = 0; i < md->np; i++) syms[md->sym_p[i]] = md->pval[i];
    int rc = 0;
    /* the parameter texts evaluated once (set_param refuses a mechanism's parameters) */
#define VAL(node, out)                                                                                            \
    do {                                                                                                          \
        if (!rc && !mblx_is_const(g, (node), (out))) rc = mblx_eval(g, (node), syms, (out), st);                  \
    } while (0)
    for (int k = 0; k < 2; k++) {
        t->gn[k] = gn[k];
        VAL(gn[k], &t->g[k]);
    }
    for (int b = 0; b < p->nb && !rc; b++) {
        pbody *B = &t->b[b];
        for (int k = 0; k < 3; k++) B->q[k] = qidx[3 * b + k];
        for (int k = 0; k < 4; k++) B->n[k] = bn[4 * b + k];
        VAL(B->n[0], &B->m);
        VAL(B->n[1], &B->I);
        VAL(B->n[2], &B->c[0]);
        VAL(B->n[3], &B->c[1]);
        B->hasc = !is_zero(g, B->n[2]) || !is_zero(g, B->n[3]);
    }
    for (int j = 0; j < p->nj && !rc; j++) {
        pjoint *J = &t->j[j];
        J->c0 = p->j[j].c0;
        for (int a = 0; a < 2; a++) {
            J->b[a] = p->j[j].b[a];
            for (int k = 0; k < 2; k++) {
                J->sn[a][k] = jn[4 * j + 2 * a + k];
                VAL(J->sn[a][k], &J->s[a][k]);
            }
            J->hass[a] = !is_zero(g, J->sn[a][0]) || !is_zero(g, J->sn[a][1]);
        }
    }
#undef VAL
    mbl_free(syms);
    if (rc) {
        mbl_pmech_num_free(t);
        return rc;
    }
    /* the pattern, node 0 (the entries go to md->jac by the merge and mbl_ffr_num_bind) */
    cols c = cols_of(md);
    mblx_id zero = mblx_const(g, 0.0);
    for (int b = 0; b < t->nb && !rc; b++) {
        pbody *B = &t->b[b];
        for (int k = 0; k < BSLOTS && !rc; k++) {
            B->pos[k] = -1;
            if (bslot_c[k] && !B->hasc) continue;
            int row, col;
            body_rc(&c, B, k, &row, &col);
            B->pos[k] = md->sjac.nz;
            if (mbl_sjac_push(&md->sjac, row, col, zero)) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        }
    }
    for (int j = 0; j < t->nj && !rc; j++) {
        pjoint *J = &t->j[j];
        for (int a = 0; a < 2 && !rc; a++)
            for (int k = 0; k < JSLOTS && !rc; k++) {
                J->pos[a][k] = -1;
                if (J->b[a] < 0 || (jslot_s[k] && !J->hass[a])) continue;
                int row, col;
                joint_rc(&c, J, &t->b[J->b[a]], k, &row, &col);
                J->pos[a][k] = md->sjac.nz;
                if (mbl_sjac_push(&md->sjac, row, col, zero)) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
            }
    }
    if (rc) {
        mbl_pmech_num_free(t);
        return rc;
    }
    md->pmn = t;
    return mblx_graph_status(g, st);
}

void mbl_pmech_num_remap(mbl_pmech_num *t, const int *map)
{
    if (!t) return;
    for (int b = 0; b < t->nb; b++)
        for (int k = 0; k < BSLOTS; k++)
            if (t->b[b].pos[k] >= 0) t->b[b].pos[k] = map[t->b[b].pos[k]];
    for (int j = 0; j < t->nj; j++)
        for (int a = 0; a < 2; a++)
            for (int k = 0; k < JSLOTS; k++)
                if (t->j[j].pos[a][k] >= 0) t->j[j].pos[a][k] = map[t->j[j].pos[a][k]];
}

int mbl_pmech_num_entries(const mbl_pmech_num *t)
{
    int n = 0;
    for (int b = 0; t && b < t->nb; b++)
        for (int k = 0; k < BSLOTS; k++) n += t->b[b].pos[k] >= 0;
    for (int j = 0; t && j < t->nj; j++)
        for (int a = 0; a < 2; a++)
            for (int k = 0; k < JSLOTS; k++) n += t->j[j].pos[a][k] >= 0;
    return n;
}

/* ---- numeric evaluation ------------------------------------------------------------------------ */

#define SYM(col) syms[su[(col)]]

int mbl_pmech_num_eval(const mbl_model *md, const mbl_pmech_num *t, const double *syms, double *F, double *J,
                       mbl_status *st)
{
    const int *su = md->sym_of_unknown;
    cols c = cols_of(md);
    for (int b = 0; b < t->nb; b++) {
        const pbody *B = &t->b[b];
        double x[3][3]; /* [coordinate][q, v, a] */
        for (int k = 0; k < 3; k++) {
            int i = B->q[k];
            x[k][0] = SYM(c.jq + i), x[k][1] = SYM(c.jv + i), x[k][2] = SYM(c.ja + i);
            if (!isfinite(x[k][0]) || !isfinite(x[k][1]) || !isfinite(x[k][2]))
                return mbl_error(st, MBL_EDOMAIN, "coordinate '%s' or its velocity or acceleration is not finite",
                                 md->qname[i]);
        }
        double m = B->m, cs = cos(x[2][0]), sn = sin(x[2][0]), thd = x[2][1], thdd = x[2][2], thd2 = thd * thd;
        double ux = cs * B->c[0] - sn * B->c[1], uy = sn * B->c[0] + cs * B->c[1];
        double Gx = x[0][2] - t->g[0], Gy = x[1][2] - t->g[1], cc = B->c[0] * B->c[0] + B->c[1] * B->c[1];
        if (F) {
            F[c.e0 + B->q[0]] += m * (Gx - thdd * uy - thd2 * ux);
            F[c.e0 + B->q[1]] += m * (Gy + thdd * ux - thd2 * uy);
            F[c.e0 + B->q[2]] += B->I * thdd + m * cc * thdd + m * (-uy * Gx + ux * Gy);
        }
        if (J) {
            double v[BSLOTS] = {m,
                                -m * uy,
                                -2 * m * thd * ux,
                                m * (-thdd * ux + thd2 * uy),
                                m,
                                m * ux,
                                -2 * m * thd * uy,
                                m * (-thdd * uy - thd2 * ux),
                                -m * uy,
                                m * ux,
                                B->I + m * cc,
                                -m * (ux * Gx + uy * Gy)};
            for (int k = 0; k < BSLOTS; k++)
                if (B->pos[k] >= 0) J[B->pos[k]] += v[k];
        }
    }
    for (int j = 0; j < t->nj; j++) {
        const pjoint *P = &t->j[j];
        double lx = SYM(c.jl + P->c0), ly = SYM(c.jl + P->c0 + 1);
        if (!isfinite(lx) || !isfinite(ly))
            return mbl_error(st, MBL_EDOMAIN, "the multipliers of %s are not finite", md->cname[P->c0]);
        for (int a = 0; a < 2; a++) {
            double sg = a == 0 ? 1.0 : -1.0;
            if (P->b[a] < 0) { /* a point of the ground */
                if (F) {
                    F[c.p0 + P->c0] += sg * P->s[a][0];
                    F[c.p0 + P->c0 + 1] += sg * P->s[a][1];
                }
                continue;
            }
            const pbody *B = &t->b[P->b[a]];
            int ix = B->q[0], iy = B->q[1], it = B->q[2];
            double th = SYM(c.jq + it), thd = SYM(c.jv + it), thdd = SYM(c.ja + it), thd2 = thd * thd;
            double cs = cos(th), sn = sin(th);
            double wx = cs * P->s[a][0] - sn * P->s[a][1], wy = sn * P->s[a][0] + cs * P->s[a][1];
            if (F) {
                F[c.p0 + P->c0] += sg * (SYM(c.jq + ix) + wx);
                F[c.p0 + P->c0 + 1] += sg * (SYM(c.jq + iy) + wy);
                F[c.d0 + P->c0] += sg * (SYM(c.jv + ix) - thd * wy);
                F[c.d0 + P->c0 + 1] += sg * (SYM(c.jv + iy) + thd * wx);
                F[c.a0 + P->c0] += sg * (SYM(c.ja + ix) - thdd * wy - thd2 * wx);
                F[c.a0 + P->c0 + 1] += sg * (SYM(c.ja + iy) + thdd * wx - thd2 * wy);
                F[c.e0 + ix] += sg * lx;
                F[c.e0 + iy] += sg * ly;
                F[c.e0 + it] += sg * (-lx * wy + ly * wx);
            }
            if (J) {
                double v[JSLOTS] = {1,
                                    1,
                                    -wy,
                                    wx,
                                    1,
                                    1,
                                    -wy,
                                    wx,
                                    -thd * wx,
                                    -thd * wy,
                                    1,
                                    1,
                                    -wy,
                                    wx,
                                    -2 * thd * wx,
                                    -2 * thd * wy,
                                    -thdd * wx + thd2 * wy,
                                    -thdd * wy - thd2 * wx,
                                    1,
                                    1,
                                    -wy,
                                    wx,
                                    -(lx * wx + ly * wy)};
                for (int k = 0; k < JSLOTS; k++)
                    if (P->pos[a][k] >= 0) J[P->pos[a][k]] += sg * v[k];
            }
        }
    }
    return 0;
}

#undef SYM

/* ---- the expression form ----------------------------------------------------------------------- */

int mbl_pmech_num_exprs(mbl_model *md, const mbl_pmech_num *t, mblx_id *Fs, mbl_sjac *S, mbl_status *st)
{
    mblx_graph *g = md->g;
    cols c = cols_of(md);
    mblx_id one = mblx_const(g, 1.0), two = mblx_const(g, 2.0);
    int rc = 0;
#define SYMN(col) mblx_symbol_node(g, (size_t)md->sym_of_unknown[(col)])
#define ADD(a, b) mblx_add(g, (a), (b))
#define SUB(a, b) mblx_sub(g, (a), (b))
#define MUL(a, b) mblx_mul(g, (a), (b))
#define NEG(a) mblx_neg(g, (a))
#define ROW(r, e) (Fs[(r)] = ADD(Fs[(r)], (e)))
    for (int b = 0; b < t->nb && !rc; b++) {
        const pbody *B = &t->b[b];
        mblx_id ax = SYMN(c.ja + B->q[0]), ay = SYMN(c.ja + B->q[1]);
        mblx_id th = SYMN(c.jq + B->q[2]), thd = SYMN(c.jv + B->q[2]), thdd = SYMN(c.ja + B->q[2]);
        mblx_id m = B->n[0], I = B->n[1], cx = B->n[2], cy = B->n[3], thd2 = MUL(thd, thd);
        mblx_id cs = mblx_cos(g, th), sn = mblx_sin(g, th);
        mblx_id ux = SUB(MUL(cs, cx), MUL(sn, cy)), uy = ADD(MUL(sn, cx), MUL(cs, cy));
        mblx_id Gx = SUB(ax, t->gn[0]), Gy = SUB(ay, t->gn[1]), cc = ADD(MUL(cx, cx), MUL(cy, cy));
        ROW(c.e0 + B->q[0], MUL(m, SUB(SUB(Gx, MUL(thdd, uy)), MUL(thd2, ux))));
        ROW(c.e0 + B->q[1], MUL(m, SUB(ADD(Gy, MUL(thdd, ux)), MUL(thd2, uy))));
        ROW(c.e0 + B->q[2], ADD(ADD(MUL(I, thdd), MUL(MUL(m, cc), thdd)), MUL(m, ADD(MUL(NEG(uy), Gx), MUL(ux, Gy)))));
        mblx_id v[BSLOTS] = {m,
                             NEG(MUL(m, uy)),
                             NEG(MUL(MUL(two, m), MUL(thd, ux))),
                             MUL(m, ADD(NEG(MUL(thdd, ux)), MUL(thd2, uy))),
                             m,
                             MUL(m, ux),
                             NEG(MUL(MUL(two, m), MUL(thd, uy))),
                             MUL(m, SUB(NEG(MUL(thdd, uy)), MUL(thd2, ux))),
                             NEG(MUL(m, uy)),
                             MUL(m, ux),
                             ADD(I, MUL(m, cc)),
                             NEG(MUL(m, ADD(MUL(ux, Gx), MUL(uy, Gy))))};
        for (int k = 0; k < BSLOTS && !rc; k++) {
            if (B->pos[k] < 0) continue;
            int row, col;
            body_rc(&c, B, k, &row, &col);
            if (mbl_sjac_push(S, row, col, v[k])) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        }
    }
    for (int j = 0; j < t->nj && !rc; j++) {
        const pjoint *P = &t->j[j];
        mblx_id lx = SYMN(c.jl + P->c0), ly = SYMN(c.jl + P->c0 + 1);
        for (int a = 0; a < 2 && !rc; a++) {
            mblx_id sg = a == 0 ? one : mblx_const(g, -1.0);
            if (P->b[a] < 0) {
                ROW(c.p0 + P->c0, MUL(sg, P->sn[a][0]));
                ROW(c.p0 + P->c0 + 1, MUL(sg, P->sn[a][1]));
                continue;
            }
            const pbody *B = &t->b[P->b[a]];
            int ix = B->q[0], iy = B->q[1], it = B->q[2];
            mblx_id th = SYMN(c.jq + it), thd = SYMN(c.jv + it), thdd = SYMN(c.ja + it), thd2 = MUL(thd, thd);
            mblx_id cs = mblx_cos(g, th), sn = mblx_sin(g, th), sx = P->sn[a][0], sy = P->sn[a][1];
            mblx_id wx = SUB(MUL(cs, sx), MUL(sn, sy)), wy = ADD(MUL(sn, sx), MUL(cs, sy));
            ROW(c.p0 + P->c0, MUL(sg, ADD(SYMN(c.jq + ix), wx)));
            ROW(c.p0 + P->c0 + 1, MUL(sg, ADD(SYMN(c.jq + iy), wy)));
            ROW(c.d0 + P->c0, MUL(sg, SUB(SYMN(c.jv + ix), MUL(thd, wy))));
            ROW(c.d0 + P->c0 + 1, MUL(sg, ADD(SYMN(c.jv + iy), MUL(thd, wx))));
            ROW(c.a0 + P->c0, MUL(sg, SUB(SUB(SYMN(c.ja + ix), MUL(thdd, wy)), MUL(thd2, wx))));
            ROW(c.a0 + P->c0 + 1, MUL(sg, SUB(ADD(SYMN(c.ja + iy), MUL(thdd, wx)), MUL(thd2, wy))));
            ROW(c.e0 + ix, MUL(sg, lx));
            ROW(c.e0 + iy, MUL(sg, ly));
            ROW(c.e0 + it, MUL(sg, ADD(MUL(NEG(lx), wy), MUL(ly, wx))));
            mblx_id v[JSLOTS] = {one,
                                 one,
                                 NEG(wy),
                                 wx,
                                 one,
                                 one,
                                 NEG(wy),
                                 wx,
                                 NEG(MUL(thd, wx)),
                                 NEG(MUL(thd, wy)),
                                 one,
                                 one,
                                 NEG(wy),
                                 wx,
                                 NEG(MUL(two, MUL(thd, wx))),
                                 NEG(MUL(two, MUL(thd, wy))),
                                 ADD(NEG(MUL(thdd, wx)), MUL(thd2, wy)),
                                 SUB(NEG(MUL(thdd, wy)), MUL(thd2, wx)),
                                 one,
                                 one,
                                 NEG(wy),
                                 wx,
                                 NEG(ADD(MUL(lx, wx), MUL(ly, wy)))};
            for (int k = 0; k < JSLOTS && !rc; k++) {
                if (P->pos[a][k] < 0) continue;
                int row, col;
                joint_rc(&c, P, B, k, &row, &col);
                if (mbl_sjac_push(S, row, col, MUL(sg, v[k]))) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
            }
        }
    }
#undef SYMN
#undef ADD
#undef SUB
#undef MUL
#undef NEG
#undef ROW
    return rc ? rc : mblx_graph_status(g, st);
}
