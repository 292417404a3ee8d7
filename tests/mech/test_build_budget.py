#!/usr/bin/env python3
"""Issue 30, item 17 (model building): --mem-budget bounds building a model, not only its
linearization. Two planar beams of 500 elements: the estimate (docs/mechanism-reference.md, "Size
of a model") is 1000 x MBL_MECH_BEAM_BYTES = 10 kB = 0.00931 GiB and 3 (501) + 3 = 1506
coordinates per beam. Under --mem-budget 5M the tool refuses at link2's `elements` (file, line,
column) with the estimate and exit 1; under 64M the same model is built and linearized; 1e6
elements per beam are refused under the default budget (2 GiB) before anything is built. Before:
the model was built whatever the budget (1e6 elements: 3 GB in 30 s) and only the linearization
was refused. `sweep` and `simulate` build under their --mem-budget the same way.
Usage: test_build_budget.py MBLIN
"""
import os
import subprocess
import sys
import tempfile

B = sys.argv[1]
TEXT = """model: mechanism
space: planar
parameters: {l: 4}
ground: {markers: {o: {}}}
bodies:
  link1: {type: beam, length: l, elements: NE, E: 1e8, rho: 1500, radius: 0.15, angle: -pi/2,
          markers: {a1: {node: 1}, p1: {s: l}}}
  link2: {type: beam, length: l, elements: NE, E: 1e8, rho: 1500, radius: 0.15, position: [0, -4],
          angle: -pi/2, markers: {a2: {node: 1}}}
joints: {pin1: {type: revolute, i: a1, j: o}, pin2: {type: revolute, i: a2, j: p1}}
forces: {weight: {type: gravity, g: [0, -9.81]}}
"""
fails = 0


def expect(name, ok, detail):
    global fails
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else ": " + detail))
    fails += not ok


with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "beams.yaml")
    with open(path, "w") as f:
        f.write(TEXT.replace("NE", "500"))
    r = subprocess.run([B, "linearize", path, "--mem-budget", "5M"], capture_output=True, text=True)
    est, bud = 1000 * 10e3 / 2**30, 5 * 2**20 / 2**30
    want = [path + ":8:44: body 'link2': 500 beam elements",
            "(1000 elements, 3012 coordinates, 72000 nonzeros in their element matrices)",
            "need about %.3g GiB to build, over the memory budget of %.3g GiB (--mem-budget)" % (est, bud)]
    expect("refused over the budget", r.returncode == 1 and all(w in r.stderr for w in want) and not r.stdout,
           "rc %d: %s" % (r.returncode, r.stderr))
    expect("one line", r.stderr.count("\n") == 1, r.stderr)
    r = subprocess.run([B, "linearize", path, "--mem-budget", "64M", "--nev", "2", "--json", "--no-matrices"],
                       capture_output=True, text=True)
    expect("built under the budget", r.returncode == 0 and '"eigenvalues"' in r.stdout, r.stderr)
    for cmd in (["sweep", path, "--param", "l=4:5:2"], ["simulate", path, "--t-end", "0.1"]):
        r = subprocess.run([B] + cmd + ["--mem-budget", "5M"], capture_output=True, text=True)
        expect(cmd[0] + " refused over the budget before building",
               r.returncode == 1 and all(w in r.stderr for w in want) and not r.stdout,
               "rc %d: %s" % (r.returncode, r.stderr))
    with open(path, "w") as f:
        f.write(TEXT.replace("NE", "1e6"))
    r = subprocess.run([B, "linearize", path], capture_output=True, text=True)
    expect("1e6 elements refused under the default budget",
           r.returncode == 1 and "body 'link1': 1000000 beam elements" in r.stderr
           and "over the memory budget of 2 GiB" in r.stderr, r.stderr)
sys.exit(1 if fails else 0)
