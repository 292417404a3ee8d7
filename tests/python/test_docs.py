"""The notebook-style script of docs/python.md runs: its ```python blocks, in order, in one
namespace, from the repository root (each block's own asserts check its numbers)."""
import contextlib
import io
import re

import pytest

BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def blocks(root):
    text = (root / "docs" / "python.md").read_text()
    return BLOCK.findall(text)


def test_docs_have_a_script(root):
    assert len(blocks(root)) >= 5


@pytest.mark.filterwarnings("ignore:Badly conditioned filter coefficients")
def test_docs_python_script_runs(root):
    ns = {"__name__": "__docs__"}
    out = io.StringIO()
    for i, code in enumerate(blocks(root)):
        with contextlib.redirect_stdout(out):
            exec(compile(code, "docs/python.md block %d" % (i + 1), "exec"), ns)
    printed = out.getvalue()
    # what the comments of the script say it prints
    assert "mine.yaml:4:24: unknown name 'k' (in potential_energy)" in printed
    assert "mine.yaml 4 24" in printed
    assert "ArgumentError" in printed and "no parameter 'mass'" in printed
    assert "<E 38x38, A 38x38, B 38x0, C 0x38, D 0x0>" in printed


@pytest.mark.filterwarnings("ignore:Badly conditioned filter coefficients")
def test_readme_python_example_runs(root):
    code = BLOCK.findall((root / "README.md").read_text())
    assert len(code) == 1
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code[0], "README.md", "exec"), {"__name__": "__readme__"})
    assert "bad.yaml 3 1 bad.yaml:3:1: YAML error" in out.getvalue()
