"""The tally of a Python test script's checks: check(cond, what) counts it and prints what failed,
finish(name) prints the tally and returns the script's exit status (1 when any check failed).

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from checks import check, finish
"""
import sys

passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAILED:", what, file=sys.stderr)
    return cond


def finish(name, extra=""):
    print("%s: %d passed, %d failed%s" % (name, passed, failed, extra))
    return 1 if failed else 0


def scratch(prefix):
    """write(name, text) -> the path of a file written into a new temporary folder (prefix)."""
    import os
    import tempfile
    tmp = tempfile.mkdtemp(prefix=prefix)

    def write(name, text):
        path = os.path.join(tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path
    return write
