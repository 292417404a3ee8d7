"""fd's velocity Newton stops at its rounding floor (issue 31, item 1). The single-track car of
examples/vehicle/mech_single_track_turn.yaml in its steady turn, with the position of cg in the
chassis' axes as states (100 m from the turn's centre at R = 100): the rounding of the velocity
constraints stalled the Newton step at 1.26e-13 against a threshold of 5.9e-14 (8 ulps of max |v|),
and fd refused ("the velocity constraints did not converge") at R = 100 but not at 20 or 1000.
Now fd linearizes at each radius and every eigenvalue is augmented's within fd's own error
estimate; the path's pair is +-i u/R (closed form). Usage: fd_floor_test.py MBLIN (run from the
source root; OPENBLAS_CORETYPE may be set)."""
import json
import os
import subprocess
import sys
import tempfile

MBLIN = sys.argv[1]
FAILS = []
SRC = "examples/vehicle/mech_single_track_turn.yaml"
STATES = ('  states: ["DX(cg, O, cg)", "DY(cg, O, cg)", "atan2(DY(nose, cg), DX(nose, cg))", "JQ(steer)", '
          '"JQ(front_axle)", "JQ(rear_axle)"]\n')


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILS.append(what)


def run(model, *args):
    p = subprocess.run([MBLIN, "linearize", model, *args, "--json", "--no-matrices"], capture_output=True,
                       text=True, timeout=600)
    return p.returncode, p.stderr.strip(), json.loads(p.stdout) if p.returncode == 0 else None


with open(SRC) as f:
    lines = f.readlines()
cut = next(i for i, ln in enumerate(lines) if ln.startswith("  states:"))
with tempfile.TemporaryDirectory() as tmp:
    model = os.path.join(tmp, "turn_chassis_axes.yaml")
    with open(model, "w") as f:
        f.writelines(lines[:cut] + [STATES])
    for R in (20, 100, 1000):
        rc, err, ref = run(model, "--set", f"R={R}")
        check(rc == 0, f"R = {R}: augmented linearizes ({err})")
        rc, err, fd = run(model, "--set", f"R={R}", "--method", "fd")
        check(rc == 0, f"R = {R}: fd linearizes ({err})")
        if not ref or not fd:
            continue
        est = fd["error_estimate"]
        aug = [complex(e["re"], e["im"]) for e in ref["eigenvalues"]]
        got = [complex(e["re"], e["im"]) for e in fd["eigenvalues"]]
        dev = max(min(abs(s - r) for r in aug) for s in got) if got else float("inf")
        check(len(got) == len(aug) == 10 and dev <= est,
              f"R = {R}: fd's {len(got)} eigenvalues are augmented's within its estimate (deviation {dev:.3g}, "
              f"estimate {est:.3g})")
        if "DX_cg_O_cg" not in fd["states"]:
            continue  # (R = 1000: the selection takes the front wheel's ground coordinates, not modal)
        w = 20.0 / R  # the path's pair in the chassis' axes: +-i u/R, u = 20 m/s
        near = [min(got, key=lambda s, t=t: abs(s - t)) for t in (1j * w, -1j * w)]
        pdev = max(abs(near[0] - 1j * w), abs(near[1] + 1j * w))
        check(near[0].imag > 0 > near[1].imag and pdev <= est,
              f"R = {R}: fd's path pair is +-{w:.4g}i within its estimate (deviation {pdev:.3g})")

if FAILS:
    print(f"{len(FAILS)} failed")
    sys.exit(1)
print("all passed")
