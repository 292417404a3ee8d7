/* User routines in the engine (issue 68): routines registered in a graph (copied into every tape
 * compiled from it), the node MBLX_OP_USER that stands for one output of a routine or one of its
 * partials, its derivative rule, and the evaluation of a routine (one checked call, its partials
 * by central differences when it has none of its own, second derivatives by differences).
 *
 * A node's value field encodes ((r * 4096 + k) * 4096 + j1 + 1) * 4096 + j2 + 1: routine r,
 * output k, and the inputs j1 <= j2 of its partial (-1: none), exact in a double for r below
 * USER_MAX_ROUTINES. Its derivative in input j is the same node with j added (order 2 at most). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "expr/expr_internal.h"
#include "expr/user_step.h"

/* Routines a graph can hold (the node's code: 17 bits above the 36 of k, j1 + 1, j2 + 1). */
#define USER_MAX_ROUTINES (1L << 16)
/* The step of the second differences of a routine's values (a routine without partials: its
 * order-2 nodes), relative to max(|in_j|, 1): DBL_EPSILON^(1/4), where the truncation error
 * (~ h^2) and the rounding error (~ DBL_EPSILON / h^2) of a second difference meet. The
 * differences of a routine's own partials take MBLX_USER_STEP, as first differences. */
#define USER_STEP2 1.220703125e-04

static double encode(long r, int k, int j1, int j2)
{
    uint64_t c = (((uint64_t)r * 4096u + (uint64_t)k) * 4096u + (uint64_t)(j1 + 1)) * 4096u + (uint64_t)(j2 + 1);
    return (double)c;
}

void mblx__user_decode(double code, long *r, int *k, int *j1, int *j2)
{
    uint64_t c = (uint64_t)code;
    *j2 = (int)(c & 4095u) - 1;
    *j1 = (int)((c >> 12) & 4095u) - 1;
    *k = (int)((c >> 24) & 4095u);
    *r = (long)(c >> 36);
}

void mblx__user_free(mblx__user *u, uint32_t n)
{
    for (uint32_t i = 0; u && i < n; i++) mbl_free(u[i].name);
    mbl_free(u);
}

mblx__user *mblx__user_copy_all(const mblx__user *s, uint32_t n)
{
    mblx__user *d = mbl_calloc(n ? n : 1, sizeof *d);
    if (!d) return NULL;
    for (uint32_t i = 0; i < n; i++) {
        size_t ln = strlen(s[i].name);
        d[i] = s[i];
        if (!(d[i].name = mbl_malloc(ln + 1))) {
            mblx__user_free(d, i);
            return NULL;
        }
        memcpy(d[i].name, s[i].name, ln + 1);
    }
    return d;
}

/* ---- the registry ---------------------------------------------------------------------------- */

long mblx_user_add(mblx_graph *g, const mblx_user_def *d)
{
    if (!g) return -1;
    if (!d || !d->name || !d->name[0])
        return (mblx__fail(g, MBL_EARG, "mblx_user_add: a routine needs a name"), -1);
    const char *nm = d->name;
    for (uint32_t i = 0; i < g->nuser; i++)
        if (!strcmp(g->user[i].name, nm))
            return (mblx__fail(g, MBL_EARG, "mblx_user_add: routine '%s' given twice", nm), -1);
    if (d->nin < 1 || d->nin > MBLX_USER_MAX_IO || d->nout < 1 || d->nout > MBLX_USER_MAX_IO)
        return (mblx__fail(g, MBL_EARG, "mblx_user_add: routine '%s': %d inputs and %d outputs (1 .. %d each)", nm,
                           d->nin, d->nout, MBLX_USER_MAX_IO),
                -1);
    if (!d->fn) return (mblx__fail(g, MBL_EARG, "mblx_user_add: routine '%s' has no function", nm), -1);
    if (g->nuser >= USER_MAX_ROUTINES)
        return (mblx__fail(g, MBL_EARG, "mblx_user_add: more than %ld routines", USER_MAX_ROUTINES), -1);
    if (g->nuser % 8 == 0) {
        mblx__user *nu = mbl_realloc(g->user, (g->nuser + 8) * sizeof *nu);
        if (!nu) return (mblx__oom(g), -1);
        g->user = nu;
    }
    size_t ln = strlen(nm);
    char *name = mbl_malloc(ln + 1);
    if (!name) return (mblx__oom(g), -1);
    memcpy(name, nm, ln + 1);
    g->user[g->nuser] = (mblx__user){name, d->nin, d->nout, d->fn, d->user_data, d->partials != 0};
    return (long)g->nuser++;
}

size_t mblx_user_count(const mblx_graph *g) { return g ? g->nuser : 0; }

int mblx_user_info(const mblx_graph *g, long r, mblx_user_def *d)
{
    if (!g || !d || r < 0 || (uint32_t)r >= g->nuser) return MBL_EARG;
    const mblx__user *u = &g->user[r];
    *d = (mblx_user_def){u->name, u->nin, u->nout, u->fn, u->user_data, u->partials};
    return 0;
}

int mblx_user_copy(mblx_graph *dst, const mblx_graph *src)
{
    if (!dst || !src) return MBL_EARG;
    if (dst->nuser) {
        mblx__fail(dst, MBL_EARG, "mblx_user_copy: the destination has routines");
        return MBL_EARG;
    }
    if (!src->nuser) return 0;
    mblx__user *u = mblx__user_copy_all(src->user, src->nuser);
    if (!u) {
        mblx__oom(dst);
        return MBL_ENOMEM;
    }
    mbl_free(dst->user);
    dst->user = u;
    dst->nuser = src->nuser;
    return 0;
}

/* ---- the node -------------------------------------------------------------------------------- */

/* Node (r, k, j1, j2) of the nin operands in (j1 <= j2 when both are given). */
static mblx_id user_node(mblx_graph *g, long r, int k, int j1, int j2, const mblx_id *in)
{
    if (r < 0 || (uint32_t)r >= g->nuser) return mblx__fail(g, MBL_EARG, "mblx_user_call: no routine %ld", r);
    const mblx__user *u = &g->user[r];
    if (k < 0 || k >= u->nout)
        return mblx__fail(g, MBL_EARG, "mblx_user_call: routine '%s' has no output %d", u->name, k);
    if (!in) return mblx__fail(g, MBL_EARG, "mblx_user_call: routine '%s' without its inputs", u->name);
    for (int j = 0; j < u->nin; j++)
        if (!mblx__valid(g, in[j]))
            return in[j] == XNONE && g->err ? XNONE
                                           : mblx__fail(g, MBL_EARG, "mblx_user_call: routine '%s': input %d is not a node",
                                                        u->name, j);
    if (j1 > j2 && j2 >= 0) {
        int s = j1;
        j1 = j2, j2 = s;
    }
    return mblx__intern(g, MBLX_OP_USER, encode(r, k, j1, j2), (size_t)u->nin, in);
}

mblx_id mblx_user_call(mblx_graph *g, long r, int k, const mblx_id *in)
{
    if (!g) return XNONE;
    return user_node(g, r, k, -1, -1, in);
}

int mblx_user_node(const mblx_graph *g, mblx_id e, long *r, int *k, int *j1, int *j2)
{
    if (!g || !mblx__valid(g, e) || g->nd[e].op != MBLX_OP_USER) return 0;
    long rr;
    int kk, a, b;
    mblx__user_decode(g->nd[e].val, &rr, &kk, &a, &b);
    if (r) *r = rr;
    if (k) *k = kk;
    if (j1) *j1 = a;
    if (j2) *j2 = b;
    return 1;
}

mblx_id mblx__user_apply(mblx_graph *g, double code, size_t n, const mblx_id *args)
{
    long r;
    int k, j1, j2;
    mblx__user_decode(code, &r, &k, &j1, &j2);
    if (r < 0 || (uint32_t)r >= g->nuser) return mblx__fail(g, MBL_EARG, "mblx_apply: no routine %ld", r);
    const mblx__user *u = &g->user[r];
    if (n != (size_t)u->nin)
        return mblx__fail(g, MBL_EARG, "mblx_apply: routine '%s' takes %d inputs, got %zu", u->name, u->nin, n);
    if (j1 >= u->nin || j2 >= u->nin || (j1 < 0 && j2 >= 0))
        return mblx__fail(g, MBL_EARG, "mblx_apply: routine '%s': no input %d", u->name, j1 > j2 ? j1 : j2);
    return user_node(g, r, k, j1, j2, args);
}

mblx_id mblx__user_partial(mblx_graph *g, mblx_id v, const uint32_t *a, size_t i)
{
    long r;
    int k, j1, j2;
    mblx__user_decode(g->nd[v].val, &r, &k, &j1, &j2);
    if (j2 >= 0)
        return mblx__fail(g, MBL_EARG, "third derivatives of user routine '%s' are not available",
                          (uint32_t)r < g->nuser ? g->user[r].name : "?");
    return j1 < 0 ? user_node(g, r, k, (int)i, -1, a) : user_node(g, r, k, j1, (int)i, a);
}

/* ---- which expressions use a routine --------------------------------------------------------- */

int mblx_uses_user(const mblx_graph *cg, size_t n, const mblx_id *e, long *r)
{
    if (!cg || !cg->nuser || !n || !e) return 0;
    mblx_graph *g = (mblx_graph *)cg; /* (the traversal's stamps only) */
    uint32_t *stk = NULL;
    size_t sn = 0, cap = 0;
    int found = 0;
    if (mblx__new_epoch(g)) goto scan;
    uint32_t ep = g->epoch;
    for (size_t o = 0; o < n && !found; o++) {
        if (!mblx__valid(g, e[o]) || g->stamp[e[o]] == ep) continue;
        g->stamp[e[o]] = ep;
        if (mblx__grow((void **)&stk, &cap, sn + 1, sizeof *stk, 64)) goto scan;
        stk[sn++] = e[o];
        while (sn && !found) {
            uint32_t v = stk[--sn];
            const mblx__node *nd = &g->nd[v];
            if (nd->op == MBLX_OP_USER) {
                found = 1;
                if (r) *r = (long)((uint64_t)nd->val >> 36);
                break;
            }
            const uint32_t *a = mblx__args(g, v);
            if (mblx__grow((void **)&stk, &cap, sn + nd->na, sizeof *stk, 64)) goto scan;
            for (uint32_t i = 0; i < nd->na; i++)
                if (g->stamp[a[i]] != ep) g->stamp[a[i]] = ep, stk[sn++] = a[i];
        }
    }
    mbl_free(stk);
    return found;
scan: /* out of memory: every node up to the largest e (operands come before their users), a
       * conservative answer */
    mbl_free(stk);
    uint32_t top = 0;
    for (size_t o = 0; o < n; o++)
        if (mblx__valid(g, e[o]) && e[o] > top) top = e[o];
    for (uint32_t v = 0; v <= top && v < g->n; v++)
        if (g->nd[v].op == MBLX_OP_USER) {
            if (r) *r = (long)((uint64_t)g->nd[v].val >> 36);
            return 1;
        }
    return 0;
}

/* ---- evaluation ------------------------------------------------------------------------------ */

size_t mblx__user_scratch(const mblx__user *u)
{
    size_t nin = (size_t)u->nin, nout = (size_t)u->nout;
    return nin + 2 * nout + 2 * nout * nin;
}

/* One call of u at in: out (and partials when not NULL, u's own) written and checked finite. 0,
 * or MBL_EDOMAIN with "routine 'name': ..." in msg. */
static int call1(const mblx__user *u, const double *in, double *out, double *partials, char *msg, size_t size)
{
    char m[MBL_MSG_MAX];
    size_t nout = (size_t)u->nout, np = nout * (size_t)u->nin;
    m[0] = '\0';
    for (size_t k = 0; k < nout; k++) out[k] = NAN; /* an output the routine leaves is refused */
    for (size_t k = 0; partials && k < np; k++) partials[k] = NAN;
    mbl_user_call c = {MBL_USER_ABI_VERSION, u->name, u->nin, u->nout, in, out, partials, u->user_data, m, sizeof m};
    int rc = u->fn(&c);
    if (rc) {
        m[sizeof m - 1] = '\0';
        for (char *q = m; *q; q++)
            if (*q == '\n' || *q == '\r') *q = ' ';
        if (m[0]) snprintf(msg, size, "routine '%s': %s", u->name, m);
        else snprintf(msg, size, "routine '%s' failed (status %d)", u->name, rc);
        return MBL_EDOMAIN;
    }
    for (size_t k = 0; k < nout; k++)
        if (!isfinite(out[k])) {
            snprintf(msg, size, "routine '%s': output %zu is %s", u->name, k + 1, isnan(out[k]) ? "nan" : "inf");
            return MBL_EDOMAIN;
        }
    for (size_t k = 0; partials && k < np; k++)
        if (!isfinite(partials[k])) {
            snprintf(msg, size, "routine '%s': partial d out%zu / d in%zu is %s", u->name, k / (size_t)u->nin + 1,
                     k % (size_t)u->nin + 1, isnan(partials[k]) ? "nan" : "inf");
            return MBL_EDOMAIN;
        }
    return 0;
}

/* the calling thread's factor on every difference step (expr/user_step.h) */
static _Thread_local double step_scale = 1.0;
void mblx__user_step_scale(double s) { step_scale = s > 0 && isfinite(s) ? s : 1.0; }
double mblx__user_step_factor(void) { return step_scale; }

static double step_of(double x, double rel) { return step_scale * rel * (fabs(x) > 1.0 ? fabs(x) : 1.0); }

int mblx__user_fill(const mblx__user *u, const double *in, double *out, double *partials, int have_out,
                    double *scratch, char *msg, size_t size)
{
    if (partials && u->partials) return call1(u, in, out, partials, msg, size);
    int rc = have_out ? 0 : call1(u, in, out, NULL, msg, size);
    if (rc || !partials) return rc;
    size_t nin = (size_t)u->nin, nout = (size_t)u->nout;
    double *x = scratch, *op = x + nin, *om = op + nout;
    memcpy(x, in, nin * sizeof *x);
    for (size_t j = 0; j < nin; j++) {
        double h = step_of(in[j], MBLX_USER_STEP), xp = in[j] + h, xm = in[j] - h;
        x[j] = xp;
        if ((rc = call1(u, x, op, NULL, msg, size))) return rc;
        x[j] = xm;
        if ((rc = call1(u, x, om, NULL, msg, size))) return rc;
        x[j] = in[j];
        for (size_t k = 0; k < nout; k++) partials[k * nin + j] = (op[k] - om[k]) / (xp - xm);
    }
    return 0;
}

int mblx__user_second(const mblx__user *u, const double *in, int k, int j1, int j2, double *scratch, double *val,
                      char *msg, size_t size)
{
    size_t nin = (size_t)u->nin, nout = (size_t)u->nout;
    double *x = scratch, *o = x + nin, *P = o + 2 * nout;
    int rc;
    memcpy(x, in, nin * sizeof *x);
    if (u->partials) { /* the routine's partial k, j1 differenced in input j2 */
        double h = step_of(in[j2], MBLX_USER_STEP), xp = in[j2] + h, xm = in[j2] - h, d[2];
        for (int s = 0; s < 2; s++) {
            x[j2] = s ? xm : xp;
            if ((rc = call1(u, x, o, P, msg, size))) return rc;
            d[s] = P[(size_t)k * nin + (size_t)j1];
        }
        *val = (d[0] - d[1]) / (xp - xm);
        return 0;
    }
    /* second differences of the values: (f(++) - f(+-) - f(-+) + f(--)) / (dx1 dx2) */
    double h1 = step_of(in[j1], USER_STEP2), h2 = step_of(in[j2], USER_STEP2), acc = 0.0;
    for (int s1 = 0; s1 < 2; s1++)
        for (int s2 = 0; s2 < 2; s2++) {
            memcpy(x, in, nin * sizeof *x);
            x[j1] = s1 ? in[j1] - h1 : in[j1] + h1;
            x[j2] = (j1 == j2 ? x[j2] : in[j2]) + (s2 ? -h2 : h2);
            if ((rc = call1(u, x, o, NULL, msg, size))) return rc;
            acc += (s1 == s2 ? 1.0 : -1.0) * o[k];
        }
    double d1 = (in[j1] + h1) - (in[j1] - h1), d2 = (in[j2] + h2) - (in[j2] - h2);
    *val = acc / (d1 * d2);
    return 0;
}

/* Routine r of g and scratch for it; NULL with st set when r is bad or out of memory. */
static const mblx__user *routine_of(const mblx_graph *g, long r, const double *in, double **scratch, size_t extra,
                                    const char *fn, mbl_status *st)
{
    if (!g || r < 0 || (uint32_t)r >= g->nuser || !in) {
        mbl_error(st, MBL_EARG, "%s: no routine %ld", fn, r);
        return NULL;
    }
    const mblx__user *u = &g->user[r];
    if (!(*scratch = mbl_alloc_array(mblx__user_scratch(u) + extra, sizeof **scratch))) {
        mbl_error(st, MBL_ENOMEM, "out of memory");
        return NULL;
    }
    return u;
}

int mblx_user_eval(const mblx_graph *g, long r, const double *in, double *out, double *partials, mbl_status *st)
{
    double *scratch = NULL;
    const mblx__user *u = routine_of(g, r, in, &scratch, 0, "mblx_user_eval", st);
    if (!u) return st ? st->code : MBL_EARG;
    if (!out) {
        mbl_free(scratch);
        return mbl_error(st, MBL_EARG, "mblx_user_eval: NULL outputs");
    }
    char msg[MBL_MSG_MAX];
    int rc = mblx__user_fill(u, in, out, partials, 0, scratch, msg, sizeof msg);
    mbl_free(scratch);
    if (rc) return mbl_error(st, rc, "%s", msg);
    mbl_status_clear(st);
    return 0;
}

int mblx_user_differences(const mblx_graph *g, long r, const double *in, double *dif, double *err, mbl_status *st)
{
    double *s = NULL;
    const mblx__user *u = routine_of(g, r, in, &s, 0, "mblx_user_differences", st);
    if (!u) return st ? st->code : MBL_EARG;
    size_t nin = (size_t)u->nin, nout = (size_t)u->nout;
    double *x = s, *o[4] = {x + nin, x + nin + nout, x + nin + 2 * nout, x + nin + 3 * nout}; /* (within 2 nout nin + 2 nout) */
    char msg[MBL_MSG_MAX];
    int rc = 0;
    memcpy(x, in, nin * sizeof *x);
    for (size_t j = 0; j < nin && !rc; j++) {
        double h = step_of(in[j], MBLX_USER_STEP), xs[4] = {in[j] + h, in[j] - h, in[j] + 2 * h, in[j] - 2 * h};
        for (int q = 0; q < 4 && !rc; q++) x[j] = xs[q], rc = call1(u, x, o[q], NULL, msg, sizeof msg);
        x[j] = in[j];
        for (size_t k = 0; k < nout && !rc; k++) {
            double d1 = (o[0][k] - o[1][k]) / (xs[0] - xs[1]), d2 = (o[2][k] - o[3][k]) / (xs[2] - xs[3]);
            double f = 0.5 * fabs(o[0][k] + o[1][k]);
            if (dif) dif[k * nin + j] = d1;
            if (err) err[k * nin + j] = fabs(d1 - d2) / 3.0 + 2.0 * DBL_EPSILON * (f > 1.0 ? f : 1.0) / h;
        }
    }
    mbl_free(s);
    if (rc) return mbl_error(st, rc, "%s", msg);
    mbl_status_clear(st);
    return 0;
}
