"""Iterators of traced values. `IteratorValue`: its remaining items are all known (over lists,
tuples, dicts, ranges, enumerate/zip/map results and generators). `LazyIteratorValue`: map,
filter, zip or enumerate over other iterators, an item at a time. Endless iterators
(`itertools.count()`, `repeat(x)`, `cycle(...)`): their items are made one at a time as the
traced code asks for them (a loop that breaks, `zip` with a finite iterable, `islice`), never
all at once.

`StepIteratorValue`: the itertools objects, an item at a time as CPython makes them.
"""

from __future__ import annotations

import collections
import itertools
from typing import Callable, Iterator

from ..errors import Unsupported, UserException
from .base import Value
from .class_lookup import dunder_value, python_dunder
from .constant import ConstantValue
from .containers import DictValue, DictViewValue, ListValue, TupleValue
from .exceptions import ExceptionValue, raise_user_error
from .sets import SetValue


# `type(iter(c))` for the builtin containers and dict views, by the class whose iteration a
# container's class inherits (a class with its own __iter__ runs it: own_iterator). Programs
# dispatch on it (`isinstance(it, type(iter({})))`) and it shows in errors.
_ITERATOR_TYPES = {
    **{cls: type(iter(cls())) for cls in (dict, collections.OrderedDict, set, frozenset, tuple, bytes, bytearray, collections.deque)},
    range: type(iter(range(0))),
}
_VIEW_ITERATOR_TYPES = {(cls, kind): type(iter(getattr(cls(), kind)()))
                        for cls in (dict, collections.OrderedDict) for kind in ("keys", "values", "items")}


def _iterator_type(container: Value) -> type | None:
    if container.is_python_constant() and isinstance(container.as_python_constant(), (str, bytes, range)):
        return type(iter(container.as_python_constant()))  # a str's depends on its characters
    mapping = container.mapping if isinstance(container, DictViewValue) else None
    try:
        mro = (mapping.python_cls if mapping is not None else container.python_type()).__mro__
    except Unsupported:
        return None
    for cls in mro:
        if mapping is not None and (cls, container.kind) in _VIEW_ITERATOR_TYPES:
            return _VIEW_ITERATOR_TYPES[cls, container.kind]
        if mapping is None and cls in _ITERATOR_TYPES:
            return _ITERATOR_TYPES[cls]
    return None


class IteratorValue(Value):
    """An iterator whose remaining items are all known (iterators over lists, tuples, dicts,
    ranges, enumerate/zip/map results and generators). `returned` is what a generator returned
    (the value of `yield from` over it).

    `over(container)` iterates the way CPython's iterator of that container does while the
    loop body changes it: a list's iterator reads the list as it is at each step (items
    appended in the loop are visited), a dict's or set's raises RuntimeError once its size
    changed."""

    def __init__(self, items: list[Value], returned: Value | None = None):
        super().__init__(None)
        self.items = list(items)
        self.position = 0
        self.returned = returned
        self.watch: MutationWatch | None = None
        self.list: ListValue | None = None  # the list iterated live, if any
        self.kind: type | None = None  # `type(iter(container))` of the container iterated, if known

    @classmethod
    def over(cls, frame, container: Value) -> IteratorValue:
        lazy = container.own_iterator(frame)
        if lazy is not None:
            return lazy
        deque = issubclass(container.python_type(), collections.deque)
        if isinstance(container, ListValue) and not deque:
            iterator = cls([])
            iterator.items = container.items  # shared: the list's own item list, changed in place
            iterator.list = container
            return iterator
        iterator = cls(container.unpack(frame))
        iterator.kind = _iterator_type(container)
        sized = container.mapping if isinstance(container, DictViewValue) else container
        if deque and isinstance(container, ListValue):
            iterator.watch = MutationWatch(lambda: tuple(map(id, container.items)), "deque mutated during iteration", frame)
        elif isinstance(sized, DictValue):
            iterator.watch = MutationWatch(lambda: len(sized.entries), "dictionary changed size during iteration", frame)
        elif isinstance(sized, SetValue):
            iterator.watch = MutationWatch(lambda: len(sized.entries), "Set changed size during iteration", frame)
        return iterator

    def describe(self):
        return "iterator"

    def python_type(self):
        # A list's iterator is a list_iterator (its name shows in errors); one whose container
        # is not known (a generator's items) answers as a tuple's, whose items are fixed too.
        if self.list is not None:
            return type(iter([]))
        return self.kind or type(iter(()))

    def next(self) -> Value | None:
        if self.watch is not None and self.watch.changed():
            watch, self.watch = self.watch, None
            self.position = len(self.items)  # CPython's iterator raises once, then is exhausted
            raise_user_error(watch.frame, RuntimeError, watch.message)
        if self.position >= len(self.items):
            self._exhausted()
            return None
        item = self.items[self.position]
        self.position += 1
        return item

    def unpack(self, frame):
        rest = self.items[self.position :]
        self.position = len(self.items)
        self._exhausted()
        return rest

    def read_to_the_end(self) -> list[Value]:
        """Every item left, asked for one `next()` at a time: the unpacking of iterators whose
        items are made as they are read (a step of a generator, a call of a function)."""
        return list(iter(self.next, None))

    def _exhausted(self) -> None:
        # CPython's list iterator lets go of its list once it has run out: items appended
        # afterwards are not visited (it stays exhausted).
        if self.list is not None:
            self.list, self.items, self.position = None, [], 0

    def stop_iteration(self) -> ExceptionValue:
        """What `next()` raises once this iterator is exhausted: StopIteration() with no
        arguments, or StopIteration(value) when a generator returned a value other than None
        (its `.value`), that once: a finished generator asked again raises a bare one."""
        returned, self.returned = self.returned, None
        if returned is None or (returned.is_python_constant() and returned.as_python_constant() is None):
            return ExceptionValue(StopIteration, [])
        return ExceptionValue(StopIteration, [returned])

    def reconstruct(self, writer):
        if self.list is not None:
            builder = writer.name_for(_list_iterator, "list_iterator")
            return writer.bind(self, f"{builder}({writer.value(self.list)}, {self.position})")
        return writer.bind(self, "iter([" + ", ".join(writer.value(v) for v in self.items[self.position :]) + "])")

    def inner_values(self):
        return [self.list] if self.list is not None else self.items[self.position :]


class ReversedListIteratorValue(IteratorValue):
    """`reversed(lst)`: like CPython's list_reverseiterator, it reads the list at each step
    (an item set after it was made is the one visited), from the index it is at, and stops
    for good once that index is past the list's end or below its start."""

    def __init__(self, lst: ListValue):
        super().__init__([])
        self.list = lst
        self.index = len(lst.items) - 1

    def python_type(self):
        return type(reversed([]))

    def next(self) -> Value | None:
        if self.list is None or not 0 <= self.index < len(self.list.items):
            self.list, self.index = None, -1
            return None
        item = self.list.items[self.index]
        self.index -= 1
        return item

    def unpack(self, frame):
        return self.read_to_the_end()

    def reconstruct(self, writer):
        if self.list is None:
            return writer.bind(self, "reversed([])")
        builder = writer.name_for(_reversed_list_iterator, "reversed_list_iterator")
        return writer.bind(self, f"{builder}({writer.value(self.list)}, {self.index})")

    def inner_values(self):
        return [self.list] if self.list is not None else []


class LazyIteratorValue(IteratorValue):
    """`map`, `filter`, `zip` and `enumerate` objects: as in Python, each item is made when
    asked for, from the iterators they wrap (a list appended to after the `map` was made
    shows its new items; the function `map` calls runs between the loop's steps).

    `kind` is the builtin's name; `function` what map/filter call (filter's may be None);
    `count` what enumerate numbers the next item with. Across a graph break the object is
    rebuilt as that builtin over its iterators, which carry their own positions."""

    def __init__(self, frame, kind: str, iterators: list[IteratorValue], function: Value | None = None, count: int = 0,
                 strict: bool = False):  # fmt: skip
        super().__init__([])
        self.frame = frame
        self.kind = kind
        self.iterators = iterators
        self.function = function
        self.count = count
        self.strict = strict  # zip(..., strict=True)

    def describe(self):
        return f"{self.kind} object"

    def python_type(self):
        return {"map": map, "filter": filter, "zip": zip, "enumerate": enumerate}[self.kind]

    def next(self) -> Value | None:
        frame = self.frame
        if self.kind == "filter":
            (iterator,) = self.iterators
            while (item := iterator.next()) is not None:
                keep = item if self.function is None else self.function.call(frame, [item], {})
                if keep.truth(frame):
                    return item
            return None
        if not self.iterators:
            return None  # `zip()` of nothing is empty (not an endless run of empty tuples)
        items = []
        for index, iterator in enumerate(self.iterators):  # CPython stops at the first exhausted one
            item = iterator.next()
            if item is None:
                if self.strict:
                    self._check_all_exhausted(index)
                return None
            items.append(item)
        if self.kind == "map":
            return self.function.call(frame, items, {})
        if self.kind == "enumerate":
            self.count += 1
            return TupleValue([ConstantValue(self.count - 1), items[0]])
        return TupleValue(items)

    def _check_all_exhausted(self, index: int) -> None:
        """zip(strict=True) once argument `index` ran out: CPython's ValueError if an earlier
        one had an item (read and dropped) or a later one still has one (read to find out)."""

        def arguments(i):
            return f"argument {i + 1} is", "argument 1" if i == 1 else f"arguments 1-{i}"

        if index:
            this, others = arguments(index)
            raise_user_error(self.frame, ValueError, f"zip() {this} shorter than {others}")
        for later, iterator in enumerate(self.iterators[1:], start=1):
            if iterator.next() is not None:
                this, others = arguments(later)
                raise_user_error(self.frame, ValueError, f"zip() {this} longer than {others}")

    def unpack(self, frame):
        return self.read_to_the_end()

    def reconstruct(self, writer):
        iterators = [writer.value(i) for i in self.iterators]
        if self.kind == "enumerate":
            arguments = [*iterators, str(self.count)]
        elif self.kind in ("map", "filter"):
            function = writer.value(self.function) if self.function is not None else "None"
            arguments = [function, *iterators]
        else:
            arguments = [*iterators, *(["strict=True"] if self.strict else [])]
        return writer.bind(self, f"{writer.constant(self.python_type())}({', '.join(arguments)})")

    def inner_values(self):
        return [*self.iterators, *([self.function] if self.function is not None else [])]


class StepIteratorValue(IteratorValue):
    """An itertools object whose items come one at a time from `steps`, a Python generator over
    traced values that follows CPython's implementation: it reads the iterators it was given
    only as far as CPython's does (what it leaves of them is still there for the traced code)
    and calls its function when CPython would, between the consumer's steps.

    `made_by` is (the itertools callable, the argument values it was called with, after iter()):
    until its first item is asked for, a graph break hands it on as that call. Part-way
    through, its position is Python state capture cannot hand on (like a suspended generator),
    so a break there runs the function eagerly rather than replay it wrongly."""

    def __init__(self, kind: str, steps: Iterator[Value], made_by: tuple | None, endless: bool = False):
        super().__init__([])
        self.endless = endless  # cycle: unpacking it never ends, unless it is empty
        self.kind = kind
        self.steps = steps
        self.made_by = made_by
        self.started = False

    def describe(self):
        return f"itertools.{self.kind} object"

    def python_type(self):
        return _ITERTOOLS_TYPES.get(self.kind) or getattr(itertools, self.kind)

    def next(self) -> Value | None:
        self.started = True
        return next(self.steps, None)

    def unpack(self, frame):
        if self.endless:
            if self.next() is None:
                return []  # cycle() of nothing is empty
            raise Unsupported(f"reading every item of {self.describe()}, which never ends")
        return self.read_to_the_end()

    def reconstruct(self, writer):
        if self.started or self.made_by is None:
            raise Unsupported(f"handing on {self.describe()}, which is part-way through its items, across a graph break")
        maker, args = self.made_by
        return writer.bind(self, f"{writer.constant(maker)}({', '.join(writer.value(a) for a in args)})")

    def inner_values(self):
        return [] if self.started or self.made_by is None else list(self.made_by[1])


_ITERTOOLS_TYPES = {"groupby group": type(next(itertools.groupby([0]))[1]), "tee": type(itertools.tee([], 1)[0])}


def iterator_of(frame, value: Value) -> IteratorValue:
    """`iter(value)` as CPython's C code calls it on an argument (an iterator is itself)."""
    if isinstance(value, IteratorValue):
        return value
    return IteratorValue.over(frame, value)


def _reversed_list_iterator(items: list, index: int) -> Iterator:
    """A reverse iterator over the real list, at `index` (the next item it visits)."""
    iterator = reversed(items)
    iterator.__setstate__(index)
    return iterator


def _list_iterator(items: list, position: int) -> Iterator:
    """An iterator over the real list (so items the rest of the loop appends are visited)
    that has already yielded `position` items."""
    iterator = iter(items)
    iterator.__setstate__(position)
    return iterator


class MutationWatch:
    """CPython's iterators over dicts, sets and deques raise RuntimeError at the next `next()`
    once their container changed (dicts and sets by size, deques on any change); this is
    that check for an IteratorValue that copied the container's items when it was made."""

    def __init__(self, snapshot, message: str, frame):
        self.snapshot = snapshot
        self.first = snapshot()
        self.message = message
        self.frame = frame

    def changed(self) -> bool:
        return self.snapshot() != self.first


class EndlessIteratorValue(IteratorValue):
    """An iterator whose `i`-th item is `make(i)`."""

    endless = True  # islice() needs a stop; unpacking it never ends

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

    def unpack(self, frame):
        raise Unsupported(f"reading every item of {self.describe()}, which never ends")

    def reconstruct(self, writer):
        raise Unsupported(f"returning or storing {self.describe()} from a compiled function")


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
        return self.read_to_the_end()


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
        return self.read_to_the_end()

    def reconstruct(self, writer):
        return writer.value(self.obj)  # the iterator is that object, its position in its attributes

    def inner_values(self):
        return [self.obj]


class GetitemIteratorValue(IteratorValue):
    """`iter(obj)` for an object whose class has no `__iter__` but a Python `__getitem__` (the
    old sequence protocol): item i is one call `obj[i]`, made when asked for, and IndexError
    or StopIteration ends it. `x in obj` stops at the first match, as eager's reads do."""

    def __init__(self, frame, obj: Value, method: Value):
        super().__init__([])
        self.frame = frame
        self.obj = obj
        self.method = method
        self.index = 0
        self.done = False

    def describe(self):
        return f"iterator over {self.obj.describe()}"

    def python_type(self):
        return type(iter(_OldSequence()))

    def next(self) -> Value | None:
        if self.done:
            return None
        try:
            item = self.method.call(self.frame, [self.obj, ConstantValue(self.index)], {})
        except UserException as exc:
            if issubclass(exc.value.python_type(), (IndexError, StopIteration)):
                self.done = True
                return None
            raise
        self.index += 1
        return item

    def unpack(self, frame):
        return self.read_to_the_end()

    def reconstruct(self, writer):
        if self.index or self.done:
            raise Unsupported(f"handing on {self.describe()}, which is part-way through its items, across a graph break")
        return writer.bind(self, f"{writer.constant(iter)}({writer.value(self.obj)})")

    def inner_values(self):
        return [self.obj]


class _OldSequence:
    def __getitem__(self, index):
        raise IndexError(index)


def python_iterator(frame, value: Value, cls: type) -> IteratorValue | None:
    """`iter(value)` for an object whose class writes `__iter__` in Python: a generator it
    returns, an iterator object with a Python `__next__`, or an iterator over the iterable it
    returns; for a class without `__iter__` but with a Python `__getitem__`, the sequence
    protocol's iterator; None when `cls` has neither."""
    method = python_dunder(cls, "__iter__")
    if method is None:
        getitem = python_dunder(cls, "__getitem__")
        if getitem is None or hasattr(cls, "__iter__"):
            return None
        return GetitemIteratorValue(frame, value, dunder_value(frame, value, cls, "__getitem__", getitem))
    result = dunder_value(frame, value, cls, "__iter__", method).call(frame, [value], {})
    if isinstance(result, IteratorValue):
        return result
    advance = python_dunder(result.python_type(), "__next__")
    if advance is not None:
        return ObjectIteratorValue(frame, result, advance)
    if not hasattr(result.python_type(), "__next__"):
        # CPython's iter() checks that __iter__ handed back an iterator.
        raise_user_error(frame, TypeError, f"iter() returned non-iterator of type '{result.python_type().__name__}'")
    return IteratorValue.over(frame, result)
