"""The graph being lowered, reachable from lowering functions without threading it through every call.

A context variable, not a module global: threads compile at the same time (a compiled
function called from several threads; autograd compiling a backward on its own thread), and
each must see only its own graph.
"""

from __future__ import annotations

import contextlib
import contextvars

_current: contextvars.ContextVar[tuple] = contextvars.ContextVar("inductor_lowering_graphs", default=())


def current_graph():
    graphs = _current.get()
    if not graphs:
        raise RuntimeError("a lowering ran outside GraphLowering.run()")
    return graphs[-1]


@contextlib.contextmanager
def lowering_graph(graph):
    token = _current.set((*_current.get(), graph))
    try:
        yield graph
    finally:
        _current.reset(token)
