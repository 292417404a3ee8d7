/* Sizes of a model's compiled tapes (bench for the expression engine's sharing, issue 15):
 * coordinates, Jacobian entries, instructions of the residual tape F and of the Jacobian tape.
 * usage: tape_sizes MODEL... */
#include <stdio.h>

#include "mblin/mblin.h"
#include "model/model_internal.h"

int main(int argc, char **argv)
{
    printf("| model | n | m | Jacobian entries | F tape instr. | Jacobian tape instr. | instr. / entry |\n");
    printf("|---|---|---|---|---|---|---|\n");
    for (int a = 1; a < argc; a++) {
        mbl_status st;
        mbl_model *md = NULL;
        if (mbl_model_load_file(argv[a], NULL, 0, &md, &st)) {
            fprintf(stderr, "tape_sizes: %s\n", st.msg);
            continue;
        }
        size_t nf = mblx_tape_ninstr(md->tape_F), nj = mblx_tape_ninstr(md->tape_jac);
        printf("| %s | %d | %d | %d | %zu | %zu | %.1f |\n", argv[a], md->n, md->m, md->jac.nz, nf, nj,
               md->jac.nz ? (double)nj / md->jac.nz : 0.0);
        mbl_model_free(md);
    }
    return 0;
}
