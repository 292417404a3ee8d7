#!/usr/bin/env python3
"""The command line runs BLAS on one thread from the start: OpenBLAS's worker thread used to be
created by its load-time constructor before main capped the count, and spun. `mblin --version`
(no work of its own, no thread of its own) must create no thread unless the user asks for BLAS
threads; with OPENBLAS_NUM_THREADS=2 OpenBLAS's worker must appear (the check sees threads).
libxml2 (and ICU, libstdc++, zlib, lzma with it) is loaded only when a URDF file is read
(cmake/static_cli/xml_lazy.c): not by `mblin --version` nor a YAML model, but by a URDF model, whose result
(and its XML error message) must be what libxml2 gives. No printf hook is registered at start
(libquadmath's constructor did, which put every printf on glibc's slow path: cmake/static_cli/printf_hooks.c).
Only libc and libm are opened for a small model (METIS is loaded lazily, libgcc linked statically),
the heap's start is advised for transparent huge pages (cli/startup.c), and no exit handler unmaps
OpenBLAS's buffer after the output (cli/par_load.c); threads share one malloc arena except a
sweep's workers.
Needs strace. usage: startup_test.py MBLIN"""
import os
import subprocess
import sys
import tempfile


def clones(mblin, env):
    p = subprocess.run(["strace", "-f", "-qq", "-e", "trace=clone,clone3", mblin, "--version"], env=env,
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise SystemExit("strace failed: %s" % p.stderr)
    return sum(1 for l in p.stderr.splitlines() if "clone" in l and "CLONE_THREAD" in l)


def opened(mblin, args, env):
    """Shared objects the run opened, and its exit status and output."""
    p = subprocess.run(["strace", "-f", "-qq", "-e", "trace=openat", mblin] + args, env=env,
                       capture_output=True, text=True, timeout=120)
    libs = [l for l in p.stderr.splitlines() if "openat" in l and ".so" in l and "ENOENT" not in l]
    return libs, p.returncode, p.stdout, p.stderr


def main():
    mblin = sys.argv[1]
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    ok = True
    n = clones(mblin, env)
    if n != 0:
        print("FAIL: mblin --version created %d thread(s) without OPENBLAS_NUM_THREADS" % n)
        ok = False
    n2 = clones(mblin, dict(env, OPENBLAS_NUM_THREADS="2"))
    if n2 < 1:
        print("FAIL: with OPENBLAS_NUM_THREADS=2 no worker thread was seen (%d)" % n2)
        ok = False
    for args in (["--version"], ["linearize", "examples/slider_pendulum.yaml"]):
        libs, rc, _, _ = opened(mblin, args, env)
        xml = [l for l in libs if "libxml2" in l or "libicu" in l or "libstdc++" in l]
        if rc != 0 or xml:
            print("FAIL: mblin %s (status %d) loaded %s" % (" ".join(args), rc, xml))
            ok = False
    libs, rc, out, _ = opened(mblin, ["linearize", "examples/urdf/two_link_arm.urdf"], env)
    if rc != 0 or not any("libxml2" in l for l in libs) or "Eigenvalues" not in out:
        print("FAIL: the URDF model (status %d) did not load libxml2 or gave no eigenvalues" % rc)
        ok = False
    with tempfile.NamedTemporaryFile("w", suffix=".urdf", delete=False) as f:
        f.write('<robot name="r"><link name="a"></robot>')
    try:
        p = subprocess.run([mblin, "linearize", f.name], env=env, capture_output=True, text=True, timeout=60)
    finally:
        os.unlink(f.name)
    if p.returncode == 0 or "not well-formed XML: Premature end of data" not in p.stderr:
        print("FAIL: bad XML: status %d, %r" % (p.returncode, p.stderr))
        ok = False
    # no printf hook registered (cmake/static_cli/printf_hooks.c): libquadmath's constructor used to register
    # them, and glibc then formats every printf of the process by its slow positional path
    p = subprocess.run([mblin, "--version"], env=dict(env, LD_DEBUG="bindings"), capture_output=True, text=True,
                       timeout=60)
    hooks = sorted(set(l.split("`")[1].split("'")[0] for l in p.stderr.splitlines() if "`register_printf_" in l))
    if p.returncode != 0 or hooks:
        print("FAIL: mblin --version (status %d) called %s" % (p.returncode, hooks))
        ok = False
    # METIS is loaded only by a factorization that orders by it (cmake/static_cli/metis_lazy.c) and libgcc is
    # linked statically: a small model's run opens no shared object but glibc's libc and libm
    for args in (["--version"], ["linearize", "examples/slider_pendulum.yaml"]):
        libs, rc, _, _ = opened(mblin, args, env)
        names = sorted(set(l.split('"')[1].rsplit("/", 1)[-1] for l in libs if '"' in l))
        extra = [n for n in names if not n.startswith(("libc.so", "libm.so", "ld.so.cache"))]
        if rc != 0 or extra:
            print("FAIL: mblin %s (status %d) opened %s besides libc and libm" % (" ".join(args), rc, extra))
            ok = False
    # the heap's first 32 MiB advised for transparent huge pages before malloc touches them
    # (cli/startup.c), unless THP is off on this machine
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            thp = "[never]" not in f.read()
    except OSError:
        thp = False
    if thp:
        p = subprocess.run(["strace", "-qq", "-e", "trace=madvise", mblin, "--version"], env=env,
                           capture_output=True, text=True, timeout=60)
        adv = [l for l in p.stderr.splitlines() if "MADV_HUGEPAGE" in l and "= 0" in l]
        sizes = [int(l.split(",")[1]) for l in adv]
        if p.returncode != 0 or not sizes or max(sizes) < 2 << 20:
            print("FAIL: mblin --version (status %d) advised no heap range for huge pages: %s" % (p.returncode, adv))
            ok = False
    # the end: no exit handler unmaps OpenBLAS's buffer after the output (cli/par_load.c ends the
    # static tool by _exit once its streams are flushed); the output is complete
    p = subprocess.run(["strace", "-qq", "-e", "trace=munmap,write,exit_group", "-o", "/dev/stderr", mblin,
                        "linearize", "examples/slider_pendulum.yaml"], env=env, capture_output=True, text=True,
                       timeout=60)
    last_out = max((i for i, l in enumerate(p.stderr.splitlines()) if l.startswith("write(1,")), default=-1)
    after = [l.split("(")[0] for l in p.stderr.splitlines()[last_out + 1:] if "(" in l]
    if p.returncode != 0 or last_out < 0 or "munmap" in after or "Eigenvalues" not in p.stdout:
        print("FAIL: mblin linearize (status %d) after its output: %s" % (p.returncode, after))
        ok = False
    # one malloc arena (cli/startup.c): the residual-compiling thread of a model with >= 2000
    # residuals (the 300-loop four-bar) allocates from the main heap, no arena of its own (glibc
    # reserves 128 MiB PROT_NONE|MAP_NORESERVE for each); sweep --threads 2 gives its workers theirs
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(subprocess.run([sys.executable, "examples/fourbar.py", "300"], capture_output=True, text=True,
                               check=True).stdout)
    try:
        for args, want in ((["linearize", f.name], 0),
                           (["sweep", "examples/whipple_bicycle.yaml", "--param", "v=0:10:400", "--threads", "2"], 1)):
            p = subprocess.run(["strace", "-f", "-qq", "-e", "trace=mmap,clone3,clone", mblin] + args, env=env,
                               capture_output=True, text=True, timeout=120)
            arenas = sum(1 for l in p.stderr.splitlines() if "MAP_NORESERVE" in l)
            threads = sum(1 for l in p.stderr.splitlines() if "clone" in l and "CLONE_THREAD" in l)
            if p.returncode != 0 or threads < 1 or arenas != want:
                print("FAIL: mblin %s (status %d, %d threads) made %d malloc arenas, expected %d"
                      % (args[0], p.returncode, threads, arenas, want))
                ok = False
    finally:
        os.unlink(f.name)
    print("startup: %s" % ("ok" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
