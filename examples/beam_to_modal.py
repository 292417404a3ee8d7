#!/usr/bin/env python3
"""Export a planar beam of the project's own elements as a modal body (docs/mechanism-reference.md, "Modal bodies").

Plays the part of an FE code that writes reduced matrices for a multibody code (what an Adams user
does with an MNF): the beam of `type: beam` (n_e Euler-Bernoulli elements with axial deformation,
consistent mass, the floating frame tangent at node 1, i.e. node 1 clamped to the frame) is reduced
to its k lowest fixed-interface normal modes (all 3 n_e of them by default: then the modal body is
the beam body in other coordinates and gives the same eigenvalues), and the floating-frame
invariants are transformed with the modes:

  Mff' = Phi^T Mff Phi (= I), K' = Phi^T K Phi (= diag omega^2), Sb' = Sb Phi, c1' = Phi^T c1,
  c2' = Phi^T c2, P' = Phi^T P Phi, and m, s0, J0 unchanged.

The element integrals are computed here independently of src/mech/beam.c (numpy, 4-point Gauss).
Writes <prefix>_M.mtx, _K.mtx, _Sb.mtx, _c1.mtx, _c2.mtx, _P.mtx, _node1.mtx and _node<n+1>.mtx
(the shapes of the two end nodes: 3 x k, rows u, v, phi) and prints the body's YAML.

With --geometric, also the geometric stiffness per unit load (docs/mechanism-reference.md, "Geometric
stiffness of modal bodies"): Phi^T K_G Phi, K_G = int N S'^T S' dX (S' the slopes of the transverse
shape functions), with the axial force N of the clamped beam under each unit load case:
  _Gax.mtx   a unit frame acceleration along x (body force -rho A e_x):  N = -rho A (L - X);
  _Gw2.mtx   a unit angular velocity (centrifugal body force rho A X e_x): N = rho A (L^2 - X^2) / 2;
  _Gtip.mtx  a unit force along x at the last node:                       N = 1.
(A straight beam along x has no axial force from ay or wdot: those files would be zero.)

usage: beam_to_modal.py --length L --elements N --E E --rho RHO --radius R [--modes K] [--geometric] --prefix PATH
"""
import argparse
import math
import os

import numpy as np


def gauss4():
    a = math.sqrt(6 / 5)
    t = [math.sqrt((3 - 2 * a) / 7), math.sqrt((3 + 2 * a) / 7)]
    w = [(18 + math.sqrt(30)) / 36, (18 - math.sqrt(30)) / 36]
    pts = [(1 - t[1]) / 2, (1 - t[0]) / 2, (1 + t[0]) / 2, (1 + t[1]) / 2]
    wts = [w[1] / 2, w[0] / 2, w[0] / 2, w[1] / 2]
    return pts, wts


def beam(L, ne, E, rho, A, I):
    """nodal invariants of model/ffr.h for the beam along x from the frame origin"""
    le = L / ne
    nf = 3 * (ne + 1)
    M = np.zeros((nf, nf)); K = np.zeros((nf, nf)); P = np.zeros((nf, nf))
    Sb = np.zeros((2, nf)); c1 = np.zeros(nf); c2 = np.zeros(nf)
    Jt = np.array([[0.0, -1.0], [1.0, 0.0]])
    for e in range(ne):
        d = slice(3 * e, 3 * e + 6)
        for xi, w in zip(*gauss4()):
            n1, n2 = 1 - 3 * xi**2 + 2 * xi**3, (xi - 2 * xi**2 + xi**3) * le
            n3, n4 = 3 * xi**2 - 2 * xi**3, (-xi**2 + xi**3) * le
            S = np.array([[1 - xi, 0, 0, xi, 0, 0], [0, n1, n2, 0, n3, n4]])
            dux = np.array([-1, 0, 0, 1, 0, 0]) / le
            d2 = np.array([0, -6 + 12 * xi, (-4 + 6 * xi) * le, 0, 6 - 12 * xi, (-2 + 6 * xi) * le]) / le**2
            wm = w * le * rho * A
            u0 = np.array([(e + xi) * le, 0.0])
            M[d, d] += wm * S.T @ S
            P[d, d] += wm * S.T @ Jt @ S
            K[d, d] += w * le * (E * A * np.outer(dux, dux) + E * I * np.outer(d2, d2))
            Sb[:, d] += wm * S
            c1[d] += wm * S.T @ u0
            c2[d] += wm * S.T @ (Jt @ u0)
    m = rho * A * L
    return dict(m=m, s0=[m * L / 2, 0.0], J0=m * L * L / 3, M=M, K=K, P=P, Sb=Sb, c1=c1, c2=c2)


def geometric(L, ne, N):
    """int N(X) S'^T S' dX over the beam (S' the slopes of the transverse Hermite functions), N a
    polynomial of degree <= 2 in X: the 4-point Gauss rule is exact"""
    le = L / ne
    nf = 3 * (ne + 1)
    G = np.zeros((nf, nf))
    for e in range(ne):
        d = slice(3 * e, 3 * e + 6)
        for xi, w in zip(*gauss4()):
            dv = np.array([0, (-6 * xi + 6 * xi**2) / le, 1 - 4 * xi + 3 * xi**2, 0, (6 * xi - 6 * xi**2) / le,
                           -2 * xi + 3 * xi**2])
            G[d, d] += w * le * N((e + xi) * le) * np.outer(dv, dv)
    return G


def write_mtx(path, A, what):
    A = np.atleast_2d(A)
    with open(path, "w") as f:
        f.write("%%MatrixMarket matrix array real general\n")
        f.write("%% %s, written by examples/beam_to_modal.py\n" % what)
        f.write("%d %d\n" % A.shape)
        for j in range(A.shape[1]):
            for i in range(A.shape[0]):
                f.write("%.17g\n" % A[i, j])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--length", type=float, required=True)
    ap.add_argument("--elements", type=int, required=True)
    ap.add_argument("--E", type=float, required=True)
    ap.add_argument("--rho", type=float, required=True)
    ap.add_argument("--radius", type=float, required=True)
    ap.add_argument("--modes", type=int, default=0, help="modes kept (default all 3 n_e)")
    ap.add_argument("--geometric", action="store_true", help="also the geometric stiffness per unit load")
    ap.add_argument("--prefix", required=True)
    a = ap.parse_args()
    A = math.pi * a.radius**2
    I = math.pi * a.radius**4 / 4
    b = beam(a.length, a.elements, a.E, a.rho, A, I)
    keep = list(range(3, 3 * (a.elements + 1)))  # node 1 is fixed in the frame
    Mc, Kc = b["M"][np.ix_(keep, keep)], b["K"][np.ix_(keep, keep)]
    # K y = w2 M y by Cholesky of M and a symmetric eigensolver; mass-normalized modes
    Lc = np.linalg.cholesky(Mc)
    C = np.linalg.solve(Lc, np.linalg.solve(Lc, Kc).T).T
    w2, V = np.linalg.eigh(0.5 * (C + C.T))
    Phi_c = np.linalg.solve(Lc.T, V)
    k = a.modes or len(keep)
    Phi_c = Phi_c[:, :k]
    Phi = np.zeros((3 * (a.elements + 1), k))
    Phi[keep, :] = Phi_c
    out = dict(M=Phi.T @ b["M"] @ Phi, K=Phi.T @ b["K"] @ Phi, P=Phi.T @ b["P"] @ Phi, Sb=b["Sb"] @ Phi,
               c1=(Phi.T @ b["c1"])[:, None], c2=(Phi.T @ b["c2"])[:, None])
    out["M"] = 0.5 * (out["M"] + out["M"].T)
    out["K"] = 0.5 * (out["K"] + out["K"].T)
    out["P"] = 0.5 * (out["P"] - out["P"].T)
    base = os.path.basename(a.prefix)
    for key, what in (("M", "modal mass"), ("K", "modal stiffness"), ("P", "P = int rho S^T Jt S"),
                      ("Sb", "Sb = int rho S"), ("c1", "c1 = int rho S^T u0"), ("c2", "c2 = int rho S^T Jt u0")):
        write_mtx("%s_%s.mtx" % (a.prefix, key), out[key], what)
    if a.geometric:
        rA, L = a.rho * A, a.length
        for key, N in (("Gax", lambda X: -rA * (L - X)), ("Gw2", lambda X: rA * (L * L - X * X) / 2), ("Gtip", lambda X: 1.0)):
            G = Phi.T @ geometric(L, a.elements, N) @ Phi
            write_mtx("%s_%s.mtx" % (a.prefix, key), 0.5 * (G + G.T), "geometric stiffness per unit load (%s)" % key)
    last = a.elements + 1
    for node in (1, last):
        write_mtx("%s_node%d.mtx" % (a.prefix, node), Phi[3 * (node - 1):3 * node, :], "u, v, phi of node %d" % node)
    print("    type: modal")
    print("    mass: %.17g" % b["m"])
    print("    s0: [%.17g, 0]" % b["s0"][0])
    print("    J0: %.17g" % b["J0"])
    for key, name in (("mass_matrix", "M"), ("stiffness", "K"), ("Sb", "Sb"), ("c1", "c1"), ("c2", "c2"), ("P", "P")):
        print("    %s: %s_%s.mtx" % (key, base, name))
    if a.geometric:
        print("    geometric_stiffness: {ax: %s_Gax.mtx, w2: %s_Gw2.mtx}" % (base, base))
    print("    markers:")
    print("      first: {position: [0, 0], shapes: %s_node1.mtx}" % base)
    tipgeo = ", geometric_stiffness: {fx: %s_Gtip.mtx}" % base if a.geometric else ""
    print("      last: {position: [%.17g, 0], shapes: %s_node%d.mtx%s}" % (a.length, base, last, tipgeo))


if __name__ == "__main__":
    main()
