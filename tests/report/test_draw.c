/* The drawing of a mechanism (mbl_model_geometry, mbl_model_draw) and the HTML writer.
 * Positions against closed forms, mode displacements against central differences of the
 * positions along the mode shape (the positions are exact expressions, their derivative is the
 * engine's), and the page against what it must contain. */
#define _POSIX_C_SOURCE 200809L
#include <string.h>

#include "mblin/mblin.h"
#include "test.h"

/* a planar pendulum of length L hanging from O, swinging in x: the bob's origin at (0, -L) */
static const char *pendulum = "model: mechanism\n"
                              "name: pendulum </script> test\n"
                              "space: planar\n"
                              "parameters: {m: 1, L: 2, g: 9.81}\n"
                              "ground:\n"
                              "  markers:\n"
                              "    O: {position: [0.5, 0]}\n"
                              "bodies:\n"
                              "  bob:\n"
                              "    mass: m\n"
                              "    inertia: m*L^2/100\n"
                              "    position: [0.5, -L]\n"
                              "    markers: {pin: {position: [0, L]}, tip: {position: [0, -0.5]}}\n"
                              "joints:\n"
                              "  hinge: {type: revolute, i: pin, j: O}\n"
                              "forces:\n"
                              "  weight: {type: gravity, g: [0, -g]}\n";

static int find(const mbl_geometry *g, const char *name)
{
    for (int i = 0; i < g->npoint; i++)
        if (!strcmp(g->point[i], name)) return i;
    return -1;
}

TEST(pendulum_points_and_mode)
{
    mbl_status st;
    mbl_status_clear(&st);
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_linear *lin = NULL;
    mbl_modes *modes = NULL;
    CHECK(mbl_model_load_string(pendulum, strlen(pendulum), "pendulum.yaml", NULL, 0, &md, &st) == 0);
    CHECK(mbl_operating_point(md, NULL, &pt, &st) == 0);
    CHECK(mbl_linearize(md, pt, NULL, &lin, &st) == 0);
    CHECK(mbl_modal(lin, NULL, &modes, &st) == 0);
    if (!modes) return;
    mbl_geometry g;
    mbl_model_geometry(md, &g);
    CHECK_EQ_INT(g.npoint, 4); /* O (ground), bob's origin, pin, tip */
    CHECK_EQ_INT(g.nlink, 1);
    int O = find(&g, "O"), b = find(&g, "bob"), pin = find(&g, "pin"), tip = find(&g, "tip");
    CHECK(O >= 0 && b >= 0 && pin >= 0 && tip >= 0);
    if (O < 0 || b < 0 || pin < 0 || tip < 0) return;
    CHECK(!strcmp(g.body[O], "ground") && !strcmp(g.body[tip], "bob"));
    CHECK((g.link[0] == pin && g.link[1] == O) && !strcmp(g.link_type[0], "revolute"));
    int np3 = 3 * g.npoint, nx = modes->nx;
    double pos[12], re[12 * 2], im[12 * 2];
    CHECK_EQ_INT(nx, 2);
    CHECK(mbl_model_draw(md, pt, nx, modes->n, modes->shape_re, modes->shape_im, pos, re, im, &st) == 0);
    CHECK_CLOSE(pos[3 * b + 0], 0.5, 1e-12);
    CHECK_CLOSE(pos[3 * b + 1], -2.0, 1e-12);
    CHECK_CLOSE(pos[3 * tip + 1], -2.5, 1e-12);
    CHECK_CLOSE(pos[3 * pin + 0], 0.5, 1e-12);
    CHECK(fabs(pos[3 * pin + 1]) < 1e-12);
    /* the swing: ground does not move, the pin hardly (the joint), the tip 1.25 times the origin, all in x */
    for (int k = 0; k < nx; k++) {
        const double *r = re + np3 * k, *s = im + np3 * k;
        double mx = 0;
        for (int i = 0; i < np3; i++) mx = fmax(mx, hypot(r[i], s[i]));
        CHECK(mx > 0);
        CHECK(hypot(r[3 * O], s[3 * O]) == 0 && hypot(r[3 * O + 1], s[3 * O + 1]) == 0);
        CHECK(hypot(r[3 * pin], s[3 * pin]) < 1e-9 * mx);
        CHECK(hypot(r[3 * tip + 1], s[3 * tip + 1]) < 1e-9 * mx);
        CHECK_CLOSE(hypot(r[3 * tip], s[3 * tip]), 1.25 * hypot(r[3 * b], s[3 * b]), 1e-9);
    }
    /* dp/dq times the shape against a central difference of the positions along Re(shape) */
    int n = modes->n;
    double *q = malloc((size_t)n * sizeof *q), pp[12], pm[12];
    memcpy(q, pt->q, (size_t)n * sizeof *q);
    double h = 1e-6;
    for (int i = 0; i < n; i++) pt->q[i] = q[i] + h * modes->shape_re[i];
    CHECK(mbl_model_draw(md, pt, 0, 0, NULL, NULL, pp, NULL, NULL, &st) == 0);
    for (int i = 0; i < n; i++) pt->q[i] = q[i] - h * modes->shape_re[i];
    CHECK(mbl_model_draw(md, pt, 0, 0, NULL, NULL, pm, NULL, NULL, &st) == 0);
    memcpy(pt->q, q, (size_t)n * sizeof *q);
    double scale = 0;
    for (int i = 0; i < np3; i++) scale = fmax(scale, fabs(re[i]));
    for (int i = 0; i < np3; i++) CHECK(fabs((pp[i] - pm[i]) / (2 * h) - re[i]) < 1e-6 * scale);
    free(q);

    /* the page: one document, the data in place of the marker, no '<' inside the data */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK(mbl_report_html(f, md, pt, lin, modes, &st) == 0);
    fclose(f);
    CHECK(strstr(buf, "/*@MBLIN_DATA@*/") == NULL);
    CHECK(strstr(buf, "pendulum \\u003c/script> test") != NULL);
    const char *d = strstr(buf, "<script id=\"mblin-data\" type=\"application/json\">");
    CHECK(d != NULL);
    if (d) {
        const char *end = strstr(d, "</script>");
        const char *lt = strchr(d + 10, '<');
        CHECK(end != NULL && lt == end);
    }
    CHECK(strstr(buf, "\"points\": [{\"name\": ") != NULL);
    free(buf);
    mbl_modes_free(modes);
    mbl_linear_free(lin);
    mbl_point_free(pt);
    mbl_model_free(md);
}

/* an equation-level model has nothing to draw */
TEST(dae_has_no_points)
{
    const char *dae = "model: dae\ncoordinates: {x: 0}\nparameters: {k: 4}\nkinetic_energy: der(x)^2/2\n"
                      "potential_energy: k*x^2/2\n";
    mbl_status st;
    mbl_status_clear(&st);
    mbl_model *md = NULL;
    CHECK(mbl_model_load_string(dae, strlen(dae), "osc.yaml", NULL, 0, &md, &st) == 0);
    if (!md) {
        fprintf(stderr, "%s\n", st.msg);
        return;
    }
    mbl_geometry g;
    mbl_model_geometry(md, &g);
    CHECK_EQ_INT(g.npoint, 0);
    CHECK_EQ_INT(g.nlink, 0);
    mbl_model_free(md);
}

int main(void)
{
    RUN(pendulum_points_and_mode);
    RUN(dae_has_no_points);
    return test_summary("report");
}
