/* The mechanism compiler's shared helpers: the name hash, the arena strings (keep, fmt, num,
 * the growable sum), the YAML accessors and their errors, the generated source's lists (push),
 * numbers from parameter expressions with the file's values (eval_text, eval_vec, set_note), names
 * and identifiers. See mech_internal.h. */
#include "mech/mech_internal.h"
#include "model/rtree.h"
#include "model/text_blocks.h"
#include "core/numfmt.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t name_hash(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603u;
    for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211u;
    return (uint32_t)(h ^ (h >> 32));
}

int mech_ns_find(const nameset *t, const char *name, size_t len)
{
    if (!t->cap) return -1;
    uint32_t hn = name_hash(name, len);
    for (size_t h = hn & (t->cap - 1);; h = (h + 1) & (t->cap - 1)) {
        const nameset_slot *e = &t->slot[h];
        if (!e->key) return -1;
        if (e->hash == hn && !strncmp(e->key, name, len) && e->key[len] == '\0') return e->idx;
    }
}

/* the table rehashed into cap slots (a power of 2 above twice its names); -1 when out of memory */
static int ns_grow(nameset *t, size_t cap)
{
    nameset_slot *k = mbl_calloc(cap, sizeof *k);
    if (!k) return -1;
    for (size_t i = 0; i < t->cap; i++)
        if (t->slot[i].key) {
            size_t h = t->slot[i].hash & (cap - 1);
            while (k[h].key) h = (h + 1) & (cap - 1);
            k[h] = t->slot[i];
        }
    mbl_free(t->slot);
    t->slot = k;
    t->cap = cap;
    return 0;
}

int mech_ns_reserve(nameset *t, size_t n)
{
    size_t cap = t->cap ? t->cap : 64;
    while (2 * (t->n + n) > cap) cap *= 2;
    return cap > t->cap ? ns_grow(t, cap) : 0;
}

int mech_ns_add(nameset *t, const char *name, int idx)
{
    if (2 * (t->n + 1) > t->cap && ns_grow(t, t->cap ? 2 * t->cap : 64)) return -1;
    uint32_t hn = name_hash(name, strlen(name));
    size_t h = hn & (t->cap - 1);
    while (t->slot[h].key) h = (h + 1) & (t->cap - 1);
    t->slot[h] = (nameset_slot){.key = name, .idx = idx, .hash = hn};
    t->n++;
    return 0;
}

void mech_ns_free(nameset *t) { mbl_free(t->slot); }

/* ---- small utilities ------------------------------------------------------------------------ */

char *mech_keep(mech *M, char *s)
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

/* n bytes of t at buf + *o (of cap bytes; what does not fit is counted, not written) */
static void put_n(char *buf, size_t cap, size_t *o, const char *t, size_t n)
{
    if (*o + 1 < cap) memcpy(buf + *o, t, n < cap - 1 - *o ? n : cap - 1 - *o);
    *o += n;
}

/* A format of plain conversions only (%s, %d, %c, %%: no flags, width or precision), written into
 * buf (cap bytes, cut short and terminated when too small) as vsnprintf would: the text's length,
 * or -1 at another conversion (ap then partly read: the caller passes a copy). Nearly every text
 * of the compiler is made of names and indices ("_p_%s_%d", "cos(%s)"): vsnprintf took about 800
 * instructions for each (64 M of the N = 2000 four-bar mechanism's 2,027 M). */
static int fmt_plain(char *buf, size_t cap, const char *f, va_list ap)
{
    size_t o = 0, lim = cap ? cap - 1 : 0; /* bytes below lim are written, the rest counted */
    for (const char *c = f; *c; c++) {
        if (*c != '%') { /* the format's own characters (a few at a time: no call per piece) */
            if (o < lim) buf[o] = *c;
            o++;
            continue;
        }
        c++;
        if (*c == 's') {
            const char *t = va_arg(ap, const char *);
            put_n(buf, cap, &o, t, strlen(t));
        } else if (*c == 'c' || *c == '%') {
            char ch = *c == '%' ? '%' : (char)va_arg(ap, int);
            if (o < lim) buf[o] = ch;
            o++;
        } else if (*c == 'd') {
            int v = va_arg(ap, int);
            unsigned u = v < 0 ? 0u - (unsigned)v : (unsigned)v;
            char d[12];
            int k = (int)sizeof d;
            do d[--k] = (char)('0' + u % 10u); while ((u /= 10u));
            if (v < 0) d[--k] = '-';
            for (; k < (int)sizeof d; k++, o++)
                if (o < lim) buf[o] = d[k];
        } else {
            return -1;
        }
    }
    if (cap) buf[o < cap ? o : cap - 1] = '\0';
    return o > (size_t)INT_MAX ? -1 : (int)o;
}

/* snprintf, fast for plain formats (fmt_plain): the element descriptions ("marker '%s' of body
 * '%s'") written for the messages of every body, marker, joint and force (24 M instructions of
 * snprintf at N = 2000) */
int mech_snprintf(char *buf, size_t cap, const char *f, ...)
{
    va_list ap, aq;
    va_start(ap, f);
    va_copy(aq, ap);
    int n = fmt_plain(buf, cap, f, aq);
    va_end(aq);
    if (n < 0) n = vsnprintf(buf, cap, f, ap);
    va_end(ap);
    return n;
}

/* n bytes owned by the arena, from its current block of MECH_BLOCK bytes (a text of more than a
 * quarter block gets its own): the compiler's 80,000 texts of the N = 2000 four-bar were a
 * malloc, a slot in the arena and a free each; NULL on out of memory (the flag is then set) */
#define MECH_BLOCK ((size_t)64 << 10)
static char *arena_bytes(mech *M, size_t n)
{
    if (n <= M->block_left) {
        char *p = M->block;
        M->block += n;
        M->block_left -= n;
        return p;
    }
    char *b = mech_keep(M, mbl_malloc(n > MECH_BLOCK / 4 ? n : MECH_BLOCK));
    if (!b || n > MECH_BLOCK / 4) return b;
    M->block = b + n;
    M->block_left = MECH_BLOCK - n;
    return b;
}

/* printf into a string owned by the arena; "" on out of memory (the flag is then set) */
char *mech_fmt(mech *M, const char *f, ...)
{
    /* formatted once into a local buffer when it fits (nearly always): a second vsnprintf only
     * for long texts (formatting was 6 % of reading the N = 2000 four-bar) */
    char buf[512];
    va_list ap, aq;
    va_start(ap, f);
    va_copy(aq, ap);
    int n = fmt_plain(buf, sizeof buf, f, aq);
    va_end(aq);
    if (n < 0) n = vsnprintf(buf, sizeof buf, f, ap);
    va_end(ap);
    if (n < 0) {
        M->oom = 1;
        return (char *)"";
    }
    char *s = arena_bytes(M, (size_t)n + 1);
    if (!s) return (char *)"";
    if ((size_t)n < sizeof buf) {
        memcpy(s, buf, (size_t)n + 1);
    } else {
        va_start(ap, f);
        vsnprintf(s, (size_t)n + 1, f, ap);
        va_end(ap);
    }
    return s;
}

/* printf's "%.17g" of v (core_fmt_g: the same characters at about a fifth of vsnprintf's
 * instructions; printf beyond its range) */
char *mech_num(mech *M, double v)
{
    char buf[CORE_NUMFMT_MAX];
    int n = core_fmt_g(buf, v, 17);
    if (n < 0) return mech_fmt(M, "%.17g", v);
    char *s = arena_bytes(M, (size_t)n + 1);
    if (!s) return (char *)"";
    memcpy(s, buf, (size_t)n + 1);
    return s;
}


void mech_sb_add(mech *M, sbuf *b, const char *a, const char *t)
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

/* "r + a0*(x0) - a1*(x1) ..." (sign[i] '+' or '-') without the terms whose factor or offset is the
 * text "0": the expression engine folds them to nothing anyway, so the graph is the same, but a
 * planar four-bar's marker positions, energies and weights were half made of such terms, each
 * formatted, parsed and differentiated (the body's origin r alone when every term is zero) */
char *mech_affine(mech *M, const char *r, int nt, const char *const *a, const char *const *x, const char *sign)
{
    sbuf b = {0};
    mech_sb_add(M, &b, "", r);
    for (int i = 0; i < nt; i++) {
        if (!strcmp(a[i], "0") || !strcmp(x[i], "0")) continue;
        mech_sb_add(M, &b, sign[i] == '-' ? " - " : " + ", a[i]);
        mech_sb_add(M, &b, "*(", x[i]);
        mech_sb_add(M, &b, ")", "");
    }
    return mech_sb_done(M, &b);
}

/* the text of b, owned by the arena ("0" when empty) */
char *mech_sb_done(mech *M, sbuf *b)
{
    if (!b->s) return mech_fmt(M, "0");
    char *s = mech_keep(M, b->s);
    b->s = NULL;
    return s ? s : (char *)"";
}


int mech_oom(mech *M) { return mbl_error(M->st, MBL_ENOMEM, "out of memory reading %s", M->file); }

yaml_node_t *mech_get(mech *M, const yaml_node_t *map, const char *key)
{
    if (!map || map->type != YAML_MAPPING_NODE) return NULL;
    /* the first characters compared before the names (four to six keys of ten or more possible per
     * element of a large mechanism) */
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *k = mech_node(M->doc, p->key);
        if (mech_is_scalar(k) && *mech_sc(k) == *key && !strcmp(mech_sc(k), key))
            return mech_node(M->doc, p->value);
    }
    return NULL;
}

/* every key of map must be in the NULL-terminated list `ok` */
int mech_check_keys(mech *M, const yaml_node_t *map, const char *const *ok, const char *what)
{
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *k = mech_node(M->doc, p->key);
        if (!mech_is_scalar(k)) return what ? err_at(M, k, "%s: keys must be plain words", what) : -1;
        const char *s = mech_sc(k);
        int found = 0;
        for (const char *const *o = ok; *o && !found; o++) found = **o == *s && !strcmp(*o, s);
        if (!found) {
            if (!what) return -1;
            char list[400];
            size_t off = 0;
            list[0] = '\0';
            for (const char *const *o = ok; *o && off < sizeof list; o++)
                off += (size_t)snprintf(list + off, sizeof list - off, "%s%s", o == ok ? "" : ", ", *o);
            return err_at(M, k, "%s: unknown key '%s' (expected %s)", what, mech_sc(k), list);
        }
        for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < p; q++) {
            yaml_node_t *k2 = mech_node(M->doc, q->key);
            if (mech_is_scalar(k2) && *mech_sc(k2) == *s && !strcmp(mech_sc(k2), s))
                return what ? err_at(M, k, "%s: duplicate key '%s'", what, s) : -1;
        }
    }
    return 0;
}

int mech_want_map(mech *M, const yaml_node_t *n, const char *what)
{
    if (!n || n->type != YAML_MAPPING_NODE) return err_at(M, n, "%s must be a mapping", what);
    return 0;
}

/* a scalar expression text */
int mech_text_of(mech *M, const yaml_node_t *n, const char *what, const char **out)
{
    if (!mech_is_scalar(n) || n->data.scalar.length == 0)
        return what ? err_at(M, n, "%s must be an expression or a number", what) : -1;
    *out = mech_sc(n);
    return 0;
}

/* a list of exactly cnt expressions */
int mech_vec_of(mech *M, const yaml_node_t *n, int cnt, const char *what, const char **out)
{
    if (!n || n->type != YAML_SEQUENCE_NODE || n->data.sequence.items.top - n->data.sequence.items.start != cnt)
        return what ? err_at(M, n, "%s must be a list of %d expressions", what, cnt) : -1;
    for (int i = 0; i < cnt; i++) {
        int rc = mech_text_of(M, mech_node(M->doc, n->data.sequence.items.start[i]), what, &out[i]);
        if (rc) return rc;
    }
    return 0;
}

void mech_pos_of(const yaml_node_t *n, int *line, int *col)
{
    *line = (int)n->start_mark.line + 1;
    *col = (int)n->start_mark.column + 1;
    if (n->type == YAML_SCALAR_NODE && (n->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
                                        n->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE))
        (*col)++;
}

char *mech_dup_s(const char *s)
{
    size_t n = strlen(s);
    char *p = mbl_malloc(n + 1);
    if (p) memcpy(p, s, n + 1);
    return p;
}

/* variable i's place in the order of the variables: the next */
static int var_seq(mech *M, int i)
{
    if (i >= M->cvseq) {
        int cap = M->cvseq ? 2 * M->cvseq : 256;
        while (cap <= i) cap *= 2;
        int *q = mbl_realloc_array(M->vseq, (size_t)cap, sizeof *q);
        if (!q) return mech_oom(M);
        M->vseq = q;
        M->cvseq = cap;
    }
    M->vseq[i] = M->nseq++;
    return 0;
}

/* append an item to a list of the generated source */
/* a copy of s for an item of l: in the source's item blocks where l keeps its texts there, else
 * malloc'd (mech_dup_s); NULL when out of memory */
static char *item_text(mech *M, const mbl_src_list *l, const char *s)
{
    if (!l->blocks) return mech_dup_s(s);
    size_t n = strlen(s) + 1;
    char *p = model_block_bytes(&M->src->item_blocks, n);
    if (p) memcpy(p, s, n);
    return p;
}

int mech_push(mech *M, mbl_src_list *l, const char *key, const char *text, int line, int col)
{
    if (M->oom) return mech_oom(M);
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 16;
        mbl_src_item *it = mbl_realloc_array(l->items, (size_t)cap, sizeof *it);
        if (!it) return mech_oom(M);
        l->items = it;
        l->cap = cap;
    }
    mbl_src_item *it = &l->items[l->n];
    memset(it, 0, sizeof *it);
    l->n++;
    it->key = key ? item_text(M, l, key) : NULL;
    it->text = item_text(M, l, text);
    it->key_line = it->line = line;
    it->key_col = it->col = col;
    if ((key && !it->key) || !it->text) return mech_oom(M);
    return l == &M->src->variables ? var_seq(M, l->n - 1) : 0;
}

int mech_validity(mech *M, const char *what, const char *text, const char *limit, int line, int col)
{
    mbl_src_list *l = &M->src->validity;
    int rc = mech_push(M, l, what, text, line, col);
    if (rc) return rc;
    l->items[l->n - 1].key2 = mech_dup_s(limit);
    return l->items[l->n - 1].key2 ? 0 : mech_oom(M);
}

int mech_push_at(mech *M, mbl_src_list *l, const char *key, const char *text, const yaml_node_t *n)
{
    int line = 1, col = 1;
    if (n) mech_pos_of(n, &line, &col);
    return mech_push(M, l, key, text, line, col);
}

/* ---- numbers from parameter expressions (file values) ------------------------------------- */

int mech_resolve_param(void *ud, mblx_graph *g, const char *name, size_t len, int nargs, const mblx_id *args,
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
            if (M->track_numeric && M->src->param_numeric) M->src->param_numeric[i] = 1;
            if (M->src->param_evaluated) M->src->param_evaluated[i] = 1;
            return 0;
        }
    }
    return 1;
}

/* Start tracking which --set the next evaluated numbers depend on (set_note names it). */
void mech_set_track(mech *M) { M->used_set = -1; }

/* A text evaluated before with the same parameters at hand: its value, and the parse's effects on
 * used_set (the flags of param_numeric and param_evaluated it set then stay set). The bodies of a
 * large mechanism repeat their mass and inertia texts (4,001 "m*l^2/12" at the N = 2000 four-bar:
 * 9 M instructions of parsing and folding). 1: found, *v set. */
static int eval_memo_get(mech *M, const char *text, size_t len, double *v)
{
    int i = mech_ns_find(&M->hev, text, len);
    if (i < 0 || M->ev[i].np != M->np_eval || (M->track_numeric && !M->ev[i].track)) return 0;
    if (M->used_set < 0) M->used_set = M->ev[i].first;
    *v = M->ev[i].v;
    return 1;
}

static void eval_memo_put(mech *M, const char *text, double v, int first)
{
    int i = mech_ns_find(&M->hev, text, strlen(text));
    if (i < 0) {
        if (M->nev == M->cev) {
            int cap = M->cev ? 2 * M->cev : 16;
            struct mech_ev *e = mbl_realloc_array(M->ev, (size_t)cap, sizeof *e);
            if (!e) return; /* not kept: evaluated again next time */
            M->ev = e, M->cev = cap;
        }
        const char *key = mech_fmt(M, "%s", text); /* the text may be the caller's buffer */
        if (!key || mech_ns_add(&M->hev, key, M->nev)) return;
        i = M->nev++;
    }
    M->ev[i].v = v, M->ev[i].first = first, M->ev[i].np = M->np_eval, M->ev[i].track = M->track_numeric;
}

int mech_eval_text(mech *M, const char *text, const yaml_node_t *n, const char *what, double *v)
{
    size_t len = strlen(text);
    if (eval_memo_get(M, text, len, v)) return 0;
    mblx_parse_opts po;
    memset(&po, 0, sizeof po);
    po.resolve = mech_resolve_param;
    po.ud = M;
    if (n) mech_pos_of(n, &po.line, &po.col);
    mbl_status st;
    mblx_id e;
    /* the --set this parse meets first, alone (used_set from -1), then as the parse would have left it */
    int used = M->used_set;
    M->used_set = -1;
    int rc = mblx_parse(M->g, text, len, &po, &e, &st), first = M->used_set;
    M->used_set = used >= 0 ? used : first;
    if (rc == MBL_ENOMEM) return mech_oom(M);
    if (rc)
        return mbl_error(M->st, MBL_EMODEL, "%s:%s (in %s; only numbers and parameters can be used here)", M->file,
                         st.msg, what);
    double dummy = 0;
    /* parameters are numbers here, so the text is nearly always folded to one: no tape to compile
     * (a tape per mass, inertia and number was 1.4 % of the N = 1000 four-bar's run) */
    rc = mblx_is_const(M->g, e, v) ? 0 : mblx_eval(M->g, e, &dummy, v, &st);
    if (rc == MBL_ENOMEM) return mech_oom(M);
    if (rc) return err_at(M, n, "%s: %s%s", what, st.msg, mech_set_note(M));
    if (!isfinite(*v)) return err_at(M, n, "%s is not a finite number%s", what, mech_set_note(M));
    eval_memo_put(M, text, *v, first);
    return 0;
}

const char *mech_set_note(mech *M)
{
    if (M->used_set < 0) return "";
    double v = M->sets[M->used_set].value;
    const char *t = mech_fmt(M, "%.15g", v);
    if (strtod(t, NULL) != v) t = mech_fmt(M, "%.17g", v); /* the shortest that reads back */
    return mech_fmt(M, " (the value comes from --set %s=%s)", M->sets[M->used_set].name, t);
}

int mech_eval_vec(mech *M, const yaml_node_t *n, int cnt, const char *what, double *v)
{
    const char *t[9];
    int rc = mech_vec_of(M, n, cnt, what, t);
    for (int i = 0; i < cnt && !rc; i++)
        rc = mech_eval_text(M, t[i], mech_node(M->doc, n->data.sequence.items.start[i]), what, &v[i]);
    return rc;
}

/* ---- names ----------------------------------------------------------------------------------- */

int mech_valid_name(const char *s)
{
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z'))) return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return 0;
    return 1;
}

int mech_find_body(mech *M, const char *name) { return mech_ns_find(&M->hb, name, strlen(name)); }
int mech_find_marker(mech *M, const char *name, size_t len) { return mech_ns_find(&M->hm, name, len); }
int mech_find_joint(mech *M, const char *name, size_t len) { return mech_ns_find(&M->hj, name, len); }

int mech_new_marker(mech *M, const char *name, int bi, const yaml_node_t *key, marker **out)
{
    if (M->nm == M->cm) {
        int cap = M->cm ? 2 * M->cm : 32;
        marker *m = mbl_realloc_array(M->mk, (size_t)cap, sizeof *m);
        if (!m) return mech_oom(M);
        M->mk = m;
        M->cm = cap;
    }
    if (mech_ns_add(&M->hm, name, M->nm)) return mech_oom(M);
    marker *K = &M->mk[M->nm++];
    memset(K, 0, sizeof *K);
    K->oset = -1;
    K->name = name;
    K->body = bi;
    mech_pos_of(key, &K->line, &K->col);
    *out = K;
    return 0;
}

int mech_beam_node(mech *M, const yaml_node_t *val, const char *what, int ne, double L, int *node)
{
    yaml_node_t *nn = mech_get(M, val, "node"), *sn = mech_get(M, val, "s");
    if (!nn == !sn)
        return err_at(M, val, "%s: give its place on the beam by 'node' (1..%d) or by arc length 's'", what, ne + 1);
    double x;
    const char *t = NULL;
    int rc;
    if ((rc = mech_text_of(M, nn ? nn : sn, what, &t))) return rc;
    mech_set_track(M);
    if ((rc = mech_eval_text(M, t, nn ? nn : sn, what, &x))) return rc;
    if (nn) {
        if (!(x >= 1 && x <= ne + 1) || x != floor(x))
            return err_at(M, nn, "%s: node %g is not a node of the beam (1..%d)%s", what, x, ne + 1, mech_set_note(M));
        *node = (int)x - 1;
    } else {
        double r = x / L * ne;
        *node = (int)floor(r + 0.5);
        if (!(x >= 0 && x <= L * (1 + 1e-12)) || fabs(r - *node) > 1e-9 * ne)
            return err_at(M, sn, "%s: arc length %g is not at a node (the nodes are %g apart on a beam of length %g)%s",
                          what, x, L / ne, L, mech_set_note(M));
    }
    return 0;
}

int mech_add_var(mech *M, const char *name, const char *text, int line, int col)
{
    return mech_push(M, &M->src->variables, name, text, line, col);
}

/* a variable holding an element's expression (a force law): messages about its text name the
 * element ("force 'spring'"), not the variable's internal name */
int mech_add_var_of(mech *M, const char *name, const char *text, int line, int col, const char *element)
{
    int rc = mech_add_var(M, name, text, line, col);
    if (rc) return rc;
    mbl_src_item *it = &M->src->variables.items[M->src->variables.n - 1];
    if (!(it->key2 = mech_dup_s(element))) return mech_oom(M);
    return 0;
}

/* the names a spare variable may have: _x_..., _y_..., _z_..., _p_... (a marker's axes and
 * position), _phi_... (a planar marker's angle), _c_..., _s_... (a planar body's cosine and
 * sine: unused when its joints and forces are the numeric term's and nothing is drawn) and
 * _A_..., _w_... (a spatial body's rotation entries and angular velocity, mech_euler_texts: a
 * wheel's rotation is read in one column, by its axle, and a frame's angular velocity by nothing
 * but a measure; the bicycle's 21 unused ones were parsed, 0.2 M instructions) */
static int spare_form(const char *b, size_t n)
{
    if (n > 5 && !strncmp(b, "_phi_", 5)) return 1;
    return n >= 4 && b[0] == '_' && b[2] == '_' &&
           (b[1] == 'x' || b[1] == 'y' || b[1] == 'z' || b[1] == 'p' || b[1] == 'c' || b[1] == 's' ||
            b[1] == 'A' || b[1] == 'w');
}

int mech_add_spare_var(mech *M, const char *name, const char *text, int line, int col)
{
    int i = M->src->variables.n, rc = mech_add_var(M, name, text, line, col);
    if (rc) return rc;
    /* mech_drop_spare_vars looks up names of this form only: another stays an ordinary variable */
    if (!spare_form(name, strlen(name))) return 0;
    if (i >= M->cspare) {
        int cap = M->cspare ? 2 * M->cspare : 256;
        while (cap <= i) cap *= 2;
        unsigned char *sp = mbl_realloc(M->spare, (size_t)cap);
        if (!sp) return mech_oom(M);
        memset(sp + M->cspare, 0, (size_t)(cap - M->cspare));
        M->spare = sp;
        M->cspare = cap;
    }
    M->spare[i] = 1;
    return 0;
}

int mech_defer_rot(mech *M, const char *c, const char *s, const char *th, int line, int col)
{
    if (M->nrot == M->crot) {
        int cap = M->crot ? 2 * M->crot : 64;
        struct mech_rot *r = mbl_realloc_array(M->rot, (size_t)cap, sizeof *r);
        if (!r) return mech_oom(M);
        M->rot = r;
        M->crot = cap;
    }
    struct mech_rot *r = &M->rot[M->nrot++];
    r->name[0] = c, r->name[1] = s, r->th = th;
    r->line = line, r->col = col;
    r->seq = M->nseq, r->vpos = M->src->variables.n;
    M->nseq += 2;
    return 0;
}

char *mech_var_name_free(mech *M, char *nm, int *counter)
{
    const mbl_src_list *V = &M->src->variables;
    int k = 0;
    for (int i = 0; i <= V->n; i++) { /* the deferred ones where they would have been pushed */
        for (; k < M->nrot && M->rot[k].vpos == i; k++)
            for (int h = 0; h < 2; h++)
                if (!strcmp(M->rot[k].name[h], nm)) nm = mech_fmt(M, "%s_%d", nm, ++*counter);
        if (i < V->n && !strcmp(V->items[i].key, nm)) nm = mech_fmt(M, "%s_%d", nm, ++*counter);
    }
    return nm;
}

/* the characters' classes for mark_uses, by byte: 1 an identifier's first character (a letter,
 * '_'), 2 an identifier's later one (also a digit), 4 a number's (an identifier's or '.'); what
 * mech_is_id0 and mech_is_id say, in one load a character */
#define CLS2(v) v, v
#define CLS4(v) CLS2(v), CLS2(v)
#define CLS8(v) CLS4(v), CLS4(v)
#define CLS16(v) CLS8(v), CLS8(v)
#define CLS32(v) CLS16(v), CLS16(v)
static const unsigned char id_cls[256] = {
    CLS32(0), CLS8(0), CLS4(0), CLS2(0), 4, 0,      /* 0 .. 47: '.' (46) */
    CLS8(6), CLS2(6),                               /* '0' .. '9' */
    CLS4(0), CLS2(0), 0,                            /* 58 .. 64 */
    CLS16(7), CLS8(7), CLS2(7),                     /* 'A' .. 'Z' */
    CLS4(0), 7, 0,                                  /* 91 .. 94, '_', '`' */
    CLS16(7), CLS8(7), CLS2(7),                     /* 'a' .. 'z'; the rest 0 */
};

/* the identifier b[0 .. len - 1] of a text: marked (and put on the stack) when it names a spare
 * variable not marked yet; only spare names are in vi, all of spare_form's forms */
static void mark_name(const nameset *vi, const char *b, size_t len, unsigned char *used, int *stack, int *nstack)
{
    if (*b != '_' || !spare_form(b, len)) return;
    int i = mech_ns_find(vi, b, len);
    if (i >= 0 && !used[i]) {
        used[i] = 1;
        stack[(*nstack)++] = i;
    }
}

/* mark_uses' tokens, character by character (the identifiers as mech_is_id0 and mech_is_id find
 * them, a number's exponent letter no name) */
static void mark_uses_tokens(const nameset *vi, const char *text, unsigned char *used, int *stack, int *nstack)
{
    for (const unsigned char *c = (const unsigned char *)text; *c;) {
        unsigned k = id_cls[*c];
        if (!(k & 1)) {
            if (k == 6) /* a number: its digits, letters and points */
                do c++;
                while (id_cls[*c] & 4);
            else
                c++;
            continue;
        }
        const char *b = (const char *)c;
        do c++;
        while (id_cls[*c] & 2);
        mark_name(vi, b, (size_t)((const char *)c - b), used, stack, nstack);
    }
}

/* mark the variables (by the name index vi) that the identifiers of text name; newly marked ones
 * go on the stack. Spare names begin with '_': the text is searched for '_' (strchr), and one
 * begins a name where the character before it ends a token or is none (an operator, a space, a
 * parenthesis); after a letter, a digit or '_' it is inside an identifier or a number (both go on
 * through '_'; the search goes on after that token's letters, digits and '_'). After a '.' that
 * depends on the tokens before (a number's point or none): the text is read token by token
 * (mark_uses_tokens, the same names). The compiler's texts were read character by character (the
 * bicycle's 0.24 M instructions). */
static void mark_uses(const nameset *vi, const char *text, unsigned char *used, int *stack, int *nstack)
{
    if (!text) return;
    for (const char *c = strchr(text, '_'); c; c = strchr(c, '_')) {
        unsigned before = c > text ? id_cls[(unsigned char)c[-1]] : 0;
        if (before == 4) {
            mark_uses_tokens(vi, text, used, stack, nstack);
            return;
        }
        const char *b = c;
        do c++;
        while (id_cls[(unsigned char)*c] & 2);
        if (!before) mark_name(vi, b, (size_t)(c - b), used, stack, nstack);
    }
}

static void mark_list(const nameset *vi, const mbl_src_list *l, unsigned char *used, int *stack, int *nstack)
{
    for (int i = 0; i < l->n; i++) mark_uses(vi, l->items[i].text, used, stack, nstack);
}

static int by_seq(const void *a, const void *b)
{
    int x = ((const int *)a)[0], y = ((const int *)b)[0];
    return (x > y) - (x < y);
}

/* the variables in the order of their places (M->vseq): the marker positions made on their first
 * use (mech_mk_p) where they would have been made with their markers */
static int vars_in_order(mech *M)
{
    mbl_src_list *V = &M->src->variables;
    int n = V->n;
    int *key = mbl_alloc_array(2 * (size_t)n + 1, sizeof *key);
    mbl_src_item *it = mbl_alloc_array((size_t)n + 1, sizeof *it);
    if (!key || !it) {
        mbl_free(key), mbl_free(it);
        return mech_oom(M);
    }
    for (int i = 0; i < n; i++) key[2 * i] = M->vseq[i], key[2 * i + 1] = i;
    qsort(key, (size_t)n, 2 * sizeof *key, by_seq); /* the places are distinct */
    memcpy(it, V->items, (size_t)n * sizeof *it);
    for (int i = 0; i < n; i++) V->items[i] = it[key[2 * i + 1]], M->vseq[i] = key[2 * i];
    mbl_free(key), mbl_free(it);
    M->nlate = 0;
    return 0;
}

int mech_drop_spare_vars(mech *M)
{
    mbl_src *s = M->src;
    mbl_src_list *V = &s->variables;
    if (M->oom) return mech_oom(M); /* a marker's position not made (mech_mk_p) */
    int nv = V->n < M->cspare ? V->n : M->cspare, nspare = 0, nv0 = V->n;
    for (int i = 0; i < nv; i++) nspare += M->spare[i];
    nspare += 2 * M->nrot; /* the deferred cosines and sines: indices nv0 + 2 k (+ 1) */
    if (!nspare) return 0;
    nameset vi;
    memset(&vi, 0, sizeof vi);
    size_t nall = (size_t)nv0 + 2 * (size_t)M->nrot;
    unsigned char *used = mbl_calloc(nall + 1, 1);
    int *stack = mbl_alloc_array(nall + 1, sizeof *stack), nstack = 0, rc = 0;
    /* sized once: no rehash while adding */
    if (!used || !stack || mech_ns_reserve(&vi, (size_t)nspare + 1)) rc = -1;
    for (int i = 0; i < nv && !rc; i++)
        if (M->spare[i]) rc = mech_ns_add(&vi, V->items[i].key, i);
    for (int k = 0; k < M->nrot && !rc; k++)
        for (int h = 0; h < 2 && !rc; h++) rc = mech_ns_add(&vi, M->rot[k].name[h], nv0 + 2 * k + h);
    if (rc) {
        mbl_free(used), mbl_free(stack), mech_ns_free(&vi);
        return mech_oom(M);
    }
    /* the roots: every variable that is not spare, and every other item of the source; the
     * name index holds the spare variables only (the others are used anyway) */
    for (int i = 0; i < V->n; i++)
        if (i >= nv || !M->spare[i]) {
            used[i] = 1;
            mark_uses(&vi, V->items[i].text, used, stack, &nstack);
        }
    const mbl_src_list *lists[] = {&s->coordinates, &s->velocities,  &s->forces,         &s->inputs,
                                   &s->outputs,     &s->constraints, &s->nonholonomic,   &s->mass_matrix,
                                   &s->states,      &s->velocity_states, &s->ode_states, &s->ode,
                                   &s->implicit_variables, &s->draw, &s->kinematics, &s->validity,
                                   &s->trim_targets, &s->trim_free, &s->trim_acc};
    for (size_t k = 0; k < sizeof lists / sizeof *lists; k++) mark_list(&vi, lists[k], used, stack, &nstack);
    for (int r = 0; r < s->nroutines; r++) mark_list(&vi, &s->routines[r].inputs, used, stack, &nstack);
    for (int k = 0; k < s->trim_targets.n; k++) /* a trim target's quantity is its key (trim.c) */
        mark_uses(&vi, s->trim_targets.items[k].key, used, stack, &nstack);
    for (int h = 0; h < 2; h++) { /* the held quantity is the key (model/held.c) */
        const mbl_src_list *hl = h ? &s->held_body_velocities : &s->held_velocities;
        mark_list(&vi, hl, used, stack, &nstack);
        for (int k = 0; k < hl->n; k++) mark_uses(&vi, hl->items[k].key, used, stack, &nstack);
    }
    const mbl_src_item *one[] = {&s->kinetic_energy, &s->potential_energy, &s->dissipation, &s->at, &s->time};
    for (size_t k = 0; k < sizeof one / sizeof *one; k++) mark_uses(&vi, one[k]->text, used, stack, &nstack);
    if (s->rtree) /* the texts of the tree's structured term (relative.c) */
        for (int b = 0; b < s->rtree->nb; b++)
            for (int t = 0; t < MBL_RTREE_NT; t++) mark_uses(&vi, s->rtree->b[b].t[t], used, stack, &nstack);
    for (int k = 0; s->rtree && k < 3; k++) mark_uses(&vi, s->rtree->g[k], used, stack, &nstack);
    while (nstack) { /* a deferred cosine's or sine's text names the body's angle only */
        int i = stack[--nstack];
        if (i < nv0) mark_uses(&vi, V->items[i].text, used, stack, &nstack);
    }
    int o = 0;
    for (int i = 0; i < V->n; i++) {
        if (used[i]) {
            M->vseq[o] = M->vseq[i];
            V->items[o++] = V->items[i];
            continue;
        }
        if (!V->blocks) mbl_free(V->items[i].key), mbl_free(V->items[i].text);
        mbl_free(V->items[i].key2);
    }
    V->n = o;
    if (M->cspare) memset(M->spare, 0, (size_t)M->cspare); /* indices changed: nothing is spare any more */
    /* the deferred cosines and sines used, in their places (vars_in_order) */
    for (int k = 0; k < M->nrot && !rc; k++)
        for (int h = 0; h < 2 && !rc; h++) {
            const struct mech_rot *r = &M->rot[k];
            if (!used[nv0 + 2 * k + h]) continue;
            rc = mech_add_var(M, r->name[h], mech_fmt(M, h ? "sin(%s)" : "cos(%s)", r->th), r->line, r->col);
            if (!rc) M->vseq[V->n - 1] = r->seq + h, M->nlate++;
        }
    M->nrot = 0;
    mbl_free(used), mbl_free(stack), mech_ns_free(&vi);
    if (rc) return rc;
    return M->nlate ? vars_in_order(M) : 0;
}

int mech_is_id0(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
int mech_is_id(char c) { return mech_is_id0(c) || (c >= '0' && c <= '9'); }

/* a key that appeared earlier in the same mapping */
int mech_dup_key(mech *M, nameset *seen, const yaml_node_t *map, const yaml_node_pair_t *p, const char *kind)
{
    /* the earlier keys are in `seen` (a scan of them was quadratic: 10^4 forces, 5e7 comparisons) */
    yaml_node_t *k = mech_node(M->doc, p->key);
    const char *name = mech_sc(k);
    int i = mech_ns_find(seen, name, strlen(name));
    if (i >= 0) {
        yaml_node_t *k2 = mech_node(M->doc, map->data.mapping.pairs.start[i].key);
        return err_at(M, k, "duplicate %s name '%s' (first at line %lu)", kind, name,
                      (unsigned long)k2->start_mark.line + 1);
    }
    return mech_ns_add(seen, name, (int)(p - map->data.mapping.pairs.start)) ? mech_oom(M) : 0;
}

int mech_euler_texts(mech *M, body *B, int constraint, int wvars)
{
    char **e = B->e;
    const char *name = B->name;
    int rc = 0;
    /* normalization constraint (source 004) */
    if (constraint)
        rc = mech_push(M, &M->src->constraints, mech_fmt(M, "body %s (Euler parameter normalization)", name),
                       mech_fmt(M, "%s^2 + %s^2 + %s^2 + %s^2 - 1", e[0], e[1], e[2], e[3]), B->line, B->col);
    const char *At[9] = {
        mech_fmt(M, "2*(%s^2 + %s^2) - 1", e[0], e[1]),     mech_fmt(M, "2*(%s*%s - %s*%s)", e[1], e[2], e[0], e[3]),
        mech_fmt(M, "2*(%s*%s + %s*%s)", e[1], e[3], e[0], e[2]), mech_fmt(M, "2*(%s*%s + %s*%s)", e[1], e[2], e[0], e[3]),
        mech_fmt(M, "2*(%s^2 + %s^2) - 1", e[0], e[2]),     mech_fmt(M, "2*(%s*%s - %s*%s)", e[2], e[3], e[0], e[1]),
        mech_fmt(M, "2*(%s*%s - %s*%s)", e[1], e[3], e[0], e[2]), mech_fmt(M, "2*(%s*%s + %s*%s)", e[2], e[3], e[0], e[1]),
        mech_fmt(M, "2*(%s^2 + %s^2) - 1", e[0], e[3])};
    for (int k = 0; k < 9 && !rc; k++) {
        B->A[k] = mech_fmt(M, "_A_%s_%d%d", name, k / 3 + 1, k % 3 + 1);
        rc = mech_add_spare_var(M, B->A[k], At[k], B->line, B->col); /* dropped when unused */
    }
    /* global angular velocity w = 2 E(e) der(e) */
    const char *d[4];
    for (int k = 0; k < 4; k++) d[k] = mech_fmt(M, "der(%s)", e[k]);
    const char *wt[3] = {
        mech_fmt(M, "2*(-%s*%s + %s*%s - %s*%s + %s*%s)", e[1], d[0], e[0], d[1], e[3], d[2], e[2], d[3]),
        mech_fmt(M, "2*(-%s*%s + %s*%s + %s*%s - %s*%s)", e[2], d[0], e[3], d[1], e[0], d[2], e[1], d[3]),
        mech_fmt(M, "2*(-%s*%s - %s*%s + %s*%s + %s*%s)", e[3], d[0], e[2], d[1], e[1], d[2], e[0], d[3])};
    for (int k = 0; k < 3 && !rc; k++) {
        B->w[k] = mech_fmt(M, "_w_%s_%d", name, k + 1);
        if (wvars) rc = mech_add_spare_var(M, B->w[k], wt[k], B->line, B->col); /* (as A's) */
    }
    return rc;
}
