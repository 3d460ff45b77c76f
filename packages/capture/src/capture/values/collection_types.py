"""`collections.deque` and `collections.defaultdict` as symbolic containers.

A deque is a list with a `maxlen` (appending past it drops items from the other end); a
defaultdict is a dict whose missing keys call its `default_factory` and store the result.
Both are mutated like lists and dicts (side effects replayed onto an object passed in), and
rebuilt with their class when they escape. (`Counter` and `OrderedDict` are dicts of their
class; Counter's methods are Python code capture inlines.)
"""

from __future__ import annotations

import collections

from .base import Value, cycle_safe_constant
from .constant import ConstantValue
from .containers import DictValue, ListValue, key_of
from .exceptions import raise_user_error
from .symbolic import sequence_index


class DequeValue(ListValue):
    python_cls = collections.deque

    def __init__(self, items, maxlen: int | None = None, source=None):
        super().__init__(items, source)
        self.maxlen = maxlen
        self._trim(from_left=True)

    def describe(self):
        return "deque"

    def _trim(self, *, from_left: bool) -> None:
        if self.maxlen is None:
            return
        while len(self.items) > self.maxlen:
            self.items.pop(0 if from_left else -1)

    def append(self, frame, item: Value, *, left: bool = False) -> None:
        if left:
            self.items.insert(0, item)
        else:
            self.items.append(item)
        self._trim(from_left=not left)
        self.mutated(frame)

    def repeat(self, frame, times: int) -> None:
        """`d *= n`: the repetition's last `maxlen` items, as appending them one by one keeps."""
        self.items[:] = self.items * times
        self._trim(from_left=True)
        self.mutated(frame)

    def _index(self, frame, key) -> int:
        """A deque is indexed by ints only: slicing it is CPython's TypeError."""
        index = sequence_index(frame, key)
        if not isinstance(index, int):
            raise_user_error(frame, TypeError, f"sequence index must be integer, not '{type(index).__name__}'")
        if not -len(self.items) <= index < len(self.items):
            raise_user_error(frame, IndexError, "deque index out of range")
        return index

    def get_item(self, frame, key):
        return self.items[self._index(frame, key)]

    def set_item(self, frame, key, value):
        self.items[self._index(frame, key)] = value
        self.mutated(frame)

    def del_item(self, frame, key):
        del self.items[self._index(frame, key)]
        self.mutated(frame)

    def get_attr(self, frame, name):
        if name == "maxlen":
            return ConstantValue(self.maxlen)
        return super().get_attr(frame, name)

    def with_items(self, items):
        # `d + e`, `d * n`, copies: a deque of d's maxlen, trimmed from the left as CPython's
        # concatenation and repetition (a copy extended) trim it.
        return DequeValue(items, self.maxlen)

    def reconstruct(self, writer):
        if self.source is not None:
            return writer.source(self.source)  # the very object the caller passed
        items = ", ".join(writer.value(v) for v in self.items)
        return writer.bind(self, f"{writer.constant(collections.deque)}([{items}], {self.maxlen!r})")


class DefaultDictValue(DictValue):
    def __init__(self, entries, factory: Value, source=None, python_cls: type = collections.defaultdict):
        super().__init__(entries, source, python_cls)
        self.factory = factory

    def lookup(self, frame, key):
        if key_of(frame, key) not in self.entries:
            return self.missing(frame, key)
        return super().lookup(frame, key)

    def missing(self, frame, key):
        """defaultdict.__missing__: KeyError without a factory, else store what it makes
        (through `d[key] = ...`, so a subclass's `__setitem__` runs, as C's PyObject_SetItem)."""
        if self.factory.is_python_constant() and self.factory.as_python_constant() is None:
            raise_user_error(frame, KeyError, key_of(frame, key))
        value = self.factory.call(frame, [], {})
        self.set_item(frame, key, value)
        return value

    @cycle_safe_constant
    def as_python_constant(self):
        entries = {k: v.as_python_constant() for k, (_, v) in self.entries.items()}
        return self.python_cls(self.factory.as_python_constant(), entries)

    def get_attr(self, frame, name):
        if name == "default_factory":
            return self.factory
        return super().get_attr(frame, name)

    def reconstruct(self, writer):
        if self.source is not None:
            return writer.source(self.source)  # the very object the caller passed
        pairs = ", ".join(f"{writer.value(k)}: {writer.value(v)}" for k, v in self.entries.values())
        return writer.bind(self, f"{writer.constant(self.python_cls)}({writer.value(self.factory)}, {{{pairs}}})")

    def inner_values(self):
        return [self.factory, *(v for pair in self.entries.values() for v in pair)]
