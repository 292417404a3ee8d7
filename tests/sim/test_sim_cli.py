#!/usr/bin/env python3
"""mblin simulate / validate end to end: files, JSON, the exit status, bad input (one line)."""
import json
import os
import subprocess
import sys
import tempfile

MBLIN = sys.argv[1]
failed = 0


def run(*args):
    p = subprocess.run([MBLIN, *args], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def check(cond, what):
    global failed
    if not cond:
        failed += 1
        print("FAILED:", what)


with tempfile.TemporaryDirectory() as d:
    csv = os.path.join(d, "run.csv")
    rc, out, err = run("simulate", "examples/slider_pendulum.yaml", "--t-end", "5", "--dt-out", "0.5",
                       "--perturb", "1:0.01", "-o", csv, "--json")
    check(rc == 0, "simulate slider: " + err)
    if rc == 0:
        s = json.loads(out)
        check(s["samples"] == 11 and s["t_end"] == 5, "samples %s" % out)
        rows = open(csv).read().splitlines()
        check(rows[0] == "t,y,theta,der(y),der(theta),F,tip", "header " + rows[0])
        check(len(rows) == 12, "rows %d" % len(rows))
        # the perturbation: mode 1's shape scaled to 1 in its largest component (y), amplitude 0.01
        y0 = float(rows[1].split(",")[1])
        check(abs(y0 - 0.01) < 1e-12 or abs(abs(y0) - 0.01) < 1e-12, "y0 %g" % y0)
    # --set-initial with a velocity, projected onto the constraints of the four-bar
    rc, out, err = run("simulate", "examples/fourbar_N5.yaml", "--t-end", "1", "--set-initial", "der(phi)=0.1",
                       "--json")
    check(rc == 0, "simulate fourbar: " + err)
    if rc == 0:
        s = json.loads(out)
        check(s["phi_max"] < 1e-7 and s["phid_max"] < 1e-7, "drift " + out)  # 10 rtol times the scale
    # an input as a function of time; frequencies along the trajectory
    modes = os.path.join(d, "modes.csv")
    svg = os.path.join(d, "f.svg")
    rc, out, err = run("simulate", "examples/slider_pendulum.yaml", "--t-end", "2", "--input", "F=10*t",
                       "--linearize-every", "1", "--modes-out", modes, "--svg", svg, "-o", csv)
    check(rc == 0, "simulate --linearize-every: " + err)
    if rc == 0:
        lines = open(modes).read().splitlines()
        check(lines[0] == "t,mode,re,im,freq_hz,damping_ratio", lines[0])
        check(len(lines) == 1 + 3 * 2, "modes rows %d" % len(lines))
        check(open(svg).read().startswith("<svg"), "svg")
        last = open(csv).read().splitlines()[-1].split(",")
        check(abs(float(last[5]) - 20.0) < 1e-12, "input F at t = 2: " + last[5])
    # validate: c = 20 (JSON), exit status
    rc, out, err = run("validate", "examples/slider_pendulum.yaml", "--set", "c=20", "--json")
    check(rc == 0, "validate: " + err)
    if rc == 0:
        v = json.loads(out)
        check(v["ok"] and len(v["modes"]) == 2, out)
        for m in v["modes"]:
            check(m["freq_rel_err"] < 1e-4 and m["damping_err"] < 1e-3, json.dumps(m))
    # an impossible tolerance makes validate fail with exit 1 and say why
    rc, out, err = run("validate", "examples/slider_pendulum.yaml", "--freq-tol", "1e-30", "--zeta-tol", "1e-30")
    check(rc == 1 and "off by more than" in err, "tolerance exit: %d %s" % (rc, err))
    # the rotor-stator spin ramp of source 000 (f = 0.0005 t Hz) linearized along the trajectory
    # against the quasi-static sweep of the free-spinning model at the same spin: the rocking pair
    # (forward and backward whirl) agree to the ramp's acceleration effect (measured 3e-7)
    sw = os.path.join(d, "sw")
    rc, out, err = run("sweep", "examples/mech/rotor_stator.yaml", "--param", "f=0:0.1:3", "-o", sw)
    check(rc == 0, "sweep: " + err)
    rc, out, err = run("simulate", "examples/sim/rotor_stator_ramp.yaml", "--t-end", "200", "--dt-out", "1",
                       "--linearize-every", "100", "--modes-out", modes, "--svg", svg, "--along-x", "f=0.0005*t",
                       "--sweep", os.path.join(sw, "sweep.csv"), "--fmax", "2")
    check(rc == 0, "ramp: " + err)
    if rc == 0:
        along = {}
        for ln in open(modes).read().splitlines()[1:]:
            t, mode, re_, im, fhz, z = ln.split(",")
            along.setdefault(round(float(t)), []).append(float(fhz))
        sweep = {}
        for ln in open(os.path.join(sw, "sweep.csv")).read().splitlines()[1:]:
            f, b, re_, im, fhz = ln.split(",")[:5]
            if float(im) > 0:
                sweep.setdefault(round(float(f), 6), []).append(float(fhz))
        for t, f in ((100, 0.05), (200, 0.1)):
            rock = [x for x in along[t] if 0.3 < x < 1.2]
            ref = [x for x in sweep[f] if 0.3 < x < 1.2]
            check(len(rock) == 2 and len(ref) == 2, "rocking pair at t = %d: %s %s" % (t, rock, ref))
            for a, b in zip(sorted(rock), sorted(ref)):
                check(abs(a - b) < 1e-5 * b, "t = %d: %.12g vs sweep %.12g" % (t, a, b))
        svgt = open(svg).read()
        check(svgt.count("<circle") > 10 and "quasi-static sweep" in svgt, "ramp svg")
    # bad input: one line, nonzero exit
    for args, code, text in [
        (("simulate", "examples/slider_pendulum.yaml"), 2, "--t-end"),
        (("simulate", "examples/slider_pendulum.yaml", "--t-end", "1", "--perturb", "x"), 2, "MODE:AMPLITUDE"),
        (("simulate", "examples/slider_pendulum.yaml", "--t-end", "1", "--perturb", "9:0.1"), 2, "mode 9"),
        (("simulate", "examples/slider_pendulum.yaml", "--t-end", "1", "--set-initial", "zz=1"), 2, "'zz'"),
        (("simulate", "examples/slider_pendulum.yaml", "--t-end", "1", "--input", "F=sin(t"), 1, "input 'F'"),
        (("simulate", "examples/slider_pendulum.yaml", "--t-end", "-1"), 2, "end time"),
        (("validate", "examples/slider_pendulum.yaml", "--modes", "0"), 2, "integer"),
    ]:
        rc, out, err = run(*args)
        check(rc == code and text in err and err.count("\n") == 1, "%s: %d %s" % (args, rc, err))

print("test_sim_cli: %s" % ("ok" if not failed else "%d failed" % failed))
sys.exit(1 if failed else 0)
