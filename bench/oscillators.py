#!/usr/bin/env python3
"""Whole-spectrum timing of N uncoupled oscillators (the symmetric-definite eigen path), or with
--chain of a fixed-free chain of N equal masses m and springs k (one coupled block; frequencies
2 sqrt(k/m) sin((2j-1) pi / (2(2N+1)))).

Writes a `model: dae` file with N coordinates x_i, T = sum 0.5 m_i der(x_i)^2,
V = sum 0.5 k_i x_i^2 (distinct k_i, so distinct frequencies sqrt(k_i/m_i)), runs
`mblin linearize` on it RUNS times under GNU time with OPENBLAS_NUM_THREADS=1 and prints the
median (min, max) wall time and peak memory. It also checks every frequency against the closed
form sqrt(k_i / m_i) / (2 pi) from the JSON output of one run.

usage: bench/oscillators.py BUILD_DIR [--n 2000] [--runs 3] [--chain] [--write FILE]
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile


def model_text(n):
    """m_i = 1 + (i mod 7) / 7, k_i = 10 (1 + i / n): distinct k_i / m_i."""
    m = [1.0 + (i % 7) / 7.0 for i in range(n)]
    k = [10.0 * (1.0 + i / n) for i in range(n)]
    lines = ["# %d uncoupled oscillators (bench/oscillators.py)" % n, "model: dae",
             "name: %d uncoupled oscillators" % n, "coordinates:"]
    lines += ["  x%d: 0" % i for i in range(n)]
    t = " + ".join("%.17g*der(x%d)^2" % (0.5 * m[i], i) for i in range(n))
    v = " + ".join("%.17g*x%d^2" % (0.5 * k[i], i) for i in range(n))
    lines += ['kinetic_energy: "%s"' % t, 'potential_energy: "%s"' % v,
              "linearize:", "  at: given"]
    return "\n".join(lines) + "\n", m, k


def chain_text(n, m=1.5, k=40.0):
    lines = ["# fixed-free chain of %d masses (bench/oscillators.py --chain)" % n, "model: dae",
             "name: %d-mass chain" % n, "coordinates:"]
    lines += ["  x%d: 0" % i for i in range(n)]
    t = " + ".join("%.17g*der(x%d)^2" % (0.5 * m, i) for i in range(n))
    v = " + ".join(["%.17g*x0^2" % (0.5 * k)] + ["%.17g*(x%d - x%d)^2" % (0.5 * k, i, i - 1) for i in range(1, n)])
    lines += ['kinetic_energy: "%s"' % t, 'potential_energy: "%s"' % v, "linearize:", "  at: given"]
    want = [2 * math.sqrt(k / m) * math.sin((2 * j - 1) * math.pi / (2 * (2 * n + 1))) / (2 * math.pi)
            for j in range(1, n + 1)]
    return "\n".join(lines) + "\n", want


def measure(cmd, env):
    p = subprocess.run(["/usr/bin/time", "-f", "%e %M"] + cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        raise SystemExit("failed: %s\n%s" % (" ".join(cmd), p.stderr))
    wall, kb = p.stderr.strip().split("\n")[-1].split()
    return float(wall), int(kb) / 1024.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--chain", action="store_true", help="a coupled fixed-free chain instead")
    ap.add_argument("--write", help="also keep the model file here")
    a = ap.parse_args()
    mblin = os.path.join(a.build, "mblin")
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    if a.chain:
        text, want = chain_text(a.n)
    else:
        text, m, k = model_text(a.n)
        want = sorted(math.sqrt(k[i] / m[i]) / (2 * math.pi) for i in range(a.n))
    with tempfile.TemporaryDirectory() as tmp:
        path = a.write or os.path.join(tmp, "osc.yaml")
        with open(path, "w") as f:
            f.write(text)
        times, mems = [], []
        for _ in range(a.runs):
            t, mem = measure([mblin, "linearize", path], env)
            times.append(t)
            mems.append(mem)
        p = subprocess.run([mblin, "linearize", "--json", path], capture_output=True, text=True, env=env)
        if p.returncode != 0:
            raise SystemExit(p.stderr)
        out = json.loads(p.stdout)
    got = sorted(e["freq_hz"] for e in out["eigenvalues"] if e["im"] > 0)
    err = max(abs(g - w) / w for g, w in zip(got, want)) if len(got) == len(want) else float("inf")
    print("%s N = %d: wall %.2f s median (%.2f-%.2f), peak %.0f MiB, solver %s, max rel freq error %.2g"
          % ("chain" if a.chain else "oscillators", a.n, statistics.median(times), min(times), max(times), statistics.median(mems),
             out.get("eigen_solver", "?"), err))
    return 0 if err < 1e-12 else 1


if __name__ == "__main__":
    sys.exit(main())
