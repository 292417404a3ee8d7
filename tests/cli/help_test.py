#!/usr/bin/env python3
"""Issue 66, item 5: one help text per command and per option. `mblin --help` lists every command
with its one line (cli/main.c's table); `mblin CMD --help` prints that same line under its usage
line. The options of linearize, equilibrium, check, compare and report are listed in `mblin --help`
with the same text as in each of those commands' --help, followed (when not all five take it) by the
commands that take it: exactly those whose --help lists it. Before the item cmd_linearize.c kept a
second table whose lines had drifted (report's line, the --method text). The options every command
takes (--allow-user-code, issue 68) are in every command's --help with the text of `mblin --help`.
usage: help_test.py PATH_TO_MBLIN (run from the repository root)"""
import os
import re
import subprocess
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, finish  # noqa: E402

MBLIN = sys.argv[1]
PIPELINE = ("linearize", "equilibrium", "check", "compare", "report")


def run(*args):
    p = subprocess.run([MBLIN, *args], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def block(text, header):
    """The lines after the line starting with header, up to the next blank line."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.startswith(header):
            out = []
            for line2 in lines[i + 1:]:
                if not line2.strip():
                    break
                out.append(line2)
            return out
    return None


def options(lines):
    """{head: text} of an options block: a head line starts with two spaces and '-', the text
    follows the head after two or more spaces, continuation lines are indented further."""
    opts, head = {}, None
    for line in lines:
        m = re.match(r"^  (-\S+(?: [A-Z][A-Z0-9=,.:]*)?)(?:\s{2,}(.*))?$", line)
        if m:
            head = m.group(1)
            opts[head] = (m.group(2) or "").strip()
        elif head and line.startswith("    "):
            opts[head] = (opts[head] + " " + line.strip()).strip()
    return opts


rc, top, err = run("--help")
check(rc == 0 and err == "", "mblin --help exits 0 without stderr")
rc2, top2, _ = run("help")
check(rc2 == 0 and top2 == top, "mblin help prints the same as mblin --help")
listed = {}
for line in block(top, "commands:") or []:
    m = re.match(r"^  (\S+) MODEL\s{2,}(\S.*)$", line)
    if check(m is not None, "a command line of mblin --help: %r" % line):
        listed[m.group(1)] = m.group(2)
check(len(listed) >= 14 and set(PIPELINE) <= set(listed), "mblin --help lists every command: %s" % sorted(listed))

# every command's --help: usage line, blank line, the table's one line (the same text, not a copy)
for cmd, line in listed.items():
    rc, out, err = run(cmd, "--help")
    lines = out.split("\n")
    check(rc == 0 and err == "" and len(lines) > 3 and lines[0].startswith("usage: mblin %s MODEL" % cmd)
          and lines[1] == "", "%s --help starts with its usage line: %r" % (cmd, lines[:2]))
    check(len(lines) > 2 and lines[2] == line,
          "%s --help's line is mblin --help's: %r vs %r" % (cmd, lines[2] if len(lines) > 2 else None, line))
    check(max(len(x) for x in lines) <= 100, "%s --help fits 100 columns" % cmd)
check(max(len(x) for x in top.split("\n")) <= 100, "mblin --help fits 100 columns")

# the options every command takes (issue 68: --allow-user-code): in every command's --help with
# mblin --help's text
every = options(block(top, "options of every command:") or [])
check("--allow-user-code" in every, "mblin --help lists --allow-user-code among every command's options: %s"
      % sorted(every))
for cmd in listed:
    rc, out, err = run(cmd, "--help")
    own = options(block(out, "options:") or [])
    check(own.get("--allow-user-code") == every.get("--allow-user-code"),
          "%s --help's --allow-user-code has mblin --help's text: %r" % (cmd, own.get("--allow-user-code")))

# the options of the linearization commands: one text each, and who takes them
glob = options(block(top, "options of linearize") or [])
check("--method NAME" in glob and "-o DIR" in glob and "-o FILE" in glob,
      "mblin --help lists the linearization commands' options: %s" % sorted(glob))
takers = {head: [] for head in glob}
for cmd in PIPELINE:
    rc, out, err = run(cmd, "--help")
    own = options(block(out, "options:") or [])
    check("--help" in own and len(own) > 3, "%s --help lists its options" % cmd)
    for head, text in own.items():
        if head == "--help" or head in every:
            continue
        if not check(head in glob, "%s --help's %s is in mblin --help" % (cmd, head)):
            continue
        takers[head].append(cmd)
        g = glob[head]
        check(g == text or (g.startswith(text + " [") and g.endswith("]")),
              "%s: %s has mblin --help's text: %r vs %r" % (cmd, head, text, g))
for head, text in glob.items():
    m = re.search(r" \[([a-z, ]+)\]$", text)
    named = m.group(1).split(", ") if m and set(m.group(1).split(", ")) <= set(PIPELINE) else list(PIPELINE)
    check(takers[head] == named, "%s: taken by %s, mblin --help says %s" % (head, takers[head], named))
sys.exit(finish("test_cli_help"))
