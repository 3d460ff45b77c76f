"""`export(fn, *args, **kwargs)`: one graph for one set of example inputs, or an error.

Unlike `optimize`, nothing falls back: code that capture cannot put in the graph raises
`Unsupported` (with the reason and the user's file:line), and an exception the program raises
on the example inputs propagates. The result is an `ExportedProgram`: the captured graph
(`graph_module`, printable with `print_readable()`), pytree specs of its inputs and outputs,
the guards under which it is valid, and `__call__`, which checks them and runs the program.
"""

from __future__ import annotations

import inspect
import types
from typing import Any

import torch
import torch.utils._pytree as pytree
from guards import GuardSet
from torch import nn

from .backends import eager
from .dynamic import marked_dims
from .errors import CaptureError
from .interpreter.frame import UserException
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


def export(fn: Any, *args, dynamic_shapes=None, **kwargs) -> ExportedProgram:
    """Capture `fn(*args, **kwargs)` as one graph. `dynamic_shapes` (per argument: dims, or a
    dict dim -> fake_tensor.Dim with a name and range) makes those sizes symbolic."""
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
            result = CaptureSession(function, full, kwargs, exporting=True).run()
    except UserException as exc:
        raise exc.value.to_real() from None
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
