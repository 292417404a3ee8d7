/* Allocation-failure injection: a representative build / parse / differentiate / Jacobian /
 * compile / evaluate / print sequence is run with the (k+1)-th allocation failing, for every k
 * until the sequence succeeds. Every run must end with MBL_ENOMEM (never another code, never a
 * crash) and free everything (checked by ASan's leak detector). */
#include <string.h>

#include "mblin/expr.h"
#include "test.h"

static int resolver(void *ud, mblx_graph *g, const char *name, size_t len, int nargs,
                    const mblx_id *args, mblx_id *out, char *why, size_t whylen)
{
    (void)ud, (void)why, (void)whylen;
    if (nargs < 0) {
        *out = mblx_symbol_n(g, name, len);
        return 0;
    }
    if (len == 3 && memcmp(name, "der", 3) == 0 && nargs == 1) {
        char buf[64];
        const char *s = mblx_symbol_name(g, args[0]);
        if (!s) return 1;
        snprintf(buf, sizeof buf, "%s_d", s);
        *out = mblx_symbol(g, buf);
        return 0;
    }
    return 1;
}

/* Returns 0 or the first error code. */
static int sequence(void)
{
    static const char *text =
        "0.5*m*(der(x)^2 + der(y)^2) + 0.5*J*der(th)^2 - m*g*y*cos(th)\n"
        "  + k/2*(sqrt(x^2 + y^2) - L)^2 + step(x, 0, 0, 1, F)*atan2(y, x)\n"
        "  + exp(-x^2)*log(2 + sin(y)) + min(x, y) - max(th, 1)/3 + abs(x)^1.5";
    int rc = 0;
    mbl_status st;
    mblx_graph *g = mblx_graph_new();
    if (!g) return MBL_ENOMEM;
    mblx_parse_opts o = {resolver, NULL, 0, 0, 0, NULL};
    mblx_id e;
    rc = mblx_parse(g, text, strlen(text), &o, &e, &st);
    if (rc) goto out;
    /* long sum and products */
    enum { NT = 300 };
    mblx_id terms[NT];
    for (int i = 0; i < NT; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "v%d", i);
        mblx_id v = mblx_symbol(g, nm);
        terms[i] = mblx_product(g, 3, (mblx_id[]){mblx_const(g, i + 1.0), v, mblx_cos(g, v)});
    }
    mblx_id big = mblx_add(g, mblx_sum(g, NT, terms), e);
    const char *names[] = {"x", "y", "th", "x_d", "y_d", "th_d"};
    mblx_id sy[6];
    for (int i = 0; i < 6; i++) sy[i] = mblx_symbol(g, names[i]);
    mblx_id d3 = mblx_diff(g, mblx_diff(g, mblx_diff(g, big, sy[0]), sy[1]), sy[2]);
    mblx_id grad[6];
    rc = mblx_gradient(g, big, 6, sy, grad);
    if (rc) goto out;
    mblx_sparse J = {0}, H = {0};
    rc = mblx_jacobian(g, 6, grad, 6, sy, &J);
    if (rc) goto out;
    rc = mblx_hessian(g, big, 6, sy, &H);
    if (rc) {
        mblx_sparse_free(&J);
        goto out;
    }
    mblx_id td = mblx_total_der(g, e, 3, sy, sy + 3, mblx_symbol(g, "t"));
    mblx_id sub = mblx_subst(g, e, 2, sy, (mblx_id[]){sy[1], mblx_sin(g, sy[2])});
    rc = mblx_graph_status(g, &st);
    if (rc) {
        mblx_sparse_free(&J);
        mblx_sparse_free(&H);
        goto out;
    }
    size_t nout = 4 + (size_t)J.colptr[6];
    mblx_id *outs = malloc(nout * sizeof *outs);
    outs[0] = d3, outs[1] = td, outs[2] = sub, outs[3] = big;
    for (int k = 0; k < J.colptr[6]; k++) outs[4 + k] = J.node[k];
    mblx_sparse_free(&J);
    mblx_sparse_free(&H);
    mblx_tape *t = mblx_compile(g, nout, outs, &st);
    free(outs);
    if (!t) {
        rc = st.code;
        goto out;
    }
    size_t ns = mblx_symbol_count(g);
    double *sv = malloc(ns * sizeof *sv), *w = malloc(mblx_tape_work_size(t) * sizeof *w);
    double *vals = malloc(nout * sizeof *vals);
    for (size_t i = 0; i < ns; i++) sv[i] = 0.3 + 0.01 * (double)i;
    rc = mblx_tape_eval(t, sv, vals, w, &st);
    free(sv);
    free(w);
    free(vals);
    mblx_tape_free(t);
    if (rc) goto out;
    char *s = mblx_print_alloc(g, d3, &st);
    if (!s) {
        rc = st.code;
        goto out;
    }
    mblx_id back;
    rc = mblx_parse(g, s, strlen(s), &o, &back, &st);
    mbl_free(s);
    if (rc) goto out;
    double v;
    double sv1[512] = {0};
    for (int i = 0; i < 512; i++) sv1[i] = 0.5;
    rc = mblx_eval(g, e, sv1, &v, &st);
out:
    mblx_graph_free(g);
    return rc;
}

TEST(every_allocation_fails_cleanly)
{
    CHECK_EQ_INT(sequence(), 0); /* the sequence itself is valid */
    long k;
    int bad = 0;
    for (k = 0;; k++) {
        mbl_alloc_fail_after(k);
        int rc = sequence();
        mbl_alloc_fail_after(-1);
        if (rc == 0) break;
        if (rc != MBL_ENOMEM && bad++ < 5) fprintf(stderr, "allocation %ld: rc %d\n", k, rc);
    }
    CHECK_EQ_INT(bad, 0);
    CHECK(k > 100); /* the sequence does allocate */
    printf("expr_alloc: %ld allocation points tested\n", k);
}

int main(void)
{
    RUN(every_allocation_fails_cleanly);
    return test_summary("expr_alloc");
}
