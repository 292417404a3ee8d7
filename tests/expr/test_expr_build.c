/* Expression graph construction: hash-consing, canonical order, identities and constant
 * folding, dependence sets, symbols, sticky errors. */
#include <string.h>

#include "mblin/expr.h"
#include "test.h"

static mblx_graph *G;
static mblx_id X, Y, Z;

static void setup(void)
{
    mblx_graph_free(G);
    G = mblx_graph_new();
    X = mblx_symbol(G, "x");
    Y = mblx_symbol(G, "y");
    Z = mblx_symbol(G, "z");
}

static mblx_id C(double v) { return mblx_const(G, v); }

static int is_c(mblx_id e, double v)
{
    double w;
    return mblx_is_const(G, e, &w) && w == v;
}

TEST(symbols)
{
    setup();
    CHECK_EQ_INT(mblx_symbol_count(G), 3);
    CHECK_EQ_INT(mblx_symbol_index(G, X), 0);
    CHECK_EQ_INT(mblx_symbol_index(G, Y), 1);
    CHECK_EQ_INT(mblx_symbol_index(G, Z), 2);
    CHECK_EQ_INT(mblx_symbol_index(G, C(2.0)), -1);
    CHECK(mblx_symbol(G, "x") == X);
    CHECK(mblx_symbol_n(G, "yy", 1) == Y);
    CHECK(mblx_symbol_find(G, "z") == Z);
    CHECK(mblx_symbol_find(G, "w") == MBLX_NONE);
    CHECK(mblx_symbol_find_n(G, "zq", 1) == Z);
    CHECK(strcmp(mblx_symbol_name(G, Y), "y") == 0);
    CHECK(mblx_symbol_name(G, C(1)) == NULL);
    CHECK(mblx_symbol_node(G, 2) == Z);
    CHECK(mblx_symbol_node(G, 3) == MBLX_NONE);
    CHECK_EQ_INT(mblx_node_op(G, X), MBLX_OP_SYMBOL);
    /* many symbols: the name table grows */
    char nm[32];
    for (int i = 0; i < 5000; i++) {
        snprintf(nm, sizeof nm, "q%d", i);
        mblx_id s = mblx_symbol(G, nm);
        CHECK_EQ_INT(mblx_symbol_index(G, s), 3 + i);
    }
    for (int i = 0; i < 5000; i += 97) {
        snprintf(nm, sizeof nm, "q%d", i);
        CHECK_EQ_INT(mblx_symbol_index(G, mblx_symbol_find(G, nm)), 3 + i);
    }
    CHECK_EQ_INT(mblx_graph_status(G, NULL), 0);
}

/* Names of every length to 40 (the table hashes them eight bytes at a time, the last eight
 * overlapping): a NUL byte at any place is refused, and names that differ in one byte at any
 * place are different symbols, each found again by its name. */
TEST(symbol_names_every_length)
{
    setup();
    char nm[48];
    size_t made = 0;
    for (size_t len = 1; len <= 40; len++) {
        for (size_t at = 0; at < len; at++) {
            memset(nm, 'a', len);
            nm[at] = '\0';
            CHECK_MSG(mblx_symbol_n(G, nm, len) == MBLX_NONE, "len %zu, NUL at %zu", len, at);
            mbl_status st;
            CHECK_EQ_INT(mblx_graph_status(G, &st), MBL_EARG);
            CHECK(strstr(st.msg, "NUL") != NULL);
            mblx_graph_clear_status(G);
            nm[at] = 'b';
            mblx_id s = mblx_symbol_n(G, nm, len);
            CHECK_EQ_INT(mblx_symbol_index(G, s), 3 + (long)made);
            made++;
        }
    }
    CHECK_EQ_INT(mblx_symbol_count(G), 3 + made);
    made = 0;
    for (size_t len = 1; len <= 40; len++) {
        for (size_t at = 0; at < len; at++) {
            memset(nm, 'a', len);
            nm[at] = 'b';
            nm[len] = '\0';
            CHECK_EQ_INT(mblx_symbol_index(G, mblx_symbol_find(G, nm)), 3 + (long)made);
            CHECK(strcmp(mblx_symbol_name(G, mblx_symbol_find(G, nm)), nm) == 0);
            made++;
        }
        memset(nm, 'a', len); /* all 'a': never made */
        CHECK(mblx_symbol_find_n(G, nm, len) == MBLX_NONE);
    }
    CHECK_EQ_INT(mblx_graph_status(G, NULL), 0);
}

TEST(hash_consing)
{
    setup();
    mblx_id a = mblx_add(G, mblx_sin(G, X), mblx_mul(G, Y, Z));
    size_t n = mblx_node_count(G);
    mblx_id b = mblx_add(G, mblx_mul(G, Z, Y), mblx_sin(G, X));
    CHECK(a == b);
    CHECK_EQ_INT(mblx_node_count(G), n); /* nothing new */
    CHECK(mblx_const(G, 2.5) == mblx_const(G, 2.5));
    CHECK(mblx_const(G, -0.0) == mblx_const(G, 0.0));
    CHECK(mblx_mul(G, X, Y) == mblx_mul(G, Y, X));
    CHECK(mblx_min(G, X, Y) == mblx_min(G, Y, X));
    CHECK(mblx_max(G, X, Y) == mblx_max(G, Y, X));
    CHECK(mblx_atan2(G, X, Y) != mblx_atan2(G, Y, X));
    /* associativity + flattening: (x+y)+z == x+(y+z) == z+(y+x) */
    mblx_id s1 = mblx_add(G, mblx_add(G, X, Y), Z);
    mblx_id s2 = mblx_add(G, X, mblx_add(G, Y, Z));
    mblx_id s3 = mblx_add(G, Z, mblx_add(G, Y, X));
    CHECK(s1 == s2 && s2 == s3);
    CHECK_EQ_INT(mblx_node_op(G, s1), MBLX_OP_ADD);
    CHECK_EQ_INT(mblx_node_nargs(G, s1), 3);
    mblx_id p1 = mblx_mul(G, mblx_mul(G, X, Y), Z), p2 = mblx_mul(G, Z, mblx_mul(G, Y, X));
    CHECK(p1 == p2);
    CHECK_EQ_INT(mblx_node_nargs(G, p1), 3);
    /* operands have smaller handles */
    for (int i = 0; i < mblx_node_nargs(G, a); i++) CHECK(mblx_node_arg(G, a, i) < a);
    CHECK(mblx_node_arg(G, a, 5) == MBLX_NONE);
}

TEST(identities)
{
    setup();
    mblx_id zero = C(0), one = C(1);
    CHECK(mblx_add(G, X, zero) == X);
    CHECK(mblx_add(G, zero, X) == X);
    CHECK(mblx_mul(G, X, one) == X);
    CHECK(mblx_mul(G, X, zero) == zero);
    CHECK(mblx_sub(G, X, X) == zero);
    mblx_id s = mblx_add(G, mblx_sin(G, X), Y);
    CHECK(mblx_sub(G, s, s) == zero);
    CHECK(mblx_sub(G, mblx_add(G, s, Z), s) == Z); /* (sin x + y + z) - (sin x + y) */
    CHECK(mblx_div(G, X, X) == one);
    CHECK(mblx_div(G, s, s) == one);
    CHECK(mblx_div(G, zero, X) == zero);
    CHECK(mblx_neg(G, mblx_neg(G, X)) == X);
    CHECK(mblx_neg(G, mblx_neg(G, s)) == s);
    CHECK(mblx_pow(G, X, zero) == one);
    CHECK(mblx_pow(G, X, one) == X);
    CHECK(mblx_pow(G, one, X) == one);
    CHECK(mblx_pow(G, zero, C(3)) == zero);
    CHECK(mblx_powc(G, mblx_powc(G, X, 2), 3) == mblx_powc(G, X, 6));
    CHECK(mblx_powc(G, mblx_powc(G, X, 0.5), 2) == X);
    CHECK(mblx_powc(G, mblx_powc(G, X, 2), 0.5) != X); /* sqrt(x^2) = |x|: not folded */
    CHECK(mblx_powc(G, mblx_sqrt(G, X), 2) == X);
    CHECK(mblx_powc(G, mblx_sqrt(G, X), 4) == mblx_powc(G, X, 2));
    CHECK(mblx_mul(G, X, X) == mblx_powc(G, X, 2));
    CHECK(mblx_div(G, mblx_powc(G, X, 3), X) == mblx_powc(G, X, 2));
    CHECK(mblx_mul(G, mblx_powc(G, X, 0.5), mblx_powc(G, X, 0.5)) == X);
    /* x + x = 2x, 2x - x = x, x + 2x - 3x = 0 */
    mblx_id two_x = mblx_add(G, X, X);
    CHECK(two_x == mblx_scale(G, 2, X));
    CHECK(mblx_sub(G, two_x, X) == X);
    mblx_id t3[3] = {X, two_x, mblx_scale(G, -3, X)};
    CHECK(mblx_sum(G, 3, t3) == zero);
    /* constants are collected */
    CHECK(mblx_mul(G, mblx_mul(G, C(2), X), C(3)) == mblx_scale(G, 6, X));
    CHECK(mblx_add(G, mblx_add(G, C(2), X), C(3)) == mblx_add(G, X, C(5)));
    CHECK_EQ_INT(mblx_node_op(G, mblx_scale(G, 6, X)), MBLX_OP_MUL);
    CHECK(mblx_node_value(G, mblx_scale(G, 6, X)) == 6.0);
    CHECK(mblx_node_value(G, mblx_add(G, X, C(5))) == 5.0);
    /* c*(a+b) - c*a = c*b (distribution inside sums) */
    mblx_id ab = mblx_add(G, X, Y);
    CHECK(mblx_sub(G, mblx_scale(G, 3, ab), mblx_scale(G, 3, X)) == mblx_scale(G, 3, Y));
    CHECK(mblx_sub(G, ab, mblx_neg(G, mblx_neg(G, ab))) == zero);
    /* (2x)^2 = 4 x^2, (x y)^-1 = x^-1 y^-1 */
    CHECK(mblx_powc(G, mblx_scale(G, 2, X), 2) == mblx_scale(G, 4, mblx_powc(G, X, 2)));
    CHECK(mblx_powc(G, mblx_mul(G, X, Y), -1) ==
          mblx_mul(G, mblx_powc(G, X, -1), mblx_powc(G, Y, -1)));
    CHECK(mblx_div(G, mblx_mul(G, X, Y), mblx_mul(G, Y, X)) == one);
    /* constant folding */
    CHECK(is_c(mblx_add(G, C(2), C(3)), 5));
    CHECK(is_c(mblx_mul(G, C(2), C(3)), 6));
    CHECK(is_c(mblx_div(G, C(1), C(4)), 0.25));
    CHECK(is_c(mblx_pow(G, C(2), C(10)), 1024));
    CHECK(is_c(mblx_sin(G, C(0)), 0));
    CHECK(is_c(mblx_cos(G, C(0)), 1));
    CHECK(is_c(mblx_exp(G, C(0)), 1));
    CHECK(is_c(mblx_sqrt(G, C(9)), 3));
    CHECK(is_c(mblx_abs(G, C(-2)), 2));
    CHECK(is_c(mblx_sign(G, C(-2)), -1));
    CHECK(is_c(mblx_min(G, C(2), C(3)), 2));
    CHECK(is_c(mblx_max(G, C(2), C(3)), 3));
    CHECK(is_c(mblx_atan2(G, C(0), C(1)), 0));
    CHECK(is_c(mblx_step(G, C(-1), C(0), C(1), C(1), C(2)), 1));
    CHECK(is_c(mblx_step(G, C(0.5), C(0), C(1), C(1), C(2)), 1.5));
    CHECK(mblx_step(G, C(5), C(0), X, C(1), Y) == Y); /* beyond x1: h1 whatever it is */
    CHECK(mblx_step(G, X, C(0), Y, C(1), Y) == Y);
    /* folds that would not be finite are kept */
    mblx_id bad = mblx_sqrt(G, C(-1));
    CHECK_EQ_INT(mblx_node_op(G, bad), MBLX_OP_SQRT);
    CHECK_EQ_INT(mblx_node_op(G, mblx_log(G, C(0))), MBLX_OP_LOG);
    CHECK_EQ_INT(mblx_node_op(G, mblx_div(G, C(1), C(0))), MBLX_OP_POW);
    /* an undefined constant part makes the whole expression undefined: no identity removes it */
    mblx_id recip0 = mblx_div(G, C(1), C(0));
    CHECK(mblx_mul(G, mblx_div(G, X, C(0)), zero) != zero);
    CHECK(mblx_div(G, zero, zero) == recip0);
    CHECK(mblx_sub(G, recip0, recip0) == recip0);
    CHECK(mblx_mul(G, zero, recip0) == recip0);
    CHECK(mblx_powc(G, recip0, 0) == recip0);
    CHECK(mblx_add(G, X, recip0) == recip0);
    CHECK(mblx_sub(G, mblx_log(G, zero), mblx_log(G, zero)) == mblx_log(G, zero));
    CHECK(mblx_mul(G, mblx_sqrt(G, C(-1)), zero) == mblx_sqrt(G, C(-1)));
    CHECK(mblx_step(G, X, recip0, Y, C(1), Y) == recip0);
    /* function identities */
    CHECK(mblx_log(G, mblx_exp(G, X)) == X);
    CHECK(mblx_abs(G, mblx_abs(G, X)) == mblx_abs(G, X));
    CHECK(mblx_sign(G, mblx_sign(G, X)) == mblx_sign(G, X));
    CHECK(mblx_min(G, X, X) == X);
    CHECK(mblx_max(G, X, X) == X);
    CHECK_EQ_INT(mblx_graph_status(G, NULL), 0);
}

TEST(apply_generic)
{
    setup();
    mblx_id a[5] = {X, Y, Z, X, Y};
    CHECK(mblx_apply(G, MBLX_OP_ADD, 2.0, 2, a) == mblx_add(G, mblx_add(G, X, Y), C(2)));
    CHECK(mblx_apply(G, MBLX_OP_MUL, 3.0, 2, a) == mblx_scale(G, 3, mblx_mul(G, X, Y)));
    CHECK(mblx_apply(G, MBLX_OP_SIN, 0, 1, a) == mblx_sin(G, X));
    CHECK(mblx_apply(G, MBLX_OP_ATAN2, 0, 2, a) == mblx_atan2(G, X, Y));
    CHECK(mblx_apply(G, MBLX_OP_STEP, 0, 5, a) == mblx_step(G, X, Y, Z, X, Y));
    CHECK(mblx_apply(G, MBLX_OP_CONST, 4.0, 0, NULL) == C(4));
    CHECK(strcmp(mblx_op_name(MBLX_OP_ATAN2), "atan2") == 0);
    /* arity error is sticky */
    CHECK(mblx_apply(G, MBLX_OP_SIN, 0, 2, a) == MBLX_NONE);
    mbl_status st;
    CHECK_EQ_INT(mblx_graph_status(G, &st), MBL_EARG);
    CHECK(strstr(st.msg, "sin") != NULL);
    mblx_graph_clear_status(G);
    CHECK_EQ_INT(mblx_graph_status(G, NULL), 0);
}

TEST(none_propagates)
{
    setup();
    mblx_id n = mblx_const(G, NAN);
    CHECK(n == MBLX_NONE);
    CHECK_EQ_INT(mblx_graph_status(G, NULL), MBL_EARG);
    CHECK(mblx_add(G, n, X) == MBLX_NONE);
    CHECK(mblx_sin(G, n) == MBLX_NONE);
    CHECK(mblx_pow(G, X, n) == MBLX_NONE);
    mblx_id t[2] = {X, n};
    CHECK(mblx_sum(G, 2, t) == MBLX_NONE);
    CHECK(mblx_product(G, 2, t) == MBLX_NONE);
    CHECK(mblx_diff(G, n, X) == MBLX_NONE);
    CHECK(mblx_diff(G, X, n) == MBLX_NONE);
    CHECK(mblx_step(G, X, X, X, X, n) == MBLX_NONE);
    CHECK(mblx_symbol(G, "") == MBLX_NONE);
    /* the first error is kept */
    mbl_status st;
    mblx_graph_status(G, &st);
    CHECK(strstr(st.msg, "non-finite constant") != NULL);
    CHECK(mblx_diff(G, X, Y) == C(0)); /* still usable */
    CHECK(mblx_diff(G, X, mblx_sin(G, X)) == MBLX_NONE); /* not a symbol */
    mblx_graph_free(NULL);
}

TEST(dependence_sets)
{
    setup();
    mblx_id e = mblx_add(G, mblx_mul(G, X, mblx_sin(G, Y)), C(2));
    size_t n;
    const uint32_t *d = mblx_node_deps(G, e, &n);
    CHECK_EQ_INT(n, 2);
    CHECK(d[0] == 0 && d[1] == 1);
    CHECK(mblx_depends(G, e, X));
    CHECK(mblx_depends(G, e, Y));
    CHECK(!mblx_depends(G, e, Z));
    CHECK(!mblx_depends(G, C(3), X));
    /* after simplification: x - x + y depends on y only */
    mblx_id f = mblx_add(G, mblx_sub(G, X, X), Y);
    CHECK(!mblx_depends(G, f, X));
    mblx_node_deps(G, C(1), &n);
    CHECK_EQ_INT(n, 0);
    /* big sum: deps sorted and complete */
    enum { N = 2000 };
    mblx_id *t = malloc(N * sizeof *t);
    char nm[32];
    for (int i = 0; i < N; i++) {
        snprintf(nm, sizeof nm, "v%d", N - 1 - i); /* created in reverse name order */
        mblx_id v = mblx_symbol(G, nm);
        t[i] = mblx_mul(G, v, mblx_cos(G, v));
    }
    mblx_id s = mblx_sum(G, N, t);
    d = mblx_node_deps(G, s, &n);
    CHECK_EQ_INT(n, N);
    int sorted = 1;
    for (size_t i = 1; i < n; i++) sorted &= d[i - 1] < d[i];
    CHECK(sorted);
    free(t);
}

TEST(operand_arrays)
{
    setup();
    /* mblx_node_args gives the operands mblx_node_arg gives, one by one */
    mblx_id e[4] = {mblx_add(G, mblx_mul(G, X, mblx_sin(G, Y)), C(2)), mblx_mul(G, X, mblx_mul(G, Y, Z)),
                    mblx_powc(G, X, 3.0), mblx_atan2(G, Y, X)};
    for (int i = 0; i < 4; i++) {
        size_t n = 99;
        const mblx_id *a = mblx_node_args(G, e[i], &n);
        CHECK_EQ_INT(n, mblx_node_nargs(G, e[i]));
        CHECK(a != NULL);
        for (size_t k = 0; a && k < n; k++) CHECK(a[k] == mblx_node_arg(G, e[i], (int)k));
        CHECK(mblx_node_args(G, e[i], NULL) == a); /* count may be NULL */
    }
    size_t n = 99;
    const mblx_id *xyz = mblx_node_args(G, e[1], &n); /* x*(y*z): flattened, sorted */
    CHECK_EQ_INT(n, 3);
    CHECK(xyz && xyz[0] == X && xyz[1] == Y && xyz[2] == Z);
    /* no operands: leaves; invalid handles and graph */
    n = 99;
    CHECK(mblx_node_args(G, X, &n) == NULL);
    CHECK_EQ_INT(n, 0);
    n = 99;
    CHECK(mblx_node_args(G, C(1), &n) == NULL);
    CHECK_EQ_INT(n, 0);
    n = 99;
    CHECK(mblx_node_args(G, MBLX_NONE, &n) == NULL);
    CHECK_EQ_INT(n, 0);
    n = 99;
    CHECK(mblx_node_args(G, (mblx_id)mblx_node_count(G), &n) == NULL);
    CHECK_EQ_INT(n, 0);
    n = 99;
    CHECK(mblx_node_args(NULL, X, &n) == NULL);
    CHECK_EQ_INT(n, 0);
}

TEST(long_sums_and_chains)
{
    setup();
    /* a sum of 1e5 distinct terms built n-ary, and a chain of 1e5 nested operations */
    enum { N = 100000 };
    mblx_id *t = malloc(N * sizeof *t);
    for (int i = 0; i < N; i++) t[i] = mblx_mul(G, mblx_const(G, i + 1.0), mblx_sin(G, mblx_scale(G, i + 1.0, X)));
    mblx_id s = mblx_sum(G, N, t);
    CHECK_EQ_INT(mblx_node_nargs(G, s), N);
    /* a long sum is one operand of a new sum (MBLX_FLATTEN_MAX) but like terms still merge */
    mblx_id s2 = mblx_add(G, s, s);
    CHECK(s2 == mblx_scale(G, 2, s));
    CHECK(mblx_sub(G, s2, s) == s);
    CHECK(mblx_sub(G, mblx_add(G, s, X), s) == X);
    /* the same terms passed to mblx_sum again: one flat sum with doubled coefficients */
    mblx_id *t2 = malloc(2 * N * sizeof *t2);
    memcpy(t2, t, N * sizeof *t);
    memcpy(t2 + N, t, N * sizeof *t);
    mblx_id s3 = mblx_sum(G, 2 * N, t2);
    CHECK_EQ_INT(mblx_node_nargs(G, s3), N);
    CHECK(mblx_node_arg(G, s3, 5) == mblx_scale(G, 2, t[5]));
    free(t2);
    free(t);
    mblx_id e = X;
    for (int i = 0; i < N; i++) e = mblx_sin(G, mblx_add(G, e, Y));
    CHECK(mblx_depends(G, e, X) && mblx_depends(G, e, Y) && !mblx_depends(G, e, Z));
    CHECK_EQ_INT(mblx_graph_status(G, NULL), 0);
}

int main(void)
{
    RUN(symbols);
    RUN(hash_consing);
    RUN(identities);
    RUN(apply_generic);
    RUN(none_propagates);
    RUN(dependence_sets);
    RUN(symbol_names_every_length);
    RUN(operand_arrays);
    RUN(long_sums_and_chains);
    mblx_graph_free(G);
    return test_summary("expr_build");
}
