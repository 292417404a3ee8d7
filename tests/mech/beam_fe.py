"""An independent finite element reference for the planar beam tests of tests/mech (written with
numpy, not with mblin's formulation): a uniform beam along x clamped at its root, Hermite cubic
bending and linear axial shape functions, a 6-point Gauss rule, in a frame turning at om about the
axis normal to the plane at a hub radius, with the geometric stiffness of its axial force

    N(X) = rho A (gax (L - X) + om^2 ((L^2 - X^2)/2 + hub (L - X))) - P

(gax: an acceleration along the beam, gravity for a hanging beam; P: a compressive tip load).
In the plane of the turning (lag) the Coriolis coupling 2 om rho A (u' v - v' u) and the softening
-om^2 M enter; out of it (flap) the transverse coordinates alone, with neither.

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from beam_fe import clamped_beam_eigs
"""
import numpy as np


def clamped_beam_eigs(ne, L, E, rho, A, I, gax=0.0, om=0.0, hub=0.0, P=0.0, geo=True, flap=False):
    """the eigenvalues (complex, all of them) of the clamped beam above with ne elements; geo=False
    leaves the geometric stiffness out"""
    le, n = L / ne, 3 * (ne + 1)
    M, G, K = np.zeros((n, n)), np.zeros((n, n)), np.zeros((n, n))
    xs, ws = np.polynomial.legendre.leggauss(6)
    xs, ws = 0.5 * (xs + 1), 0.5 * ws
    for e in range(ne):
        X0, d = e * le, slice(3 * e, 3 * e + 6)
        for xi, w in zip(xs, ws):
            X, W = X0 + xi * le, w * le
            nu = np.array([1 - xi, 0, 0, xi, 0, 0])
            dnu = np.array([-1, 0, 0, 1, 0, 0]) / le
            h = [1 - 3 * xi ** 2 + 2 * xi ** 3, (xi - 2 * xi ** 2 + xi ** 3) * le, 3 * xi ** 2 - 2 * xi ** 3,
                 (-xi ** 2 + xi ** 3) * le]
            dh = [(-6 * xi + 6 * xi ** 2) / le, 1 - 4 * xi + 3 * xi ** 2, (6 * xi - 6 * xi ** 2) / le, -2 * xi + 3 * xi ** 2]
            d2h = [(-6 + 12 * xi) / le ** 2, (-4 + 6 * xi) / le, (6 - 12 * xi) / le ** 2, (-2 + 6 * xi) / le]
            nv = np.array([0, h[0], h[1], 0, h[2], h[3]])
            dnv = np.array([0, dh[0], dh[1], 0, dh[2], dh[3]])
            d2nv = np.array([0, d2h[0], d2h[1], 0, d2h[2], d2h[3]])
            N = rho * A * (gax * (L - X) + om * om * ((L * L - X * X) / 2 + hub * (L - X))) - P if geo else 0.0
            M[d, d] += W * rho * A * (np.outer(nu, nu) + np.outer(nv, nv))
            G[d, d] += 2 * om * W * rho * A * (np.outer(nu, -nv) + np.outer(nv, nu))
            K[d, d] += W * (E * A * np.outer(dnu, dnu) + E * I * np.outer(d2nv, d2nv) + N * np.outer(dnv, dnv))
    if flap:  # the transverse coordinates only, no Coriolis coupling, no softening
        G[:] = 0
    else:
        K -= om * om * M
    keep = [i for i in range(3, n) if not flap or i % 3]  # node 1 clamped
    M, G, K = M[np.ix_(keep, keep)], G[np.ix_(keep, keep)], K[np.ix_(keep, keep)]
    m = M.shape[0]
    Mi = np.linalg.inv(M)
    return np.linalg.eigvals(np.block([[np.zeros((m, m)), np.eye(m)], [-Mi @ K, -Mi @ G]]))


def frequencies(ev):
    """the positive imaginary parts, ascending (rad/s)"""
    return np.sort(ev.imag[ev.imag > 1e-9])
