/* `routines:` of a mechanism (issue 68; docs/user-routines.md, docs/mechanism-reference.md "User
 * routines"): the entries are read by the model's reader (model/source.c: the keys of a `model:
 * dae` file), their inputs' texts are written at the equation level as a force's value is (the
 * measures DX(..), JQ(..), SLIP(..) expanded; the file positions kept), and their outputs' names
 * are checked against the mechanism's own names. The outputs stay names in every text that uses
 * them: the model layer resolves them (model/routines.c makes each a variable). */
#include <string.h>

#include "mech/mech_internal.h"
#include "model/source.h"

/* the node of input j of routine `name` in the `routines:` mapping rn (NULL when not found) */
static const yaml_node_t *input_node(mech *M, const yaml_node_t *rn, const char *name, int j)
{
    for (yaml_node_pair_t *p = rn->data.mapping.pairs.start; p < rn->data.mapping.pairs.top; p++) {
        yaml_node_t *k = mech_node(M->doc, p->key);
        if (!mech_is_scalar(k) || strcmp(mech_sc(k), name)) continue;
        yaml_node_t *in = mech_get(M, mech_node(M->doc, p->value), "inputs");
        if (!in || in->type != YAML_SEQUENCE_NODE || j >= in->data.sequence.items.top - in->data.sequence.items.start)
            return NULL;
        return mech_node(M->doc, in->data.sequence.items.start[j]);
    }
    return NULL;
}

/* what a name is among the mechanism's (a parameter, ...), or NULL when it is none of them */
static const char *name_kind(const mech *M, const char *name)
{
    const mbl_src *s = M->src;
    const mbl_src_list *l[] = {&s->parameters, &s->spin_speeds, &s->inputs, &s->coordinates, &s->variables, &s->outputs};
    static const char *what[] = {"a parameter", "a spin speed", "an input", "a coordinate", "a variable", "an output"};
    for (size_t k = 0; k < sizeof l / sizeof *l; k++)
        for (int i = 0; i < l[k]->n; i++)
            if (l[k]->items[i].key && !strcmp(l[k]->items[i].key, name)) return what[k];
    return NULL;
}

int mech_read_routines(mech *M, const yaml_node_t *rn)
{
    if (!rn) return 0;
    int rc = model_src_read_routines(M->file, M->doc, rn, M->src, M->st);
    if (rc || rn->type != YAML_MAPPING_NODE) return rc;
    for (int r = 0; r < M->src->nroutines; r++) {
        mbl_src_routine *R = &M->src->routines[r];
        for (int j = 0; j < R->inputs.n; j++) {
            mbl_src_item *it = &R->inputs.items[j];
            const char *x = NULL;
            if ((rc = mech_subst(M, it->text, input_node(M, rn, R->name, j), NULL, 0, &x))) return rc;
            if (!strcmp(x, it->text)) continue;
            char *t = mech_dup_s(x);
            if (!t) return mech_oom(M);
            mbl_free(it->text);
            it->text = t;
        }
        for (int k = 0; k < R->outputs.n; k++) {
            const mbl_src_item *o = &R->outputs.items[k];
            const char *kind = name_kind(M, o->key);
            if (kind)
                return mbl_error(M->st, MBL_EMODEL, "%s:%d:%d: routine '%s': output '%s' is already the name of %s of the mechanism",
                                 M->file, o->line, o->col, R->name, o->key, kind);
            if (!mech_valid_name(o->key))
                return mbl_error(M->st, MBL_EMODEL,
                                 "%s:%d:%d: routine '%s': output '%s' must begin with a letter (names beginning with '_' "
                                 "are the mechanism's generated variables)",
                                 M->file, o->line, o->col, R->name, o->key);
        }
    }
    return 0;
}
