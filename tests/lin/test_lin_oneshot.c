/* The one-shot augmented linearization (mbl_linearize) and a sweep's first point (mbl_lin_work_new)
 * give the same linear model, bit for bit, by three routes of the evaluator (src/lin/eval.c): the
 * one-shot reads the point's Jacobian values in place (lin_eval_init_lean), the sweep copies them
 * into its own array, and a point without kept values (jac_memo NULL) is evaluated by the one-shot
 * itself with work sized on demand. The one-shot also drops its triplets, the kinematic matrix and
 * the copies inside its KLU factorizations as soon as they are no longer needed
 * (mbla_klu_solve_only): on the 300-loop four-bar the workspace's arrays are each on their own
 * (above AUG_ONE_BLOCK), so those releases run. Models: the four-bar (kinematic system), the
 * slider pendulum and the Whipple bicycle (outputs: the outputs' tape is evaluated on the lean
 * evaluator's work). */
#include <stdio.h>
#include <string.h>

#include "mblin/mblin.h"
#include "test.h"

static void same(const char *path, const char *route, const char *what, const double *a, const double *b, size_t n)
{
    int eq = n == 0 || !memcmp(a, b, n * sizeof *a);
    CHECK_MSG(eq, "%s: %s: %s differs from the sweep's first point", path, route, what);
}

static void compare(const char *path, const char *route, const mbl_linear *x, const mbl_linear *y)
{
    CHECK_EQ_INT(x->nx, y->nx);
    CHECK_EQ_INT(x->nu, y->nu);
    CHECK_EQ_INT(x->ny, y->ny);
    CHECK_EQ_INT(x->z0, y->z0);
    CHECK_EQ_INT(x->z1, y->z1);
    if (x->nx != y->nx || x->nu != y->nu || x->ny != y->ny || x->z0 != y->z0 || x->z1 != y->z1) return;
    size_t nx = (size_t)x->nx, nu = (size_t)x->nu, ny = (size_t)x->ny, z0 = (size_t)x->z0, z1 = (size_t)x->z1;
    same(path, route, "A", x->A, y->A, nx * nx);
    same(path, route, "B", x->B, y->B, nx * nu);
    same(path, route, "C", x->C, y->C, ny * nx);
    same(path, route, "D", x->D, y->D, ny * nu);
    same(path, route, "M-hat", x->M, y->M, z1 * z1);
    same(path, route, "C-hat", x->Cd, y->Cd, z1 * z1);
    same(path, route, "K-hat", x->K, y->K, z1 * z0);
    same(path, route, "F", x->F, y->F, z1 * nu);
    same(path, route, "q_S", x->q_S, y->q_S, (size_t)x->n * z0);
    same(path, route, "v_W", x->v_W, y->v_W, (size_t)x->n * z1);
    same(path, route, "the condition estimate", &x->cond, &y->cond, 1);
}

static void check_model(const char *path, int want_outputs)
{
    mbl_status st;
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_lin_work *w = NULL;
    mbl_linear *sweep = NULL, *oneshot = NULL, *evaluated = NULL;
    int ok = mbl_model_load_file(path, NULL, 0, &md, &st) == 0 && mbl_operating_point(md, NULL, &pt, &st) == 0;
    CHECK_MSG(ok, "%s: %s", path, st.msg);
    if (!ok) goto done;
    CHECK_MSG(pt->jac_memo != NULL, "%s: the operating point keeps no Jacobian values", path);
    CHECK_EQ_INT(mbl_lin_work_new(md, pt, NULL, &w, &sweep, &st), 0);
    CHECK_EQ_INT(mbl_linearize(md, pt, NULL, &oneshot, &st), 0);
    mbl_point bare = *pt; /* the same point without its kept values: the one-shot evaluates */
    bare.jac_memo = NULL;
    CHECK_EQ_INT(mbl_linearize(md, &bare, NULL, &evaluated, &st), 0);
    if (!sweep || !oneshot || !evaluated) goto done;
    CHECK(!strcmp(oneshot->method, "augmented"));
    if (want_outputs) CHECK_MSG(sweep->ny > 0, "%s: no outputs", path);
    compare(path, "the point's values in place", oneshot, sweep);
    compare(path, "evaluated by the one-shot", evaluated, sweep);
done:
    mbl_linear_free(sweep), mbl_linear_free(oneshot), mbl_linear_free(evaluated);
    mbl_lin_work_free(w);
    mbl_point_free(pt);
    mbl_model_free(md);
}

TEST(fourbar_N300) { check_model("examples/fourbar_N300.yaml", 0); }
TEST(fourbar_N5_damped) { check_model("examples/fourbar_N5_damped.yaml", 0); }
TEST(slider_pendulum_outputs) { check_model("examples/slider_pendulum.yaml", 1); }
TEST(whipple_bicycle_outputs) { check_model("examples/whipple_bicycle.yaml", 1); }

int main(void)
{
    RUN(fourbar_N300);
    RUN(fourbar_N5_damped);
    RUN(slider_pendulum_outputs);
    RUN(whipple_bicycle_outputs);
    return test_summary("lin_oneshot");
}
