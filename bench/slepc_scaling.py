#!/usr/bin/env python3
"""The SLEPc eigensolver over MPI (docs/parallel.md "SLEPc eigensolver") on the flexible double
pendulum of source 001 (examples/flexible_pendulum_beams.yaml with E beam elements per link,
n = 6 E + 12 coordinates): the lowest 20 eigenvalues (--nev 20) by the ARPACK path (one process) and
by `--eigensolver slepc` on 1 and 2 ranks (mpiexec -n P). Each process runs under /usr/bin/time -v:
per rank the peak resident memory, CPU (user + sys) and wall time; PETSc's -log_view gives the time
of the SLEPc solve (EPSSolve), of MUMPS's factorization (MatLUFactorNum, MatLUFactorSym) and the MPI
messages and bytes sent (its summary lines "MPI Msg Count" and "MPI Msg Len"). The eigenvalues of
the three runs are compared (relative to max(1, |lambda|)).

usage: python3 bench/slepc_scaling.py BUILD_DIR [--elements 1665,16665] [--ranks 1,2] [--no-arpack]
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timefile(path):
    t = open(path).read()

    def field(name):
        return re.search(re.escape(name) + r": (.*)", t).group(1).strip()
    wall = [float(x) for x in field("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":")]
    return {"wall": sum(x * 60 ** (len(wall) - 1 - i) for i, x in enumerate(wall)),
            "cpu": float(field("User time (seconds)")) + float(field("System time (seconds)")),
            "rss_mib": int(field("Maximum resident set size (kbytes)")) / 1024.0,
            "status": int(field("Exit status"))}


def logview(path):
    """EPSSolve, MatLUFactorNum/Sym times (max over ranks) and the MPI totals of PETSc's -log_view"""
    out = {}
    if not os.path.exists(path):
        return out
    t = open(path).read()
    for ev in ("EPSSolve", "MatLUFactorNum", "MatLUFactorSym", "MatSolve", "STSetUp"):
        m = re.search(r"^%s\s+(\d+)\s+[\d.]+\s+([\d.e+-]+)" % ev, t, re.M)
        if m:
            out[ev] = float(m.group(2))
    for key, name in (("MPI Msg Count", "messages"), ("MPI Msg Len \\(bytes\\)", "bytes"),
                      ("MPI Messages", "messages"), ("MPI Message Lengths", "bytes")):
        m = re.search(r"^%s:\s+([\d.e+-]+)\s+([\d.e+-]+)\s+([\d.e+-]+)\s+([\d.e+-]+)" % key, t, re.M)
        if m and name not in out:
            out[name] = float(m.group(4))  # the Total column
    return out


def eigen(path):
    js = json.load(open(path))
    return [complex(e["re"], e["im"]) for e in js["eigenvalues"]], js.get("eigen_solver"), js.get("notes", "")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("--elements", default="1665,16665")
    ap.add_argument("--ranks", default="1,2")
    ap.add_argument("--no-arpack", action="store_true")
    ap.add_argument("--nev", type=int, default=20)
    a = ap.parse_args()
    mblin = os.path.abspath(os.path.join(a.build, "mblin"))
    mpiexec = os.path.realpath(shutil.which("mpiexec"))
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    src = open(os.path.join(ROOT, "examples", "flexible_pendulum_beams.yaml")).read()
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for E in [int(x) for x in a.elements.split(",")]:
            n = 6 * E + 12
            model = os.path.join(d, "flex_%d.yaml" % E)
            open(model, "w").write(src.replace("elements: 50", "elements: %d" % E))
            runs = []
            if not a.no_arpack:
                runs.append(("arpack", 0))
            runs += [("slepc", int(p)) for p in a.ranks.split(",")]
            ref = None
            for engine, P in runs:
                tag = "%s_%d_%d" % (engine, E, P)
                out = os.path.join(d, tag + ".json")
                cmd = [mblin, "linearize", model, "--nev", str(a.nev), "--json", "--no-matrices"]
                if engine == "slepc":
                    cmd += ["--eigensolver", "slepc"]
                tf = os.path.join(d, tag + ".time")
                e2 = dict(env)
                if P:
                    e2["PETSC_OPTIONS"] = "-log_view :%s" % os.path.join(d, tag + ".log")
                    # each rank under its own /usr/bin/time (the rank's number names its file)
                    inner = "exec /usr/bin/time -v -o %s.$OMPI_COMM_WORLD_RANK %s > %s.$OMPI_COMM_WORLD_RANK" % (
                        tf, " ".join(cmd), out)
                    full = [mpiexec, "--oversubscribe", "-n", str(P), "sh", "-c", inner]
                else:
                    full = ["/usr/bin/time", "-v", "-o", tf + ".0"] + cmd
                with open(out + ".0" if not P else os.devnull, "w") as f:
                    r = subprocess.run(full, stdout=f if not P else subprocess.DEVNULL, stderr=subprocess.PIPE,
                                       text=True, env=e2)
                if r.returncode:
                    print("n = %d, %s on %d: failed: %s" % (n, engine, P, r.stderr.strip()[-300:]))
                    continue
                ranks = [timefile("%s.%d" % (tf, k)) for k in range(max(P, 1))]
                ev, solver, notes = eigen(out + ".0")
                lv = logview(os.path.join(d, tag + ".log")) if P else {}
                if ref is None:
                    ref = ev
                diff = max(min(abs(x - y) for y in ev) / max(1.0, abs(x)) for x in ref)
                row = {"n": n, "elements": E, "engine": engine, "ranks": max(P, 1), "wall": max(t["wall"] for t in ranks),
                       "cpu": [t["cpu"] for t in ranks], "rss_mib": [t["rss_mib"] for t in ranks],
                       "log": lv, "diff_vs_first": diff, "omega": sorted(abs(x.imag) for x in ev)[:8:2],
                       "solver": solver, "notes": notes[:160]}
                rows.append(row)
                print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
