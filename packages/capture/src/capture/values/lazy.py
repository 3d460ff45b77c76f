"""Frame inputs wrapped on first use.

The arguments of a captured function start as `LazyInput`s: loading, storing and passing them
around the stack costs nothing, and only an instruction that looks at one (`frame.pop()`,
`frame.peek()`) wraps it, adding the guards its wrapping implies. An input the trace never
looks at is not guarded, and a graph break hands it on to the resume function by its source.
That keeps a loop whose body breaks from recompiling per iteration when the loop variable
only reaches the unsupported call (`print(i)`).
"""

from __future__ import annotations

from typing import Any

from .base import Value


class LazyInput(Value):
    def __init__(self, obj: Any, source):
        super().__init__(source)
        self.obj = obj

    def describe(self) -> str:
        return f"{type(self.obj).__name__} input {self.source}"

    def realize(self, session) -> Value:
        return session.wrap(self.obj, self.source)

    def reconstruct(self, writer):
        return writer.source(self.source)


def realized(session, value: Value) -> Value:
    return value.realize(session) if isinstance(value, LazyInput) else value
