/* CalculiX 2.20's matrices of a step `*FREQUENCY, SOLVER=MATRIXSTORAGE` (fe.h): job.dof (the
 * `node.direction` of each row), job.sti and job.mas (one triangle, `row column value`, 1-based;
 * ccx writes the upper, column by column), and the input deck job.inp for the nodes (*NODE, with
 * its NSET= parameter) and node sets (*NSET, GENERATE, a set naming another), *INCLUDE followed.
 * The deck is read twice: the nodes first, then the sets, which name nodes by their numbers. */
#include "fe/fe_read.h"

#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ---- the file names of a job ---- */

/* job without a trailing .inp, .sti, .mas or .dof, then ext */
static char *job_file(const char *job, const char *ext)
{
    size_t l = strlen(job);
    static const char *known[] = {".inp", ".sti", ".mas", ".dof"};
    for (int k = 0; k < 4; k++)
        if (l >= 4 && !strcmp(job + l - 4, known[k])) l -= 4;
    char *s = mbl_malloc(l + strlen(ext) + 1);
    if (s) memcpy(s, job, l), strcpy(s + l, ext);
    return s;
}

/* ---- the deck ---- */

typedef struct deck_set {
    char *name;
    int n, room;
    int *node;                 /* node indices, no repeats */
} deck_set;

typedef struct deck {
    int pass;                  /* 1: the nodes; 2: the sets */
    mbl_status *st;
    int nnode, room;
    int *id;                   /* pass 1: as read; then ascending */
    double *xyz;
    char *seen;                /* pass 2: per node, its *NODE line read again (a repeat: an error) */
    int nset, set_room;
    deck_set *set;
    int cur;                   /* the set the stamps are of (-1: none) */
    int *stamp;                /* per node: 1 when in set cur */
    long members;              /* set members in all sets */
} deck;

/* the members of all sets together stay below this (bounded memory) */
#define FE_MAX_SET_NODES 20000000L

static void trim(char **s)
{
    while (isspace((unsigned char)**s)) (*s)++;
    size_t l = strlen(*s);
    while (l && isspace((unsigned char)(*s)[l - 1])) (*s)[--l] = 0;
}

/* the next comma-separated field of *s (trimmed), NULL at the end */
static char *next_field(char **s)
{
    if (!*s) return NULL;
    char *f = *s, *c = strchr(f, ',');
    if (c) *c = 0, *s = c + 1;
    else *s = NULL;
    trim(&f);
    return f;
}

/* the value of parameter key of a keyword line's parameters (NULL: absent; "" without a value) */
static char *param(const char *params, const char *key, char *buf, size_t len)
{
    char tmp[FE_LINE_MAX + 3];
    snprintf(tmp, sizeof tmp, "%s", params);
    char *s = tmp, *f;
    while ((f = next_field(&s))) {
        char *eq = strchr(f, '='), *v = eq ? eq + 1 : f + strlen(f);
        if (eq) *eq = 0;
        trim(&f);
        if (!fe_same_name(f, key)) continue;
        trim(&v);
        snprintf(buf, len, "%s", v);
        return buf;
    }
    return NULL;
}

static int node_index(const deck *d, long id)
{
    return fe_search(d->id, d->nnode, id);
}

/* pass 1: a data line of *NODE: id, x[, y[, z]] */
static int node_line(deck *d, char *s, const fe_lines *in)
{
    char *f = next_field(&s);
    long id;
    if (!fe_parse_long(f, &id) || id < 1 || id > INT_MAX)
        return mbl_error(d->st, MBL_EPARSE, "%s:%ld: *NODE: '%s' is not a node number (1 or more)", in->path,
                         in->line, f);
    if (d->nnode == FE_MAX_DOF)
        return mbl_error(d->st, MBL_EDIM, "%s:%ld: more than %d nodes", in->path, in->line, FE_MAX_DOF);
    if (d->nnode == d->room) {
        int room = d->room ? 2 * d->room : 256;
        int *id2 = mbl_realloc_array(d->id, (size_t)room, sizeof *id2);
        if (id2) d->id = id2;
        double *x2 = mbl_realloc_array(d->xyz, (size_t)room * 3, sizeof *x2);
        if (x2) d->xyz = x2;
        if (!id2 || !x2) return mbl_error(d->st, MBL_ENOMEM, "out of memory for %d nodes", room);
        d->room = room;
    }
    double *x = d->xyz + 3 * (size_t)d->nnode;
    x[0] = x[1] = x[2] = 0;
    for (int k = 0; k < 4 && (f = next_field(&s)); k++) {
        if (k == 3 ? *f != 0 : !fe_parse_double(f, &x[k]))
            return mbl_error(d->st, MBL_EPARSE, "%s:%ld: *NODE %ld: %s", in->path, in->line, id,
                             k == 3 ? "more than three coordinates" : "a coordinate that is not a finite number");
    }
    d->id[d->nnode++] = (int)id;
    return 0;
}

/* pass 2: the set named name (made when new) */
static int set_of(deck *d, const char *name, const fe_lines *in)
{
    for (int s = 0; s < d->nset; s++)
        if (fe_same_name(d->set[s].name, name)) return s;
    if (!*name) return mbl_error(d->st, MBL_EPARSE, "%s:%ld: a set without a name", in->path, in->line);
    if (d->nset == d->set_room) {
        int room = d->set_room ? 2 * d->set_room : 16;
        deck_set *s2 = mbl_realloc_array(d->set, (size_t)room, sizeof *s2);
        if (!s2) return mbl_error(d->st, MBL_ENOMEM, "out of memory for %d node sets", room);
        d->set = s2, d->set_room = room;
    }
    deck_set *s = &d->set[d->nset];
    memset(s, 0, sizeof *s);
    if (!(s->name = mbl_malloc(strlen(name) + 1))) return mbl_error(d->st, MBL_ENOMEM, "out of memory");
    strcpy(s->name, name);
    return d->nset++;
}

/* node index k into set s (no repeats: the stamps are of one set at a time) */
static int set_add(deck *d, int s, int k, const fe_lines *in)
{
    deck_set *S = &d->set[s];
    if (d->cur != s) {
        if (d->cur >= 0)
            for (int q = 0; q < d->set[d->cur].n; q++) d->stamp[d->set[d->cur].node[q]] = 0;
        for (int q = 0; q < S->n; q++) d->stamp[S->node[q]] = 1;
        d->cur = s;
    }
    if (d->stamp[k]) return 0;
    if (d->members == FE_MAX_SET_NODES)
        return mbl_error(d->st, MBL_EDIM, "%s:%ld: more than %ld nodes in all node sets together", in->path,
                         in->line, FE_MAX_SET_NODES);
    if (S->n == S->room) {
        int room = S->room ? 2 * S->room : 64;
        int *n2 = mbl_realloc_array(S->node, (size_t)room, sizeof *n2);
        if (!n2) return mbl_error(d->st, MBL_ENOMEM, "out of memory for the node set %s", S->name);
        S->node = n2, S->room = room;
    }
    S->node[S->n++] = k;
    d->stamp[k] = 1;
    d->members++;
    return 0;
}

/* the index *k of node number id of set name (an error at the line when it is not a node of *NODE) */
static int set_node(const deck *d, long id, const char *name, const fe_lines *in, int *k)
{
    *k = id >= 1 && id <= INT_MAX ? node_index(d, id) : -1;
    if (*k < 0)
        return mbl_error(d->st, MBL_EMODEL, "%s:%ld: *NSET %s: node %ld is not in the deck's *NODE", in->path,
                         in->line, name, id);
    return 0;
}

/* pass 2: a data line of *NSET (generate: first, last[, step]) */
static int nset_line(deck *d, int s, int generate, char *line, const fe_lines *in)
{
    char *f, *p = line;
    const char *name = d->set[s].name;
    if (generate) {
        long v[3] = {0, 0, 1};
        int n = 0;
        while ((f = next_field(&p)) && n < 4)
            if (*f && (n == 3 || !fe_parse_long(f, &v[n++])))
                return mbl_error(d->st, MBL_EPARSE, "%s:%ld: *NSET %s, GENERATE: 'first, last[, step]' expected",
                                 in->path, in->line, name);
        if (n < 2 || v[0] > v[1] || v[2] < 1 || (v[1] - v[0]) / v[2] >= FE_MAX_DOF)
            return mbl_error(d->st, MBL_EPARSE, "%s:%ld: *NSET %s, GENERATE: a range first <= last, step >= 1, "
                             "of at most %d numbers expected", in->path, in->line, name, FE_MAX_DOF);
        int k, rc = set_node(d, v[0], name, in, &k);
        if (!rc) rc = set_node(d, v[1], name, in, &k);
        if (rc) return rc;
        for (long id = v[0]; id <= v[1]; id += v[2]) {
            int q = node_index(d, id);
            if (q >= 0 && (rc = set_add(d, s, q, in))) return rc;
        }
        return 0;
    }
    while ((f = next_field(&p))) {
        long id;
        if (!*f) continue;
        if (fe_parse_long(f, &id)) {
            int k, rc = set_node(d, id, name, in, &k);
            if (rc || (rc = set_add(d, s, k, in))) return rc;
            continue;
        }
        int o = -1;
        for (int q = 0; q < d->nset; q++)
            if (fe_same_name(d->set[q].name, f)) o = q;
        if (o < 0 || o == s)
            return mbl_error(d->st, MBL_EMODEL, "%s:%ld: *NSET %s: '%s' is neither a node number nor a set "
                             "defined before", in->path, in->line, name, f);
        for (int q = 0; q < d->set[o].n; q++) {
            int rc = set_add(d, s, d->set[o].node[q], in);
            if (rc) return rc;
        }
    }
    return 0;
}

/* pass 2: a data line of *NODE read again: a repeated number is an error; NSET= gets the node */
static int node_again(deck *d, int s, char *line, const fe_lines *in)
{
    char *p = line, *f = next_field(&p);
    long id;
    int k = fe_parse_long(f, &id) ? node_index(d, id) : -1;
    if (k < 0) return 0; /* pass 1 took every line it could not read */
    if (d->seen[k])
        return mbl_error(d->st, MBL_EMODEL, "%s:%ld: *NODE %ld is defined a second time", in->path, in->line, id);
    d->seen[k] = 1;
    return s >= 0 ? set_add(d, s, k, in) : 0;
}

/* the path of an *INCLUDE's INPUT= value: relative to the including file's folder */
static char *include_path(const char *from, const char *input)
{
    size_t l = strlen(input);
    if (l >= 2 && (input[0] == '"' || input[0] == '\'') && input[l - 1] == input[0]) input++, l -= 2;
    const char *slash = strrchr(from, '/');
    size_t dir = input[0] != '/' && slash ? (size_t)(slash - from) + 1 : 0;
    char *s = mbl_malloc(dir + l + 1);
    if (s) memcpy(s, from, dir), memcpy(s + dir, input, l), s[dir + l] = 0;
    return s;
}

enum { DATA_NONE, DATA_NODE, DATA_NSET };

static int deck_read(deck *d, const char *path, int depth, const fe_lines *from);

/* a keyword line (its continuations joined in kw): what its data lines are */
static int keyword(deck *d, const char *line, const fe_lines *in, int depth, int *data, int *set, int *generate)
{
    /* ccx reads a keyword line without its blanks (*SOLID SECTION is *SOLIDSECTION), but for a file name */
    char kw[FE_LINE_MAX + 3], raw[FE_LINE_MAX + 3], val[FE_LINE_MAX + 3];
    size_t n = 0;
    for (const char *c = line; *c && n < sizeof kw - 1; c++)
        if (!isspace((unsigned char)*c)) kw[n++] = *c;
    kw[n] = 0;
    size_t m = strlen(line) < sizeof raw ? strlen(line) : sizeof raw - 1; /* a line: at most FE_LINE_MAX */
    memcpy(raw, line, m), raw[m] = 0;
    char *p = kw, *name = next_field(&p), *q = raw;
    const char *params = p ? p : "";
    next_field(&q);
    *data = DATA_NONE, *set = -1, *generate = 0;
    if (fe_same_name(name, "NODE")) {
        *data = DATA_NODE;
        if (d->pass == 2 && param(params, "NSET", val, sizeof val) && (*set = set_of(d, val, in)) < 0) return *set;
        return 0;
    }
    if (fe_same_name(name, "NSET")) {
        *data = DATA_NSET;
        if (!param(params, "NSET", val, sizeof val))
            return mbl_error(d->st, MBL_EPARSE, "%s:%ld: *NSET without NSET=", in->path, in->line);
        char gen[FE_LINE_MAX + 1];
        *generate = param(params, "GENERATE", gen, sizeof gen) != NULL;
        if (d->pass == 2 && (*set = set_of(d, val, in)) < 0) return *set;
        return 0;
    }
    if (!fe_same_name(name, "INCLUDE")) return 0;
    if (!param(q ? q : "", "INPUT", val, sizeof val) || !*val)
        return mbl_error(d->st, MBL_EPARSE, "%s:%ld: *INCLUDE without INPUT=", in->path, in->line);
    char *inc = include_path(in->path, val);
    if (!inc) return mbl_error(d->st, MBL_ENOMEM, "out of memory");
    int rc = deck_read(d, inc, depth + 1, in);
    mbl_free(inc);
    return rc;
}

/* a data line for the keyword before it */
static int data_line(deck *d, int data, int set, int generate, char *s, const fe_lines *in)
{
    if (data == DATA_NODE) return d->pass == 1 ? node_line(d, s, in) : node_again(d, set, s, in);
    if (data == DATA_NSET && d->pass == 2) return nset_line(d, set, generate, s, in);
    return 0;
}

/* one file of the deck: keywords without case, `**` comments; a keyword line is not continued on the
 * next (ccx 2.20 reads a line after one ending in a comma as data), a list of *NSET goes on over
 * as many data lines as it needs */
static int deck_read(deck *d, const char *path, int depth, const fe_lines *from)
{
    if (depth >= FE_INCLUDE_DEPTH)
        return mbl_error(d->st, MBL_EPARSE, "%s:%ld: *INCLUDE nested more than %d deep (does a file include "
                         "itself?)", from->path, from->line, FE_INCLUDE_DEPTH);
    fe_lines in;
    int rc = fe_lines_open(&in, path, "input deck", d->st), got = 0, data = DATA_NONE, set = -1, generate = 0;
    if (rc && from) mbl_error_prefix(d->st, "%s:%ld: *INCLUDE", from->path, from->line);
    while (!rc && (got = fe_lines_next(&in, d->st)) > 0) {
        char *s = in.buf;
        if ((s[0] == '*' && s[1] == '*') || !s[strspn(s, " \t")]) continue;
        if (s[0] != '*') {
            rc = data_line(d, data, set, generate, s, &in);
            continue;
        }
        rc = keyword(d, s + 1, &in, depth, &data, &set, &generate);
    }
    if (!rc && got < 0) rc = got;
    fe_lines_close(&in);
    return rc;
}

static int cmp_node(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* after pass 1: the nodes ascending (their coordinates with them) and the arrays of pass 2 */
static int deck_sort(deck *d)
{
    int n = d->nnode, *pair = mbl_alloc_array((size_t)(n ? 2 * n : 1), sizeof *pair);
    double *x = mbl_alloc_array((size_t)(n ? 3 * n : 1), sizeof *x);
    d->seen = mbl_calloc((size_t)(n ? n : 1), 1);
    d->stamp = mbl_calloc((size_t)(n ? n : 1), sizeof *d->stamp);
    int rc = pair && x && d->seen && d->stamp ? 0 : mbl_error(d->st, MBL_ENOMEM, "out of memory for %d nodes", n);
    for (int k = 0; !rc && k < n; k++) pair[2 * k] = d->id[k], pair[2 * k + 1] = k;
    if (!rc) qsort(pair, (size_t)n, 2 * sizeof *pair, cmp_node);
    for (int k = 0; !rc && k < n; k++) {
        d->id[k] = pair[2 * k];
        memcpy(x + 3 * (size_t)k, d->xyz + 3 * (size_t)pair[2 * k + 1], 3 * sizeof *x);
    }
    if (!rc) mbl_free(d->xyz), d->xyz = x, x = NULL;
    mbl_free(pair);
    mbl_free(x);
    return rc;
}

static void deck_free(deck *d)
{
    mbl_free(d->id);
    mbl_free(d->xyz);
    mbl_free(d->seen);
    mbl_free(d->stamp);
    for (int s = 0; s < d->nset; s++) mbl_free(d->set[s].name), mbl_free(d->set[s].node);
    mbl_free(d->set);
}

/* the deck's nodes and sets into the part (the deck keeps nothing) */
static int deck_to_part(deck *d, fe_part *p)
{
    long total = 0;
    for (int s = 0; s < d->nset; s++) total += d->set[s].n;
    p->set_name = mbl_calloc((size_t)(d->nset ? d->nset : 1), sizeof *p->set_name);
    p->set_ptr = mbl_alloc_array((size_t)d->nset + 1, sizeof *p->set_ptr);
    p->set_node = mbl_alloc_array((size_t)(total ? total : 1), sizeof *p->set_node);
    if (!p->set_name || !p->set_ptr || !p->set_node) return mbl_error(d->st, MBL_ENOMEM, "out of memory");
    p->set_ptr[0] = 0;
    for (int s = 0; s < d->nset; s++) {
        deck_set *S = &d->set[s];
        if (S->n) { /* an empty set has no array */
            qsort(S->node, (size_t)S->n, sizeof *S->node, cmp_node);
            memcpy(p->set_node + p->set_ptr[s], S->node, (size_t)S->n * sizeof *S->node);
        }
        p->set_ptr[s + 1] = p->set_ptr[s] + S->n;
        p->set_name[s] = S->name, S->name = NULL;
    }
    p->nset = d->nset;
    p->nnode = d->nnode, p->node_id = d->id, p->xyz = d->xyz;
    d->id = NULL, d->xyz = NULL;
    return 0;
}

static int read_deck(const char *path, fe_part *p, mbl_status *st)
{
    deck d;
    memset(&d, 0, sizeof d);
    d.st = st, d.cur = -1, d.pass = 1;
    int rc = deck_read(&d, path, 0, NULL);
    if (!rc) rc = deck_sort(&d);
    if (!rc) d.pass = 2, rc = deck_read(&d, path, 0, NULL);
    if (!rc) rc = deck_to_part(&d, p);
    deck_free(&d);
    return rc;
}

/* ---- the rows and the matrices ---- */

/* job.dof: `node.direction` a line, the node among the deck's, direction 1..6, no row twice */
static int read_dof(const char *path, fe_part *p, mbl_status *st)
{
    fe_lines in;
    int rc = fe_lines_open(&in, path, "degree-of-freedom", st), got = 0, room = 0;
    unsigned char *dirs = rc ? NULL : mbl_calloc((size_t)(p->nnode ? p->nnode : 1), 1);
    if (!rc && !dirs) rc = mbl_error(st, MBL_ENOMEM, "out of memory for %d nodes", p->nnode);
    while (!rc && (got = fe_lines_next(&in, st)) > 0) {
        char *s = in.buf, *dot = strchr(s, '.');
        long node, dir;
        if (!s[strspn(s, " \t")]) continue;
        if (dot) *dot = 0;
        if (!dot || !fe_parse_long(s, &node) || !fe_parse_long(dot + 1, &dir)) {
            rc = mbl_error(st, MBL_EPARSE, "%s:%ld: 'node.direction' expected", in.path, in.line);
            break;
        }
        int k = node >= 1 && node <= INT_MAX ? fe_part_node(p, (int)node) : -1;
        if (dir < 1 || dir > 6)
            rc = mbl_error(st, MBL_EPARSE, "%s:%ld: direction %ld outside 1..6 (a temperature or other degree of "
                           "freedom that is not a displacement or rotation)", in.path, in.line, dir);
        else if (k < 0)
            rc = mbl_error(st, MBL_EMODEL, "%s:%ld: node %ld is not in the input deck's *NODE (nodes ccx makes "
                           "itself, as for shells and beams, are not supported)", in.path, in.line, node);
        else if (dirs[k] & 1u << dir)
            rc = mbl_error(st, MBL_EPARSE, "%s:%ld: the row %ld.%ld a second time", in.path, in.line, node, dir);
        else if (p->ndof == FE_MAX_DOF)
            rc = mbl_error(st, MBL_EDIM, "%s:%ld: more than FE_MAX_DOF = %d rows", in.path, in.line, FE_MAX_DOF);
        if (rc) break;
        dirs[k] |= (unsigned char)(1u << dir);
        if (p->ndof == room) {
            room = room ? 2 * room : 1024;
            int *n2 = mbl_realloc_array(p->dof_node, (size_t)room, sizeof *n2);
            if (n2) p->dof_node = n2;
            signed char *d2 = mbl_realloc_array(p->dof_dir, (size_t)room, sizeof *d2);
            if (d2) p->dof_dir = d2;
            if (!n2 || !d2) rc = mbl_error(st, MBL_ENOMEM, "out of memory for %d rows", room);
        }
        if (!rc) p->dof_node[p->ndof] = k, p->dof_dir[p->ndof++] = (signed char)(dir - 1);
    }
    if (!rc && got < 0) rc = got;
    if (!rc && !p->ndof) rc = mbl_error(st, MBL_EMODEL, "%s: no rows", path);
    mbl_free(dirs);
    fe_lines_close(&in);
    return rc;
}

/* job.sti or job.mas: `row column value` a line, one triangle, rows of the .dof */
static int read_matrix(const char *path, const char *what, int ndof, mbla_csc **A, mbl_status *st)
{
    fe_lines in;
    int rc = fe_lines_open(&in, path, what, st), got = 0;
    fe_trip t;
    /* the shortest line is "1 1 0\n": at most size / 6 + 1 entries, both triangles FE_MAX_NNZ */
    fe_trip_init(&t, rc || in.size / 6 + 1 > FE_MAX_NNZ ? FE_MAX_NNZ : in.size / 6 + 1);
    while (!rc && (got = fe_lines_next(&in, st)) > 0) {
        char *s = in.buf, *end;
        if (!s[strspn(s, " \t")]) continue;
        long r = strtol(s, &end, 10), c = end > s ? strtol(s = end, &end, 10) : 0;
        double x = 0;
        if (end == s || !fe_parse_double(end, &x))
            rc = mbl_error(st, MBL_EPARSE, "%s:%ld: 'row column value' expected, the value a finite number",
                           in.path, in.line);
        else if (r < 1 || r > ndof || c < 1 || c > ndof)
            rc = mbl_error(st, MBL_EPARSE, "%s:%ld: row %ld, column %ld outside the .dof's %d rows", in.path,
                           in.line, r, c, ndof);
        else rc = fe_trip_add(&t, (int)r - 1, (int)c - 1, x, in.line, in.path, st);
    }
    if (!rc && got < 0) rc = got;
    fe_lines_close(&in);
    if (!rc) rc = fe_trip_csc(&t, ndof, 0, path, A, st);
    fe_trip_free(&t);
    return rc;
}

int fe_read_calculix(const char *job, fe_part *p, mbl_status *st)
{
    if (!job || !p) return mbl_error(st, MBL_EARG, "fe_read_calculix: NULL argument");
    memset(p, 0, sizeof *p);
    char *inp = job_file(job, ".inp"), *dof = job_file(job, ".dof"), *sti = job_file(job, ".sti"),
         *mas = job_file(job, ".mas");
    int rc = inp && dof && sti && mas ? 0 : mbl_error(st, MBL_ENOMEM, "out of memory");
    if (!rc) rc = read_deck(inp, p, st);
    if (!rc) rc = read_dof(dof, p, st);
    if (!rc) rc = read_matrix(sti, "stiffness", p->ndof, &p->K, st);
    if (!rc) rc = read_matrix(mas, "mass", p->ndof, &p->M, st);
    if (!rc) p->file = sti, sti = NULL;
    mbl_free(inp), mbl_free(dof), mbl_free(sti), mbl_free(mas);
    if (rc) fe_part_free(p);
    return rc;
}
