/* The MPI part of the plugin libmblin_par.so (src/par/par.h, docs/parallel.md): initialization,
 * rank and size, the gathers the sweep and the error reports use, the agreed exit status. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <mpi.h>
#include <string.h>

#include "par/par.h"
#ifdef MBLIN_PAR_SLEPC
#include "par/slepc.h"
#endif

static int par_err(mbl_status *st, int mpi_rc, const char *what)
{
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(mpi_rc, s, &len) != MPI_SUCCESS) snprintf(s, sizeof s, "MPI error %d", mpi_rc);
    return mbl_error(st, MBL_EIO, "%s failed: %s", what, s);
}

static int par_init(mbl_status *st)
{
    int inited = 0;
    MPI_Initialized(&inited);
    if (inited) return 0;
    /* a rank waiting in a collective (the sweep's gather, while slower ranks compute) yields its
     * core instead of spinning on it: ranks often share a machine with other ranks or with their
     * own sweep threads (docs/parallel.md). The user's setting wins. */
    if (!getenv("OMPI_MCA_mpi_yield_when_idle")) setenv("OMPI_MCA_mpi_yield_when_idle", "1", 0);
    int provided = 0;
    int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
    if (rc != MPI_SUCCESS) return par_err(st, rc, "MPI_Init_thread");
    /* errors come back as codes (MPI_ERRORS_ARE_FATAL would end the process without a message of ours) */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    return 0;
}

static int par_rank(void)
{
    int r = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

static int par_size(void)
{
    int s = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &s);
    return s;
}

static int par_finalize(int code)
{
    int all = code;
    if (MPI_Allreduce(&code, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS) all = code ? code : 1;
#ifdef MBLIN_PAR_SLEPC
    par_slepc_finalize(); /* before MPI_Finalize */
#endif
    MPI_Finalize();
    return all;
}

static void par_abort(int code) { MPI_Abort(MPI_COMM_WORLD, code ? code : 1); }

/* MPI_Gatherv of n items of type t (size bytes each) to rank 0; *all mbl_malloc'ed there. The
 * lengths go first (64-bit), and rank 0 tells every rank whether it can take the whole (the
 * allocation, MPI's int counts), so that every rank returns the same failure instead of waiting. */
static int gather_any(const void *buf, size_t n, MPI_Datatype t, size_t size, void **all, size_t *counts,
                      mbl_status *st)
{
    *all = NULL;
    int r = par_rank(), p = par_size();
    unsigned long long mine = n, *lens = NULL;
    int *cnt = NULL, *disp = NULL;
    if (r == 0) {
        lens = mbl_malloc(sizeof *lens * (size_t)p);
        cnt = mbl_malloc(sizeof *cnt * (size_t)p);
        disp = mbl_malloc(sizeof *disp * (size_t)p);
        if (!lens || !cnt || !disp) par_abort(1); /* a few bytes per rank: nothing sensible is left */
    }
    int rc = MPI_Gather(&mine, 1, MPI_UNSIGNED_LONG_LONG, lens, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    /* verdict: 0 ok, 1 a part or the whole above INT_MAX items, 2 out of memory on rank 0 */
    unsigned long long verdict[3] = {0, 0, 0}; /* verdict, total, the largest part */
    char *dst = NULL;
    if (rc == MPI_SUCCESS && r == 0) {
        for (int k = 0; k < p; k++) {
            verdict[1] += lens[k];
            if (lens[k] > verdict[2]) verdict[2] = lens[k];
        }
        if (verdict[1] > INT_MAX) verdict[0] = 1;
        else if (!(dst = mbl_malloc((size_t)(verdict[1] ? verdict[1] : 1) * size))) verdict[0] = 2;
        for (int k = 0, off = 0; k < p && !verdict[0]; k++) {
            cnt[k] = (int)lens[k], disp[k] = off, off += cnt[k];
            counts[k] = (size_t)lens[k];
        }
    }
    if (rc == MPI_SUCCESS) rc = MPI_Bcast(verdict, 3, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    if (rc == MPI_SUCCESS && !verdict[0]) rc = MPI_Gatherv(buf, (int)n, t, dst, cnt, disp, t, 0, MPI_COMM_WORLD);
    mbl_free(lens), mbl_free(cnt), mbl_free(disp);
    if (rc != MPI_SUCCESS || verdict[0]) mbl_free(dst);
    if (rc != MPI_SUCCESS) return par_err(st, rc, "gathering the results to rank 0 (MPI_Gatherv)");
    if (verdict[0] == 1)
        return mbl_error(st, MBL_EDIM, "the gathered results (%llu items, %llu from one rank) exceed MPI's count limit 2^31 - 1",
                         verdict[1], verdict[2]);
    if (verdict[0] == 2)
        return mbl_error(st, MBL_ENOMEM, "out of memory on rank 0 for the gathered results (%llu bytes)",
                         verdict[1] * (unsigned long long)size);
    *all = dst;
    return 0;
}

static int par_gather(const double *buf, size_t n, double **all, size_t *counts, mbl_status *st)
{
    void *a = NULL;
    int rc = gather_any(buf, n, MPI_DOUBLE, sizeof(double), &a, counts, st);
    *all = a;
    return rc;
}

static int par_gather_text(const char *text, size_t len, char **all, size_t *lens, mbl_status *st)
{
    void *a = NULL;
    int rc = gather_any(text, len, MPI_CHAR, 1, &a, lens, st);
    *all = a;
    return rc;
}

/* The table the tool resolves with dlsym (MBL_PAR_SYMBOL). */
__attribute__((visibility("default"))) const mbl_par mblin_par_entry = {
    .abi = MBL_PAR_ABI,
#ifdef MBLIN_PAR_SLEPC
    .flags = MBL_PAR_HAS_MPI | MBL_PAR_HAS_SLEPC,
#else
    .flags = MBL_PAR_HAS_MPI,
#endif
    .init = par_init,
    .finalize = par_finalize,
    .rank = par_rank,
    .size = par_size,
    .gather = par_gather,
    .gather_text = par_gather_text,
    .abort = par_abort,
#ifdef MBLIN_PAR_SLEPC
    .eigs_backend = par_slepc_backend,
#endif
};
