/* The operating point's Newton iteration on the subproblem's rows alone (src/opoint/solve.c,
 * rows_view_make, opoint_eval_jac_rows; src/model/eval.c, model_F_rows_view, model_eval_jac_rows):
 * a large equilibrium (at least OPOINT_CHORD_MIN unknowns) evaluates its residual and, but after a
 * chord step, its Jacobian's entries only in the rows it solves (the equations of motion and the
 * position constraints, not the velocity and acceleration constraints' rows), from a view of the
 * residual tape (src/expr/tape_eval.c, mblx__subtape_new). The values are the whole evaluation's
 * bit for bit, so the point is too: the N = 500 four-bar (2005 unknowns), loaded with the forward
 * Jacobian and with its default, solved with the views and without (opoint_rows_view_disable):
 * the coordinates, multipliers, residuals, iterations and Jacobian evaluations the same, and the
 * Jacobian handed on to the linearization (mbl_point.jac_memo) whole and the same bit for bit. The
 * N = 300 four-bar (1205 unknowns) is below the size and takes no view (the same check). A
 * mechanism's numeric term selects its rows itself (the_same_point_with_the_terms_selection). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/mblin.h"
#include "model/eval_rows.h"
#include "model/model_view.h"
#include "opoint/opoint_solve.h"
#include "test.h"
#include "fixture.h"
#include "fourbar_text.h"

static void count(void *ctx, const mbl_model *md, const double *syms)
{
    (void)md, (void)syms;
    ++*(int *)ctx;
}

typedef struct solved {
    mbl_point *pt;
    int nev;
} solved;

static solved solve(const mbl_model *md, int views)
{
    solved s = {NULL, 0};
    mbl_status st;
    opoint_rows_view_disable(!views);
    model_set_jac_observer(count, &s.nev);
    int rc = mbl_operating_point(md, NULL, &s.pt, &st);
    model_set_jac_observer(NULL, NULL);
    opoint_rows_view_disable(0);
    CHECK_MSG(rc == 0, "views %d: %s", views, st.msg);
    return s;
}

#define SAME(a, b, n, what) CHECK_MSG(!memcmp((a), (b), (size_t)(n) * sizeof *(a)), "%s: %s differ", name, what)

/* a (without views) and b (with them) solved to the same point bit for bit, in as many iterations and
 * Jacobian evaluations, with the same whole Jacobian handed on */
static void same_points(const char *name, const mbl_model *md, const solved *a, const solved *b)
{
    if (!a->pt || !b->pt) return;
    model_view mv;
    model_view_get(md, &mv);
    SAME(a->pt->q, b->pt->q, mv.n, "coordinates");
    SAME(a->pt->lambda, b->pt->lambda, mv.m, "multipliers");
    SAME(&a->pt->residual, &b->pt->residual, 1, "residuals");
    SAME(&a->pt->scaled_residual, &b->pt->scaled_residual, 1, "scaled residuals");
    CHECK_EQ_INT(a->pt->iterations, b->pt->iterations);
    CHECK_MSG(a->nev == b->nev, "%s: %d and %d Jacobian evaluations", name, a->nev, b->nev);
    const model_jac_memo *ja = a->pt->jac_memo, *jb = b->pt->jac_memo;
    CHECK_MSG(ja && jb, "%s: no Jacobian handed on (%p, %p)", name, (const void *)ja, (const void *)jb);
    if (ja && jb) {
        CHECK_EQ_INT(ja->nz, mv.jac.nz);
        CHECK_EQ_INT(jb->nz, mv.jac.nz);
        SAME(ja->syms, jb->syms, mv.nsym, "the Jacobian's symbols");
        SAME(ja->jac, jb->jac, mv.jac.nz, "the Jacobians handed on");
    }
    printf("%s: %d iterations, %d Jacobian evaluations\n", name, b->pt->iterations, b->nev);
}

/* md solved without views, then with them: the same point (the first solve, discarded, takes the
 * mass check's Jacobian at the guess, given once) */
static void solve_both(const char *name, const mbl_model *md)
{
    solved a = solve(md, 0);
    mbl_point_free(a.pt);
    a = solve(md, 0);
    solved b = solve(md, 1);
    same_points(name, md, &a, &b);
    mbl_point_free(a.pt), mbl_point_free(b.pt);
}

TEST(the_same_point_with_views)
{
    static const int Ns[] = {500, 300};
    for (size_t k = 0; k < sizeof Ns / sizeof *Ns; k++)
        for (int fwd = 1; fwd >= 0; fwd--) {
            char name[48], *text = fourbar_text(Ns[k], 0, 0);
            snprintf(name, sizeof name, "fourbar_N%d (forward %d)", Ns[k], fwd);
            mbl_model *md = text ? fixture_model_fwd(NULL, text, name, fwd) : NULL;
            free(text);
            if (!md) continue;
            solve_both(name, md);
            mbl_model_free(md);
        }
}

/* examples/mech/fourbar.py's N-loop four-bar as a planar mechanism (malloc'd; NULL: out of memory) */
static char *mech_fourbar_text(int N)
{
    size_t cap = 700 * (size_t)N + 2000, o = 0;
    char *b = malloc(cap);
    if (!b) return NULL;
    double cx = cos(2.0), cy = sin(2.0);
#define PUT(...) (o += (size_t)snprintf(b + o, o < cap ? cap - o : 0, __VA_ARGS__))
    PUT("model: mechanism\nspace: planar\nparameters: {m: 1, l: 1, k: 25, L0: sqrt(2)*l, c: 0, g: 9.81}\n"
        "ground:\n  markers:\n");
    for (int i = 0; i <= N; i++) PUT("    A%d: {position: [%d, 0]}\n", i, i);
    PUT("bodies:\n");
    for (int i = 0; i <= N; i++)
        PUT("  rocker%d:\n    mass: m\n    inertia: m*l^2/12\n    position: [%.17g, %.17g]\n    angle: 2\n"
            "    markers: {R%d_base: {position: [-l/2, 0]}, R%d_tip: {position: [l/2, 0]}}\n",
            i, i + cx / 2, cy / 2, i, i);
    for (int i = 1; i <= N; i++)
        PUT("  coupler%d:\n    mass: m\n    inertia: m*l^2/12\n    position: [%.17g, %.17g]\n"
            "    markers: {C%d_left: {position: [-l/2, 0]}, C%d_right: {position: [l/2, 0]}}\n",
            i, i - 0.5 + cx, cy, i, i);
    PUT("joints:\n");
    for (int i = 0; i <= N; i++) PUT("  pivot%d: {type: revolute, i: R%d_base, j: A%d}\n", i, i, i);
    for (int i = 1; i <= N; i++)
        PUT("  left%d: {type: revolute, i: C%d_left, j: R%d_tip}\n  right%d: {type: revolute, i: C%d_right, j: R%d_tip}\n",
            i, i, i - 1, i, i, i);
    PUT("forces:\n  weight: {type: gravity, g: [0, -g]}\n");
    for (int i = 1; i <= N; i++)
        PUT("  spring%d: {type: spring, i: R%d_tip, j: A%d, stiffness: k, damping: c, length: L0}\n", i, i, i - 1);
    PUT("linearize:\n  at: equilibrium\n  states: [\"JQ(pivot%d)\"]\n", N);
#undef PUT
    if (o >= cap) {
        free(b);
        return NULL;
    }
    return b;
}

/* The mechanism's numeric term (src/model/terms/pmech_num.c) has no tape view: its rows and entries
 * of the subproblem are selected in the term itself (model_eval_F_sel, model_eval_jac_sel; session
 * 47): the N = 200 mechanism (1203 coordinates, 1202 constraints: 2405 unknowns), solved with the
 * selection and without, the same point, Jacobian evaluations and Jacobian handed on bit for bit. */
TEST(the_same_point_with_the_terms_selection)
{
    const char *name = "mechanism fourbar_N200";
    char *text = mech_fourbar_text(200);
    mbl_model *md = text ? fixture_model_fwd(NULL, text, name, 0) : NULL;
    free(text);
    CHECK(md != NULL);
    if (!md) return;
    model_view mv;
    model_view_get(md, &mv);
    CHECK_MSG(mv.n + mv.m >= 2000, "%s: %d unknowns, below the size that selects", name, mv.n + mv.m);
    CHECK_MSG(model_eval_sel_ok(md), "%s: the terms do not select", name);
    solve_both(name, md);
    mbl_model_free(md);
}

int main(void)
{
    RUN(the_same_point_with_views);
    RUN(the_same_point_with_the_terms_selection);
    return test_summary("rows_view");
}
