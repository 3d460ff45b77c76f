"""Python constants: immutable values whose every operation capture evaluates at trace time.

A constant read from the frame's inputs is guarded on its value (a different value misses the
cache and recaptures), so baking it into the graph is sound.
"""

from __future__ import annotations

import enum
import math
import types
from typing import Any

import torch
from guards import HeldObjectSource
from guards.sources import AttrSource, ItemSource

from .base import Value
from .factory import evaluate_constant_operation
from .symbolic import sequence_index

# Types whose instances are immutable and whose operations have no side effects.
CONSTANT_TYPES: tuple[type, ...] = (
    type(None),
    bool,
    int,
    float,
    complex,
    str,
    bytes,
    type(Ellipsis),
    type(NotImplemented),
    range,
    torch.dtype,
    torch.device,
    torch.layout,
    torch.memory_format,
    torch.Size,
    torch.finfo,
    torch.iinfo,
    types.CodeType,
    types.GenericAlias,  # `list[Tensor]`, as in `typing.cast(list[Tensor], x)`
    types.UnionType,  # `int | None`, as isinstance's second argument
)


def is_constant_type(obj: Any) -> bool:
    # By type, not isinstance: isinstance reads `obj.__class__` through the object's own
    # __getattribute__ when its type does not match, a call the program would not make.
    if issubclass(type(obj), CONSTANT_TYPES):
        return True
    if type(obj) in (tuple, frozenset):
        return all(is_constant_type(item) for item in obj)
    if type(obj) is slice:
        return all(is_constant_type(v) for v in (obj.start, obj.stop, obj.step))
    return False


class ConstantValue(Value):
    def __init__(self, value: Any, source=None):
        super().__init__(source)
        self.value = value

    def python_type(self) -> type:
        return type(self.value)

    def describe(self) -> str:
        try:
            text = repr(self.value)
        except Exception:  # noqa: BLE001  (an int subclass half-built by the traced code, say)
            text = f"{type(self.value).__qualname__} object"
        return f"constant {text if len(text) < 40 else text[:37] + '...'}"

    def as_python_constant(self) -> Any:
        return self.value

    def get_attr(self, frame, name):
        if isinstance(self.value, enum.Enum):
            return _enum_member_attribute(frame, self, name)
        return evaluate_constant_operation(frame, getattr, (self.value, name))

    def get_item(self, frame, key):
        # A symbolic index (`range(100)[x.shape[0]]`) is specialized to its value, guarded.
        return evaluate_constant_operation(frame, lambda v, k: v[k], (self.value, sequence_index(frame, key)))

    def unpack(self, frame):
        try:
            items = list(self.value)
        except TypeError as err:  # the program's own error: iterating a number
            frame.raise_real(err)
        return [ConstantValue(item) for item in items]

    def truth(self, frame) -> bool:
        return bool(self.value)

    def length(self, frame):
        return evaluate_constant_operation(frame, len, (self.value,))

    def has_attr(self, frame, name):
        return hasattr(self.value, name)

    def reconstruct(self, writer):
        return writer.constant(self.value)


def _enum_member_attribute(frame, member: ConstantValue, name: str) -> Value:
    # A member is one fixed object, but what it holds need not be constant: `E.A.value` may be a
    # list the program mutates between calls. Such an attribute is read through the member (held
    # by the entry where no input leads to it), so that its contents are guarded.
    # A number or string the member holds in its own dict (its `_value_`, what `.value` gives,
    # or an attribute its __init__ set) can be reassigned too: read from that dict, guarded.
    try:
        result = getattr(member.value, name)
    except Exception as err:  # the program's own error: a missing attribute
        frame.raise_real(err)
    own = "_value_" if name == "value" and _class_attribute(type(member.value), "value") is enum.Enum.__dict__["value"] else name
    held_in_dict = own in getattr(member.value, "__dict__", {}) and vars(member.value)[own] is result
    if isinstance(result, (enum.Enum, types.MethodType, types.BuiltinMethodType)) or is_constant_type(result) and not held_in_dict:
        return frame.session.wrap(result, None)
    base = member.source
    if base is None:
        base = HeldObjectSource(f"enum member {type(member.value).__qualname__}.{member.value.name}", id(member.value), member.value)
    if is_constant_type(result):
        return frame.session.wrap(result, ItemSource(AttrSource(base, "__dict__"), own))
    return frame.session.wrap(result, AttrSource(base, name))


def _class_attribute(cls: type, name: str) -> Any:
    return next((klass.__dict__[name] for klass in cls.__mro__ if name in klass.__dict__), None)


def literal_repr(value: Any) -> str | None:
    """A Python expression that evaluates to `value`, for values whose repr round-trips."""
    if value is None or isinstance(value, (bool, str, bytes)) or type(value) is int:
        return repr(value)
    if type(value) is float:
        if math.isfinite(value):
            return repr(value)
        return None
    return None
