/* The one-shot path evaluates the residual Jacobian at most once per point (issue 31, item 2): from
 * the load (the mass check at the file's configuration) through mbl_operating_point (Newton, the
 * constraint rank, the point's checks) to mbl_linearize by the default method, no evaluation of a
 * model's Jacobian is at symbol values seen before (bit for bit), and the four other exact methods
 * evaluate none at the point's again (the load's values are the first point's only), with and without
 * mbl_load_options.forward_jacobian; the values a point hands on (mbl_point.jac_memo) give the same
 * linear model, bit for bit, as the linearization's own evaluation at the point; and they are not
 * used at another point or with another model (the same file loaded again). Observed through the
 * evaluations themselves (model_set_jac_observer). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/mblin.h"
#include "model/model_internal.h"
#include "fixture.h"

#define MAXREC 512

/* every evaluation seen: the model's serial and a copy of its symbols */
typedef struct recorder {
    int n, dup, overflow;
    int dup_of, dup_at; /* the last repeat: evaluation dup_at (0-based) at dup_of's symbols */
    int loading;        /* evaluations now are the load's (the mass check's) */
    int of_load[MAXREC];
    int dup_load;       /* repeats of a load's evaluation (the first point takes its values, later
                           methods at the file's configuration evaluate there again) */
    unsigned long long serial[MAXREC];
    int nsym[MAXREC];
    double *syms[MAXREC];
} recorder;

static void observe(void *ctx, const mbl_model *md, const double *syms)
{
    recorder *r = ctx;
    unsigned long long s = model_serial(md);
    for (int i = 0; i < r->n; i++)
        if (r->serial[i] == s && r->nsym[i] == md->nsym && !memcmp(r->syms[i], syms, (size_t)md->nsym * sizeof *syms))
            r->dup++, r->dup_of = i, r->dup_at = r->n, r->dup_load += r->of_load[i];
    if (r->n == MAXREC) {
        r->overflow = 1;
        return;
    }
    r->serial[r->n] = s, r->nsym[r->n] = md->nsym, r->of_load[r->n] = r->loading;
    r->syms[r->n] = malloc(sizeof *syms * ((size_t)md->nsym + 1));
    memcpy(r->syms[r->n++], syms, sizeof *syms * (size_t)md->nsym);
}

static void forget(recorder *r)
{
    for (int i = 0; i < r->n; i++) free(r->syms[i]);
    memset(r, 0, sizeof *r);
}

static int same_lin(const mbl_linear *a, const mbl_linear *b)
{
    if (a->nx != b->nx || a->nu != b->nu || a->ny != b->ny) return 0;
    size_t nx = (size_t)a->nx, nu = (size_t)a->nu, ny = (size_t)a->ny;
    return !memcmp(a->A, b->A, nx * nx * sizeof *a->A) && !memcmp(a->B, b->B, nx * nu * sizeof *a->B) &&
           !memcmp(a->C, b->C, ny * nx * sizeof *a->C) && !memcmp(a->D, b->D, ny * nu * sizeof *a->D);
}

static mbl_model *load(const char *file, int fwd) { return fixture_model_fwd(file, NULL, NULL, fwd); }

static const char *const methods[] = {"augmented", "partition", "nullspace", "projection", "descriptor"};
#define NMETHOD ((int)(sizeof methods / sizeof *methods))

/* linearize by method at pt; NULL on failure (said) */
static mbl_linear *lin_at(const char *file, const mbl_model *md, const mbl_point *pt, const char *method)
{
    mbl_lin_options lo;
    mbl_lin_options_default(&lo);
    lo.method = method;
    mbl_linear *lin = NULL;
    mbl_status st;
    int rc = mbl_linearize(md, pt, &lo, &lin, &st);
    CHECK_MSG(rc == 0, "%s, %s: %s", file, method, st.msg);
    return rc ? NULL : lin;
}

/* expect_extra: the evaluations of the one-shot run (load, point, linearizations) less the
 * point's Newton iterations: 2 at an equilibrium (the mass check's, reused at the guess
 * by the initial multipliers; one per Newton iteration and one at the solution, handed on), or -1
 * where the path has more subproblems */
static void one_shot(const char *file, int fwd, int expect_extra)
{
    recorder *r = calloc(1, sizeof *r);
    model_set_jac_observer(observe, r);
    r->loading = 1;
    mbl_model *md = load(file, fwd), *other = NULL;
    r->loading = 0;
    mbl_point *pt = NULL;
    mbl_linear *lin[NMETHOD] = {0}, *own = NULL, *moved = NULL, *moved_own = NULL, *again = NULL;
    double *q = NULL;
    mbl_status st;
    if (!md) goto done;
    int ok = mbl_operating_point(md, NULL, &pt, &st) == 0;
    CHECK_MSG(ok, "%s: %s", file, st.msg);
    if (!ok) goto done;
    CHECK_MSG(pt->jac_memo != NULL, "%s (forward %d): the point keeps no Jacobian", file, fwd);
    lin[0] = lin_at(file, md, pt, methods[0]);
    int n_shot = r->n; /* the one-shot run: load, point, the default method */
    CHECK_MSG(r->dup == 0 && !r->overflow, "%s (forward %d): %d of %d evaluations of the one-shot run repeat one at the "
              "same symbols (the last: evaluation %d at %d's)", file, fwd, r->dup, r->n, r->dup_at, r->dup_of);
    /* the others (projection evaluates also at other multipliers and velocities: other symbols) */
    for (int k = 1; k < NMETHOD; k++) lin[k] = lin_at(file, md, pt, methods[k]);
    if (expect_extra >= 0)
        CHECK_MSG(n_shot == pt->iterations + expect_extra, "%s (forward %d): %d evaluations, %d Newton iterations", file,
                  fwd, n_shot, pt->iterations);
    printf("%s (forward %d): %d Jacobian evaluations (load, point, augmented), %d Newton iterations; %d with %d more "
           "methods\n", file, fwd, n_shot, pt->iterations, r->n, NMETHOD - 1);
    CHECK_MSG(r->dup == r->dup_load && !r->overflow, "%s (forward %d): %d of %d evaluations repeat one of the point "
              "at the same symbols (the last: evaluation %d at %d's)", file, fwd, r->dup - r->dup_load, r->n, r->dup_at,
              r->dup_of);
    /* the reference: the linearization's own evaluation at the point (no values handed on) */
    mbl_point bare = *pt;
    bare.jac_memo = NULL;
    int n0 = r->n;
    own = lin_at(file, md, &bare, "augmented");
    CHECK_MSG(r->n == n0 + 1, "%s: without the point's values, %d evaluations", file, r->n - n0);
    if (own && lin[0]) CHECK_MSG(same_lin(lin[0], own), "%s (forward %d): the values handed on change A, B, C or D", file, fwd);
    /* another point with the values of this one attached: not used */
    mbl_model_info info;
    mbl_model_get_info(md, &info);
    q = malloc(sizeof *q * ((size_t)info.ncoord + 1));
    memcpy(q, pt->q, sizeof *q * (size_t)info.ncoord);
    q[0] += 1e-3;
    mbl_point shifted = *pt;
    shifted.q = q;
    n0 = r->n;
    moved = lin_at(file, md, &shifted, "augmented");
    CHECK_MSG(r->n == n0 + 1, "%s: at another point %d evaluations", file, r->n - n0);
    shifted.jac_memo = NULL;
    moved_own = lin_at(file, md, &shifted, "augmented");
    if (moved && moved_own) CHECK_MSG(same_lin(moved, moved_own), "%s: another point's values were used", file);
    /* the same file loaded again (another model, the same symbols): its own evaluation */
    r->loading = 1;
    other = load(file, !fwd);
    r->loading = 0;
    n0 = r->n;
    if (other) again = lin_at(file, other, pt, "augmented");
    CHECK_MSG(!other || r->n == n0 + 1, "%s: with another model %d evaluations", file, r->n - n0);
done:
    model_set_jac_observer(NULL, NULL);
    forget(r);
    free(r);
    free(q);
    for (int k = 0; k < NMETHOD; k++) mbl_linear_free(lin[k]);
    mbl_linear_free(own), mbl_linear_free(moved), mbl_linear_free(moved_own), mbl_linear_free(again);
    mbl_point_free(pt);
    mbl_model_free(other);
    mbl_model_free(md);
}

TEST(one_evaluation_per_point)
{
    for (int fwd = 0; fwd <= 1; fwd++) {
        one_shot("examples/fourbar_N5.yaml", fwd, 2);
        one_shot("examples/fourbar_N20_damped.yaml", fwd, 2);
        one_shot("examples/whipple_bicycle_nonlinear.yaml", fwd, -1);
        one_shot("examples/rotating_pendulum_steady.yaml", fwd, -1);
        one_shot("examples/nh_sleigh.yaml", fwd, -1);
        one_shot("examples/ode/dc_motor_pendulum.yaml", fwd, -1);
        one_shot("examples/rolling_disc.yaml", fwd, -1);
    }
}

/* A point made by the caller (jac_memo NULL) and one whose model parameters changed since: evaluated. */
TEST(parameter_changed)
{
    recorder *r = calloc(1, sizeof *r);
    model_set_jac_observer(observe, r);
    mbl_model *md = load("examples/fourbar_N5_damped.yaml", 0);
    mbl_point *pt = NULL;
    mbl_linear *a = NULL, *b = NULL;
    mbl_status st;
    if (md && mbl_operating_point(md, NULL, &pt, &st) == 0) {
        int p = -1;
        mbl_model_info info;
        mbl_model_get_info(md, &info);
        for (int i = 0; i < info.nparam && p < 0; i++)
            if (mbl_model_set_param(md, i, mbl_model_param_value(md, i) * 1.5, &st) == 0) p = i;
        CHECK_MSG(p >= 0, "no parameter of the damped four-bar changes in place");
        int n0 = r->n;
        a = lin_at("fourbar_N5_damped", md, pt, "augmented");
        CHECK_MSG(r->n == n0 + 1, "after mbl_model_set_param, %d evaluations", r->n - n0);
        mbl_point bare = *pt;
        bare.jac_memo = NULL;
        b = lin_at("fourbar_N5_damped", md, &bare, "augmented");
        if (a && b) CHECK_MSG(same_lin(a, b), "the values from before mbl_model_set_param were used");
    } else {
        CHECK_MSG(0, "fourbar_N5_damped: %s", md ? st.msg : "not loaded");
    }
    model_set_jac_observer(NULL, NULL);
    forget(r);
    free(r);
    mbl_linear_free(a), mbl_linear_free(b);
    mbl_point_free(pt);
    mbl_model_free(md);
}

int main(void)
{
    RUN(one_evaluation_per_point);
    RUN(parameter_changed);
    return test_summary("jac_once");
}
