/* The user instructions of tapes (TI_USER, issue 68): one call of a routine per evaluation and
 * distinct inputs, its results kept in the work array (tape_internal.h), and the tangents of
 * forward mode from its partials.
 *
 * Routine r's cache, at uoff[r] in the caches: [state, in[nin], out[nout], partials[nout nin],
 * a tangent's partials[nin], scratch (mblx__user_scratch)]; state 0: empty, 1: the outputs at in, 2: the outputs and the
 * partials at in. Every evaluation marks the caches empty at its start (mblx__tape_user_reset); an
 * instruction whose inputs differ bitwise from its routine's cache calls the routine again. */
#include <stdio.h>
#include <string.h>

#include "expr/tape_internal.h"

/* The doubles of routine u's cache. */
static size_t cache_size(const mblx__user *u)
{
    size_t nin = (size_t)u->nin, nout = (size_t)u->nout;
    return 1 + nin + nout + nout * nin + nin + mblx__user_scratch(u);
}

int mblx__tape_user_setup(mblx_tape *t, const mblx_graph *g)
{
    size_t n = 0;
    for (size_t i = 0; i < t->nins; i++) n += t->ins[i].op == TI_USER;
    if (!n) return 0;
    if (!(t->user = mblx__user_copy_all(g->user, g->nuser))) return -1;
    t->nuser = g->nuser;
    t->uoff = mbl_alloc_array(g->nuser, sizeof *t->uoff);
    t->uwantp = mbl_calloc(g->nuser, 1);
    if (!t->uoff || !t->uwantp) return -1;
    size_t off = 0;
    for (uint32_t r = 0; r < t->nuser; r++) t->uoff[r] = off, off += cache_size(&t->user[r]);
    for (size_t i = 0; i < t->nins; i++) {
        if (t->ins[i].op != TI_USER) continue;
        long r;
        int k, j1, j2;
        mblx__user_decode(mblx__ins_c(t, &t->ins[i]), &r, &k, &j1, &j2);
        if (j1 >= 0 && j2 < 0) t->uwantp[r] = 1; /* an order-1 node: the routine's partials read */
    }
    t->ucache = off;
    t->nuins = n;
    return 0;
}

void mblx__tape_user_free(mblx_tape *t)
{
    mblx__user_free(t->user, t->nuser);
    mbl_free(t->uoff);
    mbl_free(t->uwantp);
    t->user = NULL, t->uoff = NULL, t->uwantp = NULL, t->nuser = 0;
}

static int same_bits(double a, double b)
{
    uint64_t x, y;
    memcpy(&x, &a, sizeof x);
    memcpy(&y, &b, sizeof y);
    return x == y;
}

double mblx__tape_user(const mblx_tape *t, const tins *p, const double *w, double *cache, int deriv, char *msg,
                       size_t size)
{
    long r;
    int k, j1, j2;
    char lmsg[MBL_MSG_MAX];
    mblx__user_decode(mblx__ins_c(t, p), &r, &k, &j1, &j2);
    if (r < 0 || (uint32_t)r >= t->nuser) return NAN;
    if (!msg) msg = lmsg, size = sizeof lmsg;
    const mblx__user *u = &t->user[r];
    size_t nin = (size_t)u->nin, nout = (size_t)u->nout;
    double *own = cache ? NULL : mbl_alloc_array(cache_size(u), sizeof *own); /* (the diagnosis: no cache) */
    double *c = cache ? cache + t->uoff[r] : own;
    if (!c) {
        snprintf(msg, size, "routine '%s': out of memory", u->name);
        return NAN;
    }
    if (own) c[0] = 0.0;
    double *in = c + 1, *out = in + nin, *P = out + nout, *scratch = P + nout * nin + nin;
    const uint32_t *e = t->ext + p->a;
    for (size_t j = 0; j < nin && c[0] != 0.0; j++)
        if (!same_bits(w[e[j]], in[j])) c[0] = 0.0; /* other inputs: called again */
    if (c[0] == 0.0)
        for (size_t j = 0; j < nin; j++) in[j] = w[e[j]];
    /* what the node needs: the outputs (1), the partials too (2: an order-1 node, a tangent), nothing
     * cached (an order-2 node); the routine's own partials asked with its values when an order-1
     * node of the tape reads them, so that it is called once */
    double want = j2 >= 0 ? 0.0 : j1 >= 0 || deriv ? 2.0 : 1.0;
    if (want == 1.0 && u->partials && t->uwantp[r]) want = 2.0;
    int rc = 0;
    double v = NAN;
    if (c[0] < want) {
        rc = mblx__user_fill(u, in, out, want == 2.0 ? P : NULL, c[0] >= 1.0, scratch, msg, size);
        c[0] = rc ? 0.0 : want;
    }
    if (!rc) {
        if (j2 >= 0) rc = mblx__user_second(u, in, k, j1, j2, scratch, &v, msg, size);
        else v = j1 < 0 ? out[k] : P[(size_t)k * nin + (size_t)j1];
    }
    mbl_free(own);
    return rc ? NAN : v;
}

/* Lanes of the tangents summed at a time (the result's register may be an input's: each block of
 * lanes is read whole before it is written). */
enum { TANGENT_BLOCK = 64 };

/* Is input j of tangents Tj (np lanes) moving in some lane? */
static int moving(const double *Tj, size_t np)
{
    for (size_t l = 0; l < np; l++)
        if (Tj[l] != 0.0) return 1;
    return 0;
}

void mblx__tape_user_tangents(const mblx_tape *t, const tins *p, double *cache, const double *T, double *Td, size_t np)
{
    long r;
    int k, j1, j2;
    char msg[MBL_MSG_MAX];
    mblx__user_decode(mblx__ins_c(t, p), &r, &k, &j1, &j2);
    if (r < 0 || (uint32_t)r >= t->nuser) {
        for (size_t l = 0; l < np; l++) Td[l] = NAN;
        return;
    }
    const mblx__user *u = &t->user[r];
    size_t nin = (size_t)u->nin, nout = (size_t)u->nout;
    double *c = cache + t->uoff[r], *in = c + 1, *P = in + nin + nout, *d = P + nout * nin, *scratch = d + nin;
    const uint32_t *e = t->ext + p->a;
    /* the node's partials in its moving inputs (0: not moving): the routine's (order 0), by
     * differences (order 1), NaN (order 2: third derivatives are not available) */
    for (size_t j = 0; j < nin; j++) {
        d[j] = 0.0;
        if (!moving(T + (size_t)e[j] * np, np)) continue;
        d[j] = NAN;
        if (j2 < 0 && j1 < 0) d[j] = c[0] == 2.0 ? P[(size_t)k * nin + j] : NAN;
        else if (j2 < 0 && mblx__user_second(u, in, k, j1, (int)j, scratch, &d[j], msg, sizeof msg)) d[j] = NAN;
    }
    for (size_t l0 = 0; l0 < np; l0 += TANGENT_BLOCK) {
        size_t nl = np - l0 < TANGENT_BLOCK ? np - l0 : TANGENT_BLOCK;
        double acc[TANGENT_BLOCK] = {0};
        for (size_t j = 0; j < nin; j++) {
            const double *Tj = T + (size_t)e[j] * np + l0;
            if (d[j] == 0.0) continue;
            for (size_t l = 0; l < nl; l++)
                if (Tj[l] != 0.0) acc[l] += d[j] * Tj[l];
        }
        memcpy(Td + l0, acc, nl * sizeof *acc);
    }
}
