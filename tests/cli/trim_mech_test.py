#!/usr/bin/env python3
"""Issue 35, item 3: linearize.at: trim of a `model: mechanism` file (trim.turn; docs/mechanism-reference.md,
"Steady turns (trim)").

    python3 tests/cli/trim_mech_test.py build/mblin        (from the project root; numpy, scipy)

examples/vehicle/mech_single_track_turn.yaml (a chassis, a steered knuckle and two rolling wheels with
linear tires) trimmed for a forward speed u and a yaw rate u/R, checked against values computed here:
1. an independent steady-turn solve (scipy fsolve) of the planar force and yaw-moment balance of the
   same car (point masses at the chassis' centre, the hubs; the tire law of the rolling wheel joint,
   alpha = atan(lateral slip / sqrt(forward^2 + vmin^2)), F = -Ca alpha along the axle): steer,
   body slip, drive force, wheel spins to 1e-9, at three speeds and radii;
2. the closed-form understeer gradient: (delta - L/R) / (u^2/R) -> K_us = m/L (b'/Cf - a'/Cr)
   (a', b': the axles from the whole car's centre of mass) as R grows (1e-4 at R = 4000 m);
3. the lateral/yaw eigenvalues against the linear single-track model with the steering servo
   (v, r, steer; masses and inertias of the file; the classical model holds the speed and neglects
   the turn's coupling of speed and slip, of order a_y^2): the difference falls as 1/R^2 (2.7e-5,
   2.7e-7, 2.7e-9 at R = 1e3, 1e4, 1e5 m); the path's eigenvalues are 0 (x3) and +-i u/R to 1e-9
   (the file's polar states make the turn a steady motion of the states);
5. the Whipple bicycle in a steady turn (tests/cli/trim_whipple_turn.yaml): a steady motion of the
   nonlinear model (mblin simulate from the trimmed state keeps lean, steer, yaw rate and speed);
4. refusals, one line and a nonzero exit: a target with an unknown measure, too few free inputs
   (the steer not freed), a free input nothing depends on (undetermined), a free name that is not
   an input, trim.turn naming no body, trim.turn in relative coordinates;
6. a turn beyond the tires' grip (issue 65, item 17): the car with Magic Formula tires whose peak
   forces D share mu m_c g as the static axle loads do. Their lateral forces are at most
   mu m_c g in all, so no steady turn has u^2/R above mu g m_c / m (m the whole car's mass):
   at R = 40 and 50 m (10 and 8 m/s^2, the bound 7.62) one line "no steady motion at" the
   targets (not "over-determine"), at R = 70 m (5.71 m/s^2) the trim is found.
"""
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np
from scipy.optimize import fsolve

EX = "examples/vehicle/mech_single_track_turn.yaml"
P = dict(mc=1500, Izc=2500, h=0.5, a=1.2, b=1.5, r=0.3, mw=20, Iwd=0.5, Iwa=0.9, mk=5, Ik=0.05, Cf=80000,
         Cr=90000, kc=3000, ks=1e7, cs=1e4)
VMIN = 1e-4  # MBL_MECH_TIRE_MIN_SPEED
FAILS = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        FAILS.append(what)


def run(mblin, path, *args):
    return subprocess.run([mblin, "linearize", path, "--json", *args], capture_output=True, text=True)


def trimmed(mblin, u, R, path=EX):
    p = run(mblin, path, "--set", f"u={u}", "--set", f"R={R}")
    if p.returncode:
        raise SystemExit(f"mblin failed: {p.stderr}")
    d = json.loads(p.stdout)
    op = d["operating_point"]
    ins = dict(zip(op["input_names"], op["inputs"]))
    outs = dict(zip(op["output_names"], op["outputs"]))
    return ins, outs, [complex(e["re"], e["im"]) for e in d["eigenvalues"]]


def reference(u, R):
    """Steady turn at forward speed u of the chassis origin, yaw rate W = u/R: unknowns the lateral
    velocity v of the chassis origin (chassis axes), steer delta, drive force D."""
    a, b, W = P["a"], P["b"], u / R
    masses = [(P["mc"], 0.0), (P["mk"] + P["mw"], a), (P["mw"], -b)]  # (mass, x in chassis axes), y = 0

    def tires(v, d):
        af, tf = np.array([-math.sin(d), math.cos(d)]), np.array([math.cos(d), math.sin(d)])
        Vf, Vr = np.array([u, v + W * a]), np.array([u, v - W * b])
        alf = math.atan(af @ Vf / math.sqrt((tf @ Vf) ** 2 + VMIN ** 2))
        alr = math.atan(Vr[1] / math.sqrt(Vr[0] ** 2 + VMIN ** 2))
        return -P["Cf"] * alf * af, -P["Cr"] * alr * np.array([0.0, 1.0]), tf @ Vf / P["r"], u / P["r"]

    def res(x):
        v, d, D = x
        Ff, Fr, _, _ = tires(v, d)
        F = Ff + Fr + np.array([D, 0.0])
        Mz = a * Ff[1] - b * Fr[1]
        for m, px in masses:  # d'Alembert: acceleration of a point fixed in the chassis, W z x V
            acc = np.array([-W * (v + W * px), W * u])
            F = F - m * acc
            Mz -= px * m * acc[1]
        return [F[0], F[1], Mz]

    v, d, D = fsolve(res, [0.0, 2.7 / R, 0.0], xtol=1e-12)
    _, _, sf, sr = tires(v, d)
    return dict(delta=d, drive=D, slip=math.atan(v / u), front_spin=sf, rear_spin=sr)


def closed_form_eigs(u):
    """the linear single-track model with the steering servo: states v, r, steer e (and its rate)"""
    a, b = P["a"], P["b"]
    m = P["mc"] + 2 * P["mw"] + P["mk"]
    xg = ((P["mw"] + P["mk"]) * a - P["mw"] * b) / m
    Is = P["Ik"] + P["Iwd"]  # knuckle and wheel about the kingpin
    I = P["Izc"] + (P["mw"] + P["mk"]) * a ** 2 + P["mw"] * b ** 2 + P["Iwd"] + Is  # Is counted with the yaw
    Cf, Cr, ks, cs = P["Cf"], P["Cr"], P["ks"], P["cs"]
    # x = [v, r, e, e']: m (v' + u r + xg r') = Ff + Fr; I r' + Is e'' + m xg (v' + u r) = a Ff - b Fr;
    # Is (r' + e'') = -ks e - cs e';  Ff = Cf (e - (v + a r)/u), Fr = -Cr (v - b r)/u
    # x = [v, r, e, e'], x' = [v', r', e', e'']: Mf x' = K x
    Mf = np.array([[m, m * xg, 0, 0], [m * xg, I, 0, Is], [0, Is, 0, Is], [0, 0, 1, 0]], float)
    K = np.zeros((4, 4))
    K[0] = [-(Cf + Cr) / u, -(a * Cf - b * Cr) / u - m * u, Cf, 0]
    K[1] = [-(a * Cf - b * Cr) / u, -(a * a * Cf + b * b * Cr) / u - m * xg * u, a * Cf, 0]
    K[2] = [0, 0, -ks, -cs]
    K[3] = [0, 0, 0, 1]
    A = np.linalg.solve(Mf, K)
    lam = np.linalg.eigvals(A)
    return sorted([z for z in lam if abs(z.imag) > 1e-9 and z.imag > 0], key=lambda z: z.real)


def whipple(mblin):
    """the trimmed Whipple bicycle, simulated (IDA) from its trimmed state with the trimmed steer
    torque: lean, steer, yaw rate and speed stay at the trim (the one unstable mode, +0.103/s,
    grows the trim's residuals by e^0.21 over 2 s)"""
    path = "tests/cli/trim_whipple_turn.yaml"
    p = run(mblin, path)
    check(p.returncode == 0, f"Whipple turn trimmed: {p.stderr.strip()[:200]}")
    if p.returncode:
        return
    op = json.loads(p.stdout)["operating_point"]
    T = dict(zip(op["input_names"], op["inputs"]))["T"]
    outs = dict(zip(op["output_names"], op["outputs"]))
    check(abs(outs["speed"] - 5) < 1e-9 and abs(outs["yaw_rate"] - 0.5) < 1e-9, "Whipple: speed 5 m/s, yaw rate 0.5/s")
    # the point-mass lean, only a plausibility bound (wheels' spin and the frames' geometry differ)
    check(abs(abs(outs["lean"]) - math.atan(25 / (9.81 * 10))) < 0.01, f"Whipple: lean {outs['lean']:.7f} near atan(v^2/(g R))")
    with tempfile.TemporaryDirectory() as tmp:
        csvf = os.path.join(tmp, "sim.csv")
        q = subprocess.run([mblin, "simulate", path, "--t-end", "2", "--dt-out", "0.5", "--input", f"T={T!r}",
                            "--rtol", "1e-10", "--atol", "1e-12", "-o", csvf], capture_output=True, text=True)
        check(q.returncode == 0, f"Whipple: simulate from the trim: {q.stderr.strip()[-200:]}")
        if q.returncode:
            return
        import csv
        rows = list(csv.DictReader(open(csvf)))
    for k in ("lean", "steer", "yaw_rate", "speed"):
        dev = max(abs(float(r[k]) - outs[k]) for r in rows) / abs(outs[k])
        check(dev < 1e-7, f"Whipple: {k} steady over 2 s of simulation (relative drift {dev:.1e})")


def grip(mblin, src):
    mu, g = 0.8, 9.81
    text = (src.replace("tire: {model: linear, cornering_stiffness: Cf}",
                        'tire: {model: magic_formula, B: 10, C: 1.3, D: "mu*mc*g*b/(a+b)", E: 0.97}')
            .replace("tire: {model: linear, cornering_stiffness: Cr}",
                     'tire: {model: magic_formula, B: 10, C: 1.3, D: "mu*mc*g*a/(a+b)", E: 0.97}')
            .replace("cs: 1e4}", f"cs: 1e4, mu: {mu}}}"))
    m = P["mc"] + 2 * P["mw"] + P["mk"]
    bound = mu * g * P["mc"] / m  # the largest lateral acceleration the tires can hold
    u = 20.0
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "grip.yaml")
        with open(path, "w") as f:
            f.write(text)
        for R in (40.0, 50.0):
            p = run(mblin, path, "--set", f"R={R:g}")
            err = p.stderr.strip()
            check(u * u / R > bound and p.returncode != 0 and "\n" not in err and "no steady motion at" in err
                  and f"WZ(cg) = {u / R:g}" in err and "over-determine" not in err,
                  f"R = {R:g} m: a_y {u * u / R:.3g} > mu g m_c/m = {bound:.4g}: refused as no steady motion: {err[:160]}")
        R = 70.0
        p = run(mblin, path, "--set", f"R={R:g}")
        ok = p.returncode == 0
        outs = dict(zip(*(json.loads(p.stdout)["operating_point"][k] for k in ("output_names", "outputs")))) if ok else {}
        check(ok and u * u / R < bound and abs(outs["lateral_acceleration"] - u * u / R) < 1e-9 * u * u / R,
              f"R = {R:g} m: a_y {u * u / R:.3g} within the grip: trimmed ({p.stderr.strip()[:160]})")


def main():
    mblin = os.path.abspath(sys.argv[1])
    # 1. the trim against the independent steady-turn solve
    for u, R in ((20, 100), (10, 40), (30, 250)):
        ins, outs, _ = trimmed(mblin, u, R)
        ref = reference(u, R)
        for k, got in (("delta", ins["delta"]), ("drive", ins["drive"]), ("slip", outs["slip"]),
                       ("front_spin", outs["front_spin"]), ("rear_spin", outs["rear_spin"])):
            err = abs(got - ref[k]) / max(1.0, abs(ref[k]))
            check(err < 1e-9, f"u={u} R={R}: {k} {got:.12g} vs steady-turn balance {ref[k]:.12g} (rel {err:.1e})")
        check(abs(outs["steer"] - ins["delta"]) < 1e-9, f"u={u} R={R}: the kingpin angle is the commanded steer")
        check(abs(outs["yaw_rate"] - u / R) < 1e-12 * u / R + 1e-15, f"u={u} R={R}: yaw rate u/R")
    # the target keyed as written (a measure): --target 'WZ(cg)=0.1' is the turn of radius u/0.1
    p = run(mblin, EX, "--target", "WZ(cg)=0.1")
    op = json.loads(p.stdout)["operating_point"] if p.returncode == 0 else None
    ref = reference(20, 200)
    check(op is not None and abs(dict(zip(op["input_names"], op["inputs"]))["delta"] - ref["delta"]) < 1e-9 * ref["delta"],
          f"--target 'WZ(cg)=0.1': the steer of R = 200 m {ref['delta']:.10g} {p.stderr.strip()[:100]}")
    # 2. understeer gradient
    a, b, L = P["a"], P["b"], P["a"] + P["b"]
    m = P["mc"] + 2 * P["mw"] + P["mk"]
    xg = ((P["mw"] + P["mk"]) * a - P["mw"] * b) / m
    kus = m / L * ((b + xg) / P["Cf"] - (a - xg) / P["Cr"])
    u = 20.0
    errs = []
    for R in (1000.0, 4000.0):
        ins, _, _ = trimmed(mblin, u, R)
        est = (ins["delta"] - L / R) / (u * u / R)
        errs.append(abs(est - kus) / kus)
        print(f"     R={R:g}: (delta - L/R)/a_y = {est:.9g}, closed form K_us = {kus:.9g}")
    check(errs[1] < 1e-4 and errs[1] < errs[0], f"understeer gradient to {errs[1]:.1e} at R = 4000 m (closer than at 1000 m)")
    # 3. eigenvalues -> the closed-form pair as R grows
    cf = [z for z in closed_form_eigs(u) if -10 < z.real < -1][0]
    diffs = []
    for R in (1e3, 1e4, 1e5):
        _, _, ev = trimmed(mblin, u, R)
        z = min((e for e in ev if e.imag > 0.5), key=lambda e: abs(e - cf))
        diffs.append(abs(z - cf) / abs(cf))
        # the path's: 0 (where on the circle, the wheels' phases) and +-i u/R (the centre moved):
        # the motion is steady in the file's polar states, so these are modal
        small = sorted((e for e in ev if abs(e) < 1.0), key=lambda e: e.imag)  # below the speed mode, -1.92
        want = [complex(0, -u / R), 0, 0, 0, complex(0, u / R)]
        check(len(small) == 5 and all(abs(x - y) < 1e-9 * abs(cf) for x, y in zip(small, want)),
              f"R={R:g}: path eigenvalues 0, 0, 0, +-i u/R: " + " ".join(f"{e:.3g}" for e in small))
        print(f"     R={R:g}: lateral/yaw {z.real:.10f} +- {z.imag:.10f}i vs closed form {cf.real:.10f} +- {cf.imag:.10f}i")
    check(diffs[2] < 1e-8 and diffs[1] < diffs[0] / 50 and diffs[2] < diffs[1] / 50,
          "lateral/yaw pair -> closed form as 1/R^2: " + ", ".join(f"{x:.1e}" for x in diffs))
    # 5. the Whipple bicycle in a steady turn: a steady motion of the full nonlinear model
    whipple(mblin)
    # 4. refusals
    src = open(EX).read()
    bad = {
        "unknown measure": (src.replace('"WZ(cg)": u/R,', '"WQ(cg)": u/R,'), "WQ"),
        "too few free inputs": (src.replace("free: [delta, drive]", "free: [drive]"), "over-determine"),
        "turn of no body": (src.replace("turn: chassis", "turn: wagon"), "trim.turn: 'wagon' is not a body"),
        "relative coordinates": (src.replace("model: mechanism\n", "model: mechanism\ncoordinates: relative\n"),
                                 "trim.turn needs 'coordinates: absolute'"),
        "free input undetermined": (src.replace("inputs: {delta: 0.04, drive: 0}", "inputs: {delta: 0.04, drive: 0, spare: 0}")
                                    .replace("free: [delta, drive]", "free: [delta, drive, spare]"),
                                    "free input 'spare' undetermined"),
        "not an input": (src.replace("free: [delta, drive]", "free: [delta, drive, ks]"), "'ks' is not an input"),
    }
    with tempfile.TemporaryDirectory() as tmp:
        for what, (text, needle) in bad.items():
            path = os.path.join(tmp, "bad.yaml")
            with open(path, "w") as f:
                f.write(text)
            p = run(mblin, path)
            err = p.stderr.strip()
            check(p.returncode != 0 and needle in err and "\n" not in err and "Traceback" not in err,
                  f"{what}: exit {p.returncode}: {err[:200]}")
    # 6. a turn beyond the tires' grip
    grip(mblin, src)
    if FAILS:
        print(f"{len(FAILS)} failed")
        sys.exit(1)
    print("all passed")


if __name__ == "__main__":
    main()
