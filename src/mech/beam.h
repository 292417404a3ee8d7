/* Euler-Bernoulli beam elements and the floating-frame inertia invariants of a beam.
 * Internal to the library; the vocabulary is in docs/mechanism-reference.md ("Flexible bodies").
 *
 * A straight beam of length L along the body x axis, n_e equal elements, n_e + 1 nodes.
 * Planar nodal coordinates (ux, uy, phi): axial and transverse displacement and the slope
 * phi = d uy / dX. Spatial nodal coordinates (ux, uy, uz, rx, ry, rz): displacements, twist rx,
 * and the small rotations ry = -d uz / dX, rz = d uy / dX. Axial displacement and twist are
 * linear over an element, the transverse displacements cubic Hermite. The mass is consistent
 * (translational inertia rho A, plus rho (Iy + Iz) for the twist in space; no rotary inertia of
 * bending: Euler-Bernoulli), the stiffness EA u'^2 + EI v''^2 (+ GJ rx'^2 in space). Every
 * integral is a Gauss-Legendre rule exact for the polynomial degree involved. */
#ifndef MBLIN_MECH_BEAM_H
#define MBLIN_MECH_BEAM_H

#include "mblin/la.h"
#include "mblin/status.h"
#include "model/ffr.h"

typedef struct mbl_beam_section {
    double E, G, rho;   /* Young's and shear modulus, density */
    double A, Iy, Iz;   /* area, second moments about the section's y and z axes (planar: Iz) */
    double J;           /* St. Venant torsion constant (circle: Iy + Iz) */
} mbl_beam_section;

/* Element matrices, column-major, ndof = 6 (planar) or 12 (spatial) per element, nodes a, b. */
void mech_beam2_element(const mbl_beam_section *s, double le, double *Ke, double *Me);
void mech_beam3_element(const mbl_beam_section *s, double le, double *Ke, double *Me);
/* the spatial element's shape functions at xi in [0, 1]: S (3 x 12 row-major: ux, uy, uz over the
 * dofs ux, uy, uz, rx, ry, rz of both nodes) and the twist (12); the 4-point Gauss rule on [0, 1] */
void mech_beam3_shape(double xi, double le, double S[36], double tw[12]);
void mech_beam3_gauss(double x[4], double w[4]);

/* Global stiffness and mass of a beam of ne elements of length L (planar: dim 2, 3 dofs per node;
 * spatial: dim 3, 6 per node), as CSC (symmetric, both triangles). Rayleigh damping is
 * alpha M + beta K (the caller forms it). */
int mech_beam_assemble(int dim, const mbl_beam_section *s, double L, int ne, mbla_csc **K, mbla_csc **M,
                       mbl_status *st);

/* The floating-frame invariants (model/ffr.h) of a planar beam of ne elements, length L, along the
 * body x axis from the frame's origin: qf are the nodal coordinates (ux, uy, phi) of the nodes
 * 1..ne+1, K its stiffness. */
int mech_beam2_invariants(const mbl_beam_section *s, double L, int ne, mbl_ffr_invariants *inv, mbl_status *st);
/* The same for a spatial beam (model/ffr3.h; src/mech/beam3.c): qf the nodal coordinates (ux, uy,
 * uz, rx, ry, rz) of the nodes 1..ne+1, with the nodes' places for the mode shapes. */
struct mbl_ffr3;
int mech_beam3_invariants(const mbl_beam_section *s, double L, int ne, struct mbl_ffr3 *sp, mbl_status *st);

#endif
