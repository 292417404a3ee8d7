/* A sweep shared by several processes (mbl_sweep_dist, docs/parallel.md): each rank's raw results
 * packed into doubles, gathered to rank 0 and unpacked there as if it had computed them. */
#include <stdlib.h>
#include <string.h>

#include "study/sweep_internal.h"

/* ---- a sweep over several processes (mbl_sweep_dist) ---------------------------------------- */

/* A growing array of doubles: the packed raw results of a rank. */
typedef struct pack {
    double *d;
    size_t n, cap;
    int oom;
} pack;

static double *pk_room(pack *b, size_t n)
{
    if (b->oom) return NULL;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->n + n) cap *= 2;
        double *t = mbl_realloc_array(b->d, cap, sizeof *t);
        if (!t) return b->oom = 1, NULL;
        b->d = t, b->cap = cap;
    }
    double *at = b->d + b->n;
    b->n += n;
    return at;
}

static void pk(pack *b, const double *x, size_t n)
{
    double *at = pk_room(b, n);
    if (at && n) memcpy(at, x, n * sizeof *x);
}

static void pk1(pack *b, double x) { pk(b, &x, 1); }

/* a string: its length, then its bytes in whole doubles */
static void pk_str(pack *b, const char *s)
{
    size_t l = strlen(s), nd = (l + sizeof(double) - 1) / sizeof(double);
    pk1(b, (double)l);
    double *at = pk_room(b, nd);
    if (!at) return;
    memset(at, 0, nd * sizeof *at);
    memcpy(at, s, l);
}

/* Reading a rank's part back; every read checks the length (a short part: *bad = 1). */
typedef struct unpack {
    const double *d;
    size_t n, at;
    int bad;
} unpack;

static const double *up_take(unpack *u, size_t n)
{
    if (u->bad || n > u->n - u->at) return u->bad = 1, NULL;
    const double *x = u->d + u->at;
    u->at += n;
    return x;
}

static double up1(unpack *u)
{
    const double *x = up_take(u, 1);
    return x ? *x : 0;
}

/* k arrays of len[i] doubles from u into one block, as store_point lays out a point's results
 * (each with a spare entry; a[0] owns the block, pts_free frees it); nothing set when u is bad */
static void up_block(unpack *u, int k, const size_t *len, double **a)
{
    size_t tot = 0, at = u->at;
    for (int i = 0; i < k; i++) tot += len[i] + 1;
    for (int i = 0; i < k; i++) up_take(u, len[i]);
    double *b = u->bad ? NULL : mbl_alloc_array(tot, sizeof *b);
    if (!b) {
        u->bad = 1;
        return;
    }
    for (int i = 0; i < k; i++) {
        a[i] = b;
        memcpy(b, u->d + at, len[i] * sizeof *b);
        at += len[i];
        b += len[i] + 1;
    }
}

static char *up_str(unpack *u)
{
    double l = up1(u);
    if (u->bad || !(l >= 0) || l > 1e6) return u->bad = 1, NULL;
    size_t len = (size_t)l;
    const double *x = up_take(u, (len + sizeof(double) - 1) / sizeof(double));
    char *s = x ? mbl_malloc(len + 1) : NULL;
    if (!s) return u->bad = 1, NULL;
    memcpy(s, x, len);
    s[len] = '\0';
    return s;
}

enum { HDR_RC, HDR_LOAD, HDR_POINT, HDR_LIN, HDR_SENS, HDR_WARM, HDR_NPTS, HDR_N }; /* then the message */
enum { PT_SHAPES = 1, PT_DERIV = 2, PT_DSHAPES = 4 }; /* shape derivatives: only with the shapes (tracking uses them then) */

/* How many points rank q computes (its blocks k = q, q + size, ...). */
static int rank_points(const run *r, int npoints, int q, int size)
{
    int cnt = 0;
    for (int k = q; k < r->nchunks; k += size) cnt += (k + 1) * r->chunk > npoints ? npoints - k * r->chunk : r->chunk;
    return cnt;
}

/* Every rank's raw results to rank 0 (one collective call on every rank, whatever rc is): rank 0
 * then holds every point in r->pts, sw->ok, sw->error, as if it had computed them. On the other
 * ranks *swp is freed and NULL. Returns the sweep's status, the same failure on every rank. */
int study_sweep_gather(const mbl_sweep_dist *d, int rc, run *r, mbl_sweep **swp, mbl_status *st)
{
    mbl_sweep *sw = *swp;
    pack b = {0};
    double hdr[HDR_N] = {0};
    hdr[HDR_RC] = rc;
    if (sw) {
        hdr[HDR_LOAD] = sw->seconds_load, hdr[HDR_POINT] = sw->seconds_point, hdr[HDR_LIN] = sw->seconds_lin;
        hdr[HDR_SENS] = sw->seconds_sens, hdr[HDR_WARM] = sw->nwarm;
    }
    size_t nm = sw && !rc ? (size_t)r->c->nm : 0, n = sw && !rc ? (size_t)r->c->n : 0;
    int npts = !rc && d->rank != 0 ? rank_points(r, sw->npoints, d->rank, d->size) : 0;
    hdr[HDR_NPTS] = npts;
    pk(&b, hdr, HDR_N);
    pk_str(&b, rc ? st->msg : "");
    for (int k = d->rank; npts && k < r->nchunks; k += d->size)
        for (int p = k * r->chunk; p < (k + 1) * r->chunk && p < sw->npoints; p++) {
            const point_out *o = &r->pts[p];
            pk1(&b, p);
            pk1(&b, sw->ok[p]);
            if (!sw->ok[p]) {
                pk_str(&b, sw->error[p] ? sw->error[p] : "");
                continue;
            }
            int fl = (o->sre && o->sim ? PT_SHAPES : 0) | (o->dre && o->dim ? PT_DERIV : 0);
            if ((fl & PT_SHAPES) && (fl & PT_DERIV) && o->dsre && o->dsim) fl |= PT_DSHAPES;
            pk1(&b, fl);
            pk(&b, o->re, nm), pk(&b, o->im, nm);
            if (fl & PT_SHAPES) pk(&b, o->sre, nm * n), pk(&b, o->sim, nm * n);
            if (fl & PT_DERIV) pk(&b, o->dre, nm), pk(&b, o->dim, nm);
            if (fl & PT_DSHAPES) pk(&b, o->dsre, nm * n), pk(&b, o->dsim, nm * n);
        }
    if (b.oom) { /* an honest part that says so: the others are not left waiting */
        b.n = 0, b.oom = 0;
        hdr[HDR_RC] = MBL_ENOMEM, hdr[HDR_NPTS] = 0;
        pk(&b, hdr, HDR_N);
        pk_str(&b, "out of memory packing the results");
        if (!rc) rc = mbl_error(st, MBL_ENOMEM, "out of memory packing the results");
    }
    double *all = NULL;
    size_t *counts = d->rank == 0 ? mbl_calloc((size_t)d->size, sizeof *counts) : NULL;
    mbl_status gst;
    mbl_status_clear(&gst);
    int grc = b.oom ? MBL_ENOMEM : d->gather(d->ud, b.d, b.n, &all, counts, &gst);
    mbl_free(b.d);
    if (d->rank != 0 || grc || rc || !counts) {
        mbl_free(all);
        mbl_free(counts);
        if (!rc && grc) *st = gst, rc = grc;
        if (!rc && d->rank == 0) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        if (d->rank != 0 || rc) {
            mbl_sweep_free(sw);
            *swp = NULL;
        }
        return rc;
    }
    /* rank 0: the others' parts */
    size_t off = counts[0];
    double bytes = 0;
    for (int q = 1; q < d->size && !rc; off += counts[q], q++) {
        unpack u = {all + off, counts[q], 0, 0};
        const double *h = up_take(&u, HDR_N);
        char *msg = up_str(&u);
        if (u.bad) {
            mbl_free(msg);
            rc = mbl_error(st, MBL_EIO, "rank %d sent a malformed part (%zu doubles)", q, counts[q]);
            break;
        }
        if (h[HDR_RC] != 0) {
            rc = mbl_error(st, (int)h[HDR_RC], "rank %d: %s", q, msg[0] ? msg : mbl_strerror((int)h[HDR_RC]));
            mbl_free(msg);
            break;
        }
        mbl_free(msg);
        bytes += (double)counts[q] * sizeof(double);
        sw->seconds_load += h[HDR_LOAD], sw->seconds_point += h[HDR_POINT], sw->seconds_lin += h[HDR_LIN];
        sw->seconds_sens += h[HDR_SENS], sw->nwarm += (int)h[HDR_WARM];
        int cnt = (int)h[HDR_NPTS];
        if (cnt != rank_points(r, sw->npoints, q, d->size)) u.bad = 1;
        for (int i = 0; i < cnt && !u.bad; i++) {
            double pv = up1(&u), okv = up1(&u);
            int p = (int)pv;
            if (u.bad || pv != p || p < 0 || p >= sw->npoints || (p / r->chunk) % d->size != q || r->pts[p].re ||
                sw->error[p]) {
                u.bad = 1;
                break;
            }
            if (okv == 0) {
                sw->ok[p] = 0;
                sw->error[p] = up_str(&u);
                continue;
            }
            point_out *o = &r->pts[p];
            int fl = (int)up1(&u);
            size_t lens[4] = {nm, nm, nm * n, nm * n};
            double *a[4] = {NULL, NULL, NULL, NULL};
            up_block(&u, fl & PT_SHAPES ? 4 : 2, lens, a);
            o->re = a[0], o->im = a[1], o->sre = a[2], o->sim = a[3], o->own = 1;
            if (fl & PT_DERIV) {
                double *da[4] = {NULL, NULL, NULL, NULL};
                up_block(&u, fl & PT_DSHAPES ? 4 : 2, lens, da);
                o->dre = da[0], o->dim = da[1], o->dsre = da[2], o->dsim = da[3];
            }
            sw->ok[p] = !u.bad;
        }
        if (u.bad || u.at != u.n) rc = mbl_error(st, MBL_EIO, "rank %d sent a malformed part (%zu doubles)", q, counts[q]);
    }
    mbl_free(all);
    mbl_free(counts);
    if (rc) {
        mbl_sweep_free(sw);
        *swp = NULL;
        return rc;
    }
    sw->gathered_bytes = bytes;
    sw->seconds = study_sweep_now() - r->t0;
    return 0;
}
