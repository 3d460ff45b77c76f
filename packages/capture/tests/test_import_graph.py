"""Imports inside capture point one way (STYLE.md: a function-local import that dodges a cycle
is a piece in the wrong module):

    interpreter, instructions, session, runtime  ->  calls, operators, wrap, graph
        ->  values  ->  errors, sources, markers, module_call, guard_kinds, type_keys

Values reach the layers above them only through the frame they are handed
(`values.base.TracingFrame`). Inside values the kinds build on each other in one order:
class_lookup, callables -> exceptions -> cells, tensor -> containers -> iterators, functions ->
objects -> modules, new_objects -> own_frame; a lower kind that must build a higher one (an
exception's `args` tuple) asks the frame. The graph counts module-level and function-level imports (not
`if TYPE_CHECKING:` ones, which never run); importing `a.b.c` also runs `a/__init__.py` and
`a/b/__init__.py`, so those are edges too.
"""

from __future__ import annotations

import ast
import pathlib

import capture

SOURCE = pathlib.Path(capture.__file__).resolve().parent

# The layers between the interpreter (on top) and values: what the interpreter runs values with.
MIDDLE = ("capture.calls", "capture.operators", "capture.wrap", "capture.graph")
# What values may import besides each other: modules that import nothing of capture's above.
BELOW_VALUES = {
    "capture.errors", "capture.sources", "capture.markers", "capture.module_call", "capture.guard_kinds",
    "capture.numpy_wrapping", "capture.type_keys",
}


def _module_names(root: pathlib.Path) -> dict[str, pathlib.Path]:
    names = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def _type_checking_only(tree: ast.AST) -> set[int]:
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(sub) for sub in ast.walk(node))
    return skipped


def _imported(node: ast.AST, module: str, is_package: bool) -> list[str]:
    """The dotted names an import statement brings in (`from . import x` names `pkg.x`)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    package = module if is_package else module.rpartition(".")[0]
    if node.level:
        base = package
        for _ in range(node.level - 1):
            base = base.rpartition(".")[0]
        target = f"{base}.{node.module}" if node.module else base
    else:
        target = node.module
    return [target, *(f"{target}.{alias.name}" for alias in node.names)]


def import_graph(root: pathlib.Path) -> dict[str, set[str]]:
    """module -> the modules of the same package it imports, at any level of nesting."""
    names = _module_names(root)

    def owner(dotted: str) -> str | None:
        while dotted and dotted not in names:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    graph: dict[str, set[str]] = {name: set() for name in names}
    for module, path in names.items():
        tree = ast.parse(path.read_text(), str(path))
        skipped = _type_checking_only(tree)
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)) or id(node) in skipped:
                continue
            dotted = _imported(node, module, path.name == "__init__.py")
            if isinstance(node, ast.Import):
                targets = {owner(d) for d in dotted}
            else:
                # `from pkg import sub` imports the submodule; `from mod import name` the module.
                targets = {owner(d) for d in dotted[1:] if owner(d) == d} or {owner(dotted[0])}
            for target in targets - {None, module}:
                graph[module].add(target)
                parts = target.split(".")
                for end in range(1, len(parts)):  # the packages whose __init__ runs first
                    package = ".".join(parts[:end])
                    if package in names and not module.startswith(package + "."):
                        graph[module].add(package)
    return graph


def strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """The import cycles: Tarjan's components of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph[node]):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def one_cycle(graph: dict[str, set[str]], component: set[str]) -> list[str]:
    """A concrete cycle inside `component`, for the failure message: a -> b -> ... -> a."""
    start = min(component)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        node = frontier.pop(0)
        for succ in sorted(graph[node] & component):
            if succ == start:
                return paths[node] + [start]
            if succ not in paths:
                paths[succ] = paths[node] + [succ]
                frontier.append(succ)
    raise AssertionError("not a cycle")


def test_no_import_cycle():
    graph = import_graph(SOURCE)
    cycles = strongly_connected(graph)
    assert not cycles, "import cycles in capture:\n" + "\n".join(" -> ".join(one_cycle(graph, c)) for c in cycles)


def _layer(module: str) -> int:
    """0 for the interpreter and everything else on top, then calls/operators, values, and the
    modules below values; a module may import its own layer and those below it."""
    if module in BELOW_VALUES:
        return 3
    if module.startswith("capture.values"):
        return 2
    if module.startswith(MIDDLE):
        return 1
    return 0


def test_imports_point_down_the_layers():
    graph = import_graph(SOURCE)
    offences = [
        f"{module} imports {target}"
        for module, targets in sorted(graph.items())
        for target in sorted(targets)
        if target != "capture" and _layer(target) < _layer(module)
    ]
    assert not offences, "imports that point up (values ask the frame, values.base.TracingFrame):\n" + "\n".join(
        offences
    )


def test_checker_sees_a_function_level_cycle_and_a_package_init(tmp_path):
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("def f():\n    from .b import g\n")
    (package / "b.py").write_text("from . import a\n")
    (package / "sub" / "__init__.py").write_text("from . import c\n")
    (package / "sub" / "c.py").write_text("import typing\nif typing.TYPE_CHECKING:\n    from .. import a\n")
    (package / "d.py").write_text("from .sub.c import x\n")
    (package / "sub" / "e.py").write_text("from ..d import y\n")
    graph = import_graph(package)
    components = strongly_connected(graph)
    assert {"pkg.a", "pkg.b"} in components
    # d -> sub.c runs sub/__init__, which imports sub.c; e -> d does not make sub a cycle.
    assert graph["pkg.d"] == {"pkg.sub", "pkg.sub.c"}
    assert "pkg.a" not in graph["pkg.sub.c"]  # TYPE_CHECKING imports never run
    assert one_cycle(graph, {"pkg.a", "pkg.b"}) == ["pkg.a", "pkg.b", "pkg.a"]


def test_the_frame_implements_what_values_ask_of_it():
    from capture.interpreter.frame import Frame
    from capture.values.base import TracingFrame

    asked = [name for name, member in vars(TracingFrame).items() if callable(member) and not name.startswith("_")]
    assert asked, "TracingFrame names no method"
    assert [name for name in asked if not callable(getattr(Frame, name, None))] == []
