/* `model: mechanism` -> equation level. See mechanism.h and docs/mechanism.md.
 *
 * Every body contributes coordinates (planar x, y, th; spatial x, y, z, e0..e3 with the
 * normalization constraint; point x, y[, z]) and generated variables: the rotation matrix
 * (_A_<body>_rc), the global angular velocity (_w_<body>_k), every marker's global position
 * (_p_<marker>_k) and axes (_x_/_y_/_z_<marker>_k). Joints become holonomic constraints written
 * with those variables, force elements become generalized forces by virtual power (a force f at
 * a point p of a body with origin r: Q_r = f, and the moment N = (p - r) x f gives Q_theta = N_z
 * (planar) or Q_e = 2 E(e)^T N (Euler parameters)), gravity and the inertia become energies. */
#include "model/mechanism.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lapacke.h>
#undef I /* complex.h (through lapacke.h) defines it; a body's inertia is B->I here */

#include "mblin/expr.h"

enum { KIND_GROUND, KIND_PLANAR, KIND_SPATIAL, KIND_POINT };

typedef struct body {
    const char *name;
    int kind;
    int line, col;
    const char *mass, *I[6], *cm[3]; /* texts (NULL for ground) */
    char *r[3];                      /* origin position (coordinate names or "0") */
    char *A[9];                      /* rotation matrix, row-major texts */
    char *w[3];                      /* global angular velocity texts */
    char *th;                        /* planar angle coordinate (NULL otherwise) */
    char *e[4];                      /* Euler parameter coordinates (spatial) */
    char *F[3], *N[3];               /* accumulated force and moment about the origin (NULL = none) */
    double R0[9];                    /* orientation in the file's configuration (column-major; spatial) */
    double q0[4];                    /* its Euler parameters (the coordinates' initial values) */
    int oset;                        /* the --set its orientation came from, or -1 */
} body;

typedef struct marker {
    const char *name;
    int body;
    int line, col;
    char *p[3];        /* global position: variable names */
    char *ax[3][3];    /* ax[a][k]: component k of axis a (x, y, z) in global: variable names */
    char *phi;         /* planar: global angle text */
    double R0[9];      /* spatial: global axes in the file's configuration (column-major) */
    double mq[4];      /* spatial: Euler parameters of the marker relative to its body */
    int oset;          /* the --set its orientation (or its body's) came from, or -1 */
} marker;

typedef struct joint {
    const char *name;
    const char *type;
    int i, j; /* markers */
    int line, col;
    const char *jq; /* spatial rotation angle variable, once generated */
    /* reaction measures: the joint's constraints are c0 .. c0 + nc - 1 (0-based, in the model's
     * order); fg[k] = dPhi_k/dp_i (the force on i's body at p_i is -sum lambda_k fg[k]) and mg[k]
     * the rotation gradient of Phi_k for i's body (its torque is -sum lambda_k mg[k]); NULL: zero */
    int c0, nc;
    const char *fg[6][3], *mg[6][3];
} joint;

/* open-addressing hash of names -> index (markers, bodies, joints are looked up by name often) */
typedef struct nameset {
    const char **key;
    int *idx;
    size_t cap, n;
} nameset;

static size_t name_hash(const char *s, size_t len)
{
    size_t h = 1469598103934665603u;
    for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211u;
    return h;
}

static int ns_find(const nameset *t, const char *name, size_t len)
{
    if (!t->cap) return -1;
    for (size_t h = name_hash(name, len) & (t->cap - 1);; h = (h + 1) & (t->cap - 1)) {
        if (!t->key[h]) return -1;
        if (strlen(t->key[h]) == len && !strncmp(t->key[h], name, len)) return t->idx[h];
    }
}

static int ns_add(nameset *t, const char *name, int idx)
{
    if (2 * (t->n + 1) > t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        const char **k = mbl_calloc(cap, sizeof *k);
        int *v = mbl_calloc(cap, sizeof *v);
        if (!k || !v) {
            mbl_free(k);
            mbl_free(v);
            return -1;
        }
        for (size_t i = 0; i < t->cap; i++)
            if (t->key[i]) {
                size_t h = name_hash(t->key[i], strlen(t->key[i])) & (cap - 1);
                while (k[h]) h = (h + 1) & (cap - 1);
                k[h] = t->key[i];
                v[h] = t->idx[i];
            }
        mbl_free(t->key);
        mbl_free(t->idx);
        t->key = k;
        t->idx = v;
        t->cap = cap;
    }
    size_t h = name_hash(name, strlen(name)) & (t->cap - 1);
    while (t->key[h]) h = (h + 1) & (t->cap - 1);
    t->key[h] = name;
    t->idx[h] = idx;
    t->n++;
    return 0;
}

static void ns_free(nameset *t)
{
    mbl_free(t->key);
    mbl_free(t->idx);
}

typedef struct mech {
    nameset hb, hm, hj; /* bodies, markers, joints by name */
    yaml_document_t *doc;
    const char *file;
    mbl_src *src;
    mbl_status *st;
    int planar;
    char **arena;
    int narena, carena;
    int oom;
    mblx_graph *g;
    double *pval;
    int np_eval;
    const mbl_setting *sets; /* --set overrides */
    int nsets;
    int *pset;  /* per parameter: the --set it comes from (directly or through its expression), or -1 */
    int used_set; /* the --set that the numbers evaluated since set_track() came from, or -1 */
    body *b;
    int nb, cb;
    marker *mk;
    int nm, cm;
    joint *jt;
    int nj, cj;
    int nstate; /* generated state variable counter */
    struct drv {
        const char *elem, *part; /* "driver 'spin'", "motion" */
        const yaml_node_t *at;   /* the text's node */
        const char *text;        /* with its measures expanded */
        int driver;
    } *drv;                      /* user texts inside constraints, checked once the variables are read */
    int ndrv, cdrv;
} mech;

/* ---- small utilities ------------------------------------------------------------------------ */

static char *keep(mech *M, char *s)
{
    if (!s) {
        M->oom = 1;
        return NULL;
    }
    if (M->narena == M->carena) {
        int cap = M->carena ? 2 * M->carena : 256;
        char **a = mbl_realloc_array(M->arena, (size_t)cap, sizeof *a);
        if (!a) {
            mbl_free(s);
            M->oom = 1;
            return NULL;
        }
        M->arena = a;
        M->carena = cap;
    }
    M->arena[M->narena++] = s;
    return s;
}

/* printf into a string owned by the arena; "" on out of memory (the flag is then set) */
static char *fmt(mech *M, const char *f, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static char *fmt(mech *M, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    int n = vsnprintf(NULL, 0, f, ap);
    va_end(ap);
    if (n < 0) {
        M->oom = 1;
        return (char *)"";
    }
    char *s = mbl_malloc((size_t)n + 1);
    if (!s) {
        M->oom = 1;
        return (char *)"";
    }
    va_start(ap, f);
    vsnprintf(s, (size_t)n + 1, f, ap);
    va_end(ap);
    return keep(M, s) ? s : (char *)"";
}

static char *num(mech *M, double v) { return fmt(M, "%.17g", v); }

/* a growable string for long sums (kinetic and potential energy of many bodies) */
typedef struct sbuf {
    char *s;
    size_t n, cap;
} sbuf;

static void sb_add(mech *M, sbuf *b, const char *a, const char *t)
{
    size_t la = strlen(a), lt = strlen(t);
    if (b->n + la + lt + 1 > b->cap) {
        size_t cap = 2 * (b->n + la + lt + 1) + 256;
        char *ns = mbl_realloc(b->s, cap);
        if (!ns) {
            M->oom = 1;
            return;
        }
        b->s = ns;
        b->cap = cap;
    }
    memcpy(b->s + b->n, a, la);
    memcpy(b->s + b->n + la, t, lt);
    b->n += la + lt;
    b->s[b->n] = '\0';
}

/* the text of b, owned by the arena ("0" when empty) */
static char *sb_done(mech *M, sbuf *b)
{
    if (!b->s) return fmt(M, "0");
    char *s = keep(M, b->s);
    b->s = NULL;
    return s ? s : (char *)"";
}

#define err_at(M, node, ...) mbl_yaml_error((M)->st, MBL_EMODEL, (M)->file, (node), __VA_ARGS__)

static int oom(mech *M) { return mbl_error(M->st, MBL_ENOMEM, "out of memory reading %s", M->file); }

static const char *sc(const yaml_node_t *n) { return (const char *)n->data.scalar.value; }
static int is_scalar(const yaml_node_t *n) { return n && n->type == YAML_SCALAR_NODE; }

static yaml_node_t *get(mech *M, const yaml_node_t *map, const char *key)
{
    if (!map || map->type != YAML_MAPPING_NODE) return NULL;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(M->doc, p->key);
        if (is_scalar(k) && !strcmp(sc(k), key)) return yaml_document_get_node(M->doc, p->value);
    }
    return NULL;
}

/* every key of map must be in the NULL-terminated list `ok` */
static int check_keys(mech *M, const yaml_node_t *map, const char *const *ok, const char *what)
{
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(M->doc, p->key);
        if (!is_scalar(k)) return err_at(M, k, "%s: keys must be plain words", what);
        int found = 0;
        for (const char *const *o = ok; *o; o++)
            if (!strcmp(*o, sc(k))) found = 1;
        if (!found) {
            char list[400];
            size_t off = 0;
            list[0] = '\0';
            for (const char *const *o = ok; *o && off < sizeof list; o++)
                off += (size_t)snprintf(list + off, sizeof list - off, "%s%s", o == ok ? "" : ", ", *o);
            return err_at(M, k, "%s: unknown key '%s' (expected %s)", what, sc(k), list);
        }
        for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < p; q++) {
            yaml_node_t *k2 = yaml_document_get_node(M->doc, q->key);
            if (is_scalar(k2) && !strcmp(sc(k2), sc(k))) return err_at(M, k, "%s: duplicate key '%s'", what, sc(k));
        }
    }
    return 0;
}

static int want_map(mech *M, const yaml_node_t *n, const char *what)
{
    if (!n || n->type != YAML_MAPPING_NODE) return err_at(M, n, "%s must be a mapping", what);
    return 0;
}

/* a scalar expression text */
static int text_of(mech *M, const yaml_node_t *n, const char *what, const char **out)
{
    if (!is_scalar(n) || n->data.scalar.length == 0) return err_at(M, n, "%s must be an expression or a number", what);
    *out = sc(n);
    return 0;
}

/* a list of exactly cnt expressions */
static int vec_of(mech *M, const yaml_node_t *n, int cnt, const char *what, const char **out)
{
    if (!n || n->type != YAML_SEQUENCE_NODE || n->data.sequence.items.top - n->data.sequence.items.start != cnt)
        return err_at(M, n, "%s must be a list of %d expressions", what, cnt);
    for (int i = 0; i < cnt; i++) {
        int rc = text_of(M, yaml_document_get_node(M->doc, n->data.sequence.items.start[i]), what, &out[i]);
        if (rc) return rc;
    }
    return 0;
}

static void pos_of(const yaml_node_t *n, int *line, int *col)
{
    *line = (int)n->start_mark.line + 1;
    *col = (int)n->start_mark.column + 1;
    if (n->type == YAML_SCALAR_NODE && (n->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
                                        n->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE))
        (*col)++;
}

static char *dup_s(const char *s)
{
    size_t n = strlen(s);
    char *p = mbl_malloc(n + 1);
    if (p) memcpy(p, s, n + 1);
    return p;
}

/* append an item to a list of the generated source */
static int push(mech *M, mbl_src_list *l, const char *key, const char *text, int line, int col)
{
    if (M->oom) return oom(M);
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 16;
        mbl_src_item *it = mbl_realloc_array(l->items, (size_t)cap, sizeof *it);
        if (!it) return oom(M);
        l->items = it;
        l->cap = cap;
    }
    mbl_src_item *it = &l->items[l->n];
    memset(it, 0, sizeof *it);
    l->n++;
    it->key = key ? dup_s(key) : NULL;
    it->text = dup_s(text);
    it->key_line = it->line = line;
    it->key_col = it->col = col;
    if ((key && !it->key) || !it->text) return oom(M);
    return 0;
}

static int push_at(mech *M, mbl_src_list *l, const char *key, const char *text, const yaml_node_t *n)
{
    int line = 1, col = 1;
    if (n) pos_of(n, &line, &col);
    return push(M, l, key, text, line, col);
}

/* ---- numbers from parameter expressions (file values) ------------------------------------- */

static int resolve_param(void *ud, mblx_graph *g, const char *name, size_t len, int nargs, const mblx_id *args,
                         mblx_id *out, char *why, size_t whylen)
{
    mech *M = ud;
    (void)args;
    (void)why;
    (void)whylen;
    if (nargs >= 0) return 1;
    for (int i = 0; i < M->np_eval; i++) {
        const char *k = M->src->parameters.items[i].key;
        if (strlen(k) == len && !strncmp(k, name, len)) {
            *out = mblx_const(g, M->pval[i]);
            if (M->pset && M->pset[i] >= 0 && M->used_set < 0) M->used_set = M->pset[i];
            return 0;
        }
    }
    return 1;
}

/* Start tracking which --set the next evaluated numbers depend on (set_note names it). */
static void set_track(mech *M) { M->used_set = -1; }

/* " (the value comes from --set name=value)" when the numbers evaluated since set_track() used an
 * overridden parameter, else "" (the text lives in the arena) */
static const char *set_note(mech *M);

static int eval_text(mech *M, const char *text, const yaml_node_t *n, const char *what, double *v)
{
    mblx_parse_opts po;
    memset(&po, 0, sizeof po);
    po.resolve = resolve_param;
    po.ud = M;
    if (n) pos_of(n, &po.line, &po.col);
    mbl_status st;
    mblx_id e;
    int rc = mblx_parse(M->g, text, strlen(text), &po, &e, &st);
    if (rc == MBL_ENOMEM) return oom(M);
    if (rc)
        return mbl_error(M->st, MBL_EMODEL, "%s:%s (in %s; only numbers and parameters can be used here)", M->file,
                         st.msg, what);
    double dummy = 0;
    rc = mblx_eval(M->g, e, &dummy, v, &st);
    if (rc == MBL_ENOMEM) return oom(M);
    if (rc) return err_at(M, n, "%s: %s%s", what, st.msg, set_note(M));
    if (!isfinite(*v)) return err_at(M, n, "%s is not a finite number%s", what, set_note(M));
    return 0;
}

static const char *set_note(mech *M)
{
    if (M->used_set < 0) return "";
    double v = M->sets[M->used_set].value;
    const char *t = fmt(M, "%.15g", v);
    if (strtod(t, NULL) != v) t = fmt(M, "%.17g", v); /* the shortest that reads back */
    return fmt(M, " (the value comes from --set %s=%s)", M->sets[M->used_set].name, t);
}

static int eval_vec(mech *M, const yaml_node_t *n, int cnt, const char *what, double *v)
{
    const char *t[9];
    int rc = vec_of(M, n, cnt, what, t);
    for (int i = 0; i < cnt && !rc; i++)
        rc = eval_text(M, t[i], yaml_document_get_node(M->doc, n->data.sequence.items.start[i]), what, &v[i]);
    return rc;
}

/* ---- orientation specifications (spatial): R column-major, column a = axis a ------------- */

/* Normalize v in place without overflow or underflow (scaled by its largest component first, so
 * [0, 0, 1e200] and [1e-200, 0, 0] are fine); returns 0 when v is zero or not finite. */
static int unit3(double v[3])
{
    double s = fmax(fabs(v[0]), fmax(fabs(v[1]), fabs(v[2])));
    if (!(s > 0) || !isfinite(s)) return 0;
    double w[3] = {v[0] / s, v[1] / s, v[2] / s};
    double n = sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
    for (int i = 0; i < 3; i++) v[i] = w[i] / n;
    return 1;
}

static int orientation(mech *M, const yaml_node_t *map, const char *what, double R[9], const yaml_node_t **where)
{
    static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    memcpy(R, I3, sizeof I3);
    *where = NULL;
    set_track(M);
    yaml_node_t *ax = get(M, map, "axis"), *an = get(M, map, "angle"), *eu = get(M, map, "euler");
    yaml_node_t *zx = get(M, map, "zaxis"), *xx = get(M, map, "xaxis"), *ro = get(M, map, "rotation");
    int forms = (ax || an) + (eu != NULL) + (zx || xx) + (ro != NULL);
    if (forms > 1)
        return err_at(M, map, "%s: give one orientation (axis+angle, euler, zaxis/xaxis or rotation)", what);
    char w[200];
    int rc = 0;
    if (ax || an) {
        *where = ax ? ax : an;
        if (!ax || !an) return err_at(M, *where, "%s: 'axis' and 'angle' go together", what);
        double k[3], a;
        snprintf(w, sizeof w, "%s: axis", what);
        rc = eval_vec(M, ax, 3, w, k);
        const char *at = NULL;
        if (!rc) rc = text_of(M, an, "angle", &at);
        if (!rc) rc = eval_text(M, at, an, "angle", &a);
        if (rc) return rc;
        if (!unit3(k)) return err_at(M, ax, "%s: the rotation axis is zero%s", what, set_note(M));
        double c = cos(a), s = sin(a), C = 1 - c;
        double r[9] = {c + k[0] * k[0] * C,        k[0] * k[1] * C - k[2] * s, k[0] * k[2] * C + k[1] * s,
                       k[1] * k[0] * C + k[2] * s, c + k[1] * k[1] * C,        k[1] * k[2] * C - k[0] * s,
                       k[2] * k[0] * C - k[1] * s, k[2] * k[1] * C + k[0] * s, c + k[2] * k[2] * C};
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) R[3 * j + i] = r[3 * i + j];
        return 0;
    }
    if (eu) {
        *where = eu;
        double e[3];
        snprintf(w, sizeof w, "%s: euler", what);
        rc = eval_vec(M, eu, 3, w, e);
        if (rc) return rc;
        /* body-fixed z-x-z: R = Rz(a) Rx(b) Rz(c) */
        double ca = cos(e[0]), sa = sin(e[0]), cb = cos(e[1]), sb = sin(e[1]), cc = cos(e[2]), s3 = sin(e[2]);
        double r[9] = {ca * cc - sa * cb * s3, -ca * s3 - sa * cb * cc, sa * sb,
                       sa * cc + ca * cb * s3, -sa * s3 + ca * cb * cc, -ca * sb,
                       sb * s3,                sb * cc,                 cb};
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) R[3 * j + i] = r[3 * i + j];
        return 0;
    }
    if (zx || xx) {
        *where = zx ? zx : xx;
        if (!zx) return err_at(M, xx, "%s: 'xaxis' needs 'zaxis'", what);
        double z[3], x[3];
        snprintf(w, sizeof w, "%s: zaxis", what);
        rc = eval_vec(M, zx, 3, w, z);
        if (rc) return rc;
        if (!unit3(z)) return err_at(M, zx, "%s: zaxis is zero%s", what, set_note(M));
        if (xx) {
            snprintf(w, sizeof w, "%s: xaxis", what);
            rc = eval_vec(M, xx, 3, w, x);
            if (rc) return rc;
        } else {
            /* any direction perpendicular to z: the global axis least aligned with it */
            int m = 0;
            for (int i = 1; i < 3; i++)
                if (fabs(z[i]) < fabs(z[m])) m = i;
            x[0] = x[1] = x[2] = 0;
            x[m] = 1;
            double d = z[m];
            for (int i = 0; i < 3; i++) x[i] -= d * z[i];
        }
        if (!unit3(x)) return err_at(M, xx ? xx : zx, "%s: xaxis is zero%s", what, set_note(M));
        double d = x[0] * z[0] + x[1] * z[1] + x[2] * z[2];
        if (fabs(d) > MBL_MECH_FRAME_TOL)
            return err_at(M, xx, "%s: xaxis is not perpendicular to zaxis (cosine %.3g): the frame is not orthonormal%s",
                          what, d, set_note(M));
        double y[3] = {z[1] * x[2] - z[2] * x[1], z[2] * x[0] - z[0] * x[2], z[0] * x[1] - z[1] * x[0]};
        for (int i = 0; i < 3; i++) {
            R[i] = x[i];
            R[3 + i] = y[i];
            R[6 + i] = z[i];
        }
        return 0;
    }
    if (ro) {
        *where = ro;
        if (ro->type != YAML_SEQUENCE_NODE || ro->data.sequence.items.top - ro->data.sequence.items.start != 3)
            return err_at(M, ro, "%s: rotation must be a list of 3 rows of 3 numbers", what);
        for (int i = 0; i < 3; i++) {
            double row[3];
            snprintf(w, sizeof w, "%s: rotation row %d", what, i + 1);
            rc = eval_vec(M, yaml_document_get_node(M->doc, ro->data.sequence.items.start[i]), 3, w, row);
            if (rc) return rc;
            for (int j = 0; j < 3; j++) R[3 * j + i] = row[j];
        }
        double dev = 0;
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++) {
                double d = -(a == b);
                for (int k = 0; k < 3; k++) d += R[3 * a + k] * R[3 * b + k];
                if (fabs(d) > dev) dev = fabs(d);
            }
        if (dev > MBL_MECH_FRAME_TOL)
            return err_at(M, ro, "%s: the rotation is not orthonormal (|R^T R - I| = %.3g)%s", what, dev, set_note(M));
        double det = R[0] * (R[4] * R[8] - R[7] * R[5]) - R[3] * (R[1] * R[8] - R[7] * R[2]) +
                     R[6] * (R[1] * R[5] - R[4] * R[2]);
        if (det < 0) return err_at(M, ro, "%s: the frame is left-handed (det R = %.3g)%s", what, det, set_note(M));
        return 0;
    }
    return 0;
}

/* Euler parameters of a rotation matrix (column-major), e0 >= 0 */
static void euler_params(const double R[9], double e[4])
{
#define RR(i, j) R[3 * (j) + (i)]
    double tr = RR(0, 0) + RR(1, 1) + RR(2, 2);
    double c[4] = {tr, RR(0, 0), RR(1, 1), RR(2, 2)};
    int k = 0;
    for (int i = 1; i < 4; i++)
        if (c[i] > c[k]) k = i;
    if (k == 0) {
        double s = 2 * sqrt(1 + tr);
        e[0] = s / 4;
        e[1] = (RR(2, 1) - RR(1, 2)) / s;
        e[2] = (RR(0, 2) - RR(2, 0)) / s;
        e[3] = (RR(1, 0) - RR(0, 1)) / s;
    } else if (k == 1) {
        double s = 2 * sqrt(1 + RR(0, 0) - RR(1, 1) - RR(2, 2));
        e[0] = (RR(2, 1) - RR(1, 2)) / s;
        e[1] = s / 4;
        e[2] = (RR(0, 1) + RR(1, 0)) / s;
        e[3] = (RR(0, 2) + RR(2, 0)) / s;
    } else if (k == 2) {
        double s = 2 * sqrt(1 - RR(0, 0) + RR(1, 1) - RR(2, 2));
        e[0] = (RR(0, 2) - RR(2, 0)) / s;
        e[1] = (RR(0, 1) + RR(1, 0)) / s;
        e[2] = s / 4;
        e[3] = (RR(1, 2) + RR(2, 1)) / s;
    } else {
        double s = 2 * sqrt(1 - RR(0, 0) - RR(1, 1) + RR(2, 2));
        e[0] = (RR(1, 0) - RR(0, 1)) / s;
        e[1] = (RR(0, 2) + RR(2, 0)) / s;
        e[2] = (RR(1, 2) + RR(2, 1)) / s;
        e[3] = s / 4;
    }
    if (e[0] < 0)
        for (int i = 0; i < 4; i++) e[i] = -e[i];
#undef RR
}

/* ---- names ----------------------------------------------------------------------------------- */

static int valid_name(const char *s)
{
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z'))) return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return 0;
    return 1;
}

static int find_body(mech *M, const char *name) { return ns_find(&M->hb, name, strlen(name)); }
static int find_marker(mech *M, const char *name, size_t len) { return ns_find(&M->hm, name, len); }
static int find_joint(mech *M, const char *name, size_t len) { return ns_find(&M->hj, name, len); }

/* ---- bodies and markers ---------------------------------------------------------------------- */

static int add_var(mech *M, const char *name, const char *text, int line, int col)
{
    return push(M, &M->src->variables, name, text, line, col);
}

static int add_marker(mech *M, int bi, const yaml_node_t *key, const yaml_node_t *val)
{
    body *B = &M->b[bi];
    const char *name = sc(key);
    char what[200];
    snprintf(what, sizeof what, "marker '%s' of body '%s'", name, B->name);
    if (!valid_name(name)) return err_at(M, key, "%s: not a valid name (letters, digits, _)", what);
    if (find_marker(M, name, strlen(name)) >= 0) return err_at(M, key, "duplicate marker name '%s'", name);
    if (val->type == YAML_SCALAR_NODE && val->data.scalar.length == 0) {
        /* marker at the body origin, body axes */
    } else {
        int rc = want_map(M, val, what);
        if (rc) return rc;
        static const char *okp[] = {"position", "angle", NULL};
        static const char *oks[] = {"position", "axis", "angle", "euler", "zaxis", "xaxis", "rotation", NULL};
        rc = check_keys(M, val, M->planar ? okp : oks, what);
        if (rc) return rc;
    }
    if (M->nm == M->cm) {
        int cap = M->cm ? 2 * M->cm : 32;
        marker *m = mbl_realloc_array(M->mk, (size_t)cap, sizeof *m);
        if (!m) return oom(M);
        M->mk = m;
        M->cm = cap;
    }
    if (ns_add(&M->hm, name, M->nm)) return oom(M);
    marker *K = &M->mk[M->nm++];
    memset(K, 0, sizeof *K);
    K->oset = -1;
    K->name = name;
    K->body = bi;
    pos_of(key, &K->line, &K->col);
    int dim = M->planar ? 2 : 3;
    const char *s[3] = {"0", "0", "0"};
    yaml_node_t *pn = get(M, val, "position");
    if (pn) {
        snprintf(what, sizeof what, "marker '%s': position", name);
        int rc = vec_of(M, pn, dim, what, s);
        if (rc) return rc;
    }
    int line = K->line, col = K->col;
    static const char axn[3] = {'x', 'y', 'z'};
    if (M->planar) {
        const char *ang = "0";
        yaml_node_t *an = get(M, val, "angle");
        if (an) {
            int rc = text_of(M, an, "marker angle", &ang);
            if (rc) return rc;
        }
        const char *th = B->kind == KIND_PLANAR ? B->th : "0";
        K->phi = fmt(M, "_phi_%s", name);
        int rc = add_var(M, K->phi, fmt(M, "%s + (%s)", th, ang), line, col);
        for (int k = 0; k < 3 && !rc; k++) {
            K->p[k] = fmt(M, "_p_%s_%d", name, k + 1);
            const char *t;
            if (k == 2) t = "0";
            else if (B->kind == KIND_PLANAR)
                t = k == 0 ? fmt(M, "%s + %s*(%s) - %s*(%s)", B->r[0], B->A[0], s[0], B->A[3], s[1])
                           : fmt(M, "%s + %s*(%s) + %s*(%s)", B->r[1], B->A[3], s[0], B->A[0], s[1]);
            else
                t = fmt(M, "%s + (%s)", B->r[k], s[k]);
            rc = add_var(M, K->p[k], t, line, col);
        }
        const char *axt[3][3] = {{fmt(M, "cos(%s)", K->phi), fmt(M, "sin(%s)", K->phi), "0"},
                                 {fmt(M, "-sin(%s)", K->phi), fmt(M, "cos(%s)", K->phi), "0"},
                                 {"0", "0", "1"}};
        for (int a = 0; a < 3 && !rc; a++)
            for (int k = 0; k < 3 && !rc; k++) {
                K->ax[a][k] = fmt(M, "_%c_%s_%d", axn[a], name, k + 1);
                rc = add_var(M, K->ax[a][k], axt[a][k], line, col);
            }
        return rc;
    }
    double R[9];
    const yaml_node_t *where;
    int rc = orientation(M, val, what, R, &where);
    if (rc) return rc;
    for (int a = 0; a < 3; a++)
        for (int k = 0; k < 3; k++)
            K->R0[3 * a + k] = B->R0[k] * R[3 * a] + B->R0[3 + k] * R[3 * a + 1] + B->R0[6 + k] * R[3 * a + 2];
    euler_params(R, K->mq);
    K->oset = M->used_set >= 0 ? M->used_set : B->oset;
    for (int k = 0; k < 3 && !rc; k++) {
        K->p[k] = fmt(M, "_p_%s_%d", name, k + 1);
        const char *t = fmt(M, "%s + %s*(%s) + %s*(%s) + %s*(%s)", B->r[k], B->A[3 * k], s[0], B->A[3 * k + 1], s[1],
                            B->A[3 * k + 2], s[2]);
        rc = add_var(M, K->p[k], t, line, col);
    }
    for (int a = 0; a < 3 && !rc; a++)
        for (int k = 0; k < 3 && !rc; k++) {
            K->ax[a][k] = fmt(M, "_%c_%s_%d", axn[a], name, k + 1);
            const char *t = fmt(M, "%s*%s + %s*%s + %s*%s", B->A[3 * k], num(M, R[3 * a]), B->A[3 * k + 1],
                                num(M, R[3 * a + 1]), B->A[3 * k + 2], num(M, R[3 * a + 2]));
            rc = add_var(M, K->ax[a][k], t, line, col);
        }
    return rc;
}

static int add_markers(mech *M, int bi, const yaml_node_t *mks)
{
    if (!mks) return 0;
    if (mks->type == YAML_SCALAR_NODE && mks->data.scalar.length == 0) return 0;
    char what[160];
    snprintf(what, sizeof what, "markers of body '%s'", M->b[bi].name);
    int rc = want_map(M, mks, what);
    for (yaml_node_pair_t *p = mks->data.mapping.pairs.start; !rc && p < mks->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(M->doc, p->key);
        if (!is_scalar(k)) return err_at(M, k, "%s: a marker name must be a plain word", what);
        rc = add_marker(M, bi, k, yaml_document_get_node(M->doc, p->value));
    }
    return rc;
}

static body *new_body(mech *M, const char *name, const yaml_node_t *key)
{
    if (M->nb == M->cb) {
        int cap = M->cb ? 2 * M->cb : 16;
        body *b = mbl_realloc_array(M->b, (size_t)cap, sizeof *b);
        if (!b) return NULL;
        M->b = b;
        M->cb = cap;
    }
    if (ns_add(&M->hb, name, M->nb)) return NULL;
    body *B = &M->b[M->nb++];
    memset(B, 0, sizeof *B);
    B->name = name;
    if (key) pos_of(key, &B->line, &B->col);
    for (int k = 0; k < 9; k++) B->R0[k] = k % 4 == 0;
    B->q0[0] = 1;
    B->oset = -1;
    return B;
}

static int add_coord(mech *M, const char *name, const char *init, const yaml_node_t *at)
{
    return push_at(M, &M->src->coordinates, name, init, at);
}

/* The principal moments of a rigid body's inertia tensor J (3x3, positive definite) satisfy the
 * triangle inequalities I1 + I2 >= I3 (each moment is an integral of a sum of two squared
 * coordinates); a tensor that violates them belongs to no body. Relative tolerance
 * MBL_MECH_FRAME_TOL of the trace. */
static int inertia_triangle(mech *M, const yaml_node_t *in, const char *what, const double J[9])
{
    double A[9], w[3];
    memcpy(A, J, sizeof A);
    if (LAPACKE_dsyev(LAPACK_COL_MAJOR, 'N', 'U', 3, A, 3, w) != 0)
        return err_at(M, in, "%s: the principal moments of inertia cannot be computed", what);
    /* w ascending: the binding inequality is w0 + w1 >= w2 */
    if (w[0] + w[1] < w[2] - MBL_MECH_FRAME_TOL * (w[0] + w[1] + w[2]))
        return err_at(M, in,
                      "%s: the principal moments of inertia %.6g, %.6g, %.6g violate the triangle inequality "
                      "(%.6g + %.6g < %.6g): no rigid body has this inertia%s",
                      what, w[0], w[1], w[2], w[0], w[1], w[2], set_note(M));
    return 0;
}

static int read_body(mech *M, const yaml_node_t *key, const yaml_node_t *val)
{
    const char *name = sc(key);
    char what[200];
    snprintf(what, sizeof what, "body '%s'", name);
    if (!valid_name(name)) return err_at(M, key, "%s: not a valid name (letters, digits, _)", what);
    if (!strcmp(name, "ground")) return err_at(M, key, "'ground' is built in: give its markers under 'ground'");
    if (find_body(M, name) >= 0) return err_at(M, key, "duplicate body name '%s'", name);
    int rc = want_map(M, val, what);
    if (rc) return rc;
    static const char *okp[] = {"type", "mass", "inertia", "cm", "position", "angle", "velocity", "angular_velocity",
                                "markers", NULL};
    static const char *oks[] = {"type", "mass", "inertia", "cm", "position", "axis", "angle", "euler", "zaxis",
                                "xaxis", "rotation", "velocity", "angular_velocity", "markers", NULL};
    rc = check_keys(M, val, M->planar ? okp : oks, what);
    if (rc) return rc;
    body *B = new_body(M, name, key);
    if (!B) return oom(M);
    int bi = M->nb - 1;
    B->kind = M->planar ? KIND_PLANAR : KIND_SPATIAL;
    yaml_node_t *ty = get(M, val, "type");
    if (ty) {
        if (!is_scalar(ty)) return err_at(M, ty, "%s: type must be rigid or point", what);
        if (!strcmp(sc(ty), "point")) B->kind = KIND_POINT;
        else if (strcmp(sc(ty), "rigid")) return err_at(M, ty, "%s: unknown type '%s' (expected rigid or point)", what, sc(ty));
    }
    int dim = M->planar ? 2 : 3;
    yaml_node_t *mn = get(M, val, "mass");
    if (!mn) return err_at(M, val, "%s: missing 'mass'", what);
    rc = text_of(M, mn, "mass", &B->mass);
    double mv;
    set_track(M);
    if (!rc) rc = eval_text(M, B->mass, mn, "mass", &mv);
    if (rc) return rc;
    if (!(mv > 0)) return err_at(M, mn, "%s: the mass must be positive (it is %g)%s", what, mv, set_note(M));
    for (int k = 0; k < 6; k++) B->I[k] = "0";
    for (int k = 0; k < 3; k++) B->cm[k] = "0";
    yaml_node_t *in = get(M, val, "inertia");
    if (B->kind == KIND_PLANAR) {
        if (!in) return err_at(M, val, "%s: missing 'inertia' (the moment of inertia about the centre of mass)", what);
        double iv;
        rc = text_of(M, in, "inertia", &B->I[2]);
        set_track(M);
        if (!rc) rc = eval_text(M, B->I[2], in, "inertia", &iv);
        if (rc) return rc;
        if (!(iv > 0))
            return err_at(M, in, "%s: the moment of inertia must be positive (it is %g)%s", what, iv, set_note(M));
    } else if (B->kind == KIND_SPATIAL) {
        if (!in) return err_at(M, val, "%s: missing 'inertia' [Ixx, Iyy, Izz] or [Ixx, Iyy, Izz, Ixy, Ixz, Iyz]", what);
        int cnt = in->type == YAML_SEQUENCE_NODE ? (int)(in->data.sequence.items.top - in->data.sequence.items.start) : 0;
        if (cnt != 3 && cnt != 6)
            return err_at(M, in, "%s: inertia must be [Ixx, Iyy, Izz] or [Ixx, Iyy, Izz, Ixy, Ixz, Iyz]", what);
        double iv[6] = {0};
        rc = vec_of(M, in, cnt, "inertia", B->I);
        set_track(M);
        if (!rc) rc = eval_vec(M, in, cnt, "inertia", iv);
        if (rc) return rc;
        /* positive definite: Cholesky of [[xx xy xz] [xy yy yz] [xz yz zz]] */
        double J[9] = {iv[0], iv[3], iv[4], iv[3], iv[1], iv[5], iv[4], iv[5], iv[2]};
        double scale = fabs(iv[0]) + fabs(iv[1]) + fabs(iv[2]);
        double l00 = J[0];
        double ok = l00 > MBL_MECH_FRAME_TOL * scale;
        if (ok) {
            double l10 = J[3] / sqrt(l00), l20 = J[6] / sqrt(l00);
            double l11 = J[4] - l10 * l10;
            ok = l11 > MBL_MECH_FRAME_TOL * scale;
            if (ok) {
                double l21 = (J[7] - l20 * l10) / sqrt(l11);
                ok = J[8] - l20 * l20 - l21 * l21 > MBL_MECH_FRAME_TOL * scale;
            }
        }
        if (!ok)
            return err_at(M, in, "%s: the inertia tensor is %s (it must be positive definite)%s", what,
                          scale == 0 ? "zero" : "singular or indefinite", set_note(M));
        if ((rc = inertia_triangle(M, in, what, J))) return rc;
    } else if (in) {
        return err_at(M, in, "%s: a point mass has no inertia", what);
    }
    yaml_node_t *cn = get(M, val, "cm");
    if (cn) {
        if (B->kind == KIND_POINT) return err_at(M, cn, "%s: a point mass has no centre-of-mass offset", what);
        rc = vec_of(M, cn, dim, "cm", B->cm);
        if (rc) return rc;
    }
    /* coordinates and their initial values */
    const char *p0[3] = {"0", "0", "0"};
    yaml_node_t *pn = get(M, val, "position");
    if (pn && (rc = vec_of(M, pn, dim, "position", p0))) return rc;
    static const char *cn3[3] = {"x", "y", "z"};
    const yaml_node_t *at = pn ? pn : key;
    for (int k = 0; k < 3; k++) B->r[k] = "0";
    for (int k = 0; k < dim && !rc; k++) {
        B->r[k] = fmt(M, "%s_%s", name, cn3[k]);
        rc = add_coord(M, B->r[k], p0[k], at);
    }
    if (rc) return rc;
    const char *v0[3] = {NULL, NULL, NULL};
    yaml_node_t *vn = get(M, val, "velocity");
    if (vn) {
        rc = vec_of(M, vn, dim, "velocity", v0);
        for (int k = 0; k < dim && !rc; k++) rc = push_at(M, &M->src->velocities, B->r[k], v0[k], vn);
        if (rc) return rc;
    }
    yaml_node_t *wn = get(M, val, "angular_velocity");
    if (wn && B->kind == KIND_POINT) return err_at(M, wn, "%s: a point mass has no angular velocity", what);
    static const char *Iv[9] = {"1", "0", "0", "0", "1", "0", "0", "0", "1"};
    if (B->kind == KIND_POINT) {
        for (int k = 0; k < 9; k++) B->A[k] = (char *)Iv[k];
        for (int k = 0; k < 3; k++) B->w[k] = "0";
    } else if (B->kind == KIND_PLANAR) {
        const char *a0 = "0";
        yaml_node_t *an = get(M, val, "angle");
        if (an && (rc = text_of(M, an, "angle", &a0))) return rc;
        B->th = fmt(M, "%s_th", name);
        rc = add_coord(M, B->th, a0, an ? an : key);
        if (!rc && wn) {
            const char *w0;
            rc = text_of(M, wn, "angular_velocity", &w0);
            if (!rc) rc = push_at(M, &M->src->velocities, B->th, w0, wn);
        }
        char *c = fmt(M, "_c_%s", name), *s = fmt(M, "_s_%s", name);
        if (!rc) rc = add_var(M, c, fmt(M, "cos(%s)", B->th), B->line, B->col);
        if (!rc) rc = add_var(M, s, fmt(M, "sin(%s)", B->th), B->line, B->col);
        B->A[0] = c;
        B->A[1] = fmt(M, "(-%s)", s);
        B->A[2] = "0";
        B->A[3] = s;
        B->A[4] = c;
        B->A[5] = "0";
        B->A[6] = "0";
        B->A[7] = "0";
        B->A[8] = "1";
        B->w[0] = "0";
        B->w[1] = "0";
        B->w[2] = fmt(M, "der(%s)", B->th);
        if (rc) return rc;
    } else {
        double R[9], e0[4];
        const yaml_node_t *where;
        rc = orientation(M, val, what, R, &where);
        if (rc) return rc;
        memcpy(B->R0, R, sizeof R);
        B->oset = M->used_set;
        euler_params(R, e0);
        memcpy(B->q0, e0, sizeof e0);
        for (int k = 0; k < 4 && !rc; k++) {
            B->e[k] = fmt(M, "%s_e%d", name, k);
            rc = add_coord(M, B->e[k], num(M, e0[k]), where ? where : key);
        }
        if (rc) return rc;
        char **e = B->e;
        /* normalization constraint (source 004) */
        rc = push(M, &M->src->constraints, fmt(M, "body %s (Euler parameter normalization)", name),
                  fmt(M, "%s^2 + %s^2 + %s^2 + %s^2 - 1", e[0], e[1], e[2], e[3]), B->line, B->col);
        const char *At[9] = {
            fmt(M, "2*(%s^2 + %s^2) - 1", e[0], e[1]),     fmt(M, "2*(%s*%s - %s*%s)", e[1], e[2], e[0], e[3]),
            fmt(M, "2*(%s*%s + %s*%s)", e[1], e[3], e[0], e[2]), fmt(M, "2*(%s*%s + %s*%s)", e[1], e[2], e[0], e[3]),
            fmt(M, "2*(%s^2 + %s^2) - 1", e[0], e[2]),     fmt(M, "2*(%s*%s - %s*%s)", e[2], e[3], e[0], e[1]),
            fmt(M, "2*(%s*%s - %s*%s)", e[1], e[3], e[0], e[2]), fmt(M, "2*(%s*%s + %s*%s)", e[2], e[3], e[0], e[1]),
            fmt(M, "2*(%s^2 + %s^2) - 1", e[0], e[3])};
        for (int k = 0; k < 9 && !rc; k++) {
            B->A[k] = fmt(M, "_A_%s_%d%d", name, k / 3 + 1, k % 3 + 1);
            rc = add_var(M, B->A[k], At[k], B->line, B->col);
        }
        /* global angular velocity w = 2 E(e) der(e) */
        const char *d[4];
        for (int k = 0; k < 4; k++) d[k] = fmt(M, "der(%s)", e[k]);
        const char *wt[3] = {
            fmt(M, "2*(-%s*%s + %s*%s - %s*%s + %s*%s)", e[1], d[0], e[0], d[1], e[3], d[2], e[2], d[3]),
            fmt(M, "2*(-%s*%s + %s*%s + %s*%s - %s*%s)", e[2], d[0], e[3], d[1], e[0], d[2], e[1], d[3]),
            fmt(M, "2*(-%s*%s - %s*%s + %s*%s + %s*%s)", e[3], d[0], e[2], d[1], e[1], d[2], e[0], d[3])};
        for (int k = 0; k < 3 && !rc; k++) {
            B->w[k] = fmt(M, "_w_%s_%d", name, k + 1);
            rc = add_var(M, B->w[k], wt[k], B->line, B->col);
        }
        if (!rc && wn) {
            /* der(e) = 1/2 E^T w with the initial e */
            const char *w0[3];
            rc = vec_of(M, wn, 3, "angular_velocity", w0);
            double E[3][4] = {{-e0[1], e0[0], -e0[3], e0[2]}, {-e0[2], e0[3], e0[0], -e0[1]},
                              {-e0[3], -e0[2], e0[1], e0[0]}};
            for (int k = 0; k < 4 && !rc; k++)
                rc = push_at(M, &M->src->velocities, e[k],
                             fmt(M, "0.5*(%s*(%s) + %s*(%s) + %s*(%s))", num(M, E[0][k]), w0[0], num(M, E[1][k]), w0[1],
                                 num(M, E[2][k]), w0[2]),
                             wn);
        }
        if (rc) return rc;
    }
    return add_markers(M, bi, get(M, val, "markers"));
}

/* ---- measures: text substitution ------------------------------------------------------------ */

typedef struct local {
    const char *name, *text;
} local;

static const char *dot3(mech *M, char *const a[3], char *const b[3])
{
    return fmt(M, "(%s*%s + %s*%s + %s*%s)", a[0], b[0], a[1], b[1], a[2], b[2]);
}

/* d = p_i - p_j as three texts */
static void dvec(mech *M, int i, int j, char *d[3])
{
    for (int k = 0; k < 3; k++)
        d[k] = j >= 0 ? fmt(M, "(%s - %s)", M->mk[i].p[k], M->mk[j].p[k]) : M->mk[i].p[k];
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
    const char *m0 = num(M, x[0]), *m1 = num(M, x[1]), *m2 = num(M, x[2]), *m3 = num(M, x[3]);
    q[0] = fmt(M, "(%s*%s - %s*%s - %s*%s - %s*%s)", e[0], m0, e[1], m1, e[2], m2, e[3], m3);
    q[1] = fmt(M, "(%s*%s + %s*%s + %s*%s - %s*%s)", e[0], m1, e[1], m0, e[2], m3, e[3], m2);
    q[2] = fmt(M, "(%s*%s + %s*%s + %s*%s - %s*%s)", e[0], m2, e[2], m0, e[3], m1, e[1], m3);
    q[3] = fmt(M, "(%s*%s + %s*%s + %s*%s - %s*%s)", e[0], m3, e[3], m0, e[1], m2, e[2], m1);
    qn[0] = en[0] * x[0] - en[1] * x[1] - en[2] * x[2] - en[3] * x[3];
    qn[1] = en[0] * x[1] + en[1] * x[0] + en[2] * x[3] - en[3] * x[2];
    qn[2] = en[0] * x[2] + en[2] * x[0] + en[3] * x[1] - en[1] * x[3];
    qn[3] = en[0] * x[3] + en[3] * x[0] + en[1] * x[2] - en[2] * x[1];
}

/* The rotation angle of marker i about the z axis of marker j (spatial), continuous: with
 * r = conj(q_j) (x) q_i the relative Euler parameters, the angle is 2 atan2(r3, r0) measured from
 * the angle a of the file's configuration (in (-pi, pi], today's atan2(x_i.y_j, x_i.x_j) there):
 * a + 2 atan2(r3', r0') with r' = sigma r (x) (cos a/2, 0, 0, -sin a/2) and sigma = +-1 making r0' > 0
 * in the file's configuration. It is smooth in the coordinates and does not wrap within 2 pi of a
 * (a driver, a coupler or a torsion spring can pass half a turn). */
static const char *twist_angle(mech *M, int mi, int mj)
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
    const char *t0 = fmt(M, "(%s*%s + %s*%s + %s*%s + %s*%s)", a[0], b[0], a[1], b[1], a[2], b[2], a[3], b[3]);
    const char *t3 = fmt(M, "(%s*%s - %s*%s - %s*%s + %s*%s)", a[0], b[3], b[0], a[3], a[1], b[2], a[2], b[1]);
    return fmt(M, "(%s + 2*atan2(%s*(%s*%s - %s*%s), %s*(%s*%s + %s*%s)))", num(M, a0), num(M, sg), t3, num(M, c), t0,
               num(M, s), num(M, sg), t0, num(M, c), t3, num(M, s));
}

static const char *joint_coord(mech *M, int ji, char *why, size_t whylen)
{
    joint *J = &M->jt[ji];
    marker *I = &M->mk[J->i], *K = &M->mk[J->j];
    char *d[3];
    dvec(M, J->i, J->j, d);
    if (M->planar) {
        if (!strcmp(J->type, "revolute")) return fmt(M, "(%s - %s)", I->phi, K->phi);
        if (!strcmp(J->type, "prismatic")) return dot3(M, d, K->ax[0]);
    } else {
        if (!strcmp(J->type, "revolute") || !strcmp(J->type, "cylindrical")) {
            if (!J->jq) {
                const char *v = fmt(M, "_jq_%s", J->name);
                if (add_var(M, v, twist_angle(M, J->i, J->j), J->line, J->col)) return NULL;
                J->jq = v;
            }
            return J->jq;
        }
        if (!strcmp(J->type, "prismatic")) return dot3(M, d, K->ax[2]);
    }
    snprintf(why, whylen, "joint '%s' (%s) has no joint coordinate (revolute, prismatic%s only)", J->name, J->type,
             M->planar ? "" : ", cylindrical");
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
    int j = find_joint(M, arg[0], alen[0]);
    if (j < 0) {
        snprintf(why, whylen, "%s: no joint named '%.*s'", fn, (int)alen[0], arg[0]);
        return NULL;
    }
    joint *J = &M->jt[j];
    if (!strcmp(J->type, "coupler")) {
        snprintf(why, whylen, "%s: joint '%s' is a coupler, which has no reaction force", fn, J->name);
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
        int f = find_marker(M, arg[1], alen[1]);
        if (f < 0) {
            snprintf(why, whylen, "%s: no marker named '%.*s'", fn, (int)alen[1], arg[1]);
            return NULL;
        }
        e = M->mk[f].ax[comp];
    }
    const char *sum = NULL;
    for (int k = 0; k < J->nc; k++) {
        const char **gk = fn[0] == 'F' ? J->fg[k] : J->mg[k];
        if (!gk[0]) continue;
        const char *term = fmt(M, "lambda(%d)*(%s*%s + %s*%s + %s*%s)", J->c0 + k + 1, gk[0], e[0], gk[1], e[1],
                               gk[2], e[2]);
        sum = sum ? fmt(M, "%s + %s", sum, term) : term;
    }
    return sum ? fmt(M, "-(%s)", sum) : "0";
}

static const char *measure(mech *M, const char *fn, int nargs, const char **arg, const size_t *alen, char *why,
                           size_t whylen)
{
    if (!strcmp(fn, "JQ") || !strcmp(fn, "JV")) {
        if (nargs != 1) {
            snprintf(why, whylen, "%s takes one joint name", fn);
            return NULL;
        }
        int j = find_joint(M, arg[0], alen[0]);
        if (j < 0) {
            snprintf(why, whylen, "%s: no joint named '%.*s'", fn, (int)alen[0], arg[0]);
            return NULL;
        }
        const char *q = joint_coord(M, j, why, whylen);
        if (!q) return NULL;
        return fn[1] == 'Q' ? q : fmt(M, "der(%s)", q);
    }
    if ((fn[0] == 'F' || fn[0] == 'T') && fn[2] == '\0') return reaction(M, fn, nargs, arg, alen, why, whylen);
    int mi[3] = {-1, -1, -1};
    if (nargs < 1 || nargs > 3) {
        snprintf(why, whylen, "%s takes 1 to 3 marker names", fn);
        return NULL;
    }
    for (int a = 0; a < nargs; a++) {
        mi[a] = find_marker(M, arg[a], alen[a]);
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
        dvec(M, mi[0], mi[1], d);
        if (fn[1] == 'M') {
            if (nargs > 2) {
                snprintf(why, whylen, "DM takes 1 or 2 marker names");
                return NULL;
            }
            return fmt(M, "sqrt(%s)", dot3(M, d, d));
        }
        return dot3(M, d, e[comp]);
    }
    if (fn[0] == 'V') {
        for (int k = 0; k < 3; k++) {
            char *pk = mi[1] >= 0 ? fmt(M, "(%s - %s)", M->mk[mi[0]].p[k], M->mk[mi[1]].p[k]) : M->mk[mi[0]].p[k];
            d[k] = fmt(M, "der(%s)", pk);
        }
        return dot3(M, d, e[comp]);
    }
    if (fn[0] == 'W') {
        body *Bi = &M->b[M->mk[mi[0]].body];
        for (int k = 0; k < 3; k++)
            d[k] = mi[1] >= 0 ? fmt(M, "(%s - %s)", Bi->w[k], M->b[M->mk[mi[1]].body].w[k]) : Bi->w[k];
        return dot3(M, d, e[comp]);
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
        return mi[1] >= 0 ? fmt(M, "(%s - %s)", I->phi, M->mk[mi[1]].phi) : fmt(M, "(%s)", I->phi);
    }
    int a1 = (comp + 1) % 3, a2 = (comp + 2) % 3;
    return fmt(M, "0.5*(%s - %s)", dot3(M, I->ax[a1], J[a2]), dot3(M, I->ax[a2], J[a1]));
}

static int is_id0(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static int is_id(char c) { return is_id0(c) || (c >= '0' && c <= '9'); }

/* Replace measure calls (DX(i, j, k), JQ(joint), ...) and the locals by their expressions. */
static int subst(mech *M, const char *text, const yaml_node_t *at, const local *loc, int nloc, const char **out)
{
    static const char *fns[] = {"DX", "DY", "DZ", "DM", "AX", "AY", "AZ", "VX", "VY", "VZ", "WX", "WY", "WZ",
                                "JQ", "JV", "FX", "FY", "FZ", "TX", "TY", "TZ", NULL};
    size_t cap = strlen(text) * 2 + 64, n = 0;
    char *o = mbl_malloc(cap);
    if (!o || !keep(M, o)) return oom(M);
    const char *s = text;
    while (*s) {
        const char *piece = s;
        size_t plen = 1;
        const char *rep = NULL;
        if (is_id0(*s) && (s == text || !is_id(s[-1]))) {
            const char *e = s;
            while (is_id(*e)) e++;
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
                    while (is_id(*q)) q++;
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
                rep = measure(M, fns[fn], na, args, alen, why, sizeof why);
                if (!rep) return M->oom ? oom(M) : err_at(M, at, "%s (in '%s')", why, text);
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
            if (!no || !keep(M, no)) return oom(M);
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
    return M->oom ? oom(M) : 0;
}

/* ---- joints ------------------------------------------------------------------------------------ */

static int marker_ref(mech *M, const yaml_node_t *map, const char *key, const char *what, int required, int *out)
{
    yaml_node_t *n = get(M, map, key);
    *out = -1;
    if (!n) return required ? err_at(M, map, "%s: missing marker '%s'", what, key) : 0;
    if (!is_scalar(n)) return err_at(M, n, "%s: '%s' must name a marker", what, key);
    const char *dot = strchr(sc(n), '.');
    if (dot) {
        /* body.marker: the body must exist and own the marker */
        size_t bl = (size_t)(dot - sc(n));
        int b = ns_find(&M->hb, sc(n), bl);
        if (b < 0) return err_at(M, n, "%s: no body named '%.*s'", what, (int)bl, sc(n));
        int m = find_marker(M, dot + 1, strlen(dot + 1));
        if (m < 0) return err_at(M, n, "%s: body '%s' has no marker '%s'", what, M->b[b].name, dot + 1);
        if (M->mk[m].body != b)
            return err_at(M, n, "%s: marker '%s' is on body '%s', not on '%s'", what, dot + 1, M->b[M->mk[m].body].name,
                          M->b[b].name);
        *out = m;
        return 0;
    }
    int m = find_marker(M, sc(n), n->data.scalar.length);
    if (m < 0) {
        /* a body name instead of a marker is a common slip: say so */
        if (find_body(M, sc(n)) >= 0)
            return err_at(M, n, "%s: '%s' is a body, not a marker (joints connect markers)", what, sc(n));
        return err_at(M, n, "%s: no marker named '%s'", what, sc(n));
    }
    *out = m;
    return 0;
}

static int con(mech *M, const char *jname, const char *text, int line, int col)
{
    return push(M, &M->src->constraints, jname, text, line, col);
}

/* Remember a user text that goes into a constraint (a driver's motion, a coupler's ratios and
 * offset, a distance): check_con_texts refuses inputs and velocities in it, in the element's words. */
static int con_text(mech *M, const char *elem, const char *part, const yaml_node_t *at, const char *text, int driver)
{
    if (M->ndrv == M->cdrv) {
        int cap = M->cdrv ? 2 * M->cdrv : 16;
        struct drv *d = mbl_realloc_array(M->drv, (size_t)cap, sizeof *d);
        if (!d) return oom(M);
        M->drv = d;
        M->cdrv = cap;
    }
    M->drv[M->ndrv++] = (struct drv){elem, part, at, text, driver};
    return M->oom ? oom(M) : 0;
}

static void set3(const char *dst[3], const char *a, const char *b, const char *c)
{
    dst[0] = a, dst[1] = b, dst[2] = c;
}

/* a x b as three texts */
static void cross3(mech *M, char *const a[3], char *const b[3], const char *out[3])
{
    for (int k = 0; k < 3; k++) {
        int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
        out[k] = fmt(M, "(%s*%s - %s*%s)", a[k1], b[k2], a[k2], b[k1]);
    }
}

static int joint_constraints(mech *M, joint *J, const yaml_node_t *val)
{
    marker *I = &M->mk[J->i], *K = &M->mk[J->j];
    char *d[3];
    dvec(M, J->i, J->j, d);
    const char *t = J->type;
    const char *nm = fmt(M, "joint %s (%s)", J->name, t);
    int line = J->line, col = J->col, rc = 0;
    const char *eq[6];
    int ne = 0;
    if (!strcmp(t, "distance")) {
        yaml_node_t *dn = get(M, val, "distance");
        const char *L = NULL;
        if (!dn) return err_at(M, val, "joint '%s': missing 'distance'", J->name);
        rc = text_of(M, dn, "distance", &L);
        if (!rc) rc = con_text(M, fmt(M, "joint '%s'", J->name), "distance", dn, L, 0);
        if (rc) return rc;
        set3(J->fg[ne], fmt(M, "2*%s", d[0]), fmt(M, "2*%s", d[1]), fmt(M, "2*%s", d[2]));
        eq[ne++] = fmt(M, "%s - (%s)^2", dot3(M, d, d), L);
    } else if (M->planar) {
        const char *ang = fmt(M, "%s - %s", I->phi, K->phi);
        int pt = M->b[I->body].kind == KIND_POINT || M->b[K->body].kind == KIND_POINT;
        if (pt && (!strcmp(t, "prismatic") || !strcmp(t, "fixed") || !strcmp(t, "orientation")))
            return err_at(M, get(M, val, "type"), "joint '%s': a %s joint constrains orientation, which a point mass has not",
                          J->name, t);
        if (!strcmp(t, "revolute")) {
            set3(J->fg[ne], "1", "0", "0"), eq[ne++] = d[0];
            set3(J->fg[ne], "0", "1", "0"), eq[ne++] = d[1];
        } else if (!strcmp(t, "prismatic")) {
            set3(J->fg[ne], K->ax[1][0], K->ax[1][1], K->ax[1][2]), eq[ne++] = dot3(M, d, K->ax[1]);
            set3(J->mg[ne], "0", "0", "1"), eq[ne++] = ang;
        } else if (!strcmp(t, "fixed")) {
            set3(J->fg[ne], "1", "0", "0"), eq[ne++] = d[0];
            set3(J->fg[ne], "0", "1", "0"), eq[ne++] = d[1];
            set3(J->mg[ne], "0", "0", "1"), eq[ne++] = ang;
        } else if (!strcmp(t, "inline")) {
            set3(J->fg[ne], K->ax[1][0], K->ax[1][1], K->ax[1][2]), eq[ne++] = dot3(M, d, K->ax[1]);
        } else if (!strcmp(t, "orientation")) {
            set3(J->mg[ne], "0", "0", "1"), eq[ne++] = ang;
        } else {
            return err_at(M, get(M, val, "type"),
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
            return err_at(M, get(M, val, "type"),
                          "joint '%s': unknown type '%s' (expected revolute, prismatic, cylindrical, universal, "
                          "spherical, fixed, planar, inline, inplane, orientation, parallel_axes, perpendicular_axes, "
                          "distance, coupler)",
                          J->name, t);
        static const char *ek[3][3] = {{"1", "0", "0"}, {"0", "1", "0"}, {"0", "0", "1"}};
        if (sph)
            for (int k = 0; k < 3; k++) set3(J->fg[ne], ek[k][0], ek[k][1], ek[k][2]), eq[ne++] = d[k];
        if (lin) {
            set3(J->fg[ne], K->ax[0][0], K->ax[0][1], K->ax[0][2]), eq[ne++] = dot3(M, d, K->ax[0]);
            set3(J->fg[ne], K->ax[1][0], K->ax[1][1], K->ax[1][2]), eq[ne++] = dot3(M, d, K->ax[1]);
        }
        if (inpl) set3(J->fg[ne], K->ax[2][0], K->ax[2][1], K->ax[2][2]), eq[ne++] = dot3(M, d, K->ax[2]);
        if (par) {
            cross3(M, I->ax[2], K->ax[0], J->mg[ne]), eq[ne++] = dot3(M, I->ax[2], K->ax[0]);
            cross3(M, I->ax[2], K->ax[1], J->mg[ne]), eq[ne++] = dot3(M, I->ax[2], K->ax[1]);
        }
        if (rot) cross3(M, I->ax[0], K->ax[1], J->mg[ne]), eq[ne++] = dot3(M, I->ax[0], K->ax[1]);
        if (perp) cross3(M, I->ax[2], K->ax[2], J->mg[ne]), eq[ne++] = dot3(M, I->ax[2], K->ax[2]);
        int pi = M->b[I->body].kind == KIND_POINT || M->b[K->body].kind == KIND_POINT;
        if (pi && (par || rot || perp))
            return err_at(M, get(M, val, "type"), "joint '%s': a %s joint constrains orientation, which a point mass has not",
                          J->name, t);
    }
    J->c0 = M->src->constraints.n;
    J->nc = ne;
    for (int k = 0; k < ne && !rc; k++) rc = con(M, nm, eq[k], line, col);
    return rc;
}

static int read_joints(mech *M, const yaml_node_t *js)
{
    if (!js || (js->type == YAML_SCALAR_NODE && js->data.scalar.length == 0)) return 0;
    int rc = want_map(M, js, "'joints'");
    if (rc) return rc;
    /* first pass: names, types and markers (so measures may name any joint) */
    for (yaml_node_pair_t *p = js->data.mapping.pairs.start; p < js->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(M->doc, p->key), *v = yaml_document_get_node(M->doc, p->value);
        if (!is_scalar(k) || !valid_name(sc(k))) return err_at(M, k, "a joint name must be a plain word");
        char what[200];
        snprintf(what, sizeof what, "joint '%s'", sc(k));
        if (find_joint(M, sc(k), k->data.scalar.length) >= 0) return err_at(M, k, "duplicate joint name '%s'", sc(k));
        if ((rc = want_map(M, v, what))) return rc;
        yaml_node_t *ty = get(M, v, "type");
        if (!is_scalar(ty)) return err_at(M, ty ? ty : v, "%s: missing 'type'", what);
        int coupler = !strcmp(sc(ty), "coupler");
        static const char *okj[] = {"type", "i", "j", "distance", NULL};
        static const char *okc[] = {"type", "joints", "ratios", "offset", NULL};
        if ((rc = check_keys(M, v, coupler ? okc : okj, what))) return rc;
        if (M->nj == M->cj) {
            int cap = M->cj ? 2 * M->cj : 16;
            joint *j = mbl_realloc_array(M->jt, (size_t)cap, sizeof *j);
            if (!j) return oom(M);
            M->jt = j;
            M->cj = cap;
        }
        if (ns_add(&M->hj, sc(k), M->nj)) return oom(M);
        joint *J = &M->jt[M->nj++];
        memset(J, 0, sizeof *J);
        J->name = sc(k);
        J->type = sc(ty);
        pos_of(k, &J->line, &J->col);
        J->i = J->j = -1;
        if (!coupler) {
            if ((rc = marker_ref(M, v, "i", what, 1, &J->i))) return rc;
            if ((rc = marker_ref(M, v, "j", what, 1, &J->j))) return rc;
            if (M->mk[J->i].body == M->mk[J->j].body)
                return err_at(M, v, "%s: markers '%s' and '%s' are on the same body '%s'", what, M->mk[J->i].name,
                              M->mk[J->j].name, M->b[M->mk[J->i].body].name);
        }
    }
    int idx = 0;
    for (yaml_node_pair_t *p = js->data.mapping.pairs.start; p < js->data.mapping.pairs.top; p++, idx++) {
        yaml_node_t *v = yaml_document_get_node(M->doc, p->value);
        joint *J = &M->jt[idx];
        if (strcmp(J->type, "coupler")) {
            if ((rc = joint_constraints(M, J, v))) return rc;
            continue;
        }
        yaml_node_t *jl = get(M, v, "joints"), *rl = get(M, v, "ratios"), *of = get(M, v, "offset");
        int nj = jl && jl->type == YAML_SEQUENCE_NODE ? (int)(jl->data.sequence.items.top - jl->data.sequence.items.start) : 0;
        if (nj < 2) return err_at(M, jl ? jl : v, "coupler '%s': 'joints' must list two or more joints", J->name);
        const char *r[8];
        if (nj > 8) return err_at(M, jl, "coupler '%s': at most 8 joints", J->name);
        if ((rc = vec_of(M, rl, nj, "coupler ratios", r))) return rc;
        const char *off = "0";
        if (of && (rc = text_of(M, of, "offset", &off))) return rc;
        if (of && (rc = con_text(M, fmt(M, "coupler '%s'", J->name), "offset", of, off, 0))) return rc;
        for (int a = 0; a < nj; a++)
            if ((rc = con_text(M, fmt(M, "coupler '%s'", J->name), "ratio",
                               yaml_document_get_node(M->doc, rl->data.sequence.items.start[a]), r[a], 0)))
                return rc;
        const char *sum = fmt(M, "-(%s)", off);
        for (int a = 0; a < nj; a++) {
            yaml_node_t *jn = yaml_document_get_node(M->doc, jl->data.sequence.items.start[a]);
            if (!is_scalar(jn)) return err_at(M, jn, "coupler '%s': expected a joint name", J->name);
            int jj = find_joint(M, sc(jn), jn->data.scalar.length);
            if (jj < 0) return err_at(M, jn, "coupler '%s': no joint named '%s'", J->name, sc(jn));
            char why[300];
            const char *q = joint_coord(M, jj, why, sizeof why);
            if (!q) return M->oom ? oom(M) : err_at(M, jn, "coupler '%s': %s", J->name, why);
            sum = fmt(M, "%s + (%s)*%s", sum, r[a], q);
        }
        if ((rc = con(M, fmt(M, "coupler %s", J->name), sum, J->line, J->col))) return rc;
    }
    return 0;
}

/* a key that appeared earlier in the same mapping */
static int dup_key(mech *M, const yaml_node_t *map, const yaml_node_pair_t *p, const char *kind)
{
    yaml_node_t *k = yaml_document_get_node(M->doc, p->key);
    for (const yaml_node_pair_t *q = map->data.mapping.pairs.start; q < p; q++) {
        yaml_node_t *k2 = yaml_document_get_node(M->doc, q->key);
        if (is_scalar(k2) && !strcmp(sc(k2), sc(k)))
            return err_at(M, k, "duplicate %s name '%s' (first at line %lu)", kind, sc(k),
                          (unsigned long)k2->start_mark.line + 1);
    }
    return 0;
}

static int read_drivers(mech *M, const yaml_node_t *ds)
{
    if (!ds || (ds->type == YAML_SCALAR_NODE && ds->data.scalar.length == 0)) return 0;
    int rc = want_map(M, ds, "'drivers'");
    for (yaml_node_pair_t *p = ds->data.mapping.pairs.start; !rc && p < ds->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(M->doc, p->key), *v = yaml_document_get_node(M->doc, p->value);
        if (!is_scalar(k) || !valid_name(sc(k))) return err_at(M, k, "a driver name must be a plain word");
        if ((rc = dup_key(M, ds, p, "driver"))) return rc;
        char what[200];
        snprintf(what, sizeof what, "driver '%s'", sc(k));
        if ((rc = want_map(M, v, what))) return rc;
        static const char *ok[] = {"joint", "i", "j", "measure", "motion", NULL};
        if ((rc = check_keys(M, v, ok, what))) return rc;
        yaml_node_t *mo = get(M, v, "motion"), *jn = get(M, v, "joint");
        const char *mt = NULL;
        if (!mo) return err_at(M, v, "%s: missing 'motion'", what);
        if ((rc = text_of(M, mo, "motion", &mt))) return rc;
        if ((rc = subst(M, mt, mo, NULL, 0, &mt))) return rc;
        const char *q;
        if (jn) {
            if (!is_scalar(jn)) return err_at(M, jn, "%s: 'joint' must name a joint", what);
            int jj = find_joint(M, sc(jn), jn->data.scalar.length);
            if (jj < 0) return err_at(M, jn, "%s: no joint named '%s'", what, sc(jn));
            char why[300];
            q = joint_coord(M, jj, why, sizeof why);
            if (!q) return M->oom ? oom(M) : err_at(M, jn, "%s: %s", what, why);
        } else {
            int mi, mj;
            if ((rc = marker_ref(M, v, "i", what, 1, &mi)) || (rc = marker_ref(M, v, "j", what, 1, &mj))) return rc;
            yaml_node_t *me = get(M, v, "measure");
            if (!is_scalar(me)) return err_at(M, me ? me : v, "%s: missing 'measure' (DX DY DZ AX AY AZ)", what);
            const char *m = sc(me);
            if (strlen(m) != 2 || (m[0] != 'D' && m[0] != 'A') || (m[1] != 'X' && m[1] != 'Y' && m[1] != 'Z'))
                return err_at(M, me, "%s: measure must be DX, DY, DZ, AX, AY or AZ", what);
            const char *args[3] = {M->mk[mi].name, M->mk[mj].name, M->mk[mj].name};
            size_t al[3] = {strlen(args[0]), strlen(args[1]), strlen(args[2])};
            char why[300] = "";
            q = measure(M, m, m[0] == 'D' ? 3 : 2, args, al, why, sizeof why);
            if (!q) return err_at(M, me, "%s: %s", what, why);
        }
        int line, col;
        pos_of(k, &line, &col);
        rc = con(M, fmt(M, "driver %s", sc(k)), fmt(M, "%s - (%s)", q, mt), line, col);
        if (!rc) rc = con_text(M, fmt(M, "driver '%s'", sc(k)), "motion", mo, mt, 1);
    }
    return rc;
}

/* The first input (or der) that text uses, directly or through the variables it names (depth
 * limited: a cycle among variables is reported by the loader); *via is the variable it came
 * through (NULL when direct). */
static const char *input_in(mech *M, const char *text, int depth, const char **via)
{
    for (const char *s = text; *s;) {
        if (!is_id0(*s) || (s > text && is_id(s[-1]))) {
            s++;
            continue;
        }
        const char *e = s;
        while (is_id(*e)) e++;
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
static int check_con_texts(mech *M)
{
    for (int d = 0; d < M->ndrv; d++) {
        const struct drv *D = &M->drv[d];
        const char *via = NULL;
        const char *in = input_in(M, D->text, 0, &via);
        if (!in) continue;
        const char *thru = via ? fmt(M, " (through variable '%s')", via) : "";
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

/* ---- force elements ---------------------------------------------------------------------------- */

static void add_term(mech *M, char **acc, const char *term)
{
    *acc = *acc ? fmt(M, "%s + %s", *acc, term) : fmt(M, "%s", term);
}

/* force f (global, texts) on marker m's body at marker m's point, and torque tq (global) */
static void apply(mech *M, int m, char *const f[3], char *const tq[3], int sign)
{
    body *B = &M->b[M->mk[m].body];
    if (B->kind == KIND_GROUND) return;
    const char *sg = sign > 0 ? "" : "-";
    if (f) {
        char *rr[3];
        for (int k = 0; k < 3; k++) {
            add_term(M, &B->F[k], fmt(M, "%s%s", sg, f[k]));
            rr[k] = fmt(M, "(%s - %s)", M->mk[m].p[k], B->r[k]);
        }
        if (B->kind != KIND_POINT)
            for (int k = 0; k < 3; k++) {
                int a = (k + 1) % 3, b = (k + 2) % 3;
                if (M->planar && k < 2) continue;
                add_term(M, &B->N[k], fmt(M, "%s(%s*%s - %s*%s)", sg, rr[a], f[b], rr[b], f[a]));
            }
    }
    if (tq && B->kind != KIND_POINT)
        for (int k = 0; k < 3; k++) {
            if (M->planar && k < 2) continue;
            add_term(M, &B->N[k], fmt(M, "%s%s", sg, tq[k]));
        }
}

static int vec6(mech *M, const yaml_node_t *n, const char *what, const char *out[36])
{
    for (int k = 0; k < 36; k++) out[k] = "0";
    if (!n) return 0;
    if (n->type != YAML_SEQUENCE_NODE) return err_at(M, n, "%s must be a list of 6 numbers or 6 rows of 6", what);
    int cnt = (int)(n->data.sequence.items.top - n->data.sequence.items.start);
    if (cnt != 6) return err_at(M, n, "%s must be a list of 6 numbers or 6 rows of 6", what);
    yaml_node_t *first = yaml_document_get_node(M->doc, n->data.sequence.items.start[0]);
    if (first->type == YAML_SEQUENCE_NODE) {
        for (int r = 0; r < 6; r++) {
            const char *row[6];
            int rc = vec_of(M, yaml_document_get_node(M->doc, n->data.sequence.items.start[r]), 6, what, row);
            if (rc) return rc;
            for (int c = 0; c < 6; c++) out[6 * r + c] = row[c];
        }
        return 0;
    }
    const char *dg[6];
    int rc = vec_of(M, n, 6, what, dg);
    for (int k = 0; k < 6 && !rc; k++) out[7 * k] = dg[k];
    return rc;
}

/* A bushing's rotational deflection (AX AY AZ) is a small-angle measure that is zero when its
 * markers are aligned: markers that are not aligned in the file's configuration give a torque
 * preload nobody asked for and a stiffness that is not K. Refused above
 * MBL_MECH_BUSHING_ANGLE_TOL (a rotational preload goes under 'preload'); a translational offset
 * is an exact linear preload and is accepted. */
static int bushing_aligned(mech *M, const yaml_node_t *key, const char *what, int mi, int mj)
{
    const double *Ri = M->mk[mi].R0, *Rj = M->mk[mj].R0;
    double Rr[9]; /* Rj^T Ri, column-major */
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            double d = 0;
            for (int k = 0; k < 3; k++) d += Rj[3 * b + k] * Ri[3 * a + k];
            Rr[3 * a + b] = d;
        }
    double e[4];
    euler_params(Rr, e);
    double ang = 2 * atan2(sqrt(e[1] * e[1] + e[2] * e[2] + e[3] * e[3]), fabs(e[0]));
    M->used_set = M->mk[mi].oset >= 0 ? M->mk[mi].oset : M->mk[mj].oset;
    if (ang > MBL_MECH_BUSHING_ANGLE_TOL)
        return err_at(M, key,
                      "%s: markers '%s' and '%s' are not aligned in the file's configuration (rotated %.3g rad "
                      "relative to each other): a bushing is unloaded with aligned markers; align them and give a "
                      "rotational preload under 'preload'%s",
                      what, M->mk[mi].name, M->mk[mj].name, ang, set_note(M));
    return 0;
}

static int read_force(mech *M, const yaml_node_t *key, const yaml_node_t *v)
{
    const char *name = sc(key);
    char what[200];
    snprintf(what, sizeof what, "force '%s'", name);
    int rc = want_map(M, v, what);
    if (rc) return rc;
    yaml_node_t *ty = get(M, v, "type");
    if (!is_scalar(ty)) return err_at(M, ty ? ty : v, "%s: missing 'type' (gravity, spring, torsion, bushing, force)", what);
    const char *t = sc(ty);
    int line, col;
    pos_of(key, &line, &col);
    if (!strcmp(t, "gravity")) {
        static const char *ok[] = {"type", "g", NULL};
        if ((rc = check_keys(M, v, ok, what))) return rc;
        const char *g[3] = {"0", "0", "0"};
        yaml_node_t *gn = get(M, v, "g");
        if (!gn) return err_at(M, v, "%s: missing 'g' (the gravity vector)", what);
        if ((rc = vec_of(M, gn, M->planar ? 2 : 3, "g", g))) return rc;
        sbuf pb = {0};
        sb_add(M, &pb, "", M->src->potential_energy.text ? M->src->potential_energy.text : "0");
        for (int b = 0; b < M->nb; b++) {
            body *B = &M->b[b];
            if (B->kind == KIND_GROUND) continue;
            for (int k = 0; k < 3; k++) {
                if (!strcmp(g[k], "0")) continue;
                const char *rc_k = fmt(M, "%s + %s*(%s) + %s*(%s) + %s*(%s)", B->r[k], B->A[3 * k], B->cm[0],
                                       B->A[3 * k + 1], B->cm[1], B->A[3 * k + 2], B->cm[2]);
                sb_add(M, &pb, " - ", fmt(M, "(%s)*(%s)*(%s)", B->mass, g[k], rc_k));
            }
        }
        const char *pe = sb_done(M, &pb);
        char *npe = dup_s(pe);
        if (!npe) return oom(M);
        mbl_free(M->src->potential_energy.text);
        M->src->potential_energy.text = npe;
        M->src->potential_energy.line = line;
        M->src->potential_energy.col = col;
        return 0;
    }
    int mi = -1, mj = -1;
    if (!strcmp(t, "spring") || !strcmp(t, "torsion")) {
        int tor = t[0] == 't';
        static const char *oks[] = {"type", "i", "j", "stiffness", "damping", "length", "preload", "force", NULL};
        static const char *okt[] = {"type", "i", "j", "stiffness", "damping", "angle", "preload", "torque", NULL};
        if ((rc = check_keys(M, v, tor ? okt : oks, what))) return rc;
        if ((rc = marker_ref(M, v, "i", what, 1, &mi)) || (rc = marker_ref(M, v, "j", what, 1, &mj))) return rc;
        const char *L = fmt(M, "_L_%s", name);
        char *d[3];
        dvec(M, mi, mj, d);
        marker *I = &M->mk[mi], *J = &M->mk[mj];
        if (tor)
            rc = add_var(M, L, M->planar ? fmt(M, "%s - %s", I->phi, J->phi)
                                         : twist_angle(M, mi, mj),
                         line, col);
        else
            rc = add_var(M, L, fmt(M, "sqrt(%s)", dot3(M, d, d)), line, col);
        if (rc) return rc;
        const char *ftext = NULL;
        yaml_node_t *fe = get(M, v, tor ? "torque" : "force");
        if (fe) {
            local loc[3] = {{tor ? "angle" : "length", L}, {"rate", fmt(M, "der(%s)", L)}, {NULL, NULL}};
            if ((rc = text_of(M, fe, what, &ftext)) || (rc = subst(M, ftext, fe, loc, 2, &ftext))) return rc;
            if (get(M, v, "stiffness") || get(M, v, "damping"))
                return err_at(M, fe, "%s: give either '%s' or stiffness/damping", what, tor ? "torque" : "force");
        } else {
            const char *k = "0", *c = "0", *l0 = "0", *f0 = "0";
            yaml_node_t *n;
            if ((n = get(M, v, "stiffness")) && (rc = text_of(M, n, "stiffness", &k))) return rc;
            if ((n = get(M, v, "damping")) && (rc = text_of(M, n, "damping", &c))) return rc;
            if ((n = get(M, v, tor ? "angle" : "length")) && (rc = text_of(M, n, "free length", &l0))) return rc;
            if ((n = get(M, v, "preload")) && (rc = text_of(M, n, "preload", &f0))) return rc;
            /* the actuator (preload) and the coefficients may use inputs and measures */
            if ((rc = subst(M, k, v, NULL, 0, &k)) || (rc = subst(M, c, v, NULL, 0, &c)) ||
                (rc = subst(M, f0, v, NULL, 0, &f0)))
                return rc;
            ftext = fmt(M, "-(%s)*(%s - (%s)) - (%s)*der(%s) + (%s)", k, L, l0, c, L, f0);
        }
        const char *fn = fmt(M, "_f_%s", name);
        if (fe) pos_of(fe, &line, &col); /* errors in the user's expression point into it */
        if ((rc = add_var(M, fn, ftext, line, col))) return rc;
        char *f[3];
        if (tor) {
            /* torque about J's z axis on I, reaction on J */
            for (int k = 0; k < 3; k++) f[k] = fmt(M, "%s*%s", fn, J->ax[2][k]);
            apply(M, mi, NULL, f, 1);
            apply(M, mj, NULL, f, -1);
        } else {
            /* positive force pushes the markers apart along the line from J to I */
            for (int k = 0; k < 3; k++) f[k] = fmt(M, "%s*%s/%s", fn, d[k], L);
            apply(M, mi, f, NULL, 1);
            apply(M, mj, f, NULL, -1);
        }
        return M->oom ? oom(M) : 0;
    }
    if (!strcmp(t, "bushing")) {
        static const char *ok[] = {"type", "i", "j", "stiffness", "damping", "preload", NULL};
        if ((rc = check_keys(M, v, ok, what))) return rc;
        if (M->planar) return err_at(M, ty, "%s: a bushing needs a spatial mechanism (use springs and torsions)", what);
        if ((rc = marker_ref(M, v, "i", what, 1, &mi)) || (rc = marker_ref(M, v, "j", what, 1, &mj))) return rc;
        if ((rc = bushing_aligned(M, key, what, mi, mj))) return rc;
        const char *K[36], *C[36];
        if ((rc = vec6(M, get(M, v, "stiffness"), "stiffness", K)) || (rc = vec6(M, get(M, v, "damping"), "damping", C)))
            return rc;
        const char *f0[6] = {"0", "0", "0", "0", "0", "0"};
        yaml_node_t *pn = get(M, v, "preload");
        if (pn && (rc = vec_of(M, pn, 6, "preload", f0))) return rc;
        /* deflections and their rates in J's frame */
        static const char *mn[6] = {"DX", "DY", "DZ", "AX", "AY", "AZ"};
        const char *args[3] = {M->mk[mi].name, M->mk[mj].name, M->mk[mj].name};
        size_t al[3] = {strlen(args[0]), strlen(args[1]), strlen(args[2])};
        const char *q[6], *qd[6];
        char why[300];
        for (int k = 0; k < 6; k++) {
            const char *m = measure(M, mn[k], k < 3 ? 3 : 2, args, al, why, sizeof why);
            if (!m) return err_at(M, v, "%s: %s", what, why);
            q[k] = fmt(M, "_q_%s_%d", name, k + 1);
            if ((rc = add_var(M, q[k], m, line, col))) return rc;
        }
        for (int k = 0; k < 3; k++) qd[k] = fmt(M, "der(%s)", q[k]);
        {
            const char *wr = measure(M, "WX", 3, args, al, why, sizeof why);
            const char *wy = measure(M, "WY", 3, args, al, why, sizeof why);
            const char *wz = measure(M, "WZ", 3, args, al, why, sizeof why);
            if (!wr || !wy || !wz) return oom(M);
            qd[3] = wr;
            qd[4] = wy;
            qd[5] = wz;
        }
        const char *fl[6];
        for (int r = 0; r < 6; r++) {
            const char *s = fmt(M, "(%s)", f0[r]);
            for (int c = 0; c < 6; c++) {
                if (strcmp(K[6 * r + c], "0")) s = fmt(M, "%s - (%s)*%s", s, K[6 * r + c], q[c]);
                if (strcmp(C[6 * r + c], "0")) s = fmt(M, "%s - (%s)*(%s)", s, C[6 * r + c], qd[c]);
            }
            fl[r] = fmt(M, "_f_%s_%d", name, r + 1);
            if ((rc = add_var(M, fl[r], s, line, col))) return rc;
        }
        char *f[3], *tq[3];
        marker *J = &M->mk[mj];
        for (int k = 0; k < 3; k++) {
            f[k] = fmt(M, "(%s*%s + %s*%s + %s*%s)", fl[0], J->ax[0][k], fl[1], J->ax[1][k], fl[2], J->ax[2][k]);
            tq[k] = fmt(M, "(%s*%s + %s*%s + %s*%s)", fl[3], J->ax[0][k], fl[4], J->ax[1][k], fl[5], J->ax[2][k]);
        }
        apply(M, mi, f, tq, 1);
        /* reaction on J's body at the same point (the point of marker i) */
        body *BJ = &M->b[J->body];
        if (BJ->kind != KIND_GROUND) {
            for (int k = 0; k < 3; k++) add_term(M, &BJ->F[k], fmt(M, "-%s", f[k]));
            if (BJ->kind != KIND_POINT)
                for (int k = 0; k < 3; k++) {
                    int a = (k + 1) % 3, b = (k + 2) % 3;
                    add_term(M, &BJ->N[k], fmt(M, "-((%s - %s)*%s - (%s - %s)*%s) - %s", M->mk[mi].p[a], BJ->r[a],
                                               f[b], M->mk[mi].p[b], BJ->r[b], f[a], tq[k]));
                }
        }
        return M->oom ? oom(M) : 0;
    }
    if (!strcmp(t, "force")) {
        static const char *ok[] = {"type", "i", "frame", "reaction", "force", "torque", NULL};
        if ((rc = check_keys(M, v, ok, what))) return rc;
        int fr = -1, re = -1;
        if ((rc = marker_ref(M, v, "i", what, 1, &mi)) || (rc = marker_ref(M, v, "frame", what, 0, &fr)) ||
            (rc = marker_ref(M, v, "reaction", what, 0, &re)))
            return rc;
        int dim = M->planar ? 2 : 3;
        const char *fc[3] = {"0", "0", "0"}, *tc[3] = {"0", "0", "0"};
        yaml_node_t *fn = get(M, v, "force"), *tn = get(M, v, "torque");
        if (!fn && !tn) return err_at(M, v, "%s: give 'force' and/or 'torque'", what);
        if (fn && (rc = vec_of(M, fn, dim, "force", fc))) return rc;
        if (tn) {
            if (M->planar) {
                if ((rc = text_of(M, tn, "torque", &tc[2]))) return rc;
            } else if ((rc = vec_of(M, tn, 3, "torque", tc)))
                return rc;
        }
        for (int k = 0; k < 3; k++) {
            if ((rc = subst(M, fc[k], fn, NULL, 0, &fc[k]))) return rc;
            if ((rc = subst(M, tc[k], tn, NULL, 0, &tc[k]))) return rc;
        }
        char *f[3], *tq[3];
        for (int k = 0; k < 3; k++) {
            if (fr >= 0) {
                marker *F = &M->mk[fr];
                f[k] = fmt(M, "((%s)*%s + (%s)*%s + (%s)*%s)", fc[0], F->ax[0][k], fc[1], F->ax[1][k], fc[2], F->ax[2][k]);
                tq[k] = fmt(M, "((%s)*%s + (%s)*%s + (%s)*%s)", tc[0], F->ax[0][k], tc[1], F->ax[1][k], tc[2], F->ax[2][k]);
            } else {
                f[k] = fmt(M, "(%s)", fc[k]);
                tq[k] = fmt(M, "(%s)", tc[k]);
            }
        }
        for (int k = 0; k < 3; k++) {
            const char *nf = fmt(M, "_f_%s_%d", name, k + 1), *nt = fmt(M, "_t_%s_%d", name, k + 1);
            if ((rc = add_var(M, nf, f[k], line, col)) || (rc = add_var(M, nt, tq[k], line, col))) return rc;
            f[k] = (char *)nf;
            tq[k] = (char *)nt;
        }
        apply(M, mi, f, tq, 1);
        if (re >= 0) {
            body *BJ = &M->b[M->mk[re].body];
            if (BJ->kind != KIND_GROUND) {
                for (int k = 0; k < 3; k++) add_term(M, &BJ->F[k], fmt(M, "-%s", f[k]));
                if (BJ->kind != KIND_POINT)
                    for (int k = 0; k < 3; k++) {
                        if (M->planar && k < 2) continue;
                        int a = (k + 1) % 3, b = (k + 2) % 3;
                        add_term(M, &BJ->N[k], fmt(M, "-((%s - %s)*%s - (%s - %s)*%s) - %s", M->mk[mi].p[a], BJ->r[a],
                                                   f[b], M->mk[mi].p[b], BJ->r[b], f[a], tq[k]));
                    }
            }
        }
        return M->oom ? oom(M) : 0;
    }
    return err_at(M, ty, "%s: unknown type '%s' (expected gravity, spring, torsion, bushing, force)", what, t);
}

/* ---- kinetic energy and generalized forces ----------------------------------------------------- */

static int energies_and_forces(mech *M, int line, int col)
{
    sbuf Tb_all = {0};
    int rc = 0;
    for (int b = 0; b < M->nb && !rc; b++) {
        body *B = &M->b[b];
        if (B->kind == KIND_GROUND) continue;
        const char *vc[3];
        for (int k = 0; k < 3; k++) {
            const char *rk = B->kind == KIND_POINT ? B->r[k]
                                                   : fmt(M, "%s + %s*(%s) + %s*(%s) + %s*(%s)", B->r[k], B->A[3 * k],
                                                         B->cm[0], B->A[3 * k + 1], B->cm[1], B->A[3 * k + 2], B->cm[2]);
            vc[k] = fmt(M, "der(%s)", rk);
        }
        const char *Tb = fmt(M, "0.5*(%s)*((%s)^2 + (%s)^2 + (%s)^2)", B->mass, vc[0], vc[1], vc[2]);
        if (B->kind == KIND_PLANAR) Tb = fmt(M, "%s + 0.5*(%s)*der(%s)^2", Tb, B->I[2], B->th);
        if (B->kind == KIND_SPATIAL) {
            /* body-frame angular velocity w' = 2 G(e) der(e) */
            char **e = B->e;
            const char *d[4];
            for (int k = 0; k < 4; k++) d[k] = fmt(M, "der(%s)", e[k]);
            const char *wb[3] = {
                fmt(M, "_wb_%s_1", B->name), fmt(M, "_wb_%s_2", B->name), fmt(M, "_wb_%s_3", B->name)};
            const char *wt[3] = {
                fmt(M, "2*(-%s*%s + %s*%s + %s*%s - %s*%s)", e[1], d[0], e[0], d[1], e[3], d[2], e[2], d[3]),
                fmt(M, "2*(-%s*%s - %s*%s + %s*%s + %s*%s)", e[2], d[0], e[3], d[1], e[0], d[2], e[1], d[3]),
                fmt(M, "2*(-%s*%s + %s*%s - %s*%s + %s*%s)", e[3], d[0], e[2], d[1], e[1], d[2], e[0], d[3])};
            for (int k = 0; k < 3 && !rc; k++) rc = add_var(M, wb[k], wt[k], B->line, B->col);
            /* I = [xx yy zz xy xz yz] */
            Tb = fmt(M, "%s + 0.5*((%s)*%s^2 + (%s)*%s^2 + (%s)*%s^2 + 2*(%s)*%s*%s + 2*(%s)*%s*%s + 2*(%s)*%s*%s)", Tb,
                     B->I[0], wb[0], B->I[1], wb[1], B->I[2], wb[2], B->I[3], wb[0], wb[1], B->I[4], wb[0], wb[2],
                     B->I[5], wb[1], wb[2]);
        }
        const char *tn = fmt(M, "_T_%s", B->name);
        if (!rc) rc = add_var(M, tn, Tb, B->line, B->col);
        sb_add(M, &Tb_all, Tb_all.n ? " + " : "", tn);
        /* generalized forces */
        int anyF = B->F[0] || B->F[1] || B->F[2], anyN = B->N[0] || B->N[1] || B->N[2];
        int dim = M->planar ? 2 : 3;
        if (anyF)
            for (int k = 0; k < dim && !rc; k++)
                if (B->F[k]) rc = push(M, &M->src->forces, B->r[k], B->F[k], B->line, B->col);
        if (!anyN || B->kind == KIND_POINT) continue;
        if (B->kind == KIND_PLANAR) {
            if (B->N[2] && !rc) rc = push(M, &M->src->forces, B->th, B->N[2], B->line, B->col);
            continue;
        }
        const char *N[3] = {"0", "0", "0"};
        for (int k = 0; k < 3 && !rc; k++) {
            N[k] = fmt(M, "_N_%s_%d", B->name, k + 1);
            rc = add_var(M, N[k], B->N[k] ? B->N[k] : "0", B->line, B->col);
        }
        if (rc) break;
        char **e = B->e;
        const char *Q[4] = {fmt(M, "2*(-%s*%s - %s*%s - %s*%s)", e[1], N[0], e[2], N[1], e[3], N[2]),
                            fmt(M, "2*(%s*%s + %s*%s - %s*%s)", e[0], N[0], e[3], N[1], e[2], N[2]),
                            fmt(M, "2*(-%s*%s + %s*%s + %s*%s)", e[3], N[0], e[0], N[1], e[1], N[2]),
                            fmt(M, "2*(%s*%s - %s*%s + %s*%s)", e[2], N[0], e[1], N[1], e[0], N[2])};
        for (int k = 0; k < 4 && !rc; k++) rc = push(M, &M->src->forces, e[k], Q[k], B->line, B->col);
    }
    const char *T = sb_done(M, &Tb_all);
    if (rc) return rc;
    if (M->oom) return oom(M);
    M->src->kinetic_energy.text = dup_s(T);
    if (!M->src->kinetic_energy.text) return oom(M);
    M->src->kinetic_energy.line = M->src->kinetic_energy.key_line = line;
    M->src->kinetic_energy.col = M->src->kinetic_energy.key_col = col;
    return 0;
}

/* ---- user expressions: variables, outputs, inputs, states ------------------------------------- */

static int copy_map(mech *M, const yaml_node_t *m, mbl_src_list *l, const char *what, int do_subst)
{
    if (!m || (m->type == YAML_SCALAR_NODE && m->data.scalar.length == 0)) return 0;
    if (m->type != YAML_MAPPING_NODE) return err_at(M, m, "'%s' must be a mapping of name: value", what);
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(M->doc, p->key), *v = yaml_document_get_node(M->doc, p->value);
        if (!is_scalar(k) || k->data.scalar.length == 0) return err_at(M, k, "in '%s': a name must be a plain word", what);
        const char *t = NULL;
        int rc = text_of(M, v, what, &t);
        if (!rc && do_subst) rc = subst(M, t, v, NULL, 0, &t);
        if (rc) return rc;
        for (int i = 0; i < l->n; i++)
            if (!strcmp(l->items[i].key, sc(k))) return err_at(M, k, "duplicate name '%s' in '%s'", sc(k), what);
        int line, col;
        pos_of(v, &line, &col);
        if ((rc = push(M, l, sc(k), t, line, col))) return rc;
        pos_of(k, &l->items[l->n - 1].key_line, &l->items[l->n - 1].key_col);
    }
    return 0;
}

/* a state expression becomes a variable named after its text (so reports show "AX_rotor_base") */
static int state_list(mech *M, const yaml_node_t *s, mbl_src_list *l, const char *what)
{
    if (!s || (s->type == YAML_SCALAR_NODE && s->data.scalar.length == 0)) return 0;
    if (s->type != YAML_SEQUENCE_NODE) return err_at(M, s, "'%s' must be a list", what);
    for (yaml_node_item_t *p = s->data.sequence.items.start; p < s->data.sequence.items.top; p++) {
        yaml_node_t *v = yaml_document_get_node(M->doc, *p);
        const char *t = NULL, *x = NULL;
        int rc = text_of(M, v, what, &t);
        if (!rc) rc = subst(M, t, v, NULL, 0, &x);
        if (rc) return rc;
        int line, col;
        pos_of(v, &line, &col);
        if (!strcmp(x, t)) {
            rc = push(M, l, NULL, t, line, col);
        } else {
            /* name: the text with every non-identifier run replaced by one '_' */
            size_t n = strlen(t);
            char *nm = mbl_malloc(n + 2);
            if (!nm || !keep(M, nm)) return oom(M);
            size_t o = 0;
            for (size_t i = 0; i < n; i++) {
                if (is_id(t[i])) nm[o++] = t[i];
                else if (o && nm[o - 1] != '_') nm[o++] = '_';
            }
            while (o && nm[o - 1] == '_') o--;
            nm[o] = '\0';
            if (!o || !is_id0(nm[0])) nm = fmt(M, "state_%d", ++M->nstate);
            for (int i = 0; i < M->src->variables.n; i++)
                if (!strcmp(M->src->variables.items[i].key, nm)) nm = fmt(M, "%s_%d", nm, ++M->nstate);
            rc = add_var(M, nm, x, line, col);
            if (!rc) rc = push(M, l, NULL, nm, line, col);
        }
        if (rc) return rc;
    }
    return 0;
}

static int scalar_item(mech *M, const yaml_node_t *k, const yaml_node_t *v, mbl_src_item *it)
{
    if (!is_scalar(v)) return err_at(M, v, "'%s' must be a single value", sc(k));
    it->text = dup_s(sc(v));
    if (!it->text) return oom(M);
    pos_of(k, &it->key_line, &it->key_col);
    pos_of(v, &it->line, &it->col);
    return 0;
}

static int read_linearize(mech *M, const yaml_node_t *v)
{
    if (!v) return 0;
    int rc = want_map(M, v, "'linearize'");
    static const char *ok[] = {"at", "states", "velocity_states", "time", NULL};
    if (!rc) rc = check_keys(M, v, ok, "linearize");
    if (rc) return rc;
    for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top && !rc; p++) {
        yaml_node_t *k = yaml_document_get_node(M->doc, p->key), *x = yaml_document_get_node(M->doc, p->value);
        if (!strcmp(sc(k), "at")) rc = scalar_item(M, k, x, &M->src->at);
        else if (!strcmp(sc(k), "time")) rc = scalar_item(M, k, x, &M->src->time);
        else if (!strcmp(sc(k), "states")) rc = state_list(M, x, &M->src->states, "states");
        else rc = state_list(M, x, &M->src->velocity_states, "velocity_states");
    }
    return rc;
}

/* ---- the root -------------------------------------------------------------------------------- */

static int read_all(mech *M, const yaml_node_t *root)
{
    static const char *ok[] = {"model", "name", "parameters", "space", "ground", "bodies", "joints", "drivers",
                               "forces", "inputs", "variables", "outputs", "linearize", NULL};
    int rc = check_keys(M, root, ok, "mechanism");
    if (rc) return rc;
    yaml_node_t *n;
    if ((n = get(M, root, "name"))) {
        if (!is_scalar(n)) return err_at(M, n, "'name' must be text");
        char *s = dup_s(sc(n));
        if (!s) return oom(M);
        mbl_free(M->src->name);
        M->src->name = s;
    }
    if ((n = get(M, root, "space"))) {
        if (!is_scalar(n) || (strcmp(sc(n), "planar") && strcmp(sc(n), "spatial")))
            return err_at(M, n, "'space' must be planar or spatial");
        M->planar = !strcmp(sc(n), "planar");
    }
    /* parameters: copied, and evaluated here with the file's values for the checks */
    if ((rc = copy_map(M, get(M, root, "parameters"), &M->src->parameters, "parameters", 0))) return rc;
    int np = M->src->parameters.n;
    M->pval = mbl_calloc((size_t)(np ? np : 1), sizeof *M->pval);
    M->pset = mbl_calloc((size_t)(np ? np : 1), sizeof *M->pset);
    if (!M->pval || !M->pset) return oom(M);
    for (int i = 0; i < np; i++) {
        M->np_eval = i;
        set_track(M);
        char what[160];
        snprintf(what, sizeof what, "parameter '%s'", M->src->parameters.items[i].key);
        const mbl_src_item *it = &M->src->parameters.items[i];
        mblx_parse_opts po;
        memset(&po, 0, sizeof po);
        po.resolve = resolve_param;
        po.ud = M;
        po.line = it->line;
        po.col = it->col;
        mbl_status st;
        mblx_id e;
        rc = mblx_parse(M->g, it->text, strlen(it->text), &po, &e, &st);
        if (rc == MBL_ENOMEM) return oom(M);
        if (rc) return mbl_error(M->st, MBL_EMODEL, "%s:%s (in %s)", M->file, st.msg, what);
        double dummy = 0;
        if ((rc = mblx_eval(M->g, e, &dummy, &M->pval[i], &st)) == MBL_ENOMEM) return oom(M);
        if (rc)
            return mbl_error(M->st, MBL_EMODEL, "%s:%d:%d: %s (in %s)", M->file, it->line, it->col, st.msg, what);
        M->pset[i] = M->used_set;
        /* a --set replaces the value (the expression still had to be valid); a non-finite or
         * unknown override is reported by the model loader */
        for (int k = 0; k < M->nsets; k++)
            if (M->sets[k].name && !strcmp(M->sets[k].name, it->key) && isfinite(M->sets[k].value)) {
                M->pval[i] = M->sets[k].value;
                M->pset[i] = k;
            }
    }
    M->np_eval = np;
    set_track(M);
    if ((rc = copy_map(M, get(M, root, "inputs"), &M->src->inputs, "inputs", 0))) return rc;
    /* ground */
    body *G = new_body(M, "ground", NULL);
    if (!G) return oom(M);
    G->kind = KIND_GROUND;
    static char *I9[9] = {"1", "0", "0", "0", "1", "0", "0", "0", "1"};
    for (int k = 0; k < 9; k++) G->A[k] = I9[k];
    for (int k = 0; k < 3; k++) G->r[k] = G->w[k] = "0";
    if ((n = get(M, root, "ground"))) {
        if (n->type != YAML_MAPPING_NODE) return err_at(M, n, "'ground' must be a mapping with 'markers'");
        static const char *okg[] = {"markers", NULL};
        if ((rc = check_keys(M, n, okg, "ground"))) return rc;
        if ((rc = add_markers(M, 0, get(M, n, "markers")))) return rc;
    }
    n = get(M, root, "bodies");
    if (!n || n->type != YAML_MAPPING_NODE || n->data.mapping.pairs.start == n->data.mapping.pairs.top)
        return err_at(M, n ? n : root, "the mechanism has no bodies ('bodies' must be a mapping name: {...})");
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(M->doc, p->key);
        if (!is_scalar(k)) return err_at(M, k, "a body name must be a plain word");
        if ((rc = read_body(M, k, yaml_document_get_node(M->doc, p->value)))) return rc;
    }
    if ((rc = read_joints(M, get(M, root, "joints")))) return rc;
    if ((rc = read_drivers(M, get(M, root, "drivers")))) return rc;
    if ((n = get(M, root, "forces")) && !(n->type == YAML_SCALAR_NODE && n->data.scalar.length == 0)) {
        if ((rc = want_map(M, n, "'forces'"))) return rc;
        for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
            yaml_node_t *k = yaml_document_get_node(M->doc, p->key);
            if (!is_scalar(k) || !valid_name(sc(k))) return err_at(M, k, "a force name must be a plain word");
            if ((rc = dup_key(M, n, p, "force"))) return rc;
            if ((rc = read_force(M, k, yaml_document_get_node(M->doc, p->value)))) return rc;
        }
    }
    if ((rc = copy_map(M, get(M, root, "variables"), &M->src->variables, "variables", 1))) return rc;
    if ((rc = check_con_texts(M))) return rc;
    if ((rc = copy_map(M, get(M, root, "outputs"), &M->src->outputs, "outputs", 1))) return rc;
    if ((rc = read_linearize(M, get(M, root, "linearize")))) return rc;
    int line, col;
    pos_of(root, &line, &col);
    int ncoord = M->src->coordinates.n, ncon = M->src->constraints.n;
    if (ncon > ncoord)
        return err_at(M, get(M, root, "joints"),
                      "the joints over-constrain the mechanism: %d constraint equations for %d coordinates (Gruebler "
                      "count %d); replace redundant joints by weaker ones (e.g. a revolute closing a loop by a "
                      "universal or spherical joint)",
                      ncon, ncoord, ncoord - ncon);
    return energies_and_forces(M, line, col);
}

int mbl_mech_read(yaml_document_t *doc, const yaml_node_t *root, const char *file, const mbl_setting *sets, int nsets,
                  mbl_src *src, mbl_status *st)
{
    mech M;
    memset(&M, 0, sizeof M);
    M.sets = sets;
    M.nsets = sets ? nsets : 0;
    M.used_set = -1;
    M.doc = doc;
    M.file = file;
    M.src = src;
    M.st = st;
    M.g = mblx_graph_new();
    int rc = M.g ? read_all(&M, root) : oom(&M);
    if (!rc && M.oom) rc = oom(&M);
    for (int i = 0; i < M.narena; i++) mbl_free(M.arena[i]);
    mbl_free(M.arena);
    mbl_free(M.pval);
    mbl_free(M.pset);
    mbl_free(M.drv);
    mbl_free(M.b);
    mbl_free(M.mk);
    mbl_free(M.jt);
    ns_free(&M.hb);
    ns_free(&M.hm);
    ns_free(&M.hj);
    mblx_graph_free(M.g);
    return rc;
}
