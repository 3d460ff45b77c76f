"""Endless iterators (`itertools.count()`, `repeat(x)`, `cycle(...)`): their items are made one
at a time as the traced code asks for them (a loop that breaks, `zip` with a finite iterable,
`islice`), never all at once.

`columns(frame, iterables)` is how `zip`/`map` read their arguments: the finite ones in full,
the endless ones as far as the shortest finite one goes.
"""

from __future__ import annotations

from typing import Callable

from ..errors import Unsupported, UserException
from .base import Value
from .class_lookup import python_dunder
from .containers import IteratorValue


class EndlessIteratorValue(IteratorValue):
    """An iterator whose `i`-th item is `make(i)`."""

    endless = True  # zip/map read it only as far as their finite iterables go

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

    def reconstruct(self, writer):
        raise Unsupported(f"returning or storing {self.describe()} from a compiled function")


def columns(frame, iterables: list[Value]) -> list[list[Value]]:
    """The items of each iterable, the endless ones cut at the shortest finite one's length."""
    finite = {i: it.unpack(frame) for i, it in enumerate(iterables) if not getattr(it, "endless", False)}
    if not iterables:
        return []
    if not finite:
        raise Unsupported("zip or map over endless iterators only")
    length = min(len(items) for items in finite.values())
    return [finite[i] if i in finite else it.take(length) for i, it in enumerate(iterables)]


class CallIteratorValue(EndlessIteratorValue):
    """`iter(callable, sentinel)`: each item is one call of `callable`, made when asked for,
    until a call returns something equal to `sentinel` (or raises StopIteration); from then
    on the iterator is exhausted and calls nothing. Like an endless iterator it is not handed
    on across a graph break or returned (its callable's state is the position)."""

    endless = False

    def __init__(self, frame, function: Value, sentinel: Value):
        super().__init__(self._call, "iter(callable, sentinel)")
        self.frame = frame
        self.function = function
        self.sentinel = sentinel
        self.done = False

    def python_type(self):
        return type(iter(int, 0))

    def _call(self, index: int) -> Value | None:
        try:
            item = self.function.call(self.frame, [], {})
        except UserException as exc:
            if issubclass(exc.value.python_type(), StopIteration):
                return None
            raise
        if self.frame.compare("==", item, self.sentinel).truth(self.frame):
            return None
        return item

    def next(self) -> Value | None:
        if self.done:
            return None
        item = self._call(self.position)
        if item is None:
            self.done = True
        return item

    def unpack(self, frame):
        items = []
        while (item := self.next()) is not None:
            items.append(item)
        return items


class ObjectIteratorValue(IteratorValue):
    """An iterator object of a user class (`__next__` written in Python): each item is one call
    of its `__next__`, made when the traced code asks for it, so a loop that breaks leaves the
    object where eager leaves it. Across a graph break it is the object itself."""

    def __init__(self, frame, obj: Value, method):
        super().__init__([])
        self.frame = frame
        self.obj = obj
        self.method = method

    def describe(self):
        return f"iterator {self.obj.describe()}"

    def python_type(self):
        return self.obj.python_type()

    def next(self) -> Value | None:
        try:
            return self.frame.session.wrap(self.method, None).call(self.frame, [self.obj], {})
        except UserException as exc:
            if issubclass(exc.value.python_type(), StopIteration):
                return None
            raise

    def unpack(self, frame):
        items = []
        while (item := self.next()) is not None:
            items.append(item)
        return items

    def reconstruct(self, writer):
        return writer.value(self.obj)  # the iterator is that object, its position in its attributes

    def inner_values(self):
        return [self.obj]


def python_iterator(frame, value: Value, cls: type) -> IteratorValue | None:
    """`iter(value)` for an object whose class writes `__iter__` in Python: a generator it
    returns, an iterator object with a Python `__next__`, or an iterator over the iterable it
    returns; None when `cls` has no Python `__iter__`."""
    method = python_dunder(cls, "__iter__")
    if method is None:
        return None
    result = frame.session.wrap(method, None).call(frame, [value], {})
    if isinstance(result, IteratorValue):
        return result
    advance = python_dunder(result.python_type(), "__next__")
    if advance is not None:
        return ObjectIteratorValue(frame, result, advance)
    return IteratorValue.over(frame, result)
