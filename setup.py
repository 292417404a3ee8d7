"""Builds the C extension mblin._core of the Python package with CMake (pyproject.toml).

`pip install .` runs this: CMake configures the project for the interpreter that runs pip
(Python3_EXECUTABLE; its headers: python3-dev, its NumPy: python3-numpy) and builds the target
mblin_python (the extension with libmblin linked in statically), whose .so is then copied into
the package. MBLIN_CMAKE_BUILD_DIR=DIR builds in an existing build tree instead (a configured
`cmake -B DIR`, made for the same interpreter), which is then only brought up to date;
MBLIN_CMAKE_ARGS adds arguments to the configuration (e.g. -DMBLIN_WITH_GPL=OFF); MBLIN_JOBS the
parallel build jobs (default 2)."""
import glob
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        bdir = os.environ.get("MBLIN_CMAKE_BUILD_DIR")
        if bdir:
            bdir = os.path.abspath(bdir)
        else:
            bdir = os.path.abspath(os.path.join(self.build_temp, "cmake"))
            args = ["cmake", "-S", ROOT, "-B", bdir, "-DCMAKE_BUILD_TYPE=Release", "-DMBLIN_BUILD_TESTS=OFF",
                    "-DMBLIN_BUILD_BENCH=OFF", "-DMBLIN_PYTHON=ON", "-DPython3_EXECUTABLE=" + sys.executable]
            args += shlex.split(os.environ.get("MBLIN_CMAKE_ARGS", ""))
            subprocess.run(args, check=True)
        jobs = os.environ.get("MBLIN_JOBS", "2")
        subprocess.run(["cmake", "--build", bdir, "--target", "mblin_python", "-j", jobs], check=True)
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        built = glob.glob(os.path.join(bdir, "python", "mblin", "_core*.so"))
        mine = [b for b in built if b.endswith(suffix)]
        if not mine:
            raise RuntimeError("mblin: CMake built %s, not an extension for this interpreter (%s, %s): configure "
                               "the build tree for it (-DPython3_EXECUTABLE=%s)"
                               % (built or "no extension", sys.executable, suffix, sys.executable))
        out = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        shutil.copyfile(mine[0], out)


setup(ext_modules=[Extension("mblin._core", sources=[])], cmdclass={"build_ext": CMakeBuild})
