"""Callables capture does not interpret itself: bound methods, `BuiltinValue` (a registered
rule, a torch operation recorded in the graph, or a pure function evaluated on constants,
capture.calls), and methods and functions capture implements in Python."""

from __future__ import annotations

import types
from typing import Any

from .base import Value


class MethodValue(Value):
    """A bound method: `func` called with `obj` as its first argument."""

    def __init__(self, func: Value, obj: Value, source=None):
        super().__init__(source)
        self.func = func
        self.obj = obj

    def describe(self):
        return f"method {self.func.describe()} of {self.obj.describe()}"

    def python_type(self):
        return types.MethodType

    def call(self, frame, args, kwargs):
        return self.func.call(frame, [self.obj, *args], kwargs)

    def get_attr(self, frame, name):
        if name == "__self__":
            return self.obj
        if name == "__func__":
            return self.func
        return self.func.get_attr(frame, name)

    def reconstruct(self, writer):
        return f"{writer.constant(types.MethodType)}({writer.value(self.func)}, {writer.value(self.obj)})"

    def inner_values(self):
        return [self.func, self.obj]


class BuiltinValue(Value):
    """A callable capture does not inline: a registered rule, a torch operation recorded in
    the graph, or a pure function evaluated on constant arguments (capture.calls)."""

    def __init__(self, fn: Any, source=None):
        super().__init__(source)
        self.fn = fn

    def describe(self):
        name = getattr(self.fn, "__qualname__", None) or getattr(self.fn, "__name__", None) or repr(self.fn)
        module = getattr(self.fn, "__module__", None)
        return f"{module}.{name}" if module and module != "builtins" else name

    def python_type(self):
        return type(self.fn)

    def as_python_constant(self):
        return self.fn

    def call(self, frame, args, kwargs):
        return frame.call_builtin(self.fn, args, kwargs)

    def truth(self, frame):
        # `if self.activation:` on a function: a type with neither __bool__ nor __len__ makes
        # every instance true (the value is guarded by identity where it came from).
        cls = type(self.fn)
        if not (hasattr(cls, "__bool__") or hasattr(cls, "__len__")):
            return True
        return super().truth(frame)

    def get_attr(self, frame, name):
        return frame.session.wrap(getattr(self.fn, name), None)

    def has_attr(self, frame, name):
        return hasattr(self.fn, name)

    def reconstruct(self, writer):
        return writer.existing(self, self.as_python_constant())


class NativeMethodValue(Value):
    """A method capture implements itself: `impl(frame, obj, *args, **kwargs)`."""

    def __init__(self, impl, obj: Value, name: str):
        super().__init__(None)
        self.impl = impl
        self.obj = obj
        self.name = name

    def describe(self):
        return f"method {self.name}"

    def call(self, frame, args, kwargs):
        return self.impl(frame, self.obj, *args, **kwargs)


class NativeFunctionValue(Value):
    """A callable the traced code builds (`operator.itemgetter(1)`) that capture implements
    itself: `impl(frame, args, kwargs)`. `real` is the same callable built for real, when
    its arguments were constants (what the entry returns if the callable escapes)."""

    def __init__(self, impl, name: str, real: Any = None):
        super().__init__(None)
        self.impl = impl
        self.name = name
        self.real = real

    def describe(self):
        return self.name

    def python_type(self):
        return type(self.real) if self.real is not None else types.FunctionType

    def call(self, frame, args, kwargs):
        return self.impl(frame, args, kwargs)

    def reconstruct(self, writer):
        if self.real is None:
            return super().reconstruct(writer)
        return writer.constant(self.real)
