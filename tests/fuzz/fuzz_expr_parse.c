/* libFuzzer target: parse arbitrary bytes as an expression; on success differentiate (first and
 * second order, reverse-mode gradient, Jacobian), compile, evaluate, and check that printing
 * then re-parsing gives the same node. Must never crash, leak, hang or abort.
 * Build and run: see docs/fuzzing.md. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/expr.h"

/* Longer inputs only slow the fuzzer down without reaching new code. */
enum { FUZZ_MAX_INPUT = 4096 };

/* Accepts the symbols x, y, z, t and the parameter p (as symbols), der(s) of a symbol s (the
 * symbol "s_dot") and, by name, symbols created that way; everything else is unknown. */
static int resolve(void *ud, mblx_graph *g, const char *name, size_t len, int nargs,
                   const mblx_id *args, mblx_id *out, char *why, size_t whylen)
{
    (void)ud;
    static const char *known[] = {"x", "y", "z", "t", "p"};
    if (nargs < 0) {
        for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
            if (strlen(known[i]) == len && memcmp(known[i], name, len) == 0) {
                *out = mblx_symbol_n(g, name, len);
                return 0;
            }
        *out = mblx_symbol_find_n(g, name, len); /* e.g. x_dot, when printed and re-parsed */
        return *out == MBLX_NONE;
    }
    if (len == 3 && memcmp(name, "der", 3) == 0) {
        const char *s = nargs == 1 ? mblx_symbol_name(g, args[0]) : NULL;
        if (!s) {
            snprintf(why, whylen, "der() takes one symbol");
            return 1;
        }
        char buf[32];
        snprintf(buf, sizeof buf, "%.8s_dot", s);
        *out = mblx_symbol(g, buf);
        return 0;
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FUZZ_MAX_INPUT) return 0;
    mblx_graph *g = mblx_graph_new();
    if (!g) return 0;
    /* data sets for spline(c, ..), table(c, ..) and spline2(m, .., ..) (issue 35) */
    static const double cx[3] = {-1, 0, 2}, cz[3] = {0, 1, -1}, my[2] = {0, 1}, mz[6] = {0, 1, 2, 3, 4, 5};
    static const double mc[2 * 16] = {0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                      1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    mblx_data_def c1 = {"c", 3, 0, cx, NULL, cz, NULL, MBLX_EXTRAP_LINEAR};
    mblx_data_def m2 = {"m", 3, 2, cx, my, mz, mc, MBLX_EXTRAP_NONE};
    if (mblx_data_add(g, &c1) < 0 || mblx_data_add(g, &m2) < 0) abort();
    mblx_parse_opts o = {resolve, NULL, 3, 5, 0, NULL};
    size_t eoff = 0;
    o.error_offset = &eoff;
    mblx_id e;
    mbl_status st;
    int rc = mblx_parse(g, (const char *)data, size, &o, &e, &st);
    if (rc) {
        if (rc != MBL_EPARSE && rc != MBL_ENOMEM) abort();
        if (strchr(st.msg, '\n')) abort(); /* one-line messages */
        char ex[256];
        mblx_excerpt((const char *)data, size, eoff, ex, sizeof ex);
        mblx_graph_free(g);
        return 0;
    }
    mblx_id sy[4] = {mblx_symbol(g, "x"), mblx_symbol(g, "y"), mblx_symbol(g, "z"),
                     mblx_symbol(g, "t")};
    mblx_id dx = mblx_diff(g, e, sy[0]);
    mblx_id dxy = mblx_diff(g, dx, sy[1]);
    mblx_id grad[4];
    if (mblx_gradient(g, e, 4, sy, grad)) abort();
    mblx_sparse J;
    if (mblx_jacobian(g, 4, grad, 4, sy, &J)) abort();
    mblx_id dt = mblx_total_der(g, e, 3, sy, grad, sy[3]);
    if (mblx_graph_status(g, &st)) abort();
    /* compile everything into one tape and evaluate at a fixed point */
    size_t nout = 4 + 4 + (size_t)J.colptr[4];
    mblx_id *outs = malloc(nout * sizeof *outs);
    if (!outs) abort();
    outs[0] = e, outs[1] = dx, outs[2] = dxy, outs[3] = dt;
    memcpy(outs + 4, grad, sizeof grad);
    memcpy(outs + 8, J.node, (size_t)J.colptr[4] * sizeof *outs);
    mblx_sparse_free(&J);
    mblx_tape *tp = mblx_compile(g, nout, outs, &st);
    if (!tp) abort();
    size_t ns = mblx_symbol_count(g);
    double *sv = malloc((ns ? ns : 1) * sizeof *sv), *w = malloc(mblx_tape_work_size(tp) * sizeof *w),
           *vals = malloc(nout * sizeof *vals);
    if (!sv || !w || !vals) abort();
    for (size_t i = 0; i < ns; i++) sv[i] = 0.25 + 0.5 * (double)i;
    rc = mblx_tape_eval(tp, sv, vals, w, &st);
    if (rc && rc != MBL_EDOMAIN) abort();
    free(sv);
    free(w);
    free(vals);
    free(outs);
    mblx_tape_free(tp);
    /* print, re-parse: the same node */
    char *s = mblx_print_alloc(g, e, &st);
    if (!s) abort();
    mblx_parse_opts o2 = {resolve, NULL, 0, 0, 1 << 20, NULL};
    mblx_id back;
    if (mblx_parse(g, s, strlen(s), &o2, &back, &st) || back != e) {
        fprintf(stderr, "print/parse mismatch: %s\n", s);
        abort();
    }
    mbl_free(s);
    mblx_graph_free(g);
    return 0;
}
