/* The one-shot augmented linearization (mbl_linearize) against a sweep's first point
 * (mbl_lin_work_new), and the one-shot by two routes of the evaluator (src/lin/eval.c): the
 * one-shot reads the point's Jacobian values in place (lin_eval_init_lean), and a point without
 * kept values (jac_memo NULL) is evaluated by the one-shot itself with work sized on demand; those
 * two are equal bit for bit.
 *
 * A one-shot whose pattern allows it factors the kinematic system only (the sweep's
 * one-factorization path, augmented.c oneshot_direct; lin->cond is then the kinematic system's
 * estimate), while a sweep's first point factors both matrices: there the two agree to 1e-10 of
 * each matrix's largest entry, and A's eigenvalues to 1e-10 of the largest modulus; nonholonomic
 * models take it too since session 49 (the bicycles, the rolling disc). Where the
 * one-shot takes the augmented matrix too (a model with ode states) it equals the sweep's first
 * point bit for bit, as before. The one-shot also drops
 * its triplets, the kinematic matrix and the copies inside its KLU factorizations as soon as they
 * are no longer needed (mbla_klu_solve_only): on the 300-loop four-bar the workspace's arrays are
 * each on their own (above AUG_ONE_BLOCK), so those releases run. Models with outputs: the slider
 * pendulum and the Whipple bicycle (the outputs' tape is evaluated on the lean evaluator's work). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/la.h"
#include "mblin/mblin.h"
#include "fixture.h"
#include "test.h"

#define AGREE 1e-10

static void same(const char *path, const char *route, const char *what, const double *a, const double *b, size_t n)
{
    int eq = n == 0 || !memcmp(a, b, n * sizeof *a);
    CHECK_MSG(eq, "%s: %s: %s differs", path, route, what);
}

/* a and b within AGREE of the larger one's largest entry */
static void close_to(const char *path, const char *what, const double *a, const double *b, size_t n)
{
    double big = 0, diff = 0;
    for (size_t i = 0; i < n; i++) {
        big = fmax(big, fmax(fabs(a[i]), fabs(b[i])));
        diff = fmax(diff, fabs(a[i] - b[i]));
    }
    CHECK_MSG(diff <= AGREE * big || (big == 0 && diff == 0), "%s: %s: one-shot and sweep differ by %.3g of %.3g", path,
              what, diff, big);
}

static int sizes_equal(const mbl_linear *x, const mbl_linear *y)
{
    CHECK_EQ_INT(x->nx, y->nx);
    CHECK_EQ_INT(x->nu, y->nu);
    CHECK_EQ_INT(x->ny, y->ny);
    CHECK_EQ_INT(x->z0, y->z0);
    CHECK_EQ_INT(x->z1, y->z1);
    return x->nx == y->nx && x->nu == y->nu && x->ny == y->ny && x->z0 == y->z0 && x->z1 == y->z1;
}

/* The matrices of a linear model, in x and y: 10 of them */
typedef struct field {
    const char *name;
    const double *a, *b;
    size_t n;
} field;

static void fields_of(const mbl_linear *x, const mbl_linear *y, field *f)
{
    size_t nx = (size_t)x->nx, nu = (size_t)x->nu, ny = (size_t)x->ny, z0 = (size_t)x->z0, z1 = (size_t)x->z1;
    size_t n = (size_t)x->n;
    f[0] = (field){"A", x->A, y->A, nx * nx}, f[1] = (field){"B", x->B, y->B, nx * nu};
    f[2] = (field){"C", x->C, y->C, ny * nx}, f[3] = (field){"D", x->D, y->D, ny * nu};
    f[4] = (field){"M-hat", x->M, y->M, z1 * z1}, f[5] = (field){"C-hat", x->Cd, y->Cd, z1 * z1};
    f[6] = (field){"K-hat", x->K, y->K, z1 * z0}, f[7] = (field){"F", x->F, y->F, z1 * nu};
    f[8] = (field){"q_S", x->q_S, y->q_S, n * z0}, f[9] = (field){"v_W", x->v_W, y->v_W, n * z1};
}

static void compare_bits(const char *path, const char *route, const mbl_linear *x, const mbl_linear *y)
{
    field f[10];
    if (!sizes_equal(x, y)) return;
    fields_of(x, y, f);
    for (int i = 0; i < 10; i++) same(path, route, f[i].name, f[i].a, f[i].b, f[i].n);
    same(path, route, "the condition estimate", &x->cond, &y->cond, 1);
}

/* Below this times the largest modulus an eigenvalue of A is in the zero cluster: a nonholonomic
 * model's zero eigenvalue is defective (the mechanism bicycle's: a Jordan block), and a change of
 * delta in A moves it by about delta^(1/k), 2e-8 of 14.1 between the two routes, not 1e-10 */
#define ZERO_CLUSTER 1e-6

/* A's eigenvalues: each of x's matched to the nearest unused one of y, within AGREE of the largest
 * modulus, those of the zero cluster within ZERO_CLUSTER */
static void eigs_close(const char *path, const mbl_linear *x, const mbl_linear *y)
{
    int n = x->nx;
    double *w = calloc(4 * (size_t)n + 1, sizeof *w);
    char *used = calloc((size_t)n + 1, 1);
    mbl_status st;
    int ok = w && used && !mbla_eig(n, x->A, n, w, w + n, NULL, 1, NULL, 1, &st) &&
             !mbla_eig(n, y->A, n, w + 2 * n, w + 3 * n, NULL, 1, NULL, 1, &st);
    CHECK_MSG(ok, "%s: eigenvalues", path);
    double big = 0, worst = 0, worst_zero = 0;
    for (int i = 0; ok && i < n; i++) big = fmax(big, hypot(w[i], w[n + i]));
    for (int i = 0; ok && i < n; i++) {
        int best = -1;
        double d = INFINITY;
        for (int j = 0; j < n; j++) {
            double e = hypot(w[i] - w[2 * n + j], w[n + i] - w[3 * n + j]);
            if (!used[j] && e < d) d = e, best = j;
        }
        if (best >= 0) used[best] = 1;
        if (hypot(w[i], w[n + i]) <= ZERO_CLUSTER * big) worst_zero = fmax(worst_zero, d);
        else worst = fmax(worst, d);
    }
    CHECK_MSG(!ok || worst <= AGREE * big, "%s: eigenvalues of A differ by %.3g of %.3g", path, worst, big);
    CHECK_MSG(!ok || worst_zero <= ZERO_CLUSTER * big, "%s: zero eigenvalues of A differ by %.3g of %.3g", path,
              worst_zero, big);
    free(w), free(used);
}

static void compare_close(const char *path, const mbl_linear *x, const mbl_linear *y)
{
    field f[10];
    if (!sizes_equal(x, y)) return;
    fields_of(x, y, f);
    for (int i = 0; i < 10; i++) close_to(path, f[i].name, f[i].a, f[i].b, f[i].n);
    eigs_close(path, x, y);
}


/* direct: 1 the one-shot must take the one-factorization path (its condition figure, the kinematic
 * system's, differs from the sweep's first point's, the augmented matrix's), 0 it must not (equal
 * bit for bit), -1 either */
static void check_model_text(const char *path, const char *text, int want_outputs, int direct)
{
    mbl_status st;
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_lin_work *w = NULL;
    mbl_linear *sweep = NULL, *oneshot = NULL, *evaluated = NULL;
    int ok = (text ? mbl_model_load_string(text, strlen(text), path, NULL, 0, &md, &st)
                   : mbl_model_load_file(path, NULL, 0, &md, &st)) == 0 &&
             mbl_operating_point(md, NULL, &pt, &st) == 0;
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
    compare_bits(path, "the one-shot evaluating against its point's values in place", evaluated, oneshot);
    int took = oneshot->cond != sweep->cond;
    if (direct >= 0) CHECK_MSG(took == direct, "%s: the one-shot %s the one-factorization path", path, took ? "took" : "did not take");
    if (took) compare_close(path, oneshot, sweep);
    else compare_bits(path, "the one-shot against the sweep's first point", oneshot, sweep);
done:
    mbl_linear_free(sweep), mbl_linear_free(oneshot), mbl_linear_free(evaluated);
    mbl_lin_work_free(w);
    mbl_point_free(pt);
    mbl_model_free(md);
}

static void check_model(const char *path, int want_outputs, int direct)
{
    check_model_text(path, NULL, want_outputs, direct);
}

static void check_chain(int N)
{
    char name[32], text[8192];
    snprintf(name, sizeof name, "chain%d", N);
    fixture_chain_text(N, text, sizeof text);
    check_model_text(name, text, 0, 1);
}

/* A force reading a multiplier: the one-shot takes the augmented matrix (no one-factorization
 * path), whose triplets' values are taken when it is assembled (aug_assemble). The block on an
 * arm turning at Omega, a spring k towards r0, friction -muf lambda der(r): at relative rest
 * lambda = 0 and A = [0 1; -(k/m - Omega^2) 0] (column-major), known without the library. */
static const char arm_text[] =
    "model: dae\n"
    "name: block on a rotating arm, friction of the drive's multiplier\n"
    "parameters: {m: 1.5, k: 40, r0: 0.5, Omega: 3, muf: 0.2}\n"
    "coordinates: {r: 0.6, theta: 0}\n"
    "velocities: {theta: Omega}\n"
    "kinetic_energy: \"0.5*m*(der(r)^2 + r^2*der(theta)^2)\"\n"
    "potential_energy: \"0.5*k*(r - r0)^2\"\n"
    "constraints: {drive: \"theta - Omega*t\"}\n"
    "forces: {r: \"-muf*lambda(drive)*der(r)\"}\n"
    "linearize: {at: steady}\n";

TEST(arm_multiplier_force)
{
    check_model_text("arm", arm_text, 0, 0);
    mbl_status st;
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_linear *lin = NULL;
    int ok = mbl_model_load_string(arm_text, strlen(arm_text), "arm", NULL, 0, &md, &st) == 0 &&
             mbl_operating_point(md, NULL, &pt, &st) == 0 && mbl_linearize(md, pt, NULL, &lin, &st) == 0;
    CHECK_MSG(ok, "arm: %s", st.msg);
    if (ok) {
        double w2 = 40 / 1.5 - 9.0;
        CHECK_EQ_INT(lin->nx, 2);
        CHECK_MSG(fabs(lin->A[0]) <= 1e-12 && fabs(lin->A[1] + w2) <= 1e-12 * w2 && fabs(lin->A[2] - 1) <= 1e-12 &&
                      fabs(lin->A[3]) <= 1e-12,
                  "arm: A = [%.17g %.17g; %.17g %.17g]", lin->A[0], lin->A[2], lin->A[1], lin->A[3]);
    }
    mbl_linear_free(lin);
    mbl_point_free(pt);
    mbl_model_free(md);
}

TEST(fourbar_N300) { check_model("examples/fourbar_N300.yaml", 0, 1); }
TEST(fourbar_N5_damped) { check_model("examples/fourbar_N5_damped.yaml", 0, 1); }
TEST(chain2) { check_chain(2); }
TEST(chain8) { check_chain(8); }
TEST(slider_pendulum_outputs) { check_model("examples/slider_pendulum.yaml", 1, -1); }
TEST(whipple_bicycle_outputs) { check_model("examples/whipple_bicycle.yaml", 1, 1); } /* nonholonomic */
TEST(rigid_rotor) { check_model("examples/mech/rigid_rotor.yaml", 0, -1); }
TEST(spatial_fourbar) { check_model("examples/mech/spatial_fourbar.yaml", 0, -1); }
TEST(rolling_disc) { check_model("examples/rolling_disc.yaml", 0, 1); }                 /* nonholonomic */
TEST(mech_bicycle) { check_model("examples/mech/whipple_bicycle.yaml", 1, 1); } /* rolling wheels, held velocities */
TEST(dc_motor_pendulum_ode) { check_model("examples/ode/dc_motor_pendulum.yaml", 0, 0); } /* ode states */

int main(void)
{
    RUN(arm_multiplier_force);
    RUN(fourbar_N300);
    RUN(fourbar_N5_damped);
    RUN(chain2);
    RUN(chain8);
    RUN(slider_pendulum_outputs);
    RUN(whipple_bicycle_outputs);
    RUN(rigid_rotor);
    RUN(spatial_fourbar);
    RUN(rolling_disc);
    RUN(mech_bicycle);
    RUN(dc_motor_pendulum_ode);
    return test_summary("lin_oneshot");
}
