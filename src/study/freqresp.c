/* Frequency response G(i w) of an exact linear model (docs/study.md, "Frequency response").
 *
 * State space: G = C (i w I - A)^-1 B + D, order nx = 2(n - m), from the default linearization.
 * Descriptor (when a descriptor-method linearization of the same point is given):
 * G = Cdd (i w E - Ad)^-1 Bd + D, order 2n + rank Phi_q. At every frequency the complex matrix is
 * solved by LAPACK's expert driver zgesvx (equilibration, LU, reciprocal condition estimate,
 * iterative refinement); the form whose equilibrated matrix has the larger reciprocal condition
 * is kept, and which one it was is recorded per frequency. Dense LAPACK: the models
 * are the small-to-medium ones whose A is formed. */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <string.h>

#include <lapacke.h>

#include "core/numfmt.h"
#include "mblin/json.h"
#include "mblin/sweep.h"

#define TWO_PI 6.283185307179586476925286766559

void mbl_freqresp_free(mbl_freqresp_result *r)
{
    if (!r) return;
    mbl_free(r->w), mbl_free(r->re), mbl_free(r->im), mbl_free(r->mag), mbl_free(r->mag_db);
    mbl_free(r->phase_deg), mbl_free(r->rcond), mbl_free(r->form);
    mbl_free(r);
}

/* One form: M = i w E - A (E NULL: identity), right-hand sides b (n x nrhs, leading dimension ldb:
 * input columns), output rows c (nout rows, row j at c + j, column stride ldc). */
typedef struct form {
    int n, nrhs, nout;
    const double *E, *A, *b, *c;
    int ldb, ldc;
    lapack_complex_double *M, *AF, *rhs, *x;
    double *r, *cs, *ferr, *berr;
    lapack_int *ipiv;
} form;

static int form_alloc(form *f)
{
    size_t n = (size_t)f->n, m = (size_t)f->nrhs;
    f->M = mbl_alloc_array(n * n + 1, sizeof *f->M);
    f->AF = mbl_alloc_array(n * n + 1, sizeof *f->AF);
    f->rhs = mbl_alloc_array(n * m + 1, sizeof *f->rhs);
    f->x = mbl_alloc_array(n * m + 1, sizeof *f->x);
    f->r = mbl_alloc_array(n + 1, sizeof *f->r);
    f->cs = mbl_alloc_array(n + 1, sizeof *f->cs);
    f->ferr = mbl_alloc_array(m + 1, sizeof *f->ferr);
    f->berr = mbl_alloc_array(m + 1, sizeof *f->berr);
    f->ipiv = mbl_alloc_array(n + 1, sizeof *f->ipiv);
    return f->M && f->AF && f->rhs && f->x && f->r && f->cs && f->ferr && f->berr && f->ipiv ? 0 : MBL_ENOMEM;
}

static void form_free(form *f)
{
    mbl_free(f->M), mbl_free(f->AF), mbl_free(f->rhs), mbl_free(f->x), mbl_free(f->r), mbl_free(f->cs);
    mbl_free(f->ferr), mbl_free(f->berr), mbl_free(f->ipiv);
}

/* Solve (i w E - A) X = B by LAPACK's expert driver zgesvx: equilibration, LU, the reciprocal
 * condition of the equilibrated matrix, and iterative refinement of each column (which makes the
 * solution componentwise backward stable: the small displacement components of a strongly
 * attenuated response keep their relative accuracy, 3.7e-12 -> 4.4e-15 on tests/study/two_mass.yaml
 * at 200 rad/s). g (nout x nrhs, column-major) = C X; rcond 0 (and g 0) when the matrix is
 * singular to working precision. */
static int form_solve(form *f, double w, double *rcond, double complex *g, mbl_status *st)
{
    int n = f->n, m = f->nrhs;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            size_t k = (size_t)j * n + i;
            double e = f->E ? f->E[k] : (i == j ? 1.0 : 0.0);
            f->M[k] = lapack_make_complex_double(-f->A[k], w * e);
        }
    for (int c = 0; c < m; c++)
        for (int i = 0; i < n; i++) f->rhs[(size_t)c * n + i] = f->b[(size_t)c * f->ldb + i];
    char equed = 'N';
    double rpivot = 0;
    lapack_int info = LAPACKE_zgesvx(LAPACK_COL_MAJOR, 'E', 'N', n, m, f->M, n, f->AF, n, f->ipiv, &equed, f->r, f->cs,
                                     f->rhs, n, f->x, n, rcond, f->ferr, f->berr, &rpivot);
    if (info < 0) return mbl_error(st, MBL_ELIB, "zgesvx: argument %d", (int)-info);
    /* singular: exactly (info <= n), or to working precision: rcond below n eps, where a relative
     * change of the matrix by its rounding makes it singular and G has no correct digit */
    if (info > 0 || *rcond < n * DBL_EPSILON) {
        *rcond = 0;
        for (size_t k = 0; k < (size_t)f->nout * m; k++) g[k] = 0;
        return 0;
    }
    for (int c = 0; c < m; c++)
        for (int o = 0; o < f->nout; o++) {
            double complex s = 0;
            for (int j = 0; j < n; j++) s += f->c[o + (size_t)j * f->ldc] * f->x[(size_t)c * n + j];
            g[(size_t)c * f->nout + o] = s;
        }
    return 0;
}

/* The result of one input-output pair with nw frequencies, names filled in (NULL: out of memory). */
static mbl_freqresp_result *result_new(const mbl_linear *lin, int input, int output, int nw)
{
    mbl_freqresp_result *r = mbl_calloc(1, sizeof *r);
    if (!r) return NULL;
    size_t m = (size_t)nw;
    r->nw = nw;
    r->w = mbl_alloc_array(m, sizeof(double));
    r->re = mbl_alloc_array(m, sizeof(double));
    r->im = mbl_alloc_array(m, sizeof(double));
    r->mag = mbl_alloc_array(m, sizeof(double));
    r->mag_db = mbl_alloc_array(m, sizeof(double));
    r->phase_deg = mbl_alloc_array(m, sizeof(double));
    r->rcond = mbl_alloc_array(m, sizeof(double));
    r->form = mbl_alloc_array(m, sizeof(int));
    snprintf(r->input, sizeof r->input, "%s", lin->input_names && lin->input_names[input] ? lin->input_names[input] : "");
    snprintf(r->output, sizeof r->output, "%s",
             lin->output_names && lin->output_names[output] ? lin->output_names[output] : "");
    if (!r->w || !r->re || !r->im || !r->mag || !r->mag_db || !r->phase_deg || !r->rcond || !r->form) {
        mbl_freqresp_free(r);
        return NULL;
    }
    return r;
}

/* Frequency k of one pair: g (already + D), the form and rcond used; the phase unwrapped against
 * frequency k - 1's. */
static void result_set(mbl_freqresp_result *r, int k, double w, int form_used, double rcond, double complex g)
{
    r->w[k] = w;
    r->form[k] = form_used;
    r->rcond[k] = rcond;
    if (form_used == MBL_FR_POLE) {
        r->re[k] = r->im[k] = INFINITY;
        r->mag[k] = r->mag_db[k] = INFINITY;
        r->phase_deg[k] = NAN;
        return;
    }
    r->re[k] = creal(g), r->im[k] = cimag(g);
    r->mag[k] = cabs(g);
    r->mag_db[k] = 20.0 * log10(r->mag[k]);
    double ph = carg(g) * 360.0 / TWO_PI;
    double prev = NAN;
    for (int j = k - 1; j >= 0 && !isfinite(prev); j--) prev = r->phase_deg[j];
    if (isfinite(prev)) ph += 360.0 * nearbyint((prev - ph) / 360.0); /* unwrapped */
    r->phase_deg[k] = ph;
}

/* The two forms of lin (and desc) for the inputs [i0, i0 + ni) and outputs [o0, o0 + no). */
static int forms_make(const mbl_linear *lin, const mbl_linear *desc, int i0, int ni, int o0, int no, form *fs, form *fd)
{
    const mbl_lin_descriptor *dd = desc ? desc->descriptor : NULL;
    int use_desc = dd && dd->nd > 0 && dd->E && dd->Ad && dd->Bd && dd->Cdd && desc->nu == lin->nu &&
                   desc->ny == lin->ny;
    /* G is completed with lin's D: the descriptor form only where its own Dd is the same (not for
     * outputs of multipliers or accelerations, whose Dd differs) */
    if (use_desc && dd->Dd && lin->D && memcmp(dd->Dd, lin->D, (size_t)lin->ny * lin->nu * sizeof *lin->D)) use_desc = 0;
    *fs = (form){.n = lin->nx, .nrhs = ni, .nout = no, .E = NULL, .A = lin->A, .b = lin->B + (size_t)i0 * lin->nx,
                 .ldb = lin->nx, .c = lin->C + o0, .ldc = lin->ny};
    *fd = (form){0};
    if (use_desc)
        *fd = (form){.n = dd->nd, .nrhs = ni, .nout = no, .E = dd->E, .A = dd->Ad, .b = dd->Bd + (size_t)i0 * dd->nd,
                     .ldb = dd->nd, .c = dd->Cdd + o0, .ldc = desc->ny};
    return use_desc;
}

/* G at w by the better-conditioned form: g (fs->nout x fs->nrhs, without D), *form_used, *rcond. */
static int solve_best(form *fs, form *fd, int use_desc, double w, double complex *gs, double complex *gd,
                      const double complex **g, int *form_used, double *rcond, mbl_status *st)
{
    double rs = 0, rd = 0;
    int rc = form_solve(fs, w, &rs, gs, st);
    if (!rc && use_desc) rc = form_solve(fd, w, &rd, gd, st);
    if (rc) return rc;
    int desc_wins = use_desc && rd > rs;
    *form_used = desc_wins ? MBL_FR_DESCRIPTOR : MBL_FR_STATE_SPACE;
    *rcond = desc_wins ? rd : rs;
    *g = desc_wins ? gd : gs;
    if (*rcond == 0) *form_used = MBL_FR_POLE;
    return 0;
}

static int check_lin(const mbl_linear *lin, const double *w, int nw, mbl_status *st)
{
    if (!lin || !w || nw < 1) return mbl_error(st, MBL_EARG, "mbl_freqresp: invalid arguments");
    if (!lin->A || !lin->B || !lin->C || !lin->D)
        return mbl_error(st, MBL_EARG, "mbl_freqresp: the linear model has no state-space form (a partial spectrum)");
    for (int k = 0; k < nw; k++)
        if (!isfinite(w[k]) || w[k] < 0)
            return mbl_error(st, MBL_EARG, "mbl_freqresp: w[%d] = %g (of %d frequencies) is not a finite non-negative number", k, w[k], nw);
    return 0;
}

int mbl_freqresp(const mbl_linear *lin, const mbl_linear *desc, int input, int output, const double *w, int nw,
                 mbl_freqresp_result **out, mbl_status *st)
{
    if (!out) return mbl_error(st, MBL_EARG, "mbl_freqresp: out is NULL");
    *out = NULL;
    int rc = check_lin(lin, w, nw, st);
    if (rc) return rc;
    if (input < 0 || input >= lin->nu || output < 0 || output >= lin->ny)
        return mbl_error(st, MBL_EARG, "mbl_freqresp: input %d or output %d out of range (%d inputs, %d outputs)", input,
                         output, lin->nu, lin->ny);
    form fs, fd;
    int use_desc = forms_make(lin, desc, input, 1, output, 1, &fs, &fd);
    mbl_freqresp_result *r = result_new(lin, input, output, nw);
    if (!r || form_alloc(&fs) || (use_desc && form_alloc(&fd))) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    double d = lin->D[(size_t)input * lin->ny + output];
    for (int k = 0; k < nw && !rc; k++) {
        double complex gs = 0, gd = 0;
        const double complex *g = NULL;
        int fu = 0;
        double rcond = 0;
        rc = solve_best(&fs, &fd, use_desc, w[k], &gs, &gd, &g, &fu, &rcond, st);
        if (!rc) result_set(r, k, w[k], fu, rcond, *g + d);
    }
    form_free(&fs);
    if (use_desc) form_free(&fd);
    if (rc) {
        mbl_freqresp_free(r);
        return rc;
    }
    *out = r;
    return 0;
}

void mbl_freqresp_mimo_free(mbl_freqresp_mimo *r)
{
    if (!r) return;
    for (int k = 0; r->pair && k < r->nu * r->ny; k++) mbl_freqresp_free(r->pair[k]);
    mbl_free(r->pair), mbl_free(r->sv);
    mbl_free(r);
}

/* The singular values of g (ny x nu, column-major; overwritten) by LAPACK's zgesvd, descending. */
static int svd_values(int ny, int nu, double complex *g, double *s, double *work, mbl_status *st)
{
    lapack_int info = LAPACKE_zgesvd(LAPACK_COL_MAJOR, 'N', 'N', ny, nu, (lapack_complex_double *)g, ny, s, NULL, 1,
                                     NULL, 1, work);
    if (info < 0) return mbl_error(st, MBL_ELIB, "zgesvd: argument %d", (int)-info);
    if (info > 0) return mbl_error(st, MBL_ENOCONV, "zgesvd: %d superdiagonals did not converge", (int)info);
    return 0;
}

int mbl_freqresp_mimo_run(const mbl_linear *lin, const mbl_linear *desc, const double *w, int nw,
                          mbl_freqresp_mimo **out, mbl_status *st)
{
    if (!out) return mbl_error(st, MBL_EARG, "mbl_freqresp_mimo_run: out is NULL");
    *out = NULL;
    int rc = check_lin(lin, w, nw, st);
    if (rc) return rc;
    int nu = lin->nu, ny = lin->ny, nsv = nu < ny ? nu : ny;
    if (nu < 1 || ny < 1)
        return mbl_error(st, MBL_EARG, "mbl_freqresp: the model has %d inputs and %d outputs (at least one of each needed)",
                         nu, ny);
    mbl_freqresp_mimo *r = mbl_calloc(1, sizeof *r);
    if (!r) return mbl_error(st, MBL_ENOMEM, "out of memory");
    r->nw = nw, r->nu = nu, r->ny = ny, r->nsv = nsv;
    r->pair = mbl_calloc((size_t)nu * ny, sizeof *r->pair);
    r->sv = mbl_alloc_array((size_t)nw * nsv, sizeof(double));
    size_t ng = (size_t)nu * ny;
    double complex *gs = mbl_alloc_array(ng, sizeof *gs), *gd = mbl_alloc_array(ng, sizeof *gd);
    double complex *gt = mbl_alloc_array(ng, sizeof *gt);
    double *work = mbl_alloc_array((size_t)nsv + 1, sizeof *work);
    form fs, fd;
    int use_desc = forms_make(lin, desc, 0, nu, 0, ny, &fs, &fd);
    int bad = !r->pair || !r->sv || !gs || !gd || !gt || !work || form_alloc(&fs) || (use_desc && form_alloc(&fd));
    for (int i = 0; i < nu && !bad; i++)
        for (int o = 0; o < ny && !bad; o++) bad = !(r->pair[(size_t)i * ny + o] = result_new(lin, i, o, nw));
    if (bad) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int k = 0; k < nw && !rc; k++) {
        const double complex *g = NULL;
        int fu = 0;
        double rcond = 0;
        rc = solve_best(&fs, &fd, use_desc, w[k], gs, gd, &g, &fu, &rcond, st);
        if (rc) break;
        for (size_t j = 0; j < ng; j++) gt[j] = g[j] + lin->D[j];
        for (int i = 0; i < nu; i++)
            for (int o = 0; o < ny; o++)
                result_set(r->pair[(size_t)i * ny + o], k, w[k], fu, rcond, gt[(size_t)i * ny + o]);
        if (fu == MBL_FR_POLE) {
            for (int j = 0; j < nsv; j++) r->sv[(size_t)k * nsv + j] = INFINITY;
        } else {
            rc = svd_values(ny, nu, gt, r->sv + (size_t)k * nsv, work, st);
        }
    }
    form_free(&fs);
    if (use_desc) form_free(&fd);
    mbl_free(gs), mbl_free(gd), mbl_free(gt), mbl_free(work);
    if (rc) {
        mbl_freqresp_mimo_free(r);
        return rc;
    }
    *out = r;
    return 0;
}

static const char *form_name(int form)
{
    return form == MBL_FR_POLE ? "pole" : form == MBL_FR_DESCRIPTOR ? "descriptor" : "state-space";
}

/* the n values x as CSV fields "%.17g," (printf's characters by core_put_g) */
static void csv_fields(FILE *f, const double *x, int n)
{
    for (int i = 0; i < n; i++) {
        core_put_g(f, x[i], 17);
        putc(',', f);
    }
}

int mbl_freqresp_write_csv(FILE *f, const mbl_freqresp_result *r)
{
    if (!f || !r) return MBL_EARG;
    fprintf(f, "w_rad_s,f_hz,re,im,magnitude,magnitude_db,phase_deg,rcond,form\n");
    for (int k = 0; k < r->nw; k++) {
        const double v[7] = {r->w[k], r->w[k] / TWO_PI, r->re[k], r->im[k], r->mag[k], r->mag_db[k], r->phase_deg[k]};
        csv_fields(f, v, 7);
        fprintf(f, "%.3e,%s\n", r->rcond[k], form_name(r->form[k]));
    }
    return ferror(f) ? MBL_EIO : 0;
}

int mbl_freqresp_mimo_write_csv(FILE *f, const mbl_freqresp_mimo *r)
{
    if (!f || !r || !r->pair) return MBL_EARG;
    fprintf(f, "w_rad_s,f_hz,input,output,re,im,magnitude,magnitude_db,phase_deg,rcond,form\n");
    for (int k = 0; k < r->nw; k++)
        for (int j = 0; j < r->nu * r->ny; j++) {
            const mbl_freqresp_result *p = r->pair[j];
            const double w[2] = {p->w[k], p->w[k] / TWO_PI}, v[5] = {p->re[k], p->im[k], p->mag[k], p->mag_db[k],
                                                                      p->phase_deg[k]};
            csv_fields(f, w, 2);
            fprintf(f, "%s,%s,", p->input, p->output);
            csv_fields(f, v, 5);
            fprintf(f, "%.3e,%s\n", p->rcond[k], form_name(p->form[k]));
        }
    return ferror(f) ? MBL_EIO : 0;
}

int mbl_freqresp_mimo_write_sv_csv(FILE *f, const mbl_freqresp_mimo *r)
{
    if (!f || !r || !r->pair) return MBL_EARG;
    fprintf(f, "w_rad_s,f_hz");
    for (int j = 0; j < r->nsv; j++) fprintf(f, ",sigma%d", j + 1);
    fputc('\n', f);
    for (int k = 0; k < r->nw; k++) {
        double w = r->pair[0]->w[k];
        core_put_g(f, w, 17);
        putc(',', f);
        core_put_g(f, w / TWO_PI, 17);
        for (int j = 0; j < r->nsv; j++) {
            putc(',', f);
            core_put_g(f, r->sv[(size_t)k * r->nsv + j], 17);
        }
        fputc('\n', f);
    }
    return ferror(f) ? MBL_EIO : 0;
}

/* [x0, x1, ..] of n values at stride 1 (non-finite values null) */
static void json_array(FILE *f, const double *x, int n)
{
    fputc('[', f);
    for (int k = 0; k < n; k++) {
        if (k) fputs(", ", f);
        mbl_json_number(f, x[k], 17, 0);
    }
    fputc(']', f);
}

int mbl_freqresp_mimo_write_json(FILE *f, const mbl_freqresp_mimo *r, const char *model_name)
{
    if (!f || !r || !r->pair || r->nw < 1) return MBL_EARG;
    const mbl_freqresp_result *p0 = r->pair[0];
    int n = r->nw;
    fprintf(f, "{\"schema_version\": %d, \"model\": ", MBL_JSON_SCHEMA_VERSION);
    mbl_json_string(f, model_name ? model_name : "");
    fputs(",\n\"inputs\": [", f);
    for (int i = 0; i < r->nu; i++) {
        if (i) fputs(", ", f);
        mbl_json_string(f, r->pair[(size_t)i * r->ny]->input);
    }
    fputs("], \"outputs\": [", f);
    for (int o = 0; o < r->ny; o++) {
        if (o) fputs(", ", f);
        mbl_json_string(f, r->pair[o]->output);
    }
    fputs("],\n\"w_rad_s\": ", f);
    json_array(f, p0->w, n);
    fputs(",\n\"form\": [", f);
    for (int k = 0; k < n; k++) fprintf(f, "%s\"%s\"", k ? ", " : "", form_name(p0->form[k]));
    fputs("],\n\"rcond\": [", f);
    for (int k = 0; k < n; k++) fprintf(f, "%s%.3e", k ? ", " : "", p0->rcond[k]);
    fputs("],\n\"response\": [", f);
    for (int j = 0; j < r->nu * r->ny; j++) {
        const mbl_freqresp_result *p = r->pair[j];
        fputs(j ? ",\n {\"input\": " : "\n {\"input\": ", f);
        mbl_json_string(f, p->input);
        fputs(", \"output\": ", f);
        mbl_json_string(f, p->output);
        const char *key[5] = {"re", "im", "magnitude", "magnitude_db", "phase_deg"};
        const double *val[5] = {p->re, p->im, p->mag, p->mag_db, p->phase_deg};
        for (int v = 0; v < 5; v++) {
            fprintf(f, ",\n  \"%s\": ", key[v]);
            json_array(f, val[v], n);
        }
        fputc('}', f);
    }
    fputs("],\n\"singular_values\": [", f);
    for (int k = 0; k < n; k++) {
        if (k) fputs(", ", f);
        json_array(f, r->sv + (size_t)k * r->nsv, r->nsv);
    }
    fputs("]}\n", f);
    return ferror(f) ? MBL_EIO : 0;
}
