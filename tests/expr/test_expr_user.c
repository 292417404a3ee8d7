/* User routines in the engine (issue 68): nodes of MBLX_OP_USER against closed forms. The routine
 * f(x, y) = [sin(x) y, x^2 + exp(y)], with its partials [[y cos x, sin x], [2 x, exp y]] or without
 * (central differences), counts its calls; an expression of its outputs e = 3 out0 + out1 x has
 * de/dx = 3 y cos x + 3 x^2 + exp y, de/dy = 3 sin x + x exp y, and the Hessian [[6 x - 3 y sin x,
 * 3 cos x + exp y], [3 cos x + exp y, x exp y]], written out here. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "expr/tape_subset.h"
#include "mblin/expr.h"
#include "test.h"

typedef struct counter {
    int calls, with_partials;
    int fail, nan_out; /* make the routine fail, or give NaN as output 1 */
} counter;

static int f_routine(mbl_user_call *c)
{
    counter *n = c->user_data;
    n->calls++;
    if (c->partials) n->with_partials++;
    double x = c->in[0], y = c->in[1];
    if (n->fail) {
        snprintf(c->message, c->message_size, "x = %g is out of range", x);
        return 3;
    }
    c->out[0] = sin(x) * y;
    c->out[1] = n->nan_out ? NAN : x * x + exp(y);
    if (c->partials) {
        c->partials[0] = y * cos(x);
        c->partials[1] = sin(x);
        c->partials[2] = 2.0 * x;
        c->partials[3] = exp(y);
    }
    return 0;
}

typedef struct fixture {
    mblx_graph *g;
    counter cnt;
    long r;
    mblx_id X, Y, out0, out1, e;
} fixture;

static void setup(fixture *F, int partials)
{
    memset(F, 0, sizeof *F);
    F->g = mblx_graph_new();
    F->X = mblx_symbol(F->g, "x");
    F->Y = mblx_symbol(F->g, "y");
    mblx_user_def d = {"f", 2, 2, f_routine, &F->cnt, partials};
    F->r = mblx_user_add(F->g, &d);
    mblx_id in[2] = {F->X, F->Y};
    F->out0 = mblx_user_call(F->g, F->r, 0, in);
    F->out1 = mblx_user_call(F->g, F->r, 1, in);
    F->e = mblx_add(F->g, mblx_scale(F->g, 3.0, F->out0), mblx_mul(F->g, F->out1, F->X));
}

static const double PTS[4][2] = {{0.3, -0.7}, {1.2, 0.4}, {-2.5, 1.1}, {0.0, 0.0}};

/* Evaluate n expressions of F at (x, y) through one tape. */
static int tape_values(fixture *F, size_t n, const mblx_id *e, double x, double y, double *out, mbl_status *st)
{
    mblx_tape *t = mblx_compile(F->g, n, e, st);
    if (!t) return -1;
    double w[256], s[2] = {x, y};
    CHECK(mblx_tape_work_size(t) <= 256);
    int rc = mblx_tape_eval(t, s, out, w, st);
    mblx_tape_free(t);
    return rc;
}

TEST(values_through_a_tape)
{
    fixture F;
    setup(&F, 1);
    CHECK(F.r == 0);
    CHECK(F.out0 != MBLX_NONE && F.out1 != MBLX_NONE);
    mbl_status st;
    for (int i = 0; i < 4; i++) {
        double x = PTS[i][0], y = PTS[i][1], o[3];
        mblx_id e[3] = {F.out0, F.out1, F.e};
        CHECK(tape_values(&F, 3, e, x, y, o, &st) == 0);
        CHECK_CLOSE(o[0], sin(x) * y, 1e-15);
        CHECK_CLOSE(o[1], x * x + exp(y), 1e-15);
        CHECK_CLOSE(o[2], 3 * sin(x) * y + (x * x + exp(y)) * x, 1e-14);
        double v = NAN, s[2] = {x, y};
        CHECK(mblx_eval(F.g, F.out1, s, &v, &st) == 0); /* the graph's evaluation, through a tape */
        CHECK_CLOSE(v, x * x + exp(y), 1e-15);
    }
    /* constant inputs are not folded: the node stays a call */
    mblx_id c[2] = {mblx_const(F.g, 1.0), mblx_const(F.g, 2.0)};
    mblx_id k = mblx_user_call(F.g, F.r, 0, c);
    CHECK(mblx_node_op(F.g, k) == MBLX_OP_USER);
    double v = NAN;
    CHECK(mblx_eval(F.g, k, NULL, &v, &st) == 0);
    CHECK_CLOSE(v, sin(1.0) * 2.0, 1e-15);
    /* a bound tape, and one compiled for few evaluations, the same */
    mblx_id e2[2] = {F.out0, F.e};
    mblx_tape *tb = mblx_compile_bound(F.g, 2, e2, NULL, NULL, &st), *tf = mblx_compile_few(F.g, 2, e2, 0, NULL, NULL, &st);
    CHECK(tb && tf);
    double w[256], s[2] = {0.7, 0.2}, ob[2], of[2];
    CHECK(mblx_tape_eval(tb, s, ob, w, &st) == 0 && mblx_tape_eval(tf, s, of, w, &st) == 0);
    CHECK_CLOSE(ob[0], sin(0.7) * 0.2, 1e-15);
    CHECK_CLOSE(of[1], 3 * sin(0.7) * 0.2 + (0.49 + exp(0.2)) * 0.7, 1e-14);
    mblx_tape_free(tb);
    mblx_tape_free(tf);
    /* a substitution rebuilds the node from its code (mblx_apply): sin(2x) y */
    mblx_id two_x = mblx_scale(F.g, 2.0, F.X);
    mblx_id sub = mblx_subst(F.g, F.out0, 1, &F.X, &two_x);
    CHECK(sub != MBLX_NONE && mblx_node_op(F.g, sub) == MBLX_OP_USER);
    double s2[2] = {0.4, 1.5};
    CHECK(mblx_eval(F.g, sub, s2, &v, &st) == 0);
    CHECK_CLOSE(v, sin(0.8) * 1.5, 1e-15);
    mblx_graph_free(F.g);
}

/* The gradient and Hessian of e through tapes against the closed forms. */
static void check_derivatives(int partials, double tol1, double tol2)
{
    fixture F;
    setup(&F, partials);
    mblx_id syms[2] = {F.X, F.Y}, grad[2];
    CHECK(mblx_gradient(F.g, F.e, 2, syms, grad) == 0);
    mblx_sparse J, H;
    mblx_id outs[2] = {F.out0, F.out1};
    CHECK(mblx_jacobian(F.g, 2, outs, 2, syms, &J) == 0);
    CHECK(J.colptr[2] == 4); /* every partial */
    CHECK(mblx_jacobian(F.g, 2, grad, 2, syms, &H) == 0);
    CHECK(H.colptr[2] == 4);
    mbl_status st;
    for (int i = 0; i < 4; i++) {
        double x = PTS[i][0], y = PTS[i][1], o[2], jv[4], hv[4];
        CHECK(tape_values(&F, 2, grad, x, y, o, &st) == 0);
        CHECK_CLOSE(o[0], 3 * y * cos(x) + 3 * x * x + exp(y), tol1);
        CHECK_CLOSE(o[1], 3 * sin(x) + x * exp(y), tol1);
        CHECK(tape_values(&F, 4, J.node, x, y, jv, &st) == 0);
        double jref[4] = {y * cos(x), 2 * x, sin(x), exp(y)}; /* by column: d/dx, then d/dy */
        for (int k = 0; k < 4; k++) CHECK_CLOSE(jv[k], jref[k], tol1);
        CHECK(tape_values(&F, 4, H.node, x, y, hv, &st) == 0);
        double href[4] = {6 * x - 3 * y * sin(x), 3 * cos(x) + exp(y), 3 * cos(x) + exp(y), x * exp(y)};
        for (int k = 0; k < 4; k++) CHECK_CLOSE(hv[k], href[k], tol2);
    }
    /* d2/dxdy and d2/dydx are one node; a third derivative is refused naming the routine */
    mblx_id dxy = mblx_diff(F.g, mblx_diff(F.g, F.out0, F.X), F.Y), dyx = mblx_diff(F.g, mblx_diff(F.g, F.out0, F.Y), F.X);
    CHECK(dxy == dyx && dxy != MBLX_NONE);
    long r;
    int k, j1, j2;
    CHECK(mblx_user_node(F.g, dxy, &r, &k, &j1, &j2) && r == 0 && k == 0 && j1 == 0 && j2 == 1);
    CHECK(mblx_diff(F.g, dxy, F.X) == MBLX_NONE);
    CHECK(mblx_graph_status(F.g, &st) == MBL_EARG);
    CHECK(strstr(st.msg, "third derivatives of user routine 'f' are not available") != NULL);
    mblx_sparse_free(&J);
    mblx_sparse_free(&H);
    mblx_graph_free(F.g);
}

TEST(derivatives_with_partials) { check_derivatives(1, 1e-14, 1e-6); }
TEST(derivatives_by_differences) { check_derivatives(0, 1e-8, 1e-4); }

/* Calls of one evaluation of the outputs and the four partials. */
static void check_calls(int partials)
{
    fixture F;
    setup(&F, partials);
    mblx_id e[6] = {F.out0, F.out1};
    for (int k = 0; k < 2; k++)
        for (int j = 0; j < 2; j++) e[2 + 2 * k + j] = mblx_diff(F.g, k ? F.out1 : F.out0, j ? F.Y : F.X);
    mbl_status st;
    mblx_tape *t = mblx_compile(F.g, 6, e, &st);
    CHECK(t != NULL);
    double w[256], s[2] = {0.3, 0.9}, o[6];
    CHECK(mblx_tape_work_size(t) <= 256);
    CHECK(mblx_tape_eval(t, s, o, w, &st) == 0);
    CHECK_EQ_INT(F.cnt.calls, partials ? 1 : 5);
    CHECK_EQ_INT(F.cnt.with_partials, partials ? 1 : 0);
    CHECK_CLOSE(o[3], sin(0.3), partials ? 1e-15 : 1e-9);
    CHECK_CLOSE(o[4], 0.6, partials ? 1e-15 : 1e-9);
    /* the next evaluation calls again (the caches are marked empty), once; other inputs too */
    CHECK(mblx_tape_eval(t, s, o, w, &st) == 0);
    CHECK_EQ_INT(F.cnt.calls, partials ? 2 : 10);
    s[0] = 0.5;
    CHECK(mblx_tape_eval(t, s, o, w, &st) == 0);
    CHECK_EQ_INT(F.cnt.calls, partials ? 3 : 15);
    CHECK_CLOSE(o[0], sin(0.5) * 0.9, 1e-15);
    mblx_tape_free(t);
    /* two calls of the routine at other inputs in one expression: two calls per evaluation */
    mblx_id swapped[2] = {F.Y, F.X};
    mblx_id two = mblx_add(F.g, F.out0, mblx_user_call(F.g, F.r, 0, swapped));
    F.cnt.calls = 0;
    double v;
    CHECK(mblx_eval(F.g, two, s, &v, &st) == 0);
    CHECK_EQ_INT(F.cnt.calls, 2);
    CHECK_CLOSE(v, sin(0.5) * 0.9 + sin(0.9) * 0.5, 1e-15);
    mblx_graph_free(F.g);
}

TEST(one_call_per_evaluation_with_partials) { check_calls(1); }
TEST(calls_by_differences) { check_calls(0); }

/* Forward mode: the tangents of the outputs (the partials) and of a partial (second derivatives). */
static void check_forward(int partials, double tol1, double tol2)
{
    fixture F;
    setup(&F, partials);
    mblx_id p00 = mblx_diff(F.g, F.out0, F.X); /* y cos x: tangents -y sin x, cos x */
    mblx_id e[4] = {F.out0, F.out1, p00, F.e};
    mbl_status st;
    mblx_tape *t = mblx_compile(F.g, 4, e, &st);
    CHECK(t != NULL);
    double w[512], seed[4] = {1, 0, 0, 1}, out[4], dout[8];
    CHECK(mblx_tape_fwd_work_size(t, 2) <= 512);
    for (int i = 0; i < 4; i++) {
        double x = PTS[i][0], y = PTS[i][1], s[2] = {x, y};
        CHECK(mblx_tape_fwd(t, s, 2, seed, out, dout, w, &st) == 0);
        CHECK_CLOSE(out[0], sin(x) * y, 1e-15);
        CHECK_CLOSE(dout[0], y * cos(x), tol1);
        CHECK_CLOSE(dout[1], sin(x), tol1);
        CHECK_CLOSE(dout[2], 2 * x, tol1);
        CHECK_CLOSE(dout[3], exp(y), tol1);
        CHECK_CLOSE(dout[4], -y * sin(x), tol2);
        CHECK_CLOSE(dout[5], cos(x), tol2);
        CHECK_CLOSE(dout[6], 3 * y * cos(x) + 3 * x * x + exp(y), tol1);
        CHECK_CLOSE(dout[7], 3 * sin(x) + x * exp(y), tol1);
    }
    mblx_tape_free(t);
    /* a second derivative has no tangent (a third derivative) */
    mblx_id h = mblx_diff(F.g, p00, F.Y);
    t = mblx_compile(F.g, 1, &h, &st);
    double s0[2] = {0.5, 0.5};
    CHECK(t && mblx_tape_fwd(t, s0, 2, seed, out, dout, w, &st) == MBL_EDOMAIN);
    CHECK_MSG(strstr(st.msg, "derivative not finite in f[0]'0'1(x, y)") != NULL, "%s", st.msg);
    CHECK(mblx_tape_fwd(t, s0, 0, NULL, out, NULL, w, &st) == 0); /* its value alone */
    CHECK_CLOSE(out[0], cos(0.5), tol2);
    mblx_tape_free(t);
    /* the Jacobian values by colors */
    mblx_id syms[2] = {F.X, F.Y};
    mblx_fwdjac *J = mblx_fwdjac_new(F.g, 1, &F.e, 2, syms, &st);
    mblx_tape *tj = mblx_compile(F.g, 1, &F.e, &st);
    CHECK(J && tj && mblx_fwdjac_work_size(J, tj) <= 512);
    double vals[2], s[2] = {0.8, -0.3};
    CHECK(mblx_fwdjac_eval(J, tj, s, vals, NULL, w, &st) == 0);
    CHECK_CLOSE(vals[0], 3 * -0.3 * cos(0.8) + 3 * 0.64 + exp(-0.3), tol1);
    CHECK_CLOSE(vals[1], 3 * sin(0.8) + 0.8 * exp(-0.3), tol1);
    mblx_fwdjac_free(J);
    mblx_tape_free(tj);
    mblx_graph_free(F.g);
}

TEST(forward_with_partials) { check_forward(1, 1e-14, 1e-6); }
TEST(forward_by_differences) { check_forward(0, 1e-8, 1e-4); }

TEST(differences_and_their_error)
{
    fixture F;
    setup(&F, 1);
    mbl_status st;
    for (int i = 0; i < 4; i++) {
        double x = PTS[i][0], y = PTS[i][1], in[2] = {x, y}, dif[4], err[4], out[2], P[4];
        double ref[4] = {y * cos(x), sin(x), 2 * x, exp(y)}; /* row-major: d out_k / d in_j */
        CHECK(mblx_user_differences(F.g, F.r, in, dif, err, &st) == 0);
        for (int k = 0; k < 4; k++) {
            CHECK(fabs(dif[k] - ref[k]) <= err[k]);
            CHECK(err[k] < 1e-6);
        }
        CHECK(mblx_user_eval(F.g, F.r, in, out, P, &st) == 0); /* the routine's own */
        CHECK_CLOSE(out[1], x * x + exp(y), 1e-15);
        for (int k = 0; k < 4; k++) CHECK_CLOSE(P[k], ref[k], 1e-15);
    }
    CHECK(mblx_user_eval(F.g, 7, (double[]){1, 2}, (double[2]){0}, NULL, &st) == MBL_EARG);
    mblx_graph_free(F.g);
}

TEST(failures_name_the_routine)
{
    fixture F;
    setup(&F, 0);
    mbl_status st;
    double o[2];
    mblx_id e[2] = {F.out1, F.e};
    F.cnt.fail = 1;
    CHECK(tape_values(&F, 2, e, 0.5, 0.25, o, &st) == MBL_EDOMAIN);
    CHECK(strstr(st.msg, "routine 'f': x = 0.5 is out of range") != NULL);
    CHECK(strstr(st.msg, " in f[1](x, y)") != NULL);
    double s[2] = {0.5, 0.25}, w[512], dout[4];
    mblx_tape *t = mblx_compile(F.g, 2, e, &st);
    CHECK(mblx_tape_fwd(t, s, 2, (double[]){1, 0, 0, 1}, o, dout, w, &st) == MBL_EDOMAIN);
    CHECK(strstr(st.msg, "routine 'f': x = 0.5 is out of range") != NULL);
    mblx_tape_free(t);
    CHECK(mblx_user_eval(F.g, F.r, s, o, NULL, &st) == MBL_EDOMAIN);
    CHECK(strstr(st.msg, "routine 'f': x = 0.5 is out of range") != NULL);
    F.cnt.fail = 0;
    F.cnt.nan_out = 1;
    CHECK(tape_values(&F, 2, e, 0.5, 0.25, o, &st) == MBL_EDOMAIN);
    CHECK(strstr(st.msg, "routine 'f': output 2 is nan") != NULL);
    CHECK(mblx_user_differences(F.g, F.r, s, NULL, NULL, &st) == MBL_EDOMAIN);
    CHECK(strstr(st.msg, "output 2 is nan") != NULL);
    mblx_graph_free(F.g);
}

TEST(uses_user_finds_a_deep_routine)
{
    fixture F;
    setup(&F, 1);
    mblx_id deep = mblx_add(F.g, F.out1, F.X), plain = mblx_mul(F.g, F.X, F.Y);
    for (int i = 0; i < 200; i++) {
        deep = mblx_sin(F.g, mblx_add(F.g, deep, plain));
        plain = mblx_cos(F.g, mblx_add(F.g, plain, F.Y));
    }
    long r = -5;
    mblx_id both[2] = {plain, deep};
    CHECK(mblx_uses_user(F.g, 1, &plain, &r) == 0 && r == -5);
    CHECK(mblx_uses_user(F.g, 2, both, &r) == 1 && r == 0);
    CHECK(mblx_uses_user(F.g, 1, &deep, NULL) == 1);
    mblx_graph *g2 = mblx_graph_new(); /* a graph without routines: at once */
    mblx_id x = mblx_symbol(g2, "x");
    CHECK(mblx_uses_user(g2, 1, &x, &r) == 0);
    mblx_graph_free(g2);
    mblx_graph_free(F.g);
}

TEST(printing)
{
    fixture F;
    setup(&F, 1);
    char buf[128];
    mblx_print(F.g, F.out0, buf, sizeof buf);
    CHECK(strcmp(buf, "f[0](x, y)") == 0);
    mblx_id p = mblx_diff(F.g, F.out1, F.Y);
    mblx_print(F.g, p, buf, sizeof buf);
    CHECK(strcmp(buf, "f[1]'1(x, y)") == 0);
    mblx_print(F.g, mblx_diff(F.g, p, F.X), buf, sizeof buf);
    CHECK(strcmp(buf, "f[1]'0'1(x, y)") == 0);
    mblx_id in[2] = {mblx_add(F.g, F.X, mblx_const(F.g, 1.0)), mblx_powc(F.g, F.Y, 2.0)};
    mblx_print(F.g, mblx_neg(F.g, mblx_user_call(F.g, F.r, 1, in)), buf, sizeof buf);
    CHECK_MSG(strcmp(buf, "-f[1](x + 1, y^2)") == 0, "%s", buf);
    CHECK(strcmp(mblx_op_name(MBLX_OP_USER), "user") == 0);
    mblx_graph_free(F.g);
}

/* A view of some outputs (the operating point's rows, tape_subset.h): its evaluation and its rows'
 * Jacobian entries call the routine as the whole tape does (the caches in the tape's work). */
TEST(views_of_a_tape)
{
    fixture F;
    setup(&F, 1);
    mblx_id rows[3] = {mblx_mul(F.g, F.X, F.Y), F.out0, F.e}, syms[2] = {F.X, F.Y};
    mbl_status st;
    mblx_tape *t = mblx_compile(F.g, 3, rows, &st);
    mblx_fwdjac *J = mblx_fwdjac_new(F.g, 3, rows, 2, syms, &st);
    uint32_t sel = 2;
    mblx__subtape *s = mblx__subtape_new(t, 1, &sel);
    CHECK(t && J && s);
    double w[512], x[2] = {0.6, -0.4}, v = 0.0, vals[6] = {0};
    CHECK(mblx_fwdjac_work_size(J, t) <= 512);
    CHECK(mblx_tape_eval(mblx__subtape_tape(s), x, &v, w, &st) == 0);
    CHECK_CLOSE(v, 3 * sin(0.6) * -0.4 + (0.36 + exp(-0.4)) * 0.6, 1e-14);
    CHECK_EQ_INT(F.cnt.calls, 1);
    int outpos[3] = {-1, -1, 0};
    CHECK(mblx__fwdjac_eval_rows(J, s, outpos, x, vals, w, &st) == 0);
    CHECK_EQ_INT(F.cnt.calls, 2); /* one call (with partials) per evaluation */
    const int *cp, *ri;
    mblx_fwdjac_pattern(J, &cp, &ri);
    for (int j = 0; j < 2; j++)
        for (int k = cp[j]; k < cp[j + 1]; k++) {
            if (ri[k] != 2) continue;
            CHECK_CLOSE(vals[k], j ? 3 * sin(0.6) + 0.6 * exp(-0.4) : 3 * -0.4 * cos(0.6) + 3 * 0.36 + exp(-0.4), 1e-14);
        }
    mblx__subtape_free(s);
    mblx_fwdjac_free(J);
    mblx_tape_free(t);
    mblx_graph_free(F.g);
}

static int other_routine(mbl_user_call *c)
{
    c->out[0] = c->in[0];
    return 0;
}

TEST(registry)
{
    mblx_graph *g = mblx_graph_new();
    mbl_status st;
    mblx_user_def ok = {"g", 1, 1, other_routine, NULL, 0};
    CHECK(mblx_user_add(g, &(mblx_user_def){"", 1, 1, other_routine, NULL, 0}) == -1);
    CHECK(mblx_graph_status(g, &st) == MBL_EARG && strstr(st.msg, "needs a name"));
    mblx_graph_free(g);
    g = mblx_graph_new();
    CHECK(mblx_user_add(g, &(mblx_user_def){"h", 1, 1, NULL, NULL, 0}) == -1);
    CHECK(mblx_graph_status(g, &st) == MBL_EARG && strstr(st.msg, "routine 'h' has no function"));
    mblx_graph_free(g);
    g = mblx_graph_new();
    CHECK(mblx_user_add(g, &(mblx_user_def){"h", 0, 1, other_routine, NULL, 0}) == -1);
    CHECK(mblx_graph_status(g, &st) == MBL_EARG && strstr(st.msg, "0 inputs"));
    mblx_graph_free(g);
    g = mblx_graph_new();
    CHECK(mblx_user_add(g, &(mblx_user_def){"h", 1, MBLX_USER_MAX_IO + 1, other_routine, NULL, 0}) == -1);
    mblx_graph_free(g);
    g = mblx_graph_new();
    char name[8] = "g";
    ok.name = name;
    CHECK(mblx_user_add(g, &ok) == 0);
    name[0] = 'q'; /* the graph keeps its own copy */
    CHECK(mblx_user_add(g, &(mblx_user_def){"g", 2, 1, other_routine, NULL, 1}) == -1);
    CHECK(mblx_graph_status(g, &st) == MBL_EARG && strstr(st.msg, "routine 'g' given twice"));
    mblx_graph_free(g);
    g = mblx_graph_new();
    name[0] = 'g';
    CHECK(mblx_user_add(g, &ok) == 0);
    CHECK(mblx_user_add(g, &(mblx_user_def){"two", 2, 3, other_routine, NULL, 1}) == 1);
    CHECK(mblx_user_count(g) == 2);
    mblx_user_def d;
    CHECK(mblx_user_info(g, 1, &d) == 0 && !strcmp(d.name, "two") && d.nin == 2 && d.nout == 3 && d.partials == 1);
    CHECK(mblx_user_info(g, 2, &d) == MBL_EARG);
    mblx_id x = mblx_symbol(g, "x");
    CHECK(mblx_user_call(g, 0, 1, &x) == MBLX_NONE); /* no output 1 */
    CHECK(mblx_graph_status(g, &st) == MBL_EARG && strstr(st.msg, "routine 'g' has no output 1"));
    mblx_graph *h = mblx_graph_new();
    CHECK(mblx_user_call(h, 0, 0, &x) == MBLX_NONE); /* no routine */
    CHECK(mblx_user_copy(h, g) == 0); /* (h's sticky error stays; the copy is made) */
    CHECK(mblx_user_count(h) == 2);
    CHECK(mblx_user_copy(h, g) == MBL_EARG); /* it has routines now */
    mblx_graph_free(h);
    /* a tape keeps its copy of the routines: it outlives its graph */
    mblx_id y = mblx_user_call(g, 0, 0, &x);
    mblx_tape *t = mblx_compile(g, 1, &y, &st);
    mblx_graph_free(g);
    double w[64], s = 4.5, v = 0;
    CHECK(t && mblx_tape_work_size(t) <= 64);
    CHECK(mblx_tape_eval(t, &s, &v, w, &st) == 0 && v == 4.5);
    mblx_tape_free(t);
}

int main(void)
{
    RUN(values_through_a_tape);
    RUN(derivatives_with_partials);
    RUN(derivatives_by_differences);
    RUN(one_call_per_evaluation_with_partials);
    RUN(calls_by_differences);
    RUN(forward_with_partials);
    RUN(forward_by_differences);
    RUN(differences_and_their_error);
    RUN(failures_name_the_routine);
    RUN(uses_user_finds_a_deep_routine);
    RUN(printing);
    RUN(views_of_a_tape);
    RUN(registry);
    return test_summary("expr_user");
}
