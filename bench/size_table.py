#!/usr/bin/env python3
"""Every size benchmark of issue 31 in one run, for one or several builds (before / after):
whole processes under /usr/bin/time (CPU = user + sys, peak RSS), OPENBLAS_NUM_THREADS=1, the
median of RUNS runs per build and size (user time beside it: the system time is mostly the
kernel clearing fresh pages, whose speed varies between runs on a virtual machine) (builds interleaved run by run, so that the machine's load
falls on both alike), the load average before each case, and the growth exponent p of CPU time ~
n^p (least squares over the sizes each build finished). Prints one markdown table.

usage: python3 bench/size_table.py BUILD [BUILD...] [--runs 3] [--cases dae,fourbar,beam,beam3,penalty]
       [--dae 1000,3000,10000] [--fourbar 1000,10000] [--beam 1000,10000] [--beam3 100,1000]
       [--penalty 10,50,100] [--timeout 300] [--skip-slow BUILD=SECONDS]

cases (n is the number of coordinates):
  dae      the flexible double pendulum as a `model: dae` file (examples/flexible_pendulum.py
           --np NP, n = 6 NP + 12), `mblin linearize --nev 20 --json --no-matrices`
  fourbar  the N-loop four-bar (examples/fourbar.py N, n = 2 N + 3), one-shot
           `mblin linearize --json --no-matrices`
  beam     the same pendulum of two planar beam bodies on the structured term
           (BUILD/bench/bench_flex NP, 20 lowest)
  beam3    the spatial beam pendulum (BUILD/bench/bench_beam3 NP, 20 lowest, n = 2 (7 + 6 (NP + 1)))
  penalty  the dae pendulum by `--method penalty` (NP elements per link), default spectrum
A run that exceeds --timeout seconds is reported as "> T s" and the build skips the larger sizes
of that case.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from large_models import exponent  # noqa: E402  (the least-squares growth exponent)


def run_timed(cmd, timeout):
    """(cpu seconds, peak RSS MiB, user seconds) of one run, or (None, message)."""
    try:
        p = subprocess.run(["/usr/bin/time", "-f", "TIME %U %S %M"] + cmd, capture_output=True,
                           text=True, timeout=timeout, cwd=ROOT,
                           env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))
    except subprocess.TimeoutExpired:
        return None, "> %d s" % timeout
    m = re.search(r"TIME ([0-9.]+) ([0-9.]+) ([0-9]+)", p.stderr)
    if p.returncode != 0 or not m:
        tail = [l for l in p.stderr.strip().split("\n") if l and not l.startswith("TIME")]
        return None, "failed: " + (tail[-1] if tail else "exit %d" % p.returncode)
    return (float(m.group(1)) + float(m.group(2)), int(m.group(3)) / 1024.0, float(m.group(1))), ""


def loadavg():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def case_commands(case, size, build, tmp):
    """(n, command) of one case at one size for one build."""
    mblin = os.path.join(build, "mblin")
    if case in ("dae", "penalty"):
        path = os.path.join(tmp, "flex_%d.yaml" % size)
        if not os.path.exists(path):
            subprocess.run([sys.executable, "examples/flexible_pendulum.py", "--np", str(size), "-o",
                            path], check=True, cwd=ROOT)
        if case == "dae":
            return 6 * size + 12, [mblin, "linearize", path, "--nev", "20", "--json", "--no-matrices"]
        return 6 * size + 12, [mblin, "linearize", path, "--method", "penalty", "--json", "--no-matrices"]
    if case == "fourbar":
        path = os.path.join(tmp, "fourbar_%d.yaml" % size)
        if not os.path.exists(path):
            with open(path, "w") as f:
                subprocess.run([sys.executable, "examples/fourbar.py", str(size)], stdout=f, check=True,
                               cwd=ROOT)
        return 2 * size + 3, [mblin, "linearize", path, "--json", "--no-matrices"]
    if case == "beam":
        return 6 * size + 12, [os.path.join(build, "bench", "bench_flex"), str(size)]
    if case == "beam3":
        return 2 * (7 + 6 * (size + 1)), [os.path.join(build, "bench", "bench_beam3"), str(size)]
    raise ValueError(case)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("builds", nargs="+")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--cases", default="dae,fourbar,beam,beam3,penalty")
    ap.add_argument("--dae", default="1000,3000,10000")
    ap.add_argument("--fourbar", default="1000,10000")
    ap.add_argument("--beam", default="1000,10000")
    ap.add_argument("--beam3", default="100,1000")
    ap.add_argument("--penalty", default="10,50,100")
    ap.add_argument("--timeout", type=int, default=300)
    a = ap.parse_args()
    builds = [os.path.abspath(b) for b in a.builds]
    print("| case | size | n | load avg | " + " | ".join(
        "%s: CPU [s] (user), peak [MiB]" % os.path.basename(os.path.dirname(b)) for b in builds) + " |")
    print("|---|---|---|---|" + "---|" * len(builds))
    with tempfile.TemporaryDirectory() as tmp:
        for case in a.cases.split(","):
            sizes = [int(s) for s in getattr(a, case).split(",") if s]
            done = {b: [] for b in builds}  # (n, cpu) of finished sizes
            stopped = {b: False for b in builds}
            for size in sizes:
                la = loadavg()
                res = {b: [] for b in builds}
                msg = {b: "" for b in builds}
                n = None
                for _ in range(a.runs):
                    for b in builds:
                        if stopped[b]:
                            continue
                        n, cmd = case_commands(case, size, b, tmp)
                        r, m = run_timed(cmd, a.timeout)
                        if r is None:
                            msg[b] = m
                            stopped[b] = True
                        else:
                            res[b].append(r)
                cells = []
                for b in builds:
                    if res[b] and not msg[b]:
                        cpu = statistics.median(r[0] for r in res[b])
                        rss = statistics.median(r[1] for r in res[b])
                        user = statistics.median(r[2] for r in res[b])
                        done[b].append((n, cpu, user))
                        cells.append("%.3g (user %.3g), %.0f" % (cpu, user, rss))
                    else:
                        cells.append(msg[b] or "skipped")
                print("| %s | %d | %s | %s | %s |" % (case, size, n, la, " | ".join(cells)), flush=True)
            print("| %s growth | | | | %s |" % (case, " | ".join(
                "n^%.2f (user n^%.2f)" % (exponent([d[0] for d in done[b]], [d[1] for d in done[b]]),
                                          exponent([d[0] for d in done[b]], [d[2] for d in done[b]]))
                if len(done[b]) > 1 else "" for b in builds)), flush=True)


if __name__ == "__main__":
    main()
