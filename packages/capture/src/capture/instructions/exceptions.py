"""Raising and handling exceptions inside the traced program (3.11+ zero-cost exception
handling: handlers are found in the exception table by `Frame._unwind`)."""

from __future__ import annotations

from ..errors import Unsupported, UserException
from ..interpreter.registry import handles
from ..values.constant import ConstantValue
from ..values.exceptions import ExceptionValue
from ..values.classes import ClassValue


def _as_exception(frame, value):
    if isinstance(value, ClassValue) and issubclass(value.cls, BaseException):
        return value.call(frame, [], {})
    if isinstance(value, ExceptionValue):
        return value
    raise Unsupported(f"raising {value.describe()}")


@handles("RAISE_VARARGS")
def _raise_varargs(frame, inst):
    if inst.arg == 0:
        if frame.handled_exception is None:
            raise Unsupported("bare `raise` with no exception being handled")
        raise UserException(frame.handled_exception)
    cause = frame.pop() if inst.arg == 2 else None
    exc = _as_exception(frame, frame.pop())
    if cause is not None:  # `raise X from Y`: Y is X.__cause__ (None too), and X's context is not shown
        if not (cause.is_python_constant() and cause.as_python_constant() is None):
            cause = _as_exception(frame, cause)
        exc.cause, exc.suppress_context = cause, True
    handled = frame.current_exception()
    if handled is not None and handled is not exc:
        _cut_context_cycle(handled, exc)
        exc.context = handled  # as CPython sets __context__ to the exception being handled
    raise UserException(exc)


def _cut_context_cycle(handled, exc) -> None:
    """CPython (_PyErr_SetObject) walks the handled exception's __context__ chain and, where
    it meets the exception being raised, ends the chain there: raising `a` while handling
    c -> b -> a gives a -> c -> b, not a cycle. A chain that already loops is left alone."""
    seen = set()
    link = handled
    while isinstance(link, ExceptionValue) and link.real is None and id(link) not in seen:
        seen.add(id(link))
        if link.context is exc:
            link.context = ConstantValue(None)
            return
        link = link.context


@handles("RERAISE")
def _reraise(frame, inst):
    # A non-zero argument means the raising offset sits below the exception (to restore
    # f_lasti); the unwinding that follows truncates the stack anyway.
    raise UserException(frame.pop())


@handles("PUSH_EXC_INFO")
def _push_exc_info(frame, inst):
    exc = frame.pop()
    frame.push(frame.handled_exception or ConstantValue(None))
    frame.handled_exception = exc
    frame.push(exc)


@handles("POP_EXCEPT")
def _pop_except(frame, inst):
    previous = frame.pop()
    frame.handled_exception = None if isinstance(previous, ConstantValue) else previous


@handles("CHECK_EXC_MATCH")
def _check_exc_match(frame, inst):
    expected = frame.pop().as_python_constant()
    exc = frame.peek()
    frame.push(ConstantValue(issubclass(exc.python_type(), expected)))
