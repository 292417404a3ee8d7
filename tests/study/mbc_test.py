#!/usr/bin/env python3
"""mblin floquet --mbc (issue 36, item 3) on Coleman's ground resonance (tests/study/floquet/coleman3.yaml:
a hub on springs in the fixed frame, 3 lagging blades, each a point mass m at r from its hinge at
offset e, lag spring kz, damper cz), against the equations derived by hand (Coleman and Feingold,
NACA TR 1351, 1958; Johnson, Helicopter Theory, ch. 12) and written here:

  blades:  m r^2 z_b'' + cz z_b' + (m r e Omega^2 + kz_b) z_b + m r (-x'' sin psi_b + y'' cos psi_b) = 0
  hub:     (M + N m) x'' + cx x' + kx x - m r d2/dt2 sum_b z_b sin psi_b = 0
           (M + N m) y'' + cy y' + ky y + m r d2/dt2 sum_b z_b cos psi_b = 0

with psi_b = Omega t + 2 pi (b - 1) / N. In multi-blade coordinates (z_b = z0 + zc cos psi_b + zs sin psi_b),
w^2 = e Omega^2 / r + kz / (m r^2), d = cz / (m r^2), they are time-invariant (the closed form):

  (M + N m) x'' + cx x' + kx x - (N/2) m r zs'' = 0,   (M + N m) y'' + cy y' + ky y + (N/2) m r zc'' = 0
  zc'' + 2 Omega zs' + d (zc' + Omega zs) + (w^2 - Omega^2) zc + y'' / r = 0
  zs'' - 2 Omega zc' + d (zs' - Omega zc) + (w^2 - Omega^2) zs - x'' / r = 0,   z0'' + d z0' + w^2 z0 = 0

Checks:
- isotropic rotor on an anisotropic, damped support: A_NR constant (variation at rounding), its
  eigenvalues equal the closed form's and the Floquet exponents (modulo i Omega);
- the onset of ground resonance (undamped, isotropic support): in complex coordinates u = x + i y,
  z = zs - i zc and s = i lam, [K - (M + N m) lam^2] [w^2 - (lam - Omega)^2] - (N/2) m lam^4 = 0, stable
  while its four roots lam are real; the lower and upper edges of the unstable band of Omega from
  that quartic against those from the Floquet multipliers (bisection on the spectral radius);
- one blade stiffer (kz1 != kz: the linear model stays periodic in multi-blade coordinates, and the
  variation says so): the largest Floquet growth rate against a brute-force simulation of the
  periodic equations above (SciPy solve_ivp over 60 periods from two starts; the growth of the area
  they span gives the sum of the two largest exponents' real parts, a complex pair here);
- bad input: --mbc naming an unknown coordinate, groups of different sizes, fewer than 3 blades.

usage: mbc_test.py PATH_TO_MBLIN (from the repository root; needs numpy and scipy)"""
import json
import math
import os
import subprocess
import sys

import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import brentq

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, finish  # noqa: E402

MBLIN = sys.argv[1]
MODEL = "tests/study/floquet/coleman3.yaml"
BASE = dict(M=10.0, m=1.0, r=1.0, e=0.1, kx=40.0, ky=40.0, cx=0.0, cy=0.0, kz=0.5, kz1=0.5, cz=0.0, Omega=3.0)
N = 3


def run(p, *args, ok=True):
    sets = sum((["--set", "%s=%.17g" % (k, v)] for k, v in p.items()), [])
    r = subprocess.run([MBLIN, "floquet", MODEL, "--param", "Omega"] + sets + list(args), capture_output=True, text=True)
    if ok and r.returncode != 0:
        raise SystemExit("floquet failed (%d): %s" % (r.returncode, r.stderr))
    return r


def fq(p, *args):
    return json.loads(run(p, "--json", *args).stdout)


def same_set(a, b):
    return max(max(min(abs(x - y) for y in b) for x in a), max(min(abs(x - y) for y in a) for x in b))


def closed_form(p, N=3):
    """the eigenvalues of the time-invariant multi-blade equations above (N = 4: the differential
    lag z_d, decoupled like z_0: z_d'' + d z_d' + w^2 z_d = 0)"""
    M, m, r, e, W = p["M"], p["m"], p["r"], p["e"], p["Omega"]
    w2 = e * W**2 / r + p["kz"] / (m * r**2)
    d = p["cz"] / (m * r**2)
    Mt = M + N * m
    # q = [x, y, z0, zc, zs]: Mm q'' + Cm q' + Km q = 0
    Mm = np.array([[Mt, 0, 0, 0, -N / 2 * m * r], [0, Mt, 0, N / 2 * m * r, 0], [0, 0, 1, 0, 0],
                   [0, 1 / r, 0, 1, 0], [-1 / r, 0, 0, 0, 1]])
    Cm = np.array([[p["cx"], 0, 0, 0, 0], [0, p["cy"], 0, 0, 0], [0, 0, d, 0, 0], [0, 0, 0, d, 2 * W], [0, 0, 0, -2 * W, d]])
    Km = np.array([[p["kx"], 0, 0, 0, 0], [0, p["ky"], 0, 0, 0], [0, 0, w2, 0, 0], [0, 0, 0, w2 - W**2, d * W],
                   [0, 0, 0, -d * W, w2 - W**2]])
    Mi = np.linalg.inv(Mm)
    A = np.block([[np.zeros((5, 5)), np.eye(5)], [-Mi @ Km, -Mi @ Cm]])
    ev = list(np.linalg.eigvals(A))
    if N == 4:
        ev += list(np.roots([1, d, w2]))
    return np.array(ev)


# ---- isotropic rotor, anisotropic damped support: time-invariant in MBC ---------------------------
for extra in (dict(ky=60.0, cx=1.0, cy=1.0, cz=0.1), dict(ky=25.0, cx=0.5, cy=2.0, cz=0.3, Omega=4.5),
              dict(cz=0.05, Omega=2.0)):
    p = dict(BASE, **extra)
    d = fq(p, "--mbc", "z1,z2,z3")
    mb = d["mbc"]
    ev = [x["re"] + 1j * x["im"] for x in mb["eigenvalues"]]
    ref = closed_form(p)
    scale = max(abs(ref))
    check(mb["variation"] < 1e-12, "%s: A_NR varies by %.2e over the azimuths (isotropic rotor)" % (extra, mb["variation"]))
    check(same_set(ev, ref) < 1e-10 * scale, "%s: MBC eigenvalues %s, closed form %s" % (extra, ev, ref))
    W = p["Omega"]
    ex = [x["exponent_re"] + 1j * x["exponent_im"] for x in d["multipliers"]]
    fold = [complex(z.real, z.imag - W * math.floor((z.imag + W / 2) / W)) for z in ref]
    check(same_set(ex, fold) < 1e-7 * scale, "%s: Floquet exponents %s, closed form modulo i Omega %s" % (extra, ex, fold))
    check(mb["states"][2:5] == ["z1_0", "z1_c1", "z1_s1"] and mb["states"][7] == "der(z1_0)", "MBC state names: %s" % mb["states"])

# ---- 4 blades: the differential coordinate (-1)^b ------------------------------------------------
MODEL4 = "tests/study/floquet/coleman4.yaml"
for extra in (dict(ky=60.0, cx=1.0, cy=1.0, cz=0.1), dict(ky=30.0, cx=0.5, cz=0.2, Omega=4.0)):
    p = dict(BASE, **extra)
    sets = sum((["--set", "%s=%.17g" % (k, v)] for k, v in p.items()), [])
    r = subprocess.run([MBLIN, "floquet", MODEL4, "--param", "Omega", "--mbc", "z1,z2,z3,z4", "--json"] + sets,
                       capture_output=True, text=True)
    check(r.returncode == 0, "4 blades: %s" % r.stderr)
    d = json.loads(r.stdout)
    mb, ref = d["mbc"], closed_form(p, 4)
    ev = [x["re"] + 1j * x["im"] for x in mb["eigenvalues"]]
    check(mb["variation"] < 1e-12 and same_set(ev, ref) < 1e-10 * max(abs(ref)),
          "4 blades %s: variation %.2e, MBC eigenvalues %s, closed form %s" % (extra, mb["variation"], ev, ref))
    check("z1_d" in mb["states"] and "der(z1_d)" in mb["states"], "4 blades: the differential state z1_d")
    W = p["Omega"]
    ex = [x["exponent_re"] + 1j * x["exponent_im"] for x in d["multipliers"]]
    fold = [complex(z.real, z.imag - W * math.floor((z.imag + W / 2) / W)) for z in ref]
    check(same_set(ex, fold) < 1e-7 * max(abs(ref)), "4 blades %s: Floquet exponents = closed form modulo i Omega" % extra)


# ---- ground resonance onset: the quartic against the Floquet multipliers ------------------------
def quartic_unstable(W, p):
    M, m, r, e, K = p["M"], p["m"], p["r"], p["e"], p["kx"]
    w2 = e * W**2 / r + p["kz"] / (m * r**2)
    Mt = M + N * m
    # [K - Mt lam^2] [w2 - (lam - W)^2] - (N/2) m lam^4, expanded in lam
    a = np.polymul([-Mt, 0, K], [-1, 2 * W, w2 - W**2])
    poly = np.polysub(a, [N / 2 * m, 0, 0, 0, 0])
    roots = np.roots(poly)
    return max(abs(roots.imag)) > 1e-7 * max(abs(roots))


def floquet_unstable(W, p):
    return fq(dict(p, Omega=W))["stability"] == "unstable"


def edge(f, lo, hi, p, iters):
    """the Omega in [lo, hi] where f changes (f(lo) != f(hi)), by bisection"""
    flo = f(lo, p)
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        if f(mid, p) == flo:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


p = dict(BASE)
grid = np.linspace(1.5, 5.0, 141)
flags = [quartic_unstable(W, p) for W in grid]
band = [i for i, u in enumerate(flags) if u]
check(len(band) > 2 and band == list(range(band[0], band[-1] + 1)), "one band of ground resonance in Omega 1.5 .. 5")
lo_q = edge(quartic_unstable, grid[band[0] - 1], grid[band[0]], p, 50)
hi_q = edge(quartic_unstable, grid[band[-1]], grid[band[-1] + 1], p, 50)
lo_f = edge(floquet_unstable, grid[band[0] - 1], grid[band[0]], p, 30)
hi_f = edge(floquet_unstable, grid[band[-1]], grid[band[-1] + 1], p, 30)
check(abs(lo_f - lo_q) < 1e-6 * lo_q and abs(hi_f - hi_q) < 1e-6 * hi_q,
      "ground resonance band: Floquet %.9g .. %.9g, closed form %.9g .. %.9g" % (lo_f, hi_f, lo_q, hi_q))
# inside the band, the growth rate is the closed form's (undamped: the quartic's imaginary root)
Wm = 0.5 * (lo_q + hi_q)
d = fq(dict(p, Omega=Wm))
ref = closed_form(dict(p, Omega=Wm))
check(abs(d["multipliers"][0]["exponent_re"] - max(ref.real)) < 1e-8, "growth rate at Omega %.4g: %.12g, closed form %.12g"
      % (Wm, d["multipliers"][0]["exponent_re"], max(ref.real)))


# ---- one blade stiffer: Floquet against a brute-force simulation ---------------------------------
def periodic_rhs(p, kzb):
    M, m, r, e, W = p["M"], p["m"], p["r"], p["e"], p["Omega"]
    Mt = M + N * m

    def f(t, s):
        q, v = s[:5], s[5:]
        psi = [W * t + 2 * math.pi * b / N for b in range(N)]
        sn, cs = [math.sin(a) for a in psi], [math.cos(a) for a in psi]
        Mm = np.zeros((5, 5))
        rhs = np.zeros(5)
        Mm[0, 0] = Mm[1, 1] = Mt
        rhs[0] = -p["cx"] * v[0] - p["kx"] * q[0]
        rhs[1] = -p["cy"] * v[1] - p["ky"] * q[1]
        for b in range(N):
            z, zd = q[2 + b], v[2 + b]
            # hub: -m r (z'' sin + 2 W z' cos - W^2 z sin), + m r (z'' cos - 2 W z' sin - W^2 z cos)
            Mm[0, 2 + b] = -m * r * sn[b]
            rhs[0] += m * r * (2 * W * zd * cs[b] - W**2 * z * sn[b])
            Mm[1, 2 + b] = m * r * cs[b]
            rhs[1] -= m * r * (-2 * W * zd * sn[b] - W**2 * z * cs[b])
            Mm[2 + b, 2 + b] = m * r**2
            Mm[2 + b, 0], Mm[2 + b, 1] = -m * r * sn[b], m * r * cs[b]
            rhs[2 + b] = -p["cz"] * zd - (m * r * e * W**2 + kzb[b]) * z
        return np.concatenate([v, np.linalg.solve(Mm, rhs)])
    return f


p = dict(BASE, kz1=2.0, cz=0.05, cx=0.3, cy=0.3, Omega=2.9)
d = fq(p, "--mbc", "z1,z2,z3")
check(d["mbc"]["variation"] > 1e-3, "one blade stiffer: A_NR is periodic (variation %.3g)" % d["mbc"]["variation"])
T = d["period"]
mu = d["multipliers"]
check(mu[0]["im"] != 0 and abs(mu[0]["abs"] - mu[1]["abs"]) < 1e-12 * mu[0]["abs"] and mu[0]["abs"] > mu[2]["abs"] * 1.05,
      "the largest multipliers are one complex pair, separated from the rest: %s" % [m["abs"] for m in mu[:3]])
sigma = mu[0]["exponent_re"]
f = periodic_rhs(p, [p["kz1"], p["kz"], p["kz"]])
rng = np.random.default_rng(1)
K = 60
S = solve_ivp(f, [0, K * T], rng.standard_normal(10),
              method="DOP853", rtol=1e-11, atol=1e-14, dense_output=True)
S2 = solve_ivp(f, [0, K * T], rng.standard_normal(10), method="DOP853", rtol=1e-11, atol=1e-14, dense_output=True)


def area(k):
    X = np.stack([S.sol(k * T), S2.sol(k * T)], axis=1)
    return math.sqrt(abs(np.linalg.det(X.T @ X)))


rate = math.log(area(K) / area(K - 10)) / (10 * T) / 2  # the pair's common real part
check(sigma > 0, "one blade stiffer at Omega %.3g: unstable (sigma %.6g)" % (p["Omega"], sigma))
check(abs(rate - sigma) < 1e-4 * abs(sigma), "growth rate: Floquet %.9g, simulation %.9g" % (sigma, rate))
if os.environ.get("FLOQUET_VERBOSE"):
    print("band", lo_f, hi_f, lo_q, hi_q, "sigma", sigma, rate)

# ---- bad input ------------------------------------------------------------------------------------
r = run(BASE, "--mbc", "z1,z2,w3", ok=False)
check(r.returncode == 2 and "'w3'" in r.stderr, "--mbc with an unknown coordinate: %s" % r.stderr.strip())
r = run(BASE, "--mbc", "z1,z2,z3;x,y", ok=False)
check(r.returncode == 2 and "one coordinate per blade" in r.stderr, "--mbc groups of different sizes: %s" % r.stderr.strip())
r = run(BASE, "--mbc", "z1,z2", ok=False)
check(r.returncode == 2 and "at least 3 blades" in r.stderr, "--mbc with 2 blades: %s" % r.stderr.strip())
r = run(BASE, "--mbc", "z1,z2,z3", "--shoot", ok=False)
check(r.returncode == 2, "--mbc with --shoot: %s" % r.stderr.strip())

sys.exit(finish("mbc_test"))
