#!/usr/bin/env python3
"""simulate's --input and the CLI's number options refused in one line that names the cause (s43,
the new-user review):
  1. a name given twice by --input (expression or random, in either order) is a usage error (exit 2)
     naming the input; one --input F=2 still drives the forced mass as the closed-form step
     response of m x'' + c x' + k x = F from rest;
  2. a huge finite input (1e300, 1e200) is refused at the start with one line naming the input and
     what overflowed (IDA and --integrator ssode), not IDA's "tstop is behind current t";
  3. every command's number option given 'nan' names the option in its message (the commands and
     their options read from `mblin --help` and `mblin CMD --help`; the sanitized build, where
     each process costs about 0.2 s before any work, tries every fifth option, some of each
     command: the messages come from one parser, and the plain build tries them all).
usage: test_sim_input_cli.py PATH_TO_MBLIN (from the repository root)"""
import math
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, finish  # noqa: E402

MBLIN = os.path.abspath(sys.argv[1])
MODEL = "tests/sim/forced_mass.yaml"  # m = 1, c = 0.4, k = 4, input F
RANDOM = "random:band=0.5:2,rms=0.7,seed=9"
SANITIZED = os.environ.get("MBLIN_SANITIZED") == "1"


def run(*args, cwd=None):
    try:
        p = subprocess.run([MBLIN, *args], capture_output=True, text=True, timeout=60, cwd=cwd)
    except subprocess.TimeoutExpired:
        return -9, "", "(no answer within 60 s)\n"
    return p.returncode, p.stdout, p.stderr


with tempfile.TemporaryDirectory() as d:
    csv = os.path.join(d, "run.csv")
    # 1: one definition per input
    for first, second in (("2", "3"), (RANDOM, RANDOM.replace("seed=9", "seed=4")), (RANDOM, "0"), ("0", RANDOM)):
        rc, out, err = run("simulate", MODEL, "--t-end", "1", "--input", "F=" + first, "--input", "F=" + second, "-o", csv)
        check(rc == 2 and "'F'" in err and "twice" in err and err.count("\n") == 1,
              f"--input F={first} --input F={second}: exit {rc}, {err.strip()!r}")
    rc, out, err = run("simulate", MODEL, "--t-end", "5", "--dt-out", "0.5", "--input", "F=2", "-o", csv)
    check(rc == 0, "simulate --input F=2: " + err.strip())
    if rc == 0:
        lines = open(csv).read().splitlines()
        head = lines[0].split(",")
        last = dict(zip(head, map(float, lines[-1].split(","))))
        wn, z = 2.0, 0.4 / (2 * 2.0)  # sqrt(k/m), c / (2 sqrt(k m))
        wd, t = wn * math.sqrt(1 - z * z), last["t"]
        x = 2 / 4 * (1 - math.exp(-z * wn * t) * (math.cos(wd * t) + z / math.sqrt(1 - z * z) * math.sin(wd * t)))
        check(t == 5 and abs(last["x"] - x) < 1e-6, f"x(5) = {last.get('x')} vs the step response {x}")
    # 2: an input whose size overflows the integration
    for big, integ in (("1e300", "ida"), ("1e200", "ida"), ("-1e300", "ida"), ("1e200", "ssode")):
        rc, out, err = run("simulate", MODEL, "--t-end", "1", "--input", "F=" + big, "--integrator", integ, "-o", csv)
        check(rc != 0 and err.count("\n") == 1 and "input" in err and "'F'" in err and "not finite" in err
              and "IDASolve" not in err, f"--input F={big} ({integ}): exit {rc}, {err.strip()!r}")

    # 3: a number option's complaint names the option, for every command
    rc, out, err = run("--help")
    commands = sorted(set(re.findall(r"^  ([a-z]+) MODEL ", out, re.M)))
    check(len(commands) > 10, f"the commands in mblin --help: {commands}")
    tried = 0
    for ci, cmd in enumerate(commands):
        rc, hout, herr = run(cmd, "--help")
        opts = sorted(set(re.findall(r"(--[a-z][a-z0-9-]*) [A-Z]", hout)))
        for opt in opts[ci % 5::5] if SANITIZED else opts:
            # (options are read before the model: a file that does not exist keeps every run short)
            rc, out, err = run(cmd, os.path.join(d, "absent.yaml"), opt, "nan", cwd=d)
            if rc == 2 and re.search(r"\bnumber|integer\b", err) and "'nan'" in err:
                tried += 1
                check(opt in err, f"mblin {cmd} {opt} nan: the message names the option: {err.strip()!r}")
    check(tried > (6 if SANITIZED else 30), f"number options tried: {tried}")
    rc, out, err = run("simulate", MODEL, "--psd", "x", "--psd-segment", "nan")
    check(rc == 2 and "--psd-segment" in err, f"--psd-segment nan: {err.strip()!r}")

sys.exit(finish("test_sim_input_cli"))
