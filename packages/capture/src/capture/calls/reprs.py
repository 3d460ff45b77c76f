"""`repr(obj)` of values that are not constants: an object whose class writes `__repr__` in
Python (the method is traced, and must return a str, as CPython checks), an exception whose
text CPython's own `BaseException.__repr__` decides (`ValueError('msg')`), and constants or
tuples of sizes (specialized, guarded). Anything else is refused, never guessed."""

from __future__ import annotations

from ..errors import Unsupported
from ..values.base import NotConstant
from ..values.constant import ConstantValue
from ..values.exceptions import ExceptionValue, raise_user_error
from ..values.factory import evaluate_constant_operation
from ..values.class_lookup import dunder_value, python_dunder
from ..values.symbolic import specialized_constant
from .registry import rule


@rule(repr)
def _repr(frame, args, kwargs):
    (value,) = args
    try:
        return evaluate_constant_operation(frame, repr, (specialized_constant(value),))
    except NotConstant:
        pass
    try:
        cls = value.python_type()
    except Unsupported:
        cls = None
    # torch's and numpy's own reprs (a tensor's) print data: never traced.
    user_class = cls is not None and not (getattr(cls, "__module__", None) or "").startswith(("torch", "numpy"))
    method = python_dunder(cls, "__repr__") if user_class else None
    if method is not None:
        text = dunder_value(frame, value, cls, "__repr__", method).call(frame, [value], {})
        if not issubclass(text.python_type(), str):
            raise_user_error(frame, TypeError, f"__repr__ returned non-string (type {text.python_type().__name__})")
        return text
    if isinstance(value, ExceptionValue):
        real = _exception_built_in_c(value)
        if real is not None:
            return ConstantValue(repr(real))
    raise Unsupported(f"repr() of {value.describe()}", hint="format the parts that are Python constants instead")


def _exception_built_in_c(exc: ExceptionValue) -> BaseException | None:
    """The exception as a real object, when building it runs no Python code (its class's
    __new__/__init__ are CPython's) and its arguments are constants: its repr is then the one
    eager shows. None otherwise."""
    if exc.real is not None:
        return exc.real
    if any(python_dunder(exc.exc_type, name) is not None for name in ("__new__", "__init__")):
        return None
    if not all(arg.is_python_constant() for arg in exc.args):
        return None
    return exc.exc_type(*(arg.as_python_constant() for arg in exc.args))
