/* Nastran DMIG matrices of a punch file and the GRID entries (fe.h). The entries in the three
 * field formats: small (8-character fields, ten a line: the name, eight data fields, a
 * continuation field), large (`DMIG*`: 16-character data fields, four a line, continued by a line
 * starting with `*`) and free (commas). A line starting with `+` or `*`, a comma, or eight blanks
 * continues the entry before; `$` starts a comment; tabs stop every 8 columns. The entries are read
 * field by field (nas_entry, nas_field): a DMIG column of any length in bounded memory. */
#include "fe/fe_read.h"

#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ---- entries and fields ---- */

/* a field's characters at most: 16 in the fixed formats (large field), 24 in free field (a double's
 * 17 significant digits with sign and exponent) */
#define NAS_FIELD 24

typedef struct nas_in {
    fe_lines L;
    mbl_status *st;
    int pending;               /* L.buf is the first line of the next entry, not yet taken */
    char name[NAS_FIELD + 1];  /* the entry's name, its '*' taken off */
    char who[2 * NAS_FIELD + 2];/* the entry in messages: its name, and the matrix's of a DMIG */
    long line;                 /* the line of the entry's first */
    char fld[8][NAS_FIELD + 1];/* the data fields of the line read last */
    int nf, at;
    int bad;                   /* the line read last: 1 a field too long, 2 too many fields */
} nas_in;

/* the line without its comment, tabs expanded to 8-column stops, in out (at most FE_LINE_MAX) */
static void nas_clean(const char *s, char *out)
{
    size_t o = 0;
    for (; *s && *s != '$' && o < FE_LINE_MAX; s++)
        if (*s == '\t') do out[o++] = ' '; while (o % 8 && o < FE_LINE_MAX);
        else out[o++] = *s;
    out[o] = 0;
}

static int blank(const char *s)
{
    return !s[strspn(s, " \r")];
}

/* a line that continues the entry before */
static int nas_continues(const char *s)
{
    return s[0] == '+' || s[0] == '*' || s[0] == ',' || (strlen(s) > 8 && !strncmp(s, "        ", 8));
}

/* one field into out, trimmed (past NAS_FIELD characters: "", and the line marked bad) */
static void nas_put(nas_in *in, const char *s, size_t n, char *out)
{
    while (n && isspace((unsigned char)*s)) s++, n--;
    while (n && isspace((unsigned char)s[n - 1])) n--;
    if (n > NAS_FIELD) in->bad = 1, n = 0;
    memcpy(out, s, n), out[n] = 0;
}

/* The fields of line s: the first into in->name (when first), the data fields into in->fld. A line
 * of a field too long or of too many fields is marked bad, an error only if an entry read needs it
 * (lines of the case control or of entries not read may be anything). */
static void nas_split(nas_in *in, const char *s, int first)
{
    char f1[NAS_FIELD + 1];
    memset(in->fld, 0, sizeof in->fld);
    in->at = 0, in->bad = 0;
    const char *c = strchr(s, ',');
    size_t l = strlen(s);
    nas_put(in, s, c ? (size_t)(c - s) : l < 8 ? l : 8, f1);
    in->nf = f1[0] == '*' || (f1[0] && f1[strlen(f1) - 1] == '*') ? 4 : 8;
    for (int k = 0; c; k++) { /* free field; k == nf: the continuation field */
        const char *e = strchr(c + 1, ',');
        if (k < in->nf) nas_put(in, c + 1, e ? (size_t)(e - c - 1) : strlen(c + 1), in->fld[k]);
        else if (k > in->nf) in->bad = 2;
        c = e;
    }
    int w = in->nf == 4 ? 16 : 8;
    for (int k = 0; !strchr(s, ',') && k < in->nf; k++) { /* fixed fields */
        size_t a = 8 + (size_t)(k * w);
        if (a < l) nas_put(in, s + a, l - a < (size_t)w ? l - a : (size_t)w, in->fld[k]);
    }
    if (first) {
        size_t n = strlen(f1);
        if (n && f1[n - 1] == '*') f1[n - 1] = 0;
        strcpy(in->name, f1);
        strcpy(in->who, f1);
        in->line = in->L.line;
    }
}

/* the next line that is not blank (1, cleaned into buf), the end (0) or an error */
static int nas_line(nas_in *in, char *buf)
{
    int got;
    while ((got = fe_lines_next(&in->L, in->st)) > 0) {
        nas_clean(in->L.buf, buf);
        if (!blank(buf)) return 1;
    }
    return got;
}

/* the start of the next entry (1: its name and first line's fields), the end (0) or an error */
static int nas_entry(nas_in *in)
{
    char buf[FE_LINE_MAX + 1];
    for (;;) {
        int got = 1;
        if (in->pending) nas_clean(in->L.buf, buf), in->pending = 0;
        else if ((got = nas_line(in, buf)) <= 0) return got;
        if (nas_continues(buf)) continue; /* the rest of an entry not read */
        nas_split(in, buf, 1);
        return 1;
    }
}

/* the next data field of the entry (1: *f, and its line), the entry's end (0) or an error */
static int nas_field(nas_in *in, const char **f, long *line)
{
    char buf[FE_LINE_MAX + 1];
    while (in->at == in->nf) {
        int got = in->pending ? 0 : nas_line(in, buf);
        if (got <= 0) return got;
        if (!nas_continues(buf)) {
            in->pending = 1;
            return 0;
        }
        nas_split(in, buf, 0);
    }
    if (in->bad)
        return in->bad == 1 ? mbl_error(in->st, MBL_EPARSE, "%s:%ld: %s: a field longer than %d characters",
                                        in->L.path, in->L.line, in->who, NAS_FIELD)
                            : mbl_error(in->st, MBL_EPARSE, "%s:%ld: %s: more than %d fields on a line", in->L.path,
                                        in->L.line, in->who, in->nf + 2);
    *line = in->L.line;
    *f = in->fld[in->at++];
    return 1;
}

/* ---- numbers of fields ---- */

/* a whole number (blank: 0 when blank_ok) */
static int nas_int(nas_in *in, const char *f, long line, const char *what, int blank_ok, long *v)
{
    if (!*f && blank_ok) return *v = 0, 0;
    if (fe_parse_long(f, v)) return 0;
    return mbl_error(in->st, MBL_EPARSE, "%s:%ld: %s %s: '%s' is not a whole number", in->L.path, line, in->who,
                     what, f);
}

/* a real of Nastran's forms: 1.5, 1.5E+3, 1.5D+3, 1.5+3, -.5-2 (the exponent's letter implied) */
static int nas_real(nas_in *in, const char *f, long line, const char *what, double *v)
{
    char s[2 * NAS_FIELD + 2];
    size_t o = 0;
    for (size_t k = 0; f[k]; k++) {
        char c = f[k] == 'D' || f[k] == 'd' ? 'E' : f[k];
        if ((c == '+' || c == '-') && k > 0 && toupper((unsigned char)f[k - 1]) != 'E' &&
            toupper((unsigned char)f[k - 1]) != 'D')
            s[o++] = 'E';
        s[o++] = c;
    }
    s[o] = 0;
    if (fe_parse_double(s, v)) return 0;
    return mbl_error(in->st, MBL_EPARSE, "%s:%ld: %s %s: '%s' is not a finite number", in->L.path, line, in->who,
                     what, f);
}

/* ---- DMIG and GRID ---- */

typedef struct nas_mat {
    const char *name;          /* kname or mname */
    long header;               /* the header entry's line (0: not yet read) */
    int square;                /* IFO 1 (else 6: one triangle) */
    long n, cap, room;
    long long *r, *c;          /* row and column: grid * 8 + component */
    double *x;
    long *line;
} nas_mat;

typedef struct nas_grids {
    int n, room;
    int *id;
    double *xyz;
    long *line;
} nas_grids;

static void mat_free(nas_mat *m)
{
    mbl_free(m->r), mbl_free(m->c), mbl_free(m->x), mbl_free(m->line);
    m->r = m->c = NULL, m->x = NULL, m->line = NULL;
}

static int mat_add(nas_in *in, nas_mat *m, long long r, long long c, double x, long line)
{
    if (m->n == m->cap)
        return mbl_error(in->st, MBL_EDIM, "%s:%ld: DMIG %s: more than %ld terms (the bound of the file's size and "
                         "FE_MAX_NNZ)", in->L.path, line, m->name, m->cap);
    if (m->n == m->room) {
        long room = m->room ? 2 * m->room : 1024;
        if (room > m->cap) room = m->cap;
        long long *r2 = mbl_realloc_array(m->r, (size_t)room, sizeof *r2);
        if (r2) m->r = r2;
        long long *c2 = mbl_realloc_array(m->c, (size_t)room, sizeof *c2);
        if (c2) m->c = c2;
        double *x2 = mbl_realloc_array(m->x, (size_t)room, sizeof *x2);
        if (x2) m->x = x2;
        long *l2 = mbl_realloc_array(m->line, (size_t)room, sizeof *l2);
        if (l2) m->line = l2;
        if (!r2 || !c2 || !x2 || !l2) return mbl_error(in->st, MBL_ENOMEM, "out of memory for %ld terms", room);
        m->room = room;
    }
    m->r[m->n] = r, m->c[m->n] = c, m->x[m->n] = x, m->line[m->n++] = line;
    return 0;
}

/* a grid point and component: the key grid * 8 + component */
static int nas_dof(nas_in *in, const char *g, const char *c, long line, const char *what, long long *key)
{
    long G, C;
    int rc = nas_int(in, g, line, what, 0, &G);
    if (!rc) rc = nas_int(in, c, line, what, 0, &C);
    if (rc) return rc;
    if (G < 1 || G > INT_MAX)
        return mbl_error(in->st, MBL_EPARSE, "%s:%ld: %s %s: grid %ld is not a grid number", in->L.path, line,
                         in->who, what, G);
    if (C == 0)
        return mbl_error(in->st, MBL_EMODEL, "%s:%ld: %s %s: scalar points (component 0) are not supported",
                         in->L.path, line, in->who, what);
    if (C < 1 || C > 6)
        return mbl_error(in->st, MBL_EPARSE, "%s:%ld: %s %s: component %ld outside 1..6", in->L.path, line, in->who,
                         what, C);
    *key = (long long)G * 8 + C;
    return 0;
}

/* the header entry after NAME, "0": IFO TIN TOUT POLAR (blank) NCOL */
static int dmig_header(nas_in *in, nas_mat *m, long line)
{
    if (m->header)
        return mbl_error(in->st, MBL_EPARSE, "%s:%ld: DMIG %s: a second header entry (the first at line %ld)",
                         in->L.path, line, m->name, m->header);
    long v[3] = {0, 0, 0};
    const char *f;
    long fl;
    for (int k = 0; k < 3; k++) {
        int got = nas_field(in, &f, &fl), rc = got < 0 ? got : nas_int(in, got ? f : "", fl, "header", 1, &v[k]);
        if (rc) return rc;
    }
    if (v[0] != 1 && v[0] != 6)
        return mbl_error(in->st, MBL_EMODEL, "%s:%ld: DMIG %s: form IFO %ld is not supported (6 symmetric, 1 square)",
                         in->L.path, line, m->name, v[0]);
    if (v[1] != 1 && v[1] != 2)
        return mbl_error(in->st, MBL_EMODEL, "%s:%ld: DMIG %s: type TIN %ld is not supported (1 or 2: real; complex "
                         "matrices are not)", in->L.path, line, m->name, v[1]);
    m->header = line, m->square = v[0] == 1;
    return 0;
}

/* a column entry after NAME: GJ CJ (blank), then terms G C A (B blank) */
static int dmig_column(nas_in *in, nas_mat *m, const char *gj, long line)
{
    const char *f[4];
    char keep[4][NAS_FIELD + 1];
    long fl = line, tl = line;
    int got = nas_field(in, &f[0], &fl);
    long long col, row;
    if (!m->header)
        return mbl_error(in->st, MBL_EPARSE, "%s:%ld: DMIG %s: a column before the header entry (NAME \"0\" IFO "
                         "TIN ...)", in->L.path, line, m->name);
    int rc = got < 0 ? got : nas_dof(in, gj, got ? f[0] : "", line, "column", &col);
    if (!rc && (got = nas_field(in, &f[0], &fl)) < 0) rc = got; /* field 5: blank */
    while (!rc && got > 0) {
        int n = 0;
        while (n < 4 && (got = nas_field(in, &f[n], &fl)) > 0) {
            if (!n) tl = fl;
            strcpy(keep[n], f[n]), n++;
        }
        if (got < 0) return got;
        for (int k = n; k < 4; k++) keep[k][0] = 0;
        if (!keep[0][0] && !keep[1][0] && !keep[2][0] && !keep[3][0]) continue; /* a blank term */
        double x;
        if (keep[3][0])
            return mbl_error(in->st, MBL_EPARSE, "%s:%ld: DMIG %s: an imaginary part in a real matrix (TIN 1 or 2)",
                             in->L.path, tl, m->name);
        if (!keep[2][0])
            return mbl_error(in->st, MBL_EPARSE, "%s:%ld: DMIG %s: a term without its value (G C A expected)",
                             in->L.path, tl, m->name);
        if ((rc = nas_dof(in, keep[0], keep[1], tl, "term", &row)) || (rc = nas_real(in, keep[2], tl, "term", &x)))
            return rc;
        rc = mat_add(in, m, row, col, x, tl);
    }
    return rc;
}

/* a DMIG entry: the matrix it names among m (others skipped) */
static int dmig_entry(nas_in *in, nas_mat *m, int nm)
{
    const char *f;
    long line = in->line, fl;
    char name[NAS_FIELD + 1], second[NAS_FIELD + 1];
    int got = nas_field(in, &f, &fl);
    if (got <= 0) return got;
    strcpy(name, f);
    nas_mat *which = NULL;
    for (int k = 0; k < nm; k++)
        if (m[k].name && fe_same_name(m[k].name, name)) which = &m[k];
    if (!which) return 0;
    snprintf(in->who, sizeof in->who, "DMIG %s", name);
    if ((got = nas_field(in, &f, &fl)) < 0) return got;
    strcpy(second, got ? f : "");
    return !strcmp(second, "0") ? dmig_header(in, which, line) : dmig_column(in, which, second, line);
}

/* a GRID entry: ID CP X1 X2 X3 CD (basic coordinates only) */
static int grid_entry(nas_in *in, nas_grids *g)
{
    const char *f;
    long v[6] = {0}, fl, line = in->line;
    double x[3] = {0, 0, 0};
    static const char *what[6] = {"ID", "CP", "X1", "X2", "X3", "CD"};
    for (int k = 0; k < 6; k++) {
        int got = nas_field(in, &f, &fl), rc = got < 0 ? got : 0;
        const char *s = got > 0 ? f : "";
        if (!rc) rc = k >= 2 && k <= 4 ? (*s ? nas_real(in, s, fl, what[k], &x[k - 2]) : 0)
                                       : nas_int(in, s, fl, what[k], k > 0, &v[k]);
        if (rc) return rc;
    }
    if (v[0] < 1 || v[0] > INT_MAX)
        return mbl_error(in->st, MBL_EPARSE, "%s:%ld: GRID: %ld is not a grid number", in->L.path, line, v[0]);
    if (v[1] || v[5])
        return mbl_error(in->st, MBL_EMODEL, "%s:%ld: GRID %ld: coordinate systems are not supported (CP and CD "
                         "must be 0 or blank)", in->L.path, line, v[0]);
    if (g->n == FE_MAX_DOF)
        return mbl_error(in->st, MBL_EDIM, "%s:%ld: more than %d GRID entries", in->L.path, line, FE_MAX_DOF);
    if (g->n == g->room) {
        int room = g->room ? 2 * g->room : 256;
        int *i2 = mbl_realloc_array(g->id, (size_t)room, sizeof *i2);
        if (i2) g->id = i2;
        double *x2 = mbl_realloc_array(g->xyz, 3 * (size_t)room, sizeof *x2);
        if (x2) g->xyz = x2;
        long *l2 = mbl_realloc_array(g->line, (size_t)room, sizeof *l2);
        if (l2) g->line = l2;
        if (!i2 || !x2 || !l2) return mbl_error(in->st, MBL_ENOMEM, "out of memory for %d grids", room);
        g->room = room;
    }
    g->id[g->n] = (int)v[0], g->line[g->n] = line;
    memcpy(g->xyz + 3 * (size_t)g->n++, x, sizeof x);
    return 0;
}

/* one file: the DMIG entries of m (nm of them; none: 0) and the GRID entries into g (NULL: none) */
static int nas_read(const char *path, nas_mat *m, int nm, nas_grids *g, mbl_status *st)
{
    nas_in in;
    memset(&in, 0, sizeof in);
    in.st = st;
    int rc = fe_lines_open(&in.L, path, nm ? "punch" : "bulk data", st), got = 0;
    /* the shortest term is ",1,1,1" (free field): at most size / 6 + 1 terms a matrix */
    for (int k = 0; !rc && k < nm; k++) m[k].cap = in.L.size / 6 + 1 > FE_MAX_NNZ ? FE_MAX_NNZ : in.L.size / 6 + 1;
    while (!rc && (got = nas_entry(&in)) > 0) {
        if (nm && fe_same_name(in.name, "DMIG")) rc = dmig_entry(&in, m, nm);
        else if (g && fe_same_name(in.name, "GRID")) rc = grid_entry(&in, g);
    }
    if (!rc && got < 0) rc = got;
    for (int k = 0; !rc && k < nm; k++)
        if (m[k].name && !m[k].header)
            rc = mbl_error(st, MBL_EMODEL, "%s: no DMIG entry named %s", path, m[k].name);
    fe_lines_close(&in.L);
    return rc;
}

/* ---- the part ---- */

static int cmp_key(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

static long key_index(const long long *key, long n, long long k)
{
    const long long *at = bsearch(&k, key, (size_t)n, sizeof *key, cmp_key);
    return at ? (long)(at - key) : -1;
}

/* the grids ascending, each once, into the part */
static int grids_to_part(nas_grids *g, const char *path, fe_part *p, mbl_status *st)
{
    if (!g->n) return mbl_error(st, MBL_EMODEL, "%s: no GRID entries", path);
    long long *key = mbl_alloc_array((size_t)g->n, sizeof *key);
    p->node_id = mbl_alloc_array((size_t)g->n, sizeof *p->node_id);
    p->xyz = mbl_alloc_array(3 * (size_t)g->n, sizeof *p->xyz);
    int rc = key && p->node_id && p->xyz ? 0 : mbl_error(st, MBL_ENOMEM, "out of memory for %d grids", g->n);
    for (int k = 0; !rc && k < g->n; k++) key[k] = (long long)g->id[k] << 31 | k;
    if (!rc) qsort(key, (size_t)g->n, sizeof *key, cmp_key);
    for (int k = 0; !rc && k < g->n; k++) {
        int q = (int)(key[k] & INT_MAX), prev = k ? (int)(key[k - 1] & INT_MAX) : -1;
        if (k && g->id[prev] == g->id[q])
            rc = mbl_error(st, MBL_EMODEL, "%s:%ld: GRID %d a second time (line %ld)", path,
                           g->line[q] > g->line[prev] ? g->line[q] : g->line[prev], g->id[q],
                           g->line[q] > g->line[prev] ? g->line[prev] : g->line[q]);
        p->node_id[k] = g->id[q];
        memcpy(p->xyz + 3 * (size_t)k, g->xyz + 3 * (size_t)q, 3 * sizeof *p->xyz);
    }
    p->nnode = g->n;
    mbl_free(key);
    return rc;
}

/* the rows: every grid and component of the matrices, ascending */
static int nas_rows(nas_mat *m, int nm, const char *path, fe_part *p, long long **rows, mbl_status *st)
{
    long total = 0, n = 0;
    for (int k = 0; k < nm; k++) total += 2 * m[k].n;
    long long *key = mbl_alloc_array((size_t)(total ? total : 1), sizeof *key);
    if (!key) return mbl_error(st, MBL_ENOMEM, "out of memory for %ld terms", total);
    for (int k = 0; k < nm; k++)
        for (long t = 0; t < m[k].n; t++) key[n++] = m[k].r[t], key[n++] = m[k].c[t];
    qsort(key, (size_t)n, sizeof *key, cmp_key);
    long u = 0;
    for (long t = 0; t < n; t++)
        if (!u || key[t] != key[u - 1]) key[u++] = key[t];
    int rc = u > FE_MAX_DOF ? mbl_error(st, MBL_EDIM, "%s: more than FE_MAX_DOF = %d rows", path, FE_MAX_DOF) : 0;
    if (!rc && !u) rc = mbl_error(st, MBL_EMODEL, "%s: DMIG %s has no terms", path, m[0].name);
    p->dof_node = rc ? NULL : mbl_alloc_array((size_t)u, sizeof *p->dof_node);
    p->dof_dir = rc ? NULL : mbl_alloc_array((size_t)u, sizeof *p->dof_dir);
    if (!rc && (!p->dof_node || !p->dof_dir)) rc = mbl_error(st, MBL_ENOMEM, "out of memory for %ld rows", u);
    for (long t = 0; !rc && t < u; t++) {
        int grid = (int)(key[t] / 8), k = fe_part_node(p, grid);
        for (int q = 0; k < 0 && q < nm; q++)
            for (long e = 0; k < 0 && e < m[q].n; e++)
                if (m[q].r[e] / 8 == grid || m[q].c[e] / 8 == grid)
                    return mbl_free(key), mbl_error(st, MBL_EMODEL, "%s:%ld: DMIG %s: grid %d is not among the "
                                                    "GRID entries", path, m[q].line[e], m[q].name, grid);
        p->dof_node[t] = k, p->dof_dir[t] = (signed char)(key[t] % 8 - 1);
    }
    p->ndof = (int)u;
    if (rc) mbl_free(key);
    else *rows = key;
    return rc;
}

/* one matrix over the rows */
static int nas_csc(nas_mat *m, const long long *rows, int ndof, const char *path, mbla_csc **A, mbl_status *st)
{
    fe_trip t;
    fe_trip_init(&t, m->n);
    int rc = 0;
    for (long e = 0; !rc && e < m->n; e++)
        rc = fe_trip_add(&t, (int)key_index(rows, ndof, m->r[e]), (int)key_index(rows, ndof, m->c[e]), m->x[e],
                         m->line[e], path, st);
    mat_free(m);
    if (!rc) rc = fe_trip_csc(&t, ndof, m->square, path, A, st);
    fe_trip_free(&t);
    return rc;
}

int fe_read_nastran(const char *pch, const char *kname, const char *mname, const char *bulk, fe_part *p,
                    mbl_status *st)
{
    if (!pch || !kname || !p) return mbl_error(st, MBL_EARG, "fe_read_nastran: NULL argument");
    if (mname && fe_same_name(kname, mname))
        return mbl_error(st, MBL_EARG, "fe_read_nastran: the stiffness and the mass are both DMIG %s", kname);
    memset(p, 0, sizeof *p);
    nas_mat m[2];
    nas_grids g;
    memset(m, 0, sizeof m);
    memset(&g, 0, sizeof g);
    m[0].name = kname, m[1].name = mname;
    long long *rows = NULL;
    int rc = nas_read(pch, m, mname ? 2 : 1, bulk ? NULL : &g, st);
    if (!rc && bulk) rc = nas_read(bulk, NULL, 0, &g, st);
    if (!rc) rc = grids_to_part(&g, bulk ? bulk : pch, p, st);
    if (!rc) rc = nas_rows(m, mname ? 2 : 1, pch, p, &rows, st);
    if (!rc) rc = nas_csc(&m[0], rows, p->ndof, pch, &p->K, st);
    if (!rc && mname) rc = nas_csc(&m[1], rows, p->ndof, pch, &p->M, st);
    if (!rc && !(p->file = mbl_malloc(strlen(pch) + 1))) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    if (!rc) strcpy(p->file, pch);
    mat_free(&m[0]), mat_free(&m[1]);
    mbl_free(g.id), mbl_free(g.xyz), mbl_free(g.line), mbl_free(rows);
    if (rc) fe_part_free(p);
    return rc;
}
