#!/usr/bin/env python3
"""mblin under mpirun (docs/parallel.md): the MPI plugin is loaded only under the launcher, a sweep
over 2 and 4 ranks writes the same bytes as one process, failures end every rank with the same
message and a nonzero status, never a hang.

usage: mpi_sweep_test.py path/to/mblin path/to/mpiexec path/to/libmblin_par.so"""
import json, os, re, shutil, subprocess, sys, tempfile

MBLIN, MPIEXEC, PLUGIN = sys.argv[1], sys.argv[2], sys.argv[3]
# Open MPI derives its install prefix from the launcher's path: /bin/mpiexec (merged /usr) gives "/",
# which it refuses; the resolved path (/usr/bin/orterun) gives /usr
MPIEXEC = os.path.realpath(MPIEXEC)
TIMEOUT = 300  # seconds for one launch: a hang fails the test instead of blocking it
failed = 0
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OPENBLAS_NUM_THREADS="1",
           OMPI_MCA_btl="self,vader,tcp")
# the launcher's own variables must not leak into the one-process reference runs
for k in list(env):
    if k.startswith(("OMPI_COMM_WORLD", "PMIX_", "PMI_")):
        del env[k]
# The sanitized build: Open MPI's allocations kept until exit are suppressed by module, which needs
# the slow unwinder on every malloc (tests/par/tests.cmake): a launch took 59 s with it and 24 s
# without. So the leak check under MPI runs on the launches that pass through the plugin's gather
# and its failure paths (LEAK_CHECKED below); the other launches keep the address and
# undefined-behaviour checks with the leak check off, and the one-process runs (no Open MPI
# loaded) check leaks with the fast unwinder.
SANITIZED = os.environ.get("MBLIN_SANITIZED") == "1"
env_fast = env
env_noleak = env
if SANITIZED:
    env_fast = dict(env, LSAN_OPTIONS="fast_unwind_on_malloc=1")
    env_noleak = dict(env_fast, ASAN_OPTIONS=env.get("ASAN_OPTIONS", "abort_on_error=1") + ":detect_leaks=0")


def check(cond, what):
    global failed
    if not cond:
        failed += 1
        print("FAILED:", what)


def one(*args, cwd=None):
    return subprocess.run([MBLIN, *args], capture_output=True, text=True, env=env_fast, cwd=cwd, timeout=TIMEOUT)


def mpi(n, *args, cwd=None, mpmd=None, leaks=False):
    """mpiexec -n n mblin args (or an MPMD line: mpmd = [(n, wdir, args), ...]); leaks: check for
    leaks in the sanitized build (slow: see env_noleak)"""
    cmd = [MPIEXEC, "--oversubscribe"]
    if mpmd:
        for i, (k, wdir, a) in enumerate(mpmd):
            cmd += ([":"] if i else []) + ["-n", str(k), "-wdir", wdir, MBLIN, *a]
    else:
        cmd += ["-n", str(n), MBLIN, *args]
    try:
        return subprocess.run(cmd, capture_output=True, text=True, env=env if leaks else env_noleak, cwd=cwd,
                              timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        check(False, f"{cmd}: no answer within {TIMEOUT} s (a hang)")
        return subprocess.CompletedProcess(cmd, -1, "", "")


def mblin_lines(stderr):
    """the tool's own lines (mpiexec adds its banner when a rank exits nonzero)"""
    return [l for l in stderr.splitlines() if l.startswith("mblin")]


def no_seconds(js):
    """the sweep's JSON without its wall time, the one field that differs between runs"""
    return re.sub(r'"seconds": [0-9.e+-]+,', '"seconds": 0,', js)


# the tool itself never links MPI; the plugin links MPI and takes the mbl_* functions from the tool
if shutil.which("ldd"):
    ld = subprocess.run(["ldd", MBLIN], capture_output=True, text=True).stdout
    check("libmpi" not in ld, f"mblin links MPI: {ld}")
    ldp = subprocess.run(["ldd", PLUGIN], capture_output=True, text=True).stdout
    check("libmpi" in ldp and "libmblin" not in ldp, f"the plugin's libraries: {ldp}")
if shutil.which("nm"):
    nmp = subprocess.run(["nm", "-D", PLUGIN], capture_output=True, text=True).stdout
    und = {l.split()[-1] for l in nmp.splitlines() if re.match(r"\s+U mbl_", l)}
    dfn = {l.split()[-1] for l in nmp.splitlines() if re.match(r"[0-9a-f]+ [TDR] mbl_", l)}
    check(und >= {"mbl_error", "mbl_malloc", "mbl_free"} and dfn == set(),
          f"the plugin must use the tool's mbl_* (undefined: {sorted(und)}, defined: {sorted(dfn)})")
    nmt = subprocess.run(["nm", "-D", "--defined-only", MBLIN], capture_output=True, text=True).stdout
    check(re.search(r" T mbl_error$", nmt, re.M) is not None, "the tool does not export mbl_error to the plugin")

# --version: printed once (rank 0), status 0
r = mpi(2, "--version")
check(r.returncode == 0 and r.stdout.count("mblin ") == 1, f"mpiexec -n 2 mblin --version: {r.returncode} {r.stdout!r} {r.stderr!r}")

# a launched tool without its plugin: one line, status 1 (a copy of the tool in a directory without it)
with tempfile.TemporaryDirectory() as d:
    lone = os.path.join(d, "mblin")
    shutil.copy(MBLIN, lone)
    r = subprocess.run([lone, "--version"], capture_output=True, text=True, timeout=60,
                       env=dict(env, OMPI_COMM_WORLD_SIZE="2", OMPI_COMM_WORLD_RANK="0"))
    lines = r.stderr.strip().splitlines()
    check(r.returncode == 1 and r.stdout == "" and len(lines) == 1 and "libmblin_par.so was not found" in lines[0]
          and d in lines[0], f"missing plugin: {r.returncode} {r.stderr!r}")

# the same sweeps on 1, 2 and 4 ranks: the same bytes (CSV, JSON without its wall time, critical speeds)
# (the sanitized build runs fewer points, two of the four sweeps, on 2 ranks only, and skips the
# -o DIR case: everything is about ten times slower there, and each rank's MPI start and exit take
# seconds with the leak checker's slow unwinder; the split, packing and failure paths of the plugin
# run there in test_sweep_dist without MPI. This test took 137 s of the CI's sanitized stage alone
# (it runs serially), about 60 s now)
small = os.environ.get("MBLIN_SANITIZED") == "1"
ranks = (2,) if small else (2, 4)
cases = [
    # rigid rotor Campbell diagram: sensitivity predictor, shapes, critical speeds refined on rank 0
    ["examples/mech/rigid_rotor.yaml", "--param", "Omega=0:400:" + ("41" if small else "121"), "--orders", "1,2", "--json"],
    # N = 20 four-bar (42 constraints): equilibria warm-started within blocks (of 2 points when
    # small), linear predictor
    ["examples/fourbar_N20.yaml", "--param", "k=20:28:" + ("32" if small else "40")],
    # a mechanism four-bar (reload path) over two axes, 2 threads per rank
    ["examples/mech/fourbar_N5.yaml", "--param", "k=20:30:" + ("5" if small else "9"), "--param", "g=9:10:3",
     "--threads", "2", "--json"],
    # the bicycle: sensitivity predictor with shape derivatives gathered
    ["examples/whipple_bicycle.yaml", "--param", "v=0:10:" + ("33" if small else "51"), "--json"],
]
if small:
    cases = [cases[0], cases[2]]  # the rotor (sensitivity predictor, critical speeds), the reload path
for args in cases:
    ref = one("sweep", *args)
    check(ref.returncode == 0 and ref.stdout, f"{args} on one process: {ref.returncode} {ref.stderr}")
    for n in ranks:
        r = mpi(n, "sweep", *args, leaks=args is cases[0])  # LEAK_CHECKED: the rotor's gather
        check(r.returncode == 0, f"{args} on {n} ranks: {r.returncode} {r.stderr}")
        check(no_seconds(r.stdout) == no_seconds(ref.stdout), f"{args}: the output of {n} ranks differs from one process")
        check(mblin_lines(r.stderr) == mblin_lines(ref.stderr), f"{args}: stderr of {n} ranks {r.stderr!r} vs {ref.stderr!r}")
    if "--json" in args:
        j = json.loads(ref.stdout)
        check(j["points"] >= 15 and not j["failed"], f"{args}: {j['points']} points, failed {j['failed']}")

# -o DIR: the files rank 0 writes equal one process's (not in the sanitized build: see above)
if not small:
    with tempfile.TemporaryDirectory() as d:
        args = ["examples/mech/rigid_rotor.yaml", "--param", "Omega=0:200:41"]
        r1 = one("sweep", *args, "-o", os.path.join(d, "one"))
        r2 = mpi(2, "sweep", *args, "-o", os.path.join(d, "two"))
        check(r1.returncode == 0 and r2.returncode == 0, f"-o: {r1.stderr} {r2.stderr}")
        for f in ["sweep.csv", "sweep.json", "campbell.svg", "locus.svg", "damping.svg"]:
            a, b = (open(os.path.join(d, w, f)).read() for w in ("one", "two"))
            check(no_seconds(a) == no_seconds(b), f"-o DIR: {f} of 2 ranks differs from one process")

# points that fail inside the range (the N = 20 four-bar locks near k = 30: a singular
# configuration): the same warnings, output and status as one process, whichever rank had them
args = ["examples/fourbar_N20.yaml", "--param", "k=25:31:13", "--json"]
ref = one("sweep", *args)
jr = json.loads(ref.stdout)
check(ref.returncode == 0 and len(jr["failed"]) >= 1, f"the failing four-bar on one process: {ref.stderr}")
for n in ranks if small else (2, 4):
    r = mpi(n, "sweep", *args)
    check(r.returncode == ref.returncode and no_seconds(r.stdout) == no_seconds(ref.stdout)
          and mblin_lines(r.stderr) == mblin_lines(ref.stderr),
          f"failing points on {n} ranks: {r.returncode} {r.stderr!r} vs {ref.stderr!r}")
    # with 13 points in blocks of one, the failing points 11 and 12 are on ranks 11 % n and 12 % n
    check(any("point 12 failed" in l for l in mblin_lines(r.stderr)), f"{n} ranks: {r.stderr!r}")

# the sweep's first point singular: every rank fails alike; one message (rank 0's), status 1
args = ["examples/fourbar_N20.yaml", "--param", "k=30.5:31:4"]
ref = one("sweep", *args)
check(ref.returncode == 1 and len(mblin_lines(ref.stderr)) == 1 and "singular configuration" in ref.stderr,
      f"singular first point on one process: {ref.returncode} {ref.stderr!r}")
for n in ranks:
    r = mpi(n, "sweep", *args)
    check(r.returncode == 1 and r.stdout == "" and mblin_lines(r.stderr) == mblin_lines(ref.stderr),
          f"singular first point on {n} ranks: {r.returncode} {r.stderr!r}")

# a usage error: the same line once, status 2 from every rank (mpiexec returns the first nonzero one)
r = mpi(2, "sweep", "examples/mech/rigid_rotor.yaml", "--param", "Omega=2:1:5")
check(r.returncode == 2 and mblin_lines(r.stderr) == mblin_lines(one("sweep", "examples/mech/rigid_rotor.yaml",
      "--param", "Omega=2:1:5").stderr), f"usage error on 2 ranks: {r.returncode} {r.stderr!r}")

# one rank fails alone (its working directory lacks the model file): every rank ends with status 1,
# rank 0 names the rank and its reason once, no hang
with tempfile.TemporaryDirectory() as d:
    os.mkdir(os.path.join(d, "has"))
    os.mkdir(os.path.join(d, "lacks"))
    shutil.copy("examples/mech/rigid_rotor.yaml", os.path.join(d, "has", "m.yaml"))
    a = ["sweep", "m.yaml", "--param", "Omega=0:200:21"]
    r = mpi(0, mpmd=[(1, os.path.join(d, "has"), a), (1, os.path.join(d, "lacks"), a)], leaks=True)  # LEAK_CHECKED
    lines = mblin_lines(r.stderr)
    check(r.returncode == 1 and r.stdout == "" and lines == ["mblin: rank 1: m.yaml: cannot open the model file (No such file or directory)"],
          f"rank 1 alone fails: {r.returncode} {r.stdout!r} {r.stderr!r}")
    # and rank 0 alone: its own message, rank 1 says nothing more
    r = mpi(0, mpmd=[(1, os.path.join(d, "lacks"), a), (1, os.path.join(d, "has"), a)])
    lines = mblin_lines(r.stderr)
    check(r.returncode == 1 and r.stdout == "" and lines == ["mblin: m.yaml: cannot open the model file (No such file or directory)"],
          f"rank 0 alone fails: {r.returncode} {r.stdout!r} {r.stderr!r}")

print("mpi_sweep_test:", "FAILED" if failed else "ok")
sys.exit(1 if failed else 0)
