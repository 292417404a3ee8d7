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
  problem (N^T K N) x = omega^2 (N^T M N) x solved by Cholesky + eigh (double precision);
- then the lowest eigenpairs are refined by Newton on the bordered constrained eigenproblem
  (K - w^2 M) x + Phi_q^T nu = 0, Phi_q x = 0, x0^T M x = 1, with every residual (and M, K,
  Phi_q, the equilibrium itself) in extended precision (numpy longdouble, eps 1.1e-19 on x86-64)
  and the corrections solved in double (mixed-precision iterative refinement).

Why the refinement: in nodal coordinates the low frequencies are sensitive to rounding of K
(its large element stiffness EI/le^3 nearly cancels on the smooth, near-rigid low modes), so a
double-precision solve is only good to ~1e-9 at n_p = 10 and ~1e-8 at n_p = 100 (it varied by
that much with the number of BLAS threads). The refined values are stable to ~1e-13.

usage: flexible_pendulum_ref.py NP [NP ...]   prints the lowest angular frequencies (rad/s)
"""
import sys

import numpy as np

LD = np.longdouble
PI = np.arccos(LD(-1))
PARAMS = dict(E=LD("1e8"), rho=LD(1500), r=LD("0.15"), l=LD(4), g=LD("9.81"))


def _gauss4():
    """4-point Gauss-Legendre rule on [0, 1] in extended precision (exact to degree 7)"""
    a = np.sqrt(LD(6) / 5)
    pts, wts = [], []
    for sgn in (-1, 1):
        for t, w in ((np.sqrt((3 - 2 * a) / 7), (18 + np.sqrt(LD(30))) / 36),
                     (np.sqrt((3 + 2 * a) / 7), (18 - np.sqrt(LD(30))) / 36)):
            pts.append((1 + sgn * t) / 2)
            wts.append(w / 2)
    return pts, wts


GAUSS_X, GAUSS_W = _gauss4()
JROT = np.array([[0, -1], [1, 0]], dtype=LD)


def rot(th):
    c, s = np.cos(th), np.sin(th)
    return np.array([[c, -s], [s, c]], dtype=LD)


def shape(xi, le):
    """Element shape functions and their X-derivatives at xi for the element dofs
    (ux_a, uy_a, th_a, ux_b, uy_b, th_b): returns S (2x6), d ux/dX (6), d2 uy/dX2 (6)."""
    n1 = 1 - 3 * xi**2 + 2 * xi**3
    n2 = (xi - 2 * xi**2 + xi**3) * le
    n3 = 3 * xi**2 - 2 * xi**3
    n4 = (-xi**2 + xi**3) * le
    S = np.array([[1 - xi, 0, 0, xi, 0, 0], [0, n1, n2, 0, n3, n4]], dtype=LD)
    dux = np.array([-1, 0, 0, 1, 0, 0], dtype=LD) / le
    d2 = np.array([0, -6 + 12 * xi, (-4 + 6 * xi) * le, 0, 6 - 12 * xi, (-2 + 6 * xi) * le], dtype=LD) / le**2
    return S, dux, d2


class Link:
    """One FFR link: nz = 3 + 3(n_p+1) coordinates (x, y, th, qf), at offset off in the global
    vector. Element integrals by 4-point Gauss quadrature, assembled element by element."""

    def __init__(self, npe, off, p):
        self.npe, self.off, self.p = npe, off, p
        self.le = p["l"] / npe
        self.nq = 3 * (npe + 1)
        self.nz = 3 + self.nq
        area = PI * p["r"]**2
        inertia = PI * p["r"]**4 / 4
        self.rhoA = p["rho"] * area
        # Gauss points: (element dofs in qf, weight*rhoA*le, u0, element S 2 x 6)
        self.pts = []
        self.Kff = np.zeros((self.nq, self.nq), dtype=LD)
        for e in range(npe):
            dofs = np.arange(3 * e, 3 * e + 6)
            for xi, w in zip(GAUSS_X, GAUSS_W):
                Se, dux, d2 = shape(xi, self.le)
                u0 = np.array([(e + xi) * self.le, 0], dtype=LD)
                self.pts.append((dofs, w * self.rhoA * self.le, u0, Se))
                self.Kff[np.ix_(dofs, dofs)] += w * self.le * (
                    p["E"] * area * np.outer(dux, dux) + p["E"] * inertia * np.outer(d2, d2))

    def split(self, z):
        zl = z[self.off:self.off + self.nz]
        return zl[0:2], zl[2], zl[3:]

    def mass(self, z):
        """M = sum over Gauss points of w L^T L, L = dr/dz = [I, A J u, A S]"""
        _, th, q = self.split(z)
        A = rot(th)
        M = np.zeros((self.nz, self.nz), dtype=LD)
        for dofs, w, u0, Se in self.pts:
            u = u0 + Se @ q[dofs]
            L = np.hstack([np.eye(2, dtype=LD), (A @ JROT @ u)[:, None], A @ Se])
            idx = np.concatenate([[0, 1, 2], 3 + dofs])
            M[np.ix_(idx, idx)] += w * (L.T @ L)
        return M

    def potential_derivs(self, z):
        """gradient and Hessian of this link's potential int rho g r_y dV + 1/2 qf^T Kff qf"""
        _, th, q = self.split(z)
        A = rot(th)
        AJ = A @ JROT
        g = self.p["g"]
        grad = np.zeros(self.nz, dtype=LD)
        H = np.zeros((self.nz, self.nz), dtype=LD)
        for dofs, w, u0, Se in self.pts:
            u = u0 + Se @ q[dofs]
            grad[1] += w * g
            grad[2] += w * g * (AJ @ u)[1]
            grad[3 + dofs] += w * g * (A @ Se)[1]
            H[2, 2] += -w * g * (A @ u)[1]
            H[2, 3 + dofs] += w * g * (AJ @ Se)[1]
        H[3:, 2] = H[2, 3:]
        grad[3:] += self.Kff @ q
        H[3:, 3:] += self.Kff
        return grad, H


def point_terms(link, z, node):
    """r = R + A(th) (u0_node + q_node): value (2), Jacobian (2 x nz of the link), and a
    function giving the Hessian of lam . r in the link's coordinates."""
    R, th, q = link.split(z)
    A = rot(th)
    P = np.array([node * link.le, 0], dtype=LD) + q[3 * node:3 * node + 2]
    val = R + A @ P
    J = np.zeros((2, link.nz), dtype=LD)
    J[:, 0:2] = np.eye(2, dtype=LD)
    J[:, 2] = A @ JROT @ P
    J[:, 3 + 3 * node:3 + 3 * node + 2] = A

    def hess(lam):
        H = np.zeros((link.nz, link.nz), dtype=LD)
        H[2, 2] = -lam @ (A @ P)
        c = (A @ JROT).T @ lam
        H[2, 3 + 3 * node:3 + 3 * node + 2] = c
        H[3 + 3 * node:3 + 3 * node + 2, 2] = c
        return H

    return val, J, hess


def solve_refined(Amat, b, iters=4):
    """Solve Amat x = b (extended precision Amat, b) by double-precision LU with iterative
    refinement of the residual in extended precision."""
    A64 = Amat.astype(float)
    x = np.linalg.solve(A64, b.astype(float)).astype(LD)
    for _ in range(iters):
        r = b - Amat @ x
        x += np.linalg.solve(A64, r.astype(float)).astype(LD)
    return x


class Pendulum:
    def __init__(self, npe, p=None):
        self.p = dict(PARAMS, **{k: LD(v) for k, v in (p or {}).items()})
        self.l1 = Link(npe, 0, self.p)
        self.l2 = Link(npe, self.l1.nz, self.p)
        self.n = self.l1.nz + self.l2.nz
        self.m = 10

    def sl(self, link):
        return slice(link.off, link.off + link.nz)

    def constraints(self, z, lam=None):
        """Phi (10), Phi_q (10 x n), and if lam is given sum_k lam_k Hess Phi_k (n x n)"""
        l1, l2 = self.l1, self.l2
        Phi = np.zeros(self.m, dtype=LD)
        Jc = np.zeros((self.m, self.n), dtype=LD)
        H = np.zeros((self.n, self.n), dtype=LD)
        o1, J1, h1 = point_terms(l1, z, 0)           # point o on the ground
        Phi[0:2] = o1
        Jc[0:2, self.sl(l1)] = J1
        a2, J2, h2 = point_terms(l2, z, 0)           # link 2's first node ...
        e1, Je, he = point_terms(l1, z, l1.npe)      # ... on link 1's deformed last node P1
        Phi[2:4] = a2 - e1
        Jc[2:4, self.sl(l2)] = J2
        Jc[2:4, self.sl(l1)] -= Je
        for k, link in enumerate((l1, l2)):          # qf at node 1 = 0
            for c in range(3):
                Phi[4 + 3 * k + c] = z[link.off + 3 + c]
                Jc[4 + 3 * k + c, link.off + 3 + c] = 1
        if lam is not None:
            H[self.sl(l1), self.sl(l1)] += h1(lam[0:2]) - he(lam[2:4])
            H[self.sl(l2), self.sl(l2)] += h2(lam[2:4])
        return Phi, Jc, H

    def potential(self, z):
        grad = np.zeros(self.n, dtype=LD)
        H = np.zeros((self.n, self.n), dtype=LD)
        for link in (self.l1, self.l2):
            g, h = link.potential_derivs(z)
            grad[self.sl(link)] += g
            H[self.sl(link), self.sl(link)] += h
        return grad, H

    def mass(self, z):
        M = np.zeros((self.n, self.n), dtype=LD)
        for link in (self.l1, self.l2):
            M[self.sl(link), self.sl(link)] = link.mass(z)
        return M

    def guess(self):
        z = np.zeros(self.n, dtype=LD)
        z[self.l1.off + 2] = -PI / 2
        z[self.l2.off + 1] = -self.p["l"]
        z[self.l2.off + 2] = -PI / 2
        return z

    def equilibrium(self, maxit=30):
        """Newton on [grad V + Phi_q^T lambda; Phi] = 0 (exact Hessians), residuals in extended
        precision; stops when the step is at extended-precision rounding level"""
        z = self.guess()
        lam = np.zeros(self.m, dtype=LD)
        for _ in range(maxit):
            grad, HV = self.potential(z)
            Phi, Jc, HP = self.constraints(z, lam)
            F = np.concatenate([grad + Jc.T @ lam, Phi])
            KKT = np.block([[HV + HP, Jc.T], [Jc, np.zeros((self.m, self.m), dtype=LD)]])
            d = solve_refined(KKT, -F)
            z += d[:self.n]
            lam += d[self.n:]
            if np.max(np.abs(d[:self.n])) <= 1e-17 * (1 + np.max(np.abs(z))):
                break
        else:
            raise RuntimeError("reference equilibrium did not converge")
        return z, lam

    def linearized(self):
        """z, lambda at the equilibrium and the (extended precision) M, K = Hess V + sum lambda_k
        Hess Phi_k, Phi_q there"""
        z, lam = self.equilibrium()
        _, HV = self.potential(z)
        _, Jc, HP = self.constraints(z, lam)
        return z, lam, self.mass(z), HV + HP, Jc

    def omegas(self, nref=20):
        """the angular frequencies, ascending: all of them from the double-precision reduced
        symmetric-definite problem, the lowest nref refined in extended precision; and z"""
        z, lam, M, K, Jc = self.linearized()
        # null space by partitioning: dependent R1, R2 and node 1's (qfx, qfy) per link
        dep = []
        for link in (self.l1, self.l2):
            dep += [link.off, link.off + 1, link.off + 3, link.off + 4, link.off + 5]
        ind = [i for i in range(self.n) if i not in dep]
        Nd = -solve_refined(Jc[:, dep], Jc[:, ind])  # N = [Nd on dep; I on ind]

        def reduce(X):   # N^T X N without forming N (the inner dimension of Nd is 10)
            Xii, Xdi, Xdd = X[np.ix_(ind, ind)], X[np.ix_(dep, ind)], X[np.ix_(dep, dep)]
            R = Xii + Nd.T @ Xdi + Xdi.T @ Nd + Nd.T @ (Xdd @ Nd)
            return 0.5 * (R + R.T).astype(float)

        Mr, Kr = reduce(M), reduce(K)
        N = np.zeros((self.n, len(ind)), dtype=LD)
        N[dep] = Nd
        N[ind] = np.eye(len(ind), dtype=LD)
        w2, Y = sym_definite_eig(Mr, Kr)
        w = np.sqrt(w2).astype(LD)
        for j in range(min(nref, len(w))):
            w[j] = refine(M, K, Jc, (N @ Y[:, j].astype(LD)), w2[j])
        return np.sqrt(np.sort(w.astype(LD)**2)), z


def refine(M, K, Jc, x0, w2, iters=5):
    """Newton on the bordered constrained eigenproblem (K - s M) x + Jc^T nu = 0, Jc x = 0,
    x0^T M x = 1 for (x, nu, s = omega^2): residuals in extended precision, corrections with the
    double-precision Jacobian of the starting point (simplified Newton). Returns omega."""
    n, m = M.shape[0], Jc.shape[0]
    Mx0 = M @ x0
    x = x0 / (x0 @ Mx0)
    nu = np.zeros(m, dtype=LD)
    s = LD(w2)
    Jac = np.zeros((n + m + 1, n + m + 1))
    Jac[:n, :n] = (K - s * M).astype(float)
    Jac[:n, n:n + m] = Jc.T.astype(float)
    Jac[:n, -1] = -(M @ x).astype(float)
    Jac[n:n + m, :n] = Jc.astype(float)
    Jac[-1, :n] = Mx0.astype(float)
    Jinv = np.linalg.inv(Jac)
    # the correction shrinks by ~1e-5 per step down to the extended-precision floor of the
    # residual (|ds|/s from 1e-17 at n_p = 10 to ~1e-12 at n_p = 100: K's large entries cancel
    # on the smooth low modes); a few steps reach it
    for _ in range(iters):
        r = np.concatenate([K @ x - s * (M @ x) + Jc.T @ nu, Jc @ x, [Mx0 @ x - 1]])
        d = (Jinv @ -r.astype(float)).astype(LD)
        x += d[:n]
        nu += d[n:n + m]
        s += d[-1]
        step = abs(d[-1]) / abs(s)
        if step <= 1e-16:
            break
    if step > 1e-11:
        raise RuntimeError("reference eigenvalue refinement did not converge (last step %.1e)" % step)
    return np.sqrt(s)


def sym_definite_eig(M, K):
    """omega^2 and M-orthonormal vectors of K y = omega^2 M y (K symmetric, M symmetric
    positive definite), ascending, in double precision (Cholesky + eigh)"""
    L = np.linalg.cholesky(M)
    X = np.linalg.solve(L, K)
    C = np.linalg.solve(L, X.T).T
    w2, V = np.linalg.eigh(0.5 * (C + C.T))
    Y = np.linalg.solve(L.T, V)
    return w2, Y


def omegas(npe, nref=20, p=None):
    return Pendulum(npe, p).omegas(nref)[0]


def main():
    for a in sys.argv[1:] or ["5"]:
        w = omegas(int(a))
        print("n_p = %s: %s" % (a, " ".join("%.15g" % x for x in w[:8])))


if __name__ == "__main__":
    main()
