/* The rate of Newton's last steps (opoint_newton), the note on a point reached at a linear one
 * (a degenerate solution: the Jacobian singular there). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "opoint_solve.h"

/* A step is a fraction OPOINT_LINEAR_MIN .. OPOINT_LINEAR_MAX of the one before, within
 * OPOINT_LINEAR_DRIFT of the last such fraction, OPOINT_LINEAR_RUN steps in a row: a linear rate */
#define OPOINT_LINEAR_MIN 0.3
#define OPOINT_LINEAR_MAX 0.95
#define OPOINT_LINEAR_DRIFT 0.2
#define OPOINT_LINEAR_RUN 4

void opoint_rate_step(opoint_newton_rate *nr, const double *dx, double alpha, int n)
{
    double ds = 0;
    for (int c = 0; c < n; c++) ds = fabs(dx[c]) > ds ? fabs(dx[c]) : ds; /* a NaN entry leaves ds */
    ds *= alpha;
    double r = nr->ds > 0 ? ds / nr->ds : 0;
    int even = nr->run == 0 || fabs(r - nr->ratio) <= OPOINT_LINEAR_DRIFT * nr->ratio;
    nr->run = r >= OPOINT_LINEAR_MIN && r <= OPOINT_LINEAR_MAX && even ? nr->run + 1 : 0;
    nr->ds = ds, nr->ratio = r;
}

int opoint_note_linear(mbl_point *pt, const char *what, int it, const opoint_newton_rate *nr)
{
    static const char head[] = "Newton converged only linearly";
    if (nr->run < OPOINT_LINEAR_RUN) return 0;
    if (strstr(pt->notes, head)) return 1;
    if (!strncmp(what, "the ", 4)) what += 4;
    char buf[300];
    /* the error the rate leaves: ratio / (1 - ratio) times the last step (the steps to come summed) */
    snprintf(buf, sizeof buf, "%s (%d iterations in its last solve, each step %.2g of the last): the Jacobian is singular at the "
             "solution, a degenerate %s; the point is accurate to about %.1g", head, it, nr->ratio, what,
             nr->ds * nr->ratio / (1 - nr->ratio));
    opoint_note_add(pt, buf);
    return 1;
}

void opoint_note_add(mbl_point *pt, const char *text)
{
    size_t nl = strlen(pt->notes);
    if (nl + 3 < sizeof pt->notes) snprintf(pt->notes + nl, sizeof pt->notes - nl, "%s%s", nl ? "; " : "", text);
}
