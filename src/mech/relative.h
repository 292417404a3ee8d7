/* `coordinates: relative`: what the files of the relative formulation share (relative.c: the tree
 * and its coordinates; relative_kinematics.c; relative_forces.c; relative_measures.c). Their
 * entry points for the rest of src/mech are in mech_internal.h. */
#ifndef MBLIN_MECH_RELATIVE_H
#define MBLIN_MECH_RELATIVE_H

#include "mech/mech_internal.h"

/* joint kinds */
enum { JK_NONE, JK_REV, JK_PRI, JK_CYL, JK_UNI, JK_SPH, JK_PLN, JK_FIX };

int mech_rel_kind(mech *M, const joint *J);
/* the number of coordinates of a joint of the kind */
int mech_rel_ncoord(mech *M, int kind);
/* a marker's global position and axes (column-major R; planar: the angle in phi) in the file */
int mech_rel_marker_file(mech *M, int m, double p[3], double R[9], double *phi);
/* the constant part c (Euler parameters) of a joint's relative rotation, snapped to the joint from
 * X = R_j^T R_i of the file's configuration (relative_kinematics.c) */
void mech_rel_snap_c(int kind, const double X[9], double c[4]);
/* marker m's global Euler parameters as texts (its body's times the marker's) */
void mech_rel_marker_q(mech *M, int m, const char *o[4]);
/* the body of b's parent in the tree (-1: b is a root) */
int mech_rel_parent(mech *M, int b);
/* tree joint ji: its child's pose from its parent's and the joint's coordinates (and, spatial,
 * the recursive velocities and accelerations) */
int mech_rel_tree_kinematics(mech *M, int ji);

#endif
