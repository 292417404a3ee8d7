#!/usr/bin/env python3
"""Issue 33, item 7: the installed CMake package. `cmake --install` into a temporary prefix, then a
consumer project whose CMakeLists.txt says only find_package(mblin) (mblinConfig.cmake loads the
dependencies itself) builds the program of docs/linking.md against mblin::mblin and against
mblin::mblin_static; both run on the spring pendulum and give the eigenvalues of its closed form
(the file's comment: M = diag(m1, m2), K = [[k + m2 g/L, -m2 g/L], [-m2 g/L, m2 g/L]]), by NumPy.
usage: install_test.py CMAKE BUILD_DIR (from the repository root)"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, finish  # noqa: E402

CMAKE, BUILD = sys.argv[1], os.path.abspath(sys.argv[2])
ROOT = os.getcwd()


def sh(*args, **kw):
    return subprocess.run(list(args), capture_output=True, text=True, timeout=600, **kw)


td = tempfile.mkdtemp(prefix="mblin_install_")
try:
    prefix = os.path.join(td, "prefix")
    p = sh(CMAKE, "--install", BUILD, "--prefix", prefix)
    check(p.returncode == 0 and os.path.exists(os.path.join(prefix, "lib", "cmake", "mblin", "mblinConfig.cmake"))
          or os.path.isdir(os.path.join(prefix, "lib64")), "cmake --install: " + p.stderr[-2000:])
    # the consumer: docs/linking.md's program, and find_package(mblin) alone
    src = os.path.join(td, "app")
    os.makedirs(src)
    code = re.search(r"```c\n(.*?)```", open(os.path.join(ROOT, "docs", "linking.md")).read(), re.S).group(1)
    with open(os.path.join(src, "app.c"), "w") as f:
        f.write(code)
    with open(os.path.join(src, "CMakeLists.txt"), "w") as f:
        f.write("cmake_minimum_required(VERSION 3.18)\nproject(app C)\nfind_package(mblin 0.1 REQUIRED)\n"
                "add_executable(app_shared app.c)\ntarget_link_libraries(app_shared PRIVATE mblin::mblin)\n"
                "add_executable(app_static app.c)\ntarget_link_libraries(app_static PRIVATE mblin::mblin_static)\n")
    bld = os.path.join(td, "app-build")
    p = sh(CMAKE, "-S", src, "-B", bld, "-DCMAKE_PREFIX_PATH=" + prefix, "-DCMAKE_BUILD_TYPE=Release")
    check(p.returncode == 0, "the consumer configures with find_package(mblin) alone: " + p.stderr[-3000:])
    if p.returncode == 0:
        p = sh(CMAKE, "--build", bld, "-j", "1")
        check(p.returncode == 0, "the consumer builds against mblin::mblin and mblin::mblin_static: " + p.stdout[-3000:])
    # the closed form of the spring pendulum (examples/spring_pendulum.yaml)
    m1, m2, k, L, g = 5.0, 2.0, 40.0, 0.75, 9.81
    M = np.diag([m1, m2])
    K = np.array([[k + m2 * g / L, -m2 * g / L], [-m2 * g / L, m2 * g / L]])
    w = np.sort(np.sqrt(np.linalg.eigvals(np.linalg.solve(M, K)).real))
    env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(prefix, "lib") + os.pathsep + os.environ.get("LD_LIBRARY_PATH", ""),
               OPENBLAS_NUM_THREADS="1")
    for app in ("app_shared", "app_static"):
        exe = os.path.join(bld, app)
        if not os.path.exists(exe):
            check(False, app + " was not built")
            continue
        p = sh(exe, os.path.join(ROOT, "examples", "spring_pendulum.yaml"), env=env)
        ev = [complex(float(a), float(b[:-1])) for a, b in (l.split() for l in p.stdout.split("\n") if l.strip())]
        im = np.sort([e.imag for e in ev if e.imag > 0])
        check(p.returncode == 0 and len(ev) == 4 and max(abs(e.real) for e in ev) < 1e-6 * w[-1]
              and len(im) == 2 and np.allclose(im, w, rtol=1e-5),
              "%s: eigenvalues +-i %s, got %s %s" % (app, w, p.stdout, p.stderr))
        needed = sh("readelf", "-d", exe).stdout
        check(("libmblin.so" in needed) == (app == "app_shared"),
              "%s: libmblin.so %s a NEEDED library" % (app, "is" if app == "app_shared" else "is not"))
finally:
    shutil.rmtree(td, ignore_errors=True)

sys.exit(finish("install_test"))
