#!/usr/bin/env python3
"""The N-loop four-bar as `model: mechanism` (examples/mech/fourbar.py: bodies and revolute joints,
3 coordinates per bar) against its `model: dae` twin (examples/fourbar.py: 2 coordinates per moving
point), whole `mblin linearize --json` processes: median wall time, CPU time (user + system) and
peak memory of RUNS runs per N (GNU time, OPENBLAS_NUM_THREADS=1), the mechanism / dae ratios and
the growth exponents between successive N (log t2/t1 / log N2/N1, on CPU time).
Several builds may be given (before / after): each is measured on the same files.

usage: bench/mech_vs_dae.py BUILD_DIR [BUILD_DIR...] [--runs 3] [--sizes 1000,2000,10000]
"""
import argparse
import math
import os
import statistics
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(here)


def measure(cmd):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    p = subprocess.run(["/usr/bin/time", "-f", "%e %U %S %M"] + cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        return None
    wall, user, sys_, kb = p.stderr.strip().split("\n")[-1].split()
    return float(wall), float(user) + float(sys_), int(kb) / 1024.0


def median_of(cmd, runs):
    rs = [measure(cmd) for _ in range(runs)]
    if any(r is None for r in rs):
        return None
    return tuple(statistics.median(r[i] for r in rs) for i in range(3))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("builds", nargs="+")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--sizes", default="1000,2000,10000")
    a = ap.parse_args()
    sizes = [int(x) for x in a.sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        files = {}
        for N in sizes:
            for kind, gen in (("mech", "examples/mech/fourbar.py"), ("dae", "examples/fourbar.py")):
                path = os.path.join(tmp, "%s_%d.yaml" % (kind, N))
                with open(path, "w") as f:
                    subprocess.run([sys.executable, os.path.join(root, gen), str(N)], stdout=f, check=True)
                files[kind, N] = path
        for b in a.builds:
            mblin = os.path.join(b, "mblin")
            print("build %s" % b)
            print("| N | mechanism wall / CPU [s], MiB | dae wall / CPU [s], MiB | CPU ratio | growth mech / dae |")
            print("|---|---|---|---|---|")
            prev = None
            for N in sizes:
                r = {k: median_of([mblin, "linearize", "--json", files[k, N]], a.runs) for k in ("mech", "dae")}
                cell = lambda x: "%.2f / %.2f, %.0f" % x if x else "failed"
                ratio = "%.2f" % (r["mech"][1] / r["dae"][1]) if r["mech"] and r["dae"] else "-"
                grow = "-"
                if prev:
                    gs = []
                    for k in ("mech", "dae"):
                        if r[k] and prev[1][k]:
                            gs.append("N^%.2f" % (math.log(r[k][1] / prev[1][k][1]) / math.log(N / prev[0])))
                        else:
                            gs.append("-")
                    grow = " / ".join(gs)
                print("| %d | %s | %s | %s | %s |" % (N, cell(r["mech"]), cell(r["dae"]), ratio, grow))
                sys.stdout.flush()
                prev = (N, r)


if __name__ == "__main__":
    main()
