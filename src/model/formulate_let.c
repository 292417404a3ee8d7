/* The residual rows formed a second time with the file's variables kept as let nodes: the
 * compiled form of large models (smaller tapes), equal in value to the inlined rows. */
#include "model/formulate.h"

/* map[x] for root and the nodes below it (map holds MBLX_NONE for those not yet rebuilt; the
 * graph's node count when it was allocated bounds the nodes visited): each node made again by
 * mblx_apply from its operands' maps, post-order. A let node e becomes on_let(ud, e) when on_let
 * is given (its operand not visited), else its operand's map (the let inlined). 0, or -1 (out of
 * memory or a failed node: the graph's status says which). */
static int let_rebuild(mblx_graph *g, mblx_id root, mblx_id *map, mblx_id (*on_let)(void *, mblx_id), void *ud)
{
    size_t stk_cap = 64, ns = 0;
    mblx_id *stk = mbl_alloc_array(stk_cap, sizeof *stk);
    int rc = -1;
    if (!stk) return -1;
    stk[ns++] = root;
    while (ns) {
        mblx_id e = stk[ns - 1];
        if (map[e] != MBLX_NONE) {
            ns--;
            continue;
        }
        mblx_op op = mblx_node_op(g, e);
        if (op == MBLX_OP_LET && on_let) {
            if ((map[e] = on_let(ud, e)) == MBLX_NONE) goto done;
            ns--;
            continue;
        }
        int na = mblx_node_nargs(g, e), pending = 0;
        for (int a = 0; a < na; a++) {
            mblx_id c = mblx_node_arg(g, e, a);
            if (map[c] != MBLX_NONE) continue;
            if (ns == stk_cap) { /* a shared operand can be on the stack more than once */
                mblx_id *x = mbl_realloc_array(stk, 2 * stk_cap, sizeof *x);
                if (!x) goto done;
                stk = x;
                stk_cap *= 2;
            }
            stk[ns++] = c, pending = 1;
        }
        if (pending) continue;
        if (op == MBLX_OP_CONST || op == MBLX_OP_SYMBOL || na == 0) {
            map[e] = e;
        } else if (op == MBLX_OP_LET) {
            map[e] = map[mblx_node_arg(g, e, 0)];
        } else {
            mblx_id loc[8], *args = na <= 8 ? loc : mbl_alloc_array((size_t)na, sizeof *args);
            if (!args) goto done;
            for (int a = 0; a < na; a++) args[a] = map[mblx_node_arg(g, e, a)];
            map[e] = mblx_apply(g, op, mblx_node_value(g, e), (size_t)na, args);
            if (args != loc) mbl_free(args);
            if (map[e] == MBLX_NONE) goto done;
        }
        ns--;
    }
    rc = 0;
done:
    mbl_free(stk);
    return rc;
}

/* e[0..n) with every let node inlined (the expressions a parse without lets gives, up to the order
 * of their nodes), in place. 0, or an error code (the graph's status). */
int model_unlet(mblx_graph *g, size_t n, mblx_id *e)
{
    size_t nn = mblx_node_count(g);
    mblx_id *map = mbl_alloc_array(nn ? nn : 1, sizeof *map);
    int rc = map ? 0 : MBL_ENOMEM;
    for (size_t x = 0; x < nn && map; x++) map[x] = MBLX_NONE;
    for (size_t i = 0; i < n && !rc; i++) {
        if (e[i] == MBLX_NONE || (size_t)e[i] >= nn) continue; /* made after the map: no let below it */
        if (let_rebuild(g, e[i], map, NULL, NULL)) rc = mblx_graph_status(g, NULL) ? mblx_graph_status(g, NULL) : MBL_ENOMEM;
        else e[i] = map[e[i]];
    }
    mbl_free(map);
    return rc;
}

/* lagrange_let's top-level lets: each replaced by a symbol of its own (u[k] -> us[k]) */
typedef struct top_lets {
    mblx_graph *g;
    mblx_id *u, *us;
    int K, cap;
} top_lets;

static mblx_id top_let(void *ud, mblx_id e)
{
    top_lets *t = ud;
    if (t->K == t->cap) {
        int cap = t->cap ? 2 * t->cap : 32;
        mblx_id *x = mbl_realloc_array(t->u, (size_t)cap, sizeof *x), *y = x ? mbl_realloc_array(t->us, (size_t)cap, sizeof *y) : NULL;
        if (x) t->u = x;
        if (!x || !y) return MBLX_NONE;
        t->us = y;
        t->cap = cap;
    }
    char name[48];
    snprintf(name, sizeof name, "let#%d", t->K);
    t->u[t->K] = e;
    t->us[t->K] = mblx_symbol(t->g, name);
    return t->us[t->K++];
}

/* out[i] = d/dt(dT/dv_i) - dT/dq_i for the kinetic energy T parsed with lets, through the lets
 * u_k that T uses directly (its top-level lets: body velocities): with T = f(u, q, v),
 *   out_i = d/dt(f_v_i) - f_q_i + sum_k [ d/dt(f_u_k) du_k/dv_i + f_u_k (d/dt(du_k/dv_i) - du_k/dq_i) ],
 * where the bracket is identically 0 for u_k = der(P) of a velocity-free P (the Coriolis terms of
 * the translational energy cancel there, as in Kane's equations: out_i = sum m P'' dP/dq_i), and
 * d/dt(f_u_k) (the rate of a body momentum) is one node shared by every row; there du_k/dv_i = dP/dq_i
 * is taken through P (L->derlet), shorter than der(P). f is T with its
 * top-level lets replaced by symbols that no tape reads (they are substituted back). In a
 * let-first load the other lets' brackets come from two reverse sweeps (lagrange_sweep); the
 * default load keeps one derivative per let and coordinate (its symbolic Jacobian tape came out
 * 2-7 % longer from the sweep's rows, docs/benchmarks.md, branch s22-bike). */
/* The lets u_k of T that are not der(P) (phi[0..nr): symbols no tape reads, G = sum phi_k u_k):
 *   sum_k dfu_k du_k/dv_i + fu_k (d/dt(du_k/dv_i) - du_k/dq_i) = d/dt([dG/dv_i](phi = fu)) - [dG/dq_i](phi = fu)
 * from two reverse sweeps of G instead of a derivative of every u_k along every coordinate and
 * velocity, into gv[n..2n) and gq[n..2n) (the two terms of row i). (Substituting phi = dfu and
 * phi = fu into dG/dv_i and d/dt(dG/dv_i) - dG/dq_i instead costs 0.12 M more on the bicycle.)
 * 0, or -1 (the graph's status). */
static int lagrange_sweep(mbl_model *md, mblx_id G, int nr, const mblx_id *phi, const mblx_id *fu, mblx_id *gv,
                          mblx_id *gq)
{
    mblx_graph *g = md->g;
    int n = md->n;
    mblx_id *sy = mbl_alloc_array((size_t)(4 * n), sizeof *sy), *gr = sy + 2 * n;
    if (!sy) return -1;
    memcpy(sy, md->v, (size_t)n * sizeof *sy), memcpy(sy + n, md->q, (size_t)n * sizeof *sy);
    if (mblx_gradient(g, G, (size_t)(2 * n), sy, gr)) return mbl_free(sy), -1;
    if (mblx_subst_many(g, (size_t)(2 * n), gr, (size_t)nr, phi, fu, gr)) return mbl_free(sy), -1;
    memcpy(gv + n, gr, (size_t)n * sizeof *gr), memcpy(gq + n, gr + n, (size_t)n * sizeof *gr);
    mbl_free(sy);
    for (int i = 0; i < n; i++) gv[n + i] = model_total_der(md, gv[n + i]), gq[n + i] = mblx_neg(g, gq[n + i]);
    return 0;
}

static int lagrange_let(loader *L, mblx_id T, mblx_id *out)
{
    mbl_model *md = L->md;
    mblx_graph *g = md->g;
    int n = md->n, rc = 0;
    size_t nn = mblx_node_count(g);
    mblx_id *map = mbl_alloc_array(nn, sizeof *map);
    mblx_id *fu = NULL, *fv = NULL, *fq = NULL, *terms = NULL;
    top_lets tl = {g, NULL, NULL, 0, 0};
    if (!map) goto oom;
    for (size_t e = 0; e < nn; e++) map[e] = MBLX_NONE;
    /* post-order rebuild of T down to its top-level lets */
    if (let_rebuild(g, T, map, top_let, &tl)) goto fail;
    int K = tl.K;
    mblx_id *u = tl.u, *us = tl.us;
    mblx_id f = map[T];
    fu = mbl_alloc_array((size_t)(K ? K : 1), sizeof *fu);
    fv = mbl_alloc_array((size_t)(2 * n), sizeof *fv);
    fq = mbl_alloc_array((size_t)(2 * n), sizeof *fq);
    terms = mbl_alloc_array((size_t)(2 * K + 3), sizeof *terms);
    if (!fu || !fv || !fq || !terms) goto oom;
    { /* one reverse sweep of f along the lets, v and q */
        size_t ns = (size_t)K + 2 * (size_t)n;
        mblx_id *sy = mbl_alloc_array(2 * ns, sizeof *sy), *gr = sy + ns;
        if (!sy) goto oom;
        memcpy(sy, us, (size_t)K * sizeof *sy), memcpy(sy + K, md->v, (size_t)n * sizeof *sy);
        memcpy(sy + K + n, md->q, (size_t)n * sizeof *sy);
        if (mblx_gradient(g, f, ns, sy, gr)) {
            mbl_free(sy);
            goto fail;
        }
        memcpy(fu, gr, (size_t)K * sizeof *fu), memcpy(fv, gr + K, (size_t)n * sizeof *fv);
        memcpy(fq, gr + K + n, (size_t)n * sizeof *fq);
        mbl_free(sy);
    }
    for (int k = 0; k < K; k++) fu[k] = mblx_subst(g, fu[k], (size_t)K, us, u);
    mblx_id *dfu = mbl_alloc_array((size_t)(K ? K : 1), sizeof *dfu);
    if (!dfu) goto oom;
    /* the lets that are not der(P): through G = sum phi_k u_k when sweeping (let-first loads) */
    int *dl = mbl_alloc_array((size_t)(K ? K : 1), sizeof *dl);
    mblx_id *phi = mbl_alloc_array((size_t)(2 * K + 1), sizeof *phi), *rf = phi + K;
    if (!dl || !phi) {
        mbl_free(dfu), mbl_free(dl), mbl_free(phi);
        goto oom;
    }
    int nr = 0;
    for (int k = 0; k < K; k++) {
        dl[k] = -1;
        for (int d = 0; d < L->nderlet && dl[k] < 0; d++)
            if (L->derlet[2 * d] == u[k]) dl[k] = d;
        /* the rate of a body momentum, for the der-lets' terms (the sweep's rows take their own) */
        dfu[k] = dl[k] < 0 && L->let_first ? MBLX_NONE : model_total_der(md, fu[k]);
        if (dl[k] < 0 && L->let_first) {
            char name[48];
            snprintf(name, sizeof name, "phi#%d", nr);
            phi[nr] = mblx_symbol(g, name), rf[nr] = fu[k];
            terms[nr] = mblx_mul(g, phi[nr], u[k]);
            nr++;
        }
    }
    if (nr && lagrange_sweep(md, mblx_sum(g, (size_t)nr, terms), nr, phi, rf, fv, fq)) {
        mbl_free(dfu), mbl_free(dl), mbl_free(phi);
        goto fail;
    }
    for (int i = 0; i < n; i++) {
        int nt = 0;
        mblx_id a = mblx_subst(g, fv[i], (size_t)K, us, u), b = mblx_subst(g, fq[i], (size_t)K, us, u);
        terms[nt++] = mblx_sub(g, model_total_der(md, a), b);
        if (nr) { /* sum_k dfu_k du_k/dv_i + fu_k (d/dt(du_k/dv_i) - du_k/dq_i) */
            terms[nt++] = fv[n + i];
            terms[nt++] = fq[n + i];
        }
        for (int k = 0; k < K; k++) {
            int der = dl[k];
            if (der < 0 && nr) continue;
            /* d(dP/dt)/dv_i = dP/dq_i: through P, not its longer time derivative */
            mblx_id jv = der >= 0 ? mblx_diff(g, L->derlet[2 * der + 1], md->q[i]) : mblx_diff(g, u[k], md->v[i]);
            terms[nt++] = mblx_mul(g, dfu[k], jv);
            if (der < 0) {
                mblx_id br = mblx_sub(g, model_total_der(md, jv), mblx_diff(g, u[k], md->q[i]));
                terms[nt++] = mblx_mul(g, fu[k], br);
            }
        }
        out[i] = mblx_sum(g, (size_t)nt, terms);
    }
    mbl_free(dfu), mbl_free(dl), mbl_free(phi);
    rc = mblx_graph_status(g, L->st);
    goto done;
oom:
    rc = mbl_error(L->st, MBL_ENOMEM, "out of memory");
    goto done;
fail:
    rc = mblx_graph_status(g, L->st);
    if (!rc) rc = mbl_error(L->st, MBL_ENOMEM, "out of memory");
done:
    mbl_free(map), mbl_free(tl.u), mbl_free(tl.us), mbl_free(fu), mbl_free(fv), mbl_free(fq);
    mbl_free(terms);
    return rc;
}

/* Does e contain a let node? */
static int has_let(const mblx_graph *g, mblx_id e)
{
    size_t nn = mblx_node_count(g), ns = 0, cap = 64;
    unsigned char *seen = mbl_calloc(nn ? nn : 1, 1);
    mblx_id *stk = mbl_alloc_array(cap, sizeof *stk);
    int found = 0;
    if (!seen || !stk) {
        mbl_free(seen), mbl_free(stk);
        return 1; /* out of memory: let the caller go on (it reports it) */
    }
    stk[ns++] = e;
    while (ns && !found) {
        mblx_id x = stk[--ns];
        if (seen[x]) continue;
        seen[x] = 1;
        if (mblx_node_op(g, x) == MBLX_OP_LET) found = 1;
        int na = mblx_node_nargs(g, x);
        for (int a = 0; a < na; a++) {
            if (ns == cap) {
                mblx_id *y = mbl_realloc_array(stk, 2 * cap, sizeof *y);
                if (!y) {
                    found = 1;
                    break;
                }
                stk = y;
                cap *= 2;
            }
            stk[ns++] = mblx_node_arg(g, x, a);
        }
    }
    mbl_free(seen), mbl_free(stk);
    return found;
}

/* The rows of the residual formed a second time with every variable of the file kept as one
 * shared node, let(its expression) (mblx_let), for the tapes only (md->Fc). The inlined rows md->F
 * flatten a variable into every product that uses it (sin(theta) * L3x with L3x = sps*sph is one
 * product of three), so d/dt(dT/dv) - dT/dq and then its Jacobian expand into long products that
 * differ by one factor; here dT/dv = sum_k dT/dw_k dw_k/dv through the variables w_k, the
 * derivatives of each variable are let nodes computed once, and the tape compiler reads let(x)
 * as x. The values are the same to rounding. md->F stays the model's rows for every analysis
 * (the Jacobian's pattern, second derivatives, code generation, checks): lets lose structural
 * cancellations, which the pattern must keep. Only the text rows (energies, constraints); models
 * without variables, with a mass matrix or with a structured term keep md->Fc NULL, and so do
 * mechanisms (their generated variables are short and the inlined form compiles 7-23 % shorter)
 * and models whose kinetic energy uses no variable (a four-bar: nothing to share, and the second
 * formulation cost the N = 300 four-bar 20 % of its loading). */
/* Models with this many coordinates or more keep the inlined rows for their tapes too. The
 * second formulation and its Jacobian cost a large model a quarter of its loading (the n_p = 10^4
 * `model: dae` flexible pendulum, n = 60,012: 15.3 -> 9.0 s CPU, 1.9 -> 1.8 GB), where its tapes
 * gain little (n_p = 1000: the Jacobian tape 383,170 against 399,292 instructions, the residual's
 * 433,530 against 420,912); the models whose tapes it halves (spatial vehicles and robots in
 * `model: dae` form) have tens of coordinates. */
#define LET_FORM_MAX_N 2000

/* A load that parses everything once, with lets (L->let_first): a forward-mode load (its tapes read
 * md->Fc; md->F's inlined rows are deferred, and made from these parts by model_unlet when asked)
 * of a model that can have the let form (as model_formulate_let below, with no structured term).
 * The inlined parse of every variable, the energies and the constraints was 10 % of the nonlinear
 * bicycle's instructions (docs/benchmarks.md, branch s22-bike). */
int model_let_first(const loader *L)
{
    const mbl_src *s = L->src;
    return s->forward_jacobian && s->variables.n && !s->has_mass_matrix && s->kinetic_energy.text && L->md->n &&
           !s->from_mechanism && L->md->n < LET_FORM_MAX_N && !model_terms_in_src(s);
}

int model_formulate_let(loader *L, const mblx_id *Fgen, const model_let_parts *parts)
{
    mbl_model *md = L->md;
    mbl_src *s = L->src;
    mblx_graph *g = md->g;
    int n = md->n, m = md->m, k = md->k, nv = s->variables.n, rc = 0;
    if (!nv || s->has_mass_matrix || !s->kinetic_energy.text || md->Fs || !n || s->from_mechanism ||
        n >= LET_FORM_MAX_N)
        return 0;
    int *state = mbl_calloc((size_t)nv, sizeof *state);
    mblx_id *node = mbl_calloc((size_t)nv, sizeof *node);
    mblx_id *Phi = mbl_calloc((size_t)(m ? m : 1), sizeof *Phi), *nh = mbl_calloc((size_t)(k ? k : 1), sizeof *nh);
    mblx_id *pv = mbl_calloc((size_t)n, sizeof *pv), *g1 = mbl_calloc((size_t)n, sizeof *g1);
    mblx_id *g2 = mbl_calloc((size_t)n, sizeof *g2);
    mblx_id *terms = mbl_calloc((size_t)(m > k ? m : k) + 1, sizeof *terms);
    md->Fc = mbl_calloc((size_t)md->nF, sizeof *md->Fc);
    if (!state || !node || !Phi || !nh || !pv || !g1 || !g2 || !terms || !md->Fc) {
        rc = mbl_error(L->st, MBL_ENOMEM, "out of memory");
        goto done;
    }
    mblx_id zero = mblx_const(g, 0.0), T = zero, V = zero, D = zero;
    if (parts) { /* parsed with lets already (model_let_first) */
        T = parts->T, V = parts->V, D = parts->D;
        if (m) memcpy(Phi, parts->Phi, (size_t)m * sizeof *Phi);
        if (k) memcpy(nh, parts->nh, (size_t)k * sizeof *nh);
        if (!has_let(g, T)) {
            mbl_free(md->Fc);
            md->Fc = NULL;
            goto done;
        }
        goto formed;
    }
    int *state0 = L->var_state;
    mblx_id *node0 = L->var_node;
    L->var_state = state;
    L->var_node = node;
    L->let_vars = 1;
    rc = model_parse_item(L, &s->kinetic_energy, SCOPE_FULL, "kinetic_energy", &T);
    if (!rc && !has_let(g, T)) { /* no variable in the kinetic energy: nothing to share (a four-bar) */
        L->let_vars = 0;
        L->var_state = state0;
        L->var_node = node0;
        rc = mblx_graph_status(g, L->st);
        if (!rc) {
            mbl_free(md->Fc);
            md->Fc = NULL;
        }
        goto done;
    }
    if (!rc && s->potential_energy.text) rc = model_parse_item(L, &s->potential_energy, SCOPE_FULL, "potential_energy", &V);
    if (!rc && s->dissipation.text) rc = model_parse_item(L, &s->dissipation, SCOPE_FULL, "dissipation", &D);
    for (int j = 0; j < m && !rc; j++) rc = model_parse_equation(L, &s->constraints.items[j], "constraint", &Phi[j]);
    for (int j = 0; j < k && !rc; j++) rc = model_parse_equation(L, &s->nonholonomic.items[j], "non-holonomic constraint", &nh[j]);
    L->let_vars = 0;
    L->var_state = state0;
    L->var_node = node0;
    if (rc) goto done;
formed:
    /* R = d/dt(dT/dv) - d(T - V - lambda.Phi)/dq + d(D + mu.c)/dv - F, as model_formulate() */
    for (int j = 0; j < m; j++) terms[j] = mblx_mul(g, md->lam[j], Phi[j]);
    mblx_id lamPhi = mblx_sum(g, (size_t)m, terms);
    for (int j = 0; j < k; j++) terms[j] = mblx_mul(g, md->mu[j], nh[j]);
    mblx_id muC = mblx_sum(g, (size_t)k, terms);
    rc = lagrange_let(L, T, pv);
    if (rc) goto done;
    if (mblx_gradient(g, mblx_add(g, V, lamPhi), (size_t)n, md->q, g1) ||
        mblx_gradient(g, mblx_add(g, D, muC), (size_t)n, md->v, g2)) {
        rc = mblx_graph_status(g, L->st);
        goto done;
    }
    memcpy(md->Fc, md->F, (size_t)md->nF * sizeof *md->Fc);
    for (int i = 0; i < n; i++) {
        mblx_id t4[4] = {pv[i], g1[i], g2[i], mblx_neg(g, Fgen[i])};
        md->Fc[i] = mblx_sum(g, 4, t4);
    }
    model_constraint_rows(md, m, Phi, k, nh, md->Fc);
    rc = mblx_graph_status(g, L->st);
done:
    if (rc) {
        mbl_free(md->Fc);
        md->Fc = NULL;
    }
    mbl_free(state), mbl_free(node), mbl_free(Phi), mbl_free(nh), mbl_free(pv), mbl_free(g1), mbl_free(g2);
    mbl_free(terms);
    return rc;
}
