#!/usr/bin/env python3
"""Each check of check.py fails on an injected fault (issue 66).

    python3 tests/layering/check.py --self-test

Builds a small synthetic tree in a temporary directory (a few .c and .h files on four floors,
compiled with cc -c to real object files laid out as CMake lays them, and a libmblin.so linked
from them), checks that the clean tree passes, then for each check copies the tree, injects
exactly one fault, rebuilds what the fault touched and asserts that the check reports it, and
that nothing else is reported except what the fault also is (an upward use that closes a circle
is both). Prints one line per case; exit 1 if any case fails.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

import check

FLOORS = [["src/core"], ["src/model"], ["src/a", "src/b", "src/c"], ["cli"]]
LIB_DIR = "build/CMakeFiles/mblin_obj.dir/"
CLI_DIR = "build/CMakeFiles/mblin_cli.dir/"
CFLAGS = ["-std=c11", "-O0", "-fPIC", "-fvisibility=hidden", "-Iinclude", "-Isrc"]
# checked as text only, never compiled (an old-style definition)
TEXT_ONLY = {"src/core/kr.c"}


def body(n, indent="    "):
    """n lines of a function body that compile, the last a return."""
    return "".join("%sx += %d;\n" % (indent, k) for k in range(n - 1)) + indent + "return x;\n"


def brace_on_line(n):
    """A function of n lines from its signature's line (with the brace) to its closing brace."""
    return "int big(int x) {\n" + body(n - 2) + "}\n"


def static_inline(n):
    return "static inline int inl(int x) {\n" + body(n - 2) + "}\n"


def old_style(n):
    """An old-style definition whose braces (on their own lines) span n lines."""
    return "int kr(x, y)\nint x;\nint y;\n{\n" + body(n - 3) + "    (void)y;\n}\n"


CLEAN = {
    "include/mblin/export.h": '#ifndef MBL_EXPORT_H\n#define MBL_EXPORT_H\n'
                              '#define MBL_API __attribute__((visibility("default")))\n#endif\n',
    "include/mblin/core.h": '#ifndef MBL_CORE_H\n#define MBL_CORE_H\n#include "mblin/export.h"\n'
                            "MBL_API int mbl_core_one(void);\n#endif\n",
    "include/mblin/a.h": '#ifndef MBL_A_H\n#define MBL_A_H\n#include "mblin/export.h"\n'
                         "MBL_API int mbl_a_one(void);\n#endif\n",
    # an umbrella: no function of its own, so it belongs to the highest of what it includes (src/a)
    "include/mblin/all.h": '#include "mblin/core.h"\n#include "mblin/a.h"\n',
    "src/core/core.h": "int core_helper(int x);\n",
    "src/core/core.c": '#include "mblin/core.h"\n#include "core/core.h"\n'
                       "int core_helper(int x) { return x + 1; }\n"
                       "MBL_API int mbl_core_one(void) { return core_helper(0); }\n",
    "src/core/big.c": brace_on_line(150),
    "src/core/inl.h": "static inline int inl(int x) { return x; }\n",
    "src/core/kr.c": old_style(150),
    "src/model/model_internal.h": "int model_one(void);\nint model_two(void);\nint model_three(void);\n",
    "src/model/model.h": "int model_one(void);\n",
    # m1 and m2 call each other: a circle of two files, allowed; m3 calls m1 only
    "src/model/m1.c": '#include "model_internal.h"\n#include "core/core.h"\n'
                      "int model_one(void) { return core_helper(1); }\n"
                      "int model_one_b(int n) { return n ? model_two() : 0; }\n",
    "src/model/m2.c": '#include "model_internal.h"\nint model_two(void) { return model_one(); }\n',
    "src/model/m3.c": '#include "model_internal.h"\nint model_three(void) { return model_one() + 1; }\n',
    "src/model/terms/t.c": '#include "../model_internal.h"\nint model_term(void) { return model_one(); }\n',
    # a1 -> a2 -> a3 -> a1: a circle of three files outside src/model, a note only
    "src/a/a_internal.h": "int a_one(void);\nint a_two(void);\nint a_three(void);\n",
    "src/a/a.c": '#include "mblin/a.h"\n#include "a_internal.h"\n'
                 "MBL_API int mbl_a_one(void) { return a_one(); }\nint a_hidden(void) { return 2; }\n",
    "src/a/a1.c": '#include "a_internal.h"\nint a_one(void) { return a_two(); }\n',
    "src/a/a2.c": '#include "a_internal.h"\nint a_two(void) { return a_three(); }\n',
    "src/a/a3.c": '#include "a_internal.h"\nint a_three(void) { static int d; return d++ ? 0 : a_one(); }\n',
    # c -> b -> a on one floor, b -> model -> core below
    "src/b/b.h": "int b_one(void);\n",
    "src/b/b.c": '#include "b.h"\n#include "mblin/a.h"\n#include "model/model.h"\n'
                 "int b_one(void) { return mbl_a_one() + model_one(); }\n",
    "src/c/c.h": "int c_one(void);\n",
    "src/c/c.c": '#include "c.h"\n#include "b/b.h"\n#include "mblin/all.h"\n'
                 "int c_one(void) { return b_one() + mbl_core_one(); }\n",
    "cli/main.c": '#include "mblin/a.h"\nint main(void) { return mbl_a_one(); }\n',
}

CIRCLE_ABC = r"^src/a, src/b, src/c use each other \(a circle of 3 folders\):"
CIRCLE_CORE = r"^(src/\w+, )*src/core(, src/\w+)* use each other \(a circle of \d folders\):"

# name: (files replaced or added, the problems expected: each must be reported, nothing else)
FAULTS = {
    "three folders on one floor in a circle, by calls": (
        {"src/a/a.c": CLEAN["src/a/a.c"] + "int c_one(void);\nint a_c(void) { return c_one(); }\n"},
        [CIRCLE_ABC]),
    "three folders on one floor in a circle, by includes": (
        {"src/a/a.c": '#include "c/c.h"\n' + CLEAN["src/a/a.c"]},
        [CIRCLE_ABC]),
    "three files of src/model calling round": (
        {"src/model/m2.c": '#include "model_internal.h"\n'
                           "int model_two(void) { return model_one() + model_three(); }\n"},
        [r"^src/model: 3 files call each other in a circle \(more than 2\): m1, m2, m3\n"]),
    "an _internal.h included from another folder": (
        {"src/b/b.c": '#include "model/model_internal.h"\n' + CLEAN["src/b/b.c"]},
        [r'^src/b/b\.c:1: includes "model/model_internal\.h", internal to src/model$']),
    "a public header whose functions a floor above defines": (
        {"src/model/m3.c": '#include "mblin/a.h"\n' + CLEAN["src/model/m3.c"]},
        [r'^src/model/m3\.c:1: includes "mblin/a\.h" of src/a, a floor above src/model$']),
    "a public umbrella header including one of a floor above": (
        {"src/model/m3.c": '#include "mblin/all.h"\n' + CLEAN["src/model/m3.c"]},
        [r'^src/model/m3\.c:1: includes "mblin/all\.h" of src/a, a floor above src/model$']),
    "a function with its brace on the signature line": (
        {"src/core/big.c": brace_on_line(151)},
        [r"^src/core/big\.c:1: function big is 151 lines \(more than 150\)$"]),
    "a static inline function in a header": (
        {"src/core/inl.h": static_inline(151)},
        [r"^src/core/inl\.h:1: function inl is 151 lines \(more than 150\)$"]),
    "an old-style definition": (
        {"src/core/kr.c": old_style(151)},
        [r"^src/core/kr\.c:1: function kr is 151 lines \(more than 150\)$"]),
    "a file over 1,000 lines": (
        {"src/core/long.h": "/* long */\n" * 1001},
        [r"^src/core/long\.h: 1001 lines \(more than 1000;"]),
    "an include of a floor above": (
        {"src/core/core.c": '#include "b/b.h"\n' + CLEAN["src/core/core.c"]},
        [r'^src/core/core\.c:1: includes "b/b\.h" of src/b, a floor above src/core$', CIRCLE_CORE]),
    "a call of a floor above": (
        {"src/core/core.c": CLEAN["src/core/core.c"] + "int b_one(void);\nint core_b(void) { return b_one(); }\n"},
        [r"^src/core/core\.c: calls b_one of src/b \(src/b/b\.c\), a floor above src/core$", CIRCLE_CORE]),
    "an export no public header declares": (
        {"src/a/a.c": CLEAN["src/a/a.c"] + "MBL_API int mbl_a_extra(void) { return 3; }\n"},
        [r"^libmblin\.so exports mbl_a_extra, which no header of include/mblin declares$"]),
    "a thin client calling past the API": (
        {"cli/main.c": '#include "mblin/a.h"\nint a_hidden(void);\n'
                       "int main(void) { return mbl_a_one() + a_hidden(); }\n"},
        [r"^cli/main\.c: calls a_hidden, which the library does not export \(not public API\)$"]),
    "a thin client including an internal header": (
        {"cli/main.c": '#include "a/a_internal.h"\n' + CLEAN["cli/main.c"]},
        [r'^cli/main\.c:1: a thin client includes an internal header "a/a_internal\.h"$',
         r'^cli/main\.c:1: includes "a/a_internal\.h", internal to src/a$']),
}


def object_path(rel):
    return (CLI_DIR if rel.startswith("cli/") else LIB_DIR) + rel + ".o"


def compile_files(root, rels):
    """cc -c each source (in parallel), then link libmblin.so from the library's objects if one
    of them was rebuilt; raises on a compiler error."""
    cc = os.environ.get("CC", "cc")
    rels = [r for r in rels if r.endswith(".c") and r not in TEXT_ONLY]
    jobs = []
    for rel in rels:
        out = os.path.join(root, object_path(rel))
        os.makedirs(os.path.dirname(out), exist_ok=True)
        jobs.append((rel, subprocess.Popen([cc, *CFLAGS, "-c", rel, "-o", out], cwd=root,
                                           stderr=subprocess.PIPE, text=True)))
    for rel, job in jobs:
        err = job.communicate()[1]
        if job.returncode:
            raise RuntimeError("cc %s: %s" % (rel, err))
    if any(not r.startswith("cli/") for r in rels):
        objs = [os.path.join(d, f) for d, _, fs in os.walk(os.path.join(root, LIB_DIR)) for f in fs
                if f.endswith(".o")]
        r = subprocess.run([cc, "-shared", "-o", os.path.join(root, "build", check.LIBRARY), *sorted(objs)],
                           capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError("cc -shared: %s" % r.stderr)


def write(root, files):
    for rel, text in files.items():
        p = os.path.join(root, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as fh:
            fh.write(text)


def run_tree(root):
    return check.run(check.Tree(root, os.path.join(root, "build"), floors=FLOORS, thin_clients={"cli"},
                                thin_client_extra={}, one_family={}, strict_file_circles={"src/model"}))


def judge(name, problems, expected):
    """'' if the problems are exactly what was expected, else why not."""
    missing = [e for e in expected if not any(re.search(e, p) for p in problems)]
    extra = [p for p in problems if not any(re.search(e, p) for e in expected)]
    if not missing and not extra:
        return ""
    return "%s:%s%s" % (name, "".join("\n    not reported: " + m for m in missing),
                        "".join("\n    also reported: " + p for p in extra))


def main():
    failures = []
    with tempfile.TemporaryDirectory(prefix="mblin_layering_") as tmp:
        clean = os.path.join(tmp, "clean")
        write(clean, CLEAN)
        compile_files(clean, list(CLEAN))
        problems, notes, _ = run_tree(clean)
        why = judge("the clean tree", problems, [])
        want_note = "note: src/a: 3 files call each other in a circle: a1, a2, a3"
        if want_note not in notes:
            why += "\nthe clean tree: no note '%s' (notes: %s)" % (want_note, notes)
        failures += [why] if why else []
        print("%s: the clean tree" % ("FAIL" if why else "ok"))
        for k, (name, (files, expected)) in enumerate(sorted(FAULTS.items())):
            root = os.path.join(tmp, "fault%d" % k)
            shutil.copytree(clean, root, symlinks=True)
            write(root, files)
            compile_files(root, list(files))
            why = judge(name, run_tree(root)[0], expected)
            failures += [why] if why else []
            print("%s: %s" % ("FAIL" if why else "ok", name))
    for f in failures:
        print(f)
    print("layering self-test: %d cases, %d failed" % (len(FAULTS) + 1, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
