/* Parsing in the expression tests: every name is a symbol of the graph, no function is known;
 * a failed parse prints its message and gives MBLX_NONE. */
#ifndef MBLIN_TESTS_EXPR_PARSE_FIXTURE_H
#define MBLIN_TESTS_EXPR_PARSE_FIXTURE_H

#include <stdio.h>
#include <string.h>

#include "mblin/expr.h"

static inline int fixture_symbols(void *ud, mblx_graph *g, const char *name, size_t len, int nargs,
                                  const mblx_id *args, mblx_id *out, char *why, size_t whylen)
{
    (void)ud, (void)args, (void)why, (void)whylen;
    if (nargs >= 0) return 1;
    *out = mblx_symbol_n(g, name, len);
    return 0;
}

static inline mblx_id fixture_parse(mblx_graph *g, const char *s)
{
    mblx_parse_opts o = {fixture_symbols, NULL, 0, 0, 0, NULL};
    mblx_id e;
    mbl_status st;
    if (mblx_parse(g, s, strlen(s), &o, &e, &st)) {
        fprintf(stderr, "parse of '%s' failed: %s\n", s, st.msg);
        return MBLX_NONE;
    }
    return e;
}

#endif
