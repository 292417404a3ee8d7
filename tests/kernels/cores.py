#!/usr/bin/env python3
"""OpenBLAS compute kernels this machine can run (issue 27), for `make test-kernels` and agree.py.

OpenBLAS built with DYNAMIC_ARCH (Debian's) picks its kernels by CPU; OPENBLAS_CORETYPE=NAME
forces one, and OPENBLAS_VERBOSE=2 makes it print "Core: NAME" at load time. A kernel is usable
here when the CPU has the instructions it needs (the flags of /proc/cpuinfo, table below) and the
library takes the name: an unknown name (this Debian 12 OpenBLAS does not accept "Cooperlake") is
reported as "Core not found" and silently replaced by the autodetected kernel, so every forced
kernel is confirmed by running PROBE with OPENBLAS_VERBOSE=2 and reading the "Core:" line back.

Command line (the Makefile's test-kernels target):
    python3 tests/kernels/cores.py PROBE COUNT NAME...
prints on stdout the first COUNT of NAME... that are usable and differ from the machine's own
kernel (the one OpenBLAS runs under the current environment), and on stderr one line saying which
kernels were chosen and why the others were not. Exit status 0; 77 when kernels cannot be forced
here (not x86-64, or an OpenBLAS without DYNAMIC_ARCH); 1 when fewer than COUNT are usable.
"""
import os
import re
import subprocess
import sys

# the /proc/cpuinfo flags each x86-64 kernel needs (OpenBLAS driver/others/dynamic.c and the
# instruction sets of its kernel/x86_64 sources); "pni" is SSE3
REQUIRES = {
    "Prescott": {"pni"},
    "Core2": {"pni", "ssse3"},
    "Nehalem": {"pni", "ssse3", "sse4_2"},
    "Sandybridge": {"avx"},
    "Haswell": {"avx", "avx2", "fma"},
    "Zen": {"avx", "avx2", "fma"},
    "SkylakeX": {"avx2", "fma", "avx512f", "avx512bw", "avx512dq", "avx512vl"},
    "Cooperlake": {"avx2", "fma", "avx512f", "avx512bw", "avx512dq", "avx512vl", "avx512_bf16"},
}

SKIP = 77


def cpu_flags():
    """The CPU's flags from /proc/cpuinfo (a set), or None when there are none (not x86)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return None


def loaded_core(probe, coretype=None, unset=False):
    """The kernel OpenBLAS reports when PROBE starts with OPENBLAS_CORETYPE=coretype (None: the
    environment's; unset: removed). Returns (name or None, whether the name was refused)."""
    env = dict(os.environ, OPENBLAS_VERBOSE="2", OPENBLAS_NUM_THREADS="1")
    if unset:
        env.pop("OPENBLAS_CORETYPE", None)
    elif coretype is not None:
        env["OPENBLAS_CORETYPE"] = coretype
    r = subprocess.run([probe, "--help"], env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, timeout=60)
    m = re.search(r"^Core: (\S+)", r.stderr, re.M)
    return (m.group(1) if m else None), ("Core not found" in r.stderr)


def runnable(name, flags):
    need = REQUIRES.get(name)
    return need is not None and flags is not None and need <= flags


class Kernels:
    """own: the machine's kernel under the current environment; usable(name) -> (ok, reason)."""

    def __init__(self, probe):
        self.probe = probe
        self.flags = cpu_flags()
        self.own, _ = loaded_core(probe)
        self.env = os.environ.get("OPENBLAS_CORETYPE")
        self.reason = None
        if self.own is None:
            self.reason = ("OpenBLAS prints no \"Core:\" line with OPENBLAS_VERBOSE=2 (not OpenBLAS, "
                           "or built without DYNAMIC_ARCH): its kernel cannot be forced")
        elif self.flags is None or "lm" not in self.flags:
            self.reason = "not an x86-64 CPU (no flags in /proc/cpuinfo): the kernel names are x86-64's"

    def usable(self, name):
        if self.reason:
            return False, self.reason
        if name not in REQUIRES:
            return False, "unknown kernel name"
        if not runnable(name, self.flags):
            return False, "CPU lacks " + " ".join(sorted(REQUIRES[name] - self.flags))
        got, refused = loaded_core(self.probe, name)
        if refused:
            return False, "this OpenBLAS does not take the name (\"Core not found\", it falls back to %s)" % got
        if got is None or got.lower() != name.lower():
            return False, "this OpenBLAS runs %s instead" % got
        if got.lower() == self.own.lower():
            return False, "the machine's own kernel"
        return True, ""

    def pick(self, count, names):
        chosen, refused = [], []
        for n in names:
            if len(chosen) == count:
                break
            ok, why = self.usable(n)
            (chosen.append(n) if ok else refused.append("%s: %s" % (n, why)))
        return chosen, refused

    def describe_own(self):
        how = ("OPENBLAS_CORETYPE=%s" % self.env) if self.env else "autodetected"
        return "%s (%s)" % (self.own, how)


def main(argv):
    if len(argv) < 4:
        sys.stderr.write("usage: cores.py PROBE COUNT NAME...\n")
        return 2
    probe, count, names = argv[1], int(argv[2]), argv[3:]
    k = Kernels(probe)
    if k.reason:
        sys.stderr.write("kernels: %s\n" % k.reason)
        return SKIP
    chosen, refused = k.pick(count, names)
    msg = "kernels: machine's own %s; forced: %s" % (k.describe_own(), ", ".join(chosen) or "none")
    if refused:
        msg += "; not used: " + "; ".join(refused)
    sys.stderr.write(msg + "\n")
    print(" ".join(chosen))
    return 0 if len(chosen) == count else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
