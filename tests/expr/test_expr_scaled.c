/* Session 23's cheaper graph machinery (issue 31 item 2, issue 34 item 5), each against the way it
 * was made before:
 *
 *   scaled_product: mblx__scaled_product (builders.c), the derivative's partial c * p times the
 *     operand's derivative x made without the scaled node c * p, must return the very node
 *     mblx_mul(g, mblx_scale(g, c, p), x) returns (x_first: mblx_mul(g, x, mblx_scale(g, c, p))),
 *     for factors of every kind (symbols, powers, sums, functions, products with coefficients,
 *     constants, one, zero, an undefined node, a product too wide to flatten) and coefficients
 *     that overflow or vanish; and it must skip the scaled node in some of the calls (counted).
 *   small_unions: a node of 2 to 8 operands gets the sorted union of its operands' dependence
 *     sets (compute_deps now merges the others into the largest set where it lies), checked
 *     against the union of the symbols this test put into each operand.
 *     A union that is the largest operand's set is that set's storage, not a copy (the pool does
 *     not grow); a larger one is new storage. big_superset: the same for a set of 70 symbols (the
 *     containment test with its cache) and for one of 40 (merged first, then compared).
 *   const_cache: mblx_const returns one node per value, also for values whose cache slots
 *     collide, and the node holds the value. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "expr/expr_internal.h"
#include "mblin/expr.h"
#include "expr_pool.h"
#include "test.h"

enum { NX = 6, MAXPOOL = 128 };

TEST(scaled_product)
{
    mblx_graph *g = mblx_graph_new();
    CHECK(g != NULL);
    if (!g) return;
    mblx_id x[NX], pool[MAXPOOL];
    pool_symbols(g, "x", NX, x);
    size_t np = 0;
    np = pool_push(pool, np, MAXPOOL, mblx_const(g, 1.0));
    np = pool_push(pool, np, MAXPOOL, mblx_const(g, 0.0));
    np = pool_push(pool, np, MAXPOOL, mblx_const(g, -2.5));
    for (int i = 0; i < NX; i++) {
        np = pool_push(pool, np, MAXPOOL, x[i]);
        np = pool_push(pool, np, MAXPOOL, mblx_sin(g, x[i]));
        np = pool_push(pool, np, MAXPOOL, mblx_powc(g, x[i], 2.0));
        np = pool_push(pool, np, MAXPOOL, mblx_powc(g, x[i], -1.0));
        np = pool_push(pool, np, MAXPOOL, mblx_powc(g, x[i], 0.5));
        np = pool_push(pool, np, MAXPOOL, mblx_add(g, x[i], mblx_const(g, (double)i)));
    }
    np = pool_push(pool, np, MAXPOOL, mblx_exp(g, mblx_mul(g, x[2], x[3])));
    np = pool_push(pool, np, MAXPOOL, mblx_div(g, mblx_const(g, 1.0), mblx_const(g, 0.0))); /* undefined */
    size_t nbase = np;
    unsigned s = 4242u;
    for (int k = 0; k < 40; k++) { /* products of two to five factors of the pool, with coefficients */
        mblx_id f[6];
        int nf = 2 + (int)(k % 4);
        for (int j = 0; j < nf; j++) {
            s = s * 1103515245u + 12345u;
            f[j] = pool[3 + (s >> 8) % (nbase - 3)];
        }
        f[nf] = mblx_const(g, k % 7 == 0 ? 1e300 : k % 5 == 0 ? 1.0 : k % 3 == 0 ? -3.0 : 0.5);
        np = pool_push(pool, np, MAXPOOL, mblx_product(g, (size_t)nf + 1, f));
    }
    { /* a product wider than MBLX_FLATTEN_MAX (not flattened into others) */
        mblx_id f[MBLX_FLATTEN_MAX + 2];
        char sn[16];
        for (int j = 0; j < MBLX_FLATTEN_MAX + 2; j++) {
            snprintf(sn, sizeof sn, "w%d", j);
            f[j] = mblx_symbol(g, sn);
        }
        np = pool_push(pool, np, MAXPOOL, mblx_product(g, MBLX_FLATTEN_MAX + 2, f));
    }
    const double coefs[] = {2.0, -1.0, 0.5, 1.0, 1e300, 1e-300, -3.0};
    int calls = 0;
    for (size_t p = 0; p < np; p++)
        for (size_t d = 0; d < np; d++)
            for (size_t ci = 0; ci < sizeof coefs / sizeof *coefs; ci++)
                for (int xf = 0; xf < 2; xf++) {
                    double c = coefs[ci];
                    mblx_id r1 = mblx__scaled_product(g, c, pool[p], pool[d], xf);
                    mblx_id sc = mblx_scale(g, c, pool[p]);
                    mblx_id r2 = xf ? mblx_mul(g, pool[d], sc) : mblx_mul(g, sc, pool[d]);
                    CHECK(r1 == r2);
                    calls++;
                }
    CHECK(calls > 10000);
    CHECK(mblx_graph_status(g, NULL) == 0);
    mblx_graph_free(g);
}

/* The scaled node is skipped: the partials of x^3, sqrt(x) and cos(x) (3 x^2, 0.5 / sqrt(x),
 * -sin(x)) times a derivative y, in a graph where no scaled node exists yet: each product makes
 * the product only, and the scaled node is new when mblx_scale asks for it afterwards. */
TEST(scaled_node_skipped)
{
    mblx_graph *g = mblx_graph_new();
    CHECK(g != NULL);
    if (!g) return;
    mblx_id y = mblx_symbol(g, "y");
    int skipped = 0, cases = 0;
    for (int i = 0; i < NX; i++) {
        char nm[8];
        snprintf(nm, sizeof nm, "x%d", i);
        mblx_id x = mblx_symbol(g, nm);
        mblx_id p[3] = {mblx_powc(g, x, 2.0), mblx_powc(g, mblx_sqrt(g, x), -1.0),
                        mblx_sin(g, x)};
        const double c[3] = {3.0, 0.5, -1.0};
        for (int k = 0; k < 3; k++)
            for (int xf = 0; xf < 2; xf++) {
                size_t n0 = mblx_node_count(g);
                mblx_id r1 = mblx__scaled_product(g, c[k] * (xf ? 3.0 : 1.0), p[k], y, xf);
                size_t n1 = mblx_node_count(g);
                mblx_id sc = mblx_scale(g, c[k] * (xf ? 3.0 : 1.0), p[k]);
                skipped += n1 == n0 + 1 && mblx_node_count(g) == n1 + 1; /* the product, then the scaled node */
                CHECK(r1 == (xf ? mblx_mul(g, y, sc) : mblx_mul(g, sc, y)));
                cases++;
            }
    }
    CHECK(cases == 6 * NX);
    CHECK(skipped == cases);
    CHECK(mblx_graph_status(g, NULL) == 0);
    mblx_graph_free(g);
}

enum { NS = 40, NOPS = 8, NTRIALS = 3000 };

TEST(small_unions)
{
    mblx_graph *g = mblx_graph_new();
    CHECK(g != NULL);
    if (!g) return;
    mblx_id x[NS];
    pool_symbols(g, "s", NS, x);
    unsigned r = 99u;
    int wrong = 0, made = 0, shared = 0, notshared = 0;
    for (int t = 0; t < NTRIALS; t++) {
        /* operands: sin of a sum of a few chosen symbols (their set is those symbols), sometimes
         * an operand repeated, sometimes one that is a subset of another */
        int nops = 2 + t % (NOPS - 1);
        unsigned char want[NS];
        memset(want, 0, sizeof want);
        mblx_id ops[NOPS];
        for (int o = 0; o < nops; o++) {
            if (o > 0 && t % 5 == 0) { /* a repeated operand */
                ops[o] = ops[o - 1];
                continue;
            }
            mblx_id terms[6];
            r = r * 1103515245u + 12345u;
            int nt = 1 + (int)((r >> 8) % 6);
            for (int k = 0; k < nt; k++) {
                r = r * 1103515245u + 12345u;
                int sym = (int)((r >> 8) % (t % 3 == 0 ? 8 : NS)); /* narrow: many sets within others */
                terms[k] = x[sym];
                want[sym] = 1;
            }
            ops[o] = mblx_sin(g, mblx_sum(g, (size_t)nt, terms));
        }
        mblx_id e = mblx__intern(g, MBLX_OP_MUL, 1.0 + t, (size_t)nops, ops); /* made as given */
        size_t nd = 0;
        const uint32_t *dep = mblx_node_deps(g, e, &nd);
        size_t k = 0;
        for (int i = 0; i < NS; i++) {
            if (!want[i]) continue;
            if (k >= nd || dep[k] != (uint32_t)mblx_symbol_index(g, x[i])) wrong++;
            k++;
        }
        if (k != nd) wrong++;
        /* shared exactly when some operand's set is the union: then with the first largest one */
        int full = -1;
        for (int o = 0; o < nops && full < 0; o++) {
            size_t no = 0;
            mblx_node_deps(g, ops[o], &no);
            if (no == nd) full = o;
        }
        const uint32_t *fd = full >= 0 ? mblx_node_deps(g, ops[full], &(size_t){0}) : NULL;
        if (full >= 0 && dep != fd) notshared++;
        for (int o = 0; o < nops && full < 0; o++)
            if (dep == mblx_node_deps(g, ops[o], &(size_t){0})) notshared++;
        shared += full >= 0;
        made++;
    }
    printf("small_unions: %d of %d unions shared\n", shared, made);
    CHECK(made == NTRIALS);
    CHECK(wrong == 0);
    CHECK(notshared == 0 && shared > NTRIALS / 10 && shared < NTRIALS);
    CHECK(mblx_graph_status(g, NULL) == 0);
    mblx_graph_free(g);
}

/* sin of the sum of the symbols x[lo .. hi) */
static mblx_id sin_of_range(mblx_graph *g, const mblx_id *x, int lo, int hi)
{
    mblx_id t[80];
    for (int i = lo; i < hi; i++) t[i - lo] = x[i];
    return mblx_sin(g, mblx_sum(g, (size_t)(hi - lo), t));
}

TEST(big_superset)
{
    mblx_graph *g = mblx_graph_new();
    CHECK(g != NULL);
    if (!g) return;
    mblx_id x[80];
    pool_symbols(g, "y", 80, x);
    for (int wide = 0; wide < 2; wide++) {
        int n = wide ? 70 : 40; /* at least MBLX__SUBSET_CACHE_MIN symbols, or fewer */
        mblx_id big = sin_of_range(g, x, 0, n), in = sin_of_range(g, x, 3, 6), out = sin_of_range(g, x, n - 1, n + 1);
        size_t nb = 0, ne = 0, pool = g->ndeps_used;
        const uint32_t *db = mblx_node_deps(g, big, &nb);
        mblx_id ops[3] = {in, big, in};
        mblx_id e = mblx__intern(g, MBLX_OP_MUL, 3.0, 3, ops);
        const uint32_t *de = mblx_node_deps(g, e, &ne);
        CHECK(de == db && ne == (size_t)n && g->ndeps_used == pool); /* b's set itself */
        pool = g->ndeps_used;
        mblx_id ops2[3] = {in, big, out};
        e = mblx__intern(g, MBLX_OP_MUL, 3.0, 3, ops2);
        de = mblx_node_deps(g, e, &ne);
        CHECK(de != db && ne == (size_t)n + 1 && g->ndeps_used == pool + (size_t)n + 1);
        int ok = 1;
        for (size_t i = 0; i < ne && ok; i++) ok = de[i] == (uint32_t)mblx_symbol_index(g, x[i]);
        CHECK(ok);
    }
    CHECK(mblx_graph_status(g, NULL) == 0);
    mblx_graph_free(g);
}

TEST(const_cache)
{
    mblx_graph *g = mblx_graph_new();
    CHECK(g != NULL);
    if (!g) return;
    enum { NV = 5000 }; /* more values than the cache's slots: many collide */
    static mblx_id first[NV];
    for (int pass = 0; pass < 3; pass++)
        for (int i = 0; i < NV; i++) {
            double v = pass == 2 ? -(0.25 * i + 1.0) : 0.25 * i + 1.0; /* pass 2: other values */
            mblx_id c = mblx_const(g, v);
            double got = NAN;
            CHECK(mblx_is_const(g, c, &got) && got == v);
            if (pass == 0) first[i] = c;
            if (pass == 1) CHECK(c == first[i]);
            if (pass == 2) CHECK(c != first[i]);
        }
    CHECK(mblx_const(g, -0.0) == mblx_const(g, 0.0));
    CHECK(mblx_graph_status(g, NULL) == 0);
    mblx_graph_free(g);
}

int main(void)
{
    RUN(scaled_product);
    RUN(scaled_node_skipped);
    RUN(small_unions);
    RUN(big_superset);
    RUN(const_cache);
    return test_summary("expr_scaled");
}
