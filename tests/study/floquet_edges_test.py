#!/usr/bin/env python3
"""mblin floquet at its edges (issue 65, items 3, 4, 12, 15 and 20), against closed forms and SciPy:

- the period check: Mathieu's equation x'' + (delta + 2 eps cos 2t) x = 0 (period pi) with
  --period 1, pi/2 or 1e-7 (too short: also checked over k T), the drifting stiffness delta + t
  (tests/study/floquet/drift.yaml: no period at all), a forced Duffing oscillator shot with a wrong
  period (its forcing is in the accelerations, not in A), and `sweep --floquet 1` are refused; the
  entries the message names equal the closed form -(delta + 2 eps cos 2t) (-(delta + t); the
  forcing F cos(w t) / m) at the times it names. --period 2*pi is a period too: its multipliers are
  the squares of SciPy's for pi. --period 3.14159 is refused at the default tolerance and accepted
  with --period-tol 1e-5, its multipliers then SciPy's for T = 3.14159;
- the work estimate: Mathieu with --period 1e6*pi and the tutorial's spinning blade with --period 1
  (300 s and more before) are refused at once, the largest |eigenvalue| named for Mathieu
  sqrt(delta + 2 eps); and it never refuses a run that fits: Mathieu over 100 periods and an
  overdamped mass (c = 1000: its steps bounded by stability), at rtol 0.5, 1e-4 and 1e-10, each run
  again with --max-steps equal to the steps it took;
- the integrator's failures in the tool's words: --period 1e-300 and 1e-170 ("below"), tolerances
  below double precision; no CVODE return-flag name (CV_...) or CVODE message;
- options: every numeric option's error names it (--max-steps 1e300, --samples 0, ...); freqresp's
  help does not list --floquet, which freqresp rejects;
- MBC's text (Coleman's rotor, tests/study/floquet/coleman3.yaml): an isotropic rotor's variation
  (zero in exact arithmetic: A_NR is time-invariant) is called time-invariant, one blade four times
  stiffer (A_NR periodic) an approximation, not isotropic.

usage: floquet_edges_test.py PATH_TO_MBLIN (from the repository root; needs numpy and scipy)"""
import json
import math
import os
import re
import subprocess
import sys
import time

import numpy as np
from scipy.integrate import solve_ivp

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, finish  # noqa: E402

MBLIN = sys.argv[1]
D = "tests/study/floquet/"
MATHIEU, DRIFT, DUFFING, DAMPED = D + "mathieu.yaml", D + "drift.yaml", D + "duffing.yaml", D + "overdamped.yaml"
DELTA, EPS = 1.2, 0.3  # mathieu.yaml's


def run(cmd, *args, timeout=None):
    try:
        return subprocess.run([MBLIN, cmd] + list(args), capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(args, -1, "", "timed out after %g s" % timeout)


def one_line(p):
    return p.stderr.count("\n") == 1 and p.stdout == ""


MISMATCH = re.compile(r"not periodic with period T = (\S+): (.*) is (\S+) at t = (\S+) and (\S+) at t \+ (?:(\d+) )?T, "
                      r"a difference of (\S+) of the largest entry")


def mismatch(p):
    """(what, value at t, t, value at t + k T, k, relative difference) from the refusal"""
    m = MISMATCH.search(p.stderr)
    if not m:
        return None
    return m.group(2), float(m.group(3)), float(m.group(4)), float(m.group(5)), int(m.group(6) or 1), float(m.group(7))


def mathieu_entry(t):
    return -(DELTA + 2 * EPS * math.cos(2 * t))


def mathieu_phi(T):
    def f(t, y):
        k = DELTA + 2 * EPS * math.cos(2 * t)
        return [y[1], -k * y[0], y[3], -k * y[2]]
    s = solve_ivp(f, [0, T], [1, 0, 0, 1], method="DOP853", rtol=1e-13, atol=1e-14)
    return s.y[:, -1].reshape(2, 2).T


def mults(d):
    return np.array([m["re"] + 1j * m["im"] for m in d["multipliers"]])


def same_set(a, b):
    return max(max(min(abs(x - y) for y in b) for x in a), max(min(abs(x - y) for y in a) for x in b))


# ---- item 3: the period is checked against the model -------------------------------------------
for per, T in (("1", 1.0), ("pi/2", math.pi / 2), ("1e-7", 1e-7)):
    p = run("floquet", MATHIEU, "--period", per)
    mm = mismatch(p)
    check(p.returncode == 2 and one_line(p) and mm and mm[0] == "the entry of A in row der(x), column x",
          "Mathieu --period %s: refused naming A's entry (%d %r)" % (per, p.returncode, p.stderr))
    if mm:
        _, a0, t, a1, k, rel = mm
        check(abs(a0 - mathieu_entry(t)) < 1e-8 and abs(a1 - mathieu_entry(t + k * T)) < 1e-8,
              "Mathieu --period %s: the entries %.10g, %.10g at t = %g, t + %d T; closed form %.10g, %.10g"
              % (per, a0, a1, t, k, mathieu_entry(t), mathieu_entry(t + k * T)))
        # the largest entry of A over any time is delta + 2 eps = 1.8 at most, 1 at least
        check(rel > 1e-6 and abs(a1 - a0) / 1.8 * (1 - 1e-3) <= rel <= abs(a1 - a0) * (1 + 1e-3),
              "Mathieu --period %s: relative difference %g for |%g - %g|" % (per, rel, a1, a0))
    if per == "1e-7":
        check(mm and mm[4] > 1, "a period short beside the model's time scale is checked over k T (%s)" % p.stderr.strip())

p = run("floquet", DRIFT, "--period", "pi")
mm = mismatch(p)
check(p.returncode == 2 and one_line(p) and mm, "stiffness delta + t: refused (%d %r)" % (p.returncode, p.stderr))
if mm:
    check(abs(mm[1] + DELTA + mm[2]) < 1e-8 and abs(mm[3] + DELTA + mm[2] + mm[4] * math.pi) < 1e-8,
          "stiffness delta + t: the entries %s against -(delta + t)" % (mm,))

# Duffing's forcing F cos(w t) is in the accelerations only (A does not depend on t at a state)
p = run("floquet", DUFFING, "--shoot", "--period", "1")
mm = mismatch(p)
check(p.returncode == 2 and one_line(p) and mm and mm[0] == "the acceleration of x at the starting state",
      "Duffing shot with a wrong period: refused naming the acceleration (%d %r)" % (p.returncode, p.stderr))
if mm:  # at one state the accelerations differ by the forcing's: F (cos(w (t + T)) - cos(w t)) / m (F = 0.8, w = 1.3, m = 1)
    want = 0.8 * (math.cos(1.3 * (mm[2] + mm[4])) - math.cos(1.3 * mm[2]))
    check(abs(mm[3] - mm[1] - want) < 1e-8, "Duffing: the accelerations %s differ by %.10g, F (cos(w (t + T)) - cos(w t)) / m"
          % (mm, want))
p = run("floquet", DUFFING, "--shoot", "--param", "w", "--set", "c=0.4", "--json")
check(p.returncode == 0, "Duffing shot with its period 2 pi / w: accepted (%r)" % p.stderr)

p = run("sweep", MATHIEU, "--param", "delta=1:1.2:3", "--floquet", "1")
check(p.returncode != 0 and "not periodic with period T = 1" in p.stderr, "sweep --floquet 1 of Mathieu: refused (%r)" % p.stderr)

# a multiple of the period is a period; a period off by 2.7e-6 is refused unless --period-tol allows it
p = run("floquet", MATHIEU, "--period", "2*pi", "--json")
check(p.returncode == 0, "Mathieu --period 2*pi: accepted (%r)" % p.stderr)
if p.returncode == 0:
    R = mathieu_phi(math.pi)
    ref = np.linalg.eigvals(R @ R)
    check(same_set(mults(json.loads(p.stdout)), ref) < 1e-8, "Mathieu over 2 pi: multipliers %s, SciPy's squared %s"
          % (mults(json.loads(p.stdout)), ref))
p = run("floquet", MATHIEU, "--period", "3.14159")
check(p.returncode == 2 and mismatch(p), "Mathieu --period 3.14159: refused at the default tolerance (%r)" % p.stderr)
p = run("floquet", MATHIEU, "--period", "3.14159", "--period-tol", "1e-5", "--json")
check(p.returncode == 0, "Mathieu --period 3.14159 --period-tol 1e-5: accepted (%r)" % p.stderr)
if p.returncode == 0:
    ref = np.linalg.eigvals(mathieu_phi(3.14159))
    check(same_set(mults(json.loads(p.stdout)), ref) < 1e-8, "Mathieu over 3.14159: multipliers against SciPy's")

# ---- item 12: the work is estimated before integrating ------------------------------------------
for model, per in ((MATHIEU, "1e6*pi"), ("examples/tutorial/spinning_blade.yaml", "1")):
    t0 = time.time()
    p = run("floquet", model, "--period", per, timeout=30)
    dt = time.time() - t0
    check(p.returncode == 1 and one_line(p) and "refused before integrating" in p.stderr and dt < 10,
          "%s --period %s: refused at once (%.1f s; %r)" % (model, per, dt, p.stderr))
    if model == MATHIEU:
        m = re.search(r"largest \|eigenvalue\| (\S+) 1/s", p.stderr)
        check(m and abs(float(m.group(1)) - math.sqrt(DELTA + 2 * EPS)) < 1e-5,
              "Mathieu: the largest |eigenvalue| named, sqrt(delta + 2 eps) = %.6g (%r)" % (math.sqrt(DELTA + 2 * EPS), p.stderr))
# never a refusal of a run that fits: each run again with --max-steps = the steps it took
for model, per, sets in ((MATHIEU, "100*pi", []), (MATHIEU, "100*pi", ["--set", "delta=100", "--set", "eps=0"]),
                         (DAMPED, "1", []), (DAMPED, "0.1", ["--set", "c=1e4"])):
    for rtol in ("0.5", "1e-4", "1e-10"):
        args = [model, "--period", per, "--rtol", rtol] + sets
        p = run("floquet", *args, "--json", "--max-steps", "1000000")
        if not check(p.returncode == 0, "%s: runs (%r)" % (args, p.stderr)):
            continue
        steps = json.loads(p.stdout)["steps"]
        p = run("floquet", *args, "--max-steps", str(steps))
        check(p.returncode == 0, "%s with --max-steps %d, the steps it takes: not refused (%r)" % (args, steps, p.stderr))

# ---- item 15: the integrator's failures in the tool's own words ---------------------------------
for per in ("1e-300", "1e-170"):
    p = run("floquet", MATHIEU, "--period", per)
    check(p.returncode == 2 and one_line(p) and "below" in p.stderr and "CV" not in p.stderr,
          "--period %s: %r" % (per, p.stderr))
p = run("floquet", MATHIEU, "--period", "pi", "--rtol", "1e-20", "--atol", "1e-300")
check(p.returncode == 1 and one_line(p) and "double precision" in p.stderr and "CV_" not in p.stderr
      and "CVode" not in p.stderr, "tolerances below double precision: %r" % p.stderr)

# ---- item 20: option errors name the option; freqresp's help lists what it takes ----------------
for opt, val in (("--max-steps", "1e300"), ("--max-steps", "2.5"), ("--samples", "0"), ("--samples", "20000"),
                 ("--settle", "-1"), ("--rtol", "1"), ("--atol", "0"), ("--stab-tol", "x"), ("--period-tol", "-1")):
    p = run("floquet", MATHIEU, "--period", "pi", opt, val)
    check(p.returncode == 2 and one_line(p) and p.stderr.startswith("mblin: %s expects" % opt),
          "floquet %s %s: %r" % (opt, val, p.stderr))
p = run("freqresp", "--help")
check(p.returncode == 0 and "--w FROM:TO:COUNT" in p.stdout and "--floquet" not in p.stdout,
      "freqresp --help does not list --floquet")
p = run("freqresp", MATHIEU, "--w", "1:2:3", "--floquet", "pi")
check(p.returncode == 2 and "unknown option '--floquet'" in p.stderr, "freqresp rejects --floquet (%r)" % p.stderr)

# ---- item 4: MBC's verdict on the rotor ----------------------------------------------------------
COLEMAN = ["floquet", D + "coleman3.yaml", "--param", "Omega", "--mbc", "z1,z2,z3"] + sum(
    (["--set", s] for s in ("M=10", "m=1", "r=1", "e=0.1", "kx=40", "ky=40", "kz=0.5", "cz=0.05", "cx=0.3", "cy=0.3",
                            "Omega=2.9")), [])
iso = subprocess.run([MBLIN] + COLEMAN + ["--set", "kz1=0.5"], capture_output=True, text=True).stdout
aniso = subprocess.run([MBLIN] + COLEMAN + ["--set", "kz1=2"], capture_output=True, text=True).stdout
check("time-invariant (an isotropic rotor)" in iso and "approximation" not in iso, "isotropic rotor: %r" % iso[-600:])
check("anisotropic" in aniso and "approximation" in aniso and "isotropic rotor" not in aniso,
      "one blade four times stiffer: %r" % aniso[-700:])

sys.exit(finish("floquet_edges_test"))
