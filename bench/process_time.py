#!/usr/bin/env python3
"""Whole-process cost of small models (issue 15): median wall and CPU time (user + system, from
wait4) of RUNS runs of `mblin linearize MODEL` per model, for one or more builds (before / after in
one run, interleaved so that the machine's load affects all alike). OPENBLAS_NUM_THREADS is left as
the user has it (the CLI sets one thread itself).

usage: python3 bench/process_time.py [--runs 20] BUILD_DIR... -- MODEL...
  e.g. python3 bench/process_time.py --runs 20 /work/main/build build -- \
           examples/whipple_bicycle_nonlinear.yaml /tmp/fourbar7.yaml
The MODEL `--version` times `mblin --version`. The table also gives the median of the minor page
faults (ru_minflt), which on a virtual machine cost 10-15 us of CPU each.
"""
import os
import statistics
import subprocess
import sys
import time


def run_once(exe, model):
    t0 = time.perf_counter()
    cmd = [exe, "--version"] if model == "--version" else [exe, "linearize", model]
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    err = p.stderr.read().decode()
    p.stderr.close()
    if p.returncode != 0:
        sys.exit(f"{exe} linearize {model} failed: {err.strip()}")
    return wall * 1e3, (ru.ru_utime + ru.ru_stime) * 1e3, ru.ru_maxrss / 1024.0, ru.ru_minflt


def main():
    args = sys.argv[1:]
    runs = 20
    if args[:1] == ["--runs"]:
        runs = int(args[1])
        args = args[2:]
    if "--" not in args:
        sys.exit(__doc__)
    k = args.index("--")
    builds, models = args[:k], args[k + 1:]
    exes = [os.path.join(b, "mblin") for b in builds]
    res = {(e, m): [] for e in exes for m in models}
    for e in exes:  # warm the page cache
        for m in models:
            run_once(e, m)
    for _ in range(runs):
        for m in models:
            for e in exes:
                res[(e, m)].append(run_once(e, m))
    print(f"| model | build | wall median [ms] | CPU median [ms] | peak RSS [MiB] | page faults |  ({runs} runs)")
    print("|---|---|---|---|---|---|")
    for m in models:
        for e in exes:
            r = res[(e, m)]
            print(f"| {m} | {os.path.dirname(e)} | {statistics.median(x[0] for x in r):.2f} | "
                  f"{statistics.median(x[1] for x in r):.2f} | {max(x[2] for x in r):.1f} | "
                  f"{statistics.median(x[3] for x in r):.0f} |")


if __name__ == "__main__":
    main()
