#!/usr/bin/env python3
"""`mblin linearize --eigensolver slepc` (docs/parallel.md "SLEPc eigensolver") against the default
ARPACK path of the same tool: the same JSON keys, the same eigenvalues to 1e-10 (relative to
max(1, |lambda|)) and the same mode shapes (MAC), on 1 process and under mpiexec -n 2 (4 ranks:
the C tests slepc_*_np4); the one-line errors (an unknown engine, a tool without its plugin).

usage: slepc_cli_test.py path/to/mblin path/to/mpiexec"""
import cmath, json, os, shutil, subprocess, sys, tempfile

MBLIN, MPIEXEC = sys.argv[1], os.path.realpath(sys.argv[2])
TIMEOUT = 300
failed = 0
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OPENBLAS_NUM_THREADS="1",
           OMPI_MCA_btl="self,vader,tcp")
for k in list(env):
    if k.startswith(("OMPI_COMM_WORLD", "PMIX_", "PMI_")):
        del env[k]


def check(cond, what):
    global failed
    if not cond:
        failed += 1
        print("FAILED:", what)


def run(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        check(False, f"{cmd}: no answer within {TIMEOUT} s (a hang)")
        return subprocess.CompletedProcess(cmd, -1, "", "")


def keys(x, path=""):
    """the set of key paths of a JSON value (lists by their first element)"""
    out = set()
    if isinstance(x, dict):
        for k, v in x.items():
            out.add(path + "/" + k)
            out |= keys(v, path + "/" + k)
    elif isinstance(x, list) and x:
        out |= keys(x[0], path + "[]")
    return out


def shapes(js):
    """mode shapes as complex lists per mode (mode_shapes: re, im of n coordinates x modes)"""
    ms = js.get("mode_shapes")
    if not ms or not ms.get("re"):
        return None
    re_, im_ = ms["re"], ms["im"]
    return [[complex(re_[i][j], im_[i][j]) for i in range(len(re_))] for j in range(len(re_[0]))]


def compare(model, extra, label):
    base = ["linearize", model, "--json"] + extra
    ra = run([MBLIN] + base)
    check(ra.returncode == 0, f"{label}: ARPACK path failed: {ra.stderr.strip()}")
    if ra.returncode:
        return
    ja = json.loads(ra.stdout)
    # 1 and 2 ranks: one rank writes for all; the engine on 4 ranks is the C tests' slepc_*_np4
    # (the same models and checks, tests/par/slepc_tests.cmake)
    for n in (1, 2):
        cmd = ([MBLIN] if n == 1 else [MPIEXEC, "--oversubscribe", "-n", str(n), MBLIN]) + base + ["--eigensolver", "slepc"]
        rs = run(cmd)
        check(rs.returncode == 0, f"{label} on {n} rank(s): {rs.stderr.strip()[-400:]}")
        if rs.returncode:
            continue
        js = json.loads(rs.stdout)  # one JSON object: rank 0 alone writes
        check(keys(js) == keys(ja), f"{label} on {n}: JSON keys differ: {sorted(keys(js) ^ keys(ja))}")
        check("SLEPc" in js.get("notes", "") and js.get("eigen_solver") == "slepc",
              f"{label} on {n}: SLEPc not named (eigen_solver {js.get('eigen_solver')!r})")
        check(ja.get("eigen_solver") == "arpack", f"{label}: the default engine is {ja.get('eigen_solver')!r}")
        ea = [complex(e["re"], e["im"]) for e in ja["eigenvalues"]]
        es = [complex(e["re"], e["im"]) for e in js["eigenvalues"]]
        check(len(ea) == len(es), f"{label} on {n}: {len(es)} eigenvalues, ARPACK {len(ea)}")
        worst = 0.0
        for a in ea:
            d = min(abs(a - s) for s in es) / max(1.0, abs(a))
            worst = max(worst, d)
        check(worst <= 1e-10, f"{label} on {n}: eigenvalues differ by {worst:.3g} (relative)")
        sa, ss = shapes(ja), shapes(js)
        worst_mac = 0.0
        if sa and ss and len(sa) == len(ss):
            for j, a in enumerate(ea):
                if sum(1 for b in ea if abs(a - b) <= 1e-8 * max(1.0, abs(a))) > 1:
                    continue  # a multiple eigenvalue: any basis of its eigenspace
                t = min(range(len(es)), key=lambda t: abs(a - es[t]))
                x, y = sa[j], ss[t]
                dot = sum(u.conjugate() * v for u, v in zip(x, y))
                nx, ny = sum(abs(u) ** 2 for u in x), sum(abs(v) ** 2 for v in y)
                worst_mac = max(worst_mac, 1 - abs(dot) ** 2 / (nx * ny) if nx and ny else 1)
            check(worst_mac <= 1e-8, f"{label} on {n}: mode shapes differ (1 - MAC {worst_mac:.3g})")
        print(f"{label}: {n} rank(s), {len(es)} eigenvalues, worst difference {worst:.3g}, 1 - MAC {worst_mac:.3g}")


compare("examples/flexible_pendulum_beams.yaml", ["--nev", "20"], "flexible pendulum n_p = 50")
compare("tests/par/chain_N300.yaml", ["--nev", "20"], "damped hanging chain N = 300")
compare("tests/par/rotor_N50.yaml", ["--nev", "10", "--shift-im", "300"], "rotor, complex shift 300i")

# one-line errors
r = run([MBLIN, "linearize", "examples/flexible_pendulum_beams.yaml", "--eigensolver", "lapack"])
check(r.returncode == 2 and "--eigensolver expects arpack or slepc" in r.stderr, f"unknown engine: {r.stderr!r}")
with tempfile.TemporaryDirectory() as d:  # a tool without its plugin beside it
    lone = os.path.join(d, "mblin")
    shutil.copy(MBLIN, lone)
    r = run([lone, "linearize", "examples/flexible_pendulum_beams.yaml", "--nev", "4", "--eigensolver", "slepc"])
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    check(r.returncode != 0 and len(lines) == 1 and "--eigensolver slepc" in lines[0] and "libmblin_par.so" in lines[0],
          f"missing plugin: {r.returncode} {r.stderr!r}")

print("slepc_cli_test:", "FAILED %d" % failed if failed else "ok")
sys.exit(1 if failed else 0)
