/* The end of model_compile (src/model/compile.c, session 33): the cyclic coordinates (no Jacobian
 * entry in q_i's column) found with one unsigned test per entry, and a forward load's Jacobian
 * nodes set to MBLX_NONE by one memset. Checked on examples loaded by default and with the
 * forward Jacobian: md->cyclic against the columns of md->jac counted here, with both kinds
 * present (the rolling disc's and the bicycle's cyclic coordinates), and every node of a forward
 * load's pattern MBLX_NONE (built on request by model_dae_nodes) where the load took the forward
 * path. And md->jac0 (session 46): a Jacobian tape that reads no symbol evaluated once and copied
 * at each point: present exactly where the tape reads no symbol, equal bit for bit to the tape's
 * values, and model_eval_jac's values with it equal bit for bit to those without it (the tape
 * evaluated) at random points, on the URDF robots (the tree's term adds to the copied zeros) and
 * on models whose tapes read their symbols (no copy). */
#include <stdlib.h>
#include <string.h>

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

static const char *JFILES[] = {"examples/urdf/arm7.urdf", "examples/urdf/acrobot.urdf", "tests/lin/humanoid30.urdf",
                               "examples/rolling_disc.yaml", "examples/whipple_bicycle_nonlinear.yaml"};

TEST(constant_jacobian_copied)
{
    int ncopied = 0, nread = 0;
    for (size_t f = 0; f < sizeof JFILES / sizeof JFILES[0]; f++) {
        mbl_model *md = fixture_model_fwd(JFILES[f], NULL, JFILES[f], 0);
        CHECK_MSG(md != NULL && md->tape_jac, "%s: load", JFILES[f]);
        if (!md || !md->tape_jac) continue;
        int constant = mblx_tape_nsymbols(md->tape_jac) == 0;
        CHECK_MSG((md->jac0 != NULL) == constant, "%s: copy %d, tape reads no symbol %d", JFILES[f], md->jac0 != NULL,
                  constant);
        ncopied += md->jac0 != NULL, nread += !constant;
        size_t ns = mblx_symbol_count(md->g), nz = (size_t)md->jac.nz;
        mbl_status st;
        double *sv = calloc(ns + 1, sizeof *sv), *w = calloc(md->work_size + 1, sizeof *w);
        double *J1 = calloc(nz + 1, sizeof *J1), *J2 = calloc(nz + 1, sizeof *J2);
        if (md->jac0) {
            CHECK_EQ_INT(mblx_tape_eval(md->tape_jac, sv, J1, w, &st), 0);
            CHECK_MSG(!memcmp(J1, md->jac0, (size_t)md->jac_ntape * sizeof *J1), "%s: the copy is the tape's", JFILES[f]);
        }
        srand(46);
        for (int trial = 0; trial < 5; trial++) {
            for (size_t k = 0; k < ns; k++) sv[k] = -0.7 + 1.4 * rand() / (double)RAND_MAX;
            double *keep = md->jac0;
            md->jac0 = NULL; /* the tape evaluated */
            CHECK_EQ_INT(model_eval_jac(md, sv, J1, w, &st), 0);
            md->jac0 = keep;
            CHECK_EQ_INT(model_eval_jac(md, sv, J2, w, &st), 0);
            CHECK_MSG(!memcmp(J1, J2, nz * sizeof *J1), "%s: point %d: the Jacobian with the copy", JFILES[f], trial);
        }
        free(sv), free(w), free(J1), free(J2);
        mbl_model_free(md);
    }
    CHECK_MSG(ncopied >= 3 && nread >= 2, "copied %d, read %d", ncopied, nread);
}

int main(void)
{
    RUN(cyclic_and_forward_nodes);
    RUN(constant_jacobian_copied);
    return test_summary("compile_pattern");
}
