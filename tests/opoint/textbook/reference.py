#!/usr/bin/python3
"""Independent reference solutions of the textbook models of test_converge.c: each model's
equilibrium (or steady-motion) equations written out by hand here (not taken from mblin), solved
with scipy (brentq on a bracket, fsolve from the file's guess), printed to 9 digits. The values are
copied into test_converge.c; the derivations are in the models' header comments."""
import math
import numpy as np
from scipy.optimize import brentq, fsolve

g = 9.81
R = lambda t: np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])


def grad(V, x, h=1e-20):
    """gradient of V at x by the complex step (exact to rounding)"""
    x = np.asarray(x, dtype=float)
    return np.array([np.imag(V(x + 1j * h * e)) / h for e in np.eye(len(x))])


def cnorm(d):
    return np.sqrt(sum(di * di for di in d))


def show(name, **vals):
    print(name + ": " + ", ".join("%s = %.9f" % kv for kv in vals.items()))


# pendulum_torque: m g l sin th = T
show("pendulum_torque", th=math.asin(5 / (2 * 0.8 * g)))

# double_pendulum_tip_force: tan th1 = F / ((m1 + m2) g), tan th2 = F / (m2 g)
show("double_pendulum_tip_force", th1=math.atan(6 / (3 * g)), th2=math.atan(6 / g))

# double_pendulum_torsion
m1, m2, l1, l2, k1, k2, a1, a2 = 1, 1, 0.5, 0.5, 8, 5, 1.0, 1.2
V = lambda q: (-(m1 + m2) * g * l1 * np.cos(q[0]) - m2 * g * l2 * np.cos(q[1]) + k1 / 2 * (q[0] - a1) ** 2
               + k2 / 2 * (q[1] - q[0] - a2) ** 2)
q = fsolve(lambda q: grad(V, q), [0.4, 1.0], xtol=1e-14)
show("double_pendulum_torsion", th1=q[0], th2=q[1])

# spring_supported_bar
m, l, k, L0, H = 3, 1.2, 200, 0.5, 1.2
V = lambda th: m * g * l / 2 * np.sin(th) + k / 2 * (cnorm([l * np.cos(th) - l, H - l * np.sin(th)]) - L0) ** 2
show("spring_supported_bar", th=brentq(lambda t: grad(lambda x: V(x[0]), [t])[0], 0.0, 0.6, xtol=1e-15))

# bead_on_hoop: cos th = g / (R W^2)
show("bead_on_hoop", th=math.acos(g / (0.5 * 36)))

# governor: cos th = ((m + M) g + 2 k l) / (m l W^2 + 2 k l)
m, M, l, k, W = 1, 0.5, 0.25, 8, 10
show("governor", th=math.acos(((m + M) * g + 2 * k * l) / (m * l * W * W + 2 * k * l)))

# inverted_pendulum_buckled: kt th = m g l sin th, kt = 0.6 m g l
show("inverted_pendulum_buckled", th=brentq(lambda t: 0.6 * t - math.sin(t), 0.5, 3.0, xtol=1e-15))

# von_mises_truss: d/dy [EA/L0 (L - L0)^2 + P y] = 0 near y = h
a, h, EA, P = 1, 0.5, 1000, 20
L0 = math.hypot(a, h)
dV = lambda y: 2 * EA / L0 * (math.hypot(a, y) - L0) * y / math.hypot(a, y) + P
show("von_mises_truss", y=brentq(dV, 0.3, 0.5, xtol=1e-15))

# hanging_chain_nonlinear: k x + k3 x^3 = load
k, k3 = 150, 3000
x2 = brentq(lambda x: k * x + k3 * x ** 3 - 1.5 * g, 0, 1, xtol=1e-15)
x1 = brentq(lambda x: k * x + k3 * x ** 3 - 3.5 * g, 0, 1, xtol=1e-15)
show("hanging_chain_nonlinear", y1=0.3 + x1, y2=0.3 + x1 + 0.2 + x2)

# elastic_pendulum_force
show("elastic_pendulum_force", r=0.5 + math.hypot(2 * g, 4) / 100, th=math.atan(4 / (2 * g)))

# crank_offset_spring
m, r, k, L0, d = 1, 0.3, 60, 0.45, 0.4
V = lambda th: m * g * r / 2 * np.sin(th) + k / 2 * (cnorm([r * np.cos(th) - d, r * np.sin(th)]) - L0) ** 2
dV = lambda t: grad(lambda x: V(x[0]), [t])[0]
show("crank_offset_spring", th=fsolve(dV, [1.0], xtol=1e-15)[0])

# tripod_platform
m, k, L0, Rr, F = 5, 120, 0.6, 0.4, 3
A = [(Rr, 0, 0), (-Rr / 2, Rr * math.sqrt(3) / 2, 0), (-Rr / 2, -Rr * math.sqrt(3) / 2, 0)]
V = lambda p: m * g * p[2] + sum(k / 2 * (cnorm([p[0] - a[0], p[1] - a[1], p[2] - a[2]]) - L0) ** 2 for a in A) - F * p[0]
p = fsolve(lambda p: grad(V, p), [0.03, 0.01, -0.65], xtol=1e-14)
show("tripod_platform", x=p[0], y=p[1], z=p[2])


def lagrange(V, Phi, x0, lam0):
    """stationary point of V on Phi = 0: grad V + Phi_x^T lambda = 0, Phi = 0 (complex-step derivatives)"""
    n = len(x0)

    def eqs(z):
        x, lam = z[:n], z[n:]
        Jt = np.array([np.imag(np.asarray(Phi(np.asarray(x, dtype=complex) + 1j * 1e-20 * e))) / 1e-20
                       for e in np.eye(n)])  # n x m
        return np.concatenate([grad(V, x) + Jt @ lam, np.real(np.asarray(Phi(np.asarray(x, dtype=complex))))])

    z = fsolve(eqs, np.concatenate([x0, lam0]), xtol=1e-14)
    assert np.max(np.abs(eqs(z))) < 1e-9, eqs(z)
    return z[:n]


# double_pendulum_nonlinear (the model): uniform links, absolute angles from the downward
# vertical; spring between body markers s1 = (0.15, 0) on link 1 and s2 = (-0.1, 0.1) on link 2
m1, m2, l1, l2 = 1, 1, 0.4, 0.6
k1, k3, L0, kt, a0 = 60, 900, 0.25, 6, 0.5


def V_dpn(th):
    t1, t2 = th
    c1 = -R(t1) @ np.array([0, l1 / 2])
    e1 = c1 + R(t1) @ np.array([0, -l1 / 2])
    c2 = e1 - R(t2) @ np.array([0, l2 / 2])
    s = cnorm((c1 + R(t1) @ np.array([0.15, 0])) - (c2 + R(t2) @ np.array([-0.1, 0.1]))) - L0
    return m1 * g * c1[1] + m2 * g * c2[1] + k1 * s * s / 2 + k3 * s ** 4 / 4 - kt * np.cos(t1 - a0)


q = fsolve(lambda q: grad(V_dpn, q), [0.35, -0.5], xtol=1e-14)
show("double_pendulum_nonlinear", link1_th=q[0], link2_th=q[1])

# pendulum_torsion_preload: kt (th - a0) + m g l/2 sin th = 0
m, l, kt, a0 = 2, 0.8, 5, 1.2
show("pendulum_torsion_preload", rod_th=brentq(lambda t: kt * (t - a0) + m * g * l / 2 * math.sin(t), 0, 1.2,
                                                xtol=1e-15))

# triple_pendulum: uniform links (m, l each), torsion springs k on the three joints (relative
# angles), horizontal tip force F
mm, ll, kk, F = (1.0, 0.8, 0.6), (0.5, 0.4, 0.3), (4.0, 3.0, 2.0), 2.0


def V_tp(th):
    v, p = 0, np.zeros(2)
    for i in range(3):
        c = p + np.array([ll[i] / 2 * np.sin(th[i]), -ll[i] / 2 * np.cos(th[i])])
        p = p + np.array([ll[i] * np.sin(th[i]), -ll[i] * np.cos(th[i])])
        v = v + mm[i] * g * c[1] + kk[i] / 2 * (th[i] - (th[i - 1] if i else 0)) ** 2
    return v - F * p[0]


q = fsolve(lambda q: grad(V_tp, q), [0.2, 0.3, 0.5], xtol=1e-14)
show("triple_pendulum", l1_th=q[0], l2_th=q[1], l3_th=q[2])

# fourbar_spring: bars along their body x axes, angles from the global x axis; A = (0, 0),
# D = (d, 0); crank a, coupler b, rocker c; torsion kt (th1 - a0) at A; gravity
a, b, c, d, kt, a0 = 0.3, 0.8, 0.6, 0.7, 3.0, 1.0
ms = (1.0, 1.5, 1.2)
e = lambda t: np.array([np.cos(t), np.sin(t)])
V = lambda t: (ms[0] * g * a / 2 * np.sin(t[0]) + ms[1] * g * (a * np.sin(t[0]) + b / 2 * np.sin(t[1]))
               + ms[2] * g * c / 2 * np.sin(t[2]) + kt / 2 * (t[0] - a0) ** 2)
Phi = lambda t: a * e(t[0]) + b * e(t[1]) - c * e(t[2]) - np.array([d, 0])
# the file's guess: th1 = 0.3, the coupler and rocker assembled (elbow up)
t1 = 0.3
t23 = fsolve(lambda u: Phi([t1, u[0], u[1]]), [0.3, 1.5], xtol=1e-14)
print("  (fourbar_spring guess: th1 = %.6f, th2 = %.6f, th3 = %.6f)" % (t1, t23[0], t23[1]))


def closure(t1):
    """coupler and rocker angles for the crank angle t1 (elbow up, the guess's branch): the
    rocker's end C on the circle of radius b about B and of radius c about D"""
    B = a * e(t1)
    Dv = np.array([d, 0]) - B
    dist = math.hypot(*Dv)
    # angle at B between BD and BC (law of cosines)
    beta = math.acos((b * b + dist * dist - c * c) / (2 * b * dist))
    t2 = math.atan2(Dv[1], Dv[0]) + beta
    C = B + b * e(t2)
    return t2, math.atan2(C[1], C[0] - d)


print("  (closure at the guess: th2 = %.9f, th3 = %.9f)" % closure(t1))
Vr = lambda t: V([t, *closure(t)])
t1s = brentq(lambda t: (Vr(t + 1e-6) - Vr(t - 1e-6)) / 2e-6, 0.1, 0.5, xtol=1e-14)
q = [t1s, *closure(t1s)]
assert np.max(np.abs(Phi(q))) < 1e-12
show("fourbar_spring", crank_th=q[0], coupler_th=q[1], rocker_th=q[2])
# fourbar_spring: the other equilibrium of the same (elbow-up) assembly, a crank angle 0.67 rad
# below the first (unstable), within reach of a guess perturbed by 0.5 rad
t1o = brentq(lambda t: (Vr(t + 1e-6) - Vr(t - 1e-6)) / 2e-6, -0.5, -0.4, xtol=1e-14)
show("fourbar_spring (other equilibrium)", crank_th=t1o)


# slider_crank: x_C = r cos th + sqrt(L^2 - r^2 sin^2 th); V = -T th + k/2 (x_C - xa - L0)^2
r, L, k, L0, xa, T = 0.2, 0.6, 500, 0.3, 0.4, 4
xc = lambda t: r * np.cos(t) + np.sqrt(L * L - r * r * np.sin(t) ** 2)
V = lambda t: -T * t + k / 2 * (xc(t) - xa - L0) ** 2
show("slider_crank", crank_th=brentq(lambda t: grad(lambda x: V(x[0]), [t])[0], 0.05, 1.5, xtol=1e-15))

# cart_pendulum: tan th = 2 F / (m3 g), k x = F
m3, kc, F = 20, 20, 30
show("cart_pendulum", pendulum_th=math.atan(2 * F / (m3 * g)), slider_x=F / kc)

# spherical_pendulum_spring: |p| = l, V = m g z + k/2 (|p - w| - L0)^2
m, l, k, L0, w = 1.5, 0.6, 40, 0.3, np.array([0.5, 0.4, -0.3])
V = lambda p: m * g * p[2] + k / 2 * (cnorm([p[0] - w[0], p[1] - w[1], p[2] - w[2]]) - L0) ** 2
q = lagrange(V, lambda p: [p[0] ** 2 + p[1] ** 2 + p[2] ** 2 - l * l], [0.3, 0.2, -0.5], [0.0])
show("spherical_pendulum_spring", bob_x=q[0], bob_y=q[1], bob_z=q[2])
