/* The outputs' Jacobian of a model with a tree's structured term (rtree.h; issue 34, item 3).
 *
 * An output of a body's pose (the URDF end-effector's DX .. AZ, a marker's position or axes)
 * reads the tree's kinematic nodes, the rotation A_b and origin r_b of a body. Differentiated
 * through them, its gradient re-walks the chain of rotations (Euler parameters, products of
 * quaternions, A from e) for every output: hundreds of tape instructions per joint and output.
 * Their derivatives are known in closed form (the tree's joint axes, as in rtree.c): a joint j
 * with axis S_j = [u_j; p_j x u_j] (revolute through p_j) or [0; u_j] (prismatic) that carries
 * body b turns and moves it rigidly,
 *     dA_b/dq_j = [u_j]x A_b,   dr_b/dq_j = u_j x (r_b - p_j)   (prismatic: 0, u_j).
 * So with y = f(x, K) (K the bodies' A and r as nodes, x the unknowns), G = df/dA_b (3 x 3),
 * g = df/dr_b, the partial derivatives at fixed K (one reverse sweep of f, which stops at K),
 *     dy/dq_j = df/dq_j + S_j . F_j,   F_j = sum over the bodies b that j carries of
 *     [w_b + r_b x g_b; g_b],  w = (N32 - N23, N13 - N31, N21 - N12), N = G A_b^T,
 * exact (the chain rule; the texts' own identities), and O(1) nodes per entry: F summed over the
 * subtree from the leaves. f is y with the kinematic nodes replaced by symbols no tape reads
 * (substituted back, as formulate_let.c does with lets). A kinematic node is cut only when it
 * depends on no unknown but the coordinates of its body's ancestors; an output that reads none
 * (a joint coordinate, a velocity measure's own derivatives) is differentiated as before.
 * With the kinematics computed natively (rtree_kin.c), f and the entries are also kept over the
 * stand-ins, with the joints' u and p as symbols too, for the outputs' own tape: it then reads the
 * poses' values instead of computing the chain of rotations again (r->ysn, r->yjsn). */
#include <stdio.h>
#include <string.h>

#include "model/model_internal.h"
#include "model/rtree.h"
#include "model/terms/rtree_num.h"
#include "model/terms/vec3_nodes.h"

/* the kinematic nodes of a body: A (9), r (3), e (4) */
#define NSLOT 16

typedef struct cutset {
    int nc;
    mblx_id *node, *sym; /* the kinematic node and its stand-in symbol */
    int *body, *slot;    /* its body and slot (0 .. 8: A row-major, 9 .. 11: r, 12 .. 15: e) */
    int *of;             /* node -> cut index, -1 (over the graph's nodes at the start) */
    unsigned char *qsym; /* symbol index -> 1 for a tree coordinate's symbol */
} cutset;

static void cutset_free(cutset *c)
{
    mbl_free(c->node), mbl_free(c->sym), mbl_free(c->body), mbl_free(c->slot), mbl_free(c->of), mbl_free(c->qsym);
}

/* does e depend on a tree coordinate? */
static int depends_on_tree(const mblx_graph *g, const cutset *c, size_t nsym, mblx_id e)
{
    size_t cnt;
    const uint32_t *d = mblx_node_deps(g, e, &cnt);
    for (size_t k = 0; k < cnt; k++)
        if (d[k] < nsym && c->qsym[d[k]]) return 1;
    return 0;
}

/* The kinematic nodes of the bodies (parents first: a node shared by two bodies is its first's)
 * that depend on a coordinate and on no unknown outside its body's ancestors' coordinates. */
static int find_cuts(mbl_model *md, const mbl_rtree_num *r, size_t nn, cutset *c, mbl_status *st)
{
    mblx_graph *g = md->g;
    int nb = model_rtree_num_nbodies(r), n = md->n, jq = model_blk0(md, MBL_BLK_Q), nsym = md->nsym;
    int *stamp = mbl_calloc((size_t)n + 1, sizeof *stamp);
    c->node = mbl_alloc_array(NSLOT * (size_t)nb + 1, sizeof *c->node);
    c->sym = mbl_alloc_array(NSLOT * (size_t)nb + 1, sizeof *c->sym);
    c->body = mbl_alloc_array(NSLOT * (size_t)nb + 1, sizeof *c->body);
    c->slot = mbl_alloc_array(NSLOT * (size_t)nb + 1, sizeof *c->slot);
    c->of = mbl_alloc_array(nn + 1, sizeof *c->of);
    c->qsym = mbl_calloc((size_t)nsym + 1, 1);
    if (!stamp || !c->node || !c->sym || !c->body || !c->slot || !c->of || !c->qsym) {
        mbl_free(stamp);
        return mbl_error(st, MBL_ENOMEM, "out of memory");
    }
    for (size_t e = 0; e < nn; e++) c->of[e] = -1;
    for (int b = 0; b < nb; b++) {
        int p, kind, q;
        const mblx_id *tn;
        model_rtree_num_body(r, b, &p, &kind, &q, &tn);
        if (q >= 0) c->qsym[mblx_symbol_index(g, md->q[q])] = 1;
    }
    int rc = 0;
    for (int b = 0; b < nb && !rc; b++) {
        int p, kind, q;
        const mblx_id *tn;
        for (int a = b; a >= 0; a = p) { /* b's ancestors' coordinates (b included) */
            model_rtree_num_body(r, a, &p, &kind, &q, &tn);
            if (q >= 0) stamp[q] = b + 1;
        }
        model_rtree_num_body(r, b, &p, &kind, &q, &tn);
        for (int s = 0; s < NSLOT; s++) {
            mblx_id e = tn[s < 9 ? MBL_RTREE_A + s : s < 12 ? MBL_RTREE_R + s - 9 : MBL_RTREE_E + s - 12];
            if ((size_t)e >= nn || c->of[e] >= 0 || mblx_is_const(g, e, NULL) || !depends_on_tree(g, c, (size_t)nsym, e))
                continue;
            size_t cnt;
            const uint32_t *d = mblx_node_deps(g, e, &cnt);
            int ok = 1;
            for (size_t k = 0; k < cnt && ok; k++) {
                if (d[k] >= (uint32_t)nsym) ok = 0;
                else {
                    int u = md->unknown_of_sym[d[k]];
                    ok = u < 0 || (u >= jq && u < jq + n && stamp[u - jq] == b + 1);
                }
            }
            if (!ok) continue;
            char name[48];
            snprintf(name, sizeof name, "rtree_cut#%d", c->nc);
            mblx_id sy = mblx_symbol(g, name);
            if (sy == MBLX_NONE) {
                rc = mblx_graph_status(g, st);
                break;
            }
            c->of[e] = c->nc;
            c->node[c->nc] = e, c->sym[c->nc] = sy, c->body[c->nc] = b, c->slot[c->nc] = s;
            c->nc++;
        }
    }
    mbl_free(stamp);
    return rc;
}

/* y with the cut nodes replaced by their symbols (map: the rebuilt node of each node, shared
 * across outputs; stk: a stack of at least *cap entries, grown as needed) */
static mblx_id rebuild(mblx_graph *g, const cutset *c, size_t nsym, mblx_id y, mblx_id *map, mblx_id **stk, size_t *cap)
{
    size_t ns = 0;
    (*stk)[ns++] = y;
    while (ns) {
        mblx_id e = (*stk)[ns - 1];
        if (map[e] != MBLX_NONE) {
            ns--;
            continue;
        }
        mblx_op op = mblx_node_op(g, e);
        int na = mblx_node_nargs(g, e);
        if (c->of[e] >= 0) {
            map[e] = c->sym[c->of[e]];
            ns--;
            continue;
        }
        if (op == MBLX_OP_CONST || op == MBLX_OP_SYMBOL || na == 0 || !depends_on_tree(g, c, nsym, e)) {
            map[e] = e;
            ns--;
            continue;
        }
        int pending = 0;
        for (int a = 0; a < na; a++) {
            mblx_id x = mblx_node_arg(g, e, a);
            if (map[x] != MBLX_NONE) continue;
            if (ns == *cap) {
                mblx_id *s = mbl_realloc_array(*stk, 2 * *cap, sizeof *s);
                if (!s) return MBLX_NONE;
                *stk = s;
                *cap *= 2;
            }
            (*stk)[ns++] = x, pending = 1;
        }
        if (pending) continue;
        mblx_id loc[8], *args = na <= 8 ? loc : mbl_alloc_array((size_t)na, sizeof *args);
        if (!args) return MBLX_NONE;
        int same = 1;
        for (int a = 0; a < na; a++) {
            args[a] = map[mblx_node_arg(g, e, a)];
            same &= args[a] == mblx_node_arg(g, e, a);
        }
        map[e] = same ? e : mblx_apply(g, op, mblx_node_value(g, e), (size_t)na, args);
        if (args != loc) mbl_free(args);
        if (map[e] == MBLX_NONE) return MBLX_NONE;
        ns--;
    }
    return map[y];
}

static int is_zero(const mblx_graph *g, mblx_id e)
{
    double v;
    return e == MBLX_NONE || (mblx_is_const(g, e, &v) && v == 0.0);
}

static mblx_id dot(mblx_graph *g, int n, const mblx_id *a, const mblx_id *b)
{
    mblx_id t[6];
    for (int k = 0; k < n; k++) t[k] = mblx_mul(g, a[k], b[k]);
    return mblx_sum(g, (size_t)n, t);
}

/* Row i's wrenches: the wrench Phi of each body whose cut nodes the output reads (adj: the
 * derivatives with respect to the cut symbols, substituted back) into Fs (6 per body, zero for
 * the others), has: those bodies' flags */
static void chain_phi(mbl_model *md, const mbl_rtree_num *r, const cutset *c, const mblx_id *kn, const mblx_id *adj,
                      mblx_id *G, mblx_id *Fs, unsigned char *has)
{
    mblx_graph *g = md->g;
    int nb = model_rtree_num_nbodies(r);
    mblx_id zero = mblx_const(g, 0.0);
    memset(has, 0, (size_t)nb);
    for (size_t k = 0; k < 6 * (size_t)nb; k++) Fs[k] = zero;
    /* the adjoints G (row-major), g and h (of e) of each body (G: NSLOT per body) */
    for (size_t k = 0; k < NSLOT * (size_t)nb; k++) G[k] = zero;
    for (int k = 0; k < c->nc; k++)
        if (!is_zero(g, adj[k])) G[NSLOT * (size_t)c->body[k] + (size_t)c->slot[k]] = adj[k], has[c->body[k]] = 1;
    for (int b = 0; b < nb; b++) {
        if (!has[b]) continue;
        int p, kind, q;
        const mblx_id *tn, *Gb = G + NSLOT * (size_t)b, *gr = Gb + 9, *h = Gb + 12;
        model_rtree_num_body(r, b, &p, &kind, &q, &tn);
        if (kn) tn = kn + (size_t)b * MBL_RTREE_NT;
        const mblx_id *A = tn + MBL_RTREE_A;
        mblx_id N[9], w[3], rg[3];
        for (int k = 0; k < 3; k++)
            for (int m = 0; m < 3; m++) {
                mblx_id a[3] = {A[3 * m], A[3 * m + 1], A[3 * m + 2]};
                N[3 * k + m] = k == m ? zero : dot(g, 3, Gb + 3 * k, a);
            }
        w[0] = mblx_sub(g, N[7], N[5]), w[1] = mblx_sub(g, N[2], N[6]), w[2] = mblx_sub(g, N[3], N[1]);
        /* de/dq_j = 1/2 (0, u_j) (x) e: h . de/dq_j = u_j . 1/2 (e0 h_v - h0 e_v + e_v x h_v) */
        const mblx_id *e = tn + MBL_RTREE_E;
        mblx_id eh[3];
        vec3_nodes_cross(g, e + 1, h + 1, eh);
        for (int k = 0; k < 3; k++) {
            mblx_id t[3] = {mblx_mul(g, e[0], h[1 + k]), mblx_neg(g, mblx_mul(g, h[0], e[1 + k])), eh[k]};
            w[k] = mblx_add(g, w[k], mblx_scale(g, 0.5, mblx_sum(g, 3, t)));
        }
        vec3_nodes_cross(g, tn + MBL_RTREE_R, gr, rg);
        for (int k = 0; k < 3; k++) Fs[6 * b + k] = mblx_add(g, w[k], rg[k]), Fs[6 * b + 3 + k] = gr[k];
    }
}

/* Row i's chain part from its wrenches (chain_phi): summed over subtrees (children come after
 * their parents), and S_j . F_j added to row[q column of j] */
static void chain_add(mbl_model *md, const mbl_rtree_num *r, const mblx_id *kn, mblx_id *Fs, unsigned char *has,
                      mblx_id *row)
{
    mblx_graph *g = md->g;
    int nb = model_rtree_num_nbodies(r), jq = model_blk0(md, MBL_BLK_Q);
    mblx_id zero = mblx_const(g, 0.0);
    for (int b = nb - 1; b >= 0; b--) {
        int p, kind, q;
        const mblx_id *tn;
        model_rtree_num_body(r, b, &p, &kind, &q, &tn);
        if (kn) tn = kn + (size_t)b * MBL_RTREE_NT;
        if (!has[b]) continue;
        if (q >= 0 && kind != MBL_RTREE_FIXED) {
            mblx_id S[6];
            for (int k = 0; k < 3; k++) S[k] = kind == MBL_RTREE_REV ? tn[MBL_RTREE_U + k] : zero;
            if (kind == MBL_RTREE_REV) vec3_nodes_cross(g, tn + MBL_RTREE_P, tn + MBL_RTREE_U, S + 3);
            else
                for (int k = 0; k < 3; k++) S[3 + k] = tn[MBL_RTREE_U + k];
            mblx_id e = dot(g, 6, S, Fs + 6 * b);
            row[jq + q] = is_zero(g, row[jq + q]) ? e : mblx_add(g, row[jq + q], e);
        }
        if (p < 0) continue;
        for (int k = 0; k < 6; k++) Fs[6 * p + k] = mblx_add(g, Fs[6 * p + k], Fs[6 * b + k]);
        has[p] = 1;
    }
}

/* room for one more pair (and 6 more wrench nodes when phi) in r's yc_ arrays (caps: their sizes) */
static int pairs_room(mbl_rtree_num *r, int phi, int *cap, int *pcap)
{
    if (r->nyc == *cap) {
        int c = 2 * *cap;
        int *b = mbl_realloc_array(r->yc_b, (size_t)c, sizeof *b);
        if (b) r->yc_b = b;
        int *f = b ? mbl_realloc_array(r->yc_phi, (size_t)c, sizeof *f) : NULL;
        if (f) r->yc_phi = f;
        int *p = f ? mbl_realloc_array(r->yc_pos, (size_t)c, sizeof *p) : NULL;
        if (!p) return -1;
        r->yc_pos = p, *cap = c;
    }
    if (phi && 6 * (r->nphi + 1) > *pcap) {
        mblx_id *y = mbl_realloc_array(r->yphn, 2 * (size_t)*pcap, sizeof *y);
        if (!y) return -1;
        r->yphn = y, *pcap *= 2;
    }
    return 0;
}

/* An output's pairs for the native chain parts (rtree_num.h, yc_*): each body d with a wrench (has,
 * Fs: chain_phi's) and each of d and its ancestors with a joint whose coordinate's entry is among
 * the output's entries J[p0 .. p1) (its place in y: after the ny outputs) */
static int chain_pairs(mbl_model *md, mbl_rtree_num *r, const mblx_id *Fs, const unsigned char *has,
                       const mbl_sjac *J, int p0, int p1, int *cap, int *pcap, mbl_status *st)
{
    int nb = model_rtree_num_nbodies(r), jq = model_blk0(md, MBL_BLK_Q);
    for (int d = nb - 1; d >= 0; d--) {
        if (!has[d]) continue;
        if (pairs_room(r, 1, cap, pcap)) return mbl_error(st, MBL_ENOMEM, "out of memory");
        memcpy(r->yphn + 6 * (size_t)r->nphi, Fs + 6 * (size_t)d, 6 * sizeof *Fs);
        int k = r->nphi++;
        for (int b = d, p, kind, q; b >= 0; b = p) {
            const mblx_id *tn;
            model_rtree_num_body(r, b, &p, &kind, &q, &tn);
            int pos = -1;
            for (int e = p0; e < p1 && q >= 0 && kind != MBL_RTREE_FIXED; e++)
                if (J->col[e] == jq + q) pos = md->ny + e;
            if (pos < 0) continue;
            if (pairs_room(r, 0, cap, pcap)) return mbl_error(st, MBL_ENOMEM, "out of memory");
            r->yc_b[r->nyc] = b, r->yc_phi[r->nyc] = k, r->yc_pos[r->nyc++] = pos;
        }
    }
    return 0;
}

/* The stand-ins of the native kinematics (rtree_num.h, r->kin): kn (nb * MBL_RTREE_NT) the texts'
 * nodes with each body's A, r, e that is cut replaced by its cut symbol and each joint's u, p that
 * is not a number by a symbol of its own; the sources of their values in r (st_sym, st_src). */
static int standins(mbl_model *md, mbl_rtree_num *r, const cutset *c, size_t nn, mblx_id *kn, mbl_status *st)
{
    mblx_graph *g = md->g;
    int nb = model_rtree_num_nbodies(r), cap = c->nc + 6 * nb + 1;
    r->st_sym = mbl_alloc_array((size_t)cap, sizeof *r->st_sym);
    r->st_src = mbl_alloc_array((size_t)cap, sizeof *r->st_src);
    if (!r->st_sym || !r->st_src) return mbl_error(st, MBL_ENOMEM, "out of memory");
    r->nst = 0;
    for (int k = 0; k < c->nc; k++) {
        int b = c->body[k], s = c->slot[k];
        int src = s < 9 ? b * NTV + MBL_RTREE_A + s : s < 12 ? b * NTV + MBL_RTREE_R + s - 9 : (int)r->nin + 4 * b + s - 12;
        r->st_sym[r->nst] = (int)mblx_symbol_index(g, c->sym[k]), r->st_src[r->nst++] = src;
    }
    for (int b = 0; b < nb; b++) {
        int p, kind, q;
        const mblx_id *tn;
        model_rtree_num_body(r, b, &p, &kind, &q, &tn);
        mblx_id *kb = kn + (size_t)b * MBL_RTREE_NT;
        memcpy(kb, tn, MBL_RTREE_NT * sizeof *kb);
        for (int s = 0; s < NSLOT; s++) {
            int at = s < 9 ? MBL_RTREE_A + s : s < 12 ? MBL_RTREE_R + s - 9 : MBL_RTREE_E + s - 12;
            mblx_id e = tn[at];
            if ((size_t)e < nn && c->of[e] >= 0) kb[at] = c->sym[c->of[e]];
        }
        if (q < 0 || kind == MBL_RTREE_FIXED) continue;
        for (int k = 0; k < 6; k++) {
            int at = k < 3 ? MBL_RTREE_U + k : MBL_RTREE_P + k - 3;
            if (mblx_is_const(g, tn[at], NULL)) continue;
            char name[48];
            snprintf(name, sizeof name, "rtree_kin#%d_%d", b, k);
            mblx_id sy = mblx_symbol(g, name);
            if (sy == MBLX_NONE) return mblx_graph_status(g, st);
            kb[at] = sy;
            r->st_sym[r->nst] = (int)mblx_symbol_index(g, sy), r->st_src[r->nst++] = b * NTV + at;
        }
    }
    return 0;
}

int model_rtree_num_yjac(mbl_model *md, mbl_rtree_num *r, int ny, const mblx_id *y, mbl_sjac *J, mbl_status *st)
{
    mblx_graph *g = md->g;
    size_t nn = mblx_node_count(g), cap = 64;
    int nu = md->nunk, nb = model_rtree_num_nbodies(r), nz0 = J->nz;
    cutset c;
    memset(&c, 0, sizeof c);
    int rc = find_cuts(md, r, nn, &c, st);
    int ns = nu + c.nc;
    long cut0 = c.nc ? mblx_symbol_index(g, c.sym[0]) : 0; /* the stand-in symbols' first index */
    mblx_id *syms = rc ? NULL : mbl_alloc_array((size_t)ns + 1, sizeof *syms);
    mblx_id *grad = rc ? NULL : mbl_alloc_array((size_t)ns + 1, sizeof *grad);
    mblx_id *map = rc ? NULL : mbl_alloc_array(nn + 1, sizeof *map), *stk = rc ? NULL : mbl_alloc_array(cap, sizeof *stk);
    mblx_id *Fs = rc ? NULL : mbl_alloc_array((6 + NSLOT) * (size_t)nb + 1, sizeof *Fs), *G = Fs ? Fs + 6 * (size_t)nb : NULL;
    unsigned char *has = rc ? NULL : mbl_calloc((size_t)nb + 1, 1);
    if (!rc && (!syms || !grad || !map || !stk || !Fs || !has)) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
    for (int j = 0; j < nu && !rc; j++) syms[j] = mblx_symbol_node(g, (size_t)md->sym_of_unknown[j]);
    for (int k = 0; k < c.nc && !rc; k++) syms[nu + k] = c.sym[k];
    for (size_t e = 0; e < nn && !rc; e++) map[e] = MBLX_NONE;
    for (int i = 0; i < ny && !rc; i++) {
        mblx_id f = c.nc ? rebuild(g, &c, (size_t)md->nsym, y[i], map, &stk, &cap) : y[i];
        if (f == MBLX_NONE || mblx_gradient(g, f, (size_t)ns, syms, grad)) {
            rc = mblx_graph_status(g, st) ? mblx_graph_status(g, st) : mbl_error(st, MBL_ENOMEM, "out of memory");
            break;
        }
        /* back to the kinematic nodes; then the chain part on the q columns */
        for (int j = 0; j < ns; j++)
            if (c.nc && !is_zero(g, grad[j])) grad[j] = mblx_subst(g, grad[j], (size_t)c.nc, c.sym, c.node);
        if (c.nc) {
            chain_phi(md, r, &c, NULL, grad + nu, G, Fs, has);
            chain_add(md, r, NULL, Fs, has, grad);
        }
        if ((rc = mblx_graph_status(g, st))) break;
        for (int j = 0; j < nu && !rc; j++) {
            if (is_zero(g, grad[j])) continue;
            /* no stand-in symbol may be left for a tape to read */
            size_t cnt;
            const uint32_t *d = mblx_node_deps(g, grad[j], &cnt);
            if (c.nc && cnt && (long)d[cnt - 1] >= cut0)
                rc = mbl_error(st, MBL_EMODEL, "%s: output %d: a cut symbol left in its Jacobian", md->file, i + 1);
            else if (model_sjac_push(J, i, j, grad[j]))
                rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        }
    }
    /* With the native kinematics, the same outputs and entries over the stand-ins (the gradients
     * again, the same nodes; their chain part over the stand-ins), made after all of the above so
     * that its nodes keep the places they had without it (the code generator's order) */
    mblx_id *kn = NULL;
    if (!rc && r->kin && nz0 == 0) {
        mbl_free(r->ysn), mbl_free(r->yjsn), mbl_free(r->st_sym), mbl_free(r->st_src), mbl_free(r->yphn);
        mbl_free(r->yc_b), mbl_free(r->yc_phi), mbl_free(r->yc_pos);
        r->st_sym = r->st_src = NULL, r->nyj = r->nst = r->nphi = r->nyc = 0;
        r->yphn = NULL, r->yc_b = r->yc_phi = r->yc_pos = NULL;
        kn = mbl_alloc_array((size_t)nb * MBL_RTREE_NT + 1, sizeof *kn);
        r->ysn = mbl_alloc_array((size_t)ny + 1, sizeof *r->ysn);
        r->yjsn = mbl_alloc_array((size_t)J->nz + 1, sizeof *r->yjsn);
        if (!kn || !r->ysn || !r->yjsn) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        if (!rc) rc = standins(md, r, &c, nn, kn, st);
        int icap = 16, pcap = 96;
        r->yc_b = mbl_alloc_array((size_t)icap, sizeof *r->yc_b);
        r->yc_phi = mbl_alloc_array((size_t)icap, sizeof *r->yc_phi);
        r->yc_pos = mbl_alloc_array((size_t)icap, sizeof *r->yc_pos);
        r->yphn = mbl_alloc_array((size_t)pcap, sizeof *r->yphn);
        if (!rc && (!r->yc_b || !r->yc_phi || !r->yc_pos || !r->yphn))
            rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        for (int i = 0, p = 0; i < ny && !rc; i++) {
            mblx_id f = c.nc ? rebuild(g, &c, (size_t)md->nsym, y[i], map, &stk, &cap) : y[i];
            if (f == MBLX_NONE || mblx_gradient(g, f, (size_t)ns, syms, grad)) {
                rc = mblx_graph_status(g, st) ? mblx_graph_status(g, st) : mbl_error(st, MBL_ENOMEM, "out of memory");
                break;
            }
            r->ysn[i] = f;
            int p0 = p; /* the entries' direct parts; their chain parts natively from the wrenches */
            for (; p < J->nz && J->row[p] == i; p++) r->yjsn[r->nyj++] = grad[J->col[p]];
            if (c.nc) {
                chain_phi(md, r, &c, kn, grad + nu, G, Fs, has);
                rc = chain_pairs(md, r, Fs, has, J, p0, p, &icap, &pcap, st);
            }
            if (!rc) rc = mblx_graph_status(g, st);
        }
        if (rc || r->nyj != J->nz) { /* the outputs' tape from md->y and md->yjac (rtree_kin.c) */
            mbl_free(r->ysn), mbl_free(r->yjsn), mbl_free(r->yphn);
            mbl_free(r->yc_b), mbl_free(r->yc_phi), mbl_free(r->yc_pos);
            r->ysn = r->yjsn = r->yphn = NULL, r->nyj = r->nphi = r->nyc = 0;
            r->yc_b = r->yc_phi = r->yc_pos = NULL;
        }
    }
    mbl_free(syms), mbl_free(grad), mbl_free(map), mbl_free(stk), mbl_free(Fs), mbl_free(has), mbl_free(kn);
    cutset_free(&c);
    return rc;
}
