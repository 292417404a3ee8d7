/* The saddle-point order of KLU (mbla_klu_opts.saddle, src/la/klu_saddle.c) on the spatial beam
 * pendulum examples/mech/spatial_beam_pendulum.yaml (issue 31, item 3):
 *  - the shift-invert matrix K_aug - sigma B of its symmetric saddle-point pencil (the one the
 *    sparse eigen path factors) and the operating point's Newton matrix at n_p = 200 per link (rows [equations of
 *    motion; constraints], columns [multipliers, coordinates], given the column order that makes
 *    it a saddle point): the factor's entries stay within FILL_MAX times AMD's own estimate on the
 *    saddle-point matrix (amd_order here, 2 nnz(L) - n for L + U); KLU's default order went to
 *    3-4 times here and 10 times at n_p = 300 and beyond;
 *  - the solves of the saddle order are backward stable (normwise backward error below BERR_MAX);
 *  - the lowest eigenvalues of the sparse path (saddle order) agree with the dense whole spectrum
 *    (n_p = 60).
 * Not timed. */
#include <amd.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lin/methods_internal.h"
#include "mblin/la.h"
#include "mblin/mblin.h"
#include "test.h"

#define NP_FILL 200 /* the fill at this size (KLU's default order: 3-4x AMD's estimate) */
#define NP_EIG 60    /* the eigenvalues against the dense whole spectrum at this size */
#define FILL_MAX 1.5 /* factor entries over AMD's L + U estimate */
#define BERR_MAX 1e-13 /* normwise backward error of a solve (about 450 eps) */

static mbl_model *md_;
static mbl_point *pt_;

static void load(int np)
{
    mbl_point_free(pt_);
    mbl_model_free(md_);
    md_ = NULL, pt_ = NULL;
    const char *path = "examples/mech/spatial_beam_pendulum.yaml";
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL);
    if (!f) return;
    static char text[1 << 16], out[1 << 16];
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = '\0';
    char *o = out, *p = text, *q;
    while ((q = strstr(p, "elements: 10"))) {
        memcpy(o, p, (size_t)(q - p));
        o += q - p;
        o += sprintf(o, "elements: %d", np);
        p = q + strlen("elements: 10");
    }
    strcpy(o, p);
    mbl_status st;
    int r = mbl_model_load_string(out, strlen(out), path, NULL, 0, &md_, &st);
    CHECK_MSG(r == 0, "%s", st.msg);
    if (!r) r = mbl_operating_point(md_, NULL, &pt_, &st);
    CHECK_MSG(r == 0, "%s", st.msg);
}

/* AMD's estimate of the entries of L + U for a symmetric order of C (C + C^T) */
static double amd_estimate(const mbla_csc *C)
{
    int *perm = malloc(((size_t)C->n + 1) * sizeof *perm);
    double info[AMD_INFO];
    int r = amd_order(C->n, C->p, C->i, perm, NULL, info);
    free(perm);
    CHECK(r >= AMD_OK);
    return 2.0 * (info[AMD_LNZ] + C->n) - C->n;
}

/* factor C with opts, return the factor's entries; x = C^-1 b */
static double factor_solve(const mbla_csc *C, const mbla_klu_opts *o, const double *b, double *x)
{
    mbl_status st;
    mbla_klu *k = NULL;
    int r = mbla_klu_new(C, o, &k, &st);
    CHECK_MSG(r == 0, "%s", st.msg);
    if (r) return 0;
    double nnz = 0;
    mbla_klu_factor_stats(k, &nnz, NULL);
    memcpy(x, b, (size_t)C->n * sizeof *x);
    CHECK_EQ_INT(mbla_klu_solve(k, 1, x, C->n, &st), 0);
    mbla_klu_free(k);
    return nnz;
}

/* the normwise backward error max|C x - b| / (max|C| max|x| + max|b|) */
static double berr(const mbla_csc *C, const double *x, const double *b)
{
    int n = C->n;
    double *r = malloc((size_t)n * sizeof *r), nr = 0, nc = 0, nx = 0, nb = 0;
    memcpy(r, b, (size_t)n * sizeof *r);
    mbl_status st;
    CHECK_EQ_INT(mbla_csc_gemv(C, 1.0, x, -1.0, r, &st), 0);
    for (int i = 0; i < n; i++) nr = fmax(nr, fabs(r[i])), nx = fmax(nx, fabs(x[i])), nb = fmax(nb, fabs(b[i]));
    for (int t = 0; t < C->p[n]; t++) nc = fmax(nc, fabs(C->x[t]));
    free(r);
    return nr / (nc * nx + nb);
}

/* both orders on C: the saddle one within FILL_MAX of AMD's estimate on S (C itself, or C with
 * its columns in the saddle-point order), the same solution */
static void check_orders(const char *what, const mbla_csc *C, const mbla_csc *S, const mbla_klu_opts *saddle)
{
    int n = C->n;
    double *b = malloc(2 * (size_t)n * sizeof *b), *x0 = malloc((size_t)n * sizeof *x0),
           *x1 = malloc((size_t)n * sizeof *x1);
    for (int i = 0; i < n; i++) b[i] = sin(0.37 * i + 0.1);
    mbla_klu_opts def;
    mbla_klu_opts_default(&def);
    def.equilibrate = saddle->equilibrate;
    double est = amd_estimate(S);
    double f0 = factor_solve(C, &def, b, x0), f1 = factor_solve(C, saddle, b, x1);
    double e0 = berr(C, x0, b), e1 = berr(C, x1, b);
    printf("%s: n %d, nnz %d, AMD estimate %.0f, factor entries: default order %.0f (%.1fx), saddle order "
           "%.0f (%.2fx); backward errors %.1e (default), %.1e (saddle)\n",
           what, n, C->p[n], est, f0, f0 / est, f1, f1 / est, e0, e1);
    CHECK_MSG(f1 > 0 && f1 <= FILL_MAX * est, "%s: %.0f entries, AMD estimate %.0f", what, f1, est);
    CHECK_MSG(e1 <= BERR_MAX, "%s: backward error %g", what, e1);
    free(b), free(x0), free(x1);
}

/* K_aug = [K G^T; G 0] and B = [M 0; 0 0] from the descriptor pencil (as src/lin/sparse_pencil.c) */
TEST(fill)
{
    mbl_status st;
    mbl_lin_options lo;
    mbl_lin_options_default(&lo);
    mbl_sparse_pencil P;
    memset(&P, 0, sizeof P);
    int r = lin_sparse_pencil_build(md_, pt_, &lo, 0, &P, &st);
    CHECK_MSG(r == 0, "%s", st.msg);
    if (r) return;
    int n = P.n, m = P.m, na = n + m, cap = P.A->p[P.A->n] + P.E->p[P.E->n] + 1, a = 0;
    int *ti = malloc((size_t)cap * sizeof *ti), *tj = malloc((size_t)cap * sizeof *tj);
    int *ui = malloc((size_t)cap * sizeof *ui), *uj = malloc((size_t)cap * sizeof *uj);
    double *tx = malloc((size_t)cap * sizeof *tx), *ux = malloc((size_t)cap * sizeof *ux);
    int an = 0, a0 = 0;
    for (int j = 0; j < P.A->n; j++) {
        if (j >= n && j < 2 * n) continue;
        int c = j < n ? j : j - n;
        for (int q = P.A->p[j]; q < P.A->p[j + 1]; q++) {
            int i = P.A->i[q];
            if (i < n || (j >= 2 * n && i >= 2 * n)) continue;
            ti[a] = i - n, tj[a] = c, tx[a] = -P.A->x[q];
            /* the Newton matrix's layout: columns [multipliers, coordinates] */
            ui[an] = i - n, uj[an] = c < n ? c + m : c - n, ux[an++] = -P.A->x[q];
            a++;
        }
    }
    a0 = a;
    for (int j = n; j < 2 * n; j++)
        for (int q = P.E->p[j]; q < P.E->p[j + 1]; q++)
            if (P.E->i[q] >= n && P.E->i[q] < 2 * n) ti[a] = P.E->i[q] - n, tj[a] = j - n, tx[a++] = P.E->x[q];
    mbla_csc *C = NULL, *N = NULL, *K = NULL;
    CHECK_EQ_INT(mbla_csc_from_triplets(na, na, a0, ti, tj, tx, NULL, &K, &st), 0); /* K_aug */
    CHECK_EQ_INT(mbla_csc_from_triplets(na, na, a, ti, tj, tx, NULL, &C, &st), 0); /* K + B: sigma = -1 */
    CHECK_EQ_INT(mbla_csc_from_triplets(na, na, an, ui, uj, ux, NULL, &N, &st), 0);
    if (C && N && K) {
        mbla_eigs_opts eo;
        mbla_eigs_opts_default(&eo);
        CHECK_EQ_INT(eo.klu.saddle, 1);
        check_orders("shift-invert K_aug - sigma B", C, C, &eo.klu);
        int *cols = malloc((size_t)na * sizeof *cols);
        for (int j = 0; j < na; j++) cols[j] = j < n ? j + m : j - n; /* B(:, j) = N(:, cols[j]) */
        mbla_klu_opts ko;
        mbla_klu_opts_default(&ko);
        ko.saddle = 1, ko.saddle_cols = cols;
        check_orders("Newton matrix [G^T K; 0 G]", N, K, &ko);
        free(cols);
    }
    mbla_csc_free(C), mbla_csc_free(N), mbla_csc_free(K);
    free(ti), free(tj), free(tx), free(ui), free(uj), free(ux);
    lin_sparse_pencil_free(&P);
}

/* the lowest eigenvalues of the sparse path against the dense whole spectrum */
TEST(eigenvalues)
{
    mbl_status st;
    double w[2][6];
    for (int pass = 0; pass < 2; pass++) {
        mbl_lin_options lo;
        mbl_lin_options_default(&lo);
        lo.nev = 20;
        lo.partial = pass ? MBL_PARTIAL_ALWAYS : MBL_PARTIAL_NEVER;
        mbl_linear *lin = NULL;
        mbl_modes *modes = NULL;
        int r = mbl_linearize(md_, pt_, &lo, &lin, &st);
        if (!r) r = mbl_modal(lin, NULL, &modes, &st);
        CHECK_MSG(r == 0, "%s", st.msg);
        if (r) return;
        /* the lowest six angular frequencies (positive imaginary parts, ascending) */
        int k = 0;
        double prev = 0;
        for (k = 0; k < 6; k++) {
            double best = INFINITY;
            for (int i = 0; i < modes->nx; i++) {
                double im = modes->modes[i].im;
                if (!modes->modes[i].spurious && im > prev * (1 + 1e-12) && im < best) best = im;
            }
            w[pass][k] = prev = best;
        }
        mbl_modes_free(modes);
        mbl_linear_free(lin);
    }
    for (int k = 0; k < 6; k++) CHECK_REL(w[1][k], w[0][k], 1e-8);
    printf("lowest angular frequencies (sparse, saddle order): %.9f %.9f %.9f %.9f %.9f %.9f\n", w[1][0], w[1][1],
           w[1][2], w[1][3], w[1][4], w[1][5]);
}

int main(void)
{
    load(NP_FILL);
    if (md_ && pt_) RUN(fill);
    load(NP_EIG);
    if (md_ && pt_) RUN(eigenvalues);
    mbl_point_free(pt_);
    mbl_model_free(md_);
    return test_summary("beam3_fill");
}
