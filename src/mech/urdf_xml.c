/* URDF import, reading the XML (libxml2): the robot's links (their inertials turned into link
 * axes) and joints, their names made usable in expressions and checked to be unique, and the
 * joints checked to make a tree of the links (see urdf.h). */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "core/vec3.h"
#include "mblin/status.h"
#include "mech/urdf_internal.h"

/* ---- XML helpers ---- */

int mech_urdf_error(ureader *r, int line, const char *f, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, f);
    vsnprintf(msg, sizeof msg, f, ap);
    va_end(ap);
    return mbl_error(r->st, MBL_EMODEL, "%s:%d: %s", r->file, line, msg);
}

/* The longest name (robot, link, joint, a joint's type and its links) and the longest other
 * attribute value (numbers) the reader takes, in bytes: longer ones are refused with their line. */
#define NAME_MAX_BYTES 256
#define VALUE_MAX_BYTES 1024

/* an attribute's value, NULL when absent; longer than `max` bytes: refused (*rc set) */
static xmlChar *get_attr(ureader *r, xmlNode *n, const char *attr, size_t max, int *rc)
{
    xmlChar *s = n ? xmlGetProp(n, (const xmlChar *)attr) : NULL;
    if (s && strlen((const char *)s) > max) {
        *rc = mech_urdf_error(r, LINE_OF(n), "<%s>: %s is longer than %zu bytes", (const char *)n->name, attr, max);
        xmlFree(s);
        return NULL;
    }
    return s;
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
    int rc = 0;
    xmlChar *s = get_attr(r, n, attr, VALUE_MAX_BYTES, &rc);
    if (!s) return rc;
    const char *p = (const char *)s;
    int k = 0;
    while (!rc) {
        while (isspace((unsigned char)*p)) p++;
        if (!*p) break;
        char *end;
        double x = strtod(p, &end);
        if (end == p || k == count || !isfinite(x)) {
            rc = mech_urdf_error(r, LINE_OF(n), "%s: %s=\"%s\" must be %d finite number%s", what, attr, (const char *)s, count,
                                 count > 1 ? "s" : "");
            break;
        }
        v[k++] = x;
        p = end;
    }
    if (!rc && k != count)
        rc = mech_urdf_error(r, LINE_OF(n), "%s: %s=\"%s\" must be %d number%s", what, attr, (const char *)s, count,
                             count > 1 ? "s" : "");
    xmlFree(s);
    return rc;
}

static int origin_of(ureader *r, xmlNode *o, double T[12], const char *what)
{
    double xyz[3] = {0, 0, 0}, rpy[3] = {0, 0, 0};
    int rc = attr_nums(r, o, "xyz", 3, xyz, what);
    if (!rc) rc = attr_nums(r, o, "rpy", 3, rpy, what);
    mat3_rpy(rpy, T);
    memcpy(T + 9, xyz, sizeof xyz);
    return rc;
}

/* a name usable in expressions: letters, digits, _ (others become _); one that does not start
 * with a letter gets its element as a prefix (`1st_link` -> `link_1st_link`, `2nd-joint` ->
 * `joint_2nd_joint`), since a mechanism's names start with a letter (prefix NULL: `_`) */
static char *sanitize(const char *s, const char *prefix)
{
    size_t n = strlen(s), np = prefix ? strlen(prefix) : 1;
    char *o = mbl_malloc(n + np + 1);
    if (!o) return NULL;
    size_t k = 0;
    if (!isalpha((unsigned char)s[0])) {
        memcpy(o, prefix ? prefix : "_", np);
        k = np;
    }
    for (size_t i = 0; i < n; i++) o[k++] = (isalnum((unsigned char)s[i]) || s[i] == '_') ? s[i] : '_';
    o[k] = '\0';
    return o;
}

int mech_urdf_find_link(ureader *r, const char *raw)
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
    rigid_ident(L->T);
    if (!in) return 0; /* massless */
    xmlNode *ms = child(in, "mass"), *it = child(in, "inertia");
    if (!ms) return mech_urdf_error(r, LINE_OF(in), "%s: <inertial> without <mass>", what);
    double m = 0;
    int rc = 0;
    xmlChar *v = get_attr(r, ms, "value", VALUE_MAX_BYTES, &rc);
    if (rc) return rc;
    if (!v) return mech_urdf_error(r, LINE_OF(ms), "%s: <mass> without value", what);
    char *end;
    m = strtod((const char *)v, &end);
    int bad = end == (char *)v || *end || !isfinite(m) || m < 0;
    xmlFree(v);
    if (bad) return mech_urdf_error(r, LINE_OF(ms), "%s: the mass must be a number >= 0", what);
    double O[12];
    rc = origin_of(r, child(in, "origin"), O, what);
    if (rc) return rc;
    static const char *nm[6] = {"ixx", "iyy", "izz", "ixy", "ixz", "iyz"};
    double iv[6] = {0};
    for (int k = 0; k < 6 && it; k++) {
        xmlChar *s = get_attr(r, it, nm[k], VALUE_MAX_BYTES, &rc);
        if (rc) return rc;
        if (!s) continue;
        iv[k] = strtod((const char *)s, &end);
        bad = end == (char *)s || *end || !isfinite(iv[k]);
        xmlFree(s);
        if (bad) return mech_urdf_error(r, LINE_OF(it), "%s: inertia %s must be a number", what, nm[k]);
    }
    /* inertia in the inertial frame, turned into link axes: R I R^T */
    double Ii[9] = {iv[0], iv[3], iv[4], iv[3], iv[1], iv[5], iv[4], iv[5], iv[2]};
    mat3_rot_tensor(O, Ii, L->I);
    L->m = m;
    memcpy(L->c, O + 9, sizeof L->c);
    return 0;
}

static int read_joint(ureader *r, xmlNode *n, ujoint *J)
{
    char what[300];
    snprintf(what, sizeof what, "joint '%s'", J->raw);
    int rc = 0;
    xmlChar *t = get_attr(r, n, "type", NAME_MAX_BYTES, &rc);
    if (rc) return rc;
    if (!t) return mech_urdf_error(r, J->line, "%s: missing type", what);
    static const char *types[] = {"fixed", "revolute", "continuous", "prismatic", "floating", "planar"};
    J->type = -1;
    for (int k = 0; k < 6; k++)
        if (!strcmp((const char *)t, types[k])) J->type = k;
    if (J->type < 0)
        rc = mech_urdf_error(r, J->line, "%s: unknown type '%s' (revolute, continuous, prismatic, fixed, floating, planar)", what,
                             (const char *)t);
    xmlFree(t);
    if (rc) return rc;
    xmlNode *p = child(n, "parent"), *c = child(n, "child");
    if (!p || !c) return mech_urdf_error(r, J->line, "%s: needs <parent link=...> and <child link=...>", what);
    for (int s = 0; s < 2; s++) {
        xmlChar *l = get_attr(r, s ? c : p, "link", NAME_MAX_BYTES, &rc);
        if (rc) return rc;
        if (!l) return mech_urdf_error(r, J->line, "%s: <%s> without link", what, s ? "child" : "parent");
        int li = mech_urdf_find_link(r, (const char *)l);
        if (li < 0) rc = mech_urdf_error(r, LINE_OF(s ? c : p), "%s: no link named '%s'", what, (const char *)l);
        xmlFree(l);
        if (rc) return rc;
        if (s) J->child = li;
        else J->parent = li;
    }
    if (J->parent == J->child) return mech_urdf_error(r, J->line, "%s: parent and child are the same link", what);
    if ((rc = origin_of(r, child(n, "origin"), J->O, what))) return rc;
    J->axis[0] = 1, J->axis[1] = 0, J->axis[2] = 0;
    if ((rc = attr_nums(r, child(n, "axis"), "xyz", 3, J->axis, what))) return rc;
    double an = sqrt(vec3_dot(J->axis, J->axis));
    if (!(an > 0) && J->type != UJ_FIXED && J->type != UJ_FLOATING)
        return mech_urdf_error(r, J->line, "%s: the axis is zero", what);
    for (int k = 0; k < 3 && an > 0; k++) J->axis[k] /= an;
    xmlNode *dy = child(n, "dynamics");
    if (dy) {
        xmlChar *d = get_attr(r, dy, "damping", VALUE_MAX_BYTES, &rc);
        if (rc) return rc;
        if (d) {
            char *end;
            J->damping = strtod((const char *)d, &end);
            int bad = end == (char *)d || *end || !isfinite(J->damping) || J->damping < 0;
            xmlFree(d);
            if (bad) return mech_urdf_error(r, LINE_OF(dy), "%s: damping must be a number >= 0", what);
        }
    }
    return 0;
}

/* ---- the robot ---- */

/* A URDF has no use for a DTD's entities: a document that declares one is refused before any
 * attribute is read (xmlGetProp would expand a "billion laughs" set of internal entities into
 * gigabytes). Parsing itself keeps libxml2's own bounds: no XML_PARSE_NOENT (entities are not
 * substituted), no XML_PARSE_HUGE (its entity-amplification and size limits stay on), no
 * XML_PARSE_DTDLOAD and XML_PARSE_NONET (an external DTD or entity is never loaded). libxml2
 * keeps no line for a declaration; the message names the line of <robot>, after the DOCTYPE. */
static int refuse_entities(ureader *r, xmlDoc *doc)
{
    xmlDtd *d = doc->intSubset;
    for (xmlNode *c = d ? d->children : NULL; c; c = c->next)
        if (c->type == XML_ENTITY_DECL) {
            xmlNode *root = xmlDocGetRootElement(doc);
            return mech_urdf_error(r, root ? LINE_OF(root) : 1,
                                   "the DOCTYPE before <robot> declares entity '%.64s': a URDF may not declare entities",
                                   c->name ? (const char *)c->name : "");
        }
    return 0;
}

/* the XML document and its <robot> element, and the robot's name */
static int read_doc(ureader *r, const char *xml, size_t len, char **robot)
{
    mbl_status *st = r->st;
    if (len > (size_t)0x7fffffff) return mbl_error(st, MBL_EIO, "%s: the file is too large", r->file);
    /* read as UTF-8 whatever the declaration says, as ROS's parser (urdfdom, TinyXML-2) does: a
     * declared encoding went to iconv, whose failures libxml2 printed on stderr whatever the
     * options ("encoding error : input conversion failed", found by fuzz_urdf; the library never
     * prints); bytes that are not UTF-8 are refused as not well-formed */
    xmlDoc *doc = xmlReadMemory(xml, (int)len, r->file, "UTF-8", XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    if (!doc) {
        const xmlError *e = xmlGetLastError();
        int rc = mbl_error(st, MBL_EPARSE, "%s:%d: not well-formed XML: %s", r->file, e ? e->line : 0,
                           e && e->message ? e->message : "unknown error");
        /* libxml2's message ends with a newline, some with a space before it ("Detected an entity
         * reference loop \n", a billion laughs): the line ends at its last word */
        size_t n = strlen(st ? st->msg : "");
        while (st && n && isspace((unsigned char)st->msg[n - 1])) st->msg[--n] = '\0';
        xmlResetLastError();
        return rc;
    }
    r->doc = doc;
    int rc = refuse_entities(r, doc);
    if (rc) return rc;
    xmlNode *root = r->root = xmlDocGetRootElement(doc);
    if (!root || strcmp((const char *)root->name, "robot"))
        return mbl_error(st, MBL_EMODEL, "%s:%d: the root element must be <robot>", r->file, root ? LINE_OF(root) : 1);
    xmlChar *rn = get_attr(r, root, "name", NAME_MAX_BYTES, &rc);
    if (rc) return rc;
    /* the model's title, quoted in the generated text: no prefix needed ("2nd_bot" stays so) */
    *robot = sanitize(rn ? (const char *)rn : "robot", "");
    if (rn) xmlFree(rn);
    if (!*robot) return mbl_error(st, MBL_ENOMEM, "out of memory");
    return 0;
}

/* the links and joints counted, their names read (raw and sanitized) */
static int read_names(ureader *r)
{
    mbl_status *st = r->st;
    xmlNode *root = r->root;
    int rc = 0;
    for (xmlNode *c = root->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE) continue;
        if (!strcmp((const char *)c->name, "link")) r->nl++;
        if (!strcmp((const char *)c->name, "joint")) r->nj++;
    }
    if (!r->nl) return mbl_error(st, MBL_EMODEL, "%s:%d: the robot has no links", r->file, LINE_OF(root));
    r->L = mbl_calloc((size_t)r->nl, sizeof *r->L);
    r->J = mbl_calloc((size_t)(r->nj ? r->nj : 1), sizeof *r->J);
    if (!r->L || !r->J) return mbl_error(st, MBL_ENOMEM, "out of memory");
    int il = 0, ij = 0;
    for (xmlNode *c = root->children; c && !rc; c = c->next) {
        if (c->type != XML_ELEMENT_NODE) continue;
        int isl = !strcmp((const char *)c->name, "link"), isj = !strcmp((const char *)c->name, "joint");
        if (!isl && !isj) continue;
        xmlChar *nm = get_attr(r, c, "name", NAME_MAX_BYTES, &rc);
        if (rc) break;
        if (!nm) {
            rc = mech_urdf_error(r, LINE_OF(c), "a <%s> without a name", isl ? "link" : "joint");
            break;
        }
        char *raw = (char *)nm;
        char *san = sanitize(raw, isl ? "link_" : "joint_");
        if (!san) {
            xmlFree(nm);
            rc = mbl_error(st, MBL_ENOMEM, "out of memory");
            break;
        }
        if (isl) {
            r->L[il].raw = raw, r->L[il].name = san, r->L[il].line = LINE_OF(c);
            r->L[il].parent_joint = -1;
            il++;
        } else {
            r->J[ij].raw = raw, r->J[ij].name = san, r->J[ij].line = LINE_OF(c);
            ij++;
        }
    }
    return rc;
}

/* names: unique (after sanitizing, links and joints apart) */
static int unique_names(ureader *r)
{
    int rc = 0;
    for (int a = 0; a < r->nl && !rc; a++)
        for (int k = 0; k < a && !rc; k++)
            if (!strcmp(r->L[a].name, r->L[k].name))
                rc = mech_urdf_error(r, r->L[a].line, "link '%s': its name is used by the link at line %d%s", r->L[a].raw,
                                     r->L[k].line, strcmp(r->L[a].raw, r->L[k].raw) ? " (after making it a name: characters other than letters, digits and _ replaced by _, a prefix link_ or joint_ before a name that does not start with a letter)" : "");
    for (int a = 0; a < r->nj && !rc; a++)
        for (int k = 0; k < a && !rc; k++)
            if (!strcmp(r->J[a].name, r->J[k].name))
                rc = mech_urdf_error(r, r->J[a].line, "joint '%s': its name is used by the joint at line %d%s", r->J[a].raw,
                                     r->J[k].line, strcmp(r->J[a].raw, r->J[k].raw) ? " (after making it a name: characters other than letters, digits and _ replaced by _, a prefix link_ or joint_ before a name that does not start with a letter)" : "");
    return rc;
}

/* the tree: every link the child of at most one joint, one root, no cycle */
static int find_root(ureader *r, int *rootl)
{
    int rc = 0;
    for (int k = 0; k < r->nj && !rc; k++) {
        ulink *c = &r->L[r->J[k].child];
        if (c->parent_joint >= 0)
            rc = mech_urdf_error(r, r->J[k].line, "joint '%s': link '%s' is already the child of joint '%s' (a URDF is a tree)",
                                 r->J[k].raw, c->raw, r->J[c->parent_joint].raw);
        else
            c->parent_joint = k;
    }
    if (rc) return rc;
    *rootl = -1;
    for (int l = 0; l < r->nl && !rc; l++)
        if (r->L[l].parent_joint < 0) {
            if (*rootl >= 0)
                rc = mech_urdf_error(r, r->L[l].line, "links '%s' and '%s' are both roots (no joint has them as child)",
                                     r->L[*rootl].raw, r->L[l].raw);
            *rootl = l;
        }
    if (!rc && *rootl < 0) rc = mech_urdf_error(r, LINE_OF(r->root), "every link is a joint's child: the joints form a loop");
    return rc;
}

int mech_urdf_read(ureader *r, const char *xml, size_t len, char **robot, int *rootl)
{
    int rc = read_doc(r, xml, len, robot);
    if (!rc) rc = read_names(r);
    if (!rc) rc = unique_names(r);
    int il = 0, ij = 0;
    for (xmlNode *c = r->root ? r->root->children : NULL; c && !rc; c = c->next) {
        if (c->type != XML_ELEMENT_NODE) continue;
        if (!strcmp((const char *)c->name, "link")) rc = read_link(r, c, &r->L[il++]);
        else if (!strcmp((const char *)c->name, "joint")) rc = read_joint(r, c, &r->J[ij++]);
    }
    if (!rc) rc = find_root(r, rootl);
    return rc;
}

void mech_urdf_free(ureader *r)
{
    for (int l = 0; l < r->nl && r->L; l++) {
        mbl_free(r->L[l].name);
        if (r->L[l].raw) xmlFree((xmlChar *)r->L[l].raw);
    }
    for (int k = 0; k < r->nj && r->J; k++) {
        mbl_free(r->J[k].name);
        if (r->J[k].raw) xmlFree((xmlChar *)r->J[k].raw);
    }
    mbl_free(r->L);
    mbl_free(r->J);
    xmlFreeDoc(r->doc);
}
