/* Reports: text for a person, JSON for programs (the files for other tools, Matrix Market and
 * Octave: export.c). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mblin/json.h"
#include "mblin/report.h"
#include "core/json_plain.h"
#include "core/numfmt.h"
#include "report/obuf.h"
#include "report/titles.h"

static const char *at_name(mbl_at at)
{
    switch (at) {
    case MBL_AT_EQUILIBRIUM: return "equilibrium";
    case MBL_AT_GIVEN: return "given";
    case MBL_AT_STEADY: return "steady";
    case MBL_AT_TRIM: return "trim";
    }
    return "?";
}

/* ---- JSON ------------------------------------------------------------------------------ */

static void json_vec(FILE *f, const double *x, int n)
{
    obuf j;
    report_ob_init(&j, f);
    report_ob_put(&j, "[", 1);
    for (int i = 0; i < n; i++) {
        if (i) report_ob_put(&j, ", ", 2);
        report_ob_json(&j, x[i]);
    }
    report_ob_put(&j, "]", 1);
    report_ob_flush(&j);
}

/* rows x cols column-major as a list of rows */
static void json_mat(FILE *f, const double *A, int rows, int cols)
{
    obuf j;
    report_ob_init(&j, f);
    report_ob_put(&j, "[", 1);
    for (int i = 0; i < rows; i++) {
        if (i) report_ob_put(&j, ", ", 2);
        report_ob_put(&j, "[", 1);
        for (int c = 0; c < cols; c++) {
            if (c) report_ob_put(&j, ", ", 2);
            report_ob_json(&j, A[i + (size_t)c * rows]);
        }
        report_ob_put(&j, "]", 1);
    }
    report_ob_put(&j, "]", 1);
    report_ob_flush(&j);
}

static void json_names(FILE *f, char *const *names, int n)
{
    fputc('[', f);
    for (int i = 0; i < n; i++) {
        if (i) fputs(", ", f);
        mbl_json_string(f, names[i]);
    }
    fputc(']', f);
}

typedef const char *(*model_name_fn)(const mbl_model *, int);

static int coord_count(const mbl_model *md)
{
    mbl_model_info mi;
    mbl_model_get_info(md, &mi);
    return mi.ncoord;
}

/* (through a block: a name that needs no escape, nearly all, as it is; 9 M at N = 10^4 before, as
 * stdio calls, fputc's a character) */
static void json_model_names(FILE *f, const mbl_model *md, model_name_fn name, int n)
{
    obuf j;
    report_ob_init(&j, f);
    report_ob_put(&j, "[", 1);
    for (int i = 0; i < n; i++) {
        if (i) report_ob_put(&j, ", ", 2);
        const char *s = name(md, i);
        size_t len = s ? strlen(s) : 0;
        if (len && core_json_plain_len(s) != len) { /* escapes: the writer's own */
            report_ob_flush(&j);
            mbl_json_string(f, s);
            continue;
        }
        report_ob_put(&j, "\"", 1);
        report_ob_put(&j, s ? s : "", len);
        report_ob_put(&j, "\"", 1);
    }
    report_ob_put(&j, "]", 1);
    report_ob_flush(&j);
}

static const char *model_name(const mbl_model *md)
{
    mbl_model_info mi;
    mbl_model_get_info(md, &mi);
    return mi.name ? mi.name : "";
}

static void json_point_body(FILE *f, const mbl_model *md, const mbl_point *pt)
{
    mbl_model_info mi;
    mbl_model_get_info(md, &mi);
    fputs("{\"at\": ", f);
    mbl_json_string(f, at_name(pt->at));
    fputs(", \"t\": ", f);
    mbl_json_number(f, pt->t, 17, 1);
    fputs(", \"coordinates\": ", f);
    json_model_names(f, md, mbl_model_coord_name, mi.ncoord);
    fputs(", \"q\": ", f);
    json_vec(f, pt->q, pt->n);
    fputs(", \"v\": ", f);
    json_vec(f, pt->v, pt->n);
    fputs(", \"vdot\": ", f);
    json_vec(f, pt->vdot, pt->n);
    fputs(", \"lambda\": ", f);
    json_vec(f, pt->lambda, pt->m);
    fputs(", \"mu\": ", f);
    json_vec(f, pt->mu, pt->k);
    if (pt->nX || pt->nZ) { /* user ODE states and implicit variables (issue 13) */
        fputs(", \"ode_states\": ", f);
        json_model_names(f, md, mbl_model_ode_state_name, mi.node_states);
        fputs(", \"X\": ", f);
        json_vec(f, pt->X, pt->nX);
        fputs(", \"Xdot\": ", f);
        json_vec(f, pt->Xdot, pt->nX);
        fputs(", \"implicit_variables\": ", f);
        json_model_names(f, md, mbl_model_implicit_name, mi.nimplicit);
        fputs(", \"Z\": ", f);
        json_vec(f, pt->Z, pt->nZ);
    }
    fputs(", \"input_names\": ", f);
    json_model_names(f, md, mbl_model_input_name, mi.ninput);
    fputs(", \"inputs\": ", f);
    json_vec(f, pt->r, pt->nr);
    fputs(", \"output_names\": ", f);
    json_model_names(f, md, mbl_model_output_name, mi.noutput);
    fputs(", \"outputs\": ", f);
    double *y = mi.noutput ? mbl_calloc((size_t)mi.noutput, sizeof *y) : NULL;
    mbl_status est;
    mbl_status_clear(&est);
    if (y && !mbl_model_outputs(md, pt, y, &est)) json_vec(f, y, mi.noutput);
    else fputs("[]", f);
    mbl_free(y);
    fprintf(f, ", \"iterations\": %d, \"residual\": ", pt->iterations);
    mbl_json_number(f, pt->residual, 17, 1);
    fputs(", \"scaled_residual\": ", f);
    mbl_json_number(f, pt->scaled_residual, 17, 1);
    fprintf(f, ", \"constraint_rank\": %d, \"min_norm_multipliers\": %s, \"notes\": ", pt->rank_phi_q,
            pt->min_norm_multipliers ? "true" : "false");
    mbl_json_string(f, pt->notes);
    if (pt->at == MBL_AT_TRIM) {
        fputs(", \"trim\": {\"summary\": ", f);
        mbl_json_string(f, pt->trim);
        fputs(", \"target_residual\": ", f);
        mbl_json_number(f, pt->trim_residual, 17, 1);
        fputs(", \"equation_residual\": ", f);
        mbl_json_number(f, pt->trim_eq_residual, 17, 1);
        fputc('}', f);
    }
    fputc('}', f);
}

int mbl_report_point_json(FILE *f, const mbl_model *md, const mbl_point *pt)
{
    fprintf(f, "{\"schema_version\": %d, \"model\": ", MBL_JSON_SCHEMA_VERSION);
    mbl_json_string(f, model_name(md));
    fputs(", \"operating_point\": ", f);
    json_point_body(f, md, pt);
    fputs("}\n", f);
    return ferror(f) ? MBL_EIO : 0;
}

/* The correct significant digits of a mode's eigenvalue from its error estimate (0 for a zero: its
 * value is rounding; 16 without an estimate or with an exact one), clamped to 0..16. */
static int mode_digits(const mbl_mode *m)
{
    if (m->kind == MBL_MODE_ZERO) return 0;
    if (!isfinite(m->error_estimate) || !(m->error_estimate > 0)) return 16;
    int d = (int)floor(log10(hypot(m->re, m->im) / m->error_estimate));
    return d < 0 ? 0 : d > 16 ? 16 : d;
}

/* The damped frequency |Im lambda| / 2 pi in Hz (source 003, Table 5.2), beside the undamped
 * |lambda| / 2 pi of freq_hz: 0 for a real eigenvalue, NAN (JSON null) for an infinite one. */
#define REPORT_TWO_PI 6.283185307179586476925286766559 /* as modal.c divides |lambda| by */
static double damped_freq_hz(const mbl_mode *m)
{
    if (!isfinite(m->re) || !isfinite(m->im)) return NAN;
    return fabs(m->im) / REPORT_TWO_PI;
}

/* The text report tags a mode whose estimate leaves fewer correct digits than this (issue 30,
 * item 3: a low mode beside very stiff ones is listed with its uncertainty, not as a zero): the
 * table prints 8 digits. */
#define REPORT_DOUBT_DIGITS 6

static void json_spectrum(FILE *f, const mbl_linear *lin, const mbl_modes *modes)
{
    const mbl_lin_spectrum *sp = lin->spectrum;
    int partial = sp && sp->partial;
    fprintf(f, ",\n \"spectrum\": {\"partial\": %s, \"count\": %d, \"of\": %d", partial ? "true" : "false",
            modes ? modes->nx : 0, lin->nx);
    if (partial) {
        fprintf(f, ", \"nev\": %d, \"shift\": ", sp->neig);
        mbl_json_number(f, sp->shift, 17, 1);
        fputs(", \"reason\": ", f);
        mbl_json_string(f, sp->reason[0] ? sp->reason : "asked for (nev)");
    }
    if (!lin->A) {
        fputs(", \"not_formed\": ", f);
        mbl_json_string(f, "A, B, C, D, M, C, K, F, q_S, v_W, state names: " NOT_FORMED);
    }
    fputc('}', f);
}

/* The flexible bodies' nodes at the point ("nodes": [x of each node, y of each node]) and each
 * mode's nodal displacements (global dx, dy and rotation of each node), so that a plot or an
 * animation can draw the deformed bodies. */

/* "velocity_transformation" of a relative-coordinate mechanism (nothing otherwise, or when it
 * cannot be evaluated at the point) */
static void json_vtrans(FILE *f, const mbl_model *md, const mbl_point *pt)
{
    mbl_vtrans *v = NULL;
    mbl_status st;
    memset(&st, 0, sizeof st);
    if (mbl_model_velocity_transformation(md, pt, &v, &st)) { /* too large, or not evaluated: why, in its place */
        fputs(",\n \"velocity_transformation\": {\"omitted\": ", f);
        mbl_json_string(f, st.msg);
        fputs("}", f);
        return;
    }
    if (!v) return;
    size_t nB = (size_t)v->nrow * (size_t)v->ncol;
    fputs(",\n \"velocity_transformation\": {\"rows\": ", f);
    json_names(f, v->row_name, v->nrow);
    fputs(", \"columns\": ", f);
    json_names(f, v->col_name, v->ncol);
    fputs(",\n  \"B\": ", f);
    json_mat(f, v->B, v->nrow, v->ncol);
    fputs(",\n  \"Bdot\": ", f);
    json_mat(f, v->Bdot, v->nrow, v->ncol);
    fputs(",\n  \"dB_dq\": [", f);
    for (int m = 0; m < v->ncol; m++) {
        if (m) fputs(",\n   ", f);
        json_mat(f, v->dB + nB * (size_t)m, v->nrow, v->ncol);
    }
    fputs("]}", f);
    mbl_vtrans_free(v);
}

static void json_flex(FILE *f, const mbl_model *md, const mbl_point *pt, const mbl_modes *modes)
{
    int nb = mbl_model_flex_count(md);
    if (!nb) return;
    fputs(",\n \"flexible_bodies\": [", f);
    for (int b = 0; b < nb; b++) {
        int nn = mbl_model_flex_nodes(md, b), dim = mbl_model_flex_dim(md, b) == 3 ? 3 : 2, nd = dim == 3 ? 6 : 3;
        double *pos = mbl_calloc((size_t)dim * nn + 1, sizeof *pos), *d = mbl_calloc((size_t)nd * nn + 1, sizeof *d);
        fputs(b ? ",\n  {\"name\": " : "\n  {\"name\": ", f);
        mbl_json_string(f, mbl_model_flex_name(md, b));
        fputs(", \"nodes\": ", f);
        if (pos && d && !mbl_model_flex_shape(md, b, pt->q, NULL, pos, NULL)) json_mat(f, pos, dim, nn);
        else fputs("[]", f);
        if (dim == 3)
            fputs(",\n   \"mode_shapes\": {\"order\": \"per mode: [dx of each node, dy of each node, dz of each node, "
                  "rotation about x of each node, about y, about z]\"",
                  f);
        else
            fputs(",\n   \"mode_shapes\": {\"order\": \"per mode: [dx of each node, dy of each node, rotation of each node]\"", f);
        for (int part = 0; part < 2; part++) {
            fputs(part ? ", \"im\": [" : ", \"re\": [", f);
            for (int k = 0; pos && d && k < modes->nx; k++) {
                const double *dq = (part ? modes->shape_im : modes->shape_re) + (size_t)k * modes->n;
                mbl_model_flex_shape(md, b, pt->q, dq, NULL, d);
                fputs(k ? ", " : "", f);
                json_mat(f, d, nd, nn);
            }
            fputs("]", f);
        }
        fputs("}}", f);
        mbl_free(pos), mbl_free(d);
    }
    fputs("]", f);
}

int mbl_report_json(FILE *f, const mbl_model *md, const mbl_point *pt, const mbl_linear *lin, const mbl_modes *modes)
{
    return mbl_report_json_flags(f, md, pt, lin, modes, 0);
}

int mbl_report_json_flags(FILE *f, const mbl_model *md, const mbl_point *pt, const mbl_linear *lin,
                          const mbl_modes *modes, unsigned flags)
{
    int mats = !(flags & MBL_REPORT_NO_MATRICES);
    fprintf(f, "{\"schema_version\": %d, \"model\": ", MBL_JSON_SCHEMA_VERSION);
    mbl_json_string(f, model_name(md));
    fputs(", \"method\": ", f);
    mbl_json_string(f, lin->method);
    fputs(", \"states\": ", f);
    json_names(f, lin->state_names, lin->state_names ? lin->z0 : 0);
    fputs(", \"velocity_states\": ", f);
    json_names(f, lin->state_names ? lin->state_names + lin->z0 : NULL, lin->state_names ? lin->z1 : 0);
    fputs(", \"ode_states\": ", f);
    json_names(f, lin->state_names ? lin->state_names + lin->z0 + lin->z1 : NULL, lin->state_names ? lin->zx : 0);
    fputs(", \"inputs\": ", f);
    json_names(f, lin->input_names, lin->nu);
    fputs(", \"outputs\": ", f);
    json_names(f, lin->output_names, lin->ny);
    json_spectrum(f, lin, modes);
    if (mats && lin->A) {
    fputs(",\n \"ss\": {\"A\": ", f);
    json_mat(f, lin->A, lin->nx, lin->nx);
    fputs(", \"B\": ", f);
    json_mat(f, lin->B, lin->nx, lin->nu);
    fputs(", \"C\": ", f);
    json_mat(f, lin->C, lin->ny, lin->nx);
    fputs(", \"D\": ", f);
    json_mat(f, lin->D, lin->ny, lin->nu);
    fputs("},\n \"mck\": {\"M\": ", f);
    json_mat(f, lin->M, lin->z1, lin->z1);
    fputs(", \"C\": ", f);
    json_mat(f, lin->Cd, lin->z1, lin->z1);
    fputs(", \"K\": ", f);
    json_mat(f, lin->K, lin->z1, lin->z0);
    fputs(", \"F\": ", f);
    json_mat(f, lin->F, lin->z1, lin->nu);
    fputs("}", f);
    }
    fputs(",\n \"eigenvalues\": [", f);
    for (int i = 0; modes && i < modes->nx; i++) {
        const mbl_mode *m = &modes->modes[i];
        if (i) fputs(", ", f);
        fputs("{\"re\": ", f);
        mbl_json_number(f, m->re, 17, 1);
        fputs(", \"im\": ", f);
        mbl_json_number(f, m->im, 17, 1);
        fputs(", \"freq_hz\": ", f);
        mbl_json_number(f, m->freq_hz, 17, 1);
        fputs(", \"damped_freq_hz\": ", f);
        mbl_json_number(f, damped_freq_hz(m), 17, 1);
        fputs(", \"damping_ratio\": ", f);
        mbl_json_number(f, m->damping_ratio, 17, 1);
        fputs(", \"backward_error\": ", f);
        mbl_json_number(f, m->backward_error, 17, 1);
        if (isfinite(m->error_estimate)) { /* the method measured what the eigenvalue is worth */
            fputs(", \"error_estimate\": ", f);
            mbl_json_number(f, m->error_estimate, 17, 1);
            fprintf(f, ", \"digits\": %d", mode_digits(m));
        }
        fprintf(f, ", \"spurious\": %s, \"kind\": \"%s\"}", m->spurious ? "true" : "false",
                m->kind == MBL_MODE_ZERO ? "zero" : m->kind == MBL_MODE_REAL ? "real" : "oscillatory");
    }
    fputs("],\n \"eigen_solver\": ", f);
    mbl_json_string(f, modes ? modes->solver : "");
    if (mats) {
        fputs(",\n \"mode_shapes\": {\"coordinates\": ", f);
        json_model_names(f, md, mbl_model_coord_name, coord_count(md));
        fputs(", \"re\": ", f);
        if (modes) json_mat(f, modes->shape_re, modes->n, modes->nx);
        else fputs("[]", f);
        fputs(", \"im\": ", f);
        if (modes) json_mat(f, modes->shape_im, modes->n, modes->nx);
        else fputs("[]", f);
        fputs("}", f);
    }
    if (mats && modes && pt) json_flex(f, md, pt, modes);
    if (mats && pt) json_vtrans(f, md, pt);
    if (mats && lin->q_S) {
        fputs(",\n \"q_S\": ", f);
        json_mat(f, lin->q_S, lin->n, lin->z0);
    }
    fputs(",\n \"selection\": ", f);
    mbl_json_string(f, lin->selection);
    fputs(", \"condition\": ", f);
    mbl_json_number(f, lin->cond, 17, 1);
    fputs(",\n \"notes\": ", f);
    mbl_json_string(f, lin->notes);
    fputs(", \"error_estimate\": ", f);
    mbl_json_number(f, lin->err_est, 17, 1);
    fprintf(f, ", \"partial_spectrum\": %s", lin->spectrum && lin->spectrum->partial ? "true" : "false");
    const mbl_lin_descriptor *ds = lin->descriptor;
    if (mats && ds && ds->nd > 0 && ds->E) {
        fputs(",\n \"descriptor\": {\"E\": ", f);
        json_mat(f, ds->E, ds->nd, ds->nd);
        fputs(", \"A\": ", f);
        json_mat(f, ds->Ad, ds->nd, ds->nd);
        fputs(", \"B\": ", f);
        json_mat(f, ds->Bd, ds->nd, lin->nu);
        fputs(", \"C\": ", f);
        json_mat(f, ds->Cdd, lin->ny, ds->nd);
        fputs(", \"D\": ", f);
        json_mat(f, ds->Dd ? ds->Dd : lin->D, lin->ny, lin->nu);
        fputs("}", f);
    }
    fputs(",\n \"operating_point\": ", f);
    json_point_body(f, md, pt);
    fputs("}\n", f);
    return ferror(f) ? MBL_EIO : 0;
}

/* ---- text ------------------------------------------------------------------------------ */

/* Names are printed whole in the text tables (two states that differ after their 16th character
 * must not look the same): a column is as wide as its longest name, at least the table's own
 * width and at most NAME_WIDTH_MAX (longer names, never seen in practice, are cut there). */
#define NAME_WIDTH_MAX 64

static int names_width(char *const *names, int n, int least)
{
    int w = least;
    for (int i = 0; names && i < n; i++) {
        size_t len = names[i] ? strlen(names[i]) : 0;
        if (len > (size_t)w) w = len > NAME_WIDTH_MAX ? NAME_WIDTH_MAX : (int)len;
    }
    return w;
}

/* printf's "%.*g" of x as a string in b (CORE_NUMFMT_MAX bytes), for a "%s" of the text report */
static const char *gstr(char *b, double x, int prec)
{
    if (x == 0.0) x = 0.0; /* "0", not "-0" (ob_g) */
    if (core_fmt_g(b, x, prec) < 0) snprintf(b, CORE_NUMFMT_MAX, "%.*g", prec, x);
    return b;
}

/* "%*d" */
static void ob_d(obuf *o, int v, int width)
{
    char t[16];
    int len = snprintf(t, sizeof t, "%d", v);
    if (len < 0) len = 0;
    report_ob_pad(o, width, (size_t)len);
    report_ob_put(o, t, (size_t)len);
}

/* "%-*.*s" */
static void ob_name(obuf *o, const char *s, int width)
{
    size_t len = 0;
    while (len < (size_t)width && s[len]) len++;
    report_ob_put(o, s, len);
    report_ob_pad(o, width, len);
}

static int coords_width(const mbl_model *md, int n, int least)
{
    int w = least;
    for (int i = 0; i < n; i++) {
        size_t len = strlen(mbl_model_coord_name(md, i));
        if (len > (size_t)w) w = len > NAME_WIDTH_MAX ? NAME_WIDTH_MAX : (int)len;
    }
    return w;
}

static void text_mat(FILE *f, const char *title, const double *A, int rows, int cols, char *const *rn,
                     char *const *cn)
{
    fprintf(f, "\n%s (%d x %d)\n", title, rows, cols);
    if (!rows || !cols) return;
    int rw = names_width(rn, rows, 16), cw = names_width(cn, cols, 14);
    fprintf(f, "  %-*s", rw, "");
    for (int j = 0; j < cols; j++) fprintf(f, " %*.*s", cw, cw, cn ? cn[j] : "");
    fputc('\n', f);
    for (int i = 0; i < rows; i++) {
        fprintf(f, "  %-*.*s", rw, rw, rn ? rn[i] : "");
        for (int j = 0; j < cols; j++) fprintf(f, " %*.6g", cw, A[i + (size_t)j * rows]);
        fputc('\n', f);
    }
}

int mbl_report_point_text(FILE *f, const mbl_model *md, const mbl_point *pt)
{
    mbl_model_info mi;
    mbl_model_get_info(md, &mi);
    char g1[CORE_NUMFMT_MAX], g2[CORE_NUMFMT_MAX];
    fprintf(f, "Operating point (%s, t = %s): %d Newton iterations, residual %s\n", at_name(pt->at), gstr(g1, pt->t, 6),
            pt->iterations, gstr(g2, pt->residual, 3));
    int cw = coords_width(md, pt->n, 16);
    fprintf(f, "  %-*s %16s %16s %16s\n", cw, "coordinate", "q", "der(q)", "der(der(q))");
    for (int i = 0; i < pt->n; i++) { /* "  %-*.*s %16.9g %16.9g %16.9g\n" */
        obuf l;
        report_ob_init(&l, f);
        report_ob_put(&l, "  ", 2);
        ob_name(&l, mbl_model_coord_name(md, i), cw);
        report_ob_put(&l, " ", 1);
        report_ob_g(&l, pt->q[i], 16, 9);
        report_ob_put(&l, " ", 1);
        report_ob_g(&l, pt->v[i], 16, 9);
        report_ob_put(&l, " ", 1);
        report_ob_g(&l, pt->vdot[i], 16, 9);
        report_ob_put(&l, "\n", 1);
        report_ob_flush(&l);
    }
    for (int j = 0; j < pt->m; j++) {
        const char *src = j < mi.nhol ? mbl_model_constraint_name(md, j) : NULL; /* what the equation comes from */
        fprintf(f, "  lambda[%d] = %s%s%s\n", j + 1, gstr(g1, pt->lambda[j], 9), src ? "   " : "", src ? src : "");
    }
    for (int j = 0; j < pt->k; j++) {
        const char *src = j < mi.nnh ? mbl_model_constraint_name(md, mi.nhol + j) : NULL;
        fprintf(f, "  mu[%d] = %s%s%s\n", j + 1, gstr(g1, pt->mu[j], 9), src ? "   " : "", src ? src : "");
    }
    for (int j = 0; j < pt->nX; j++)
        fprintf(f, "  ode state %s = %s, der(%s) = %s\n", mbl_model_ode_state_name(md, j), gstr(g1, pt->X[j], 9),
                mbl_model_ode_state_name(md, j), gstr(g2, pt->Xdot[j], 9));
    for (int j = 0; j < pt->nZ; j++)
        fprintf(f, "  implicit variable %s = %s\n", mbl_model_implicit_name(md, j), gstr(g1, pt->Z[j], 9));
    for (int j = 0; j < pt->nr; j++)
        fprintf(f, "  input %s = %s%s\n", mbl_model_input_name(md, j), gstr(g1, pt->r[j], 9),
                mbl_model_input_used(md, j) == 0 ? "  (note: appears in no equation or output: its columns of B and D are zero)" : "");
    double *y = mi.noutput ? mbl_calloc((size_t)mi.noutput, sizeof *y) : NULL;
    mbl_status est;
    mbl_status_clear(&est);
    if (y && !mbl_model_outputs(md, pt, y, &est))
        for (int j = 0; j < mi.noutput; j++)
            fprintf(f, "  output %s = %s\n", mbl_model_output_name(md, j), gstr(g1, y[j], 9));
    mbl_free(y);
    if (pt->notes[0]) fprintf(f, "  note: %s\n", pt->notes);
    return ferror(f) ? MBL_EIO : 0;
}

int mbl_report_text(FILE *f, const mbl_model *md, const mbl_point *pt, const mbl_linear *lin,
                    const mbl_modes *modes, unsigned flags)
{
    fprintf(f, "Model: %s (%s)\n", title_name(md), model_file(md));
    mbl_model_info mi;
    mbl_model_get_info(md, &mi);
    fprintf(f, "  %d coordinates, %d holonomic and %d non-holonomic constraints, %d inputs, %d outputs\n\n",
            mi.ncoord, mi.nhol, mi.nnh, mi.ninput, mi.noutput);
    mbl_report_point_text(f, md, pt);
    if (lin->A) {
        char g1[CORE_NUMFMT_MAX];
        fprintf(f, "\nLinearization: method %s, %d states (%d position, %d velocity), condition estimate %s\n",
                lin->method, lin->nx, lin->z0, lin->z1, gstr(g1, lin->cond, 3));
        fprintf(f, "  states:");
        for (int i = 0; lin->state_names && i < lin->nx; i++) fprintf(f, " %s", lin->state_names[i]);
        fprintf(f, "\n  selection: %s\n", lin->selection);
    } else {
        fprintf(f, "\nLinearization: method %s, %d degrees of freedom; state-space and MCK forms (A, B, C, D, "
                   "M, C, K, states): " NOT_FORMED "\n",
                lin->method, lin->z1);
    }
    const mbl_lin_spectrum *sp = lin->spectrum;
    if (sp && sp->partial)
        fprintf(f, "  partial spectrum: the %d eigenvalues nearest the shift %g of %d (%s)\n", sp->neig, sp->shift,
                lin->nx, sp->reason[0] ? sp->reason : "asked for");
    if (lin->notes[0]) fprintf(f, "  notes: %s\n", lin->notes);
    if (lin->err_est > 0) fprintf(f, "  estimated eigenvalue error: %.3g\n", lin->err_est);
    if (modes) {
        fprintf(f, "\nEigenvalues (%d, solver %s)\n", modes->nx, modes->solver);
        fprintf(f, "  %4s  %16s  %16s  %14s  %16s  %16s\n", "mode", "frequency [Hz]", "damped [Hz]", "damping ratio",
                "real", "imaginary");
        for (int i = 0; i < modes->nx; i++) {
            const mbl_mode *m = &modes->modes[i];
            char doubt[64] = "";
            if (!m->spurious && m->kind != MBL_MODE_ZERO && mode_digits(m) < REPORT_DOUBT_DIGITS)
                snprintf(doubt, sizeof doubt, "  (+-%.2g: %d correct digits)", m->error_estimate, mode_digits(m));
            const char *tag = m->spurious                  ? "  (spurious)"
                              : m->kind == MBL_MODE_ZERO ? "  (zero / rigid-body mode)"
                                                         : doubt;
            if (isfinite(m->re) && isfinite(m->im)) { /* "  %4d  %16.8g  %16.8g  %14.6g  %16.8g  %16.8g%s\n" */
                obuf l;
                report_ob_init(&l, f);
                report_ob_put(&l, "  ", 2);
                ob_d(&l, i + 1, 4);
                report_ob_put(&l, "  ", 2);
                report_ob_g(&l, m->freq_hz, 16, 8);
                report_ob_put(&l, "  ", 2);
                report_ob_g(&l, damped_freq_hz(m), 16, 8);
                report_ob_put(&l, "  ", 2);
                report_ob_g(&l, m->damping_ratio, 14, 6);
                report_ob_put(&l, "  ", 2);
                report_ob_g(&l, m->re, 16, 8);
                report_ob_put(&l, "  ", 2);
                report_ob_g(&l, m->im, 16, 8);
                report_ob_put(&l, tag, strlen(tag));
                report_ob_put(&l, "\n", 1);
                report_ob_flush(&l);
            } else /* an infinite eigenvalue of a descriptor pencil: no frequency or damping to show */
                fprintf(f, "  %4d  %16s  %16s  %14s  %16s  %16s%s\n", i + 1, "infinite", "-", "-", "infinite", "-", tag);
        }
        if (flags & MBL_REPORT_SHAPES) {
            fprintf(f, "\nMode shapes (real part, largest component 1)\n");
            int cw = coords_width(md, modes->n, 16);
            fprintf(f, "  %-*s", cw, "coordinate");
            for (int k = 0; k < modes->nx; k++) fprintf(f, " %10d", k + 1);
            fputc('\n', f);
            for (int c = 0; c < modes->n; c++) {
                fprintf(f, "  %-*.*s", cw, cw, mbl_model_coord_name(md, c));
                for (int k = 0; k < modes->nx; k++) fprintf(f, " %10.4g", modes->shape_re[c + (size_t)k * modes->n]);
                fputc('\n', f);
            }
        }
    }
    if ((flags & MBL_REPORT_MATRICES) && !lin->A) fprintf(f, "\nMatrices: " NOT_FORMED "\n");
    if ((flags & MBL_REPORT_MATRICES) && lin->A) {
        text_mat(f, "A", lin->A, lin->nx, lin->nx, lin->state_names, lin->state_names);
        text_mat(f, "B", lin->B, lin->nx, lin->nu, lin->state_names, lin->input_names);
        text_mat(f, "C", lin->C, lin->ny, lin->nx, lin->output_names, lin->state_names);
        text_mat(f, "D", lin->D, lin->ny, lin->nu, lin->output_names, lin->input_names);
        text_mat(f, "M-hat", lin->M, lin->z1, lin->z1, lin->state_names + lin->z0, lin->state_names + lin->z0);
        text_mat(f, "C-hat (damping)", lin->Cd, lin->z1, lin->z1, lin->state_names + lin->z0,
                 lin->state_names + lin->z0);
        text_mat(f, "K-hat", lin->K, lin->z1, lin->z0, lin->state_names + lin->z0, lin->state_names);
        if (lin->nu)
            text_mat(f, "F-hat (input)", lin->F, lin->z1, lin->nu, lin->state_names + lin->z0, lin->input_names);
    }
    return ferror(f) ? MBL_EIO : 0;
}

/* the distinct names of the flagged constraints, in the order of first appearance, at most
 * CHECK_LIST_MAX of them: with residuals the largest of each name, else the count of equations */
#define CHECK_LIST_MAX 12
static void check_names(FILE *f, const mbl_model *md, const mbl_constraint_diag *d)
{
    int shown = 0, total = 0;
    for (int j = 0; j < d->m; j++) {
        if (!d->flag[j]) continue;
        const char *nj = mbl_model_constraint_name(md, j);
        int dup = 0;
        for (int i = 0; i < j && !dup; i++) dup = d->flag[i] && !strcmp(mbl_model_constraint_name(md, i), nj);
        if (dup) continue;
        total++;
        if (shown >= CHECK_LIST_MAX) continue;
        int cnt = 0;
        double worst = 0;
        for (int i = j; i < d->m; i++)
            if (d->flag[i] && !strcmp(mbl_model_constraint_name(md, i), nj)) {
                cnt++;
                if (d->residual && fabs(d->residual[i]) > worst) worst = fabs(d->residual[i]);
            }
        fprintf(f, "%s%s", shown ? ", " : "", nj);
        if (d->residual) fprintf(f, " [residual %.3g]", worst);
        else if (cnt > 1) fprintf(f, " [%d equations]", cnt);
        shown++;
    }
    if (total > shown) fprintf(f, ", and %d more", total - shown);
    fputc('\n', f);
}

int mbl_report_check(FILE *f, const mbl_model *md, const mbl_point *pt)
{
    mbl_model_info mi;
    mbl_model_get_info(md, &mi);
    int n = mi.ncoord, m = mi.nhol, k = mi.nnh;
    fprintf(f, "Model: %s (%s)\n", title_name(md), model_file(md));
    fprintf(f, "  coordinates: %d\n  holonomic constraints: %d\n  non-holonomic constraints: %d\n", n, m, k);
    fprintf(f, "  parameters: %d, inputs: %d, outputs: %d, user states: %d, user velocity states: %d\n", mi.nparam,
            mi.ninput, mi.noutput, mi.nuser_states, mi.nuser_velocity_states);
    if (mi.node_states || mi.nimplicit || mi.nspeeds)
        fprintf(f, "  ode states: %d, implicit variables: %d, generalized speeds: %d\n", mi.node_states, mi.nimplicit,
                mi.nspeeds);
    for (int j = 0; j < mi.ninput; j++)
        if (mbl_model_input_used(md, j) == 0)
            fprintf(f, "  note: input '%s' appears in no equation or output (its columns of B and D are zero)\n",
                    mbl_model_input_name(md, j));
    fprintf(f, "  degrees of freedom by counting: %d (positions), %d (velocities)\n", n - m, n - m - k);
    if (pt) {
        int red = m + k - pt->rank_phi_q;
        fprintf(f, "  at the operating point (%s): constraint rank %d, degrees of freedom %d\n", at_name(pt->at),
                pt->rank_phi_q, n - m - k + red);
        if (red > 0)
            fprintf(f, "  problem: %d redundant constraint%s (or a singular configuration) at this point\n", red,
                    red > 1 ? "s" : "");
        if (pt->notes[0]) fprintf(f, "  note: %s\n", pt->notes);
    }
    /* the redundant / violated constraints by name */
    mbl_constraint_diag *d = NULL;
    mbl_status st;
    mbl_status_clear(&st);
    int rc = mbl_constraint_diagnose(md, pt, &d, &st);
    if (rc) return rc;
    if (d->kind == MBL_DIAG_UNEVALUATED && !pt)
        fprintf(f, "  problem: the model cannot be evaluated at the initial configuration: %s\n", d->msg);
    else if (d->kind == MBL_DIAG_VIOLATED) {
        fprintf(f, "  problem: the parts did not assemble; constraints violated at the initial configuration: ");
        check_names(f, md, d);
    } else if (d->kind == MBL_DIAG_REDUNDANT) {
        fprintf(f, "  redundant constraints%s: %d of %d equations are dependent (Gruebler count %d, mobility %d); "
                   "among: ",
                pt ? "" : " at the initial configuration", m - d->rank, m, n - m, n - d->rank);
        check_names(f, md, d);
    }
    mbl_constraint_diag_free(d);
    return ferror(f) ? MBL_EIO : 0;
}
