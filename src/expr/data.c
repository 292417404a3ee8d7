/* Functions of data (issue 35, item 1): data sets of piecewise polynomials kept by the graph
 * (copied into every tape that is compiled from it), the node MBLX_OP_DATA that evaluates one of
 * them or a derivative, and that node's value, printing and derivative rule.
 *
 * A node's value field encodes set * 32 + linear * 16 + dx * 4 + dy: the data set, linear
 * interpolation of its points (table) or its own pieces (spline, spline2), and the orders of
 * the derivative in x and y (0 .. 3, higher orders are the constant 0). Its derivative in its
 * first (second) operand is the same node with dx (dy) raised by one (mblx__data_partial). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "expr/expr_internal.h"

/* The largest derivative order a node carries (cubic pieces: the 4th derivative is 0). */
#define DATA_MAX_ORDER 3

static uint64_t encode(long k, int lin, int dx, int dy)
{
    return (uint64_t)k * 32u + (uint64_t)lin * 16u + (uint64_t)dx * 4u + (uint64_t)dy;
}

void mblx__data_decode(double code, long *k, int *lin, int *dx, int *dy)
{
    uint64_t c = (uint64_t)code;
    *k = (long)(c >> 5);
    *lin = (int)((c >> 4) & 1u);
    *dx = (int)((c >> 2) & 3u);
    *dy = (int)(c & 3u);
}

static void set_free(mblx__dataset *d)
{
    mbl_free(d->name);
    mbl_free(d->x);
    mbl_free(d->y);
    mbl_free(d->coef);
    mbl_free(d->lin);
    memset(d, 0, sizeof *d);
}

void mblx__data_free(mblx__dataset *d, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) set_free(&d[i]);
    mbl_free(d);
}

static double *dup_arr(const double *a, size_t n)
{
    double *r = mbl_alloc_array(n ? n : 1, sizeof *r);
    if (r && n) memcpy(r, a, n * sizeof *r);
    return r;
}

/* A deep copy of set s into d (zeroed first); -1 when out of memory (d then freed). */
static int set_copy(mblx__dataset *d, const mblx__dataset *s)
{
    memset(d, 0, sizeof *d);
    *d = *s;
    size_t ncell = s->ny ? (size_t)(s->nx - 1) * (s->ny - 1) * 16 : (size_t)(s->nx - 1) * 4;
    size_t ln = strlen(s->name);
    d->name = mbl_malloc(ln + 1);
    d->x = dup_arr(s->x, s->nx);
    d->y = s->ny ? dup_arr(s->y, s->ny) : NULL;
    d->coef = dup_arr(s->coef, ncell);
    d->lin = s->lin ? dup_arr(s->lin, (size_t)(s->nx - 1) * 4) : NULL;
    if (!d->name || !d->x || (s->ny && !d->y) || !d->coef || (s->lin && !d->lin)) {
        if (d->name) d->name[0] = '\0';
        set_free(d);
        return -1;
    }
    memcpy(d->name, s->name, ln + 1);
    return 0;
}

mblx__dataset *mblx__data_copy_all(const mblx__dataset *s, uint32_t n)
{
    mblx__dataset *d = mbl_calloc(n ? n : 1, sizeof *d);
    if (!d) return NULL;
    for (uint32_t i = 0; i < n; i++)
        if (set_copy(&d[i], &s[i])) {
            mblx__data_free(d, i);
            return NULL;
        }
    return d;
}

static int is_ident(const char *s)
{
    if (!s || !(*s == '_' || (*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z'))) return 0;
    for (; *s; s++)
        if (!(*s == '_' || (*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9')))
            return 0;
    return 1;
}

static int increasing(const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]) || (i && !(x[i] > x[i - 1]))) return 0;
    return 1;
}

long mblx_data_add(mblx_graph *g, const mblx_data_def *d)
{
    if (!g) return -1;
    if (!d || !is_ident(d->name))
        return (mblx__fail(g, MBL_EARG, "mblx_data_add: a data set needs an identifier as its name"), -1);
    const char *nm = d->name;
    if (mblx_data_find(g, nm, strlen(nm)) >= 0)
        return (mblx__fail(g, MBL_EARG, "mblx_data_add: data set '%s' given twice", nm), -1);
    if (d->nx < 2 || (d->ny == 1) || !d->x || !d->z || (d->ny && (!d->y || !d->coef)))
        return (mblx__fail(g, MBL_EARG, "mblx_data_add: data set '%s' needs at least 2 points per axis", nm), -1);
    if (d->nx > UINT32_MAX / 2 || d->ny > UINT32_MAX / 2 || (d->ny && d->nx > ((size_t)1 << 40) / d->ny))
        return (mblx__fail(g, MBL_EARG, "mblx_data_add: data set '%s' is too large", nm), -1);
    if (!increasing(d->x, d->nx) || (d->ny && !increasing(d->y, d->ny)))
        return (mblx__fail(g, MBL_EARG, "mblx_data_add: data set '%s': breakpoints must increase strictly", nm), -1);
    size_t nz = d->ny ? d->nx * d->ny : d->nx;
    size_t nc = d->ny ? (d->nx - 1) * (d->ny - 1) * 16 : (d->nx - 1) * 4;
    for (size_t i = 0; i < nz; i++)
        if (!isfinite(d->z[i])) return (mblx__fail(g, MBL_EARG, "mblx_data_add: data set '%s': non-finite value", nm), -1);
    for (size_t i = 0; d->coef && i < nc; i++)
        if (!isfinite(d->coef[i]))
            return (mblx__fail(g, MBL_EARG, "mblx_data_add: data set '%s': non-finite coefficient", nm), -1);
    if (g->ndata % 8 == 0) {
        mblx__dataset *nd = mbl_realloc(g->data, (g->ndata + 8) * sizeof *nd);
        if (!nd) return (mblx__oom(g), -1);
        g->data = nd;
    }
    mblx__dataset *s = &g->data[g->ndata];
    memset(s, 0, sizeof *s);
    s->dim = d->ny ? 2 : 1;
    s->nx = (uint32_t)d->nx;
    s->ny = (uint32_t)d->ny;
    s->extrap = d->extrapolate == MBLX_EXTRAP_LINEAR;
    s->name = mbl_malloc(strlen(nm) + 1);
    s->x = dup_arr(d->x, d->nx);
    s->y = d->ny ? dup_arr(d->y, d->ny) : NULL;
    s->lin = d->ny ? NULL : mbl_alloc_array(nc, sizeof *s->lin);
    s->coef = d->coef ? dup_arr(d->coef, nc) : mbl_alloc_array(nc, sizeof *s->coef);
    if (!s->name || !s->x || (d->ny && !s->y) || (!d->ny && !s->lin) || !s->coef) {
        if (s->name) s->name[0] = '\0';
        set_free(s);
        return (mblx__oom(g), -1);
    }
    memcpy(s->name, nm, strlen(nm) + 1);
    if (!d->ny) {
        for (size_t i = 0; i + 1 < d->nx; i++) {
            double *c = s->lin + 4 * i;
            c[0] = d->z[i];
            c[1] = (d->z[i + 1] - d->z[i]) / (d->x[i + 1] - d->x[i]);
            c[2] = c[3] = 0.0;
        }
        if (!d->coef) memcpy(s->coef, s->lin, nc * sizeof *s->coef);
    }
    return (long)g->ndata++;
}

long mblx_data_find(const mblx_graph *g, const char *name, size_t len)
{
    if (!g || !name) return -1;
    for (uint32_t i = 0; i < g->ndata; i++)
        if (strlen(g->data[i].name) == len && !memcmp(g->data[i].name, name, len)) return (long)i;
    return -1;
}

size_t mblx_data_count(const mblx_graph *g) { return g ? g->ndata : 0; }

const char *mblx_data_name(const mblx_graph *g, long k, int *dim)
{
    int ok = g && k >= 0 && (uint32_t)k < g->ndata;
    if (dim) *dim = ok ? (int)g->data[k].dim : 0;
    return ok ? g->data[k].name : NULL;
}

int mblx_data_copy(mblx_graph *dst, const mblx_graph *src)
{
    if (!dst || !src) return MBL_EARG;
    if (dst->ndata) {
        mblx__fail(dst, MBL_EARG, "mblx_data_copy: the destination has data sets");
        return MBL_EARG;
    }
    if (!src->ndata) return 0;
    mblx__dataset *d = mblx__data_copy_all(src->data, src->ndata);
    if (!d) {
        mblx__oom(dst);
        return MBL_ENOMEM;
    }
    mbl_free(dst->data);
    dst->data = d;
    dst->ndata = src->ndata;
    return 0;
}

/* ---- evaluation ------------------------------------------------------------------------------ */

/* The piece of breakpoints x[0..n) that holds v (the last one holds its right end). */
static uint32_t piece(const double *x, uint32_t n, double v)
{
    uint32_t lo = 0, hi = n - 1; /* x[lo] <= v < x[hi] */
    while (hi - lo > 1) {
        uint32_t m = lo + (hi - lo) / 2;
        if (v < x[m]) hi = m;
        else lo = m;
    }
    return lo;
}

/* d^k/dt^k of t^a. */
static double dpow(int a, int k, double t)
{
    if (k > a) return 0.0;
    double f = 1.0, r = 1.0;
    for (int i = 0; i < k; i++) f *= (double)(a - i);
    for (int i = 0; i < a - k; i++) r *= t;
    return f * r;
}

/* The pieces' derivative (kx, ky) at (x, y), inside the range. */
static double raw(const mblx__dataset *d, int lin, int kx, int ky, double x, double y)
{
    if (kx > DATA_MAX_ORDER || ky > DATA_MAX_ORDER) return 0.0;
    uint32_t i = piece(d->x, d->nx, x);
    double t = x - d->x[i];
    if (d->dim == 1) {
        const double *c = (lin ? d->lin : d->coef) + 4 * (size_t)i;
        double s = 0.0;
        for (int a = kx; a < 4; a++) s += c[a] * dpow(a, kx, t);
        return s;
    }
    uint32_t j = piece(d->y, d->ny, y);
    double u = y - d->y[j];
    const double *c = d->coef + 16 * ((size_t)i * (d->ny - 1) + j);
    double s = 0.0;
    for (int a = kx; a < 4; a++) {
        double sb = 0.0;
        for (int b = ky; b < 4; b++) sb += c[4 * a + b] * dpow(b, ky, u);
        s += sb * dpow(a, kx, t);
    }
    return s;
}

/* The terms of an axis: inside the range, the order k at v; outside (extrapolation linear),
 * f(end) + f'(end) (v - end) and its derivatives. Returns the number of terms, -1 when v is
 * outside and extrapolation is refused (or v is NaN). */
static int axis(const double *xs, uint32_t n, int extrap, int k, double v, double *vc, int ko[2], double w[2])
{
    if (v >= xs[0] && v <= xs[n - 1]) {
        *vc = v;
        ko[0] = k;
        w[0] = 1.0;
        return 1;
    }
    if (!extrap || isnan(v)) return -1;
    *vc = v < xs[0] ? xs[0] : xs[n - 1];
    if (k == 0) {
        ko[0] = 0;
        w[0] = 1.0;
        ko[1] = 1;
        w[1] = v - *vc;
        return 2;
    }
    if (k == 1) {
        ko[0] = 1;
        w[0] = 1.0;
        return 1;
    }
    return 0;
}

double mblx__data_value(const mblx__dataset *sets, uint32_t nsets, double code, double x, double y)
{
    long k;
    int lin, dx, dy;
    mblx__data_decode(code, &k, &lin, &dx, &dy);
    if (k < 0 || (uint32_t)k >= nsets) return NAN;
    const mblx__dataset *d = &sets[k];
    double xc, yc = 0.0, wx[2], wy[2] = {1.0, 0.0};
    int kx[2], ky[2] = {dy, 0};
    int nx = axis(d->x, d->nx, d->extrap, dx, x, &xc, kx, wx), ny = 1;
    if (d->dim == 2) ny = axis(d->y, d->ny, d->extrap, dy, y, &yc, ky, wy);
    if (nx < 0 || ny < 0) return NAN;
    double s = 0.0;
    for (int a = 0; a < nx; a++)
        for (int b = 0; b < ny; b++) s += wx[a] * wy[b] * raw(d, lin, kx[a], ky[b], xc, yc);
    return s;
}

double mblx__data_partial_value(const mblx__dataset *sets, uint32_t nsets, double code, int i, double x, double y)
{
    long k;
    int lin, dx, dy;
    mblx__data_decode(code, &k, &lin, &dx, &dy);
    if (k < 0 || (uint32_t)k >= nsets) return NAN;
    if (i == 1 && sets[k].dim != 2) return 0.0; /* a 1-D set's tape instruction reads x twice */
    dx += i == 0;
    dy += i == 1;
    if (dx > DATA_MAX_ORDER || dy > DATA_MAX_ORDER || (lin && dx > 1)) return 0.0; /* as mblx_data_call */
    return mblx__data_value(sets, nsets, (double)encode(k, lin, dx, dy), x, y);
}

int mblx_data_eval(const mblx_graph *g, long k, int linear, int dx, int dy, double x, double y, double *value)
{
    if (!g || k < 0 || (uint32_t)k >= g->ndata || dx < 0 || dy < 0 || (linear && g->data[k].dim != 1))
        return MBL_EARG;
    if (dx > DATA_MAX_ORDER || dy > DATA_MAX_ORDER || (linear && dx > 1)) {
        *value = 0.0;
        return 0;
    }
    double v = mblx__data_value(g->data, g->ndata, (double)encode(k, linear != 0, dx, dy), x, y);
    if (isnan(v)) return MBL_EDOMAIN;
    *value = v;
    return 0;
}

/* "spline 'name' at x = 3 outside its data [0, 2] (extrapolate: no)": the diagnosis of a NaN. */
void mblx__data_why(const mblx__dataset *sets, uint32_t nsets, double code, double x, double y, char *buf,
                    size_t size)
{
    long k;
    int lin, dx, dy;
    mblx__data_decode(code, &k, &lin, &dx, &dy);
    if (k < 0 || (uint32_t)k >= nsets) {
        snprintf(buf, size, "unknown data set %ld", k);
        return;
    }
    const mblx__dataset *d = &sets[k];
    const char *fn = mblx__data_fn(d, lin);
    int inx = x >= d->x[0] && x <= d->x[d->nx - 1];
    char v[MBLX__NUM_BUF], lo[MBLX__NUM_BUF], hi[MBLX__NUM_BUF]; /* shortest forms that read back */
    if (!inx || d->dim == 2) {
        const double *ax = inx ? d->y : d->x;
        uint32_t n = inx ? d->ny : d->nx;
        double val = inx ? y : x;
        if (isfinite(val)) mblx__format_number(val, v);
        else snprintf(v, sizeof v, "%g", val);
        mblx__format_number(ax[0], lo);
        mblx__format_number(ax[n - 1], hi);
        snprintf(buf, size, "%s '%s': %s = %s outside its data [%s, %s] (extrapolate: no)", fn, d->name, inx ? "y" : "x",
                 v, lo, hi);
    } else
        snprintf(buf, size, "%s '%s': non-finite result", fn, d->name);
}

const char *mblx__data_fn(const mblx__dataset *d, int lin)
{
    return d->dim == 2 ? "spline2" : lin ? "table" : "spline";
}

/* ---- the node ----------------------------------------------------------------------------- */

mblx_id mblx_data_call(mblx_graph *g, long k, int linear, int dx, int dy, mblx_id x, mblx_id y)
{
    if (!g) return XNONE;
    if (!mblx__valid(g, x) || (y != XNONE && !mblx__valid(g, y))) return XNONE;
    if (k < 0 || (uint32_t)k >= g->ndata) return mblx__fail(g, MBL_EARG, "mblx_data_call: no data set %ld", k);
    const mblx__dataset *d = &g->data[k];
    if (dx < 0 || dy < 0) return mblx__fail(g, MBL_EARG, "mblx_data_call: negative derivative order");
    if ((d->dim == 2) != (y != XNONE) || (d->dim == 1 && dy) || (linear && d->dim != 1))
        return mblx__fail(g, MBL_EARG, "mblx_data_call: data set '%s' is %d-D", d->name, (int)d->dim);
    if (dx > DATA_MAX_ORDER || dy > DATA_MAX_ORDER || (linear && dx > 1)) return g->zero;
    uint32_t a[2] = {x, y};
    uint32_t n = d->dim;
    double code = (double)encode(k, linear != 0, dx, dy);
    double vx, vy = 0.0;
    if (mblx_is_const(g, x, &vx) && (n == 1 || mblx_is_const(g, y, &vy))) {
        double v = mblx__data_value(g->data, g->ndata, code, vx, vy);
        if (isfinite(v)) return mblx_const(g, v);
    }
    return mblx__intern(g, MBLX_OP_DATA, code, n, a);
}

int mblx_data_node(const mblx_graph *g, mblx_id e, long *k, int *linear, int *dx, int *dy)
{
    if (!g || !mblx__valid(g, e) || g->nd[e].op != MBLX_OP_DATA) return 0;
    long kk;
    int l, x, y;
    mblx__data_decode(g->nd[e].val, &kk, &l, &x, &y);
    if (k) *k = kk;
    if (linear) *linear = l;
    if (dx) *dx = x;
    if (dy) *dy = y;
    return 1;
}

mblx_id mblx__data_apply(mblx_graph *g, double code, size_t n, const mblx_id *args)
{
    long k;
    int lin, dx, dy;
    if (n < 1 || n > 2) return mblx__fail(g, MBL_EARG, "mblx_apply: data takes 1 or 2 operands, got %zu", n);
    mblx__data_decode(code, &k, &lin, &dx, &dy);
    return mblx_data_call(g, k, lin, dx, dy, args[0], n > 1 ? args[1] : XNONE);
}

mblx_id mblx__data_partial(mblx_graph *g, mblx_id v, const uint32_t *a, size_t i)
{
    long k;
    int lin, dx, dy;
    mblx__data_decode(g->nd[v].val, &k, &lin, &dx, &dy);
    return mblx_data_call(g, k, lin, dx + (i == 0), dy + (i == 1), a[0], g->nd[v].na > 1 ? a[1] : XNONE);
}
