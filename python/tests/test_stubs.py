"""The typed stubs (ucudnn/_ucudnn.pyi) name exactly what the extension has, so they cannot drift."""

import ast
import pathlib

import ucudnn
from ucudnn import _ucudnn


def declared_name(node):
    if isinstance(node, ast.FunctionDef):
        return node.name
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id
    if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    return None


def stub_names():
    """The stub's top-level names, and each class's member names."""
    tree = ast.parse(pathlib.Path(ucudnn.__file__).with_name("_ucudnn.pyi").read_text())
    top, members = set(), {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            top.add(node.name)
            members[node.name] = {declared_name(n) for n in node.body} - {None}
        elif declared_name(node):
            top.add(declared_name(node))
    return top, members


def test_the_stubs_name_every_public_name_of_the_extension():
    top, members = stub_names()
    extension = {n for n in dir(_ucudnn) if not n.startswith("_")} | {"__version__"}
    assert extension == {n for n in top if not n.startswith("_")} | ({"__version__"} & top)
    for name, names in members.items():
        own = {n for n in vars(getattr(_ucudnn, name)) if not n.startswith("_")}
        assert own <= names, f"{name}: not in the stubs: {own - names}"
        assert {n for n in names if not n.startswith("_")} <= own, f"{name}: not in the extension: {names - own}"
