#!/usr/bin/env python3
"""The floors of the house hold (docs/architecture.md; issue 28).

    python3 tests/layering/check.py BUILD_DIR        (from the project root)

The floors are listed once, below (FLOORS), from the bottom. A folder may use its own floor's
folders and those below, never one above, and no two folders may use each other. "Use" is read
two ways, so that neither a header nor a declaration written by hand slips through:

1. includes: every `#include "X/..."` of a source or header file, X a code folder;
2. calls: the symbols each object file of the build leaves undefined (nm), resolved to the folder
   whose object files define them.

It also checks the API boundary and the size rules:

3. libmblin.so exports only what include/mblin declares (MBL_API with -fvisibility=hidden);
4. cli/ and python/ (thin clients) include only include/mblin headers (and their own, and the
   MPI plugin's interface src/par/par.h for cli/) and call only exported functions;
5. no .c or .h file over MAX_FILE_LINES lines unless listed in ONE_FAMILY with the reason it is
   one family; no function over MAX_FUNCTION_LINES lines.

Prints one line per violation and a summary; exit 1 on any violation, 0 otherwise.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# From the bottom. Folders on one floor may use each other one way only.
FLOORS = [
    ["src/core"],
    ["src/expr", "src/la"],
    ["src/model"],
    ["src/mech"],
    ["src/load"],
    ["src/opoint"],
    ["src/lin"],
    ["src/eig", "src/modal"],
    ["src/study", "src/sim", "src/codegen"],
    ["src/report"],
    ["src/par"],
    ["cli", "python"],
]
THIN_CLIENTS = {"cli", "python"}
THIN_CLIENT_EXTRA_INCLUDES = {"cli": {"par/par.h"}}
MAX_FILE_LINES = 1000
MAX_FUNCTION_LINES = 150
# files over MAX_FILE_LINES that are one family (path: why)
ONE_FAMILY = {}

FLOOR_OF = {f: i for i, fl in enumerate(FLOORS) for f in fl}
INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def folder_of(rel):
    rel = rel.replace(os.sep, "/")
    for f in FLOOR_OF:
        if rel == f or rel.startswith(f + "/"):
            return f
    return None


def code_files():
    for top in ("src", "cli", "python"):
        for d, dirs, files in os.walk(os.path.join(ROOT, top)):
            dirs.sort()
            for f in sorted(files):
                if f.endswith((".c", ".h")):
                    yield os.path.relpath(os.path.join(d, f), ROOT)


def include_folder(inc, own):
    """The code folder an include names ("lin/lin_internal.h" -> src/lin), None for public
    headers, system headers and the folder's own headers."""
    if inc.startswith("mblin/"):
        return None
    first = inc.split("/")[0]
    if "/" in inc and ("src/" + first) in FLOOR_OF:
        return "src/" + first
    return None


def check_includes(problems, edges):
    for rel in code_files():
        own = folder_of(rel)
        if own is None:
            continue
        text = open(os.path.join(ROOT, rel), errors="replace").read()
        for m in INCLUDE_RE.finditer(text):
            inc = m.group(1)
            line = text.count("\n", 0, m.start()) + 1
            if own in THIN_CLIENTS:
                top = own.split("/")[0]
                if inc.startswith("mblin/") or "/" not in inc or inc in THIN_CLIENT_EXTRA_INCLUDES.get(top, ()):
                    continue
                problems.append("%s:%d: a thin client includes an internal header \"%s\"" % (rel, line, inc))
                continue
            to = include_folder(inc, own)
            if to is None or to == own:
                continue
            edges.setdefault((own, to), "%s:%d includes %s" % (rel, line, inc))
            if FLOOR_OF[to] > FLOOR_OF[own]:
                problems.append("%s:%d: includes \"%s\" of %s, a floor above %s" % (rel, line, inc, to, own))


def nm(path, *flags):
    r = subprocess.run(["nm", *flags, path], capture_output=True, text=True)
    return r.stdout.splitlines() if r.returncode == 0 else []


def object_files(build):
    """(folder, object path, source rel path) of every object of the library, the tool, the
    Python extension and the MPI plugin."""
    out = []
    cmf = os.path.join(build, "CMakeFiles")
    for d, dirs, files in os.walk(build):
        dirs.sort()
        for f in sorted(files):
            if not f.endswith(".o"):
                continue
            p = os.path.join(d, f)
            rel = os.path.relpath(p, build).replace(os.sep, "/")
            m = re.match(r"(?:python/)?CMakeFiles/[^/]+\.dir/(.*)\.o$", rel)
            if not m:
                continue
            src = m.group(1)
            if src.startswith("__/"):  # CMake's escape for sources outside the target's dir
                src = src[3:]
            if rel.startswith("python/"):
                src = "python/" + src
            if not rel.startswith(("CMakeFiles/mblin_obj.dir/", "CMakeFiles/mblin_cli.dir/",
                                   "CMakeFiles/mblin_par.dir/", "python/CMakeFiles/mblin_python.dir/")):
                continue
            fo = folder_of(src)
            # an object whose source is gone (a file moved since the build dir was made) is stale
            if fo and os.path.exists(os.path.join(ROOT, src)):
                out.append((fo, p, src))
    return out, cmf


def check_calls(build, problems, edges):
    objs, _ = object_files(build)
    if not any(f == "src/core" for f, _, _ in objs):
        problems.append("%s: no object files of the library found (build first)" % build)
        return set()
    defined = {}
    for fo, p, src in objs:
        for line in nm(p, "--defined-only"):
            parts = line.split()
            if len(parts) == 3 and parts[1] in "TDBR" and parts[1].isupper():
                defined.setdefault(parts[2], (fo, src))
    for fo, p, src in objs:
        for line in nm(p, "--undefined-only"):
            sym = line.split()[-1]
            if sym not in defined:
                continue
            to, tsrc = defined[sym]
            if to == fo:
                continue
            edges.setdefault((fo, to), "%s calls %s (%s)" % (src, sym, tsrc))
            if FLOOR_OF[to] > FLOOR_OF[fo]:
                problems.append("%s: calls %s of %s (%s), a floor above %s" % (src, sym, to, tsrc, fo))
    return {s for s, (fo, _) in defined.items() if fo.startswith("src/")}


def public_names():
    names = set()
    inc = os.path.join(ROOT, "include", "mblin")
    for f in sorted(os.listdir(inc)):
        if f.endswith(".h"):
            text = open(os.path.join(inc, f)).read()
            text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
            names |= set(re.findall(r"\b(mbl[a-z]*_\w+)\s*\(", text))
    return names


def check_exports(build, problems, lib_symbols):
    so = os.path.join(build, "libmblin.so")
    if not os.path.exists(so):
        problems.append("%s: not built" % so)
        return set()
    exported = set()
    for line in nm(so, "-D", "--defined-only"):
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TDBRW":
            exported.add(parts[2])
    public = public_names()
    for s in sorted(exported - public):
        if s.startswith("_"):
            continue
        problems.append("libmblin.so exports %s, which no header of include/mblin declares" % s)
    for s in sorted(public - exported):
        if s in lib_symbols:
            problems.append("include/mblin declares %s, which libmblin.so does not export (MBL_API?)" % s)
    return exported


def check_thin_clients(build, problems, exported):
    objs, _ = object_files(build)
    lib = set()
    for fo, p, src in objs:
        if fo.startswith("src/"):
            for line in nm(p, "--defined-only"):
                parts = line.split()
                if len(parts) == 3 and parts[1] in "TDBR":
                    lib.add(parts[2])
    for fo, p, src in objs:
        if fo not in THIN_CLIENTS:
            continue
        for line in nm(p, "--undefined-only"):
            sym = line.split()[-1]
            if sym in lib and sym not in exported:
                problems.append("%s: calls %s, which the library does not export (not public API)" % (src, sym))


FUNC_START = re.compile(r"^[A-Za-z_][\w \t\*]*\b(\w+)\s*\([^;]*$")


def check_sizes(problems):
    for rel in code_files():
        lines = open(os.path.join(ROOT, rel), errors="replace").read().split("\n")
        if len(lines) - 1 > MAX_FILE_LINES and rel not in ONE_FAMILY:
            problems.append("%s: %d lines (more than %d; split it by family or list it in ONE_FAMILY "
                            "with the reason)" % (rel, len(lines) - 1, MAX_FILE_LINES))
        i = 0
        while i < len(lines):
            if lines[i] == "{" and i > 0:
                j = i
                while j < len(lines) and lines[j] != "}":
                    j += 1
                if j - i + 1 > MAX_FUNCTION_LINES:
                    k = i - 1
                    while k > 0 and "(" not in lines[k]:
                        k -= 1
                    m = re.search(r"(\w+)\s*\(", lines[k])
                    problems.append("%s:%d: function %s is %d lines (more than %d)" % (
                        rel, k + 1, m.group(1) if m else "?", j - i + 1, MAX_FUNCTION_LINES))
                i = j
            i += 1


def main():
    if len(sys.argv) != 2:
        sys.stderr.write("usage: check.py BUILD_DIR\n")
        return 2
    build = os.path.abspath(sys.argv[1])
    problems, edges = [], {}
    for rel in code_files():
        if folder_of(rel) is None:
            problems.append("%s: in no floor (add its folder to FLOORS in %s)" % (rel, os.path.relpath(__file__, ROOT)))
    check_includes(problems, edges)
    lib_symbols = check_calls(build, problems, edges)
    exported = check_exports(build, problems, lib_symbols)
    check_thin_clients(build, problems, exported)
    for (a, b), why in sorted(edges.items()):
        if a < b and (b, a) in edges:
            problems.append("%s and %s use each other: %s; %s" % (a, b, why, edges[(b, a)]))
    check_sizes(problems)
    for p in problems:
        print(p)
    print("layering: %d folders on %d floors, %d uses between folders, %d problems" % (
        len(FLOOR_OF), len(FLOORS), len(edges), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
