/* Force elements (gravity, translational and torsion springs, bushings, applied forces and torques)
 * as generalized forces by virtual power, the kinetic and potential energies of the bodies. */
#include "mech/mech_internal.h"
#include "model/pmech_num.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- force elements ---------------------------------------------------------------------------- */

static void add_term(mech *M, char **acc, const char *term)
{
    *acc = *acc ? mech_fmt(M, "%s + %s", *acc, term) : mech_fmt(M, "%s", term);
}

/* force f (global, texts) on marker m's body at marker m's point, and torque tq (global) */
static void apply(mech *M, int m, char *const f[3], char *const tq[3], int sign)
{
    body *B = &M->b[M->mk[m].body];
    if (B->kind == KIND_GROUND) return;
    const char *sg = sign > 0 ? "" : "-";
    if (f) {
        char *rr[3];
        char *const *p = mech_mk_p(M, m);
        for (int k = 0; k < 3; k++) {
            add_term(M, &B->F[k], mech_fmt(M, "%s%s", sg, f[k]));
            rr[k] = mech_fmt(M, "(%s - %s)", p[k], B->r[k]);
        }
        if (B->kind != KIND_POINT)
            for (int k = 0; k < 3; k++) {
                int a = (k + 1) % 3, b = (k + 2) % 3;
                if (M->planar && k < 2) continue;
                add_term(M, &B->N[k], mech_fmt(M, "%s(%s*%s - %s*%s)", sg, rr[a], f[b], rr[b], f[a]));
            }
    }
    if (tq && B->kind != KIND_POINT)
        for (int k = 0; k < 3; k++) {
            if (M->planar && k < 2) continue;
            add_term(M, &B->N[k], mech_fmt(M, "%s%s", sg, tq[k]));
        }
    if (B->flex || B->qf3) mech_flex_apply(M, m, f, tq, sg);
}

/* the reaction -f, -tq of a force element on body BJ at marker mi's point (refused on a flexible
 * body: mech_flex_refuse names the element) */
static int react(mech *M, int mi, body *BJ, char *const f[3], char *const tq[3], const yaml_node_t *v, const char *what)
{
    if (BJ->flex || BJ->qf3) return mech_flex_refuse(M, BJ, v, what);
    if (BJ->kind != KIND_GROUND) {
        char *const *p = mech_mk_p(M, mi);
        for (int k = 0; k < 3; k++) add_term(M, &BJ->F[k], mech_fmt(M, "-%s", f[k]));
        if (BJ->kind != KIND_POINT)
            for (int k = 0; k < 3; k++) {
                if (M->planar && k < 2) continue;
                int a = (k + 1) % 3, b = (k + 2) % 3;
                add_term(M, &BJ->N[k], mech_fmt(M, "-((%s - %s)*%s - (%s - %s)*%s) - %s", p[a], BJ->r[a], f[b],
                                                p[b], BJ->r[b], f[a], tq[k]));
            }
    }
    return M->oom ? mech_oom(M) : 0;
}

static int vec6(mech *M, const yaml_node_t *n, const char *what, const char *out[36])
{
    for (int k = 0; k < 36; k++) out[k] = "0";
    if (!n) return 0;
    if (n->type != YAML_SEQUENCE_NODE) return err_at(M, n, "%s must be a list of 6 numbers or 6 rows of 6", what);
    int cnt = (int)(n->data.sequence.items.top - n->data.sequence.items.start);
    if (cnt != 6) return err_at(M, n, "%s must be a list of 6 numbers or 6 rows of 6", what);
    yaml_node_t *first = mech_node(M->doc, n->data.sequence.items.start[0]);
    if (first->type == YAML_SEQUENCE_NODE) {
        for (int r = 0; r < 6; r++) {
            const char *row[6];
            int rc = mech_vec_of(M, mech_node(M->doc, n->data.sequence.items.start[r]), 6, what, row);
            if (rc) return rc;
            for (int c = 0; c < 6; c++) out[6 * r + c] = row[c];
        }
        return 0;
    }
    const char *dg[6];
    int rc = mech_vec_of(M, n, 6, what, dg);
    for (int k = 0; k < 6 && !rc; k++) out[7 * k] = dg[k];
    return rc;
}

/* A bushing's rotational deflection (AX AY AZ) is a small-angle measure, exact to first order: a
 * bushing whose stiffness uses it and whose markers are rotated relative to each other by more
 * than MBL_MECH_BUSHING_SMALL_ANGLE at the operating point gets a note there (the torque is off by
 * about angle^2 / 6 of itself). The check is made at the point, not at the file's configuration:
 * the mechanism emits the rotation angle, atan2(|(AX, AY, AZ)|, (tr(R_j^T R_i) - 1) / 2), as a
 * validity item of the canonical DAE (mbl_src.validity), which the operating point evaluates once
 * it is solved (src/opoint, model_validity_notes). Before (issue 30), markers rotated more than
 * 1e-6 rad in the file's guess were refused, although the solved point was aligned. */
static int bushing_validity(mech *M, const char *what, int mi, int mj, const char *const q[6], const char *const K[36],
                            int line, int col)
{
    int rot = 0;
    for (int r = 0; r < 6; r++)
        for (int c = 3; c < 6; c++) rot |= strcmp(K[6 * r + c], "0") != 0;
    if (!rot) return 0; /* no stiffness on AX AY AZ: any rotation is exact */
    marker *I = &M->mk[mi], *J = &M->mk[mj];
    const char *tr = mech_fmt(M, "(%s + %s + %s)", mech_dot3(M, I->ax[0], J->ax[0]), mech_dot3(M, I->ax[1], J->ax[1]),
                              mech_dot3(M, I->ax[2], J->ax[2]));
    const char *ang = mech_fmt(M, "atan2(sqrt(%s^2 + %s^2 + %s^2), (%s - 1)/2)", q[3], q[4], q[5], tr);
    char lim[200];
    snprintf(lim, sizeof lim,
             "%.3g rad, the small-angle range of its deflections AX AY AZ (its torque is off by about angle^2/6 of "
             "itself; MBL_MECH_BUSHING_SMALL_ANGLE)",
             MBL_MECH_BUSHING_SMALL_ANGLE);
    return mech_validity(M,
                         mech_fmt(M, "%s (bushing): markers '%s' and '%s' are rotated relative to each other by (rad)", what,
                                  I->name, J->name),
                         ang, lim, line, col);
}

/* gravity: the weight of every body, in the potential energy (or the structured terms') */
static int read_gravity(mech *M, const yaml_node_t *v, const char *what, int line, int col)
{
    int rc;
    static const char *ok[] = {"type", "g", NULL};
    if ((rc = mech_check_keys(M, v, ok, what))) return rc;
    const char *g[3] = {"0", "0", "0"};
    yaml_node_t *gn = mech_get(M, v, "g");
    if (!gn) return err_at(M, v, "%s: missing 'g' (the gravity vector)", what);
    if ((rc = mech_vec_of(M, gn, M->planar ? 2 : 3, "g", g))) return rc;
    for (int k = 0; k < 3; k++) /* kept for the reactions of tree joints (relative_measures.c) */
        M->grav[k] = M->grav[k] ? mech_fmt(M, "%s + (%s)", M->grav[k], g[k]) : mech_fmt(M, "(%s)", g[k]);
    /* the numeric term's bodies (pmech.c) take this weight when g is a function of the parameters */
    int gnum = M->pnum ? mech_pm_gravity(M, g, line, col) : 0;
    if (gnum < 0) return gnum;
    sbuf pb = {0};
    mech_sb_add(M, &pb, "", M->src->potential_energy.text ? M->src->potential_energy.text : "0");
    for (int b = 0; b < M->nb; b++) {
        body *B = &M->b[b];
        if (B->kind == KIND_GROUND) continue;
        if (B->flex) {
            if ((rc = mech_flex_gravity(M, B, g, gn))) {
                mech_sb_done(M, &pb); /* the buffer goes to the arena */
                return rc;
            }
            continue;
        }
        /* a rigid body of a relative-coordinate tree: its weight joins its d'Alembert load
         * (mech_rel_forces), so that no energy sums over the whole tree; a planar body of the
         * tree's structured term (B->rt): its weight is the term's */
        if (M->relative && ((B->kind == KIND_SPATIAL && M->torder && M->torder[M->nb + b] >= 0) || B->rt)) continue;
        if (gnum && B->pn) continue;
        for (int k = 0; k < 3; k++) {
            if (!strcmp(g[k], "0")) continue;
            const char *a[3] = {B->A[3 * k], B->A[3 * k + 1], B->A[3 * k + 2]};
            const char *rc_k = mech_affine(M, B->r[k], 3, a, B->cm, "+++");
            mech_sb_add(M, &pb, " - ", mech_fmt(M, "(%s)*(%s)*(%s)", B->mass, g[k], rc_k));
        }
    }
    const char *pe = mech_sb_done(M, &pb);
    char *npe = mech_dup_s(pe);
    if (!npe) return mech_oom(M);
    mbl_free(M->src->potential_energy.text);
    M->src->potential_energy.text = npe;
    M->src->potential_energy.line = line;
    M->src->potential_energy.col = col;
    return 0;
}

/* A translational spring's markers must not meet where its free length l0 is not 0 (its force has
 * no direction there): a singular item, its length L over l0 below MBL_SPRING_MEET_TOL at the
 * operating point or along a simulation is an error (the numeric planar springs: pmech_num.c) */
static int spring_meet_item(mech *M, const char *name, int mi, int mj, const char *L, const char *l0, int line,
                            int col)
{
    const char *what = mech_fmt(M, "force '%s' (spring): its markers '%s' and '%s' meet, length / free length", name,
                                M->mk[mi].name, M->mk[mj].name);
    mbl_src_list *l = &M->src->singular;
    int rc = mech_push(M, l, what, mech_fmt(M, "%s/(%s)", L, l0), line, col);
    if (rc) return rc;
    l->items[l->n - 1].key2 = mech_dup_s(mech_fmt(M, "%g (its force has no direction where they meet: start them "
                                                     "apart in the model's configuration, or give the spring free "
                                                     "length 0)",
                                                  MBL_SPRING_MEET_TOL));
    return l->items[l->n - 1].key2 ? 0 : mech_oom(M);
}

/* a translational spring (or one given by its force) between two markers, or a torsion spring */
static int read_spring(mech *M, const char *name, const yaml_node_t *v, const char *t, const char *what, int line,
                       int col)
{
    int rc, mi = -1, mj = -1;
    int tor = t[0] == 't';
    static const char *oks[] = {"type", "i", "j", "stiffness", "damping", "length", "preload", "force", NULL};
    static const char *okt[] = {"type", "i", "j", "stiffness", "damping", "angle", "preload", "torque", NULL};
    if ((rc = mech_check_keys(M, v, tor ? okt : oks, what))) return rc;
    if ((rc = mech_marker_ref(M, v, "i", what, 1, &mi)) || (rc = mech_marker_ref(M, v, "j", what, 1, &mj))) return rc;
    if (!tor && M->pnum && !mech_get(M, v, "force")) { /* evaluated numerically by the model (pmech.c) */
        const char *tk[4] = {"0", "0", "0", "0"};
        static const char *key[4] = {"stiffness", "damping", "length", "preload"};
        static const char *wk[4] = {"stiffness", "damping", "free length", "preload"};
        yaml_node_t *n;
        for (int k = 0; k < 4; k++)
            if ((n = mech_get(M, v, key[k])) && (rc = mech_text_of(M, n, wk[k], &tk[k]))) return rc;
        int got = mech_pm_spring(M, name, mi, mj, tk, line, col);
        if (got) return got < 0 ? got : 0;
    }
    const char *L = mech_fmt(M, "_L_%s", name);
    char *d[3];
    mech_dvec(M, mi, mj, d);
    marker *I = &M->mk[mi], *J = &M->mk[mj];
    if (tor)
        rc = mech_add_var(M, L, M->planar ? mech_fmt(M, "%s - %s", I->phi, J->phi)
                                     : mech_twist_angle(M, mi, mj),
                          line, col);
    else
        rc = mech_add_var(M, L, mech_fmt(M, "sqrt(%s)", mech_dot3(M, d, d)), line, col);
    if (rc) return rc;
    const char *ftext = NULL;
    yaml_node_t *fe = mech_get(M, v, tor ? "torque" : "force");
    if (fe) {
        local loc[3] = {{tor ? "angle" : "length", L}, {"rate", mech_fmt(M, "der(%s)", L)}, {NULL, NULL}};
        if ((rc = mech_text_of(M, fe, what, &ftext)) || (rc = mech_subst(M, ftext, fe, loc, 2, &ftext))) return rc;
        if (mech_get(M, v, "stiffness") || mech_get(M, v, "damping"))
            return err_at(M, fe, "%s: give either '%s' or stiffness/damping", what, tor ? "torque" : "force");
    } else {
        const char *k = "0", *c = "0", *l0 = "0", *f0 = "0";
        yaml_node_t *n;
        if ((n = mech_get(M, v, "stiffness")) && (rc = mech_text_of(M, n, "stiffness", &k))) return rc;
        if ((n = mech_get(M, v, "damping")) && (rc = mech_text_of(M, n, "damping", &c))) return rc;
        if ((n = mech_get(M, v, tor ? "angle" : "length")) && (rc = mech_text_of(M, n, "free length", &l0))) return rc;
        if ((n = mech_get(M, v, "preload")) && (rc = mech_text_of(M, n, "preload", &f0))) return rc;
        /* the actuator (preload) and the coefficients may use inputs and measures */
        if ((rc = mech_subst(M, k, v, NULL, 0, &k)) || (rc = mech_subst(M, c, v, NULL, 0, &c)) ||
            (rc = mech_subst(M, f0, v, NULL, 0, &f0)))
            return rc;
        ftext = mech_fmt(M, "-(%s)*(%s - (%s)) - (%s)*der(%s) + (%s)", k, L, l0, c, L, f0);
        if (!tor && strcmp(l0, "0") && (rc = spring_meet_item(M, name, mi, mj, L, l0, line, col))) return rc;
    }
    const char *fn = mech_fmt(M, "_f_%s", name);
    if (fe) mech_pos_of(fe, &line, &col); /* errors in the user's expression point into it */
    if ((rc = mech_add_var_of(M, fn, ftext, line, col, what))) return rc;
    char *f[3];
    if (tor) {
        /* torque about J's z axis on I, reaction on J */
        for (int k = 0; k < 3; k++) f[k] = mech_fmt(M, "%s*%s", fn, J->ax[2][k]);
        apply(M, mi, NULL, f, 1);
        apply(M, mj, NULL, f, -1);
    } else {
        /* positive force pushes the markers apart along the line from J to I */
        for (int k = 0; k < 3; k++) f[k] = mech_fmt(M, "%s*%s/%s", fn, d[k], L);
        apply(M, mi, f, NULL, 1);
        apply(M, mj, f, NULL, -1);
    }
    return M->oom ? mech_oom(M) : 0;
}

/* a bushing: six deflections in marker j's frame, a stiffness and a damping matrix, a preload */
static int read_bushing(mech *M, const char *name, const yaml_node_t *v, const yaml_node_t *ty,
                        const char *what, int line, int col)
{
    int rc, mi = -1, mj = -1;
    static const char *ok[] = {"type", "i", "j", "stiffness", "damping", "preload", NULL};
    if ((rc = mech_check_keys(M, v, ok, what))) return rc;
    if (M->planar) return err_at(M, ty, "%s: a bushing needs a spatial mechanism (use springs and torsions)", what);
    if ((rc = mech_marker_ref(M, v, "i", what, 1, &mi)) || (rc = mech_marker_ref(M, v, "j", what, 1, &mj))) return rc;
    const char *K[36], *C[36];
    if ((rc = vec6(M, mech_get(M, v, "stiffness"), "stiffness", K)) || (rc = vec6(M, mech_get(M, v, "damping"), "damping", C)))
        return rc;
    const char *f0[6] = {"0", "0", "0", "0", "0", "0"};
    yaml_node_t *pn = mech_get(M, v, "preload");
    if (pn && (rc = mech_vec_of(M, pn, 6, "preload", f0))) return rc;
    /* deflections and their rates in J's frame */
    static const char *mn[6] = {"DX", "DY", "DZ", "AX", "AY", "AZ"};
    const char *args[3] = {M->mk[mi].name, M->mk[mj].name, M->mk[mj].name};
    size_t al[3] = {strlen(args[0]), strlen(args[1]), strlen(args[2])};
    const char *q[6], *qd[6];
    char why[300];
    for (int k = 0; k < 6; k++) {
        const char *m = mech_measure(M, mn[k], k < 3 ? 3 : 2, args, al, why, sizeof why);
        if (!m) return err_at(M, v, "%s: %s", what, why);
        q[k] = mech_fmt(M, "_q_%s_%d", name, k + 1);
        if ((rc = mech_add_var(M, q[k], m, line, col))) return rc;
    }
    if ((rc = bushing_validity(M, what, mi, mj, q, K, line, col))) return rc;
    for (int k = 0; k < 3; k++) qd[k] = mech_fmt(M, "der(%s)", q[k]);
    {
        const char *wr = mech_measure(M, "WX", 3, args, al, why, sizeof why);
        const char *wy = mech_measure(M, "WY", 3, args, al, why, sizeof why);
        const char *wz = mech_measure(M, "WZ", 3, args, al, why, sizeof why);
        if (!wr || !wy || !wz) return mech_oom(M);
        qd[3] = wr;
        qd[4] = wy;
        qd[5] = wz;
    }
    const char *fl[6];
    for (int r = 0; r < 6; r++) {
        const char *s = mech_fmt(M, "(%s)", f0[r]);
        for (int c = 0; c < 6; c++) {
            if (strcmp(K[6 * r + c], "0")) s = mech_fmt(M, "%s - (%s)*%s", s, K[6 * r + c], q[c]);
            if (strcmp(C[6 * r + c], "0")) s = mech_fmt(M, "%s - (%s)*(%s)", s, C[6 * r + c], qd[c]);
        }
        fl[r] = mech_fmt(M, "_f_%s_%d", name, r + 1);
        if ((rc = mech_add_var_of(M, fl[r], s, line, col, what))) return rc;
    }
    char *f[3], *tq[3];
    marker *J = &M->mk[mj];
    for (int k = 0; k < 3; k++) {
        f[k] = mech_fmt(M, "(%s*%s + %s*%s + %s*%s)", fl[0], J->ax[0][k], fl[1], J->ax[1][k], fl[2], J->ax[2][k]);
        tq[k] = mech_fmt(M, "(%s*%s + %s*%s + %s*%s)", fl[3], J->ax[0][k], fl[4], J->ax[1][k], fl[5], J->ax[2][k]);
    }
    apply(M, mi, f, tq, 1);
    /* reaction on J's body at the same point (the point of marker i) */
    return react(M, mi, &M->b[J->body], f, tq, v, what);
}

/* an applied force and torque on a marker (global or in a frame marker's axes), its reaction */
static int read_applied(mech *M, const char *name, const yaml_node_t *v, const char *what, int line, int col)
{
    int rc, mi = -1;
    static const char *ok[] = {"type", "i", "frame", "reaction", "force", "torque", NULL};
    if ((rc = mech_check_keys(M, v, ok, what))) return rc;
    int fr = -1, re = -1;
    if ((rc = mech_marker_ref(M, v, "i", what, 1, &mi)) || (rc = mech_marker_ref(M, v, "frame", what, 0, &fr)) ||
        (rc = mech_marker_ref(M, v, "reaction", what, 0, &re)))
        return rc;
    int dim = M->planar ? 2 : 3;
    const char *fc[3] = {"0", "0", "0"}, *tc[3] = {"0", "0", "0"};
    yaml_node_t *fn = mech_get(M, v, "force"), *tn = mech_get(M, v, "torque");
    if (!fn && !tn) return err_at(M, v, "%s: give 'force' and/or 'torque'", what);
    if (fn && (rc = mech_vec_of(M, fn, dim, "force", fc))) return rc;
    if (tn) {
        if (M->planar) {
            if ((rc = mech_text_of(M, tn, "torque", &tc[2]))) return rc;
        } else if ((rc = mech_vec_of(M, tn, 3, "torque", tc)))
            return rc;
    }
    for (int k = 0; k < 3; k++) {
        if ((rc = mech_subst(M, fc[k], fn, NULL, 0, &fc[k]))) return rc;
        if ((rc = mech_subst(M, tc[k], tn, NULL, 0, &tc[k]))) return rc;
    }
    char *f[3], *tq[3];
    for (int k = 0; k < 3; k++) {
        if (fr >= 0) {
            marker *F = &M->mk[fr];
            f[k] = mech_fmt(M, "((%s)*%s + (%s)*%s + (%s)*%s)", fc[0], F->ax[0][k], fc[1], F->ax[1][k], fc[2], F->ax[2][k]);
            tq[k] = mech_fmt(M, "((%s)*%s + (%s)*%s + (%s)*%s)", tc[0], F->ax[0][k], tc[1], F->ax[1][k], tc[2], F->ax[2][k]);
        } else {
            f[k] = mech_fmt(M, "(%s)", fc[k]);
            tq[k] = mech_fmt(M, "(%s)", tc[k]);
        }
    }
    for (int k = 0; k < 3; k++) {
        const char *nf = mech_fmt(M, "_f_%s_%d", name, k + 1), *nt = mech_fmt(M, "_t_%s_%d", name, k + 1);
        if ((rc = mech_add_var_of(M, nf, f[k], line, col, what)) || (rc = mech_add_var_of(M, nt, tq[k], line, col, what)))
            return rc;
        f[k] = (char *)nf;
        tq[k] = (char *)nt;
    }
    if (re >= 0 && M->relative && mech_rel_joint_load(M, mi, re, fr, fc, tc, f, tq)) return M->oom ? mech_oom(M) : 0;
    apply(M, mi, f, tq, 1);
    if (re >= 0) return react(M, mi, &M->b[M->mk[re].body], f, tq, v, what);
    return M->oom ? mech_oom(M) : 0;
}

int mech_read_force(mech *M, const yaml_node_t *key, const yaml_node_t *v)
{
    const char *name = mech_sc(key);
    char what[200];
    mech_snprintf(what, sizeof what, "force '%s'", name);
    int rc = mech_want_map(M, v, what);
    if (rc) return rc;
    yaml_node_t *ty = mech_get(M, v, "type");
    if (!mech_is_scalar(ty)) return err_at(M, ty ? ty : v, "%s: missing 'type' (gravity, spring, torsion, bushing, force)", what);
    const char *t = mech_sc(ty);
    int line, col;
    mech_pos_of(key, &line, &col);
    if (!strcmp(t, "gravity")) return read_gravity(M, v, what, line, col);
    if (!strcmp(t, "spring") || !strcmp(t, "torsion")) return read_spring(M, name, v, t, what, line, col);
    if (!strcmp(t, "bushing")) return read_bushing(M, name, v, ty, what, line, col);
    if (!strcmp(t, "force")) return read_applied(M, name, v, what, line, col);
    return err_at(M, ty, "%s: unknown type '%s' (expected gravity, spring, torsion, bushing, force)", what, t);
}

/* ---- kinetic energy and generalized forces ----------------------------------------------------- */

int mech_energies_and_forces(mech *M, int line, int col)
{
    sbuf Tb_all = {0};
    int rc = 0;
    for (int b = 0; b < M->nb && !rc; b++) {
        body *B = &M->b[b];
        if (B->kind == KIND_GROUND) continue;
        if (B->nat) { /* natural coordinates: the constant mass matrix, forces on the points */
            const char *tn = mech_fmt(M, "_T_%s", B->name), *Tn = NULL;
            rc = mech_natural_energy(M, B, &Tn);
            if (!rc) rc = mech_add_var(M, tn, Tn, B->line, B->col);
            mech_sb_add(M, &Tb_all, Tb_all.n ? " + " : "", tn);
            if (!rc) rc = mech_natural_forces(M, B);
            continue;
        }
        if (B->pn) goto forces; /* its inertia in the numeric term (pmech.c) */
        const char *vc[3];
        for (int k = 0; k < 3; k++) {
            const char *a[3] = {B->A[3 * k], B->A[3 * k + 1], B->A[3 * k + 2]};
            const char *rk = B->kind == KIND_POINT ? B->r[k] : mech_affine(M, B->r[k], 3, a, B->cm, "+++");
            vc[k] = !strcmp(rk, "0") ? NULL : mech_fmt(M, "der(%s)", rk); /* NULL: at rest (z in the plane) */
        }
        /* a rigid body of a relative-coordinate tree: its inertia enters as the d'Alembert loads of
         * the recursive kinematics (relative_forces.c, mech_rel_forces), not through T; a planar
         * body of the tree's structured term (B->rt): its inertia is the term's */
        if (M->relative && ((B->kind == KIND_SPATIAL && M->torder && M->torder[M->nb + b] >= 0) || B->rt)) continue;
        sbuf vs = {0};
        for (int k = 0; k < 3; k++)
            if (vc[k]) {
                mech_sb_add(M, &vs, vs.n ? " + (" : "(", vc[k]);
                mech_sb_add(M, &vs, ")^2", "");
            }
        const char *Tb = mech_fmt(M, "0.5*(%s)*(%s)", B->mass, mech_sb_done(M, &vs));
        if (B->kind == KIND_PLANAR) Tb = mech_fmt(M, "%s + 0.5*(%s)*der(%s)^2", Tb, B->I[2], B->th);
        if (B->kind == KIND_SPATIAL) {
            /* body-frame angular velocity w' = 2 G(e) der(e) */
            char **e = B->e;
            const char *d[4];
            for (int k = 0; k < 4; k++) d[k] = mech_fmt(M, "der(%s)", e[k]);
            const char *wb[3] = {
                mech_fmt(M, "_wb_%s_1", B->name), mech_fmt(M, "_wb_%s_2", B->name), mech_fmt(M, "_wb_%s_3", B->name)};
            const char *wt[3];
            mech_tx_body_rate(M, (const char *const *)e, d, wt);
            for (int k = 0; k < 3 && !rc; k++) rc = mech_add_var(M, wb[k], wt[k], B->line, B->col);
            /* I = [xx yy zz xy xz yz] */
            Tb = mech_fmt(M, "%s + 0.5*((%s)*%s^2 + (%s)*%s^2 + (%s)*%s^2 + 2*(%s)*%s*%s + 2*(%s)*%s*%s + 2*(%s)*%s*%s)", Tb,
                          B->I[0], wb[0], B->I[1], wb[1], B->I[2], wb[2], B->I[3], wb[0], wb[1], B->I[4], wb[0], wb[2],
                          B->I[5], wb[1], wb[2]);
        }
        const char *tn = mech_fmt(M, "_T_%s", B->name);
        if (!rc && !B->flex) rc = mech_add_var(M, tn, Tb, B->line, B->col); /* flexible: the structured term */
        if (!B->flex) mech_sb_add(M, &Tb_all, Tb_all.n ? " + " : "", tn);
        if (!rc && (B->flex || B->qf3)) rc = mech_flex_forces(M, B);
    forces:
        /* generalized forces (in joint coordinates: mech_rel_forces below) */
        if (M->relative) continue;
        int anyF = B->F[0] || B->F[1] || B->F[2], anyN = B->N[0] || B->N[1] || B->N[2];
        int dim = M->planar ? 2 : 3;
        if (anyF)
            for (int k = 0; k < dim && !rc; k++)
                if (B->F[k]) rc = mech_push(M, &M->src->forces, B->r[k], B->F[k], B->line, B->col);
        if (!anyN || B->kind == KIND_POINT) continue;
        if (B->kind == KIND_PLANAR) {
            if (B->N[2] && !rc) rc = mech_push(M, &M->src->forces, B->th, B->N[2], B->line, B->col);
            continue;
        }
        const char *N[3] = {"0", "0", "0"};
        for (int k = 0; k < 3 && !rc; k++) {
            N[k] = mech_fmt(M, "_N_%s_%d", B->name, k + 1);
            rc = mech_add_var(M, N[k], B->N[k] ? B->N[k] : "0", B->line, B->col);
        }
        if (rc) break;
        if (B->eul) { /* its angles' own (euler313.c) */
            rc = mech_e313_forces(M, B, N);
            continue;
        }
        char **e = B->e;
        const char *Q[4];
        mech_tx_euler_forces(M, (const char *const *)e, N, 0, Q);
        for (int k = 0; k < 4 && !rc; k++) rc = mech_push(M, &M->src->forces, e[k], Q[k], B->line, B->col);
    }
    if (!rc && M->relative) rc = mech_rel_forces(M);
    if (!rc && M->nnp) rc = mech_natural_flush(M);
    const char *T = mech_sb_done(M, &Tb_all);
    if (rc) return rc;
    if (M->oom) return mech_oom(M);
    M->src->kinetic_energy.text = mech_dup_s(T);
    if (!M->src->kinetic_energy.text) return mech_oom(M);
    M->src->kinetic_energy.line = M->src->kinetic_energy.key_line = line;
    M->src->kinetic_energy.col = M->src->kinetic_energy.key_col = col;
    return 0;
}
