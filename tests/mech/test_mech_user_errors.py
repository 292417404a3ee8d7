"""Refusals and messages a new-user review asked for (src/mech, src/opoint, src/report):

  - the top-level `modal_damping` is checked even without modal bodies: -0.1, a text, a list and
    1e400 are refused with file:line:col naming the key; a valid number without any modal body is
    refused too (it would have no effect); with a modal body it works (test_modal_damping.py);
  - `orientation: euler313` in a planar mechanism is refused naming the key (planar bodies have
    one angle);
  - a spring between two coincident markers: `check` says the model (not the constraints) cannot
    be evaluated and names the force once; `linearize` names the file once;
  - a spring of free length L0 > 0 whose markers meet at the solved point (a block on a rail
    across the spring's anchor, started on the anchor's line): its force has no direction there and
    its stiffness across the line, k L0 / L, is unbounded (the point mass on its rail gave
    eigenvalues +-9.57e6): refused with file:line:col naming the force, by the text path's singular
    item (a point mass) and by the numeric planar term (a rigid block); started apart, both find
    the equilibrium at L = L0 with the closed form s = (-c +- sqrt(c^2 - 4 m k)) / (2 m).
Usage: test_mech_user_errors.py MBLIN
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mechrun import Checks, linearize_text  # noqa: E402

B = sys.argv[1]
check = Checks()

SPRING = """model: mechanism
name: two markers
space: planar
{top}ground:
  markers: {{o: {{position: [0, 0]}}, a: {{position: [1, 0]}}}}
bodies:
  bar: {{mass: 1, inertia: 0.1, position: [1, 0], angle: 0, markers: {{p: {{position: [0, {py}]}}, h: {{position: [-1, 0]}}}}}}
joints:
  pin: {{type: revolute, i: h, j: o}}
forces:
  spring: {{type: spring, i: p, j: a, stiffness: 10, length: 1}}
"""


def refused(tag, text, *needles):
    p = linearize_text(B, text)
    lines = p.stderr.strip().split("\n")
    check(p.returncode != 0 and len(lines) == 1 and all(n in lines[0] for n in needles),
          f"{tag}: one-line error with {needles} (exit {p.returncode}: {p.stderr.strip()})")


# item 1: modal_damping validated always; line 4 col 16 is its value in the file
for v, say in [("-0.1", "-0.1 must be >= 0"), ("abc", "'abc' must be a number"),
               ("[0.1, 0.2]", "must be a number"), ("1e400", "1e400 must be >= 0 and finite"),
               ("0.02", "no modal body")]:
    refused(f"modal_damping: {v}", SPRING.format(top=f"modal_damping: {v}\n", py=0.5), ":4:16: modal_damping", say)
ok = linearize_text(B, SPRING.format(top="", py=0.5))
check(ok.returncode == 0, f"the same mechanism without modal_damping linearizes ({ok.stderr.strip()})")

# item 2: euler313 in a planar mechanism (the body level is refused as an unknown key already)
refused("planar euler313", SPRING.format(top="orientation: euler313\n", py=0.5), ":4:14:", "orientation euler313",
        "planar")
refused("planar body euler313", SPRING.format(top="", py=0.5).replace("angle: 0,", "angle: 0, orientation: euler313,"),
        "body 'bar'", "orientation")

# item 3: a force's failure named once, the file named once
with tempfile.TemporaryDirectory() as d:
    f = os.path.join(d, "coincident.yaml")
    with open(f, "w") as fh:
        fh.write(SPRING.format(top="", py=0))
    c = subprocess.run([B, "check", f], capture_output=True, text=True)
    out, err = c.stdout, c.stderr.strip()
    check(c.returncode != 0 and "the model cannot be evaluated at the initial configuration: force 'spring': the length is 0"
          in out and "constraints cannot" not in out and out.count("spring") == 1,
          f"check: the force named once, not the constraints ({out.strip()})")
    check(len(err.split("\n")) == 1 and err.count(".yaml") == 1 and "initial multipliers" not in err,
          f"check: its operating point's error names the file once ({err})")
    p = linearize_text(B, SPRING.format(top="", py=0))
    err = p.stderr.strip()
    check(p.returncode != 0 and len(err.split("\n")) == 1 and "force 'spring': the length is 0" in err
          and err.count(".yaml") == 1 and "initial multipliers" not in err,
          f"linearize: the file named once, the force named ({err})")

# item 4: a spring's markers meeting at the solved point (its direction undefined there)
RAIL = """model: mechanism
name: block on a rail with a spring
space: planar
parameters: {{m: 2, k: 200, c: 4, L0: 0.5, g: 9.81}}
ground:
  markers:
    O: {{position: [0, 0]}}
bodies:
  blk: {{{body}, position: [{x}, {y}], markers: {{B: {{}}}}}}
joints:
  rail: {{type: {rail}, i: B, j: O}}
forces:
  weight: {{type: gravity, g: [0, -g]}}
  spr: {{type: spring, i: B, j: O, stiffness: k, damping: c, length: L0}}
"""
m, k, c = 2.0, 200.0, 4.0
s_exact = complex(-c, (4 * m * k - c * c) ** 0.5) / (2 * m)
for path, body, rail in [("point mass (text path)", "type: point, mass: m", "inline"),
                         ("rigid block (numeric planar term)", "mass: m, inertia: 0.1, angle: 0", "prismatic")]:
    refused(f"{path}: markers meet", RAIL.format(body=body, rail=rail, x=0, y=-0.6), ":14:3: force 'spr' (spring)",
            "markers", "meet", "length / free length", "below 1e-06", "free length 0")
    p = linearize_text(B, RAIL.format(body=body, rail=rail, x=0.3, y=-0.6))
    ok_run = p.returncode == 0
    err = 1.0
    if ok_run:
        import json
        ev = [complex(e["re"], e["im"]) for e in json.loads(p.stdout)["eigenvalues"]]
        err = max(min(abs(e - t) for e in ev) for t in (s_exact, s_exact.conjugate())) / abs(s_exact)
    check(ok_run and err < 1e-12, f"{path}: started apart, s = {s_exact:.10g} to {err:.2g} ({p.stderr.strip()})")
sys.exit(1 if check.fails else 0)
