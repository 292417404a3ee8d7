/* The HTML report (`mblin report`, `mblin sweep -o`): one self-contained offline page. The page
 * (web/report.html: markup, style, the plots and the 3D view in plain JavaScript) is embedded into
 * the library at build time (cmake/embed.cmake); this file only writes the data the page draws,
 * one JSON object in place of the template's marker. The data comes from the public results:
 * the JSON report of the linear model (mbl_report_json_flags), the mechanism's drawing
 * (mbl_model_geometry, mbl_model_draw) and the sweep's JSON (mbl_sweep_write_json).
 * docs/report.md. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/json.h"
#include "mblin/report.h"
#include "mblin/sweep.h"

extern const unsigned char report_page_template[];
extern const size_t report_page_template_len;

#define DATA_MARK "/*@MBLIN_DATA@*/"

/* Modes whose marker displacements go into the page: the lowest ones, enough to look at (the
 * eigen table lists every eigenvalue; a mode beyond these is shown in the table only). */
#define HTML_MAX_ANIMATED 200
/* and at most this many displacement numbers in all (a 10^4-marker model stays a few MB) */
#define HTML_MAX_DISP_NUMBERS 2000000

/* Copy the JSON text into the page: '<' becomes \u003c (it can only be inside a string), so no
 * name in the data can close the <script> element that holds it. */
static int put_json(FILE *out, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '<') fputs("\\u003c", out);
        else fputc(s[i], out);
    }
    return ferror(out) ? MBL_EIO : 0;
}

typedef int (*data_writer)(FILE *f, const void *ud);

static int write_page(FILE *out, data_writer w, const void *ud, mbl_status *st)
{
    const char *t = (const char *)report_page_template;
    const char *mark = strstr(t, DATA_MARK);
    if (!mark) return mbl_error(st, MBL_EIO, "report template: no data marker (a build problem)");
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m) return mbl_error(st, MBL_ENOMEM, "out of memory");
    int rc = w(m, ud);
    if (fclose(m) != 0 && !rc) rc = MBL_ENOMEM;
    if (rc) {
        free(buf);
        return mbl_error(st, rc, rc == MBL_ENOMEM ? "out of memory" : "writing the report data failed");
    }
    fwrite(t, 1, (size_t)(mark - t), out);
    rc = put_json(out, buf, len);
    free(buf);
    const char *rest = mark + strlen(DATA_MARK);
    fwrite(rest, 1, report_page_template_len - (size_t)(rest - t), out);
    if (rc || ferror(out)) return mbl_error(st, MBL_EIO, "cannot write the report");
    return 0;
}

/* ---- one linear model --------------------------------------------------------------------- */

typedef struct lin_data {
    const mbl_model *model;
    const mbl_point *pt;
    const mbl_linear *lin;
    const mbl_modes *modes;
    mbl_status *st;
} lin_data;

static int write_geometry(FILE *f, const lin_data *d)
{
    mbl_geometry g;
    mbl_model_geometry(d->model, &g);
    fputs("{\"points\": [", f);
    if (!g.npoint) {
        fputs("], \"links\": [], \"modes\": []}", f);
        return 0;
    }
    int nx = d->modes ? d->modes->nx : 0, np3 = 3 * g.npoint;
    double *pos = malloc((size_t)np3 * sizeof *pos);
    double *re = nx ? malloc((size_t)np3 * (size_t)nx * sizeof *re) : NULL;
    double *im = nx ? malloc((size_t)np3 * (size_t)nx * sizeof *im) : NULL;
    if (!pos || (nx && (!re || !im))) {
        free(pos), free(re), free(im);
        return MBL_ENOMEM;
    }
    int rc = mbl_model_draw(d->model, d->pt, nx, d->modes ? d->modes->n : 0, d->modes ? d->modes->shape_re : NULL,
                            d->modes ? d->modes->shape_im : NULL, pos, re, im, d->st);
    if (rc) {
        free(pos), free(re), free(im);
        return rc;
    }
    for (int i = 0; i < g.npoint; i++) {
        fputs(i ? ", {\"name\": " : "{\"name\": ", f);
        mbl_json_string(f, g.point[i]);
        fputs(", \"body\": ", f);
        mbl_json_string(f, g.body[i]);
        fputs(", \"origin\": ", f);
        fputs(!strcmp(g.point[i], g.body[i]) ? "true" : "false", f);
        fputs(", \"p\": [", f);
        for (int k = 0; k < 3; k++) {
            if (k) fputs(", ", f);
            mbl_json_number(f, pos[3 * i + k], 17, 1);
        }
        fputs("]}", f);
    }
    fputs("], \"links\": [", f);
    for (int j = 0; j < g.nlink; j++) {
        fputs(j ? ", {\"name\": " : "{\"name\": ", f);
        mbl_json_string(f, g.link_name[j]);
        fputs(", \"type\": ", f);
        mbl_json_string(f, g.link_type[j]);
        fprintf(f, ", \"i\": %d, \"j\": %d}", g.link[2 * j], g.link[2 * j + 1]);
    }
    /* per eigenvalue index: its displacements (re, im per point), or null beyond the limit */
    fputs("], \"modes\": [", f);
    size_t numbers = 0;
    int animated = 0;
    for (int k = 0; k < nx; k++) {
        if (k) fputs(", ", f);
        int take = animated < HTML_MAX_ANIMATED && numbers + 2u * (size_t)np3 <= HTML_MAX_DISP_NUMBERS;
        if (!take) {
            fputs("null", f);
            continue;
        }
        animated++;
        numbers += 2u * (size_t)np3;
        const double *r = re + (size_t)np3 * k, *s = im + (size_t)np3 * k;
        fputs("{\"re\": [", f);
        for (int i = 0; i < np3; i++) {
            if (i) fputc(',', f);
            mbl_json_number(f, r[i], 7, 1);
        }
        fputs("], \"im\": [", f);
        for (int i = 0; i < np3; i++) {
            if (i) fputc(',', f);
            mbl_json_number(f, s[i], 7, 1);
        }
        fputs("]}", f);
    }
    fputs("]}", f);
    free(pos), free(re), free(im);
    return 0;
}

static int write_lin(FILE *f, const void *ud)
{
    const lin_data *d = ud;
    mbl_model_info info;
    mbl_model_get_info(d->model, &info);
    fputs("{\"kind\": \"linear\", \"mblin\": ", f);
    mbl_json_string(f, mbl_version());
    fputs(", \"model\": {\"name\": ", f);
    mbl_json_string(f, info.name);
    fputs(", \"file\": ", f);
    mbl_json_string(f, info.file);
    fprintf(f,
            ", \"coordinates\": %d, \"holonomic_constraints\": %d, \"nonholonomic_constraints\": %d, \"inputs\": %d, "
            "\"outputs\": %d, \"parameters\": [",
            info.ncoord, info.nhol, info.nnh, info.ninput, info.noutput);
    for (int i = 0; i < info.nparam; i++) {
        fputs(i ? ", {\"name\": " : "{\"name\": ", f);
        mbl_json_string(f, mbl_model_param_name(d->model, i));
        fputs(", \"value\": ", f);
        mbl_json_number(f, mbl_model_param_value(d->model, i), 17, 1);
        fputc('}', f);
    }
    fputs("]}, \"result\": ", f);
    int rc = mbl_report_json_flags(f, d->model, d->pt, d->lin, d->modes, MBL_REPORT_NO_MATRICES);
    if (rc) return rc;
    fputs(", \"geometry\": ", f);
    if ((rc = write_geometry(f, d))) return rc;
    fputs("}", f);
    return ferror(f) ? MBL_EIO : 0;
}

int mbl_report_html(FILE *f, const mbl_model *model, const mbl_point *pt, const mbl_linear *lin,
                    const mbl_modes *modes, mbl_status *st)
{
    if (!f || !model || !pt || !lin || !modes) return mbl_error(st, MBL_EARG, "mbl_report_html: NULL argument");
    lin_data d = {model, pt, lin, modes, st};
    return write_page(f, write_lin, &d, st);
}

/* ---- a sweep ------------------------------------------------------------------------------ */

typedef struct sweep_data {
    const mbl_sweep *sw;
    const double *orders;
    int norders;
    double hz_per_unit, fmax;
    const mbl_critical *crit;
    int ncrit;
} sweep_data;

static int write_sweep(FILE *f, const void *ud)
{
    const sweep_data *d = ud;
    fputs("{\"kind\": \"sweep\", \"mblin\": ", f);
    mbl_json_string(f, mbl_version());
    fputs(", \"orders\": [", f);
    for (int i = 0; i < d->norders; i++) {
        if (i) fputs(", ", f);
        mbl_json_number(f, d->orders[i], 17, 1);
    }
    fputs("], \"hz_per_unit\": ", f);
    mbl_json_number(f, d->hz_per_unit, 17, 1);
    fputs(", \"fmax\": ", f);
    mbl_json_number(f, d->fmax > 0 ? d->fmax : 0, 17, 1);
    fputs(", \"zero_level\": ", f);
    mbl_json_number(f, mbl_sweep_zero_level(d->sw), 17, 1);
    fputs(", \"sweep\": ", f);
    int rc = mbl_sweep_write_json(f, d->sw, d->crit, d->ncrit);
    if (rc) return rc;
    fputs("}", f);
    return ferror(f) ? MBL_EIO : 0;
}

/* ---- a frequency response ------------------------------------------------------------------ */

typedef struct freqresp_data {
    const mbl_freqresp_mimo *fr;
    const char *model_name;
} freqresp_data;

static int write_freqresp(FILE *f, const void *ud)
{
    const freqresp_data *d = ud;
    fputs("{\"kind\": \"freqresp\", \"mblin\": ", f);
    mbl_json_string(f, mbl_version());
    fputs(", \"freqresp\": ", f);
    int rc = mbl_freqresp_mimo_write_json(f, d->fr, d->model_name);
    if (rc) return rc;
    fputs("}", f);
    return ferror(f) ? MBL_EIO : 0;
}

int mbl_freqresp_report_html(FILE *f, const mbl_freqresp_mimo *fr, const char *model_name, mbl_status *st)
{
    if (!f || !fr) return mbl_error(st, MBL_EARG, "mbl_freqresp_report_html: NULL argument");
    freqresp_data d = {fr, model_name};
    return write_page(f, write_freqresp, &d, st);
}

int mbl_sweep_report_html(FILE *f, const mbl_sweep *sw, const double *orders, int norders, double hz_per_unit,
                          double fmax, const mbl_critical *crit, int ncrit, mbl_status *st)
{
    if (!f || !sw || (norders && !orders)) return mbl_error(st, MBL_EARG, "mbl_sweep_report_html: NULL argument");
    sweep_data d = {sw, orders, norders, hz_per_unit, fmax, crit, ncrit};
    return write_page(f, write_sweep, &d, st);
}
