"""The base of every variable tracker: what capture knows about one Python value.

Each value on the symbolic stack or in a symbolic local is a `Value`. It knows its `source`
(how to read the same object from the frame's inputs: `L['x'].weight`), which is what guards
and the compiled entry name it by; values created while tracing have no source. Operations
the bytecode performs on a value (`get_attr`, `call`, `get_item`, ...) are methods here; the
default of each is to refuse with `Unsupported`, and subclasses implement what they support.
"""

from __future__ import annotations

import enum
import functools
import types
from typing import Any, NoReturn, Protocol

from ..errors import Unsupported


class TracingFrame(Protocol):
    """What a value may ask of the frame that traces it; `interpreter.frame.Frame` implements
    it. Values never import the interpreter, `calls` or `operators`: what they need of those
    layers comes through here, so imports point one way (interpreter -> calls, operators ->
    values)."""

    # The CaptureSession: `wrap`, `graph`, `side_effects`, `add_guard`, ...
    session: Any

    def call_builtin(self, fn: Any, args: list[Value], kwargs: dict[str, Value]) -> Value:
        """Call a callable capture does not inline (capture.calls)."""

    def construct(self, cls: Value, args: list[Value], kwargs: dict[str, Value]) -> Value:
        """Call a class: `cls(*args, **kwargs)` (capture.calls)."""

    def compare(self, symbol: str, a: Value, b: Value) -> Value:
        """`a <symbol> b` for a comparison operator (capture.operators)."""

    def make_tuple(self, items: list[Value]) -> Value:
        """A tuple of `items` (values.containers, which raises exceptions of its own, so the
        exceptions below it build their `args` through here)."""

    def bind_class_attribute(self, instance: Value, cls: type, descriptor: Any, name: str) -> Value | None:
        """`instance.name` when the class holds `descriptor` under that name
        (values.objects.bind_class_attribute): for containers, below the functions and methods
        it binds."""

    def raise_real(self, err: BaseException) -> NoReturn:
        """Raise `err`, which Python raised running an operation on the program's behalf
        (`int("x")`, a missing key), inside the traced program as its own exception."""

    def inline(
        self, code: types.CodeType, f_globals: dict, locals_: dict, cells: dict, *, function: Value, generator: bool
    ) -> TracingFrame:
        """A child frame that interprets `code`, called from this one. Its `run()` interprets
        it to the return (or, for a generator, to the next yield, leaving the value in
        `yielded`, and the None that `send` replaces on top of its `stack`); `throw(exc)`
        raises a `UserException` where it is suspended."""


class NotConstant(Exception):
    """Raised by `as_python_constant` on values that are not known Python constants."""


_BUILDING_CONSTANTS: set[int] = set()


def cycle_safe_constant(method):
    """Wraps a container's `as_python_constant`: a container that holds itself (`l.append(l)`)
    is not a constant (building it recursed without end); the code that asked then refuses or
    breaks the graph, where Python's own repr/== of the real object handle the cycle."""

    @functools.wraps(method)
    def as_python_constant(self):
        if id(self) in _BUILDING_CONSTANTS:
            raise NotConstant(f"{self.describe()} that holds itself")
        _BUILDING_CONSTANTS.add(id(self))
        try:
            return method(self)
        finally:
            _BUILDING_CONSTANTS.discard(id(self))

    return as_python_constant


class Value:
    source: Any = None

    def __init__(self, source=None):
        self.source = source

    # --- what it is ---------------------------------------------------------------------
    def python_type(self) -> type:
        raise Unsupported(f"cannot tell the Python type of {self.describe()}")

    def describe(self) -> str:
        """A few words for error messages: 'a Tensor', 'list', 'GPT2Attention module'."""
        return type(self).__name__

    def is_python_constant(self) -> bool:
        try:
            self.as_python_constant()
        except NotConstant:
            return False
        return True

    def as_python_constant(self) -> Any:
        raise NotConstant(self.describe())

    # --- what bytecode does to it ---------------------------------------------------------
    def get_attr(self, frame: TracingFrame, name: str) -> Value:
        raise Unsupported(f"attribute {name!r} of {self.describe()}")

    def set_attr(self, frame: TracingFrame, name: str, value: Value) -> None:
        raise Unsupported(f"setting attribute {name!r} of {self.describe()}")

    def del_attr(self, frame: TracingFrame, name: str) -> None:
        raise Unsupported(f"deleting attribute {name!r} of {self.describe()}")

    def call(self, frame: TracingFrame, args: list[Value], kwargs: dict[str, Value]) -> Value:
        raise Unsupported(f"calling {self.describe()}")

    def get_item(self, frame: TracingFrame, key: Value) -> Value:
        raise Unsupported(f"indexing {self.describe()}")

    def set_item(self, frame: TracingFrame, key: Value, value: Value) -> None:
        raise Unsupported(f"item assignment on {self.describe()}")

    def del_item(self, frame: TracingFrame, key: Value) -> None:
        raise Unsupported(f"item deletion on {self.describe()}")

    def unpack(self, frame: TracingFrame) -> list[Value]:
        """The items iterating over this value yields, when capture can know them all."""
        raise Unsupported(f"iterating over {self.describe()}")

    def truth(self, frame: TracingFrame) -> bool:
        """bool(value), when it is known at trace time."""
        raise Unsupported(f"the truth value of {self.describe()} is not known while tracing")

    def own_iterator(self, frame: TracingFrame) -> Value | None:
        """`iter(value)` as the value's own Python `__iter__` makes it, its items made one at a
        time by its `__next__` (objects the trace made of a user class); None when iterating
        goes by the items `unpack` gives."""
        return None

    def length(self, frame: TracingFrame) -> Value:
        raise Unsupported(f"len() of {self.describe()}")

    def has_attr(self, frame: TracingFrame, name: str) -> bool:
        raise Unsupported(f"hasattr on {self.describe()}")

    # --- as an argument of a graph operation -------------------------------------------------
    def as_fake(self) -> Any:
        """What an operation run on fake tensors receives for this value."""
        return self._graph_constant()

    def as_node_arg(self) -> Any:
        """What the FX node records for this value (nodes for tensors)."""
        value = self._graph_constant()
        if isinstance(value, enum.Enum) and isinstance(value, int):
            # FX prints a member as `Cls.name`, which a combination of flags does not survive
            # (`Bits.A|B`); torch operations take IntEnum and IntFlag members as the ints they are.
            return int(value)
        return value

    def _graph_constant(self) -> Any:
        try:
            return self.as_python_constant()
        except NotConstant:
            raise Unsupported(f"{self.describe()} cannot be passed to a tensor operation") from None

    # --- rebuilt by the compiled entry after the graph has run (capture.runtime.reconstruct) ---
    def reconstruct(self, writer) -> str:
        """A Python expression of the compiled entry that evaluates to this value: objects that
        existed before the call are read through their source, ones the trace made are built
        anew. `writer` (runtime.reconstruct.ExpressionWriter) spells the values this one
        contains (`writer.value`), sources, constants and temporaries."""
        raise Unsupported(
            f"returning or storing {self.describe()} from a compiled function",
            hint="return tensors, Python constants, containers of them, or existing objects",
        )

    def inner_values(self) -> list[Value]:
        """The values `reconstruct` spells this one from (which graph outputs it needs)."""
        return []

    def __repr__(self) -> str:
        where = f" from {self.source}" if self.source is not None else ""
        return f"<{self.describe()}{where}>"
