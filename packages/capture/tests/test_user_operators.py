"""User classes' operator methods follow CPython's order: the in-place method before the binary
one, the reflected method of a subclass first, never the reflected method of the left operand's
own type for arithmetic, and object's `__ne__` inverting a Python `__eq__` (dataclasses).
Compared with eager on fresh inputs, a cache hit and a new size."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from helpers import check_across_sizes, compile_eager


class Acc:
    def __init__(self, t):
        self.t = t

    def __add__(self, other):
        return Acc(self.t + other.t)

    def __iadd__(self, other):
        self.t = self.t * 10 + other.t
        return self


class Declines:
    """__add__ declines everything; __radd__ answers for other types only."""

    def __init__(self, n):
        self.n = n

    def __add__(self, other):
        return NotImplemented

    def __radd__(self, other):
        return 42


class Overrides(Declines):
    def __radd__(self, other):
        return 7


class EqOnly:
    def __init__(self, n):
        self.n = n

    def __eq__(self, other):
        return isinstance(other, EqOnly) and self.n == other.n


@dataclasses.dataclass
class Pair:
    a: int
    b: int


def sizes(n):
    return (torch.randn(n),)


def test_inplace_operator_runs_the_class_iadd_on_the_same_object():
    def fn(x):
        acc = Acc(x)
        alias = acc
        acc += Acc(x + 1)
        return alias.t, acc is alias

    check_across_sizes(fn, sizes)


def test_inplace_operator_without_iadd_rebinds_to_a_new_object():
    def fn(x):
        acc = Vectorish(x)
        alias = acc
        acc -= Vectorish(x * 2)
        return acc.t, alias.t, acc is alias

    check_across_sizes(fn, sizes)


class Vectorish:
    def __init__(self, t):
        self.t = t

    def __sub__(self, other):
        return Vectorish(self.t - other.t)


def test_a_subclass_reflected_method_goes_first():
    def fn(x):
        return x + (Declines(1) + Overrides(2)), x + (Overrides(1) + Declines(2)), x + (3 + Declines(1))

    check_across_sizes(fn, sizes)


def test_arithmetic_never_tries_the_reflected_method_of_the_same_type():
    def fn(x):
        return x + (Declines(1) + Declines(2))

    with pytest.raises(TypeError, match="unsupported operand"):
        fn(torch.randn(3))
    with pytest.raises(TypeError, match="unsupported operand"):
        compile_eager(fn)(torch.randn(3))


@pytest.mark.parametrize("make", [EqOnly, lambda n: Pair(n, 1)], ids=["eq_only", "dataclass"])
def test_not_equal_inverts_a_python_eq(make):
    def fn(x):
        n = x.shape[0]
        return x + (make(n) != make(n)), make(n) != make(n + 1), make(1) != make(1), make(n) == make(n)

    check_across_sizes(fn, sizes)


class Bits:
    def __init__(self, v):
        self.v = v

    def __lshift__(self, k):
        return Bits(self.v << k)

    def __rrshift__(self, other):
        return other >> self.v


def test_shift_operators_of_a_user_class():
    def fn(x):
        n = x.shape[0]
        return x + (Bits(1) << n).v, 256 >> Bits(2)

    check_across_sizes(fn, sizes)


class Position:
    def __init__(self, i):
        self.i = i

    def __index__(self):
        return self.i


def test_index_dunder_subscripts_lists_tuples_ranges_and_strings():
    # CPython converts a subscript of a sequence through the key's __index__; capture traced
    # only constants and sizes there (an internal error for a range, a refusal for a list).
    def fn(x):
        items = [x, x + 1, x + 2]
        items[Position(0)] = x * 5
        del items[Position(-1)]
        picked = (items[Position(1)], items[Position(0) : Position(x.shape[0] - 2)])
        return picked, (1, 2, 3)[Position(2)], "abc"[Position(1)], range(9)[Position(1) : Position(3)]

    check_across_sizes(fn, sizes, fullgraph=True)


class CountingIterable:
    """No __contains__: `in` iterates its generator __iter__, stopping at the first match."""

    def __init__(self, items):
        self.items = items
        self.steps = 0

    def __iter__(self):
        for item in self.items:
            self.steps += 1
            yield item


def test_in_without_contains_stops_at_the_first_match():
    def fn(x):
        it = CountingIterable([1, 2, 3, 4])
        found = 2 in it
        steps = it.steps
        return x + found, steps, 9 in it, it.steps

    check_across_sizes(fn, lambda n: (torch.randn(n),))
