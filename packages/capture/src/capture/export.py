"""`export(fn, *args, **kwargs)`: one graph for one set of example inputs, or an error.

Unlike `optimize`, nothing falls back: code that capture cannot put in the graph raises
`Unsupported` (with the reason and the user's file:line), and an exception the program raises
on the example inputs propagates. The result is an `ExportedProgram`: the captured graph
(`graph_module`, printable with `print_readable()`), pytree specs of its inputs and outputs,
the guards under which it is valid, and `__call__`, which checks them and runs the program.
"""

from __future__ import annotations

import types
from typing import Any

import torch
import torch.utils._pytree as pytree
from guards import GuardSet
from torch import nn

from .backends import eager
from .errors import CaptureError
from .interpreter.frame import UserException
from .optimize import _function_of
from .runtime.entry import CompiledEntry, build_entry, identifier
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


def export(fn: Any, *args, dynamic_shapes=None, **kwargs) -> ExportedProgram:
    if dynamic_shapes is not None:
        raise CaptureError("export(dynamic_shapes=...) is not supported yet: shapes are static")
    if isinstance(fn, nn.Module):
        function, bound = type(fn).forward, fn
        if "forward" in fn.__dict__:
            function, bound = _function_of(fn.__dict__["forward"])
    else:
        function, bound = _function_of(fn)
    full = (bound, *args) if bound is not None else args
    try:
        result = CaptureSession(function, exporting=True).run(full, kwargs)
    except UserException as exc:
        raise exc.value.to_real() from None
    graph_module = torch.fx.GraphModule(torch.nn.Module(), result.graph)
    compiled = eager(graph_module, [i.value for i in result.inputs])
    guard = GuardSet(result.guards).compile(function, name=f"guards_{identifier(function.__code__.co_name)}")
    entry = build_entry(function, result, compiled, graph_module, guard)
    entry.function.__defaults__ = function.__defaults__
    entry.function.__kwdefaults__ = function.__kwdefaults__
    outputs = entry.function(*full, **kwargs)
    _, in_spec = pytree.tree_flatten((args, kwargs))
    _, out_spec = pytree.tree_flatten(outputs)
    return ExportedProgram(function, bound, entry, in_spec, out_spec)
