/* The subproblem's Jacobian values (sp->jac): evaluated where they are not held at the symbols
 * already, the whole or the subproblem's rows alone (Newton's own, opoint_eval_jac_rows), kept
 * across the continuation and handed on to the point (opoint_solve.h). */
#include <string.h>

#include "model/eval_rows.h"
#include "opoint_solve.h"

int opoint_jac(opoint_subproblem *sp, mbl_status *st)
{
    size_t ns = (size_t)sp->mv.nsym * sizeof *sp->syms;
    if (sp->jac_ok && !sp->jac_part && !memcmp(sp->jac_syms, sp->syms, ns)) return 0;
    sp->jac_ok = sp->jac_part = 0;
    /* values kept at other symbols (Newton's solution across the continuation), or the mass check's at
     * the file's configuration when the point is there (its first evaluation, at an equilibrium's guess) */
    const double *kept = model_jac_memo_at(sp->md, sp->jac_alt, sp->syms);
    if (!kept) kept = model_jac_memo_at(sp->md, sp->load_memo, sp->syms);
    int rc = 0;
    if (kept) memcpy(sp->jac, kept, (size_t)sp->mv.jac.nz * sizeof *sp->jac);
    else rc = model_eval_jac(sp->md, sp->syms, sp->jac, sp->work, st);
    if (!rc) memcpy(sp->jac_syms, sp->syms, ns), sp->jac_ok = 1;
    return rc;
}

int opoint_eval_jac(opoint_subproblem *sp, mbl_status *st)
{
    int rc = opoint_jac(sp, st);
    if (rc) return model_eval_error(sp->md, sp->syms, "while looking for the operating point", st);
    return 0;
}

/* The view's sweep (or the terms' selection, sp->rows_sel) where no values are kept at the symbols
 * (opoint_jac's memos: every entry); its failure named as the whole Jacobian's evaluation names it
 * (opoint_jac). */
static int jac_rows(opoint_subproblem *sp, mbl_status *st)
{
    size_t ns = (size_t)sp->mv.nsym * sizeof *sp->syms;
    if (sp->jac_ok && !memcmp(sp->jac_syms, sp->syms, ns)) return 0;
    if ((!sp->rows_view && !sp->rows_sel) || model_jac_memo_at(sp->md, sp->jac_alt, sp->syms) ||
        model_jac_memo_at(sp->md, sp->load_memo, sp->syms))
        return opoint_jac(sp, st);
    sp->jac_ok = 0;
    if (sp->rows_sel ? model_eval_jac_sel(sp->md, sp->rowmask, sp->colmask, sp->syms, sp->jac, sp->work, st)
                     : model_eval_jac_rows(sp->md, sp->rows_view, sp->row_pos, sp->syms, sp->jac, sp->work, st))
        return opoint_jac(sp, st);
    memcpy(sp->jac_syms, sp->syms, ns), sp->jac_ok = sp->jac_part = 1;
    return 0;
}

int opoint_eval_jac_rows(opoint_subproblem *sp, mbl_status *st)
{
    int rc = jac_rows(sp, st);
    if (rc) return model_eval_error(sp->md, sp->syms, "while looking for the operating point", st);
    return 0;
}

model_jac_memo *opoint_jac_save(const opoint_subproblem *sp)
{
    size_t ns = (size_t)sp->mv.nsym, nz = (size_t)sp->mv.jac.nz;
    if (!sp->jac_ok || sp->jac_part) return NULL;
    double *syms = mbl_alloc_array(ns + 1, sizeof *syms), *jac = mbl_alloc_array(nz + 1, sizeof *jac);
    if (!syms || !jac) {
        mbl_free(syms), mbl_free(jac);
        return NULL;
    }
    memcpy(syms, sp->jac_syms, ns * sizeof *syms), memcpy(jac, sp->jac, nz * sizeof *jac);
    return model_jac_memo_new(sp->md, syms, jac); /* takes both */
}

void opoint_jac_restore(opoint_subproblem *sp, model_jac_memo *c)
{
    if (c) {
        memcpy(sp->jac_syms, c->syms, (size_t)sp->mv.nsym * sizeof *c->syms);
        memcpy(sp->jac, c->jac, (size_t)sp->mv.jac.nz * sizeof *c->jac);
        sp->jac_ok = 1, sp->jac_part = 0;
    }
    model_jac_memo_free(c);
}

void opoint_keep_jac(opoint_subproblem *sp)
{
    size_t ns = (size_t)sp->mv.nsym * sizeof *sp->syms;
    if (!sp->jac_ok || sp->jac_part || memcmp(sp->jac_syms, sp->syms, ns)) return;
    model_jac_memo_free(sp->pt->jac_memo);
    sp->pt->jac_memo = model_jac_memo_new(sp->md, sp->jac_syms, sp->jac); /* the arrays taken (NULL: freed) */
    sp->jac_syms = sp->jac = NULL, sp->jac_ok = 0;
}
