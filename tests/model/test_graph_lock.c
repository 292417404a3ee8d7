/* One lock per model (issue 28): a loaded model's expression graph grows after loading along
 * several paths (the velocity transformation, the sensitivities' derivatives, the drawing's
 * compiled positions), and every one of them must take the same lock. Two threads grow one
 * model's graph at once (one velocity transformations, the other the DAE's second derivatives
 * and the drawing) and their results must equal a single-threaded run on another copy of the
 * model. Built a second time against a ThreadSanitizer copy of the library
 * (test_graph_lock_tsan), which reports a data race when two paths use two different locks.
 * A third thread evaluates the residual and its Jacobian where they fail (issue 31, item 2):
 * their tapes print the failing subexpression from the graph (mblx_compile_bound), under the
 * same lock, while the graph grows. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/dae.h"
#include "mblin/mblin.h"
#include "mblin/sensitivity.h"
#include "test.h"

/* a relative-coordinate mechanism: it has the bodies' kinematics (velocity transformation) and
 * a drawing */
static const char *const MODEL = "examples/mech/spatial_fourbar_relative.yaml";
enum { ROUNDS = 4 };

typedef struct result {
    mbl_status st;
    int rc;
    /* the velocity transformation: B, dB, Bdot */
    int nrow, ncol;
    double *B, *dB, *Bdot;
    /* the second derivatives of the residual at the point: J (jnz values) */
    int jnz;
    double *J;
    /* the drawing's point positions (3 npoint) */
    int npos;
    double *pos;
} result;

typedef struct job {
    const mbl_model *md;
    const mbl_point *pt;
    result *res;
} job;

static void result_free(result *r)
{
    free(r->B), free(r->dB), free(r->Bdot), free(r->J), free(r->pos);
    memset(r, 0, sizeof *r);
}

/* velocity transformations: each one differentiates the kinematics again in the model's graph */
static void *grow_vtrans(void *arg)
{
    job *j = arg;
    result *r = j->res;
    for (int k = 0; k < ROUNDS && !r->rc; k++) {
        mbl_vtrans *v = NULL;
        r->rc = mbl_model_velocity_transformation(j->md, j->pt, &v, &r->st);
        if (r->rc || !v) break;
        size_t nB = (size_t)v->nrow * (size_t)v->ncol;
        if (!r->B) {
            r->nrow = v->nrow, r->ncol = v->ncol;
            r->B = malloc(nB * sizeof *r->B);
            r->dB = malloc(nB * (size_t)v->ncol * sizeof *r->dB);
            r->Bdot = malloc(nB * sizeof *r->Bdot);
        }
        if (r->B && r->dB && r->Bdot) {
            memcpy(r->B, v->B, nB * sizeof *r->B);
            memcpy(r->dB, v->dB, nB * (size_t)v->ncol * sizeof *r->dB);
            memcpy(r->Bdot, v->Bdot, nB * sizeof *r->Bdot);
        } else {
            r->rc = -1;
        }
        mbl_vtrans_free(v);
    }
    return NULL;
}

/* the DAE's second derivatives (compiled anew each round) and the drawing (compiled on the first) */
static void *grow_deriv(void *arg)
{
    job *j = arg;
    result *r = j->res;
    for (int k = 0; k < ROUNDS && !r->rc; k++) {
        mbl_dae_deriv *d = NULL;
        r->rc = mbl_dae_deriv_new(j->md, &d, &r->st);
        if (r->rc) break;
        mbl_dae_layout lay;
        mbl_dae_deriv_layout(d, &lay);
        if (!r->J) {
            r->jnz = lay.jnz;
            r->J = malloc(((size_t)lay.jnz + 1) * sizeof *r->J);
        }
        if (!r->J) r->rc = -1;
        if (!r->rc) r->rc = mbl_dae_deriv_eval(d, j->pt, r->J, NULL, NULL, &r->st);
        mbl_dae_deriv_free(d);
        if (!r->rc && k == 0) {
            mbl_geometry geo;
            mbl_model_geometry(j->md, &geo);
            r->npos = 3 * geo.npoint;
            r->pos = malloc(((size_t)r->npos + 1) * sizeof *r->pos);
            if (!r->pos) r->rc = -1;
            if (!r->rc) r->rc = mbl_model_draw(j->md, j->pt, 0, 0, NULL, NULL, r->pos, NULL, NULL, &r->st);
        }
    }
    return NULL;
}

/* the residual and its Jacobian at a non-finite unknown: messages read the model's graph */
static void *fail_eval(void *arg)
{
    job *j = arg;
    result *r = j->res;
    mbl_dae_eval *e = NULL;
    r->rc = mbl_dae_eval_new(j->md, &e, &r->st);
    if (r->rc) return NULL;
    mbl_dae_layout lay;
    mbl_dae_eval_layout(e, &lay);
    double *x = calloc((size_t)lay.nunk + 1, sizeof *x), *F = malloc(((size_t)lay.nF + 1) * sizeof *F);
    double *J = malloc(((size_t)lay.jnz + 1) * sizeof *J);
    if (!x || !F || !J) r->rc = -1;
    if (x) x[0] = NAN;
    for (int k = 0; k < 8 * ROUNDS && !r->rc; k++) {
        mbl_status st;
        int rc = k % 2 ? mbl_dae_eval_jacobian(e, 0.0, x, J, &st) : mbl_dae_eval_residual(e, 0.0, x, F, &st);
        if (rc != MBL_EDOMAIN || !strstr(st.msg, "non-finite value nan of symbol")) {
            r->rc = -1;
            r->st = st;
        }
    }
    free(x), free(F), free(J);
    mbl_dae_eval_free(e);
    return NULL;
}

static int load(mbl_model **md, mbl_point **pt, mbl_status *st)
{
    int rc = mbl_model_load_file(MODEL, NULL, 0, md, st); /* ctest runs in the source directory */
    if (!rc) rc = mbl_operating_point(*md, NULL, pt, st);
    return rc;
}

static int same(const double *a, const double *b, size_t n)
{
    return n == 0 || (a && b && !memcmp(a, b, n * sizeof *a));
}

TEST(two_threads_grow_one_graph)
{
    mbl_model *md1 = NULL, *md2 = NULL;
    mbl_point *pt1 = NULL, *pt2 = NULL;
    mbl_status st;
    memset(&st, 0, sizeof st);
    int rc = load(&md1, &pt1, &st);
    CHECK_MSG(rc == 0, "%s", st.msg);
    if (!rc) rc = load(&md2, &pt2, &st);
    CHECK_MSG(rc == 0, "%s", st.msg);
    if (rc) goto out;
    /* the reference: one thread after the other on the first copy */
    result rv1, rd1, rv2, rd2;
    memset(&rv1, 0, sizeof rv1), memset(&rd1, 0, sizeof rd1);
    memset(&rv2, 0, sizeof rv2), memset(&rd2, 0, sizeof rd2);
    job jv1 = {md1, pt1, &rv1}, jd1 = {md1, pt1, &rd1};
    grow_vtrans(&jv1);
    grow_deriv(&jd1);
    CHECK_MSG(rv1.rc == 0, "%s", rv1.st.msg);
    CHECK_MSG(rd1.rc == 0, "%s", rd1.st.msg);
    CHECK(rv1.nrow > 0 && rd1.jnz > 0 && rd1.npos > 0);
    /* both at once on the second copy */
    result rf2;
    memset(&rf2, 0, sizeof rf2);
    job jv2 = {md2, pt2, &rv2}, jd2 = {md2, pt2, &rd2}, jf2 = {md2, pt2, &rf2};
    pthread_t tv, td, tf;
    int cf = pthread_create(&tf, NULL, fail_eval, &jf2);
    int cv = pthread_create(&tv, NULL, grow_vtrans, &jv2);
    int cd = pthread_create(&td, NULL, grow_deriv, &jd2);
    CHECK(cv == 0 && cd == 0 && cf == 0);
    if (!cv) pthread_join(tv, NULL);
    if (!cd) pthread_join(td, NULL);
    if (!cf) pthread_join(tf, NULL);
    CHECK_MSG(rf2.rc == 0, "%s", rf2.st.msg);
    CHECK_MSG(rv2.rc == 0, "%s", rv2.st.msg);
    CHECK_MSG(rd2.rc == 0, "%s", rd2.st.msg);
    if (!rv1.rc && !rv2.rc && !rd1.rc && !rd2.rc) {
        size_t nB = (size_t)rv1.nrow * (size_t)rv1.ncol;
        CHECK(rv2.nrow == rv1.nrow && rv2.ncol == rv1.ncol);
        CHECK(same(rv1.B, rv2.B, nB));
        CHECK(same(rv1.dB, rv2.dB, nB * (size_t)rv1.ncol));
        CHECK(same(rv1.Bdot, rv2.Bdot, nB));
        CHECK_EQ_INT(rd2.jnz, rd1.jnz);
        CHECK(same(rd1.J, rd2.J, (size_t)rd1.jnz));
        CHECK_EQ_INT(rd2.npos, rd1.npos);
        CHECK(same(rd1.pos, rd2.pos, (size_t)rd1.npos));
    }
    result_free(&rv1), result_free(&rd1), result_free(&rv2), result_free(&rd2);
out:
    mbl_point_free(pt1), mbl_point_free(pt2);
    mbl_model_free(md1), mbl_model_free(md2);
}

int main(void)
{
    RUN(two_threads_grow_one_graph);
    return test_summary("graph_lock");
}
