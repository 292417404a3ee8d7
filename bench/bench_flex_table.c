/* Source 001 Tables 3-5 with beam bodies: the flexible double pendulum (two `type: beam` bodies,
 * examples/flexible_pendulum_beams.yaml with n_p elements per link) linearized by every method.
 * usage: bench_flex_table [NP ...]   (default 10 25 50 75 100)
 * For each n_p: the first four eigenvalues of each method, its time (linearize + modes, the median
 * of 3 runs; the operating point excluded, as in source 001 Table 4), and the largest deviations
 * of the real and imaginary parts from the MCS method (`projection`) as in Table 5. The penalty
 * (UCS) method runs with alpha = 1e7, xi = 1, omega = 10 (source 001 Sec. 5.2). Markdown out. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mblin/mblin.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static const char *MODEL =
    "model: mechanism\nspace: planar\nparameters: {l: 4, E: 1e8, rho: 1500, r: 0.15, g: 9.81}\n"
    "ground:\n  markers:\n    o: {position: [0, 0]}\n"
    "bodies:\n"
    "  link1:\n    type: beam\n    length: l\n    elements: %d\n    E: E\n    rho: rho\n    radius: r\n"
    "    geometric_stiffness: false\n    position: [0, 0]\n    angle: -pi/2\n    markers: {a1: {node: 1}, p1: {s: l}}\n"
    "  link2:\n    type: beam\n    length: l\n    elements: %d\n    E: E\n    rho: rho\n    radius: r\n"
    "    geometric_stiffness: false\n    position: [0, -l]\n    angle: -pi/2\n    markers: {a2: {node: 1}}\n"
    "joints:\n  pin_o: {type: revolute, i: a1, j: o}\n  pin_p1: {type: revolute, i: a2, j: p1}\n"
    "forces:\n  weight: {type: gravity, g: [0, -g]}\n";

int main(int argc, char **argv)
{
    int nps[16] = {10, 25, 50, 75, 100}, nn = 5;
    if (argc > 1) {
        nn = 0;
        for (int i = 1; i < argc && nn < 16; i++) nps[nn++] = atoi(argv[i]);
    }
    const char *methods[] = {"projection", "descriptor", "penalty", "augmented", "partition", "nullspace"};
    const char *label[] = {"MCS (projection)", "RCS (descriptor)", "UCS (penalty)", "augmented", "partition", "nullspace"};
    int nmeth = 6;
    printf("| n_p | n | method | s1 | s2 | s3 | s4 | time (s) | max dRe vs MCS | max dIm vs MCS |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|\n");
    for (int ip = 0; ip < nn; ip++) {
        int np = nps[ip];
        char text[4096];
        snprintf(text, sizeof text, MODEL, np, np);
        mbl_status st;
        mbl_model *md = NULL;
        mbl_point *pt = NULL;
        if (mbl_model_load_string(text, strlen(text), "flex-table", NULL, 0, &md, &st) ||
            mbl_operating_point(md, NULL, &pt, &st)) {
            fprintf(stderr, "n_p %d: %s\n", np, st.msg);
            return 1;
        }
        mbl_model_info info;
        mbl_model_get_info(md, &info);
        double mcs[4][2] = {{0}};
        for (int k = 0; k < nmeth; k++) {
            mbl_lin_options lo;
            mbl_lin_options_default(&lo);
            lo.method = methods[k];
            lo.pen_alpha = 1e7, lo.pen_xi = 1, lo.pen_omega = 10;
            double t[3], s[4][2] = {{0}};
            int ok = 1;
            for (int r = 0; r < 3 && ok; r++) {
                mbl_linear *lin = NULL;
                mbl_modes *mo = NULL;
                double t0 = now();
                ok = !mbl_linearize(md, pt, &lo, &lin, &st) && !mbl_modal(lin, NULL, &mo, &st);
                t[r] = now() - t0;
                if (ok) {
                    /* the four lowest by imaginary part (a method's own spectrum is listed in its order) */
                    int n = 0;
                    for (int i = 0; i < mo->nx; i++) {
                        const mbl_mode *e = &mo->modes[i];
                        if (e->spurious || !(e->im > 0)) continue;
                        int j = n < 4 ? n++ : 4;
                        if (j == 4 && !(e->im < s[3][1])) continue;
                        if (j == 4) j = 3;
                        while (j > 0 && s[j - 1][1] > e->im) s[j][0] = s[j - 1][0], s[j][1] = s[j - 1][1], j--;
                        s[j][0] = e->re, s[j][1] = e->im;
                    }
                }
                mbl_modes_free(mo);
                mbl_linear_free(lin);
            }
            if (!ok) {
                printf("| %d | %d | %s | refused: %s |||||||\n", np, info.ncoord, label[k], st.msg);
                continue;
            }
            qsort(t, 3, sizeof *t, cmpd);
            if (k == 0) memcpy(mcs, s, sizeof s);
            double dre = 0, dim = 0;
            for (int i = 0; i < 4; i++) dre = fmax(dre, fabs(s[i][0] - mcs[i][0])), dim = fmax(dim, fabs(s[i][1] - mcs[i][1]));
            printf("| %d | %d | %s | %.4f | %.4f | %.4f | %.4f | %.4f | %s%.1e | %s%.1e |\n", np, info.ncoord, label[k],
                   s[0][1], s[1][1], s[2][1], s[3][1], t[1], k ? "" : "(ref) ", dre, k ? "" : "(ref) ", dim);
            fflush(stdout);
        }
        mbl_point_free(pt);
        mbl_model_free(md);
    }
    return 0;
}
