"""Source 001 Sec. 3.2's descriptor variant whose spurious eigenvalues are zero instead of infinite
(issue 70, item 6), through the CLI: `--method descriptor --descriptor-zero`.
Usage: descriptor_zero_test.py MBLIN (run from the source root; OPENBLAS_CORETYPE may be set).

On the four-bars of source 001 Sec. 4.1 (N = 1, 5, the damped N = 1 of Table 2, and the singular
configuration of Fig. 4, where one of the m = 4 constraint rows is dropped: r = 3), the physical
eigenvalues equal the default (infinite) variant's, and the other 3 r are spurious, as the source
counts them, and zero: a size-3 Jordan block at zero splits under rounding by about eps^(1/3) of the
pencil's scale, so each is asked to be below ZERO_TOL = 10 eps^(1/3) times the largest physical
modulus (measured: 4.2e-7 and below against 2.6e-4 allowed on the damped four-bar)."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, finish  # noqa: E402

MBLIN = sys.argv[1]
EPS = 2.0 ** -52
ZERO_TOL = 10 * EPS ** (1.0 / 3.0)
PHYS_TOL = 1e-10  # relative: both variants refine their physical pairs by Newton on their own pencil


def run(*args):
    p = subprocess.run([MBLIN, *args], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def spectrum(path, *extra):
    rc, out, err = run("linearize", path, "--method", "descriptor", "--json", "--no-matrices", *extra)
    check(rc == 0, "%s %s: %s" % (path, " ".join(extra), err.strip()))
    if rc:
        return None
    d = json.loads(out)
    phys = sorted((complex(e["re"], e["im"]) for e in d["eigenvalues"] if not e["spurious"]),
                  key=lambda s: (s.imag, s.real))
    spur = [e for e in d["eigenvalues"] if e["spurious"]]
    return phys, spur, d["notes"]


for path, r in [("examples/fourbar_N1.yaml", 4), ("examples/fourbar_N5.yaml", 12),
                ("examples/fourbar_N1_damped.yaml", 4), ("examples/fourbar_singular.yaml", 3)]:
    ref, zero = spectrum(path), spectrum(path, "--descriptor-zero")
    if not ref or not zero:
        continue
    scale = max(abs(s) for s in ref[0])
    check(len(ref[0]) == len(zero[0]) and all(abs(a - b) <= PHYS_TOL * scale for a, b in zip(ref[0], zero[0])),
          "%s: physical %s, the default variant's %s" % (path, zero[0], ref[0]))
    check(len(zero[1]) == 3 * r, "%s: %d spurious, 3 r = %d" % (path, len(zero[1]), 3 * r))
    big = max(abs(complex(e["re"], e["im"])) for e in zero[1])
    check(big <= ZERO_TOL * scale, "%s: the largest spurious modulus %.3g <= %.3g" % (path, big, ZERO_TOL * scale))
    check(all(e["re"] is None for e in ref[1]) or len(ref[1]) == 3 * r,
          "%s: the default variant's spurious ones are infinite (%d)" % (path, len(ref[1])))
    check("zero variant" in zero[2] and "%d spurious (zero)" % (3 * r) in zero[2], "%s: notes: %s" % (path, zero[2]))

# refused where it does not apply, in one line
rc, out, err = run("linearize", "examples/nh_sleigh.yaml", "--method", "descriptor", "--descriptor-zero")
check(rc != 0 and "zero variant (desc_zero) takes holonomic constraints" in err and len(err.strip().splitlines()) == 1,
      "the sleigh (non-holonomic) refused: %s" % err.strip())
rc, out, err = run("linearize", "examples/fourbar_N1.yaml", "--method", "descriptor", "--descriptor-zero", "--nev", "2")
check(rc != 0 and "takes the dense QZ path only" in err, "--nev refused: %s" % err.strip())
sys.exit(finish("descriptor_zero_test"))
