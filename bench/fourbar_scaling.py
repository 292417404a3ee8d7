#!/usr/bin/env python3
"""End-to-end scaling of the N-loop four-bar (source 001 Sec. 4.1) at the equation level:
parse, formulate, equilibrium, linearize and eigenvalues, as one `mblin linearize` process.
Reports the median (and min, max) wall time and peak resident memory of RUNS runs per N,
measured with GNU time, and the re-linearization time of the compiled N = 20 model
(bench_relin). DESIGN.md sec. 8 targets: N = 10^4 under 2 s and 1 GB, linear growth;
N = 20 re-linearization under 50 us.

usage: bench/fourbar_scaling.py BUILD_DIR [--runs 5] [--sizes 100,1000,10000]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(here)


def measure(cmd):
    p = subprocess.run(["/usr/bin/time", "-f", "%e %M"] + cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit("failed: %s\n%s" % (" ".join(cmd), p.stderr))
    wall, kb = p.stderr.strip().split("\n")[-1].split()
    return float(wall), int(kb) / 1024.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--sizes", default="100,1000,10000")
    a = ap.parse_args()
    mblin = os.path.join(a.build, "mblin")
    print("| N | coordinates | wall time median [s] (min-max) | peak memory median [MiB] | time / N [us] |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for N in [int(x) for x in a.sizes.split(",")]:
            path = os.path.join(tmp, "fourbar_%d.yaml" % N)
            with open(path, "w") as f:
                subprocess.run([sys.executable, os.path.join(root, "examples", "fourbar.py"), str(N)], stdout=f, check=True)
            measure([mblin, "linearize", path, "--json"])  # warm-up
            t, m = [], []
            for _ in range(a.runs):
                w, kb = measure([mblin, "linearize", path, "--json"])
                t.append(w)
                m.append(kb)
            print("| %d | %d | %.3f (%.3f-%.3f) | %.0f | %.0f |" % (N, 2 * N + 3, statistics.median(t), min(t), max(t),
                                                             statistics.median(m), 1e6 * statistics.median(t) / N))
            sys.stdout.flush()
    relin = os.path.join(a.build, "bench", "bench_relin")
    if os.path.exists(relin):
        p = subprocess.run([relin, os.path.join(root, "examples", "fourbar_N20.yaml"), "5000"], capture_output=True,
                           text=True)
        print()
        print(p.stdout.strip() or p.stderr.strip())


if __name__ == "__main__":
    main()
