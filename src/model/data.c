/* The `data:` section of a model file (issue 35, item 1): data sets given inline or in a CSV
 * file, checked, and turned into the piecewise polynomials of the expression engine's functions
 * of data (spline, table, spline2; docs/model-files.md, "Data sets"):
 *   akima   Akima's 1970 method (MSC Adams AKISPL; SciPy Akima1DInterpolator);
 *   cubic   the natural cubic spline (Adams CUBSPL; SciPy CubicSpline(bc_type='natural'));
 *   linear  straight lines between the points;
 *   bicubic on a rectangular grid: the tensor product of natural cubic splines.
 * table(name, x) interpolates any 1-D set's points linearly whatever its method. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "mblin/la.h"
#include "model/data.h"

/* Akima's slope at a point is the mean of its neighbours' slopes where the weights |m_{i+1} -
 * m_i| + |m_{i-1} - m_{i-2}| sum to at most this fraction of their largest sum (SciPy's test). */
#define DATA_AKIMA_EPS 1e-9

/* The largest CSV file read (bytes). */
#define MODEL_DATA_MAX_FILE 64e6

static const char *const method_names[MODEL_DATA_NMETHOD] = {"akima", "cubic", "linear", "bicubic"};

typedef struct drd {
    yaml_document_t *doc;
    const char *file;
    mbl_status *st;
    const char *set; /* the set's name */
    double budget;   /* bytes building the model may use (mbl_src.mem_budget) */
    double bytes;    /* the estimate of the sets so far (budget_check) */
} drd;

#define derr(R, node, ...) model_yaml_error((R)->st, MBL_EMODEL, (R)->file, (node), __VA_ARGS__)

static const char *sc(const yaml_node_t *n) { return (const char *)n->data.scalar.value; }

/* A finite number from a scalar node, else an error at it. */
static int number(drd *R, const yaml_node_t *n, const char *what, double *v)
{
    if (n->type != YAML_SCALAR_NODE) return derr(R, n, "data '%s': %s must be a number", R->set, what);
    const char *t = sc(n) + (sc(n)[0] == '-' || sc(n)[0] == '+');
    if (!strcmp(t, ".nan") || !strcmp(t, ".NaN") || !strcmp(t, ".NAN") || !strcmp(t, ".inf") || !strcmp(t, ".Inf") ||
        !strcmp(t, ".INF")) /* YAML's spellings of NaN and infinity */
        return derr(R, n, "data '%s': %s is not a finite number (%.40s)", R->set, what, sc(n));
    char *end;
    errno = 0;
    *v = strtod(sc(n), &end);
    while (*end && isspace((unsigned char)*end)) end++;
    if (end == sc(n) || *end) return derr(R, n, "data '%s': %s '%.40s' is not a number", R->set, what, sc(n));
    if (!isfinite(*v)) return derr(R, n, "data '%s': %s is not a finite number (%.40s)", R->set, what, sc(n));
    return 0;
}

/* A flow or block list of numbers into a new array. */
static int numbers(drd *R, const yaml_node_t *n, const char *what, double **out, int *cnt)
{
    if (n->type != YAML_SEQUENCE_NODE) return derr(R, n, "data '%s': %s must be a list of numbers", R->set, what);
    int k = (int)(n->data.sequence.items.top - n->data.sequence.items.start);
    double *a = mbl_alloc_array((size_t)(k ? k : 1), sizeof *a);
    if (!a) return mbl_error(R->st, MBL_ENOMEM, "out of memory");
    for (int i = 0; i < k; i++) {
        char w[64];
        snprintf(w, sizeof w, "%s[%d]", what, i);
        int rc = number(R, yaml_document_get_node(R->doc, n->data.sequence.items.start[i]), w, &a[i]);
        if (rc) {
            mbl_free(a);
            return rc;
        }
    }
    *out = a;
    *cnt = k;
    return 0;
}

/* ---- CSV files: numbers separated by commas, one row a line ---------------------------------- */

/* The file named relative to the model file's folder. */
static char *csv_path(const char *model, const char *name)
{
    const char *slash = strrchr(model, '/');
    size_t dl = (name[0] != '/' && slash) ? (size_t)(slash - model + 1) : 0;
    char *p = mbl_malloc(dl + strlen(name) + 1);
    if (!p) return NULL;
    memcpy(p, model, dl);
    strcpy(p + dl, name);
    return p;
}

/* The bytes a data set takes to build, per point of a 1-D set and per value of a 2-D grid: its
 * points, pieces and the copies the graph and its tapes keep (peak RSS of `mblin linearize` on a
 * `model: dae` with one set, less that of a set of 10^4 points: 381 B per point at 10^6 points
 * (linear, cubic and akima alike), 654 B per value on a 1000 x 1000 grid; rounded up). The sets'
 * sum counts against the memory budget (mbl_load_options.mem_budget, --mem-budget). */
#define MODEL_DATA_BYTES_1D 400.0
#define MODEL_DATA_BYTES_2D 680.0

/* The sets' estimated bytes so far plus `add` against the budget: over it, the error (naming the
 * set at node) with the estimate. */
static int budget_check(drd *R, const yaml_node_t *node, double npts, int two)
{
    double add = npts * (two ? MODEL_DATA_BYTES_2D : MODEL_DATA_BYTES_1D), gib = 1073741824.0;
    R->bytes += add;
    if (!(R->budget > 0) || R->bytes <= R->budget) return 0;
    return model_yaml_error(R->st, MBL_ENOMEM, R->file, node,
                            "data '%s': %.0f %s need about %.3g GiB to build (the data sets so far %.3g GiB), over the "
                            "memory budget of %.3g GiB (--mem-budget): use fewer points or raise the budget",
                            R->set, npts, two ? "grid values" : "points", add / gib, R->bytes / gib, R->budget / gib);
}

/* Before the rows are read: the file's lines and commas counted (an estimate of its points for
 * the memory budget; 1-D: a point a line; 2-D: a value a cell), and a NUL byte refused where it
 * is (fgets would end the line there and drop the rest unseen). */
static int csv_prescan(drd *R, FILE *f, const char *path, int two, const yaml_node_t *fnode)
{
    char buf[65536];
    size_t n;
    double lines = 0, commas = 0, field = 1;
    int last = '\n';
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
        for (size_t i = 0; i < n; i++) {
            char c = buf[i];
            if (c == '\n') lines++, field = 1;
            else if (c == ',') commas++, field++;
            else if (c == '\0')
                return mbl_error(R->st, MBL_EMODEL, "%s:%.0f:%.0f: data '%s': a NUL byte (the file is not text)", path,
                                 lines + 1, field, R->set);
        }
        last = buf[n - 1];
    }
    if (ferror(f)) return mbl_error(R->st, MBL_EIO, "%s: data '%s': read error", path, R->set);
    rewind(f);
    if (last != '\n') lines++;
    return budget_check(R, fnode, two ? lines + commas : lines, two);
}

/* Rows of numbers from CSV text: rows[r] has ncol numbers (every row the same count); empty lines
 * and lines starting '#' are skipped. A cell is a number, a label (text that does not start like
 * a number: `x`, `speed (m/s)`) or neither (`2000 N`, `4O00`, `1e`: an error at its row and
 * field). The first row that is wholly labels, before any row of numbers, is a header and
 * skipped; a row with a label among numbers is an error. With corner (a 2-D set), the first row
 * of numbers may start with a label (such as "slip\load": the corner, stored as 0). */
typedef struct csv {
    double *v;
    int nrow, ncol, *line; /* line[r]: the row's line in the file */
} csv;

enum { CELL_NUMBER, CELL_LABEL, CELL_BAD, CELL_NONFINITE };

/* The cell at *s up to the next ',' or the line's end: its kind and value; *s moves past it (to
 * the ',' or the end). */
static int csv_cell(char **s, double *v, char **start)
{
    char *p = *s;
    while (*p == ' ' || *p == '\t') p++;
    *start = p;
    char *end, *stop = p + strcspn(p, ",\r\n");
    *s = stop;
    *v = strtod(p, &end);
    char *e = end;
    while (e < stop && (*e == ' ' || *e == '\t')) e++;
    if (end != p && e == stop) return isfinite(*v) ? CELL_NUMBER : CELL_NONFINITE;
    /* like a number: a sign or point before a digit (not `nan`, `inf`, `name`) */
    const char *q = p + (*p == '+' || *p == '-');
    q += *q == '.';
    return isdigit((unsigned char)*q) ? CELL_BAD : CELL_LABEL;
}

static int csv_read(drd *R, const char *path, int corner, const yaml_node_t *fnode, csv *C)
{
    memset(C, 0, sizeof *C);
    struct stat sb; /* a device, pipe or directory is refused before it is opened (it could block) */
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
        return model_yaml_error(R->st, MBL_EIO, R->file, fnode, "data '%s': %s is not a regular file", R->set, path);
    if (stat(path, &sb) == 0 && (double)sb.st_size > MODEL_DATA_MAX_FILE)
        return model_yaml_error(R->st, MBL_EIO, R->file, fnode, "data '%s': %s is larger than %.0f bytes", R->set, path,
                                (double)MODEL_DATA_MAX_FILE);
    FILE *f = fopen(path, "rb");
    if (!f)
        return model_yaml_error(R->st, MBL_EIO, R->file, fnode, "data '%s': cannot open %s (%s)", R->set, path,
                                strerror(errno));
    char buf[65536];
    int lineno = 0, cap = 0, rc = csv_prescan(R, f, path, corner, fnode), had_header = 0;
    while (!rc && fgets(buf, sizeof buf, f)) {
        lineno++;
        size_t L = strlen(buf);
        if (L == sizeof buf - 1 && buf[L - 1] != '\n') {
            rc = mbl_error(R->st, MBL_EMODEL, "%s:%d: data '%s': line longer than %zu bytes", path, lineno, R->set,
                           sizeof buf - 2);
            break;
        }
        char *s = buf;
        if (lineno == 1 && !memcmp(s, "\xef\xbb\xbf", 3)) s += 3; /* a UTF-8 byte order mark */
        while (*s == ' ' || *s == '\t') s++;
        if (*s == '\n' || *s == '\r' || *s == '\0' || *s == '#') continue;
        double row[4096];
        int nc = 0, nlabel = 0, first_label = 0, bad = 0;
        char cell[48] = "";
        for (;;) {
            if (nc == 4096) {
                rc = mbl_error(R->st, MBL_EMODEL, "%s:%d: data '%s': more than 4096 columns", path, lineno, R->set);
                break;
            }
            char *c0;
            int kind = csv_cell(&s, &row[nc], &c0);
            nc++;
            if (kind == CELL_LABEL && !nlabel++) first_label = nc;
            if (kind == CELL_LABEL) row[nc - 1] = 0; /* a 2-D set's corner */
            if (kind == CELL_LABEL && !cell[0]) snprintf(cell, sizeof cell, "%.*s", (int)(s - c0 < 40 ? s - c0 : 40), c0);
            if (kind == CELL_BAD || kind == CELL_NONFINITE) {
                rc = mbl_error(R->st, MBL_EMODEL, "%s:%d:%d: data '%s': %s '%.*s'", path, lineno, nc, R->set,
                               kind == CELL_BAD ? "not a number:" : "not a finite number:", (int)(s - c0 < 40 ? s - c0 : 40),
                               c0);
                bad = 1;
                break;
            }
            if (*s != ',') break;
            s++;
        }
        if (rc || bad) break;
        if (nlabel == nc) { /* wholly labels: the header, once, before the numbers */
            if (C->nrow == 0 && !had_header) {
                had_header = 1;
                continue;
            }
            rc = mbl_error(R->st, MBL_EMODEL, "%s:%d:%d: data '%s': not a number: '%s' (%s)", path, lineno, 1, R->set,
                           cell, C->nrow ? "a row of labels among the rows of numbers" : "a second header row");
            break;
        }
        if (nlabel && !(corner && C->nrow == 0 && nlabel == 1 && first_label == 1)) {
            /* a 2-D map's y row ("corner, y_1, ...") read as a 1-D set: say what makes it 2-D */
            int map_row = !corner && C->nrow == 0 && nlabel == 1 && first_label == 1 && nc > 2;
            rc = mbl_error(R->st, MBL_EMODEL, "%s:%d:%d: data '%s': not a number: '%s' (a header row is labels only%s)",
                           path, lineno, first_label, R->set, cell,
                           map_row ? "; a 2-D map's first row 'corner, y_1, ...' needs method: bicubic" : "");
            break;
        }
        if (C->nrow && nc != C->ncol) {
            rc = mbl_error(R->st, MBL_EMODEL, "%s:%d:%d: data '%s': row has %d columns, the rows before have %d", path,
                           lineno, (nc < C->ncol ? nc : C->ncol) + 1, R->set, nc, C->ncol);
            break;
        }
        if (C->nrow == cap) {
            cap = cap ? 2 * cap : 64;
            double *nv = mbl_realloc_array(C->v, (size_t)cap * (size_t)nc, sizeof *nv);
            int *nl = mbl_realloc_array(C->line, (size_t)cap, sizeof *nl);
            if (nv) C->v = nv;
            if (nl) C->line = nl;
            if (!nv || !nl) {
                rc = mbl_error(R->st, MBL_ENOMEM, "out of memory");
                break;
            }
        }
        C->ncol = nc;
        memcpy(C->v + (size_t)C->nrow * (size_t)nc, row, (size_t)nc * sizeof *row);
        C->line[C->nrow++] = lineno;
    }
    if (!rc && ferror(f)) rc = mbl_error(R->st, MBL_EIO, "%s: data '%s': read error", path, R->set);
    fclose(f);
    if (!rc && C->nrow == 0) rc = mbl_error(R->st, MBL_EMODEL, "%s: data '%s': no rows of numbers", path, R->set);
    if (rc) {
        mbl_free(C->v);
        mbl_free(C->line);
        memset(C, 0, sizeof *C);
    }
    return rc;
}

/* ---- one set ---------------------------------------------------------------------------------- */

/* x strictly increasing: else "where: data 'name': x must increase (...)". */
static int check_increasing(drd *R, const double *x, int n, const char *axis, const char *path, const int *line,
                            int col, const yaml_node_t *node)
{
    for (int i = 1; i < n; i++)
        if (!(x[i] > x[i - 1])) {
            if (path)
                return mbl_error(R->st, MBL_EMODEL, "%s:%d:%d: data '%s': %s must increase strictly (%.15g after %.15g)",
                                 path, line[i], col, R->set, axis, x[i], x[i - 1]);
            return derr(R, node, "data '%s': %s must increase strictly (%s[%d] = %.15g after %.15g)", R->set, axis, axis, i,
                        x[i], x[i - 1]);
        }
    return 0;
}

static int set_from_csv(drd *R, model_dataset *d, const char *name, const yaml_node_t *fnode)
{
    char *path = csv_path(R->file, name);
    if (!path) return mbl_error(R->st, MBL_ENOMEM, "out of memory");
    csv C;
    int rc = csv_read(R, path, d->method == MODEL_DATA_BICUBIC, fnode, &C);
    if (!rc && d->method != MODEL_DATA_BICUBIC) {
        if (C.ncol != 2)
            rc = mbl_error(R->st, MBL_EMODEL, "%s:%d: data '%s': a 1-D set needs 2 columns (x, value), found %d%s", path,
                           C.line[0], R->set, C.ncol, C.ncol > 2 ? " (a 2-D map needs method: bicubic)" : "");
        else if (!(d->x = mbl_alloc_array((size_t)C.nrow, sizeof *d->x)) ||
                 !(d->z = mbl_alloc_array((size_t)C.nrow, sizeof *d->z)))
            rc = mbl_error(R->st, MBL_ENOMEM, "out of memory");
        for (int i = 0; !rc && i < C.nrow; i++) {
            d->x[i] = C.v[2 * i];
            d->z[i] = C.v[2 * i + 1];
        }
        d->nx = C.nrow;
        if (!rc) rc = check_increasing(R, d->x, d->nx, "x", path, C.line, 1, NULL);
    } else if (!rc) {
        /* a grid: the first row "corner, y_1 .. y_ny", then rows "x_i, z_i1 .. z_iny" */
        int nx = C.nrow - 1, ny = C.ncol - 1;
        if (nx < 1 || ny < 1)
            rc = mbl_error(R->st, MBL_EMODEL, "%s:%d: data '%s': a 2-D set needs a first row of y values and rows "
                           "'x, z...' below it", path, C.line[0], R->set);
        else if (!(d->x = mbl_alloc_array((size_t)nx, sizeof *d->x)) || !(d->y = mbl_alloc_array((size_t)ny, sizeof *d->y)) ||
                 !(d->z = mbl_alloc_array((size_t)nx * (size_t)ny, sizeof *d->z)))
            rc = mbl_error(R->st, MBL_ENOMEM, "out of memory");
        if (!rc) {
            d->nx = nx;
            d->ny = ny;
            for (int j = 0; j < ny; j++) d->y[j] = C.v[1 + j];
            for (int i = 0; i < nx; i++) {
                d->x[i] = C.v[(size_t)(i + 1) * (size_t)C.ncol];
                for (int j = 0; j < ny; j++) d->z[(size_t)i * ny + j] = C.v[(size_t)(i + 1) * (size_t)C.ncol + 1 + j];
            }
            rc = check_increasing(R, d->x, nx, "x (the first column)", path, C.line + 1, 1, NULL);
            for (int j = 1; !rc && j < ny; j++)
                if (!(d->y[j] > d->y[j - 1]))
                    rc = mbl_error(R->st, MBL_EMODEL, "%s:%d:%d: data '%s': y (the first row) must increase strictly "
                                   "(%.15g after %.15g)", path, C.line[0], j + 2, R->set, d->y[j], d->y[j - 1]);
        }
    }
    mbl_free(C.v);
    mbl_free(C.line);
    mbl_free(path);
    return rc;
}

/* The items of a YAML list (0 when n is not one). */
static double seq_len(const yaml_node_t *n)
{
    return n && n->type == YAML_SEQUENCE_NODE ? (double)(n->data.sequence.items.top - n->data.sequence.items.start) : 0;
}

static int read_set(drd *R, model_dataset *d, const yaml_node_t *key, const yaml_node_t *v)
{
    if (v->type != YAML_MAPPING_NODE)
        return derr(R, v, "data '%s': expected a mapping (method, x, y, or file)", R->set);
    const yaml_node_t *nx = NULL, *ny = NULL, *nz = NULL, *nf = NULL;
    d->method = -1;
    for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(R->doc, p->key), *val = yaml_document_get_node(R->doc, p->value);
        if (k->type != YAML_SCALAR_NODE) return derr(R, k, "data '%s': keys must be plain words", R->set);
        const char *ks = sc(k);
        if (!strcmp(ks, "method") || !strcmp(ks, "extrapolate")) {
            if (val->type != YAML_SCALAR_NODE) return derr(R, val, "data '%s': %s must be a word", R->set, ks);
            if (ks[0] == 'm') {
                for (int m = 0; m < MODEL_DATA_NMETHOD; m++)
                    if (!strcmp(sc(val), method_names[m])) d->method = m;
                if (d->method < 0)
                    return derr(R, val, "data '%s': unknown method '%.40s' (akima, cubic, linear or bicubic)", R->set, sc(val));
            } else if (!strcmp(sc(val), "no") || !strcmp(sc(val), "false")) {
                d->extrap = MBLX_EXTRAP_NONE;
            } else if (!strcmp(sc(val), "linear")) {
                d->extrap = MBLX_EXTRAP_LINEAR;
            } else {
                return derr(R, val, "data '%s': extrapolate must be 'no' or 'linear', not '%.40s'", R->set, sc(val));
            }
        } else if (!strcmp(ks, "x")) nx = val;
        else if (!strcmp(ks, "y")) ny = val;
        else if (!strcmp(ks, "z")) nz = val;
        else if (!strcmp(ks, "file")) nf = val;
        else return derr(R, k, "data '%s': unknown key '%.40s' (method, extrapolate, x, y, z, file)", R->set, ks);
    }
    if (d->method < 0) d->method = nz ? MODEL_DATA_BICUBIC : MODEL_DATA_AKIMA;
    int two = d->method == MODEL_DATA_BICUBIC;
    int rc;
    if (nf) {
        if (nx || ny || nz) return derr(R, nf, "data '%s': give either 'file' or the values (x, y%s), not both", R->set, two ? ", z" : "");
        if (nf->type != YAML_SCALAR_NODE || !nf->data.scalar.length) return derr(R, nf, "data '%s': file must be a file name", R->set);
        rc = set_from_csv(R, d, sc(nf), nf);
        if (rc) return rc;
    } else if ((rc = budget_check(R, key, seq_len(nx) * (two ? seq_len(ny) : 1), two))) {
        return rc;
    } else if (!two) {
        if (!nx || !ny) return derr(R, key, "data '%s': missing %s (a 1-D set needs x and y, or file)", R->set, nx ? "y" : "x");
        if (nz) return derr(R, nz, "data '%s': z is for 2-D sets (method: bicubic)", R->set);
        int cy;
        if ((rc = numbers(R, nx, "x", &d->x, &d->nx)) || (rc = numbers(R, ny, "y", &d->z, &cy))) return rc;
        if (cy != d->nx) return derr(R, ny, "data '%s': y has %d values, x has %d", R->set, cy, d->nx);
        if ((rc = check_increasing(R, d->x, d->nx, "x", NULL, NULL, 0, nx))) return rc;
    } else {
        if (!nx || !ny || !nz) return derr(R, key, "data '%s': a 2-D set needs x, y and z (rows of z over y), or file", R->set);
        if ((rc = numbers(R, nx, "x", &d->x, &d->nx)) || (rc = numbers(R, ny, "y", &d->y, &d->ny))) return rc;
        if ((rc = check_increasing(R, d->x, d->nx, "x", NULL, NULL, 0, nx)) ||
            (rc = check_increasing(R, d->y, d->ny, "y", NULL, NULL, 0, ny)))
            return rc;
        if (nz->type != YAML_SEQUENCE_NODE || nz->data.sequence.items.top - nz->data.sequence.items.start != d->nx)
            return derr(R, nz, "data '%s': z must be a list of %d rows (one per x), each of %d values (one per y)", R->set,
                        d->nx, d->ny);
        if (!(d->z = mbl_alloc_array((size_t)d->nx * (size_t)(d->ny ? d->ny : 1), sizeof *d->z)))
            return mbl_error(R->st, MBL_ENOMEM, "out of memory");
        for (int i = 0; i < d->nx; i++) {
            yaml_node_t *row = yaml_document_get_node(R->doc, nz->data.sequence.items.start[i]);
            double *r = NULL;
            int c = 0;
            char w[32];
            snprintf(w, sizeof w, "z[%d]", i);
            if ((rc = numbers(R, row, w, &r, &c))) return rc;
            if (c != d->ny) {
                mbl_free(r);
                return derr(R, row, "data '%s': row z[%d] has %d values, y has %d", R->set, i, c, d->ny);
            }
            memcpy(d->z + (size_t)i * d->ny, r, (size_t)c * sizeof *r);
            mbl_free(r);
        }
    }
    int need = d->method == MODEL_DATA_AKIMA ? MODEL_DATA_MIN_AKIMA : 2;
    if (d->nx < need || (two && d->ny < 2))
        return derr(R, key, "data '%s': too few points (%d%s; %s needs at least %d%s)", R->set, d->nx, two ? " x values" : "",
                    method_names[d->method], need, two ? " per axis" : "");
    return 0;
}

int model_data_read(yaml_document_t *doc, const yaml_node_t *val, const char *file, double mem_budget,
                    model_dataset **out, int *nout, mbl_status *st)
{
    drd R = {doc, file, st, "", mem_budget, 0};
    if (val->type != YAML_MAPPING_NODE) return derr(&R, val, "'data' must be a mapping of data sets {name: {...}}");
    int n = (int)(val->data.mapping.pairs.top - val->data.mapping.pairs.start);
    model_dataset *d = mbl_calloc((size_t)(n ? n : 1), sizeof *d);
    if (!d) return mbl_error(st, MBL_ENOMEM, "out of memory");
    int rc = 0, k = 0;
    for (yaml_node_pair_t *p = val->data.mapping.pairs.start; !rc && p < val->data.mapping.pairs.top; p++, k++) {
        yaml_node_t *key = yaml_document_get_node(doc, p->key), *v = yaml_document_get_node(doc, p->value);
        if (key->type != YAML_SCALAR_NODE) {
            rc = derr(&R, key, "data: names must be plain words");
            break;
        }
        R.set = sc(key);
        const char *s = R.set;
        int ident = isalpha((unsigned char)s[0]) || s[0] == '_';
        for (const char *c = s; *c; c++) ident &= isalnum((unsigned char)*c) || *c == '_';
        if (!ident) {
            rc = derr(&R, key, "data: '%.40s' is not a name (letters, digits and '_', not starting with a digit)", s);
            break;
        }
        for (int j = 0; j < k; j++)
            if (!strcmp(d[j].name, s)) rc = derr(&R, key, "data: '%.40s' given twice", s);
        if (rc) break;
        if (!(d[k].name = mbl_malloc(strlen(s) + 1))) {
            rc = mbl_error(st, MBL_ENOMEM, "out of memory");
            break;
        }
        strcpy(d[k].name, s);
        d[k].line = (int)key->start_mark.line + 1;
        d[k].col = (int)key->start_mark.column + 1;
        rc = read_set(&R, &d[k], key, v);
    }
    if (rc) {
        model_data_free(d, k + 1 <= n ? k + 1 : n);
        return rc;
    }
    *out = d;
    *nout = n;
    return 0;
}

void model_data_free(model_dataset *d, int n)
{
    for (int i = 0; d && i < n; i++) {
        mbl_free(d[i].name);
        mbl_free(d[i].x);
        mbl_free(d[i].y);
        mbl_free(d[i].z);
    }
    mbl_free(d);
}

/* ---- the pieces ------------------------------------------------------------------------------- */

/* Akima (1970): the slope t_i at each point, then the cubic Hermite piece of each interval. */
static void akima(const double *x, const double *y, int n, double *coef, double *m, double *t)
{
    /* m[k + 2] = the slope of interval k (k = 0 .. n-2), two extrapolated slopes at each end */
    for (int k = 0; k + 1 < n; k++) m[k + 2] = (y[k + 1] - y[k]) / (x[k + 1] - x[k]);
    m[1] = 2 * m[2] - m[3];
    m[0] = 2 * m[1] - m[2];
    m[n + 1] = 2 * m[n] - m[n - 1];
    m[n + 2] = 2 * m[n + 1] - m[n];
    double fmax = 0;
    for (int i = 0; i < n; i++) {
        double f12 = fabs(m[i + 3] - m[i + 2]) + fabs(m[i + 1] - m[i]);
        if (f12 > fmax) fmax = f12;
    }
    for (int i = 0; i < n; i++) {
        double f1 = fabs(m[i + 3] - m[i + 2]), f2 = fabs(m[i + 1] - m[i]);
        t[i] = f1 + f2 > DATA_AKIMA_EPS * fmax ? (f1 * m[i + 1] + f2 * m[i + 2]) / (f1 + f2) : 0.5 * (m[i + 1] + m[i + 2]);
    }
    for (int k = 0; k + 1 < n; k++) {
        double h = x[k + 1] - x[k], s = m[k + 2];
        double *c = coef + 4 * k;
        c[0] = y[k];
        c[1] = t[k];
        c[2] = (3 * s - 2 * t[k] - t[k + 1]) / h;
        c[3] = (t[k] + t[k + 1] - 2 * s) / (h * h);
    }
}

/* Natural cubic splines through nrhs columns of values at n points (column r: y[r*ldy + i*inc]),
 * their pieces into coef (column r, interval k: coef[(r * (n-1) + k) * 4 + a] when cstride is 0). */
static int natural(const double *x, int n, int nrhs, const double *y, size_t ldy, size_t inc, double *coef,
                   mbl_status *st)
{
    int m = n - 2;
    double *M = mbl_calloc((size_t)n * (size_t)nrhs, sizeof *M); /* second derivatives, column r at M + r n */
    double *A = m > 0 ? mbl_calloc((size_t)3 * m, sizeof *A) : NULL; /* sub-, main and superdiagonal */
    double *B = m > 0 ? mbl_alloc_array((size_t)m * (size_t)nrhs, sizeof *B) : NULL;
    int rc = 0;
    if (!M || (m > 0 && (!A || !B))) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    if (!rc && m > 0) {
        for (int i = 1; i <= m; i++) {
            double h0 = x[i] - x[i - 1], h1 = x[i + 1] - x[i];
            int r = i - 1;
            A[m + r] = 2 * (h0 + h1);
            if (r > 0) A[r - 1] = h0;              /* row r, column r-1 */
            if (r < m - 1) A[2 * m + r] = h1;      /* row r, column r+1 */
            for (int c = 0; c < nrhs; c++) {
                const double *yc = y + (size_t)c * ldy;
                B[(size_t)c * m + r] = 6 * ((yc[(i + 1) * inc] - yc[i * inc]) / h1 - (yc[i * inc] - yc[(i - 1) * inc]) / h0);
            }
        }
        rc = mbla_tridiag_solve(m, nrhs, A, A + m, A + 2 * m, B, m, st);
        for (int c = 0; !rc && c < nrhs; c++)
            for (int r = 0; r < m; r++) M[(size_t)c * n + r + 1] = B[(size_t)c * m + r];
    }
    for (int c = 0; !rc && c < nrhs; c++) {
        const double *yc = y + (size_t)c * ldy, *Mc = M + (size_t)c * n;
        for (int k = 0; k + 1 < n; k++) {
            double h = x[k + 1] - x[k];
            double *cf = coef + ((size_t)c * (n - 1) + k) * 4;
            cf[0] = yc[k * inc];
            cf[1] = (yc[(k + 1) * inc] - yc[k * inc]) / h - h * (2 * Mc[k] + Mc[k + 1]) / 6;
            cf[2] = Mc[k] / 2;
            cf[3] = (Mc[k + 1] - Mc[k]) / (6 * h);
        }
    }
    mbl_free(M);
    mbl_free(A);
    mbl_free(B);
    return rc;
}

/* The tensor product of natural splines: along x for each y_j, then along y for each piece's
 * coefficients (the interpolation is linear in the values, so this is the product). */
static int bicubic(const model_dataset *d, double *coef, mbl_status *st)
{
    int nx = d->nx, ny = d->ny;
    size_t nA = (size_t)ny * (nx - 1) * 4, nB = (size_t)(nx - 1) * 4 * (ny - 1) * 4;
    double *A = mbl_alloc_array(nA, sizeof *A), *Bc = mbl_alloc_array(nB, sizeof *Bc);
    int rc = (!A || !Bc) ? mbl_error(st, MBL_ENOMEM, "out of memory") : 0;
    /* A[(j (nx-1) + i) 4 + a]: row j's piece i, power a; z[i ny + j] */
    if (!rc) rc = natural(d->x, nx, ny, d->z, 1, (size_t)ny, A, st);
    /* for each (i, a): the values A[.. j ..] over j, column c = i 4 + a: stride (nx-1) 4 */
    if (!rc) rc = natural(d->y, ny, (nx - 1) * 4, A, 1, (size_t)(nx - 1) * 4, Bc, st);
    if (!rc)
        for (int i = 0; i + 1 < nx; i++)
            for (int j = 0; j + 1 < ny; j++)
                for (int a = 0; a < 4; a++)
                    for (int b = 0; b < 4; b++)
                        coef[((size_t)i * (ny - 1) + j) * 16 + 4 * a + b] = Bc[(((size_t)i * 4 + a) * (ny - 1) + j) * 4 + b];
    mbl_free(A);
    mbl_free(Bc);
    return rc;
}

int model_data_register(mblx_graph *g, const char *file, const model_dataset *sets, int n, mbl_status *st)
{
    for (int s = 0; s < n; s++) {
        const model_dataset *d = &sets[s];
        int two = d->method == MODEL_DATA_BICUBIC;
        size_t nc = two ? (size_t)(d->nx - 1) * (d->ny - 1) * 16 : (size_t)(d->nx - 1) * 4;
        double *coef = mbl_alloc_array(nc, sizeof *coef);
        double *w = mbl_alloc_array((size_t)2 * d->nx + 4, sizeof *w);
        int rc = (!coef || !w) ? mbl_error(st, MBL_ENOMEM, "out of memory") : 0;
        if (!rc) {
            if (d->method == MODEL_DATA_AKIMA) akima(d->x, d->z, d->nx, coef, w, w + d->nx + 3);
            else if (d->method == MODEL_DATA_CUBIC) rc = natural(d->x, d->nx, 1, d->z, 0, 1, coef, st);
            else if (two) rc = bicubic(d, coef, st);
        }
        size_t bad = nc;
        for (size_t i = 0; !rc && d->method != MODEL_DATA_LINEAR && i < nc && bad == nc; i++)
            if (!isfinite(coef[i])) bad = i;
        if (bad < nc) { /* slopes of 1e300 (points 1e-300 apart) or values near DBL_MAX */
            int i = (int)(two ? bad / 16 / (size_t)(d->ny - 1) : bad / 4);
            rc = mbl_error(st, MBL_EMODEL, "%s:%d:%d: data '%s': the curve overflows between x = %.15g and %.15g (the "
                           "points are too close or the values too large for its coefficients): rescale the data",
                           file, d->line, d->col, d->name, d->x[i], d->x[i + 1]);
        }
        if (!rc) {
            mblx_data_def def = {d->name, (size_t)d->nx, two ? (size_t)d->ny : 0, d->x, d->y, d->z,
                                 d->method == MODEL_DATA_LINEAR ? NULL : coef, d->extrap};
            if (mblx_data_add(g, &def) < 0) {
                mbl_status gs;
                mblx_graph_status(g, &gs);
                rc = mbl_error(st, MBL_EMODEL, "%s:%d:%d: data '%s': %s", file, d->line, d->col, d->name, gs.msg);
            }
        }
        mbl_free(coef);
        mbl_free(w);
        if (rc) return rc;
    }
    return 0;
}
