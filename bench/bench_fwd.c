/* What forward-mode Jacobian values would save the one-shot path (issue 31, item 2; issue 34,
 * item 5; src/expr/tape_forward.c). A model is loaded, the rows its residual tape compiles (md->Fc
 * or md->F) and the inlined rows md->F are copied into a fresh graph (the sub-DAG they read, made
 * again by the builders), the model is freed and the residual tape compiled from the copy (both
 * paths need it); then
 *   fwd: mblx_fwdjac_new (pattern and coloring) of the tape's rows and one mblx_fwdjac_eval;
 *   sym: mblx_jacobian of md->F (the model's pattern, md->jac) and, where the rows differ, of the
 *        rows the tape compiles (compile.c's jacobian_compiled), the Jacobian tape compiled
 *        (mblx_compile_bound, as compile.c) and evaluated once.
 * For each phase its CPU time, and for each path the peak of the heap in use above its start and
 * what it keeps (malloc is interposed: the bytes of every live block; and mmap, for the anonymous
 * maps our code makes itself, e.g. the graph's large hash table, src/expr/graph.c table_new). Then the medians of 11
 * evaluations of each. Instructions: run under `valgrind --tool=callgrind` with -c (no medians)
 * and read the inclusive costs of the phase_* functions (bench/README.md).
 * usage: bench_fwd [-c] MODEL... */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mblin/mblin.h"
#include "expr/tape_internal.h"
#include "model/model_internal.h"

/* ---- the heap in use: malloc interposed (glibc's __libc_* underneath) ---- */
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t m);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);
static size_t heap_cur, heap_peak;

static void heap_add(void *p)
{
    if (!p) return;
    size_t c = __atomic_add_fetch(&heap_cur, malloc_usable_size(p), __ATOMIC_RELAXED);
    if (c > heap_peak) heap_peak = c; /* racy across threads: only the load uses a second one */
}
static void heap_sub(void *p)
{
    if (p) __atomic_sub_fetch(&heap_cur, malloc_usable_size(p), __ATOMIC_RELAXED);
}
void *malloc(size_t n)
{
    void *p = __libc_malloc(n);
    heap_add(p);
    return p;
}
void *calloc(size_t n, size_t m)
{
    void *p = __libc_calloc(n, m);
    heap_add(p);
    return p;
}
void *realloc(void *q, size_t n)
{
    heap_sub(q);
    void *p = __libc_realloc(q, n);
    heap_add(p ? p : (n ? q : NULL));
    return p;
}
void free(void *p)
{
    heap_sub(p);
    __libc_free(p);
}

/* ---- anonymous maps made by our code: mmap interposed (glibc's malloc maps through its internal
 * __mmap, which this does not see, so no block is counted twice); the system calls underneath ---- */
enum { NMAPS = 64 };
static struct {
    void *p;
    size_t n;
} maps[NMAPS];
static atomic_flag maps_lock = ATOMIC_FLAG_INIT;

void *mmap(void *a, size_t n, int prot, int flags, int fd, off_t off)
{
    void *p = (void *)syscall(SYS_mmap, a, n, prot, flags, fd, off);
    if (p == MAP_FAILED || !(flags & MAP_ANONYMOUS)) return p;
    while (atomic_flag_test_and_set(&maps_lock)) continue;
    for (int i = 0; i < NMAPS; i++)
        if (!maps[i].p) {
            maps[i].p = p, maps[i].n = n;
            size_t c = __atomic_add_fetch(&heap_cur, n, __ATOMIC_RELAXED);
            if (c > heap_peak) heap_peak = c;
            break;
        }
    atomic_flag_clear(&maps_lock);
    return p;
}
int munmap(void *p, size_t n)
{
    while (atomic_flag_test_and_set(&maps_lock)) continue;
    for (int i = 0; i < NMAPS; i++)
        if (maps[i].p == p) {
            __atomic_sub_fetch(&heap_cur, maps[i].n, __ATOMIC_RELAXED);
            maps[i].p = NULL;
            break;
        }
    atomic_flag_clear(&maps_lock);
    return (int)syscall(SYS_munmap, p, n);
}

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct phase {
    double t;
} phase;

static phase mark(void) { return (phase){cpu_now()}; }

static void report(const char *what, phase a, phase b) { printf("  %-44s %8.2f ms\n", what, 1e3 * (b.t - a.t)); }

/* the heap above its level at the start of a path: peak, and kept at its end */
static size_t heap0;
static void heap_start(void)
{
    heap0 = heap_cur;
    heap_peak = heap_cur;
}
static void heap_report(void)
{
    printf("  heap and maps: peak %.2f MB above the start, %.2f MB kept\n", 1e-6 * (double)(heap_peak - heap0),
           1e-6 * ((double)heap_cur - (double)heap0));
}
static int counting; /* -c: no medians (for callgrind) */

/* The copy: graph, the tape's rows (nr), the inlined rows (nr, or NULL when the same), columns. */
typedef struct copy {
    mblx_graph *g;
    mblx_id *rows, *rowsF, *syms;
    size_t nr, nu;
    double *sv;
    size_t nsym;
    mblx_tape *tF; /* the residual tape, compiled from the copy (both paths have it) */
} copy;

/* The sub-DAG of the roots made again in c->g (operands come before their nodes: one pass down
 * to mark, one up to make). */
static int copy_nodes(const mblx_graph *g, mblx_graph *h, size_t n, const mblx_id *roots, mblx_id *out,
                      mblx_id *map, unsigned char *mk)
{
    mblx_id top = 0;
    for (size_t i = 0; i < n; i++) top = roots[i] > top ? roots[i] : top;
    for (size_t i = 0; i < n; i++) mk[roots[i]] = 1;
    for (mblx_id e = top + 1; e-- > 0;) {
        if (!mk[e]) continue;
        for (int a = 0; a < mblx_node_nargs(g, e); a++) mk[mblx_node_arg(g, e, a)] = 1;
    }
    mblx_id args[64], *ap = args;
    size_t cap = 64;
    for (mblx_id e = 0; e <= top; e++) {
        if (!mk[e] || map[e] != MBLX_NONE) continue;
        mblx_op op = mblx_node_op(g, e);
        int na = mblx_node_nargs(g, e);
        if (op == MBLX_OP_SYMBOL) {
            map[e] = mblx_symbol_node(h, (size_t)mblx_symbol_index(g, e));
            continue;
        }
        if ((size_t)na > cap) {
            cap = (size_t)na;
            ap = ap == args ? malloc(cap * sizeof *ap) : realloc(ap, cap * sizeof *ap);
        }
        for (int a = 0; a < na; a++) ap[a] = map[mblx_node_arg(g, e, a)];
        map[e] = mblx_apply(h, op, mblx_node_value(g, e), (size_t)na, ap);
        if (map[e] == MBLX_NONE) return -1;
    }
    if (ap != args) free(ap);
    for (size_t i = 0; i < n; i++) out[i] = map[roots[i]];
    return 0;
}

static int make_copy(const char *file, copy *c)
{
    mbl_status st;
    mbl_model *md = NULL;
    if (mbl_model_load_file(file, NULL, 0, &md, &st)) {
        fprintf(stderr, "bench_fwd: %s\n", st.msg);
        return -1;
    }
    memset(c, 0, sizeof *c);
    c->g = mblx_graph_new();
    c->nsym = mblx_symbol_count(md->g);
    for (size_t s = 0; s < c->nsym; s++) mblx_symbol(c->g, mblx_symbol_name(md->g, mblx_symbol_node(md->g, s)));
    if (mbl_model_copy_data(md, c->g, &st)) return -1;
    size_t nn = mblx_node_count(md->g);
    mblx_id *map = malloc(nn * sizeof *map);
    unsigned char *mk = calloc(nn, 1);
    for (size_t e = 0; e < nn; e++) map[e] = MBLX_NONE;
    c->nr = (size_t)md->nF;
    c->rows = malloc(c->nr * sizeof *c->rows);
    int rc = copy_nodes(md->g, c->g, c->nr, md->Fc ? md->Fc : md->F, c->rows, map, mk);
    if (!rc && md->Fc) {
        c->rowsF = malloc(c->nr * sizeof *c->rowsF);
        rc = copy_nodes(md->g, c->g, c->nr, md->F, c->rowsF, map, mk);
    }
    c->nu = (size_t)md->nunk;
    c->syms = malloc(c->nu * sizeof *c->syms);
    for (size_t j = 0; j < c->nu; j++) c->syms[j] = mblx_symbol_node(c->g, (size_t)md->sym_of_unknown[j]);
    c->sv = calloc(c->nsym + 1, sizeof *c->sv);
    for (size_t i = 0; i < c->nsym; i++) c->sv[i] = 0.1 + 0.01 * (double)(i % 17); /* as tape_sizes */
    for (int i = 0; i < md->np; i++) c->sv[md->sym_p[i]] = md->pval[i];
    printf("%s: %d residuals, %zu unknowns, model graph %zu nodes, md->jac %d entries; copied rows %zu nodes%s\n", file,
           md->nF, c->nu, nn, md->jac.nz, mblx_node_count(c->g), md->Fc ? " (let rows and inlined rows)" : "");
    free(map), free(mk);
    mbl_model_free(md);
    return rc;
}

/* median of 11 timings of f in milliseconds */
typedef int (*evalfn)(void *ctx);
static double median_ms(evalfn f, void *ctx)
{
    double v[11];
    for (int k = 0; k < 11; k++) {
        double t0 = cpu_now();
        f(ctx);
        v[k] = 1e3 * (cpu_now() - t0);
    }
    for (int i = 1; i < 11; i++)
        for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
            double x = v[j];
            v[j] = v[j - 1], v[j - 1] = x;
        }
    return v[5];
}

typedef struct ev {
    const mblx_tape *t;
    const mblx_fwdjac *J;
    const double *sv;
    double *vals, *work;
} ev;
static int ev_tape(void *p)
{
    ev *e = p;
    return mblx_tape_eval(e->t, e->sv, e->vals, e->work, NULL);
}
static int ev_fwd(void *p)
{
    ev *e = p;
    return mblx_fwdjac_eval(e->J, e->t, e->sv, e->vals, NULL, e->work, NULL);
}

#define NOINLINE __attribute__((noinline))

/* the phases, one function each (callgrind's inclusive costs) */
static NOINLINE int phase_sym_jacobian(copy *c, const mblx_id *rows, mblx_sparse *S)
{
    return mblx_jacobian(c->g, c->nr, rows, c->nu, c->syms, S);
}
static NOINLINE mblx_tape *phase_sym_compile(copy *c, const mblx_sparse *S)
{
    return mblx_compile_bound(c->g, (size_t)S->colptr[c->nu], S->node, NULL, NULL, NULL);
}
static NOINLINE int phase_sym_eval(void *e) { return ev_tape(e); }
static NOINLINE mblx_fwdjac *phase_fwd_new(copy *c) { return mblx_fwdjac_new(c->g, c->nr, c->rows, c->nu, c->syms, NULL); }
static NOINLINE int phase_fwd_eval(void *e) { return ev_fwd(e); }
static NOINLINE mblx_tape *phase_residual_tape(copy *c) { return mblx_compile_bound(c->g, c->nr, c->rows, NULL, NULL, NULL); }

static void path_sym(copy *c)
{
    mblx_sparse S, S2;
    memset(&S2, 0, sizeof S2);
    size_t before = mblx_node_count(c->g);
    printf(" symbolic:\n");
    heap_start();
    phase p0 = mark();
    int rc = phase_sym_jacobian(c, c->rowsF ? c->rowsF : c->rows, &S);
    phase p1 = mark();
    report("Jacobian of md->F (mblx_jacobian)", p0, p1);
    mblx_sparse *use = &S;
    if (!rc && c->rowsF) {
        rc = phase_sym_jacobian(c, c->rows, &S2);
        phase p2 = mark();
        report("Jacobian of the let rows md->Fc", p1, p2);
        p1 = p2;
        use = &S2;
    }
    mblx_tape *t = rc ? NULL : phase_sym_compile(c, use);
    phase p3 = mark();
    report("Jacobian tape (mblx_compile_bound)", p1, p3);
    size_t nnz = rc ? 0 : (size_t)use->colptr[c->nu];
    double *vals = malloc((nnz + 1) * sizeof *vals), *work = malloc((mblx_tape_work_size(t) + 1) * sizeof *work);
    ev e = {t, NULL, c->sv, vals, work};
    int erc = t ? phase_sym_eval(&e) : -1;
    phase p4 = mark();
    report("one evaluation", p3, p4);
    report("total", p0, p4);
    heap_report();
    printf("  nodes made %zu, entries %zu, tape %zu instructions, %zu registers; rc %d %d\n",
           mblx_node_count(c->g) - before, nnz, mblx_tape_ninstr(t), mblx_tape_work_size(t), rc, erc);
    if (!counting) printf("  evaluation, median of 11: %.4f ms\n", median_ms(ev_tape, &e));
    free(vals), free(work);
    mblx_tape_free(t);
    mblx_sparse_free(&S), mblx_sparse_free(&S2);
}

static void path_fwd(copy *c)
{
    mblx_tape *tF = c->tF;
    printf(" forward:\n");
    heap_start();
    phase p0 = mark();
    mblx_fwdjac *J = phase_fwd_new(c);
    phase p1 = mark();
    report("pattern and coloring (mblx_fwdjac_new)", p0, p1);
    size_t nnz = mblx_fwdjac_pattern(J, NULL, NULL);
    double *vals = malloc((nnz + 1) * sizeof *vals);
    double *work = malloc((mblx_fwdjac_work_size(J, tF) + 1) * sizeof *work);
    ev e = {tF, J, c->sv, vals, work};
    int rc = phase_fwd_eval(&e);
    phase p2 = mark();
    report("one evaluation (forward sweeps)", p1, p2);
    report("total", p0, p2);
    heap_report();
    size_t nc = mblx_fwdjac_ncolors(J);
    const int *cp, *ri;
    mblx_fwdjac_pattern(J, &cp, &ri);
    int *len = calloc(c->nr + 1, sizeof *len), widest = 0;
    for (size_t q = 0; q < nnz; q++) widest = ++len[ri[q]] > widest ? len[ri[q]] : widest;
    free(len);
    printf("  the widest row %d entries (no coloring has fewer colors)\n", widest);
    printf("  entries %zu, colors %zu (%zu sweeps of <= %d directions), residual tape %zu instructions, %zu registers; "
           "rc %d\n", nnz, nc, (nc + MBLX_FWD_CHUNK - 1) / MBLX_FWD_CHUNK, MBLX_FWD_CHUNK, mblx_tape_ninstr(tF),
           mblx_tape_work_size(tF), rc);
    if (!counting) {
        printf("  evaluation, median of 11: %.4f ms", median_ms(ev_fwd, &e));
        printf(" (the residual tape alone: %.4f ms)\n", median_ms(ev_tape, &e));
    }
    free(vals), free(work);
    mblx_fwdjac_free(J);
}

int main(int argc, char **argv)
{
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "-c")) {
            counting = 1;
            continue;
        }
        copy c;
        if (make_copy(argv[a], &c)) continue;
        phase q0 = mark();
        c.tF = phase_residual_tape(&c);
        phase q1 = mark();
        report("the residual tape (both paths)", q0, q1);
        if (c.tF) { /* its instructions by opcode (tape_internal.h), the commonest first */
            static const char *const nm[] = {"ldc", "lds", "add", "addc", "mul", "mulc", "sqr", "cube", "recip",
                                             "rsqr", "sqrtp", "powc", "pow", "sqrt", "sin", "cos", "tan", "asin",
                                             "acos", "atan", "atan2", "sinh", "cosh", "tanh", "exp", "log", "abs",
                                             "sign", "min", "max", "step", "data", "add2c", "mul2c"};
            size_t h[TI_MUL2C + 1] = {0};
            for (size_t i = 0; i < c.tF->nins; i++) h[c.tF->ins[i].op]++;
            printf("  its instructions:");
            for (int k = 0; k <= TI_MUL2C; k++)
                if (h[k]) printf(" %s %zu", nm[k], h[k]);
            printf(" (%zu runs)\n", c.tF->nrun);
        }
        path_fwd(&c); /* first: it makes no node, so the symbolic path starts from the same graph */
        path_sym(&c);
        mblx_tape_free(c.tF);
        mblx_graph_free(c.g);
        free(c.rows), free(c.rowsF), free(c.syms), free(c.sv);
    }
    return 0;
}
