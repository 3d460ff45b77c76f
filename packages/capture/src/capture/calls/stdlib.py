"""Rules for standard-library helpers that model code calls on Python objects: introspection
(`inspect.signature`, `dataclasses.fields`) answered from the real objects behind the values."""

from __future__ import annotations

import dataclasses
import inspect
import sys
import types

from ..errors import Unsupported
from ..guard_kinds import NoExceptionHandled
from ..values.base import Value
from ..values.constant import ConstantValue
from ..values.containers import TupleValue
from ..values.callables import MethodValue
from ..values.functions import FunctionValue
from .registry import rule


def _guard_signature_parts(frame, function: Value) -> None:
    """What inspect.signature reads of a function from the frame, read through its source so
    that it is guarded: defaults, keyword defaults, annotations, and a `__signature__` or
    `__wrapped__` (whose own signature it gives then), all reassignable between calls."""
    if not isinstance(function, FunctionValue) or function.source is None:
        return
    function.defaults(frame)
    function.kwdefaults(frame)
    function.get_attr(frame, "__annotations__")
    function.has_attr(frame, "__signature__")
    if function.has_attr(frame, "__wrapped__"):
        _guard_signature_parts(frame, function.get_attr(frame, "__wrapped__"))


@rule(inspect.signature)
def _signature(frame, args, kwargs):
    (target,) = args
    _guard_signature_parts(frame, target.func if isinstance(target, MethodValue) else target)
    if isinstance(target, MethodValue) and isinstance(target.func, FunctionValue):
        signature = inspect.signature(target.func.fn, **{k: v.as_python_constant() for k, v in kwargs.items()})
        # A bound method's signature has no `self`.
        signature = signature.replace(parameters=list(signature.parameters.values())[1:])
    elif target.is_python_constant():
        signature = inspect.signature(target.as_python_constant(), **{k: v.as_python_constant() for k, v in kwargs.items()})
    else:
        raise Unsupported(f"inspect.signature of {target.describe()}")
    return frame.session.wrap(signature, None)


@rule(dataclasses.fields, accepts="(class_or_instance, /)")
def _fields(frame, args, kwargs):
    (target,) = args
    cls = target.python_type() if not target.is_python_constant() else target.as_python_constant()
    if not isinstance(cls, type):
        cls = type(cls)
    return frame.session.wrap(dataclasses.fields(cls), None)


@rule(dataclasses.is_dataclass, accepts="(obj, /)")
def _is_dataclass(frame, args, kwargs):
    (target,) = args
    obj = target.as_python_constant() if target.is_python_constant() else target.python_type()
    return frame.session.wrap(dataclasses.is_dataclass(obj), None)


class _TracebackValue(Value):
    """The traceback of an exception the traced code handles: capture has no frames to build
    it from, so any use of it (reading it, returning it, `is None`) is refused."""

    def __init__(self, exc: Value):
        super().__init__(None)
        self.exc = exc

    def describe(self):
        return f"the traceback of {self.exc.describe()}"

    def python_type(self):
        return types.TracebackType


def _handled(frame, what: str) -> Value | None:
    """The exception being handled where the traced code asks, or None when none is: outside
    the traced code's except blocks that is the callers' state, read now and guarded."""
    exc = frame.current_exception()
    if exc is None:
        if sys.exception() is not None:
            raise Unsupported(f"{what} while a caller of the compiled function handles an exception")
        frame.session.add_guard(NoExceptionHandled())
    return exc


@rule(sys.exc_info)
def _exc_info(frame, args, kwargs):
    exc = _handled(frame, "sys.exc_info()")
    if exc is None:
        return TupleValue([ConstantValue(None)] * 3)
    return TupleValue([frame.session.wrap(exc.python_type(), None), exc, _TracebackValue(exc)])


@rule(sys.exception)
def _exception(frame, args, kwargs):
    exc = _handled(frame, "sys.exception()")
    return ConstantValue(None) if exc is None else exc
