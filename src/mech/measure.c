/* Measures: the texts of DX(i, j, k), AX(..), JQ(joint), FX(joint), SLIP(joint) ... (positions,
 * angles, joint coordinates and rates, reactions, a tire's slip angle) and their substitution into user texts (mech_subst). */
#include "mech/mech_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/vec3.h"

/* d = p_i - p_j as three texts */
void mech_dvec(mech *M, int i, int j, char *d[3])
{
    char *const *pi = mech_mk_p(M, i), *const *pj = j < 0 ? NULL : mech_mk_p(M, j);
    for (int k = 0; k < 3; k++)
        d[k] = !pj ? pi[k]
               : !strcmp(pi[k], "0") && !strcmp(pj[k], "0") ? (char *)"0" /* z in the plane */
                                                            : mech_fmt(M, "(%s - %s)", pi[k], pj[k]);
}

/* Euler parameters of marker m in global (q = e_body (x) m, Hamilton product): texts in e and the
 * numbers of the file's configuration */
static void marker_quat(mech *M, int m, const char *q[4], double qn[4])
{
    marker *K = &M->mk[m];
    body *B = &M->b[K->body];
    static const char *one[4] = {"1", "0", "0", "0"};
    const char *const *e = B->kind == KIND_SPATIAL ? (const char *const *)B->e : one;
    const double *x = K->mq, *en = B->q0;
    const char *mt[4] = {mech_num(M, x[0]), mech_num(M, x[1]), mech_num(M, x[2]), mech_num(M, x[3])};
    mech_tx_qmul_plain(M, e, mt, q);
    quat_mul(en, x, qn);
}

/* The rotation angle of marker i about the z axis of marker j (spatial), continuous: with
 * r = conj(q_j) (x) q_i the relative Euler parameters, the angle is 2 atan2(r3, r0) measured from
 * the angle a of the file's configuration (in (-pi, pi], today's atan2(x_i.y_j, x_i.x_j) there):
 * a + 2 atan2(r3', r0') with r' = sigma r (x) (cos a/2, 0, 0, -sin a/2) and sigma = +-1 making r0' > 0
 * in the file's configuration. It is smooth in the coordinates and does not wrap within 2 pi of a
 * (a driver, a coupler or a torsion spring can pass half a turn). Where the file turns the two
 * markers' bodies (and the markers on them) about axes along that z axis only (axis + angle, or
 * not at all), a counts the whole turns of those angles: a pinion at `angle: -3.55` is at -3.55,
 * not at 2.73, so that a coupler or a spring sees the angle the user wrote (file_turns). */
static int file_turns(const mech *M, int mi, int mj, double z[3], double *turns)
{
    *turns = 0;
    const marker *K[2] = {&M->mk[mi], &M->mk[mj]};
    for (int e = 0; e < 2; e++) {
        const body *B = &M->b[K[e]->body];
        double sgn = e == 0 ? 1.0 : -1.0;
        /* the body's turn (global axis), then the marker's (axis in body axes, turned by B->R0) */
        const double *tb = B->turn, *tm = K[e]->turn;
        double km[3];
        for (int i = 0; i < 3; i++) km[i] = B->R0[i] * tm[0] + B->R0[3 + i] * tm[1] + B->R0[6 + i] * tm[2];
        const double *ax[2] = {tb, km};
        const double ang[2] = {tb[3], tm[3]};
        const int kind[2] = {B->turn_kind, K[e]->turn_kind};
        for (int t = 0; t < 2; t++) {
            if (kind[t] == 2) continue;
            if (kind[t] != 1) return 0;
            double d = ax[t][0] * z[0] + ax[t][1] * z[1] + ax[t][2] * z[2];
            if (fabs(fabs(d) - 1) > 1e-12) return 0;
            *turns += sgn * (d > 0 ? 1.0 : -1.0) * ang[t];
        }
    }
    return 1;
}

const char *mech_twist_angle(mech *M, int mi, int mj)
{
    const char *a[4], *b[4];
    double an[4], bn[4];
    marker_quat(M, mj, a, an);
    marker_quat(M, mi, b, bn);
    /* r0 = a0 b0 + a.b, r3 = a0 b3 - b0 a3 - (a1 b2 - a2 b1) */
    double r0 = an[0] * bn[0] + an[1] * bn[1] + an[2] * bn[2] + an[3] * bn[3];
    double r3 = an[0] * bn[3] - bn[0] * an[3] - (an[1] * bn[2] - an[2] * bn[1]);
    double a0 = 2 * atan2(r3, r0);
    a0 = atan2(sin(a0), cos(a0));
    double c = cos(a0 / 2), s = sin(a0 / 2);
    double sg = r0 * c + r3 * s < 0 ? -1 : 1;
    /* whole turns of the file's angles: kept when they agree with a0 to rounding */
    double z[3] = {M->mk[mj].R0[6], M->mk[mj].R0[7], M->mk[mj].R0[8]}, turns, two_pi = 2 * acos(-1.0);
    double at = a0;
    if (file_turns(M, mi, mj, z, &turns)) {
        double k = nearbyint((turns - a0) / two_pi);
        if (k != 0 && fabs(turns - (a0 + k * two_pi)) <= 1e-9 * fmax(1.0, fabs(turns))) at = a0 + k * two_pi;
    }
    /* r0 and r3 as variables: each is written twice in the angle (their texts, sums of products of
     * the markers' Euler parameters, were 12 KB of the bicycle's 30 KB of texts); a variable's node
     * is its text's, so the expression is the same */
    int k = M->ntwist++;
    const char *t0 = mech_fmt(M, "_tw%d_r0", k), *t3 = mech_fmt(M, "_tw%d_r3", k);
    int line = M->mk[mi].line, col = M->mk[mi].col;
    if (mech_add_var(M, t0, mech_fmt(M, "(%s*%s + %s*%s + %s*%s + %s*%s)", a[0], b[0], a[1], b[1], a[2], b[2], a[3], b[3]),
                     line, col) ||
        mech_add_var(M, t3, mech_fmt(M, "(%s*%s - %s*%s - %s*%s + %s*%s)", a[0], b[3], b[0], a[3], a[1], b[2], a[2], b[1]),
                     line, col))
        return "0";
    return mech_fmt(M, "(%s + 2*atan2(%s*(%s*%s - %s*%s), %s*(%s*%s + %s*%s)))", mech_num(M, at), mech_num(M, sg), t3, mech_num(M, c), t0,
                    mech_num(M, s), mech_num(M, sg), t0, mech_num(M, c), t3, mech_num(M, s));
}

const char *mech_joint_coord(mech *M, int ji, char *why, size_t whylen)
{
    joint *J = &M->jt[ji];
    if (M->relative && J->tree) return mech_joint_coord_k(M, ji, 1, why, whylen); /* the coordinate itself */
    if (J->i < 0) return mech_joint_coord_k(M, ji, 1, why, whylen);                /* a coupler: none */
    if (J->j < 0) {                                                                  /* a rolling wheel on the default plane */
        snprintf(why, whylen, "joint '%s' (%s) has no joint coordinate", J->name, J->type);
        return NULL;
    }
    marker *I = &M->mk[J->i], *K = &M->mk[J->j];
    char *d[3];
    mech_dvec(M, J->i, J->j, d);
    if (M->planar) {
        if (!strcmp(J->type, "revolute")) return mech_fmt(M, "(%s - %s)", I->phi, K->phi);
        if (!strcmp(J->type, "prismatic")) return mech_dot3(M, d, K->ax[0]);
    } else {
        if (!strcmp(J->type, "revolute") || !strcmp(J->type, "cylindrical")) {
            if (!J->jq) {
                const char *v = mech_fmt(M, "_jq_%s", J->name);
                if (mech_add_var(M, v, mech_twist_angle(M, J->i, J->j), J->line, J->col)) return NULL;
                J->jq = v;
            }
            return J->jq;
        }
        if (!strcmp(J->type, "prismatic")) return mech_dot3(M, d, K->ax[2]);
    }
    if (!M->planar && (!strcmp(J->type, "universal") || !strcmp(J->type, "spherical") || !strcmp(J->type, "planar")))
        return mech_joint_coord_k(M, ji, 1, why, whylen);
    snprintf(why, whylen, "joint '%s' (%s) has no joint coordinate (revolute, prismatic%s only)", J->name, J->type,
             M->planar ? "" : ", cylindrical, universal, spherical, planar");
    return NULL;
}

/* FX FY FZ (joint[, frame]): the force the joint exerts on the body of its marker i (at p_i), TX TY TZ
 * its torque on that body (about p_i), components along the global axes or the frame marker's:
 * -sum_k lambda_k dPhi_k/dp_i (resp. the rotation gradient) over the joint's constraints. */
static const char *reaction(mech *M, const char *fn, int nargs, const char **arg, const size_t *alen, char *why,
                            size_t whylen)
{
    if (nargs < 1 || nargs > 2) {
        snprintf(why, whylen, "%s takes a joint name and optionally a frame marker", fn);
        return NULL;
    }
    int j = mech_find_joint(M, arg[0], alen[0]);
    if (j < 0) {
        snprintf(why, whylen, "%s: no joint named '%.*s'", fn, (int)alen[0], arg[0]);
        return NULL;
    }
    joint *J = &M->jt[j];
    if (!strcmp(J->type, "coupler")) {
        snprintf(why, whylen, "%s: joint '%s' is a coupler, which has no reaction force", fn, J->name);
        return NULL;
    }
    if (!strcmp(J->type, "rolling_wheel")) {
        snprintf(why, whylen,
                 "%s: joint '%s' is a rolling wheel, whose contact forces include its non-holonomic multipliers: "
                 "no reaction measure",
                 fn, J->name);
        return NULL;
    }
    int comp = fn[1] == 'X' ? 0 : fn[1] == 'Y' ? 1 : 2;
    if (M->planar && ((fn[0] == 'F' && comp == 2) || (fn[0] == 'T' && comp != 2))) {
        snprintf(why, whylen, "%s is zero in a planar mechanism (FX, FY and TZ are not)", fn);
        return NULL;
    }
    static char *gx[3][3] = {{"1", "0", "0"}, {"0", "1", "0"}, {"0", "0", "1"}};
    char *const *e = gx[comp];
    if (nargs == 2) {
        int f = mech_find_marker(M, arg[1], alen[1]);
        if (f < 0) {
            snprintf(why, whylen, "%s: no marker named '%.*s'", fn, (int)alen[1], arg[1]);
            return NULL;
        }
        e = M->mk[f].ax[comp];
    }
    if (M->relative && J->tree) return mech_rel_reaction(M, j, fn[0] == 'T', comp, e, why, whylen);
    const char *sum = NULL;
    for (int k = 0; k < J->nc; k++) {
        const char **gk = fn[0] == 'F' ? J->fg[k] : J->mg[k];
        if (!gk[0]) continue;
        const char *term = mech_fmt(M, "lambda(%d)*(%s*%s + %s*%s + %s*%s)", J->c0 + k + 1, gk[0], e[0], gk[1], e[1],
                                    gk[2], e[2]);
        sum = sum ? mech_fmt(M, "%s + %s", sum, term) : term;
    }
    return sum ? mech_fmt(M, "-(%s)", sum) : "0";
}

/* SLIP(joint): the slip angle alpha of a rolling wheel's tire (wheel.c writes it as the variable
 * _wheel_<joint>_alpha; the joints' names and values are all known before any is built) */
static const char *slip(mech *M, int nargs, const char **arg, const size_t *alen, char *why, size_t whylen)
{
    if (nargs != 1) {
        snprintf(why, whylen, "SLIP takes the name of a rolling wheel joint with a tire");
        return NULL;
    }
    int j = mech_find_joint(M, arg[0], alen[0]);
    if (j < 0) {
        snprintf(why, whylen, "SLIP: no joint named '%.*s'", (int)alen[0], arg[0]);
        return NULL;
    }
    const joint *J = &M->jt[j];
    if (strcmp(J->type, "rolling_wheel")) {
        snprintf(why, whylen, "SLIP: joint '%s' is a %s, not a rolling wheel (SLIP is the slip angle of a rolling wheel's tire)",
                 J->name, J->type);
        return NULL;
    }
    if (!mech_get(M, J->val, "tire")) {
        snprintf(why, whylen, "SLIP: rolling wheel '%s' has no tire (it rolls without slip: give it a 'tire')", J->name);
        return NULL;
    }
    return mech_fmt(M, "_wheel_%s_alpha", J->name);
}

const char *mech_measure(mech *M, const char *fn, int nargs, const char **arg, const size_t *alen, char *why,
                         size_t whylen)
{
    if (!strcmp(fn, "JQ") || !strcmp(fn, "JV")) {
        if (nargs != 1 && nargs != 2) {
            snprintf(why, whylen, "%s takes a joint name and optionally the number of the coordinate", fn);
            return NULL;
        }
        int j = mech_find_joint(M, arg[0], alen[0]);
        if (j < 0) {
            snprintf(why, whylen, "%s: no joint named '%.*s'", fn, (int)alen[0], arg[0]);
            return NULL;
        }
        int k = 1;
        if (nargs == 2) {
            char buf[8];
            size_t n = alen[1] < sizeof buf ? alen[1] : sizeof buf - 1;
            memcpy(buf, arg[1], n);
            buf[n] = '\0';
            if (alen[1] != 1 || buf[0] < '1' || buf[0] > '4') {
                snprintf(why, whylen, "%s(%s, k): k must be 1, 2, 3 or 4 (the joint's k-th coordinate)", fn, M->jt[j].name);
                return NULL;
            }
            k = buf[0] - '0';
        }
        const char *q = k == 1 ? mech_joint_coord(M, j, why, whylen) : mech_joint_coord_k(M, j, k, why, whylen);
        if (!q) return NULL;
        return fn[1] == 'Q' ? q : mech_fmt(M, "der(%s)", q);
    }
    if ((fn[0] == 'F' || fn[0] == 'T') && fn[2] == '\0') return reaction(M, fn, nargs, arg, alen, why, whylen);
    if (!strcmp(fn, "SLIP")) return slip(M, nargs, arg, alen, why, whylen);
    int mi[3] = {-1, -1, -1};
    if (nargs < 1 || nargs > 3) {
        snprintf(why, whylen, "%s takes 1 to 3 marker names", fn);
        return NULL;
    }
    for (int a = 0; a < nargs; a++) {
        mi[a] = mech_find_marker(M, arg[a], alen[a]);
        if (mi[a] < 0) {
            snprintf(why, whylen, "%s: no marker named '%.*s'", fn, (int)alen[a], arg[a]);
            return NULL;
        }
    }
    char *d[3];
    char *e[3][3]; /* axes of the frame marker (global when absent) */
    static char *gx[3][3] = {{"1", "0", "0"}, {"0", "1", "0"}, {"0", "0", "1"}};
    for (int a = 0; a < 3; a++)
        for (int k = 0; k < 3; k++) e[a][k] = mi[2] >= 0 ? M->mk[mi[2]].ax[a][k] : gx[a][k];
    int comp = fn[1] == 'X' ? 0 : fn[1] == 'Y' ? 1 : fn[1] == 'Z' ? 2 : -1;
    if (fn[0] == 'D') {
        mech_dvec(M, mi[0], mi[1], d);
        if (fn[1] == 'M') {
            if (nargs > 2) {
                snprintf(why, whylen, "DM takes 1 or 2 marker names");
                return NULL;
            }
            return mech_fmt(M, "sqrt(%s)", mech_dot3(M, d, d));
        }
        return mech_dot3(M, d, e[comp]);
    }
    if (fn[0] == 'V') {
        char *const *p0 = mech_mk_p(M, mi[0]), *const *p1 = mi[1] >= 0 ? mech_mk_p(M, mi[1]) : NULL;
        for (int k = 0; k < 3; k++) {
            char *pk = p1 ? mech_fmt(M, "(%s - %s)", p0[k], p1[k]) : p0[k];
            d[k] = mech_fmt(M, "der(%s)", pk);
        }
        return mech_dot3(M, d, e[comp]);
    }
    if (fn[0] == 'W') {
        body *Bi = &M->b[M->mk[mi[0]].body];
        for (int k = 0; k < 3; k++)
            d[k] = mi[1] >= 0 ? mech_fmt(M, "(%s - %s)", Bi->w[k], M->b[M->mk[mi[1]].body].w[k]) : Bi->w[k];
        return mech_dot3(M, d, e[comp]);
    }
    /* A: small-angle rotation of marker i relative to marker j (ground when absent) about j's axes */
    if (nargs > 2) {
        snprintf(why, whylen, "%s takes 1 or 2 marker names", fn);
        return NULL;
    }
    marker *I = &M->mk[mi[0]];
    char *const *J[3] = {e[0], e[1], e[2]};
    if (mi[1] >= 0)
        for (int a = 0; a < 3; a++) J[a] = M->mk[mi[1]].ax[a];
    if (M->planar) {
        if (comp != 2) {
            snprintf(why, whylen, "%s is zero in a planar mechanism (use AZ)", fn);
            return NULL;
        }
        return mi[1] >= 0 ? mech_fmt(M, "(%s - %s)", I->phi, M->mk[mi[1]].phi) : mech_fmt(M, "(%s)", I->phi);
    }
    int a1 = (comp + 1) % 3, a2 = (comp + 2) % 3;
    return mech_fmt(M, "0.5*(%s - %s)", mech_dot3(M, I->ax[a1], J[a2]), mech_dot3(M, I->ax[a2], J[a1]));
}

/* Replace measure calls (DX(i, j, k), JQ(joint), ...) and the locals by their expressions. */
int mech_subst(mech *M, const char *text, const yaml_node_t *at, const local *loc, int nloc, const char **out)
{
    static const char *fns[] = {"DX", "DY", "DZ", "DM", "AX", "AY", "AZ", "VX", "VY", "VZ", "WX", "WY", "WZ",
                                "JQ", "JV", "FX", "FY", "FZ", "TX", "TY", "TZ", "SLIP", NULL};
    size_t cap = strlen(text) * 2 + 64, n = 0;
    char *o = mbl_malloc(cap);
    if (!o || !mech_keep(M, o)) return mech_oom(M);
    const char *s = text;
    while (*s) {
        const char *piece = s;
        size_t plen = 1;
        const char *rep = NULL;
        if (mech_is_id0(*s) && (s == text || !mech_is_id(s[-1]))) {
            const char *e = s;
            while (mech_is_id(*e)) e++;
            plen = (size_t)(e - s);
            const char *c = e;
            while (*c == ' ' || *c == '\t') c++;
            int fn = -1;
            for (int f = 0; fns[f]; f++)
                if (strlen(fns[f]) == plen && !strncmp(fns[f], s, plen)) fn = f;
            if (fn >= 0 && *c == '(') {
                const char *args[4];
                size_t alen[4];
                int na = 0;
                const char *q = c + 1;
                for (;;) {
                    while (*q == ' ' || *q == '\t') q++;
                    const char *a0 = q;
                    while (mech_is_id(*q)) q++;
                    if (q == a0 || na == 4) return err_at(M, at, "%s(...) takes names of markers or joints", fns[fn]);
                    args[na] = a0;
                    alen[na++] = (size_t)(q - a0);
                    while (*q == ' ' || *q == '\t') q++;
                    if (*q == ',') {
                        q++;
                        continue;
                    }
                    if (*q == ')') break;
                    return err_at(M, at, "%s(...) takes names of markers or joints separated by commas", fns[fn]);
                }
                char why[300] = "";
                rep = mech_measure(M, fns[fn], na, args, alen, why, sizeof why);
                if (!rep) return M->oom ? mech_oom(M) : err_at(M, at, "%s (in '%s')", why, text);
                plen = (size_t)(q + 1 - s);
            } else {
                for (int l = 0; l < nloc; l++)
                    if (strlen(loc[l].name) == plen && !strncmp(loc[l].name, s, plen)) rep = loc[l].text;
            }
        }
        const char *add = rep ? rep : piece;
        size_t alen2 = rep ? strlen(rep) + 2 : plen;
        if (n + alen2 + 1 > cap) {
            size_t nc = 2 * (n + alen2 + 1);
            char *no = mbl_malloc(nc);
            if (!no || !mech_keep(M, no)) return mech_oom(M);
            memcpy(no, o, n);
            o = no;
            cap = nc;
        }
        if (rep) {
            o[n++] = '(';
            memcpy(o + n, add, alen2 - 2);
            n += alen2 - 2;
            o[n++] = ')';
        } else {
            memcpy(o + n, add, alen2);
            n += alen2;
        }
        s += plen;
    }
    o[n] = '\0';
    *out = o;
    return M->oom ? mech_oom(M) : 0;
}
