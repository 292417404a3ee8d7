#!/usr/bin/env python3
"""mblin optimize end to end (issue 71; docs/optimize.md).

band_brute_force  the two-mass chain of tests/study/two_mass.yaml (m1 = 2, m2 = 0.5, c1 = 0.4,
                  c2 = 0.1) whose first frequency (2.634 Hz) must leave the band 2.5..2.9 Hz with the
                  least relative change of k1 and k2: the optimum of each side of the band by a
                  brute-force scan in NumPy (k2 on a grid, k1 on the band's edge by bisection, then
                  the best grid cell refined), checked on a 2-D grid of the feasible designs; the
                  command from three starts and with each gradient algorithm ends on one of the two
                  sides' optima, the start at the model's values on the global one (the lower edge)
hinf              the tuned mass damper (tests/opt/tmd.yaml, mu = 0.05) with the least peak of the
                  compliance |x1 / F| over 0.1..0.25 Hz (H-infinity) from four starts: the tuning and
                  damping against Nishihara and Asami's exact closed form (J. Vib. Acoust. 124 (2002)
                  576: f = 2 / (1 + mu) sqrt(2 (16 + 23 mu + 9 mu^2 + 2 (2 + mu) sqrt(4 + 3 mu)) /
                  (3 (64 + 80 mu + 27 mu^2))), zeta = sqrt((8 + 9 mu - 4 sqrt(4 + 3 mu)) / (1 + mu)) / 4;
                  their tuning as recalled here agrees with a Nelder-Mead minimax in NumPy to 1e-8),
                  the peak against NumPy's at that design; Den Hartog's fixed-point design beside it
                  (its peak higher, the fixed points' height sqrt(1 + 2 / mu) lower)
tmd_output        the progress lines (one per evaluation: value, objective, violation, bounds) and
                  the final design with its modes; max:min-damping of the tuned mass damper
max_real          min:max-real, the tuned mass damper's least spectral abscissa from two starts: the
                  design against a Nelder-Mead minimum in NumPy/SciPy of max Re eig(A) (A the state
                  matrix from M, C, K) and the closed form k2 = mu / (1 + mu)^2, c2 = 4 a mu / (1 + mu),
                  max Re = -a, a = sqrt(mu / (1 + mu)) / 2 (tests/opt/test_optimize.c derives it); the
                  printed value against NumPy's at the printed design (to 1e-6: 1e-10 of the printed digits move
                  the pair, 1e-4 apart, by 5e-8); max-real<=-0.05 with the least
                  change: NumPy's spectral abscissa there -0.05; max:max-real refused (one line)
peak_output       the absorber's least peak of the mobility |v1 / F| (v1 = der(x1), an output of the
                  file's outputs:) over 0.1..0.25 Hz from two starts: the reported peak against
                  NumPy's |i w H11(i w)| at the reported design (to 1e-8), no lower peak at designs
                  1e-3 away, and the design against a Nelder-Mead minimax of NumPy's peak (to 1e-6)
history_svg       --svg: the objective's history, the evaluations that violate a constraint marked
sweep_around      --sweep-around DIR: each varied parameter swept over p (1 -+ 0.1), the optimum in the
                  middle (its first frequency the band's edge), the CSV and the plots written
interrupt         Ctrl-C (SIGINT) once the first evaluation is printed, on the flexible pendulum at
                  n_p = 30 (about a second an evaluation): exit 130, the one line "interrupted
                  (SIGINT)", no optimum reported, the --svg file not left behind
errors            usage errors (exit 2), an infeasible problem (exit 1, one line) and --kkt-tol refusing
                  the band problem's optimum (residual 1e-12) at 1e-14

usage: optimize_cli_test.py MBLIN (from the repository root; needs numpy and scipy)"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

import numpy as np
from scipy.optimize import brentq, minimize, minimize_scalar

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, finish  # noqa: E402

MBLIN = sys.argv[1]
TWO_MASS = "tests/study/two_mass.yaml"
M1, M2, C1, C2, K1, K2 = 2.0, 0.5, 0.4, 0.1, 800.0, 300.0
LO, HI = 2.5, 2.9


def f1(k1, k2):
    """the lowest undamped natural frequency |lambda| / 2 pi (Hz) of the damped chain"""
    M = np.diag([M1, M2])
    K = np.array([[k1 + k2, -k2], [-k2, k2]])
    C = np.array([[C1 + C2, -C2], [-C2, C2]])
    A = np.block([[np.zeros((2, 2)), np.eye(2)], [-np.linalg.solve(M, K), -np.linalg.solve(M, C)]])
    return np.abs(np.linalg.eigvals(A)).min() / (2 * np.pi)


def change(k1, k2):
    return ((k1 - K1) / K1) ** 2 + ((k2 - K2) / K2) ** 2


def edge_k1(k2, f):
    """k1 where the first frequency is f (it rises with k1), or None outside 400..1600"""
    g = lambda k1: f1(k1, k2) - f  # noqa: E731
    return brentq(g, 400, 1600, xtol=1e-13) if g(400) < 0 < g(1600) else None


def side_optimum(f):
    """the least change with the first frequency at f: k2 scanned, then refined"""
    k2s = np.linspace(150, 600, 451)
    vals = [(change(edge_k1(k2, f), k2), k2) for k2 in k2s if edge_k1(k2, f) is not None]
    best = min(vals)[1]
    r = minimize_scalar(lambda k2: change(edge_k1(k2, f), k2), bounds=(best - 1, best + 1), method="bounded",
                        options={"xatol": 1e-10})
    return r.fun, edge_k1(r.x, f), r.x


def run(args):
    return subprocess.run([MBLIN, "optimize"] + args, capture_output=True, text=True, timeout=120)


def parse(out):
    vals = dict((m.group(1), float(m.group(2))) for m in re.finditer(r"^  (k1|k2|c2)\s+= (\S+)", out, re.M))
    obj = re.search(r"objective: .* = (\S+)", out)
    return vals, float(obj.group(1)) if obj else None


def band_brute_force():
    opt_lo, opt_hi = side_optimum(LO), side_optimum(HI)
    # the sides' optima are the problem's: no feasible design of a 2-D grid changes less
    g1, g2 = np.linspace(400, 1600, 121), np.linspace(150, 600, 91)
    feas = [change(a, b) for a in g1 for b in g2 if not (LO < f1(a, b) < HI)]
    check(min(feas) >= min(opt_lo[0], opt_hi[0]) - 1e-12, "a feasible grid design changes less than the sides' optima")
    check(opt_lo[0] < opt_hi[0], "the lower edge is the global optimum (%.6g vs %.6g)" % (opt_lo[0], opt_hi[0]))
    starts = ["k1:400:1600,k2:150:600", "k1:400:1600:1000,k2:150:600", "k1:400:1600:500,k2:150:600:200"]
    for alg in ("slsqp", "ccsaq"):
        for i, vary in enumerate(starts):
            p = run([TWO_MASS, "--vary", vary, "--objective", "min:change", "--constraint", "freq:1!=2.5:2.9", "--quiet",
                     "--algorithm", alg])
            check(p.returncode == 0, "%s %s: exit %d: %s" % (alg, vary, p.returncode, p.stderr.strip()))
            if p.returncode:
                continue
            v, obj = parse(p.stdout)
            ref = min((opt_lo, opt_hi), key=lambda o: abs(o[1] - v["k1"]))
            check(abs(obj - ref[0]) <= 1e-6 * ref[0], "%s %s: change %.12g vs brute force %.12g" % (alg, vary, obj, ref[0]))
            # the change is quadratic at the optimum, so the design is fixed only to about the square root of
            # its tolerance: 2e-5 of k2 apart between OpenBLAS kernels (SkylakeX) where the change agrees to 1e-6
            check(abs(v["k1"] - ref[1]) <= 1e-4 * ref[1] and abs(v["k2"] - ref[2]) <= 1e-4 * ref[2],
                  "%s %s: k1, k2 = %.10g, %.10g vs %.10g, %.10g" % (alg, vary, v["k1"], v["k2"], ref[1], ref[2]))
            fr = f1(v["k1"], v["k2"])
            check(not (LO + 1e-7 < fr < HI - 1e-7), "%s %s: the final frequency %.10g is in the band" % (alg, vary, fr))
            if i == 0:
                check(ref is opt_lo, "%s: the start at the model's values ends on the lower edge" % alg)


def compliance(w, mu, k2, c2):
    s = 1j * w
    z11, z12, z22 = s * s + 1 + c2 * s + k2, -(c2 * s + k2), mu * s * s + c2 * s + k2
    return np.abs(z22 / (z11 * z22 - z12 * z12))


def peaks(mu, k2, c2):
    """the local maxima of the compliance over 0.1..0.25 Hz, each refined"""
    w = np.linspace(2 * np.pi * 0.1, 2 * np.pi * 0.25, 2001)
    m = compliance(w, mu, k2, c2)
    out = []
    for i in range(1, len(w) - 1):
        if m[i] >= m[i - 1] and m[i] > m[i + 1]:
            r = minimize_scalar(lambda x: -compliance(x, mu, k2, c2), bounds=(w[i - 1], w[i + 1]), method="bounded",
                                options={"xatol": 1e-14})
            out.append(-r.fun)
    return out


def hinf():
    mu = 0.05
    f_na = 2 / (1 + mu) * np.sqrt(2 * (16 + 23 * mu + 9 * mu ** 2 + 2 * (2 + mu) * np.sqrt(4 + 3 * mu)) /
                                  (3 * (64 + 80 * mu + 27 * mu ** 2)))
    z_na = 0.25 * np.sqrt((8 + 9 * mu - 4 * np.sqrt(4 + 3 * mu)) / (1 + mu))
    kc = lambda f, z: (mu * f * f, 2 * mu * z * f)  # noqa: E731
    p_na = max(peaks(mu, *kc(f_na, z_na)))
    # the closed form is the minimax: Nelder-Mead from Den Hartog's design ends there
    f_dh, z_dh = 1 / (1 + mu), np.sqrt(3 * mu / (8 * (1 + mu)))
    r = minimize(lambda x: max(peaks(mu, *kc(*x))), [f_dh, z_dh], method="Nelder-Mead",
                 options={"xatol": 1e-11, "fatol": 1e-14, "maxiter": 3000})
    check(abs(r.x[0] - f_na) < 1e-7 and abs(r.x[1] - z_na) < 1e-6 and r.fun >= p_na - 1e-12,
          "Nishihara-Asami's design %r vs the minimax %r (peaks %r, %r)" % ((f_na, z_na), r.x, p_na, r.fun))
    p_dh = max(peaks(mu, *kc(f_dh, z_dh)))
    check(np.sqrt(1 + 2 / mu) < p_na < p_dh, "Den Hartog: fixed points %.10g < H-infinity %.10g < his design's %.10g"
          % (np.sqrt(1 + 2 / mu), p_na, p_dh))
    # (from k2 = 0.03, c2 = 0.01 SLSQP stops after 4 evaluations under OpenBLAS's SkylakeX kernels, and the
    # design is refused as not a local optimum (its first-order residual 0.84), as it should be; under
    # Prescott, Haswell and Sandybridge it reaches the optimum: a start that every kernel reaches instead.
    # Likewise from k2 = 0.03, c2 = 0.04 the sanitized build stops after 8 evaluations (residual 0.79) on an
    # AMD EPYC under the Cooperlake, SkylakeX and Prescott kernels, where the plain build reaches the
    # optimum: from c2 = 0.035 both builds reach it under all five kernels there)
    for vary in ("k2:0.02:0.08,c2:0.001:0.05", "k2:0.02:0.08:0.035,c2:0.001:0.05:0.02", "k2:0.02:0.08:0.03,c2:0.001:0.05:0.035",
                 "k2:0.02:0.08:0.05,c2:0.001:0.05:0.04"):
        p = run(["tests/opt/tmd.yaml", "--vary", vary, "--objective", "min:peak:F:x1:0.1:0.25", "--quiet"])
        check(p.returncode == 0, "hinf %s: exit %d: %s" % (vary, p.returncode, p.stderr.strip()))
        if p.returncode:
            continue
        v, obj = parse(p.stdout)
        f, z = np.sqrt(v["k2"] / mu), v["c2"] / (2 * mu * np.sqrt(v["k2"] / mu))
        check(abs(f - f_na) < 1e-7 * f_na and abs(z - z_na) < 1e-6 * z_na,
              "hinf %s: f, zeta = %.12g, %.12g vs Nishihara-Asami %.12g, %.12g" % (vary, f, z, f_na, z_na))
        check(abs(obj - p_na) < 1e-9 * p_na, "hinf %s: peak %.12g vs %.12g" % (vary, obj, p_na))
        check(obj < p_dh and abs(f - f_dh) < 1e-4 and abs(z - z_dh) < 1e-3,
              "hinf %s: beside Den Hartog's design (%.6g, %.6g), peak %.10g" % (vary, f_dh, z_dh, p_dh))


def tmd_output():
    with open("tests/opt/tmd.yaml") as fh:
        assert "tuned mass damper" in fh.read()
    p = run(["tests/opt/tmd.yaml", "--vary", "k2:0.02:0.08,c2:0.001:0.05", "--objective", "max:min-damping"])
    check(p.returncode == 0, "tmd: exit %d: %s" % (p.returncode, p.stderr.strip()))
    lines = [l for l in p.stdout.splitlines() if re.match(r"^\s+\d+\s+\S+\s+\S+\s+\S+\s+\S+\s+k2=\S+ c2=\S+", l)]
    check(len(lines) >= 5, "tmd: %d progress lines" % len(lines))
    check("Modes of the final design" in p.stdout and "double eigenvalue" in p.stdout, "tmd: the final design's report")
    v, obj = parse(p.stdout)
    check(abs(obj - 0.05 ** 0.5 / 2) < 1e-5 * 0.05 ** 0.5 / 2, "tmd: the least damping %r vs sqrt(mu)/2" % obj)


def tmd_abscissa(k2, c2, mu=0.05):
    """the largest real part of the eigenvalues of the absorber's state matrix (m1 = k1 = 1)"""
    M, K = np.diag([1.0, mu]), np.array([[1 + k2, -k2], [-k2, k2]])
    C = np.array([[c2, -c2], [-c2, c2]])
    A = np.block([[np.zeros((2, 2)), np.eye(2)], [-np.linalg.solve(M, K), -np.linalg.solve(M, C)]])
    return np.linalg.eigvals(A).real.max()


def max_real():
    mu = 0.05
    a = np.sqrt(mu / (1 + mu)) / 2
    nm = minimize(lambda x: tmd_abscissa(*x), [0.03, 0.03], method="Nelder-Mead",
                  options=dict(xatol=1e-13, fatol=1e-15, maxiter=20000, maxfev=40000))
    check(abs(nm.x[0] - mu / (1 + mu) ** 2) < 1e-9 and abs(nm.x[1] - 4 * a * mu / (1 + mu)) < 1e-9 and
          abs(nm.fun + a) < 1e-9, "max-real: Nelder-Mead %r, %r vs the closed form" % (nm.x, nm.fun))
    for vary in ("k2:0.02:0.08,c2:0.001:0.05", "k2:0.02:0.08:0.07,c2:0.001:0.05:0.002"):
        p = run(["tests/opt/tmd.yaml", "--vary", vary, "--objective", "min:max-real", "--quiet"])
        check(p.returncode == 0 and "double eigenvalue" in p.stdout, "max-real %s: exit %d %s" % (vary, p.returncode, p.stderr))
        if p.returncode:
            continue
        v, obj = parse(p.stdout)
        check(abs(v["k2"] - nm.x[0]) < 1e-7 * nm.x[0] and abs(v["c2"] - nm.x[1]) < 1e-6 * nm.x[1] and
              abs(obj - nm.fun) < 1e-7 * a, "max-real %s: %r, %.12g vs Nelder-Mead %r, %.12g" % (vary, v, obj, nm.x, nm.fun))
        # the pair 1e-4 apart is sensitive: the printed digits (1e-10) move it by about 5e-8
        check(abs(obj - tmd_abscissa(v["k2"], v["c2"])) < 1e-6 * a, "max-real %s: the value %.12g vs NumPy's %.12g" %
              (vary, obj, tmd_abscissa(v["k2"], v["c2"])))
    p = run(["tests/opt/tmd.yaml", "--vary", "k2:0.02:0.08,c2:0.001:0.05", "--objective", "min:change", "--constraint",
             "max-real<=-0.05", "--quiet"])
    check(p.returncode == 0, "max-real<=-0.05: exit %d %s" % (p.returncode, p.stderr))
    if not p.returncode:
        v, _ = parse(p.stdout)
        sa = tmd_abscissa(v["k2"], v["c2"])
        check(abs(sa + 0.05) < 1e-8 and re.search(r"largest real part \[1/s\] -0\.0(49999|5000)", p.stdout),
              "max-real<=-0.05: NumPy's spectral abscissa %.12g at %r" % (sa, v))
    p = run(["tests/opt/tmd.yaml", "--vary", "k2:0.02:0.08", "--objective", "max:max-real"])
    check(p.returncode == 2 and "can only be minimized" in p.stderr and len(p.stderr.strip().splitlines()) == 1,
          "max:max-real: exit %d %r" % (p.returncode, p.stderr))


def mobility_peak(k2, c2, mu=0.05, band=(0.1, 0.25)):
    """the largest |v1 / F| = |i w H11(i w)| of the absorber over the band (Hz): a grid, the best
    points refined"""
    def mag(w):
        s = 1j * w
        z11, z12, z22 = s * s + c2 * s + 1 + k2, -(c2 * s + k2), mu * s * s + c2 * s + k2
        return np.abs(s * z22 / (z11 * z22 - z12 * z12))
    w = np.linspace(2 * np.pi * band[0], 2 * np.pi * band[1], 4001)
    m = mag(w)
    best = m.max()
    for i in np.argsort(m)[-6:]:
        lo, hi = w[max(i - 1, 0)], w[min(i + 1, len(w) - 1)]
        r = minimize_scalar(lambda x: -mag(x), bounds=(lo, hi), method="bounded", options=dict(xatol=1e-13))
        best = max(best, -r.fun)
    return best


def peak_output():
    with open("tests/opt/tmd.yaml") as fh:
        text = fh.read()
    with tempfile.TemporaryDirectory() as d:
        model = os.path.join(d, "tmd_v.yaml")
        with open(model, "w") as fh:
            fh.write(text + "outputs: {v1: der(x1)}\n")
        nm = minimize(lambda x: mobility_peak(*x), [0.045, 0.015], method="Nelder-Mead",
                      options=dict(xatol=1e-10, fatol=1e-12, maxiter=4000))
        for vary in ("k2:0.02:0.08,c2:0.001:0.05", "k2:0.02:0.08:0.05,c2:0.001:0.05:0.02"):
            p = run([model, "--vary", vary, "--objective", "min:peak:F:v1:0.1:0.25", "--quiet"])
            check(p.returncode == 0, "peak to v1 %s: exit %d %s" % (vary, p.returncode, p.stderr))
            if p.returncode:
                continue
            v, obj = parse(p.stdout)
            k2, c2 = v["k2"], v["c2"]
            ref = mobility_peak(k2, c2)
            check(abs(obj - ref) < 1e-8 * ref, "peak to v1 %s: %.12g vs NumPy's %.12g" % (vary, obj, ref))
            near = min(mobility_peak(k2 * (1 + a), c2 * (1 + b)) for a in (-1e-3, 0, 1e-3) for b in (-1e-3, 0, 1e-3)
                       if a or b)
            check(near > ref, "peak to v1 %s: a design 1e-3 away peaks lower (%.12g < %.12g)" % (vary, near, ref))
            check(abs(k2 - nm.x[0]) < 1e-6 * nm.x[0] and abs(c2 - nm.x[1]) < 1e-6 * nm.x[1],
                  "peak to v1 %s: %r vs Nelder-Mead %r" % (vary, (k2, c2), nm.x))


def history_svg():
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "h.svg")
        p = run([TWO_MASS, "--vary", "k1:400:1600,k2:150:600", "--objective", "min:change", "--constraint",
                 "freq:1!=2.5:2.9", "--svg", path])
        check(p.returncode == 0 and os.path.exists(path), "svg: exit %d %s" % (p.returncode, p.stderr))
        if p.returncode:
            return
        svg = open(path).read()
        rows = [l.split() for l in p.stdout.splitlines() if re.match(r"^\s+\d+\s+\S+\s+\S+\s+\S+\s+\S+\s+k1=", l)]
        bad = sum(1 for r in rows if float(r[3]) > 1e-6)
        check(svg.startswith("<svg") and "relative change of the design" in svg and svg.count("<circle") == bad and bad > 0,
              "svg: %d markers for %d infeasible evaluations" % (svg.count("<circle"), bad))


def sweep_around():
    """--sweep-around DIR: each varied parameter over p (1 -+ 0.1), the other at the optimum: the
    middle point is the optimum, where the first frequency is the band's edge"""
    with tempfile.TemporaryDirectory() as d:
        p = run([TWO_MASS, "--vary", "k1:400:1600,k2:150:600", "--objective", "min:change", "--constraint",
                 "freq:1!=2.5:2.9", "--quiet", "--sweep-around", d])
        check(p.returncode == 0, "sweep-around: exit %d %s" % (p.returncode, p.stderr))
        if p.returncode:
            return
        v, _ = parse(p.stdout)
        for name in ("k1", "k2"):
            files = [os.path.join(d, "%s_%s.%s" % (s, name, e)) for s, e in (("sweep", "csv"), ("damping", "svg"),
                                                                             ("campbell", "svg"))]
            check(all(os.path.exists(f) for f in files), "sweep-around: %s's files" % name)
            rows = [l.split(",") for l in open(files[0]).read().splitlines()[1:]]
            xs = sorted({float(r[0]) for r in rows})
            check(len(xs) == 21 and abs(xs[0] - 0.9 * v[name]) < 1e-9 * v[name] and abs(xs[-1] - 1.1 * v[name]) < 1e-9 * v[name],
                  "sweep-around: %s over %r" % (name, (xs[0], xs[-1])))
            mid = [float(r[4]) for r in rows if float(r[0]) == xs[10] and r[1] == "1"]
            check(len(mid) == 1 and abs(mid[0] - 2.5) < 1e-8 and abs(xs[10] - v[name]) < 1e-9 * v[name],
                  "sweep-around: %s's middle point %r, its first frequency %r" % (name, xs[10], mid))


def errors():
    for args, why in ((["--vary", "k1:2:1", "--objective", "min:change"], "LO must be below HI"),
                      (["--vary", "k1", "--objective", "min:change"], "NAME:LO:HI"),
                      (["--vary", "k1:400:1600", "--objective", "max:freq"], "unknown quantity"),
                      (["--vary", "k1:400:1600", "--objective", "min:change", "--constraint", "freq:1>2"], "Q>=A"),
                      (["--vary", "k1:400:1600", "--objective", "min:change", "--algorithm", "bfgs"], "slsqp"),
                      (["--vary", "kx:1:2", "--objective", "min:change"], "no parameter 'kx'"),
                      (["--vary", "k1:400:1600", "--objective", "freq:7=3"], "mode 7")):
        p = run([TWO_MASS] + args)
        check(p.returncode == 2 and why in p.stderr and len(p.stderr.strip().splitlines()) == 1,
              "%s: exit %d, %r" % (args, p.returncode, p.stderr))
    p = run([TWO_MASS, "--vary", "k1:400:1600", "--objective", "min:change", "--constraint", "freq:1>=5", "--quiet"])
    check(p.returncode == 1 and "infeasible" in p.stderr and len(p.stderr.strip().splitlines()) == 1 and
          "Optimum" not in p.stdout, "infeasible: exit %d, %r" % (p.returncode, p.stderr))
    # --kkt-tol is the optimality tolerance (it set feas_tol before): the band problem's residual
    # (about 1e-12) is above 1e-14
    p = run([TWO_MASS, "--vary", "k1:400:1600,k2:150:600", "--objective", "min:change", "--constraint", "freq:1!=2.5:2.9",
             "--quiet", "--kkt-tol", "1e-14"])
    check(p.returncode == 1 and "not a local optimum" in p.stderr and "kkt_tol 1e-14" in p.stderr,
          "--kkt-tol 1e-14: exit %d, %r" % (p.returncode, p.stderr))


def interrupt():
    tmp = tempfile.mkdtemp(prefix="mblin_opt_int_")
    model, svg = os.path.join(tmp, "flex30.yaml"), os.path.join(tmp, "history.svg")
    subprocess.run([sys.executable, "examples/flexible_pendulum.py", "--np", "30", "-o", model], check=True)
    p = subprocess.Popen([MBLIN, "optimize", model, "--vary", "E:5e7:2e8", "--objective", "freq:1=0.2",
                          "--max-eval", "50", "--svg", svg], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    sent, out = False, []
    for line in p.stdout:
        out.append(line)
        if not sent and line.split()[:1] == ["1"]:  # the first evaluation's progress line
            p.send_signal(signal.SIGINT)
            sent = True
    err = p.stderr.read()
    rc = p.wait(timeout=300)
    check(sent and rc == 130 and len(err.strip().splitlines()) == 1 and "interrupted (SIGINT)" in err,
          "interrupt: exit %d, %r" % (rc, err))
    check(not any(ln.startswith("Optimum") for ln in out) and not os.path.exists(svg),
          "interrupt: no optimum reported, no --svg file left")
    shutil.rmtree(tmp)


band_brute_force()
hinf()
tmd_output()
max_real()
peak_output()
history_svg()
sweep_around()
interrupt()
errors()
sys.exit(finish("optimize_cli"))
