/* A mode named without depending on where its eigenvalue lies (docs/study.md, "Naming a mode"):
 * by its number in the listing (mbl_mode_order), by its shape (the largest MAC with a vector of
 * weights on named coordinates), or by a branch of a sweep's JSON (its eigenvalue interpolated at
 * the parameter value, the nearest mode). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "mblin/sensitivity.h"
#include "model/source.h"

/* two best MACs closer than this: the shape does not tell the modes apart */
#define PICK_MAC_TIE 1e-6
/* the best MAC must be at least this */
#define PICK_MAC_MIN 0.5

/* ---- by shape ------------------------------------------------------------------------------ */

static int all_digits_consumed(const char *s, const char *e, double *x)
{
    char *end = NULL;
    errno = 0;
    *x = strtod(s, &end);
    return end == e && end != s && isfinite(*x);
}

/* A weight: a real number, or complex as a+bi, a-bi, bi, i, -i (no spaces inside). */
static int parse_weight(const char *s, size_t len, double *re, double *im)
{
    char buf[128];
    if (len == 0 || len >= sizeof buf) return -1;
    memcpy(buf, s, len);
    buf[len] = 0;
    *re = *im = 0;
    if (buf[len - 1] != 'i') return all_digits_consumed(buf, buf + len, re) ? 0 : -1;
    buf[--len] = 0; /* the imaginary unit off */
    size_t k = 0; /* where the imaginary part starts: the last sign not of an exponent */
    for (size_t i = len; i-- > 1;)
        if ((buf[i] == '+' || buf[i] == '-') && buf[i - 1] != 'e' && buf[i - 1] != 'E') {
            k = i;
            break;
        }
    if (k > 0) {
        char c = buf[k];
        buf[k] = 0;
        if (!all_digits_consumed(buf, buf + k, re)) return -1;
        buf[k] = c;
    }
    const char *ip = buf + k;
    size_t il = len - k;
    if (il == 0 || (il == 1 && (ip[0] == '+' || ip[0] == '-'))) {
        *im = il == 1 && ip[0] == '-' ? -1.0 : 1.0;
        return 0;
    }
    return all_digits_consumed(ip, ip + il, im) ? 0 : -1;
}

static size_t trim(const char **s, size_t len)
{
    while (len && (**s == ' ' || **s == '\t')) (*s)++, len--;
    while (len && ((*s)[len - 1] == ' ' || (*s)[len - 1] == '\t')) len--;
    return len;
}

/* The weights of "NAME[=W],..." on the model's coordinates (w: 2n, re then im). */
static int parse_shape(const mbl_model *md, int n, const char *spec, double *w, mbl_status *st)
{
    char *given = mbl_calloc((size_t)n + 1, 1);
    if (!given) return mbl_error(st, MBL_ENOMEM, "out of memory");
    int rc = 0, any = 0;
    for (int i = 0; i < 2 * n; i++) w[i] = 0;
    for (const char *p = spec; !rc;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        const char *eq = memchr(p, '=', len), *name = p, *ws = NULL;
        size_t nl = eq ? (size_t)(eq - p) : len, wl = 0;
        nl = trim(&name, nl);
        if (eq) ws = eq + 1, wl = trim(&ws, len - (size_t)(eq + 1 - p));
        int c = -1;
        for (int i = 0; i < n && c < 0; i++) {
            const char *cn = mbl_model_coord_name(md, i);
            if (cn && strlen(cn) == nl && !strncmp(cn, name, nl)) c = i;
        }
        double re = 1, im = 0;
        if (nl == 0) {
            rc = mbl_error(st, MBL_EARG, "mode shape '%s': an empty coordinate name (NAME[=W],NAME[=W],...)", spec);
        } else if (c < 0) {
            char list[200] = "";
            size_t l = 0;
            for (int i = 0; i < n && i < 6 && l < sizeof list; i++) {
                int wr = snprintf(list + l, sizeof list - l, "%s%s", i ? ", " : "", mbl_model_coord_name(md, i));
                if (wr < 0) break;
                l += (size_t)wr;
            }
            rc = mbl_error(st, MBL_EARG, "mode shape '%s': the model has no coordinate '%.*s' (its coordinates: %s%s)",
                           spec, (int)nl, name, list, n > 6 ? ", ..." : "");
        } else if (given[c]) {
            rc = mbl_error(st, MBL_EARG, "mode shape '%s': coordinate '%.*s' given twice", spec, (int)nl, name);
        } else if (eq && parse_weight(ws, wl, &re, &im)) {
            rc = mbl_error(st, MBL_EARG,
                           "mode shape '%s': the weight '%.*s' of '%.*s' is not a number (real, or complex as a+bi, "
                           "bi, -i)", spec, (int)wl, ws, (int)nl, name);
        } else {
            given[c] = 1;
            w[c] = re, w[n + c] = im;
            any |= re != 0 || im != 0;
        }
        if (!comma) break;
        p = comma + 1;
    }
    mbl_free(given);
    if (!rc && !any) rc = mbl_error(st, MBL_EARG, "mode shape '%s': every weight is zero", spec);
    return rc;
}

static double mac_with(int n, const double *w, const double *sr, const double *si)
{
    double pr = 0, pi = 0, nw = 0, ns = 0; /* w^H s */
    for (int i = 0; i < n; i++) {
        double ar = w[i], ai = w[n + i];
        pr += ar * sr[i] + ai * si[i];
        pi += ar * si[i] - ai * sr[i];
        nw += ar * ar + ai * ai;
        ns += sr[i] * sr[i] + si[i] * si[i];
    }
    return nw > 0 && ns > 0 ? (pr * pr + pi * pi) / (nw * ns) : 0.0;
}

static int pick_shape(const mbl_model *md, const mbl_sensitivity *S, const char *spec, int *mode, mbl_status *st)
{
    int n = S->n;
    if (!md) return mbl_error(st, MBL_EARG, "mbl_mode_pick: a mode named by its shape needs the model");
    if (!S->shape_re || !S->shape_im || n < 1)
        return mbl_error(st, MBL_EARG, "mbl_mode_pick: the sensitivities have no mode shapes");
    double *w = mbl_alloc_array(2 * (size_t)n, sizeof *w);
    if (!w) return mbl_error(st, MBL_ENOMEM, "out of memory");
    int rc = parse_shape(md, n, spec, w, st);
    int b1 = -1, b2 = -1;
    double m1 = -1, m2 = -1;
    for (int k = 0; !rc && k < S->nmode; k++) {
        if (S->modes[k].im < 0) continue; /* the upper half plane: a conjugate's shape is conjugated */
        double m = mac_with(n, w, S->shape_re + (size_t)k * n, S->shape_im + (size_t)k * n);
        if (m > m1) m2 = m1, b2 = b1, m1 = m, b1 = k;
        else if (m > m2) m2 = m, b2 = k;
    }
    mbl_free(w);
    if (rc) return rc;
    if (b1 < 0 || m1 < PICK_MAC_MIN)
        return mbl_error(st, MBL_EMODEL, "mode shape '%s': no mode has that shape (the best MAC is %.3g, mode %d; at least "
                         "%.2g needed)", spec, m1 > 0 ? m1 : 0.0, b1 + 1, PICK_MAC_MIN);
    if (b2 >= 0 && m1 - m2 <= PICK_MAC_TIE)
        return mbl_error(st, MBL_EMODEL, "mode shape '%s': modes %d and %d match it equally (MAC %.6g): name a shape that "
                         "tells them apart (complex weights for a whirl direction)", spec, b1 + 1, b2 + 1, m1);
    *mode = b1;
    return 0;
}

/* ---- by a sweep's branch ------------------------------------------------------------------- */

static int read_text(const char *path, char **out, size_t *len_out, mbl_status *st)
{
    FILE *f = fopen(path, "rb");
    if (!f) return mbl_error(st, MBL_EIO, "%s: cannot open the sweep (%s)", path, strerror(errno));
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode) || (size_t)sb.st_size > MBL_MAX_FILE_SIZE) {
        fclose(f);
        return mbl_error(st, MBL_EIO, "%s: not a regular file of at most %zu bytes", path, MBL_MAX_FILE_SIZE);
    }
    size_t cap = (size_t)sb.st_size + 1;
    char *buf = mbl_malloc(cap);
    if (!buf) {
        fclose(f);
        return mbl_error(st, MBL_ENOMEM, "out of memory reading %s", path);
    }
    size_t len = fread(buf, 1, cap - 1, f);
    int err = ferror(f);
    fclose(f);
    if (err) {
        mbl_free(buf);
        return mbl_error(st, MBL_EIO, "%s: read error", path);
    }
    buf[len] = 0;
    *out = buf, *len_out = len;
    return 0;
}

static yaml_node_t *map_get(yaml_document_t *doc, yaml_node_t *map, const char *key)
{
    if (!map || map->type != YAML_MAPPING_NODE) return NULL;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(doc, p->key);
        if (k && k->type == YAML_SCALAR_NODE && !strcmp((const char *)k->data.scalar.value, key))
            return yaml_document_get_node(doc, p->value);
    }
    return NULL;
}

static int seq_len(const yaml_node_t *s)
{
    return s && s->type == YAML_SEQUENCE_NODE ? (int)(s->data.sequence.items.top - s->data.sequence.items.start) : -1;
}

static yaml_node_t *seq_at(yaml_document_t *doc, yaml_node_t *s, int i)
{
    return yaml_document_get_node(doc, s->data.sequence.items.start[i]);
}

/* a number of the JSON (null: NaN); -1 for anything else */
static int num_of(const yaml_node_t *v, double *x)
{
    if (!v || v->type != YAML_SCALAR_NODE || v->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) return -1;
    const char *s = (const char *)v->data.scalar.value;
    if (!strcmp(s, "null")) {
        *x = NAN;
        return 0;
    }
    char *end = NULL;
    *x = strtod(s, &end);
    return end != s && *end == 0 ? 0 : -1;
}

/* The sweep's axis values and branch B's eigenvalues (x, re, im: npts each, allocated). */
static int sweep_branch(yaml_document_t *doc, const char *path, const char *param, int branch, int *np_, double **x_,
                        double **re_, double **im_, mbl_status *st)
{
    yaml_node_t *root = yaml_document_get_root_node(doc);
    yaml_node_t *axes = map_get(doc, root, "axes"), *vals = map_get(doc, root, "values");
    yaml_node_t *brs = map_get(doc, root, "branches");
    if (seq_len(axes) < 1 || seq_len(vals) < 0 || seq_len(brs) < 0)
        return mbl_error(st, MBL_EARG, "%s: not the JSON of a sweep (mblin sweep --json: axes, values, branches)", path);
    if (seq_len(axes) != 1)
        return mbl_error(st, MBL_EARG, "%s: a sweep over %d axes: a branch is named on a sweep over one parameter", path,
                         seq_len(axes));
    yaml_node_t *name = map_get(doc, seq_at(doc, axes, 0), "name");
    const char *an = name && name->type == YAML_SCALAR_NODE ? (const char *)name->data.scalar.value : "";
    if (!param || strcmp(an, param))
        return mbl_error(st, MBL_EARG, "%s: the sweep is over '%s', not over %s%s%s", path, an, param ? "'" : "",
                         param ? param : "the parameter asked for", param ? "'" : "");
    if (branch > seq_len(brs))
        return mbl_error(st, MBL_EARG, "%s: no branch %d (the sweep has %d)", path, branch, seq_len(brs));
    yaml_node_t *b = seq_at(doc, brs, branch - 1);
    yaml_node_t *br = map_get(doc, b, "re"), *bi = map_get(doc, b, "im");
    int np = seq_len(vals);
    if (np < 1 || seq_len(br) != np || seq_len(bi) != np)
        return mbl_error(st, MBL_EARG, "%s: branch %d does not have one eigenvalue per point (%d points)", path, branch, np);
    double *x = mbl_alloc_array((size_t)np * 3, sizeof *x);
    if (!x) return mbl_error(st, MBL_ENOMEM, "out of memory");
    double *re = x + np, *im = re + np;
    for (int p = 0; p < np; p++) {
        yaml_node_t *v = seq_at(doc, vals, p);
        if ((seq_len(v) != 1 || num_of(seq_at(doc, v, 0), &x[p]) || !isfinite(x[p])) ||
            num_of(seq_at(doc, br, p), &re[p]) || num_of(seq_at(doc, bi, p), &im[p])) {
            mbl_free(x);
            return mbl_error(st, MBL_EARG, "%s: point %d of branch %d is not a number", path, p + 1, branch);
        }
    }
    *np_ = np, *x_ = x, *re_ = re, *im_ = im;
    return 0;
}

/* Branch B's eigenvalue at x = value, linear between the points around it (failed points, null,
 * skipped); *spread: the branch's change over that interval (how far the line may be off). */
static int interpolate(const char *path, const char *param, int branch, int np, const double *x, const double *re,
                       const double *im, double value, double *lr, double *li, double *spread, mbl_status *st)
{
    double lo = INFINITY, hi = -INFINITY;
    for (int p = 0; p < np; p++)
        if (isfinite(re[p]) && isfinite(im[p])) lo = fmin(lo, x[p]), hi = fmax(hi, x[p]);
    if (!(lo <= hi))
        return mbl_error(st, MBL_EARG, "%s: branch %d has no computed point", path, branch);
    if (!(value >= lo && value <= hi))
        return mbl_error(st, MBL_EARG, "%s: %s = %.12g is outside the sweep's range [%.12g, %.12g] of branch %d", path,
                         param, value, lo, hi, branch);
    int a = -1, b = -1; /* the nearest computed points below (or at) and above value */
    for (int p = 0; p < np; p++) {
        if (!isfinite(re[p]) || !isfinite(im[p])) continue;
        if (x[p] <= value && (a < 0 || x[p] > x[a])) a = p;
        if (x[p] >= value && (b < 0 || x[p] < x[b])) b = p;
    }
    double t = x[b] > x[a] ? (value - x[a]) / (x[b] - x[a]) : 0.0;
    *lr = re[a] + t * (re[b] - re[a]);
    *li = im[a] + t * (im[b] - im[a]);
    *spread = hypot(re[b] - re[a], im[b] - im[a]);
    return 0;
}

static int pick_branch(const mbl_sensitivity *S, const char *path, int branch, const char *param, double value,
                       int *mode, mbl_status *st)
{
    char *text = NULL;
    size_t len = 0;
    int rc = read_text(path, &text, &len, st);
    if (rc) return rc;
    yaml_parser_t parser;
    yaml_document_t doc;
    struct model_text_block *blocks = NULL;
    memset(&doc, 0, sizeof doc);
    if (!yaml_parser_initialize(&parser)) {
        mbl_free(text);
        return mbl_error(st, MBL_ENOMEM, "cannot initialise the YAML parser");
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    int more = 0;
    rc = model_yaml_first_document(&parser, &doc, text, len, 0, path, 8, &more, &blocks, st);
    int np = 0;
    double *x = NULL, *re = NULL, *im = NULL, lr = 0, li = 0, spread = 0;
    if (!rc) rc = sweep_branch(&doc, path, param, branch, &np, &x, &re, &im, st);
    if (!rc) rc = interpolate(path, param, branch, np, x, re, im, value, &lr, &li, &spread, st);
    model_yaml_doc_free(&doc, &blocks);
    yaml_parser_delete(&parser);
    mbl_free(text), mbl_free(x);
    if (rc) return rc;
    int b1 = -1, b2 = -1;
    double d1 = INFINITY, d2 = INFINITY, mag = hypot(lr, li), big = 0;
    for (int k = 0; k < S->nmode; k++) {
        double d = hypot(S->modes[k].re - lr, S->modes[k].im - li);
        big = fmax(big, hypot(S->modes[k].re, S->modes[k].im));
        if (d < d1) d2 = d1, b2 = b1, d1 = d, b1 = k;
        else if (d < d2) d2 = d, b2 = k;
    }
    double tol = spread + 1e-3 * mag + 1e-9 * big;
    if (b1 < 0 || !(d1 <= tol))
        return mbl_error(st, MBL_EMODEL, "%s: branch %d is at %.6g%+.6gi at %s = %.12g; the nearest mode, %d, is %.3g away "
                         "(more than %.3g: a sweep of another model or other settings?)", path, branch, lr, li, param,
                         value, b1 + 1, d1, tol);
    if (b2 >= 0 && d2 - d1 <= 1e-9 * fmax(mag, 1e-300))
        return mbl_error(st, MBL_EMODEL, "%s: branch %d is at %.6g%+.6gi at %s = %.12g, equally near modes %d and %d (a "
                         "repeated eigenvalue)", path, branch, lr, li, param, value, b1 + 1, b2 + 1);
    *mode = b1;
    return 0;
}

/* ---- the entry point ------------------------------------------------------------------------ */

int mbl_mode_pick(const mbl_model *md, const mbl_sensitivity *S, const mbl_mode_spec *spec, const char *param,
                  double value, int *mode, mbl_status *st)
{
    if (!S || !spec || !mode) return mbl_error(st, MBL_EARG, "mbl_mode_pick: NULL sensitivities, spec or result");
    *mode = -1;
    int ways = (spec->index != 0) + (spec->shape != NULL) + (spec->branch != 0 || spec->sweep != NULL);
    if (ways == 0) return mbl_error(st, MBL_EARG, "mbl_mode_pick: no mode named (an index, a shape or a sweep's branch)");
    if (ways > 1)
        return mbl_error(st, MBL_EARG, "a mode is named one way only: by its number, its shape, or a sweep's branch");
    if (spec->index != 0) {
        if (spec->index < 1 || spec->index > S->nmode)
            return mbl_error(st, MBL_EARG, "mode %d asked for: the modes are numbered 1 to %d here", spec->index,
                             S->nmode);
        *mode = spec->index - 1;
        return 0;
    }
    if (spec->shape) return pick_shape(md, S, spec->shape, mode, st);
    if (spec->branch < 1 || !spec->sweep || !spec->sweep[0])
        return mbl_error(st, MBL_EARG, "a sweep's branch is named by its number (1 or more) and the sweep's JSON file");
    return pick_branch(S, spec->sweep, spec->branch, param, value, mode, st);
}
