/* The drawing of a mechanism at a point: its points' positions and the mode shapes' motion of them
 * (the drawing's tape compiled on first use, under the model's graph lock). */
#include "model/formulate.h"

int mbl_model_draw(const mbl_model *md, const mbl_point *pt, int nshape, int nq, const double *shape_re,
                   const double *shape_im, double *pos, double *dre, double *dim, mbl_status *st)
{
    if (!md || !pt || (!pos && md->npt) || (nshape > 0 && (!shape_re || !shape_im)))
        return mbl_error(st, MBL_EARG, "mbl_model_draw: NULL argument");
    if (pt->n != md->n || pt->m != md->m || pt->k != md->k || pt->nr != md->nr)
        return mbl_error(st, MBL_EDIM, "mbl_model_draw: the point does not belong to the model");
    if (nshape > 0 && nq != md->n)
        return mbl_error(st, MBL_EDIM, "mbl_model_draw: the modes have %d coordinates, the model %d", nq, md->n);
    if (!md->npt) return 0;
    /* the drawing's positions and their Jacobian are compiled on the first drawing (its dp/dq is
     * dense in a chain's joint coordinates: N^2 entries that a linearization never needs) */
    model_graph_lock(md, 1);
    int crc = md->tape_draw ? 0 : model_compile_draw((mbl_model *)md, st);
    model_graph_lock(md, 0);
    if (crc) return crc;
    int np3 = 3 * md->npt, nx = nshape > 0 ? nshape : 0;
    size_t nout = (size_t)np3 + (size_t)md->dpjac.nz;
    double *syms = mbl_calloc((size_t)md->nsym + 1, sizeof *syms);
    double *work = mbl_alloc_array(mblx_tape_work_size(md->tape_draw) + 1, sizeof *work);
    double *out = mbl_alloc_array(nout + 1, sizeof *out);
    int rc = 0;
    if (!syms || !work || !out) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    if (!rc) {
        model_fill_syms(md, pt->t, pt->q, pt->v, pt->vdot, pt->lambda, pt->mu, pt->r, syms);
        rc = mblx_tape_eval(md->tape_draw, syms, out, work, st);
        if (rc) rc = mbl_error_prefix(st, "%s: evaluating the marker positions", md->file);
    }
    if (!rc) {
        memcpy(pos, out, (size_t)np3 * sizeof *pos);
        int q0 = model_blk0(md, MBL_BLK_Q);
        for (int k = 0; k < nx; k++) {
            double *re = dre ? dre + (size_t)np3 * k : NULL, *im = dim ? dim + (size_t)np3 * k : NULL;
            if (re) memset(re, 0, (size_t)np3 * sizeof *re);
            if (im) memset(im, 0, (size_t)np3 * sizeof *im);
            const double *sr = shape_re + (size_t)md->n * k, *si = shape_im + (size_t)md->n * k;
            for (int e = 0; e < md->dpjac.nz; e++) {
                int c = md->dpjac.col[e] - q0;
                if (c < 0 || c >= md->n) continue;
                double d = out[np3 + e];
                if (re) re[md->dpjac.row[e]] += d * sr[c];
                if (im) im[md->dpjac.row[e]] += d * si[c];
            }
        }
    }
    mbl_free(syms), mbl_free(work), mbl_free(out);
    return rc;
}
