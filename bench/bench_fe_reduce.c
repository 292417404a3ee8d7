/* Scale of the Craig-Bampton reduction (issue 67, item 6; docs/fe-reduction.md): a hex-like lattice
 * of NX x NY x NZ nodes (3 rows each; every node joined by an axial spring to each of its 26
 * neighbours, the 27-point pattern of trilinear hexahedra; unit lumped masses) reduced to MODES
 * fixed-interface modes with two rigid spiders on its end faces, then its invariants. Prints the
 * median time of each step over RUNS reductions (src/fe/reduce_steps.h: elimination of the
 * spiders, CHOLMOD's factor of K_ii, the fixed-interface modes by ARPACK, the constraint modes, the
 * orthonormalisation; then fe_invariants_of) and the peak memory (getrusage) after each step of
 * the first run, and asserts the peak below MEM_FACTOR times K's storage (12 bytes a stored entry).
 *
 *   build/bench/bench_fe_reduce [NX NY NZ [MODES [RUNS]]]      (default 64 23 23 20 3: 101,568 rows) */
#include "bench_clock.h"
#include "fe/reduce_steps.h"

#include <math.h>
#include <stdio.h>
#include <sys/resource.h>

/* the peak memory may be at most this many times K's storage (measured 10.9 at 30,720 rows and
 * 13.5 at 101,568, most of it the Cholesky factor of K_ii: docs/benchmarks.md) */
#define MEM_FACTOR 16.0

enum { NSTEP = 6 };
static const char *const step_name[NSTEP] = {"eliminate", "factor K_ii", "fixed modes", "constraint modes",
                                             "orthonormalise", "invariants"};

static double peak_mib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss / 1024.0;
}

/* the lattice's K in CSC directly (column by column, the 27 neighbours in ascending order) and M */
static int lattice(int nx, int ny, int nz, fe_part *p)
{
    int nn = nx * ny * nz, n = 3 * nn;
    memset(p, 0, sizeof *p);
    p->file = "lattice";
    p->nnode = nn, p->ndof = n;
    p->node_id = malloc(sizeof(int) * nn), p->xyz = malloc(sizeof(double) * 3 * nn);
    p->dof_node = malloc(sizeof(int) * n), p->dof_dir = malloc((size_t)n);
    if (mbla_csc_new(n, n, 81 * n, &p->K, NULL) || mbla_csc_new(n, n, n, &p->M, NULL)) return -1;
    int q = 0;
    for (int a = 0; a < nn; a++) {
        int ia = a % nx, ja = (a / nx) % ny, ka = a / (nx * ny);
        p->node_id[a] = a + 1;
        p->xyz[3 * a] = ia, p->xyz[3 * a + 1] = ja, p->xyz[3 * a + 2] = ka;
        for (int c = 0; c < 3; c++) {
            int col = 3 * a + c;
            p->dof_node[col] = a, p->dof_dir[col] = (signed char)c;
            p->M->i[col] = col, p->M->x[col] = 1, p->M->p[col + 1] = col + 1;
            int self = -1;
            double diag[3] = {0, 0, 0};
            for (int dk = -1; dk <= 1; dk++)
                for (int dj = -1; dj <= 1; dj++)
                    for (int di = -1; di <= 1; di++) {
                        int ib = ia + di, jb = ja + dj, kb = ka + dk;
                        if (ib < 0 || ib >= nx || jb < 0 || jb >= ny || kb < 0 || kb >= nz) continue;
                        int b = ib + nx * (jb + ny * kb);
                        if (b == a) {
                            self = q;
                            for (int r = 0; r < 3; r++) p->K->i[q++] = 3 * a + r;
                            continue;
                        }
                        double e[3] = {di, dj, dk}, L2 = di * di + dj * dj + dk * dk, k = 1 / sqrt(L2);
                        for (int r = 0; r < 3; r++) {
                            double v = k * e[r] * e[c] / L2;
                            p->K->i[q] = 3 * b + r, p->K->x[q++] = -v;
                            diag[r] += v;
                        }
                    }
            for (int r = 0; r < 3; r++) p->K->x[self + r] = diag[r];
            p->K->p[col + 1] = q;
        }
    }
    return 0;
}

static void lattice_free(fe_part *p)
{
    free(p->node_id), free(p->xyz), free(p->dof_node), free(p->dof_dir);
    mbla_csc_free(p->K), mbla_csc_free(p->M);
}

/* one reduction and the invariants, each step timed into t; mem (may be NULL): the peak after each */
static int run(const fe_part *p, const fe_iface *ifc, const fe_reduce_opts *o, double *t, double *mem, fe_basis *b)
{
    fe_cb c;
    fe_invariants v;
    mbl_status st;
    double t0 = bench_now();
    int r = 0;
    for (int s = 0; s < NSTEP && !r; s++) {
        switch (s) {
        case 0: r = fe_cb_eliminate(&c, p, ifc, 2, o, &st); break;
        case 1: r = fe_cb_factor(&c, &st); break;
        case 2: r = fe_cb_fixed(&c, &st); break;
        case 3: r = fe_cb_constraint(&c, &st); break;
        case 4: r = fe_cb_basis(&c, b, &st), fe_cb_free(&c); break;
        default: r = fe_invariants_of(p, b, ifc[0].at, &v, &st), fe_invariants_free(&v); break;
        }
        double t1 = bench_now();
        t[s] = t1 - t0, t0 = t1;
        if (mem) mem[s] = peak_mib();
    }
    if (r) {
        fprintf(stderr, "bench_fe_reduce: %s\n", st.msg);
        fe_cb_free(&c);
    }
    return r;
}

int main(int argc, char **argv)
{
    int nx = argc > 3 ? atoi(argv[1]) : 64, ny = argc > 3 ? atoi(argv[2]) : 23, nz = argc > 3 ? atoi(argv[3]) : 23;
    int modes = argc > 4 ? atoi(argv[4]) : 20, runs = argc > 5 ? atoi(argv[5]) : 3;
    if (nx < 2 || ny < 2 || nz < 2 || modes < 1 || runs < 1 || runs > 99) {
        fprintf(stderr, "usage: bench_fe_reduce [NX NY NZ [MODES [RUNS]]]\n");
        return 2;
    }
    double m0 = peak_mib();
    fe_part p;
    if (lattice(nx, ny, nz, &p)) return fprintf(stderr, "bench_fe_reduce: out of memory\n"), 1;
    double kmib = 12.0 * mbla_csc_nnz(p.K) / (1024.0 * 1024.0), mpart = peak_mib();
    int nf = ny * nz, *root = malloc(sizeof(int) * nf), *tip = malloc(sizeof(int) * nf);
    for (int t = 0; t < nf; t++) root[t] = nx * t, tip[t] = nx * t + nx - 1;
    fe_iface ifc[2] = {{"root", -1, nf, root, {0, 0.5 * (ny - 1), 0.5 * (nz - 1)}},
                       {"tip", -1, nf, tip, {nx - 1, 0.5 * (ny - 1), 0.5 * (nz - 1)}}};
    fe_reduce_opts o = {modes, 0};
    double t[99][NSTEP], mem[NSTEP], med[NSTEP], col[99];
    fe_basis b = {0};
    for (int k = 0; k < runs; k++) {
        fe_basis_free(&b);
        if (run(&p, ifc, &o, t[k], k ? NULL : mem, &b)) return 1;
    }
    printf("lattice %d x %d x %d: %d rows, K %d entries (%.1f MiB), part built: peak %.1f MiB (%.1f before)\n", nx, ny,
           nz, p.ndof, mbla_csc_nnz(p.K), kmib, mpart, m0);
    printf("%d fixed-interface modes, %d constraint modes, %d rigid projected out, %d kept; lowest f = %.6g Hz\n", b.nfixed,
           b.nconstr, b.nrigid, b.k, sqrt(b.w2[0]) / 6.283185307179586);
    printf("%-18s %10s %14s\n", "step", "median s", "peak MiB after");
    double total = 0;
    for (int s = 0; s < NSTEP; s++) {
        for (int k = 0; k < runs; k++) col[k] = t[k][s];
        qsort(col, (size_t)runs, sizeof *col, bench_cmp_double);
        med[s] = col[runs / 2], total += med[s];
        printf("%-18s %10.3f %14.1f\n", step_name[s], med[s], mem[s]);
    }
    printf("%-18s %10.3f %14.1f  (%.1f x K's storage; limit %.0f x)\n", "total", total, mem[NSTEP - 1],
           mem[NSTEP - 1] / kmib, MEM_FACTOR);
    int bad = mem[NSTEP - 1] > MEM_FACTOR * kmib;
    if (bad) fprintf(stderr, "bench_fe_reduce: peak memory %.1f MiB above %.0f x K's %.1f MiB\n", mem[NSTEP - 1],
                     MEM_FACTOR, kmib);
    fe_basis_free(&b);
    lattice_free(&p);
    free(root), free(tip);
    return bad;
}
