/* The Craig-Bampton reduction (src/fe/reduce.c, spider.c) and the invariants of its basis
 * (src/fe/invariants.c) on parts built here by hand: a 3-D truss of point masses (lumped,
 * isotropic) and axial springs joining every two nodes of a grid cell (edges, face and body
 * diagonals: a stiff lattice), and a two-node bar with a consistent mass.
 *
 * Independent values: the eigenvalues of the full K, M by dense QZ (LAPACK dggev, another method
 * than the reduction's ARPACK and dsygvd), the spider's rigid constraint built here about another
 * point (its first node), the invariants as direct sums over the point masses and, for the bar, the
 * integrals of its linear shape functions in closed form.
 *
 * Measured (truss 8 x 3 x 3, 216 rows, two spiders at its ends, 12 constraint modes): the largest
 * relative error of the lowest six free-free w^2 with 2 / 4 / 8 / 16 / 32 fixed-interface modes is
 * 1.0 / 1.9e-1 / 3.7e-2 / 7.6e-3 / 4.2e-3, that of the lowest one 1.1e-2 / 9.2e-3 / 2.4e-3 / 8.9e-4 /
 * 5.0e-4 (docs/fe-reduction.md); the test asserts the bounds 1 / 0.25 / 0.05 / 0.01 / 0.006, that
 * every w^2 lies above the exact one (Rayleigh-Ritz) and that
 * each step lowers the error. */
#include "fe/fe.h"
#include "la/la_test_util.h"

#include <string.h>

/* ---- parts ---- */

static double node_mass(int i) { return 1.0 + 0.25 * ((i * 5) % 7); }

/* nx x ny x nz nodes at spacing (1, 0.8, 0.7), node (a, b, c) index a + nx (b + ny c) */
static void truss(int nx, int ny, int nz, fe_part *p)
{
    memset(p, 0, sizeof *p);
    int nn = nx * ny * nz, n = 3 * nn;
    p->nnode = nn, p->ndof = n;
    p->node_id = mbl_alloc_array((size_t)nn, sizeof(int));
    p->xyz = mbl_alloc_array((size_t)3 * nn, sizeof(double));
    p->dof_node = mbl_alloc_array((size_t)n, sizeof(int));
    p->dof_dir = mbl_alloc_array((size_t)n, 1);
    for (int i = 0; i < nn; i++) {
        p->node_id[i] = 10 + 2 * i;
        p->xyz[3 * i] = i % nx, p->xyz[3 * i + 1] = 0.8 * ((i / nx) % ny), p->xyz[3 * i + 2] = 0.7 * (i / (nx * ny));
        for (int d = 0; d < 3; d++) p->dof_node[3 * i + d] = i, p->dof_dir[3 * i + d] = (signed char)d;
    }
    int cap = nn * 27 * 9 * 2, nz_ = 0;
    int *ti = mbl_alloc_array((size_t)cap, sizeof(int)), *tj = mbl_alloc_array((size_t)cap, sizeof(int));
    double *tx = mbl_alloc_array((size_t)cap, sizeof(double));
    for (int a = 0; a < nn; a++)
        for (int b = a + 1; b < nn; b++) {
            int da = a % nx - b % nx, db = (a / nx) % ny - (b / nx) % ny, dc = a / (nx * ny) - b / (nx * ny);
            if (abs(da) > 1 || abs(db) > 1 || abs(dc) > 1) continue;
            double e[3], L = 0;
            for (int d = 0; d < 3; d++) e[d] = p->xyz[3 * b + d] - p->xyz[3 * a + d], L += e[d] * e[d];
            L = sqrt(L);
            double k = 1e3 / L * (1 + 0.25 * ((a * 7 + b * 3) % 5));
            for (int r = 0; r < 3; r++)
                for (int c = 0; c < 3; c++) {
                    double v = k * e[r] * e[c] / (L * L);
                    int I[4] = {3 * a + r, 3 * b + r, 3 * a + r, 3 * b + r}, J[4] = {3 * a + c, 3 * b + c, 3 * b + c, 3 * a + c};
                    double X[4] = {v, v, -v, -v};
                    for (int t = 0; t < 4; t++) ti[nz_] = I[t], tj[nz_] = J[t], tx[nz_++] = X[t];
                }
        }
    mbla_csc_from_triplets(n, n, nz_, ti, tj, tx, NULL, &p->K, NULL);
    for (int r = 0; r < n; r++) ti[r] = tj[r] = r, tx[r] = node_mass(r / 3);
    mbla_csc_from_triplets(n, n, n, ti, tj, tx, NULL, &p->M, NULL);
    mbl_free(ti), mbl_free(tj), mbl_free(tx);
}

/* the nodes of the face x = a (a = 0 or nx - 1) */
static int face(int nx, int ny, int nz, int a, int *nodes)
{
    int c = 0;
    for (int i = 0; i < nx * ny * nz; i++)
        if (i % nx == a) nodes[c++] = i;
    return c;
}

/* ---- references ---- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* the eigenvalues of (K, M) (dense n x n) by QZ, ascending */
static void qz_eigs(int n, const double *K, const double *M, double *w)
{
    double *ar = malloc(sizeof(double) * n), *ai = malloc(sizeof(double) * n), *be = malloc(sizeof(double) * n);
    CHECK_EQ_INT(mbla_ggev(n, K, n, M, n, ar, ai, be, NULL, 1, NULL, 1, NULL), 0);
    for (int i = 0; i < n; i++) w[i] = ar[i] / be[i];
    qsort(w, (size_t)n, sizeof *w, cmp_double);
    free(ar), free(ai), free(be);
}

/* B^T A B for dense A (n x n) and B (n x m) */
static double *congruent(int n, int m, const double *A, const double *B)
{
    double *AB = malloc(sizeof(double) * n * m), *R = malloc(sizeof(double) * m * m);
    mbla_gemm('N', 'N', n, m, n, 1.0, A, n, B, n, 0.0, AB, n, NULL);
    mbla_gemm('T', 'N', m, m, n, 1.0, B, n, AB, n, 0.0, R, m, NULL);
    free(AB);
    return R;
}

static double *dense(const mbla_csc *A)
{
    double *D = malloc(sizeof(double) * A->m * A->n);
    mbla_csc_to_dense(A, D, A->m, NULL);
    return D;
}

/* the reference eigenvalues of the part with each spider's nodes moving rigidly (written here
 * about the spider's first node) and the rows of `held` nodes removed when clamp; returns the order */
static int reference(const fe_part *p, const fe_iface *ifc, int niface, int clamp, double *w)
{
    int n = p->ndof, nn = p->nnode, *owner = malloc(sizeof(int) * nn), m = 0;
    for (int i = 0; i < nn; i++) owner[i] = -1;
    for (int f = 0; f < niface; f++) {
        if (ifc[f].node >= 0) owner[ifc[f].node] = f;
        for (int t = 0; ifc[f].node < 0 && t < ifc[f].nnodes; t++) owner[ifc[f].nodes[t]] = f;
    }
    int *col = malloc(sizeof(int) * n);
    double *B = calloc((size_t)n * (n + 6 * niface), sizeof(double));
    for (int r = 0; r < n; r++)
        if (owner[p->dof_node[r]] < 0) col[r] = m, B[r + (size_t)n * m++] = 1;
    for (int f = 0; f < niface && !clamp; f++) {
        if (ifc[f].node >= 0) {
            for (int d = 0; d < 3; d++) B[3 * ifc[f].node + d + (size_t)n * m++] = 1;
            continue;
        }
        const double *x0 = p->xyz + 3 * ifc[f].nodes[0];
        for (int t = 0; t < ifc[f].nnodes; t++) {
            int nd = ifc[f].nodes[t];
            double r[3] = {p->xyz[3 * nd] - x0[0], p->xyz[3 * nd + 1] - x0[1], p->xyz[3 * nd + 2] - x0[2]};
            /* u_i = u + th x r: the columns u (3) and th (3), [I, -[r]x] */
            double Rx[9] = {0, r[2], -r[1], -r[2], 0, r[0], r[1], -r[0], 0}; /* -[r]x column-major */
            for (int d = 0; d < 3; d++) {
                B[3 * nd + d + (size_t)n * (m + d)] = 1;
                for (int c = 0; c < 3; c++) B[3 * nd + d + (size_t)n * (m + 3 + c)] = Rx[d + 3 * c];
            }
        }
        m += 6;
    }
    (void)col;
    double *K = dense(p->K), *M = dense(p->M);
    double *Kc = congruent(n, m, K, B), *Mc = congruent(n, m, M, B);
    qz_eigs(m, Kc, Mc, w);
    free(owner), free(col), free(B), free(K), free(M), free(Kc), free(Mc);
    return m;
}

static void check_orthonormal(const fe_part *p, const fe_basis *b, double tol)
{
    double *M = dense(p->M), *K = dense(p->K);
    double *Mr = congruent(p->ndof, b->k, M, b->Phi), *Kr = congruent(p->ndof, b->k, K, b->Phi);
    double err = 0, kerr = 0;
    for (int i = 0; i < b->k; i++)
        for (int j = 0; j < b->k; j++) {
            err = fmax(err, fabs(Mr[i + b->k * j] - (i == j)));
            kerr = fmax(kerr, fabs(Kr[i + b->k * j] - (i == j) * b->w2[i]) / b->w2[b->k - 1]);
        }
    CHECK_MSG(err <= tol && kerr <= tol, "Phi^T M Phi - I: %g, Phi^T K Phi - diag(w2): %g", err, kerr);
    free(M), free(K), free(Mr), free(Kr);
}

/* fe_reduce keeping `modes` fixed-interface modes into b: 0, or its failure (checked) */
static int reduce_ok(const fe_part *p, const fe_iface *ifc, int niface, int modes, fe_basis *b)
{
    fe_reduce_opts o = {modes, 0};
    mbl_status st;
    int r = fe_reduce(p, ifc, niface, &o, b, &st);
    CHECK_MSG(r == 0, "%s", st.msg);
    return r;
}

/* every fixed-interface mode kept (b): the free-free w^2 are the reference's above its six rigid
 * ones, the fixed-interface w^2 those of the part without the interfaces' rows, to 1e-8 */
static void check_exact(const fe_part *p, const fe_iface *ifc, int niface, const fe_basis *b, int nfree, int nclamped)
{
    double *w = malloc(sizeof(double) * p->ndof), *wc = malloc(sizeof(double) * p->ndof);
    CHECK_EQ_INT(reference(p, ifc, niface, 0, w), nfree);
    CHECK_EQ_INT(b->k, nfree - 6);
    for (int j = 0; j < 6; j++) CHECK(fabs(w[j]) < 1e-9 * w[nfree - 1]);
    for (int j = 0; j < b->k && j + 6 < nfree; j++) CHECK_REL(b->w2[j], w[j + 6], 1e-8);
    CHECK_EQ_INT(reference(p, ifc, niface, 1, wc), nclamped);
    CHECK_EQ_INT(b->nfixed, nclamped);
    for (int j = 0; j < b->nfixed && j < nclamped; j++) CHECK_REL(b->wfixed[j], wc[j], 1e-8);
    check_orthonormal(p, b, 1e-10);
    free(w), free(wc);
}

/* ---- all modes kept: the reduction is exact ---- */

TEST(all_modes_nodes)
{
    fe_part p;
    truss(3, 2, 2, &p); /* 12 nodes, 36 rows */
    fe_iface ifc[3] = {{"A", 0, 0, NULL, {0}}, {"B", 5, 0, NULL, {0}}, {"C", 8, 0, NULL, {0}}};
    fe_basis b;
    if (reduce_ok(&p, ifc, 3, 27, &b)) { /* 36 - 9 interior rows */
        fe_part_free(&p);
        return;
    }
    CHECK_EQ_INT(b.nconstr, 9);
    CHECK_EQ_INT(b.nrigid, 6);
    check_exact(&p, ifc, 3, &b, 36, 27); /* clamped: the rows of A, B, C removed */
    /* a node marker moves as its node: T's translation rows are Phi's rows, its rotation rows zero */
    double terr = 0;
    for (int j = 0; j < b.k; j++)
        for (int d = 0; d < 6; d++) {
            double t = b.T[6 * b.k * 1 + d + 6 * j], want = d < 3 ? b.Phi[3 * 5 + d + (size_t)b.n * j] : 0;
            terr = fmax(terr, fabs(t - want));
        }
    CHECK(terr == 0);
    CHECK(b.X[3] == p.xyz[15] && b.X[4] == p.xyz[16] && b.X[5] == p.xyz[17]);
    fe_basis_free(&b);
    fe_part_free(&p);
}

TEST(all_modes_spider)
{
    fe_part p;
    truss(4, 2, 2, &p); /* 16 nodes, 48 rows */
    int set[4];
    int ns = face(4, 2, 2, 0, set);
    fe_iface ifc[2] = {{"root", -1, ns, set, {0.1, 0.35, 0.4}}, {"tip", 15, 0, NULL, {0}}};
    fe_basis b;
    if (reduce_ok(&p, ifc, 2, 33, &b)) { /* 48 - 12 - 3 interior rows */
        fe_part_free(&p);
        return;
    }
    check_exact(&p, ifc, 2, &b, 42, 33); /* clamped: the set's rows and the tip's removed */
    /* the spider's nodes move rigidly with its marker: Phi_i = T_u + T_th x (x_i - at) */
    double err = 0, scale = 0;
    for (int j = 0; j < b.k; j++)
        for (int t = 0; t < ns; t++) {
            const double *T = b.T + 6 * j, *x = p.xyz + 3 * set[t], *at = ifc[0].at;
            double rr[3] = {x[0] - at[0], x[1] - at[1], x[2] - at[2]};
            double u[3] = {T[0] + T[4] * rr[2] - T[5] * rr[1], T[1] + T[5] * rr[0] - T[3] * rr[2],
                           T[2] + T[3] * rr[1] - T[4] * rr[0]};
            for (int d = 0; d < 3; d++) {
                err = fmax(err, fabs(b.Phi[3 * set[t] + d + (size_t)b.n * j] - u[d]));
                scale = fmax(scale, fabs(u[d]));
            }
        }
    CHECK_MSG(err <= 1e-12 * scale, "spider nodes off the rigid motion by %g", err);
    CHECK(b.X[0] == 0.1 && b.X[1] == 0.35 && b.X[2] == 0.4);
    fe_basis_free(&b);
    fe_part_free(&p);
}

/* ---- few modes: the error of the reduction, by ARPACK ---- */

static void two_spiders(fe_part *p, int *a, int *b, fe_iface ifc[2])
{
    truss(8, 3, 3, p); /* 72 nodes, 216 rows */
    int na = face(8, 3, 3, 0, a), nb = face(8, 3, 3, 7, b);
    fe_iface f0 = {"root", -1, na, a, {0, 0.8, 0.7}}, f1 = {"tip", -1, nb, b, {7, 0.8, 0.7}};
    ifc[0] = f0, ifc[1] = f1;
}

TEST(few_modes)
{
    fe_part p;
    int sa[9], sb[9];
    fe_iface ifc[2];
    two_spiders(&p, sa, sb, ifc);
    double w[216], wc[216];
    int m = reference(&p, ifc, 2, 0, w), mc = reference(&p, ifc, 2, 1, wc);
    CHECK_EQ_INT(m, 216 - 54 + 12);
    CHECK_EQ_INT(mc, 216 - 54);
    const int modes[5] = {2, 4, 8, 16, 32};
    const double bound[5] = {1.0, 0.25, 0.05, 0.01, 0.006}; /* measured: see the top */
    double prev = INFINITY;
    for (int c = 0; c < 5; c++) {
        fe_basis b;
        if (reduce_ok(&p, ifc, 2, modes[c], &b)) continue;
        CHECK_EQ_INT(b.k, modes[c] + 12 - 6);
        for (int j = 0; j < modes[c]; j++) CHECK_REL(b.wfixed[j], wc[j], 1e-8); /* ARPACK's */
        double err = 0;
        for (int j = 0; j < 6; j++) {
            CHECK(b.w2[j] >= w[j + 6] * (1 - 1e-10)); /* Rayleigh-Ritz: from above */
            err = fmax(err, (b.w2[j] - w[j + 6]) / w[j + 6]);
            if (getenv("MBLIN_TEST_VERBOSE")) printf(" %.3e", (b.w2[j] - w[j + 6]) / w[j + 6]);
        }
        CHECK_MSG(err <= bound[c] && err < prev, "modes %d: error %g (bound %g, before %g)", modes[c], err, bound[c],
                  prev);
        if (getenv("MBLIN_TEST_VERBOSE")) printf("modes %d: lowest six w^2 within %.3e\n", modes[c], err);
        prev = err;
        check_orthonormal(&p, &b, 1e-10);
        fe_basis_free(&b);
    }
    /* a cut-off between the 5th and 6th clamped modes keeps five; with modes = 3 as well, three */
    double f = 0.5 * (sqrt(wc[4]) + sqrt(wc[5])) / 6.283185307179586;
    fe_reduce_opts oc = {-1, f}, ob = {3, f};
    fe_basis b;
    mbl_status st;
    CHECK_MSG(fe_reduce(&p, ifc, 2, &oc, &b, &st) == 0, "%s", st.msg);
    CHECK_EQ_INT(b.nfixed, 5);
    fe_basis_free(&b);
    CHECK_MSG(fe_reduce(&p, ifc, 2, &ob, &b, &st) == 0, "%s", st.msg);
    CHECK_EQ_INT(b.nfixed, 3);
    fe_basis_free(&b);
    /* a cut-off above the first 20 (FE_CUTOFF_FIRST) asks ARPACK again for more */
    f = 0.5 * (sqrt(wc[29]) + sqrt(wc[30])) / 6.283185307179586;
    oc.cutoff_hz = f;
    CHECK_MSG(fe_reduce(&p, ifc, 2, &oc, &b, &st) == 0, "%s", st.msg);
    CHECK_EQ_INT(b.nfixed, 30);
    for (int j = 0; j < b.nfixed; j++) CHECK_REL(b.wfixed[j], wc[j], 1e-8);
    fe_basis_free(&b);
    fe_part_free(&p);
}

/* ---- the invariants ---- */

TEST(invariants_truss)
{
    fe_part p;
    int sa[9], sb[9];
    fe_iface ifc[2];
    two_spiders(&p, sa, sb, ifc);
    fe_basis b;
    fe_invariants v;
    mbl_status st;
    if (reduce_ok(&p, ifc, 2, 8, &b)) {
        fe_part_free(&p);
        return;
    }
    const double origin[3] = {0.5, -0.2, 0.3};
    int r = fe_invariants_of(&p, &b, origin, &v, &st);
    CHECK_MSG(r == 0, "%s", st.msg);
    if (r) {
        fe_basis_free(&b);
        fe_part_free(&p);
        return;
    }
    int k = b.k, nn = p.nnode;
    CHECK_EQ_INT(v.k, k);
    /* direct sums over the point masses */
    double m = 0, s0[3] = {0}, Q[9] = {0}, big = 0;
    double *Sb = calloc(3 * (size_t)k, sizeof(double)), *Cu = calloc(9 * (size_t)k, sizeof(double));
    double *Mab = calloc(9 * (size_t)k * k, sizeof(double));
    for (int i = 0; i < nn; i++) {
        double mi = node_mass(i), u0[3];
        for (int a = 0; a < 3; a++) u0[a] = p.xyz[3 * i + a] - origin[a];
        m += mi;
        for (int a = 0; a < 3; a++) {
            s0[a] += mi * u0[a];
            for (int c = 0; c < 3; c++) Q[a + 3 * c] += mi * u0[a] * u0[c];
        }
        for (int j = 0; j < k; j++) {
            const double *S = b.Phi + 3 * i + (size_t)b.n * j;
            for (int a = 0; a < 3; a++) {
                Sb[a * k + j] += mi * S[a];
                for (int q = 0; q < 3; q++) Cu[(3 * q + a) * k + j] += mi * u0[q] * S[a];
                for (int c = 0; c < 3; c++)
                    for (int l = 0; l < k; l++)
                        Mab[(size_t)(3 * a + c) * k * k + j + (size_t)k * l] += mi * S[a] * b.Phi[3 * i + c + (size_t)b.n * l];
            }
        }
    }
    CHECK_REL(v.m, m, 1e-14);
    for (int a = 0; a < 3; a++) CHECK_CLOSE(v.s0[a], s0[a], 1e-13 * m);
    const int qa[6] = {0, 1, 2, 0, 0, 1}, qb[6] = {0, 1, 2, 1, 2, 2};
    for (int t = 0; t < 6; t++) CHECK_CLOSE(v.Q0[t], Q[qa[t] + 3 * qb[t]], 1e-13 * Q[0]);
    double L = 8, e1 = 0, e2 = 0, e3 = 0, orth = 0, ang = 0;
    for (int q = 0; q < 9 * k; q++) e1 = fmax(e1, fabs(v.Cu[q] - Cu[q])), big = fmax(big, fabs(Cu[q]));
    for (int q = 0; q < 9 * k * k; q++) e2 = fmax(e2, fabs(v.Mab[q] - Mab[q]));
    for (int q = 0; q < 3 * k; q++) e3 = fmax(e3, fabs(v.Sb[q] - Sb[q]));
    CHECK_MSG(e1 <= 1e-12 * big && e2 <= 1e-12 && e3 <= 1e-12 * sqrt(m), "Cu %g, Mab %g, Sb %g", e1, e2, e3);
    /* the elastic modes are M-orthogonal to the rigid ones: int rho S = 0 and int rho u0 x S = 0
     * (the unit modes have int rho |S|^2 = 1, so sqrt(m) and sqrt(m) L are their scales) */
    for (int j = 0; j < k; j++) {
        for (int a = 0; a < 3; a++) orth = fmax(orth, fabs(v.Sb[a * k + j]));
        ang = fmax(ang, fabs(v.Cu[(3 * 1 + 2) * k + j] - v.Cu[(3 * 2 + 1) * k + j])); /* y S_z - z S_y */
        ang = fmax(ang, fabs(v.Cu[(3 * 2 + 0) * k + j] - v.Cu[(3 * 0 + 2) * k + j]));
        ang = fmax(ang, fabs(v.Cu[(3 * 0 + 1) * k + j] - v.Cu[(3 * 1 + 0) * k + j]));
    }
    CHECK_MSG(orth <= 1e-10 * sqrt(m) && ang <= 1e-10 * sqrt(m) * L, "int rho S %g, int rho u0 x S %g", orth, ang);
    /* Mc = I, Kr = diag(w2), and Mc = the trace of the blocks (no rotational rows) */
    double mc = 0, kr = 0;
    for (int i = 0; i < k; i++)
        for (int j = 0; j < k; j++) {
            mc = fmax(mc, fabs(v.Mc[i + k * j] - (i == j)));
            kr = fmax(kr, fabs(v.Kr[i + k * j] - (i == j) * b.w2[i]) / b.w2[k - 1]);
            double tr = v.Mab[i + k * j] + v.Mab[4 * k * k + i + k * j] + v.Mab[8 * k * k + i + k * j];
            mc = fmax(mc, fabs(tr - (i == j)));
        }
    CHECK_MSG(mc <= 1e-10 && kr <= 1e-10, "Mc - I %g, Kr - diag(w2) %g", mc, kr);
    free(Sb), free(Cu), free(Mab);
    fe_invariants_free(&v);
    fe_basis_free(&b);
    fe_part_free(&p);
}

/* a bar from (x0, y0, z0) to (x0 + L, y0, z0), rho A = mu, the consistent mass of linear shape
 * functions mu L / 6 [2 1; 1 2] per direction; three hand-made modes: node 2 along x, node 1
 * along y, node 2 along z (shape functions s / L and 1 - s / L) */
static void bar(fe_part *p, double x0, double y0, double z0, double L, double mu, int aniso)
{
    memset(p, 0, sizeof *p);
    p->nnode = 2, p->ndof = 6;
    p->node_id = mbl_alloc_array(2, sizeof(int));
    p->xyz = mbl_alloc_array(6, sizeof(double));
    p->dof_node = mbl_alloc_array(6, sizeof(int));
    p->dof_dir = mbl_alloc_array(6, 1);
    double x[6] = {x0, y0, z0, x0 + L, y0, z0};
    memcpy(p->xyz, x, sizeof x);
    p->node_id[0] = 1, p->node_id[1] = 2;
    int ti[16], tj[16], nz = 0;
    double tx[16];
    for (int r = 0; r < 6; r++) p->dof_node[r] = r / 3, p->dof_dir[r] = (signed char)(r % 3);
    for (int d = 0; d < 3; d++)
        for (int a = 0; a < 2; a++)
            for (int c = 0; c < 2; c++) ti[nz] = 3 * a + d, tj[nz] = 3 * c + d, tx[nz++] = mu * L / 6 * (a == c ? 2 : 1);
    if (aniso == 1) tx[4] *= 1.001; /* UY of node 1 heavier */
    if (aniso == 2) ti[nz] = 0, tj[nz] = 1, tx[nz++] = 0.01, ti[nz] = 1, tj[nz] = 0, tx[nz++] = 0.01;
    mbla_csc_from_triplets(6, 6, nz, ti, tj, tx, NULL, &p->M, NULL);
    mbla_csc_copy(p->M, &p->K, NULL); /* any symmetric K: only Kr reads it */
}

TEST(invariants_bar)
{
    const double x0 = 0.3, y0 = -0.4, z0 = 0.25, L = 1.7, mu = 2.5;
    fe_part p;
    bar(&p, x0, y0, z0, L, mu, 0);
    double Phi[18] = {0};
    Phi[3] = 1;          /* mode 0: node 2 UX */
    Phi[6 + 1] = 1;      /* mode 1: node 1 UY */
    Phi[12 + 5] = 1;     /* mode 2: node 2 UZ */
    fe_basis b = {0};
    b.n = 6, b.k = 3, b.Phi = Phi;
    fe_invariants v;
    mbl_status st;
    const double o[3] = {0, 0, 0};
    int r = fe_invariants_of(&p, &b, o, &v, &st);
    CHECK_MSG(r == 0, "%s", st.msg);
    if (r) {
        fe_part_free(&p);
        return;
    }
    /* closed forms: int_0^L mu f(s) ds, x = x0 + s */
    double m = mu * L, I1 = mu * (x0 * L + L * L / 2), I2 = mu * ((x0 + L) * (x0 + L) * (x0 + L) - x0 * x0 * x0) / 3;
    CHECK_REL(v.m, m, 1e-14);
    CHECK_REL(v.s0[0], I1, 1e-14);
    CHECK_REL(v.s0[1], m * y0, 1e-14);
    CHECK_REL(v.s0[2], m * z0, 1e-14);
    CHECK_REL(v.Q0[0], I2, 1e-14);
    CHECK_REL(v.Q0[1], m * y0 * y0, 1e-14);
    CHECK_REL(v.Q0[2], m * z0 * z0, 1e-14);
    CHECK_REL(v.Q0[3], I1 * y0, 1e-14);
    CHECK_REL(v.Q0[4], I1 * z0, 1e-14);
    CHECK_REL(v.Q0[5], m * y0 * z0, 1e-14);
    /* Sb: int mu s/L = mu L / 2 for modes 0 (x) and 2 (z); int mu (1 - s/L) = mu L / 2 for mode 1 (y) */
    CHECK_REL(v.Sb[0 * 3 + 0], mu * L / 2, 1e-14);
    CHECK_REL(v.Sb[1 * 3 + 1], mu * L / 2, 1e-14);
    CHECK_REL(v.Sb[2 * 3 + 2], mu * L / 2, 1e-14);
    CHECK(v.Sb[0 * 3 + 1] == 0 && v.Sb[1 * 3 + 0] == 0);
    /* Cu (3 p + r): int mu x s/L = mu (x0 L / 2 + L^2 / 3); int mu x (1 - s/L) = mu (x0 L / 2 + L^2 / 6) */
    CHECK_REL(v.Cu[(3 * 0 + 0) * 3 + 0], mu * (x0 * L / 2 + L * L / 3), 1e-14);
    CHECK_REL(v.Cu[(3 * 0 + 1) * 3 + 1], mu * (x0 * L / 2 + L * L / 6), 1e-14);
    CHECK_REL(v.Cu[(3 * 1 + 1) * 3 + 1], mu * L / 2 * y0, 1e-14);
    CHECK_REL(v.Cu[(3 * 2 + 2) * 3 + 2], mu * L / 2 * z0, 1e-14);
    /* Mab: int mu (s/L)^2 = mu L / 3, int mu (s/L)(1 - s/L) = mu L / 6 */
    CHECK_REL(v.Mab[0 * 9 + 0], mu * L / 3, 1e-14);              /* xx (0, 0) */
    CHECK_REL(v.Mab[4 * 9 + 1 + 3 * 1], mu * L / 3, 1e-14);      /* yy (1, 1) */
    CHECK_REL(v.Mab[1 * 9 + 0 + 3 * 1], mu * L / 6, 1e-14);      /* xy (0, 1) */
    CHECK_REL(v.Mab[3 * 9 + 1 + 3 * 0], mu * L / 6, 1e-14);      /* yx (1, 0) */
    CHECK_REL(v.Mab[2 * 9 + 0 + 3 * 2], mu * L / 3, 1e-14);      /* xz (0, 2): node 2 both */
    CHECK_REL(v.Mc[0], mu * L / 3, 1e-14);
    CHECK_REL(v.Mc[1], mu * L / 6 * 0 + 0, 1);                   /* x against y: no coupling in M */
    CHECK(v.Mc[1] == 0);
    fe_invariants_free(&v);
    fe_part_free(&p);
}

/* the bar with rotation rows too (rows 6..11: RX, RY, RZ of node 1, then of node 2), a rotary mass J
 * on each and a mass c between node 1's UY and RZ: the translation field's integrals leave them out
 * (the same as the bar's without them), Mc = Phi^T M Phi takes them in */
static void add_rotations(fe_part *p, double J, double c)
{
    int n = 12;
    p->ndof = n;
    p->dof_node = mbl_realloc_array(p->dof_node, (size_t)n, sizeof(int));
    p->dof_dir = mbl_realloc_array(p->dof_dir, (size_t)n, 1);
    int ti[40], tj[40], nz = 0;
    double tx[40];
    for (int j = 0; j < 6; j++)
        for (int q = p->M->p[j]; q < p->M->p[j + 1]; q++) ti[nz] = p->M->i[q], tj[nz] = j, tx[nz++] = p->M->x[q];
    for (int r = 6; r < 12; r++) {
        p->dof_node[r] = (r - 6) / 3, p->dof_dir[r] = (signed char)(FE_RX + (r - 6) % 3);
        ti[nz] = tj[nz] = r, tx[nz++] = J;
    }
    ti[nz] = 1, tj[nz] = 8, tx[nz++] = c, ti[nz] = 8, tj[nz] = 1, tx[nz++] = c;
    mbla_csc_free(p->M), mbla_csc_free(p->K);
    mbla_csc_from_triplets(n, n, nz, ti, tj, tx, NULL, &p->M, NULL);
    mbla_csc_copy(p->M, &p->K, NULL);
}

TEST(invariants_rotations)
{
    const double L = 1.7, mu = 2.5, J = 0.3, c = 0.05, o[3] = {0.1, 0.2, -0.3};
    fe_part p;
    bar(&p, 0.3, -0.4, 0.25, L, mu, 0);
    double Phi6[18] = {0}, Phi12[36] = {0};
    Phi6[3] = Phi12[3] = 1;             /* mode 0: node 2 UX, and node 2 RZ 0.7 */
    Phi12[11] = 0.7;
    Phi6[6 + 1] = Phi12[12 + 1] = 1;    /* mode 1: node 1 UY, and node 1 RZ 0.5 */
    Phi12[12 + 8] = 0.5;
    Phi6[12 + 5] = Phi12[24 + 5] = 1;   /* mode 2: node 2 UZ */
    fe_basis b6 = {0}, b12 = {0};
    b6.n = 6, b12.n = 12, b6.k = b12.k = 3, b6.Phi = Phi6, b12.Phi = Phi12;
    fe_invariants v, w;
    mbl_status st;
    CHECK_MSG(fe_invariants_of(&p, &b6, o, &v, &st) == 0, "%s", st.msg);
    add_rotations(&p, J, c);
    int r = fe_invariants_of(&p, &b12, o, &w, &st);
    CHECK_MSG(r == 0, "%s", st.msg);
    if (!r) {
        CHECK(w.m == v.m && !memcmp(w.s0, v.s0, sizeof v.s0) && !memcmp(w.Q0, v.Q0, sizeof v.Q0));
        CHECK(!memcmp(w.Sb, v.Sb, 9 * sizeof(double)) && !memcmp(w.Cu, v.Cu, 27 * sizeof(double)));
        CHECK(!memcmp(w.Mab, v.Mab, 81 * sizeof(double)));
        CHECK_REL(w.Mc[0], mu * L / 3 + J * 0.49, 1e-14);
        CHECK_REL(w.Mc[4], mu * L / 3 + J * 0.25 + 2 * c * 0.5, 1e-14);
        CHECK(w.Mc[1] == 0 && w.Mc[3] == 0);
        fe_invariants_free(&w);
    }
    fe_invariants_free(&v);
    fe_part_free(&p);
}

/* ---- refusals ---- */

static void refuse(const fe_part *p, const fe_iface *ifc, int niface, int modes, double cut, const char *want)
{
    fe_reduce_opts o = {modes, cut};
    fe_basis b;
    mbl_status st;
    int r = fe_reduce(p, ifc, niface, &o, &b, &st);
    CHECK_MSG(r < 0 && strstr(st.msg, want), "wanted an error with \"%s\": %d %s", want, r, r ? st.msg : "");
    if (!r) fe_basis_free(&b);
}

TEST(refusals)
{
    fe_part p;
    truss(3, 2, 2, &p);
    int set[4], line[2] = {0, 1};
    int ns = face(3, 2, 2, 0, set);
    fe_iface one[1] = {{"lonely", 4, 0, NULL, {0}}};
    refuse(&p, one, 1, 5, 0, "lonely (node 18: 3 rows, too few alone) do not hold the part");
    fe_iface two[2] = {{"hub", -1, ns, set, {0, 0, 0}}, {"pin", set[2], 0, NULL, {0}}};
    refuse(&p, two, 2, 5, 0, "node 22 is in two interfaces, hub and pin");
    fe_iface sp[2] = {{"hub", -1, ns, set, {0, 0.4, 0.35}}, {"tip", 11, 0, NULL, {0}}};
    refuse(&p, sp, 2, 36 - 12 - 3 + 1, 0, "modes = 22, more than the 21 rows");
    refuse(&p, sp, 2, -1, 0, "neither modes nor a cut-off");
    refuse(&p, sp, 2, -3, 0, "modes = -3");
    refuse(&p, sp, 0, 5, 0, "no interface");
    fe_iface col[1] = {{"rod", -1, 2, line, {0, 0, 0}}};
    refuse(&p, col, 1, 5, 0, "interface rod: its 2 node(s) do not fix a rigid motion");
    p.M->x[p.M->p[7]] = 0; /* node 2 (id 14) UY without mass */
    refuse(&p, sp, 2, 5, 0, "node 14 UY has no mass");
    fe_part_free(&p);
    /* an anisotropic mass: a heavier UY row, a mass between UX and UY */
    for (int a = 1; a <= 2; a++) {
        bar(&p, 0, 0, 0, 1, 1, a);
        double Phi[6] = {0, 0, 0, 1, 0, 0};
        fe_basis b = {0};
        b.n = 6, b.k = 1, b.Phi = Phi;
        fe_invariants v;
        mbl_status st;
        const double o[3] = {0, 0, 0};
        int r = fe_invariants_of(&p, &b, o, &v, &st);
        const char *want = a == 1 ? "M row 2 (node 1 UY) differs from its UX row" : "M row 2 (node 1 UY) couples to node 1 UX";
        CHECK_MSG(r < 0 && strstr(st.msg, want), "wanted \"%s\": %s", want, r ? st.msg : "no error");
        if (!r) fe_invariants_free(&v);
        fe_part_free(&p);
    }
}

/* every allocation of the reduction and of the invariants failing in turn: MBL_ENOMEM, nothing leaked
 * (the sanitized build's leak checker), then success (ALLOC_FAIL_LOOP of tests/la) */
TEST(allocation_failures)
{
    fe_part p;
    int sa[9], sb[9];
    fe_iface ifc[2];
    two_spiders(&p, sa, sb, ifc);
    fe_reduce_opts o = {4, 0};
    fe_basis b;
    fe_invariants v;
    const double origin[3] = {0, 0, 0};
    ALLOC_FAIL_LOOP(fe_reduce(&p, ifc, 2, &o, &b, NULL), (void)0);
    ALLOC_FAIL_LOOP(fe_invariants_of(&p, &b, origin, &v, NULL), fe_invariants_free(&v));
    fe_basis_free(&b);
    fe_part_free(&p);
}

int main(void)
{
    RUN(all_modes_nodes);
    RUN(all_modes_spider);
    RUN(few_modes);
    RUN(invariants_truss);
    RUN(invariants_bar);
    RUN(invariants_rotations);
    RUN(refusals);
    RUN(allocation_failures);
    return test_summary("fe_reduce");
}
