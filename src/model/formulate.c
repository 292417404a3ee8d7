/* Formulation: from the text of a `model: dae` file to the canonical DAE as expressions,
 * their exact Jacobians and compiled tapes.
 *
 *   R = d/dt(dT/dv) - d(T - V - lambda.Phi)/dq + d(D + mu.c)/dv - F      (n, EOM residual)
 *   Phidd = d2 Phi/dt2, nhd = dc/dt, Phid = dPhi/dt, c = A v + b, Phi      (constraints)
 *
 * so M vdot + Phi_q^T lambda + A^T mu = Q with M = d2T/dv2 and the Coriolis, centrifugal,
 * geometric-stiffness and every higher derivative term exact by construction. */
#include "expr/gradient_terms.h"
#include "model/formulate.h"
#include "model/position_text.h"
#include "model/terms/term.h"

/* Does e depend on block blk as the inlined expression does? In a let-first load (L->let_first) a
 * let keeps its operand's dependences, which the inlined expression may cancel across variables
 * (w - der(x) with w = der(x) + der(y)): where the let form depends, the inlined form
 * (model_unlet) decides. Used where a dependence refuses the model (a forbidden block, a
 * non-linear or non-quadratic velocity dependence), so that a let-first load refuses exactly what
 * the inlined parse refuses; the checks that require a dependence read the let form. */
static int depends_inlined(loader *L, mblx_id e, int blk)
{
    int dep = model_depends_on_block(L->md, e, blk);
    if (!dep || !L->let_first) return dep;
    mblx_id x = e;
    if (model_unlet(L->md->g, 1, &x)) return dep; /* out of memory: the graph's status reports it */
    return model_depends_on_block(L->md, x, blk);
}

/* Name the first unknown block that e depends on among the forbidden ones, or -1: the blocks of
 * its dependence set found in one pass (a pass per forbidden block was 2.6 M instructions of the
 * N = 1000 four-bar's constraints), then, in a let-first load, each checked inlined. */
static int forbidden_block(loader *L, mblx_id e, unsigned mask)
{
    unsigned dep = model_dep_blocks(L->md, e) & mask;
    for (int b = 0; b < MBL_NBLK && dep; b++)
        if ((dep >> b) & 1u && depends_inlined(L, e, b)) return b;
    return -1;
}

static const char *block_word(int b)
{
    switch (b) {
    case MBL_BLK_A: return "accelerations (der(der(.)))";
    case MBL_BLK_V: return "velocities (der(.))";
    case MBL_BLK_Q: return "coordinates";
    case MBL_BLK_R: return "inputs";
    case MBL_BLK_XD: return "der() of ode states";
    case MBL_BLK_Z: return "implicit variables";
    case MBL_BLK_X: return "ode states";
    default: return "multipliers";
    }
}

static int check_deps(loader *L, mblx_id e, unsigned mask, const mbl_src_item *it, const char *what,
                      const char *hint)
{
    int b = forbidden_block(L, e, mask);
    if (b < 0) return 0;
    return mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: %s must not depend on %s%s", L->src->file, it->line, it->col, what,
                     block_word(b), hint ? hint : "");
}

#define BIT(b) (1u << (b))
/* multipliers, der() of ode states, implicit variables: not in energies, constraints or states */
#define BIT_EXT (BIT(MBL_BLK_LAMBDA) | BIT(MBL_BLK_MU) | BIT(MBL_BLK_XD) | BIT(MBL_BLK_Z))

/* One equation of the user ODEs (is_ode) or of an implicit variable: "expr" means der(x) = expr
 * (x = expr for an implicit variable, which expr may contain: x - v(..., x) = 0 of source 000
 * Eq. 10b), "lhs = rhs" an implicit equation; multipliers lambda(c) may be used. */
static int formulate_equation(loader *L, int is_ode, int j, mblx_id *out)
{
    mbl_model *md = L->md;
    mbl_src *s = L->src;
    const mbl_src_list *l = is_ode ? &s->ode : &s->implicit_variables;
    const char *name = is_ode ? md->xname[j] : md->zname[j];
    int e = is_ode ? model_find_name(l, name, strlen(name)) : j;
    const mbl_src_item *it = &l->items[e];
    char what[200];
    snprintf(what, sizeof what, "%s '%s'", is_ode ? "ode" : "implicit variable", name);
    char buf[512];
    snprintf(buf, sizeof buf, "%s:%d:%d: %s", s->file, it->line, it->col, what);
    md->eq_what[is_ode ? j : md->nX + j] = model_str_dup(buf);
    if (!md->eq_what[is_ode ? j : md->nX + j]) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
    L->allow_mult = 1;
    L->cname_refs = L->cname_calls = 0;
    int implicit = strchr(it->text, '=') != NULL, rc;
    mblx_id ex;
    if (implicit) rc = model_parse_equation(L, it, what, &ex);
    else rc = model_parse_item(L, it, SCOPE_FULL, what, &ex);
    L->allow_mult = 0;
    if (!rc && L->cname_refs != L->cname_calls)
        rc = mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: %s uses a constraint name outside lambda(name) or mu(name)",
                       s->file, it->line, it->col, what);
    if (rc) return rc;
    if (!implicit) ex = mblx_sub(md->g, is_ode ? md->Xd[j] : md->Z[j], ex);
    int blk = is_ode ? MBL_BLK_XD : MBL_BLK_Z;
    if (!model_depends_on_block(md, ex, blk))
        return mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: %s: the equation contains no %s, so it cannot determine %s%s%s",
                         s->file, it->line, it->col, what, is_ode ? "der() of an ode state" : "implicit variable",
                         is_ode ? "der(" : "", name, is_ode ? ")" : "");
    *out = ex;
    return 0;
}

/* The kinetic energy T (or the mass matrix turned into one), the potential energy V and the
 * dissipation D (zero when absent), each checked for the unknowns it may not use. */
static int formulate_energies(loader *L, mblx_id zero, mblx_id *T_out, mblx_id *V_out, mblx_id *D_out)
{
    mbl_model *md = L->md;
    mbl_src *s = L->src;
    mblx_graph *g = md->g;
    int rc;

    /* kinetic energy, or the mass matrix turned into one */
    mblx_id T = zero;
    if (s->has_mass_matrix) {
        size_t nt = (size_t)s->mass_matrix.n;
        mblx_id *terms = mbl_alloc_array(nt ? nt : 1, sizeof *terms);
        if (!terms) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
        size_t nterm = 0;
        for (int e = 0; e < s->mass_matrix.n; e++) {
            const mbl_src_item *it = &s->mass_matrix.items[e];
            int i = model_find_name(&s->coordinates, it->key, strlen(it->key));
            int j = model_find_name(&s->coordinates, it->key2, strlen(it->key2));
            char what[200];
            snprintf(what, sizeof what, "mass_matrix entry (%s, %s)", it->key, it->key2);
            mblx_id mij;
            rc = model_parse_item(L, it, SCOPE_POSITION, what, &mij);
            if (!rc)
                rc = check_deps(L, mij, BIT(MBL_BLK_A) | BIT(MBL_BLK_V) | BIT(MBL_BLK_R) | BIT_EXT, it, what, NULL);
            if (rc) {
                mbl_free(terms);
                return rc;
            }
            double factor = 0.5;
            if (i != j) {
                /* symmetric: an entry given once counts for both triangles; both given must agree */
                int other = -1;
                for (int f = 0; f < s->mass_matrix.n; f++)
                    if (!strcmp(s->mass_matrix.items[f].key, it->key2) && !strcmp(s->mass_matrix.items[f].key2, it->key))
                        other = f;
                if (other < 0) factor = 1.0;
                else if (other < e) {
                    /* compare with the one already parsed */
                    mblx_id mji;
                    rc = model_parse_item(L, &s->mass_matrix.items[other], SCOPE_POSITION, what, &mji);
                    if (rc) {
                        mbl_free(terms);
                        return rc;
                    }
                    if (mji != mij) {
                        mbl_free(terms);
                        return mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: mass_matrix is not symmetric: (%s, %s) differs from (%s, %s)",
                                         s->file, it->key_line, it->key_col, it->key, it->key2, it->key2, it->key);
                    }
                }
            }
            mblx_id fs[3] = {mij, md->v[i], md->v[j]};
            terms[nterm++] = mblx_scale(g, factor, mblx_product(g, 3, fs));
        }
        T = mblx_sum(g, nterm, terms);
        mbl_free(terms);
    } else {
        rc = model_parse_item(L, &s->kinetic_energy, SCOPE_FULL, "kinetic_energy", &T);
        if (!rc)
            rc = check_deps(L, T, BIT(MBL_BLK_A) | BIT(MBL_BLK_R) | BIT_EXT, &s->kinetic_energy, "kinetic_energy", NULL);
        if (rc) return rc;
        /* no der() at all: M = d2T/dv2 = 0, which the linearization names (lin_eval_init); the point
         * itself (equilibrium) needs no inertia. A mechanism's terms, and the structured terms
         * (flexible bodies'), may carry mass outside T. */
        if (!s->from_mechanism && !model_terms_in_src(s) && !model_depends_on_block(md, T, MBL_BLK_V)) {
            md->mass_zero_line = s->kinetic_energy.line > 0 ? s->kinetic_energy.line : 1;
            md->mass_zero_col = s->kinetic_energy.col > 0 ? s->kinetic_energy.col : 1;
        }
    }

    mblx_id V = zero, D = zero;
    if (s->potential_energy.text) {
        rc = model_parse_item(L, &s->potential_energy, SCOPE_FULL, "potential_energy", &V);
        if (!rc)
            rc = check_deps(L, V, BIT(MBL_BLK_A) | BIT(MBL_BLK_V) | BIT_EXT, &s->potential_energy, "potential_energy",
                            " (velocity-dependent forces go under 'forces' or 'dissipation')");
        if (rc) return rc;
    }
    if (s->dissipation.text) {
        rc = model_parse_item(L, &s->dissipation, SCOPE_FULL, "dissipation", &D);
        if (!rc) rc = check_deps(L, D, BIT(MBL_BLK_A) | BIT_EXT, &s->dissipation, "dissipation", NULL);
        if (rc) return rc;
    }
    *T_out = T, *V_out = V, *D_out = D;
    return 0;
}

static int structural_degree_within(loader *L, mblx_id T, int maxd);

/* The holonomic constraints Phi (m; a joint evaluated numerically gets zero) and the
 * non-holonomic ones nh (k, linear in the velocities), checked; no more of them than coordinates. */
static int formulate_constraints(loader *L, mblx_id zero, mblx_id *Phi, mblx_id *nh)
{
    mbl_model *md = L->md;
    mbl_src *s = L->src;
    mblx_graph *g = md->g;
    int n = md->n, m = md->m, k = md->k, rc;
    for (int j = 0; j < m; j++) {
        const mbl_src_item *it = &s->constraints.items[j];
        char what[64];
        if (L->term_row && L->term_row[j]) { /* a joint a structured term evaluates (claim_rows) */
            Phi[j] = zero;
            continue;
        }
        model_indexed_text(what, "constraint ", j + 1, '\0');
        rc = model_parse_equation(L, it, what, &Phi[j]);
        if (rc) return rc;
        rc = check_deps(L, Phi[j], BIT(MBL_BLK_A) | BIT(MBL_BLK_V) | BIT(MBL_BLK_R) | BIT_EXT | BIT(MBL_BLK_X), it, what,
                        " (a constraint on velocities goes under 'nonholonomic')");
        if (rc) return rc;
        if (!model_depends_on_block(md, Phi[j], MBL_BLK_Q)) {
            rc = mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: %s does not depend on any coordinate", s->file, it->line,
                           it->col, what);
            return rc;
        }
    }
    for (int j = 0; j < k; j++) {
        const mbl_src_item *it = &s->nonholonomic.items[j];
        char what[64];
        model_indexed_text(what, "non-holonomic constraint ", j + 1, '\0');
        rc = model_parse_equation(L, it, what, &nh[j]);
        if (rc) return rc;
        rc = check_deps(L, nh[j], BIT(MBL_BLK_A) | BIT(MBL_BLK_R) | BIT_EXT | BIT(MBL_BLK_X), it, what, NULL);
        if (rc) return rc;
        if (!model_depends_on_block(md, nh[j], MBL_BLK_V)) {
            rc = mbl_error(L->st, MBL_EMODEL,
                           "%s:%d:%d: %s does not contain any der(.) (a position constraint goes under 'constraints')",
                           s->file, it->line, it->col, what);
            return rc;
        }
        /* linear in the velocities: every dc/dv must be free of velocities (a forward-mode load
         * whose nh[j] is structurally linear forms no dc/dv: nothing on its path reads them) */
        int linear = md->forward_jacobian && structural_degree_within(L, nh[j], 1);
        for (int i = 0; i < n && !linear; i++) {
            if (!mblx_depends(g, nh[j], md->v[i])) continue;
            mblx_id d = mblx_diff(g, nh[j], md->v[i]);
            if (depends_inlined(L, d, MBL_BLK_V)) {
                rc = mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: %s is not linear in the velocities (in der(%s))", s->file,
                               it->line, it->col, what, md->qname[i]);
                return rc;
            }
        }
    }
    if (m + k > n) {
        rc = mbl_error(L->st, MBL_EMODEL, "%s: %d constraints (%d holonomic, %d non-holonomic) for %d coordinates: "
                       "more constraints than coordinates", s->file, m + k, m, k, n);
        return rc;
    }
    return 0;
}

/* The generalized forces by coordinate (Fgen, n). */
static int formulate_forces(loader *L, mblx_id zero, mblx_id *Fgen)
{
    mbl_model *md = L->md;
    mbl_src *s = L->src;
    int n = md->n, rc;

    /* generalized forces by coordinate */
    for (int i = 0; i < n; i++) Fgen[i] = zero;
    for (int e = 0; e < s->forces.n; e++) {
        const mbl_src_item *it = &s->forces.items[e];
        int i = model_find_name(&s->coordinates, it->key, strlen(it->key));
        char what[160];
        snprintf(what, sizeof what, "the force on '%s'", it->key);
        /* forces may use q'', multipliers lambda(c), ode states and implicit variables (source 000 Eq. 10c) */
        L->allow_mult = 1;
        L->cname_refs = L->cname_calls = 0;
        rc = model_parse_item(L, it, SCOPE_FULL, what, &Fgen[i]);
        L->allow_mult = 0;
        if (!rc && L->cname_refs != L->cname_calls)
            rc = mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: %s uses a constraint name outside lambda(name) or mu(name)",
                           s->file, it->line, it->col, what);
        if (rc) return rc;
        if (forbidden_block(L, Fgen[i], BIT_EXT) >= 0) md->ext = 1;
    }
    return 0;
}

/* 1 when T is structurally a polynomial of degree at most maxd (0 to 2) in the velocities (sums,
 * products, powers to non-negative integer constants of velocities, with factors free of them):
 * then d2T/dv2 (maxd 2), or dc/dv (maxd 1), is free of velocities without forming it. 0 otherwise
 * (not polynomial, a higher degree, or a cancellation the structure does not show: the symbolic
 * check decides). */
static int structural_degree_within(loader *L, mblx_id T, int maxd)
{
    const mbl_model *md = L->md;
    mblx_graph *g = md->g;
    size_t nn = mblx_node_count(g), ns = 0, cap = 64;
    /* the degrees found so far, kept from call to call (L->vdeg, grown with the graph): -1 not yet,
     * 0-2 the degree, 3 more or not polynomial; -2 while a node's operands are on the stack above
     * it (its class found and its operands pushed once: its next visit takes their degrees) */
    if (L->nvdeg < nn + 1) {
        signed char *x = mbl_realloc_array(L->vdeg, nn + 1, 1);
        if (x) memset(x + L->nvdeg, -1, nn + 1 - L->nvdeg), L->vdeg = x, L->nvdeg = nn + 1;
    }
    signed char *deg = L->nvdeg >= nn + 1 ? L->vdeg : NULL;
    int jv0 = model_blk0_inline(md, MBL_BLK_V), jv1 = model_blk0_inline(md, MBL_BLK_V + 1);
    mblx_id *stk = mbl_alloc_array(cap, sizeof *stk);
    int ok = deg && stk;
    if (ok) stk[ns++] = T;
    while (ok && ns) {
        mblx_id e = stk[ns - 1];
        if (deg[e] >= 0) {
            ns--;
            continue;
        }
        mblx_op op = mblx_node_op(g, e);
        int first = deg[e] == -1;
        if (first) {
            int dv = 0; /* model_depends_on_block(md, e, MBL_BLK_V), the block's bounds found once */
            size_t nd = 0;
            const uint32_t *deps = mblx_node_deps(g, e, &nd);
            for (size_t i = 0; i < nd && !dv; i++) {
                int u = (int)deps[i] < md->nsym ? md->unknown_of_sym[deps[i]] : -1;
                dv = u >= jv0 && u < jv1;
            }
            if (!dv) deg[e] = 0;
            else if (op == MBLX_OP_SYMBOL) deg[e] = 1;
            else if (op != MBLX_OP_ADD && op != MBLX_OP_MUL && op != MBLX_OP_POW && op != MBLX_OP_LET) deg[e] = 3;
            if (deg[e] >= 0) {
                ns--;
                continue;
            }
        }
        size_t na;
        const mblx_id *args = mblx_node_args(g, e, &na);
        int pending = 0, d = 0;
        for (size_t a = 0; a < na && ok && first; a++) {
            mblx_id c = args[a];
            if (deg[c] >= 0) continue;
            if (ns == cap) {
                mblx_id *x = mbl_realloc_array(stk, cap * 2, sizeof *x);
                if (!x) ok = 0;
                else stk = x, cap *= 2;
            }
            if (ok) stk[ns++] = c, pending = 1;
        }
        deg[e] = -2;
        if (!ok || pending) continue;
        if (op == MBLX_OP_POW) {
            mblx_id x = args[1];
            double k = mblx_node_op(g, x) == MBLX_OP_CONST ? mblx_node_value(g, x) : -1;
            d = k >= 0 && k <= 2 && k == floor(k) ? (int)k * deg[args[0]] : 3;
        } else {
            for (size_t a = 0; a < na; a++) {
                int da = deg[args[a]];
                d = op == MBLX_OP_MUL ? d + da : (da > d ? da : d);
            }
        }
        deg[e] = (signed char)(d > 3 ? 3 : d);
        ns--;
    }
    int within = ok && deg[T] <= maxd;
    for (size_t i = 0; i < ns; i++) /* out of memory: the nodes left on the stack not yet known */
        if (deg[stk[i]] == -2) deg[stk[i]] = -1;
    mbl_free(stk);
    return within;
}

/* pv = dT/dv (n), with T quadratic in the velocities. A forward-mode load whose T is structurally
 * quadratic leaves pv to md->F's inlined rows (MBLX_NONE: inlined_rows). */
static int kinetic_gradient(loader *L, mblx_id T, mblx_id *pv)
{
    mbl_model *md = L->md;
    mbl_src *s = L->src;
    mblx_graph *g = md->g;
    int n = md->n, rc;

    if (md->forward_jacobian && structural_degree_within(L, T, 2)) {
        for (int i = 0; i < n; i++) pv[i] = MBLX_NONE;
        return 0;
    }

    /* quadratic kinetic energy: M = d2T/dv2 free of velocities */
    rc = mblx_gradient(g, T, (size_t)n, md->v, pv);
    if (rc) {
        rc = mblx_graph_status(g, L->st);
        return rc;
    }
    {
        mblx_sparse H;
        rc = mblx_jacobian(g, (size_t)n, pv, (size_t)n, md->v, &H);
        if (rc) {
            rc = mblx_graph_status(g, L->st) ? mblx_graph_status(g, L->st) : mbl_error(L->st, rc, "out of memory");
            return rc;
        }
        for (int j = 0; j < n && !rc; j++)
            for (int p = H.colptr[j]; p < H.colptr[j + 1]; p++)
                if (depends_inlined(L, H.node[p], MBL_BLK_V)) {
                    const mbl_src_item *it = s->has_mass_matrix ? &s->mass_matrix.items[0] : &s->kinetic_energy;
                    rc = mbl_error(L->st, MBL_EMODEL,
                                   "%s:%d:%d: the kinetic energy is not quadratic in the velocities (d2T/dv2 "
                                   "entry (%s, %s) depends on velocities)",
                                   s->file, it->line, it->col, md->qname[H.rowidx[p]], md->qname[j]);
                    break;
                }
        mblx_sparse_free(&H);
        if (rc) return rc;
    }
    return 0;
}

/* g1 = d(T - V - lambda.Phi)/dq, g1_i the sum of the terms (*g1t)[g1p[i] .. g1p[i + 1]) (g1p n + 1
 * long, *g1t allocated: the EOM rows take g1's terms, eom_row), and g2 = d(D + mu.c)/dv (n). */
static int lagrangian_gradients(mbl_model *md, mbl_status *st, mblx_id T, mblx_id V, mblx_id D, const mblx_id *Phi,
                                const mblx_id *nh, size_t *g1p, mblx_id **g1t, mblx_id *g2)
{
    mblx_graph *g = md->g;
    int n = md->n, m = md->m, k = md->k, rc = 0;

    /* R = d/dt(dT/dv) - d(T - V - lambda.Phi)/dq + d(D + mu.c)/dv - F */
    {
        size_t nterm = (size_t)k + 1;
        mblx_id *terms = mbl_alloc_array(nterm, sizeof *terms);
        if (!terms) {
            rc = mbl_error(st, MBL_ENOMEM, "out of memory");
            return rc;
        }
        for (int j = 0; j < k; j++) terms[j] = mblx_mul(g, md->mu[j], nh[j]);
        mblx_id muC = mblx_sum(g, (size_t)k, terms);
        mbl_free(terms);
        mblx_id L2 = mblx_add(g, D, muC);
        /* L1's gradient without lambda.Phi made where its form allows (nodes no row keeps) */
        if (mblx__lagrangian_terms(g, mblx_sub(g, T, V), (size_t)m, md->lam, Phi, (size_t)n, md->q, g1p, g1t) ||
            mblx_gradient(g, L2, (size_t)n, md->v, g2)) {
            rc = mblx_graph_status(g, st);
            return rc;
        }
    }
    return rc;
}

/* The outputs' expressions (md->y). */
static int formulate_outputs(loader *L)
{
    mbl_model *md = L->md;
    mbl_src *s = L->src;
    int rc;

    /* outputs */
    md->y = mbl_calloc((size_t)(md->ny ? md->ny : 1), sizeof *md->y);
    if (!md->y) {
        rc = mbl_error(L->st, MBL_ENOMEM, "out of memory");
        return rc;
    }
    for (int j = 0; j < md->ny; j++) {
        const mbl_src_item *it = &s->outputs.items[j];
        char what[160];
        snprintf(what, sizeof what, "output '%s'", it->key);
        L->allow_mult = 1;
        L->cname_refs = L->cname_calls = 0;
        rc = model_parse_item(L, it, SCOPE_FULL, what, &md->y[j]);
        L->allow_mult = 0;
        if (!rc && L->cname_refs != L->cname_calls)
            rc = mbl_error(L->st, MBL_EMODEL,
                           "%s:%d:%d: %s uses a constraint name outside lambda(name) or mu(name)", s->file, it->line,
                           it->col, what);
        if (rc) return rc;
    }
    return 0;
}

/* Items of a quantity, what it is and its limit (mbl_src.validity, .singular) into *n expressions
 * x, their descriptions what (with the file position when `at`), limits' texts and numbers. */
static int formulate_limited(loader *L, const mbl_src_list *v, int at, int *n, mblx_id **x, char ***what,
                             char ***limit_text, double **limit)
{
    if (!v->n) return 0;
    *x = mbl_calloc((size_t)v->n, sizeof **x);
    *what = mbl_calloc((size_t)v->n, sizeof **what);
    *limit_text = mbl_calloc((size_t)v->n, sizeof **limit_text);
    *limit = mbl_calloc((size_t)v->n, sizeof **limit);
    if (!*x || !*what || !*limit_text || !*limit) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
    for (int j = 0; j < v->n; j++) {
        const mbl_src_item *it = &v->items[j];
        *n = j + 1; /* freed with the model from here on */
        const char *w = it->key ? it->key : "validity item";
        char pos[MBL_MSG_MAX];
        if (at) model_position_text(pos, sizeof pos, L->src->file, it->line, it->col, w);
        (*what)[j] = model_str_dup(at ? pos : w);
        (*limit_text)[j] = model_str_dup(it->key2 ? it->key2 : "0");
        if (!(*what)[j] || !(*limit_text)[j]) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
        (*limit)[j] = strtod((*limit_text)[j], NULL);
        int rc = model_parse_item(L, it, SCOPE_FULL, w, &(*x)[j]);
        if (rc) return rc;
    }
    return 0;
}

/* The validity items (mbl_src.validity -> md->val, checked at a solved point) and the singular
 * items (mbl_src.singular -> md->sing). */
static int formulate_validity(loader *L)
{
    mbl_model *md = L->md;
    int rc = formulate_limited(L, &L->src->validity, 0, &md->nval, &md->val, &md->val_what, &md->val_limit_text,
                               &md->val_limit);
    if (!rc)
        rc = formulate_limited(L, &L->src->singular, 1, &md->nsing, &md->sing, &md->sing_what, &md->sing_limit_text,
                               &md->sing_limit);
    return rc;
}

/* A relative-coordinate mechanism's bodies' kinematics (md->kin). */
static int formulate_kinematics(loader *L)
{
    mbl_model *md = L->md;
    mbl_src *s = L->src;
    int rc;

    /* relative-coordinate mechanisms: the bodies' kinematics, for the velocity transformation */
    if (s->kinematics.n) {
        md->kin = mbl_calloc((size_t)s->kinematics.n, sizeof *md->kin);
        md->kin_body = mbl_calloc((size_t)s->kinematics.n, sizeof *md->kin_body);
        if (!md->kin || !md->kin_body) {
            rc = mbl_error(L->st, MBL_ENOMEM, "out of memory");
            return rc;
        }
        md->nkin = s->kinematics.n;
        md->kin_planar = s->kin_planar;
        md->kin_budget = s->mem_budget > 0 ? s->mem_budget : MBL_MEM_BUDGET_DEFAULT;
        for (int j = 0; j < md->nkin; j++) {
            const mbl_src_item *it = &s->kinematics.items[j];
            char what[160];
            snprintf(what, sizeof what, "kinematics of body '%s'", it->key);
            if ((rc = model_parse_item(L, it, SCOPE_FULL, what, &md->kin[j]))) return rc;
            if (!(md->kin_body[j] = model_str_dup(it->key))) {
                rc = mbl_error(L->st, MBL_ENOMEM, "out of memory");
                return rc;
            }
        }
    }
    return 0;
}

/* A mechanism's rigid spatial bodies' frame coordinates (md->rframe, for at: steady's turning
 * frames): a body whose seven names are not all coordinates of the model is left out (its
 * accelerations stay 0 at a steady point, as before). */
static int formulate_rigid_frames(loader *L)
{
    mbl_model *md = L->md;
    const mbl_src_list *l = &L->src->rigid_frames;
    if (l->n < 7) return 0;
    md->rframe = mbl_alloc_array((size_t)l->n, sizeof *md->rframe);
    if (!md->rframe) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
    for (int b = 0; b + 7 <= l->n; b += 7) {
        int *q = md->rframe + 7 * md->nrframe, ok = 1;
        for (int k = 0; k < 7 && ok; k++) {
            const char *nm = l->items[b + k].text;
            q[k] = model_find_name(&L->src->coordinates, nm, strlen(nm));
            ok = q[k] >= 0;
        }
        md->nrframe += ok;
    }
    return 0;
}

/* The user states s(q, t) (md->us), and the arrays of both kinds of user states. */
static int formulate_user_states(loader *L)
{
    mbl_model *md = L->md;
    mbl_src *s = L->src;
    int rc;

    /* user states */
    md->nus = s->states.n;
    md->nuvs = s->velocity_states.n;
    md->us = mbl_calloc((size_t)(md->nus ? md->nus : 1), sizeof *md->us);
    md->uvs = mbl_calloc((size_t)(md->nuvs ? md->nuvs : 1), sizeof *md->uvs);
    md->us_text = mbl_calloc((size_t)(md->nus ? md->nus : 1), sizeof *md->us_text);
    md->uvs_text = mbl_calloc((size_t)(md->nuvs ? md->nuvs : 1), sizeof *md->uvs_text);
    if (!md->us || !md->uvs || !md->us_text || !md->uvs_text) {
        rc = mbl_error(L->st, MBL_ENOMEM, "out of memory");
        return rc;
    }
    /* an ode state named among the states is always a state of the linear model (x = [S; W; X]) */
    md->nus = 0;
    for (int j0 = 0; j0 < s->states.n; j0++) {
        const mbl_src_item *it = &s->states.items[j0];
        char what[64];
        if (model_find_name(&s->ode_states, it->text, strlen(it->text)) >= 0) continue;
        int j = md->nus++;
        snprintf(what, sizeof what, "state %d%s", j0 + 1, it->line ? "" : " (given)");
        rc = model_parse_item(L, it, SCOPE_FULL, what, &md->us[j]);
        if (!rc)
            rc = check_deps(L, md->us[j], BIT(MBL_BLK_A) | BIT(MBL_BLK_V) | BIT(MBL_BLK_R) | BIT_EXT | BIT(MBL_BLK_X), it, what,
                            " (velocity-level states go under 'velocity_states')");
        if (rc) return rc;
        if (!model_depends_on_block(md, md->us[j], MBL_BLK_Q)) {
            rc = mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: %s does not depend on any coordinate", s->file, it->line,
                           it->col, what);
            return rc;
        }
        md->us_text[j] = model_str_dup(it->text);
        if (!md->us_text[j]) {
            rc = mbl_error(L->st, MBL_ENOMEM, "out of memory");
            return rc;
        }
    }
    return 0;
}

/* The velocity states w(q, v, t) (md->uvs), linear in the velocities. */
static int formulate_velocity_states(loader *L)
{
    mbl_model *md = L->md;
    mbl_src *s = L->src;
    mblx_graph *g = md->g;
    int n = md->n, rc = 0;

    for (int j = 0; j < md->nuvs; j++) {
        const mbl_src_item *it = &s->velocity_states.items[j];
        char what[64];
        snprintf(what, sizeof what, "velocity state %d%s", j + 1, it->line ? "" : " (given)");
        rc = model_parse_item(L, it, SCOPE_FULL, what, &md->uvs[j]);
        if (!rc)
            rc = check_deps(L, md->uvs[j], BIT(MBL_BLK_A) | BIT(MBL_BLK_R) | BIT_EXT | BIT(MBL_BLK_X), it,
                            what, NULL);
        if (rc) return rc;
        for (int i = 0; i < n && !rc; i++) {
            if (!mblx_depends(g, md->uvs[j], md->v[i])) continue;
            if (depends_inlined(L, mblx_diff(g, md->uvs[j], md->v[i]), MBL_BLK_V))
                rc = mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: %s is not linear in the velocities", s->file, it->line,
                               it->col, what);
        }
        if (rc) return rc;
        if (!model_depends_on_block(md, md->uvs[j], MBL_BLK_V)) {
            rc = mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: %s does not contain any der(.)", s->file, it->line, it->col,
                           what);
            return rc;
        }
        md->uvs_text[j] = model_str_dup(it->text);
        if (!md->uvs_text[j]) {
            rc = mbl_error(L->st, MBL_ENOMEM, "out of memory");
            return rc;
        }
    }
    return rc;
}

/* The parts md->F's EOM and constraint rows are built from (model_formulate; kept in md->Fdefer
 * when a forward-mode load defers them). */
typedef struct model_inlined {
    mblx_id T, V, D;
    mblx_id *Phi, *nh, *Fgen, *pv; /* m, k, n, n */
    int unlet; /* parsed with lets (a let-first load): inlined first (model_unlet) */
} model_inlined;

/* A let-first load's parts with their lets inlined, in place (T, V, D, Phi, nh, Fgen, pv where made),
 * and md->F's ode and implicit rows likewise. */
static int unlet_parts(mbl_model *md, model_inlined *d, mbl_status *st)
{
    int n = md->n, m = md->m, k = md->k, nx = md->nX + md->nZ;
    size_t ne = 3 + (size_t)m + (size_t)k + 2 * (size_t)n + (size_t)nx;
    mblx_id *e = mbl_alloc_array(ne, sizeof *e), *p;
    if (!e) return mbl_error(st, MBL_ENOMEM, "out of memory");
    e[0] = d->T, e[1] = d->V, e[2] = d->D, p = e + 3;
    memcpy(p, d->Phi, (size_t)m * sizeof *p), p += m;
    memcpy(p, d->nh, (size_t)k * sizeof *p), p += k;
    memcpy(p, d->Fgen, (size_t)n * sizeof *p), p += n;
    memcpy(p, d->pv, (size_t)n * sizeof *p), p += n;
    memcpy(p, md->F + md->row0[MBL_ROW_ODE], (size_t)nx * sizeof *p);
    int rc = model_unlet(md->g, ne, e);
    if (!rc) {
        d->T = e[0], d->V = e[1], d->D = e[2], p = e + 3;
        memcpy(d->Phi, p, (size_t)m * sizeof *p), p += m;
        memcpy(d->nh, p, (size_t)k * sizeof *p), p += k;
        memcpy(d->Fgen, p, (size_t)n * sizeof *p), p += n;
        memcpy(d->pv, p, (size_t)n * sizeof *p), p += n;
        memcpy(md->F + md->row0[MBL_ROW_ODE], p, (size_t)nx * sizeof *p);
        d->unlet = 0;
    }
    mbl_free(e);
    return rc ? mbl_error(st, rc, "out of memory") : 0;
}

/* t[n] = x unless x is a constant 0 (which a sum adds to its constant, from 0: a term for nothing,
 * and one that stops mblx_sum's path for terms in canonical form late, after sorting the others) */
static size_t add_unless_zero(const mblx_graph *g, mblx_id *t, size_t n, mblx_id x)
{
    double c;
    if (x != MBLX_NONE && mblx_is_const(g, x, &c) && c == 0.0) return n;
    return t[n] = x, n + 1;
}

/* d/dt(dT/dv_i) as terms rt[rp[i] .. rp[i + 1]) without dT/dv made (mblx__rate_gradient_terms: a
 * T of a constant mass matrix), where every row's sum takes them as they are (by themselves: it
 * merges their like terms as dT/dv_i's sum did, in the same order); else 1, *rt NULL */
static int rate_rows(mbl_model *md, mblx_id T, size_t *rp, mblx_id **rt)
{
    uint32_t *seeds = model_total_der_seeds(md);
    size_t n = (size_t)md->n;
    int ok = seeds && !mblx__rate_gradient_terms(md->g, T, n, md->v, seeds, (size_t)md->nsym, rp, rt);
    for (size_t i = 0; i < n && ok; i++) ok = mblx__terms_by_themselves(md->g, rp[i + 1] - rp[i], *rt + rp[i]);
    mbl_free(seeds);
    if (!ok) mbl_free(*rt), *rt = NULL;
    return !ok;
}

/* md->F's EOM rows d/dt(dT/dv_i) - g1_i + g2_i - F_i (lagrangian_gradients), each from the terms
 * of g1_i (mblx__sum_minus_terms: the row's sum flattens g1_i into them, so neither g1_i nor its
 * negation is made where it would be flattened) and those of d/dt(dT/dv_i) (model_total_der_terms,
 * likewise: the sum is made only where the row would not flatten it; rt not NULL: rate_rows') */
static void eom_rows(mbl_model *md, const mblx_id *pv, const size_t *rp, const mblx_id *rt, const size_t *g1p,
                     const mblx_id *g1t, const mblx_id *g2, const mblx_id *Fgen)
{
    uint32_t *seeds = rt ? NULL : model_total_der_seeds(md);
    for (int i = 0; i < md->n; i++) {
        mblx_id t[MBLX_FLATTEN_MAX + 2];
        size_t nd = rt ? rp[i + 1] - rp[i] : 0;
        if (rt && nd) memcpy(t, rt + rp[i], nd * sizeof *t);
        else if (rt) t[0] = mblx_const(md->g, 0.0), nd = 1; /* dT/dv_i constant in time */
        else if (model_total_der_by(md, seeds, pv[i], t, &nd) == MBLX_NONE) t[0] = MBLX_NONE, nd = 1; /* failed: the row fails */
        /* (rate_rows' terms: by themselves, checked there) */
        if (nd > 1 && !rt && !mblx__terms_by_themselves(md->g, nd, t)) t[0] = mblx_sum(md->g, nd, t), nd = 1;
        size_t nt = add_unless_zero(md->g, t, add_unless_zero(md->g, t, nd, g2[i]), mblx_neg(md->g, Fgen[i]));
        md->F[i] = mblx__sum_minus_terms(md->g, nt, t, nd, g1p[i + 1] - g1p[i], g1t + g1p[i]);
    }
    mbl_free(seeds);
}

/* md->F's EOM rows d/dt(dT/dv) - d(T - V - lambda.Phi)/dq + d(D + mu.c)/dv - F and its constraint
 * rows (Phi, nh and their time derivatives). */
static int inlined_rows(mbl_model *md, model_inlined *d, mbl_status *st)
{
    mblx_graph *g = md->g;
    int n = md->n;
    if (d->unlet && unlet_parts(md, d, st)) return st ? st->code : MBL_ENOMEM;
    size_t *g1p = mbl_calloc((size_t)n + 1, sizeof *g1p), *rp = mbl_calloc((size_t)n + 1, sizeof *rp);
    mblx_id *g1t = NULL, *rt = NULL, *g2 = mbl_calloc((size_t)n + 1, sizeof *g2);
    int rc = !g1p || !g2 || !rp ? mbl_error(st, MBL_ENOMEM, "out of memory")
                                : lagrangian_gradients(md, st, d->T, d->V, d->D, d->Phi, d->nh, g1p, &g1t, g2);
    if (!rc && n && d->pv[0] == MBLX_NONE && rate_rows(md, d->T, rp, &rt) &&
        mblx_gradient(g, d->T, (size_t)n, md->v, d->pv)) /* kinetic_gradient's */
        rc = mblx_graph_status(g, st) ? mblx_graph_status(g, st) : mbl_error(st, MBL_ENOMEM, "out of memory");
    if (!rc) eom_rows(md, d->pv, rp, rt, g1p, g1t, g2, d->Fgen);
    if (!rc) model_constraint_rows(md, md->m, d->Phi, md->k, d->nh, md->F);
    mbl_free(g1p), mbl_free(g1t), mbl_free(g2), mbl_free(rp), mbl_free(rt);
    return rc ? rc : mblx_graph_status(g, st);
}

void model_inlined_free(mbl_model *md)
{
    model_inlined *d = md->Fdefer;
    if (!d) return;
    mbl_free(d->Phi), mbl_free(d->nh), mbl_free(d->Fgen), mbl_free(d->pv);
    mbl_free(d);
    md->Fdefer = NULL;
}

int model_inlined_rows(const mbl_model *md, mbl_status *st)
{
    if (!md->Fdefer) return 0;
    mbl_model *w = (mbl_model *)md; /* built once, under the graph lock */
    int rc = inlined_rows(w, md->Fdefer, st);
    if (!rc) model_inlined_free(w);
    return rc;
}

/* A forward-mode load keeps md->F's EOM and constraint rows for later when the tapes read md->Fc
 * (formulate_let.c) and no structured term merges into md->F (compile.c's forward_eligible, which
 * builds them if it refuses after all): it takes the parts (NULL in *d once taken). */
static int defer_inlined_rows(mbl_model *md, model_inlined *d, mbl_status *st)
{
    int defer = md->Fc && !md->Fs;
    for (int t = 0; t < MODEL_NTERMS && defer; t++)
        if (model_terms[t]->present(md)) defer = 0;
    if (!defer) return inlined_rows(md, d, st);
    model_inlined *k = mbl_alloc_array(1, sizeof *k);
    if (!k) return mbl_error(st, MBL_ENOMEM, "out of memory");
    *k = *d;
    d->Phi = d->nh = d->Fgen = d->pv = NULL;
    for (int i = 0; i < md->n; i++) md->F[i] = MBLX_NONE;
    for (int r = md->row0[MBL_ROW_PHIDD]; r < md->nF; r++) md->F[r] = MBLX_NONE;
    md->Fdefer = k;
    return 0;
}

int model_formulate(loader *L)
{
    mbl_model *md = L->md;
    mbl_src *s = L->src;
    mblx_graph *g = md->g;
    int n = md->n, m = md->m, k = md->k, rc;
    mblx_id zero = mblx_const(g, 0.0);

    mblx_id T = zero, V = zero, D = zero;
    rc = formulate_energies(L, zero, &T, &V, &D);
    if (rc) return rc;

    /* constraints */
    mblx_id *Phi = mbl_calloc((size_t)(m ? m : 1), sizeof *Phi);
    mblx_id *nh = mbl_calloc((size_t)(k ? k : 1), sizeof *nh);
    mblx_id *Fgen = mbl_calloc((size_t)(n ? n : 1), sizeof *Fgen);
    size_t *g1p = mbl_calloc((size_t)n + 1, sizeof *g1p);
    mblx_id *g1t = NULL, *g2 = mbl_calloc((size_t)n, sizeof *g2);
    mblx_id *pv = mbl_calloc((size_t)n, sizeof *pv);
    int nX = md->nX, nZ = md->nZ;
    md->nF = n + nX + nZ + 3 * m + 2 * k;
    md->F = mbl_calloc((size_t)md->nF, sizeof *md->F);
    if (!Phi || !nh || !Fgen || !g1p || !g2 || !pv || !md->F) {
        rc = mbl_error(L->st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    rc = formulate_constraints(L, zero, Phi, nh);
    if (rc) goto done;
    rc = formulate_forces(L, zero, Fgen);
    if (rc) goto done;
    rc = kinetic_gradient(L, T, pv);
    if (rc) goto done;
    /* a forward-mode load builds md->F's EOM and constraint rows after md->Fc (defer_inlined_rows) */
    int fwd = md->forward_jacobian;
    if (!fwd) rc = lagrangian_gradients(md, L->st, T, V, D, Phi, nh, g1p, &g1t, g2);
    if (rc) goto done;
    md->row0[MBL_ROW_EOM] = 0;
    md->row0[MBL_ROW_ODE] = n;
    md->row0[MBL_ROW_VAR] = n + nX;
    md->row0[MBL_ROW_PHIDD] = n + nX + nZ;
    md->row0[MBL_ROW_NHD] = md->row0[MBL_ROW_PHIDD] + m;
    md->row0[MBL_ROW_PHID] = md->row0[MBL_ROW_NHD] + k;
    md->row0[MBL_ROW_NH] = md->row0[MBL_ROW_PHID] + m;
    md->row0[MBL_ROW_PHI] = md->row0[MBL_ROW_NH] + k;
    md->row0[MBL_NROWG] = md->nF;
    if (nX || nZ) md->ext = 1;
    for (int j = 0; j < nX; j++) {
        rc = formulate_equation(L, 1, j, &md->F[md->row0[MBL_ROW_ODE] + j]);
        if (rc) goto done;
    }
    for (int j = 0; j < nZ; j++) {
        rc = formulate_equation(L, 0, j, &md->F[md->row0[MBL_ROW_VAR] + j]);
        if (rc) goto done;
    }
    if (!fwd) eom_rows(md, pv, NULL, NULL, g1p, g1t, g2, Fgen);
    rc = model_formulate_terms(L);
    if (rc) goto done;
    if (!fwd) model_constraint_rows(md, m, Phi, k, nh, md->F);
    rc = mblx_graph_status(g, L->st);
    model_let_parts parts = {T, V, D, Phi, nh};
    if (!rc) rc = model_formulate_let(L, Fgen, L->let_first ? &parts : NULL);
    if (!rc && fwd) {
        model_inlined d = {T, V, D, Phi, nh, Fgen, pv, L->let_first};
        rc = defer_inlined_rows(md, &d, L->st);
        Phi = d.Phi, nh = d.nh, Fgen = d.Fgen, pv = d.pv; /* NULL where md->Fdefer took them */
    }
    if (rc) goto done;

    rc = formulate_outputs(L);
    if (!rc) rc = model_formulate_held(L);
    if (!rc) rc = model_formulate_trim(L);
    if (rc) goto done;
    /* a mechanism's drawing */
    rc = model_read_draw(L, s);
    if (rc) goto done;
    rc = formulate_kinematics(L);
    if (!rc) rc = formulate_rigid_frames(L);
    if (rc) goto done;
    rc = formulate_validity(L);
    if (rc) goto done;
    rc = formulate_user_states(L);
    if (rc) goto done;
    rc = formulate_velocity_states(L);
    if (rc) goto done;
    rc = mblx_graph_status(g, L->st);

done:
    mbl_free(Phi);
    mbl_free(nh);
    mbl_free(Fgen);
    mbl_free(g1p);
    mbl_free(g1t);
    mbl_free(g2);
    mbl_free(pv);
    return rc;
}
