"""The C half of Python's copy protocol, for `copy.copy` / `copy.deepcopy` (whose Python code
capture inlines) of plain Python objects.

copy.py asks an object how to rebuild it through `object.__reduce_ex__(4)`, which for an
instance of a class written in Python answers `(copyreg.__newobj__, (cls,), obj.__dict__ or
None, None, None)`; `_reconstruct` then calls `cls.__new__(cls)` and fills the new object's
`__dict__`. Those three C steps are modelled here: the reduction (the state is the object's
own `__dict__`, read and guarded key by key for an object passed in), `object.__new__` (an
object made by the trace), and the new object's `__dict__` (capture.values.new_objects). The
memo's `id()` keys are capture.values.object_ids. What the reduction of CPython would compute
from C state (slots, a builtin base class, `__getnewargs__`) is refused with a reason, and so
is copying a tensor.
"""

from __future__ import annotations

import copyreg

import torch

from ..errors import Unsupported
from ..values.base import Value
from ..values.class_lookup import lookup_static, python_dunder
from ..values.constant import ConstantValue
from ..values.containers import TupleValue
from ..values.exceptions import raise_user_error
from ..values.factory import evaluate_constant_operation
from ..values.new_objects import NewObjectValue
from ..values.objects import ClassValue, ObjectValue
from .registry import rule

_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by a class statement


@rule(object.__reduce_ex__, accepts="(self, protocol, /)")
def _reduce_ex(frame, args, kwargs):
    """`object.__reduce_ex__(obj, protocol)` as CPython's `reduce_newobj` answers it for
    protocol 2 and above (copy.py asks for 4)."""
    obj, protocol = args
    if obj.is_python_constant():
        # Immutable constants (a torch.dtype answers its name: copied as itself).
        return evaluate_constant_operation(frame, object.__reduce_ex__, (obj.as_python_constant(), protocol.as_python_constant()))
    if not protocol.is_python_constant() or protocol.as_python_constant() < 2:
        raise Unsupported(f"object.__reduce_ex__ of {obj.describe()} with protocol {protocol.describe()} (only 2 and above are modelled)")
    cls = obj.python_type()
    reduce, _ = lookup_static(cls, "__reduce__")
    if reduce is not object.__reduce__:
        # object.__reduce_ex__ defers to a class's own __reduce__.
        if python_dunder(cls, "__reduce__") is None:
            raise Unsupported(f"copying {obj.describe()}, whose __reduce__ is not Python code")
        return frame.session.wrap(reduce, None).call(frame, [obj], {})
    _check_plain_instance(obj, cls)
    return TupleValue([
        frame.session.wrap(copyreg.__newobj__, None),
        TupleValue([frame.session.wrap(cls, None)]),
        _state(frame, obj, cls),
        ConstantValue(None),
        ConstantValue(None),
    ])


def _check_plain_instance(obj: Value, cls: type) -> None:
    """What `reduce_newobj` would compute from more than the instance's `__dict__` is refused."""
    if not isinstance(obj, (ObjectValue, NewObjectValue)):
        raise Unsupported(f"copying {obj.describe()} (capture models the copy protocol of plain Python objects only)")
    if not all(klass is object or klass.__flags__ & _HEAP_TYPE for klass in cls.__mro__):
        builtin = next(k for k in cls.__mro__ if k is not object and not k.__flags__ & _HEAP_TYPE)
        raise Unsupported(f"copying {obj.describe()}, an instance of a subclass of the builtin {builtin.__qualname__}")
    for name in ("__getnewargs_ex__", "__getnewargs__"):
        if hasattr(cls, name):
            raise Unsupported(f"copying {obj.describe()}, whose class defines {name}")
    if slots := _slot_names(cls):
        raise Unsupported(f"copying {obj.describe()}, whose class has __slots__ {slots}")
    if lookup_static(cls, "__new__")[0] is not object.__new__:
        raise Unsupported(f"copying {obj.describe()}, whose class has its own __new__")


def _slot_names(cls: type) -> list[str]:
    names = []
    for klass in cls.__mro__:
        slots = klass.__dict__.get("__slots__", ())
        names += [s for s in ([slots] if isinstance(slots, str) else slots) if s not in ("__dict__", "__weakref__")]
    return names


def _state(frame, obj: Value, cls: type) -> Value:
    """`obj.__getstate__()`: a class's own, else object's (the instance `__dict__` itself, or
    None when it is empty)."""
    getstate = python_dunder(cls, "__getstate__")
    if getstate is not None:
        return frame.session.wrap(getstate, None).call(frame, [obj], {})
    if lookup_static(cls, "__getstate__")[0] is not object.__getstate__:
        raise Unsupported(f"copying {obj.describe()}, whose __getstate__ is not Python code")
    instance_dict = obj.get_attr(frame, "__dict__") if isinstance(obj, NewObjectValue) else obj._instance_dict(frame)
    return instance_dict if instance_dict.truth(frame) else ConstantValue(None)


@rule(object.__new__)
def _object_new(frame, args, kwargs):
    """`object.__new__(cls)` (`copyreg.__newobj__`'s `cls.__new__(cls)`): an empty instance
    made by the trace, no `__init__` run."""
    cls_value, *rest = args
    if not isinstance(cls_value, ClassValue):
        raise Unsupported(f"object.__new__({cls_value.describe()})")
    cls = cls_value.cls
    if not isinstance(cls, type) or (cls is not object and not cls.__flags__ & _HEAP_TYPE):
        raise Unsupported(f"object.__new__({cls_value.describe()})")
    if lookup_static(cls, "__new__")[0] is not object.__new__ or _slot_names(cls):
        raise Unsupported(f"object.__new__ of {cls.__qualname__}, which has its own __new__ or __slots__")
    if getattr(cls, "__abstractmethods__", None):
        raise_user_error(frame, TypeError, f"Can't instantiate abstract class {cls.__name__}")
    if (rest or kwargs) and lookup_static(cls, "__init__")[0] is object.__init__:
        raise_user_error(frame, TypeError, f"{cls.__name__}() takes no arguments")
    return NewObjectValue(cls)


@rule(torch.Tensor.__deepcopy__, torch.nn.Parameter.__deepcopy__, torch.Tensor.__reduce_ex__)
def _copy_tensor(frame, args, kwargs):
    raise Unsupported(
        "copy.copy / copy.deepcopy of a tensor (capture does not copy tensors through the copy protocol)",
        hint="clone() the tensor instead; without fullgraph=True the copy runs between two graphs",
    )
