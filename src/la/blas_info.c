/* mbla_blas_describe: which BLAS the process runs, for `mblin --version` and the benchmarks'
 * headers. Debian's OpenBLAS is built with DYNAMIC_ARCH: it picks its kernels at load time from
 * the CPU (or from the environment variable OPENBLAS_CORETYPE), and on a CPU it does not know it
 * falls back to its generic SSE3 ("Prescott") kernels, which changes both the speed and the last
 * bits of results. openblas_get_config and openblas_get_corename (declared by OpenBLAS's cblas.h)
 * say which were chosen. */
#include "la/la_internal.h"

#include <cblas.h>
#include <stdio.h>
#include <string.h>

int mbla_blas_describe(char *buf, size_t len)
{
    const char *config = openblas_get_config(), *core = openblas_get_corename();
    if (!config) config = "";
    if (!core) core = "unknown";
    /* "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH ...": the name and version first, the options after */
    static const char name[] = "OpenBLAS ";
    size_t n = sizeof name - 1;
    if (strncmp(config, name, n)) return snprintf(buf, len, "%s, %s kernels", config, core);
    const char *opts = strchr(config + n, ' ');
    int ver = opts ? (int)(opts - config) : (int)strlen(config);
    return snprintf(buf, len, "%.*s, %s kernels (%s)", ver, config, core, opts ? opts + 1 : "");
}
