/* mbl_compare(), a study of one point: every method on the same model and point, timed,
 * eigenvalues matched against the reference (augmented, or the first exact method that ran when augmented refused). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mblin/model.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void mbl_comparison_free(mbl_comparison *c)
{
    if (!c) return;
    mbl_free(c->rows);
    mbl_free(c);
}

static int exact_method(const char *name)
{
    return strcmp(name, "penalty") && strcmp(name, "fd");
}

/* largest relative deviation of the physical eigenvalues of a from those of ref: each physical
 * eigenvalue of a is matched to the nearest physical one of ref (a may list fewer, e.g. the nev of
 * ARPACK); eigenvalues that are zero in both count as equal, and a deviation from a zero of ref is
 * relative to ref's largest physical eigenvalue. -1 when a has more physical
 * eigenvalues than ref (not comparable). */
static double deviation(const mbl_modes *a, const mbl_modes *ref)
{
    int na = 0, nref = 0;
    for (int i = 0; i < a->nx; i++) na += !a->modes[i].spurious;
    for (int i = 0; i < ref->nx; i++) nref += !ref->modes[i].spurious;
    if (na > nref) return -1.0;
    double dev = 0, zt = fmax(a->zero_tol, ref->zero_tol), big = 0;
    for (int j = 0; j < ref->nx; j++)
        if (!ref->modes[j].spurious && isfinite(ref->modes[j].re) && isfinite(ref->modes[j].im))
            big = fmax(big, hypot(ref->modes[j].re, ref->modes[j].im));
    for (int i = 0; i < a->nx; i++) {
        const mbl_mode *x = &a->modes[i];
        if (x->spurious) continue;
        double best = INFINITY;
        const mbl_mode *bm = NULL;
        for (int j = 0; j < ref->nx; j++) {
            const mbl_mode *y = &ref->modes[j];
            if (y->spurious) continue;
            double d = hypot(x->re - y->re, x->im - y->im);
            if (d < best) best = d, bm = y;
        }
        if (!bm) return -1.0;
        if (bm->kind == MBL_MODE_ZERO && (x->kind == MBL_MODE_ZERO || hypot(x->re, x->im) <= zt)) continue;
        /* a zero of ref has no scale of its own: a deviation from it is relative to the spectrum's */
        dev = fmax(dev, best / fmax(bm->kind == MBL_MODE_ZERO ? big : hypot(bm->re, bm->im), zt));
    }
    return dev;
}

int mbl_compare(const mbl_model *md, const mbl_point *pt, const mbl_lin_options *opt_in, int repeat,
                mbl_comparison **out, mbl_status *st)
{
    if (!out) return mbl_error(st, MBL_EARG, "mbl_compare: out is NULL");
    *out = NULL;
    if (!md || !pt) return mbl_error(st, MBL_EARG, "mbl_compare: model or point is NULL");
    if (repeat <= 0) repeat = 3;
    mbl_lin_options opt;
    if (opt_in) opt = *opt_in;
    else mbl_lin_options_default(&opt);
    int nm = mbl_lin_method_count(), rc = 0;
    mbl_comparison *C = mbl_calloc(1, sizeof *C);
    mbl_modes **modes = mbl_calloc((size_t)nm + 1, sizeof *modes);
    double *times = mbl_calloc((size_t)repeat + 1, sizeof *times);
    char **sig = mbl_calloc((size_t)nm + 1, sizeof *sig); /* the state names of each method, joined */
    if (!C || !modes || !times || !sig || !(C->rows = mbl_calloc((size_t)nm + 1, sizeof *C->rows))) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    C->nrows = nm;
    int ref = -1;
    for (int i = 0; i < nm; i++) {
        mbl_compare_row *row = &C->rows[i];
        snprintf(row->method, sizeof row->method, "%s", mbl_lin_method_name(i));
        row->max_rel_dev = -1.0;
        opt.method = row->method;
        for (int k = 0; k < repeat; k++) {
            mbl_status s2;
            mbl_status_clear(&s2);
            mbl_linear *lin = NULL;
            mbl_modes *mo = NULL;
            double t0 = now_s();
            int r = mbl_linearize(md, pt, &opt, &lin, &s2);
            if (!r) r = mbl_modal(lin, NULL, &mo, &s2);
            times[k] = now_s() - t0;
            if (r) {
                if (r == MBL_ENOMEM) {
                    mbl_linear_free(lin);
                    rc = mbl_error(st, MBL_ENOMEM, "out of memory");
                    goto done;
                }
                row->ok = 0;
                /* the message without the file prefix */
                const char *msg = s2.msg;
                mbl_model_info info;
                mbl_model_get_info(md, &info);
                const char *f = info.file ? strstr(msg, info.file) : NULL;
                if (f == msg && info.file) msg += strlen(info.file), msg += (*msg == ':') + (msg[1] == ' ');
                snprintf(row->note, sizeof row->note, "refused: %.480s", msg);
                mbl_linear_free(lin);
                break;
            }
            row->ok = 1;
            if (k == 0) {
                row->err_est = lin->err_est;
                snprintf(row->note, sizeof row->note, "%.500s", lin->notes);
                int np = 0;
                for (int j = 0; j < mo->nx; j++) np += !mo->modes[j].spurious;
                row->nphys = np;
                modes[i] = mo;
                int nnames = lin->state_names ? lin->nx : 0; /* NULL: not formed (partial spectrum) */
                size_t cap = sizeof row->states, used = 0;
                for (int j = 0; j < nnames && used + 4 < cap; j++) {
                    const char *sep = j == 0 ? "" : j == lin->z0 ? "; " : ", ";
                    int w = snprintf(row->states + used, cap - used, "%s%s", sep, lin->state_names[j]);
                    if (w < 0 || (size_t)w >= cap - used) {
                        snprintf(row->states + cap - 4, 4, "...");
                        used = cap;
                    } else {
                        used += (size_t)w;
                    }
                }
                size_t len = 1;
                for (int j = 0; j < nnames; j++) len += strlen(lin->state_names[j]) + 1;
                sig[i] = mbl_malloc(len);
                if (sig[i]) {
                    sig[i][0] = '\0';
                    for (int j = 0; j < nnames; j++) strcat(strcat(sig[i], lin->state_names[j]), ";");
                }
            } else {
                mbl_modes_free(mo);
            }
            mbl_linear_free(lin);
        }
        if (row->ok) {
            qsort(times, (size_t)repeat, sizeof *times, cmp_double);
            row->seconds = times[repeat / 2];
            if (ref < 0 && exact_method(row->method)) ref = i;
        }
    }
    if (ref >= 0) {
        snprintf(C->reference, sizeof C->reference, "%s", C->rows[ref].method);
        int aug = -1;
        for (int i = 0; i < nm; i++)
            if (C->rows[i].ok && !strcmp(C->rows[i].method, "augmented")) aug = i;
        int moving = 0;
        for (int j = 0; j < pt->n; j++) moving |= pt->v[j] != 0.0 || pt->vdot[j] != 0.0;
        for (int i = 0; i < nm; i++) {
            if (!C->rows[i].ok) continue;
            C->rows[i].max_rel_dev = deviation(modes[i], modes[ref]);
            /* the user's states are those of augmented (user states completed by full pivoting) */
            C->rows[i].user_states = aug >= 0 && sig[i] && sig[aug] && sig[i][0] && !strcmp(sig[i], sig[aug]);
            if (moving && sig[i] && sig[ref] && strcmp(sig[i], sig[ref]) &&
                !strstr(C->rows[i].note, "point with motion")) {
                size_t l = strlen(C->rows[i].note);
                snprintf(C->rows[i].note + l, sizeof C->rows[i].note - l, "%s",
                         "; states differ from the reference at a point with motion: the spectrum of a linearization "
                         "away from equilibrium depends on the states");
            }
        }
    }
    *out = C;
    C = NULL;
done:
    for (int i = 0; modes && i < nm; i++) mbl_modes_free(modes[i]);
    for (int i = 0; sig && i < nm; i++) mbl_free(sig[i]);
    mbl_free(modes), mbl_free(times), mbl_free(sig);
    mbl_comparison_free(C);
    return rc;
}
