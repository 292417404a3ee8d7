/* at: steady of bodies whose frames turn (docs/mechanism-reference.md, "Limits of this version",
 * at: steady). A beam or modal body in a steady spin keeps its elastic coordinates while its frame
 * turns at a constant angular velocity w, and a rigid spatial body in absolute coordinates turns the
 * same way: the frame moves rigidly about a fixed axis, so its origin's acceleration is w x v (v its
 * velocity: a circle about the axis; 0 when it sits on the axis, or when w = 0 and it translates
 * uniformly) and its orientation coordinates accelerate as a constant w makes them (a planar angle:
 * 0; Euler parameters: der(der(e)) = 1/2 E(der(e))^T w, from der(e) = 1/2 E(e)^T w). Every other
 * coordinate's steady acceleration is 0. */
#include <math.h>
#include <string.h>

#include "core/vec3.h"
#include "model/ffr.h"
#include "opoint_steady.h"

/* one frame: coordinates qi (x, y, th or x, y, z, e0..e3 by dim); the largest change of a */
static double frame_accels(int dim, const int *qi, const double *q, const double *v, double *a)
{
    double w[3] = {0, 0, 0}, vr[3] = {0, 0, 0}, ar[3], old, change = 0;
    for (int k = 0; k < dim; k++) vr[k] = v[qi[k]];
    if (dim == 2) {
        w[2] = v[qi[2]];
        old = a[qi[2]], a[qi[2]] = 0, change = fmax(change, fabs(old));
    } else {
        double e[4], de[4], E[3][4], Ed[3][4];
        for (int k = 0; k < 4; k++) e[k] = q[qi[3 + k]], de[k] = v[qi[3 + k]];
        quat_E(e, E);
        quat_E(de, Ed);
        for (int r = 0; r < 3; r++)
            for (int k = 0; k < 4; k++) w[r] += 2 * E[r][k] * de[k];
        for (int k = 0; k < 4; k++) {
            double ek = 0;
            for (int r = 0; r < 3; r++) ek += 0.5 * Ed[r][k] * w[r];
            old = a[qi[3 + k]], a[qi[3 + k]] = ek, change = fmax(change, fabs(ek - old));
        }
    }
    vec3_cross(w, vr, ar);
    for (int k = 0; k < dim; k++) old = a[qi[k]], a[qi[k]] = ar[k], change = fmax(change, fabs(ar[k] - old));
    return change;
}

double opoint_steady_frame_accels(const model_view *mv, const double *q, const double *v, double *a)
{
    double change = 0;
    for (int b = 0; b < mv->nflex; b++)
        change = fmax(change, frame_accels(mv->flex[b].dim == 3 ? 3 : 2, mv->flex[b].q, q, v, a));
    for (int b = 0; b < mv->nrframe; b++) change = fmax(change, frame_accels(3, mv->rframe + 7 * b, q, v, a));
    return change;
}
