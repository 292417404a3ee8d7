/* The symbolic Jacobians of the outputs, the user states and the drawing's points (compile.c
 * jacobian_unknowns, session 35) seed only the unknowns their rows depend on, where mblx_jacobian
 * was given every unknown: the same entries (rows, columns and nodes, made in the same order)
 * either way. Each model is loaded twice, with the columns cut (the default) and with every
 * unknown seeded (model__jacobian_columns_mode(1), the former path); the two graphs are built by
 * the same steps, so equal node ids mean the same nodes made in the same order. */
#include <stdlib.h>

#include "mblin/mblin.h"
#include "model/compile_modes.h"
#include "model/formulate.h"
#include "model/model_internal.h"
#include "fixture.h"

static const char *FILES[] = {"examples/fourbar_N10.yaml",       "examples/whipple_bicycle_nonlinear.yaml",
                              "examples/slider_pendulum.yaml",   "examples/rolling_disc_speeds.yaml",
                              "examples/double_pendulum_natural.yaml", "examples/fourbar_N300.yaml",
                              "examples/flexible_pendulum_beams.yaml"};

static int same_sjac(const mbl_sjac *a, const mbl_sjac *b)
{
    if (a->nz != b->nz) return 0;
    for (int p = 0; p < a->nz; p++)
        if (a->row[p] != b->row[p] || a->col[p] != b->col[p] || a->node[p] != b->node[p]) return 0;
    return 1;
}

TEST(columns_cut_same_entries)
{
    int ny = 0, nus = 0, ndp = 0;
    size_t cut0 = model__jacobian_columns_mode(0);
    for (size_t f = 0; f < sizeof FILES / sizeof FILES[0]; f++)
        for (int fwd = 0; fwd < 2; fwd++) {
            mbl_model *m[2] = {NULL, NULL};
            for (int all = 0; all < 2; all++) {
                model__jacobian_columns_mode(all);
                m[all] = fixture_model_fwd(FILES[f], NULL, FILES[f], fwd);
                if (m[all] && m[all]->npt) CHECK(model_compile_draw(m[all], NULL) == 0);
            }
            model__jacobian_columns_mode(0);
            CHECK_MSG(m[0] && m[1], "%s: load", FILES[f]);
            if (m[0] && m[1]) {
                CHECK_MSG(same_sjac(&m[0]->yjac, &m[1]->yjac), "%s (%d): outputs' Jacobian", FILES[f], fwd);
                CHECK_MSG(same_sjac(&m[0]->usjac, &m[1]->usjac), "%s (%d): user states' Jacobian", FILES[f], fwd);
                CHECK_MSG(same_sjac(&m[0]->dpjac, &m[1]->dpjac), "%s (%d): drawing's Jacobian", FILES[f], fwd);
                CHECK_MSG(same_sjac(&m[0]->jac, &m[1]->jac), "%s (%d): residuals' Jacobian", FILES[f], fwd);
                CHECK(mblx_node_count(m[0]->g) == mblx_node_count(m[1]->g));
                ny += m[0]->yjac.nz > 0, nus += m[0]->usjac.nz > 0, ndp += m[0]->dpjac.nz > 0;
            }
            mbl_model_free(m[0]), mbl_model_free(m[1]);
        }
    /* every kind present, and the cut taken (by the default loads only) */
    CHECK_MSG(ny > 0 && nus > 0 && ndp > 0, "outputs %d, user states %d, drawings %d", ny, nus, ndp);
    CHECK(model__jacobian_columns_mode(0) > cut0);
}

/* A user state's rows: the cut's columns are exactly the unknowns its entries are in, where each
 * row depends on few of them (a default load's: a forward-mode load colors them, compile.c
 * user_states_jacobian). */
TEST(columns_cut_is_taken_where_few)
{
    size_t before = model__jacobian_columns_mode(0);
    mbl_model *md = fixture_model_fwd("examples/fourbar_N300.yaml", NULL, "fourbar_N300", 0);
    CHECK(md != NULL);
    if (!md) return;
    CHECK(md->usjac.nz > 0 && md->usjac.nz < md->nunk);
    CHECK(model__jacobian_columns_mode(0) > before);
    mbl_model_free(md);
}

int main(void)
{
    RUN(columns_cut_same_entries);
    RUN(columns_cut_is_taken_where_few);
    return test_summary("jac_columns");
}
