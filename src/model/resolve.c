/* Parsing the file's expressions: the resolver that turns a name or a call (der, lambda, mu, a
 * variable, a constraint's name) into a node, the parsing of one item and of an equation item, and
 * the total time derivatives (with the constraint row groups made of them). */
#include "expr/gradient_terms.h"
#include "expr/number_node.h"
#include "expr/parse_memo.h"
#include "model/formulate.h"
#include "model/symbols_index.h"

/* The first unknowns of the blocks that have seeds: q, v, X (seed_of's b, found once a caller). */
static void seed_blocks(const mbl_model *md, int *b)
{
    b[0] = model_blk0_inline(md, MBL_BLK_Q), b[1] = model_blk0_inline(md, MBL_BLK_V), b[2] = model_blk0_inline(md, MBL_BLK_X);
}

/* The seed of symbol index s in a total derivative (s is not t): q_j -> v_j, v_j -> a_j,
 * X_j -> Xdot_j (*sym its symbol node, *d its derivative); 0 for a symbol that is constant in time.
 * b: seed_blocks'. */
static inline int seed_of(const mbl_model *md, const int *b, int s, mblx_id *sym, mblx_id *d)
{
    int u = s >= 0 && s < md->nsym ? md->unknown_of_sym[s] : -1;
    if (u >= b[0] && u < b[0] + md->n) return *sym = md->q[u - b[0]], *d = md->v[u - b[0]], 1;
    if (u >= b[1] && u < b[1] + md->n) return *sym = md->v[u - b[1]], *d = md->a[u - b[1]], 1;
    if (u >= b[2] && u < b[2] + md->nX) return *sym = md->X[u - b[2]], *d = md->Xd[u - b[2]], 1;
    return 0;
}

/* der(e) as the total time derivative with q' = v, v' = a, visiting only e's own symbols; terms
 * (not NULL): as mblx__total_der_terms' terms, *nt of them (else 1: the node returned) */
static mblx_id total_der(mbl_model *md, mblx_id e, mblx_id *terms, size_t *nt)
{
    int b[3];
    seed_blocks(md, b);
    if (mblx_node_op(md->g, e) == MBLX_OP_SYMBOL) { /* der(x) of a symbol: its seed, as the traversal gives it */
        int s = (int)mblx_symbol_index(md->g, e);
        mblx_id sym, d;
        if (s == md->sym_t) return mblx_const(md->g, 1.0);
        return seed_of(md, b, s, &sym, &d) ? d : mblx_const(md->g, 0.0);
    }
    size_t nd = 0;
    const uint32_t *deps = mblx_node_deps(md->g, e, &nd);
    if (!deps && nd) return MBLX_NONE;
    mblx_id stack_syms[16], stack_d[16];
    mblx_id *syms = stack_syms, *d = stack_d;
    if (nd > 16) {
        syms = mbl_alloc_array(nd, sizeof *syms);
        d = mbl_alloc_array(nd, sizeof *d);
        if (!syms || !d) {
            if (syms != stack_syms) mbl_free(syms);
            if (d != stack_d) mbl_free(d);
            return MBLX_NONE;
        }
    }
    /* the dependence set is read before the graph grows (it may move then): no copy of it */
    size_t ns = 0;
    int has_t = 0;
    for (size_t i = 0; i < nd; i++) {
        int s = (int)deps[i];
        if (s == md->sym_t) has_t = 1;
        else ns += seed_of(md, b, s, &syms[ns], &d[ns]);
    }
    mblx_id time = has_t ? md->t : MBLX_NONE, r;
    if (!terms)
        r = mblx_total_der(md->g, e, ns, syms, d, time);
    else
        r = (*nt = mblx__total_der_terms(md->g, e, ns, syms, d, time, terms)) ? terms[0] : MBLX_NONE;
    if (syms != stack_syms) {
        mbl_free(syms);
        mbl_free(d);
    }
    return r;
}

mblx_id model_total_der(mbl_model *md, mblx_id e) { return total_der(md, e, NULL, NULL); }

size_t model_total_der_terms(mbl_model *md, mblx_id e, mblx_id *terms)
{
    size_t nt = 1;
    mblx_id r = total_der(md, e, terms, &nt);
    if (r == MBLX_NONE) return 0;
    terms[0] = nt == 1 ? r : terms[0]; /* the node of a symbol's or a constant's der() */
    return nt;
}

uint32_t *model_total_der_seeds(mbl_model *md)
{
    uint32_t *map = mbl_alloc_array(md->nsym > 0 ? (size_t)md->nsym : 1, sizeof *map);
    mblx_id sym, d, one = mblx_const(md->g, 1.0);
    int b[3];
    seed_blocks(md, b);
    for (int s = 0; map && s < md->nsym; s++)
        map[s] = s == md->sym_t ? one + 2 : seed_of(md, b, s, &sym, &d) ? d + 2 : 1;
    return map;
}

/* model_total_der(md, e), or (terms not NULL) model_total_der_terms(md, e, terms) with the count in
 * *nt, under seeds (model_total_der_seeds: the same nodes; NULL: out of memory, each call makes its
 * own) */
mblx_id model_total_der_by(mbl_model *md, const uint32_t *seeds, mblx_id e, mblx_id *terms, size_t *nt)
{
    mblx_id r = MBLX_NONE, *out = terms ? terms : &r;
    size_t k;
    if (seeds) k = mblx__total_der_map(md->g, e, seeds, (size_t)md->nsym, terms != NULL, out);
    else if (terms) k = model_total_der_terms(md, e, terms);
    else k = (r = model_total_der(md, e)) != MBLX_NONE;
    if (nt) *nt = k;
    return k ? out[0] : MBLX_NONE;
}

/* The constraint row groups of a residual vector F: Phi (m) with its first and second time
 * derivatives, and the non-holonomic rows nh (k) with their first, under one map of the seeds. */
void model_constraint_rows(mbl_model *md, int m, const mblx_id *Phi, int k, const mblx_id *nh, mblx_id *F)
{
    uint32_t *seeds = model_total_der_seeds(md);
    for (int j = 0; j < m; j++) {
        mblx_id pd = model_total_der_by(md, seeds, Phi[j], NULL, NULL);
        F[md->row0[MBL_ROW_PHID] + j] = pd;
        F[md->row0[MBL_ROW_PHIDD] + j] = model_total_der_by(md, seeds, pd, NULL, NULL);
        F[md->row0[MBL_ROW_PHI] + j] = Phi[j];
    }
    for (int j = 0; j < k; j++) {
        F[md->row0[MBL_ROW_NH] + j] = nh[j];
        F[md->row0[MBL_ROW_NHD] + j] = model_total_der_by(md, seeds, nh[j], NULL, NULL);
    }
    mbl_free(seeds);
}

int model_depends_on_block(const mbl_model *md, mblx_id e, int blk)
{
    int j0 = model_blk0_inline(md, blk), j1 = model_blk0_inline(md, blk + 1);
    size_t nd = 0;
    const uint32_t *deps = mblx_node_deps(md->g, e, &nd);
    for (size_t i = 0; i < nd; i++) {
        int u = (int)deps[i] < md->nsym ? md->unknown_of_sym[deps[i]] : -1;
        if (u >= j0 && u < j1) return 1;
    }
    return 0;
}

/* (formulate.h) one pass for the several tests of a der() argument (each was a pass of its own) */
unsigned model_dep_blocks(const mbl_model *md, mblx_id e)
{
    int b0[MBL_NBLK + 1];
    for (int b = 0; b <= MBL_NBLK; b++) b0[b] = model_blk0_inline(md, b);
    unsigned mask = 0;
    size_t nd = 0;
    const uint32_t *deps = mblx_node_deps(md->g, e, &nd);
    for (size_t i = 0; i < nd; i++) {
        int u = (int)deps[i] < md->nsym ? md->unknown_of_sym[deps[i]] : -1, b = 0;
        if (u < 0) continue;
        while (b < MBL_NBLK && u >= b0[b + 1]) b++;
        if (b < MBL_NBLK) mask |= 1u << b;
    }
    return mask;
}

/* lambda(c) / mu(c): the multiplier of a holonomic / non-holonomic constraint c, named (constraints
 * given as a mapping) or numbered from 1 in the file's order; in outputs only. */
static int resolve_multiplier(loader *L, int is_lam, int nargs, const mblx_id *args, mblx_id *out, char *why,
                              size_t whylen)
{
    const mbl_model *md = L->md;
    const char *fn = is_lam ? "lambda" : "mu";
    int cnt = is_lam ? md->m : md->k;
    const mblx_id *mult = is_lam ? md->lam : md->mu;
    if (!L->allow_mult) {
        L->mult_refused = 1;
        snprintf(why, whylen,
                 "%s() (a constraint force) can be used in forces, ode, implicit_variables, outputs and the "
                 "variables these use only",
                 fn);
        return 1;
    }
    if (nargs != 1) {
        snprintf(why, whylen, "%s() takes 1 argument (a constraint name or number), %d given", fn, nargs);
        return 1;
    }
    double v;
    for (int j = 0; j < cnt; j++)
        if (args[0] == mult[j]) {
            L->cname_calls++;
            *out = mult[j];
            return 0;
        }
    if (mblx_is_const(L->md->g, args[0], &v) && v == floor(v) && v >= 1 && v <= cnt) {
        *out = mult[(int)v - 1];
        return 0;
    }
    if (cnt == 0)
        snprintf(why, whylen, "%s() is the force of a %sconstraint, and the model has none", fn,
                 is_lam ? "" : "non-holonomic ");
    else
        snprintf(why, whylen, "%s() takes the name or the number (1 to %d) of a %sconstraint", fn, cnt,
                 is_lam ? "" : "non-holonomic ");
    return 1;
}

/* der(args[0]): the total time derivative, refused where the model has no such derivative. */
static int resolve_der(loader *L, mblx_graph *g, int nargs, const mblx_id *args, mblx_id *out, char *why, size_t whylen)
{
    mbl_model *md = L->md;
    if (L->scope != SCOPE_FULL) {
        snprintf(why, whylen, "der() cannot be used in %s", L->what);
        return 1;
    }
    if (nargs != 1) {
        snprintf(why, whylen, "der() takes 1 argument, %d given", nargs);
        return 1;
    }
    unsigned blk = model_dep_blocks(md, args[0]);
    if (blk & (1u << MBL_BLK_A)) {
        snprintf(why, whylen, "der() of an expression that already contains accelerations (third "
                              "time derivatives are not part of the model)");
        return 1;
    }
    if (blk & (1u << MBL_BLK_XD)) {
        snprintf(why, whylen, "der() of an expression that contains der() of an ode state (second "
                              "derivatives of ode states are not part of the model)");
        return 1;
    }
    if (blk & (1u << MBL_BLK_Z)) {
        snprintf(why, whylen, "der() of an implicit variable (its time derivative is not part of the "
                              "model; make it an ode state)");
        return 1;
    }
    if (blk & ((1u << MBL_BLK_LAMBDA) | (1u << MBL_BLK_MU))) {
        snprintf(why, whylen, "der() of a multiplier (the time derivative of a constraint force is not "
                              "part of the model)");
        return 1;
    }
    *out = model_total_der(md, args[0]);
    if (*out != MBLX_NONE && L->let_vars && mblx_node_op(g, *out) == MBLX_OP_LET &&
        !(blk & (1u << MBL_BLK_V))) { /* formulate_let: d(dP/dt)/dv = dP/dq */
        if (L->nderlet == L->derlet_cap) {
            int cap = L->derlet_cap ? 2 * L->derlet_cap : 16;
            mblx_id *x = mbl_realloc_array(L->derlet, 2 * (size_t)cap, sizeof *x);
            if (x) L->derlet = x, L->derlet_cap = cap;
        }
        if (L->nderlet < L->derlet_cap) { /* else: just not known */
            L->derlet[2 * L->nderlet] = *out;
            L->derlet[2 * L->nderlet++ + 1] = args[0];
        }
    }
    if (*out == MBLX_NONE) {
        L->oom = 1;
        snprintf(why, whylen, "out of memory");
        return 1;
    }
    return 0;
}

/* Variable i (named name): its node, parsed now in the full scope when not yet (a cycle among
 * variables refused); 2 when its own parse failed (the error already in L->st). */
/* the routine and output of variable i (a routine's output): *k, and the routine's index */
static int routine_of_var(const loader *L, int i, int *k)
{
    int o = i - L->var_routine0;
    for (int r = 0; r < L->src->nroutines; r++) {
        if (o < L->src->routines[r].outputs.n) {
            *k = o;
            return r;
        }
        o -= L->src->routines[r].outputs.n;
    }
    return -1;
}

/* the nodes of routine r's inputs, parsed once (md->routine_in); 0 or an error in L->st */
static int routine_inputs(loader *L, int r, const char *busy_name)
{
    mbl_model *md = L->md;
    const mbl_src_routine *sr = &L->src->routines[r];
    if (md->routine_state[r] == VAR_DONE) return 0;
    if (md->routine_state[r] == VAR_BUSY)
        return mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: routine '%s': its inputs use its own output '%s'", L->src->file,
                         sr->line, sr->col, sr->name, busy_name);
    md->routine_state[r] = VAR_BUSY;
    loader saved = *L;
    int rc = 0;
    for (int j = 0; j < sr->inputs.n && !rc; j++) {
        char what[200];
        snprintf(what, sizeof what, "input %d of routine '%s'", j + 1, sr->name);
        rc = model_parse_item(L, &sr->inputs.items[j], SCOPE_FULL, what, &md->routine_in[md->routine_in0[r] + j]);
    }
    L->scope = saved.scope, L->item = saved.item, L->what = saved.what, L->param_limit = saved.param_limit;
    md->routine_state[r] = rc ? VAR_NEW : VAR_DONE;
    return rc;
}

/* Variable i's node: its text parsed, or a user routine's output at the routine's inputs (the
 * variables from L->var_routine0 on: routines.c, model_routines_take). */
int model_parse_variable(loader *L, int i, const char *what, mblx_id *out)
{
    if (i < L->var_routine0) return model_parse_item(L, &L->src->variables.items[i], SCOPE_FULL, what, out);
    int k = 0, r = routine_of_var(L, i, &k);
    int rc = r < 0 ? mbl_error(L->st, MBL_EMODEL, "%s: no routine for variable %d", L->src->file, i)
                   : routine_inputs(L, r, L->src->variables.items[i].key);
    if (rc) return rc;
    mbl_model *md = L->md;
    *out = mblx_user_call(md->g, L->md->routine_graph[r], k, md->routine_in + md->routine_in0[r]);
    if (*out == MBLX_NONE) return mblx_graph_status(md->g, L->st);
    return 0;
}

static int resolve_variable(loader *L, int i, const char *name, size_t len, mblx_id *out, char *why, size_t whylen)
{
    mbl_model *md = L->md;
    mbl_src *src = L->src;
    if (L->var_state[i] == VAR_DONE) {
        *out = L->var_node[i];
        return 0;
    }
    if (L->var_state[i] == VAR_BUSY) {
        char chain[512];
        size_t off = 0;
        chain[0] = '\0';
        int start = 0;
        for (int d = 0; d < L->var_depth; d++)
            if (L->var_stack[d] == i) start = d;
        for (int d = start; d < L->var_depth && off < sizeof chain; d++)
            off += (size_t)snprintf(chain + off, sizeof chain - off, "%s -> ",
                                    src->variables.items[L->var_stack[d]].key);
        snprintf(why, whylen, "cycle among variables: %s%.*s", chain, (int)len, name);
        return 1;
    }
    if (L->var_depth >= (int)(sizeof L->var_stack / sizeof *L->var_stack)) {
        snprintf(why, whylen, "variables nested too deeply (more than %d levels)",
                 (int)(sizeof L->var_stack / sizeof *L->var_stack));
        return 1;
    }
    /* parse the variable now, in the full scope, then come back */
    L->var_state[i] = VAR_BUSY;
    L->var_stack[L->var_depth++] = i;
    loader saved = *L;
    mblx_id node = MBLX_NONE;
    char what[160];
    model_variable_what(what, sizeof what, &src->variables.items[i]);
    int rc = model_parse_variable(L, i, what, &node);
    L->scope = saved.scope;
    L->item = saved.item;
    L->what = saved.what;
    L->param_limit = saved.param_limit;
    L->var_depth--;
    if (rc) {
        /* the error is already in L->st: make the outer parse fail with it unchanged */
        snprintf(why, whylen, "%s", L->st ? L->st->msg : "error in variable");
        L->var_state[i] = VAR_NEW;
        return 2;
    }
    if (L->let_vars) node = mblx_let(md->g, node); /* formulate_let: kept as one shared node */
    L->var_state[i] = VAR_DONE;
    L->var_node[i] = node;
    *out = node;
    return 0;
}

static int resolve(void *ud, mblx_graph *g, const char *name, size_t len, int nargs, const mblx_id *args,
                   mblx_id *out, char *why, size_t whylen)
{
    loader *L = ud;
    mbl_model *md = L->md;
    mbl_src *src = L->src;
    if (nargs >= 0) {
        if (len == 3 && !strncmp(name, "der", 3)) return resolve_der(L, g, nargs, args, out, why, whylen);
        int is_lam = len == 6 && !strncmp(name, "lambda", 6), is_mu = len == 2 && !strncmp(name, "mu", 2);
        if (is_lam || is_mu) return resolve_multiplier(L, is_lam, nargs, args, out, why, whylen);
        return 1; /* unknown function */
    }
    int i;
    if (len == 1 && name[0] == 't') {
        if (L->scope == SCOPE_PARAM || L->scope == SCOPE_VALUE) {
            snprintf(why, whylen, "time 't' cannot be used in %s", L->what);
            return 1;
        }
        *out = md->t;
        return 0;
    }
    int list = -1;
    i = model_find_symbol(src, name, len, &list);
    if (i >= 0 && list == MODEL_SYM_PARAMETER) {
        if (L->scope == SCOPE_PARAM && i >= L->param_limit) {
            if (i == L->param_limit)
                snprintf(why, whylen, "parameter '%.*s' refers to itself", (int)len, name);
            else
                snprintf(why, whylen,
                         "parameter '%.*s' is defined after '%s' (a parameter may only use earlier ones; "
                         "a cycle otherwise)",
                         (int)len, name, src->parameters.items[L->param_limit].key);
            return 1;
        }
        if (L->scope == SCOPE_PARAM || L->scope == SCOPE_VALUE) md->pbaked[i] = 1; /* mbl_model_set_param */
        *out = md->p[i];
        return 0;
    }
    if (i < 0) return 1;
    if (L->scope == SCOPE_PARAM || L->scope == SCOPE_VALUE) {
        if (list != MODEL_SYM_CONSTRAINT && list != MODEL_SYM_NONHOLONOMIC)
            snprintf(why, whylen, "'%.*s' cannot be used in %s (only parameters can)", (int)len, name, L->what);
        return 1;
    }
    switch (list) {
    case MODEL_SYM_COORDINATE: *out = md->q[i]; return 0;
    case MODEL_SYM_INPUT: *out = md->r[i]; return 0;
    case MODEL_SYM_ODE_STATE: *out = md->X[i]; return 0;
    case MODEL_SYM_IMPLICIT: *out = md->Z[i]; return 0;
    case MODEL_SYM_VARIABLE: return resolve_variable(L, i, name, len, out, why, whylen);
    default: break;
    }
    /* a named constraint or non-holonomic constraint */
    int nh = list == MODEL_SYM_NONHOLONOMIC;
    if (!L->allow_mult) {
        L->mult_refused = 1;
        snprintf(why, whylen,
                 "'%.*s' names a constraint: its force %s(%.*s) can be used in forces, ode, implicit_variables "
                 "and outputs only",
                 (int)len, name, nh ? "mu" : "lambda", (int)len, name);
        return 1;
    }
    L->cname_refs++;
    *out = nh ? md->mu[i] : md->lam[i];
    (void)g;
    return 0;
}

/* Parse one item's text; errors come as "file:line:col: what (in <what>)". */
int model_parse_item(loader *L, const mbl_src_item *it, int scope, const char *what, mblx_id *out)
{
    int rc = model_parse_item_text(L, it, scope, what, out);
    if (!rc && (!L->let_vars || L->let_first) && (scope == SCOPE_FULL || scope == SCOPE_POSITION))
        rc = model_record_srcx(L, it, what, *out);
    return rc;
}

/* An equation item: "expr" (= 0) or "lhs = rhs" (lhs - rhs), with the right-hand side's column
 * kept for messages when the text sits on one line. */
int model_parse_equation(loader *L, const mbl_src_item *it, const char *what, mblx_id *out)
{
    const char *eq = strchr(it->text, '=');
    if (!eq) return model_parse_item(L, it, SCOPE_FULL, what, out);
    if (strchr(eq + 1, '='))
        return mbl_error(L->st, MBL_EPARSE, "%s:%d:%d: %s has more than one '='", L->src->file, it->line, it->col,
                         what);
    mbl_src_item lhs = *it, rhs = *it;
    size_t nl = (size_t)(eq - it->text);
    char *tl = mbl_malloc(nl + 1);
    if (!tl) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
    memcpy(tl, it->text, nl);
    tl[nl] = '\0';
    lhs.text = tl;
    rhs.text = (char *)eq + 1;
    int nlines = 0;
    for (const char *c = it->text; c < eq; c++) nlines += *c == '\n';
    if (!nlines) rhs.col = it->col + (int)nl + 1;
    mblx_id el, er;
    int rc = model_parse_item(L, &lhs, SCOPE_FULL, what, &el);
    if (!rc) rc = model_parse_item(L, &rhs, SCOPE_FULL, what, &er);
    mbl_free(tl);
    if (!rc) *out = mblx_sub(L->md->g, el, er);
    return rc;
}

enum { MEMO_MIN_TEXT = 128 }; /* bytes of a text parsed with the memo of names at least */

int model_parse_item_text(loader *L, const mbl_src_item *it, int scope, const char *what, mblx_id *out)
{
    L->scope = scope;
    L->item = it;
    L->what = what;
    mblx_parse_opts po;
    memset(&po, 0, sizeof po);
    po.resolve = resolve;
    po.ud = L;
    po.line = it->line;
    po.col = it->col;
    mbl_status st;
    mbl_status_clear(&st);
    /* names resolved once a parse (mblx__parse_memo) in a long text: resolve gives the same node for a name, and
     * for der() of a symbol, each time, with nothing else to do, but for a named constraint (counted, cname_refs).
     * A short text names little twice: the memo's entries cost more than they save there (the N = 10^4
     * four-bar's 20,002 constraints of about 45 characters: 4.5 M instructions more with it) */
    /* In the full and position scopes resolve answers a name it gives its own symbol (a coordinate, a
     * parameter, an input, an ode state, an implicit variable, t) the same in every parse, with nothing
     * else to do: those are kept for the source's later parses (mblx__parse_lasting), whatever the text's
     * length (60,002 of the 80,006 names in the N = 10^4 four-bar's constraints were named by an earlier
     * one: l in each, a coupler's four coordinates by the rockers and the coupler before) */
    size_t len = strlen(it->text);
    int named = L->src->named_constraints || L->src->named_nonholonomic;
    int lasting = !named && (scope == SCOPE_FULL || scope == SCOPE_POSITION);
    int memo = len >= MEMO_MIN_TEXT && !named;
    int rc = mblx__number_node(L->md->g, it->text, out) ? 0
             : lasting ? mblx__parse_lasting(L->md->g, it->text, len, &po, L->src, out, &st)
             : memo    ? mblx__parse_memo(L->md->g, it->text, len, &po, out, &st)
                       : mblx_parse(L->md->g, it->text, len, &po, out, &st);
    if (rc && (L->oom || mblx_graph_status(L->md->g, NULL) == MBL_ENOMEM))
        return mbl_error(L->st, MBL_ENOMEM, "%s: out of memory", L->src->file);
    if (rc) {
        /* a nested variable's error message already names its own position: keep it as is */
        const char *msg = st.msg;
        const char *nested = strstr(msg, L->src->file);
        if (nested && nested != msg) return mbl_error(L->st, rc, "%s", nested);
        if (nested == msg) return mbl_error(L->st, rc, "%s", msg);
        if (it->line == 0) {
            /* a state given by the caller (mbl_load_options.states), not in the file: the
             * position is in its own text */
            int l = 0, c = 0, k = 0;
            if (sscanf(msg, "%d:%d: %n", &l, &c, &k) >= 2 && k > 0)
                return mbl_error(L->st, rc, "%s: %s (in %s '%s', column %d)", L->src->file, msg + k, what, it->text, c);
            return mbl_error(L->st, rc, "%s: %s (in %s '%s')", L->src->file, msg, what, it->text);
        }
        return mbl_error(L->st, rc, "%s:%s (in %s)", L->src->file, msg, what);
    }
    rc = model_check_defined(L, it, what, *out);
    if (!rc && (scope == SCOPE_FULL || scope == SCOPE_POSITION)) rc = model_record_expr(L, it, what, *out);
    return rc;
}

/* Evaluate an expression of parameters only (the loader's symbol vector holds the parameter
 * values known so far; it is allocated once, not per value). */
int model_eval_params(loader *L, mblx_id e, const mbl_src_item *it, const char *what, double *val)
{
    mbl_model *md = L->md;
    if (!L->pvals) {
        L->pvals = mbl_calloc((size_t)md->nsym + 1, sizeof *L->pvals);
        if (!L->pvals) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
    }
    for (int i = 0; i < md->np; i++) L->pvals[md->sym_p[i]] = md->pval[i];
    mbl_status st;
    int rc = mblx_eval(md->g, e, L->pvals, val, &st);
    if (rc) return mbl_error(L->st, rc, "%s:%d:%d: %s (in %s)", L->src->file, it->line, it->col, st.msg, what);
    if (!isfinite(*val)) /* the engine reports non-finite results; this is a safety net */
        return mbl_error(L->st, MBL_EDOMAIN, "%s:%d:%d: %s is not a finite number", L->src->file, it->line, it->col,
                         what);
    return 0;
}

/* A number of the file given as an expression of the parameters (initial values, velocities,
 * input values, the time of the point). */
int model_load_value(loader *L, const mbl_src_item *it, const char *what, double *val, mblx_id *node)
{
    mblx_id e;
    int rc = model_parse_item(L, it, SCOPE_VALUE, what, &e);
    /* a number (nearly every initial value) needs no tape: mblx_eval compiles one per call */
    if (!rc && !(mblx_is_const(L->md->g, e, val) && isfinite(*val))) rc = model_eval_params(L, e, it, what, val);
    if (!rc && node) *node = e;
    return rc;
}
