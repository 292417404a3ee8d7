/* Models loaded with mbl_load_options.forward_jacobian (issue 31, item 2; issue 34, item 5): no
 * Jacobian tape; md->jac has the structural pattern of the rows the residual tape compiles, a
 * superset of the symbolic one's, and model_eval_jac's values (forward sweeps) equal the default
 * load's at random points to 1e-13 of each row's largest entry, with zeros where the default has
 * no entry; the linearization's A equals the default's to rounding; the expressions that
 * simulation, sensitivities and code generation read (model_dae_nodes) are built on first request
 * and evaluate to the same values; a model with a numerically evaluated term, or with rows or a
 * coloring wider than the forward path takes, loads as by default. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/mblin.h"
#include "model/model_internal.h"
#include "fixture.h"

/* the model file, or (text non-NULL) the model in text called file */
static mbl_model *load(const char *file, const char *text, int fwd)
{
    return fixture_model_fwd(text ? NULL : file, text, file, fwd);
}

/* 1 when a let node is reachable from e[0..n) */
static int any_let(const mblx_graph *g, size_t n, const mblx_id *e)
{
    size_t nn = mblx_node_count(g), ns = 0;
    unsigned char *seen = calloc(nn + 1, 1);
    mblx_id *stk = malloc((nn + n + 1) * sizeof *stk);
    int found = 0;
    for (size_t i = 0; i < n; i++)
        if (e[i] != MBLX_NONE) stk[ns++] = e[i];
    while (ns && !found) {
        mblx_id x = stk[--ns];
        if (seen[x]) continue;
        seen[x] = 1;
        found = mblx_node_op(g, x) == MBLX_OP_LET;
        for (int a = 0; a < mblx_node_nargs(g, x); a++)
            if (!seen[mblx_node_arg(g, x, a)]) stk[ns++] = mblx_node_arg(g, x, a);
    }
    free(seen), free(stk);
    return found;
}

/* position of (r, c) in J, -1 if none */
static int find(const mbl_sjac *J, int r, int c)
{
    for (int p = 0; p < J->nz; p++)
        if (J->row[p] == r && J->col[p] == c) return p;
    return -1;
}

/* The values ja of A's entries against jb of B's (B's pattern the structural one; pos: each A
 * entry's place in B, -1 where it has none), each relative to its row's largest |jb| (rmax: nrows,
 * hit: B's nz, scratch): w[0] the largest difference, w[1] the largest B entry A has not, w[2] the
 * largest A entry outside B's pattern. */
static void entries_against(const mbl_sjac *A, const double *ja, const mbl_sjac *B, const double *jb, const int *pos,
                            int nrows, double *rmax, char *hit, double w[3])
{
    w[0] = w[1] = w[2] = 0;
    for (int i = 0; i < nrows; i++) rmax[i] = 0;
    for (int p = 0; p < B->nz; p++) rmax[B->row[p]] = fmax(rmax[B->row[p]], fabs(jb[p])), hit[p] = 0;
    for (int p = 0; p < A->nz; p++)
        if (pos[p] >= 0) {
            w[0] = fmax(w[0], fabs(ja[p] - jb[pos[p]]) / fmax(rmax[A->row[p]], 1e-300));
            hit[pos[p]] = 1;
        } else {
            w[2] = fmax(w[2], fabs(ja[p]) / fmax(rmax[A->row[p]], 1e-300));
        }
    for (int p = 0; p < B->nz; p++)
        if (!hit[p]) w[1] = fmax(w[1], fabs(jb[p]) / fmax(rmax[B->row[p]], 1e-300));
}

static void same_model(const char *file, const char *text, int eligible)
{
    mbl_model *a = load(file, text, 0), *b = load(file, text, 1);
    if (!a || !b) {
        mbl_model_free(a), mbl_model_free(b);
        return;
    }
    CHECK_MSG((b->tape_jac == NULL) == eligible, "%s: forward path taken %d", file, b->tape_jac == NULL);
    CHECK_MSG((mblx_tape_fwdjac(b->tape_F) != NULL) == eligible, "%s: coloring on the residual tape", file);
    /* an entry of the default pattern (md->F's symbolic Jacobian) outside the forward one (the
     * structure of md->Fc, the rows the tape computes) must be identically zero: checked below */
    int *pos = malloc(((size_t)a->jac.nz + 1) * sizeof *pos), nmiss = 0;
    for (int p = 0; p < a->jac.nz; p++) nmiss += (pos[p] = find(&b->jac, a->jac.row[p], a->jac.col[p])) < 0;
    size_t ns = mblx_symbol_count(a->g), nw = a->work_size > b->work_size ? a->work_size : b->work_size;
    double *sv = calloc(ns + 1, sizeof *sv), *w = calloc(nw + 1, sizeof *w);
    double *ja = calloc((size_t)a->jac.nz + 1, sizeof *ja), *jb = calloc((size_t)b->jac.nz + 1, sizeof *jb);
    double *rmax = calloc((size_t)b->nF + 1, sizeof *rmax);
    char *hit = calloc((size_t)b->jac.nz + 1, 1);
    unsigned seed = 34;
    double worst = 0, worst_extra = 0, worst_miss = 0;
    mbl_status st;
    int good = 0;
    for (int trial = 0; trial < 40 && good < 5; trial++) {
        for (size_t s = 0; s < ns; s++) sv[s] = 0.2 + 0.15 * test_urand(&seed);
        int ra = model_eval_jac(a, sv, ja, w, &st);
        CHECK_EQ_INT(model_eval_jac(b, sv, jb, w, &st), ra); /* outside a data range both fail */
        if (ra) continue;
        good++;
        double wv[3];
        entries_against(&a->jac, ja, &b->jac, jb, pos, b->nF, rmax, hit, wv);
        worst = fmax(worst, wv[0]), worst_extra = fmax(worst_extra, wv[1]), worst_miss = fmax(worst_miss, wv[2]);
    }
    CHECK_MSG(good > 0, "%s: no random point inside the model's domain", file);
    CHECK_MSG(worst <= 1e-13, "%s: forward against default values: %.3g", file, worst);
    CHECK_MSG(worst_miss <= 1e-13, "%s: %d entries outside the forward pattern: %.3g", file, nmiss, worst_miss);
    CHECK_MSG(worst_extra <= 1e-13, "%s: entries only in the forward pattern: %.3g", file, worst_extra);
    /* the expressions, built on request, evaluate to the default's values; a forward load whose
     * tapes read the let form md->Fc leaves md->F's EOM rows to that request (md->Fdefer) */
    CHECK_MSG(!eligible || !b->Fc || (b->Fdefer && b->F[0] == MBLX_NONE), "%s: md->F's inlined rows deferred", file);
    const mblx_id *Fa, *Fb, *na, *nb;
    CHECK_EQ_INT(model_dae_nodes(a, &Fa, &na, &st), 0);
    CHECK_EQ_INT(model_dae_nodes(b, &Fb, &nb, &st), 0);
    CHECK_MSG(b->Fdefer == NULL, "%s: md->F built on request", file);
    /* a let-first load (parsed once, with lets) inlines its lets there: md->F has none, as by default */
    CHECK_MSG(!any_let(b->g, (size_t)b->nF, Fb) && !any_let(a->g, (size_t)a->nF, Fa), "%s: let nodes in md->F", file);
    {
        mblx_tape *fa = mblx_compile(a->g, (size_t)a->nF, Fa, &st), *fb = mblx_compile(b->g, (size_t)b->nF, Fb, &st);
        CHECK(fa && fb && a->nF == b->nF);
        size_t nwf = fa && fb ? (mblx_tape_work_size(fa) > mblx_tape_work_size(fb) ? mblx_tape_work_size(fa)
                                                                                    : mblx_tape_work_size(fb)) : 0;
        double *wf = calloc(nwf + 1, sizeof *wf), *ra = calloc((size_t)a->nF + 1, sizeof *ra);
        double *rb = calloc((size_t)a->nF + 1, sizeof *rb), worst_F = 0;
        if (fa && fb && good && mblx_tape_eval(fa, sv, ra, wf, &st) == 0) {
            CHECK_EQ_INT(mblx_tape_eval(fb, sv, rb, wf, &st), 0);
            for (int i = 0; i < a->nF; i++) worst_F = fmax(worst_F, fabs(ra[i] - rb[i]) / (1 + fabs(ra[i])));
        }
        CHECK_MSG(worst_F <= 1e-13, "%s: md->F's rows (built on request) against the default's: %.3g", file, worst_F);
        mblx_tape_free(fa), mblx_tape_free(fb);
        free(wf), free(ra), free(rb);
    }
    mblx_tape *ta = mblx_compile(a->g, (size_t)a->jac.nz, na, &st), *tb = mblx_compile(b->g, (size_t)b->jac.nz, nb, &st);
    CHECK(ta && tb);
    size_t nw2 = mblx_tape_work_size(ta) > mblx_tape_work_size(tb) ? mblx_tape_work_size(ta) : mblx_tape_work_size(tb);
    double *w2 = calloc(nw2 + 1, sizeof *w2), worst_nodes = 0;
    if (ta && tb && good) { /* at the last point inside the domain */
        CHECK_EQ_INT(mblx_tape_eval(ta, sv, ja, w2, &st), 0);
        CHECK_EQ_INT(mblx_tape_eval(tb, sv, jb, w2, &st), 0);
        for (int p = 0; p < a->jac.nz; p++)
            if (pos[p] >= 0) worst_nodes = fmax(worst_nodes, fabs(ja[p] - jb[pos[p]]) / (1 + fabs(ja[p])));
    }
    CHECK_MSG(worst_nodes <= 1e-13, "%s: model_dae_nodes' expressions: %.3g", file, worst_nodes);
    /* the linearization */
    mbl_point *pa = NULL, *pb = NULL;
    mbl_linear *la = NULL, *lb = NULL;
    CHECK_EQ_INT(mbl_operating_point(a, NULL, &pa, &st), 0);
    CHECK_EQ_INT(mbl_operating_point(b, NULL, &pb, &st), 0);
    if (pa && pb) {
        CHECK_EQ_INT(mbl_linearize(a, pa, NULL, &la, &st), 0);
        CHECK_EQ_INT(mbl_linearize(b, pb, NULL, &lb, &st), 0);
    }
    if (la && lb) {
        CHECK_EQ_INT(la->nx, lb->nx);
        double amax = 0, d = 0;
        for (int i = 0; i < la->nx * la->nx && la->nx == lb->nx; i++) {
            amax = fmax(amax, fabs(la->A[i]));
            d = fmax(d, fabs(la->A[i] - lb->A[i]));
        }
        CHECK_MSG(d <= 1e-12 * amax, "%s: A differs by %.3g (largest entry %.3g)", file, d, amax);
        printf("%s: forward %d, entries %d (default %d, %d outside), A differs by %.2g of %.3g; values %.2g, %.2g, "
               "%.2g, %.2g\n", file, eligible, b->jac.nz, a->jac.nz, nmiss, d, amax, worst, worst_extra, worst_miss,
               worst_nodes);
    }
    mbl_linear_free(la), mbl_linear_free(lb);
    mbl_point_free(pa), mbl_point_free(pb);
    mblx_tape_free(ta), mblx_tape_free(tb);
    free(pos), free(sv), free(w), free(ja), free(jb), free(rmax), free(hit), free(w2);
    mbl_model_free(a), mbl_model_free(b);
}

TEST(text_models)
{
    same_model("examples/fourbar_N5.yaml", NULL, 1);
    same_model("examples/whipple_bicycle_nonlinear.yaml", NULL, 1);
    same_model("examples/data/quarter_car.yaml", NULL, 1);
    same_model("examples/rolling_disc_speeds.yaml", NULL, 1);
    same_model("examples/mech/spatial_fourbar.yaml", NULL, 1); /* a mechanism without numeric terms */
}

/* A forward-mode load of a model with the let form parses its text once, with lets (model_let_first):
 * the expressions kept for the domain checks (srcx: the bicycle's sqrt and divisions) are those of
 * the let parse, where the default load's are inlined; the linearization is the same (above). */
TEST(let_first_parse)
{
    mbl_model *a = load("examples/whipple_bicycle_nonlinear.yaml", NULL, 0);
    mbl_model *b = load("examples/whipple_bicycle_nonlinear.yaml", NULL, 1);
    CHECK(a && b);
    if (a && b) {
        CHECK(a->nsrcx > 0 && b->nsrcx == a->nsrcx);
        CHECK_MSG(!any_let(a->g, (size_t)a->nsrcx, a->srcx), "default load: inlined domain expressions");
        CHECK_MSG(any_let(b->g, (size_t)b->nsrcx, b->srcx), "forward load: the domain expressions of the let parse");
        CHECK_MSG(mblx_node_count(b->g) < mblx_node_count(a->g), "nodes: forward %zu, default %zu",
                  mblx_node_count(b->g), mblx_node_count(a->g));
    }
    mbl_model_free(a), mbl_model_free(b);
}

TEST(numeric_terms_load_as_before)
{
    same_model("examples/mech/fourbar_N5.yaml", NULL, 0);      /* planar rigid bodies and joints, numeric */
    same_model("examples/flexible_pendulum_beams.yaml", NULL, 0); /* planar beam bodies, numeric */
}

/* K masses on springs whose positions sum to a constant (constraint rows of K entries: a coloring
 * needs at least K colors; the greedy one of mblx_fwdjac_new takes K + 1 to K + 2). The forward path
 * takes at most 48 colors (compile.c, FWD_MAX_COLORS): K = 46 takes it (47 colors), K = 48 is
 * declined by its coloring (its widest row, 48, passes), K = 60 by its widest row before any
 * coloring. */
static void sum_chain(int K, int eligible)
{
    static char text[16384];
    size_t n = 0;
#define PUT(...) (n += (size_t)snprintf(text + n, n < sizeof text ? sizeof text - n : 0, __VA_ARGS__))
    PUT("model: dae\nparameters: {m: 1.5, k: 40}\ncoordinates: {");
    for (int i = 0; i < K; i++) PUT("%sx%d: %g", i ? ", " : "", i, 1.0 / K + 0.01 * (i % 3 - 1));
    PUT("}\nkinetic_energy: \"");
    for (int i = 0; i < K; i++) PUT("%s0.5*m*(1 + 0.1*%d)*der(x%d)^2", i ? " + " : "", i % 5, i);
    PUT("\"\npotential_energy: \"");
    for (int i = 0; i < K; i++) PUT("%s0.5*k*(x%d - 0.01*%d)^2", i ? " + " : "", i, i % 4);
    PUT("\"\nconstraints: {sum: \"");
    for (int i = 0; i < K; i++) PUT("%sx%d", i ? " + " : "", i);
    PUT(" - 1\"}\nlinearize: {at: equilibrium}\n");
#undef PUT
    CHECK(n < sizeof text);
    char name[32];
    snprintf(name, sizeof name, "sum_chain_%d.yaml", K);
    if (n < sizeof text) same_model(name, text, eligible);
}

TEST(wide_rows_load_as_before)
{
    same_model("examples/flexible_pendulum_np5.yaml", NULL, 0); /* frame rows of 63 entries */
    sum_chain(46, 1);
    sum_chain(48, 0);
    sum_chain(60, 0);
}

/* With ode rows, projection asks whether the multipliers enter only as Phi_q^T lambda, by the
 * Jacobian's expressions (lin_multipliers_reactions_only): the same answer, note and A. */
static void same_projection(const char *file)
{
    mbl_model *a = load(file, NULL, 0), *b = load(file, NULL, 1);
    mbl_point *pa = NULL, *pb = NULL;
    mbl_linear *la = NULL, *lb = NULL;
    mbl_lin_options o;
    mbl_lin_options_default(&o);
    o.method = "projection";
    mbl_status st;
    if (a && b && !mbl_operating_point(a, NULL, &pa, &st) && !mbl_operating_point(b, NULL, &pb, &st)) {
        CHECK_EQ_INT(mbl_linearize(a, pa, &o, &la, &st), 0);
        CHECK_EQ_INT(mbl_linearize(b, pb, &o, &lb, &st), 0);
    }
    CHECK_MSG(la && lb, "%s: projection", file);
    if (la && lb) {
        CHECK_MSG(!strcmp(la->notes, lb->notes), "%s: notes differ:\n%s\n%s", file, la->notes, lb->notes);
        double amax = 0, d = 0;
        for (int i = 0; i < la->nx * la->nx && la->nx == lb->nx; i++) {
            amax = fmax(amax, fabs(la->A[i]));
            d = fmax(d, fabs(la->A[i] - lb->A[i]));
        }
        CHECK_MSG(la->nx == lb->nx && d <= 1e-12 * amax, "%s: projection's A differs by %.3g", file, d);
    }
    mbl_linear_free(la), mbl_linear_free(lb);
    mbl_point_free(pa), mbl_point_free(pb);
    mbl_model_free(a), mbl_model_free(b);
}

TEST(multipliers_in_ode_rows)
{
    same_projection("examples/ode/arm_friction_of_reaction.yaml"); /* they enter otherwise */
    same_projection("examples/ode/cart_pd_controller.yaml");       /* only as reactions */
}

/* A forward-mode load skips forming d2T/dv2 where T is structurally quadratic in the velocities,
 * and dc/dv where a non-holonomic constraint c is structurally linear in them (formulate.c,
 * structural_degree_within), and forms them otherwise: the same refusal as by default for kinetic
 * energies that are not quadratic and constraints that are not linear, and the same acceptance for
 * ones that are only once their variable is inlined (a let-first load checks the inlined form
 * before it refuses: depends_inlined). nh NULL: no non-holonomic constraint. */
static void same_load(const char *ke, const char *nh, const char *want)
{
    char text[768];
    snprintf(text, sizeof text,
             "model: dae\nparameters: {m: 2}\ncoordinates: {x: 0.1, y: 0.2, z: 0.3}\n"
             "variables: {w: \"der(x) + 2*der(y)\"}\nkinetic_energy: \"%s\"\n"
             "potential_energy: \"m*x^2 + y^2 + z^2\"\n%s%s%s",
             ke, nh ? "nonholonomic: [\"" : "", nh ? nh : "", nh ? "\"]\n" : "");
    for (int fwd = 0; fwd < 2; fwd++) {
        mbl_load_options lo;
        mbl_load_options_default(&lo);
        lo.forward_jacobian = fwd;
        mbl_status st;
        mbl_model *md = NULL;
        int rc = mbl_model_load_string_opt(text, strlen(text), "ke.yaml", NULL, 0, &lo, &md, &st);
        if (want)
            CHECK_MSG(rc == MBL_EMODEL && strstr(st.msg, want), "%s / %s (forward %d): %d %s", ke, nh ? nh : "", fwd,
                      rc, st.msg);
        else CHECK_MSG(rc == 0, "%s / %s (forward %d): %s", ke, nh ? nh : "", fwd, st.msg);
        mbl_model_free(md);
    }
}

static void same_refusal(const char *ke, const char *want) { same_load(ke, NULL, want); }

TEST(kinetic_energy_quadratic)
{
    const char *nq = "the kinetic energy is not quadratic in the velocities";
    same_refusal("0.5*m*der(x)^4 + w^2 + der(z)^2", nq);
    same_refusal("0.5*m*w^2*der(y) + der(z)^2", nq);
    same_refusal("m*w*sin(der(x)) + der(y)^2 + der(z)^2", nq);
    same_refusal("0.5*m*w^2 + 0.5*der(x)^2 + 0.1*cos(x)*der(x)*der(y) + der(y) + der(z)^2", NULL);
    /* cubic through the variable, quadratic once it is inlined: w*der(x)^2 - der(x)^3 - 2*der(y)*der(x)^2 */
    same_refusal("w*der(x)^2 - der(x)^3 - 2*der(y)*der(x)^2 + w^2 + der(z)^2", NULL);
}

TEST(nonholonomic_linear)
{
    const char *ke = "0.5*m*w^2 + 0.5*der(x)^2 + der(y)^2 + der(z)^2";
    const char *nl = "is not linear in the velocities";
    same_load(ke, "der(x)*w + der(z)", nl);
    same_load(ke, "sin(der(x)) + der(z)", nl);
    same_load(ke, "w*cos(x) + der(z)*y", NULL);
    /* quadratic through the variable, linear once it is inlined: der(x)^2 - der(x)^2 + der(z) */
    same_load(ke, "(w - 2*der(y))*der(x) - der(x)^2 + der(z)", NULL);
}

/* An evaluation of rows and their Jacobian's entries into [rows; entries] (model_eval_user_states,
 * model_eval_outputs) */
typedef int (*rows_eval)(const mbl_model *md, const double *syms, double *out, double *work, mbl_status *st);

/* The nrows rows and the entries (Ja, Jb) of the default load a and the forward load b by eval at
 * up to 5 random points inside the domain (*seed, advanced): the worst difference of the rows relative to 1 +
 * |row| in w[0], of A's entries relative to each row's largest in w[1], of B's entries A has not in
 * w[2]; the symbol values of the last good point in sv (ns of them), each row's largest |entry| in
 * rmax. The number of good points; every symbolic entry in B's pattern checked. */
static int rows_against(const mbl_model *a, const mbl_model *b, int nrows, const mbl_sjac *Ja, const mbl_sjac *Jb,
                        rows_eval eval, unsigned *seed, const char *file, double *sv, double *rmax, double w[3])
{
    int *pos = malloc(((size_t)Ja->nz + 1) * sizeof *pos), nmiss = 0;
    for (int p = 0; p < Ja->nz; p++) nmiss += (pos[p] = find(Jb, Ja->row[p], Ja->col[p])) < 0;
    CHECK_MSG(nmiss == 0, "%s: %d symbolic entries outside the structural pattern", file, nmiss);
    size_t ns = mblx_symbol_count(a->g), nw = a->work_size > b->work_size ? a->work_size : b->work_size;
    double *work = calloc(nw + 1, sizeof *work);
    double *ua = calloc((size_t)(nrows + Ja->nz) + 1, sizeof *ua), *ub = calloc((size_t)(nrows + Jb->nz) + 1, sizeof *ub);
    char *hit = calloc((size_t)Jb->nz + 1, 1);
    mbl_status st;
    int good = 0;
    w[0] = w[1] = w[2] = 0;
    for (int trial = 0; trial < 40 && good < 5; trial++) {
        for (size_t k = 0; k < ns; k++) sv[k] = 0.2 + 0.15 * test_urand(seed);
        int ra = eval(a, sv, ua, work, &st);
        CHECK_EQ_INT(eval(b, sv, ub, work, &st), ra);
        if (ra) continue;
        good++;
        for (int i = 0; i < nrows; i++) w[0] = fmax(w[0], fabs(ua[i] - ub[i]) / (1 + fabs(ua[i])));
        double wv[3];
        entries_against(Ja, ua + nrows, Jb, ub + nrows, pos, nrows, rmax, hit, wv);
        w[1] = fmax(w[1], wv[0]), w[2] = fmax(w[2], wv[1]);
    }
    CHECK_MSG(good > 0, "%s: no random point inside the model's domain", file);
    free(pos), free(work), free(ua), free(ub), free(hit);
    return good;
}

/* The user states of a forward-mode load: their Jacobian by the forward coloring of the rows' tape
 * (md->usjac its structural pattern, a superset of the default load's symbolic one, without nodes),
 * the rows and entries equal to the default load's at random points to 1e-13 of each row's largest
 * entry (zeros where the default has no entry); the entries' expressions built on request
 * (model_user_state_nodes, for mbl_dae_deriv_states) evaluate to the same values, and the states'
 * second derivatives along a direction are the default's (curved: states that are not coordinates,
 * whose second derivatives are not all zero). */
static void same_user_states(const char *file, int curved)
{
    mbl_model *a = load(file, NULL, 0), *b = load(file, NULL, 1);
    if (!a || !b) {
        mbl_model_free(a), mbl_model_free(b);
        return;
    }
    int ne = 3 * a->nus + 2 * a->nuvs;
    CHECK_MSG(ne > 0 && mblx_tape_fwdjac(b->tape_us) && !mblx_tape_fwdjac(a->tape_us), "%s: forward user states", file);
    CHECK_MSG(b->usjac.nz >= a->usjac.nz && a->usjac.nz > 0 && b->usjac.node[0] == MBLX_NONE, "%s: entries %d, default %d", file,
              b->usjac.nz, a->usjac.nz);
    size_t ns = mblx_symbol_count(a->g), nw = a->work_size > b->work_size ? a->work_size : b->work_size;
    double *sv = calloc(ns + 1, sizeof *sv), *w = calloc(nw + 1, sizeof *w);
    double *ub = calloc((size_t)(ne + b->usjac.nz) + 1, sizeof *ub);
    double *rmax = calloc((size_t)ne + 1, sizeof *rmax), wr[3];
    unsigned seed = 47;
    mbl_status st;
    int good = rows_against(a, b, ne, &a->usjac, &b->usjac, model_eval_user_states, &seed, file, sv, rmax, wr);
    double worst_rows = wr[0], worst = wr[1], worst_extra = wr[2];
    CHECK_MSG(worst_rows <= 1e-13, "%s: the rows' values: %.3g", file, worst_rows);
    CHECK_MSG(worst <= 1e-13, "%s: forward against symbolic entries: %.3g", file, worst);
    CHECK_MSG(worst_extra <= 1e-13, "%s: entries only in the structural pattern: %.3g", file, worst_extra);
    /* the entries' expressions, built on request, at the last point inside the domain */
    const mblx_id *nb = NULL;
    CHECK_EQ_INT(model_user_state_nodes(b, &nb, &st), 0);
    mblx_tape *tb = nb ? mblx_compile(b->g, (size_t)b->usjac.nz, nb, &st) : NULL;
    double *vb = calloc((size_t)b->usjac.nz + 1, sizeof *vb), worst_nodes = 0;
    double *w2 = tb ? calloc(mblx_tape_work_size(tb) + 1, sizeof *w2) : NULL;
    CHECK(tb != NULL);
    if (tb && good) {
        CHECK_EQ_INT(mblx_tape_eval(tb, sv, vb, w2, &st), 0);
        CHECK_EQ_INT(model_eval_user_states(b, sv, ub, w, &st), 0);
        for (int p = 0; p < b->usjac.nz; p++)
            worst_nodes = fmax(worst_nodes, fabs(vb[p] - ub[ne + p]) / fmax(rmax[b->usjac.row[p]], 1e-300));
    }
    CHECK_MSG(worst_nodes <= 1e-13, "%s: model_user_state_nodes' expressions: %.3g", file, worst_nodes);
    /* the states' position Jacobians and their derivative along a direction (mbl_dae_deriv_states) */
    mbl_point *pa = NULL;
    mbl_dae_deriv *da = NULL, *db = NULL;
    CHECK_EQ_INT(mbl_operating_point(a, NULL, &pa, &st), 0);
    CHECK_EQ_INT(mbl_dae_deriv_new(a, &da, &st), 0);
    CHECK_EQ_INT(mbl_dae_deriv_new(b, &db, &st), 0);
    int n = a->n, rows = 3 * a->nus;
    double *S[4], *dx = calloc((size_t)a->nunk + 1, sizeof *dx), dS = 0, dD = 0, smax = 0, dmax = 0;
    for (int k = 0; k < 4; k++) S[k] = calloc((size_t)rows * (size_t)n + 1, sizeof *S[k]);
    for (int c = 0; c < a->nunk; c++) dx[c] = 0.3 + 0.1 * test_urand(&seed);
    if (pa && da && db) {
        CHECK_EQ_INT(mbl_dae_deriv_states(da, pa, dx, -1, S[0], S[1], &st), 0);
        CHECK_EQ_INT(mbl_dae_deriv_states(db, pa, dx, -1, S[2], S[3], &st), 0);
        for (int i = 0; i < rows * n; i++) {
            smax = fmax(smax, fabs(S[0][i])), dmax = fmax(dmax, fabs(S[1][i]));
            dS = fmax(dS, fabs(S[0][i] - S[2][i])), dD = fmax(dD, fabs(S[1][i] - S[3][i]));
        }
        CHECK_MSG(!curved || dmax > 0, "%s: the states' second derivatives all zero", file);
    }
    CHECK_MSG(dS <= 1e-13 * smax && dD <= 1e-13 * dmax, "%s: Sq differs by %.3g of %.3g, dSq by %.3g of %.3g", file, dS,
              smax, dD, dmax);
    printf("%s: user states' entries %d (default %d); rows %.2g, entries %.2g, extra %.2g, nodes %.2g; Sq %.2g, dSq %.2g\n",
           file, b->usjac.nz, a->usjac.nz, worst_rows, worst, worst_extra, worst_nodes, dS, dD);
    for (int k = 0; k < 4; k++) free(S[k]);
    mbl_dae_deriv_free(da), mbl_dae_deriv_free(db);
    mbl_point_free(pa);
    mblx_tape_free(tb);
    free(sv), free(w), free(ub), free(rmax), free(vb), free(w2), free(dx);
    mbl_model_free(a), mbl_model_free(b);
}

TEST(user_states_forward)
{
    same_user_states("examples/mech/whipple_bicycle.yaml", 1); /* s, sdot, sddot of 7 states */
    same_user_states("tests/model/bicycle_like_qdot.yaml", 0); /* with velocity states w, wdot; coordinates */
    same_user_states("examples/rolling_disc_speeds.yaml", 0);
}

/* The outputs of a forward_jacobian load (compile.c, outputs_jacobian): the outputs' tape colored as
 * the user states', md->yjac the structural pattern without nodes; their values and their
 * Jacobian's (model_eval_outputs: forward sweeps) equal the default load's (symbolic entries) at
 * random points to 1e-13 of each row's largest entry, zeros where the default has no entry; the
 * view's work_y and the model's work_size hold the sweeps' work. */
static void same_outputs(const char *file)
{
    mbl_model *a = load(file, NULL, 0), *b = load(file, NULL, 1);
    if (!a || !b) {
        mbl_model_free(a), mbl_model_free(b);
        return;
    }
    int ny = a->ny;
    CHECK_MSG(ny > 0 && mblx_tape_fwdjac(b->tape_y) && !mblx_tape_fwdjac(a->tape_y), "%s: forward outputs", file);
    CHECK_MSG(b->yjac.nz >= a->yjac.nz && a->yjac.nz > 0 && b->yjac.node[0] == MBLX_NONE, "%s: entries %d, default %d", file,
              b->yjac.nz, a->yjac.nz);
    model_view v;
    model_view_get(b, &v);
    const mblx_fwdjac *J = mblx_tape_fwdjac(b->tape_y);
    size_t wy = J ? mblx_fwdjac_work_size(J, b->tape_y) : 0;
    CHECK_MSG(v.work_y == wy && b->work_size >= wy, "%s: work %zu, view %zu, model %zu", file, wy, v.work_y, b->work_size);
    double *sv = calloc(mblx_symbol_count(a->g) + 1, sizeof *sv), *rmax = calloc((size_t)ny + 1, sizeof *rmax), wr[3];
    unsigned seed = 48;
    rows_against(a, b, ny, &a->yjac, &b->yjac, model_eval_outputs, &seed, file, sv, rmax, wr);
    double worst_rows = wr[0], worst = wr[1], worst_extra = wr[2];
    CHECK_MSG(worst_rows <= 1e-13, "%s: the outputs' values: %.3g", file, worst_rows);
    CHECK_MSG(worst <= 1e-13, "%s: forward against symbolic entries: %.3g", file, worst);
    CHECK_MSG(worst_extra <= 1e-13, "%s: entries only in the structural pattern: %.3g", file, worst_extra);
    printf("%s: outputs' entries %d (default %d); rows %.2g, entries %.2g, extra %.2g\n", file, b->yjac.nz,
           a->yjac.nz, worst_rows, worst, worst_extra);
    free(sv), free(rmax);
    mbl_model_free(a), mbl_model_free(b);
}

TEST(outputs_forward)
{
    same_outputs("examples/mech/whipple_bicycle.yaml"); /* lean and steer of the quaternions */
    same_outputs("examples/mech/single_track_car.yaml"); /* a velocity */
    same_outputs("examples/slider_pendulum.yaml");       /* a text model's */
}

int main(void)
{
    RUN(text_models);
    RUN(let_first_parse);
    RUN(numeric_terms_load_as_before);
    RUN(wide_rows_load_as_before);
    RUN(multipliers_in_ode_rows);
    RUN(kinetic_energy_quadratic);
    RUN(nonholonomic_linear);
    RUN(user_states_forward);
    RUN(outputs_forward);
    return test_summary("fwd_load");
}
