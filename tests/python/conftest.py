"""pytest configuration of the Python package's tests (tests/python/).

CTest runs them (tests/CMakeLists.txt, test_python) with PYTHONPATH pointing at the built package
(build/python) and MBLIN_CLI at the built command-line tool, from the repository root. By hand:

    PYTHONPATH=build/python MBLIN_CLI=build/mblin python3 -m pytest tests/python
"""
import os
import pathlib

import pytest

np = pytest.importorskip("numpy", reason="NumPy is absent (make setup installs python3-numpy)")

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def root():
    return ROOT


@pytest.fixture(scope="session")
def cli():
    path = os.environ.get("MBLIN_CLI", str(ROOT / "build" / "mblin"))
    if not os.access(path, os.X_OK):
        pytest.fail("the mblin command-line tool is not at %s (set MBLIN_CLI)" % path)
    return path


@pytest.fixture(autouse=True)
def in_root(monkeypatch):
    """Every test runs from the repository root (example paths are relative to it)."""
    monkeypatch.chdir(ROOT)
