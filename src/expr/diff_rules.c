/* The local partial derivatives of the operations (diff_memo.h): d v / d operand i of
 * a node v that is not a sum or product, used by the forward traversals and the reverse sweep of
 * diff.c. */
#include <math.h>

#include "expr/diff_memo.h"

/* d v / d operand i, for a node v that is not a sum or product. */
static mblx_id partial(mblx_graph *g, mblx_id v, const uint32_t *a, size_t i)
{
    mblx_id one = g->one, zero = g->zero;
    unsigned op = g->nd[v].op;
    switch (op) {
    case MBLX_OP_POW: {
        double ev;
        if (i == 1) return mblx_mul(g, v, mblx_log(g, a[0]));
        if (mblx_is_const(g, a[1], &ev)) return mblx_scale(g, ev, mblx_powc(g, a[0], ev - 1.0));
        return mblx_mul(g, a[1], mblx_pow(g, a[0], mblx_sub(g, a[1], one)));
    }
    case MBLX_OP_SIN: return mblx_cos(g, a[0]);
    case MBLX_OP_COS: return mblx_neg(g, mblx_sin(g, a[0]));
    case MBLX_OP_TAN: return mblx_add(g, one, mblx_powc(g, v, 2.0));
    case MBLX_OP_ASIN:
    case MBLX_OP_ACOS: {
        mblx_id r = mblx_powc(g, mblx_sqrt(g, mblx_sub(g, one, mblx_powc(g, a[0], 2.0))), -1.0);
        return op == MBLX_OP_ASIN ? r : mblx_neg(g, r);
    }
    case MBLX_OP_ATAN: return mblx_powc(g, mblx_add(g, one, mblx_powc(g, a[0], 2.0)), -1.0);
    case MBLX_OP_ATAN2: {
        mblx_id den = mblx_add(g, mblx_powc(g, a[0], 2.0), mblx_powc(g, a[1], 2.0));
        return i == 0 ? mblx_div(g, a[1], den) : mblx_neg(g, mblx_div(g, a[0], den));
    }
    case MBLX_OP_SINH: return mblx_cosh(g, a[0]);
    case MBLX_OP_COSH: return mblx_sinh(g, a[0]);
    case MBLX_OP_TANH: return mblx_sub(g, one, mblx_powc(g, v, 2.0));
    case MBLX_OP_EXP: return v;
    case MBLX_OP_LOG: return mblx_powc(g, a[0], -1.0);
    case MBLX_OP_SQRT: return mblx_scale(g, 0.5, mblx_powc(g, v, -1.0));
    case MBLX_OP_ABS: return mblx_sign(g, a[0]);
    case MBLX_OP_SIGN: return zero;
    case MBLX_OP_LET: return one;
    case MBLX_OP_DATA: return mblx__data_partial(g, v, a, i); /* the same data node, order raised */
    case MBLX_OP_USER: return mblx__user_partial(g, v, a, i); /* the same routine's partial, order raised */
    case MBLX_OP_MIN:
    case MBLX_OP_MAX: {
        /* d min(a,b)/da = (1 - sign(a-b))/2, d/db = (1 + sign(a-b))/2; max: swapped */
        mblx_id s = mblx_sign(g, mblx_sub(g, a[0], a[1]));
        int plus = (op == MBLX_OP_MAX) == (i == 0);
        return mblx_scale(g, 0.5, plus ? mblx_add(g, one, s) : mblx_sub(g, one, s));
    }
    case MBLX_OP_STEP: {
        mblx_id x = a[0], x0 = a[1], h0 = a[2], x1 = a[3], h1 = a[4];
        if (i == 2 || i == 4) {
            mblx_id u = mblx_step(g, x, x0, zero, x1, one);
            return i == 4 ? u : mblx_sub(g, one, u);
        }
        /* c = clamp((x - x0)/(x1 - x0), 0, 1); dstep/ds = 6 c (1 - c) (h1 - h0) */
        mblx_id w = mblx_sub(g, x1, x0);
        mblx_id s = mblx_div(g, mblx_sub(g, x, x0), w);
        mblx_id c = mblx_min(g, mblx_max(g, s, zero), one);
        mblx_id f[4] = {mblx_const(g, 6.0), c, mblx_sub(g, one, c), mblx_sub(g, h1, h0)};
        mblx_id D = (f[0] == XNONE || f[2] == XNONE || f[3] == XNONE) ? XNONE
                                                                      : mblx_product(g, 4, f);
        if (i == 0) return mblx_div(g, D, w);
        mblx_id w2 = mblx_powc(g, w, -2.0);
        if (i == 1) return mblx_mul(g, D, mblx_mul(g, mblx_sub(g, x, x1), w2));
        return mblx_neg(g, mblx_mul(g, D, mblx_mul(g, mblx_sub(g, x, x0), w2)));
    }
    default: return mblx__fail(g, MBL_EARG, "no derivative rule for operation %s",
                               mblx_op_name((mblx_op)op));
    }
}

/* partial(g, v, a, i) as mblx_scale(g, *c, P), P returned: where the rule ends in a constant
 * factor (c x^(c-1) of a power of a constant exponent, 0.5 / sqrt(x), -sin(x)) that factor is
 * left out of P, so that the product with the derivative of the operand makes the scaled node
 * only as part of that product (mblx__scaled_product); *c = 1 and P = partial(...) otherwise. */
mblx_id mblx__partial_parts(mblx_graph *g, mblx_id v, const uint32_t *a, size_t i, double *c)
{
    double ev;
    *c = 1.0;
    switch (g->nd[v].op) {
    case MBLX_OP_POW:
        if (i == 0 && mblx_is_const(g, a[1], &ev)) {
            *c = ev;
            return mblx_powc(g, a[0], ev - 1.0);
        }
        break;
    case MBLX_OP_SQRT: *c = 0.5; return mblx_powc(g, v, -1.0);
    case MBLX_OP_COS: *c = -1.0; return mblx_sin(g, a[0]);
    default: break;
    }
    return partial(g, v, a, i);
}
