#!/usr/bin/env python3
"""Independent numpy reference for the flexible double pendulum of source 001 Sec. 4.2.

Builds the linearized finite element model at the hanging equilibrium directly from the floating
frame of reference (FFR) kinematics, without mblin and without the generated model file:

- per link, coordinates z = (x, y, th, qf) with qf = (qfx_i, qfy_i, qft_i), i = 1..n_p+1;
- the position of a material point is r = R + A(th) (u0 + S qf), S from the element shape
  functions (axial linear, transverse cubic Hermite), evaluated at Gauss points (4 per element,
  exact for the degree-6 integrands);
- mass matrix M = int rho L^T L dV with L = dr/dz = [I, A J u, A S] (the velocity Jacobian);
- potential V = int rho g r_y dV + 1/2 qf^T Kff qf, Kff = int (EA ux'^2 + EI uy''^2) dX by
  quadrature of the shape-function derivatives; its exact gradient and Hessian in z;
- constraints Phi (10): link 1's first node on the ground, link 2's first node on link 1's
  deformed last node, qf at node 1 = 0 per link; exact gradient and Hessians;
- static equilibrium by Newton on [grad V + Phi_q^T lambda; Phi] = 0 from the undeformed hanging
  guess (the links stretch under their weight);
- K = Hess V + sum_k lambda_k Hess Phi_k (the geometric stiffness of gravity and of the joint
  reactions, as the FFR equations give it), null space N of Phi_q (SVD), and the symmetric-definite
  problem (N^T K N) x = omega^2 (N^T M N) x solved by Cholesky + eigh.

usage: flexible_pendulum_ref.py NP [NP ...]   prints the lowest angular frequencies (rad/s)
"""
import sys

import numpy as np

PARAMS = dict(E=1e8, rho=1500.0, r=0.15, l=4.0, g=9.81)
GAUSS_X, GAUSS_W = np.polynomial.legendre.leggauss(4)
GAUSS_X = 0.5 * (GAUSS_X + 1.0)   # on [0, 1]
GAUSS_W = 0.5 * GAUSS_W
JROT = np.array([[0.0, -1.0], [1.0, 0.0]])


def rot(th):
    c, s = np.cos(th), np.sin(th)
    return np.array([[c, -s], [s, c]])


def shape(xi, le):
    """Element shape functions and their X-derivatives at xi for the element dofs
    (ux_a, uy_a, th_a, ux_b, uy_b, th_b): returns S (2x6), d ux/dX (6), d2 uy/dX2 (6)."""
    n1 = 1 - 3 * xi**2 + 2 * xi**3
    n2 = (xi - 2 * xi**2 + xi**3) * le
    n3 = 3 * xi**2 - 2 * xi**3
    n4 = (-xi**2 + xi**3) * le
    S = np.array([[1 - xi, 0, 0, xi, 0, 0], [0, n1, n2, 0, n3, n4]])
    dux = np.array([-1, 0, 0, 1, 0, 0]) / le
    d2 = np.array([0, -6 + 12 * xi, (-4 + 6 * xi) * le, 0, 6 - 12 * xi, (-2 + 6 * xi) * le]) / le**2
    return S, dux, d2


class Link:
    """One FFR link: nz = 3 + 3(n_p+1) coordinates, offset off in the global vector."""

    def __init__(self, npe, off, p):
        self.npe, self.off, self.p = npe, off, p
        self.le = p["l"] / npe
        self.nq = 3 * (npe + 1)
        self.nz = 3 + self.nq
        area = np.pi * p["r"]**2
        inertia = np.pi * p["r"]**4 / 4
        self.rhoA = p["rho"] * area
        # Gauss points: (weight*rhoA*le, u0, S global 2 x nq), and Kff
        self.pts = []
        self.Kff = np.zeros((self.nq, self.nq))
        for e in range(npe):
            dofs = np.arange(3 * e, 3 * e + 6)
            for xi, w in zip(GAUSS_X, GAUSS_W):
                Se, dux, d2 = shape(xi, self.le)
                S = np.zeros((2, self.nq))
                S[:, dofs] = Se
                u0 = np.array([(e + xi) * self.le, 0.0])
                self.pts.append((w * self.rhoA * self.le, u0, S))
                self.Kff[np.ix_(dofs, dofs)] += w * self.le * (
                    p["E"] * area * np.outer(dux, dux) + p["E"] * inertia * np.outer(d2, d2))

    def split(self, z):
        zl = z[self.off:self.off + self.nz]
        return zl[0:2], zl[2], zl[3:]

    def mass(self, z):
        _, th, q = self.split(z)
        A = rot(th)
        M = np.zeros((self.nz, self.nz))
        for w, u0, S in self.pts:
            u = u0 + S @ q
            L = np.hstack([np.eye(2), (A @ JROT @ u)[:, None], A @ S])
            M += w * L.T @ L
        return M

    def potential_derivs(self, z):
        """gradient and Hessian of this link's potential in its own coordinates"""
        _, th, q = self.split(z)
        A = rot(th)
        g = self.p["g"]
        grad = np.zeros(self.nz)
        H = np.zeros((self.nz, self.nz))
        for w, u0, S in self.pts:
            u = u0 + S @ q
            grad[1] += w * g
            grad[2] += w * g * (A @ JROT @ u)[1]
            grad[3:] += w * g * (A @ S)[1]
            H[2, 2] += -w * g * (A @ u)[1]
            H[2, 3:] += w * g * (A @ JROT @ S)[1]
        H[3:, 2] = H[2, 3:]
        grad[3:] += self.Kff @ q
        H[3:, 3:] += self.Kff
        return grad, H


def point_terms(link, z, node):
    """r = R + A(th) (u0_node + q_node): value (2), Jacobian (2 x nz_global index list), and a
    function giving the Hessian of lam . r (local to the link's coordinates)."""
    R, th, q = link.split(z)
    A = rot(th)
    P = np.array([node * link.le, 0.0]) + q[3 * node:3 * node + 2]
    val = R + A @ P
    J = np.zeros((2, link.nz))
    J[:, 0:2] = np.eye(2)
    J[:, 2] = A @ JROT @ P
    J[:, 3 + 3 * node:3 + 3 * node + 2] = A

    def hess(lam):
        H = np.zeros((link.nz, link.nz))
        H[2, 2] = -lam @ (A @ P)
        c = (A @ JROT).T @ lam
        H[2, 3 + 3 * node:3 + 3 * node + 2] = c
        H[3 + 3 * node:3 + 3 * node + 2, 2] = c
        return H

    return val, J, hess


class Pendulum:
    def __init__(self, npe, p=None):
        self.p = dict(PARAMS, **(p or {}))
        self.l1 = Link(npe, 0, self.p)
        self.l2 = Link(npe, self.l1.nz, self.p)
        self.n = self.l1.nz + self.l2.nz
        self.m = 10

    def sl(self, link):
        return slice(link.off, link.off + link.nz)

    def constraints(self, z, lam=None):
        """Phi (10), Phi_q (10 x n), and if lam is given sum_k lam_k Hess Phi_k (n x n)"""
        l1, l2 = self.l1, self.l2
        Phi = np.zeros(self.m)
        Jc = np.zeros((self.m, self.n))
        H = np.zeros((self.n, self.n))
        o1, J1, h1 = point_terms(l1, z, 0)
        Phi[0:2] = o1
        Jc[0:2, self.sl(l1)] = J1
        a2, J2, h2 = point_terms(l2, z, 0)
        e1, Je, he = point_terms(l1, z, l1.npe)
        Phi[2:4] = a2 - e1
        Jc[2:4, self.sl(l2)] = J2
        Jc[2:4, self.sl(l1)] -= Je
        for k, link in enumerate((l1, l2)):
            for c in range(3):
                Phi[4 + 3 * k + c] = z[link.off + 3 + c]
                Jc[4 + 3 * k + c, link.off + 3 + c] = 1.0
        if lam is not None:
            H[self.sl(l1), self.sl(l1)] += h1(lam[0:2]) - he(lam[2:4])
            H[self.sl(l2), self.sl(l2)] += h2(lam[2:4])
        return Phi, Jc, H

    def potential(self, z):
        grad = np.zeros(self.n)
        H = np.zeros((self.n, self.n))
        for link in (self.l1, self.l2):
            g, h = link.potential_derivs(z)
            grad[self.sl(link)] += g
            H[self.sl(link), self.sl(link)] += h
        return grad, H

    def mass(self, z):
        M = np.zeros((self.n, self.n))
        for link in (self.l1, self.l2):
            M[self.sl(link), self.sl(link)] = link.mass(z)
        return M

    def guess(self):
        z = np.zeros(self.n)
        z[self.l1.off + 2] = -np.pi / 2
        z[self.l2.off + 1] = -self.p["l"]
        z[self.l2.off + 2] = -np.pi / 2
        return z

    def equilibrium(self, tol=1e-12, maxit=20):
        z = self.guess()
        lam = np.zeros(self.m)
        for _ in range(maxit):
            grad, HV = self.potential(z)
            Phi, Jc, HP = self.constraints(z, lam)
            F = np.concatenate([grad + Jc.T @ lam, Phi])
            KKT = np.block([[HV + HP, Jc.T], [Jc, np.zeros((self.m, self.m))]])
            d = np.linalg.solve(KKT, -F)
            z += d[:self.n]
            lam += d[self.n:]
            if np.linalg.norm(d[:self.n]) < tol * (1 + np.linalg.norm(z)):
                break
        return z, lam

    def reduced(self):
        """(z, lam, Mr, Kr, N): the symmetric reduced mass and stiffness on the null space of Phi_q"""
        z, lam = self.equilibrium()
        _, HV = self.potential(z)
        _, Jc, HP = self.constraints(z, lam)
        K = HV + HP
        M = self.mass(z)
        _, s, Vt = np.linalg.svd(Jc)
        assert s[-1] > 1e-8 * s[0]
        N = Vt[self.m:].T
        Mr = N.T @ M @ N
        Kr = N.T @ K @ N
        return z, lam, 0.5 * (Mr + Mr.T), 0.5 * (Kr + Kr.T), N


def sym_definite_omegas(M, K):
    """omega = sqrt(eig(K, M)) for symmetric K and symmetric positive definite M, ascending."""
    L = np.linalg.cholesky(M)
    X = np.linalg.solve(L, K)
    C = np.linalg.solve(L, X.T).T
    w2 = np.linalg.eigvalsh(0.5 * (C + C.T))
    return np.sqrt(w2)


def omegas(npe, p=None):
    _, _, Mr, Kr, _ = Pendulum(npe, p).reduced()
    return sym_definite_omegas(Mr, Kr)


def main():
    for a in sys.argv[1:] or ["5"]:
        w = omegas(int(a))
        print("n_p = %s: %s" % (a, " ".join("%.12g" % x for x in w[:8])))


if __name__ == "__main__":
    main()
