/* Infix expression parser: an explicit-stack recursive-descent machine (no C recursion), so
 * nesting depth is limited only by the max_depth option. */
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/name_word.h"
#include "core/numfmt.h"
#include "expr/expr_internal.h"
#include "expr/number_node.h"
#include "expr/parse_chars.h"
#include "expr/parse_memo.h"
#include "expr/parse_memo_table.h"

enum { INIT_CAP = 32, LOCAL_NUM = 64, WHY_MAX = 256 };

/* The built-in constant `pi`. */
static const double PARSE_PI = 3.14159265358979323846264338327950288;

/* ---- built-in functions ------------------------------------------------------------------- */

typedef struct builtin {
    const char *name;
    mblx_op op;
    int minargs, maxargs; /* maxargs < 0: unbounded */
} builtin;

/* (a builtin with a first letter not yet among them needs C_FIRST for it in cclass, expr/parse_chars.h) */
static const builtin builtins[] = {
    {"sin", MBLX_OP_SIN, 1, 1},     {"cos", MBLX_OP_COS, 1, 1},   {"tan", MBLX_OP_TAN, 1, 1},
    {"asin", MBLX_OP_ASIN, 1, 1},   {"acos", MBLX_OP_ACOS, 1, 1}, {"atan", MBLX_OP_ATAN, 1, 1},
    {"atan2", MBLX_OP_ATAN2, 2, 2}, {"sinh", MBLX_OP_SINH, 1, 1}, {"cosh", MBLX_OP_COSH, 1, 1},
    {"tanh", MBLX_OP_TANH, 1, 1},   {"exp", MBLX_OP_EXP, 1, 1},   {"log", MBLX_OP_LOG, 1, 1},
    {"sqrt", MBLX_OP_SQRT, 1, 1},   {"abs", MBLX_OP_ABS, 1, 1},   {"sign", MBLX_OP_SIGN, 1, 1},
    {"min", MBLX_OP_MIN, 2, -1},    {"max", MBLX_OP_MAX, 2, -1},  {"step", MBLX_OP_STEP, 5, 5},
};

/* the first character first: every call of a function the caller resolves (der, lambda) tests
 * them all (the N = 1000 four-bar's energies call der 10,000 times: its whole process took
 * 832.5 M instructions before, 827.4 M after) */
static const builtin *find_builtin(const char *s, size_t len)
{
    if (!len || !(cclass[(unsigned char)s[0]] & C_FIRST)) return NULL; /* der, lambda's l passes */
    for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
        if (builtins[i].name[0] == s[0] && strlen(builtins[i].name) == len && memcmp(builtins[i].name, s, len) == 0)
            return &builtins[i];
    return NULL;
}

/* ---- parser state ------------------------------------------------------------------------- */

enum { FR_EXPR, FR_PAREN, FR_CALL, FR_POW };

typedef struct frame {
    int kind;
    int neg;            /* PAREN/CALL/POW: negation to apply to the finished atom / power */
    int term_neg;       /* EXPR: sign of the current term */
    int div;            /* EXPR: the next factor divides */
    size_t pos;         /* offset of the opening token */
    size_t items_start; /* EXPR: first term; CALL: first argument */
    size_t fac_start;   /* EXPR: first factor of the current term */
    mblx_id base;       /* POW */
    size_t name_len;    /* CALL: name at text + pos */
    long dset;          /* CALL of spline, table or spline2: the data set (-1: another call) */
} frame;

/* The frames and items an expression takes before the parser allocates: all 127 of the nonlinear
 * bicycle's expressions fit, and all but two of the N = 1000 four-bar's 5,015 (its two long sums). */
enum { PARSE_LOCAL_FRAMES = 16, PARSE_LOCAL_ITEMS = 64 };

typedef struct parser {
    mblx_graph *g;
    const char *s;
    size_t len, i;
    const mblx_parse_opts *o;
    int line0, col0, max_depth, depth;
    frame *fr;
    size_t nfr, capfr;
    mblx_id *items;
    size_t nit, capit;
    frame *fr_local; /* the first blocks of fr and items, on mblx_parse's stack (most expressions fit) */
    mblx_id *items_local;
    mbl_status *st;
    int state;       /* S_*: what the parser expects next */
    mblx_id atom;    /* the atom just read (S_AFTER_ATOM), its pending negation and offset */
    int atom_neg;
    size_t atom_pos;
    double exp_val; /* the last integer exponent made at once and its constant (XNONE: none yet): the */
    mblx_id exp_id; /* same value gives the same node while the graph lives, as mblx_const would */
    mblx_id div_of, div_id; /* the last divisor and its mblx_powc(., -1) (XNONE: none yet): the same node
                             * while the graph lives ("m/6*(...)" in each of the kinetic energy's terms) */
    struct mblx__name_memo *memo; /* mblx__parse_memo: the graph's memo, this parse's generation, its */
    uint32_t memo_gen, memo_lasting; /* owner's lasting one (or memo_gen) and 64 - the memo's bits */
    unsigned memo_shift;
    struct name_memo_entry *memo_at; /* the entry for the name being resolved (NULL: none), its key */
    uint64_t memo_word;
    mblx_id memo_arg;
} parser;

static void location(const parser *p, size_t off, int *line, int *col)
{
    int l = p->line0, c = p->col0;
    for (size_t k = 0; k < off && k < p->len; k++) {
        if (p->s[k] == '\n') {
            l++;
            c = 1;
        } else {
            c++;
        }
    }
    *line = l;
    *col = c;
}

static int perr(parser *p, size_t off, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static int perr(parser *p, size_t off, const char *fmt, ...)
{
    char what[MBL_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    int line, col;
    location(p, off, &line, &col);
    if (p->o && p->o->error_offset) *p->o->error_offset = off;
    return mbl_error(p->st, MBL_EPARSE, "%d:%d: %s", line, col, what);
}

/* A builder returned MBLX_NONE: report the graph's error. */
static int pfail(parser *p, size_t off)
{
    mbl_status gs;
    if (mblx_graph_status(p->g, &gs) && gs.code == MBL_ENOMEM)
        return mbl_error(p->st, MBL_ENOMEM, "out of memory while parsing an expression");
    if (gs.code) {
        int line, col;
        location(p, off, &line, &col);
        if (p->o && p->o->error_offset) *p->o->error_offset = off;
        return mbl_error(p->st, gs.code, "%d:%d: %s", line, col, gs.msg);
    }
    return perr(p, off, "could not build the expression");
}

/* inline: called between every two tokens (299,151 calls for the N = 1000 four-bar) */
static inline void skip_ws(parser *p)
{
    size_t i = p->i;
    while (i < p->len && (cclass[(unsigned char)p->s[i]] & C_WS)) i++;
    p->i = i;
}

/* Describe the token at offset off for messages. */
static void token_desc(const parser *p, size_t off, char *buf, size_t size)
{
    if (off >= p->len) {
        snprintf(buf, size, "end of text");
        return;
    }
    unsigned char c = (unsigned char)p->s[off];
    if (is_alpha((char)c)) {
        size_t k = off;
        while (k < p->len && is_word(p->s[k])) k++;
        int n = (int)((k - off) > 64 ? 64 : (k - off));
        snprintf(buf, size, "'%.*s'", n, p->s + off);
    } else if (c >= 0x21 && c < 0x7f) {
        snprintf(buf, size, "'%c'", c);
    } else {
        snprintf(buf, size, "character 0x%02x", c);
    }
}

/* A stack of the parser (*arr, n entries of sz bytes, capacity *cap, first in local on
 * mblx_parse's stack) doubled, on the heap from its first growth. */
static __attribute__((noinline)) int grow_stack(parser *p, void **arr, const void *local, size_t *cap, size_t n,
                                                size_t sz)
{
    size_t nc = *cap ? *cap * 2 : INIT_CAP;
    void *q = mbl_realloc_array(*arr == local ? NULL : *arr, nc, sz);
    if (!q) return mbl_error(p->st, MBL_ENOMEM, "out of memory while parsing an expression");
    if (*arr == local) memcpy(q, local, n * sz);
    *arr = q;
    *cap = nc;
    return 0;
}

/* inline, its growth apart: 660,036 calls for the N = 10^4 four-bar, 41 instructions each out of line */
static inline int push_frame(parser *p, int kind, size_t pos)
{
    int rc;
    if (p->nfr == p->capfr && (rc = grow_stack(p, (void **)&p->fr, p->fr_local, &p->capfr, p->nfr, sizeof *p->fr)))
        return rc;
    if (kind != FR_EXPR && ++p->depth > p->max_depth)
        return perr(p, pos, "nesting deeper than %d levels", p->max_depth);
    frame *f = &p->fr[p->nfr++];
    *f = (frame){.kind = kind, .pos = pos, .items_start = p->nit, .fac_start = p->nit, .base = XNONE, .dset = -1};
    return 0;
}

static void pop_frame(parser *p)
{
    if (p->fr[p->nfr - 1].kind != FR_EXPR) p->depth--;
    p->nfr--;
}

/* inline, its growth apart, as push_frame (700,038 calls at N = 10^4, 17 instructions each out of line) */
static inline int push_item(parser *p, mblx_id x)
{
    int rc;
    if (p->nit == p->capit &&
        (rc = grow_stack(p, (void **)&p->items, p->items_local, &p->capit, p->nit, sizeof *p->items)))
        return rc;
    p->items[p->nit++] = x;
    return 0;
}

/* ---- decimal literals, exactly (core_decimal_value): expr/number_node.c ---------------------- */

/* Scan a number at p->i; on success *out is the constant node. */
static int scan_number(parser *p, mblx_id *out)
{
    size_t st = p->i, k = p->i, nd = 0;
    while (k < p->len && is_digit(p->s[k])) k++, nd++;
    if (k < p->len && p->s[k] == '.') {
        k++;
        while (k < p->len && is_digit(p->s[k])) k++, nd++;
    }
    if (nd == 0) return perr(p, st, "malformed number");
    if (k < p->len && (p->s[k] == 'e' || p->s[k] == 'E')) {
        size_t e = k + 1;
        if (e < p->len && (p->s[e] == '+' || p->s[e] == '-')) e++;
        if (e >= p->len || !is_digit(p->s[e])) return perr(p, st, "malformed number");
        while (e < p->len && is_digit(p->s[e])) e++;
        k = e;
    }
    if (k < p->len && (is_alpha(p->s[k]) || p->s[k] == '.'))
        return perr(p, st, "malformed number");
    if (k - st == nd && nd <= 15) {
        /* a plain integer below 10^15 < 2^53: exact as a double, the value strtod gives (the
         * literals of a large generated model, "(xB7 - 7)^2", are mostly such) */
        double v = 0.0;
        for (size_t j = st; j < k; j++) v = 10.0 * v + (double)(p->s[j] - '0');
        p->i = k;
        *out = mblx_const(p->g, v);
        return *out == XNONE ? pfail(p, st) : 0;
    }
    {
        uint64_t d;
        int e;
        double v;
        if (!mblx__decimal_parts(p->s + st, k - st, &d, &e) && !core_decimal_value(d, e, &v)) {
            p->i = k;
            *out = mblx_const(p->g, v);
            return *out == XNONE ? pfail(p, st) : 0;
        }
    }
    /* copy (the text need not be NUL-terminated), with the locale's decimal point */
    const char *dp = localeconv()->decimal_point;
    size_t dl = (dp && *dp) ? strlen(dp) : 1, n = k - st;
    if (n > (SIZE_MAX - 1) / dl) return mbl_error(p->st, MBL_ENOMEM, "number too long");
    char local[LOCAL_NUM], *buf = local;
    if (n * dl + 1 > sizeof local && !(buf = mbl_malloc(n * dl + 1)))
        return mbl_error(p->st, MBL_ENOMEM, "out of memory while parsing an expression");
    size_t b = 0;
    for (size_t j = st; j < k; j++) {
        if (p->s[j] == '.' && dp && *dp) {
            memcpy(buf + b, dp, dl);
            b += dl;
        } else {
            buf[b++] = p->s[j];
        }
    }
    buf[b] = '\0';
    errno = 0;
    double v = strtod(buf, NULL);
    if (buf != local) mbl_free(buf);
    if (!isfinite(v)) return perr(p, st, "number out of range '%.*s'", (int)(n > 64 ? 64 : n), p->s + st);
    p->i = k;
    *out = mblx_const(p->g, v);
    if (*out == XNONE) return pfail(p, st);
    return 0;
}

/* The resolver refused the name at pos (rc, its reason in why) or gave no node of the graph: the message. */
static __attribute__((noinline)) int resolve_failed(parser *p, size_t pos, size_t nlen, int nargs, int rc, char *why,
                                                    size_t why_size)
{
    const char *name = p->s + pos;
    int shown = (int)(nlen > 64 ? 64 : nlen);
    if (rc != 0) {
        why[why_size - 1] = '\0';
        if (why[0]) return perr(p, pos, "%s", why);
        return perr(p, pos, nargs < 0 ? "unknown name '%.*s'" : "unknown function '%.*s'", shown, name);
    }
    if (p->g->err) return pfail(p, pos);
    return perr(p, pos, "'%.*s' resolved to no expression", shown, name);
}

/* The entry of the parse's memo for the name at pos (nlen characters) and arg (XNONE for a name),
 * in *word its bytes; NULL when the name is longer than a word (a name: memo_slot_long). */
static inline struct name_memo_entry *memo_slot(const parser *p, size_t pos, size_t nlen, mblx_id arg, uint64_t *word)
{
    if (nlen > 8) return NULL;
    *word = name_word(p->s + pos, nlen);
    uint64_t h = (*word ^ (uint64_t)nlen << 56) * 0x9e3779b97f4a7c15ull ^ ((uint64_t)arg + 1) * 0xc2b2ae3d27d4eb4full;
    return &p->memo->e[(h * 0xff51afd7ed558ccdull) >> p->memo_shift];
}

/* 1 when node is the symbol named as the name at pos (nlen characters) */
static int own_symbol(const parser *p, size_t pos, size_t nlen, mblx_id node)
{
    if (p->g->nd[node].op != MBLX_OP_SYMBOL) return 0;
    const char *nm = p->g->names + p->g->sym_name[(size_t)p->g->nd[node].val]; /* (mblx_symbol_name) */
    for (size_t k = 0; k < nlen; k++)
        if (nm[k] != p->s[pos + k]) return 0; /* (a name has no NUL: stops at nm's end) */
    return nm[nlen] == '\0';
}

/* own_symbol of a name longer than 8 characters (by strncmp: a byte loop cost 130 instructions a
 * name of 13) */
static int own_symbol_long(const parser *p, size_t pos, size_t nlen, mblx_id node)
{
    if (p->g->nd[node].op != MBLX_OP_SYMBOL) return 0;
    const char *nm = p->g->names + p->g->sym_name[(size_t)p->g->nd[node].val]; /* (mblx_symbol_name) */
    return !strncmp(nm, p->s + pos, nlen) && nm[nlen] == '\0'; /* (stops at nm's end) */
}

/* The entry of the memo for a name longer than 8 characters at pos (a mechanism's coordinates:
 * rear_frame_e0, 740 of the bicycle's 1,101 long names), in *word its first and last 8 bytes mixed
 * (its key, not the name): kept only for the symbol of that very name (resolve_asked) and taken only
 * when the node is that symbol (own_symbol_long, the name compared in full) */
static struct name_memo_entry *memo_slot_long(const parser *p, size_t pos, size_t nlen, uint64_t *word)
{
    *word = name_word(p->s + pos, 8) ^ name_word(p->s + pos + nlen - 8, 8) * 0xc2b2ae3d27d4eb4full;
    uint64_t h = (*word ^ (uint64_t)nlen << 56) * 0x9e3779b97f4a7c15ull ^ ((uint64_t)XNONE + 1) * 0xc2b2ae3d27d4eb4full;
    return &p->memo->e[(h * 0xff51afd7ed558ccdull) >> p->memo_shift];
}

/* The name at pos (nlen characters; nargs arguments, or -1 for a name) by the caller's resolver,
 * into the memo's entry p->memo_at when not NULL: a name the resolver answers with its own symbol
 * under the owner's lasting generation (mblx__parse_lasting), any other under the parse's. Its
 * messages apart (resolve_failed). */
static __attribute__((noinline)) int resolve_asked(parser *p, size_t pos, size_t nlen, int nargs, const mblx_id *args,
                                                   mblx_id *out)
{
    struct name_memo_entry *m = p->memo_at; /* (a parse the resolver starts has its own) */
    char why[WHY_MAX];
    why[0] = '\0';
    *out = XNONE;
    int rc = 1;
    if (p->o && p->o->resolve)
        rc = p->o->resolve(p->o->ud, p->g, p->s + pos, nlen, nargs, args, out, why, sizeof why);
    if (p->memo && p->memo != p->g->name_memo) p->memo = NULL, p->memo_at = m = NULL; /* freed by a nested parse */
    if (rc == 0 && mblx__valid(p->g, *out)) {
        if (!m) return 0;
        if (nlen > 8) { /* (a name, memo_slot_long's: kept only for its own symbol) */
            if (own_symbol_long(p, pos, nlen, *out))
                *m = (struct name_memo_entry){p->memo_word, p->memo_lasting, (uint32_t)nlen, XNONE, *out};
            return 0;
        }
        uint32_t gen = p->memo_lasting != p->memo_gen && nargs < 0 && own_symbol(p, pos, nlen, *out) ? p->memo_lasting
                                                                                                      : p->memo_gen;
        *m = (struct name_memo_entry){p->memo_word, gen, (uint32_t)nlen, p->memo_arg, *out};
        return 0;
    }
    return resolve_failed(p, pos, nlen, nargs, rc, why, sizeof why);
}

/* resolve of a name longer than 8 characters with the parse's memo: memo_slot_long's entry, else asked */
static __attribute__((noinline)) int resolve_long(parser *p, size_t pos, size_t nlen, mblx_id *out)
{
    uint64_t word;
    struct name_memo_entry *m = memo_slot_long(p, pos, nlen, &word);
    if ((m->gen == p->memo_gen || m->gen == p->memo_lasting) && m->word == word && m->len == nlen && m->arg == XNONE &&
        own_symbol_long(p, pos, nlen, m->node))
        return *out = m->node, 0;
    p->memo_at = m, p->memo_word = word, p->memo_arg = XNONE;
    return resolve_asked(p, pos, nlen, -1, NULL, out);
}

/* The name at pos (nlen characters; nargs arguments, or -1 for a name): by the memo when the parse
 * has one and resolved the name, or the call of one symbol, before (der(xB7) cost about 550
 * instructions through the resolver), else by the resolver (470,018 calls at N = 10^4 without the
 * memo). Inline: the memo's lookup without the frame of the resolver's call. */
static inline __attribute__((always_inline)) int resolve(parser *p, size_t pos, size_t nlen, int nargs, const mblx_id *args,
                                                        mblx_id *out)
{
    if (p->memo && nargs < 0 && nlen > 8) return resolve_long(p, pos, nlen, out);
    if (p->memo && (nargs < 0 || (nargs == 1 && p->g->nd[args[0]].op == MBLX_OP_SYMBOL))) {
        uint64_t word = 0;
        mblx_id arg = nargs < 0 ? XNONE : args[0];
        struct name_memo_entry *m = memo_slot(p, pos, nlen, arg, &word);
        if (m && (m->gen == p->memo_gen || m->gen == p->memo_lasting) && m->word == word && m->len == nlen &&
            m->arg == arg)
            return *out = m->node, 0;
        p->memo_at = m, p->memo_word = word, p->memo_arg = arg;
    } else if (p->memo) {
        p->memo_at = NULL;
    }
    return resolve_asked(p, pos, nlen, nargs, args, out);
}

/* mblx_pow(b, c) of an integer exponent's constant c (kind POW_KEY_LEN), or mblx_neg(b) (kind
 * NEG_KEY_LEN, c XNONE): by the parse's memo when it has one (an entry of length kind, which no
 * name's has: c as its word, b as its argument), else made. The node mblx_pow or mblx_neg gives
 * does not change while the graph lives and a second call makes none (nodes are never removed), so
 * the memo's is the same node: the kinetic energy writes each der(xB7)^2 three times (40,000 of its
 * 60,000 powers at N = 10^4), the constraints end in - l^2 (20,002), the potential energy's terms
 * have (s7 - L0) (10,000). */
enum { POW_KEY_LEN = 9, NEG_KEY_LEN = 10 };
static inline mblx_id built(parser *p, unsigned kind, mblx_id b, mblx_id c)
{
    if (!p->memo) return kind == POW_KEY_LEN ? mblx_pow(p->g, b, c) : mblx_neg(p->g, b);
    uint64_t h = ((uint64_t)c + 1) * 0x9e3779b97f4a7c15ull ^ ((uint64_t)b + 1) * 0xc2b2ae3d27d4eb4full;
    struct name_memo_entry *m = &p->memo->e[(h * 0xff51afd7ed558ccdull) >> p->memo_shift];
    if ((m->gen == p->memo_gen || m->gen == p->memo_lasting) && m->len == kind && m->word == c && m->arg == b)
        return m->node;
    mblx_id v = kind == POW_KEY_LEN ? mblx_pow(p->g, b, c) : mblx_neg(p->g, b);
    if (v != XNONE) *m = (struct name_memo_entry){c, p->memo_lasting, kind, b, v};
    return v;
}

/* The name of a function of data, or NULL. */
static const char *data_fn(const char *s, size_t len)
{
    static const char *const fns[3] = {"spline", "table", "spline2"};
    if (len < 5 || len > 7 || (s[0] != 's' && s[0] != 't')) return NULL; /* most names: at once */
    for (int i = 0; i < 3; i++)
        if (strlen(fns[i]) == len && !memcmp(fns[i], s, len)) return fns[i];
    return NULL;
}

/* The data set named at the start of the arguments of spline/table/spline2 (p->i after the
 * '(' and its blanks), and the ',' after it; f->dset receives it. */
static int data_set_arg(parser *p, frame *f, const char *fn)
{
    size_t k = p->i;
    while (k < p->len && (is_alpha(p->s[k]) || (k > p->i && is_digit(p->s[k])))) k++;
    if (k == p->i) return perr(p, p->i, "%s: expected the name of a data set as its first argument", fn);
    long d = mblx_data_find(p->g, p->s + p->i, k - p->i);
    if (d < 0) {
        size_t nd = mblx_data_count(p->g), used = 0;
        char known[160] = "";
        for (size_t j = 0; j < nd && used + 1 < sizeof known; j++) {
            int w = snprintf(known + used, sizeof known - used, "%s%s", j ? ", " : "", mblx_data_name(p->g, (long)j, NULL));
            used += w > 0 ? (size_t)w : 0;
        }
        return perr(p, p->i, "%s: unknown data set '%.*s' (%s%s)", fn, (int)(k - p->i > 64 ? 64 : k - p->i),
                    p->s + p->i, nd ? "the data sets are: " : "the model has no 'data' section", known);
    }
    int dim;
    mblx_data_name(p->g, d, &dim);
    if ((dim == 2) != (strcmp(fn, "spline2") == 0))
        return perr(p, p->i, "%s: data set '%.*s' is %d-D (use %s)", fn, (int)(k - p->i), p->s + p->i, dim,
                    dim == 2 ? "spline2(name, x, y)" : "spline(name, x) or table(name, x)");
    f->dset = d;
    p->i = k;
    skip_ws(p);
    if (p->i >= p->len || p->s[p->i] != ',')
        return perr(p, p->i, "%s: expected ',' and the argument after the data set's name", fn);
    p->i++;
    return 0;
}

/* The call of spline/table/spline2 at frame f: its arguments, then the orders of derivatives
 * (nonnegative integer constants). */
static int finish_data_call(parser *p, const frame *f, size_t na, const mblx_id *a, mblx_id *out)
{
    const char *fn = data_fn(p->s + f->pos, f->name_len);
    int two = strcmp(fn, "spline2") == 0;
    size_t nv = two ? 2 : 1;
    if (na != nv && na != 2 * nv)
        return perr(p, f->pos, "%s takes %s, got %zu argument%s after the name", fn,
                    two ? "(name, x, y) or (name, x, y, kx, ky)" : "(name, x) or (name, x, k)", na,
                    na == 1 ? "" : "s");
    int ord[2] = {0, 0};
    for (size_t i = nv; i < na; i++) {
        double v;
        if (!mblx_is_const(p->g, a[i], &v) || v < 0 || v != floor(v) || v > 1000)
            return perr(p, f->pos, "%s: the order of a derivative must be a whole number 0, 1, 2, ...", fn);
        ord[i - nv] = (int)v;
    }
    *out = mblx_data_call(p->g, f->dset, fn[0] == 't', ord[0], ord[1], a[0], two ? a[1] : XNONE);
    return *out == XNONE ? pfail(p, f->pos) : 0;
}

/* Build the call at frame f with arguments items[f->items_start ..]. */
static int finish_call(parser *p, const frame *f, mblx_id *out)
{
    const char *name = p->s + f->pos;
    size_t na = p->nit - f->items_start;
    const mblx_id *a = na ? p->items + f->items_start : NULL;
    if (f->dset >= 0) return finish_data_call(p, f, na, a, out);
    const builtin *b = find_builtin(name, f->name_len);
    if (!b) return resolve(p, f->pos, f->name_len, (int)na, a, out);
    if (na < (size_t)b->minargs || (b->maxargs >= 0 && na > (size_t)b->maxargs)) {
        if (b->minargs == b->maxargs)
            return perr(p, f->pos, "function '%s' takes %d argument%s, got %zu", b->name,
                        b->minargs, b->minargs == 1 ? "" : "s", na);
        return perr(p, f->pos, "function '%s' takes at least %d arguments, got %zu", b->name,
                    b->minargs, na);
    }
    mblx_id r;
    if (b->op == MBLX_OP_MIN || b->op == MBLX_OP_MAX) {
        r = a[0];
        for (size_t k = 1; k < na; k++) r = mblx_apply(p->g, b->op, 0.0, 2, (mblx_id[]){r, a[k]});
    } else {
        r = mblx_apply(p->g, b->op, 0.0, na, a);
    }
    if (r == XNONE) return pfail(p, f->pos);
    *out = r;
    return 0;
}

/* Close the current term of EXPR frame f: product of its factors (negated if needed). */
static int close_term_built(parser *p, frame *f)
{
    size_t nf = p->nit - f->fac_start;
    mblx_id t;
    if (nf > 1 && f->term_neg) { /* "- a*b": the negated product at once (its positive is not needed) */
        t = mblx__neg_product(p->g, nf, p->items + f->fac_start);
    } else {
        t = nf == 1 ? p->items[f->fac_start] : mblx_product(p->g, nf, p->items + f->fac_start);
        if (t != XNONE && f->term_neg) t = built(p, NEG_KEY_LEN, t, XNONE);
    }
    if (t == XNONE) return pfail(p, f->pos);
    p->nit = f->fac_start;
    p->items[p->nit++] = t; /* fits: nf >= 1 */
    f->fac_start = p->nit;
    f->term_neg = 0;
    f->div = 0;
    return 0;
}

/* close_term, a term of one factor as written (most: 360,022 of 540,030 at N = 10^4) inline: it is
 * its factor, already in place */
static inline int close_term(parser *p, frame *f)
{
    if (p->nit - f->fac_start != 1 || f->term_neg) return close_term_built(p, f);
    f->fac_start = p->nit;
    f->div = 0;
    return 0;
}

enum { S_OPERAND, S_AFTER_ATOM, S_OPERATOR, S_DONE };

/* The call at pos (nlen characters, p->i at its '(') when its argument is one name (not pi) between
 * blanks and ')' and the call's frame would not be too deep, not of a data function: the name's
 * offset and length in *apos, *alen, the offset after the ')', else 0 (the general path). */
static size_t one_name_arg(const parser *p, size_t pos, size_t nlen, size_t *apos, size_t *alen)
{
    if (p->depth >= p->max_depth || data_fn(p->s + pos, nlen)) return 0;
    size_t k = p->i + 1;
    while (k < p->len && (cclass[(unsigned char)p->s[k]] & C_WS)) k++;
    if (k >= p->len || !is_alpha(p->s[k])) return 0;
    size_t st = k;
    while (k < p->len && is_word(p->s[k])) k++;
    size_t e = k;
    while (k < p->len && (cclass[(unsigned char)p->s[k]] & C_WS)) k++;
    if (k >= p->len || p->s[k] != ')' || (e - st == 2 && !memcmp(p->s + st, "pi", 2))) return 0;
    *apos = st;
    *alen = e - st;
    return k + 1;
}

/* The call at pos of one name (one_name_arg) finished at once, without its two frames: the name
 * resolved, then the call, as the general path resolves and builds them (the four-bar's der(xB7):
 * 100,002 calls at N = 10^4). */
static int call_of_name(parser *p, size_t pos, size_t nlen, int neg, size_t apos, size_t alen, size_t end)
{
    int rc;
    mblx_id a;
    if ((rc = resolve(p, apos, alen, -1, NULL, &a))) return rc;
    frame fc = {.kind = FR_CALL, .neg = neg, .pos = pos, .items_start = p->nit, .fac_start = p->nit, .base = XNONE,
                .name_len = nlen, .dset = -1};
    if ((rc = push_item(p, a))) return rc;
    if ((rc = finish_call(p, &fc, &p->atom))) return rc;
    p->nit = fc.items_start;
    p->i = end;
    p->atom_neg = neg;
    p->atom_pos = pos;
    p->state = S_AFTER_ATOM;
    skip_ws(p);
    return 0;
}

/* A name at pos (nlen characters, p->i after it and the blanks that follow): a call opens its
 * frame (or is finished at once when it has no argument or one name), pi and resolved names are
 * atoms. */
static int parse_name(parser *p, size_t pos, size_t nlen, int neg)
{
    int rc;
    if (p->i < p->len && p->s[p->i] == '(') {
        size_t apos, alen, end = one_name_arg(p, pos, nlen, &apos, &alen);
        if (end) return call_of_name(p, pos, nlen, neg, apos, alen, end);
        if ((rc = push_frame(p, FR_CALL, pos))) return rc;
        frame *f = &p->fr[p->nfr - 1];
        f->neg = neg;
        f->name_len = nlen;
        f->dset = -1;
        p->i++;
        skip_ws(p);
        const char *fn = data_fn(p->s + pos, nlen);
        if (fn && (rc = data_set_arg(p, f, fn))) return rc;
        if (p->i < p->len && p->s[p->i] == ')') {
            p->i++;
            frame fc = *f;
            if ((rc = finish_call(p, &fc, &p->atom))) return rc;
            pop_frame(p);
            p->atom_neg = fc.neg;
            p->atom_pos = pos;
            p->state = S_AFTER_ATOM;
            skip_ws(p);
            return 0;
        }
        return push_frame(p, FR_EXPR, p->i);
    }
    if (nlen == 2 && memcmp(p->s + pos, "pi", 2) == 0) {
        p->atom = mblx_const(p->g, PARSE_PI);
        if (p->atom == XNONE) return pfail(p, pos);
    } else if ((rc = resolve(p, pos, nlen, -1, NULL, &p->atom))) {
        return rc;
    }
    p->atom_neg = neg;
    p->atom_pos = pos;
    p->state = S_AFTER_ATOM; /* (p->i past the blanks after the name) */
    return 0;
}

/* S_OPERAND: signs, then a number, a name, a call or an opening parenthesis. */
static int parse_operand(parser *p)
{
    int rc;
    skip_ws(p);
    int neg = 0;
    while (p->i < p->len && (p->s[p->i] == '-' || p->s[p->i] == '+')) {
        if (p->s[p->i] == '-') neg ^= 1;
        p->i++;
        skip_ws(p);
    }
    size_t pos = p->i;
    if (pos >= p->len) {
        int only_ws = p->nfr == 1 && p->nit == 0 && !neg;
        if (only_ws) {
            size_t k = 0;
            while (k < p->len && (p->s[k] == ' ' || p->s[k] == '\t' || p->s[k] == '\r' ||
                                  p->s[k] == '\n'))
                k++;
            only_ws = k == p->len;
        }
        return only_ws ? perr(p, pos, "empty expression")
                       : perr(p, pos, "expected an operand, found end of text");
    }
    char c = p->s[pos];
    if (is_digit(c) || (c == '.' && pos + 1 < p->len && is_digit(p->s[pos + 1]))) {
        if ((rc = scan_number(p, &p->atom))) return rc;
        p->atom_neg = neg;
        p->atom_pos = pos;
        p->state = S_AFTER_ATOM;
        skip_ws(p);
        return 0;
    }
    if (is_alpha(c)) {
        size_t k = pos + 1;
        while (k < p->len && is_word(p->s[k])) k++;
        size_t nlen = k - pos;
        p->i = k;
        skip_ws(p);
        return parse_name(p, pos, nlen, neg);
    }
    if (c == '(') {
        if ((rc = push_frame(p, FR_PAREN, pos))) return rc;
        p->fr[p->nfr - 1].neg = neg;
        p->i++;
        return push_frame(p, FR_EXPR, p->i);
    }
    char d[80];
    token_desc(p, pos, d, sizeof d);
    if (c == ')' || c == ',' || c == '*' || c == '/' || c == '^' || c == '.')
        return perr(p, pos, "expected an operand, found %s", d);
    return perr(p, pos, "unexpected %s", d);
}

/* The exponent after the '^' at p->i when it is a plain integer below 10^15 (the value scan_number
 * gives) that no '^' follows and whose power frame would not be too deep: its value in *v, its
 * offset in *num, and the offset after it and its blanks, else 0 (the general path: a power frame, the operand, ...). The
 * four-bar's "(xB7 - xB6)^2": 150,005 powers at N = 10^4. */
static size_t int_exponent(const parser *p, double *v, size_t *num)
{
    size_t k = p->i + 1;
    while (k < p->len && (cclass[(unsigned char)p->s[k]] & C_WS)) k++;
    size_t st = k;
    while (k < p->len && is_digit(p->s[k])) k++;
    if (k == st || k - st > 15 || p->depth >= p->max_depth) return 0;
    if (k < p->len && (is_alpha(p->s[k]) || p->s[k] == '.')) return 0; /* a decimal, or an error */
    double x = 0.0;
    for (size_t j = st; j < k; j++) x = 10.0 * x + (double)(p->s[j] - '0');
    while (k < p->len && (cclass[(unsigned char)p->s[k]] & C_WS)) k++;
    if (k < p->len && p->s[k] == '^') return 0; /* x^2^3 = x^(2^3) */
    *v = x;
    *num = st;
    return k;
}

/* S_AFTER_ATOM: a '^' opens a power (one of an integer is made at once); otherwise the atom is
 * delivered as a factor. p->i is past the blanks after the atom: each way into S_AFTER_ATOM skips
 * them (a name's before its resolution), and each way out of it stops past them, so S_OPERATOR
 * skips none either (two calls of skip_ws an atom that found none: 1.2 M at N = 10^4). */
static int parse_after_atom(parser *p)
{
    mblx_graph *g = p->g;
    mblx_id v;
    if (p->i < p->len && p->s[p->i] == '^') {
        double x;
        size_t num, end = int_exponent(p, &x, &num);
        if (!end) {
            int rc = push_frame(p, FR_POW, p->i);
            if (rc) return rc;
            frame *f = &p->fr[p->nfr - 1];
            f->base = p->atom;
            f->neg = p->atom_neg;
            p->i++;
            p->state = S_OPERAND;
            return 0;
        }
        /* what the power's frame would give: the constant, the power, its negation */
        size_t at = p->i;
        mblx_id c = p->exp_id != XNONE && p->exp_val == x ? p->exp_id : mblx_const(g, x);
        if (c == XNONE) return pfail(p, num);
        p->exp_val = x, p->exp_id = c;
        v = built(p, POW_KEY_LEN, p->atom, c);
        if (v != XNONE && p->atom_neg) v = mblx_neg(g, v);
        if (v == XNONE) return pfail(p, at);
        p->i = end;
        p->atom_pos = num; /* (the last atom read: the exponent) */
    } else {
        v = p->atom_neg ? mblx_neg(g, p->atom) : p->atom;
        if (v == XNONE) return pfail(p, p->atom_pos);
    }
    /* deliver v: finish pending powers, then add it as a factor */
    while (p->fr[p->nfr - 1].kind == FR_POW) {
        frame *f = &p->fr[p->nfr - 1];
        mblx_id r = mblx_pow(g, f->base, v);
        if (r != XNONE && f->neg) r = mblx_neg(g, r);
        if (r == XNONE) return pfail(p, f->pos);
        v = r;
        pop_frame(p);
    }
    frame *f = &p->fr[p->nfr - 1]; /* an EXPR */
    if (f->div) {
        mblx_id d = v;
        v = p->div_of == d ? p->div_id : mblx_powc(g, d, -1.0);
        if (v == XNONE) return pfail(p, p->atom_pos);
        p->div_of = d, p->div_id = v;
    }
    int rc = push_item(p, v);
    if (rc) return rc;
    p->state = S_OPERATOR;
    return 0;
}

/* The sum v just closed ends the group of the frame below it (c: the character at p->i, '\0'
 * at the end): a parenthesis, or an argument of a call. */
static int close_group(parser *p, mblx_id v, char c)
{
    int rc;
    frame *b = &p->fr[p->nfr - 1];
    if (b->kind == FR_PAREN) {
        if (c != ')') {
            int l, cc;
            location(p, b->pos, &l, &cc);
            if (p->i >= p->len) return perr(p, p->i, "missing ')' for the '(' at %d:%d", l, cc);
            return perr(p, p->i, "expected ')' for the '(' at %d:%d, found ','", l, cc);
        }
        p->i++;
        p->atom = v;
        p->atom_neg = b->neg;
        p->atom_pos = b->pos;
        pop_frame(p);
        p->state = S_AFTER_ATOM;
        skip_ws(p);
        return 0;
    }
    /* FR_CALL */
    if ((rc = push_item(p, v))) return rc;
    if (c == ',' && p->i < p->len) {
        p->i++;
        if ((rc = push_frame(p, FR_EXPR, p->i))) return rc;
        p->state = S_OPERAND;
        return 0;
    }
    if (c == ')' && p->i < p->len) {
        p->i++;
        frame fc = *b;
        if ((rc = finish_call(p, &fc, &p->atom))) return rc;
        p->nit = fc.items_start;
        pop_frame(p);
        p->atom_neg = fc.neg;
        p->atom_pos = fc.pos;
        p->state = S_AFTER_ATOM;
        skip_ws(p);
        return 0;
    }
    int l, cc;
    location(p, b->pos, &l, &cc);
    return perr(p, p->i, "missing ')' for the call of '%.*s' at %d:%d",
                (int)(b->name_len > 64 ? 64 : b->name_len), p->s + b->pos, l, cc);
}

/* S_OPERATOR: '*' and '/' continue the term, '+' and '-' the sum; anything else ends the sum
 * (the whole expression into *out at the outermost level). */
static int parse_operator(parser *p, mblx_id *out)
{
    int rc;
    frame *f = &p->fr[p->nfr - 1]; /* an EXPR */
    char c = p->i < p->len ? p->s[p->i] : '\0';
    if (p->i < p->len && (c == '*' || c == '/')) {
        f->div = c == '/';
        p->i++;
        p->state = S_OPERAND;
        return 0;
    }
    if (p->i < p->len && (c == '+' || c == '-')) {
        if ((rc = close_term(p, f))) return rc;
        f->term_neg = c == '-';
        p->i++;
        p->state = S_OPERAND;
        return 0;
    }
    if (p->i < p->len && c != ')' && c != ',') {
        char d[80];
        token_desc(p, p->i, d, sizeof d);
        if (is_alpha(c) || is_digit(c) || c == '(' || c == '.')
            return perr(p, p->i, "expected an operator, found %s", d);
        return perr(p, p->i, "unexpected %s", d);
    }
    /* end of a sum: close it */
    if ((rc = close_term(p, f))) return rc;
    size_t nt = p->nit - f->items_start;
    mblx_id v = nt == 1 ? p->items[f->items_start] : mblx_sum(p->g, nt, p->items + f->items_start);
    if (v == XNONE) return pfail(p, f->pos);
    p->nit = f->items_start;
    pop_frame(p);
    if (p->nfr == 0) {
        if (p->i < p->len) return perr(p, p->i, "unexpected '%c'", c);
        *out = v;
        p->state = S_DONE;
        return 0;
    }
    return close_group(p, v, c);
}

/* mblx_parse (memo: with the memo of names, mblx__parse_memo; owner not NULL: the names it keeps for
 * the owner's other parses, mblx__parse_lasting) */
static int parse_text(mblx_graph *g, const char *text, size_t len, const mblx_parse_opts *opts, int memo,
                      const void *owner, mblx_id *out, mbl_status *st)
{
    if (out) *out = XNONE;
    if (!g || !out || (!text && len)) return mbl_error(st, MBL_EARG, "mblx_parse: NULL argument");
    parser P = {0};
    parser *p = &P;
    frame fr_local[PARSE_LOCAL_FRAMES];
    mblx_id items_local[PARSE_LOCAL_ITEMS];
    p->fr = p->fr_local = fr_local;
    p->capfr = PARSE_LOCAL_FRAMES;
    p->items = p->items_local = items_local;
    p->capit = PARSE_LOCAL_ITEMS;
    p->g = g;
    p->s = text;
    p->len = len;
    p->o = opts;
    p->line0 = (opts && opts->line > 0) ? opts->line : 1;
    p->col0 = (opts && opts->col > 0) ? opts->col : 1;
    p->max_depth = (opts && opts->max_depth > 0) ? opts->max_depth : MBLX_PARSE_DEFAULT_MAX_DEPTH;
    p->st = st;
    p->state = S_OPERAND;
    p->atom = XNONE;
    p->atom_neg = 0;
    p->atom_pos = 0;
    p->exp_id = XNONE;
    p->div_of = XNONE;
    if (memo && (p->memo = mblx__name_memo_for(g, len, owner, &p->memo_gen, &p->memo_lasting))) /* (none: without) */
        p->memo_shift = 64 - p->memo->bits;
    int rc = push_frame(p, FR_EXPR, 0);
    while (!rc && p->state != S_DONE) {
        if (p->state == S_OPERAND)
            rc = parse_operand(p);
        else if (p->state == S_AFTER_ATOM)
            rc = parse_after_atom(p);
        else
            rc = parse_operator(p, out);
    }
    if (p->fr != fr_local) mbl_free(p->fr);
    if (p->items != items_local) mbl_free(p->items);
    if (rc == 0) mbl_status_clear(st);
    return rc;
}

int mblx_parse(mblx_graph *g, const char *text, size_t len, const mblx_parse_opts *opts, mblx_id *out, mbl_status *st)
{
    return parse_text(g, text, len, opts, 0, NULL, out, st);
}

int mblx__parse_memo(mblx_graph *g, const char *text, size_t len, const mblx_parse_opts *opts, mblx_id *out,
                     mbl_status *st)
{
    return parse_text(g, text, len, opts, 1, NULL, out, st);
}

/* A text shorter than LASTING_MAKE_MIN uses the graph's memo when there is one, without making it:
 * the model's first texts (the N = 10^4 four-bar's 10,000 variables) made one of 2^12 entries on
 * the heap, and the model's later blocks, 98 KB further up, reached into one more huge page (peak
 * RSS 2 MB more) */
enum { LASTING_MAKE_MIN = 128 };
int mblx__parse_lasting(mblx_graph *g, const char *text, size_t len, const mblx_parse_opts *opts, const void *owner,
                        mblx_id *out, mbl_status *st)
{
    return parse_text(g, text, len, opts, !g || g->name_memo || len >= LASTING_MAKE_MIN, owner, out, st);
}
