"""The graph being lowered, reachable from lowering functions without threading it through every call."""

from __future__ import annotations

import contextlib

_current = []


def current_graph():
    if not _current:
        raise RuntimeError("a lowering ran outside GraphLowering.run()")
    return _current[-1]


@contextlib.contextmanager
def lowering_graph(graph):
    _current.append(graph)
    try:
        yield graph
    finally:
        _current.pop()
