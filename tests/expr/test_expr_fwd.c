/* Forward mode on tapes (issue 31, item 2; src/expr/tape_forward.c): every opcode's value and
 * derivatives along two symbols and a mixed direction against closed forms written out here
 * (the functions of data against the cubic polynomials their pieces are, as in
 * test_expr_data.c); every opcode of the tape is covered; an operand whose derivatives are 0
 * contributes 0 where its partial is infinite, a derivative that is infinite is an error naming
 * the expression; and mblx_fwdjac's pattern and coloring on a banded and an arrow matrix. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr/tape_internal.h"
#include "mblin/expr.h"
#include "expr_pool.h"
#include "test.h"

#include "poly_data.h"

static long add_poly(mblx_graph *g)
{
    double z[5], c[16];
    for (int i = 0; i < 5; i++) z[i] = p1(XS[i], 0);
    for (int i = 0; i < 4; i++)
        for (int a = 0; a < 4; a++) c[4 * i + a] = p1(XS[i], a) / (a == 3 ? 6 : a == 2 ? 2 : 1);
    mblx_data_def d = {"curve", 5, 0, XS, NULL, z, c, MBLX_EXTRAP_NONE};
    return mblx_data_add(g, &d);
}

static long add_poly2(mblx_graph *g)
{
    double z[20], c[4 * 3 * 16];
    static const double fact[4] = {1, 1, 2, 6};
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 4; j++) z[i * 4 + j] = q2(XS[i], YS[j], 0, 0);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3; j++)
            for (int a = 0; a < 4; a++)
                for (int b = 0; b < 4; b++)
                    c[(i * 3 + j) * 16 + 4 * a + b] = q2(XS[i], YS[j], a, b) / (fact[a] * fact[b]);
    mblx_data_def d = {"map", 5, 4, XS, YS, z, c, MBLX_EXTRAP_NONE};
    return mblx_data_add(g, &d);
}

/* the closed form of case k at (x, y): value, d/dx, d/dy */
typedef struct cf {
    double f, fx, fy;
} cf;

enum { NCASE = 38 };

static cf closed(int k, double x, double y)
{
    double s;
    switch (k) {
    case 0: return (cf){x + y, 1, 1};
    case 1: return (cf){x + 3, 1, 0};
    case 2: return (cf){x * y, y, x};
    case 3: return (cf){3 * x, 3, 0};
    case 4: return (cf){x + y + 2, 1, 1};
    case 5: return (cf){2 * x * y, 2 * y, 2 * x};
    case 6: return (cf){x * x, 2 * x, 0};
    case 7: return (cf){x * x * x, 3 * x * x, 0};
    case 8: return (cf){1 / y, 0, -1 / (y * y)};
    case 9: return (cf){1 / (y * y), 0, -2 / (y * y * y)};
    case 10: return (cf){sqrt(y), 0, 0.5 / sqrt(y)};
    case 11: return (cf){pow(y, 1.7), 0, 1.7 * pow(y, 0.7)};
    case 12: return (cf){pow(y, x), pow(y, x) * log(y), x * pow(y, x - 1)};
    case 13: return (cf){sqrt(x * x + y), x / sqrt(x * x + y), 0.5 / sqrt(x * x + y)};
    case 14: return (cf){sin(x), cos(x), 0};
    case 15: return (cf){cos(x), -sin(x), 0};
    case 16: return (cf){tan(x), 1 / (cos(x) * cos(x)), 0};
    case 17: return (cf){asin(x), 1 / sqrt(1 - x * x), 0};
    case 18: return (cf){acos(x), -1 / sqrt(1 - x * x), 0};
    case 19: return (cf){atan(x), 1 / (1 + x * x), 0};
    case 20: return (cf){atan2(y, x), -y / (x * x + y * y), x / (x * x + y * y)};
    case 21: return (cf){sinh(x), cosh(x), 0};
    case 22: return (cf){cosh(x), sinh(x), 0};
    case 23: return (cf){tanh(x), 1 / (cosh(x) * cosh(x)), 0};
    case 24: return (cf){exp(x), exp(x), 0};
    case 25: return (cf){log(y), 0, 1 / y};
    case 26: return (cf){fabs(x - y), x > y ? 1 : -1, x > y ? -1 : 1};
    case 27: return (cf){(x > y) - (x < y) + x, 1, 0}; /* sign(x - y) + x */
    case 28: return (cf){fmin(x, y), x < y, x > y};
    case 29: return (cf){fmax(x, y), x > y, x < y};
    case 30: return (cf){fmin(x, 2 * x - 0.5), x < 2 * x - 0.5 ? 1 : 2, 0};
    case 31: { /* step(x, 0.2, y, 0.9, 2): h0 = y */
        double c = fmin(fmax((x - 0.2) / 0.7, 0), 1), u = c * c * (3 - 2 * c);
        return (cf){y + (2 - y) * u, (2 - y) * 6 * c * (1 - c) / 0.7, 1 - u};
    }
    case 32: { /* step(x^2, y, 0, 2y, x): all five operands vary */
        double X = x * x, w = y, c = fmin(fmax((X - y) / w, 0), 1), u = c * c * (3 - 2 * c);
        double D = 6 * c * (1 - c) * x; /* d step / d c times (h1 - h0) */
        double dcdX = 1 / w, dcdy = (c > 0 && c < 1) ? (-w - (X - y)) / (w * w) : 0;
        return (cf){x * u, D * dcdX * 2 * x + u, D * dcdy};
    }
    case 33: return (cf){p1(x, 0), p1(x, 1), 0};                  /* spline(curve, x) */
    case 34: return (cf){p1(x * y, 0), y * p1(x * y, 1), x * p1(x * y, 1)}; /* spline(curve, x y) */
    case 35: return (cf){q2(x, y, 0, 0), q2(x, y, 1, 0), q2(x, y, 0, 1)}; /* spline2(map, x, y) */
    case 36: { /* table(curve, x): linear between the points */
        int i = x < XS[1] ? 0 : x < XS[2] ? 1 : x < XS[3] ? 2 : 3;
        s = (p1(XS[i + 1], 0) - p1(XS[i], 0)) / (XS[i + 1] - XS[i]);
        return (cf){p1(XS[i], 0) + s * (x - XS[i]), s, 0};
    }
    case 37: return (cf){sqrt(y) * x, sqrt(y), 0.5 * x / sqrt(y)}; /* sqrt as a power 0.5 */
    default: return (cf){NAN, NAN, NAN};
    }
}

static mblx_id build(mblx_graph *g, int k, mblx_id x, mblx_id y, long curve, long map)
{
    mblx_id two = mblx_const(g, 2), three = mblx_const(g, 3);
    switch (k) {
    case 0: return mblx_add(g, x, y);
    case 1: return mblx_add(g, x, three);
    case 2: return mblx_mul(g, x, y);
    case 3: return mblx_scale(g, 3, x);
    case 4: return mblx_add(g, mblx_add(g, x, y), two);
    case 5: return mblx_scale(g, 2, mblx_mul(g, x, y));
    case 6: return mblx_powc(g, x, 2);
    case 7: return mblx_powc(g, x, 3);
    case 8: return mblx_powc(g, y, -1);
    case 9: return mblx_powc(g, y, -2);
    case 10: return mblx_powc(g, y, 0.5);
    case 11: return mblx_powc(g, y, 1.7);
    case 12: return mblx_pow(g, y, x);
    case 13: return mblx_sqrt(g, mblx_add(g, mblx_powc(g, x, 2), y));
    case 14: return mblx_sin(g, x);
    case 15: return mblx_cos(g, x);
    case 16: return mblx_tan(g, x);
    case 17: return mblx_asin(g, x);
    case 18: return mblx_acos(g, x);
    case 19: return mblx_atan(g, x);
    case 20: return mblx_atan2(g, y, x);
    case 21: return mblx_sinh(g, x);
    case 22: return mblx_cosh(g, x);
    case 23: return mblx_tanh(g, x);
    case 24: return mblx_exp(g, x);
    case 25: return mblx_log(g, y);
    case 26: return mblx_abs(g, mblx_sub(g, x, y));
    case 27: return mblx_add(g, mblx_sign(g, mblx_sub(g, x, y)), x);
    case 28: return mblx_min(g, x, y);
    case 29: return mblx_max(g, x, y);
    case 30: return mblx_min(g, x, mblx_add(g, mblx_scale(g, 2, x), mblx_const(g, -0.5)));
    case 31: return mblx_step(g, x, mblx_const(g, 0.2), y, mblx_const(g, 0.9), two);
    case 32: return mblx_step(g, mblx_powc(g, x, 2), y, mblx_const(g, 0), mblx_scale(g, 2, y), x);
    case 33: return mblx_data_call(g, curve, 0, 0, 0, x, MBLX_NONE);
    case 34: return mblx_data_call(g, curve, 0, 0, 0, mblx_mul(g, x, y), MBLX_NONE);
    case 35: return mblx_data_call(g, map, 0, 0, 0, x, y);
    case 36: return mblx_data_call(g, curve, 1, 0, 0, x, MBLX_NONE);
    case 37: return mblx_mul(g, mblx_sqrt(g, y), x);
    default: return MBLX_NONE;
    }
}

TEST(every_opcode_against_closed_forms)
{
    mblx_graph *g = mblx_graph_new();
    mblx_id x = mblx_symbol(g, "x"), y = mblx_symbol(g, "y");
    long curve = add_poly(g), map = add_poly2(g);
    CHECK(curve >= 0 && map >= 0);
    int seen[TI_MUL2C + 1] = {0};
    /* points inside every domain: x in (-1, 1) for asin/acos, y > 0, (x, y) inside the map */
    static const double pts[][2] = {{0.37, 0.81}, {-0.55, 1.23}, {0.81, 0.4}, {0.6, 0.6}};
    for (int k = 0; k < NCASE; k++) {
        mblx_id e = build(g, k, x, y, curve, map);
        CHECK_MSG(e != MBLX_NONE, "case %d", k);
        if (k == 30) { /* min(x, 2x - 0.5) at x = 0.5, a tie: d/dx = (1 + 2)/2, as mblx_diff's rule */
            mblx_id tie = e;
            mblx_tape *t = mblx_compile(g, 1, &tie, NULL);
            double sv[2] = {0.5, 0.9}, seed[4] = {1, 0, 0, 1}, v, dv[2];
            double *w = calloc(mblx_tape_fwd_work_size(t, 2), sizeof *w);
            CHECK_EQ_INT(mblx_tape_fwd(t, sv, 2, seed, &v, dv, w, NULL), 0);
            CHECK_CLOSE(v, 0.5, 0);
            CHECK_CLOSE(dv[0], 1.5, 1e-15);
            CHECK_CLOSE(dv[1], 0.0, 0);
            for (size_t i = 0; i < t->nins; i++) seen[t->ins[i].op] = 1;
            free(w);
            mblx_tape_free(t);
        }
        mblx_tape *t = mblx_compile(g, 1, &e, NULL);
        CHECK(t);
        if (!t) continue;
        for (size_t i = 0; i < t->nins; i++) seen[t->ins[i].op] = 1;
        double *w = calloc(mblx_tape_fwd_work_size(t, 3), sizeof *w);
        for (size_t q = 0; q < sizeof pts / sizeof pts[0]; q++) {
            double sv[2] = {pts[q][0], pts[q][1]};
            if (k >= 26 && k <= 29 && sv[0] == sv[1]) continue; /* abs, sign, min, max at their kinks */
            /* directions: x, y and (0.3, -0.7) */
            double seed[6] = {1, 0, 0.3, 0, 1, -0.7}, v = NAN, dv[3], v0 = NAN;
            int rc = mblx_tape_fwd(t, sv, 3, seed, &v, dv, w, NULL);
            CHECK_MSG(rc == 0, "case %d at point %zu", k, q);
            CHECK_EQ_INT(mblx_tape_eval(t, sv, &v0, w, NULL), 0);
            cf c = closed(k, sv[0], sv[1]);
            double sc = 1 + fabs(c.fx) + fabs(c.fy);
            CHECK_MSG(v == v0, "case %d: the value %.17g is not mblx_tape_eval's %.17g", k, v, v0);
            CHECK_MSG(fabs(v - c.f) <= 1e-14 * (1 + fabs(c.f)), "case %d: value %.17g, closed form %.17g", k, v, c.f);
            CHECK_MSG(fabs(dv[0] - c.fx) <= 1e-13 * sc, "case %d at %zu: d/dx %.17g, closed form %.17g", k, q, dv[0],
                      c.fx);
            CHECK_MSG(fabs(dv[1] - c.fy) <= 1e-13 * sc, "case %d at %zu: d/dy %.17g, closed form %.17g", k, q, dv[1],
                      c.fy);
            CHECK_MSG(fabs(dv[2] - (0.3 * c.fx - 0.7 * c.fy)) <= 1e-13 * sc, "case %d: mixed direction", k);
        }
        free(w);
        mblx_tape_free(t);
    }
    for (int op = TI_LDC; op <= TI_MUL2C; op++) CHECK_MSG(seen[op], "opcode %d not covered", op);
    mblx_graph_free(g);
}

TEST(infinite_partials)
{
    mblx_graph *g = mblx_graph_new();
    mblx_id x = mblx_symbol(g, "x"), c = mblx_symbol(g, "c");
    /* x * sqrt(c) at c = 0 along x: d sqrt(c)/dc is infinite but c is not differentiated */
    mblx_id e[2] = {mblx_mul(g, x, mblx_sqrt(g, c)), mblx_add(g, x, mblx_asin(g, mblx_add(g, c, mblx_const(g, 1))))};
    mblx_tape *t = mblx_compile(g, 2, e, NULL);
    double sv[2] = {0.7, 0.0}, seed[2] = {1, 0}, out[2], d[2];
    double *w = calloc(mblx_tape_fwd_work_size(t, 1), sizeof *w);
    mbl_status st;
    CHECK_EQ_INT(mblx_tape_fwd(t, sv, 1, seed, out, d, w, &st), 0);
    CHECK_CLOSE(d[0], 0.0, 0); /* sqrt(0) */
    CHECK_CLOSE(d[1], 1.0, 0); /* x + asin(c + 1): the partial of asin at 1 is infinite, c is not differentiated */
    /* along c the derivative of sqrt(c) at 0 is infinite: an error naming the expression */
    seed[0] = 0, seed[1] = 1;
    mblx_tape *t1 = mblx_compile(g, 1, e, NULL);
    CHECK_EQ_INT(mblx_tape_fwd(t1, sv, 1, seed, out, d, w, &st), MBL_EDOMAIN);
    CHECK_MSG(strstr(st.msg, "derivative not finite in sqrt(c)") != NULL, "%s", st.msg);
    /* a value outside its domain: mblx_tape_eval's message */
    sv[1] = -1;
    CHECK_EQ_INT(mblx_tape_fwd(t1, sv, 1, seed, out, d, w, &st), MBL_EDOMAIN);
    CHECK_MSG(strstr(st.msg, "sqrt of negative value -1") != NULL, "%s", st.msg);
    free(w);
    mblx_tape_free(t);
    mblx_tape_free(t1);
    mblx_graph_free(g);
}

/* Values and tangents that overflow in the runs of one opcode (sums and products): the sweep's
 * checks of every value and of the outputs' tangents, lane by lane (a multiple of four lanes, the
 * bad one in any of them), against mblx_tape_eval's message and a derivative computed by hand. */
TEST(overflow_in_runs)
{
    mblx_graph *g = mblx_graph_new();
    mblx_id x = mblx_symbol(g, "x"), y = mblx_symbol(g, "y"), z = mblx_symbol(g, "z");
    mblx_id e[2] = {mblx_add(g, mblx_mul(g, x, y), z), mblx_add(g, x, y)};
    mblx_tape *t = mblx_compile(g, 2, e, NULL);
    enum { P = 6 }; /* padded to 8 */
    double *w = calloc(mblx_tape_fwd_work_size(t, P), sizeof *w), out[2], d[2 * P], seed[3 * P];
    mbl_status st, st_eval;
    for (int bad = 0; bad < P; bad++) {
        double sv[3] = {2.0, 3.0, 0.5};
        for (int k = 0; k < 3 * P; k++) seed[k] = (double)(k % 5) - 1.5;
        seed[0 * P + bad] = 1e308, seed[1 * P + bad] = 1e308; /* d(x y) = 3e308 + 2e308: overflows */
        CHECK_EQ_INT(mblx_tape_fwd(t, sv, P, seed, out, d, w, &st), MBL_EDOMAIN);
        CHECK_MSG(strstr(st.msg, "derivative not finite") != NULL, "lane %d: %s (code %d)", bad, st.msg, st.code);
        seed[0 * P + bad] = 1e150, seed[1 * P + bad] = 1e150; /* finite: every lane as by hand */
        CHECK_EQ_INT(mblx_tape_fwd(t, sv, P, seed, out, d, w, &st), 0);
        for (int k = 0; k < P; k++) {
            CHECK_CLOSE(d[k], seed[k] * 3.0 + 2.0 * seed[P + k] + seed[2 * P + k], 0);
            CHECK_CLOSE(d[P + k], seed[k] + seed[P + k], 0);
        }
        CHECK_CLOSE(out[0], 6.5, 0);
        /* a value that overflows (x y): the message of mblx_tape_eval */
        sv[0] = 1e200, sv[1] = -1e200;
        CHECK_EQ_INT(mblx_tape_fwd(t, sv, P, seed, out, d, w, &st), MBL_EDOMAIN);
        CHECK_EQ_INT(mblx_tape_eval(t, sv, out, w, &st_eval), MBL_EDOMAIN);
        CHECK_MSG(strcmp(st.msg, st_eval.msg) == 0, "%s | %s", st.msg, st_eval.msg);
    }
    free(w);
    mblx_tape_free(t);
    mblx_graph_free(g);
}

/* A tangent that is 0 at the point is not one that is 0 by structure: sqrt(x^2) at x = 0 has no
 * derivative (the symbolic one, x / sqrt(x^2), divides by zero there), so forward mode refuses it
 * as well, naming the expression, while y sqrt(c) at c = 0 along y alone (c not a direction, in
 * another lane) is y's derivative sqrt(c) = 0. Before the structural lanes, the first gave 0. */
TEST(numerically_zero_tangent)
{
    mblx_graph *g = mblx_graph_new();
    mblx_id x = mblx_symbol(g, "x"), y = mblx_symbol(g, "y"), c = mblx_symbol(g, "c");
    mblx_id e[2] = {mblx_sqrt(g, mblx_mul(g, x, x)), mblx_mul(g, y, mblx_sqrt(g, c))};
    mblx_tape *t = mblx_compile(g, 2, e, NULL);
    double sv[3] = {0.0, 0.5, 0.0}, out[2], d[4];
    double *w = calloc(mblx_tape_fwd_work_size(t, 2), sizeof *w);
    mbl_status st;
    /* lane 0 along x, lane 1 along y */
    double seed[6] = {1, 0, 0, 1, 0, 0};
    CHECK_EQ_INT(mblx_tape_fwd(t, sv, 2, seed, out, d, w, &st), MBL_EDOMAIN);
    CHECK_MSG(strstr(st.msg, "derivative not finite in sqrt(") != NULL, "%s", st.msg);
    /* along y alone: x^2's tangent is 0 by structure in that lane, and y sqrt(c)' = sqrt(0) */
    double seed_y[3] = {0, 1, 0};
    CHECK_EQ_INT(mblx_tape_fwd(t, sv, 1, seed_y, out, d, w, &st), 0);
    CHECK_CLOSE(d[0], 0.0, 0);
    CHECK_CLOSE(d[1], 0.0, 0);
    /* away from the kink both are defined: d sqrt(x^2)/dx = sign(x) */
    sv[0] = -0.3;
    CHECK_EQ_INT(mblx_tape_fwd(t, sv, 2, seed, out, d, w, &st), 0);
    CHECK_CLOSE(d[0], -1.0, 1e-15);
    CHECK_CLOSE(d[3], 0.0, 0);
    free(w);
    mblx_tape_free(t);
    mblx_graph_free(g);
}

/* The rows of a tridiagonal n x n matrix (f_i = x_{i-1} x_i + sin x_{i+1}) and an arrow (the
 * last row x_0 + ... + x_{n-1}): three colors for the band (each row has three columns in a
 * row, so no fewer can do), n colors with the arrow row. */
TEST(pattern_and_coloring)
{
    enum { N = 40 };
    mblx_graph *g = mblx_graph_new();
    mblx_id xs[N], f[N + 1];
    char nm[16];
    for (int i = 0; i < N; i++) snprintf(nm, sizeof nm, "x%d", i), xs[i] = mblx_symbol(g, nm);
    mblx_id par = mblx_symbol(g, "par"); /* a parameter, not a column */
    for (int i = 0; i < N; i++) {
        mblx_id t = mblx_mul(g, par, xs[i]);
        if (i > 0) t = mblx_add(g, t, mblx_mul(g, xs[i - 1], xs[i]));
        if (i + 1 < N) t = mblx_add(g, t, mblx_sin(g, xs[i + 1]));
        f[i] = t;
    }
    f[N] = mblx_sum(g, N, xs);
    double sv[N + 1];
    for (int i = 0; i <= N; i++) sv[i] = 0.1 + 0.02 * i;
    for (int arrow = 0; arrow < 2; arrow++) {
        size_t m = N + (size_t)arrow;
        mbl_status st;
        mblx_fwdjac *J = mblx_fwdjac_new(g, m, f, N, xs, &st);
        CHECK(J);
        mblx_tape *t = mblx_compile(g, m, f, &st);
        const int *cp, *ri;
        size_t nnz = mblx_fwdjac_pattern(J, &cp, &ri);
        CHECK_EQ_INT((int)nnz, 3 * N - 2 + (arrow ? N : 0));
        CHECK_EQ_INT((int)mblx_fwdjac_ncolors(J), arrow ? N + 0 : 3);
        for (int j = 0; j < N; j++) /* no two columns of one color share a row */
            for (int k = j + 1; k < N; k++) {
                if (mblx_fwdjac_color(J, (size_t)j) != mblx_fwdjac_color(J, (size_t)k)) continue;
                for (int a = cp[j]; a < cp[j + 1]; a++)
                    for (int b = cp[k]; b < cp[k + 1]; b++) CHECK(ri[a] != ri[b]);
            }
        double *w = calloc(mblx_fwdjac_work_size(J, t), sizeof *w), vals[4 * N], out[N + 1];
        CHECK_EQ_INT(mblx_fwdjac_eval(J, t, sv, vals, out, w, &st), 0);
        for (int j = 0; j < N; j++)
            for (int a = cp[j]; a < cp[j + 1]; a++) {
                int i = ri[a];
                double want = i == N ? 1 : i == j ? sv[N] + (i > 0 ? sv[i - 1] : 0) : i == j - 1 ? cos(sv[j]) : sv[i];
                CHECK_MSG(fabs(vals[a] - want) <= 1e-15, "J[%d][%d] = %.17g, closed form %.17g", i, j, vals[a], want);
            }
        CHECK_CLOSE(out[0], sv[N] * sv[0] + sin(sv[1]), 1e-15);
        free(w);
        mblx_tape_free(t);
        mblx_fwdjac_free(J);
    }
    mbl_status st;
    mblx_id bad[2] = {xs[0], xs[0]};
    CHECK(mblx_fwdjac_new(g, N, f, 2, bad, &st) == NULL && st.code == MBL_EARG);
    mblx_graph_free(g);
}

/* The coloring is the greedy one, checked against its definition: every column, in order, has the
 * least color that no earlier column sharing a row with it has. Rows of a few random columns each,
 * and rows of 90 columns (more than the 64 colors the coloring keeps as bits per row: the colors
 * past them too). */
TEST(coloring_is_greedy)
{
    enum { N = 300, M = 400, LONG = 90 };
    mblx_graph *g = mblx_graph_new();
    mblx_id xs[N], f[M];
    pool_symbols(g, "x", N, xs);
    unsigned r = 12345u;
    for (int i = 0; i < M; i++) {
        int k = i % 50 == 7 ? LONG : 2 + (int)((r = r * 1103515245u + 12345u) >> 16) % 5;
        mblx_id terms[LONG];
        for (int t = 0; t < k; t++) {
            r = r * 1103515245u + 12345u;
            terms[t] = xs[(r >> 16) % N];
        }
        f[i] = mblx_sum(g, (size_t)k, terms);
    }
    mbl_status st;
    mblx_fwdjac *J = mblx_fwdjac_new(g, M, f, N, xs, &st);
    CHECK(J != NULL);
    if (J) {
        const int *cp, *ri;
        mblx_fwdjac_pattern(J, &cp, &ri);
        int used[N + 1], maxc = 0;
        for (int j = 0; j < N; j++) {
            for (int c = 0; c <= N; c++) used[c] = 0;
            for (int k = 0; k < j; k++) { /* earlier columns sharing a row with j */
                int share = 0;
                for (int a = cp[j]; a < cp[j + 1] && !share; a++)
                    for (int b = cp[k]; b < cp[k + 1] && !share; b++) share = ri[a] == ri[b];
                if (share) used[mblx_fwdjac_color(J, (size_t)k)] = 1;
            }
            int least = 0;
            while (used[least]) least++;
            CHECK_EQ_INT(mblx_fwdjac_color(J, (size_t)j), least);
            if (least > maxc) maxc = least;
        }
        CHECK(maxc >= 64); /* (past the bits) */
        CHECK_EQ_INT((int)mblx_fwdjac_ncolors(J), maxc + 1);
    }
    mblx_fwdjac_free(J);
    mblx_graph_free(g);
}

/* The tangents of constants and symbols are written whole by every sweep (tape_forward.c zeroes
 * them four lanes at a time): a work array left full of NaN by anything before, and reused from
 * call to call, gives the closed-form derivatives for 1 to 9 directions (padded lanes included),
 * with a constant output, a bare symbol output and constants inside sums and products; and the
 * colored Jacobian likewise from a dirty work array. */
TEST(dirty_work_tangents)
{
    enum { NS = 6, NO = 5, PMAX = 9 };
    mblx_graph *g = mblx_graph_new();
    mblx_id x[NS], f[NO];
    char nm[8];
    for (int i = 0; i < NS; i++) snprintf(nm, sizeof nm, "x%d", i), x[i] = mblx_symbol(g, nm);
    f[0] = mblx_const(g, 2.5);
    f[1] = mblx_add(g, mblx_mul(g, x[0], x[1]), mblx_const(g, 3.0));
    mblx_id t2[3] = {mblx_sin(g, x[2]), mblx_powc(g, x[3], 2.0), mblx_scale(g, 1.5, x[4])};
    f[2] = mblx_sum(g, 3, t2);
    f[3] = x[5];
    f[4] = mblx_mul(g, mblx_exp(g, x[0]), mblx_const(g, 2.0));
    double sv[NS] = {0.3, -1.2, 0.7, 2.1, -0.4, 1.9}, J[NO][NS] = {{0}};
    J[1][0] = sv[1], J[1][1] = sv[0];
    J[2][2] = cos(sv[2]), J[2][3] = 2 * sv[3], J[2][4] = 1.5;
    J[3][5] = 1;
    J[4][0] = 2 * exp(sv[0]);
    mbl_status st;
    mblx_tape *t = mblx_compile(g, NO, f, &st);
    CHECK(t);
    size_t nw = mblx_tape_fwd_work_size(t, PMAX);
    double *w = malloc(nw * sizeof *w), seed[NS * PMAX], out[NO], dout[NO * PMAX];
    memset(w, 0xff, nw * sizeof *w); /* NaN everywhere */
    for (int round = 0; round < 2; round++)
        for (size_t p = 1; p <= PMAX; p++) {
            for (int s = 0; s < NS; s++)
                for (size_t k = 0; k < p; k++) seed[(size_t)s * p + k] = (double)((s * 7 + (int)k * 3 + round) % 5) - 1.5;
            CHECK_EQ_INT(mblx_tape_fwd(t, sv, p, seed, out, dout, w, &st), 0);
            CHECK(out[0] == 2.5 && out[3] == sv[5]);
            for (int o = 0; o < NO; o++)
                for (size_t k = 0; k < p; k++) {
                    double want = 0;
                    for (int s = 0; s < NS; s++) want += J[o][s] * seed[(size_t)s * p + k];
                    double got = dout[(size_t)o * p + k];
                    CHECK_MSG(fabs(got - want) <= 1e-14 * (1 + fabs(want)), "p %zu: d f%d along %zu = %.17g, closed form %.17g",
                              p, o, k, got, want);
                }
        }
    free(w);
    mblx_fwdjac *FJ = mblx_fwdjac_new(g, NO, f, NS, x, &st);
    CHECK(FJ);
    const int *cp, *ri;
    size_t nnz = mblx_fwdjac_pattern(FJ, &cp, &ri);
    nw = mblx_fwdjac_work_size(FJ, t);
    w = malloc(nw * sizeof *w);
    memset(w, 0xff, nw * sizeof *w);
    double vals[NO * NS];
    CHECK(nnz <= NO * NS);
    for (int round = 0; round < 2; round++) {
        CHECK_EQ_INT(mblx_fwdjac_eval(FJ, t, sv, vals, out, w, &st), 0);
        for (int j = 0; j < NS; j++)
            for (int a = cp[j]; a < cp[j + 1]; a++)
                CHECK_MSG(fabs(vals[a] - J[ri[a]][j]) <= 1e-15 * (1 + fabs(J[ri[a]][j])), "J[%d][%d] = %.17g, closed form %.17g",
                          ri[a], j, vals[a], J[ri[a]][j]);
    }
    free(w);
    mblx_fwdjac_free(FJ);
    mblx_tape_free(t);
    mblx_graph_free(g);
}

/* The forward sweep's AVX code (chosen at run time) and its baseline give the same bits: random
 * products, sums, quotients and functions of 8 symbols at a generic point, their tangents along
 * 1 to 33 random directions (every unrolled lane count and others), computed with the baseline
 * forced and without. On a CPU without AVX both take the baseline and agree trivially. (Fails
 * when the AVX code is built with fused multiply-adds.) */
TEST(avx_matches_baseline)
{
    enum { NS = 8, NO = 40, PMAX = 33 };
    mblx_graph *g = mblx_graph_new();
    mblx_id x[NS], f[NO];
    char nm[8];
    for (int i = 0; i < NS; i++) snprintf(nm, sizeof nm, "s%d", i), x[i] = mblx_symbol(g, nm);
    unsigned r = 12345;
    for (int o = 0; o < NO; o++) {
        mblx_id terms[4];
        for (int k = 0; k < 4; k++) {
            r = r * 1103515245u + 12345u;
            mblx_id a = x[(r >> 8) % NS], b = x[(r >> 12) % NS], c = x[(r >> 16) % NS];
            switch ((r >> 20) % 5) {
            case 0: terms[k] = mblx_mul(g, mblx_mul(g, a, b), mblx_sin(g, c)); break;
            case 1: terms[k] = mblx_div(g, mblx_add(g, a, mblx_const(g, 3.1)), mblx_add(g, mblx_powc(g, b, 2.0), mblx_const(g, 1.7))); break;
            case 2: terms[k] = mblx_mul(g, mblx_cos(g, mblx_mul(g, a, c)), mblx_exp(g, mblx_scale(g, 0.3, b))); break;
            case 3: terms[k] = mblx_scale(g, 2.7, mblx_mul(g, mblx_mul(g, a, b), c)); break;
            default: terms[k] = mblx_sqrt(g, mblx_add(g, mblx_powc(g, a, 2.0), mblx_add(g, mblx_powc(g, c, 2.0), mblx_const(g, 0.5))));
            }
        }
        f[o] = mblx_sum(g, 4, terms);
    }
    mbl_status st;
    mblx_tape *t = mblx_compile(g, NO, f, &st);
    CHECK(t);
    if (!t) return;
    size_t nw = mblx_tape_fwd_work_size(t, PMAX);
    double *w = malloc(nw * sizeof *w), sv[NS], seed[NS * PMAX], out[2][NO], dout[2][NO * PMAX];
    for (int i = 0; i < NS; i++) sv[i] = 0.37 + 0.61 * i - 0.013 * i * i;
    size_t diff = 0, compared = 0;
    for (size_t p = 1; p <= PMAX && w; p++) {
        for (size_t k = 0; k < NS * p; k++) r = r * 1103515245u + 12345u, seed[k] = ((r >> 9) % 20001) / 7001.0 - 1.3;
        for (int v = 0; v < 2; v++) {
            mblx__fwd_force_baseline(v == 0);
            CHECK_EQ_INT(mblx_tape_fwd(t, sv, p, seed, out[v], dout[v], w, &st), 0);
        }
        mblx__fwd_force_baseline(0);
        diff += memcmp(out[0], out[1], sizeof out[0]) != 0;
        for (size_t k = 0; k < NO * p; k++, compared++) diff += memcmp(&dout[0][k], &dout[1][k], sizeof(double)) != 0;
    }
    printf("  this CPU %s AVX: %zu tangent values compared, %zu differ\n", __builtin_cpu_supports("avx") ? "has" : "lacks",
           compared, diff);
    CHECK(diff == 0 && compared > 10000);
    free(w);
    mblx_tape_free(t);
    mblx_graph_free(g);
}

int main(void)
{
    RUN(every_opcode_against_closed_forms);
    RUN(infinite_partials);
    RUN(overflow_in_runs);
    RUN(numerically_zero_tangent);
    RUN(pattern_and_coloring);
    RUN(coloring_is_greedy);
    RUN(dirty_work_tangents);
    RUN(avx_matches_baseline);
    return test_summary("expr_fwd");
}
