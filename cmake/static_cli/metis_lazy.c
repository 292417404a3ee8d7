/* METIS loaded when first needed, for the statically linked command-line tool
 * (cmake/static_cli.cmake). Debian ships METIS only as a shared library (libmetis.so.5), and the
 * static CHOLMOD and SPQR call two of its functions, so every run of the tool loaded it: one more
 * shared object to open, map, relocate and search for every symbol lookup, ten page faults,
 * for a library that only the nested-dissection orderings of large sparse factorizations use
 * (CHOLMOD's and SPQR's default orderings try METIS after AMD when AMD's fill is high). This file
 * defines the two entry points; the first call dlopen()s libmetis.so.5 (once, also when sweep
 * threads factorize at the same time) and forwards to it, so a run that orders nothing by METIS
 * never loads it. If it cannot be loaded, the call says so on stderr and returns METIS's
 * out-of-memory code, on which CHOLMOD and SPQR fail with an error (never a silent other
 * ordering). The library itself (libmblin) still links libmetis directly.
 *
 * The arguments are all pointers (METIS's idx_t arrays and scalars, whose width this file need
 * not know) and the result is METIS's int status. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#define METIS_LAZY_ERROR_MEMORY (-3) /* METIS_ERROR_MEMORY of metis.h (METIS 5) */

typedef int (*metis_fn)(void *, void *, void *, void *, void *, void *, void *);

static metis_fn node_nd, vertex_separator;
static pthread_once_t m_once = PTHREAD_ONCE_INIT;

static void m_load(void)
{
    void *lib = dlopen("libmetis.so.5", RTLD_NOW | RTLD_LOCAL);
    if (lib) {
        *(void **)&node_nd = dlsym(lib, "METIS_NodeND");
        *(void **)&vertex_separator = dlsym(lib, "METIS_ComputeVertexSeparator");
    }
    if (!node_nd || !vertex_separator) {
        const char *why = dlerror();
        fprintf(stderr, "mblin: METIS (libmetis.so.5) could not be loaded: %s\n", why ? why : "symbol missing");
        node_nd = vertex_separator = NULL;
    }
}

int METIS_NodeND(void *nvtxs, void *xadj, void *adjncy, void *vwgt, void *options, void *perm, void *iperm);
int METIS_ComputeVertexSeparator(void *nvtxs, void *xadj, void *adjncy, void *vwgt, void *options, void *sepsize,
                                 void *part);

int METIS_NodeND(void *nvtxs, void *xadj, void *adjncy, void *vwgt, void *options, void *perm, void *iperm)
{
    pthread_once(&m_once, m_load);
    return node_nd ? node_nd(nvtxs, xadj, adjncy, vwgt, options, perm, iperm) : METIS_LAZY_ERROR_MEMORY;
}

int METIS_ComputeVertexSeparator(void *nvtxs, void *xadj, void *adjncy, void *vwgt, void *options, void *sepsize,
                                 void *part)
{
    pthread_once(&m_once, m_load);
    return vertex_separator ? vertex_separator(nvtxs, xadj, adjncy, vwgt, options, sepsize, part)
                            : METIS_LAZY_ERROR_MEMORY;
}
