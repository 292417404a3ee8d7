/* Functions of data (issue 35, item 1): spline/table/spline2 nodes against closed forms. A data
 * set whose pieces are the Taylor coefficients of one cubic polynomial p at each breakpoint is p
 * itself, so its values and derivatives of every order (through mblx_diff, mblx_gradient and the
 * chain rule) must equal p's, written out here; table() of a line is the line; extrapolation;
 * printing, parsing, tapes that outlive their graph, and the errors. */
#include <math.h>
#include <string.h>

#include "mblin/expr.h"
#include "test.h"

#include "poly_data.h"

static long add_poly(mblx_graph *g, const char *name, int extrap)
{
    double z[5], c[16];
    for (int i = 0; i < 5; i++) z[i] = p1(XS[i], 0);
    for (int i = 0; i < 4; i++)
        for (int a = 0; a < 4; a++) c[4 * i + a] = p1(XS[i], a) / (a == 3 ? 6 : a == 2 ? 2 : 1);
    mblx_data_def d = {name, 5, 0, XS, NULL, z, c, extrap};
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

static double ev(mblx_graph *g, mblx_id e, double x, double y, int *rc, mbl_status *st)
{
    double s[2] = {x, y}, v = NAN;
    *rc = mblx_eval(g, e, s, &v, st);
    return v;
}

TEST(pieces_of_a_cubic_are_the_cubic)
{
    mblx_graph *g = mblx_graph_new();
    mblx_id X = mblx_symbol(g, "x"), Y = mblx_symbol(g, "y");
    long k = add_poly(g, "p", MBLX_EXTRAP_NONE);
    CHECK(k == 0);
    /* f = spline(p, x^2 y): derivatives by the chain rule through the node's own order raising */
    mblx_id u = mblx_mul(g, mblx_powc(g, X, 2), Y);
    mblx_id f = mblx_data_call(g, k, 0, 0, 0, u, MBLX_NONE);
    mblx_id fx = mblx_diff(g, f, X), fxx = mblx_diff(g, fx, X), fxxx = mblx_diff(g, fxx, X);
    mblx_id f4 = mblx_diff(g, mblx_data_call(g, k, 0, 3, 0, X, MBLX_NONE), X);
    CHECK(f4 == mblx_const(g, 0)); /* the 4th derivative of cubic pieces */
    mbl_status st;
    int rc;
    for (int t = 0; t < 40; t++) {
        double x = -1.3 + 0.06 * t, y = 0.5 + 0.01 * t, uu = x * x * y;
        if (uu < -1 || uu > 2) continue;
        CHECK_CLOSE(ev(g, f, x, y, &rc, &st), p1(uu, 0), 1e-13);
        CHECK(rc == 0);
        /* d/dx p(x^2 y) = p'(u) 2 x y; d2 = p'' (2xy)^2 + p' 2y; d3 = p''' (2xy)^3 + 3 p'' (2xy)(2y) */
        double du = 2 * x * y;
        CHECK_CLOSE(ev(g, fx, x, y, &rc, &st), p1(uu, 1) * du, 1e-12);
        CHECK_CLOSE(ev(g, fxx, x, y, &rc, &st), p1(uu, 2) * du * du + p1(uu, 1) * 2 * y, 1e-12);
        CHECK_CLOSE(ev(g, fxxx, x, y, &rc, &st), p1(uu, 3) * du * du * du + 3 * p1(uu, 2) * du * 2 * y, 1e-11);
    }
    /* reverse mode agrees with forward mode */
    mblx_id syms[2] = {X, Y}, grad[2];
    CHECK(mblx_gradient(g, f, 2, syms, grad) == 0);
    CHECK(grad[0] == fx);
    /* outside the range: refused, named */
    ev(g, f, 2, 1, &rc, &st);
    CHECK(rc == MBL_EDOMAIN);
    CHECK_MSG(strstr(st.msg, "spline 'p': x = 4 outside its data [-1, 2] (extrapolate: no)") != NULL, "%s", st.msg);
    mblx_graph_free(g);
}

TEST(table_of_a_line_and_linear_extrapolation)
{
    mblx_graph *g = mblx_graph_new();
    mblx_id X = mblx_symbol(g, "x");
    long k = add_poly(g, "p", MBLX_EXTRAP_LINEAR);
    /* table() of any set interpolates its points: on a line's points it is the line */
    double lx[3] = {-2, 0.5, 3}, lz[3] = {-2 * 1.5 + 0.25, 0.5 * 1.5 + 0.25, 3 * 1.5 + 0.25};
    mblx_data_def d = {"line", 3, 0, lx, NULL, lz, NULL, MBLX_EXTRAP_LINEAR};
    long kl = mblx_data_add(g, &d);
    CHECK(kl == 1);
    mblx_id t = mblx_data_call(g, kl, 1, 0, 0, X, MBLX_NONE), s = mblx_data_call(g, kl, 0, 0, 0, X, MBLX_NONE);
    mbl_status st;
    int rc;
    for (double x = -5; x <= 6; x += 0.37) {
        CHECK_CLOSE(ev(g, t, x, 0, &rc, &st), 1.5 * x + 0.25, 1e-13);
        CHECK_CLOSE(ev(g, s, x, 0, &rc, &st), 1.5 * x + 0.25, 1e-13);
        CHECK_CLOSE(ev(g, mblx_diff(g, t, X), x, 0, &rc, &st), 1.5, 1e-13);
    }
    CHECK(mblx_diff(g, mblx_diff(g, t, X), X) == mblx_const(g, 0));
    /* table of the cubic's points: the chord between them */
    mblx_id tp = mblx_data_call(g, k, 1, 0, 0, X, MBLX_NONE);
    double x = 0.8, w = (x - 0.5) / (1.1 - 0.5);
    CHECK_CLOSE(ev(g, tp, x, 0, &rc, &st), (1 - w) * p1(0.5, 0) + w * p1(1.1, 0), 1e-14);
    /* the cubic extrapolated linearly: its tangent at the end, derivative the end slope, then 0 */
    mblx_id f = mblx_data_call(g, k, 0, 0, 0, X, MBLX_NONE), fx = mblx_diff(g, f, X);
    CHECK_CLOSE(ev(g, f, 3, 0, &rc, &st), p1(2, 0) + p1(2, 1) * 1, 1e-13);
    CHECK_CLOSE(ev(g, f, -2, 0, &rc, &st), p1(-1, 0) - p1(-1, 1), 1e-13);
    CHECK_CLOSE(ev(g, fx, 3, 0, &rc, &st), p1(2, 1), 1e-13);
    CHECK_CLOSE(ev(g, mblx_diff(g, fx, X), 3, 0, &rc, &st), 0, 0);
    /* mblx_data_eval: the same numbers without a node; refused outside a range, orders too high 0 */
    double ve;
    CHECK(mblx_data_eval(g, k, 0, 1, 0, 3.0, 0, &ve) == 0);
    CHECK_CLOSE(ve, p1(2, 1), 1e-13);
    CHECK(mblx_data_eval(g, kl, 1, 2, 0, 0.1, 0, &ve) == 0 && ve == 0);
    CHECK(mblx_data_eval(g, 7, 0, 0, 0, 0.1, 0, &ve) == MBL_EARG);
    /* constants fold */
    double v;
    CHECK(mblx_is_const(g, mblx_data_call(g, k, 0, 1, 0, mblx_const(g, 0.2), MBLX_NONE), &v));
    CHECK_CLOSE(v, p1(0.2, 1), 1e-14);
    mblx_graph_free(g);
}

TEST(bicubic_pieces_and_mixed_derivatives)
{
    mblx_graph *g = mblx_graph_new();
    mblx_id X = mblx_symbol(g, "x"), Y = mblx_symbol(g, "y");
    long k = add_poly2(g);
    CHECK(k == 0);
    mblx_id f = mblx_data_call(g, k, 0, 0, 0, X, Y);
    mblx_id fx = mblx_diff(g, f, X), fy = mblx_diff(g, f, Y), fxy = mblx_diff(g, fx, Y), fyy = mblx_diff(g, fy, Y);
    CHECK(fxy == mblx_diff(g, fy, X));
    mbl_status st;
    int rc;
    for (int t = 0; t < 30; t++) {
        double x = -1 + 3.0 * t / 29, y = 1.5 * ((t * 7) % 29) / 28.0;
        CHECK_CLOSE(ev(g, f, x, y, &rc, &st), q2(x, y, 0, 0), 1e-12);
        CHECK_CLOSE(ev(g, fx, x, y, &rc, &st), q2(x, y, 1, 0), 1e-12);
        CHECK_CLOSE(ev(g, fy, x, y, &rc, &st), q2(x, y, 0, 1), 1e-12);
        CHECK_CLOSE(ev(g, fxy, x, y, &rc, &st), q2(x, y, 1, 1), 1e-12);
        CHECK_CLOSE(ev(g, fyy, x, y, &rc, &st), q2(x, y, 0, 2), 1e-12);
    }
    ev(g, f, 0, 1.6, &rc, &st);
    CHECK(rc == MBL_EDOMAIN);
    CHECK_MSG(strstr(st.msg, "spline2 'map': y = 1.6") != NULL, "%s", st.msg);
    mblx_graph_free(g);
}

static int res(void *ud, mblx_graph *g, const char *name, size_t len, int nargs, const mblx_id *args, mblx_id *out,
               char *why, size_t whylen)
{
    (void)ud, (void)args, (void)why, (void)whylen;
    if (nargs >= 0) return 1;
    *out = mblx_symbol_find_n(g, name, len);
    return *out == MBLX_NONE;
}
static const mblx_parse_opts PO = {res, NULL, 0, 0, 0, NULL};

TEST(print_parse_and_tapes)
{
    mblx_graph *g = mblx_graph_new();
    mblx_id X = mblx_symbol(g, "x"), Y = mblx_symbol(g, "y");
    add_poly(g, "p", MBLX_EXTRAP_NONE);
    add_poly2(g);
    const char *src[] = {"spline(p, x^2) + table(p, y, 1)", "spline2(map, x, 2*y, 1, 2)", "3*spline(p, x, 2)"};
    for (int i = 0; i < 3; i++) {
        mblx_id e, e2;
        mbl_status st;
        CHECK(mblx_parse(g, src[i], strlen(src[i]), &PO, &e, &st) == 0);
        char *s = mblx_print_alloc(g, e, &st);
        CHECK(s != NULL);
        CHECK(mblx_parse(g, s, strlen(s), &PO, &e2, &st) == 0);
        CHECK_MSG(e == e2, "%s -> %s", src[i], s);
        mbl_free(s);
    }
    mblx_id e;
    mbl_status st;
    CHECK(mblx_parse(g, "spline(p, x) * spline2(map, x, y)", 33, &PO, &e, &st) == 0);
    mblx_tape *t = mblx_compile(g, 1, &e, &st);
    CHECK(t != NULL);
    mblx_graph_free(g); /* the tape keeps its own copy of the data */
    double s[2] = {0.3, 0.7}, w[64], out;
    CHECK(mblx_tape_eval(t, s, &out, w, &st) == 0);
    CHECK_CLOSE(out, p1(0.3, 0) * q2(0.3, 0.7, 0, 0), 1e-12);
    s[0] = 2.5;
    CHECK(mblx_tape_eval(t, s, &out, w, &st) == MBL_EDOMAIN);
    CHECK_MSG(strstr(st.msg, "spline 'p': x = 2.5 outside") && strstr(st.msg, "in spline(p, x)"), "%s", st.msg);
    mblx_tape_free(t);
    (void)X;
    (void)Y;
}

TEST(errors)
{
    mblx_graph *g = mblx_graph_new();
    mblx_symbol(g, "x");
    add_poly(g, "p", MBLX_EXTRAP_NONE);
    add_poly2(g);
    struct {
        const char *text, *msg;
    } bad[] = {
        {"spline(q, x)", "1:8: spline: unknown data set 'q' (the data sets are: p, map)"},
        {"spline(map, x)", "1:8: spline: data set 'map' is 2-D (use spline2(name, x, y))"},
        {"spline2(p, x, x)", "1:9: spline2: data set 'p' is 1-D"},
        {"spline(p, x, 0.5)", "1:1: spline: the order of a derivative must be a whole number"},
        {"spline(p, x, x)", "1:1: spline: the order of a derivative must be a whole number"},
        {"spline(p)", "1:9: spline: expected ',' and the argument after the data set's name"},
        {"table(p, x, 1, 2)", "1:1: table takes (name, x) or (name, x, k), got 3 arguments after the name"},
        {"spline(2, x)", "1:8: spline: expected the name of a data set"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        mblx_id e;
        mbl_status st;
        CHECK(mblx_parse(g, bad[i].text, strlen(bad[i].text), &PO, &e, &st) == MBL_EPARSE);
        CHECK_MSG(strstr(st.msg, bad[i].msg) == st.msg, "%s: got '%s'", bad[i].text, st.msg);
    }
    /* bad sets */
    double x[3] = {0, 1, 1}, z[3] = {0, 1, 2};
    mblx_data_def d = {"dup", 3, 0, x, NULL, z, NULL, 0};
    CHECK(mblx_data_add(g, &d) == -1);
    mbl_status st;
    mblx_graph_status(g, &st);
    CHECK(strstr(st.msg, "breakpoints must increase strictly") != NULL);
    mblx_graph_free(g);
}

int main(void)
{
    RUN(pieces_of_a_cubic_are_the_cubic);
    RUN(table_of_a_line_and_linear_extrapolation);
    RUN(bicubic_pieces_and_mixed_derivatives);
    RUN(print_parse_and_tapes);
    RUN(errors);
    return test_summary("expr_data");
}
