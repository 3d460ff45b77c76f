"""Exceptions as values: raised, caught and matched by the traced program itself."""

from __future__ import annotations

from typing import NoReturn

from .base import Value
from .constant import ConstantValue


class ExceptionValue(Value):
    def __init__(self, exc_type: type[BaseException], args: list[Value], real: BaseException | None = None):
        super().__init__(None)
        self.exc_type = exc_type
        self.args = args
        self.real = real

    @classmethod
    def from_real(cls, exc: BaseException) -> ExceptionValue:
        return cls(type(exc), [ConstantValue(a) for a in exc.args], real=exc)

    def python_type(self):
        return self.exc_type

    def describe(self):
        return f"{self.exc_type.__name__} exception"

    def get_attr(self, frame, name):
        from .containers import TupleValue

        if name == "args":
            return TupleValue(list(self.args))
        if self.real is not None and hasattr(self.real, name):
            return frame.session.wrap(getattr(self.real, name), None)
        return super().get_attr(frame, name)

    def to_real(self) -> BaseException:
        """The exception as a Python object (to re-raise it for the user)."""
        if self.real is not None:
            return self.real
        args = []
        for arg in self.args:
            args.append(arg.as_python_constant() if arg.is_python_constant() else arg.describe())
        return self.exc_type(*args)


def raise_user_error(frame, exc_type: type[BaseException], message: object) -> NoReturn:
    """Raise `exc_type(message)` inside the traced program (for KeyError, the key itself)."""
    from ..interpreter.frame import UserException

    raise UserException(ExceptionValue(exc_type, [ConstantValue(message)]))
