/* mbl_load_options.no_drawing (issue 69, item 4): a mechanism loaded without its drawing gives no
 * drawing points and the same operating point and linear model, bit for bit, as the drawn load.
 * The drawn counts are the file's own: the N-loop four-bar of examples/mech/fourbar.py has 2N + 1
 * bodies (each origin a point), N + 1 ground markers and two markers on each body (points too),
 * and 3N + 1 revolute joints between two markers (the links). A trimmed turn whose targets are
 * marker measures (DX(R_centre)) keeps those markers' positions without the drawing. */
#define _POSIX_C_SOURCE 200809L
#include <string.h>

#include "mblin/mblin.h"
#include "test.h"

typedef struct {
    mbl_model *md;
    mbl_point *pt;
    mbl_linear *lin;
    mbl_geometry g;
} loaded;

static int load(const char *path, int no_drawing, loaded *r)
{
    mbl_status st;
    mbl_status_clear(&st);
    memset(r, 0, sizeof *r);
    mbl_load_options lo;
    mbl_load_options_default(&lo);
    CHECK_EQ_INT(lo.no_drawing, 0); /* drawn unless asked */
    lo.no_drawing = no_drawing;
    int rc = mbl_model_load_file_opt(path, NULL, 0, &lo, &r->md, &st);
    if (!rc) rc = mbl_operating_point(r->md, NULL, &r->pt, &st);
    if (!rc) rc = mbl_linearize(r->md, r->pt, NULL, &r->lin, &st);
    CHECK_MSG(rc == 0, "%s (no_drawing %d): %s", path, no_drawing, st.msg);
    if (r->md) mbl_model_geometry(r->md, &r->g);
    return rc;
}

static void unload(loaded *r)
{
    mbl_linear_free(r->lin);
    mbl_point_free(r->pt);
    mbl_model_free(r->md);
}

static int same(const double *a, const double *b, size_t n) { return n == 0 || memcmp(a, b, n * sizeof *a) == 0; }

/* the drawn and undrawn loads of path agree bit for bit: point, A, B, C, D */
static void expect_same_results(const loaded *a, const loaded *b)
{
    CHECK_EQ_INT(a->pt->n, b->pt->n);
    CHECK_EQ_INT(a->lin->nx, b->lin->nx);
    CHECK_EQ_INT(a->lin->ny, b->lin->ny);
    CHECK_EQ_INT(a->lin->nu, b->lin->nu);
    if (a->pt->n != b->pt->n || a->lin->nx != b->lin->nx || a->lin->ny != b->lin->ny || a->lin->nu != b->lin->nu)
        return;
    size_t n = (size_t)a->pt->n, nx = (size_t)a->lin->nx, ny = (size_t)a->lin->ny, nu = (size_t)a->lin->nu;
    CHECK(same(a->pt->q, b->pt->q, n) && same(a->pt->v, b->pt->v, n));
    CHECK(same(a->pt->lambda, b->pt->lambda, (size_t)a->pt->m));
    CHECK(same(a->lin->A, b->lin->A, nx * nx));
    CHECK(same(a->lin->B, b->lin->B, nx * nu));
    CHECK(same(a->lin->C, b->lin->C, ny * nx));
    CHECK(same(a->lin->D, b->lin->D, ny * nu));
}

TEST(fourbar_without_drawing)
{
    const int N = 5; /* examples/mech/fourbar_N5.yaml */
    loaded d, u;
    int rd = load("examples/mech/fourbar_N5.yaml", 0, &d), ru = load("examples/mech/fourbar_N5.yaml", 1, &u);
    if (!rd) {
        CHECK_EQ_INT(d.g.npoint, (2 * N + 1) + (N + 1) + 2 * (2 * N + 1));
        CHECK_EQ_INT(d.g.nlink, 3 * N + 1);
    }
    if (!ru) {
        CHECK_EQ_INT(u.g.npoint, 0);
        CHECK_EQ_INT(u.g.nlink, 0);
        mbl_status st;
        mbl_status_clear(&st);
        double pos[1];
        CHECK(mbl_model_draw(u.md, u.pt, 0, 0, NULL, NULL, pos, NULL, NULL, &st) == 0); /* nothing to draw */
    }
    if (!rd && !ru) expect_same_results(&d, &u);
    unload(&d);
    unload(&u);
}

TEST(trim_targets_on_markers_without_drawing)
{
    loaded d, u;
    int rd = load("tests/cli/trim_whipple_turn.yaml", 0, &d), ru = load("tests/cli/trim_whipple_turn.yaml", 1, &u);
    if (!rd) CHECK(d.g.npoint > 0);
    if (!ru) CHECK_EQ_INT(u.g.npoint, 0);
    if (!rd && !ru) expect_same_results(&d, &u);
    unload(&d);
    unload(&u);
}

int main(void)
{
    RUN(fourbar_without_drawing);
    RUN(trim_targets_on_markers_without_drawing);
    return test_summary("no_drawing");
}
