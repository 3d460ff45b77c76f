"""`export(fn, args, kwargs)`: one graph for one set of example inputs, or an error.

Unlike `optimize`, nothing falls back: code that capture cannot put in the graph raises
`Unsupported` (with the reason and the user's file:line), and an exception the program raises
on the example inputs propagates. The result is an `ExportedProgram`: the captured graph
(`graph_module`, printable with `print_readable()`), pytree specs of its inputs and outputs,
the guards under which it is valid, and `__call__`, which checks them and runs the program.

As with torch.export, `graph_module`'s placeholders are the lifted inputs first (parameters,
buffers and other tensors the program reads that are not its arguments), then every leaf of
the flattened `(args, kwargs)` in that order, used or not: `program.graph_module(*lifted,
*pytree.tree_leaves((args, kwargs)))` runs the graph.
"""

from __future__ import annotations

import inspect
import types
from typing import Any

import torch
import torch.utils._pytree as pytree
from guards import AttrSource, GuardSet, ItemSource, LocalSource
from torch import nn

from .backends import eager
from .dynamic import marked_dims
from .errors import CaptureError, UserException
from .graph import GraphInput, placeholder_name
from .optimize import function_and_self
from .runtime.entry import CompiledEntry, build_entry, identifier, set_compiled_graph
from .session import CaptureSession


class ExportGuardError(CaptureError):
    """An exported program was called with inputs its guards reject."""


class ExportedProgram:
    def __init__(self, fn: types.FunctionType, bound: Any, entry: CompiledEntry, in_spec, out_spec):
        self._fn = fn
        self._bound = bound
        self._entry = entry
        self.graph_module: torch.fx.GraphModule = entry.graph_module
        self.in_spec = in_spec
        self.out_spec = out_spec
        self.guards = entry.guard

    @property
    def graph(self) -> torch.fx.Graph:
        return self.graph_module.graph

    @property
    def entry_source(self) -> str:
        """The generated Python that fetches inputs, runs the graph and rebuilds outputs."""
        return self._entry.source

    def _arguments(self, args):
        return (self._bound, *args) if self._bound is not None else args

    def __call__(self, *args, **kwargs):
        full = self._arguments(args)
        if not self.guards(*full, **kwargs):
            raise ExportGuardError(
                f"inputs do not match the exported program: {self.guards.why(*full, **kwargs)}"
            )
        return self._entry.function(*full, **kwargs)

    def __str__(self) -> str:
        return self.graph_module.print_readable(print_output=False)


def _dynamic_specs(function: types.FunctionType, bound: Any, args, kwargs, dynamic_shapes) -> list:
    """(tensor, dims) pairs from `dynamic_shapes`: per argument (a tuple/list in positional
    order, or a dict by parameter name), a list of dims or a dict dim -> fake_tensor.Dim."""
    full = (bound, *args) if bound is not None else args
    arguments = inspect.signature(function, follow_wrapped=False).bind(*full, **kwargs).arguments
    names = [n for n in arguments if not (bound is not None and arguments[n] is bound)]
    if isinstance(dynamic_shapes, dict):
        pairs = dynamic_shapes.items()
    else:
        pairs = zip(names, dynamic_shapes)
    specs = []
    for name, dims in pairs:
        if name not in arguments:
            raise CaptureError(f"dynamic_shapes names {name!r}, which is not an argument of {function.__qualname__}")
        if dims is None:
            continue
        tensor = arguments[name]
        if not isinstance(tensor, torch.Tensor):
            raise CaptureError(f"dynamic_shapes[{name!r}]: the argument is a {type(tensor).__name__}, not a tensor")
        specs.append((tensor, dims))
    return specs


def _argument_leaves(function: types.FunctionType, bound: Any, args: tuple, kwargs: dict) -> list[tuple[Any, Any]]:
    """(source, value) of every leaf of the flattened `(args, kwargs)`, in pytree order."""
    parameters = list(inspect.signature(function, follow_wrapped=False).parameters.values())
    if bound is not None:
        parameters = parameters[1:]
    positional = [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    varargs = next((p.name for p in parameters if p.kind is p.VAR_POSITIONAL), None)
    varkw = next((p.name for p in parameters if p.kind is p.VAR_KEYWORD), None)
    named = {p.name for p in parameters if p.kind is not p.VAR_POSITIONAL and p.kind is not p.VAR_KEYWORD}

    def argument_source(path):
        kind, key = path[0].idx, path[1]
        if kind == 0:  # args[i]
            i = key.idx
            return LocalSource(positional[i]) if i < len(positional) else ItemSource(LocalSource(varargs), i - len(positional))
        name = key.key  # kwargs[name]
        return LocalSource(name) if name in named or varkw is None else ItemSource(LocalSource(varkw), name)

    leaves = []
    for path, value in pytree.tree_flatten_with_path((args, kwargs))[0]:
        source, container = argument_source(path), (args, kwargs)[path[0].idx][_key(path[1])]
        for key in path[2:]:
            if isinstance(key, pytree.GetAttrKey) and isinstance(container, tuple):
                # namedtuple fields are read (and guarded) by position, as capture wraps them.
                index = container._fields.index(key.name)
                source, container = ItemSource(source, index), container[index]
            elif isinstance(key, pytree.GetAttrKey):
                source, container = AttrSource(source, key.name), getattr(container, key.name)
            else:
                source, container = ItemSource(source, _key(key)), container[_key(key)]
        leaves.append((source, value))
    return leaves


def _key(key) -> Any:
    return key.idx if isinstance(key, pytree.SequenceKey) else key.key


def _inputs_in_argument_order(session: CaptureSession, result, leaves: list[tuple[Any, Any]]) -> None:
    """Reorder the graph's placeholders: lifted inputs, then one per argument leaf (a leaf
    the program never reads gets a placeholder nothing uses)."""
    graph = result.graph
    by_source = {graph_input.source: graph_input for graph_input in result.inputs}
    leaf_sources = {source for source, _ in leaves}
    ordered = [graph_input for graph_input in result.inputs if graph_input.source not in leaf_sources]
    for source, value in leaves:
        graph_input = by_source.get(source)
        if graph_input is None:
            node = graph.placeholder(placeholder_name(source))
            node.meta["source"] = source
            if isinstance(value, torch.Tensor):
                node.meta["example_value"] = session.fake_mode.from_real(value, source=source)
            graph_input = GraphInput(source, value, node)
        ordered.append(graph_input)
    operations = next(node for node in graph.nodes if node.op != "placeholder")
    for graph_input in ordered:
        operations.prepend(graph_input.node)  # moves it: the placeholders end up in order
    result.inputs[:] = ordered
    graph.lint()


def export(fn: Any, args: tuple = (), kwargs: dict | None = None, *, dynamic_shapes=None) -> ExportedProgram:
    """Capture `fn(*args, **kwargs)` as one graph (torch.export's calling convention).
    `dynamic_shapes` (per argument: dims, or a dict dim -> fake_tensor.Dim with a name and
    range) makes those sizes symbolic."""
    if not isinstance(args, tuple):
        raise CaptureError(f"export(fn, args, kwargs): args must be a tuple, got {type(args).__name__}")
    kwargs = dict(kwargs or {})
    if isinstance(fn, nn.Module):
        function, bound = type(fn).forward, fn
        if "forward" in fn.__dict__:
            function, bound = function_and_self(fn.__dict__["forward"])
    else:
        function, bound = function_and_self(fn)
    full = (bound, *args) if bound is not None else args
    specs = _dynamic_specs(function, bound, args, kwargs, dynamic_shapes) if dynamic_shapes is not None else []
    try:
        with marked_dims(specs):
            session = CaptureSession(function, full, kwargs, exporting=True)
            result = session.run()
    except UserException as exc:
        raise exc.value.to_real() from None
    _inputs_in_argument_order(session, result, _argument_leaves(function, bound, args, kwargs))
    graph_module = torch.fx.GraphModule(torch.nn.Module(), result.graph)
    guard = GuardSet(result.guards).compile(function, name=f"guards_{identifier(function.__code__.co_name)}")
    entry = build_entry(function, result, graph_module, guard)
    set_compiled_graph(entry, eager(graph_module, [i.value for i in result.inputs]))
    entry.function.__defaults__ = function.__defaults__
    entry.function.__kwdefaults__ = function.__kwdefaults__
    outputs = entry.function(*full, **kwargs)
    _, in_spec = pytree.tree_flatten((args, kwargs))
    _, out_spec = pytree.tree_flatten(outputs)
    return ExportedProgram(function, bound, entry, in_spec, out_spec)
