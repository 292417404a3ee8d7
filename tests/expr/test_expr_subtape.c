/* A view of a tape that computes some of its outputs alone (src/expr/tape_eval.c,
 * mblx__subtape_new; the operating point's Newton rows, src/opoint/solve.c) and the forward
 * Jacobian's entries of those rows from it (tape_forward.c, mblx__fwdjac_eval_rows).
 *
 * A tape of 3 N + 1 outputs in three layers that share their subexpressions (f_i; g_i reads f_i;
 * h_i reads g_i and f_i; a sum of every x_j), compiled as a whole (its registers reused): views of
 * the g rows, of every third output backwards, of one output, checked against the whole tape's
 * values bit for bit, with fewer instructions; a view of every output, or of an output out of
 * range, is not made. A value not finite in a row left out does not fail the view; one in a row
 * kept does, named. The Jacobian's entries in a view's rows equal the whole evaluation's bit
 * for bit, the others are left as they were, in one sweep (N colors of the band) and in several
 * (the sum's row: N + 2 colors, above one sweep's 32).
 *
 * The view reads the tape's instructions (not copied): its runs cover the tape's in order, those of
 * its kept instructions and gaps. A value or a derivative not finite in every row but one names, in
 * the view of that one, its own instruction, as a tape of that row alone names it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr/tape_internal.h"
#include "expr/tape_subset.h"
#include "mblin/expr.h"
#include "test.h"

enum { N = 40, M = 3 * N + 1 };

typedef struct rig {
    mblx_graph *g;
    mblx_id xs[N + 1], rows[M]; /* xs[N]: a parameter */
    mblx_tape *t;
} rig;

static void rig_make(rig *r)
{
    char nm[16];
    mblx_graph *g = r->g = mblx_graph_new();
    for (int i = 0; i <= N; i++) snprintf(nm, sizeof nm, i < N ? "x%d" : "p", i), r->xs[i] = mblx_symbol(g, nm);
    mblx_id p = r->xs[N];
    for (int i = 0; i < N; i++) {
        mblx_id x = r->xs[i], xl = r->xs[i ? i - 1 : N - 1], xr = r->xs[(i + 1) % N];
        mblx_id f = mblx_add(g, mblx_mul(g, p, x), mblx_add(g, mblx_mul(g, xl, x), mblx_sin(g, xr)));
        mblx_id gg = mblx_add(g, mblx_mul(g, mblx_cos(g, f), mblx_exp(g, mblx_mul(g, x, mblx_const(g, 1.0 / 3)))),
                              mblx_sqrt(g, mblx_add(g, mblx_mul(g, x, x), mblx_const(g, 1.0))));
        mblx_id h = mblx_add(g, mblx_mul(g, gg, f), mblx_add(g, mblx_atan2(g, x, xr), mblx_min(g, x, xr)));
        h = mblx_add(g, h, mblx_log(g, mblx_add(g, x, mblx_const(g, 0.5)))); /* not finite where x <= -0.5 */
        r->rows[i] = f, r->rows[N + i] = gg, r->rows[2 * N + i] = h;
    }
    r->rows[M - 1] = mblx_sum(g, N, r->xs);
    r->t = mblx_compile(g, M, r->rows, NULL);
}

static void rig_free(rig *r)
{
    mblx_tape_free(r->t);
    mblx_graph_free(r->g);
}

static void point(double *sv, double shift)
{
    for (int i = 0; i <= N; i++) sv[i] = 0.1 + 0.37 * sin(1.0 + i) + shift;
}

/* v's instructions are t's, its runs t's instructions in order, each run one opcode or a gap, the
 * instructions of its runs not gaps its count of instructions. */
static void check_runs(const mblx_tape *t, const mblx_tape *v)
{
    CHECK(v->ins == t->ins && v->ins_node == t->ins_node);
    CHECK(v->nrun > 0 && v->run_start[0] == 0 && v->run_start[v->nrun] == t->nins);
    size_t kept = 0, bad = 0;
    for (size_t r = 0; r < v->nrun; r++) {
        bad += v->run_start[r] >= v->run_start[r + 1] || (r && v->run_op[r] == v->run_op[r - 1]);
        if (v->run_op[r] == MBLX__RUN_GAP) continue;
        kept += v->run_start[r + 1] - v->run_start[r];
        for (size_t i = v->run_start[r]; i < v->run_start[r + 1]; i++) bad += t->ins[i].op != v->run_op[r];
    }
    CHECK_MSG(bad == 0, "%zu runs or instructions out of place", bad);
    CHECK_EQ_INT((int)kept, (int)v->nins);
}

/* The view of sel against the whole tape at sv: values bit for bit, fewer instructions (less: 1). */
static void check_view(const rig *r, size_t nsel, const uint32_t *sel, const double *sv, int less)
{
    mblx__subtape *s = mblx__subtape_new(r->t, nsel, sel);
    CHECK(s != NULL);
    if (!s) return;
    const mblx_tape *v = mblx__subtape_tape(s);
    CHECK_EQ_INT((int)mblx_tape_noutputs(v), (int)nsel);
    check_runs(r->t, v);
    if (less) CHECK_MSG(mblx_tape_ninstr(v) < mblx_tape_ninstr(r->t), "%zu of %zu instructions", mblx_tape_ninstr(v),
                        mblx_tape_ninstr(r->t));
    double *w = calloc(mblx_tape_work_size(r->t), sizeof *w), all[M], part[M];
    CHECK_EQ_INT(mblx_tape_eval(r->t, sv, all, w, NULL), 0);
    memset(w, 0, mblx_tape_work_size(r->t) * sizeof *w); /* nothing left from the whole evaluation */
    CHECK_EQ_INT(mblx_tape_eval(v, sv, part, w, NULL), 0);
    for (size_t k = 0; k < nsel; k++)
        CHECK_MSG(!memcmp(&part[k], &all[sel[k]], sizeof *part), "output %u: %.17g, the whole tape's %.17g", sel[k],
                  part[k], all[sel[k]]);
    free(w);
    mblx__subtape_free(s);
}

TEST(views_of_outputs)
{
    rig r;
    rig_make(&r);
    CHECK(r.t != NULL);
    if (!r.t) return;
    double sv[N + 1];
    point(sv, 0.0);
    uint32_t sel[M];
    for (int i = 0; i < N; i++) sel[i] = (uint32_t)(N + i); /* the g rows (and the f rows they read) */
    check_view(&r, N, sel, sv, 1);
    size_t n = 0;
    for (int o = M - 1; o >= 0; o -= 3) sel[n++] = (uint32_t)o; /* every third, backwards */
    check_view(&r, n, sel, sv, 1);
    sel[0] = 2 * N + 7; /* one h row */
    check_view(&r, 1, sel, sv, 1);
    sel[0] = 2 * N + 7, sel[1] = 2 * N + 7; /* the same output twice */
    check_view(&r, 2, sel, sv, 1);
    for (int o = 0; o < M; o++) sel[o] = (uint32_t)(M - 1 - o);
    CHECK(mblx__subtape_new(r.t, M, sel) == NULL); /* every instruction needed */
    sel[0] = M;
    CHECK(mblx__subtape_new(r.t, 1, sel) == NULL); /* no such output */
    rig_free(&r);
}

TEST(view_fails_only_on_its_rows)
{
    rig r;
    rig_make(&r);
    if (!r.t) return;
    double sv[N + 1], out[M];
    point(sv, 0.0);
    sv[5] = -0.75; /* log(x5 + 0.5) of h_5 is not finite */
    double *w = calloc(mblx_tape_work_size(r.t), sizeof *w);
    mbl_status st;
    CHECK(mblx_tape_eval(r.t, sv, out, w, &st) != 0);
    uint32_t sel[N];
    for (int i = 0; i < N; i++) sel[i] = (uint32_t)(N + i); /* the g rows: finite */
    mblx__subtape *s = mblx__subtape_new(r.t, N, sel);
    CHECK(s != NULL);
    if (s) CHECK_EQ_INT(mblx_tape_eval(mblx__subtape_tape(s), sv, out, w, &st), 0);
    mblx__subtape_free(s);
    sel[0] = 2 * N + 5; /* h_5 */
    s = mblx__subtape_new(r.t, 1, sel);
    CHECK(s != NULL);
    if (s) {
        CHECK_EQ_INT(mblx_tape_eval(mblx__subtape_tape(s), sv, out, w, &st), MBL_EDOMAIN);
        CHECK_MSG(strstr(st.msg, "log of non-positive value") != NULL, "%s", st.msg);
    }
    mblx__subtape_free(s);
    free(w);
    rig_free(&r);
}

/* The entries of the view's rows against mblx_fwdjac_eval of the whole tape (with the sum's row,
 * arrow: several sweeps), at two points (the view's entry list made at the first call). */
static void check_jac(int arrow)
{
    rig r;
    rig_make(&r);
    if (!r.t) return;
    size_t m = arrow ? M : M - 1;
    mblx_tape *t = arrow ? r.t : mblx_compile(r.g, m, r.rows, NULL);
    mbl_status st;
    mblx_fwdjac *J = mblx_fwdjac_new(r.g, m, r.rows, N, r.xs, &st);
    CHECK(J && t);
    if (!J || !t) return;
    CHECK(arrow ? mblx_fwdjac_ncolors(J) > 32 : mblx_fwdjac_ncolors(J) <= 32);
    mblx_tape_set_fwdjac(t, J); /* (its one-sweep entry sources) */
    const int *cp, *ri;
    size_t nnz = mblx_fwdjac_pattern(J, &cp, &ri);
    uint32_t sel[M];
    int outpos[M];
    size_t nsel = 0;
    for (size_t o = 0; o < m; o++) outpos[o] = -1;
    for (size_t o = m; o-- > 0;) /* every other h row, the sum, every fourth g row, backwards */
        if ((o >= 2 * N && o % 2 == 0) || o == M - 1 || (o >= N && o < 2 * N && o % 4 == 1))
            outpos[o] = (int)nsel, sel[nsel++] = (uint32_t)o;
    mblx__subtape *s = mblx__subtape_new(t, nsel, sel);
    CHECK(s != NULL);
    double *w = calloc(mblx_fwdjac_work_size(J, t), sizeof *w), *all = malloc(nnz * sizeof *all);
    double *part = malloc(nnz * sizeof *part), sv[N + 1];
    for (int pass = 0; pass < 2 && s; pass++) {
        point(sv, 0.05 * pass);
        CHECK_EQ_INT(mblx_fwdjac_eval(J, t, sv, all, NULL, w, NULL), 0);
        for (size_t e = 0; e < nnz; e++) part[e] = -12345.0;
        memset(w, 0, mblx_fwdjac_work_size(J, t) * sizeof *w);
        CHECK_EQ_INT(mblx__fwdjac_eval_rows(J, s, outpos, sv, part, w, &st), 0);
        int bad = 0;
        for (size_t j = 0; j < N; j++)
            for (int e = cp[j]; e < cp[j + 1]; e++)
                bad += outpos[ri[e]] >= 0 ? memcmp(&part[e], &all[e], sizeof *part) != 0 : part[e] != -12345.0;
        CHECK_MSG(bad == 0, "arrow %d, pass %d: %d entries differ", arrow, pass, bad);
    }
    free(w), free(all), free(part);
    mblx__subtape_free(s);
    if (t != r.t) mblx_tape_free(t);
    rig_free(&r);
}

TEST(jacobian_rows_from_the_view)
{
    check_jac(0);
    check_jac(1);
}

/* The message of the view of output o of r's tape (a value not finite: jac 0; a derivative: jac 1)
 * against that of a tape of o alone; also differs from the whole tape's (another row first). */
static void check_own_message(rig *r, uint32_t o, const double *sv, int jac)
{
    mblx_tape *t1 = mblx_compile(r->g, 1, &r->rows[o], NULL);
    mblx_fwdjac *J = mblx_fwdjac_new(r->g, M, r->rows, N, r->xs, NULL);
    mblx_fwdjac *J1 = mblx_fwdjac_new(r->g, 1, &r->rows[o], N, r->xs, NULL);
    mblx__subtape *s = mblx__subtape_new(r->t, 1, &o);
    CHECK(t1 && J && J1 && s);
    if (!t1 || !J || !J1 || !s) return;
    size_t nw = mblx_fwdjac_work_size(J, r->t);
    double *w = calloc(nw + mblx_fwdjac_work_size(J1, t1), sizeof *w), out[M];
    double *vals = malloc((mblx_fwdjac_pattern(J, NULL, NULL) + 1) * sizeof *vals);
    int outpos[M];
    for (int k = 0; k < M; k++) outpos[k] = k == (int)o ? 0 : -1;
    mbl_status whole, one, view;
    if (jac) {
        CHECK_EQ_INT(mblx_fwdjac_eval(J, r->t, sv, vals, NULL, w, &whole), MBL_EDOMAIN);
        CHECK_EQ_INT(mblx_fwdjac_eval(J1, t1, sv, vals, NULL, w, &one), MBL_EDOMAIN);
        CHECK_EQ_INT(mblx__fwdjac_eval_rows(J, s, outpos, sv, vals, w, &view), MBL_EDOMAIN);
    } else {
        CHECK_EQ_INT(mblx_tape_eval(r->t, sv, out, w, &whole), MBL_EDOMAIN);
        CHECK_EQ_INT(mblx_tape_eval(t1, sv, out, w, &one), MBL_EDOMAIN);
        CHECK_EQ_INT(mblx_tape_eval(mblx__subtape_tape(s), sv, out, w, &view), MBL_EDOMAIN);
    }
    CHECK_MSG(!strcmp(view.msg, one.msg), "the view's \"%s\", its row's \"%s\"", view.msg, one.msg);
    CHECK_MSG(strcmp(whole.msg, one.msg) != 0, "the whole tape's \"%s\"", whole.msg);
    free(w), free(vals);
    mblx__subtape_free(s);
    mblx_fwdjac_free(J), mblx_fwdjac_free(J1);
    mblx_tape_free(t1);
}

TEST(view_names_its_own_rows)
{
    rig r;
    rig_make(&r);
    if (!r.t) return;
    double sv[N + 1];
    for (int i = 0; i < N; i++) sv[i] = -0.75; /* log(x_i + 0.5) of every h_i not finite */
    sv[N] = 0.3, sv[5] = -0.9;
    check_own_message(&r, 2 * N + 5, sv, 0);
    for (int i = 0; i < N; i++) sv[i] = 0.0; /* atan2(x_i, x_i+1) of every h_i: its derivative not finite */
    check_own_message(&r, 2 * N + 5, sv, 1);
    rig_free(&r);
}

int main(void)
{
    RUN(views_of_outputs);
    RUN(view_fails_only_on_its_rows);
    RUN(jacobian_rows_from_the_view);
    RUN(view_names_its_own_rows);
    return test_summary("expr_subtape");
}
