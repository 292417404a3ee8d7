#!/usr/bin/env python3
"""The velocity transformation of a relative-coordinate mechanism under the memory budget (issue 69,
found measuring the 2000-loop four-bar in relative coordinates). `linearize --json` reports B
(rows x n), Bdot and the n planes dB/dq of a `coordinates: relative` or URDF model, dense: for the
four-bar's 12,003 rows and 4001 coordinates that is 1.9e11 numbers. Before, the tool filled 0.4 GB
of B's entries and then met an allocation it could not make: the key was silently missing, after
1-2 s of system time and 508 MB. Now the size is checked first, against --mem-budget, and the key
says why it is left out.

A 30-link URDF chain (bench/chain_urdf.py: revolute joints, one free coordinate each) has 6 x 30 =
180 rows and n = 30: B, Bdot and dB/dq are 8 (180 x 30) (30 + 2) bytes, the entries' nodes
4 (180 x 30) and the kinematics' Jacobian 4 (7 x 30) 30 (seven kinematic items per spatial body):
1,429,200 bytes, over a budget of 1 MiB and under the default 2 GiB.
Usage: vtrans_budget_test.py MBLIN
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
from chain_urdf import chain  # noqa: E402

try:
    import jsonschema
except ImportError as e:
    print("vtrans_budget_test: FAILED: python3-jsonschema is missing for %s (%s): make setup installs it"
          % (sys.executable, e), file=sys.stderr)
    sys.exit(1)
SCHEMA = json.load(open(os.path.join(HERE, "..", "..", "docs", "schema", "linearize.json")))

B = sys.argv[1]
fails = 0


def expect(name, ok, detail):
    global fails
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else ": " + detail))
    fails += not ok


need = 8 * 180 * 30 * 32 + 4 * 180 * 30 + 4 * (7 * 30) * 30
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "chain30.urdf")
    with open(path, "w") as f:
        f.write(chain(30))
    r = subprocess.run([B, "linearize", path, "--json", "--mem-budget", "1M"], capture_output=True, text=True)
    o = json.loads(r.stdout) if r.returncode == 0 else {}
    vt = o.get("velocity_transformation", {})
    want = "%s: the velocity transformation B (180 x 30) and its 30 planes dB/dq need about %.3g GiB, over the " \
           "memory budget of %.3g GiB (mem_budget)" % (path, need / 2**30, 2**20 / 2**30)
    expect("left out over the budget, saying why", r.returncode == 0 and vt == {"omitted": want},
           "rc %d: %s %s" % (r.returncode, json.dumps(vt)[:300], r.stderr))
    try:
        jsonschema.validate(o, SCHEMA)
        expect("the JSON with the reason against docs/schema/linearize.json", True, "")
    except jsonschema.ValidationError as e:
        expect("the JSON with the reason against docs/schema/linearize.json", False, str(e)[:400])
    expect("the linear model itself is there", len(o.get("eigenvalues", [])) == 60 and "ss" in o,
           "%d eigenvalues" % len(o.get("eigenvalues", [])))
    r = subprocess.run([B, "linearize", path, "--json"], capture_output=True, text=True)
    o = json.loads(r.stdout) if r.returncode == 0 else {}
    vt = o.get("velocity_transformation", {})
    try:
        jsonschema.validate(o, SCHEMA)
        expect("the whole JSON against the schema", True, "")
    except jsonschema.ValidationError as e:
        expect("the whole JSON against the schema", False, str(e)[:400])
    ok = len(vt.get("B", [])) == 180 and all(len(row) == 30 for row in vt["B"]) and len(vt.get("dB_dq", [])) == 30
    expect("whole under the default budget", ok, "rc %d: keys %s" % (r.returncode, sorted(vt)))
    out = os.path.join(d, "out")
    r = subprocess.run([B, "linearize", path, "-o", out, "--mem-budget", "1M"], capture_output=True, text=True)
    files = sorted(os.listdir(out)) if os.path.isdir(out) else []
    text = open(os.path.join(out, "vt_omitted.txt")).read() if "vt_omitted.txt" in files else ""
    expect("-o: vt_omitted.txt instead of the vt_ matrices", r.returncode == 0 and text == want + "\n" and
           "A.mtx" in files and not any(x.startswith("vt_B") or x.startswith("vt_dB") for x in files),
           "rc %d, files %s, %r, %s" % (r.returncode, files, text, r.stderr))
    r = subprocess.run([B, "linearize", path, "-o", out], capture_output=True, text=True)
    files = sorted(os.listdir(out)) if os.path.isdir(out) else []
    expect("-o: the vt_ matrices under the default budget (the earlier reason removed)",
           r.returncode == 0 and "vt_dBdq.mtx" in files and "vt_omitted.txt" not in files,
           "rc %d, files %s" % (r.returncode, files))
sys.exit(1 if fails else 0)
