"""Running `mblin linearize` on a model text for the Python tests of tests/mech:

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from mechrun import linearize_text, linearize_json
"""
import json
import os
import subprocess
import tempfile


def linearize_text(mblin, text, *args):
    """`mblin linearize FILE --json --no-matrices ARGS` on text written to a temporary file: the
    completed process"""
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(text)
        path = f.name
    try:
        return subprocess.run([mblin, "linearize", path, "--json", "--no-matrices", *args], capture_output=True,
                              text=True)
    finally:
        os.unlink(path)


def linearize_json(mblin, text, *args):
    """(the JSON object, "") on success, (None, the error line) on failure"""
    p = linearize_text(mblin, text, *args)
    if p.returncode:
        return None, p.stderr.strip()
    return json.loads(p.stdout), ""


class Checks:
    """check(ok, msg): prints `ok   msg` or `FAIL msg` and counts the failures (check.fails)"""

    def __init__(self):
        self.fails = 0

    def __call__(self, ok, msg):
        print(("ok   " if ok else "FAIL ") + msg)
        self.fails += not ok
        return ok


def write_mtx(path, X):
    """a Matrix Market array file of the matrix X (rows of numbers, or a 2-D numpy array)"""
    rows, cols = len(X), len(X[0])
    with open(path, "w") as f:
        f.write("%%%%MatrixMarket matrix array real general\n%d %d\n" % (rows, cols))
        for j in range(cols):
            for i in range(rows):
                f.write("%.17g\n" % X[i][j])
