/* The FE part as read (fe.h): its release and look-ups, and what the readers share (fe_read.h):
 * lines of bounded length, numbers, and the entries of a matrix assembled into both triangles. */
#include "fe/fe_read.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void fe_part_free(fe_part *p)
{
    if (!p) return;
    mbl_free(p->file);
    mbl_free(p->node_id);
    mbl_free(p->xyz);
    mbl_free(p->dof_node);
    mbl_free(p->dof_dir);
    mbla_csc_free(p->K);
    mbla_csc_free(p->M);
    for (int s = 0; s < p->nset && p->set_name; s++) mbl_free(p->set_name[s]);
    mbl_free(p->set_name);
    mbl_free(p->set_ptr);
    mbl_free(p->set_node);
    memset(p, 0, sizeof *p);
}

int fe_search(const int *a, int n, long v)
{
    int lo = 0, hi = n - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (a[mid] == v) return mid;
        if (a[mid] < v) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

int fe_part_node(const fe_part *p, int id)
{
    return p ? fe_search(p->node_id, p->nnode, id) : -1;
}

int fe_same_name(const char *s, const char *t)
{
    for (; *s && *t; s++, t++)
        if (tolower((unsigned char)*s) != tolower((unsigned char)*t)) return 0;
    return !*s && !*t;
}

int fe_part_set(const fe_part *p, const char *name)
{
    for (int s = 0; p && name && s < p->nset; s++)
        if (fe_same_name(p->set_name[s], name)) return s;
    return -1;
}

/* ---- lines ---- */

int fe_lines_open(fe_lines *in, const char *path, const char *what, mbl_status *st)
{
    memset(in, 0, sizeof *in);
    in->path = path;
    struct stat sb;
    errno = 0;
    if (stat(path, &sb) || !S_ISREG(sb.st_mode) || !(in->f = fopen(path, "r")))
        return mbl_error(st, MBL_EIO, "cannot open the %s file %s: %s", what, path,
                         errno ? strerror(errno) : "not a regular file");
    in->size = (long)sb.st_size;
    return 0;
}

int fe_lines_next(fe_lines *in, mbl_status *st)
{
    if (!fgets(in->buf, sizeof in->buf, in->f)) return 0;
    in->line++;
    size_t l = strlen(in->buf);
    int whole = l && in->buf[l - 1] == '\n';
    if (!whole && !feof(in->f)) goto too_long;
    while (l && (in->buf[l - 1] == '\n' || in->buf[l - 1] == '\r')) in->buf[--l] = 0;
    if (l > FE_LINE_MAX) goto too_long;
    return 1;
too_long:
    return mbl_error(st, MBL_EPARSE, "%s:%ld: a line longer than %d characters", in->path, in->line,
                     FE_LINE_MAX);
}

void fe_lines_close(fe_lines *in)
{
    if (in->f) fclose(in->f);
    in->f = NULL;
}

/* ---- numbers ---- */

int fe_parse_long(const char *s, long *v)
{
    while (isspace((unsigned char)*s)) s++;
    if (!*s || isspace((unsigned char)s[*s == '-' || *s == '+'])) return 0;
    char *end;
    errno = 0;
    long x = strtol(s, &end, 10);
    if (end == s || errno) return 0;
    while (isspace((unsigned char)*end)) end++;
    if (*end) return 0;
    *v = x;
    return 1;
}

int fe_parse_double(const char *s, double *v)
{
    while (isspace((unsigned char)*s)) s++;
    char *end;
    double x = strtod(s, &end);
    if (end == s) return 0;
    while (isspace((unsigned char)*end)) end++;
    if (*end || !isfinite(x)) return 0;
    *v = x;
    return 1;
}

/* ---- the entries of a matrix ---- */

void fe_trip_init(fe_trip *t, long cap)
{
    memset(t, 0, sizeof *t);
    t->cap = cap;
}

void fe_trip_free(fe_trip *t)
{
    mbl_free(t->i);
    mbl_free(t->j);
    mbl_free(t->x);
    mbl_free(t->line);
    t->i = t->j = NULL, t->x = NULL, t->line = NULL;
    t->n = t->room = 0;
}

/* room for `room` entries in every array */
static int trip_grow(fe_trip *t, long room, mbl_status *st)
{
    int *i = mbl_realloc_array(t->i, (size_t)room, sizeof *i);
    if (i) t->i = i;
    int *j = mbl_realloc_array(t->j, (size_t)room, sizeof *j);
    if (j) t->j = j;
    double *x = mbl_realloc_array(t->x, (size_t)room, sizeof *x);
    if (x) t->x = x;
    long *line = mbl_realloc_array(t->line, (size_t)room, sizeof *line);
    if (line) t->line = line;
    if (!i || !j || !x || !line) return mbl_error(st, MBL_ENOMEM, "out of memory for %ld matrix entries", room);
    t->room = room;
    return 0;
}

int fe_trip_add(fe_trip *t, int i, int j, double x, long line, const char *path, mbl_status *st)
{
    if (t->n >= t->cap)
        return mbl_error(st, MBL_EDIM, "%s:%ld: more than %ld matrix entries (the bound of the file's size "
                         "and FE_MAX_NNZ, both triangles)", path, line, t->cap);
    if (t->n == t->room) {
        long room = t->room ? 2 * t->room : 1024;
        if (room > t->cap) room = t->cap;
        int rc = trip_grow(t, room, st);
        if (rc) return rc;
    }
    t->i[t->n] = i, t->j[t->n] = j, t->x[t->n] = x, t->line[t->n] = line;
    t->n++;
    return 0;
}

/* one triangle: every off-diagonal entry on the side of the first; then the mirror appended */
static int trip_mirror(fe_trip *t, const char *path, mbl_status *st)
{
    long first = -1, off = 0;
    for (long k = 0; k < t->n; k++) {
        if (t->i[k] == t->j[k]) continue;
        off++;
        if (first < 0) first = k;
        else if ((t->i[k] < t->j[k]) != (t->i[first] < t->j[first]))
            return mbl_error(st, MBL_EPARSE, "%s:%ld: an entry of the %s triangle, the first (line %ld) is of "
                             "the %s: one triangle of a symmetric matrix only", path, t->line[k],
                             t->i[k] < t->j[k] ? "upper" : "lower", t->line[first],
                             t->i[first] < t->j[first] ? "upper" : "lower");
    }
    if (t->n + off > FE_MAX_NNZ)
        return mbl_error(st, MBL_EDIM, "%s: %ld entries in both triangles, more than FE_MAX_NNZ = %ld", path,
                         t->n + off, FE_MAX_NNZ);
    int rc = t->n + off > t->room ? trip_grow(t, t->n + off, st) : 0;
    for (long k = 0, m = t->n; !rc && k < m; k++)
        if (t->i[k] != t->j[k]) t->i[t->n] = t->j[k], t->j[t->n] = t->i[k], t->x[t->n++] = t->x[k];
    return rc;
}

/* The entry of a repeated place (its second line), or a value other than its transpose's (square):
 * at[pos] the first entry assembled at each place of A. */
static int trip_check(const fe_trip *t, long norig, int square, const mbla_csc *A, const int *map, int *at,
                      const char *path, mbl_status *st)
{
    int nnz = A->p[A->n];
    for (int q = 0; q < nnz; q++) at[q] = -1;
    for (long k = 0; k < norig; k++) {
        if (at[map[k]] >= 0)
            return mbl_error(st, MBL_EPARSE, "%s:%ld: a repeated entry (the same row and column as line %ld)",
                             path, t->line[k], t->line[at[map[k]]]);
        at[map[k]] = (int)k;
    }
    for (int c = 0; square && c < A->n; c++)
        for (int q = A->p[c]; q < A->p[c + 1]; q++) {
            int r = A->i[q], lo = A->p[r], hi = A->p[r + 1] - 1;
            while (lo <= hi && A->i[(lo + hi) / 2] != c)
                if (A->i[(lo + hi) / 2] < c) lo = (lo + hi) / 2 + 1;
                else hi = (lo + hi) / 2 - 1;
            if (lo > hi || A->x[(lo + hi) / 2] != A->x[q])
                return mbl_error(st, MBL_EPARSE, "%s:%ld: an entry that differs from its transpose's (or has "
                                 "none): a square matrix must be symmetric", path, t->line[at[q]]);
        }
    return 0;
}

int fe_trip_csc(fe_trip *t, int ndof, int square, const char *path, mbla_csc **out, mbl_status *st)
{
    long norig = t->n;
    int rc = square ? 0 : trip_mirror(t, path, st);
    int *map = rc ? NULL : mbl_alloc_array((size_t)(t->n ? t->n : 1), sizeof *map);
    if (!rc && !map) rc = mbl_error(st, MBL_ENOMEM, "out of memory for %ld matrix entries", t->n);
    mbla_csc *A = NULL;
    if (!rc) rc = mbla_csc_from_triplets(ndof, ndof, (int)t->n, t->i, t->j, t->x, map, &A, st);
    if (!rc) {
        int *at = mbl_alloc_array((size_t)(A->p[ndof] ? A->p[ndof] : 1), sizeof *at);
        if (!at) rc = mbl_error(st, MBL_ENOMEM, "out of memory for %d matrix entries", A->p[ndof]);
        if (!rc) rc = trip_check(t, norig, square, A, map, at, path, st);
        mbl_free(at);
    }
    mbl_free(map);
    fe_trip_free(t);
    if (rc) mbla_csc_free(A);
    else *out = A;
    return rc;
}
