#!/usr/bin/env python3
"""docs/tutorial.md does what it says: every command of its ```console blocks is run and prints
what the page shows, and every picture the page shows is the one its command draws.

    python3 tests/docs/tutorial_test.py MBLIN            # check (make test)
    python3 tests/docs/tutorial_test.py MBLIN --update   # rewrite the outputs and pictures (authoring)

The page's conventions:
  - in a ```console block a line `$ COMMAND` is run by bash, from a scratch folder where
    `examples` is the repository's examples/ and MBLIN's folder is first on PATH (so `mblin` is the
    tool under test), with standard error joined to standard output; the lines up to the next `$ `
    or the block's end are what it prints. A line `...` there stands for any number of lines;
  - an HTML comment `<!-- picture: FILE -->` right above an image `![...](tutorial/NAME.svg)` says
    that a command of the page wrote FILE (relative to the scratch folder) and that the image is it.
Printed text and pictures are compared token by token: words exactly, numbers to a relative 1e-6
(the page prints 6 to 9 digits; the BLAS kernels may move the last one) unless both are below 1e-5
(rounding-level values: a residual of 1e-19, a double zero split by rounding to 6e-7 i), and in pictures to 0.15 (their coordinates are
printed in tenths of a pixel). A page whose command fails, prints something else, or whose picture
is not the command's fails the test.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, finish  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PAGE = os.path.join(ROOT, "docs", "tutorial.md")
NUM = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
PICTURE = re.compile(r"^<!-- picture: (\S+) -->\s*$")
IMAGE = re.compile(r"^!\[[^\]]*\]\((tutorial/[\w.-]+\.svg)\)")
REL, ABS, PIXEL = 1e-6, 1e-5, 0.15


def tokens(text):
    """the text as a list of words and numbers (floats): whitespace does not count"""
    out, at = [], 0
    for m in NUM.finditer(text):
        out += text[at:m.start()].split()
        out.append(float(m.group()))
        at = m.end()
    return out + text[at:].split()


def printed_close(x, y):
    """two printed numbers: equal to REL, or both at the level of rounding (below ABS)"""
    return abs(x - y) <= REL * max(abs(x), abs(y)) or max(abs(x), abs(y)) <= ABS


def drawn_close(x, y):
    """two numbers of a picture (coordinates in pixels, labels): equal to PIXEL"""
    return abs(x - y) <= PIXEL


def same(a, b, close):
    ta, tb = tokens(a), tokens(b)
    if len(ta) != len(tb):
        return False
    for x, y in zip(ta, tb):
        if isinstance(x, float) != isinstance(y, float):
            return False
        if isinstance(x, float):
            if not close(x, y):
                return False
        elif x != y:
            return False
    return True


def lines_match(expected, got):
    """the expected lines (with `...` for any run of lines) against what the command printed"""
    def go(i, j):
        if i == len(expected):
            return j == len(got)
        if expected[i].strip() == "...":
            return any(go(i + 1, k) for k in range(j, len(got) + 1))
        return j < len(got) and same(expected[i], got[j], printed_close) and go(i + 1, j + 1)
    return go(0, 0)


def parse(lines):
    """the commands, each with its block's line range of output, and the pictures"""
    cmds, pics, inside, cur = [], [], False, None
    for n, line in enumerate(lines):
        if line.startswith("```"):
            if inside and cur:
                cmds.append(cur)
            inside, cur = line.strip() == "```console", None
            continue
        if inside:
            if line.startswith("$ "):
                if cur:
                    cmds.append(cur)
                cur = {"cmd": line[2:].rstrip("\n"), "line": n + 1, "out": (n + 1, n + 1)}
            elif cur:
                cur["out"] = (cur["out"][0], n + 1)
            continue
        m = PICTURE.match(line)
        if m and n + 1 < len(lines):
            im = IMAGE.match(lines[n + 1])
            if check(im is not None, "docs/tutorial.md:%d: a picture comment not followed by an image" % (n + 1)):
                pics.append({"file": m.group(1), "image": im.group(1), "line": n + 2})
    return cmds, pics


def main():
    if len(sys.argv) < 2:
        print("usage: tutorial_test.py MBLIN [--update]", file=sys.stderr)
        return 2
    mblin, update = os.path.abspath(sys.argv[1]), "--update" in sys.argv[2:]
    with open(PAGE, encoding="utf-8") as f:
        lines = f.readlines()
    cmds, pics = parse(lines)
    check(len(cmds) >= 10 and len(pics) >= 5, "the page has %d commands and %d pictures" % (len(cmds), len(pics)))
    scratch = tempfile.mkdtemp(prefix="mblin_tutorial_")
    os.symlink(os.path.join(ROOT, "examples"), os.path.join(scratch, "examples"))
    env = dict(os.environ, PATH=os.path.dirname(mblin) + os.pathsep + os.environ.get("PATH", ""),
               COLUMNS="100", LC_ALL="C")
    try:
        replace = {}
        for c in cmds:
            r = subprocess.run(["bash", "-o", "pipefail", "-c", c["cmd"]], cwd=scratch, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
            got = r.stdout.splitlines()
            a, b = c["out"]
            expected = [ln.rstrip("\n") for ln in lines[a:b]]
            where = "docs/tutorial.md:%d: `%s`" % (c["line"], c["cmd"])
            if update:
                replace[(a, b)] = [ln + "\n" for ln in got]
                continue
            if not check(r.returncode == 0, "%s exits %d:\n%s" % (where, r.returncode, r.stdout)):
                continue
            check(lines_match(expected, got), "%s prints\n%s\ninstead of what the page shows\n%s" %
                  (where, "\n".join(got), "\n".join(expected)))
        for p in pics:
            made, shown = os.path.join(scratch, p["file"]), os.path.join(ROOT, "docs", p["image"])
            where = "docs/tutorial.md:%d: %s" % (p["line"], p["image"])
            if not check(os.path.isfile(made), "%s: no command of the page wrote %s" % (where, p["file"])):
                continue
            if update:
                shutil.copyfile(made, shown)
                continue
            with open(made, encoding="utf-8") as f1, open(shown, encoding="utf-8") as f2:
                check(same(f1.read(), f2.read(), drawn_close), "%s is not the picture %s draws" % (where, p["file"]))
        if update:
            for (a, b) in sorted(replace, reverse=True):
                lines[a:b] = replace[(a, b)]
            with open(PAGE, "w", encoding="utf-8") as f:
                f.writelines(lines)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return finish("tutorial_test")


if __name__ == "__main__":
    sys.exit(main())
