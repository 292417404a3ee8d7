/* URDF -> `model: mechanism` text (see urdf.h). The XML goes through libxml2; the robot becomes
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

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <yaml.h>

#include "model/source.h"

#define LINE_OF(n) ((int)xmlGetLineNo(n))

enum { UJ_FIXED, UJ_REVOLUTE, UJ_CONTINUOUS, UJ_PRISMATIC, UJ_FLOATING, UJ_PLANAR };

typedef struct ulink {
    char *name; /* sanitized */
    const char *raw;
    int line;
    double m, c[3], I[9]; /* inertial: mass, cm and inertia about the cm in link axes */
    int parent_joint;     /* -1: none (the root) */
    int body;             /* the link whose body carries it (itself unless lumped), -1 = ground */
    double T[12];         /* its frame in that body's frame: R (column-major 9) and p (3) */
    double W[12];         /* its frame in the world at the configuration */
} ulink;

typedef struct ujoint {
    char *name;
    const char *raw;
    int line, type, parent, child;
    double O[12]; /* origin: child frame in parent frame at q = 0 */
    double axis[3];
    double damping;
    double q;    /* configuration (1-dof joints) */
    double hold; /* its effort at the configuration (0, or the gravity compensation when held) */
} ujoint;

typedef struct ubuf {
    char *s;
    size_t n, cap;
    int oom;
} ubuf;

static void ub_printf(ubuf *b, const char *f, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void ub_printf(ubuf *b, const char *f, ...)
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

void mbl_urdf_opts_default(mbl_urdf_opts *o)
{
    memset(o, 0, sizeof *o);
    o->g[2] = -9.81;
}

int mbl_urdf_is_xml(const char *text, size_t len)
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

/* ---- rigid transforms: R column-major (9) then p (3) ---- */
static void tf_ident(double T[12])
{
    memset(T, 0, 12 * sizeof *T);
    T[0] = T[4] = T[8] = 1;
}
static void tf_mul(const double A[12], const double B[12], double C[12]) /* C = A B */
{
    double t[12];
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 3; i++) t[i + 3 * j] = A[i] * B[3 * j] + A[3 + i] * B[3 * j + 1] + A[6 + i] * B[3 * j + 2];
    for (int i = 0; i < 3; i++) t[9 + i] = A[9 + i] + A[i] * B[9] + A[3 + i] * B[10] + A[6 + i] * B[11];
    memcpy(C, t, sizeof t);
}
static void rpy_R(const double rpy[3], double R[9]) /* Rz(y) Ry(p) Rx(r), column-major */
{
    double cr = cos(rpy[0]), sr = sin(rpy[0]), cp = cos(rpy[1]), sp = sin(rpy[1]), cy = cos(rpy[2]),
           sy = sin(rpy[2]);
    double M[3][3] = {{cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr},
                      {sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr},
                      {-sp, cp * sr, cp * cr}};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) R[i + 3 * j] = M[i][j];
}
/* rotation about the unit axis a by angle t */
static void axis_R(const double a[3], double t, double R[9])
{
    double c = cos(t), s = sin(t), v = 1 - c;
    double M[3][3] = {{c + a[0] * a[0] * v, a[0] * a[1] * v - a[2] * s, a[0] * a[2] * v + a[1] * s},
                      {a[1] * a[0] * v + a[2] * s, c + a[1] * a[1] * v, a[1] * a[2] * v - a[0] * s},
                      {a[2] * a[0] * v - a[1] * s, a[2] * a[1] * v + a[0] * s, c + a[2] * a[2] * v}};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) R[i + 3 * j] = M[i][j];
}
/* a frame whose z axis is the unit vector a (x: the coordinate axis least aligned with a, made
 * perpendicular) */
static void zframe(const double a[3], double R[9])
{
    int k = 0;
    for (int i = 1; i < 3; i++)
        if (fabs(a[i]) < fabs(a[k])) k = i;
    double x[3] = {0, 0, 0};
    x[k] = 1;
    double d = x[0] * a[0] + x[1] * a[1] + x[2] * a[2];
    for (int i = 0; i < 3; i++) x[i] -= d * a[i];
    double n = sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
    for (int i = 0; i < 3; i++) x[i] /= n;
    double y[3] = {a[1] * x[2] - a[2] * x[1], a[2] * x[0] - a[0] * x[2], a[0] * x[1] - a[1] * x[0]};
    for (int i = 0; i < 3; i++) {
        R[i] = x[i];
        R[3 + i] = y[i];
        R[6 + i] = a[i];
    }
}

/* ---- XML helpers ---- */
typedef struct ureader {
    const char *file;
    mbl_status *st;
    ulink *L;
    int nl;
    ujoint *J;
    int nj;
} ureader;

static int uerr(ureader *r, int line, const char *f, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static int uerr(ureader *r, int line, const char *f, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, f);
    vsnprintf(msg, sizeof msg, f, ap);
    va_end(ap);
    return mbl_error(r->st, MBL_EMODEL, "%s:%d: %s", r->file, line, msg);
}

static xmlNode *child(xmlNode *n, const char *name)
{
    for (xmlNode *c = n ? n->children : NULL; c; c = c->next)
        if (c->type == XML_ELEMENT_NODE && !strcmp((const char *)c->name, name)) return c;
    return NULL;
}

/* numbers of an attribute ("1 0 0"); count must match; absent: defaults kept, returns 0 */
static int attr_nums(ureader *r, xmlNode *n, const char *attr, int count, double *v, const char *what)
{
    if (!n) return 0;
    xmlChar *s = xmlGetProp(n, (const xmlChar *)attr);
    if (!s) return 0;
    const char *p = (const char *)s;
    int k = 0, rc = 0;
    while (!rc) {
        while (isspace((unsigned char)*p)) p++;
        if (!*p) break;
        char *end;
        double x = strtod(p, &end);
        if (end == p || k == count || !isfinite(x)) {
            rc = uerr(r, LINE_OF(n), "%s: %s=\"%s\" must be %d finite number%s", what, attr, (const char *)s, count,
                      count > 1 ? "s" : "");
            break;
        }
        v[k++] = x;
        p = end;
    }
    if (!rc && k != count)
        rc = uerr(r, LINE_OF(n), "%s: %s=\"%s\" must be %d number%s", what, attr, (const char *)s, count,
                  count > 1 ? "s" : "");
    xmlFree(s);
    return rc;
}

static int origin_of(ureader *r, xmlNode *o, double T[12], const char *what)
{
    double xyz[3] = {0, 0, 0}, rpy[3] = {0, 0, 0};
    int rc = attr_nums(r, o, "xyz", 3, xyz, what);
    if (!rc) rc = attr_nums(r, o, "rpy", 3, rpy, what);
    rpy_R(rpy, T);
    memcpy(T + 9, xyz, sizeof xyz);
    return rc;
}

/* a name usable in expressions: letters, digits, _ (others become _), not starting with a digit */
static char *sanitize(const char *s)
{
    size_t n = strlen(s);
    char *o = mbl_malloc(n + 2);
    if (!o) return NULL;
    size_t k = 0;
    if (!isalpha((unsigned char)s[0]) && s[0] != '_') o[k++] = '_';
    for (size_t i = 0; i < n; i++) o[k++] = (isalnum((unsigned char)s[i]) || s[i] == '_') ? s[i] : '_';
    o[k] = '\0';
    return o;
}

static int find_link(ureader *r, const char *raw)
{
    for (int i = 0; i < r->nl; i++)
        if (!strcmp(r->L[i].raw, raw)) return i;
    return -1;
}

static int read_link(ureader *r, xmlNode *n, ulink *L)
{
    char what[300];
    snprintf(what, sizeof what, "link '%s'", L->raw);
    xmlNode *in = child(n, "inertial");
    tf_ident(L->T);
    if (!in) return 0; /* massless */
    xmlNode *ms = child(in, "mass"), *it = child(in, "inertia");
    if (!ms) return uerr(r, LINE_OF(in), "%s: <inertial> without <mass>", what);
    double m = 0;
    xmlChar *v = xmlGetProp(ms, (const xmlChar *)"value");
    if (!v) return uerr(r, LINE_OF(ms), "%s: <mass> without value", what);
    char *end;
    m = strtod((const char *)v, &end);
    int bad = end == (char *)v || *end || !isfinite(m) || m < 0;
    xmlFree(v);
    if (bad) return uerr(r, LINE_OF(ms), "%s: the mass must be a number >= 0", what);
    double O[12];
    int rc = origin_of(r, child(in, "origin"), O, what);
    if (rc) return rc;
    static const char *nm[6] = {"ixx", "iyy", "izz", "ixy", "ixz", "iyz"};
    double iv[6] = {0};
    for (int k = 0; k < 6 && it; k++) {
        xmlChar *s = xmlGetProp(it, (const xmlChar *)nm[k]);
        if (!s) continue;
        iv[k] = strtod((const char *)s, &end);
        bad = end == (char *)s || *end || !isfinite(iv[k]);
        xmlFree(s);
        if (bad) return uerr(r, LINE_OF(it), "%s: inertia %s must be a number", what, nm[k]);
    }
    /* inertia in the inertial frame, turned into link axes: R I R^T */
    double Ii[9] = {iv[0], iv[3], iv[4], iv[3], iv[1], iv[5], iv[4], iv[5], iv[2]}, t[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            t[i + 3 * j] = 0;
            for (int k = 0; k < 3; k++) t[i + 3 * j] += O[i + 3 * k] * Ii[k + 3 * j];
        }
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            L->I[i + 3 * j] = 0;
            for (int k = 0; k < 3; k++) L->I[i + 3 * j] += t[i + 3 * k] * O[j + 3 * k];
        }
    L->m = m;
    memcpy(L->c, O + 9, sizeof L->c);
    return 0;
}

static int read_joint(ureader *r, xmlNode *n, ujoint *J)
{
    char what[300];
    snprintf(what, sizeof what, "joint '%s'", J->raw);
    xmlChar *t = xmlGetProp(n, (const xmlChar *)"type");
    if (!t) return uerr(r, J->line, "%s: missing type", what);
    static const char *types[] = {"fixed", "revolute", "continuous", "prismatic", "floating", "planar"};
    J->type = -1;
    for (int k = 0; k < 6; k++)
        if (!strcmp((const char *)t, types[k])) J->type = k;
    int rc = 0;
    if (J->type < 0)
        rc = uerr(r, J->line, "%s: unknown type '%s' (revolute, continuous, prismatic, fixed, floating, planar)", what,
                  (const char *)t);
    xmlFree(t);
    if (rc) return rc;
    xmlNode *p = child(n, "parent"), *c = child(n, "child");
    if (!p || !c) return uerr(r, J->line, "%s: needs <parent link=...> and <child link=...>", what);
    for (int s = 0; s < 2; s++) {
        xmlChar *l = xmlGetProp(s ? c : p, (const xmlChar *)"link");
        if (!l) return uerr(r, J->line, "%s: <%s> without link", what, s ? "child" : "parent");
        int li = find_link(r, (const char *)l);
        if (li < 0) rc = uerr(r, LINE_OF(s ? c : p), "%s: no link named '%s'", what, (const char *)l);
        xmlFree(l);
        if (rc) return rc;
        if (s) J->child = li;
        else J->parent = li;
    }
    if (J->parent == J->child) return uerr(r, J->line, "%s: parent and child are the same link", what);
    if ((rc = origin_of(r, child(n, "origin"), J->O, what))) return rc;
    J->axis[0] = 1, J->axis[1] = 0, J->axis[2] = 0;
    if ((rc = attr_nums(r, child(n, "axis"), "xyz", 3, J->axis, what))) return rc;
    double an = sqrt(J->axis[0] * J->axis[0] + J->axis[1] * J->axis[1] + J->axis[2] * J->axis[2]);
    if (!(an > 0) && J->type != UJ_FIXED && J->type != UJ_FLOATING)
        return uerr(r, J->line, "%s: the axis is zero", what);
    for (int k = 0; k < 3 && an > 0; k++) J->axis[k] /= an;
    xmlNode *dy = child(n, "dynamics");
    if (dy) {
        xmlChar *d = xmlGetProp(dy, (const xmlChar *)"damping");
        if (d) {
            char *end;
            J->damping = strtod((const char *)d, &end);
            int bad = end == (char *)d || *end || !isfinite(J->damping) || J->damping < 0;
            xmlFree(d);
            if (bad) return uerr(r, LINE_OF(dy), "%s: damping must be a number >= 0", what);
        }
    }
    return 0;
}

/* mass, cm and inertia of link l added to body b (all in b's frame, l at T) */
static void lump(ulink *B, const ulink *l)
{
    if (!(l->m > 0) && l->I[0] == 0 && l->I[4] == 0 && l->I[8] == 0) return;
    const double *R = l->T, *p = l->T + 9;
    double c[3], I[9], t[9];
    for (int i = 0; i < 3; i++) c[i] = p[i] + R[i] * l->c[0] + R[3 + i] * l->c[1] + R[6 + i] * l->c[2];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            t[i + 3 * j] = 0;
            for (int k = 0; k < 3; k++) t[i + 3 * j] += R[i + 3 * k] * l->I[k + 3 * j];
        }
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            I[i + 3 * j] = 0;
            for (int k = 0; k < 3; k++) I[i + 3 * j] += t[i + 3 * k] * R[j + 3 * k];
        }
    double M = B->m + l->m, cm[3];
    for (int i = 0; i < 3; i++) cm[i] = M > 0 ? (B->m * B->c[i] + l->m * c[i]) / M : B->c[i];
    /* parallel axes: both inertias moved to the new centre */
    double J[9];
    for (int i = 0; i < 9; i++) J[i] = B->I[i] + I[i];
    const double *cs[2] = {B->c, c};
    const double ms[2] = {B->m, l->m};
    for (int s = 0; s < 2; s++) {
        double d[3] = {cs[s][0] - cm[0], cs[s][1] - cm[1], cs[s][2] - cm[2]};
        double dd = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) J[i + 3 * j] += ms[s] * ((i == j) * dd - d[i] * d[j]);
    }
    B->m = M;
    memcpy(B->c, cm, sizeof cm);
    memcpy(B->I, J, sizeof J);
}

static void put_rot(ubuf *b, const double R[9]) /* rows of the column-major R */
{
    ub_printf(b, "[[%s, %s, %s], [%s, %s, %s], [%s, %s, %s]]", G(R[0]).s, G(R[3]).s, G(R[6]).s, G(R[1]).s, G(R[4]).s,
              G(R[7]).s, G(R[2]).s, G(R[5]).s, G(R[8]).s);
}

static int emit(ureader *r, const mbl_urdf_opts *o, const char *robot, int root, int ee, ubuf *b)
{
    ub_printf(b, "model: mechanism\nname: \"%s\"\nspace: spatial\ncoordinates: %s\n", o->name ? o->name : robot,
              o->absolute ? "absolute" : "relative");
    if (o->tree_symbolic) ub_printf(b, "tree_dynamics: symbolic\n");
    int nmov = 0;
    for (int k = 0; k < r->nj; k++) nmov += r->J[k].type != UJ_FIXED && r->J[k].type != UJ_FLOATING;
    ub_printf(b, "parameters: {");
    int first = 1;
    for (int k = 0; k < r->nj; k++) {
        ujoint *J = &r->J[k];
        if (J->type == UJ_FIXED || J->type == UJ_FLOATING || J->type == UJ_PLANAR) continue;
        ub_printf(b, "%s%s: %s", first ? "" : ", ", J->name, G(J->q).s);
        first = 0;
    }
    ub_printf(b, "}\ninputs: {");
    first = 1;
    for (int k = 0; k < r->nj; k++) {
        ujoint *J = &r->J[k];
        if (J->type == UJ_FIXED || J->type == UJ_FLOATING || J->type == UJ_PLANAR) continue;
        ub_printf(b, "%su_%s: %s", first ? "" : ", ", J->name, G(J->hold).s);
        first = 0;
    }
    ub_printf(b, "}\nground:\n  markers:\n    world_: {}\n");
    if (ee >= 0 && r->L[ee].body == root) {
        const double *T = r->L[ee].T;
        ub_printf(b, "    ee_: {position: [%s, %s, %s], rotation: ", G(T[9]).s, G(T[10]).s, G(T[11]).s);
        put_rot(b, T);
        ub_printf(b, "}\n");
    }
    /* markers on ground: joint frames whose parent is lumped into the root */
    for (int k = 0; k < r->nj; k++) {
        ujoint *J = &r->J[k];
        if (J->type == UJ_FIXED || J->type == UJ_FLOATING || r->L[J->parent].body != root) continue;
        double T[12], Z[9], F[12];
        tf_mul(r->L[J->parent].T, J->O, T);
        zframe(J->axis, Z);
        tf_ident(F);
        memcpy(F, Z, sizeof Z);
        tf_mul(T, F, F);
        ub_printf(b, "    %s_p: {position: [%s, %s, %s], rotation: ", J->name, G(F[9]).s, G(F[10]).s, G(F[11]).s);
        put_rot(b, F);
        ub_printf(b, "}\n");
    }
    ub_printf(b, "bodies:\n");
    for (int li = 0; li < r->nl; li++) {
        ulink *L = &r->L[li];
        if (L->body != li || li == root) continue;
        ub_printf(b, "  %s:\n    mass: %s\n", L->name, G(L->m).s);
        ub_printf(b, "    inertia: [%s, %s, %s, %s, %s, %s]\n", G(L->I[0]).s, G(L->I[4]).s, G(L->I[8]).s, G(L->I[3]).s,
                  G(L->I[6]).s, G(L->I[7]).s);
        ub_printf(b, "    cm: [%s, %s, %s]\n", G(L->c[0]).s, G(L->c[1]).s, G(L->c[2]).s);
        ub_printf(b, "    position: [%s, %s, %s]\n    rotation: ", G(L->W[9]).s, G(L->W[10]).s, G(L->W[11]).s);
        put_rot(b, L->W);
        ub_printf(b, "\n    markers:\n      %s_o: {}\n", L->name);
        if (ee >= 0 && r->L[ee].body == li) {
            const double *T = r->L[ee].T;
            ub_printf(b, "      ee_: {position: [%s, %s, %s], rotation: ", G(T[9]).s, G(T[10]).s, G(T[11]).s);
            put_rot(b, T);
            ub_printf(b, "}\n");
        }
        for (int k = 0; k < r->nj; k++) {
            ujoint *J = &r->J[k];
            if (J->type == UJ_FIXED || J->type == UJ_FLOATING) continue;
            double Z[9], F[12];
            zframe(J->axis, Z);
            tf_ident(F);
            memcpy(F, Z, sizeof Z);
            if (J->child == li) { /* the joint frame on the child: its origin, the axis */
                ub_printf(b, "      %s_c: {rotation: ", J->name);
                put_rot(b, F);
                ub_printf(b, "}\n");
            }
            if (r->L[J->parent].body == li) { /* the joint frame on the parent */
                double T[12];
                tf_mul(r->L[J->parent].T, J->O, T);
                tf_mul(T, F, F);
                ub_printf(b, "      %s_p: {position: [%s, %s, %s], rotation: ", J->name, G(F[9]).s, G(F[10]).s, G(F[11]).s);
                put_rot(b, F);
                ub_printf(b, "}\n");
            }
        }
    }
    ub_printf(b, "joints:\n");
    int anyj = 0;
    for (int k = 0; k < r->nj; k++) {
        ujoint *J = &r->J[k];
        if (J->type == UJ_FIXED || J->type == UJ_FLOATING) continue;
        const char *ty = J->type == UJ_PRISMATIC ? "prismatic" : J->type == UJ_PLANAR ? "planar" : "revolute";
        ub_printf(b, "  %s: {type: %s, i: %s_c, j: %s_p", J->name, ty, J->name, J->name);
        if (J->type != UJ_PLANAR && !o->absolute) ub_printf(b, ", q0: %s", J->name);
        ub_printf(b, "}\n");
        anyj = 1;
    }
    if (!anyj) ub_printf(b, "  {}\n");
    ub_printf(b, "forces:\n  gravity_: {type: gravity, g: [%s, %s, %s]}\n", G(o->g[0]).s, G(o->g[1]).s, G(o->g[2]).s);
    for (int k = 0; k < r->nj; k++) {
        ujoint *J = &r->J[k];
        if (J->type == UJ_FIXED || J->type == UJ_FLOATING || J->type == UJ_PLANAR) continue;
        char gen[200];
        if (J->damping > 0) snprintf(gen, sizeof gen, "u_%s - %s*JV(%s)", J->name, G(J->damping).s, J->name);
        else snprintf(gen, sizeof gen, "u_%s", J->name);
        ub_printf(b, "  effort_%s: {type: force, i: %s_c, frame: %s_p, reaction: %s_p, %s: [0, 0, \"%s\"]}\n", J->name,
                  J->name, J->name, J->name, J->type == UJ_PRISMATIC ? "force" : "torque", gen);
    }
    ub_printf(b, "outputs:\n");
    for (int k = 0; k < r->nj; k++) {
        ujoint *J = &r->J[k];
        if (J->type == UJ_FIXED || J->type == UJ_FLOATING || J->type == UJ_PLANAR) continue;
        ub_printf(b, "  q_%s: \"JQ(%s)\"\n", J->name, J->name);
    }
    if (ee >= 0) {
        static const char *nm[6] = {"x", "y", "z", "ax", "ay", "az"};
        static const char *fn[6] = {"DX", "DY", "DZ", "AX", "AY", "AZ"};
        for (int k = 0; k < 6; k++) ub_printf(b, "  ee_%s: \"%s(ee_, world_)\"\n", nm[k], fn[k]);
    }
    (void)nmov;
    ub_printf(b, "linearize: %s\n", o->linearize ? o->linearize : "{at: given}");
    return b->oom ? mbl_error(r->st, MBL_ENOMEM, "out of memory translating %s", r->file) : 0;
}

int mbl_urdf_to_mech(const char *xml, size_t len, const char *file, const mbl_urdf_opts *opt, const mbl_setting *sets,
                     int nsets, char **yaml, mbl_status *st)
{
    *yaml = NULL;
    mbl_urdf_opts dflt;
    mbl_urdf_opts_default(&dflt);
    const mbl_urdf_opts *o = opt ? opt : &dflt;
    ureader r;
    memset(&r, 0, sizeof r);
    r.file = file ? file : "<urdf>";
    r.st = st;
    if (len > (size_t)0x7fffffff) return mbl_error(st, MBL_EIO, "%s: the file is too large", r.file);
    xmlDoc *doc = xmlReadMemory(xml, (int)len, r.file, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    if (!doc) {
        const xmlError *e = xmlGetLastError();
        int rc = mbl_error(st, MBL_EPARSE, "%s:%d: not well-formed XML: %s", r.file, e ? e->line : 0,
                           e && e->message ? e->message : "unknown error");
        /* the message ends with a newline */
        size_t n = strlen(st ? st->msg : "");
        if (st && n && st->msg[n - 1] == '\n') st->msg[n - 1] = '\0';
        xmlResetLastError();
        return rc;
    }
    int rc = 0;
    ubuf b = {0};
    xmlNode *root = xmlDocGetRootElement(doc);
    char *robot = NULL;
    if (!root || strcmp((const char *)root->name, "robot")) {
        rc = mbl_error(st, MBL_EMODEL, "%s:%d: the root element must be <robot>", r.file, root ? LINE_OF(root) : 1);
        goto done;
    }
    {
        xmlChar *rn = xmlGetProp(root, (const xmlChar *)"name");
        robot = sanitize(rn ? (const char *)rn : "robot");
        if (rn) xmlFree(rn);
        if (!robot) {
            rc = mbl_error(st, MBL_ENOMEM, "out of memory");
            goto done;
        }
    }
    for (xmlNode *c = root->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE) continue;
        if (!strcmp((const char *)c->name, "link")) r.nl++;
        if (!strcmp((const char *)c->name, "joint")) r.nj++;
    }
    if (!r.nl) {
        rc = mbl_error(st, MBL_EMODEL, "%s:%d: the robot has no links", r.file, LINE_OF(root));
        goto done;
    }
    r.L = mbl_calloc((size_t)r.nl, sizeof *r.L);
    r.J = mbl_calloc((size_t)(r.nj ? r.nj : 1), sizeof *r.J);
    if (!r.L || !r.J) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    int il = 0, ij = 0;
    for (xmlNode *c = root->children; c && !rc; c = c->next) {
        if (c->type != XML_ELEMENT_NODE) continue;
        int isl = !strcmp((const char *)c->name, "link"), isj = !strcmp((const char *)c->name, "joint");
        if (!isl && !isj) continue;
        xmlChar *nm = xmlGetProp(c, (const xmlChar *)"name");
        if (!nm) {
            rc = uerr(&r, LINE_OF(c), "a <%s> without a name", isl ? "link" : "joint");
            break;
        }
        char *raw = (char *)nm;
        char *san = sanitize(raw);
        if (!san) {
            xmlFree(nm);
            rc = mbl_error(st, MBL_ENOMEM, "out of memory");
            break;
        }
        if (isl) {
            r.L[il].raw = raw, r.L[il].name = san, r.L[il].line = LINE_OF(c);
            r.L[il].parent_joint = -1;
            il++;
        } else {
            r.J[ij].raw = raw, r.J[ij].name = san, r.J[ij].line = LINE_OF(c);
            ij++;
        }
    }
    /* names: unique (after sanitizing, links and joints apart) */
    for (int a = 0; a < r.nl && !rc; a++)
        for (int k = 0; k < a && !rc; k++)
            if (!strcmp(r.L[a].name, r.L[k].name))
                rc = uerr(&r, r.L[a].line, "link '%s': its name is used by the link at line %d%s", r.L[a].raw,
                          r.L[k].line, strcmp(r.L[a].raw, r.L[k].raw) ? " (after replacing characters other than letters, digits and _)" : "");
    for (int a = 0; a < r.nj && !rc; a++)
        for (int k = 0; k < a && !rc; k++)
            if (!strcmp(r.J[a].name, r.J[k].name))
                rc = uerr(&r, r.J[a].line, "joint '%s': its name is used by the joint at line %d%s", r.J[a].raw,
                          r.J[k].line, strcmp(r.J[a].raw, r.J[k].raw) ? " (after replacing characters other than letters, digits and _)" : "");
    il = ij = 0;
    for (xmlNode *c = root->children; c && !rc; c = c->next) {
        if (c->type != XML_ELEMENT_NODE) continue;
        if (!strcmp((const char *)c->name, "link")) rc = read_link(&r, c, &r.L[il++]);
        else if (!strcmp((const char *)c->name, "joint")) rc = read_joint(&r, c, &r.J[ij++]);
    }
    if (rc) goto done;
    /* the tree: every link the child of at most one joint, one root, no cycle */
    for (int k = 0; k < r.nj && !rc; k++) {
        ulink *c = &r.L[r.J[k].child];
        if (c->parent_joint >= 0)
            rc = uerr(&r, r.J[k].line, "joint '%s': link '%s' is already the child of joint '%s' (a URDF is a tree)",
                      r.J[k].raw, c->raw, r.J[c->parent_joint].raw);
        else
            c->parent_joint = k;
    }
    if (rc) goto done;
    int rootl = -1;
    for (int l = 0; l < r.nl && !rc; l++)
        if (r.L[l].parent_joint < 0) {
            if (rootl >= 0)
                rc = uerr(&r, r.L[l].line, "links '%s' and '%s' are both roots (no joint has them as child)",
                          r.L[rootl].raw, r.L[l].raw);
            rootl = l;
        }
    if (!rc && rootl < 0) rc = uerr(&r, LINE_OF(root), "every link is a joint's child: the joints form a loop");
    if (rc) goto done;
    /* depth-ordered walk: body of each link (lumping fixed joints), its transform in the body, its
     * world pose at the configuration */
    {
        int *ord = mbl_calloc((size_t)r.nl, sizeof *ord), no = 0;
        if (!ord) {
            rc = mbl_error(st, MBL_ENOMEM, "out of memory");
            goto done;
        }
        ord[no++] = rootl;
        r.L[rootl].body = rootl;
        tf_ident(r.L[rootl].T);
        tf_ident(r.L[rootl].W);
        for (int h = 0; h < no; h++) {
            int l = ord[h];
            for (int k = 0; k < r.nj; k++) {
                ujoint *J = &r.J[k];
                if (J->parent != l) continue;
                ulink *c = &r.L[J->child];
                for (int s = 0; s < nsets; s++)
                    if (sets[s].name && !strcmp(sets[s].name, J->name)) J->q = sets[s].value;
                double M[12];
                tf_ident(M);
                if (J->type == UJ_REVOLUTE || J->type == UJ_CONTINUOUS) axis_R(J->axis, J->q, M);
                if (J->type == UJ_PRISMATIC)
                    for (int i = 0; i < 3; i++) M[9 + i] = J->q * J->axis[i];
                double X[12];
                tf_mul(J->O, M, X);
                tf_mul(r.L[l].W, X, c->W);
                if (J->type == UJ_FIXED) {
                    c->body = r.L[l].body;
                    tf_mul(r.L[l].T, J->O, c->T);
                } else {
                    c->body = J->child;
                    tf_ident(c->T);
                }
                if (no == r.nl) break;
                ord[no++] = J->child;
            }
        }
        if (no != r.nl) {
            for (int l = 0; l < r.nl; l++) {
                int seen = 0;
                for (int h = 0; h < no; h++) seen |= ord[h] == l;
                if (!seen) {
                    rc = uerr(&r, r.L[l].line, "link '%s' is not connected to the root link '%s'", r.L[l].raw,
                              r.L[rootl].raw);
                    break;
                }
            }
        }
        /* lump: each body's own inertial first, then its fixed-joint links */
        ulink *agg = mbl_calloc((size_t)r.nl, sizeof *agg);
        if (!rc && !agg) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        for (int l = 0; l < r.nl && !rc; l++) {
            ulink t = r.L[l];
            ulink *B = &agg[r.L[l].body];
            lump(B, &t);
        }
        for (int l = 0; l < r.nl && !rc; l++) {
            if (r.L[l].body != l) continue;
            r.L[l].m = agg[l].m;
            memcpy(r.L[l].c, agg[l].c, sizeof agg[l].c);
            memcpy(r.L[l].I, agg[l].I, sizeof agg[l].I);
        }
        mbl_free(agg);
        mbl_free(ord);
        if (rc) goto done;
    }
    for (int l = 0; l < r.nl && !rc; l++) {
        ulink *L = &r.L[l];
        if (L->body != l || l == rootl) continue;
        if (!(L->m > 0))
            rc = uerr(&r, L->line,
                      "link '%s' has no mass (no <inertial>, or mass 0, also with the links fixed to it) but moves on "
                      "joint '%s': give it an inertial",
                      L->raw, r.J[L->parent_joint].raw);
    }
    if (rc) goto done;
    int ee = -1;
    if (o->end_effector) {
        ee = find_link(&r, o->end_effector);
        if (ee < 0) {
            rc = mbl_error(st, MBL_EMODEL, "%s: no link named '%s' (end_effector)", r.file, o->end_effector);
            goto done;
        }
    } else {
        ee = r.nl - 1;
    }
    /* efforts that hold the named joints at the configuration: u_k = -Q_k, with the gravity
     * generalized force Q_k = sum over the bodies it carries of m g . (u_k x (c - s_k)) for a
     * revolute joint (axis u_k through s_k), m g . u_k for a prismatic one */
    for (const char *const *h = o->hold; h && *h && !rc; h++) {
        int all = !strcmp(*h, "all"), found = 0;
        for (int k = 0; k < r.nj; k++) {
            ujoint *J = &r.J[k];
            if (!all && strcmp(J->raw, *h) && strcmp(J->name, *h)) continue;
            found = 1;
            if (J->type != UJ_REVOLUTE && J->type != UJ_CONTINUOUS && J->type != UJ_PRISMATIC) {
                if (!all) rc = mbl_error(st, MBL_EMODEL, "%s: hold: joint '%s' has no effort input (revolute, continuous or prismatic)", r.file, *h);
                continue;
            }
            double F[12];
            tf_mul(r.L[J->parent].W, J->O, F); /* the joint frame at the configuration, before its motion */
            double u[3], sk[3] = {F[9], F[10], F[11]};
            for (int i = 0; i < 3; i++) u[i] = F[i] * J->axis[0] + F[3 + i] * J->axis[1] + F[6 + i] * J->axis[2];
            double Q = 0;
            for (int l = 0; l < r.nl; l++) {
                if (r.L[l].body != l || l == rootl) continue;
                int below = 0; /* is joint k on the path from body l to the root? */
                for (int x = l; x >= 0 && r.L[x].parent_joint >= 0; x = r.J[r.L[x].parent_joint].parent)
                    if (r.L[x].parent_joint == k) below = 1;
                if (!below) continue;
                const double *W = r.L[l].W, *cl = r.L[l].c;
                double c[3];
                for (int i = 0; i < 3; i++) c[i] = W[9 + i] + W[i] * cl[0] + W[3 + i] * cl[1] + W[6 + i] * cl[2];
                double v[3];
                if (J->type == UJ_PRISMATIC) memcpy(v, u, sizeof v);
                else {
                    double d[3] = {c[0] - sk[0], c[1] - sk[1], c[2] - sk[2]};
                    v[0] = u[1] * d[2] - u[2] * d[1], v[1] = u[2] * d[0] - u[0] * d[2], v[2] = u[0] * d[1] - u[1] * d[0];
                }
                Q += r.L[l].m * (o->g[0] * v[0] + o->g[1] * v[1] + o->g[2] * v[2]);
            }
            J->hold = -Q;
        }
        if (!found && !rc) rc = mbl_error(st, MBL_EMODEL, "%s: hold: no joint named '%s'", r.file, *h);
    }
    if (!rc) rc = emit(&r, o, robot, rootl, ee, &b);
done:
    if (!rc) {
        *yaml = b.s;
        b.s = NULL;
    }
    mbl_free(b.s);
    mbl_free(robot);
    for (int l = 0; l < r.nl && r.L; l++) {
        mbl_free(r.L[l].name);
        if (r.L[l].raw) xmlFree((xmlChar *)r.L[l].raw);
    }
    for (int k = 0; k < r.nj && r.J; k++) {
        mbl_free(r.J[k].name);
        if (r.J[k].raw) xmlFree((xmlChar *)r.J[k].raw);
    }
    mbl_free(r.L);
    mbl_free(r.J);
    xmlFreeDoc(doc);
    return rc;
}

/* ---- `model: urdf` in a YAML file ------------------------------------------------------------ */

/* a YAML node as flow text, every scalar double-quoted (so expressions keep their meaning) */
static int flow(yaml_document_t *doc, const yaml_node_t *n, ubuf *b, int depth)
{
    if (!n || depth > 32) return -1;
    if (n->type == YAML_SCALAR_NODE) {
        ub_printf(b, "\"");
        for (size_t i = 0; i < n->data.scalar.length; i++) {
            unsigned char c = n->data.scalar.value[i];
            if (c == '"' || c == '\\') ub_printf(b, "\\%c", c);
            else if (c < 0x20) ub_printf(b, "\\x%02x", c);
            else ub_printf(b, "%c", c);
        }
        ub_printf(b, "\"");
        return 0;
    }
    if (n->type == YAML_SEQUENCE_NODE) {
        ub_printf(b, "[");
        for (yaml_node_item_t *p = n->data.sequence.items.start; p < n->data.sequence.items.top; p++) {
            if (p != n->data.sequence.items.start) ub_printf(b, ", ");
            if (flow(doc, yaml_document_get_node(doc, *p), b, depth + 1)) return -1;
        }
        ub_printf(b, "]");
        return 0;
    }
    ub_printf(b, "{");
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        if (p != n->data.mapping.pairs.start) ub_printf(b, ", ");
        if (flow(doc, yaml_document_get_node(doc, p->key), b, depth + 1)) return -1;
        ub_printf(b, ": ");
        if (flow(doc, yaml_document_get_node(doc, p->value), b, depth + 1)) return -1;
    }
    ub_printf(b, "}");
    return 0;
}

static const char *ysc(const yaml_node_t *n) { return (const char *)n->data.scalar.value; }

int mbl_urdf_from_yaml(yaml_document_t *doc, const yaml_node_t *root, const char *file, const mbl_setting *sets,
                       int nsets, char **yaml, mbl_status *st)
{
    *yaml = NULL;
    mbl_urdf_opts o;
    mbl_urdf_opts_default(&o);
    const yaml_node_t *fn = NULL;
    ubuf lin = {0};
    const char *hold[256];
    int nhold = 0;
    int rc = 0;
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top && !rc; p++) {
        yaml_node_t *k = yaml_document_get_node(doc, p->key), *v = yaml_document_get_node(doc, p->value);
        const char *key = k->type == YAML_SCALAR_NODE ? ysc(k) : "";
        int scalar = v->type == YAML_SCALAR_NODE;
        if (!strcmp(key, "model")) continue;
        if (!strcmp(key, "file") && scalar) fn = v;
        else if (!strcmp(key, "name") && scalar) o.name = ysc(v);
        else if (!strcmp(key, "end_effector") && scalar) o.end_effector = ysc(v);
        else if (!strcmp(key, "coordinates") && scalar && (!strcmp(ysc(v), "relative") || !strcmp(ysc(v), "absolute")))
            o.absolute = !strcmp(ysc(v), "absolute");
        else if (!strcmp(key, "tree_dynamics") && scalar && (!strcmp(ysc(v), "recursive") || !strcmp(ysc(v), "symbolic")))
            o.tree_symbolic = !strcmp(ysc(v), "symbolic");
        else if (!strcmp(key, "gravity") && v->type == YAML_SEQUENCE_NODE &&
                 v->data.sequence.items.top - v->data.sequence.items.start == 3) {
            for (int i = 0; i < 3 && !rc; i++) {
                yaml_node_t *x = yaml_document_get_node(doc, v->data.sequence.items.start[i]);
                char *end;
                o.g[i] = x->type == YAML_SCALAR_NODE ? strtod(ysc(x), &end) : NAN;
                if (x->type != YAML_SCALAR_NODE || end == ysc(x) || *end || !isfinite(o.g[i]))
                    rc = mbl_yaml_error(st, MBL_EMODEL, file, x, "gravity: expected 3 numbers");
            }
        } else if (!strcmp(key, "hold") && (scalar || v->type == YAML_SEQUENCE_NODE)) {
            int n = scalar ? 1 : (int)(v->data.sequence.items.top - v->data.sequence.items.start);
            if (n > 255) rc = mbl_yaml_error(st, MBL_EMODEL, file, v, "hold: at most 255 joints");
            for (int i = 0; i < n && !rc; i++) {
                yaml_node_t *x = scalar ? v : yaml_document_get_node(doc, v->data.sequence.items.start[i]);
                if (x->type != YAML_SCALAR_NODE) rc = mbl_yaml_error(st, MBL_EMODEL, file, x, "hold: expected joint names or all");
                else hold[nhold++] = ysc(x);
            }
            hold[nhold] = NULL;
            o.hold = hold;
        } else if (!strcmp(key, "linearize") && v->type == YAML_MAPPING_NODE) {
            if (flow(doc, v, &lin, 0)) rc = mbl_yaml_error(st, MBL_EMODEL, file, v, "linearize: nested too deeply");
        } else
            rc = mbl_yaml_error(st, MBL_EMODEL, file, k,
                                "model: urdf: unexpected '%s' (expected file, name, coordinates: relative|absolute, "
                                "tree_dynamics: recursive|symbolic, "
                                "gravity: [gx, gy, gz], end_effector: link, hold: [joints] or all, linearize: {...})",
                                key);
    }
    if (!rc && !fn) rc = mbl_yaml_error(st, MBL_EMODEL, file, root, "model: urdf needs 'file: robot.urdf'");
    if (!rc && lin.oom) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    char *path = NULL, *text = NULL;
    if (!rc) {
        /* the URDF's path is relative to the YAML file's directory */
        const char *f = ysc(fn), *slash = file ? strrchr(file, '/') : NULL;
        size_t dl = (f[0] != '/' && slash) ? (size_t)(slash - file) + 1 : 0;
        path = mbl_malloc(dl + strlen(f) + 1);
        if (!path) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        else {
            memcpy(path, file, dl);
            strcpy(path + dl, f);
        }
    }
    size_t len = 0;
    if (!rc) {
        FILE *fp = fopen(path, "rb");
        if (!fp) rc = mbl_yaml_error(st, MBL_EIO, file, fn, "cannot open the URDF file '%s'", path);
        else {
            size_t cap = 1 << 16;
            text = mbl_malloc(cap);
            while (text && !rc) {
                size_t got = fread(text + len, 1, cap - len, fp);
                len += got;
                if (len < cap) break;
                if (cap > ((size_t)1 << 30)) {
                    rc = mbl_yaml_error(st, MBL_EIO, file, fn, "the URDF file '%s' is larger than 1 GiB", path);
                    break;
                }
                char *t = mbl_realloc(text, 2 * cap);
                if (!t) break;
                text = t;
                cap *= 2;
            }
            if (!text && !rc) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
            fclose(fp);
        }
    }
    if (!rc) {
        o.linearize = lin.s;
        rc = mbl_urdf_to_mech(text, len, path, &o, sets, nsets, yaml, st);
    }
    mbl_free(text);
    mbl_free(path);
    mbl_free(lin.s);
    return rc;
}
