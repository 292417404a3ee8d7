/* Tapes bound to their graph (mblx_compile_bound, issue 31 item 2): no private copy of the compiled
 * expressions (the memory the tape holds is its instructions alone), the same values and the same
 * error messages as mblx_compile's (printed from the graph; the expected texts are written out by
 * hand), the lock called around the graph's reading only when an evaluation fails, messages after
 * the graph grew, through lets, and in the shared form of sums and products with pairs in common;
 * a tape's instruction arrays hold its instructions, not the compiler's upper bound. */
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "expr/tape_internal.h"
#include "mblin/expr.h"
#include "parse_fixture.h"
#include "test.h"

static mblx_graph *G;

static mblx_id P(const char *s) { return fixture_parse(G, s); }

/* the lock's calls: +1 per lock, a record of the order */
typedef struct lock_log {
    int held, calls, bad;
} lock_log;

static void lock_cb(void *ctx, int on)
{
    lock_log *l = ctx;
    l->calls++;
    if ((on != 0) == (l->held != 0)) l->bad = 1; /* locked twice or unlocked while free */
    l->held = on;
}

/* Bytes a tape holds besides its header. */
static size_t tape_bytes(const mblx_tape *t)
{
    size_t b = t->nins * (sizeof *t->ins + sizeof *t->ins_node) + t->nout * sizeof *t->outreg +
               (t->nrun + 1) * sizeof *t->run_start + t->nrun * sizeof *t->run_op;
    if (t->lnd) b += t->nl * sizeof *t->lnd;
    if (t->largs) {
        size_t ka = 0;
        for (size_t l = 0; l < t->nl; l++) ka += t->lnd[l].na;
        b += ka * sizeof *t->largs;
    }
    return b;
}

/* Evaluate e (symbols x, y = sv) with both kinds of tape: the same rc, value and message; the
 * bound tape's lock taken and released once when it fails, never when it succeeds. */
static void both(mblx_id e, const double *sv, int want_rc, const char *want_msg)
{
    mbl_status st1, st2;
    lock_log lg = {0, 0, 0};
    mblx_tape *t1 = mblx_compile(G, 1, &e, &st1);
    mblx_tape *t2 = mblx_compile_bound(G, 1, &e, lock_cb, &lg, &st2);
    CHECK(t1 && t2);
    if (!t1 || !t2) goto out;
    CHECK(t2->lnd == NULL && t2->largs == NULL && t2->names == NULL);
    double w1[4096], w2[4096], v1 = 12345, v2 = 12345;
    CHECK(mblx_tape_work_size(t1) <= 4096 && mblx_tape_work_size(t2) == mblx_tape_work_size(t1));
    CHECK(mblx_tape_ninstr(t1) == mblx_tape_ninstr(t2));
    int rc1 = mblx_tape_eval(t1, sv, &v1, w1, &st1), rc2 = mblx_tape_eval(t2, sv, &v2, w2, &st2);
    CHECK_EQ_INT(rc1, want_rc);
    CHECK_EQ_INT(rc2, want_rc);
    CHECK(memcmp(&v1, &v2, sizeof v1) == 0);
    CHECK_EQ_INT(lg.calls, want_rc ? 2 : 0);
    CHECK(!lg.bad && !lg.held);
    if (want_rc) {
        CHECK_MSG(strcmp(st1.msg, st2.msg) == 0, "copy \"%s\", bound \"%s\"", st1.msg, st2.msg);
        if (want_msg) CHECK_MSG(strcmp(st2.msg, want_msg) == 0, "\"%s\"", st2.msg);
    }
out:
    mblx_tape_free(t1);
    mblx_tape_free(t2);
}

TEST(messages_from_the_graph)
{
    G = mblx_graph_new();
    (void)P("x + y"); /* the symbols in this order */
    static const struct {
        const char *text;
        double x;
        const char *msg;
    } cases[] = {
        {"sqrt(x - 2)", 1.75, "sqrt of negative value -0.25 in sqrt(x - 2)"},
        {"1 + log(x)", 0.0, "log of non-positive value 0 in log(x)"},
        {"asin(x)", 1.5, "asin of value 1.5 outside [-1, 1] in asin(x)"},
        {"y/x", 0.0, "division by zero in 1/x"},
        {"(x - 1)^0.5", 0.5, "pow of negative base -0.5 to non-integer exponent 0.5 in (x - 1)^0.5"},
        {"exp(1000*x)", 1.0, "non-finite result inf in exp(1000*x)"},
        {"x + 1", NAN, "non-finite value nan of symbol 'x' in x"},
        {"sqrt(x - 2)", 3.0, NULL}, /* no error: no lock */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double s[2] = {cases[i].x, 0.5};
        both(P(cases[i].text), s, cases[i].msg ? MBL_EDOMAIN : 0, cases[i].msg);
    }
    /* through a let (printed as what it stands for) */
    mblx_id x = mblx_symbol(G, "x"), y = mblx_symbol(G, "y");
    mblx_id two = mblx_const(G, 2.0);
    mblx_id lt = mblx_let(G, mblx_sqrt(G, mblx_sub(G, x, two)));
    double s[2] = {1.0, 0.5};
    both(mblx_add(G, mblx_mul(G, lt, y), lt), s, MBL_EDOMAIN, "sqrt of negative value -1 in sqrt(x - 2)");
    /* the graph grows after compiling: the message still prints the node it had */
    mblx_id e = P("log(x*y)");
    mblx_tape *t = mblx_compile_bound(G, 1, &e, NULL, NULL, NULL);
    CHECK(t != NULL);
    for (int k = 0; k < 5000; k++) (void)mblx_add(G, x, mblx_const(G, 1000.0 + k)); /* reallocates the nodes */
    mbl_status st;
    double w[16], v;
    s[0] = -1.0;
    CHECK_EQ_INT(mblx_tape_eval(t, s, &v, w, &st), MBL_EDOMAIN);
    CHECK_MSG(strcmp(st.msg, "log of non-positive value -0.5 in log(x*y)") == 0, "\"%s\"", st.msg);
    mblx_tape_free(t);
    mblx_graph_free(G);
}

/* Sums of products with pairs of operands in common (compiled through the shared form, where
 * instructions compute nodes the graph does not have): every failing node is named as the graph
 * has it, as by mblx_compile, and the bound tape holds its instructions alone. */
TEST(shared_form_and_memory)
{
    enum { N = 400 };
    G = mblx_graph_new();
    mblx_id q[N + 2], terms[N];
    char nm[16];
    for (int i = 0; i < N + 2; i++) {
        snprintf(nm, sizeof nm, "q%d", i);
        q[i] = mblx_symbol(G, nm);
    }
    for (int i = 0; i < N; i++) {
        /* q0*q1 in every term (a common pair), sin of a sum with q0 + q1 in common, a log */
        mblx_id f[4] = {q[0], q[1], q[i + 2], mblx_sin(G, mblx_add(G, mblx_add(G, q[0], q[1]), q[i + 2]))};
        terms[i] = mblx_add(G, mblx_product(G, 4, f), mblx_log(G, mblx_add(G, q[i + 2], mblx_const(G, 1.0))));
    }
    mblx_id sum = mblx_sum(G, N, terms);
    double sv[N + 2];
    for (int i = 0; i < N + 2; i++) sv[i] = 0.1 + 0.001 * i;
    both(sum, sv, 0, NULL);
    /* the log of term 137 fails: log(q139 + 1) at q139 = -1 */
    sv[139] = -1.0;
    both(sum, sv, MBL_EDOMAIN, "log of non-positive value 0 in log(q139 + 1)");
    sv[139] = 0.2;
    /* an overflow in the shared product q0*q1 */
    sv[0] = 1e200, sv[1] = 1e200;
    both(sum, sv, MBL_EDOMAIN, NULL);
    /* memory: the copying tape holds the copy of its sub-DAG besides the instructions; the bound
     * tape its instructions, their nodes, outputs and runs alone */
    mbl_status st;
    mblx_tape *t1 = mblx_compile(G, 1, &sum, &st), *t2 = mblx_compile_bound(G, 1, &sum, NULL, NULL, &st);
    CHECK(t1 && t2);
    if (t1 && t2) {
        size_t per_ins = sizeof *t2->ins + sizeof *t2->ins_node + sizeof *t2->run_start + sizeof *t2->run_op;
        CHECK(t2->nl == 0 && t1->nl > 0);
        CHECK(tape_bytes(t2) <= t2->nins * per_ins + t2->nout * sizeof *t2->outreg + sizeof *t2->run_start);
        CHECK(tape_bytes(t1) >= tape_bytes(t2) + t1->nl * sizeof *t1->lnd);
        /* the instruction arrays at their size (not at the compiler's upper bound, 1.9 times
         * larger here: sums count one more than their links) */
        for (int k = 0; k < 2; k++) {
            const mblx_tape *t = k ? t2 : t1;
            CHECK_MSG(malloc_usable_size(t->ins) < t->nins * sizeof *t->ins + 64, "%zu bytes for %zu instructions",
                      malloc_usable_size(t->ins), t->nins);
            CHECK(malloc_usable_size(t->ins_node) < t->nins * sizeof *t->ins_node + 64);
        }
    }
    mblx_tape_free(t1);
    mblx_tape_free(t2);
    mblx_graph_free(G);
}

int main(void)
{
    RUN(messages_from_the_graph);
    RUN(shared_form_and_memory);
    return test_summary("expr_bound");
}
