/* The model's symbols (parameters, coordinates, velocities, accelerations, multipliers, inputs,
 * X, Xdot, Z) and the file's values of them (parameters, initial values, inputs). */
#include <math.h>

#include "expr/number_node.h"
#include "expr/symbol_reserve.h"
#include "model/formulate.h"
#include "model/text_blocks.h"
#include "mblin/la.h"

/* a, b (at most bmax characters of it) and c concatenated into buf, cut at len - 1 characters
 * like snprintf: the names of the symbols and of the values without printf (glibc's formatting of
 * the 8,010 names of the N = 1000 four-bar took 6.2 M instructions, 1 % of its run) */
static const char *join3(char *buf, size_t len, const char *a, const char *b, size_t bmax, const char *c)
{
    const char *part[3] = {a, b, c};
    size_t o = 0;
    for (int i = 0; i < 3 && o + 1 < len; i++) {
        size_t k = i == 1 ? strnlen(b, bmax) : strlen(part[i]);
        if (k > len - 1 - o) k = len - 1 - o;
        memcpy(buf + o, part[i], k);
        o += k;
    }
    buf[o] = '\0';
    return buf;
}

/* v > 0 in decimal (buf: 12 characters): its length */
static size_t count_text(char *buf, int v)
{
    char t[12];
    int k = 0;
    unsigned u = (unsigned)v;
    do t[k++] = (char)('0' + u % 10); while ((u /= 10) && k < 11);
    size_t o = 0;
    while (k) buf[o++] = t[--k];
    buf[o] = '\0';
    return o;
}

/* The symbols der(nm) in *v and (a not NULL) der(der(nm)) in *a, made in this order. The text
 * "der(der(nm))" is built once in buf; der(nm) is its part from offset 4 (without the last ')'),
 * given with its length (no join3, no strlen: 80,010 names at N = 10^4). A name too long for buf
 * is cut as join3 cuts it. */
static void der_symbols(mblx_graph *g, char *buf, size_t size, const char *nm, mblx_id *v, mblx_id *a)
{
    size_t n = strlen(nm);
    if (n + 11 > size) {
        *v = mblx_symbol(g, join3(buf, size, "der(", nm, SIZE_MAX, ")"));
        if (a) *a = mblx_symbol(g, join3(buf, size, "der(der(", nm, SIZE_MAX, "))"));
        return;
    }
    memcpy(buf, "der(der(", 8);
    memcpy(buf + 8, nm, n);
    buf[n + 8] = buf[n + 9] = ')';
    buf[n + 10] = '\0';
    *v = mblx_symbol_n(g, buf + 4, n + 5);
    if (a) *a = mblx_symbol_n(g, buf, n + 10);
}

/* prefix, k > 0 in decimal and suffix in buf (room for them: at least the prefix and 16
 * characters): its length (the text of join3(prefix, count_text(k), suffix), without strlen) */
size_t model_indexed_text(char *buf, const char *prefix, int k, char suffix)
{
    size_t o = strlen(prefix);
    memcpy(buf, prefix, o);
    o += count_text(buf + o, k);
    if (suffix) buf[o++] = suffix;
    buf[o] = '\0';
    return o;
}

/* The symbols prefix1], prefix2], ..., prefix<cnt>] in out[0 .. cnt), made in this order (prefix:
 * "lambda[" or "mu["; buf: room for it and 12 characters): the count's digits incremented in place
 * in buf, not printed again for each (12,002 multipliers at the N = 2000 four-bar) */
static void indexed_symbols(mblx_graph *g, char *buf, const char *prefix, int cnt, mblx_id *out)
{
    size_t o = strlen(prefix), nd = 1;
    char *d = buf + o; /* the digits */
    memcpy(buf, prefix, o);
    d[0] = '1';
    for (int j = 0; j < cnt; j++) {
        d[nd] = ']';
        out[j] = mblx_symbol_n(g, buf, o + nd + 1);
        size_t i = nd; /* j + 2 from j + 1: the trailing 9s to 0, the digit before them up one */
        while (i > 0 && d[i - 1] == '9') d[--i] = '0';
        if (i > 0) {
            d[i - 1]++;
        } else { /* all nines: one digit more */
            memmove(d + 1, d, nd++);
            d[0] = '1';
        }
    }
}

int model_create_symbols(loader *L)
{
    mbl_model *md = L->md;
    mbl_src *s = L->src;
    md->n = s->coordinates.n;
    md->m = s->constraints.n;
    md->k = s->nonholonomic.n;
    md->nr = s->inputs.n;
    md->ny = s->outputs.n;
    md->np = s->parameters.n;
    md->nX = s->ode_states.n;
    md->nZ = s->implicit_variables.n;
    md->nunk = 3 * md->n + md->m + md->k + 2 * md->nX + md->nZ + md->nr;
    size_t n = (size_t)md->n;
#define ALLOC(p, cnt) (((p) = mbl_calloc((cnt) ? (size_t)(cnt) : 1, sizeof *(p))) == NULL)
    if (ALLOC(md->p, md->np) || ALLOC(md->q, n) || ALLOC(md->v, n) || ALLOC(md->a, n) || ALLOC(md->lam, md->m) ||
        ALLOC(md->mu, md->k) || ALLOC(md->r, md->nr) || ALLOC(md->sym_of_unknown, md->nunk) ||
        ALLOC(md->sym_p, md->np) || ALLOC(md->pval, md->np) || ALLOC(md->qname, n) || ALLOC(md->rname, md->nr) ||
        ALLOC(md->yname, md->ny) || ALLOC(md->pname, md->np) || ALLOC(md->q0, n) || ALLOC(md->v0, n) ||
        ALLOC(md->r0, md->nr) || ALLOC(md->v_given, n) || ALLOC(md->cyclic, n) || ALLOC(md->X, md->nX) ||
        ALLOC(md->Xd, md->nX) || ALLOC(md->Z, md->nZ) || ALLOC(md->X0, md->nX) || ALLOC(md->xname, md->nX) ||
        ALLOC(md->zname, md->nZ) || ALLOC(md->eq_what, md->nX + md->nZ) || ALLOC(md->pexpr, md->np) ||
        ALLOC(md->q0x, n) || ALLOC(md->v0x, n) || ALLOC(md->r0x, md->nr))
        return mbl_error(L->st, MBL_ENOMEM, "out of memory");
#undef ALLOC
    mblx_graph *g = md->g;
    /* the table of names sized once for the symbols below (the unknowns, the parameters and t);
     * a failure leaves it to grow as they are made */
    (void)mblx__symbol_reserve(g, mblx_symbol_count(g) + (size_t)md->nunk + (size_t)md->np + 1);
    char buf[512];
    for (int i = 0; i < md->np; i++) {
        md->p[i] = mblx_symbol(g, s->parameters.items[i].key);
        md->pname[i] = model_text_copy(md, s->parameters.items[i].key);
        if (!md->pname[i]) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
    }
    md->t = mblx_symbol(g, "t");
    int jv = model_blk0(md, MBL_BLK_V), jq = model_blk0(md, MBL_BLK_Q), ja = model_blk0(md, MBL_BLK_A);
    for (int i = 0; i < md->n; i++) {
        const char *nm = s->coordinates.items[i].key;
        md->q[i] = mblx_symbol(g, nm);
        der_symbols(g, buf, sizeof buf, nm, &md->v[i], &md->a[i]);
        md->qname[i] = model_text_copy(md, nm);
        if (!md->qname[i]) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
    }
    indexed_symbols(g, buf, "lambda[", md->m, md->lam);
    indexed_symbols(g, buf, "mu[", md->k, md->mu);
    for (int j = 0; j < md->nX; j++) {
        const char *nm = s->ode_states.items[j].key;
        md->X[j] = mblx_symbol(g, nm);
        der_symbols(g, buf, sizeof buf, nm, &md->Xd[j], NULL);
        md->xname[j] = model_text_copy(md, nm);
        if (!md->xname[j]) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
    }
    for (int j = 0; j < md->nZ; j++) {
        md->Z[j] = mblx_symbol(g, s->implicit_variables.items[j].key);
        md->zname[j] = model_text_copy(md, s->implicit_variables.items[j].key);
        if (!md->zname[j]) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
    }
    for (int j = 0; j < md->nr; j++) {
        md->r[j] = mblx_symbol(g, s->inputs.items[j].key);
        md->rname[j] = model_text_copy(md, s->inputs.items[j].key);
        if (!md->rname[j]) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
    }
    for (int j = 0; j < md->ny; j++) {
        md->yname[j] = model_text_copy(md, s->outputs.items[j].key);
        if (!md->yname[j]) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
    }
    /* constraint names, for `mblin check` (redundant constraints, parts that do not assemble) and
     * the multipliers' labels: the m holonomic ones, then the k non-holonomic ones */
    md->cname = mbl_calloc((size_t)(md->m + md->k ? md->m + md->k : 1), sizeof *md->cname);
    if (!md->cname) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
    for (int j = 0; j < md->m + md->k; j++) {
        int nh = j >= md->m;
        const mbl_src_item *it = nh ? &s->nonholonomic.items[j - md->m] : &s->constraints.items[j];
        int named = nh ? s->named_nonholonomic : s->named_constraints;
        char cbuf[192];
        const char *kind = nh ? "non-holonomic constraint " : "constraint ";
        if (named)
            join3(cbuf, sizeof cbuf, kind, it->key, 140, "");
        else if (!it->key)
            model_indexed_text(cbuf, kind, (nh ? j - md->m : j) + 1, '\0');
        md->cname[j] = model_text_copy(md, it->key && !named ? it->key : cbuf);
        if (!md->cname[j]) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
    }
    int rc = mblx_graph_status(g, L->st);
    if (rc) return rc;
    md->nsym = (int)mblx_symbol_count(g);
    md->unknown_of_sym = mbl_alloc_array((size_t)md->nsym + 1, sizeof *md->unknown_of_sym);
    if (!md->unknown_of_sym) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
    md->sym_t = (int)mblx_symbol_index(g, md->t);
    for (int i = 0; i < md->np; i++) md->sym_p[i] = (int)mblx_symbol_index(g, md->p[i]);
    for (int i = 0; i < md->n; i++) {
        md->sym_of_unknown[ja + i] = (int)mblx_symbol_index(g, md->a[i]);
        md->sym_of_unknown[jv + i] = (int)mblx_symbol_index(g, md->v[i]);
        md->sym_of_unknown[jq + i] = (int)mblx_symbol_index(g, md->q[i]);
    }
    for (int j = 0; j < md->m; j++)
        md->sym_of_unknown[model_blk0(md, MBL_BLK_LAMBDA) + j] = (int)mblx_symbol_index(g, md->lam[j]);
    for (int j = 0; j < md->k; j++)
        md->sym_of_unknown[model_blk0(md, MBL_BLK_MU) + j] = (int)mblx_symbol_index(g, md->mu[j]);
    for (int j = 0; j < md->nr; j++)
        md->sym_of_unknown[model_blk0(md, MBL_BLK_R) + j] = (int)mblx_symbol_index(g, md->r[j]);
    for (int j = 0; j < md->nX; j++) {
        md->sym_of_unknown[model_blk0(md, MBL_BLK_X) + j] = (int)mblx_symbol_index(g, md->X[j]);
        md->sym_of_unknown[model_blk0(md, MBL_BLK_XD) + j] = (int)mblx_symbol_index(g, md->Xd[j]);
    }
    for (int j = 0; j < md->nZ; j++)
        md->sym_of_unknown[model_blk0(md, MBL_BLK_Z) + j] = (int)mblx_symbol_index(g, md->Z[j]);
    for (int s = 0; s < md->nsym; s++) md->unknown_of_sym[s] = -1;
    for (int j = 0; j < md->nunk; j++) md->unknown_of_sym[md->sym_of_unknown[j]] = j;
    return 0;
}

/* A plain number's value and node, as model_load_value gives them for it, without the what of a
 * message (the N = 10^4 four-bar's 20,003 initial coordinates); 0 when the text is not one of a
 * finite value (model_load_value then). */
static int number_value(loader *L, const mbl_src_item *it, double *val, mblx_id *node)
{
    mblx_id e;
    double v;
    if (!mblx__number_node(L->md->g, it->text, &e) || !mblx_is_const(L->md->g, e, &v) || !isfinite(v)) return 0;
    *val = v;
    *node = e;
    return 1;
}

/* linearize.penalty_alpha, _xi, _omega: numbers (expressions of parameters), alpha and omega > 0,
 * xi >= 0, as the penalty method requires (src/lin/penalty.c) */
static int load_penalty(loader *L, const mbl_src *s, mbl_model *md)
{
    const mbl_src_item *it[3] = {&s->pen_alpha, &s->pen_xi, &s->pen_omega};
    static const char *what[3] = {"linearize.penalty_alpha", "linearize.penalty_xi", "linearize.penalty_omega"};
    for (int i = 0; i < 3; i++) {
        if (!it[i]->text) continue;
        int rc = model_load_value(L, it[i], what[i], &md->pen[i], NULL);
        if (rc) return rc;
        double v = md->pen[i];
        if (!isfinite(v) || (i == 1 ? !(v >= 0) : !(v > 0)))
            return mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: %s must be a finite number %s, not %.17g", s->file,
                             it[i]->line, it[i]->col, what[i], i == 1 ? ">= 0" : "> 0", v);
        md->pen_given |= 1 << i;
    }
    return 0;
}

/* linearize.penalty_Xi, _Theta, _Omega: m numbers (a diagonal) or m x m (row by row), constant
 * expressions of the parameters; Xi and Omega symmetric positive definite, Theta symmetric positive
 * semidefinite (source 001 Eq. 11-12; mbl_lin_options' pen_Xi, ...); else an error at the key */
static int load_penalty_matrices(loader *L, const mbl_src *s, mbl_model *md)
{
    static const char *what[3] = {"linearize.penalty_Xi", "linearize.penalty_Theta", "linearize.penalty_Omega"};
    int m = md->m;
    for (int i = 0; i < 3; i++) {
        mbl_free(md->pen_mat[i]);
        md->pen_mat[i] = NULL;
        int rows = s->pen_mat_rows[i], ln = s->pen_mat_line[i], cl = s->pen_mat_col[i];
        if (!rows) continue;
        int cnt = rows < 0 ? s->pen_mat[i].n : rows;
        if (cnt != m)
            return mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: %s has %d %s, the model has %d holonomic constraints (in "
                             "the order of its constraints)", s->file, ln, cl, what[i], cnt,
                             rows < 0 ? "entries" : "rows", m);
        double *A = mbl_calloc((size_t)m * m + 1, sizeof *A);
        if (!A) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
        md->pen_mat[i] = A;
        for (int p = 0; p < s->pen_mat[i].n; p++) {
            double v;
            int rc = model_load_value(L, &s->pen_mat[i].items[p], what[i], &v, NULL);
            if (rc) return rc;
            if (rows < 0) A[p + (size_t)p * m] = v;
            else A[p / m + (size_t)(p % m) * m] = v; /* row by row in the file */
        }
        mbl_status st2;
        memset(&st2, 0, sizeof st2);
        if (mbla_sym_check(m, A, m, MBL_PEN_SYM_TOL, i == 1, &st2))
            return mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: %s: %s (it must be symmetric positive %sdefinite)",
                             s->file, ln, cl, what[i], st2.msg, i == 1 ? "semi" : "");
    }
    return 0;
}

int model_load_values(loader *L, const mbl_setting *sets, int nsets)
{
    mbl_model *md = L->md;
    mbl_src *s = L->src;
    for (int k = 0; k < nsets; k++) {
        size_t len = strlen(sets[k].name);
        if (model_find_name(&s->parameters, sets[k].name, len) >= 0) {
        } else if (model_find_name(&s->inputs, sets[k].name, len) >= 0) {
            return mbl_error(L->st, MBL_EARG,
                             "--set %s: '%s' is an input of the model %s, not a parameter (its value at the "
                             "operating point is the file's, under inputs:)",
                             sets[k].name, sets[k].name, s->file);
        } else if (model_find_name(&s->coordinates, sets[k].name, len) >= 0) {
            return mbl_error(L->st, MBL_EARG,
                             "--set %s: '%s' is a coordinate of the model %s, not a parameter (--guess %s=VALUE "
                             "starts the operating point there)",
                             sets[k].name, sets[k].name, s->file, sets[k].name);
        } else {
            return mbl_error(L->st, MBL_EARG, "--set %s: the model %s has no parameter '%s'", sets[k].name, s->file,
                             sets[k].name);
        }
        if (!isfinite(sets[k].value))
            return mbl_error(L->st, MBL_EARG, "--set %s: the value is not a finite number", sets[k].name);
    }
    for (int i = 0; i < md->np; i++) {
        const mbl_src_item *it = &s->parameters.items[i];
        int over = -1;
        for (int k = 0; k < nsets; k++)
            if (!strcmp(sets[k].name, it->key)) over = k;
        L->param_limit = i;
        mblx_id e;
        char what[160];
        join3(what, sizeof what, "parameter '", it->key, SIZE_MAX, "'");
        int rc = model_parse_item(L, it, SCOPE_PARAM, what, &e); /* parsed even when overridden: errors still count */
        if (rc) return rc;
        md->pexpr[i] = over >= 0 ? MBLX_NONE : e;
        md->pset[i] = over >= 0 ? sets[over].value : NAN;
        if (over >= 0) {
            md->pval[i] = sets[over].value;
        } else if (!(mblx_is_const(md->g, e, &md->pval[i]) && isfinite(md->pval[i]))) {
            /* a number (nearly every parameter) needs no tape, as model_load_value */
            rc = model_eval_params(L, e, it, what, &md->pval[i]);
            if (rc) return rc;
        }
    }
    char what[160];
    int rc = 0;
    for (int i = 0; i < md->n && !rc; i++) {
        if (number_value(L, &s->coordinates.items[i], &md->q0[i], &md->q0x[i])) continue;
        join3(what, sizeof what, "the initial value of coordinate '", s->coordinates.items[i].key, SIZE_MAX, "'");
        rc = model_load_value(L, &s->coordinates.items[i], what, &md->q0[i], &md->q0x[i]);
    }
    for (int i = 0; i < s->velocities.n && !rc; i++) {
        const mbl_src_item *it = &s->velocities.items[i];
        int j = model_find_name(&s->coordinates, it->key, strlen(it->key));
        join3(what, sizeof what, "the velocity of '", it->key, SIZE_MAX, "'");
        rc = model_load_value(L, it, what, &md->v0[j], &md->v0x[j]);
        /* held at a given point; a mechanism's joint rates derived from its bodies' velocities
         * (key2 "start") are only where the solve starts (model/held.c) */
        md->v_given[j] = it->key2 && !strcmp(it->key2, "start") ? 2 : 1;
    }
    for (int i = 0; i < md->nX && !rc; i++) {
        join3(what, sizeof what, "the value of ode state '", s->ode_states.items[i].key, SIZE_MAX, "'");
        rc = model_load_value(L, &s->ode_states.items[i], what, &md->X0[i], NULL);
    }
    for (int i = 0; i < md->nr && !rc; i++) {
        join3(what, sizeof what, "the value of input '", s->inputs.items[i].key, SIZE_MAX, "'");
        rc = model_load_value(L, &s->inputs.items[i], what, &md->r0[i], &md->r0x[i]);
    }
    if (rc) return rc;
    md->at = MBL_AT_EQUILIBRIUM;
    if (s->at.text) {
        if (!strcmp(s->at.text, "equilibrium")) md->at = MBL_AT_EQUILIBRIUM;
        else if (!strcmp(s->at.text, "given")) md->at = MBL_AT_GIVEN;
        else if (!strcmp(s->at.text, "steady")) md->at = MBL_AT_STEADY;
        else if (!strcmp(s->at.text, "trim") && s->trim_targets.n) md->at = MBL_AT_TRIM;
        else if (!strcmp(s->at.text, "trim"))
            return mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: linearize.at: trim needs a 'trim:' section with its targets",
                             s->file, s->at.line, s->at.col);
        else
            return mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: linearize.at must be equilibrium, given, steady or trim, not '%s'",
                             s->file, s->at.line, s->at.col, s->at.text);
    }
    if (s->time.text) {
        rc = model_load_value(L, &s->time, "linearize.time", &md->time, NULL);
        if (rc) return rc;
    }
    int rc_pen = load_penalty(L, s, md);
    return rc_pen ? rc_pen : load_penalty_matrices(L, s, md);
}
