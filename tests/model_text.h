/* Model texts for tests that edit an example before loading it (after test.h): read a file,
 * replace parts of its text, and run the edited model to its linear model and eigenvalues.
 *
 *   char *t = text_replace_all(text_slurp("examples/mech/x.yaml"), "a", "b");   NULL if "a" is absent
 *   static text_result r; rc = text_run("x.yaml", t, NULL, &r, msg);
 *   double dA = text_compare(&r, &r2, &dev, NULL);   A's and the eigenvalues' differences
 */
#ifndef MBLIN_TEST_MODEL_TEXT_H
#define MBLIN_TEST_MODEL_TEXT_H

#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/mblin.h"

/* the file's text (malloc'd), NULL when it cannot be read */
static inline char *text_slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s) s[n] = '\0';
    fclose(f);
    return s;
}

/* s with the first occurrence of a replaced by b (a new string), NULL when a is not in s */
static inline char *text_replace(const char *s, const char *a, const char *b)
{
    const char *p = s ? strstr(s, a) : NULL;
    if (!p) return NULL;
    size_t la = strlen(a), lb = strlen(b), ls = strlen(s);
    char *o = malloc(ls - la + lb + 1);
    if (!o) return NULL;
    memcpy(o, s, (size_t)(p - s));
    memcpy(o + (p - s), b, lb);
    memcpy(o + (p - s) + lb, p + la, ls - (size_t)(p - s) - la + 1);
    return o;
}

/* s with every occurrence of a replaced by b (a new string; s is freed), NULL when s is NULL or a
 * is not in it: a chain of edits ends in NULL when one of them does not apply */
static inline char *text_replace_all(char *s, const char *a, const char *b)
{
    if (!s || !strstr(s, a)) {
        free(s);
        return NULL;
    }
    size_t la = strlen(a), lb = strlen(b), n = 0;
    for (const char *p = strstr(s, a); p; p = strstr(p + la, a)) n++;
    char *o = malloc(strlen(s) + n * lb + 1), *w = o;
    if (!o) {
        free(s);
        return NULL;
    }
    const char *r = s;
    for (const char *p = strstr(r, a); p; r = p + la, p = strstr(r, a)) {
        memcpy(w, r, (size_t)(p - r));
        w += p - r;
        memcpy(w, b, lb);
        w += lb;
    }
    strcpy(w, r);
    free(s);
    return o;
}

enum { TEXT_RUN_NMAX = 64, TEXT_RUN_NA = 64 * 64, TEXT_RUN_NY = 16 };

/* what text_run gives: the state count, A (column-major as mbl_linear), the outputs at the point,
 * the stated error of the eigenvalues (mbl_linear.err_est) and the non-spurious eigenvalues */
typedef struct text_result {
    int nx, ny, nev;
    double A[TEXT_RUN_NA], y[TEXT_RUN_NY], err_est;
    double complex ev[TEXT_RUN_NMAX];
} text_result;

/* The model text (named name in messages; opt NULL: the default load options) at its operating
 * point: outputs, linear model (the default method) and eigenvalues into r. 0, or the status with
 * the message in msg (512 bytes) when given, else printed. */
static inline int text_run(const char *name, const char *text, const mbl_load_options *opt, text_result *r, char *msg)
{
    mbl_status st;
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_linear *lin = NULL;
    mbl_modes *modes = NULL;
    memset(r, 0, sizeof *r);
    int rc = text ? mbl_model_load_string_opt(text, strlen(text), name, NULL, 0, opt, &md, &st)
                  : mbl_error(&st, MBL_EARG, "%s: no text (an edit did not apply)", name);
    if (!rc) rc = mbl_operating_point(md, NULL, &pt, &st);
    if (!rc) rc = mbl_linearize(md, pt, NULL, &lin, &st);
    if (!rc && (lin->nx * lin->nx > TEXT_RUN_NA || lin->ny > TEXT_RUN_NY))
        rc = mbl_error(&st, MBL_EARG, "%s: too large for text_run", name);
    if (!rc) rc = mbl_model_outputs(md, pt, r->y, &st);
    if (!rc) rc = mbl_modal(lin, NULL, &modes, &st);
    if (rc) {
        if (msg) snprintf(msg, 512, "%.500s", st.msg);
        else fprintf(stderr, "%s: %s\n", name, st.msg);
    } else {
        r->nx = lin->nx;
        r->ny = lin->ny;
        r->err_est = lin->err_est;
        memcpy(r->A, lin->A, sizeof(double) * (size_t)(lin->nx * lin->nx));
        for (int i = 0; i < modes->nx && r->nev < TEXT_RUN_NMAX; i++)
            if (!modes->modes[i].spurious) r->ev[r->nev++] = modes->modes[i].re + I * modes->modes[i].im;
    }
    mbl_modes_free(modes);
    mbl_linear_free(lin);
    mbl_point_free(pt);
    mbl_model_free(md);
    return rc;
}

/* a and b's A: the largest difference relative to a's largest entry (INFINITY when their sizes
 * differ); their eigenvalues': each of a's to the nearest of b's, relative to max(1, |lambda|), in
 * *ev_diff, or absolute in *ev_abs (either may be NULL) */
static inline double text_compare(const text_result *a, const text_result *b, double *ev_diff, double *ev_abs)
{
    double big = 0, d = 0, er = 0, ea = 0;
    for (int i = 0; i < a->nev; i++) {
        double bd = INFINITY;
        for (int j = 0; j < b->nev; j++) bd = fmin(bd, cabs(b->ev[j] - a->ev[i]));
        ea = fmax(ea, bd);
        er = fmax(er, bd / fmax(1.0, cabs(a->ev[i])));
    }
    if (a->nev != b->nev) er = ea = INFINITY;
    if (ev_diff) *ev_diff = er;
    if (ev_abs) *ev_abs = ea;
    if (a->nx != b->nx) return INFINITY;
    for (int i = 0; i < a->nx * a->nx; i++) big = fmax(big, fabs(a->A[i]));
    for (int i = 0; i < a->nx * a->nx; i++) d = fmax(d, fabs(a->A[i] - b->A[i]));
    return d / big;
}

/* the largest relative difference of b's outputs from a's (INFINITY when their counts differ) */
static inline double text_outputs_diff(const text_result *a, const text_result *b)
{
    double d = a->ny == b->ny ? 0 : INFINITY;
    for (int k = 0; k < a->ny && a->ny == b->ny; k++) d = fmax(d, fabs(b->y[k] - a->y[k]) / fmax(fabs(a->y[k]), 1e-300));
    return d;
}

#endif
