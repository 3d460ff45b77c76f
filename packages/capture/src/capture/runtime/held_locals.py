"""Dead locals a graph break hands on anyway, because eager's frame still holds them.

CPython keeps every local alive until the name is rebound, deleted or the function returns,
whether or not it is read again. A break hands the resume function only what it reads, so an
object held by a dead local alone died when the compiled entry returned: a WeakKeyDictionary
lost its key (`d[a] = 1; d[b] = 2; return len(d)` gave 1), a weak reference went dead and its
callback ran, `__del__` ran early. Objects whose lifetime cannot show (tensors, whose memory a
break should free early as torch.compile's does, numbers, strings) and values the entry could
not rebuild cheaply stay behind, as before.
"""

from __future__ import annotations

from ..sources import HeldSource
from ..values.base import Value
from ..values.constant import ConstantValue
from ..values.lazy import LazyInput
from ..values.lifetime import LIFETIME_UNSEEN
from ..values.new_objects import NewObjectValue
from ..values.objects import ObjectValue
from ..values.symbolic import SymValue
from ..values.tensor import TensorValue


def is_held(value: Value) -> bool:
    """An object that existed before the call, read through its source, or one made while
    tracing whose attributes the entry can rebuild; either can be watched."""
    return _is_held(value, set())


def _is_held(value: Value, seen: set[int]) -> bool:
    if isinstance(value, (LazyInput, ObjectValue)):
        source = value.source
        return source is not None and not isinstance(source, HeldSource) and not issubclass(type(value.obj), LIFETIME_UNSEEN)
    if type(value) is not NewObjectValue:
        return False
    seen.add(id(value))  # an object whose attributes lead back to it (`o.me = o`)
    return all(_rebuildable(v, seen) for v in value.inner_values())


def _rebuildable(value: Value, seen: set[int]) -> bool:
    if isinstance(value, (TensorValue, SymValue, ConstantValue)) or id(value) in seen:
        return True
    return _is_held(value, seen)
