/* The compiler's shortcuts against the passes they skip (issue 31, item 2, session 34, src/expr/tape.c):
 * - the emission feeds the scheduler: each instruction is written into the scheduler's window and
 *   its level and reads noted as it is emitted, a full window sorted into the tape at once (before,
 *   the tape was written whole in SSA order and tape_schedule.c read it again for the levels, then
 *   copied each window to sort it); compared with the same compilations emitted in SSA order and
 *   scheduled after (mblx__schedule_after_mode, the former path);
 * - the numbering records the events: where the shared form is the sub-DAG as it is (no pair nor
 *   chain link shared), the events and marks are those number_sub_dag recorded during its
 *   traversal, not those of a second traversal of the copy; compared with that traversal
 *   (mblx__events_mode), and the shortcut counted as taken.
 * The same instructions (operation, registers, constant's bits), runs, instructions' nodes, step
 * operands and output registers, for
 * - a graph of several windows (the last partial) with steps, lets, constants read only as
 *   immediate exponents and read both ways, an output given twice and an output that is a symbol,
 *   compiled unbound and bound, with every value an output (the numbering's events) and a part;
 * - a tape of one window and of one instruction;
 * - the residual and Jacobian tapes of examples/fourbar_N300.yaml and the nonlinear bicycle (the
 *   model compile, several tapes, loaded both ways).
 * And the tapes' values against the same recursion evaluated in C; and the table of the registers
 * an opcode reads (mblx__ti_reads) against its definition. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr/tape_internal.h"
#include "fixture.h"
#include "mblin/expr.h"
#include "model/model_internal.h"
#include "tape_compare.h"
#include "test.h"

enum { K = 20000, NS = 5 };

static mblx_graph *G;
static mblx_id E[K], S[NS];
static double REF[K], SV[NS];

static double step_ref(double x, double x0, double h0, double x1, double h1)
{
    if (x <= x0) return h0;
    if (x >= x1) return h1;
    double d = (x - x0) / (x1 - x0);
    return h0 + (h1 - h0) * d * d * (3 - 2 * d);
}

/* x_k from earlier values: chains crossing windows, steps, powers with constant exponents (the
 * exponent only an immediate), sums of three with a constant. */
static void make_graph(void)
{
    static const char *names[NS] = {"u", "v", "w", "x", "y"};
    G = mblx_graph_new();
    for (int j = 0; j < NS; j++) S[j] = mblx_symbol(G, names[j]), SV[j] = 0.2 + 0.13 * j;
    for (int k = 0; k < K; k++) {
        /* a: a value 1 to 223 back (levels a few hundred wide), b: one about k / 2 */
        int j = k % NS, back = 1 + k % 7 * 37, h = k > 1 ? k / 2 - 1 : -1;
        mblx_id a = k >= back ? E[k - back] : S[0], b = h >= 0 ? E[h] : S[1];
        double ra = k >= back ? REF[k - back] : SV[0], rb = h >= 0 ? REF[h] : SV[1];
        switch (k % 5) {
        case 0: /* (2.5: first an immediate exponent here, then read as a register below) */
            E[k] = mblx_sin(G, mblx_powc(G, mblx_abs(G, mblx_add(G, a, S[j])), 2.5));
            REF[k] = sin(pow(fabs(ra + SV[j]), 2.5));
            break;
        case 1:
            /* (a let: the product is not merged into its users', which would then share pairs) */
            E[k] = mblx_let(G, mblx_mul(G, b, mblx_cos(G, mblx_mul(G, a, S[j])))), REF[k] = rb * cos(ra * SV[j]);
            break;
        case 2:
            E[k] = mblx_exp(G, mblx_scale(G, -0.5, mblx_powc(G, mblx_min(G, mblx_add(G, a, b), mblx_const(G, 2.5)), 2)));
            REF[k] = exp(-0.5 * pow(fmin(ra + rb, 2.5), 2));
            break;
        case 3:
            E[k] = mblx_step(G, a, mblx_const(G, 0.1), b, mblx_const(G, 0.9), S[j]);
            REF[k] = step_ref(ra, 0.1, rb, 0.9, SV[j]);
            break;
        default: {
            mblx_id t3[3] = {mblx_mul(G, a, a), mblx_mul(G, a, S[j]), mblx_const(G, 1.5)};
            E[k] = mblx_sqrt(G, mblx_sum(G, 3, t3));
            REF[k] = sqrt(ra * ra + ra * SV[j] + 1.5); /* (> 0: a^2 + a s >= -s^2/4 > -1.5) */
            break;
        }
        }
    }
}

/* The same tape in every part the evaluation reads. */
static int same_whole(const mblx_tape *a, const mblx_tape *b)
{
    if (!same_tape(a, b)) return 0;
    if (memcmp(a->run_start, b->run_start, (a->nrun + 1) * sizeof *a->run_start) ||
        memcmp(a->run_op, b->run_op, a->nrun * sizeof *a->run_op) ||
        memcmp(a->ins_node, b->ins_node, a->nins * sizeof *a->ins_node))
        return 0;
    size_t nstep = 0;
    for (size_t i = 0; i < a->nins; i++) nstep += a->ins[i].op == TI_STEP;
    return !nstep || !memcmp(a->ext, b->ext, 5 * nstep * sizeof *a->ext);
}

static size_t TOOK; /* the compilations that took the numbering's events, at the last compile_as */

/* mode: 0 the default, 1 scheduled after, 2 the events by their own traversal */
static mblx_tape *compile_as(int mode, int bound, size_t n, const mblx_id *out)
{
    mbl_status st;
    mblx__schedule_after_mode(mode == 1);
    mblx__events_mode(mode == 2);
    mblx_tape *t = bound ? mblx_compile_bound(G, n, out, NULL, NULL, &st) : mblx_compile(G, n, out, &st);
    mblx__schedule_after_mode(0);
    TOOK = mblx__events_mode(0);
    CHECK_MSG(t != NULL, "compile: %s", t ? "" : st.msg);
    return t;
}

/* t's values against REF (out: the outputs, E's or a symbol's) */
static void check_values(const mblx_tape *t, size_t n, const mblx_id *out)
{
    double *w = calloc(mblx_tape_work_size(t), sizeof *w), *v = calloc(n, sizeof *v);
    mbl_status st;
    CHECK(mblx_tape_eval(t, SV, v, w, &st) == 0);
    for (size_t o = 0; o < n; o++) {
        double r = NAN;
        for (int k = 0; k < K && isnan(r); k++) r = E[k] == out[o] ? REF[k] : NAN;
        for (int j = 0; j < NS && isnan(r); j++) r = S[j] == out[o] ? SV[j] : NAN;
        CHECK_MSG(fabs(v[o] - r) <= 1e-12 * (1 + fabs(r)), "value %zu: %.17g vs %.17g", o, v[o], r);
    }
    free(w), free(v);
}

TEST(shortcuts_as_the_passes)
{
    make_graph();
    /* outputs: every value (the numbering's events); every 7th, the last twice, a symbol (a
     * hashed map: the events by their traversal); a one-window part; one output */
    static mblx_id out[K / 7 + 3];
    size_t n = 0;
    for (int k = 6; k < K; k += 7) out[n++] = E[k];
    out[n++] = E[K - 1], out[n++] = E[K - 1], out[n++] = S[2];
    size_t sizes[4] = {K, n, 40, 1};
    const mblx_id *outs[4] = {E, out, out, E + 3};
    size_t nwin = 0;
    for (int c = 0; c < 4; c++)
        for (int bound = 0; bound < 2; bound++) {
            mblx_tape *t = compile_as(0, bound, sizes[c], outs[c]);
            CHECK_MSG(c > 0 || TOOK == 1, "case %d bound %d: the numbering's events %zu", c, bound, TOOK);
            for (int mode = 1; mode <= 2 && t; mode++) {
                mblx_tape *r = compile_as(mode, bound, sizes[c], outs[c]);
                CHECK_MSG(r && same_whole(t, r), "case %d bound %d mode %d: %zu instructions", c, bound, mode, t->nins);
                CHECK(mode == 1 || TOOK == 0);
                mblx_tape_free(r);
            }
            if (!t) continue;
            if (t->nins > 2 * SCHED_WINDOW && t->nrun < t->nins / 4) nwin++;
            check_values(t, sizes[c], outs[c]);
            mblx_tape_free(t);
        }
    CHECK(nwin == 4); /* (the whole graph takes several windows, of a few runs each) */
    mblx_graph_free(G);
}

TEST(models_as_the_passes)
{
    static const char *FILES[] = {"examples/fourbar_N300.yaml", "examples/whipple_bicycle_nonlinear.yaml"};
    for (size_t f = 0; f < sizeof FILES / sizeof FILES[0]; f++)
        for (int fwd = 0; fwd < 2; fwd++) {
            mbl_model *md = fixture_model_fwd(FILES[f], NULL, FILES[f], fwd);
            for (int mode = 1; mode <= 2; mode++) {
                mblx__schedule_after_mode(mode == 1);
                mblx__events_mode(mode == 2);
                mbl_model *ma = fixture_model_fwd(FILES[f], NULL, FILES[f], fwd);
                mblx__schedule_after_mode(0);
                mblx__events_mode(0);
                CHECK_MSG(md && ma, "%s: load", FILES[f]);
                if (md && ma) {
                    CHECK_MSG(md->tape_F && same_whole(md->tape_F, ma->tape_F), "%s (%d, %d): F", FILES[f], fwd, mode);
                    CHECK_MSG(!md->tape_jac == !ma->tape_jac, "%s (%d): jac", FILES[f], fwd);
                    if (md->tape_jac)
                        CHECK_MSG(same_whole(md->tape_jac, ma->tape_jac), "%s (%d, %d): jac", FILES[f], fwd, mode);
                }
                mbl_model_free(ma);
            }
            mbl_model_free(md);
        }
}

/* The registers an opcode reads, read from mblx__ti_reads' table (session 34), as the definition
 * says (TI_READS_OF) and, for a few, by hand. */
TEST(reads_table)
{
    for (uint32_t op = 0; op < TI_NOP; op++) CHECK_MSG(mblx__ti_reads(op) == TI_READS_OF(op), "opcode %u", op);
    CHECK(mblx__ti_reads(TI_LDC) == 0 && mblx__ti_reads(TI_LDS) == 0);
    CHECK(mblx__ti_reads(TI_ADD) == (TI_READS_A | TI_READS_B) && mblx__ti_reads(TI_MUL2C) == (TI_READS_A | TI_READS_B));
    CHECK(mblx__ti_reads(TI_SIN) == TI_READS_A && mblx__ti_reads(TI_MULC) == TI_READS_A);
    CHECK(mblx__ti_reads(TI_STEP) == TI_READS_EXT && mblx__ti_reads(TI_DATA) == (TI_READS_A | TI_READS_B));
}

int main(void)
{
    RUN(reads_table);
    RUN(shortcuts_as_the_passes);
    RUN(models_as_the_passes);
    return test_summary("expr_compile_paths");
}
