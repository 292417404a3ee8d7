/* The term table does a term's whole job (issue 66, item 2; src/model/terms/term.h): every term's
 * entries are consistent with each other (what the generic loops of formulation, compilation,
 * evaluation, checks and sensitivities rely on), and on loaded models each term is present exactly
 * when the model's own data of that term exists (its field, read directly), the shared
 * Jacobian-and-outputs pass taken exactly when the model is a tree with outputs (the rule before
 * the table did it), and the source-level test (model_terms_in_src) true exactly for the
 * mechanisms with a structured term. */
#include <stdio.h>
#include <string.h>

#include "mblin/model.h"
#include "model/formulate.h"
#include "model/terms/term.h"
#include "test.h"

TEST(entries)
{
    for (int t = 0; t < MODEL_NTERMS; t++) {
        const model_term_ops *T = model_terms[t];
        CHECK_MSG(T && T->name && T->present && T->eval && T->exprs && T->work && T->free,
                  "term %d lacks a required entry", t);
        if (!T) continue;
        /* entries past the tape are the term's places, bound by model_compile through remap */
        CHECK_MSG(!T->after_tape == !T->remap, "%s: after_tape %d but remap %s", T->name, T->after_tape,
                  T->remap ? "set" : "NULL");
        CHECK_MSG(!T->param_dep == !T->param_deriv, "%s: param_dep and param_deriv not both set", T->name);
        CHECK_MSG(!T->jac_y || T->outputs_bind, "%s: jac_y without outputs_bind", T->name);
        CHECK_MSG(!T->mass_only == !T->minv && !T->mass_work == !T->minv, "%s: mass_only, mass_work and minv not all set",
                  T->name);
        CHECK_MSG(!T->claim_rows || T->in_src, "%s: claim_rows without in_src", T->name);
        CHECK_MSG(!T->in_src == !T->formulate, "%s: in_src and formulate not both set", T->name);
        for (int u = 0; u < t; u++) CHECK_MSG(model_terms[u] != T, "%s twice in the table", T->name);
    }
}

static int present_count(const mbl_model *md, const model_term_ops *which)
{
    int n = 0;
    for (int t = 0; t < MODEL_NTERMS; t++)
        if (model_terms[t]->present(md)) n += which == NULL || model_terms[t] == which ? 1 : 0;
    return n;
}

TEST(loaded_models)
{
    static const struct {
        const char *path;
        const model_term_ops *term; /* the one term it has */
        int minv;                   /* its mass matrix the tree's alone (model_mass_inverse_ok) */
    } m[] = {{"examples/mech/fourbar_N1.yaml", &model_term_pmech, 0},
             {"examples/mech/slider_pendulum_relative.yaml", &model_term_rtree, 1},
             /* its coupler below a universal joint keeps the symbolic recursion: text mass */
             {"examples/mech/spatial_fourbar_relative.yaml", &model_term_rtree, 0},
             {"examples/flexible_pendulum_beams.yaml", &model_term_ffr, 0},
             {"examples/mech/spatial_beam_pendulum.yaml", &model_term_ffr3, 0},
             {"examples/whipple_bicycle.yaml", NULL, 0}};
    for (size_t i = 0; i < sizeof m / sizeof *m; i++) {
        mbl_status st = {0, ""};
        mbl_model *md = NULL;
        int rc = mbl_model_load_file(m[i].path, NULL, 0, &md, &st);
        CHECK_MSG(rc == 0 && md != NULL, "%s: %s", m[i].path, st.msg);
        if (!md) continue;
        /* the model's own fields, not the table */
        int has[4] = {md->rtn != NULL, md->nffrn > 0, md->nffr3n > 0, md->pmn != NULL};
        const model_term_ops *by_field[4] = {&model_term_rtree, &model_term_ffr, &model_term_ffr3, &model_term_pmech};
        for (int k = 0; k < 4; k++)
            CHECK_MSG(present_count(md, by_field[k]) == has[k], "%s: %s present %d, its field says %d", m[i].path,
                      by_field[k]->name, present_count(md, by_field[k]), has[k]);
        CHECK_MSG(present_count(md, NULL) == (m[i].term != NULL), "%s: %d terms present", m[i].path,
                  present_count(md, NULL));
        if (m[i].term) CHECK_MSG(m[i].term->present(md), "%s: %s absent", m[i].path, m[i].term->name);
        CHECK_MSG(model_eval_jac_y_shared(md) == (md->rtn != NULL && md->ny > 0), "%s: shared pass %d", m[i].path,
                  model_eval_jac_y_shared(md));
        CHECK_MSG(model_mass_inverse_ok(md) == m[i].minv, "%s: mass inverse by the term %d", m[i].path,
                  model_mass_inverse_ok(md));
        mbl_model_free(md);
    }
}

int main(void)
{
    RUN(entries);
    RUN(loaded_models);
    return test_summary("term_table");
}
