/* SLEPc over MPI for the sparse eigenproblems of the linearized DAE (docs/parallel.md, "SLEPc
 * eigensolver"): the two shift-invert problems of the sparse path (src/lin/sparse_pencil.c) answered
 * by SLEPc's Krylov-Schur (EPS) with the spectral transformation STSINVERT, the factorization of
 * A - sigma E done by MUMPS (PETSc's distributed direct solver, -st_pc_factor_mat_solver_type mumps),
 * as the engine of mbla_eigs_backend (include/mblin/la.h):
 *   - the first-order pencil (source 001 Eq. 8: Ad x = lambda E x, order 2n + m): a generalized
 *     non-Hermitian problem (EPS_GNHEP), the k eigenvalues nearest a real shift;
 *   - a complex shift sigma = sr + i si (rotors: the whirl modes near i Omega) in PETSc's real
 *     arithmetic: the real form of the complex pencil (A - i si E, E), order 2(2n + m),
 *         [A  si E; -si E  A] z = theta [E 0; 0 E] z,   theta = lambda - i si,
 *     with the real shift sr; each computed theta gives lambda = theta + i si with the eigenvector
 *     a + i b (z = [a; b]) or, of the conjugate half, lambda = conj(theta) + i si with conj(a - i b):
 *     the candidate with the smaller residual on the pencil is kept (docs/parallel.md);
 *   - the symmetric saddle-point pencil of undamped, non-gyroscopic models ([K s Phi^T; s Phi 0],
 *     [M 0; 0 0], order n + m): a generalized Hermitian problem (EPS_GHEP, B semi-definite: SLEPc
 *     purifies the eigenvectors), the eigenvalues w = omega^2 nearest -shift^2.
 * Every rank passes the same whole pencil and inserts only its own rows (a MatMPIAIJ with PETSc's
 * default split of the rows); the eigenvalues are returned on every rank, the eigenvectors are
 * gathered to rank 0 only (k vectors), where the caller refines them exactly as after ARPACK.
 * PETSc's options (the environment variable PETSC_OPTIONS, e.g. "-log_view" or
 * "-mat_mumps_icntl_14 80") are read by EPSSetFromOptions after the defaults above are set. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slepceps.h>

#include "mblin/la.h"
#include "par/slepc.h"

/* SLEPc's relative tolerance when the caller leaves 0 (full accuracy): Krylov-Schur cannot reach eps;
 * the caller's refinement (mbla_eigs_refine, mbla_eigs_refine_sym) takes each pair the rest of the way */
#define SLEPC_TOL_FULL 1e-12
/* a candidate eigenpair of the complex-shift real form is an eigenpair of the pencil when its backward
 * error (before refinement) is below this */
#define SLEPC_CPLX_BERR 1e-6
/* MUMPS's first working-space margin, percent (see eps_solve) */
#define SLEPC_MUMPS_ICNTL14 50

static int fail(mbl_status *st, int code, const char *fmt, ...)
{
    if (!st) return code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->msg, sizeof st->msg, fmt, ap);
    va_end(ap);
    st->code = code;
    return code;
}

/* PETSc's message of the error at its origin (e.g. MUMPS's INFOG codes), kept by the error handler
 * below instead of printed */
static char petsc_msg[512];

static PetscErrorCode keep_error(MPI_Comm comm, int line, const char *fun, const char *file, PetscErrorCode n,
                                 PetscErrorType p, const char *mess, void *ctx)
{
    (void)comm, (void)line, (void)file, (void)ctx;
    if (p == PETSC_ERROR_INITIAL) {
        snprintf(petsc_msg, sizeof petsc_msg, "%s%s%s", fun ? fun : "", fun ? ": " : "", mess ? mess : "");
        for (char *c = petsc_msg; *c; c++)
            if (*c == '\n') *c = ' ';
    }
    return n;
}

static int petsc_fail(mbl_status *st, PetscErrorCode e, const char *what)
{
    const char *text = NULL;
    PetscErrorMessage(e, &text, NULL);
    int rc = fail(st, e == PETSC_ERR_MEM ? MBL_ENOMEM : MBL_ELIB, "SLEPc: %s failed (PETSc error %d: %s%s%s)", what,
                  (int)e, text ? text : "?", petsc_msg[0] ? "; " : "", petsc_msg);
    petsc_msg[0] = 0;
    return rc;
}

#define PCHK(call)                                                                                                     \
    do {                                                                                                               \
        PetscErrorCode e_ = (call);                                                                                    \
        if (e_) {                                                                                                      \
            rc = petsc_fail(st, e_, #call);                                                                            \
            goto done;                                                                                                 \
        }                                                                                                              \
    } while (0)

/* One block of a distributed matrix: a * M placed at rows r0.., columns c0.. */
typedef struct {
    const mbla_csc *M;
    double a;
    int r0, c0;
} blk;

/* The rows [rs, re) of the sum of the blocks as CSR with global column indices. The blocks are
 * listed by increasing c0 and never overlap, so that each row's columns come out sorted. */
static int owned_rows(const blk *b, int nb, PetscInt rs, PetscInt re, PetscInt **ip, PetscInt **jp, PetscScalar **xp,
                      mbl_status *st)
{
    PetscInt nl = re - rs;
    PetscInt *ia = calloc((size_t)nl + 1, sizeof *ia), *ja = NULL, *pos = NULL;
    PetscScalar *xa = NULL;
    if (!ia) return fail(st, MBL_ENOMEM, "SLEPc: out of memory (rows of the pencil)");
    for (int t = 0; t < nb; t++)
        for (int j = 0; j < b[t].M->n; j++)
            for (int q = b[t].M->p[j]; q < b[t].M->p[j + 1]; q++) {
                PetscInt r = (PetscInt)b[t].r0 + b[t].M->i[q];
                if (r >= rs && r < re) ia[r - rs + 1]++;
            }
    for (PetscInt r = 0; r < nl; r++) ia[r + 1] += ia[r];
    ja = malloc(((size_t)ia[nl] + 1) * sizeof *ja), xa = malloc(((size_t)ia[nl] + 1) * sizeof *xa);
    pos = malloc(((size_t)nl + 1) * sizeof *pos);
    if (!ja || !xa || !pos) {
        free(ia), free(ja), free(xa), free(pos);
        return fail(st, MBL_ENOMEM, "SLEPc: out of memory (rows of the pencil)");
    }
    memcpy(pos, ia, (size_t)nl * sizeof *pos);
    for (int t = 0; t < nb; t++)
        for (int j = 0; j < b[t].M->n; j++)
            for (int q = b[t].M->p[j]; q < b[t].M->p[j + 1]; q++) {
                PetscInt r = (PetscInt)b[t].r0 + b[t].M->i[q];
                if (r < rs || r >= re) continue;
                PetscInt s = pos[r - rs]++;
                ja[s] = (PetscInt)b[t].c0 + j;
                xa[s] = b[t].a * b[t].M->x[q];
            }
    free(pos);
    *ip = ia, *jp = ja, *xp = xa;
    return 0;
}

/* The sum of the blocks as a MatMPIAIJ of order N on comm, each rank its own rows. */
static int dist_mat(MPI_Comm comm, const blk *b, int nb, PetscInt N, Mat *out, mbl_status *st)
{
    PetscInt nl = PETSC_DECIDE, rs = 0, *ia = NULL, *ja = NULL;
    PetscScalar *xa = NULL;
    int rc = 0;
    *out = NULL;
    PCHK(PetscSplitOwnership(comm, &nl, &N));
    MPI_Exscan(&nl, &rs, 1, MPIU_INT, MPI_SUM, comm);
    int rank;
    MPI_Comm_rank(comm, &rank);
    if (rank == 0) rs = 0; /* MPI_Exscan leaves rank 0's result undefined */
    if ((rc = owned_rows(b, nb, rs, rs + nl, &ia, &ja, &xa, st))) return rc;
    PCHK(MatCreateMPIAIJWithArrays(comm, nl, nl, N, N, ia, ja, xa, out)); /* copies the arrays */
done:
    free(ia), free(ja), free(xa);
    return rc;
}

/* Copy the distributed vector x into dst (length N) on rank 0 (nothing elsewhere). */
static int gather0(Vec x, double *dst, mbl_status *st)
{
    VecScatter sc = NULL;
    Vec x0 = NULL;
    int rc = 0, rank;
    MPI_Comm_rank(PetscObjectComm((PetscObject)x), &rank);
    PCHK(VecScatterCreateToZero(x, &sc, &x0));
    PCHK(VecScatterBegin(sc, x, x0, INSERT_VALUES, SCATTER_FORWARD));
    PCHK(VecScatterEnd(sc, x, x0, INSERT_VALUES, SCATTER_FORWARD));
    if (rank == 0) {
        const PetscScalar *a;
        PetscInt n;
        PCHK(VecGetLocalSize(x0, &n));
        PCHK(VecGetArrayRead(x0, &a));
        for (PetscInt i = 0; i < n; i++) dst[i] = a[i];
        PCHK(VecRestoreArrayRead(x0, &a));
    }
done:
    if (sc) VecScatterDestroy(&sc);
    if (x0) VecDestroy(&x0);
    return rc;
}

static int plugin_rank(void)
{
    int r = 0;
    MPI_Comm_rank(PETSC_COMM_WORLD, &r);
    return r;
}

/* The EPS solve shared by the three problems: the kk eigenpairs of (MA, MB) nearest the real target,
 * eigenvalues to kr, ki (every rank), eigenvectors of length N to Xr, Xi (ld N, rank 0 only; Xi
 * unused for a symmetric problem). */
static int eps_solve_once(Mat MA, Mat MB, int herm, double target, int kk, const mbla_eigs_opts *opts, PetscInt N,
                          double *kr, double *ki, double *Xr, double *Xi, int *nconv, mbl_status *st)
{
    EPS eps = NULL;
    ST stt;
    KSP ksp;
    PC pc;
    Vec xr = NULL, xi = NULL;
    int rc = 0, rank = plugin_rank();
    double tol = opts && opts->tol > 0 ? opts->tol : SLEPC_TOL_FULL;
    PetscInt maxit = opts && opts->maxiter > 0 ? opts->maxiter : PETSC_DEFAULT;
    PetscInt ncv = opts && opts->ncv > 0 ? opts->ncv : PETSC_DEFAULT;
    PCHK(EPSCreate(PetscObjectComm((PetscObject)MA), &eps));
    PCHK(EPSSetOperators(eps, MA, MB));
    PCHK(EPSSetProblemType(eps, herm ? EPS_GHEP : EPS_GNHEP));
    PCHK(EPSSetType(eps, EPSKRYLOVSCHUR));
    PCHK(EPSSetWhichEigenpairs(eps, EPS_TARGET_MAGNITUDE));
    PCHK(EPSSetTarget(eps, target));
    PCHK(EPSSetDimensions(eps, kk, ncv, PETSC_DEFAULT));
    PCHK(EPSSetTolerances(eps, tol, maxit));
    PCHK(EPSGetST(eps, &stt));
    PCHK(STSetType(stt, STSINVERT));
    PCHK(STGetKSP(stt, &ksp));
    PCHK(KSPSetType(ksp, KSPPREONLY));
    PCHK(KSPGetPC(ksp, &pc));
    PCHK(PCSetType(pc, PCLU));
    PCHK(PCFactorSetMatSolverType(pc, MATSOLVERMUMPS));
    PCHK(EPSSetFromOptions(eps));
    PCHK(EPSSolve(eps));
    PetscInt nc = 0;
    PCHK(EPSGetConverged(eps, &nc));
    if (nconv) *nconv = (int)(nc < kk ? nc : kk);
    if (nc < kk) {
        EPSConvergedReason why;
        EPSGetConvergedReason(eps, &why);
        rc = fail(st, MBL_ENOCONV, "SLEPc: Krylov-Schur converged %d of %d eigenvalues (%s)", (int)nc, kk,
                  EPSConvergedReasons[why]);
        goto done;
    }
    PCHK(MatCreateVecs(MA, &xr, NULL));
    PCHK(MatCreateVecs(MA, &xi, NULL));
    for (int t = 0; t < kk; t++) {
        PetscScalar er, ei;
        PCHK(EPSGetEigenpair(eps, t, &er, &ei, xr, xi));
        kr[t] = er, ki[t] = herm ? 0.0 : ei;
        /* collective on every rank alike (Xr, Xi are used on rank 0 only) */
        if ((rc = gather0(xr, rank == 0 ? Xr + (size_t)t * N : NULL, st))) goto done;
        if (!herm && (rc = gather0(xi, rank == 0 ? Xi + (size_t)t * N : NULL, st))) goto done;
    }
done:
    if (xr) VecDestroy(&xr);
    if (xi) VecDestroy(&xi);
    if (eps) EPSDestroy(&eps);
    return rc;
}

/* eps_solve_once with MUMPS's working-space margin ICNTL(14) (percent over its estimate) at
 * SLEPC_MUMPS_ICNTL14 and doubled up to 16 times that while MUMPS runs out of it (INFOG(1) = -9 or
 * -8: the delayed pivots of the index-3 pencil, e.g. the hanging chain of tests/par/ on 2 ranks needed
 * more than MUMPS's default 20 percent); a margin the user gives (PETSC_OPTIONS
 * -st_mat_mumps_icntl_14) is used as given. INFOG is global, so every rank decides alike. */
static int eps_solve(Mat MA, Mat MB, int herm, double target, int kk, const mbla_eigs_opts *opts, PetscInt N,
                     double *kr, double *ki, double *Xr, double *Xi, int *nconv, mbl_status *st)
{
    PetscBool user = PETSC_FALSE;
    PetscOptionsHasName(NULL, "st_", "-mat_mumps_icntl_14", &user);
    if (user) return eps_solve_once(MA, MB, herm, target, kk, opts, N, kr, ki, Xr, Xi, nconv, st);
    int rc = 0;
    for (int v = SLEPC_MUMPS_ICNTL14; v <= 16 * SLEPC_MUMPS_ICNTL14; v *= 2) {
        char val[16];
        snprintf(val, sizeof val, "%d", v);
        PetscOptionsSetValue(NULL, "-st_mat_mumps_icntl_14", val);
        rc = eps_solve_once(MA, MB, herm, target, kk, opts, N, kr, ki, Xr, Xi, nconv, st);
        PetscOptionsClearValue(NULL, "-st_mat_mumps_icntl_14");
        if (!rc || !st || (!strstr(st->msg, "INFOG(1)=-9,") && !strstr(st->msg, "INFOG(1)=-8,"))) break;
    }
    return rc;
}

static void unit(int n, double *vr, double *vi)
{
    double s = 0;
    for (int i = 0; i < n; i++) s += vr[i] * vr[i] + (vi ? vi[i] * vi[i] : 0.0);
    s = sqrt(s);
    if (s > 0)
        for (int i = 0; i < n; i++) {
            vr[i] /= s;
            if (vi) vi[i] /= s;
        }
}

/* y += a M x (M in CSC) */
static void csc_axpy(const mbla_csc *M, double a, const double *x, double *y)
{
    for (int j = 0; j < M->n; j++)
        for (int q = M->p[j]; q < M->p[j + 1]; q++) y[M->i[q]] += a * M->x[q] * x[j];
}

/* backward error ||A v - l E v|| / ((||A||_1 + |l| ||E||_1) ||v||) of the complex pair (l, vr + i vi);
 * w: 4 n doubles */
static double berr(const mbla_csc *A, const mbla_csc *E, double nA, double nE, double lr, double li, const double *vr,
                   const double *vi, double *w)
{
    int n = A->n;
    double *Avr = w, *Avi = w + n, *Evr = w + 2 * n, *Evi = w + 3 * n;
    memset(w, 0, (size_t)4 * n * sizeof *w);
    csc_axpy(A, 1, vr, Avr), csc_axpy(A, 1, vi, Avi), csc_axpy(E, 1, vr, Evr), csc_axpy(E, 1, vi, Evi);
    double r = 0, nv = 0;
    for (int i = 0; i < n; i++) {
        double rr = Avr[i] - (lr * Evr[i] - li * Evi[i]), ri = Avi[i] - (lr * Evi[i] + li * Evr[i]);
        r = hypot(r, hypot(rr, ri));
        nv = hypot(nv, hypot(vr[i], vi[i]));
    }
    double d = (nA + hypot(lr, li) * nE) * nv;
    return d > 0 ? r / d : INFINITY;
}

typedef struct {
    double re, im, dist, be;
    int src, conj; /* pair of the real form; 0: theta + i si with a + i b, 1: conj(theta) + i si */
} cand;

static int cand_cmp(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    return x->dist < y->dist ? -1 : x->dist > y->dist ? 1 : x->src - y->src;
}

/* The complex shift: see the opening comment. */
static int sinv_complex(const mbla_csc *A, const mbla_csc *E, double sr, double si, int k, const mbla_eigs_opts *opts,
                        double *lre, double *lim, double *Vre, double *Vim, int ldv, int *nconv, mbl_status *st)
{
    int n = A->n, rc = 0, rank = plugin_rank();
    PetscInt N = 2 * (PetscInt)n;
    int kk = 2 * k < N - 2 ? 2 * k : (int)N - 2;
    Mat MA = NULL, MB = NULL;
    double *kr = malloc(((size_t)kk + 1) * sizeof *kr), *ki = malloc(((size_t)kk + 1) * sizeof *ki);
    double *Xr = NULL, *Xi = NULL, *w = NULL, *pick = malloc(((size_t)2 * k + 2) * sizeof *pick);
    cand *cd = malloc(((size_t)2 * kk + 1) * sizeof *cd);
    if (rank == 0) {
        Xr = malloc(((size_t)N * kk + 1) * sizeof *Xr), Xi = malloc(((size_t)N * kk + 1) * sizeof *Xi);
        w = malloc(((size_t)6 * n + 1) * sizeof *w);
    }
    if (!kr || !ki || !pick || !cd || (rank == 0 && (!Xr || !Xi || !w))) {
        rc = fail(st, MBL_ENOMEM, "SLEPc: out of memory (complex shift)");
        goto done;
    }
    MPI_Comm comm = PETSC_COMM_WORLD;
    blk ba[4] = {{A, 1.0, 0, 0}, {E, -si, n, 0}, {E, si, 0, n}, {A, 1.0, n, n}};
    blk bb[2] = {{E, 1.0, 0, 0}, {E, 1.0, n, n}};
    if ((rc = dist_mat(comm, ba, 4, N, &MA, st)) || (rc = dist_mat(comm, bb, 2, N, &MB, st))) goto done;
    if ((rc = eps_solve(MA, MB, 0, sr, kk, opts, N, kr, ki, Xr, Xi, nconv, st))) goto done;
    int found = 0;
    if (rank == 0) {
        double nA = mbla_csc_norm1(A), nE = mbla_csc_norm1(E);
        int nc = 0, cd_skip = 0;
        double *vr = w + 4 * (size_t)n, *vi = w + 5 * (size_t)n;
        for (int t = 0; t < kk; t++) {
            /* the conjugate partner (theta-bar, z-bar) of a complex theta, listed next by SLEPc, gives
             * the same two candidates: skipped */
            if (t > 0 && ki[t - 1] != 0.0 && ki[t] == -ki[t - 1] && kr[t] == kr[t - 1] && !(t > 1 && cd_skip))
                { cd_skip = 1; continue; }
            cd_skip = 0;
            const double *zr = Xr + (size_t)t * N, *zi = Xi + (size_t)t * N;
            for (int h = 0; h < (ki[t] != 0.0 ? 2 : 1); h++) {
                double lr = kr[t], li = (h ? -ki[t] : ki[t]) + si;
                for (int i = 0; i < n; i++) { /* a = zr[:n] + i zi[:n], b = zr[n:] + i zi[n:] */
                    double ar = zr[i], ai = zi[i], br = zr[n + i], bi = zi[n + i];
                    vr[i] = h ? ar + bi : ar - bi;
                    vi[i] = h ? br - ai : ai + br;
                }
                double b = berr(A, E, nA, nE, lr, li, vr, vi, w);
                if (b <= SLEPC_CPLX_BERR) cd[nc++] = (cand){lr, li, hypot(lr - sr, li - si), b, t, h};
            }
        }
        qsort(cd, (size_t)nc, sizeof *cd, cand_cmp);
        for (int c = 0; c < nc && found < k; c++) {
            /* a real theta is a double eigenvalue of the real form (theta and its conjugate) and may
             * be returned twice: one lambda (a genuine double eigenvalue with Im lambda = si exactly is
             * then listed once) */
            int dup = 0;
            for (int f = 0; f < c && !dup; f++)
                dup = ki[cd[c].src] == 0.0 && ki[cd[f].src] == 0.0 &&
                      fabs(cd[f].re - cd[c].re) <= 1e-8 * fmax(1.0, fabs(cd[c].re));
            if (dup) continue;
            const double *zr = Xr + (size_t)cd[c].src * N, *zi = Xi + (size_t)cd[c].src * N;
            double *ur = Vre + (size_t)found * ldv, *ui = Vim + (size_t)found * ldv;
            for (int i = 0; i < n; i++) {
                double ar = zr[i], ai = zi[i], br = zr[n + i], bi = zi[n + i];
                ur[i] = cd[c].conj ? ar + bi : ar - bi;
                ui[i] = cd[c].conj ? br - ai : ai + br;
            }
            unit(n, ur, ui);
            lre[found] = cd[c].re, lim[found] = cd[c].im;
            pick[2 * found] = cd[c].re, pick[2 * found + 1] = cd[c].im;
            found++;
        }
    }
    MPI_Bcast(&found, 1, MPI_INT, 0, comm);
    MPI_Bcast(pick, 2 * found, MPI_DOUBLE, 0, comm);
    for (int f = 0; f < found; f++) lre[f] = pick[2 * f], lim[f] = pick[2 * f + 1];
    if (nconv) *nconv = found;
    if (found < k)
        rc = fail(st, MBL_ENOCONV, "SLEPc: the complex shift's real form gave %d of %d eigenvalues", found, k);
done:
    if (MA) MatDestroy(&MA);
    if (MB) MatDestroy(&MB);
    free(kr), free(ki), free(Xr), free(Xi), free(w), free(pick), free(cd);
    return rc;
}

static int arg_check(const mbla_csc *A, const mbla_csc *E, int k, int kmax, const char *fn, mbl_status *st)
{
    if (!A || !E || A->m != A->n || E->m != A->n || E->n != A->n)
        return fail(st, MBL_EDIM, "%s: the pencil must be two square matrices of one order", fn);
    if (k < 1 || k > kmax) return fail(st, MBL_EDIM, "%s: k = %d outside [1, %d] (n = %d)", fn, k, kmax, A->n);
    return 0;
}

int par_slepc_sinv(void *ctx, const mbla_csc *A, const mbla_csc *E, double sr, double si, int k,
                      const mbla_eigs_opts *opts, double *lre, double *lim, double *Vre, double *Vim, int ldv,
                      int *nconv, mbl_status *st)
{
    (void)ctx;
    int n = A ? A->n : 0, rc = arg_check(A, E, k, n - 2, "par_slepc_sinv", st), rank = plugin_rank();
    if (rc) return rc;
    if (nconv) *nconv = 0;
    if (rank == 0 && (!Vre || !Vim || ldv < n))
        return fail(st, MBL_EARG, "par_slepc_sinv: Vre, Vim (ld >= %d) are required on rank 0", n);
    if (!isfinite(sr) || !isfinite(si)) return fail(st, MBL_EARG, "par_slepc_sinv: shift is not finite");
    if (si != 0.0) return sinv_complex(A, E, sr, si, k, opts, lre, lim, Vre, Vim, ldv, nconv, st);
    Mat MA = NULL, MB = NULL;
    double *Xr = NULL, *Xi = NULL;
    if (rank == 0 && ldv != n) { /* gather contiguous, then copy */
        Xr = malloc(((size_t)n * k + 1) * sizeof *Xr), Xi = malloc(((size_t)n * k + 1) * sizeof *Xi);
        if (!Xr || !Xi) {
            free(Xr), free(Xi);
            return fail(st, MBL_ENOMEM, "SLEPc: out of memory (eigenvectors)");
        }
    }
    blk ba = {A, 1.0, 0, 0}, bb = {E, 1.0, 0, 0};
    MPI_Comm comm = PETSC_COMM_WORLD;
    if (!(rc = dist_mat(comm, &ba, 1, n, &MA, st)) && !(rc = dist_mat(comm, &bb, 1, n, &MB, st)))
        rc = eps_solve(MA, MB, 0, sr, k, opts, n, lre, lim, Xr ? Xr : Vre, Xi ? Xi : Vim, nconv, st);
    if (!rc && rank == 0)
        for (int t = 0; t < k; t++) {
            double *ur = Vre + (size_t)t * ldv, *ui = Vim + (size_t)t * ldv;
            if (Xr) memcpy(ur, Xr + (size_t)t * n, (size_t)n * sizeof *ur), memcpy(ui, Xi + (size_t)t * n, (size_t)n * sizeof *ui);
            unit(n, ur, ui);
        }
    if (MA) MatDestroy(&MA);
    if (MB) MatDestroy(&MB);
    free(Xr), free(Xi);
    return rc;
}

int par_slepc_sym_sinv(void *ctx, const mbla_csc *K, const mbla_csc *B, double sigma, int k,
                          const mbla_eigs_opts *opts, double *w, double *V, int ldv, int *nconv, mbl_status *st)
{
    (void)ctx;
    int n = K ? K->n : 0, rc = arg_check(K, B, k, n - 1, "par_slepc_sym_sinv", st), rank = plugin_rank();
    if (rc) return rc;
    if (nconv) *nconv = 0;
    if (rank == 0 && (!V || ldv < n))
        return fail(st, MBL_EARG, "par_slepc_sym_sinv: V (ld >= %d) is required on rank 0", n);
    if (!isfinite(sigma)) return fail(st, MBL_EARG, "par_slepc_sym_sinv: shift is not finite");
    Mat MK = NULL, MB = NULL;
    double *X = NULL, *ki = malloc(((size_t)k + 1) * sizeof *ki);
    if (!ki || (rank == 0 && ldv != n && !(X = malloc(((size_t)n * k + 1) * sizeof *X)))) {
        free(ki);
        return fail(st, MBL_ENOMEM, "SLEPc: out of memory (eigenvectors)");
    }
    blk bk = {K, 1.0, 0, 0}, bb = {B, 1.0, 0, 0};
    MPI_Comm comm = PETSC_COMM_WORLD;
    if (!(rc = dist_mat(comm, &bk, 1, n, &MK, st)) && !(rc = dist_mat(comm, &bb, 1, n, &MB, st))) {
        /* symmetric by the caller's promise: MUMPS may use it in its analysis */
        MatSetOption(MK, MAT_SYMMETRIC, PETSC_TRUE), MatSetOption(MB, MAT_SYMMETRIC, PETSC_TRUE);
        rc = eps_solve(MK, MB, 1, sigma, k, opts, n, w, ki, X ? X : V, NULL, nconv, st);
    }
    if (!rc && rank == 0)
        for (int t = 0; t < k; t++) {
            double *u = V + (size_t)t * ldv;
            if (X) memcpy(u, X + (size_t)t * n, (size_t)n * sizeof *u);
            unit(n, u, NULL);
        }
    if (MK) MatDestroy(&MK);
    if (MB) MatDestroy(&MB);
    free(X), free(ki);
    return rc;
}

/* ---- life cycle ---------------------------------------------------------------------------- */

static int slepc_started; /* 1 when this plugin initialized SLEPc (and so finalizes it) */

int par_slepc_init(mbl_status *st)
{
    PetscBool up = PETSC_FALSE;
    SlepcInitialized(&up);
    if (up) return 0;
    PetscErrorCode e = SlepcInitializeNoArguments();
    if (e) return fail(st, MBL_ELIB, "SLEPc: SlepcInitialize failed (PETSc error %d)", (int)e);
    /* errors come back as codes and one-line messages (mbl_status), never printed by PETSc */
    PetscPushErrorHandler(keep_error, NULL);
    slepc_started = 1;
    return 0;
}

void par_slepc_finalize(void)
{
    if (!slepc_started) return;
    slepc_started = 0;
    SlepcFinalize();
}

int par_slepc_backend(mbla_eigs_backend *be, mbl_status *st)
{
    int rc = par_slepc_init(st);
    if (rc) return rc;
    memset(be, 0, sizeof *be);
    be->name = "slepc";
    be->what = "SLEPc (Krylov-Schur, MUMPS)";
    be->root = plugin_rank() == 0;
    be->sinv = par_slepc_sinv;
    be->sym_sinv = par_slepc_sym_sinv;
    return 0;
}
