#!/usr/bin/env python3
"""Issue 33, item 7: the Python package installs with pip, without network. In a temporary
`python3 -m venv --system-site-packages` of this interpreter (Debian's /usr/bin/python3):
`pip install --no-index --no-build-isolation` of a copy of pyproject.toml, setup.py, setup.cfg and
python/ (the extension built by setup.py in this build tree, MBLIN_CMAKE_BUILD_DIR); the installed
package is the one imported, its metadata version is the library's, it linearizes the spring
pendulum to the frequencies of its closed form (NumPy), and without NumPy its import says so.
usage: pip_test.py BUILD_DIR (from the repository root, run by the interpreter to test)"""
import os
import shutil
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, finish  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
ROOT = os.getcwd()


td = tempfile.mkdtemp(prefix="mblin_pip_")
try:
    src = os.path.join(td, "src")
    os.makedirs(src)
    for f in ("pyproject.toml", "setup.py", "setup.cfg", "README.md", "LICENSE"):
        shutil.copy(os.path.join(ROOT, f), src)
    shutil.copytree(os.path.join(ROOT, "python"), os.path.join(src, "python"),
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    venv = os.path.join(td, "venv")
    p = subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", venv], capture_output=True, text=True)
    check(p.returncode == 0, "python3 -m venv (python3-venv): " + p.stderr)
    py = os.path.join(venv, "bin", "python")
    env = dict(os.environ, MBLIN_CMAKE_BUILD_DIR=BUILD, MBLIN_JOBS="1", PIP_DISABLE_PIP_VERSION_CHECK="1",
               PYTHONDONTWRITEBYTECODE="1", OPENBLAS_NUM_THREADS="1")
    env.pop("PYTHONPATH", None)
    p = subprocess.run([py, "-m", "pip", "install", "--no-index", "--no-build-isolation", src],
                       capture_output=True, text=True, env=env, cwd=td, timeout=900)
    check(p.returncode == 0 and "Successfully installed mblin" in p.stdout,
          "pip install --no-index --no-build-isolation: " + p.stdout[-2000:] + p.stderr[-2000:])
    script = r'''
import importlib.metadata, json, os, sys
import numpy as np
import mblin
m1, m2, k, L, g = 5.0, 2.0, 40.0, 0.75, 9.81   # examples/spring_pendulum.yaml and its closed form
M = np.diag([m1, m2]); K = np.array([[k + m2 * g / L, -m2 * g / L], [-m2 * g / L, m2 * g / L]])
f = np.sqrt(np.sort(np.linalg.eigvals(np.linalg.solve(M, K)).real)) / (2 * np.pi)
lin = mblin.load(sys.argv[1]).linearize()
here = os.path.dirname(mblin.__file__)
print(json.dumps({"file": mblin.__file__, "version": mblin.__version__, "dist": importlib.metadata.version("mblin"),
                  "ok": bool(np.allclose(np.unique(np.round(lin.frequencies, 12)), f, rtol=1e-9)),
                  "typed": os.path.exists(os.path.join(here, "py.typed")) and os.path.exists(os.path.join(here, "__init__.pyi"))}))
'''
    p = subprocess.run([py, "-c", script, os.path.join(ROOT, "examples", "spring_pendulum.yaml")],
                       capture_output=True, text=True, env=env, cwd=td, timeout=120)
    import json
    d = json.loads(p.stdout) if p.returncode == 0 else {}
    check(d.get("file", "").startswith(venv), "the venv's installed package is imported: %s %s" % (d, p.stderr[-1500:]))
    check(d.get("version") and d.get("version") == d.get("dist"),
          "pip's version (pyproject.toml) is the library's (CMakeLists.txt project VERSION): %s" % d)
    check(d.get("ok") is True, "the installed package linearizes the spring pendulum to its closed form: %s" % d)
    check(d.get("typed") is True, "py.typed and __init__.pyi installed: %s" % d)
    p = subprocess.run([py, "-c", "import sys; sys.modules['numpy'] = None; import mblin"],
                       capture_output=True, text=True, env=env, cwd=td)
    last = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else ""
    check(p.returncode != 0 and last.startswith("ImportError: mblin needs NumPy") and py in last
          and "--system-site-packages" in last, "without NumPy the import says so: " + last)
finally:
    shutil.rmtree(td, ignore_errors=True)

sys.exit(finish("pip_test"))
