/* The readers of FE files (src/fe/calculix.c, nastran.c, part.c): a part CalculiX writes at test
 * time (ccx on tests/fe/data/block.inp, a 3 x 1 x 1 block of C3D8 steel elements, in a temporary
 * folder) against values known in closed form (its mass rho V, K times a rigid motion zero, its node
 * sets), clamped by *BOUNDARY (the free part's rows but those held), and the same matrices written
 * as Nastran DMIG entries in the three field formats by tests/fe/write_dmig.py (a second,
 * independent reading of CalculiX's files) read back the same: exactly in free field (17 digits),
 * to the digits a 16- or 8-character field holds otherwise.
 * Then every refusal with its file:line. */
#define _GNU_SOURCE /* mkdtemp */
#include "test.h"

#include <string.h>
#include <unistd.h>

#include "fe/fe.h"

static char dir[64];       /* the temporary folder */
static int have_ccx;       /* ccx ran on the block (else the cases that need it fail) */

/* path of name in the temporary folder */
static const char *tmp(const char *name)
{
    static char buf[4][256];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

static void write_file(const char *name, const char *text)
{
    FILE *f = fopen(tmp(name), "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

static int run(const char *cmd)
{
    int rc = system(cmd);
    CHECK_MSG(rc == 0, "%s: exit %d", cmd, rc);
    return rc;
}

/* ccx on the block, and the three DMIG files of its matrices */
static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/test_fe_read.XXXXXX");
    if (!mkdtemp(dir)) abort();
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cp tests/fe/data/block.inp tests/fe/data/block_nodes.inp %s && cd %s && "
             "ccx block > ccx.log 2>&1", dir, dir);
    have_ccx = run(cmd) == 0;
    /* the block clamped at its set LEFT: ccx leaves the rows *BOUNDARY holds out of its files */
    snprintf(cmd, sizeof cmd, "cd %s && sed 's/^\\*STEP/*BOUNDARY\\nLEFT, 1, 3\\n*STEP/' block.inp > clamped.inp && "
             "ccx clamped > clamped.log 2>&1", dir);
    if (have_ccx) have_ccx = run(cmd) == 0;
    snprintf(cmd, sizeof cmd, "python3 tests/fe/write_dmig.py %s/block %s/block_nodes.inp %s", dir, dir, dir);
    if (have_ccx) run(cmd);
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd)) fprintf(stderr, "could not remove %s\n", dir);
}

/* y = A x */
static void matvec(const mbla_csc *A, const double *x, double *y)
{
    for (int r = 0; r < A->m; r++) y[r] = 0;
    for (int c = 0; c < A->n; c++)
        for (int q = A->p[c]; q < A->p[c + 1]; q++) y[A->i[q]] += A->x[q] * x[c];
}

static double norm_inf(const double *x, int n)
{
    double m = 0;
    for (int k = 0; k < n; k++) m = fabs(x[k]) > m ? fabs(x[k]) : m;
    return m;
}

/* the block's part as ccx wrote it */
TEST(calculix_block)
{
    fe_part p;
    mbl_status st = {0};
    CHECK(have_ccx);
    int rc = fe_read_calculix(tmp("block"), &p, &st);
    CHECK_MSG(rc == 0, "%s", st.msg);
    if (rc) return;
    CHECK_EQ_INT(p.nnode, 16);
    CHECK_EQ_INT(p.ndof, 48);
    CHECK(mbla_csc_check(p.K, NULL) == 0 && mbla_csc_check(p.M, NULL) == 0);
    /* node i + 4 j + 8 k + 1 at (i, j, k); rows node by node, UX UY UZ */
    for (int n = 0; n < 16; n++) {
        CHECK_EQ_INT(p.node_id[n], n + 1);
        CHECK(p.xyz[3 * n] == n % 4 && p.xyz[3 * n + 1] == (n / 4) % 2 && p.xyz[3 * n + 2] == n / 8);
    }
    for (int r = 0; r < 48; r++) CHECK(p.dof_node[r] == r / 3 && p.dof_dir[r] == r % 3);
    CHECK_EQ_INT(fe_part_node(&p, 16), 15);
    CHECK_EQ_INT(fe_part_node(&p, 17), -1);
    /* symmetric, both triangles */
    for (int c = 0; c < 48; c++)
        for (int q = p.K->p[c]; q < p.K->p[c + 1]; q++) {
            int r = p.K->i[q], t = p.K->p[r];
            while (t < p.K->p[r + 1] && p.K->i[t] != c) t++;
            CHECK(t < p.K->p[r + 1] && p.K->x[t] == p.K->x[q]);
        }
    /* the mass: 1^T M_xx 1 = rho V = 7.8e-9 * 3 */
    double m = 0;
    for (int c = 0; c < 48; c += 3)
        for (int q = p.M->p[c]; q < p.M->p[c + 1]; q++) m += p.M->i[q] % 3 == 0 ? p.M->x[q] : 0;
    CHECK_REL(m, 7.8e-9 * 3, 1e-12);
    /* K times a rigid translation, and a small rigid rotation about (1, 2, 3) through (0.5, 0.2, 0.1):
     * zero to rounding against K's largest entry times the motion */
    double u[48], f[48], w[3] = {1, 2, 3}, o[3] = {0.5, 0.2, 0.1};
    for (int r = 0; r < 48; r++) u[r] = r % 3 == 1;
    matvec(p.K, u, f);
    double kmax = 0;
    for (int q = 0; q < p.K->p[48]; q++) kmax = fabs(p.K->x[q]) > kmax ? fabs(p.K->x[q]) : kmax;
    CHECK_MSG(norm_inf(f, 48) < 1e-12 * kmax, "K t: %g (K %g)", norm_inf(f, 48), kmax);
    for (int n = 0; n < 16; n++) {
        const double *x = p.xyz + 3 * n;
        u[3 * n] = w[1] * (x[2] - o[2]) - w[2] * (x[1] - o[1]);
        u[3 * n + 1] = w[2] * (x[0] - o[0]) - w[0] * (x[2] - o[2]);
        u[3 * n + 2] = w[0] * (x[1] - o[1]) - w[1] * (x[0] - o[0]);
    }
    matvec(p.K, u, f);
    CHECK_MSG(norm_inf(f, 48) < 1e-12 * kmax * norm_inf(u, 48), "K (w x r): %g", norm_inf(f, 48));
    /* the sets: NALL of *NODE, NSET=; LEFT listed; Right generated; ENDS naming both over two lines */
    static const char *name[] = {"nall", "LEFT", "right", "Ends"};
    static const int count[] = {16, 4, 4, 8}, first[] = {1, 1, 4, 1}, last[] = {16, 13, 16, 16};
    for (int s = 0; s < 4; s++) {
        int k = fe_part_set(&p, name[s]);
        CHECK_MSG(k >= 0, "set %s", name[s]);
        if (k < 0) continue;
        int n = p.set_ptr[k + 1] - p.set_ptr[k];
        CHECK_EQ_INT(n, count[s]);
        CHECK_EQ_INT(p.node_id[p.set_node[p.set_ptr[k]]], first[s]);
        CHECK_EQ_INT(p.node_id[p.set_node[p.set_ptr[k + 1] - 1]], last[s]);
    }
    CHECK_EQ_INT(fe_part_set(&p, "EALL"), -1);
    fe_part_free(&p);
    CHECK(p.K == NULL && p.nnode == 0);
}

/* the entry (r, c) of A (0 when not stored) */
static double entry(const mbla_csc *A, int r, int c)
{
    for (int q = A->p[c]; q < A->p[c + 1]; q++)
        if (A->i[q] == r) return A->x[q];
    return 0;
}

/* the block clamped at LEFT (nodes 1 5 9 13): its rows are the free block's but theirs, K and M the
 * free block's with those rows and columns taken out, entry for entry */
TEST(calculix_boundary)
{
    fe_part c, f;
    mbl_status st = {0};
    CHECK(have_ccx);
    if (!have_ccx) return;
    int rc = fe_read_calculix(tmp("clamped.inp"), &c, &st);
    CHECK_MSG(rc == 0, "%s", st.msg);
    if (rc || fe_read_calculix(tmp("block"), &f, &st)) return;
    CHECK_EQ_INT(c.nnode, 16);
    CHECK_EQ_INT(c.ndof, 36);
    int row[36], n = 0, bad = 0;
    for (int r = 0; r < f.ndof; r++)
        if (f.node_id[f.dof_node[r]] % 4 != 1 && n < 36) row[n++] = r;
    CHECK_EQ_INT(n, 36);
    for (int r = 0; r < 36; r++) CHECK(c.dof_node[r] == f.dof_node[row[r]] && c.dof_dir[r] == f.dof_dir[row[r]]);
    for (int j = 0; j < 36; j++)
        for (int i = 0; i < 36; i++)
            bad += entry(c.K, i, j) != entry(f.K, row[i], row[j]) || entry(c.M, i, j) != entry(f.M, row[i], row[j]);
    CHECK_EQ_INT(bad, 0);
    fe_part_free(&c);
    fe_part_free(&f);
}

/* A and B of the same pattern, each value of B within rtol of A's */
static void same_matrix(const mbla_csc *A, const mbla_csc *B, double rtol, const char *what)
{
    CHECK(A && B && A->n == B->n && A->p[A->n] == B->p[B->n]);
    if (!A || !B || A->n != B->n || A->p[A->n] != B->p[B->n]) return;
    int bad = 0;
    for (int c = 0; c < A->n; c++)
        for (int q = A->p[c]; q < A->p[c + 1]; q++)
            bad += B->p[c] != A->p[c] || B->i[q] != A->i[q] || fabs(B->x[q] - A->x[q]) > rtol * fabs(A->x[q]);
    CHECK_MSG(bad == 0, "%s: %d entries differ", what, bad);
}

/* the DMIG files of the block read back as the CalculiX reading */
TEST(nastran_three_formats)
{
    fe_part c, p;
    mbl_status st = {0};
    CHECK(have_ccx);
    if (!have_ccx || fe_read_calculix(tmp("block.sti"), &c, &st)) return;
    static const char *pch[] = {"small.pch", "large.pch", "free.pch"};
    /* the digits each field holds: 8 characters "-1.44-10" three, 16 characters eleven, free 17 */
    static const double rtol[] = {5e-3, 5e-11, 0};
    for (int k = 0; k < 3; k++) {
        int rc = fe_read_nastran(tmp(pch[k]), "KAAX", "maax", k == 2 ? tmp("free_bulk.dat") : NULL, &p, &st);
        CHECK_MSG(rc == 0, "%s", st.msg);
        if (rc) continue;
        CHECK_EQ_INT(p.nnode, c.nnode);
        CHECK_EQ_INT(p.ndof, c.ndof);
        CHECK(!memcmp(p.node_id, c.node_id, sizeof *p.node_id * (size_t)c.nnode));
        CHECK(!memcmp(p.xyz, c.xyz, sizeof *p.xyz * 3 * (size_t)c.nnode));
        CHECK(!memcmp(p.dof_node, c.dof_node, sizeof *p.dof_node * (size_t)c.ndof));
        CHECK(!memcmp(p.dof_dir, c.dof_dir, (size_t)c.ndof));
        same_matrix(c.K, p.K, rtol[k], pch[k]);
        same_matrix(c.M, p.M, rtol[k], pch[k]);
        CHECK_EQ_INT(p.nset, 0);
        fe_part_free(&p);
    }
    fe_part_free(&c);
}

/* ---- refusals ---- */

/* a small CalculiX job: two nodes, three rows, K = M = [2 -1 .5; -1 2 0; .5 0 1] */
static const char *ccx_inp = "** two nodes\n*NODE\n1, 0, 0, 0\n2, 1, 0, 0\n";
static const char *ccx_dof = "1.1\n1.2\n2.1\n";
static const char *ccx_sti = "1 1 2.0\n1 2 -1.0\n2 2 2.0\n1 3 0.5\n3 3 1.0\n";

/* the job with one file replaced (ext, text; text NULL: the file absent): fe_read_calculix's
 * message contains expect (NULL: it reads) */
static void ccx_case(const char *ext, const char *text, const char *expect)
{
    static const char *exts[] = {"inp", "dof", "sti", "mas"};
    const char *base[] = {ccx_inp, ccx_dof, ccx_sti, ccx_sti};
    char name[32];
    for (int k = 0; k < 4; k++) {
        snprintf(name, sizeof name, "bad.%s", exts[k]);
        unlink(tmp(name));
        const char *t = strcmp(ext, exts[k]) ? base[k] : text;
        if (t) write_file(name, t);
    }
    fe_part p;
    mbl_status st = {0};
    int rc = fe_read_calculix(tmp("bad"), &p, &st);
    if (!expect) {
        CHECK_MSG(rc == 0, "%s", st.msg);
        if (!rc) fe_part_free(&p);
        return;
    }
    CHECK_MSG(rc < 0 && strstr(st.msg, expect) && !strchr(st.msg, '\n'), "expected '%s', got %d '%s'", expect, rc,
              st.msg);
}

TEST(calculix_refusals)
{
    ccx_case("sti", ccx_sti, NULL);
    ccx_case("sti", "1 1 2.0\n1 2 -1.0\n2 2 2.0\n1 3 0.5\n3 3 1.0\n4 4 1.0\n", "bad.sti:6: row 4, column 4 outside the .dof's 3 rows");
    ccx_case("sti", "1 1 2.0\n1 2 -1.0\n0 2 2.0\n", "bad.sti:3: row 0, column 2 outside");
    ccx_case("sti", "1 1 nan\n", "bad.sti:1: 'row column value' expected, the value a finite number");
    ccx_case("mas", "1 1 2.0\n1 2 1e999\n", "bad.mas:2: 'row column value' expected");
    ccx_case("sti", "1 1 2.0\n1 2\n", "bad.sti:2: 'row column value' expected");
    ccx_case("sti", "1 1 2.0 7\n", "bad.sti:1: 'row column value' expected");
    ccx_case("dof", "1.1\n1.2\n2.7\n", "bad.dof:3: direction 7 outside 1..6");
    ccx_case("dof", "1.1\n1.2\n2.0\n", "bad.dof:3: direction 0 outside 1..6");
    ccx_case("dof", "1.1\n1.2\n3.1\n", "bad.dof:3: node 3 is not in the input deck's *NODE");
    ccx_case("dof", "1.1\n1.1\n2.1\n", "bad.dof:2: the row 1.1 a second time");
    ccx_case("dof", "1.1\n1\n2.1\n", "bad.dof:2: 'node.direction' expected");
    ccx_case("sti", "1 1 2.0\n1 2 -1.0\n2 2 2.0\n1 2 0.5\n3 3 1.0\n", "bad.sti:4: a repeated entry (the same row and column as line 2)");
    ccx_case("sti", "1 1 2.0\n1 2 -1.0\n2 2 2.0\n3 1 0.5\n3 3 1.0\n", "bad.sti:4: an entry of the lower triangle, the first (line 2) is of the upper");
    ccx_case("mas", NULL, "cannot open the mass file");
    ccx_case("dof", NULL, "cannot open the degree-of-freedom file");
    ccx_case("inp", NULL, "cannot open the input deck file");
    char lng[1200];
    memset(lng, ' ', sizeof lng);
    memcpy(lng, "1 1 2.0\n1 2", 11);
    strcpy(lng + 1100, "-1.0\n");
    ccx_case("sti", lng, "bad.sti:2: a line longer than 1024 characters");
    ccx_case("inp", "*NODE\n1, 0, 0, 0\n2, 1, 0, 0\n*NSET, NSET=S\n1, 9\n", "bad.inp:5: *NSET S: node 9 is not in the deck's *NODE");
    ccx_case("inp", "*NODE\n1, 0, 0, 0\n2, 1, 0, 0\n*NSET, NSET=S\n1, T\n", "bad.inp:5: *NSET S: 'T' is neither a node number nor a set");
    ccx_case("inp", "*NODE\n1, 0, 0, 0\n2, 1, 0, 0\n*NSET, NSET=S, GENERATE\n1, 5\n", "bad.inp:5: *NSET S: node 5 is not in");
    ccx_case("inp", "*NODE\n1, 0, 0, 0\n2, 1, 0, 0\n*NSET, NSET=S, GENERATE\n1, 2, 0\n", "bad.inp:5: *NSET S, GENERATE: a range");
    ccx_case("inp", "*NODE\n1, 0, 0, 0\n*INCLUDE, INPUT=none.inp\n", "bad.inp:3: *INCLUDE: cannot open the input deck file");
    ccx_case("inp", "*NODE\n1, 0, 0, 0\n2, 1, 0, 0\n1, 1, 1, 1\n", "bad.inp:4: *NODE 1 is defined a second time");
    ccx_case("inp", "*NODE\n1, 0, zero, 0\n", "bad.inp:2: *NODE 1: a coordinate that is not a finite number");
    ccx_case("inp", "*NODE\n1, 0, 0, 0, 0\n", "bad.inp:2: *NODE 1: more than three coordinates");
    ccx_case("inp", "*NODE\nx, 0, 0, 0\n", "bad.inp:2: *NODE: 'x' is not a node number");
    ccx_case("inp", "*NODE\n1, 0, 0, 0\n2, 1, 0, 0\n*INCLUDE, INPUT=bad.inp\n", "*INCLUDE nested more than 16 deep");
    ccx_case("inp", "*NSET\n1\n", "bad.inp:1: *NSET without NSET=");
    /* a node of the deck without rows, a set of it, and the include of a folder's file: it reads */
    write_file("sub.inp", "*node, nset=more\n3, 2, 0, 0\n");
    ccx_case("inp", "*NODE\n1, 0, 0, 0\n2, 1, 0, 0\n*Include, input=\"sub.inp\"\n", NULL);
    /* a set without nodes (found by fuzz_calculix: UBSan, qsort of its NULL array) */
    ccx_case("inp", "*NODE\n1, 0, 0, 0\n2, 1, 0, 0\n*NSET, NSET=EMPTY\n", NULL);
}

/* fe_read_nastran on text (bulk NULL: its own GRIDs; kname K, mname M when mass): its message
 * contains expect (NULL: it reads, and K is [2 -1; -1 2] over rows 1.1 2.1) */
static void nas_case(const char *text, const char *kname, const char *expect)
{
    write_file("bad.pch", text);
    fe_part p;
    mbl_status st = {0};
    int rc = fe_read_nastran(tmp("bad.pch"), kname, NULL, NULL, &p, &st);
    if (!expect) {
        CHECK_MSG(rc == 0, "%s", st.msg);
        if (rc) return;
        double D[4] = {0};
        CHECK(p.ndof == 2 && p.nnode == 2 && mbla_csc_to_dense(p.K, D, 2, NULL) == 0);
        CHECK(D[0] == 2 && D[1] == -1 && D[2] == -1 && D[3] == 2.5e-3);
        CHECK(p.dof_node[0] == 0 && p.dof_node[1] == 1 && p.dof_dir[0] == FE_UX && p.dof_dir[1] == FE_UX);
        CHECK(p.xyz[3] == 1.5 && p.xyz[4] == -2e-3 && p.xyz[5] == 0);
        fe_part_free(&p);
        return;
    }
    CHECK_MSG(rc < 0 && strstr(st.msg, expect) && !strchr(st.msg, '\n'), "expected '%s', got %d '%s'", expect, rc,
              st.msg);
}

#define GRIDS "GRID,1,,0.,0.,0.\nGRID,2,,1.5,-2.-3,\n"
TEST(nastran_fields_and_refusals)
{
    /* the same matrix in the three formats, with comments, tabs, D exponents and implied ones */
    nas_case("$ free\n" GRIDS "DMIG,K,0,6,2,0\nDMIG,K,1,1,,1,1,2.,,+\n+,2,1,-1.\nDMIG,K,2,1,,2,1,2.5D-3 $ diagonal\n",
             "K", NULL);
    nas_case("$ small\nGRID    1               0.      0.      0.\nGRID    2       0       1.5     -2.-3\n"
             "DMIG    K       0       6       2       0\n"
             "DMIG    K       1       1               1       1       2.0             +\n"
             "+       2       1       -1.0\n"
             "DMIG\tK\t2\t1\t\t2\t1\t.25-2\n", "k", NULL);
    char large[1024];
    snprintf(large, sizeof large, "$ large\n%-8s%-16s%-16s%-16s%-16s\n%-8s%-16s\n%-8s%-16s%-16s%-16s%16s\n*\n"
             "%-8s%-16s%-16s%-16s%-16s\n*       0\n%-8s%-16s%-16s%-16s\n%-8s%-16s%-16s%-16s\n%-8s%-16s%-16s%16s\n"
             "%-8s%-16s%-16s%-16s\n%-8s%16s%16s%16s\n",
             "GRID*", "1", "", "0.", "0.", "*", "0.", "GRID*", "2", "", "1.5", "-2.0E-3",
             "DMIG*", "K", "0", "6", "2", "DMIG*", "K", "1", "1", "*", "1", "1", "2.0D+00", "*", "2", "1", "-1.0D+00",
             "DMIG*", "K", "2", "1", "*", "2", "1", "2.5-3");
    nas_case(large, "K", NULL);
    /* square: both triangles */
    nas_case(GRIDS "DMIG,K,0,1,2,0\nDMIG,K,1,1,,1,1,2.,,+\n+,2,1,-1.\nDMIG,K,2,1,,2,1,2.5-3,,+\n,1,1,-1.\n", "K", NULL);
    nas_case(GRIDS "DMIG,K,0,1,2,0\nDMIG,K,1,1,,1,1,2.,,+\n+,2,1,-1.\nDMIG,K,2,1,,2,1,2.5-3,,+\n,1,1,-1.5\n", "K",
             "bad.pch:5: an entry that differs from its transpose's");
    /* the refusals: text, the stiffness's name, the message */
    static const struct {
        const char *text, *kname, *expect;
    } refusal[] = {
        {GRIDS "DMIG,K,0,6,2,0\nDMIG,K,1,1,,1,1,2.,,+\n+,2,0,-1.\n", "K", "bad.pch:5: DMIG K term: scalar points (component 0) are not supported"},
        {GRIDS "DMIG,K,0,6,2,0\nDMIG,K,1,0,,1,1,2.\n", "K", "bad.pch:4: DMIG K column: scalar points"},
        {GRIDS "DMIG,K,0,6,2,0\nDMIG,K,1,1,,1,7,2.\n", "K", "bad.pch:4: DMIG K term: component 7 outside 1..6"},
        {"GRID,1,,0.,0.,0.\nGRID,2,5,1.,0.,0.\n", "K", "bad.pch:2: GRID 2: coordinate systems are not supported"},
        {"GRID,1,,0.,0.,0.,3\n", "K", "bad.pch:1: GRID 1: coordinate systems are not supported"},
        {GRIDS "DMIG,K,0,6,2,0\nDMIG,K,1,1,,1,1,2.,,+\n+,3,1,-1.\n", "K", "bad.pch:5: DMIG K: grid 3 is not among the GRID entries"},
        {GRIDS "DMIG,K,0,6,2,0\nDMIG,K,1,1,,1,1,2.\nDMIG,K,1,1,,1,1,2.\n", "K", "bad.pch:5: a repeated entry (the same row and column as line 4)"},
        {GRIDS "DMIG,K,0,6,2,0\nDMIG,K,1,1,,2,1,2.\nDMIG,K,2,1,,1,1,2.\n", "K", "bad.pch:5: an entry of the upper triangle, the first (line 4)"},
        {GRIDS "DMIG,K,0,2,2,0\n", "K", "bad.pch:3: DMIG K: form IFO 2 is not supported"},
        {GRIDS "DMIG,K,0,6,3,0\n", "K", "bad.pch:3: DMIG K: type TIN 3 is not supported"},
        {GRIDS "DMIG,K,0,6,2,0\nDMIG,K,0,6,2,0\n", "K", "bad.pch:4: DMIG K: a second header entry (the first at line 3)"},
        {GRIDS "DMIG,K,1,1,,1,1,2.\nDMIG,K,0,6,2,0\n", "K", "bad.pch:3: DMIG K: a column before the header"},
        {GRIDS "DMIG,K,0,6,2,0\nDMIG,K,1,1,,1,1,2.\n", "KXX", "bad.pch: no DMIG entry named KXX"},
        {GRIDS "DMIG,K,0,6,2,0\nDMIG,K,1,1,,1,1,1.+999\n", "K", "bad.pch:4: DMIG K term: '1.+999' is not a finite number"},
        {GRIDS "DMIG,K,0,6,2,0\nDMIG,K,1,1,,1,1\n", "K", "bad.pch:4: DMIG K: a term without its value"},
        {GRIDS "DMIG,K,0,6,2,0\nDMIG,K,1,1,,1,1,2.,3.\n", "K", "bad.pch:4: DMIG K: an imaginary part in a real matrix"},
        {GRIDS "DMIG,K,0,6,2,0\nDMIG,K,1,1,,1,1,2.,,1,2,3,4,5,6\n", "K", "bad.pch:4: DMIG: more than 10 fields on a line"},
        {GRIDS "DMIG,K,0,6,2,0\nDMIG,K,1,1,,1,1,1.00000000000000000000000001\n", "K", "bad.pch:4: DMIG: a field longer than 24 characters"},
        {"DMIG,K,0,6,2,0\nDMIG,K,1,1,,1,1,2.\n", "K", "bad.pch: no GRID entries"},
    };
    for (size_t k = 0; k < sizeof refusal / sizeof *refusal; k++)
        nas_case(refusal[k].text, refusal[k].kname, refusal[k].expect);
    /* lines of the case control and of entries not read may be anything */
    nas_case("SUBCASE 1\nDISPLACEMENT(PLOT,PUNCH,SORT1,REAL,PRINT,SOMETHING,X,Y,Z) = ALL\nTITLE = a title longer than "
             "24 characters, with a comma\nBEGIN BULK\n" GRIDS "PARAM,POST,-1\nDMIG,K,0,6,2,0\nDMIG,K,1,1,,1,1,2.,,+\n"
             "+,2,1,-1.\nDMIG,K,2,1,,2,1,2.5D-3\nENDDATA\n", "K", NULL);
    mbl_status st = {0};
    fe_part p;
    write_file("bad.pch", "DMIG,K,0,6,2,0\nDMIG,K,1,1,,1,1,2.\n");
    CHECK(fe_read_nastran(tmp("bad.pch"), "K", NULL, tmp("none.dat"), &p, &st) == MBL_EIO &&
          strstr(st.msg, "cannot open the bulk data file"));
}

int main(void)
{
    setup();
    RUN(calculix_block);
    RUN(calculix_boundary);
    RUN(nastran_three_formats);
    RUN(calculix_refusals);
    RUN(nastran_fields_and_refusals);
    teardown();
    return test_summary("fe_read");
}
