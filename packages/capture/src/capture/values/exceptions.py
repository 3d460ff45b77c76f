"""Exceptions as values: raised, caught and matched by the traced program itself."""

from __future__ import annotations

from typing import NoReturn

from fake_tensor.errors import raised_by_signal_handler

from ..errors import Unsupported, UserException
from .base import Value
from .callables import NativeMethodValue
from .class_lookup import python_dunder
from .constant import ConstantValue


class ExceptionValue(Value):
    def __init__(self, exc_type: type[BaseException], args: list[Value], real: BaseException | None = None):
        super().__init__(None)
        self.exc_type = exc_type
        self.args = args
        self.real = real
        # Set when the traced code raises it (`raise`, capture.instructions.exceptions): the
        # `from` cause, and the exception being handled then (None: not known while tracing,
        # the caller of the compiled function may be handling one).
        self.cause: Value | None = None
        self.suppress_context = False
        self.context: Value | None = None

    @classmethod
    def from_real(cls, exc: BaseException) -> ExceptionValue:
        if raised_by_signal_handler(exc):
            # Raised in code run for real by a signal's handler (an alarm's timeout): the
            # caller's, not the traced program's, which would then run eagerly without it.
            raise exc
        return cls(type(exc), [ConstantValue(a) for a in exc.args], real=exc)

    def python_type(self):
        return self.exc_type

    def describe(self):
        return f"{self.exc_type.__name__} exception"

    def identity(self):
        return self  # raised, caught and re-raised as this one value: `exc is value` compares these

    def get_attr(self, frame, name):
        if name == "args":
            return frame.make_tuple(list(self.args))
        if name == "value" and issubclass(self.exc_type, StopIteration) and self.real is None:
            return self.args[0] if self.args else ConstantValue(None)  # what the generator returned
        if self.real is None and name == "__cause__":
            return self.cause or ConstantValue(None)
        if self.real is None and name == "__suppress_context__":
            return ConstantValue(self.suppress_context)
        if self.real is None and name == "__context__":
            if self.context is None:
                raise Unsupported(f"__context__ of {self.describe()} raised outside the traced code's except blocks (the caller's handled exception is not known)")
            return self.context
        if name == "with_traceback":  # sets __traceback__ (which capture does not model) and returns the exception
            def with_traceback(frame, exc, traceback):
                if not (traceback.is_python_constant() and traceback.as_python_constant() is None):
                    raise Unsupported(f"with_traceback() of {self.describe()} with a traceback")
                return exc

            return NativeMethodValue(with_traceback, self, "with_traceback")
        if self.real is not None and hasattr(self.real, name):
            return frame.session.wrap(getattr(self.real, name), None)
        return super().get_attr(frame, name)

    def set_attr(self, frame, name, value):
        # contextlib's __exit__ writes back the traceback WITH_EXCEPT_START passed it, which
        # is None in a trace (capture does not model tracebacks; the user's exception gets its
        # own when it is raised for real).
        if name == "__traceback__" and value.is_python_constant() and value.as_python_constant() is None:
            return
        super().set_attr(frame, name, value)

    def text(self) -> str | None:
        """`str(exc)` when no user code decides it (the class's __new__, __init__ and __str__
        are CPython's, the args constants), else None."""
        if self.real is not None:
            return str(self.real)
        if any(python_dunder(self.exc_type, name) is not None for name in ("__new__", "__init__", "__str__")):
            return None
        if not all(arg.is_python_constant() for arg in self.args):
            return None
        written_in_c = next(k for k in self.exc_type.__mro__ if not k.__flags__ & (1 << 9))  # not a heap type
        return str(written_in_c(*(arg.as_python_constant() for arg in self.args)))

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

    raise UserException(ExceptionValue(exc_type, [ConstantValue(message)]))
