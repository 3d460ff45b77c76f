"""Constant folding: Python operations on constant values evaluated while tracing."""

from __future__ import annotations

import contextlib
from typing import Callable, Iterator

from .base import NotConstant, Value


@contextlib.contextmanager
def program_errors(frame) -> Iterator[None]:
    """Python run now on the program's own constants (sorting them, assigning a slice of a
    list): an exception it raises is the traced program's exception, raised as eager raises
    it, not an internal error of capture."""
    try:
        yield
    except (TypeError, ValueError, KeyError, IndexError, ArithmeticError, AttributeError) as err:
        frame.raise_real(err)


def evaluate_constant_operation(frame, fn: Callable, args: tuple) -> Value:
    """Run `fn(*args)` on Python constants now; an exception it raises is the traced
    program's exception."""
    try:
        result = fn(*args)
    except Exception as err:  # the program's own error, e.g. int("x") or a missing key
        frame.raise_real(err)
    return frame.session.wrap(result, None)


def constant_args(args: list[Value], kwargs: dict[str, Value]) -> tuple[list, dict] | None:
    """The Python constants behind `args`/`kwargs`, or None if any is not a constant."""
    try:
        return [a.as_python_constant() for a in args], {k: v.as_python_constant() for k, v in kwargs.items()}
    except NotConstant:
        return None
