/* Infix printing with minimal parentheses (iterative: an explicit stack of print tasks). */
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr/expr_internal.h"

/* Precision of the number formats tried, shortest first; 17 always round-trips. */
enum { NUM_PREC_MIN = 15, NUM_PREC_MAX = 17 };
/* Print tasks kept on the C stack before the heap is used. */
enum { LOCAL_TASKS = 64 };

/* Operator precedences of the printed forms (higher binds tighter). */
enum { P_NONE = 0, P_SUM = 1, P_PROD = 2, P_POW = 3, P_ATOM = 4 };

static void fix_decimal_point(char *s)
{
    const char *dp = localeconv()->decimal_point;
    if (!dp || (dp[0] == '.' && dp[1] == '\0')) return;
    size_t dl = strlen(dp);
    char *p = strstr(s, dp);
    if (!p) return;
    *p = '.';
    memmove(p + 1, p + dl, strlen(p + dl) + 1);
}

static double read_number(const char *s)
{
    const char *dp = localeconv()->decimal_point;
    if (!dp || (dp[0] == '.' && dp[1] == '\0')) return strtod(s, NULL);
    char buf[MBLX__NUM_BUF * 2];
    size_t dl = strlen(dp), k = 0;
    for (const char *p = s; *p && k + dl + 1 < sizeof buf; p++) {
        if (*p == '.') {
            memcpy(buf + k, dp, dl);
            k += dl;
        } else {
            buf[k++] = *p;
        }
    }
    buf[k] = '\0';
    return strtod(buf, NULL);
}

static long gcd_long(long a, long b)
{
    while (b) {
        long t = a % b;
        a = b, b = t;
    }
    return a;
}

/* v = p/q in lowest terms as the parser reads "p/q" (p times the reciprocal of q, in doubles)
 * with 1 < q <= MBLX_PRINT_DEN_MAX, the least such q: the text "p/q" in buf (its length), else 0 */
static size_t format_rational(double v, char *buf)
{
    if (!isfinite(v) || v == nearbyint(v)) return 0;
    for (long q = 2; q <= MBLX_PRINT_DEN_MAX; q++) {
        double p = nearbyint(v * (double)q);
        if (fabs(p) < 9007199254740992.0 && gcd_long(labs((long)p), q) == 1 && p * (1.0 / (double)q) == v)
            return (size_t)snprintf(buf, MBLX__NUM_BUF, "%.0f/%ld", p, q);
    }
    return 0;
}

/* the digits of a formatted number's mantissa, leading zeros not counted */
static int significant_digits(const char *s)
{
    int n = 0, lead = 1;
    for (; *s && *s != 'e' && *s != 'E'; s++) {
        if (*s < '0' || *s > '9') continue;
        if (lead && *s == '0') continue;
        lead = 0, n++;
    }
    return n;
}

size_t mblx__format_number(double v, char *buf)
{
    for (int prec = NUM_PREC_MIN; prec <= NUM_PREC_MAX; prec++) {
        snprintf(buf, MBLX__NUM_BUF, "%.*g", prec, v);
        fix_decimal_point(buf);
        if (prec == NUM_PREC_MAX || read_number(buf) == v) break;
    }
    return strlen(buf);
}

/* ---- output buffer ------------------------------------------------------------------------ */

typedef struct outbuf {
    char *buf;
    size_t size, len;
    char last; /* the last character emitted ('\0' before the first) */
} outbuf;

static void emit(outbuf *o, const char *s, size_t n)
{
    if (n) o->last = s[n - 1];
    if (o->len < o->size) {
        size_t room = o->size - 1 - o->len; /* keep one byte for the NUL */
        size_t k = n < room ? n : room;
        memcpy(o->buf + o->len, s, k);
    }
    o->len += n;
}

static void emits(outbuf *o, const char *s) { emit(o, s, strlen(s)); }

/* ---- tasks -------------------------------------------------------------------------------- */

enum { T_NODE, T_STR, T_NUM, T_DEN };

typedef struct task {
    unsigned char kind;
    unsigned char neg;  /* T_NODE: print the negated node (a negative sum term after " - ") */
    unsigned char prec; /* T_NODE/T_DEN: minimum precedence of the context */
    uint32_t node;
    union {
        const char *str;
        double num; /* T_NUM; T_DEN: the (positive) exponent of the denominator factor */
    } u;
} task;

typedef struct tstack {
    task local[LOCAL_TASKS];
    task *p;
    size_t n, cap;
    int failed;
} tstack;

static task *tpush(tstack *s)
{
    if (s->n == s->cap) {
        size_t nc = s->cap * 2;
        task *q = s->p == s->local ? mbl_alloc_array(nc, sizeof *q)
                                   : mbl_realloc_array(s->p, nc, sizeof *q);
        if (!q || nc < s->cap) {
            if (q && q != s->p) mbl_free(q);
            s->failed = 1;
            return NULL;
        }
        if (s->p == s->local) memcpy(q, s->local, sizeof s->local);
        s->p = q;
        s->cap = nc;
    }
    return &s->p[s->n++];
}

static void push_str(tstack *s, const char *str)
{
    task *t = tpush(s);
    if (t) t->kind = T_STR, t->u.str = str;
}

static void push_num(tstack *s, double v)
{
    task *t = tpush(s);
    if (t) t->kind = T_NUM, t->u.num = v;
}

static void push_node(tstack *s, uint32_t node, int prec, int neg)
{
    task *t = tpush(s);
    if (t) t->kind = T_NODE, t->node = node, t->prec = (unsigned char)prec, t->neg = (unsigned char)neg;
}

static void push_den(tstack *s, uint32_t base, double e)
{
    task *t = tpush(s);
    if (t) t->kind = T_DEN, t->node = base, t->u.num = e;
}

/* Is x (in view v) a power with a negative numeric exponent? Then *base, *e = base, -exponent. */
static int is_recip(const mblx__view *v, uint32_t x, uint32_t *base, double *e)
{
    if (v->nd[x].op != MBLX_OP_POW) return 0;
    const uint32_t *a = v->args + v->nd[x].aoff;
    if (v->nd[a[1]].op != MBLX_OP_CONST || !(v->nd[a[1]].val < 0.0)) return 0;
    /* a constant base (an unfoldable 0^-k) prints as a power: 1/0^k would fold 0^k */
    if (v->nd[a[0]].op == MBLX_OP_CONST) return 0;
    *base = a[0];
    *e = -v->nd[a[1]].val;
    return 1;
}

static int term_negative(const mblx__view *v, uint32_t t)
{
    return (v->nd[t].op == MBLX_OP_MUL || v->nd[t].op == MBLX_OP_CONST) && v->nd[t].val < 0.0;
}

/* Own precedence of node x printed with the given negation. */
static int node_prec(const mblx__view *v, uint32_t x, int neg)
{
    uint32_t b;
    double e;
    while (v->nd[x].op == MBLX_OP_LET) x = v->args[v->nd[x].aoff]; /* let(x) prints as x */
    switch (v->nd[x].op) {
    case MBLX_OP_CONST: return ((neg ? -v->nd[x].val : v->nd[x].val) < 0.0) ? P_PROD : P_ATOM;
    case MBLX_OP_SYMBOL: return neg ? P_PROD : P_ATOM;
    case MBLX_OP_ADD: return P_SUM;
    case MBLX_OP_MUL: return P_PROD;
    case MBLX_OP_POW: return (neg || is_recip(v, x, &b, &e)) ? P_PROD : P_POW;
    default: return neg ? P_PROD : P_ATOM;
    }
}

/* The tasks of a call's "(a[0], ..., a[na - 1])", in reverse order. */
static void push_args(tstack *s, const uint32_t *a, uint32_t na)
{
    push_str(s, ")");
    for (uint32_t i = na; i-- > 0;) {
        push_node(s, a[i], P_NONE, 0);
        if (i > 0) push_str(s, ", ");
    }
    push_str(s, "(");
}

/* A user node x (operands a): name[k](in...), name[k]'j(in...), name[k]'j'l(in...). */
static void push_user(const mblx__view *v, tstack *s, uint32_t x, const uint32_t *a, uint32_t na, int neg)
{
    long r;
    int k, j1, j2;
    mblx__user_decode(v->nd[x].val, &r, &k, &j1, &j2);
    push_args(s, a, na);
    for (int o = 1; o >= 0; o--) {
        int j = o ? j2 : j1;
        if (j < 0) continue;
        push_num(s, (double)j);
        push_str(s, "'");
    }
    push_str(s, "]");
    push_num(s, (double)k);
    push_str(s, "[");
    push_str(s, r >= 0 && (uint32_t)r < v->nuser ? v->user[r].name : "user");
    if (neg) push_str(s, "-");
}

/* Push the tasks that print node x (negated if neg) in reverse order. */
static void expand(const mblx__view *v, tstack *s, uint32_t x, int prec, int neg)
{
    while (v->nd[x].op == MBLX_OP_LET) x = v->args[v->nd[x].aoff]; /* let(x) prints as x */
    int own = node_prec(v, x, neg);
    /* a negative number right after '^' needs no parentheses: x^-2 */
    int paren = own < prec;
    if (v->nd[x].op == MBLX_OP_CONST && prec == P_POW && own == P_PROD) paren = 0;
    if (paren) {
        push_str(s, ")");
        expand(v, s, x, P_NONE, neg);
        push_str(s, "(");
        return;
    }
    const uint32_t *a = v->args + v->nd[x].aoff;
    uint32_t na = v->nd[x].na;
    switch (v->nd[x].op) {
    case MBLX_OP_CONST: push_num(s, neg ? -v->nd[x].val : v->nd[x].val); return;
    case MBLX_OP_SYMBOL:
        push_str(s, v->symname(v->ctx, x));
        if (neg) push_str(s, "-");
        return;
    case MBLX_OP_ADD: {
        /* order: positive terms, the constant, negative terms (printed as subtraction) */
        double k = v->nd[x].val;
        int first_pos = -1;
        for (uint32_t i = 0; i < na; i++)
            if (!term_negative(v, a[i])) {
                first_pos = (int)i;
                break;
            }
        /* pushed in reverse: negative terms last to first */
        int lead_done = first_pos >= 0 || k > 0.0;
        uint32_t first_neg = na;
        if (!lead_done)
            for (uint32_t i = 0; i < na; i++)
                if (term_negative(v, a[i])) {
                    first_neg = i;
                    break;
                }
        for (uint32_t i = na; i-- > 0;) {
            if (!term_negative(v, a[i]) || i == first_neg) continue;
            push_node(s, a[i], P_PROD, 1);
            push_str(s, " - ");
        }
        if (k != 0.0) {
            push_num(s, fabs(k));
            if (first_pos >= 0) push_str(s, k > 0.0 ? " + " : " - ");
            else if (k < 0.0) push_str(s, " - ");
        }
        for (uint32_t i = na; i-- > 0;) {
            if (term_negative(v, a[i])) continue;
            push_node(s, a[i], P_PROD, 0); /* a nested (large) sum keeps its parentheses */
            if ((int)i != first_pos) push_str(s, " + ");
        }
        if (first_neg < na) push_node(s, a[first_neg], P_PROD, 0);
        return;
    }
    case MBLX_OP_MUL: {
        double c = neg ? -v->nd[x].val : v->nd[x].val;
        int minus = c < 0.0;
        if (minus) c = -c;
        uint32_t b;
        double e;
        int nnum = 0;
        for (uint32_t i = 0; i < na; i++)
            if (!is_recip(v, a[i], &b, &e)) nnum++;
        for (uint32_t i = na; i-- > 0;)
            if (is_recip(v, a[i], &b, &e)) {
                push_den(s, b, e);
                push_str(s, "/");
            }
        int printed = 0;
        for (uint32_t i = na; i-- > 0;) {
            if (is_recip(v, a[i], &b, &e)) continue;
            push_node(s, a[i], P_POW, 0);
            if (++printed < nnum || c != 1.0) push_str(s, "*");
        }
        if (c != 1.0)
            push_num(s, c);
        else if (nnum == 0)
            push_str(s, "1");
        if (minus) push_str(s, "-");
        return;
    }
    case MBLX_OP_POW: {
        uint32_t b;
        double e;
        if (is_recip(v, x, &b, &e)) {
            push_den(s, b, e);
            push_str(s, neg ? "-1/" : "1/");
            return;
        }
        push_node(s, a[1], P_POW, 0);
        push_str(s, "^");
        push_node(s, a[0], P_ATOM, 0);
        if (neg) push_str(s, "-");
        return;
    }
    case MBLX_OP_DATA: { /* spline(name, x[, k]), table(name, x[, k]), spline2(name, x, y[, kx, ky]) */
        static const char *const ord[4] = {", 0", ", 1", ", 2", ", 3"};
        long k;
        int lin, dx, dy;
        mblx__data_decode(v->nd[x].val, &k, &lin, &dx, &dy);
        const mblx__dataset *d = k >= 0 && (uint32_t)k < v->ndata ? &v->data[k] : NULL;
        push_str(s, ")");
        if (dx || dy) {
            if (na > 1) push_str(s, ord[dy]);
            push_str(s, ord[dx]);
        }
        for (uint32_t i = na; i-- > 0;) {
            push_node(s, a[i], P_NONE, 0);
            push_str(s, ", ");
        }
        push_str(s, d ? d->name : "?");
        push_str(s, "(");
        push_str(s, d ? mblx__data_fn(d, lin) : "data");
        if (neg) push_str(s, "-");
        return;
    }
    case MBLX_OP_USER: push_user(v, s, x, a, na, neg); return;
    default: {
        push_args(s, a, na);
        push_str(s, mblx_op_name((mblx_op)v->nd[x].op));
        if (neg) push_str(s, "-");
        return;
    }
    }
}

size_t mblx__print_view(const mblx__view *v, uint32_t root, char *buf, size_t size)
{
    outbuf o = {buf, size, 0, '\0'};
    tstack s;
    s.p = s.local;
    s.n = 0;
    s.cap = LOCAL_TASKS;
    s.failed = 0;
    push_node(&s, root, P_NONE, 0);
    while (s.n && !s.failed) {
        task t = s.p[--s.n];
        switch (t.kind) {
        case T_STR: emits(&o, t.u.str); break;
        case T_NUM: {
            char nb[MBLX__NUM_BUF], rb[MBLX__NUM_BUF];
            size_t k = mblx__format_number(t.u.num, nb), kr = 0;
            if (v->rational && significant_digits(nb) > MBLX_PRINT_DEC_DIGITS) kr = format_rational(t.u.num, rb);
            if (kr && o.last == '^') { /* an exponent p/q: x^(1/2) */
                emits(&o, "(");
                emit(&o, rb, kr);
                emits(&o, ")");
            } else {
                emit(&o, kr ? rb : nb, kr ? kr : k);
            }
            break;
        }
        case T_DEN:
            if (t.u.num == 1.0) {
                push_node(&s, t.node, P_POW, 0);
            } else {
                push_num(&s, t.u.num);
                push_str(&s, "^");
                push_node(&s, t.node, P_ATOM, 0);
            }
            break;
        default: expand(v, &s, t.node, t.prec, t.neg); break;
        }
    }
    if (s.p != s.local) mbl_free(s.p);
    if (s.failed) {
        if (buf && size) buf[0] = '\0';
        return SIZE_MAX;
    }
    if (buf && size) buf[o.len < size ? o.len : size - 1] = '\0';
    return o.len;
}

static const char *graph_symname(const void *ctx, uint32_t node)
{
    const char *s = mblx_symbol_name((const mblx_graph *)ctx, node);
    return s ? s : "?";
}

static void graph_view(const mblx_graph *g, mblx__view *v)
{
    v->nd = g->nd;
    v->args = g->args;
    v->symname = graph_symname;
    v->ctx = g;
    v->data = g->data;
    v->ndata = g->ndata;
    v->user = g->user;
    v->nuser = g->nuser;
    v->rational = 0;
}

static size_t print_graph(const mblx_graph *g, mblx_id e, int rational, char *buf, size_t size)
{
    if (!g || !mblx__valid(g, e)) {
        if (buf && size) buf[0] = '\0';
        return SIZE_MAX;
    }
    mblx__view v;
    graph_view(g, &v);
    v.rational = rational;
    return mblx__print_view(&v, e, buf, size);
}

size_t mblx_print(const mblx_graph *g, mblx_id e, char *buf, size_t size) { return print_graph(g, e, 0, buf, size); }

static char *print_alloc(const mblx_graph *g, mblx_id e, int rational, mbl_status *st)
{
    size_t n = print_graph(g, e, rational, NULL, 0);
    if (n == SIZE_MAX) {
        if (!g || !mblx__valid(g, e)) mbl_error(st, MBL_EARG, "mblx_print_alloc: invalid node");
        else mbl_error(st, MBL_ENOMEM, "out of memory while printing an expression");
        return NULL;
    }
    char *s = mbl_malloc(n + 1);
    if (!s) {
        mbl_error(st, MBL_ENOMEM, "out of memory while printing an expression");
        return NULL;
    }
    if (print_graph(g, e, rational, s, n + 1) == SIZE_MAX) {
        mbl_free(s);
        mbl_error(st, MBL_ENOMEM, "out of memory while printing an expression");
        return NULL;
    }
    return s;
}

char *mblx_print_alloc(const mblx_graph *g, mblx_id e, mbl_status *st) { return print_alloc(g, e, 0, st); }

char *mblx_print_alloc_rational(const mblx_graph *g, mblx_id e, mbl_status *st) { return print_alloc(g, e, 1, st); }
