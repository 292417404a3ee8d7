/* Differentiation: first, second and third derivatives of every function against hand-written
 * formulas, complex-step and central finite differences; gradient (reverse mode) against
 * forward mode; sparse Jacobian and Hessian patterns; directional and total derivatives;
 * substitution. */
#include <complex.h>
#include <string.h>

#include "mblin/expr.h"
#include "test.h"

static const double PI = 3.14159265358979323846;

static mblx_graph *G;
static mblx_id X, Y, T;

/* deterministic pseudo-random numbers in [lo, hi) */
static unsigned long long rng_state = 88172645463325252ull;
static double urand(double lo, double hi)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return lo + (hi - lo) * (double)(rng_state >> 11) / 9007199254740992.0;
}

static double ev(mblx_id e, double x, double y)
{
    double s[3] = {x, y, 0.0}, v = NAN;
    mbl_status st;
    int rc = mblx_eval(G, e, s, &v, &st);
    if (rc) fprintf(stderr, "eval failed: %s\n", st.msg);
    return v;
}

/* ---- an independent complex evaluator over the node structure (for the complex step) ---- */

static double complex cpowi(double complex b, long n)
{
    double complex r = 1.0;
    int inv = n < 0;
    unsigned long k = inv ? (unsigned long)(-n) : (unsigned long)n;
    while (k) {
        if (k & 1) r *= b;
        b *= b;
        k >>= 1;
    }
    return inv ? 1.0 / r : r;
}

static double complex csign(double complex z)
{
    return (creal(z) > 0) - (creal(z) < 0);
}

/* Evaluate every node 0..e in handle order (operands come first): vals[sym index] complex. */
static double complex ceval(mblx_id e, const double complex *sv)
{
    double complex *v = malloc((e + 1) * sizeof *v);
    for (mblx_id i = 0; i <= e; i++) {
        int n = mblx_node_nargs(G, i);
        double complex a[5] = {0};
        for (int k = 0; k < n && k < 5; k++) a[k] = v[mblx_node_arg(G, i, k)];
        double complex r = 0;
        switch (mblx_node_op(G, i)) {
        case MBLX_OP_CONST: r = mblx_node_value(G, i); break;
        case MBLX_OP_SYMBOL: r = sv[mblx_symbol_index(G, i)]; break;
        case MBLX_OP_ADD:
            r = mblx_node_value(G, i);
            for (int k = 0; k < n; k++) r += v[mblx_node_arg(G, i, k)];
            break;
        case MBLX_OP_MUL:
            r = mblx_node_value(G, i);
            for (int k = 0; k < n; k++) r *= v[mblx_node_arg(G, i, k)];
            break;
        case MBLX_OP_POW: {
            double p;
            if (mblx_is_const(G, mblx_node_arg(G, i, 1), &p) && p == floor(p) && fabs(p) < 64)
                r = cpowi(a[0], (long)p);
            else
                r = cexp(a[1] * clog(a[0]));
            break;
        }
        case MBLX_OP_SIN: r = csin(a[0]); break;
        case MBLX_OP_COS: r = ccos(a[0]); break;
        case MBLX_OP_TAN: r = ctan(a[0]); break;
        case MBLX_OP_ASIN: r = casin(a[0]); break;
        case MBLX_OP_ACOS: r = cacos(a[0]); break;
        case MBLX_OP_ATAN: r = catan(a[0]); break;
        case MBLX_OP_ATAN2: {
            /* atan2(y, x) = atan(y/x) + branch of the real parts */
            r = catan(a[0] / a[1]);
            if (creal(a[1]) < 0) r += creal(a[0]) >= 0 ? PI : -PI;
            break;
        }
        case MBLX_OP_SINH: r = csinh(a[0]); break;
        case MBLX_OP_COSH: r = ccosh(a[0]); break;
        case MBLX_OP_TANH: r = ctanh(a[0]); break;
        case MBLX_OP_EXP: r = cexp(a[0]); break;
        case MBLX_OP_LOG: r = clog(a[0]); break;
        case MBLX_OP_SQRT: r = csqrt(a[0]); break;
        case MBLX_OP_ABS: r = a[0] * csign(a[0]); break;
        case MBLX_OP_SIGN: r = csign(a[0]); break;
        case MBLX_OP_MIN: r = creal(a[0]) < creal(a[1]) ? a[0] : a[1]; break;
        case MBLX_OP_MAX: r = creal(a[0]) > creal(a[1]) ? a[0] : a[1]; break;
        case MBLX_OP_STEP: {
            double complex x = a[0], x0 = a[1], h0 = a[2], x1 = a[3], h1 = a[4];
            if (creal(x) <= creal(x0)) r = h0;
            else if (creal(x) >= creal(x1)) r = h1;
            else {
                double complex s = (x - x0) / (x1 - x0);
                r = h0 + (h1 - h0) * s * s * (3.0 - 2.0 * s);
            }
            break;
        }
        default: r = NAN; break;
        }
        v[i] = r;
    }
    double complex r = v[e];
    free(v);
    return r;
}

/* complex-step derivative of e with respect to symbol index k at point p (3 symbols) */
static double cstep(mblx_id e, int k, const double *p)
{
    const double h = 1e-100;
    double complex sv[3] = {p[0], p[1], p[2]};
    sv[k] += h * I;
    return cimag(ceval(e, sv)) / h;
}

/* ---- per-function analytic derivatives --------------------------------------------------- */

typedef struct fcase {
    const char *name;
    mblx_id (*f)(mblx_graph *, mblx_id);
    double lo, hi;
    double (*d[3])(double);
} fcase;

static double sec2(double x) { return 1.0 / (cos(x) * cos(x)); }
static double d1_sin(double x) { return cos(x); }
static double d2_sin(double x) { return -sin(x); }
static double d3_sin(double x) { return -cos(x); }
static double d1_cos(double x) { return -sin(x); }
static double d2_cos(double x) { return -cos(x); }
static double d3_cos(double x) { return sin(x); }
static double d1_tan(double x) { return sec2(x); }
static double d2_tan(double x) { return 2 * tan(x) * sec2(x); }
static double d3_tan(double x) { return 2 * sec2(x) * (1 + 3 * tan(x) * tan(x)); }
static double d1_asin(double x) { return pow(1 - x * x, -0.5); }
static double d2_asin(double x) { return x * pow(1 - x * x, -1.5); }
static double d3_asin(double x) { return (1 + 2 * x * x) * pow(1 - x * x, -2.5); }
static double d1_acos(double x) { return -d1_asin(x); }
static double d2_acos(double x) { return -d2_asin(x); }
static double d3_acos(double x) { return -d3_asin(x); }
static double d1_atan(double x) { return 1 / (1 + x * x); }
static double d2_atan(double x) { return -2 * x / ((1 + x * x) * (1 + x * x)); }
static double d3_atan(double x) { return (6 * x * x - 2) / pow(1 + x * x, 3); }
static double d3_sinh(double x) { return cosh(x); }
static double d1_tanh(double x) { return 1 - tanh(x) * tanh(x); }
static double d2_tanh(double x) { return -2 * tanh(x) * d1_tanh(x); }
static double d3_tanh(double x) { return -2 * d1_tanh(x) * (1 - 3 * tanh(x) * tanh(x)); }
static double d1_log(double x) { return 1 / x; }
static double d2_log(double x) { return -1 / (x * x); }
static double d3_log(double x) { return 2 / (x * x * x); }
static double d1_sqrt(double x) { return 0.5 / sqrt(x); }
static double d2_sqrt(double x) { return -0.25 * pow(x, -1.5); }
static double d3_sqrt(double x) { return 0.375 * pow(x, -2.5); }
static double d1_abs(double x) { return (x > 0) - (x < 0); }
static double zero_fn(double x) { (void)x; return 0.0; }

static const fcase cases[] = {
    {"sin", mblx_sin, -3, 3, {d1_sin, d2_sin, d3_sin}},
    {"cos", mblx_cos, -3, 3, {d1_cos, d2_cos, d3_cos}},
    {"tan", mblx_tan, -1.2, 1.2, {d1_tan, d2_tan, d3_tan}},
    {"asin", mblx_asin, -0.9, 0.9, {d1_asin, d2_asin, d3_asin}},
    {"acos", mblx_acos, -0.9, 0.9, {d1_acos, d2_acos, d3_acos}},
    {"atan", mblx_atan, -3, 3, {d1_atan, d2_atan, d3_atan}},
    {"sinh", mblx_sinh, -3, 3, {cosh, sinh, d3_sinh}},
    {"cosh", mblx_cosh, -3, 3, {sinh, cosh, sinh}},
    {"tanh", mblx_tanh, -2, 2, {d1_tanh, d2_tanh, d3_tanh}},
    {"exp", mblx_exp, -3, 3, {exp, exp, exp}},
    {"log", mblx_log, 0.1, 5, {d1_log, d2_log, d3_log}},
    {"sqrt", mblx_sqrt, 0.1, 5, {d1_sqrt, d2_sqrt, d3_sqrt}},
    {"abs", mblx_abs, -3, 3, {d1_abs, zero_fn, zero_fn}},
    {"sign", mblx_sign, -3, 3, {zero_fn, zero_fn, zero_fn}},
};

/* |a - b| <= tol * max(|b|, scale) */
#define CHECK_NEAR(a, b, tol, scale)                                                          \
    do {                                                                                      \
        double a__ = (a), b__ = (b), s__ = fabs(b__) > (scale) ? fabs(b__) : (scale);         \
        CHECK_MSG(fabs(a__ - b__) <= (tol) * s__, "%.17g vs %.17g", a__, b__);               \
    } while (0)

static const double TOL_ANALYTIC = 1e-12;

TEST(functions_analytic)
{
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const fcase *fc = &cases[c];
        mblx_id f = fc->f(G, X), d[3];
        d[0] = mblx_diff(G, f, X);
        d[1] = mblx_diff(G, d[0], X);
        d[2] = mblx_diff(G, d[1], X);
        for (int k = 0; k < 3; k++) CHECK(d[k] != MBLX_NONE);
        for (int trial = 0; trial < 20; trial++) {
            double x = urand(fc->lo, fc->hi);
            if (fabs(x) < 1e-3) continue; /* abs/sign kink */
            for (int k = 0; k < 3; k++) {
                double got = ev(d[k], x, 0), want = fc->d[k](x);
                CHECK_MSG(fabs(got - want) <= TOL_ANALYTIC * fmax(1.0, fabs(want)),
                          "%s order %d at %.17g: %.17g vs %.17g", fc->name, k + 1, x, got, want);
            }
            /* complex step of the symbolic derivative of order k gives order k+1 */
            double p[3] = {x, 0, 0};
            for (int k = 0; k < 3; k++) {
                mblx_id base = k == 0 ? f : d[k - 1];
                double cs = cstep(base, 0, p), got = ev(d[k], x, 0);
                CHECK_MSG(fabs(got - cs) <= TOL_ANALYTIC * fmax(1.0, fabs(cs)),
                          "%s order %d complex step at %.17g: %.17g vs %.17g", fc->name, k + 1, x,
                          got, cs);
            }
        }
    }
}

/* 6th-order central differences for the 2nd and 3rd derivative of a function value */
static double fd2(mblx_id f, double x, double h)
{
    double f0 = ev(f, x, 0), f1 = ev(f, x + h, 0) + ev(f, x - h, 0),
           f2 = ev(f, x + 2 * h, 0) + ev(f, x - 2 * h, 0),
           f3 = ev(f, x + 3 * h, 0) + ev(f, x - 3 * h, 0);
    return (2 * f3 - 27 * f2 + 270 * f1 - 490 * f0) / (180 * h * h);
}

static double fd3(mblx_id f, double x, double h)
{
    double g1 = ev(f, x + h, 0) - ev(f, x - h, 0), g2 = ev(f, x + 2 * h, 0) - ev(f, x - 2 * h, 0),
           g3 = ev(f, x + 3 * h, 0) - ev(f, x - 3 * h, 0),
           g4 = ev(f, x + 4 * h, 0) - ev(f, x - 4 * h, 0);
    return (7 * g4 - 72 * g3 + 338 * g2 - 488 * g1) / (240 * h * h * h);
}

TEST(functions_finite_differences)
{
    /* higher derivatives of the function values themselves (no symbolic derivative involved) */
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const fcase *fc = &cases[c];
        if (fc->f == mblx_abs || fc->f == mblx_sign) continue;
        mblx_id f = fc->f(G, X);
        mblx_id d2 = mblx_diff(G, mblx_diff(G, f, X), X), d3 = mblx_diff(G, d2, X);
        for (int trial = 0; trial < 5; trial++) {
            double x = urand(fc->lo * 0.8 + 0.2 * fc->hi, fc->hi * 0.8 + 0.2 * fc->lo);
            CHECK_NEAR(ev(d2, x, 0), fd2(f, x, 1e-2), 1e-6, 1.0);
            CHECK_NEAR(ev(d3, x, 0), fd3(f, x, 2e-2), 1e-4, 1.0);
        }
    }
}

TEST(binary_functions)
{
    for (int trial = 0; trial < 20; trial++) {
        double x = urand(0.3, 3), y = urand(-3, 3);
        if (trial % 2) x = -x;
        double r2 = x * x + y * y;
        mblx_id a = mblx_atan2(G, Y, X);
        mblx_id ax = mblx_diff(G, a, X), axx = mblx_diff(G, ax, X), axxx = mblx_diff(G, axx, X);
        mblx_id ay = mblx_diff(G, a, Y), ayy = mblx_diff(G, ay, Y), ayyy = mblx_diff(G, ayy, Y);
        mblx_id axy = mblx_diff(G, ax, Y);
        CHECK_NEAR(ev(ax, x, y), -y / r2, TOL_ANALYTIC, 1.0);
        CHECK_NEAR(ev(axx, x, y), 2 * x * y / (r2 * r2), TOL_ANALYTIC, 1.0);
        CHECK_NEAR(ev(axxx, x, y), 2 * y * (y * y - 3 * x * x) / (r2 * r2 * r2), TOL_ANALYTIC, 1.0);
        CHECK_NEAR(ev(ay, x, y), x / r2, TOL_ANALYTIC, 1.0);
        CHECK_NEAR(ev(ayy, x, y), -2 * x * y / (r2 * r2), TOL_ANALYTIC, 1.0);
        CHECK_NEAR(ev(ayyy, x, y), 2 * x * (3 * y * y - x * x) / (r2 * r2 * r2), TOL_ANALYTIC, 1.0);
        CHECK_NEAR(ev(axy, x, y), (y * y - x * x) / (r2 * r2), TOL_ANALYTIC, 1.0);
        double p[3] = {x, y, 0};
        CHECK_NEAR(ev(ax, x, y), cstep(a, 0, p), TOL_ANALYTIC, 1.0);
        CHECK_NEAR(ev(ay, x, y), cstep(a, 1, p), TOL_ANALYTIC, 1.0);

        /* powers: x^p, a^x, x^y */
        double ax_ = fabs(x);
        mblx_id xp = mblx_powc(G, X, 2.5);
        mblx_id d1 = mblx_diff(G, xp, X), d2 = mblx_diff(G, d1, X), d3 = mblx_diff(G, d2, X);
        CHECK_NEAR(ev(d1, ax_, 0), 2.5 * pow(ax_, 1.5), TOL_ANALYTIC, 1.0);
        CHECK_NEAR(ev(d2, ax_, 0), 2.5 * 1.5 * pow(ax_, 0.5), TOL_ANALYTIC, 1.0);
        CHECK_NEAR(ev(d3, ax_, 0), 2.5 * 1.5 * 0.5 * pow(ax_, -0.5), TOL_ANALYTIC, 1.0);
        mblx_id xi = mblx_powc(G, X, -3);
        mblx_id e1 = mblx_diff(G, xi, X), e3 = mblx_diff(G, mblx_diff(G, e1, X), X);
        CHECK_NEAR(ev(e1, x, 0), -3 * pow(x, -4), TOL_ANALYTIC, 1.0);
        CHECK_NEAR(ev(e3, x, 0), -3 * -4 * -5 * pow(x, -6), TOL_ANALYTIC, 1.0);
        mblx_id ex = mblx_pow(G, mblx_const(G, 1.7), X);
        mblx_id ex3 = mblx_diff(G, mblx_diff(G, mblx_diff(G, ex, X), X), X);
        double l = log(1.7);
        CHECK_NEAR(ev(ex3, x, 0), pow(1.7, x) * l * l * l, TOL_ANALYTIC, 1.0);
        mblx_id xx = mblx_pow(G, X, X);
        mblx_id f1 = mblx_diff(G, xx, X), f2 = mblx_diff(G, f1, X), f3 = mblx_diff(G, f2, X);
        double L = log(ax_) + 1, P = pow(ax_, ax_);
        CHECK_NEAR(ev(f1, ax_, 0), P * L, TOL_ANALYTIC, 1.0);
        CHECK_NEAR(ev(f2, ax_, 0), P * (L * L + 1 / ax_), TOL_ANALYTIC, 1.0);
        CHECK_NEAR(ev(f3, ax_, 0), P * (L * L * L + 3 * L / ax_ - 1 / (ax_ * ax_)), TOL_ANALYTIC, 1.0);
        mblx_id xy = mblx_pow(G, X, Y);
        double q[3] = {ax_, y, 0};
        CHECK_NEAR(ev(mblx_diff(G, xy, X), ax_, y), cstep(xy, 0, q), TOL_ANALYTIC, 1.0);
        CHECK_NEAR(ev(mblx_diff(G, xy, Y), ax_, y), cstep(xy, 1, q), TOL_ANALYTIC, 1.0);

        /* min / max */
        mblx_id mn = mblx_min(G, X, mblx_scale(G, 2.0, Y)), mx = mblx_max(G, X, mblx_scale(G, 2.0, Y));
        double dmnx = x < 2 * y ? 1 : 0, dmxy = x > 2 * y ? 0 : 2;
        CHECK_NEAR(ev(mblx_diff(G, mn, X), x, y), dmnx, TOL_ANALYTIC, 1.0);
        CHECK_NEAR(ev(mblx_diff(G, mx, Y), x, y), dmxy, TOL_ANALYTIC, 1.0);
        CHECK_NEAR(ev(mblx_diff(G, mblx_diff(G, mn, X), X), x, y), 0.0, TOL_ANALYTIC, 1.0);
    }
}

TEST(smooth_step)
{
    /* step(x, x0, h0, x1, h1) with constant bounds, derivatives in x up to order 3 */
    double x0 = -0.5, x1 = 1.5, h0 = 2.0, h1 = -1.0, w = x1 - x0;
    mblx_id s = mblx_step(G, X, mblx_const(G, x0), mblx_const(G, h0), mblx_const(G, x1),
                          mblx_const(G, h1));
    mblx_id d1 = mblx_diff(G, s, X), d2 = mblx_diff(G, d1, X), d3 = mblx_diff(G, d2, X);
    for (int trial = 0; trial < 30; trial++) {
        double x = urand(-1.5, 2.5);
        double u = (x - x0) / w, in = x > x0 && x < x1;
        double v = x <= x0 ? h0 : x >= x1 ? h1 : h0 + (h1 - h0) * u * u * (3 - 2 * u);
        CHECK_NEAR(ev(s, x, 0), v, TOL_ANALYTIC, 1.0);
        CHECK_NEAR(ev(d1, x, 0), in ? (h1 - h0) * 6 * u * (1 - u) / w : 0.0, TOL_ANALYTIC, 1.0);
        CHECK_NEAR(ev(d2, x, 0), in ? (h1 - h0) * 6 * (1 - 2 * u) / (w * w) : 0.0, TOL_ANALYTIC, 1.0);
        CHECK_NEAR(ev(d3, x, 0), in ? -12 * (h1 - h0) / (w * w * w) : 0.0, TOL_ANALYTIC, 1.0);
    }
    /* derivatives with respect to the other arguments, against the complex step */
    mblx_id Z = T; /* third symbol (index 2) */
    mblx_id s2 = mblx_step(G, X, Y, Z, mblx_add(G, Y, mblx_const(G, 2.0)), mblx_mul(G, Y, Z));
    for (int trial = 0; trial < 20; trial++) {
        double p[3] = {urand(-1, 3), urand(-0.5, 0.5), urand(-2, 2)};
        for (int k = 0; k < 3; k++) {
            mblx_id sym = k == 0 ? X : k == 1 ? Y : Z;
            double got, s3[3] = {p[0], p[1], p[2]};
            mbl_status st;
            CHECK_EQ_INT(mblx_eval(G, mblx_diff(G, s2, sym), s3, &got, &st), 0);
            CHECK_NEAR(got, cstep(s2, k, p), TOL_ANALYTIC, 1.0);
        }
    }
}

/* random expression over x, y (domains kept safe) */
static mblx_id rand_expr(int depth)
{
    if (depth == 0) {
        double r = urand(0, 1);
        if (r < 0.35) return X;
        if (r < 0.7) return Y;
        return mblx_const(G, floor(urand(-4, 5)) / 2 + (r < 0.85 ? 0 : 0.3));
    }
    mblx_id a = rand_expr(depth - 1), b = rand_expr(depth - 1);
    mblx_id pos = mblx_add(G, mblx_const(G, 1.5), mblx_mul(G, a, a)); /* > 0 */
    switch ((int)urand(0, 16)) {
    case 0: return mblx_add(G, a, b);
    case 1: return mblx_sub(G, a, b);
    case 2: return mblx_mul(G, a, b);
    case 3: return mblx_div(G, a, pos);
    case 4: return mblx_powc(G, a, floor(urand(-2, 4)));
    case 5: return mblx_sin(G, a);
    case 6: return mblx_cos(G, a);
    case 7: return mblx_exp(G, mblx_tanh(G, a));
    case 8: return mblx_log(G, pos);
    case 9: return mblx_sqrt(G, pos);
    case 10: return mblx_atan(G, a);
    case 11: return mblx_atan2(G, a, pos);
    case 12: return mblx_asin(G, mblx_scale(G, 0.5, mblx_tanh(G, a)));
    case 13: return mblx_pow(G, pos, mblx_tanh(G, b));
    case 14: return mblx_scale(G, urand(-2, 2), mblx_mul(G, a, mblx_cosh(G, mblx_tanh(G, b))));
    default: return mblx_neg(G, mblx_mul(G, a, b));
    }
}

TEST(random_expressions_complex_step)
{
    for (int trial = 0; trial < 150; trial++) {
        mblx_id e = rand_expr(1 + trial % 5);
        mblx_id dx = mblx_diff(G, e, X), dy = mblx_diff(G, e, Y);
        mblx_id dxy = mblx_diff(G, dx, Y), dyx = mblx_diff(G, dy, X);
        double p[3] = {urand(-1.5, 1.5), urand(-1.5, 1.5), 0};
        double v[4], s[3] = {p[0], p[1], 0};
        mblx_id outs[4] = {dx, dy, dxy, dyx};
        mbl_status st;
        mblx_tape *tp = mblx_compile(G, 4, outs, &st);
        CHECK(tp != NULL);
        double *w = malloc(mblx_tape_work_size(tp) * sizeof *w);
        int rc = mblx_tape_eval(tp, s, v, w, &st);
        free(w);
        mblx_tape_free(tp);
        if (rc) continue; /* e.g. 0^-1 in a random expression */
        double e_val;
        if (mblx_eval(G, e, s, &e_val, &st)) continue; /* undefined (its derivatives are 0) */
        double scale = fmax(1.0, fabs(v[0]) + fabs(v[1]));
        CHECK_NEAR(v[0], cstep(e, 0, p), 1e-11, scale);
        CHECK_NEAR(v[1], cstep(e, 1, p), 1e-11, scale);
        CHECK_NEAR(v[2], cstep(dx, 1, p), 1e-10, fmax(1.0, fabs(v[2])));
        CHECK_NEAR(v[2], v[3], 1e-10, fmax(1.0, fabs(v[2])));
        /* reverse mode agrees with forward mode */
        mblx_id gr[2], sy[2] = {X, Y};
        CHECK_EQ_INT(mblx_gradient(G, e, 2, sy, gr), 0);
        CHECK_NEAR(ev(gr[0], p[0], p[1]), v[0], 1e-11, scale);
        CHECK_NEAR(ev(gr[1], p[0], p[1]), v[1], 1e-11, scale);
        /* directional derivative */
        mblx_id dirs[2] = {mblx_const(G, 0.3), T};
        mblx_id dd = mblx_dir_deriv(G, e, 2, sy, dirs);
        double s3[3] = {p[0], p[1], -0.7}, got;
        if (mblx_eval(G, dd, s3, &got, &st) == 0)
            CHECK_NEAR(got, 0.3 * v[0] - 0.7 * v[1], 1e-11, scale);
    }
}

TEST(derivative_forms)
{
    /* results are simplified and shared */
    CHECK(mblx_diff(G, mblx_powc(G, X, 2), X) == mblx_scale(G, 2, X));
    CHECK(mblx_diff(G, mblx_mul(G, X, Y), X) == Y);
    CHECK(mblx_diff(G, mblx_sin(G, X), X) == mblx_cos(G, X));
    CHECK(mblx_diff(G, mblx_sin(G, Y), X) == mblx_const(G, 0));
    CHECK(mblx_diff(G, X, X) == mblx_const(G, 1));
    CHECK(mblx_diff(G, mblx_exp(G, X), X) == mblx_exp(G, X));
    mblx_id e = mblx_mul(G, mblx_sin(G, X), mblx_cos(G, X));
    CHECK(mblx_diff(G, e, X) == mblx_diff(G, e, X));
    /* a polynomial vanishes after enough derivatives */
    mblx_id p = mblx_add(G, mblx_powc(G, X, 3), mblx_mul(G, X, Y));
    mblx_id d = p;
    for (int k = 0; k < 4; k++) d = mblx_diff(G, d, X);
    CHECK(d == mblx_const(G, 0));
}

TEST(jacobian_patterns)
{
    /* f0 = x*y, f1 = sin(z), f2 = x - x + 3 (constant after simplification), f3 = y^2 + z */
    mblx_id Z = mblx_symbol(G, "z");
    mblx_id f[4] = {mblx_mul(G, X, Y), mblx_sin(G, Z), mblx_add(G, mblx_sub(G, X, X), mblx_const(G, 3)),
                    mblx_add(G, mblx_powc(G, Y, 2), Z)};
    mblx_id sy[3] = {X, Y, Z};
    mblx_sparse J;
    CHECK_EQ_INT(mblx_jacobian(G, 4, f, 3, sy, &J), 0);
    CHECK_EQ_INT(J.nrows, 4);
    CHECK_EQ_INT(J.ncols, 3);
    int colptr[4] = {0, 1, 3, 5}, rowidx[5] = {0, 0, 3, 1, 3};
    for (int j = 0; j < 4; j++) CHECK_EQ_INT(J.colptr[j], colptr[j]);
    for (int k = 0; k < 5; k++) CHECK_EQ_INT(J.rowidx[k], rowidx[k]);
    CHECK(J.node[0] == Y);
    CHECK(J.node[1] == X);
    CHECK(J.node[2] == mblx_scale(G, 2, Y));
    CHECK(J.node[3] == mblx_cos(G, Z));
    CHECK(J.node[4] == mblx_const(G, 1));
    mblx_sparse_free(&J);
    mblx_sparse_free(&J); /* zeroed: safe twice */
    mblx_sparse_free(NULL);
    /* derivative that cancels structurally: d/dx (x*y - x*y + y) = 0 is dropped */
    mblx_id g2[1] = {mblx_add(G, mblx_sub(G, mblx_mul(G, X, Y), mblx_mul(G, Y, X)), Y)};
    CHECK_EQ_INT(mblx_jacobian(G, 1, g2, 3, sy, &J), 0);
    CHECK_EQ_INT(J.colptr[3], 1);
    mblx_sparse_free(&J);
    /* duplicate symbols are rejected */
    mblx_id dup[2] = {X, X};
    CHECK(mblx_jacobian(G, 1, f, 2, dup, &J) == MBL_EARG);
    mblx_graph_clear_status(G);
}

TEST(hessian_large)
{
    /* T = sum_i 0.5 m_i (v_{2i}^2 + v_{2i+1}^2) + c v_{2i} v_{2i+1} cos(q_i):
     * the Hessian in v is block diagonal: 3 nonzeros per 2x2 block pair -> 4 per block */
    enum { NB = 10000 };
    mblx_graph *g = mblx_graph_new();
    mblx_id *v = malloc(2 * NB * sizeof *v), *t = malloc(NB * sizeof *t);
    char nm[32];
    for (int i = 0; i < 2 * NB; i++) {
        snprintf(nm, sizeof nm, "v%d", i);
        v[i] = mblx_symbol(g, nm);
    }
    for (int i = 0; i < NB; i++) {
        snprintf(nm, sizeof nm, "q%d", i);
        mblx_id q = mblx_symbol(g, nm);
        mblx_id a = mblx_scale(g, 0.5 * (1 + i % 7), mblx_add(g, mblx_powc(g, v[2 * i], 2), mblx_powc(g, v[2 * i + 1], 2)));
        mblx_id b = mblx_product(g, 3, (mblx_id[]){v[2 * i], v[2 * i + 1], mblx_cos(g, q)});
        t[i] = mblx_add(g, a, mblx_scale(g, 0.25, b));
    }
    mblx_id T = mblx_sum(g, NB, t);
    mblx_sparse H;
    CHECK_EQ_INT(mblx_hessian(g, T, 2 * NB, v, &H), 0);
    CHECK_EQ_INT(H.colptr[2 * NB], 4 * NB);
    CHECK_EQ_INT(H.rowidx[H.colptr[6]], 6);
    CHECK_EQ_INT(H.rowidx[H.colptr[6] + 1], 7);
    CHECK(H.node[H.colptr[6]] == mblx_const(g, 0.5 * (1 + 3 % 7) * 2));
    /* the off-diagonal entry is 0.25 cos(q3) */
    CHECK(H.node[H.colptr[6] + 1] == mblx_scale(g, 0.25, mblx_cos(g, mblx_symbol(g, "q3"))));
    mblx_sparse_free(&H);
    CHECK_EQ_INT(mblx_graph_status(g, NULL), 0);
    free(v);
    free(t);
    mblx_graph_free(g);
}

TEST(total_derivative_and_subst)
{
    /* phi = x*cos(y) + t^2; dphi/dt = xd*cos(y) - x*sin(y)*yd + 2t */
    mblx_id xd = mblx_symbol(G, "xd"), yd = mblx_symbol(G, "yd");
    mblx_id phi = mblx_add(G, mblx_mul(G, X, mblx_cos(G, Y)), mblx_powc(G, T, 2));
    mblx_id q[2] = {X, Y}, dq[2] = {xd, yd};
    mblx_id pd = mblx_total_der(G, phi, 2, q, dq, T);
    size_t ns = mblx_symbol_count(G);
    double *s = calloc(ns, sizeof *s);
    double x = 0.7, y = -1.1, t = 0.4, vx = 1.3, vy = -0.2;
    s[mblx_symbol_index(G, X)] = x;
    s[mblx_symbol_index(G, Y)] = y;
    s[mblx_symbol_index(G, T)] = t;
    s[mblx_symbol_index(G, xd)] = vx;
    s[mblx_symbol_index(G, yd)] = vy;
    double got;
    mbl_status st;
    CHECK_EQ_INT(mblx_eval(G, pd, s, &got, &st), 0);
    CHECK_NEAR(got, vx * cos(y) - x * sin(y) * vy + 2 * t, TOL_ANALYTIC, 1.0);
    /* second total derivative contains xdd etc. when chained with accelerations */
    mblx_id pdt = mblx_total_der(G, phi, 2, q, dq, MBLX_NONE);
    CHECK_EQ_INT(mblx_eval(G, pdt, s, &got, &st), 0);
    CHECK_NEAR(got, vx * cos(y) - x * sin(y) * vy, TOL_ANALYTIC, 1.0);
    /* substitution: x -> y^2, y -> x (simultaneous) */
    mblx_id r[2] = {mblx_powc(G, Y, 2), X};
    mblx_id sub = mblx_subst(G, phi, 2, q, r);
    CHECK(sub == mblx_add(G, mblx_mul(G, mblx_powc(G, Y, 2), mblx_cos(G, X)), mblx_powc(G, T, 2)));
    mblx_id back = mblx_subst(G, mblx_sub(G, X, Y), 1, (mblx_id[]){X}, (mblx_id[]){Y});
    CHECK(back == mblx_const(G, 0));
    CHECK(mblx_subst(G, phi, 1, (mblx_id[]){xd}, (mblx_id[]){Y}) == phi);
    free(s);
}

/* mblx_subst_many equals mblx_subst root by root: shared nodes, a root that does not depend on
 * the symbols first (no stale memo from the traversal before it), the outputs over the inputs */
TEST(subst_many)
{
    mblx_graph *g = mblx_graph_new();
    mblx_id x = mblx_symbol(g, "x"), y = mblx_symbol(g, "y"), p = mblx_symbol(g, "p"), z = mblx_symbol(g, "z");
    mblx_id sh = mblx_let(g, mblx_mul(g, mblx_sin(g, x), y));
    mblx_id e[4] = {mblx_cos(g, z), mblx_mul(g, p, sh), mblx_add(g, mblx_mul(g, p, p), sh), mblx_exp(g, mblx_mul(g, p, x))};
    CHECK(mblx_diff(g, e[3], x) != MBLX_NONE); /* a traversal whose memo the first root must not see */
    mblx_id syms[2] = {p, x}, repl[2] = {mblx_add(g, y, z), mblx_cos(g, y)}, want[4], got[4];
    for (int i = 0; i < 4; i++) want[i] = mblx_subst(g, e[i], 2, syms, repl);
    CHECK_EQ_INT(mblx_subst_many(g, 4, e, 2, syms, repl, got), 0);
    for (int i = 0; i < 4; i++) CHECK(got[i] == want[i]);
    CHECK(got[0] == e[0]);
    CHECK_EQ_INT(mblx_subst_many(g, 4, e, 2, syms, repl, e), 0); /* in place */
    for (int i = 0; i < 4; i++) CHECK(e[i] == want[i]);
    CHECK_EQ_INT(mblx_graph_status(g, NULL), 0);
    mblx_graph_free(g);
}

TEST(deep_chain_diff)
{
    /* 1e5 nested operations: differentiate, compile, evaluate, print, free */
    enum { N = 100000 };
    mblx_graph *g = mblx_graph_new();
    mblx_id x = mblx_symbol(g, "x"), e = x;
    for (int i = 0; i < N; i++) e = mblx_sin(g, mblx_add(g, e, mblx_scale(g, 1e-3, x)));
    mblx_id d = mblx_diff(g, e, x);
    CHECK(d != MBLX_NONE);
    mblx_id gr;
    CHECK_EQ_INT(mblx_gradient(g, e, 1, &x, &gr), 0);
    double xv = 0.3, vd, vg, v0 = xv, dd = 1;
    for (int i = 0; i < N; i++) {
        dd = cos(v0 + 1e-3 * xv) * (dd + 1e-3);
        v0 = sin(v0 + 1e-3 * xv);
    }
    mbl_status st;
    CHECK_EQ_INT(mblx_eval(g, d, &xv, &vd, &st), 0);
    CHECK_EQ_INT(mblx_eval(g, gr, &xv, &vg, &st), 0);
    CHECK_NEAR(vd, dd, 1e-9, 1e-300);
    CHECK_NEAR(vg, dd, 1e-9, 1e-300);
    /* printing expands the DAG into a tree: print the chain itself (linear text) */
    char *s = mblx_print_alloc(g, e, &st);
    CHECK(s != NULL && strlen(s) > (size_t)N);
    mbl_free(s);
    mblx_graph_free(g);
}

/* A large seed set given out of order (placed by symbol index, mblx__seeds_by_symbol) gives the
 * node the ascending order gives, and a symbol listed twice among many is still refused; a gradient
 * of many like terms (its products' and sums' memo) against the closed form. */
TEST(large_seed_sets_and_like_terms)
{
    enum { NS = 600 };
    mblx_graph *g = mblx_graph_new();
    mblx_id x[NS], y[NS], syms[2 * NS], rev[2 * NS], dirs[2 * NS], t[2 * NS];
    char name[32];
    mblx_id k = mblx_symbol(g, "k"), m = mblx_symbol(g, "m");
    for (int i = 0; i < NS; i++) {
        snprintf(name, sizeof name, "x%d", i), x[i] = mblx_symbol(g, name);
        snprintf(name, sizeof name, "y%d", i), y[i] = mblx_symbol(g, name);
    }
    /* sum_i k * (x_i^2 + y_i) + m * x_i */
    for (int i = 0; i < NS; i++) {
        mblx_id inner[2] = {mblx_powc(g, x[i], 2.0), y[i]};
        t[2 * i] = mblx_mul(g, k, mblx_sum(g, 2, inner));
        t[2 * i + 1] = mblx_mul(g, m, x[i]);
    }
    /* the odd i's first terms times w (another adjoint for the same products' operands) */
    mblx_id w = mblx_symbol(g, "w"), odd[NS / 2], rest[2 * NS];
    size_t nr = 0;
    for (int i = 0; i < NS; i++) {
        if (i % 2) odd[i / 2] = t[2 * i];
        else rest[nr++] = t[2 * i];
        rest[nr++] = t[2 * i + 1];
    }
    rest[nr++] = mblx_mul(g, w, mblx_sum(g, NS / 2, odd));
    mblx_id e = mblx_sum(g, nr, rest);
    for (int i = 0; i < NS; i++) syms[2 * i] = x[i], syms[2 * i + 1] = y[i];
    for (int j = 0; j < 2 * NS; j++) rev[j] = syms[2 * NS - 1 - j], dirs[j] = mblx_const(g, (double)(j % 7) + 1.0);
    mblx_id rdirs[2 * NS];
    for (int j = 0; j < 2 * NS; j++) rdirs[j] = dirs[2 * NS - 1 - j];
    mblx_id d1 = mblx_dir_deriv(g, e, 2 * NS, syms, dirs), d2 = mblx_dir_deriv(g, e, 2 * NS, rev, rdirs);
    CHECK(d1 != MBLX_NONE);
    CHECK_EQ_INT((int)d1, (int)d2);

    /* the gradient at a point: d/dx_i = 2 k x_i + m, d/dy_i = k (times w for odd i) */
    mblx_id grad[2 * NS];
    CHECK_EQ_INT(mblx_gradient(g, e, 2 * NS, syms, grad), 0);
    size_t nsym = 3 + 2 * (size_t)NS;
    double *val = calloc(nsym, sizeof *val);
    CHECK(val != NULL);
    if (val) {
        val[mblx_symbol_index(g, k)] = 1.7, val[mblx_symbol_index(g, m)] = -0.3, val[mblx_symbol_index(g, w)] = 2.5;
        for (int i = 0; i < NS; i++) val[mblx_symbol_index(g, x[i])] = 0.01 * i - 2.0, val[mblx_symbol_index(g, y[i])] = 1.0;
        for (int i = 0; i < NS; i++) {
            double gx = NAN, gy = NAN;
            mbl_status st;
            CHECK_EQ_INT(mblx_eval(g, grad[2 * i], val, &gx, &st), 0);
            CHECK_EQ_INT(mblx_eval(g, grad[2 * i + 1], val, &gy, &st), 0);
            double wi = i % 2 ? 2.5 : 1.0;
            CHECK_NEAR(gx, wi * 2 * 1.7 * (0.01 * i - 2.0) - 0.3, 1e-14, 1.0);
            CHECK_NEAR(gy, wi * 1.7, 1e-14, 1.0);
        }
        free(val);
    }

    /* a symbol twice among many, out of order: refused */
    rev[10] = rev[500];
    CHECK(mblx_dir_deriv(g, e, 2 * NS, rev, rdirs) == MBLX_NONE);
    mbl_status st;
    CHECK(mblx_graph_status(g, &st) != 0);
    CHECK(strstr(st.msg, "listed twice") != NULL);
    mblx_graph_free(g);
}

int main(void)
{
    G = mblx_graph_new();
    X = mblx_symbol(G, "x");
    Y = mblx_symbol(G, "y");
    T = mblx_symbol(G, "t");
    RUN(functions_analytic);
    RUN(functions_finite_differences);
    RUN(binary_functions);
    RUN(smooth_step);
    RUN(random_expressions_complex_step);
    RUN(derivative_forms);
    RUN(jacobian_patterns);
    RUN(hessian_large);
    RUN(total_derivative_and_subst);
    RUN(subst_many);
    RUN(deep_chain_diff);
    RUN(large_seed_sets_and_like_terms);
    CHECK_EQ_INT(mblx_graph_status(G, NULL), 0);
    mblx_graph_free(G);
    return test_summary("expr_diff");
}
