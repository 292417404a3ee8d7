#!/usr/bin/env python3
"""Issue 19's large-model benchmark: the lowest K modes (--nev 2K eigenvalues +-i omega) of a hanging
chain of NL flexible links (bench/flex_chain.py) by `mblin linearize --eigensolver slepc` on 1 and
2 ranks (mpiexec -n P, each rank under /usr/bin/time -v: CPU user + sys, wall, peak RSS per rank;
PETSc's -log_view: EPSSolve, MUMPS's analysis and factorization, MatSolve, messages and bytes),
optionally ARPACK in one process. The frequencies are compared between the runs and with the
continuous heavy chain's closed form omega_k = (j_{0,k} / 2) sqrt(g / L) (J0's zeros computed
here), and --richardson E1,E2,E3 (each twice the last) adds ARPACK runs at coarser meshes and their
extrapolation with the observed order of convergence.

usage: python3 bench/mega_chain.py BUILD_DIR [--links 200] [--elements 1665] [--ranks 1,2]
       [--nev 40] [--arpack] [--richardson 52,104,208] [--keep DIR]
The 10^6-coordinate run of docs/slepc.md: --links 200 --elements 1665 (n = 1,000,200), about
10 GB over both ranks: check `free -g` first.
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from flex_chain import chain_yaml  # noqa: E402
from slepc_scaling import eigen, logview, timefile  # noqa: E402


def j0(x, n=200):
    """J0(x) = 1/pi int_0^pi cos(x sin t) dt (trapezoid: exponentially accurate for this integrand)"""
    return sum((0.5 if k in (0, n) else 1.0) * math.cos(x * math.sin(math.pi * k / n)) for k in range(n + 1)) / n


def j1(x, n=200):
    return sum((0.5 if k in (0, n) else 1.0) * math.cos(math.pi * k / n - x * math.sin(math.pi * k / n))
               for k in range(n + 1)) / n


def j0_zeros(count):
    zs = []
    for k in range(1, count + 1):
        x = (k - 0.25) * math.pi  # McMahon's first term, then Newton (J0' = -J1)
        for _ in range(30):
            dx = j0(x) / j1(x)
            x += dx
            if abs(dx) < 1e-15 * x:
                break
        zs.append(x)
    return zs


def run(mblin, model, nev, P, tag, d, env, budget):
    out = os.path.join(d, tag + ".json")
    tf = os.path.join(d, tag + ".time")
    cmd = [mblin, "linearize", model, "--nev", str(nev), "--json", "--no-matrices", "--mem-budget", budget]
    e2 = dict(env)
    if P:
        cmd += ["--eigensolver", "slepc"]
        e2["PETSC_OPTIONS"] = "-log_view :%s" % os.path.join(d, tag + ".log")
        inner = "exec /usr/bin/time -v -o %s.$OMPI_COMM_WORLD_RANK %s > %s.$OMPI_COMM_WORLD_RANK" % (
            tf, " ".join(cmd), out)
        full = [os.path.realpath(shutil.which("mpiexec")), "--oversubscribe", "-n", str(P), "sh", "-c", inner]
        r = subprocess.run(full, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=e2)
    else:
        with open(out + ".0", "w") as f:
            r = subprocess.run(["/usr/bin/time", "-v", "-o", tf + ".0"] + cmd, stdout=f, stderr=subprocess.PIPE,
                               text=True, env=e2)
    open(os.path.join(d, tag + ".stderr"), "w").write(r.stderr)
    if r.returncode:
        return {"failed": " | ".join(l for l in r.stderr.splitlines() if l.startswith("mblin"))[-600:] or r.stderr[-400:]}
    ranks = [timefile("%s.%d" % (tf, k)) for k in range(max(P, 1))]
    ev, solver, notes = eigen(out + ".0")
    om = sorted(x.imag for x in ev if x.imag > 0)
    return {"ranks": max(P, 1), "engine": "slepc" if P else "arpack", "wall": max(t["wall"] for t in ranks),
            "cpu": [t["cpu"] for t in ranks], "rss_mib": [round(t["rss_mib"]) for t in ranks],
            "log": logview(os.path.join(d, tag + ".log")) if P else {}, "omega": om, "solver": solver,
            "warning": "WARNING" in notes, "notes": notes[:200]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("--links", type=int, default=200)
    ap.add_argument("--elements", type=int, default=1665)
    ap.add_argument("--ranks", default="1,2")
    ap.add_argument("--nev", type=int, default=40)
    ap.add_argument("--arpack", action="store_true")
    ap.add_argument("--richardson", default="")
    ap.add_argument("--keep", default="")
    ap.add_argument("--mem-budget", default="16G", help="mblin's --mem-budget (its default 2G refuses 10^6)")
    a = ap.parse_args()
    mblin = os.path.abspath(os.path.join(a.build, "mblin"))
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    d = a.keep or tempfile.mkdtemp()
    os.makedirs(d, exist_ok=True)
    nl, ne = a.links, a.elements
    L = nl * 10.0
    closed = [z / 2 * math.sqrt(9.81 / L) for z in j0_zeros(a.nev // 2)]
    rows = []
    runs = [(ne, 0)] if a.arpack else []
    runs += [(ne, int(p)) for p in a.ranks.split(",") if p]
    runs += [(int(e), 0) for e in a.richardson.split(",") if e]
    for E, P in runs:
        model = os.path.join(d, "chain_%d_%d.yaml" % (nl, E))
        if not os.path.exists(model):
            open(model, "w").write(chain_yaml(nl, E))
        row = {"n": nl * (3 * E + 6), "links": nl, "elements": E}
        row.update(run(mblin, model, a.nev, P, "%s_%d_%d" % ("slepc" if P else "arpack", E, P), d, env, a.mem_budget))
        if "omega" in row:
            row["vs_closed_form"] = [round(w / c - 1, 9) for w, c in zip(row["omega"], closed)]
        rows.append(row)
        print(json.dumps(row), flush=True)
    # agreement between the runs at the finest mesh, and the h^2 extrapolation of the coarse ones
    fine = [r for r in rows if r.get("elements") == ne and "omega" in r]
    for r in fine[1:]:
        dev = max(abs(x / y - 1) for x, y in zip(r["omega"], fine[0]["omega"]))
        print("%s on %d: largest relative difference from the first run %.2g" % (r["engine"], r["ranks"], dev))
    coarse = sorted((r for r in rows if r.get("elements") != ne and "omega" in r), key=lambda r: r["elements"])
    if len(coarse) >= 3 and fine:
        # three meshes E, 2E, 4E: the observed order p per mode and the extrapolation with it
        # (the bending elements converge as h^4, the axial ones as h^2)
        (r1, r2, r3), f = coarse[-3:], fine[0]
        rich, orders = [], []
        for w1, w2, w3 in zip(r1["omega"], r2["omega"], r3["omega"]):
            d1, d2 = w2 - w1, w3 - w2
            if d1 == 0 or d2 == 0 or d2 / d1 <= 0:
                rich.append(w3), orders.append(float("nan"))
                continue
            q = d2 / d1  # = 2^-p
            orders.append(-math.log2(q))
            rich.append(w3 + d2 * q / (1 - q))
        dev = [f["omega"][k] / rich[k] - 1 for k in range(min(len(rich), len(f["omega"])))]
        print("extrapolation of E = %s (observed orders %s): %s" % (
            ", ".join(str(r["elements"]) for r in (r1, r2, r3)), " ".join("%.1f" % p for p in orders),
            " ".join("%.12f" % x for x in rich)))
        print("E = %d against it: relative differences %s; largest %.2g" % (
            ne, " ".join("%.1e" % x for x in dev), max(abs(x) for x in dev)))
    print("closed form (continuous chain): %s" % " ".join("%.6f" % c for c in closed))
    if a.keep:
        print("files in %s" % d)
    else:
        shutil.rmtree(d, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
