#!/usr/bin/env python3
"""mblin floquet (issue 36, items 1 and 2) against independent references:

- Mathieu's equation x'' + (delta + 2 eps cos 2t) x = 0 (tests/study/floquet/mathieu.yaml): the
  monodromy matrix and multipliers against SciPy's solve_ivp (DOP853, rtol 1e-13) of the same
  equation written here, inside and outside the first tongue; the transition curves of the first
  two tongues, found by root-finding on trace(Phi(pi)) = -2 / +2, against the published series
  (Abramowitz & Stegun 20.2.25: a1, b1 = 1 +- q - q^2/8 -+ q^3/64 - q^4/1536 -+ 11 q^5/36864;
  a2 = 4 + 5 q^2/12 - 763 q^4/13824, b2 = 4 - q^2/12 + 5 q^4/13824);
- the pendulum on a vertically oscillating pivot (tests/study/floquet/kapitza.yaml): unstable below
  and stable above Kapitza's threshold a^2 w^2 = 2 g l, and the threshold found by bisection against
  that closed form (0.2 %) and against the Mathieu series a0 = -q^2/2 + 7 q^4/128 it comes from;
  the same pendulum in Cartesian coordinates with the pivot driven by a time-dependent constraint
  (kapitza_driven.yaml) has the same multipliers;
- a time-invariant model (slider-pendulum with damping, a damped four-bar with a constraint, the
  rotating pendulum's steady motion, whose orbit turns the cyclic angle): the Floquet exponents
  equal `linearize`'s eigenvalues (modulo 2 pi i / T);
- a forced Duffing oscillator (tests/study/floquet/duffing.yaml): the orbit found by --shoot and its
  multipliers against SciPy (fsolve on solve_ivp's period map, the variational equations written
  here), and det(Phi) = exp(-c T / m) (Liouville); a forced pendulum shot in its angle and in
  Cartesian coordinates with a rod constraint, both against SciPy's orbit and multipliers;
- bad input: no period, both --period and --param, a parameter that is not a spin speed, a point
  that is no orbit, shooting on a non-holonomic model.

usage: floquet_test.py PATH_TO_MBLIN (from the repository root; needs numpy and scipy)"""
import json
import math
import os
import subprocess
import sys

import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import brentq, fsolve

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, finish  # noqa: E402

MBLIN = sys.argv[1]
D = "tests/study/floquet/"
MATHIEU, KAPITZA, DUFFING = D + "mathieu.yaml", D + "kapitza.yaml", D + "duffing.yaml"


def run(*args, ok=True):
    p = subprocess.run([MBLIN, "floquet"] + list(args), capture_output=True, text=True)
    if ok and p.returncode != 0:
        raise SystemExit("floquet %s failed (%d): %s" % (" ".join(args), p.returncode, p.stderr))
    return p


def fq(*args):
    return json.loads(run(*args, "--json").stdout)


def mono(d):
    return np.array(d["monodromy"])


def mults(d):
    return np.array([m["re"] + 1j * m["im"] for m in d["multipliers"]])


def same_set(a, b):
    """max over a of the distance to the nearest of b (and back)"""
    return max(max(min(abs(x - y) for y in b) for x in a), max(min(abs(x - y) for y in a) for x in b))


# ---- Mathieu: monodromy against SciPy ---------------------------------------------------------
def mathieu_ref(delta, eps):
    def f(t, y):
        k = delta + 2 * eps * math.cos(2 * t)
        return [y[1], -k * y[0], y[3], -k * y[2]]
    s = solve_ivp(f, [0, math.pi], [1, 0, 0, 1], method="DOP853", rtol=1e-13, atol=1e-14)
    return s.y[:, -1].reshape(2, 2).T  # columns: the solutions from (1, 0) and (0, 1)


for delta, eps in ((1.2, 0.3), (2.5, 0.3), (0.6, 0.1), (4.05, 0.5), (-0.2, 0.4)):
    d = fq(MATHIEU, "--period", "pi", "--set", "delta=%g" % delta, "--set", "eps=%g" % eps)
    M, R = mono(d), mathieu_ref(delta, eps)
    err = np.max(np.abs(M - R)) / max(1, np.max(np.abs(R)))
    check(err < 1e-8, "Mathieu delta=%g eps=%g: monodromy off SciPy's by %.2e" % (delta, eps, err))
    mu, mu_ref = mults(d), np.linalg.eigvals(R)
    check(same_set(mu, mu_ref) < 1e-8 * max(1, max(abs(mu_ref))),
          "Mathieu delta=%g eps=%g: multipliers %s, SciPy %s" % (delta, eps, mu, mu_ref))
    rho = max(abs(mu_ref))
    want = "unstable" if rho > 1 + 1e-6 else "marginal"
    check(d["stability"] == want, "Mathieu delta=%g eps=%g: %s, expected %s (|mu| %.9g)" % (delta, eps, d["stability"], want, rho))
    # Liouville: det Phi = 1 (no damping); exponents of a real pair sum to 0
    check(abs(np.linalg.det(M) - 1) < 1e-8, "Mathieu delta=%g eps=%g: det(Phi) = %.12g" % (delta, eps, np.linalg.det(M)))


# ---- the periodic mode shapes p_k(t) = exp(-s_k t) Phi(t) v_k at 4 samples, against SciPy's Phi(t) ----
def mathieu_phi(delta, eps, t):
    def f(tt, y):
        k = delta + 2 * eps * math.cos(2 * tt)
        return [y[1], -k * y[0], y[3], -k * y[2]]
    return solve_ivp(f, [0, t], [1, 0, 0, 1], method="DOP853", rtol=1e-13, atol=1e-14).y[:, -1].reshape(2, 2).T


for delta, eps in ((1.2, 0.3), (2.5, 0.3)):
    d = fq(MATHIEU, "--period", "pi", "--set", "delta=%g" % delta, "--set", "eps=%g" % eps, "--samples", "4")
    worst = 0
    for k, mk in enumerate(d["multipliers"]):
        s_k = mk["exponent_re"] + 1j * mk["exponent_im"]
        v = np.array(d["shapes"][0]["modes"][k]["re"]) + 1j * np.array(d["shapes"][0]["modes"][k]["im"])
        for j in (1, 2, 3):
            t = d["shapes"][j]["t"]
            want = np.exp(-s_k * t) * (mathieu_phi(delta, eps, t) @ v)
            got = np.array(d["shapes"][j]["modes"][k]["re"]) + 1j * np.array(d["shapes"][j]["modes"][k]["im"])
            worst = max(worst, np.max(np.abs(got - want)))
    check(worst < 1e-8, "Mathieu delta=%g: periodic shapes at t = T/4, T/2, 3T/4 off SciPy's by %.2e" % (delta, worst))


# ---- Mathieu: transition curves against A&S 20.2.25 --------------------------------------------
def trace(delta, eps):
    M = mono(fq(MATHIEU, "--period", "pi", "--set", "delta=%.17g" % delta, "--set", "eps=%g" % eps))
    return M[0, 0] + M[1, 1]


for q in (0.1, 0.3):
    a1 = 1 + q - q**2 / 8 - q**3 / 64 - q**4 / 1536 + 11 * q**5 / 36864
    b1 = 1 - q - q**2 / 8 + q**3 / 64 - q**4 / 1536 - 11 * q**5 / 36864
    a2 = 4 + 5 * q**2 / 12 - 763 * q**4 / 13824
    b2 = 4 - q**2 / 12 + 5 * q**4 / 13824
    # the series' first omitted terms, O(q^6), bound the comparison
    tol = 5 * q**6 + 1e-8
    # first tongue: multipliers -1 (trace -2) at its edges, each bracketed between the tongue's middle
    # (trace < -2) and 0.05 outside the series' value
    m1, m2 = (a1 + b1) / 2, (a2 + b2) / 2
    found1 = [brentq(lambda x: trace(x, q) + 2, b1 - 0.05, m1, xtol=1e-12),
              brentq(lambda x: trace(x, q) + 2, m1, a1 + 0.05, xtol=1e-12)]
    check(abs(found1[0] - b1) < tol and abs(found1[1] - a1) < tol,
          "first tongue at eps=%g: %s, A&S %s (tol %.1e)" % (q, found1, [b1, a1], tol))
    found2 = [brentq(lambda x: trace(x, q) - 2, b2 - 0.05, m2, xtol=1e-12),
              brentq(lambda x: trace(x, q) - 2, m2, a2 + 0.05, xtol=1e-12)]
    check(abs(found2[0] - b2) < tol and abs(found2[1] - a2) < tol,
          "second tongue at eps=%g: %s, A&S %s (tol %.1e)" % (q, found2, [b2, a2], tol))

# ---- Kapitza: the inverted pendulum stabilized by the pivot's oscillation ---------------------
g, l, a = 9.81, 1.0, 0.05
w_kapitza = math.sqrt(2 * g * l) / a  # a^2 w^2 = 2 g l
for w, want in ((0.9 * w_kapitza, "unstable"), (1.1 * w_kapitza, "marginal"), (0.5 * w_kapitza, "unstable"),
                (2 * w_kapitza, "marginal")):
    d = fq(KAPITZA, "--param", "w", "--set", "w=%.17g" % w)
    check(d["stability"] == want, "Kapitza at w = %.4g (threshold %.4g): %s, expected %s (|mu| %.9g)"
          % (w, w_kapitza, d["stability"], want, d["spectral_radius"]))
    check(abs(d["period"] - 2 * math.pi / w) < 1e-12 * d["period"], "--param w: the period is 2 pi / w")
lo, hi = 0.9 * w_kapitza, 1.1 * w_kapitza
for _ in range(24):  # the bracket 0.2 w 2^-24 = 1.2e-8 w, below the checks' 1e-5 (40 steps cost 16 runs more)
    mid = 0.5 * (lo + hi)
    if fq(KAPITZA, "--param", "w", "--set", "w=%.17g" % mid)["stability"] == "unstable":
        lo = mid
    else:
        hi = mid
w_found = 0.5 * (lo + hi)
check(abs(w_found / w_kapitza - 1) < 2e-3, "Kapitza threshold %.6g, closed form %.6g" % (w_found, w_kapitza))
# the same in Mathieu's form (tau = w t / 2): delta = -4 g / (l w^2), q = 2 a / l, edge a0(q)
qk = 2 * a / l
w_series = math.sqrt(-4 * g / l / (-qk**2 / 2 + 7 * qk**4 / 128 - 29 * qk**6 / 2304))
check(abs(w_found / w_series - 1) < 1e-5, "Kapitza threshold %.9g, Mathieu series a0 %.9g" % (w_found, w_series))

# ---- mblin boundary --floquet: the same edges found by the library's bracketing and bisection ----
def fboundary(*args, ok=True):
    p = subprocess.run([MBLIN, "boundary"] + list(args) + ["--json"], capture_output=True, text=True)
    if not ok:
        return p
    if p.returncode != 0:
        check(False, "boundary %s failed: %s" % (" ".join(args), p.stderr.strip()))
        return None
    return json.loads(p.stdout)


q = 0.3
a1 = 1 + q - q**2 / 8 - q**3 / 64 - q**4 / 1536 + 11 * q**5 / 36864
b1 = 1 - q - q**2 / 8 + q**3 / 64 - q**4 / 1536 - 11 * q**5 / 36864
for near, want, series in ((1.2, found1[1], a1), (0.8, found1[0], b1)):
    d = fboundary(MATHIEU, "--param", "delta", "--near", "%g" % near, "--floquet", "pi")
    if d:
        check(abs(d["value"] - want) < 1e-8 and abs(d["value"] - series) < 5 * q**6,
              "boundary --floquet from delta = %g: %.12g, trace(Phi) = -2 at %.12g, A&S %.12g"
              % (near, d["value"], want, series))
        check(d["floquet"]["crossing"] == "minus_one" and abs(d["floquet"]["multiplier"]["re"] + 1) < 1e-4,
              "first tongue: the multiplier leaves through -1 (%s)" % d["floquet"])
d = fboundary(KAPITZA, "--param", "w", "--near", "80", "--floquet", "w")
if d:
    check(abs(d["value"] / w_series - 1) < 1e-5 and abs(d["value"] / w_found - 1) < 1e-8,
          "boundary --floquet w (2 pi / w per point): Kapitza threshold %.9g, bisection %.9g, series %.9g"
          % (d["value"], w_found, w_series))
    check(d["floquet"]["crossing"] == "plus_one", "Kapitza: through +1, a solution of period T (%s)" % d["floquet"])
# damped: the radius crosses 1 with a slope, refined on log(radius) = 0 itself (the verdict's 1e-6
# margin would move it by 6e-7); SciPy's monodromy and brentq on its spectral radius give the reference
def damped_radius(eps, c=0.1):
    def f(t, y):
        k = 1 + 2 * eps * math.cos(2 * t)
        return [y[1], -c * y[1] - k * y[0], y[3], -c * y[3] - k * y[2]]
    s = solve_ivp(f, [0, math.pi], [1, 0, 0, 1], method="DOP853", rtol=1e-13, atol=1e-14)
    return max(abs(np.linalg.eigvals(s.y[:, -1].reshape(2, 2).T))) - 1


eps_ref = brentq(damped_radius, 0.05, 0.2, xtol=1e-13)
for rng in ([], ["--range", "0:1"]):
    d = fboundary(D + "damped_mathieu.yaml", "--param", "eps", "--near", "0.05", "--floquet", "pi", *rng)
    if d:
        check(abs(d["value"] - eps_ref) < 1e-8, "damped Mathieu threshold %.12g, SciPy %.12g (first order: c = 0.1)"
              % (d["value"], eps_ref))
p = fboundary(MATHIEU, "--param", "delta", "--near", "2.5", "--range", "2.2:2.8", "--floquet", "pi", ok=False)
check(p.returncode == 1 and p.stderr.count("\n") == 1 and "stay on or inside the unit circle" in p.stderr,
      "no boundary in a stable range: one line (%r)" % p.stderr)
p = fboundary(MATHIEU, "--param", "delta", "--near", "1.2", "--floquet", "pi", "--order", "1", ok=False)
check(p.returncode == 2, "boundary --floquet with --order: a usage error (%r)" % p.stderr)

# the same pendulum in Cartesian coordinates with its pivot driven by a time-dependent constraint:
# the multipliers do not depend on the coordinates
for w in (70.0, 85.0, 95.0):
    a_ = mults(fq(KAPITZA, "--param", "w", "--set", "w=%g" % w))
    b_ = mults(fq(D + "kapitza_driven.yaml", "--param", "w", "--set", "w=%g" % w))
    check(same_set(a_, b_) < 1e-8, "Kapitza at w = %g: driven-pivot Cartesian model %s, angle model %s" % (w, b_, a_))

# ---- a time-invariant model: the exponents are linearize's eigenvalues -------------------------
invariant = [("examples/slider_pendulum.yaml", ["--set", "c=20"], 0.5), ("examples/fourbar_N1_damped.yaml", [], 0.7),
             ("examples/slider_pendulum.yaml", ["--set", "c=20"], 3.0),
             # a steady motion: the orbit's cyclic angle phi turns at der(phi) = 4.76 rad/s
             ("examples/rotating_pendulum_steady.yaml", [], 0.3)]
# 64 states; a coordinate (x1) has no force at all in its equation at the equilibrium, where at:
# given's note fires on rounding alone: not refused. Not in the sanitized build (tests/README.md,
# "Keeping make test short"): 45 % of this test's time in the release build, about 50 s there
if os.environ.get("MBLIN_SANITIZED") != "1":
    invariant.append(("examples/flexible_pendulum_np5.yaml", [], 0.1))
for model, sets, T in invariant:
    lin = json.loads(subprocess.run([MBLIN, "linearize", model, "--json"] + sets, capture_output=True, text=True, check=True).stdout)
    ev = [e["re"] + 1j * e["im"] for e in lin["eigenvalues"]]
    d = fq(model, "--period", repr(T), *sets)
    ex = [m["exponent_re"] + 1j * m["exponent_im"] for m in d["multipliers"]]
    # modulo 2 pi i / T: fold linearize's imaginary parts into (-pi/T, pi/T]
    w0 = 2 * math.pi / T
    fold = [complex(e.real, e.imag - w0 * math.floor((e.imag + w0 / 2) / w0)) for e in ev]
    err = same_set(ex, fold)
    check(len(ex) == len(ev) and err < 1e-7 * max(abs(e) for e in ev),
          "%s T=%g: exponents %s, linearize %s (folded %s)" % (model, T, ex, ev, fold))

# ---- shooting: a forced Duffing oscillator ------------------------------------------------------
m_, c_, k_, b_, F_, w_ = 1, 0.4, 1, 0.5, 0.8, 1.3
T = 2 * math.pi / w_


def duff(t, y):
    return [y[1], (F_ * math.cos(w_ * t) - c_ * y[1] - k_ * y[0] - b_ * y[0]**3) / m_]


def pmap(x0):
    return solve_ivp(duff, [0, T], x0, method="DOP853", rtol=1e-12, atol=1e-13).y[:, -1]


x = [1.0, 0.0]
for _ in range(60):
    x = pmap(x)
x = fsolve(lambda z: pmap(z) - z, x, xtol=1e-13)


def var(t, Y):
    A = np.array([[0, 1], [(-k_ - 3 * b_ * Y[0]**2) / m_, -c_ / m_]])
    return np.concatenate([duff(t, Y[:2]), (A @ Y[2:].reshape(2, 2)).ravel()])


Mref = solve_ivp(var, [0, T], np.concatenate([x, np.eye(2).ravel()]), method="DOP853", rtol=1e-12, atol=1e-13).y[2:, -1].reshape(2, 2)
d = fq(DUFFING, "--param", "w", "--shoot", "--set", "c=%g" % c_)
check(d["orbit"]["kind"] == "shot" and d["orbit"]["iterations"] >= 1, "Duffing: the orbit is shot")
xo = np.array([d["orbit"]["q"]["x"], d["orbit"]["v"]["x"]])
check(np.max(np.abs(xo - x)) < 1e-8, "Duffing orbit %s, SciPy %s" % (xo, x))
check(np.max(np.abs(mono(d) - Mref)) < 1e-8, "Duffing monodromy %s, SciPy %s" % (mono(d), Mref))
check(abs(np.linalg.det(mono(d)) - math.exp(-c_ * T / m_)) < 1e-9, "Duffing: det(Phi) = exp(-c T / m)")
check(same_set(mults(d), np.linalg.eigvals(Mref)) < 1e-8, "Duffing multipliers against SciPy")
# the shapes are periodic: p_k(t0 + T) = p_k(t0), and sampled: sample 0 is the eigenvector
d = fq(DUFFING, "--param", "w", "--shoot", "--set", "c=%g" % c_, "--samples", "4")
check(len(d["shapes"]) == 4 and abs(d["shapes"][2]["t"] - T / 2) < 1e-12, "Duffing: 4 samples of the shapes")
for k, mk in enumerate(d["multipliers"]):
    v0 = np.array(d["shapes"][0]["modes"][k]["re"]) + 1j * np.array(d["shapes"][0]["modes"][k]["im"])
    mu = mk["re"] + 1j * mk["im"]
    check(np.max(np.abs(mono(d) @ v0 - mu * v0)) < 1e-9, "Duffing: shape %d at t0 is the eigenvector of mu" % k)

# ---- item 4: Floquet sweeps and the stability chart ----------------------------------------------
import csv  # noqa: E402
import shutil  # noqa: E402
import tempfile  # noqa: E402


def sweep(*args):
    out = tempfile.mkdtemp(prefix="floquet_sweep_")
    p = subprocess.run([MBLIN, "sweep"] + list(args) + ["-o", out], capture_output=True, text=True)
    if p.returncode != 0:
        shutil.rmtree(out)
        raise SystemExit("sweep %s failed (%d): %s" % (" ".join(args), p.returncode, p.stderr))
    rows = list(csv.DictReader(open(os.path.join(out, "sweep.csv"))))
    svg = open(os.path.join(out, "stability.svg")).read()
    shutil.rmtree(out)
    return rows, svg


def growth(rows, key):
    """the largest exponent's real part at each swept value (one axis)"""
    g = {}
    for r in rows:
        k = tuple(float(r[x]) for x in key)
        g[k] = max(g.get(k, -math.inf), float(r["re"]))
    return g


q = 0.3
a1 = 1 + q - q**2 / 8 - q**3 / 64 - q**4 / 1536 + 11 * q**5 / 36864
b1 = 1 - q - q**2 / 8 + q**3 / 64 - q**4 / 1536 - 11 * q**5 / 36864
rows, svg = sweep(MATHIEU, "--param", "delta=0.2:1.8:33", "--set", "eps=0.3", "--floquet", "pi")
g = growth(rows, ["delta"])
wrong = [d for (d,), v in g.items() if abs(d - a1) > 1e-3 and abs(d - b1) > 1e-3 and (v > 1e-8) != (b1 < d < a1)]
check(not wrong and len(g) == 33, "Floquet sweep of Mathieu (eps 0.3): unstable exactly inside %.6g .. %.6g (wrong at %s)" % (b1, a1, wrong))
one = fq(MATHIEU, "--period", "pi", "--set", "delta=1.2", "--set", "eps=0.3")
check(abs(g[(1.2,)] - one["multipliers"][0]["exponent_re"]) < 1e-12, "the sweep's point = floquet's exponent")
check("<rect" in svg and "largest Re s" in svg, "one-axis stability chart drawn")
# two axes: the chart's cells against the tongues of A&S (points clear of the edges by 0.02)
rows, svg = sweep(MATHIEU, "--param", "delta=0.3:1.7:15", "--param", "eps=0.05:0.45:5", "--floquet", "pi")
g = growth(rows, ["delta", "eps"])
wrong = []
for (d, e), v in g.items():
    A1 = 1 + e - e**2 / 8 - e**3 / 64
    B1 = 1 - e - e**2 / 8 + e**3 / 64
    if min(abs(d - A1), abs(d - B1)) > 0.02 and (v > 1e-8) != (B1 < d < A1):
        wrong.append((d, e))
check(len(g) == 75 and not wrong, "two-axis Floquet sweep: the first tongue of A&S (wrong at %s)" % wrong)
check(svg.count("fill=\"rgb(230,") == sum(v > 1e-8 for v in g.values()), "the chart has one red cell per unstable point")
# a spin speed gives the period at each point: Kapitza's threshold between two grid points
rows, svg = sweep(KAPITZA, "--param", "w=80:100:5", "--floquet", "w")
g = growth(rows, ["w"])
check([v > 1e-8 for (w,), v in sorted(g.items())] == [True, True, False, False, False],
      "Kapitza sweep over w with the period 2 pi / w: unstable below %.5g only (%s)" % (w_found, sorted(g.items())))
# the same bytes on 1 and 2 threads
outs = [subprocess.run([MBLIN, "sweep", MATHIEU, "--param", "delta=0:2:9", "--param", "eps=0:1:3", "--floquet", "pi", "--threads", t],
                       capture_output=True, text=True).stdout for t in ("1", "2")]
check(outs[0] == outs[1] and outs[0].count("\n") == 1 + 27 * 2, "a Floquet sweep gives the same CSV on 1 and 2 threads")
p = subprocess.run([MBLIN, "sweep", MATHIEU, "--param", "delta=0:1:3", "--floquet", "eps"], capture_output=True, text=True)
check(p.returncode != 0 and "spin speed" in p.stderr, "--floquet of a parameter that is no spin speed: %s" % p.stderr.strip())
p = subprocess.run([MBLIN, "sweep", MATHIEU, "--param", "delta=0:1:3", "--floquet", "pi", "--predictor", "sensitivity"],
                   capture_output=True, text=True)
check(p.returncode == 2 and "linear" in p.stderr, "a Floquet sweep refuses the sensitivity predictor: %s" % p.stderr.strip())

# ---- shooting on a constrained model: the forced pendulum in its angle and in Cartesian coordinates ----
mp, lp, gp, cp, Fp, wp = 1.0, 1.0, 9.81, 0.5, 1.0, 2.5
Tp = 2 * math.pi / wp


def pend(t, y):
    return [y[1], (Fp * math.cos(wp * t) * lp * math.cos(y[0]) - cp * y[1] - mp * gp * lp * math.sin(y[0])) / (mp * lp**2)]


def pend_var(t, Y):
    th = Y[0]
    A = np.array([[0, 1], [(-Fp * math.cos(wp * t) * lp * math.sin(th) - mp * gp * lp * math.cos(th)) / (mp * lp**2), -cp / (mp * lp**2)]])
    return np.concatenate([pend(t, Y[:2]), (A @ Y[2:].reshape(2, 2)).ravel()])


def pmap2(x0):
    return solve_ivp(pend, [0, Tp], x0, method="DOP853", rtol=1e-12, atol=1e-13).y[:, -1]


xp = [0.0, 0.0]
for _ in range(40):
    xp = pmap2(xp)
xp = fsolve(lambda z: pmap2(z) - z, xp, xtol=1e-13)
Mp = solve_ivp(pend_var, [0, Tp], np.concatenate([xp, np.eye(2).ravel()]), method="DOP853", rtol=1e-12,
               atol=1e-13).y[2:, -1].reshape(2, 2)
da = fq(D + "forced_pendulum.yaml", "--param", "w", "--shoot")
dc = fq(D + "forced_pendulum_xy.yaml", "--param", "w", "--shoot")
tha, wa = da["orbit"]["q"]["th"], da["orbit"]["v"]["th"]
check(abs(tha - xp[0]) < 1e-8 and abs(wa - xp[1]) < 1e-8, "forced pendulum orbit (%.12g, %.12g), SciPy %s" % (tha, wa, xp))
check(np.max(np.abs(mono(da) - Mp)) < 1e-8, "forced pendulum monodromy against SciPy")
qx, qy, vx, vy = dc["orbit"]["q"]["x"], dc["orbit"]["q"]["y"], dc["orbit"]["v"]["x"], dc["orbit"]["v"]["y"]
check(dc["orbit"]["kind"] == "shot" and abs(qx - lp * math.sin(xp[0])) < 1e-8 and abs(qy + lp * math.cos(xp[0])) < 1e-8
      and abs(vx - lp * math.cos(xp[0]) * xp[1]) < 1e-8 and abs(vy - lp * math.sin(xp[0]) * xp[1]) < 1e-8,
      "Cartesian forced pendulum (a rod constraint) shot to the angle model's orbit: %s" % dc["orbit"])
check(same_set(mults(dc), np.linalg.eigvals(Mp)) < 1e-8, "Cartesian forced pendulum: the multipliers %s, SciPy %s"
      % (mults(dc), np.linalg.eigvals(Mp)))

# ---- bad input -----------------------------------------------------------------------------------
p = run(MATHIEU, ok=False)
check(p.returncode == 2 and "--period" in p.stderr, "no period: usage error (%d %s)" % (p.returncode, p.stderr))
p = run(KAPITZA, "--period", "1", "--param", "w", ok=False)
check(p.returncode == 2, "both --period and --param: usage error")
p = run(MATHIEU, "--param", "eps", ok=False)
check(p.returncode == 2 and "spin_speeds" in p.stderr, "--param of no spin speed: %s" % p.stderr)
p = run(MATHIEU, "--period", "-1", ok=False)
check(p.returncode == 2, "negative period: usage error")
p = run(DUFFING, "--param", "w", ok=False)
check(p.returncode == 1 and "no periodic orbit" in p.stderr and "--shoot" in p.stderr and "t = " in p.stderr,
      "a forced point is no orbit: %s" % p.stderr.strip())
p = run("examples/nh_sleigh.yaml", "--period", "1", "--shoot", ok=False)
check(p.returncode == 2 and "non-holonomic" in p.stderr, "shooting on a non-holonomic model: %s" % p.stderr.strip())
p = run(MATHIEU, "--period", "pi", "--settle", "3", ok=False)
check(p.returncode == 2 and "--shoot" in p.stderr, "--settle without --shoot: %s" % p.stderr.strip())
p = run(MATHIEU, "--period", "pi", "--samples", "4", "--max-steps", "50", ok=False)
check(p.returncode == 1 and "more than 50 steps" in p.stderr, "--max-steps bounds the whole period: %s" % p.stderr.strip())
p = run(MATHIEU, "--period", "pi", "--method", "penalty", ok=False)
check(p.returncode == 2, "--method does not apply")

if os.environ.get("FLOQUET_VERBOSE"):
    print("tongues", found1, [b1, a1], found2, [b2, a2], "kapitza", w_found, w_kapitza, w_series)
sys.exit(finish("floquet_test"))
