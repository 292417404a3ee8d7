#!/usr/bin/env python3
"""Writes cmake/static_cli/hot_symbols.txt: the functions the everyday commands run, in the order
the linker lays them out (lld's --symbol-ordering-file, cmake/static_cli.cmake).

On the virtual machines mblin is measured on, the first touch of a code page is a page fault of
several microseconds; the kernel maps the 64 KiB around it. Scattered over the tool's 30 MB of
code, the nonlinear bicycle's 600 functions took about 45 faults; laid out together, about 15.
The layout changes no instruction, only addresses.

The list: the functions callgrind sees in the main job (`linearize` of the nonlinear bicycle,
which also covers the start and `--version`), then those the mechanism bicycle adds (the model
compiler of src/mech: issue 69's bicycle against `--version`), then the other commands' (the demo's
`--matrices`, a four-bar as JSON, a sweep). Under valgrind OpenBLAS picks the kernels of
valgrind's CPU, and another machine picks its own: the OpenBLAS kernels come last, one block per
CPU type the archive holds (every kernel the commands ran, for ZEN, then for HASWELL, ...), so
that on any machine the kernels in use lie together.

usage: python3 bench/hot_symbols.py BUILD_DIR   (then rebuild: the file is a link dependency)
Needs valgrind. Run it again when functions are renamed or the hot path changes; names the build
lacks are skipped by the linker, so a stale list costs page faults, not correctness."""
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "cmake", "static_cli", "hot_symbols.txt")

COMMANDS = [
    ["linearize", "examples/whipple_bicycle_nonlinear.yaml"],
    ["linearize", "examples/mech/whipple_bicycle.yaml"],
    ["linearize", "examples/slider_pendulum.yaml", "--matrices"],
    ["linearize", "examples/fourbar_N20.yaml", "--json"],
    ["sweep", "examples/fourbar_N5.yaml", "--param", "k=20:28:20", "--threads", "1"],
]


def functions(exe, args):
    """Functions of exe that callgrind saw run, most instructions first."""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "cg.out")
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
        subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out, exe] + args,
                       cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=True)
        ann = subprocess.run(["callgrind_annotate", "--threshold=100", out], capture_output=True,
                             text=True, check=True).stdout
    names = []
    tag = "[" + os.path.realpath(exe) + "]"
    for line in ann.splitlines():
        if not line.endswith(tag):
            continue
        m = re.match(r"\s*[\d,]+\s+\([^)]*\)\s+(\S+)\s", line)
        if m:
            names.append(m.group(1).split(":")[-1])
    return names


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    exe = os.path.join(sys.argv[1], "mblin")
    nm = subprocess.run(["nm", exe], capture_output=True, text=True, check=True).stdout
    defined = [l.split()[-1] for l in nm.splitlines() if len(l.split()) == 3]
    cores = sorted({s[len("dgemm_kernel_"):] for s in defined if re.fullmatch(r"dgemm_kernel_[A-Z0-9]+", s)})
    if not cores:
        sys.exit("no OpenBLAS kernels (dgemm_kernel_*) in %s: not the static tool?" % exe)
    core_re = re.compile(r"^(.*)_(%s)$" % "|".join(cores))
    have = set(defined)
    order, stems, seen = [], [], set()

    def add(lst, name):
        if name not in seen:
            seen.add(name)
            lst.append(name)

    for args in COMMANDS:
        for f in functions(exe, args):
            m = core_re.match(f)
            add(stems, m.group(1)) if m else add(order, f)
    for c in cores:
        for st in stems:
            if st + "_" + c in have:
                add(order, st + "_" + c)
    with open(OUT, "w") as fh:
        fh.write("\n".join(order) + "\n")
    print("%s: %d functions (%d CPU types of OpenBLAS kernels)" % (OUT, len(order), len(cores)))


if __name__ == "__main__":
    main()
