/* The dense path of a sweep for an unconstrained tree (src/lin/relin_dense.c; issue 34, item 3):
 * a Cholesky factorization of the mass matrix instead of the kinematic system or the augmented
 * matrix (KLU). At points with every coordinate moved and nonzero velocities, its A, B, C, D,
 * M-hat, C-hat, K-hat, F, q_S, v_W and the eigenvalues of A equal those of the general path (the
 * same workspace made with dense_tree = MBL_DENSE_TREE_OFF) to DENSE_TOL of the matrix's largest
 * entry (of the largest eigenvalue's modulus), on URDF chains of 2, 7 and 20 links, the 7-joint arm
 * and the two-link arm of examples/urdf (offsets, rotated inertials, lumped fixed joints) and a
 * 30-joint humanoid-like tree. A fresh one-shot mbl_linearize agrees too (its own scaling and
 * factorization). Where the mass matrix is not symmetric (a force of an acceleration) or not
 * positive definite at the point, the general path answers (the same results). With skip_outputs
 * a sweep forms the same A and B (bit for bit) and no C, D (zero), on either path. Where the
 * text rows' partials are constants, the tree's entries go straight into the dense matrices
 * (aug_dense_eval): every matrix of the result bit for bit that of the Jacobian's values gathered
 * (the same workspace with w->ddirect off). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lin/augmented_internal.h"
#include "model/model_view.h"
#include "mblin/la.h"
#include "mblin/mblin.h"
#include "test.h"
#include "fixture.h"

#define DENSE_TOL 1e-12
/* The 20-link chain's A and B at its moving points: the general path factors M (condition about 1e5
 * here), the dense path takes the tree's own M^-1 (src/model/terms/rtree_minv.c), and the two differ
 * by the general path's error: at the second point 1.08e-12, where the dense path is 2.1e-14 and
 * 1.5e-14 from a 40-digit reference at the two points (tests/lin/chain_reference.py's linearize at
 * the same q and v; test_tree_accuracy checks the dense path against such references). */
#define DENSE_TOL_CHAIN20 1e-11

/* max |a - b| over max |b| */
static double rel_diff(const double *a, const double *b, size_t n)
{
    double d = 0, s = 0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs(a[i] - b[i]);
        if (!(e <= d)) d = isnan(e) ? INFINITY : e;
        if (fabs(b[i]) > s) s = fabs(b[i]);
    }
    return s > 0 ? d / s : d;
}

static double g_worst; /* the largest difference seen, for the report */

static void compare(const char *name, const char *what, const double *a, const double *b, size_t n, double tol)
{
    double r = rel_diff(a, b, n);
    if (r > g_worst) g_worst = r;
    if (getenv("RELIN_VERBOSE")) fprintf(stderr, "%s %s %.3g\n", name, what, r);
    if (!(r <= tol)) fprintf(stderr, "%s: %s differs between the dense and the general path by %.3g\n", name, what, r);
    CHECK(r <= tol);
}

/* the eigenvalues of both A's: each of a's matched to the nearest of b's, relative to the largest modulus */
static void compare_eigs(const char *name, const double *A1, const double *A2, int nx)
{
    double *e = malloc(sizeof *e * 4 * (size_t)nx);
    double *r1 = e, *i1 = e + nx, *r2 = e + 2 * nx, *i2 = e + 3 * nx;
    CHECK_EQ_INT(mbla_eig(nx, A1, nx, r1, i1, NULL, 1, NULL, 1, NULL), 0);
    CHECK_EQ_INT(mbla_eig(nx, A2, nx, r2, i2, NULL, 1, NULL, 1, NULL), 0);
    double big = 0, worst = 0;
    for (int k = 0; k < nx; k++) big = fmax(big, hypot(r2[k], i2[k]));
    for (int k = 0; k < nx; k++) {
        double best = INFINITY;
        for (int l = 0; l < nx; l++) best = fmin(best, hypot(r1[k] - r2[l], i1[k] - i2[l]));
        worst = fmax(worst, best);
    }
    double r = big > 0 ? worst / big : worst;
    if (getenv("RELIN_VERBOSE")) fprintf(stderr, "%s eigenvalues %.3g (largest modulus %.4g)\n", name, r, big);
    if (!(r <= DENSE_TOL)) fprintf(stderr, "%s: eigenvalues differ by %.3g of the largest\n", name, r);
    CHECK(r <= DENSE_TOL);
    free(e);
}

static void compare_all(const char *name, const mbl_linear *a, const mbl_linear *b, double tol)
{
    size_t nx = (size_t)a->nx, nu = (size_t)a->nu, ny = (size_t)a->ny, n = (size_t)a->n;
    size_t z0 = (size_t)a->z0, z1 = (size_t)a->z1;
    compare(name, "A", a->A, b->A, nx * nx, tol);
    compare(name, "B", a->B, b->B, nx * nu, tol);
    compare(name, "C", a->C, b->C, ny * nx, tol);
    compare(name, "D", a->D, b->D, ny * nu, tol);
    compare(name, "M-hat", a->M, b->M, z1 * z1, tol);
    compare(name, "C-hat", a->Cd, b->Cd, z1 * z1, tol);
    compare(name, "K-hat", a->K, b->K, z1 * z0, tol);
    compare(name, "F", a->F, b->F, z1 * nu, tol);
    compare(name, "q_S", a->q_S, b->q_S, n * z0, tol);
    compare(name, "v_W", a->v_W, b->v_W, n * z1, tol);
}

/* The workspace at the model's point with the dense path (expected: dense) and with the general
 * path; both re-linearized at points with every coordinate moved by dq (alternating signs,
 * growing along the tree) and velocities vq, then at the first point again. */
/* A, B, C, D of l copied into s[0] .. s[3] (one allocation at s[0]), and compared bit for bit */
static void history_save(const mbl_linear *l, double **s)
{
    size_t nx = (size_t)l->nx, nu = (size_t)l->nu, ny = (size_t)l->ny;
    size_t len[4] = {nx * nx, nx * nu, ny * nx, ny * nu};
    const double *src[4] = {l->A, l->B, l->C, l->D};
    s[0] = malloc(sizeof *s[0] * (len[0] + len[1] + len[2] + len[3] + 1));
    for (int t = 0; t < 4; t++) {
        if (t) s[t] = s[t - 1] + len[t - 1];
        if (s[0]) memcpy(s[t], src[t], len[t] * sizeof *s[t]);
    }
}

static int history_same(const mbl_linear *l, double *const *s)
{
    size_t nx = (size_t)l->nx, nu = (size_t)l->nu, ny = (size_t)l->ny;
    return s[0] && memcmp(l->A, s[0], nx * nx * sizeof *s[0]) == 0 && memcmp(l->B, s[1], nx * nu * sizeof *s[0]) == 0 &&
           memcmp(l->C, s[2], ny * nx * sizeof *s[0]) == 0 && memcmp(l->D, s[3], ny * nu * sizeof *s[0]) == 0;
}

/* the dense path's way to M^-1 in check_model's workspaces (MBL_DENSE_TREE_AUTO: a tree's own) */
static int g_dense_tree = MBL_DENSE_TREE_AUTO;
/* how many models took the tree's entries straight into the dense matrices (w->ddirect) */
static int g_direct;

/* the ten matrices of a and b bit for bit the same */
static int same_bits(const mbl_linear *a, const mbl_linear *b)
{
    size_t nx = (size_t)a->nx, nu = (size_t)a->nu, ny = (size_t)a->ny, n = (size_t)a->n;
    size_t z0 = (size_t)a->z0, z1 = (size_t)a->z1, e = sizeof *a->A;
    return !memcmp(a->A, b->A, nx * nx * e) && !memcmp(a->B, b->B, nx * nu * e) && !memcmp(a->C, b->C, ny * nx * e) &&
           !memcmp(a->D, b->D, ny * nu * e) && !memcmp(a->M, b->M, z1 * z1 * e) && !memcmp(a->Cd, b->Cd, z1 * z1 * e) &&
           !memcmp(a->K, b->K, z1 * z0 * e) && !memcmp(a->F, b->F, z1 * nu * e) && !memcmp(a->q_S, b->q_S, n * z0 * e) &&
           !memcmp(a->v_W, b->v_W, n * z1 * e);
}

static void check_model(const char *name, mbl_model *md, double dq, double vq, int dense, double tol)
{
    mbl_status st;
    mbl_point *p0 = NULL, *p1 = NULL, *p2 = NULL;
    mbl_lin_work *wd = NULL, *wg = NULL, *ws[2] = {NULL, NULL}, *wj = NULL;
    mbl_linear *ld = NULL, *lg = NULL, *fresh = NULL, *ls[2] = {NULL, NULL}, *lj = NULL;
    mbl_lin_options off, skip[2];
    mbl_lin_options_default(&off);
    off.dense_tree = MBL_DENSE_TREE_OFF;
    skip[0] = skip[1] = off;
    skip[0].dense_tree = g_dense_tree;
    skip[0].skip_outputs = skip[1].skip_outputs = 1;
    int ok = mbl_operating_point(md, NULL, &p0, &st) == 0;
    mbl_model_info info;
    mbl_model_get_info(md, &info);
    int n = info.ncoord;
    double *q = malloc(sizeof *q * 2 * (size_t)n), *v = q + n, *saved[4] = {NULL, NULL, NULL, NULL};
    for (int k = 0; ok && k < 2; k++) {
        for (int i = 0; i < n; i++) {
            double s = (i % 2 ? -1.0 : 1.0) * (1.0 + 0.37 * i / n) * (k ? -0.5 : 1.0);
            q[i] = p0->q[i] + dq * s;
            v[i] = vq * s * (1 + (i % 3));
        }
        mbl_opoint_options po;
        mbl_opoint_options_default(&po);
        po.at = MBL_AT_GIVEN;
        po.q = q;
        po.v = v;
        ok = mbl_operating_point(md, &po, k ? &p2 : &p1, &st) == 0;
    }
    free(q);
    mbl_lin_options dopt;
    mbl_lin_options_default(&dopt);
    dopt.dense_tree = g_dense_tree;
    if (ok) ok = mbl_lin_work_new(md, p0, &dopt, &wd, &ld, &st) == 0 && mbl_lin_work_new(md, p0, &off, &wg, &lg, &st) == 0 &&
                 mbl_lin_work_new(md, p0, &skip[0], &ws[0], &ls[0], &st) == 0 &&
                 mbl_lin_work_new(md, p0, &skip[1], &ws[1], &ls[1], &st) == 0 &&
                 mbl_lin_work_new(md, p0, &dopt, &wj, &lj, &st) == 0;
    if (!ok) fprintf(stderr, "%s: %s\n", name, st.msg);
    CHECK(ok);
    if (!ok) goto done;
    CHECK_EQ_INT(wd->dense, dense);
    CHECK_EQ_INT(wg->dense, 0);
    /* the tree's entries straight into the dense matrices (relin_dense.c, aug_dense_eval) against
     * the Jacobian's values gathered into them (wj): bit for bit */
    g_direct += wd->ddirect;
    if (getenv("RELIN_VERBOSE")) fprintf(stderr, "%s: in place %d\n", name, wd->ddirect);
    CHECK(!wd->ddirect || (wd->dminv && model_mass_dense_ok(md)));
    wj->ddirect = 0;
    for (int k = 0; k < 3; k++) {
        const mbl_point *pt = k == 0 ? p1 : k == 1 ? p2 : p0;
        ok = mbl_relinearize(wd, pt, ld, &st) == 0 && mbl_relinearize(wg, pt, lg, &st) == 0 &&
             mbl_linearize(md, pt, NULL, &fresh, &st) == 0;
        if (!ok) fprintf(stderr, "%s: %s\n", name, st.msg);
        CHECK(ok);
        if (!ok) break;
        compare_all(name, ld, lg, tol);
        compare_eigs(name, ld->A, lg->A, ld->nx);
        /* at the point without its Jacobian's values (as bench/bench_relin.c's own evaluation):
         * made in place by wd where it can, gathered by wj, bit for bit the same */
        mbl_point *ptw = (mbl_point *)pt;
        void *memo = ptw->jac_memo;
        ptw->jac_memo = NULL;
        CHECK_EQ_INT(mbl_relinearize(wd, pt, ld, &st), 0);
        CHECK_EQ_INT(mbl_relinearize(wj, pt, lj, &st), 0);
        ptw->jac_memo = memo;
        CHECK_MSG(same_bits(ld, lj), "%s: point %d: the dense matrices made in place differ", name, k);
        CHECK(wd->ddone == wd->ddirect && !wj->ddone);
        compare_all(name, ld, lg, tol);
        /* skip_outputs: the same A and B (the same operations), C = D = 0, on either path */
        for (int s = 0; s < 2; s++) {
            const mbl_linear *ref = s ? lg : ld, *l = ls[s];
            size_t nx = (size_t)l->nx, ny = (size_t)l->ny, nu = (size_t)l->nu;
            CHECK_EQ_INT(mbl_relinearize(ws[s], pt, ls[s], &st), 0);
            CHECK(memcmp(l->A, ref->A, nx * nx * sizeof *l->A) == 0 && memcmp(l->B, ref->B, nx * nu * sizeof *l->B) == 0);
            double cd = 0;
            for (size_t e = 0; e < ny * nx; e++) cd += fabs(l->C[e]);
            for (size_t e = 0; e < ny * nu; e++) cd += fabs(l->D[e]);
            CHECK(cd == 0.0);
        }
        /* the one-shot linearization: another scaling and factorization (and its own treatment of a
         * moving point is the same for coordinate states) */
        compare_all(name, ld, fresh, 1e-10);
        mbl_linear_free(fresh);
        fresh = NULL;
        if (k == 0) history_save(ld, saved);
    }
    /* the first point again after the others: bit for bit the same (nothing of an earlier point,
     * such as the inverse left in M's buffer or a body's subtree sums, enters a later one) */
    if (ok) {
        CHECK_EQ_INT(mbl_relinearize(wd, p1, ld, &st), 0);
        CHECK(history_same(ld, saved));
    }
done:
    free(saved[0]);
    mbl_linear_free(fresh);
    mbl_linear_free(ld), mbl_linear_free(lg), mbl_linear_free(ls[0]), mbl_linear_free(ls[1]), mbl_linear_free(lj);
    mbl_lin_work_free(wd), mbl_lin_work_free(wg), mbl_lin_work_free(ws[0]), mbl_lin_work_free(ws[1]);
    mbl_lin_work_free(wj);
    mbl_point_free(p0), mbl_point_free(p1), mbl_point_free(p2);
}

static void check_file(const char *path, double dq, double vq, int dense)
{
    mbl_status st;
    mbl_model *md = NULL;
    int ok = mbl_model_load_file(path, NULL, 0, &md, &st) == 0;
    if (!ok) fprintf(stderr, "%s: %s\n", path, st.msg);
    CHECK(ok);
    if (ok) check_model(path, md, dq, vq, dense, DENSE_TOL);
    mbl_model_free(md);
}

/* the N-link spatial chain of bench/chain_urdf.py (the same text) */
static void check_chain(int N)
{
    size_t len = 0;
    char name[32], *s = fixture_urdf_chain(N, &len, name);
    CHECK(s != NULL);
    if (!s) return;
    mbl_status st;
    mbl_model *md = NULL;
    int ok = mbl_model_load_string(s, len, name, NULL, 0, &md, &st) == 0;
    if (!ok) fprintf(stderr, "%s: %s\n", name, st.msg);
    CHECK(ok);
    if (ok) check_model(name, md, 0.2, 0.5, 1, N >= 20 ? DENSE_TOL_CHAIN20 : DENSE_TOL);
    mbl_model_free(md);
    free(s);
}

TEST(urdf_chains)
{
    check_chain(2);
    check_chain(7);
    check_chain(20);
    check_file("examples/urdf/two_link_arm.urdf", 0.3, 0.5, 1);
    check_file("examples/urdf/arm7.urdf", 0.2, 0.5, 1);
}

TEST(humanoid_tree)
{
    check_file("tests/lin/humanoid30.urdf", 0.15, 0.4, 1);
}

/* The Cholesky factorization of M in place of the tree's own M^-1 (MBL_DENSE_TREE_CHOLESKY): it
 * leaves M^-1 in M's buffer, whose entries outside M's pattern (the humanoid's branches) must be
 * zero again at the next point; the first point again bit for bit, as the others. */
TEST(cholesky_path)
{
    g_dense_tree = MBL_DENSE_TREE_CHOLESKY;
    check_file("tests/lin/humanoid30.urdf", 0.15, 0.4, 1);
    check_chain(7);
    g_dense_tree = MBL_DENSE_TREE_AUTO;
}

/* The general path where the mass matrix is not one: chosen at the first point (dense), answered
 * by the general path at points where dR/dvdot is not symmetric, or not positive definite. */
TEST(fallback)
{
    check_file("tests/lin/dense_asymmetric.yaml", 0.1, 0.3, 1);
    check_file("tests/lin/dense_indefinite.yaml", 0.1, 0.3, 1);
}

/* M = [[1, x], [x, 1]] near singular: at x = 1 - 1e-11 (reciprocal condition ~5e-12 after scaling,
 * within RELIN_DENSE_RCOND_MARGIN of rcond_min) the dense path leaves the decision to the general
 * path, which answers: the same results. (Nearer, the operating point itself has no accelerations.) */
TEST(near_singular_mass)
{
    static const char text[] = "model: dae\ncoordinates: {x: 0.5, y: 0}\n"
                               "mass_matrix: {x: {x: 1, y: \"x\"}, y: {y: 1}}\n"
                               "potential_energy: \"0.5*x^2 + 0.5*y^2 + 0.1*x*y\"\nlinearize: {at: given}\n";
    mbl_status st;
    mbl_model *md = NULL;
    mbl_point *p0 = NULL, *p1 = NULL;
    mbl_lin_work *wd = NULL, *wg = NULL;
    mbl_linear *ld = NULL, *lg = NULL;
    mbl_lin_options off;
    mbl_lin_options_default(&off);
    off.dense_tree = MBL_DENSE_TREE_OFF;
    int ok = mbl_model_load_string(text, sizeof text - 1, "near_singular.yaml", NULL, 0, &md, &st) == 0 &&
             mbl_operating_point(md, NULL, &p0, &st) == 0 && mbl_lin_work_new(md, p0, NULL, &wd, &ld, &st) == 0 &&
             mbl_lin_work_new(md, p0, &off, &wg, &lg, &st) == 0;
    if (!ok) fprintf(stderr, "near_singular: %s\n", st.msg);
    CHECK(ok);
    for (int k = 1; ok && k < 2; k++) {
        double q[2] = {1 - 1e-11, 0}, v[2] = {0, 0};
        mbl_opoint_options po;
        mbl_opoint_options_default(&po);
        po.at = MBL_AT_GIVEN;
        po.q = q;
        po.v = v;
        mbl_point_free(p1);
        p1 = NULL;
        CHECK_EQ_INT(mbl_operating_point(md, &po, &p1, &st), 0);
        CHECK_EQ_INT(wd->dense, 1);
        int rd = mbl_relinearize(wd, p1, ld, &st), rg = mbl_relinearize(wg, p1, lg, &st);
        CHECK_EQ_INT(rd, 0);
        CHECK_EQ_INT(rg, 0);
        if (!rd && !rg) compare_all("near_singular", ld, lg, DENSE_TOL);
    }
    mbl_linear_free(ld), mbl_linear_free(lg);
    mbl_lin_work_free(wd), mbl_lin_work_free(wg);
    mbl_point_free(p0), mbl_point_free(p1);
    mbl_model_free(md);
}

static void count_jac(void *ctx, const mbl_model *md, const double *syms)
{
    (void)md, (void)syms;
    ++*(int *)ctx;
}

/* A point the dense path leaves to the general path (its reciprocal condition within
 * RELIN_DENSE_RCOND_MARGIN of rcond_min, rcond_min raised here until that happens) after the
 * tree's entries went straight into the dense matrices: the general path's Jacobian values are
 * evaluated then, and the results are bit for bit those of the workspace that gathers them. */
TEST(in_place_refused)
{
    size_t len = 0;
    char name[32], *s = fixture_urdf_chain(7, &len, name);
    mbl_status st;
    mbl_model *md = NULL;
    mbl_point *p0 = NULL, *p1 = NULL;
    int ok = s && mbl_model_load_string(s, len, name, NULL, 0, &md, &st) == 0 && mbl_operating_point(md, NULL, &p0, &st) == 0;
    double q[7], v[7]; /* a point other than the workspaces' first: stale values would show */
    for (int i = 0; ok && i < 7; i++) q[i] = p0->q[i] + 0.1 * (i + 1), v[i] = 0.3 - 0.1 * i;
    mbl_opoint_options po;
    mbl_opoint_options_default(&po);
    po.at = MBL_AT_GIVEN, po.q = q, po.v = v;
    ok = ok && mbl_operating_point(md, &po, &p1, &st) == 0;
    CHECK(ok);
    int refused = 0;
    for (int e = 1; ok && e <= 16 && !refused; e++) {
        mbl_lin_options o;
        mbl_lin_options_default(&o);
        o.rcond_min = pow(10.0, -e);
        mbl_lin_work *wd = NULL, *wj = NULL;
        mbl_linear *ld = NULL, *lj = NULL;
        if (mbl_lin_work_new(md, p0, &o, &wd, &ld, &st) == 0 && mbl_lin_work_new(md, p0, &o, &wj, &lj, &st) == 0 &&
            wd->ddirect) {
            wj->ddirect = 0;
            void *memo = p1->jac_memo;
            p1->jac_memo = NULL;
            int evals = 0; /* the Jacobian's evaluations of wd's point: 2 when the general path answered */
            model_set_jac_observer(count_jac, &evals);
            int rd = mbl_relinearize(wd, p1, ld, &st);
            model_set_jac_observer(NULL, NULL);
            int rj = mbl_relinearize(wj, p1, lj, &st);
            p1->jac_memo = memo;
            CHECK_EQ_INT(rd, rj);
            CHECK(wd->ddone && (evals == 1 || evals == 2));
            refused |= !rd && evals == 2;
            if (!rd && !rj) CHECK_MSG(same_bits(ld, lj), "rcond_min 1e-%d (%d evaluations): not the same", e, evals);
        }
        mbl_linear_free(ld), mbl_linear_free(lj);
        mbl_lin_work_free(wd), mbl_lin_work_free(wj);
    }
    CHECK_MSG(refused, "no rcond_min had the dense path refuse and the general path answer");
    mbl_point_free(p0), mbl_point_free(p1);
    mbl_model_free(md);
    free(s);
}

/* constraints, or user states: never the dense path */
TEST(not_chosen)
{
    check_file("examples/spring_pendulum.yaml", 1e-2, 0.0, 0);
    check_file("examples/fourbar_N1.yaml", 1e-2, 0.0, 0);
}

int main(void)
{
    RUN(urdf_chains);
    RUN(humanoid_tree);
    RUN(cholesky_path);
    RUN(fallback);
    RUN(near_singular_mass);
    RUN(in_place_refused);
    RUN(not_chosen);
    CHECK_MSG(g_direct >= 5, "%d models took the dense matrices in place", g_direct);
    if (getenv("RELIN_VERBOSE")) fprintf(stderr, "largest difference %.3g, %d in place\n", g_worst, g_direct);
    return test_summary("relin_dense");
}
