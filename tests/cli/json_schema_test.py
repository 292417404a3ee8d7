#!/usr/bin/env python3
"""Issue 33, item 6: every command's JSON output against its JSON Schema (docs/schema/COMMAND.json,
draft 2020-12), on several examples each: schema_version first and equal to the schemas' version,
every key documented (the schemas forbid keys they do not list), every required key present, the
types as documented. Needs python3-jsonschema (make setup installs it): without it this test
fails, it never passes unchecked.
usage: json_schema_test.py PATH_TO_MBLIN (from the repository root)"""
import copy
import json
import os
import subprocess
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, finish  # noqa: E402

try:
    import jsonschema
except ImportError as e:
    print("json_schema_test: FAILED: python3-jsonschema is missing for %s (%s): make setup installs it"
          % (sys.executable, e), file=sys.stderr)
    sys.exit(1)

MBLIN = sys.argv[1]
SCHEMA_DIR = os.path.join("docs", "schema")


SP, BIKE, FLEX = "examples/slider_pendulum.yaml", "examples/whipple_bicycle.yaml", "examples/flexible_pendulum_beams.yaml"
MOTOR, ROTOR = "examples/ode/dc_motor_pendulum.yaml", "examples/mech/rigid_rotor.yaml"
RUNS = {
    "linearize": [[m, "--json"] for m in (SP, "examples/spring_pendulum.yaml", "examples/rolling_disc.yaml",
                                           "examples/nh_sleigh.yaml", ROTOR, BIKE, FLEX, MOTOR,
                                           "examples/mech/slider_pendulum_relative.yaml",
                                           "examples/mech/spatial_beam_pendulum.yaml", "examples/urdf/acrobot.urdf",
                                           "examples/rotating_pendulum_given.yaml")]
                 + [[SP, "--json", "--method", x] for x in ("descriptor", "penalty", "nullspace", "fd", "partition", "projection")]
                 + [[SP, "--json", "--no-matrices"], [FLEX, "--json", "--nev", "4"], [FLEX, "--json", "--nev", "4", "--no-matrices"],
                    ["examples/fourbar_N5.yaml", "--json", "--method", "penalty", "--nev", "4"],
                    ["examples/fourbar_singular.yaml", "--json", "--method", "descriptor"]],
    "equilibrium": [[m, "--json"] for m in (SP, "examples/rolling_disc.yaml", "examples/rotating_pendulum_steady.yaml", MOTOR)],
    "compare": [[m, "--json", "--repeat", "1"] for m in (SP, "examples/rolling_disc.yaml", MOTOR)],
    "sweep": [[BIKE, "--param", "v=0:10:6", "--json"], [SP, "--param", "k=10:20:3", "--param", "c=0:1:2", "--json"],
              [ROTOR, "--param", "Omega=0:100:4", "--orders", "1", "--json"]],
    "sensitivity": [[m, "--json"] for m in (SP, "examples/rotating_pendulum_steady.yaml", BIKE)]
                   + [[SP, "--json", "--shape", "theta", "--no-shapes"]],
    "boundary": [[BIKE, "--param", "v", "--near", "4.3", "--json"], [BIKE, "--param", "v", "--near", "6", "--json"],
                 [ROTOR, "--param", "Omega", "--near", "100", "--order", "1", "--json"],
                 ["tests/study/floquet/mathieu.yaml", "--param", "delta", "--near", "1.2", "--floquet", "pi", "--json"]],
    "simulate": [[SP, "--t-end", "0.2", "--json"], ["examples/rolling_disc.yaml", "--t-end", "0.2", "--json"],
                 [MOTOR, "--t-end", "0.1", "--json"], [MOTOR, "--t-end", "0.1", "--integrator", "ssode", "--json"],
                 ["tests/sim/forced_mass.yaml", "--t-end", "8", "--input", "F=random:band=1:3,rms=1", "--psd", "x,F", "--json"]],
    "validate": [[SP, "--modes", "2", "--periods", "3", "--json"], ["examples/spring_pendulum.yaml", "--modes", "1", "--periods", "3", "--json"]],
    "freqresp": [["tests/study/chain3_mimo.yaml", "--w", "1:100:5", "--json"],
                 [MOTOR, "--from", "V", "--to", "cur", "--w", "0.1:100:4", "--json"],
                 [SP, "--w", "0:0.797302985861869:3", "--linear", "--json"]],
    "symbolic": [[m, "--format", "json"] for m in (SP, "examples/spring_pendulum.yaml", MOTOR, "examples/rotating_pendulum_given.yaml")]
                + [[SP, "--format", "json", "--point", "symbols"]],
    "floquet": [["tests/study/floquet/mathieu.yaml", "--period", "pi", "--json", "--samples", "3"],
                ["tests/study/floquet/duffing.yaml", "--param", "w", "--shoot", "--set", "c=0.4", "--json"],
                [SP, "--period", "0.5", "--json"],
                ["tests/study/floquet/coleman3.yaml", "--param", "Omega", "--mbc", "z1,z2,z3", "--json"]],
}
# issue 71: mblin optimize (the least damping at a double eigenvalue; a band constraint; a peak; the largest
# real part moved onto a double eigenvalue by Newton steps)
RUNS["optimize"] = [["tests/opt/tmd.yaml", "--vary", "k2:0.02:0.08,c2:0.001:0.05", "--objective", "max:min-damping", "--json"],
                    ["tests/study/two_mass.yaml", "--vary", "k1:400:1600,k2:150:600", "--objective", "min:change",
                     "--constraint", "freq:1!=2.5:2.9", "--json"],
                    ["tests/opt/tmd.yaml", "--vary", "k2:0.02:0.08,c2:0.001:0.05", "--objective", "min:peak:F:x1:0.1:0.25",
                     "--json"],
                    ["tests/opt/tmd.yaml", "--vary", "k2:0.02:0.08,c2:0.001:0.05", "--objective", "min:max-real", "--json"]]
# issue 70, item 1: mblin sparsity (a refused method among them: the singular four-bar)
RUNS["sparsity"] = [[m, "--json"] for m in (SP, "examples/fourbar_singular.yaml", "examples/flexible_pendulum_np5.yaml")]
# Issue 65, item 19: every example's linearize --json (a new example is checked without naming it here;
# the singular four-bar with the method that works there), and the trimmed models' equilibrium --json
# (operating_point.trim). EXAMPLE_ARGS: the options an example needs.
EXAMPLE_ARGS = {"examples/fourbar_singular.yaml": ["--method", "descriptor"]}
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "kernels"))
from agree import needs_fe_part, needs_user_code  # noqa: E402  (an FE part that make_part.sh writes: test_fe_ccx)
EXAMPLES = sorted(os.path.join(d, f) for d, _, fs in os.walk("examples") for f in fs
                  if f.endswith((".yaml", ".urdf")) and not needs_fe_part(os.path.join(d, f)))
check(len(EXAMPLES) >= 60, "the examples are found (%d)" % len(EXAMPLES))
# the sanitized build checks every third example (tests/README.md, "Keeping make test short": 113
# runs took 64 s there, 1.8 s here; the schema is the release build's, checked whole there)
if os.environ.get("MBLIN_SANITIZED") == "1":
    EXAMPLES = EXAMPLES[::3]
listed = {tuple(r) for r in RUNS["linearize"]}
# a model of user routines in a library runs when allowed (docs/user-routines.md)
EXAMPLE_ARGS.update({m: ["--allow-user-code"] for m in EXAMPLES if needs_user_code(m)})
RUNS["linearize"] += [[m, "--json"] + EXAMPLE_ARGS.get(m, []) for m in EXAMPLES
                      if (m, "--json", *EXAMPLE_ARGS.get(m, [])) not in listed]
TRIMMED = ["examples/vehicle/single_track_turn.yaml", "examples/vehicle/mech_single_track_turn.yaml"]
RUNS["equilibrium"] += [[m, "--json"] for m in TRIMMED]
# keys that only some outputs have: each must be seen at least once, so the examples cover the schema
OPTIONAL_SEEN = {"linearize": ["ss", "mck", "mode_shapes", "q_S", "descriptor", "flexible_bodies", "velocity_transformation"],
                 "sweep": ["critical_speeds"], "sensitivity": ["named_mode"],
                 "symbolic": ["point_values", "ode_states", "velocity_values"], "floquet": ["mbc"]}
OP_SEEN = {"linearize": ["trim"], "equilibrium": ["trim"]}  # keys of operating_point that only some have

versions = set()
for cmd, runs in RUNS.items():
    path = os.path.join(SCHEMA_DIR, cmd + ".json")
    schema = json.load(open(path))
    jsonschema.Draft202012Validator.check_schema(schema)
    versions.add(schema["properties"]["schema_version"]["const"])
    v = jsonschema.Draft202012Validator(schema)
    seen, op_seen = set(), set()
    first = None
    for args in runs:
        p = subprocess.run([MBLIN, cmd, *args], capture_output=True, text=True, timeout=300,
                           env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))
        what = "mblin %s %s" % (cmd, " ".join(args))
        if p.returncode != 0:
            check(False, "%s: exit %d %s" % (what, p.returncode, p.stderr))
            continue
        try:
            d = json.loads(p.stdout)
        except ValueError as e:
            check(False, "%s: not JSON: %s" % (what, e))
            continue
        first = first or d
        errors = ["%s: %s" % ("/".join(map(str, e.absolute_path)), e.message[:200]) for e in v.iter_errors(d)]
        check(not errors, "%s against %s: %s" % (what, path, "; ".join(errors[:5])))
        check(next(iter(d)) == "schema_version", "%s: schema_version is the first key" % what)
        seen |= set(d)
        op_seen |= set(d.get("operating_point", {}))
    for k in OPTIONAL_SEEN.get(cmd, []):
        check(k in seen, "%s: the examples show the optional key '%s'" % (cmd, k))
    for k in OP_SEEN.get(cmd, []):
        check(k in op_seen, "%s: the examples show the optional key 'operating_point.%s'" % (cmd, k))
    if first:  # the schema refuses an undocumented key and a missing required one (the check can fail)
        bad = copy.deepcopy(first)
        bad["undocumented_key"] = 1
        check(not v.is_valid(bad), "%s: an undocumented key is refused" % cmd)
        bad = copy.deepcopy(first)
        del bad[schema["required"][-1]]
        check(not v.is_valid(bad), "%s: a missing required key is refused" % cmd)
check(versions == {1}, "every schema is version 1 (MBL_JSON_SCHEMA_VERSION): %s" % versions)
hdr = open(os.path.join("include", "mblin", "json.h")).read()
check("#define MBL_JSON_SCHEMA_VERSION 1\n" in hdr, "include/mblin/json.h defines MBL_JSON_SCHEMA_VERSION 1")
check(sorted(f[:-5] for f in os.listdir(SCHEMA_DIR) if f.endswith(".json")) == sorted(RUNS),
      "one schema per command with JSON output, each tested")

sys.exit(finish("json_schema_test"))
