"""The C half of Python's copy protocol, for `copy.copy` / `copy.deepcopy` (whose Python code
capture inlines) of plain Python objects.

copy.py asks an object how to rebuild it through `object.__reduce_ex__(4)`, which for an
instance of a class written in Python answers `(copyreg.__newobj__, (cls,), obj.__dict__ or
None, None, None)`; `_reconstruct` then calls `cls.__new__(cls)` and fills the new object's
`__dict__`. Those three C steps are modelled here: the reduction (the state is the object's
own `__dict__`, read and guarded key by key for an object passed in), `object.__new__` (an
object made by the trace), and the new object's `__dict__` (capture.values.new_objects). The
memo's `id()` keys are capture.values.object_ids. What the reduction of CPython would compute
from C state (slots, a builtin base class, `__getnewargs__`) is refused with a reason. A plain
tensor's `__deepcopy__` is a `clone()` in the graph; other tensor copies are refused.
"""

from __future__ import annotations

import copyreg
from typing import NoReturn

import torch
from guards.sources import AttrSource
from torch._prims_common import is_non_overlapping_and_dense_or_false

from ..errors import Unsupported
from ..guard_kinds import StorageNotShared, storage_users
from ..sources import HeldSource
from ..values.base import Value
from ..values.class_lookup import MISSING, abstract_instantiation_message, lookup_static, python_dunder
from ..values.constant import ConstantValue
from ..values.containers import TupleValue
from ..values.exceptions import raise_user_error
from ..values.factory import evaluate_constant_operation
from ..values.new_objects import NewObjectValue
from ..values.classes import ClassValue
from ..values.objects import ObjectValue
from ..values.tensor import TensorValue
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
        if lookup_static(cls, name)[0] is not MISSING:
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
    abstract = sorted(getattr(cls, "__abstractmethods__", ()))
    if abstract:
        raise_user_error(frame, TypeError, abstract_instantiation_message(cls, abstract))
    if (rest or kwargs) and lookup_static(cls, "__init__")[0] is object.__init__:
        raise_user_error(frame, TypeError, f"{cls.__name__}() takes no arguments")
    return NewObjectValue(cls)


_NON_LEAF_DEEPCOPY = (
    "Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at the moment.  "
    "If you were attempting to deepcopy a module, this may be because of a torch.nn.utils.weight_norm usage, "
    "see https://github.com/pytorch/pytorch/pull/103001"
)


@rule(torch.Tensor.__deepcopy__, accepts="(self, memo, /)")
def _deepcopy_tensor(frame, args, kwargs):
    """`Tensor.__deepcopy__(memo)` of a plain tensor that needs no grad, has no `.grad` and no
    attributes of its own, and shares its storage with no other tensor: a `clone()` in the
    graph, the same values in a new storage with the same strides. (copy.deepcopy records the
    copy in the memo itself.)

    Anything more is refused: a copy of a leaf that requires grad is a new leaf, which a graph
    cannot make; tensors sharing a storage (views) are copied into one shared copy of it,
    through the memo's storage entries, which a clone would miss (each member of such a
    family is refused, so none was cloned when one breaks the graph); `.grad` and attributes
    are copied as well. Without this, `copy.deepcopy` of a dict of tensors broke its graph in
    copy.py, where the frames compiled on their own received the memo, keyed by the `id()`s
    of that call's objects, and captured again on every call."""
    tensor = args[0]
    if not isinstance(tensor, TensorValue) or tensor.python_type() is not torch.Tensor:
        _refuse_tensor_copy(f"copy.deepcopy of {tensor.describe()}")
    fake = tensor.fake
    session = frame.session
    if tensor.node.op != "placeholder" and fake.requires_grad:
        raise_user_error(frame, RuntimeError, _NON_LEAF_DEEPCOPY)
    if fake._is_view() or any(_is_view_of(node, fake) for node in session.graph.fx.nodes):
        _refuse_tensor_copy("copy.deepcopy of a tensor that shares its storage with a view")
    if tensor.node.op == "placeholder":
        if fake.requires_grad:
            _refuse_tensor_copy("copy.deepcopy of a tensor that requires grad (the copy is a new leaf)")
        source = tensor.source
        if source is None or isinstance(source, HeldSource):
            _refuse_tensor_copy("copy.deepcopy of a tensor the compiled function holds as a constant")
        if storage_users(tensor.real) != 1:
            _refuse_tensor_copy("copy.deepcopy of a tensor that shares its storage with another tensor")
        session.add_guard(StorageNotShared(source))
        # Its own attributes stay none (guarded through its `__dict__`).
        if session.wrap(tensor.real.__dict__, AttrSource(source, "__dict__")).truth(frame):
            _refuse_tensor_copy("copy.deepcopy of a tensor with attributes of its own")
    grad = tensor.get_attr(frame, "grad")
    if not (grad.is_python_constant() and grad.as_python_constant() is None):
        _refuse_tensor_copy("copy.deepcopy of a tensor that has a .grad")
    if not is_non_overlapping_and_dense_or_false(fake):
        _refuse_tensor_copy("copy.deepcopy of a tensor whose strides leave gaps or overlap")
    return session.graph.call_method(frame, "clone", [tensor], {})


def _is_view_of(node, fake) -> bool:
    value = node.meta.get("example_value")
    return isinstance(value, torch.Tensor) and value._base is fake


@rule(torch.nn.Parameter.__deepcopy__, torch.Tensor.__reduce_ex__)
def _copy_tensor(frame, args, kwargs):
    _refuse_tensor_copy("copy.copy / copy.deepcopy of a tensor")


def _refuse_tensor_copy(what: str) -> NoReturn:
    raise Unsupported(
        f"{what} (capture copies only plain tensors through the copy protocol)",
        hint="clone() the tensor instead; without fullgraph=True the copy runs between two graphs",
    )
