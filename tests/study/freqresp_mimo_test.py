#!/usr/bin/env python3
"""mblin freqresp without --from/--to: every input to every output (issue 33, item 4).

The three-mass chain tests/study/chain3_mimo.yaml (3 forces, 2 displacements): each of the 6
channels of mblin's transfer matrix against SciPy's scipy.signal.freqresp of that SISO channel of
the state space (A, B, C, D) printed by `mblin linearize --json`, and against NumPy's direct
solve C (i w I - A)^-1 B + D; the singular values against numpy.linalg.svd of that matrix; the
--json output, the files of -o DIR (CSV, SVG), and --from/--to alone refused.

usage: freqresp_mimo_test.py MBLIN (python3 with NumPy and SciPy)"""
import csv
import io
import json
import os
import subprocess
import sys
import tempfile
import warnings
import xml.etree.ElementTree as ET

import numpy as np
import scipy.signal

MBLIN = sys.argv[1]
warnings.simplefilter("ignore", scipy.signal.BadCoefficients)  # the order-6 polynomials SciPy forms
MODEL = "tests/study/chain3_mimo.yaml"
fails = []


def check(ok, what):
    if not ok:
        fails.append(what)
        print("FAIL:", what)


def run(*args):
    return subprocess.run([MBLIN, *args], capture_output=True, text=True, timeout=120)


lin = json.loads(run("linearize", MODEL, "--json").stdout)
A, B, C, D = (np.array(lin["ss"][k], dtype=float) for k in "ABCD")
ins, outs = lin["inputs"], lin["outputs"]
check(B.shape == (6, 3) and C.shape == (2, 6), "the model is 3 inputs to 2 outputs: %s %s" % (B.shape, C.shape))
W = "0.5:200:40"
w = np.exp(np.linspace(np.log(0.5), np.log(200), 40))
w[-1] = 200

r = run("freqresp", MODEL, "--w", W)
check(r.returncode == 0, "freqresp MIMO: " + r.stderr)
rows = list(csv.DictReader(io.StringIO(r.stdout)))
check(len(rows) == 40 * 6, "rows %d, want 40 x 6" % len(rows))
G = np.zeros((40, 2, 3), dtype=complex)
for x in rows:
    k = int(np.argmin(abs(w - float(x["w_rad_s"]))))
    G[k, outs.index(x["output"]), ins.index(x["input"])] = float(x["re"]) + 1j * float(x["im"])

worst_scipy = worst_np = 0.0
for i in range(3):
    for o in range(2):
        _, h = scipy.signal.freqresp(scipy.signal.StateSpace(A, B[:, i:i + 1], C[o:o + 1, :], D[o:o + 1, i:i + 1]), w)
        worst_scipy = max(worst_scipy, float(np.max(abs(G[:, o, i] - h) / abs(h))))
for k, wk in enumerate(w):
    g = C @ np.linalg.solve(1j * wk * np.eye(6) - A, B) + D
    worst_np = max(worst_np, float(np.max(abs(G[k] - g)) / np.max(abs(g))))
# SciPy goes through the transfer function's polynomials (order 6): a few digits fewer
check(worst_scipy < 1e-7, "against scipy.signal.freqresp: %.3g relative" % worst_scipy)
check(worst_np < 1e-12, "against numpy's solve: %.3g relative" % worst_np)
print("MIMO G: %.2g relative to SciPy, %.2g to NumPy's solve" % (worst_scipy, worst_np))

# the one pair of --from/--to is the same numbers as the matrix's entry
r1 = run("freqresp", MODEL, "--from", "F2", "--to", "x3", "--w", W)
one = list(csv.DictReader(io.StringIO(r1.stdout)))
g1 = np.array([float(x["re"]) + 1j * float(x["im"]) for x in one])
check(r1.returncode == 0 and len(one) == 40 and np.max(abs(g1 - G[:, 1, 1]) / abs(g1)) < 1e-14, "SISO F2 -> x3")

# --json: the matrix, and the singular values against numpy.linalg.svd
rj = run("freqresp", MODEL, "--w", W, "--json")
check(rj.returncode == 0, "--json: " + rj.stderr)
j = json.loads(rj.stdout)
check(j["inputs"] == ins and j["outputs"] == outs and len(j["w_rad_s"]) == 40 and len(j["response"]) == 6, "json keys")
sv_worst = 0.0
for k in range(40):
    s = np.linalg.svd(G[k], compute_uv=False)
    sv_worst = max(sv_worst, float(np.max(abs(np.array(j["singular_values"][k]) - s) / s[0])))
check(sv_worst < 1e-13, "singular values against numpy.linalg.svd: %.3g" % sv_worst)
for p in j["response"]:
    g = np.array(p["re"]) + 1j * np.array(p["im"])
    check(np.max(abs(g - G[:, outs.index(p["output"]), ins.index(p["input"])])) == 0, "json %s -> %s" % (p["input"], p["output"]))
print("singular values: %.2g relative to numpy.linalg.svd" % sv_worst)

# -o DIR: the files, a Bode plot with the 6 pairs (2 polylines each) and the singular values' plot
with tempfile.TemporaryDirectory() as d:
    ro = run("freqresp", MODEL, "--w", W, "-o", d)
    check(ro.returncode == 0, "-o: " + ro.stderr)
    for f in ("freqresp.csv", "freqresp.json", "bode.svg", "singular_values.csv", "sigma.svg"):
        check(os.path.getsize(os.path.join(d, f)) > 0, "missing " + f)
    ns = "{http://www.w3.org/2000/svg}"
    check(len(ET.parse(os.path.join(d, "bode.svg")).getroot().findall(ns + "polyline")) == 12, "bode: 6 pairs")
    check(len(ET.parse(os.path.join(d, "sigma.svg")).getroot().findall(ns + "polyline")) == 2, "sigma: 2 values")
    sv = list(csv.DictReader(open(os.path.join(d, "singular_values.csv"))))
    check(len(sv) == 40 and float(sv[3]["sigma1"]) == j["singular_values"][3][0], "singular_values.csv")

# --from without --to: a usage error naming both
rb = run("freqresp", MODEL, "--from", "F1", "--w", W)
check(rb.returncode == 2 and "--from INPUT and --to OUTPUT together" in rb.stderr, "--from alone: " + rb.stderr)

print("FAILED: %d" % len(fails) if fails else "ok")
sys.exit(1 if fails else 0)
