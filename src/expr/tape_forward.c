/* Forward mode on compiled tapes (issue 31, item 2; issue 34, item 5): each instruction computes
 * its value and p tangents at once, with the derivative rules of diff.c in numbers, so that
 * Jacobian values need no symbolic derivative and no second tape. mblx_fwdjac adds the structural
 * pattern of a Jacobian (the graph's dependence sets) and a greedy coloring of its columns (no
 * two columns of one color share a row; both made in fwdjac.c): the values are then ncolors
 * directional derivatives. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "expr/fwdjac_internal.h"
#include "expr/fwdjac_narrow.h"
#include "expr/tape_internal.h"
#include "expr/tape_subset.h"

/* ---- one sweep ------------------------------------------------------------------------------ */

/* Where the tangents of the symbols come from: a dense seed (nsym x p), or the colors of the
 * symbols (direction k of this sweep is color c0 + k: 1 along the symbols of that color). */
typedef struct fwd_seed {
    const double *dense;
    const int *color;
    size_t ncolor;
    int c0;
    size_t np; /* directions; the tangents of a register are FWD_LANES-padded (zeros past np) */
    /* the guard of an operand whose partial is not finite (lin1): its tangent's lanes that are 0
     * contribute 0 where the operand does not depend on that lane's direction at all. The fast
     * sweep cannot tell that from a tangent that is 0 at this point (d(x^2) at x = 0), so it sets
     * *guarded; the sweep is then made again with mask, per register the lanes (bit min(k, 31)) of
     * the directions it depends on, and a lane that depends is multiplied out (inf * 0: not
     * finite, reported as the symbolic derivative's division by zero is). */
    int *guarded;
    uint32_t *mask; /* NULL in the fast sweep */
    double *ucache; /* the routines' calls (tape_user.c): the work array's after the tangents */
} fwd_seed;

static inline uint32_t lane_bit(size_t k) { return 1u << (k < 31 ? k : 31); }

/* the operand's lanes (all of them when masks are not kept: only read when they are) */
static inline uint32_t mask_of(const fwd_seed *sd, uint32_t reg) { return sd->mask ? sd->mask[reg] : 0; }

/* The tangents of a register are a multiple of FWD_LANES doubles, computed FWD_LANES at a time
 * (independent statements the compiler vectorizes); the padding stays 0. */
enum { FWD_LANES = 4 };
_Static_assert(FWD_LANES == 4, "LANES and tangents_finite write out four lanes");
static size_t padded(size_t p) { return (p + FWD_LANES - 1) / FWD_LANES * FWD_LANES; }

/* Four lanes as one vector of GCC's vector extension (AVX: one instruction, the baseline's SSE2:
 * two), unaligned; each lane the same operation, rounded the same, as a lane alone. */
typedef double fwd_v4 __attribute__((vector_size(FWD_LANES * sizeof(double)), aligned(sizeof(double)), may_alias));
/* the lanes of tangents P (Ta, Tb) in the block of LANES4 */
#define V(P) (*(const fwd_v4 *)((P) + kv_))
/* scalar x in every lane */
#define SPLAT(x) ((fwd_v4){(x), (x), (x), (x)})

/* Td's lanes k0_ .. k0_ + 3 = E, an expression of vectors V(Ta), V(Tb) and scalars (E reads its
 * operands before the store, so that Td may be an operand). */
#define LANES4(E, k0_)                                                                            \
    do {                                                                                          \
        size_t kv_ = (k0_);                                                                       \
        fwd_v4 r_ = (E);                                                                          \
        *(fwd_v4 *)(Td + kv_) = r_;                                                               \
    } while (0)

/* Td = E for every lane, eight lanes a step and then the last four (p a multiple of FWD_LANES):
 * p = 12's lanes, a constant in SWEEP_BY_LANES, become straight code (GCC kept a loop of four lanes
 * a step, 7 instructions a vector where 3 do). */
#define LANES(E)                                                                                  \
    do {                                                                                          \
        size_t k_ = 0;                                                                            \
        for (; k_ + 2 * FWD_LANES <= p; k_ += 2 * FWD_LANES) {                                    \
            LANES4(E, k_);                                                                        \
            LANES4(E, k_ + FWD_LANES);                                                            \
        }                                                                                         \
        if (k_ < p) LANES4(E, k_);                                                                \
    } while (0)

static inline int finite(double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return (~u & 0x7ff0000000000000ull) != 0;
}

/* d Ta[k] where d is not finite (fwd_seed.guarded): 0 for a lane the operand (lanes ma) does not
 * depend on. */
static inline double guarded(double d, double Tk, size_t k, uint32_t ma, const fwd_seed *sd)
{
    if (Tk != 0.0) return d * Tk;
    if (!sd->mask) {
        *sd->guarded = 1;
        return 0.0;
    }
    return ma & lane_bit(k) ? d * Tk : 0.0;
}

/* T = da Ta, with the guard where da is not finite. */
static inline void lin1(double *T, const double *Ta, double da, size_t p, uint32_t ma, const fwd_seed *sd)
{
    if (finite(da)) {
        double *Td = T;
        LANES(da * V(Ta));
    } else {
        for (size_t k = 0; k < p; k++) T[k] = guarded(da, Ta[k], k, ma, sd);
    }
}

/* T = da Ta + db Tb, with lin1's guard on each term. */
static inline void lin2(double *T, const double *Ta, double da, const double *Tb, double db, size_t p, uint32_t ma,
                        uint32_t mb, const fwd_seed *sd)
{
    if (finite(da) && finite(db)) {
        double *Td = T;
        LANES(da * V(Ta) + db * V(Tb));
    } else {
        for (size_t k = 0; k < p; k++) T[k] = guarded(da, Ta[k], k, ma, sd) + guarded(db, Tb[k], k, mb, sd);
    }
}

static double sgn(double a) { return (double)((a > 0.0) - (a < 0.0)); }

/* The value of a one-operand instruction (the operations of tape_eval.c's exec1). */
static inline __attribute__((always_inline)) double value1(unsigned op, double a, double c)
{
    switch (op) {
    case TI_SQR: return a * a;
    case TI_CUBE: return a * a * a;
    case TI_RECIP: return 1.0 / a;
    case TI_RSQR: return 1.0 / (a * a);
    case TI_SQRTP: return sqrt(a);
    case TI_POWC: return pow(a, c);
    case TI_SQRT: return sqrt(a);
    case TI_SIN: return sin(a);
    case TI_COS: return cos(a);
    case TI_TAN: return tan(a);
    case TI_ASIN: return asin(a);
    case TI_ACOS: return acos(a);
    case TI_ATAN: return atan(a);
    case TI_SINH: return sinh(a);
    case TI_COSH: return cosh(a);
    case TI_TANH: return tanh(a);
    case TI_EXP: return exp(a);
    case TI_LOG: return log(a);
    case TI_ABS: return fabs(a);
    case TI_SIGN: return sgn(a);
    default: return NAN;
    }
}

/* Its derivative at a (v the value): the rules of diff.c's partial(). */
static inline __attribute__((always_inline)) double deriv1(unsigned op, double a, double v, double c)
{
    switch (op) {
    case TI_SQR: return 2.0 * a;
    case TI_CUBE: return 3.0 * a * a;
    case TI_RECIP: return -v * v;
    case TI_RSQR: return -2.0 * v / a;
    case TI_SQRTP:
    case TI_SQRT: return 0.5 / v;
    case TI_POWC: return c * pow(a, c - 1.0);
    case TI_SIN: return cos(a);
    case TI_COS: return -sin(a);
    case TI_TAN: return 1.0 + v * v;
    case TI_ASIN: return 1.0 / sqrt(1.0 - a * a);
    case TI_ACOS: return -1.0 / sqrt(1.0 - a * a);
    case TI_ATAN: return 1.0 / (1.0 + a * a);
    case TI_SINH: return cosh(a);
    case TI_COSH: return sinh(a);
    case TI_TANH: return 1.0 - v * v;
    case TI_EXP: return v;
    case TI_LOG: return 1.0 / a;
    case TI_ABS: return sgn(a);
    case TI_SIGN: return 0.0;
    default: return NAN;
    }
}

/* A two-operand instruction other than sums and products: value and both partials. */
static double binary(const mblx_tape *t, const tins *in, double a, double b, double *da, double *db)
{
    double v, s;
    switch (in->op) {
    case TI_POW:
        v = pow(a, b);
        *da = b * pow(a, b - 1.0);
        *db = v * log(a);
        return v;
    case TI_ATAN2:
        s = a * a + b * b;
        *da = b / s;
        *db = -a / s;
        return atan2(a, b);
    case TI_MIN:
    case TI_MAX: /* d min(a, b)/da = (1 - sign(a - b))/2, d/db = (1 + sign(a - b))/2; max swapped */
        s = sgn(a - b);
        *da = 0.5 * (in->op == TI_MAX ? 1.0 + s : 1.0 - s);
        *db = 0.5 * (in->op == TI_MAX ? 1.0 - s : 1.0 + s);
        return in->op == TI_MIN ? (a < b ? a : b) : (a > b ? a : b);
    case TI_DATA:
        *da = mblx__data_partial_value(t->data, t->ndata, mblx__ins_c(t, in), 0, a, b);
        *db = mblx__data_partial_value(t->data, t->ndata, mblx__ins_c(t, in), 1, a, b);
        return mblx__data_value(t->data, t->ndata, mblx__ins_c(t, in), a, b);
    default: *da = *db = NAN; return NAN;
    }
}

/* step(x, x0, h0, x1, h1) and its tangents (diff.c: with c = clamp((x - x0)/(x1 - x0), 0, 1) and
 * D = 6 c (1 - c) (h1 - h0): d/dx = D/w, d/dx0 = D (x - x1)/w^2, d/dx1 = -D (x - x0)/w^2,
 * d/dh0 = 1 - step(x, x0, 0, x1, 1), d/dh1 = step(x, x0, 0, x1, 1), w = x1 - x0). */
static double step(const uint32_t *r, const double *w, const double *T, double *Td, size_t p, const fwd_seed *sd)
{
    double x = w[r[0]], x0 = w[r[1]], h0 = w[r[2]], x1 = w[r[3]], h1 = w[r[4]];
    double wd = x1 - x0, s = (x - x0) / wd;
    double c = s > 0.0 ? s : 0.0;
    c = c < 1.0 ? c : 1.0;
    double D = 6.0 * c * (1.0 - c) * (h1 - h0), w2 = 1.0 / (wd * wd);
    double u = mblx__step_value(x, x0, 0.0, x1, 1.0);
    double d[5] = {D / wd, D * (x - x1) * w2, 1.0 - u, -D * (x - x0) * w2, u};
    const double *Tr[5];
    int ok = 1;
    for (int j = 0; j < 5; j++) {
        Tr[j] = T + (size_t)r[j] * p;
        ok &= finite(d[j]);
    }
    for (size_t k = 0; k < p; k++) {
        double acc = 0.0;
        for (int j = 0; j < 5; j++) acc += ok ? d[j] * Tr[j][k] : guarded(d[j], Tr[j][k], k, mask_of(sd, r[j]), sd);
        Td[k] = acc;
    }
    return mblx__step_value(x, x0, h0, x1, h1);
}

/* p is FWD_LANES-padded: the zeros written four at a time (a call of memset cost more than the
 * few lanes of a tangent) */
static inline __attribute__((always_inline)) void seed_symbol(double *Td, uint32_t s, size_t p, const fwd_seed *sd)
{
    LANES(SPLAT(0.0));
    if (sd->dense) {
        memcpy(Td, sd->dense + (size_t)s * sd->np, sd->np * sizeof *Td);
    } else if (s < sd->ncolor) {
        long k = (long)sd->color[s] - sd->c0;
        if (k >= 0 && (size_t)k < sd->np) Td[k] = 1.0;
    }
}

/* The lanes instruction in's result depends on (fwd_seed.mask), from its operands'. */
static void mask_update(const mblx_tape *t, const tins *in, const fwd_seed *sd)
{
    uint32_t *m = sd->mask, r = 0;
    switch (in->op) {
    case TI_LDC: break;
    case TI_LDS:
        if (sd->dense) {
            for (size_t k = 0; k < sd->np; k++)
                if (sd->dense[(size_t)in->a * sd->np + k] != 0.0) r |= lane_bit(k);
        } else if (in->a < sd->ncolor) {
            long k = (long)sd->color[in->a] - sd->c0;
            if (k >= 0 && (size_t)k < sd->np) r = lane_bit((size_t)k);
        }
        break;
    default: {
        unsigned rd = mblx__ti_reads(in->op);
        if (rd & TI_READS_A) r |= m[in->a];
        if (rd & TI_READS_B) r |= m[in->b];
        if (rd & TI_READS_EXT)
            for (uint32_t j = 0, ne = mblx__ext_count(in); j < ne; j++) r |= m[t->ext[in->a + j]];
        break;
    }
    }
    m[in->dst] = r;
}

/* v * 0 is 0 (of either sign) for a finite v, NaN for an infinite or NaN one: a sum of them is NaN
 * when one of the values was not finite (two instructions a value, no branch). */
static inline double not_finite(double v) { return v * 0.0; }

/* The p tangents T (p a multiple of FWD_LANES) summed as not_finite's (NaN when one is not finite),
 * in FWD_LANES independent sums (vectorized). */
static inline __attribute__((always_inline)) double tangents_bad(const double *T, size_t p)
{
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    for (size_t k = 0; k < p; k += FWD_LANES) {
        s0 += not_finite(T[k]);
        s1 += not_finite(T[k + 1]);
        s2 += not_finite(T[k + 2]);
        s3 += not_finite(T[k + 3]);
    }
    return (s0 + s1) + (s2 + s3);
}

/* Are the p tangents T finite? */
static int tangents_finite(const double *T, size_t p)
{
    double s = tangents_bad(T, p);
    return s == s;
}

/* Instruction in: its tangents into T (p per register) and its value, returned (not stored). */
static inline __attribute__((always_inline)) double fwd1(const mblx_tape *t, const tins *in, const double *x, size_t p, const fwd_seed *sd,
                          const double *w, double *T)
{
    double *Td = T + (size_t)in->dst * p, v, da, db, c = mblx__ins_c(t, in);
#define Ta (T + (size_t)in->a * p) /* the operands' tangents (a and b are registers here) */
#define Tb (T + (size_t)in->b * p)
    switch (in->op) {
    case TI_LDC:
        LANES(SPLAT(0.0));
        return c;
    case TI_LDS:
        seed_symbol(Td, in->a, p, sd);
        return x[in->a];
    case TI_ADD:
    case TI_ADD2C:
        v = in->op == TI_ADD ? w[in->a] + w[in->b] : w[in->a] + w[in->b] + c;
        LANES(V(Ta) + V(Tb));
        return v;
    case TI_ADDC:
        if (Td != Ta) memcpy(Td, Ta, p * sizeof *Td);
        return w[in->a] + c;
    case TI_MUL:
    case TI_MUL2C: {
        double a = w[in->a], b = w[in->b], cm = in->op == TI_MUL ? 1.0 : c;
        LANES(cm * (V(Ta) * b + a * V(Tb)));
        return in->op == TI_MUL ? a * b : a * b * c;
    }
    case TI_MULC:
        LANES(c * V(Ta));
        return w[in->a] * c;
    case TI_STEP: return step(t->ext + in->a, w, T, Td, p, sd);
    case TI_POW:
    case TI_ATAN2:
    case TI_MIN:
    case TI_MAX:
    case TI_DATA:
        v = binary(t, in, w[in->a], w[in->b], &da, &db);
        lin2(Td, Ta, da, Tb, db, p, mask_of(sd, in->a), mask_of(sd, in->b), sd);
        return v;
    default: {
        double a = w[in->a];
        v = value1(in->op, a, c);
        lin1(Td, Ta, deriv1(in->op, a, v, c), p, mask_of(sd, in->a), sd);
        return v;
    }
    }
#undef Ta
#undef Tb
}

/* A user instruction's value and tangents (tape_user.c; out of fwd1, whose code stays that of the
 * tapes without them). */
static __attribute__((noinline)) double fwd_user(const mblx_tape *t, const tins *in, size_t p, const fwd_seed *sd,
                                                 const double *w, double *T)
{
    double v = mblx__tape_user(t, in, w, sd->ucache, p != 0, NULL, 0);
    if (p) mblx__tape_user_tangents(t, in, sd->ucache, T, T + (size_t)in->dst * p, p);
    return v;
}

/* A large tape's tangents are cache misses at random registers (the N = 10^4 four-bar's: the
 * loads of the operands' tangents and the stores of the results took most of the sweeps' perf
 * samples): from SWEEP_PF_MIN instructions on, the registers of the instruction 8 places on in a
 * run of binary operations are fetched ahead (sweep_avx: 371 -> 346 samples, mean of five runs).
 * A hint, no effect on values; below, not compiled in (pf a constant 0). */
enum { SWEEP_PF_MIN = 1 << 19 };
#define PF_AHEAD(in)                                                                              \
    do {                                                                                          \
        MBLX__PREFETCH(T + (size_t)(in)[8].a * p, 0);                                             \
        MBLX__PREFETCH(T + (size_t)(in)[8].b * p, 0);                                             \
        MBLX__PREFETCH(T + (size_t)(in)[8].dst * p, 1);                                           \
    } while (0)

/* The binary operations of sweep_body's runs: instruction in's tangents into T, its value into w,
 * returned. */
static inline __attribute__((always_inline)) double run_add(const tins *in, double *w, double *T, size_t p,
                                                              const double *cst)
{
    (void)cst;
    const double *Ta = T + (size_t)in->a * p, *Tb = T + (size_t)in->b * p;
    double *Td = T + (size_t)in->dst * p, v = w[in->a] + w[in->b];
    LANES(V(Ta) + V(Tb));
    return w[in->dst] = v;
}

static inline __attribute__((always_inline)) double run_mul(const tins *in, double *w, double *T, size_t p,
                                                              const double *cst)
{
    (void)cst;
    const double *Ta = T + (size_t)in->a * p, *Tb = T + (size_t)in->b * p;
    double *Td = T + (size_t)in->dst * p, a = w[in->a], b = w[in->b];
    LANES(V(Ta) * b + a * V(Tb));
    return w[in->dst] = a * b;
}

static inline __attribute__((always_inline)) double run_mul2c(const tins *in, double *w, double *T, size_t p,
                                                                const double *cst)
{
    const double *Ta = T + (size_t)in->a * p, *Tb = T + (size_t)in->b * p;
    double *Td = T + (size_t)in->dst * p, a = w[in->a], b = w[in->b], c = cst[in->ci], v = a * b * c;
    double ca = c * a, cb = c * b; /* c (Ta b + a Tb) to rounding */
    LANES(V(Ta) * cb + ca * V(Tb));
    return w[in->dst] = v;
}

/* A run of binary operations fn from in to e, its values' not_finite summed into bad: the
 * instructions 8 places before its end with PF_AHEAD (when pf), the rest without (no test of the
 * end at every instruction: 3 instructions fewer). */
#define BINARY_RUN(fn)                                                                            \
    do {                                                                                          \
        const tins *e8_ = pf && e - in > 8 ? e - 8 : in;                                          \
        for (; in < e8_; in++) {                                                                  \
            PF_AHEAD(in);                                                                         \
            bad += not_finite(fn(in, w, T, p, cst));                                              \
        }                                                                                         \
        for (; in < e; in++) bad += not_finite(fn(in, w, T, p, cst));                             \
    } while (0)

/* Values into w and tangents into T (p per register), in the tape's order, by its runs of one
 * opcode (tape_eval.c): the commonest ones with the switch outside the loop. Returns 0; 1 when a
 * value is not finite; 2 when a derivative of an output is not (find: *where the first
 * instruction whose derivatives are not, checked at every instruction, one at a time). */
static inline __attribute__((always_inline)) int sweep_body(const mblx_tape *t, const double *x, size_t p,
                                                            const fwd_seed *sd, double *w, double *T, int find,
                                                            size_t *where, const int pf)
{
    double bad = 0.0; /* NaN when a value is not finite (not_finite) */
    const double *cst = t->cst;
    for (size_t r = 0; r < t->nrun && find; r++) {
        if (t->run_op[r] == MBLX__RUN_GAP) continue; /* a view's instructions left out */
        for (size_t i = t->run_start[r]; i < t->run_start[r + 1]; i++) {
            const tins *in = &t->ins[i];
            double v = in->op == TI_USER ? fwd_user(t, in, p, sd, w, T) : fwd1(t, in, x, p, sd, w, T);
            if (sd->mask) mask_update(t, in, sd);
            w[in->dst] = v;
            bad += not_finite(v);
            if (!tangents_finite(T + (size_t)in->dst * p, p)) {
                *where = i;
                return 2;
            }
        }
    }
    for (size_t r = 0; r < t->nrun && !find; r++) {
        const tins *in = t->ins + t->run_start[r], *e = t->ins + t->run_start[r + 1];
        switch (t->run_op[r]) {
        case TI_LDS: /* (the symbols: a run each of the tape's first windows, without fwd1's switch) */
            for (; in < e; in++) {
                double v = x[in->a];
                seed_symbol(T + (size_t)in->dst * p, in->a, p, sd);
                w[in->dst] = v;
                bad += not_finite(v);
            }
            break;
        case TI_ADD: BINARY_RUN(run_add); break;
        case TI_MUL: BINARY_RUN(run_mul); break;
        case TI_MUL2C: BINARY_RUN(run_mul2c); break;
        case TI_SQR:
            for (; in < e; in++) {
                const double *Ta = T + (size_t)in->a * p;
                double *Td = T + (size_t)in->dst * p, a = w[in->a], d = 2.0 * a, v = a * a;
                LANES(d * V(Ta));
                w[in->dst] = v;
                bad += not_finite(v);
            }
            break;
        case TI_ADDC:
            for (; in < e; in++) {
                const double *Ta = T + (size_t)in->a * p;
                double *Td = T + (size_t)in->dst * p, v = w[in->a] + cst[in->ci];
                if (Td != Ta) memcpy(Td, Ta, p * sizeof *Td);
                w[in->dst] = v;
                bad += not_finite(v);
            }
            break;
        case TI_MULC:
            for (; in < e; in++) {
                const double *Ta = T + (size_t)in->a * p;
                double *Td = T + (size_t)in->dst * p, c = cst[in->ci], v = w[in->a] * c;
                LANES(c * V(Ta));
                w[in->dst] = v;
                bad += not_finite(v);
            }
            break;
        case MBLX__RUN_GAP: break; /* a view's instructions left out */
        case TI_USER:
            for (; in < e; in++) {
                double v = fwd_user(t, in, p, sd, w, T);
                w[in->dst] = v;
                bad += not_finite(v);
            }
            break;
        default:
            for (; in < e; in++) {
                double v = fwd1(t, in, x, p, sd, w, T);
                w[in->dst] = v;
                bad += not_finite(v);
            }
            break;
        }
    }
    if (bad != bad) return 1;
    for (size_t o = 0; o < t->nout; o++) bad += tangents_bad(T + (size_t)t->outreg[o] * p, p); /* (the values are) */
    if (bad != bad) return 2;
    return 0;
}

/* sweep_body with the commonest lane counts as constants, so that its lane loops unroll whole
 * (the N = 10^4 four-bar's sweep: 11.9 -> 11.2 ms). */
#define SWEEP_BY_LANES(pf)                                                                        \
    switch (p) {                                                                                  \
    case 4: return sweep_body(t, x, 4, sd, w, T, find, where, pf);                                \
    case 8: return sweep_body(t, x, 8, sd, w, T, find, where, pf);                                \
    case 12: return sweep_body(t, x, 12, sd, w, T, find, where, pf);                              \
    case 16: return sweep_body(t, x, 16, sd, w, T, find, where, pf);                              \
    case 24: return sweep_body(t, x, 24, sd, w, T, find, where, pf);                              \
    case 32: return sweep_body(t, x, 32, sd, w, T, find, where, pf);                              \
    default: return sweep_body(t, x, p, sd, w, T, find, where, pf);                               \
    }

static int sweep_base(const mblx_tape *t, const double *x, size_t p, const fwd_seed *sd, double *w, double *T,
                      int find, size_t *where)
{
    SWEEP_BY_LANES(0)
}

/* On x86-64 CPUs with AVX, the same sweep with four lanes a vector instruction (the baseline's
 * SSE2 takes two): the N = 1000 four-bar's eight sweeps 42.0 -> 30.8 M instructions, the nonlinear
 * bicycle's two 0.43 -> 0.27 M. AVX without FMA: every
 * lane is the same multiplications and additions, rounded the same (no contraction into fused
 * multiply-adds, which would change the last bits): the same values. */
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define SWEEP_AVX 1
__attribute__((target("avx"))) static int sweep_avx(const mblx_tape *t, const double *x, size_t p, const fwd_seed *sd,
                                                    double *w, double *T, int find, size_t *where)
{
    if (t->nins >= SWEEP_PF_MIN && !find) SWEEP_BY_LANES(1)
    SWEEP_BY_LANES(0)
}
#endif
#undef SWEEP_BY_LANES

static int force_baseline;

void mblx__fwd_force_baseline(int on)
{
    force_baseline = on != 0;
}

static int sweep(const mblx_tape *t, const double *x, size_t p, const fwd_seed *sd, double *w, double *T, int find,
                 size_t *where)
{
#ifdef SWEEP_AVX
    if (!force_baseline && __builtin_cpu_supports("avx")) return sweep_avx(t, x, p, sd, w, T, find, where);
#endif
    return sweep_base(t, x, p, sd, w, T, find, where);
}

/* A sweep, its failure named: the value's message of mblx_tape_eval, or the first instruction
 * whose derivative is not finite. */
static int sweep_checked(const mblx_tape *t, const double *x, size_t np, fwd_seed *sd, double *w, double *T,
                         mbl_status *st)
{
    size_t where = 0, p = padded(np);
    int guard = 0;
    sd->np = np, sd->guarded = &guard, sd->mask = NULL;
    int r = sweep(t, x, p, sd, w, T, 0, &where);
    if (r == 0 && !guard) return 0;
    if (r == 1) return mblx__tape_diagnose(t, x, w, st);
    /* a derivative not finite (r == 2) or a guard that fired: one instruction at a time with the
     * lanes each register depends on, which also finds the first derivative that is not finite */
    sd->mask = mbl_alloc_array(t->nreg ? t->nreg : 1, sizeof *sd->mask);
    if (!sd->mask) return mbl_error(st, MBL_ENOMEM, "out of memory");
    r = sweep(t, x, p, sd, w, T, 1, &where);
    mbl_free(sd->mask);
    sd->mask = NULL;
    if (r == 0) return 0;
    if (r != 2) return mbl_error(st, MBL_EDOMAIN, "derivative not finite");
    return mblx__tape_report_ins(t, where, "derivative not finite", st);
}

size_t mblx_tape_fwd_work_size(const mblx_tape *t, size_t p)
{
    if (!t) return 0;
    return (t->nreg ? t->nreg : 1) * (padded(p) + 1) + t->ucache;
}

/* The routines' caches in a forward work array of p directions (after the tangents), marked empty. */
static double *fwd_ucache(const mblx_tape *t, double *work, size_t p)
{
    double *c = work + (t->nreg ? t->nreg : 1) * (padded(p) + 1);
    if (t->nuins) mblx__tape_user_reset(t, c);
    return c;
}

int mblx_tape_fwd(const mblx_tape *t, const double *symvals, size_t p, const double *seed, double *out,
                  double *dout, double *work, mbl_status *st)
{
    if (!t || (t->nreg && !work) || (t->nsymreq && !symvals) || (p && t->nsymreq && !seed) ||
        (p && t->nout && !dout))
        return mbl_error(st, MBL_EARG, "mblx_tape_fwd: NULL argument");
    size_t nreg = t->nreg ? t->nreg : 1;
    double *w = work, *T = work + nreg;
    fwd_seed sd = {seed, NULL, 0, 0, p, NULL, NULL, fwd_ucache(t, work, p)};
    if (!p) sd.dense = NULL; /* no tangent is read or written */
    int rc = sweep_checked(t, symvals, p, &sd, w, T, st);
    if (rc) return rc;
    for (size_t o = 0; o < t->nout; o++) {
        if (out) out[o] = w[t->outreg[o]];
        if (p) memcpy(dout + o * p, T + (size_t)t->outreg[o] * padded(p), p * sizeof *dout);
    }
    mbl_status_clear(st);
    return 0;
}

/* ---- Jacobians: values (their pattern and coloring: fwdjac.c) ------------------------------ */

static size_t chunk(const mblx_fwdjac *J);

/* J->src for tape t (left NULL when out of memory: evaluated by column then). */
static void fwdjac_sources(mblx_fwdjac *J, const mblx_tape *t)
{
    mbl_free(J->src);
    J->src = NULL, J->src_tape = NULL;
    size_t pp = padded(chunk(J));
    if (chunk(J) != J->ncolors || t->nout != J->m || !J->nnz || (t->nreg ? t->nreg : 1) > UINT32_MAX / pp) return;
    if (!(J->src = mbl_alloc_array(J->nnz, sizeof *J->src))) return;
    for (size_t j = 0; j < J->n; j++)
        for (int e = J->colptr[j]; e < J->colptr[j + 1]; e++)
            J->src[e] = t->outreg[J->rowidx[e]] * (uint32_t)pp + (uint32_t)J->color[j];
    J->src_tape = t;
}

void mblx_tape_set_fwdjac(mblx_tape *t, mblx_fwdjac *J)
{
    if (!t) {
        mblx__fwdjac_free(J);
        return;
    }
    if (t->fwdjac != J) mblx__fwdjac_free(t->fwdjac);
    t->fwdjac = J;
    if (J) fwdjac_sources(J, t);
}

const mblx_fwdjac *mblx_tape_fwdjac(const mblx_tape *t) { return t ? t->fwdjac : NULL; }

/* Up to this many colors, one sweep of them all (the values computed once, and the loop over the
 * instructions made once: the nonlinear bicycle's 24 colors in one sweep, not 16 + 8, took its two
 * Jacobian evaluations from 0.54 to 0.44 M instructions; its tangents, 24 x 391 registers, 75 kB);
 * more, MBLX_FWD_CHUNK a sweep. Each lane is computed alone: the values are the same bits. */
enum { FWD_ONE_SWEEP = 32 };

/* Directions per sweep. */
static size_t chunk(const mblx_fwdjac *J)
{
    size_t p = J->ncolors <= FWD_ONE_SWEEP ? J->ncolors : MBLX_FWD_CHUNK;
    return p ? p : 1;
}

size_t mblx_fwdjac_work_size(const mblx_fwdjac *J, const mblx_tape *t)
{
    return J && t ? mblx_tape_fwd_work_size(t, chunk(J)) : 0;
}

/* mblx_fwdjac_eval; outpos not NULL: t computes some rows alone (a view, tape_subset.h), row r as
 * its output outpos[r] (-1: not computed, its entries left as they are). */
static int fwdjac_eval(const mblx_fwdjac *J, const mblx_tape *t, const int *outpos, const double *symvals,
                       double *vals, double *out, double *work, mbl_status *st)
{
    if (!J || !t || (J->nnz && !vals) || !work || (t->nsymreq && !symvals))
        return mbl_error(st, MBL_EARG, "mblx_fwdjac_eval: NULL argument");
    if (!outpos && t->nout != J->m)
        return mbl_error(st, MBL_EARG, "mblx_fwdjac_eval: the tape has %zu outputs, the Jacobian %zu rows", t->nout,
                         J->m);
    size_t P = chunk(J), nreg = t->nreg ? t->nreg : 1;
    double *w = work, *T = work + nreg, *uc = fwd_ucache(t, work, P);
    size_t c0 = 0;
    do { /* at least one sweep: the values */
        size_t p = J->ncolors - c0 < P ? J->ncolors - c0 : P;
        fwd_seed sd = {NULL, J->symcolor, J->nsym, (int)c0, p, NULL, NULL, uc};
        int rc = sweep_checked(t, symvals, p, &sd, w, T, st);
        if (rc) return rc;
        if (c0 == 0 && out)
            for (size_t o = 0; o < t->nout; o++) out[o] = w[t->outreg[o]];
        /* the columns in their order, not by color: vals is written in order, and the next
         * columns read mostly the same rows' tangents, still in cache (by color, every color
         * read all the rows again: the N = 10^4 four-bar's 12 colors, 80,000 rows) */
        size_t pp = padded(p);
        if (J->src && J->src_tape == t && !outpos) { /* one sweep of every color (fwdjac_sources) */
            const uint32_t *src = J->src;
            for (size_t e = 0; e < J->nnz; e++) vals[e] = T[src[e]];
            break;
        }
        for (size_t j = 0; j < J->n; j++) {
            size_t k = (size_t)J->color[j] - c0; /* wraps for a color before c0 */
            if (k >= p) continue;
            for (int e = J->colptr[j]; e < J->colptr[j + 1]; e++) {
                int o = outpos ? outpos[J->rowidx[e]] : J->rowidx[e];
                if (o >= 0) vals[e] = T[(size_t)t->outreg[o] * pp + k];
            }
        }
        c0 += p;
    } while (c0 < J->ncolors);
    mbl_status_clear(st);
    return 0;
}

int mblx_fwdjac_eval(const mblx_fwdjac *J, const mblx_tape *t, const double *symvals, double *vals, double *out,
                     double *work, mbl_status *st)
{
    return fwdjac_eval(J, t, NULL, symvals, vals, out, work, st);
}

/* s->jent, s->jsrc: the entries of J in s's rows and their tangents in one sweep of every color, as
 * J->src (fwdjac_sources) for the whole tape; left NULL (extracted by column) when more than one
 * sweep or out of memory. */
static void rows_sources(const mblx_fwdjac *J, mblx__subtape *s, const int *outpos)
{
    const mblx_tape *v = s->view;
    size_t pp = padded(chunk(J)), n = 0;
    s->jac_of = J;
    if (chunk(J) != J->ncolors || (v->nreg ? v->nreg : 1) > UINT32_MAX / pp) return;
    for (size_t e = 0; e < J->nnz; e++) n += outpos[J->rowidx[e]] >= 0;
    s->jent = mbl_alloc_array(n ? n : 1, sizeof *s->jent), s->jsrc = mbl_alloc_array(n ? n : 1, sizeof *s->jsrc);
    if (!s->jent || !s->jsrc) {
        mbl_free(s->jent), mbl_free(s->jsrc);
        s->jent = s->jsrc = NULL;
        return;
    }
    s->njac = 0;
    for (size_t j = 0; j < J->n; j++)
        for (int e = J->colptr[j]; e < J->colptr[j + 1]; e++) {
            int o = outpos[J->rowidx[e]];
            if (o < 0) continue;
            s->jent[s->njac] = (uint32_t)e;
            s->jsrc[s->njac++] = v->outreg[o] * (uint32_t)pp + (uint32_t)J->color[j];
        }
}

int mblx__fwdjac_eval_rows(const mblx_fwdjac *J, mblx__subtape *s, const int *outpos, const double *symvals,
                           double *vals, double *work, mbl_status *st)
{
    if (!J || !s || !outpos || !work) return mbl_error(st, MBL_EARG, "mblx__fwdjac_eval_rows: NULL argument");
    if (s->jac_of != J) {
        mbl_free(s->jent), mbl_free(s->jsrc);
        s->jent = s->jsrc = NULL, s->njac = 0;
        rows_sources(J, s, outpos);
    }
    if (!s->jsrc) return fwdjac_eval(J, s->view, outpos, symvals, vals, NULL, work, st);
    const mblx_tape *t = s->view;
    size_t nreg = t->nreg ? t->nreg : 1;
    double *w = work, *T = work + nreg;
    fwd_seed sd = {NULL, J->symcolor, J->nsym, 0, J->ncolors, NULL, NULL, fwd_ucache(t, work, chunk(J))};
    int rc = sweep_checked(t, symvals, J->ncolors, &sd, w, T, st);
    if (rc) return rc;
    const uint32_t *ent = s->jent, *src = s->jsrc;
    for (size_t k = 0; k < s->njac; k++) vals[ent[k]] = T[src[k]];
    mbl_status_clear(st);
    return 0;
}
