/* The accuracy of a robot tree's linearization against a 40-digit reference (issue 69, item 1):
 * the URDF chains of bench/chain_urdf.py (tests/fixture.h's fixture_urdf_chain writes the same
 * text) of N = 10, 20 and 100 links, linearized at P0 (q = 0, v = 0: the hanging equilibrium) and
 * P1 (q_k = 0.4 sin(1.3 k), v_k = 0.7 cos(0.9 k)), by the sweep (mbl_relinearize with a workspace:
 * the unconstrained tree's dense path, src/lin/relin_dense.c) and by the one-shot mbl_linearize.
 * A's lower half [d qdd/dq, d qdd/dv] and B's lower half d qdd/du are compared with
 * tests/lin/data/chain<N>_<P0|P1>.txt.gz, written by tests/lin/chain_reference.py (a recursive
 * Newton-Euler in mpmath at 50 digits, derivatives by complex step; its --check tests it against
 * closed forms): max |mblin - ref| / max |ref| over each block at most TREE_ACCURACY_TOL (but A of the
 * 100-link chain at P1: below).
 * Each measured error is printed (stdout), the file's q and v are the point (read exactly), and
 * the file records a hash of the URDF text it was computed for (checked against the fixture's). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "lin/augmented_internal.h"
#include "mblin/mblin.h"
#include "fixture.h"
#include "test.h"

/* max |mblin - ref| / max |ref| over A's and over B's lower half (issue 69: "A of the N = 100
 * chain to 1e-12 of the reference") */
#define TREE_ACCURACY_TOL 1e-12
/* A of the 100-link chain at the moving point P1 (issue 69 asks 1e-12 at N = 100, measured at rest;
 * not met here: 7.6e-11 to 7.7e-11 over the OpenBLAS kernels with the kinematics computed natively,
 * src/model/terms/rtree_kin.c; 4.1e-11 to 4.3e-11 by the texts' tape; Pinocchio's computeABADerivatives
 * 5.3e-10 at the same point). The Jacobian's entries are each within about 1e-14 of their row's
 * largest (every body's vectors about its own point, src/model/terms/rtree.c) and the point's
 * accelerations within 2e-15 (refined by the tree's own M^-1, src/opoint/opoint.c); what is left
 * is those entries' rounding, which M^-1 (cond 1e8) carries into A. The bound fails the state of
 * before both changes (1.1e-10: the velocity terms about the global origin and the accelerations
 * from M's factor, 1.2e-10 off) and the factorization of M for A (1.8e-10); the accelerations'
 * own check (TREE_ACCURACY_TOL_VDOT) and chain100_far fail each change's undoing. */
#define TREE_ACCURACY_TOL_LONG_MOVING_A 1e-10
/* the given point's accelerations at P1 against tests/lin/data/chain<N>_P1_vdot.txt (max |err| /
 * max |ref|): 2e-15 with the tree's own M^-1, 1.2e-10 at N = 100 from M's factor alone */
#define TREE_ACCURACY_TOL_VDOT 1e-13
/* The 100-link chain hung from (1000, -700, 300) instead of the origin (the same dynamics, the same
 * reference): A at P1 within TREE_ACCURACY_TOL_LONG_MOVING_A. Each body's vectors are about its own
 * point and the pairs' about the tree's first point, so that nothing depends on where the robot
 * stands: 8.5e-11 (4.3e-11 at the origin); summed about the global origin, as before issue 69's
 * session 42, 8.7e-7. */
#define TREE_FAR_BASE "1000 -700 300"

/* the reference of one chain at one point */
typedef struct {
    int n;
    char hash[17];    /* FNV-1a 64 of the URDF text, hex */
    double *q, *v;    /* n each */
    double *A, *B;    /* n x 2n and n x n, row-major */
} chain_ref;

/* FNV-1a (64 bits) of len bytes, as chain_reference.py's fnv1a64 */
static void fnv1a64(const char *s, size_t len, char out[17])
{
    unsigned long long h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
    snprintf(out, 17, "%016llx", h);
}

/* the whole of a gzip'ed file as a NUL-terminated text, or NULL */
static char *gz_slurp(const char *path)
{
    gzFile f = gzopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, len = 0;
    char *s = malloc(cap);
    int got = 0;
    while (s && (got = gzread(f, s + len, (unsigned)(cap - len - 1))) > 0) {
        len += (size_t)got;
        if (cap - len < 2) {
            char *t = realloc(s, 2 * cap);
            if (!t) free(s);
            s = t, cap *= 2;
        }
    }
    if (s && got < 0) free(s), s = NULL;
    gzclose(f);
    if (s) s[len] = 0;
    return s;
}

/* count numbers of the text at *p into x; 0, or -1 when one is missing */
static int read_numbers(char **p, double *x, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        char *end;
        x[i] = strtod(*p, &end);
        if (end == *p) return -1;
        *p = end;
    }
    return 0;
}

static void ref_free(chain_ref *r)
{
    free(r->q);
    memset(r, 0, sizeof *r);
}

/* tests/lin/data/chain<n>_<pt>.txt.gz: 0, or -1 with a failed check naming the file */
static int ref_read(int n, const char *pt, chain_ref *r)
{
    char path[128];
    snprintf(path, sizeof path, "tests/lin/data/chain%d_%s.txt.gz", n, pt);
    memset(r, 0, sizeof *r);
    char *text = gz_slurp(path), *p = text ? strchr(text, '\n') : NULL;
    int hn = -1;
    const char *h = text ? strstr(text, "urdf_fnv1a64=") : NULL;
    if (text && sscanf(text, "# mblin chain reference (tests/lin/chain_reference.py): N=%d", &hn) != 1) hn = -1;
    size_t nn = (size_t)n;
    r->q = malloc(sizeof *r->q * (2 * nn + 3 * nn * nn));
    int ok = p && h && sscanf(h, "urdf_fnv1a64=%16[0-9a-f]", r->hash) == 1 && hn == n && r->q;
    if (ok) {
        r->n = n;
        r->v = r->q + nn, r->A = r->v + nn, r->B = r->A + 2 * nn * nn;
        ok = read_numbers(&p, r->q, 2 * nn + 3 * nn * nn) == 0;
        while (ok && (*p == '\n' || *p == ' ')) p++;
        ok = ok && *p == 0;
    }
    CHECK_MSG(ok, "%s: not a reference of N = %d (regenerate with tests/lin/chain_reference.py --write)", path, n);
    free(text);
    if (!ok) ref_free(r);
    return ok ? 0 : -1;
}

/* max |got - ref| / max |ref| over the n x cols block of ref (row-major, as the file's rows) and
 * the rows of got (column-major, leading dimension ldg: the API's matrices) from row0 on */
static double block_error(const double *got, int ldg, int row0, const double *ref, int n, int cols)
{
    double d = 0, s = 0;
    for (int j = 0; j < cols; j++) {
        const double *g = got + (size_t)j * (size_t)ldg + (size_t)row0;
        for (int i = 0; i < n; i++) {
            double r = ref[(size_t)i * (size_t)cols + (size_t)j], e = fabs(g[i] - r);
            if (!(e <= d)) d = isnan(e) ? INFINITY : e;
            s = fmax(s, fabs(r));
        }
    }
    return d / s;
}

/* the states (the coordinates j<k>_q, then their rates der(j<k>_q)) and the inputs (u_j<k>) in the
 * joints' order */
static int layout_ok(const mbl_linear *l, int n)
{
    int ok = l->nx == 2 * n && l->z0 == n && l->z1 == n && l->nu == n;
    for (int k = 0; ok && k < n; k++) {
        char q[32], dq[40], u[32];
        snprintf(q, sizeof q, "j%d_q", k + 1);
        snprintf(dq, sizeof dq, "der(%s)", q);
        snprintf(u, sizeof u, "u_j%d", k + 1);
        ok = !strcmp(l->state_names[k], q) && !strcmp(l->state_names[n + k], dq) && !strcmp(l->input_names[k], u);
    }
    return ok;
}

/* A's and B's lower halves of l against r: the errors printed and checked */
static void compare(const char *what, int n, const char *pt, const mbl_linear *l, const chain_ref *r)
{
    int ok = layout_ok(l, n);
    CHECK_MSG(ok, "chain%d %s %s: states or inputs not in the joints' order", n, pt, what);
    if (!ok) return;
    double ea = block_error(l->A, l->nx, n, r->A, n, 2 * n), eb = block_error(l->B, l->nx, n, r->B, n, n);
    printf("chain%-3d %s %-8s A %.2e  B %.2e\n", n, pt, what, ea, eb);
    double ta = n > 20 && strcmp(pt, "P0") ? TREE_ACCURACY_TOL_LONG_MOVING_A : TREE_ACCURACY_TOL,
           tb = TREE_ACCURACY_TOL;
    CHECK_MSG(ea <= ta, "chain%d %s %s: A's lower half %.3g from the reference (tol %g)", n, pt, what, ea, ta);
    CHECK_MSG(eb <= tb, "chain%d %s %s: B's lower half %.3g from the reference (tol %g)", n, pt, what, eb, tb);
}

/* the point's accelerations at P1 against tests/lin/data/chain<n>_P1_vdot.txt (its hash checked) */
static void check_vdot(int n, const char *hash, const mbl_point *pt)
{
    char path[128], fh[17] = "";
    snprintf(path, sizeof path, "tests/lin/data/chain%d_P1_vdot.txt", n);
    FILE *f = fopen(path, "r");
    char head[512];
    double *ref = malloc(sizeof *ref * (size_t)n);
    const char *h = f && ref && fgets(head, sizeof head, f) ? strstr(head, "urdf_fnv1a64=") : NULL;
    int ok = h && sscanf(h, "urdf_fnv1a64=%16[0-9a-f]", fh) == 1 && !strcmp(fh, hash);
    for (int i = 0; ok && i < n; i++) ok = fscanf(f, "%lf", &ref[i]) == 1;
    if (f) fclose(f);
    CHECK_MSG(ok, "%s: not the accelerations of this chain (tests/lin/chain_reference.py --write-vdot)", path);
    if (ok) {
        double d = 0, s = 0;
        for (int i = 0; i < n; i++) d = fmax(d, fabs(pt->vdot[i] - ref[i])), s = fmax(s, fabs(ref[i]));
        printf("chain%-3d P1 vdot     %.2e\n", n, d / s);
        CHECK_MSG(d <= TREE_ACCURACY_TOL_VDOT * s, "chain%d P1: the point's accelerations %.3g from the reference (tol %g)",
                  n, d / s, TREE_ACCURACY_TOL_VDOT);
    }
    free(ref);
}

static void check_chain(int n)
{
    static const char *const pts[2] = {"P0", "P1"};
    chain_ref ref[2];
    size_t len = 0;
    char name[32], hash[17], *text = fixture_urdf_chain(n, &len, name);
    CHECK(text != NULL);
    if (!text) return;
    fnv1a64(text, len, hash);
    int ok = ref_read(n, pts[0], &ref[0]) == 0;
    if (ok && ref_read(n, pts[1], &ref[1])) ok = 0, ref_free(&ref[0]);
    for (int k = 0; ok && k < 2; k++)
        CHECK_MSG(!strcmp(ref[k].hash, hash), "chain%d %s: the reference is of another URDF text (%s, the test's %s)", n,
                  pts[k], ref[k].hash, hash);
    mbl_status st;
    mbl_model *md = NULL;
    mbl_point *p0 = NULL, *pt = NULL;
    mbl_lin_work *w = NULL;
    mbl_linear *lw = NULL, *l1 = NULL;
    if (ok) {
        ok = mbl_model_load_string(text, len, name, NULL, 0, &md, &st) == 0 && mbl_operating_point(md, NULL, &p0, &st) == 0 &&
             mbl_lin_work_new(md, p0, NULL, &w, &lw, &st) == 0;
        CHECK_MSG(ok, "chain%d: %s", n, st.msg);
    }
    if (ok) CHECK_EQ_INT(w->dense, 1); /* the sweep takes the tree's dense path */
    for (int k = 0; ok && k < 2; k++) {
        mbl_point_free(pt);
        pt = NULL;
        ok = fixture_point_given(md, ref[k].q, ref[k].v, &pt, &st) == 0 && mbl_relinearize(w, pt, lw, &st) == 0 &&
             mbl_linearize(md, pt, NULL, &l1, &st) == 0;
        CHECK_MSG(ok, "chain%d %s: %s", n, pts[k], st.msg);
        if (!ok) break;
        if (k == 1) check_vdot(n, hash, pt);
        compare("sweep", n, pts[k], lw, &ref[k]);
        compare("one-shot", n, pts[k], l1, &ref[k]);
        mbl_linear_free(l1);
        l1 = NULL;
    }
    if (ref[0].q) ref_free(&ref[0]), ref_free(&ref[1]);
    mbl_linear_free(lw);
    mbl_lin_work_free(w);
    mbl_point_free(p0), mbl_point_free(pt);
    mbl_model_free(md);
    free(text);
}

/* the chain of n links with its first joint at TREE_FAR_BASE, linearized (one-shot) at P1 */
static void check_far(int n)
{
    size_t len = 0;
    char name[32], *text = fixture_urdf_chain(n, &len, name);
    const char *first = "<child link=\"l1\"/><origin xyz=\"0 0 0\"/>";
    char *at = text ? strstr(text, first) : NULL, *moved = NULL;
    CHECK(at != NULL);
    chain_ref ref;
    if (!at || ref_read(n, "P1", &ref)) {
        free(text);
        return;
    }
    size_t head = (size_t)(at - text), cap = len + 64;
    moved = malloc(cap);
    CHECK(moved != NULL);
    if (moved)
        len = (size_t)snprintf(moved, cap, "%.*s<child link=\"l1\"/><origin xyz=\"%s\"/>%s", (int)head, text, TREE_FAR_BASE,
                               at + strlen(first));
    mbl_status st;
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_linear *l = NULL;
    int ok = moved && mbl_model_load_string(moved, len, name, NULL, 0, &md, &st) == 0 &&
             fixture_point_given(md, ref.q, ref.v, &pt, &st) == 0 && mbl_linearize(md, pt, NULL, &l, &st) == 0;
    CHECK_MSG(ok, "chain%d hung from (%s): %s", n, TREE_FAR_BASE, st.msg);
    if (ok) {
        double ea = block_error(l->A, l->nx, n, ref.A, n, 2 * n);
        printf("chain%-3d P1 far base A %.2e\n", n, ea);
        CHECK_MSG(ea <= TREE_ACCURACY_TOL_LONG_MOVING_A, "chain%d hung from (%s), P1: A's lower half %.3g from the reference (tol %g)",
                  n, TREE_FAR_BASE, ea, TREE_ACCURACY_TOL_LONG_MOVING_A);
    }
    mbl_linear_free(l);
    mbl_point_free(pt);
    mbl_model_free(md);
    ref_free(&ref);
    free(moved), free(text);
}

TEST(chain100_far)
{
    check_far(100);
}

TEST(chain10)
{
    check_chain(10);
}

TEST(chain20)
{
    check_chain(20);
}

TEST(chain100)
{
    check_chain(100);
}

int main(void)
{
    RUN(chain10);
    RUN(chain20);
    RUN(chain100);
    RUN(chain100_far);
    return test_summary("tree_accuracy");
}
