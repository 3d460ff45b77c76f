"""The exceptions capture raises: one hierarchy, every message naming the user's code.

`Unsupported` is what a graph break is made of: it carries the reason, where in the user's
source it happened, and a hint of what to change. With `fullgraph=True` it reaches the user as
is; otherwise the compiled function breaks its graph there (capture.runtime.breaks).
"""

from __future__ import annotations

import linecache
from dataclasses import dataclass


class CaptureError(Exception):
    """Base class of every error capture raises."""


@dataclass(frozen=True)
class UserLocation:
    """A line of the user's code: where an instruction being traced came from."""

    filename: str
    lineno: int
    function: str

    @property
    def source_line(self) -> str:
        return linecache.getline(self.filename, self.lineno).strip()

    def __str__(self) -> str:
        line = self.source_line
        where = f'File "{self.filename}", line {self.lineno}, in {self.function}'
        return f"{where}\n    {line}" if line else where


# What a user can do about any construct capture does not support.
DEFAULT_HINT = (
    "move this code out of the compiled function or into a function marked with "
    "compiler.disable; without fullgraph=True the graph breaks here and the code runs natively"
)


class Unsupported(CaptureError):
    """Code capture cannot turn into a graph.

    `reason` says what was met, `location` is the innermost user line being traced (None when
    the problem is not tied to a line), `stack` the chain of inlined calls that led there
    (outermost first), and `hint` what the user can do about it.
    """

    def __init__(self, reason: str, *, hint: str | None = None):
        self.reason = reason
        self.hint = hint or DEFAULT_HINT
        self.location: UserLocation | None = None
        self.stack: list[UserLocation] = []
        # The innermost frame at the refused instruction: its stack and live locals.
        self.snapshot = None
        # Where the outermost frame can break (interpreter.frame.BreakPoint), set as the
        # error leaves it.
        self.break_point = None
        super().__init__(reason)

    def add_frame(self, location: UserLocation, snapshot=None) -> None:
        """Record one more (outer) frame as the error travels out of inlined calls."""
        if self.location is None:
            self.location = location
            self.snapshot = snapshot
        self.stack.insert(0, location)

    @property
    def filename(self) -> str | None:
        return self.location.filename if self.location else None

    @property
    def lineno(self) -> int | None:
        return self.location.lineno if self.location else None

    @property
    def source_line(self) -> str | None:
        return self.location.source_line if self.location else None

    def __str__(self) -> str:
        parts = [self.reason]
        if self.stack:
            parts.append("while tracing (most recent call last):")
            parts.extend("  " + str(loc).replace("\n", "\n  ") for loc in self.stack)
        if self.hint:
            parts.append(f"hint: {self.hint}")
        return "\n".join(parts)


class FrameRunsNatively(Unsupported):
    """Code that needs the real frame of the function capture compiles: `globals()`,
    `locals()`, `vars()`, `dir()` (no arguments) answer from the frame that calls them, and
    code run at a graph break runs in the compiled entry's frame, not the user's. Raised in
    the function itself, it runs natively as a whole; in a function it calls, the graph
    breaks at that call as usual (the callee then runs in its own frame)."""


class UserException(Exception):
    """An exception the traced program raises, as a symbolic value (a `values.base.Value`),
    while it is traced. Not a `CaptureError`: it is the user's, routed through the traced
    code's handlers (interpreter.frame) and, when none catches it, re-raised by running the
    function natively."""

    def __init__(self, value):
        self.value = value
        # The user's lines the exception travelled through, innermost first.
        self.stack: list[UserLocation] = []
        super().__init__(value)

    def __str__(self) -> str:
        where = "\n".join(str(loc) for loc in reversed(self.stack))
        args = ", ".join(a.describe() for a in getattr(self.value, "args", []))
        return f"{self.value.describe()}: {args}\n{where}"


class MarkedDimensionError(CaptureError):
    """An input's size contradicts the range `mark_dynamic(..., min=, max=)` declared for it."""


class CaptureInternalError(CaptureError):
    """A bug in capture itself (an invariant broke), not a limitation of what it supports;
    the message names the instruction and the user's line being traced."""
