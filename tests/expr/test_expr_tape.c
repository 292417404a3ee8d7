/* Compiled tapes: values, common subexpressions computed once (also common parts of flat sums
 * and products), register reuse, domain errors
 * with messages, independence from the graph, long sums and deep chains. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/expr.h"
#include "parse_fixture.h"
#include "test.h"

static mblx_graph *G;
static mblx_id X, Y;
#define LET_ROT_MAX 43 /* measured; the inlined form with shared chains and pairs: 43, no sharing: 64 */

static mblx_id P(const char *s) { return fixture_parse(G, s); }

TEST(values)
{
    double x = 0.7, y = -1.3;
    double s[2] = {x, y}, v[6], w[64];
    mblx_id out[6] = {P("x*y + sin(x)^2/y"), P("exp(-x^2)*atan2(y, x)"), P("sqrt(x)*log(1 + x^2)"),
                      P("step(x, 0, 1, 1, y) - min(x, y) + max(x, y)"), P("(x + y)^3 - x^-2 + 2^x"),
                      P("abs(y)*sign(y) + tanh(x)*cosh(y) - sinh(x)*acos(x)*asin(x/2)")};
    mbl_status st;
    mblx_tape *t = mblx_compile(G, 6, out, &st);
    CHECK(t != NULL);
    CHECK(mblx_tape_work_size(t) <= 64);
    CHECK_EQ_INT(mblx_tape_noutputs(t), 6);
    CHECK_EQ_INT(mblx_tape_nsymbols(t), 2);
    CHECK_EQ_INT(mblx_tape_eval(t, s, v, w, &st), 0);
    double u = x;
    CHECK_REL(v[0], x * y + sin(x) * sin(x) / y, 1e-15);
    CHECK_REL(v[1], exp(-x * x) * atan2(y, x), 1e-15);
    CHECK_REL(v[2], sqrt(x) * log(1 + x * x), 1e-15);
    CHECK_REL(v[3], 1 + (y - 1) * u * u * (3 - 2 * u) - y + x, 1e-15);
    CHECK_REL(v[4], pow(x + y, 3) - 1 / (x * x) + pow(2, x), 1e-14);
    CHECK_REL(v[5], fabs(y) * -1 + tanh(x) * cosh(y) - sinh(x) * acos(x) * asin(x / 2), 1e-15);
    mblx_tape_free(t);
    mblx_tape_free(NULL);
    /* constant and symbol outputs, zero outputs */
    mblx_id o2[3] = {mblx_const(G, 2.5), Y, X};
    t = mblx_compile(G, 3, o2, &st);
    CHECK_EQ_INT(mblx_tape_eval(t, s, v, w, &st), 0);
    CHECK(v[0] == 2.5 && v[1] == y && v[2] == x);
    mblx_tape_free(t);
    t = mblx_compile(G, 0, NULL, &st);
    CHECK(t != NULL);
    CHECK_EQ_INT(mblx_tape_eval(t, NULL, NULL, w, &st), 0);
    mblx_tape_free(t);
    /* invalid output handle */
    mblx_id bad = MBLX_NONE;
    CHECK(mblx_compile(G, 1, &bad, &st) == NULL);
    CHECK_EQ_INT(st.code, MBL_EARG);
}

TEST(common_subexpressions_once)
{
    /* a costly shared subexpression used by 200 outputs is computed once */
    mblx_id s = P("sqrt(sin(x)*cos(y) + exp(x*y) + sqrt(1 + x^2)*atan(y))");
    mbl_status st;
    mblx_tape *t1 = mblx_compile(G, 1, &s, &st);
    size_t n1 = mblx_tape_ninstr(t1);
    enum { NO = 200 };
    mblx_id out[NO];
    for (int i = 0; i < NO; i++) out[i] = mblx_add(G, s, mblx_const(G, i + 1.0));
    mblx_tape *t = mblx_compile(G, NO, out, &st);
    CHECK_EQ_INT(mblx_tape_ninstr(t), n1 + NO); /* one "add constant" per output */
    double sv[2] = {0.3, 0.9}, v[NO], base, w[256];
    CHECK(mblx_tape_work_size(t) <= 256);
    CHECK_EQ_INT(mblx_tape_eval(t1, sv, &base, w, &st), 0);
    CHECK_EQ_INT(mblx_tape_eval(t, sv, v, w, &st), 0);
    for (int i = 0; i < NO; i++) CHECK(v[i] == base + (i + 1.0));
    /* the same output listed twice is one computation */
    mblx_id twice[2] = {s, s};
    mblx_tape *t2 = mblx_compile(G, 2, twice, &st);
    CHECK_EQ_INT(mblx_tape_ninstr(t2), n1);
    mblx_tape_free(t1);
    mblx_tape_free(t2);
    mblx_tape_free(t);
    /* instruction count of a known expression: x*y + sin(x): LDS x, LDS y, MUL, SIN, ADD */
    mblx_id e = P("x*y + sin(x)");
    t = mblx_compile(G, 1, &e, &st);
    CHECK_EQ_INT(mblx_tape_ninstr(t), 5);
    mblx_tape_free(t);
}

static size_t ninstr_of(size_t n, const char *const *texts)
{
    mblx_id out[8];
    for (size_t i = 0; i < n; i++) out[i] = P(texts[i]);
    mbl_status st;
    mblx_tape *t = mblx_compile(G, n, out, &st);
    size_t k = t ? mblx_tape_ninstr(t) : 0;
    mblx_tape_free(t);
    return k;
}

/* Rotation R = Rz(a) Rx(b) Ry(c) (yaw, lean, pitch) at angles q, column-major. */
static void rot_zxy(const double *q, double *R)
{
    double ca = cos(q[0]), sa = sin(q[0]), cb = cos(q[1]), sb = sin(q[1]), cc = cos(q[2]), sc = sin(q[2]);
    double Rz[9] = {ca, sa, 0, -sa, ca, 0, 0, 0, 1}, Rx[9] = {1, 0, 0, 0, cb, sb, 0, -sb, cb};
    double Ry[9] = {cc, 0, -sc, 0, 1, 0, sc, 0, cc}, T[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            T[i + 3 * j] = 0;
            for (int k = 0; k < 3; k++) T[i + 3 * j] += Rz[i + 3 * k] * Rx[k + 3 * j];
        }
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            R[i + 3 * j] = 0;
            for (int k = 0; k < 3; k++) R[i + 3 * j] += T[i + 3 * k] * Ry[k + 3 * j];
        }
}

/* The rotation Rz(q0) Rx(q1) Ry(q2) of a spatial model (R: 9 entries, by column); let_t: the partial
 * product T = Rz Rx kept as lets. */
static void rotation(const mblx_id *q, mblx_id *R, int let_t)
{
    mblx_id ca = mblx_cos(G, q[0]), sa = mblx_sin(G, q[0]), cb = mblx_cos(G, q[1]), sb = mblx_sin(G, q[1]);
    mblx_id cc = mblx_cos(G, q[2]), sc = mblx_sin(G, q[2]), z = mblx_const(G, 0), o = mblx_const(G, 1);
    mblx_id Rz[9] = {ca, sa, z, mblx_neg(G, sa), ca, z, z, z, o}, Rx[9] = {o, z, z, z, cb, sb, z, mblx_neg(G, sb), cb};
    mblx_id Ry[9] = {cc, z, mblx_neg(G, sc), z, o, z, sc, z, cc}, T[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            mblx_id f[3];
            for (int k = 0; k < 3; k++) f[k] = mblx_mul(G, Rz[i + 3 * k], Rx[k + 3 * j]);
            T[i + 3 * j] = let_t ? mblx_let(G, mblx_sum(G, 3, f)) : mblx_sum(G, 3, f);
        }
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            mblx_id f[3];
            for (int k = 0; k < 3; k++) f[k] = mblx_mul(G, T[i + 3 * k], Ry[k + 3 * j]);
            R[i + 3 * j] = mblx_sum(G, 3, f);
        }
}

/* Its Jacobian with respect to its three angles (J: 27 entries, by entry then angle). */
static void rotation_jacobian(const mblx_id *q, mblx_id *J)
{
    mblx_id R[9];
    rotation(q, R, 0);
    for (int e = 0; e < 9; e++)
        for (int k = 0; k < 3; k++) J[3 * e + k] = mblx_diff(G, R[e], q[k]);
}

TEST(shared_sums_and_products)
{
    /* the graph keeps sums and products flat; the compiler shares their common parts */
    static const char *const p2[] = {"a*b*c", "a*b*d"}; /* LDS a b c d, a*b, *c, *d */
    CHECK_EQ_INT(ninstr_of(2, p2), 7);                  /* was 8 */
    static const char *const p3[] = {"a*b", "a*b*c"};   /* LDS a b c, a*b, *c */
    CHECK_EQ_INT(ninstr_of(2, p3), 5);                  /* was 6 */
    static const char *const s2[] = {"a + b + c", "a + b + d"};
    CHECK_EQ_INT(ninstr_of(2, s2), 7); /* was 8 */
    static const char *const c1[] = {"2*a*b"};          /* the coefficient fused: a*b*2 */
    CHECK_EQ_INT(ninstr_of(1, c1), 3);                  /* was 4 */
    static const char *const c2[] = {"a + b + 1", "a - b"};
    CHECK_EQ_INT(ninstr_of(2, c2), 5); /* LDS a b, a+b+1, -1*b, a + (-b); was 6 */
    /* values through shared chains, with constants */
    static const char *const v6[] = {"2*a*b*c", "-a*b*d", "a*b*c*d + 3", "a + b + c + 1", "a + b - d", "a*b"};
    mblx_id out[6];
    for (int i = 0; i < 6; i++) out[i] = P(v6[i]);
    mbl_status st;
    mblx_tape *t = mblx_compile(G, 6, out, &st);
    double a = 0.3, b = -1.7, c = 2.5, d = 0.9, v[6], w[64];
    long ia = mblx_symbol_index(G, P("a")), ib = mblx_symbol_index(G, P("b")), ic = mblx_symbol_index(G, P("c")),
         id = mblx_symbol_index(G, P("d"));
    double sv[16] = {0};
    sv[ia] = a, sv[ib] = b, sv[ic] = c, sv[id] = d;
    CHECK(mblx_tape_work_size(t) <= 64);
    CHECK_EQ_INT(mblx_tape_eval(t, sv, v, w, &st), 0);
    double want[6] = {2 * a * b * c, -a * b * d, a * b * c * d + 3, a + b + c + 1, a + b - d, a * b};
    for (int i = 0; i < 6; i++) CHECK_REL(v[i], want[i], 1e-15);
    mblx_tape_free(t);

    /* a rotation product of a spatial model and its Jacobian with respect to its three angles:
     * values against central differences of the matrix product, instructions bounded */
    mblx_id q[3] = {P("qa"), P("qb"), P("qc")}, J[27];
    rotation_jacobian(q, J);
    t = mblx_compile(G, 27, J, &st);
    CHECK(t != NULL);
    if (!t) return;
    size_t nj = mblx_tape_ninstr(t);
    CHECK_MSG(nj <= 43, "rotation Jacobian tape: %zu instructions", nj); /* 64 without sharing */
    double qv[3] = {0.4, -0.25, 0.8}, jv[27], *wk = malloc(mblx_tape_work_size(t) * sizeof *wk);
    double svq[32] = {0};
    for (int k = 0; k < 3; k++) svq[mblx_symbol_index(G, q[k])] = qv[k];
    CHECK_EQ_INT(mblx_tape_eval(t, svq, jv, wk, &st), 0);
    for (int k = 0; k < 3; k++) {
        double qp[3] = {qv[0], qv[1], qv[2]}, qm[3] = {qv[0], qv[1], qv[2]}, Rp[9], Rm[9], h = 1e-6;
        qp[k] += h, qm[k] -= h;
        rot_zxy(qp, Rp);
        rot_zxy(qm, Rm);
        for (int e = 0; e < 9; e++) CHECK_CLOSE(jv[3 * e + k], (Rp[e] - Rm[e]) / (2 * h), 1e-9);
    }
    free(wk);
    mblx_tape_free(t);
}

/* A pair shared into a product that already has the pair's node as a factor (through a let: the
 * tape reads let(a*b) as the product a*b) leaves that factor twice in the product; a later pair
 * with it must take one occurrence, not both (tape_share.c apply_pair: c*w*w was computed as c*w).
 * e1 = a*b*let(a*b)*c and e2 = a*b*d share (a, b) = w, which makes e1 = c*w*w; e3 = c*let(a*b)*e
 * and e1 then share (c, w). */
TEST(pairs_with_repeated_factor)
{
    mblx_id a = P("sa"), b = P("sb"), c = P("sc"), d = P("sd"), e = P("se"), w = mblx_let(G, P("sa*sb"));
    mblx_id f1[4] = {a, b, w, c}, f2[3] = {a, b, d}, f3[3] = {c, w, e};
    mblx_id out[3] = {mblx_product(G, 4, f1), mblx_product(G, 3, f2), mblx_product(G, 3, f3)};
    mbl_status st;
    mblx_tape *t = mblx_compile(G, 3, out, &st);
    CHECK(t != NULL);
    if (!t) return;
    double va = 0.3, vb = -1.7, vc = 2.5, vd = 0.9, ve = -0.45, r[3], sv[64] = {0};
    double *wk = malloc((mblx_tape_work_size(t) + 1) * sizeof *wk);
    sv[mblx_symbol_index(G, a)] = va, sv[mblx_symbol_index(G, b)] = vb, sv[mblx_symbol_index(G, c)] = vc;
    sv[mblx_symbol_index(G, d)] = vd, sv[mblx_symbol_index(G, e)] = ve;
    CHECK(mblx_tape_nsymbols(t) <= 64);
    CHECK_EQ_INT(mblx_tape_eval(t, sv, r, wk, &st), 0);
    double want[3] = {va * vb * (va * vb) * vc, va * vb * vd, vc * (va * vb) * ve};
    for (int i = 0; i < 3; i++) CHECK_MSG(fabs(r[i] - want[i]) <= 1e-14 * fabs(want[i]), "e%d: %.17g, want %.17g", i + 1, r[i], want[i]);
    free(wk);
    mblx_tape_free(t);
}

/* A pair the search does not count at first (tape_share.c count_pairs: (uy, t) in p1 = uy t uu,
 * where t = ua ub, a let's node, is in no other product) comes back when the extraction makes the
 * pair node t of (ua, ub), shared by p2 = uy ua ub uv and p3 = ua ub us: p2 then holds uy and t
 * too, and (uy, t), in p1 and p2, is shared as one node (apply_pair makes its record first, as
 * counting every pair would have). The groupings follow from the greedy search by hand:
 * p1 = uu (uy t), p2 = uv (uy t), p3 = us t (5 operations); without the pair (uy, t), p2 would be
 * (uy uv) t (6), other bits for these values. Chains alone take 7 (uy comes first in the graph's
 * order: p2 = ((uy ua) ub) uv shares no prefix). */
TEST(pairs_uncounted_come_back)
{
    mblx_id y = P("uy"), a = P("ua"), b = P("ub"), t = mblx_let(G, P("ua*ub")), u = P("uu"), v = P("uv"), s = P("us");
    mblx_id f1[3] = {t, y, u}, f2[4] = {a, b, y, v}, f3[3] = {a, b, s};
    mblx_id out[3] = {mblx_product(G, 3, f1), mblx_product(G, 4, f2), mblx_product(G, 3, f3)};
    mbl_status st;
    mblx_tape *tp = mblx_compile(G, 3, out, &st);
    CHECK(tp != NULL);
    if (!tp) return;
    double vy = 0.1, va = 0.7, vb = 1.3, vu = 0.3, vv = 3.3, vs = 1.7, r[3], sv[64] = {0};
    double *wk = malloc((mblx_tape_work_size(tp) + 1) * sizeof *wk);
    sv[mblx_symbol_index(G, y)] = vy, sv[mblx_symbol_index(G, a)] = va, sv[mblx_symbol_index(G, b)] = vb;
    sv[mblx_symbol_index(G, u)] = vu, sv[mblx_symbol_index(G, v)] = vv, sv[mblx_symbol_index(G, s)] = vs;
    CHECK(mblx_tape_nsymbols(tp) <= 64);
    CHECK_EQ_INT(mblx_tape_eval(tp, sv, r, wk, &st), 0);
    volatile double ab = va * vb, yt = vy * ab;
    double want[3] = {vu * yt, vv * yt, vs * ab}, other = (vy * vv) * ab;
    CHECK(other != want[1]); /* the values tell the groupings apart */
    for (int i = 0; i < 3; i++) CHECK_MSG(r[i] == want[i], "p%d: %.17g, want %.17g", i + 1, r[i], want[i]);
    CHECK_EQ_INT((int)mblx_tape_ninstr(tp), 6 + 5); /* six loads, five products */
    free(wk);
    mblx_tape_free(tp);
}

/* A sub-DAG of SHARE_ONE_FORM_MIN nodes or more where a pair is shared takes the pairs form without
 * building chains alone to compare (tape_share.c): one rotation Jacobian alone (a small sub-DAG)
 * takes the 43 instructions of chains alone, shorter than the pairs form; 40 independent ones in
 * one tape (their constants shared) take 1,761, the pairs form, where chains alone would take
 * 1,681. */
TEST(large_sub_dag_one_form)
{
    enum { NC = 40 };
    mblx_id J[NC * 27];
    for (int c = 0; c < NC; c++) {
        char nm[3][16];
        mblx_id q[3];
        for (int k = 0; k < 3; k++) snprintf(nm[k], sizeof nm[k], "r%d_%d", c, k), q[k] = P(nm[k]);
        rotation_jacobian(q, J + 27 * c);
    }
    mbl_status st;
    mblx_tape *one = mblx_compile(G, 27, J, &st), *all = mblx_compile(G, NC * 27, J, &st);
    CHECK(one && all);
    if (one && all) {
        CHECK_EQ_INT((int)mblx_tape_ninstr(one), 43);
        CHECK_MSG(mblx_tape_ninstr(all) == 1761, "%d rotation Jacobians: %zu instructions", NC,
                  mblx_tape_ninstr(all));
    }
    /* mblx_compile_few (a one-point load's tapes): chains alone at every size, bound or not, and
     * the same values to rounding */
    mblx_tape *few = mblx_compile_few(G, NC * 27, J, 0, NULL, NULL, &st);
    mblx_tape *fewb = mblx_compile_few(G, NC * 27, J, 1, NULL, NULL, &st);
    CHECK(few && fewb);
    if (few && fewb && all) {
        CHECK_MSG(mblx_tape_ninstr(few) == 1681 && mblx_tape_ninstr(fewb) == 1681, "chains alone: %zu, %zu",
                  mblx_tape_ninstr(few), mblx_tape_ninstr(fewb));
        size_t ns = mblx_symbol_count(G), nw = mblx_tape_work_size(all);
        if (mblx_tape_work_size(few) > nw) nw = mblx_tape_work_size(few);
        double *sv = calloc(ns + 1, sizeof *sv), *wk = calloc(nw + 1, sizeof *wk);
        double *r1 = calloc(NC * 27, sizeof *r1), *r2 = calloc(NC * 27, sizeof *r2);
        for (size_t i = 0; i < ns; i++) sv[i] = 0.1 + 0.37 * (double)(i % 11);
        CHECK_EQ_INT(mblx_tape_eval(all, sv, r1, wk, &st), 0);
        CHECK_EQ_INT(mblx_tape_eval(few, sv, r2, wk, &st), 0);
        for (int i = 0; i < NC * 27; i++) CHECK_MSG(fabs(r1[i] - r2[i]) <= 1e-14 * (1 + fabs(r1[i])), "entry %d", i);
        free(sv), free(wk), free(r1), free(r2);
    }
    mblx_tape_free(few), mblx_tape_free(fewb);
    mblx_tape_free(one), mblx_tape_free(all);
}

/* let(x) (mblx_let): an intermediate kept as one node through sums, products and derivatives, read
 * by the tape compiler as x (no instruction). */
TEST(let_nodes)
{
    mblx_id a = P("a"), b = P("b"), c = P("c"), d = P("d"), e = P("e");
    mblx_id ab = P("a*b"), bc = P("b*c"), lab = mblx_let(G, ab), lbc = mblx_let(G, bc);
    CHECK(mblx_node_op(G, lab) == MBLX_OP_LET);
    /* atoms stay themselves, a let is not wrapped twice, a coefficient stays outside */
    CHECK(mblx_let(G, a) == a);
    CHECK(mblx_let(G, P("3")) == P("3"));
    CHECK(mblx_let(G, P("sin(a)")) == P("sin(a)"));
    CHECK(mblx_let(G, lab) == lab);
    CHECK(mblx_let(G, P("-2*a*b")) == mblx_scale(G, -2.0, lab));
    CHECK(mblx_add(G, lab, mblx_neg(G, lab)) == mblx_const(G, 0.0));
    /* products do not merge it: c*let(a*b) has 2 factors, c*(a*b) has 3 */
    CHECK_EQ_INT(mblx_node_nargs(G, mblx_mul(G, c, lab)), 2);
    CHECK_EQ_INT(mblx_node_nargs(G, mblx_mul(G, c, ab)), 3);
    /* its derivatives are lets: d let(a*b*e)/da = let(b*e) */
    mblx_id labe = mblx_let(G, P("a*b*e"));
    CHECK(mblx_diff(G, labe, a) == mblx_let(G, P("b*e")));
    CHECK(mblx_node_op(G, mblx_diff(G, labe, a)) == MBLX_OP_LET);
    /* compiled as x: LDS a b c d, b*c, a*(b*c), d*(b*c) = 7 */
    mblx_id o2[2] = {mblx_mul(G, a, lbc), mblx_mul(G, d, lbc)};
    mbl_status st;
    mblx_tape *t = mblx_compile(G, 2, o2, &st);
    CHECK(t != NULL);
    if (!t) return;
    CHECK_EQ_INT(mblx_tape_ninstr(t), 7);
    double sv[64] = {0}, v[2], w[64];
    double av = 0.7, bv = -1.3, cv = 2.1, dv = 0.4, ev = 1.9;
    sv[mblx_symbol_index(G, a)] = av, sv[mblx_symbol_index(G, b)] = bv, sv[mblx_symbol_index(G, c)] = cv;
    sv[mblx_symbol_index(G, d)] = dv, sv[mblx_symbol_index(G, e)] = ev;
    CHECK_EQ_INT(mblx_tape_eval(t, sv, v, w, &st), 0);
    CHECK_REL(v[0], av * bv * cv, 1e-15);
    CHECK_REL(v[1], dv * bv * cv, 1e-15);
    mblx_tape_free(t);
    /* a let as an output, and reverse mode through lets: d(let(a*b)^2 * let(a*b*e))/da */
    mblx_id f = mblx_mul(G, mblx_powc(G, lab, 2.0), labe), gr[2], sy[2] = {a, e};
    CHECK_EQ_INT(mblx_gradient(G, f, 2, sy, gr), 0);
    mblx_id o3[3] = {lab, gr[0], gr[1]};
    t = mblx_compile(G, 3, o3, &st);
    CHECK(t != NULL);
    if (!t) return;
    double v3[3];
    CHECK_EQ_INT(mblx_tape_eval(t, sv, v3, w, &st), 0);
    CHECK_REL(v3[0], av * bv, 1e-15);
    /* f = a^3 b^3 e: df/da = 3 a^2 b^3 e, df/de = a^3 b^3 */
    CHECK_REL(v3[1], 3 * av * av * bv * bv * bv * ev, 1e-14);
    CHECK_REL(v3[2], av * av * av * bv * bv * bv, 1e-14);
    mblx_tape_free(t);
    /* printing shows x */
    char buf[64];
    mblx_print(G, mblx_let(G, P("a + b")), buf, sizeof buf);
    CHECK(strcmp(buf, "a + b") == 0);

    /* the rotation Rz Rx Ry of shared_sums_and_products with the partial product T = Rz Rx kept
     * as lets (its Jacobian no longer than the inlined form with shared chains and pairs);
     * values against central differences of the matrix product */
    mblx_id q[3] = {P("qa"), P("qb"), P("qc")}, R[9], J[27];
    rotation(q, R, 1);
    for (int en = 0; en < 9; en++)
        for (int k = 0; k < 3; k++) J[3 * en + k] = mblx_diff(G, R[en], q[k]);
    t = mblx_compile(G, 27, J, &st);
    CHECK(t != NULL);
    if (!t) return;
    size_t nj = mblx_tape_ninstr(t);
    CHECK_MSG(nj <= LET_ROT_MAX, "rotation Jacobian tape through lets: %zu instructions", nj);
    double qv[3] = {0.4, -0.25, 0.8}, jv[27], *wk = malloc(mblx_tape_work_size(t) * sizeof *wk);
    double svq[64] = {0};
    for (int k = 0; k < 3; k++) svq[mblx_symbol_index(G, q[k])] = qv[k];
    CHECK_EQ_INT(mblx_tape_eval(t, svq, jv, wk, &st), 0);
    for (int k = 0; k < 3; k++) {
        double qp[3] = {qv[0], qv[1], qv[2]}, qm[3] = {qv[0], qv[1], qv[2]}, Rp[9], Rm[9], h = 1e-6;
        qp[k] += h, qm[k] -= h;
        rot_zxy(qp, Rp);
        rot_zxy(qm, Rm);
        for (int en = 0; en < 9; en++) CHECK_CLOSE(jv[3 * en + k], (Rp[en] - Rm[en]) / (2 * h), 1e-9);
    }
    free(wk);
    mblx_tape_free(t);
}

/* Common pairs of operands at any position (not only prefixes in the graph's order) are computed
 * once: the classic greedy pair extraction before the chains (src/expr/tape_share.c share_pairs). */
TEST(shared_pairs)
{
    (void)P("pa + pb + pc + px + py"); /* the symbols in this order */
    /* chains: pa*px*py, pb*px*py, pc*px*py share nothing (6 multiplications); pairs: px*py once,
     * then one multiplication each (4) */
    static const char *const m3[] = {"pa*px*py", "pb*px*py", "pc*px*py"};
    CHECK_EQ_INT(ninstr_of(3, m3), 5 + 4); /* 5 LDS; was 11 */
    static const char *const s3[] = {"pa + px + py", "pb + px + py", "pc + px + py"};
    CHECK_EQ_INT(ninstr_of(3, s3), 5 + 4);
    /* never longer than the chains alone: a*b*c with a*b*d shares the prefix either way */
    static const char *const p2[] = {"pa*pb*pc", "pa*pb*px"};
    CHECK_EQ_INT(ninstr_of(2, p2), 7);
    /* values with pairs, coefficients and constant terms, against the same arithmetic in double */
    static const char *const v[] = {"2*pa*px*py", "-pb*px*py*pc", "pc*px*py + 3", "pa + px + py - 1",
                                    "pb + px + py + pc", "pa*px + pb*px + pc*px*py"};
    mblx_id out[6];
    for (int i = 0; i < 6; i++) out[i] = P(v[i]);
    mbl_status st;
    mblx_tape *t = mblx_compile(G, 6, out, &st);
    CHECK(t != NULL);
    if (!t) return;
    double a = 0.3, b = -1.7, c = 2.5, x = 0.9, y = -0.45, r[6], w[64], sv[64] = {0};
    CHECK(mblx_tape_work_size(t) <= 64 && mblx_tape_nsymbols(t) <= 64);
    sv[mblx_symbol_index(G, P("pa"))] = a, sv[mblx_symbol_index(G, P("pb"))] = b;
    sv[mblx_symbol_index(G, P("pc"))] = c, sv[mblx_symbol_index(G, P("px"))] = x;
    sv[mblx_symbol_index(G, P("py"))] = y;
    CHECK_EQ_INT(mblx_tape_eval(t, sv, r, w, &st), 0);
    double want[6] = {2 * a * x * y, -b * x * y * c, c * x * y + 3, a + x + y - 1, b + x + y + c,
                      a * x + b * x + c * x * y};
    for (int i = 0; i < 6; i++) CHECK_REL(r[i], want[i], 1e-15);
    mblx_tape_free(t);

    /* second derivatives of a rotation Rz Rx Ry (the entries of d(dR/dq_k)/dq_l: sums of products
     * of sines and cosines with pairs in common at any position) against central differences */
    mblx_id q[3] = {P("qa"), P("qb"), P("qc")}, R[9], H[81];
    rotation(q, R, 0);
    for (int e = 0; e < 9; e++)
        for (int k = 0; k < 3; k++)
            for (int l = 0; l < 3; l++) H[9 * e + 3 * k + l] = mblx_diff(G, mblx_diff(G, R[e], q[k]), q[l]);
    t = mblx_compile(G, 81, H, &st);
    CHECK(t != NULL);
    if (!t) return;
    size_t nh = mblx_tape_ninstr(t);
    CHECK_MSG(nh <= 62, "rotation second-derivative tape: %zu instructions", nh); /* 70 with chains alone */
    double qv[3] = {0.4, -0.25, 0.8}, hv[81], *wk = malloc(mblx_tape_work_size(t) * sizeof *wk);
    double svq[64] = {0};
    for (int k = 0; k < 3; k++) svq[mblx_symbol_index(G, q[k])] = qv[k];
    CHECK_EQ_INT(mblx_tape_eval(t, svq, hv, wk, &st), 0);
    for (int k = 0; k < 3; k++)
        for (int l = 0; l < 3; l++) {
            double h = 1e-4, Rpp[9], Rpm[9], Rmp[9], Rmm[9], qq[3];
            for (int s = 0; s < 4; s++) {
                memcpy(qq, qv, sizeof qq);
                qq[k] += (s & 2) ? -h : h;
                qq[l] += (s & 1) ? -h : h;
                rot_zxy(qq, s == 0 ? Rpp : s == 1 ? Rpm : s == 2 ? Rmp : Rmm);
            }
            for (int e = 0; e < 9; e++)
                CHECK_CLOSE(hv[9 * e + 3 * k + l], (Rpp[e] - Rpm[e] - Rmp[e] + Rmm[e]) / (4 * h * h), 1e-6);
        }
    free(wk);
    mblx_tape_free(t);
}

/* mblx_eval of a single number or symbol (evaluated without a tape): the value given, and the
 * errors a tape's evaluation reports (a symbol's non-finite value, a symbol without values) */
TEST(eval_single_node)
{
    mbl_status st;
    double s[2] = {0.7, -1.3}, v = 12345;
    CHECK_EQ_INT(mblx_eval(G, P("2.5e-3"), NULL, &v, &st), 0);
    CHECK(v == 0.0025 && st.code == 0);
    CHECK_EQ_INT(mblx_eval(G, P("-0.1"), s, &v, &st), 0);
    CHECK(v == -0.1);
    CHECK_EQ_INT(mblx_eval(G, P("y"), s, &v, &st), 0);
    CHECK(v == -1.3);
    CHECK_EQ_INT(mblx_eval(G, P("x"), s, NULL, &st), 0); /* (no value asked) */
    s[1] = INFINITY, v = 12345;
    CHECK_EQ_INT(mblx_eval(G, P("y"), s, &v, &st), MBL_EDOMAIN);
    CHECK(strcmp(st.msg, "non-finite value inf of symbol 'y' in y") == 0);
    CHECK(v == 12345);
    CHECK_EQ_INT(mblx_eval(G, P("x"), NULL, &v, &st), MBL_EARG);
    CHECK_EQ_INT(mblx_eval(G, (mblx_id)1000000, s, &v, &st), MBL_EARG);
    CHECK_EQ_INT(mblx_eval(NULL, 0, s, &v, &st), MBL_EARG);
}

TEST(domain_errors)
{
    static const struct {
        const char *text;
        double x;
        const char *msg;
    } cases[] = {
        {"sqrt(x - 2)", 1.75, "sqrt of negative value -0.25 in sqrt(x - 2)"},
        {"1 + log(x)", 0.0, "log of non-positive value 0 in log(x)"},
        {"log(x - 1)", 0.5, "log of non-positive value -0.5 in log(x - 1)"},
        {"asin(x)", 1.5, "asin of value 1.5 outside [-1, 1] in asin(x)"},
        {"acos(2*x)", -1, "acos of value -2 outside [-1, 1] in acos(2*x)"},
        {"y/x", 0.0, "division by zero in 1/x"},
        {"1/x^2", 0.0, "division by zero in 1/x^2"},
        {"(x - 1)^0.5", 0.5, "pow of negative base -0.5 to non-integer exponent 0.5 in (x - 1)^0.5"},
        {"x^y", -2, "pow of negative base -2 to non-integer exponent 0.5 in x^y"},
        {"exp(1000*x)", 1.0, "non-finite result inf in exp(1000*x)"},
        {"x*1e300*y*1e300", 1.0, "non-finite result inf in 1e+300*x*y*1e+300"},
    };
    mbl_status st;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mblx_id e = P(cases[i].text);
        double s[2] = {cases[i].x, 0.5}, v = 12345;
        int rc = mblx_eval(G, e, s, &v, &st);
        CHECK_MSG(rc == MBL_EDOMAIN, "%s: rc %d", cases[i].text, rc);
        CHECK_MSG(strcmp(st.msg, cases[i].msg) == 0, "%s: \"%s\"", cases[i].text, st.msg);
        CHECK(v == 12345); /* no NaN passed on */
    }
    /* a NaN hidden by a later operation is still reported: sign(sqrt(x)) */
    double s[2] = {-1, 0}, v;
    CHECK_EQ_INT(mblx_eval(G, P("sign(sqrt(x)) + 1"), s, &v, &st), MBL_EDOMAIN);
    CHECK(strstr(st.msg, "sqrt of negative value -1") != NULL);
    /* non-finite input */
    s[0] = NAN;
    CHECK_EQ_INT(mblx_eval(G, P("x + 1"), s, &v, &st), MBL_EDOMAIN);
    CHECK(strcmp(st.msg, "non-finite value nan of symbol 'x' in x") == 0);
    /* a constant division by zero is kept by the builder and reported here */
    CHECK_EQ_INT(mblx_eval(G, P("1/0"), NULL, &v, &st), MBL_EDOMAIN);
    CHECK(strcmp(st.msg, "division by zero in 0^-1") == 0);
    /* the tape works after its graph is gone (messages included) */
    mblx_graph *g = mblx_graph_new();
    mblx_id x = mblx_symbol(g, "xx"), e = mblx_sqrt(g, x);
    mblx_tape *t = mblx_compile(g, 1, &e, &st);
    mblx_graph_free(g);
    double w[4], sv = 4;
    CHECK_EQ_INT(mblx_tape_eval(t, &sv, &v, w, &st), 0);
    CHECK(v == 2);
    sv = -4;
    CHECK_EQ_INT(mblx_tape_eval(t, &sv, &v, w, &st), MBL_EDOMAIN);
    CHECK(strcmp(st.msg, "sqrt of negative value -4 in sqrt(xx)") == 0);
    mblx_tape_free(t);
}

TEST(long_sum_and_deep_chain)
{
    enum { N = 100000 };
    mblx_graph *g = mblx_graph_new();
    mblx_id *terms = malloc(N * sizeof *terms), *syms = malloc(N * sizeof *syms);
    double *sv = malloc(N * sizeof *sv), want = 0;
    char nm[32];
    for (int i = 0; i < N; i++) {
        snprintf(nm, sizeof nm, "q%d", i);
        syms[i] = mblx_symbol(g, nm);
        sv[i] = 0.001 * (i % 1000);
        terms[i] = mblx_mul(g, mblx_const(g, 0.5 + i % 3), mblx_cos(g, syms[i]));
        want += (0.5 + i % 3) * cos(sv[i]);
    }
    mblx_id s = mblx_sum(g, N, terms);
    mbl_status st;
    mblx_tape *t = mblx_compile(g, 1, &s, &st);
    CHECK(t != NULL);
    double *w = malloc(mblx_tape_work_size(t) * sizeof *w), v;
    /* registers are reused: O(1) in N (bounded by the scheduling window of tape_schedule.c) */
    CHECK(mblx_tape_work_size(t) <= 2 * 4096);
    CHECK_EQ_INT(mblx_tape_eval(t, sv, &v, w, &st), 0);
    CHECK_REL(v, want, 1e-12);
    free(w);
    mblx_tape_free(t);
    /* gradient of the long sum: O(size) */
    mblx_id *gr = malloc(N * sizeof *gr);
    CHECK_EQ_INT(mblx_gradient(g, s, N, syms, gr), 0);
    CHECK(gr[7] == mblx_scale(g, -(0.5 + 7 % 3), mblx_sin(g, syms[7])));
    free(gr);
    /* deep chain: x_{k+1} = x_k + sin(x_k) * 1e-5 */
    mblx_id e = syms[0];
    for (int i = 0; i < N; i++) e = mblx_add(g, e, mblx_scale(g, 1e-5, mblx_sin(g, e)));
    t = mblx_compile(g, 1, &e, &st);
    CHECK(t != NULL);
    w = malloc(mblx_tape_work_size(t) * sizeof *w);
    CHECK(mblx_tape_work_size(t) <= 4 * MBLX_FLATTEN_MAX); /* not O(N) */
    double x = 0.5;
    for (int i = 0; i < N; i++) x = x + 1e-5 * sin(x);
    sv[0] = 0.5;
    CHECK_EQ_INT(mblx_tape_eval(t, sv, &v, w, &st), 0);
    CHECK_REL(v, x, 1e-12);
    free(w);
    mblx_tape_free(t);
    free(terms);
    free(syms);
    free(sv);
    mblx_graph_free(g);
}

/* the smooth step of mblx_step as documented: h0 below x0, h1 above x1, a cubic between */
static double smooth_step(double x, double x0, double h0, double x1, double h1)
{
    if (x <= x0) return h0;
    if (x >= x1) return h1;
    double u = (x - x0) / (x1 - x0);
    return h0 + (h1 - h0) * u * u * (3 - 2 * u);
}

/* Tapes longer than the scheduling window of tape_schedule.c (16384 instructions, reordered by level and
 * operation and their registers reallocated): values that depend on values computed windows
 * earlier, every operation kind (steps with their five operands too), all outputs or a few (so
 * that registers are freed and reused), against the same recursion evaluated in C. */
TEST(runs_across_windows)
{
    enum { K = 24000, NS = 6 };
    mblx_graph *g = mblx_graph_new();
    mblx_id s[NS], *e = malloc(K * sizeof *e), few[K / 7 + 1];
    double sv[NS], *ref = malloc(K * sizeof *ref), *v = malloc(K * sizeof *v);
    char nm[8];
    for (int j = 0; j < NS; j++) {
        snprintf(nm, sizeof nm, "s%d", j);
        s[j] = mblx_symbol(g, nm);
        sv[j] = 0.3 + 0.17 * j;
    }
    for (int k = 0; k < K; k++) {
        int j = k % NS;
        mblx_id a = k ? e[k - 1] : s[0], b = e[k / 2 > 0 ? k / 2 - (k > 2) : 0], c = e[k / 3 > 0 ? k / 3 - 1 : 0];
        double ra = k ? ref[k - 1] : sv[0], rb = ref[k / 2 > 0 ? k / 2 - (k > 2) : 0], rc = ref[k / 3 > 0 ? k / 3 - 1 : 0];
        if (k < 3) b = c = s[1], rb = rc = sv[1];
        switch (k % 8) {
        case 0: e[k] = mblx_sin(g, mblx_add(g, a, s[j])), ref[k] = sin(ra + sv[j]); break;
        case 1: e[k] = mblx_mul(g, b, mblx_cos(g, s[j])), ref[k] = rb * cos(sv[j]); break;
        case 2:
            e[k] = mblx_atan2(g, a, mblx_add(g, mblx_const(g, 1), mblx_powc(g, c, 2)));
            ref[k] = atan2(ra, 1 + rc * rc);
            break;
        case 3:
            e[k] = mblx_step(g, b, mblx_const(g, -0.5), mblx_const(g, 0), mblx_const(g, 0.5), s[j]);
            ref[k] = smooth_step(rb, -0.5, 0, 0.5, sv[j]);
            break;
        case 4: e[k] = mblx_min(g, a, mblx_max(g, c, s[j])), ref[k] = fmin(ra, fmax(rc, sv[j])); break;
        case 5:
            e[k] = mblx_sqrt(g, mblx_add(g, mblx_const(g, 1), mblx_powc(g, a, 2)));
            ref[k] = sqrt(1 + ra * ra);
            break;
        case 6: e[k] = mblx_exp(g, mblx_neg(g, mblx_mul(g, b, c))), ref[k] = exp(-(rb * rc)); break;
        default:
            e[k] = mblx_add(g, mblx_mul(g, a, s[j]), mblx_scale(g, 0.25, c));
            ref[k] = ra * sv[j] + 0.25 * rc;
            break;
        }
    }
    mbl_status st;
    mblx_tape *t = mblx_compile(g, K, e, &st);
    CHECK(t != NULL);
    CHECK(mblx_tape_ninstr(t) > 2 * 16384); /* three windows */
    double *w = malloc(mblx_tape_work_size(t) * sizeof *w);
    CHECK_EQ_INT(mblx_tape_eval(t, sv, v, w, &st), 0);
    double worst = 0;
    for (int k = 0; k < K; k++) worst = fmax(worst, fabs(v[k] - ref[k]) / fmax(1, fabs(ref[k])));
    CHECK(worst < 1e-13);
    free(w);
    mblx_tape_free(t);
    int nf = 0;
    for (int k = 6; k < K; k += 7) few[nf++] = e[k];
    t = mblx_compile(g, (size_t)nf, few, &st);
    CHECK(t != NULL);
    w = malloc(mblx_tape_work_size(t) * sizeof *w);
    CHECK(mblx_tape_work_size(t) < mblx_tape_ninstr(t) / 2); /* registers of dead values reused */
    CHECK_EQ_INT(mblx_tape_eval(t, sv, v, w, &st), 0);
    worst = 0;
    for (int i = 0; i < nf; i++) worst = fmax(worst, fabs(v[i] - ref[6 + 7 * i]) / fmax(1, fabs(ref[6 + 7 * i])));
    CHECK(worst < 1e-13);
    free(w);
    mblx_tape_free(t);
    free(e), free(ref), free(v);
    mblx_graph_free(g);
}

int main(void)
{
    G = mblx_graph_new();
    X = mblx_symbol(G, "x");
    Y = mblx_symbol(G, "y");
    RUN(values);
    RUN(common_subexpressions_once);
    RUN(shared_sums_and_products);
    RUN(shared_pairs);
    RUN(eval_single_node);
    RUN(domain_errors);
    RUN(long_sum_and_deep_chain);
    RUN(let_nodes);
    RUN(runs_across_windows);
    RUN(pairs_with_repeated_factor);
    RUN(pairs_uncounted_come_back);
    RUN(large_sub_dag_one_form); /* last: its 120 symbols */
    mblx_graph_free(G);
    return test_summary("expr_tape");
}
