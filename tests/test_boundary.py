"""The boundary of shared/DESIGN.md: packages never reach into the compiler we rebuild, and
import only those of our packages that their pyproject.toml declares."""

from __future__ import annotations

import ast
import pathlib
import tomllib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGES = sorted(p.name for p in (ROOT / "packages").iterdir() if (p / "pyproject.toml").exists())

OFF_LIMITS = (
    "torch._dynamo",
    "torch._inductor",
    "torch._functorch",
    "torch._subclasses",
    "torch._export",
    "torch._guards",
    "torch._C._dynamo",
    "torch.export",
    "torch.compile",
    "torch.func.functionalize",
    "torch.fx.experimental.symbolic_shapes",
    "torch.fx.experimental.sym_node",
    "torch.fx.experimental.proxy_tensor",
)


def _is_off_limits(dotted: str) -> bool:
    return any(dotted == bad or dotted.startswith(bad + ".") for bad in OFF_LIMITS)


def _dotted(node: ast.AST) -> str | None:
    """`torch._dynamo.config` for an attribute chain rooted at a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(parts)])
    return None


def _references(tree: ast.AST):
    """(line, dotted name) for every import and every attribute chain in a module."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.lineno, node.module
            for alias in node.names:
                yield node.lineno, f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Attribute):
            dotted = _dotted(node)
            if dotted:
                yield node.lineno, dotted
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            # importlib.import_module("torch._dynamo") and __import__ spelled as strings.
            if node.func.id in ("import_module", "__import__") and node.args:
                arg = node.args[0]
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    yield node.lineno, arg.value


def _declared_packages(package: str) -> set[str]:
    meta = tomllib.loads((ROOT / "packages" / package / "pyproject.toml").read_text())
    declared = {package}
    for requirement in meta["project"]["dependencies"]:
        name = requirement.split(";")[0].strip()
        for sep in "<>=!~[ ":
            name = name.split(sep)[0]
        if name.startswith("ptc-"):
            declared.add(name.removeprefix("ptc-").replace("-", "_"))
    return declared


def _sources(package: str):
    return sorted((ROOT / "packages" / package / "src").rglob("*.py"))


@pytest.mark.parametrize("package", PACKAGES)
def test_no_off_limits_torch_internals(package):
    offences = []
    for path in _sources(package):
        for line, name in _references(ast.parse(path.read_text(), str(path))):
            if _is_off_limits(name):
                offences.append(f"{path.relative_to(ROOT)}:{line}: {name}")
    assert not offences, "reaches into the compiler we rebuild (DESIGN.md, 'The boundary'):\n" + "\n".join(offences)


@pytest.mark.parametrize("package", PACKAGES)
def test_imports_only_declared_packages(package):
    declared = _declared_packages(package)
    offences = []
    for path in _sources(package):
        for line, name in _references(ast.parse(path.read_text(), str(path))):
            top = name.split(".")[0]
            if top in PACKAGES and top not in declared:
                offences.append(f"{path.relative_to(ROOT)}:{line}: imports {top}")
    assert not offences, "imports packages its pyproject.toml does not declare:\n" + "\n".join(offences)


def test_boundary_checker_sees_violations():
    """The checker itself: each spelling of a forbidden reach is caught."""
    snippets = [
        "import torch._dynamo",
        "from torch._inductor import config",
        "from torch.fx.experimental import proxy_tensor",
        "import torch\nf = torch.compile(g)",
        "import torch\nx = torch._subclasses.FakeTensorMode",
        "from importlib import import_module\nimport_module('torch._functorch')",
    ]
    for snippet in snippets:
        names = [name for _, name in _references(ast.parse(snippet))]
        assert any(_is_off_limits(n) for n in names), snippet
    allowed = "import torch\nfrom torch.fx import Graph\nfrom torch._decomp import core_aten_decompositions"
    assert not any(_is_off_limits(n) for _, n in _references(ast.parse(allowed)))


def test_test_file_names_are_unique_across_packages():
    """pytest imports test files by basename (rootdir mode), so two packages' test files with
    the same name break the all-packages session at collection."""
    seen: dict[str, pathlib.Path] = {}
    clashes = []
    for path in sorted(ROOT.glob("packages/*/tests/**/*.py")) + sorted(ROOT.glob("tests/**/*.py")):
        if path.name in ("__init__.py", "conftest.py"):
            continue
        if path.name in seen:
            clashes.append(f"{seen[path.name].relative_to(ROOT)} and {path.relative_to(ROOT)}")
        seen[path.name] = path
    assert not clashes, "rename one of each pair:\n" + "\n".join(clashes)
