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
 * expression form (model_pmech_num_exprs) writes the same formulas with the parameter nodes.
 *
 * The entries are "slots": 12 per body, 23 per side of a joint, each present where the text path
 * would have one (the centre-of-mass and the marker terms only when c, s are not the constant 0). */
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "model/model_internal.h"
#include "model/pmech_num.h"
#include "model/position_text.h"

enum { BSLOTS = 12, JSLOTS = 27 };
_Static_assert(BSLOTS == 12 && JSLOTS == 27, "bodies_eval and joints_eval write their slots one by one");

typedef struct pbody {
    int q[3];
    double m, I, c[2];
    mblx_id n[4];  /* m, I, c_x, c_y as nodes */
    int hasc;      /* c is not the constant 0 */
    int pos[BSLOTS];
} pbody;

typedef struct pjoint {
    int c0, b[2];
    int haspos, hasang;   /* revolute: position rows; fixed: both; orientation: the angle row */
    double s[2][2], ang[2];
    mblx_id sn[2][2], an[2];
    int hass[2];
    int pos[2][JSLOTS];
} pjoint;

/* a spring: its two ends' coordinates (local index 0..2 marker i's body, 3..5 marker j's; -1 on
 * the ground or a th whose marker sits at the body origin), slots (row r, column c of q: r * 12 + c,
 * of v: r * 12 + 6 + c) */
enum { SSLOTS = 72 };
typedef struct pspring {
    int b[2], q[6];
    double s[2][2], k, c, L0, f0;
    mblx_id sn[2][2], tn[4];
    int hasc;      /* damping not the constant 0 */
    const char *name;
    int line, col; /* its place in the model file */
    int pos[SSLOTS];
} pspring;

struct mbl_pmech_num {
    int nb, nj, ns;
    pbody *b;
    pjoint *j;
    pspring *s;
    double g[2];
    mblx_id gn[2];
};

static atomic_int numeric_on = 1;

void model_pmech_set_numeric(int on) { atomic_store(&numeric_on, on ? 1 : 0); }
int model_pmech_numeric(void) { return atomic_load(&numeric_on); }

/* the texts' blocks: PMECH_TEXT_BLOCK bytes each (a longer text gets a block of its own) */
#define PMECH_TEXT_BLOCK 65536

/* a block more in p's list: the new last one (then p->left is the caller's), or, own, put below
 * the last one (which keeps its room); NULL when out of memory */
static char *text_block(mbl_pmech_src *p, size_t sz, int own)
{
    if (p->nblocks == p->cblocks) {
        int c = p->cblocks ? 2 * p->cblocks : 16;
        char **b = mbl_realloc_array(p->blocks, (size_t)c, sizeof *b);
        if (!b) return NULL;
        p->blocks = b;
        p->cblocks = c;
    }
    char *b = mbl_malloc(sz);
    if (!b) return NULL;
    if (own && p->nblocks > 0) {
        p->blocks[p->nblocks] = p->blocks[p->nblocks - 1];
        p->blocks[p->nblocks - 1] = b;
        p->nblocks++;
    } else {
        p->blocks[p->nblocks++] = b;
        p->left = own ? 0 : sz;
    }
    return b;
}

char *model_pmech_src_text(mbl_pmech_src *p, const char *s)
{
    size_t n = strlen(s) + 1;
    if (n > PMECH_TEXT_BLOCK / 4) { /* a long text: a block of its own */
        char *b = text_block(p, n, 1);
        return b ? memcpy(b, s, n) : NULL;
    }
    if (n > p->left && !text_block(p, PMECH_TEXT_BLOCK, 0)) return NULL;
    char *d = p->blocks[p->nblocks - 1] + (PMECH_TEXT_BLOCK - p->left);
    p->left -= n;
    return memcpy(d, s, n);
}

void model_pmech_src_free(mbl_pmech_src *p)
{
    if (!p) return;
    for (int b = 0; b < p->nblocks; b++) mbl_free(p->blocks[b]);
    mbl_free(p->blocks);
    mbl_free(p->b), mbl_free(p->j), mbl_free(p->s);
    memset(p, 0, sizeof *p);
}

void model_pmech_num_free(mbl_pmech_num *t)
{
    if (!t) return;
    for (int j = 0; j < t->ns; j++) mbl_free((char *)t->s[j].name);
    mbl_free(t->b), mbl_free(t->j), mbl_free(t->s);
    mbl_free(t);
}

/* ---- the slots: (row, column) and presence ------------------------------------------------- */

typedef struct cols {
    int ja, jl, jv, jq, e0, p0, d0, a0;
} cols;

static cols cols_of(const mbl_model *md)
{
    cols c = {model_blk0(md, MBL_BLK_A), model_blk0(md, MBL_BLK_LAMBDA), model_blk0(md, MBL_BLK_V),
              model_blk0(md, MBL_BLK_Q), md->row0[MBL_ROW_EOM], md->row0[MBL_ROW_PHI], md->row0[MBL_ROW_PHID],
              md->row0[MBL_ROW_PHIDD]};
    return c;
}

/* body slot k: row (coordinate index 0 x, 1 y, 2 th), column block and coordinate index */
static const signed char bslot[BSLOTS][3] = {
    {0, 'a', 0}, {0, 'a', 2}, {0, 'v', 2}, {0, 'q', 2}, {1, 'a', 1}, {1, 'a', 2},
    {1, 'v', 2}, {1, 'q', 2}, {2, 'a', 0}, {2, 'a', 1}, {2, 'a', 2}, {2, 'q', 2}};
static const unsigned char bslot_c[BSLOTS] = {0, 1, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1};

/* joint side slot k: row group ('P' Phi, 'D' Phid, 'A' Phidd, 'E' the body's EOM), row component
 * (P/D/A: 0 x, 1 y, 2 the angle row; E: the body's coordinate), column block ('q', 'v', 'a', 'l')
 * and index (a coordinate of the body, or for 'l' the joint's row 0/1, 2 the angle row); kind: 0 a
 * position row's, 1 the same when the marker is off the body origin, 2 the angle row's */
static const signed char jslot[JSLOTS][4] = {
    {'P', 0, 'q', 0}, {'P', 1, 'q', 1}, {'P', 0, 'q', 2}, {'P', 1, 'q', 2}, {'D', 0, 'v', 0}, {'D', 1, 'v', 1},
    {'D', 0, 'v', 2}, {'D', 1, 'v', 2}, {'D', 0, 'q', 2}, {'D', 1, 'q', 2}, {'A', 0, 'a', 0}, {'A', 1, 'a', 1},
    {'A', 0, 'a', 2}, {'A', 1, 'a', 2}, {'A', 0, 'v', 2}, {'A', 1, 'v', 2}, {'A', 0, 'q', 2}, {'A', 1, 'q', 2},
    {'E', 0, 'l', 0}, {'E', 1, 'l', 1}, {'E', 2, 'l', 0}, {'E', 2, 'l', 1}, {'E', 2, 'q', 2},
    {'P', 2, 'q', 2}, {'D', 2, 'v', 2}, {'A', 2, 'a', 2}, {'E', 2, 'l', 2}};
static const unsigned char jslot_s[JSLOTS] = {0, 0, 1, 1, 0, 0, 1, 1, 1, 1, 0, 0, 1, 1,
                                              1, 1, 1, 1, 0, 0, 1, 1, 1, 2, 2, 2, 2};

/* the joint's row of component comp (0 x, 1 y, 2 the angle) */
static inline int jrow(const pjoint *J, int comp)
{
    return J->c0 + (comp < 2 ? comp : J->haspos ? 2 : 0);
}

static inline int blk_col(const cols *c, char blk, int coord)
{
    return (blk == 'a' ? c->ja : blk == 'v' ? c->jv : c->jq) + coord;
}

static void body_rc(const cols *c, const pbody *B, int k, int *row, int *col)
{
    *row = c->e0 + B->q[(int)bslot[k][0]];
    *col = blk_col(c, (char)bslot[k][1], B->q[(int)bslot[k][2]]);
}

static inline void joint_rc(const cols *c, const pjoint *J, const pbody *B, int k, int *row, int *col)
{
    char grp = (char)jslot[k][0];
    int comp = jslot[k][1];
    if (grp == 'E') *row = c->e0 + B->q[comp];
    else *row = (grp == 'P' ? c->p0 : grp == 'D' ? c->d0 : c->a0) + jrow(J, comp);
    *col = jslot[k][2] == 'l' ? c->jl + jrow(J, jslot[k][3]) : blk_col(c, (char)jslot[k][2], B->q[(int)jslot[k][3]]);
}

static int is_zero(const mblx_graph *g, mblx_id e)
{
    double v;
    return mblx_is_const(g, e, &v) && v == 0;
}

/* The joints' slots as joint_rc places them, its letters decoded once: the rows of the groups P, D,
 * A and E and the columns of the blocks q, v, a and l of each side, then looked up per slot (the
 * decoding per slot was half of model_pmech_num_new's cost: 6,001 joints, 27 slots a side at the
 * N = 2000 four-bar). The entries pushed to md->sjac with the node zero; 0 or the error. */
static int joints_place(mbl_model *md, mbl_pmech_num *t, const cols *cp, mblx_id zero, mbl_status *st)
{
    cols c = *cp;
    int rc = 0;
    unsigned char kg[JSLOTS], kr[JSLOTS], kb[JSLOTS], kq[JSLOTS];
    for (int k = 0; k < JSLOTS; k++) {
        char grp = (char)jslot[k][0], blk = (char)jslot[k][2];
        kg[k] = grp == 'P' ? 0 : grp == 'D' ? 1 : grp == 'A' ? 2 : 3;
        kb[k] = blk == 'q' ? 0 : blk == 'v' ? 1 : blk == 'a' ? 2 : 3;
        kr[k] = (unsigned char)jslot[k][1], kq[k] = (unsigned char)jslot[k][3];
    }
    /* the present slots of a side, in slot order, for each of its flags hass | hasang << 1 | haspos << 2 */
    unsigned char present[8][JSLOTS];
    int npresent[8];
    for (int f = 0; f < 8; f++) {
        npresent[f] = 0;
        for (int k = 0; k < JSLOTS; k++) {
            if (jslot_s[k] == 1 && !(f & 1)) continue;
            if (jslot_s[k] == 2 ? !(f & 2) : !(f & 4)) continue;
            present[f][npresent[f]++] = (unsigned char)k;
        }
    }
    for (int j = 0; j < t->nj && !rc; j++) {
        pjoint *J = &t->j[j];
        int jr[3] = {jrow(J, 0), jrow(J, 1), jrow(J, 2)};
        for (int a = 0; a < 2 && !rc; a++) {
            for (int k = 0; k < JSLOTS; k++) J->pos[a][k] = -1;
            if (J->b[a] < 0) continue;
            const pbody *B = &t->b[J->b[a]];
            int rows[4][3], colv[4][3];
            for (int m = 0; m < 3; m++) {
                rows[0][m] = c.p0 + jr[m], rows[1][m] = c.d0 + jr[m], rows[2][m] = c.a0 + jr[m];
                rows[3][m] = c.e0 + B->q[m];
                colv[0][m] = c.jq + B->q[m], colv[1][m] = c.jv + B->q[m], colv[2][m] = c.ja + B->q[m];
                colv[3][m] = c.jl + jr[m];
            }
            int f = (J->hass[a] ? 1 : 0) | (J->hasang ? 2 : 0) | (J->haspos ? 4 : 0);
            for (int u = 0; u < npresent[f] && !rc; u++) {
                int k = present[f][u];
                J->pos[a][k] = md->sjac.nz;
                if (model_sjac_push(&md->sjac, rows[kg[k]][kr[k]], colv[kb[k]][kq[k]], zero))
                    rc = mbl_error(st, MBL_ENOMEM, "out of memory");
            }
        }
    }
    return rc;
}

/* The springs' slots (k = 12 r + c: row r of the ends' coordinates, column c < 6 their q, else
 * their v) present when both coordinates are (q[r], q[c % 6] >= 0: not the ground, nor a th the
 * marker does not turn) and, for a v column, the spring has damping; walked from a list made once
 * per combination of those seven flags, in slot order (the same places pushed in the same order as
 * a test per slot). 0 or the error. */
static int springs_place(mbl_model *md, mbl_pmech_num *t, const cols *c, mblx_id zero, mbl_status *st)
{
    unsigned char present[128][SSLOTS];
    int npresent[128];
    for (int f = 0; f < 128; f++) { /* f: bit r (< 6) q[r] present, bit 6 hasc */
        npresent[f] = 0;
        for (int k = 0; k < SSLOTS; k++) {
            int r = k / 12, cc = k % 12;
            if (!(f >> r & 1) || !(f >> (cc % 6) & 1) || (cc >= 6 && !(f >> 6 & 1))) continue;
            present[f][npresent[f]++] = (unsigned char)k;
        }
    }
    int rc = 0;
    for (int j = 0; j < t->ns && !rc; j++) {
        pspring *S = &t->s[j];
        int f = S->hasc ? 64 : 0;
        for (int r = 0; r < 6; r++) f |= (S->q[r] >= 0) << r;
        for (int k = 0; k < SSLOTS; k++) S->pos[k] = -1;
        for (int u = 0; u < npresent[f] && !rc; u++) {
            int k = present[f][u], r = k / 12, cc = k % 12;
            S->pos[k] = md->sjac.nz;
            if (model_sjac_push(&md->sjac, c->e0 + S->q[r], (cc >= 6 ? c->jv : c->jq) + S->q[cc % 6], zero))
                rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        }
    }
    return rc;
}

int model_pmech_num_new(mbl_model *md, const mbl_pmech_src *p, const int *qidx, const mblx_id *bn, const mblx_id *jn,
                      const mblx_id *sn, const mblx_id gn[2], mbl_status *st)
{
    mblx_graph *g = md->g;
    mbl_pmech_num *t = mbl_calloc(1, sizeof *t);
    double *syms = mbl_calloc((size_t)md->nsym + 1, sizeof *syms);
    if (!t || !syms || !(t->b = mbl_calloc((size_t)p->nb + 1, sizeof *t->b)) ||
        !(t->j = mbl_calloc((size_t)p->nj + 1, sizeof *t->j)) || !(t->s = mbl_calloc((size_t)p->ns + 1, sizeof *t->s))) {
        mbl_free(syms);
        model_pmech_num_free(t);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    t->nb = p->nb, t->nj = p->nj, t->ns = p->ns;
    for (int i = 0; i < md->np; i++) syms[md->sym_p[i]] = md->pval[i];
    int rc = 0;
    /* the parameter texts evaluated once (set_param refuses a mechanism's parameters), each distinct
     * node once (the texts repeat: every bar's mass) */
    size_t nn = mblx_node_count(g);
    double *memo = mbl_alloc_array(nn + 1, sizeof *memo);
    unsigned char *known = mbl_calloc(nn + 1, 1);
    if (!memo || !known) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
#define VAL(node, out)                                                                                            \
    do {                                                                                                          \
        mblx_id n_ = (node);                                                                                      \
        if (rc || mblx_is_const(g, n_, (out))) break;                                                             \
        if (n_ < nn && known[n_]) {                                                                               \
            *(out) = memo[n_];                                                                                    \
            break;                                                                                                \
        }                                                                                                         \
        rc = mblx_eval(g, n_, syms, (out), st);                                                                   \
        if (!rc && n_ < nn) memo[n_] = *(out), known[n_] = 1;                                                     \
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
        J->haspos = p->j[j].type != MBL_PMECH_ORIENTATION;
        J->hasang = p->j[j].type != MBL_PMECH_REVOLUTE;
        for (int a = 0; a < 2; a++) {
            J->b[a] = p->j[j].b[a];
            for (int k = 0; k < 2; k++) {
                J->sn[a][k] = jn[6 * j + 2 * a + k];
                VAL(J->sn[a][k], &J->s[a][k]);
            }
            J->an[a] = jn[6 * j + 4 + a];
            VAL(J->an[a], &J->ang[a]);
            J->hass[a] = !is_zero(g, J->sn[a][0]) || !is_zero(g, J->sn[a][1]);
        }
    }
    for (int j = 0; j < p->ns && !rc; j++) {
        pspring *S = &t->s[j];
        size_t ln = strlen(p->s[j].name);
        char *nm = mbl_malloc(ln + 1);
        if (!nm) {
            rc = mbl_error(st, MBL_ENOMEM, "out of memory");
            break;
        }
        memcpy(nm, p->s[j].name, ln + 1);
        S->name = nm;
        S->line = p->s[j].line, S->col = p->s[j].col;
        for (int a = 0; a < 2; a++) {
            S->b[a] = p->s[j].b[a];
            int hass = 0;
            for (int k = 0; k < 2; k++) {
                S->sn[a][k] = sn[8 * j + 2 * a + k];
                VAL(S->sn[a][k], &S->s[a][k]);
                hass |= !is_zero(g, S->sn[a][k]);
            }
            for (int k = 0; k < 3; k++) S->q[3 * a + k] = S->b[a] < 0 ? -1 : t->b[S->b[a]].q[k];
            if (!hass) S->q[3 * a + 2] = -1;
        }
        for (int k = 0; k < 4; k++) S->tn[k] = sn[8 * j + 4 + k];
        VAL(S->tn[0], &S->k);
        VAL(S->tn[1], &S->c);
        VAL(S->tn[2], &S->L0);
        VAL(S->tn[3], &S->f0);
        S->hasc = !is_zero(g, S->tn[1]);
    }
#undef VAL
    mbl_free(syms), mbl_free(memo), mbl_free(known);
    if (rc) {
        model_pmech_num_free(t);
        return rc;
    }
    /* the pattern, node 0 (the entries go to md->jac by the merge and model_compile's bind, the remap entry) */
    cols c = cols_of(md);
    mblx_id zero = mblx_const(g, 0.0);
    /* room for every slot at once (doubling from 64 copied the arrays 13 times at the N = 2000
     * four-bar: its 278,026 entries of at most 516,066) */
    size_t most = (size_t)t->nb * BSLOTS + (size_t)t->nj * 2 * JSLOTS + (size_t)t->ns * SSLOTS;
    if (model_sjac_reserve(&md->sjac, most)) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int b = 0; b < t->nb && !rc; b++) {
        pbody *B = &t->b[b];
        for (int k = 0; k < BSLOTS && !rc; k++) {
            B->pos[k] = -1;
            if (bslot_c[k] && !B->hasc) continue;
            int row, col;
            body_rc(&c, B, k, &row, &col);
            B->pos[k] = md->sjac.nz;
            if (model_sjac_push(&md->sjac, row, col, zero)) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        }
    }
    if (!rc) rc = joints_place(md, t, &c, zero, st);
    if (!rc) rc = springs_place(md, t, &c, zero, st);
    if (rc) {
        model_pmech_num_free(t);
        return rc;
    }
    md->pmn = t;
    return mblx_graph_status(g, st);
}

void model_pmech_num_remap(mbl_pmech_num *t, const int *map)
{
    if (!t) return;
    for (int b = 0; b < t->nb; b++)
        for (int k = 0; k < BSLOTS; k++)
            if (t->b[b].pos[k] >= 0) t->b[b].pos[k] = map[t->b[b].pos[k]];
    for (int j = 0; j < t->nj; j++)
        for (int a = 0; a < 2; a++)
            for (int k = 0; k < JSLOTS; k++)
                if (t->j[j].pos[a][k] >= 0) t->j[j].pos[a][k] = map[t->j[j].pos[a][k]];
    for (int j = 0; j < t->ns; j++)
        for (int k = 0; k < SSLOTS; k++)
            if (t->s[j].pos[k] >= 0) t->s[j].pos[k] = map[t->s[j].pos[k]];
}

int model_pmech_num_entries(const mbl_pmech_num *t)
{
    int n = 0;
    for (int b = 0; t && b < t->nb; b++)
        for (int k = 0; k < BSLOTS; k++) n += t->b[b].pos[k] >= 0;
    for (int j = 0; t && j < t->nj; j++)
        for (int a = 0; a < 2; a++)
            for (int k = 0; k < JSLOTS; k++) n += t->j[j].pos[a][k] >= 0;
    for (int j = 0; t && j < t->ns; j++)
        for (int k = 0; k < SSLOTS; k++) n += t->s[j].pos[k] >= 0;
    return n;
}

/* ---- numeric evaluation ------------------------------------------------------------------------ */

#define SYM(col) syms[su[(col)]]

/* A spring (see mbl_pmech_spring): d = p_i - p_j = sum_c D[:, c] q_c + const, d' = D v with D the
 * 2 x 6 map of the ends' coordinates (x: e_x, y: e_y, th: +-w', signs + for i, - for j), L = |d|,
 * e = d / L, L' = e.d', f = -k (L - L0) - c L' + f0, F = f e; the generalized forces Q = D^T F
 * enter the rows with a minus sign (R = ... - Q). Derivatives: dD/dth = -+w (only its own column),
 * dd'/dth = th' dD/dth, dL/dq = e^T D, dL'/dq = ((I - e e^T) d' / L)^T D + e^T dd'/dq, dL'/dv = e^T D,
 * dF/dx = e df/dx + f / L (I - e e^T) dd/dx. */
static int spring_eval(const mbl_model *md, const cols *c, const pspring *S, const double *syms, const double *csn,
                       double *F, double *J, mbl_status *st)
{
    const int *su = md->sym_of_unknown;
    double D[2][6] = {{0}}, d[2] = {0, 0}, dd[2] = {0, 0}, W[2][2] = {{0}}, thd[2] = {0, 0};
    for (int a = 0; a < 2; a++) {
        double sg = a == 0 ? 1.0 : -1.0, px = S->s[a][0], py = S->s[a][1];
        if (S->b[a] >= 0) {
            int ix = md->pmn->b[S->b[a]].q[0], iy = md->pmn->b[S->b[a]].q[1], it = md->pmn->b[S->b[a]].q[2];
            double cs = csn[2 * S->b[a]], sn = csn[2 * S->b[a] + 1];
            thd[a] = SYM(c->jv + it);
            double wx = cs * px - sn * py, wy = sn * px + cs * py;
            W[a][0] = wx, W[a][1] = wy;
            px = SYM(c->jq + ix) + wx, py = SYM(c->jq + iy) + wy;
            dd[0] += sg * (SYM(c->jv + ix) - thd[a] * wy);
            dd[1] += sg * (SYM(c->jv + iy) + thd[a] * wx);
            D[0][3 * a] = sg, D[1][3 * a + 1] = sg;
            D[0][3 * a + 2] = -sg * wy, D[1][3 * a + 2] = sg * wx;
        }
        d[0] += sg * px, d[1] += sg * py;
    }
    double L = hypot(d[0], d[1]);
    if (!(L > 0) || !isfinite(L) || !isfinite(dd[0]) || !isfinite(dd[1]))
        return mbl_error(st, MBL_EDOMAIN, "%s: the length is %s (the markers coincide or a coordinate is not finite)",
                         S->name, isfinite(L) ? "0" : "not finite");
    double e[2] = {d[0] / L, d[1] / L}, Ld = e[0] * dd[0] + e[1] * dd[1];
    double f = -S->k * (L - S->L0) - S->c * Ld + S->f0, Fv[2] = {f * e[0], f * e[1]};
    if (F)
        for (int r = 0; r < 6; r++)
            if (S->q[r] >= 0) F[c->e0 + S->q[r]] -= D[0][r] * Fv[0] + D[1][r] * Fv[1];
    if (!J) return 0;
    /* P d' / L, with P = I - e e^T */
    double pd[2] = {(dd[0] - e[0] * Ld) / L, (dd[1] - e[1] * Ld) / L};
    for (int col = 0; col < 6; col++) {
        if (S->q[col] < 0) continue;
        int a = col / 3, th = col % 3 == 2;
        double sg = a == 0 ? 1.0 : -1.0;
        double Dq[2] = {D[0][col], D[1][col]};
        /* dd'/dq of this column (a th only): th' d(w')/dth = -th' w, signed */
        double ddq[2] = {th ? -sg * thd[a] * W[a][0] : 0, th ? -sg * thd[a] * W[a][1] : 0};
        double eD = e[0] * Dq[0] + e[1] * Dq[1];
        double dfq = -S->k * eD - S->c * (pd[0] * Dq[0] + pd[1] * Dq[1] + e[0] * ddq[0] + e[1] * ddq[1]);
        double dFq[2] = {e[0] * dfq + f / L * (Dq[0] - e[0] * eD), e[1] * dfq + f / L * (Dq[1] - e[1] * eD)};
        double dfv = -S->c * eD, dFv[2] = {e[0] * dfv, e[1] * dfv};
        for (int r = 0; r < 6; r++) {
            int pq = S->pos[12 * r + col], pv = S->pos[12 * r + 6 + col];
            if (pq >= 0) {
                double x = D[0][r] * dFq[0] + D[1][r] * dFq[1];
                /* dD/dth of the row's own th: -+w */
                if (r == col && th) x += -sg * (W[a][0] * Fv[0] + W[a][1] * Fv[1]);
                J[pq] -= x;
            }
            if (pv >= 0) J[pv] -= D[0][r] * dFv[0] + D[1][r] * dFv[1];
        }
    }
    return 0;
}

/* marker a (0: i, 1: j) of spring S: its global position at syms */
static void spring_end(const mbl_model *md, const mbl_pmech_num *t, const pspring *S, int a, const double *syms,
                       double p[2])
{
    const int *su = md->sym_of_unknown;
    int jq = model_blk0(md, MBL_BLK_Q);
    p[0] = S->s[a][0], p[1] = S->s[a][1];
    if (S->b[a] < 0) return; /* on the ground: global */
    const pbody *B = &t->b[S->b[a]];
    double th = SYM(jq + B->q[2]), cs = cos(th), sn = sin(th);
    p[0] = SYM(jq + B->q[0]) + cs * S->s[a][0] - sn * S->s[a][1];
    p[1] = SYM(jq + B->q[1]) + sn * S->s[a][0] + cs * S->s[a][1];
}

int model_pmech_num_check(const mbl_model *md, const mbl_pmech_num *t, const double *syms, mbl_status *st)
{
    for (int j = 0; t && j < t->ns; j++) {
        const pspring *S = &t->s[j];
        if (S->L0 == 0) continue; /* a free length of 0: its force vanishes with its length */
        double pi[2], pj[2];
        spring_end(md, t, S, 0, syms, pi);
        spring_end(md, t, S, 1, syms, pj);
        double L = hypot(pi[0] - pj[0], pi[1] - pj[1]), r = L / fabs(S->L0);
        if (r >= MBL_SPRING_MEET_TOL || !isfinite(r)) continue;
        char pos[MBL_MSG_MAX];
        model_position_text(pos, sizeof pos, md->file, S->line, S->col, S->name);
        return mbl_error(st, MBL_ESINGULAR,
                         "%s (spring): its markers meet, length / free length = %.6g at the operating point "
                         "(length %.3g), below %g (its force has no direction where they meet: start them apart in "
                         "the model's configuration, or give the spring free length 0)",
                         pos, r, L, MBL_SPRING_MEET_TOL);
    }
    return 0;
}

/* What an evaluation computes beyond the rows of the equations of motion and of Phi with their
 * entries in the coordinates' and multipliers' columns (model_pmech_num_eval_sel): the rows of Phid
 * (d) and of Phidd (a), the entries in the velocities' and accelerations' columns (av). */
typedef struct want {
    int d, a, av;
} want;

static int bodies_eval(const mbl_model *md, const mbl_pmech_num *t, const cols *cp, const double *syms, double *csn,
                       double *F, double *J, want w, mbl_status *st);
static int joints_eval(const mbl_model *md, const mbl_pmech_num *t, const cols *cp, const double *syms, const double *csn,
                       double *F, double *J, want w, mbl_status *st);

int model_pmech_num_eval(const mbl_model *md, const mbl_pmech_num *t, const double *syms, double *F, double *J,
                       mbl_status *st)
{
    return model_pmech_num_eval_sel(md, t, syms, F, J, ~0u, ~0u, st);
}

int model_pmech_num_eval_sel(const mbl_model *md, const mbl_pmech_num *t, const double *syms, double *F, double *J,
                             unsigned rowmask, unsigned colmask, mbl_status *st)
{
    cols c = cols_of(md);
    want w = {(rowmask >> MBL_ROW_PHID) & 1u, (rowmask >> MBL_ROW_PHIDD) & 1u,
              ((colmask >> MBL_BLK_V) | (colmask >> MBL_BLK_A)) & 1u};
    /* each body's cos th, sin th, once for its joints and springs too */
    double *csn = mbl_alloc_array(2 * (size_t)t->nb + 1, sizeof *csn);
    if (!csn) return mbl_error(st, MBL_ENOMEM, "out of memory");
    int rc = bodies_eval(md, t, &c, syms, csn, F, J, w, st);
    if (!rc) rc = joints_eval(md, t, &c, syms, csn, F, J, w, st);
    for (int j = 0; j < t->ns && !rc; j++) rc = spring_eval(md, &c, &t->s[j], syms, csn, F, J, st);
    mbl_free(csn);
    return rc;
}

/* the bodies' rows and entries (model_pmech_num_eval), their cosines and sines into csn */
static int bodies_eval(const mbl_model *md, const mbl_pmech_num *t, const cols *cp, const double *syms, double *csn,
                       double *F, double *J, want w, mbl_status *st)
{
    const int *su = md->sym_of_unknown;
    cols c = *cp;
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
        csn[2 * b] = cs, csn[2 * b + 1] = sn;
        double ux = cs * B->c[0] - sn * B->c[1], uy = sn * B->c[0] + cs * B->c[1];
        double Gx = x[0][2] - t->g[0], Gy = x[1][2] - t->g[1], cc = B->c[0] * B->c[0] + B->c[1] * B->c[1];
        if (F) {
            F[c.e0 + B->q[0]] += m * (Gx - thdd * uy - thd2 * ux);
            F[c.e0 + B->q[1]] += m * (Gy + thdd * ux - thd2 * uy);
            F[c.e0 + B->q[2]] += B->I * thdd + m * cc * thdd + m * (-uy * Gx + ux * Gy);
        }
        if (J) { /* slot by slot in bslot's order, only the present ones computed (the same sums) */
            const int *ps = B->pos;
#define BADD(k, val) \
    if (ps[k] >= 0) J[ps[k]] += (val)
            if (!w.av) { /* the coordinates' columns alone (slots 3, 7, 11) */
                BADD(3, m * (-thdd * ux + thd2 * uy));
                BADD(7, m * (-thdd * uy - thd2 * ux));
                BADD(11, -m * (ux * Gx + uy * Gy));
                continue;
            }
            BADD(0, m);
            BADD(1, -m * uy);
            BADD(2, -2 * m * thd * ux);
            BADD(3, m * (-thdd * ux + thd2 * uy));
            BADD(4, m);
            BADD(5, m * ux);
            BADD(6, -2 * m * thd * uy);
            BADD(7, m * (-thdd * uy - thd2 * ux));
            BADD(8, -m * uy);
            BADD(9, m * ux);
            BADD(10, B->I + m * cc);
            BADD(11, -m * (ux * Gx + uy * Gy));
#undef BADD
        }
    }
    return 0;
}

/* the joints' constraint rows, their multipliers' rows and entries (model_pmech_num_eval) */
static int joints_eval(const mbl_model *md, const mbl_pmech_num *t, const cols *cp, const double *syms, const double *csn,
                       double *F, double *J, want w, mbl_status *st)
{
    const int *su = md->sym_of_unknown;
    cols c = *cp;
    for (int j = 0; j < t->nj; j++) {
        const pjoint *P = &t->j[j];
        int ra = jrow(P, 2);
        double lx = P->haspos ? SYM(c.jl + P->c0) : 0, ly = P->haspos ? SYM(c.jl + P->c0 + 1) : 0;
        double la = P->hasang ? SYM(c.jl + ra) : 0;
        if (!isfinite(lx) || !isfinite(ly) || !isfinite(la))
            return mbl_error(st, MBL_EDOMAIN, "the multipliers of %s are not finite", md->cname[P->c0]);
        for (int a = 0; a < 2; a++) {
            double sg = a == 0 ? 1.0 : -1.0;
            if (F && P->hasang) { /* the angle row: th_i + a_i - th_j - a_j */
                F[c.p0 + ra] += sg * (P->ang[a] + (P->b[a] < 0 ? 0 : SYM(c.jq + t->b[P->b[a]].q[2])));
                if (P->b[a] >= 0) {
                    const pbody *B = &t->b[P->b[a]];
                    if (w.d) F[c.d0 + ra] += sg * SYM(c.jv + B->q[2]);
                    if (w.a) F[c.a0 + ra] += sg * SYM(c.ja + B->q[2]);
                    F[c.e0 + B->q[2]] += sg * la;
                }
            }
            if (P->b[a] < 0) { /* a point of the ground */
                if (F && P->haspos) {
                    F[c.p0 + P->c0] += sg * P->s[a][0];
                    F[c.p0 + P->c0 + 1] += sg * P->s[a][1];
                }
                continue;
            }
            const pbody *B = &t->b[P->b[a]];
            int ix = B->q[0], iy = B->q[1], it = B->q[2];
            double thd = SYM(c.jv + it), thdd = SYM(c.ja + it), thd2 = thd * thd;
            double cs = csn[2 * P->b[a]], sn = csn[2 * P->b[a] + 1];
            double wx = cs * P->s[a][0] - sn * P->s[a][1], wy = sn * P->s[a][0] + cs * P->s[a][1];
            if (F && P->haspos) {
                F[c.p0 + P->c0] += sg * (SYM(c.jq + ix) + wx);
                F[c.p0 + P->c0 + 1] += sg * (SYM(c.jq + iy) + wy);
                if (w.d) {
                    F[c.d0 + P->c0] += sg * (SYM(c.jv + ix) - thd * wy);
                    F[c.d0 + P->c0 + 1] += sg * (SYM(c.jv + iy) + thd * wx);
                }
                if (w.a) {
                    F[c.a0 + P->c0] += sg * (SYM(c.ja + ix) - thdd * wy - thd2 * wx);
                    F[c.a0 + P->c0 + 1] += sg * (SYM(c.ja + iy) + thdd * wx - thd2 * wy);
                }
                F[c.e0 + ix] += sg * lx;
                F[c.e0 + iy] += sg * ly;
                F[c.e0 + it] += sg * (-lx * wy + ly * wx);
            }
            if (J) { /* slot by slot in jslot's order, only the present ones computed (the same sums) */
                const int *ps = P->pos[a];
                double one = sg, mwy = sg * -wy, pwx = sg * wx;
#define JADD(k, val) \
    if (ps[k] >= 0) J[ps[k]] += (val)
                JADD(0, one);
                JADD(1, one);
                JADD(2, mwy);
                JADD(3, pwx);
                if (w.d) { /* Phid's rows */
                    JADD(4, one);
                    JADD(5, one);
                    JADD(6, mwy);
                    JADD(7, pwx);
                    JADD(8, sg * (-thd * wx));
                    JADD(9, sg * (-thd * wy));
                }
                if (w.a) { /* Phidd's rows */
                    JADD(10, one);
                    JADD(11, one);
                    JADD(12, mwy);
                    JADD(13, pwx);
                    JADD(14, sg * (-2 * thd * wx));
                    JADD(15, sg * (-2 * thd * wy));
                    JADD(16, sg * (-thdd * wx + thd2 * wy));
                    JADD(17, sg * (-thdd * wy - thd2 * wx));
                }
                JADD(18, one);
                JADD(19, one);
                JADD(20, mwy);
                JADD(21, pwx);
                JADD(22, sg * (-(lx * wx + ly * wy)));
                JADD(23, one);
                if (w.d) JADD(24, one);
                if (w.a) JADD(25, one);
                JADD(26, one);
#undef JADD
            }
        }
    }
    return 0;
}

#undef SYM

/* ---- the expression form ----------------------------------------------------------------------- */

/* The expression form, part by part (model_pmech_num_exprs): the bodies' rows and entries, the
 * joints' constraint rows and entries (with their multipliers' rows), the springs' forces. */
#define SYMN(col) mblx_symbol_node(g, (size_t)md->sym_of_unknown[(col)])
#define ADD(a, b) mblx_add(g, (a), (b))
#define SUB(a, b) mblx_sub(g, (a), (b))
#define MUL(a, b) mblx_mul(g, (a), (b))
#define NEG(a) mblx_neg(g, (a))
#define ROW(r, e) (Fs[(r)] = ADD(Fs[(r)], (e)))
static int bodies_exprs(mbl_model *md, const mbl_pmech_num *t, const cols *cp, mblx_id two, mblx_id *Fs, mbl_sjac *S,
                        mbl_status *st)
{
    mblx_graph *g = md->g;
    cols c = *cp;
    int rc = 0;
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
            if (model_sjac_push(S, row, col, v[k])) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        }
    }
    return rc;
}

static int joints_exprs(mbl_model *md, const mbl_pmech_num *t, const cols *cp, mblx_id one, mblx_id two, mblx_id *Fs,
                        mbl_sjac *S, mbl_status *st)
{
    mblx_graph *g = md->g;
    cols c = *cp;
    int rc = 0;
    for (int j = 0; j < t->nj && !rc; j++) {
        const pjoint *P = &t->j[j];
        int ra = jrow(P, 2);
        mblx_id zero = mblx_const(g, 0.0);
        mblx_id lx = P->haspos ? SYMN(c.jl + P->c0) : zero, ly = P->haspos ? SYMN(c.jl + P->c0 + 1) : zero;
        for (int a = 0; a < 2 && !rc; a++) {
            mblx_id sg = a == 0 ? one : mblx_const(g, -1.0);
            if (P->hasang) {
                mblx_id th = P->b[a] < 0 ? zero : SYMN(c.jq + t->b[P->b[a]].q[2]);
                ROW(c.p0 + ra, MUL(sg, ADD(th, P->an[a])));
                if (P->b[a] >= 0) {
                    const pbody *B = &t->b[P->b[a]];
                    ROW(c.d0 + ra, MUL(sg, SYMN(c.jv + B->q[2])));
                    ROW(c.a0 + ra, MUL(sg, SYMN(c.ja + B->q[2])));
                    ROW(c.e0 + B->q[2], MUL(sg, SYMN(c.jl + ra)));
                }
            }
            if (P->b[a] < 0) {
                if (P->haspos) {
                    ROW(c.p0 + P->c0, MUL(sg, P->sn[a][0]));
                    ROW(c.p0 + P->c0 + 1, MUL(sg, P->sn[a][1]));
                }
                continue;
            }
            const pbody *B = &t->b[P->b[a]];
            int ix = B->q[0], iy = B->q[1], it = B->q[2];
            mblx_id th = SYMN(c.jq + it), thd = SYMN(c.jv + it), thdd = SYMN(c.ja + it), thd2 = MUL(thd, thd);
            mblx_id cs = mblx_cos(g, th), sn = mblx_sin(g, th), sx = P->sn[a][0], sy = P->sn[a][1];
            mblx_id wx = SUB(MUL(cs, sx), MUL(sn, sy)), wy = ADD(MUL(sn, sx), MUL(cs, sy));
            if (P->haspos) {
            ROW(c.p0 + P->c0, MUL(sg, ADD(SYMN(c.jq + ix), wx)));
            ROW(c.p0 + P->c0 + 1, MUL(sg, ADD(SYMN(c.jq + iy), wy)));
            ROW(c.d0 + P->c0, MUL(sg, SUB(SYMN(c.jv + ix), MUL(thd, wy))));
            ROW(c.d0 + P->c0 + 1, MUL(sg, ADD(SYMN(c.jv + iy), MUL(thd, wx))));
            ROW(c.a0 + P->c0, MUL(sg, SUB(SUB(SYMN(c.ja + ix), MUL(thdd, wy)), MUL(thd2, wx))));
            ROW(c.a0 + P->c0 + 1, MUL(sg, SUB(ADD(SYMN(c.ja + iy), MUL(thdd, wx)), MUL(thd2, wy))));
            ROW(c.e0 + ix, MUL(sg, lx));
            ROW(c.e0 + iy, MUL(sg, ly));
            ROW(c.e0 + it, MUL(sg, ADD(MUL(NEG(lx), wy), MUL(ly, wx))));
            }
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
                                 NEG(ADD(MUL(lx, wx), MUL(ly, wy))),
                                 one,
                                 one,
                                 one,
                                 one};
            for (int k = 0; k < JSLOTS && !rc; k++) {
                if (P->pos[a][k] < 0) continue;
                int row, col;
                joint_rc(&c, P, B, k, &row, &col);
                if (model_sjac_push(S, row, col, MUL(sg, v[k]))) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
            }
        }
    }
    return rc;
}

static int springs_exprs(mbl_model *md, const mbl_pmech_num *t, const cols *cp, mblx_id one, mblx_id *Fs, mbl_sjac *S,
                         mbl_status *st)
{
    mblx_graph *g = md->g;
    cols c = *cp;
    int rc = 0;
    for (int j = 0; j < t->ns && !rc; j++) {
        const pspring *P = &t->s[j];
        mblx_id d[2] = {mblx_const(g, 0.0), mblx_const(g, 0.0)}, dd[2] = {d[0], d[0]}, W[2][2];
        for (int a = 0; a < 2; a++) {
            mblx_id sg = a == 0 ? one : mblx_const(g, -1.0), px = P->sn[a][0], py = P->sn[a][1];
            W[a][0] = W[a][1] = d[0];
            if (P->b[a] >= 0) {
                const pbody *B = &t->b[P->b[a]];
                mblx_id th = SYMN(c.jq + B->q[2]), thd = SYMN(c.jv + B->q[2]);
                mblx_id cs = mblx_cos(g, th), sn = mblx_sin(g, th);
                W[a][0] = SUB(MUL(cs, px), MUL(sn, py)), W[a][1] = ADD(MUL(sn, px), MUL(cs, py));
                px = ADD(SYMN(c.jq + B->q[0]), W[a][0]), py = ADD(SYMN(c.jq + B->q[1]), W[a][1]);
                dd[0] = ADD(dd[0], MUL(sg, SUB(SYMN(c.jv + B->q[0]), MUL(thd, W[a][1]))));
                dd[1] = ADD(dd[1], MUL(sg, ADD(SYMN(c.jv + B->q[1]), MUL(thd, W[a][0]))));
            }
            d[0] = ADD(d[0], MUL(sg, px)), d[1] = ADD(d[1], MUL(sg, py));
        }
        mblx_id L = mblx_sqrt(g, ADD(MUL(d[0], d[0]), MUL(d[1], d[1])));
        mblx_id Ld = mblx_div(g, ADD(MUL(d[0], dd[0]), MUL(d[1], dd[1])), L);
        mblx_id f = ADD(SUB(NEG(MUL(P->tn[0], SUB(L, P->tn[2]))), MUL(P->tn[1], Ld)), P->tn[3]);
        mblx_id Fv[2] = {mblx_div(g, MUL(f, d[0]), L), mblx_div(g, MUL(f, d[1]), L)};
        mblx_id Q[6];
        for (int a = 0; a < 2; a++) {
            mblx_id sg = a == 0 ? one : mblx_const(g, -1.0);
            Q[3 * a] = MUL(sg, Fv[0]), Q[3 * a + 1] = MUL(sg, Fv[1]);
            Q[3 * a + 2] = MUL(sg, ADD(MUL(NEG(W[a][1]), Fv[0]), MUL(W[a][0], Fv[1])));
        }
        for (int r = 0; r < 6; r++)
            if (P->q[r] >= 0) ROW(c.e0 + P->q[r], NEG(Q[r]));
        for (int k = 0; k < SSLOTS && !rc; k++) {
            if (P->pos[k] < 0) continue;
            int r = k / 12, cc = k % 12, v = cc >= 6;
            int row = c.e0 + P->q[r], col = (v ? c.jv : c.jq) + P->q[cc % 6];
            mblx_id e = NEG(mblx_diff(g, Q[r], SYMN(col)));
            if (model_sjac_push(S, row, col, e)) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        }
    }
    return rc;
}
#undef SYMN
#undef ADD
#undef SUB
#undef MUL
#undef NEG
#undef ROW

int model_pmech_num_exprs(mbl_model *md, const mbl_pmech_num *t, mblx_id *Fs, mbl_sjac *S, mbl_status *st)
{
    mblx_graph *g = md->g;
    cols c = cols_of(md);
    mblx_id one = mblx_const(g, 1.0), two = mblx_const(g, 2.0);
    int rc = bodies_exprs(md, t, &c, two, Fs, S, st);
    if (!rc) rc = joints_exprs(md, t, &c, one, two, Fs, S, st);
    if (!rc) rc = springs_exprs(md, t, &c, one, Fs, S, st);
    return rc ? rc : mblx_graph_status(g, st);
}
