"""Endless iterators (`itertools.count()`, `repeat(x)`, `cycle(...)`): their items are made one
at a time as the traced code asks for them (a loop that breaks, `zip` with a finite iterable,
`islice`), never all at once.

`columns(frame, iterables)` is how `zip`/`map` read their arguments: the finite ones in full,
the endless ones as far as the shortest finite one goes.
"""

from __future__ import annotations

from typing import Callable

from ..errors import Unsupported
from .base import Value
from .containers import IteratorValue


class EndlessIteratorValue(IteratorValue):
    """An iterator whose `i`-th item is `make(i)`."""

    def __init__(self, make: Callable[[int], Value], name: str):
        super().__init__([])
        self.make = make
        self.name = name

    def describe(self):
        return f"endless iterator {self.name}"

    def next(self) -> Value:
        while self.position >= len(self.items):
            self.items.append(self.make(len(self.items)))
        return super().next()

    def take(self, count: int) -> list[Value]:
        return [self.next() for _ in range(count)]

    def unpack(self, frame):
        raise Unsupported(f"reading every item of {self.describe()}, which never ends")


def columns(frame, iterables: list[Value]) -> list[list[Value]]:
    """The items of each iterable, the endless ones cut at the shortest finite one's length."""
    finite = {i: it.unpack(frame) for i, it in enumerate(iterables) if not isinstance(it, EndlessIteratorValue)}
    if not iterables:
        return []
    if not finite:
        raise Unsupported("zip or map over endless iterators only")
    length = min(len(items) for items in finite.values())
    return [finite[i] if i in finite else it.take(length) for i, it in enumerate(iterables)]
