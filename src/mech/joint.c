/* Joints (holonomic constraints written with the markers' generated variables), drivers and
 * couplers, and the check that constraint texts depend on no input or velocity. */
#include "mech/mech_internal.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

/* ---- joints ------------------------------------------------------------------------------------ */

int mech_marker_ref(mech *M, const yaml_node_t *map, const char *key, const char *what, int required, int *out)
{
    yaml_node_t *n = mech_get(M, map, key);
    *out = -1;
    if (!n) return required ? err_at(M, map, "%s: missing marker '%s'", what, key) : 0;
    if (!mech_is_scalar(n)) return err_at(M, n, "%s: '%s' must name a marker", what, key);
    const char *dot = strchr(mech_sc(n), '.');
    if (dot) {
        /* body.marker: the body must exist and own the marker */
        size_t bl = (size_t)(dot - mech_sc(n));
        int b = mech_ns_find(&M->hb, mech_sc(n), bl);
        if (b < 0) return err_at(M, n, "%s: no body named '%.*s'", what, (int)bl, mech_sc(n));
        int m = mech_find_marker(M, dot + 1, strlen(dot + 1));
        if (m < 0) return err_at(M, n, "%s: body '%s' has no marker '%s'", what, M->b[b].name, dot + 1);
        if (M->mk[m].body != b)
            return err_at(M, n, "%s: marker '%s' is on body '%s', not on '%s'", what, dot + 1, M->b[M->mk[m].body].name,
                          M->b[b].name);
        *out = m;
        return 0;
    }
    int m = mech_find_marker(M, mech_sc(n), n->data.scalar.length);
    if (m < 0) {
        /* a body name instead of a marker is a common slip: say so */
        if (mech_find_body(M, mech_sc(n)) >= 0)
            return err_at(M, n, "%s: '%s' is a body, not a marker (joints connect markers)", what, mech_sc(n));
        return err_at(M, n, "%s: no marker named '%s'", what, mech_sc(n));
    }
    *out = m;
    return 0;
}

int mech_con(mech *M, const char *jname, const char *text, int line, int col)
{
    return mech_push(M, &M->src->constraints, jname, text, line, col);
}

/* Remember a user text that goes into a constraint (a driver's motion, a coupler's ratios and
 * offset, a distance): check_con_texts refuses inputs and velocities in it, in the element's words. */
int mech_con_text(mech *M, const char *elem, const char *part, const yaml_node_t *at, const char *text, int driver)
{
    if (M->ndrv == M->cdrv) {
        int cap = M->cdrv ? 2 * M->cdrv : 16;
        struct drv *d = mbl_realloc_array(M->drv, (size_t)cap, sizeof *d);
        if (!d) return mech_oom(M);
        M->drv = d;
        M->cdrv = cap;
    }
    M->drv[M->ndrv++] = (struct drv){elem, part, at, text, driver};
    return M->oom ? mech_oom(M) : 0;
}

static void set3(const char *dst[3], const char *a, const char *b, const char *c)
{
    dst[0] = a, dst[1] = b, dst[2] = c;
}

static int joint_constraints(mech *M, joint *J, const yaml_node_t *val)
{
    marker *I = &M->mk[J->i], *K = &M->mk[J->j];
    const char *t = J->type;
    if (!strcmp(t, "rolling_wheel")) return mech_wheel_joint(M, J, val);
    const char *nm = mech_fmt(M, "joint %s (%s)", J->name, t);
    int line = J->line, col = J->col, rc = 0, done = 0;
    if (M->planar && (rc = mech_pm_joint(M, J, nm, &done))) return rc;
    if (done) return 0; /* evaluated numerically by the model (pmech.c) */
    char *d[3];
    mech_dvec(M, J->i, J->j, d);
    const char *eq[6];
    int ne = 0;
    if (!strcmp(t, "distance")) {
        yaml_node_t *dn = mech_get(M, val, "distance");
        const char *L = NULL;
        if (!dn) return err_at(M, val, "joint '%s': missing 'distance'", J->name);
        rc = mech_text_of(M, dn, "distance", &L);
        if (!rc) rc = mech_con_text(M, mech_fmt(M, "joint '%s'", J->name), "distance", dn, L, 0);
        if (rc) return rc;
        set3(J->fg[ne], mech_fmt(M, "2*%s", d[0]), mech_fmt(M, "2*%s", d[1]), mech_fmt(M, "2*%s", d[2]));
        eq[ne++] = mech_fmt(M, "%s - (%s)^2", mech_dot3(M, d, d), L);
    } else if (M->planar) {
        const char *ang = mech_fmt(M, "%s - %s", I->phi, K->phi);
        int pt = M->b[I->body].kind == KIND_POINT || M->b[K->body].kind == KIND_POINT;
        if (pt && (!strcmp(t, "prismatic") || !strcmp(t, "fixed") || !strcmp(t, "orientation")))
            return err_at(M, mech_get(M, val, "type"), "joint '%s': a %s joint constrains orientation, which a point mass has not",
                          J->name, t);
        if (!strcmp(t, "revolute")) {
            set3(J->fg[ne], "1", "0", "0"), eq[ne++] = d[0];
            set3(J->fg[ne], "0", "1", "0"), eq[ne++] = d[1];
        } else if (!strcmp(t, "prismatic")) {
            set3(J->fg[ne], K->ax[1][0], K->ax[1][1], K->ax[1][2]), eq[ne++] = mech_dot3(M, d, K->ax[1]);
            set3(J->mg[ne], "0", "0", "1"), eq[ne++] = ang;
        } else if (!strcmp(t, "fixed")) {
            set3(J->fg[ne], "1", "0", "0"), eq[ne++] = d[0];
            set3(J->fg[ne], "0", "1", "0"), eq[ne++] = d[1];
            set3(J->mg[ne], "0", "0", "1"), eq[ne++] = ang;
        } else if (!strcmp(t, "inline")) {
            set3(J->fg[ne], K->ax[1][0], K->ax[1][1], K->ax[1][2]), eq[ne++] = mech_dot3(M, d, K->ax[1]);
        } else if (!strcmp(t, "orientation")) {
            set3(J->mg[ne], "0", "0", "1"), eq[ne++] = ang;
        } else {
            return err_at(M, mech_get(M, val, "type"),
                          "joint '%s': type '%s' is not available in a planar mechanism (revolute, prismatic, fixed, "
                          "inline, orientation, distance, coupler)",
                          J->name, t);
        }
    } else {
        int sph = 0, par = 0, rot = 0, lin = 0, perp = 0, inpl = 0;
        if (!strcmp(t, "spherical")) sph = 1;
        else if (!strcmp(t, "revolute")) sph = par = 1;
        else if (!strcmp(t, "universal")) sph = perp = 1;
        else if (!strcmp(t, "cylindrical")) par = lin = 1;
        else if (!strcmp(t, "prismatic")) par = lin = rot = 1;
        else if (!strcmp(t, "fixed")) sph = par = rot = 1;
        else if (!strcmp(t, "planar")) inpl = par = 1;
        else if (!strcmp(t, "inline")) lin = 1;
        else if (!strcmp(t, "inplane")) inpl = 1;
        else if (!strcmp(t, "orientation")) par = rot = 1;
        else if (!strcmp(t, "parallel_axes")) par = 1;
        else if (!strcmp(t, "perpendicular_axes")) perp = 1;
        else
            return err_at(M, mech_get(M, val, "type"),
                          "joint '%s': unknown type '%s' (expected revolute, prismatic, cylindrical, universal, "
                          "spherical, fixed, planar, inline, inplane, orientation, parallel_axes, perpendicular_axes, "
                          "distance, coupler, rolling_wheel)",
                          J->name, t);
        static const char *ek[3][3] = {{"1", "0", "0"}, {"0", "1", "0"}, {"0", "0", "1"}};
        if (sph)
            for (int k = 0; k < 3; k++) set3(J->fg[ne], ek[k][0], ek[k][1], ek[k][2]), eq[ne++] = d[k];
        if (lin) {
            set3(J->fg[ne], K->ax[0][0], K->ax[0][1], K->ax[0][2]), eq[ne++] = mech_dot3(M, d, K->ax[0]);
            set3(J->fg[ne], K->ax[1][0], K->ax[1][1], K->ax[1][2]), eq[ne++] = mech_dot3(M, d, K->ax[1]);
        }
        if (inpl) set3(J->fg[ne], K->ax[2][0], K->ax[2][1], K->ax[2][2]), eq[ne++] = mech_dot3(M, d, K->ax[2]);
        if (par) {
            mech_tx_cross3(M, I->ax[2], K->ax[0], J->mg[ne]), eq[ne++] = mech_dot3(M, I->ax[2], K->ax[0]);
            mech_tx_cross3(M, I->ax[2], K->ax[1], J->mg[ne]), eq[ne++] = mech_dot3(M, I->ax[2], K->ax[1]);
        }
        if (rot) mech_tx_cross3(M, I->ax[0], K->ax[1], J->mg[ne]), eq[ne++] = mech_dot3(M, I->ax[0], K->ax[1]);
        if (perp) mech_tx_cross3(M, I->ax[2], K->ax[2], J->mg[ne]), eq[ne++] = mech_dot3(M, I->ax[2], K->ax[2]);
        int pi = M->b[I->body].kind == KIND_POINT || M->b[K->body].kind == KIND_POINT;
        if (pi && (par || rot || perp))
            return err_at(M, mech_get(M, val, "type"), "joint '%s': a %s joint constrains orientation, which a point mass has not",
                          J->name, t);
    }
    J->c0 = M->src->constraints.n;
    J->nc = ne;
    for (int k = 0; k < ne && !rc; k++) rc = mech_con(M, nm, eq[k], line, col);
    return rc;
}

int mech_read_joints(mech *M, const yaml_node_t *js)
{
    if (!js || (js->type == YAML_SCALAR_NODE && js->data.scalar.length == 0)) return 0;
    int rc = mech_want_map(M, js, "'joints'");
    if (rc) return rc;
    /* the joints' array and names at their count (6,001 at the N = 2000 four-bar) */
    size_t njs = (size_t)(js->data.mapping.pairs.top - js->data.mapping.pairs.start);
    if ((size_t)M->cj < (size_t)M->nj + njs) {
        joint *j = njs < (size_t)INT_MAX / 2 ? mbl_realloc_array(M->jt, (size_t)M->nj + njs, sizeof *j) : NULL;
        if (!j) return mech_oom(M);
        M->jt = j, M->cj = M->nj + (int)njs;
    }
    if (mech_ns_reserve(&M->hj, njs)) return mech_oom(M);
    /* first pass: names, types and markers (so measures may name any joint) */
    for (yaml_node_pair_t *p = js->data.mapping.pairs.start; p < js->data.mapping.pairs.top; p++) {
        yaml_node_t *k = mech_node(M->doc, p->key), *v = mech_node(M->doc, p->value);
        if (!mech_is_scalar(k) || !mech_valid_name(mech_sc(k))) return err_at(M, k, "a joint name must be a plain word");
        char what[200];
        mech_snprintf(what, sizeof what, "joint '%s'", mech_sc(k));
        if (mech_find_joint(M, mech_sc(k), k->data.scalar.length) >= 0) return err_at(M, k, "duplicate joint name '%s'", mech_sc(k));
        if ((rc = mech_want_map(M, v, what))) return rc;
        yaml_node_t *ty = mech_get(M, v, "type");
        if (!mech_is_scalar(ty)) return err_at(M, ty ? ty : v, "%s: missing 'type'", what);
        int coupler = !strcmp(mech_sc(ty), "coupler");
        static const char *okj[] = {"type", "i", "j", "distance", "q0", "v0", "cut", NULL};
        static const char *okc[] = {"type", "joints", "ratios", "offset", "coordinates", NULL};
        static const char *okw[] = {"type", "i", "j", "radius", "tire", NULL};
        int wheel = !strcmp(mech_sc(ty), "rolling_wheel");
        if ((rc = mech_check_keys(M, v, coupler ? okc : wheel ? okw : okj, what))) return rc;
        if (M->nj == M->cj) {
            int cap = M->cj ? 2 * M->cj : 16;
            joint *j = mbl_realloc_array(M->jt, (size_t)cap, sizeof *j);
            if (!j) return mech_oom(M);
            M->jt = j;
            M->cj = cap;
        }
        if (mech_ns_add(&M->hj, mech_sc(k), M->nj)) return mech_oom(M);
        joint *J = &M->jt[M->nj++];
        memset(J, 0, sizeof *J);
        J->name = mech_sc(k);
        J->type = mech_sc(ty);
        mech_pos_of(k, &J->line, &J->col);
        J->i = J->j = -1;
        J->val = v;
        if (!M->relative && !coupler)
            for (const char *const *kk = (const char *const[]){"q0", "v0", "cut", NULL}; *kk; kk++)
                if (mech_get(M, v, *kk))
                    return err_at(M, mech_get(M, v, *kk), "%s: '%s' needs 'coordinates: relative'", what, *kk);
        if (!coupler) {
            if ((rc = mech_marker_ref(M, v, "i", what, 1, &J->i))) return rc;
            if ((rc = mech_marker_ref(M, v, "j", what, !wheel, &J->j))) return rc;
            if (J->j >= 0 && M->mk[J->i].body == M->mk[J->j].body)
                return err_at(M, v, "%s: markers '%s' and '%s' are on the same body '%s'", what, M->mk[J->i].name,
                              M->mk[J->j].name, M->b[M->mk[J->i].body].name);
        }
    }
    if (M->relative && (rc = mech_rel_tree(M))) return rc;
    int idx = 0;
    for (yaml_node_pair_t *p = js->data.mapping.pairs.start; p < js->data.mapping.pairs.top; p++, idx++) {
        yaml_node_t *v = mech_node(M->doc, p->value);
        joint *J = &M->jt[idx];
        if (strcmp(J->type, "coupler")) {
            if (J->tree) continue; /* satisfied by the joint coordinates */
            if ((rc = joint_constraints(M, J, v))) return rc;
            continue;
        }
        yaml_node_t *jl = mech_get(M, v, "joints"), *rl = mech_get(M, v, "ratios"), *of = mech_get(M, v, "offset");
        int nj = jl && jl->type == YAML_SEQUENCE_NODE ? (int)(jl->data.sequence.items.top - jl->data.sequence.items.start) : 0;
        if (nj < 2) return err_at(M, jl ? jl : v, "coupler '%s': 'joints' must list two or more joints", J->name);
        const char *r[8];
        if (nj > 8) return err_at(M, jl, "coupler '%s': at most 8 joints", J->name);
        if ((rc = mech_vec_of(M, rl, nj, "coupler ratios", r))) return rc;
        const char *off = "0";
        if (of && (rc = mech_text_of(M, of, "offset", &off))) return rc;
        if (of && (rc = mech_con_text(M, mech_fmt(M, "coupler '%s'", J->name), "offset", of, off, 0))) return rc;
        for (int a = 0; a < nj; a++)
            if ((rc = mech_con_text(M, mech_fmt(M, "coupler '%s'", J->name), "ratio",
                                    mech_node(M->doc, rl->data.sequence.items.start[a]), r[a], 0)))
                return rc;
        const char *sum = mech_fmt(M, "-(%s)", off);
        for (int a = 0; a < nj; a++) {
            yaml_node_t *jn = mech_node(M->doc, jl->data.sequence.items.start[a]);
            if (!mech_is_scalar(jn)) return err_at(M, jn, "coupler '%s': expected a joint name", J->name);
            int jj = mech_find_joint(M, mech_sc(jn), jn->data.scalar.length);
            if (jj < 0) return err_at(M, jn, "coupler '%s': no joint named '%s'", J->name, mech_sc(jn));
            char why[300];
            /* `coordinates: [k, ..]`: the k-th coordinate of each joint (a screw: a cylindrical
             * joint's angle and translation) */
            yaml_node_t *cl = mech_get(M, v, "coordinates"), *cn = NULL;
            int kq = 1;
            if (cl) {
                int ncl = cl->type == YAML_SEQUENCE_NODE
                              ? (int)(cl->data.sequence.items.top - cl->data.sequence.items.start)
                              : 0;
                if (ncl != nj)
                    return err_at(M, cl, "coupler '%s': 'coordinates' must list one number (1 to 4) per joint", J->name);
                cn = mech_node(M->doc, cl->data.sequence.items.start[a]);
                const char *t = mech_is_scalar(cn) ? mech_sc(cn) : "";
                if (strlen(t) != 1 || t[0] < '1' || t[0] > '4')
                    return err_at(M, cn, "coupler '%s': a coordinate number is 1, 2, 3 or 4", J->name);
                kq = t[0] - '0';
            }
            const char *q = kq == 1 ? mech_joint_coord(M, jj, why, sizeof why)
                                    : mech_joint_coord_k(M, jj, kq, why, sizeof why);
            if (!q) return M->oom ? mech_oom(M) : err_at(M, cn ? cn : jn, "coupler '%s': %s", J->name, why);
            sum = mech_fmt(M, "%s + (%s)*%s", sum, r[a], q);
        }
        if ((rc = mech_con(M, mech_fmt(M, "coupler %s", J->name), sum, J->line, J->col))) return rc;
    }
    return 0;
}

static int read_driver(mech *M, const yaml_node_t *k, const yaml_node_t *v)
{
    int rc;
    char what[200];
    snprintf(what, sizeof what, "driver '%s'", mech_sc(k));
    if ((rc = mech_want_map(M, v, what))) return rc;
    static const char *ok[] = {"joint", "i", "j", "measure", "motion", NULL};
    if ((rc = mech_check_keys(M, v, ok, what))) return rc;
    yaml_node_t *mo = mech_get(M, v, "motion"), *jn = mech_get(M, v, "joint");
    const char *mt = NULL;
    if (!mo) return err_at(M, v, "%s: missing 'motion'", what);
    if ((rc = mech_text_of(M, mo, "motion", &mt))) return rc;
    if ((rc = mech_subst(M, mt, mo, NULL, 0, &mt))) return rc;
    const char *q;
    if (jn) {
        if (!mech_is_scalar(jn)) return err_at(M, jn, "%s: 'joint' must name a joint", what);
        int jj = mech_find_joint(M, mech_sc(jn), jn->data.scalar.length);
        if (jj < 0) return err_at(M, jn, "%s: no joint named '%s'", what, mech_sc(jn));
        char why[300];
        q = mech_joint_coord(M, jj, why, sizeof why);
        if (!q) return M->oom ? mech_oom(M) : err_at(M, jn, "%s: %s", what, why);
    } else {
        int mi, mj;
        if ((rc = mech_marker_ref(M, v, "i", what, 1, &mi)) || (rc = mech_marker_ref(M, v, "j", what, 1, &mj))) return rc;
        yaml_node_t *me = mech_get(M, v, "measure");
        if (!mech_is_scalar(me)) return err_at(M, me ? me : v, "%s: missing 'measure' (DX DY DZ AX AY AZ)", what);
        const char *m = mech_sc(me);
        if (strlen(m) != 2 || (m[0] != 'D' && m[0] != 'A') || (m[1] != 'X' && m[1] != 'Y' && m[1] != 'Z'))
            return err_at(M, me, "%s: measure must be DX, DY, DZ, AX, AY or AZ", what);
        const char *args[3] = {M->mk[mi].name, M->mk[mj].name, M->mk[mj].name};
        size_t al[3] = {strlen(args[0]), strlen(args[1]), strlen(args[2])};
        char why[300] = "";
        q = mech_measure(M, m, m[0] == 'D' ? 3 : 2, args, al, why, sizeof why);
        if (!q) return err_at(M, me, "%s: %s", what, why);
    }
    int line, col;
    mech_pos_of(k, &line, &col);
    /* A spatial joint angle in absolute coordinates is a function of Euler parameters, which
     * cannot count turns: it is continuous within 2 pi of the file's angle and wraps by 4 pi
     * beyond (mech_twist_angle). The driver holds it modulo 2 pi instead, as the wrapped
     * difference atan2(sin(JQ - f), cos(JQ - f)): zero wherever the joint is at the motion's
     * angle up to whole turns, smooth there (no branch within pi of it) and with derivative 1,
     * so the equation, its multiplier and its time derivatives equal JQ - f(t) near the point.
     * A motion Omega*t then holds at every t, not only within 2 pi of the file (issue 30). */
    const char *eq = mech_fmt(M, "%s - (%s)", q, mt);
    if (jn && !M->planar && !strncmp(q, "_jq_", 4)) eq = mech_fmt(M, "atan2(sin(%s), cos(%s))", eq, eq);
    rc = mech_con(M, mech_fmt(M, "driver %s", mech_sc(k)), eq, line, col);
    if (!rc) rc = mech_con_text(M, mech_fmt(M, "driver '%s'", mech_sc(k)), "motion", mo, mt, 1);
    return rc;
}

int mech_read_drivers(mech *M, const yaml_node_t *ds)
{
    if (!ds || (ds->type == YAML_SCALAR_NODE && ds->data.scalar.length == 0)) return 0;
    int rc = mech_want_map(M, ds, "'drivers'");
    nameset seen;
    memset(&seen, 0, sizeof seen);
    for (yaml_node_pair_t *p = ds->data.mapping.pairs.start; !rc && p < ds->data.mapping.pairs.top; p++) {
        yaml_node_t *k = mech_node(M->doc, p->key), *v = mech_node(M->doc, p->value);
        if (!mech_is_scalar(k) || !mech_valid_name(mech_sc(k))) rc = err_at(M, k, "a driver name must be a plain word");
        if (!rc) rc = mech_dup_key(M, &seen, ds, p, "driver");
        if (!rc) rc = read_driver(M, k, v);
    }
    mech_ns_free(&seen);
    return rc;
}

/* The first input (or der) that text uses, directly or through the variables it names (depth
 * limited: a cycle among variables is reported by the loader); *via is the variable it came
 * through (NULL when direct). */
static const char *input_in(mech *M, const char *text, int depth, const char **via)
{
    for (const char *s = text; *s;) {
        if (!mech_is_id0(*s) || (s > text && mech_is_id(s[-1]))) {
            s++;
            continue;
        }
        const char *e = s;
        while (mech_is_id(*e)) e++;
        size_t len = (size_t)(e - s);
        if (*s == '_') { /* generated names (marker positions and axes) hold no inputs */
            s = e;
            continue;
        }
        if (len == 3 && !strncmp(s, "der", 3)) return "der";
        for (int i = 0; i < M->src->inputs.n; i++)
            if (strlen(M->src->inputs.items[i].key) == len && !strncmp(M->src->inputs.items[i].key, s, len))
                return M->src->inputs.items[i].key;
        if (depth < 32)
            for (int i = 0; i < M->src->variables.n; i++) {
                const mbl_src_item *it = &M->src->variables.items[i];
                if (strlen(it->key) != len || strncmp(it->key, s, len)) continue;
                const char *got = input_in(M, it->text, depth + 1, via);
                if (got) {
                    if (!depth) *via = it->key;
                    return got;
                }
            }
        s = e;
    }
    return NULL;
}

/* A driver prescribes a motion of t and parameters, and a coupler's ratios and offset and a
 * distance are numbers of the geometry: their equations are holonomic constraints, which cannot
 * depend on inputs or velocities. Said in the element's words (the loader would only name
 * "constraint <j>"). */
int mech_check_con_texts(mech *M)
{
    for (int d = 0; d < M->ndrv; d++) {
        const struct drv *D = &M->drv[d];
        const char *via = NULL;
        const char *in = input_in(M, D->text, 0, &via);
        if (!in) continue;
        const char *thru = via ? mech_fmt(M, " (through variable '%s')", via) : "";
        if (!strcmp(in, "der"))
            return err_at(M, D->at,
                          "%s: the %s uses der(.)%s; %s a function of t and parameters (a velocity-level condition "
                          "is not a position constraint)",
                          D->elem, D->part, thru, D->driver ? "a driver prescribes a position as" : "it must be");
        if (D->driver)
            return err_at(M, D->at,
                          "%s: the motion depends on input '%s'%s; drivers cannot depend on inputs (a motion is a "
                          "function of t and parameters): actuate with a force element whose force or torque is "
                          "'%s', or make '%s' a parameter",
                          D->elem, in, thru, in, in);
        return err_at(M, D->at,
                      "%s: the %s depends on input '%s'%s; joints cannot depend on inputs (make '%s' a parameter, or "
                      "act through a force element)",
                      D->elem, D->part, in, thru, in);
    }
    return 0;
}
