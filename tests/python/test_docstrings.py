"""Every public call has a docstring, and the type stub (mblin/__init__.pyi) declares every public
name and method the package has."""
import ast
import inspect
import pathlib

import mblin


def public_members(cls):
    return [n for n, v in vars(cls).items() if not n.startswith("_") and (inspect.isfunction(v) or isinstance(v, property))]


def test_every_public_call_has_a_docstring():
    missing = []
    for name in mblin.__all__:
        obj = getattr(mblin, name)
        if name == "__version__":
            continue
        if not (obj.__doc__ or "").strip():
            missing.append(name)
        if inspect.isclass(obj) and obj.__module__ == "mblin":
            for m in public_members(obj):
                f = vars(obj)[m]
                if not (f.__doc__ or "").strip():
                    missing.append("%s.%s" % (name, m))
    assert not missing, "no docstring: %s" % ", ".join(missing)


def test_stub_declares_the_api():
    stub = pathlib.Path(mblin.__file__).with_name("__init__.pyi")
    tree = ast.parse(stub.read_text())
    top, classes = set(), {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            top.add(node.name)
        elif isinstance(node, ast.AnnAssign):
            top.add(node.target.id)
        if isinstance(node, ast.ClassDef):
            classes[node.name] = {n.name for n in node.body if isinstance(n, ast.FunctionDef)} | \
                                 {n.target.id for n in node.body if isinstance(n, ast.AnnAssign)}
    assert set(mblin.__all__) <= top, set(mblin.__all__) - top
    for name in mblin.__all__:
        obj = getattr(mblin, name)
        if inspect.isclass(obj) and name in ("Model", "OperatingPoint", "Linearization", "Mode", "Comparison"):
            declared = classes[name]
            assert set(public_members(obj)) <= declared, (name, set(public_members(obj)) - declared)
    # the attributes a Linearization really has are declared
    lin = mblin.load("examples/slider_pendulum.yaml").linearize()
    attrs = {k for k in vars(lin) if not k.startswith("_")}
    assert attrs <= classes["Linearization"], attrs - classes["Linearization"]
    pt = lin.point
    assert {k for k in vars(pt) if not k.startswith("_")} <= classes["OperatingPoint"]
    m = lin.model
    assert {k for k in vars(m) if not k.startswith("_")} <= classes["Model"]
