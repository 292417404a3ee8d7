#!/usr/bin/env python3
"""Ctrl-C and progress during `simulate` and `validate`, and validate's time budget (issue 65,
item 13; docs/simulation.md, "Progress, Ctrl-C and work limits").

On the flexible double pendulum with modal bodies (examples/flexible_pendulum_modal.yaml: 60 modal
coordinates; mode 1 perturbed, IDA takes some 7,000 steps per second of model time):

- `simulate --progress` prints "mblin: progress: simulate N%" lines while IDA integrates, N growing;
- SIGINT once such a line has come: exit 130 within 2 s of the signal (before: the integration ran
  to its end, 45 s on a loaded host), one line "interrupted (SIGINT) during simulate", the -o file
  gone, nothing on stdout ("... samples written to ..." was printed before);
- the same for `validate --max-time 0` (no limit) during its first mode's simulation;
- `validate` with the default limit (60 s of CPU time) is refused within seconds, naming the model
  time of its three runs: 40 periods of each of the three lowest modes, whose frequencies 1.33573,
  3.52443, 9.41753 rad/s are the beam's (tests/mech/test_flex.c), 40 * 2 pi * sum(1/omega) =
  286.2 s, and an estimate of the CPU time within a factor 3 of the rate `simulate` measures itself
  on the same start (mode 1 at the amplitude 1e-5 x max |q|, rtol 1e-11, atol 1e-8 x amplitude)
  over 0.3 s of model time, scaled to the 286.2 s; with --max-time 0 the same run is not refused
  (interrupted above); a limit of 1 us stops the slider pendulum's validation before any estimate.
usage: sim_interrupt_test.py PATH_TO_MBLIN (run from the repository root)"""
import math
import os
import re
import resource
import select
import signal
import subprocess
import sys
import tempfile
import time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, finish  # noqa: E402

MBLIN = sys.argv[1]
MODEL = "examples/flexible_pendulum_modal.yaml"
NEEDLE_WAIT = 30.0  # s for the needle (a build without these reports never prints it)


def interrupt_when(args, needle, count=1):
    """Run mblin, send SIGINT once stderr has had `count` lines containing needle; (rc, stdout,
    stderr lines, seconds from the signal to the exit or None when the needle never came)."""
    p = subprocess.Popen([MBLIN, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    lines, seen, t_sig, buf = [], 0, None, b""
    deadline = time.monotonic() + NEEDLE_WAIT
    while t_sig is None and time.monotonic() < deadline:
        r, _, _ = select.select([p.stderr], [], [], 0.1)
        if not r:
            if p.poll() is not None:
                break
            continue
        chunk = os.read(p.stderr.fileno(), 4096)
        if not chunk:
            break
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            lines.append(line.decode(errors="replace"))
            if needle in lines[-1]:
                seen += 1
                if seen == count and t_sig is None:
                    p.send_signal(signal.SIGINT)
                    t_sig = time.monotonic()
    if t_sig is None:
        p.kill()
    out, err = p.communicate(timeout=60)
    t_end = time.monotonic()
    lines += (buf + err).decode(errors="replace").split("\n")
    return p.returncode, out.decode(errors="replace"), [ln for ln in lines if ln], (t_end - t_sig) if t_sig else None


with tempfile.TemporaryDirectory(prefix="mblin_simint_") as tmp:
    # --- simulate: progress while IDA integrates, then Ctrl-C ---
    csv = os.path.join(tmp, "run.csv")
    rc, out, lines, lat = interrupt_when(["simulate", MODEL, "--t-end", "5", "--perturb", "1:0.01", "--progress",
                                          "-o", csv], "progress: simulate", count=2)
    pct = [int(m.group(1)) for ln in lines for m in [re.search(r"progress: simulate (\d+)%", ln)] if m]
    check(len(pct) >= 2 and pct == sorted(pct) and pct[-1] < 100,
          "simulate --progress: lines during the integration, growing (%s)" % pct)
    check(lat is not None, "simulate: a progress line of the integration came (%s)" % lines[-3:])
    check(rc == 130, "simulate: SIGINT during the integration: exit 130 (%s)" % rc)
    check(lat is not None and lat < 2.0, "simulate: stopped %.3f s after the signal" % (lat or -1))
    msg = [ln for ln in lines if not ln.startswith("mblin: progress: ")]
    check(msg == ["mblin: interrupted (SIGINT) during simulate; partial outputs removed"], "simulate: one line (%s)" % msg)
    check(not os.path.exists(csv), "simulate: no -o file left")
    print("simulate stopped %.3f s after SIGINT" % (lat or -1))
    check("samples" not in out and out == "", "simulate: nothing on stdout (%r)" % out[:120])

    # --- validate: Ctrl-C during its first simulation (no time limit) ---
    rc, out, lines, lat = interrupt_when(["validate", MODEL, "--max-time", "0", "--progress"], "progress: validate")
    check(rc == 130, "validate: SIGINT during the integration: exit 130 (%s)" % rc)
    check(lat is not None and lat < 2.0, "validate: stopped %.3f s after the signal" % (lat or -1))
    msg = [ln for ln in lines if not ln.startswith("mblin: progress: ")]
    check(msg == ["mblin: interrupted (SIGINT) during validate; partial outputs removed"], "validate: one line (%s)" % msg)
    check(out == "", "validate: nothing on stdout (%r)" % out[:120])
    print("validate stopped %.3f s after SIGINT" % (lat or -1))

# --- validate's time budget: refused at once, with an estimate that agrees with a measured rate ---
t0 = time.monotonic()
p = subprocess.run([MBLIN, "validate", MODEL], capture_output=True, text=True, timeout=300)
took = time.monotonic() - t0
err = p.stderr.strip().split("\n")
m = re.search(r"would take about ([0-9.e+]+) s of CPU time \(([0-9.e+]+) s of model time", p.stderr)
check(p.returncode == 1 and len(err) == 1 and m and "--max-time" in p.stderr,
      "validate: refused in one line naming --max-time (%d: %s)" % (p.returncode, p.stderr[:300]))
check(p.stdout == "", "validate refused: nothing on stdout")
omega = [1.33573, 3.52443, 9.41753]
span = 40 * 2 * math.pi * sum(1 / w for w in omega)
if m:
    check(abs(float(m.group(2)) - span) < 1, "validate: the model time %s s = 40 periods of modes 1-3 (%.1f s)"
          % (m.group(2), span))


def cpu_of(*args):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    q = subprocess.run([MBLIN, *args], capture_output=True, text=True, timeout=300)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    check(q.returncode == 0, "simulate for the rate (%s)" % q.stderr[:200])
    return (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)


amp = 1e-5 * 4.0035316  # 1e-5 x max(1, max |q|) at the equilibrium (link2's x, y)
common = ["simulate", MODEL, "--perturb", "1:%.8g" % amp, "--rtol", "1e-11", "--atol", "%.8g" % (1e-8 * amp),
          "--dt-out", "0.05"]
rate = (cpu_of(*common, "--t-end", "0.35") - cpu_of(*common, "--t-end", "0.05")) / 0.3
if m:
    est, meas = float(m.group(1)), rate * span
    check(est > 60 and meas / 3 < est < 3 * meas,
          "validate: the estimate %.0f s agrees with simulate's rate (%.2f s per model second: %.0f s)" % (est, rate, meas))
# past the limit before any estimate (1 us): stopped there, in one line
p = subprocess.run([MBLIN, "validate", "examples/slider_pendulum.yaml", "--max-time", "1e-6"], capture_output=True,
                   text=True, timeout=120)
check(p.returncode == 1 and p.stdout == "" and len(p.stderr.strip().split("\n")) == 1
      and "s of CPU time, more than the limit of 1e-06 s (--max-time)" in p.stderr,
      "validate --max-time 1e-6: stopped at the limit (%d: %s)" % (p.returncode, p.stderr[:300]))
print("validate refused after %.2f s (estimate %s s of CPU; simulate's rate: %.0f s)" % (took, m.group(1) if m else "?",
                                                                                         rate * span))
sys.exit(finish("sim_interrupt_test"))
