/* LaTeX of an expression (mblin symbolic --format latex, docs/symbolic.md): sums with their
 * signs, products as \frac{numerator}{denominator} with rational coefficients (p/q, q <= 1000),
 * square roots, powers, functions with \left( \right), names with trailing digits as subscripts
 * (m1 -> m_{1}) and Greek letters as such. Depth-limited (LATEX_MAX_DEPTH): the symbolic models
 * printed are small; a deeper expression is refused, never recursed into. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "mblin/codegen.h"

#define LATEX_MAX_DEPTH 200

typedef struct sbuf {
    char *s;
    size_t len, cap;
    int err;
} sbuf;

static void put(sbuf *b, const char *fmt, ...)
{
    if (b->err) return;
    va_list ap;
    va_start(ap, fmt);
    char tmp[256];
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof tmp) {
        b->err = 1;
        return;
    }
    if (b->len + (size_t)n + 1 > b->cap) {
        size_t nc = 2 * b->cap + (size_t)n + 64;
        char *ns = mbl_realloc(b->s, nc);
        if (!ns) {
            b->err = 1;
            return;
        }
        b->s = ns, b->cap = nc;
    }
    memcpy(b->s + b->len, tmp, (size_t)n + 1);
    b->len += (size_t)n;
}

/* v = p/q with small q: 1 and p, q set */
static int rational(double v, long *p, long *q)
{
    for (long d = 1; d <= 1000; d++) {
        double nn = v * (double)d, r = nearbyint(nn);
        if (fabs(nn - r) <= 1e-12 * fmax(1.0, fabs(nn)) && fabs(r) < 1e15) {
            *p = (long)r, *q = d;
            return 1;
        }
    }
    return 0;
}

static void put_number(sbuf *b, double v)
{
    long p, q;
    if (rational(v, &p, &q)) {
        if (q == 1) put(b, "%ld", p);
        else put(b, "\\frac{%ld}{%ld}", p, q);
    } else {
        put(b, "%.17g", v);
    }
}

static void put_name(sbuf *b, const char *name);

/* a velocity symbol der(x) as \dot{x} */
static int put_dot(sbuf *b, const char *name)
{
    size_t n = strlen(name);
    char inner[128];
    if (n < 6 || strncmp(name, "der(", 4) || name[n - 1] != ')' || n - 5 >= sizeof inner) return 0;
    memcpy(inner, name + 4, n - 5);
    inner[n - 5] = '\0';
    put(b, "\\dot{");
    put_name(b, inner);
    put(b, "}");
    return 1;
}

static void put_name(sbuf *b, const char *name)
{
    if (put_dot(b, name)) return;
    static const char *greek[] = {"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota",
                                  "kappa", "lambda", "mu", "nu", "xi", "pi", "rho", "sigma", "tau", "phi", "chi",
                                  "psi", "omega", "Gamma", "Delta", "Theta", "Lambda", "Xi", "Pi", "Sigma", "Phi",
                                  "Psi", "Omega"};
    size_t n = strlen(name), k = n;
    while (k > 0 && name[k - 1] >= '0' && name[k - 1] <= '9') k--;
    char base[128];
    if (k == 0 || k >= sizeof base) k = n < sizeof base ? n : sizeof base - 1;
    memcpy(base, name, k);
    base[k] = '\0';
    int isgreek = 0;
    for (size_t i = 0; i < sizeof greek / sizeof *greek; i++) isgreek |= !strcmp(base, greek[i]);
    if (isgreek) put(b, "\\%s", base);
    else {
        for (size_t i = 0; i < k; i++) {
            if (base[i] == '_') put(b, "\\_");
            else put(b, "%c", base[i]);
        }
        if (k > 1) {
            /* multi-letter names upright */
            /* (kept as typed: LaTeX math italic is the convention of the sources) */
        }
    }
    if (k < n) put(b, "_{%s}", name + k);
}

static void latex(sbuf *b, const mblx_graph *g, mblx_id e, int depth);

/* operand needing parentheses as a factor or base */
static void paren(sbuf *b, const mblx_graph *g, mblx_id e, int depth, int base)
{
    mblx_op op = mblx_node_op(g, e);
    double v;
    int need = op == MBLX_OP_ADD || (base && (op == MBLX_OP_MUL || op == MBLX_OP_POW)) ||
               (mblx_is_const(g, e, &v) && (v < 0 || (base && v != floor(v)))) ||
               (op == MBLX_OP_MUL && mblx_node_value(g, e) < 0);
    if (need) put(b, "\\left(");
    latex(b, g, e, depth + 1);
    if (need) put(b, "\\right)");
}

/* product of coefficient c and factors (all args of MUL node e), printed without sign when
 * abs_coef (the sign is printed by the caller) */
static void product(sbuf *b, const mblx_graph *g, mblx_id e, double c, int depth)
{
    int na = mblx_node_nargs(g, e), nnum = 0, nden = 0;
    for (int i = 0; i < na; i++) {
        mblx_id a = mblx_node_arg(g, e, i);
        double k;
        if (mblx_node_op(g, a) == MBLX_OP_POW && mblx_is_const(g, mblx_node_arg(g, a, 1), &k) && k < 0) nden++;
        else nnum++;
    }
    long p = 0, q = 1;
    int rat = rational(c, &p, &q);
    int frac = nden > 0 || (rat && q != 1);
    if (frac) put(b, "\\frac{");
    int wrote = 0;
    if (!rat) put(b, "%.17g", c), wrote = 1;
    else if (p != 1 || nnum == 0) put(b, "%ld", p), wrote = 1;
    for (int i = 0; i < na; i++) {
        mblx_id a = mblx_node_arg(g, e, i);
        double k;
        if (mblx_node_op(g, a) == MBLX_OP_POW && mblx_is_const(g, mblx_node_arg(g, a, 1), &k) && k < 0) continue;
        if (wrote) put(b, " ");
        paren(b, g, a, depth, 0);
        wrote = 1;
    }
    if (frac) {
        put(b, "}{");
        wrote = 0;
        if (rat && q != 1) put(b, "%ld", q), wrote = 1;
        for (int i = 0; i < na; i++) {
            mblx_id a = mblx_node_arg(g, e, i);
            double k;
            if (!(mblx_node_op(g, a) == MBLX_OP_POW && mblx_is_const(g, mblx_node_arg(g, a, 1), &k) && k < 0))
                continue;
            if (wrote) put(b, " ");
            mblx_id base = mblx_node_arg(g, a, 0);
            if (k == -1) paren(b, g, base, depth, 0);
            else if (k == -0.5) put(b, "\\sqrt{"), latex(b, g, base, depth + 1), put(b, "}");
            else {
                paren(b, g, base, depth, 1);
                put(b, "^{");
                put_number(b, -k);
                put(b, "}");
            }
            wrote = 1;
        }
        put(b, "}");
    }
}

static void latex(sbuf *b, const mblx_graph *g, mblx_id e, int depth)
{
    if (depth > LATEX_MAX_DEPTH) {
        b->err = 2;
        return;
    }
    mblx_op op = mblx_node_op(g, e);
    int na = mblx_node_nargs(g, e);
    double v;
    switch (op) {
    case MBLX_OP_CONST: put_number(b, mblx_node_value(g, e)); return;
    case MBLX_OP_SYMBOL: put_name(b, mblx_symbol_name(g, e)); return;
    case MBLX_OP_ADD: {
        int first = 1;
        for (int i = 0; i < na; i++) {
            mblx_id a = mblx_node_arg(g, e, i);
            int neg = (mblx_node_op(g, a) == MBLX_OP_MUL && mblx_node_value(g, a) < 0) ||
                      (mblx_is_const(g, a, &v) && v < 0);
            if (!first) put(b, neg ? " - " : " + ");
            else if (neg) put(b, "-");
            if (mblx_node_op(g, a) == MBLX_OP_MUL) product(b, g, a, fabs(mblx_node_value(g, a)), depth + 1);
            else if (neg) put_number(b, -v);
            else latex(b, g, a, depth + 1);
            first = 0;
        }
        v = mblx_node_value(g, e);
        if (v != 0.0) {
            put(b, v < 0 ? " - " : " + ");
            put_number(b, fabs(v));
        }
        return;
    }
    case MBLX_OP_MUL: {
        double c = mblx_node_value(g, e);
        if (c < 0) put(b, "-");
        product(b, g, e, fabs(c), depth + 1);
        return;
    }
    case MBLX_OP_POW: {
        mblx_id base = mblx_node_arg(g, e, 0), x = mblx_node_arg(g, e, 1);
        if (mblx_is_const(g, x, &v) && v == 0.5) {
            put(b, "\\sqrt{");
            latex(b, g, base, depth + 1);
            put(b, "}");
            return;
        }
        if (mblx_is_const(g, x, &v) && v < 0) {
            /* a lone reciprocal */
            put(b, "\\frac{1}{");
            if (v == -1) latex(b, g, base, depth + 1);
            else if (v == -0.5) put(b, "\\sqrt{"), latex(b, g, base, depth + 1), put(b, "}");
            else paren(b, g, base, depth, 1), put(b, "^{"), put_number(b, -v), put(b, "}");
            put(b, "}");
            return;
        }
        paren(b, g, base, depth, 1);
        put(b, "^{");
        latex(b, g, x, depth + 1);
        put(b, "}");
        return;
    }
    default: {
        const char *nm = mblx_op_name(op);
        static const char *tex[] = {"sin", "cos", "tan", "sinh", "cosh", "tanh", "exp", "log"};
        int known = 0;
        for (size_t i = 0; i < sizeof tex / sizeof *tex; i++) known |= !strcmp(nm, tex[i]);
        if (op == MBLX_OP_ABS) {
            put(b, "\\left|");
            latex(b, g, mblx_node_arg(g, e, 0), depth + 1);
            put(b, "\\right|");
            return;
        }
        if (op == MBLX_OP_SQRT) {
            put(b, "\\sqrt{");
            latex(b, g, mblx_node_arg(g, e, 0), depth + 1);
            put(b, "}");
            return;
        }
        long k;
        int lin, dx, dy, dim;
        if (mblx_data_node(g, e, &k, &lin, &dx, &dy)) { /* spline_{name}^{(dx, dy)}(x, y) */
            const char *dn = mblx_data_name(g, k, &dim);
            put(b, "\\operatorname{%s}_{\\mathrm{", dim == 2 ? "spline2" : lin ? "table" : "spline");
            for (const char *c = dn ? dn : "?"; *c; c++) put(b, *c == '_' ? "\\_" : "%c", *c);
            put(b, "}}");
            if (dim == 2 && (dx || dy)) put(b, "^{(%d,%d)}", dx, dy);
            else if (dx) put(b, "^{(%d)}", dx);
        } else if (known) {
            put(b, "\\%s", nm);
        } else {
            put(b, "\\operatorname{%s}", nm);
        }
        put(b, "\\left(");
        for (int i = 0; i < na; i++) {
            if (i) put(b, ", ");
            latex(b, g, mblx_node_arg(g, e, i), depth + 1);
        }
        put(b, "\\right)");
        return;
    }
    }
}

char *mbl_symlin_latex(const mblx_graph *g, mblx_id e, mbl_status *st)
{
    sbuf b = {NULL, 0, 0, 0};
    latex(&b, g, e, 0);
    if (b.err || !b.s) {
        mbl_free(b.s);
        mbl_error(st, b.err == 2 ? MBL_EARG : MBL_ENOMEM,
                  b.err == 2 ? "the expression is nested deeper than %d levels for LaTeX" : "out of memory",
                  LATEX_MAX_DEPTH);
        return NULL;
    }
    return b.s;
}
