/* The SLEPc engine of the sparse eigenproblems (src/par/slepc.c) against ARPACK + KLU on the same
 * model, run under mpiexec -n P: every rank loads the model and builds the pencil, the SLEPc solve
 * is collective, rank 0 also runs the ARPACK path alone and compares (eigenvalues matched to the
 * nearest, relative difference <= TOL; mode shapes: MAC >= 1 - 1e-8; SLEPc named in the notes).
 * usage: test_slepc MODEL [NEV [SHIFT [SHIFT_IM [TOL]]]]   (defaults 20, the library's, 0, 1e-10)
 * Exits 0 on every rank when rank 0's comparison passes, 1 otherwise. */
#include <complex.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/mblin.h"
#include "par/slepc.h"

static int run(const char *path, int nev, double shift, double shift_im, int backend, const mbla_eigs_backend *be,
               mbl_linear **lin, mbl_status *st)
{
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    int rc = mbl_model_load_file(path, NULL, 0, &md, st);
    if (!rc) rc = mbl_operating_point(md, NULL, &pt, st);
    if (!rc) {
        mbl_lin_options o;
        mbl_lin_options_default(&o);
        o.nev = nev, o.partial = MBL_PARTIAL_ALWAYS;
        if (shift != 0.0) o.shift = shift;
        o.shift_im = shift_im;
        if (backend) o.eigs_backend = be;
        rc = mbl_linearize(md, pt, &o, lin, st);
    }
    mbl_point_free(pt);
    mbl_model_free(md);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_slepc MODEL [NEV [SHIFT [SHIFT_IM [TOL]]]]\n");
        return 2;
    }
    const char *path = argv[1];
    int nev = argc > 2 ? atoi(argv[2]) : 20;
    double shift = argc > 3 ? atof(argv[3]) : 0.0, shift_im = argc > 4 ? atof(argv[4]) : 0.0;
    double tol = argc > 5 ? atof(argv[5]) : 1e-10;
    mbl_status st;
    mbla_eigs_backend be;
    if (par_slepc_backend(&be, &st)) {
        fprintf(stderr, "test_slepc: %s\n", st.msg);
        return 1;
    }
    int rank = 0, size = 1, ok = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    mbl_linear *ls = NULL, *la = NULL;
    if (run(path, nev, shift, shift_im, 1, &be, &ls, &st)) {
        fprintf(stderr, "test_slepc: rank %d: SLEPc path: %s\n", rank, st.msg);
        ok = 0;
    }
    if (rank == 0 && ok) {
        if (run(path, nev, shift, shift_im, 0, NULL, &la, &st)) {
            fprintf(stderr, "test_slepc: ARPACK path: %s\n", st.msg);
            ok = 0;
        } else if (la->spectrum->neig != ls->spectrum->neig || la->n != ls->n) {
            fprintf(stderr, "test_slepc: %d eigenvalues from SLEPc, %d from ARPACK\n", ls->spectrum->neig,
                    la->spectrum->neig);
            ok = 0;
        } else if (!strstr(ls->notes, "SLEPc")) {
            fprintf(stderr, "test_slepc: the notes do not name SLEPc: %s\n", ls->notes);
            ok = 0;
        } else {
            const mbl_lin_spectrum *sa = la->spectrum, *ss = ls->spectrum;
            double worst = 0, worst_mac = 0;
            int n = la->n;
            for (int j = 0; j < sa->neig; j++) {
                double complex a = sa->re[j] + I * sa->im[j];
                int best = -1;
                double d = INFINITY;
                for (int t = 0; t < ss->neig; t++) {
                    double e = cabs(a - (ss->re[t] + I * ss->im[t]));
                    if (e < d) d = e, best = t;
                }
                double rel = d / fmax(1.0, cabs(a));
                worst = fmax(worst, rel);
                /* MAC of the mode shapes (complex) */
                double complex dot = 0;
                double na = 0, ns = 0;
                for (int c = 0; c < n; c++) {
                    double complex x = sa->vre[c + (size_t)j * n] + I * sa->vim[c + (size_t)j * n];
                    double complex y = ss->vre[c + (size_t)best * n] + I * ss->vim[c + (size_t)best * n];
                    dot += conj(x) * y, na += creal(conj(x) * x), ns += creal(conj(y) * y);
                }
                double mac = na > 0 && ns > 0 ? creal(conj(dot) * dot) / (na * ns) : 0;
                /* a multiple eigenvalue's vectors are any basis of its eigenspace: no MAC */
                int multiple = 0;
                for (int t = 0; t < sa->neig; t++)
                    multiple |= t != j && cabs(a - (sa->re[t] + I * sa->im[t])) <= 1e-8 * fmax(1.0, cabs(a));
                if (multiple) mac = 1;
                worst_mac = fmax(worst_mac, 1 - mac);
                if (rel > tol || 1 - mac > 1e-8) {
                    fprintf(stderr, "test_slepc: eigenvalue %d: ARPACK %.16g%+.16gi, SLEPc %.16g%+.16gi (rel %.3g, 1 - MAC %.3g)\n",
                            j + 1, sa->re[j], sa->im[j], ss->re[best], ss->im[best], rel, 1 - mac);
                    ok = 0;
                }
            }
            printf("test_slepc: %s on %d rank(s): %d eigenvalues, worst relative difference %.3g, worst 1 - MAC %.3g "
                   "(first %.12g%+.12gi)\n",
                   path, size, sa->neig, worst, worst_mac, ss->re[0], ss->im[0]);
        }
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    mbl_linear_free(ls);
    mbl_linear_free(la);
    par_slepc_finalize();
    return ok ? 0 : 1;
}
