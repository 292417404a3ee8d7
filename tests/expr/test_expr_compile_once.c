/* mblx__compile_written (src/expr/compile_once.h): a tape for a few evaluations, the expressions
 * as written (no common pairs of operands nor chains searched for), the residual's, outputs' and
 * user states' tapes of a one-point command's load:
 * - on sub-DAGs with pairs and long sums sharing prefixes: mblx_compile's values to rounding and not
 *   all bitwise (the pairs group the operations otherwise), more instructions than mblx_compile's,
 *   registers reused; below 1,024 nodes the bits of mblx_compile_few's (as written too);
 * - bound to the graph (the residual's tape): mblx_compile_bound's values and the forward sweeps'
 *   Jacobian to rounding, and a failing evaluation's code and message;
 * - the mechanism bicycle's user states loaded with and without forward_jacobian: the same bits
 *   (mbl_model_user_states). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr/compile_once.h"
#include "expr/tape_internal.h"
#include "mblin/model.h"
#include "model/model_internal.h"
#include "parse_fixture.h"
#include "test.h"

static mblx_graph *G;

static mblx_id P(const char *s) { return fixture_parse(G, s); }

/* Entry (k, r) of the rotation Rz(a) Rx(b) Ry(c) (by its formula; A, B, C in the templates stand
 * for the angles' names), in parentheses. */
static void rot_text(char *out, size_t len, const char *a, const char *b, const char *c, int r, int k)
{
    static const char *const f[9] = {"cos(A)*cos(C) - sin(A)*sin(B)*sin(C)", "sin(A)*cos(C) + cos(A)*sin(B)*sin(C)",
                                     "-cos(B)*sin(C)",                       "-sin(A)*cos(B)",
                                     "cos(A)*cos(B)",                        "sin(B)",
                                     "cos(A)*sin(C) + sin(A)*sin(B)*cos(C)", "sin(A)*sin(C) - cos(A)*sin(B)*cos(C)",
                                     "cos(B)*cos(C)"};
    size_t at = 0;
    out[at++] = '(';
    for (const char *t = f[k + 3 * r]; *t && at + 20 < len; t++) {
        const char *nm = *t == 'A' ? a : *t == 'B' ? b : *t == 'C' ? c : NULL;
        if (nm)
            at += (size_t)snprintf(out + at, len - at, "%s", nm);
        else
            out[at++] = *t;
    }
    out[at++] = ')';
    out[at] = '\0';
}

/* nc pairs of rotations R, S (angles q<c>_0..2 and q<c>_3..5): the nine entries of R^T S each
 * (sums of products of sines and cosines sharing pairs) and their derivatives along the six
 * angles, into e (9 * 7 * nc of them); returns the count. */
static size_t rotation_products(int nc, mblx_id *e)
{
    size_t n = 0;
    for (int c = 0; c < nc; c++) {
        char nm[6][16];
        for (int k = 0; k < 6; k++) snprintf(nm[k], sizeof nm[k], "q%d_%d", c, k);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                char text[2048] = "", a[600], b[600];
                size_t at = 0;
                for (int k = 0; k < 3; k++) {
                    rot_text(a, sizeof a, nm[0], nm[1], nm[2], i, k);
                    rot_text(b, sizeof b, nm[3], nm[4], nm[5], j, k);
                    at += (size_t)snprintf(text + at, sizeof text - at, "%s%s*%s", k ? " + " : "", a, b);
                }
                mblx_id x = P(text);
                e[n++] = x;
                for (int k = 0; k < 6; k++) e[n++] = mblx_diff(G, x, mblx_symbol(G, nm[k]));
            }
    }
    return n;
}

enum { NC = 6, NS = 30, NT = 40 };

/* The rotation products of NC pairs of rotations and NS sums of more terms than the pairs' search
 * looks into, sharing a prefix of NT terms (the chains' work): into *e (malloc'ed), their count. */
static size_t pairs_and_prefixes(mblx_id **e)
{
    *e = malloc((9 * 7 * NC + NS) * sizeof **e);
    size_t n = rotation_products(NC, *e);
    for (int j = 0; j < NS; j++) {
        char t[NT * 12 + 32];
        size_t at = 0;
        for (int k = 0; k < NT; k++) at += (size_t)snprintf(t + at, sizeof t - at, "%scos(z%d)", k ? " + " : "", k);
        snprintf(t + at, sizeof t - at, " + zz%d", j);
        (*e)[n++] = P(t);
    }
    return n;
}

/* The two tapes a, b of the rows f of failing_rows (NULL: failed to compile) fail the same way at
 * u = 1.75 (sqrt of a negative): MBL_EDOMAIN and the same message; frees them. */
static void same_failure(mblx_tape *a, mblx_tape *b)
{
    mbl_status st1, st2;
    CHECK(a && b);
    if (a && b) {
        size_t ns = mblx_symbol_count(G);
        double *sv = calloc(ns + 1, sizeof *sv), w1[64], w2[64], r[2];
        CHECK(mblx_tape_work_size(a) <= 64 && mblx_tape_work_size(b) <= 64);
        sv[mblx_symbol_index(G, P("u"))] = 1.75, sv[mblx_symbol_index(G, P("v"))] = 2;
        sv[mblx_symbol_index(G, P("w"))] = 0.5;
        int rc1 = mblx_tape_eval(a, sv, r, w1, &st1), rc2 = mblx_tape_eval(b, sv, r, w2, &st2);
        CHECK_EQ_INT(rc1, MBL_EDOMAIN);
        CHECK_EQ_INT(rc2, rc1);
        CHECK_MSG(!strcmp(st1.msg, st2.msg), "'%s' against '%s'", st2.msg, st1.msg);
        free(sv);
    }
    mblx_tape_free(a), mblx_tape_free(b);
}

/* rows whose evaluation fails at u < 2, into f[0..1] */
static void failing_rows(mblx_id f[2])
{
    f[0] = P("sqrt(u - 2)*v + u*v*w");
    f[1] = P("u*v*w + log(w)");
}

/* mblx__compile_written: the expressions as written, scheduled. On the sub-DAG of rotation
 * products with pairs and long sums sharing prefixes: the values of mblx_compile's tape to
 * rounding (1e-13 of each value's size) and not all bitwise (the pairs group the operations
 * otherwise), more instructions than mblx_compile's (no pairs nor chains), registers reused
 * (scheduled: fewer than its instructions); on a small sub-DAG (below 1,024 nodes, where
 * mblx_compile_few compiles as written too) the same bits as mblx_compile_few's; bound to the
 * graph, a failing evaluation's message is mblx_compile_bound's. */
TEST(written_form)
{
    mblx_id *e = NULL;
    size_t n = pairs_and_prefixes(&e);
    mbl_status st;
    size_t nsmall = 9 * 7; /* the first pair of rotations alone */
    mblx_tape *all = mblx_compile(G, n, e, &st);
    mblx_tape *wr = mblx__compile_written(G, n, e, 0, NULL, NULL, &st);
    mblx_tape *ws = mblx__compile_written(G, nsmall, e, 1, NULL, NULL, &st);
    mblx_tape *fs = mblx_compile_few(G, nsmall, e, 0, NULL, NULL, &st);
    CHECK(all && wr && ws && fs);
    if (all && wr && ws && fs) {
        CHECK(all->nl >= 1024 && fs->nl < 1024);
        CHECK_MSG(mblx_tape_ninstr(wr) >= mblx_tape_ninstr(all) + (NS - 1) * (NT - 1), /* no chains */
                  "written %zu instructions, mblx_compile %zu", mblx_tape_ninstr(wr), mblx_tape_ninstr(all));
        CHECK(mblx_tape_work_size(wr) < mblx_tape_ninstr(wr));
        size_t ns = mblx_symbol_count(G), nw = mblx_tape_work_size(all);
        mblx_tape *tp[3] = {wr, ws, fs};
        for (int k = 0; k < 3; k++)
            if (mblx_tape_work_size(tp[k]) > nw) nw = mblx_tape_work_size(tp[k]);
        double *sv = calloc(ns + 1, sizeof *sv), *wk = calloc(nw + 1, sizeof *wk), worst = 0;
        double *r1 = calloc(n + 1, sizeof *r1), *r2 = calloc(n + 1, sizeof *r2), *r3 = calloc(n + 1, sizeof *r3);
        size_t differ = 0, small_differ = 0;
        srand(47);
        for (int pt = 0; pt < 5; pt++) {
            for (size_t i = 0; i < ns; i++) sv[i] = -3.0 + 6.0 * rand() / (double)RAND_MAX;
            CHECK_EQ_INT(mblx_tape_eval(all, sv, r1, wk, &st), 0);
            CHECK_EQ_INT(mblx_tape_eval(wr, sv, r2, wk, &st), 0);
            for (size_t i = 0; i < n; i++) {
                worst = fmax(worst, fabs(r1[i] - r2[i]) / (1 + fabs(r1[i])));
                differ += memcmp(&r1[i], &r2[i], sizeof *r1) != 0;
            }
            CHECK_EQ_INT(mblx_tape_eval(ws, sv, r2, wk, &st), 0);
            CHECK_EQ_INT(mblx_tape_eval(fs, sv, r3, wk, &st), 0);
            for (size_t i = 0; i < nsmall; i++) small_differ += memcmp(&r2[i], &r3[i], sizeof *r2) != 0;
        }
        printf("  written: %zu instructions, %zu registers (mblx_compile %zu); %zu values differ in their bits, by "
               "%.2g at most\n", mblx_tape_ninstr(wr), mblx_tape_work_size(wr), mblx_tape_ninstr(all), differ, worst);
        CHECK_MSG(worst <= 1e-13, "written against mblx_compile: %.3g", worst);
        CHECK(differ > 0);
        CHECK_MSG(small_differ == 0, "%zu values of the small sub-DAG not mblx_compile_few's", small_differ);
        free(sv), free(wk), free(r1), free(r2), free(r3);
    }
    mblx_tape_free(all), mblx_tape_free(wr), mblx_tape_free(ws), mblx_tape_free(fs);
    free(e);
    /* a failing evaluation, bound to the graph */
    mblx_id f[2];
    failing_rows(f);
    mblx_tape *b = mblx_compile_bound(G, 2, f, NULL, NULL, &st);
    same_failure(b, mblx__compile_written(G, 2, f, 1, NULL, NULL, &st));
}

/* mblx__compile_written bound (a one-point load's forward residual tape): on the sub-DAG of pairs
 * and prefixes, the values of mblx_compile_bound's tape and the forward sweeps' Jacobian (mblx_fwdjac
 * by every symbol) to 1e-13 of each value's size and of each row's largest entry; a failing
 * evaluation's message is mblx_compile_bound's. */
TEST(written_bound)
{
    mblx_id *e = NULL;
    size_t n = pairs_and_prefixes(&e), ns = mblx_symbol_count(G);
    mbl_status st;
    mblx_id *syms = malloc(ns * sizeof *syms);
    for (size_t i = 0; i < ns; i++) syms[i] = mblx_symbol_node(G, i);
    mblx_tape *b = mblx_compile_bound(G, n, e, NULL, NULL, &st), *o = mblx__compile_written(G, n, e, 1, NULL, NULL, &st);
    mblx_fwdjac *J = mblx_fwdjac_new(G, n, e, ns, syms, &st);
    CHECK(b && o && J);
    if (b && o && J) {
        size_t nw = mblx_fwdjac_work_size(J, b), nz = mblx_fwdjac_pattern(J, NULL, NULL);
        if (mblx_fwdjac_work_size(J, o) > nw) nw = mblx_fwdjac_work_size(J, o);
        const int *cp, *ri;
        mblx_fwdjac_pattern(J, &cp, &ri);
        double *sv = calloc(ns + 1, sizeof *sv), *wk = calloc(nw + 1, sizeof *wk), *rmax = calloc(n + 1, sizeof *rmax);
        double *r1 = calloc(n + 1, sizeof *r1), *r2 = calloc(n + 1, sizeof *r2), worst = 0, vworst = 0;
        double *j1 = calloc(nz + 1, sizeof *j1), *j2 = calloc(nz + 1, sizeof *j2);
        size_t bad = 0;
        srand(471);
        for (int pt = 0; pt < 5; pt++) {
            for (size_t i = 0; i < ns; i++) sv[i] = -3.0 + 6.0 * rand() / (double)RAND_MAX;
            CHECK_EQ_INT(mblx_fwdjac_eval(J, b, sv, j1, r1, wk, &st), 0);
            CHECK_EQ_INT(mblx_fwdjac_eval(J, o, sv, j2, r2, wk, &st), 0);
            for (size_t i = 0; i < n; i++) {
                vworst = fmax(vworst, fabs(r1[i] - r2[i]) / (1 + fabs(r1[i])));
                bad += memcmp(&r1[i], &r2[i], sizeof *r1) != 0, rmax[i] = 0;
            }
            for (size_t k = 0; k < nz; k++) rmax[ri[k]] = fmax(rmax[ri[k]], fabs(j1[k]));
            for (size_t k = 0; k < nz; k++) worst = fmax(worst, fabs(j1[k] - j2[k]) / fmax(rmax[ri[k]], 1e-300));
        }
        printf("  written, bound: %zu instructions (mblx_compile_bound %zu); %zu values in other bits, by %.2g at "
               "most; Jacobian entries %zu, by %.2g at most\n", mblx_tape_ninstr(o), mblx_tape_ninstr(b), bad, vworst,
               nz, worst);
        CHECK_MSG(vworst <= 1e-13, "the values against mblx_compile_bound's: %.3g", vworst);
        CHECK(bad > 0); /* (the pairs group the operations: other last bits somewhere) */
        CHECK_MSG(worst <= 1e-13, "the forward Jacobian against mblx_compile_bound's: %.3g", worst);
        free(sv), free(wk), free(rmax), free(r1), free(r2), free(j1), free(j2);
    }
    mblx_fwdjac_free(J), mblx_tape_free(b), mblx_tape_free(o);
    free(e), free(syms);
    mblx_id f[2];
    failing_rows(f);
    mblx_tape *fb = mblx_compile_bound(G, 2, f, NULL, NULL, &st);
    same_failure(fb, mblx__compile_written(G, 2, f, 1, NULL, NULL, &st));
}

/* the mechanism bicycle's user states (7; a one-point load compiles the rows s, sdot, sddot as
 * written and takes their Jacobian by forward sweeps, the default load's tape of 2,047 nodes has
 * the symbolic one) and their gradients: the same bits loaded either way */
TEST(bicycle_user_states)
{
    const char *file = "examples/mech/whipple_bicycle.yaml"; /* (the tests run in the source tree) */
    mbl_model *md[2] = {NULL, NULL};
    mbl_point *pt = NULL;
    mbl_status st;
    for (int k = 0; k < 2; k++) {
        mbl_load_options lo;
        mbl_load_options_default(&lo);
        lo.forward_jacobian = k;
        CHECK_EQ_INT(mbl_model_load_file_opt(file, NULL, 0, &lo, &md[k], &st), 0);
    }
    if (md[0] && md[1]) {
        printf("  the user states' tape: %zu instructions, %zu registers; one-point load's %zu, %zu\n",
               mblx_tape_ninstr(md[0]->tape_us), mblx_tape_work_size(md[0]->tape_us), mblx_tape_ninstr(md[1]->tape_us),
               mblx_tape_work_size(md[1]->tape_us));
        CHECK_EQ_INT(mbl_operating_point(md[0], NULL, &pt, &st), 0);
    }
    if (pt) {
        int n = pt->n, nus = 7;
        double s[2][7], *g[2] = {calloc((size_t)(nus * n), sizeof(double)), calloc((size_t)(nus * n), sizeof(double))};
        for (int k = 0; k < 2; k++) CHECK_EQ_INT(mbl_model_user_states(md[k], pt, s[k], g[k], &st), 0);
        CHECK(!memcmp(s[0], s[1], sizeof s[0]));
        CHECK(!memcmp(g[0], g[1], (size_t)(nus * n) * sizeof(double)));
        free(g[0]), free(g[1]);
    }
    mbl_point_free(pt);
    mbl_model_free(md[0]), mbl_model_free(md[1]);
}

int main(void)
{
    G = mblx_graph_new();
    RUN(bicycle_user_states);
    RUN(written_form);
    RUN(written_bound);
    mblx_graph_free(G);
    return test_summary("expr_compile_once");
}
