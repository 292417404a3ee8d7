#!/usr/bin/env python3
"""Command-line regressions found by the fuzz targets of tests/fuzz (issue 30): each input that showed
a bug, run through the real tool; a refusal is one line "mblin: ..." naming the file and line."""
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


HEADER = "t,branch,re,im,freq_hz,damping_ratio,mac\n"
# the two branches of the slider-pendulum's modes (examples/slider_pendulum.yaml, source 003 Table
# 3.7: 0.797303 and 3.081658 rad/s) at two values of a swept parameter
GOOD = ("0,1,0,0.797303,0.12689,0,1\n0,2,0,3.081658,0.49046,0,1\n"
        "1,1,0,0.797303,0.12689,0,1\n1,2,0,3.081658,0.49046,0,1\n")

with tempfile.TemporaryDirectory() as d:
    svg, csv = os.path.join(d, "f.svg"), os.path.join(d, "s.csv")

    def along(text):
        with open(csv, "w") as f:
            f.write(text)
        return run("simulate", "examples/slider_pendulum.yaml", "--t-end", "2", "--linearize-every", "1",
                   "--modes-out", os.path.join(d, "m.csv"), "--svg", svg, "--sweep", csv)

    # simulate --sweep FILE.csv: the branch column was converted to int unchecked (fuzz_cli_options:
    # UBSan "1e+300 is outside the range of representable values of type 'int'"; the plain build
    # drew nothing and exited 0). The data row k of a sweep's CSV has a branch from 1 to k.
    rc, out, err = along(HEADER + GOOD)
    check(rc == 0 and "quasi-static sweep" in open(svg).read(), "a sweep's CSV: %d %s" % (rc, err))
    for row, line, what in [("0,1e300,0,1,1,0,1\n", 2, "1e+300"), ("0,nan,0,1,1,0,1\n", 2, "nan"),
                            ("0,1.5,0,1,1,0,1\n", 2, "1.5"), ("0,0,0,1,1,0,1\n", 2, "number: 0"),
                            (GOOD + "2,9,0,1,1,0,1\n", 6, "number: 9"), ("0,-3,0,1,1,0,1\n", 2, "-3")]:
        rc, out, err = along(HEADER + row)
        check(rc == 1 and err.count("\n") == 1 and err.startswith("mblin: ") and "s.csv:%d:" % line in err
              and "branch" in err and what in err, "branch %r: %d %s" % (row, rc, err))
print("%d failed" % failed)
sys.exit(1 if failed else 0)
