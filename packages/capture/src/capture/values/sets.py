"""Sets and frozensets of traced values: members keyed as Python keys them, beside a real set of
those keys that keeps CPython's iteration order (insertions, deletions and resizes alike)."""

from __future__ import annotations

from typing import Any

from ..errors import Unsupported
from .base import Value
from .constant import ConstantValue
from .containers import DictValue, class_attribute, key_of


class SetMembers(dict):
    """A set's members, key -> value, beside a real set of the keys (`table`) that goes
    through the same insertions and deletions as the real set would: CPython iterates a set
    in its hash-table order, which depends on that history (deleted slots, when the table
    grew), not only on the members. A table passed in is the result of the real operation
    that made the set (`a | b`, `s.copy()`); otherwise the keys are added one by one, as a
    set display, set(list) and a set comprehension add them."""

    def __init__(self, entries=(), table: set | None = None, real: set | frozenset | None = None):
        super().__init__(entries)
        if table is None:
            table = set()
            for key in self:
                table.add(key)
        self.table = table
        # A set passed in: the very object (no copy is laid out as it is, so a copy may
        # iterate otherwise), the table of its members until the traced code changes them.
        self.real = real
        # The changes in order, (method, member or None), replayed onto a set passed in as
        # they were made, so that it ends laid out (and iterating) as eager leaves it; None
        # once a whole-table operation replaced its contents (replayed by contents).
        self.log: list | None = []

    def _changing(self, method: str, value=None) -> None:
        self.real = None
        if self.log is not None:
            self.log.append((method, value))

    def __setitem__(self, key, value):
        if key not in self.table:
            self._changing("add", value)
        super().__setitem__(key, value)
        self.table.add(key)

    def __delitem__(self, key):
        self._changing("discard", self[key])
        super().__delitem__(key)
        self.table.discard(key)

    def setdefault(self, key, default=None):
        if key not in self.table:
            self._changing("add", default)
        self.table.add(key)
        return super().setdefault(key, default)

    def pop(self, key, *default):
        if key in self.table:
            self._changing("discard", self[key])
        self.table.discard(key)
        return super().pop(key, *default)

    def popitem(self):
        key, value = super().popitem()
        self._changing("discard", value)
        self.table.discard(key)
        return key, value

    def clear(self):
        self._changing("clear")
        super().clear()
        self.table.clear()

    def order(self) -> Any:
        """The keys in the real set's iteration order."""
        if self.real is not None:
            return self.real
        if getattr(self, "passed_in", False):
            raise Unsupported("iterating a set passed in after changing its members in the compiled function (its order rests on the real set's table, which no copy reproduces)")
        return self.table

    def update(self, *args, **kwargs):
        for key, value in dict(*args, **kwargs).items():
            self[key] = value

    def become(self, table: set, *sources: dict) -> None:
        """The members of `table`, the result of the real operation on the keys
        (`s.intersection_update(t)`), each with its value from this set or `sources` (found
        by the key object the operation kept: `{1} | {True}` keeps 1)."""
        by_id, by_key = {}, {}
        for members in (self, *sources):
            for key, value in members.items():
                by_id.setdefault(id(key), value)
                by_key.setdefault(key, value)
        self.real = None
        self.log = None
        super().clear()
        for key in table:
            super().__setitem__(key, by_id[id(key)] if id(key) in by_id else by_key[key])
        self.table = table


def set_operand(frame, value: Value) -> tuple[Any, dict]:
    """What a real set operation would be given for `value`, over the keys capture uses for its
    members (a set's own table, a constant set, a dict of the keys: CPython sizes the table for
    a dict first, or a list of them: any other iterable, in its order), and key -> value of
    the members it brings (the first of equal ones). An iterator is consumed once."""
    if isinstance(value, SetValue):
        members = value.entries
        return (members.real if members.real is not None else members.table), members
    if isinstance(value, ConstantValue) and isinstance(value.value, (set, frozenset)):
        return value.value, {item: ConstantValue(item) for item in value.value}
    items = value.unpack(frame)
    keys = [key_of(frame, item) for item in items]
    members = {}
    for key, item in zip(keys, items):
        members.setdefault(key, item)
    real = dict.fromkeys(keys) if isinstance(value, DictValue) and value.python_type() is dict else keys
    return real, members


def real_operand(frame, value: Value) -> Any:
    """The real operand of `set_operand` alone (`value` is a set, or unpacked only once)."""
    return set_operand(frame, value)[0]


def update_set(frame, target: "SetValue", other: Value) -> None:
    """`target.update(other)` (and a set display's SET_UPDATE): the real update of the table
    (a set or frozenset merges its own layout in, a dict is sized for first), the members it
    adds logged in the order it adds them."""
    real, members = set_operand(frame, other)
    entries = target.entries
    seen = set(entries.table)
    added = []
    for key in real:
        if key not in seen:
            seen.add(key)
            added.append(key)
    for key in added:
        entries._changing("add", members[key])
    entries.table.update(real)
    for key in added:
        dict.__setitem__(entries, key, members[key])


def set_from_operation(table, python_cls: type, *operands: dict) -> "SetValue":
    """The set a real operation on the keys gave (`table`), with the operands' values."""
    result = SetValue({}, python_cls=python_cls)
    result.entries.become(table, *operands)
    return result


class SetValue(Value):
    def __init__(self, entries: dict[Any, Value], source=None, python_cls: type = set, table: set | None = None,
                 real: set | frozenset | None = None):
        super().__init__(source)
        self.entries = SetMembers(entries, table, real)
        self.entries.passed_in = real is not None
        self.python_cls = python_cls

    def describe(self):
        return self.python_cls.__name__

    def python_type(self):
        return self.python_cls

    def identity(self):
        return self  # the value made while tracing stands for the object (`id(self)` made a new int each call)

    def as_python_constant(self):
        return self.python_cls(v.as_python_constant() for v in self.entries.values())

    def mutated(self, frame) -> None:
        frame.session.side_effects.mutated_container(self)

    def add(self, frame, value: Value) -> None:
        self.entries.setdefault(key_of(frame, value), value)
        self.mutated(frame)

    def unpack(self, frame):
        # In the order the real set iterates: its table went through the same insertions and
        # deletions (strings hash alike within one process).
        return [self.entries[key] for key in self.entries.order()]

    def truth(self, frame):
        return bool(self.entries)

    def length(self, frame):
        return ConstantValue(len(self.entries))

    def get_attr(self, frame, name):
        return class_attribute(frame, self, self.python_cls, name)

    def reconstruct(self, writer):
        if self.source is not None:
            return writer.source(self.source)  # the very object the caller passed
        # Added in the order the set iterates here (the nearest a fresh set comes to its layout).
        items = ", ".join(writer.value(v) for v in self.unpack(None))
        return writer.bind(self, f"{writer.constant(self.python_cls)}([{items}])")

    def inner_values(self):
        return list(self.entries.values())

