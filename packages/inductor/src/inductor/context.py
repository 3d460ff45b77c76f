"""Ambient state: what a compile sets for the code it runs, without threading it through every
call. Two pieces today, each an `Ambient`: the graph being lowered (`current_graph`, read by
lowering functions) and the ops handler that gives IR bodies meaning (ops.py).

Context variables, not module globals: threads compile at the same time (a compiled function
called from several threads; autograd compiling a backward on its own thread), and each must
see only its own state. Settings are not ambient: they are fields of the graph's
`CompileOptions` (options.py), which travels with the graph to whatever thread lowers it.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


class Ambient(Generic[T]):
    """One piece of ambient state: `using(value)` makes `value` current for the code it wraps
    (nested uses restore the outer value on exit); `get()` reads it."""

    def __init__(self, name: str, unset_message: str):
        self._var: contextvars.ContextVar[T | None] = contextvars.ContextVar(name, default=None)
        self._unset_message = unset_message

    def get(self) -> T:
        value = self._var.get()
        if value is None:
            raise RuntimeError(self._unset_message)
        return value

    @contextlib.contextmanager
    def using(self, value: T) -> Iterator[T]:
        token = self._var.set(value)
        try:
            yield value
        finally:
            self._var.reset(token)


_graph: Ambient = Ambient("inductor_lowering_graph", "a lowering ran outside GraphLowering.run()")


def current_graph():
    """The GraphLowering whose `run()` is lowering now, on this thread."""
    return _graph.get()


def lowering_graph(graph):
    return _graph.using(graph)
