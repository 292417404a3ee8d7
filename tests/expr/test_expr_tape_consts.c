/* The instructions' constants in the tape's pool (issue 31, item 2, session 36: src/expr/tape.c
 * emit_instructions, tape_consts.c, tape_internal.h tins): an instruction is 16 bytes and its
 * constant, for the opcodes that read one (TI_CONST_OPS), is t->cst[ci]. Checked: every other ci
 * is 0 (cst[0] = +0.0), the pool holds each value once and only values read (at its size), a
 * value read by several instructions is one entry, each constant is
 * the node's (a sum's or product's term, a power's exponent, a constant's value) by the values
 * of the tapes against the same operations in C, for copying and bound tapes, and by the
 * forward sweep's derivatives of the constant-reading opcodes against their closed forms. */
#include <malloc.h>
#include <math.h>
#include <string.h>

#include "expr/tape_internal.h"
#include "mblin/expr.h"
#include "parse_fixture.h"
#include "test.h"

static mblx_graph *G;

static mblx_id P(const char *s) { return fixture_parse(G, s); }

/* The pool's invariants of tape t; returns the instructions that read a constant. */
static size_t check_pool(const mblx_tape *t)
{
    size_t nconst = 0;
    unsigned char *used = calloc(t->ncst ? t->ncst : 1, 1);
    CHECK(used != NULL && t->cst != NULL && t->ncst >= 1);
    if (!used || !t->cst) {
        free(used);
        return 0;
    }
    uint64_t b0;
    memcpy(&b0, &t->cst[0], sizeof b0);
    CHECK(b0 == 0); /* +0.0 */
    for (size_t i = 0; i < t->nins; i++) {
        const tins *p = &t->ins[i];
        if (TI_CONST_OPS >> p->op & 1) {
            nconst++;
            CHECK_MSG(p->ci < t->ncst, "instruction %zu (op %u): ci %u", i, (unsigned)p->op, (unsigned)p->ci);
            if (p->ci < t->ncst) used[p->ci] = 1;
        } else {
            CHECK_MSG(p->ci == 0, "instruction %zu (op %u) without a constant: ci %u", i, (unsigned)p->op,
                      (unsigned)p->ci);
        }
    }
    /* each value once, every one read */
    for (size_t k = 1; k < t->ncst; k++) {
        CHECK_MSG(used[k], "constant %zu (%g) read by no instruction", k, t->cst[k]);
        for (size_t j = 0; j < k; j++) CHECK_MSG(memcmp(&t->cst[j], &t->cst[k], sizeof t->cst[k]), "constants %zu and %zu alike", j, k);
    }
    CHECK(t->ncst <= nconst + 1);
    CHECK(malloc_usable_size(t->cst) < t->ncst * sizeof *t->cst + 64);
    free(used);
    return nconst;
}

TEST(constants_in_the_pool)
{
    G = mblx_graph_new();
    (void)mblx_symbol(G, "x"), (void)mblx_symbol(G, "y"); /* symbols 0 and 1 */
    const double X = 1.3, Y = 0.7;
    /* one opcode that reads a constant each (and some that do not), with the value C computes */
    struct {
        const char *text;
        double want;
    } cases[] = {
        {"x + 3", X + 3.0},                 /* ADDC */
        {"2.5*x", X * 2.5},                 /* MULC */
        {"4*x*y", X * Y * 4.0},             /* MUL2C */
        {"x + y + 0.25", X + Y + 0.25},     /* ADD2C */
        {"x^2.5", pow(X, 2.5)},             /* POWC */
        {"x^2 + 1/y", X * X + 1.0 / Y},     /* SQR, RECIP: no constant; ADD */
        {"(x - 1)^0.5", sqrt(X + -1.0)},    /* SQRTP (none), ADDC */
        {"x*y*z*0 + 7.5", 7.5},             /* a constant output (LDC) */
        {"0.5*x + 0.75*y + 1.25", X * 0.5 + Y * 0.75 + 1.25},
    };
    enum { NC = sizeof cases / sizeof cases[0] };
    mblx_id e[NC];
    for (int i = 0; i < NC; i++) e[i] = P(cases[i].text);
    for (int bound = 0; bound < 2; bound++) {
        mbl_status st;
        mblx_tape *t = bound ? mblx_compile_bound(G, NC, e, NULL, NULL, &st) : mblx_compile(G, NC, e, &st);
        CHECK(t != NULL);
        if (!t) continue;
        check_pool(t);
        double w[256], out[NC];
        CHECK(mblx_tape_work_size(t) <= 256);
        double s3[3] = {X, Y, 0.0};
        CHECK_EQ_INT(mblx_tape_eval(t, s3, out, w, &st), 0);
        for (int i = 0; i < NC; i++)
            CHECK_MSG(fabs(out[i] - cases[i].want) <= 1e-15 * fabs(cases[i].want), "bound %d '%s': %.17g, not %.17g",
                      bound, cases[i].text, out[i], cases[i].want);
        mblx_tape_free(t);
    }
    mblx_graph_free(G);
}

/* A value read by several instructions (a product's coefficient, a sum's term, an exponent) is
 * one constant of the pool; 0.0 is cst[0]. */
TEST(each_value_once)
{
    G = mblx_graph_new();
    (void)mblx_symbol(G, "x"), (void)mblx_symbol(G, "y");
    mblx_id e[5] = {P("2.5*x"), P("2.5*y"), P("x^2.5"), P("y + 2.5"), P("x*y*2.5")};
    mbl_status st;
    for (int bound = 0; bound < 2; bound++) {
        mblx_tape *t = bound ? mblx_compile_bound(G, 5, e, NULL, NULL, &st) : mblx_compile(G, 5, e, &st);
        CHECK(t != NULL);
        if (!t) continue;
        CHECK_EQ_INT((int)check_pool(t), 5);
        CHECK_EQ_INT((int)t->ncst, 2);
        CHECK(t->ncst == 2 && t->cst[1] == 2.5);
        double sv[2] = {1.5, -0.25}, out[5], w[64];
        CHECK(mblx_tape_work_size(t) <= 64);
        CHECK_EQ_INT(mblx_tape_eval(t, sv, out, w, &st), 0);
        CHECK(out[0] == 1.5 * 2.5 && out[1] == -0.25 * 2.5 && out[2] == pow(1.5, 2.5) && out[3] == -0.25 + 2.5 &&
              out[4] == 1.5 * -0.25 * 2.5);
        mblx_tape_free(t);
    }
    /* a constant output 0.0: cst[0] itself (the pool then holds it alone) */
    mblx_id z = mblx_const(G, 0.0);
    mblx_tape *t = mblx_compile(G, 1, &z, &st);
    CHECK(t != NULL);
    if (t) {
        CHECK_EQ_INT((int)check_pool(t), 1);
        CHECK(t->ncst == 1 && t->nins == 1 && t->ins[0].op == TI_LDC && t->ins[0].ci == 0);
        double w[4], v = 1.0;
        CHECK_EQ_INT(mblx_tape_eval(t, NULL, &v, w, &st), 0);
        CHECK(v == 0.0);
        mblx_tape_free(t);
    }
    mblx_graph_free(G);
}

/* The forward sweep's derivatives of the constant-reading opcodes (tape_forward.c: fwd1 and the
 * runs of MULC, ADDC, MUL2C) against their closed forms. */
TEST(forward_derivatives_read_the_pool)
{
    G = mblx_graph_new();
    (void)mblx_symbol(G, "x"), (void)mblx_symbol(G, "y"); /* symbols 0 and 1 */
    const double X = 1.3, Y = 0.7;
    mblx_id e[4] = {P("3*x*y"), P("2.5*x + 0.5"), P("x^2.5"), P("x + y + 0.25")};
    mbl_status st;
    mblx_tape *t = mblx_compile(G, 4, e, &st);
    CHECK(t != NULL);
    if (t) {
        check_pool(t);
        double sv[2] = {X, Y}, out[4], d[4 * 2];
        size_t ws = mblx_tape_fwd_work_size(t, 2);
        double *w = calloc(ws ? ws : 1, sizeof *w);
        const double seed[4] = {1.0, 0.0, 0.0, 1.0}; /* d/dx, d/dy */
        CHECK(w != NULL);
        if (w) {
            CHECK_EQ_INT(mblx_tape_fwd(t, sv, 2, seed, out, d, w, &st), 0);
            const double want[4][2] = {{3.0 * Y, 3.0 * X}, {2.5, 0.0}, {2.5 * pow(X, 1.5), 0.0}, {1.0, 1.0}};
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 2; j++)
                    CHECK_MSG(fabs(d[i * 2 + j] - want[i][j]) <= 1e-14, "output %d, d/d%c: %.17g, not %.17g", i,
                              j ? 'y' : 'x', d[i * 2 + j], want[i][j]);
        }
        free(w);
    }
    mblx_tape_free(t);
    mblx_graph_free(G);
}

int main(void)
{
    RUN(constants_in_the_pool);
    RUN(each_value_once);
    RUN(forward_derivatives_read_the_pool);
    return test_summary("expr_tape_consts");
}
