"""Guard soundness for values whose identity or contents the program reads through a constant:
an Enum member's mutable value or attribute (the member is fixed, what it holds is not), and
`is` between numbers, which CPython answers by the objects (equal floats may be one object or
two; sizes are the small-int cache's objects only up to 256), and user iterators read only as
far as in eager (an unpacking asks one item past its count; a loop that breaks stops).
See guard_soundness_harness."""

from __future__ import annotations

import enum
import math
import types

import pytest
import torch

from guard_soundness_harness import backends_of, case, check_case


def fresh_enum():
    class Table(enum.Enum):
        SCALES = [1, 2]
        OFFSETS = {"a": 1.0}

        def __init__(self, value):
            self.extra = [0.5]

    return types.SimpleNamespace(Table=Table)


def reads_enum_values(state):
    Table = state.Table

    def fn(x):
        scales = Table.SCALES.value
        return x * sum(scales) + Table["OFFSETS"].value["a"] + Table.SCALES.extra[0] + len([m for m in Table][1].value)

    return fn


def fresh_number_enum():
    class Level(enum.Enum):
        LOW = 2.0

        def __init__(self, value):
            self.steps = 3

    return types.SimpleNamespace(Level=Level)


def reads_enum_numbers(state):
    Level = state.Level

    def fn(x):
        return x * Level.LOW.value + Level.LOW.steps

    return fn


def fresh_limits():
    return types.SimpleNamespace(limit=math.nan, other=2.5, big=1000)


def branches_on_number_identity(state):
    def fn(x):
        if state.limit is math.nan:
            x = x + 1
        if state.other is state.limit:
            x = x * 2
        return x - 1 if state.big is state.other else x

    return fn


def branches_on_size_identity(state):
    def fn(x):
        n = x.shape[0]
        return x + 1 if n is 6 else x - 1  # noqa: F632 - what CPython answers is the point

    return fn


def sizes(*sizes):
    return lambda state, call: (torch.randn(sizes[call]),)


def rebind(name, make):
    return lambda state: setattr(state, name, make(state))


class Countdown:
    """An iterator written in Python (its own `__iter__` and `__next__`)."""

    def __init__(self):
        self.left = 5

    def __iter__(self):
        return self

    def __next__(self):
        if self.left == 0:
            raise StopIteration
        self.left -= 1
        return self.left


class Bag:
    """An iterable whose `__iter__` is a generator, counting the items it made."""

    def __init__(self):
        self.made = 0

    def __iter__(self):
        for item in range(5):
            self.made += 1
            yield item


def reads_iterators_partly(state):
    def fn(x, countdown, bag):
        try:
            first, second = countdown
        except ValueError:
            first = second = 0
        for item in bag:
            if item == 1:
                break
        return x * first + second + item

    return fn


def with_iterators(state, call):
    return torch.randn(3), Countdown(), Bag()


CASES = [
    case("enum_member_value_mutated", reads_enum_values, lambda s: s.Table.SCALES.value.append(5),
         lambda s: s.Table.OFFSETS.value.__setitem__("a", 3.0), lambda s: s.Table.SCALES.extra.__setitem__(0, 7.0),
         lambda s: s.Table.OFFSETS.value.__setitem__("b", 0), setup=fresh_enum, backends=("aot_eager",)),
    # A member's numbers are its own attributes (`.value` reads `_value_`), reassignable.
    case("enum_member_numbers_reassigned", reads_enum_numbers, lambda s: setattr(s.Level.LOW, "_value_", 5.0),
         lambda s: setattr(s.Level.LOW, "steps", 7), setup=fresh_number_enum),
    case("float_identity_changed_with_equal_values", branches_on_number_identity, rebind("limit", lambda s: float("nan")),
         rebind("limit", lambda s: math.nan), rebind("other", lambda s: s.limit), rebind("other", lambda s: float("2.5")),
         rebind("big", lambda s: s.other), rebind("big", lambda s: int("1000")), setup=fresh_limits),
    # `n is 6` for n = x.shape[0]: True exactly at size 6, also once sizes are symbolic.
    case("size_compared_by_identity_with_a_small_int", branches_on_size_identity, lambda s: None, lambda s: None,
         args=sizes(7, 8, 6, 6, 9, 6), backends=("aot_eager",)),
    # The iterators are arguments: their counters after each call are compared with eager's.
    case("user_iterators_read_only_as_far_as_eager", reads_iterators_partly, args=with_iterators),
]


@pytest.mark.parametrize("backend, case_", [(b, c) for c in CASES for b in backends_of(c)], ids=str)
def test_compiled_function_sees_values_changed_between_calls(backend, case_):
    check_case(case_, backend=backend)
