"""Running a segment's original code eagerly after its compiled graph raised.

The entry replays the side effects the traced code had on Python objects (list appends,
attribute and global writes, printing) after the graph runs: when the graph raises part-way,
none are made, where eager made those that precede the op that raised (`log.append(1);
x[i]` with `i` out of range left `log` empty). The recorded effects are final states, not a
log, so those that precede a given op cannot be told apart. Instead, when the graph raised
having left nothing visible, the segment's own code (the compiled function, or the resume
function) runs again as eager runs it: it makes eager's side effects and raises eager's error.

The graph has left nothing visible when
- it writes no tensor and draws no random numbers (`graph_leaves_nothing`: any backend), or
- its compiler says so: a compiled graph with an `eager_replay` attribute (aot_autograd's) calls
  it, with the random state restored, where it would run the captured graph again eagerly
  (its inputs unwritten); the entry's hook raises `RerunSegment` there.
"""

from __future__ import annotations

import operator
from typing import Callable

import torch.fx as fx


class RerunSegment(Exception):
    """Raised through a compiled graph by its `eager_replay` hook: the graph raised having
    left nothing visible (its own error is this one's __context__)."""


def request_rerun(*inputs) -> None:
    raise RerunSegment


_INPLACE_OPERATORS = {
    getattr(operator, name)
    for name in ("iadd", "iand", "iconcat", "ifloordiv", "ilshift", "imatmul", "imod", "imul", "ior", "ipow",
                 "irshift", "isub", "itruediv", "ixor", "setitem", "delitem")
}
# Parts of the names of calls that draw random numbers or change what is outside the graph
# (gradients, generators). Conservative: a false match only keeps the error as it was.
_EFFECT_WORDS = ("rand", "normal", "bernoulli", "multinomial", "dropout", "poisson", "uniform", "exponential",
                 "cauchy", "geometric", "rrelu", "fractional", "seed", "rng", "backward", "grad", "hook")


def graph_leaves_nothing(graph: fx.Graph) -> bool:
    """Whether a run of `graph` that raises has changed nothing outside it: no call writes in
    place (`add_`, `x[i] = v`, `out=`) or draws random numbers or touches gradients."""
    for node in graph.nodes:
        if node.op in ("placeholder", "output", "get_attr"):
            continue
        if node.op not in ("call_function", "call_method") or node.target in _INPLACE_OPERATORS or "out" in node.kwargs:
            return False
        name = node.target if isinstance(node.target, str) else getattr(node.target, "__name__", str(node.target))
        parts = str(name).split(".")
        if any(part.endswith("_") and not part.endswith("__") for part in parts):
            return False
        if any(word in str(name).lower() for word in _EFFECT_WORDS):
            return False
    return True


class SegmentRerun:
    """Called by the entry with the compiled graph's error and the entry's arguments: runs
    `fn` (the segment's original code) eagerly where the graph left nothing visible, raising
    eager's error; returns otherwise (the entry re-raises the graph's error)."""

    def __init__(self, fn: Callable, graph: fx.Graph):
        self.fn = fn
        self.leaves_nothing = graph_leaves_nothing(graph)

    def __call__(self, error: BaseException, *args, **kwargs) -> None:
        if not isinstance(error, RerunSegment) and not self.leaves_nothing:
            return
        try:
            self.fn(*args, **kwargs)
        except Exception as eager_error:  # noqa: BLE001 (eager's own error, whatever it is)
            raise eager_error from None
        # Eager does not raise: the graph's own error is raised.
        if isinstance(error, RerunSegment):
            raise error.__context__ from None
