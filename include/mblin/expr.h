/* mblin: the symbolic expression engine (prefix mblx_).
 *
 * A graph (mblx_graph) owns a hash-consed DAG of expression nodes. Nodes are addressed by
 * handles (mblx_id) that stay valid for the life of the graph; nodes are never modified or
 * removed, so a handle always denotes the same expression. Building the same expression twice
 * gives the same handle (structural sharing), and a small set of simplifications is applied
 * at construction (see "Canonical form" below), so `mblx_add(g, a, b) == mblx_add(g, b, a)` and
 * `mblx_sub(g, x, x)` is the constant 0.
 *
 * Error model. Builders (mblx_const, mblx_add, mblx_diff, ...) return MBLX_NONE on failure and
 * record a sticky error in the graph (first error wins; read it with mblx_graph_status). Every
 * builder accepts MBLX_NONE operands and then returns MBLX_NONE, so a caller can build a whole
 * model and check once at the end. Functions that return an int return 0 or a negative MBL_E*
 * code and fill an optional mbl_status. Nothing here prints or exits.
 *
 * Recursion. No function of this module recurses to a depth that depends on the expression:
 * building, differentiating, substituting, compiling, printing, parsing and freeing use explicit
 * heap stacks, so a sum of 10^6 terms or a chain of 10^6 nested operations is fine.
 *
 * Threads. A graph is not thread-safe (builders append to it; read-only queries may run
 * concurrently with each other but not with a builder). A compiled tape (mblx_tape) is
 * immutable and independent of the graph it came from: any number of threads may evaluate one
 * tape concurrently, each with its own work array.
 *
 * Canonical form (applied by every builder, including the parser and differentiation):
 *   - constants are folded when every operand is constant and the result is finite; a fold
 *     that would give inf or NaN is not performed (the node is kept and evaluation reports it);
 *   - sums are n-ary and flat: nested sums (of at most MBLX_FLATTEN_MAX terms) are merged,
 *     like terms are collected (x + 2*x = 3*x, x - x = 0), numeric constants are added into one constant term, a constant times a sum is
 *     distributed inside a sum, and terms are kept in a canonical order;
 *   - products are n-ary and flat with one numeric coefficient: nested products (of at most
 *     MBLX_FLATTEN_MAX factors) are merged,
 *     equal bases collect their exponents (x*x = x^2, x/x = 1, x^2/x = x), x*0 = 0, x*1 = x,
 *     -(-x) = x, factors are kept in a canonical order; a - b is a + (-1)*b and a / b is
 *     a * b^-1;
 *   - powers: x^0 = 1, x^1 = x, 0^c = 0 (c > 0), 1^x = 1, (x^a)^n = x^(a*n) for an integer
 *     constant n, (a*b)^n = a^n * b^n for an integer constant n, sqrt(x)^(2k) = x^k;
 *   - functions: log(exp(x)) = x, abs(abs(x)) = abs(x), sign(sign(x)) = sign(x),
 *     min(x, x) = max(x, x) = x, min/max arguments in canonical order.
 *   These identities are the usual computer-algebra ones: x/x = 1 and x^0 = 1 hold wherever the
 *   original is defined. A part made of constants only that does not fold to a finite number
 *   (0^-1, log(0), sqrt(-1), exp(1000)) is undefined: every builder given such an operand
 *   returns it unchanged, so 0/0, 1/0 - 1/0, 0*log(0) and x + 1/0 are that undefined node (a
 *   non-constant node with no dependence) and evaluating them is a domain error, never 0. Canonical order is the order of node handles, which depends on
 *   creation history, so it is canonical within one graph, not across graphs.
 *
 * Dependence sets. Every node keeps the sorted set of symbol indices it depends on (shared with
 * a child when equal), so mblx_depends is a binary search and derivative routines only visit
 * nodes that depend on the symbols involved. The memory is the sum of the set sizes; for
 * models whose intermediate nodes each depend on a few coordinates this is O(nodes).
 */
#ifndef MBLIN_EXPR_H
#define MBLIN_EXPR_H

#include "mblin/export.h"

#include <stddef.h>
#include <stdint.h>

#include "mblin/status.h"
#include "mblin/user.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==== graph and node handles ================================================================ */

typedef struct mblx_graph mblx_graph;

/* Handle of a node in a graph. Handles are dense (0, 1, 2, ... in creation order); a node's
 * operands always have smaller handles than the node itself. */
typedef uint32_t mblx_id;

/* The "no node" handle returned by a builder that failed. */
#define MBLX_NONE ((mblx_id)0xffffffffu)

/* Node kinds, as returned by mblx_op. Sums and products are n-ary; MBLX_OP_ADD carries a
 * numeric constant term and MBLX_OP_MUL a numeric coefficient (mblx_node_value). There is no
 * subtraction, negation or division node: see "Canonical form". */
typedef enum mblx_op {
    MBLX_OP_CONST = 0, /* numeric constant, mblx_node_value */
    MBLX_OP_SYMBOL,    /* symbol, mblx_symbol_index */
    MBLX_OP_ADD,       /* value + arg0 + arg1 + ... (n >= 1 args) */
    MBLX_OP_MUL,       /* value * arg0 * arg1 * ... (n >= 1 args) */
    MBLX_OP_POW,       /* arg0 ^ arg1 */
    MBLX_OP_SIN, MBLX_OP_COS, MBLX_OP_TAN, MBLX_OP_ASIN, MBLX_OP_ACOS, MBLX_OP_ATAN,
    MBLX_OP_ATAN2,     /* atan2(arg0 = y, arg1 = x) */
    MBLX_OP_SINH, MBLX_OP_COSH, MBLX_OP_TANH, MBLX_OP_EXP, MBLX_OP_LOG, MBLX_OP_SQRT,
    MBLX_OP_ABS,
    MBLX_OP_SIGN,      /* -1, 0 or 1; its derivative is 0 */
    MBLX_OP_MIN, MBLX_OP_MAX, /* binary */
    MBLX_OP_STEP,      /* step(x, x0, h0, x1, h1), see mblx_step */
    MBLX_OP_LET,       /* let(x): the value of x kept as one shared node, see mblx_let */
    MBLX_OP_DATA,      /* a function of data (spline, table, spline2), see mblx_data_call */
    MBLX_OP_USER,      /* an output of a user routine or one of its partials, see mblx_user_call */
    MBLX_OP_COUNT_
} mblx_op;

/* A sum (product) operand that is itself a sum of more than this many terms (a product of more
 * than this many factors) is kept as one term (factor) instead of being merged (flattened) into
 * the new sum (product). This keeps chains such as e = e + f(e) repeated 10^5 times, or the
 * reverse-mode adjoints along them, linear in time and memory. Long sums are built in one call
 * by mblx_sum (any length, flat); sums and products of up to this many operands are fully
 * canonical. Such nested sums and products print with parentheses. */
#define MBLX_FLATTEN_MAX 64

/* Create an empty graph. Returns NULL when out of memory. */
MBL_API mblx_graph *mblx_graph_new(void);

/* Reserve room for about `nodes` nodes (their operands, dependence sets and the hash-consing
 * table) at once, so that a graph whose size is known in advance is not grown and rehashed
 * step by step. A hint: nodes, handles and results are the same with or without it, and a graph
 * that outgrows it grows as usual. Returns 0, or MBL_ENOMEM (the graph is then unchanged and
 * still usable) or MBL_EARG (g NULL). */
MBL_API int mblx_graph_reserve(mblx_graph *g, size_t nodes);

/* Free the hash-consing table of g (4 bytes a slot, at least 8 bytes a node: 16 MB for the
 * N = 10^4 four-bar's reserve of 1.7 M nodes) and the derivatives' per-node scratch (8 bytes a node) while its
 * nodes are only read (compiled, evaluated, printed). The next node made rebuilds the table from
 * the nodes at the size it had (about 20 ns a node), the next derivative its scratch: handles,
 * and every node a builder returns, are the same as without the drop. Returns 0, or MBL_EARG for
 * a NULL graph. */
MBL_API int mblx_graph_drop_table(mblx_graph *g);

/* Free a graph and every node in it. Accepts NULL. Tapes compiled from the graph stay valid. */
MBL_API void mblx_graph_free(mblx_graph *g);

/* The sticky error of the graph: 0 if no builder has failed since creation (or since
 * mblx_graph_clear_status), else the first error code (MBL_ENOMEM, MBL_EARG, ...); when st is
 * not NULL it receives the code and the message. */
MBL_API int mblx_graph_status(const mblx_graph *g, mbl_status *st);

/* Forget the sticky error. Nodes built before the error remain valid. */
MBL_API void mblx_graph_clear_status(mblx_graph *g);

/* Number of nodes in the graph (the next handle to be created). */
MBL_API size_t mblx_node_count(const mblx_graph *g);

/* ---- node inspection (read-only; invalid handles give MBLX_OP_COUNT_, 0, NAN or MBLX_NONE) -- */

MBL_API mblx_op mblx_node_op(const mblx_graph *g, mblx_id e);
/* Number of operands. */
MBL_API int mblx_node_nargs(const mblx_graph *g, mblx_id e);
/* Operand i (0-based) or MBLX_NONE when out of range. */
MBL_API mblx_id mblx_node_arg(const mblx_graph *g, mblx_id e, int i);
/* All the operands of e at once (the mblx_node_arg of 0 .. *count - 1), for loops over many
 * nodes; *count receives their number (NULL and 0 for a node without operands or an invalid
 * handle). count may be NULL. The pointer is valid until the next builder call on g. */
MBL_API const mblx_id *mblx_node_args(const mblx_graph *g, mblx_id e, size_t *count);
/* CONST: the value; ADD: the constant term; MUL: the coefficient; DATA, USER: its code for
 * mblx_apply (see mblx_data_node, mblx_user_node); others: 0. */
MBL_API double mblx_node_value(const mblx_graph *g, mblx_id e);
/* 1 and *value set if e is a numeric constant, else 0. value may be NULL. */
MBL_API int mblx_is_const(const mblx_graph *g, mblx_id e, double *value);
/* The sorted symbol indices e depends on (structurally, after simplification); *count
 * receives their number. The pointer is valid until the next builder call on g. */
MBL_API const uint32_t *mblx_node_deps(const mblx_graph *g, mblx_id e, size_t *count);

/* ==== leaves ================================================================================ */

/* The constant v (v must be finite, else MBLX_NONE and sticky MBL_EARG). -0.0 is stored as 0. */
MBL_API mblx_id mblx_const(mblx_graph *g, double v);

/* The symbol called `name` (NUL-terminated, non-empty). The first call with a name creates the
 * symbol with the next dense symbol index (0, 1, 2, ... in creation order); later calls with
 * the same name return the same node. Symbols stand for anything the caller evaluates later
 * (coordinates, velocities, multipliers, inputs, parameters, time). Names are arbitrary
 * strings, but only identifiers ([A-Za-z_][A-Za-z0-9_]*) print in a reparseable way. */
MBL_API mblx_id mblx_symbol(mblx_graph *g, const char *name);
/* Same with an explicit length (the name need not be NUL-terminated; len > 0). */
MBL_API mblx_id mblx_symbol_n(mblx_graph *g, const char *name, size_t len);

/* The symbol called name, or MBLX_NONE if there is none (never creates one, no sticky error). */
MBL_API mblx_id mblx_symbol_find(const mblx_graph *g, const char *name);
MBL_API mblx_id mblx_symbol_find_n(const mblx_graph *g, const char *name, size_t len);

/* Symbol index of e (0 .. mblx_symbol_count-1), or -1 if e is not a symbol. */
MBL_API long mblx_symbol_index(const mblx_graph *g, mblx_id e);
/* Number of symbols created so far. Evaluation reads symbol values by index from an array of
 * (at least) this many doubles. */
MBL_API size_t mblx_symbol_count(const mblx_graph *g);
/* Node of the symbol with index idx, or MBLX_NONE. */
MBL_API mblx_id mblx_symbol_node(const mblx_graph *g, size_t idx);
/* Name of symbol e (a symbol node), or NULL if e is not a symbol. Valid until the next
 * builder call on g. */
MBL_API const char *mblx_symbol_name(const mblx_graph *g, mblx_id e);

/* ==== operations (all simplify, see "Canonical form") ======================================== */

MBL_API mblx_id mblx_add(mblx_graph *g, mblx_id a, mblx_id b);
MBL_API mblx_id mblx_sub(mblx_graph *g, mblx_id a, mblx_id b);
MBL_API mblx_id mblx_mul(mblx_graph *g, mblx_id a, mblx_id b);
/* a / b = a * b^-1. A constant zero divisor is kept (not folded): evaluation reports it. */
MBL_API mblx_id mblx_div(mblx_graph *g, mblx_id a, mblx_id b);
MBL_API mblx_id mblx_pow(mblx_graph *g, mblx_id base, mblx_id exponent);
/* base ^ k for a numeric exponent (shorthand for mblx_pow(g, base, mblx_const(g, k))). */
MBL_API mblx_id mblx_powc(mblx_graph *g, mblx_id base, double k);
/* -a = (-1) * a */
MBL_API mblx_id mblx_neg(mblx_graph *g, mblx_id a);
/* c * a for a numeric c */
MBL_API mblx_id mblx_scale(mblx_graph *g, double c, mblx_id a);

/* Sum / product of n terms in O(total size * log): use these, not repeated mblx_add, for
 * long sums (repeated binary additions copy the growing flat sum each time). n == 0 gives the
 * constant 0 / 1. */
MBL_API mblx_id mblx_sum(mblx_graph *g, size_t n, const mblx_id *terms);
MBL_API mblx_id mblx_product(mblx_graph *g, size_t n, const mblx_id *factors);

/* Elementary functions, with their real-valued C library meaning. */
MBL_API mblx_id mblx_sin(mblx_graph *g, mblx_id a);
MBL_API mblx_id mblx_cos(mblx_graph *g, mblx_id a);
MBL_API mblx_id mblx_tan(mblx_graph *g, mblx_id a);
MBL_API mblx_id mblx_asin(mblx_graph *g, mblx_id a);
MBL_API mblx_id mblx_acos(mblx_graph *g, mblx_id a);
MBL_API mblx_id mblx_atan(mblx_graph *g, mblx_id a);
MBL_API mblx_id mblx_atan2(mblx_graph *g, mblx_id y, mblx_id x);
MBL_API mblx_id mblx_sinh(mblx_graph *g, mblx_id a);
MBL_API mblx_id mblx_cosh(mblx_graph *g, mblx_id a);
MBL_API mblx_id mblx_tanh(mblx_graph *g, mblx_id a);
MBL_API mblx_id mblx_exp(mblx_graph *g, mblx_id a);
MBL_API mblx_id mblx_log(mblx_graph *g, mblx_id a); /* natural logarithm */
MBL_API mblx_id mblx_sqrt(mblx_graph *g, mblx_id a);
MBL_API mblx_id mblx_abs(mblx_graph *g, mblx_id a);
/* sign(a): -1, 0, 1. Derivatives treat it as locally constant (derivative 0). */
MBL_API mblx_id mblx_sign(mblx_graph *g, mblx_id a);
/* min/max. Derivatives are the one-sided ones almost everywhere:
 * d min(a,b) = (da + db - sign(a-b) (da - db)) / 2 (equal split where a == b). */
MBL_API mblx_id mblx_min(mblx_graph *g, mblx_id a, mblx_id b);
MBL_API mblx_id mblx_max(mblx_graph *g, mblx_id a, mblx_id b);
/* Smooth step (MSC Adams STEP): h0 for x <= x0, h1 for x >= x1, and the cubic Hermite blend
 * h0 + (h1 - h0) s^2 (3 - 2 s), s = (x - x0)/(x1 - x0), in between (C1: zero slope at both
 * ends). Differentiable in all five arguments; x1 == x0 makes the derivatives divide by zero
 * (evaluation then reports MBL_EDOMAIN). */
MBL_API mblx_id mblx_step(mblx_graph *g, mblx_id x, mblx_id x0, mblx_id h0, mblx_id x1, mblx_id h1);

/* let(x): x kept as one opaque node. Its value and its derivatives are those of x, but sums and
 * products do not merge it into themselves (a product a*let(b*c) keeps let(b*c) as one factor
 * where a*(b*c) becomes a*b*c), and the derivatives of let(x) are let nodes again (reverse mode:
 * the adjoint of let(x) is let(adjoint)), so the derivative of a named intermediate is computed
 * once and shared by every expression that uses it (the chain rule through the intermediate).
 * Structural cancellations across a let are not found (let(x) - x is not 0). Constants,
 * symbols, functions (sin, cos, ...) and let nodes are returned unchanged, and a coefficient is
 * kept outside: let(c*y) = c*let(y). The tape compiler reads let(x) as x (no instruction), and
 * printing prints x. Meant for the compiled forms: model rows kept for analysis use no lets. */
MBL_API mblx_id mblx_let(mblx_graph *g, mblx_id x);

/* ---- functions of data (spline, table, spline2; docs/expressions.md) ----------------------- */

/* Extrapolation outside a data set's range: refused (evaluation reports MBL_EDOMAIN naming the
 * data set and the value) or linear (the tangent at the nearest end of the range). */
enum { MBLX_EXTRAP_NONE = 0, MBLX_EXTRAP_LINEAR = 1 };

/* A data set: a piecewise polynomial given by its breakpoints and coefficients (the caller
 * chooses the method: src/model computes Akima, natural cubic and bicubic coefficients).
 * 1-D (ny == 0): nx >= 2 strictly increasing x, z[i] the value at x[i], coef 4 per interval:
 * on [x[i], x[i+1]] the value is sum_a coef[4i + a] (x - x[i])^a. 2-D: nx, ny >= 2, z[i*ny + j]
 * at (x[i], y[j]), coef 16 per cell (cell (i, j) at 16 (i (ny-1) + j)): the value is
 * sum_{a,b} coef[.. + 4a + b] (x - x[i])^a (y - y[j])^b. coef NULL (1-D only): linear pieces. */
typedef struct mblx_data_def {
    const char *name; /* identifier that expressions use: spline(name, x) */
    size_t nx, ny;
    const double *x, *y, *z, *coef;
    int extrapolate;  /* MBLX_EXTRAP_* */
} mblx_data_def;

/* Add a data set to g (its data copied); returns its index (0, 1, ...), or -1 with the sticky
 * error MBL_EARG (bad sizes, x not increasing, non-finite values, a name used twice). */
MBL_API long mblx_data_add(mblx_graph *g, const mblx_data_def *d);
/* The index of the data set called name (len bytes), or -1. */
MBL_API long mblx_data_find(const mblx_graph *g, const char *name, size_t len);
/* Number of data sets, and the name and dimension (1 or 2) of set k (NULL, 0 when out of range). */
MBL_API size_t mblx_data_count(const mblx_graph *g);
MBL_API const char *mblx_data_name(const mblx_graph *g, long k, int *dim);
/* Copy every data set of src into dst, which must have none (so that nodes copied between the
 * graphs with mblx_apply keep their meaning). 0, or a negative code with the sticky error on dst. */
MBL_API int mblx_data_copy(mblx_graph *dst, const mblx_graph *src);
/* The derivative d^dx/dx^dx d^dy/dy^dy of data set k at (x, y) (y MBLX_NONE for a 1-D set):
 * linear 0 interpolates the set's own pieces (spline, spline2), linear 1 the data points
 * linearly (table, 1-D only). Orders above the pieces' degree give the constant 0; constant
 * arguments fold to a number. Its derivatives are the same node with an order raised. */
MBL_API mblx_id mblx_data_call(mblx_graph *g, long k, int linear, int dx, int dy, mblx_id x, mblx_id y);
/* For a node made by mblx_data_call: 1 and its set, linear flag and orders; else 0. */
MBL_API int mblx_data_node(const mblx_graph *g, mblx_id e, long *k, int *linear, int *dx, int *dy);
/* The value of that derivative at numbers (the evaluation a tape does): 0, or MBL_EDOMAIN
 * outside a range whose extrapolation is refused, MBL_EARG for a bad set or order. */
MBL_API int mblx_data_eval(const mblx_graph *g, long k, int linear, int dx, int dy, double x, double y,
                           double *value);

/* ==== user routines (include/mblin/user.h; the model file's `routines:`, docs/user-routines.md) ====
 *
 * A routine registered in a graph (its function, its user data, its counts of inputs and outputs)
 * is used in expressions through nodes of MBLX_OP_USER: output k of routine r at the input
 * expressions in[0 .. nin). The nodes are opaque: never folded (not even at constant inputs),
 * evaluated by calling the routine. Their derivatives are nodes of the same kind: the partial
 * d out_k / d in_j (order 1) is the routine's own partial when it has them (partials = 1), else
 * a central difference with the step MBLX_USER_STEP * max(|in_j|, 1); the partials' derivatives
 * (order 2: Hessians, parameter sensitivities of a Jacobian) are central differences of the order-1
 * partials (of the routine's, or second differences of the values). Order 3 is not available:
 * differentiating an order-2 node fails (MBLX_NONE, sticky MBL_EARG naming the routine).
 *
 * A tape calls a routine once per evaluation and distinct inputs, however many of its outputs and
 * partials it reads (the call's results are kept in the tape's work array, mblx_tape_work_size
 * counts them); an order-1 node without the routine's partials costs 2 nin more calls per
 * evaluation (all its partials at once), an order-2 node 4 more calls for itself. A routine that
 * fails, or gives a non-finite output or partial, fails the evaluation with MBL_EDOMAIN and
 * "routine 'name': <its message>" ("... output 2 is nan", counted from 1). Printing shows name[k](in...),
 * name[k]'j(in...) for a partial (j 0-based), name[k]'j'l(in...) for order 2: readable, not
 * parseable (the expression language has no user routines of its own; a model names their
 * outputs). */
#define MBLX_USER_MAX_IO 4095  /* inputs and outputs of one routine at most */
#define MBLX_USER_STEP 6.0554544523933395e-06 /* cbrt(DBL_EPSILON): the central differences' relative step */
typedef struct mblx_user_def {
    const char *name;   /* the routine's name in messages and printed expressions (copied) */
    int nin, nout;      /* 1 .. MBLX_USER_MAX_IO each */
    mbl_user_fn fn;     /* the routine (mblin/user.h) */
    void *user_data;    /* passed to it in mbl_user_call.user_data */
    int partials;       /* 1: fn writes its partials when asked; 0: central differences */
} mblx_user_def;
/* Register a routine in g; its index (0, 1, ...), or -1 with the sticky error MBL_EARG (counts
 * out of range, fn NULL, an empty name or one used twice). */
MBL_API long mblx_user_add(mblx_graph *g, const mblx_user_def *d);
/* Number of routines, and routine r's definition (0, or MBL_EARG when r is out of range; d->name
 * is the graph's copy, valid while g lives). */
MBL_API size_t mblx_user_count(const mblx_graph *g);
MBL_API int mblx_user_info(const mblx_graph *g, long r, mblx_user_def *d);
/* Copy every routine of src into dst, which must have none (as mblx_data_copy). */
MBL_API int mblx_user_copy(mblx_graph *dst, const mblx_graph *src);
/* Output k (0-based) of routine r at the routine's nin input expressions in: the node (MBLX_NONE
 * with the sticky error MBL_EARG for a bad r, k or input). */
MBL_API mblx_id mblx_user_call(mblx_graph *g, long r, int k, const mblx_id *in);
/* For a node of MBLX_OP_USER: 1 and its routine, output, and the inputs of its partial (*j1, *j2:
 * -1 when not differentiated by them; an order-1 node has *j1 >= 0, *j2 = -1); else 0. */
MBL_API int mblx_user_node(const mblx_graph *g, mblx_id e, long *r, int *k, int *j1, int *j2);
/* 1 when one of the n expressions e uses a user routine (a node of MBLX_OP_USER in its DAG), with
 * its routine in *r (may be NULL); else 0. What needs an expression in closed form (code
 * generation, the symbolic form) refuses such expressions naming the routine. */
MBL_API int mblx_uses_user(const mblx_graph *g, size_t n, const mblx_id *e, long *r);
/* Routine r at the nin numbers in: its nout outputs into out, and when partials is not NULL its
 * nout x nin partials (row-major: [k * nin + j] = d out_k / d in_j): the routine's own when it
 * has them, else central differences (as a tape's order-1 nodes). 0, or MBL_EDOMAIN with the
 * routine's message or the non-finite value named, MBL_EARG for a bad r. Thread-safe as the
 * routine is. */
MBL_API int mblx_user_eval(const mblx_graph *g, long r, const double *in, double *out, double *partials,
                           mbl_status *st);
/* Central differences of routine r's outputs at in, whatever its partials: dif[k * nin + j] the
 * difference with step h_j = MBLX_USER_STEP * max(|in_j|, 1), err[k * nin + j] its estimated error
 * (the truncation error by Richardson from the step 2 h_j, |D(h) - D(2h)| / 3, plus the rounding
 * error 2 DBL_EPSILON max(|out_k|, 1) / h_j); either may be NULL. 4 nin calls. The check of a
 * routine's own partials and the accuracy a result reports come from it. 0, or as mblx_user_eval. */
MBL_API int mblx_user_differences(const mblx_graph *g, long r, const double *in, double *dif, double *err,
                                  mbl_status *st);

/* Generic builder: apply operation op to n operands with the same simplifications as the
 * dedicated builders (value is the constant of MBLX_OP_CONST, the constant term of ADD, the
 * coefficient of MUL, ignored otherwise; SYMBOL is not accepted). Useful for tree rewriting. */
MBL_API mblx_id mblx_apply(mblx_graph *g, mblx_op op, double value, size_t n, const mblx_id *args);

/* Name of an operation as printed ("sin", "atan2", ...; "+", "*", "^" for ADD, MUL, POW). */
MBL_API const char *mblx_op_name(mblx_op op);

/* ==== structure and differentiation ========================================================= */

/* 1 if e depends structurally on symbol sym (a symbol node), else 0 (also for invalid args). */
MBL_API int mblx_depends(const mblx_graph *g, mblx_id e, mblx_id sym);

/* de/dsym for a symbol node sym (any other sym: MBLX_NONE, sticky MBL_EARG). Higher orders by
 * repetition: mblx_diff(g, mblx_diff(g, e, x), y). Intermediate results are shared (memoized
 * within a call, hash-consed across calls); only nodes depending on sym are visited. */
MBL_API mblx_id mblx_diff(mblx_graph *g, mblx_id e, mblx_id sym);

/* Directional (forward-mode) derivative sum_i de/dsyms[i] * dirs[i] in one pass; dirs are
 * nodes (numeric or symbolic). Symbols must be distinct. */
MBL_API mblx_id mblx_dir_deriv(mblx_graph *g, mblx_id e, size_t n, const mblx_id *syms,
                       const mblx_id *dirs);

/* Total time derivative de/dt + sum_i de/dq_i * dq_i where q = syms, dq = dsyms (nodes: usually
 * the velocity symbols) and time_sym is the time symbol (MBLX_NONE when e has no explicit time
 * dependence). */
MBL_API mblx_id mblx_total_der(mblx_graph *g, mblx_id e, size_t n, const mblx_id *syms,
                       const mblx_id *dsyms, mblx_id time_sym);

/* Reverse-mode symbolic gradient: out[i] = de/dsyms[i] for i < n, in time O(size of e + n)
 * rather than n forward passes. Returns 0 or a negative code (then the graph's sticky error is
 * set and out is filled with MBLX_NONE). */
MBL_API int mblx_gradient(mblx_graph *g, mblx_id e, size_t n, const mblx_id *syms, mblx_id *out);

/* Compressed sparse column matrix of nodes: column j holds rows rowidx[colptr[j] ..
 * colptr[j+1]-1] (sorted ascending, no duplicates) with entries node[...]. */
typedef struct mblx_sparse {
    int nrows, ncols;
    int *colptr;    /* ncols + 1 entries; colptr[ncols] = nnz */
    int *rowidx;    /* nnz */
    mblx_id *node;  /* nnz */
} mblx_sparse;

/* Free the arrays of a sparse matrix (not the struct itself) and zero it. Accepts NULL. */
MBL_API void mblx_sparse_free(mblx_sparse *s);

/* Sparse Jacobian J[i][j] = d exprs[i] / d syms[j] (m rows, n columns, syms distinct symbol
 * nodes). Each row is differentiated only with respect to the symbols it depends on; entries
 * that simplify to the constant 0 are dropped, so the pattern is exactly the structurally
 * nonzero derivatives. On success *out owns new arrays (free with mblx_sparse_free); on
 * failure *out is zeroed and a negative code returned. */
MBL_API int mblx_jacobian(mblx_graph *g, size_t m, const mblx_id *exprs, size_t n, const mblx_id *syms,
                  mblx_sparse *out);

/* Sparse Hessian H[i][j] = d2 e / dsyms[i] dsyms[j] (n x n, both triangles), computed as the
 * sparse Jacobian of the reverse-mode gradient: cost O(size of e + nonzeros). */
MBL_API int mblx_hessian(mblx_graph *g, mblx_id e, size_t n, const mblx_id *syms, mblx_sparse *out);

/* Replace symbols syms[i] by the expressions repl[i] (simultaneously) and re-simplify. Only
 * the part of e that depends on syms is rebuilt. */
MBL_API mblx_id mblx_subst(mblx_graph *g, mblx_id e, size_t n, const mblx_id *syms,
                   const mblx_id *repl);

/* out[i] = mblx_subst(g, e[i], n, syms, repl) for i < m, in one traversal memo (the nodes the
 * e[i] share are rebuilt once). 0, or a negative code (the graph's status). */
MBL_API int mblx_subst_many(mblx_graph *g, size_t m, const mblx_id *e, size_t n, const mblx_id *syms,
                    const mblx_id *repl, mblx_id *out);

/* ==== compilation and evaluation ============================================================ */

typedef struct mblx_tape mblx_tape;

/* Compile n outputs into one flat tape: the nodes reachable from the outputs in topological
 * order, each computed once however many outputs share it, with registers reused after their
 * last use. No recursion; O(size) time and memory. The tape is independent of the graph (it
 * keeps its own copy of what it needs to print error messages). Returns NULL on failure
 * (MBL_ENOMEM, or MBL_EARG for an invalid handle), with st filled. */
MBL_API mblx_tape *mblx_compile(const mblx_graph *g, size_t n, const mblx_id *outputs, mbl_status *st);

/* mblx_compile without the tape's own copy of the compiled expressions (about 32 bytes per
 * compiled node: 29 MB for each of the two large tapes of the N = 10^4 four-bar): the messages of
 * a failing mblx_tape_eval print the offending subexpression from g instead, so g must outlive
 * the tape (nodes added to g later do not matter). When g may grow on another thread while the
 * tape is evaluated, lock (not NULL) is called as lock(ctx, 1) before a failing evaluation reads
 * g and lock(ctx, 0) after; it is never called by an evaluation that succeeds. Messages and
 * results are the same as mblx_compile's. */
MBL_API mblx_tape *mblx_compile_bound(const mblx_graph *g, size_t n, const mblx_id *outputs,
                                      void (*lock)(void *ctx, int on), void *ctx, mbl_status *st);

/* mblx_compile_bound (bound 1) or mblx_compile (bound 0, lock and ctx unused) for a tape evaluated
 * a few times (a one-point command's load): sums and products share their common prefixes (the
 * chains) but no common pairs of operands are searched for. The pairs make a tape a few % shorter
 * and cost about a third of a large tape's compilation (docs/benchmarks.md, branch s22-bike2); the
 * values are those of the expressions' operations in the order written. */
MBL_API mblx_tape *mblx_compile_few(const mblx_graph *g, size_t n, const mblx_id *outputs, int bound,
                                    void (*lock)(void *ctx, int on), void *ctx, mbl_status *st);

/* Free a tape. Accepts NULL. */
MBL_API void mblx_tape_free(mblx_tape *t);

/* Number of doubles the work array of mblx_tape_eval must hold. */
MBL_API size_t mblx_tape_work_size(const mblx_tape *t);
/* Number of instructions executed per evaluation (one per computed node; an n-ary sum or
 * product of k operands counts k-1, plus one for a constant term or coefficient). */
MBL_API size_t mblx_tape_ninstr(const mblx_tape *t);
/* Number of outputs. */
MBL_API size_t mblx_tape_noutputs(const mblx_tape *t);
/* Smallest length of the symvals array: 1 + the largest symbol index the tape reads (0 when it
 * reads none). */
MBL_API size_t mblx_tape_nsymbols(const mblx_tape *t);

/* Evaluate: symvals[k] is the value of the symbol with index k; out receives the n outputs;
 * work holds mblx_tape_work_size doubles (scratch, contents irrelevant). No allocation, no
 * recursion; thread-safe for distinct work and out arrays. Returns 0, or MBL_EDOMAIN when a
 * value is outside a function's domain or any intermediate result is not finite (the message
 * names the operation, the value and the offending subexpression, e.g. "sqrt of negative value
 * -0.25 in sqrt(x - 2)"); out is then unspecified. Non-finite symbol values are reported the
 * same way. */
MBL_API int mblx_tape_eval(const mblx_tape *t, const double *symvals, double *out, double *work,
                   mbl_status *st);

/* One-off evaluation of e (compiles a temporary tape). */
MBL_API int mblx_eval(const mblx_graph *g, mblx_id e, const double *symvals, double *value,
              mbl_status *st);

/* The value of a constant expression given as text (numbers, pi, operators and functions; no
 * names), as a parameter value is written on the command line or in Python (2, -0.5, 1e-3, pi/2,
 * sqrt(2)*9.81): parsed in a scratch graph and evaluated. MBL_EPARSE for malformed text or a name
 * (the message starts with "1:COL: "), MBL_EDOMAIN for a value outside a function's domain or not
 * finite; *value is then unchanged. */
MBL_API int mblx_eval_text(const char *text, size_t len, double *value, mbl_status *st);

/* ---- forward mode: derivative values of a tape without symbolic derivatives ---------------- */

/* Doubles the work array of mblx_tape_fwd must hold for p directions: (p + 1) per register (and
 * the caches of user routines' calls, see mblx_user_call). */
MBL_API size_t mblx_tape_fwd_work_size(const mblx_tape *t, size_t p);

/* Evaluate t and p directional derivatives of it at once (forward mode): seed[s * p + k] is
 * the derivative of symbol s along direction k (s < mblx_tape_nsymbols); out (NULL allowed)
 * receives the outputs' values as mblx_tape_eval gives them (the same operations), dout[o * p + k]
 * output o's derivative along direction k. The rules are those of mblx_diff (abs: sign, sign: 0,
 * min/max: 1/2 each at a tie, step and the functions of data: their closed-form derivatives), to
 * rounding. An operand whose derivatives are all exactly 0 contributes 0 even where its partial
 * is not finite (sqrt(p) at p = 0 when p is not differentiated). Returns 0, or MBL_EDOMAIN with
 * the message of mblx_tape_eval for a value, or "derivative of ... not finite" for a derivative. */
MBL_API int mblx_tape_fwd(const mblx_tape *t, const double *symvals, size_t p, const double *seed, double *out,
                          double *dout, double *work, mbl_status *st);

/* Jacobian values of a tape's outputs by forward mode with column compression. The pattern of
 * d rows[i] / d syms[j] is structural (each row's dependence set in the graph, restricted to
 * syms: a superset of mblx_jacobian's pattern, which drops entries that cancel); the columns
 * are colored greedily so that no two columns of one color share a row, and the values are
 * ncolors directional derivatives, MBLX_FWD_CHUNK directions per sweep of the tape. */
typedef struct mblx_fwdjac mblx_fwdjac;

/* Directions per sweep of mblx_fwdjac_eval (the tape's values are recomputed once per sweep). */
#define MBLX_FWD_CHUNK 16

/* The pattern and coloring of d rows / d syms (m rows, n distinct symbol nodes). The structure
 * only: g may change or be freed afterwards. NULL with st filled on failure. */
MBL_API mblx_fwdjac *mblx_fwdjac_new(const mblx_graph *g, size_t m, const mblx_id *rows, size_t n,
                                     const mblx_id *syms, mbl_status *st);
MBL_API void mblx_fwdjac_free(mblx_fwdjac *J);
/* Give J to t, the tape of its rows: mblx_tape_free(t) frees it (and one given before); the
 * Jacobian of a model loaded with mbl_load_options.forward_jacobian lives there. t NULL: J is
 * freed. */
MBL_API void mblx_tape_set_fwdjac(mblx_tape *t, mblx_fwdjac *J);
/* The coloring given to t, or NULL. */
MBL_API const mblx_fwdjac *mblx_tape_fwdjac(const mblx_tape *t);
/* The pattern, compressed by column as mblx_sparse (rows sorted within a column); the arrays
 * belong to J. Returns the number of entries. */
MBL_API size_t mblx_fwdjac_pattern(const mblx_fwdjac *J, const int **colptr, const int **rowidx);
/* Number of colors (directional derivatives per evaluation). */
MBL_API size_t mblx_fwdjac_ncolors(const mblx_fwdjac *J);
/* The color of column j (0 .. ncolors - 1). */
MBL_API int mblx_fwdjac_color(const mblx_fwdjac *J, size_t j);
/* Doubles of mblx_fwdjac_eval's work array for tape t. */
MBL_API size_t mblx_fwdjac_work_size(const mblx_fwdjac *J, const mblx_tape *t);
/* The values of the entries (vals: nnz, in the pattern's order) at symvals, from t, a tape of
 * the m rows in order (mblx_compile(g, m, rows)); out (NULL allowed) receives the rows' values.
 * Returns 0, MBL_EARG when t's outputs are not m, or mblx_tape_fwd's MBL_EDOMAIN. */
MBL_API int mblx_fwdjac_eval(const mblx_fwdjac *J, const mblx_tape *t, const double *symvals, double *vals,
                             double *out, double *work, mbl_status *st);

/* ==== printing ============================================================================== */

/* Print e in infix with minimal parentheses, in the syntax mblx_parse reads (so printing and
 * re-parsing with symbols resolved by name gives the same node). Negative terms print as
 * subtraction ("a - 2*b"), reciprocal factors as division ("a/b^2"), numbers in the shortest
 * form that reads back to the same double ("0.1", "1e-20"). Works like snprintf: writes at
 * most size bytes including the terminating NUL (buf may be NULL when size is 0) and returns
 * the full length (excluding the NUL). Returns SIZE_MAX (and writes "") if e is invalid or the
 * traversal stack cannot be allocated. */
MBL_API size_t mblx_print(const mblx_graph *g, mblx_id e, char *buf, size_t size);

/* Allocating variant: a new NUL-terminated string (free with mbl_free), or NULL with st set. */
MBL_API char *mblx_print_alloc(const mblx_graph *g, mblx_id e, mbl_status *st);

/* The same with exact rationals: a number whose decimals do not end within MBLX_PRINT_DEC_DIGITS
 * significant digits (0.3333333333333333, not 0.5 or 9.81) and that is the double the parser
 * makes of "p/q" (p times the double reciprocal of q) for p/q in lowest terms, 1 < q <=
 * MBLX_PRINT_DEN_MAX, the least such q, prints as "p/q" ("(p/q)" as an exponent): 1/3*m1,
 * x^(2/3). It reads back to the same node as mblx_print's text (the `symbolic` command's text and
 * JSON); a number that is no such double keeps its decimals. */
#define MBLX_PRINT_DEN_MAX 1000
#define MBLX_PRINT_DEC_DIGITS 12
MBL_API char *mblx_print_alloc_rational(const mblx_graph *g, mblx_id e, mbl_status *st);

/* ==== parsing =============================================================================== */

/* Resolver: called for each identifier that is not built in (nargs == -1, args == NULL) and for
 * each call name(args...) of a function that is not built in (nargs >= 0, args the already
 * parsed arguments), e.g. parameters, coordinates, named variables and der(...). name is not
 * NUL-terminated (len bytes). Return 0 and set *out to a node of g to accept; return nonzero
 * to reject: the parse then fails with MBL_EPARSE at the name's position, with the message
 * "unknown name 'foo'" (or "unknown function 'foo'"), or with the text the resolver wrote into
 * why (NUL-terminated, at most whylen bytes) when it wrote a non-empty one. Returning 0 with
 * *out == MBLX_NONE means a builder failed (the graph's sticky error is reported). */
typedef int (*mblx_resolve_fn)(void *ud, mblx_graph *g, const char *name, size_t len, int nargs,
                               const mblx_id *args, mblx_id *out, char *why, size_t whylen);

/* Default maximum nesting depth of parentheses, function calls and exponent chains. */
#define MBLX_PARSE_DEFAULT_MAX_DEPTH 256

typedef struct mblx_parse_opts {
    mblx_resolve_fn resolve; /* may be NULL: then every unknown name is an error */
    void *ud;                /* passed to resolve */
    int line;                /* line of the first character of text in the caller's file
                                (1-based; 0 means 1) */
    int col;                 /* column of the first character (1-based; 0 means 1); later lines
                                start at column 1 */
    int max_depth;           /* 0 means MBLX_PARSE_DEFAULT_MAX_DEPTH */
    size_t *error_offset;    /* if not NULL, receives the byte offset in text of a parse error
                                (for mblx_excerpt) */
} mblx_parse_opts;

/* Parse text[0 .. len-1] (need not be NUL-terminated; embedded NULs are errors) into *out.
 *
 * Syntax (precedence from low to high; see docs/expressions.md):
 *   sum      := product (('+' | '-') product)*
 *   product  := unary (('*' | '/') unary)*
 *   unary    := ('-' | '+') unary | power
 *   power    := primary ('^' unary)?          right-associative; -x^2 = -(x^2), 2^-1 = 0.5
 *   primary  := number | name | name '(' [sum (',' sum)*] ')' | '(' sum ')'
 *   number   := digits ['.' digits] | '.' digits, then optional exponent [eE][+-]digits
 *   name     := [A-Za-z_][A-Za-z0-9_]*
 * Whitespace (space, tab, CR, LF) is ignored between tokens. Built in: the constant `pi`, and
 * the functions sin cos tan asin acos atan sinh cosh tanh exp log sqrt abs sign (1 argument),
 * atan2(y, x), min and max (2 or more arguments), step(x, x0, h0, x1, h1), and the functions
 * of the graph's data sets: spline(name, x[, k]), table(name, x[, k]) and spline2(name, x, y[,
 * kx, ky]) (k: the order of a derivative; see mblx_data_call). Every other name goes to
 * opts->resolve.
 *
 * Returns 0, or MBL_EPARSE with the message "LINE:COL: what" (1-based, counted in bytes, with
 * opts->line/col added) for: empty text, unexpected or garbage characters, unbalanced
 * parentheses, a missing operand (e.g. a trailing operator), unknown names and functions, wrong
 * number of arguments, nesting deeper than max_depth, malformed numbers and numbers that
 * overflow a double. MBL_ENOMEM when out of memory. opts may be NULL. */
MBL_API int mblx_parse(mblx_graph *g, const char *text, size_t len, const mblx_parse_opts *opts,
               mblx_id *out, mbl_status *st);

/* Format the source line of text that contains byte offset `offset`, then a second line with a
 * caret '^' under that byte (tabs copied so the caret lines up), both indented by two spaces,
 * for command-line diagnostics:
 *       x + * y
 *           ^
 * snprintf-like: returns the full length, writes at most size bytes with the NUL. */
MBL_API size_t mblx_excerpt(const char *text, size_t len, size_t offset, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif
