/* mblin simulate --psd NAME[,NAME...]: Welch's PSD of simulated signals (docs/simulation.md,
 * "Random input and PSD"), a thin client of mbl_sim_signal and mbl_psd_welch: the peaks printed
 * (or in simulate's JSON with the whole spectrum), the spectra as CSV (--psd-out) and SVG (--psd-svg). */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mblin/mblin.h"
#include "mblin/sim.h"
#include "sim_psd.h"

/* the names of --psd split at the commas (in place into buf) */
static int split_names(const char *list, char *buf, size_t cap, const char **names)
{
    snprintf(buf, cap, "%s", list);
    int n = 0;
    for (char *p = buf; n < PSD_MAX_SIGNALS;) {
        char *e = strchr(p, ',');
        if (e) *e = '\0';
        names[n++] = p;
        if (!e) break;
        p = e + 1;
    }
    return n;
}

/* the uniform samples of a trajectory: all but a last one off the grid (t_end not a multiple) */
static int uniform_samples(const mbl_sim_result *R)
{
    int nt = R->nt;
    if (nt < 3) return nt;
    double dt = R->t[1] - R->t[0], last = R->t[nt - 1] - R->t[nt - 2];
    return fabs(last - dt) <= 1e-9 * dt ? nt : nt - 1;
}

/* --psd-segment T in samples of dt (0: the default), at least 1, at most INT_MAX */
static int segment_samples(double seconds, double dt)
{
    if (!(seconds > 0)) return 0;
    double n = round(seconds / dt);
    return n < 1 ? 1 : n < INT_MAX ? (int)n : INT_MAX;
}

int cli_psd_check(const cli_psd *c, const mbl_model *md, double t0, double t_end, double dt_out, mbl_status *st)
{
    const char *names[PSD_MAX_SIGNALS];
    char buf[4096];
    int commas = 0;
    for (const char *p = c->names; *p; p++) commas += *p == ',';
    if (strlen(c->names) >= sizeof buf || commas >= PSD_MAX_SIGNALS)
        return mbl_error(st, MBL_EARG, "--psd: more than %d names or 4095 characters", PSD_MAX_SIGNALS);
    int n = split_names(c->names, buf, sizeof buf, names);
    mbl_model_info info;
    mbl_model_get_info(md, &info);
    mbl_sim_result probe = {0};
    probe.n = info.ncoord, probe.nX = info.node_states, probe.nr = info.ninput, probe.ny = info.noutput;
    double dummy = 0;
    for (int i = 0; i < n; i++) {
        int rc = mbl_sim_signal(md, &probe, names[i], &dummy, st);
        if (rc) return mbl_error_prefix(st, "--psd"), rc;
        for (int j = 0; j < i; j++) /* the same spectrum twice, two CSV columns of one name */
            if (!strcmp(names[j], names[i])) return mbl_error(st, MBL_EARG, "--psd: '%s' named twice", names[i]);
    }
    if (!(t_end > t0) || !isfinite(t_end)) return 0; /* the simulation refuses it */
    double dt = dt_out > 0 ? dt_out : (t_end - t0) / 1000;
    double nsd = floor((t_end - t0) / dt * (1 + 1e-12)) + 1; /* the samples on the --dt-out grid */
    mbl_psd_options po = {segment_samples(c->segment, dt), c->npeaks};
    int rc = mbl_psd_check(nsd < INT_MAX ? (int)nsd : INT_MAX, dt, &po, st);
    if (rc) mbl_error_prefix(st, "--psd");
    return rc;
}

static void print_text(const char *name, const mbl_psd *P)
{
    printf("PSD of %s (unit^2/Hz; Welch: Hann window, 50 %% overlap, %d segment(s) of %d samples = %g s, df = %.6g Hz): "
           "rms %.6g\n  peak  f (Hz)          PSD (unit^2/Hz)   power (unit^2)    prominence\n",
           name, P->nseg, P->segment, P->segment / P->fs, P->df, sqrt(P->mean_square));
    for (int k = 0; k < P->npeaks; k++)
        printf("  %-5d %-15.9g %-17.6g %-17.6g %.3g\n", k + 1, P->peaks[k].freq_hz, P->peaks[k].psd, P->peaks[k].power,
               P->peaks[k].prominence);
}

static void print_json(const char *name, const mbl_psd *P, int first)
{
    printf("%s{\"signal\": ", first ? "" : ", ");
    mbl_json_string(stdout, name);
    printf(", \"unit\": \"unit^2/Hz\", \"segment\": %d, \"segments\": %d, \"fs\": %.17g, \"df\": %.17g, \"rms\": %.17g, "
           "\"peaks\": [", P->segment, P->nseg, P->fs, P->df, sqrt(P->mean_square));
    for (int k = 0; k < P->npeaks; k++) {
        printf("%s{\"freq_hz\": %.17g, \"psd\": %.17g, \"power\": %.17g, \"prominence\": ", k ? ", " : "",
               P->peaks[k].freq_hz, P->peaks[k].psd, P->peaks[k].power);
        if (isfinite(P->peaks[k].prominence)) printf("%.6g}", P->peaks[k].prominence);
        else printf("null}"); /* a base of 0 */
    }
    printf("], \"psd\": [");
    for (int j = 0; j < P->nf; j++) printf("%s%.17g", j ? ", " : "", P->p[j]);
    printf("]}");
}

static int write_csv(const char *path, const char *const *names, mbl_psd *const *P, int n, mbl_status *st)
{
    FILE *f = cli_output_file(path); /* removed when interrupted */
    if (!f) return mbl_error(st, MBL_EIO, "cannot write %s (%s)", path, strerror(errno));
    fprintf(f, "f_hz");
    for (int i = 0; i < n; i++) fprintf(f, ",psd(%s) [unit^2/Hz]", names[i]);
    fprintf(f, "\n");
    for (int j = 0; j < P[0]->nf; j++) {
        fprintf(f, "%.17g", P[0]->f[j]);
        for (int i = 0; i < n; i++) fprintf(f, ",%.17g", P[i]->p[j]);
        fprintf(f, "\n");
    }
    return fclose(f) ? mbl_error(st, MBL_EIO, "writing %s failed", path) : 0;
}

/* the spectra in dB (10 log10 of unit^2/Hz), 0 Hz left out */
static int write_svg(const char *path, const char *const *names, mbl_psd *const *P, int n, mbl_status *st)
{
    int nf = P[0]->nf;
    double *db = malloc(((size_t)n * (size_t)nf + 1) * sizeof *db);
    mbl_svg_series *S = calloc((size_t)n + 1, sizeof *S);
    int rc = !db || !S ? mbl_error(st, MBL_ENOMEM, "out of memory") : 0;
    for (int i = 0; !rc && i < n; i++) {
        for (int j = 0; j < nf; j++) db[(size_t)i * nf + j] = P[i]->p[j] > 0 ? 10 * log10(P[i]->p[j]) : NAN;
        S[i] = (mbl_svg_series){nf - 1, P[i]->f + 1, db + (size_t)i * nf + 1, names[i], 0, -1};
    }
    FILE *f = rc ? NULL : cli_output_file(path); /* removed when interrupted */
    if (!rc && !f) rc = mbl_error(st, MBL_EIO, "cannot write %s (%s)", path, strerror(errno));
    if (f) {
        rc = mbl_svg_plot(f, "power spectral density (Welch)", "frequency (Hz)", "PSD (dB re 1 unit^2/Hz)", S, n);
        if (fclose(f) || rc) rc = mbl_error(st, MBL_EIO, "writing %s failed", path);
    }
    free(db), free(S);
    return rc;
}

int cli_psd_run(const cli_psd *c, const mbl_model *md, const mbl_sim_result *R, cli_psd_result *out, mbl_status *st)
{
    memset(out, 0, sizeof *out);
    int n = split_names(c->names, out->buf, sizeof out->buf, out->names), ns = uniform_samples(R), rc = 0;
    double dt = R->nt > 1 ? R->t[1] - R->t[0] : 0;
    double *x = malloc(((size_t)R->nt + 1) * sizeof *x);
    mbl_psd_options po = {segment_samples(c->segment, dt), c->npeaks};
    out->n = n;
    if (!x) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int i = 0; !rc && i < n; i++) {
        rc = mbl_sim_signal(md, R, out->names[i], x, st);
        if (!rc) rc = mbl_psd_welch(x, ns, dt, &po, &out->P[i], st);
        if (rc) mbl_error_prefix(st, "--psd %s", out->names[i]);
    }
    free(x);
    if (!rc && c->csv) rc = write_csv(c->csv, out->names, out->P, n, st);
    if (!rc && c->svg) rc = write_svg(c->svg, out->names, out->P, n, st);
    return rc;
}

void cli_psd_print(const cli_psd_result *r, int json)
{
    if (!r->n) return; /* no --psd */
    if (json) printf(", \"psd\": [");
    for (int i = 0; i < r->n; i++) {
        if (json) print_json(r->names[i], r->P[i], !i);
        else print_text(r->names[i], r->P[i]);
    }
    if (json) printf("]");
}

void cli_psd_result_free(cli_psd_result *r)
{
    for (int i = 0; i < r->n; i++) mbl_psd_free(r->P[i]);
    memset(r, 0, sizeof *r);
}
