/* Reading the drawing: the drawing points and links of a mechanism (mbl_src draw, draw_links) as
 * expressions, read during formulation (compiled later, model_compile_draw). */
#include <stdio.h>
#include <string.h>

#include "model/formulate.h"

/* A drawing coordinate's expression. Nearly every one is "0", a coordinate or a variable already
 * read (a marker's position): its node then directly, the node a parse would give, without the
 * parse and the records of the expression, which the variable has already (read_draw was 3 % of
 * the N = 1000 four-bar mechanism's run); anything else is parsed. */
static int draw_node(loader *L, const mbl_src_item *it, const char *point, mblx_id *out)
{
    size_t n = strlen(it->text);
    int i;
    if (n == 1 && it->text[0] == '0') {
        *out = mblx_const(L->md->g, 0.0);
        return mblx_graph_status(L->md->g, L->st);
    }
    if ((i = model_find_name(&L->src->coordinates, it->text, n)) >= 0) {
        *out = L->md->q[i];
        return 0;
    }
    if ((i = model_find_name(&L->src->variables, it->text, n)) >= 0 && L->var_state[i] == VAR_DONE) {
        *out = L->var_node[i];
        return 0;
    }
    char what[200]; /* formatted here, for the parse alone (14,004 snprintf at N = 2000: 10 M instructions) */
    snprintf(what, sizeof what, "position of '%s'", point);
    return model_parse_item(L, it, SCOPE_FULL, what, out);
}

/* The drawing points of a mechanism (mbl_src draw, draw_links) as expressions. */
int model_read_draw(loader *L, const mbl_src *s)
{
    mbl_model *md = L->md;
    int npt = s->draw.n / 3, nl = s->draw_links.n;
    if (!npt) return 0;
    md->ptname = mbl_calloc((size_t)npt, sizeof *md->ptname);
    md->ptbody = mbl_calloc((size_t)npt, sizeof *md->ptbody);
    md->dp = mbl_calloc((size_t)(3 * npt), sizeof *md->dp);
    md->lname = mbl_calloc((size_t)(nl ? nl : 1), sizeof *md->lname);
    md->ltype = mbl_calloc((size_t)(nl ? nl : 1), sizeof *md->ltype);
    md->link = mbl_calloc((size_t)(2 * nl + 1), sizeof *md->link);
    if (!md->ptname || !md->ptbody || !md->dp || !md->lname || !md->ltype || !md->link)
        return mbl_error(L->st, MBL_ENOMEM, "out of memory");
    md->npt = npt;
    md->nlink = nl;
    for (int i = 0; i < npt; i++) {
        const mbl_src_item *it = &s->draw.items[3 * i];
        if (!(md->ptname[i] = model_str_dup(it->key)) || !(md->ptbody[i] = model_str_dup(it->key2)))
            return mbl_error(L->st, MBL_ENOMEM, "out of memory");
        for (int k = 0; k < 3; k++) {
            int rc = draw_node(L, &s->draw.items[3 * i + k], it->key, &md->dp[3 * i + k]);
            if (rc) return rc;
        }
    }
    for (int j = 0; j < nl; j++) {
        const mbl_src_item *it = &s->draw_links.items[j];
        if (!(md->lname[j] = model_str_dup(it->key)) || !(md->ltype[j] = model_str_dup(it->key2)))
            return mbl_error(L->st, MBL_ENOMEM, "out of memory");
        if (sscanf(it->text, "%d %d", &md->link[2 * j], &md->link[2 * j + 1]) != 2)
            return mbl_error(L->st, MBL_EMODEL, "%s: joint '%s': internal drawing link", s->file, it->key);
    }
    return 0;
}
