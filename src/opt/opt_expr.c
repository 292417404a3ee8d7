/* An expression of the model's parameters as a goal (docs/optimize.md, "Expressions"): the mass
 * m1 + m2, a cost 2*k1 + k2, any function of the parameters in the expressions' syntax
 * (docs/expressions.md). Parsed once into a graph of its own, its derivatives with respect to the
 * varied parameters formed symbolically (mblx_diff); at each design evaluated with the varied
 * parameters' values and the others' (the model's, after the run's settings). A parameter that
 * the file computes from a varied one (its value moves with it: a derived symbol) takes its value
 * from each design's model and its derivatives through the file's chain of parameters
 * (mbl_dae_deriv_param_chain, the sensitivities' total derivatives): the expression's gradient is
 * then sum over its symbols of d e / d s times d s / d p_j. */
#include <math.h>
#include <string.h>

#include "mblin/expr.h"
#include "opt/opt_internal.h"

struct opt_expr {
    mblx_graph *g;
    mblx_id e, *d;     /* the expression and its derivatives by the varied parameters (np) */
    double *vals;      /* the symbols' values (the fixed parameters' set once) */
    int *varied;       /* per symbol: the varied parameter it is (index), -1 fixed, -2 derived */
    /* with derived symbols (nderived > 0): per symbol its parameter's index in the model (pidx),
     * d e / d symbol (ds), the derived ones' values and derivatives by the varied parameters
     * (dsym: ns x np) at the last design committed, and those staged at the design computed */
    int nderived, staged, *pidx;
    mblx_id *ds;
    double *dsym, *vals2, *dsym2;
};

typedef struct resolve_ud {
    const mbl_model *md;
} resolve_ud;

/* a name of the expression: a parameter of the model becomes a symbol */
static int resolve(void *ud, mblx_graph *g, const char *name, size_t len, int nargs, const mblx_id *args, mblx_id *out,
                   char *why, size_t whylen)
{
    const resolve_ud *r = ud;
    mbl_model_info info;
    (void)args;
    mbl_model_get_info(r->md, &info);
    *out = MBLX_NONE;
    for (int i = 0; nargs < 0 && i < info.nparam; i++) {
        const char *p = mbl_model_param_name(r->md, i);
        if (strlen(p) == len && !strncmp(p, name, len)) {
            *out = mblx_symbol_n(g, name, len);
            return 0;
        }
    }
    snprintf(why, whylen, "the model has no parameter '%.*s'", (int)(len < 100 ? len : 100), name);
    return -1;
}

void opt_expr_free(opt_expr *x)
{
    if (!x) return;
    mblx_graph_free(x->g);
    mbl_free(x->d);
    mbl_free(x->vals);
    mbl_free(x->varied); /* pidx, vals2 and dsym2 are parts of varied, vals and dsym */
    mbl_free(x->ds);
    mbl_free(x->dsym);
    mbl_free(x);
}

/* the model with the run's settings, and the same with varied parameter j moved by 1e-3 of its
 * range: whether parameter p moves with j */
static int moves_with(const opt_ctx *c, const mbl_model *base, int p, int j, int *moves, mbl_status *st)
{
    mbl_setting *sets = mbl_alloc_array((size_t)c->nsets + 1, sizeof *sets);
    if (!sets) return mbl_error(st, MBL_ENOMEM, "out of memory");
    int n = c->nsets - c->np;
    memcpy(sets, c->sets, (size_t)n * sizeof *sets);
    double v = mbl_model_param_value(base, c->idx[j]);
    sets[n] = (mbl_setting){c->o->params[j].name, v + 1e-3 * (c->hi[j] - c->lo[j])};
    mbl_model *md = NULL;
    int rc = mbl_model_copy(c->model, sets, n + 1, &md, st);
    if (!rc) *moves = mbl_model_param_value(md, p) != mbl_model_param_value(base, p);
    mbl_model_free(md);
    mbl_free(sets);
    return rc;
}

int opt_expr_new(const opt_ctx *c, const char *text, opt_expr **out, mbl_status *st)
{
    *out = NULL;
    if (!text || !text[0]) return mbl_error(st, MBL_EARG, "an expression goal needs the expression");
    opt_expr *x = mbl_malloc(sizeof *x);
    if (!x) return mbl_error(st, MBL_ENOMEM, "out of memory");
    memset(x, 0, sizeof *x);
    mbl_model *base = NULL;
    resolve_ud ud = {c->model};
    mblx_parse_opts po = {resolve, &ud, 0, 0, 0, NULL};
    int rc = (x->g = mblx_graph_new()) ? mblx_parse(x->g, text, strlen(text), &po, &x->e, st)
                                       : mbl_error(st, MBL_ENOMEM, "out of memory");
    if (rc) {
        mbl_error_prefix(st, "the expression '%s'", text);
        goto done;
    }
    size_t ns = mblx_symbol_count(x->g);
    size_t nd = ns * (size_t)c->np;
    x->d = mbl_alloc_array((size_t)c->np + 1, sizeof *x->d);
    x->vals = mbl_alloc_array(2 * ns + 1, sizeof *x->vals);
    x->varied = mbl_alloc_array(2 * ns + 1, sizeof *x->varied);
    x->ds = mbl_alloc_array(ns + 1, sizeof *x->ds);
    x->dsym = mbl_alloc_array(2 * nd + 1, sizeof *x->dsym);
    if (!x->d || !x->vals || !x->varied || !x->ds || !x->dsym) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    if ((rc = mbl_model_copy(c->model, c->sets, c->nsets - c->np, &base, st))) goto done;
    x->vals2 = x->vals + ns, x->pidx = x->varied + ns, x->dsym2 = x->dsym + nd;
    memset(x->dsym, 0, 2 * nd * sizeof *x->dsym);
    mbl_model_info info;
    mbl_model_get_info(base, &info);
    for (size_t s = 0; s < ns && !rc; s++) { /* each named parameter: varied, fixed, or derived from a varied one */
        const char *name = mblx_symbol_name(x->g, mblx_symbol_node(x->g, s));
        int p = -1;
        for (int i = 0; i < info.nparam; i++)
            if (!strcmp(mbl_model_param_name(base, i), name)) p = i;
        x->varied[s] = -1;
        for (int j = 0; j < c->np; j++)
            if (c->idx[j] == p) x->varied[s] = j;
        x->vals[s] = x->vals2[s] = mbl_model_param_value(base, p);
        x->pidx[s] = p;
        for (int j = 0; x->varied[s] == -1 && j < c->np && !rc; j++) {
            int moves = 0;
            rc = moves_with(c, base, p, j, &moves, st);
            if (!rc && moves) x->varied[s] = -2, x->nderived++;
        }
    }
    for (int j = 0; j < c->np && !rc; j++) {
        mblx_id sym = mblx_symbol_find(x->g, c->o->params[j].name);
        x->d[j] = sym == MBLX_NONE ? mblx_const(x->g, 0) : mblx_diff(x->g, x->e, sym);
    }
    for (size_t s = 0; s < ns && !rc && x->nderived; s++) x->ds[s] = mblx_diff(x->g, x->e, mblx_symbol_node(x->g, s));
    if (!rc) rc = mblx_graph_status(x->g, st);
done:
    mbl_model_free(base);
    if (rc) opt_expr_free(x);
    else *out = x;
    return rc;
}

int opt_expr_eval(const opt_ctx *c, opt_expr *x, const double *p, double *val, double *grad, mbl_status *st)
{
    size_t ns = mblx_symbol_count(x->g);
    for (size_t s = 0; s < ns; s++)
        if (x->varied[s] >= 0) x->vals[s] = p[x->varied[s]];
    int rc = mblx_eval(x->g, x->e, x->vals, val, st);
    for (int j = 0; j < c->np && !rc && !x->nderived; j++) rc = mblx_eval(x->g, x->d[j], x->vals, &grad[j], st);
    if (x->nderived && !rc) /* through the chain: sum over the symbols of d e / d s times d s / d p_j */
        for (int j = 0; j < c->np; j++) grad[j] = 0;
    for (size_t s = 0; s < ns && !rc && x->nderived; s++) {
        double es;
        if (x->varied[s] == -1 || (rc = mblx_eval(x->g, x->ds[s], x->vals, &es, st))) continue;
        for (int j = 0; j < c->np; j++)
            grad[j] += es * (x->varied[s] == j ? 1.0 : x->varied[s] == -2 ? x->dsym[s * (size_t)c->np + j] : 0.0);
    }
    if (rc) mbl_error_prefix(st, "the expression");
    return rc;
}

int opt_expr_point(const opt_ctx *c, opt_expr *x, const mbl_model *md, const mbl_dae_deriv *dd, const mbl_point *pt,
                   mbl_status *st)
{
    if (!x || !x->nderived) return 0;
    mbl_model_info info;
    mbl_model_get_info(md, &info);
    size_t ns = mblx_symbol_count(x->g), npm = (size_t)info.nparam;
    double *T = mbl_alloc_array(npm * (size_t)c->np + 1, sizeof *T);
    if (!T) return mbl_error(st, MBL_ENOMEM, "out of memory");
    int rc = mbl_dae_deriv_param_chain(dd, pt, c->np, c->idx, T, st);
    for (size_t s = 0; s < ns && !rc; s++) {
        if (x->varied[s] != -2) continue;
        x->vals2[s] = mbl_model_param_value(md, x->pidx[s]);
        for (int j = 0; j < c->np; j++) x->dsym2[s * (size_t)c->np + j] = T[(size_t)x->pidx[s] + npm * j];
    }
    mbl_free(T);
    x->staged = !rc;
    return rc;
}

void opt_expr_commit(opt_expr *x)
{
    if (!x || !x->staged) return;
    size_t ns = mblx_symbol_count(x->g), nd = (size_t)(x->dsym2 - x->dsym);
    for (size_t s = 0; s < ns; s++)
        if (x->varied[s] == -2) x->vals[s] = x->vals2[s];
    memcpy(x->dsym, x->dsym2, nd * sizeof *x->dsym);
    x->staged = 0;
}
