/* The MPI plugin's entry points (docs/parallel.md, "Architecture").
 *
 * The command-line tool is linked statically and starts in a few milliseconds; it never links
 * MPI, PETSc or SLEPc. Their code lives in the shared library libmblin_par.so (src/par/, CMake
 * option MBLIN_MPI), which the tool loads with dlopen (cli/par_load.c) only when it runs under
 * mpirun/mpiexec (OMPI_COMM_WORLD_SIZE, PMIX_RANK or PMI_RANK in the environment) or when an option
 * asks for it. The plugin exports one symbol, MBL_PAR_SYMBOL, a `const mbl_par` table; it is not
 * linked against libmblin: the mbl_* functions it calls are the tool's own (the tool exports its
 * mbl* symbols to loaded libraries, cmake/par.cmake), so there is one copy of the library in the
 * process. A function the plugin calls must therefore be linked into the tool (referenced by it).
 *
 * Conventions: every function returning int returns 0 or a negative MBL_E* code with the message
 * in st (when st is not NULL). "Collective" functions must be called by every rank, in the same
 * order; a rank that fails locally still makes the call (with its error), so that no rank waits
 * for one that has given up. */
#ifndef MBLIN_PAR_H
#define MBLIN_PAR_H

#include <stddef.h>

#include "mblin/status.h"

struct mbla_eigs_backend;

#ifdef __cplusplus
extern "C" {
#endif

#define MBL_PAR_SYMBOL "mblin_par_entry"
/* The tool and the plugin are built together; raise MBL_PAR_ABI whenever the table changes (an
 * entry appended too), so that a stale plugin found in a libdir is refused with one line.
 * 2: eigs_backend (the SLEPc eigensolver). */
#define MBL_PAR_ABI 2
#define MBL_PAR_LIBNAME "libmblin_par.so"

typedef struct mbl_par {
    int abi;        /* MBL_PAR_ABI of the plugin */
    unsigned flags; /* MBL_PAR_HAS_*: the parts built into the plugin */

    /* MPI_Init_thread (MPI_THREAD_FUNNELED: sweep threads never call MPI); the only place MPI is
     * initialized. Called once, before any other entry. */
    int (*init)(mbl_status *st);
    /* Collective: the exit status all ranks agree on (the largest of code over the ranks), then
     * MPI_Finalize. The last call. */
    int (*finalize)(int code);
    int (*rank)(void);
    int (*size)(void);
    /* Collective: every rank sends n doubles; on rank 0 *all (mbl_malloc'ed, the caller frees it
     * with mbl_free) receives them concatenated in rank order and counts[r] (size entries, caller's
     * array) the length of rank r's part; on the other ranks *all = NULL. Parts above 2^31 - 1
     * doubles are refused on every rank (MBL_EDIM). */
    int (*gather)(const double *buf, size_t n, double **all, size_t *counts, mbl_status *st);
    /* Collective: every rank sends len bytes of text; rank 0 gets them as gather does (bytes). */
    int (*gather_text)(const char *text, size_t len, char **all, size_t *lens, mbl_status *st);
    /* End every rank now with code (MPI_Abort): the last resort where a collective cannot be
     * reached. */
    void (*abort)(int code);
    /* The SLEPc eigensolver (src/par/slepc.c, MBLIN_SLEPC; NULL when the plugin was built without
     * it): initializes SLEPc (finalized by finalize) and fills *be with the engine of the sparse
     * eigenproblems (include/mblin/la.h; its calls are collective, eigenvectors on rank 0 only). */
    int (*eigs_backend)(struct mbla_eigs_backend *be, mbl_status *st);
} mbl_par;

enum { MBL_PAR_HAS_MPI = 1, MBL_PAR_HAS_SLEPC = 2 };

#ifdef __cplusplus
}
#endif
#endif
