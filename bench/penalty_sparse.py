#!/usr/bin/env python3
"""The penalty method on the flexible double pendulum, dense QZ against the sparse penalty pencil
(issue 31, item 4; docs/benchmarks.md).

For each n_p the `model: dae` pendulum (examples/flexible_pendulum.py, n = 6 n_p + 12) is written
once and `mblin linearize FILE --method penalty [--nev K] --json --no-matrices` is run R times per
binary; the table gives the median CPU time (user + sys of the child, os.wait4) and the median peak
RSS, the lowest frequency and the notes' path, and the load average before each row. A binary that
refuses the request (the old one has no --nev for penalty) is shown as refused.

usage: bench/penalty_sparse.py [--mblin build/mblin] [--old OLD_MBLIN] [--np 10,50,100] [--nev 20]
                               [--repeat 3] [--yaml FILE ...]
  --yaml  further model files to run (e.g. the beam-body pendulum with more elements)
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "examples"))

import flexible_pendulum  # noqa: E402


def measure(binary, path, args, repeat):
    """median CPU s, median peak RSS MiB (os.wait4 of each run) and the last JSON, or None, None, stderr"""
    cpu, rss, last = [], [], None
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    for _ in range(repeat):
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            p = subprocess.Popen([binary, "linearize", path, "--method", "penalty", *args, "--json", "--no-matrices"],
                                 stdout=out, stderr=err, env=env)
            _, status, ru = os.wait4(p.pid, 0)
            p.returncode = os.waitstatus_to_exitcode(status)
            out.seek(0), err.seek(0)
            if p.returncode != 0:
                return None, None, err.read().decode().strip()
            cpu.append(ru.ru_utime + ru.ru_stime)
            rss.append(ru.ru_maxrss / 1024.0)
            last = json.loads(out.read())
    return statistics.median(cpu), statistics.median(rss), last


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mblin", default=os.path.join(ROOT, "build", "mblin"))
    ap.add_argument("--old", default=None)
    ap.add_argument("--np", default="10,50,100")
    ap.add_argument("--nev", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--yaml", nargs="*", default=[])
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="mblin_bench_pen_")
    files = []
    for npe in [int(x) for x in a.np.split(",") if x]:
        path = os.path.join(tmp, "fp%d.yaml" % npe)
        with open(path, "w") as f:
            f.write(flexible_pendulum.generate(npe))
        files.append(("dae n_p = %d (n = %d)" % (npe, 6 * npe + 12), path))
    files += [(os.path.basename(y), y) for y in a.yaml]
    bins = [("before", a.old)] if a.old else []
    bins.append(("after", a.mblin))
    print("| model | binary | request | CPU s (median of %d) | peak RSS MiB | lowest | path | load |" % a.repeat)
    print("|---|---|---|---|---|---|---|---|")
    for label, path in files:
        for bname, binary in bins:
            for req in ([], ["--nev", str(a.nev)]):
                load = "%.2f" % os.getloadavg()[0]
                cpu, rss, d = measure(binary, path, req, a.repeat)
                what = "default" if not req else "--nev %d" % a.nev
                if cpu is None:
                    print("| %s | %s | %s | refused | | | %s | %s |" % (label, bname, what, d[:60], load))
                    continue
                low = min((e["im"] for e in d["eigenvalues"] if e["im"] > 0 and not e["spurious"]), default=float("nan"))
                path_ = "sparse" if "sparse penalty pencil" in d["notes"] else "dense QZ"
                print("| %s | %s | %s | %.2f | %.0f | %.7f | %s | %s |" % (label, bname, what, cpu, rss, low, path_, load))
                sys.stdout.flush()


if __name__ == "__main__":
    main()
