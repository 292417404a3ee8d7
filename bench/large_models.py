#!/usr/bin/env python3
"""Large models without dense matrices: `mblin linearize` end to end (parse, formulate, operating
point, linearization, eigenvalues) on N uncoupled oscillators (examples/oscillators.py) and the
flexible double pendulum (examples/flexible_pendulum.py), median wall time, CPU time (user + sys)
and peak resident memory of several runs measured with /usr/bin/time -v, OPENBLAS_NUM_THREADS=1;
then the growth exponent p of time ~ size^p (least squares over the sizes of each case).

usage: python3 bench/large_models.py BUILD_DIR [--runs 3] [--cases whole,partial,flex]
       [--whole 500,1000,2000] [--partial 5000,20000,100000] [--flex 50,200,1000] [--at-given-flex]
  whole    oscillators, the whole spectrum (the default dense path: it fits the 2 GiB budget)
  partial  oscillators, the 20 lowest eigenvalues (the default switches by itself above ~3500 DOF)
  flex     flexible double pendulum, n_p elements per link (n = 6 n_p + 12), --nev 20
"""
import argparse
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def measure(cmd):
    p = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, text=True,
                       env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))
    if p.returncode != 0:
        last = p.stderr.strip().split("\n")
        msg = next((l for l in last if l.startswith("mblin:")), last[0] if last else "?")
        return None, msg
    e = p.stderr
    def field(name):
        return re.search(re.escape(name) + r": (.*)", e).group(1).strip()
    wall = field("Elapsed (wall clock) time (h:mm:ss or m:ss)")
    parts = [float(x) for x in wall.split(":")]
    secs = sum(x * 60 ** (len(parts) - 1 - i) for i, x in enumerate(parts))
    cpu = float(field("User time (seconds)")) + float(field("System time (seconds)"))
    rss = int(field("Maximum resident set size (kbytes)")) / 1024.0
    return (secs, cpu, rss, p.stdout), ""


def exponent(sizes, times):
    if len(sizes) < 2:
        return float("nan")
    xs = [math.log(s) for s in sizes]
    ys = [math.log(t) for t in times]
    mx, my = statistics.mean(xs), statistics.mean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--cases", default="whole,partial,flex")
    ap.add_argument("--whole", default="500,1000,2000")
    ap.add_argument("--partial", default="5000,20000,100000")
    ap.add_argument("--flex", default="50,200,1000")
    ap.add_argument("--at-given-flex", action="store_true",
                    help="flex at the initial configuration (--at given) instead of the equilibrium")
    a = ap.parse_args()
    mblin = os.path.join(a.build, "mblin")
    tmp = tempfile.mkdtemp(prefix="mblin_large_")
    print("| case | size | n | median wall [s] | median CPU [s] | median peak RSS [MiB] | runs | spectrum |")
    print("|---|---|---|---|---|---|---|---|")
    for case in a.cases.split(","):
        sizes = [int(x) for x in getattr(a, case).split(",") if x]
        done_sizes, done_times = [], []
        for s in sizes:
            path = os.path.join(tmp, "%s_%d.yaml" % (case, s))
            if case == "flex":
                subprocess.run([sys.executable, os.path.join(ROOT, "examples/flexible_pendulum.py"), "--np", str(s),
                                "-o", path], check=True, capture_output=True)
                n = 6 * s + 12
                extra = ["--nev", "20"] + (["--at", "given"] if a.at_given_flex else [])
            else:
                with open(path, "w") as f:
                    subprocess.run([sys.executable, os.path.join(ROOT, "examples/oscillators.py"), str(s)],
                                   stdout=f, check=True)
                n = s
                extra = [] if case == "whole" else ["--nev", "20"]
            rows, msg = [], ""
            for _ in range(a.runs):
                r, msg = measure([mblin, "linearize", path, "--json", "--no-matrices"] + extra)
                if r is None:
                    break
                rows.append(r)
            if not rows:
                print("| %s | %d | %d | failed: %s | | | 0 | |" % (case, s, n, msg.replace("|", "/")))
                continue
            spec = re.search(r'"spectrum": \{"partial": (\w+), "count": (\d+), "of": (\d+)', rows[0][3])
            spec_s = "%s of %s%s" % (spec.group(2), spec.group(3), " (partial)" if spec.group(1) == "true" else "")
            wall = statistics.median(r[0] for r in rows)
            cpu = statistics.median(r[1] for r in rows)
            rss = statistics.median(r[2] for r in rows)
            print("| %s | %d | %d | %.2f | %.2f | %.0f | %d | %s |" % (case, s, n, wall, cpu, rss, len(rows), spec_s),
                  flush=True)
            done_sizes.append(n)
            done_times.append(cpu)
            os.unlink(path)
        if len(done_sizes) >= 2:
            print("| %s | growth | | | CPU ~ n^%.2f | | | |" % (case, exponent(done_sizes, done_times)), flush=True)
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
