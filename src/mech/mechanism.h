/* `model: mechanism`: bodies, markers, joints, drivers, force elements and measures, compiled
 * into the equation level (an mbl_src with generated coordinates, kinetic energy, potential
 * energy, generalized forces, constraints, variables, outputs and states) so that every method,
 * operating point and report works on it unchanged. Vocabulary: docs/mechanism-reference.md.
 * Internal to the library. */
#ifndef MBLIN_MECH_MECHANISM_H
#define MBLIN_MECH_MECHANISM_H

#include <yaml.h>

#include "model/source.h"

/* Relative tolerance of the marker-frame checks (orthonormal, right-handed, perpendicular
 * z/x pair) and of the inertia checks (positive mass, positive definite inertia). */
#define MBL_MECH_FRAME_TOL 1e-9
/* |sin(theta)| of a body's 3-1-3 Euler angles below which its orientation is singular (psi and phi
 * turn about one axis; the mass matrix's condition grows as 1/sin(theta)^2, 1e8 at the limit, and
 * an integrator crawls long before sin(theta) = 0): refused in the file's configuration, at an
 * operating point and along a simulation (src/mech/euler313.c). */
#define MBL_MECH_EULER313_SING_TOL 1e-4
/* Bytes that building the model takes per beam element (planar beam; spatial beam), measured as
 * the peak resident size of loading flexible_pendulum_beams.yaml at 2e3 to 2e5 elements (9.2 to
 * 9.7 kB) and spatial_beam_pendulum.yaml at 2e3 and 2e4 (375 to 385 kB), rounded up: the
 * estimate that mbl_load_options.mem_budget bounds (docs/mechanism-reference.md, "Size of a
 * model"). */
#define MBL_MECH_BEAM_BYTES 10e3
#define MBL_MECH_BEAM3_BYTES 50e3

/* A bushing with rotational stiffness whose markers are rotated relative to each other by more
 * than this (rad) at the operating point gets a note there: its small-angle deflections AX AY AZ
 * make its torque off by about angle^2/6 of itself, 4e-4 at 0.05 rad (docs/mechanism-reference.md,
 * "Checking a mechanism"). */
#define MBL_MECH_BUSHING_SMALL_ANGLE 0.05
/* A rolling wheel (joint type rolling_wheel) whose axle a and plane normal n have |a x n| below
 * this in the file's configuration lies flat on the plane: refused (its contact point is undefined). */
#define MBL_MECH_WHEEL_FLAT 1e-6
/* A tire's slip angle is atan(v_lateral / sqrt(v_forward^2 + vmin^2)) with vmin this speed (in the
 * model's units, m/s in SI): defined at a standstill; it changes the cornering slope by the factor
 * 1 - (vmin / v_forward)^2 / 2 (1.25e-11 relative at 20 m/s). */
#define MBL_MECH_TIRE_MIN_SPEED 1e-4
/* A tire whose regularisation's share of its slip angle's denominator, vmin / sqrt(v_forward^2 +
 * vmin^2), is above this at the operating point (the wheel slower than about 1000 vmin = 0.1 m/s:
 * the cornering slope changed by 5e-7 there) gets a note: at a standstill the lateral force is the
 * regularisation's, a damping Ca / vmin of the lateral slip speed, and so are the fast modes it
 * makes (a car at rest: -965291 rad/s). */
#define MBL_MECH_TIRE_SLOW_NOTE 1e-3
/* A beam body whose mean axial strain, its tip's axial displacement over its length, exceeds this
 * in size at the operating point gets a note: its elastic forces are those of small strains (linear
 * in the displacements), not the beam's beyond them (a blade stretched 285 % at 700 rad/s, or
 * its tip past the hub at 1000 rad/s, beyond the axial resonance). */
#define MBL_MECH_BEAM_STRAIN_NOTE 0.01

/* Read the root mapping of a `model: mechanism` document into src (which the caller created
 * with its file and name fields set). On error returns a negative code with "file:line:col:
 * what" in st, naming the element (body, marker, joint, force). */
/* The --set overrides (sets, nsets; may be 0) replace the parameters' file values in every
 * number the compiler evaluates (checks, orientations, initial Euler parameters); an override
 * of an unknown parameter is left to the model loader to report. */
int mech_read(yaml_document_t *doc, const yaml_node_t *root, const char *file, const mbl_setting *sets, int nsets,
              mbl_src *src, mbl_status *st);

#endif
