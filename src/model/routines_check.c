/* User routines at a solved operating point (docs/user-routines.md, "Exactness"): a routine's own
 * partials checked once against central differences, and the accuracy of the differences that
 * stand in for the partials of a routine without them, said in the point's notes. */
#include "model/model_internal.h"
#include "model/model_view.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* A routine's partial d out_k / d in_j is refused when it differs from the central difference by
 * more than this times the scale of output k (its largest partial in absolute value, the routine's
 * or the differences') plus the difference's own estimated error (mblx_user_differences): a zero
 * partial beside large ones is measured against those. */
#define MODEL_USER_PARTIALS_TOL 1e-6

static void add_note(char *notes, size_t cap, const char *text)
{
    size_t len = strlen(notes);
    if (strstr(notes, text) || len + strlen(text) + 3 >= cap) return;
    snprintf(notes + len, cap - len, "%s%s", len ? "; " : "", text);
}

/* routine r's inputs at syms into in (nin) */
static int inputs_at(const mbl_model *md, int r, const double *syms, double *in, mbl_status *st)
{
    for (int j = md->routine_in0[r]; j < md->routine_in0[r + 1]; j++) {
        if (md->routine_in[j] == MBLX_NONE) return 1; /* (an unused routine: its inputs never parsed) */
        int rc = mblx_eval(md->g, md->routine_in[j], syms, &in[j - md->routine_in0[r]], st);
        if (rc) return rc;
    }
    return 0;
}

static int check_one(const mbl_model *md, int r, const double *syms, char *notes, size_t cap, mbl_status *st)
{
    mblx_user_def d;
    if (mblx_user_info(md->g, md->routine_graph[r], &d)) return 0;
    size_t nin = (size_t)d.nin, nout = (size_t)d.nout;
    double *in = mbl_alloc_array(nin + nout + 3 * nin * nout, sizeof *in);
    if (!in) return mbl_error(st, MBL_ENOMEM, "out of memory");
    double *out = in + nin, *P = out + nout, *D = P + nin * nout, *E = D + nin * nout;
    int rc = inputs_at(md, r, syms, in, st);
    if (rc > 0) rc = 0, nin = 0; /* not used by the model: nothing to check */
    else if (!rc) rc = mblx_user_differences(md->g, md->routine_graph[r], in, D, E, st);
    if (!rc && nin && d.partials) rc = mblx_user_eval(md->g, md->routine_graph[r], in, out, P, st);
    double worst = 0;
    for (size_t k = 0; !rc && nin && k < nout; k++) {
        double scale = 0;
        for (size_t j = 0; j < nin; j++) scale = fmax(scale, fmax(fabs(D[k * nin + j]), d.partials ? fabs(P[k * nin + j]) : 0));
        for (size_t j = 0; j < nin && !rc; j++) {
            size_t e = k * nin + j;
            if (!d.partials) {
                if (scale > 0) worst = fmax(worst, E[e] / scale);
                continue;
            }
            double dev = fabs(P[e] - D[e]);
            if (dev > MODEL_USER_PARTIALS_TOL * scale + E[e])
                rc = mbl_error(st, MBL_EMODEL,
                               "routine '%s': its partial d out%zu / d in%zu = %.10g disagrees with the central "
                               "difference %.10g at the operating point (by %.3g, %.3g of the output's largest partial; "
                               "the difference's own error is about %.3g, the tolerance %g): check the routine's partials, "
                               "or say 'partials: no'",
                               d.name, k + 1, j + 1, P[e], D[e], dev, scale > 0 ? dev / scale : INFINITY, E[e],
                               MODEL_USER_PARTIALS_TOL);
        }
    }
    if (!rc && nin) {
        char text[320];
        if (d.partials)
            snprintf(text, sizeof text, "routine '%s': its partials agree with central differences at the point", d.name);
        else
            snprintf(text, sizeof text,
                     "routine '%s': partials by central differences (not exact), estimated error %.2g of the largest "
                     "partial of an output",
                     d.name, worst);
        add_note(notes, cap, text);
    }
    mbl_free(in);
    return rc;
}

int model_routines_check(const mbl_model *md, const double *syms, char *notes, size_t cap, mbl_status *st)
{
    int rc = 0;
    if (!md->nroutines) return 0;
    model_graph_lock(md, 1); /* (mblx_eval reads the graph) */
    for (int r = 0; r < md->nroutines && !rc; r++) rc = check_one(md, r, syms, notes, cap, st);
    model_graph_lock(md, 0);
    return rc;
}

int model_routines_inexact(const mbl_model *md)
{
    for (int r = 0; r < md->nroutines; r++) {
        mblx_user_def d;
        if (!mblx_user_info(md->g, md->routine_graph[r], &d) && !d.partials) return 1;
    }
    return 0;
}
