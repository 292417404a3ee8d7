/* The end of model_compile (src/model/compile.c, session 33): the cyclic coordinates (no Jacobian
 * entry in q_i's column) found with one unsigned test per entry, and a forward load's Jacobian
 * nodes set to MBLX_NONE by one memset. Checked on examples loaded by default and with the
 * forward Jacobian: md->cyclic against the columns of md->jac counted here, with both kinds
 * present (the rolling disc's and the bicycle's cyclic coordinates), and every node of a forward
 * load's pattern MBLX_NONE (built on request by model_dae_nodes) where the load took the forward
 * path. */
#include <stdlib.h>

#include "mblin/mblin.h"
#include "model/model_internal.h"
#include "fixture.h"

static const char *FILES[] = {"examples/rolling_disc.yaml", "examples/whipple_bicycle_nonlinear.yaml",
                              "examples/fourbar_N300.yaml"};

TEST(cyclic_and_forward_nodes)
{
    int ncyc = 0, nnot = 0, nfwd = 0;
    for (size_t f = 0; f < sizeof FILES / sizeof FILES[0]; f++)
        for (int fwd = 0; fwd < 2; fwd++) {
            mbl_model *md = fixture_model_fwd(FILES[f], NULL, FILES[f], fwd);
            CHECK_MSG(md != NULL, "%s: load", FILES[f]);
            if (!md) continue;
            int jq = model_blk0(md, MBL_BLK_Q);
            char *used = calloc((size_t)md->n + 1, 1);
            for (int p = 0; p < md->jac.nz; p++)
                for (int i = 0; i < md->n; i++) used[i] |= md->jac.col[p] == jq + i;
            CHECK(md->cyclic_known);
            for (int i = 0; i < md->n; i++) {
                CHECK_MSG(md->cyclic[i] == !used[i], "%s (%d): q_%d cyclic %d", FILES[f], fwd, i, md->cyclic[i]);
                ncyc += md->cyclic[i], nnot += !md->cyclic[i];
            }
            free(used);
            if (fwd && !md->tape_jac) { /* the forward path: no nodes until asked */
                nfwd++;
                int none = 1;
                for (int p = 0; p < md->jac.nz; p++) none &= md->jac.node[p] == MBLX_NONE;
                CHECK_MSG(none && md->jac.nz > 0, "%s: forward pattern's nodes", FILES[f]);
            }
            mbl_model_free(md);
        }
    CHECK(ncyc > 0 && nnot > 0 && nfwd > 0);
}

int main(void)
{
    RUN(cyclic_and_forward_nodes);
    return test_summary("compile_pattern");
}
