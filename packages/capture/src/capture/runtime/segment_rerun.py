"""Running a segment's original code eagerly after its compiled graph raised.

The entry replays the side effects the traced code had on Python objects (list appends,
attribute and global writes, printing) after the graph runs: when the graph raises part-way,
none are made, where eager made those that precede the op that raised (`log.append(1);
x[i]` with `i` out of range left `log` empty). The recorded effects are final states, not a
log, so those that precede a given op cannot be told apart. Instead, when the graph raised
having left nothing visible, the segment's own code (the compiled function, or the resume
function) runs again as eager runs it: it makes eager's side effects and raises eager's error.

The graph has left nothing visible when
- it writes no tensor and draws no random numbers (`RunEffects.leaves_nothing`: any backend),
- its compiler says so: a compiled graph with an `eager_replay` attribute (aot_autograd's) calls
  it, with its inputs and the random state restored, where it would run the captured graph
  again eagerly; the entry's hook raises `RerunSegment` there, or
- the entry put it back: for a graph that writes its inputs or draws random numbers and has an
  op that may raise on values (an index, a divisor: `RunEffects.may_raise`), called through a
  backend that says nothing (the eager backend, a user's), the entry copies the inputs the
  graph writes and the generators' states before each call, and restores them when it raised.
  Only such graphs of entries with side effects pay for the copies.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Callable

import torch
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
# Parts of the names of calls that draw random numbers or set the generators: restored from
# the generators' states. Conservative: a false match only costs a copy of the states.
_RANDOM_WORDS = ("rand", "normal", "bernoulli", "multinomial", "dropout", "poisson", "uniform", "exponential",
                 "cauchy", "geometric", "rrelu", "fractional", "seed", "rng")
# Calls that change what no copy restores (gradients, hooks): a graph making them is not rerun.
# (Grad mode, `_set_grad_enabled`, is set back by the graph's own code as it unwinds.)
_UNRESTORABLE_WORDS = ("backward", "hook")
_UNRESTORABLE_NAMES = {"grad", "retain_grad"}
# In-place calls that change a tensor's shape or autograd state, which copying values back
# does not undo.
_METADATA_WRITES = {"resize_", "resize_as_", "set_", "t_", "transpose_", "squeeze_", "unsqueeze_", "as_strided_",
                    "swapdims_", "swapaxes_", "detach_", "requires_grad_"}
# Calls that check values only a run shows, beyond those taking an integer tensor (an index,
# a target, a divisor): factorizations and samplers refusing their input, asserts.
_RAISING_WORDS = ("linalg", "cholesky", "inverse", "solve", "multinomial", "bernoulli", "assert", "check")


@dataclass(frozen=True)
class RunEffects:
    """What a run of a captured graph that raises part-way may have changed outside it."""

    written: tuple[int, ...]  # positions of the graph inputs it writes in place (through views too)
    random_devices: tuple[str, ...]  # the devices whose generators it draws from
    writes: bool  # any in-place call, on an input or not
    restorable: bool  # it changes nothing but input values and generators
    may_raise: bool  # an op checks values only a run shows

    @property
    def leaves_nothing(self) -> bool:
        return self.restorable and not self.writes and not self.random_devices

    @property
    def needs_snapshot(self) -> bool:
        return self.restorable and self.may_raise and bool(self.written or self.random_devices)


def run_effects(graph: fx.Graph) -> RunEffects:
    placeholders = list(graph.find_nodes(op="placeholder"))
    storages = [_storage(node) for node in placeholders]
    # A fake's version counter, shared with its views, counts the writes the trace made to it
    # however they were spelled (`F.leaky_relu(x, inplace=True)`, `x[:2].add_(1)`).
    written = {k for k, node in enumerate(placeholders) if _version(node)}
    devices: set[str] = set()
    writes = may_raise = False
    restorable = True
    for node in graph.nodes:
        if node.op in ("placeholder", "output"):
            continue
        if node.op == "get_attr":
            restorable = restorable and not _version(node)
            continue
        if node.op not in ("call_function", "call_method"):
            restorable, may_raise = False, True
            continue
        name = str(node.target if isinstance(node.target, str) else getattr(node.target, "__name__", node.target))
        lowered = name.lower()
        if _writes_in_place(node, name):
            writes = True
            target = node.kwargs.get("out", node.args[0] if node.args else None)
            for value in _tensors(target):
                written.update(k for k, s in enumerate(storages) if s is not None and s == _storage(value))
                # Copied back outside inference mode, an inference tensor refuses the write.
                restorable = restorable and not value.is_inference()
            restorable = restorable and name.split(".")[-1] not in _METADATA_WRITES
        if any(word in lowered for word in _RANDOM_WORDS):
            value = _value(node)
            devices.add(str(value.device) if isinstance(value, torch.Tensor) else "cpu")
        if any(word in lowered for word in _UNRESTORABLE_WORDS) or name.split(".")[-1] in _UNRESTORABLE_NAMES:
            restorable = False
        may_raise = may_raise or _may_raise(node, lowered)
    return RunEffects(tuple(sorted(written)), tuple(sorted(devices)), writes or bool(written), restorable, may_raise)


def _writes_in_place(node: fx.Node, name: str) -> bool:
    if node.target in _INPLACE_OPERATORS or "out" in node.kwargs or node.kwargs.get("inplace") is True:
        return True
    return any(part.endswith("_") and not part.endswith("__") for part in name.split("."))


def _may_raise(node: fx.Node, lowered_name: str) -> bool:
    """Whether the call may raise on values: it reads an integer tensor (indexing, gather,
    embedding, a loss's targets, integer division) or checks its input's values."""
    if any(word in lowered_name for word in _RAISING_WORDS):
        return True
    for argument in _flat(node.args, node.kwargs):
        if argument.op == "get_attr":  # a subgraph (a higher-order op's body) or a constant
            return True
        value = _value(argument)
        if isinstance(value, torch.Tensor) and not (value.is_floating_point() or value.is_complex() or value.dtype == torch.bool):
            return True
    return False


def _flat(*arguments) -> list[fx.Node]:
    found: list[fx.Node] = []
    fx.node.map_arg(arguments, found.append)
    return found


def _version(node: fx.Node) -> int:
    """How many writes the trace made to the node's value; 0 for an inference tensor, which
    keeps no counter (writes to it are found by the call's name)."""
    value = _value(node)
    if not isinstance(value, torch.Tensor) or value.is_inference():
        return 0
    return value._version


def _value(node: fx.Node):
    return node.meta.get("example_value")


def _tensors(target) -> list:
    found = []
    fx.node.map_arg(target, found.append)
    return [_value(node) for node in found if isinstance(_value(node), torch.Tensor)]


def _storage(node_or_value):
    value = _value(node_or_value) if isinstance(node_or_value, fx.Node) else node_or_value
    return value.untyped_storage()._cdata if isinstance(value, torch.Tensor) else None


class _Snapshot:
    """The values of the written inputs and the generators' states before a call."""

    def __init__(self, written: tuple, devices: tuple[str, ...]):
        self.written = written
        with torch.no_grad():
            self.copies = [tensor.clone() for tensor in written]
        self.devices = devices
        self.states = [_generator(device).get_state() for device in devices]

    def restore(self) -> None:
        with torch.no_grad():
            for tensor, copy in zip(self.written, self.copies):
                tensor.copy_(copy)
        for device, state in zip(self.devices, self.states):
            _generator(device).set_state(state)


def _generator(device: str) -> torch.Generator:
    if device == "cpu":
        return torch.default_generator
    return torch.cuda.default_generators[torch.device(device).index or 0]


class SegmentRerun:
    """Called by the entry with the compiled graph's error, its snapshot and the entry's
    arguments: runs `fn` (the segment's original code) eagerly where the graph left nothing
    visible, raising eager's error; returns otherwise (the entry re-raises the graph's error)."""

    def __init__(self, fn: Callable, graph: fx.Graph):
        self.fn = fn
        self.effects = run_effects(graph)
        # Off where the compiled graph restores what it changed itself (entry.set_compiled_graph).
        self.snapshots = self.effects.needs_snapshot

    def snapshot(self, *written) -> _Snapshot | None:
        """`written`: the graph's inputs at `effects.written`."""
        if not self.snapshots:
            return None
        # A write recorded in a tensor's autograd history is not undone by copying values back.
        if torch.is_grad_enabled() and any(t.requires_grad and not t.is_leaf for t in written):
            return None
        return _Snapshot(written, self.effects.random_devices)

    def __call__(self, error: BaseException, snapshot: _Snapshot | None, *args, **kwargs) -> None:
        if not isinstance(error, Exception):  # an interrupt, an exit: no rerun
            return
        if snapshot is not None:
            snapshot.restore()
        elif not isinstance(error, RerunSegment) and not self.effects.leaves_nothing:
            return
        try:
            self.fn(*args, **kwargs)
        except Exception as eager_error:  # noqa: BLE001 (eager's own error, whatever it is)
            raise eager_error from None
        # Eager does not raise: the graph's own error is raised.
        if isinstance(error, RerunSegment):
            raise error.__context__ from None
