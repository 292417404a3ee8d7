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
    # bad input: one line, nonzero exit
    for args, code, text in [
        (("simulate", "examples/slider_pendulum.yaml"), 2, "--t-end"),
        (("simulate", "examples/slider_pendulum.yaml", "--t-end", "1", "--perturb", "x"), 2, "MODE:AMPLITUDE"),
        (("simulate", "examples/slider_pendulum.yaml", "--t-end", "1", "--perturb", "9:0.1"), 1, "mode 9"),
        (("simulate", "examples/slider_pendulum.yaml", "--t-end", "1", "--set-initial", "zz=1"), 1, "'zz'"),
        (("simulate", "examples/slider_pendulum.yaml", "--t-end", "1", "--input", "F=sin(t"), 1, "input 'F'"),
        (("simulate", "examples/slider_pendulum.yaml", "--t-end", "-1"), 1, "end time"),
        (("validate", "examples/slider_pendulum.yaml", "--modes", "0"), 2, "integer"),
    ]:
        rc, out, err = run(*args)
        check(rc == code and text in err and err.count("\n") == 1, "%s: %d %s" % (args, rc, err))

print("test_sim_cli: %s" % ("ok" if not failed else "%d failed" % failed))
sys.exit(1 if failed else 0)
