"""Refusals and messages a new-user review asked for (src/mech, src/opoint, src/report):

  - the top-level `modal_damping` is checked even without modal bodies: -0.1, a text, a list and
    1e400 are refused with file:line:col naming the key; a valid number without any modal body is
    refused too (it would have no effect); with a modal body it works (test_modal_damping.py);
  - `orientation: euler313` in a planar mechanism is refused naming the key (planar bodies have
    one angle);
  - a spring between two coincident markers: `check` says the model (not the constraints) cannot
    be evaluated and names the force once; `linearize` names the file once.
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
sys.exit(1 if check.fails else 0)
