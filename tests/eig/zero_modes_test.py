"""Zero modes are decided per eigenvalue (issue 30, item 3): a slow mode of a stiff model is a mode,
a rigid-body mode is zero. Usage: zero_modes_test.py MBLIN (run from the source root)."""
import json
import math
import os
import subprocess
import sys
import tempfile

MBLIN = sys.argv[1]
ROD = "tests/eig/steel_rod_pendulum.yaml"
FAILS = []


def run(*args):
    p = subprocess.run([MBLIN, *args, "--json", "--no-matrices"], capture_output=True, text=True, timeout=600)
    if p.returncode:
        raise SystemExit(f"mblin {' '.join(args)} failed: {p.stderr}")
    return json.loads(p.stdout)


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILS.append(what)


def lowest(d):
    """the lowest physical mode that is not a zero mode, and the count of zero modes"""
    ev = [e for e in d["eigenvalues"] if not e["spurious"]]
    zeros = sum(e["kind"] == "zero" for e in ev)
    modes = sorted((e for e in ev if e["kind"] != "zero"), key=lambda e: math.hypot(e["re"], e["im"]))
    return modes[0], zeros


def swing(L=1.2, g=9.81):
    return math.sqrt(3 * g / (2 * L))  # a uniform rigid rod pivoted at one end


# the flexible steel rod swings as the rigid rod to 1.4e-5 relative (its stretch under its weight)
for args, tol in (((ROD,), 3e-5), ((ROD, "--method", "nullspace"), 3e-5)):
    m, zeros = lowest(run("linearize", *args))
    w = math.hypot(m["re"], m["im"])
    check(zeros == 0 and abs(w - swing()) <= tol * swing(),
          f"{' '.join(args)}: swing {w:.8g} rad/s vs sqrt(3g/2L) = {swing():.8g}, {zeros} zero modes (0)")
    est = m.get("error_estimate")
    check(est is None or (est >= 0 and abs(w - swing()) <= est + tol * swing()),
          f"  its uncertainty {est} is honest")

# issue 65, item 20: the swing's uncertainty is honest and not 5 orders too pessimistic (it said
# +-0.0072): the descriptor's pencil, another route (the full constrained pencil by ARPACK), gives
# the independent value; the estimate must cover the difference and leave 7 digits at least
m, _ = lowest(run("linearize", ROD))
md, _ = lowest(run("linearize", ROD, "--method", "descriptor"))
w, wd, est = math.hypot(m["re"], m["im"]), math.hypot(md["re"], md["im"]), m.get("error_estimate")
check(est is not None and abs(w - wd) <= est and est <= 1e-7 * w,
      f"steel rod swing {w!r} +- {est} against the descriptor's {wd!r} (difference {abs(w - wd):.2g})")

# the text report lists the doubtful swing with its uncertainty, not as a zero (its estimate leaves
# fewer than 6 correct digits of the 8 printed)
m, _ = lowest(run("linearize", ROD))
txt = subprocess.run([MBLIN, "linearize", ROD], capture_output=True, text=True, timeout=600).stdout
row = [ln for ln in txt.splitlines() if ln.strip().startswith("1 ") and "3.50" in ln]
tag = "(+-%.2g: %d correct digits)" % (m.get("error_estimate", 0), m.get("digits", 16))
check(len(row) == 1 and "zero" not in row[0] and ((tag in row[0]) == (m.get("digits", 16) < 6)),
      f"report row of the swing (digits {m.get('digits')}): {row}")

# 30 elements at E = 2.1e14 (stiffer: axial modes near 3e8 rad/s), the rigid rod to 1e-7
with tempfile.TemporaryDirectory() as tmp:
    rod30 = os.path.join(tmp, "rod30.yaml")
    with open(ROD) as f, open(rod30, "w") as g:
        g.write(f.read().replace("elements: 200", "elements: 30"))
    for method in ("augmented", "nullspace"):
        m, zeros = lowest(run("linearize", rod30, "--set", "E=2.1e14", "--method", method))
        w = math.hypot(m["re"], m["im"])
        check(zeros == 0 and abs(w - swing()) <= 1e-7 * swing(),
              f"30 elements, E = 2.1e14, {method}: swing {w:.10g} vs {swing():.10g}, {zeros} zero modes (0)")
    # a free rod (no pin): three rigid-body modes (x, y, rotation), each a double zero
    free = os.path.join(tmp, "free.yaml")
    with open(ROD) as f, open(free, "w") as g:
        txt = f.read().replace("elements: 200", "elements: 30")
        g.write(txt.replace("joints:\n  pin: {type: revolute, i: a, j: o}\n", "")
                   .replace("forces:\n  weight: {type: gravity, g: [0, -g]}\n", "")
                   .replace("at: equilibrium", "at: given"))
    d = run("linearize", free)
    zeros = sum(e["kind"] == "zero" for e in d["eigenvalues"])
    check(zeros == 6, f"free rod: {zeros} zero eigenvalues (6: three rigid-body modes)")


# issue 65, item 5: a stiff front tire (Cf = 1e14, 1e15 N/rad) puts an eigenvalue at -6e9 .. -6e10 and
# the old rule (zero below 1e-9 of the largest) made the car's unstable +0.889 and its speed mode
# -1.923 "zero modes". The references are independent: the 2 x 2 single-track model's characteristic
# polynomial (the example's header: m (v' + u r + xg r') = Ff + Fr, I r' + m xg (v' + u r) = a Ff - b Fr,
# Ff = -Cf (v + a r) / u, Fr = -Cr (v - b r) / u) solved in exact rationals, and the cruise control's
# -kc / (m + 2 Iwa / r^2).
def single_track_roots(Cf):
    from fractions import Fraction as Fr
    mc, mw, a, b, Iwd, Izc, Cr, u = Fr(1500), Fr(20), Fr(12, 10), Fr(15, 10), Fr(1, 2), Fr(2500), Fr(90000), Fr(20)
    m = mc + 2 * mw
    xg = mw * (a - b) / m
    inertia = Izc + mw * (a * a + b * b) + 2 * Iwd
    M = [[m, m * xg], [m * xg, inertia]]
    N = [[-(Cf + Cr) / u, -(Cf * a - Cr * b) / u - m * u], [-(a * Cf - b * Cr) / u, -(a * a * Cf + b * b * Cr) / u - m * xg * u]]
    c2 = M[0][0] * M[1][1] - M[0][1] * M[1][0]
    c1 = -(N[0][0] * M[1][1] + N[1][1] * M[0][0] - N[0][1] * M[1][0] - N[1][0] * M[0][1])
    c0 = N[0][0] * N[1][1] - N[0][1] * N[1][0]
    big = (-float(c1) - math.sqrt(float(c1 * c1 - 4 * c2 * c0))) / (2 * float(c2))
    return float(c0 / c2) / big, big  # the small root from the product of the roots (no cancellation)


CAR = "examples/mech/single_track_car.yaml"
speed = -3000.0 / (1540.0 + 2 * 0.9 / 0.3 ** 2)  # -kc / (m + 2 Iwa / r^2)
for cf in (1e14, 1e15):
    small, fast = single_track_roots(int(cf))
    d = run("linearize", CAR, "--set", "Cf=%g" % cf)
    ev = [e for e in d["eigenvalues"] if not e["spurious"]]
    zeros = sum(e["kind"] == "zero" for e in ev)
    near = [e for e in ev if abs(e["re"] - small) < 0.1 and e["im"] == 0]
    check(zeros == 5, f"single-track car, Cf = {cf:g}: {zeros} zero modes (5: x, y, yaw, two wheel angles)")
    ok = len(near) == 1 and near[0]["kind"] == "real"
    est = near[0].get("error_estimate") if ok else None
    check(ok and est is not None and abs(near[0]["re"] - small) <= est,
          f"  the unstable {small:.9g} (closed form) is a mode: {near[0]['re'] if near else None} "
          f"+- {est} ({near[0]['kind'] if near else 'missing'})")
    # (near the limit of double precision at Cf = 1e14: the eigenvalue's condition number is 248 and
    # ||A||_1 = 1.2e11, so a backward-stable solver may miss it by 248 eps ||A|| = 0.0068 against
    # the 0.0089 asked here; session 50's residual tape as written changed A's last bits and dgeev's
    # balancing then missed it by 0.034 under one kernel: docs/benchmarks.md, "Issue 69 item 4,
    # session 50")
    check(ok and est is not None and est <= 0.01 * small, f"  its estimate {est} leaves two digits at least")
    sp = [e for e in ev if abs(e["re"] - speed) <= 1e-6 * abs(speed) and e["im"] == 0]
    check(len(sp) == 1 and sp[0]["kind"] == "real", f"  the speed mode {speed:.8g}: {[e['kind'] for e in sp]}")
    fe = [e for e in ev if e["re"] < -1e8]
    check(len(fe) == 1 and abs(fe[0]["re"] - fast) <= 1e-6 * abs(fast), f"  the tire's {fast:.6g}: {[e['re'] for e in fe]}")

# The rolling disc spinning fast (examples/mech/rolling_disc.yaml): six zeros and the wobble pair
# +-i sqrt((12 W^2 R - 4 g) / (5 R)) (Neimark & Fufaev, the file's comment). At W = 100 and 300
# rad/s A has ||A||_1 = 201 and 1.8e3, and entries at the rounding level of exact zeros (5e-12 in
# the spin's acceleration row) split a defective zero into a real pair +-2.3e-6 .. +-3.8e-6 (+-2.1e-6i
# with fd), just above dgeev's floor 10 sqrt(eps ||A||_1) and above zero_tol of the largest: they
# were reported as an unstable and a stable real mode. Their normwise condition number is 1e9, so a
# perturbation of A at eps ||A|| moves them by 5e-5: zero within their own error.
for W in (100, 300):
    wob = math.sqrt((12 * W * W * 0.3 - 4 * 9.81) / (5 * 0.3))
    for method in ("augmented", "partition", "nullspace", "projection", "fd"):
        d = run("linearize", "examples/mech/rolling_disc.yaml", "--set", f"W={W}", "--method", method)
        ev = [e for e in d["eigenvalues"] if not e["spurious"]]
        zeros = sum(e["kind"] == "zero" for e in ev)
        osc = [e for e in ev if e["kind"] == "oscillatory"]
        tol = 1e-6 if method == "fd" else 1e-9
        check(zeros == 6 and len(osc) == 2 and all(abs(abs(e["im"]) - wob) <= tol * wob for e in osc),
              f"rolling disc W = {W}, {method}: {zeros} zero modes (6), wobble "
              f"{[e['im'] for e in osc]} vs +-{wob:.10g}, kinds {[e['kind'] for e in ev]}")

# ... while a small eigenvalue that is well determined stays a mode: the mechanism bicycle's capsize
# at v = 6.024 m/s, -4.337e-5 (normwise condition 8e9: a normwise bound, kappa eps ||A||_F = 1.1e-4,
# called it zero), against the equation-level twin examples/whipple_bicycle.yaml (independent
# formulation, its capsize a mode there with a componentwise estimate of 4e-15; the two agree to
# 1.8e-5 relative, 7.6e-10, this close to the capsize speed)
def capsize(path):
    d = run("linearize", path, "--set", "v=6.024")
    return [e for e in d["eigenvalues"] if not e["spurious"] and -1e-3 < e["re"] < -1e-6 and e["im"] == 0]
twin, mech = capsize("examples/whipple_bicycle.yaml"), capsize("examples/mech/whipple_bicycle.yaml")
check(len(twin) == 1 and len(mech) == 1 and mech[0]["kind"] == "real" and twin[0]["kind"] == "real" and
      abs(mech[0]["re"] - twin[0]["re"]) <= 1e-3 * abs(twin[0]["re"]),
      f"bicycle capsize at v = 6.024: mechanism {[(e['re'], e['kind']) for e in mech]}, "
      f"equations {[(e['re'], e['kind']) for e in twin]}")

if FAILS:
    print(f"{len(FAILS)} failed")
    sys.exit(1)
print("all passed")
