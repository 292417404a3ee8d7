/* Sizes of a model's compiled tapes (bench for the expression engine's sharing, issue 15):
 * coordinates, Jacobian entries, instructions of the residual tape F and of the Jacobian tape,
 * and the time of one evaluation of each (median of 11 batches; wall time, or the process's CPU
 * time with MBLIN_BENCH_CLOCK=cpu), at a point with every symbol nonzero.
 * usage: tape_sizes MODEL... */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_clock.h"

#include "mblin/mblin.h"
#include "model/model_internal.h"

/* median over 11 batches of the time of one evaluation of t, in microseconds (-1: it fails) */
static double eval_us(const mblx_tape *t, const double *syms, double *out, double *work)
{
    enum { BATCHES = 11 };
    double per[BATCHES];
    mbl_status st;
    if (mblx_tape_eval(t, syms, out, work, &st)) return -1;
    double t0 = bench_now();
    mblx_tape_eval(t, syms, out, work, &st);
    double once = bench_now() - t0;
    long reps = once > 0 ? (long)(2e-3 / once) : 1000;
    if (reps < 1) reps = 1;
    for (int b = 0; b < BATCHES; b++) {
        t0 = bench_now();
        for (long r = 0; r < reps; r++) mblx_tape_eval(t, syms, out, work, &st);
        per[b] = (bench_now() - t0) / (double)reps;
    }
    qsort(per, BATCHES, sizeof *per, bench_cmp_double);
    return 1e6 * per[BATCHES / 2];
}

int main(int argc, char **argv)
{
    printf("| model | n | m | Jacobian entries | F tape instr. | Jacobian tape instr. | instr. / entry | F eval [us] "
           "| Jacobian eval [us] |\n");
    printf("|---|---|---|---|---|---|---|---|---|\n");
    for (int a = 1; a < argc; a++) {
        mbl_status st;
        mbl_model *md = NULL;
        if (mbl_model_load_file(argv[a], NULL, 0, &md, &st)) {
            fprintf(stderr, "tape_sizes: %s\n", st.msg);
            continue;
        }
        size_t nf = mblx_tape_ninstr(md->tape_F), nj = mblx_tape_ninstr(md->tape_jac);
        double *syms = calloc((size_t)md->nsym + 1, sizeof *syms);
        double *work = calloc(md->work_size + 1, sizeof *work);
        double *out = calloc((size_t)md->nF + (size_t)md->jac.nz + 1, sizeof *out);
        double tf = -1, tj = -1;
        if (syms && work && out) {
            for (int i = 0; i < md->nsym; i++) syms[i] = 0.1 + 0.01 * (i % 17); /* inside every domain we ship */
            for (int i = 0; i < md->np; i++) syms[md->sym_p[i]] = md->pval[i];
            tf = eval_us(md->tape_F, syms, out, work);
            tj = eval_us(md->tape_jac, syms, out, work);
        }
        printf("| %s | %d | %d | %d | %zu | %zu | %.1f | %.2f | %.2f |\n", argv[a], md->n, md->m, md->jac.nz, nf, nj,
               md->jac.nz ? (double)nj / md->jac.nz : 0.0, tf, tj);
        free(syms), free(work), free(out);
        mbl_model_free(md);
    }
    return 0;
}
