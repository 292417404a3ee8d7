#!/usr/bin/env python3
"""The floors of the house hold (docs/architecture.md; issues 28 and 66).

    python3 tests/layering/check.py BUILD_DIR        (from the project root)
    python3 tests/layering/check.py --self-test      (each check fails on an injected fault)

The floors are listed once, below (FLOORS), from the bottom. A folder may use its own floor's
folders and those below, never one above, and no folders may use each other in a circle. "Use"
is read three ways, so that neither a header nor a declaration written by hand slips through:

1. includes: every `#include "X/..."` of a source or header file, X a code folder;
2. public includes: every `#include "mblin/H"`; a public header belongs to the folders whose
   object files define the functions it declares (nm), and its include uses the lowest of them
   (none if the including folder is one of them); a header declaring no function, as
   mblin/mblin.h, belongs to the highest owner of the public headers it includes;
3. calls: the symbols each object file of the build leaves undefined (nm), resolved to the folder
   whose object files define them.

A circle is a strongly connected component of the folder graph of these uses: two folders using
each other, or three on one floor going round, fail alike. Inside a folder, its files' calls
(nm) must not go round more than MAX_FILE_CIRCLE files in the folders of STRICT_FILE_CIRCLES;
the circles of the other folders are printed as notes, without failing. A header whose name
ends in _internal.h is its folder's own: an include of it from another folder fails.

It also checks the API boundary and the size rules:

4. libmblin.so exports only what include/mblin declares (MBL_API with -fvisibility=hidden);
5. cli/ and python/ (thin clients) include only include/mblin headers (and their own, and the
   MPI plugin's interface src/par/par.h for cli/) and call only exported functions;
6. no .c or .h file over MAX_FILE_LINES lines unless listed in ONE_FAMILY with the reason it is
   one family; no function over MAX_FUNCTION_LINES lines, from its opening brace's line to its
   closing brace's, wherever the braces stand (on the signature's line or their own, static
   inline in headers, old-style parameter declarations).

Prints one line per violation (a circle adds its arrows on indented lines) and a summary; exit
1 on any violation, 0 otherwise. The checks take a Tree (a root, a build directory and the
floors), so that --self-test (tests/layering/selftest.py) runs them on small synthetic trees.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# From the bottom. Folders on one floor may use each other one way only, and not in a circle.
FLOORS = [
    ["src/core"],
    ["src/expr", "src/la"],
    ["src/fe"],
    ["src/model"],
    ["src/mech"],
    ["src/load"],
    ["src/opoint"],
    ["src/lin"],
    ["src/eig", "src/modal"],
    ["src/study", "src/sim", "src/codegen", "src/opt"],
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
# folders whose files may call each other round in a circle of at most MAX_FILE_CIRCLE files
STRICT_FILE_CIRCLES = {"src/model"}
MAX_FILE_CIRCLE = 2
# where `#include "..."` looks, after the including file's own folder (CMakeLists.txt)
INCLUDE_DIRS = ("src", "include")
PUBLIC_DIR = "include/mblin"
# the object directories of the library, the tool, the MPI plugin and the Python extension
OBJECT_DIRS = ("CMakeFiles/mblin_obj.dir/", "CMakeFiles/mblin_cli.dir/", "CMakeFiles/mblin_par.dir/",
               "python/CMakeFiles/mblin_python.dir/")
LIBRARY = "libmblin.so"

INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
DECL_RE = re.compile(r"\b(mbl[a-z]*_\w+)\s*\(")


class Tree:
    """A source tree, its build directory and its floors: what the checks read."""

    def __init__(self, root, build, floors=None, thin_clients=None, thin_client_extra=None,
                 one_family=None, strict_file_circles=None):
        self.root = os.path.abspath(root)
        self.build = os.path.abspath(build)
        self.floors = FLOORS if floors is None else floors
        self.floor_of = {f: i for i, fl in enumerate(self.floors) for f in fl}
        self.thin_clients = THIN_CLIENTS if thin_clients is None else thin_clients
        self.thin_client_extra = THIN_CLIENT_EXTRA_INCLUDES if thin_client_extra is None else thin_client_extra
        self.one_family = ONE_FAMILY if one_family is None else one_family
        self.strict_file_circles = STRICT_FILE_CIRCLES if strict_file_circles is None else strict_file_circles
        self._cache = {}
        self._objects = None

    def folder_of(self, rel):
        rel = rel.replace(os.sep, "/")
        best = None
        for f in self.floor_of:
            if (rel == f or rel.startswith(f + "/")) and (best is None or len(f) > len(best)):
                best = f
        return best

    def read(self, rel):
        with open(os.path.join(self.root, rel), errors="replace") as fh:
            return fh.read()

    def code_files(self):
        for top in sorted({f.split("/")[0] for f in self.floor_of} | {"src"}):
            for d, dirs, files in os.walk(os.path.join(self.root, top)):
                dirs.sort()
                for f in sorted(files):
                    if f.endswith((".c", ".h")):
                        yield os.path.relpath(os.path.join(d, f), self.root).replace(os.sep, "/")

    def nm(self, path, *flags):
        key = (path,) + flags
        if key not in self._cache:
            r = subprocess.run(["nm", *flags, path], capture_output=True, text=True)
            self._cache[key] = r.stdout.splitlines() if r.returncode == 0 else []
        return self._cache[key]

    def _nm_objects(self):
        """nm -A of every object, in one run of nm per 200 files: {path: (defined symbols with
        their types, undefined symbols)}."""
        if "objects" not in self._cache:
            out = {p: ([], []) for _, p, _ in self.objects()}
            paths = sorted(out)
            for k in range(0, len(paths), 200):
                r = subprocess.run(["nm", "-A", *paths[k:k + 200]], capture_output=True, text=True)
                for line in r.stdout.splitlines():
                    path, sep, rest = line.partition(".o:")
                    parts = rest.split()
                    if not sep or path + ".o" not in out or len(parts) not in (2, 3):
                        continue
                    out[path + ".o"][len(parts) == 2].append(parts[-2:])
            self._cache["objects"] = out
        return self._cache["objects"]

    def defined(self, path):
        """The global symbols an object file defines (functions and data)."""
        return [name for kind, name in self._nm_objects().get(path, ([], []))[0]
                if kind in "TDBR" and kind.isupper()]

    def undefined(self, path):
        return [name for _, name in self._nm_objects().get(path, ([], []))[1]]

    def objects(self):
        """(folder, object path, source rel path) of every object of the library, the tool, the
        Python extension and the MPI plugin."""
        if self._objects is not None:
            return self._objects
        out = []
        for d, dirs, files in os.walk(self.build):
            dirs.sort()
            for f in sorted(files):
                if not f.endswith(".o"):
                    continue
                p = os.path.join(d, f)
                rel = os.path.relpath(p, self.build).replace(os.sep, "/")
                m = re.match(r"(?:python/)?CMakeFiles/[^/]+\.dir/(.*)\.o$", rel)
                if not m or not rel.startswith(OBJECT_DIRS):
                    continue
                src = m.group(1)
                if src.startswith("__/"):  # CMake's escape for sources outside the target's dir
                    src = src[3:]
                if rel.startswith("python/"):
                    src = "python/" + src
                fo = self.folder_of(src)
                # an object whose source is gone (a file moved since the build dir was made) is stale
                if fo and os.path.exists(os.path.join(self.root, src)):
                    out.append((fo, p, src))
        self._objects = out
        return out

    def symbols(self):
        """symbol -> (folder, source) of the object file that defines it."""
        if "symbols" not in self._cache:
            table = {}
            for fo, p, src in self.objects():
                for s in self.defined(p):
                    table.setdefault(s, (fo, src))
            self._cache["symbols"] = table
        return self._cache["symbols"]


# ---- circles ---------------------------------------------------------------------------------

def circles(edges):
    """The strongly connected components of more than one node (Tarjan, iterative), each sorted;
    edges: {(a, b): why}."""
    succ = {}
    for a, b in sorted(edges):
        succ.setdefault(a, []).append(b)
        succ.setdefault(b, [])
    index, low, on, stack, out = {}, {}, set(), [], []
    for start in sorted(succ):
        if start in index:
            continue
        work = [(start, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = len(index)
                stack.append(v)
                on.add(v)
            if i < len(succ[v]):
                work.append((v, i + 1))
                w = succ[v][i]
                if w not in index:
                    work.append((w, 0))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
            if work:
                u = work[-1][0]
                low[u] = min(low[u], low[v])
    return sorted(out)


def arrows(comp, edges, name=lambda x: x):
    members = set(comp)
    return ["\n    %s -> %s: %s" % (name(a), name(b), why)
            for (a, b), why in sorted(edges.items()) if a in members and b in members]


def check_folder_circles(problems, edges):
    for comp in circles(edges):
        problems.append("%s use each other (a circle of %d folders):%s" % (
            ", ".join(comp), len(comp), "".join(arrows(comp, edges))))


def check_file_circles(t, problems, notes):
    """The call graph between the files of each folder: no circle of more than MAX_FILE_CIRCLE
    files in STRICT_FILE_CIRCLES; the circles of the other folders are notes."""
    symbols = t.symbols()
    graphs = {}
    for fo, p, src in t.objects():
        graphs.setdefault(fo, {})
        for sym in t.undefined(p):
            to = symbols.get(sym)
            if to and to[0] == fo and to[1] != src:
                graphs[fo].setdefault((src, to[1]), "calls %s" % sym)
    for fo in sorted(graphs):
        def name(src, fo=fo):
            return os.path.splitext(os.path.relpath(src, fo))[0]
        for comp in circles(graphs[fo]):
            if fo in t.strict_file_circles and len(comp) > MAX_FILE_CIRCLE:
                problems.append("%s: %d files call each other in a circle (more than %d): %s%s" % (
                    fo, len(comp), MAX_FILE_CIRCLE, ", ".join(map(name, comp)),
                    "".join(arrows(comp, graphs[fo], name))))
            elif fo not in t.strict_file_circles:
                notes.append("note: %s: %d files call each other in a circle: %s" % (
                    fo, len(comp), ", ".join(map(name, comp))))


# ---- includes --------------------------------------------------------------------------------

def resolve_include(t, rel, inc):
    """The file an include names, as a path from the root, or None (a generated or outside
    header)."""
    for base in (os.path.dirname(rel),) + INCLUDE_DIRS:
        p = os.path.normpath(os.path.join(base, inc)).replace(os.sep, "/")
        if not p.startswith("../") and os.path.isfile(os.path.join(t.root, p)):
            return p
    return None


def public_owners(t, symbols):
    """include/mblin header name ("mblin/sim.h") -> [(folder, a function it declares that the
    folder defines)], lowest floor first: the folders defining its functions; a header declaring
    none takes the highest owner of the public headers it includes."""
    pub = os.path.join(t.root, PUBLIC_DIR)
    if not os.path.isdir(pub):
        return {}
    owners, umbrellas = {}, {}
    for f in sorted(os.listdir(pub)):
        if not f.endswith(".h"):
            continue
        text = re.sub(r"/\*.*?\*/", " ", t.read(os.path.join(PUBLIC_DIR, f)), flags=re.S)
        found = {}
        for s in sorted(set(DECL_RE.findall(text))):
            if s in symbols and symbols[s][0] in t.floor_of:
                found.setdefault(symbols[s][0], s)
        name = "mblin/" + f
        if found:
            owners[name] = sorted(found.items(), key=lambda fs: (t.floor_of[fs[0]], fs[0]))
        else:
            umbrellas[name] = [i for i in INCLUDE_RE.findall(text) if i.startswith("mblin/")]
    for name, incs in umbrellas.items():
        found = [owners[i][0] for i in incs if i in owners]
        if found:
            owners[name] = [max(found, key=lambda fs: (t.floor_of[fs[0]], fs[0]))]
    return owners


def include_folder(t, rel, inc, owners):
    """(folder, why) an include makes its file use, or None: the code folder of an internal
    header; for a public one, the lowest folder defining its functions, None if the including
    folder defines some of them; None for the folder's own headers and system headers."""
    if inc.startswith("mblin/"):
        own = t.folder_of(rel)
        if inc not in owners or any(fo == own for fo, _ in owners[inc]):
            return None
        fo, s = owners[inc][0]
        return fo, "%s (%s of %s)" % (inc, s, fo)
    path = resolve_include(t, rel, inc)
    if path is not None:
        fo = t.folder_of(path)
        return (fo, inc) if fo else None
    first = inc.split("/")[0]
    if "/" in inc and ("src/" + first) in t.floor_of:
        return "src/" + first, inc
    return None


def check_internal_header(t, problems, rel, own, inc, line):
    """A header named *_internal.h is its folder's own."""
    if not os.path.basename(inc).endswith("_internal.h"):
        return
    use = include_folder(t, rel, inc, {})
    if use is not None and use[0] != own:
        problems.append("%s:%d: includes \"%s\", internal to %s" % (rel, line, inc, use[0]))


def check_includes(t, problems, edges, owners):
    for rel in t.code_files():
        own = t.folder_of(rel)
        if own is None:
            continue
        text = t.read(rel)
        for m in INCLUDE_RE.finditer(text):
            inc = m.group(1)
            line = text.count("\n", 0, m.start()) + 1
            check_internal_header(t, problems, rel, own, inc, line)
            if own in t.thin_clients:
                top = own.split("/")[0]
                if inc.startswith("mblin/") or "/" not in inc or inc in t.thin_client_extra.get(top, ()):
                    continue
                problems.append("%s:%d: a thin client includes an internal header \"%s\"" % (rel, line, inc))
                continue
            use = include_folder(t, rel, inc, owners)
            if use is None or use[0] == own:
                continue
            to, why = use
            edges.setdefault((own, to), "%s:%d includes %s" % (rel, line, why))
            if t.floor_of[to] > t.floor_of[own]:
                problems.append("%s:%d: includes \"%s\" of %s, a floor above %s" % (rel, line, inc, to, own))


# ---- calls and the API boundary --------------------------------------------------------------

def check_calls(t, problems, edges):
    objs = t.objects()
    if not any(f == t.floors[0][0] for f, _, _ in objs):
        problems.append("%s: no object files of the library found (build first)" % t.build)
        return set()
    symbols = t.symbols()
    for fo, p, src in objs:
        for sym in t.undefined(p):
            if sym not in symbols:
                continue
            to, tsrc = symbols[sym]
            if to == fo:
                continue
            edges.setdefault((fo, to), "%s calls %s (%s)" % (src, sym, tsrc))
            if t.floor_of[to] > t.floor_of[fo]:
                problems.append("%s: calls %s of %s (%s), a floor above %s" % (src, sym, to, tsrc, fo))
    return {s for s, (fo, _) in symbols.items() if fo.startswith("src/")}


def public_names(t):
    names = set()
    inc = os.path.join(t.root, PUBLIC_DIR)
    for f in sorted(os.listdir(inc)):
        if f.endswith(".h"):
            text = re.sub(r"/\*.*?\*/", " ", t.read(os.path.join(PUBLIC_DIR, f)), flags=re.S)
            names |= set(DECL_RE.findall(text))
    return names


def check_exports(t, problems, lib_symbols):
    so = os.path.join(t.build, LIBRARY)
    if not os.path.exists(so):
        problems.append("%s: not built" % so)
        return set()
    exported = set()
    for line in t.nm(so, "-D", "--defined-only"):
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TDBRW":
            exported.add(parts[2])
    public = public_names(t)
    for s in sorted(exported - public):
        if s.startswith("_"):
            continue
        problems.append("%s exports %s, which no header of %s declares" % (LIBRARY, s, PUBLIC_DIR))
    for s in sorted(public - exported):
        if s in lib_symbols:
            problems.append("%s declares %s, which %s does not export (MBL_API?)" % (PUBLIC_DIR, s, LIBRARY))
    return exported


def check_thin_clients(t, problems, exported):
    lib = {s for s, (fo, _) in t.symbols().items() if fo.startswith("src/")}
    for fo, p, src in t.objects():
        if fo not in t.thin_clients:
            continue
        for sym in t.undefined(p):
            if sym in lib and sym not in exported:
                problems.append("%s: calls %s, which the library does not export (not public API)" % (src, sym))


# ---- sizes -----------------------------------------------------------------------------------

PREPROCESSOR_RE = re.compile(r"[ \t]*#")
SPECIAL_RE = re.compile(r"/\*|//|[\"'\n]")


def skeleton(text):
    """The text with comments, the insides of string and character literals and preprocessor
    lines (with their continuations) blanked, newlines kept, so braces can be counted."""
    out, i, n = [], 0, len(text)
    line_start = True
    while i < n:
        if line_start and PREPROCESSOR_RE.match(text, i):
            j = i
            while j < n and (text[j] != "\n" or text[j - 1] == "\\"):
                j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i, line_start = j, False
            continue
        m = SPECIAL_RE.search(text, i)
        if m is None:
            out.append(text[i:])
            break
        out.append(text[i:m.start()])
        i, tok = m.start(), m.group()
        if tok == "\n":
            j = i + 1
        elif tok == "/*":
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif tok == "//":
            j = text.find("\n", i)
            j = n if j < 0 else j
        else:
            j = i + 1
            while j < n and text[j] != tok and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
        out.append(text[i] if tok == "\n" else re.sub(r"[^\n]", " ", text[i:j]))
        i, line_start = j, tok == "\n"
    return "".join(out)


FUNC_HEAD = re.compile(r"\)\s*$")
OLD_STYLE_HEAD = re.compile(r"\)(\s*[^(){};=]+;)+\s*$")
EXTERN_C_HEAD = re.compile(r"\bextern\s*$")
NAME_BEFORE_RE = re.compile(r"\b([A-Za-z_]\w*)\s*$")
NOT_NAMES = {"__attribute__", "__declspec", "sizeof", "alignas", "_Alignas"}


def function_name(s, start, end):
    """(name, where) of the function whose head is s[start:end]: the name before the last
    parenthesized group that is not an attribute (a macro used before it is not the name)."""
    groups, depth = [], 0
    for k in range(start, end):
        if s[k] == "(":
            if depth == 0:
                groups.append(k)
            depth += 1
        elif s[k] == ")":
            depth -= 1
    for k in reversed(groups):
        m = NAME_BEFORE_RE.search(s, start, k)
        if m and m.group(1) not in NOT_NAMES:
            return m.group(1), m.start(1)
    return "?", end


def functions(text):
    """(name, line of its name, lines from the opening brace's line to the closing one's) of
    each function defined at file level, wherever its braces stand."""
    s = skeleton(text)
    out, stack, depth = [], [], 0
    seg = after_brace = 0  # where the current file-level declaration begins; just after the last }
    for m in re.finditer(r"[{};]", s):
        c, i = m.group(), m.start()
        if c == ";":
            if depth == 0:
                seg = i + 1
            continue
        if c == "{":
            kind, head_at = "other", seg
            if depth == 0:
                head = s[seg:i]
                if EXTERN_C_HEAD.search(head):  # extern "C" {, its string blanked
                    kind, seg = "extern", i + 1
                elif FUNC_HEAD.search(head) and "=" not in head:
                    kind = "function"
                elif not head.strip() and OLD_STYLE_HEAD.search(s[after_brace:i]):
                    kind, head_at = "function", after_brace
            stack.append((kind, i, head_at))
            depth += kind != "extern"
            continue
        if not stack:
            continue
        kind, at, head_at = stack.pop()
        depth -= kind != "extern"
        if kind == "function":
            name, where = function_name(s, head_at, at)
            out.append((name, s.count("\n", 0, where) + 1, s.count("\n", at, i) + 1))
        if depth == 0:
            seg = after_brace = i + 1
    return out


def check_sizes(t, problems):
    for rel in t.code_files():
        text = t.read(rel)
        nlines = text.count("\n")
        if nlines > MAX_FILE_LINES and rel not in t.one_family:
            problems.append("%s: %d lines (more than %d; split it by family or list it in ONE_FAMILY "
                            "with the reason)" % (rel, nlines, MAX_FILE_LINES))
        for name, line, size in functions(text):
            if size > MAX_FUNCTION_LINES:
                problems.append("%s:%d: function %s is %d lines (more than %d)" % (
                    rel, line, name, size, MAX_FUNCTION_LINES))


# ---- all of them -----------------------------------------------------------------------------

def run(t):
    """(problems, notes, number of uses between folders) of the tree."""
    problems, notes, edges = [], [], {}
    for rel in t.code_files():
        if t.folder_of(rel) is None:
            problems.append("%s: in no floor (add its folder to FLOORS in tests/layering/check.py)" % rel)
    owners = public_owners(t, t.symbols())
    check_includes(t, problems, edges, owners)
    lib_symbols = check_calls(t, problems, edges)
    exported = check_exports(t, problems, lib_symbols)
    check_thin_clients(t, problems, exported)
    check_folder_circles(problems, edges)
    check_file_circles(t, problems, notes)
    check_sizes(t, problems)
    return problems, notes, len(edges)


def main():
    if sys.argv[1:] == ["--self-test"]:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import selftest
        return selftest.main()
    if len(sys.argv) != 2:
        sys.stderr.write("usage: check.py BUILD_DIR | check.py --self-test\n")
        return 2
    t = Tree(ROOT, sys.argv[1])
    problems, notes, nedges = run(t)
    for p in notes + problems:
        print(p)
    print("layering: %d folders on %d floors, %d uses between folders, %d problems" % (
        len(t.floor_of), len(t.floors), nedges, len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
