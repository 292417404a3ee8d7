#!/usr/bin/env python3
"""Output files never written through a symbolic link planted at their name (issue 65, item 14;
docs/cli.md, "Output files"), and a bad option value echoed only in part (item 20).

For each of `sweep -o DIR`, `freqresp -o DIR`, `report -o FILE`, `simulate -o FILE`, `codegen -o
FILE` (and `linearize -o DIR`, which did so before): a link at the output name points to a file
outside the output whose bytes are known; after the run the link is replaced by a regular file
holding the command's output, and the file it pointed to still has exactly its bytes. A dangling
link is replaced too (fopen would have made its target). `-o /dev/stdout` still writes to stdout.

A 100 KB --method value: the error names the option's value by its first 40 characters and "...",
the message stays one short line, exit status 2.
usage: output_links_test.py PATH_TO_MBLIN (run from the repository root)"""
import os
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, finish  # noqa: E402

MBLIN = sys.argv[1]
SLIDER = "examples/slider_pendulum.yaml"
VICTIM = b"a file the run must not touch\n"


def run(*args):
    p = subprocess.run([MBLIN, *args], capture_output=True, timeout=120)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def planted(tmp, name, what, args, first, dangling=False):
    """run args with a link at name (to a victim file, or dangling); the link replaced by a file
    starting with `first`, the victim untouched"""
    victim = os.path.join(tmp, "victim_%s" % what.replace(" ", "_"))
    if dangling:
        target = victim + ".new"
    else:
        with open(victim, "wb") as f:
            f.write(VICTIM)
        target = victim
    d = os.path.dirname(name)
    if d:
        os.makedirs(d, exist_ok=True)
    os.symlink(target, name)
    rc, out, err = run(*args)
    check(rc == 0, "%s: exit 0 (%d: %s)" % (what, rc, err[-300:]))
    check(not os.path.islink(name) and os.path.isfile(name), "%s: the link at %s replaced by a file" % (what, name))
    if os.path.isfile(name) and not os.path.islink(name):
        with open(name, "rb") as f:
            head = f.read(len(first))
        check(head == first, "%s: %s holds the output (%r)" % (what, name, head))
    if dangling:
        check(not os.path.exists(target), "%s: the dangling link's target not made" % what)
    else:
        with open(victim, "rb") as f:
            check(f.read() == VICTIM, "%s: the file the link pointed to is unchanged" % what)


with tempfile.TemporaryDirectory(prefix="mblin_links_") as tmp:
    d = os.path.join(tmp, "sweep")
    planted(tmp, os.path.join(d, "sweep.csv"), "sweep -o DIR",
            ["sweep", SLIDER, "--param", "k=10:30:3", "-o", d], b"k,")
    d = os.path.join(tmp, "fr")
    planted(tmp, os.path.join(d, "freqresp.csv"), "freqresp -o DIR",
            ["freqresp", SLIDER, "--from", "F", "--to", "tip", "--w", "0.1:10:5", "-o", d], b"w_rad_s,")
    page = os.path.join(tmp, "r.html")
    planted(tmp, page, "report -o", ["report", SLIDER, "-o", page], b"<!DOCTYPE html>")
    csv = os.path.join(tmp, "run.csv")
    planted(tmp, csv, "simulate -o", ["simulate", SLIDER, "--t-end", "1", "--dt-out", "0.5", "-o", csv], b"t,y,theta")
    code = os.path.join(tmp, "lin.c")
    planted(tmp, code, "codegen -o", ["codegen", SLIDER, "--lang", "c", "-o", code], b"/*")
    d = os.path.join(tmp, "lin")
    planted(tmp, os.path.join(d, "A.mtx"), "linearize -o DIR", ["linearize", SLIDER, "-o", d], b"%%MatrixMarket")
    csv2 = os.path.join(tmp, "dangling.csv")
    planted(tmp, csv2, "simulate -o (dangling link)", ["simulate", SLIDER, "--t-end", "1", "-o", csv2], b"t,y,theta",
            dangling=True)
    # the system's name of stdout is still written through
    rc, out, err = run("simulate", SLIDER, "--t-end", "1", "--dt-out", "0.5", "-o", "/dev/stdout")
    check(rc == 0 and out.startswith("t,y,theta,") and (os.path.islink("/dev/stdout") or not os.path.lexists("/dev/stdout")),
          "simulate -o /dev/stdout: the CSV on stdout, /dev/stdout left (%d: %s)" % (rc, (out + err)[:200]))

# --- item 20: a 100 KB option value is not echoed whole ---
long_value = "m" * 100000
rc, out, err = run("linearize", SLIDER, "--method", long_value)
lines = err.strip().split("\n")
check(rc == 2 and len(lines) == 1, "--method 100 KB: one line, exit 2 (%d, %d lines)" % (rc, len(lines)))
check("'" + "m" * 40 + "...'" in err and "m" * 41 not in err,
      "--method 100 KB: the first 40 characters and '...' (%s)" % err[:160])
check(len(err) < 300 and "available: augmented" in err, "--method 100 KB: a short line naming the methods (%d)" % len(err))
rc, out, err = run("linearize", SLIDER, "--at", long_value)
check(rc == 2 and "m" * 41 not in err and len(err) < 300, "--at 100 KB: capped too (%d: %s)" % (rc, err[:160]))
rc, out, err = run(long_value)
check(rc == 2 and "unknown command '" + "m" * 40 + "...'" in err and len(err) < 300,
      "a 100 KB command name: capped (%d: %s)" % (rc, err[:160]))
rc, out, err = run("freqresp", SLIDER, "--from", long_value, "--to", "tip", "--w", "1:10:3")
check(rc == 2 and "no input '" + "m" * 40 + "...'" in err and "(inputs: F)" in err and len(err) < 300,
      "freqresp --from 100 KB: capped, the model's inputs named (%d: %s)" % (rc, err[:160]))
rc, out, err = run("freqresp", SLIDER, "--from", "F", "--to", long_value, "--w", "1:10:3")
check(rc == 2 and "no output '" + "m" * 40 + "...'" in err and len(err) < 300,
      "freqresp --to 100 KB: capped (%d: %s)" % (rc, err[:160]))
rc, out, err = run("linearize", SLIDER, "--method", "nosuch")
check(rc == 2 and "unknown linearization method 'nosuch' (available:" in err, "a short value whole (%s)" % err.strip())
sys.exit(finish("output_links_test"))
