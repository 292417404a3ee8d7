#!/usr/bin/env python3
"""CalculiX's own eigenvalues of a deck with a *FREQUENCY step, as JSON (issue 67, item 5).

usage: ccx_reference.py DECK.inp [DECK.inp ...]

Runs `ccx -i JOB` in each deck's folder (the deck's *INCLUDE files must be there: make_part.sh
leaves them; ccx's output goes to JOB.log there) and prints one JSON object: per job its
eigenvalues omega^2 ((rad/s)^2, ascending as CalculiX orders them), the frequencies in Hz and the
number of equations. The values are the double-precision ones of JOB.eig (the deck needs
`*FREQUENCY, STORAGE=YES`); JOB.dat prints them with 7 digits only, and every one of those is
checked against the .eig value (to DAT_RTOL relative, or DAT_ATOL absolute for the rigid-body
modes' round-off about 0), so a change of either file's layout is an error, not a silent
misreading.

The .eig layout of ccx 2.20 (arpack.c, non-cyclic): int32 cyclic-symmetry flag (0), int32
Hermitian flag, int32 perturbation flag (0: no reference displacements follow), int32 nev, then nev
doubles omega^2, then the matrices (not read here). The .dat block:

         E I G E N V A L U E   O U T P U T
     MODE NO    EIGENVALUE    FREQUENCY: REAL PART (RAD/TIME) (CYCLES/TIME) IMAGINARY PART (RAD/TIME)
          7   0.6847231E+07   0.2616721E+04   0.4164641E+03   0.0000000E+00

Only the standard library: the test that uses it needs no numpy. Exit status 1 with a one-line
message naming the file on any failure.
"""
import json
import math
import os
import re
import struct
import subprocess
import sys

DAT_RTOL = 1e-6   # the .dat's 7 significant digits (half a unit of the 7th is 5e-7)
DAT_ATOL = 1e-3   # (rad/s)^2: a rigid-body mode's omega^2 printed as round-off about zero
CCX_TIMEOUT = 600  # seconds for one ccx run

_MODE_LINE = re.compile(r"^\s*(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*$")


class RefError(Exception):
    pass


def read_dat(path):
    """The (mode, omega^2) pairs of the eigenvalue block(s) of a .dat file."""
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise RefError(f"{path}: {e.strerror}")
    out = []
    i = 0
    while i < len(lines):
        if "E I G E N V A L U E   O U T P U T" in lines[i]:
            i += 1
            while i < len(lines) and not _MODE_LINE.match(lines[i]):
                i += 1
            while i < len(lines) and _MODE_LINE.match(lines[i]):
                m = _MODE_LINE.match(lines[i])
                try:
                    out.append((int(m.group(1)), float(m.group(2))))
                except ValueError:
                    raise RefError(f"{path}:{i + 1}: not an eigenvalue line")
                i += 1
        else:
            i += 1
    if not out:
        raise RefError(f"{path}: no eigenvalue output (is the step a *FREQUENCY step?)")
    return out


def read_eig(path, nev_dat):
    """The nev doubles omega^2 at the head of a non-cyclic ccx 2.20 .eig file."""
    try:
        with open(path, "rb") as f:
            head = f.read(16)
            if len(head) < 16:
                raise RefError(f"{path}: shorter than its header (16 bytes)")
            cyc, herm, pert, nev = struct.unpack("<4i", head)
            if cyc != 0 or pert != 0:
                raise RefError(f"{path}: cyclic symmetry or perturbation run (flags {cyc}, {pert}): "
                               "not supported")
            if nev != nev_dat:
                raise RefError(f"{path}: {nev} eigenvalues, the .dat has {nev_dat}")
            body = f.read(8 * nev)
    except OSError as e:
        raise RefError(f"{path}: {e.strerror} (does the deck say *FREQUENCY, STORAGE=YES?)")
    if len(body) < 8 * nev:
        raise RefError(f"{path}: shorter than its {nev} eigenvalues")
    return list(struct.unpack(f"<{nev}d", body))


def run(deck):
    deck = os.path.abspath(deck)
    folder, name = os.path.split(deck)
    job = name[:-4] if name.lower().endswith(".inp") else name
    if not os.path.isfile(os.path.join(folder, job + ".inp")):
        raise RefError(f"{deck}: no such deck")
    for ext in (".dat", ".eig"):
        try:
            os.remove(os.path.join(folder, job + ext))
        except FileNotFoundError:
            pass
    env = dict(os.environ, OMP_NUM_THREADS="1")
    try:
        r = subprocess.run(["ccx", "-i", job], cwd=folder, env=env, capture_output=True, text=True,
                           timeout=CCX_TIMEOUT)
    except FileNotFoundError:
        raise RefError("ccx not found (make setup installs calculix-ccx)")
    except subprocess.TimeoutExpired:
        raise RefError(f"{deck}: ccx took more than {CCX_TIMEOUT} s")
    err = [l.strip() for l in r.stdout.splitlines() if "*ERROR" in l]
    if r.returncode != 0 or err:
        raise RefError(f"{deck}: ccx failed ({err[0] if err else 'exit status %d' % r.returncode})")
    neq = re.search(r"number of equations\s+(\d+)", r.stdout)
    with open(os.path.join(folder, job + ".log"), "w") as f:
        f.write(r.stdout)
    dat = read_dat(os.path.join(folder, job + ".dat"))
    eig = read_eig(os.path.join(folder, job + ".eig"), len(dat))
    for k, ((mode, printed), w2) in enumerate(zip(dat, eig)):
        if mode != k + 1:
            raise RefError(f"{job}.dat: mode {mode} where {k + 1} was expected")
        if abs(printed - w2) > max(DAT_RTOL * abs(w2), DAT_ATOL):
            raise RefError(f"{job}.eig: eigenvalue {k + 1} is {w2!r}, the .dat prints {printed!r}")
    return {
        "equations": int(neq.group(1)) if neq else None,
        "eigenvalues": eig,
        "frequencies_hz": [math.copysign(math.sqrt(abs(w2)), w2) / (2 * math.pi) for w2 in eig],
    }


def main(argv):
    decks = argv
    if not decks:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    out = {}
    try:
        for d in decks:
            job = os.path.basename(d)
            out[job[:-4] if job.lower().endswith(".inp") else job] = run(d)
    except RefError as e:
        print(f"ccx_reference.py: {e}", file=sys.stderr)
        return 1
    json.dump(out, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
