/* The chains skipped after the pairs (issue 31, item 2; tape_share.c chains_may_share): a sub-DAG
 * of at least CHAINS_CHECK_MIN (2^14) nodes whose pairs form has no chain link to share compiles
 * without the chains, its sums' and products' constants fused into their last operations by the
 * emission (tape.c). Checked here: such a tape is the one the chains make, instruction for
 * instruction (opcodes, registers, constants' bits, outputs), for mblx_compile and
 * mblx_compile_bound, and its values and forward tangents are the chains' bit for bit; the skip is
 * taken where no first link is found and not where one is: a product u*v processed before 5*u*v in
 * the chains' post-order is found by it (the chains then make 5*u*v a constant times u*v), after it
 * it is not (the order of the outputs decides). The same where no pair is shared at all (the chains
 * alone): a sub-DAG of sums and products with nothing in common is compiled without them, and two
 * sums of more operands than the pairs take, with a prefix in common, are not (mode 2 fails). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "expr/tape_internal.h"
#include "mblin/expr.h"
#include "parse_fixture.h"
#include "tape_compare.h"
#include "test.h"

enum { NSYM = 64, NEXPR = 3600 }; /* (then a, b, u, v) */
/* the sub-DAG without a pair: NALONE sums of a product of three symbols of their own and a sine,
 * then two sums of NLONG symbols (more than the pairs' 32 operands) and one of their own */
enum { NALONE = 2800, NLONG = 40, NX = NSYM + 4 + 3 * NALONE + NLONG + 2 };

static mblx_graph *G;
static mblx_id OUT[NEXPR + 2], AL[NALONE + 2];
static double X[NX];

/* Instructions of opcode op in t. */
static size_t count_op(const mblx_tape *t, unsigned op)
{
    size_t k = 0;
    for (size_t i = 0; i < t->nins; i++) k += t->ins[i].op == op;
    return k;
}

/* the values and the tangents along four seeded directions of both tapes, bit for bit */
static int same_values(const mblx_tape *a, const mblx_tape *b, size_t n)
{
    enum { NP = 4 };
    size_t nw = mblx_tape_fwd_work_size(a, NP) > mblx_tape_fwd_work_size(b, NP) ? mblx_tape_fwd_work_size(a, NP)
                                                                               : mblx_tape_fwd_work_size(b, NP);
    double *w = mbl_alloc_array(nw, sizeof *w), *ya = mbl_alloc_array(n, sizeof *ya), *yb = mbl_alloc_array(n, sizeof *yb);
    double *da = mbl_alloc_array(n * NP, sizeof *da), *db = mbl_alloc_array(n * NP, sizeof *db);
    double seed[NX * NP];
    for (size_t s = 0; s < NX * NP; s++) seed[s] = (s % 7 == 0) ? 1.0 : (s % 5 == 0 ? -0.5 : 0.0);
    int ok = w && ya && yb && da && db && !mblx_tape_fwd(a, X, NP, seed, ya, da, w, NULL) &&
             !mblx_tape_fwd(b, X, NP, seed, yb, db, w, NULL) && !memcmp(ya, yb, n * sizeof *ya) &&
             !memcmp(da, db, n * NP * sizeof *da);
    mbl_free(w), mbl_free(ya), mbl_free(yb), mbl_free(da), mbl_free(db);
    return ok;
}

static void make_graph(void)
{
    G = mblx_graph_new();
    char buf[512];
    for (int k = 0; k < NSYM; k++) {
        snprintf(buf, sizeof buf, "x%d", k);
        mblx_symbol(G, buf);
        X[k] = 0.3 + 0.07 * k - (k % 3 ? 0.5 : 0.0);
    }
    mblx_symbol(G, "a"), mblx_symbol(G, "b");
    X[NSYM] = 1.3, X[NSYM + 1] = -0.8, X[NSYM + 2] = 0.9, X[NSYM + 3] = -1.7; /* a b; u v, made later */
    for (int k = NSYM + 4; k < NX; k++) X[k] = 0.2 + 0.001 * k - (k % 5 ? 0.4 : 0.0); /* the symbols made later */
    /* products of more than two factors with a coefficient (the fused constants), the pair a*b
     * common to most of them (the pairs form is taken), sums of more than two terms with a constant
     * term, functions */
    for (int i = 0; i < NEXPR; i++) {
        int j = i % NSYM, k = (3 * i + 1) % NSYM, l = (5 * i + 3) % NSYM, m = (7 * i + 11) % NSYM;
        if (k == j) k = (k + 1) % NSYM;
        snprintf(buf, sizeof buf,
                 "%d*x%d*x%d*a*b + %d*x%d*x%d*x%d + sin(x%d)*cos(x%d)*x%d + %d.5 + %d*x%d + %d*x%d*x%d*exp(x%d)", i + 2,
                 j, k, i + 3, l, j, m, j, k, m, i, i + 7, l, i + 5, k, l, j);
        OUT[i] = fixture_parse(G, buf);
    }
}

/* the tapes with and without the chains; mode 2: the skip must be taken */
static void check_outputs(size_t n, const mblx_id *out, int skipped)
{
    mbl_status st;
    for (int bound = 0; bound < 2; bound++) {
        mblx__share_chains_mode(1);
        mblx_tape *tc = bound ? mblx_compile_bound(G, n, out, NULL, NULL, &st) : mblx_compile(G, n, out, &st);
        mblx__share_chains_mode(2);
        mblx_tape *ts = bound ? mblx_compile_bound(G, n, out, NULL, NULL, &st) : mblx_compile(G, n, out, &st);
        mblx__share_chains_mode(0);
        mblx_tape *t0 = bound ? mblx_compile_bound(G, n, out, NULL, NULL, &st) : mblx_compile(G, n, out, &st);
        CHECK(tc != NULL && t0 != NULL);
        CHECK(skipped ? ts != NULL : ts == NULL);
        if (tc && t0) {
            CHECK(same_tape(tc, t0));
            CHECK(same_values(tc, t0, n));
            CHECK(count_op(t0, TI_MUL2C) > 0 && count_op(t0, TI_ADD2C) > 0); /* constants were fused */
        }
        if (ts && tc) CHECK(same_tape(tc, ts));
        mblx_tape_free(tc), mblx_tape_free(ts), mblx_tape_free(t0);
    }
}

TEST(chains_skipped_same_tape)
{
    for (int i = 0; i < NEXPR; i++) CHECK(OUT[i] != MBLX_NONE);
    CHECK(mblx_node_count(G) > 18000); /* (the outputs' sub-DAG: about 18,400 nodes, above CHAINS_CHECK_MIN = 16,384) */
    check_outputs(NEXPR, OUT, 1);
}

TEST(chains_found_not_skipped)
{
    mblx_id xy = fixture_parse(G, "u*v"), xy5 = fixture_parse(G, "5*u*v");
    CHECK(xy != MBLX_NONE && xy5 != MBLX_NONE);
    /* 5*u*v first: its lookup of (u, v) finds nothing, u*v registers after it: skipped */
    OUT[NEXPR] = xy5, OUT[NEXPR + 1] = xy;
    check_outputs(NEXPR + 2, OUT, 1);
    /* u*v first: 5*u*v finds it, the chains share it: not skipped, the same tape */
    OUT[NEXPR] = xy, OUT[NEXPR + 1] = xy5;
    check_outputs(NEXPR + 2, OUT, 0);
}

/* the sub-DAG without a pair (its symbols after u and v: indices NSYM + 4 on), its outputs in AL:
 * NALONE with nothing to share, then the two long sums, whose prefix the chains share */
static void make_alone(void)
{
    char buf[512];
    for (int i = 0; i < NALONE; i++) {
        snprintf(buf, sizeof buf, "%d*p%d*q%d*r%d + sin(p%d) + %d.5", i + 2, i, i, i, i, i + 1);
        AL[i] = fixture_parse(G, buf);
    }
    /* the sums of s0 .. s39 and a symbol of their own, made after them: the same first link */
    mblx_id sv[NLONG + 1];
    for (int j = 0; j < NLONG; j++) {
        snprintf(buf, sizeof buf, "s%d", j);
        sv[j] = mblx_symbol(G, buf);
    }
    sv[NLONG] = mblx_symbol(G, "y0");
    AL[NALONE] = mblx_sum(G, NLONG + 1, sv);
    sv[NLONG] = mblx_symbol(G, "y1");
    AL[NALONE + 1] = mblx_sum(G, NLONG + 1, sv);
}

TEST(alone_chains_skipped_same_tape)
{
    for (int i = 0; i < NALONE + 2; i++) CHECK(AL[i] != MBLX_NONE);
    CHECK(mblx_symbol_count(G) <= NX);
    check_outputs(NALONE, AL, 1); /* (about 16,800 nodes) */
}

TEST(alone_chains_found_not_skipped)
{
    check_outputs(NALONE + 2, AL, 0);
}

/* the post-order the compiler records as it numbers a sub-DAG is mblx__local_postorder's, and its
 * counts of sums and products (the chains check's table size, session 33) and of their pairs (the
 * pairs' search declined by it, session 35) the sub-DAG's (mode 3 fails a compilation where one is
 * not): the pairs graph, the one without a pair, lets (an output a let, a let of a let, an output
 * twice) and wide sums of more pairs than the search takes */
TEST(recorded_postorder)
{
    mblx_id x = mblx_symbol(G, "x0"), y = mblx_symbol(G, "x1"), z = mblx_symbol(G, "x2");
    mblx_id l1 = mblx_let(G, mblx_add(G, mblx_mul(G, x, y), mblx_sin(G, z))), l2 = mblx_let(G, mblx_cos(G, l1));
    mblx_id lets[5] = {mblx_add(G, mblx_mul(G, l1, z), mblx_mul(G, l2, l1)), l1, mblx_sqrt(G, mblx_mul(G, l2, l2)), l2, l1};
    /* and sums of 3 to 33 symbols (those of 32 and fewer counted by the pairs' search), more than
     * its 2^18 pairs in all: the compiler's count declines the search at once (session 35) */
    enum { NWIDE = 800 }; /* (600 sums of 32: 297,600 pairs) */
    static mblx_id wide[NWIDE];
    unsigned r = 12345u;
    for (int k = 0; k < NWIDE; k++) {
        mblx_id t[33];
        size_t n = k % 8 == 7 ? 33 : k % 8 == 6 ? 3 : 32;
        for (size_t i = 0; i < n; i++) {
            char name[16];
            r = r * 1103515245u + 12345u;
            snprintf(name, sizeof name, "x%u", (unsigned)((i * 2 + (r >> 16) % 2) % NSYM));
            t[i] = mblx_symbol(G, name);
        }
        wide[k] = mblx_mul(G, mblx_sum(G, n, t), mblx_symbol(G, k % 2 ? "x5" : "x7"));
    }
    struct {
        size_t n;
        const mblx_id *out;
    } sets[4] = {{NEXPR, OUT}, {NALONE + 2, AL}, {5, lets}, {NWIDE, wide}};
    mbl_status st;
    mblx__share_chains_mode(3);
    for (int k = 0; k < 4; k++)
        for (int bound = 0; bound < 2; bound++) {
            mblx_tape *t = bound ? mblx_compile_bound(G, sets[k].n, sets[k].out, NULL, NULL, &st)
                                 : mblx_compile(G, sets[k].n, sets[k].out, &st);
            CHECK(t != NULL);
            mblx_tape_free(t);
        }
    mblx__share_chains_mode(0);
}

int main(void)
{
    make_graph();
    RUN(chains_skipped_same_tape);
    RUN(chains_found_not_skipped);
    make_alone();
    RUN(alone_chains_skipped_same_tape);
    RUN(alone_chains_found_not_skipped);
    RUN(recorded_postorder);
    mblx__share_chains_mode(0);
    mblx_graph_free(G);
    return test_summary("expr_chains_skip");
}
