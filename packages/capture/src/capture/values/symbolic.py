"""Symbolic sizes: a `torch.SymInt` (or SymFloat/SymBool) from a dynamic dimension, with the
FX node that computes it when the graph runs (`x.size(0)`, `s0 * 2`).

Arithmetic on them stays symbolic (graph nodes); asking for a concrete answer (`if n > 1`,
`range(n)`, using it as a list index) asks the ShapeEnv, which records the guard that keeps
the answer valid.
"""

from __future__ import annotations

import operator

import torch

from ..errors import Unsupported
from .base import NotConstant, Value

SYMBOLIC_TYPES = (torch.SymInt, torch.SymFloat, torch.SymBool)
_PYTHON_TYPE = {torch.SymInt: int, torch.SymFloat: float, torch.SymBool: bool}


class SymValue(Value):
    """`source` is set for a graph input (a symbolic number read from the frame)."""

    def __init__(self, node: torch.fx.Node, value, source=None):
        super().__init__(source)
        self.node = node
        self.value = value

    def python_type(self):
        return _PYTHON_TYPE[type(self.value)]

    def describe(self):
        return f"a symbolic {self.python_type().__name__} ({self.value})"

    def as_fake(self):
        return self.value

    def as_node_arg(self):
        return self.node

    def truth(self, frame):
        return bool(self.value)

    def get_attr(self, frame, name):
        # int and float methods the graph has no node for (`n.bit_length()`, `f.is_integer()`,
        # `n.to_bytes(...)`): those of the value at the example inputs, guarded to stay it.
        return frame.session.wrap(self.specialize(), None).get_attr(frame, name)

    def specialize(self):
        """The concrete value at the example inputs, guarded to stay so."""
        return self.python_type()(self.value)

    def reconstruct(self, writer):
        if self.node.op == "placeholder":
            return writer.source(self.source)
        return writer.graph_output(self)


def concrete(value: Value):
    """The Python constant behind `value`; symbolic sizes are specialized (with a guard), in
    a slice's bounds too (`text[-n:]` of a string)."""
    if isinstance(value, SymValue):
        return value.specialize()
    if isinstance(value, SlicedBy):
        return slice(*(concrete(part) for part in value.parts))
    return value.as_python_constant()


def sequence_index(frame, key: Value):
    """The int or slice `key` stands for as the index of a list, tuple, range or str: constants
    as they are, symbolic sizes specialized (guarded), and an object whose class has its own
    `__index__` converted through it (traced), as CPython's subscript does."""
    if isinstance(key, SlicedBy):
        return slice(*(sequence_index(frame, part) for part in key.parts))
    if isinstance(key, SymValue) or key.is_python_constant():
        return concrete(key)
    kind = key.python_type()
    if hasattr(kind, "__index__") and not issubclass(kind, torch.Tensor):
        return concrete(frame.call_builtin(operator.index, [key], {}))
    raise Unsupported(f"indexing a sequence with {key.describe()}")


class SlicedBy(Value):
    """Base of a slice whose bounds are values (capture.values.containers.SliceValue)."""

    parts: tuple


def specialized_constant(value: Value):
    """`concrete`, also for a tuple (a torch.Size, a namedtuple) holding symbolic sizes: each
    specialized to its value (guarded), so that `f"{tuple(x.shape)}"` is one string and
    `x.shape in d` one lookup, as torch.compile guards them."""
    if isinstance(value, SymValue):
        return value.specialize()
    try:
        return value.as_python_constant()
    except NotConstant:
        items = getattr(value, "items", None)
        cls = value.python_type() if isinstance(items, list) else None
        if cls is None or not issubclass(cls, tuple):
            raise
    parts = [specialized_constant(item) for item in items]
    return cls(*parts) if hasattr(cls, "_fields") else cls(parts)


def is_symbolic(obj) -> bool:
    return isinstance(obj, SYMBOLIC_TYPES)


def contains_symbolic(obj) -> bool:
    if is_symbolic(obj):
        return True
    if isinstance(obj, (tuple, list)):
        return any(contains_symbolic(x) for x in obj)
    return False

