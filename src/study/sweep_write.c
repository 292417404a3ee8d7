/* A sweep's results as CSV and JSON (declared in include/mblin/sweep.h), and the level below which
 * a frequency counts as zero in them and in the plots. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/numfmt.h"
#include "mblin/json.h"
#include "mblin/sweep.h"

/* ---- CSV and JSON ---------------------------------------------------------------------------- */

/* printf's "%.17g" of x and the separator c, a zero as "0" (never printf's "-0"), by core_put_g
 * (glibc's printf took 32 k instructions a row of the N = 20 four-bar's sweep) */
static void csv_g(FILE *f, double x, int c)
{
    core_put_g(f, x + 0.0, 17);
    putc(c, f);
}

int mbl_sweep_write_csv(FILE *f, const mbl_sweep *sw)
{
    if (!f || !sw) return MBL_EARG;
    for (int a = 0; a < sw->naxes; a++) fprintf(f, "%s,", sw->axis_name[a]);
    fprintf(f, "branch,re,im,freq_hz,damping_ratio,mac\n");
    for (int p = 0; p < sw->npoints; p++)
        for (int b = 0; b < sw->nmodes; b++) {
            for (int a = 0; a < sw->naxes; a++) csv_g(f, sw->value[(size_t)p * sw->naxes + a], ',');
            size_t o = (size_t)p * sw->nmodes + b;
            fprintf(f, "%d,", b + 1);
            csv_g(f, sw->re[o], ',');
            csv_g(f, sw->im[o], ',');
            csv_g(f, sw->freq_hz[o], ',');
            csv_g(f, sw->damping[o], ',');
            csv_g(f, sw->mac[o], '\n');
        }
    return ferror(f) ? MBL_EIO : 0;
}

int mbl_sweep_write_json(FILE *f, const mbl_sweep *sw, const mbl_critical *crit, int ncrit)
{
    if (!f || !sw) return MBL_EARG;
    fprintf(f, "{\"schema_version\": %d, \"model\": ", MBL_JSON_SCHEMA_VERSION);
    mbl_json_string(f, sw->model_name);
    fputs(", \"axes\": [", f);
    for (int a = 0; a < sw->naxes; a++) {
        int c = sw->count[a];
        fputs(a ? ", {\"name\": " : "{\"name\": ", f);
        mbl_json_string(f, sw->axis_name[a]);
        size_t plast = a == 0 ? (size_t)(c - 1) : (size_t)(c - 1) * (size_t)sw->count[0];
        double first = sw->value[a], last = sw->value[plast * (size_t)sw->naxes + (size_t)a];
        fputs(", \"from\": ", f);
        mbl_json_number(f, first, 17, 0);
        fputs(", \"to\": ", f);
        mbl_json_number(f, last, 17, 0);
        fprintf(f, ", \"count\": %d}", c);
    }
    fprintf(f, "], \"points\": %d, \"modes\": %d, \"fast\": %s, \"threads\": %d, \"seconds\": %.6f,",
            sw->npoints, sw->nmodes, sw->fast ? "true" : "false", sw->threads, sw->seconds);
    fprintf(f, " \"predictor\": \"%s\", \"predicted_points\": %d, \"predictor_note\": ",
            sw->predictor == MBL_PREDICT_SENSITIVITY ? "sensitivity" : "linear", sw->npredicted);
    mbl_json_string(f, sw->predictor_note);
    fputs(",\n\"values\": [", f);
    for (int p = 0; p < sw->npoints; p++) {
        fputs(p ? ", [" : "[", f);
        for (int a = 0; a < sw->naxes; a++) {
            if (a) fputs(", ", f);
            mbl_json_number(f, sw->value[(size_t)p * sw->naxes + a], 17, 0);
        }
        fputc(']', f);
    }
    fputs("],\n\"branches\": [", f);
    const char *keys[] = {"re", "im", "freq_hz", "damping_ratio", "mac"};
    const double *arr[] = {sw->re, sw->im, sw->freq_hz, sw->damping, sw->mac};
    for (int b = 0; b < sw->nmodes; b++) {
        fputs(b ? ",\n {" : "\n {", f);
        for (int k = 0; k < 5; k++) {
            fprintf(f, "%s\"%s\": [", k ? ", " : "", keys[k]);
            for (int p = 0; p < sw->npoints; p++) {
                if (p) fputs(", ", f);
                mbl_json_number(f, arr[k][(size_t)p * sw->nmodes + b], 17, 0);
            }
            fputc(']', f);
        }
        fputc('}', f);
    }
    fputs("],\n\"failed\": [", f);
    int first = 1;
    for (int p = 0; p < sw->npoints; p++)
        if (!sw->ok[p]) {
            fprintf(f, "%s{\"point\": %d, \"error\": ", first ? "" : ", ", p);
            mbl_json_string(f, sw->error[p] ? sw->error[p] : "");
            fputc('}', f);
            first = 0;
        }
    fputc(']', f);
    if (crit) {
        fputs(",\n\"critical_speeds\": [", f);
        for (int i = 0; i < ncrit; i++) {
            fprintf(f, "%s{\"branch\": %d, \"order\": ", i ? ", " : "", crit[i].branch + 1);
            mbl_json_number(f, crit[i].order, 17, 0);
            fputs(", \"speed\": ", f);
            mbl_json_number(f, crit[i].speed, 17, 0);
            fputs(", \"freq_hz\": ", f);
            mbl_json_number(f, crit[i].freq_hz, 17, 0);
            fprintf(f, ", \"trend\": \"%s\", \"refined\": %s}",
                    crit[i].whirl > 0 ? "rising" : crit[i].whirl < 0 ? "falling" : "flat", crit[i].refined ? "true" : "false");
        }
        fputc(']', f);
    }
    fputs("}\n", f);
    return ferror(f) ? MBL_EIO : 0;
}

double mbl_sweep_zero_level(const mbl_sweep *sw)
{
    double big = 0;
    size_t tot = sw ? (size_t)sw->npoints * (size_t)sw->nmodes : 0;
    for (size_t i = 0; i < tot; i++) {
        double a = hypot(sw->re[i], sw->im[i]);
        if (isfinite(a) && a > big) big = a;
    }
    return 1e-6 * big;
}
