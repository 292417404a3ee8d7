"""The error estimates of penalty and descriptor bound their deviation from augmented (issue 30,
item 9). Usage: estimates_test.py MBLIN (run from the source root; OPENBLAS_CORETYPE may be set)."""
import json
import math
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "kernels"))
import cores  # noqa: E402

MBLIN = sys.argv[1]
FAILS = []
KERNEL = None  # OPENBLAS_CORETYPE forced for a case (None: the environment's)


def run(model, *args):
    env = dict(os.environ, OPENBLAS_CORETYPE=KERNEL) if KERNEL else None
    p = subprocess.run([MBLIN, "linearize", model, *args, "--json", "--no-matrices"], capture_output=True,
                       text=True, timeout=600, env=env)
    if p.returncode:
        raise SystemExit(f"mblin linearize {model} {' '.join(args)} failed: {p.stderr}")
    return json.loads(p.stdout)


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILS.append(what)


# the light sleigh (u = 0.45, m = 0.02): under SkylakeX penalty's own estimate of its slow root was
# 8.9e-10 for a deviation of 4.5e-9 (issue 65, item 8): run under it too where the CPU has it
SKX = "SkylakeX" if cores.runnable("SkylakeX", cores.cpu_flags()) else None
CASES = [("examples/nh_sleigh.yaml", ["--set", "u=0.015"]),
         ("examples/nh_sleigh.yaml", ["--set", "u=0.45", "--set", "m=0.02"]),
         ("examples/nh_sleigh.yaml", []),
         ("examples/whipple_bicycle_nonlinear.yaml", ["--set", "v=6"]),
         ("examples/sim/rotor_stator_ramp.yaml", ["--set", "ramp=0"]),
         # with the ramp (a point with motion) the descriptor's pencil is in q: its double pair at 0.7991i
         # split by +-4.3e-5, estimated at 1e-9 (issue 65, item 8)
         ("examples/sim/rotor_stator_ramp.yaml", []),
         ("examples/fourbar_N1.yaml", [])]
RUNS = [(model, sets, None) for model, sets in CASES]
if SKX:
    RUNS += [("examples/nh_sleigh.yaml", ["--set", "u=0.45", "--set", "m=0.02"], SKX),
             ("examples/nh_sleigh.yaml", ["--set", "u=0.015"], SKX)]
for model, sets, KERNEL in RUNS:
    ref = [complex(e["re"], e["im"]) for e in run(model, *sets)["eigenvalues"] if not e["spurious"]]
    for method in ("penalty", "descriptor"):
        d = run(model, *sets, "--method", method)
        worst = 0.0
        for e in d["eigenvalues"]:
            if e["spurious"]:
                continue
            s = complex(e["re"], e["im"])
            dev = min(abs(s - r) for r in ref)
            est = e.get("error_estimate")
            ok = est is not None and dev <= est
            worst = max(worst, dev / est if est else math.inf if dev else 0.0)
            if not ok:
                check(False, f"{model} {' '.join(sets)} {method}: {s:.10g} deviates {dev:.3g}, estimate {est}")
        check(worst <= 1.0, f"{model} {' '.join(sets)} {method}{' under ' + KERNEL if KERNEL else ''}: every "
                            f"deviation within its estimate (largest ratio {worst:.3g})")
KERNEL = None

# the double pair of the rotor-stator at rest: the descriptor agrees with augmented within its estimate
ref = run("examples/sim/rotor_stator_ramp.yaml", "--set", "ramp=0")["eigenvalues"]
des = run("examples/sim/rotor_stator_ramp.yaml", "--set", "ramp=0", "--method", "descriptor")["eigenvalues"]
pair = [complex(e["re"], e["im"]) for e in ref if abs(e["im"] - 0.7990778) < 1e-6]
got = [e for e in des if not e["spurious"] and abs(e["im"] - 0.7990778) < 1e-6]
check(len(pair) == 2 and len(got) == 2 and all(abs(complex(e["re"], e["im"]) - pair[0]) <= e.get("error_estimate", -1)
                                               for e in got),
      "rotor-stator at rest: the descriptor's double pair at 0.7991i is augmented's within its estimate")
# with the spin ramp (a point with motion) the descriptor's pencil is in the model's coordinates: said so
d = run("examples/sim/rotor_stator_ramp.yaml", "--method", "descriptor")
check("point with motion" in d["notes"], "rotor-stator with the ramp: the descriptor notes the point with motion")

if FAILS:
    print(f"{len(FAILS)} failed")
    sys.exit(1)
print("all passed")
