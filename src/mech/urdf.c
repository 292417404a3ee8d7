/* URDF -> `model: mechanism` text (see urdf.h): the robot that urdf_xml.c read becomes
 * bodies (one per link, links on fixed joints lumped into their parent with their inertia moved by
 * the parallel-axis theorem), markers (the joint frame on the parent, whose z axis is the URDF
 * axis, and its twin on the child), joints of the mechanism vocabulary, one force element per
 * movable joint (the effort input u_<joint> minus the URDF viscous damping times the joint rate),
 * gravity, and outputs (joint positions and the end-effector pose). Bodies are placed by forward
 * kinematics at the configuration (the parameters named after the joints, 0 unless --set), so
 * the same text is consistent in relative and in absolute coordinates. */
#include "mech/urdf.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/tree.h>

#include "core/vec3.h"
#include "mech/urdf_internal.h"

void mech_urdf_printf(ubuf *b, const char *f, ...)
{
    if (b->oom) return;
    va_list ap;
    va_start(ap, f);
    int n = vsnprintf(NULL, 0, f, ap);
    va_end(ap);
    if (n < 0) {
        b->oom = 1;
        return;
    }
    if (b->n + (size_t)n + 1 > b->cap) {
        size_t cap = 2 * (b->n + (size_t)n + 1) + 1024;
        char *s = mbl_realloc(b->s, cap);
        if (!s) {
            b->oom = 1;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
    va_start(ap, f);
    vsnprintf(b->s + b->n, (size_t)n + 1, f, ap);
    va_end(ap);
    b->n += (size_t)n;
}


/* the shortest text that reads back as the same double */
typedef struct gnum {
    char s[32];
} gnum;
static gnum G(double x)
{
    gnum g;
    for (int p = 1; p <= 17; p++) {
        snprintf(g.s, sizeof g.s, "%.*g", p, x);
        if (strtod(g.s, NULL) == x) break;
    }
    if (!strcmp(g.s, "-0")) strcpy(g.s, "0");
    return g;
}

void mech_urdf_opts_default(mbl_urdf_opts *o)
{
    memset(o, 0, sizeof *o);
    o->g[2] = -9.81;
}

int mech_urdf_is_xml(const char *text, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (isspace((unsigned char)text[i])) continue;
        if ((unsigned char)text[i] == 0xEF && i + 2 < len) { /* a UTF-8 byte-order mark */
            i += 2;
            continue;
        }
        return text[i] == '<';
    }
    return 0;
}

/* mass, cm and inertia of link l added to body b (all in b's frame, l at T) */
static void lump(ulink *B, const ulink *l)
{
    if (!(l->m > 0) && l->I[0] == 0 && l->I[4] == 0 && l->I[8] == 0) return;
    const double *R = l->T, *p = l->T + 9;
    double c[3], I[9];
    mat3_vec_add(p, R, l->c, c);
    mat3_rot_tensor(R, l->I, I);
    double M = B->m + l->m, cm[3];
    for (int i = 0; i < 3; i++) cm[i] = M > 0 ? (B->m * B->c[i] + l->m * c[i]) / M : B->c[i];
    /* parallel axes: both inertias moved to the new centre */
    double J[9];
    for (int i = 0; i < 9; i++) J[i] = B->I[i] + I[i];
    const double *cs[2] = {B->c, c};
    const double ms[2] = {B->m, l->m};
    for (int s = 0; s < 2; s++) {
        double d[3];
        vec3_sub(cs[s], cm, d);
        double dd = vec3_dot(d, d);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) J[i + 3 * j] += ms[s] * ((i == j) * dd - d[i] * d[j]);
    }
    B->m = M;
    memcpy(B->c, cm, sizeof cm);
    memcpy(B->I, J, sizeof J);
}

static void put_rot(ubuf *b, const double R[9]) /* rows of the column-major R */
{
    mech_urdf_printf(b, "[[%s, %s, %s], [%s, %s, %s], [%s, %s, %s]]", G(R[0]).s, G(R[3]).s, G(R[6]).s, G(R[1]).s, G(R[4]).s,
              G(R[7]).s, G(R[2]).s, G(R[5]).s, G(R[8]).s);
}

static int emit(ureader *r, const mbl_urdf_opts *o, const char *robot, int root, int ee, ubuf *b)
{
    mech_urdf_printf(b, "model: mechanism\nname: \"%s\"\nspace: spatial\ncoordinates: %s\n", o->name ? o->name : robot,
              o->absolute ? "absolute" : "relative");
    if (o->tree_symbolic) mech_urdf_printf(b, "tree_dynamics: symbolic\n");
    int nmov = 0;
    for (int k = 0; k < r->nj; k++) nmov += r->J[k].type != UJ_FIXED && r->J[k].type != UJ_FLOATING;
    mech_urdf_printf(b, "parameters: {");
    int first = 1;
    for (int k = 0; k < r->nj; k++) {
        ujoint *J = &r->J[k];
        if (J->type == UJ_FIXED || J->type == UJ_FLOATING || J->type == UJ_PLANAR) continue;
        mech_urdf_printf(b, "%s%s: %s", first ? "" : ", ", J->name, G(J->q).s);
        first = 0;
    }
    mech_urdf_printf(b, "}\ninputs: {");
    first = 1;
    for (int k = 0; k < r->nj; k++) {
        ujoint *J = &r->J[k];
        if (J->type == UJ_FIXED || J->type == UJ_FLOATING || J->type == UJ_PLANAR) continue;
        mech_urdf_printf(b, "%su_%s: %s", first ? "" : ", ", J->name, G(J->hold).s);
        first = 0;
    }
    mech_urdf_printf(b, "}\nground:\n  markers:\n    world_: {}\n");
    if (ee >= 0 && r->L[ee].body == root) {
        const double *T = r->L[ee].T;
        mech_urdf_printf(b, "    ee_: {position: [%s, %s, %s], rotation: ", G(T[9]).s, G(T[10]).s, G(T[11]).s);
        put_rot(b, T);
        mech_urdf_printf(b, "}\n");
    }
    /* markers on ground: joint frames whose parent is lumped into the root */
    for (int k = 0; k < r->nj; k++) {
        ujoint *J = &r->J[k];
        if (J->type == UJ_FIXED || J->type == UJ_FLOATING || r->L[J->parent].body != root) continue;
        double T[12], Z[9], F[12];
        rigid_mul(r->L[J->parent].T, J->O, T);
        mat3_zframe(J->axis, Z);
        rigid_ident(F);
        memcpy(F, Z, sizeof Z);
        rigid_mul(T, F, F);
        mech_urdf_printf(b, "    %s_p: {position: [%s, %s, %s], rotation: ", J->name, G(F[9]).s, G(F[10]).s, G(F[11]).s);
        put_rot(b, F);
        mech_urdf_printf(b, "}\n");
    }
    mech_urdf_printf(b, "bodies:\n");
    for (int li = 0; li < r->nl; li++) {
        ulink *L = &r->L[li];
        if (L->body != li || li == root) continue;
        mech_urdf_printf(b, "  %s:\n    mass: %s\n", L->name, G(L->m).s);
        mech_urdf_printf(b, "    inertia: [%s, %s, %s, %s, %s, %s]\n", G(L->I[0]).s, G(L->I[4]).s, G(L->I[8]).s, G(L->I[3]).s,
                  G(L->I[6]).s, G(L->I[7]).s);
        mech_urdf_printf(b, "    cm: [%s, %s, %s]\n", G(L->c[0]).s, G(L->c[1]).s, G(L->c[2]).s);
        mech_urdf_printf(b, "    position: [%s, %s, %s]\n    rotation: ", G(L->W[9]).s, G(L->W[10]).s, G(L->W[11]).s);
        put_rot(b, L->W);
        mech_urdf_printf(b, "\n    markers:\n      %s_o: {}\n", L->name);
        if (ee >= 0 && r->L[ee].body == li) {
            const double *T = r->L[ee].T;
            mech_urdf_printf(b, "      ee_: {position: [%s, %s, %s], rotation: ", G(T[9]).s, G(T[10]).s, G(T[11]).s);
            put_rot(b, T);
            mech_urdf_printf(b, "}\n");
        }
        for (int k = 0; k < r->nj; k++) {
            ujoint *J = &r->J[k];
            if (J->type == UJ_FIXED || J->type == UJ_FLOATING) continue;
            double Z[9], F[12];
            mat3_zframe(J->axis, Z);
            rigid_ident(F);
            memcpy(F, Z, sizeof Z);
            if (J->child == li) { /* the joint frame on the child: its origin, the axis */
                mech_urdf_printf(b, "      %s_c: {rotation: ", J->name);
                put_rot(b, F);
                mech_urdf_printf(b, "}\n");
            }
            if (r->L[J->parent].body == li) { /* the joint frame on the parent */
                double T[12];
                rigid_mul(r->L[J->parent].T, J->O, T);
                rigid_mul(T, F, F);
                mech_urdf_printf(b, "      %s_p: {position: [%s, %s, %s], rotation: ", J->name, G(F[9]).s, G(F[10]).s, G(F[11]).s);
                put_rot(b, F);
                mech_urdf_printf(b, "}\n");
            }
        }
    }
    mech_urdf_printf(b, "joints:\n");
    int anyj = 0;
    for (int k = 0; k < r->nj; k++) {
        ujoint *J = &r->J[k];
        if (J->type == UJ_FIXED || J->type == UJ_FLOATING) continue;
        const char *ty = J->type == UJ_PRISMATIC ? "prismatic" : J->type == UJ_PLANAR ? "planar" : "revolute";
        mech_urdf_printf(b, "  %s: {type: %s, i: %s_c, j: %s_p", J->name, ty, J->name, J->name);
        if (J->type != UJ_PLANAR && !o->absolute) mech_urdf_printf(b, ", q0: %s", J->name);
        mech_urdf_printf(b, "}\n");
        anyj = 1;
    }
    if (!anyj) mech_urdf_printf(b, "  {}\n");
    mech_urdf_printf(b, "forces:\n  gravity_: {type: gravity, g: [%s, %s, %s]}\n", G(o->g[0]).s, G(o->g[1]).s, G(o->g[2]).s);
    for (int k = 0; k < r->nj; k++) {
        ujoint *J = &r->J[k];
        if (J->type == UJ_FIXED || J->type == UJ_FLOATING || J->type == UJ_PLANAR) continue;
        char gen[200];
        if (J->damping > 0) snprintf(gen, sizeof gen, "u_%s - %s*JV(%s)", J->name, G(J->damping).s, J->name);
        else snprintf(gen, sizeof gen, "u_%s", J->name);
        mech_urdf_printf(b, "  effort_%s: {type: force, i: %s_c, frame: %s_p, reaction: %s_p, %s: [0, 0, \"%s\"]}\n", J->name,
                  J->name, J->name, J->name, J->type == UJ_PRISMATIC ? "force" : "torque", gen);
    }
    mech_urdf_printf(b, "outputs:\n");
    for (int k = 0; k < r->nj; k++) {
        ujoint *J = &r->J[k];
        if (J->type == UJ_FIXED || J->type == UJ_FLOATING || J->type == UJ_PLANAR) continue;
        mech_urdf_printf(b, "  q_%s: \"JQ(%s)\"\n", J->name, J->name);
    }
    if (ee >= 0) {
        static const char *nm[6] = {"x", "y", "z", "ax", "ay", "az"};
        static const char *fn[6] = {"DX", "DY", "DZ", "AX", "AY", "AZ"};
        for (int k = 0; k < 6; k++) mech_urdf_printf(b, "  ee_%s: \"%s(ee_, world_)\"\n", nm[k], fn[k]);
    }
    (void)nmov;
    mech_urdf_printf(b, "linearize: %s\n", o->linearize ? o->linearize : "{at: given}");
    return b->oom ? mbl_error(r->st, MBL_ENOMEM, "out of memory translating %s", r->file) : 0;
}


/* ---- the mechanism ---- */

/* Depth-ordered walk: body of each link (lumping fixed joints), its transform in the body, its
 * world pose at the configuration (the joints' parameters, 0 unless --set); then each body's mass,
 * cm and inertia, its own inertial first, then its fixed-joint links'. */
static int place_links(ureader *r, const mbl_setting *sets, int nsets, int rootl)
{
    mbl_status *st = r->st;
    int rc = 0;
    int *ord = mbl_calloc((size_t)r->nl, sizeof *ord), no = 0;
    if (!ord) return mbl_error(st, MBL_ENOMEM, "out of memory");
    ord[no++] = rootl;
    r->L[rootl].body = rootl;
    rigid_ident(r->L[rootl].T);
    rigid_ident(r->L[rootl].W);
    for (int h = 0; h < no; h++) {
        int l = ord[h];
        for (int k = 0; k < r->nj; k++) {
            ujoint *J = &r->J[k];
            if (J->parent != l) continue;
            ulink *c = &r->L[J->child];
            for (int s = 0; s < nsets; s++)
                if (sets[s].name && !strcmp(sets[s].name, J->name)) J->q = sets[s].value;
            double M[12];
            rigid_ident(M);
            if (J->type == UJ_REVOLUTE || J->type == UJ_CONTINUOUS) mat3_axis_angle(J->axis, J->q, M);
            if (J->type == UJ_PRISMATIC)
                for (int i = 0; i < 3; i++) M[9 + i] = J->q * J->axis[i];
            double X[12];
            rigid_mul(J->O, M, X);
            rigid_mul(r->L[l].W, X, c->W);
            if (J->type == UJ_FIXED) {
                c->body = r->L[l].body;
                rigid_mul(r->L[l].T, J->O, c->T);
            } else {
                c->body = J->child;
                rigid_ident(c->T);
            }
            if (no == r->nl) break;
            ord[no++] = J->child;
        }
    }
    if (no != r->nl) {
        for (int l = 0; l < r->nl; l++) {
            int seen = 0;
            for (int h = 0; h < no; h++) seen |= ord[h] == l;
            if (!seen) {
                rc = mech_urdf_error(r, r->L[l].line, "link '%s' is not connected to the root link '%s'", r->L[l].raw,
                                     r->L[rootl].raw);
                break;
            }
        }
    }
    /* lump: each body's own inertial first, then its fixed-joint links */
    ulink *agg = mbl_calloc((size_t)r->nl, sizeof *agg);
    if (!rc && !agg) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int l = 0; l < r->nl && !rc; l++) {
        ulink t = r->L[l];
        ulink *B = &agg[r->L[l].body];
        lump(B, &t);
    }
    for (int l = 0; l < r->nl && !rc; l++) {
        if (r->L[l].body != l) continue;
        r->L[l].m = agg[l].m;
        memcpy(r->L[l].c, agg[l].c, sizeof agg[l].c);
        memcpy(r->L[l].I, agg[l].I, sizeof agg[l].I);
    }
    mbl_free(agg);
    mbl_free(ord);
    return rc;
}

/* every moving body has a mass */
static int check_masses(ureader *r, int rootl)
{
    int rc = 0;
    for (int l = 0; l < r->nl && !rc; l++) {
        ulink *L = &r->L[l];
        if (L->body != l || l == rootl) continue;
        if (!(L->m > 0))
            rc = mech_urdf_error(r, L->line,
                                 "link '%s' has no mass (no <inertial>, or mass 0, also with the links fixed to it) but "
                                 "moves on joint '%s': give it an inertial",
                                 L->raw, r->J[L->parent_joint].raw);
    }
    return rc;
}

/* Efforts that hold the named joints at the configuration: u_k = -Q_k, with the gravity
 * generalized force Q_k = sum over the bodies it carries of m g . (u_k x (c - s_k)) for a
 * revolute joint (axis u_k through s_k), m g . u_k for a prismatic one. */
static double gravity_effort(ureader *r, const mbl_urdf_opts *o, int rootl, int k)
{
    ujoint *J = &r->J[k];
    double F[12];
    rigid_mul(r->L[J->parent].W, J->O, F); /* the joint frame at the configuration, before its motion */
    double u[3], sk[3] = {F[9], F[10], F[11]};
    mat3_vec(F, J->axis, u);
    double Q = 0;
    for (int l = 0; l < r->nl; l++) {
        if (r->L[l].body != l || l == rootl) continue;
        int below = 0; /* is joint k on the path from body l to the root? */
        for (int x = l; x >= 0 && r->L[x].parent_joint >= 0; x = r->J[r->L[x].parent_joint].parent)
            if (r->L[x].parent_joint == k) below = 1;
        if (!below) continue;
        const double *W = r->L[l].W, *cl = r->L[l].c;
        double c[3];
        mat3_vec_add(W + 9, W, cl, c);
        double v[3];
        if (J->type == UJ_PRISMATIC) memcpy(v, u, sizeof v);
        else {
            double d[3];
            vec3_sub(c, sk, d);
            vec3_cross(u, d, v);
        }
        Q += r->L[l].m * vec3_dot(o->g, v);
    }
    return Q;
}

static int hold_efforts(ureader *r, const mbl_urdf_opts *o, int rootl)
{
    int rc = 0;
    for (const char *const *h = o->hold; h && *h && !rc; h++) {
        int all = !strcmp(*h, "all"), found = 0;
        for (int k = 0; k < r->nj; k++) {
            ujoint *J = &r->J[k];
            if (!all && strcmp(J->raw, *h) && strcmp(J->name, *h)) continue;
            found = 1;
            if (J->type != UJ_REVOLUTE && J->type != UJ_CONTINUOUS && J->type != UJ_PRISMATIC) {
                if (!all)
                    rc = mbl_error(r->st, MBL_EMODEL,
                                   "%s: hold: joint '%s' has no effort input (revolute, continuous or prismatic)", r->file,
                                   *h);
                continue;
            }
            J->hold = -gravity_effort(r, o, rootl, k);
        }
        if (!found && !rc) rc = mbl_error(r->st, MBL_EMODEL, "%s: hold: no joint named '%s'", r->file, *h);
    }
    return rc;
}

int mech_urdf_to_mech(const char *xml, size_t len, const char *file, const mbl_urdf_opts *opt, const mbl_setting *sets,
                      int nsets, char **yaml, mbl_status *st)
{
    *yaml = NULL;
    mbl_urdf_opts dflt;
    mech_urdf_opts_default(&dflt);
    const mbl_urdf_opts *o = opt ? opt : &dflt;
    ureader r;
    memset(&r, 0, sizeof r);
    r.file = file ? file : "<urdf>";
    r.st = st;
    ubuf b = {0};
    char *robot = NULL;
    int rootl = -1, ee = -1;
    int rc = mech_urdf_read(&r, xml, len, &robot, &rootl);
    if (!rc) rc = place_links(&r, sets, nsets, rootl);
    if (!rc) rc = check_masses(&r, rootl);
    if (!rc && o->end_effector) {
        ee = mech_urdf_find_link(&r, o->end_effector);
        if (ee < 0) rc = mbl_error(st, MBL_EMODEL, "%s: no link named '%s' (end_effector)", r.file, o->end_effector);
    } else if (!rc) {
        ee = r.nl - 1;
    }
    if (!rc) rc = hold_efforts(&r, o, rootl);
    if (!rc) rc = emit(&r, o, robot, rootl, ee, &b);
    if (!rc) {
        *yaml = b.s;
        b.s = NULL;
    }
    mbl_free(b.s);
    mbl_free(robot);
    mech_urdf_free(&r);
    return rc;
}
