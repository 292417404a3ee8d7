#!/usr/bin/env python3
"""simulate --integrator ssode (coordinate partitioning, issue 70 item 3; docs/simulation.md):
against independent solutions and IDA, its repartitions, its drift at the Newton tolerance, its refusals.

  - the pendulum in x, y swung from 100 degrees (tests/sim/pendulum_xy.yaml): x = sin(theta),
    y = -cos(theta) of scipy's solution of theta'' = -g sin(theta) (DOP853 at 1e-12), within 1e-6; at
    least two repartitions (x = 0 at the bottom, y = 0 at the horizontal); |Phi| at the Newton tolerance
  - the slider-crank turning round (tests/sim/slider_crank_xy.yaml): repartitions, IDA's trajectory
    within 1e-6 of each signal's scale, the energy conserved within 1e-6
  - the pendulum again without repartitioning by the condition: the steps over the singular points undone
  - the sleeping top (examples/sim/sleeping_top.yaml): its spin rate conserved within 1e-3 over dozens of
    repartitions, also at --repartition-cond 100 (the spin reversed before the undo of such steps)
  - the four-bar (examples/fourbar_N1.yaml), a DC motor's pendulum with its current as an ODE state
    (examples/ode/dc_motor_pendulum.yaml) and the rotor-stator ramp (examples/sim/rotor_stator_ramp.yaml)
    against IDA at the same tolerances
  - refused in one line: non-holonomic constraints, implicit variables, an unknown integrator"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
from scipy.integrate import solve_ivp

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, finish  # noqa: E402

MBLIN = sys.argv[1]
TOL = ["--rtol", "1e-10", "--atol", "1e-12"]


def run(*args):
    p = subprocess.run([MBLIN, *args], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def simulate(d, tag, model, *args):
    """(summary, trajectory) of simulate --json -o, or (None, None) after a failed check"""
    csv = os.path.join(d, tag + ".csv")
    rc, out, err = run("simulate", model, *args, "-o", csv, "--json")
    check(rc == 0, "%s: %s" % (tag, err))
    if rc:
        return None, None
    return json.loads(out), np.genfromtxt(csv, delimiter=",", names=True)


def agree(tag, a, b, rel, floor=1e-11):
    """every column of b within rel of a's largest value, + floor (the columns that stay near 0)"""
    for n in a.dtype.names:
        scale = np.max(np.abs(a[n]))
        err = np.max(np.abs(a[n] - b[n]))
        check(err <= rel * scale + floor, "%s: %s differs by %.3g (scale %.3g)" % (tag, n, err, scale))


with tempfile.TemporaryDirectory() as d:
    # the pendulum against the angle's ODE
    s, p = simulate(d, "pendulum", "tests/sim/pendulum_xy.yaml", "--t-end", "2", "--integrator", "ssode", *TOL)
    if s:
        th0 = np.radians(100)
        ref = solve_ivp(lambda t, z: [z[1], -9.81 * np.sin(z[0])], (0, 2), [th0, 0], method="DOP853",
                        rtol=1e-12, atol=1e-12, dense_output=True).sol(p["t"])
        ex = np.max(np.abs(p["x"] - np.sin(ref[0])))
        ey = np.max(np.abs(p["y"] + np.cos(ref[0])))
        ev = np.max(np.abs(p["derx"] - np.cos(ref[0]) * ref[1]))
        check(ex < 1e-6 and ey < 1e-6 and ev < 1e-5, "pendulum vs theta(t): %.3g %.3g %.3g" % (ex, ey, ev))
        check(s["integrator"] == "ssode" and s["independent"] == 1, "pendulum summary " + str(s))
        check(s["repartitions"] >= 2, "pendulum: %d repartitions, expected x = 0 and y = 0 passed" % s["repartitions"])
        check(s["phi_max"] <= 1e-12 and s["phid_max"] <= 1e-12, "pendulum drift %g %g" % (s["phi_max"], s["phid_max"]))
    # no repartitioning by the condition (--repartition-cond 1e15): the steps over x = 0 and y = 0 are
    # seen (the velocity jumps as the motion turns into its mirror image) and undone
    s, p = simulate(d, "pendulum_undo", "tests/sim/pendulum_xy.yaml", "--t-end", "2", "--integrator", "ssode",
                    "--repartition-cond", "1e15", *TOL)
    if s:
        ex = np.max(np.abs(p["x"] - np.sin(ref[0]))) if p is not None else 1
        check(ex < 1e-5 and s["repartitions"] >= 2, "pendulum, steps over the singular points undone: x off %.3g, %d "
              "repartitions" % (ex, s["repartitions"]))
    # the same with a looser Newton tolerance: the drift follows it
    s, _ = simulate(d, "pendulum_tol", "tests/sim/pendulum_xy.yaml", "--t-end", "1", "--integrator", "ssode",
                    "--newton-tol", "1e-8")
    if s:
        check(s["phi_max"] <= 1e-8, "--newton-tol 1e-8: |Phi| %g" % s["phi_max"])

    # the slider-crank: every coordinate degenerates somewhere on a turn
    init = ["--set-initial", "der(yA)=3", "--t-end", "3", *TOL]
    si, ti = simulate(d, "crank_ida", "tests/sim/slider_crank_xy.yaml", *init)
    ss, ts = simulate(d, "crank_ssode", "tests/sim/slider_crank_xy.yaml", *init, "--integrator", "ssode")
    if si and ss:
        check(ss["repartitions"] >= 4, "slider-crank: %d repartitions in about two turns" % ss["repartitions"])
        agree("slider-crank", ti, ts, 1e-6)
        e0 = ts["energy"][0]
        check(ss["energy_drift"] <= 1e-6 * e0, "slider-crank energy drift %g of %g" % (ss["energy_drift"], e0))
        check(ss["phi_max"] <= 1e-12, "slider-crank |Phi| %g" % ss["phi_max"])

    # the sleeping top at 200 rad/s in Euler parameters: their partition turns with the spin (dozens of
    # repartitions); the spin rate 2 (e0 e3' - e3 e0') is conserved (Euler's equations, upright symmetric
    # top). At --repartition-cond 100 the spin reversed before steps over singular points were undone.
    for cond in ("10", "100"):
        s, p = simulate(d, "top" + cond, "examples/sim/sleeping_top.yaml", "--t-end", "0.5", "--perturb", "1:0.01",
                        "--integrator", "ssode", "--repartition-cond", cond)
        if s:
            w = 2 * (p["top_e0"] * p["dertop_e3"] - p["top_e3"] * p["dertop_e0"])
            check(s["repartitions"] >= 20 and np.max(np.abs(w - w[0])) < 1e-3 * abs(w[0]),
                  "top (--repartition-cond %s): %d repartitions, spin rate %.9g to %.9g" % (cond, s["repartitions"],
                                                                                           w[0], w[-1]))

    # the four-bar and the rotor-stator ramp against IDA
    # (the rotor's stator orientation, 3e-5 rad, oscillates 40 times in 10 s: both integrators' own
    # errors there reach 2e-10 in e3 and 2e-9 in its rate against either at rtol 1e-12, so 1e-8 absolute)
    for tag, model, args, floor in [
            ("fourbar", "examples/fourbar_N1.yaml", ["--t-end", "3", "--set-initial", "der(phi)=2"], 1e-11),
            ("motor", "examples/ode/dc_motor_pendulum.yaml", ["--t-end", "2", "--perturb", "1:0.01"], 1e-11),
            ("rotor", "examples/sim/rotor_stator_ramp.yaml", ["--t-end", "10", "--dt-out", "0.1", "--perturb", "1:0.001"],
             1e-8)]:
        si, ti = simulate(d, tag + "_ida", model, *args, *TOL)
        ss, ts = simulate(d, tag + "_ssode", model, *args, *TOL, "--integrator", "ssode")
        if si and ss:
            agree(tag, ti, ts, 1e-6, floor)
            check(ss["phi_max"] <= 1e-12, "%s |Phi| %g" % (tag, ss["phi_max"]))

    # refusals: one line, nonzero exit
    for model, word in [("examples/nh_sleigh.yaml", "non-holonomic"), ("examples/ode/arm_friction_of_reaction.yaml",
                                                                         "implicit variables")]:
        rc, out, err = run("simulate", model, "--t-end", "1", "--integrator", "ssode")
        check(rc != 0 and word in err and len(err.strip().splitlines()) == 1, "%s: rc %d, %s" % (model, rc, err))
    rc, out, err = run("simulate", "tests/sim/pendulum_xy.yaml", "--t-end", "1", "--integrator", "rk4")
    check(rc != 0 and "--integrator expects ida or ssode" in err, "--integrator rk4: " + err)

sys.exit(finish("test_ssode_cli"))
