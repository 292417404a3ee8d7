/* Craig-Bampton reduction of an FE part (fe.h): the interfaces eliminated (src/fe/spider.c), the
 * fixed-interface normal modes of (K_ii, M_ii) by ARPACK (mbla_eigs_sym_chol: shift-invert at 0 on
 * CHOLMOD's factor of K_ii, which KLU's LU made several times slower), the constraint modes
 * -K_ii^-1 K_ib by CHOLMOD with the same factor, T = [Phi_i Psi; 0 I] and the pair (T^T K T, T^T M T) orthonormalised by LAPACK's
 * symmetric-definite driver, the rigid-body modes dropped. Memory: K and M sparse, the dense
 * arrays are n x (k + nb) (the basis, K T) and (k + nb)^2; never an n x n one. */
#include "fe/reduce_steps.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const double FE_TWO_PI = 6.283185307179586;

void fe_basis_free(fe_basis *b)
{
    if (!b) return;
    mbl_free(b->Phi), mbl_free(b->w2), mbl_free(b->wfixed), mbl_free(b->X), mbl_free(b->T);
    memset(b, 0, sizeof *b);
}

void fe_cb_free(fe_cb *c)
{
    if (!c) return;
    fe_elim_free(&c->e);
    mbla_csc_free(c->Kv), mbla_csc_free(c->Mv), mbla_csc_free(c->Kii), mbla_csc_free(c->Mii), mbla_csc_free(c->Kib);
    mbla_chol_free(c->chol);
    mbl_free(c->inner), mbl_free(c->wfix), mbl_free(c->Vfix), mbl_free(c->Psi);
    memset(c, 0, sizeof *c);
}

static const char *ifc_name(const fe_iface *f) { return f->name ? f->name : "(unnamed)"; }

static int check_opts(const fe_reduce_opts *o, mbl_status *st)
{
    if (!o) return mbl_error(st, MBL_EARG, "fe_reduce: no options");
    if (o->modes < -1) return mbl_error(st, MBL_EMODEL, "fe_reduce: modes = %d (-1: by the cut-off only)", o->modes);
    if (isnan(o->cutoff_hz) || isinf(o->cutoff_hz))
        return mbl_error(st, MBL_EMODEL, "fe_reduce: the cut-off frequency is not finite");
    if (o->modes < 0 && !(o->cutoff_hz > 0))
        return mbl_error(st, MBL_EMODEL, "fe_reduce: neither modes nor a cut-off frequency given");
    return 0;
}

/* A^T B A for the sparse G (u = G v) */
static int congruence(const mbla_csc *G, const mbla_csc *A, mbla_csc **out, mbl_status *st)
{
    mbla_csc *Gt = NULL, *AG = NULL;
    int r = mbla_csc_transpose(G, &Gt, st);
    if (!r) r = mbla_csc_matmul(A, G, &AG, st);
    if (!r) r = mbla_csc_matmul(Gt, AG, out, st);
    mbla_csc_free(Gt), mbla_csc_free(AG);
    return r;
}

static int check_finite(const fe_part *p, const mbla_csc *A, const char *what, mbl_status *st)
{
    for (int j = 0; j < A->n; j++)
        for (int q = A->p[j]; q < A->p[j + 1]; q++)
            if (!isfinite(A->x[q]))
                return mbl_error(st, MBL_EMODEL, "%s: %s(%d, %d) is not finite (node %d %s)",
                                 p->file ? p->file : "the part", what, A->i[q] + 1, j + 1, p->node_id[p->dof_node[j]],
                                 fe_dir_name(p->dof_dir[j]));
    return 0;
}

/* every interior row has mass (M's diagonal positive) */
static int check_mass(const fe_cb *c, mbl_status *st)
{
    const mbla_csc *M = c->Mii;
    for (int j = 0; j < M->n; j++) {
        double d = 0;
        for (int q = M->p[j]; q < M->p[j + 1]; q++)
            if (M->i[q] == j) d = M->x[q];
        if (!(d > 0)) {
            int v = c->inner[j];
            return mbl_error(st, MBL_EMODEL, "%s: node %d %s has no mass (M's diagonal is %g): every row that no "
                             "interface holds needs mass",
                             c->p->file ? c->p->file : "the part", c->p->node_id[c->e.vnode[v]],
                             fe_dir_name(c->e.vdir[v]), d);
        }
    }
    return 0;
}

int fe_cb_eliminate(fe_cb *c, const fe_part *p, const fe_iface *ifc, int niface, const fe_reduce_opts *o,
                    mbl_status *st)
{
    memset(c, 0, sizeof *c);
    int r = check_opts(o, st);
    if (r) return r;
    c->p = p, c->ifc = ifc, c->niface = niface, c->o = *o;
    if ((r = fe_elim_build(p, ifc, niface, &c->e, st))) return r;
    if ((r = check_finite(p, p->K, "K", st)) || (r = check_finite(p, p->M, "M", st))) return r;
    int nsp = 0;
    for (int i = 0; i < niface; i++) nsp += ifc[i].node < 0;
    if (nsp && ((r = congruence(c->e.G, p->K, &c->Kv, st)) || (r = congruence(c->e.G, p->M, &c->Mv, st)))) return r;
    const mbla_csc *K = c->Kv ? c->Kv : p->K, *M = c->Mv ? c->Mv : p->M;
    int nr = c->e.nr, nb = c->e.nb;
    char *isb = mbl_calloc((size_t)nr, 1);
    c->inner = mbl_alloc_array((size_t)nr, sizeof *c->inner);
    if (!isb || !c->inner) {
        mbl_free(isb);
        return mbl_error(st, MBL_ENOMEM, "fe_reduce: out of memory (%d rows)", nr);
    }
    for (int q = 0; q < nb; q++) isb[c->e.bnd[q]] = 1;
    for (int v = 0; v < nr; v++)
        if (!isb[v]) c->inner[c->ni++] = v;
    mbl_free(isb);
    int ni = c->ni;
    if (o->modes > ni)
        return mbl_error(st, MBL_EMODEL, "fe_reduce: modes = %d, more than the %d rows no interface holds", o->modes,
                         ni);
    if ((r = mbla_csc_select(K, ni, c->inner, ni, c->inner, &c->Kii, st)) ||
        (r = mbla_csc_select(M, ni, c->inner, ni, c->inner, &c->Mii, st)) ||
        (r = mbla_csc_select(K, ni, c->inner, nb, c->e.bnd, &c->Kib, st)))
        return r;
    return check_mass(c, st);
}

/* "A (node 12: 3 rows), B (spider of 4 nodes)" */
static void iface_list(const fe_cb *c, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; i < c->niface && len + 1 < size; i++) {
        const fe_iface *f = &c->ifc[i];
        int nrow = c->e.ifc_ptr[i + 1] - c->e.ifc_ptr[i];
        int w = f->node >= 0 ? snprintf(buf + len, size - len, "%s%s (node %d: %d rows%s)", i ? ", " : "",
                                        ifc_name(f), c->p->node_id[f->node], nrow, nrow < 6 ? ", too few alone" : "")
                             : snprintf(buf + len, size - len, "%s%s (spider of %d nodes)", i ? ", " : "", ifc_name(f),
                                        f->nnodes);
        if (w < 0) break;
        len += (size_t)w;
    }
}

int fe_cb_factor(fe_cb *c, mbl_status *st)
{
    if (c->ni == 0) return 0;
    int r = mbla_chol_new(c->Kii, 'L', &c->chol, st);
    if (r != MBL_ESINGULAR) return r;
    char list[600];
    iface_list(c, list, sizeof list);
    return mbl_error(st, MBL_EMODEL,
                     "the interfaces %s do not hold the part: K with their rows held is not positive definite "
                     "(one node without rotations holds no rotation: give a spider, or three nodes not on a line; "
                     "or a piece of the part touches no interface)",
                     list);
}

/* the k lowest eigenpairs of (K_ii, M_ii): ARPACK's Lanczos on CHOLMOD's factor of K_ii (shift 0:
 * K_ii is positive definite; the constraint modes use the same factor), or LAPACK */
static int solve_modes(const fe_cb *c, int k, double *w, double *V, mbl_status *st)
{
    int ni = c->ni;
    if (2 * k + 1 < ni && FE_DENSE_ROWS < ni) {
        mbla_eigs_opts eo;
        mbla_eigs_opts_default(&eo);
        eo.tol = FE_EIGS_TOL;
        return mbla_eigs_sym_chol(NULL, c->Mii, 0.0, c->chol, k, &eo, w, V, ni, NULL, st);
    }
    double *Kd = mbl_alloc_array((size_t)ni * ni, sizeof *Kd), *Md = mbl_alloc_array((size_t)ni * ni, sizeof *Md);
    double *wa = mbl_alloc_array((size_t)ni, sizeof *wa), *Z = mbl_alloc_array((size_t)ni * ni, sizeof *Z);
    int r = !Kd || !Md || !wa || !Z ? mbl_error(st, MBL_ENOMEM, "fe_reduce: out of memory (%d interior rows)", ni) : 0;
    if (!r) r = mbla_csc_to_dense(c->Kii, Kd, ni, st);
    if (!r) r = mbla_csc_to_dense(c->Mii, Md, ni, st);
    if (!r) r = mbla_sygvd(ni, Kd, ni, Md, ni, wa, Z, ni, st);
    if (!r) {
        memcpy(w, wa, (size_t)k * sizeof *w);
        memcpy(V, Z, (size_t)ni * k * sizeof *V);
    }
    mbl_free(Kd), mbl_free(Md), mbl_free(wa), mbl_free(Z);
    return r;
}

int fe_cb_fixed(fe_cb *c, mbl_status *st)
{
    int ni = c->ni, limit = c->o.modes >= 0 ? c->o.modes : ni;
    double cut = c->o.cutoff_hz > 0 ? FE_TWO_PI * c->o.cutoff_hz : 0, w2cut = cut * cut;
    if (limit == 0 || ni == 0) return 0;
    int k = w2cut > 0 && limit > FE_CUTOFF_FIRST ? FE_CUTOFF_FIRST : limit, count;
    for (;;) {
        c->wfix = mbl_alloc_array((size_t)k, sizeof *c->wfix);
        c->Vfix = mbl_alloc_array((size_t)ni * k, sizeof *c->Vfix);
        if (!c->wfix || !c->Vfix) return mbl_error(st, MBL_ENOMEM, "fe_reduce: out of memory (%d modes)", k);
        int r = solve_modes(c, k, c->wfix, c->Vfix, st);
        if (r) {
            mbl_error_prefix(st, "fe_reduce: the fixed-interface modes: ");
            return r; /* (the prefix returns st's code, none without st) */
        }
        count = k;
        if (w2cut > 0)
            for (count = 0; count < k && c->wfix[count] <= w2cut;) count++;
        if (w2cut <= 0 || count < k || k == limit) break;
        mbl_free(c->wfix), mbl_free(c->Vfix);
        c->wfix = c->Vfix = NULL;
        k = 2 * k < limit ? 2 * k : limit;
    }
    c->nfixed = count;
    return 0;
}

int fe_cb_constraint(fe_cb *c, mbl_status *st)
{
    int ni = c->ni, nb = c->e.nb;
    if (ni == 0 || nb == 0) return 0;
    c->Psi = mbl_alloc_array((size_t)ni * nb, sizeof *c->Psi);
    if (!c->Psi) return mbl_error(st, MBL_ENOMEM, "fe_reduce: out of memory (%d x %d constraint modes)", ni, nb);
    int r = mbla_csc_to_dense(c->Kib, c->Psi, ni, st);
    if (!r) r = mbla_chol_solve(c->chol, nb, c->Psi, ni, st);
    if (r) return r;
    for (size_t q = 0; q < (size_t)ni * nb; q++) c->Psi[q] = -c->Psi[q];
    return 0;
}

/* T (nr x m): the fixed-interface modes on the interior rows, then the constraint modes with the
 * unit on their interface row */
static double *assemble_t(const fe_cb *c, int m)
{
    int nr = c->e.nr, ni = c->ni, nf = c->nfixed;
    double *T = mbl_calloc((size_t)nr * m, sizeof *T);
    if (!T) return NULL;
    for (int j = 0; j < m; j++) {
        double *t = T + (size_t)nr * j;
        if (ni) {
            const double *src = j < nf ? c->Vfix + (size_t)ni * j : c->Psi + (size_t)ni * (j - nf);
            for (int q = 0; q < ni; q++) t[c->inner[q]] = src[q];
        }
        if (j >= nf) t[c->e.bnd[j - nf]] = 1;
    }
    return T;
}

/* R = T^T A T (m x m), symmetrised; Y: nr x m scratch */
static int project(const mbla_csc *A, const double *T, int nr, int m, double *Y, double *R, mbl_status *st)
{
    for (int j = 0; j < m; j++) mbla_csc_gemv(A, 1.0, T + (size_t)nr * j, 0.0, Y + (size_t)nr * j, NULL);
    int r = mbla_gemm('T', 'N', m, m, nr, 1.0, T, nr, Y, nr, 0.0, R, m, st);
    if (r) return r;
    for (int j = 0; j < m; j++)
        for (int i = 0; i < j; i++) R[i + (size_t)m * j] = R[j + (size_t)m * i] = 0.5 * (R[i + (size_t)m * j] + R[j + (size_t)m * i]);
    return 0;
}

/* The rigid-body motions on the rows of v (nr x 6, column-major): a translation e_a or a rotation
 * e_a x x about the part's origin at each node row (a rotation row: the rotation itself), a spider's
 * rows those of its point `at`. Exact, not carried by the constraint modes (which hold them only to
 * K_ii's condition times eps): the modes are made M-orthogonal to these. */
static void rigid_motions(const fe_cb *c, double *Rv)
{
    int nr = c->e.nr, s0 = nr, sp = 0;
    for (int i = 0; i < c->niface; i++) s0 -= c->ifc[i].node < 0 ? 6 : 0;
    memset(Rv, 0, (size_t)nr * 6 * sizeof *Rv);
    for (int q = 0; q < nr; q++) {
        int d = c->e.vdir[q];
        const double *x = NULL;
        if (c->e.vnode[q] >= 0) {
            x = c->p->xyz + 3 * (size_t)c->e.vnode[q];
        } else { /* spider (q - s0) / 6 in the interfaces' order */
            int want = (q - s0) / 6;
            sp = 0;
            for (int i = 0; i < c->niface && !x; i++)
                if (c->ifc[i].node < 0 && sp++ == want) x = c->ifc[i].at;
        }
        for (int a = 0; a < 3 && x; a++) {
            int b1 = (a + 1) % 3, b2 = (a + 2) % 3; /* e_a x x = x[b1] e_b2 - x[b2] e_b1 */
            if (d < 3) {
                Rv[q + (size_t)nr * a] = d == a;
                Rv[q + (size_t)nr * (3 + a)] = d == b2 ? x[b1] : d == b1 ? -x[b2] : 0;
            } else {
                Rv[q + (size_t)nr * (3 + a)] = d - 3 == a;
            }
        }
    }
}

/* The elastic modes of the reduced pair (Kt, Mt), m x m: N, an orthonormal basis of the
 * complement of Mt Rr (the motions M-orthogonal to the rigid ones: their QR), then
 * (N^T Mt N) y = mu (N^T Kt N) y by dsygvd, N^T Kt N positive definite unless the part moves
 * without straining beyond its six rigid-body motions; w^2 = 1 / mu. A mode with
 * mu <= FE_MASSLESS_TOL mu_max is a direction without mass (a quadratic tetrahedron's consistent
 * mass has three: an infinite frequency) and is dropped. C (m x 6, overwritten): T^T M R, R the
 * rigid-body motions (rigid_motions). Out: Z (m x k) with Z^T Mt Z = I,
 * Z^T Kt Z = diag(w), w ascending; nrigid = 6. The rigid motions are removed exactly, not by a
 * threshold on w^2 that would have to sit between rounding and the lowest elastic mode (the
 * near-massless modes of a quadratic mesh reach w^2 ~ 1e16, eps times that above the lowest). */
static int elastic_modes(const fe_cb *c, int m, const double *Kt, const double *Mt, double *C, double *Z, double *w,
                         int *kout, int *nrigid, mbl_status *st)
{
    double *Q = mbl_alloc_array((size_t)m * m, sizeof *Q), *Y = mbl_alloc_array((size_t)m * m, sizeof *Y);
    double *Kc = mbl_alloc_array((size_t)m * m, sizeof *Kc), *Mc = mbl_alloc_array((size_t)m * m, sizeof *Mc);
    double *mu = mbl_alloc_array((size_t)m, sizeof *mu);
    int jpvt[6], rank = 0, r = 0;
    if (!Q || !Y || !Kc || !Mc || !mu) {
        r = mbl_error(st, MBL_ENOMEM, "fe_reduce: out of memory (%d x %d reduced pair)", m, m);
        goto done;
    }
    if ((r = mbla_qrcp(m, 6, C, m, -1, jpvt, &rank, Q, m, m, NULL, 1, st))) goto done;
    if (rank != 6) {
        r = mbl_error(st, MBL_EMODEL, "fe_reduce: the interfaces carry %d of the part's 6 rigid-body motions: "
                      "they do not hold it", rank);
        goto done;
    }
    int nc = m - 6;
    const double *N = Q + (size_t)m * 6;
    if (nc < 1) {
        r = mbl_error(st, MBL_EMODEL, "fe_reduce: no elastic mode left (%d fixed-interface modes, %d interface rows, "
                      "6 rigid-body motions): keep more modes", c->nfixed, c->e.nb);
        goto done;
    }
    /* Kc = N^T Kt N, Mc = N^T Mt N */
    if ((r = mbla_gemm('N', 'N', m, nc, m, 1.0, Kt, m, N, m, 0.0, Y, m, st)) ||
        (r = mbla_gemm('T', 'N', nc, nc, m, 1.0, N, m, Y, m, 0.0, Kc, nc, st)) ||
        (r = mbla_gemm('N', 'N', m, nc, m, 1.0, Mt, m, N, m, 0.0, Y, m, st)) ||
        (r = mbla_gemm('T', 'N', nc, nc, m, 1.0, N, m, Y, m, 0.0, Mc, nc, st)))
        goto done;
    if ((r = mbla_sygvd(nc, Mc, nc, Kc, nc, mu, Y, nc, st))) {
        if (r == MBL_ESINGULAR)
            r = mbl_error(st, MBL_EMODEL, "fe_reduce: the part moves without straining beyond its six rigid-body "
                          "motions (it is not connected, or a mechanism)");
        else
            mbl_error_prefix(st, "fe_reduce: the reduced pair: ");
        goto done;
    }
    /* mu ascending: the elastic modes from the largest mu (the lowest w^2) down to the massless ones */
    double top = mu[nc - 1];
    int k = 0;
    while (k < nc && mu[nc - 1 - k] > FE_MASSLESS_TOL * top) k++;
    for (int j = 0; j < k; j++) {
        int t = nc - 1 - j;
        double s = 1 / sqrt(mu[t]);
        w[j] = 1 / mu[t];
        if ((r = mbla_gemv('N', m, nc, s, N, m, Y + (size_t)nc * t, 0.0, Z + (size_t)m * j, st))) goto done;
    }
    *kout = k, *nrigid = 6;
done:
    mbl_free(Q), mbl_free(Y), mbl_free(Kc), mbl_free(Mc), mbl_free(mu);
    return r;
}

/* the basis on the part's rows and the markers' T and X from the modes V on v's rows (nr x k) */
static int fill_basis(const fe_cb *c, const double *V, int k, fe_basis *b, mbl_status *st)
{
    const fe_part *p = c->p;
    int nr = c->e.nr, n = p->ndof, ni = c->niface;
    b->Phi = mbl_alloc_array((size_t)n * k, sizeof *b->Phi);
    b->X = mbl_alloc_array((size_t)3 * ni, sizeof *b->X);
    b->T = mbl_calloc((size_t)6 * k * ni, sizeof *b->T);
    b->wfixed = mbl_alloc_array((size_t)c->nfixed + 1, sizeof *b->wfixed);
    if (!b->Phi || !b->X || !b->T || !b->wfixed) return mbl_error(st, MBL_ENOMEM, "fe_reduce: out of memory (%d x %d)", n, k);
    for (int j = 0; j < k; j++) mbla_csc_gemv(c->e.G, 1.0, V + (size_t)nr * j, 0.0, b->Phi + (size_t)n * j, NULL);
    for (int i = 0; i < ni; i++) {
        const fe_iface *f = &c->ifc[i];
        memcpy(b->X + 3 * i, f->node >= 0 ? p->xyz + 3 * (size_t)f->node : f->at, 3 * sizeof *b->X);
        double *Ti = b->T + (size_t)6 * k * i;
        for (int q = c->e.ifc_ptr[i]; q < c->e.ifc_ptr[i + 1]; q++)
            for (int j = 0; j < k; j++) Ti[c->e.bdir[q] + 6 * j] = V[c->e.bnd[q] + (size_t)nr * j];
    }
    if (c->nfixed) memcpy(b->wfixed, c->wfix, (size_t)c->nfixed * sizeof *b->wfixed);
    b->n = n, b->k = k, b->nfixed = c->nfixed, b->nconstr = c->e.nb, b->niface = ni;
    return 0;
}

int fe_cb_basis(fe_cb *c, fe_basis *b, mbl_status *st)
{
    memset(b, 0, sizeof *b);
    const mbla_csc *K = c->Kv ? c->Kv : c->p->K, *M = c->Mv ? c->Mv : c->p->M;
    int nr = c->e.nr, m = c->nfixed + c->e.nb, nrigid = 0, r;
    double *T = assemble_t(c, m), *Y = mbl_alloc_array((size_t)nr * m, sizeof *Y);
    double *Kt = mbl_alloc_array((size_t)m * m, sizeof *Kt), *Mt = mbl_alloc_array((size_t)m * m, sizeof *Mt);
    double *w = mbl_alloc_array((size_t)m, sizeof *w), *Z = mbl_alloc_array((size_t)m * m, sizeof *Z);
    if (!T || !Y || !Kt || !Mt || !w || !Z) {
        r = mbl_error(st, MBL_ENOMEM, "fe_reduce: out of memory (%d x %d basis)", nr, m);
        goto done;
    }
    if ((r = project(K, T, nr, m, Y, Kt, st)) || (r = project(M, T, nr, m, Y, Mt, st))) goto done;
    int k = 0;
    /* C = T^T M R (m x 6), R the rigid motions (nr x 6) */
    double *C = mbl_alloc_array((size_t)m * 6 + (size_t)nr * 12, sizeof *C);
    double *R = C ? C + (size_t)m * 6 : NULL, *MR = C ? R + (size_t)nr * 6 : NULL;
    if (!C) {
        r = mbl_error(st, MBL_ENOMEM, "fe_reduce: out of memory");
        goto done;
    }
    rigid_motions(c, R);
    for (int j = 0; j < 6; j++) mbla_csc_gemv(M, 1.0, R + (size_t)nr * j, 0.0, MR + (size_t)nr * j, NULL);
    r = mbla_gemm('T', 'N', m, 6, nr, 1.0, T, nr, MR, nr, 0.0, C, m, st);
    if (!r) r = elastic_modes(c, m, Kt, Mt, C, Z, w, &k, &nrigid, st);
    mbl_free(C);
    if (r) goto done;
    /* the elastic modes on v's rows: V = T Z into Y */
    if ((r = mbla_gemm('N', 'N', nr, k, m, 1.0, T, nr, Z, m, 0.0, Y, nr, st))) goto done;
    mbl_free(T), T = NULL;
    if ((r = fill_basis(c, Y, k, b, st))) goto done;
    b->nrigid = nrigid;
    b->w2 = mbl_alloc_array((size_t)k, sizeof *b->w2);
    if (!b->w2) {
        r = mbl_error(st, MBL_ENOMEM, "fe_reduce: out of memory");
        goto done;
    }
    memcpy(b->w2, w, (size_t)k * sizeof *b->w2);
done:
    mbl_free(T), mbl_free(Y), mbl_free(Kt), mbl_free(Mt), mbl_free(w), mbl_free(Z);
    if (r) fe_basis_free(b);
    return r;
}

int fe_reduce(const fe_part *p, const fe_iface *ifc, int niface, const fe_reduce_opts *o, fe_basis *b,
              mbl_status *st)
{
    if (!b) return mbl_error(st, MBL_EARG, "fe_reduce: no basis to fill");
    memset(b, 0, sizeof *b);
    fe_cb c;
    int r = fe_cb_eliminate(&c, p, ifc, niface, o, st);
    if (!r) r = fe_cb_factor(&c, st);
    if (!r) r = fe_cb_fixed(&c, st);
    if (!r) r = fe_cb_constraint(&c, st);
    if (!r) r = fe_cb_basis(&c, b, st);
    fe_cb_free(&c);
    return r;
}
