/* Evaluation of compiled tapes (runs of one opcode), and the diagnosis of a non-finite value. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "expr/tape_internal.h"
#include "expr/tape_subset.h"

/* ---- evaluation ----------------------------------------------------------------------------- */

/* (TI_USER: mblx_tape_eval's and the diagnosis' own case, which keeps this one as it was) */
static inline double exec1(const tins *p, const double *x, const double *w, const uint32_t *ext,
                           const mblx_tape *t)
{
    switch (p->op) {
    case TI_LDC: return mblx__ins_c(t, p);
    case TI_LDS: return x[p->a];
    case TI_ADD: return w[p->a] + w[p->b];
    case TI_ADDC: return w[p->a] + mblx__ins_c(t, p);
    case TI_MUL: return w[p->a] * w[p->b];
    case TI_MULC: return w[p->a] * mblx__ins_c(t, p);
    case TI_ADD2C: return w[p->a] + w[p->b] + mblx__ins_c(t, p);
    case TI_MUL2C: return w[p->a] * w[p->b] * mblx__ins_c(t, p);
    case TI_SQR: return w[p->a] * w[p->a];
    case TI_CUBE: return w[p->a] * w[p->a] * w[p->a];
    case TI_RECIP: return 1.0 / w[p->a];
    case TI_RSQR: return 1.0 / (w[p->a] * w[p->a]);
    case TI_SQRTP: return sqrt(w[p->a]);
    case TI_POWC: return pow(w[p->a], mblx__ins_c(t, p));
    case TI_POW: return pow(w[p->a], w[p->b]);
    case TI_SQRT: return sqrt(w[p->a]);
    case TI_SIN: return sin(w[p->a]);
    case TI_COS: return cos(w[p->a]);
    case TI_TAN: return tan(w[p->a]);
    case TI_ASIN: return asin(w[p->a]);
    case TI_ACOS: return acos(w[p->a]);
    case TI_ATAN: return atan(w[p->a]);
    case TI_ATAN2: return atan2(w[p->a], w[p->b]);
    case TI_SINH: return sinh(w[p->a]);
    case TI_COSH: return cosh(w[p->a]);
    case TI_TANH: return tanh(w[p->a]);
    case TI_EXP: return exp(w[p->a]);
    case TI_LOG: return log(w[p->a]);
    case TI_ABS: return fabs(w[p->a]);
    case TI_SIGN: return (double)((w[p->a] > 0.0) - (w[p->a] < 0.0));
    case TI_MIN: return w[p->a] < w[p->b] ? w[p->a] : w[p->b];
    case TI_MAX: return w[p->a] > w[p->b] ? w[p->a] : w[p->b];
    case TI_STEP: {
        const uint32_t *r = ext + p->a;
        return mblx__step_value(w[r[0]], w[r[1]], w[r[2]], w[r[3]], w[r[4]]);
    }
    case TI_DATA: return mblx__data_value(t->data, t->ndata, mblx__ins_c(t, p), w[p->a], w[p->b]);
    default: return NAN;
    }
}

static inline int not_finite(double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return (u & 0x7ff0000000000000ull) == 0x7ff0000000000000ull;
}

static const char *tape_symname(const void *ctx, uint32_t node)
{
    const mblx_tape *t = ctx;
    return t->names + t->lnd[node].doff;
}

/* Length of the expression excerpt in an error message. */
enum { DIAG_EXPR_MAX = MBL_MSG_MAX / 2 };

/* The operation of the node of instruction l's tape entry (the copy's, or the graph's). */
static unsigned node_op(const mblx_tape *t, uint32_t l)
{
    return t->g ? t->g->nd[l].op : t->lnd[l].op;
}

/* "<what> in <the expression of node l, cut to DIAG_EXPR_MAX>" (what alone when out of memory). */
static int report(const mblx_tape *t, uint32_t l, const char *what, mbl_status *st)
{
    char ex[DIAG_EXPR_MAX];
    size_t len;
    if (t->g) {
        len = mblx_print(t->g, l, ex, sizeof ex);
    } else {
        mblx__view view = {t->lnd, t->largs, tape_symname, t, t->data, t->ndata, t->user, t->nuser, 0};
        len = mblx__print_view(&view, l, ex, sizeof ex);
    }
    if (len == SIZE_MAX) return mbl_error(st, MBL_EDOMAIN, "%s", what);
    if (len >= sizeof ex) memcpy(ex + sizeof ex - 4, "...", 4);
    return mbl_error(st, MBL_EDOMAIN, "%s in %s", what, ex);
}

static int diagnose_unlocked(const mblx_tape *t, const double *x, double *w, mbl_status *st)
{
    for (size_t r = 0; r < t->nrun; r++) {
        if (t->run_op[r] == MBLX__RUN_GAP) continue; /* a view's instructions left out */
        for (size_t i = t->run_start[r]; i < t->run_start[r + 1]; i++) {
            const tins *p = &t->ins[i];
            char umsg[MBL_MSG_MAX / 4]; /* a routine's failure (as long as what) */
            umsg[0] = '\0';
            double v = p->op == TI_USER ? mblx__tape_user(t, p, w, NULL, 0, umsg, sizeof umsg) : exec1(p, x, w, t->ext, t);
            if (!not_finite(v)) {
                w[p->dst] = v;
                continue;
            }
            uint32_t l = t->ins_node[i];
            double a = p->op == TI_LDS ? x[p->a] : (p->op == TI_LDC ? mblx__ins_c(t, p) : w[p->a]);
            double b = (p->op == TI_POW || p->op == TI_ATAN2) ? w[p->b] : mblx__ins_c(t, p);
            char what[MBL_MSG_MAX / 4];
            unsigned op = node_op(t, l);
            switch (op) {
            case MBLX_OP_SYMBOL:
                snprintf(what, sizeof what, "non-finite value %g of symbol '%s'", a,
                         t->g ? (mblx_symbol_name(t->g, l) ? mblx_symbol_name(t->g, l) : "?") : tape_symname(t, l));
                break;
            case MBLX_OP_SQRT: snprintf(what, sizeof what, "sqrt of negative value %.17g", a); break;
            case MBLX_OP_LOG: snprintf(what, sizeof what, "log of non-positive value %.17g", a); break;
            case MBLX_OP_ASIN:
            case MBLX_OP_ACOS:
                snprintf(what, sizeof what, "%s of value %.17g outside [-1, 1]",
                         mblx_op_name((mblx_op)op), a);
                break;
            case MBLX_OP_POW:
                if (p->op == TI_POW || p->op == TI_POWC || p->op == TI_RECIP || p->op == TI_RSQR ||
                    p->op == TI_SQRTP) {
                    if (p->op != TI_POW && p->op != TI_POWC) /* the exponent its opcode stands for */
                        b = p->op == TI_RECIP ? -1.0 : p->op == TI_RSQR ? -2.0 : 0.5;
                    if (a == 0.0 && b < 0.0) {
                        snprintf(what, sizeof what, "division by zero");
                        break;
                    }
                    if (a < 0.0 && b != floor(b)) {
                        snprintf(what, sizeof what, "pow of negative base %.17g to non-integer exponent %.17g", a, b);
                        break;
                    }
                }
                snprintf(what, sizeof what, "non-finite result %g", v);
                break;
            case MBLX_OP_USER:
                if (umsg[0]) {
                    snprintf(what, sizeof what, "%s", umsg);
                    break;
                }
                snprintf(what, sizeof what, "non-finite result %g", v);
                break;
            case MBLX_OP_DATA:
                if (p->op == TI_DATA) {
                    mblx__data_why(t->data, t->ndata, mblx__ins_c(t, p), a, w[p->b], what, sizeof what);
                    break;
                }
                snprintf(what, sizeof what, "non-finite result %g", v);
                break;
            default: snprintf(what, sizeof what, "non-finite result %g", v); break;
            }
            return report(t, l, what, st);
        }
    }
    return mbl_error(st, MBL_EDOMAIN, "non-finite result");
}

/* The first non-finite value of an evaluation, named (a bound tape reads its graph under its lock). */
static int diagnose(const mblx_tape *t, const double *x, double *w, mbl_status *st)
{
    if (t->lock) t->lock(t->lock_ctx, 1);
    int rc = diagnose_unlocked(t, x, w, st);
    if (t->lock) t->lock(t->lock_ctx, 0);
    return rc;
}

int mblx__tape_diagnose(const mblx_tape *t, const double *x, double *w, mbl_status *st)
{
    return diagnose(t, x, w, st);
}

int mblx__tape_report_ins(const mblx_tape *t, size_t i, const char *what, mbl_status *st)
{
    if (t->lock) t->lock(t->lock_ctx, 1);
    int rc = report(t, t->ins_node[i], what, st);
    if (t->lock) t->lock(t->lock_ctx, 0);
    return rc;
}

int mblx_tape_eval(const mblx_tape *t, const double *symvals, double *out, double *work,
                   mbl_status *st)
{
    if (!t || (t->nout && !out) || (t->nreg && !work) || (t->nsymreq && !symvals))
        return mbl_error(st, MBL_EARG, "mblx_tape_eval: NULL argument");
    const tins *ins = t->ins;
    const double *cst = t->cst;
    const uint32_t *ext = t->ext;
    double *w = work;
    double bad = 0.0; /* v * 0 is 0 for a finite v, NaN else: the sum is NaN when a value is not finite */
    double *ucache = w + (t->nreg ? t->nreg : 1); /* the routines' calls (tape_user.c) */
    if (t->nuins) mblx__tape_user_reset(t, ucache);
#define RUN(expr)                                                                             \
    for (; p < e; p++) {                                                                      \
        double v = (expr);                                                                    \
        w[p->dst] = v;                                                                        \
        bad += v * 0.0;                                                                       \
    }                                                                                         \
    break
    for (size_t r = 0; r < t->nrun; r++) {
        const tins *p = ins + t->run_start[r], *e = ins + t->run_start[r + 1];
        switch (t->run_op[r]) {
        case TI_LDC: RUN(cst[p->ci]);
        case TI_LDS: RUN(symvals[p->a]);
        case TI_ADD: RUN(w[p->a] + w[p->b]);
        case TI_ADDC: RUN(w[p->a] + cst[p->ci]);
        case TI_MUL: RUN(w[p->a] * w[p->b]);
        case TI_MULC: RUN(w[p->a] * cst[p->ci]);
        case TI_ADD2C: RUN(w[p->a] + w[p->b] + cst[p->ci]);
        case TI_MUL2C: RUN(w[p->a] * w[p->b] * cst[p->ci]);
        case TI_SQR: RUN(w[p->a] * w[p->a]);
        case MBLX__RUN_GAP: break; /* a view's instructions left out */
        case TI_USER: RUN(mblx__tape_user(t, p, w, ucache, 0, NULL, 0));
        default: RUN(exec1(p, symvals, w, ext, t));
        }
    }
#undef RUN
    if (bad != bad) return diagnose(t, symvals, work, st);
    for (size_t o = 0; o < t->nout; o++) out[o] = w[t->outreg[o]];
    mbl_status_clear(st);
    return 0;
}

int mblx_eval(const mblx_graph *g, mblx_id e, const double *symvals, double *value,
              mbl_status *st)
{
    /* a number, or a symbol of finite value, without a tape: what its one instruction would load
     * (a tape compiled for one node cost about 10,000 instructions: the mechanism compiler
     * evaluates 33 such while loading the bicycle) */
    if (g && mblx__valid(g, e)) {
        const mblx__node *nd = &g->nd[e];
        double v = nd->op == MBLX_OP_CONST                 ? nd->val
                   : nd->op == MBLX_OP_SYMBOL && symvals ? symvals[(uint32_t)nd->val]
                                                           : NAN;
        if (isfinite(v)) {
            if (value) *value = v;
            mbl_status_clear(st);
            return 0;
        }
    }
    mblx_tape *t = mblx_compile(g, 1, &e, st);
    if (!t) return st ? st->code : MBL_ENOMEM;
    double local[INIT_CAP];
    size_t nw = mblx_tape_work_size(t);
    double *w = nw <= INIT_CAP ? local : mbl_alloc_array(nw, sizeof *w);
    int rc;
    if (!w) {
        rc = mbl_error(st, MBL_ENOMEM, "out of memory while evaluating an expression");
    } else {
        double v = 0.0;
        rc = mblx_tape_eval(t, symvals, &v, w, st);
        if (rc == 0 && value) *value = v;
    }
    if (w != local) mbl_free(w);
    mblx_tape_free(t);
    return rc;
}

int mblx_eval_text(const char *text, size_t len, double *value, mbl_status *st)
{
    if (!text || !value) return mbl_error(st, MBL_EARG, "mblx_eval_text: invalid arguments");
    mblx_graph *g = mblx_graph_new();
    if (!g) return mbl_error(st, MBL_ENOMEM, "out of memory while reading a constant expression");
    mblx_id e = MBLX_NONE;
    double x = NAN;
    int rc = mblx_parse(g, text, len, NULL, &e, st);
    if (!rc) rc = mblx_eval(g, e, NULL, &x, st);
    mblx_graph_free(g);
    if (rc) return rc;
    if (!isfinite(x)) return mbl_error(st, MBL_EDOMAIN, "not finite");
    *value = x;
    mbl_status_clear(st);
    return 0;
}

/* ---- a view of some outputs (tape_subset.h) ------------------------------------------------- */

/* The registers instruction in reads into need. */
static inline void mark_operands(const mblx_tape *t, const tins *in, unsigned char *need)
{
    unsigned rd = mblx__ti_reads(in->op);
    if (rd & TI_READS_A) need[in->a] = 1;
    if (rd & TI_READS_B) need[in->b] = 1;
    if (rd & TI_READS_EXT)
        for (uint32_t j = 0, ne = mblx__ext_count(in); j < ne; j++) need[t->ext[in->a + j]] = 1;
}

void mblx__subtape_free(mblx__subtape *s)
{
    if (!s) return;
    if (s->view) mbl_free(s->view->outreg), mbl_free(s->view->run_start), mbl_free(s->view->run_op), mbl_free(s->view);
    mbl_free(s->jent), mbl_free(s->jsrc);
    mbl_free(s);
}

const mblx_tape *mblx__subtape_tape(const mblx__subtape *s) { return s ? s->view : NULL; }

/* The end of the stretch from instruction i of those kept as i is (keep), at most end: eight at
 * a time (the kept come in long stretches). */
static size_t keep_stretch_end(const unsigned char *keep, size_t i, size_t end)
{
    const uint64_t same = keep[i] ? 0x0101010101010101ull : 0;
    const unsigned char k = keep[i];
    for (uint64_t word; i + 8 <= end; i += 8) {
        memcpy(&word, keep + i, sizeof word);
        if (word != same) break;
    }
    while (i < end && keep[i] == k) i++;
    return i;
}

/* The view's runs over t's instructions (keep: those kept, 1; the others gaps), each an opcode's
 * stretch of kept instructions or a gap, into start[] and op[] when not NULL; returns their count. */
static size_t view_runs(const mblx_tape *t, const unsigned char *keep, uint32_t *start, uint8_t *op)
{
    size_t n = 0;
    unsigned last = UINT32_MAX; /* the last run's opcode */
    for (size_t r = 0; r < t->nrun; r++)
        for (size_t i = t->run_start[r], e = t->run_start[r + 1]; i < e; i = keep_stretch_end(keep, i, e)) {
            unsigned o = keep[i] ? t->run_op[r] : MBLX__RUN_GAP;
            if (o == last) continue;
            if (start) start[n] = (uint32_t)i, op[n] = (uint8_t)o;
            n++, last = o;
        }
    if (start) start[n] = (uint32_t)t->nins;
    return n;
}

mblx__subtape *mblx__subtape_new(const mblx_tape *t, size_t nsel, const uint32_t *sel)
{
    if (!t || !t->nins || (nsel && !sel) || t->nins > UINT32_MAX) return NULL;
    for (size_t k = 0; k < nsel; k++)
        if (sel[k] >= t->nout) return NULL;
    unsigned char *need = mbl_calloc(t->nreg ? t->nreg : 1, 1);
    unsigned char *keep = mbl_calloc(t->nins, 1); /* the instructions kept */
    mblx__subtape *s = NULL;
    if (!need || !keep) goto out;
    for (size_t k = 0; k < nsel; k++) need[t->outreg[sel[k]]] = 1;
    size_t nkeep = 0;
    for (size_t i = t->nins; i-- > 0;) { /* backwards: a register is needed from its last read back to its write */
        const tins *in = &t->ins[i];
        if (!need[in->dst]) continue;
        need[in->dst] = 0;
        mark_operands(t, in, need);
        keep[i] = 1, nkeep++;
    }
    if (nkeep == t->nins || !(s = mbl_calloc(1, sizeof *s))) goto out;
    mblx_tape *v = s->view = mbl_alloc_array(1, sizeof *v);
    if (v) {
        *v = *t;
        v->fwdjac = NULL, v->nins = nkeep, v->nout = nsel;
        v->outreg = mbl_alloc_array(nsel ? nsel : 1, sizeof *v->outreg);
        v->nrun = view_runs(t, keep, NULL, NULL);
        v->run_start = mbl_alloc_array(v->nrun + 1, sizeof *v->run_start);
        v->run_op = mbl_alloc_array(v->nrun, sizeof *v->run_op);
    }
    if (!v || !v->outreg || !v->run_start || !v->run_op) {
        mblx__subtape_free(s);
        s = NULL;
        goto out;
    }
    view_runs(t, keep, v->run_start, v->run_op);
    for (size_t k = 0; k < nsel; k++) v->outreg[k] = t->outreg[sel[k]];
out:
    mbl_free(need), mbl_free(keep);
    return s;
}
