#!/usr/bin/env python3
"""A k-fold repeated eigenvalue (issue 65, item 10): k identical uncoupled oscillators (one `model: dae`
file, m = 1, k = 4: the eigenvalue +-2i k times) against k distinct ones (examples/oscillators.py's
frequencies, every cluster simple), `mblin linearize --json --no-matrices` end to end, interleaved in
one run; prints the medians of CPU time (user + sys) and peak RSS, and the ratio identical / distinct.
Up to the whole-spectrum budget (2 GiB: k = 2000 needs 0.7 GB) the whole spectrum is listed, and the
ordering of the k-fold cluster (src/modal/order.c) is part of it; above it the default takes the 20
lowest (k = 20000).

usage: bench/identical_parts.py BUILD_DIR [--k 500,1000,2000,20000] [--runs 3]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile


def identical(k):
    lines = ["model: dae", "name: %d identical oscillators" % k, "parameters: {m: 1, c: 4}",
             "coordinates: {%s}" % ", ".join("x%d: 0" % i for i in range(k)),
             'kinetic_energy: "' + " + ".join("0.5*m*der(x%d)^2" % i for i in range(k)) + '"',
             'potential_energy: "' + " + ".join("0.5*c*x%d^2" % i for i in range(k)) + '"',
             "linearize:", "  at: equilibrium"]
    return "\n".join(lines) + "\n"


def distinct(k):
    here = os.path.dirname(os.path.abspath(__file__))
    return subprocess.run([sys.executable, os.path.join(here, "..", "examples", "oscillators.py"), str(k)],
                          capture_output=True, text=True, check=True).stdout


def measure(mblin, path):
    p = subprocess.run(["/usr/bin/time", "-f", "%U %S %M", mblin, "linearize", path, "--json", "--no-matrices"],
                       capture_output=True, text=True, env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))
    if p.returncode:
        raise SystemExit("mblin failed on %s: %s" % (path, p.stderr[-500:]))
    u, s, kb = p.stderr.strip().split("\n")[-1].split()
    return float(u) + float(s), int(kb) / 1024.0, p.stdout.count('"kind"')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--k", default="500,1000,2000,20000")
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    mblin = os.path.join(a.build, "mblin")
    print("| k | listed | identical CPU [s] | distinct CPU [s] | ratio | identical RSS [MiB] | distinct RSS [MiB] |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for k in (int(x) for x in a.k.split(",")):
            pi, pd = os.path.join(tmp, "ident.yaml"), os.path.join(tmp, "dist.yaml")
            with open(pi, "w") as f:
                f.write(identical(k))
            with open(pd, "w") as f:
                f.write(distinct(k))
            ti, td, mi, md = [], [], [], []
            for _ in range(a.runs):
                t, m, listed = measure(mblin, pi)
                ti.append(t), mi.append(m)
                t, m, _ = measure(mblin, pd)
                td.append(t), md.append(m)
            mti, mtd = statistics.median(ti), statistics.median(td)
            print("| %d | %d | %.2f | %.2f | %.2f | %.0f | %.0f |" % (k, listed, mti, mtd, mti / mtd,
                                                                statistics.median(mi), statistics.median(md)))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
