#!/usr/bin/env python3
"""The N-loop four-bar as `model: mechanism` (examples/mech/fourbar.py: bodies and revolute joints,
3 coordinates per bar) against its `model: dae` twin (examples/fourbar.py: 2 coordinates per moving
point), whole `mblin linearize --json` processes: median wall time, CPU time (user + system, from
the child's rusage) and peak memory of RUNS runs per N, the two forms interleaved run by run
(OPENBLAS_NUM_THREADS=1), the mechanism / dae ratios and the growth exponents between successive N
(log t2/t1 / log N2/N1, on CPU time). Several builds may be given (before / after): each is
measured on the same files.

--bicycle: also the nonlinear Whipple bicycle (`mblin linearize examples/mech/whipple_bicycle.yaml`)
against `mblin --version` (the process's start and exit alone), interleaved in the same run: CPU
medians and their ratio (issue 69: at most 3).
--callgrind: also the instruction counts (valgrind --tool=callgrind, one run each) of both forms at
every N (and of the bicycle and --version with --bicycle): counts do not drift with the machine.

usage: bench/mech_vs_dae.py BUILD_DIR [BUILD_DIR...] [--runs 3] [--sizes 1000,2000,10000]
                            [--bicycle] [--callgrind]
"""
import argparse
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(here)
ENV = dict(os.environ, OPENBLAS_NUM_THREADS="1")


def measure(cmd):
    """(wall s, CPU s, peak MiB) of one process, or None when it failed"""
    # the peak memory is the child's ru_maxrss: Linux counts the spawning process's resident size
    # until the exec too (this script's 15 MB or so), so it is a floor for small runs; the four-bars
    # from N = 1000 up are above it
    null = os.open(os.devnull, os.O_WRONLY)
    acts = [(os.POSIX_SPAWN_DUP2, null, 1), (os.POSIX_SPAWN_DUP2, null, 2)]
    t0 = time.perf_counter()
    pid = os.posix_spawn(cmd[0], cmd, ENV, file_actions=acts)
    _, status, ru = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    os.close(null)
    if os.waitstatus_to_exitcode(status) != 0:
        return None
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024.0


def interleaved(cmds, runs):
    """{key: (median wall, median CPU, median MiB) or None}, the commands run in turn, runs times"""
    got = {k: [] for k in cmds}
    for _ in range(runs):
        for k, cmd in cmds.items():
            got[k].append(measure(cmd))
    out = {}
    for k, rs in got.items():
        out[k] = None if any(r is None for r in rs) else tuple(statistics.median(r[i] for r in rs) for i in range(3))
    return out


def instructions(cmd):
    """callgrind's instruction count of one run (None when valgrind is missing or the run failed)"""
    with tempfile.TemporaryDirectory() as tmp:
        try:
            p = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + os.path.join(tmp, "cg")] + cmd,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=ENV)
        except FileNotFoundError:
            return None
    m = re.search(r"Collected\s*:\s*(\d+)", p.stderr)
    return int(m.group(1)) if p.returncode == 0 and m else None


def fourbars(mblin, files, sizes, runs, callgrind):
    print("| N | mechanism wall / CPU [s], MiB | dae wall / CPU [s], MiB | CPU ratio | growth mech / dae |")
    print("|---|---|---|---|---|")
    prev = None
    cell = lambda x: "%.3f / %.3f, %.0f" % x if x else "failed"
    for N in sizes:
        r = interleaved({k: [mblin, "linearize", "--json", files[k, N]] for k in ("mech", "dae")}, runs)
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
    if callgrind:
        print("\n| N | mechanism instructions | dae instructions | ratio |\n|---|---|---|---|")
        for N in sizes:
            ir = {k: instructions([mblin, "linearize", "--json", files[k, N]]) for k in ("mech", "dae")}
            ratio = "%.2f" % (ir["mech"] / ir["dae"]) if ir["mech"] and ir["dae"] else "-"
            fmt = lambda x: "{:,}".format(x) if x else "-"
            print("| %d | %s | %s | %s |" % (N, fmt(ir["mech"]), fmt(ir["dae"]), ratio))
            sys.stdout.flush()


def bicycle(mblin, runs, callgrind):
    bike = [mblin, "linearize", os.path.join(root, "examples", "mech", "whipple_bicycle.yaml")]
    ver = [mblin, "--version"]
    r = interleaved({"bike": bike, "version": ver}, runs)
    print("\n| process | wall [ms] | CPU [ms] |\n|---|---|---|")
    for k, name in (("bike", "linearize whipple_bicycle.yaml"), ("version", "--version")):
        x = r[k]
        print("| %s | %s |" % (name, "%.1f | %.1f" % (1e3 * x[0], 1e3 * x[1]) if x else "failed | -"))
    if r["bike"] and r["version"] and r["version"][1] > 0:
        print("\nbicycle / --version: CPU %.2f, wall %.2f" % (r["bike"][1] / r["version"][1], r["bike"][0] / r["version"][0]))
    if callgrind:
        ib, iv = instructions(bike), instructions(ver)
        if ib and iv:
            print("instructions: bicycle {:,}, --version {:,}".format(ib, iv))
    sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("builds", nargs="+")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--sizes", default="1000,2000,10000")
    ap.add_argument("--bicycle", action="store_true", help="also the Whipple bicycle against mblin --version")
    ap.add_argument("--callgrind", action="store_true", help="also callgrind instruction counts (one run each)")
    a = ap.parse_args()
    sizes = [int(x) for x in a.sizes.split(",") if x]
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
            if sizes:
                fourbars(mblin, files, sizes, a.runs, a.callgrind)
            if a.bicycle:
                bicycle(mblin, a.runs, a.callgrind)
            print()


if __name__ == "__main__":
    main()
