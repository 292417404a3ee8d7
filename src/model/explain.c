/* The user's expressions kept for messages and domain checks, and the explanation of an
 * evaluation error: which expression (or which of its derivatives) fails at a point. */
#include "core/numfmt.h"
#include "model/formulate.h"
#include "model/position_text.h"
#include "model/text_blocks.h"

/* Keep an expression the user wrote, with its position, for model_check_domain. */
/* The parts concatenated into buf (cut at len - 1 like snprintf): the names of the expressions of
 * a model of many items without printf (glibc's formatting of them was 5 % of the N = 1000
 * four-bar mechanism's run). */
static void join_parts(char *buf, size_t len, const char *const *part, int n)
{
    size_t o = 0;
    for (int i = 0; i < n && o + 1 < len; i++) {
        size_t k = strlen(part[i]);
        if (k > len - 1 - o) k = len - 1 - o;
        memcpy(buf + o, part[i], k);
        o += k;
    }
    if (len) buf[o] = '\0';
}

size_t model_position_text(char *buf, size_t len, const char *file, int line, int col, const char *what)
{
    size_t nf = strlen(file), nw = strlen(what);
    if (nf < len && nw < len - nf && len - nf - nw > 2 * 12 + 4) { /* all of it: written at once */
        memcpy(buf, file, nf);
        size_t o = nf;
        buf[o++] = ':';
        o += core_fmt_int(buf + o, line);
        buf[o++] = ':';
        o += core_fmt_int(buf + o, col);
        buf[o++] = ':';
        buf[o++] = ' ';
        memcpy(buf + o, what, nw + 1);
        return o + nw;
    }
    char ln[12], cn[12];
    core_fmt_int(ln, line);
    core_fmt_int(cn, col);
    const char *part[7] = {file, ":", ln, ":", cn, ": ", what};
    join_parts(buf, len, part, 7);
    return len ? strlen(buf) : 0;
}

/* "variable 'name'", or the element a mechanism made the variable for ("force 'spring'") */
void model_variable_what(char *buf, size_t len, const mbl_src_item *it)
{
    if (it->key2) {
        const char *part[1] = {it->key2};
        join_parts(buf, len, part, 1);
        return;
    }
    const char *part[3] = {"variable '", it->key, "'"};
    join_parts(buf, len, part, 3);
}

int model_record_srcx(loader *L, const mbl_src_item *it, const char *what, mblx_id e)
{
    mbl_model *md = L->md;
    for (int i = md->nsrcx - 1; i >= 0 && i >= md->nsrcx - 4; i--)
        if (md->srcx[i] == e) return 0; /* the same expression just recorded (a symmetric entry) */
    if (md->nsrcx == md->srcx_cap) {
        int cap = md->srcx_cap ? 2 * md->srcx_cap : 16;
        mblx_id *x = mbl_realloc_array(md->srcx, (size_t)cap, sizeof *x);
        if (x) md->srcx = x;
        struct model_srcx_what **w = x ? mbl_realloc_array(md->srcx_what, (size_t)cap, sizeof *w) : NULL;
        if (w) md->srcx_what = w;
        if (!x || !w) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
        md->srcx_cap = cap;
    }
    size_t nw = strlen(what) + 1;
    struct model_srcx_what *w = model_text_bytes(md, sizeof *w + nw);
    if (!w) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
    w->line = it->line;
    w->col = it->col;
    memcpy(w->what, what, nw);
    md->srcx_what[md->nsrcx] = w;
    md->srcx[md->nsrcx++] = e;
    return 0;
}

size_t model_srcx_text(char *buf, size_t len, const mbl_model *md, int i)
{
    const struct model_srcx_what *w = md->srcx_what[i];
    return model_position_text(buf, len, md->file, w->line, w->col, w->what);
}

/* The user's text of an item for a message: at most 60 characters. */
static void quote_text(const char *text, char *buf, size_t len)
{
    size_t n = strlen(text);
    if (n < 61 || len < 64) {
        join_parts(buf, len, &text, 1);
    } else {
        memcpy(buf, text, 57);
        memcpy(buf + 57, "...", 4);
    }
}

/* An expression with an undefined constant part (0/0, 1/0 - 1/0, log(0) - log(0), sqrt(-1)*0:
 * the expression engine keeps such parts whole instead of folding them away, see
 * include/mblin/expr.h) is an error where it is written, not a silent 0 or an error later. */
int model_check_defined(loader *L, const mbl_src_item *it, const char *what, mblx_id e)
{
    size_t nd = 0;
    if (mblx_is_const(L->md->g, e, NULL) || (mblx_node_deps(L->md->g, e, &nd), nd > 0)) return 0;
    double dummy = 0.0, v = 0.0;
    mbl_status st;
    mbl_status_clear(&st);
    int rc = mblx_eval(L->md->g, e, &dummy, &v, &st);
    if (rc == MBL_ENOMEM) return mbl_error(L->st, rc, "%s: out of memory", L->src->file);
    char reason[MBL_MSG_MAX], text[64];
    snprintf(reason, sizeof reason, "%s", rc ? st.msg : "not a finite number");
    char *in = strstr(reason, " in "); /* the engine's excerpt is not what the user wrote */
    if (in) *in = '\0';
    quote_text(it->text, text, sizeof text);
    return mbl_error(L->st, MBL_EDOMAIN, "%s:%d:%d: %s = %s is undefined (%.200s)", L->src->file, it->line, it->col, what,
                     text, reason);
}

/* ---- naming the user's expression in evaluation errors ---------------------------------- */

struct mbl_model_expr {
    char *what, *text; /* "potential_energy", "the force on 'x'", ...; the text (shortened): in the
                        * model's text blocks, text after what's NUL */
    int line, col;
    mblx_id e;
};

int model_record_expr(loader *L, const mbl_src_item *it, const char *what, mblx_id e)
{
    mbl_model *md = L->md;
    if (mblx_is_const(md->g, e, NULL)) return 0;
    if (md->nexprs == md->capexprs) {
        int cap = md->capexprs ? 2 * md->capexprs : 16;
        struct mbl_model_expr *x = mbl_realloc_array(md->exprs, (size_t)cap, sizeof *x);
        if (!x) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
        md->exprs = x;
        md->capexprs = cap;
    }
    char text[64], gen[200];
    quote_text(it->text, text, sizeof text);
    if (it->key2 && it->key && !strcmp(what, it->key2)) { /* a mechanism's element (force 'spring') */
        const char *part[5] = {"the expression of ", what, " here (mblin's variable '", it->key, "')"};
        join_parts(gen, sizeof gen, part, 5);
        what = gen;
        text[0] = '\0';
    } else if (!strncmp(what, "variable '_", 11)) { /* made by the mechanism reader: its text is not the user's */
        /* joined, not printed (24,006 snprintf at N = 2000: 16 M instructions) */
        const char *part[3] = {"the expression of the element here (mblin's ", what, ")"};
        join_parts(gen, sizeof gen, part, 3);
        what = gen;
        text[0] = '\0';
    }
    struct mbl_model_expr *x = &md->exprs[md->nexprs];
    size_t nw = strlen(what) + 1, nt = strlen(text) + 1; /* one block for both (3,005 at N = 1000) */
    x->what = model_text_bytes(md, nw + nt);
    if (!x->what) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
    memcpy(x->what, what, nw);
    x->text = x->what + nw;
    memcpy(x->text, text, nt);
    x->line = it->line;
    x->col = it->col;
    x->e = e;
    md->nexprs++;
    return 0;
}

void model_free_exprs(mbl_model *md)
{
    mbl_free(md->exprs); /* the texts are in the model's text blocks */
    md->exprs = NULL;
    md->nexprs = md->capexprs = 0;
}

/* Bound on the expressions evaluated while looking for the failing one (error path only). */
enum { EXPLAIN_MAX_EVALS = 20000, EXPLAIN_MAX_ORDER = 3 };

typedef struct explain {
    mblx_graph *g;
    const mbl_model *md;
    const double *syms;
    long evals;
    int order;             /* derivative order looked at */
    uint32_t path[EXPLAIN_MAX_ORDER];
    mbl_status fail;       /* the engine's message for the failing node */
} explain;

/* Depth-first over derivatives of e with respect to the unknowns and t it depends on (index
 * tuples in nondecreasing order: derivatives commute), evaluating those of order x->order.
 * Returns 1 when one fails (x->path holds the symbols), -1 on out of memory or the bound. */
static int explain_dfs(explain *x, mblx_id e, int depth)
{
    mbl_status st;
    if (depth == x->order) {
        if (++x->evals > EXPLAIN_MAX_EVALS) return -1;
        double v;
        int rc = mblx_eval(x->g, e, x->syms, &v, &st);
        if (rc == MBL_ENOMEM) return -1;
        if (rc) {
            x->fail = st;
            return 1;
        }
        return 0;
    }
    size_t nd = 0;
    const uint32_t *deps = mblx_node_deps(x->g, e, &nd);
    if (!deps || !nd) return 0;
    uint32_t *ds = mbl_alloc_array(nd, sizeof *ds); /* builders below may move the pool */
    if (!ds) return -1;
    memcpy(ds, deps, nd * sizeof *ds);
    int res = 0;
    for (size_t i = 0; i < nd && !res; i++) {
        uint32_t s = ds[i];
        if (depth > 0 && s < x->path[depth - 1]) continue;
        if ((int)s != x->md->sym_t && (s >= (uint32_t)x->md->nsym || x->md->unknown_of_sym[s] < 0)) continue; /* parameters */
        mblx_id d = mblx_diff(x->g, e, mblx_symbol_node(x->g, s));
        if (d == MBLX_NONE) {
            res = -1;
            break;
        }
        if (mblx_is_const(x->g, d, NULL)) continue;
        x->path[depth] = s;
        res = explain_dfs(x, d, depth + 1);
    }
    mbl_free(ds);
    return res;
}

int model_eval_error(const mbl_model *md, const double *syms, const char *when, mbl_status *st)
{
    if (!st) return MBL_EDOMAIN;
    if (!when) when = "while evaluating the model";
    char old[MBL_MSG_MAX];
    snprintf(old, sizeof old, "%s", st->msg);
    if (st->code != MBL_EDOMAIN || !md || !syms) {
        mbl_error(st, st->code ? st->code : MBL_EDOMAIN, "%s: %s: %.900s", md ? md->file : "model", when, old);
        return st->code;
    }
    explain x;
    memset(&x, 0, sizeof x);
    x.g = md->g;
    x.md = md;
    x.syms = syms;
    int found = -1, res = 0;
    model_graph_lock(md, 1);
    for (int order = 0; order <= EXPLAIN_MAX_ORDER && found < 0 && res >= 0; order++) {
        x.order = order;
        for (int i = 0; i < md->nexprs && found < 0 && res >= 0; i++) {
            res = explain_dfs(&x, md->exprs[i].e, 0);
            if (res > 0) found = i;
        }
    }
    char syms_txt[200] = "";
    if (found >= 0)
        for (int k = 0; k < x.order; k++) {
            size_t l = strlen(syms_txt);
            snprintf(syms_txt + l, sizeof syms_txt - l, "%s%s", k ? ", " : "",
                     mblx_symbol_name(md->g, mblx_symbol_node(md->g, x.path[k])));
        }
    model_graph_lock(md, 0);
    if (found < 0) {
        mbl_error(st, MBL_EDOMAIN, "%s: %s: %.900s", md->file, when, old);
        return st->code;
    }
    char reason[MBL_MSG_MAX];
    snprintf(reason, sizeof reason, "%s", x.fail.msg);
    char *in = strstr(reason, " in "); /* the engine's excerpt may be a derivative: not the user's text */
    if (in) *in = '\0';
    static const char *nth[] = {"", "first", "second", "third"};
    const struct mbl_model_expr *e = &md->exprs[found];
    const char *eq = e->text[0] ? " = " : "";
    if (x.order == 0)
        mbl_error(st, MBL_EDOMAIN, "%s:%d:%d: %.300s in %s%s%s, %s", md->file, e->line, e->col, reason, e->what, eq,
                  e->text, when);
    else
        mbl_error(st, MBL_EDOMAIN, "%s:%d:%d: %.300s in the %s derivative with respect to %s of %s%s%s, %s", md->file,
                  e->line, e->col, reason, nth[x.order], syms_txt, e->what, eq, e->text, when);
    return st->code;
}
