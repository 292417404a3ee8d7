/* Large models without dense matrices (docs/linearization.md, "Large models: partial spectra").
 *
 * The linearized DAE in x = [dq; dv; dlambda] is the pencil of source 001 Eq. 8
 *     E = [I 0 0; 0 M 0; 0 0 0],  Ad = [0 I 0; -K_q -C_q -s Phi^T; -s Phi 0 0],  Bd = [0; -dR/dr; 0]
 * assembled here sparse, straight from the triplets of the exact residual Jacobian (no n x n
 * array anywhere); ARPACK shift-invert (KLU on Ad - sigma E) gives the nev eigenvalues nearest the
 * shift and the coordinate part dq of their eigenvectors, the mode shapes (undamped, non-gyroscopic
 * models: the symmetric pencil [K_q s Phi^T; s Phi 0], [M 0; 0 0] by Lanczos instead). Shared by `descriptor`
 * (its sparse path) and the default `augmented` when the dense spectrum does not fit the memory
 * budget (the peak-memory estimates that make that decision: budget.c). Regular points with
 * holonomic constraints only (the pencil needs the independent rows of Phi_q; with rank loss or
 * non-holonomic constraints the dense methods apply). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lin/methods_internal.h"
#include "mblin/la.h"

/* relative accuracy asked of ARPACK's Ritz values before the refinement (see below) */
#define SPARSE_ARPACK_TOL 1e-8
/* pairs computed and refined beyond the wanted ones on the symmetric path (sym_spectrum) */
#define SPARSE_SYM_GUARD 4


void lin_sparse_pencil_free(mbl_sparse_pencil *P)
{
    if (!P) return;
    mbla_csc_free(P->A);
    mbla_csc_free(P->E);
    mbl_free(P->Bd);
    mbl_free(P->Cdd);
    memset(P, 0, sizeof *P);
}

int lin_sparse_pencil_build(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, int want_io,
                            mbl_sparse_pencil *P, mbl_status *st)
{
    model_view view;
    model_view_get(md, &view);
    const model_view *mv = &view;
    int n = mv->n, m = mv->m, nr = mv->nr, ny = mv->ny, rc;
    memset(P, 0, sizeof *P);
    mbl_eval ev;
    int *ti = NULL, *tj = NULL, *eti = NULL, *etj = NULL;
    double *tx = NULL, *etx = NULL, *colK = NULL, *colP = NULL;
    if (mv->k > 0)
        return mbl_error(st, MBL_EMODEL,
                         "the sparse pencil supports holonomic constraints only (%d non-holonomic): use the dense "
                         "methods on a smaller model",
                         mv->k);
    if (pt->rank_phi_q < m)
        return mbl_error(st, MBL_ESINGULAR,
                         "Phi_q has rank %d < %d at this point: the sparse pencil needs a regular point (the dense "
                         "descriptor drops the redundant rows)",
                         pt->rank_phi_q, m);
    rc = lin_eval_init(md, &ev, st);
    if (rc) return rc;
    rc = lin_eval_at(md, pt, &ev, st);
    if (rc) goto done;
    int nd = 2 * n + m, nz = mv->jac.nz;
    int e0 = mv->row0[MBL_ROW_EOM], p0 = mv->row0[MBL_ROW_PHI], v0 = mv->row0[MBL_ROW_PHID];
    int ja = mv->blk0[MBL_BLK_A], jv = mv->blk0[MBL_BLK_V], jq = mv->blk0[MBL_BLK_Q];
    int jr = mv->blk0[MBL_BLK_R];
    size_t cap = (size_t)nz * 2 + (size_t)n + 1;
    ti = mbl_alloc_array(cap, sizeof *ti), tj = mbl_alloc_array(cap, sizeof *tj), tx = mbl_alloc_array(cap, sizeof *tx);
    eti = mbl_alloc_array(cap, sizeof *eti), etj = mbl_alloc_array(cap, sizeof *etj);
    etx = mbl_alloc_array(cap, sizeof *etx);
    colK = mbl_calloc((size_t)n + 1, sizeof *colK), colP = mbl_calloc((size_t)n + 1, sizeof *colP);
    if (want_io) {
        P->Bd = mbl_calloc((size_t)nd * nr + 1, sizeof(double));
        P->Cdd = mbl_calloc((size_t)ny * nd + 1, sizeof(double));
    }
    if (!ti || !tj || !tx || !eti || !etj || !etx || !colK || !colP || (want_io && (!P->Bd || !P->Cdd))) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    /* norms for the scaling and the moving-constraint check */
    double nPd = 0, nPq = 0, nK = 0;
    for (int p = 0; p < nz; p++) {
        int r = mv->jac.row[p], c = mv->jac.col[p];
        double x = fabs(ev.jac[p]);
        if (r >= e0 && r < e0 + n && ((c >= jq && c < jq + n) || (c >= ja && c < ja + n)))
            colK[c >= jq ? c - jq : c - ja] += x;
        if (r >= p0 && r < p0 + m && c >= jq && c < jq + n) colP[c - jq] += x;
        if (r >= v0 && r < v0 + m && c >= jq && c < jq + n) nPd = fmax(nPd, x);
    }
    for (int j = 0; j < n; j++) nK = fmax(nK, colK[j]), nPq = fmax(nPq, colP[j]);
    if (m && nPd > opt->rank_tol * nPq) {
        rc = mbl_error(st, MBL_EMODEL,
                       "the constraint Jacobian moves with the velocities at this point (d(Phi_q v)/dq != 0): the "
                       "constant-coefficient pencil of source 001 Eq. 8 does not apply (dense methods only)");
        goto done;
    }
    double s = opt->constraint_scale;
    if (!(s > 0)) s = (nPq > 0 && nK > 0) ? nK / nPq : 1.0;
    /* a power of 2 (the nearest): the scaled constraint entries are the Jacobian's exactly */
    if (!(opt->constraint_scale > 0)) {
        int ex;
        double f = frexp(s, &ex); /* s = f 2^ex, 0.5 <= f < 1 */
        s = ldexp(1.0, f < 0.70710678118654752 ? ex - 1 : ex);
    }
    int a = 0, e = 0;
    for (int i = 0; i < n; i++) {
        eti[e] = i, etj[e] = i, etx[e++] = 1.0;
        ti[a] = i, tj[a] = n + i, tx[a++] = 1.0;
    }
    for (int p = 0; p < nz; p++) {
        int r = mv->jac.row[p], c = mv->jac.col[p];
        double x = ev.jac[p];
        if (r >= e0 && r < e0 + n) {
            int i = r - e0;
            if (c >= ja && c < ja + n) eti[e] = n + i, etj[e] = n + c - ja, etx[e++] = x;
            else if (c >= jq && c < jq + n) ti[a] = n + i, tj[a] = c - jq, tx[a++] = -x;
            else if (c >= jv && c < jv + n) ti[a] = n + i, tj[a] = n + c - jv, tx[a++] = -x;
            else if (want_io && c >= jr && c < jr + nr) P->Bd[n + i + (size_t)(c - jr) * nd] = -x;
        } else if (r >= p0 && r < p0 + m && c >= jq && c < jq + n) {
            ti[a] = 2 * n + r - p0, tj[a] = c - jq, tx[a++] = -s * x;
            ti[a] = n + c - jq, tj[a] = 2 * n + r - p0, tx[a++] = -s * x;
        }
    }
    if (want_io) {
        const double *yv = ev.y + ny;
        for (int p = 0; p < mv->yjac.nz; p++) {
            int r = mv->yjac.row[p], c = mv->yjac.col[p];
            if (c >= jq && c < jq + n) P->Cdd[r + (size_t)(c - jq) * ny] += yv[p];
            else if (c >= jv && c < jv + n) P->Cdd[r + (size_t)(n + c - jv) * ny] += yv[p];
        }
    }
    rc = mbla_csc_from_triplets(nd, nd, a, ti, tj, tx, NULL, &P->A, st);
    if (!rc) rc = mbla_csc_from_triplets(nd, nd, e, eti, etj, etx, NULL, &P->E, st);
    if (rc) goto done;
    P->nd = nd;
    P->n = n;
    P->m = m;
    P->scale = s;
done:
    lin_eval_free(&ev);
    mbl_free(ti), mbl_free(tj), mbl_free(tx), mbl_free(eti), mbl_free(etj), mbl_free(etx);
    mbl_free(colK), mbl_free(colP);
    if (rc) lin_sparse_pencil_free(P);
    return rc;
}

/* Relative tolerance of the symmetry of K_q and M that selects the symmetric path: an equilibrium
 * of a conservative model found by Newton's method has a geometric stiffness (Phi_q^T lambda)_q
 * symmetric to about the accuracy of lambda; measured on the flexible pendulum (n_p = 100, 500):
 * K_q to 1e-31, M to 6e-19 relative, so the tolerance leaves ample room. */
#define SPARSE_SYM_TOL 1e-9

static double csc_maxabs(const mbla_csc *A)
{
    double m = 0;
    for (int q = 0; q < A->p[A->n]; q++) m = fmax(m, fabs(A->x[q]));
    return m;
}

/* max |A - A^T| (A square), or -1 on failure */
static double csc_asym(const mbla_csc *A, mbl_status *st)
{
    mbla_csc *T = NULL, *D = NULL;
    double r = -1;
    if (!mbla_csc_transpose(A, &T, st) && !mbla_csc_add(1.0, A, -1.0, T, &D, st)) r = csc_maxabs(D);
    mbla_csc_free(T), mbla_csc_free(D);
    return r;
}

/* The constraint-augmented symmetric pencil of an undamped, non-gyroscopic linearization:
 * K_aug = [K_q s Phi_q^T; s Phi_q 0], B = [M 0; 0 0] (order n + m), taken from the blocks of the
 * first-order pencil P (Ad = [0 I 0; -K_q -C_q -s Phi^T; -s Phi 0 0], E = [I 0 0; 0 M 0; 0 0 0]).
 * Returns 1 and the pair when C_q has no nonzero value and K_q, M are symmetric to SPARSE_SYM_TOL
 * relative to their largest entries; 0 (nothing allocated) when the model does not qualify;
 * negative on failure. *asym: the relative asymmetry of K_q found. */
static int sym_pencil(const mbl_sparse_pencil *P, mbla_csc **Kp, mbla_csc **Bp, double *nK, double *nM, double *asym,
                      mbl_status *st)
{
    int n = P->n, m = P->m, na = n + m, rc = 0;
    const mbla_csc *A = P->A, *E = P->E;
    *Kp = *Bp = NULL;
    *asym = NAN;
    for (int j = n; j < 2 * n; j++) /* C_q: Ad rows and columns n..2n-1, by value */
        for (int q = A->p[j]; q < A->p[j + 1]; q++)
            if (A->i[q] >= n && A->i[q] < 2 * n && A->x[q] != 0.0) return 0;
    int cap = A->p[A->n] + E->p[E->n] + 1, a = 0, b = 0;
    int *ti = mbl_alloc_array((size_t)cap, sizeof *ti), *tj = mbl_alloc_array((size_t)cap, sizeof *tj);
    int *bi = mbl_alloc_array((size_t)cap, sizeof *bi), *bj = mbl_alloc_array((size_t)cap, sizeof *bj);
    double *tx = mbl_alloc_array((size_t)cap, sizeof *tx), *bx = mbl_alloc_array((size_t)cap, sizeof *bx);
    mbla_csc *K = NULL, *B = NULL;
    if (!ti || !tj || !tx || !bi || !bj || !bx) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    for (int j = 0; j < A->n; j++) {
        if (j >= n && j < 2 * n) continue;
        int c = j < n ? j : j - n; /* q columns 0..n-1, lambda columns 2n.. -> n.. */
        for (int q = A->p[j]; q < A->p[j + 1]; q++) {
            int i = A->i[q];
            if (i < n || (j >= 2 * n && i >= 2 * n)) continue;
            ti[a] = i - n, tj[a] = c, tx[a++] = -A->x[q];
        }
    }
    for (int j = n; j < 2 * n; j++)
        for (int q = E->p[j]; q < E->p[j + 1]; q++)
            if (E->i[q] >= n && E->i[q] < 2 * n) bi[b] = E->i[q] - n, bj[b] = j - n, bx[b++] = E->x[q];
    if ((rc = mbla_csc_from_triplets(na, na, a, ti, tj, tx, NULL, &K, st))) goto done;
    if ((rc = mbla_csc_from_triplets(na, na, b, bi, bj, bx, NULL, &B, st))) goto done;
    *nK = csc_maxabs(K), *nM = csc_maxabs(B);
    double aK = csc_asym(K, st), aM = csc_asym(B, st);
    if (aK < 0 || aM < 0) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    *asym = *nK > 0 ? aK / *nK : 0;
    if (!(*nM > 0) || aK > SPARSE_SYM_TOL * *nK || aM > SPARSE_SYM_TOL * *nM) goto done;
    *Kp = K, *Bp = B;
    K = B = NULL;
    rc = 1;
done:
    mbla_csc_free(K), mbla_csc_free(B);
    mbl_free(ti), mbl_free(tj), mbl_free(tx), mbl_free(bi), mbl_free(bj), mbl_free(bx);
    return rc;
}

/* The k eigenvalues nearest the real shift of a conservative model from the symmetric pencil
 * (K_aug, B): w^2 nearest sigma = -shift^2 (for w^2 >= 0 the distance w^2 - sigma = |i w - shift|^2,
 * so these are exactly the s = +-i w nearest the shift), s = +-i sqrt(w^2), +-sqrt(-w^2) for
 * w^2 < 0, 0 for |w^2| below 64 eps ||K_aug|| / ||M||; mode shapes the q parts (real, unit
 * 2-norm). Returns 1 when done, 0 when the first-order path must be used (ARPACK could not
 * converge, the shift is an eigenvalue), negative on memory failure. */
static int sym_spectrum(const mbl_sparse_pencil *P, const mbla_csc *K, const mbla_csc *B, double nK, double nM,
                        double shift, int k, const mbla_eigs_backend *be_, mbl_linear *lin, int *nunconv,
                        int *first_unconv, mbl_status *st)
{
    int n = P->n, m = P->m, na = n + m, kw = (k + 1) / 2;
    /* kr >= kw pairs: the wanted ones and up to SPARSE_SYM_GUARD more for the block refinement */
    int kr = kw + SPARSE_SYM_GUARD;
    if (kr > n - m - 1) kr = n - m - 1;
    if (2 * kr > na) kr = na / 2;
    if (kr < kw) kr = kw;
    int ncv = 2 * kr + 1 > 20 ? 2 * kr + 1 : 20;
    if (ncv > n - m) ncv = n - m; /* the rank of OP: B is singular on the constraint rows */
    if (kr + 1 > ncv) kr = ncv - 1;
    if (kr < kw || 2 * kr > na) return 0;
    mbla_eigs_opts eo;
    mbla_eigs_opts_default(&eo);
    eo.ncv = ncv;
    double *w = mbl_alloc_array((size_t)kr + 1, sizeof *w), *V = mbl_alloc_array((size_t)na * kr + 1, sizeof *V);
    double *wi = mbl_calloc((size_t)kr + 1, sizeof *wi), *Vi = mbl_calloc((size_t)na * kr + 1, sizeof *Vi);
    double *be = mbl_alloc_array((size_t)kr + 1, sizeof *be);
    int *cv = mbl_calloc((size_t)kr + 1, sizeof *cv);
    *nunconv = 0;
    if (!w || !V || !wi || !Vi || !be || !cv) {
        mbl_free(w), mbl_free(V), mbl_free(wi), mbl_free(Vi), mbl_free(be), mbl_free(cv);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    mbl_status st2;
    int rc = be_ ? be_->sym_sinv(be_->ctx, K, B, -shift * shift, kr, &eo, w, V, na, NULL, &st2)
                 : mbla_eigs_sym_sinv(K, B, -shift * shift, kr, &eo, w, V, na, NULL, &st2);
    /* another engine (collective over MPI ranks): its failures are errors, never a fallback that
     * some ranks would take alone; its eigenvectors exist on the root rank only, which alone
     * refines them (the other ranks keep the engine's eigenvalues and write nothing) */
    int local = be_ && !be_->root;
    if (be_ && rc && rc != MBL_ENOMEM) {
        *st = st2;
        mbl_free(w), mbl_free(V), mbl_free(wi), mbl_free(Vi), mbl_free(be), mbl_free(cv);
        return rc;
    }
    if (local)
        for (int t = 0; t < kr; t++) be[t] = NAN, cv[t] = 1;
    /* Lanczos on the real factor of the stiff saddle-point matrix gives w^2 to about
     * eps ||K_aug|| / w^2 (flexible pendulum n_p = 1000: 5e-6 relative on w_3; n_p = 10^4: 1e-3 on
     * w_4^2). The factors are those of K_aug perturbed by eps |K_aug|, whose low eigenvalues move by
     * that much, so a correction computed with them carries errors of that size along the other low
     * modes: Newton's method on each pair converged only linearly and diverged at n_p = 10^4. The
     * pairs are refined together (mbla_eigs_refine_sym_block): residuals in doubled precision,
     * Rayleigh-Ritz on the block and its corrections, which removes those errors; the guard pairs
     * keep the highest wanted pair's neighbours in the block. */
    if (!rc && !local) rc = mbla_eigs_refine_sym_block(K, B, -shift * shift, kr, kw, w, V, na, 0, be, NULL, cv, &st2);
    if (rc == MBL_ENOMEM || (rc && be_)) {
        *st = st2;
    } else if (rc) {
        rc = 0; /* fall back */
    } else {
        double tiny = 64 * DBL_EPSILON * nK / nM;
        for (int t = 0, j = 0; t < kw && j < k; t++) {
            double w2 = w[t], re = 0, im = 0;
            if (w2 > tiny) im = sqrt(w2);
            else if (w2 < -tiny) re = sqrt(-w2);
            const double *x = V + (size_t)t * na;
            double nx = 0;
            for (int c = 0; c < n && !local; c++) nx = hypot(nx, x[c]);
            for (int h = 0; h < 2 && j < k; h++, j++) {
                /* +i w first (as ARPACK's pairs); of a real pair the one nearer the shift first */
                double sg = h == 0 ? 1.0 : -1.0;
                if (re != 0 && fabs(-re - shift) < fabs(re - shift)) sg = -sg;
                lin->spectrum->re[j] = sg * re, lin->spectrum->im[j] = sg * im;
                lin->spectrum->berr[j] = be[t];
                if (!cv[t] && !(*nunconv)++) *first_unconv = j;
                for (int c = 0; c < n; c++) {
                    lin->spectrum->vre[c + (size_t)j * n] = nx > 0 ? x[c] / nx : 0; /* 0 off the root */
                    lin->spectrum->vim[c + (size_t)j * n] = 0;
                }
            }
        }
        rc = 1;
    }
    mbl_free(w), mbl_free(V), mbl_free(wi), mbl_free(Vi), mbl_free(be), mbl_free(cv);
    return rc;
}

mbl_linear *lin_linear_shell(const mbl_model *md, int z)
{
    model_view view;
    model_view_get(md, &view);
    const model_view *mv = &view;
    mbl_linear *L = mbl_calloc(1, sizeof *L);
    if (!L) return NULL;
    L->n = mv->n, L->nu = mv->nr, L->ny = mv->ny, L->z0 = z, L->z1 = z, L->nx = 2 * z;
    L->input_names = mbl_calloc((size_t)mv->nr + 1, sizeof *L->input_names);
    L->output_names = mbl_calloc((size_t)mv->ny + 1, sizeof *L->output_names);
    int bad = !L->input_names || !L->output_names;
    for (int j = 0; !bad && j < mv->nr; j++) bad = !(L->input_names[j] = lin_name_join(mv->rname[j], NULL));
    for (int j = 0; !bad && j < mv->ny; j++) bad = !(L->output_names[j] = lin_name_join(mv->yname[j], NULL));
    if (bad) {
        mbl_linear_free(L);
        return NULL;
    }
    return L;
}

int lin_sparse_spectrum(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt, const char *method,
                        const char *reason, mbl_linear **linp, mbl_status *st)
{
    model_view view;
    model_view_get(md, &view);
    const model_view *mv = &view;
    int n = mv->n, m = mv->m, rc;
    mbl_sparse_pencil P;
    double *Vre = NULL, *Vim = NULL;
    mbl_linear *lin = *linp;
    memset(&P, 0, sizeof P);
    int nphys = 2 * (n - m), nd = 2 * n + m;
    int k = opt->nev < nphys ? opt->nev : nphys;
    if (k > nd - 2) k = nd - 2;
    if (k < 1) return mbl_error(st, MBL_EDIM, "%s: no degrees of freedom for the partial spectrum (ARPACK)", method);
    double budget = lin_mem_budget(opt), need = lin_sparse_bytes(md, k);
    if (need > budget) {
        char what[96];
        snprintf(what, sizeof what, "%s: the partial spectrum (%d eigenvalues, sparse pencil of order %d)", method, k,
                 nd);
        return lin_refuse_memory(what, need, budget, "ask for fewer eigenvalues (nev) or raise the budget", st);
    }
    /* Bd and Cdd when small (an eighth of the budget) */
    int want_io = 8.0 * (double)nd * (double)(mv->nr + mv->ny) <= budget / 8;
    /* the sparse pencil's Cdd holds the outputs' q and v columns only: none for outputs of
     * accelerations or multipliers (the frequency response then takes the state-space form) */
    if (lin_outputs_use(mv, MBL_BLK_A) || lin_outputs_use(mv, MBL_BLK_LAMBDA) || lin_outputs_use(mv, MBL_BLK_MU))
        want_io = 0;
    rc = lin_sparse_pencil_build(md, pt, opt, want_io, &P, st);
    if (rc) return mbl_error_prefix(st, "%s", method);
    int own = !lin;
    if (own && !(lin = lin_linear_shell(md, n - m))) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    snprintf(lin->method, sizeof lin->method, "%s", method);
    Vre = mbl_alloc_array((size_t)nd * k + 1, sizeof *Vre);
    Vim = mbl_alloc_array((size_t)nd * k + 1, sizeof *Vim);
    if (!Vre || !Vim || lin_alloc_eigs(lin, k)) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    /* undamped, non-gyroscopic, symmetric: the symmetric saddle-point pencil (Lanczos on a real
     * factor, full accuracy, no refinement); the index-3 first-order pencil otherwise */
    mbla_csc *Ks = NULL, *Bs = NULL;
    double nKs = 0, nMs = 0, asym = NAN;
    const mbla_eigs_backend *eb = opt->eigs_backend;
    int local = eb && !eb->root; /* a rank without the eigenvectors (another engine over MPI) */
    /* a complex shift: the first-order pencil (complex shift-invert) */
    int sym = opt->shift_im != 0.0 ? 0 : sym_pencil(&P, &Ks, &Bs, &nKs, &nMs, &asym, st), nunconv = 0, first_unconv = 0;
    if (sym > 0) sym = sym_spectrum(&P, Ks, Bs, nKs, nMs, opt->shift, k, eb, lin, &nunconv, &first_unconv, st);
    mbla_csc_free(Ks), mbla_csc_free(Bs);
    if (sym < 0) {
        rc = sym;
        mbl_error_prefix(st, "%s: partial spectrum", method);
        goto done;
    }
    if (!sym) {
        /* ARPACK to SPARSE_ARPACK_TOL only: the refinement below takes every pair to the accuracy of the
         * pencil's eigenvalue, and ARPACK's restarts to full precision cost more than it */
        mbla_eigs_opts eo;
        mbla_eigs_opts_default(&eo);
        eo.tol = SPARSE_ARPACK_TOL;
        mbl_lin_spectrum *sp = lin->spectrum;
        rc = eb ? eb->sinv(eb->ctx, P.A, P.E, opt->shift, opt->shift_im, k, &eo, sp->re, sp->im, Vre, Vim, nd, NULL, st)
                : mbla_eigs_sinv(P.A, P.E, opt->shift, opt->shift_im, k, &eo, sp->re, sp->im, Vre, Vim, nd, NULL, st);
        if (rc) {
            mbl_error_prefix(st, "%s: partial spectrum", method);
            goto done;
        }
        /* ARPACK's Ritz pairs of the shift-inverted index-3 pencil are accurate only to about eps
         * ||OP|| / |mu| (flexible pendulum n_p = 100: 3e-4): each is refined by Newton's method on the
         * pencil with the residual in doubled precision (mbla_eigs_refine) */
        if (local) {
            memset(Vre, 0, (size_t)nd * k * sizeof *Vre), memset(Vim, 0, (size_t)nd * k * sizeof *Vim);
            for (int j = 0; j < k; j++) lin->spectrum->berr[j] = NAN;
        } else {
            rc = mbla_eigs_refine(P.A, P.E, k, lin->spectrum->re, lin->spectrum->im, Vre, Vim, nd, 0, lin->spectrum->berr,
                                  NULL, st);
        }
        if (rc) {
            mbl_error_prefix(st, "%s: partial spectrum, refinement", method);
            goto done;
        }
        for (int j = 0; j < k; j++)
            for (int c = 0; c < n; c++) {
                lin->spectrum->vre[c + (size_t)j * n] = Vre[c + (size_t)j * nd];
                lin->spectrum->vim[c + (size_t)j * n] = Vim[c + (size_t)j * nd];
            }
    }
    if (lin_alloc_descriptor(lin, nd)) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    mbl_free(lin->descriptor->Bd), mbl_free(lin->descriptor->Cdd);
    lin->descriptor->Bd = P.Bd, lin->descriptor->Cdd = P.Cdd;
    P.Bd = P.Cdd = NULL;
    lin->spectrum->partial = k < nphys;
    lin->spectrum->shift = opt->shift;
    snprintf(lin->spectrum->solver, sizeof lin->spectrum->solver, "%s", eb ? eb->name : "arpack");
    char shift_txt[40] = "";
    if (opt->shift_im != 0.0) snprintf(shift_txt, sizeof shift_txt, "%+gi", opt->shift_im);
    snprintf(lin->spectrum->reason, sizeof lin->spectrum->reason, "%s", reason ? reason : "");
    snprintf(lin->notes, sizeof lin->notes,
             "%s%ssparse pencil %d x %d (constraint scale %.3g), %s shift-invert%s: the %d eigenvalues nearest %g%s "
             "of %d; %s",
             reason && reason[0] ? reason : "", reason && reason[0] ? "; " : "", nd, nd, P.scale,
             eb ? eb->what : "ARPACK",
             sym ? " on the symmetric pencil [K s Phi_q^T; s Phi_q 0], [M 0; 0 0] (undamped, non-gyroscopic)" : "",
             k, opt->shift, shift_txt,
             nphys,
             lin->A ? "A..D and M, C, K from augmented"
                    : "A, B, C, D, M, C, K, q_S, v_W and the state names not formed (partial spectrum of a large model)");
    if (nunconv > 0) { /* first, so that the notes' length limit never cuts it off */
        char head[192];
        snprintf(head, sizeof head,
                 "WARNING: the refinement of %d of the %d eigenvalues did not converge (inaccurate; the first is "
                 "eigenvalue %d, %.6g%+.6gi); ",
                 nunconv, k, first_unconv + 1, lin->spectrum->re[first_unconv], lin->spectrum->im[first_unconv]);
        size_t lh = strlen(head), cap = sizeof lin->notes, lr = strlen(lin->notes);
        if (lr > cap - 1 - lh) lr = cap - 1 - lh;
        memmove(lin->notes + lh, lin->notes, lr);
        lin->notes[lh + lr] = 0;
        memcpy(lin->notes, head, lh);
    }
    *linp = lin;
    lin = NULL;
done:
    if (lin && own) mbl_linear_free(lin);
    lin_sparse_pencil_free(&P);
    mbl_free(Vre), mbl_free(Vim);
    return rc;
}
