/* cmake/static_cli/metis_lazy.c: METIS is loaded at the first call, not before, and the call reaches METIS with
 * its arguments in order: the nested-dissection ordering of a 9 x 7 grid graph through the lazy
 * entry point is a permutation with its inverse, and the same as METIS's own function (dlsym'd
 * from libmetis.so.5 here) gives; the vertex separator likewise. This program links nothing but
 * the lazy file (no libmetis), as the static command-line tool does. Debian's METIS 5 has 32-bit
 * idx_t (IDXTYPEWIDTH 32). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

#include "test.h"

int METIS_NodeND(void *nvtxs, void *xadj, void *adjncy, void *vwgt, void *options, void *perm, void *iperm);
int METIS_ComputeVertexSeparator(void *nvtxs, void *xadj, void *adjncy, void *vwgt, void *options, void *sepsize,
                                 void *part);

enum { NX = 9, NY = 7, NV = NX * NY };

static int metis_mapped(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    int found = 0;
    if (!f) return -1;
    while (fgets(line, sizeof line, f))
        if (strstr(line, "libmetis")) found = 1;
    fclose(f);
    return found;
}

/* the grid's adjacency (CSR, no self loops) */
static void grid(int32_t *xadj, int32_t *adj)
{
    int k = 0;
    for (int j = 0; j < NY; j++)
        for (int i = 0; i < NX; i++) {
            xadj[j * NX + i] = k;
            if (i > 0) adj[k++] = j * NX + i - 1;
            if (i < NX - 1) adj[k++] = j * NX + i + 1;
            if (j > 0) adj[k++] = (j - 1) * NX + i;
            if (j < NY - 1) adj[k++] = (j + 1) * NX + i;
        }
    xadj[NV] = k;
}

TEST(lazy_node_nd)
{
    int32_t xadj[NV + 1], adj[4 * NV], n = NV, perm[NV], iperm[NV], perm2[NV], iperm2[NV];
    grid(xadj, adj);
    CHECK_EQ_INT(metis_mapped(), 0);
    CHECK_EQ_INT(METIS_NodeND(&n, xadj, adj, NULL, NULL, perm, iperm), 1); /* METIS_OK */
    CHECK_EQ_INT(metis_mapped(), 1);
    int seen[NV] = {0};
    for (int i = 0; i < NV; i++) {
        CHECK(perm[i] >= 0 && perm[i] < NV);
        if (perm[i] >= 0 && perm[i] < NV) {
            seen[perm[i]]++;
            CHECK_EQ_INT(iperm[perm[i]], i);
        }
    }
    for (int i = 0; i < NV; i++) CHECK_EQ_INT(seen[i], 1);
    void *lib = dlopen("libmetis.so.5", RTLD_NOW | RTLD_LOCAL);
    CHECK(lib != NULL);
    if (!lib) return;
    int (*direct)(void *, void *, void *, void *, void *, void *, void *);
    *(void **)&direct = dlsym(lib, "METIS_NodeND");
    CHECK(direct != NULL && direct != METIS_NodeND);
    if (direct) {
        CHECK_EQ_INT(direct(&n, xadj, adj, NULL, NULL, perm2, iperm2), 1);
        CHECK(memcmp(perm, perm2, sizeof perm) == 0 && memcmp(iperm, iperm2, sizeof iperm) == 0);
    }
    dlclose(lib);
}

TEST(lazy_separator)
{
    int32_t xadj[NV + 1], adj[4 * NV], n = NV, sep = -1, part[NV], sep2 = -1, part2[NV];
    grid(xadj, adj);
    CHECK_EQ_INT(METIS_ComputeVertexSeparator(&n, xadj, adj, NULL, NULL, &sep, part), 1);
    /* a separator of a 9 x 7 grid: at least one full column or row of it (7), far below all 63 */
    CHECK(sep >= NY && sep < NV / 2);
    int in_sep = 0;
    for (int i = 0; i < NV; i++) {
        CHECK(part[i] >= 0 && part[i] <= 2);
        in_sep += part[i] == 2;
    }
    CHECK_EQ_INT(in_sep, sep);
    void *lib = dlopen("libmetis.so.5", RTLD_NOW | RTLD_LOCAL);
    CHECK(lib != NULL);
    if (!lib) return;
    int (*direct)(void *, void *, void *, void *, void *, void *, void *);
    *(void **)&direct = dlsym(lib, "METIS_ComputeVertexSeparator");
    if (direct) {
        CHECK_EQ_INT(direct(&n, xadj, adj, NULL, NULL, &sep2, part2), 1);
        CHECK(sep == sep2 && memcmp(part, part2, sizeof part) == 0);
    }
    dlclose(lib);
}

int main(void)
{
    RUN(lazy_node_nd);
    RUN(lazy_separator);
    return test_summary("metis_lazy");
}
